/* sema.c — from AST to Block IR: the walk over one compilation.
 *
 * sema_build walks the main module's items and its imports, then lowers each
 * kernel once, for the const parameter values of this compilation:
 *
 *   1. modules (module.c): every unit's items go in a name table; imports
 *      are followed depth first;
 *   2. module consts are evaluated lazily (cycles detected), the main
 *      module's eagerly so that their errors show even when unused;
 *   3. a kernel becomes one IR function (kernel.c): const params are bound
 *      to their values (-D, default, first autotune config), runtime params
 *      become IR params, attributes set num_warps/num_stages, the body is
 *      elaborated (stmt.c);
 *   4. a device fn is specialised per distinct argument signature (call.c).
 *
 * The layers and why three calls go up through pointers: scope.h.
 */
#include <string.h>

#include "sema/item.h"

int sema_build(blkc_ctx *c, const char *kernel) {
    sema S0 = {.c = c, .a = c->arena, .d = &c->diag, .one_kernel = kernel != NULL};
    sema *S = &S0;
    S->up = (sema_upcalls){.call = sema_call_expr, .item_value = sema_item_value, .call_values = sema_call_values};
    int errors = c->diag.nerrors;
    c->ir = ir_module_new(c->arena);
    if (!c->ir) return 1;
    if (!c->units.len || !c->units.data[0].ast) {
        diag_error(S->d, LOC_NONE, "no module to check");
        return 1;
    }
    sema_process_units(S, 0);
    sema_unit *main_unit = sema_unit_get(S, 0);
    S->unit = 0;
    for (int k = 0; k < main_unit->item_list.len && !diag_should_stop(S->d); k++) {
        sema_item *it = main_unit->item_list.data[k];
        if (it->kind == ITEM_CONST) sema_item_value(S, it, sema_name_loc(it->ast));
    }
    bool found = false;
    for (int k = 0; k < main_unit->item_list.len && !diag_should_stop(S->d); k++) {
        sema_item *it = main_unit->item_list.data[k];
        if (it->kind != ITEM_KERNEL || (kernel && strcmp(it->name, kernel) != 0)) continue;
        found = true;
        S->depth = 0;
        S->call_depth = 0;
        sema_lower_kernel(S, it);
    }
    if (kernel && !found) diag_error(S->d, LOC_NONE, "no kernel named '%s' in %s", kernel, c->units.data[0].path);
    return c->diag.nerrors - errors;
}

/* module.c — units and their items: every unit's consts, fns and kernels in
 * a name table (duplicates are errors); imports (already loaded by compile.c:
 * compile_unit.imports) followed depth first, so a cycle is seen as an import
 * of a unit still in progress; module consts
 * evaluated lazily, once (cycles detected).
 */
#include <string.h>

#include "sema/item.h"

/* ---- units and items ---- */

static const char *base_name(const char *path) {
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

static const char *unit_name(sema *S, int u) {
    return u < S->c->units.len && S->c->units.data[u].path ? base_name(S->c->units.data[u].path) : "?";
}

/* A kernel's or fn's parameter list: at most SEMA_MAX_PARAMS parameters,
 * reported at the first one over the limit, and distinct names (one pass
 * over a hash map, not every pair). Returns false after an error. */
bool sema_check_params(sema *S, ast_node *n, const char *what) {
    if (n->params.len > SEMA_MAX_PARAMS) {
        diag_error(S->d, sema_name_loc(n->params.data[SEMA_MAX_PARAMS]),
                   "%s '%s' has %d parameters, more than the limit of %d", what, n->name, n->params.len,
                   SEMA_MAX_PARAMS);
        return false;
    }
    bool ok = true;
    sema_map seen = {0};
    for (int k = 0; k < n->params.len; k++) {
        ast_node *param = n->params.data[k];
        if (!param->name) continue;
        ast_node *first = sema_map_get(&seen, param->name);
        if (first) {
            diag_error(S->d, sema_name_loc(param), "duplicate parameter '%s'", param->name);
            diag_note(S->d, sema_name_loc(first), "'%s' is first declared here", param->name);
            ok = false;
        } else {
            sema_map_put(S->a, &seen, param->name, param);
        }
    }
    return ok;
}

static void add_item(sema *S, sema_unit *U, ast_node *n, sema_item_kind kind) {
    if (!n->name) return;
    sema_item *prev = sema_map_get(&U->items, n->name);
    if (prev) {
        diag_error(S->d, sema_name_loc(n), "duplicate definition of '%s'", n->name);
        diag_note(S->d, sema_name_loc(prev->ast), "'%s' is first defined here", n->name);
        return;
    }
    sema_item *it = ARENA_NEW(S->a, sema_item);
    if (!it) return;
    it->kind = kind;
    it->name = n->name;
    it->ast = n;
    it->unit = U->index;
    if (kind == ITEM_FN && !sema_check_params(S, n, "fn")) it->bad_params = true;
    sema_map_put(S->a, &U->items, n->name, it);
    VEC_PUSH(S->a, U->item_list, it);
}

/* The units whose imports are being followed, outermost first. */
typedef VEC(int) unit_stack;

static void report_cycle(sema *S, unit_stack *stack, int target) {
    int start = 0;
    while (start < stack->len && stack->data[start] != target) start++;
    blk_strbuf chain;
    sb_init(&chain);
    for (int k = start; k < stack->len; k++) sb_printf(&chain, "%s -> ", unit_name(S, stack->data[k]));
    sb_puts(&chain, unit_name(S, target));
    sema_unit *T = sema_unit_get(S, target);
    diag_error(S->d, T->importing, "import cycle: %s", sb_str(&chain));
    sb_free(&chain);
    for (int k = start + 1; k < stack->len; k++) {
        int u = stack->data[k], next = k + 1 < stack->len ? stack->data[k + 1] : target;
        diag_note(S->d, sema_unit_get(S, u)->importing, "%s imports %s here", unit_name(S, u), unit_name(S, next));
    }
}

/* Collect a unit's items and follow its imports (depth first). */
static void process_unit(sema *S, int index, unit_stack *stack) {
    sema_unit *U = sema_unit_get(S, index);
    if (!U || U->state != 0) return;
    U->state = 1;
    ast_node *m = index < S->c->units.len ? S->c->units.data[index].ast : NULL;
    if (!m) {
        U->state = 2;
        return;
    }
    VEC_PUSH(S->a, *stack, index);
    for (int k = 0; k < m->args.len; k++) {
        ast_node *n = m->args.data[k];
        if (n->kind == AST_CONST) add_item(S, U, n, ITEM_CONST);
        else if (n->kind == AST_FN) add_item(S, U, n, ITEM_FN);
        else if (n->kind == AST_KERNEL) add_item(S, U, n, ITEM_KERNEL);
    }
    const compile_unit *cu = &S->c->units.data[index];
    int nimport = 0;
    for (int k = 0; k < m->args.len; k++) {
        ast_node *n = m->args.data[k];
        if (n->kind != AST_IMPORT) continue;
        U->importing = n->loc;
        int v = nimport < cu->imports.len ? cu->imports.data[nimport] : -1;
        nimport++;
        if (v < 0) continue;
        sema_unit *V = sema_unit_get(S, v);
        if (!V) continue;
        if (V->state == 1) {
            report_cycle(S, stack, v);
            continue;
        }
        process_unit(S, v, stack);
        U = sema_unit_get(S, index); /* sema's units vector may have grown */
        if (n->name) {
            if (sema_map_get(&U->items, n->name) || sema_map_get(&U->aliases, n->name)) {
                diag_error(S->d, sema_name_loc(n), "import alias '%s' is already defined in this file", n->name);
                continue;
            }
            sema_map_put(S->a, &U->aliases, n->name, (void *)(intptr_t)(v + 1));
        } else {
            bool seen = false;
            for (int j = 0; j < U->imports.len; j++) seen |= U->imports.data[j] == v;
            if (!seen && v != index) VEC_PUSH(S->a, U->imports, v);
        }
    }
    stack->len--;
    U->state = 2;
}

void sema_process_units(sema *S, int index) {
    unit_stack stack = {0};
    process_unit(S, index, &stack);
}

/* Evaluate a module const (once). Consts are evaluated in their own unit
 * with no function context, so anything needing run-time IR is an error. */
static sema_val eval_const_item(sema *S, sema_item *it, blk_loc use) {
    if (it->state == 2) return it->value;
    if (it->state == 1) {
        diag_error(S->d, use, "const '%s' is defined in terms of itself", it->name);
        int start = 0;
        while (start < S->const_stack.len && S->const_stack.data[start] != it) start++;
        for (int k = start; k < S->const_stack.len; k++)
            diag_note(S->d, sema_name_loc(S->const_stack.data[k]->ast), "'%s' is defined here",
                      S->const_stack.data[k]->name);
        return sema_error();
    }
    it->state = 1;
    VEC_PUSH(S->a, S->const_stack, it);
    sema_fnctx *saved_fn = S->fn;
    int saved_unit = S->unit;
    S->fn = NULL;
    S->unit = it->unit;
    ast_node *n = it->ast;
    sema_val v = sema_expr(S, n->rhs);
    if (v.kind == SV_CONST && n->type) {
        ir_type t;
        if (!sema_type_from_ast(S, n->type, &t)) v = sema_error();
        else if (t.rank > 0 || t.dtype == DT_PTR) {
            diag_error(S->d, n->type->loc, "a const has a scalar type, not %s", sema_ir_type_str(S, t));
            v = sema_error();
        } else {
            v = sema_check_annotation(S, v, t, n->rhs->loc, "const", n->name);
        }
    } else if (v.kind == SV_VOID) {
        diag_error(S->d, n->rhs->loc, "this expression has no value");
        v = sema_error();
    } else if (v.kind == SV_DESC || v.kind == SV_VALUE) {
        diag_error(S->d, n->rhs->loc, "a module const must be a compile-time constant");
        v = sema_error();
    }
    S->fn = saved_fn;
    S->unit = saved_unit;
    S->const_stack.len--;
    it->state = 2;
    it->value = v;
    return v;
}

sema_val sema_item_value(sema *S, sema_item *it, blk_loc use) {
    switch (it->kind) {
    case ITEM_CONST: return eval_const_item(S, it, use);
    case ITEM_FN: return (sema_val){.kind = SV_FN, .item = it};
    case ITEM_KERNEL:
        diag_error(S->d, use, "'%s' is a kernel; kernels are launched from the host, not used in blk code",
                   it->name);
        return sema_error();
    }
    return sema_error();
}


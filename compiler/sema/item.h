/* item.h — sema's top layer: module items. module.c collects units and
 * their items and evaluates module consts, call.c elaborates calls and
 * specialises device fns, kernel.c lowers kernels; sema.c's sema_build runs
 * them and fills in the upward pointers (sema_upcalls, scope.h).
 */
#ifndef BLK_SEMA_ITEM_H
#define BLK_SEMA_ITEM_H

#include "sema/stmt.h"

/* ---- module.c ---- */

/* A kernel's or fn's parameter list: at most SEMA_MAX_PARAMS parameters,
 * distinct names. Returns false after an error. */
bool sema_check_params(sema *S, ast_node *n, const char *what);
/* Collect unit `index`'s items and follow its imports (depth first). */
void sema_process_units(sema *S, int index);
sema_val sema_item_value(sema *S, sema_item *it, blk_loc use);

/* ---- call.c ---- */

/* A call expression: a builtin, a device fn or a descriptor method. */
sema_val sema_call_expr(sema *S, ast_node *e);
/* Call combine fn `fn` (reduce/scan) on run-time values args[0..n) in the
 * current region, specialising it on their types. */
sema_val sema_call_values(sema *S, sema_item *fn, ir_value **args, int n, blk_loc loc);

/* ---- kernel.c ---- */

/* One kernel as an IR function, for this compilation's const values. */
void sema_lower_kernel(sema *S, sema_item *item);

#endif

/* expr.h — sema's third layer: expressions (expr.c). sema_expr evaluates
 * any expression node; a call goes up to call.c through S->up.call, a module
 * const's first use through S->up.item_value (scope.h says why).
 */
#ifndef BLK_SEMA_EXPR_H
#define BLK_SEMA_EXPR_H

#include "sema/types.h"

sema_val sema_expr(sema *S, ast_node *e);
sema_val sema_binary(sema *S, int op, sema_val a, sema_val b, blk_loc op_loc, ast_node *lhs, ast_node *rhs);
/* Type syntax (AST_TYPE_*) to an ir_type; false after an error (block
 * dimensions are const expressions, hence this layer). */
bool sema_type_from_ast(sema *S, ast_node *t, ir_type *out);
/* `module.name` (a fn or const of an imported module) or an error for any
 * other field: blk values have no fields. */
sema_val sema_field_expr(sema *S, ast_node *e);
/* `tl.where`, `triton.language.float32`: reports that blk has no such
 * namespace (naming blk's spelling) and returns true if e is one. */
bool sema_triton_prefix(sema *S, ast_node *e);
/* blk's spelling of a Triton name (float32 -> f32), or NULL. */
const char *sema_triton_spelling(const char *name);

#endif

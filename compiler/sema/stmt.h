/* stmt.h — sema's fifth layer: statements and structured control flow
 * (stmt.c), over expressions and builtins.
 */
#ifndef BLK_SEMA_STMT_H
#define BLK_SEMA_STMT_H

#include "sema/builtin.h"

/* Elaborate a block's statements; returns true if control cannot reach its
 * end (break, continue or return on every path). */
bool sema_block(sema *S, ast_node *block);
/* A fn body: like sema_block, with `return` allowed in tail position; the
 * returned value (SV_VOID if none) goes to *ret. */
bool sema_fn_body(sema *S, ast_node *block, sema_val *ret);

#endif

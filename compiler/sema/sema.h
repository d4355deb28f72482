/* sema.h — from AST to Block IR.
 *
 * Sema elaborates: it walks a kernel's AST once per specialisation (the
 * const parameter values), evaluating const expressions, resolving names,
 * inferring types and shapes, checking every builtin, and emitting Block IR
 * as it goes. Device fns are specialised per call site's argument types and
 * shapes into IR functions called with IR_CALL (the inline pass removes them).
 */
#ifndef BLK_SEMA_H
#define BLK_SEMA_H

#include "compile.h"

/* Check the main module c->units.data[0] (and its imports, every one loaded
 * by compile.c before this runs: compile_unit.imports) and lower `kernel` (NULL: every kernel) into c->ir, with
 * const parameters taken from c->defines, else their defaults. Returns the
 * number of errors reported (0 = success). */
int sema_build(blkc_ctx *c, const char *kernel);

/* The candidate closest to name (edit distance, the rule of "did you mean"
 * for undefined names), or NULL when none is close. */
const char *sema_closest_name(const char *name, const char *const *cands, int n);

#endif

/* builtin.h — sema's fourth layer: the builtins. builtin.c binds a call's
 * arguments to the parameters of its builtins.def entry and dispatches; the
 * builtin_<family>.c files check and emit, through the argument helpers
 * below (each reports its own error, naming the builtin and the parameter).
 */
#ifndef BLK_SEMA_BUILTIN_H
#define BLK_SEMA_BUILTIN_H

#include "sema/expr.h"

typedef struct sema_builtin sema_builtin;
/* A check function: a[k] is the AST of parameter k's argument, NULL when it
 * was not given (the arity is checked before it is called). */
typedef sema_val (*sema_builtin_fn)(sema *S, ast_node *call, ast_node **a, const sema_builtin *bi);
struct sema_builtin {
    const char *name;
    const char *params; /* builtins.def says how it reads */
    sema_builtin_fn check;
    int op;        /* the IR op (or family op) it emits */
    int kind;      /* ir_reduce / ir_atomic / ... for families */
    bool const_ok; /* usable where no IR can be emitted (module consts) */
};

/* ---- builtin.c ---- */

enum { SEMA_BUILTIN_MAX_PARAMS = 12 };

const sema_builtin *sema_builtin_find(const char *name);
sema_val sema_builtin_call(sema *S, const sema_builtin *bi, ast_node *call);
/* Bind call's arguments to bi's parameter slots (positional, then by name;
 * arity, unknown and repeated names reported as `display`'s); false after
 * an error. */
bool sema_bind_args(sema *S, const sema_builtin *bi, const char *display, ast_node *call, ast_node **slots);

/* Argument helpers: each evaluates argument n of builtin bi and checks it;
 * `what` names it in messages ("the axis"). */
sema_val sema_arg(sema *S, ast_node *n); /* any value but no value */
const char *sema_got_str(sema *S, sema_val v); /* "i32", or "a run-time i32" where a constant was wanted */
sema_val sema_numeric_arg(sema *S, ast_node *n, const sema_builtin *bi, const char *what);
bool sema_const_int_arg(sema *S, ast_node *n, const sema_builtin *bi, const char *what, int64_t *out);
bool sema_const_bool_arg(sema *S, ast_node *n, const sema_builtin *bi, const char *what, bool *out);
/* A string option from choices (NULL-terminated): its index + 1, 0 after an error. */
int sema_string_option(sema *S, ast_node *n, const sema_builtin *bi, const char *what, const char *const *choices,
                       const char *choice_text);
bool sema_dtype_arg(sema *S, ast_node *n, const sema_builtin *bi, ir_type *out);
bool sema_shape_arg(sema *S, ast_node *n, const sema_builtin *bi, ir_type *out);
sema_val sema_block_arg(sema *S, ast_node *n, const sema_builtin *bi);
bool sema_axis_arg(sema *S, ast_node *n, const sema_builtin *bi, ir_type t, int *axis);
/* A pointer argument (writes: not a *const); a mask of bools. */
bool sema_pointer_arg(sema *S, ast_node *n, const sema_builtin *bi, bool writes, sema_val *out);
bool sema_mask_arg(sema *S, ast_node *n, const sema_builtin *bi, sema_val *out);
/* Inside a kernel or fn (not a module const), else reports. */
bool sema_need_fn(sema *S, ast_node *call, const sema_builtin *bi);
bool sema_broadcast_all(sema *S, sema_val *v, ast_node **nodes, int n, ir_type *shape);
int sema_promote_many(sema_val *v, int n, bool *weak);

/* ---- the check functions, by family (builtin_<family>.c) ---- */

#define BUILTIN(name, params, check, op, kind, const_ok) \
    sema_val check(sema *S, ast_node *call, ast_node **a, const sema_builtin *bi);
#include "sema/builtins.def"
#undef BUILTIN

/* builtin_memory.c: d.load([offs]) / d.store([offs], v) on a tensor descriptor */
sema_val sema_desc_method(sema *S, sema_val desc, const char *method, ast_node *call);

#endif

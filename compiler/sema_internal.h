/* sema_internal.h — what the sema files share.
 *
 *   sema.c          items, modules and imports, module consts, kernels
 *                   (const params, attributes, autotune), fn specialisation
 *   sema_stmt.c     statements, scopes, if/for/while with carried vars,
 *                   tail returns of fns
 *   sema_expr.c     expressions: consts and folding, promotion, broadcasting,
 *                   casts, operators, IR emission helpers
 *   sema_builtin.c  the table of builtins, each with its checks and IR
 *
 * Elaboration is one walk that checks and emits. Every expression evaluates
 * to a sema_val: a run-time IR value, a compile-time constant, or one of the
 * compile-time-only things a program can name (tuples, strings, dtypes, fns,
 * imported modules, tensor descriptors). Constants stay constants until they
 * meet a run-time value; only then are they materialised as IR_CONST, in the
 * type the other operand asks for (weak literals) or their own (typed consts).
 *
 * Errors: a check that fails reports a located diagnostic and yields
 * SV_ERROR; every consumer passes SV_ERROR through silently, so one mistake
 * gives one message.
 */
#ifndef BLK_SEMA_INTERNAL_H
#define BLK_SEMA_INTERNAL_H

#include "ir/eval.h"
#include "parse.h"
#include "sema.h"

__extension__ typedef __int128 sema_i128;

/* ---- values ---- */

typedef enum {
    SV_ERROR,   /* an error was reported; consumers stay silent */
    SV_VOID,    /* no value: store(), print(), a fn without return */
    SV_VALUE,   /* run-time value: v (type = v->type) */
    SV_CONST,   /* compile-time scalar: type (rank 0), weak, i or f */
    SV_TUPLE,   /* (a, b): elems */
    SV_LIST,    /* [a, b]: elems (shapes, offsets, autotune keys) */
    SV_STRING,  /* "...": str, len */
    SV_DTYPE,   /* a type used as a value (zeros([4], f32)): type */
    SV_NONE,    /* None */
    SV_FN,      /* a device fn: item */
    SV_MODULE,  /* an import alias: unit */
    SV_DESC,    /* tensor_desc(...): desc */
} sema_kind;

typedef struct sema_val sema_val;
typedef struct sema_item sema_item;
typedef struct sema_desc sema_desc;
typedef struct sema_spec sema_spec;

struct sema_val {
    sema_kind kind;
    bool weak;       /* CONST: literal-typed; adopts the other operand's type */
    ir_type type;    /* VALUE: v->type; CONST: rank-0 dtype; DTYPE: the type */
    ir_value *v;     /* VALUE (NULL in a fn result template) */
    int64_t i;       /* CONST int/bool (u64 bitwise); result template: result index */
    double f;        /* CONST float */
    sema_val *elems; /* TUPLE, LIST */
    int n;
    const char *str; /* STRING (NUL-terminated) */
    int len;
    sema_item *item; /* FN */
    int unit;        /* MODULE */
    sema_desc *desc; /* DESC */
};

/* tensor_desc(base, shape = [..], strides = [..], block = [..]) */
struct sema_desc {
    ir_value *base;                /* *T scalar */
    ir_value *dims[IR_MAX_RANK];   /* i64 */
    ir_value *strides[IR_MAX_RANK];/* i64, in elements */
    int rank;
    int32_t block[IR_MAX_RANK];
    ir_func *func;                 /* where the values live */
};

/* ---- module items ---- */

typedef enum { ITEM_CONST, ITEM_FN, ITEM_KERNEL } sema_item_kind;

struct sema_item {
    sema_item_kind kind;
    const char *name;
    ast_node *ast;
    int unit;
    int state;       /* CONST: 0 not evaluated, 1 evaluating, 2 done */
    sema_val value;  /* CONST */
    VEC(sema_spec *) specs; /* FN: specialisations made so far */
    bool bad_params;  /* FN: its parameter list was rejected; calls yield SV_ERROR silently */
};

/* One specialisation of a fn: the IR function and what a call yields. */
struct sema_spec {
    const char *key;   /* argument signature */
    ir_func *func;
    sema_val result;   /* template: VALUE leaves with v == NULL stand for call result i */
    bool failed;       /* the body had errors: calls yield SV_ERROR */
    int64_t expanded;  /* instructions it becomes once every call in it is inlined
                        * (its own insts, less the RETURN, plus its callees' sizes) */
};

/* Open-addressing map from name to pointer. */
typedef struct {
    const char **keys;
    void **vals;
    int cap, len;
} sema_map;

void *sema_map_get(const sema_map *m, const char *key);
void sema_map_put(blk_arena *a, sema_map *m, const char *key, void *val);

typedef struct {
    int index;         /* into c->units */
    int state;         /* 0 not processed, 1 processing its imports, 2 done */
    sema_map items;    /* own items by name */
    VEC(sema_item *) item_list;
    sema_map aliases;  /* import "x" as nn: nn -> (unit index + 1) */
    VEC(int) imports;  /* unqualified imports, in source order */
    blk_loc importing; /* state 1: the import statement being followed */
} sema_unit;

/* ---- local scopes ---- */

typedef enum { BIND_LET, BIND_VAR, BIND_PARAM, BIND_LOOP } sema_bind_kind;

typedef struct sema_binding sema_binding;
struct sema_binding {
    const char *name;
    sema_bind_kind kind;
    sema_val val;
    blk_loc loc;            /* the declaration */
    sema_binding *shadowed; /* the binding of the same name this one hides */
    int pins;               /* > 0 while an enclosing loop/if carries it */
    ir_type pin_type;       /* the type it must keep while pinned */
    bool pinned_by_loop;
};

/* A run-time loop being elaborated (for break/continue). */
typedef struct sema_loop sema_loop;
struct sema_loop {
    sema_loop *outer;
    sema_binding **carried;
    int ncarried;
    bool is_static;    /* static_range: unrolled, no break/continue */
};

/* The kernel or fn specialisation whose body is being elaborated. */
typedef struct sema_fnctx sema_fnctx;
struct sema_fnctx {
    sema_fnctx *caller;
    blk_loc call_loc;       /* the call that started this specialisation */
    sema_item *item;
    ir_func *func;
    ir_builder b;
    int unit;
    bool is_kernel;
    sema_map names;         /* name -> innermost binding */
    VEC(sema_binding *) stack;
    sema_loop *loop;
    sema_map undefined;     /* names already reported undefined */
    int64_t expanded;       /* its size after inlining so far (see sema_spec.expanded) */
};

typedef struct {
    blkc_ctx *c;
    blk_arena *a;
    blk_diag *d;
    VEC(sema_unit *) units;  /* by c->units index */
    sema_fnctx *fn;          /* NULL while evaluating module consts */
    int unit;                /* the unit whose names are in scope */
    int depth;               /* recursion guard over expr/stmt/call nesting */
    int call_depth;
    int64_t insts;           /* instructions emitted (size guard) */
    int64_t unrolled;        /* static_range iterations elaborated (size guard) */
    int64_t kernels_expanded;/* size after inlining of the kernels lowered so far (size guard) */
    bool size_reported;
    VEC(sema_item *) const_stack; /* module consts being evaluated (cycle notes) */
} sema;

enum {
    SEMA_MAX_DEPTH = 1000,       /* nested expressions, statements and calls */
    SEMA_MAX_INSTS = 500000,     /* IR instructions per compilation (about 160 MB of IR), both as
                                  * emitted and after inlining (every kernel's fn calls expanded) */
    SEMA_MAX_UNROLLED = 1 << 18, /* static_range iterations per compilation, even empty ones */
    /* Parameters of one kernel or fn. A front-end sanity bound that keeps a
     * generated program with thousands of parameters an error rather than a
     * slow compile; not the launch ABI's limit, which is smaller: libblkrt
     * rejects metadata with more than 64 run-time parameters (RT_MAX_PARAMS,
     * runtime/meta.h: 64-bit specialisation masks) and CUDA's parameter
     * space is 4 KB (512 pointers). Const parameters and a device fn's
     * parameters never reach the ABI, hence the generous 256. */
    SEMA_MAX_PARAMS = 256,
};

/* ---- sema.c ---- */
sema_unit *sema_unit_get(sema *S, int index);
/* Look a name up in the scope: locals of the current fn, then module items
 * of the current unit, its import aliases and unqualified imports. Returns
 * false if the name is not bound (builtins are not looked up here). */
bool sema_lookup(sema *S, const char *name, blk_loc loc, sema_val *out, sema_binding **binding);
sema_item *sema_unit_lookup_item(sema *S, int unit, const char *name);
sema_val sema_item_value(sema *S, sema_item *it, blk_loc use);
void sema_report_undefined(sema *S, const char *name, blk_loc loc);
/* Call a device fn with evaluated arguments (args[k] named by names[k] or NULL). */
sema_val sema_call_fn(sema *S, sema_item *fn, ast_node *call, sema_val *args, ast_node **arg_nodes,
                      const char **names, int nargs);
/* Call combine fn `fn` (reduce/scan) on run-time values args[0..n) in the
 * current region, specialising it on their types. */
sema_val sema_call_values(sema *S, sema_item *fn, ir_value **args, int n, blk_loc loc);
bool sema_enter(sema *S, blk_loc loc); /* recursion guard; pair with sema_leave */
void sema_leave(sema *S);

/* ---- sema_stmt.c ---- */
sema_binding *sema_bind(sema *S, const char *name, sema_bind_kind kind, sema_val v, blk_loc loc);
int sema_scope_mark(sema *S);
void sema_scope_pop(sema *S, int mark);
/* Elaborate a block's statements; returns true if control cannot reach its
 * end (break, continue or return on every path). */
bool sema_block(sema *S, ast_node *block);
/* A fn body: like sema_block, with `return` allowed in tail position; the
 * returned value (SV_VOID if none) goes to *ret. */
bool sema_fn_body(sema *S, ast_node *block, sema_val *ret);

/* ---- sema_expr.c ---- */
sema_val sema_expr(sema *S, ast_node *e);
sema_val sema_error(void);
sema_val sema_void(void);
sema_val sema_value(ir_value *v);
sema_val sema_int_const(blk_dtype t, bool weak, int64_t v);
sema_val sema_float_const(blk_dtype t, bool weak, double v);
sema_val sema_bool_const(bool b);
/* A weak integer constant of any value in [INT64_MIN, UINT64_MAX]. */
sema_val sema_weak_int(sema_i128 v);
sema_i128 sema_const_i128(sema_val v);
bool sema_fits(blk_dtype t, sema_i128 x); /* x is in t's value range */
double sema_const_f64(sema_val v);
bool sema_is_const_int(sema_val v);
/* The dtype a weak constant takes when nothing asks otherwise. */
blk_dtype sema_natural_dtype(sema_val v);
/* The full type of a VALUE or CONST (consts: scalar of natural dtype). */
ir_type sema_type_of(sema_val v);
bool sema_is_numeric(sema_val v); /* VALUE or CONST */
const char *sema_kind_name(sema_val v);
/* Type text for messages ("f32[128]", "*const bf16", "tuple", ...). */
const char *sema_type_str(sema *S, sema_val v);
const char *sema_ir_type_str(sema *S, ir_type t);
const char *sema_op_str(int op);

ir_inst *sema_inst(sema *S, ir_op op, blk_loc loc, ir_value *const *ops, int nops, const ir_type *types,
                   int nres, int nregions);
ir_value *sema_op1(sema *S, ir_op op, blk_loc loc, ir_type t, ir_value *x);
ir_value *sema_op2(sema *S, ir_op op, blk_loc loc, ir_type t, ir_value *x, ir_value *y);
ir_value *sema_op3(sema *S, ir_op op, blk_loc loc, ir_type t, ir_value *x, ir_value *y, ir_value *z);
/* Run-time form of a VALUE or CONST (weak consts in their natural dtype). */
ir_value *sema_materialize(sema *S, sema_val v, blk_loc loc);
/* Convert a VALUE or CONST to dtype `dt` and shape `shape` (shape must be a
 * broadcast of v's), as an implicit conversion: a weak integer constant must
 * fit. Returns NULL after an error. */
ir_value *sema_convert(sema *S, sema_val v, blk_dtype dt, ir_type shape, blk_loc loc);
/* The same, as a cast (narrowing allowed, float -> int truncates). */
ir_value *sema_cast_to(sema *S, sema_val v, ir_type elem, ir_type shape, blk_loc loc);
/* Convert a constant to dtype t (implicit conversion rules); false after an error. */
bool sema_const_convert(sema *S, sema_val *v, blk_dtype t, blk_loc loc);
sema_val sema_const_cast(sema_val v, ir_type to);
ir_value *sema_broadcast_ir(sema *S, ir_value *v, ir_type shape, blk_loc loc);
/* numpy broadcasting of two shapes; false if incompatible. */
bool sema_broadcast_shape(ir_type a, ir_type b, ir_type *out);
/* The dtype a binary op computes in; -1 if none (then *why says so). */
int sema_promote(sema_val a, sema_val b, bool *weak);
sema_val sema_binary(sema *S, int op, sema_val a, sema_val b, blk_loc op_loc, ast_node *lhs, ast_node *rhs);
/* Type syntax (AST_TYPE_*) to an ir_type; false after an error. */
bool sema_type_from_ast(sema *S, ast_node *t, ir_type *out);
/* Check/convert a value against an annotation; SV_ERROR after an error. */
sema_val sema_check_annotation(sema *S, sema_val v, ir_type want, blk_loc loc, const char *what,
                               const char *name);
/* A power of two? */
bool sema_is_pow2(int64_t x);

/* ---- sema_builtin.c ---- */
typedef struct sema_builtin sema_builtin;
typedef sema_val (*sema_builtin_fn)(sema *S, ast_node *call, ast_node **args, const sema_builtin *bi);
struct sema_builtin {
    const char *name;
    /* Parameters: positional first (`?` marks optional ones), then after ';'
     * the named-only options. Positional ones may also be named. */
    const char *params;
    sema_builtin_fn check;
    int op;      /* the IR op (or family op) it emits */
    int kind;    /* ir_reduce / ir_atomic / ... for families */
    bool const_ok; /* usable where no IR can be emitted (module consts) */
};
const sema_builtin *sema_builtin_find(const char *name);
sema_val sema_builtin_call(sema *S, const sema_builtin *bi, ast_node *call);
/* d.load([offs]) / d.store([offs], v) */
sema_val sema_desc_method(sema *S, sema_val desc, const char *method, ast_node *call);
/* All builtin names, NULL-terminated (for "did you mean"). */
const char *sema_builtin_name(int i);
/* Names usable as values: inf, nan, dtype names. */
bool sema_builtin_value(const char *name, sema_val *out);

#endif

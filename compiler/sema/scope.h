/* scope.h — the lowest layer of semantic analysis: what every sema file
 * works on, and name resolution.
 *
 * The layers, each calling only the ones below it (sema_build fills in the
 * three upward pointers of sema_upcalls, below):
 *
 *   scope     scope.c      the context, name maps, bindings and scopes, name
 *                          lookup, "did you mean" for undefined names
 *   types     types.c      values and constants, conversions, promotion,
 *                          broadcasting, the IR emission helpers
 *   expr      expr.c       expressions: folding, operators, casts, indexing,
 *                          names, type syntax
 *   builtin   builtin.c    argument binding and the one table (builtins.def);
 *                          the checks by family: builtin_math.c, _memory.c,
 *                          _atomic.c, _reduce.c, _dot.c, _shape.c,
 *                          _random.c, _program.c
 *   stmt      stmt.c       statements, carried vars, if/for/while, tail returns
 *   item      module.c     units, imports, items, module consts
 *             call.c       call expressions, device fn specialisation
 *             kernel.c     kernels: parameters, attributes, autotune
 *             sema.c       sema_build: the walk over a compilation
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
#ifndef BLK_SEMA_SCOPE_H
#define BLK_SEMA_SCOPE_H

#include "ir/eval.h"
#include "front/parse.h"
#include "sema/sema.h"

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

/* Elaboration recurses upward in three places: a call expression may
 * specialise a device fn, whose body is statements made of expressions; a
 * name may be a module const, evaluated on first use; a reduce or scan
 * calls its combine fn. The layers below items reach those three only
 * through these pointers, which sema_build (sema.c) fills in before any
 * elaboration, so that every call and #include between the sema files
 * points down the layers (scope -> types -> expr -> builtin -> stmt -> item). */
typedef struct sema sema;
typedef struct {
    /* call.c: a call expression (a builtin, a device fn, a descriptor method) */
    sema_val (*call)(sema *S, ast_node *call);
    /* module.c: the value of a module item (a const evaluated once) */
    sema_val (*item_value)(sema *S, sema_item *it, blk_loc use);
    /* call.c: combine fn `fn` (reduce/scan) on run-time values args[0..n) */
    sema_val (*call_values)(sema *S, sema_item *fn, ir_value **args, int n, blk_loc loc);
} sema_upcalls;

struct sema {
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
    bool one_kernel;         /* sema_build was asked for one kernel by name */
    VEC(sema_item *) const_stack; /* module consts being evaluated (cycle notes) */
    sema_upcalls up;
};

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

/* ---- scope.c ---- */

void *sema_map_get(const sema_map *m, const char *key);
void sema_map_put(blk_arena *a, sema_map *m, const char *key, void *val);
bool sema_enter(sema *S, blk_loc loc); /* recursion guard; pair with sema_leave */
void sema_leave(sema *S);
/* Where a declaration's name is (its keyword's span for statements): the
 * node's op_loc when the parser set one, else the node. */
blk_loc sema_name_loc(ast_node *n);
sema_unit *sema_unit_get(sema *S, int index);
sema_item *sema_unit_lookup_item(sema *S, int unit, const char *name);

sema_binding *sema_bind(sema *S, const char *name, sema_bind_kind kind, sema_val v, blk_loc loc);
int sema_scope_mark(sema *S);
void sema_scope_pop(sema *S, int mark);
/* Look a name up in the scope: locals of the current fn, then module items
 * of the current unit, its import aliases and unqualified imports. Returns
 * false if the name is not bound (builtins are not looked up here). */
bool sema_lookup(sema *S, const char *name, blk_loc loc, sema_val *out, sema_binding **binding);
void sema_report_undefined(sema *S, const char *name, blk_loc loc);
/* Builtin names (builtins.def), NULL past the last (for "did you mean"). */
const char *sema_builtin_name(int i);
bool sema_is_builtin(const char *name);

#endif

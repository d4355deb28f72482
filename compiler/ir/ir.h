/* ir.h — Block IR: SSA over scalars and static-shape blocks with structured
 * control flow. The one header every pass, the interpreter and codegen read.
 *
 *   module ── funcs (kernels and device fns) ── body region
 *   region ── args (values) + doubly-linked list of insts; ends in a terminator
 *   inst   ── op, operands (values), results (values), attributes, regions
 *
 * A function's parameters are the args of its body region. A FOR's region
 * args are (induction var, carried values...); a WHILE's two regions both
 * take the carried values; IF regions take none. Region-owning ops produce
 * their results from the YIELD (or BREAK for loops) that ends a region.
 *
 * Invariants the verifier checks (verify.c):
 *  - every operand is defined before use and dominates it (defined earlier in
 *    the same region or in an enclosing one);
 *  - ELEM ops: all operands and results have identical shapes (sema inserts
 *    SPLAT/BROADCAST explicitly; no implicit broadcasting in the IR);
 *  - each region ends in exactly one terminator, and only there;
 *  - BREAK/CONTINUE occur only inside a FOR or WHILE body and carry that
 *    loop's carried types; RETURN carries the function's result types.
 *
 * Use lists are not kept: kernels are small, and passes that need uses count
 * them in one walk (ir_count_uses). All memory is in the module's arena.
 */
#ifndef BLK_IR_H
#define BLK_IR_H

#include "../diag.h"
#include "type.h"

typedef enum {
#define X(e, name, nops, nres, flags) e,
#include "ops.def"
#undef X
    IR_OP_COUNT
} ir_op;

enum {
    OPF_PURE = 1 << 0,
    OPF_ELEM = 1 << 1,
    OPF_COMM = 1 << 2,
    OPF_SIDE = 1 << 3,
    OPF_READ = 1 << 4,
    OPF_TERM = 1 << 5,
    OPF_REGN = 1 << 6,
    OPF_CHEAP = 1 << 7, /* about one ALU instruction per element (ops.def) */
};

typedef struct {
    const char *name;
    int num_operands; /* -1 variable */
    int num_results;  /* -1 variable */
    unsigned flags;
} ir_op_info;

extern const ir_op_info ir_op_table[IR_OP_COUNT];
static inline bool ir_op_has(ir_op op, unsigned flag) { return (ir_op_table[op].flags & flag) != 0; }

/* attribute enums */
typedef enum { IR_CMP_EQ, IR_CMP_NE, IR_CMP_LT, IR_CMP_LE, IR_CMP_GT, IR_CMP_GE } ir_cmp;
typedef enum { IR_RED_SUM, IR_RED_MAX, IR_RED_MIN, IR_RED_PROD, IR_RED_XOR_SUM, IR_RED_ARGMAX, IR_RED_ARGMIN } ir_reduce;
/* The elementwise op a reduce or scan kind combines with, the one table the
 * interpreter and codegen share; IR_OP_COUNT for argmax/argmin (they carry
 * an index and compare instead). */
static inline ir_op ir_reduce_combine(int kind) {
    switch (kind) {
    case IR_RED_SUM: return IR_ADD;
    case IR_RED_PROD: return IR_MUL;
    case IR_RED_MAX: return IR_MAXIMUM;
    case IR_RED_MIN: return IR_MINIMUM;
    case IR_RED_XOR_SUM: return IR_XOR;
    default: return IR_OP_COUNT;
    }
}
typedef enum { IR_ATOM_ADD, IR_ATOM_MAX, IR_ATOM_MIN, IR_ATOM_AND, IR_ATOM_OR, IR_ATOM_XOR, IR_ATOM_XCHG } ir_atomic;
typedef enum { IR_CACHE_DEFAULT, IR_CACHE_CA, IR_CACHE_CG, IR_CACHE_CS } ir_cache;
typedef enum { IR_EVICT_DEFAULT, IR_EVICT_NORMAL, IR_EVICT_FIRST, IR_EVICT_LAST } ir_evict;
typedef enum { IR_SEM_ACQ_REL, IR_SEM_RELAXED, IR_SEM_ACQUIRE, IR_SEM_RELEASE } ir_sem;
typedef enum { IR_SCOPE_GPU, IR_SCOPE_CTA } ir_scope; /* atomics: whom the ordering is with */
typedef enum { IR_PREC_DEFAULT, IR_PREC_TF32, IR_PREC_IEEE } ir_precision;

enum { /* ir_inst.flags */
    IRF_FAST = 1 << 0,       /* math: approximate forms allowed */
    IRF_REVERSE = 1 << 1,    /* scans */
    IRF_DESCENDING = 1 << 2, /* sort */
    IRF_VOLATILE = 1 << 3,   /* load */
    IRF_NO_TMA = 1 << 4,     /* store: never by TMA (`tma = false`), from registers */
};

typedef struct ir_value ir_value;
typedef struct ir_inst ir_inst;
typedef struct ir_region ir_region;
typedef struct ir_func ir_func;
typedef struct ir_module ir_module;

struct ir_value {
    ir_type type;
    ir_inst *def;       /* defining inst, NULL for region args */
    ir_region *owner;   /* region for region args, NULL for results */
    int index;          /* result index or arg index */
    int id;             /* scratch numbering (printer, passes); not stable */
    const char *name;   /* source-level name hint or NULL */
};

struct ir_region {
    ir_inst *parent;    /* owning inst; NULL for a function body */
    ir_func *func;
    VEC(ir_value *) args;
    ir_inst *first, *last;
};

struct ir_inst {
    ir_op op;
    blk_loc loc;
    ir_inst *prev, *next;
    ir_region *parent;
    ir_value **operands;
    int num_operands;
    ir_value **results;
    int num_results;
    ir_region **regions;
    int num_regions;
    /* attributes (which op uses which: see ops.def) */
    int axis;
    int kind;           /* ir_cmp / ir_reduce / ir_atomic */
    int64_t ival, ival2;
    double fval;
    int perm[IR_MAX_RANK];
    unsigned flags;     /* IRF_* */
    uint8_t cache, eviction, sem, precision, scope;
    const char *str;    /* PRINT prefix */
    ir_func *callee;    /* CALL */
    int scratch;        /* free for passes */
};

typedef struct {
    const char *name;
    int64_t ival;       /* integer / bool const value */
    double fval;
    bool is_float, is_bool;
} ir_const_binding;

struct ir_func {
    ir_module *module;
    const char *name;
    blk_loc loc;
    bool is_kernel;
    ir_region *body;    /* args = parameters */
    VEC(ir_type) result_types;           /* device fns */
    VEC(ir_const_binding) consts;        /* kernels: const params this specialisation fixed */
    VEC(const char *) param_names;       /* runtime parameter names, in order */
    VEC(int) do_not_specialize;          /* kernels: runtime parameters (indexes, ascending) no
                                            variant assumes anything of (@do_not_specialize) */
    int num_warps, num_stages;
    int cluster;        /* kernels: @cluster(N), programs per thread-block cluster along axis 0 (1: none) */
    ir_func *next;
};

struct ir_module {
    blk_arena *arena;
    ir_func *first, *last;
    int next_value_id;
};

/* ---- construction (ir.c) ---- */
ir_module *ir_module_new(blk_arena *a);
ir_func *ir_func_new(ir_module *m, const char *name, bool is_kernel, blk_loc loc);
void ir_func_remove(ir_module *m, ir_func *f);
ir_value *ir_func_add_param(ir_func *f, ir_type t, const char *name);
ir_region *ir_region_new(ir_func *f, ir_inst *parent);
ir_value *ir_region_add_arg(ir_region *r, ir_type t, const char *name);

/* A new detached inst with room for nops operands, nres results (typed by
 * result_types) and nregions empty regions. Operands may be set later. */
ir_inst *ir_inst_new(ir_func *f, ir_op op, blk_loc loc, ir_value *const *operands, int nops,
                     const ir_type *result_types, int nres, int nregions);
void ir_append(ir_region *r, ir_inst *i);
void ir_insert_before(ir_inst *pos, ir_inst *i);
void ir_insert_after(ir_inst *pos, ir_inst *i);
void ir_unlink(ir_inst *i);
/* Replace every use of `from` with `to` in region r and all nested regions. */
void ir_replace_uses(ir_region *r, ir_value *from, ir_value *to);
/* uses[v->id] counts uses after ir_number_values(); returns an arena array. */
int ir_number_values(ir_func *f);
int *ir_count_uses(ir_func *f, int *num_values);
/* Does region r hold an instruction of op `op`, at any depth? */
bool ir_region_has(const ir_region *r, ir_op op);

/* A builder appends to a region (or inserts before `before`). */
typedef struct {
    ir_func *func;
    ir_region *region;
    ir_inst *before;    /* NULL: append at the end */
    blk_loc loc;        /* loc given to new insts */
} ir_builder;

ir_inst *ir_build(ir_builder *b, ir_op op, ir_value *const *operands, int nops,
                  const ir_type *result_types, int nres, int nregions);
/* One-result helpers */
ir_value *ir_b1(ir_builder *b, ir_op op, ir_type result, ir_value *x);
ir_value *ir_b2(ir_builder *b, ir_op op, ir_type result, ir_value *x, ir_value *y);
ir_value *ir_b3(ir_builder *b, ir_op op, ir_type result, ir_value *x, ir_value *y, ir_value *z);
ir_value *ir_b_const_int(ir_builder *b, ir_type t, int64_t v);
ir_value *ir_b_const_float(ir_builder *b, ir_type t, double v);

/* ---- printing (print.c) ---- */
void ir_print_module(blk_strbuf *out, ir_module *m);
void ir_print_func(blk_strbuf *out, ir_func *f);

/* ---- verification (verify.c) ----
 * Returns the number of problems; each is reported as an error through diag
 * (located at the inst) prefixed with "IR verifier (after PASS): ". */
int ir_verify_module(ir_module *m, blk_diag *d, const char *after_pass);

#endif

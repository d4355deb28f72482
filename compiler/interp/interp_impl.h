/* interp_impl.h — the interpreter's internal state, shared by its files:
 *   interp.c         driver: setup, arguments, regions and control flow
 *   interp_elem.c    constants, grid, shape ops, elementwise ops, random
 *   interp_mem.c     load/store, descriptors, atomics, bounds checking
 *   interp_reduce.c  reductions, scans, sort, topk
 *   interp_dot.c     dot
 *   interp_print.c   print, assert
 *   interp_check.c   shape checks made once before running
 *
 * Every SSA value (numbered by ir_number_values) owns a slot of numel
 * ir_scalar_val elements, row-major, carved out of one allocation made before
 * the first program instance runs. Shapes are static, so a slot is reused by
 * every loop iteration and program instance: execution never allocates.
 */
#ifndef BLK_INTERP_IMPL_H
#define BLK_INTERP_IMPL_H

#include "../ir/eval.h"
#include "interp.h"

/* How a region ended. */
typedef enum {
    SIG_NEXT,     /* an inst completed; keep going (never returned by a region) */
    SIG_YIELD,    /* YIELD or CONDITION: the parent reads the terminator */
    SIG_BREAK,
    SIG_CONTINUE,
    SIG_RETURN,
    SIG_ERROR,    /* a runtime error was reported; unwind everything */
} interp_sig;

typedef struct {
    uint64_t base;
    size_t size;
    const char *name;
} interp_ptr_arg;

/* A cluster_sum in flight: the sum of the programs of one cluster that
 * reached it so far (they run one after another, ranks in order). */
typedef struct {
    const ir_inst *in;
    unsigned cluster[3]; /* pid / (N, 1, 1) of the programs that added */
    int arrived;         /* ranks 0 .. arrived - 1 added; N: done */
    int64_t n;
    float *acc;
} interp_cluster_sum;

typedef struct {
    ir_func *func;
    blk_diag *diag;
    FILE *out;
    ir_scalar_val **vals;      /* vals[value id] -> the value's slot */
    int num_values;
    unsigned pid[3], grid[3];
    interp_ptr_arg *ptr_args;  /* pointer arguments, for bounds checks */
    int num_ptr_args;
    bool checked;              /* every pointer argument has a known size */
    int last_arg;              /* the pointer argument the last checked access hit */
    /* The step budget (interp.h): steps taken so far by this launch, the
     * limit (0 = none) and the innermost loop running, to name in the error. */
    uint64_t steps, max_steps;
    const ir_inst *loop;
    /* scratch for ops that need it, each sized for the largest value */
    float *scratch_f32;        /* 3 * max_numel */
    int32_t *scratch_idx;      /* 2 * max_numel */
    interp_cluster_sum *csum;  /* one per cluster_sum op reached (interp_reduce.c) */
    int ncsum;
} interp;

static inline ir_scalar_val *interp_val(const interp *I, const ir_value *v) { return I->vals[v->id]; }
static inline blk_dtype interp_dtype(const ir_value *v) { return (blk_dtype)v->type.dtype; }

/* Report a runtime error at inst's location, naming the program instance. */
void interp_error(interp *I, const ir_inst *in, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Run a region whose args have been set; *term receives the terminator. */
interp_sig interp_run_region(interp *I, ir_region *r, ir_inst **term);

/* Op families; each returns SIG_NEXT or SIG_ERROR. */
interp_sig interp_elem(interp *I, ir_inst *in);      /* interp_elem.c */
interp_sig interp_memory(interp *I, ir_inst *in);    /* interp_mem.c */
interp_sig interp_reduce(interp *I, ir_inst *in);    /* interp_reduce.c */
interp_sig interp_dot(interp *I, ir_inst *in);       /* interp_dot.c */
interp_sig interp_print(interp *I, ir_inst *in);     /* interp_print.c */
interp_sig interp_assert(interp *I, ir_inst *in);    /* interp_print.c */
interp_sig interp_cluster_sum_op(interp *I, ir_inst *in); /* interp_reduce.c */
/* After a cluster's last program: every cluster_sum its first reached, all
 * of it reached (false after reporting); frees them at the end (done). */
bool interp_cluster_done(interp *I, bool done);

/* Check the shape facts execution relies on (interp_check.c); false after
 * reporting malformed IR. Values must be numbered. */
bool interp_check_func(ir_func *f, int num_values, blk_diag *diag);

/* Split shape at axis: outer * n * inner == numel(t). */
void interp_axis_split(ir_type t, int axis, int64_t *outer, int64_t *n, int64_t *inner);

#endif

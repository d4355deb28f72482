/* passes.h — the pass pipeline over Block IR. pipeline.c writes the list
 * out in one place; each pass's first comment states what it needs and what
 * it guarantees. */
#ifndef BLK_PASSES_H
#define BLK_PASSES_H

#include "../ir/ir.h"
#include "axisinfo.h"
#include "fuse.h"
#include "layout.h"
#include "vectorize.h"
#include "pipeliner.h"
#include "../target/target.h"

typedef struct {
    blk_diag *diag;
    int opt_level;           /* 0: only what correctness needs (inline) */
    bool verify_each;        /* run the verifier after every pass */
    const char *dump_after;  /* pass name whose output is printed to dump */
    blk_strbuf *dump;
} pass_opts;

/* Returns 0, or the number of verifier problems (a compiler bug). */
int passes_run(ir_module *m, const pass_opts *o);
/* NULL-terminated list of pipeline pass names, in order. */
const char *const *pass_names(void);

/* The per-variant analyses codegen lowers from, run in this order by
 * passes_plan_kernel: axisinfo (under the variant's argument assumptions)
 * -> layout -> fuse -> vectorize -> pipeliner, for the target tgt (the
 * dumps of --emit=ir-after use the default target, tgt_default()). */
typedef struct {
    ax_table *ax;
    lay_table *lt;
    fuse_table *fuse;
    vec_table *vec;
    pl_table *pl;
} kernel_plan;

/* false only when the arena is exhausted. flags: the pipeliner's
 * PL_OPTIMISTIC (the plan codegen tries first and the dumps print) and
 * PL_NO_REG_RINGS (pipeliner.h). */
bool passes_plan_kernel(blk_arena *a, ir_func *f, const ax_spec *spec, const tgt_target *tgt, unsigned flags, kernel_plan *out);
/* The d16 assumption for every pointer and integer parameter of f but the
 * @do_not_specialize ones (ax_d16_spec; what the --emit=ir-after dumps of
 * the analyses show). */
const ax_spec *passes_d16_spec(blk_arena *a, ir_func *f);
/* The shared memory a cluster_sum's receive buffer takes in the last
 * program of a cluster: (cluster - 1) slots of every thread's registers of
 * the value, in 16-byte groups of 4 (codegen/cg_cluster.c); the pipeliner's
 * rings get the rest. */
int64_t passes_cluster_sum_bytes(const ir_func *f, const lay_table *lt, const ir_inst *in);
/* Drop (set to AX_SPEC_NONE) every assumption of spec that f's lowering does
 * not use: the plan without it is the plan with all of spec (layouts and
 * access widths equal). Tried one parameter at a time, each drop kept for
 * the next, so the result still lowers exactly like spec. A kernel's scalar
 * arguments that only feed arithmetic (a timestep, an epsilon index) then
 * stop keeping launches out of the specialised entry. Returns how many
 * assumptions remain, -1 when the arena is exhausted (spec then partly
 * pruned, still valid). */
int passes_prune_spec(blk_arena *a, ir_func *f, ax_spec *spec, const tgt_target *tgt);

/* the passes */
void pass_inline(ir_module *m);        /* inline every IR_CALL; drop device fns */
void pass_canonicalize(ir_module *m);  /* fold, CSE, DCE, algebraic identities */

#endif

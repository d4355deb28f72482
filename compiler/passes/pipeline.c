/* pipeline.c — the pass pipeline, written out in one place (QBE's main.c).
 *
 *   sema ──► inline ──► canonicalize ──► axisinfo ──► layout ──► fuse ──► vectorize ──► pipeliner ──► (codegen)
 *
 * axisinfo, layout, fuse and vectorize are analyses that depend on the
 * argument specialisation of a variant: codegen runs them per variant
 * through passes_plan_kernel (below, the same order); in the module
 * pipeline they only provide dump points that print their results after
 * the IR for the d16 variant (ax_dump_module, lay_dump_module,
 * fuse_dump_module, vec_dump_module).
 *
 * Before the first pass and after each one, the verifier runs when
 * verify_each is set (a failure is a compiler bug: the pipeline stops and
 * returns the problem count), and the IR is printed to o->dump when
 * o->dump_after names that point ("sema" = the input). A pass skipped at the
 * current optimisation level still has a dump point: -O0 with
 * ir-after=canonicalize prints the IR that inline left.
 */
#include "passes.h"

#include <string.h>

/* The list: name (pass_NAME is its entry point) and the lowest -O level
 * that runs it. */
#define PIPELINE(X)                                                         \
    X(inline, 0, NULL)       /* always: the interpreter and codegen know no calls */ \
    X(canonicalize, 1, NULL) /* fold, identities, CSE, DCE, constant ifs */          \
    X(axisinfo, 0, ax_dump_module) /* analysis: contiguity/divisibility/constancy */ \
    X(layout, 0, lay_dump_module)  /* analysis: distributed layouts */                \
    X(fuse, 0, fuse_dump_module)   /* analysis: rematerialise, or exchange */         \
    X(vectorize, 0, vec_dump_module) /* analysis: width of each memory access */       \
    X(pipeliner, 0, pl_dump_module)  /* analysis: dot operands through cp.async rings */

typedef struct {
    const char *name;
    void (*run)(ir_module *m);
    int min_opt_level;
    void (*dump)(blk_strbuf *out, ir_module *m); /* NULL: print the IR */
} pass_entry;

static const pass_entry pipeline[] = {
#define X(name, level, dump) {#name, pass_##name, level, dump},
    PIPELINE(X)
#undef X
};
#define NUM_PASSES ((int)(sizeof pipeline / sizeof pipeline[0]))

static const char *const names[] = {
#define X(name, level, dump) #name,
    PIPELINE(X)
#undef X
    NULL};

const char *const *pass_names(void) { return names; }

static void dump_if_asked(ir_module *m, const pass_opts *o, const char *point,
                          void (*dump)(blk_strbuf *, ir_module *)) {
    if (!o->dump || !o->dump_after || strcmp(o->dump_after, point) != 0) return;
    if (dump) dump(o->dump, m);
    else ir_print_module(o->dump, m);
}

int passes_run(ir_module *m, const pass_opts *o) {
    if (arena_failed(m->arena)) return 1;
    dump_if_asked(m, o, "sema", NULL);
    if (o->verify_each) {
        int problems = ir_verify_module(m, o->diag, "sema");
        if (problems) return problems;
    }
    for (int p = 0; p < NUM_PASSES; p++) {
        /* A pass that ran out of memory may leave the IR half rewritten. */
        if (arena_failed(m->arena)) return 1;
        if (o->opt_level >= pipeline[p].min_opt_level) pipeline[p].run(m);
        /* Dump before verifying: a broken IR is what one wants to look at. */
        dump_if_asked(m, o, pipeline[p].name, pipeline[p].dump);
        if (o->verify_each) {
            int problems = ir_verify_module(m, o->diag, pipeline[p].name);
            if (problems) return problems;
        }
    }
    return 0;
}

int64_t passes_cluster_sum_bytes(const ir_func *f, const lay_table *lt, const ir_inst *in) {
    const ir_value *v = in->operands[0];
    const lay_layout *l = v->type.rank ? lay_get(lt, v) : NULL;
    int64_t regs = l ? lay_num_regs(l, v->type.shape, NULL) : 1;
    return (int64_t)(f->cluster - 1) * ((regs + 3) / 4) * f->num_warps * 32 * 16; /* 16-byte groups of 4 */
}

static int64_t cluster_sums_in(const ir_func *f, const lay_table *lt, const ir_region *r) {
    int64_t bytes = 0;
    for (const ir_inst *in = r ? r->first : NULL; in; in = in->next) {
        if (in->op == IR_CLUSTER_SUM) bytes += passes_cluster_sum_bytes(f, lt, in); /* a multiple of 16 */
        for (int k = 0; k < in->num_regions; k++) bytes += cluster_sums_in(f, lt, in->regions[k]);
    }
    return bytes;
}

bool passes_plan_kernel(blk_arena *a, ir_func *f, const ax_spec *spec, const tgt_target *tgt, unsigned flags, kernel_plan *out) {
    *out = (kernel_plan){0};
    int max_vec_bytes = tgt->max_vec_bytes;
    out->ax = ax_analyze(a, f, spec);
    out->lt = out->ax ? lay_assign(a, f, out->ax, max_vec_bytes, tgt_has(tgt, TGT_CAP_WGMMA)) : NULL;
    out->fuse = out->lt ? fuse_analyze(a, f, out->lt) : NULL;
    out->vec = out->fuse ? vec_analyze(a, f, out->ax, out->lt, max_vec_bytes) : NULL;
    /* optimistic only with wgmma (pipeliner.h: where it pays and costs no
     * second program per multiprocessor) */
    if (!tgt_has(tgt, TGT_CAP_WGMMA)) flags &= ~(unsigned)PL_OPTIMISTIC;
    /* a @cluster kernel's cluster_sum buffers are reserved first (cg_cluster.c) */
    int64_t csum = f->cluster > 1 && out->lt ? cluster_sums_in(f, out->lt, f->body) : 0;
    int budget = csum < tgt->smem_optin_max ? tgt->smem_optin_max - (int)csum : 0;
    out->pl = out->vec ? pl_analyze(a, f, out->lt, out->vec, budget, flags) : NULL;
    return out->pl != NULL;
}

const ax_spec *passes_d16_spec(blk_arena *a, ir_func *f) { return ax_d16_spec(a, f); }

/* Same lowering: the same layout for every value, the same access width
 * for every memory op and the same constancy (cg_elementwise computes
 * equal registers once) — all codegen reads of axisinfo. */
static bool same_plan(const kernel_plan *x, const kernel_plan *y) {
    if (x->lt->num_values != y->lt->num_values || x->vec->num != y->vec->num) return false;
    for (int i = 0; i < x->lt->num_values; i++) {
        if (!lay_eq(x->lt->lay[i], y->lt->lay[i])) return false;
        for (int d = 0; d < IR_MAX_RANK; d++)
            if (x->ax->info[i].constancy[d] != y->ax->info[i].constancy[d]) return false;
    }
    for (int i = 1; i <= x->vec->num; i++)
        if (x->vec->acc[i].vec != y->vec->acc[i].vec || !lay_eq(x->vec->acc[i].lay, y->vec->acc[i].lay)) return false;
    return true;
}

int passes_prune_spec(blk_arena *a, ir_func *f, ax_spec *spec, const tgt_target *tgt) {
    int np = f->body->args.len, kept = 0;
    kernel_plan full, without;
    if (!passes_plan_kernel(a, f, spec, tgt, PL_OPTIMISTIC, &full)) return -1;
    for (int k = 0; k < np; k++) {
        if (spec[k] == AX_SPEC_NONE) continue;
        ax_spec was = spec[k];
        spec[k] = AX_SPEC_NONE;
        if (!passes_plan_kernel(a, f, spec, tgt, PL_OPTIMISTIC, &without)) return -1;
        if (!same_plan(&full, &without)) spec[k] = was, kept++;
    }
    return kept;
}

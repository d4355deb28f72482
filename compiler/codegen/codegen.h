/* codegen.h — Block IR -> PTX through the LLVM C API (the PTX backend).
 *
 * Needs: a module after the pass pipeline (inlined: no calls). Guarantees:
 * PTX text with, per kernel, one entry per variant (argument specialisation,
 * docs/codegen.md): by default the variant assuming every pointer and
 * integer argument divisible by 16 (except @do_not_specialize ones) and the
 * unspecialised fallback, plus requested ones (cg_variants), most
 * assumptions first — each preceded by one metadata comment line:
 *
 *   // blk-meta v1 kernel=K entry=E num_warps=W shared=B params=n:T,...
 *      consts=N:T:V,... spec=n:d16|eq1|-,... [nospec=n,...]
 *
 * Errors (unsupported ops, blocks too large for the shared-memory scratch)
 * are located diagnostics; LLVM never sees an invalid module (it is verified
 * first, and a failure is reported as an internal error).
 */
#ifndef BLK_CODEGEN_H
#define BLK_CODEGEN_H

#include "../ir/ir.h"
#include "../passes/axisinfo.h"
#include "../target/target.h"

/* The backend's phases, timed in cg_output.ms (blkc_emit "times"). */
enum { CG_T_LOWER, CG_T_VERIFY, CG_T_LIBDEVICE, CG_T_OPT, CG_T_EMIT, CG_NPHASES };

typedef struct {
    blk_strbuf llvm; /* textual LLVM IR (after optimisation) */
    blk_strbuf ptx;  /* PTX text, metadata lines first */
    blk_strbuf meta; /* the metadata lines only */
    double ms[CG_NPHASES]; /* wall time of each phase of the last cg_emit_module */
} cg_output;

/* One requested variant: an assumption per runtime parameter of kernel. */
typedef struct {
    const ir_func *kernel;
    const ax_spec *spec;
} cg_variant;

/* Which variants each kernel gets: the default pair (unless no_defaults)
 * and the extra ones of that kernel. Identical assumptions make one entry. */
typedef struct {
    bool no_defaults;
    const cg_variant *extra;
    int nextra;
} cg_variants;

/* Lower every kernel of m. Returns 0, or the number of errors reported to d.
 * want_llvm: also fill out->llvm. opt_level 0 skips LLVM's optimisation.
 * flags: CG_* below.
 * vs NULL: the default variants. */
enum { /* cg_emit_module flags */
    CG_LINEINFO = 1 << 0,       /* .file/.loc directives (cg_lineinfo.c) */
    CG_REMARKS = 1 << 1,        /* a remark per global access: its width and what limited it */
    CG_REMARKS_MISSED = 1 << 2, /* ... only for accesses narrower than the widest */
};
int cg_emit_module(ir_module *m, const tgt_target *t, blk_diag *d, int opt_level, bool want_llvm,
                   const cg_variants *vs, unsigned flags, cg_output *out);

/* One blk-meta line per kernel from the IR alone, without LLVM (what a
 * runtime needs before any variant is compiled): the fallback's line, with
 * shared=0 (known only after codegen). */
void cg_front_meta(blk_strbuf *out, ir_module *m, const tgt_target *t);
void cg_output_init(cg_output *o);
void cg_output_free(cg_output *o);

#endif

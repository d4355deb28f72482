/* codegen.h — Block IR -> PTX through the LLVM C API (the PTX backend).
 *
 * Needs: a module after the pass pipeline (inlined: no calls). Guarantees:
 * PTX text with, per kernel, two entries — the variant assuming every
 * pointer and integer argument divisible by 16 and the unspecialised
 * fallback — each preceded by one metadata comment line:
 *
 *   // blk-meta v1 kernel=K entry=E num_warps=W shared=B params=n:T,...
 *      consts=N:T:V,... spec=n:d16|eq1|-,...
 *
 * Errors (unsupported ops, blocks too large for the shared-memory scratch)
 * are located diagnostics; LLVM never sees an invalid module (it is verified
 * first, and a failure is reported as an internal error).
 */
#ifndef BLK_CODEGEN_H
#define BLK_CODEGEN_H

#include "../ir/ir.h"
#include "../target/target.h"

typedef struct {
    blk_strbuf llvm; /* textual LLVM IR (after optimisation) */
    blk_strbuf ptx;  /* PTX text, metadata lines first */
    blk_strbuf meta; /* the metadata lines only */
} cg_output;

/* Lower every kernel of m. Returns 0, or the number of errors reported to d.
 * want_llvm: also fill out->llvm. opt_level 0 skips LLVM's optimisation. */
int cg_emit_module(ir_module *m, const tgt_target *t, blk_diag *d, int opt_level, bool want_llvm,
                   cg_output *out);
void cg_output_init(cg_output *o);
void cg_output_free(cg_output *o);

#endif

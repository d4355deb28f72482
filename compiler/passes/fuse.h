/* fuse.h — what stays in registers and what crosses threads.
 *
 * blk never materialises an intermediate block in global memory: a kernel's
 * ops are lowered together, elementwise and broadcast chains compute in
 * registers, and a reduction's result (a SLICE layout) feeds the elementwise
 * ops after it in registers too (expand_dims of a slice is free). Data moves
 * between threads only at an *exchange*:
 *
 *   reduce / argreduce / reduce_fn / scan   in-thread, warp shuffles, and
 *                                           shared memory across warps
 *   sort / topk                             shuffles, shared memory
 *   reshape / join / split / cat / permute  shared memory (permute: free when
 *                                           the layouts are permutations)
 *   a use wanting another layout            a conversion through shared
 *                                           memory — unless the value is
 *                                           rematerialised (below)
 *
 * The pass decides rematerialisation (Triton's RemoveLayoutConversions
 * rematerialises the same way): a block value computed only from scalars,
 * constants, arange and cheap integer/logical elementwise ops (an index or a
 * mask: `rows[:, None] * n + cols[None, :]`, `(r < n)[:, None] & ...`) is
 * recomputed in the layout a consumer wants instead of being converted
 * through shared memory, which costs two barriers and a round trip per
 * element. A transpose thus converts its data tile once and recomputes its
 * indices and masks in the store's layout.
 *
 * Needs: lay (and the numbering of ax/lay) of the same function and variant.
 * Guarantees: fuse_remat(v) only for values whose whole definition chain is
 * pure, memory-free and at most FUSE_MAX_COST ops; codegen (cg_get) honours
 * it. Analysis only: the IR is unchanged.
 */
#ifndef BLK_FUSE_H
#define BLK_FUSE_H

#include "layout.h"

/* Largest definition chain (ops) recomputed instead of converted. A
 * conversion costs about as much as a dozen ALU ops per element plus two
 * barriers; index chains are 2-10 ops. */
enum { FUSE_MAX_COST = 24 };

typedef struct {
    int num_values;
    unsigned char *cost; /* by value id: 0 = not rematerialisable, else ops in the chain */
} fuse_table;

fuse_table *fuse_analyze(blk_arena *a, ir_func *f, const lay_table *lt);
bool fuse_remat(const fuse_table *t, const ir_value *v);

/* --emit=ir-after=fuse: the IR, then every exchange and rematerialisation. */
void fuse_dump_module(blk_strbuf *out, ir_module *m);
void pass_fuse(ir_module *m); /* analysis only: leaves the IR unchanged */

#endif

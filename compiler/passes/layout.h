/* layout.h — distributed layouts: which thread of a program instance holds
 * which elements of a block (Triton's TritonGPUAttrDefs, simplified).
 *
 * BLOCKED  sizePerThread spt[d], threadsPerWarp tpw[d] (product 32),
 *          warpsPerCTA wpc[d] (product num_warps), order[] (fastest dim
 *          first). Along dim d the layout tiles tile[d] = spt*tpw*wpc
 *          elements: a thread with coordinate tc[d] (its warp's coordinate
 *          times tpw plus its lane's) owns the spt[d] consecutive elements
 *          starting at tc[d]*spt[d] of every tile. A dim larger than the tile
 *          repeats it (the thread owns more registers); a smaller dim wraps
 *          around (threads own copies: replication).
 *
 *          #blocked<spt=[1, 4], tpw=[2, 16], wpc=[4, 1], order=[1, 0]> on
 *          f32[8, 64]  (4 warps; each row shows the thread ids owning the
 *          4-element groups; t0 holds [0, 0..3], t1 [0, 4..7], ...)
 *
 *             cols 0..3  4..7      60..63
 *          row 0   t0    t1  ...   t15
 *          row 1   t16   t17 ...   t31      <- warp 0
 *          row 2   t32   t33 ...   t47      <- warp 1
 *          ...
 *          row 7   t112  ...       t127     <- warp 3
 *
 *          rin[d] (1 unless said): register repeats that sit between the
 *          lanes and the warps — along d a warp then covers spt*tpw*rin
 *          elements, its thread's rin groups of spt lying spt*tpw apart,
 *          and the tile is spt*tpw*rin*wpc. Only wgmma's accumulator uses
 *          it (below); a dim with rin > 1 fits a block only whole tiles
 *          long (or held whole by each thread).
 *
 * SLICE    slice<dim=d, parent=P>: the layout of a value with dim d of P
 *          removed (a reduction's result along d). A thread holds the
 *          elements whose other coordinates it holds under P; all threads
 *          differing only in their d coordinate hold the same values.
 *          expand_dims(x, d) of a SLICE(d, P) value is P again, for free.
 *
 * Layouts are independent of the shape they are applied to (as in Triton):
 * the same #blocked describes i32[16, 1] and i32[16, 256], which makes
 * broadcast and expand_dims register renamings.
 *
 * Registers of a value: per dim n[d] = S < spt ? S : spt * max(1, S / tile)
 * elements, enumerated with the layout's fastest dim fastest, so a thread's
 * spt consecutive elements of the fastest dim are adjacent registers (what
 * ld.global.v4 needs).
 *
 * The tensor-core accumulator is a BLOCKED layout too (lay_for_dot):
 * mma.sync m16n8 gives lane l the elements (g, 2t..2t+1) and (g+8, ...) of
 * its 16x8 tile (g = l / 4, t = l % 4), which is
 *     #blocked<spt=[1, 2], tpw=[8, 4], wpc=[Wm, Wn], order=[1, 0]>
 * with the row bit "+8" taken by the next register along dim 0 instead of
 * the next warp: warp (wm, wn)'s register k0 holds row 8*wm + g + 8*Wm*k0,
 * so registers 2i and 2i+1 are the two halves (g, g+8) of an m16 tile whose
 * rows are 8 apart in the *tile's* numbering but 8*Wm apart in the block.
 * The A operand follows: ldmatrix takes one row address per lane, so the
 * fragment's rows are gathered wherever the accumulator's rows are (free).
 * Reductions, broadcasts, slices, conversions and stores then treat the
 * accumulator like any other blocked value (docs/codegen.md, "Tensor cores").
 *
 * wgmma's accumulator (m64 per warpgroup) puts that "+8" inside the warp's
 * own 16 rows: warp w's register k0 = 2i + h holds row 16*w + 8*h + g +
 * 16*Wm*i, which is #blocked<spt=[1, 2], tpw=[8, 4], rin=[2, 1],
 * wpc=[Wm, 1]>. Rows then run in the order wgmma computes them, so its A
 * tile is stored as loaded (a TMA box) rather than with permuted rows.
 */
#ifndef BLK_LAYOUT_H
#define BLK_LAYOUT_H

#include "../ir/ir.h"
#include "axisinfo.h"

typedef enum { LAY_BLOCKED, LAY_SLICE } lay_kind;

typedef struct lay_layout lay_layout;
struct lay_layout {
    lay_kind kind;
    int rank;                /* rank of the values it describes */
    /* BLOCKED */
    int spt[IR_MAX_RANK], tpw[IR_MAX_RANK], wpc[IR_MAX_RANK], order[IR_MAX_RANK];
    int rin[IR_MAX_RANK];    /* register repeats inside a warp's span (above) */
    /* SLICE */
    int slice_dim;
    const lay_layout *parent;
};

/* A layout flattened to its root BLOCKED layout: value dim d is root dim
 * dims[d]; root dims not in dims[] were sliced away. */
typedef struct {
    int root_rank;
    int spt[IR_MAX_RANK + 1], tpw[IR_MAX_RANK + 1], wpc[IR_MAX_RANK + 1], order[IR_MAX_RANK + 1];
    int rin[IR_MAX_RANK + 1];
    int rank;
    int dims[IR_MAX_RANK];
    int reg_order[IR_MAX_RANK]; /* value dims, fastest first */
} lay_flat;

const lay_layout *lay_blocked(blk_arena *a, int rank, const int *spt, const int *tpw, const int *wpc,
                              const int *order);
/* the same with register repeats rin[] between lanes and warps */
const lay_layout *lay_blocked_rin(blk_arena *a, int rank, const int *spt, const int *tpw, const int *rin,
                                  const int *wpc, const int *order);
/* the elements a warp's lanes and repeats span along root dim p, and the
 * layout's tile there (spt*tpw*rin, times wpc) */
int lay_warp_span(const lay_flat *f, int p);
int lay_tile(const lay_flat *f, int p);
const lay_layout *lay_slice(blk_arena *a, const lay_layout *parent, int dim);
/* The layout of expand_dims(x, dim) for x in layout l: the parent when l
 * slices dim, else l with a new dim of one element per thread. */
const lay_layout *lay_expand(blk_arena *a, const lay_layout *l, int dim);
/* The layout of permute(x, perm) for x in layout l (NULL if l is a slice). */
const lay_layout *lay_permute(blk_arena *a, const lay_layout *l, const int *perm);
bool lay_eq(const lay_layout *a, const lay_layout *b);
void lay_flatten(const lay_layout *l, lay_flat *f);
/* Can l describe a block of this shape (every dim a multiple or a divisor of
 * the layout's tile, or held whole by each thread)? */
bool lay_fits(const lay_layout *l, int rank, const int32_t *shape);
/* Registers per thread for a block of `shape` (n[d] per dim when n != NULL). */
int lay_num_regs(const lay_layout *l, const int32_t *shape, int *n);
/* The blocked layout spreading `shape` over num_warps warps with `vec`
 * consecutive elements per thread along fast_dim. */
const lay_layout *lay_choose_blocked(blk_arena *a, int rank, const int32_t *shape, int num_warps, int fast_dim,
                                     int vec);
/* The accumulator layout of a dot with result [M, N] (M, N powers of two,
 * M >= 16): all warps along M when `rows_first` (a chain whose rows are
 * reduced or fed to another dot: attention keeps a row in one warp),
 * otherwise square-ish warp tiles (Triton's warpsPerTile for mma v2). Warps
 * beyond M/16 x N/8 replicate along N. `wgmma`: wgmma's form (rows
 * first, rin = [2, 1]: above). */
const lay_layout *lay_for_dot(blk_arena *a, int M, int N, int num_warps, bool rows_first, bool wgmma);
/* Is l an accumulator layout of lay_for_dot's form in which every warp owns
 * whole m16 tiles of a block of this shape? */
bool lay_is_mma_acc(const lay_layout *l, int rank, const int32_t *shape);
/* Can a dot of these shapes take Hopper's wgmma (cg_dot.c) when its
 * accumulator has all warps along M? 16-bit operands with an f32
 * accumulator (K a multiple of 16), i8 with i32 (K a multiple of 32), f8
 * with f32 (K a multiple of 128) or f32 as tf32 (K a multiple of 32: the
 * f8 and tf32 forms read both operands K-major, in rows of whole 128-byte
 * panels), whole warpgroups, every warpgroup a multiple of 64 rows. On a target
 * with wgmma, lay_assign then puts the accumulator's warps along M
 * (rows first): wgmma's warps of one warpgroup split the rows. */
bool lay_wgmma_shape(blk_dtype ab, blk_dtype acc, int M, int N, int K, int num_warps);
/* "#blocked<spt=[4], tpw=[32], wpc=[4], order=[0]>" / "#slice<dim=0, #blocked<...>>" */
void lay_print(blk_strbuf *out, const lay_layout *l);

/* ---- the layout assignment (layout.c) ---- */
typedef struct {
    int num_values;
    const lay_layout **lay;    /* by value id; NULL for scalars */
    int num_warps;
    bool wgmma;                /* the target has wgmma (lay_assign's argument) */
} lay_table;

/* Needs: ax (for f, same numbering). Guarantees: every block value has a
 * layout that fits its shape; loads and stores have the layout that makes
 * their accesses as wide and coalesced as axisinfo proves possible. Where an
 * operand's layout differs from what its consumer needs, codegen converts
 * (through shared memory); the assignment chooses layouts backward from
 * memory accesses so that this is rare. */
lay_table *lay_assign(blk_arena *a, ir_func *f, const ax_table *ax, int max_vec_bytes, bool wgmma);
const lay_layout *lay_get(const lay_table *t, const ir_value *v);
/* The layout a LOAD/STORE/ATOMIC wants for its pointer block of shape/type
 * ptr (from axisinfo): widest vector along the most contiguous dim. */
const lay_layout *lay_for_access(blk_arena *a, const ir_value *ptr, const ax_table *ax, int num_warps,
                                 int max_vec_bytes);
/* The layout a STORE writes in, given its value's layout: lay_for_access's,
 * or a 4-byte tensor-core accumulator's own (written from its registers). */
const lay_layout *lay_for_store(blk_arena *a, const ir_inst *st, const lay_layout *value, const ax_table *ax,
                                int num_warps, int max_vec_bytes);

/* DESC_LOAD / DESC_STORE: the widest aligned, mask-uniform access (elements)
 * the descriptor's operands prove along *fast (the dim of constant stride 1),
 * and the layout giving it (threads get min(vec, numel / threads)). */
int lay_desc_vec(const ir_inst *in, const ax_table *ax, int max_vec_bytes, int *fast);
const lay_layout *lay_for_desc(blk_arena *a, const ir_inst *in, const ax_table *ax, int num_warps, int max_vec_bytes);

/* --emit=ir-after=layout: the IR, then the layout of every block value. */
void lay_dump_module(blk_strbuf *out, ir_module *m);
void pass_layout(ir_module *m); /* analysis only: leaves the IR unchanged */

#endif

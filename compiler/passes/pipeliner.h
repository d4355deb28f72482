/* pipeliner.h — software pipelining of the loads that feed `dot` (Triton's
 * loop pipeliner, CUTLASS's multistage mainloop).
 *
 * In a `for` loop with num_stages S >= 2 (`@num_stages(S)`, else the
 * kernel's, default 3), a dot operand that is
 *
 *   RING   a load in the loop body used by nothing but the dot (possibly
 *          through trans), of 16-bit or i8 elements or f8 ones of a
 *          pl_f8_wgmma dot (i8 and f8 contiguous along K), whose pointer and mask
 *          are computed from the induction variable and values defined
 *          before the loop only, with `other` absent or zero and groups of
 *          4, 8 or 16 bytes (vectorize): it never goes through registers.
 *          Codegen keeps S shared-memory slots of its tile; before the loop
 *          it issues cp.async for iterations 0..S-2, and at the top of
 *          iteration i waits for tile i (cp.async.wait_group S-2), bar.sync,
 *          then issues iteration i+S-1's copies into the slot iteration i-1
 *          read (masked chunks zero-filled: src-size 0). The dot reads slot
 *          i % S with ldmatrix: no stores, no barriers of its own;
 *          A tensor_desc load qualifies likewise (its descriptor fixed before
 *          the loop, its offsets from the induction variable): codegen fills
 *          its slots with TMA (cp.async.bulk.tensor on an mbarrier) where
 *          the dot takes wgmma and the descriptor is a kernel argument's
 *          (cg_tma.c), else with cp.async as above;
 *   HOIST  a value defined before the loop (attention's q): stored into its
 *          swizzled tile once, before the loop, instead of every iteration;
 *
 * and any other operand goes through the per-dot staging of cg_dot.c. A
 * loop with a dot also streams its other 2-d loads through rings when
 * they qualify as a RING load does (address and mask from the induction
 * variable, `other` absent or zero, 4-, 8- or 16-byte groups) but no dot
 * reads them as they are: data turned in registers before a dot reads it
 * (RoPE's rotated K, a dequantized weight, a feature map) or not read by
 * one at all. Such a ring (`regs`) is copied S-1 iterations ahead like
 * the others, and each thread reads its groups back from the slot into
 * the load's own layout where the load stood: the global latency hides
 * behind the earlier iterations instead of being waited for in place. The
 * decision is an analysis over the IR of one variant, like fuse and
 * vectorize, so the interpreter and every other pass see the same IR;
 * `--emit=ir-after=pipeliner` prints it (docs/codegen.md, "Tensor cores").
 *
 * Needs: lay and vec of the same function and variant.
 * Guarantees: the shared memory of every loop's rings and hoisted tiles,
 * plus PL_SCRATCH_RESERVE for the scratch users inside the loop (none in a
 * loop of ring loads and dots on resident operands only), fits
 * `smem_budget` (stages are reduced to 2, then the loop is left alone).
 *
 * Optimistic plans (`optimistic`): the reservation is a guess — a body of
 * in-warp reductions and elementwise work in the accumulator's layout
 * (attention's softmax) moves nothing through shared memory, and 48 KB cost
 * BM = BN = 128 attention its third stage. So codegen plans optimistically
 * first: the rings may take the whole budget, and `optimistic` in the table
 * says that some loop got more than the reservation allowed. If the body's
 * scratch then does not fit beside the rings, codegen lowers the variant
 * again from a plan with the reservation (cg_module.c lower_kernel): the
 * answer is exact, not a second guess.
 *
 * Only on targets with wgmma (passes_plan_kernel). There the reservation
 * binds only where the rings alone pass 227 - 48 = 179 KB less a stage
 * (64 KB at most in every stdlib configuration), over half of the
 * multiprocessor's 228 KB: such a program runs alone on its multiprocessor
 * either way, so the extra stage is free (a loop of larger stages could
 * lose a second program; none is known). sm_80 PTX also runs on GPUs where the 48 KB is what leaves room
 * for a second program: attention BM = 128, BN = 64 on 4 warps went from 96
 * to 128 KB with a third stage, and from 3093 to 4133 µs on an H200 (one
 * program per multiprocessor instead of two). */
#ifndef BLK_PIPELINER_H
#define BLK_PIPELINER_H

#include "layout.h"
#include "vectorize.h"

typedef enum { PL_NONE, PL_RING, PL_HOIST } pl_kind;

typedef struct {
    pl_kind kind;
    ir_inst *loop;     /* the FOR */
    int stages;        /* RING: slots */
    int bytes;         /* one slot (RING) or the tile (HOIST) */
    int colv;          /* the value dim stored contiguous (of the load / the hoisted value) */
    int role;          /* HOIST: the dot operand it is (0 = a, 1 = b) */
    bool regs;         /* RING: read into registers (no dot reads the load) */
} pl_entry;

typedef struct {
    int num_values;
    pl_entry *e;       /* by value id: a RING load's result or a HOIST value */
    const char **why;  /* by value id of a dot operand left alone, or of a load of a dot's loop that
                        * no dot reads and has no ring: the reason (the dump, -R) */
    bool optimistic;   /* some loop's rings took memory the reservation would have kept */
    bool regs;         /* some loop keeps a ring read into registers */
} pl_table;

enum { PL_SCRATCH_RESERVE = 48 * 1024 };

/* How to plan (passes_plan_kernel's `flags`): PL_OPTIMISTIC the optimistic
 * plan above; PL_NO_REG_RINGS no rings read into registers — codegen's last
 * retry when a body's scratch did not fit beside them (cg_module.c). */
enum { PL_OPTIMISTIC = 1, PL_NO_REG_RINGS = 2 };
pl_table *pl_analyze(blk_arena *a, ir_func *f, const lay_table *lt, const vec_table *vt, int smem_budget, unsigned flags);
const pl_entry *pl_get(const pl_table *t, const ir_value *v);
/* How cg_dot.c stores a dot operand in shared memory — one definition for
 * the plan and the lowering: bytes per element (f8 as f16, f32 as 4, i8 as
 * 1) and the value dim stored contiguous
 * (a 16-bit operand's fastest register dim in layout l, so its stores are
 * vectors; other types along K, dim kdim). */
int pl_elem_bytes(blk_dtype t);
int pl_stored_colv(const lay_layout *l, blk_dtype t, int kdim);
/* Does dot d take wgmma's e4m3 / e5m2 form, its f8 operands stored as raw
 * bytes instead of converted to f16? On a target with wgmma (lt->wgmma)
 * when lay_wgmma_shape allows it, the accumulator's warps are all along M
 * (lay_assign's choice for such a dot unless another dot decided) and both
 * operands' registers run along K: wgmma reads 8-bit operands K-major only.
 * One rule for the plan (f8 rings of raw bytes, tile sizes) and the
 * lowering (cg_dot.c's wg_choose); otherwise *why (blkc -R) says why not,
 * and the operands take the f16 path. */
bool pl_f8_wgmma(const lay_table *lt, const ir_inst *d, const char **why);
/* Bytes per stored element of dot d's operands (pl_elem_bytes, 1 for the
 * f8 operands of a pl_f8_wgmma dot), and of a rows x cols tile of one. */
int pl_dot_elem_bytes(const lay_table *lt, const ir_inst *d);
int pl_tile_bytes(const lay_table *lt, const ir_inst *d, int rows, int cols);

void pl_dump_module(blk_strbuf *out, ir_module *m);
void pass_pipeliner(ir_module *m); /* analysis only: leaves the IR unchanged */

#endif

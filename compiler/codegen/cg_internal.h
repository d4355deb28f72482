/* cg_internal.h — shared state of the PTX backend (one lowering file per op
 * family, Triton's TritonGPUToLLVM):
 *
 *   cg_module.c       LLVM context/module/target machine, kernel entries and
 *                     argument specialisation, libdevice, PTX text, metadata
 *   cg_layout.c       thread/element coordinates of a layout (lay_*)
 *   cg_elementwise.c  every ELEM op, casts, constants, arange, splat, broadcast
 *   cg_memory.c       load / store / atomics (vectorised, predicated)
 *   cg_reduce.c       reductions and scans: in-thread, warp shuffles, shared memory
 *   cg_warp.c         warp shuffles of any register type (shfl.sync)
 *   cg_sort.c         sort and topk: bitonic network, topk rounds
 *   cg_sort_keys.c    sort keys: format, encoding, compare (cg_sort.h)
 *   cg_convert.c      layout conversions and shape ops through shared memory
 *   cg_control.c      for / if / while / break / continue / return
 *   cg_flow.c         a lowering's own ifs and loops, entry-block allocas
 *   cg_print.c        print (device vprintf), assert (__assertfail)
 *   cg_dot.c          dot: shared-memory tiles, ldmatrix, mma.sync
 *   cg_cluster.c      @cluster kernels: cluster_sum through distributed shared memory
 *
 * A block value is, in each thread, the array of LLVM values of the elements
 * that thread owns under the value's layout (cg_val.v[0..n-1], in the
 * layout's register order); a scalar is one uniform LLVM value.
 */
#ifndef BLK_CG_INTERNAL_H
#define BLK_CG_INTERNAL_H

#include <llvm-c/Core.h>
#include <llvm-c/TargetMachine.h>

#include "../ir/ir.h"
#include "../passes/passes.h"
#include "../target/target.h"
#include "codegen.h"

typedef struct {
    LLVMValueRef *v;
    int n;
    const lay_layout *lay; /* NULL: scalar */
    bool set;
} cg_val;

/* A load lowered in pieces (cg_memory.c): its address, mask and `other`
 * registers, the access width, and its result, whose registers [r0, r1)
 * cg_load_part fills. */
typedef struct {
    ir_inst *ld;
    int vec;
    cg_val p, m, o, v;
} cg_load_parts;
#define CG_MAX_STAGED 4

struct cg_flow; /* cg_control.c: where yield / continue / break jump */
struct cg_tile; /* cg_dot.c: a dot operand resident in shared memory (ring slot or hoisted) */
typedef struct cg_lineinfo cg_lineinfo; /* cg_lineinfo.c */

/* A tensor_desc ring filled by TMA, or a tile stored by TMA (cg_tma.c):
 * its map is kernel parameter `map`, box = panel elements of the stored
 * dim x box_rows. */
typedef struct {
    ir_inst *ld;         /* the DESC_LOAD or LOAD; the STORE where store */
    bool store;          /* a store through shared memory (stage) */
    bool once;           /* store: after the warp-specialized loop, not in a tile loop */
    LLVMValueRef stage;  /* store: its staging tile (reserved with the rings, or scratch when once) */
    int nbuf;            /* store: 0, a staging tile; else nbuf buffers of one panel, the tile's panels in turn */
    int fast;            /* the value dim stored contiguous: TMA dim 0 */
    int panel, box_rows; /* box, fastest first */
    int span;            /* the box's swizzle span in bytes (128, 64 or 32): panel elements' bytes */
    ir_value *off[2];    /* per value dim: the box's offset (NULL: 0) */
    ir_value *z;         /* a 3-d map's plane coordinate (NULL: 2-d) */
    ir_inst *hoist;      /* a HOIST tile's load before this loop, issued once by its producer (cg_ws.c), or NULL */
    const char *meta;    /* its blk-meta tmaps= entry */
    int boxes;           /* boxes per slot */
    LLVMValueRef map;    /* the grid-constant CUtensorMap parameter */
} cg_tma;
#define CG_MAX_TMA 8

typedef struct {
    blk_arena *a;
    blk_diag *diag;
    const tgt_target *tgt;
    LLVMContextRef llc;
    LLVMModuleRef mod;
    LLVMBuilderRef b;
    /* the kernel being lowered */
    ir_func *f;
    LLVMValueRef fn;
    const ax_table *ax;
    const lay_table *lt;
    const fuse_table *fuse;   /* values recomputed instead of converted */
    const vec_table *vt;      /* width of every memory access */
    const pl_table *pl;       /* dot operands streamed through rings / hoisted (pipeliner.h) */
    struct cg_tile **tiles;   /* by value id: the resident tile of a RING or HOIST value (cg_dot.c) */
    int smem_reserved;        /* bytes at the start of the scratch held by live rings / tiles */
    bool smem_probe;          /* lowering from an optimistic plan, or with a producer across a
                                 tile loop: scratch past the limit sets smem_retry */
    bool smem_retry;
    bool ws_flat;             /* no producer for a loop nested in a tile loop (lower_kernel's
                                 last attempt: its rings and the epilogue's scratch did not fit) */
    cg_tma tma[CG_MAX_TMA];   /* the variant's TMA rings, in parameter order (cg_tma.c) */
    int num_tma;
    /* warp specialization (cg_ws.c): the loop whose TMA rings a producer
     * warpgroup (warps num_warps .. num_warps + 3) fills; NULL: none */
    ir_inst *ws_loop;
    LLVMBasicBlockRef ws_producer; /* where the entry sends the producer */
    LLVMBasicBlockRef ws_consumer; /* where it sends the consumers (their setmaxnreg.inc goes
                                    * first in it once the kernel's shared memory is known) */
    bool *ws_mark;                 /* by value id: top-level values the producer recomputes */
    LLVMValueRef ws_bars;          /* its full and empty mbarriers (static shared memory) */
    ir_inst *ws_outer;             /* the top-level loop around ws_loop (a persistent tile
                                    * loop), or NULL */
    LLVMValueRef ws_count;         /* with ws_outer: i32 alloca, the consumers' iterations of
                                    * ws_loop in earlier tiles (slots and phases run on) */
    LLVMValueRef ws_tiles;         /* with ws_outer and hoisted tiles: i32 alloca, the tiles the
                                    * consumers finished (the hoisted tiles' phase) */
    /* clusters of 2 along grid axis 0 (cg_ws.c): the producers of a pair
     * multicast each box both programs load; 0: none */
    int cluster;
    bool ws_handoff;               /* the producer meets the consumers on CG_BAR_HANDOFF before its
                                    * first box: the rings' memory was their scratch before the loop
                                    * (always with ws_outer: cg_pipe_begin clears it only for a loop
                                    * of its own) */
    LLVMValueRef cl_rank, cl_size; /* i32 %cluster_ctarank, %cluster_nctarank (1 or 2 at run time) */
    /* a kernel's own @cluster (cg_cluster.c): its cluster_sum ops and each
     * one's receive buffer (reserved shared memory) */
#define CG_MAX_CLUSTER_SUMS 8
    ir_inst *csum_ops[CG_MAX_CLUSTER_SUMS];
    LLVMValueRef csum_buf[CG_MAX_CLUSTER_SUMS];
    int ncsum;
    bool pid_peer;                 /* lowering the peer's slice: program_id(0) is the other program's */
    LLVMValueRef cl_turn;          /* i32: the producer's iteration count; box j of a shared ring is
                                    * issued by rank (cl_turn + j) % 2 */
    int cl_box;                    /* j: the slot's boxes issued so far (cg_pipe.c tma_fill) */
    cg_val *peer_vals;             /* by value id: the producer's slice as the peer computes it */
    /* wgmma groups that run on while later code is lowered (cg_dot.c): a
     * value's registers are read only after a wait_group that covers it */
    int wg_commits;           /* commit_groups lowered so far, in program order */
    /* group: its commit's index; base: an f8 dot's accumulator operand,
     * added to the group's fresh sum after the wait (NULL: none) */
    struct { ir_value *v, *base; int group; } wg_pending[8];
    int num_wg_pending;
    struct cg_mma_pf *mma_pf; /* the loop whose dot's first fragments run ahead (cg_dot.h) */
    /* loads a dot performs itself, chunk by chunk, while it stages them
     * (cg_dot_stages_load): prepared where the load is, not yet issued */
    cg_load_parts staged[CG_MAX_STAGED];
    int num_staged;
    struct cg_remat *remat;   /* cg_get: values already recomputed in a layout */
    int num_remat, cap_remat;
    int num_warps;
    cg_val *vals; /* by value id */
    int num_values;
    LLVMValueRef tid, lane, warp; /* i32, computed in the entry block */
    struct cg_flow *flow;
    int smem_bytes;           /* dynamic shared memory this kernel needs */
    int wg_mma_regs;          /* the most registers one wgmma instruction names (cg_wgmma.c):
                               * ptxas must fit each under the entry's cap (cg_ws.c) */
    int smem_static;          /* bytes of static shared buffers (cg_reduce.c) */
    bool failed;
    int64_t work;             /* per-thread values lowered so far (size budget) */
    /* types */
    LLVMTypeRef i1, i8, i16, i32, i64, f16, bf16, f32, f64, ptr1, ptr3, vd;
    cg_lineinfo *lineinfo;    /* -lineinfo: debug locations (NULL: none) */
    unsigned remarks;         /* CG_REMARKS / CG_REMARKS_MISSED (codegen.h) */
    const char *entry;        /* the PTX entry being lowered (remarks) */
} cg_ctx;

/* cg_lineinfo.c: .file/.loc in the PTX (blkc -lineinfo). begin once per
 * module, function per entry (before its first instruction), at per Block
 * IR instruction, finish before the module is verified. */
void cg_lineinfo_begin(cg_ctx *C);
void cg_lineinfo_function(cg_ctx *C, LLVMValueRef fn, const ir_func *f, const char *entry);
void cg_lineinfo_at(cg_ctx *C, blk_loc loc);
void cg_lineinfo_finish(cg_ctx *C);

/* cg_module.c */
void cg_error(cg_ctx *C, blk_loc loc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
LLVMTypeRef cg_type(cg_ctx *C, blk_dtype t);     /* register type (bool: i1, f8: i8) */
LLVMTypeRef cg_mem_type(cg_ctx *C, blk_dtype t); /* storage type (bool: i8) */
LLVMValueRef cg_call_intrinsic(cg_ctx *C, const char *name, LLVMTypeRef *overload, int noverload,
                               LLVMValueRef *args, int nargs);
/* Call an external function by name (declared on first use). */
LLVMValueRef cg_call_extern(cg_ctx *C, const char *name, LLVMTypeRef ret, LLVMValueRef *args, int nargs);
LLVMValueRef cg_inline_asm(cg_ctx *C, LLVMTypeRef ret, const char *text, const char *constraints,
                           LLVMValueRef *args, int nargs, bool side_effects);
LLVMValueRef cg_const_i32(cg_ctx *C, int64_t v);
void cg_barrier(cg_ctx *C);
/* Scratch shared memory of `bytes` (addrspace(3) pointer to its start). */
LLVMValueRef cg_smem(cg_ctx *C, blk_loc loc, int64_t bytes);
/* cg_smem at an offset rounded up to `align` (a power of two) */
LLVMValueRef cg_smem_aligned(cg_ctx *C, blk_loc loc, int64_t bytes, int align);
void cg_region(cg_ctx *C, ir_region *r);
void cg_region_inst(cg_ctx *C, ir_inst *in); /* lower one instruction */

/* cg_flow.c: the branches and loops one op's lowering builds. Blocks are
 * appended in the order given at each (the PTX's block order follows). */
LLVMBasicBlockRef cg_block(cg_ctx *C, const char *name); /* appended to C->fn */
void cg_phi_add(LLVMValueRef phi, LLVMValueRef v, LLVMBasicBlockRef from);
/* Appends *then, then *other, and branches to *then when cond holds, else
 * to *other; the builder stays where it was (after the branch). */
void cg_branch(cg_ctx *C, LLVMValueRef cond, const char *then_name, LLVMBasicBlockRef *then, const char *else_name,
               LLVMBasicBlockRef *other);
typedef struct {
    LLVMBasicBlockRef from, join; /* where the if began; where both paths meet */
} cg_if;
/* if (cond) {  — the builder moves into the new block `name` (appended
 * before `join_name`); cg_if_not_begin: if (!cond) { */
cg_if cg_if_begin(cg_ctx *C, LLVMValueRef cond, const char *name, const char *join_name);
cg_if cg_if_not_begin(cg_ctx *C, LLVMValueRef cond, const char *name, const char *join_name);
/* }  — on at the join; returns the block the body ended in (for phis with
 * I->from) */
LLVMBasicBlockRef cg_if_end(cg_ctx *C, const cg_if *I);
typedef struct {
    LLVMBasicBlockRef pre, head, body, exit; /* pre: the block before the loop */
    LLVMValueRef iv;                         /* a phi in head: init from pre */
} cg_loop;
/* for (iv = init; ...; iv = next): the builder moves into the header `name`
 * after iv's phi. Blocks appended: the header, the body `body_name` if given
 * (NULL: cg_loop_test appends it later, or the header is the body), the exit
 * `exit_name`. cg_loop_phi adds another carried value to the header (its
 * value from the latch: cg_phi_add). A loop tested at its top: cg_loop_test
 * into the body, then cg_loop_end; at its bottom (the header is the body):
 * cg_loop_end_while. Both end at the exit and return the latch. */
cg_loop cg_loop_begin(cg_ctx *C, LLVMTypeRef ivt, LLVMValueRef init, const char *name, const char *body_name,
                      const char *exit_name);
LLVMValueRef cg_loop_phi(cg_ctx *C, const cg_loop *L, LLVMTypeRef t, LLVMValueRef init);
void cg_loop_test(cg_ctx *C, cg_loop *L, LLVMValueRef go, const char *body_name);
LLVMBasicBlockRef cg_loop_end(cg_ctx *C, const cg_loop *L, LLVMValueRef next);
LLVMBasicBlockRef cg_loop_end_while(cg_ctx *C, const cg_loop *L, LLVMValueRef next, LLVMValueRef go);
/* A stack slot made in the entry block (a fixed local-memory slot). */
LLVMValueRef cg_entry_alloca(cg_ctx *C, LLVMTypeRef t, const char *name);

/* cg_elementwise.c: x broadcast to type `to` in registers, both in layout l
 * (each register takes x's at its coordinates, 0 along x's size-1 dims) */
cg_val cg_broadcast_regs(cg_ctx *C, ir_value *x, const ir_type *to, const lay_layout *l);

/* values */
cg_val cg_new_val(cg_ctx *C, int n, const lay_layout *lay);
void cg_set(cg_ctx *C, ir_value *v, cg_val x);
/* v's registers in layout `want` (converted through shared memory when its
 * own layout differs); scalars ignore `want`. */
cg_val cg_get(cg_ctx *C, ir_value *v, const lay_layout *want);
const lay_layout *cg_lay(cg_ctx *C, ir_value *v);

/* cg_layout.c */
typedef struct {
    lay_flat f;
    int rank;
    int32_t shape[IR_MAX_RANK];
    int n[IR_MAX_RANK];     /* registers per value dim */
    int nregs;
    LLVMValueRef base[IR_MAX_RANK]; /* per value dim: this thread's first coordinate (i32) */
    LLVMValueRef tc[IR_MAX_RANK + 1]; /* per root dim: thread coordinate */
} cg_lay_info;
/* registers only (no LLVM values: base/tc unset) */
void cg_lay_shape(const lay_layout *l, int rank, const int32_t *shape, cg_lay_info *li);
void cg_lay_info_get(cg_ctx *C, const lay_layout *l, int rank, const int32_t *shape, cg_lay_info *li);
/* register r -> per-dim register indices k, and the constant part of its
 * coordinates (coord[d] = base[d] + off[d]) */
void cg_reg_index(const cg_lay_info *li, int r, int *k);
int cg_reg_of(const cg_lay_info *li, const int *k);
void cg_reg_offsets(const cg_lay_info *li, int r, int64_t *off);
LLVMValueRef cg_reg_coord(cg_ctx *C, const cg_lay_info *li, int r, int d);
/* i1: this thread is the canonical owner of register r (not a replica). */
LLVMValueRef cg_reg_canonical(cg_ctx *C, const cg_lay_info *li, int r);
/* Row-major linear index of register r's element (i32). */
LLVMValueRef cg_reg_linear(cg_ctx *C, const cg_lay_info *li, int r);
/* The first register of this thread holding the same value as register r
 * of a value with the given axisinfo constancy per dim (r if none). */
int cg_reg_rep(const cg_lay_info *li, const int64_t *constancy, int r);

/* cg_warp.c: shfl.sync of any register type: .bfly by lane mask `mask`
 * (i32); .up (up) or .down by a constant `delta` lanes */
LLVMValueRef cg_shfl_bfly(cg_ctx *C, LLVMValueRef v, LLVMValueRef mask);
LLVMValueRef cg_shfl_dir(cg_ctx *C, LLVMValueRef v, int delta, bool up);

/* per-family lowering; each returns false when it did not handle the op */
bool cg_elementwise(cg_ctx *C, ir_inst *in);
bool cg_memory(cg_ctx *C, ir_inst *in);
bool cg_reduce(cg_ctx *C, ir_inst *in);
bool cg_sort(cg_ctx *C, ir_inst *in);   /* cg_sort.c: SORT, TOPK */
bool cg_convert_op(cg_ctx *C, ir_inst *in);
bool cg_control(cg_ctx *C, ir_inst *in);
bool cg_print(cg_ctx *C, ir_inst *in); /* cg_print.c: PRINT through vprintf, ASSERT through __assertfail */
bool cg_dot(cg_ctx *C, ir_inst *in);   /* cg_dot.c: DOT on the tensor cores */
/* cg_cluster.c: at entry, a @cluster kernel's barriers (then the cluster
 * meets); CLUSTER_SUM */
void cg_cluster_entry(cg_ctx *C);
bool cg_cluster_sum(cg_ctx *C, ir_inst *in);
/* cg_memory.c: a load in pieces: prepare (address, mask, other; the result
 * allocated) where the load is, then its registers [r0, r1) (multiples of
 * parts->vec) wherever they are wanted. */
void cg_load_prepare(cg_ctx *C, ir_inst *in, cg_load_parts *parts);
void cg_load_part(cg_ctx *C, cg_load_parts *parts, int r0, int r1);
/* vec elements of type t at p (any address space), aligned to their size,
 * unpredicated and without cache hints: as the plain global load */
void cg_load_vec(cg_ctx *C, blk_dtype t, int vec, LLVMValueRef p, LLVMValueRef *out);
/* cg_stage.c: whether the dot reading load `ld` issues it itself, in chunks
 * between its staging barriers, rather than the load where it is */
bool cg_dot_stages_load(cg_ctx *C, ir_inst *ld);
/* whether v is such a load's result, not issued yet (its trans waits too) */
bool cg_dot_staged(cg_ctx *C, ir_value *v);
/* cg_dot.c: the pipeliner's plan for one for loop (pipeliner.h). begin: in
 * the preheader (lb, ub, step: i64), hoisted tiles and the first S-1
 * iterations' copies; top: at the start of the body, after the induction
 * variable is bound (iv: i64); end: in the exit block. */
void cg_pipe_begin(cg_ctx *C, ir_inst *loop, LLVMValueRef lb, LLVMValueRef ub, LLVMValueRef step);
/* iv: the i64 induction variable; count, trips: the i32 iteration number
 * and trip count of a loop lowered in 32 bits (cg_control.c), else NULL */
void cg_pipe_top(cg_ctx *C, ir_inst *loop, LLVMValueRef iv, LLVMValueRef count, LLVMValueRef trips);
void cg_pipe_end(cg_ctx *C, ir_inst *loop);
/* after the loop's results are bound: complete wgmma groups left in flight */
void cg_pipe_results(cg_ctx *C, ir_inst *loop);
/* Before each instruction: completes the wgmma groups in flight whose
 * results it reads; true for a load (or its trans) whose data a ring
 * delivers: nothing to lower. */
bool cg_pipe_inst(cg_ctx *C, ir_inst *in);
/* v, a load whose ring is read into registers (pipeliner.h), read again
 * from this iteration's slot in layout `want` instead of converted: true
 * and *out when it is one */
bool cg_pipe_ring_read(cg_ctx *C, ir_value *v, const lay_layout *want, cg_val *out);
/* cg_dot.c, for cg_tma.c: the dot of loop's body reading v (directly or
 * through trans) and which operand it is; whether a dot takes wgmma. */
/* whether dot operand o is v or trans(v) */
bool cg_operand_reads(const ir_value *o, const ir_value *v);
ir_inst *cg_dot_reading(ir_inst *loop, ir_value *v, int *role);
bool cg_dot_takes_wgmma(cg_ctx *C, ir_inst *dot);
int cg_dot_a_perm(cg_ctx *C, ir_inst *dot); /* a's rows permuted for num_warps warps (0: not) */
/* cg_tma.c: plan the variant's TMA rings (after the analyses, before the
 * function exists: they add parameters), bind the parameters (the first
 * at index `first`), write the blk-meta tmaps= field, find a load's map,
 * and the mbarrier / TMA instructions (pred: i32, nonzero = execute). */
void cg_tma_plan(cg_ctx *C);
void cg_tma_bind(cg_ctx *C, LLVMValueRef fn, int first);
void cg_tma_meta(cg_ctx *C, blk_strbuf *out);
const cg_tma *cg_tma_of(cg_ctx *C, const ir_inst *ld);
/* TMA stores: planned after cg_ws_plan (the tile store of a persistent
 * kernel's tile loop, or the one after a warp-specialized loop);
 * cg_tma_store lowers one (false: not planned), cg_tma_store_drain makes
 * thread 0 wait until every bulk store issued has completed. */
void cg_tma_plan_stores(cg_ctx *C);
void cg_tma_store_reserve(cg_ctx *C, blk_loc loc); /* with the rings, before the tile loop */
bool cg_tma_store(cg_ctx *C, ir_inst *st);
void cg_tma_prefetch(cg_ctx *C); /* at entry: the tensor maps' descriptors */
void cg_tma_store_drain(cg_ctx *C);
void cg_mbar_init(cg_ctx *C, LLVMValueRef bar32, int count, LLVMValueRef pred);
void cg_mbar_init_fence(cg_ctx *C);
void cg_mbar_expect(cg_ctx *C, LLVMValueRef bar32, int bytes, LLVMValueRef pred);
void cg_mbar_wait(cg_ctx *C, LLVMValueRef bar32, LLVMValueRef parity);
void cg_mbar_inval(cg_ctx *C, LLVMValueRef bar32, LLVMValueRef pred);
void cg_tma_load(cg_ctx *C, const cg_tma *m, LLVMValueRef dst32, int ddst, LLVMValueRef x, int dx, LLVMValueRef y, int dy,
                 LLVMValueRef z, LLVMValueRef bar32, LLVMValueRef pred, bool multicast);
/* clusters (cg_tma.c, used by cg_ws.c / cg_pipe.c) */
void cg_mbar_arrive_remote(cg_ctx *C, LLVMValueRef bar32, LLVMValueRef rank, LLVMValueRef pred);
void cg_mbar_init_n(cg_ctx *C, LLVMValueRef bar32, LLVMValueRef count, LLVMValueRef pred);
void cg_cluster_sync(cg_ctx *C);
LLVMValueRef cg_cluster_sreg(cg_ctx *C, const char *name);
void cg_ws_release(cg_ctx *C, LLVMValueRef bar32, LLVMValueRef pred);
/* cg_ws.c: warp specialization. plan: choose the loop (after
 * cg_tma_plan); entry: the branch to the producer and the consumers'
 * register raise (after the parameters are bound); producer: the
 * producer's code, lowered into its block when the consumers reach the
 * loop (cg_pipe_begin, whose tiles and barriers it uses); threads: the
 * threads a program runs with. */
void cg_ws_plan(cg_ctx *C);
void cg_ws_entry(cg_ctx *C);
void cg_ws_finish(cg_ctx *C, LLVMValueRef fn);
void cg_ws_producer(cg_ctx *C, ir_inst *loop, int stages, LLVMValueRef full, LLVMValueRef empty);
int cg_ws_threads(const cg_ctx *C);
/* whether hoisted tiles come by TMA (the producer issues them once, before
 * its loop, on one barrier: hoist_bar, a 32-bit shared address) */
bool cg_ws_has_hoisted(const cg_ctx *C);
LLVMValueRef cg_ws_hoist_bar(cg_ctx *C);
/* whether store st could go out by TMA through a staging tile, and the
 * shared memory that staging takes beside `ring` bytes of rings (cg_tma.c) */
bool cg_tma_store_may_stage(cg_ctx *C, ir_inst *st);
int64_t cg_tma_store_stage_bytes(cg_ctx *C, ir_inst *st, int64_t ring);
/* in a tile loop, their empty barrier: the consumers release each tile's
 * (count num_warps) before the producer loads the next tile's */
LLVMValueRef cg_ws_hoist_empty(cg_ctx *C);
/* named barriers: 0 is the whole program's; with a producer, the
 * consumers sync on CG_BAR_CONSUMERS and meet the producer's first warp on
 * CG_BAR_HANDOFF once the ring's memory and barriers are ready */
enum { CG_BAR_CONSUMERS = 1, CG_BAR_HANDOFF = 2 };
void cg_named_barrier(cg_ctx *C, int id, int threads, bool aligned);
/* cg_pipe.c, for the producer: arm `full` (the slot's barrier, 32-bit
 * shared address) with the bytes of every ring's slot and issue their
 * boxes for the iteration with induction variable iv64, where on (i32) */
void cg_pipe_produce(cg_ctx *C, ir_inst *loop, LLVMValueRef iv64, LLVMValueRef slot, LLVMValueRef full, LLVMValueRef on);
/* the same for the hoisted tiles that TMA fills (once, on bar32) */
void cg_pipe_produce_hoisted(cg_ctx *C, ir_inst *loop, LLVMValueRef bar32, LLVMValueRef on);
LLVMValueRef cg_mbar_at(cg_ctx *C, LLVMValueRef mbar, LLVMValueRef slot);
LLVMValueRef cg_ws_empties(cg_ctx *C, LLVMValueRef mbar, int S); /* empty[0] after S full ones */
int cg_pipe_stages(cg_ctx *C, ir_inst *loop);                    /* the loop's ring depth */
void cg_mbar_arrive(cg_ctx *C, LLVMValueRef bar32, LLVMValueRef pred);
/* Shared memory that stays allocated (rings, hoisted tiles) until released;
 * cg_smem's scratch starts after it. */
LLVMValueRef cg_smem_reserve(cg_ctx *C, blk_loc loc, int64_t bytes, int align);
/* the scalar semantics of one ELEM op on register values */
LLVMValueRef cg_elem_scalar(cg_ctx *C, ir_inst *in, LLVMValueRef *ops);
LLVMValueRef cg_cast_scalar(cg_ctx *C, blk_loc loc, blk_dtype from, blk_dtype to, LLVMValueRef x);
LLVMValueRef cg_binary_scalar(cg_ctx *C, blk_loc loc, ir_op op, int kind, blk_dtype t, LLVMValueRef x, LLVMValueRef y);
/* layout conversion of a whole value through shared memory */
cg_val cg_convert(cg_ctx *C, blk_loc loc, cg_val x, ir_type t, const lay_layout *to);

#endif

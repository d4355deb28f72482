/* cg_dot.h — what cg_dot.c (the dot lowerings), cg_pipe.c (operands
 * resident in shared memory: rings, hoisted tiles), cg_wg_flight.c (wgmma
 * groups in flight) and their helpers cg_wgmma.c, cg_stage.c and cg_tma.c
 * share: the stored tile of a dot operand, the wgmma plan of a dot, and
 * the functions each file gives the others. Private to those files. */
#ifndef BLK_CG_DOT_H
#define BLK_CG_DOT_H

#include "cg_internal.h"

/* A dot operand's tile in shared memory (cg_dot.c's header comment has the
 * swizzled form; tile_init_wg wgmma's 128-byte panels). */
typedef struct {
    LLVMValueRef base; /* addrspace(3) i8* */
    int rows, cols;    /* stored shape: cols contiguous */
    int e;             /* bytes per element */
    int rb;            /* bytes per row */
    int per_phase, max_phase;
    int colv;          /* the value dim stored along cols */
    bool wg;           /* wgmma's form: panels of sw bytes, swizzled over sw bytes */
    int sw;            /* wg: the swizzle span, 128, 64 or 32 bytes (wg_span) */
    int perm_wm;       /* wgmma A: rows permuted for Wm warps (0: not) */
} sm_tile;

/* Which path a dot takes on a wgmma target (wg_choose) and why not. */
typedef struct {
    bool ok, areg;
    int acv, bcv;   /* stored colv, in a's / b's own dims */
    char why[160];  /* when not ok: the reason (blkc -R) */
} wg_plan;

/* cg_dot.c */
void tile_init(sm_tile *t, LLVMValueRef base, int rows, int cols, int e, int colv);
void tile_init_wg(sm_tile *t, LLVMValueRef base, int rows, int cols, int e, int colv, int perm_wm);
/* wgmma's swizzle span for stored rows of rb bytes: 128 for whole 128-byte
 * panels, else 64 or 32 when the row is exactly that; 0 when none fits */
int wg_span(int rb);
LLVMValueRef tile_elem(cg_ctx *C, const sm_tile *t, LLVMValueRef row, LLVMValueRef col); /* byte offset (i32) */
LLVMValueRef tile_addr32(cg_ctx *C, const sm_tile *t, LLVMValueRef byte_off);          /* shared-window address */
LLVMValueRef tile_ptr(cg_ctx *C, const sm_tile *t, LLVMValueRef byte_off);            /* addrspace(3) pointer */
int stored_bytes(blk_dtype t);
void store_operand(cg_ctx *C, blk_loc loc, sm_tile *t, cg_val x, ir_type ty, bool tf32);
/* store_operand's registers [r0, r1) only */
void store_regs(cg_ctx *C, blk_loc loc, sm_tile *t, cg_val x, ir_type ty, bool tf32, int r0, int r1);
/* the accumulator layout a dot computes in */
const lay_layout *dot_acc_layout(cg_ctx *C, ir_inst *in);
/* whether operand a (registers av) is read from registers (attention's P) */
bool a_in_registers(cg_val av, ir_type t, const lay_layout *L);
/* cg_stage.c: store_operand for dot operand v, or, for a load the dot
 * issues itself (cg_dot_stages_load), its loads and stores chunk by chunk;
 * operand_regs: v's registers as the dot takes them (such a load's: not
 * loaded yet) */
void stage_operand(cg_ctx *C, ir_inst *dot, ir_value *v, sm_tile *t, cg_val x, bool tf32);
cg_val operand_regs(cg_ctx *C, ir_value *v);
/* a located error when a dot would stage more than its limit per thread (F11) */
bool staged_too_big(cg_ctx *C, ir_inst *in, int64_t elems);
bool wg_choose(cg_ctx *C, ir_inst *in, wg_plan *p);
/* the pipeliner entry holding operand v (or the value v transposes), and
 * v's stored colv through it */
const pl_entry *operand_entry(cg_ctx *C, ir_value *v, int *colv);
void fence_async_smem(cg_ctx *C);
/* an asm statement through which vals[0..n) pass unchanged, ordered with
 * the wgmma instructions */
void wg_pass(cg_ctx *C, const char *text, LLVMValueRef *vals, int n);

/* cg_pipe.c */
/* the uses of v in region r and the regions nested in it */
int cg_uses_in(const ir_region *r, const ir_value *v);
/* Dot operand v's resident tile (a ring's slot of this iteration), with
 * colv in v's dims (through trans). */
bool resident_tile(cg_ctx *C, ir_value *v, sm_tile *out);
/* mma.sync fragments carried across iterations (cg_dot.c mma_prefetch):
 * the loop whose one dot reads its first k step from registers loaded at
 * the end of the previous iteration (or before the loop). */
typedef struct cg_mma_pf {
    ir_inst *loop, *dot;
    LLVMValueRef a[16][4], b[64][2]; /* i32 allocas in the entry block */
    /* this iteration's copies for a later one, issued across the dot's k
     * steps (cg_pipe_spread): its induction variable, slot, whether it
     * exists (NULL: none pending), how many are issued */
    LLVMValueRef copy_iv, copy_slot, copy_go;
    int copy_done;
} cg_mma_pf;
/* issue k step s's share of the pending copies (all of them, then the
 * commit, at the last step) */
void cg_pipe_spread(cg_ctx *C, cg_mma_pf *pf, int s, int steps);
/* cg_pipe_mma_next: wait for the next iteration's tiles and point the
 * loop's rings at its slot (restore: the slot to put back, returned) */
LLVMValueRef cg_pipe_mma_next(cg_ctx *C, ir_inst *loop);
void cg_pipe_set_slot(cg_ctx *C, ir_inst *loop, LLVMValueRef slot);
/* cg_dot.c: the prefetch before the loop (tiles at slot 0) */
void mma_prefetch_begin(cg_ctx *C, ir_inst *loop, ir_inst *dot);
/* cg_dot.c: the A fragment of m tile i, k step s from registers (attention's P) */
void a_fragment(cg_ctx *C, cg_val av, ir_type t, int i, int s, LLVMValueRef *out);
/* cg_wgmma.c: the dot on wgmma (wg_choose said yes) */
void lower_wgmma(cg_ctx *C, ir_inst *in, const wg_plan *p, cg_val av, cg_val bv, cg_val *acc, const lay_layout *L);
/* How a wgmma dot waits for its group (wg_wait):
 *   WG_NOW    wait_group 0 after its instructions;
 *   WG_KEEP1  wait_group 1: its accumulator is carried to itself only
 *             (matmul's acc = dot(a, b, acc)), so the group runs into the
 *             next iteration, where the dot's next group queues behind it;
 *   WG_USE    waits just before its first reader in the body (the yield
 *             when it is only carried), leaving the groups committed since
 *             running: with the next block's scores issued first (s_next =
 *             dot(q, k_next), carried), this block's softmax runs under
 *             them (FA3's intra-warpgroup overlap); with q k^T and p v
 *             issued back to back, the softmax runs under p v;
 *   WG_CARRY  only carried, and completed in the next iteration before its
 *             first reader (carry_ok): attention's acc = dot(p, v, acc *
 *             alpha) runs under the next iteration's barrier, copies and
 *             q k^T.
 * All but WG_NOW need the dot's shared operands in this loop's rings
 * or hoisted tiles (nothing staged into scratch under a running group).
 * WG_KEEP1 and WG_CARRY also need rings at least 3 slots deep: the copies
 * then run S-2 tiles ahead, so a slot is refilled two iterations after it
 * was read (prefetch); a WG_USE group completes in its own iteration, so
 * two slots do (the refill of iteration i's top goes to i-1's slot). An f8
 * dot (its sum added to the accumulator after the wait) is at most WG_USE:
 * a second f8 dot reading it as its accumulator issues before that wait
 * (cg_wg_flight.c f8_defers). A carried
 * group completes within the next iteration: its value must be read there,
 * and the body's dots are all at its top level, so that the groups
 * committed between a dot and a reader are counted in program order. */
enum { WG_NOW, WG_KEEP1, WG_CARRY, WG_USE };
/* cg_wg_flight.c */
int wg_wait(cg_ctx *C, ir_inst *loop, ir_inst *dot);
/* whether a dot of the loop keeps its group in flight across iterations
 * (WG_KEEP1, WG_CARRY): the rings then run a tile less ahead */
bool cg_wg_in_flight(cg_ctx *C, ir_inst *loop);
/* before instruction `in`: the wait_group completing the groups it reads */
void cg_wg_drain_for(cg_ctx *C, ir_inst *in);
/* the preheader's opaque initial accumulators, and the top of the body's
 * pending carried groups (cg_pipe_begin, cg_pipe_top) */
void cg_wg_opaque_inits(cg_ctx *C, ir_inst *loop);
void cg_wg_carry_pending(cg_ctx *C, ir_inst *loop);
/* cg_pipe.c: whether the loop keeps rings or hoisted tiles */
bool cg_pipe_has(cg_ctx *C, ir_inst *loop);

#endif

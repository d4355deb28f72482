/* cg_ws.c — warp specialization on Hopper: a producer warpgroup fills a
 * loop's TMA rings while the program's own warps (the consumers) only
 * compute.
 *
 * A loop qualifies when every ring of it is filled by TMA (cg_tma.c), it
 * sits at the kernel's top level, nothing in it breaks or returns, and
 * what the producer must know — the bounds, and the boxes' coordinates as
 * functions of the induction variable — comes from kernel arguments and
 * scalar arithmetic at the kernel's top level (the "slice"). The program
 * then runs num_warps + 4 warps:
 *
 *   entry:     warps >= num_warps branch to the producer (one if/else, as
 *              setmaxnreg needs); the consumers raise their register limit
 *              (setmaxnreg.inc, to their share of one program's registers:
 *              one or two programs per multiprocessor, programs_per_sm)
 *              and run the kernel as written, their bar.syncs on named
 *              barrier 1 counting num_warps warps.
 *   entry:     thread 0 initialises the loop's full and empty barriers
 *              (a static buffer of their own), then bar.sync 0 for all.
 *   producer:  setmaxnreg.dec; warps but the first exit; that warp meets
 *              the consumers on named barrier 2 once they reach the loop
 *              where the rings' memory was their scratch until then (any
 *              dynamic shared memory touched before the loop; else it
 *              starts at once: C->ws_handoff), recomputes the slice and,
 *              per iteration i (slot s = i % S), waits on empty[s] for the
 *              consumers' release of iteration
 *              i - S (parity (i / S) & 1 ^ 1: a fresh barrier's preceding
 *              phase counts as complete, so the first S pass at once); its
 *              lane 0 arms full[s] with the slot's bytes and issues the
 *              boxes. It exits after the last: every box it issued lands
 *              before the consumers' last wait. In a persistent kernel's
 *              tile loop (C->ws_outer) it runs that loop too, and loads
 *              each tile's hoisted tiles (attention's q) once the
 *              consumers have released the previous tile's.
 *   consumers: per iteration, lane 0 of each warp releases iteration
 *              i - L (L = 1, or 2 when a wgmma group stays in flight into
 *              the next iteration: cg_wg_flight.c's wg_wait) on its empty
 *              barrier (count num_warps), then every thread waits on
 *              full[s]. No bar.sync per iteration remains.
 *
 * Registers: 64K per multiprocessor at one program each (minctasm 1).
 * The producer drops to 24 (its loop holds a few coordinates: ptxas fits
 * it there without spilling; FA3 does the same); the
 * consumers take what is left, in multiples of 8, up to 256. BLK_DISABLE_WS=1
 * turns it off (A/B measurements). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cg_internal.h"

enum { WS_WARPS = 4, WS_PRODUCER_REGS = 24 };

int cg_ws_threads(const cg_ctx *C) { return 32 * (C->num_warps + (C->ws_loop ? WS_WARPS : 0)); }

/* Programs per multiprocessor the kernel is built for. With one consumer
 * warpgroup and shared memory that fits twice (rings, scratch, barriers, and
 * the 1 KB the system keeps per program), two: one program's prologue (its
 * barriers, the first boxes' latency) and epilogue then run under the
 * other's main loop, where with one per multiprocessor nothing overlaps
 * them (attention over short sequences, many small matmul tiles). Each
 * program gets half the register file; its consumers 232 registers instead
 * of 256. Two consumer warpgroups would get 108: one program. Nor where a
 * wgmma instruction names many registers: ptxas fits each wgmma under the
 * entry's cap, 128 registers with two programs, even after setmaxnreg.inc
 * ("Insufficient registers (128) to compile instruction", fatal, for an
 * m64n256 f32 accumulator of 128 registers), so at most 96 (an m64n128
 * f32 accumulator and its operands: 68). Other code after the inc uses
 * the consumers' 232 (an asm passing 128 accumulator registers through
 * assembles).
 * Decided after lowering, when both are known (cg_ws_finish). */
static int programs_per_sm(const cg_ctx *C) {
    if (C->num_warps != 4 || C->cluster || C->wg_mma_regs > 96 || getenv("BLK_WS_ONE_PROGRAM")) return 1;
    /* static buffers (the barriers) come first, padded to the dynamic
     * buffer's 1024-byte alignment (ptxas reports 1 KB for 40 bytes) */
    long bytes = (long)C->smem_bytes + (C->smem_static + 1023) / 1024 * 1024 + C->tgt->smem_block_reserved;
    return 2 * bytes <= C->tgt->smem_per_sm ? 2 : 1;
}

/* the consumers' registers per thread after setmaxnreg.inc: their share of
 * the program's registers once the producer has given back all but 24 */
static int consumer_regs(const cg_ctx *C, int programs) {
    int r = (C->tgt->regs_per_sm / programs - 32 * WS_WARPS * WS_PRODUCER_REGS) / (32 * C->num_warps) / 8 * 8;
    return r > 256 ? 256 : r;
}

static bool has_exit(const ir_region *r) {
    for (const ir_inst *i = r->first; i; i = i->next) {
        if (i->op == IR_BREAK || i->op == IR_RETURN) return true;
        for (int k = 0; k < i->num_regions; k++)
            if (has_exit(i->regions[k])) return true;
    }
    return false;
}

/* Can the producer compute v: a kernel argument, the induction variable,
 * or pure scalar arithmetic at the kernel's top level or in the body (the
 * body's part eval_at recomputes per iteration); the top-level
 * definitions are marked for the producer to lower. */
static bool slice_ok(cg_ctx *C, ir_inst *loop, ir_inst *outer, ir_value *v, bool *mark) {
    ir_region *top = C->f->body, *body = loop->regions[0], *obody = outer ? outer->regions[0] : NULL;
    for (int k = 0; k < top->args.len; k++)
        if (top->args.data[k] == v) return true;
    if (v == body->args.data[0] || (obody && v == obody->args.data[0])) return true;
    ir_inst *d = v->def;
    if (!d || v->id < 0 || v->id >= C->num_values) return false;
    if (mark[v->id]) return true;
    if (d->parent != top && d->parent != body && (!obody || d->parent != obody)) return false;
    if (v->type.rank || d->num_regions || !(ir_op_table[d->op].flags & OPF_PURE)) return false;
    if (d->parent != body) mark[v->id] = true;
    for (int k = 0; k < d->num_operands; k++)
        if (!slice_ok(C, loop, outer, d->operands[k], mark)) return false;
    return true;
}

/* In a tile loop, every tile hoisted before loop (attention's q) must come
 * by TMA with its box in the slice: the producer loads each tile's own,
 * once the consumers have released the previous one (cg_ws_producer). A
 * tile stored from registers would need the consumers to overwrite memory
 * the producer's TMA shares: not done. */
static bool hoists_by_tma(cg_ctx *C, ir_inst *loop, ir_inst *outer, bool *mark) {
    for (int i = 0; i < C->pl->num_values && i < C->num_values; i++) {
        if (C->pl->e[i].kind != PL_HOIST || C->pl->e[i].loop != loop) continue;
        const cg_tma *m = NULL;
        for (int j = 0; j < C->num_tma && !m; j++)
            if (C->tma[j].hoist == loop && C->tma[j].ld->results[0]->id == i) m = &C->tma[j];
        if (!m) return false;
        ir_value *need[3] = {m->off[0], m->off[1], m->z};
        for (int k = 0; k < 3; k++)
            if (need[k] && !slice_ok(C, loop, outer, need[k], mark)) return false;
    }
    return true;
}

/* why loop cannot take a producer ("" when it has no TMA ring), or NULL;
 * *outer: the top-level loop around it (a persistent kernel's tile loop)
 * or NULL */
static const char *consider(cg_ctx *C, ir_inst *loop, bool *mark, ir_inst **outer) {
    int tma = 0, other = 0;
    for (ir_inst *i = loop->regions[0]->first; i; i = i->next) {
        if (i->op != IR_LOAD && i->op != IR_DESC_LOAD) continue;
        const pl_entry *e = pl_get(C->pl, i->results[0]);
        if (!e || e->kind != PL_RING || e->loop != loop) continue;
        if (cg_tma_of(C, i)) tma++;
        else other++;
    }
    if (!tma) return "";
    if (other) return "a ring of it is filled by cp.async (the producer issues TMA only)";
    if (C->num_warps % 4) return "num_warps is not a multiple of 4";
    ir_inst *o = loop->parent->parent, *top = loop;
    *outer = NULL;
    if (loop->parent != C->f->body) {
        /* a loop in a top-level loop's body: the producer runs the outer
         * loop too, and the rings stay the producer's across it (their
         * memory is reserved for the whole outer loop) */
        if (!o || o->op != IR_FOR || o->parent != C->f->body) return "it is nested in other control flow";
        if (C->ws_flat)
            return "it is nested in a loop, and its rings and the tile's epilogue would not fit in shared memory "
                   "together (fewer stages would)";
        if (has_exit(o->regions[0])) return "its enclosing loop may break or return";
        /* the rings (and the tiles hoisted before the loop: attention's
         * q) stay reserved through the tile's epilogue, whose tile stores
         * may stage their tile in shared memory (a TMA store, or a
         * conversion to the store's layout): all must fit. (Smaller
         * scratch, a row's statistics, is left to the lowering: lower_kernel
         * retries without the producer where it does not fit.) */
        int64_t ring = 0, tile = 0;
        for (int i = 0; i < C->pl->num_values && i < C->num_values; i++)
            if (C->pl->e[i].kind == PL_RING && C->pl->e[i].loop == loop)
                ring += (int64_t)C->pl->e[i].stages * C->pl->e[i].bytes;
            else if (C->pl->e[i].kind == PL_HOIST && C->pl->e[i].loop == loop)
                ring += C->pl->e[i].bytes;
        for (ir_inst *i = loop->next; i; i = i->next) {
            ir_value *val = i->op == IR_STORE && i->num_operands > 1 ? i->operands[1] : NULL;
            if (!val || val->type.rank != 2) continue;
            int eb = val->type.dtype == DT_BOOL ? 1 : dtype_bytes((blk_dtype)val->type.dtype);
            const lay_layout *held = cg_lay(C, val), *written = cg_lay(C, i->operands[0]);
            if (cg_tma_store_may_stage(C, i)) /* the whole tile, or a panel or two at a time */
                tile += cg_tma_store_stage_bytes(C, i, ring);
            else if (!lay_eq(held, written))
                tile += (int64_t)eb * ir_numel(val->type);
        }
        if (ring + tile > C->tgt->smem_optin_max)
            return "it is nested in a loop, and its rings and the tile's epilogue would not fit in shared memory "
                   "together (fewer stages would)";
        *outer = top = o;
    }
    if (has_exit(loop->regions[0])) return "it may break or return";
    for (ir_inst *i = C->f->body->first; i != top; i = i->next)
        if (i->num_regions && has_exit(i->regions[0])) return "the kernel may return before it";
    memset(mark, 0, sizeof(bool) * (size_t)(C->num_values + 1));
    for (int k = 0; k < 3; k++)
        if (!slice_ok(C, loop, *outer, loop->operands[k], mark) ||
            (*outer && !slice_ok(C, loop, *outer, (*outer)->operands[k], mark)))
            return "its bounds are not scalar arithmetic on arguments";
    for (int j = 0; j < C->num_tma; j++) {
        if (C->tma[j].ld->parent != loop->regions[0]) continue;
        ir_value *need[3] = {C->tma[j].off[0], C->tma[j].off[1], C->tma[j].z};
        for (int k = 0; k < 3; k++)
            if (need[k] && !slice_ok(C, loop, *outer, need[k], mark))
                return "a box coordinate is not scalar arithmetic on arguments and the induction variable";
    }
    if (*outer && !hoists_by_tma(C, loop, *outer, mark))
        return "it is nested in a loop and keeps an operand resident across its iterations that the producer "
               "cannot load by TMA";
    return NULL;
}

/* Every for loop, nested ones included (for their remarks): the first
 * that qualifies gets the producer. */
static void plan_region(cg_ctx *C, ir_region *r) {
    for (ir_inst *in = r->first; in && !C->failed; in = in->next) {
        for (int k = 0; k < in->num_regions; k++) plan_region(C, in->regions[k]);
        if (in->op != IR_FOR) continue;
        bool *mark = ARENA_ARRAY(C->a, bool, C->num_values + 1); /* the slice of this loop */
        if (!mark) { C->failed = true; return; }
        ir_inst *outer = NULL;
        const char *why = consider(C, in, mark, &outer);
        if (!why && C->ws_loop) why = "the kernel's producer serves an earlier loop";
        if (why && *why && C->remarks)
            diag_remark(C->diag, in->loc, "loop in %s: no producer warpgroup: %s", C->entry ? C->entry : C->f->name, why);
        if (why) continue;
        C->ws_loop = in;
        C->ws_outer = outer;
        C->ws_mark = mark; /* its remark: cg_ws_finish */
    }
}

/* A hoisted tile's map (cg_tma.c) stays where the producer can issue its
 * box: the tile of the warp-specialized loop, with the box's coordinates in
 * the slice. The others are dropped before the parameters are bound, and
 * those tiles are stored from registers as before. */
static void keep_hoisted(cg_ctx *C) {
    int n = 0;
    for (int j = 0; j < C->num_tma; j++) {
        cg_tma *m = &C->tma[j];
        const char *why = NULL;
        if (m->hoist && m->hoist != C->ws_loop) why = "its loop has no producer warpgroup";
        ir_value *need[3] = {m->off[0], m->off[1], m->z};
        for (int k = 0; m->hoist && !why && k < 3; k++)
            if (need[k] && !slice_ok(C, m->hoist, C->ws_outer, need[k], C->ws_mark))
                why = "a box coordinate is not scalar arithmetic on arguments";
        if (m->hoist && C->remarks && (why || (C->remarks & CG_REMARKS))) {
            const char *who = C->entry ? C->entry : C->f->name;
            if (why) diag_remark(C->diag, m->ld->loc, "load in %s: tile stored from registers, not TMA: %s", who, why);
            else
                diag_remark(C->diag, m->ld->loc,
                            "load in %s: tile filled by TMA before the loop, issued by the producer warpgroup "
                            "(tensor map %s)", who, m->meta);
        }
        if (!why) C->tma[n++] = *m;
    }
    C->num_tma = n;
}

bool cg_ws_has_hoisted(const cg_ctx *C) {
    for (int j = 0; j < C->num_tma; j++)
        if (C->tma[j].hoist) return true;
    return false;
}

/* May v depend on program_id(0)? memo by value id: 0 not yet known, 1 no,
 * 2 yes (a shared subexpression is walked once). Past 256 levels: yes,
 * which only refuses the cluster. */
static bool reads_pid0(cg_ctx *C, ir_value *v, unsigned char *memo, int depth) {
    ir_inst *d = v->def;
    if (!d) return false;
    bool known = v->id >= 0 && v->id < C->num_values;
    if (known && memo[v->id]) return memo[v->id] == 2;
    bool r = depth > 256 || (d->op == IR_PROGRAM_ID && d->axis == 0);
    for (int k = 0; !r && k < d->num_operands; k++) r = reads_pid0(C, d->operands[k], memo, depth + 1);
    if (known) memo[v->id] = r ? 2 : 1;
    return r;
}

/* Clusters of two programs along axis 0 (a pair: 2i, 2i + 1), whose
 * producers take turns with the boxes both load, each multicast to both (the
 * pair shares L2 traffic: matmul's grouped order puts two row tiles of one
 * column panel side by side, so b's tile is read once for both). Whether
 * a box is shared is decided at run time, per box: each producer also
 * computes its peer's coordinates (the slice with program_id(0) ^ 1) and
 * compares; the test is symmetric, so both agree. The pair must run the
 * loop the same number of times: its bounds may not read program_id(0).
 * NULL when taken, else why not. */
static const char *consider_cluster(cg_ctx *C) {
    /* BLK_CLUSTER=1 turns clusters on: slower than none but at 128x64
     * tiles, as CUTLASS's own on this GPU (docs/codegen.md, "Clusters") */
    const char *on = getenv("BLK_CLUSTER");
    if (!tgt_has(C->tgt, TGT_CAP_CLUSTER) || !on || !*on || !strcmp(on, "0")) return "";
    if (C->f->cluster > 1) return "the kernel has clusters of its own (@cluster)";
    if (C->ws_outer) return "its loop is nested in a tile loop (the pair's trip counts may differ)";
    if (cg_ws_has_hoisted(C)) return "a tile is loaded by TMA before the loop";
    unsigned char *memo = ARENA_ARRAY(C->a, unsigned char, C->num_values + 1);
    if (!memo) { C->failed = true; return ""; }
    memset(memo, 0, (size_t)C->num_values + 1);
    for (int k = 0; k < 3; k++)
        if (reads_pid0(C, C->ws_loop->operands[k], memo, 0)) return "its bounds depend on program_id(0)";
    return NULL;
}

void cg_ws_plan(cg_ctx *C) {
    C->ws_loop = NULL;
    C->ws_producer = NULL;
    C->ws_consumer = NULL;
    C->ws_bars = NULL;
    C->ws_outer = NULL;
    C->ws_handoff = true;
    C->ws_count = NULL;
    C->ws_tiles = NULL;
    C->cluster = 0;
    C->cl_rank = C->cl_size = NULL;
    C->pid_peer = false;
    C->peer_vals = NULL;
    C->cl_turn = NULL;
    const char *off = getenv("BLK_DISABLE_WS");
    if (C->num_tma && tgt_has(C->tgt, TGT_CAP_WGMMA) && !(off && *off && strcmp(off, "0"))) plan_region(C, C->f->body);
    keep_hoisted(C);
    if (!C->ws_loop || C->failed) return;
    const char *why = consider_cluster(C);
    if (!why) C->cluster = 2;
    const char *who = C->entry ? C->entry : C->f->name;
    if (why && *why && C->remarks)
        diag_remark(C->diag, C->ws_loop->loc, "loop in %s: no cluster: %s", who, why);
    else if (!why && (C->remarks & CG_REMARKS))
        diag_remark(C->diag, C->ws_loop->loc,
                    "loop in %s: clusters of 2 programs along axis 0: the producers take turns with the boxes both "
                    "load, each multicast to both", who);
}

static void setmaxnreg(cg_ctx *C, const char *dir, int regs) {
    char text[64];
    snprintf(text, sizeof text, "setmaxnreg.%s.sync.aligned.u32 %d;", dir, regs);
    cg_inline_asm(C, C->vd, text, "~{memory}", NULL, 0, true);
}

/* The loop's 2S mbarriers, full then empty (then, with hoisted tiles by
 * TMA, their one barrier: cg_ws_hoist_bar), in a static buffer of their
 * own: initialised here, before the roles part (one bar.sync 0 that every
 * thread executes orders the inits before either role's first use), and
 * never reused, so neither invalidated nor handed over with the rings'
 * memory. */
static void init_barriers(cg_ctx *C) {
    LLVMBuilderRef b = C->b;
    int S = cg_pipe_stages(C, C->ws_loop);
    int bytes = 16 * S + (cg_ws_has_hoisted(C) ? (C->ws_outer ? 16 : 8) : 0);
    LLVMTypeRef at = LLVMArrayType2(C->i8, (uint64_t)bytes);
    char name[160];
    snprintf(name, sizeof name, "__blk_ws_bars_%s", C->entry ? C->entry : C->f->name);
    LLVMValueRef g = LLVMAddGlobalInAddressSpace(C->mod, at, name, 3);
    LLVMSetLinkage(g, LLVMInternalLinkage);
    LLVMSetInitializer(g, LLVMGetUndef(at));
    LLVMSetAlignment(g, 8);
    C->smem_static += bytes;
    C->ws_bars = g;
    LLVMValueRef t0 = LLVMBuildZExt(b, LLVMBuildICmp(b, LLVMIntEQ, C->tid, cg_const_i32(C, 0), ""), C->i32, "");
    for (int j = 0; j < S; j++) cg_mbar_init(C, cg_mbar_at(C, g, cg_const_i32(C, j)), 1, t0);
    if (C->cluster) { /* released by the consumer warps of both programs (one, launched without a cluster) */
        C->cl_rank = cg_cluster_sreg(C, "cluster_ctarank");
        C->cl_size = cg_cluster_sreg(C, "cluster_nctarank");
        LLVMValueRef n = LLVMBuildMul(b, C->cl_size, cg_const_i32(C, C->num_warps), "");
        for (int j = 0; j < S; j++) cg_mbar_init_n(C, cg_mbar_at(C, cg_ws_empties(C, g, S), cg_const_i32(C, j)), n, t0);
    } else
        for (int j = 0; j < S; j++)
            cg_mbar_init(C, cg_mbar_at(C, cg_ws_empties(C, g, S), cg_const_i32(C, j)), C->num_warps, t0);
    if (cg_ws_has_hoisted(C)) cg_mbar_init(C, cg_ws_hoist_bar(C), 1, t0);
    if (cg_ws_has_hoisted(C) && C->ws_outer) cg_mbar_init(C, cg_ws_hoist_empty(C), C->num_warps, t0);
    cg_mbar_init_fence(C);
    if (C->cluster) { /* the peer's arrivals and multicast boxes reach these barriers only once they exist */
        cg_cluster_sync(C);
        return;
    }
    LLVMValueRef zero = cg_const_i32(C, 0);
    cg_call_intrinsic(C, "llvm.nvvm.barrier.cta.sync.aligned.all", NULL, 0, &zero, 1);
}

/* A consumer warp's lane 0 releasing a slot: on its own empty barrier
 * and, in a cluster of two, on the peer's (whose producer multicasts into
 * this program's slot too). */
void cg_ws_release(cg_ctx *C, LLVMValueRef bar32, LLVMValueRef pred) {
    cg_mbar_arrive(C, bar32, pred);
    if (!C->cluster) return;
    LLVMBuilderRef b = C->b;
    LLVMValueRef two = LLVMBuildICmp(b, LLVMIntEQ, C->cl_size, cg_const_i32(C, 2), "");
    LLVMValueRef on = LLVMBuildAnd(b, LLVMBuildICmp(b, LLVMIntNE, pred, cg_const_i32(C, 0), ""), two, "");
    LLVMValueRef peer = LLVMBuildXor(b, C->cl_rank, cg_const_i32(C, 1), "");
    cg_mbar_arrive_remote(C, bar32, peer, LLVMBuildZExt(b, on, C->i32, ""));
}

static LLVMValueRef bar_after_rings(cg_ctx *C, int k) {
    int S = cg_pipe_stages(C, C->ws_loop);
    LLVMValueRef p = LLVMBuildGEP2(C->b, C->i8, C->ws_bars, (LLVMValueRef[]){cg_const_i32(C, 16 * S + 8 * k)}, 1, "");
    return LLVMBuildTrunc(C->b, LLVMBuildPtrToInt(C->b, p, C->i64, ""), C->i32, "");
}

LLVMValueRef cg_ws_hoist_bar(cg_ctx *C) { return bar_after_rings(C, 0); }
LLVMValueRef cg_ws_hoist_empty(cg_ctx *C) { return bar_after_rings(C, 1); }

void cg_ws_entry(cg_ctx *C) {
    if (!C->ws_loop || C->failed) return;
    LLVMBuilderRef b = C->b;
    init_barriers(C);
    if (C->ws_outer) { /* LLVM promotes them to registers: an alloca keeps the tile loop's IR as it is */
        C->ws_count = LLVMBuildAlloca(b, C->i32, "ws.count");
        LLVMBuildStore(b, cg_const_i32(C, 0), C->ws_count);
        if (cg_ws_has_hoisted(C)) {
            C->ws_tiles = LLVMBuildAlloca(b, C->i32, "ws.tiles");
            LLVMBuildStore(b, cg_const_i32(C, 0), C->ws_tiles);
        }
    }
    LLVMBasicBlockRef cons;
    LLVMValueRef is_prod = LLVMBuildICmp(b, LLVMIntUGE, C->warp, cg_const_i32(C, C->num_warps), "");
    cg_branch(C, is_prod, "ws.producer", &C->ws_producer, "ws.consumer", &cons);
    LLVMPositionBuilderAtEnd(b, cons);
    C->ws_consumer = cons;
}

/* After lowering, with the kernel's shared memory known: the consumers'
 * setmaxnreg.inc, first in their block, and the launch bound that makes
 * ptxas cap the registers at entry to one program's share (setmaxnreg takes
 * effect only under such a cap, FACTS.md). */
void cg_ws_finish(cg_ctx *C, LLVMValueRef fn) {
    if (!C->ws_loop || !C->ws_consumer || C->failed) return;
    int programs = programs_per_sm(C), regs = consumer_regs(C, programs);
    LLVMValueRef first = LLVMGetFirstInstruction(C->ws_consumer);
    if (first) LLVMPositionBuilderBefore(C->b, first);
    else LLVMPositionBuilderAtEnd(C->b, C->ws_consumer);
    setmaxnreg(C, "inc", regs);
    char n[8];
    snprintf(n, sizeof n, "%d", programs);
    LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex,
                            LLVMCreateStringAttribute(C->llc, "nvvm.minctasm", 13, n, (unsigned)strlen(n)));
    if (C->remarks & CG_REMARKS)
        diag_remark(C->diag, C->ws_loop->loc,
                    "loop in %s: warp-specialized: a producer warpgroup issues its TMA (setmaxnreg %d), "
                    "%d consumer warps compute (setmaxnreg %d)%s",
                    C->entry ? C->entry : C->f->name, WS_PRODUCER_REGS, C->num_warps, regs,
                    programs > 1 ? "; two programs per multiprocessor" : "");
}

/* if (!cond) return; */
static void continue_if(cg_ctx *C, LLVMValueRef cond, const char *name) {
    LLVMBasicBlockRef go, out;
    cg_branch(C, cond, name, &go, "ws.exit", &out);
    LLVMPositionBuilderAtEnd(C->b, out);
    LLVMBuildRetVoid(C->b);
    LLVMPositionBuilderAtEnd(C->b, go);
}

static LLVMValueRef as_i64(cg_ctx *C, ir_value *v) {
    LLVMValueRef x = cg_get(C, v, NULL).v[0];
    blk_dtype t = (blk_dtype)v->type.dtype;
    if (dtype_bits(t) >= 64) return x;
    return dtype_is_unsigned(t) ? LLVMBuildZExt(C->b, x, C->i64, "") : LLVMBuildSExt(C->b, x, C->i64, "");
}

/* The phase of empty[g % S] that frees the slot for the producer's
 * iteration g. Without a cluster, a fresh barrier's preceding phase counts
 * as complete, so the first S pass at once: parity (g / S & 1) ^ 1. In a
 * cluster the consumers of both programs release every slot once when
 * they reach the loop (the peer's producer writes into this program's
 * slots, which were scratch until then): phase g / S, parity g / S & 1. */
static LLVMValueRef empty_parity(cg_ctx *C, LLVMValueRef g, int S) {
    LLVMBuilderRef b = C->b;
    LLVMValueRef p = LLVMBuildAnd(b, LLVMBuildUDiv(b, g, cg_const_i32(C, S), ""), cg_const_i32(C, 1), "");
    return C->cluster ? p : LLVMBuildXor(b, p, cg_const_i32(C, 1), "");
}

void cg_ws_producer(cg_ctx *C, ir_inst *loop, int S, LLVMValueRef full, LLVMValueRef empty) {
    if (C->failed || !C->ws_producer) return;
    LLVMBuilderRef b = C->b;
    LLVMBasicBlockRef resume = LLVMGetInsertBlock(b);
    LLVMPositionBuilderAtEnd(b, C->ws_producer);
    setmaxnreg(C, "dec", WS_PRODUCER_REGS);
    continue_if(C, LLVMBuildICmp(b, LLVMIntEQ, C->warp, cg_const_i32(C, C->num_warps), ""), "ws.warp");
    if (C->ws_handoff) cg_named_barrier(C, CG_BAR_HANDOFF, 32 * (C->num_warps + 1), false);
    /* the whole warp runs the loop (lane 0 issues), so that it can meet
     * the consumers again at the end as a warp */
    LLVMValueRef lead = LLVMBuildZExt(b, LLVMBuildICmp(b, LLVMIntEQ, C->lane, cg_const_i32(C, 0), ""), C->i32, "");

    /* the slice, lowered here with the consumers' values put aside: none
     * of theirs dominates this block */
    cg_val *saved = ARENA_ARRAY(C->a, cg_val, C->num_values + 1);
    if (!saved) { C->failed = true; return; }
    memcpy(saved, C->vals, sizeof(cg_val) * (size_t)C->num_values);
    struct cg_remat *rm = C->remat;
    int nrm = C->num_remat, crm = C->cap_remat, npend = C->num_wg_pending;
    C->remat = NULL, C->num_remat = 0, C->cap_remat = 0, C->num_wg_pending = 0;
    ir_region *top = C->f->body;
    ir_inst *outer = C->ws_outer, *first = outer ? outer : loop;
    for (int i = 0; i < C->num_values; i++)
        if (C->ws_mark[i]) C->vals[i] = (cg_val){0};
    for (ir_inst *in = top->first; in && in != first; in = in->next)
        if (in->num_results && C->ws_mark[in->results[0]->id]) cg_region_inst(C, in);
    if (C->cluster) { /* the same slice as the peer computes it (tma_fill compares the boxes) */
        cg_val *own = ARENA_ARRAY(C->a, cg_val, C->num_values + 1), *peer = ARENA_ARRAY(C->a, cg_val, C->num_values + 1);
        if (!own || !peer) { C->failed = true; return; }
        memcpy(own, C->vals, sizeof(cg_val) * (size_t)C->num_values);
        for (int i = 0; i < C->num_values; i++)
            if (C->ws_mark[i]) C->vals[i] = (cg_val){0};
        C->remat = NULL, C->num_remat = 0, C->cap_remat = 0;
        C->pid_peer = true;
        for (ir_inst *in = top->first; in && in != first; in = in->next)
            if (in->num_results && C->ws_mark[in->results[0]->id]) cg_region_inst(C, in);
        C->pid_peer = false;
        memcpy(peer, C->vals, sizeof(cg_val) * (size_t)C->num_values);
        memcpy(C->vals, own, sizeof(cg_val) * (size_t)C->num_values);
        C->remat = NULL, C->num_remat = 0, C->cap_remat = 0;
        C->peer_vals = peer;
    }
    /* the hoisted tiles first: the loop's first dot reads them with its first slot */
    bool hoisted = cg_ws_has_hoisted(C);
    if (hoisted && !outer) cg_pipe_produce_hoisted(C, loop, cg_ws_hoist_bar(C), lead);
    /* g counts the iterations of `loop` issued so far: slot g % S, phase g / S */
    LLVMValueRef g0 = cg_const_i32(C, 0), ophi_g = NULL, ophi_t = NULL, ostep = NULL;
    cg_loop O = {0};
    if (outer) {
        LLVMValueRef olb = as_i64(C, outer->operands[0]), oub = as_i64(C, outer->operands[1]);
        ostep = as_i64(C, outer->operands[2]);
        O = cg_loop_begin(C, C->i64, olb, "ws.ohead", "ws.obody", "ws.odone");
        ophi_g = cg_loop_phi(C, &O, C->i32, g0);
        ophi_t = cg_loop_phi(C, &O, C->i32, cg_const_i32(C, 0)); /* tiles so far */
        cg_loop_test(C, &O, LLVMBuildICmp(b, LLVMIntSLT, O.iv, oub, ""), NULL);
        LLVMValueRef oiv = O.iv;
        ir_value *oivv = outer->regions[0]->args.data[0];
        cg_val x = cg_new_val(C, 1, NULL);
        blk_dtype ot = (blk_dtype)oivv->type.dtype;
        x.v[0] = dtype_bits(ot) < 64 ? LLVMBuildTrunc(b, oiv, cg_type(C, ot), "") : oiv;
        C->vals[oivv->id] = x;
        for (ir_inst *in = outer->regions[0]->first; in && in != loop; in = in->next)
            if (in->num_results && C->ws_mark[in->results[0]->id]) cg_region_inst(C, in);
        g0 = ophi_g;
        /* this tile's hoisted tiles, once the consumers have released the
         * previous tile's (their phase t - 1; the first passes at once) */
        if (hoisted) {
            LLVMValueRef par = LLVMBuildXor(b, LLVMBuildAnd(b, ophi_t, cg_const_i32(C, 1), ""), cg_const_i32(C, 1), "");
            cg_mbar_wait(C, cg_ws_hoist_empty(C), par);
            cg_pipe_produce_hoisted(C, loop, cg_ws_hoist_bar(C), lead);
        }
    }
    LLVMValueRef lb = as_i64(C, loop->operands[0]), ub = as_i64(C, loop->operands[1]), step = as_i64(C, loop->operands[2]);

    /* for (iv = lb; iv < ub; iv += step, g++) */
    cg_loop L = cg_loop_begin(C, C->i64, lb, "ws.head", "ws.body", "ws.done");
    LLVMValueRef iv = L.iv, it = cg_loop_phi(C, &L, C->i32, g0);
    cg_loop_test(C, &L, LLVMBuildICmp(b, LLVMIntSLT, iv, ub, ""), NULL);
    LLVMValueRef slot = LLVMBuildURem(b, it, cg_const_i32(C, S), "");
    cg_mbar_wait(C, cg_mbar_at(C, empty, slot), empty_parity(C, it, S));
    C->cl_turn = it;
    cg_pipe_produce(C, loop, iv, slot, cg_mbar_at(C, full, slot), lead);
    C->cl_turn = NULL;
    LLVMValueRef ivn = LLVMBuildAdd(b, iv, step, ""), itn = LLVMBuildAdd(b, it, cg_const_i32(C, 1), "");
    cg_phi_add(it, itn, cg_loop_end(C, &L, ivn));
    if (outer) { /* g: the count when the inner loop ends */
        LLVMValueRef tn = LLVMBuildAdd(b, ophi_t, cg_const_i32(C, 1), "");
        LLVMBasicBlockRef latch = cg_loop_end(C, &O, LLVMBuildAdd(b, O.iv, ostep, ""));
        cg_phi_add(ophi_g, it, latch);
        cg_phi_add(ophi_t, tn, latch);
    }
    if (C->cluster) {
        /* The peer's consumers release this program's slots until their
         * last iteration: the program (its shared memory, these barriers)
         * must live until every release arrived, i.e. until the slots are
         * free for S more iterations. */
        for (int j = 0; j < S; j++) {
            LLVMValueRef g = LLVMBuildAdd(b, it, cg_const_i32(C, j), "");
            cg_mbar_wait(C, cg_mbar_at(C, empty, LLVMBuildURem(b, g, cg_const_i32(C, S), "")), empty_parity(C, g, S));
        }
    }
    LLVMBuildRetVoid(b);

    memcpy(C->vals, saved, sizeof(cg_val) * (size_t)C->num_values);
    C->peer_vals = NULL;
    C->remat = rm, C->num_remat = nrm, C->cap_remat = crm, C->num_wg_pending = npend;
    LLVMPositionBuilderAtEnd(b, resume);
}

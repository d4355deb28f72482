/* cg_pipe.c — dot operands resident in shared memory (pipeliner.h): the
 * rings a loop's loads stream through (cp.async, or TMA: cg_tma.c) and the
 * tiles hoisted before it, filled at the loop's begin / top / end hooks.
 * cg_dot.c lowers the dots that read them; cg_wg_flight.c keeps their wgmma
 * groups in flight. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cg_dot.h"

/* ---- operands resident in shared memory (pipeliner.h) ----
 *
 * A RING load's tile has `stages` slots of `bytes`; the slot iteration i
 * reads is i % stages, computed at the top of the body from the induction
 * variable. A HOIST value's tile is written once before the loop. Both live
 * in cg_smem_reserve's memory until the loop's exit drains the copies. */

struct cg_tile {
    sm_tile t;          /* slot 0 (RING) or the tile; colv in the value's own dims */
    const pl_entry *e;
    LLVMValueRef slot;  /* RING: this iteration's slot (i32) */
    const cg_tma *tma;  /* RING filled by TMA (cg_tma.c), else cp.async */
    LLVMValueRef mbar;  /* TMA: the loop's mbarriers, one .b64 per slot */
    LLVMValueRef lb, ub, step; /* the loop's bounds (i64) */
    int reserved_before;       /* C->smem_reserved before the loop's tiles */
    bool live;
};


static struct cg_tile *tile_of(cg_ctx *C, const ir_value *v) {
    if (!v || v->id < 0 || v->id >= C->num_values || !C->tiles) return NULL;
    struct cg_tile *t = C->tiles[v->id];
    return t && t->live ? t : NULL;
}

/* Dot operand v's resident tile, with colv in v's dims (through trans). */
bool resident_tile(cg_ctx *C, ir_value *v, sm_tile *out) {
    bool trans = false;
    struct cg_tile *rt = tile_of(C, v);
    if (!rt && v->def && v->def->op == IR_PERMUTE) rt = tile_of(C, v->def->operands[0]), trans = true;
    if (!rt) return false;
    *out = rt->t;
    if (trans) out->colv = 1 - out->colv;
    if (rt->e->kind == PL_RING) {
        LLVMValueRef off = LLVMBuildMul(C->b, rt->slot, cg_const_i32(C, rt->e->bytes), "");
        out->base = LLVMBuildGEP2(C->b, C->i8, rt->t.base, &off, 1, "");
    }
    return true;
}


/* A ring read into registers (pipeliner.h: no dot reads the load), in
 * layout `want`: each run of up to 16 bytes of a thread's registers along
 * the tile's contiguous dim from where the copies put it in this
 * iteration's slot (issue_copies addresses the tile alike; a masked-off
 * group was zero-filled, which is what the load yields without `other`).
 * The top of the iteration waited for the slot and met at the barrier, and
 * the slot is refilled only at the next top, so any reader of the load in
 * the iteration may read the tile again in its own layout: no conversion
 * through scratch memory (RoPE's f32 cos/sin rows, read where the bf16
 * halves of K want them). */
static cg_val ring_regs(cg_ctx *C, struct cg_tile *rt, ir_value *r, const lay_layout *want) {
    blk_dtype dt = (blk_dtype)r->type.dtype;
    int eb = dtype_bytes(dt), c = rt->t.colv;
    cg_lay_info li;
    cg_lay_info_get(C, want, 2, r->type.shape, &li);
    int p = li.f.dims[c], run = li.shape[c] <= li.f.spt[p] ? li.shape[c] : li.f.spt[p], v = 1;
    while (v * 2 * eb <= 16 && run % (v * 2) == 0 && li.shape[c] % (v * 2) == 0 && li.n[c] % (v * 2) == 0) v *= 2;
    sm_tile t = rt->t;
    t.base = LLVMBuildGEP2(C->b, C->i8, rt->t.base,
                           (LLVMValueRef[]){LLVMBuildMul(C->b, rt->slot, cg_const_i32(C, rt->e->bytes), "")}, 1, "");
    cg_val x = cg_new_val(C, li.nregs, want);
    for (int i = 0; i < li.nregs && !C->failed; i++) {
        int k[IR_MAX_RANK];
        cg_reg_index(&li, i, k);
        if (k[c] % v) continue; /* not the first of its run */
        LLVMValueRef row = cg_reg_coord(C, &li, i, 1 - c);
        LLVMValueRef off = tile_elem(C, &t, row, cg_reg_coord(C, &li, i, c));
        LLVMValueRef e[16];
        cg_load_vec(C, dt, v, tile_ptr(C, &t, off), e);
        for (int j = 0; j < v; j++, k[c]++) x.v[cg_reg_of(&li, k)] = e[j];
    }
    return x;
}

bool cg_pipe_ring_read(cg_ctx *C, ir_value *v, const lay_layout *want, cg_val *out) {
    struct cg_tile *rt = tile_of(C, v);
    if (!rt || rt->e->kind != PL_RING || !rt->e->regs || !rt->slot || v->type.rank != 2 ||
        !lay_fits(want, 2, v->type.shape))
        return false;
    *out = ring_regs(C, rt, v, want);
    return true;
}

bool cg_pipe_inst(cg_ctx *C, ir_inst *in) {
    if (C->num_wg_pending) cg_wg_drain_for(C, in);
    if (in->op == IR_LOAD || in->op == IR_DESC_LOAD) {
        struct cg_tile *t = tile_of(C, in->results[0]);
        const cg_tma *m = cg_tma_of(C, in);
        if (t && t->e->kind == PL_RING && t->e->regs) cg_set(C, in->results[0], ring_regs(C, t, in->results[0], cg_lay(C, in->results[0])));
        return (t && t->e->kind == PL_RING) || (m && m->hoist); /* the producer issues a hoisted tile's box */
    }
    if (in->op == IR_PERMUTE) {
        struct cg_tile *t = tile_of(C, in->operands[0]);
        /* the trans of a load its dot issues itself is renamed there */
        return (t && t->e->kind == PL_RING) || cg_dot_staged(C, in->operands[0]);
    }
    return false;
}

static void mark_chain(cg_ctx *C, ir_region *body, ir_value *v, bool *mark) {
    if (!v || !v->def || v->def->parent != body || v->id < 0 || v->id >= C->num_values || mark[v->id]) return;
    mark[v->id] = true;
    for (int k = 0; k < v->def->num_operands; k++) mark_chain(C, body, v->def->operands[k], mark);
}

/* v (computed from the induction variable and values from before the loop:
 * pipeliner.c's chain_ok) for the iteration whose induction variable is
 * iv64, in layout `want`: the body's defining ops run again with the
 * induction variable rebound, then every value is put back. */
static cg_val eval_at(cg_ctx *C, ir_inst *loop, ir_value *v, LLVMValueRef iv64, const lay_layout *want) {
    ir_region *body = loop->regions[0];
    ir_value *ivv = body->args.data[0];
    bool *mark = ARENA_ARRAY(C->a, bool, C->num_values + 1);
    if (!mark) { C->failed = true; return cg_get(C, v, want); }
    mark_chain(C, body, v, mark);
    cg_val *saved = ARENA_ARRAY(C->a, cg_val, C->num_values + 1);
    if (!saved) { C->failed = true; return cg_get(C, v, want); }
    for (int i = 0; i < C->num_values; i++)
        if (mark[i]) saved[i] = C->vals[i], C->vals[i] = (cg_val){0};
    cg_val old_iv = C->vals[ivv->id];
    cg_val ivx = cg_new_val(C, 1, NULL);
    blk_dtype it = (blk_dtype)ivv->type.dtype;
    ivx.v[0] = dtype_bits(it) < 64 ? LLVMBuildTrunc(C->b, iv64, cg_type(C, it), "") : iv64;
    C->vals[ivv->id] = ivx;
    /* rematerialisations made for another iteration must not be reused */
    struct cg_remat *rm = C->remat;
    int nrm = C->num_remat, crm = C->cap_remat;
    C->remat = NULL, C->num_remat = 0, C->cap_remat = 0;
    for (ir_inst *i = body->first; i; i = i->next)
        if (i->num_results && i->results[0]->id >= 0 && i->results[0]->id < C->num_values && mark[i->results[0]->id])
            cg_region_inst(C, i);
    cg_val r = cg_get(C, v, want);
    C->remat = rm, C->num_remat = nrm, C->cap_remat = crm;
    C->vals[ivv->id] = old_iv;
    for (int i = 0; i < C->num_values; i++)
        if (mark[i]) C->vals[i] = saved[i];
    return r;
}

static void async_commit(cg_ctx *C) { cg_inline_asm(C, C->vd, "cp.async.commit_group;", "~{memory}", NULL, 0, true); }

static void async_wait(cg_ctx *C, int n) {
    char text[48];
    snprintf(text, sizeof text, "cp.async.wait_group %d;", n);
    cg_inline_asm(C, C->vd, text, "~{memory}", NULL, 0, true);
}

/* The copies of RING load `ld` for the iteration with induction variable
 * iv64 into slot `slot` (i32), when `go` (i1: the iteration exists; it
 * guards each cp.async, the mask only zero-fills). Each
 * register group of the load's access (vectorize: 4, 8 or 16 bytes, one
 * mask bit) is one cp.async; a masked group copies 0 bytes and zero-fills
 * (src-size 0: no global access); replicas copy nothing. A descriptor
 * load's group is at base + sum_d (offset_d + coord_d) * stride_d and
 * masked off outside 0 <= offset_d + coord_d < dim_d (cg_memory.c's
 * lower_desc; vectorize proved a group wholly in or out). */
static void issue_copies(cg_ctx *C, ir_inst *loop, struct cg_tile *rt, ir_inst *ld, LLVMValueRef iv64,
                         LLVMValueRef slot, LLVMValueRef go, int from, int to) {
    LLVMBuilderRef b = C->b;
    ir_value *r = ld->results[0];
    const vec_access *acc = vec_get(C->vt, ld);
    const lay_layout *l = acc->lay;
    bool desc = ld->op == IR_DESC_LOAD;
    cg_val pv = {0}, mv = {0};
    LLVMValueRef base = NULL, dims[2], strides[2], offs[2];
    if (desc) {
        base = cg_get(C, ld->operands[0], NULL).v[0];
        for (int d = 0; d < 2; d++) {
            ir_value *dv = ld->operands[1 + d], *sv = ld->operands[3 + d], *ov = ld->operands[5 + d];
            dims[d] = cg_cast_scalar(C, ld->loc, (blk_dtype)dv->type.dtype, DT_I64, cg_get(C, dv, NULL).v[0]);
            strides[d] = cg_cast_scalar(C, ld->loc, (blk_dtype)sv->type.dtype, DT_I64, cg_get(C, sv, NULL).v[0]);
            offs[d] = cg_cast_scalar(C, ld->loc, (blk_dtype)ov->type.dtype, DT_I64, eval_at(C, loop, ov, iv64, NULL).v[0]);
        }
    } else {
        pv = eval_at(C, loop, ld->operands[0], iv64, l);
        if (ld->num_operands > 1) mv = eval_at(C, loop, ld->operands[1], iv64, l);
    }
    cg_lay_info li;
    cg_lay_info_get(C, l, 2, r->type.shape, &li);
    int vec = acc->vec, bytes = acc->bytes, cv = rt->t.colv;
    LLVMValueRef sbase = LLVMBuildGEP2(b, C->i8, rt->t.base,
                                       (LLVMValueRef[]){LLVMBuildMul(b, slot, cg_const_i32(C, rt->e->bytes), "")}, 1, "");
    sm_tile t = rt->t;
    t.base = sbase;
    char text[160];
    /* a masked group: ignore-src (zeros, no global access) from the mask's
     * predicate, not a src-size of 0 selected per group — the selects of
     * sizes cost a SEL chain per copy in SASS */
    snprintf(text, sizeof text,
             "{ .reg .pred p, z; setp.ne.b32 p, $3, 0; setp.eq.b32 z, $2, 0; @p cp.async.%s.shared.global [$0], [$1], %d, z; }",
             bytes == 16 ? "cg" : "ca", bytes);
    LLVMValueRef zero64 = LLVMConstInt(C->i64, 0, 0);
    for (int i = from * vec; i < li.nregs && i < to * vec; i += vec) {
        LLVMValueRef row = cg_reg_coord(C, &li, i, 1 - cv);
        LLVMValueRef off = tile_elem(C, &t, row, cg_reg_coord(C, &li, i, cv));
        /* go guards the instruction, the mask zero-fills: folded into
         * every mask, ptxas recomputed go's compare for each copy (two
         * more SASS instructions per cp.async) */
        LLVMValueRef on = LLVMConstInt(LLVMInt1TypeInContext(C->llc), 1, 0), src;
        if (desc) {
            LLVMValueRef eoff = zero64;
            for (int d = 0; d < 2; d++) {
                LLVMValueRef g = LLVMBuildAdd(b, offs[d], LLVMBuildZExt(b, cg_reg_coord(C, &li, i, d), C->i64, ""), "");
                on = LLVMBuildAnd(b, on, LLVMBuildICmp(b, LLVMIntSGE, g, zero64, ""), "");
                on = LLVMBuildAnd(b, on, LLVMBuildICmp(b, LLVMIntSLT, g, dims[d], ""), "");
                eoff = LLVMBuildAdd(b, eoff, LLVMBuildMul(b, g, strides[d], ""), "");
            }
            src = LLVMBuildGEP2(b, cg_mem_type(C, (blk_dtype)r->type.dtype), base, &eoff, 1, "");
        } else {
            if (mv.set) on = LLVMBuildAnd(b, on, mv.v[mv.n == li.nregs ? i : 0], "");
            src = pv.v[pv.n == li.nregs ? i : 0];
        }
        LLVMValueRef size = LLVMBuildZExt(b, on, C->i32, "");
        LLVMValueRef own = LLVMBuildZExt(b, LLVMBuildAnd(b, cg_reg_canonical(C, &li, i), go, ""), C->i32, "");
        LLVMValueRef args[4] = {tile_addr32(C, &t, off), src, size, own};
        cg_inline_asm(C, C->vd, text, "r,l,r,r,~{memory}", args, 4, true);
    }
}

bool cg_pipe_has(cg_ctx *C, ir_inst *loop) {
    if (!C->pl) return false;
    for (int i = 0; i < C->pl->num_values && i < C->num_values; i++)
        if (C->pl->e[i].kind != PL_NONE && C->pl->e[i].loop == loop) return true;
    return false;
}

int cg_pipe_stages(cg_ctx *C, ir_inst *loop) {
    int s = 0;
    for (int i = 0; i < C->pl->num_values && i < C->num_values; i++)
        if (C->pl->e[i].kind == PL_RING && C->pl->e[i].loop == loop && C->pl->e[i].stages > s) s = C->pl->e[i].stages;
    return s;
}

int cg_uses_in(const ir_region *r, const ir_value *v) {
    int n = 0;
    for (const ir_inst *i = r->first; i; i = i->next) {
        for (int k = 0; k < i->num_operands; k++) n += i->operands[k] == v;
        for (int k = 0; k < i->num_regions; k++) n += cg_uses_in(i->regions[k], v);
    }
    return n;
}


/* How many tiles ahead the copies run: S - 1, or S - 2 when a wgmma group
 * stays in flight across iterations. */
static int prefetch(cg_ctx *C, ir_inst *loop) { return cg_pipe_stages(C, loop) - 1 - (cg_wg_in_flight(C, loop) ? 1 : 0); }

/* the RING loads of the loop, in body order */
static int loop_rings(cg_ctx *C, ir_inst *loop, ir_inst **out, int max) {
    int n = 0;
    for (ir_inst *i = loop->regions[0]->first; i && n < max; i = i->next)
        if ((i->op == IR_LOAD || i->op == IR_DESC_LOAD) && tile_of(C, i->results[0]) &&
            tile_of(C, i->results[0])->e->kind == PL_RING)
            out[n++] = i;
    return n;
}

/* The boxes of TMA ring `ld` for the iteration with induction variable
 * iv64 into slot `slot`, completing on bar32 (issued where pred): per
 * swizzle panel of the tile (sw bytes), one box per box_rows rows (an a tile, whose
 * rows wg_row permutes, never takes TMA: cg_tma.c). */
static void tma_fill(cg_ctx *C, ir_inst *loop, struct cg_tile *rt, ir_inst *ld, LLVMValueRef iv64, LLVMValueRef slot,
                     LLVMValueRef bar32, LLVMValueRef pred) {
    LLVMBuilderRef b = C->b;
    const cg_tma *m = rt->tma;
    LLVMValueRef off[2];
    for (int d = 0; d < 2; d++) {
        ir_value *ov = m->off[d];
        off[d] = ov ? cg_cast_scalar(C, ld->loc, (blk_dtype)ov->type.dtype, DT_I32, eval_at(C, loop, ov, iv64, NULL).v[0])
                    : cg_const_i32(C, 0);
    }
    LLVMValueRef z = m->z ? cg_cast_scalar(C, ld->loc, (blk_dtype)m->z->type.dtype, DT_I32, eval_at(C, loop, m->z, iv64, NULL).v[0])
                          : NULL;
    /* In a cluster (cg_ws.c): the box is shared when the peer's
     * coordinates are the same (and the program was launched in a pair);
     * then the producers take turns, each issuing whole boxes multicast
     * to both: box j of iteration g by rank (g + j) % 2. Whole boxes, not
     * halves: a ring of boxes halved (to give each producer one) ran 40%
     * slower at 64x64 tiles with no cluster at all (docs/codegen.md). */
    LLVMValueRef mc = NULL;
    /* BLK_CLUSTER_UNICAST=1: never multicast (A/B runs: the pair's cost alone) */
    if (C->peer_vals && !m->hoist && !getenv("BLK_CLUSTER_UNICAST")) {
        cg_val *own = C->vals;
        C->vals = C->peer_vals;
        C->pid_peer = true; /* a program_id(0) in the body, recomputed by eval_at */
        mc = LLVMBuildICmp(b, LLVMIntEQ, C->cl_size, cg_const_i32(C, 2), "");
        for (int d = 0; d < 3; d++) {
            ir_value *ov = d < 2 ? m->off[d] : m->z;
            if (!ov) continue;
            LLVMValueRef p = cg_cast_scalar(C, ld->loc, (blk_dtype)ov->type.dtype, DT_I32, eval_at(C, loop, ov, iv64, NULL).v[0]);
            mc = LLVMBuildAnd(b, mc, LLVMBuildICmp(b, LLVMIntEQ, p, d < 2 ? off[d] : z, ""), "");
        }
        C->vals = own;
        C->pid_peer = false;
    }
    sm_tile t = rt->t;
    if (t.perm_wm) {
        cg_error(C, ld->loc, "internal error: a TMA ring for a tile whose rows are permuted");
        return;
    }
    t.base = LLVMBuildGEP2(b, C->i8, rt->t.base, (LLVMValueRef[]){LLVMBuildMul(b, slot, cg_const_i32(C, rt->e->bytes), "")},
                           1, "");
    LLVMValueRef dst0 = tile_addr32(C, &t, cg_const_i32(C, 0));
    int rows = t.rows, R = m->box_rows, panels = t.cols * t.e / t.sw;
    LLVMValueRef uni = pred, multi[2] = {NULL, NULL};
    if (mc) { /* i32 predicates: unicast when not shared; when shared, multi[j % 2] for box j */
        LLVMValueRef on = LLVMBuildICmp(b, LLVMIntNE, pred, cg_const_i32(C, 0), "");
        uni = LLVMBuildZExt(b, LLVMBuildAnd(b, on, LLVMBuildNot(b, mc, ""), ""), C->i32, "");
        LLVMValueRef turn = C->cl_turn ? LLVMBuildAnd(b, C->cl_turn, cg_const_i32(C, 1), "") : cg_const_i32(C, 0);
        for (int k = 0; k < 2; k++) {
            LLVMValueRef mine = LLVMBuildICmp(b, LLVMIntEQ, C->cl_rank, LLVMBuildXor(b, turn, cg_const_i32(C, k), ""), "");
            multi[k] = LLVMBuildZExt(b, LLVMBuildAnd(b, LLVMBuildAnd(b, on, mc, ""), mine, ""), C->i32, "");
        }
    }
    for (int p = 0; p < panels; p++)
        for (int q = 0; q < rows / R; q++) {
            int ddst = p * rows * t.sw + q * R * t.sw;
            cg_tma_load(C, m, dst0, ddst, off[m->fast], p * m->panel, off[1 - m->fast], q * R, z, bar32, uni, false);
            if (mc)
                cg_tma_load(C, m, dst0, ddst, off[m->fast], p * m->panel, off[1 - m->fast], q * R, z, bar32,
                            multi[C->cl_box++ % 2], true);
        }
}

LLVMValueRef cg_mbar_at(cg_ctx *C, LLVMValueRef mbar, LLVMValueRef slot) {
    LLVMValueRef p = LLVMBuildGEP2(C->b, C->i8, mbar, (LLVMValueRef[]){LLVMBuildMul(C->b, slot, cg_const_i32(C, 8), "")}, 1, "");
    return LLVMBuildTrunc(C->b, LLVMBuildPtrToInt(C->b, p, C->i64, ""), C->i32, "");
}

/* Fill `slot` with the rings' tiles of the iteration with induction
 * variable iv64, when `go`: TMA rings by thread 0 on the slot's mbarrier
 * (armed with their bytes first), the others by cp.async in one group. */
static void fill_slot(cg_ctx *C, ir_inst *loop, ir_inst **rings, int nr, LLVMValueRef iv64, LLVMValueRef slot,
                      LLVMValueRef go) {
    LLVMBuilderRef b = C->b;
    int tma_bytes = 0, ncp = 0;
    struct cg_tile *first_tma = NULL;
    for (int r = 0; r < nr; r++) {
        struct cg_tile *rt = tile_of(C, rings[r]->results[0]);
        if (rt->tma) tma_bytes += rt->e->bytes, first_tma = first_tma ? first_tma : rt;
        else ncp++;
    }
    if (first_tma) {
        LLVMValueRef bar = cg_mbar_at(C, first_tma->mbar, slot);
        LLVMValueRef t0 = LLVMBuildICmp(b, LLVMIntEQ, C->tid, cg_const_i32(C, 0), "");
        LLVMValueRef pred = LLVMBuildZExt(b, LLVMBuildAnd(b, t0, go, ""), C->i32, "");
        cg_mbar_expect(C, bar, tma_bytes, pred);
        for (int r = 0; r < nr; r++) {
            struct cg_tile *rt = tile_of(C, rings[r]->results[0]);
            if (rt->tma) tma_fill(C, loop, rt, rings[r], iv64, slot, bar, pred);
        }
    }
    for (int r = 0; r < nr; r++) {
        struct cg_tile *rt = tile_of(C, rings[r]->results[0]);
        if (!rt->tma) issue_copies(C, loop, rt, rings[r], iv64, slot, go, 0, INT_MAX / 16);
    }
    if (ncp) async_commit(C);
}

/* The number of cp.async a ring load's copies take (one per register group). */
static int copy_count(cg_ctx *C, ir_inst *ld) {
    const vec_access *acc = vec_get(C->vt, ld);
    cg_lay_info li;
    cg_lay_info_get(C, acc->lay, 2, ld->results[0]->type.shape, &li);
    return (li.nregs + acc->vec - 1) / acc->vec;
}

/* A prefetching loop's copies for iteration i + P are spread over its dot's
 * k steps (CUTLASS's multistage mainloop does the same): issued all at the
 * top, the copies and their address and mask arithmetic (~100 SASS
 * instructions for matmul's 12 cp.async) left the tensor cores idle in one
 * stretch, and the barrier lines up every warp of a scheduler in that
 * stretch. cg_pipe_top records the iteration (pf->copy_*); lower_mma
 * issues a share after each k step's fragment loads (cg_pipe_spread), the
 * last share and the commit before the wait of cg_pipe_mma_next.
 * BLK_NO_COPY_SPREAD=1 issues them at the top (A/B runs). */
void cg_pipe_spread(cg_ctx *C, cg_mma_pf *pf, int s, int steps) {
    if (!pf->copy_go) return;
    ir_inst *rings[16];
    int nr = loop_rings(C, pf->loop, rings, 16), total = 0;
    for (int r = 0; r < nr; r++) total += copy_count(C, rings[r]);
    int left = total - pf->copy_done;
    int n = s >= steps - 1 ? left : (left + (steps - 1 - s) - 1) / (steps - 1 - s);
    int upto = pf->copy_done + n, at = 0;
    for (int r = 0; r < nr; r++) {
        int c = copy_count(C, rings[r]);
        int from = pf->copy_done - at, to = upto - at;
        if (from < c && to > 0)
            issue_copies(C, pf->loop, tile_of(C, rings[r]->results[0]), rings[r], pf->copy_iv, pf->copy_slot, pf->copy_go,
                         from > 0 ? from : 0, to < c ? to : c);
        at += c;
    }
    pf->copy_done = upto;
    if (s >= steps - 1) {
        async_commit(C);
        pf->copy_go = NULL;
    }
}

void cg_pipe_produce_hoisted(cg_ctx *C, ir_inst *loop, LLVMValueRef bar32, LLVMValueRef on) {
    int bytes = 0;
    for (int j = 0; j < C->num_tma; j++)
        if (C->tma[j].hoist == loop) bytes += tile_of(C, C->tma[j].ld->results[0])->e->bytes;
    cg_mbar_expect(C, bar32, bytes, on);
    for (int j = 0; j < C->num_tma; j++) {
        ir_inst *ld = C->tma[j].ld;
        if (C->tma[j].hoist == loop)
            tma_fill(C, loop, tile_of(C, ld->results[0]), ld, LLVMConstInt(C->i64, 0, 0), cg_const_i32(C, 0), bar32, on);
    }
}

void cg_pipe_produce(cg_ctx *C, ir_inst *loop, LLVMValueRef iv64, LLVMValueRef slot, LLVMValueRef full, LLVMValueRef on) {
    ir_inst *rings[16];
    int nr = loop_rings(C, loop, rings, 16), bytes = 0;
    for (int r = 0; r < nr; r++) bytes += tile_of(C, rings[r]->results[0])->e->bytes;
    cg_mbar_expect(C, full, bytes, on);
    C->cl_box = 0;
    for (int r = 0; r < nr; r++) tma_fill(C, loop, tile_of(C, rings[r]->results[0]), rings[r], iv64, slot, full, on);
}

/* a warp-specialized loop's empty barriers: after its S full ones */
LLVMValueRef cg_ws_empties(cg_ctx *C, LLVMValueRef mbar, int S) {
    return LLVMBuildGEP2(C->b, C->i8, mbar, (LLVMValueRef[]){cg_const_i32(C, 8 * S)}, 1, "");
}

static struct cg_tile *loop_tma(cg_ctx *C, ir_inst **rings, int nr) {
    for (int r = 0; r < nr; r++)
        if (tile_of(C, rings[r]->results[0])->tma) return tile_of(C, rings[r]->results[0]);
    return NULL;
}

/* A ring read by several dots (pipeliner.c, shared_operand_uses) is stored in
 * wgmma's form when any of them takes wgmma: ldmatrix reads either form. */
static bool read_by_wgmma(cg_ctx *C, ir_inst *loop, ir_value *v, wg_plan *wp) {
    for (ir_inst *i = loop->regions[0]->first; i; i = i->next) {
        if (i->op != IR_DOT) continue;
        for (int k = 0; k < 2; k++) {
            ir_value *o = i->operands[k];
            bool reads_v = o == v || (o->def && o->def->op == IR_PERMUTE && o->def->operands[0] == v);
            if (reads_v && wg_choose(C, i, wp)) return true;
        }
    }
    return false;
}

/* The resident tiles of loop's operands: reserved now (after `reserved`
 * bytes), hoisted ones stored; true when some were hoisted. */
static bool make_tiles(cg_ctx *C, ir_inst *loop, LLVMValueRef lb, LLVMValueRef ub, LLVMValueRef step, int reserved) {
    ir_region *body = loop->regions[0];
    bool hoisted = false;
    for (ir_inst *in = body->first; in; in = in->next) {
        ir_value *cand[2];
        int nc = 0;
        bool load = in->op == IR_LOAD || in->op == IR_DESC_LOAD;
        if (load) cand[nc++] = in->results[0];
        if (in->op == IR_DOT) cand[nc++] = in->operands[0], cand[nc++] = in->operands[1];
        for (int c = 0; c < nc; c++) {
            ir_value *v = cand[c];
            const pl_entry *e = pl_get(C->pl, v);
            if (!e || e->loop != loop || v->id >= C->num_values || C->tiles[v->id]) continue;
            if (load != (e->kind == PL_RING)) continue;
            struct cg_tile *rt = ARENA_NEW(C->a, struct cg_tile);
            if (!rt) { C->failed = true; return hoisted; }
            blk_dtype dt = (blk_dtype)v->type.dtype;
            int role = 0;
            wg_plan wp;
            ir_inst *dot = cg_dot_reading(loop, v, &role);
            bool wg = dot && read_by_wgmma(C, loop, v, &wp);
            LLVMValueRef base = cg_smem_reserve(C, loop->loc, (int64_t)e->stages * e->bytes, wg ? 1024 : 128);
            int rows = v->type.shape[1 - e->colv], cols = v->type.shape[e->colv];
            int eb = dot ? pl_dot_elem_bytes(C->lt, dot) : e->regs ? dtype_bytes(dt) : stored_bytes(dt);
            if (wg) tile_init_wg(&rt->t, base, rows, cols, eb, e->colv, role == 0 ? cg_dot_a_perm(C, dot) : 0);
            else tile_init(&rt->t, base, rows, cols, eb, e->colv);
            rt->e = e;
            /* a ring's load, or a hoisted tile's (kept only under a producer: cg_ws.c) */
            rt->tma = e->kind == PL_RING ? (wg ? cg_tma_of(C, in) : NULL) : v->def ? cg_tma_of(C, v->def) : NULL;
            rt->lb = lb, rt->ub = ub, rt->step = step;
            rt->reserved_before = reserved;
            if (e->kind == PL_HOIST && !rt->tma) {
                store_operand(C, loop->loc, &rt->t, cg_get(C, v, cg_lay(C, v)), v->type, dt == DT_F32);
                if (wg) fence_async_smem(C); /* generic-proxy stores, read by wgmma's async proxy */
                hoisted = true;
            }
            if (e->regs && (C->remarks & CG_REMARKS))
                diag_remark(C->diag, in->loc, "load in %s: prefetched through a ring of %d slots (cp.async), read into registers",
                            C->entry ? C->entry : C->f->name, e->stages);
            rt->live = true;
            C->tiles[v->id] = rt;
        }
    }
    return hoisted;
}

/* A persistent kernel's tile loop around the warp-specialized loop
 * (C->ws_outer): the rings are reserved before it and handed to the
 * producer once, and stay its until the tile loop ends — the producer
 * fills the next tile's slots while the consumers finish this one. */
static void outer_begin(cg_ctx *C, ir_inst *outer) {
    ir_inst *loop = C->ws_loop;
    int reserved = C->smem_reserved;
    cg_barrier(C); /* the memory reserved now was scratch: its last readers are done */
    make_tiles(C, loop, NULL, NULL, NULL, reserved);
    cg_tma_store_reserve(C, outer->loc); /* released with the rings (release_tiles) */
    ir_inst *rings[16];
    int nr = loop_rings(C, loop, rings, 16), S = cg_pipe_stages(C, loop);
    for (int r = 0; r < nr; r++) tile_of(C, rings[r]->results[0])->mbar = C->ws_bars;
    if (cg_ws_has_hoisted(C)) fence_async_smem(C); /* TMA's writes come after this memory's generic accesses */
    cg_named_barrier(C, CG_BAR_HANDOFF, 32 * (C->num_warps + 1), false);
    cg_ws_producer(C, loop, S, C->ws_bars, cg_ws_empties(C, C->ws_bars, S));
}

static void release_tiles(cg_ctx *C, ir_inst *loop) {
    for (int i = 0; i < C->num_values; i++) {
        struct cg_tile *t = C->tiles[i];
        if (!t || t->e->loop != loop) continue;
        C->smem_reserved = t->reserved_before;
        t->live = false;
        C->tiles[i] = NULL;
    }
}

/* The loop whose mma.sync dot loads its first k step's fragments one
 * iteration ahead (cg_dot.c mma_prefetch; Triton's Prefetch pass, CUTLASS's
 * multistage mainloop): cp.async rings only, one dot in the body, at its
 * top level (every thread reaches the barrier inside it), on mma.sync,
 * reading only tiles of this loop's rings, and every ring is one of its
 * operands. BLK_NO_MMA_PREFETCH=1 turns it off (A/B runs). */
static ir_inst *prefetch_dot(cg_ctx *C, ir_inst *loop, ir_inst **rings, int nr) {
    if (loop == C->ws_loop || C->mma_pf || getenv("BLK_NO_MMA_PREFETCH")) return NULL;
    ir_inst *dot = NULL;
    for (ir_inst *i = loop->regions[0]->first; i; i = i->next) {
        if (i->op == IR_DOT) {
            if (dot) return NULL;
            dot = i;
        }
        for (int k = 0; k < i->num_regions; k++)
            if (ir_region_has(i->regions[k], IR_DOT)) return NULL;
    }
    wg_plan p;
    if (!dot || wg_choose(C, dot, &p) || dot->precision == IR_PREC_IEEE) return NULL;
    for (int r = 0; r < nr; r++) {
        struct cg_tile *t = tile_of(C, rings[r]->results[0]);
        if (!t || t->tma) return NULL;
    }
    for (int k = 0; k < 2; k++) {
        ir_value *v = dot->operands[k];
        if (v->def && v->def->op == IR_PERMUTE) v = v->def->operands[0];
        struct cg_tile *t = tile_of(C, v);
        if (!t || t->e->kind != PL_RING || t->e->loop != loop) return NULL;
    }
    return nr == 2 ? dot : NULL; /* both operands are rings, and nothing else is */
}

void cg_pipe_set_slot(cg_ctx *C, ir_inst *loop, LLVMValueRef slot) {
    ir_inst *rings[16];
    int nr = loop_rings(C, loop, rings, 16);
    for (int r = 0; r < nr; r++) tile_of(C, rings[r]->results[0])->slot = slot;
}

/* Inside the prefetching dot, once its last k step's fragments are loaded:
 * the next iteration's tiles are in (at most P-1 younger groups pending)
 * and, after the barrier, no thread reads this iteration's slot again (the
 * next top refills it). The rings now point at the next slot. */
LLVMValueRef cg_pipe_mma_next(cg_ctx *C, ir_inst *loop) {
    ir_inst *rings[16];
    int nr = loop_rings(C, loop, rings, 16), S = cg_pipe_stages(C, loop);
    if (!nr) return NULL;
    LLVMValueRef cur = tile_of(C, rings[0]->results[0])->slot;
    async_wait(C, prefetch(C, loop) - 1);
    cg_barrier(C);
    LLVMValueRef next = LLVMBuildURem(C->b, LLVMBuildAdd(C->b, cur, cg_const_i32(C, 1), ""), cg_const_i32(C, S), "");
    cg_pipe_set_slot(C, loop, next);
    return cur;
}

/* -R: the loop's loads that no dot reads and that stay where they are,
 * waited for in place, and why (pipeliner.c, consider_regs) */
static void remark_plain_loads(cg_ctx *C, ir_inst *loop) {
    for (ir_inst *i = loop->regions[0]->first; i; i = i->next) {
        ir_value *v = i->op == IR_LOAD ? i->results[0] : NULL;
        const char *why = v && v->id >= 0 && v->id < C->pl->num_values ? C->pl->why[v->id] : NULL;
        int role;
        if (why && !tile_of(C, v) && !cg_dot_reading(loop, v, &role))
            diag_remark(C->diag, i->loc, "load in %s: waited for where it stands, not prefetched through a ring: %s",
                        C->entry ? C->entry : C->f->name, why);
    }
}

void cg_pipe_begin(cg_ctx *C, ir_inst *loop, LLVMValueRef lb, LLVMValueRef ub, LLVMValueRef step) {
    if (loop == C->ws_outer && !C->failed) outer_begin(C, loop);
    if (C->remarks && C->pl && !C->failed) remark_plain_loads(C, loop);
    if (!cg_pipe_has(C, loop) || C->failed) return;
    LLVMBuilderRef b = C->b;
    bool ws = loop == C->ws_loop, nested = ws && C->ws_outer;
    ir_inst *rings[16];
    bool hoisted = false;
    int scratch_before = C->smem_bytes; /* dynamic shared memory touched before the loop */
    if (nested) { /* the tiles exist (outer_begin): this tile's bounds */
        int nr = loop_rings(C, loop, rings, 16);
        for (int r = 0; r < nr; r++) {
            struct cg_tile *t = tile_of(C, rings[r]->results[0]);
            t->lb = lb, t->ub = ub, t->step = step;
        }
    } else {
        int reserved = C->smem_reserved;
        cg_barrier(C); /* the memory reserved now was scratch: its last readers are done */
        hoisted = make_tiles(C, loop, lb, ub, step, reserved);
    }
    int nr = loop_rings(C, loop, rings, 16), P = prefetch(C, loop);
    struct cg_tile *tm = loop_tma(C, rings, nr);
    if (nested) {
        /* this tile's hoisted tiles (the producer loads one per tile): phase t */
        if (C->ws_tiles) {
            LLVMValueRef t = LLVMBuildLoad2(b, C->i32, C->ws_tiles, "");
            LLVMValueRef parity = LLVMBuildAnd(b, t, cg_const_i32(C, 1), "");
            cg_mbar_wait(C, cg_ws_hoist_bar(C), parity);
        }
    } else if (tm && ws) {
        /* the barriers were initialised at the kernel's entry (cg_ws.c):
         * meet the producer once this memory is no longer scratch */
        int S = cg_pipe_stages(C, loop);
        for (int r = 0; r < nr; r++) tile_of(C, rings[r]->results[0])->mbar = C->ws_bars;
        bool tma_hoist = cg_ws_has_hoisted(C);
        /* No dynamic shared memory touched before the loop (matmul,
         * attention: their prologues are registers only): nothing of the
         * consumers' can be in the rings' memory, so the producer starts
         * at once instead of meeting them here. */
        C->ws_handoff = scratch_before > 0;
        if (C->ws_handoff) {
            if (tma_hoist) fence_async_smem(C); /* TMA's writes come after this memory's generic accesses */
            cg_named_barrier(C, CG_BAR_HANDOFF, 32 * (C->num_warps + 1), false);
        }
        if (C->cluster) { /* this memory is no longer scratch: every slot free, for both producers (cg_ws.c) */
            LLVMValueRef lead = LLVMBuildZExt(b, LLVMBuildICmp(b, LLVMIntEQ, C->lane, cg_const_i32(C, 0), ""), C->i32, "");
            for (int j = 0; j < S; j++) cg_ws_release(C, cg_mbar_at(C, cg_ws_empties(C, C->ws_bars, S), cg_const_i32(C, j)), lead);
        }
        cg_ws_producer(C, loop, S, C->ws_bars, cg_ws_empties(C, C->ws_bars, S));
        if (tma_hoist) cg_mbar_wait(C, cg_ws_hoist_bar(C), cg_const_i32(C, 0)); /* its only phase */
    } else if (tm) {
        /* one mbarrier per slot; the memory was scratch written through the
         * generic proxy, which TMA's async-proxy writes must come after */
        int S = cg_pipe_stages(C, loop);
        LLVMValueRef mbar = cg_smem_reserve(C, loop->loc, 8 * S, 8);
        for (int r = 0; r < nr; r++) tile_of(C, rings[r]->results[0])->mbar = mbar;
        LLVMValueRef t0 = LLVMBuildZExt(b, LLVMBuildICmp(b, LLVMIntEQ, C->tid, cg_const_i32(C, 0), ""), C->i32, "");
        for (int j = 0; j < S; j++) cg_mbar_init(C, cg_mbar_at(C, mbar, cg_const_i32(C, j)), 1, t0);
        cg_mbar_init_fence(C);
        fence_async_smem(C);
        cg_barrier(C);
    }
    if (ws) cg_wg_opaque_inits(C, loop);
    for (int j = 0; j < P && nr && !ws; j++) {
        LLVMValueRef ivj = LLVMBuildAdd(b, lb, LLVMBuildMul(b, step, LLVMConstInt(C->i64, (unsigned long long)j, 0), ""), "");
        LLVMValueRef go = LLVMBuildICmp(b, LLVMIntSLT, ivj, ub, "");
        fill_slot(C, loop, rings, nr, ivj, cg_const_i32(C, j), go);
    }
    if (hoisted && !nr) cg_barrier(C); /* with rings, the first iteration's barrier does it */
    ir_inst *pd = nr && !ws && !tm ? prefetch_dot(C, loop, rings, nr) : NULL;
    if (pd) { /* iteration 0's first fragments: its tiles are in, then the loads */
        cg_pipe_set_slot(C, loop, cg_const_i32(C, 0));
        async_wait(C, P - 1);
        cg_barrier(C);
        mma_prefetch_begin(C, loop, pd);
    }
}

void cg_pipe_top(cg_ctx *C, ir_inst *loop, LLVMValueRef iv, LLVMValueRef count, LLVMValueRef trips) {
    if (!cg_pipe_has(C, loop) || C->failed) return;
    cg_wg_carry_pending(C, loop);
    LLVMBuilderRef b = C->b;
    ir_inst *rings[16];
    int nr = loop_rings(C, loop, rings, 16), S = cg_pipe_stages(C, loop), P = prefetch(C, loop);
    if (!nr) return;
    struct cg_tile *t0 = tile_of(C, rings[0]->results[0]), *tm = loop_tma(C, rings, nr);
    LLVMValueRef it, slot;
    /* a loop lowered in 32 bits counts its iterations: no division, and
     * the slot a 32-bit remainder (matmul: 15 SASS instructions of 64-bit
     * division per iteration before) */
    if (count) {
        it = LLVMBuildZExt(b, count, C->i64, "");
        slot = LLVMBuildURem(b, count, cg_const_i32(C, S), "");
    } else {
        it = LLVMBuildSDiv(b, LLVMBuildSub(b, iv, t0->lb, ""), t0->step, "");
        slot = LLVMBuildTrunc(b, LLVMBuildSRem(b, it, LLVMConstInt(C->i64, (unsigned long long)S, 0), ""), C->i32, "");
    }
    /* an induction variable narrower than 32 bits (a 32-bit one is counted:
     * above) and a constant positive step: the iteration number in 32-bit
     * unsigned arithmetic (iv >= lb, so iv - lb is exact modulo 2^32), a
     * shift and a 32-bit remainder instead of 64-bit division */
    blk_dtype ivt = (blk_dtype)loop->regions[0]->args.data[0]->type.dtype;
    if (!count && dtype_bits(ivt) <= 32 && LLVMIsAConstantInt(t0->step) && LLVMConstIntGetSExtValue(t0->step) > 0 &&
        LLVMConstIntGetSExtValue(t0->step) <= INT_MAX) {
        LLVMValueRef iv32 = LLVMBuildTrunc(b, iv, C->i32, ""); /* one emission per statement (F7) */
        LLVMValueRef lb32 = LLVMBuildTrunc(b, t0->lb, C->i32, "");
        LLVMValueRef d = LLVMBuildSub(b, iv32, lb32, "");
        LLVMValueRef it32 = LLVMBuildUDiv(b, d, LLVMBuildTrunc(b, t0->step, C->i32, ""), "");
        slot = LLVMBuildURem(b, it32, cg_const_i32(C, S), "");
    }
    if (loop == C->ws_loop) {
        /* lane 0 of each warp releases iteration it - L, whose wgmma groups
         * are complete (cg_ws.c), then every thread waits for its tiles */
        int L = cg_wg_in_flight(C, loop) ? 2 : 1;
        LLVMValueRef it32 = count ? count : LLVMBuildTrunc(b, it, C->i32, "");
        /* g: this iteration's place in the producer's sequence (in a tile
         * loop, the iterations of earlier tiles come first) */
        LLVMValueRef g = C->ws_count ? LLVMBuildAdd(b, LLVMBuildLoad2(b, C->i32, C->ws_count, ""), it32, "") : it32;
        LLVMValueRef rslot = LLVMBuildURem(b, LLVMBuildAdd(b, g, cg_const_i32(C, S - L), ""), cg_const_i32(C, S), "");
        LLVMValueRef past = LLVMBuildICmp(b, LLVMIntSGE, it32, cg_const_i32(C, L), "");
        LLVMValueRef lead = LLVMBuildICmp(b, LLVMIntEQ, C->lane, cg_const_i32(C, 0), "");
        LLVMValueRef rel = LLVMBuildZExt(b, LLVMBuildAnd(b, past, lead, ""), C->i32, "");
        cg_ws_release(C, cg_mbar_at(C, cg_ws_empties(C, tm->mbar, S), rslot), rel);
        slot = LLVMBuildURem(b, g, cg_const_i32(C, S), "");
        LLVMValueRef parity = LLVMBuildAnd(b, LLVMBuildUDiv(b, g, cg_const_i32(C, S), ""), cg_const_i32(C, 1), "");
        cg_mbar_wait(C, cg_mbar_at(C, tm->mbar, slot), parity);
        for (int r = 0; r < nr; r++) tile_of(C, rings[r]->results[0])->slot = slot;
        return;
    }
    /* tile i is in: at most P-1 younger groups pending (cp.async), the
     * slot's mbarrier past its (i / S)-th phase (TMA); the barrier makes
     * every thread's copies visible and proves that the readers of the slot
     * refilled below (iteration i+P-S: i-1, or i-2 when a wgmma group of
     * i-1 may still run) are done. A loop whose dot prefetches its
     * fragments did both in the previous iteration (or the prologue),
     * after its last read of the slot refilled here (cg_pipe_mma_next). */
    if (!C->mma_pf || C->mma_pf->loop != loop) {
        bool cp = false;
        for (int r = 0; r < nr; r++) cp |= !tile_of(C, rings[r]->results[0])->tma;
        if (cp) async_wait(C, P - 1);
        if (tm) {
            LLVMValueRef phase = LLVMBuildSDiv(b, it, LLVMConstInt(C->i64, (unsigned long long)S, 0), "");
            LLVMValueRef parity = LLVMBuildTrunc(b, LLVMBuildAnd(b, phase, LLVMConstInt(C->i64, 1, 0), ""), C->i32, "");
            cg_mbar_wait(C, cg_mbar_at(C, tm->mbar, slot), parity);
        }
        /* No proxy fence for the rings: what cp.async wrote is read by wgmma
         * after cp.async.wait_group and the barrier, as in CUTLASS's
         * MainloopSm90CpAsyncGmma and Triton (whose fence insertion fences only
         * stores from registers). fence.proxy.async is a MEMBAR.ALL.CTA, which
         * also waits for the copies still in flight for later stages: one per
         * iteration stalls the pipeline (H200: see docs/benchmarks.md). Stores from registers (hoisted
         * tiles, operands staged per dot) still fence. */
        cg_barrier(C);
    }
    for (int r = 0; r < nr; r++) tile_of(C, rings[r]->results[0])->slot = slot;
    LLVMValueRef ivn = LLVMBuildAdd(b, iv, LLVMBuildMul(b, t0->step, LLVMConstInt(C->i64, (unsigned long long)P, 0), ""), "");
    /* iteration it + P exists: in 32 bits, trips - count (>= 1 here) > P */
    LLVMValueRef go = count ? LLVMBuildICmp(b, LLVMIntUGT, LLVMBuildSub(b, trips, count, ""), cg_const_i32(C, P), "")
                            : LLVMBuildICmp(b, LLVMIntSLT, ivn, t0->ub, "");
    LLVMValueRef pslot = LLVMBuildURem(b, LLVMBuildAdd(b, slot, cg_const_i32(C, P), ""), cg_const_i32(C, S), "");
    cg_mma_pf *pf = C->mma_pf && C->mma_pf->loop == loop ? C->mma_pf : NULL;
    if (pf && !getenv("BLK_NO_COPY_SPREAD")) { /* issued by the dot: cg_pipe_spread */
        pf->copy_iv = ivn, pf->copy_slot = pslot, pf->copy_go = go, pf->copy_done = 0;
        return;
    }
    fill_slot(C, loop, rings, nr, ivn, pslot, go);
}

/* A tile's last L iterations were not released at a later iteration's
 * top: release them now (their groups completed: cg_pipe_results comes
 * first), then count the tile's iterations. */
static void tile_done(cg_ctx *C, ir_inst *loop, struct cg_tile *t0) {
    LLVMBuilderRef b = C->b;
    int S = cg_pipe_stages(C, loop), L = cg_wg_in_flight(C, loop) ? 2 : 1;
    LLVMValueRef span = LLVMBuildSub(b, LLVMBuildAdd(b, t0->ub, LLVMBuildSub(b, t0->step, LLVMConstInt(C->i64, 1, 0), ""), ""),
                                     t0->lb, "");
    LLVMValueRef n64 = LLVMBuildSDiv(b, span, t0->step, "");
    LLVMValueRef pos = LLVMBuildICmp(b, LLVMIntSGT, t0->ub, t0->lb, "");
    LLVMValueRef n = LLVMBuildSelect(b, pos, LLVMBuildTrunc(b, n64, C->i32, ""), cg_const_i32(C, 0), "");
    LLVMValueRef base = C->ws_count ? LLVMBuildLoad2(b, C->i32, C->ws_count, "") : cg_const_i32(C, 0);
    LLVMValueRef lead = LLVMBuildICmp(b, LLVMIntEQ, C->lane, cg_const_i32(C, 0), "");
    LLVMValueRef empty = cg_ws_empties(C, t0->mbar, S);
    for (int d = 1; d <= L; d++) {
        LLVMValueRef idx = LLVMBuildSub(b, n, cg_const_i32(C, d), "");
        LLVMValueRef on = LLVMBuildAnd(b, lead, LLVMBuildICmp(b, LLVMIntSGE, idx, cg_const_i32(C, 0), ""), "");
        LLVMValueRef slot = LLVMBuildURem(b, LLVMBuildAdd(b, base, LLVMBuildSelect(b, on, idx, cg_const_i32(C, 0), ""), ""),
                                          cg_const_i32(C, S), "");
        LLVMValueRef bar = cg_mbar_at(C, empty, slot);
        cg_ws_release(C, bar, LLVMBuildZExt(b, on, C->i32, ""));
    }
    if (C->ws_count) LLVMBuildStore(b, LLVMBuildAdd(b, base, n, ""), C->ws_count);
    if (C->ws_tiles) { /* and the tile's hoisted tiles, for the next tile's */
        LLVMValueRef on = LLVMBuildZExt(b, lead, C->i32, "");
        cg_ws_release(C, cg_ws_hoist_empty(C), on);
        LLVMValueRef t = LLVMBuildLoad2(b, C->i32, C->ws_tiles, "");
        LLVMBuildStore(b, LLVMBuildAdd(b, t, cg_const_i32(C, 1), ""), C->ws_tiles);
    }
}

void cg_pipe_end(cg_ctx *C, ir_inst *loop) {
    if (loop == C->ws_outer && !C->failed) { /* the tile loop: the rings are scratch again */
        cg_tma_store_drain(C); /* and the tile stores' staging memory, once they have read it */
        cg_barrier(C);
        release_tiles(C, C->ws_loop);
        return;
    }
    if (C->mma_pf && C->mma_pf->loop == loop) C->mma_pf = NULL;
    if (!cg_pipe_has(C, loop) || C->failed) return;
    C->num_wg_pending = 0; /* the body's readers are lowered; cg_pipe_results completes the rest */
    ir_inst *rings[16];
    int nr = loop_rings(C, loop, rings, 16);
    bool ws = loop == C->ws_loop;
    if (nr && !ws) async_wait(C, 0); /* no copy may land in memory reused next */
    struct cg_tile *tm = loop_tma(C, rings, nr);
    if (tm && ws && C->ws_outer) {
        tile_done(C, loop, tm);
        return; /* the rings stay the producer's until the tile loop ends */
    } else if (tm && ws && C->cluster) {
        /* the last L iterations, released for the peer's producer, which
         * waits for every release before its program ends (cg_ws.c) */
        tile_done(C, loop, tm);
    } else if (tm && ws) {
        /* nothing: the producer's last box landed before the consumers'
         * last wait, and its barriers live outside this memory (cg_ws.c) */
    } else if (tm) {
        /* every TMA issued was waited for in its iteration (none is issued
         * past the last); thread 0 passed the last iteration's barrier, so
         * no thread still waits on a barrier */
        LLVMValueRef t0 = LLVMBuildZExt(C->b, LLVMBuildICmp(C->b, LLVMIntEQ, C->tid, cg_const_i32(C, 0), ""), C->i32, "");
        for (int j = 0; j < cg_pipe_stages(C, loop); j++) cg_mbar_inval(C, cg_mbar_at(C, tm->mbar, cg_const_i32(C, j)), t0);
    }
    cg_barrier(C);
    release_tiles(C, loop);
}

/* cg_reduce.c — reductions along one axis (sum, max, min, prod, xor_sum,
 * argmax/argmin, reductions with a combine region).
 *
 * For an operand in layout L (root dim p = the reduced axis), in three steps:
 *   1. in-thread: fold the thread's registers along the axis, in index
 *      order;
 *   2. across lanes: butterfly shuffles (llvm.nvvm.shfl.sync.bfly.i32) with
 *      lane offsets stride*1, stride*2, ... where stride is the lane-id
 *      weight of dim p in L's order; only the first S/spt lane coordinates
 *      hold distinct elements (the rest are replicas), so the butterfly
 *      stops there and no identity element is ever needed;
 *   3. across warps: when the axis spans W > 1 warps, every warp writes its
 *      partial to shared memory [W x outputs], bar.sync, and every thread
 *      folds the W partials in warp order (cross_warp_buffer says where
 *      and whether a barrier before the writes is needed).
 * All threads end with the result: a SLICE(axis, L) value (rank-1 operand:
 * a uniform scalar). The combine must be associative and commutative (the
 * butterfly applies it in a lane-dependent order).
 *
 * argmax/argmin carry (value, index) pairs: larger (smaller) value wins,
 * ties go to the lower index, NaNs lose to numbers (as in the interpreter,
 * where x[argmax(x)] == max(x) and an all-NaN line gives 0).
 */
#include <string.h>

#include "cg_internal.h"

static LLVMValueRef shfl_xor(cg_ctx *C, LLVMValueRef v, int off) { return cg_shfl_bfly(C, v, cg_const_i32(C, off)); }

typedef struct {
    ir_inst *in;
    blk_dtype from, to; /* operand and accumulator dtypes */
    bool arg;
} red_kind;

/* acc = combine(acc, x) for plain and region reductions */
static LLVMValueRef combine(cg_ctx *C, const red_kind *rk, LLVMValueRef a, LLVMValueRef x) {
    ir_inst *in = rk->in;
    if (in->op == IR_REDUCE) return cg_binary_scalar(C, in->loc, ir_reduce_combine(in->kind), 0, rk->to, a, x);
    /* REDUCE_REGION: lower the region with its args bound, take the yield */
    ir_region *r = in->regions[0];
    cg_val av = cg_new_val(C, 1, NULL), xv = cg_new_val(C, 1, NULL);
    av.v[0] = a;
    xv.v[0] = x;
    cg_set(C, r->args.data[0], av);
    cg_set(C, r->args.data[1], xv);
    for (ir_inst *i = r->first; i && i != r->last; i = i->next) cg_region_inst(C, i);
    if (!r->last || r->last->op != IR_YIELD || r->last->num_operands < 1) {
        cg_error(C, in->loc, "internal error: reduce combine region must end in a yield of one value");
        return a;
    }
    return cg_get(C, r->last->operands[0], NULL).v[0];
}

/* (a, ai) vs (x, xi): should x win? */
static LLVMValueRef arg_takes(cg_ctx *C, const red_kind *rk, LLVMValueRef a, LLVMValueRef ai, LLVMValueRef x, LLVMValueRef xi) {
    LLVMBuilderRef b = C->b;
    bool mx = rk->in->kind == IR_RED_ARGMAX;
    blk_dtype t = rk->from;
    LLVMValueRef lower = LLVMBuildICmp(b, LLVMIntSLT, xi, ai, "");
    if (dtype_is_float(t)) {
        LLVMValueRef fa = cg_cast_scalar(C, rk->in->loc, t, t == DT_F64 ? DT_F64 : DT_F32, a);
        LLVMValueRef fx = cg_cast_scalar(C, rk->in->loc, t, t == DT_F64 ? DT_F64 : DT_F32, x);
        LLVMValueRef better = LLVMBuildFCmp(b, mx ? LLVMRealOGT : LLVMRealOLT, fx, fa, "");
        LLVMValueRef eq = LLVMBuildFCmp(b, LLVMRealOEQ, fx, fa, "");
        LLVMValueRef an = LLVMBuildFCmp(b, LLVMRealUNO, fa, fa, ""), xn = LLVMBuildFCmp(b, LLVMRealUNO, fx, fx, "");
        LLVMValueRef both_nan = LLVMBuildAnd(b, an, xn, "");
        LLVMValueRef r = LLVMBuildOr(b, better, LLVMBuildAnd(b, eq, lower, ""), "");
        r = LLVMBuildOr(b, r, LLVMBuildAnd(b, an, LLVMBuildNot(b, xn, ""), ""), "");
        return LLVMBuildOr(b, r, LLVMBuildAnd(b, both_nan, lower, ""), "");
    }
    bool s = dtype_is_signed(t);
    LLVMValueRef better = LLVMBuildICmp(b, mx ? (s ? LLVMIntSGT : LLVMIntUGT) : (s ? LLVMIntSLT : LLVMIntULT), x, a, "");
    LLVMValueRef eq = LLVMBuildICmp(b, LLVMIntEQ, x, a, "");
    return LLVMBuildOr(b, better, LLVMBuildAnd(b, eq, lower, ""), "");
}

static void comb2(cg_ctx *C, const red_kind *rk, LLVMValueRef *a, LLVMValueRef *ai, LLVMValueRef x, LLVMValueRef xi) {
    if (!rk->arg) { *a = combine(C, rk, *a, x); return; }
    LLVMValueRef t = arg_takes(C, rk, *a, *ai, x, xi);
    *a = LLVMBuildSelect(C->b, t, x, *a, "");
    *ai = LLVMBuildSelect(C->b, t, xi, *ai, "");
}

/* Is `in` inside a for / while body (executed more than once per launch)? */
static bool in_loop(const ir_inst *in) {
    for (const ir_region *r = in->parent; r && r->parent; r = r->parent->parent)
        if (r->parent->op == IR_FOR || r->parent->op == IR_WHILE) return true;
    return false;
}

/* Static shared memory for reductions: at most this much per kernel, so
 * that the dynamic scratch keeps nearly all of the 48 KB. */
enum { RED_STATIC_MAX = 4096 };

/* Where the partials of step 3 go, and whether the writes need a barrier
 * before them (*lead).
 *
 * One barrier (the common case): a reduction that runs at most once per
 * launch (not in a loop body) gets its own static shared buffer
 * (`.shared .b8 __blk_red[N]`, one per reduction op). Its only hazard is
 * read-after-write (a thread reading partials another warp has not written
 * yet), which the barrier between the writes and the reads covers. There
 * is no write-after-read hazard: nothing else ever writes the buffer, and
 * the reduction itself writes it once; so the leading barrier the shared
 * scratch protocol needs (cg_convert.c: a slow thread may still be reading
 * the previous user's data at offset 0) is not needed. The layernorm pair of
 * reductions thus costs two barriers instead of four.
 *
 * Two barriers: in a loop body the same buffer is written again in the next
 * iteration while a slow thread may still read this one's partials; such a
 * reduction (and one that would exceed RED_STATIC_MAX) uses the shared
 * scratch under its protocol, barrier before the writes included. */
static LLVMValueRef cross_warp_buffer(cg_ctx *C, ir_inst *in, int64_t bytes, bool *lead) {
    if (in_loop(in) || C->smem_static + bytes > RED_STATIC_MAX ||
        C->smem_bytes + C->smem_static + bytes > C->tgt->smem_static_max) {
        *lead = true;
        return cg_smem(C, in->loc, bytes);
    }
    *lead = false;
    int64_t size = (bytes + 15) / 16 * 16;
    LLVMTypeRef at = LLVMArrayType2(C->i8, (uint64_t)size);
    LLVMValueRef g = LLVMAddGlobalInAddressSpace(C->mod, at, "__blk_red", 3);
    LLVMSetLinkage(g, LLVMInternalLinkage);
    LLVMSetInitializer(g, LLVMGetUndef(at));
    LLVMSetAlignment(g, 16);
    C->smem_static += (int)size;
    return g;
}

static void lower_reduce(cg_ctx *C, ir_inst *in) {
    LLVMBuilderRef b = C->b;
    ir_value *x = in->operands[0], *r = in->results[0];
    int ax = in->axis, rank = x->type.rank;
    red_kind rk = {in, (blk_dtype)x->type.dtype, (blk_dtype)r->type.dtype, in->op == IR_ARGREDUCE};
    if (rk.arg || in->op == IR_REDUCE_REGION) rk.to = rk.from;
    /* reduce in the operand's layout, or in the parent of the result's
     * slice layout when that fits (then the result needs no conversion) */
    const lay_layout *xl = cg_lay(C, x), *rl = r->type.rank ? cg_lay(C, r) : NULL;
    if (rl && rl->kind == LAY_SLICE && rl->slice_dim == ax && lay_fits(rl->parent, rank, x->type.shape)) xl = rl->parent;
    cg_val xv = cg_get(C, x, xl);
    cg_lay_info li;
    cg_lay_info_get(C, xl, rank, x->type.shape, &li);
    const lay_layout *sl = rank > 1 ? lay_slice(C->a, xl, ax) : NULL;
    int32_t rshape[IR_MAX_RANK];
    for (int d = 0, j = 0; d < rank; d++)
        if (d != ax) rshape[j++] = x->type.shape[d];
    cg_lay_info lo;
    int nout = 1;
    if (sl) {
        cg_lay_info_get(C, sl, rank - 1, rshape, &lo);
        nout = lo.nregs;
    }
    LLVMValueRef *acc = ARENA_ARRAY(C->a, LLVMValueRef, nout), *idx = ARENA_ARRAY(C->a, LLVMValueRef, nout);
    LLVMValueRef *outlin = ARENA_ARRAY(C->a, LLVMValueRef, nout);
    if (!acc || !idx || !outlin) { C->failed = true; return; }
    /* 1. in-thread */
    for (int j = 0; j < nout; j++) {
        int ko[IR_MAX_RANK] = {0}, k[IR_MAX_RANK];
        if (sl) cg_reg_index(&lo, j, ko);
        for (int d = 0, jj = 0; d < rank; d++) k[d] = d == ax ? 0 : ko[jj++];
        outlin[j] = sl ? cg_reg_linear(C, &lo, j) : cg_const_i32(C, 0);
        for (int e = 0; e < li.n[ax]; e++) {
            k[ax] = e;
            int reg = cg_reg_of(&li, k);
            LLVMValueRef v = cg_cast_scalar(C, in->loc, rk.from, rk.to, xv.v[reg]);
            LLVMValueRef vi = rk.arg ? cg_reg_coord(C, &li, reg, ax) : NULL;
            if (e == 0) { acc[j] = v; idx[j] = vi; }
            else comb2(C, &rk, &acc[j], &idx[j], v, vi);
        }
    }
    /* 2. across lanes */
    int p = li.f.dims[ax];
    int64_t S = x->type.shape[ax], spt = li.f.spt[p], tpw = li.f.tpw[p], wpc = li.f.wpc[p];
    int64_t lanes = S <= spt ? 1 : (S / spt < tpw ? S / spt : tpw);
    int stride = 1;
    for (int i = 0; i < li.f.root_rank && li.f.order[i] != p; i++) stride *= li.f.tpw[li.f.order[i]];
    for (int64_t off = 1; off < lanes; off *= 2)
        for (int j = 0; j < nout; j++) {
            LLVMValueRef o = shfl_xor(C, acc[j], (int)(off * stride));
            LLVMValueRef oi = rk.arg ? shfl_xor(C, idx[j], (int)(off * stride)) : NULL;
            comb2(C, &rk, &acc[j], &idx[j], o, oi);
        }
    /* 3. across warps */
    int64_t per_warp = lay_warp_span(&li.f, p);
    int64_t warps = S <= per_warp ? 1 : (S / per_warp < wpc ? S / per_warp : wpc);
    if (warps > 1) {
        int64_t total = 1;
        for (int d = 0; d < rank - 1; d++) total *= rshape[d];
        int vb = dtype_bytes(rk.to) < 1 ? 1 : dtype_bytes(rk.to);
        if (rk.to == DT_BOOL) vb = 1;
        int64_t vbytes = (warps * total * vb + 15) / 16 * 16;
        bool lead;
        LLVMValueRef base = cross_warp_buffer(C, in, vbytes + (rk.arg ? warps * total * 4 : 0), &lead);
        int wstride = 1;
        for (int i = 0; i < li.f.root_rank && li.f.order[i] != p; i++) wstride *= li.f.wpc[li.f.order[i]];
        LLVMValueRef wc = LLVMBuildURem(b, LLVMBuildUDiv(b, C->warp, cg_const_i32(C, wstride), ""), cg_const_i32(C, wpc), "");
        wc = LLVMBuildURem(b, wc, cg_const_i32(C, warps), "");
        LLVMTypeRef mt = cg_mem_type(C, rk.to);
        LLVMValueRef ibase = LLVMBuildGEP2(b, C->i8, base, (LLVMValueRef[]){cg_const_i32(C, vbytes)}, 1, "");
        if (lead) cg_barrier(C);
        for (int j = 0; j < nout; j++) {
            LLVMValueRef slot = LLVMBuildAdd(b, LLVMBuildMul(b, wc, cg_const_i32(C, total), ""), outlin[j], "");
            LLVMValueRef v = rk.to == DT_BOOL ? LLVMBuildZExt(b, acc[j], C->i8, "") : acc[j];
            LLVMBuildStore(b, v, LLVMBuildGEP2(b, mt, base, &slot, 1, ""));
            if (rk.arg) LLVMBuildStore(b, idx[j], LLVMBuildGEP2(b, C->i32, ibase, &slot, 1, ""));
        }
        cg_barrier(C);
        for (int j = 0; j < nout; j++)
            for (int w = 0; w < warps; w++) {
                LLVMValueRef slot = LLVMBuildAdd(b, cg_const_i32(C, w * total), outlin[j], "");
                LLVMValueRef v = LLVMBuildLoad2(b, mt, LLVMBuildGEP2(b, mt, base, &slot, 1, ""), "");
                if (rk.to == DT_BOOL) v = LLVMBuildICmp(b, LLVMIntNE, v, LLVMConstInt(C->i8, 0, 0), "");
                LLVMValueRef vi = rk.arg ? LLVMBuildLoad2(b, C->i32, LLVMBuildGEP2(b, C->i32, ibase, &slot, 1, ""), "") : NULL;
                if (w == 0) { acc[j] = v; idx[j] = vi; }
                else comb2(C, &rk, &acc[j], &idx[j], v, vi);
            }
    }
    cg_val out = cg_new_val(C, nout, sl);
    for (int j = 0; j < nout; j++) out.v[j] = rk.arg ? cg_cast_scalar(C, in->loc, DT_I32, (blk_dtype)r->type.dtype, idx[j]) : acc[j];
    if (sl && rl && !lay_eq(sl, rl)) out = cg_convert(C, in->loc, out, r->type, rl);
    cg_set(C, r, out);
}

/* ---- scans ----
 * The operand is first put in a layout where the scanned axis lies within
 * one warp: spt = S/32 consecutive elements per thread and 32 lanes along
 * the axis (other dims over the warps). Then: a sequential scan of each
 * thread's elements, an inclusive warp scan of the per-thread totals with
 * shfl.sync.up (shfl.sync.down for reverse scans), and the previous lane's
 * inclusive total folded into every element. */
static LLVMValueRef scan_combine(cg_ctx *C, ir_inst *in, blk_dtype t, LLVMValueRef acc, LLVMValueRef x) {
    if (in->op == IR_SCAN)
        return cg_binary_scalar(C, in->loc, in->kind == IR_RED_PROD ? IR_MUL : IR_ADD, 0, t, acc, x);
    red_kind rk = {in, t, t, false};
    in->op = IR_REDUCE_REGION; /* combine() lowers the region of either */
    LLVMValueRef r = combine(C, &rk, acc, x);
    in->op = IR_SCAN_REGION;
    return r;
}

static void lower_scan(cg_ctx *C, ir_inst *in) {
    LLVMBuilderRef b = C->b;
    ir_value *x = in->operands[0], *r = in->results[0];
    int ax = in->axis, rank = x->type.rank;
    bool rev = (in->flags & IRF_REVERSE) != 0;
    blk_dtype from = (blk_dtype)x->type.dtype, to = (blk_dtype)r->type.dtype;
    int32_t S = x->type.shape[ax];
    int vec = S >= 32 ? S / 32 : 1;
    const lay_layout *sl = lay_choose_blocked(C->a, rank, x->type.shape, C->num_warps, ax, vec);
    cg_val xv = cg_get(C, x, sl);
    cg_lay_info li;
    cg_lay_info_get(C, sl, rank, x->type.shape, &li);
    cg_val out = cg_new_val(C, li.nregs, sl);
    int p = li.f.dims[ax];
    int spt = li.f.spt[p], tpw = li.f.tpw[p];
    int lanes = S <= spt ? 1 : (S / spt < tpw ? S / spt : tpw);
    int stride = 1;
    for (int i = 0; i < li.f.root_rank && li.f.order[i] != p; i++) stride *= li.f.tpw[li.f.order[i]];
    /* lane coordinate along the axis, modulo the lanes holding distinct
     * elements (higher lanes are replicas of the first `lanes`) */
    LLVMValueRef lc = LLVMBuildURem(b, LLVMBuildUDiv(b, C->lane, cg_const_i32(C, stride), ""), cg_const_i32(C, tpw), "");
    lc = LLVMBuildURem(b, lc, cg_const_i32(C, lanes), "");
    int nlines = li.nregs / li.n[ax];
    for (int line = 0; line < nlines; line++) {
        /* the registers of this line: k over the other dims */
        int k[IR_MAX_RANK] = {0}, rest = line;
        for (int i = 0; i < rank; i++) {
            int d = li.f.reg_order[i];
            if (d == ax) continue;
            k[d] = rest % li.n[d];
            rest /= li.n[d];
        }
        int n = li.n[ax];
        int *regs = ARENA_ARRAY(C->a, int, n);
        for (int e = 0; e < n; e++) {
            k[ax] = e;
            regs[e] = cg_reg_of(&li, k);
        }
        LLVMValueRef acc = NULL;
        for (int j = 0; j < n; j++) {
            int e = rev ? n - 1 - j : j;
            LLVMValueRef v = cg_cast_scalar(C, in->loc, from, to, xv.v[regs[e]]);
            acc = j == 0 ? v : scan_combine(C, in, to, acc, v);
            out.v[regs[e]] = acc;
        }
        if (lanes > 1) {
            /* inclusive scan of the thread totals over the lanes */
            LLVMValueRef tot = acc;
            for (int off = 1; off < lanes; off *= 2) {
                LLVMValueRef y = cg_shfl_dir(C, tot, off * stride, !rev);
                LLVMValueRef ok = rev ? LLVMBuildICmp(b, LLVMIntULT, lc, cg_const_i32(C, lanes - off), "")
                                      : LLVMBuildICmp(b, LLVMIntUGE, lc, cg_const_i32(C, off), "");
                tot = LLVMBuildSelect(b, ok, scan_combine(C, in, to, y, tot), tot, "");
            }
            LLVMValueRef prev = cg_shfl_dir(C, tot, stride, !rev);
            LLVMValueRef has = rev ? LLVMBuildICmp(b, LLVMIntULT, lc, cg_const_i32(C, lanes - 1), "")
                                   : LLVMBuildICmp(b, LLVMIntUGE, lc, cg_const_i32(C, 1), "");
            for (int e = 0; e < n; e++)
                out.v[regs[e]] = LLVMBuildSelect(b, has, scan_combine(C, in, to, prev, out.v[regs[e]]), out.v[regs[e]], "");
        }
    }
    const lay_layout *rl = cg_lay(C, r);
    if (!lay_eq(sl, rl)) out = cg_convert(C, in->loc, out, r->type, rl);
    cg_set(C, r, out);
}

bool cg_reduce(cg_ctx *C, ir_inst *in) {
    switch (in->op) {
    case IR_REDUCE: case IR_ARGREDUCE: case IR_REDUCE_REGION:
        lower_reduce(C, in);
        return true;
    case IR_SCAN: case IR_SCAN_REGION:
        lower_scan(C, in);
        return true;
    default:
        return false;
    }
}

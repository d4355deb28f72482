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
 *      folds the W partials in warp order.
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

/* Butterfly shuffle of any register type. */
static LLVMValueRef shfl_xor(cg_ctx *C, LLVMValueRef v, int off) {
    LLVMBuilderRef b = C->b;
    LLVMTypeRef t = LLVMTypeOf(v);
    LLVMTypeKind k = LLVMGetTypeKind(t);
    LLVMValueRef args[4] = {cg_const_i32(C, -1), NULL, cg_const_i32(C, off), cg_const_i32(C, 31)};
    if (k == LLVMPointerTypeKind) return LLVMBuildIntToPtr(b, shfl_xor(C, LLVMBuildPtrToInt(b, v, C->i64, ""), off), t, "");
    unsigned bits = k == LLVMIntegerTypeKind ? LLVMGetIntTypeWidth(t)
                    : k == LLVMHalfTypeKind || k == LLVMBFloatTypeKind ? 16
                    : k == LLVMFloatTypeKind ? 32 : 64;
    LLVMTypeRef it = LLVMIntTypeInContext(C->llc, bits);
    LLVMValueRef x = k == LLVMIntegerTypeKind ? v : LLVMBuildBitCast(b, v, it, "");
    LLVMValueRef r;
    if (bits == 64) {
        LLVMValueRef lo = LLVMBuildTrunc(b, x, C->i32, "");
        LLVMValueRef hi = LLVMBuildTrunc(b, LLVMBuildLShr(b, x, LLVMConstInt(C->i64, 32, 0), ""), C->i32, "");
        args[1] = lo;
        lo = cg_call_intrinsic(C, "llvm.nvvm.shfl.sync.bfly.i32", NULL, 0, args, 4);
        args[1] = hi;
        hi = cg_call_intrinsic(C, "llvm.nvvm.shfl.sync.bfly.i32", NULL, 0, args, 4);
        r = LLVMBuildOr(b, LLVMBuildZExt(b, lo, C->i64, ""),
                        LLVMBuildShl(b, LLVMBuildZExt(b, hi, C->i64, ""), LLVMConstInt(C->i64, 32, 0), ""), "");
    } else {
        args[1] = bits == 32 ? x : LLVMBuildZExt(b, x, C->i32, "");
        r = cg_call_intrinsic(C, "llvm.nvvm.shfl.sync.bfly.i32", NULL, 0, args, 4);
        if (bits < 32) r = LLVMBuildTrunc(b, r, it, "");
    }
    return k == LLVMIntegerTypeKind ? r : LLVMBuildBitCast(b, r, t, "");
}

typedef struct {
    ir_inst *in;
    blk_dtype from, to; /* operand and accumulator dtypes */
    bool arg;
} red_kind;

static ir_op plain_op(int kind) {
    switch (kind) {
    case IR_RED_SUM: return IR_ADD;
    case IR_RED_PROD: return IR_MUL;
    case IR_RED_MAX: return IR_MAXIMUM;
    case IR_RED_MIN: return IR_MINIMUM;
    case IR_RED_XOR_SUM: return IR_XOR;
    default: return IR_OP_COUNT;
    }
}

/* acc = combine(acc, x) for plain and region reductions */
static LLVMValueRef combine(cg_ctx *C, const red_kind *rk, LLVMValueRef a, LLVMValueRef x) {
    ir_inst *in = rk->in;
    if (in->op == IR_REDUCE) return cg_binary_scalar(C, in->loc, plain_op(in->kind), 0, rk->to, a, x);
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
    int64_t per_warp = spt * tpw;
    int64_t warps = S <= per_warp ? 1 : (S / per_warp < wpc ? S / per_warp : wpc);
    if (warps > 1) {
        int64_t total = 1;
        for (int d = 0; d < rank - 1; d++) total *= rshape[d];
        int vb = dtype_bytes(rk.to) < 1 ? 1 : dtype_bytes(rk.to);
        if (rk.to == DT_BOOL) vb = 1;
        int64_t vbytes = (warps * total * vb + 15) / 16 * 16;
        LLVMValueRef base = cg_smem(C, in->loc, vbytes + (rk.arg ? warps * total * 4 : 0));
        int wstride = 1;
        for (int i = 0; i < li.f.root_rank && li.f.order[i] != p; i++) wstride *= li.f.wpc[li.f.order[i]];
        LLVMValueRef wc = LLVMBuildURem(b, LLVMBuildUDiv(b, C->warp, cg_const_i32(C, wstride), ""), cg_const_i32(C, wpc), "");
        wc = LLVMBuildURem(b, wc, cg_const_i32(C, warps), "");
        LLVMTypeRef mt = cg_mem_type(C, rk.to);
        LLVMValueRef ibase = LLVMBuildGEP2(b, C->i8, base, (LLVMValueRef[]){cg_const_i32(C, vbytes)}, 1, "");
        cg_barrier(C);
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
static LLVMValueRef shfl_dir(cg_ctx *C, LLVMValueRef v, int delta, bool up) {
    LLVMBuilderRef b = C->b;
    LLVMTypeRef t = LLVMTypeOf(v);
    LLVMTypeKind k = LLVMGetTypeKind(t);
    if (k == LLVMPointerTypeKind) return LLVMBuildIntToPtr(b, shfl_dir(C, LLVMBuildPtrToInt(b, v, C->i64, ""), delta, up), t, "");
    unsigned bits = k == LLVMIntegerTypeKind ? LLVMGetIntTypeWidth(t)
                    : k == LLVMHalfTypeKind || k == LLVMBFloatTypeKind ? 16
                    : k == LLVMFloatTypeKind ? 32 : 64;
    LLVMTypeRef it = LLVMIntTypeInContext(C->llc, bits);
    LLVMValueRef x = k == LLVMIntegerTypeKind ? v : LLVMBuildBitCast(b, v, it, "");
    const char *name = up ? "llvm.nvvm.shfl.sync.up.i32" : "llvm.nvvm.shfl.sync.down.i32";
    LLVMValueRef args[4] = {cg_const_i32(C, -1), NULL, cg_const_i32(C, delta), cg_const_i32(C, up ? 0 : 31)};
    LLVMValueRef r;
    if (bits == 64) {
        args[1] = LLVMBuildTrunc(b, x, C->i32, "");
        LLVMValueRef lo = cg_call_intrinsic(C, name, NULL, 0, args, 4);
        args[1] = LLVMBuildTrunc(b, LLVMBuildLShr(b, x, LLVMConstInt(C->i64, 32, 0), ""), C->i32, "");
        LLVMValueRef hi = cg_call_intrinsic(C, name, NULL, 0, args, 4);
        r = LLVMBuildOr(b, LLVMBuildZExt(b, lo, C->i64, ""),
                        LLVMBuildShl(b, LLVMBuildZExt(b, hi, C->i64, ""), LLVMConstInt(C->i64, 32, 0), ""), "");
    } else {
        args[1] = bits == 32 ? x : LLVMBuildZExt(b, x, C->i32, "");
        r = cg_call_intrinsic(C, name, NULL, 0, args, 4);
        if (bits < 32) r = LLVMBuildTrunc(b, r, it, "");
    }
    return k == LLVMIntegerTypeKind ? r : LLVMBuildBitCast(b, r, t, "");
}

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
                LLVMValueRef y = shfl_dir(C, tot, off * stride, !rev);
                LLVMValueRef ok = rev ? LLVMBuildICmp(b, LLVMIntULT, lc, cg_const_i32(C, lanes - off), "")
                                      : LLVMBuildICmp(b, LLVMIntUGE, lc, cg_const_i32(C, off), "");
                tot = LLVMBuildSelect(b, ok, scan_combine(C, in, to, y, tot), tot, "");
            }
            LLVMValueRef prev = shfl_dir(C, tot, stride, !rev);
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

/* ---- topk ----
 * K rounds of a (available, value, index) arg-reduction over the axis (the
 * three steps above, shuffling all three), each marking its winner taken.
 * Order: available first, then the larger value (NaN largest, as SORT
 * descending), then the lower index. Round t gives element t of the result;
 * a result register picks its round by its coordinate along the axis. */
typedef struct {
    LLVMValueRef av, v, i;
} tk_key;

static LLVMValueRef tk_wins(cg_ctx *C, blk_dtype t, tk_key a, tk_key x) {
    LLVMBuilderRef b = C->b;
    LLVMValueRef gt, eq;
    if (dtype_is_float(t)) {
        blk_dtype w = t == DT_F64 ? DT_F64 : DT_F32;
        LLVMValueRef fa = cg_cast_scalar(C, LOC_NONE, t, w, a.v), fx = cg_cast_scalar(C, LOC_NONE, t, w, x.v);
        LLVMValueRef an = LLVMBuildFCmp(b, LLVMRealUNO, fa, fa, ""), xn = LLVMBuildFCmp(b, LLVMRealUNO, fx, fx, "");
        /* One statement per emitted instruction: the order in which C
         * evaluates call arguments is unspecified (gcc and clang differ), and
         * the PTX must not depend on the compiler blkc was built with. */
        LLVMValueRef xonly = LLVMBuildAnd(b, xn, LLVMBuildNot(b, an, ""), "");
        gt = LLVMBuildOr(b, LLVMBuildFCmp(b, LLVMRealOGT, fx, fa, ""), xonly, "");
        LLVMValueRef both = LLVMBuildAnd(b, xn, an, "");
        eq = LLVMBuildOr(b, LLVMBuildFCmp(b, LLVMRealOEQ, fx, fa, ""), both, "");
    } else {
        gt = LLVMBuildICmp(b, dtype_is_signed(t) ? LLVMIntSGT : LLVMIntUGT, x.v, a.v, "");
        eq = LLVMBuildICmp(b, LLVMIntEQ, x.v, a.v, "");
    }
    LLVMValueRef better = LLVMBuildOr(b, gt, LLVMBuildAnd(b, eq, LLVMBuildICmp(b, LLVMIntSLT, x.i, a.i, ""), ""), "");
    LLVMValueRef same_av = LLVMBuildICmp(b, LLVMIntEQ, x.av, a.av, "");
    LLVMValueRef keep = LLVMBuildAnd(b, same_av, better, ""); /* (argument order: see above) */
    return LLVMBuildOr(b, LLVMBuildAnd(b, x.av, LLVMBuildNot(b, a.av, ""), ""), keep, "");
}

static void tk_comb(cg_ctx *C, blk_dtype t, tk_key *a, tk_key x) {
    LLVMValueRef w = tk_wins(C, t, *a, x);
    a->av = LLVMBuildSelect(C->b, w, x.av, a->av, "");
    a->v = LLVMBuildSelect(C->b, w, x.v, a->v, "");
    a->i = LLVMBuildSelect(C->b, w, x.i, a->i, "");
}

static void lower_topk(cg_ctx *C, ir_inst *in) {
    LLVMBuilderRef b = C->b;
    ir_value *x = in->operands[0], *rv = in->results[0], *ri = in->results[1];
    int ax = in->axis, rank = x->type.rank, K = (int)in->ival;
    blk_dtype t = (blk_dtype)x->type.dtype;
    const lay_layout *xl = cg_lay(C, x);
    if (!lay_fits(xl, rank, rv->type.shape) || K < 1) {
        cg_error(C, in->loc, "topk of %d along a dim of %d elements is not supported by the PTX backend yet", K,
                 x->type.shape[ax]);
        return;
    }
    cg_val xv = cg_get(C, x, xl);
    cg_lay_info li, ro;
    cg_lay_info_get(C, xl, rank, x->type.shape, &li);
    cg_lay_info_get(C, xl, rank, rv->type.shape, &ro);
    int n = li.n[ax], nlines = li.nregs / n;
    LLVMValueRef *avail = ARENA_ARRAY(C->a, LLVMValueRef, li.nregs), *crd = ARENA_ARRAY(C->a, LLVMValueRef, li.nregs);
    tk_key *win = ARENA_ARRAY(C->a, tk_key, (size_t)nlines * K);
    int *line_of = ARENA_ARRAY(C->a, int, li.nregs);
    LLVMValueRef *outlin = ARENA_ARRAY(C->a, LLVMValueRef, nlines);
    if (!avail || !crd || !win || !line_of || !outlin) { C->failed = true; return; }
    /* lines: registers sharing the coordinates off the axis */
    int *first = ARENA_ARRAY(C->a, int, nlines);
    for (int r = 0, ln = 0; r < li.nregs; r++) {
        int k[IR_MAX_RANK];
        cg_reg_index(&li, r, k);
        avail[r] = LLVMConstInt(C->i1, 1, 0);
        crd[r] = cg_reg_coord(C, &li, r, ax);
        if (k[ax] == 0) { first[ln] = r; line_of[r] = ln++; }
    }
    for (int r = 0; r < li.nregs; r++) {
        int k[IR_MAX_RANK];
        cg_reg_index(&li, r, k);
        k[ax] = 0;
        int r0 = cg_reg_of(&li, k);
        line_of[r] = line_of[r0];
    }
    for (int ln = 0; ln < nlines; ln++) {
        /* linear index of the line among all lines (row-major, axis removed) */
        LLVMValueRef lin = cg_const_i32(C, 0);
        int64_t stride = 1, cst = 0, off[IR_MAX_RANK];
        cg_reg_offsets(&li, first[ln], off);
        for (int d = rank - 1; d >= 0; d--) {
            if (d == ax) continue;
            lin = LLVMBuildAdd(b, lin, LLVMBuildMul(b, li.base[d], cg_const_i32(C, stride), ""), "");
            cst += off[d] * stride;
            stride *= x->type.shape[d];
        }
        outlin[ln] = LLVMBuildAdd(b, lin, cg_const_i32(C, cst), "");
    }
    int p = li.f.dims[ax];
    int64_t S = x->type.shape[ax], spt = li.f.spt[p], tpw = li.f.tpw[p], wpc = li.f.wpc[p];
    int64_t lanes = S <= spt ? 1 : (S / spt < tpw ? S / spt : tpw);
    int64_t per_warp = spt * tpw, warps = S <= per_warp ? 1 : (S / per_warp < wpc ? S / per_warp : wpc);
    int stride = 1, wstride = 1;
    for (int i = 0; i < li.f.root_rank && li.f.order[i] != p; i++) {
        stride *= li.f.tpw[li.f.order[i]];
        wstride *= li.f.wpc[li.f.order[i]];
    }
    int64_t total = 1; /* lines in the whole block */
    for (int d = 0; d < rank; d++)
        if (d != ax) total *= x->type.shape[d];
    LLVMTypeRef mt = cg_mem_type(C, t);
    int vb = t == DT_BOOL ? 1 : dtype_bytes(t);
    int64_t vbytes = (warps * total * vb + 15) / 16 * 16, ibytes = warps * total * 4;
    LLVMValueRef base = warps > 1 ? cg_smem(C, in->loc, vbytes + ibytes + warps * total) : NULL;
    for (int round = 0; round < K; round++) {
        for (int ln = 0; ln < nlines; ln++) {
            tk_key a = {0};
            for (int e = 0; e < n; e++) {
                int k[IR_MAX_RANK];
                cg_reg_index(&li, first[ln], k);
                k[ax] = e;
                int r = cg_reg_of(&li, k);
                tk_key xk = {avail[r], xv.v[r], crd[r]};
                if (e == 0) a = xk;
                else tk_comb(C, t, &a, xk);
            }
            for (int64_t off = 1; off < lanes; off *= 2) {
                tk_key o = {LLVMBuildTrunc(b, shfl_xor(C, LLVMBuildZExt(b, a.av, C->i32, ""), (int)(off * stride)), C->i1, ""),
                            shfl_xor(C, a.v, (int)(off * stride)), shfl_xor(C, a.i, (int)(off * stride))};
                tk_comb(C, t, &a, o);
            }
            win[round * nlines + ln] = a;
        }
        if (warps > 1) {
            LLVMValueRef wc = LLVMBuildURem(b, LLVMBuildUDiv(b, C->warp, cg_const_i32(C, wstride), ""), cg_const_i32(C, wpc), "");
            wc = LLVMBuildURem(b, wc, cg_const_i32(C, warps), "");
            LLVMValueRef ib = LLVMBuildGEP2(b, C->i8, base, (LLVMValueRef[]){cg_const_i32(C, vbytes)}, 1, "");
            LLVMValueRef ab = LLVMBuildGEP2(b, C->i8, base, (LLVMValueRef[]){cg_const_i32(C, vbytes + ibytes)}, 1, "");
            cg_barrier(C);
            for (int ln = 0; ln < nlines; ln++) {
                tk_key a = win[round * nlines + ln];
                LLVMValueRef slot = LLVMBuildAdd(b, LLVMBuildMul(b, wc, cg_const_i32(C, total), ""), outlin[ln], "");
                LLVMBuildStore(b, t == DT_BOOL ? LLVMBuildZExt(b, a.v, C->i8, "") : a.v, LLVMBuildGEP2(b, mt, base, &slot, 1, ""));
                LLVMBuildStore(b, a.i, LLVMBuildGEP2(b, C->i32, ib, &slot, 1, ""));
                LLVMBuildStore(b, LLVMBuildZExt(b, a.av, C->i8, ""), LLVMBuildGEP2(b, C->i8, ab, &slot, 1, ""));
            }
            cg_barrier(C);
            for (int ln = 0; ln < nlines; ln++) {
                tk_key a = {0};
                for (int w = 0; w < warps; w++) {
                    LLVMValueRef slot = LLVMBuildAdd(b, cg_const_i32(C, w * total), outlin[ln], "");
                    LLVMValueRef v = LLVMBuildLoad2(b, mt, LLVMBuildGEP2(b, mt, base, &slot, 1, ""), "");
                    if (t == DT_BOOL) v = LLVMBuildICmp(b, LLVMIntNE, v, LLVMConstInt(C->i8, 0, 0), "");
                    tk_key o = {LLVMBuildICmp(b, LLVMIntNE, LLVMBuildLoad2(b, C->i8, LLVMBuildGEP2(b, C->i8, ab, &slot, 1, ""), ""),
                                              LLVMConstInt(C->i8, 0, 0), ""),
                                v, LLVMBuildLoad2(b, C->i32, LLVMBuildGEP2(b, C->i32, ib, &slot, 1, ""), "")};
                    if (w == 0) a = o;
                    else tk_comb(C, t, &a, o);
                }
                win[round * nlines + ln] = a;
            }
        }
        for (int r = 0; r < li.nregs; r++)
            avail[r] = LLVMBuildAnd(b, avail[r], LLVMBuildICmp(b, LLVMIntNE, crd[r], win[round * nlines + line_of[r]].i, ""), "");
    }
    /* results in xl over the [.., K, ..] shape, then the results' layouts */
    cg_val ov = cg_new_val(C, ro.nregs, xl), oi = cg_new_val(C, ro.nregs, xl);
    for (int r = 0; r < ro.nregs; r++) {
        int k[IR_MAX_RANK];
        cg_reg_index(&ro, r, k);
        k[ax] = 0;
        int ln = line_of[cg_reg_of(&li, k)];
        LLVMValueRef c = cg_reg_coord(C, &ro, r, ax);
        LLVMValueRef v = win[ln].v, i = win[ln].i;
        for (int round = 1; round < K; round++) {
            LLVMValueRef is = LLVMBuildICmp(b, LLVMIntEQ, c, cg_const_i32(C, round), "");
            v = LLVMBuildSelect(b, is, win[round * nlines + ln].v, v, "");
            i = LLVMBuildSelect(b, is, win[round * nlines + ln].i, i, "");
        }
        ov.v[r] = v;
        oi.v[r] = cg_cast_scalar(C, in->loc, DT_I32, (blk_dtype)ri->type.dtype, i);
    }
    const lay_layout *lv = cg_lay(C, rv), *lx = cg_lay(C, ri);
    if (!lay_eq(xl, lv)) ov = cg_convert(C, in->loc, ov, rv->type, lv);
    if (!lay_eq(xl, lx)) oi = cg_convert(C, in->loc, oi, ri->type, lx);
    cg_set(C, rv, ov);
    cg_set(C, ri, oi);
}

/* ---- sort ----
 * A bitonic network over the axis (S a power of two: sema). The operand
 * first moves to a layout with the whole axis inside one warp (as for scans:
 * n = max(S/32, 1) consecutive elements per thread, the rest over the
 * lanes), so every compare-exchange of positions i and i^j is either
 * in-thread (j < n: both registers of one thread) or a butterfly shuffle
 * with lane offset (j/n)*stride (the partner keeps the other half of the
 * pair). Wrapped replica lanes compute the same pairs, since positions are
 * lane coordinates modulo S/n.
 *
 * Order (interp_reduce.c): NaN above every number, -0 == +0, ascending
 * unless IRF_DESCENDING; stability by sorting (value, original index) pairs
 * with the lower index first on ties, which makes the order strict and the
 * network's result exactly the stable sort. Integers and bools skip the
 * index: equal values are indistinguishable. */
static LLVMValueRef sort_before(cg_ctx *C, blk_dtype t, bool desc, LLVMValueRef a, LLVMValueRef ai, LLVMValueRef x,
                                LLVMValueRef xi) {
    LLVMBuilderRef b = C->b;
    LLVMValueRef lt, eq;
    if (dtype_is_float(t)) {
        blk_dtype w = t == DT_F64 ? DT_F64 : DT_F32;
        LLVMValueRef fa = cg_cast_scalar(C, LOC_NONE, t, w, a), fx = cg_cast_scalar(C, LOC_NONE, t, w, x);
        LLVMValueRef an = LLVMBuildFCmp(b, LLVMRealUNO, fa, fa, ""), xn = LLVMBuildFCmp(b, LLVMRealUNO, fx, fx, "");
        /* one emitted instruction per statement: C's argument evaluation
         * order is unspecified, the PTX must not depend on it */
        LLVMValueRef nan_side = desc ? LLVMBuildAnd(b, an, LLVMBuildNot(b, xn, ""), "")
                                     : LLVMBuildAnd(b, xn, LLVMBuildNot(b, an, ""), "");
        lt = LLVMBuildOr(b, LLVMBuildFCmp(b, desc ? LLVMRealOGT : LLVMRealOLT, fa, fx, ""), nan_side, "");
        LLVMValueRef both = LLVMBuildAnd(b, an, xn, "");
        eq = LLVMBuildOr(b, LLVMBuildFCmp(b, LLVMRealOEQ, fa, fx, ""), both, "");
    } else {
        if (LLVMGetTypeKind(LLVMTypeOf(a)) == LLVMPointerTypeKind) {
            a = LLVMBuildPtrToInt(b, a, C->i64, "");
            x = LLVMBuildPtrToInt(b, x, C->i64, "");
        }
        bool s = dtype_is_signed(t) && t != DT_BOOL;
        lt = LLVMBuildICmp(b, desc ? (s ? LLVMIntSGT : LLVMIntUGT) : (s ? LLVMIntSLT : LLVMIntULT), a, x, "");
        eq = NULL;
    }
    if (!ai) return lt;
    return LLVMBuildOr(b, lt, LLVMBuildAnd(b, eq, LLVMBuildICmp(b, LLVMIntSLT, ai, xi, ""), ""), "");
}

static void lower_sort(cg_ctx *C, ir_inst *in) {
    LLVMBuilderRef b = C->b;
    ir_value *x = in->operands[0], *r = in->results[0];
    int ax = in->axis, rank = x->type.rank;
    bool desc = (in->flags & IRF_DESCENDING) != 0;
    blk_dtype t = (blk_dtype)x->type.dtype;
    int32_t S = rank ? x->type.shape[ax] : 0;
    if (rank < 1 || S < 1 || (S & (S - 1))) {
        cg_error(C, in->loc, "internal error: sort needs a power-of-two axis (got %d)", (int)S);
        return;
    }
    const lay_layout *sl = lay_choose_blocked(C->a, rank, x->type.shape, C->num_warps, ax, S >= 32 ? S / 32 : 1);
    cg_lay_info li;
    cg_lay_info_get(C, sl, rank, x->type.shape, &li);
    int p = li.f.dims[ax];
    int64_t spt = li.f.spt[p], tpw = li.f.tpw[p];
    if (S > spt && S > spt * tpw) {
        cg_error(C, in->loc, "internal error: sort layout does not keep the axis in one warp");
        return;
    }
    cg_val xv = cg_get(C, x, sl);
    cg_val out = cg_new_val(C, li.nregs, sl);
    bool need_idx = dtype_is_float(t);
    int n = li.n[ax], nlines = li.nregs / n;
    int stride = 1;
    for (int i = 0; i < li.f.root_rank && li.f.order[i] != p; i++) stride *= li.f.tpw[li.f.order[i]];
    LLVMValueRef *v = ARENA_ARRAY(C->a, LLVMValueRef, n), *ix = ARENA_ARRAY(C->a, LLVMValueRef, n);
    LLVMValueRef *pos = ARENA_ARRAY(C->a, LLVMValueRef, n);
    int *regs = ARENA_ARRAY(C->a, int, n);
    if (!v || !ix || !pos || !regs) { C->failed = true; return; }
    for (int line = 0; line < nlines; line++) {
        int k[IR_MAX_RANK] = {0}, rest = line;
        for (int i = 0; i < rank; i++) {
            int d = li.f.reg_order[i];
            if (d == ax) continue;
            k[d] = rest % li.n[d];
            rest /= li.n[d];
        }
        for (int e = 0; e < n; e++) {
            k[ax] = e;
            regs[e] = cg_reg_of(&li, k);
            v[e] = xv.v[regs[e]];
            pos[e] = cg_reg_coord(C, &li, regs[e], ax);
            ix[e] = need_idx ? pos[e] : NULL;
        }
        for (int kk = 2; kk <= S; kk *= 2)
            for (int j = kk / 2; j > 0; j /= 2) {
                if (j < n) {
                    /* in-thread: positions base+e and base+(e^j), base a multiple of n */
                    for (int e = 0; e < n; e++) {
                        if (e & j) continue;
                        int h = e ^ j;
                        LLVMValueRef up = kk < n ? LLVMConstInt(C->i1, (e & kk) == 0, 0)
                                                 : LLVMBuildICmp(b, LLVMIntEQ, LLVMBuildAnd(b, pos[e], cg_const_i32(C, kk), ""),
                                                                 cg_const_i32(C, 0), "");
                        /* swap when the pair is out of order for its direction */
                        LLVMValueRef hb = sort_before(C, t, desc, v[h], ix[h], v[e], ix[e]);
                        LLVMValueRef lb = sort_before(C, t, desc, v[e], ix[e], v[h], ix[h]);
                        LLVMValueRef sw = LLVMBuildSelect(b, up, hb, lb, "");
                        LLVMValueRef ve = LLVMBuildSelect(b, sw, v[h], v[e], ""), vh = LLVMBuildSelect(b, sw, v[e], v[h], "");
                        v[e] = ve;
                        v[h] = vh;
                        if (need_idx) {
                            LLVMValueRef ie = LLVMBuildSelect(b, sw, ix[h], ix[e], ""), ih = LLVMBuildSelect(b, sw, ix[e], ix[h], "");
                            ix[e] = ie;
                            ix[h] = ih;
                        }
                    }
                } else {
                    int off = (j / n) * stride;
                    for (int e = 0; e < n; e++) {
                        LLVMValueRef pv = shfl_xor(C, v[e], off), pi = need_idx ? shfl_xor(C, ix[e], off) : NULL;
                        LLVMValueRef lower = LLVMBuildICmp(b, LLVMIntEQ, LLVMBuildAnd(b, pos[e], cg_const_i32(C, j), ""),
                                                           cg_const_i32(C, 0), "");
                        LLVMValueRef up = kk >= S ? LLVMConstInt(C->i1, 1, 0)
                                                  : LLVMBuildICmp(b, LLVMIntEQ, LLVMBuildAnd(b, pos[e], cg_const_i32(C, kk), ""),
                                                                  cg_const_i32(C, 0), "");
                        LLVMValueRef keep_first = LLVMBuildICmp(b, LLVMIntEQ, lower, up, "");
                        LLVMValueRef mine_first = sort_before(C, t, desc, v[e], ix[e], pv, pi);
                        LLVMValueRef take = LLVMBuildXor(b, keep_first, mine_first, "");
                        v[e] = LLVMBuildSelect(b, take, pv, v[e], "");
                        if (need_idx) ix[e] = LLVMBuildSelect(b, take, pi, ix[e], "");
                    }
                }
            }
        for (int e = 0; e < n; e++) out.v[regs[e]] = v[e];
    }
    const lay_layout *rl = cg_lay(C, r);
    if (!lay_eq(sl, rl)) out = cg_convert(C, in->loc, out, r->type, rl);
    cg_set(C, r, out);
}

bool cg_reduce(cg_ctx *C, ir_inst *in) {
    if (in->op == IR_TOPK) {
        lower_topk(C, in);
        return true;
    }
    if (in->op == IR_SORT) {
        lower_sort(C, in);
        return true;
    }
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

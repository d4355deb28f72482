/* cg_elementwise.c — constants, grid ids, arange, splat/broadcast/expand_dims
 * and every ELEM op of ops.def, register by register.
 *
 * Semantics are those of ops.def / ir/eval.c, which the interpreter runs:
 *  - f16/bf16/f8 math is done in f32 and rounded once to the dtype;
 *  - integer DIV/REM never reach LLVM's sdiv/udiv with a zero divisor or
 *    INT_MIN / -1 (both UB in LLVM): the divisor is replaced and the result
 *    selected (x/0 = 0, x%0 = 0, INT_MIN/-1 wraps, INT_MIN%-1 = 0);
 *  - shifts by >= the width give 0 (SHR of negative signed: -1): the amount
 *    is masked before the shift (LLVM's shl/lshr by >= width is poison) and
 *    the result selected;
 *  - MINIMUM/MAXIMUM on floats: NaN loses, -0 < +0 (llvm.minimumnum);
 *  - float -> int casts saturate with NaN -> 0 (llvm.fptosi.sat);
 *  - math goes to libdevice (__nv_expf ..., libm_table); IRF_FAST picks
 *    the __nv_fast_* approximations where libdevice has one (exp2: ex2.approx.ftz);
 *  - BITCAST is LLVM's bitcast (f8 values are i8 in registers already).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../ir/eval.h"

#include "cg_internal.h"

static bool is_f8(blk_dtype t) { return t == DT_F8E4M3 || t == DT_F8E5M2; }

/* f8 bits (i8) -> f32, exact. e5m2 is the top byte of an f16; e4m3 (bias 7,
 * no infinities, S.1111.111 = NaN) is decoded with integer arithmetic. */
static LLVMValueRef f8_to_f32(cg_ctx *C, blk_dtype t, LLVMValueRef x) {
    LLVMBuilderRef b = C->b;
    if (t == DT_F8E5M2) {
        LLVMValueRef h = LLVMBuildShl(b, LLVMBuildZExt(b, x, C->i16, ""), LLVMConstInt(C->i16, 8, 0), "");
        return LLVMBuildFPExt(b, LLVMBuildBitCast(b, h, C->f16, ""), C->f32, "");
    }
    LLVMValueRef u = LLVMBuildZExt(b, x, C->i32, "");
    LLVMValueRef sign = LLVMBuildShl(b, LLVMBuildAnd(b, u, cg_const_i32(C, 0x80), ""), cg_const_i32(C, 24), "");
    LLVMValueRef e = LLVMBuildAnd(b, LLVMBuildLShr(b, u, cg_const_i32(C, 3), ""), cg_const_i32(C, 15), "");
    LLVMValueRef m = LLVMBuildAnd(b, u, cg_const_i32(C, 7), "");
    /* one instruction per statement: argument order is unspecified (F7) */
    LLVMValueRef mant = LLVMBuildShl(b, m, cg_const_i32(C, 20), "");
    LLVMValueRef normal = LLVMBuildShl(b, LLVMBuildAdd(b, e, cg_const_i32(C, 120), ""), cg_const_i32(C, 23), "");
    normal = LLVMBuildOr(b, normal, mant, "");
    LLVMValueRef sub = LLVMBuildFMul(b, LLVMBuildUIToFP(b, m, C->f32, ""), LLVMConstReal(C->f32, 1.0 / 512), "");
    LLVMValueRef subbits = LLVMBuildBitCast(b, sub, C->i32, "");
    LLVMValueRef zero = LLVMBuildICmp(b, LLVMIntEQ, e, cg_const_i32(C, 0), "");
    LLVMValueRef mag = LLVMBuildSelect(b, zero, subbits, normal, "");
    LLVMValueRef nan = LLVMBuildICmp(b, LLVMIntEQ, LLVMBuildAnd(b, u, cg_const_i32(C, 0x7f), ""), cg_const_i32(C, 0x7f), "");
    mag = LLVMBuildSelect(b, nan, cg_const_i32(C, 0x7fc00000), mag, "");
    return LLVMBuildBitCast(b, LLVMBuildOr(b, mag, sign, ""), C->f32, "");
}

/* f32 -> f8 bits, round to nearest even, saturating (PTX .satfinite). */
static LLVMValueRef f32_to_f8(cg_ctx *C, blk_loc loc, blk_dtype t, LLVMValueRef x) {
    if (!tgt_has(C->tgt, TGT_CAP_F8_CVT)) {
        cg_error(C, loc, "conversion to %s needs cvt.satfinite (sm_89 or newer); %s lacks it", dtype_name(t),
                 C->tgt->arch);
        return LLVMGetUndef(C->i8);
    }
    const char *text = t == DT_F8E4M3 ? "cvt.rn.satfinite.e4m3x2.f32 $0, $1, $2;" : "cvt.rn.satfinite.e5m2x2.f32 $0, $1, $2;";
    LLVMValueRef args[2] = {LLVMConstReal(C->f32, 0.0), x};
    LLVMValueRef h = cg_inline_asm(C, C->i16, text, "=h,f,f", args, 2, false);
    return LLVMBuildTrunc(C->b, h, C->i8, "");
}

/* bf16 -> f32 is exact: the f32 bits are the bf16 bits << 16 (also for
 * NaN, as fpconv.c). Said in integer operations, LLVM sees through the
 * unpacking of a loaded word: the high half of a packed pair becomes one
 * `and 0xffff0000`, the low half one shift (cvt.f32.bf16 of the extracted
 * half is PRMT + shift in SASS: 3 instructions per pair instead of 2). */
static LLVMValueRef bf16_to_f32(cg_ctx *C, LLVMValueRef x) {
    LLVMBuilderRef b = C->b;
    LLVMValueRef u = LLVMBuildZExt(b, LLVMBuildBitCast(b, x, C->i16, ""), C->i32, "");
    return LLVMBuildBitCast(b, LLVMBuildShl(b, u, cg_const_i32(C, 16), ""), C->f32, "");
}

/* value of dtype t -> its compute type (f32 for the narrow floats) */
static LLVMValueRef widen(cg_ctx *C, blk_dtype t, LLVMValueRef x) {
    if (is_f8(t)) return f8_to_f32(C, t, x);
    if (t == DT_BF16) return bf16_to_f32(C, x);
    if (t == DT_F16) return LLVMBuildFPExt(C->b, x, C->f32, "");
    return x;
}
static LLVMValueRef narrow(cg_ctx *C, blk_loc loc, blk_dtype t, LLVMValueRef x) {
    if (is_f8(t)) return f32_to_f8(C, loc, t, x);
    if (t == DT_F16 || t == DT_BF16) return LLVMBuildFPTrunc(C->b, x, cg_type(C, t), "");
    return x;
}

static LLVMValueRef fconst(LLVMTypeRef t, double v) { return LLVMConstReal(t, v); }

static LLVMValueRef libm(cg_ctx *C, const char *f32name, const char *f64name, bool dbl, LLVMValueRef *a, int n) {
    return cg_call_extern(C, dbl ? f64name : f32name, dbl ? C->f64 : C->f32, a, n);
}

/* Float math that is one libdevice call: the f32 and f64 functions and, for
 * IRF_FAST on f32, the __nv_fast_* approximation (NULL: none, the accurate
 * one is used). The ulp bounds docs/language.md quotes are libdevice's. */
typedef struct {
    ir_op op;
    const char *f32, *f64, *fast;
} cg_libm;

static const cg_libm libm_table[] = {
    {IR_EXP, "__nv_expf", "__nv_exp", "__nv_fast_expf"},
    {IR_EXP2, "__nv_exp2f", "__nv_exp2", NULL},
    {IR_LOG, "__nv_logf", "__nv_log", "__nv_fast_logf"},
    {IR_LOG2, "__nv_log2f", "__nv_log2", "__nv_fast_log2f"},
    {IR_SIN, "__nv_sinf", "__nv_sin", "__nv_fast_sinf"},
    {IR_COS, "__nv_cosf", "__nv_cos", "__nv_fast_cosf"},
    {IR_TANH, "__nv_tanhf", "__nv_tanh", NULL},
    {IR_ERF, "__nv_erff", "__nv_erf", NULL},
    {IR_ROUND, "__nv_roundf", "__nv_round", NULL},
    {IR_LOG1P, "__nv_log1pf", "__nv_log1p", NULL},
    {IR_EXPM1, "__nv_expm1f", "__nv_expm1", NULL},
    {IR_EXP10, "__nv_exp10f", "__nv_exp10", "__nv_fast_exp10f"},
    {IR_LOG10, "__nv_log10f", "__nv_log10", "__nv_fast_log10f"},
    {IR_TAN, "__nv_tanf", "__nv_tan", "__nv_fast_tanf"},
    {IR_ASIN, "__nv_asinf", "__nv_asin", NULL},
    {IR_ACOS, "__nv_acosf", "__nv_acos", NULL},
    {IR_ATAN, "__nv_atanf", "__nv_atan", NULL},
    {IR_SINH, "__nv_sinhf", "__nv_sinh", NULL},
    {IR_COSH, "__nv_coshf", "__nv_cosh", NULL},
    {IR_ASINH, "__nv_asinhf", "__nv_asinh", NULL},
    {IR_ACOSH, "__nv_acoshf", "__nv_acosh", NULL},
    {IR_ATANH, "__nv_atanhf", "__nv_atanh", NULL},
    {IR_CBRT, "__nv_cbrtf", "__nv_cbrt", NULL},
    {IR_ERFC, "__nv_erfcf", "__nv_erfc", NULL},
    {IR_ERFINV, "__nv_erfinvf", "__nv_erfinv", NULL},
    {IR_LGAMMA, "__nv_lgammaf", "__nv_lgamma", NULL},
    {IR_REM, "__nv_fmodf", "__nv_fmod", NULL},
    {IR_POW, "__nv_powf", "__nv_pow", "__nv_fast_powf"},
    {IR_ATAN2, "__nv_atan2f", "__nv_atan2", NULL},
    {IR_HYPOT, "__nv_hypotf", "__nv_hypot", NULL},
    {IR_REMAINDER, "__nv_remainderf", "__nv_remainder", NULL},
    {IR_NEXTAFTER, "__nv_nextafterf", "__nv_nextafter", NULL},
};

/* The libdevice call for op, or NULL if op is not in libm_table. */
static LLVMValueRef libm_call(cg_ctx *C, ir_op op, bool fast, bool dbl, LLVMValueRef *a, int n) {
    for (size_t k = 0; k < sizeof libm_table / sizeof libm_table[0]; k++) {
        const cg_libm *m = &libm_table[k];
        if (m->op != op) continue;
        const char *name = dbl ? m->f64 : fast && m->fast ? m->fast : m->f32;
        return cg_call_extern(C, name, dbl ? C->f64 : C->f32, a, n);
    }
    return NULL;
}

static LLVMValueRef float_unary(cg_ctx *C, ir_op op, bool fast, bool dbl, LLVMValueRef x) {
    LLVMTypeRef ft = dbl ? C->f64 : C->f32;
    LLVMBuilderRef b = C->b;
    LLVMValueRef a[1] = {x};
    switch (op) {
    case IR_NEG: return LLVMBuildFNeg(b, x, "");
    case IR_ABS: return cg_call_intrinsic(C, "llvm.fabs", &ft, 1, a, 1);
    case IR_FLOOR: return cg_call_intrinsic(C, "llvm.floor", &ft, 1, a, 1);
    case IR_CEIL: return cg_call_intrinsic(C, "llvm.ceil", &ft, 1, a, 1);
    case IR_RINT: return cg_call_intrinsic(C, "llvm.rint", &ft, 1, a, 1);   /* cvt.rni */
    case IR_TRUNC: return cg_call_intrinsic(C, "llvm.trunc", &ft, 1, a, 1); /* cvt.rzi */
    case IR_SQRT: return cg_call_intrinsic(C, "llvm.sqrt", &ft, 1, a, 1);
    case IR_RSQRT:
        if (fast && !dbl) return libm(C, "__nv_rsqrtf", "__nv_rsqrt", dbl, a, 1);
        return LLVMBuildFDiv(b, fconst(ft, 1.0), cg_call_intrinsic(C, "llvm.sqrt", &ft, 1, a, 1), "");
    case IR_EXP2:
        /* fast: the bare ex2.approx with subnormals flushed (as Triton's
         * exp2); __nv_exp2f adds a compare and two predicated multiplies
         * per call to keep subnormal results, a third of a softmax's
         * instructions */
        if (fast && !dbl) return cg_inline_asm(C, C->f32, "ex2.approx.ftz.f32 $0, $1;", "=f,f", a, 1, false);
        return libm_call(C, op, fast, dbl, a, 1);
    case IR_SIGMOID: {
        LLVMValueRef nx[1] = {LLVMBuildFNeg(b, x, "")};
        LLVMValueRef e = libm_call(C, IR_EXP, fast, dbl, nx, 1);
        LLVMValueRef d = LLVMBuildFAdd(b, fconst(ft, 1.0), e, "");
        /* fast: rcp.approx (1 ulp) instead of the IEEE division, whose
         * rcp.rn sequence with its slow path made a 128x256 SiLU epilogue
         * spill under warp specialization */
        if (fast && !dbl) return cg_inline_asm(C, C->f32, "rcp.approx.ftz.f32 $0, $1;", "=f,f", &d, 1, false);
        return LLVMBuildFDiv(b, fconst(ft, 1.0), d, "");
    }
    default: return libm_call(C, op, fast, dbl, a, 1);
    }
}

static LLVMValueRef int_unary(cg_ctx *C, ir_op op, blk_dtype t, LLVMValueRef x) {
    LLVMTypeRef ty = cg_type(C, t);
    switch (op) {
    case IR_NEG: return LLVMBuildSub(C->b, LLVMConstInt(ty, 0, 0), x, "");
    case IR_NOT: return LLVMBuildXor(C->b, x, LLVMConstInt(C->i1, 1, 0), "");
    case IR_BITNOT: return LLVMBuildNot(C->b, x, "");
    case IR_ABS: {
        if (!dtype_is_signed(t)) return x;
        LLVMValueRef a[2] = {x, LLVMConstInt(C->i1, 0, 0)};
        return cg_call_intrinsic(C, "llvm.abs", &ty, 1, a, 2);
    }
    case IR_CLZ: {
        LLVMValueRef a[2] = {x, LLVMConstInt(C->i1, 0, 0)}; /* clz(0) = width, not poison */
        return cg_call_intrinsic(C, "llvm.ctlz", &ty, 1, a, 2);
    }
    case IR_POPC: return cg_call_intrinsic(C, "llvm.ctpop", &ty, 1, &x, 1);
    case IR_BREV: return cg_call_intrinsic(C, "llvm.bitreverse", &ty, 1, &x, 1);
    case IR_BSWAP:
        if (dtype_bits(t) == 8) return x; /* llvm.bswap needs a multiple of 16 bits */
        return cg_call_intrinsic(C, "llvm.bswap", &ty, 1, &x, 1);
    default: return NULL;
    }
}

static LLVMValueRef int_div_rem(cg_ctx *C, ir_op op, blk_dtype t, LLVMValueRef x, LLVMValueRef y) {
    LLVMBuilderRef b = C->b;
    LLVMTypeRef ty = cg_type(C, t);
    LLVMValueRef zero = LLVMConstInt(ty, 0, 0), one = LLVMConstInt(ty, 1, 0);
    LLVMValueRef is0 = LLVMBuildICmp(b, LLVMIntEQ, y, zero, "");
    if (!dtype_is_signed(t)) {
        LLVMValueRef safe = LLVMBuildSelect(b, is0, one, y, "");
        LLVMValueRef q = op == IR_DIV ? LLVMBuildUDiv(b, x, safe, "") : LLVMBuildURem(b, x, safe, "");
        return LLVMBuildSelect(b, is0, zero, q, "");
    }
    LLVMValueRef ism1 = LLVMBuildICmp(b, LLVMIntEQ, y, LLVMConstAllOnes(ty), "");
    LLVMValueRef bad = LLVMBuildOr(b, is0, ism1, "");
    LLVMValueRef safe = LLVMBuildSelect(b, bad, one, y, "");
    LLVMValueRef q = op == IR_DIV ? LLVMBuildSDiv(b, x, safe, "") : LLVMBuildSRem(b, x, safe, "");
    LLVMValueRef m1 = op == IR_DIV ? LLVMBuildSub(b, zero, x, "") : zero;
    return LLVMBuildSelect(b, is0, zero, LLVMBuildSelect(b, ism1, m1, q, ""), "");
}

static LLVMValueRef int_shift(cg_ctx *C, ir_op op, blk_dtype t, LLVMValueRef x, LLVMValueRef y) {
    LLVMBuilderRef b = C->b;
    LLVMTypeRef ty = cg_type(C, t);
    int bits = dtype_bits(t);
    LLVMValueRef big = LLVMBuildICmp(b, LLVMIntUGE, y, LLVMConstInt(ty, (unsigned long long)bits, 0), "");
    LLVMValueRef amt = LLVMBuildAnd(b, y, LLVMConstInt(ty, (unsigned long long)(bits - 1), 0), "");
    if (op == IR_SHL) return LLVMBuildSelect(b, big, LLVMConstInt(ty, 0, 0), LLVMBuildShl(b, x, amt, ""), "");
    if (dtype_is_signed(t)) {
        LLVMValueRef a = LLVMBuildSelect(b, big, LLVMConstInt(ty, (unsigned long long)(bits - 1), 0), amt, "");
        return LLVMBuildAShr(b, x, a, "");
    }
    return LLVMBuildSelect(b, big, LLVMConstInt(ty, 0, 0), LLVMBuildLShr(b, x, amt, ""), "");
}

LLVMValueRef cg_binary_scalar(cg_ctx *C, blk_loc loc, ir_op op, int kind, blk_dtype t, LLVMValueRef x, LLVMValueRef y) {
    LLVMBuilderRef b = C->b;
    if (op == IR_CMP) {
        if (dtype_is_float(t)) {
            static const LLVMRealPredicate fp[] = {LLVMRealOEQ, LLVMRealUNE, LLVMRealOLT, LLVMRealOLE, LLVMRealOGT, LLVMRealOGE};
            LLVMValueRef wy = widen(C, t, y); /* one per statement: argument order is unspecified (F7) */
            LLVMValueRef wx = widen(C, t, x);
            return LLVMBuildFCmp(b, fp[kind], wx, wy, "");
        }
        bool s = dtype_is_signed(t);
        static const LLVMIntPredicate sp[] = {LLVMIntEQ, LLVMIntNE, LLVMIntSLT, LLVMIntSLE, LLVMIntSGT, LLVMIntSGE};
        static const LLVMIntPredicate up[] = {LLVMIntEQ, LLVMIntNE, LLVMIntULT, LLVMIntULE, LLVMIntUGT, LLVMIntUGE};
        return LLVMBuildICmp(b, s ? sp[kind] : up[kind], x, y, "");
    }
    if (dtype_is_float(t)) {
        bool dbl = t == DT_F64;
        LLVMTypeRef ft = dbl ? C->f64 : C->f32;
        LLVMValueRef a = widen(C, t, x), c = widen(C, t, y), r = NULL;
        LLVMValueRef args[2] = {a, c};
        switch (op) {
        case IR_ADD: r = LLVMBuildFAdd(b, a, c, ""); break;
        case IR_SUB: r = LLVMBuildFSub(b, a, c, ""); break;
        case IR_MUL: r = LLVMBuildFMul(b, a, c, ""); break;
        case IR_DIV: r = LLVMBuildFDiv(b, a, c, ""); break;
        case IR_REM: case IR_POW: case IR_ATAN2: case IR_HYPOT: case IR_REMAINDER: case IR_NEXTAFTER:
            r = libm_call(C, op, false, dbl, args, 2);
            break;
        case IR_COPYSIGN: r = cg_call_intrinsic(C, "llvm.copysign", &ft, 1, args, 2); break;
        case IR_MINIMUM: r = cg_call_intrinsic(C, "llvm.minimumnum", &ft, 1, args, 2); break;
        case IR_MAXIMUM: r = cg_call_intrinsic(C, "llvm.maximumnum", &ft, 1, args, 2); break;
        default:
            cg_error(C, loc, "'%s' on %s is not supported by the PTX backend", ir_op_table[op].name, dtype_name(t));
            return LLVMGetUndef(cg_type(C, t));
        }
        return narrow(C, loc, t, r);
    }
    LLVMTypeRef ty = cg_type(C, t);
    switch (op) {
    case IR_ADD: return LLVMBuildAdd(b, x, y, "");
    case IR_SUB: return LLVMBuildSub(b, x, y, "");
    case IR_MUL: return LLVMBuildMul(b, x, y, "");
    case IR_DIV: case IR_REM: return int_div_rem(C, op, t, x, y);
    case IR_AND: return LLVMBuildAnd(b, x, y, "");
    case IR_OR: return LLVMBuildOr(b, x, y, "");
    case IR_XOR: return LLVMBuildXor(b, x, y, "");
    case IR_SHL: case IR_SHR: return int_shift(C, op, t, x, y);
    case IR_MULHI: { /* the double-width product's high half (mul.hi) */
        int bits = dtype_bits(t);
        LLVMTypeRef wide = LLVMIntTypeInContext(C->llc, (unsigned)(2 * bits));
        bool s = dtype_is_signed(t);
        LLVMValueRef wx = s ? LLVMBuildSExt(b, x, wide, "") : LLVMBuildZExt(b, x, wide, "");
        LLVMValueRef wy = s ? LLVMBuildSExt(b, y, wide, "") : LLVMBuildZExt(b, y, wide, "");
        LLVMValueRef p = LLVMBuildMul(b, wx, wy, "");
        return LLVMBuildTrunc(b, LLVMBuildLShr(b, p, LLVMConstInt(wide, (unsigned long long)bits, 0), ""), ty, "");
    }
    case IR_MINIMUM: case IR_MAXIMUM: {
        if (t == DT_BOOL) return op == IR_MINIMUM ? LLVMBuildAnd(b, x, y, "") : LLVMBuildOr(b, x, y, "");
        bool s = dtype_is_signed(t);
        const char *n = op == IR_MINIMUM ? (s ? "llvm.smin" : "llvm.umin") : (s ? "llvm.smax" : "llvm.umax");
        LLVMValueRef a[2] = {x, y};
        return cg_call_intrinsic(C, n, &ty, 1, a, 2);
    }
    default:
        cg_error(C, loc, "'%s' on %s is not supported by the PTX backend", ir_op_table[op].name, dtype_name(t));
        return LLVMGetUndef(ty);
    }
}

LLVMValueRef cg_cast_scalar(cg_ctx *C, blk_loc loc, blk_dtype from, blk_dtype to, LLVMValueRef x) {
    LLVMBuilderRef b = C->b;
    if (from == to) return x;
    LLVMTypeRef tt = cg_type(C, to);
    if (to == DT_BOOL) {
        if (dtype_is_float(from)) {
            LLVMValueRef w = widen(C, from, x);
            return LLVMBuildFCmp(b, LLVMRealUNE, w, LLVMConstNull(LLVMTypeOf(w)), "");
        }
        return LLVMBuildICmp(b, LLVMIntNE, x, LLVMConstNull(LLVMTypeOf(x)), "");
    }
    if (from == DT_PTR || to == DT_PTR) {
        if (from == DT_PTR && dtype_is_int(to)) return LLVMBuildTrunc(b, LLVMBuildPtrToInt(b, x, C->i64, ""), tt, "");
        if (to == DT_PTR && (dtype_is_int(from) || from == DT_BOOL)) {
            LLVMValueRef w = dtype_is_signed(from) ? LLVMBuildSExt(b, x, C->i64, "") : LLVMBuildZExt(b, x, C->i64, "");
            if (from == DT_I64 || from == DT_U64) w = x;
            return LLVMBuildIntToPtr(b, w, C->ptr1, "");
        }
        cg_error(C, loc, "cast from %s to %s is not supported", dtype_name(from), dtype_name(to));
        return LLVMGetUndef(tt);
    }
    bool fi = dtype_is_float(from), ti = dtype_is_float(to);
    if (!fi && !ti) { /* int/bool -> int */
        int fb = dtype_bits(from), tb = dtype_bits(to);
        if (fb > tb) return LLVMBuildTrunc(b, x, tt, "");
        if (fb == tb) return x;
        return dtype_is_signed(from) ? LLVMBuildSExt(b, x, tt, "") : LLVMBuildZExt(b, x, tt, "");
    }
    if (!fi && ti) { /* int/bool -> float, one rounding (f8: through f32) */
        LLVMTypeRef dst = is_f8(to) ? C->f32 : tt;
        LLVMValueRef r = dtype_is_signed(from) ? LLVMBuildSIToFP(b, x, dst, "") : LLVMBuildUIToFP(b, x, dst, "");
        return is_f8(to) ? narrow(C, loc, to, r) : r;
    }
    if (fi && !ti) { /* float -> int: saturating, NaN -> 0 */
        LLVMValueRef w = widen(C, from, x);
        LLVMTypeRef ov[2] = {tt, LLVMTypeOf(w)};
        return cg_call_intrinsic(C, dtype_is_signed(to) ? "llvm.fptosi.sat" : "llvm.fptoui.sat", ov, 2, &w, 1);
    }
    /* float -> float */
    if (from == DT_F64 && (to == DT_F16 || to == DT_BF16 || to == DT_F32)) return LLVMBuildFPTrunc(b, x, tt, "");
    if (to == DT_F64) return LLVMBuildFPExt(b, widen(C, from, x), C->f64, "");
    LLVMValueRef w = from == DT_F64 ? LLVMBuildFPTrunc(b, x, C->f32, "") : widen(C, from, x); /* f32 */
    if (to == DT_F32) return w;
    return narrow(C, loc, to, w);
}

LLVMValueRef cg_elem_scalar(cg_ctx *C, ir_inst *in, LLVMValueRef *ops) {
    LLVMBuilderRef b = C->b;
    blk_dtype t = (blk_dtype)in->operands[0]->type.dtype, rt = (blk_dtype)in->results[0]->type.dtype;
    switch (in->op) {
    case IR_CAST: return cg_cast_scalar(C, in->loc, t, rt, ops[0]);
    case IR_BITCAST: return LLVMBuildBitCast(b, ops[0], cg_type(C, rt), ""); /* f8 is i8 in registers */
    case IR_POW:
        if ((in->flags & IRF_FAST) && dtype_is_float(t) && t != DT_F64) { /* __nv_fast_powf */
            LLVMValueRef a[2] = {widen(C, t, ops[0]), widen(C, t, ops[1])};
            return narrow(C, in->loc, t, libm_call(C, IR_POW, true, false, a, 2));
        }
        break;
    case IR_SELECT: return LLVMBuildSelect(b, ops[0], ops[1], ops[2], "");
    case IR_PTRADD: {
        blk_dtype ot = (blk_dtype)in->operands[1]->type.dtype;
        LLVMValueRef off = ops[1];
        if (dtype_bits(ot) < 64) off = dtype_is_signed(ot) ? LLVMBuildSExt(b, off, C->i64, "") : LLVMBuildZExt(b, off, C->i64, "");
        return LLVMBuildGEP2(b, cg_mem_type(C, (blk_dtype)in->operands[0]->type.pointee), ops[0], &off, 1, "");
    }
    case IR_FMA: {
        if (!dtype_is_float(t)) {
            return LLVMBuildAdd(b, LLVMBuildMul(b, ops[0], ops[1], ""), ops[2], "");
        }
        LLVMValueRef a[3] = {widen(C, t, ops[0]), widen(C, t, ops[1]), widen(C, t, ops[2])};
        LLVMTypeRef ft = LLVMTypeOf(a[0]);
        return narrow(C, in->loc, t, cg_call_intrinsic(C, "llvm.fma", &ft, 1, a, 3));
    }
    default:
        break;
    }
    if (in->num_operands == 1) {
        LLVMValueRef r = NULL;
        if (dtype_is_float(t)) {
            r = float_unary(C, in->op, (in->flags & IRF_FAST) != 0, t == DT_F64, widen(C, t, ops[0]));
            if (r) return narrow(C, in->loc, t, r);
        } else {
            r = int_unary(C, in->op, t, ops[0]);
            if (r) return r;
        }
        cg_error(C, in->loc, "'%s' on %s is not supported by the PTX backend", ir_op_table[in->op].name, dtype_name(t));
        return LLVMGetUndef(cg_type(C, rt));
    }
    return cg_binary_scalar(C, in->loc, in->op, in->kind, t, ops[0], ops[1]);
}

static LLVMValueRef const_value(cg_ctx *C, ir_inst *in, blk_dtype t) {
    LLVMTypeRef ty = cg_type(C, t);
    if (dtype_is_float(t)) {
        if (t == DT_F8E4M3) return LLVMConstInt(C->i8, fp_f64_to_f8e4m3(in->fval), 0);
        if (t == DT_F8E5M2) return LLVMConstInt(C->i8, fp_f64_to_f8e5m2(in->fval), 0);
        if (t == DT_F16) return LLVMConstBitCast(LLVMConstInt(C->i16, fp_f64_to_f16(in->fval), 0), C->f16);
        if (t == DT_BF16) return LLVMConstBitCast(LLVMConstInt(C->i16, fp_f64_to_bf16(in->fval), 0), C->bf16);
        return LLVMConstReal(ty, in->fval);
    }
    if (t == DT_PTR) return LLVMConstIntToPtr(LLVMConstInt(C->i64, (unsigned long long)in->ival, 0), C->ptr1);
    return LLVMConstInt(ty, (unsigned long long)in->ival, 1);
}

static cg_val fill(cg_ctx *C, ir_value *r, LLVMValueRef x) {
    if (!r->type.rank) {
        cg_val v = cg_new_val(C, 1, NULL);
        v.v[0] = x;
        return v;
    }
    const lay_layout *l = cg_lay(C, r);
    cg_val v = cg_new_val(C, lay_num_regs(l, r->type.shape, NULL), l);
    for (int i = 0; i < v.n; i++) v.v[i] = x;
    return v;
}

static LLVMValueRef sreg(cg_ctx *C, const char *base, int axis) {
    char name[64];
    snprintf(name, sizeof name, "llvm.nvvm.read.ptx.sreg.%s.%c", base, "xyz"[axis < 0 || axis > 2 ? 0 : axis]);
    return cg_call_intrinsic(C, name, NULL, 0, NULL, 0);
}

/* Philox4x32-10 exactly as compiler/ir/philox.c (bit for bit). */
static void philox(cg_ctx *C, LLVMValueRef seed64, LLVMValueRef offset32, LLVMValueRef out[2]) {
    LLVMBuilderRef b = C->b;
    LLVMValueRef k0 = LLVMBuildTrunc(b, seed64, C->i32, "");
    LLVMValueRef k1 = LLVMBuildTrunc(b, LLVMBuildLShr(b, seed64, LLVMConstInt(C->i64, 32, 0), ""), C->i32, "");
    LLVMValueRef c[4] = {offset32, cg_const_i32(C, 0), cg_const_i32(C, 0), cg_const_i32(C, 0)};
    LLVMValueRef m0 = LLVMConstInt(C->i64, 0xD2511F53u, 0), m1 = LLVMConstInt(C->i64, 0xCD9E8D57u, 0);
    for (int round = 0; round < 10; round++) {
        if (round > 0) {
            k0 = LLVMBuildAdd(b, k0, LLVMConstInt(C->i32, 0x9E3779B9u, 0), "");
            k1 = LLVMBuildAdd(b, k1, LLVMConstInt(C->i32, 0xBB67AE85u, 0), "");
        }
        LLVMValueRef p0 = LLVMBuildMul(b, LLVMBuildZExt(b, c[0], C->i64, ""), m0, "");
        LLVMValueRef p1 = LLVMBuildMul(b, LLVMBuildZExt(b, c[2], C->i64, ""), m1, "");
        LLVMValueRef hi0 = LLVMBuildTrunc(b, LLVMBuildLShr(b, p0, LLVMConstInt(C->i64, 32, 0), ""), C->i32, "");
        LLVMValueRef hi1 = LLVMBuildTrunc(b, LLVMBuildLShr(b, p1, LLVMConstInt(C->i64, 32, 0), ""), C->i32, "");
        LLVMValueRef lo0 = LLVMBuildTrunc(b, p0, C->i32, ""), lo1 = LLVMBuildTrunc(b, p1, C->i32, "");
        LLVMValueRef n0 = LLVMBuildXor(b, LLVMBuildXor(b, hi1, c[1], ""), k0, "");
        LLVMValueRef n2 = LLVMBuildXor(b, LLVMBuildXor(b, hi0, c[3], ""), k1, "");
        c[0] = n0;
        c[1] = lo1;
        c[2] = n2;
        c[3] = lo0;
    }
    out[0] = c[0];
    out[1] = c[1];
}

/* rand / randn / randint of one element (see philox.c for the formulas) */
static LLVMValueRef random_scalar(cg_ctx *C, ir_inst *in, LLVMValueRef seed, LLVMValueRef off) {
    LLVMBuilderRef b = C->b;
    blk_dtype st = (blk_dtype)in->operands[0]->type.dtype, ot = (blk_dtype)in->operands[1]->type.dtype;
    LLVMValueRef s64 = cg_cast_scalar(C, in->loc, st, dtype_is_signed(st) ? DT_I64 : DT_U64, seed);
    LLVMValueRef o32 = cg_cast_scalar(C, in->loc, ot, DT_U32, off);
    LLVMValueRef out[2];
    philox(C, s64, o32, out);
    blk_dtype rt = (blk_dtype)in->results[0]->type.dtype;
    LLVMValueRef scale = LLVMConstReal(C->f32, 1.0 / 16777216.0);
    if (in->op == IR_RANDINT) return cg_cast_scalar(C, in->loc, DT_U32, rt, out[0]);
    LLVMValueRef u = LLVMBuildLShr(b, out[0], cg_const_i32(C, 8), "");
    if (in->op == IR_RAND) return cg_cast_scalar(C, in->loc, DT_F32, rt, LLVMBuildFMul(b, LLVMBuildUIToFP(b, u, C->f32, ""), scale, ""));
    LLVMValueRef u1 = LLVMBuildFMul(b, LLVMBuildUIToFP(b, LLVMBuildAdd(b, u, cg_const_i32(C, 1), ""), C->f32, ""), scale, "");
    LLVMValueRef u2 = LLVMBuildFMul(b, LLVMBuildUIToFP(b, LLVMBuildLShr(b, out[1], cg_const_i32(C, 8), ""), C->f32, ""), scale, "");
    LLVMValueRef a1[1] = {u1};
    LLVMValueRef lg = cg_call_extern(C, "__nv_logf", C->f32, a1, 1);
    LLVMValueRef arg = LLVMBuildFMul(b, LLVMConstReal(C->f32, -2.0), lg, "");
    LLVMValueRef r = cg_call_intrinsic(C, "llvm.sqrt", &C->f32, 1, &arg, 1);
    LLVMValueRef a2[1] = {LLVMBuildFMul(b, LLVMConstReal(C->f32, 6.28318530717958647692), u2, "")};
    LLVMValueRef cs = cg_call_extern(C, "__nv_cosf", C->f32, a2, 1);
    return cg_cast_scalar(C, in->loc, DT_F32, rt, LLVMBuildFMul(b, r, cs, ""));
}

cg_val cg_broadcast_regs(cg_ctx *C, ir_value *x, const ir_type *to, const lay_layout *l) {
    cg_val xv = cg_get(C, x, l);
    cg_lay_info ri, xi;
    cg_lay_shape(l, to->rank, to->shape, &ri);
    cg_lay_shape(l, x->type.rank, x->type.shape, &xi);
    cg_val v = cg_new_val(C, ri.nregs, l);
    for (int i = 0; i < v.n; i++) {
        int k[IR_MAX_RANK];
        cg_reg_index(&ri, i, k);
        for (int d = 0; d < to->rank; d++)
            if (x->type.shape[d] == 1) k[d] = 0;
        int j = cg_reg_of(&xi, k);
        v.v[i] = j < xv.n ? xv.v[j] : LLVMGetUndef(cg_type(C, (blk_dtype)to->dtype));
    }
    return v;
}

/* The number of reads of v by the instructions of region r and below. */
static int reads_in(const ir_region *r, const ir_value *v) {
    int n = 0;
    for (const ir_inst *u = r->first; u; u = u->next) {
        for (int k = 0; k < u->num_operands; k++) n += u->operands[k] == v;
        for (int k = 0; k < u->num_regions; k++) n += reads_in(u->regions[k], v);
    }
    return n;
}

/* Attention's rescaled accumulator, `dot(p, v, acc * alpha[:, None])` in a
 * loop that carries acc: alpha is exp2(m_old - m_new), exactly 1 for every
 * row whose running maximum this block did not raise, which after the first
 * key blocks is most rows. Each warp skips its multiplies (one per
 * accumulator register: 128 per thread at D = 256 on 8 warps) when all of
 * its rows' factors are 1: acc * 1.0 is acc exactly (-0, infinities, NaN
 * and, without flush-to-zero, subnormals), so the result is the same bits.
 * The test is a compare per distinct factor register (two rows per thread
 * in an mma layout) and a vote.any, so the branch is warp-uniform.
 * Applies to an f32 `x * broadcast(expand_dims(f, 1))` whose x is an
 * argument of the enclosing loop's body and whose only reader is a dot's
 * accumulator operand, and only to accumulators of at least
 * RESCALE_SKIP_MIN_REGS registers per thread: measured on an H100 (docs/
 * benchmarks.md, twenty-first session), attention at D = 256 (128 per
 * thread) ran 4-12% faster in three of four rows, while at D = 128 and 64
 * (64 and 32 per thread) the split block lost 3-13%: the multiplies it
 * saves there are fewer than what the branch costs ptxas's scheduling.
 * Only on targets with wgmma: with mma.sync (sm_80 PTX on the H100) D = 128
 * measured 0-2% slower and D = 256 was not measured.
 * BLK_NO_RESCALE_SKIP=1 turns it off (A/B runs). */
#define RESCALE_SKIP_MIN_REGS 128
static bool rescale_skip(cg_ctx *C, ir_inst *in, const cg_val *ops, int n, const lay_layout *l) {
    ir_value *r = in->results[0];
    if (in->op != IR_MUL || r->type.rank != 2 || (blk_dtype)r->type.dtype != DT_F32 || !l || !in->parent ||
        !in->parent->parent || getenv("BLK_NO_RESCALE_SKIP"))
        return false;
    int xi = -1;
    for (int k = 0; k < 2; k++) {
        ir_value *x = in->operands[k], *f = in->operands[1 - k];
        ir_inst *bc = f->def, *ed = bc && bc->op == IR_BROADCAST ? bc->operands[0]->def : NULL;
        if (x->owner == in->parent && ed && ed->op == IR_EXPAND_DIMS && ed->axis == 1 &&
            ed->operands[0]->type.rank == 1)
            xi = k;
    }
    if (xi < 0 || reads_in(in->parent, r) != 1) return false;
    ir_inst *dot = NULL;
    for (ir_inst *u = in->next; u && !dot; u = u->next)
        if (u->op == IR_DOT && u->num_operands == 3 && u->operands[2] == r && u->operands[0] != r && u->operands[1] != r)
            dot = u;
    if (!dot || ops[0].n != n || ops[1].n != n || n < RESCALE_SKIP_MIN_REGS || !tgt_has(C->tgt, TGT_CAP_WGMMA))
        return false;
    const cg_val *x = &ops[xi], *f = &ops[1 - xi];
    LLVMBuilderRef b = C->b;
    LLVMValueRef one = LLVMConstReal(C->f32, 1.0), any = NULL;
    for (int i = 0; i < n; i++) {
        bool seen = false;
        for (int j = 0; j < i && !seen; j++) seen = f->v[j] == f->v[i];
        if (seen) continue;
        LLVMValueRef ne = LLVMBuildFCmp(b, LLVMRealUNE, f->v[i], one, "");
        any = any ? LLVMBuildOr(b, any, ne, "") : ne;
    }
    LLVMValueRef args[2] = {cg_const_i32(C, -1), any};
    LLVMValueRef vote = cg_call_intrinsic(C, "llvm.nvvm.vote.any.sync", NULL, 0, args, 2);
    cg_if I = cg_if_begin(C, vote, "rescale", "rescaled");
    cg_val z = cg_new_val(C, n, l);
    for (int i = 0; i < n; i++) {
        LLVMValueRef a[2];
        a[xi] = x->v[i];
        a[1 - xi] = f->v[i];
        z.v[i] = cg_elem_scalar(C, in, a);
    }
    LLVMBasicBlockRef end = cg_if_end(C, &I);
    cg_val v = cg_new_val(C, n, l);
    for (int i = 0; i < n; i++) {
        v.v[i] = LLVMBuildPhi(b, C->f32, "");
        cg_phi_add(v.v[i], z.v[i], end);
        cg_phi_add(v.v[i], x->v[i], I.from);
    }
    cg_set(C, r, v);
    return true;
}

bool cg_elementwise(cg_ctx *C, ir_inst *in) {
    ir_value *r = in->num_results ? in->results[0] : NULL;
    switch (in->op) {
    case IR_CONST:
        cg_set(C, r, fill(C, r, const_value(C, in, (blk_dtype)r->type.dtype)));
        return true;
    case IR_PROGRAM_ID: {
        LLVMValueRef id = sreg(C, "ctaid", in->axis);
        /* the cluster peer's id (cg_ws.c): programs 2i and 2i + 1 pair up */
        if (C->pid_peer && in->axis == 0) id = LLVMBuildXor(C->b, id, cg_const_i32(C, 1), "");
        cg_set(C, r, fill(C, r, id));
        return true;
    }
    case IR_NUM_PROGRAMS:
        cg_set(C, r, fill(C, r, sreg(C, "nctaid", in->axis)));
        return true;
    case IR_SPLAT:
        cg_set(C, r, fill(C, r, cg_get(C, in->operands[0], NULL).v[0]));
        return true;
    case IR_ARANGE: {
        const lay_layout *l = cg_lay(C, r);
        cg_lay_info li;
        cg_lay_info_get(C, l, 1, r->type.shape, &li);
        cg_val v = cg_new_val(C, li.nregs, l);
        for (int i = 0; i < v.n; i++)
            v.v[i] = LLVMBuildAdd(C->b, cg_reg_coord(C, &li, i, 0), cg_const_i32(C, in->ival), "");
        cg_set(C, r, v);
        return true;
    }
    case IR_RAND: case IR_RANDN: case IR_RANDINT: {
        const lay_layout *l = r->type.rank ? cg_lay(C, r) : NULL;
        cg_val sv = cg_get(C, in->operands[0], l), ov = cg_get(C, in->operands[1], l);
        int n = l ? lay_num_regs(l, r->type.shape, NULL) : 1;
        cg_val v = cg_new_val(C, n, l);
        for (int i = 0; i < n; i++) v.v[i] = random_scalar(C, in, sv.v[sv.n == n ? i : 0], ov.v[ov.n == n ? i : 0]);
        cg_set(C, r, v);
        return true;
    }
    case IR_MULTIPLE_OF:
    case IR_MAX_CONTIGUOUS: {
        cg_val x = cg_get(C, in->operands[0], r->type.rank ? cg_lay(C, r) : NULL);
        cg_set(C, r, x);
        return true;
    }
    case IR_BROADCAST: {
        const lay_layout *l = cg_lay(C, r);
        ir_value *x = in->operands[0];
        if (!x->type.rank) { cg_set(C, r, fill(C, r, cg_get(C, x, NULL).v[0])); return true; }
        cg_set(C, r, cg_broadcast_regs(C, x, &r->type, l));
        return true;
    }
    case IR_EXPAND_DIMS: {
        const lay_layout *l = cg_lay(C, r);
        ir_value *x = in->operands[0];
        if (!x->type.rank) { cg_set(C, r, fill(C, r, cg_get(C, x, NULL).v[0])); return true; }
        const lay_layout *have = cg_lay(C, x);
        const lay_layout *src = lay_eq(lay_expand(C->a, have, in->axis), l) ? have : lay_slice(C->a, l, in->axis);
        cg_val xv = cg_get(C, x, src);
        cg_val v = xv;
        v.lay = l;
        cg_set(C, r, v);
        return true;
    }
    default:
        break;
    }
    if (!ir_op_has(in->op, OPF_ELEM)) return false;
    const lay_layout *l = r->type.rank ? cg_lay(C, r) : NULL;
    int n = l ? lay_num_regs(l, r->type.shape, NULL) : 1;
    cg_val ops[3];
    for (int k = 0; k < in->num_operands && k < 3; k++) ops[k] = cg_get(C, in->operands[k], l);
    if (rescale_skip(C, in, ops, n, l)) return true;
    cg_val v = cg_new_val(C, n, l);
    /* registers that axisinfo proves equal (a mask `cols < n` is constant
     * over a thread's 8 columns when n % 16 == 0) are computed once: one
     * setp instead of 8, and one predicate for ptxas instead of 8 that it
     * spills to registers (P2R) in a long kernel */
    cg_lay_info li;
    const ax_info *ai = l ? ax_get(C->ax, r) : NULL;
    if (l) cg_lay_shape(l, r->type.rank, r->type.shape, &li);
    for (int i = 0; i < n; i++) {
        int rep = ai ? cg_reg_rep(&li, ai->constancy, i) : i;
        if (rep != i) { v.v[i] = v.v[rep]; continue; }
        LLVMValueRef a[3];
        for (int k = 0; k < in->num_operands && k < 3; k++) a[k] = ops[k].v[ops[k].n == n ? i : 0];
        v.v[i] = cg_elem_scalar(C, in, a);
    }
    cg_set(C, r, v);
    return true;
}

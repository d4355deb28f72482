/* eval.c — the scalar semantics of every elementwise op (see eval.h and the
 * header comment of ops.def). The interpreter and constant folding both call
 * these, so they cannot disagree.
 *
 * Choices made here, beyond ops.def:
 * - Float math on f16/bf16/f8 operands is done in f32 (float arithmetic and
 *   the float libm functions) and rounded to the dtype; f32 uses float
 *   arithmetic (correctly rounded for + - * / sqrt) and float libm; f64 uses
 *   double arithmetic and double libm. rsqrt is 1 / sqrt (two roundings).
 *   IRF_FAST is ignored: exact results are always allowed.
 * - REM on floats is C fmod (the dividend's sign).
 * - MINIMUM/MAXIMUM on floats: a NaN operand loses (both NaN: NaN); -0.0 is
 *   treated as smaller than +0.0, so minimum(-0, +0) = -0 and
 *   maximum(-0, +0) = +0 whatever the operand order.
 * - Shift amounts are read as unsigned in the operand's width: a negative
 *   amount is a huge one and gives 0 (SHR of a negative signed value: -1).
 * - Integer DIV/REM by 0 give 0; INT_MIN / -1 wraps to INT_MIN, INT_MIN % -1
 *   is 0.
 * - Integer ABS/NEG wrap (abs(INT_MIN) = INT_MIN); ABS/NEG of unsigned: NEG
 *   wraps, ABS is the identity.
 * - CAST float -> bool is `x != 0`, so NaN -> true (ops.def: "to bool is
 *   != 0"); float -> any other integer saturates with NaN -> 0.
 * - CAST int -> narrow float rounds once (64-bit magnitudes are first
 *   narrowed to 53 bits with a sticky bit, which is exact for the later
 *   rounding to <= 24 bits).
 * - Pointers cast to and from integers as 64-bit addresses; pointer <-> float
 *   casts are not defined (eval_supports says so) and give 0.
 * - Bool supports NOT, AND, OR, XOR, MINIMUM, MAXIMUM, CMP and CAST; integer
 *   ops do not take bool operands, float-only math does not take integers.
 * - The math library (log1p ... lgamma, atan2 ... nextafter) is C's libm in
 *   the operand's precision (f32: the float functions), except erfinv, which
 *   C lacks: erfinv_f64 below, within 2 ulp of f64 and correctly rounded to
 *   f32 but for rare ties. round is C round (half away from zero), rint
 *   rounds half to even. lgamma is log|gamma(x)| (lgamma_r: no global
 *   signgam, so the interpreter's threads do not race).
 * - CLZ/POPC/BREV/BSWAP work on the operand's width (clz(0) = width).
 *   MULHI is the high half of the double-width product, signed or unsigned
 *   by the operand type.
 * - BITCAST reads the operand's bits in the result dtype. A float operand's
 *   bits are those of its value: f32/f64 NaN payloads survive (x86 quiets a
 *   signalling NaN on the way: the quiet bit may differ from the GPU's); the
 *   interpreter holds an f16/bf16/f8 NaN as a double NaN, so its bits come
 *   back as the format's canonical NaN (0x7fff for f16 and bf16, sign and
 *   payload lost), where the GPU keeps a loaded NaN's bits.
 */
#define _GNU_SOURCE /* exp10, exp10f, lgamma_r, lgammaf_r */
#include <math.h>
#include <string.h>

#include "eval.h"

static ir_scalar_val int_val(int64_t i) {
    ir_scalar_val v;
    v.i = i;
    return v;
}

static ir_scalar_val float_val(double f) {
    ir_scalar_val v;
    v.f = f;
    return v;
}

static ir_scalar_val bool_val(bool b) { return int_val(b ? 1 : 0); }

/* Wrap a 64-bit pattern to dtype t's width and re-extend it. */
static ir_scalar_val wrap_int(blk_dtype t, uint64_t u) {
    ir_scalar_val v;
    int bits = dtype_bits(t);
    if (t == DT_BOOL) {
        v.i = u != 0;
    } else if (bits >= 64) {
        v.u = u;
    } else if (dtype_is_signed(t)) {
        uint64_t m = (uint64_t)1 << (bits - 1);
        u &= ((uint64_t)1 << bits) - 1;
        v.i = (int64_t)(u ^ m) - (int64_t)m; /* sign-extend without UB */
    } else {
        v.u = u & (((uint64_t)1 << bits) - 1);
    }
    return v;
}

/* Round a double to dtype t's float format, returned as a double. */
static double round_float(blk_dtype t, double x) {
    switch (t) {
    case DT_F64: return x;
    case DT_F32: return (float)x;
    case DT_F16: return fp_f16_to_f32(fp_f64_to_f16(x));
    case DT_BF16: return fp_bf16_to_f32(fp_f64_to_bf16(x));
    case DT_F8E4M3: return fp_f8e4m3_to_f32(fp_f64_to_f8e4m3(x));
    case DT_F8E5M2: return fp_f8e5m2_to_f32(fp_f64_to_f8e5m2(x));
    default: return x;
    }
}

ir_scalar_val eval_normalize(blk_dtype t, ir_scalar_val v) {
    if (dtype_is_float(t)) return float_val(round_float(t, v.f));
    if (t == DT_PTR) return v;
    return wrap_int(t, v.u);
}

/* ---- predicates ---- */

bool eval_supports(ir_op op, blk_dtype t) {
    bool fl = dtype_is_float(t), in = dtype_is_int(t), b = t == DT_BOOL;
    switch (op) {
    case IR_NEG: case IR_ABS:
    case IR_ADD: case IR_SUB: case IR_MUL: case IR_DIV: case IR_REM:
    case IR_FMA:
        return fl || in;
    case IR_NOT: return b;
    case IR_BITNOT: case IR_SHL: case IR_SHR: return in;
    case IR_AND: case IR_OR: case IR_XOR: return in || b;
    case IR_MINIMUM: case IR_MAXIMUM: return fl || in || b;
    case IR_EXP: case IR_EXP2: case IR_LOG: case IR_LOG2: case IR_SQRT: case IR_RSQRT:
    case IR_SIN: case IR_COS: case IR_TANH: case IR_SIGMOID: case IR_ERF:
    case IR_FLOOR: case IR_CEIL: case IR_POW:
    case IR_ROUND: case IR_RINT: case IR_TRUNC: case IR_LOG1P: case IR_EXPM1: case IR_EXP10: case IR_LOG10:
    case IR_TAN: case IR_ASIN: case IR_ACOS: case IR_ATAN: case IR_SINH: case IR_COSH: case IR_ASINH:
    case IR_ACOSH: case IR_ATANH: case IR_CBRT: case IR_ERFC: case IR_ERFINV: case IR_LGAMMA:
    case IR_ATAN2: case IR_HYPOT: case IR_REMAINDER: case IR_COPYSIGN: case IR_NEXTAFTER:
        return fl;
    case IR_CLZ: case IR_POPC: case IR_BREV: case IR_BSWAP: case IR_MULHI:
        return in;
    case IR_CMP: return t < DT_COUNT;
    case IR_PTRADD: return in || b; /* t is the offset dtype */
    case IR_CAST: return t < DT_COUNT;
    default: return false;
    }
}

/* ---- unary ---- */

/* erfinv, which C's libm lacks: Giles' single-precision approximation
 * ("Approximating the erfinv function", GPU Computing Gems, 2011) refined
 * by Newton steps on erf (|y| < 0.5) or on erfc (|y| >= 0.5, where 1 - |y|
 * is exact and erfc keeps its relative accuracy near the poles). */
static double erfinv_f64(double y) {
    if (isnan(y) || y < -1 || y > 1) return NAN;
    if (y == 1 || y == -1) return copysign(INFINITY, y);
    if (y == 0) return y; /* keeps -0 */
    if (fabs(y) < 0x1p-30) return y * 0.88622692545275801; /* sqrt(pi)/2 * y; the next term is 2^-60 smaller */
    double a = fabs(y), w = -log((1 - a) * (1 + a)), p;
    if (w < 5) {
        w -= 2.5;
        p = 2.81022636e-08;
        p = 3.43273939e-07 + p * w;
        p = -3.5233877e-06 + p * w;
        p = -4.39150654e-06 + p * w;
        p = 0.00021858087 + p * w;
        p = -0.00125372503 + p * w;
        p = -0.00417768164 + p * w;
        p = 0.246640727 + p * w;
        p = 1.50140941 + p * w;
    } else {
        w = sqrt(w) - 3;
        p = -0.000200214257;
        p = 0.000100950558 + p * w;
        p = 0.00134934322 + p * w;
        p = -0.00367342844 + p * w;
        p = 0.00573950773 + p * w;
        p = -0.0076224613 + p * w;
        p = 0.00943887047 + p * w;
        p = 1.00167406 + p * w;
        p = 2.83297682 + p * w;
    }
    double x = p * a, c = 1 - a;
    const double two_over_sqrt_pi = 1.1283791670955126;
    for (int k = 0; k < 8; k++) {
        double d = two_over_sqrt_pi * exp(-x * x); /* |d/dx erf(x)| */
        if (d == 0) break;
        double step = a < 0.5 ? (erf(x) - a) / d : (c - erfc(x)) / d;
        x -= step;
        if (fabs(step) <= 0x1p-60 * fabs(x)) break;
    }
    return copysign(x, y);
}

static double lgamma_f64(double x) {
    int sign;
    return lgamma_r(x, &sign);
}

static float lgamma_f32(float x) {
    int sign;
    return lgammaf_r(x, &sign);
}

static double unary_f64(ir_op op, double x) {
    switch (op) {
    case IR_NEG: return -x;
    case IR_ABS: return fabs(x);
    case IR_EXP: return exp(x);
    case IR_EXP2: return exp2(x);
    case IR_LOG: return log(x);
    case IR_LOG2: return log2(x);
    case IR_SQRT: return sqrt(x);
    case IR_RSQRT: return 1.0 / sqrt(x);
    case IR_SIN: return sin(x);
    case IR_COS: return cos(x);
    case IR_TANH: return tanh(x);
    case IR_SIGMOID: return 1.0 / (1.0 + exp(-x));
    case IR_ERF: return erf(x);
    case IR_FLOOR: return floor(x);
    case IR_CEIL: return ceil(x);
    case IR_ROUND: return round(x);
    case IR_RINT: return rint(x);
    case IR_TRUNC: return trunc(x);
    case IR_LOG1P: return log1p(x);
    case IR_EXPM1: return expm1(x);
    case IR_EXP10: return exp10(x);
    case IR_LOG10: return log10(x);
    case IR_TAN: return tan(x);
    case IR_ASIN: return asin(x);
    case IR_ACOS: return acos(x);
    case IR_ATAN: return atan(x);
    case IR_SINH: return sinh(x);
    case IR_COSH: return cosh(x);
    case IR_ASINH: return asinh(x);
    case IR_ACOSH: return acosh(x);
    case IR_ATANH: return atanh(x);
    case IR_CBRT: return cbrt(x);
    case IR_ERFC: return erfc(x);
    case IR_ERFINV: return erfinv_f64(x);
    case IR_LGAMMA: return lgamma_f64(x);
    default: return 0;
    }
}

static float unary_f32(ir_op op, float x) {
    switch (op) {
    case IR_NEG: return -x;
    case IR_ABS: return fabsf(x);
    case IR_EXP: return expf(x);
    case IR_EXP2: return exp2f(x);
    case IR_LOG: return logf(x);
    case IR_LOG2: return log2f(x);
    case IR_SQRT: return sqrtf(x);
    case IR_RSQRT: return 1.0f / sqrtf(x);
    case IR_SIN: return sinf(x);
    case IR_COS: return cosf(x);
    case IR_TANH: return tanhf(x);
    case IR_SIGMOID: return 1.0f / (1.0f + expf(-x));
    case IR_ERF: return erff(x);
    case IR_FLOOR: return floorf(x);
    case IR_CEIL: return ceilf(x);
    case IR_ROUND: return roundf(x);
    case IR_RINT: return rintf(x);
    case IR_TRUNC: return truncf(x);
    case IR_LOG1P: return log1pf(x);
    case IR_EXPM1: return expm1f(x);
    case IR_EXP10: return exp10f(x);
    case IR_LOG10: return log10f(x);
    case IR_TAN: return tanf(x);
    case IR_ASIN: return asinf(x);
    case IR_ACOS: return acosf(x);
    case IR_ATAN: return atanf(x);
    case IR_SINH: return sinhf(x);
    case IR_COSH: return coshf(x);
    case IR_ASINH: return asinhf(x);
    case IR_ACOSH: return acoshf(x);
    case IR_ATANH: return atanhf(x);
    case IR_CBRT: return cbrtf(x);
    case IR_ERFC: return erfcf(x);
    case IR_ERFINV: return (float)erfinv_f64(x);
    case IR_LGAMMA: return lgamma_f32(x);
    default: return 0;
    }
}

/* CLZ/POPC/BREV/BSWAP on the low `bits` bits of u. */
static uint64_t bit_op(ir_op op, int bits, uint64_t u) {
    uint64_t r = 0;
    switch (op) {
    case IR_CLZ:
        for (int k = bits - 1; k >= 0 && !((u >> k) & 1); k--) r++;
        return r;
    case IR_POPC:
        for (int k = 0; k < bits; k++) r += (u >> k) & 1;
        return r;
    case IR_BREV:
        for (int k = 0; k < bits; k++) r |= ((u >> k) & 1) << (bits - 1 - k);
        return r;
    case IR_BSWAP:
        for (int k = 0; k < bits / 8; k++) r |= ((u >> (8 * k)) & 0xff) << (bits - 8 - 8 * k);
        return r;
    default:
        return 0;
    }
}

ir_scalar_val eval_unary(ir_op op, blk_dtype t, ir_scalar_val x) {
    if (dtype_is_float(t)) {
        if (t == DT_F64) return float_val(unary_f64(op, x.f));
        return float_val(round_float(t, unary_f32(op, (float)x.f)));
    }
    switch (op) {
    case IR_NOT: return bool_val(x.i == 0);
    case IR_BITNOT: return wrap_int(t, ~x.u);
    case IR_NEG: return wrap_int(t, 0 - x.u);
    case IR_ABS:
        if (dtype_is_signed(t) && x.i < 0) return wrap_int(t, 0 - x.u);
        return x;
    case IR_CLZ: case IR_POPC: case IR_BREV: case IR_BSWAP: {
        int bits = dtype_bits(t);
        uint64_t u = bits >= 64 ? x.u : x.u & (((uint64_t)1 << bits) - 1);
        return wrap_int(t, bit_op(op, bits, u));
    }
    default: return int_val(0);
    }
}

/* ---- binary ---- */

static bool compare(int kind, int order) { /* order: -1, 0, 1; 2 = unordered */
    switch (kind) {
    case IR_CMP_EQ: return order == 0;
    case IR_CMP_NE: return order != 0;
    case IR_CMP_LT: return order == -1;
    case IR_CMP_LE: return order == -1 || order == 0;
    case IR_CMP_GT: return order == 1;
    case IR_CMP_GE: return order == 1 || order == 0;
    default: return false;
    }
}

static ir_scalar_val cmp_op(int kind, blk_dtype t, ir_scalar_val x, ir_scalar_val y) {
    int order;
    if (dtype_is_float(t)) {
        if (isnan(x.f) || isnan(y.f)) order = 2;
        else order = x.f < y.f ? -1 : x.f > y.f ? 1 : 0;
    } else if (dtype_is_signed(t) || t == DT_BOOL) {
        order = x.i < y.i ? -1 : x.i > y.i ? 1 : 0;
    } else {
        order = x.u < y.u ? -1 : x.u > y.u ? 1 : 0;
    }
    return bool_val(compare(kind, order));
}

/* fmin/fmax with a NaN losing and -0 < +0. */
static double float_min_max(bool is_max, double x, double y) {
    if (isnan(x)) return y;
    if (isnan(y)) return x;
    if (x == y) { /* equal, or zeros of different signs */
        if (is_max) return signbit(x) ? y : x;
        return signbit(x) ? x : y;
    }
    return (x < y) == is_max ? y : x;
}

static double binary_f64(ir_op op, double x, double y) {
    switch (op) {
    case IR_ADD: return x + y;
    case IR_SUB: return x - y;
    case IR_MUL: return x * y;
    case IR_DIV: return x / y;
    case IR_REM: return fmod(x, y);
    case IR_POW: return pow(x, y);
    case IR_ATAN2: return atan2(x, y);
    case IR_HYPOT: return hypot(x, y);
    case IR_REMAINDER: return remainder(x, y);
    case IR_COPYSIGN: return copysign(x, y);
    case IR_NEXTAFTER: return nextafter(x, y);
    case IR_MINIMUM: return float_min_max(false, x, y);
    case IR_MAXIMUM: return float_min_max(true, x, y);
    default: return 0;
    }
}

static float binary_f32(ir_op op, float x, float y) {
    switch (op) {
    case IR_ADD: return x + y;
    case IR_SUB: return x - y;
    case IR_MUL: return x * y;
    case IR_DIV: return x / y;
    case IR_REM: return fmodf(x, y);
    case IR_POW: return powf(x, y);
    case IR_ATAN2: return atan2f(x, y);
    case IR_HYPOT: return hypotf(x, y);
    case IR_REMAINDER: return remainderf(x, y);
    case IR_COPYSIGN: return copysignf(x, y);
    case IR_NEXTAFTER: return nextafterf(x, y);
    case IR_MINIMUM: return (float)float_min_max(false, x, y);
    case IR_MAXIMUM: return (float)float_min_max(true, x, y);
    default: return 0;
    }
}

static ir_scalar_val shift(ir_op op, blk_dtype t, ir_scalar_val x, ir_scalar_val y) {
    int bits = dtype_bits(t);
    uint64_t amount = y.u;
    if (bits < 64) amount &= ((uint64_t)1 << bits) - 1; /* as unsigned in t's width */
    bool negative = dtype_is_signed(t) && x.i < 0;
    if (amount >= (uint64_t)bits) {
        if (op == IR_SHR && negative) return int_val(-1);
        return int_val(0);
    }
    if (op == IR_SHL) return wrap_int(t, x.u << amount);
    if (negative) return int_val(~(~x.i >> amount)); /* arithmetic, no impl.-defined >> */
    return wrap_int(t, x.u >> amount);
}

/* High half of the double-width product. The two's-complement pattern of
 * the 128-bit product is the same for signed and unsigned operands once
 * they are extended by their signedness, so one unsigned multiply serves. */
static ir_scalar_val mulhi(blk_dtype t, ir_scalar_val x, ir_scalar_val y) {
    __extension__ typedef unsigned __int128 u128;
    int bits = dtype_bits(t);
    bool s = dtype_is_signed(t);
    u128 a = s ? (u128)(x.i < 0 ? ~(u128)0 << 64 | x.u : x.u) : x.u;
    u128 b = s ? (u128)(y.i < 0 ? ~(u128)0 << 64 | y.u : y.u) : y.u;
    return wrap_int(t, (uint64_t)((a * b) >> bits));
}

static ir_scalar_val int_div_rem(ir_op op, blk_dtype t, ir_scalar_val x, ir_scalar_val y) {
    if (y.u == 0) return int_val(0);
    if (dtype_is_signed(t)) {
        if (y.i == -1) /* avoids INT64_MIN / -1; wraps INT_MIN / -1 for narrow types */
            return op == IR_DIV ? wrap_int(t, 0 - x.u) : int_val(0);
        return wrap_int(t, (uint64_t)(op == IR_DIV ? x.i / y.i : x.i % y.i));
    }
    return wrap_int(t, op == IR_DIV ? x.u / y.u : x.u % y.u);
}

ir_scalar_val eval_binary(ir_op op, int kind, blk_dtype t, ir_scalar_val x, ir_scalar_val y) {
    if (op == IR_CMP) return cmp_op(kind, t, x, y);
    if (dtype_is_float(t)) {
        if (t == DT_F64) return float_val(binary_f64(op, x.f, y.f));
        return float_val(round_float(t, binary_f32(op, (float)x.f, (float)y.f)));
    }
    bool is_signed = dtype_is_signed(t) || t == DT_BOOL;
    switch (op) {
    case IR_ADD: return wrap_int(t, x.u + y.u);
    case IR_SUB: return wrap_int(t, x.u - y.u);
    case IR_MUL: return wrap_int(t, x.u * y.u);
    case IR_DIV: case IR_REM: return int_div_rem(op, t, x, y);
    case IR_AND: return wrap_int(t, x.u & y.u);
    case IR_OR: return wrap_int(t, x.u | y.u);
    case IR_XOR: return wrap_int(t, x.u ^ y.u);
    case IR_SHL: case IR_SHR: return shift(op, t, x, y);
    case IR_MULHI: return mulhi(t, x, y);
    case IR_MINIMUM:
        if (is_signed) return x.i <= y.i ? x : y;
        return x.u <= y.u ? x : y;
    case IR_MAXIMUM:
        if (is_signed) return x.i >= y.i ? x : y;
        return x.u >= y.u ? x : y;
    default: return int_val(0);
    }
}

ir_scalar_val eval_ptradd(ir_scalar_val ptr, blk_dtype pointee, blk_dtype offset_t, ir_scalar_val off) {
    /* .i of a signed offset is already sign-extended and .u of an unsigned
     * one zero-extended, so the 64-bit pattern is the offset either way. */
    (void)offset_t;
    ir_scalar_val r;
    r.u = ptr.u + off.u * (uint64_t)dtype_bytes(pointee);
    return r;
}

ir_scalar_val eval_fma(blk_dtype t, ir_scalar_val a, ir_scalar_val b, ir_scalar_val c) {
    if (t == DT_F64) return float_val(fma(a.f, b.f, c.f));
    if (dtype_is_float(t)) return float_val(round_float(t, fmaf((float)a.f, (float)b.f, (float)c.f)));
    return wrap_int(t, a.u * b.u + c.u);
}

/* ---- casts ---- */

/* float -> integer: truncate toward zero, saturate, NaN -> 0. */
static ir_scalar_val float_to_int(blk_dtype to, double x) {
    if (isnan(x)) return int_val(0);
    double t = trunc(x);
    int bits = dtype_bits(to);
    if (dtype_is_signed(to)) {
        double lo = -ldexp(1.0, bits - 1), hi = ldexp(1.0, bits - 1); /* hi is max + 1 */
        if (t <= lo) return int_val(bits == 64 ? INT64_MIN : -((int64_t)1 << (bits - 1)));
        if (t >= hi) return int_val(bits == 64 ? INT64_MAX : ((int64_t)1 << (bits - 1)) - 1);
        return int_val((int64_t)t);
    }
    ir_scalar_val v;
    double hi = ldexp(1.0, bits);
    if (t <= 0) v.u = 0;
    else if (t >= hi) v.u = bits == 64 ? UINT64_MAX : ((uint64_t)1 << bits) - 1;
    else v.u = (uint64_t)t;
    return v;
}

/* The integer x (of dtype from) as a double that rounds to `to` exactly as
 * x itself would: magnitudes above 2^53 keep 53 bits with a sticky bit. */
static double int_as_double_for_narrow(blk_dtype from, ir_scalar_val x) {
    bool neg = dtype_is_signed(from) && x.i < 0;
    uint64_t mag = neg ? 0 - x.u : x.u;
    int shift = 0;
    while ((mag >> shift) >= ((uint64_t)1 << 53)) shift++;
    uint64_t kept = mag >> shift;
    if (shift && (mag & (((uint64_t)1 << shift) - 1))) kept |= 1;
    double d = ldexp((double)kept, shift);
    return neg ? -d : d;
}

static ir_scalar_val int_to_float(blk_dtype from, blk_dtype to, ir_scalar_val x) {
    bool is_signed = dtype_is_signed(from) || from == DT_BOOL;
    if (to == DT_F64) return float_val(is_signed ? (double)x.i : (double)x.u);
    if (to == DT_F32) return float_val(is_signed ? (float)x.i : (float)x.u);
    return float_val(round_float(to, int_as_double_for_narrow(from, x)));
}

ir_scalar_val eval_cast(blk_dtype from, blk_dtype to, ir_scalar_val x) {
    bool ffl = dtype_is_float(from), tfl = dtype_is_float(to);
    if (to == DT_BOOL) return bool_val(ffl ? x.f != 0 : x.u != 0);
    if (ffl && tfl) return float_val(round_float(to, x.f));
    if (ffl) {
        if (to == DT_PTR) return int_val(0);
        return float_to_int(to, x.f);
    }
    if (tfl) {
        if (from == DT_PTR) return float_val(0);
        return int_to_float(from, to, x);
    }
    if (to == DT_PTR) return x; /* the source's extension already gives 64 bits */
    return wrap_int(to, x.u);
}

/* The bits of a value of dtype t (not bool or pointer), zero-extended. */
static uint64_t float_bits(blk_dtype t, double f) {
    switch (t) {
    case DT_F64: { uint64_t u; memcpy(&u, &f, 8); return u; }
    case DT_F32: { float x = (float)f; uint32_t u; memcpy(&u, &x, 4); return u; }
    case DT_F16: return fp_f64_to_f16(f);
    case DT_BF16: return fp_f64_to_bf16(f);
    case DT_F8E4M3: return fp_f64_to_f8e4m3(f);
    case DT_F8E5M2: return fp_f64_to_f8e5m2(f);
    default: return 0;
    }
}

static double float_from_bits(blk_dtype t, uint64_t u) {
    switch (t) {
    case DT_F64: { double d; memcpy(&d, &u, 8); return d; }
    case DT_F32: { uint32_t w = (uint32_t)u; float x; memcpy(&x, &w, 4); return x; }
    case DT_F16: return fp_f16_to_f32((uint16_t)u);
    case DT_BF16: return fp_bf16_to_f32((uint16_t)u);
    case DT_F8E4M3: return fp_f8e4m3_to_f32((uint8_t)u);
    case DT_F8E5M2: return fp_f8e5m2_to_f32((uint8_t)u);
    default: return 0;
    }
}

ir_scalar_val eval_bitcast(blk_dtype from, blk_dtype to, ir_scalar_val x) {
    int bits = dtype_bits(from);
    uint64_t u = dtype_is_float(from) ? float_bits(from, x.f) : bits >= 64 ? x.u : x.u & (((uint64_t)1 << bits) - 1);
    if (dtype_is_float(to)) return float_val(float_from_bits(to, u));
    return wrap_int(to, u);
}

/* ---- memory ---- */

ir_scalar_val eval_load_mem(blk_dtype t, const void *p) {
    ir_scalar_val v;
    v.u = 0;
    switch (t) {
    case DT_BOOL: { uint8_t b; memcpy(&b, p, 1); v.i = b != 0; break; }
    case DT_I8: { int8_t x; memcpy(&x, p, 1); v.i = x; break; }
    case DT_I16: { int16_t x; memcpy(&x, p, 2); v.i = x; break; }
    case DT_I32: { int32_t x; memcpy(&x, p, 4); v.i = x; break; }
    case DT_I64: memcpy(&v.i, p, 8); break;
    case DT_U8: { uint8_t x; memcpy(&x, p, 1); v.u = x; break; }
    case DT_U16: { uint16_t x; memcpy(&x, p, 2); v.u = x; break; }
    case DT_U32: { uint32_t x; memcpy(&x, p, 4); v.u = x; break; }
    case DT_U64: case DT_PTR: memcpy(&v.u, p, 8); break;
    case DT_F8E4M3: { uint8_t x; memcpy(&x, p, 1); v.f = fp_f8e4m3_to_f32(x); break; }
    case DT_F8E5M2: { uint8_t x; memcpy(&x, p, 1); v.f = fp_f8e5m2_to_f32(x); break; }
    case DT_F16: { uint16_t x; memcpy(&x, p, 2); v.f = fp_f16_to_f32(x); break; }
    case DT_BF16: { uint16_t x; memcpy(&x, p, 2); v.f = fp_bf16_to_f32(x); break; }
    case DT_F32: { float x; memcpy(&x, p, 4); v.f = x; break; }
    case DT_F64: memcpy(&v.f, p, 8); break;
    default: break;
    }
    return v;
}

void eval_store_mem(blk_dtype t, void *p, ir_scalar_val v) {
    switch (t) {
    case DT_BOOL: { uint8_t b = v.i != 0; memcpy(p, &b, 1); break; }
    case DT_I8: case DT_U8: { uint8_t x = (uint8_t)v.u; memcpy(p, &x, 1); break; }
    case DT_I16: case DT_U16: { uint16_t x = (uint16_t)v.u; memcpy(p, &x, 2); break; }
    case DT_I32: case DT_U32: { uint32_t x = (uint32_t)v.u; memcpy(p, &x, 4); break; }
    case DT_I64: case DT_U64: case DT_PTR: memcpy(p, &v.u, 8); break;
    case DT_F8E4M3: { uint8_t x = fp_f64_to_f8e4m3(v.f); memcpy(p, &x, 1); break; }
    case DT_F8E5M2: { uint8_t x = fp_f64_to_f8e5m2(v.f); memcpy(p, &x, 1); break; }
    case DT_F16: { uint16_t x = fp_f64_to_f16(v.f); memcpy(p, &x, 2); break; }
    case DT_BF16: { uint16_t x = fp_f64_to_bf16(v.f); memcpy(p, &x, 2); break; }
    case DT_F32: { float x = (float)v.f; memcpy(p, &x, 4); break; }
    case DT_F64: memcpy(p, &v.f, 8); break;
    default: break;
    }
}

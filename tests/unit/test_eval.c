/* test_eval — the scalar semantics of compiler/ir/eval.c (ops.def's header):
 * integer wrap, division and remainder signs, x/0, shifts, saturating casts,
 * NaN rules, memory encoding, Philox known-answer vectors, rand/randn. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ir/eval.h"

#include "../test_util.h"

static ir_scalar_val I(int64_t v) { ir_scalar_val x; x.i = v; return x; }
static ir_scalar_val U(uint64_t v) { ir_scalar_val x; x.u = v; return x; }
static ir_scalar_val F(double v) { ir_scalar_val x; x.f = v; return x; }

static int64_t bin_i(ir_op op, blk_dtype t, int64_t a, int64_t b) { return eval_binary(op, 0, t, I(a), I(b)).i; }
static uint64_t bin_u(ir_op op, blk_dtype t, uint64_t a, uint64_t b) { return eval_binary(op, 0, t, U(a), U(b)).u; }
static double bin_f(ir_op op, blk_dtype t, double a, double b) { return eval_binary(op, 0, t, F(a), F(b)).f; }
static bool cmp(int kind, blk_dtype t, ir_scalar_val a, ir_scalar_val b) { return eval_binary(IR_CMP, kind, t, a, b).i != 0; }
static bool same(double a, double b) { return (isnan(a) && isnan(b)) || (a == b && signbit(a) == signbit(b)); }

static void test_integers(void) {
    CHECK(bin_i(IR_ADD, DT_I32, INT32_MAX, 1) == INT32_MIN, "i32 add wraps");
    CHECK(bin_i(IR_MUL, DT_I8, 100, 3) == 44, "i8 mul wraps (300 -> 44)");
    CHECK(bin_i(IR_SUB, DT_I16, -32768, 1) == 32767, "i16 sub wraps");
    CHECK(bin_u(IR_SUB, DT_U8, 0, 1) == 255, "u8 sub wraps");
    CHECK(bin_u(IR_ADD, DT_U32, 0xFFFFFFFFu, 2) == 1, "u32 add wraps");
    CHECK(bin_i(IR_ADD, DT_I64, INT64_MAX, 1) == INT64_MIN, "i64 add wraps");
    CHECK(bin_i(IR_DIV, DT_I32, -7, 2) == -3, "div truncates toward zero");
    CHECK(bin_i(IR_DIV, DT_I32, 7, -2) == -3, "div truncates toward zero (neg divisor)");
    CHECK(bin_i(IR_REM, DT_I32, -7, 2) == -1, "rem has the dividend's sign");
    CHECK(bin_i(IR_REM, DT_I32, 7, -2) == 1, "rem has the dividend's sign (pos)");
    CHECK(bin_i(IR_DIV, DT_I32, 5, 0) == 0 && bin_i(IR_REM, DT_I32, 5, 0) == 0, "x/0 and x%%0 give 0");
    CHECK(bin_u(IR_DIV, DT_U64, 5, 0) == 0 && bin_u(IR_REM, DT_U8, 5, 0) == 0, "unsigned x/0 gives 0");
    CHECK(bin_i(IR_DIV, DT_I32, INT32_MIN, -1) == INT32_MIN, "INT_MIN / -1 wraps");
    CHECK(bin_i(IR_DIV, DT_I64, INT64_MIN, -1) == INT64_MIN, "INT64_MIN / -1 wraps");
    CHECK(bin_i(IR_REM, DT_I64, INT64_MIN, -1) == 0, "INT64_MIN %% -1 is 0");
    CHECK(bin_u(IR_DIV, DT_U32, 0xFFFFFFFFu, 2) == 0x7FFFFFFFu, "unsigned div");
    /* shifts */
    CHECK(bin_i(IR_SHL, DT_I32, 1, 31) == INT32_MIN, "shl into the sign bit");
    CHECK(bin_i(IR_SHL, DT_I32, 1, 32) == 0 && bin_i(IR_SHL, DT_I32, 1, 100) == 0, "shl >= bits gives 0");
    CHECK(bin_i(IR_SHR, DT_I32, -8, 1) == -4, "shr is arithmetic for signed");
    CHECK(bin_i(IR_SHR, DT_I32, -8, 32) == -1 && bin_i(IR_SHR, DT_I32, 8, 40) == 0, "shr >= bits");
    CHECK(bin_i(IR_SHR, DT_I32, -8, -1) == -1, "negative shift amount is huge");
    CHECK(bin_u(IR_SHR, DT_U32, 0x80000000u, 31) == 1, "shr is logical for unsigned");
    CHECK(bin_u(IR_SHR, DT_U8, 0x80, 8) == 0, "u8 shr by 8");
    CHECK(bin_i(IR_SHL, DT_I8, 0x41, 1) == -126, "i8 shl wraps");
    CHECK(bin_i(IR_SHR, DT_I64, INT64_MIN, 63) == -1, "i64 shr 63");
    CHECK(bin_i(IR_SHL, DT_I64, 1, 64) == 0, "i64 shl 64");
    /* bitwise, unary */
    CHECK(bin_i(IR_AND, DT_I32, -1, 0xF0) == 0xF0 && bin_i(IR_XOR, DT_I8, 0x7F, -1) == -128, "bitwise");
    CHECK(eval_unary(IR_BITNOT, DT_U8, U(0x0F)).u == 0xF0, "u8 bitnot");
    CHECK(eval_unary(IR_BITNOT, DT_I32, I(0)).i == -1, "i32 bitnot");
    CHECK(eval_unary(IR_NEG, DT_I32, I(INT32_MIN)).i == INT32_MIN, "neg INT_MIN wraps");
    CHECK(eval_unary(IR_ABS, DT_I32, I(INT32_MIN)).i == INT32_MIN, "abs INT_MIN wraps");
    CHECK(eval_unary(IR_ABS, DT_I16, I(-5)).i == 5, "abs");
    CHECK(eval_unary(IR_NEG, DT_U16, U(1)).u == 0xFFFF, "neg unsigned wraps");
    CHECK(eval_unary(IR_NOT, DT_BOOL, I(0)).i == 1 && eval_unary(IR_NOT, DT_BOOL, I(1)).i == 0, "not");
    CHECK(bin_i(IR_MINIMUM, DT_I32, -3, 2) == -3 && bin_u(IR_MAXIMUM, DT_U32, 0xFFFFFFFFu, 1) == 0xFFFFFFFFu, "int min/max");
    CHECK(cmp(IR_CMP_LT, DT_U32, U(1), U(0xFFFFFFFFu)) && !cmp(IR_CMP_LT, DT_I32, I(1), I(-1)), "signedness of cmp");
    CHECK(eval_fma(DT_I8, I(100), I(2), I(100)).i == 44, "int fma wraps");
    CHECK(eval_normalize(DT_I8, I(200)).i == -56 && eval_normalize(DT_U16, I(-1)).u == 0xFFFF, "normalize wraps");
}

static void test_floats(void) {
    CHECK(bin_f(IR_ADD, DT_F32, 1.0, 0x1p-30) == 1.0, "f32 add rounds to f32");
    CHECK(bin_f(IR_ADD, DT_F64, 1.0, 0x1p-30) == 1.0 + 0x1p-30, "f64 add keeps f64");
    CHECK(bin_f(IR_ADD, DT_F16, 1.0, 0x1p-11) == 1.0, "f16 add ties to even");
    CHECK(bin_f(IR_ADD, DT_F16, 65504, 65504) == INFINITY, "f16 add overflows to inf");
    CHECK(bin_f(IR_MUL, DT_BF16, 1.0 + 0x1p-7, 1.0 + 0x1p-7) == 1.0 + 0x1p-6, "bf16 mul rounds");
    CHECK(bin_f(IR_ADD, DT_F8E4M3, 448, 448) == 448, "f8e4m3 add saturates");
    CHECK(bin_f(IR_DIV, DT_F32, 1, 0) == INFINITY && isnan(bin_f(IR_DIV, DT_F32, 0, 0)), "float x/0");
    CHECK(bin_f(IR_REM, DT_F32, -7.5, 2) == -1.5 && bin_f(IR_REM, DT_F64, 7.5, -2) == 1.5, "float rem is fmod");
    /* minimum/maximum: a NaN operand loses; -0 < +0 */
    CHECK(bin_f(IR_MINIMUM, DT_F32, NAN, 3) == 3 && bin_f(IR_MINIMUM, DT_F32, 3, NAN) == 3, "min NaN loses");
    CHECK(bin_f(IR_MAXIMUM, DT_F64, NAN, -3) == -3 && bin_f(IR_MAXIMUM, DT_F16, -3, NAN) == -3, "max NaN loses");
    CHECK(isnan(bin_f(IR_MAXIMUM, DT_F32, NAN, NAN)), "max of NaNs is NaN");
    CHECK(same(bin_f(IR_MINIMUM, DT_F32, 0.0, -0.0), -0.0) && same(bin_f(IR_MINIMUM, DT_F32, -0.0, 0.0), -0.0), "min -0");
    CHECK(same(bin_f(IR_MAXIMUM, DT_F32, 0.0, -0.0), 0.0) && same(bin_f(IR_MAXIMUM, DT_F32, -0.0, 0.0), 0.0), "max +0");
    /* comparisons are ordered except NE */
    ir_scalar_val n = F(NAN), one = F(1);
    for (int k = IR_CMP_EQ; k <= IR_CMP_GE; k++) {
        bool want = k == IR_CMP_NE;
        CHECK(cmp(k, DT_F32, n, one) == want && cmp(k, DT_F32, one, n) == want && cmp(k, DT_F32, n, n) == want,
              "cmp kind %d with NaN", k);
    }
    CHECK(cmp(IR_CMP_EQ, DT_F32, F(0.0), F(-0.0)) && cmp(IR_CMP_LE, DT_F64, one, one), "cmp zeros");
    /* unary */
    CHECK(eval_unary(IR_SQRT, DT_F32, F(2)).f == (double)sqrtf(2.0f), "f32 sqrt");
    CHECK(eval_unary(IR_EXP, DT_F64, F(1)).f == exp(1.0), "f64 exp");
    CHECK(eval_unary(IR_EXP, DT_F32, F(1)).f == (double)expf(1.0f), "f32 exp");
    CHECK(eval_unary(IR_EXP, DT_F16, F(1)).f == 2.71875, "f16 exp rounds to f16");
    CHECK(eval_unary(IR_SIGMOID, DT_F32, F(0)).f == 0.5, "sigmoid(0)");
    CHECK(eval_unary(IR_FLOOR, DT_F32, F(-1.5)).f == -2 && eval_unary(IR_CEIL, DT_F32, F(-1.5)).f == -1, "floor/ceil");
    CHECK(same(eval_unary(IR_NEG, DT_F32, F(0)).f, -0.0) && eval_unary(IR_ABS, DT_BF16, F(-2)).f == 2, "neg/abs");
    CHECK(eval_unary(IR_RSQRT, DT_F32, F(4)).f == 0.5, "rsqrt");
    CHECK(eval_fma(DT_F32, F(1 + 0x1p-12), F(1 + 0x1p-12), F(-1)).f == (double)fmaf(1 + 0x1p-12f, 1 + 0x1p-12f, -1), "fma single rounding");
    CHECK(bin_f(IR_POW, DT_F32, 2, 10) == 1024, "pow");
    CHECK(eval_normalize(DT_F32, F(0.1)).f == (double)0.1f, "normalize f32");
    CHECK(eval_normalize(DT_BF16, F(1.0 / 3)).f == (double)fp_bf16_to_f32(fp_f64_to_bf16(1.0 / 3)), "normalize bf16");
}

static void test_casts(void) {
    CHECK(eval_cast(DT_F32, DT_I32, F(3.9)).i == 3 && eval_cast(DT_F32, DT_I32, F(-3.9)).i == -3, "trunc toward 0");
    CHECK(eval_cast(DT_F32, DT_I32, F(1e10)).i == INT32_MAX && eval_cast(DT_F32, DT_I32, F(-1e10)).i == INT32_MIN, "saturate i32");
    CHECK(eval_cast(DT_F64, DT_I8, F(300)).i == 127 && eval_cast(DT_F64, DT_I8, F(-300)).i == -128, "saturate i8");
    CHECK(eval_cast(DT_F32, DT_U8, F(-5)).u == 0 && eval_cast(DT_F32, DT_U8, F(256)).u == 255, "saturate u8");
    CHECK(eval_cast(DT_F32, DT_I32, F(NAN)).i == 0 && eval_cast(DT_F64, DT_U64, F(NAN)).u == 0, "NaN -> 0");
    CHECK(eval_cast(DT_F32, DT_I64, F(INFINITY)).i == INT64_MAX && eval_cast(DT_F32, DT_I64, F(-INFINITY)).i == INT64_MIN, "inf saturates i64");
    CHECK(eval_cast(DT_F64, DT_U64, F(1e30)).u == UINT64_MAX, "saturate u64");
    CHECK(eval_cast(DT_F64, DT_I64, F(9223372036854775807.0)).i == INT64_MAX, "2^63 saturates");
    CHECK(eval_cast(DT_F64, DT_I64, F(-9223372036854775808.0)).i == INT64_MIN, "-2^63 exact");
    CHECK(eval_cast(DT_F64, DT_U32, F(4294967295.5)).u == 4294967295u, "u32 max");
    CHECK(eval_cast(DT_F32, DT_BOOL, F(0.5)).i == 1 && eval_cast(DT_F32, DT_BOOL, F(-0.0)).i == 0, "float -> bool");
    CHECK(eval_cast(DT_F32, DT_BOOL, F(NAN)).i == 1, "NaN -> bool is != 0");
    CHECK(eval_cast(DT_I32, DT_BOOL, I(-2)).i == 1 && eval_cast(DT_U8, DT_BOOL, U(0)).i == 0, "int -> bool");
    CHECK(eval_cast(DT_I32, DT_I8, I(0x1FF)).i == -1 && eval_cast(DT_I8, DT_U32, I(-1)).u == 0xFFFFFFFFu, "int -> int");
    CHECK(eval_cast(DT_U8, DT_I32, U(0xFF)).i == 255 && eval_cast(DT_BOOL, DT_I32, I(1)).i == 1, "extension by source");
    CHECK(eval_cast(DT_I32, DT_F32, I(16777217)).f == 16777216.0, "int -> f32 RNE");
    CHECK(eval_cast(DT_I64, DT_F32, I(INT64_MAX)).f == 0x1p63, "i64 -> f32");
    CHECK(eval_cast(DT_U64, DT_F64, U(UINT64_MAX)).f == 0x1p64, "u64 -> f64");
    CHECK(eval_cast(DT_I32, DT_F16, I(65519)).f == 65504 && eval_cast(DT_I32, DT_F16, I(65520)).f == INFINITY, "int -> f16 overflow");
    CHECK(eval_cast(DT_I32, DT_F16, I(2049)).f == 2048 && eval_cast(DT_I32, DT_F16, I(2051)).f == 2052, "int -> f16 ties");
    CHECK(eval_cast(DT_I32, DT_F8E4M3, I(1000)).f == 448 && eval_cast(DT_I32, DT_F8E5M2, I(-100000)).f == -57344, "int -> f8 saturates");
    /* i64 -> bf16 with a tie that double rounding through f64 would break:
     * 2^62 + 2^54 + 1 is just above the bf16 midpoint 2^62 + 2^54, but the
     * nearest double is the midpoint itself, which ties to even (down). */
    CHECK(eval_cast(DT_I64, DT_BF16, I((INT64_C(1) << 62) + (INT64_C(1) << 54) + 1)).f == 0x1.02p62, "i64 -> bf16 single rounding");
    CHECK(eval_cast(DT_F64, DT_F32, F(1 + 0x1p-24)).f == 1.0, "f64 -> f32 tie");
    CHECK(eval_cast(DT_F64, DT_F16, F(1.0 + 0x1p-11 + 0x1p-40)).f == 1 + 0x1p-10, "f64 -> f16 directly");
    CHECK(eval_cast(DT_F32, DT_F8E4M3, F(INFINITY)).f == 448 && isnan(eval_cast(DT_F32, DT_F8E4M3, F(NAN)).f), "f8 sat/NaN");
    CHECK(eval_cast(DT_F32, DT_F16, F(1e6)).f == INFINITY, "f16 overflow -> inf");
    CHECK(eval_cast(DT_F16, DT_F32, F(65504)).f == 65504, "widening exact");
    CHECK(eval_cast(DT_PTR, DT_I64, U(0x1234)).u == 0x1234 && eval_cast(DT_I64, DT_PTR, I(0x10)).u == 0x10, "ptr <-> int");
    ir_scalar_val p = eval_ptradd(U(1000), DT_F32, DT_I32, I(-2));
    CHECK(p.u == 992, "ptradd sign-extends");
    CHECK(eval_ptradd(U(1000), DT_F64, DT_U32, U(0xFFFFFFFFu)).u == 1000 + 8 * 0xFFFFFFFFull, "ptradd zero-extends unsigned");
    CHECK(eval_ptradd(U(1000), DT_BOOL, DT_I64, I(3)).u == 1003, "bool pointee is 1 byte");
    CHECK(eval_supports(IR_ADD, DT_F32) && !eval_supports(IR_SIN, DT_I32) && !eval_supports(IR_ADD, DT_BOOL), "supports");
    CHECK(eval_supports(IR_AND, DT_BOOL) && !eval_supports(IR_SHL, DT_F32) && eval_supports(IR_CAST, DT_F8E5M2), "supports 2");
}

static void test_memory(void) {
    unsigned char buf[16];
    memset(buf, 0xAA, sizeof buf);
    eval_store_mem(DT_I32, buf + 1, I(-2)); /* unaligned */
    CHECK(buf[1] == 0xFE && buf[2] == 0xFF && buf[4] == 0xFF && buf[5] == 0xAA, "little-endian i32 store");
    CHECK(eval_load_mem(DT_I32, buf + 1).i == -2 && eval_load_mem(DT_U32, buf + 1).u == 0xFFFFFFFEu, "i32/u32 load");
    CHECK(eval_load_mem(DT_I8, buf + 1).i == -2 && eval_load_mem(DT_U8, buf + 1).u == 0xFE, "byte loads");
    eval_store_mem(DT_BOOL, buf, I(1));
    CHECK(buf[0] == 1 && eval_load_mem(DT_BOOL, buf).i == 1, "bool is one byte 0/1");
    buf[0] = 7;
    CHECK(eval_load_mem(DT_BOOL, buf).i == 1, "nonzero byte reads as true");
    eval_store_mem(DT_F16, buf + 3, F(1.0));
    CHECK(buf[3] == 0x00 && buf[4] == 0x3C && eval_load_mem(DT_F16, buf + 3).f == 1.0, "f16 memory");
    eval_store_mem(DT_BF16, buf, F(-2.0));
    CHECK(buf[0] == 0x00 && buf[1] == 0xC0, "bf16 memory");
    eval_store_mem(DT_F8E4M3, buf, F(1000));
    CHECK(buf[0] == 0x7E, "f8 store saturates");
    eval_store_mem(DT_F64, buf + 5, F(0.1));
    CHECK(eval_load_mem(DT_F64, buf + 5).f == 0.1, "f64 memory");
    eval_store_mem(DT_F32, buf + 2, F(0.1f));
    CHECK(eval_load_mem(DT_F32, buf + 2).f == (double)0.1f, "f32 memory");
    eval_store_mem(DT_PTR, buf + 3, U(0x0102030405060708ull));
    CHECK(buf[3] == 0x08 && buf[10] == 0x01 && eval_load_mem(DT_PTR, buf + 3).u == 0x0102030405060708ull, "ptr memory");
}

static void test_philox(void) {
    struct { uint32_t ctr[4], key[2], out[4]; } kat[] = {
        {{0, 0, 0, 0}, {0, 0}, {0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}},
        {{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff}, {0xffffffff, 0xffffffff},
         {0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}},
        {{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}, {0xa4093822, 0x299f31d0},
         {0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}},
    };
    for (int i = 0; i < 3; i++) {
        uint32_t out[4];
        philox4x32_10(kat[i].ctr, kat[i].key, out);
        CHECK(memcmp(out, kat[i].out, sizeof out) == 0, "philox KAT %d: %08x %08x %08x %08x", i, out[0], out[1],
              out[2], out[3]);
    }
    /* blk's mapping: key = (seed lo, seed hi), counter = (offset, 0, 0, 0) */
    uint64_t seed = 0x299f31d0a4093822ull;
    uint32_t ctr[4] = {77, 0, 0, 0}, key[2] = {0xa4093822, 0x299f31d0}, out[4];
    philox4x32_10(ctr, key, out);
    CHECK(blk_randint(seed, 77) == out[0], "randint = out[0]");
    CHECK(blk_rand(seed, 77) == (float)(out[0] >> 8) * 0x1p-24f, "rand = (out[0] >> 8) * 2^-24");
    uint32_t z[4] = {0, 0, 0, 0}, zk[2] = {0, 0};
    philox4x32_10(z, zk, out);
    CHECK(blk_randint(0, 0) == 0x6627e8d5, "randint(0, 0) is the KAT's first word");

    double sum = 0, sum2 = 0, rsum = 0;
    float rmin = 1, rmax = 0;
    const int n = 100000;
    for (int i = 0; i < n; i++) {
        float r = blk_rand(12345, (uint32_t)i);
        CHECK(r >= 0.0f && r < 1.0f, "rand in [0, 1): %g", r);
        if (r < rmin) rmin = r;
        if (r > rmax) rmax = r;
        rsum += r;
        float g = blk_randn(12345, (uint32_t)i);
        CHECK(isfinite(g), "randn finite");
        sum += g;
        sum2 += (double)g * g;
    }
    double mean = sum / n, var = sum2 / n - mean * mean;
    CHECK(fabs(rsum / n - 0.5) < 0.005 && rmin < 0.001f && rmax > 0.999f, "rand uniform: mean %g", rsum / n);
    CHECK(fabs(mean) < 0.015, "randn mean %g", mean);
    CHECK(fabs(var - 1) < 0.02, "randn variance %g", var);
    CHECK(blk_randn(1, 2) == blk_randn(1, 2) && blk_rand(1, 2) != blk_rand(2, 2), "deterministic, seed matters");
    CHECK(blk_rand(0x100000000ull, 5) != blk_rand(0, 5), "the seed's high word is the second key word");
}

int main(void) {
    test_integers();
    test_floats();
    test_casts();
    test_memory();
    test_philox();
    return test_finish("test_eval");
}

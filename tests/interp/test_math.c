/* The math library on the interpreter (tests/interp/math.blk) against C's
 * libm, bit for bit: the interpreter's scalar semantics (compiler/ir/eval.c)
 * are libm's in the operand's precision, so every result must be identical,
 * NaN, infinities, -0.0 and subnormals included. erfinv, which libm lacks,
 * is checked against bisection on erf/erfc. Integer bit operations against
 * plain C loops, bit casts against memcpy. */
#define _GNU_SOURCE /* exp10f, lgammaf_r */
#include <stdbool.h>

#include "harness.h"

#define N 64
#define NU 20 /* unary functions, in math.blk's order */

static blkc_ctx *build(const char *kernel) { return h_build(h_testdir, "math.blk", kernel, NULL); }

/* Specials first, then random values in [-3, 3]. */
static void inputs_f64(double *x) {
    static const double special[] = {NAN, -NAN, INFINITY, -INFINITY, 0.0, -0.0, 0x1p-149, -0x1p-140, 0x1p-126,
                                     0.5, -0.5, 1.0, -1.0, 2.5, -2.5, 3.5, -3.5, 0.999, -0.999, 1e30, -1e30,
                                     100.0, -100.0, 88.7, 1e-7, -1e-7, 2.0, 10.0, -4.0, 0.25, 1.5, -0.75};
    int ns = (int)(sizeof special / sizeof special[0]);
    for (int i = 0; i < N; i++) x[i] = i < ns ? special[i] : h_uniform(-3.0f, 3.0f);
}

static bool same_f32(float a, float b) { return (isnan(a) && isnan(b)) || memcmp(&a, &b, 4) == 0; }
static bool same_f64(double a, double b) { return (isnan(a) && isnan(b)) || memcmp(&a, &b, 8) == 0; }

/* erfinv by bisection on erf (|y| < 0.5) or erfc (else), in double. */
static double erfinv_ref(double y) {
    if (isnan(y) || fabs(y) > 1) return NAN;
    if (fabs(y) == 1) return copysign(INFINITY, y);
    if (y == 0) return y;
    if (fabs(y) < 0x1p-30) return y * 0.88622692545275801; /* erf is 2x/sqrt(pi) there */
    double a = fabs(y), lo = 0, hi = 10;
    for (int k = 0; k < 200; k++) {
        double mid = 0.5 * (lo + hi);
        bool below = a < 0.5 ? erf(mid) < a : erfc(mid) > 1 - a;
        if (below) lo = mid; else hi = mid;
    }
    return copysign(0.5 * (lo + hi), y);
}

static float lgamma_f(float x) { int s; return lgammaf_r(x, &s); }
static double lgamma_d(double x) { int s; return lgamma_r(x, &s); }

static float ref_f32(int f, float v) {
    switch (f) {
    case 0: return roundf(v);   case 1: return rintf(v);   case 2: return truncf(v);  case 3: return log1pf(v);
    case 4: return expm1f(v);   case 5: return exp10f(v);  case 6: return log10f(v);  case 7: return tanf(v);
    case 8: return asinf(v);    case 9: return acosf(v);   case 10: return atanf(v);  case 11: return sinhf(v);
    case 12: return coshf(v);   case 13: return asinhf(v); case 14: return acoshf(v); case 15: return atanhf(v);
    case 16: return cbrtf(v);   case 17: return erfcf(v);  case 18: return (float)erfinv_ref(v);
    default: return lgamma_f(v);
    }
}

static double ref_f64(int f, double v) {
    switch (f) {
    case 0: return round(v);   case 1: return rint(v);   case 2: return trunc(v);  case 3: return log1p(v);
    case 4: return expm1(v);   case 5: return exp10(v);  case 6: return log10(v);  case 7: return tan(v);
    case 8: return asin(v);    case 9: return acos(v);   case 10: return atan(v);  case 11: return sinh(v);
    case 12: return cosh(v);   case 13: return asinh(v); case 14: return acosh(v); case 15: return atanh(v);
    case 16: return cbrt(v);   case 17: return erfc(v);  case 18: return erfinv_ref(v);
    default: return lgamma_d(v);
    }
}

/* ulps between two finite doubles of the same sign class */
static double ulps_f64(double a, double b) {
    if (a == b) return 0;
    return fabs(a - b) / (nextafter(fabs(b), INFINITY) - fabs(b));
}

static void unary(void) {
    double xd[N];
    float x[N], out[NU * N];
    double outd[NU * N];
    inputs_f64(xd);
    for (int i = 0; i < N; i++) x[i] = (float)xd[i];
    x[1] = -NAN;
    blkc_ctx *c = build("unary_f32");
    blk_arg args[] = {BLK_PTR(x, sizeof x), BLK_PTR(out, sizeof out)};
    if (h_run(c, "unary_f32", 1, 1, 1, args, 2) == 0)
        for (int f = 0; f < NU; f++)
            for (int i = 0; i < N; i++) {
                float want = ref_f32(f, x[i]), got = out[f * N + i];
                /* erfinv: the reference is the rounded exact value; eval's may differ by a rounding tie */
                bool ok = f == 18 ? same_f32(got, want) || fabsf(got - want) <= fabsf(want) * 0x1p-23f : same_f32(got, want);
                CHECK(ok, "unary f32 #%d(%a) = %a, want %a", f, (double)x[i], (double)got, (double)want);
            }
    blkc_free(c);
    c = build("unary_f64");
    blk_arg argd[] = {BLK_PTR(xd, sizeof xd), BLK_PTR(outd, sizeof outd)};
    if (h_run(c, "unary_f64", 1, 1, 1, argd, 2) == 0)
        for (int f = 0; f < NU; f++)
            for (int i = 0; i < N; i++) {
                double want = ref_f64(f, xd[i]), got = outd[f * N + i];
                bool ok = f == 18 && isfinite(want) ? ulps_f64(got, want) <= 2 : same_f64(got, want);
                CHECK(ok, "unary f64 #%d(%a) = %a, want %a", f, xd[i], got, want);
            }
    blkc_free(c);
    /* f16: computed in f32, rounded once */
    uint16_t h[N], oh[3 * N];
    for (int i = 0; i < N; i++) h[i] = h_f2h(x[i]);
    h[0] = 0x7e00; h[1] = 0x8000; h[2] = 0x0001; h[3] = 0x7c00;
    c = build("unary_f16");
    blk_arg argh[] = {BLK_PTR(h, sizeof h), BLK_PTR(oh, sizeof oh)};
    if (h_run(c, "unary_f16", 1, 1, 1, argh, 2) == 0)
        for (int i = 0; i < N; i++) {
            float v = h_h2f(h[i]);
            float w[3] = {log1pf(v), roundf(v), atanf(v)};
            for (int f = 0; f < 3; f++) {
                float got = h_h2f(oh[f * N + i]), want = h_h2f(h_f2h(w[f]));
                CHECK(same_f32(got, want), "unary f16 #%d(%a) = %a, want %a", f, (double)v, (double)got, (double)want);
            }
        }
    blkc_free(c);
    /* a few values every libm agrees on */
    CHECK(fabs(erfinv_ref(0.5) - 0.47693627620446987) < 1e-15, "erfinv reference");
}

static void binary(void) {
    double xd[N], yd[N], outd[6 * N];
    float x[N], y[N], out[9 * N];
    inputs_f64(xd);
    for (int i = 0; i < N; i++) yd[i] = xd[(i * 7 + 3) % N]; /* every special meets every other kind */
    yd[0] = 1.0; yd[4] = -0.0; yd[5] = 0.0; yd[9] = INFINITY; yd[12] = NAN;
    for (int i = 0; i < N; i++) x[i] = (float)xd[i], y[i] = (float)yd[i];
    blkc_ctx *c = build("binary_f32");
    blk_arg args[] = {BLK_PTR(x, sizeof x), BLK_PTR(y, sizeof y), BLK_PTR(out, sizeof out)};
    if (h_run(c, "binary_f32", 1, 1, 1, args, 3) == 0)
        for (int i = 0; i < N; i++) {
            float a = x[i], b = y[i];
            float w[9] = {atan2f(a, b), hypotf(a, b), fmodf(a, b), remainderf(a, b), copysignf(a, b),
                          nextafterf(a, b), powf(a, b), powf(a, 3.0f), powf(a, (float)(int32_t)fminf(fmaxf(b * 4, -2147483648.0f), 2147483520.0f))};
            if (isnan(b * 4)) w[8] = powf(a, 0.0f); /* NaN as i32 is 0 */
            for (int f = 0; f < 9; f++)
                CHECK(same_f32(out[f * N + i], w[f]), "binary f32 #%d(%a, %a) = %a, want %a", f, (double)a, (double)b,
                      (double)out[f * N + i], (double)w[f]);
        }
    blkc_free(c);
    c = build("binary_f64");
    blk_arg argd[] = {BLK_PTR(xd, sizeof xd), BLK_PTR(yd, sizeof yd), BLK_PTR(outd, sizeof outd)};
    if (h_run(c, "binary_f64", 1, 1, 1, argd, 3) == 0)
        for (int i = 0; i < N; i++) {
            double a = xd[i], b = yd[i];
            double w[6] = {atan2(a, b), hypot(a, b), fmod(a, b), remainder(a, b), copysign(a, b), nextafter(a, b)};
            for (int f = 0; f < 6; f++)
                CHECK(same_f64(outd[f * N + i], w[f]), "binary f64 #%d(%a, %a) = %a, want %a", f, a, b, outd[f * N + i], w[f]);
        }
    blkc_free(c);
}

static void predicates(void) {
    double xd[N];
    float x[N];
    int32_t out[4 * N];
    inputs_f64(xd);
    for (int i = 0; i < N; i++) x[i] = (float)xd[i];
    x[1] = -NAN;
    blkc_ctx *c = build("preds_f32");
    blk_arg args[] = {BLK_PTR(x, sizeof x), BLK_PTR(out, sizeof out)};
    if (h_run(c, "preds_f32", 1, 1, 1, args, 2) == 0)
        for (int i = 0; i < N; i++) {
            int w[4] = {isnan(x[i]) != 0, isinf(x[i]) != 0, isfinite(x[i]) != 0, signbit(x[i]) != 0};
            for (int f = 0; f < 4; f++) CHECK(out[f * N + i] == w[f], "pred f32 #%d(%a) = %d", f, (double)x[i], out[f * N + i]);
        }
    blkc_free(c);
    uint16_t h[N];
    for (int i = 0; i < N; i++) h[i] = h_f2h(x[i]);
    h[0] = 0x7e00; h[1] = 0xfe00; h[2] = 0x7c00; h[3] = 0xfc00; h[4] = 0x8000; h[5] = 0x0001; h[6] = 0x7bff;
    c = build("preds_f16");
    blk_arg argh[] = {BLK_PTR(h, sizeof h), BLK_PTR(out, sizeof out)};
    if (h_run(c, "preds_f16", 1, 1, 1, argh, 2) == 0)
        for (int i = 0; i < N; i++) {
            bool nan = (h[i] & 0x7c00) == 0x7c00 && (h[i] & 0x3ff), inf = (h[i] & 0x7fff) == 0x7c00;
            int w[4] = {nan, inf, !nan && !inf, h[i] >> 15};
            for (int f = 0; f < 4; f++)
                if (!(f == 3 && nan)) /* the interpreter's f16 NaN has no sign (eval.c) */
                    CHECK(out[f * N + i] == w[f], "pred f16 #%d(0x%04x) = %d", f, h[i], out[f * N + i]);
        }
    blkc_free(c);
}

static uint64_t rev_bits(uint64_t u, int bits) {
    uint64_t r = 0;
    for (int k = 0; k < bits; k++) r |= ((u >> k) & 1) << (bits - 1 - k);
    return r;
}
static uint64_t rev_bytes(uint64_t u, int bits) {
    uint64_t r = 0;
    for (int k = 0; k < bits / 8; k++) r |= ((u >> (8 * k)) & 0xff) << (bits - 8 - 8 * k);
    return r;
}
static int clz_n(uint64_t u, int bits) {
    int n = 0;
    for (int k = bits - 1; k >= 0 && !((u >> k) & 1); k--) n++;
    return n;
}
static int popc_n(uint64_t u) {
    int n = 0;
    for (; u; u &= u - 1) n++;
    return n;
}

static void bits(void) {
    int32_t x[N], y[N], out[6 * N];
    for (int i = 0; i < N; i++) x[i] = (int32_t)h_u32(), y[i] = (int32_t)h_u32();
    x[0] = 0; x[1] = -1; x[2] = 1; x[3] = INT32_MIN; y[3] = INT32_MIN; x[4] = INT32_MAX; y[4] = -1;
    blkc_ctx *c = build("bits_i32");
    blk_arg args[] = {BLK_PTR(x, sizeof x), BLK_PTR(y, sizeof y), BLK_PTR(out, sizeof out)};
    if (h_run(c, "bits_i32", 1, 1, 1, args, 3) == 0)
        for (int i = 0; i < N; i++) {
            uint32_t u = (uint32_t)x[i];
            int32_t w[6] = {clz_n(u, 32), popc_n(u), (int32_t)(uint32_t)rev_bits(u, 32), (int32_t)(uint32_t)rev_bytes(u, 32),
                            (int32_t)(((int64_t)x[i] * y[i]) >> 32),
                            (int32_t)(uint32_t)(((uint64_t)(uint32_t)x[i] * (uint32_t)y[i]) >> 32)};
            for (int f = 0; f < 6; f++) CHECK(out[f * N + i] == w[f], "bits i32 #%d(%d, %d) = %d, want %d", f, x[i], y[i], out[f * N + i], w[f]);
        }
    blkc_free(c);

    uint8_t a8[N];
    int16_t b16[N];
    int32_t o8[8 * N];
    for (int i = 0; i < N; i++) a8[i] = (uint8_t)h_u32(), b16[i] = (int16_t)h_u32();
    a8[0] = 0; a8[1] = 0xff; b16[0] = 0; b16[1] = INT16_MIN; b16[2] = -1;
    c = build("bits_narrow");
    blk_arg argn[] = {BLK_PTR(a8, sizeof a8), BLK_PTR(b16, sizeof b16), BLK_PTR(o8, sizeof o8)};
    if (h_run(c, "bits_narrow", 1, 1, 1, argn, 3) == 0)
        for (int i = 0; i < N; i++) {
            uint16_t ub = (uint16_t)b16[i];
            int32_t w[8] = {clz_n(a8[i], 8), popc_n(a8[i]), (int32_t)rev_bits(a8[i], 8), a8[i], clz_n(ub, 16),
                            (int16_t)rev_bits(ub, 16), (int16_t)rev_bytes(ub, 16), (int16_t)(((int32_t)b16[i] * b16[i]) >> 16)};
            for (int f = 0; f < 8; f++) CHECK(o8[f * N + i] == w[f], "bits narrow #%d(%u, %d) = %d, want %d", f, a8[i], b16[i], o8[f * N + i], w[f]);
        }
    blkc_free(c);

    int64_t x64[N], y64[N], o64[6 * N];
    for (int i = 0; i < N; i++) x64[i] = (int64_t)((uint64_t)h_u32() << 32 | h_u32()), y64[i] = (int64_t)((uint64_t)h_u32() << 32 | h_u32());
    x64[0] = 0; x64[1] = -1; y64[1] = -1; x64[2] = INT64_MIN; y64[2] = INT64_MIN; x64[3] = INT64_MAX; y64[3] = 2;
    c = build("bits_i64");
    blk_arg arg64[] = {BLK_PTR(x64, sizeof x64), BLK_PTR(y64, sizeof y64), BLK_PTR(o64, sizeof o64)};
    if (h_run(c, "bits_i64", 1, 1, 1, arg64, 3) == 0)
        for (int i = 0; i < N; i++) {
            uint64_t u = (uint64_t)x64[i];
            __extension__ __int128 sp = (__int128)x64[i] * y64[i];
            __extension__ unsigned __int128 up = (unsigned __int128)u * (uint64_t)y64[i];
            int64_t w[6] = {clz_n(u, 64), popc_n(u), (int64_t)rev_bits(u, 64), (int64_t)rev_bytes(u, 64),
                            (int64_t)(sp >> 64), (int64_t)(uint64_t)(up >> 64)};
            for (int f = 0; f < 6; f++)
                CHECK(o64[f * N + i] == w[f], "bits i64 #%d(%lld, %lld) = %lld, want %lld", f, (long long)x64[i],
                      (long long)y64[i], (long long)o64[f * N + i], (long long)w[f]);
        }
    blkc_free(c);
}

static void casts(void) {
    double xd[N], d[N], backd[N];
    float x[N], back32[N];
    uint16_t h[N], bh[N], back16[N], outb[N];
    int16_t out16[N];
    uint32_t out32[N];
    int64_t outd[N];
    inputs_f64(xd);
    for (int i = 0; i < N; i++) {
        x[i] = (float)xd[i];
        d[i] = xd[i] * 3.0;
        h[i] = (uint16_t)h_u32();
        bh[i] = isnan(x[i]) ? 0x7fff : h_f2bf(x[i]);
    }
    for (int i = 0; i < N; i++)
        if ((h[i] & 0x7c00) == 0x7c00 && (h[i] & 0x3ff)) h[i] = 0x7fff; /* f16 NaNs: canonical (eval.c) */
    blkc_ctx *c = build("casts");
    blk_arg args[] = {BLK_PTR(x, sizeof x), BLK_PTR(h, sizeof h), BLK_PTR(bh, sizeof bh), BLK_PTR(d, sizeof d),
                      BLK_PTR(out32, sizeof out32), BLK_PTR(back32, sizeof back32), BLK_PTR(out16, sizeof out16),
                      BLK_PTR(back16, sizeof back16), BLK_PTR(outb, sizeof outb), BLK_PTR(outd, sizeof outd),
                      BLK_PTR(backd, sizeof backd)};
    if (h_run(c, "casts", 1, 1, 1, args, 11) == 0)
        for (int i = 0; i < N; i++) {
            uint32_t u;
            memcpy(&u, &x[i], 4);
            uint32_t nb;
            memcpy(&nb, &back32[i], 4);
            int64_t db;
            memcpy(&db, &d[i], 8);
            CHECK(out32[i] == u, "bitcast f32 %a -> u32 0x%08x, want 0x%08x", (double)x[i], out32[i], u);
            CHECK(nb == (u ^ 0x80000000u), "bitcast u32 -> f32 of %a with the sign flipped: 0x%08x", (double)x[i], nb);
            CHECK((uint16_t)out16[i] == h[i] && back16[i] == h[i], "bitcast f16 0x%04x: %04x %04x", h[i], (uint16_t)out16[i], back16[i]);
            CHECK(outb[i] == bh[i], "bitcast bf16 0x%04x -> 0x%04x", bh[i], outb[i]);
            CHECK(outd[i] == db && same_f64(backd[i], d[i]), "bitcast f64 %a", d[i]);
        }
    blkc_free(c);
    int32_t f[8];
    c = build("folded");
    blk_arg argf[] = {BLK_PTR(f, sizeof f)};
    if (h_run(c, "folded", 1, 1, 1, argf, 1) == 0) {
        int32_t w[8] = {0x3f800000, 31, 8, 1, 1, 3, 2, 2};
        for (int k = 0; k < 8; k++) CHECK(f[k] == w[k], "folded #%d = %d, want %d", k, f[k], w[k]);
    }
    blkc_free(c);
}

static void countdown(void) {
    int32_t x[N], out[N], marks[N], want = 0;
    for (int i = 0; i < N; i++) x[i] = (int32_t)(h_u32() % 100), marks[i] = -1;
    blkc_ctx *c = build("countdown");
    blk_arg args[] = {BLK_PTR(x, sizeof x), BLK_PTR(out, sizeof out), BLK_PTR(marks, sizeof marks)};
    if (h_run(c, "countdown", 1, 1, 1, args, 3) == 0)
        for (int i = N - 1; i >= 0; i--) {
            want += x[i];
            CHECK(out[i] == want, "countdown out[%d] = %d, want %d", i, out[i], want);
            int m = (N - 1 - i) % 3 == 0 && i > 0 ? i : -1;
            CHECK(marks[i] == m, "countdown marks[%d] = %d, want %d", i, marks[i], m);
        }
    blkc_free(c);
}

static void offsets(void) {
    int32_t x[N], out[N], rev[N];
    for (int i = 0; i < N; i++) x[i] = (int32_t)h_u32();
    blkc_ctx *c = build("offsets");
    blk_arg args[] = {BLK_PTR(x, sizeof x), BLK_PTR(out, sizeof out), BLK_PTR(rev, sizeof rev)};
    if (h_run(c, "offsets", 1, 1, 1, args, 3) == 0)
        for (int i = 0; i < N; i++) {
            CHECK(out[i] == x[i], "offsets out[%d]", i);
            CHECK(rev[N - 1 - i] == x[i], "offsets rev[%d]", N - 1 - i);
        }
    blkc_free(c);
}

int main(int argc, char **argv) {
    h_init(argc, argv);
    h_seed(0x5eed0015);
    unary();
    binary();
    predicates();
    bits();
    casts();
    countdown();
    offsets();
    return test_finish("test_math");
}

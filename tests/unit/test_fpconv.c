/* test_fpconv — the narrow float conversions of compiler/ir/fpconv.c against
 * an independent reference: the sorted list of every finite value of the
 * format, a binary search for the two neighbours of the input, and a
 * midpoint comparison in double (exact: neighbours are close), ties going to
 * the even bit pattern. f8 also gets a brute-force nearest search over all
 * 256 patterns. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/eval.h"

#define TEST_REPORT_LIMIT 30 /* a sweep that fails fails often: the first 30 are enough */
#include "../test_util.h"

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static uint64_t next_u64(void) { /* splitmix64 */
    uint64_t z = (rng += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static float bits_to_f32(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }
static uint32_t f32_bits(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }

/* ---- a format described by its fields, decoded the textbook way ---- */
typedef struct {
    const char *name;
    int ebits, mbits, bias;
    bool ieee_top;      /* all-ones exponent = inf/NaN (else only mantissa all-ones is NaN) */
    bool saturate;      /* overflow -> max finite instead of inf */
    unsigned nan_bits;  /* expected canonical NaN */
} fmt;

static const fmt F16 = {"f16", 5, 10, 15, true, false, 0x7FFF};
static const fmt BF16 = {"bf16", 8, 7, 127, true, false, 0x7FFF};
static const fmt E4M3 = {"f8e4m3", 4, 3, 7, false, true, 0x7F};
static const fmt E5M2 = {"f8e5m2", 5, 2, 15, true, true, 0x7F};

static double ref_decode(const fmt *f, unsigned bits) {
    unsigned emask = (1u << f->ebits) - 1, mmask = (1u << f->mbits) - 1;
    unsigned e = (bits >> f->mbits) & emask, m = bits & mmask;
    double s = (bits >> (f->ebits + f->mbits)) & 1 ? -1 : 1;
    if (e == emask && f->ieee_top) return m ? NAN : s * INFINITY;
    if (e == emask && m == mmask) return NAN;
    if (e == 0) return s * m * pow(2, 1 - f->bias - f->mbits);
    return s * (1 + m * pow(2, -f->mbits)) * pow(2, (int)e - f->bias);
}

/* positive finite values in increasing order (bit patterns 0..max) */
typedef struct {
    double val[65536];
    unsigned bits[65536];
    int n;
} table;

static void build_table(const fmt *f, table *t) {
    t->n = 0;
    for (unsigned b = 0; b < (1u << (f->ebits + f->mbits)); b++) {
        double v = ref_decode(f, b);
        if (isnan(v) || isinf(v)) continue;
        t->val[t->n] = v;
        t->bits[t->n++] = b;
    }
}

static unsigned ref_encode(const fmt *f, const table *t, double x) {
    unsigned sign = signbit(x) ? 1u << (f->ebits + f->mbits) : 0;
    if (isnan(x)) return f->nan_bits;
    double a = fabs(x);
    double max = t->val[t->n - 1];
    double ulp_max = max - t->val[t->n - 2];
    unsigned inf_bits = ((1u << f->ebits) - 1) << f->mbits;
    if (a >= max + ulp_max / 2 && !(a == max + ulp_max / 2 && (t->bits[t->n - 1] & 1) == 0)) {
        /* beyond the rounding range of max (the virtual next value is even) */
        return sign | (f->saturate ? t->bits[t->n - 1] : inf_bits);
    }
    if (a > max) return sign | t->bits[t->n - 1];
    int lo = 0, hi = t->n - 1; /* largest index with val <= a */
    while (lo < hi) {
        int mid = (lo + hi + 1) / 2;
        if (t->val[mid] <= a) lo = mid; else hi = mid - 1;
    }
    if (t->val[lo] == a || lo == t->n - 1) return sign | t->bits[lo];
    double mid = (t->val[lo] + t->val[lo + 1]) / 2;
    if (a < mid) return sign | t->bits[lo];
    if (a > mid) return sign | t->bits[lo + 1];
    return sign | ((t->bits[lo] & 1) == 0 ? t->bits[lo] : t->bits[lo + 1]);
}

static unsigned enc(const fmt *f, double x, bool from_f64) {
    if (f == &F16) return from_f64 ? fp_f64_to_f16(x) : fp_f32_to_f16((float)x);
    if (f == &BF16) return from_f64 ? fp_f64_to_bf16(x) : fp_f32_to_bf16((float)x);
    if (f == &E4M3) return from_f64 ? fp_f64_to_f8e4m3(x) : fp_f32_to_f8e4m3((float)x);
    return from_f64 ? fp_f64_to_f8e5m2(x) : fp_f32_to_f8e5m2((float)x);
}

static float dec(const fmt *f, unsigned b) {
    if (f == &F16) return fp_f16_to_f32((uint16_t)b);
    if (f == &BF16) return fp_bf16_to_f32((uint16_t)b);
    if (f == &E4M3) return fp_f8e4m3_to_f32((uint8_t)b);
    return fp_f8e5m2_to_f32((uint8_t)b);
}

static bool same_value(double a, double b) {
    if (isnan(a) || isnan(b)) return isnan(a) && isnan(b);
    return a == b && signbit(a) == signbit(b);
}

/* every pattern decodes as the textbook formula says and re-encodes to itself */
static void test_all_patterns(const fmt *f) {
    unsigned count = 1u << (f->ebits + f->mbits + 1);
    for (unsigned b = 0; b < count; b++) {
        double want = ref_decode(f, b);
        float got = dec(f, b);
        CHECK(same_value(got, want), "%s 0x%x decodes to %a, want %a", f->name, b, got, want);
        unsigned back = enc(f, got, false), back64 = enc(f, got, true);
        unsigned expect = isnan(want) ? f->nan_bits : b;
        if (isinf(want) && f->saturate) /* satfinite: inf -> the largest finite value */
            expect = (b & ~((1u << f->mbits) - 1)) - (1u << f->mbits) + ((1u << f->mbits) - 1);
        CHECK(back == expect && back64 == expect, "%s 0x%x round trip gives 0x%x/0x%x", f->name, b, back, back64);
    }
}

static void check_one(const fmt *f, const table *t, double x, bool from_f64) {
    unsigned got = enc(f, x, from_f64), want = ref_encode(f, t, x);
    CHECK(got == want, "%s(%s %a) = 0x%x, want 0x%x", f->name, from_f64 ? "f64" : "f32", x, got, want);
}

static void test_random(const fmt *f, const table *t, int n) {
    double max = t->val[t->n - 1];
    int maxe = (int)ceil(log2(max)) + 2, mine = 1 - f->bias - f->mbits - 3;
    for (int i = 0; i < n; i++) {
        /* arbitrary f32 bit patterns: NaN, inf, subnormal, everything */
        float any = bits_to_f32((uint32_t)next_u64());
        check_one(f, t, any, false);
        /* values in the format's range, random mantissa bits below its precision */
        int e = mine + (int)(next_u64() % (uint64_t)(maxe - mine + 1));
        double m = 1 + (double)(next_u64() >> 11) * 0x1p-53;
        double x = ldexp(m, e) * (next_u64() & 1 ? -1 : 1);
        check_one(f, t, (float)x, false);
        check_one(f, t, x, true);
        /* exact midpoints between neighbours and their f32/f64 neighbours */
        int k = (int)(next_u64() % (uint64_t)(t->n - 1));
        double mid = (t->val[k] + t->val[k + 1]) / 2;
        check_one(f, t, mid, false);
        check_one(f, t, mid, true);
        check_one(f, t, nextafter(mid, 0), true);
        check_one(f, t, nextafter(mid, INFINITY), true);
        check_one(f, t, nextafterf((float)mid, 0), false);
        check_one(f, t, nextafterf((float)mid, INFINITY), false);
    }
}

/* f8: brute force over all 256 patterns, independent of the table search */
static unsigned brute_f8(const fmt *f, const double *values, float x) {
    if (isnan(x)) return f->nan_bits;
    unsigned best = 0;
    double best_d = INFINITY, max = 0;
    unsigned max_bits = 0;
    for (unsigned b = 0; b < 256; b++) {
        double v = values[b];
        if (isnan(v) || isinf(v)) continue;
        if (v > max) { max = v; max_bits = b; }
        double d = fabs((double)x - v);
        if (d < best_d || (d == best_d && (b & 1) == 0 && (best & 1) == 1)) { best = b; best_d = d; }
    }
    if (fabs(x) > max) return (signbit(x) ? 0x80 : 0) | max_bits; /* satfinite */
    if (best_d == 0 || (best & 0x7F) == 0) return (signbit(x) ? 0x80 : 0) | (best & 0x7F);
    return best;
}

static void test_f8_brute(const fmt *f, int n) {
    double values[256];
    for (unsigned b = 0; b < 256; b++) values[b] = ref_decode(f, b);
    for (int i = 0; i < n; i++) {
        float x;
        if (i % 4 == 0) x = bits_to_f32((uint32_t)next_u64());
        else x = (float)(((double)(next_u64() >> 11) * 0x1p-53 * 2 - 1) * (i % 4 == 1 ? 600 : i % 4 == 2 ? 1 : 70000));
        unsigned got = enc(f, x, false), want = brute_f8(f, values, x);
        if (isnan(x)) want = f->nan_bits;
        CHECK(got == want, "%s brute(%a) = 0x%x, want 0x%x", f->name, x, got, want);
    }
}

static void test_hand_picked(void) {
    /* f16 */
    CHECK(fp_f32_to_f16(1.0f) == 0x3C00, "f16 1");
    CHECK(fp_f32_to_f16(-2.0f) == 0xC000, "f16 -2");
    CHECK(fp_f32_to_f16(65504.0f) == 0x7BFF, "f16 max");
    CHECK(fp_f32_to_f16(65519.0f) == 0x7BFF, "f16 below overflow midpoint");
    CHECK(fp_f32_to_f16(65520.0f) == 0x7C00, "f16 overflow midpoint -> inf");
    CHECK(fp_f32_to_f16(-1e10f) == 0xFC00, "f16 -inf");
    CHECK(fp_f32_to_f16(INFINITY) == 0x7C00, "f16 inf");
    CHECK(fp_f32_to_f16(0x1p-24f) == 0x0001, "f16 smallest subnormal");
    CHECK(fp_f32_to_f16(0x1p-25f) == 0x0000, "f16 tie to 0 (even)");
    CHECK(fp_f32_to_f16(0x1.8p-24f) == 0x0002, "f16 1.5 ulp tie -> 2 (even)");
    CHECK(fp_f32_to_f16(0x1.004p-25f) == 0x0001, "f16 above half ulp");
    CHECK(fp_f32_to_f16(-0.0f) == 0x8000, "f16 -0");
    CHECK(fp_f32_to_f16(1.0f + 0x1p-11f) == 0x3C00, "f16 tie down to even");
    CHECK(fp_f32_to_f16(1.0f + 3 * 0x1p-11f) == 0x3C02, "f16 tie up to even");
    CHECK(fp_f32_to_f16(0x1.ffcp-15f) == 0x0400, "f16 subnormal rounds up to min normal");
    CHECK(fp_f32_to_f16(NAN) == 0x7FFF && fp_f32_to_f16(-NAN) == 0x7FFF, "f16 canonical NaN");
    CHECK(fp_f16_to_f32(0x7C00) == INFINITY && isnan(fp_f16_to_f32(0x7E00)), "f16 decode inf/nan");
    /* no double rounding from f64: just above the f16 tie, but f32 would round onto it */
    CHECK(fp_f64_to_f16(1.0 + 0x1p-11 + 0x1p-40) == 0x3C01, "f64->f16 single rounding");
    CHECK(fp_f32_to_f16((float)(1.0 + 0x1p-11 + 0x1p-40)) == 0x3C00, "f32 version sees the tie");
    CHECK(fp_f64_to_bf16(1.0 + 0x1p-8 + 0x1p-40) == 0x3F81, "f64->bf16 single rounding");
    /* bf16 */
    CHECK(fp_f32_to_bf16(1.0f) == 0x3F80, "bf16 1");
    CHECK(fp_f32_to_bf16(bits_to_f32(0x3F808000)) == 0x3F80, "bf16 tie to even (down)");
    CHECK(fp_f32_to_bf16(bits_to_f32(0x3F818000)) == 0x3F82, "bf16 tie to even (up)");
    CHECK(fp_f32_to_bf16(bits_to_f32(0x3F808001)) == 0x3F81, "bf16 above tie");
    CHECK(fp_f32_to_bf16(bits_to_f32(0x7F7FFFFF)) == 0x7F80, "bf16 overflow -> inf");
    CHECK(fp_f32_to_bf16(bits_to_f32(0x00018000)) == 0x0002, "bf16 subnormal tie");
    CHECK(fp_f32_to_bf16(bits_to_f32(0x7FC12345)) == 0x7FFF, "bf16 NaN payload -> canonical");
    CHECK(fp_f32_to_bf16(bits_to_f32(0xFF800001)) == 0x7FFF, "bf16 sNaN -> canonical");
    /* f8e4m3: bias 7, no inf, max 448, NaN S.1111.111 */
    CHECK(fp_f32_to_f8e4m3(448.0f) == 0x7E, "e4m3 max");
    CHECK(fp_f32_to_f8e4m3(464.0f) == 0x7E, "e4m3 tie above max -> max");
    CHECK(fp_f32_to_f8e4m3(1000.0f) == 0x7E && fp_f32_to_f8e4m3(-1e30f) == 0xFE, "e4m3 saturates");
    CHECK(fp_f32_to_f8e4m3(INFINITY) == 0x7E && fp_f32_to_f8e4m3(-INFINITY) == 0xFE, "e4m3 inf saturates");
    CHECK(fp_f32_to_f8e4m3(NAN) == 0x7F, "e4m3 NaN");
    CHECK(isnan(fp_f8e4m3_to_f32(0x7F)) && isnan(fp_f8e4m3_to_f32(0xFF)), "e4m3 NaN decode");
    CHECK(fp_f8e4m3_to_f32(0x78) == 256.0f && fp_f8e4m3_to_f32(0x01) == 0x1p-9f, "e4m3 decode");
    CHECK(fp_f32_to_f8e4m3(0x1p-10f) == 0x00 && fp_f32_to_f8e4m3(0x1.8p-10f) == 0x01, "e4m3 subnormal ties");
    CHECK(fp_f32_to_f8e4m3(1.0625f) == 0x38 && fp_f32_to_f8e4m3(1.1875f) == 0x3A, "e4m3 normal ties");
    /* f8e5m2: bias 15, inf/NaN, max 57344 */
    CHECK(fp_f32_to_f8e5m2(57344.0f) == 0x7B, "e5m2 max");
    CHECK(fp_f32_to_f8e5m2(61440.0f) == 0x7B, "e5m2 overflow tie saturates");
    CHECK(fp_f32_to_f8e5m2(1e6f) == 0x7B && fp_f32_to_f8e5m2(INFINITY) == 0x7B, "e5m2 saturates");
    CHECK(fp_f32_to_f8e5m2(-INFINITY) == 0xFB, "e5m2 -inf saturates");
    CHECK(fp_f32_to_f8e5m2(NAN) == 0x7F, "e5m2 NaN");
    CHECK(fp_f8e5m2_to_f32(0x7C) == INFINITY && isnan(fp_f8e5m2_to_f32(0x7D)), "e5m2 decode inf/nan");
    CHECK(fp_f8e5m2_to_f32(0x01) == 0x1p-16f, "e5m2 smallest subnormal");
}

static table tab;

int main(void) {
    test_hand_picked();
    const fmt *fmts[] = {&F16, &BF16, &E4M3, &E5M2};
    for (int i = 0; i < 4; i++) {
        test_all_patterns(fmts[i]);
        build_table(fmts[i], &tab);
        test_random(fmts[i], &tab, 100000);
    }
    /* every f32 pattern whose upper half is fixed at a few values, all lower halves:
     * exhaustive tie/near-tie coverage for bf16 */
    build_table(&BF16, &tab);
    uint32_t highs[] = {0x3F80, 0x0000, 0x0080, 0x7F7F, 0xC2F1, 0x8001};
    for (int h = 0; h < 6; h++)
        for (uint32_t lo = 0; lo < 0x10000; lo++) check_one(&BF16, &tab, bits_to_f32(highs[h] << 16 | lo), false);
    test_f8_brute(&E4M3, 200000);
    test_f8_brute(&E5M2, 200000);
    (void)f32_bits;
    return test_finish("test_fpconv");
}

/* fpconv.c — bit-exact conversions between the narrow float formats
 * (f16, bf16, f8e4m3, f8e5m2) and float/double.
 *
 * Encoding is done once, from a double, by one generic routine: the double
 * is split into an integer significand and a power of two, the significand is
 * scaled to the target's quantum (the value of one unit in the last place at
 * that exponent, subnormals included) and rounded to nearest even. Every f32
 * is exactly a double, so the f32 entry points just widen first: each
 * conversion rounds exactly once.
 *
 * Formats (ebits, mbits, bias; what the all-ones exponent means):
 *   f16     5, 10, 15  IEEE inf/NaN           overflow -> inf
 *   bf16    8,  7, 127 IEEE inf/NaN           overflow -> inf
 *   f8e4m3  4,  3,  7  OCP E4M3: no inf; only S.1111.111 is NaN, so the
 *                      largest finite is 1.75 * 2^8 = 448
 *   f8e5m2  5,  2, 15  IEEE-like; largest finite 1.75 * 2^15 = 57344
 * To f8 the conversion saturates (PTX cvt.rn.satfinite): anything whose
 * rounded magnitude exceeds the largest finite value, infinities included,
 * becomes the signed largest finite value.
 *
 * NaN inputs give one canonical NaN with the sign bit clear, as CUDA's
 * conversions do: 0x7FFF for f16 and bf16, 0x7F for both f8 formats.
 */
#include <math.h>
#include <string.h>

#include "eval.h"

typedef struct {
    int mbits;        /* stored mantissa bits */
    int bias;
    double max_finite;
    bool saturate;    /* overflow -> max_finite (f8) instead of inf */
    unsigned inf_bits;  /* 0: the format has no infinity (e4m3) */
    unsigned nan_bits, sign_bit;
} fp_format;

static const fp_format fmt_f16 = {10, 15, 65504.0, false, 0x7C00, 0x7FFF, 0x8000};
static const fp_format fmt_bf16 = {7, 127, 0x1.FEp127, false, 0x7F80, 0x7FFF, 0x8000};
static const fp_format fmt_e4m3 = {3, 7, 448.0, true, 0, 0x7F, 0x80};
static const fp_format fmt_e5m2 = {2, 15, 57344.0, true, 0x7C, 0x7F, 0x80};

/* Round to nearest, ties to even, of a non-negative double below 2^53. */
static double round_half_even(double n) {
    double fl = floor(n);
    double frac = n - fl; /* exact: n and fl share an exponent range */
    if (frac > 0.5) return fl + 1;
    if (frac < 0.5) return fl;
    return fmod(fl, 2.0) == 0 ? fl : fl + 1;
}

static unsigned encode(const fp_format *f, double x) {
    if (isnan(x)) return f->nan_bits;
    unsigned sign = signbit(x) ? f->sign_bit : 0;
    double a = fabs(x);
    if (isinf(a)) return sign | (f->saturate ? encode(f, f->max_finite) : f->inf_bits);
    if (a == 0) return sign;

    int e;
    frexp(a, &e);          /* a = m * 2^e, m in [0.5, 1): unbiased exponent e - 1 */
    int exp = e - 1;
    int emin = 1 - f->bias;
    if (exp < emin) exp = emin; /* subnormal: the quantum stops shrinking */
    int qexp = exp - f->mbits;  /* value of one ulp is 2^qexp */
    double r = round_half_even(ldexp(a, -qexp)); /* ulps, at most 2^(mbits+1) */
    double rounded = ldexp(r, qexp);
    if (rounded > f->max_finite)
        return sign | (f->saturate ? encode(f, f->max_finite) : f->inf_bits);

    double one = ldexp(1.0, f->mbits); /* the implicit leading bit, in ulps */
    if (r < one) return sign | (unsigned)r; /* subnormal (exponent field 0) */
    if (r >= 2 * one) { r /= 2; exp++; }  /* rounding carried into the exponent */
    return sign | ((unsigned)(exp + f->bias) << f->mbits) | (unsigned)(r - one);
}

static double decode(const fp_format *f, unsigned bits) {
    unsigned ebits_mask = (f->sign_bit - 1) >> f->mbits; /* all-ones exponent */
    unsigned e = (bits >> f->mbits) & ebits_mask;
    unsigned m = bits & ((1u << f->mbits) - 1);
    double s = (bits & f->sign_bit) ? -1.0 : 1.0;
    if (e == ebits_mask) {
        if (f->inf_bits) { /* IEEE-like top exponent: inf / NaN */
            if (m == 0) return s * INFINITY;
            return NAN;
        }
        if (m == (1u << f->mbits) - 1) return NAN; /* e4m3: only S.1111.111 */
    }
    if (e == 0) return s * ldexp((double)m, 1 - f->bias - f->mbits);
    return s * ldexp((double)(m | (1u << f->mbits)), (int)e - f->bias - f->mbits);
}

uint16_t fp_f64_to_f16(double x) { return (uint16_t)encode(&fmt_f16, x); }
uint16_t fp_f64_to_bf16(double x) { return (uint16_t)encode(&fmt_bf16, x); }
uint8_t fp_f64_to_f8e4m3(double x) { return (uint8_t)encode(&fmt_e4m3, x); }
uint8_t fp_f64_to_f8e5m2(double x) { return (uint8_t)encode(&fmt_e5m2, x); }

uint16_t fp_f32_to_f16(float x) { return fp_f64_to_f16(x); }
uint16_t fp_f32_to_bf16(float x) { return fp_f64_to_bf16(x); }
uint8_t fp_f32_to_f8e4m3(float x) { return fp_f64_to_f8e4m3(x); }
uint8_t fp_f32_to_f8e5m2(float x) { return fp_f64_to_f8e5m2(x); }

/* Decoding is on the interpreter's hot path (every narrow load), so f16 and
 * bf16 are widened with bit operations rather than ldexp. */
float fp_bf16_to_f32(uint16_t h) {
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

float fp_f16_to_f32(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000) << 16;
    uint32_t e = (h >> 10) & 0x1F, m = h & 0x3FF, u;
    if (e == 0x1F) {
        u = sign | 0x7F800000 | (m << 13); /* inf, or NaN keeping its payload */
    } else if (e != 0) {
        u = sign | ((e + 112) << 23) | (m << 13);
    } else if (m == 0) {
        u = sign;
    } else { /* subnormal: normalise into an f32 normal */
        int shift = 0;
        while (!(m & 0x400)) { m <<= 1; shift++; }
        u = sign | ((uint32_t)(113 - shift) << 23) | ((m & 0x3FF) << 13);
    }
    float f;
    memcpy(&f, &u, 4);
    return f;
}

float fp_f8e4m3_to_f32(uint8_t v) { return (float)decode(&fmt_e4m3, v); }
float fp_f8e5m2_to_f32(uint8_t v) { return (float)decode(&fmt_e5m2, v); }

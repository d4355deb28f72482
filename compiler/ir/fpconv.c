/* fpconv.c — bit-exact conversions between the narrow float formats
 * (f16, bf16, f8e4m3, f8e5m2) and float/double.
 *
 * Encoding is done once, from a double, by fpencode.h's one routine (the
 * runtime converts kernel arguments with it too): the double's integer
 * significand is shifted to the target's quantum (the value of one unit in
 * the last place at that exponent, subnormals included) and rounded to
 * nearest even. Every f32 is exactly a double, so the f32 entry points just
 * widen first: each conversion rounds exactly once.
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
#include "fpencode.h"

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

uint16_t fp_f64_to_f16(double x) { return fp_encode_f16(x); }
uint16_t fp_f64_to_bf16(double x) { return fp_encode_bf16(x); }
uint8_t fp_f64_to_f8e4m3(double x) { return fp_encode_f8e4m3(x); }
uint8_t fp_f64_to_f8e5m2(double x) { return fp_encode_f8e5m2(x); }

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

float fp_f8e4m3_to_f32(uint8_t v) { return (float)decode(&fp_fmt_e4m3, v); }
float fp_f8e5m2_to_f32(uint8_t v) { return (float)decode(&fp_fmt_e5m2, v); }

/* fpencode.h — the one encoder of a double into the narrow float formats
 * (f16, bf16, f8e4m3, f8e5m2), rounding once to nearest even: f16/bf16
 * overflow to inf, f8 saturates to the largest finite value (PTX
 * cvt.rn.satfinite), NaN becomes the canonical 0x7FFF / 0x7F. Header-only and
 * libc-only (no libm: the rounding works on the bits) because two libraries
 * use it: the compiler (ir/fpconv.c: the interpreter and constant folding)
 * and the runtime (runtime/convert.c: kernel arguments), so that a kernel
 * sees the same value on the GPU as on the interpreter.
 */
#ifndef BLK_FPENCODE_H
#define BLK_FPENCODE_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

typedef struct {
    int mbits, ebits, bias;
    bool saturate;          /* overflow -> largest finite (f8) instead of inf */
    uint32_t inf_bits;      /* magnitude bits of infinity (unused when saturating) */
    uint32_t max_bits;      /* magnitude bits of the largest finite value */
    uint32_t nan_bits, sign_bit;
} fp_format;

static const fp_format fp_fmt_f16 = {10, 5, 15, false, 0x7C00, 0x7BFF, 0x7FFF, 0x8000};
static const fp_format fp_fmt_bf16 = {7, 8, 127, false, 0x7F80, 0x7F7F, 0x7FFF, 0x8000};
static const fp_format fp_fmt_e4m3 = {3, 4, 7, true, 0, 0x7E, 0x7F, 0x80};
static const fp_format fp_fmt_e5m2 = {2, 5, 15, true, 0x7C, 0x7B, 0x7F, 0x80};

static inline uint32_t fp_encode(const fp_format *f, double x) {
    uint64_t bits;
    memcpy(&bits, &x, sizeof bits);
    uint32_t sign = (bits >> 63) ? f->sign_bit : 0;
    int exp = (int)((bits >> 52) & 0x7FF);
    uint64_t mant = bits & ((UINT64_C(1) << 52) - 1);
    if (exp == 0x7FF) {
        if (mant) return f->nan_bits;
        return sign | (f->saturate ? f->max_bits : f->inf_bits);
    }
    if (exp == 0 && mant == 0) return sign;
    /* value = sig * 2^(e - 52), sig < 2^53 */
    uint64_t sig = exp ? (mant | (UINT64_C(1) << 52)) : mant;
    int e = exp ? exp - 1023 : -1022;
    int emin = 1 - f->bias;
    /* The quantum (one unit in the last place of the target) at this
     * magnitude is 2^(max(e, emin) - mbits); drop the bits below it. */
    int qexp = (e >= emin ? e : emin) - f->mbits;
    int shift = qexp - (e - 52);
    uint64_t q;
    if (shift <= 0) {
        q = sig << -shift; /* cannot happen for these formats (mbits < 52); kept for clarity */
    } else if (shift > 54) {
        q = 0; /* below half the smallest subnormal */
    } else {
        q = sig >> shift;
        uint64_t rem = sig & ((UINT64_C(1) << shift) - 1), half = UINT64_C(1) << (shift - 1);
        if (rem > half || (rem == half && (q & 1))) q++;
    }
    /* q counts quanta of 2^qexp. Re-encode: for a normal result q is in
     * [2^mbits, 2^(mbits+1)]; for a subnormal one q < 2^mbits, and q ==
     * 2^mbits is exactly the smallest normal, whose encoding is q itself. */
    uint64_t mag;
    if (e >= emin) {
        int be = e + f->bias;
        if (q == (UINT64_C(1) << (f->mbits + 1))) {
            q >>= 1;
            be++;
        }
        mag = ((uint64_t)be << f->mbits) | (q - (UINT64_C(1) << f->mbits));
    } else {
        mag = q;
    }
    if (mag > f->max_bits) return sign | (f->saturate ? f->max_bits : f->inf_bits);
    return sign | (uint32_t)mag;
}

static inline uint16_t fp_encode_f16(double x) { return (uint16_t)fp_encode(&fp_fmt_f16, x); }
static inline uint16_t fp_encode_bf16(double x) { return (uint16_t)fp_encode(&fp_fmt_bf16, x); }
static inline uint8_t fp_encode_f8e4m3(double x) { return (uint8_t)fp_encode(&fp_fmt_e4m3, x); }
static inline uint8_t fp_encode_f8e5m2(double x) { return (uint8_t)fp_encode(&fp_fmt_e5m2, x); }

#endif

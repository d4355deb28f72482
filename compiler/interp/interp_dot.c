/* interp_dot.c — DOT: a[M, K] x b[K, N] + acc[M, N], result dtype = acc's.
 *
 * The reference semantics the GPU's tensor cores must match within the
 * documented tolerance (they may sum in another order):
 *   - integer inputs (i8): products and sums in the accumulator's integer
 *     type, wrapping (i32 for i8);
 *   - f16 / bf16 / f8 inputs are converted exactly to f32; f32 inputs are
 *     first rounded to tf32 (10-bit mantissa, round to nearest even) when
 *     the precision is IR_PREC_TF32 or IR_PREC_DEFAULT and kept exact for
 *     IR_PREC_IEEE; each output starts from acc (converted to f32) and adds
 *     the K products in k order, one f32 rounding per step (fused
 *     multiply-add; products of those inputs are exact anyway), then is
 *     rounded to the accumulator's dtype;
 *   - an f64 operand or accumulator makes the whole computation f64.
 */
#include <math.h>
#include <string.h>

#include "interp_impl.h"

/* Round an f32 to tf32: keep 10 mantissa bits, round to nearest even. */
static float round_tf32(float x) {
    uint32_t u;
    memcpy(&u, &x, 4);
    if ((u & 0x7F800000) == 0x7F800000) return x; /* inf, NaN */
    u += 0xFFF + ((u >> 13) & 1);
    u &= ~(uint32_t)0x1FFF;
    memcpy(&x, &u, 4);
    return x;
}

static void to_f32(float *dst, const ir_scalar_val *src, int64_t n, blk_dtype t, bool tf32) {
    bool round = tf32 && t == DT_F32;
    for (int64_t i = 0; i < n; i++) {
        float f = dtype_is_float(t) ? (float)src[i].f : (float)eval_cast(t, DT_F32, src[i]).f;
        dst[i] = round ? round_tf32(f) : f;
    }
}

interp_sig interp_dot(interp *I, ir_inst *in) {
    if (in->num_operands != 3 || in->num_results != 1) {
        interp_error(I, in, "dot needs operands a, b, acc and one result in the IR");
        return SIG_ERROR;
    }
    ir_value *av = in->operands[0], *bv = in->operands[1], *cv = in->operands[2], *r = in->results[0];
    if (av->type.rank != 2 || bv->type.rank != 2 || r->type.rank != 2 || av->type.shape[1] != bv->type.shape[0] ||
        r->type.shape[0] != av->type.shape[0] || r->type.shape[1] != bv->type.shape[1] ||
        ir_numel(cv->type) != ir_numel(r->type)) {
        interp_error(I, in, "dot operand shapes do not match in the IR");
        return SIG_ERROR;
    }
    int64_t M = av->type.shape[0], K = av->type.shape[1], N = bv->type.shape[1];
    blk_dtype ta = interp_dtype(av), tb = interp_dtype(bv), tc = interp_dtype(cv), tr = interp_dtype(r);
    const ir_scalar_val *a = interp_val(I, av), *b = interp_val(I, bv), *c = interp_val(I, cv);
    ir_scalar_val *out = interp_val(I, r);

    if (!dtype_is_float(tr)) { /* integer dot */
        for (int64_t m = 0; m < M; m++)
            for (int64_t n = 0; n < N; n++) {
                uint64_t s = eval_cast(tc, tr, c[m * N + n]).u;
                for (int64_t k = 0; k < K; k++) s += a[m * K + k].u * b[k * N + n].u;
                ir_scalar_val v;
                v.u = s;
                out[m * N + n] = eval_normalize(tr, v);
            }
        return SIG_NEXT;
    }
    if (ta == DT_F64 || tb == DT_F64 || tr == DT_F64) {
        for (int64_t m = 0; m < M; m++)
            for (int64_t n = 0; n < N; n++) {
                double s = eval_cast(tc, DT_F64, c[m * N + n]).f;
                for (int64_t k = 0; k < K; k++)
                    s = fma(eval_cast(ta, DT_F64, a[m * K + k]).f, eval_cast(tb, DT_F64, b[k * N + n]).f, s);
                ir_scalar_val v;
                v.f = s;
                out[m * N + n] = eval_normalize(tr, v);
            }
        return SIG_NEXT;
    }

    bool tf32 = in->precision != IR_PREC_IEEE;
    float *fa = I->scratch_f32, *fb = fa + M * K, *row = fb + K * N;
    to_f32(fa, a, M * K, ta, tf32);
    to_f32(fb, b, K * N, tb, tf32);
    /* Products are exact unless both inputs are full f32 (IEEE precision). */
    bool exact_products = !(ta == DT_F32 && tb == DT_F32 && !tf32);
    for (int64_t m = 0; m < M; m++) {
        for (int64_t n = 0; n < N; n++) row[n] = (float)eval_cast(tc, DT_F32, c[m * N + n]).f;
        /* k outermost: each row[n] still sums its products in k order. */
        for (int64_t k = 0; k < K; k++) {
            float x = fa[m * K + k];
            const float *brow = fb + k * N;
            if (exact_products)
                for (int64_t n = 0; n < N; n++) row[n] += x * brow[n];
            else
                for (int64_t n = 0; n < N; n++) row[n] = fmaf(x, brow[n], row[n]);
        }
        for (int64_t n = 0; n < N; n++) {
            ir_scalar_val v;
            v.f = row[n];
            out[m * N + n] = eval_normalize(tr, v);
        }
    }
    return SIG_NEXT;
}

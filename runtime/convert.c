/* convert.c — turning blkrt_args into kernel parameter values.
 *
 * Every parameter gets an 8-byte slot; the value is written little-endian in
 * the parameter's width (the driver copies that many bytes from the slot).
 * Integers are range-checked against their type (u64 takes the bit pattern
 * of the int64). Floats are rounded once, from the double, to nearest even;
 * the narrow formats by compiler/ir/fpencode.h, the encoder the interpreter
 * and constant folding use, so a kernel sees the same value on the GPU as on
 * the interpreter.
 */
#include <string.h>

#include "rt.h"
/* The narrow-float encoder, one definition shared with the compiler. */
#include "../compiler/ir/fpencode.h"

uint16_t rt_f64_to_f16(double x) { return fp_encode_f16(x); }
uint16_t rt_f64_to_bf16(double x) { return fp_encode_bf16(x); }
uint8_t rt_f64_to_f8e4m3(double x) { return fp_encode_f8e4m3(x); }
uint8_t rt_f64_to_f8e5m2(double x) { return fp_encode_f8e5m2(x); }

static const char *kind_name(blkrt_arg_kind k) {
    switch (k) {
    case BLKRT_ARG_PTR: return "a pointer (BLKRT_PTR)";
    case BLKRT_ARG_INT: return "an integer (BLKRT_INT)";
    case BLKRT_ARG_FLOAT: return "a float (BLKRT_FLOAT)";
    }
    return "an argument of unknown kind";
}

static blkrt_status bad_kind(const blkrt_kernel *k, int i, blkrt_arg_kind want, blkrt_arg_kind got) {
    const rt_param *p = &k->meta->params[i];
    return rt_err(BLKRT_ERR_INVALID_LAUNCH, "kernel '%s': argument %d '%s' (%s) needs %s, got %s", k->name, i + 1,
                  p->name, p->type_str, kind_name(want), kind_name(got));
}

blkrt_status rt_convert_arg(const blkrt_kernel *k, int i, const blkrt_arg *a, uint64_t *slot, bool *is_d16,
                            bool *is_eq1) {
    const rt_param *p = &k->meta->params[i];
    rt_type t = p->type;
    *slot = 0;
    *is_d16 = *is_eq1 = false;
    if (t == RT_T_PTR) {
        if (a->kind != BLKRT_ARG_PTR) return bad_kind(k, i, BLKRT_ARG_PTR, a->kind);
        *slot = a->v.ptr;
        *is_d16 = (a->v.ptr & 15) == 0;
        return BLKRT_OK;
    }
    if (rt_type_is_float(t)) {
        if (a->kind != BLKRT_ARG_FLOAT) return bad_kind(k, i, BLKRT_ARG_FLOAT, a->kind);
        double x = a->v.f;
        switch (t) {
        case RT_T_F64: memcpy(slot, &x, 8); break;
        case RT_T_F32: {
            float f = (float)x;
            memcpy(slot, &f, 4);
            break;
        }
        case RT_T_F16: *slot = rt_f64_to_f16(x); break;
        case RT_T_BF16: *slot = rt_f64_to_bf16(x); break;
        case RT_T_F8E4M3: *slot = rt_f64_to_f8e4m3(x); break;
        case RT_T_F8E5M2: *slot = rt_f64_to_f8e5m2(x); break;
        default: break;
        }
        return BLKRT_OK;
    }
    /* integers and bool */
    if (a->kind != BLKRT_ARG_INT) return bad_kind(k, i, BLKRT_ARG_INT, a->kind);
    int64_t v = a->v.i;
    int64_t lo = INT64_MIN, hi = INT64_MAX;
    switch (t) {
    case RT_T_BOOL: lo = 0, hi = 1; break;
    case RT_T_I8: lo = INT8_MIN, hi = INT8_MAX; break;
    case RT_T_I16: lo = INT16_MIN, hi = INT16_MAX; break;
    case RT_T_I32: lo = INT32_MIN, hi = INT32_MAX; break;
    case RT_T_U8: lo = 0, hi = UINT8_MAX; break;
    case RT_T_U16: lo = 0, hi = UINT16_MAX; break;
    case RT_T_U32: lo = 0, hi = UINT32_MAX; break;
    default: break; /* i64, u64: every int64 (u64 takes the bits) */
    }
    if (v < lo || v > hi)
        return rt_err(BLKRT_ERR_INVALID_LAUNCH, "kernel '%s': argument %d '%s' (%s): %lld is out of range", k->name,
                      i + 1, p->name, p->type_str, (long long)v);
    int bytes = rt_type_bytes(t);
    uint64_t u = (uint64_t)v;
    *slot = bytes == 8 ? u : u & ((UINT64_C(1) << (bytes * 8)) - 1);
    *is_d16 = (u & 15) == 0;
    *is_eq1 = v == 1;
    return BLKRT_OK;
}

/* tmap.c — TMA tensor maps: from a variant's tmaps= to cuTensorMapEncodeTiled.
 *
 * A variant that loads through TMA (cp.async.bulk.tensor) takes one
 * CUtensorMap per map, by value, after its declared parameters. What a map
 * holds depends on the launch (the base pointer, dims and strides from
 * integer arguments), so the runtime encodes it at launch:
 *
 *   rt_tmap_eval      one map's encode arguments from the launch's
 *                     arguments, and whether TMA can take them (pure: the
 *                     unit tests check its output field by field);
 *   rt_tmaps_fit      every map of a variant: launch.c skips a variant whose
 *                     maps do not fit, so a shape TMA cannot take runs the
 *                     next variant (ultimately the generic one, which has
 *                     no maps) instead of failing;
 *   rt_tmap_encode    the device's cache of encoded maps, and the one
 *                     driver call on a miss.
 *
 * The eligibility rule is cuTensorMapEncodeTiled's documented one (cuda.h)
 * for what the compiler leaves to the launch: base 16-byte aligned and not
 * NULL, dims 1..2^32, strides multiples of 16 bytes below 2^40, box[0] *
 * element size a multiple of 16 bytes and, when swizzled, at most the
 * swizzle span. Sums of products are computed in int64 with overflow
 * checks, every factor must be at least 1 (two negative factors must not
 * make a positive dim, nor a negative term shrink a sum).
 */
#include <stdio.h>
#include <string.h>

#include "rt.h"

int rt_tmap_dtype(rt_type t) {
    switch (t) {
    case RT_T_I16:
    case RT_T_U16: return RT_CU_TENSOR_MAP_DATA_TYPE_UINT16;
    case RT_T_I32: return RT_CU_TENSOR_MAP_DATA_TYPE_INT32;
    case RT_T_U32: return RT_CU_TENSOR_MAP_DATA_TYPE_UINT32;
    case RT_T_I64: return RT_CU_TENSOR_MAP_DATA_TYPE_INT64;
    case RT_T_U64: return RT_CU_TENSOR_MAP_DATA_TYPE_UINT64;
    case RT_T_F16: return RT_CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
    case RT_T_BF16: return RT_CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
    case RT_T_F32: return RT_CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
    case RT_T_F64: return RT_CU_TENSOR_MAP_DATA_TYPE_FLOAT64;
    default: return RT_CU_TENSOR_MAP_DATA_TYPE_UINT8; /* bool, i8, u8, f8e4m3, f8e5m2: bytes copied as they are */
    }
}

const char *rt_tmap_fit_text(rt_tmap_fit f) {
    switch (f) {
    case RT_TMAP_FITS: return "it fits";
    case RT_TMAP_NULL_BASE: return "the base pointer is NULL";
    case RT_TMAP_BASE_ALIGN: return "the base pointer is not 16-byte aligned";
    case RT_TMAP_DIM_RANGE: return "a dimension is not in 1..2^32";
    case RT_TMAP_STRIDE_RANGE: return "a stride is not in 1..2^40-1 bytes";
    case RT_TMAP_STRIDE_ALIGN: return "a stride is not a multiple of 16 bytes";
    case RT_TMAP_BOX_ALIGN: return "box[0] times the element size is not a multiple of 16 bytes";
    case RT_TMAP_BOX_SWIZZLE: return "box[0] times the element size exceeds the swizzle span";
    }
    return "?";
}

/* The sum of products e for these arguments; false if a factor is < 1 or
 * a product or the sum overflows. */
static bool eval_expr(const rt_tmap_expr *e, const blkrt_arg *args, int64_t *out) {
    int64_t sum = 0, x = 1;
    for (int i = 0; i < e->nfactors; i++) {
        if (e->f[i].plus) {
            if (__builtin_add_overflow(sum, x, &sum)) return false;
            x = 1;
        }
        int64_t f = e->f[i].param < 0 ? e->f[i].value : args[e->f[i].param].v.i;
        if (f < 1 || __builtin_mul_overflow(x, f, &x)) return false;
    }
    if (__builtin_add_overflow(sum, x, &sum)) return false;
    *out = sum;
    return true;
}

rt_tmap_fit rt_tmap_eval(const rt_tmap *t, const blkrt_arg *args, rt_tmap_args *out) {
    memset(out, 0, sizeof *out);
    int64_t esize = rt_type_bytes(t->dtype);
    out->dtype = rt_tmap_dtype(t->dtype);
    out->rank = (uint32_t)t->rank;
    out->addr = args[t->arg].v.ptr;
    out->interleave = RT_CU_TENSOR_MAP_INTERLEAVE_NONE;
    out->swizzle = t->swizzle == 128  ? RT_CU_TENSOR_MAP_SWIZZLE_128B
                   : t->swizzle == 64 ? RT_CU_TENSOR_MAP_SWIZZLE_64B
                   : t->swizzle == 32 ? RT_CU_TENSOR_MAP_SWIZZLE_32B
                                      : RT_CU_TENSOR_MAP_SWIZZLE_NONE;
    /* 128 B, as docs/runtime.md specifies: an L2 fill per 128-byte row
     * segment, the widest swizzled box row. */
    out->l2 = RT_CU_TENSOR_MAP_L2_PROMOTION_L2_128B;
    /* FILL_NONE: elements outside the tensor read as zero, tensor_desc's semantics */
    out->oob = RT_CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE;
    for (int d = 0; d < t->rank; d++) {
        out->box[d] = t->box[d];
        out->elem_strides[d] = 1;
    }
    if (out->addr == 0) return RT_TMAP_NULL_BASE;
    if (out->addr % 16) return RT_TMAP_BASE_ALIGN;
    for (int d = 0; d < t->rank; d++) {
        int64_t x;
        if (!eval_expr(&t->dim[d], args, &x) || x > (INT64_C(1) << 32)) return RT_TMAP_DIM_RANGE;
        out->dims[d] = (uint64_t)x;
    }
    for (int d = 0; d + 1 < t->rank; d++) {
        int64_t x;
        if (!eval_expr(&t->stride[d], args, &x) || __builtin_mul_overflow(x, esize, &x) || x >= (INT64_C(1) << 40))
            return RT_TMAP_STRIDE_RANGE;
        if (x % 16) return RT_TMAP_STRIDE_ALIGN;
        out->strides[d] = (uint64_t)x;
    }
    int64_t row = (int64_t)t->box[0] * esize;
    if (row % 16) return RT_TMAP_BOX_ALIGN;
    if (t->swizzle > 0 && row > t->swizzle) return RT_TMAP_BOX_SWIZZLE;
    return RT_TMAP_FITS;
}

rt_tmap_fit rt_tmaps_fit(const rt_variant *v, const blkrt_arg *args, rt_tmap_args *out, int *bad) {
    for (int i = 0; i < v->ntmaps; i++) {
        rt_tmap_fit f = rt_tmap_eval(&v->tmaps[i], args, &out[i]);
        if (f != RT_TMAP_FITS) {
            *bad = i;
            return f;
        }
    }
    return RT_TMAP_FITS;
}

/* ---- the cache ---- */
void rt_tmap_cache_init(rt_tmap_cache *c) {
    memset(c, 0, sizeof *c);
    pthread_mutex_init(&c->lock, NULL);
}

void rt_tmap_cache_destroy(rt_tmap_cache *c) { pthread_mutex_destroy(&c->lock); }

/* Of the key's words (never 0: 0 marks an empty slot). */
static uint64_t key_hash(const rt_tmap_args *a) {
    uint64_t w[sizeof *a / 8], h = 0x9e3779b97f4a7c15u;
    memcpy(w, a, sizeof w);
    for (size_t i = 0; i < sizeof w / 8; i++) {
        h ^= w[i];
        h *= 0xff51afd7ed558ccdu;
        h ^= h >> 29;
    }
    return h ? h : 1;
}

blkrt_status rt_tmap_encode(blkrt_device *d, const blkrt_kernel *k, const rt_tmap *t, const rt_tmap_args *a,
                            CUtensorMap *map) {
    _Static_assert(sizeof(rt_tmap_args) % 8 == 0, "the hash reads the key as words");
    const char *pname = k->meta->params[t->arg].name;
    if (!d->cu->cuTensorMapEncodeTiled)
        return rt_err(BLKRT_ERR_DRIVER,
                      "kernel '%s': the tensor map of '%s' needs cuTensorMapEncodeTiled, which this CUDA driver lacks "
                      "(CUDA 12.0 or newer)",
                      k->name, pname);
    rt_tmap_cache *c = &d->tmaps;
    uint64_t h = key_hash(a);
    pthread_mutex_lock(&c->lock);
    for (int i = 0; i < RT_TMAP_CACHE; i++)
        if (c->e[i].hash == h && memcmp(&c->e[i].key, a, sizeof *a) == 0) {
            memcpy(map, c->e[i].map, sizeof *map);
            pthread_mutex_unlock(&c->lock);
            return BLKRT_OK;
        }
    CUresult r = d->cu->cuTensorMapEncodeTiled(map, a->dtype, a->rank, (void *)(uintptr_t)a->addr, a->dims, a->strides,
                                               a->box, a->elem_strides, a->interleave, a->swizzle, a->l2, a->oob);
    if (r == RT_CUDA_SUCCESS) {
        rt_tmap_entry *e = &c->e[c->next];
        c->next = (c->next + 1) % RT_TMAP_CACHE;
        e->key = *a;
        e->hash = h;
        memcpy(e->map, map, sizeof *map);
    }
    pthread_mutex_unlock(&c->lock);
    if (r == RT_CUDA_SUCCESS) return BLKRT_OK;
    char what[300];
    snprintf(what, sizeof what, "cuTensorMapEncodeTiled (kernel '%s', the tensor map of '%s')", k->name, pname);
    return rt_cu_err(r, what);
}

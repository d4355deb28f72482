/* memory.c — device memory: allocation, copies, memset, sync and async.
 *
 * On a GPU each call is one driver call inside the device's context. On the
 * CPU device memory is host memory; cpu_device.c keeps the table of
 * allocations so that copies are checked against their bounds (a GPU would
 * fault; the CPU device reports the bad range instead).
 */
#include <string.h>

#include "rt.h"

blkrt_status blkrt_malloc(blkrt_device *d, size_t bytes, blkrt_ptr *out) {
    blkrt_status st = rt_check_device(d, "blkrt_malloc");
    if (st) return st;
    if (!out) return rt_err(BLKRT_ERR_INVALID_VALUE, "blkrt_malloc: out is NULL");
    *out = 0;
    if (bytes == 0) return rt_err(BLKRT_ERR_INVALID_VALUE, "blkrt_malloc: size is 0");
    if (d->kind == BLKRT_KIND_CPU) return rt_cpu_malloc(d, bytes, out);
    rt_ctx_scope sc;
    CUdeviceptr p = 0;
    CUresult r = rt_ctx_enter(d, &sc);
    if (r == RT_CUDA_SUCCESS) r = d->cu->cuMemAlloc(&p, bytes);
    rt_ctx_leave(d, &sc);
    if (r != RT_CUDA_SUCCESS) {
        st = rt_cu_err(r, "cuMemAlloc");
        if (st == BLKRT_ERR_OUT_OF_MEMORY)
            rt_err(st, "blkrt_malloc: out of device memory allocating %zu bytes on GPU %d", bytes, d->info.ordinal);
        return st;
    }
    *out = p;
    return BLKRT_OK;
}

blkrt_status blkrt_free(blkrt_device *d, blkrt_ptr p) {
    blkrt_status st = rt_check_device(d, "blkrt_free");
    if (st || p == 0) return st; /* freeing 0 is a no-op, like free(NULL) */
    if (d->kind == BLKRT_KIND_CPU) return rt_cpu_free(d, p);
    rt_ctx_scope sc;
    CUresult r = rt_ctx_enter(d, &sc);
    if (r == RT_CUDA_SUCCESS) r = d->cu->cuMemFree(p);
    rt_ctx_leave(d, &sc);
    return r ? rt_cu_err(r, "cuMemFree") : BLKRT_OK;
}

/* The copy kinds share one body: direction, sync or stream-ordered. */
typedef enum { HTOD, DTOH, DTOD, MEMSET } copy_kind;

static const char *const copy_names[2][4] = {
    {"blkrt_memcpy_htod", "blkrt_memcpy_dtoh", "blkrt_memcpy_dtod", "blkrt_memset"},
    {"blkrt_memcpy_htod_async", "blkrt_memcpy_dtoh_async", "blkrt_memcpy_dtod_async", "blkrt_memset_async"},
};

static blkrt_status copy(copy_kind kind, bool async, blkrt_device *d, blkrt_ptr dptr, void *host, blkrt_ptr sptr,
                         uint8_t value, size_t bytes, blkrt_stream *s) {
    const char *fn = copy_names[async][kind];
    blkrt_status st = rt_check_device(d, fn);
    if (st) return st;
    CUstream cs = NULL;
    if (async && (st = rt_stream_for(d, s, &cs, fn))) return st;
    if (bytes == 0) return BLKRT_OK;
    if ((kind == HTOD || kind == DTOH) && !host) return rt_err(BLKRT_ERR_INVALID_VALUE, "%s: host pointer is NULL", fn);
    if (d->kind == BLKRT_KIND_CPU) {
        if (async && s && s->capturing)
            return rt_err(BLKRT_ERR_UNSUPPORTED, "%s: only launches can be captured on the CPU device", fn);
        void *dst = NULL, *src = NULL;
        switch (kind) {
        case HTOD:
            if ((st = rt_cpu_range(d, dptr, bytes, &dst, fn))) return st;
            memmove(dst, host, bytes);
            break;
        case DTOH:
            if ((st = rt_cpu_range(d, sptr, bytes, &src, fn))) return st;
            memmove(host, src, bytes);
            break;
        case DTOD:
            if ((st = rt_cpu_range(d, dptr, bytes, &dst, fn)) || (st = rt_cpu_range(d, sptr, bytes, &src, fn)))
                return st;
            memmove(dst, src, bytes);
            break;
        case MEMSET:
            if ((st = rt_cpu_range(d, dptr, bytes, &dst, fn))) return st;
            memset(dst, value, bytes);
            break;
        }
        return BLKRT_OK;
    }
    const rt_cuda *cu = d->cu;
    rt_ctx_scope sc;
    CUresult r = rt_ctx_enter(d, &sc);
    const char *call = "cuCtxPushCurrent";
    if (r == RT_CUDA_SUCCESS) {
        switch (kind) {
        case HTOD:
            call = async ? "cuMemcpyHtoDAsync" : "cuMemcpyHtoD";
            r = async ? cu->cuMemcpyHtoDAsync(dptr, host, bytes, cs) : cu->cuMemcpyHtoD(dptr, host, bytes);
            break;
        case DTOH:
            call = async ? "cuMemcpyDtoHAsync" : "cuMemcpyDtoH";
            r = async ? cu->cuMemcpyDtoHAsync(host, sptr, bytes, cs) : cu->cuMemcpyDtoH(host, sptr, bytes);
            break;
        case DTOD:
            call = async ? "cuMemcpyDtoDAsync" : "cuMemcpyDtoD";
            r = async ? cu->cuMemcpyDtoDAsync(dptr, sptr, bytes, cs) : cu->cuMemcpyDtoD(dptr, sptr, bytes);
            break;
        case MEMSET:
            call = async ? "cuMemsetD8Async" : "cuMemsetD8";
            r = async ? cu->cuMemsetD8Async(dptr, value, bytes, cs) : cu->cuMemsetD8(dptr, value, bytes);
            break;
        }
    }
    rt_ctx_leave(d, &sc);
    return r ? rt_cu_err_on(d, r, call) : BLKRT_OK;
}

blkrt_status blkrt_memcpy_htod(blkrt_device *d, blkrt_ptr dst, const void *src, size_t bytes) {
    return copy(HTOD, false, d, dst, (void *)src, 0, 0, bytes, NULL);
}
blkrt_status blkrt_memcpy_dtoh(blkrt_device *d, void *dst, blkrt_ptr src, size_t bytes) {
    return copy(DTOH, false, d, 0, dst, src, 0, bytes, NULL);
}
blkrt_status blkrt_memcpy_dtod(blkrt_device *d, blkrt_ptr dst, blkrt_ptr src, size_t bytes) {
    return copy(DTOD, false, d, dst, NULL, src, 0, bytes, NULL);
}
blkrt_status blkrt_memset(blkrt_device *d, blkrt_ptr dst, uint8_t value, size_t bytes) {
    return copy(MEMSET, false, d, dst, NULL, 0, value, bytes, NULL);
}
blkrt_status blkrt_memcpy_htod_async(blkrt_device *d, blkrt_ptr dst, const void *src, size_t bytes, blkrt_stream *s) {
    return copy(HTOD, true, d, dst, (void *)src, 0, 0, bytes, s);
}
blkrt_status blkrt_memcpy_dtoh_async(blkrt_device *d, void *dst, blkrt_ptr src, size_t bytes, blkrt_stream *s) {
    return copy(DTOH, true, d, 0, dst, src, 0, bytes, s);
}
blkrt_status blkrt_memcpy_dtod_async(blkrt_device *d, blkrt_ptr dst, blkrt_ptr src, size_t bytes, blkrt_stream *s) {
    return copy(DTOD, true, d, dst, NULL, src, 0, bytes, s);
}
blkrt_status blkrt_memset_async(blkrt_device *d, blkrt_ptr dst, uint8_t value, size_t bytes, blkrt_stream *s) {
    return copy(MEMSET, true, d, dst, NULL, 0, value, bytes, s);
}

/* memory.c — device memory: allocation, copies, memset, sync and async.
 *
 * The checks common to both kinds of device, then the device's table: on a
 * GPU each call is one driver call inside the device's context
 * (gpu_device.c); on the CPU device memory is host memory and cpu_device.c
 * keeps the table of allocations so that copies are checked against their
 * bounds (a GPU would fault; the CPU device reports the bad range instead).
 */
#include <string.h>

#include "rt.h"

blkrt_status blkrt_malloc(blkrt_device *d, size_t bytes, blkrt_ptr *out) {
    blkrt_status st = rt_check_device(d, "blkrt_malloc");
    if (st) return st;
    if (!out) return rt_err(BLKRT_ERR_INVALID_VALUE, "blkrt_malloc: out is NULL");
    *out = 0;
    if (bytes == 0) return rt_err(BLKRT_ERR_INVALID_VALUE, "blkrt_malloc: size is 0");
    return d->ops->mem_alloc(d, bytes, out);
}

blkrt_status blkrt_free(blkrt_device *d, blkrt_ptr p) {
    blkrt_status st = rt_check_device(d, "blkrt_free");
    if (st || p == 0) return st; /* freeing 0 is a no-op, like free(NULL) */
    return d->ops->mem_free(d, p);
}

/* The copy kinds share one body: direction, sync or stream-ordered. */
static const char *const copy_names[2][4] = {
    {"blkrt_memcpy_htod", "blkrt_memcpy_dtoh", "blkrt_memcpy_dtod", "blkrt_memset"},
    {"blkrt_memcpy_htod_async", "blkrt_memcpy_dtoh_async", "blkrt_memcpy_dtod_async", "blkrt_memset_async"},
};

static blkrt_status copy(rt_copy_kind kind, bool async, blkrt_device *d, blkrt_ptr dptr, void *host, blkrt_ptr sptr,
                         uint8_t value, size_t bytes, blkrt_stream *s) {
    const char *fn = copy_names[async][kind];
    blkrt_status st = rt_check_device(d, fn);
    if (st) return st;
    CUstream cs = NULL;
    if (async && (st = rt_stream_for(d, s, &cs, fn))) return st;
    if (bytes == 0) return BLKRT_OK;
    if ((kind == RT_COPY_HTOD || kind == RT_COPY_DTOH) && !host)
        return rt_err(BLKRT_ERR_INVALID_VALUE, "%s: host pointer is NULL", fn);
    return d->ops->copy(d, kind, async, dptr, host, sptr, value, bytes, s, cs, fn);
}

blkrt_status blkrt_memcpy_htod(blkrt_device *d, blkrt_ptr dst, const void *src, size_t bytes) {
    return copy(RT_COPY_HTOD, false, d, dst, (void *)src, 0, 0, bytes, NULL);
}
blkrt_status blkrt_memcpy_dtoh(blkrt_device *d, void *dst, blkrt_ptr src, size_t bytes) {
    return copy(RT_COPY_DTOH, false, d, 0, dst, src, 0, bytes, NULL);
}
blkrt_status blkrt_memcpy_dtod(blkrt_device *d, blkrt_ptr dst, blkrt_ptr src, size_t bytes) {
    return copy(RT_COPY_DTOD, false, d, dst, NULL, src, 0, bytes, NULL);
}
blkrt_status blkrt_memset(blkrt_device *d, blkrt_ptr dst, uint8_t value, size_t bytes) {
    return copy(RT_MEMSET, false, d, dst, NULL, 0, value, bytes, NULL);
}
blkrt_status blkrt_memcpy_htod_async(blkrt_device *d, blkrt_ptr dst, const void *src, size_t bytes, blkrt_stream *s) {
    return copy(RT_COPY_HTOD, true, d, dst, (void *)src, 0, 0, bytes, s);
}
blkrt_status blkrt_memcpy_dtoh_async(blkrt_device *d, void *dst, blkrt_ptr src, size_t bytes, blkrt_stream *s) {
    return copy(RT_COPY_DTOH, true, d, 0, dst, src, 0, bytes, s);
}
blkrt_status blkrt_memcpy_dtod_async(blkrt_device *d, blkrt_ptr dst, blkrt_ptr src, size_t bytes, blkrt_stream *s) {
    return copy(RT_COPY_DTOD, true, d, dst, NULL, src, 0, bytes, s);
}
blkrt_status blkrt_memset_async(blkrt_device *d, blkrt_ptr dst, uint8_t value, size_t bytes, blkrt_stream *s) {
    return copy(RT_MEMSET, true, d, dst, NULL, 0, value, bytes, s);
}

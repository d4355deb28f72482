/* stream.c — streams and events.
 *
 * Streams are created with default flags: they synchronise with the legacy
 * default stream, so a synchronous copy after a launch on a stream sees the
 * kernel's results (what a C caller expects). On the CPU device work runs
 * when it is issued, so a stream is a token (and a capture list, graph.c)
 * and an event records the time it was reached.
 */
#include <stdlib.h>
#include <time.h>

#include "rt.h"

double rt_now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

blkrt_status blkrt_stream_create(blkrt_device *d, blkrt_stream **out) {
    blkrt_status st = rt_check_device(d, "blkrt_stream_create");
    if (st) return st;
    if (!out) return rt_err(BLKRT_ERR_INVALID_VALUE, "blkrt_stream_create: out is NULL");
    *out = NULL;
    blkrt_stream *s = calloc(1, sizeof *s);
    if (!s) return rt_err(BLKRT_ERR_OUT_OF_MEMORY, "out of memory");
    s->magic = RT_MAGIC_STREAM;
    s->dev = d;
    if (d->kind == BLKRT_KIND_GPU) {
        rt_ctx_scope sc;
        CUresult r = rt_ctx_enter(d, &sc);
        if (r == RT_CUDA_SUCCESS) r = d->cu->cuStreamCreate(&s->cu, RT_CU_STREAM_DEFAULT);
        rt_ctx_leave(d, &sc);
        if (r) {
            free(s);
            return rt_cu_err(r, "cuStreamCreate");
        }
    }
    atomic_fetch_add(&d->children, 1);
    *out = s;
    return BLKRT_OK;
}

/* A CUstream made by someone else (a torch.cuda.Stream, a CUDA runtime
 * cudaStream_t: the same object) used as a blkrt stream. It must belong to
 * the device's context (the primary context, as torch's do); the driver
 * reports a mismatch at the first launch. */
blkrt_status blkrt_stream_wrap(blkrt_device *d, uint64_t custream, blkrt_stream **out) {
    blkrt_status st = rt_check_device(d, "blkrt_stream_wrap");
    if (st) return st;
    if (!out) return rt_err(BLKRT_ERR_INVALID_VALUE, "blkrt_stream_wrap: out is NULL");
    *out = NULL;
    if (d->kind != BLKRT_KIND_GPU)
        return rt_err(BLKRT_ERR_UNSUPPORTED, "blkrt_stream_wrap: the CPU device has no CUDA streams");
    blkrt_stream *s = calloc(1, sizeof *s);
    if (!s) return rt_err(BLKRT_ERR_OUT_OF_MEMORY, "out of memory");
    s->magic = RT_MAGIC_STREAM;
    s->dev = d;
    s->cu = (CUstream)(uintptr_t)custream;
    s->foreign = true;
    atomic_fetch_add(&d->children, 1);
    *out = s;
    return BLKRT_OK;
}

blkrt_status blkrt_stream_destroy(blkrt_stream *s) {
    if (!RT_IS(s, RT_MAGIC_STREAM)) return rt_err(BLKRT_ERR_INVALID_HANDLE, "blkrt_stream_destroy: not a stream handle");
    blkrt_device *d = s->dev;
    if (d->kind == BLKRT_KIND_GPU && !s->foreign) {
        rt_ctx_scope sc;
        CUresult r = rt_ctx_enter(d, &sc);
        if (r == RT_CUDA_SUCCESS) r = d->cu->cuStreamDestroy(s->cu);
        rt_ctx_leave(d, &sc);
        if (r) return rt_cu_err(r, "cuStreamDestroy");
    } else {
        rt_cpu_free_launches(s->cap_first);
    }
    s->magic = RT_MAGIC_DEAD;
    free(s);
    atomic_fetch_sub(&d->children, 1);
    return BLKRT_OK;
}

blkrt_status blkrt_stream_synchronize(blkrt_stream *s) {
    if (!RT_IS(s, RT_MAGIC_STREAM))
        return rt_err(BLKRT_ERR_INVALID_HANDLE, "blkrt_stream_synchronize: not a stream handle");
    blkrt_device *d = s->dev;
    if (d->kind == BLKRT_KIND_CPU) return BLKRT_OK;
    rt_ctx_scope sc;
    CUresult r = rt_ctx_enter(d, &sc);
    if (r == RT_CUDA_SUCCESS) r = d->cu->cuStreamSynchronize(s->cu);
    rt_ctx_leave(d, &sc);
    return r ? rt_cu_err(r, "cuStreamSynchronize") : BLKRT_OK;
}

blkrt_status blkrt_event_create(blkrt_device *d, blkrt_event **out) {
    blkrt_status st = rt_check_device(d, "blkrt_event_create");
    if (st) return st;
    if (!out) return rt_err(BLKRT_ERR_INVALID_VALUE, "blkrt_event_create: out is NULL");
    *out = NULL;
    blkrt_event *e = calloc(1, sizeof *e);
    if (!e) return rt_err(BLKRT_ERR_OUT_OF_MEMORY, "out of memory");
    e->magic = RT_MAGIC_EVENT;
    e->dev = d;
    e->cpu_ms = -1;
    if (d->kind == BLKRT_KIND_GPU) {
        rt_ctx_scope sc;
        CUresult r = rt_ctx_enter(d, &sc);
        if (r == RT_CUDA_SUCCESS) r = d->cu->cuEventCreate(&e->cu, RT_CU_EVENT_DEFAULT);
        rt_ctx_leave(d, &sc);
        if (r) {
            free(e);
            return rt_cu_err(r, "cuEventCreate");
        }
    }
    atomic_fetch_add(&d->children, 1);
    *out = e;
    return BLKRT_OK;
}

blkrt_status blkrt_event_destroy(blkrt_event *e) {
    if (!RT_IS(e, RT_MAGIC_EVENT)) return rt_err(BLKRT_ERR_INVALID_HANDLE, "blkrt_event_destroy: not an event handle");
    blkrt_device *d = e->dev;
    if (d->kind == BLKRT_KIND_GPU) {
        rt_ctx_scope sc;
        CUresult r = rt_ctx_enter(d, &sc);
        if (r == RT_CUDA_SUCCESS) r = d->cu->cuEventDestroy(e->cu);
        rt_ctx_leave(d, &sc);
        if (r) return rt_cu_err(r, "cuEventDestroy");
    }
    e->magic = RT_MAGIC_DEAD;
    free(e);
    atomic_fetch_sub(&d->children, 1);
    return BLKRT_OK;
}

blkrt_status blkrt_event_record(blkrt_event *e, blkrt_stream *s) {
    if (!RT_IS(e, RT_MAGIC_EVENT)) return rt_err(BLKRT_ERR_INVALID_HANDLE, "blkrt_event_record: not an event handle");
    blkrt_device *d = e->dev;
    CUstream cs;
    blkrt_status st = rt_stream_for(d, s, &cs, "blkrt_event_record");
    if (st) return st;
    if (d->kind == BLKRT_KIND_CPU) {
        e->cpu_ms = rt_now_ms();
        return BLKRT_OK;
    }
    rt_ctx_scope sc;
    CUresult r = rt_ctx_enter(d, &sc);
    if (r == RT_CUDA_SUCCESS) r = d->cu->cuEventRecord(e->cu, cs);
    rt_ctx_leave(d, &sc);
    return r ? rt_cu_err(r, "cuEventRecord") : BLKRT_OK;
}

blkrt_status blkrt_event_synchronize(blkrt_event *e) {
    if (!RT_IS(e, RT_MAGIC_EVENT))
        return rt_err(BLKRT_ERR_INVALID_HANDLE, "blkrt_event_synchronize: not an event handle");
    blkrt_device *d = e->dev;
    if (d->kind == BLKRT_KIND_CPU) return BLKRT_OK;
    rt_ctx_scope sc;
    CUresult r = rt_ctx_enter(d, &sc);
    if (r == RT_CUDA_SUCCESS) r = d->cu->cuEventSynchronize(e->cu);
    rt_ctx_leave(d, &sc);
    return r ? rt_cu_err(r, "cuEventSynchronize") : BLKRT_OK;
}

blkrt_status blkrt_event_elapsed_ms(blkrt_event *start, blkrt_event *end, float *ms) {
    if (!RT_IS(start, RT_MAGIC_EVENT) || !RT_IS(end, RT_MAGIC_EVENT))
        return rt_err(BLKRT_ERR_INVALID_HANDLE, "blkrt_event_elapsed_ms: not an event handle");
    if (!ms) return rt_err(BLKRT_ERR_INVALID_VALUE, "blkrt_event_elapsed_ms: ms is NULL");
    if (start->dev != end->dev)
        return rt_err(BLKRT_ERR_INVALID_VALUE, "blkrt_event_elapsed_ms: the events belong to different devices");
    blkrt_device *d = start->dev;
    if (d->kind == BLKRT_KIND_CPU) {
        if (start->cpu_ms < 0 || end->cpu_ms < 0)
            return rt_err(BLKRT_ERR_INVALID_VALUE, "blkrt_event_elapsed_ms: an event was never recorded");
        *ms = (float)(end->cpu_ms - start->cpu_ms);
        return BLKRT_OK;
    }
    rt_ctx_scope sc;
    CUresult r = rt_ctx_enter(d, &sc);
    if (r == RT_CUDA_SUCCESS) r = d->cu->cuEventElapsedTime(ms, start->cu, end->cu);
    rt_ctx_leave(d, &sc);
    return r ? rt_cu_err(r, "cuEventElapsedTime") : BLKRT_OK;
}

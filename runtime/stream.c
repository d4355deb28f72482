/* stream.c — streams, events, and synchronisation that names the launch
 * it waits for.
 *
 * Streams are created with default flags: they synchronise with the legacy
 * default stream, so a synchronous copy after a launch on a stream sees the
 * kernel's results (what a C caller expects). On the CPU device work runs
 * when it is issued, so a stream is a token (and a capture list, graph.c)
 * and an event records the time it was reached.
 *
 * A GPU reports a kernel's fault (a trap, a failed device_assert, an illegal
 * address) only at the next synchronisation, and a kernel that never ends
 * only as a synchronisation that never returns. The launch log (rt.h) turns
 * both into messages that name the launch: the oldest one on the stream not
 * known to have finished. The timed forms poll cuStreamQuery / cuEventQuery
 * instead of blocking, so the caller gets control back at the deadline.
 */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rt.h"

double rt_now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

/* ---- the launch log ---- */
static void log_lock(rt_launch_log *l) {
    while (atomic_exchange_explicit(&l->lock, 1, memory_order_acquire)) sched_yield();
}

static void log_unlock(rt_launch_log *l) { atomic_store_explicit(&l->lock, 0, memory_order_release); }

void rt_launch_logged(blkrt_device *d, blkrt_stream *s, CUstream cs, const char *kernel, const uint32_t grid[3],
                      uint32_t threads) {
    if (s && s->capturing) return;
    rt_launch_log *l = &d->launches;
    double now = rt_now_ms();
    log_lock(l);
    uint64_t seq = ++l->next;
    rt_launch_rec *r = &l->rec[seq % RT_LAUNCH_LOG];
    r->seq = seq;
    r->stream = cs;
    r->finished = false;
    size_t n = strlen(kernel);
    if (n >= sizeof r->kernel) n = sizeof r->kernel - 1;
    memcpy(r->kernel, kernel, n);
    r->kernel[n] = 0;
    memcpy(r->grid, grid, sizeof r->grid);
    r->threads = threads;
    r->ms = now;
    log_unlock(l);
}

uint64_t rt_launch_mark(blkrt_device *d) {
    rt_launch_log *l = &d->launches;
    log_lock(l);
    uint64_t m = l->next;
    log_unlock(l);
    return m;
}

/* Mark the launches of cs (all: any) up to mark finished; or, with
 * done false, copy the oldest unfinished one to *oldest and count them. */
static int scan_log(blkrt_device *d, CUstream cs, bool all, uint64_t mark, bool done, rt_launch_rec *oldest) {
    rt_launch_log *l = &d->launches;
    int pending = 0;
    log_lock(l);
    for (int i = 0; i < RT_LAUNCH_LOG; i++) {
        rt_launch_rec *r = &l->rec[i];
        if (r->seq == 0 || r->finished || r->seq > mark || (!all && r->stream != cs)) continue;
        if (done) {
            r->finished = true;
        } else {
            if (pending == 0 || r->seq < oldest->seq) *oldest = *r;
            pending++;
        }
    }
    log_unlock(l);
    return pending;
}

/* Append to the message which launch the failed or unfinished work is. */
static void name_launch(blkrt_device *d, CUstream cs, bool all, uint64_t mark) {
    rt_launch_rec r;
    int pending = scan_log(d, cs, all, mark, false, &r);
    char text[400];
    if (pending == 0) {
        snprintf(text, sizeof text, "; no launch through blkrt is pending on %s (the work was issued elsewhere, "
                 "or before the last %d launches)", all ? "the device" : "this stream", RT_LAUNCH_LOG);
    } else {
        char what[160];
        if (r.threads == 0) snprintf(what, sizeof what, "a graph replay");
        else
            snprintf(what, sizeof what, "kernel '%s' (grid %ux%ux%u, %u threads a block)", r.kernel, r.grid[0],
                     r.grid[1], r.grid[2], r.threads);
        char more[120] = "";
        if (pending > 1)
            snprintf(more, sizeof more, all ? " (the oldest of %d unfinished ones on the device)"
                                            : " (the oldest of %d unfinished ones: the later ones wait for it)",
                     pending);
        snprintf(text, sizeof text, "; the launch not known to have finished: %s, launched %.3f s ago%s", what,
                 (rt_now_ms() - r.ms) * 1e-3, more);
    }
    rt_err_append(text);
}

blkrt_status rt_synced(blkrt_device *d, CUstream cs, bool all, uint64_t mark, CUresult r, const char *call) {
    if (r == RT_CUDA_SUCCESS) {
        scan_log(d, cs, all, mark, true, NULL);
        return BLKRT_OK;
    }
    blkrt_status st = rt_cu_err(r, call);
    name_launch(d, cs, all, mark);
    return st;
}

blkrt_status rt_cu_err_on(blkrt_device *d, CUresult r, const char *call) {
    blkrt_status st = rt_cu_err(r, call);
    switch (r) {
    case RT_CUDA_ERROR_ILLEGAL_ADDRESS: case RT_CUDA_ERROR_LAUNCH_TIMEOUT: case RT_CUDA_ERROR_ASSERT:
    case RT_CUDA_ERROR_HARDWARE_STACK_ERROR: case RT_CUDA_ERROR_ILLEGAL_INSTRUCTION:
    case RT_CUDA_ERROR_MISALIGNED_ADDRESS: case RT_CUDA_ERROR_LAUNCH_FAILED:
        name_launch(d, NULL, true, rt_launch_mark(d));
        break;
    default: break;
    }
    return st;
}

/* Poll cuStreamQuery(h) (event: cuEventQuery(h)) until it is no longer
 * NOT_READY or timeout_ms pass: naps that double from 20 us to ~1 ms keep
 * the wait cheap for the host without adding more than ~1 ms to a kernel's
 * finish. */
static CUresult poll_until(const rt_cuda *cu, bool event, void *h, uint32_t timeout_ms, double *waited) {
    double start = rt_now_ms(), nap_us = 20;
    for (;;) {
        CUresult r = event ? cu->cuEventQuery((CUevent)h) : cu->cuStreamQuery((CUstream)h);
        *waited = rt_now_ms() - start;
        if (r != RT_CUDA_ERROR_NOT_READY || *waited >= (double)timeout_ms) return r;
        double left_us = ((double)timeout_ms - *waited) * 1e3;
        struct timespec ts = {0, (long)((nap_us < left_us ? nap_us : left_us) * 1e3)};
        nanosleep(&ts, NULL);
        if (nap_us < 1000) nap_us *= 2;
    }
}

/* The TIMEOUT error of a wait on cs (all: the device) that ran out. */
static blkrt_status timed_out(blkrt_device *d, CUstream cs, bool all, uint64_t mark, const char *fn, double waited) {
    rt_err(BLKRT_ERR_TIMEOUT, "%s: %s has not finished after %.0f ms", fn, all ? "the device's work" : "the stream",
           waited);
    name_launch(d, cs, all, mark);
    rt_err_append(". It goes on running: a kernel that never ends cannot be stopped, and its context stays "
                  "busy until the process exits");
    return BLKRT_ERR_TIMEOUT;
}

blkrt_status blkrt_stream_synchronize_timeout(blkrt_device *d, blkrt_stream *s, uint32_t timeout_ms) {
    const char *fn = "blkrt_stream_synchronize_timeout";
    if (s && !RT_IS(s, RT_MAGIC_STREAM)) return rt_err(BLKRT_ERR_INVALID_HANDLE, "%s: not a stream handle", fn);
    if (!d && s) d = s->dev;
    blkrt_status st = rt_check_device(d, fn);
    if (st) return st;
    CUstream cs;
    if ((st = rt_stream_for(d, s, &cs, fn))) return st;
    if (d->kind == BLKRT_KIND_CPU) return BLKRT_OK;
    uint64_t mark = rt_launch_mark(d);
    rt_ctx_scope sc;
    double waited = 0;
    CUresult r = rt_ctx_enter(d, &sc);
    if (r == RT_CUDA_SUCCESS) r = poll_until(d->cu, false, (void *)cs, timeout_ms, &waited);
    rt_ctx_leave(d, &sc);
    if (r == RT_CUDA_ERROR_NOT_READY) return timed_out(d, cs, false, mark, fn, waited);
    return rt_synced(d, cs, false, mark, r, "cuStreamQuery");
}

/* All work of the device: an event recorded on the legacy default stream
 * completes after everything issued before it on every blocking stream
 * (the streams blkrt creates; not non-blocking ones made elsewhere). */
blkrt_status blkrt_device_synchronize_timeout(blkrt_device *d, uint32_t timeout_ms) {
    const char *fn = "blkrt_device_synchronize_timeout";
    blkrt_status st = rt_check_device(d, fn);
    if (st || d->kind == BLKRT_KIND_CPU) return st;
    uint64_t mark = rt_launch_mark(d);
    rt_ctx_scope sc;
    CUevent e = NULL;
    double waited = 0;
    const char *call = "cuEventCreate";
    CUresult r = rt_ctx_enter(d, &sc);
    if (r == RT_CUDA_SUCCESS) r = d->cu->cuEventCreate(&e, RT_CU_EVENT_DISABLE_TIMING);
    if (r == RT_CUDA_SUCCESS) {
        call = "cuEventRecord";
        r = d->cu->cuEventRecord(e, NULL);
    }
    if (r == RT_CUDA_SUCCESS) {
        call = "cuEventQuery";
        r = poll_until(d->cu, true, e, timeout_ms, &waited);
    }
    if (e) d->cu->cuEventDestroy(e);
    rt_ctx_leave(d, &sc);
    if (r == RT_CUDA_ERROR_NOT_READY) return timed_out(d, NULL, true, mark, fn, waited);
    return rt_synced(d, NULL, true, mark, r, call);
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
    }
    if (d->kind == BLKRT_KIND_GPU) {
        /* its CUstream may be reused by the next stream made: forget its launches */
        scan_log(d, s->cu, false, UINT64_MAX, true, NULL);
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
    uint64_t mark = rt_launch_mark(d);
    rt_ctx_scope sc;
    CUresult r = rt_ctx_enter(d, &sc);
    if (r == RT_CUDA_SUCCESS) r = d->cu->cuStreamSynchronize(s->cu);
    rt_ctx_leave(d, &sc);
    return rt_synced(d, s->cu, false, mark, r, "cuStreamSynchronize");
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

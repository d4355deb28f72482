/* gpu_stream.c — a GPU's streams, events and graphs, and synchronisation
 * that names the launch it waits for (the GPU's part of stream.c and
 * graph.c, through rt_gpu_ops).
 *
 * Streams are created with default flags: they synchronise with the legacy
 * default stream, so a synchronous copy after a launch on a stream sees the
 * kernel's results (what a C caller expects).
 *
 * A GPU reports a kernel's fault (a trap, a failed device_assert, an illegal
 * address) only at the next synchronisation, and a kernel that never ends
 * only as a synchronisation that never returns. The launch log (rt.h) turns
 * both into messages that name the launch: the oldest one on the stream not
 * known to have finished. The timed forms poll cuStreamQuery / cuEventQuery
 * instead of blocking, so the caller gets control back at the deadline.
 *
 * Graphs are CUDA stream capture: cuStreamBeginCapture (thread-local mode:
 * other threads of the program may keep using the driver while one
 * captures), the launches, cuStreamEndCapture, cuGraphInstantiate; a replay
 * is one cuGraphLaunch, whatever the number of kernels (what cuts the
 * per-launch host cost). The graph template is dropped after instantiation;
 * the executable graph is all a replay needs.
 */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gpu.h"

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

blkrt_status rt_gpu_synchronize(blkrt_device *d) {
    uint64_t mark = rt_launch_mark(d); /* launches up to here are finished when it succeeds */
    CUresult r;
    RT_CTX_CALL(d, r, d->cu->cuCtxSynchronize());
    return rt_synced(d, NULL, true, mark, r, "cuCtxSynchronize");
}

blkrt_status rt_gpu_stream_synchronize_timeout(blkrt_device *d, CUstream cs, uint32_t timeout_ms, const char *fn) {
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
blkrt_status rt_gpu_synchronize_timeout(blkrt_device *d, uint32_t timeout_ms, const char *fn) {
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

blkrt_status rt_gpu_stream_create(blkrt_stream *s) {
    blkrt_device *d = s->dev;
    CUresult r;
    RT_CTX_CALL(d, r, d->cu->cuStreamCreate(&s->cu, RT_CU_STREAM_DEFAULT));
    return r ? rt_cu_err(r, "cuStreamCreate") : BLKRT_OK;
}

/* A CUstream made by someone else (a torch.cuda.Stream, a CUDA runtime
 * cudaStream_t: the same object) used as a blkrt stream. It must belong to
 * the device's context (the primary context, as torch's do); the driver
 * reports a mismatch at the first launch. */
blkrt_status rt_gpu_stream_wrap(blkrt_device *d, uint64_t custream, blkrt_stream **out) {
    blkrt_stream *s = calloc(1, sizeof *s);
    if (!s) return rt_err(BLKRT_ERR_OUT_OF_MEMORY, "out of memory");
    s->magic = RT_MAGIC_STREAM;
    s->dev = d;
    s->cu = (CUstream)(uintptr_t)custream;
    s->foreign = true;
    *out = rt_child_keep(d, BLKRT_OK, s);
    return BLKRT_OK;
}

blkrt_status rt_gpu_stream_destroy(blkrt_stream *s) {
    blkrt_device *d = s->dev;
    if (!s->foreign) {
        CUresult r;
        RT_CTX_CALL(d, r, d->cu->cuStreamDestroy(s->cu));
        if (r) return rt_cu_err(r, "cuStreamDestroy");
    }
    /* its CUstream may be reused by the next stream made: forget its launches */
    scan_log(d, s->cu, false, UINT64_MAX, true, NULL);
    return BLKRT_OK;
}

blkrt_status rt_gpu_stream_synchronize(blkrt_stream *s) {
    blkrt_device *d = s->dev;
    uint64_t mark = rt_launch_mark(d);
    CUresult r;
    RT_CTX_CALL(d, r, d->cu->cuStreamSynchronize(s->cu));
    return rt_synced(d, s->cu, false, mark, r, "cuStreamSynchronize");
}

blkrt_status rt_gpu_event_create(blkrt_event *e) {
    blkrt_device *d = e->dev;
    CUresult r;
    RT_CTX_CALL(d, r, d->cu->cuEventCreate(&e->cu, RT_CU_EVENT_DEFAULT));
    return r ? rt_cu_err(r, "cuEventCreate") : BLKRT_OK;
}

blkrt_status rt_gpu_event_destroy(blkrt_event *e) {
    blkrt_device *d = e->dev;
    CUresult r;
    RT_CTX_CALL(d, r, d->cu->cuEventDestroy(e->cu));
    return r ? rt_cu_err(r, "cuEventDestroy") : BLKRT_OK;
}

blkrt_status rt_gpu_event_record(blkrt_event *e, CUstream cs) {
    blkrt_device *d = e->dev;
    CUresult r;
    RT_CTX_CALL(d, r, d->cu->cuEventRecord(e->cu, cs));
    return r ? rt_cu_err(r, "cuEventRecord") : BLKRT_OK;
}

blkrt_status rt_gpu_event_synchronize(blkrt_event *e) {
    blkrt_device *d = e->dev;
    CUresult r;
    RT_CTX_CALL(d, r, d->cu->cuEventSynchronize(e->cu));
    return r ? rt_cu_err(r, "cuEventSynchronize") : BLKRT_OK;
}

blkrt_status rt_gpu_event_elapsed_ms(blkrt_event *start, blkrt_event *end, float *ms) {
    blkrt_device *d = start->dev;
    CUresult r;
    RT_CTX_CALL(d, r, d->cu->cuEventElapsedTime(ms, start->cu, end->cu));
    return r ? rt_cu_err(r, "cuEventElapsedTime") : BLKRT_OK;
}

/* The profiler's timing of one launch: two events around it (the end one
 * recorded by profile.c after the launch). Any failure: not timed. */
void rt_gpu_timer_start(blkrt_device *d, rt_prof_launch *p, CUstream cs) {
    if (d->cu->cuEventCreate(&p->ev[0], 0) != RT_CUDA_SUCCESS) return;
    if (d->cu->cuEventCreate(&p->ev[1], 0) != RT_CUDA_SUCCESS) {
        d->cu->cuEventDestroy(p->ev[0]);
        return;
    }
    if (d->cu->cuEventRecord(p->ev[0], cs) != RT_CUDA_SUCCESS) {
        d->cu->cuEventDestroy(p->ev[0]);
        d->cu->cuEventDestroy(p->ev[1]);
        return;
    }
    p->timed = true;
    p->events = true;
}

/* ---- graphs ---- */

blkrt_status rt_gpu_capture_begin(blkrt_stream *s) {
    blkrt_device *d = s->dev;
    CUresult r;
    RT_CTX_CALL(d, r, d->cu->cuStreamBeginCapture(s->cu, RT_CU_STREAM_CAPTURE_MODE_THREAD_LOCAL));
    if (r) return rt_cu_err(r, "cuStreamBeginCapture");
    s->capturing = true; /* its launches are not logged: they run with the graph */
    return BLKRT_OK;
}

/* The capture ends all the same (abandoned): a stream left capturing would
 * refuse all later work. */
void rt_gpu_capture_abandon(blkrt_stream *s) {
    blkrt_device *d = s->dev;
    if (s->capturing) {
        rt_ctx_scope sc;
        CUgraph graph = NULL;
        if (rt_ctx_enter(d, &sc) == RT_CUDA_SUCCESS && d->cu->cuStreamEndCapture(s->cu, &graph) == RT_CUDA_SUCCESS &&
            graph)
            d->cu->cuGraphDestroy(graph);
        rt_ctx_leave(d, &sc);
    }
    s->capturing = false;
}

blkrt_status rt_gpu_capture_end(blkrt_stream *s, blkrt_graph *g) {
    blkrt_device *d = s->dev;
    rt_ctx_scope sc;
    CUgraph graph = NULL;
    CUresult r = rt_ctx_enter(d, &sc);
    const char *call = "cuStreamEndCapture";
    if (r == RT_CUDA_SUCCESS) r = d->cu->cuStreamEndCapture(s->cu, &graph);
    s->capturing = false;
    if (r == RT_CUDA_SUCCESS) {
        call = "cuGraphInstantiate";
        r = d->cu->cuGraphInstantiateWithFlags(&g->exec, graph, 0);
        d->cu->cuGraphDestroy(graph);
    }
    rt_ctx_leave(d, &sc);
    return r ? rt_cu_err(r, call) : BLKRT_OK;
}

blkrt_status rt_gpu_graph_launch(blkrt_graph *g, blkrt_stream *s, CUstream cs) {
    blkrt_device *d = g->dev;
    CUresult r;
    RT_CTX_CALL(d, r, d->cu->cuGraphLaunch(g->exec, cs));
    if (r) return rt_cu_err(r, "cuGraphLaunch");
    static const uint32_t one[3] = {1, 1, 1};
    rt_launch_logged(d, s, cs, "", one, 0); /* 0 threads: a graph replay */
    return BLKRT_OK;
}

blkrt_status rt_gpu_graph_destroy(blkrt_graph *g) {
    blkrt_device *d = g->dev;
    CUresult r;
    RT_CTX_CALL(d, r, d->cu->cuGraphExecDestroy(g->exec));
    return r ? rt_cu_err(r, "cuGraphExecDestroy") : BLKRT_OK;
}

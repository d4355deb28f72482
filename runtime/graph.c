/* graph.c — capturing a sequence of launches into a graph and replaying it.
 *
 * On a GPU this is CUDA stream capture: cuStreamBeginCapture (thread-local
 * mode: other threads of the program may keep using the driver while one
 * captures), the launches, cuStreamEndCapture, cuGraphInstantiate; a replay
 * is one cuGraphLaunch, whatever the number of kernels (what cuts the
 * per-launch host cost). The graph template is dropped after instantiation;
 * the executable graph is all a replay needs. On the CPU device the stream
 * records the launches (cpu_device.c) and a replay runs them in order.
 */
#include <stdlib.h>

#include "rt.h"

static blkrt_status capture_stream(blkrt_stream *s, const char *fn) {
    if (!RT_IS(s, RT_MAGIC_STREAM))
        return rt_err(BLKRT_ERR_INVALID_HANDLE, "%s: not a stream handle (capture needs a created stream, not NULL)", fn);
    return BLKRT_OK;
}

blkrt_status blkrt_graph_begin_capture(blkrt_stream *s) {
    blkrt_status st = capture_stream(s, "blkrt_graph_begin_capture");
    if (st) return st;
    blkrt_device *d = s->dev;
    if (d->kind == BLKRT_KIND_CPU) {
        if (s->capturing) return rt_err(BLKRT_ERR_INVALID_VALUE, "blkrt_graph_begin_capture: the stream is already capturing");
        s->capturing = true;
        return BLKRT_OK;
    }
    rt_ctx_scope sc;
    CUresult r = rt_ctx_enter(d, &sc);
    if (r == RT_CUDA_SUCCESS) r = d->cu->cuStreamBeginCapture(s->cu, RT_CU_STREAM_CAPTURE_MODE_THREAD_LOCAL);
    rt_ctx_leave(d, &sc);
    if (r) return rt_cu_err(r, "cuStreamBeginCapture");
    s->capturing = true; /* its launches are not logged: they run with the graph */
    return BLKRT_OK;
}

blkrt_status blkrt_graph_end_capture(blkrt_stream *s, blkrt_graph **out) {
    blkrt_status st = capture_stream(s, "blkrt_graph_end_capture");
    if (st) return st;
    if (!out) return rt_err(BLKRT_ERR_INVALID_VALUE, "blkrt_graph_end_capture: out is NULL");
    *out = NULL;
    blkrt_device *d = s->dev;
    blkrt_graph *g = calloc(1, sizeof *g);
    if (!g) {
        /* The capture ends all the same (abandoned): a stream left capturing
         * would refuse all later work. */
        if (d->kind == BLKRT_KIND_CPU) {
            rt_cpu_free_launches(s->cap_first);
            s->cap_first = s->cap_last = NULL;
        } else if (s->capturing) {
            rt_ctx_scope sc;
            CUgraph graph = NULL;
            if (rt_ctx_enter(d, &sc) == RT_CUDA_SUCCESS && d->cu->cuStreamEndCapture(s->cu, &graph) == RT_CUDA_SUCCESS &&
                graph)
                d->cu->cuGraphDestroy(graph);
            rt_ctx_leave(d, &sc);
        }
        s->capturing = false;
        return rt_err(BLKRT_ERR_OUT_OF_MEMORY, "blkrt_graph_end_capture: out of memory (the capture is abandoned)");
    }
    g->magic = RT_MAGIC_GRAPH;
    g->dev = d;
    if (d->kind == BLKRT_KIND_CPU) {
        if (!s->capturing) {
            free(g);
            return rt_err(BLKRT_ERR_INVALID_VALUE, "blkrt_graph_end_capture: the stream is not capturing");
        }
        s->capturing = false;
        g->cpu_first = s->cap_first;
        s->cap_first = s->cap_last = NULL;
    } else {
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
        if (r) {
            free(g);
            return rt_cu_err(r, call);
        }
    }
    atomic_fetch_add(&d->children, 1);
    *out = g;
    return BLKRT_OK;
}

blkrt_status blkrt_graph_launch(blkrt_graph *g, blkrt_stream *s) {
    if (!RT_IS(g, RT_MAGIC_GRAPH)) return rt_err(BLKRT_ERR_INVALID_HANDLE, "blkrt_graph_launch: not a graph handle");
    blkrt_device *d = g->dev;
    CUstream cs;
    blkrt_status st = rt_stream_for(d, s, &cs, "blkrt_graph_launch");
    if (st) return st;
    if (d->kind == BLKRT_KIND_CPU) return rt_cpu_replay(g->cpu_first);
    rt_ctx_scope sc;
    CUresult r = rt_ctx_enter(d, &sc);
    if (r == RT_CUDA_SUCCESS) r = d->cu->cuGraphLaunch(g->exec, cs);
    rt_ctx_leave(d, &sc);
    if (r) return rt_cu_err(r, "cuGraphLaunch");
    static const uint32_t one[3] = {1, 1, 1};
    rt_launch_logged(d, s, cs, "", one, 0); /* 0 threads: a graph replay */
    return BLKRT_OK;
}

blkrt_status blkrt_graph_destroy(blkrt_graph *g) {
    if (!RT_IS(g, RT_MAGIC_GRAPH)) return rt_err(BLKRT_ERR_INVALID_HANDLE, "blkrt_graph_destroy: not a graph handle");
    blkrt_device *d = g->dev;
    if (d->kind == BLKRT_KIND_CPU) {
        rt_cpu_free_launches(g->cpu_first);
    } else {
        rt_ctx_scope sc;
        CUresult r = rt_ctx_enter(d, &sc);
        if (r == RT_CUDA_SUCCESS) r = d->cu->cuGraphExecDestroy(g->exec);
        rt_ctx_leave(d, &sc);
        if (r) return rt_cu_err(r, "cuGraphExecDestroy");
    }
    g->magic = RT_MAGIC_DEAD;
    free(g);
    atomic_fetch_sub(&d->children, 1);
    return BLKRT_OK;
}

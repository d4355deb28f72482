/* graph.c — capturing a sequence of launches into a graph and replaying it.
 *
 * The checks common to both kinds of device, then the device's table: on a
 * GPU, CUDA stream capture and cuGraphLaunch (gpu_stream.c); on the CPU
 * device the stream records the launches and a replay runs them in order
 * (cpu_device.c).
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
    return st ? st : s->dev->ops->capture_begin(s);
}

blkrt_status blkrt_graph_end_capture(blkrt_stream *s, blkrt_graph **out) {
    blkrt_status st = capture_stream(s, "blkrt_graph_end_capture");
    if (st) return st;
    if (!out) return rt_err(BLKRT_ERR_INVALID_VALUE, "blkrt_graph_end_capture: out is NULL");
    *out = NULL;
    blkrt_device *d = s->dev;
    blkrt_graph *g = calloc(1, sizeof *g);
    if (!g) {
        d->ops->capture_abandon(s);
        return rt_err(BLKRT_ERR_OUT_OF_MEMORY, "blkrt_graph_end_capture: out of memory (the capture is abandoned)");
    }
    g->magic = RT_MAGIC_GRAPH;
    g->dev = d;
    st = d->ops->capture_end(s, g);
    *out = rt_child_keep(d, st, g);
    return st;
}

blkrt_status blkrt_graph_launch(blkrt_graph *g, blkrt_stream *s) {
    if (!RT_IS(g, RT_MAGIC_GRAPH)) return rt_err(BLKRT_ERR_INVALID_HANDLE, "blkrt_graph_launch: not a graph handle");
    blkrt_device *d = g->dev;
    CUstream cs;
    blkrt_status st = rt_stream_for(d, s, &cs, "blkrt_graph_launch");
    return st ? st : d->ops->graph_launch(g, s, cs);
}

blkrt_status blkrt_graph_destroy(blkrt_graph *g) {
    if (!RT_IS(g, RT_MAGIC_GRAPH)) return rt_err(BLKRT_ERR_INVALID_HANDLE, "blkrt_graph_destroy: not a graph handle");
    blkrt_device *d = g->dev;
    blkrt_status st = d->ops->graph_destroy(g);
    if (!st) rt_child_free(d, &g->magic, g);
    return st;
}

/* stream.c — streams and events: the checks common to both kinds of
 * device, then the device's table (a GPU's: gpu_stream.c; the CPU
 * device's, where work runs when it is issued, so a stream is a token and
 * a capture list and an event records the time it was reached:
 * cpu_device.c).
 */
#include <stdlib.h>

#include "rt.h"

blkrt_status rt_stream_for(blkrt_device *d, blkrt_stream *s, CUstream *out, const char *fn) {
    *out = NULL;
    if (!s) return BLKRT_OK;
    if (!RT_IS(s, RT_MAGIC_STREAM)) return rt_err(BLKRT_ERR_INVALID_HANDLE, "%s: not a stream handle", fn);
    if (s->dev != d) return rt_err(BLKRT_ERR_INVALID_VALUE, "%s: the stream belongs to another device", fn);
    *out = s->cu;
    return BLKRT_OK;
}

blkrt_status blkrt_stream_synchronize_timeout(blkrt_device *d, blkrt_stream *s, uint32_t timeout_ms) {
    const char *fn = "blkrt_stream_synchronize_timeout";
    if (s && !RT_IS(s, RT_MAGIC_STREAM)) return rt_err(BLKRT_ERR_INVALID_HANDLE, "%s: not a stream handle", fn);
    if (!d && s) d = s->dev;
    blkrt_status st = rt_check_device(d, fn);
    if (st) return st;
    CUstream cs;
    if ((st = rt_stream_for(d, s, &cs, fn))) return st;
    return d->ops->stream_synchronize_timeout(d, cs, timeout_ms, fn);
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
    st = d->ops->stream_create(s);
    *out = rt_child_keep(d, st, s);
    return st;
}

blkrt_status blkrt_stream_wrap(blkrt_device *d, uint64_t custream, blkrt_stream **out) {
    blkrt_status st = rt_check_device(d, "blkrt_stream_wrap");
    if (st) return st;
    if (!out) return rt_err(BLKRT_ERR_INVALID_VALUE, "blkrt_stream_wrap: out is NULL");
    *out = NULL;
    return d->ops->stream_wrap(d, custream, out);
}

blkrt_status blkrt_stream_destroy(blkrt_stream *s) {
    if (!RT_IS(s, RT_MAGIC_STREAM)) return rt_err(BLKRT_ERR_INVALID_HANDLE, "blkrt_stream_destroy: not a stream handle");
    blkrt_device *d = s->dev;
    blkrt_status st = d->ops->stream_destroy(s);
    if (!st) rt_child_free(d, &s->magic, s);
    return st;
}

blkrt_status blkrt_stream_synchronize(blkrt_stream *s) {
    if (!RT_IS(s, RT_MAGIC_STREAM))
        return rt_err(BLKRT_ERR_INVALID_HANDLE, "blkrt_stream_synchronize: not a stream handle");
    return s->dev->ops->stream_synchronize(s);
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
    st = d->ops->event_create(e);
    *out = rt_child_keep(d, st, e);
    return st;
}

blkrt_status blkrt_event_destroy(blkrt_event *e) {
    if (!RT_IS(e, RT_MAGIC_EVENT)) return rt_err(BLKRT_ERR_INVALID_HANDLE, "blkrt_event_destroy: not an event handle");
    blkrt_device *d = e->dev;
    blkrt_status st = d->ops->event_destroy(e);
    if (!st) rt_child_free(d, &e->magic, e);
    return st;
}

blkrt_status blkrt_event_record(blkrt_event *e, blkrt_stream *s) {
    if (!RT_IS(e, RT_MAGIC_EVENT)) return rt_err(BLKRT_ERR_INVALID_HANDLE, "blkrt_event_record: not an event handle");
    blkrt_device *d = e->dev;
    CUstream cs;
    blkrt_status st = rt_stream_for(d, s, &cs, "blkrt_event_record");
    return st ? st : d->ops->event_record(e, cs);
}

blkrt_status blkrt_event_synchronize(blkrt_event *e) {
    if (!RT_IS(e, RT_MAGIC_EVENT))
        return rt_err(BLKRT_ERR_INVALID_HANDLE, "blkrt_event_synchronize: not an event handle");
    return e->dev->ops->event_synchronize(e);
}

blkrt_status blkrt_event_elapsed_ms(blkrt_event *start, blkrt_event *end, float *ms) {
    if (!RT_IS(start, RT_MAGIC_EVENT) || !RT_IS(end, RT_MAGIC_EVENT))
        return rt_err(BLKRT_ERR_INVALID_HANDLE, "blkrt_event_elapsed_ms: not an event handle");
    if (!ms) return rt_err(BLKRT_ERR_INVALID_VALUE, "blkrt_event_elapsed_ms: ms is NULL");
    if (start->dev != end->dev)
        return rt_err(BLKRT_ERR_INVALID_VALUE, "blkrt_event_elapsed_ms: the events belong to different devices");
    return start->dev->ops->event_elapsed_ms(start, end, ms);
}

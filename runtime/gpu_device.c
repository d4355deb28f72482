/* gpu_device.c — the GPU device over the CUDA driver: opening a device,
 * its primary context and properties, peers, memory; and the GPU's
 * operations table (rt_gpu_ops), whose other functions live in
 * gpu_module.c, gpu_stream.c and lazy.c.
 *
 * A GPU device handle holds its ordinal's primary context (the one the CUDA
 * runtime API also uses, so blkrt can share memory with other libraries in
 * the process). The handle never makes its context current for good: each
 * call makes it current around itself (rt_ctx_enter/leave in rt.h), so any
 * number of devices can be used from any thread in one process. Properties
 * are read once at open; the launch checks read them without a lock.
 *
 * Peers: whether one GPU can reach another's memory is the driver's answer
 * (cuDeviceCanAccessPeer), asked before enabling so that "no path" is its
 * own status with both GPUs named. Peer copies name both contexts
 * (cuMemcpyPeer*), so they are correct with or without peer access; the
 * driver takes the direct path where there is one. The peer calls are GPU
 * only by nature (two contexts), so they are public entry points here, not
 * operations of the table.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu.h"

blkrt_status blkrt_device_count(int *count) {
    if (!count) return rt_err(BLKRT_ERR_INVALID_VALUE, "blkrt_device_count: count is NULL");
    *count = 0;
    blkrt_status st;
    const rt_cuda *cu = rt_driver(&st);
    if (!cu) return st;
    if (rt_driver_has_no_device()) return BLKRT_OK;
    int n = 0;
    CUresult r = cu->cuDeviceGetCount(&n);
    if (r != RT_CUDA_SUCCESS) return rt_cu_err(r, "cuDeviceGetCount");
    *count = n;
    return BLKRT_OK;
}

static blkrt_status read_info(blkrt_device *d, int ordinal) {
    const rt_cuda *cu = d->cu;
    blkrt_device_info *in = &d->info;
    static const struct {
        int attr;
        size_t offset;
    } ints[] = {
        {RT_CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, offsetof(blkrt_device_info, sm_count)},
        {RT_CU_DEVICE_ATTRIBUTE_WARP_SIZE, offsetof(blkrt_device_info, warp_size)},
        {RT_CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, offsetof(blkrt_device_info, max_threads_per_block)},
        {RT_CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK, offsetof(blkrt_device_info, max_shared_per_block)},
        {RT_CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, offsetof(blkrt_device_info, max_shared_optin)},
    };
    CUresult r;
    for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++) {
        int v = 0;
        if ((r = cu->cuDeviceGetAttribute(&v, ints[i].attr, d->dev)) != RT_CUDA_SUCCESS)
            return rt_cu_err(r, "cuDeviceGetAttribute");
        memcpy((char *)in + ints[i].offset, &v, sizeof v);
    }
    int major = 0, minor = 0;
    for (int i = 0; i < 3; i++) {
        int g = 0;
        if ((r = cu->cuDeviceGetAttribute(&g, RT_CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X + i, d->dev)) ||
            (r = cu->cuDeviceGetAttribute(&d->max_block[i], RT_CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X + i, d->dev)))
            return rt_cu_err(r, "cuDeviceGetAttribute");
        in->max_grid[i] = (uint32_t)g;
    }
    if ((r = cu->cuDeviceGetAttribute(&major, RT_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, d->dev)) ||
        (r = cu->cuDeviceGetAttribute(&minor, RT_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, d->dev)))
        return rt_cu_err(r, "cuDeviceGetAttribute");
    if ((r = cu->cuDeviceGetName(in->name, (int)sizeof in->name, d->dev))) return rt_cu_err(r, "cuDeviceGetName");
    in->name[sizeof in->name - 1] = 0;
    if ((r = cu->cuDeviceTotalMem(&in->total_memory, d->dev))) return rt_cu_err(r, "cuDeviceTotalMem");
    in->kind = BLKRT_KIND_GPU;
    in->ordinal = ordinal;
    in->sm = major * 10 + minor;
    /* The compiler's target: the arch-specific ("a") features of sm_90
     * (wgmma, setmaxnreg) are what the sm_90 path is written for. */
    snprintf(in->arch, sizeof in->arch, "sm_%d%s", in->sm, in->sm == 90 ? "a" : "");
    in->driver_version = rt_driver_version();
    return BLKRT_OK;
}

static blkrt_status gpu_open(blkrt_device *d, int ordinal) {
    blkrt_status st;
    int count = 0;
    if ((st = blkrt_device_count(&count))) return st;
    if (ordinal < 0 || ordinal >= count)
        return rt_err(BLKRT_ERR_NO_DEVICE, "no GPU with ordinal %d (the driver reports %d)", ordinal, count);
    d->cu = rt_driver(&st);
    CUresult r = d->cu->cuDeviceGet(&d->dev, ordinal);
    if (r != RT_CUDA_SUCCESS) return rt_cu_err(r, "cuDeviceGet");
    if ((st = read_info(d, ordinal))) return st;
    r = d->cu->cuDevicePrimaryCtxRetain(&d->ctx, d->dev);
    if (r != RT_CUDA_SUCCESS) return rt_cu_err(r, "cuDevicePrimaryCtxRetain");
    rt_tmap_cache_init(&d->tmaps);
    return BLKRT_OK;
}

static blkrt_status gpu_close(blkrt_device *d) {
    /* rt_ctx_enter may have left the context bound to this thread */
    CUcontext cur = NULL;
    if (d->cu->cuCtxGetCurrent(&cur) == RT_CUDA_SUCCESS && cur == d->ctx) d->cu->cuCtxSetCurrent(NULL);
    CUresult r = d->cu->cuDevicePrimaryCtxRelease(d->dev);
    if (r != RT_CUDA_SUCCESS) return rt_cu_err(r, "cuDevicePrimaryCtxRelease");
    rt_tmap_cache_destroy(&d->tmaps);
    return BLKRT_OK;
}

static blkrt_status gpu_set_step_limit(blkrt_device *d, uint64_t steps) {
    (void)d, (void)steps;
    return rt_err(BLKRT_ERR_UNSUPPORTED, "blkrt_device_set_step_limit: only the CPU device has a step budget "
                  "(on a GPU: blkrt_stream_synchronize_timeout)");
}

static const char *gpu_where(const blkrt_device *d, char *buf, size_t n) {
    snprintf(buf, n, "GPU %d", d->info.ordinal);
    return buf;
}

static size_t gpu_flush_bytes(blkrt_device *d) {
    int l2 = 0;
    rt_ctx_scope sc;
    if (rt_ctx_enter(d, &sc) == RT_CUDA_SUCCESS) {
        if (d->cu->cuDeviceGetAttribute(&l2, RT_CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, d->dev) != RT_CUDA_SUCCESS) l2 = 0;
        rt_ctx_leave(d, &sc);
    }
    return l2 > 0 ? (size_t)l2 * 4 : (size_t)256 << 20;
}

/* ---- memory ---- */

static blkrt_status gpu_malloc(blkrt_device *d, size_t bytes, blkrt_ptr *out) {
    blkrt_status st;
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

static blkrt_status gpu_free(blkrt_device *d, blkrt_ptr p) {
    CUresult r;
    RT_CTX_CALL(d, r, d->cu->cuMemFree(p));
    return r ? rt_cu_err(r, "cuMemFree") : BLKRT_OK;
}

static blkrt_status gpu_copy(blkrt_device *d, rt_copy_kind kind, bool async, blkrt_ptr dptr, void *host,
                             blkrt_ptr sptr, uint8_t value, size_t bytes, blkrt_stream *s, CUstream cs,
                             const char *fn) {
    (void)s, (void)fn;
    const rt_cuda *cu = d->cu;
    rt_ctx_scope sc;
    CUresult r = rt_ctx_enter(d, &sc);
    const char *call = "cuCtxPushCurrent";
    if (r == RT_CUDA_SUCCESS) {
/* the copy's driver call: the synchronous one, or its Async form on cs */
#define COPY_CALL(f, ...) (call = async ? #f "Async" : #f, async ? cu->f##Async(__VA_ARGS__, cs) : cu->f(__VA_ARGS__))
        switch (kind) {
        case RT_COPY_HTOD: r = COPY_CALL(cuMemcpyHtoD, dptr, host, bytes); break;
        case RT_COPY_DTOH: r = COPY_CALL(cuMemcpyDtoH, host, sptr, bytes); break;
        case RT_COPY_DTOD: r = COPY_CALL(cuMemcpyDtoD, dptr, sptr, bytes); break;
        case RT_MEMSET: r = COPY_CALL(cuMemsetD8, dptr, value, bytes); break;
        }
#undef COPY_CALL
    }
    rt_ctx_leave(d, &sc);
    return r ? rt_cu_err_on(d, r, call) : BLKRT_OK;
}

/* ---- peers ---- */

/* Two GPU handles: what every peer call checks before the driver sees them. */
static blkrt_status check_gpus(blkrt_device *a, blkrt_device *b, const char *fn) {
    blkrt_status st = rt_check_device(a, fn);
    if (!st) st = rt_check_device(b, fn);
    if (st) return st;
    if (a->ops != &rt_gpu_ops || b->ops != &rt_gpu_ops) /* a handle of another kind of device */
        return rt_err(BLKRT_ERR_UNSUPPORTED, "%s: the CPU device has no peers (its memory is host memory: use "
                      "blkrt_memcpy_htod / blkrt_memcpy_dtoh)", fn);
    return BLKRT_OK;
}

static blkrt_status check_peers(blkrt_device *d, blkrt_device *peer, const char *fn) {
    blkrt_status st = check_gpus(d, peer, fn);
    if (!st && d->dev == peer->dev)
        st = rt_err(BLKRT_ERR_INVALID_VALUE, "%s: both handles are GPU %d: a device is not its own peer", fn,
                    d->info.ordinal);
    return st;
}

blkrt_status blkrt_device_can_access_peer(blkrt_device *d, blkrt_device *peer, int *can) {
    if (can) *can = 0;
    blkrt_status st = check_peers(d, peer, "blkrt_device_can_access_peer");
    if (st) return st;
    if (!can) return rt_err(BLKRT_ERR_INVALID_VALUE, "blkrt_device_can_access_peer: can is NULL");
    int v = 0;
    CUresult r = d->cu->cuDeviceCanAccessPeer(&v, d->dev, peer->dev);
    if (r) return rt_cu_err(r, "cuDeviceCanAccessPeer");
    *can = v != 0;
    return BLKRT_OK;
}

/* Asked first so that the common failure names both GPUs and what still
 * works, rather than the driver's CUDA_ERROR_PEER_ACCESS_UNSUPPORTED. */
blkrt_status blkrt_device_enable_peer_access(blkrt_device *d, blkrt_device *peer) {
    const char *fn = "blkrt_device_enable_peer_access";
    int can = 0;
    blkrt_status st = blkrt_device_can_access_peer(d, peer, &can);
    if (st) return st;
    if (!can)
        return rt_err(BLKRT_ERR_NO_PEER_ACCESS,
                      "%s: GPU %d (%s) cannot access the memory of GPU %d (%s) directly: the driver reports no "
                      "peer-to-peer path (NVLink or PCIe) between them; copies still work (blkrt_memcpy_peer "
                      "stages them through host memory)",
                      fn, d->info.ordinal, d->info.name, peer->info.ordinal, peer->info.name);
    CUresult r;
    RT_CTX_CALL(d, r, d->cu->cuCtxEnablePeerAccess(peer->ctx, 0));
    if (r == RT_CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED) return BLKRT_OK;
    if (r) {
        char what[96];
        snprintf(what, sizeof what, "cuCtxEnablePeerAccess (GPU %d -> GPU %d)", d->info.ordinal, peer->info.ordinal);
        return rt_cu_err(r, what);
    }
    return BLKRT_OK;
}

/* Copies between the memory of two GPUs (or one): the stream decides the
 * context the copy is issued in. */
static blkrt_status peer_copy(bool async, blkrt_device *dd, blkrt_ptr dst, blkrt_device *sd, blkrt_ptr src,
                              size_t bytes, blkrt_stream *s) {
    const char *fn = async ? "blkrt_memcpy_peer_async" : "blkrt_memcpy_peer";
    blkrt_status st = check_gpus(dd, sd, fn);
    if (st) return st;
    blkrt_device *on = sd;
    CUstream cs = NULL;
    if (s) {
        if (!RT_IS(s, RT_MAGIC_STREAM)) return rt_err(BLKRT_ERR_INVALID_HANDLE, "%s: not a stream handle", fn);
        if (s->dev->ops != &rt_gpu_ops || (s->dev->dev != sd->dev && s->dev->dev != dd->dev))
            return rt_err(BLKRT_ERR_INVALID_VALUE, "%s: the stream belongs to neither GPU %d nor GPU %d", fn,
                          sd->info.ordinal, dd->info.ordinal);
        on = s->dev;
        cs = s->cu;
    }
    if (bytes == 0) return BLKRT_OK;
    if (!dst || !src) return rt_err(BLKRT_ERR_INVALID_VALUE, "%s: %s address is 0", fn, dst ? "the source" : "the destination");
    rt_ctx_scope sc;
    CUresult r = rt_ctx_enter(on, &sc);
    if (r == RT_CUDA_SUCCESS)
        r = async ? on->cu->cuMemcpyPeerAsync(dst, dd->ctx, src, sd->ctx, bytes, cs)
                  : on->cu->cuMemcpyPeer(dst, dd->ctx, src, sd->ctx, bytes);
    rt_ctx_leave(on, &sc);
    if (r) {
        char what[128];
        snprintf(what, sizeof what, "%s (%zu bytes, GPU %d -> GPU %d)", async ? "cuMemcpyPeerAsync" : "cuMemcpyPeer",
                 bytes, sd->info.ordinal, dd->info.ordinal);
        return rt_cu_err(r, what);
    }
    return BLKRT_OK;
}

blkrt_status blkrt_memcpy_peer(blkrt_device *dst_dev, blkrt_ptr dst, blkrt_device *src_dev, blkrt_ptr src,
                               size_t bytes) {
    return peer_copy(false, dst_dev, dst, src_dev, src, bytes, NULL);
}

blkrt_status blkrt_memcpy_peer_async(blkrt_device *dst_dev, blkrt_ptr dst, blkrt_device *src_dev, blkrt_ptr src,
                                     size_t bytes, blkrt_stream *s) {
    return peer_copy(true, dst_dev, dst, src_dev, src, bytes, s);
}

const rt_device_ops rt_gpu_ops = {
    .open = gpu_open,
    .close = gpu_close,
    .synchronize = rt_gpu_synchronize,
    .synchronize_timeout = rt_gpu_synchronize_timeout,
    .set_step_limit = gpu_set_step_limit,
    .where = gpu_where,
    .flush_bytes = gpu_flush_bytes,
    .host_memory = false,
    .mem_alloc = gpu_malloc,
    .mem_free = gpu_free,
    .copy = gpu_copy,
    .load_ptx = rt_gpu_load_ptx,
    .load_cubin = rt_gpu_load_cubin,
    .load_source = rt_gpu_load_source,
    .bind_function = rt_gpu_bind_function,
    .bind_entry = rt_gpu_bind_entry,
    .unload = rt_gpu_unload,
    .release = rt_gpu_release,
    .jit_log = rt_gpu_jit_log,
    .launch = rt_gpu_launch,
    .launch_raw = rt_gpu_launch_raw,
    .max_programs = rt_gpu_max_programs,
    .timer_start = rt_gpu_timer_start,
    .stream_create = rt_gpu_stream_create,
    .stream_wrap = rt_gpu_stream_wrap,
    .stream_destroy = rt_gpu_stream_destroy,
    .stream_synchronize = rt_gpu_stream_synchronize,
    .stream_synchronize_timeout = rt_gpu_stream_synchronize_timeout,
    .event_create = rt_gpu_event_create,
    .event_destroy = rt_gpu_event_destroy,
    .event_record = rt_gpu_event_record,
    .event_synchronize = rt_gpu_event_synchronize,
    .event_elapsed_ms = rt_gpu_event_elapsed_ms,
    .capture_begin = rt_gpu_capture_begin,
    .capture_end = rt_gpu_capture_end,
    .capture_abandon = rt_gpu_capture_abandon,
    .graph_launch = rt_gpu_graph_launch,
    .graph_destroy = rt_gpu_graph_destroy,
};

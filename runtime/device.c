/* device.c — opening devices and reading their properties.
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
 * driver takes the direct path where there is one.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rt.h"

blkrt_status rt_check_device(blkrt_device *d, const char *fn) {
    if (!RT_IS(d, RT_MAGIC_DEVICE)) return rt_err(BLKRT_ERR_INVALID_HANDLE, "%s: not a device handle", fn);
    return BLKRT_OK;
}

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

blkrt_status blkrt_device_open(int ordinal, blkrt_device **out) {
    if (!out) return rt_err(BLKRT_ERR_INVALID_VALUE, "blkrt_device_open: out is NULL");
    *out = NULL;
    rt_profile_init(); /* BLK_PROFILE and an NVTX tool, once: before any launch */
    blkrt_device *d = calloc(1, sizeof *d);
    if (!d) return rt_err(BLKRT_ERR_OUT_OF_MEMORY, "out of memory");
    d->magic = RT_MAGIC_DEVICE;
    atomic_init(&d->children, 0);
    if (ordinal == BLKRT_DEVICE_CPU) {
        d->kind = BLKRT_KIND_CPU;
        blkrt_status st = rt_cpu_open(d);
        if (st) {
            free(d);
            return st;
        }
        *out = d;
        return BLKRT_OK;
    }
    blkrt_status st;
    int count = 0;
    if ((st = blkrt_device_count(&count))) {
        free(d);
        return st;
    }
    if (ordinal < 0 || ordinal >= count) {
        free(d);
        return rt_err(BLKRT_ERR_NO_DEVICE, "no GPU with ordinal %d (the driver reports %d)", ordinal, count);
    }
    d->kind = BLKRT_KIND_GPU;
    d->cu = rt_driver(&st);
    CUresult r = d->cu->cuDeviceGet(&d->dev, ordinal);
    if (r != RT_CUDA_SUCCESS) {
        free(d);
        return rt_cu_err(r, "cuDeviceGet");
    }
    if ((st = read_info(d, ordinal))) {
        free(d);
        return st;
    }
    r = d->cu->cuDevicePrimaryCtxRetain(&d->ctx, d->dev);
    if (r != RT_CUDA_SUCCESS) {
        free(d);
        return rt_cu_err(r, "cuDevicePrimaryCtxRetain");
    }
    rt_tmap_cache_init(&d->tmaps);
    *out = d;
    return BLKRT_OK;
}

blkrt_status blkrt_device_close(blkrt_device *d) {
    blkrt_status st = rt_check_device(d, "blkrt_device_close");
    if (st) return st;
    int live = atomic_load(&d->children);
    if (live > 0)
        return rt_err(BLKRT_ERR_INVALID_VALUE,
                      "blkrt_device_close: %d module(s), stream(s), event(s) or graph(s) of this device are still alive",
                      live);
    rt_prof_device_closing(d); /* its timed launches' events die with its context */
    if (d->kind == BLKRT_KIND_CPU) {
        rt_cpu_close(d);
    } else {
        /* rt_ctx_enter may have left the context bound to this thread */
        CUcontext cur = NULL;
        if (d->cu->cuCtxGetCurrent(&cur) == RT_CUDA_SUCCESS && cur == d->ctx) d->cu->cuCtxSetCurrent(NULL);
        CUresult r = d->cu->cuDevicePrimaryCtxRelease(d->dev);
        if (r != RT_CUDA_SUCCESS) return rt_cu_err(r, "cuDevicePrimaryCtxRelease");
        rt_tmap_cache_destroy(&d->tmaps);
    }
    d->magic = RT_MAGIC_DEAD;
    free(d);
    return BLKRT_OK;
}

blkrt_status blkrt_device_get_info(blkrt_device *d, blkrt_device_info *out) {
    blkrt_status st = rt_check_device(d, "blkrt_device_get_info");
    if (st) return st;
    if (!out) return rt_err(BLKRT_ERR_INVALID_VALUE, "blkrt_device_get_info: out is NULL");
    *out = d->info;
    return BLKRT_OK;
}

blkrt_status blkrt_device_synchronize(blkrt_device *d) {
    blkrt_status st = rt_check_device(d, "blkrt_device_synchronize");
    if (st || d->kind == BLKRT_KIND_CPU) return st; /* the CPU device runs everything synchronously */
    uint64_t mark = rt_launch_mark(d); /* launches up to here are finished when it succeeds */
    rt_ctx_scope sc;
    CUresult r = rt_ctx_enter(d, &sc);
    if (r == RT_CUDA_SUCCESS) r = d->cu->cuCtxSynchronize();
    rt_ctx_leave(d, &sc);
    return rt_synced(d, NULL, true, mark, r, "cuCtxSynchronize");
}

/* ---- peers ---- */

/* Two GPU handles: what every peer call checks before the driver sees them. */
static blkrt_status check_gpus(blkrt_device *a, blkrt_device *b, const char *fn) {
    blkrt_status st = rt_check_device(a, fn);
    if (!st) st = rt_check_device(b, fn);
    if (st) return st;
    if (a->kind != BLKRT_KIND_GPU || b->kind != BLKRT_KIND_GPU)
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
    rt_ctx_scope sc;
    CUresult r = rt_ctx_enter(d, &sc);
    if (r == RT_CUDA_SUCCESS) r = d->cu->cuCtxEnablePeerAccess(peer->ctx, 0);
    rt_ctx_leave(d, &sc);
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
        if (s->dev->kind != BLKRT_KIND_GPU || (s->dev->dev != sd->dev && s->dev->dev != dd->dev))
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

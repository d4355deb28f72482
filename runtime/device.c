/* device.c — opening devices and reading their properties.
 *
 * A GPU device handle holds its ordinal's primary context (the one the CUDA
 * runtime API also uses, so blkrt can share memory with other libraries in
 * the process). The handle never makes its context current for good: each
 * call makes it current around itself (rt_ctx_enter/leave in rt.h), so any
 * number of devices can be used from any thread in one process. Properties
 * are read once at open; the launch checks read them without a lock.
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
    if (d->kind == BLKRT_KIND_CPU) {
        rt_cpu_close(d);
    } else {
        /* rt_ctx_enter may have left the context bound to this thread */
        CUcontext cur = NULL;
        if (d->cu->cuCtxGetCurrent(&cur) == RT_CUDA_SUCCESS && cur == d->ctx) d->cu->cuCtxSetCurrent(NULL);
        CUresult r = d->cu->cuDevicePrimaryCtxRelease(d->dev);
        if (r != RT_CUDA_SUCCESS) return rt_cu_err(r, "cuDevicePrimaryCtxRelease");
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

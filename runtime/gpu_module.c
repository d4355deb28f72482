/* gpu_module.c — a GPU's modules and launches (through rt_gpu_ops):
 * loading PTX and cubin images with the driver's JIT logs, binding each
 * variant to its CUfunction and limits, unloading, and the launch itself
 * (tensor maps, cuLaunchKernel or for a cluster cuLaunchKernelEx, the launch
 * log).
 *
 * Binding looks up every variant's CUfunction and limits at load time, and
 * functions that need more than 48 KB of dynamic shared memory are opted in
 * with cuFuncSetAttribute — once, here — so a launch repeats none of it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu.h"

#define RT_JIT_LOG_SIZE 16384

/* The CUfunction of one entry with its limits. */
blkrt_status rt_gpu_bind_function(blkrt_module *m, CUmodule cu_mod, rt_variant *v) {
    blkrt_device *d = m->dev;
    int default_dyn = RT_SHARED_DEFAULT_LIMIT;
    const rt_cuda *cu = d->cu;
    CUresult r = cu->cuModuleGetFunction(&v->fn, cu_mod, v->entry);
    if (r == RT_CUDA_ERROR_NOT_FOUND) {
        if (v->meta_line)
            return rt_err(BLKRT_ERR_META, "blk-meta line %d: entry '%s' is not a kernel of this module", v->meta_line,
                          v->entry);
        return rt_err(BLKRT_ERR_NOT_FOUND, "module has no kernel named '%s'", v->entry);
    }
    if (r) return rt_cu_err(r, "cuModuleGetFunction");
    if ((r = cu->cuFuncGetAttribute(&v->max_threads, RT_CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, v->fn)) ||
        (r = cu->cuFuncGetAttribute(&v->static_shared, RT_CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, v->fn)))
        return rt_cu_err(r, "cuFuncGetAttribute");
    default_dyn = v->static_shared < RT_SHARED_DEFAULT_LIMIT ? RT_SHARED_DEFAULT_LIMIT - v->static_shared : 0;
    atomic_init(&v->dyn_limit, default_dyn);
    /* Opt in to more than the default only when it fits; a launch that does
     * not fit is rejected with a message by launch.c. */
    if (v->shared > default_dyn && v->shared + v->static_shared <= d->info.max_shared_optin) {
        r = cu->cuFuncSetAttribute(v->fn, RT_CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, v->shared);
        if (r) return rt_cu_err(r, "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)");
        atomic_store(&v->dyn_limit, v->shared);
    }
    return BLKRT_OK;
}

/* An entry without blk-meta (an unchecked kernel), bound on first request. */
blkrt_status rt_gpu_bind_entry(blkrt_module *m, rt_variant *v) {
    rt_ctx_scope sc;
    CUresult r = rt_ctx_enter(m->dev, &sc);
    blkrt_status st = r ? rt_cu_err(r, "cuCtxPushCurrent") : rt_gpu_bind_function(m, m->cu, v);
    rt_ctx_leave(m->dev, &sc);
    return st;
}

/* "9.0" from the PTX's ".version 9.0" line, for the unsupported-version message. */
static void ptx_version(const char *text, char *buf, size_t n) {
    snprintf(buf, n, "?");
    const char *p = strstr(text, ".version");
    if (!p) return;
    p += 8;
    while (*p == ' ' || *p == '\t') p++;
    size_t len = 0;
    while (len + 1 < n && ((p[len] >= '0' && p[len] <= '9') || p[len] == '.')) len++;
    if (len) {
        memcpy(buf, p, len);
        buf[len] = 0;
    }
}

blkrt_status rt_gpu_load_image(blkrt_device *d, const void *image, const char *ptx_text, CUmodule *out, char **info_log) {
    *out = NULL;
    *info_log = NULL;
    char *info = calloc(1, RT_JIT_LOG_SIZE), *errlog = calloc(1, RT_JIT_LOG_SIZE);
    if (!info || !errlog) {
        free(info);
        free(errlog);
        return rt_err(BLKRT_ERR_OUT_OF_MEMORY, "out of memory");
    }
    CUjit_option opts[] = {RT_CU_JIT_INFO_LOG_BUFFER, RT_CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES, RT_CU_JIT_ERROR_LOG_BUFFER,
                           RT_CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES, RT_CU_JIT_LOG_VERBOSE};
    void *vals[] = {info, (void *)(uintptr_t)(RT_JIT_LOG_SIZE - 1), errlog, (void *)(uintptr_t)(RT_JIT_LOG_SIZE - 1),
                    (void *)(uintptr_t)1};
    CUresult r = d->cu->cuModuleLoadDataEx(out, image, 5, opts, vals);
    info[RT_JIT_LOG_SIZE - 1] = errlog[RT_JIT_LOG_SIZE - 1] = 0;
    blkrt_status st = BLKRT_OK;
    if (r == RT_CUDA_ERROR_UNSUPPORTED_PTX_VERSION) {
        char ver[16];
        ptx_version(ptx_text ? ptx_text : "", ver, sizeof ver);
        int dv = rt_driver_version();
        st = rt_err(BLKRT_ERR_PTX_VERSION,
                    "cuModuleLoadDataEx: CUDA_ERROR_UNSUPPORTED_PTX_VERSION (222): the PTX is ISA version %s (its "
                    ".version line), newer than this driver (CUDA %d.%d) can compile; update the NVIDIA driver or "
                    "compile for an older PTX ISA",
                    ver, dv / 1000, dv % 1000 / 10);
    } else if (r != RT_CUDA_SUCCESS) {
        st = rt_cu_err(r, "cuModuleLoadDataEx");
    }
    if (st && errlog[0]) {
        rt_err_append("\nJIT error log:\n");
        rt_err_append(errlog);
    }
    *info_log = info;
    free(errlog);
    if (st) *out = NULL;
    return st;
}

static blkrt_status load_image(blkrt_module *m, const void *image, const char *ptx_text) {
    rt_ctx_scope sc;
    CUresult r = rt_ctx_enter(m->dev, &sc);
    blkrt_status st = r ? rt_cu_err(r, "cuModuleLoadDataEx") : rt_gpu_load_image(m->dev, image, ptx_text, &m->cu, &m->jit_log);
    rt_ctx_leave(m->dev, &sc);
    return st;
}

blkrt_status rt_gpu_finish_load(blkrt_module *m, blkrt_status st, blkrt_module **out) {
    if (st == BLKRT_OK) {
        rt_ctx_scope sc;
        CUresult r = rt_ctx_enter(m->dev, &sc);
        st = r ? rt_cu_err(r, "cuCtxPushCurrent") : rt_module_bind_kernels(m);
        rt_ctx_leave(m->dev, &sc);
    }
    if (st) {
        if (m->cu) {
            rt_ctx_scope sc;
            if (rt_ctx_enter(m->dev, &sc) == RT_CUDA_SUCCESS) m->dev->cu->cuModuleUnload(m->cu);
            rt_ctx_leave(m->dev, &sc);
        }
        rt_module_free(m);
        return st;
    }
    atomic_fetch_add(&m->dev->children, 1);
    *out = m;
    return BLKRT_OK;
}

blkrt_status rt_gpu_load_ptx(blkrt_device *d, const char *ptx, size_t len, blkrt_module **out) {
    blkrt_status st;
    while (len > 0 && ptx[len - 1] == 0) len--; /* a counted terminator is fine */
    char *text = rt_strndup(ptx, len);           /* the driver needs it NUL-terminated */
    blkrt_module *m = rt_module_new(d);
    if (!text || !m) {
        free(text);
        free(m);
        return rt_err(BLKRT_ERR_OUT_OF_MEMORY, "out of memory");
    }
    st = rt_meta_parse(text, len, &m->meta);
    if (st == BLKRT_OK) st = load_image(m, text, text);
    if (st == BLKRT_OK) st = rt_module_keep_image(m, false, text, len, NULL); /* for blkrt_module_for_device */
    else free(text);
    return rt_gpu_finish_load(m, st, out);
}

blkrt_status rt_gpu_load_cubin(blkrt_device *d, const void *image, size_t size, const char *meta,
                               blkrt_module **out) {
    blkrt_status st;
    blkrt_module *m = rt_module_new(d);
    if (!m) return rt_err(BLKRT_ERR_OUT_OF_MEMORY, "out of memory");
    st = meta ? rt_meta_parse(meta, strlen(meta), &m->meta) : BLKRT_OK;
    if (st == BLKRT_OK) st = load_image(m, image, NULL);
    char *copy = st == BLKRT_OK ? malloc(size) : NULL;
    if (st == BLKRT_OK && !copy) st = rt_err(BLKRT_ERR_OUT_OF_MEMORY, "out of memory");
    if (st == BLKRT_OK) {
        memcpy(copy, image, size);
        st = rt_module_keep_image(m, true, copy, size, meta);
    }
    return rt_gpu_finish_load(m, st, out);
}

/* ---- launches ---- */

/* After the launch call `api` returned r: the error naming the call, kernel
 * and entry, or the launch logged (gpu_stream.c). */
static blkrt_status launched(blkrt_device *d, const blkrt_kernel *k, const rt_variant *v, const char *api, CUresult r,
                             blkrt_stream *s, CUstream cs, const uint32_t grid[3], uint32_t threads) {
    if (r != RT_CUDA_SUCCESS) {
        char what[300];
        snprintf(what, sizeof what, "%s (kernel '%s', entry '%s')", api, k->name, v->entry);
        return rt_cu_err(r, what);
    }
    rt_launch_logged(d, s, cs, k->name, grid, threads);
    return BLKRT_OK;
}

/* A variant with cluster=N in clusters of N CTAs along x: cuLaunchKernelEx
 * with the one attribute, otherwise what cuLaunchKernel would get. */
static CUresult launch_cluster(const rt_cuda *cu, const rt_variant *v, const uint32_t grid[3], unsigned threads,
                               CUstream cs, void **params) {
    CUlaunchAttribute attr;
    memset(&attr, 0, sizeof attr);
    attr.id = RT_CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
    attr.value.clusterDim.x = (unsigned)v->cluster;
    attr.value.clusterDim.y = 1;
    attr.value.clusterDim.z = 1;
    CUlaunchConfig cfg = {.gridDimX = grid[0], .gridDimY = grid[1], .gridDimZ = grid[2],
                          .blockDimX = threads, .blockDimY = 1, .blockDimZ = 1,
                          .sharedMemBytes = (unsigned)v->shared, .hStream = cs, .attrs = &attr, .numAttrs = 1};
    return cu->cuLaunchKernelEx(&cfg, v->fn, params, NULL);
}

/* The driver's occupancy calculator for the launch blkrt_launch would make
 * (32 x num_warps threads, the variant's dynamic shared memory) times the
 * multiprocessors. A cluster variant is counted as plain blocks: its
 * clusters of co-scheduled CTAs may hold fewer. */
blkrt_status rt_gpu_max_programs(blkrt_kernel *k, const rt_variant *v, uint32_t *out) {
    blkrt_device *d = k->mod->dev;
    int per_sm = 0;
    rt_ctx_scope sc;
    CUresult r = rt_ctx_enter(d, &sc);
    if (r == RT_CUDA_SUCCESS)
        r = d->cu->cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(&per_sm, v->fn, 32 * v->num_warps,
                                                                        (size_t)v->shared, 0);
    rt_ctx_leave(d, &sc);
    if (r) return rt_cu_err(r, "cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags");
    if (per_sm <= 0)
        return rt_err(BLKRT_ERR_INVALID_LAUNCH,
                      "kernel '%s': entry '%s' (%d threads, %d bytes of shared memory) fits no multiprocessor", k->name,
                      v->entry, 32 * v->num_warps, v->shared + v->static_shared);
    *out = (uint32_t)per_sm * (uint32_t)d->info.sm_count;
    return BLKRT_OK;
}

blkrt_status rt_gpu_launch(blkrt_kernel *k, const rt_variant *v, const uint32_t grid[3], const blkrt_arg *args,
                           int nargs, void **params, const rt_tmap_args *ta, blkrt_stream *s, CUstream cs, bool prof) {
    (void)args;
    blkrt_device *d = k->mod->dev;
    unsigned threads = 32u * (unsigned)v->num_warps;
    blkrt_status st;
    rt_prof_launch pl;
    rt_ctx_scope sc;
    CUresult r = rt_ctx_enter(d, &sc);
    /* The tensor maps, by value after the declared params (the entry's
     * ".param .align 64 .b8 NAME[128]"): from the device's cache, encoded
     * on a miss. The driver copies parameters at the launch (or capture),
     * so the stack is a fine home. */
    CUtensorMap maps[RT_MAX_TMAPS];
    for (int i = 0; r == RT_CUDA_SUCCESS && i < v->ntmaps; i++) {
        if ((st = rt_tmap_encode(d, k, &v->tmaps[i], &ta[i], &maps[i]))) {
            rt_ctx_leave(d, &sc);
            return st;
        }
        params[nargs + i] = &maps[i];
    }
    /* cluster=N: clusters of N CTAs where the grid divides into them and the
     * driver has cuLaunchKernelEx; else a plain launch, which the variant's
     * code runs correctly as 1-CTA clusters (docs/runtime.md). */
    bool cluster = v->cluster > 1 && grid[0] % (uint32_t)v->cluster == 0 && d->cu->cuLaunchKernelEx;
    if (v->cluster_required && !cluster) {
        rt_ctx_leave(d, &sc);
        return rt_err(BLKRT_ERR_UNSUPPORTED, "kernel '%s': runs in clusters (@cluster) and this driver has no "
                      "cuLaunchKernelEx", k->name);
    }
    const char *api = cluster ? "cuLaunchKernelEx" : "cuLaunchKernel";
    if (r == RT_CUDA_SUCCESS) {
        if (prof) rt_prof_begin(&pl, k, v, s, cs);
        if (cluster)
            r = launch_cluster(d->cu, v, grid, threads, cs, params);
        else
            r = d->cu->cuLaunchKernel(v->fn, grid[0], grid[1], grid[2], threads, 1, 1, (unsigned)v->shared, cs,
                                      params, NULL);
        if (prof) rt_prof_end(&pl, k, s, cs, r == RT_CUDA_SUCCESS);
    }
    rt_ctx_leave(d, &sc);
    return launched(d, k, v, api, r, s, cs, grid, threads);
}

blkrt_status rt_gpu_launch_raw(blkrt_kernel *k, rt_variant *v, const uint32_t grid[3], const uint32_t block[3],
                               uint32_t shared_bytes, void **params, blkrt_stream *s, CUstream cs,
                               uint32_t threads) {
    blkrt_device *d = k->mod->dev;
    rt_ctx_scope sc;
    CUresult r = rt_ctx_enter(d, &sc);
    /* Opt in to more dynamic shared memory than the function is set up for:
     * once per new maximum (under the module's lock), so repeated launches
     * of one size pay nothing. */
    if (r == RT_CUDA_SUCCESS && (int)shared_bytes > atomic_load(&v->dyn_limit)) {
        pthread_mutex_lock(&k->mod->lock);
        if ((int)shared_bytes > atomic_load(&v->dyn_limit)) {
            r = d->cu->cuFuncSetAttribute(v->fn, RT_CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, (int)shared_bytes);
            if (r == RT_CUDA_SUCCESS) atomic_store(&v->dyn_limit, (int)shared_bytes);
        }
        pthread_mutex_unlock(&k->mod->lock);
        if (r != RT_CUDA_SUCCESS) {
            rt_ctx_leave(d, &sc);
            return rt_cu_err(r, "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)");
        }
    }
    if (r == RT_CUDA_SUCCESS) {
        bool prof = atomic_load_explicit(&rt_prof_active, memory_order_relaxed) != 0;
        rt_prof_launch pl;
        if (prof) rt_prof_begin(&pl, k, k->checked ? v : NULL, s, cs);
        r = d->cu->cuLaunchKernel(v->fn, grid[0], grid[1], grid[2], block[0], block[1], block[2], shared_bytes, cs,
                                  params, NULL);
        if (prof) rt_prof_end(&pl, k, s, cs, r == RT_CUDA_SUCCESS);
    }
    rt_ctx_leave(d, &sc);
    return launched(d, k, v, "cuLaunchKernel", r, s, cs, grid, threads);
}

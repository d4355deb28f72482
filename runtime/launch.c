/* launch.c — checked and raw kernel launches, and how many programs of a
 * kernel run at once (blkrt_kernel_max_programs: the same checks up to the
 * variant, then the device's occupancy; nothing launched).
 *
 * The checked path validates everything a launch needs before the driver
 * sees it, in this order: handles, argument count, each argument's kind and
 * range (converted into per-parameter slots on the stack), the variant whose
 * assumptions the arguments satisfy (and whose TMA tensor maps, if it has
 * any, can be encoded for them: tmap.c), grid, block, shared memory. Only
 * then the device's launch (d->ops: on a GPU the maps from the device's
 * cache and cuLaunchKernel, or cuLaunchKernelEx for a variant with
 * cluster=; gpu_module.c). The host cost is
 * the point of this file: no allocation, no locks (but the map cache's, for
 * variants with maps), no string work unless an error is reported;
 * everything that can be computed once was computed when the module was
 * loaded (module.c), or for a kernel from source when its variant was first
 * needed (lazy.c).
 * After the launch, a record in the device's launch log (gpu_stream.c: a spin
 * lock and a few stores) lets a later failed or timed-out synchronisation
 * name it. While a tool takes NVTX ranges or BLK_PROFILE times launches,
 * profile.c's begin/end wrap the launch itself.
 */
#include <stdio.h>
#include <string.h>

#include "rt.h"

static blkrt_status check_grid(const blkrt_kernel *k, const blkrt_device *d, const uint32_t grid[3]) {
    for (int i = 0; i < 3; i++) {
        if (grid[i] == 0)
            return rt_err(BLKRT_ERR_INVALID_LAUNCH, "kernel '%s': grid[%d] is 0 (every grid dimension must be at least 1)",
                          k->name, i);
        if (grid[i] > d->info.max_grid[i])
            return rt_err(BLKRT_ERR_INVALID_LAUNCH, "kernel '%s': grid[%d] = %u exceeds the device's maximum %u", k->name,
                          i, grid[i], d->info.max_grid[i]);
    }
    return BLKRT_OK;
}

static blkrt_status check_block(const blkrt_kernel *k, const rt_variant *v, const blkrt_device *d, unsigned threads,
                                const char *why) {
    if (threads > (unsigned)d->info.max_threads_per_block)
        return rt_err(BLKRT_ERR_INVALID_LAUNCH, "kernel '%s': %u threads per block (%s) exceed the device's maximum %d",
                      k->name, threads, why, d->info.max_threads_per_block);
    if (threads > (unsigned)v->max_threads)
        return rt_err(BLKRT_ERR_INVALID_LAUNCH,
                      "kernel '%s': %u threads per block (%s) exceed the %d that entry '%s' can run with (its register use)",
                      k->name, threads, why, v->max_threads, v->entry);
    return BLKRT_OK;
}

static blkrt_status check_shared(const blkrt_kernel *k, const rt_variant *v, const blkrt_device *d, unsigned dyn) {
    unsigned long total = (unsigned long)dyn + (unsigned long)v->static_shared;
    if (total > (unsigned long)d->info.max_shared_optin)
        return rt_err(BLKRT_ERR_INVALID_LAUNCH,
                      "kernel '%s': entry '%s' needs %lu bytes of shared memory (%u dynamic + %d static), more than the "
                      "device's maximum of %d per block",
                      k->name, v->entry, total, dyn, v->static_shared, d->info.max_shared_optin);
    return BLKRT_OK;
}

/* A kernel with @cluster(N) runs in clusters of N programs along x: its
 * code meets the cluster's other programs, so grid x must divide. */
static blkrt_status check_cluster(const blkrt_kernel *k, const rt_variant *v, const uint32_t grid[3]) {
    if (!v->cluster_required || grid[0] % (uint32_t)v->cluster == 0) return BLKRT_OK;
    return rt_err(BLKRT_ERR_INVALID_LAUNCH,
                  "kernel '%s': runs in clusters of %d programs along axis 0 (@cluster), so grid[0] must be a multiple "
                  "of %d, got %u",
                  k->name, v->cluster, v->cluster, grid[0]);
}

/* A variant whose tensor maps cannot be encoded for these arguments. */
static blkrt_status maps_unfit(const blkrt_kernel *k, const rt_variant *v, const blkrt_arg *args) {
    rt_tmap_args ta[RT_MAX_TMAPS];
    int bad = 0;
    rt_tmap_fit f = rt_tmaps_fit(v, args, ta, &bad);
    return rt_err(BLKRT_ERR_INVALID_LAUNCH,
                  "kernel '%s': no variant accepts these arguments: entry '%s' takes a tensor map of '%s' and %s",
                  k->name, v->entry, k->meta->params[v->tmaps[bad].arg].name, rt_tmap_fit_text(f));
}

/* Why no variant matched: the first assumption of the least specialised one. */
static blkrt_status no_variant(const blkrt_kernel *k, uint64_t d16, uint64_t eq1, const blkrt_arg *args) {
    const rt_variant *v = &k->variants[k->nvariants - 1];
    for (int p = 0; p < k->meta->nparams; p++) {
        uint64_t bit = UINT64_C(1) << p;
        if ((v->need_d16 & bit) && !(d16 & bit))
            return rt_err(BLKRT_ERR_INVALID_LAUNCH,
                          "kernel '%s': no variant accepts these arguments: every variant assumes '%s' is divisible by "
                          "16 (entry '%s') and it is not",
                          k->name, k->meta->params[p].name, v->entry);
        if ((v->need_eq1 & bit) && !(eq1 & bit))
            return rt_err(BLKRT_ERR_INVALID_LAUNCH,
                          "kernel '%s': no variant accepts these arguments: every variant assumes '%s' is 1 (entry '%s') "
                          "and it is not",
                          k->name, k->meta->params[p].name, v->entry);
    }
    if (v->ntmaps) return maps_unfit(k, v, args);
    return rt_err(BLKRT_ERR_INVALID_LAUNCH, "kernel '%s': no variant accepts these arguments", k->name);
}

/* The checks before a launch that do not depend on the grid: the handle,
 * the argument count, each argument (converted into slots, params pointing
 * at them) and the variant whose assumptions they satisfy (ta: its tensor
 * maps for them); `fn` names the entry point in messages. */
static blkrt_status prepare(blkrt_kernel *k, const blkrt_arg *args, int nargs, uint64_t *slots, void **params,
                            rt_tmap_args *ta, rt_variant **out, const char *fn) {
    if (!RT_IS(k, RT_MAGIC_KERNEL)) return rt_err(BLKRT_ERR_INVALID_HANDLE, "%s: not a kernel handle", fn);
    if (!k->checked)
        return rt_err(BLKRT_ERR_INVALID_LAUNCH,
                      "kernel '%s' has no blk-meta line: its arguments cannot be checked; launch it with blkrt_launch_raw",
                      k->name);
    const rt_meta_kernel *mk = k->meta;
    if (nargs != mk->nparams || (nargs > 0 && !args))
        return rt_err(BLKRT_ERR_INVALID_LAUNCH, "kernel '%s' takes %d argument%s, got %d%s", k->name, mk->nparams,
                      mk->nparams == 1 ? "" : "s", nargs, nargs > 0 && !args ? " (args is NULL)" : "");
    blkrt_status st;
    int bad;
    uint64_t d16 = 0, eq1 = 0;
    for (int i = 0; i < nargs; i++) {
        bool is_d16, is_eq1;
        if ((st = rt_convert_arg(k, i, &args[i], &slots[i], &is_d16, &is_eq1))) return st;
        d16 |= (uint64_t)is_d16 << i;
        eq1 |= (uint64_t)is_eq1 << i;
        params[i] = &slots[i];
    }
    rt_variant *v = NULL;
    if (k->lazy) {
        /* from source: the variant of exactly this key, compiled if new;
         * if its tensor maps do not fit these tensors, the unspecialised
         * variant (which has none) */
        if ((st = rt_lazy_get(k, d16 & k->may_d16, eq1 & k->may_eq1, &v))) return st;
        if (v->ntmaps && rt_tmaps_fit(v, args, ta, &bad) && (st = rt_lazy_get(k, 0, 0, &v))) return st;
        if (v->ntmaps && rt_tmaps_fit(v, args, ta, &bad)) return maps_unfit(k, v, args);
    } else {
        /* Most specialised first: the first whose assumptions all hold and
         * whose tensor maps (if any) can be encoded for these arguments. */
        for (int j = 0; j < k->nvariants && !v; j++)
            if ((k->variants[j].need_d16 & ~d16) == 0 && (k->variants[j].need_eq1 & ~eq1) == 0 &&
                (!k->variants[j].ntmaps || rt_tmaps_fit(&k->variants[j], args, ta, &bad) == RT_TMAP_FITS))
                v = &k->variants[j];
        if (!v) return no_variant(k, d16, eq1, args);
    }
    *out = v;
    return BLKRT_OK;
}

blkrt_status blkrt_launch(blkrt_kernel *k, const uint32_t grid[3], const blkrt_arg *args, int nargs, blkrt_stream *s) {
    uint64_t slots[RT_MAX_PARAMS];
    void *params[RT_MAX_PARAMS + RT_MAX_TMAPS]; /* the declared params, then the variant's tensor maps */
    rt_tmap_args ta[RT_MAX_TMAPS];              /* the chosen variant's maps for these arguments */
    rt_variant *v;
    blkrt_status st;
    if (!RT_IS(k, RT_MAGIC_KERNEL)) return rt_err(BLKRT_ERR_INVALID_HANDLE, "blkrt_launch: not a kernel handle");
    blkrt_device *d = k->mod->dev;
    CUstream cs;
    if ((st = rt_stream_for(d, s, &cs, "blkrt_launch"))) return st;
    if (!grid) return rt_err(BLKRT_ERR_INVALID_VALUE, "blkrt_launch: grid is NULL");
    if ((st = prepare(k, args, nargs, slots, params, ta, &v, "blkrt_launch"))) return st;
    if ((st = check_grid(k, d, grid))) return st;
    if ((st = check_cluster(k, v, grid))) return st;
    unsigned threads = 32u * (unsigned)v->num_warps;
    if ((st = check_block(k, v, d, threads, "32 x num_warps"))) return st;
    if ((st = check_shared(k, v, d, (unsigned)v->shared))) return st;

    /* NVTX range / profiler timing: one relaxed load when neither is on */
    bool prof = atomic_load_explicit(&rt_prof_active, memory_order_relaxed) != 0;
    return d->ops->launch(k, v, grid, args, nargs, params, ta, s, cs, prof);
}

blkrt_status blkrt_kernel_max_programs(blkrt_kernel *k, const blkrt_arg *args, int nargs, uint32_t *out) {
    uint64_t slots[RT_MAX_PARAMS];
    void *params[RT_MAX_PARAMS + RT_MAX_TMAPS];
    rt_tmap_args ta[RT_MAX_TMAPS];
    rt_variant *v;
    blkrt_status st;
    if (!out) return rt_err(BLKRT_ERR_INVALID_VALUE, "blkrt_kernel_max_programs: out is NULL");
    *out = 0;
    if ((st = prepare(k, args, nargs, slots, params, ta, &v, "blkrt_kernel_max_programs"))) return st;
    blkrt_device *d = k->mod->dev;
    if ((st = check_block(k, v, d, 32u * (unsigned)v->num_warps, "32 x num_warps"))) return st;
    if ((st = check_shared(k, v, d, (unsigned)v->shared))) return st;
    return d->ops->max_programs(k, v, out);
}

blkrt_status blkrt_launch_raw(blkrt_kernel *k, const uint32_t grid[3], const uint32_t block[3], uint32_t shared_bytes,
                              void **params, blkrt_stream *s) {
    if (!RT_IS(k, RT_MAGIC_KERNEL)) return rt_err(BLKRT_ERR_INVALID_HANDLE, "blkrt_launch_raw: not a kernel handle");
    blkrt_device *d = k->mod->dev;
    if (!d->ops->launch_raw) {
        char where[32];
        return rt_err(BLKRT_ERR_UNSUPPORTED, "blkrt_launch_raw: %s launches checked kernels only",
                      d->ops->where(d, where, sizeof where));
    }
    CUstream cs;
    blkrt_status st = rt_stream_for(d, s, &cs, "blkrt_launch_raw");
    if (st) return st;
    if (!grid || !block) return rt_err(BLKRT_ERR_INVALID_VALUE, "blkrt_launch_raw: grid or block is NULL");
    rt_variant *v = k->lazy ? NULL : &k->variants[k->nvariants - 1];
    if (k->lazy && (st = rt_lazy_get(k, 0, 0, &v))) return st;
    if ((st = check_grid(k, d, grid))) return st;
    if (v->cluster_required)
        return rt_err(BLKRT_ERR_UNSUPPORTED, "blkrt_launch_raw: kernel '%s' runs in clusters (@cluster); launch it with "
                      "blkrt_launch", k->name);
    unsigned long threads = 1;
    for (int i = 0; i < 3; i++) {
        if (block[i] == 0 || block[i] > (uint32_t)d->max_block[i])
            return rt_err(BLKRT_ERR_INVALID_LAUNCH, "kernel '%s': block[%d] = %u is not in 1..%d", k->name, i, block[i],
                          d->max_block[i]);
        threads *= block[i];
    }
    if (threads > 0xffffffffUL) threads = 0xffffffffUL;
    if ((st = check_block(k, v, d, (unsigned)threads, "the block size"))) return st;
    if ((st = check_shared(k, v, d, shared_bytes))) return st;

    return d->ops->launch_raw(k, v, grid, block, shared_bytes, params, s, cs, (uint32_t)threads);
}

/* device.c — opening and closing devices, their properties, synchronising.
 *
 * The one place that asks which kind of device a handle is: open picks the
 * operations table (rt.h) for the ordinal, a GPU's (gpu_device.c) or the
 * CPU interpreter's (cpu_device.c), and everything after goes through it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rt.h"

blkrt_status blkrt_device_open(int ordinal, blkrt_device **out) {
    if (!out) return rt_err(BLKRT_ERR_INVALID_VALUE, "blkrt_device_open: out is NULL");
    *out = NULL;
    rt_profile_init(); /* BLK_PROFILE and an NVTX tool, once: before any launch */
    blkrt_device *d = calloc(1, sizeof *d);
    if (!d) return rt_err(BLKRT_ERR_OUT_OF_MEMORY, "out of memory");
    d->magic = RT_MAGIC_DEVICE;
    atomic_init(&d->children, 0);
    d->ops = ordinal == BLKRT_DEVICE_CPU ? &rt_cpu_ops : &rt_gpu_ops;
    blkrt_status st = d->ops->open(d, ordinal);
    if (st) {
        free(d);
        return st;
    }
    *out = d;
    return BLKRT_OK;
}

void *rt_child_keep(blkrt_device *d, blkrt_status st, void *h) {
    if (st) {
        free(h);
        return NULL;
    }
    atomic_fetch_add(&d->children, 1);
    return h;
}

void rt_child_free(blkrt_device *d, uint32_t *magic, void *h) {
    *magic = RT_MAGIC_DEAD;
    free(h);
    atomic_fetch_sub(&d->children, 1);
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
    if ((st = d->ops->close(d))) return st;
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
    return st ? st : d->ops->synchronize(d);
}

blkrt_status blkrt_device_synchronize_timeout(blkrt_device *d, uint32_t timeout_ms) {
    const char *fn = "blkrt_device_synchronize_timeout";
    blkrt_status st = rt_check_device(d, fn);
    return st ? st : d->ops->synchronize_timeout(d, timeout_ms, fn);
}

blkrt_status blkrt_device_set_step_limit(blkrt_device *d, uint64_t steps) {
    blkrt_status st = rt_check_device(d, "blkrt_device_set_step_limit");
    return st ? st : d->ops->set_step_limit(d, steps);
}

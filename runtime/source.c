/* source.c — loading .blk source through the compiler hook.
 *
 * libblkrt never links the compiler. A program that wants JIT registers one
 * (blkrt_use_compiler; libblkrt_jit provides it over libblkc). The load is
 * the device's (d->ops->load_source): for the CPU device the compiler
 * builds an interpreter program (cpu_device.c). For a GPU, with a compiler
 * that can `describe` source, the load runs only the front end and each
 * variant is compiled at its first launch (lazy.c); otherwise the compiler
 * produces PTX with every default variant, which goes through the disk
 * cache (cache.c) and is loaded like any other PTX (gpu_module.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rt.h"

/* The registered compiler: process-wide by nature (there is one libblkc in a
 * process), written rarely, read on every source load. */
static _Atomic(const blkrt_compiler *) registered;

blkrt_status blkrt_use_compiler(const blkrt_compiler *c) {
    if (c && !c->version) return rt_err(BLKRT_ERR_INVALID_VALUE, "blkrt_use_compiler: the compiler has no version");
    atomic_store(&registered, c);
    return BLKRT_OK;
}

const blkrt_compiler *rt_compiler(void) { return atomic_load(&registered); }

blkrt_status blkrt_module_load_source(blkrt_device *d, const char *source, size_t len,
                                      const blkrt_source_options *opts, blkrt_module **out) {
    blkrt_status st = rt_check_device(d, "blkrt_module_load_source");
    if (st) return st;
    if (!out) return rt_err(BLKRT_ERR_INVALID_VALUE, "blkrt_module_load_source: out is NULL");
    *out = NULL;
    if (!source) return rt_err(BLKRT_ERR_INVALID_VALUE, "blkrt_module_load_source: source is NULL");
    blkrt_source_options none = {0};
    if (!opts) opts = &none;
    if (opts->ndefines < 0 || (opts->ndefines > 0 && !opts->defines))
        return rt_err(BLKRT_ERR_INVALID_VALUE, "blkrt_module_load_source: bad defines array");
    for (int i = 0; i < opts->ndefines; i++)
        if (!opts->defines[i].name)
            return rt_err(BLKRT_ERR_INVALID_VALUE, "blkrt_module_load_source: define %d has no name", i);
    const blkrt_compiler *c = rt_compiler();
    if (!c)
        return rt_err(BLKRT_ERR_NO_COMPILER,
                      "no compiler linked: loading .blk source needs libblkrt_jit (link it and call blkrt_jit_install())");
    blkrt_compile_request req = {
        .source = source,
        .len = len,
        .path = opts->path ? opts->path : "<source>",
        .defines = opts->defines,
        .ndefines = opts->ndefines,
        .kernel = opts->kernel,
        .arch = d->info.arch,
    };
    st = d->ops->load_source(d, c, &req, opts->cache_dir, out);
    /* the source, not the PTX it became: a copy on another GPU compiles for its arch */
    if (st == BLKRT_OK && (st = rt_module_keep_source(*out, source, len, opts)) != BLKRT_OK) {
        blkrt_module_unload(*out);
        *out = NULL;
    }
    return st;
}

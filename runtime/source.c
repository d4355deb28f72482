/* source.c — loading .blk source through the compiler hook.
 *
 * libblkrt never links the compiler. A program that wants JIT registers one
 * (blkrt_use_compiler; libblkrt_jit provides it over libblkc). For the CPU
 * device the compiler builds an interpreter program; for a GPU it produces
 * PTX with blk-meta lines, which goes through the disk cache (cache.c) and
 * then blkrt_module_load_ptx like any other PTX.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cache.h"
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

static void free_result(blkrt_compile_result *res) {
    free(res->text);
    free(res->log);
    for (int i = 0; i < res->ndeps; i++) free(res->deps[i]);
    free(res->deps);
    memset(res, 0, sizeof *res);
}

static blkrt_status load_gpu(blkrt_device *d, const blkrt_compiler *c, const blkrt_compile_request *req,
                             const char *cache_opt, blkrt_module **out) {
    if (!c->compile_ptx)
        return rt_err(BLKRT_ERR_UNSUPPORTED,
                      "%s: the registered compiler (version %s) cannot generate PTX yet; load it on BLKRT_DEVICE_CPU",
                      req->path, c->version);
    char dir[4096];
    bool cached = rt_cache_dir(cache_opt, dir, sizeof dir);
    rt_cache_key key;
    char *text = NULL;
    size_t len = 0;
    if (cached) {
        rt_cache_key_compute(c->version, req, &key);
        if (rt_cache_load(dir, &key, &text, &len) == BLKRT_OK) {
            blkrt_status st = blkrt_module_load_ptx(d, text, len, out);
            free(text);
            return st;
        }
    }
    blkrt_compile_result res = {0};
    blkrt_status st = c->compile_ptx(req, &res);
    if (st) {
        rt_err(st, "%s: compiling for %s failed%s%s", req->path, req->arch, res.log ? ":\n" : "",
               res.log ? res.log : "");
        free_result(&res);
        return st;
    }
    if (!res.text) {
        free_result(&res);
        return rt_err(BLKRT_ERR_COMPILE, "%s: the compiler returned no PTX", req->path);
    }
    if (res.len == 0) res.len = strlen(res.text);
    /* A failed cache write only costs the next load a compile, and the call
     * still succeeds: keep the caller's last error message as it was. */
    if (cached) {
        char saved[RT_MSG_SIZE];
        snprintf(saved, sizeof saved, "%s", blkrt_last_error());
        rt_cache_store(dir, &key, res.text, res.len, (const char *const *)res.deps, res.ndeps);
        rt_err(BLKRT_OK, "%s", saved);
    }
    st = blkrt_module_load_ptx(d, res.text, res.len, out);
    free_result(&res);
    return st;
}

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
    if (d->kind == BLKRT_KIND_CPU) return rt_cpu_load_source(d, c, &req, out);
    return load_gpu(d, c, &req, opts->cache_dir, out);
}

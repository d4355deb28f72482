/* source.c — loading .blk source through the compiler hook.
 *
 * libblkrt never links the compiler. A program that wants JIT registers one
 * (blkrt_use_compiler; libblkrt_jit provides it over libblkc). For the CPU
 * device the compiler builds an interpreter program. For a GPU, with a
 * compiler that can `describe` source, the load runs only the front end and
 * each variant is compiled at its first launch (lazy.c); otherwise the
 * compiler produces PTX with every default variant, which goes through the
 * disk cache (cache.c) and then blkrt_module_load_ptx like any other PTX.
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

/* A hook's result is libc memory (blkrt.h), not the runtime allocator's. */
void rt_free_result(blkrt_compile_result *res) {
    rt_libc_free(res->text);
    rt_libc_free(res->log);
    for (int i = 0; i < res->ndeps; i++) rt_libc_free(res->deps[i]);
    rt_libc_free(res->deps);
    memset(res, 0, sizeof *res);
}

blkrt_status rt_compile_cached(const blkrt_compiler *c, const char *kind, const blkrt_compile_request *req,
                               const char *dir, const char *what, char **text, size_t *len) {
    blkrt_status (*hook)(const blkrt_compile_request *, blkrt_compile_result *) =
        strcmp(kind, "meta") == 0 ? c->describe : c->compile_ptx;
    rt_cache_key key;
    *text = NULL;
    *len = 0;
    if (dir) {
        /* PTX with line info (BLK_LINEINFO, read by jit.c's compile_ptx) is
         * other text: another key */
        const char *li = getenv("BLK_LINEINFO");
        bool lineinfo = strcmp(kind, "ptx") == 0 && li && *li && strcmp(li, "0") != 0;
        rt_cache_key_compute(c->version, lineinfo ? "ptx+lineinfo" : kind, req, &key);
        if (rt_cache_load(dir, &key, text, len) == BLKRT_OK) return BLKRT_OK;
    }
    blkrt_compile_result res = {0};
    blkrt_status st = hook(req, &res);
    if (st) {
        rt_err(st, "%s: compiling %s%sfor %s failed%s%s", req->path, what ? what : "", what ? " " : "", req->arch,
               res.log ? ":\n" : "", res.log ? res.log : "");
        rt_free_result(&res);
        return st;
    }
    if (!res.text) {
        rt_free_result(&res);
        return rt_err(BLKRT_ERR_COMPILE, "%s: the compiler returned no %s", req->path,
                      strcmp(kind, "meta") == 0 ? "blk-meta" : "PTX");
    }
    if (res.len == 0) res.len = strlen(res.text);
    /* A failed cache write only costs the next load a compile, and the call
     * still succeeds: keep the caller's last error message as it was. */
    if (dir) {
        char saved[RT_MSG_SIZE];
        snprintf(saved, sizeof saved, "%s", blkrt_last_error());
        rt_cache_store(dir, &key, res.text, res.len, (const char *const *)res.deps, res.ndeps);
        rt_err(BLKRT_OK, "%s", saved);
    }
    *text = rt_strndup(res.text, res.len); /* into the runtime's allocator */
    *len = res.len;
    rt_free_result(&res);
    return *text ? BLKRT_OK : rt_err(BLKRT_ERR_OUT_OF_MEMORY, "out of memory");
}

static blkrt_status load_gpu(blkrt_device *d, const blkrt_compiler *c, const blkrt_compile_request *req,
                             const char *cache_opt, blkrt_module **out) {
    if (!c->compile_ptx)
        return rt_err(BLKRT_ERR_UNSUPPORTED,
                      "%s: the registered compiler (version %s) cannot generate PTX yet; load it on BLKRT_DEVICE_CPU",
                      req->path, c->version);
    char dir[4096];
    bool cached = rt_cache_dir(cache_opt, dir, sizeof dir);
    if (c->describe) return rt_lazy_load(d, c, req, cached ? dir : NULL, out);
    char *text;
    size_t len;
    blkrt_status st = rt_compile_cached(c, "ptx", req, cached ? dir : NULL, NULL, &text, &len);
    if (st) return st;
    st = blkrt_module_load_ptx(d, text, len, out);
    free(text);
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
    st = d->kind == BLKRT_KIND_CPU ? rt_cpu_load_source(d, c, &req, out) : load_gpu(d, c, &req, opts->cache_dir, out);
    /* the source, not the PTX it became: a copy on another GPU compiles for its arch */
    if (st == BLKRT_OK && (st = rt_module_keep_source(*out, source, len, opts)) != BLKRT_OK) {
        blkrt_module_unload(*out);
        *out = NULL;
    }
    return st;
}

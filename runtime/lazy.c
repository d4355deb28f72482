/* lazy.c — kernels from .blk source on a GPU, compiled one variant at a
 * time by the first launch that needs it (Triton's JIT specialisation).
 *
 *   blkrt_module_load_source      the compiler's describe hook: one blk-meta
 *     (GPU, describe hook)        line per kernel from the front end alone
 *                                 (through the disk cache: a warm load only
 *                                 hashes and reads one small file); kernels
 *                                 get params, consts, num_warps, nospec and
 *                                 no variant yet;
 *   blkrt_launch                  the argument key — per parameter eq1 (an
 *                                 integer equal to 1), d16 (a pointer or
 *                                 integer divisible by 16) or nothing; floats,
 *                                 bools and nospec parameters always nothing —
 *                                 picks the compiled variant with exactly
 *                                 that key. A new key: compile_ptx for that
 *                                 one variant (its own cache entry), one
 *                                 cuModuleLoadDataEx, the function bound,
 *                                 the variant published.
 *
 * Exact keys (not the first variant whose assumptions hold, as for PTX with
 * several entries): a launch with every argument aligned after one without
 * gets its own, faster variant instead of reusing the fallback.
 *
 * Threads: a kernel's compiled variants are a list whose nodes never change
 * once published (the head is stored with release, read with acquire), so
 * launches of known keys take no lock. Compiles of one module are serialised
 * by its lock, re-checking the list under it, so each key is compiled and
 * loaded once however many threads launch it first.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cache.h"
#include "gpu.h"

/* What a variant compile needs, copied from the load's request. */
struct rt_lazy {
    const blkrt_compiler *compiler;
    blkrt_compile_request req;     /* source, path, defines (owned copies) */
    char *dir;                     /* the cache directory, NULL: none */
    pthread_mutex_t lock;          /* one compile at a time */
    _Atomic(const char *) last_log; /* the driver's info log of the latest variant load */
};

static char *dup_str(const char *s) { return s ? rt_strndup(s, strlen(s)) : NULL; }

static void lazy_free(blkrt_module *m) {
    rt_lazy *lz = m->lazy;
    for (int i = 0; i < m->nkernels; i++) {
        blkrt_kernel *k = &m->kernels[i];
        for (rt_lazy_variant *n = atomic_load(&k->compiled), *next; n; n = next) {
            next = n->next;
            rt_meta_free(&n->meta);
            free(n->jit_log);
            free(n);
        }
        atomic_store(&k->compiled, NULL);
    }
    free((char *)lz->req.source);
    free((char *)lz->req.path);
    for (int i = 0; i < lz->req.ndefines; i++) free((char *)lz->req.defines[i].name);
    free((blkrt_define *)lz->req.defines);
    free(lz->dir);
    pthread_mutex_destroy(&lz->lock);
    free(lz);
    m->lazy = NULL;
}

static rt_lazy *lazy_new(const blkrt_compiler *c, const blkrt_compile_request *req, const char *dir) {
    rt_lazy *lz = calloc(1, sizeof *lz);
    if (!lz) return NULL;
    lz->compiler = c;
    pthread_mutex_init(&lz->lock, NULL);
    lz->req.len = req->len;
    lz->req.source = rt_strndup(req->source, req->len);
    lz->req.path = dup_str(req->path);
    lz->req.arch = req->arch; /* the device's info: lives as long as the module */
    lz->dir = dup_str(dir);
    blkrt_define *defs = calloc((size_t)req->ndefines + 1, sizeof *defs);
    lz->req.defines = defs;
    bool ok = lz->req.source && lz->req.path && (!dir || lz->dir) && defs;
    for (int i = 0; ok && i < req->ndefines; i++) {
        defs[i] = req->defines[i];
        ok = (defs[i].name = dup_str(req->defines[i].name)) != NULL;
        lz->req.ndefines = i + 1;
    }
    if (!ok) {
        blkrt_module tmp = {.lazy = lz};
        lazy_free(&tmp);
        return NULL;
    }
    return lz;
}

static blkrt_status lazy_load(blkrt_device *d, const blkrt_compiler *c, const blkrt_compile_request *req,
                          const char *cache_dir, blkrt_module **out) {
    char *text;
    size_t len;
    blkrt_status st = rt_compile_cached(c, "meta", req, cache_dir, NULL, &text, &len);
    if (st) return st;
    blkrt_module *m = rt_module_new(d);
    if (m) m->lazy = lazy_new(c, req, cache_dir);
    if (!m || !m->lazy) {
        free(text);
        if (m) rt_module_free(m);
        return rt_err(BLKRT_ERR_OUT_OF_MEMORY, "out of memory");
    }
    st = rt_meta_parse(text, len, &m->meta);
    free(text);
    return rt_gpu_finish_load(m, st, out);
}

/* "x=d16,n=eq1": the variant spec of a key (blkc_add_variant's syntax),
 * malloc'd. */
static char *key_spec(const blkrt_kernel *k, uint64_t d16, uint64_t eq1) {
    size_t n = 1, used = 0;
    for (int p = 0; p < k->meta->nparams; p++) n += strlen(k->meta->params[p].name) + 5;
    char *buf = malloc(n);
    if (!buf) return NULL;
    buf[0] = 0;
    for (int p = 0; p < k->meta->nparams; p++) {
        uint64_t bit = UINT64_C(1) << p;
        if (!((d16 | eq1) & bit)) continue;
        used += (size_t)snprintf(buf + used, n - used, "%s%s=%s", used ? "," : "", k->meta->params[p].name,
                                 eq1 & bit ? "eq1" : "d16");
    }
    return buf;
}

static rt_lazy_variant *find(blkrt_kernel *k, uint64_t d16, uint64_t eq1) {
    for (rt_lazy_variant *n = atomic_load_explicit(&k->compiled, memory_order_acquire); n; n = n->next)
        if (n->key_d16 == d16 && n->key_eq1 == eq1) return n;
    return NULL;
}

/* The compiled PTX must describe one variant of the kernel the load
 * described, assuming no more than the key (a compiler may drop assumptions
 * its code does not use): anything else is a compiler bug, reported rather
 * than launched. */
static blkrt_status check_variant(const blkrt_kernel *k, rt_lazy_variant *n, uint64_t d16, uint64_t eq1) {
    const rt_meta *mt = &n->meta;
    if (mt->nkernels != 1 || strcmp(mt->kernels[0].name, k->name) != 0 || mt->kernels[0].nvariants != 1)
        return rt_err(BLKRT_ERR_META, "kernel '%s': the PTX compiled for one variant does not describe one entry of it",
                      k->name);
    const rt_meta_kernel *mk = &mt->kernels[0];
    if (!rt_meta_same_kernel(mk, k->meta))
        return rt_err(BLKRT_ERR_META, "kernel '%s': the compiled variant has other params or consts than the load "
                      "described", k->name);
    const rt_meta_variant *mv = &mk->variants[0];
    n->v = (rt_variant){.entry = mv->entry, .num_warps = mv->num_warps, .shared = mv->shared, .meta_line = mv->line,
                        .ntmaps = mv->ntmaps, .tmaps = mv->tmaps, .cluster = mv->cluster,
                        .cluster_required = mv->cluster_required};
    for (int p = 0; p < mk->nparams; p++) {
        if (mv->spec[p] == RT_SPEC_D16) n->v.need_d16 |= UINT64_C(1) << p;
        if (mv->spec[p] == RT_SPEC_EQ1) n->v.need_eq1 |= UINT64_C(1) << p;
        n->v.nspec += mv->spec[p] != RT_SPEC_NONE;
    }
    if ((n->v.need_d16 & ~d16) || (n->v.need_eq1 & ~eq1))
        return rt_err(BLKRT_ERR_META, "kernel '%s': the compiled variant (entry '%s') assumes more than its arguments "
                      "hold", k->name, mv->entry);
    n->key_d16 = d16;
    n->key_eq1 = eq1;
    return BLKRT_OK;
}

/* Compile, load and bind one variant (under the module's lock). */
static blkrt_status compile_variant(blkrt_kernel *k, uint64_t d16, uint64_t eq1, rt_lazy_variant **out) {
    blkrt_module *m = k->mod;
    rt_lazy *lz = m->lazy;
    char *spec = key_spec(k, d16, eq1);
    size_t wn = spec ? strlen(spec) + strlen(k->name) + 32 : 0;
    char *what = spec ? malloc(wn) : NULL;
    if (!what) {
        free(spec);
        return rt_err(BLKRT_ERR_OUT_OF_MEMORY, "out of memory");
    }
    snprintf(what, wn, "kernel '%s' variant '%s'", k->name, spec);
    blkrt_compile_request req = lz->req;
    req.kernel = k->name;
    req.variant = spec;
    char *text;
    size_t len;
    blkrt_status st = rt_compile_cached(lz->compiler, "ptx", &req, lz->dir, what, &text, &len);
    free(spec);
    free(what);
    if (st) return st;
    rt_lazy_variant *n = calloc(1, sizeof *n);
    if (!n) {
        free(text);
        return rt_err(BLKRT_ERR_OUT_OF_MEMORY, "out of memory");
    }
    st = rt_meta_parse(text, len, &n->meta);
    if (st == BLKRT_OK) st = check_variant(k, n, d16, eq1);
    if (st == BLKRT_OK) {
        rt_ctx_scope sc;
        CUresult r = rt_ctx_enter(m->dev, &sc);
        st = r ? rt_cu_err(r, "cuModuleLoadDataEx") : rt_gpu_load_image(m->dev, text, text, &n->cu, &n->jit_log);
        if (st == BLKRT_OK) st = rt_gpu_bind_function(m, n->cu, &n->v);
        if (st && n->cu) m->dev->cu->cuModuleUnload(n->cu);
        rt_ctx_leave(m->dev, &sc);
    }
    free(text);
    if (st) {
        rt_meta_free(&n->meta);
        free(n->jit_log);
        free(n);
        return st;
    }
    *out = n;
    return BLKRT_OK;
}

blkrt_status rt_lazy_get(blkrt_kernel *k, uint64_t d16, uint64_t eq1, rt_variant **out) {
    rt_lazy_variant *n = find(k, d16, eq1);
    if (n) {
        *out = &n->v;
        return BLKRT_OK;
    }
    rt_lazy *lz = k->mod->lazy;
    blkrt_status st = BLKRT_OK;
    pthread_mutex_lock(&lz->lock);
    n = find(k, d16, eq1); /* another thread may have compiled it meanwhile */
    if (!n && (st = compile_variant(k, d16, eq1, &n)) == BLKRT_OK) {
        n->next = atomic_load_explicit(&k->compiled, memory_order_relaxed);
        atomic_store_explicit(&k->compiled, n, memory_order_release);
        atomic_store(&lz->last_log, n->jit_log ? n->jit_log : "");
    }
    pthread_mutex_unlock(&lz->lock);
    if (st == BLKRT_OK) *out = &n->v;
    return st;
}

static blkrt_status lazy_unload(blkrt_module *m) {
    blkrt_device *d = m->dev;
    rt_ctx_scope sc;
    CUresult r = rt_ctx_enter(d, &sc);
    for (int i = 0; i < m->nkernels && r == RT_CUDA_SUCCESS; i++)
        for (rt_lazy_variant *n = atomic_load(&m->kernels[i].compiled); n && r == RT_CUDA_SUCCESS; n = n->next)
            if (n->cu && (r = d->cu->cuModuleUnload(n->cu)) == RT_CUDA_SUCCESS) n->cu = NULL;
    rt_ctx_leave(d, &sc);
    return r ? rt_cu_err(r, "cuModuleUnload") : BLKRT_OK;
}

static const char *lazy_jit_log(blkrt_module *m) {
    const char *log = atomic_load(&m->lazy->last_log);
    return log ? log : "";
}

/* ---- the GPU table's source loads and module lifetime (gpu.h) ---- */

blkrt_status rt_gpu_load_source(blkrt_device *d, const blkrt_compiler *c, const blkrt_compile_request *req,
                                const char *cache_opt, blkrt_module **out) {
    if (!c->compile_ptx)
        return rt_err(BLKRT_ERR_UNSUPPORTED,
                      "%s: the registered compiler (version %s) cannot generate PTX yet; load it on BLKRT_DEVICE_CPU",
                      req->path, c->version);
    char dir[4096];
    bool cached = rt_cache_dir(cache_opt, dir, sizeof dir);
    if (c->describe) return lazy_load(d, c, req, cached ? dir : NULL, out);
    char *text;
    size_t len;
    blkrt_status st = rt_compile_cached(c, "ptx", req, cached ? dir : NULL, NULL, &text, &len);
    if (st) return st;
    st = rt_gpu_load_ptx(d, text, len, out); /* the checks of blkrt_module_load_ptx hold */
    free(text);
    return st;
}

blkrt_status rt_gpu_unload(blkrt_module *m) {
    blkrt_device *d = m->dev;
    if (m->lazy) {
        blkrt_status st = lazy_unload(m);
        if (st) return st;
    }
    if (m->cu) {
        CUresult r;
        RT_CTX_CALL(d, r, d->cu->cuModuleUnload(m->cu));
        if (r) return rt_cu_err(r, "cuModuleUnload");
    }
    return BLKRT_OK;
}

void rt_gpu_release(blkrt_module *m) {
    if (m->lazy) lazy_free(m); /* walks the kernels' variant lists */
}

const char *rt_gpu_jit_log(blkrt_module *m) { return m->lazy ? lazy_jit_log(m) : m->jit_log ? m->jit_log : ""; }

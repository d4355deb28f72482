/* module.c — loading PTX and cubin images; kernels and their variants.
 *
 * Loading does all the work a launch would otherwise repeat: the blk-meta
 * lines are parsed (before the driver sees the image, so a bad line is
 * reported even where there is no GPU), every variant's CUfunction and limits
 * are looked up, variants are ordered most specialised first, and functions
 * that need more than 48 KB of dynamic shared memory are opted in with
 * cuFuncSetAttribute — once, here. After loading, a module's kernels are
 * read-only, so launches from many threads need no lock.
 *
 * Several devices: a module is loaded on one device, as a CUmodule lives in
 * one context, and launches stay lock-free because a kernel handle names
 * exactly one CUfunction. blkrt_module_for_device makes the same kernels
 * on another device from the module's origin (the PTX, cubin or source it
 * was loaded from, kept with it) and keeps the copy in the module's list,
 * so each device loads (and, from source, compiles for its own arch) once.
 * The copy is an ordinary module of that device; only unloading goes
 * through its root. Loading a copy explicitly rather than on the launch
 * path keeps launches free of device lookups and the caller in control of
 * where memory and time go.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rt.h"

#define RT_JIT_LOG_SIZE 16384

/* What a module was loaded from: owned copies of the bytes and options. */
struct rt_origin {
    enum { RT_FROM_PTX, RT_FROM_CUBIN, RT_FROM_SOURCE } kind;
    char *data;                  /* PTX text (NUL-terminated), cubin image or .blk source */
    size_t len;
    char *meta;                  /* cubin: its blk-meta lines, or NULL */
    char *path, *kernel, *cache_dir;
    blkrt_define *defines;       /* source: the load's defines (names owned) */
    int ndefines;
};

static void origin_free(rt_origin *o) {
    if (!o) return;
    free(o->data);
    free(o->meta);
    free(o->path);
    free(o->kernel);
    free(o->cache_dir);
    for (int i = 0; i < o->ndefines; i++) free((char *)o->defines[i].name);
    free(o->defines);
    free(o);
}

static char *dup_opt(const char *s, bool *ok) {
    char *r = s ? rt_strndup(s, strlen(s)) : NULL;
    if (s && !r) *ok = false;
    return r;
}

static blkrt_status keep(blkrt_module *m, rt_origin *o, bool ok) {
    if (!ok) {
        origin_free(o);
        return rt_err(BLKRT_ERR_OUT_OF_MEMORY, "out of memory");
    }
    origin_free(m->origin);
    m->origin = o;
    return BLKRT_OK;
}

blkrt_status rt_module_keep_image(blkrt_module *m, bool cubin, char *data, size_t len, const char *meta) {
    rt_origin *o = calloc(1, sizeof *o);
    bool ok = o != NULL;
    if (!o) {
        free(data);
        return keep(m, NULL, false);
    }
    o->kind = cubin ? RT_FROM_CUBIN : RT_FROM_PTX;
    o->data = data;
    o->len = len;
    o->meta = dup_opt(meta, &ok);
    return keep(m, o, ok);
}

blkrt_status rt_module_keep_source(blkrt_module *m, const char *source, size_t len, const blkrt_source_options *opts) {
    rt_origin *o = calloc(1, sizeof *o);
    bool ok = o && (o->data = malloc(len ? len : 1)) != NULL;
    if (ok) {
        o->kind = RT_FROM_SOURCE;
        memcpy(o->data, source, len);
        o->len = len;
        o->path = dup_opt(opts->path, &ok);
        o->kernel = dup_opt(opts->kernel, &ok);
        o->cache_dir = dup_opt(opts->cache_dir, &ok);
        o->defines = calloc((size_t)opts->ndefines + 1, sizeof *o->defines);
        ok = ok && o->defines;
        for (int i = 0; ok && i < opts->ndefines; i++) {
            o->defines[i] = opts->defines[i];
            o->defines[i].name = dup_opt(opts->defines[i].name, &ok);
            if (ok) o->ndefines = i + 1;
        }
    }
    return keep(m, o, ok);
}

/* Load o's image or source on d, through the public loaders. */
static blkrt_status load_origin(const rt_origin *o, blkrt_device *d, blkrt_module **out) {
    if (o->kind == RT_FROM_PTX) return blkrt_module_load_ptx(d, o->data, o->len, out);
    if (o->kind == RT_FROM_CUBIN) return blkrt_module_load_cubin(d, o->data, o->len, o->meta, out);
    blkrt_source_options opts = {o->path, o->defines, o->ndefines, o->kernel, o->cache_dir};
    return blkrt_module_load_source(d, o->data, o->len, &opts, out);
}

blkrt_module *rt_module_new(blkrt_device *d) {
    blkrt_module *m = calloc(1, sizeof *m);
    if (!m) return NULL;
    m->magic = RT_MAGIC_MODULE;
    m->dev = d;
    pthread_mutex_init(&m->lock, NULL);
    pthread_mutex_init(&m->run_lock, NULL);
    pthread_mutex_init(&m->copies_lock, NULL);
    return m;
}

static void free_kernel_parts(blkrt_kernel *k) {
    k->magic = RT_MAGIC_DEAD;
    free(k->variants);
}

void rt_module_free(blkrt_module *m) {
    if (m->lazy) rt_lazy_free(m); /* walks the kernels' variant lists */
    for (int i = 0; i < m->nkernels; i++) free_kernel_parts(&m->kernels[i]);
    free(m->kernels);
    for (blkrt_kernel *k = m->raw, *n; k; k = n) {
        n = k->next_raw;
        free_kernel_parts(k);
        free((char *)k->name);
        free(k);
    }
    if (m->program && m->compiler && m->compiler->cpu_free) m->compiler->cpu_free(m->program);
    rt_meta_free(&m->meta);
    free(m->jit_log);
    origin_free(m->origin);
    pthread_mutex_destroy(&m->lock);
    pthread_mutex_destroy(&m->run_lock);
    pthread_mutex_destroy(&m->copies_lock);
    m->magic = RT_MAGIC_DEAD;
    free(m);
}

/* The CUfunction of one entry with its limits (GPU), or the device's limits
 * (CPU, where nothing is compiled per entry). */
blkrt_status rt_bind_function(blkrt_module *m, CUmodule cu_mod, rt_variant *v) {
    blkrt_device *d = m->dev;
    int default_dyn = RT_SHARED_DEFAULT_LIMIT;
    if (d->kind == BLKRT_KIND_CPU) {
        v->max_threads = d->info.max_threads_per_block;
        atomic_init(&v->dyn_limit, d->info.max_shared_optin);
        return BLKRT_OK;
    }
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

static int variant_rank(const rt_variant *v) { return 2 * v->nspec + (v->ntmaps > 0); }

blkrt_status rt_module_bind_kernels(blkrt_module *m) {
    const rt_meta *meta = &m->meta;
    if (meta->nkernels == 0) return BLKRT_OK;
    m->kernels = calloc((size_t)meta->nkernels, sizeof(blkrt_kernel));
    if (!m->kernels) return rt_err(BLKRT_ERR_OUT_OF_MEMORY, "out of memory");
    m->nkernels = meta->nkernels;
    for (int i = 0; i < meta->nkernels; i++) {
        const rt_meta_kernel *mk = &meta->kernels[i];
        blkrt_kernel *k = &m->kernels[i];
        k->magic = RT_MAGIC_KERNEL;
        k->mod = m;
        k->name = mk->name;
        k->checked = true;
        k->meta = mk;
        if (m->lazy) { /* variants come at their first launch (lazy.c) */
            k->lazy = true;
            for (int p = 0; p < mk->nparams; p++) {
                uint64_t bit = UINT64_C(1) << p;
                if (mk->nospec & bit) continue;
                if (mk->params[p].type == RT_T_PTR || rt_type_is_int(mk->params[p].type)) k->may_d16 |= bit;
                if (rt_type_is_int(mk->params[p].type)) k->may_eq1 |= bit;
            }
            continue;
        }
        k->variants = calloc((size_t)mk->nvariants, sizeof(rt_variant));
        if (!k->variants) return rt_err(BLKRT_ERR_OUT_OF_MEMORY, "out of memory");
        k->nvariants = mk->nvariants;
        for (int j = 0; j < mk->nvariants; j++) {
            const rt_meta_variant *mv = &mk->variants[j];
            rt_variant v = {.entry = mv->entry, .num_warps = mv->num_warps, .shared = mv->shared,
                            .meta_line = mv->line, .ntmaps = mv->ntmaps, .tmaps = mv->tmaps};
            for (int p = 0; p < mk->nparams; p++) {
                if (mv->spec[p] == RT_SPEC_D16) v.need_d16 |= UINT64_C(1) << p;
                if (mv->spec[p] == RT_SPEC_EQ1) v.need_eq1 |= UINT64_C(1) << p;
                v.nspec += mv->spec[p] != RT_SPEC_NONE;
            }
            /* insertion by specialisation, most first; of one count, a
             * variant with tensor maps first (the one without is its
             * fallback); other ties keep file order */
            int at = j;
            while (at > 0 && variant_rank(&k->variants[at - 1]) < variant_rank(&v)) {
                k->variants[at] = k->variants[at - 1];
                at--;
            }
            k->variants[at] = v;
        }
        for (int j = 0; j < k->nvariants; j++) {
            blkrt_status st = rt_bind_function(m, m->cu, &k->variants[j]);
            if (st) return st;
        }
    }
    return BLKRT_OK;
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

blkrt_status rt_load_image(blkrt_device *d, const void *image, const char *ptx_text, CUmodule *out, char **info_log) {
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
    blkrt_status st = r ? rt_cu_err(r, "cuModuleLoadDataEx") : rt_load_image(m->dev, image, ptx_text, &m->cu, &m->jit_log);
    rt_ctx_leave(m->dev, &sc);
    return st;
}

blkrt_status rt_module_finish_load(blkrt_module *m, blkrt_status st, blkrt_module **out) {
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

blkrt_status blkrt_module_load_ptx(blkrt_device *d, const char *ptx, size_t len, blkrt_module **out) {
    blkrt_status st = rt_check_device(d, "blkrt_module_load_ptx");
    if (st) return st;
    if (!out) return rt_err(BLKRT_ERR_INVALID_VALUE, "blkrt_module_load_ptx: out is NULL");
    *out = NULL;
    if (!ptx || len == 0) return rt_err(BLKRT_ERR_INVALID_VALUE, "blkrt_module_load_ptx: no PTX text");
    if (d->kind == BLKRT_KIND_CPU)
        return rt_err(BLKRT_ERR_UNSUPPORTED,
                      "blkrt_module_load_ptx: the CPU device runs .blk source (blkrt_module_load_source), not PTX");
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
    return rt_module_finish_load(m, st, out);
}

blkrt_status blkrt_module_load_cubin(blkrt_device *d, const void *image, size_t size, const char *meta,
                                     blkrt_module **out) {
    blkrt_status st = rt_check_device(d, "blkrt_module_load_cubin");
    if (st) return st;
    if (!out) return rt_err(BLKRT_ERR_INVALID_VALUE, "blkrt_module_load_cubin: out is NULL");
    *out = NULL;
    if (!image || size == 0) return rt_err(BLKRT_ERR_INVALID_VALUE, "blkrt_module_load_cubin: no image");
    if (d->kind == BLKRT_KIND_CPU)
        return rt_err(BLKRT_ERR_UNSUPPORTED, "blkrt_module_load_cubin: the CPU device runs .blk source, not cubin");
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
    return rt_module_finish_load(m, st, out);
}

static blkrt_status unload_one(blkrt_module *m) {
    blkrt_device *d = m->dev;
    if (m->lazy) {
        blkrt_status st = rt_lazy_unload(m);
        if (st) return st;
    }
    if (d->kind == BLKRT_KIND_GPU && m->cu) {
        rt_ctx_scope sc;
        CUresult r = rt_ctx_enter(d, &sc);
        if (r == RT_CUDA_SUCCESS) r = d->cu->cuModuleUnload(m->cu);
        rt_ctx_leave(d, &sc);
        if (r) return rt_cu_err(r, "cuModuleUnload");
    }
    rt_module_free(m);
    atomic_fetch_sub(&d->children, 1);
    return BLKRT_OK;
}

static const char *device_name(const blkrt_device *d, char *buf, size_t n) {
    if (d->kind == BLKRT_KIND_CPU) snprintf(buf, n, "the CPU device");
    else snprintf(buf, n, "GPU %d", d->info.ordinal);
    return buf;
}

/* Copies first (each on its own device), then the module itself. */
blkrt_status blkrt_module_unload(blkrt_module *m) {
    if (!RT_IS(m, RT_MAGIC_MODULE)) return rt_err(BLKRT_ERR_INVALID_HANDLE, "blkrt_module_unload: not a module handle");
    if (m->root) {
        char a[32], b[32];
        return rt_err(BLKRT_ERR_INVALID_VALUE,
                      "blkrt_module_unload: this module on %s is the copy of a module on %s "
                      "(blkrt_module_for_device): it is unloaded with that module",
                      device_name(m->dev, a, sizeof a), device_name(m->root->dev, b, sizeof b));
    }
    blkrt_status st = BLKRT_OK;
    pthread_mutex_lock(&m->copies_lock);
    while (m->copies && st == BLKRT_OK) {
        blkrt_module *c = m->copies, *next = c->next_copy;
        if ((st = unload_one(c)) == BLKRT_OK) m->copies = next;
    }
    pthread_mutex_unlock(&m->copies_lock);
    return st ? st : unload_one(m);
}

blkrt_status blkrt_module_for_device(blkrt_module *m, blkrt_device *d, blkrt_module **out) {
    if (!RT_IS(m, RT_MAGIC_MODULE))
        return rt_err(BLKRT_ERR_INVALID_HANDLE, "blkrt_module_for_device: not a module handle");
    blkrt_status st = rt_check_device(d, "blkrt_module_for_device");
    if (st) return st;
    if (!out) return rt_err(BLKRT_ERR_INVALID_VALUE, "blkrt_module_for_device: out is NULL");
    *out = NULL;
    blkrt_module *root = m->root ? m->root : m;
    if (root->dev == d) {
        *out = root;
        return BLKRT_OK;
    }
    if (!root->origin)
        return rt_err(BLKRT_ERR_UNSUPPORTED, "blkrt_module_for_device: this module keeps nothing to load again");
    pthread_mutex_lock(&root->copies_lock);
    blkrt_module *c = root->copies;
    while (c && c->dev != d) c = c->next_copy;
    if (!c && (st = load_origin(root->origin, d, &c)) == BLKRT_OK) {
        origin_free(c->origin); /* a copy asks its root */
        c->origin = NULL;
        c->root = root;
        c->next_copy = root->copies;
        root->copies = c;
    }
    pthread_mutex_unlock(&root->copies_lock);
    if (st) {
        char where[32], msg[RT_MSG_SIZE - 64];
        snprintf(msg, sizeof msg, "%s", blkrt_last_error());
        return rt_err(st, "blkrt_module_for_device: loading on %s: %s", device_name(d, where, sizeof where), msg);
    }
    *out = c;
    return BLKRT_OK;
}

blkrt_status blkrt_module_jit_log(blkrt_module *m, const char **log) {
    if (!RT_IS(m, RT_MAGIC_MODULE)) return rt_err(BLKRT_ERR_INVALID_HANDLE, "blkrt_module_jit_log: not a module handle");
    if (!log) return rt_err(BLKRT_ERR_INVALID_VALUE, "blkrt_module_jit_log: log is NULL");
    *log = m->lazy ? rt_lazy_jit_log(m) : m->jit_log ? m->jit_log : "";
    return BLKRT_OK;
}

static blkrt_status not_found(blkrt_module *m, const char *name) {
    char list[512] = "";
    size_t n = 0;
    for (int i = 0; i < m->nkernels && n < sizeof list - 1; i++)
        n += (size_t)snprintf(list + n, sizeof list - n, "%s%s", i ? ", " : "", m->kernels[i].name);
    if (m->nkernels == 0) snprintf(list, sizeof list, "none");
    return rt_err(BLKRT_ERR_NOT_FOUND, "module has no kernel named '%s' (blk-meta kernels: %s)", name, list);
}

blkrt_status blkrt_module_kernel(blkrt_module *m, const char *name, blkrt_kernel **out) {
    if (!RT_IS(m, RT_MAGIC_MODULE)) return rt_err(BLKRT_ERR_INVALID_HANDLE, "blkrt_module_kernel: not a module handle");
    if (!name || !out) return rt_err(BLKRT_ERR_INVALID_VALUE, "blkrt_module_kernel: name or out is NULL");
    *out = NULL;
    for (int i = 0; i < m->nkernels; i++)
        if (strcmp(m->kernels[i].name, name) == 0) {
            *out = &m->kernels[i];
            return BLKRT_OK;
        }
    if (m->dev->kind == BLKRT_KIND_CPU || m->lazy) return not_found(m, name); /* no PTX of its own */
    /* An entry without blk-meta: an unchecked kernel, made on first request. */
    pthread_mutex_lock(&m->lock);
    blkrt_kernel *k = m->raw;
    while (k && strcmp(k->name, name) != 0) k = k->next_raw;
    blkrt_status st = BLKRT_OK;
    if (!k) {
        k = calloc(1, sizeof *k);
        rt_variant *v = calloc(1, sizeof *v);
        char *kname = rt_strndup(name, strlen(name));
        if (!k || !v || !kname) {
            st = rt_err(BLKRT_ERR_OUT_OF_MEMORY, "out of memory");
        } else {
            v->entry = kname;
            rt_ctx_scope sc;
            CUresult r = rt_ctx_enter(m->dev, &sc);
            st = r ? rt_cu_err(r, "cuCtxPushCurrent") : rt_bind_function(m, m->cu, v);
            rt_ctx_leave(m->dev, &sc);
            if (st == BLKRT_ERR_NOT_FOUND) st = not_found(m, name);
        }
        if (st) {
            free(k);
            free(v);
            free(kname);
            k = NULL;
        } else {
            k->magic = RT_MAGIC_KERNEL;
            k->mod = m;
            k->name = kname;
            k->nvariants = 1;
            k->variants = v;
            k->next_raw = m->raw;
            m->raw = k;
        }
    }
    pthread_mutex_unlock(&m->lock);
    *out = k;
    return st;
}

static blkrt_status check_kernel(blkrt_kernel *k, const char *fn) {
    if (!RT_IS(k, RT_MAGIC_KERNEL)) return rt_err(BLKRT_ERR_INVALID_HANDLE, "%s: not a kernel handle", fn);
    return BLKRT_OK;
}

blkrt_status blkrt_kernel_get_info(blkrt_kernel *k, blkrt_kernel_info *out) {
    blkrt_status st = check_kernel(k, "blkrt_kernel_get_info");
    if (st) return st;
    if (!out) return rt_err(BLKRT_ERR_INVALID_VALUE, "blkrt_kernel_get_info: out is NULL");
    out->name = k->name;
    out->checked = k->checked;
    out->num_params = k->checked ? k->meta->nparams : 0;
    if (k->lazy) { /* the variants compiled so far; num_warps is the source's */
        const rt_variant *least = NULL;
        out->num_variants = 0;
        for (rt_lazy_variant *n = atomic_load_explicit(&k->compiled, memory_order_acquire); n; n = n->next) {
            out->num_variants++;
            if (!least || n->v.nspec <= least->nspec) least = &n->v;
        }
        out->num_warps = least ? least->num_warps : k->meta->variants[0].num_warps;
        out->shared_bytes = least ? least->shared : 0;
        return BLKRT_OK;
    }
    const rt_variant *least = &k->variants[k->nvariants - 1];
    out->num_variants = k->nvariants;
    out->num_warps = least->num_warps;
    out->shared_bytes = least->shared;
    return BLKRT_OK;
}

blkrt_status blkrt_kernel_param(blkrt_kernel *k, int i, const char **name, const char **type) {
    blkrt_status st = check_kernel(k, "blkrt_kernel_param");
    if (st) return st;
    if (!k->checked) return rt_err(BLKRT_ERR_UNSUPPORTED, "kernel '%s' has no blk-meta: its parameters are unknown", k->name);
    if (i < 0 || i >= k->meta->nparams)
        return rt_err(BLKRT_ERR_INVALID_VALUE, "kernel '%s' has %d parameters, no parameter %d", k->name,
                      k->meta->nparams, i);
    if (name) *name = k->meta->params[i].name;
    if (type) *type = k->meta->params[i].type_str;
    return BLKRT_OK;
}

blkrt_status blkrt_kernel_const_at(blkrt_kernel *k, int i, const char **name, const char **type) {
    blkrt_status st = check_kernel(k, "blkrt_kernel_const_at");
    if (st) return st;
    if (!k->checked || i < 0 || i >= k->meta->nconsts)
        return rt_err(BLKRT_ERR_NOT_FOUND, "kernel '%s' has no const %d", k->name, i);
    if (name) *name = k->meta->consts[i].name;
    if (type) *type = rt_type_name(k->meta->consts[i].type);
    return BLKRT_OK;
}

static blkrt_status find_const(blkrt_kernel *k, const char *name, const rt_const **out, const char *fn) {
    blkrt_status st = check_kernel(k, fn);
    if (st) return st;
    if (!name) return rt_err(BLKRT_ERR_INVALID_VALUE, "%s: name is NULL", fn);
    if (k->checked)
        for (int i = 0; i < k->meta->nconsts; i++)
            if (strcmp(k->meta->consts[i].name, name) == 0) {
                *out = &k->meta->consts[i];
                return BLKRT_OK;
            }
    return rt_err(BLKRT_ERR_NOT_FOUND, "kernel '%s' has no const '%s'", k->name, name);
}

blkrt_status blkrt_kernel_const_int(blkrt_kernel *k, const char *name, int64_t *value) {
    const rt_const *c = NULL;
    blkrt_status st = find_const(k, name, &c, "blkrt_kernel_const_int");
    if (st) return st;
    if (rt_type_is_float(c->type))
        return rt_err(BLKRT_ERR_INVALID_VALUE, "kernel '%s': const '%s' is %s: use blkrt_kernel_const_float", k->name,
                      name, rt_type_name(c->type));
    if (value) *value = c->ival;
    return BLKRT_OK;
}

blkrt_status blkrt_kernel_const_float(blkrt_kernel *k, const char *name, double *value) {
    const rt_const *c = NULL;
    blkrt_status st = find_const(k, name, &c, "blkrt_kernel_const_float");
    if (st) return st;
    if (value) *value = c->fval;
    return BLKRT_OK;
}

/* module.c — modules, kernels and their variants, over the device's table.
 *
 * Loading does all the work a launch would otherwise repeat: the blk-meta
 * lines are parsed (before the driver sees the image, so a bad line is
 * reported even where there is no GPU), variants are ordered most
 * specialised first and each is bound by the device (d->ops->bind_function:
 * on a GPU its CUfunction, limits and shared-memory opt-in, gpu_module.c).
 * The loaders themselves are the device's (load_ptx, load_cubin,
 * load_source). After loading, a module's kernels are read-only, so
 * launches from many threads need no lock.
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
    m->dev->ops->release(m); /* first: a lazy module's walks the kernels' variant lists */
    for (int i = 0; i < m->nkernels; i++) free_kernel_parts(&m->kernels[i]);
    free(m->kernels);
    for (blkrt_kernel *k = m->raw, *n; k; k = n) {
        n = k->next_raw;
        free_kernel_parts(k);
        free((char *)k->name);
        free(k);
    }
    rt_meta_free(&m->meta);
    free(m->jit_log);
    origin_free(m->origin);
    pthread_mutex_destroy(&m->lock);
    pthread_mutex_destroy(&m->run_lock);
    pthread_mutex_destroy(&m->copies_lock);
    m->magic = RT_MAGIC_DEAD;
    free(m);
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
                            .meta_line = mv->line, .ntmaps = mv->ntmaps, .tmaps = mv->tmaps,
                            .cluster = mv->cluster,
                            .cluster_required = mv->cluster_required};
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
            blkrt_status st = m->dev->ops->bind_function(m, m->cu, &k->variants[j]);
            if (st) return st;
        }
    }
    return BLKRT_OK;
}

blkrt_status blkrt_module_load_ptx(blkrt_device *d, const char *ptx, size_t len, blkrt_module **out) {
    blkrt_status st = rt_check_device(d, "blkrt_module_load_ptx");
    if (st) return st;
    if (!out) return rt_err(BLKRT_ERR_INVALID_VALUE, "blkrt_module_load_ptx: out is NULL");
    *out = NULL;
    if (!ptx || len == 0) return rt_err(BLKRT_ERR_INVALID_VALUE, "blkrt_module_load_ptx: no PTX text");
    return d->ops->load_ptx(d, ptx, len, out);
}

blkrt_status blkrt_module_load_cubin(blkrt_device *d, const void *image, size_t size, const char *meta,
                                     blkrt_module **out) {
    blkrt_status st = rt_check_device(d, "blkrt_module_load_cubin");
    if (st) return st;
    if (!out) return rt_err(BLKRT_ERR_INVALID_VALUE, "blkrt_module_load_cubin: out is NULL");
    *out = NULL;
    if (!image || size == 0) return rt_err(BLKRT_ERR_INVALID_VALUE, "blkrt_module_load_cubin: no image");
    return d->ops->load_cubin(d, image, size, meta, out);
}

static blkrt_status unload_one(blkrt_module *m) {
    blkrt_device *d = m->dev;
    blkrt_status st = d->ops->unload(m);
    if (st) return st;
    rt_module_free(m);
    atomic_fetch_sub(&d->children, 1);
    return BLKRT_OK;
}

/* Copies first (each on its own device), then the module itself. */
blkrt_status blkrt_module_unload(blkrt_module *m) {
    if (!RT_IS(m, RT_MAGIC_MODULE)) return rt_err(BLKRT_ERR_INVALID_HANDLE, "blkrt_module_unload: not a module handle");
    if (m->root) {
        char a[32], b[32];
        return rt_err(BLKRT_ERR_INVALID_VALUE,
                      "blkrt_module_unload: this module on %s is the copy of a module on %s "
                      "(blkrt_module_for_device): it is unloaded with that module",
                      m->dev->ops->where(m->dev, a, sizeof a), m->root->dev->ops->where(m->root->dev, b, sizeof b));
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
        return rt_err(st, "blkrt_module_for_device: loading on %s: %s", d->ops->where(d, where, sizeof where), msg);
    }
    *out = c;
    return BLKRT_OK;
}

blkrt_status blkrt_module_jit_log(blkrt_module *m, const char **log) {
    if (!RT_IS(m, RT_MAGIC_MODULE)) return rt_err(BLKRT_ERR_INVALID_HANDLE, "blkrt_module_jit_log: not a module handle");
    if (!log) return rt_err(BLKRT_ERR_INVALID_VALUE, "blkrt_module_jit_log: log is NULL");
    *log = m->dev->ops->jit_log(m);
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
    /* no driver module of its own (the CPU device's program, a lazy
     * module's variants): no entries beyond blk-meta's */
    if (!m->cu) return not_found(m, name);
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
            st = m->dev->ops->bind_entry(m, v);
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

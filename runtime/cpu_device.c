/* cpu_device.c — the CPU interpreter as a device.
 *
 * BLKRT_DEVICE_CPU behaves like a GPU through the same API, so a program can
 * run where there is no GPU: its memory is host memory (a blkrt_ptr is a host
 * address), its modules are built from .blk source by the registered
 * compiler (the interpreter of libblkc, through blkrt_jit), and a launch runs
 * the whole grid on the calling thread before it returns. Launches are
 * checked exactly as on a GPU (same blk-meta, same limits), so a launch that
 * the CPU accepts is one a GPU accepts.
 *
 * The allocation table lets copies be bounds-checked and gives the
 * interpreter the extent of every pointer argument, so an out-of-bounds
 * access in a kernel is reported (BLKRT_ERR_LAUNCH_FAILED) with the
 * interpreter's located message. Pointers that are not blkrt allocations are
 * passed unchecked, so host arrays can be used directly.
 *
 * A launch has the interpreter's step budget (blkrt_device_set_step_limit,
 * passed to the program through the compiler's cpu_set_steps), so an endless
 * loop fails the launch with a located message instead of hanging the
 * calling thread forever.
 *
 * Work runs when it is issued, so synchronisation has nothing to wait for,
 * a stream is a token (and, while capturing, a list of launches that a
 * graph replays in order) and an event records the time it was reached.
 * All of it is the table rt_cpu_ops at the end of this file.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rt.h"

typedef struct {
    uintptr_t base;
    size_t size;
} cpu_alloc;

struct rt_cpu_mem {
    pthread_mutex_t lock;
    cpu_alloc *v;       /* sorted by base */
    int n, cap;
    bool steps_set;     /* blkrt_device_set_step_limit was called (under lock) */
    uint64_t steps;
};

struct rt_cpu_launch {
    rt_cpu_launch *next;
    blkrt_kernel *kernel;
    const rt_variant *variant;
    uint32_t grid[3];
    int nargs;
    blkrt_arg args[];
};

static blkrt_status cpu_open(blkrt_device *d, int ordinal) {
    (void)ordinal;
    d->cpu = calloc(1, sizeof *d->cpu);
    if (!d->cpu) return rt_err(BLKRT_ERR_OUT_OF_MEMORY, "out of memory");
    pthread_mutex_init(&d->cpu->lock, NULL);
    blkrt_device_info *in = &d->info;
    in->kind = BLKRT_KIND_CPU;
    in->ordinal = BLKRT_DEVICE_CPU;
    snprintf(in->name, sizeof in->name, "blk CPU interpreter");
    snprintf(in->arch, sizeof in->arch, "cpu");
    in->sm_count = 1;
    in->warp_size = 32;
    /* GPU-like limits, so that what runs here also launches on a GPU. */
    in->max_threads_per_block = 1024;
    in->max_grid[0] = 0x7fffffff;
    in->max_grid[1] = in->max_grid[2] = 65535;
    in->max_shared_per_block = RT_SHARED_DEFAULT_LIMIT;
    in->max_shared_optin = 227 * 1024;
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    in->total_memory = pages > 0 && page > 0 ? (size_t)pages * (size_t)page : 0;
    d->max_block[0] = d->max_block[1] = 1024;
    d->max_block[2] = 64;
    return BLKRT_OK;
}

static blkrt_status cpu_close(blkrt_device *d) {
    rt_cpu_mem *m = d->cpu;
    for (int i = 0; i < m->n; i++) free((void *)m->v[i].base);
    free(m->v);
    pthread_mutex_destroy(&m->lock);
    free(m);
    d->cpu = NULL;
    return BLKRT_OK;
}

/* Index of the first allocation with base > p. */
static int upper(const rt_cpu_mem *m, uintptr_t p) {
    int lo = 0, hi = m->n;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (m->v[mid].base <= p) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

static blkrt_status cpu_malloc(blkrt_device *d, size_t bytes, blkrt_ptr *out) {
    /* 256-byte aligned like cudaMalloc, so d16 specialisations hold alike. */
    if (bytes > SIZE_MAX - 255) return rt_err(BLKRT_ERR_OUT_OF_MEMORY, "blkrt_malloc: %zu bytes is too large", bytes);
    size_t rounded = (bytes + 255) & ~(size_t)255;
    void *p = aligned_alloc(256, rounded);
    if (!p) return rt_err(BLKRT_ERR_OUT_OF_MEMORY, "blkrt_malloc: out of host memory allocating %zu bytes", bytes);
    memset(p, 0, rounded);
    rt_cpu_mem *m = d->cpu;
    pthread_mutex_lock(&m->lock);
    if (m->n == m->cap) {
        int cap = m->cap ? m->cap * 2 : 64;
        cpu_alloc *v = realloc(m->v, sizeof *v * (size_t)cap);
        if (!v) {
            pthread_mutex_unlock(&m->lock);
            free(p);
            return rt_err(BLKRT_ERR_OUT_OF_MEMORY, "out of memory");
        }
        m->v = v;
        m->cap = cap;
    }
    int at = upper(m, (uintptr_t)p);
    memmove(&m->v[at + 1], &m->v[at], sizeof(cpu_alloc) * (size_t)(m->n - at));
    m->v[at] = (cpu_alloc){(uintptr_t)p, bytes};
    m->n++;
    pthread_mutex_unlock(&m->lock);
    *out = (blkrt_ptr)(uintptr_t)p;
    return BLKRT_OK;
}

static blkrt_status cpu_free(blkrt_device *d, blkrt_ptr p) {
    rt_cpu_mem *m = d->cpu;
    pthread_mutex_lock(&m->lock);
    int at = upper(m, (uintptr_t)p) - 1;
    if (at < 0 || m->v[at].base != (uintptr_t)p) {
        pthread_mutex_unlock(&m->lock);
        return rt_err(BLKRT_ERR_INVALID_VALUE, "blkrt_free: 0x%llx is not an allocation of the CPU device",
                      (unsigned long long)p);
    }
    memmove(&m->v[at], &m->v[at + 1], sizeof(cpu_alloc) * (size_t)(m->n - at - 1));
    m->n--;
    pthread_mutex_unlock(&m->lock);
    free((void *)(uintptr_t)p);
    return BLKRT_OK;
}

/* Bytes from p to the end of its allocation; 0 if p is in none. */
static size_t extent(blkrt_device *d, blkrt_ptr p) {
    rt_cpu_mem *m = d->cpu;
    pthread_mutex_lock(&m->lock);
    int at = upper(m, (uintptr_t)p) - 1;
    size_t n = 0;
    if (at >= 0 && p - m->v[at].base < m->v[at].size) n = m->v[at].size - (size_t)(p - m->v[at].base);
    pthread_mutex_unlock(&m->lock);
    return n;
}

static blkrt_status cpu_range(blkrt_device *d, blkrt_ptr p, size_t bytes, void **host, const char *fn) {
    if (extent(d, p) < bytes)
        return rt_err(BLKRT_ERR_INVALID_VALUE,
                      "%s: [0x%llx, +%zu bytes) is not inside an allocation of the CPU device", fn,
                      (unsigned long long)p, bytes);
    *host = (void *)(uintptr_t)p;
    return BLKRT_OK;
}

/* The cache directory is not used: an interpreter program is not text. */
static blkrt_status cpu_load_source(blkrt_device *d, const blkrt_compiler *c, const blkrt_compile_request *req,
                                    const char *cache_dir, blkrt_module **out) {
    (void)cache_dir;
    if (!c->cpu_build || !c->cpu_run)
        return rt_err(BLKRT_ERR_NO_COMPILER, "the registered compiler cannot build for the CPU interpreter");
    blkrt_compile_result res = {0};
    blkrt_status st = c->cpu_build(req, &res);
    blkrt_module *m = NULL;
    if (st) {
        rt_err(st, "%s: compiling for the CPU interpreter failed%s%s", req->path, res.log ? ":\n" : "",
               res.log ? res.log : "");
    } else if (!res.program) {
        st = rt_err(BLKRT_ERR_COMPILE, "%s: the compiler returned no program", req->path);
    } else if (!(m = rt_module_new(d))) {
        st = rt_err(BLKRT_ERR_OUT_OF_MEMORY, "out of memory");
    } else {
        m->compiler = c;
        m->program = res.program;
        res.program = NULL;
        st = rt_meta_parse(res.text ? res.text : "", res.len, &m->meta);
        if (st == BLKRT_OK) st = rt_module_bind_kernels(m);
        if (st) {
            rt_module_free(m);
            m = NULL;
        }
    }
    if (res.program && c->cpu_free) c->cpu_free(res.program);
    rt_free_result(&res);
    if (st) return st;
    atomic_fetch_add(&d->children, 1);
    *out = m;
    return BLKRT_OK;
}

static blkrt_status run(blkrt_kernel *k, const rt_variant *v, const uint32_t grid[3], const blkrt_arg *args,
                        int nargs) {
    blkrt_device *d = k->mod->dev;
    blkrt_cpu_arg cargs[RT_MAX_PARAMS];
    for (int i = 0; i < nargs; i++) {
        cargs[i] = (blkrt_cpu_arg){.kind = args[i].kind};
        switch (args[i].kind) {
        case BLKRT_ARG_PTR:
            cargs[i].ptr = (void *)(uintptr_t)args[i].v.ptr;
            cargs[i].size = extent(d, args[i].v.ptr);
            break;
        case BLKRT_ARG_INT: cargs[i].i = args[i].v.i; break;
        case BLKRT_ARG_FLOAT: cargs[i].f = args[i].v.f; break;
        }
    }
    blkrt_module *m = k->mod;
    pthread_mutex_lock(&d->cpu->lock);
    bool set = d->cpu->steps_set;
    uint64_t steps = d->cpu->steps;
    pthread_mutex_unlock(&d->cpu->lock);
    if (set && !m->compiler->cpu_set_steps)
        return rt_err(BLKRT_ERR_UNSUPPORTED, "kernel '%s': the registered compiler has no step budget "
                      "(blkrt_device_set_step_limit)", k->name);
    char *log = NULL;
    pthread_mutex_lock(&m->run_lock);
    if (set) m->compiler->cpu_set_steps(m->program, steps);
    blkrt_status st = m->compiler->cpu_run(m->program, v->entry, grid, cargs, nargs, &log);
    pthread_mutex_unlock(&m->run_lock);
    if (st) {
        rt_err(st == BLKRT_ERR_OUT_OF_MEMORY ? st : BLKRT_ERR_LAUNCH_FAILED,
               "kernel '%s' failed on the CPU interpreter%s%s", k->name, log ? ":\n" : "", log ? log : "");
        st = st == BLKRT_ERR_OUT_OF_MEMORY ? st : BLKRT_ERR_LAUNCH_FAILED;
    }
    rt_libc_free(log); /* the hook's (libc) */
    return st;
}

static blkrt_status cpu_set_step_limit(blkrt_device *d, uint64_t steps) {
    pthread_mutex_lock(&d->cpu->lock);
    d->cpu->steps_set = true;
    d->cpu->steps = steps;
    pthread_mutex_unlock(&d->cpu->lock);
    return BLKRT_OK;
}

/* A launch into a capture is recorded for the graph; any other runs now. */
static blkrt_status launch_or_record(blkrt_kernel *k, const rt_variant *v, const uint32_t grid[3],
                                     const blkrt_arg *args, int nargs, blkrt_stream *s) {
    if (s && s->capturing) {
        rt_cpu_launch *l = malloc(sizeof *l + sizeof(blkrt_arg) * (size_t)nargs);
        if (!l) return rt_err(BLKRT_ERR_OUT_OF_MEMORY, "out of memory");
        l->next = NULL;
        l->kernel = k;
        l->variant = v;
        memcpy(l->grid, grid, sizeof l->grid);
        l->nargs = nargs;
        if (nargs) memcpy(l->args, args, sizeof(blkrt_arg) * (size_t)nargs);
        if (s->cap_last) s->cap_last->next = l;
        else s->cap_first = l;
        s->cap_last = l;
        return BLKRT_OK;
    }
    return run(k, v, grid, args, nargs);
}

static blkrt_status replay(rt_cpu_launch *first) {
    for (rt_cpu_launch *l = first; l; l = l->next) {
        blkrt_status st = run(l->kernel, l->variant, l->grid, l->args, l->nargs);
        if (st) return st;
    }
    return BLKRT_OK;
}

static void free_launches(rt_cpu_launch *first) {
    for (rt_cpu_launch *l = first, *n; l; l = n) {
        n = l->next;
        free(l);
    }
}

/* ---- the rest of the table ---- */

static blkrt_status cpu_copy(blkrt_device *d, rt_copy_kind kind, bool async, blkrt_ptr dptr, void *host,
                             blkrt_ptr sptr, uint8_t value, size_t bytes, blkrt_stream *s, CUstream cs,
                             const char *fn) {
    (void)cs;
    blkrt_status st;
    if (async && s && s->capturing)
        return rt_err(BLKRT_ERR_UNSUPPORTED, "%s: only launches can be captured on the CPU device", fn);
    /* the device ranges it touches (the destination checked first); the
     * host side is `host` */
    void *dst = host, *src = host;
    if (kind != RT_COPY_DTOH && (st = cpu_range(d, dptr, bytes, &dst, fn))) return st;
    if ((kind == RT_COPY_DTOH || kind == RT_COPY_DTOD) && (st = cpu_range(d, sptr, bytes, &src, fn))) return st;
    if (kind == RT_MEMSET) memset(dst, value, bytes);
    else memmove(dst, src, bytes);
    return BLKRT_OK;
}

static blkrt_status nothing_to_wait_for(blkrt_device *d) {
    (void)d;
    return BLKRT_OK;
}

static blkrt_status cpu_synchronize_timeout(blkrt_device *d, uint32_t timeout_ms, const char *fn) {
    (void)d, (void)timeout_ms, (void)fn;
    return BLKRT_OK;
}

static const char *cpu_where(const blkrt_device *d, char *buf, size_t n) {
    (void)d;
    snprintf(buf, n, "the CPU device");
    return buf;
}

/* No cache size to ask: larger than any CPU's last level. */
static size_t cpu_flush_bytes(blkrt_device *d) {
    (void)d;
    return (size_t)32 << 20;
}

static blkrt_status cpu_load_ptx(blkrt_device *d, const char *ptx, size_t len, blkrt_module **out) {
    (void)d, (void)ptx, (void)len, (void)out;
    return rt_err(BLKRT_ERR_UNSUPPORTED,
                  "blkrt_module_load_ptx: the CPU device runs .blk source (blkrt_module_load_source), not PTX");
}

static blkrt_status cpu_load_cubin(blkrt_device *d, const void *image, size_t size, const char *meta,
                                   blkrt_module **out) {
    (void)d, (void)image, (void)size, (void)meta, (void)out;
    return rt_err(BLKRT_ERR_UNSUPPORTED, "blkrt_module_load_cubin: the CPU device runs .blk source, not cubin");
}

/* Nothing is compiled per entry: a variant has the device's limits. */
static blkrt_status cpu_bind_function(blkrt_module *m, CUmodule cu, rt_variant *v) {
    (void)cu;
    blkrt_device *d = m->dev;
    v->max_threads = d->info.max_threads_per_block;
    atomic_init(&v->dyn_limit, d->info.max_shared_optin);
    return BLKRT_OK;
}

static blkrt_status cpu_bind_entry(blkrt_module *m, rt_variant *v) { return cpu_bind_function(m, NULL, v); }

static blkrt_status cpu_unload(blkrt_module *m) {
    (void)m;
    return BLKRT_OK;
}

static void cpu_release(blkrt_module *m) {
    if (m->program && m->compiler && m->compiler->cpu_free) m->compiler->cpu_free(m->program);
    m->program = NULL;
}

static const char *cpu_jit_log(blkrt_module *m) {
    (void)m;
    return "";
}

static blkrt_status cpu_launch(blkrt_kernel *k, const rt_variant *v, const uint32_t grid[3], const blkrt_arg *args,
                               int nargs, void **params, const rt_tmap_args *ta, blkrt_stream *s, CUstream cs,
                               bool prof) {
    (void)params, (void)ta, (void)cs;
    if (!prof) return launch_or_record(k, v, grid, args, nargs, s);
    rt_prof_launch pl;
    rt_prof_begin(&pl, k, v, s, NULL);
    blkrt_status st = launch_or_record(k, v, grid, args, nargs, s);
    rt_prof_end(&pl, k, s, NULL, st == BLKRT_OK);
    return st;
}

static void cpu_timer_start(blkrt_device *d, rt_prof_launch *p, CUstream cs) {
    (void)d, (void)cs;
    p->t0 = rt_now_ms();
    p->timed = true;
}

static blkrt_status cpu_stream_create(blkrt_stream *s) {
    (void)s;
    return BLKRT_OK;
}

static blkrt_status cpu_stream_wrap(blkrt_device *d, uint64_t custream, blkrt_stream **out) {
    (void)d, (void)custream, (void)out;
    return rt_err(BLKRT_ERR_UNSUPPORTED, "blkrt_stream_wrap: the CPU device has no CUDA streams");
}

static blkrt_status cpu_stream_destroy(blkrt_stream *s) {
    free_launches(s->cap_first);
    return BLKRT_OK;
}

static blkrt_status cpu_stream_synchronize(blkrt_stream *s) {
    (void)s;
    return BLKRT_OK;
}

static blkrt_status cpu_stream_synchronize_timeout(blkrt_device *d, CUstream cs, uint32_t timeout_ms, const char *fn) {
    (void)d, (void)cs, (void)timeout_ms, (void)fn;
    return BLKRT_OK;
}

static blkrt_status cpu_event_nothing(blkrt_event *e) {
    (void)e;
    return BLKRT_OK;
}

static blkrt_status cpu_event_record(blkrt_event *e, CUstream cs) {
    (void)cs;
    e->cpu_ms = rt_now_ms();
    return BLKRT_OK;
}

static blkrt_status cpu_event_elapsed_ms(blkrt_event *start, blkrt_event *end, float *ms) {
    if (start->cpu_ms < 0 || end->cpu_ms < 0)
        return rt_err(BLKRT_ERR_INVALID_VALUE, "blkrt_event_elapsed_ms: an event was never recorded");
    *ms = (float)(end->cpu_ms - start->cpu_ms);
    return BLKRT_OK;
}

static blkrt_status cpu_capture_begin(blkrt_stream *s) {
    if (s->capturing) return rt_err(BLKRT_ERR_INVALID_VALUE, "blkrt_graph_begin_capture: the stream is already capturing");
    s->capturing = true;
    return BLKRT_OK;
}

static blkrt_status cpu_capture_end(blkrt_stream *s, blkrt_graph *g) {
    if (!s->capturing) return rt_err(BLKRT_ERR_INVALID_VALUE, "blkrt_graph_end_capture: the stream is not capturing");
    s->capturing = false;
    g->cpu_first = s->cap_first;
    s->cap_first = s->cap_last = NULL;
    return BLKRT_OK;
}

static void cpu_capture_abandon(blkrt_stream *s) {
    free_launches(s->cap_first);
    s->cap_first = s->cap_last = NULL;
    s->capturing = false;
}

static blkrt_status cpu_graph_launch(blkrt_graph *g, blkrt_stream *s, CUstream cs) {
    (void)s, (void)cs;
    return replay(g->cpu_first);
}

static blkrt_status cpu_graph_destroy(blkrt_graph *g) {
    free_launches(g->cpu_first);
    return BLKRT_OK;
}

/* The interpreter runs one program at a time, on the launching thread. */
static blkrt_status cpu_max_programs(blkrt_kernel *k, const rt_variant *v, uint32_t *out) {
    (void)k, (void)v;
    *out = 1;
    return BLKRT_OK;
}

const rt_device_ops rt_cpu_ops = {
    .open = cpu_open,
    .close = cpu_close,
    .synchronize = nothing_to_wait_for,
    .synchronize_timeout = cpu_synchronize_timeout,
    .set_step_limit = cpu_set_step_limit,
    .where = cpu_where,
    .flush_bytes = cpu_flush_bytes,
    .host_memory = true,
    .mem_alloc = cpu_malloc,
    .mem_free = cpu_free,
    .copy = cpu_copy,
    .load_ptx = cpu_load_ptx,
    .load_cubin = cpu_load_cubin,
    .load_source = cpu_load_source,
    .bind_function = cpu_bind_function,
    .bind_entry = cpu_bind_entry,
    .unload = cpu_unload,
    .release = cpu_release,
    .jit_log = cpu_jit_log,
    .launch = cpu_launch,
    .launch_raw = NULL, /* checked kernels only */
    .max_programs = cpu_max_programs,
    .timer_start = cpu_timer_start,
    .stream_create = cpu_stream_create,
    .stream_wrap = cpu_stream_wrap,
    .stream_destroy = cpu_stream_destroy,
    .stream_synchronize = cpu_stream_synchronize,
    .stream_synchronize_timeout = cpu_stream_synchronize_timeout,
    .event_create = cpu_event_nothing,
    .event_destroy = cpu_event_nothing,
    .event_record = cpu_event_record,
    .event_synchronize = cpu_event_nothing,
    .event_elapsed_ms = cpu_event_elapsed_ms,
    .capture_begin = cpu_capture_begin,
    .capture_end = cpu_capture_end,
    .capture_abandon = cpu_capture_abandon,
    .graph_launch = cpu_graph_launch,
    .graph_destroy = cpu_graph_destroy,
};

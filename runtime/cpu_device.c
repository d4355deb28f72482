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

blkrt_status rt_cpu_open(blkrt_device *d) {
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

void rt_cpu_close(blkrt_device *d) {
    rt_cpu_mem *m = d->cpu;
    for (int i = 0; i < m->n; i++) free((void *)m->v[i].base);
    free(m->v);
    pthread_mutex_destroy(&m->lock);
    free(m);
    d->cpu = NULL;
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

blkrt_status rt_cpu_malloc(blkrt_device *d, size_t bytes, blkrt_ptr *out) {
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

blkrt_status rt_cpu_free(blkrt_device *d, blkrt_ptr p) {
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

blkrt_status rt_cpu_range(blkrt_device *d, blkrt_ptr p, size_t bytes, void **host, const char *fn) {
    if (extent(d, p) < bytes)
        return rt_err(BLKRT_ERR_INVALID_VALUE,
                      "%s: [0x%llx, +%zu bytes) is not inside an allocation of the CPU device", fn,
                      (unsigned long long)p, bytes);
    *host = (void *)(uintptr_t)p;
    return BLKRT_OK;
}

blkrt_status rt_cpu_load_source(blkrt_device *d, const blkrt_compiler *c, const blkrt_compile_request *req,
                                blkrt_module **out) {
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

blkrt_status blkrt_device_set_step_limit(blkrt_device *d, uint64_t steps) {
    blkrt_status st = rt_check_device(d, "blkrt_device_set_step_limit");
    if (st) return st;
    if (d->kind != BLKRT_KIND_CPU)
        return rt_err(BLKRT_ERR_UNSUPPORTED, "blkrt_device_set_step_limit: only the CPU device has a step budget "
                      "(on a GPU: blkrt_stream_synchronize_timeout)");
    pthread_mutex_lock(&d->cpu->lock);
    d->cpu->steps_set = true;
    d->cpu->steps = steps;
    pthread_mutex_unlock(&d->cpu->lock);
    return BLKRT_OK;
}

blkrt_status rt_cpu_launch_kernel(blkrt_kernel *k, const rt_variant *v, const uint32_t grid[3], const blkrt_arg *args,
                                  int nargs, blkrt_stream *s) {
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

blkrt_status rt_cpu_replay(rt_cpu_launch *first) {
    for (rt_cpu_launch *l = first; l; l = l->next) {
        blkrt_status st = run(l->kernel, l->variant, l->grid, l->args, l->nargs);
        if (st) return st;
    }
    return BLKRT_OK;
}

void rt_cpu_free_launches(rt_cpu_launch *first) {
    for (rt_cpu_launch *l = first, *n; l; l = n) {
        n = l->next;
        free(l);
    }
}

/* profile.c — NVTX ranges, the light profiler (BLK_PROFILE) and blkrt_bench.
 *
 * NVTX. Nsight Systems and Nsight Compute attach to a process through the
 * NVTX injection protocol: they set NVTX_INJECTION64_PATH to their
 * injection library, and whatever NVTX implementation the program carries
 * dlopens it and calls its InitializeInjectionNvtx2 with a "get export
 * table" function. Through that table the tool asks for the function table
 * of each NVTX module and writes its own entry points into the slots. This
 * is what the header-only NVTX3 (CUDA 12 and 13; libnvToolsExt.so is gone
 * from CUDA 13) does inside every program that uses it; libblkrt does the
 * same here for the two calls it needs (nvtxRangePushA / nvtxRangePop of the
 * core module), with the table layout of nvtx3/nvtxDetail/nvtxTypes.h
 * (NVIDIA/NVTX, Apache-2.0 WITH LLVM-exception). Without the variable
 * nothing is loaded and rt_prof_active stays 0.
 *
 * The profiler. Each timed GPU launch gets two events recorded around it on
 * its stream; the pair waits in a pending list until the rows are asked for,
 * the list grows past RT_PROF_PENDING (the oldest half is synchronised and
 * read), or its device closes. CPU-device launches run synchronously: their
 * wall time is a sample at once. One lock guards everything; the launch
 * path takes it only while profiling.
 */
#include <dlfcn.h>
#include <float.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rt.h"

atomic_int rt_prof_active;

enum { PROF_NVTX = 1, PROF_TIME = 2 };
#define RT_PROF_PENDING 512

/* ---- NVTX (the injection protocol) ---- */

typedef void (*nvtx_fn)(void);
typedef int (*nvtx_push_fn)(const char *message);
typedef int (*nvtx_pop_fn)(void);
typedef const void *(*nvtx_get_export_table_fn)(uint32_t id);
typedef int (*nvtx_init_fn)(nvtx_get_export_table_fn get);

/* Module ids, their function counts (index 0 is invalid) and the export
 * table ids: nvtxTypes.h. Every module gets a table, so a tool that asks for
 * CUDA or SYNC names finds slots (which nothing here calls). */
enum { NVTX_MODULES = 7, NVTX_CORE = 1, NVTX_CORE_PUSH_A = 9, NVTX_CORE_POP = 11 };
static const unsigned nvtx_module_size[NVTX_MODULES] = {0, 16, 9, 15, 7, 16, 7};
enum { NVTX_ETID_CALLBACKS = 1, NVTX_ETID_VERSIONINFO = 3, NVTX_VERSION = 3 };

static nvtx_fn nvtx_slots[NVTX_MODULES][16];
static nvtx_fn *nvtx_tables[NVTX_MODULES][17]; /* pointers to the slots; [0] and [size] NULL */

static int nvtx_get_module_table(int module, nvtx_fn ***out_table, unsigned *out_size) {
    if (module <= 0 || module >= NVTX_MODULES) return 0;
    if (out_size) *out_size = nvtx_module_size[module];
    if (out_table) *out_table = nvtx_tables[module];
    return 1;
}

static void nvtx_set_version(uint32_t version) { (void)version; }

static const struct {
    size_t struct_size;
    int (*get_module_table)(int module, nvtx_fn ***out_table, unsigned *out_size);
} nvtx_callbacks = {sizeof nvtx_callbacks, nvtx_get_module_table};

static const struct {
    size_t struct_size;
    uint32_t version, reserved;
    void (*set_injection_version)(uint32_t version);
} nvtx_version_info = {sizeof nvtx_version_info, NVTX_VERSION, 0, nvtx_set_version};

static const void *nvtx_get_export_table(uint32_t id) {
    if (id == NVTX_ETID_CALLBACKS) return &nvtx_callbacks;
    if (id == NVTX_ETID_VERSIONINFO) return &nvtx_version_info;
    return NULL;
}

static nvtx_push_fn nvtx_push;
static nvtx_pop_fn nvtx_pop;

/* True when a tool attached and filled both calls we use. A tool that fails
 * to load is silent, as NVTX's own loader is: the program runs unmarked. */
static bool nvtx_attach(void) {
    const char *path = getenv(sizeof(void *) == 4 ? "NVTX_INJECTION32_PATH" : "NVTX_INJECTION64_PATH");
    if (!path || !*path) return false;
    for (int m = 1; m < NVTX_MODULES; m++)
        for (unsigned i = 1; i < nvtx_module_size[m]; i++) nvtx_tables[m][i] = &nvtx_slots[m][i];
    void *lib = dlopen(path, RTLD_LAZY);
    if (!lib) return false;
    nvtx_init_fn init;
    *(void **)&init = dlsym(lib, "InitializeInjectionNvtx2");
    if (!init || !init(nvtx_get_export_table)) {
        dlclose(lib);
        return false;
    }
    nvtx_push = (nvtx_push_fn)nvtx_slots[NVTX_CORE][NVTX_CORE_PUSH_A];
    nvtx_pop = (nvtx_pop_fn)nvtx_slots[NVTX_CORE][NVTX_CORE_POP];
    return nvtx_push && nvtx_pop;
}

/* ---- the profiler's state ---- */

typedef struct {
    char label[232];
    int cfg;                 /* where the config starts in label */
    int device;
    uint64_t launches;
    double total_ms, bytes, flops;
    float *ms;               /* every sample (the median) */
    size_t cap;
} prof_row;

typedef struct {
    blkrt_device *dev;
    int row;
    CUevent ev[2];
    double bytes, flops;     /* the launch's stated work, added with its time */
} prof_pending;

static struct {
    pthread_mutex_t lock;
    pthread_once_t once;
    bool print_at_exit;
    prof_row *rows;
    int nrows, caprows;
    prof_pending *pend;
    int npend, cappend;
} P = {.lock = PTHREAD_MUTEX_INITIALIZER, .once = PTHREAD_ONCE_INIT};

/* The row of label on device, made if new; -1 when out of memory (the
 * sample is dropped: profiling never fails a launch). Lock held. */
static int row_for(const char *label, int cfg, int device) {
    for (int i = 0; i < P.nrows; i++)
        if (P.rows[i].device == device && strcmp(P.rows[i].label, label) == 0) return i;
    if (P.nrows == P.caprows) {
        int cap = P.caprows ? 2 * P.caprows : 16;
        prof_row *r = realloc(P.rows, sizeof *r * (size_t)cap);
        if (!r) return -1;
        P.rows = r;
        P.caprows = cap;
    }
    prof_row *r = &P.rows[P.nrows];
    memset(r, 0, sizeof *r);
    snprintf(r->label, sizeof r->label, "%s", label);
    r->cfg = cfg;
    r->device = device;
    return P.nrows++;
}

/* One timed launch: its time and stated work (a sample that cannot be
 * stored is dropped whole, so bytes / time stays consistent). */
static void add_sample(int row, double ms, double bytes, double flops) {
    prof_row *r = &P.rows[row];
    if (r->launches == r->cap) {
        size_t cap = r->cap ? 2 * r->cap : 64;
        float *m = realloc(r->ms, sizeof *m * cap);
        if (!m) return;
        r->ms = m;
        r->cap = cap;
    }
    if (ms < 0) ms = 0; /* events of a failed stream read as garbage: never a negative time */
    r->ms[r->launches++] = (float)ms;
    r->total_ms += ms;
    r->bytes += bytes;
    r->flops += flops;
}

/* Read pending pair p (synchronising its end event) and destroy it. A pair
 * whose events cannot be read is dropped, not counted. Lock held. */
static void resolve_one(prof_pending *p) {
    blkrt_device *d = p->dev;
    rt_ctx_scope sc;
    if (rt_ctx_enter(d, &sc) != RT_CUDA_SUCCESS) return;
    float ms = 0;
    CUresult r = d->cu->cuEventSynchronize(p->ev[1]);
    if (r == RT_CUDA_SUCCESS) r = d->cu->cuEventElapsedTime(&ms, p->ev[0], p->ev[1]);
    if (r == RT_CUDA_SUCCESS) add_sample(p->row, ms, p->bytes, p->flops);
    d->cu->cuEventDestroy(p->ev[0]);
    d->cu->cuEventDestroy(p->ev[1]);
    rt_ctx_leave(d, &sc);
}

/* Resolve the pending pairs [0, n) (of device d only when d != NULL), in
 * launch order, and drop them from the list. Lock held. */
static void resolve(int n, blkrt_device *d) {
    int kept = 0;
    for (int i = 0; i < P.npend; i++) {
        if (i < n && (!d || P.pend[i].dev == d)) resolve_one(&P.pend[i]);
        else P.pend[kept++] = P.pend[i];
    }
    P.npend = kept;
}

static void print_at_exit(void) {
    char *text = NULL;
    if (blkrt_profile_table(&text) == BLKRT_OK && text) fputs(text, stderr);
    rt_libc_free(text);
}

static void init_once(void) {
    int flags = 0;
    if (nvtx_attach()) flags |= PROF_NVTX;
    const char *e = getenv("BLK_PROFILE");
    if (e && *e && strcmp(e, "0") != 0) {
        flags |= PROF_TIME;
        P.print_at_exit = true;
        atexit(print_at_exit);
    }
    atomic_store(&rt_prof_active, flags);
}

void rt_profile_init(void) { pthread_once(&P.once, init_once); }

blkrt_status blkrt_profile_enable(int on) {
    rt_profile_init();
    if (on) atomic_fetch_or(&rt_prof_active, PROF_TIME);
    else atomic_fetch_and(&rt_prof_active, ~PROF_TIME);
    return BLKRT_OK;
}

blkrt_status blkrt_profile_set_work(blkrt_kernel *k, double bytes, double flops) {
    if (!RT_IS(k, RT_MAGIC_KERNEL)) return rt_err(BLKRT_ERR_INVALID_HANDLE, "blkrt_profile_set_work: not a kernel handle");
    if (!(bytes >= 0) || !(flops >= 0))
        return rt_err(BLKRT_ERR_INVALID_VALUE, "blkrt_profile_set_work: bytes and flops must be >= 0");
    pthread_mutex_lock(&P.lock);
    k->prof_bytes = bytes;
    k->prof_flops = flops;
    pthread_mutex_unlock(&P.lock);
    return BLKRT_OK;
}

/* ---- around a launch ---- */

/* "name[C1=v,C2=v,w4]": the consts of the kernel's blk-meta, then the
 * variant's warps. An unchecked kernel is its name alone. */
static void make_label(rt_prof_launch *p, const blkrt_kernel *k, const rt_variant *v) {
    size_t cap = sizeof p->label;
    int n = snprintf(p->label, cap, "%s", k->name);
    if (n < 0 || (size_t)n >= cap - 2) n = (int)cap - 3;
    p->cfg = n + 1;
    if (!k->checked) {
        p->cfg = n;
        return;
    }
    size_t at = (size_t)n;
    p->label[at++] = '[';
    for (int i = 0; i < k->meta->nconsts && at < cap; i++) {
        const rt_const *c = &k->meta->consts[i];
        if (rt_type_is_float(c->type)) at += (size_t)snprintf(p->label + at, cap - at, "%s=%g,", c->name, c->fval);
        else at += (size_t)snprintf(p->label + at, cap - at, "%s=%lld,", c->name, (long long)c->ival);
    }
    if (at < cap) snprintf(p->label + at, cap - at, "w%d]", v ? v->num_warps : 0);
}

void rt_prof_begin(rt_prof_launch *p, blkrt_kernel *k, const rt_variant *v, blkrt_stream *s, CUstream cs) {
    /* acquire: nvtx_push / nvtx_pop were written before init_once's store */
    int flags = atomic_load_explicit(&rt_prof_active, memory_order_acquire);
    blkrt_device *d = k->mod->dev;
    p->timed = p->events = p->nvtx = false;
    make_label(p, k, v);
    if ((flags & PROF_NVTX) && nvtx_push) {
        nvtx_push(p->label);
        p->nvtx = true;
    }
    if (!(flags & PROF_TIME) || (s && s->capturing)) return;
    d->ops->timer_start(d, p, cs);
}

void rt_prof_end(rt_prof_launch *p, blkrt_kernel *k, blkrt_stream *s, CUstream cs, bool ok) {
    (void)s;
    blkrt_device *d = k->mod->dev;
    if (p->nvtx) nvtx_pop();
    if (!p->timed) return;
    bool gpu = p->events; /* timed by two events, read later (resolve); else by the host clock */
    if (gpu && ok && d->cu->cuEventRecord(p->ev[1], cs) != RT_CUDA_SUCCESS) ok = false;
    double ms = gpu ? 0 : rt_now_ms() - p->t0;
    pthread_mutex_lock(&P.lock);
    int row = ok ? row_for(p->label, p->cfg, d->info.ordinal) : -1;
    if (row >= 0 && !gpu) add_sample(row, ms, k->prof_bytes, k->prof_flops);
    if (row >= 0 && gpu) {
        if (P.npend == RT_PROF_PENDING) resolve(RT_PROF_PENDING / 2, NULL); /* ctx of d is current: fine for others too */
        if (P.npend == P.cappend) {
            int cap = P.cappend ? 2 * P.cappend : 64;
            prof_pending *q = realloc(P.pend, sizeof *q * (size_t)cap);
            if (q) {
                P.pend = q;
                P.cappend = cap;
            }
        }
        if (P.npend < P.cappend) {
            P.pend[P.npend++] = (prof_pending){d, row, {p->ev[0], p->ev[1]}, k->prof_bytes, k->prof_flops};
            p->timed = false; /* owned by the list now */
        }
    }
    pthread_mutex_unlock(&P.lock);
    if (gpu && p->timed) {
        d->cu->cuEventDestroy(p->ev[0]);
        d->cu->cuEventDestroy(p->ev[1]);
    }
}

void rt_prof_device_closing(blkrt_device *d) {
    pthread_mutex_lock(&P.lock);
    resolve(P.npend, d);
    pthread_mutex_unlock(&P.lock);
}

/* ---- reading the rows ---- */

static int cmp_float(const void *a, const void *b) {
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

static void fill_row(const prof_row *r, blkrt_profile_row *o) {
    memset(o, 0, sizeof *o);
    bool has_cfg = r->cfg > 0 && r->label[r->cfg - 1] == '[';
    snprintf(o->kernel, sizeof o->kernel, "%.*s", has_cfg ? r->cfg - 1 : r->cfg, r->label);
    if (has_cfg) {
        size_t n = strlen(r->label + r->cfg);
        snprintf(o->config, sizeof o->config, "%.*s", n ? (int)n - 1 : 0, r->label + r->cfg); /* without ']' */
    }
    o->device = r->device;
    o->launches = r->launches;
    o->total_ms = r->total_ms;
    o->bytes = r->bytes;
    o->flops = r->flops;
    if (r->launches) {
        float *m = malloc(sizeof *m * r->launches);
        if (m) {
            memcpy(m, r->ms, sizeof *m * r->launches);
            qsort(m, r->launches, sizeof *m, cmp_float);
            size_t h = r->launches / 2;
            o->median_ms = r->launches % 2 ? m[h] : 0.5 * ((double)m[h - 1] + m[h]);
            o->min_ms = m[0];
            o->max_ms = m[r->launches - 1];
            free(m);
        }
    }
    double sec = r->total_ms * 1e-3;
    if (sec > 0) {
        o->gbps = r->bytes / sec * 1e-9;
        o->tflops = r->flops / sec * 1e-12;
    }
}

blkrt_status blkrt_profile_rows(blkrt_profile_row *rows, int cap, int *n) {
    if (!n) return rt_err(BLKRT_ERR_INVALID_VALUE, "blkrt_profile_rows: n is NULL");
    if (rows == NULL && cap != 0) return rt_err(BLKRT_ERR_INVALID_VALUE, "blkrt_profile_rows: rows is NULL, cap is not 0");
    pthread_mutex_lock(&P.lock);
    resolve(P.npend, NULL);
    *n = P.nrows;
    for (int i = 0; i < P.nrows && i < cap; i++) fill_row(&P.rows[i], &rows[i]);
    pthread_mutex_unlock(&P.lock);
    return BLKRT_OK;
}

static int cmp_total_desc(const void *a, const void *b) {
    double x = ((const blkrt_profile_row *)a)->total_ms, y = ((const blkrt_profile_row *)b)->total_ms;
    return (x < y) - (x > y);
}

blkrt_status blkrt_profile_table(char **text) {
    if (!text) return rt_err(BLKRT_ERR_INVALID_VALUE, "blkrt_profile_table: text is NULL");
    *text = NULL;
    int n = 0;
    blkrt_status st = blkrt_profile_rows(NULL, 0, &n);
    if (st) return st;
    blkrt_profile_row *rows = calloc((size_t)n + 1, sizeof *rows);
    if (!rows) return rt_err(BLKRT_ERR_OUT_OF_MEMORY, "out of memory");
    int got = 0;
    blkrt_profile_rows(rows, n, &got);
    if (got < n) n = got; /* a reset in between */
    qsort(rows, (size_t)n, sizeof *rows, cmp_total_desc);
    int kw = 6, cw = 6; /* column widths: the longest name and config */
    for (int i = 0; i < n; i++) {
        if ((int)strlen(rows[i].kernel) > kw) kw = (int)strlen(rows[i].kernel);
        if ((int)strlen(rows[i].config) > cw) cw = (int)strlen(rows[i].config);
    }
    size_t cap = 512 + (size_t)(n + 1) * (size_t)(kw + cw + 100), at = 0;
    char *t = rt_user_malloc(cap); /* the caller frees it with free() */
    if (!t) {
        free(rows);
        return rt_err(BLKRT_ERR_OUT_OF_MEMORY, "out of memory");
    }
    at += (size_t)snprintf(t + at, cap - at, "blk profile: %d kernel configuration%s, slowest total first\n", n,
                           n == 1 ? "" : "s");
    at += (size_t)snprintf(t + at, cap - at, "%-*s  %-*s  %-6s %9s %12s %11s %11s %9s %8s\n", kw, "kernel", cw, "config",
                           "device", "launches", "total ms", "median ms", "min ms", "GB/s", "TFLOP/s");
    for (int i = 0; i < n; i++) {
        const blkrt_profile_row *r = &rows[i];
        char dev[16], gb[16], tf[16];
        if (r->device == BLKRT_DEVICE_CPU) snprintf(dev, sizeof dev, "cpu");
        else snprintf(dev, sizeof dev, "gpu%d", r->device);
        if (r->bytes > 0) snprintf(gb, sizeof gb, "%.4g", r->gbps);
        else snprintf(gb, sizeof gb, "-");
        if (r->flops > 0) snprintf(tf, sizeof tf, "%.4g", r->tflops);
        else snprintf(tf, sizeof tf, "-");
        at += (size_t)snprintf(t + at, cap - at, "%-*s  %-*s  %-6s %9llu %12.4f %11.4f %11.4f %9s %8s\n", kw, r->kernel,
                               cw, r->config, dev, (unsigned long long)r->launches, r->total_ms, r->median_ms, r->min_ms,
                               gb, tf);
        if (at >= cap) at = cap - 1;
    }
    free(rows);
    *text = t;
    return BLKRT_OK;
}

blkrt_status blkrt_profile_reset(void) {
    pthread_mutex_lock(&P.lock);
    resolve(P.npend, NULL);
    for (int i = 0; i < P.nrows; i++) free(P.rows[i].ms);
    free(P.rows);
    P.rows = NULL;
    P.nrows = P.caprows = 0;
    pthread_mutex_unlock(&P.lock);
    return BLKRT_OK;
}

/* ---- blkrt_bench ---- */

blkrt_status blkrt_bench(blkrt_device *d, blkrt_stream *s, blkrt_bench_fn fn, void *user, const blkrt_bench_options *o,
                         blkrt_bench_result *out) {
    blkrt_status st = rt_check_device(d, "blkrt_bench");
    if (st) return st;
    if (!fn || !out) return rt_err(BLKRT_ERR_INVALID_VALUE, "blkrt_bench: fn or out is NULL");
    blkrt_bench_options opt = o ? *o : (blkrt_bench_options){0};
    int warmup = opt.warmup < 0 ? 0 : opt.warmup == 0 ? 3 : opt.warmup;
    int reps = opt.reps == 0 ? 20 : opt.reps;
    if (reps < 0) return rt_err(BLKRT_ERR_INVALID_VALUE, "blkrt_bench: reps = %d is negative", reps);
    size_t flush = opt.flush_bytes == SIZE_MAX ? 0 : opt.flush_bytes ? opt.flush_bytes : d->ops->flush_bytes(d);
    memset(out, 0, sizeof *out);

    blkrt_ptr buf = 0;
    blkrt_event **ev = calloc((size_t)reps * 2, sizeof *ev);
    float *ms = malloc(sizeof *ms * (size_t)reps);
    if (!ev || !ms) {
        st = rt_err(BLKRT_ERR_OUT_OF_MEMORY, "out of memory");
        goto done;
    }
    if (flush && (st = blkrt_malloc(d, flush, &buf))) goto done;
    for (int i = 0; i < 2 * reps; i++)
        if ((st = blkrt_event_create(d, &ev[i]))) goto done;
    for (int i = 0; i < warmup; i++)
        if ((st = fn(user))) goto done;
    if ((st = s ? blkrt_stream_synchronize(s) : blkrt_device_synchronize(d))) goto done;
    for (int i = 0; i < reps; i++) {
        /* the flush is outside the timed pair: a cold L2, not its cost */
        if (flush && (st = blkrt_memset_async(d, buf, (uint8_t)i, flush, s))) goto done;
        if ((st = blkrt_event_record(ev[2 * i], s))) goto done;
        if ((st = fn(user))) goto done;
        if ((st = blkrt_event_record(ev[2 * i + 1], s))) goto done;
    }
    if (reps && (st = blkrt_event_synchronize(ev[2 * reps - 1]))) goto done;
    double sum = 0;
    for (int i = 0; i < reps; i++) {
        if ((st = blkrt_event_elapsed_ms(ev[2 * i], ev[2 * i + 1], &ms[i]))) goto done;
        if (ms[i] < 0) ms[i] = 0;
        sum += ms[i];
        if (opt.times) opt.times[i] = ms[i];
    }
    if (reps) {
        qsort(ms, (size_t)reps, sizeof *ms, cmp_float);
        out->median_ms = reps % 2 ? ms[reps / 2] : 0.5 * ((double)ms[reps / 2 - 1] + ms[reps / 2]);
        out->min_ms = ms[0];
        out->max_ms = ms[reps - 1];
        out->mean_ms = sum / reps;
    }
    out->reps = reps;
    out->flush_bytes = flush;
done:
    for (int i = 0; ev && i < 2 * reps; i++)
        if (ev[i]) blkrt_event_destroy(ev[i]);
    if (buf) blkrt_free(d, buf);
    free(ev);
    free(ms);
    return st;
}

/* fake_cuda_exec.c — the fake CUDA driver's side that runs work: modules
 * (the PTX's entries and parameter sizes, JIT logs, failures the PTX text
 * asks for), launches checked against the limits and recorded, streams and
 * their capture into graphs, events, tensor maps. The driver's state and the
 * test hooks are fake_cuda.c's (fake_cuda_impl.h).
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fake_cuda_impl.h"

/* ---- modules ---- */
struct CUfunc_st {
    uint32_t magic;
    struct CUmod_st *mod;
    char name[128];
    int nparams;
    int psize[FAKE_MAX_PARAMS];
    int max_threads, static_shared, max_dyn;
};

struct CUmod_st {
    uint32_t magic;
    CUcontext ctx;
    int n;
    struct CUfunc_st *f;
};

static int param_bytes(const char *t) {
    if (!strcmp(t, "u8") || !strcmp(t, "s8") || !strcmp(t, "b8")) return 1;
    if (!strcmp(t, "u16") || !strcmp(t, "s16") || !strcmp(t, "b16") || !strcmp(t, "f16")) return 2;
    if (!strcmp(t, "u32") || !strcmp(t, "s32") || !strcmp(t, "b32") || !strcmp(t, "f32")) return 4;
    if (!strcmp(t, "u64") || !strcmp(t, "s64") || !strcmp(t, "b64") || !strcmp(t, "f64")) return 8;
    return 0;
}

static bool ident_char(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '$';
}

/* ".param .u64 .ptr .global .align 1 name" -> 8; ".param .align 8 .b8 name[16]" -> 16 */
static int parse_param(const char *s, const char *end) {
    const char *p = strstr(s, ".param");
    if (!p || p >= end) return -1;
    p += 6;
    int elem = 0;
    while (p < end) {
        while (p < end && (*p == ' ' || *p == '\t' || *p == '\n')) p++;
        if (p >= end) break;
        if (*p == '.') {
            char tok[16];
            int n = 0;
            p++;
            while (p < end && ident_char(*p) && n < 15) tok[n++] = *p++;
            tok[n] = 0;
            if (!strcmp(tok, "align")) {
                while (p < end && (*p == ' ' || *p == '\t')) p++;
                while (p < end && *p >= '0' && *p <= '9') p++;
            } else if (param_bytes(tok)) {
                elem = param_bytes(tok);
            }
            continue;
        }
        while (p < end && ident_char(*p)) p++; /* the name */
        if (p < end && *p == '[') return elem * atoi(p + 1);
        return elem;
    }
    return elem;
}

static int parse_module(const char *text, struct CUmod_st *m) {
    int cap = 0;
    for (const char *p = text; (p = strstr(p, ".entry")) != NULL;) {
        p += 6;
        while (*p == ' ' || *p == '\t') p++;
        char name[128];
        int n = 0;
        while (ident_char(*p) && n < 127) name[n++] = *p++;
        name[n] = 0;
        if (n == 0) continue;
        if (m->n == cap) {
            cap = cap ? cap * 2 : 8;
            m->f = realloc(m->f, sizeof *m->f * (size_t)cap);
        }
        struct CUfunc_st *f = &m->f[m->n++];
        memset(f, 0, sizeof *f);
        f->magic = M_FUNC;
        f->mod = m;
        snprintf(f->name, sizeof f->name, "%s", name);
        f->max_threads = 1024;
        f->max_dyn = 49152;
        while (*p == ' ' || *p == '\t' || *p == '\n') p++;
        if (*p == '(') {
            const char *close = strchr(p, ')');
            if (!close) return -1;
            const char *s = p + 1;
            while (s < close && f->nparams < FAKE_MAX_PARAMS) {
                const char *comma = memchr(s, ',', (size_t)(close - s));
                const char *e = comma ? comma : close;
                int b = parse_param(s, e);
                if (b > 0) f->psize[f->nparams++] = b;
                s = e + 1;
            }
            p = close;
        }
    }
    /* fake-attr lines: per-function limits */
    for (const char *p = text; (p = strstr(p, "// fake-attr entry=")) != NULL;) {
        p += 19;
        char name[128];
        int n = 0;
        while (ident_char(*p) && n < 127) name[n++] = *p++;
        name[n] = 0;
        const char *eol = strchr(p, '\n');
        for (int i = 0; i < m->n; i++) {
            if (strcmp(m->f[i].name, name) != 0) continue;
            const char *mt = strstr(p, "max_threads="), *ss = strstr(p, "static_shared=");
            if (mt && (!eol || mt < eol)) m->f[i].max_threads = atoi(mt + 12);
            if (ss && (!eol || ss < eol)) m->f[i].static_shared = atoi(ss + 14);
            m->f[i].max_dyn = m->f[i].static_shared < 49152 ? 49152 - m->f[i].static_shared : 0;
        }
    }
    return 0;
}

static void write_log(unsigned int nopts, CUjit_option *opts, void **vals, int which_buf, int which_size,
                      const char *text) {
    char *buf = NULL;
    unsigned int size_index = nopts;
    for (unsigned int i = 0; i < nopts; i++) {
        if (opts[i] == which_buf) buf = vals[i];
        if (opts[i] == which_size) size_index = i;
    }
    if (!buf || size_index == nopts) return;
    size_t cap = (size_t)(uintptr_t)vals[size_index];
    if (cap == 0) return;
    size_t n = strlen(text);
    if (n > cap - 1) n = cap - 1;
    memcpy(buf, text, n);
    buf[n] = 0;
    vals[size_index] = (void *)(uintptr_t)n; /* the driver reports what it wrote */
}

EXPORT CUresult cuModuleLoadDataEx(CUmodule *out, const void *image, unsigned int nopts, CUjit_option *opts,
                                   void **vals) {
    ENTER("cuModuleLoadDataEx");
    NEED_CTX();
    if (!out || !image || (nopts && (!opts || !vals))) return RT_CUDA_ERROR_INVALID_VALUE;
    /* a log buffer needs its size, as in the real driver */
    bool has[16] = {0};
    for (unsigned int i = 0; i < nopts; i++)
        if (opts[i] >= 0 && opts[i] < 16) has[opts[i]] = true;
    if ((has[RT_CU_JIT_INFO_LOG_BUFFER] && !has[RT_CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES]) ||
        (has[RT_CU_JIT_ERROR_LOG_BUFFER] && !has[RT_CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES]))
        return RT_CUDA_ERROR_INVALID_VALUE;
    const char *text = image;
    bool cubin = memcmp(text, "\177ELF", 4) == 0;
    if (cubin) {
        text += 4;
    } else {
        const char *v = strstr(text, ".version");
        const char *e = strstr(text, ".entry");
        if (!v || (e && e < v)) {
            write_log(nopts, opts, vals, RT_CU_JIT_ERROR_LOG_BUFFER, RT_CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
                      "ptxas fatal   : Missing .version directive at start of file");
            return RT_CUDA_ERROR_INVALID_PTX;
        }
        int major = 0, minor = 0;
        sscanf(v + 8, " %d.%d", &major, &minor);
        if (major * 10 + minor > 90) {
            char msg[160];
            snprintf(msg, sizeof msg, "ptxas fatal   : Unsupported .version %d.%d; current version is '9.0'", major, minor);
            write_log(nopts, opts, vals, RT_CU_JIT_ERROR_LOG_BUFFER, RT_CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES, msg);
            return RT_CUDA_ERROR_UNSUPPORTED_PTX_VERSION;
        }
        const char *j = strstr(text, "FAKE_JIT_ERROR ");
        if (j) {
            char msg[512];
            const char *eol = strchr(j, '\n');
            int n = eol ? (int)(eol - j - 15) : (int)strlen(j + 15);
            snprintf(msg, sizeof msg, "ptxas application ptx input, line 9; error   : %.*s", n, j + 15);
            write_log(nopts, opts, vals, RT_CU_JIT_ERROR_LOG_BUFFER, RT_CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES, msg);
            return RT_CUDA_ERROR_INVALID_PTX;
        }
    }
    struct CUmod_st *m = calloc(1, sizeof *m);
    m->magic = M_MOD;
    m->ctx = current();
    if (parse_module(text, m) != 0) {
        free(m->f);
        free(m);
        return RT_CUDA_ERROR_INVALID_PTX;
    }
    char info[128];
    snprintf(info, sizeof info, "ptxas info    : fake driver compiled %d entr%s", m->n, m->n == 1 ? "y" : "ies");
    write_log(nopts, opts, vals, RT_CU_JIT_INFO_LOG_BUFFER, RT_CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES, info);
    *out = m;
    return RT_CUDA_SUCCESS;
}

EXPORT CUresult cuModuleUnload(CUmodule m) {
    ENTER("cuModuleUnload");
    NEED_INIT();
    if (!m || m->magic != M_MOD) return RT_CUDA_ERROR_INVALID_HANDLE;
    m->magic = M_DEAD;
    free(m->f);
    free(m);
    return RT_CUDA_SUCCESS;
}

EXPORT CUresult cuModuleGetFunction(CUfunction *f, CUmodule m, const char *name) {
    ENTER("cuModuleGetFunction");
    NEED_INIT();
    if (!m || m->magic != M_MOD) return RT_CUDA_ERROR_INVALID_HANDLE;
    for (int i = 0; i < m->n; i++)
        if (strcmp(m->f[i].name, name) == 0) {
            *f = &m->f[i];
            return RT_CUDA_SUCCESS;
        }
    return RT_CUDA_ERROR_NOT_FOUND;
}

EXPORT CUresult cuFuncGetAttribute(int *v, CUfunction_attribute a, CUfunction f) {
    ENTER("cuFuncGetAttribute");
    NEED_INIT();
    if (!f || f->magic != M_FUNC) return RT_CUDA_ERROR_INVALID_HANDLE;
    switch (a) {
    case RT_CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK: *v = f->max_threads; break;
    case RT_CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES: *v = f->static_shared; break;
    case RT_CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES: *v = f->max_dyn; break;
    default: return RT_CUDA_ERROR_INVALID_VALUE;
    }
    return RT_CUDA_SUCCESS;
}

/* An H100-like multiprocessor: at most 32 blocks, 2048 threads, 228 KB of
 * shared memory with 1 KB reserved per block; the function's register use
 * as its max_threads (a function limited to N threads per block by its
 * registers fits N threads per multiprocessor's register file). */
EXPORT CUresult cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(int *blocks, CUfunction f, int block_size,
                                                                     size_t dynamic_shared, unsigned int flags) {
    ENTER("cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags");
    NEED_CTX();
    if (!f || f->magic != M_FUNC) return RT_CUDA_ERROR_INVALID_HANDLE;
    if (!blocks || block_size <= 0 || flags != 0) return RT_CUDA_ERROR_INVALID_VALUE;
    int n = 32;
    if (2048 / block_size < n) n = 2048 / block_size;
    if (f->max_threads / block_size < n) n = f->max_threads / block_size;
    size_t per = dynamic_shared + (size_t)f->static_shared + 1024;
    if ((int)(233472 / per) < n) n = (int)(233472 / per);
    if ((int)dynamic_shared > f->max_dyn) n = 0;
    *blocks = n;
    return RT_CUDA_SUCCESS;
}

EXPORT CUresult cuFuncSetAttribute(CUfunction f, CUfunction_attribute a, int v) {
    ENTER("cuFuncSetAttribute");
    NEED_INIT();
    if (!f || f->magic != M_FUNC) return RT_CUDA_ERROR_INVALID_HANDLE;
    if (a != RT_CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES) return RT_CUDA_ERROR_INVALID_VALUE;
    int optin = f->mod->ctx->device == 0 ? 232448 : 166912;
    if (v < 0 || v > optin - f->static_shared) return RT_CUDA_ERROR_INVALID_VALUE;
    LOCK();
    f->max_dyn = v;
    UNLOCK();
    count_attr_set(f->name);
    return RT_CUDA_SUCCESS;
}

/* ---- streams, launches, graphs ---- */
typedef struct {
    launch_rec *v;
    int n, cap;
} launch_list;

static void list_push(launch_list *l, const launch_rec *x) {
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 8;
        l->v = realloc(l->v, sizeof *l->v * (size_t)l->cap);
    }
    l->v[l->n++] = *x;
}

struct CUstream_st {
    uint32_t magic;
    CUcontext ctx;
    bool capturing, invalidated;
    launch_list cap;
};

struct CUgraph_st {
    uint32_t magic;
    launch_list l;
};

struct CUgraphExec_st {
    uint32_t magic;
    launch_list l;
};

CUresult check_stream(CUstream s) {
    if (!s) return RT_CUDA_SUCCESS;
    if (s->magic != M_STREAM) return RT_CUDA_ERROR_INVALID_HANDLE;
    if (s->ctx != current()) return RT_CUDA_ERROR_INVALID_HANDLE;
    return RT_CUDA_SUCCESS;
}

/* cuLaunchKernel's checks and record (after its ENTER), also for
 * cuLaunchKernelEx: cluster is the clusterDim it got, or NULL. */
static CUresult launch(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz, unsigned int bx,
                       unsigned int by, unsigned int bz, unsigned int shared, CUstream s, void **params, void **extra,
                       const unsigned cluster[3]) {
    NEED_CTX();
    if (!f || f->magic != M_FUNC) return RT_CUDA_ERROR_INVALID_HANDLE;
    if (f->mod->ctx != current()) return RT_CUDA_ERROR_INVALID_CONTEXT;
    CUresult r = check_stream(s);
    if (r) return r;
    if (!gx || !gy || !gz || !bx || !by || !bz || gx > 2147483647u || gy > 65535 || gz > 65535 || bx > 1024 ||
        by > 1024 || bz > 64 || (unsigned long)bx * by * bz > 1024)
        return RT_CUDA_ERROR_INVALID_VALUE;
    if ((int)(bx * by * bz) > f->max_threads) return RT_CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES;
    if ((int)shared > f->max_dyn) return RT_CUDA_ERROR_INVALID_VALUE;
    if (extra) return RT_CUDA_ERROR_INVALID_VALUE; /* the runtime never uses extra */
    if (f->nparams > 0 && !params) return RT_CUDA_ERROR_INVALID_VALUE;
    /* a cluster divides the grid, has at most 8 CTAs (the portable size) and
     * needs sm_90: device 0 only */
    if (cluster && (!cluster[0] || !cluster[1] || !cluster[2] || gx % cluster[0] || gy % cluster[1] ||
                    gz % cluster[2] || cluster[0] * cluster[1] * cluster[2] > 8 || current()->device != 0))
        return RT_CUDA_ERROR_INVALID_CLUSTER_SIZE;
    launch_rec rec;
    memset(&rec, 0, sizeof rec);
    if (cluster) memcpy(rec.cluster, cluster, sizeof rec.cluster);
    fake_launch *l = &rec.l;
    snprintf(l->entry, sizeof l->entry, "%s", f->name);
    l->device = current()->device;
    l->grid[0] = gx, l->grid[1] = gy, l->grid[2] = gz;
    l->block[0] = bx, l->block[1] = by, l->block[2] = bz;
    l->shared = shared;
    l->stream = s;
    l->nparams = f->nparams;
    for (int i = 0; i < f->nparams; i++) {
        l->param_size[i] = f->psize[i];
        memcpy(l->param[i], params[i], f->psize[i] < 8 ? (size_t)f->psize[i] : 8);
        if (f->psize[i] > 8) {
            if ((uintptr_t)params[i] % 64) return RT_CUDA_ERROR_INVALID_VALUE;
            if (rec.nbig < FAKE_MAX_BIG)
                memcpy(rec.big[rec.nbig++], params[i], f->psize[i] < 128 ? (size_t)f->psize[i] : 128);
        }
    }
    if (s && s->capturing) {
        LOCK();
        list_push(&s->cap, &rec);
        UNLOCK();
        return RT_CUDA_SUCCESS;
    }
    record_launch(&rec);
    return RT_CUDA_SUCCESS;
}

EXPORT CUresult cuLaunchKernel(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz, unsigned int bx,
                               unsigned int by, unsigned int bz, unsigned int shared, CUstream s, void **params,
                               void **extra) {
    ENTER("cuLaunchKernel");
    return launch(f, gx, gy, gz, bx, by, bz, shared, s, params, extra, NULL);
}

#ifndef FAKE_NO_TMAP /* a driver older than 12.0 has no cuLaunchKernelEx either */
/* The attributes the fake knows: CLUSTER_DIMENSION (at most once); any other
 * is refused, so a test sees what the runtime sends. */
EXPORT CUresult cuLaunchKernelEx(const CUlaunchConfig *c, CUfunction f, void **params, void **extra) {
    ENTER("cuLaunchKernelEx");
    NEED_INIT();
    if (!c || (c->numAttrs && !c->attrs)) return RT_CUDA_ERROR_INVALID_VALUE;
    unsigned dims[3] = {0, 0, 0};
    bool cluster = false;
    for (unsigned i = 0; i < c->numAttrs; i++) {
        if (c->attrs[i].id != RT_CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION || cluster) return RT_CUDA_ERROR_INVALID_VALUE;
        dims[0] = c->attrs[i].value.clusterDim.x;
        dims[1] = c->attrs[i].value.clusterDim.y;
        dims[2] = c->attrs[i].value.clusterDim.z;
        cluster = true;
    }
    return launch(f, c->gridDimX, c->gridDimY, c->gridDimZ, c->blockDimX, c->blockDimY, c->blockDimZ,
                  c->sharedMemBytes, c->hStream, params, extra, cluster ? dims : NULL);
}
#endif

EXPORT CUresult cuStreamCreate(CUstream *out, unsigned int flags) {
    ENTER("cuStreamCreate");
    NEED_CTX();
    if (flags > 1) return RT_CUDA_ERROR_INVALID_VALUE;
    struct CUstream_st *s = calloc(1, sizeof *s);
    s->magic = M_STREAM;
    s->ctx = current();
    *out = s;
    return RT_CUDA_SUCCESS;
}

EXPORT CUresult cuStreamDestroy_v2(CUstream s) {
    ENTER("cuStreamDestroy_v2");
    NEED_INIT();
    if (!s || s->magic != M_STREAM) return RT_CUDA_ERROR_INVALID_HANDLE;
    s->magic = M_DEAD;
    free(s->cap.v);
    free(s);
    return RT_CUDA_SUCCESS;
}

EXPORT CUresult cuStreamSynchronize(CUstream s) {
    ENTER("cuStreamSynchronize");
    NEED_CTX();
    CUresult r = check_stream(s);
    if (r) return r;
    if (s && s->capturing) return RT_CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
    return RT_CUDA_SUCCESS;
}

/* fake_stall(1): the work never finishes; queries say NOT_READY (a hung kernel). */
static atomic_int stalled;
EXPORT void fake_stall(int on) { atomic_store(&stalled, on); }

EXPORT CUresult cuStreamQuery(CUstream s) {
    ENTER("cuStreamQuery");
    NEED_CTX();
    CUresult r = check_stream(s);
    if (r) return r;
    if (s && s->capturing) return RT_CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
    return atomic_load(&stalled) ? RT_CUDA_ERROR_NOT_READY : RT_CUDA_SUCCESS;
}

EXPORT CUresult cuStreamBeginCapture_v2(CUstream s, CUstreamCaptureMode mode) {
    ENTER("cuStreamBeginCapture_v2");
    NEED_CTX();
    if (!s) return RT_CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED; /* the legacy stream cannot capture */
    CUresult r = check_stream(s);
    if (r) return r;
    if (mode < 0 || mode > 2 || s->capturing) return RT_CUDA_ERROR_INVALID_VALUE;
    s->capturing = true;
    s->invalidated = false;
    s->cap.n = 0;
    capturing_here++;
    return RT_CUDA_SUCCESS;
}

EXPORT CUresult cuStreamEndCapture(CUstream s, CUgraph *out) {
    ENTER("cuStreamEndCapture");
    NEED_CTX();
    CUresult r = check_stream(s);
    if (r) return r;
    if (!s || !s->capturing) return RT_CUDA_ERROR_INVALID_VALUE;
    s->capturing = false;
    capturing_here--;
    if (s->invalidated) return RT_CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
    struct CUgraph_st *g = calloc(1, sizeof *g);
    g->magic = M_GRAPH;
    g->l = s->cap;
    memset(&s->cap, 0, sizeof s->cap);
    *out = g;
    return RT_CUDA_SUCCESS;
}

EXPORT CUresult cuGraphInstantiateWithFlags(CUgraphExec *out, CUgraph g, unsigned long long flags) {
    ENTER("cuGraphInstantiateWithFlags");
    NEED_CTX();
    if (!g || g->magic != M_GRAPH) return RT_CUDA_ERROR_INVALID_HANDLE;
    struct CUgraphExec_st *e = calloc(1, sizeof *e);
    e->magic = M_EXEC;
    for (int i = 0; i < g->l.n; i++) list_push(&e->l, &g->l.v[i]);
    *out = e;
    return RT_CUDA_SUCCESS;
}

EXPORT CUresult cuGraphLaunch(CUgraphExec e, CUstream s) {
    ENTER("cuGraphLaunch");
    NEED_CTX();
    if (!e || e->magic != M_EXEC) return RT_CUDA_ERROR_INVALID_HANDLE;
    CUresult r = check_stream(s);
    if (r) return r;
    for (int i = 0; i < e->l.n; i++) {
        launch_rec l = e->l.v[i];
        l.l.from_graph = 1;
        l.l.stream = s;
        record_launch(&l);
    }
    return RT_CUDA_SUCCESS;
}

EXPORT CUresult cuGraphExecDestroy(CUgraphExec e) {
    ENTER("cuGraphExecDestroy");
    NEED_INIT();
    if (!e || e->magic != M_EXEC) return RT_CUDA_ERROR_INVALID_HANDLE;
    e->magic = M_DEAD;
    free(e->l.v);
    free(e);
    return RT_CUDA_SUCCESS;
}

EXPORT CUresult cuGraphDestroy(CUgraph g) {
    ENTER("cuGraphDestroy");
    NEED_INIT();
    if (!g || g->magic != M_GRAPH) return RT_CUDA_ERROR_INVALID_HANDLE;
    g->magic = M_DEAD;
    free(g->l.v);
    free(g);
    return RT_CUDA_SUCCESS;
}

/* ---- events ---- */
struct CUevent_st {
    uint32_t magic;
    CUcontext ctx;
    bool recorded;
    double ms;
};

EXPORT CUresult cuEventCreate(CUevent *out, unsigned int flags) {
    ENTER("cuEventCreate");
    NEED_CTX();
    struct CUevent_st *e = calloc(1, sizeof *e);
    e->magic = M_EVENT;
    e->ctx = current();
    *out = e;
    return RT_CUDA_SUCCESS;
}

EXPORT CUresult cuEventDestroy_v2(CUevent e) {
    ENTER("cuEventDestroy_v2");
    NEED_INIT();
    if (!e || e->magic != M_EVENT) return RT_CUDA_ERROR_INVALID_HANDLE;
    e->magic = M_DEAD;
    free(e);
    return RT_CUDA_SUCCESS;
}

EXPORT CUresult cuEventRecord(CUevent e, CUstream s) {
    ENTER("cuEventRecord");
    NEED_CTX();
    if (!e || e->magic != M_EVENT) return RT_CUDA_ERROR_INVALID_HANDLE;
    CUresult r = check_stream(s);
    if (r) return r;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    e->ms = (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
    e->recorded = true;
    return RT_CUDA_SUCCESS;
}

EXPORT CUresult cuEventSynchronize(CUevent e) {
    ENTER("cuEventSynchronize");
    NEED_CTX();
    if (!e || e->magic != M_EVENT) return RT_CUDA_ERROR_INVALID_HANDLE;
    return RT_CUDA_SUCCESS;
}

EXPORT CUresult cuEventQuery(CUevent e) {
    ENTER("cuEventQuery");
    NEED_CTX();
    if (!e || e->magic != M_EVENT) return RT_CUDA_ERROR_INVALID_HANDLE;
    return atomic_load(&stalled) ? RT_CUDA_ERROR_NOT_READY : RT_CUDA_SUCCESS;
}

EXPORT CUresult cuEventElapsedTime_v2(float *ms, CUevent a, CUevent b) {
    ENTER("cuEventElapsedTime_v2");
    NEED_CTX();
    if (!a || !b || a->magic != M_EVENT || b->magic != M_EVENT) return RT_CUDA_ERROR_INVALID_HANDLE;
    if (!a->recorded || !b->recorded) return RT_CUDA_ERROR_INVALID_HANDLE;
    *ms = (float)(b->ms - a->ms);
    return RT_CUDA_SUCCESS;
}

/* ---- tensor maps ---- */
#ifndef FAKE_NO_TMAP
/* Every requirement cuda.h documents for a tiled, non-interleaved map. */
EXPORT CUresult cuTensorMapEncodeTiled(CUtensorMap *map, CUtensorMapDataType dtype, cuuint32_t rank, void *addr,
                                       const cuuint64_t *dims, const cuuint64_t *strides, const cuuint32_t *box,
                                       const cuuint32_t *elem_strides, CUtensorMapInterleave interleave,
                                       CUtensorMapSwizzle swizzle, CUtensorMapL2promotion l2,
                                       CUtensorMapFloatOOBfill oob) {
    ENTER("cuTensorMapEncodeTiled");
    NEED_INIT();
    static const int esize[] = {1, 2, 4, 4, 8, 8, 2, 4, 8, 2, 4, 4, 4};
    if (!map || (uintptr_t)map % 64 || dtype < 0 || dtype > 12 || rank < 1 || rank > 5 || !addr ||
        (uintptr_t)addr % 16 || !dims || (rank > 1 && !strides) || !box || !elem_strides || interleave != 0 ||
        swizzle < 0 || swizzle > 3 || l2 < 0 || l2 > 3 || oob < 0 || oob > 1)
        return RT_CUDA_ERROR_INVALID_VALUE;
    for (cuuint32_t i = 0; i < rank; i++) {
        if (dims[i] < 1 || dims[i] > (UINT64_C(1) << 32) || box[i] < 1 || box[i] > 256 || elem_strides[i] < 1 ||
            elem_strides[i] > 8)
            return RT_CUDA_ERROR_INVALID_VALUE;
        if (i + 1 < rank && (strides[i] % 16 || strides[i] >= (UINT64_C(1) << 40))) return RT_CUDA_ERROR_INVALID_VALUE;
    }
    unsigned row = box[0] * (unsigned)esize[dtype];
    if (row % 16 || (swizzle > 0 && row > (16u << swizzle))) return RT_CUDA_ERROR_INVALID_VALUE;
    fake_tmap t;
    memset(&t, 0, sizeof t);
    t.magic = FAKE_TMAP_MAGIC;
    t.addr = (uint64_t)(uintptr_t)addr;
    t.dtype = (uint8_t)dtype, t.rank = (uint8_t)rank, t.interleave = (uint8_t)interleave;
    t.swizzle = (uint8_t)swizzle, t.l2 = (uint8_t)l2, t.oob = (uint8_t)oob;
    for (cuuint32_t i = 0; i < rank; i++) {
        t.dims[i] = dims[i];
        if (i + 1 < rank) t.strides[i] = strides[i];
        t.box[i] = (uint16_t)box[i];
        t.elem_strides[i] = (uint8_t)elem_strides[i];
    }
    _Static_assert(sizeof t <= sizeof *map, "fake_tmap fits a CUtensorMap");
    memset(map, 0, sizeof *map);
    memcpy(map, &t, sizeof t);
    return RT_CUDA_SUCCESS;
}
#endif


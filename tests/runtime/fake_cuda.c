/* fake_cuda.c — a fake CUDA driver for libblkrt's tests (see fake_cuda.h).
 *
 * It exports the entry points of runtime/cuda_api.h under their versioned
 * names and cuGetProcAddress_v2, keeps device memory in host memory, records
 * launches (grid, block, shared memory, the bytes of every parameter) and
 * checks what a real driver checks where the runtime could get it wrong: the
 * current context, block and shared-memory limits, memory ranges, capture
 * rules. Failures are injected with fake_fail_next or by the PTX text.
 *
 * This file: the driver's state, the test hooks, init and errors, devices
 * and contexts, memory, cuGetProcAddress. fake_cuda_exec.c: what runs work
 * (modules, launches, streams, graphs, events, tensor maps); the two share
 * fake_cuda_impl.h.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fake_cuda_impl.h"

#define FAKE_MEM_LIMIT (UINT64_C(1) << 32)
#define LOG_CAP 8192

pthread_mutex_t driver_lock = PTHREAD_MUTEX_INITIALIZER;

/* ---- global state ---- */
static struct CUctx_st ctxs[MAX_DEV];
static int ndev = 2, driver_version = 13000;
bool initialised;
/* peer topology (FAKE_CUDA_PEERS) and cuCtxEnablePeerAccess's effect */
static bool can_peer[MAX_DEV][MAX_DEV], peer_on[MAX_DEV][MAX_DEV];

static _Thread_local CUcontext ctx_stack[32];
static _Thread_local int ctx_top;
_Thread_local int capturing_here;

CUcontext current(void) { return ctx_top ? ctx_stack[ctx_top - 1] : NULL; }

/* A count per name; names past the 128th are not counted. */
typedef struct {
    struct {
        char name[128];
        int count;
    } v[128];
    int n;
} tally;

/* call counts and log */
static tally calls;
static char calllog[1 << 16];
static size_t calllog_len;
static int getproc_calls;

/* injected failures */
static struct {
    char sym[64];
    int result;
} pending[16];
static int npending;

/* launches */
static launch_rec *launches; /* ring of LOG_CAP */
static int nlaunches;

/* cuFuncSetAttribute calls per entry */
static tally attr_sets;

/* allocations */
typedef struct {
    uintptr_t p;
    size_t n;
    int device;            /* of the context current at cuMemAlloc */
} alloc_rec;
static alloc_rec *allocs;
static int nallocs, cap_allocs;
static uint64_t alloc_bytes;

/* (the lock held) */
static void tally_add(tally *t, const char *name) {
    int i = 0;
    while (i < t->n && strcmp(t->v[i].name, name) != 0) i++;
    if (i == t->n && t->n < 128) {
        snprintf(t->v[i].name, sizeof t->v[i].name, "%s", name);
        t->v[i].count = 0;
        t->n++;
    }
    if (i < 128) t->v[i].count++;
}

static int tally_get(tally *t, const char *name) {
    LOCK();
    int n = 0;
    for (int i = 0; i < t->n; i++)
        if (strcmp(t->v[i].name, name) == 0) n = t->v[i].count;
    UNLOCK();
    return n;
}

int enter(const char *sym) {
    LOCK();
    tally_add(&calls, sym);
    bool quiet = strncmp(sym, "cuCtx", 5) == 0 || strncmp(sym, "cuGetError", 10) == 0;
    if (!quiet && calllog_len + strlen(sym) + 2 < sizeof calllog)
        calllog_len += (size_t)snprintf(calllog + calllog_len, sizeof calllog - calllog_len, "%s%s",
                                        calllog_len ? " " : "", sym);
    int r = 0;
    for (int k = 0; k < npending; k++)
        if (strcmp(pending[k].sym, sym) == 0) {
            r = pending[k].result;
            pending[k] = pending[--npending];
            break;
        }
    UNLOCK();
    return r;
}

void record_launch(const launch_rec *l) {
    LOCK();
    launches[nlaunches % LOG_CAP] = *l;
    nlaunches++;
    UNLOCK();
}

void count_attr_set(const char *entry) {
    LOCK();
    tally_add(&attr_sets, entry);
    UNLOCK();
}

/* ---- test hooks ---- */
EXPORT void fake_reset(void) {
    LOCK();
    calls.n = 0;
    calllog_len = 0;
    calllog[0] = 0;
    npending = 0;
    nlaunches = 0;
    attr_sets.n = 0;
    UNLOCK();
}

EXPORT void fake_fail_next(const char *sym, int result) {
    LOCK();
    if (npending < 16) {
        snprintf(pending[npending].sym, sizeof pending[0].sym, "%s", sym);
        pending[npending++].result = result;
    }
    UNLOCK();
}

EXPORT int fake_launch_count(void) {
    LOCK();
    int n = nlaunches;
    UNLOCK();
    return n;
}

EXPORT int fake_get_launch(int i, fake_launch *out) {
    LOCK();
    int ok = i >= 0 && i < nlaunches && i >= nlaunches - LOG_CAP;
    if (ok) *out = launches[i % LOG_CAP].l;
    UNLOCK();
    return ok ? 0 : -1;
}

EXPORT int fake_get_big(int i, int j, unsigned char *out) {
    LOCK();
    int ok = i >= 0 && i < nlaunches && i >= nlaunches - LOG_CAP && j >= 0 && j < launches[i % LOG_CAP].nbig;
    if (ok) memcpy(out, launches[i % LOG_CAP].big[j], 128);
    UNLOCK();
    return ok ? 0 : -1;
}

EXPORT int fake_get_cluster(int i, unsigned *out) {
    LOCK();
    int ok = i >= 0 && i < nlaunches && i >= nlaunches - LOG_CAP;
    if (ok) memcpy(out, launches[i % LOG_CAP].cluster, 3 * sizeof *out);
    UNLOCK();
    return ok ? 0 : -1;
}

EXPORT int fake_count_calls(const char *sym) { return tally_get(&calls, sym); }

EXPORT int fake_call_log(char *buf, size_t n) {
    LOCK();
    snprintf(buf, n, "%s", calllog);
    UNLOCK();
    return 0;
}

EXPORT int fake_attr_sets(const char *entry) { return tally_get(&attr_sets, entry); }

EXPORT long fake_live_allocs(void) {
    LOCK();
    long n = nallocs;
    UNLOCK();
    return n;
}

EXPORT int fake_ctx_depth(void) { return ctx_top; }

EXPORT int fake_peer_enabled(int dev, int peer) {
    LOCK();
    int on = dev >= 0 && dev < MAX_DEV && peer >= 0 && peer < MAX_DEV && peer_on[dev][peer];
    UNLOCK();
    return on;
}
EXPORT int fake_proc_address_calls(void) { return getproc_calls; }

/* ---- init, errors ---- */
static int env_int(const char *name, int dflt) {
    const char *v = getenv(name);
    return v && *v ? atoi(v) : dflt;
}

EXPORT CUresult cuInit(unsigned int flags) {
    ENTER("cuInit");
    if (flags != 0) return RT_CUDA_ERROR_INVALID_VALUE;
    int e = env_int("FAKE_CUDA_INIT_ERROR", 0);
    if (e) return e;
    LOCK();
    ndev = env_int("FAKE_CUDA_DEVICES", 2);
    if (ndev < 0 || ndev > MAX_DEV) ndev = 2;
    driver_version = env_int("FAKE_CUDA_DRIVER_VERSION", 13000);
    for (int i = 0; i < MAX_DEV; i++) ctxs[i].device = i;
    /* FAKE_CUDA_PEERS="0-1,2-3": the pairs with a peer path; unset: all */
    const char *peers = getenv("FAKE_CUDA_PEERS");
    for (int i = 0; i < MAX_DEV; i++)
        for (int j = 0; j < MAX_DEV; j++) can_peer[i][j] = !peers && i != j, peer_on[i][j] = false;
    for (const char *p = peers; p && *p;) {
        int a = -1, b = -1, n = 0;
        if (sscanf(p, "%d-%d%n", &a, &b, &n) == 2 && a >= 0 && b >= 0 && a < MAX_DEV && b < MAX_DEV && a != b)
            can_peer[a][b] = can_peer[b][a] = true;
        p += n ? n : 1;
        while (*p == ',') p++;
    }
    if (!launches) launches = calloc(LOG_CAP, sizeof(launch_rec));
    initialised = true;
    UNLOCK();
    return RT_CUDA_SUCCESS;
}

EXPORT CUresult cuDriverGetVersion(int *v) {
    if (!v) return RT_CUDA_ERROR_INVALID_VALUE;
    *v = driver_version;
    return RT_CUDA_SUCCESS;
}

static const struct {
    int code;
    const char *name, *text;
} errors[] = {
    {0, "CUDA_SUCCESS", "no error"},
    {1, "CUDA_ERROR_INVALID_VALUE", "invalid argument"},
    {2, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory"},
    {3, "CUDA_ERROR_NOT_INITIALIZED", "initialization error"},
    {34, "CUDA_ERROR_STUB_LIBRARY", "CUDA driver is a stub library"},
    {100, "CUDA_ERROR_NO_DEVICE", "no CUDA-capable device is detected"},
    {101, "CUDA_ERROR_INVALID_DEVICE", "invalid device ordinal"},
    {201, "CUDA_ERROR_INVALID_CONTEXT", "invalid device context"},
    {217, "CUDA_ERROR_PEER_ACCESS_UNSUPPORTED", "peer access is not supported between these two devices"},
    {218, "CUDA_ERROR_INVALID_PTX", "a PTX JIT compilation failed"},
    {222, "CUDA_ERROR_UNSUPPORTED_PTX_VERSION", "the provided PTX was compiled with an unsupported toolchain."},
    {400, "CUDA_ERROR_INVALID_HANDLE", "invalid resource handle"},
    {500, "CUDA_ERROR_NOT_FOUND", "named symbol not found"},
    {600, "CUDA_ERROR_NOT_READY", "device not ready"},
    {701, "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES", "too many resources requested for launch"},
    {700, "CUDA_ERROR_ILLEGAL_ADDRESS", "an illegal memory access was encountered"},
    {704, "CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED", "peer access is already enabled"},
    {710, "CUDA_ERROR_ASSERT", "device-side assert triggered"},
    {715, "CUDA_ERROR_ILLEGAL_INSTRUCTION", "an illegal instruction was encountered"},
    {719, "CUDA_ERROR_LAUNCH_FAILED", "unspecified launch failure"},
    {900, "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED", "operation not permitted when stream is capturing"},
    {901, "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED", "operation failed due to a previous error during capture"},
};

EXPORT CUresult cuGetErrorName(CUresult e, const char **s) {
    for (size_t i = 0; i < sizeof errors / sizeof errors[0]; i++)
        if (errors[i].code == e) {
            *s = errors[i].name;
            return RT_CUDA_SUCCESS;
        }
    *s = NULL;
    return RT_CUDA_ERROR_INVALID_VALUE;
}

EXPORT CUresult cuGetErrorString(CUresult e, const char **s) {
    for (size_t i = 0; i < sizeof errors / sizeof errors[0]; i++)
        if (errors[i].code == e) {
            *s = errors[i].text;
            return RT_CUDA_SUCCESS;
        }
    *s = NULL;
    return RT_CUDA_ERROR_INVALID_VALUE;
}

/* ---- devices and contexts ---- */
EXPORT CUresult cuDeviceGetCount(int *n) {
    ENTER("cuDeviceGetCount");
    NEED_INIT();
    *n = ndev;
    return RT_CUDA_SUCCESS;
}

EXPORT CUresult cuDeviceGet(CUdevice *d, int ordinal) {
    ENTER("cuDeviceGet");
    NEED_INIT();
    if (ordinal < 0 || ordinal >= ndev) return RT_CUDA_ERROR_INVALID_DEVICE;
    *d = ordinal;
    return RT_CUDA_SUCCESS;
}

/* Device 0 looks like an H200 (sm_90), the others like an A100 (sm_80);
 * GPUs of one model have one name, as real ones do. */
EXPORT CUresult cuDeviceGetName(char *name, int len, CUdevice d) {
    ENTER("cuDeviceGetName");
    NEED_INIT();
    if (d < 0 || d >= ndev) return RT_CUDA_ERROR_INVALID_DEVICE;
    snprintf(name, (size_t)len, "Fake %s", d == 0 ? "H200" : "A100");
    return RT_CUDA_SUCCESS;
}

EXPORT CUresult cuDeviceGetAttribute(int *v, CUdevice_attribute a, CUdevice d) {
    ENTER("cuDeviceGetAttribute");
    NEED_INIT();
    if (d < 0 || d >= ndev) return RT_CUDA_ERROR_INVALID_DEVICE;
    bool h = d == 0;
    switch (a) {
    case 1: *v = 1024; break;
    case 2: case 3: *v = 1024; break;
    case 4: *v = 64; break;
    case 5: *v = 2147483647; break;
    case 6: case 7: *v = 65535; break;
    case 8: *v = 49152; break;
    case 10: *v = 32; break;
    case 16: *v = h ? 132 : 108; break;
    case 38: *v = h ? 52428800 : 41943040; break; /* L2: 50 MB, 40 MB */
    case 75: *v = h ? 9 : 8; break;
    case 76: *v = 0; break;
    case 97: *v = h ? 232448 : 166912; break;
    default: return RT_CUDA_ERROR_INVALID_VALUE;
    }
    return RT_CUDA_SUCCESS;
}

EXPORT CUresult cuDeviceTotalMem_v2(size_t *bytes, CUdevice d) {
    ENTER("cuDeviceTotalMem_v2");
    NEED_INIT();
    if (d < 0 || d >= ndev) return RT_CUDA_ERROR_INVALID_DEVICE;
    *bytes = (size_t)FAKE_MEM_LIMIT;
    return RT_CUDA_SUCCESS;
}

EXPORT CUresult cuDevicePrimaryCtxRetain(CUcontext *c, CUdevice d) {
    ENTER("cuDevicePrimaryCtxRetain");
    NEED_INIT();
    if (d < 0 || d >= ndev) return RT_CUDA_ERROR_INVALID_DEVICE;
    LOCK();
    ctxs[d].refs++;
    UNLOCK();
    *c = &ctxs[d];
    return RT_CUDA_SUCCESS;
}

EXPORT CUresult cuDevicePrimaryCtxRelease_v2(CUdevice d) {
    ENTER("cuDevicePrimaryCtxRelease_v2");
    NEED_INIT();
    if (d < 0 || d >= ndev) return RT_CUDA_ERROR_INVALID_DEVICE;
    LOCK();
    int ok = ctxs[d].refs > 0;
    if (ok) ctxs[d].refs--;
    UNLOCK();
    return ok ? RT_CUDA_SUCCESS : RT_CUDA_ERROR_INVALID_CONTEXT;
}

EXPORT CUresult cuCtxGetCurrent(CUcontext *c) {
    ENTER("cuCtxGetCurrent");
    NEED_INIT();
    *c = current();
    return RT_CUDA_SUCCESS;
}

/* Replaces the top of the thread's stack (NULL pops it), like the driver. */
EXPORT CUresult cuCtxSetCurrent(CUcontext c) {
    ENTER("cuCtxSetCurrent");
    NEED_INIT();
    if (ctx_top == 0) {
        if (c) ctx_stack[ctx_top++] = c;
    } else if (c) {
        ctx_stack[ctx_top - 1] = c;
    } else {
        ctx_top--;
    }
    return RT_CUDA_SUCCESS;
}

EXPORT CUresult cuCtxPushCurrent_v2(CUcontext c) {
    ENTER("cuCtxPushCurrent_v2");
    NEED_INIT();
    if (!c || ctx_top >= 32) return RT_CUDA_ERROR_INVALID_VALUE;
    ctx_stack[ctx_top++] = c;
    return RT_CUDA_SUCCESS;
}

EXPORT CUresult cuCtxPopCurrent_v2(CUcontext *c) {
    ENTER("cuCtxPopCurrent_v2");
    NEED_INIT();
    if (ctx_top == 0) return RT_CUDA_ERROR_INVALID_CONTEXT;
    CUcontext top = ctx_stack[--ctx_top];
    if (c) *c = top;
    return RT_CUDA_SUCCESS;
}

EXPORT CUresult cuCtxSynchronize(void) {
    ENTER("cuCtxSynchronize");
    NEED_CTX();
    return RT_CUDA_SUCCESS;
}

EXPORT CUresult cuDeviceCanAccessPeer(int *can, CUdevice d, CUdevice peer) {
    ENTER("cuDeviceCanAccessPeer");
    NEED_INIT();
    if (!can) return RT_CUDA_ERROR_INVALID_VALUE;
    if (d < 0 || d >= ndev || peer < 0 || peer >= ndev) return RT_CUDA_ERROR_INVALID_DEVICE;
    *can = can_peer[d][peer];
    return RT_CUDA_SUCCESS;
}

/* The current context gains access to peer's memory, as in the driver. */
EXPORT CUresult cuCtxEnablePeerAccess(CUcontext peer, unsigned int flags) {
    ENTER("cuCtxEnablePeerAccess");
    NEED_CTX();
    if (flags != 0 || !peer || peer < &ctxs[0] || peer >= &ctxs[ndev]) return RT_CUDA_ERROR_INVALID_VALUE;
    int a = current()->device, b = peer->device;
    if (a == b) return RT_CUDA_ERROR_INVALID_DEVICE;
    if (!can_peer[a][b]) return RT_CUDA_ERROR_PEER_ACCESS_UNSUPPORTED;
    LOCK();
    bool was = peer_on[a][b];
    peer_on[a][b] = true;
    UNLOCK();
    return was ? RT_CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED : RT_CUDA_SUCCESS;
}

/* ---- memory ---- */
/* The allocation containing [p, p + n) (lock held). */
static const alloc_rec *find_alloc(uintptr_t p, size_t n) {
    for (int i = 0; i < nallocs; i++)
        if (p >= allocs[i].p && p - allocs[i].p <= allocs[i].n && n <= allocs[i].n - (p - allocs[i].p))
            return &allocs[i];
    return NULL;
}

static bool in_alloc(uintptr_t p, size_t n) { return find_alloc(p, n) != NULL; }

EXPORT CUresult cuMemAlloc_v2(CUdeviceptr *out, size_t n) {
    ENTER("cuMemAlloc_v2");
    NEED_CTX();
    if (capturing_here) return RT_CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
    if (n == 0) return RT_CUDA_ERROR_INVALID_VALUE;
    LOCK();
    if (alloc_bytes + n > FAKE_MEM_LIMIT) {
        UNLOCK();
        return RT_CUDA_ERROR_OUT_OF_MEMORY;
    }
    void *p = aligned_alloc(256, (n + 255) & ~(size_t)255);
    if (!p) {
        UNLOCK();
        return RT_CUDA_ERROR_OUT_OF_MEMORY;
    }
    if (nallocs == cap_allocs) {
        cap_allocs = cap_allocs ? cap_allocs * 2 : 64;
        allocs = realloc(allocs, sizeof *allocs * (size_t)cap_allocs);
    }
    allocs[nallocs++] = (alloc_rec){(uintptr_t)p, n, current()->device};
    alloc_bytes += n;
    UNLOCK();
    *out = (CUdeviceptr)(uintptr_t)p;
    return RT_CUDA_SUCCESS;
}

EXPORT CUresult cuMemFree_v2(CUdeviceptr p) {
    ENTER("cuMemFree_v2");
    NEED_INIT();
    LOCK();
    for (int i = 0; i < nallocs; i++)
        if (allocs[i].p == p) {
            alloc_bytes -= allocs[i].n;
            allocs[i] = allocs[--nallocs];
            UNLOCK();
            free((void *)(uintptr_t)p);
            return RT_CUDA_SUCCESS;
        }
    UNLOCK();
    return RT_CUDA_ERROR_INVALID_VALUE;
}

/* Every copy and memset: no synchronous one while this thread captures, and
 * an async one's stream in the current context. */
static CUresult copy_rules(bool sync, CUstream s) {
    if (sync && capturing_here) return RT_CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
    return sync ? RT_CUDA_SUCCESS : check_stream(s);
}

static CUresult copy(const char *sym, CUdeviceptr dst, const void *hsrc, CUdeviceptr src, void *hdst, size_t n,
                     bool sync, CUstream s) {
    ENTER(sym);
    NEED_CTX();
    CUresult r = copy_rules(sync, s);
    if (r) return r;
    LOCK();
    bool ok = (!dst || in_alloc(dst, n)) && (!src || in_alloc(src, n));
    UNLOCK();
    if (!ok) return RT_CUDA_ERROR_INVALID_VALUE;
    void *to = dst ? (void *)(uintptr_t)dst : hdst;
    const void *from = src ? (const void *)(uintptr_t)src : hsrc;
    if (!to || !from) return RT_CUDA_ERROR_INVALID_VALUE;
    memmove(to, from, n);
    return RT_CUDA_SUCCESS;
}

EXPORT CUresult cuMemcpyHtoD_v2(CUdeviceptr d, const void *h, size_t n) { return copy("cuMemcpyHtoD_v2", d, h, 0, NULL, n, true, NULL); }
EXPORT CUresult cuMemcpyDtoH_v2(void *h, CUdeviceptr s, size_t n) { return copy("cuMemcpyDtoH_v2", 0, NULL, s, h, n, true, NULL); }
EXPORT CUresult cuMemcpyDtoD_v2(CUdeviceptr d, CUdeviceptr s, size_t n) { return copy("cuMemcpyDtoD_v2", d, NULL, s, NULL, n, true, NULL); }
EXPORT CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr d, const void *h, size_t n, CUstream st) {
    return copy("cuMemcpyHtoDAsync_v2", d, h, 0, NULL, n, false, st);
}
EXPORT CUresult cuMemcpyDtoHAsync_v2(void *h, CUdeviceptr s, size_t n, CUstream st) {
    return copy("cuMemcpyDtoHAsync_v2", 0, NULL, s, h, n, false, st);
}
EXPORT CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr d, CUdeviceptr s, size_t n, CUstream st) {
    return copy("cuMemcpyDtoDAsync_v2", d, NULL, s, NULL, n, false, st);
}

/* Each address must lie in memory of its context's device. */
static CUresult peer_copy(const char *sym, CUdeviceptr dst, CUcontext dc, CUdeviceptr src, CUcontext sc, size_t n,
                          bool sync, CUstream s) {
    ENTER(sym);
    NEED_CTX();
    CUresult r = copy_rules(sync, s);
    if (r) return r;
    if (!dc || !sc || dc < &ctxs[0] || dc >= &ctxs[ndev] || sc < &ctxs[0] || sc >= &ctxs[ndev])
        return RT_CUDA_ERROR_INVALID_CONTEXT;
    LOCK();
    const alloc_rec *d = find_alloc(dst, n), *a = find_alloc(src, n);
    bool ok = d && a && d->device == dc->device && a->device == sc->device;
    UNLOCK();
    if (!ok) return RT_CUDA_ERROR_INVALID_VALUE;
    memmove((void *)(uintptr_t)dst, (const void *)(uintptr_t)src, n);
    return RT_CUDA_SUCCESS;
}

EXPORT CUresult cuMemcpyPeer(CUdeviceptr d, CUcontext dc, CUdeviceptr s, CUcontext sc, size_t n) {
    return peer_copy("cuMemcpyPeer", d, dc, s, sc, n, true, NULL);
}
EXPORT CUresult cuMemcpyPeerAsync(CUdeviceptr d, CUcontext dc, CUdeviceptr s, CUcontext sc, size_t n, CUstream st) {
    return peer_copy("cuMemcpyPeerAsync", d, dc, s, sc, n, false, st);
}

static CUresult memset8(const char *sym, CUdeviceptr d, unsigned char v, size_t n, bool sync, CUstream s) {
    ENTER(sym);
    NEED_CTX();
    CUresult r = copy_rules(sync, s);
    if (r) return r;
    LOCK();
    bool ok = in_alloc(d, n);
    UNLOCK();
    if (!ok) return RT_CUDA_ERROR_INVALID_VALUE;
    memset((void *)(uintptr_t)d, v, n);
    return RT_CUDA_SUCCESS;
}

EXPORT CUresult cuMemsetD8_v2(CUdeviceptr d, unsigned char v, size_t n) { return memset8("cuMemsetD8_v2", d, v, n, true, NULL); }
EXPORT CUresult cuMemsetD8Async(CUdeviceptr d, unsigned char v, size_t n, CUstream s) {
    return memset8("cuMemsetD8Async", d, v, n, false, s);
}

/* ---- cuGetProcAddress ---- */
#ifndef FAKE_NO_TMAP
#define FAKE_OPTIONAL_FUNCS RT_CUDA_OPTIONAL_FUNCS
#else
#define FAKE_OPTIONAL_FUNCS(X)
#endif
/* fake_cuda_exec.c's exports, declared from the runtime's own list */
#define FAKE_DECLARE(name, version, symbol, params) CUresult symbol params;
RT_CUDA_FUNCS(FAKE_DECLARE)
FAKE_OPTIONAL_FUNCS(FAKE_DECLARE)
#undef FAKE_DECLARE

/* Every export must have exactly the signature the runtime declared. */
#define FAKE_CHECK_SIG(name, version, symbol, params) \
    _Static_assert(__builtin_types_compatible_p(__typeof__(&symbol), rt_pfn_##name), #symbol " signature");
RT_CUDA_FUNCS(FAKE_CHECK_SIG)
FAKE_OPTIONAL_FUNCS(FAKE_CHECK_SIG)
#undef FAKE_CHECK_SIG

static const struct {
    const char *name;
    int version;
    void *fn;
} procs[] = {
#define FAKE_PROC(name, version, symbol, params) {#name, version, (void *)&symbol},
    RT_CUDA_FUNCS(FAKE_PROC)
    FAKE_OPTIONAL_FUNCS(FAKE_PROC)
#undef FAKE_PROC
};

EXPORT CUresult cuGetProcAddress_v2(const char *symbol, void **fn, int version, cuuint64_t flags,
                                    CUdriverProcAddressQueryResult *found) {
    LOCK();
    getproc_calls++;
    UNLOCK();
    *fn = NULL;
    if (found) *found = 1; /* CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND */
    const char *off = getenv("FAKE_CUDA_NO_GETPROC");
    if (off && *off == '1') return RT_CUDA_ERROR_NOT_FOUND;
    if (flags != RT_CU_GET_PROC_ADDRESS_LEGACY_STREAM) return RT_CUDA_ERROR_INVALID_VALUE;
    for (size_t i = 0; i < sizeof procs / sizeof procs[0]; i++)
        if (strcmp(procs[i].name, symbol) == 0) {
            /* The variant we export exists from procs[i].version on: asking
             * for an older ABI would get another function in a real driver. */
            if (version < procs[i].version) {
                if (found) *found = 2; /* VERSION_NOT_SUFFICIENT */
                return RT_CUDA_ERROR_NOT_FOUND;
            }
            *fn = procs[i].fn;
            if (found) *found = 0;
            return RT_CUDA_SUCCESS;
        }
    return RT_CUDA_ERROR_NOT_FOUND;
}

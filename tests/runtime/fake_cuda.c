/* fake_cuda.c — a fake CUDA driver for libblkrt's tests (see fake_cuda.h).
 *
 * It exports the entry points of runtime/cuda_api.h under their versioned
 * names and cuGetProcAddress_v2, keeps device memory in host memory, records
 * launches (grid, block, shared memory, the bytes of every parameter) and
 * checks what a real driver checks where the runtime could get it wrong: the
 * current context, block and shared-memory limits, memory ranges, capture
 * rules. Failures are injected with fake_fail_next or by the PTX text.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cuda_api.h"
#include "fake_cuda.h"

#define EXPORT __attribute__((visibility("default")))
#define MAX_DEV 8
#define FAKE_MEM_LIMIT (UINT64_C(1) << 32)
#define LOG_CAP 8192

static pthread_mutex_t G = PTHREAD_MUTEX_INITIALIZER;
#define LOCK() pthread_mutex_lock(&G)
#define UNLOCK() pthread_mutex_unlock(&G)

enum { M_MOD = 0x4d4f4431, M_FUNC = 0x46554e31, M_STREAM = 0x53545231, M_EVENT = 0x45564e31, M_GRAPH = 0x47525031,
       M_EXEC = 0x45584531, M_DEAD = 0 };

/* ---- global state ---- */
struct CUctx_st {
    int device;
    int refs;
};
static struct CUctx_st ctxs[MAX_DEV];
static int ndev = 2, driver_version = 13000;
static bool initialised;
/* peer topology (FAKE_CUDA_PEERS) and cuCtxEnablePeerAccess's effect */
static bool can_peer[MAX_DEV][MAX_DEV], peer_on[MAX_DEV][MAX_DEV];

static _Thread_local CUcontext ctx_stack[32];
static _Thread_local int ctx_top;
static _Thread_local int capturing_here; /* captures begun by this thread */

static CUcontext current(void) { return ctx_top ? ctx_stack[ctx_top - 1] : NULL; }

/* call counts and log */
static struct {
    char sym[48];
    int count;
} counts[128];
static int ncounts;
static char calllog[1 << 16];
static size_t calllog_len;
static int getproc_calls;

/* injected failures */
static struct {
    char sym[48];
    int result;
} pending[16];
static int npending;

/* launches */
/* A launch as recorded: what fake_get_launch gives (fake_launch keeps the
 * layout tests/python mirrors) and the parameters over 8 bytes (fake_get_big). */
typedef struct {
    fake_launch l;
    int nbig;
    unsigned char big[FAKE_MAX_BIG][128];
} launch_rec;
static launch_rec *launches; /* ring of LOG_CAP */
static int nlaunches;

/* cuFuncSetAttribute calls per entry */
static struct {
    char entry[128];
    int count;
} attr_sets[64];
static int nattr_sets;

/* allocations */
typedef struct {
    uintptr_t p;
    size_t n;
    int device;            /* of the context current at cuMemAlloc */
} alloc_rec;
static alloc_rec *allocs;
static int nallocs, cap_allocs;
static uint64_t alloc_bytes;

static int enter(const char *sym) {
    LOCK();
    int i = 0;
    while (i < ncounts && strcmp(counts[i].sym, sym) != 0) i++;
    if (i == ncounts && ncounts < 128) {
        snprintf(counts[i].sym, sizeof counts[0].sym, "%s", sym);
        counts[i].count = 0;
        ncounts++;
    }
    if (i < 128) counts[i].count++;
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

#define ENTER(sym)                                    \
    do {                                              \
        int inj_ = enter(sym);                        \
        if (inj_) return inj_;                        \
    } while (0)
#define NEED_INIT()                                          \
    do {                                                     \
        if (!initialised) return RT_CUDA_ERROR_NOT_INITIALIZED; \
    } while (0)
#define NEED_CTX()                                             \
    do {                                                       \
        NEED_INIT();                                           \
        if (!current()) return RT_CUDA_ERROR_INVALID_CONTEXT;  \
    } while (0)

/* ---- test hooks ---- */
EXPORT void fake_reset(void) {
    LOCK();
    ncounts = 0;
    calllog_len = 0;
    calllog[0] = 0;
    npending = 0;
    nlaunches = 0;
    nattr_sets = 0;
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

EXPORT int fake_count_calls(const char *sym) {
    LOCK();
    int n = 0;
    for (int i = 0; i < ncounts; i++)
        if (strcmp(counts[i].sym, sym) == 0) n = counts[i].count;
    UNLOCK();
    return n;
}

EXPORT int fake_call_log(char *buf, size_t n) {
    LOCK();
    snprintf(buf, n, "%s", calllog);
    UNLOCK();
    return 0;
}

EXPORT int fake_attr_sets(const char *entry) {
    LOCK();
    int n = 0;
    for (int i = 0; i < nattr_sets; i++)
        if (strcmp(attr_sets[i].entry, entry) == 0) n = attr_sets[i].count;
    UNLOCK();
    return n;
}

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

static CUresult check_stream(CUstream s);

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

EXPORT CUresult cuFuncSetAttribute(CUfunction f, CUfunction_attribute a, int v) {
    ENTER("cuFuncSetAttribute");
    NEED_INIT();
    if (!f || f->magic != M_FUNC) return RT_CUDA_ERROR_INVALID_HANDLE;
    if (a != RT_CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES) return RT_CUDA_ERROR_INVALID_VALUE;
    int optin = f->mod->ctx->device == 0 ? 232448 : 166912;
    if (v < 0 || v > optin - f->static_shared) return RT_CUDA_ERROR_INVALID_VALUE;
    LOCK();
    f->max_dyn = v;
    int i = 0;
    while (i < nattr_sets && strcmp(attr_sets[i].entry, f->name) != 0) i++;
    if (i == nattr_sets && nattr_sets < 64) {
        snprintf(attr_sets[i].entry, sizeof attr_sets[0].entry, "%s", f->name);
        attr_sets[i].count = 0;
        nattr_sets++;
    }
    if (i < 64) attr_sets[i].count++;
    UNLOCK();
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

static CUresult check_stream(CUstream s) {
    if (!s) return RT_CUDA_SUCCESS;
    if (s->magic != M_STREAM) return RT_CUDA_ERROR_INVALID_HANDLE;
    if (s->ctx != current()) return RT_CUDA_ERROR_INVALID_HANDLE;
    return RT_CUDA_SUCCESS;
}

static void record(const launch_rec *l) {
    LOCK();
    launches[nlaunches % LOG_CAP] = *l;
    nlaunches++;
    UNLOCK();
}

EXPORT CUresult cuLaunchKernel(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz, unsigned int bx,
                               unsigned int by, unsigned int bz, unsigned int shared, CUstream s, void **params,
                               void **extra) {
    ENTER("cuLaunchKernel");
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
    launch_rec rec;
    memset(&rec, 0, sizeof rec);
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
    record(&rec);
    return RT_CUDA_SUCCESS;
}

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
        record(&l);
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
#define FAKE_OPTIONAL_FUNCS RT_CUDA_OPTIONAL_FUNCS
#else
#define FAKE_OPTIONAL_FUNCS(X)
#endif

/* ---- cuGetProcAddress ---- */
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

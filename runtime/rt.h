/* rt.h — libblkrt's internal structures and the entry points of each file.
 *
 *   error.c      the per-thread message, status names, CUresult -> status
 *   driver.c     dlopen of libcuda, the dispatch table (cuda_api.h), init once
 *   device.c     devices, primary contexts, properties; peer access and
 *                copies between GPUs
 *   memory.c     device memory and copies
 *   meta.c       blk-meta line parsing (meta.h)
 *   convert.c    argument conversion (ints, f64 -> f32/f16/bf16/f8 bits)
 *   module.c     loading PTX / cubin, kernels and their variants; copies of
 *                a module on other devices
 *   source.c     loading .blk source through the compiler hook and the cache
 *   lazy.c       kernels from source on a GPU: one variant compiled per new
 *                argument key, at the launch that needs it
 *   cache.c      the content-addressed JIT disk cache (+ sha256.c)
 *   launch.c     checked and raw launches
 *   tmap.c       TMA tensor maps: evaluation, eligibility, the encoding cache
 *   stream.c     streams and events;  graph.c  capture and replay
 *   cpu_device.c the CPU interpreter as a device (through the compiler hook)
 *   profile.c    NVTX ranges, the light profiler (BLK_PROFILE), blkrt_bench
 *
 * Every handle starts with a magic word naming its kind, so a NULL, garbage
 * or wrong-kind handle is reported, not followed. Destroying a handle clears
 * its magic before the free, which catches some (not all) uses after destroy.
 */
#ifndef BLK_RT_H
#define BLK_RT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "blk/blkrt.h"
#include "cuda_api.h"
#include "meta.h"

enum {
    RT_MAGIC_DEVICE = 0x62446576,  /* "bDev" */
    RT_MAGIC_MODULE = 0x624d6f64,  /* "bMod" */
    RT_MAGIC_KERNEL = 0x624b726e,  /* "bKrn" */
    RT_MAGIC_STREAM = 0x62537472,  /* "bStr" */
    RT_MAGIC_EVENT = 0x62457674,   /* "bEvt" */
    RT_MAGIC_GRAPH = 0x62477270,   /* "bGrp" */
    RT_MAGIC_DEAD = 0xdeadb10c,
};

#define RT_IS(h, M) ((h) != NULL && (h)->magic == (M))

/* ---- allocation (error.c) ----
 * Every allocation of libblkrt goes through rt_malloc, rt_calloc,
 * rt_realloc and rt_aligned_alloc, so a test can make the nth one fail
 * (rt_alloc_fail_at) and check that each failure ends in a clean error with
 * nothing leaked. The standard names are redirected to them here, after the
 * system headers above, so every runtime file (which includes rt.h) keeps
 * calling malloc and friends. */
void *rt_malloc(size_t n);
void *rt_calloc(size_t n, size_t size);
void *rt_realloc(void *p, size_t n);
void *rt_aligned_alloc(size_t align, size_t n);
/* Every runtime block is freed with rt_free (free is redirected too): the
 * blocks come from blkrt_set_allocator's pair, behind a header. Memory from
 * elsewhere — what a compiler hook returns (libc malloc) — is freed with
 * rt_libc_free; memory handed to the caller to free() comes from
 * rt_user_malloc (libc, counted by the test mode). */
void rt_free(void *p);
void *rt_user_malloc(size_t n);
void rt_libc_free(void *p);
/* Frees what a compiler hook returned (source.c). */
void rt_free_result(blkrt_compile_result *res);
/* Test mode, per thread: the nth allocation from now (1 = the next) fails,
 * the others succeed; 0 = off. Returns how many allocations this thread made
 * since the previous call. */
long rt_alloc_fail_at(long nth);
#ifndef RT_NO_ALLOC_REDIRECT
#define malloc(n) rt_malloc(n)
#define calloc(n, size) rt_calloc(n, size)
#define realloc(p, n) rt_realloc(p, n)
#define aligned_alloc(align, n) rt_aligned_alloc(align, n)
#define free(p) rt_free(p)
#endif

/* ---- error.c ---- */
/* Size of the per-thread message buffer (blkrt_last_error). */
#define RT_MSG_SIZE 8192
blkrt_status rt_err(blkrt_status s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A failed driver call: the status for r, message "<what>: <CUDA_ERROR_X> (<n>): <text>". */
blkrt_status rt_cu_err(CUresult r, const char *what);
/* Name and description of a CUresult (from the driver when loaded). */
const char *rt_cu_name(CUresult r);
const char *rt_cu_string(CUresult r);
/* Append text to the current thread's message (e.g. a JIT log). */
void rt_err_append(const char *text);

/* ---- driver.c ---- */
/* The dispatch table, loading and initialising the driver on first use.
 * NULL (with the message set) when there is no usable driver. */
const rt_cuda *rt_driver(blkrt_status *status);
/* The driver is loaded but cuInit reported no device. */
bool rt_driver_has_no_device(void);
/* The table if the driver is already initialised, else NULL; never loads it. */
const rt_cuda *rt_driver_peek(void);
int rt_driver_version(void);

/* ---- the launch log (stream.c) ----
 * The last RT_LAUNCH_LOG launches of a GPU device, so that a synchronisation
 * that fails or runs out of time can name the launch it was waiting for. A
 * record is "finished" once a synchronisation of its stream (or of the
 * device) that began after the launch succeeded; the oldest unfinished
 * record of a stream is the launch its work is stuck in, or faulted in
 * (stream order). Zeroed memory is an empty log. Writers take a spin lock
 * for a few stores (the launch path stays lock-free of anything slower). */
#define RT_LAUNCH_LOG 16
typedef struct {
    uint64_t seq;            /* 1, 2, ... in launch order; 0: an empty slot */
    CUstream stream;
    bool finished;
    char kernel[64];         /* a copy: the module may be unloaded */
    uint32_t grid[3], threads;
    double ms;               /* rt_now_ms() at the launch */
} rt_launch_rec;

typedef struct {
    atomic_int lock;
    uint64_t next;           /* seq of the newest launch */
    rt_launch_rec rec[RT_LAUNCH_LOG];
} rt_launch_log;

/* ---- TMA tensor maps (tmap.c) ----
 * A map of a variant's tmaps= evaluated for one launch: exactly the
 * arguments of cuTensorMapEncodeTiled (zeros past the rank, so the struct
 * compares with memcmp and is the encoding cache's key). */
typedef struct {
    int dtype;                      /* CU_TENSOR_MAP_DATA_TYPE_* */
    uint32_t rank;
    uint64_t addr;                  /* the base pointer argument */
    cuuint64_t dims[RT_TMAP_MAX_RANK];        /* elements, fastest first */
    cuuint64_t strides[RT_TMAP_MAX_RANK - 1]; /* bytes, of dims 1..rank-1 */
    uint32_t box[RT_TMAP_MAX_RANK];
    uint32_t elem_strides[RT_TMAP_MAX_RANK]; /* all 1 */
    int interleave, swizzle, l2, oob;        /* CU_TENSOR_MAP_* */
} rt_tmap_args;

/* Why a map cannot be encoded for a launch (RT_TMAP_FITS: it can). */
typedef enum {
    RT_TMAP_FITS = 0,
    RT_TMAP_NULL_BASE,       /* the pointer is NULL */
    RT_TMAP_BASE_ALIGN,      /* not 16-byte aligned */
    RT_TMAP_DIM_RANGE,       /* a dim (or a factor of it) outside 1..2^32 */
    RT_TMAP_STRIDE_RANGE,    /* a stride (or a factor) < 1, or >= 2^40 bytes */
    RT_TMAP_STRIDE_ALIGN,    /* a stride in bytes not a multiple of 16 */
    RT_TMAP_BOX_ALIGN,       /* box[0] * element size not a multiple of 16 bytes */
    RT_TMAP_BOX_SWIZZLE,     /* box[0] * element size over the swizzle span */
} rt_tmap_fit;

/* Evaluate map t for a launch's arguments (already checked against the
 * params by rt_convert_arg): *out is filled as far as it got. */
rt_tmap_fit rt_tmap_eval(const rt_tmap *t, const blkrt_arg *args, rt_tmap_args *out);
const char *rt_tmap_fit_text(rt_tmap_fit f);
/* CU_TENSOR_MAP_DATA_TYPE_* of a blk scalar type (1-byte types: UINT8). */
int rt_tmap_dtype(rt_type t);

/* Encoded maps of one device, keyed by rt_tmap_args (the device fixes the
 * context): LLM serving launches the same tensors over and over, and each
 * encode is a driver call. Round-robin replacement. */
#define RT_TMAP_CACHE 64
typedef struct {
    rt_tmap_args key;
    uint64_t hash;           /* of key; 0: an empty slot */
    unsigned char map[sizeof(CUtensorMap)]; /* bytes: CUtensorMap's 128-byte alignment would over-align the device */
} rt_tmap_entry;

typedef struct {
    pthread_mutex_t lock;
    int next;                /* the slot the next miss replaces */
    rt_tmap_entry e[RT_TMAP_CACHE];
} rt_tmap_cache;

/* ---- devices ---- */
typedef struct rt_cpu_mem rt_cpu_mem;

struct blkrt_device {
    uint32_t magic;
    blkrt_device_kind kind;
    const rt_cuda *cu;       /* GPU: the dispatch table */
    CUdevice dev;
    CUcontext ctx;           /* the ordinal's primary context */
    blkrt_device_info info;
    int max_block[3];
    atomic_int children;     /* live modules, streams, events, graphs */
    rt_cpu_mem *cpu;         /* CPU: the allocation table */
    rt_launch_log launches;  /* GPU: the last launches (stream.c) */
    rt_tmap_cache tmaps;     /* GPU: encoded tensor maps (tmap.c) */
};

/* Make d's context current for one API call and restore the caller's after:
 * a thread that already has it current (the common case) costs one call. */
typedef struct {
    bool pushed;
} rt_ctx_scope;

/* The device's context around a driver call. A thread with no current
 * context gets the device's primary context bound and keeps it (as the CUDA
 * runtime does), so a launch loop pays one cuCtxGetCurrent per call instead
 * of a push and a pop; a thread with another context current (the
 * application's) gets ours pushed and popped around the call, so its own
 * stays current. blkrt_device_close unbinds it from the closing thread. */
static inline CUresult rt_ctx_enter(blkrt_device *d, rt_ctx_scope *sc) {
    CUcontext cur = NULL;
    sc->pushed = false;
    CUresult r = d->cu->cuCtxGetCurrent(&cur);
    if (r != RT_CUDA_SUCCESS || cur == d->ctx) return r;
    if (!cur) return d->cu->cuCtxSetCurrent(d->ctx);
    r = d->cu->cuCtxPushCurrent(d->ctx);
    sc->pushed = r == RT_CUDA_SUCCESS;
    return r;
}

static inline void rt_ctx_leave(blkrt_device *d, rt_ctx_scope *sc) {
    if (sc->pushed) {
        CUcontext dummy;
        d->cu->cuCtxPopCurrent(&dummy);
    }
}

/* Status for a device handle argument (names the function in the message). */
blkrt_status rt_check_device(blkrt_device *d, const char *fn);

/* ---- modules and kernels ---- */
typedef struct {
    const char *entry;
    CUfunction fn;
    int num_warps;           /* 0 for unchecked kernels */
    int shared;              /* dynamic shared bytes (blk-meta) */
    int static_shared;       /* the function's own (cuFuncGetAttribute) */
    int max_threads;         /* the function's limit (registers) */
    uint64_t need_d16, need_eq1; /* parameters this variant assumes divisible by 16 / equal to 1 */
    int nspec;
    int meta_line;
    atomic_int dyn_limit;    /* dynamic shared memory the function is set up for */
    int ntmaps;              /* tensor maps passed after the declared params (tmaps=) */
    const rt_tmap *tmaps;    /* in the module's (or lazy variant's) meta */
} rt_variant;

/* A variant of a kernel from source, compiled at its first launch (lazy.c).
 * Immutable once published, except v.dyn_limit (atomic). */
typedef struct rt_lazy_variant {
    rt_variant v;
    uint64_t key_d16, key_eq1;    /* the argument key it was compiled for (v assumes a subset) */
    CUmodule cu;                  /* its own driver module */
    rt_meta meta;                 /* its blk-meta line (v.entry points into it) */
    char *jit_log;                /* the driver's info log of its load */
    struct rt_lazy_variant *next; /* compiled before it */
} rt_lazy_variant;

struct blkrt_kernel {
    uint32_t magic;
    blkrt_module *mod;
    const char *name;
    bool checked;
    const rt_meta_kernel *meta; /* checked kernels: params, consts */
    int nvariants;
    rt_variant *variants;       /* most specialised first; the last is the least */
    blkrt_kernel *next_raw;     /* unchecked kernels looked up later */
    /* lazy kernels (from source on a GPU): no `variants`; launches look up
     * their argument key in `compiled` and compile a variant on a miss */
    bool lazy;
    uint64_t may_d16, may_eq1;  /* parameters a key may assume divisible by 16 / equal to 1 */
    _Atomic(rt_lazy_variant *) compiled; /* newest first; the head is stored with release */
    /* blkrt_profile_set_work: per launch, read and written under the
     * profiler's lock (profile.c) */
    double prof_bytes, prof_flops;
};

typedef struct rt_lazy rt_lazy;
typedef struct rt_origin rt_origin;

struct blkrt_module {
    uint32_t magic;
    blkrt_device *dev;
    CUmodule cu;
    rt_meta meta;
    int nkernels;
    blkrt_kernel *kernels;       /* one per blk-meta kernel name */
    pthread_mutex_t lock;        /* raw kernel list, shared-memory set-up */
    blkrt_kernel *raw;
    char *jit_log;
    /* CPU device */
    const blkrt_compiler *compiler;
    void *program;
    pthread_mutex_t run_lock;    /* the interpreter program is not reentrant */
    rt_lazy *lazy;               /* GPU modules from source: how to compile variants (lazy.c) */
    /* the same kernels on other devices (blkrt_module_for_device) */
    rt_origin *origin;           /* what it was loaded from; NULL in copies (they ask their root) */
    blkrt_module *root;          /* a copy: the module it copies; NULL otherwise */
    pthread_mutex_t copies_lock; /* root: the copy list, and the loads that add to it */
    blkrt_module *copies;        /* root: one per other device handle, newest first */
    blkrt_module *next_copy;
};

/* Build the kernels of a loaded module from its parsed meta (GPU: looks up
 * every entry; lazy modules: none yet). Used by module.c, cpu_device.c and
 * lazy.c. */
blkrt_status rt_module_bind_kernels(blkrt_module *m);
void rt_module_free(blkrt_module *m);
blkrt_module *rt_module_new(blkrt_device *d);
/* The last step of every load: kernels bound (under d's context), the
 * device's child count, *out; on error m is freed. */
blkrt_status rt_module_finish_load(blkrt_module *m, blkrt_status st, blkrt_module **out);
/* cuModuleLoadDataEx of image with error and info logs (the caller's
 * context must be current). *info_log (malloc'd) is set either way. */
blkrt_status rt_load_image(blkrt_device *d, const void *image, const char *ptx_text, CUmodule *out, char **info_log);
/* Remember where m came from, for its copies on other devices: PTX text or
 * a cubin image (with its blk-meta text or NULL), taking ownership of data;
 * or .blk source and its options (copied). Replaces an earlier origin.
 * BLKRT_ERR_OUT_OF_MEMORY (data freed) if the copy cannot be made. */
blkrt_status rt_module_keep_image(blkrt_module *m, bool cubin, char *data, size_t len, const char *meta);
blkrt_status rt_module_keep_source(blkrt_module *m, const char *source, size_t len, const blkrt_source_options *o);
/* v's CUfunction in cu and its limits (the context must be current). */
blkrt_status rt_bind_function(blkrt_module *m, CUmodule cu, rt_variant *v);

/* ---- lazy.c ---- */
/* A GPU module from source whose variants compile at first need: the
 * compiler's describe hook (through the cache) gives the kernels. */
blkrt_status rt_lazy_load(blkrt_device *d, const blkrt_compiler *c, const blkrt_compile_request *req,
                          const char *cache_dir, blkrt_module **out);
/* The variant of lazy kernel k for the argument key (d16, eq1: masks already
 * limited to may_d16 / may_eq1), compiled and loaded now if it is new. */
blkrt_status rt_lazy_get(blkrt_kernel *k, uint64_t d16, uint64_t eq1, rt_variant **out);
/* Unload every compiled variant's module (the context is entered here). */
blkrt_status rt_lazy_unload(blkrt_module *m);
void rt_lazy_free(blkrt_module *m);
const char *rt_lazy_jit_log(blkrt_module *m);

/* ---- tmap.c (the rest) ---- */
/* Can every map of v be encoded for these arguments? Fills out[0..ntmaps)
 * either way up to the first that cannot; *bad = its index. */
rt_tmap_fit rt_tmaps_fit(const rt_variant *v, const blkrt_arg *args, rt_tmap_args *out, int *bad);
/* The encoded map of a (the device's cache, or cuTensorMapEncodeTiled on a
 * miss) into *map; d's context must be current. Errors name kernel k and
 * the map's parameter. */
blkrt_status rt_tmap_encode(blkrt_device *d, const blkrt_kernel *k, const rt_tmap *t, const rt_tmap_args *a,
                            CUtensorMap *map);
void rt_tmap_cache_init(rt_tmap_cache *c);
void rt_tmap_cache_destroy(rt_tmap_cache *c);

/* ---- convert.c ---- */
/* Check one argument against parameter p and write its value (in the
 * parameter's width) to *slot; sets *is_d16 / *is_eq1 for specialisation.
 * On error: the message names the argument. */
blkrt_status rt_convert_arg(const blkrt_kernel *k, int index, const blkrt_arg *a, uint64_t *slot, bool *is_d16,
                            bool *is_eq1);
uint16_t rt_f64_to_f16(double x);
uint16_t rt_f64_to_bf16(double x);
uint8_t rt_f64_to_f8e4m3(double x);
uint8_t rt_f64_to_f8e5m2(double x);

/* ---- streams, events, graphs ---- */
typedef struct rt_cpu_launch rt_cpu_launch;

struct blkrt_stream {
    uint32_t magic;
    blkrt_device *dev;
    CUstream cu;
    bool foreign;            /* adopted with blkrt_stream_wrap: never destroyed here */
    /* capturing into a graph (GPU: set by graph.c, so launches are not
     * logged); CPU device: launches recorded while capturing */
    bool capturing;
    rt_cpu_launch *cap_first, *cap_last;
};

struct blkrt_event {
    uint32_t magic;
    blkrt_device *dev;
    CUevent cu;
    double cpu_ms;           /* CPU: time of the record, -1 before */
};

struct blkrt_graph {
    uint32_t magic;
    blkrt_device *dev;
    CUgraphExec exec;
    rt_cpu_launch *cpu_first;  /* CPU: the recorded launches */
};

/* Resolve a stream argument for device d (NULL = default stream). */
blkrt_status rt_stream_for(blkrt_device *d, blkrt_stream *s, CUstream *out, const char *fn);
/* Log a launch issued on cs (s: its handle or NULL; launches into a capture
 * are not logged: they run only when the graph does). */
void rt_launch_logged(blkrt_device *d, blkrt_stream *s, CUstream cs, const char *kernel, const uint32_t grid[3],
                      uint32_t threads);
/* The seq of the newest launch: take it before a synchronisation ... */
uint64_t rt_launch_mark(blkrt_device *d);
/* ... and pass it after: r == SUCCESS marks the launches of cs (all: of
 * every stream) up to mark finished and returns OK; otherwise the error of
 * `call`, naming the oldest unfinished launch. */
blkrt_status rt_synced(blkrt_device *d, CUstream cs, bool all, uint64_t mark, CUresult r, const char *call);
/* rt_cu_err for a call on d that may report an earlier kernel's fault
 * (a synchronous copy): a fault code also names the oldest unfinished launch. */
blkrt_status rt_cu_err_on(blkrt_device *d, CUresult r, const char *call);

/* ---- cpu_device.c ---- */
blkrt_status rt_cpu_open(blkrt_device *d);
void rt_cpu_close(blkrt_device *d);
blkrt_status rt_cpu_malloc(blkrt_device *d, size_t bytes, blkrt_ptr *out);
blkrt_status rt_cpu_free(blkrt_device *d, blkrt_ptr p);
/* A device range [p, p + bytes) inside one allocation, as a host pointer. */
blkrt_status rt_cpu_range(blkrt_device *d, blkrt_ptr p, size_t bytes, void **host, const char *fn);
blkrt_status rt_cpu_load_source(blkrt_device *d, const blkrt_compiler *c, const blkrt_compile_request *req,
                                blkrt_module **out);
blkrt_status rt_cpu_launch_kernel(blkrt_kernel *k, const rt_variant *v, const uint32_t grid[3], const blkrt_arg *args,
                                  int nargs, blkrt_stream *s);
blkrt_status rt_cpu_replay(rt_cpu_launch *first);
void rt_cpu_free_launches(rt_cpu_launch *first);
double rt_now_ms(void);

/* ---- profile.c ----
 * rt_prof_active is nonzero while a tool takes NVTX ranges or the profiler
 * times launches: the launch path reads it once (relaxed) and does nothing
 * else when it is 0. rt_profile_init runs once per process (from
 * blkrt_device_open, before any launch): BLK_PROFILE and the NVTX
 * injection. */
extern atomic_int rt_prof_active;
void rt_profile_init(void);
typedef struct {
    char label[232];         /* "kernel[config]"; the config starts at cfg */
    int cfg;
    bool timed;              /* events recorded (GPU) / t0 taken (CPU) */
    bool nvtx;               /* a range was pushed */
    CUevent ev[2];
    double t0;
} rt_prof_launch;
/* Around one launch of k (variant v, NULL for an unchecked kernel) on s/cs.
 * GPU: call both with d's context current. end's ok: the launch was issued
 * (a failed one is not counted). */
void rt_prof_begin(rt_prof_launch *p, blkrt_kernel *k, const rt_variant *v, blkrt_stream *s, CUstream cs);
void rt_prof_end(rt_prof_launch *p, blkrt_kernel *k, blkrt_stream *s, CUstream cs, bool ok);
/* blkrt_device_close: time the launches of d still pending (their events
 * belong to its context). */
void rt_prof_device_closing(blkrt_device *d);

/* ---- source.c ---- */
const blkrt_compiler *rt_compiler(void);
/* A hook's output for req through the disk cache in dir (NULL: no cache):
 * kind "ptx" (compile_ptx) or "meta" (describe) is part of the cache key.
 * On failure the message is "<path>: compiling [<what> ]for <arch> failed:"
 * and the compiler's log (what: NULL or e.g. "kernel 'k' variant x=d16").
 * *text is malloc'd. */
blkrt_status rt_compile_cached(const blkrt_compiler *c, const char *kind, const blkrt_compile_request *req,
                               const char *dir, const char *what, char **text, size_t *len);

/* ---- small helpers (error.c) ---- */
char *rt_strndup(const char *s, size_t n);

#endif

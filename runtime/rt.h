/* rt.h — libblkrt's internal structures and the entry points of each file.
 *
 * The public entry points check their arguments and call the device's
 * operations table (rt_device_ops below), which one of two files implement:
 *
 *   front (public API, argument checks, no driver calls of their own):
 *   device.c     opening a device (picks its table: the one place that
 *                asks for a kind), closing, properties, synchronisation
 *   memory.c     device memory and copies
 *   module.c     modules and kernels: binding blk-meta to variants, lookup,
 *                copies of a module on other devices
 *   source.c     the registered compiler; loading .blk source
 *   launch.c     checked and raw launches: arguments, variant, limits;
 *                the programs that run at once (max_programs)
 *   stream.c     streams and events;  graph.c  capture and replay
 *   autotune.c   choosing a config by timing (public API only)
 *   profile.c    NVTX ranges, the light profiler (BLK_PROFILE), blkrt_bench
 *
 *   the devices (each fills one rt_device_ops):
 *   gpu_device.c the CUDA driver: devices, primary contexts, peers, memory;
 *                the table rt_gpu_ops (gpu.h: what the gpu_*.c files share)
 *   gpu_module.c loading PTX / cubin, binding functions, launches
 *   gpu_stream.c streams, events, graphs, timed waits; the launch log
 *   lazy.c       kernels from source on a GPU: one variant compiled per new
 *                argument key, at the launch that needs it
 *   cpu_device.c the CPU interpreter as a device (rt_cpu_ops)
 *
 *   below both (no calls upward):
 *   error.c      the per-thread message, status names, the allocator
 *   driver.c     dlopen of libcuda, the dispatch table (cuda_api.h), init
 *                once; CUresult -> name, text and status
 *   meta.c       blk-meta line parsing (meta.h)
 *   convert.c    argument conversion (ints, f64 -> f32/f16/bf16/f8 bits)
 *   cache.c      the content-addressed JIT disk cache (+ sha256.c) and a
 *                compiler hook's output through it
 *   tmap.c       TMA tensor maps: evaluation, eligibility, the encoding cache
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
/* A failed driver call: the status for r, message "<what>: <CUDA_ERROR_X> (<n>): <text>". */
blkrt_status rt_cu_err(CUresult r, const char *what);
/* Name and description of a CUresult (from the driver when loaded). */
const char *rt_cu_name(CUresult r);
const char *rt_cu_string(CUresult r);

/* ---- the launch log (gpu_stream.c) ----
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
typedef struct rt_device_ops rt_device_ops;

struct blkrt_device {
    uint32_t magic;
    const rt_device_ops *ops; /* what this kind of device does (rt_gpu_ops, rt_cpu_ops) */
    const rt_cuda *cu;       /* GPU: the dispatch table */
    CUdevice dev;
    CUcontext ctx;           /* the ordinal's primary context */
    blkrt_device_info info;
    int max_block[3];
    atomic_int children;     /* live modules, streams, events, graphs */
    rt_cpu_mem *cpu;         /* CPU: the allocation table */
    rt_launch_log launches;  /* GPU: the last launches (gpu_stream.c) */
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

/* r = call, made with d's context current around it (rt_ctx_enter /
 * rt_ctx_leave); r is the enter's error where that failed. */
#define RT_CTX_CALL(d, r, call)                                                                                        \
    do {                                                                                                               \
        rt_ctx_scope rt_sc_;                                                                                           \
        (r) = rt_ctx_enter((d), &rt_sc_);                                                                              \
        if ((r) == RT_CUDA_SUCCESS) (r) = (call);                                                                      \
        rt_ctx_leave((d), &rt_sc_);                                                                                    \
    } while (0)

/* Status for a device handle argument (names the function in the message). */
static inline blkrt_status rt_check_device(blkrt_device *d, const char *fn) {
    if (!RT_IS(d, RT_MAGIC_DEVICE)) return rt_err(BLKRT_ERR_INVALID_HANDLE, "%s: not a device handle", fn);
    return BLKRT_OK;
}

/* A device's streams, events and graphs (the public front's handles): the
 * device counts them, so that it does not close under one.
 * rt_child_keep: after the device's create call returned st — counted and
 * returned when st is BLKRT_OK, else freed (NULL). rt_child_free: after its
 * destroy succeeded — magic cleared (catches some uses after destroy),
 * freed, no longer counted. (device.c) */
void *rt_child_keep(blkrt_device *d, blkrt_status st, void *h);
void rt_child_free(blkrt_device *d, uint32_t *magic, void *h);

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
    int cluster;             /* cluster=: CTAs per cluster along grid x; 0 or 1: plain launches */
    bool cluster_required;   /* cluster_required=1 (@cluster): never a plain launch; grid x a multiple of cluster */
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

/* Build the kernels of a loaded module from its parsed meta (each variant
 * bound by the device's bind_function; lazy modules: no variant yet). Used
 * by the devices' loaders. */
blkrt_status rt_module_bind_kernels(blkrt_module *m);
/* Frees m and what it owns (the device's part through ops->release). */
void rt_module_free(blkrt_module *m);
blkrt_module *rt_module_new(blkrt_device *d);
/* Remember where m came from, for its copies on other devices: PTX text or
 * a cubin image (with its blk-meta text or NULL), taking ownership of data;
 * or .blk source and its options (copied). Replaces an earlier origin.
 * BLKRT_ERR_OUT_OF_MEMORY (data freed) if the copy cannot be made. */
blkrt_status rt_module_keep_image(blkrt_module *m, bool cubin, char *data, size_t len, const char *meta);
blkrt_status rt_module_keep_source(blkrt_module *m, const char *source, size_t len, const blkrt_source_options *o);

/* ---- lazy.c ---- */
/* The variant of lazy kernel k for the argument key (d16, eq1: masks already
 * limited to may_d16 / may_eq1), compiled and loaded now if it is new.
 * (The rest of lazy.c is the GPU device's: gpu.h.) */
blkrt_status rt_lazy_get(blkrt_kernel *k, uint64_t d16, uint64_t eq1, rt_variant **out);

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
    /* capturing into a graph (GPU: set by gpu_stream.c, so launches are not
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

/* Resolve a stream argument for device d (NULL = default stream; stream.c). */
blkrt_status rt_stream_for(blkrt_device *d, blkrt_stream *s, CUstream *out, const char *fn);

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
    bool timed;              /* events recorded / t0 taken (the device's timer_start) */
    bool events;             /* timed by ev (a GPU), not by t0 (the host clock) */
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

/* ---- the device operations table ----
 * Everything that differs between a GPU (over the dlopen'd CUDA driver:
 * gpu_*.c) and the CPU interpreter (cpu_device.c), as one table per kind,
 * like a compiler's target struct. blkrt_device_open picks the table; every
 * other file calls through d->ops and never asks which kind a device is.
 * The public entry points (device.c, memory.c, module.c, ...) check handles
 * and arguments first, in the same order for both kinds, so each function
 * here gets valid handles of its own device; a device that cannot do a
 * thing returns BLKRT_ERR_UNSUPPORTED with a message naming the way that
 * works. */
typedef enum { RT_COPY_HTOD, RT_COPY_DTOH, RT_COPY_DTOD, RT_MEMSET } rt_copy_kind;

struct rt_device_ops {
    /* devices: open fills d (info, limits) for ordinal; close frees what
     * open made (the handle itself is freed by device.c) */
    blkrt_status (*open)(blkrt_device *d, int ordinal);
    blkrt_status (*close)(blkrt_device *d);
    blkrt_status (*synchronize)(blkrt_device *d);
    blkrt_status (*synchronize_timeout)(blkrt_device *d, uint32_t timeout_ms, const char *fn);
    blkrt_status (*set_step_limit)(blkrt_device *d, uint64_t steps);
    /* "GPU 2", "the CPU device": d in messages */
    const char *(*where)(const blkrt_device *d, char *buf, size_t n);
    /* blkrt_bench's default cache flush: bytes of a buffer that evicts the caches */
    size_t (*flush_bytes)(blkrt_device *d);
    /* a blkrt_ptr is a host address (host arrays may be passed as pointers) */
    bool host_memory;

    /* memory: bytes > 0, p != 0; copy gets bytes > 0, the host pointer
     * checked, cs resolved from s (async only) */
    blkrt_status (*mem_alloc)(blkrt_device *d, size_t bytes, blkrt_ptr *out);
    blkrt_status (*mem_free)(blkrt_device *d, blkrt_ptr p);
    blkrt_status (*copy)(blkrt_device *d, rt_copy_kind kind, bool async, blkrt_ptr dptr, void *host, blkrt_ptr sptr,
                         uint8_t value, size_t bytes, blkrt_stream *s, CUstream cs, const char *fn);

    /* modules: the loaders get checked, non-empty input and *out = NULL;
     * bind_function binds variant v to its entry in cu (a GPU: under the
     * context, entered by the caller), bind_entry the same for an entry
     * without blk-meta (entering the context itself); unload is the
     * device's part of blkrt_module_unload (driver modules), release the
     * device's part of freeing a module (no driver calls) */
    blkrt_status (*load_ptx)(blkrt_device *d, const char *ptx, size_t len, blkrt_module **out);
    blkrt_status (*load_cubin)(blkrt_device *d, const void *image, size_t size, const char *meta, blkrt_module **out);
    blkrt_status (*load_source)(blkrt_device *d, const blkrt_compiler *c, const blkrt_compile_request *req,
                                const char *cache_dir, blkrt_module **out);
    blkrt_status (*bind_function)(blkrt_module *m, CUmodule cu, rt_variant *v);
    blkrt_status (*bind_entry)(blkrt_module *m, rt_variant *v);
    blkrt_status (*unload)(blkrt_module *m);
    void (*release)(blkrt_module *m);
    const char *(*jit_log)(blkrt_module *m);

    /* launches: launch gets a fully checked launch (variant v, the
     * converted params[0..nargs), the variant's maps ta, cs from s) and
     * does the profiler's begin/end when prof; launch_raw the same for
     * blkrt_launch_raw (threads: the block's, checked), NULL where a
     * device launches checked kernels only */
    blkrt_status (*launch)(blkrt_kernel *k, const rt_variant *v, const uint32_t grid[3], const blkrt_arg *args,
                           int nargs, void **params, const rt_tmap_args *ta, blkrt_stream *s, CUstream cs, bool prof);
    blkrt_status (*launch_raw)(blkrt_kernel *k, rt_variant *v, const uint32_t grid[3], const uint32_t block[3],
                               uint32_t shared_bytes, void **params, blkrt_stream *s, CUstream cs, uint32_t threads);
    /* how many programs of variant v run at once on k's device (the grid
     * of a persistent kernel): > 0, or an error saying why none fits */
    blkrt_status (*max_programs)(blkrt_kernel *k, const rt_variant *v, uint32_t *out);
    /* the profiler's timing of one launch: sets p->timed (and p->events) */
    void (*timer_start)(blkrt_device *d, rt_prof_launch *p, CUstream cs);

    /* streams and events: create/destroy get the handle with magic and dev
     * set (create's is freed by the caller on error); cs is resolved */
    blkrt_status (*stream_create)(blkrt_stream *s);
    blkrt_status (*stream_wrap)(blkrt_device *d, uint64_t custream, blkrt_stream **out);
    blkrt_status (*stream_destroy)(blkrt_stream *s);
    blkrt_status (*stream_synchronize)(blkrt_stream *s);
    blkrt_status (*stream_synchronize_timeout)(blkrt_device *d, CUstream cs, uint32_t timeout_ms, const char *fn);
    blkrt_status (*event_create)(blkrt_event *e);
    blkrt_status (*event_destroy)(blkrt_event *e);
    blkrt_status (*event_record)(blkrt_event *e, CUstream cs);
    blkrt_status (*event_synchronize)(blkrt_event *e);
    blkrt_status (*event_elapsed_ms)(blkrt_event *start, blkrt_event *end, float *ms);

    /* graphs: capture_end fills g (allocated by the caller, freed by it on
     * error); capture_abandon ends a capture that has no graph to go to */
    blkrt_status (*capture_begin)(blkrt_stream *s);
    blkrt_status (*capture_end)(blkrt_stream *s, blkrt_graph *g);
    void (*capture_abandon)(blkrt_stream *s);
    blkrt_status (*graph_launch)(blkrt_graph *g, blkrt_stream *s, CUstream cs);
    blkrt_status (*graph_destroy)(blkrt_graph *g);
};

extern const rt_device_ops rt_gpu_ops; /* gpu_device.c */
extern const rt_device_ops rt_cpu_ops; /* cpu_device.c */

/* ---- source.c ---- */
const blkrt_compiler *rt_compiler(void);

/* ---- cache.c: a compiler hook through the disk cache ---- */
/* A hook's output for req through the disk cache in dir (NULL: no cache):
 * kind "ptx" (compile_ptx) or "meta" (describe) is part of the cache key.
 * On failure the message is "<path>: compiling [<what> ]for <arch> failed:"
 * and the compiler's log (what: NULL or e.g. "kernel 'k' variant x=d16").
 * *text is malloc'd. */
blkrt_status rt_compile_cached(const blkrt_compiler *c, const char *kind, const blkrt_compile_request *req,
                               const char *dir, const char *what, char **text, size_t *len);
/* Frees what a compiler hook returned. */
void rt_free_result(blkrt_compile_result *res);

/* ---- small helpers (error.c) ---- */
char *rt_strndup(const char *s, size_t n);
/* CLOCK_MONOTONIC in milliseconds. */
double rt_now_ms(void);

#endif

/* blkrt.h — the public API of libblkrt, the blk runtime.
 *
 * libblkrt loads compiled blk kernels (PTX or cubin carrying "blk-meta" lines,
 * see docs/runtime.md) and launches them through the CUDA Driver API, which it
 * opens with dlopen at run time: a program linked with libblkrt starts and
 * reports BLKRT_ERR_NO_DRIVER cleanly on a machine without CUDA. The CPU
 * interpreter is a device too (BLKRT_DEVICE_CPU) when a compiler is linked in
 * (libblk.so, blk/blk.h; or libblkrt_jit, blk/blkrt_jit.h).
 *
 *   blkrt_device *d;  blkrt_module *m;  blkrt_kernel *k;  blkrt_ptr x, y, out;
 *   if (blkrt_device_open(0, &d) || blkrt_module_load_ptx(d, ptx, len, &m) ||
 *       blkrt_module_kernel(m, "vector_add", &k))
 *       fprintf(stderr, "%s\n", blkrt_last_error());
 *   blkrt_malloc(d, n * 4, &x); ...
 *   blkrt_arg args[] = {BLKRT_PTR(x), BLKRT_PTR(y), BLKRT_PTR(out), BLKRT_INT(n)};
 *   uint32_t grid[3] = {(n + 1023) / 1024, 1, 1};
 *   blkrt_launch(k, grid, args, 4, NULL);
 *
 * Conventions. Every function returns a blkrt_status; on failure
 * blkrt_last_error() holds a message for the calling thread (successful calls
 * leave it alone). Nothing here prints (but the table BLK_PROFILE=1 prints at
 * exit), exits or aborts. Handles are opaque; a NULL or wrong-kind handle is
 * reported as BLKRT_ERR_INVALID_HANDLE. Objects
 * made from a device (modules, streams, events, graphs) must be destroyed
 * before the device is closed; memory is freed with the device's context.
 * Every function may be called from any thread; see docs/runtime.md for what
 * is shared.
 */
#ifndef BLK_BLKRT_H
#define BLK_BLKRT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define BLKRT_VERSION "0.1.0"

typedef enum {
    BLKRT_OK = 0,
    BLKRT_ERR_NO_DRIVER,       /* libcuda.so.1 missing or unusable, or cuInit failed */
    BLKRT_ERR_NO_DEVICE,       /* no GPU with that ordinal */
    BLKRT_ERR_INVALID_HANDLE,  /* NULL, destroyed or wrong-kind handle */
    BLKRT_ERR_INVALID_VALUE,   /* a bad argument to an API function */
    BLKRT_ERR_INVALID_LAUNCH,  /* launch rejected before the driver saw it: arguments, grid, block, shared memory */
    BLKRT_ERR_META,            /* a malformed or inconsistent blk-meta line */
    BLKRT_ERR_NOT_FOUND,       /* no kernel of that name in the module */
    BLKRT_ERR_JIT,             /* the driver could not compile the PTX: the message holds its log */
    BLKRT_ERR_PTX_VERSION,     /* the PTX is newer than the driver supports */
    BLKRT_ERR_OUT_OF_MEMORY,
    BLKRT_ERR_NO_COMPILER,     /* needs the compiler: link libblkrt_jit and call blkrt_jit_install() */
    BLKRT_ERR_COMPILE,         /* .blk source has errors: the message holds the diagnostics */
    BLKRT_ERR_LAUNCH_FAILED,   /* the kernel failed on the device (or the CPU interpreter) */
    BLKRT_ERR_UNSUPPORTED,     /* not available on this device kind */
    BLKRT_ERR_IO,              /* cache or file access failed */
    BLKRT_ERR_DRIVER,          /* another driver error: the message names the call and the CUresult */
    BLKRT_ERR_NO_PEER_ACCESS,  /* two GPUs cannot access each other's memory directly (no NVLink / PCIe P2P path) */
    BLKRT_ERR_TIMEOUT,         /* a synchronisation with a deadline ran out: the message names the launch */
} blkrt_status;

const char *blkrt_status_name(blkrt_status s);  /* "BLKRT_ERR_JIT", ... */
const char *blkrt_last_error(void);             /* this thread's message of the last failure ("" if none) */
const char *blkrt_version(void);

/* The host allocator (like Lua's lua_Alloc): every host block the runtime
 * allocates for itself (handles, tables, copies of PTX and sources, launch
 * records, the CPU device's "device" memory) comes from alloc(bytes, user)
 * and goes back through release(block, user). alloc returns NULL on failure
 * (the call then fails with BLKRT_ERR_OUT_OF_MEMORY) and need not align
 * beyond what malloc would. Both NULL: libc's malloc and free (the default).
 * Set it before any other call, from one thread: while the runtime holds
 * blocks of the current allocator it is BLKRT_ERR_INVALID_VALUE. Not covered:
 * the CUDA driver's own memory and what libblkc (the JIT) allocates; memory
 * the runtime hands to the caller to free() (blkrt_profile_table) and a
 * compiler hook's results stay libc's. */
blkrt_status blkrt_set_allocator(void *(*alloc)(size_t bytes, void *user), void (*release)(void *block, void *user),
                                 void *user);

typedef struct blkrt_device blkrt_device;
typedef struct blkrt_module blkrt_module;
typedef struct blkrt_kernel blkrt_kernel;   /* owned by its module */
typedef struct blkrt_stream blkrt_stream;   /* NULL means the device's default stream */
typedef struct blkrt_event blkrt_event;
typedef struct blkrt_graph blkrt_graph;
typedef uint64_t blkrt_ptr;                 /* a device address (a host address on the CPU device) */

/* ---- devices ---- */
#define BLKRT_DEVICE_CPU (-1)   /* the CPU interpreter: host memory, modules from .blk source */

typedef enum { BLKRT_KIND_GPU = 0, BLKRT_KIND_CPU = 1 } blkrt_device_kind;

typedef struct {
    blkrt_device_kind kind;
    int ordinal;                 /* BLKRT_DEVICE_CPU for the CPU */
    char name[256];
    int sm;                      /* compute capability * 10 + minor: 90 for sm_90; 0 on the CPU */
    char arch[16];               /* compiler target: "sm_90a", "sm_80", ...; "cpu" */
    int sm_count;
    int warp_size;
    int max_threads_per_block;
    uint32_t max_grid[3];
    int max_shared_per_block;    /* bytes without opt-in (48 KB) */
    int max_shared_optin;        /* bytes with opt-in (device attribute 97) */
    size_t total_memory;
    int driver_version;          /* cuDriverGetVersion: 13000 = CUDA 13.0; 0 on the CPU */
} blkrt_device_info;

/* GPUs visible to the driver (0 when the driver reports no device). */
blkrt_status blkrt_device_count(int *count);
/* ordinal 0..count-1, or BLKRT_DEVICE_CPU. A GPU device uses the ordinal's
 * primary context (retained here, released by close). Opening an ordinal
 * twice gives two handles on the same context. */
blkrt_status blkrt_device_open(int ordinal, blkrt_device **out);
blkrt_status blkrt_device_close(blkrt_device *d);
blkrt_status blkrt_device_get_info(blkrt_device *d, blkrt_device_info *out);
blkrt_status blkrt_device_synchronize(blkrt_device *d);
/* The CPU device: the interpreter's step budget per launch (a step is one
 * instruction over one element of its result, counted over the grid). A
 * launch past it fails with BLKRT_ERR_LAUNCH_FAILED and the located message
 * "kernel exceeded its step budget in this loop"; the device stays usable.
 * 0 = no limit. Default: $BLK_INTERP_STEPS, else 2^30 (~40 s of an endless
 * loop). A GPU: BLKRT_ERR_UNSUPPORTED (see blkrt_stream_synchronize_timeout). */
blkrt_status blkrt_device_set_step_limit(blkrt_device *d, uint64_t steps);

/* ---- several GPUs ----
 * Any number of devices can be open at once and used from any thread: one
 * thread launching on several devices, or one thread per device. Each call
 * makes its device's context current around itself and restores the
 * caller's. Memory, streams and modules belong to one device; copies and
 * peer access cross devices explicitly. */

/* *can = 1 when kernels on d can read and write peer's memory directly
 * (NVLink or PCIe peer-to-peer: cuDeviceCanAccessPeer), else 0. d and peer
 * are GPUs with different ordinals. */
blkrt_status blkrt_device_can_access_peer(blkrt_device *d, blkrt_device *peer, int *can);
/* Let kernels running on d dereference peer's memory (one direction: call it
 * both ways for both; process-wide, as it is a property of the two primary
 * contexts). Enabling it again is a no-op. BLKRT_ERR_NO_PEER_ACCESS, naming
 * both GPUs, when there is no direct path between them. */
blkrt_status blkrt_device_enable_peer_access(blkrt_device *d, blkrt_device *peer);
/* Copy bytes from src (memory of src_dev) to dst (memory of dst_dev), two GPUs
 * or one, whether or not peer access is enabled: the driver copies directly
 * over NVLink/PCIe where it can and stages the bytes through host memory
 * where the two GPUs have no direct path. The async form is
 * ordered on s, a stream of either device (NULL: src_dev's default stream);
 * work on the other device is not ordered with it (record an event, or
 * synchronise). */
blkrt_status blkrt_memcpy_peer(blkrt_device *dst_dev, blkrt_ptr dst, blkrt_device *src_dev, blkrt_ptr src,
                               size_t bytes);
blkrt_status blkrt_memcpy_peer_async(blkrt_device *dst_dev, blkrt_ptr dst, blkrt_device *src_dev, blkrt_ptr src,
                                     size_t bytes, blkrt_stream *s);

/* ---- memory ---- */
blkrt_status blkrt_malloc(blkrt_device *d, size_t bytes, blkrt_ptr *out);
blkrt_status blkrt_free(blkrt_device *d, blkrt_ptr p);
blkrt_status blkrt_memcpy_htod(blkrt_device *d, blkrt_ptr dst, const void *src, size_t bytes);
blkrt_status blkrt_memcpy_dtoh(blkrt_device *d, void *dst, blkrt_ptr src, size_t bytes);
blkrt_status blkrt_memcpy_dtod(blkrt_device *d, blkrt_ptr dst, blkrt_ptr src, size_t bytes);
blkrt_status blkrt_memset(blkrt_device *d, blkrt_ptr dst, uint8_t value, size_t bytes);
/* Stream-ordered forms (s may be NULL: the default stream). The host buffer
 * must stay valid until the stream reaches the copy. */
blkrt_status blkrt_memcpy_htod_async(blkrt_device *d, blkrt_ptr dst, const void *src, size_t bytes, blkrt_stream *s);
blkrt_status blkrt_memcpy_dtoh_async(blkrt_device *d, void *dst, blkrt_ptr src, size_t bytes, blkrt_stream *s);
blkrt_status blkrt_memcpy_dtod_async(blkrt_device *d, blkrt_ptr dst, blkrt_ptr src, size_t bytes, blkrt_stream *s);
blkrt_status blkrt_memset_async(blkrt_device *d, blkrt_ptr dst, uint8_t value, size_t bytes, blkrt_stream *s);

/* ---- streams, events, graphs ---- */
blkrt_status blkrt_stream_create(blkrt_device *d, blkrt_stream **out);
blkrt_status blkrt_stream_destroy(blkrt_stream *s);
blkrt_status blkrt_stream_synchronize(blkrt_stream *s);
/* Synchronisation with a deadline (GPU; on the CPU device work is done when
 * issued: BLKRT_OK at once). Waits at most timeout_ms for the work of s
 * (NULL: the default stream of d; d may be NULL when s is given) or, with
 * blkrt_device_synchronize_timeout, for all work of d. When time runs out:
 * BLKRT_ERR_TIMEOUT, the work goes on, and the message names the oldest
 * launch through blkrt not known to have finished (kernel, grid, block, how
 * long ago; the runtime keeps the last 16 launches of each device, marked
 * finished by every successful synchronisation of their stream or device)
 * — the one a hung kernel is. A kernel that never ends cannot be stopped:
 * the context stays busy and the process must exit to free the GPU
 * (docs/runtime.md, "Failures on the GPU"). A kernel fault (a trap, a
 * device_assert, an illegal address) at any synchronisation is
 * BLKRT_ERR_LAUNCH_FAILED with the driver's error and that launch named. */
blkrt_status blkrt_stream_synchronize_timeout(blkrt_device *d, blkrt_stream *s, uint32_t timeout_ms);
blkrt_status blkrt_device_synchronize_timeout(blkrt_device *d, uint32_t timeout_ms);
/* Adopt a CUstream this library did not create (a non-default
 * torch.cuda.Stream's cuda_stream, a cudaStream_t) on a GPU device: launches,
 * copies, events and graph capture work on it as on a created stream;
 * blkrt_stream_destroy forgets it without destroying the CUstream, which
 * must outlive the handle. 0 means the legacy default stream. */
blkrt_status blkrt_stream_wrap(blkrt_device *d, uint64_t custream, blkrt_stream **out);

blkrt_status blkrt_event_create(blkrt_device *d, blkrt_event **out);
blkrt_status blkrt_event_destroy(blkrt_event *e);
blkrt_status blkrt_event_record(blkrt_event *e, blkrt_stream *s);
blkrt_status blkrt_event_synchronize(blkrt_event *e);
blkrt_status blkrt_event_elapsed_ms(blkrt_event *start, blkrt_event *end, float *ms);

/* Capture the launches issued on s (a created stream, not NULL) by this
 * thread into a graph, then replay it with one call per replay. */
blkrt_status blkrt_graph_begin_capture(blkrt_stream *s);
blkrt_status blkrt_graph_end_capture(blkrt_stream *s, blkrt_graph **out);
blkrt_status blkrt_graph_launch(blkrt_graph *g, blkrt_stream *s);
blkrt_status blkrt_graph_destroy(blkrt_graph *g);

/* ---- modules and kernels ---- */
/* PTX text (len bytes; need not be NUL-terminated). Its "// blk-meta v1"
 * lines describe the kernels; PTX without them still loads, its entries then
 * launch only through blkrt_launch_raw. */
blkrt_status blkrt_module_load_ptx(blkrt_device *d, const char *ptx, size_t len, blkrt_module **out);
/* A cubin (or fatbin) image; meta is the text of its blk-meta lines or NULL. */
blkrt_status blkrt_module_load_cubin(blkrt_device *d, const void *image, size_t size, const char *meta,
                                     blkrt_module **out);

/* Const parameter values for a compilation from source (like -D NAME=VALUE).
 * A name holding '=' is the whole -D text, "ACT=silu": how a string const is
 * set (is_float, ival and fval are then ignored). */
typedef struct {
    const char *name;   /* "BLOCK", or "NAME=VALUE" */
    int is_float;       /* 0: ival (integers and bools), 1: fval */
    int64_t ival;
    double fval;
} blkrt_define;

typedef struct {
    const char *path;            /* where the source lives: diagnostics, imports; NULL = "<source>" */
    const blkrt_define *defines;
    int ndefines;
    const char *kernel;          /* build only this kernel; NULL = every kernel */
    const char *cache_dir;       /* GPU: JIT cache; NULL = $BLKRT_CACHE_DIR or ~/.cache/blk; "" = none */
} blkrt_source_options;

/* .blk source text: compiled by the registered compiler (blkrt_jit), to PTX
 * for a GPU (through the disk cache) or for the interpreter on the CPU
 * device. opts may be NULL. On a GPU (with blkrt_jit) only the front end
 * runs here: each kernel variant is compiled and loaded by the first launch
 * whose arguments need it (docs/runtime.md, "Lazy variants"). */
blkrt_status blkrt_module_load_source(blkrt_device *d, const char *source, size_t len,
                                      const blkrt_source_options *opts, blkrt_module **out);
blkrt_status blkrt_module_unload(blkrt_module *m);
/* The same kernels on device d: m's image (PTX, cubin, or .blk source with
 * its options, compiled for d's arch) is loaded on d by the first call for
 * d and kept with m; later calls return that copy at once (d == m's device:
 * m itself; m may be a copy too). A copy is unloaded with m —
 * blkrt_module_unload refuses it — and holds d open until then. Safe from
 * several threads: each device gets one copy. */
blkrt_status blkrt_module_for_device(blkrt_module *m, blkrt_device *d, blkrt_module **out);
/* The driver's JIT info log of the load (ptxas register/spill lines; "" if none). */
blkrt_status blkrt_module_jit_log(blkrt_module *m, const char **log);

/* A kernel by its blk-meta name, or (no blk-meta of that name) by PTX entry
 * name as an unchecked kernel. The handle lives as long as the module. */
blkrt_status blkrt_module_kernel(blkrt_module *m, const char *name, blkrt_kernel **out);

/* Kernels from source on a GPU (compiled per variant at first need):
 * num_variants counts the variants compiled so far (0 before the first
 * launch), num_warps is the source's, shared_bytes that of the least
 * specialised variant compiled so far (0 before any). */
typedef struct {
    const char *name;
    int checked;          /* 1: described by blk-meta, launch with blkrt_launch */
    int num_params;       /* checked kernels */
    int num_variants;     /* specialised entries of this kernel */
    int num_warps;        /* of the least specialised variant */
    int shared_bytes;     /* dynamic shared memory, likewise */
} blkrt_kernel_info;

blkrt_status blkrt_kernel_get_info(blkrt_kernel *k, blkrt_kernel_info *out);
/* Parameter i: its name and blk type as written in blk-meta ("*f32", "i32"). */
blkrt_status blkrt_kernel_param(blkrt_kernel *k, int i, const char **name, const char **type);
/* Const i (0-based) of a checked kernel: its name and blk type ("i32");
 * BLKRT_ERR_NOT_FOUND past the last. */
blkrt_status blkrt_kernel_const_at(blkrt_kernel *k, int i, const char **name, const char **type);
/* A const value this kernel was compiled with (e.g. BLOCK, to size the grid). */
blkrt_status blkrt_kernel_const_int(blkrt_kernel *k, const char *name, int64_t *value);
blkrt_status blkrt_kernel_const_float(blkrt_kernel *k, const char *name, double *value);

/* ---- launching ---- */
typedef enum { BLKRT_ARG_PTR = 0, BLKRT_ARG_INT = 1, BLKRT_ARG_FLOAT = 2 } blkrt_arg_kind;

/* One argument. PTR for pointer parameters (a blkrt_ptr); INT for integer and
 * bool parameters (range-checked against the type; u64 takes the bit
 * pattern); FLOAT for f64/f32/f16/bf16/f8 parameters (rounded to nearest
 * even, as the compiler does). */
typedef struct {
    blkrt_arg_kind kind;
    union {
        blkrt_ptr ptr;
        int64_t i;
        double f;
    } v;
} blkrt_arg;

#define BLKRT_PTR(p) ((blkrt_arg){.kind = BLKRT_ARG_PTR, .v.ptr = (blkrt_ptr)(p)})
#define BLKRT_INT(x) ((blkrt_arg){.kind = BLKRT_ARG_INT, .v.i = (int64_t)(x)})
#define BLKRT_FLOAT(x) ((blkrt_arg){.kind = BLKRT_ARG_FLOAT, .v.f = (double)(x)})

/* Launch a checked kernel: the arguments are checked against its blk-meta
 * parameters, the grid against the device (every dimension >= 1), the block
 * (32 * num_warps threads) and shared memory against device and function;
 * then the most specialised variant whose assumptions the arguments satisfy
 * is launched on s (NULL: the default stream). Nothing reaches the driver
 * when a check fails. A kernel from source on a GPU launches the variant of
 * exactly the arguments' key, compiling and loading it first if it is new
 * (errors of that compile: BLKRT_ERR_COMPILE with the compiler's messages). */
blkrt_status blkrt_launch(blkrt_kernel *k, const uint32_t grid[3], const blkrt_arg *args, int nargs,
                          blkrt_stream *s);

/* How many programs of k the device runs at once for a launch with these
 * arguments: its multiprocessors times the programs one holds (the warps,
 * registers and shared memory of the variant blkrt_launch would pick for
 * them: the driver's occupancy calculator; a kernel from source compiles
 * that variant first if it is new). That is the grid of a persistent kernel
 * (`for tile in range(program_id(0), n, num_programs(0))`): every program
 * starts at once, none waits for a free multiprocessor. The CPU device runs
 * one program at a time: 1. Arguments are checked as blkrt_launch checks
 * them; nothing is launched. */
blkrt_status blkrt_kernel_max_programs(blkrt_kernel *k, const blkrt_arg *args, int nargs, uint32_t *out);

/* Launch without argument checks (GPU only): params as for cuLaunchKernel
 * (an array of pointers to each argument's value), an explicit block size and
 * dynamic shared memory. A checked kernel launches its least specialised
 * variant (from source: the unspecialised one, compiled first if need be).
 * An entry that takes TMA tensor maps (a blk-meta line with tmaps=; the
 * compiler never gives them to the least specialised variant) needs them in
 * params after the declared parameters, one pointer per map to its 128-byte
 * CUtensorMap (64-byte aligned) encoded by the caller with
 * cuTensorMapEncodeTiled as docs/runtime.md specifies: this call passes
 * params through as they are. */
blkrt_status blkrt_launch_raw(blkrt_kernel *k, const uint32_t grid[3], const uint32_t block[3],
                              uint32_t shared_bytes, void **params, blkrt_stream *s);

/* ---- profiling ----
 * NVTX: when a tool is attached (Nsight Systems / Compute set
 * NVTX_INJECTION64_PATH), every launch through blkrt is an NVTX range named
 * after the kernel and its configuration, "softmax[BLOCK=4096,w8]" (const
 * values, then w<num_warps>). libblkrt speaks the NVTX3 injection protocol
 * itself: no libnvToolsExt, nothing linked; no tool, no cost (one load and
 * branch per launch). docs/runtime.md, "Profiling".
 *
 * The light profiler: BLK_PROFILE=1 in the environment (or
 * blkrt_profile_enable(1)) times every launch: a GPU launch between two
 * events on its stream, a CPU-device launch by wall time. Launches into a
 * graph capture are not timed (they run when the graph does). With
 * BLK_PROFILE=1 the table is printed to stderr at exit; blkrt_profile_table
 * gives it on request. Rows are per kernel, configuration and device. */
typedef struct {
    char kernel[64];             /* the kernel's name */
    char config[160];            /* "BLOCK=4096,w8" (the label inside the NVTX range's brackets) */
    int device;                  /* GPU ordinal, or BLKRT_DEVICE_CPU */
    uint64_t launches;           /* timed launches */
    double total_ms, median_ms, min_ms, max_ms;
    double bytes, flops;         /* summed over the launches, as stated by blkrt_profile_set_work; 0: not stated */
    double gbps, tflops;         /* bytes / total time (1e9 B/s), flops / total time (1e12/s); 0: not stated */
} blkrt_profile_row;

/* Turn timing on (1) or off (0) for launches from now on; what was
 * collected stays until blkrt_profile_reset. */
blkrt_status blkrt_profile_enable(int on);
/* The work one launch of k does from now on, for the GB/s and TFLOP/s
 * columns (bytes read plus written, floating-point operations; 0 = not
 * stated). Set it again when the size changes: each launch adds the values
 * current when it was issued. */
blkrt_status blkrt_profile_set_work(blkrt_kernel *k, double bytes, double flops);
/* The rows so far, in the order of each row's first launch. Waits for
 * timed GPU launches still in flight (it synchronises their end events).
 * rows may be NULL to count: *n is the number of rows (all of them, even
 * past cap); at most cap are written. */
blkrt_status blkrt_profile_rows(blkrt_profile_row *rows, int cap, int *n);
/* The same rows as a text table, slowest total first (malloc'd: free it). */
blkrt_status blkrt_profile_table(char **text);
/* Forget every row (launches in flight are waited for and dropped). */
blkrt_status blkrt_profile_reset(void);

/* ---- benchmarking your own launches (like triton.testing.do_bench) ----
 * fn(user) issues the work to time on stream s of d (it returns a status; a
 * failure stops the benchmark and is returned). blkrt_bench runs it `warmup`
 * times, synchronises, then `reps` times, each time first writing a flush
 * buffer with blkrt_memset_async (so every run starts with a cold L2: on a
 * GPU 4 x its L2 size where the driver reports it, else 256 MB; on the CPU
 * device 32 MB) and then timing fn between two events on s (on the CPU
 * device: wall time). The result: median, min, max, mean of the reps. */
typedef struct {
    int warmup;                  /* untimed runs first; < 0: none, 0: 3 */
    int reps;                    /* timed runs; 0: 20 */
    size_t flush_bytes;          /* 0: the default above; SIZE_MAX: no flush */
    float *times;                /* may be NULL: else `reps` entries, each run's ms in order */
} blkrt_bench_options;

typedef struct {
    double median_ms, min_ms, max_ms, mean_ms;
    int reps;
    size_t flush_bytes;          /* what was written before each run (0: none) */
} blkrt_bench_result;

typedef blkrt_status (*blkrt_bench_fn)(void *user);
/* o may be NULL (the defaults). s may be NULL: the default stream. */
blkrt_status blkrt_bench(blkrt_device *d, blkrt_stream *s, blkrt_bench_fn fn, void *user, const blkrt_bench_options *o,
                         blkrt_bench_result *out);

/* ---- the autotuner ----
 * A kernel from source with @autotune(key = [...], configs = [{...}, ...]):
 * each config (const values, num_warps, num_stages) is a module of its own,
 * compiled from the source with the config's values as defines. The first
 * launch of each tuning key (the key parameters' values, and for each
 * pointer/integer argument whether it is divisible by 16 or equal to 1)
 * times every config on the launch's own arguments and keeps the fastest;
 * later launches of that key use it at once. Choices persist in the cache
 * directory (opts->cache_dir as for loads; "" = in memory only) in
 * "autotune-<hash>.txt", hash of the device model (name and arch), driver
 * version, compiler version, source, kernel and defines: a second process
 * does not tune again, and the file can be shipped. GPUs of one model share
 * the file (a key one tuned, another does not tune again; the file is read
 * again before tuning and merged before saving), two models never do. A file that does not parse is ignored and
 * rewritten. BLK_AUTOTUNE_VERBOSE=1 prints each config's time to stderr (and
 * a progress line when stderr is a terminal); otherwise nothing is printed. */
typedef struct blkrt_autotuner blkrt_autotuner;

/* The grid of a launch with config kernel k (e.g. from its BLOCK const);
 * a NULL grid function means a grid of one program. */
typedef void (*blkrt_grid_fn)(blkrt_kernel *k, const blkrt_arg *args, int nargs, uint32_t grid[3], void *user);

typedef struct {
    /* Per argument (nargs entries, or NULL): bytes of a pointer argument the
     * kernel writes. They are saved before tuning and restored before every
     * timed run and before the real launch, so the launch's result is that
     * of one launch (kernels that accumulate into an output). 0: not saved. */
    const size_t *restore_bytes;
    /* Called around each timed run (e.g. to zero an accumulator); may be NULL. */
    void (*pre_hook)(void *user);
    void (*post_hook)(void *user);
    void *hook_user;
    int reps;            /* timed runs per config, the fastest counts; 0 = 3 */
} blkrt_autotune_options;

/* Load `kernel` of the source once per config. opts as for
 * blkrt_module_load_source (its defines apply to every config; a config's
 * own values win). */
blkrt_status blkrt_autotuner_create(blkrt_device *d, const char *source, size_t len, const blkrt_source_options *opts,
                                    const char *kernel, blkrt_autotuner **out);
blkrt_status blkrt_autotuner_destroy(blkrt_autotuner *t);
/* Number of configs (1 for a kernel without @autotune), and config i as
 * text ("BLOCK=64,num_warps=2") and as its kernel handle. */
blkrt_status blkrt_autotuner_num_configs(blkrt_autotuner *t, int *n);
blkrt_status blkrt_autotuner_config(blkrt_autotuner *t, int i, const char **text, blkrt_kernel **k);
/* Launch with the best config for these arguments (tuning first if the key
 * is new). o may be NULL. *config (may be NULL): the config launched;
 * *tuned (may be NULL): 1 if this call timed the configs. A config that
 * fails to compile or launch is skipped while tuning (BLK_AUTOTUNE_VERBOSE
 * says why); if every config fails, the first failure is returned. */
blkrt_status blkrt_autotuner_launch(blkrt_autotuner *t, blkrt_grid_fn grid, void *grid_user, const blkrt_arg *args,
                                    int nargs, const blkrt_autotune_options *o, blkrt_stream *s, int *config,
                                    int *tuned);

/* ---- the compiler hook (implemented by libblkrt_jit; see blkrt_jit.h) ---- */
typedef struct {
    const char *source;
    size_t len;
    const char *path;            /* never NULL here */
    const blkrt_define *defines;
    int ndefines;
    const char *kernel;          /* NULL: every kernel */
    const char *arch;            /* compile_ptx: "sm_90a", ...; cpu_build: "cpu" */
    /* compile_ptx: NULL = every default variant of the kernels; else exactly
     * one variant of `kernel`, as blkc_add_variant's SPEC without a kernel
     * ("x=d16,n=eq1"; "" = the unspecialised one) */
    const char *variant;
} blkrt_compile_request;

/* Everything a hook returns is malloc'd; the runtime frees it with free(). */
typedef struct {
    char *text;                  /* compile_ptx: PTX with blk-meta lines; cpu_build: blk-meta lines */
    size_t len;
    char *log;                   /* diagnostics (errors and warnings), or NULL */
    char **deps;                 /* files read besides the main source (imports): the cache checks them */
    int ndeps;
    void *program;               /* cpu_build: what cpu_run runs */
} blkrt_compile_result;

typedef struct {
    blkrt_arg_kind kind;
    void *ptr;                   /* PTR: host address */
    size_t size;                 /* PTR: bytes reachable from ptr (0 = unknown) */
    int64_t i;
    double f;
} blkrt_cpu_arg;

typedef struct {
    const char *version;         /* changes whenever generated code may change: part of cache keys */
    /* Each returns BLKRT_OK, BLKRT_ERR_COMPILE (log set), BLKRT_ERR_UNSUPPORTED
     * or BLKRT_ERR_OUT_OF_MEMORY. A NULL function means "not supported". */
    blkrt_status (*compile_ptx)(const blkrt_compile_request *req, blkrt_compile_result *res);
    blkrt_status (*cpu_build)(const blkrt_compile_request *req, blkrt_compile_result *res);
    /* Runs one launch; the runtime never calls it concurrently for one program. */
    blkrt_status (*cpu_run)(void *program, const char *kernel, const uint32_t grid[3],
                            const blkrt_cpu_arg *args, int nargs, char **log);
    void (*cpu_free)(void *program);
    /* GPU loads from source: res->text = one blk-meta line per kernel from the
     * front end alone (params, consts, num_warps, nospec; no code). With it a
     * load compiles nothing, and each launch whose argument key is new asks
     * compile_ptx for exactly that variant; without it (NULL) a load asks
     * compile_ptx for every default variant at once. */
    blkrt_status (*describe)(const blkrt_compile_request *req, blkrt_compile_result *res);
    /* The @autotune configs of the source (front end only): res->text = one
     * "// blk-autotune v1 kernel=K key=P,... configs=N:V,...;N:V,..." line
     * per kernel that has them (blkc_emit "autotune"). NULL: no autotuning
     * (an autotuner then has the source's own values as its one config). */
    blkrt_status (*autotune)(const blkrt_compile_request *req, blkrt_compile_result *res);
    /* The step budget of the next cpu_run calls of program (0 = no limit),
     * called before them when blkrt_device_set_step_limit was; NULL: the
     * compiler has no budget (such launches then fail as unsupported). */
    void (*cpu_set_steps)(void *program, uint64_t steps);
} blkrt_compiler;

/* Register the compiler (NULL removes it). The struct must outlive its use. */
blkrt_status blkrt_use_compiler(const blkrt_compiler *c);

#ifdef __cplusplus
}
#endif
#endif

/* fake_cuda.h — the test hooks of the fake CUDA driver (fake_cuda.c).
 *
 * The fake is a shared library exporting the cu* entry points libblkrt uses,
 * backed by host memory. Tests point BLKRT_CUDA_LIBRARY at it; the runtime
 * dlopens it, and the test dlopens the same file to reach these hooks
 * (fake_api_load below), so both talk to one instance.
 *
 * Behaviour that follows the real driver: PTX must start with a .version
 * line (else CUDA_ERROR_INVALID_PTX with a ptxas-like error log); ".version"
 * above 9.0 gives CUDA_ERROR_UNSUPPORTED_PTX_VERSION (222); a line "FAKE_JIT_ERROR
 * text" in the PTX fails the JIT with that text in the error log; launches
 * check the current context, block limits and dynamic shared memory against
 * cuFuncSetAttribute. Entries and their parameter sizes come from the PTX's
 * ".entry name(.param .u64 x, ...)"; "// fake-attr entry=NAME max_threads=N
 * static_shared=M" lines set a function's limits. A "cubin" is the bytes
 * "\177ELF" followed by the same text.
 *
 * cuTensorMapEncodeTiled and cuLaunchKernelEx (CUDA 12.0) are exported
 * unless the library is built with FAKE_NO_TMAP (libfake_cuda_notmap: a
 * driver older than 12.0). cuLaunchKernelEx takes one attribute, the
 * cluster dimension (any other fails with CUDA_ERROR_INVALID_VALUE), checks
 * it like the driver (it divides the grid, at most 8 CTAs, only device 0 is
 * sm_90: else CUDA_ERROR_INVALID_CLUSTER_SIZE), and records the launch like
 * cuLaunchKernel, with the cluster dims (fake_get_cluster).
 * A launch records the bytes of up to FAKE_MAX_BIG parameters larger than 8
 * bytes (".param .align 64 .b8 NAME[128]": tensor maps; fake_get_big) and fails with
 * CUDA_ERROR_INVALID_VALUE if such a parameter's host copy is not 64-byte
 * aligned (the runtime promises that alignment).
 *
 * Environment (read at cuInit): FAKE_CUDA_DEVICES (default 2),
 * FAKE_CUDA_INIT_ERROR (a CUresult for cuInit), FAKE_CUDA_NO_GETPROC=1
 * (no cuGetProcAddress_v2: the runtime must fall back to dlsym),
 * FAKE_CUDA_DRIVER_VERSION (default 13000), FAKE_CUDA_PEERS ("0-1,2-3": the
 * pairs of devices with a peer-to-peer path; default every pair).
 *
 * Several devices: device 0 is named "Fake H200" (sm_90), the others "Fake
 * A100" (sm_80). Each context is one device's; modules, streams and events
 * belong to the context current when they were made, and launches, copies
 * and syncs check it. Allocations remember their device: cuMemcpyPeer*
 * checks each address against its context's device.
 */
#ifndef FAKE_CUDA_H
#define FAKE_CUDA_H

#include <dlfcn.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define FAKE_MAX_PARAMS 64
#define FAKE_MAX_BIG 4

typedef struct {
    char entry[128];
    int device;             /* ordinal of the current context at launch */
    unsigned grid[3], block[3], shared;
    void *stream;
    int from_graph;         /* 1: replayed by cuGraphLaunch */
    int nparams;
    int param_size[FAKE_MAX_PARAMS];
    unsigned char param[FAKE_MAX_PARAMS][8];
} fake_launch;  /* tests/python/test_binding.py mirrors this layout */

/* What the fake cuTensorMapEncodeTiled writes into the 128-byte map (it
 * checks every documented requirement first, else CUDA_ERROR_INVALID_VALUE):
 * the arguments, so a test can read back what the runtime passed. */
typedef struct {
    uint64_t addr;
    uint64_t dims[5], strides[4];
    uint32_t magic;         /* FAKE_TMAP_MAGIC */
    uint16_t box[5];
    uint8_t dtype, rank, interleave, swizzle, l2, oob;
    uint8_t elem_strides[5];
} fake_tmap;                /* 112 bytes: fits the 128 of a map */
#define FAKE_TMAP_MAGIC 0x50414d54u /* "TMAP" */

/* The hooks, as the test sees them. */
typedef struct {
    void (*reset)(void);                             /* clear logs, counters and pending failures */
    void (*fail_next)(const char *symbol, int result); /* the next call of symbol returns result */
    int (*launch_count)(void);
    int (*get_launch)(int i, fake_launch *out);     /* 0 ok */
    int (*count_calls)(const char *symbol);          /* calls since reset */
    int (*call_log)(char *buf, size_t n);            /* symbols since reset, space-separated (context calls left out) */
    int (*attr_sets)(const char *entry);             /* cuFuncSetAttribute calls on that entry since reset */
    long (*live_allocs)(void);
    int (*ctx_depth)(void);                          /* this thread's context stack depth */
    int (*proc_address_calls)(void);                 /* cuGetProcAddress_v2 lookups (since load) */
    int (*peer_enabled)(int dev, int peer);          /* 1: cuCtxEnablePeerAccess from dev's context to peer's */
    void (*stall)(int on);                           /* 1: work never finishes (queries NOT_READY) */
    int (*get_big)(int i, int j, unsigned char *out); /* launch i's j-th parameter over 8 bytes (128 bytes to out); 0 ok */
    int (*get_cluster)(int i, unsigned out[3]);      /* launch i's cluster dims (0,0,0: no cluster); 0 ok */
} fake_api;

/* The newest recorded launch into *out (zeroed first). 0 if there is one. */
static inline int fake_last_launch(const fake_api *f, fake_launch *out) {
    memset(out, 0, sizeof *out);
    return f->get_launch(f->launch_count() - 1, out);
}

/* dlopen the fake the runtime uses and fill *f. 0 on success. */
static inline int fake_api_load(fake_api *f) {
    const char *path = getenv("BLKRT_CUDA_LIBRARY");
    void *h = path ? dlopen(path, RTLD_NOW | RTLD_LOCAL) : NULL;
    if (!h) return -1;
#define FAKE_SYM(field) *(void **)&f->field = dlsym(h, "fake_" #field)
    FAKE_SYM(reset);
    FAKE_SYM(fail_next);
    FAKE_SYM(launch_count);
    FAKE_SYM(get_launch);
    FAKE_SYM(count_calls);
    FAKE_SYM(call_log);
    FAKE_SYM(attr_sets);
    FAKE_SYM(live_allocs);
    FAKE_SYM(ctx_depth);
    FAKE_SYM(proc_address_calls);
    FAKE_SYM(peer_enabled);
    FAKE_SYM(stall);
    FAKE_SYM(get_big);
    FAKE_SYM(get_cluster);
#undef FAKE_SYM
    return f->reset && f->fail_next && f->launch_count && f->get_launch && f->count_calls && f->call_log &&
                   f->attr_sets && f->live_allocs && f->ctx_depth && f->proc_address_calls && f->peer_enabled &&
                   f->stall && f->get_big && f->get_cluster
               ? 0
               : -1;
}

#endif

/* diff_common.h — what the differential testers (index_diff.c, kernel_diff.c)
 * share (and gpu_check with them): a seeded random generator (kernel K of
 * seed S is a function of (S, K) alone), a growing string buffer for kernel
 * sources, a clock, the arch blk compiles for on a device, opening it. Header-only (static functions): each
 * tester is one translation unit, also inside the multi-call gpu_tools. */
#ifndef BLK_DIFF_COMMON_H
#define BLK_DIFF_COMMON_H
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "blk/blkrt.h"

/* LLVM's static libraries here were built against glibc 2.36 and call
 * arc4random (GLIBC_2.36). Defining it in the executable resolves those
 * calls at link time, so the static bundle needs only glibc 2.34 (Ubuntu
 * 22.04 has 2.35). Quality is irrelevant: LLVM seeds hashing with it. One
 * file of each program defines it: the testers' main file; in gpu_check and
 * the multi-call binary (INDEX_DIFF_MULTICALL), gpu_check.c. Other files
 * define DIFF_NO_ARC4RANDOM first. */
#if !defined(INDEX_DIFF_MULTICALL) && !defined(DIFF_NO_ARC4RANDOM)
uint32_t arc4random(void) {
    uint32_t v = 0;
    if (getrandom(&v, sizeof v, GRND_NONBLOCK) != (ssize_t)sizeof v) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        v = (uint32_t)ts.tv_nsec * 2654435761u ^ (uint32_t)ts.tv_sec;
    }
    return v;
}
#endif

static inline double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ---- random numbers ---- */
static inline uint64_t splitmix(uint64_t *s) {
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
typedef struct { uint64_t s; } rng;
static inline uint64_t rnext(rng *R) { return splitmix(&R->s); }
static inline int rnd(rng *R, int n) { return n <= 1 ? 0 : (int)(rnext(R) % (uint64_t)n); }
static inline bool chance(rng *R, int percent) { return rnd(R, 100) < percent; }
#define PICK(R, arr) ((arr)[rnd(R, (int)(sizeof(arr) / sizeof((arr)[0])))])
/* The generator of kernel `index` of a run with seed `seed`. */
static inline rng kernel_rng(uint64_t seed, int index) {
    uint64_t s = seed ^ ((uint64_t)index * 0xD1B54A32D192ED03ull);
    return (rng){splitmix(&s)};
}

/* ---- a growing string ---- */
typedef struct {
    char *s;
    size_t len, cap;
} sbuf;
static inline void sb_printf(sbuf *b, const char *fmt, ...) {
    va_list ap;
    for (;;) {
        va_start(ap, fmt);
        int n = vsnprintf(b->s ? b->s + b->len : NULL, b->s ? b->cap - b->len : 0, fmt, ap);
        va_end(ap);
        if (n < 0) return;
        if (b->s && b->len + (size_t)n < b->cap) {
            b->len += (size_t)n;
            return;
        }
        size_t cap = b->cap ? b->cap * 2 : 256;
        while (cap < b->len + (size_t)n + 1) cap *= 2;
        char *s = realloc(b->s, cap);
        if (!s) return;
        b->s = s, b->cap = cap;
    }
}

/* The arch blk compiles for on a device of `arch`: its own, or BLK_GPU_ARCH
 * (as gpu_check.c: sm_80 PTX runs on sm_90 GPUs); NULL if blk has none. */
static inline const char *backend_arch(const char *arch) {
    const char *force = getenv("BLK_GPU_ARCH");
    if (force && *force) return force;
    int sm = 0;
    if (sscanf(arch, "sm_%d", &sm) != 1) return NULL;
    if (sm == 90) return "sm_90a";
    if (sm > 90) return "sm_90";
    if (sm >= 80) return "sm_80";
    return NULL;
}
/* Open GPU `ordinal` (cpu: the CPU interpreter device) into *dev and its
 * info: 0; 77 with "skipped: ..." without a driver or that GPU; 1 with the
 * error printed if it does not open. */
static inline int diff_open_device(bool cpu, int ordinal, blkrt_device **dev, blkrt_device_info *info) {
    if (!cpu) {
        int count = 0;
        blkrt_status st = blkrt_device_count(&count);
        if (st != BLKRT_OK || count == 0) {
            printf("skipped: no CUDA driver/GPU (%s)\n", st ? blkrt_last_error() : "the driver reports 0 devices");
            return 77;
        }
        if (ordinal >= count) {
            printf("skipped: no GPU %d (%d visible)\n", ordinal, count);
            return 77;
        }
    }
    if (blkrt_device_open(cpu ? BLKRT_DEVICE_CPU : ordinal, dev) || blkrt_device_get_info(*dev, info)) {
        printf("error: opening the device: %s\n", blkrt_last_error());
        return 1;
    }
    return 0;
}

/* Kernel `name` on dev: from `ptx` (a GPU), or from the source `src` on the
 * CPU interpreter device (ptx NULL). false with the reason in err. */
static inline bool diff_load_kernel(blkrt_device *dev, const char *ptx, const char *src, const char *name,
                                    blkrt_module **mod, blkrt_kernel **k, char *err, size_t n) {
    char path[64];
    snprintf(path, sizeof path, "%s.blk", name);
    blkrt_source_options so = {.path = path, .kernel = name, .cache_dir = ""};
    if (ptx ? blkrt_module_load_ptx(dev, ptx, strlen(ptx), mod) : blkrt_module_load_source(dev, src, strlen(src), &so, mod)) {
        snprintf(err, n, "%s: %s", ptx ? "loading the PTX" : "loading on the CPU device", blkrt_last_error());
        return false;
    }
    if (blkrt_module_kernel(*mod, name, k)) {
        snprintf(err, n, "%s", blkrt_last_error());
        return false;
    }
    return true;
}
#endif

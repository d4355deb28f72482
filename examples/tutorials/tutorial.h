/* tutorial.h — what the tutorial programs of docs/tutorials share: the
 * device, loading a kernel from examples/tutorials/, host <-> device copies,
 * random data and the comparison with a C reference.
 *
 * Every tutorial program takes the device as its first argument: "cpu" (the
 * CPU interpreter; what `make test` runs, the default) or a GPU ordinal
 * ("0"). The same source runs on both: libblkrt_jit compiles it for the
 * interpreter or for the GPU's arch at load.
 */
#ifndef BLK_TUTORIAL_H
#define BLK_TUTORIAL_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blk/blkrt.h"
#include "blk/blkrt_jit.h"

#ifndef BLK_EXAMPLES_DIR
#define BLK_EXAMPLES_DIR "examples"
#endif

/* A libblkrt call that must succeed: else its message, and exit. */
#define TUT_CHECK(call)                                                                                      \
    do {                                                                                                     \
        blkrt_status s_ = (call);                                                                            \
        if (s_ != BLKRT_OK) {                                                                                \
            fprintf(stderr, "%s:%d: %s -> %s\n%s\n", __FILE__, __LINE__, #call, blkrt_status_name(s_),      \
                    blkrt_last_error());                                                                     \
            exit(1);                                                                                         \
        }                                                                                                    \
    } while (0)

/* argv[1]: "cpu" (default) or a GPU ordinal. */
static inline blkrt_device *tut_device(int argc, char **argv) {
    TUT_CHECK(blkrt_jit_install());
    const char *which = argc > 1 ? argv[1] : "cpu";
    blkrt_device *d;
    TUT_CHECK(blkrt_device_open(strcmp(which, "cpu") == 0 ? BLKRT_DEVICE_CPU : atoi(which), &d));
    return d;
}

/* examples/tutorials/FILE compiled with the defines (-D NAME=VALUE) for d;
 * *m receives the module (unload it before closing the device). */
static inline blkrt_kernel *tut_kernel(blkrt_device *d, const char *file, const char *kernel, const blkrt_define *defs,
                                       int ndefs, blkrt_module **m) {
    char path[1024];
    snprintf(path, sizeof path, "%s/tutorials/%s", BLK_EXAMPLES_DIR, file);
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "cannot open %s\n", path);
        exit(1);
    }
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *text = malloc((size_t)n + 1);
    if (!text || fread(text, 1, (size_t)n, f) != (size_t)n) exit(1);
    fclose(f);
    blkrt_source_options o = {.path = path, .defines = defs, .ndefines = ndefs, .kernel = kernel};
    TUT_CHECK(blkrt_module_load_source(d, text, (size_t)n, &o, m));
    free(text);
    blkrt_kernel *k;
    TUT_CHECK(blkrt_module_kernel(*m, kernel, &k));
    return k;
}

/* Device memory holding a copy of host (bytes), or zeros when host is NULL. */
static inline blkrt_ptr tut_upload(blkrt_device *d, const void *host, size_t bytes) {
    blkrt_ptr p;
    TUT_CHECK(blkrt_malloc(d, bytes, &p));
    if (host) TUT_CHECK(blkrt_memcpy_htod(d, p, host, bytes));
    else TUT_CHECK(blkrt_memset(d, p, 0, bytes));
    return p;
}

static inline void tut_download(blkrt_device *d, void *host, blkrt_ptr p, size_t bytes) {
    TUT_CHECK(blkrt_device_synchronize(d));
    TUT_CHECK(blkrt_memcpy_dtoh(d, host, p, bytes));
}

/* Uniform floats in [lo, hi) from a fixed seed (xorshift32): runs repeat. */
static inline float tut_uniform(uint32_t *state, float lo, float hi) {
    uint32_t x = *state;
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    *state = x;
    return lo + (hi - lo) * (float)(x >> 8) * (1.0f / 16777216.0f);
}

static inline void tut_fill(float *x, size_t n, uint32_t seed, float lo, float hi) {
    uint32_t s = seed ? seed : 1;
    for (size_t i = 0; i < n; i++) x[i] = tut_uniform(&s, lo, hi);
}

/* f32 <-> f16 bits, rounding to nearest even (normal and zero values; the
 * tutorials' data stays in f16's normal range). */
static inline uint16_t tut_f16(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    uint16_t sign = (uint16_t)((u >> 16) & 0x8000);
    int e = (int)((u >> 23) & 0xff) - 127 + 15;
    if ((u & 0x7fffffff) == 0 || e <= 0) return sign; /* zero (and underflow: flushed) */
    if (e >= 31) return sign | 0x7c00;                /* overflow: inf */
    uint32_t mant = u & 0x7fffff, keep = mant >> 13, rest = mant & 0x1fff;
    uint32_t h = ((uint32_t)e << 10) | keep;
    if (rest > 0x1000 || (rest == 0x1000 && (keep & 1))) h++; /* may carry into the exponent: still right */
    return (uint16_t)(sign | h);
}

static inline float tut_f32(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000) << 16, e = (h >> 10) & 0x1f, mant = h & 0x3ff, u;
    if (e == 0) u = sign; /* zero (no subnormals produced above) */
    else if (e == 31) u = sign | 0x7f800000u | (mant << 13);
    else u = sign | ((e - 15 + 127) << 23) | (mant << 13);
    float f;
    memcpy(&f, &u, 4);
    return f;
}

/* max |got - want| / (atol + rtol |want|) over n values: <= 1 passes. Prints
 * the line of the tutorial's output and returns 1 on failure. */
static inline int tut_compare(const char *what, const float *got, const double *want, size_t n, double atol,
                              double rtol) {
    double worst = 0, err_at = 0;
    size_t at = 0;
    for (size_t i = 0; i < n; i++) {
        double e = fabs((double)got[i] - want[i]);
        double r = e == 0 ? 0 : e / (atol + rtol * fabs(want[i])); /* exact: passes even with no tolerance */
        if (!(r <= worst)) { /* NaN counts as the worst */
            worst = isnan(r) ? INFINITY : r;
            err_at = e;
            at = i;
        }
    }
    bool ok = worst <= 1;
    printf("%-34s max error %.3g (at %zu: got %.6g, want %.6g) %s\n", what, err_at, at, n ? (double)got[at] : 0.0,
           n ? want[at] : 0.0, ok ? "ok" : "FAIL");
    return !ok;
}

#endif

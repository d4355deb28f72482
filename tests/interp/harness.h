/* harness.h — shared helpers for the interpreter tests: build a .blk kernel
 * with const values, run it on host arrays, compare with a C reference.
 *
 * Each test program gets argv[1] = this directory, argv[2] = stdlib dir.
 * Failures print what differed and make main return 1.
 */
#ifndef BLK_TEST_HARNESS_H
#define BLK_TEST_HARNESS_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blk/blkc.h"

#include "../test_util.h"

static const char *h_stdlib = "stdlib";
static const char *h_testdir = ".";

static inline void h_init(int argc, char **argv) {
    if (argc > 1) h_testdir = argv[1];
    if (argc > 2) h_stdlib = argv[2];
}

/* Build `kernel` of file (relative to dir) with "NAME=V" defines (NULL-terminated).
 * Returns NULL (and counts a failure) if it does not compile. */
static inline blkc_ctx *h_build_opt(const char *dir, const char *file, const char *kernel, const char *const *defines, int opt) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    blkc_ctx *c = blkc_new();
    blkc_set_opt_level(c, opt);
    for (int i = 0; defines && defines[i]; i++) {
        char name[128];
        const char *eq = strchr(defines[i], '=');
        size_t n = (size_t)(eq - defines[i]);
        memcpy(name, defines[i], n);
        name[n] = 0;
        blkc_define(c, name, eq + 1);
    }
    blk_status s = blkc_load_file(c, path);
    if (s == BLK_OK) s = blkc_build(c, kernel);
    if (s != BLK_OK) {
        failures++;
        fprintf(stderr, "FAIL: building %s in %s (status %d):\n%s", kernel, path, s, blkc_diagnostics(c));
        blkc_free(c);
        return NULL;
    }
    return c;
}

static inline blkc_ctx *h_build(const char *dir, const char *file, const char *kernel, const char *const *defines) {
    return h_build_opt(dir, file, kernel, defines, 2);
}

static inline int h_run(blkc_ctx *c, const char *kernel, unsigned gx, unsigned gy, unsigned gz,
                 const blk_arg *args, int nargs) {
    if (!c) return -1;
    unsigned grid[3] = {gx, gy, gz};
    blk_status s = blkc_interp_run(c, kernel, grid, args, nargs, NULL);
    if (s != BLK_OK) {
        failures++;
        fprintf(stderr, "FAIL: running %s (status %d):\n%s", kernel, s, blkc_diagnostics(c));
        return -1;
    }
    return 0;
}

/* A run expected to fail or not: its status, and in msg the diagnostics it
 * added (the context's earlier ones left out). */
static inline blk_status h_run_msg(blkc_ctx *c, const char *kernel, unsigned gx, const blk_arg *a, int na, char *msg,
                                   size_t cap) {
    size_t before = strlen(blkc_diagnostics(c));
    unsigned g[3] = {gx, 1, 1};
    blk_status s = blkc_interp_run(c, kernel, g, a, na, NULL);
    snprintf(msg, cap, "%s", blkc_diagnostics(c) + before);
    return s;
}

/* xorshift64* — fresh seeds per test come from the test itself. */
static uint64_t h_rng = 0x9E3779B97F4A7C15ull;
static inline void h_seed(uint64_t s) { h_rng = s ? s : 1; }
static inline uint32_t h_u32(void) {
    h_rng ^= h_rng >> 12; h_rng ^= h_rng << 25; h_rng ^= h_rng >> 27;
    return (uint32_t)((h_rng * 0x2545F4914F6CDD1Dull) >> 32);
}
static inline float h_uniform(float lo, float hi) { return lo + (hi - lo) * (float)(h_u32() >> 8) * (1.0f / 16777216.0f); }
static inline float *h_rand_f32(size_t n, float lo, float hi) {
    float *p = malloc(sizeof(float) * (n ? n : 1));
    for (size_t i = 0; i < n; i++) p[i] = h_uniform(lo, hi);
    return p;
}
static inline float *h_fill_f32(size_t n, float v) {
    float *p = malloc(sizeof(float) * (n ? n : 1));
    for (size_t i = 0; i < n; i++) p[i] = v;
    return p;
}

/* bf16 / f16 written independently of the compiler's fpconv (RNE). */
static inline uint16_t h_f2bf(float f) {
    uint32_t u; memcpy(&u, &f, 4);
    if ((u & 0x7fffffff) > 0x7f800000) return 0x7fc0;
    u += 0x7fff + ((u >> 16) & 1);
    return (uint16_t)(u >> 16);
}
static inline float h_bf2f(uint16_t h) { uint32_t u = (uint32_t)h << 16; float f; memcpy(&f, &u, 4); return f; }
static inline float h_h2f(uint16_t h) {
    int e = (h >> 10) & 31, m = h & 1023;
    float v = e == 0 ? ldexpf((float)m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexpf((float)(m | 1024), e - 25);
    return (h & 0x8000) ? -v : v;
}
static inline uint16_t h_f2h(float f) { /* nearest f16 by search over the 65536 candidates' neighbourhood */
    if (isnan(f)) return 0x7e00;
    uint16_t sign = signbit(f) ? 0x8000 : 0;
    float a = fabsf(f);
    if (a >= 65520.0f) return sign | 0x7c00;
    uint16_t lo = 0, hi = 0x7bff;
    while (lo < hi) { uint16_t mid = (uint16_t)((lo + hi + 1) / 2); if (h_h2f(mid) <= a) lo = mid; else hi = (uint16_t)(mid - 1); }
    uint16_t best = lo;
    if (lo < 0x7bff || a > h_h2f(0x7bff)) {
        float dlo = a - h_h2f(lo), dhi = h_h2f((uint16_t)(lo + 1)) - a;
        if (dhi < dlo || (dhi == dlo && (lo & 1))) best = (uint16_t)(lo + 1);
    }
    return sign | best;
}
static inline uint16_t *h_to_bf16(const float *x, size_t n) {
    uint16_t *p = malloc(2 * (n ? n : 1));
    for (size_t i = 0; i < n; i++) p[i] = h_f2bf(x[i]);
    return p;
}
static inline float h_round_bf16(float x) { return h_bf2f(h_f2bf(x)); }

/* |got - want| <= atol + rtol * |want| everywhere (NaN only where want is NaN;
 * an infinity only where want is the same infinity). */
static inline int h_close(const char *what, const float *got, const float *want, size_t n, float rtol, float atol) {
    size_t bad = 0;
    for (size_t i = 0; i < n; i++) {
        float g = got[i], w = want[i];
        int ok = isnan(w) ? isnan(g) : (!isnan(g) && (g == w || fabsf(g - w) <= atol + rtol * fabsf(w)));
        if (!ok) {
            if (bad < 5) fprintf(stderr, "  %s[%zu]: got %.9g, want %.9g\n", what, i, g, w);
            bad++;
        }
    }
    if (bad) {
        failures++;
        fprintf(stderr, "FAIL: %s: %zu of %zu elements differ (rtol %g, atol %g)\n", what, bad, n, rtol, atol);
    }
    return bad == 0;
}

static inline int h_close_bf16(const char *what, const uint16_t *got, const float *want, size_t n, float rtol, float atol) {
    float *g = malloc(sizeof(float) * (n ? n : 1));
    for (size_t i = 0; i < n; i++) g[i] = h_bf2f(got[i]);
    int ok = h_close(what, g, want, n, rtol, atol);
    free(g);
    return ok;
}

static inline int h_equal_i32(const char *what, const int32_t *got, const int32_t *want, size_t n) {
    size_t bad = 0;
    for (size_t i = 0; i < n; i++)
        if (got[i] != want[i]) {
            if (bad < 5) fprintf(stderr, "  %s[%zu]: got %d, want %d\n", what, i, got[i], want[i]);
            bad++;
        }
    if (bad) { failures++; fprintf(stderr, "FAIL: %s: %zu of %zu differ\n", what, bad, n); }
    return bad == 0;
}

static inline unsigned h_cdiv(long a, long b) { return (unsigned)((a + b - 1) / b); }

#endif

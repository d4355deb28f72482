/* gpu_bench.c — gpu_check compile-bench and launch-bench (gpu_check.h;
 * docs/gpu-testing.md): the host-side costs of a kernel from source.
 */
#include "gpu_check.h"

/* ------------------------------------------------------------------ benches */

static char *stdlib_source(const options *o, const char *file, char *path, size_t n, size_t *len) {
    snprintf(path, n, "%s/%s", o->stdlib, file);
    char *s = test_read_file(path, len);
    if (!s) printf("error: cannot read %s\n", path);
    return s;
}

/* What both benches start from: the device open, the JIT installed and
 * elementwise.blk read (its path, text and length); nonzero on failure. */
static int bench_open(const options *o, char *path, size_t n, size_t *len, char **src) {
    int rc = open_device(o);
    if (rc) return rc;
    blkrt_jit_install();
    *src = stdlib_source(o, "elementwise.blk", path, n, len);
    return *src ? 0 : 1;
}

/* The cold path a program takes: vector_add from source to its first
 * launch, no caches (CUDA_CACHE_DISABLE, blk cache off). A load from source
 * runs only libblkc's front end; the first launch compiles the one variant
 * its arguments need (libblkc + the driver's JIT), so the honest number is
 * load + first launch, and the halves are timed on their own: libblkc for
 * one variant (what the launch compiles) and for the two default variants
 * (what a whole-module compile makes), and the driver's load of the one. */
int do_compile_bench(const options *o, int runs) {
    setenv("CUDA_CACHE_DISABLE", "1", 1); /* the driver's own PTX cache: off, before cuInit */
    char path[4096], *src;
    size_t len;
    int rc = bench_open(o, path, sizeof path, &len, &src);
    if (rc) return rc;
    const char *arch = backend_arch(dinfo.arch);
    enum { T_ALL, T_LOAD, T_LAUNCH, T_ONE, T_TWO, T_DRIVER, T_FRESH, T_N };
    double *t[T_N];
    for (int i = 0; i < T_N; i++) t[i] = calloc((size_t)runs, sizeof(double));
    int bad = 0;
    blkrt_source_options so = {.path = path, .kernel = "vector_add", .cache_dir = ""};
    blkrt_ptr buf = 0;
    if (blkrt_malloc(dev, 3 * 4096, &buf)) bad = 1;
    /* aligned pointers and n = 1024: the all-d16 variant */
    blkrt_arg a[] = {BLKRT_PTR(buf), BLKRT_PTR(buf + 4096), BLKRT_PTR(buf + 8192), BLKRT_INT(1024)};
    uint32_t g[3] = {1, 1, 1};
    for (int r = 0; r < runs && !bad; r++) {
        /* 1: libblkrt from source (the user's path): load, kernel handle, first launch */
        blkrt_module *m = NULL;
        blkrt_kernel *k = NULL;
        double t0 = now_s();
        if (blkrt_module_load_source(dev, src, len, &so, &m) || blkrt_module_kernel(m, "vector_add", &k)) bad = 1;
        double t1 = now_s();
        if (!bad && blkrt_launch(k, g, a, 4, NULL)) bad = 1;
        double t2 = now_s();
        t[T_LOAD][r] = (t1 - t0) * 1e3, t[T_LAUNCH][r] = (t2 - t1) * 1e3, t[T_ALL][r] = (t2 - t0) * 1e3;
        if (!bad && blkrt_device_synchronize(dev)) bad = 1;
        if (m) blkrt_module_unload(m);
        /* 2: the halves: libblkc source -> PTX of one variant, then of the default two; the driver's load of one */
        for (int two = 0; two < 2 && !bad; two++) {
            t0 = now_s();
            blkc_ctx *c = blkc_new();
            blkc_set_arch(c, arch);
            if (!two) blkc_set_default_variants(c, 0), blkc_add_variant(c, "x=d16,y=d16,out=d16,n=d16");
            const char *ptx = NULL;
            if (blkc_load_source(c, path, src, len) == BLK_OK && blkc_build(c, "vector_add") == BLK_OK)
                ptx = blkc_emit(c, "ptx");
            t1 = now_s();
            t[two ? T_TWO : T_ONE][r] = (t1 - t0) * 1e3;
            if (!ptx) {
                bad = 2;
            } else if (!two) {
                m = NULL;
                if (blkrt_module_load_ptx(dev, ptx, strlen(ptx), &m) || blkrt_module_kernel(m, "vector_add", &k)) bad = 2;
                t[T_DRIVER][r] = (now_s() - t1) * 1e3;
                if (m) blkrt_module_unload(m);
            }
            blkc_free(c);
        }
    }
    if (buf) blkrt_free(dev, buf);
    if (bad) {
        printf("error: compile-bench: %s\n", blkrt_last_error());
        return 1;
    }
    /* 3: a new process would also create the CUDA context: close the device
     * (releasing the primary context), open it again, load, launch. */
    blkrt_device_close(dev);
    int fresh_runs = runs < 10 ? runs : 10;
    for (int r = 0; r < fresh_runs && !bad; r++) {
        double t0 = now_s();
        blkrt_module *m = NULL;
        blkrt_kernel *k = NULL;
        buf = 0;
        if (blkrt_device_open(o->ordinal, &dev) || blkrt_module_load_source(dev, src, len, &so, &m) ||
            blkrt_module_kernel(m, "vector_add", &k) || blkrt_malloc(dev, 3 * 4096, &buf)) {
            bad = 3;
            break;
        }
        blkrt_arg af[] = {BLKRT_PTR(buf), BLKRT_PTR(buf + 4096), BLKRT_PTR(buf + 8192), BLKRT_INT(1024)};
        if (blkrt_launch(k, g, af, 4, NULL) || blkrt_device_synchronize(dev)) bad = 4;
        t[T_FRESH][r] = (now_s() - t0) * 1e3;
        blkrt_free(dev, buf);
        blkrt_module_unload(m);
        blkrt_device_close(dev);
    }
    if (bad) {
        printf("error: compile-bench (fresh context): %s\n", blkrt_last_error());
        return 1;
    }
    double md[T_N];
    for (int i = 0; i < T_N; i++) md[i] = median(t[i], (size_t)(i == T_FRESH ? fresh_runs : runs));
    printf("\n| host-side row | median | runs | notes |\n|---|---|---|---|\n");
    printf("| cold compile+load, vector_add from source to its first launch (blkrt_module_load_source + blkrt_launch, "
           "no caches) | %.1f ms | %d | %s, CUDA_CACHE_DISABLE=1, blk cache off; the launch compiles the d16 variant |\n",
           md[T_ALL], runs, dinfo.name);
    printf("|   of which the load (libblkc front end: blk-meta only) | %.1f ms | %d | |\n", md[T_LOAD], runs);
    printf("|   of which the first launch (one variant: libblkc PTX + cuModuleLoadDataEx + launch) | %.1f ms | %d | |\n",
           md[T_LAUNCH], runs);
    printf("| libblkc source -> PTX, one variant (%s) | %.1f ms | %d | what the first launch compiles |\n", arch,
           md[T_ONE], runs);
    printf("| libblkc source -> PTX, the two default variants | %.1f ms | %d | an ahead-of-time module |\n", md[T_TWO],
           runs);
    printf("| driver PTX -> module (cuModuleLoadDataEx) + kernel, one variant | %.1f ms | %d | |\n", md[T_DRIVER], runs);
    printf("| the same with a new CUDA context: device open + load + first launch + sync | %.1f ms | %d | "
           "the primary context is released between runs |\n", md[T_FRESH], fresh_runs);
    free(src);
    for (int i = 0; i < T_N; i++) free(t[i]);
    return 0;
}

int do_launch_bench(const options *o, int launches) {
    char path[4096], *src;
    size_t len;
    int rc = bench_open(o, path, sizeof path, &len, &src);
    if (rc) return rc;
    blkrt_module *m = NULL;
    blkrt_kernel *k = NULL;
    blkrt_source_options so = {.path = path, .kernel = "vector_add", .cache_dir = ""};
    const int n = 4096;
    blkrt_ptr x, y, out;
    if (blkrt_module_load_source(dev, src, len, &so, &m) || blkrt_module_kernel(m, "vector_add", &k) ||
        blkrt_malloc(dev, 4 * n, &x) || blkrt_malloc(dev, 4 * n, &y) || blkrt_malloc(dev, 4 * n, &out)) {
        printf("error: launch-bench: %s\n", blkrt_last_error());
        return 1;
    }
    blkrt_kernel_info ki;
    blkrt_kernel_get_info(k, &ki);
    int64_t block = 1024;
    blkrt_kernel_const_int(k, "BLOCK", &block);
    uint32_t grid[3] = {(uint32_t)((n + block - 1) / block), 1, 1}, blk[3] = {32u * (uint32_t)ki.num_warps, 1, 1};
    blkrt_arg a[] = {BLKRT_PTR(x), BLKRT_PTR(y), BLKRT_PTR(out), BLKRT_INT(n)};
    int32_t nn = n;
    void *params[] = {&x, &y, &out, &nn};
    const int batch = 500;
    double *t = malloc(sizeof(double) * (size_t)launches);
    double results[2][4];
    for (int mode = 0; mode < 2; mode++) {
        for (int w = 0; w < 2000; w++) /* warm-up */
            if (mode ? blkrt_launch_raw(k, grid, blk, 0, params, NULL) : blkrt_launch(k, grid, a, 4, NULL)) {
                printf("error: launch-bench: %s\n", blkrt_last_error());
                return 1;
            }
        blkrt_device_synchronize(dev);
        double busy = 0;
        for (int i = 0; i < launches; i += batch) {
            int nb = launches - i < batch ? launches - i : batch;
            double b0 = now_s();
            for (int j = 0; j < nb; j++) {
                double t0 = now_s();
                blkrt_status st = mode ? blkrt_launch_raw(k, grid, blk, 0, params, NULL)
                                       : blkrt_launch(k, grid, a, 4, NULL);
                t[i + j] = (now_s() - t0) * 1e6;
                if (st) {
                    printf("error: launch-bench: %s\n", blkrt_last_error());
                    return 1;
                }
            }
            busy += now_s() - b0;
            blkrt_device_synchronize(dev); /* not timed: keeps the launch queue from filling */
        }
        results[mode][1] = busy / launches * 1e6;
        results[mode][0] = median(t, (size_t)launches);
        results[mode][2] = t[(size_t)launches / 10];
        results[mode][3] = t[(size_t)launches * 9 / 10];
    }
    printf("\n| host-side row | median per launch | mean (incl. timers) | p10 / p90 | launches | notes |\n"
           "|---|---|---|---|---|---|\n");
    printf("| blkrt_launch, vector_add n=%d (checked: arguments, variant, limits) | %.2f us | %.2f us | %.2f / %.2f us | "
           "%d | %s, d16 entry, synchronised every %d launches (untimed) |\n",
           n, results[0][0], results[0][1], results[0][2], results[0][3], launches, dinfo.name, batch);
    printf("| blkrt_launch_raw (cuLaunchKernel, no checks), same kernel | %.2f us | %.2f us | %.2f / %.2f us | %d | "
           "fallback entry |\n",
           results[1][0], results[1][1], results[1][2], results[1][3], launches);
    printf("| checking overhead of blkrt_launch over raw | %.2f us | | | | |\n", results[0][0] - results[1][0]);
    blkrt_free(dev, x), blkrt_free(dev, y), blkrt_free(dev, out);
    blkrt_module_unload(m);
    blkrt_device_close(dev);
    free(t), free(src);
    return 0;
}

/* jit.c — a program that compiles .blk source at run time with libblk.
 *
 * Built against an installed blk, with CMake (find_package(blk), target
 * blk::blk) or pkg-config (pkg-config --cflags --libs blk); see
 * docs/embedding.md. The kernel imports the installed stdlib (its fns), so
 * this also shows that the compiler finds the stdlib where blk was
 * installed. It runs on GPU 0 when there is one, else on the CPU interpreter
 * device (or on the CPU when BLK_DEVICE=cpu), and checks the result.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <blk/blk.h>

static const char source[] =
    "import \"elementwise.blk\" as ew;\n"
    "kernel silu_scale(x: *f32, out: *f32, n: i32, scale: f32, const BLOCK: i32 = 128) {\n"
    "    let offs = program_id(0) * BLOCK + arange(0, BLOCK);\n"
    "    let m = offs < n;\n"
    "    store(out + offs, ew.silu(load(x + offs, m)) * scale, m);\n"
    "}\n";

static int fail(const char *what) {
    fprintf(stderr, "jit: %s: %s\n", what, blkrt_last_error());
    return 1;
}

int main(void) {
    if (strcmp(blk_version(), BLK_VERSION_STRING) != 0) {
        fprintf(stderr, "jit: built with blk %s headers, running libblk %s\n", BLK_VERSION_STRING, blk_version());
        return 1;
    }
    const char *env = getenv("BLK_DEVICE");
    int want_cpu = env && strcmp(env, "cpu") == 0;
    blkrt_device *d = NULL;
    if (want_cpu || blkrt_device_open(0, &d) != BLKRT_OK)
        if (blkrt_device_open(BLKRT_DEVICE_CPU, &d)) return fail("open");
    blkrt_device_info info;
    blkrt_device_get_info(d, &info);

    blkrt_module *m;
    blkrt_kernel *k;
    blkrt_source_options opts = {.path = "silu_scale.blk", .cache_dir = ""};
    if (blkrt_module_load_source(d, source, strlen(source), &opts, &m)) return fail("load_source");
    if (blkrt_module_kernel(m, "silu_scale", &k)) return fail("kernel");

    enum { N = 1000 };
    static float x[N], out[N];
    for (int i = 0; i < N; i++) x[i] = (float)(i - N / 2) / 100.0f;
    blkrt_ptr dx, dout;
    if (blkrt_malloc(d, sizeof x, &dx) || blkrt_malloc(d, sizeof out, &dout)) return fail("malloc");
    blkrt_memcpy_htod(d, dx, x, sizeof x);
    int64_t block = 0;
    blkrt_kernel_const_int(k, "BLOCK", &block);
    uint32_t grid[3] = {(uint32_t)((N + block - 1) / block), 1, 1};
    blkrt_arg args[] = {BLKRT_PTR(dx), BLKRT_PTR(dout), BLKRT_INT(N), BLKRT_FLOAT(2.0)};
    if (blkrt_launch(k, grid, args, 4, NULL)) return fail("launch");
    if (blkrt_memcpy_dtoh(d, out, dout, sizeof out)) return fail("copy back");

    int bad = 0;
    for (int i = 0; i < N; i++) {
        double want = 2.0 * x[i] / (1.0 + exp(-x[i]));
        if (fabs(out[i] - want) > 1e-4 * (1.0 + fabs(want))) bad++;
    }
    printf("jit: libblk %s on %s (%s): silu_scale over %d elements, %d wrong\n", blk_version(), info.name,
           info.arch, N, bad);
    blkrt_free(d, dx);
    blkrt_free(d, dout);
    blkrt_module_unload(m);
    blkrt_device_close(d);
    return bad != 0;
}

/* aot.c — a program that loads ahead-of-time PTX with the compiler-free
 * libblkrt (no LLVM, no compiler in the process).
 *
 *   blkc stdlib/elementwise.blk --kernel vector_add -o vadd.ptx
 *   ./aot vadd.ptx
 *
 * Built against an installed blk, with CMake (blk::blkrt) or pkg-config
 * (blkrt). Without a GPU there is nothing to run PTX on: it says so and exits
 * 0 (77 with --require-gpu). The tests run it on a fake driver.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <blk/blkrt.h>

static int fail(const char *what) {
    fprintf(stderr, "aot: %s: %s\n", what, blkrt_last_error());
    return 1;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: aot FILE.ptx [--require-gpu]\n");
        return 2;
    }
    FILE *f = fopen(argv[1], "rb");
    if (!f) {
        fprintf(stderr, "aot: cannot open %s\n", argv[1]);
        return 1;
    }
    static char ptx[1 << 22];
    size_t len = fread(ptx, 1, sizeof ptx, f);
    fclose(f);

    blkrt_device *d;
    blkrt_status st = blkrt_device_open(0, &d);
    if (st == BLKRT_ERR_NO_DRIVER || st == BLKRT_ERR_NO_DEVICE) {
        printf("aot: libblkrt %s, no GPU (%s): nothing to run PTX on\n", blkrt_version(), blkrt_last_error());
        return argc > 2 && strcmp(argv[2], "--require-gpu") == 0 ? 77 : 0;
    }
    if (st) return fail("open");
    blkrt_module *m;
    blkrt_kernel *k;
    if (blkrt_module_load_ptx(d, ptx, len, &m)) return fail("load_ptx");
    if (blkrt_module_kernel(m, "vector_add", &k)) return fail("kernel");

    enum { N = 4096 };
    static float x[N], y[N], out[N];
    for (int i = 0; i < N; i++) x[i] = (float)i, y[i] = 2.0f * (float)i;
    blkrt_ptr dx, dy, dout;
    if (blkrt_malloc(d, sizeof x, &dx) || blkrt_malloc(d, sizeof y, &dy) || blkrt_malloc(d, sizeof out, &dout))
        return fail("malloc");
    blkrt_memcpy_htod(d, dx, x, sizeof x);
    blkrt_memcpy_htod(d, dy, y, sizeof y);
    int64_t block = 0;
    blkrt_kernel_const_int(k, "BLOCK", &block);
    uint32_t grid[3] = {(uint32_t)((N + block - 1) / block), 1, 1};
    blkrt_arg args[] = {BLKRT_PTR(dx), BLKRT_PTR(dy), BLKRT_PTR(dout), BLKRT_INT(N)};
    if (blkrt_launch(k, grid, args, 4, NULL)) return fail("launch");
    if (blkrt_memcpy_dtoh(d, out, dout, sizeof out)) return fail("copy back");
    blkrt_device_info info;
    blkrt_device_get_info(d, &info);
    /* A fake driver (tests) runs no code: only a real GPU's results are checked. */
    int check = getenv("BLKRT_CUDA_LIBRARY") == NULL, bad = 0;
    for (int i = 0; check && i < N; i++) bad += out[i] != 3.0f * (float)i;
    printf("aot: libblkrt %s on %s: vector_add launched with grid %u (BLOCK %lld)%s, %d wrong\n", blkrt_version(),
           info.name, grid[0], (long long)block, check ? "" : " [results not checked: fake driver]", bad);
    blkrt_free(d, dx);
    blkrt_free(d, dy);
    blkrt_free(d, dout);
    blkrt_module_unload(m);
    blkrt_device_close(d);
    return bad != 0;
}

/* Tutorial 2 (docs/tutorials/02-vector-add.md): one kernel, two ways into a
 * C program. JIT: vector_add.blk compiled at run time by libblkrt_jit (for
 * the device's arch, or for the CPU interpreter). AOT: vector_add.ptx,
 * compiled by `blkc --arch sm_80` at build time, loaded by libblkrt alone
 * (a GPU only; PTX does not run on the CPU device). Both are checked
 * against a C loop, except on the tests' fake driver, which runs no code.
 *
 *   tutorial_vector_add [cpu|GPU] [vector_add.ptx]
 */
#include "tutorial.h"

/* Launch k over n elements and compare with x + y. */
static int run(blkrt_device *d, blkrt_kernel *k, const char *how, int n) {
    float *x = malloc((size_t)n * 4), *y = malloc((size_t)n * 4), *out = malloc((size_t)n * 4);
    double *want = malloc((size_t)n * 8);
    tut_fill(x, (size_t)n, 1, -1.0f, 1.0f);
    tut_fill(y, (size_t)n, 2, -1.0f, 1.0f);
    for (int i = 0; i < n; i++) want[i] = x[i] + y[i];
    blkrt_ptr dx = tut_upload(d, x, (size_t)n * 4), dy = tut_upload(d, y, (size_t)n * 4),
              dout = tut_upload(d, NULL, (size_t)n * 4);
    int64_t block;
    TUT_CHECK(blkrt_kernel_const_int(k, "BLOCK", &block)); /* the grid follows the compiled BLOCK */
    uint32_t grid[3] = {(uint32_t)((n + block - 1) / block), 1, 1};
    blkrt_arg args[] = {BLKRT_PTR(dx), BLKRT_PTR(dy), BLKRT_PTR(dout), BLKRT_INT(n)};
    TUT_CHECK(blkrt_launch(k, grid, args, 4, NULL));
    tut_download(d, out, dout, (size_t)n * 4);
    int fail = 0;
    char what[64];
    snprintf(what, sizeof what, "vector_add %s n=%d BLOCK=%lld", how, n, (long long)block);
    if (getenv("BLKRT_CUDA_LIBRARY")) printf("%-34s launched (fake driver: results not checked)\n", what);
    else fail = tut_compare(what, out, want, (size_t)n, 0, 0); /* x + y in f32 is exact to compare */
    TUT_CHECK(blkrt_free(d, dx));
    TUT_CHECK(blkrt_free(d, dy));
    TUT_CHECK(blkrt_free(d, dout));
    free(x), free(y), free(out), free(want);
    return fail;
}

int main(int argc, char **argv) {
    blkrt_device *d = tut_device(argc, argv);
    blkrt_device_info info;
    TUT_CHECK(blkrt_device_get_info(d, &info));
    int fails = 0;

    /* JIT: source -> kernel, with BLOCK chosen here */
    blkrt_define def = {.name = "BLOCK", .ival = 256};
    blkrt_module *m;
    blkrt_kernel *k = tut_kernel(d, "vector_add.blk", "vector_add", &def, 1, &m);
    fails += run(d, k, "JIT", 100003);
    TUT_CHECK(blkrt_module_unload(m));

    /* AOT: PTX from blkc, with the source's BLOCK (1024) */
    const char *ptx_path = argc > 2 ? argv[2] : NULL;
    if (!ptx_path) {
        printf("AOT: no PTX file given\n");
    } else if (info.kind == BLKRT_KIND_CPU) {
        printf("AOT: %s needs a GPU (PTX does not run on the CPU device)\n", ptx_path);
    } else {
        FILE *f = fopen(ptx_path, "rb");
        if (!f) {
            fprintf(stderr, "cannot open %s\n", ptx_path);
            return 1;
        }
        static char ptx[1 << 20];
        size_t len = fread(ptx, 1, sizeof ptx, f);
        fclose(f);
        TUT_CHECK(blkrt_module_load_ptx(d, ptx, len, &m));
        TUT_CHECK(blkrt_module_kernel(m, "vector_add", &k));
        fails += run(d, k, "AOT", 100003);
        TUT_CHECK(blkrt_module_unload(m));
    }
    TUT_CHECK(blkrt_device_close(d));
    return fails != 0;
}

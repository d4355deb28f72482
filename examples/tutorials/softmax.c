/* Tutorial 3 (docs/tutorials/03-fused-softmax.md): the fused softmax of
 * softmax.blk on ragged shapes, against softmax in double precision.
 *
 *   tutorial_softmax [cpu|GPU] [ROWS COLS]     (make test: cpu, small sizes)
 */
#include "tutorial.h"

/* The smallest power of two >= n: BLOCK must hold a whole row. */
static int next_pow2(int n) {
    int b = 1;
    while (b < n) b *= 2;
    return b;
}

static void reference(double *y, const float *x, int rows, int cols, int x_stride) {
    for (int r = 0; r < rows; r++) {
        const float *xr = x + (size_t)r * x_stride;
        double m = -INFINITY, s = 0;
        for (int c = 0; c < cols; c++) m = fmax(m, xr[c]);
        for (int c = 0; c < cols; c++) s += exp(xr[c] - m);
        for (int c = 0; c < cols; c++) y[(size_t)r * cols + c] = exp(xr[c] - m) / s;
    }
}

/* One shape: rows x cols inside an x of row stride x_stride, y dense. */
static int run(blkrt_device *d, int rows, int cols, int x_stride, uint32_t grid_rows) {
    blkrt_define defs[] = {{.name = "BLOCK", .ival = next_pow2(cols)},
                           /* more warps for longer rows, as Triton's tutorial does */
                           {.name = "num_warps", .ival = cols >= 2048 ? 8 : 4}};
    blkrt_module *m;
    blkrt_kernel *k = tut_kernel(d, "softmax.blk", "softmax", defs, 2, &m);
    size_t nx = (size_t)rows * x_stride, ny = (size_t)rows * cols;
    float *x = malloc(nx * sizeof *x), *y = malloc(ny * sizeof *y);
    double *want = malloc(ny * sizeof *want);
    tut_fill(x, nx, 42u + (uint32_t)cols, -5.0f, 5.0f);
    x[0] = 80.0f; /* exp(80) overflows f32: only the max shift saves row 0 */
    if (cols > 1) x[1] = -INFINITY;
    blkrt_ptr dx = tut_upload(d, x, nx * sizeof *x), dy = tut_upload(d, NULL, ny * sizeof *y);
    blkrt_arg args[] = {BLKRT_PTR(dy), BLKRT_PTR(dx), BLKRT_INT(x_stride), BLKRT_INT(cols), BLKRT_INT(rows),
                        BLKRT_INT(cols)};
    uint32_t grid[3] = {grid_rows, 1, 1};
    TUT_CHECK(blkrt_launch(k, grid, args, 6, NULL));
    tut_download(d, y, dy, ny * sizeof *y);
    reference(want, x, rows, cols, x_stride);
    char what[96];
    snprintf(what, sizeof what, "softmax %dx%d (stride %d, %u programs)", rows, cols, x_stride, grid_rows);
    int fail = tut_compare(what, y, want, ny, 1e-7, 1e-5);
    TUT_CHECK(blkrt_free(d, dx));
    TUT_CHECK(blkrt_free(d, dy));
    TUT_CHECK(blkrt_module_unload(m));
    free(x);
    free(y);
    free(want);
    return fail;
}

int main(int argc, char **argv) {
    blkrt_device *d = tut_device(argc, argv);
    int fails = 0;
    if (argc > 3) {
        int rows = atoi(argv[2]), cols = atoi(argv[3]);
        fails += run(d, rows, cols, cols, (uint32_t)rows);
    } else {
        fails += run(d, 37, 781, 781, 37);   /* one program per row */
        fails += run(d, 53, 100, 131, 8);    /* 8 programs stride over 53 rows; padded input rows */
        fails += run(d, 3, 2500, 2500, 3);   /* BLOCK 4096, 8 warps */
        fails += run(d, 5, 1, 1, 2);         /* one column: every output is 1 */
    }
    TUT_CHECK(blkrt_device_close(d));
    return fails != 0;
}

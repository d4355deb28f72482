/* Tutorial 8 (docs/tutorials/08-graphs.md): two launches captured once into
 * a graph (CUDA graphs on a GPU; a recorded list on the CPU device) and
 * replayed with new input data: t = x + y (tutorial 2's kernel), then the
 * row softmax of t (tutorial 3's). Checks that capturing runs nothing and
 * that every replay computes softmax(x + y) of the data in the buffers at
 * replay time.
 *
 *   tutorial_graphs [cpu|GPU] [ROWS COLS]     (make test: cpu, small sizes)
 */
#include "tutorial.h"

int main(int argc, char **argv) {
    blkrt_device *d = tut_device(argc, argv);
    int rows = argc > 3 ? atoi(argv[2]) : 29, cols = argc > 3 ? atoi(argv[3]) : 300;
    int n = rows * cols, block = 1;
    while (block < cols) block *= 2;
    blkrt_module *mv, *ms;
    blkrt_define vdef = {.name = "BLOCK", .ival = 1024}, sdef = {.name = "BLOCK", .ival = block};
    blkrt_kernel *vadd = tut_kernel(d, "vector_add.blk", "vector_add", &vdef, 1, &mv);
    blkrt_kernel *soft = tut_kernel(d, "softmax.blk", "softmax", &sdef, 1, &ms);
    size_t bytes = (size_t)n * 4;
    float *x = malloc(bytes), *y = malloc(bytes), *out = malloc(bytes);
    double *want = malloc((size_t)n * 8);
    tut_fill(y, (size_t)n, 77, -1.0f, 1.0f);
    blkrt_ptr dx = tut_upload(d, NULL, bytes), dy = tut_upload(d, y, bytes), dt = tut_upload(d, NULL, bytes),
              dout = tut_upload(d, NULL, bytes);

    /* 1. capture: the launches are recorded, not run */
    blkrt_stream *s;
    TUT_CHECK(blkrt_stream_create(d, &s));
    TUT_CHECK(blkrt_graph_begin_capture(s));
    blkrt_arg va[] = {BLKRT_PTR(dx), BLKRT_PTR(dy), BLKRT_PTR(dt), BLKRT_INT(n)};
    TUT_CHECK(blkrt_launch(vadd, (uint32_t[3]){(uint32_t)((n + 1023) / 1024), 1, 1}, va, 4, s));
    blkrt_arg sa[] = {BLKRT_PTR(dout), BLKRT_PTR(dt), BLKRT_INT(cols), BLKRT_INT(cols), BLKRT_INT(rows),
                      BLKRT_INT(cols)};
    TUT_CHECK(blkrt_launch(soft, (uint32_t[3]){(uint32_t)rows, 1, 1}, sa, 6, s));
    blkrt_graph *g;
    TUT_CHECK(blkrt_graph_end_capture(s, &g));
    tut_download(d, out, dout, bytes);
    int fails = 0, untouched = 1;
    for (int i = 0; i < n; i++) untouched &= out[i] == 0.0f;
    printf("%-34s %s\n", "capture ran nothing", untouched ? "ok" : "FAIL");
    fails += !untouched;

    /* 2. replay with new data: the graph reads whatever the buffers hold */
    for (int r = 0; r < 3; r++) {
        tut_fill(x, (size_t)n, 1000u + (uint32_t)r, -4.0f, 4.0f);
        TUT_CHECK(blkrt_memcpy_htod_async(d, dx, x, bytes, s)); /* ordered before the replay on s */
        TUT_CHECK(blkrt_graph_launch(g, s));
        TUT_CHECK(blkrt_stream_synchronize(s));
        TUT_CHECK(blkrt_memcpy_dtoh(d, out, dout, bytes));
        for (int i = 0; i < rows; i++) {
            double m = -INFINITY, sum = 0;
            for (int j = 0; j < cols; j++) m = fmax(m, (double)(x[i * cols + j] + y[i * cols + j]));
            for (int j = 0; j < cols; j++) sum += exp((double)(x[i * cols + j] + y[i * cols + j]) - m);
            for (int j = 0; j < cols; j++) want[i * cols + j] = exp((double)(x[i * cols + j] + y[i * cols + j]) - m) / sum;
        }
        char what[64];
        snprintf(what, sizeof what, "replay %d: softmax(x + y) %dx%d", r, rows, cols);
        fails += tut_compare(what, out, want, (size_t)n, 1e-7, 1e-5);
    }

    TUT_CHECK(blkrt_graph_destroy(g));
    TUT_CHECK(blkrt_stream_destroy(s));
    blkrt_ptr all[] = {dx, dy, dt, dout};
    for (int i = 0; i < 4; i++) TUT_CHECK(blkrt_free(d, all[i]));
    TUT_CHECK(blkrt_module_unload(mv));
    TUT_CHECK(blkrt_module_unload(ms));
    TUT_CHECK(blkrt_device_close(d));
    free(x), free(y), free(out), free(want);
    return fails != 0;
}

/* Tutorial 4 (docs/tutorials/04-matrix-multiplication.md): matmul.blk on
 * ragged shapes and strided inputs, with and without its leaky-ReLU
 * epilogue, against a double-precision product of the same f16 inputs.
 *
 *   tutorial_matmul [cpu|GPU] [M N K]     (make test: cpu, small sizes)
 */
#include "tutorial.h"

typedef struct {
    int M, N, K;
    int pad;           /* extra elements at the end of each row of A and B: strides != widths */
    int BM, BN, BK, GROUP;
    int leaky;
} shape;

static int run(blkrt_device *d, shape s) {
    blkrt_define defs[] = {{.name = "BM", .ival = s.BM}, {.name = "BN", .ival = s.BN}, {.name = "BK", .ival = s.BK},
                           {.name = "GROUP", .ival = s.GROUP}, {.name = "LEAKY_RELU", .ival = s.leaky}};
    blkrt_module *m;
    blkrt_kernel *k = tut_kernel(d, "matmul.blk", "matmul", defs, 5, &m);
    int sa = s.K + s.pad, sb = s.N + s.pad, sc = s.N;
    size_t na = (size_t)s.M * sa, nb = (size_t)s.K * sb, nc = (size_t)s.M * sc;
    uint16_t *a = malloc(na * 2), *b = malloc(nb * 2), *c = malloc(nc * 2);
    float *af = malloc(na * 4), *bf = malloc(nb * 4), *cf = malloc(nc * 4);
    double *want = malloc(nc * sizeof *want);
    /* multiples of 1/64 in [-2, 2): exact in f16, so the reference sees the same inputs */
    tut_fill(af, na, 7, -2.0f, 2.0f);
    tut_fill(bf, nb, 11, -2.0f, 2.0f);
    for (size_t i = 0; i < na; i++) a[i] = tut_f16(af[i] = roundf(af[i] * 64) / 64);
    for (size_t i = 0; i < nb; i++) b[i] = tut_f16(bf[i] = roundf(bf[i] * 64) / 64);
    for (int i = 0; i < s.M; i++)
        for (int j = 0; j < s.N; j++) {
            double acc = 0;
            for (int q = 0; q < s.K; q++) acc += (double)af[(size_t)i * sa + q] * bf[(size_t)q * sb + j];
            want[(size_t)i * sc + j] = s.leaky && acc < 0 ? 0.01 * acc : acc;
        }
    blkrt_ptr da = tut_upload(d, a, na * 2), db = tut_upload(d, b, nb * 2), dc = tut_upload(d, NULL, nc * 2);
    blkrt_arg args[] = {BLKRT_PTR(dc), BLKRT_PTR(da), BLKRT_PTR(db), BLKRT_INT(s.M), BLKRT_INT(s.N),
                        BLKRT_INT(s.K), BLKRT_INT(sa), BLKRT_INT(sb), BLKRT_INT(sc)};
    uint32_t grid[3] = {(uint32_t)(((s.M + s.BM - 1) / s.BM) * ((s.N + s.BN - 1) / s.BN)), 1, 1};
    TUT_CHECK(blkrt_launch(k, grid, args, 9, NULL));
    tut_download(d, c, dc, nc * 2);
    for (size_t i = 0; i < nc; i++) cf[i] = tut_f32(c[i]);
    char what[96];
    snprintf(what, sizeof what, "matmul %dx%dx%d BM=%d BN=%d BK=%d G=%d%s", s.M, s.N, s.K, s.BM, s.BN, s.BK, s.GROUP,
             s.leaky ? " +leaky" : "");
    /* f16 output: half an ulp of f16 is 2^-11 relative; the f32 sum adds little */
    int fail = tut_compare(what, cf, want, nc, 1e-3, 1e-3);
    TUT_CHECK(blkrt_free(d, da));
    TUT_CHECK(blkrt_free(d, db));
    TUT_CHECK(blkrt_free(d, dc));
    TUT_CHECK(blkrt_module_unload(m));
    free(a), free(b), free(c), free(af), free(bf), free(cf), free(want);
    return fail;
}

int main(int argc, char **argv) {
    blkrt_device *d = tut_device(argc, argv);
    int fails = 0;
    if (argc > 4) {
        shape s = {atoi(argv[2]), atoi(argv[3]), atoi(argv[4]), 0, 128, 128, 32, 8, 0};
        fails += run(d, s);
    } else {
        fails += run(d, (shape){100, 75, 130, 0, 64, 64, 32, 8, 0});  /* ragged in M, N and K */
        fails += run(d, (shape){150, 90, 48, 5, 32, 32, 16, 3, 0});   /* strided rows; 5 x 3 tiles in groups of 3 */
        fails += run(d, (shape){33, 47, 70, 2, 32, 64, 32, 2, 1});    /* the fused epilogue */
    }
    TUT_CHECK(blkrt_device_close(d));
    return fails != 0;
}

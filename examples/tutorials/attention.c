/* Tutorial 7 (docs/tutorials/07-fused-attention.md): attention.blk, causal
 * and not, on a ragged sequence length, against softmax(q k^T * scale) v in
 * double precision from the same f16 inputs.
 *
 *   tutorial_attention [cpu|GPU] [BH SEQ]     (make test: cpu, small sizes)
 */
#include "tutorial.h"

typedef struct {
    int bh, seq, D, BM, BN, causal;
} shape;

static void reference(double *out, const float *q, const float *k, const float *v, shape s, double scale) {
    double *p = malloc(sizeof *p * (size_t)s.seq);
    for (int h = 0; h < s.bh; h++) {
        size_t base = (size_t)h * s.seq * s.D;
        for (int i = 0; i < s.seq; i++) {
            int last = s.causal ? i : s.seq - 1;
            double mx = -INFINITY, sum = 0;
            for (int j = 0; j <= last; j++) {
                double dotp = 0;
                for (int t = 0; t < s.D; t++) dotp += (double)q[base + (size_t)i * s.D + t] * k[base + (size_t)j * s.D + t];
                p[j] = dotp * scale;
                mx = fmax(mx, p[j]);
            }
            for (int j = 0; j <= last; j++) sum += p[j] = exp(p[j] - mx);
            for (int t = 0; t < s.D; t++) {
                double o = 0;
                for (int j = 0; j <= last; j++) o += p[j] * v[base + (size_t)j * s.D + t];
                out[base + (size_t)i * s.D + t] = o / sum;
            }
        }
    }
    free(p);
}

static int run(blkrt_device *d, shape s) {
    blkrt_define defs[] = {{.name = "D", .ival = s.D}, {.name = "BM", .ival = s.BM}, {.name = "BN", .ival = s.BN},
                           {.name = "CAUSAL", .ival = s.causal}};
    blkrt_module *m;
    blkrt_kernel *k = tut_kernel(d, "attention.blk", "attention", defs, 4, &m);
    size_t n = (size_t)s.bh * s.seq * s.D;
    float *f[3];
    uint16_t *h[3];
    blkrt_ptr dp[3];
    for (int i = 0; i < 3; i++) {
        f[i] = malloc(n * 4);
        h[i] = malloc(n * 2);
        tut_fill(f[i], n, 100u + (uint32_t)i, -2.0f, 2.0f);
        for (size_t j = 0; j < n; j++) h[i][j] = tut_f16(f[i][j] = roundf(f[i][j] * 64) / 64); /* exact in f16 */
        dp[i] = tut_upload(d, h[i], n * 2);
    }
    blkrt_ptr dout = tut_upload(d, NULL, n * 2);
    double scale = 1.0 / sqrt((double)s.D);
    blkrt_arg args[] = {BLKRT_PTR(dout), BLKRT_PTR(dp[0]), BLKRT_PTR(dp[1]), BLKRT_PTR(dp[2]), BLKRT_INT(s.seq),
                        BLKRT_FLOAT(scale)};
    uint32_t grid[3] = {(uint32_t)((s.seq + s.BM - 1) / s.BM), (uint32_t)s.bh, 1};
    TUT_CHECK(blkrt_launch(k, grid, args, 6, NULL));
    uint16_t *out = malloc(n * 2);
    float *outf = malloc(n * 4);
    double *want = malloc(n * sizeof *want);
    tut_download(d, out, dout, n * 2);
    for (size_t j = 0; j < n; j++) outf[j] = tut_f32(out[j]);
    reference(want, f[0], f[1], f[2], s, scale);
    char what[96];
    snprintf(what, sizeof what, "attention BH=%d seq=%d D=%d BM=%d BN=%d%s", s.bh, s.seq, s.D, s.BM, s.BN,
             s.causal ? " causal" : "");
    /* p is rounded to f16 for the second dot (2^-11 relative), the output too */
    int fail = tut_compare(what, outf, want, n, 2e-3, 4e-3);
    for (int i = 0; i < 3; i++) {
        TUT_CHECK(blkrt_free(d, dp[i]));
        free(f[i]);
        free(h[i]);
    }
    TUT_CHECK(blkrt_free(d, dout));
    TUT_CHECK(blkrt_module_unload(m));
    free(out), free(outf), free(want);
    return fail;
}

int main(int argc, char **argv) {
    blkrt_device *d = tut_device(argc, argv);
    int fails = 0;
    if (argc > 3) {
        for (int c = 0; c < 2; c++) fails += run(d, (shape){atoi(argv[2]), atoi(argv[3]), 64, 64, 64, c});
    } else {
        fails += run(d, (shape){3, 77, 32, 32, 16, 0});  /* 77 = 2 x 32 + 13: the last query and key blocks are ragged */
        fails += run(d, (shape){3, 77, 32, 32, 16, 1});
        fails += run(d, (shape){2, 50, 64, 16, 32, 1});  /* BN > BM: the causal edge inside a key block */
    }
    TUT_CHECK(blkrt_device_close(d));
    return fails != 0;
}

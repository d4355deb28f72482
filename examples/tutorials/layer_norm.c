/* Tutorial 6 (docs/tutorials/06-layer-norm.md): layer_norm.blk forward and
 * backward against the formulas in double precision, on ragged rows with a
 * row stride, the backward's partial sums over G programs.
 *
 *   tutorial_layer_norm [cpu|GPU] [M N]     (make test: cpu, small sizes)
 */
#include "tutorial.h"

static int run(blkrt_device *d, int M, int N, int stride, int G) {
    int block = 1;
    while (block < N) block *= 2;
    blkrt_define def = {.name = "BLOCK", .ival = block};
    blkrt_module *mf, *mb, *mr;
    blkrt_kernel *fwd = tut_kernel(d, "layer_norm.blk", "layer_norm_fwd", &def, 1, &mf);
    blkrt_kernel *bdx = tut_kernel(d, "layer_norm.blk", "layer_norm_bwd_dx", &def, 1, &mb);
    blkrt_kernel *bdw = tut_kernel(d, "layer_norm.blk", "layer_norm_bwd_dwdb", NULL, 0, &mr);
    size_t nx = (size_t)M * stride;
    float *x = malloc(nx * 4), *dy = malloc(nx * 4), *w = malloc((size_t)N * 4), *b = malloc((size_t)N * 4);
    tut_fill(x, nx, 3, -4.0f, 6.0f); /* mean far from 0: the two-pass variance matters */
    tut_fill(dy, nx, 4, -1.0f, 1.0f);
    tut_fill(w, (size_t)N, 5, 0.5f, 1.5f);
    tut_fill(b, (size_t)N, 6, -0.5f, 0.5f);
    const double eps = 1e-5;
    blkrt_ptr dX = tut_upload(d, x, nx * 4), dDY = tut_upload(d, dy, nx * 4), dW = tut_upload(d, w, (size_t)N * 4),
              dB = tut_upload(d, b, (size_t)N * 4), dY = tut_upload(d, NULL, nx * 4), dDX = tut_upload(d, NULL, nx * 4),
              dMean = tut_upload(d, NULL, (size_t)M * 4), dRstd = tut_upload(d, NULL, (size_t)M * 4),
              dWp = tut_upload(d, NULL, (size_t)G * N * 4), dBp = tut_upload(d, NULL, (size_t)G * N * 4),
              dDW = tut_upload(d, NULL, (size_t)N * 4), dDB = tut_upload(d, NULL, (size_t)N * 4);

    blkrt_arg fa[] = {BLKRT_PTR(dY), BLKRT_PTR(dX), BLKRT_PTR(dW), BLKRT_PTR(dB), BLKRT_PTR(dMean),
                      BLKRT_PTR(dRstd), BLKRT_INT(stride), BLKRT_INT(N), BLKRT_FLOAT(eps)};
    TUT_CHECK(blkrt_launch(fwd, (uint32_t[3]){(uint32_t)M, 1, 1}, fa, 9, NULL));
    blkrt_arg ba[] = {BLKRT_PTR(dDX), BLKRT_PTR(dWp), BLKRT_PTR(dBp), BLKRT_PTR(dDY), BLKRT_PTR(dX), BLKRT_PTR(dW),
                      BLKRT_PTR(dMean), BLKRT_PTR(dRstd), BLKRT_INT(stride), BLKRT_INT(M), BLKRT_INT(N)};
    TUT_CHECK(blkrt_launch(bdx, (uint32_t[3]){(uint32_t)G, 1, 1}, ba, 11, NULL));
    blkrt_arg ra[] = {BLKRT_PTR(dDW), BLKRT_PTR(dDB), BLKRT_PTR(dWp), BLKRT_PTR(dBp), BLKRT_INT(G), BLKRT_INT(N)};
    TUT_CHECK(blkrt_launch(bdw, (uint32_t[3]){(uint32_t)((N + 127) / 128), 1, 1}, ra, 6, NULL));

    /* the reference, in double */
    size_t ny = (size_t)M * N;
    double *y_ref = malloc(ny * 8), *dx_ref = malloc(ny * 8), *dw_ref = calloc((size_t)N, 8),
           *db_ref = calloc((size_t)N, 8), *xhat = malloc((size_t)N * 8);
    for (int r = 0; r < M; r++) {
        const float *xr = x + (size_t)r * stride, *g = dy + (size_t)r * stride;
        double mu = 0, var = 0, c1 = 0, c2 = 0;
        for (int c = 0; c < N; c++) mu += xr[c];
        mu /= N;
        for (int c = 0; c < N; c++) var += (xr[c] - mu) * (xr[c] - mu);
        double rs = 1 / sqrt(var / N + eps);
        for (int c = 0; c < N; c++) {
            xhat[c] = (xr[c] - mu) * rs;
            y_ref[(size_t)r * N + c] = xhat[c] * w[c] + b[c];
            c1 += xhat[c] * w[c] * g[c];
            c2 += w[c] * g[c];
            dw_ref[c] += g[c] * xhat[c];
            db_ref[c] += g[c];
        }
        for (int c = 0; c < N; c++) dx_ref[(size_t)r * N + c] = rs * (w[c] * g[c] - c2 / N - xhat[c] * c1 / N);
    }
    /* the device's rows back without their padding */
    float *y = malloc(nx * 4), *dx = malloc(nx * 4), *dwv = malloc((size_t)N * 4), *dbv = malloc((size_t)N * 4);
    float *yd = malloc(ny * 4), *dxd = malloc(ny * 4);
    tut_download(d, y, dY, nx * 4);
    tut_download(d, dx, dDX, nx * 4);
    tut_download(d, dwv, dDW, (size_t)N * 4);
    tut_download(d, dbv, dDB, (size_t)N * 4);
    for (int r = 0; r < M; r++) {
        memcpy(yd + (size_t)r * N, y + (size_t)r * stride, (size_t)N * 4);
        memcpy(dxd + (size_t)r * N, dx + (size_t)r * stride, (size_t)N * 4);
    }
    char what[96];
    int fail = 0;
    snprintf(what, sizeof what, "layer_norm fwd %dx%d", M, N);
    fail += tut_compare(what, yd, y_ref, ny, 1e-5, 1e-4);
    snprintf(what, sizeof what, "layer_norm bwd dx (%d programs)", G);
    fail += tut_compare(what, dxd, dx_ref, ny, 1e-5, 1e-4);
    fail += tut_compare("layer_norm bwd dw", dwv, dw_ref, (size_t)N, 1e-4, 1e-4);
    fail += tut_compare("layer_norm bwd db", dbv, db_ref, (size_t)N, 1e-4, 1e-4);

    blkrt_ptr all[] = {dX, dDY, dW, dB, dY, dDX, dMean, dRstd, dWp, dBp, dDW, dDB};
    for (int i = 0; i < 12; i++) TUT_CHECK(blkrt_free(d, all[i]));
    TUT_CHECK(blkrt_module_unload(mf));
    TUT_CHECK(blkrt_module_unload(mb));
    TUT_CHECK(blkrt_module_unload(mr));
    free(x), free(dy), free(w), free(b), free(y_ref), free(dx_ref), free(dw_ref), free(db_ref), free(xhat);
    free(y), free(dx), free(dwv), free(dbv), free(yd), free(dxd);
    return fail;
}

int main(int argc, char **argv) {
    blkrt_device *d = tut_device(argc, argv);
    int fails = 0;
    if (argc > 3) {
        fails += run(d, atoi(argv[2]), atoi(argv[3]), atoi(argv[3]), 128);
    } else {
        fails += run(d, 45, 300, 310, 8);   /* 45 rows on 8 programs: uneven shares */
        fails += run(d, 7, 1000, 1000, 16); /* more programs than rows: some partial rows stay 0 */
    }
    TUT_CHECK(blkrt_device_close(d));
    return fails != 0;
}

/* stdlib/softmax.blk and norm.blk on the interpreter vs C (double) references. */
#include "harness.h"

static void ref_softmax(const float *x, float *y, int rows, int cols, int log_form) {
    for (int r = 0; r < rows; r++) {
        const float *xr = x + (size_t)r * cols;
        double m = -INFINITY, s = 0;
        for (int j = 0; j < cols; j++) m = fmax(m, xr[j]);
        for (int j = 0; j < cols; j++) s += exp(xr[j] - m);
        for (int j = 0; j < cols; j++)
            y[(size_t)r * cols + j] = log_form ? (float)(xr[j] - m - log(s)) : (float)(exp(xr[j] - m) / s);
    }
}

/* fast: FAST=true (exp(x, fast = true), which the interpreter computes exactly) */
static void softmax_kernel(const char *kernel, int rows, int cols, int block, int log_form, int fast) {
    char def[32];
    snprintf(def, sizeof def, "BLOCK=%d", block);
    const char *defs[] = {def, fast ? "FAST=true" : NULL, NULL};
    blkc_ctx *c = h_build(h_stdlib, "softmax.blk", kernel, defs);
    size_t n = (size_t)rows * cols;
    float *x = h_rand_f32(n, -8, 8), *y = h_fill_f32(n, NAN), *want = malloc(sizeof(float) * n);
    ref_softmax(x, want, rows, cols, log_form);
    blk_arg args[] = {BLK_PTR(y, 4 * n), BLK_PTR(x, 4 * n), BLK_INT(cols), BLK_INT(cols)};
    if (h_run(c, kernel, (unsigned)rows, 1, 1, args, 4) == 0) h_close(kernel, y, want, n, 2e-5f, 1e-7f);
    blkc_free(c);
    free(x); free(y); free(want);
}

static void cross_entropy(int rows, int cols) {
    const char *defs[] = {"BLOCK=512", NULL};
    blkc_ctx *c = h_build(h_stdlib, "softmax.blk", "cross_entropy", defs);
    size_t n = (size_t)rows * cols;
    float *x = h_rand_f32(n, -5, 5), *loss = h_fill_f32((size_t)rows, NAN), *want = malloc(sizeof(float) * (size_t)rows);
    int32_t *tgt = malloc(sizeof(int32_t) * (size_t)rows);
    for (int r = 0; r < rows; r++) {
        tgt[r] = (int32_t)(h_u32() % (uint32_t)cols);
        double m = -INFINITY, s = 0;
        for (int j = 0; j < cols; j++) m = fmax(m, x[(size_t)r * cols + j]);
        for (int j = 0; j < cols; j++) s += exp(x[(size_t)r * cols + j] - m);
        want[r] = (float)(m + log(s) - x[(size_t)r * cols + tgt[r]]);
    }
    blk_arg args[] = {BLK_PTR(loss, 4 * (size_t)rows), BLK_PTR(x, 4 * n), BLK_PTR(tgt, 4 * (size_t)rows),
                      BLK_INT(cols), BLK_INT(cols)};
    if (h_run(c, "cross_entropy", (unsigned)rows, 1, 1, args, 5) == 0) h_close("cross_entropy", loss, want, (size_t)rows, 1e-5f, 1e-5f);
    blkc_free(c);
    free(x); free(loss); free(want); free(tgt);
}

static void layernorm(int rows, int cols) {
    const char *defs[] = {"BLOCK=256", NULL};
    size_t n = (size_t)rows * cols;
    float eps = 1e-5f;
    float *x = h_rand_f32(n, -3, 3), *w = h_rand_f32((size_t)cols, 0.5f, 1.5f), *b = h_rand_f32((size_t)cols, -1, 1);
    float *y = h_fill_f32(n, NAN), *mean = h_fill_f32((size_t)rows, NAN), *rstd = h_fill_f32((size_t)rows, NAN);
    float *wy = malloc(4 * n), *wm = malloc(4 * (size_t)rows), *wr = malloc(4 * (size_t)rows);
    for (int r = 0; r < rows; r++) {
        double mu = 0, var = 0;
        for (int j = 0; j < cols; j++) mu += x[(size_t)r * cols + j];
        mu /= cols;
        for (int j = 0; j < cols; j++) var += (x[(size_t)r * cols + j] - mu) * (x[(size_t)r * cols + j] - mu);
        double rs = 1.0 / sqrt(var / cols + eps);
        wm[r] = (float)mu; wr[r] = (float)rs;
        for (int j = 0; j < cols; j++) wy[(size_t)r * cols + j] = (float)((x[(size_t)r * cols + j] - mu) * rs * w[j] + b[j]);
    }
    blkc_ctx *c = h_build(h_stdlib, "norm.blk", "layernorm_fwd", defs);
    blk_arg args[] = {BLK_PTR(y, 4 * n), BLK_PTR(x, 4 * n), BLK_PTR(w, 4 * (size_t)cols), BLK_PTR(b, 4 * (size_t)cols),
                      BLK_PTR(mean, 4 * (size_t)rows), BLK_PTR(rstd, 4 * (size_t)rows), BLK_INT(cols), BLK_INT(cols), BLK_FLOAT(eps)};
    if (h_run(c, "layernorm_fwd", (unsigned)rows, 1, 1, args, 9) == 0) {
        h_close("layernorm y", y, wy, n, 1e-4f, 1e-5f);
        h_close("layernorm mean", mean, wm, (size_t)rows, 1e-5f, 1e-6f);
        h_close("layernorm rstd", rstd, wr, (size_t)rows, 1e-5f, 1e-6f);
    }
    blkc_free(c);

    /* backward: dx, dw, db against the analytic formulas in double */
    float *dy = h_rand_f32(n, -1, 1), *dx = h_fill_f32(n, NAN), *dw = h_fill_f32((size_t)cols, 0), *db = h_fill_f32((size_t)cols, 0);
    float *wdx = malloc(4 * n), *wdw = calloc((size_t)cols, 4), *wdb = calloc((size_t)cols, 4);
    double *acc_w = calloc((size_t)cols, sizeof(double)), *acc_b = calloc((size_t)cols, sizeof(double));
    for (int r = 0; r < rows; r++) {
        double c1 = 0, c2 = 0;
        for (int j = 0; j < cols; j++) {
            double xh = (x[(size_t)r * cols + j] - wm[r]) * wr[r], wg = dy[(size_t)r * cols + j] * w[j];
            c1 += xh * wg; c2 += wg;
            acc_w[j] += dy[(size_t)r * cols + j] * xh; acc_b[j] += dy[(size_t)r * cols + j];
        }
        c1 /= cols; c2 /= cols;
        for (int j = 0; j < cols; j++) {
            double xh = (x[(size_t)r * cols + j] - wm[r]) * wr[r], wg = dy[(size_t)r * cols + j] * w[j];
            wdx[(size_t)r * cols + j] = (float)((wg - (xh * c1 + c2)) * wr[r]);
        }
    }
    for (int j = 0; j < cols; j++) { wdw[j] = (float)acc_w[j]; wdb[j] = (float)acc_b[j]; }
    c = h_build(h_stdlib, "norm.blk", "layernorm_bwd", defs);
    blk_arg bargs[] = {BLK_PTR(dx, 4 * n), BLK_PTR(dw, 4 * (size_t)cols), BLK_PTR(db, 4 * (size_t)cols), BLK_PTR(dy, 4 * n),
                       BLK_PTR(x, 4 * n), BLK_PTR(w, 4 * (size_t)cols), BLK_PTR(wm, 4 * (size_t)rows),
                       BLK_PTR(wr, 4 * (size_t)rows), BLK_INT(cols), BLK_INT(cols)};
    if (h_run(c, "layernorm_bwd", (unsigned)rows, 1, 1, bargs, 10) == 0) {
        h_close("layernorm_bwd dx", dx, wdx, n, 1e-3f, 1e-5f);
        h_close("layernorm_bwd dw", dw, wdw, (size_t)cols, 1e-4f, 1e-5f);
        h_close("layernorm_bwd db", db, wdb, (size_t)cols, 1e-4f, 1e-5f);
    }
    blkc_free(c);
    free(x); free(w); free(b); free(y); free(mean); free(rstd); free(wy); free(wm); free(wr);
    free(dy); free(dx); free(dw); free(db); free(wdx); free(wdw); free(wdb); free(acc_w); free(acc_b);
}

static void rmsnorm_and_add_ln(int rows, int cols) {
    const char *defs[] = {"BLOCK=128", NULL};
    size_t n = (size_t)rows * cols;
    float eps = 1e-6f;
    float *xf = h_rand_f32(n, -2, 2), *rf = h_rand_f32(n, -2, 2), *wf = h_rand_f32((size_t)cols, 0.5f, 1.5f), *bf = h_rand_f32((size_t)cols, -1, 1);
    uint16_t *x = h_to_bf16(xf, n), *res = h_to_bf16(rf, n), *w = h_to_bf16(wf, (size_t)cols), *b = h_to_bf16(bf, (size_t)cols);
    uint16_t *y = calloc(n, 2), *h = calloc(n, 2);
    float *wy = malloc(4 * n), *wh = malloc(4 * n);
    for (int r = 0; r < rows; r++) {
        double ss = 0;
        for (int j = 0; j < cols; j++) { double v = h_bf2f(x[(size_t)r * cols + j]); ss += v * v; }
        double rs = 1.0 / sqrt(ss / cols + eps);
        for (int j = 0; j < cols; j++) wy[(size_t)r * cols + j] = (float)(h_bf2f(x[(size_t)r * cols + j]) * rs * h_bf2f(w[j]));
    }
    blkc_ctx *c = h_build(h_stdlib, "norm.blk", "rmsnorm", defs);
    blk_arg args[] = {BLK_PTR(y, 2 * n), BLK_PTR(x, 2 * n), BLK_PTR(w, 2 * (size_t)cols), BLK_INT(cols), BLK_INT(cols), BLK_FLOAT(eps)};
    if (h_run(c, "rmsnorm", (unsigned)rows, 1, 1, args, 6) == 0) h_close_bf16("rmsnorm", y, wy, n, 1.0f / 64, 1e-5f);
    blkc_free(c);

    for (int r = 0; r < rows; r++) {
        double mu = 0, var = 0;
        for (int j = 0; j < cols; j++) {
            float hv = h_bf2f(x[(size_t)r * cols + j]) + h_bf2f(res[(size_t)r * cols + j]);
            wh[(size_t)r * cols + j] = h_round_bf16(hv);
            mu += hv;
        }
        mu /= cols;
        for (int j = 0; j < cols; j++) {
            double d = (double)(h_bf2f(x[(size_t)r * cols + j]) + h_bf2f(res[(size_t)r * cols + j])) - mu;
            var += d * d;
        }
        double rs = 1.0 / sqrt(var / cols + eps);
        for (int j = 0; j < cols; j++) {
            double d = (double)(h_bf2f(x[(size_t)r * cols + j]) + h_bf2f(res[(size_t)r * cols + j])) - mu;
            wy[(size_t)r * cols + j] = (float)(d * rs * h_bf2f(w[j]) + h_bf2f(b[j]));
        }
    }
    c = h_build(h_stdlib, "norm.blk", "add_layernorm", defs);
    blk_arg aargs[] = {BLK_PTR(y, 2 * n), BLK_PTR(h, 2 * n), BLK_PTR(x, 2 * n), BLK_PTR(res, 2 * n), BLK_PTR(w, 2 * (size_t)cols),
                       BLK_PTR(b, 2 * (size_t)cols), BLK_INT(cols), BLK_INT(cols), BLK_FLOAT(eps)};
    if (h_run(c, "add_layernorm", (unsigned)rows, 1, 1, aargs, 9) == 0) {
        h_close_bf16("add_layernorm h", h, wh, n, 0, 0);
        h_close_bf16("add_layernorm y", y, wy, n, 1.0f / 64, 1e-2f);
    }
    blkc_free(c);
    free(xf); free(rf); free(wf); free(bf); free(x); free(res); free(w); free(b); free(y); free(h); free(wy); free(wh);
}

/* rmsnorm / layernorm (bf16, rows of any length): the 16-byte-aligned
 * whole-row path, the looped path (LOOPED, rows longer than BLOCK, rows
 * that are not 16-byte aligned: `off` moves every pointer by one element)
 * against double references. */
static void norm_rows(const char *kernel, int rows, int cols, int stride, int block, int chunk, int looped, int off) {
    char d1[32], d2[32], d3[32];
    snprintf(d1, sizeof d1, "BLOCK=%d", block);
    snprintf(d2, sizeof d2, "CHUNK=%d", chunk);
    snprintf(d3, sizeof d3, "LOOPED=%s", looped ? "true" : "false");
    const char *defs[] = {d1, d2, d3, NULL};
    int ln = strcmp(kernel, "layernorm") == 0;
    size_t n = (size_t)rows * stride + (size_t)off;
    float eps = 1e-5f;
    float *xf = h_rand_f32(n, -3, 3), *wf = h_rand_f32((size_t)cols + (size_t)off, 0.5f, 1.5f);
    float *bf = h_rand_f32((size_t)cols + (size_t)off, -1, 1);
    uint16_t *xb = h_to_bf16(xf, n), *wb = h_to_bf16(wf, (size_t)cols + (size_t)off);
    uint16_t *bb = h_to_bf16(bf, (size_t)cols + (size_t)off), *yb = malloc(2 * n);
    memset(yb, 0xFF, 2 * n); /* NaN poison: padding must stay untouched */
    uint16_t *x = xb + off, *w = wb + off, *b = bb + off, *y = yb + off;
    float *want = malloc(sizeof(float) * (size_t)rows * cols);
    uint16_t *got16 = malloc(2 * (size_t)rows * cols);
    for (int r = 0; r < rows; r++) {
        const uint16_t *xr = x + (size_t)r * stride;
        double mu = 0, ss = 0;
        if (ln) {
            for (int j = 0; j < cols; j++) mu += h_bf2f(xr[j]);
            mu /= cols;
        }
        for (int j = 0; j < cols; j++) ss += (h_bf2f(xr[j]) - mu) * (h_bf2f(xr[j]) - mu);
        double rs = 1.0 / sqrt(ss / cols + eps);
        for (int j = 0; j < cols; j++)
            want[(size_t)r * cols + j] = (float)((h_bf2f(xr[j]) - mu) * rs * h_bf2f(w[j]) + (ln ? h_bf2f(b[j]) : 0.0));
    }
    blkc_ctx *c = h_build(h_stdlib, "norm.blk", kernel, defs);
    size_t nb = 2 * (n - (size_t)off), wbytes = 2 * (size_t)cols;
    blk_arg largs[] = {BLK_PTR(y, nb), BLK_PTR(x, nb), BLK_PTR(w, wbytes), BLK_PTR(b, wbytes), BLK_INT(stride),
                       BLK_INT(cols), BLK_FLOAT(eps)};
    blk_arg rargs[] = {BLK_PTR(y, nb), BLK_PTR(x, nb), BLK_PTR(w, wbytes), BLK_INT(stride), BLK_INT(cols), BLK_FLOAT(eps)};
    char what[96];
    snprintf(what, sizeof what, "%s cols=%d stride=%d BLOCK=%d CHUNK=%d%s%s", kernel, cols, stride, block, chunk,
             looped ? " LOOPED" : "", off ? " unaligned" : "");
    if (h_run(c, kernel, (unsigned)rows, 1, 1, ln ? largs : rargs, ln ? 7 : 6) == 0) {
        for (int r = 0; r < rows; r++)
            for (int j = 0; j < cols; j++) got16[(size_t)r * cols + j] = y[(size_t)r * stride + j];
        h_close_bf16(what, got16, want, (size_t)rows * cols, 1.0f / 64, 1e-2f);
        int untouched = 1;
        for (int r = 0; r < rows; r++)
            for (int j = cols; j < stride; j++) untouched &= y[(size_t)r * stride + j] == 0xFFFF;
        CHECK(untouched, "%s: wrote past n_cols", what);
    }
    blkc_free(c);
    free(xf); free(wf); free(bf); free(xb); free(wb); free(bb); free(yb); free(want); free(got16);
}

static void batchnorm(int imgs, int ch, int hw) {
    const char *defs[] = {"BLOCK=64", NULL};
    size_t n = (size_t)imgs * ch * hw;
    float eps = 1e-5f;
    float *x = h_rand_f32(n, -2, 2), *y = h_fill_f32(n, NAN), *want = malloc(4 * n);
    float *rm = h_rand_f32((size_t)ch, -1, 1), *rv = h_rand_f32((size_t)ch, 0.1f, 2), *g = h_rand_f32((size_t)ch, 0.5f, 1.5f), *be = h_rand_f32((size_t)ch, -1, 1);
    for (int i = 0; i < imgs; i++)
        for (int c0 = 0; c0 < ch; c0++)
            for (int k = 0; k < hw; k++) {
                size_t o = ((size_t)i * ch + c0) * hw + k;
                want[o] = (float)((x[o] - rm[c0]) / sqrt(rv[c0] + eps) * g[c0] + be[c0]);
            }
    blkc_ctx *c = h_build(h_stdlib, "norm.blk", "batchnorm_infer", defs);
    blk_arg args[] = {BLK_PTR(y, 4 * n), BLK_PTR(x, 4 * n), BLK_PTR(rm, 4 * (size_t)ch), BLK_PTR(rv, 4 * (size_t)ch),
                      BLK_PTR(g, 4 * (size_t)ch), BLK_PTR(be, 4 * (size_t)ch), BLK_INT(ch), BLK_INT(hw), BLK_FLOAT(eps)};
    if (h_run(c, "batchnorm_infer", h_cdiv(hw, 64), (unsigned)ch, (unsigned)imgs, args, 9) == 0) h_close("batchnorm", y, want, n, 1e-5f, 1e-5f);
    blkc_free(c);
    free(x); free(y); free(want); free(rm); free(rv); free(g); free(be);
}

int main(int argc, char **argv) {
    h_init(argc, argv);
    h_seed(42);
    softmax_kernel("softmax", 7, 1000, 1024, 0, 0);
    softmax_kernel("softmax", 3, 1, 16, 0, 0);
    softmax_kernel("softmax", 4, 1000, 1024, 0, 1);
    softmax_kernel("softmax_online", 5, 1000, 128, 0, 0);
    softmax_kernel("softmax_online", 2, 64, 64, 0, 0);
    softmax_kernel("softmax_online", 3, 700, 128, 0, 1);
    softmax_kernel("log_softmax", 6, 300, 512, 1, 0);
    cross_entropy(9, 333);
    layernorm(10, 200);
    layernorm(3, 256);
    rmsnorm_and_add_ln(5, 100);
    for (int k = 0; k < 2; k++) {
        const char *kn = k ? "layernorm" : "rmsnorm";
        norm_rows(kn, 4, 200, 208, 256, 64, 0, 0);  /* aligned rows in registers */
        norm_rows(kn, 3, 200, 208, 256, 64, 1, 0);  /* LOOPED */
        norm_rows(kn, 3, 300, 304, 64, 128, 0, 0);  /* longer than BLOCK: looped */
        norm_rows(kn, 3, 100, 100, 128, 32, 0, 0);  /* stride % 8 != 0: looped */
        norm_rows(kn, 2, 200, 208, 256, 64, 0, 1);  /* pointers not 16-byte aligned: looped */
        norm_rows(kn, 2, 1, 8, 16, 16, 0, 0);       /* one column */
    }
    batchnorm(2, 3, 100);
    return test_finish("softmax_norm");
}

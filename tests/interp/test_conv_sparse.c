/* stdlib/conv.blk and sparse.blk on the interpreter vs C references, on
 * ragged shapes: pixel, channel and column counts that are not multiples of
 * the blocks, image borders (padding), empty CSR rows and BSR block rows. */
#include "harness.h"

static void define(const char **defs, char (*buf)[32], int i, const char *name, int v) {
    snprintf(buf[i], 32, "%s=%d", name, v);
    defs[i] = buf[i];
}

/* conv2d_nhwc: x [N,H,W,C], w [KH,KW,C,K], out [N,OH,OW,K]; epilogue
 * acc*scale+shift (norm) then silu (silu). */
static void conv(int N, int H, int W, int C, int K, int ks, int stride, int pad, int norm, int silu, int bm, int bn,
                 int bk) {
    int OH = (H + 2 * pad - ks) / stride + 1, OW = (W + 2 * pad - ks) / stride + 1;
    size_t nx = (size_t)N * H * W * C, nw = (size_t)ks * ks * C * K, no = (size_t)N * OH * OW * K;
    float *xf = h_rand_f32(nx, -1, 1), *wf = h_rand_f32(nw, -1, 1);
    float *scale = h_rand_f32((size_t)K, 0.5f, 1.5f), *shift = h_rand_f32((size_t)K, -1, 1);
    uint16_t *x = h_to_bf16(xf, nx), *w = h_to_bf16(wf, nw), *out = malloc(2 * no);
    memset(out, 0xFF, 2 * no); /* NaN: an element the kernel does not write fails */
    float *want = malloc(4 * no);
    for (int n = 0; n < N; n++)
        for (int oh = 0; oh < OH; oh++)
            for (int ow = 0; ow < OW; ow++)
                for (int k = 0; k < K; k++) {
                    double s = 0;
                    for (int kh = 0; kh < ks; kh++)
                        for (int kw = 0; kw < ks; kw++) {
                            int ih = oh * stride - pad + kh, iw = ow * stride - pad + kw;
                            if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
                            for (int c = 0; c < C; c++)
                                s += (double)h_bf2f(x[(((size_t)n * H + ih) * W + iw) * C + c]) *
                                     h_bf2f(w[(((size_t)kh * ks + kw) * C + c) * K + k]);
                        }
                    if (norm) s = s * scale[k] + shift[k];
                    if (silu) s = s / (1.0 + exp(-s));
                    want[(((size_t)n * OH + oh) * OW + ow) * K + k] = (float)s;
                }
    char buf[8][32];
    const char *defs[9] = {0};
    define(defs, buf, 0, "KH", ks);
    define(defs, buf, 1, "KW", ks);
    define(defs, buf, 2, "BM", bm);
    define(defs, buf, 3, "BN", bn);
    define(defs, buf, 4, "BK", bk);
    defs[5] = norm ? "NORM=true" : "NORM=false";
    defs[6] = silu ? "ACT=silu" : "ACT=none";
    blkc_ctx *c = h_build(h_stdlib, "conv.blk", "conv2d_nhwc", defs);
    blk_arg args[] = {BLK_PTR(out, 2 * no), BLK_PTR(x, 2 * nx), BLK_PTR(w, 2 * nw), BLK_PTR(scale, 4 * (size_t)K),
                      BLK_PTR(shift, 4 * (size_t)K), BLK_INT(N), BLK_INT(H), BLK_INT(W), BLK_INT(C), BLK_INT(K),
                      BLK_INT(stride), BLK_INT(pad)};
    if (h_run(c, "conv2d_nhwc", h_cdiv((long)N * OH * OW, bm) * h_cdiv(K, bn), 1, 1, args, 12) == 0) {
        char name[96];
        snprintf(name, sizeof name, "conv2d_nhwc %dx%d stride %d pad %d C %d K %d%s%s", ks, ks, stride, pad, C, K,
                 norm ? " bn" : "", silu ? " silu" : "");
        h_close_bf16(name, out, want, no, 1.0f / 128, 1e-3f);
    }
    blkc_free(c);
    free(xf); free(wf); free(scale); free(shift); free(x); free(w); free(out); free(want);
}

/* A random CSR pattern: row r has len[r] nonzeros (given), random columns in
 * [0, n_cols). Returns row_ptr; *col gets the columns. */
static int32_t *csr(int n_rows, int n_cols, const int *len, int32_t **col) {
    int32_t *rp = malloc(4 * (size_t)(n_rows + 1));
    rp[0] = 0;
    for (int r = 0; r < n_rows; r++) rp[r + 1] = rp[r] + len[r];
    *col = malloc(4 * (size_t)(rp[n_rows] ? rp[n_rows] : 1));
    for (int e = 0; e < rp[n_rows]; e++) (*col)[e] = (int32_t)(h_u32() % (uint32_t)n_cols);
    return rp;
}

/* Row lengths: random in [0, maxlen], every 4th row empty, row 1 long (several
 * BNZ steps). */
static int *row_lengths(int n_rows, int maxlen, int longrow) {
    int *len = malloc(sizeof(int) * (size_t)n_rows);
    for (int r = 0; r < n_rows; r++) len[r] = r % 4 == 0 ? 0 : (int)(h_u32() % (uint32_t)(maxlen + 1));
    if (n_rows > 1) len[1] = longrow;
    return len;
}

static void spmv(int n_rows, int n_cols, int br, int bnz) {
    int *len = row_lengths(n_rows, 12, 3 * bnz + 5);
    int32_t *col, *rp = csr(n_rows, n_cols, len, &col);
    int nnz = rp[n_rows];
    float *vals = h_rand_f32((size_t)nnz, -1, 1), *x = h_rand_f32((size_t)n_cols, -1, 1);
    float *y = h_fill_f32((size_t)n_rows, NAN), *want = malloc(4 * (size_t)n_rows);
    for (int r = 0; r < n_rows; r++) {
        double s = 0;
        for (int e = rp[r]; e < rp[r + 1]; e++) s += (double)vals[e] * x[col[e]];
        want[r] = (float)s;
    }
    char buf[2][32];
    const char *defs[3] = {0};
    define(defs, buf, 0, "BR", br);
    define(defs, buf, 1, "BNZ", bnz);
    blkc_ctx *c = h_build(h_stdlib, "sparse.blk", "spmv_csr", defs);
    blk_arg args[] = {BLK_PTR(y, 4 * (size_t)n_rows), BLK_PTR(rp, 4 * (size_t)(n_rows + 1)),
                      BLK_PTR(col, 4 * (size_t)(nnz ? nnz : 1)), BLK_PTR(vals, 4 * (size_t)(nnz ? nnz : 1)),
                      BLK_PTR(x, 4 * (size_t)n_cols), BLK_INT(n_rows)};
    if (h_run(c, "spmv_csr", h_cdiv(n_rows, br), 1, 1, args, 6) == 0) h_close("spmv_csr", y, want, (size_t)n_rows, 1e-5f, 1e-5f);
    blkc_free(c);
    free(len); free(col); free(rp); free(vals); free(x); free(y); free(want);
}

/* bf16: vals and B stored as bf16 (the reference uses the rounded values) */
static void spmm(int n_rows, int n_cols, int N, int bn, int bnz, int bf16) {
    int *len = row_lengths(n_rows, 10, 2 * bnz + 3);
    int32_t *col, *rp = csr(n_rows, n_cols, len, &col);
    int nnz = rp[n_rows];
    size_t nb = (size_t)n_cols * N, nc = (size_t)n_rows * N;
    float *vals = h_rand_f32((size_t)nnz, -1, 1), *b = h_rand_f32(nb, -1, 1);
    uint16_t *vals16 = h_to_bf16(vals, (size_t)nnz), *b16 = h_to_bf16(b, nb);
    if (bf16) {
        for (int e = 0; e < nnz; e++) vals[e] = h_bf2f(vals16[e]);
        for (size_t i = 0; i < nb; i++) b[i] = h_bf2f(b16[i]);
    }
    float *out = h_fill_f32(nc, NAN), *want = malloc(4 * nc);
    for (int r = 0; r < n_rows; r++)
        for (int j = 0; j < N; j++) {
            double s = 0;
            for (int e = rp[r]; e < rp[r + 1]; e++) s += (double)vals[e] * b[(size_t)col[e] * N + j];
            want[(size_t)r * N + j] = (float)s;
        }
    char buf[2][32];
    const char *defs[3] = {0};
    define(defs, buf, 0, "BN", bn);
    define(defs, buf, 1, "BNZ", bnz);
    const char *kname = bf16 ? "spmm_csr_bf16" : "spmm_csr";
    int es = bf16 ? 2 : 4;
    blkc_ctx *c = h_build(h_stdlib, "sparse.blk", kname, defs);
    blk_arg args[] = {BLK_PTR(out, 4 * nc), BLK_PTR(rp, 4 * (size_t)(n_rows + 1)),
                      BLK_PTR(col, 4 * (size_t)(nnz ? nnz : 1)),
                      BLK_PTR(bf16 ? (void *)vals16 : (void *)vals, (size_t)es * (nnz ? nnz : 1)),
                      BLK_PTR(bf16 ? (void *)b16 : (void *)b, (size_t)es * nb), BLK_INT(N)};
    if (h_run(c, kname, (unsigned)n_rows, h_cdiv(N, bn), 1, args, 6) == 0) h_close(kname, out, want, nc, 1e-5f, 1e-5f);
    blkc_free(c);
    free(len); free(col); free(rp); free(vals); free(b); free(vals16); free(b16); free(out); free(want);
}

/* A [M, K] in BSR with BS x BS blocks; block row `empty` has no blocks. The
 * blocks' columns past K hold random values: the kernel must ignore them. */
static void bsr(int M, int K, int N, int bs, int bn, int empty) {
    int nbr = (M + bs - 1) / bs, nbc = (K + bs - 1) / bs;
    int32_t *rp = malloc(4 * (size_t)(nbr + 1)), *bcol = malloc(4 * (size_t)(nbr * nbc + 1));
    rp[0] = 0;
    for (int i = 0; i < nbr; i++) { /* each block column kept with probability 1/2, in random order */
        int n = rp[i];
        if (i != empty) {
            int start = (int)(h_u32() % (uint32_t)nbc);
            for (int j = 0; j < nbc; j++)
                if (h_u32() & 1) bcol[n++] = (start + j) % nbc;
        }
        rp[i + 1] = n;
    }
    int nnzb = rp[nbr];
    size_t nv = (size_t)nnzb * bs * bs, nb = (size_t)K * N, nc = (size_t)M * N;
    float *vf = h_rand_f32(nv, -1, 1), *bf = h_rand_f32(nb, -1, 1);
    uint16_t *v = h_to_bf16(vf, nv), *b = h_to_bf16(bf, nb), *out = malloc(2 * nc);
    memset(out, 0xFF, 2 * nc);
    float *want = calloc(nc, sizeof(float));
    for (int i = 0; i < nbr; i++)
        for (int r = 0; r < bs && i * bs + r < M; r++)
            for (int j = 0; j < N; j++) {
                double s = 0;
                for (int e = rp[i]; e < rp[i + 1]; e++)
                    for (int q = 0; q < bs && bcol[e] * bs + q < K; q++)
                        s += (double)h_bf2f(v[((size_t)e * bs + r) * bs + q]) *
                             h_bf2f(b[(size_t)(bcol[e] * bs + q) * N + j]);
                want[(size_t)(i * bs + r) * N + j] = (float)s;
            }
    char buf[2][32];
    const char *defs[3] = {0};
    define(defs, buf, 0, "BS", bs);
    define(defs, buf, 1, "BN", bn);
    blkc_ctx *c = h_build(h_stdlib, "sparse.blk", "bsr_matmul", defs);
    blk_arg args[] = {BLK_PTR(out, 2 * nc), BLK_PTR(rp, 4 * (size_t)(nbr + 1)), BLK_PTR(bcol, 4 * (size_t)(nnzb ? nnzb : 1)),
                      BLK_PTR(v, 2 * (nv ? nv : 1)), BLK_PTR(b, 2 * nb), BLK_INT(M), BLK_INT(N), BLK_INT(K)};
    if (h_run(c, "bsr_matmul", (unsigned)nbr, h_cdiv(N, bn), 1, args, 8) == 0) {
        char name[64];
        snprintf(name, sizeof name, "bsr_matmul BS %d %dx%dx%d", bs, M, N, K);
        h_close_bf16(name, out, want, nc, 1.0f / 128, 1e-3f);
    }
    blkc_free(c);
    free(rp); free(bcol); free(vf); free(bf); free(v); free(b); free(out); free(want);
}

int main(int argc, char **argv) {
    h_init(argc, argv);
    h_seed(1010);
    /* N, H, W, C, K, filter, stride, pad, norm, silu, BM, BN, BK */
    conv(2, 7, 9, 20, 24, 3, 1, 1, 1, 1, 32, 16, 16);  /* 126 pixels, channels past BK and K past BN */
    conv(1, 9, 8, 40, 17, 3, 2, 1, 1, 1, 16, 32, 32);  /* stride 2: 5x4 outputs */
    conv(2, 6, 5, 16, 33, 3, 1, 0, 1, 0, 16, 16, 16);  /* no padding, batchnorm without SiLU */
    conv(3, 5, 7, 50, 40, 1, 1, 0, 0, 0, 32, 32, 32);  /* 1x1: a plain GEMM over 105 pixels */
    conv(1, 11, 10, 24, 20, 1, 2, 0, 1, 1, 16, 16, 16); /* 1x1 stride 2 */
    spmv(77, 50, 8, 16);
    spmv(5, 3, 4, 32);
    spmm(37, 45, 70, 32, 16, 0);
    spmm(20, 33, 100, 64, 16, 1);
    /* the bench's column block (BN = 256): N past one block (a 44-wide second
     * block), N inside one block, and far fewer columns than BN; row 1 takes
     * three BNZ steps, so the next step's prefetched indices are used */
    spmm(29, 40, 300, 256, 16, 0);
    spmm(23, 50, 200, 256, 32, 1);
    spmm(17, 19, 5, 256, 8, 0);
    spmm(30, 64, 256, 128, 16, 1);
    bsr(70, 50, 40, 16, 32, 1);   /* 5 block rows (the last 6 rows), 4 block columns (the last 2 wide) */
    bsr(100, 96, 130, 32, 64, 2);
    return test_finish("conv_sparse");
}

/* stdlib/matmul.blk and fused_attn.blk on the interpreter vs C references. */
#include "harness.h"

static void matmul(int M, int N, int K, int bm, int bn, int bk) {
    char d1[32], d2[32], d3[32];
    snprintf(d1, sizeof d1, "BM=%d", bm);
    snprintf(d2, sizeof d2, "BN=%d", bn);
    snprintf(d3, sizeof d3, "BK=%d", bk);
    const char *defs[] = {d1, d2, d3, NULL};
    float *af = h_rand_f32((size_t)M * K, -1, 1), *bf = h_rand_f32((size_t)K * N, -1, 1);
    uint16_t *a = h_to_bf16(af, (size_t)M * K), *b = h_to_bf16(bf, (size_t)K * N), *c = calloc((size_t)M * N, 2);
    float *want = malloc(4 * (size_t)M * N);
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            double s = 0;
            for (int k = 0; k < K; k++) s += (double)h_bf2f(a[(size_t)i * K + k]) * h_bf2f(b[(size_t)k * N + j]);
            want[(size_t)i * N + j] = (float)s;
        }
    blkc_ctx *ctx = h_build(h_stdlib, "matmul.blk", "matmul", defs);
    blk_arg args[] = {BLK_PTR(a, 2 * (size_t)M * K), BLK_PTR(b, 2 * (size_t)K * N), BLK_PTR(c, 2 * (size_t)M * N),
                      BLK_INT(M), BLK_INT(N), BLK_INT(K)};
    if (h_run(ctx, "matmul", h_cdiv(M, bm) * h_cdiv(N, bn), 1, 1, args, 6) == 0)
        h_close_bf16("matmul", c, want, (size_t)M * N, 1.0f / 128, 1e-3f);
    blkc_free(ctx);
    free(af); free(bf); free(a); free(b); free(c); free(want);
}

/* BH query heads; GROUP of them share one K/V head (grouped-query) */
static void attention(int BH, int S, int causal, int group) {
    const int D = 32;
    char gdef[32];
    snprintf(gdef, sizeof gdef, "GROUP=%d", group);
    const char *defs[] = {"D=32", "BM=16", "BN=16", causal ? "CAUSAL=true" : "CAUSAL=false", "LSE=true", gdef, NULL};
    size_t n = (size_t)BH * S * D, nkv = (size_t)(BH / group) * S * D;
    float *qf = h_rand_f32(n, -1, 1), *kf = h_rand_f32(nkv, -1, 1), *vf = h_rand_f32(nkv, -1, 1);
    uint16_t *q = h_to_bf16(qf, n), *k = h_to_bf16(kf, nkv), *v = h_to_bf16(vf, nkv), *out = calloc(n, 2);
    float scale = 1.0f / sqrtf((float)D), *want = malloc(4 * n);
    float *lse = malloc(4 * (size_t)BH * S), *lse_want = malloc(4 * (size_t)BH * S); /* logsumexp per row */
    double *p = malloc(sizeof(double) * (size_t)S);
    for (int bh = 0; bh < BH; bh++)
        for (int i = 0; i < S; i++) {
            size_t qo = ((size_t)bh * S + i) * D;
            int kh = bh / group;
            double m = -INFINITY, l = 0;
            int hi = causal ? i + 1 : S;
            for (int j = 0; j < hi; j++) {
                double s = 0;
                for (int d = 0; d < D; d++) s += (double)h_bf2f(q[qo + d]) * h_bf2f(k[((size_t)kh * S + j) * D + d]);
                p[j] = s * scale;
                m = fmax(m, p[j]);
            }
            for (int j = 0; j < hi; j++) { p[j] = exp(p[j] - m); l += p[j]; }
            lse_want[(size_t)bh * S + i] = (float)(m + log(l));
            for (int d = 0; d < D; d++) {
                double o = 0;
                for (int j = 0; j < hi; j++) o += p[j] * h_bf2f(v[((size_t)kh * S + j) * D + d]);
                want[qo + d] = (float)(o / l);
            }
        }
    blkc_ctx *c = h_build(h_stdlib, "fused_attn.blk", "attn_fwd", defs);
    blk_arg args[] = {BLK_PTR(out, 2 * n), BLK_PTR(q, 2 * n), BLK_PTR(k, 2 * nkv), BLK_PTR(v, 2 * nkv),
                      BLK_PTR(lse, 4 * (size_t)BH * S), BLK_INT(S), BLK_FLOAT(scale)};
    if (h_run(c, "attn_fwd", h_cdiv(S, 16), (unsigned)BH, 1, args, 7) == 0) {
        char name[48];
        snprintf(name, sizeof name, "attn_fwd%s group %d", causal ? " causal" : "", group);
        h_close_bf16(name, out, want, n, 2e-2f, 1e-2f);
        h_close(name, lse, lse_want, (size_t)BH * S, 1e-5f, 1e-5f);
    }
    blkc_free(c);
    free(qf); free(kf); free(vf); free(q); free(k); free(v); free(out); free(want); free(p); free(lse); free(lse_want);
}

int main(int argc, char **argv) {
    h_init(argc, argv);
    h_seed(99);
    matmul(64, 64, 64, 32, 32, 16);
    matmul(50, 70, 45, 32, 32, 16);
    matmul(17, 33, 100, 16, 64, 32);
    attention(2, 40, 0, 1);
    attention(2, 40, 1, 1);
    attention(1, 16, 1, 1);
    attention(4, 40, 0, 2);  /* grouped-query: 2 query heads per K/V head */
    attention(6, 33, 1, 3);
    attention(4, 24, 0, 4);  /* multi-query: one K/V head for all four */
    return test_finish("matmul_attn");
}

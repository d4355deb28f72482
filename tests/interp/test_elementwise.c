/* stdlib/elementwise.blk and diffusion.blk on the interpreter vs C. */
#include "harness.h"

static float silu(float x) { return x / (1.0f + expf(-x)); }

static void vector_add(int n, int block, int opt) {
    char def[32];
    snprintf(def, sizeof def, "BLOCK=%d", block);
    const char *defs[] = {def, NULL};
    blkc_ctx *c = h_build_opt(h_stdlib, "elementwise.blk", "vector_add", defs, opt);
    float *x = h_rand_f32((size_t)n, -10, 10), *y = h_rand_f32((size_t)n, -10, 10);
    float *out = h_fill_f32((size_t)n + 1, NAN), *want = malloc(sizeof(float) * (size_t)n + 4);
    for (int i = 0; i < n; i++) want[i] = x[i] + y[i];
    out[n] = 12345.0f; /* sentinel past the end: a correct mask never writes it */
    blk_arg args[] = {BLK_PTR(x, 4 * (size_t)n), BLK_PTR(y, 4 * (size_t)n), BLK_PTR(out, 4 * (size_t)n + 4), BLK_INT(n)};
    if (h_run(c, "vector_add", h_cdiv(n, block), 1, 1, args, 4) == 0) {
        h_close("vector_add", out, want, (size_t)n, 0, 0);
        CHECK(out[n] == 12345.0f, "vector_add wrote past n (n=%d block=%d)", n, block);
    }
    blkc_free(c);
    free(x); free(y); free(out); free(want);
}

static void silu_fma(int n) {
    const char *defs[] = {"BLOCK=128", NULL};
    blkc_ctx *c = h_build(h_stdlib, "elementwise.blk", "silu_fma", defs);
    float *a = h_rand_f32((size_t)n, -4, 4), *b = h_rand_f32((size_t)n, -4, 4), *cc = h_rand_f32((size_t)n, -4, 4);
    uint16_t *ab = h_to_bf16(a, (size_t)n), *bb = h_to_bf16(b, (size_t)n), *cb = h_to_bf16(cc, (size_t)n);
    uint16_t *out = calloc((size_t)n, 2);
    float *want = malloc(sizeof(float) * (size_t)n);
    for (int i = 0; i < n; i++) {
        float x = h_bf2f(ab[i]) + h_bf2f(bb[i]) * h_bf2f(cb[i]);
        want[i] = h_round_bf16(silu(x));
    }
    blk_arg args[] = {BLK_PTR(ab, 2 * (size_t)n), BLK_PTR(bb, 2 * (size_t)n), BLK_PTR(cb, 2 * (size_t)n),
                      BLK_PTR(out, 2 * (size_t)n), BLK_INT(n)};
    if (h_run(c, "silu_fma", h_cdiv(n, 128), 1, 1, args, 5) == 0)
        h_close_bf16("silu_fma", out, want, (size_t)n, 1.0f / 128, 1e-6f); /* one bf16 ulp */
    blkc_free(c);
    free(a); free(b); free(cc); free(ab); free(bb); free(cb); free(out); free(want);
}

static void bias_add(int rows, int cols) {
    const char *defs[] = {"BR=8", "BC=64", NULL};
    blkc_ctx *c = h_build(h_stdlib, "elementwise.blk", "bias_add", defs);
    size_t n = (size_t)rows * (size_t)cols;
    uint16_t *x = malloc(2 * n), *bias = malloc(2 * (size_t)cols), *out = calloc(n, 2);
    float *want = malloc(sizeof(float) * n), *got = malloc(sizeof(float) * n);
    for (size_t i = 0; i < n; i++) x[i] = h_f2h(h_uniform(-2, 2));
    for (int j = 0; j < cols; j++) bias[j] = h_f2h(h_uniform(-2, 2));
    for (int i = 0; i < rows; i++)
        for (int j = 0; j < cols; j++)
            want[(size_t)i * cols + j] = h_h2f(h_f2h(h_h2f(x[(size_t)i * cols + j]) + h_h2f(bias[j])));
    blk_arg args[] = {BLK_PTR(x, 2 * n), BLK_PTR(bias, 2 * (size_t)cols), BLK_PTR(out, 2 * n), BLK_INT(rows), BLK_INT(cols)};
    if (h_run(c, "bias_add", h_cdiv(rows, 8), h_cdiv(cols, 64), 1, args, 5) == 0) {
        for (size_t i = 0; i < n; i++) got[i] = h_h2f(out[i]);
        h_close("bias_add", got, want, n, 0, 0);
    }
    blkc_free(c);
    free(x); free(bias); free(out); free(want); free(got);
}

static void activation(int act, int n) {
    char def[16];
    snprintf(def, sizeof def, "ACT=%d", act);
    const char *defs[] = {def, "BLOCK=64", NULL};
    blkc_ctx *c = h_build(h_stdlib, "elementwise.blk", "activation", defs);
    float *x = h_rand_f32((size_t)n, -5, 5), *out = h_fill_f32((size_t)n, NAN), *want = malloc(sizeof(float) * (size_t)n);
    for (int i = 0; i < n; i++)
        want[i] = act == 0 ? fmaxf(x[i], 0) : act == 1 ? 0.5f * x[i] * (1 + erff(x[i] * 0.70710678f)) : silu(x[i]);
    blk_arg args[] = {BLK_PTR(x, 4 * (size_t)n), BLK_PTR(out, 4 * (size_t)n), BLK_INT(n)};
    if (h_run(c, "activation", h_cdiv(n, 64), 1, 1, args, 3) == 0) h_close("activation", out, want, (size_t)n, 1e-6f, 1e-7f);
    blkc_free(c);
    free(x); free(out); free(want);
}

static void denoise_blend(int n) {
    const char *defs[] = {"BLOCK=256", NULL};
    blkc_ctx *c = h_build(h_stdlib, "diffusion.blk", "denoise_blend", defs);
    float *xf = h_rand_f32((size_t)n, -3, 3), *ef = h_rand_f32((size_t)n, -1, 1), *pf = h_rand_f32((size_t)n, -3, 3);
    uint16_t *xb = h_to_bf16(xf, (size_t)n), *eb = h_to_bf16(ef, (size_t)n), *pb = h_to_bf16(pf, (size_t)n);
    uint16_t *out = calloc((size_t)n, 2);
    float sab[10], alpha[10];
    for (int t = 0; t < 10; t++) { sab[t] = 0.99f - 0.05f * (float)t; alpha[t] = 0.5f + 0.04f * (float)t; }
    int t = 7;
    float w = 0.8f, lo = -2.5f, hi = 2.5f;
    float *want = malloc(sizeof(float) * (size_t)n);
    for (int i = 0; i < n; i++) {
        float d = (h_bf2f(xb[i]) - sab[t] * h_bf2f(eb[i])) / alpha[t];
        float v = w * d + (1.0f - w) * h_bf2f(pb[i]);
        want[i] = h_round_bf16(fminf(fmaxf(v, lo), hi));
    }
    blk_arg args[] = {BLK_PTR(xb, 2 * (size_t)n), BLK_PTR(eb, 2 * (size_t)n), BLK_PTR(pb, 2 * (size_t)n),
                      BLK_PTR(out, 2 * (size_t)n), BLK_PTR(sab, sizeof sab), BLK_PTR(alpha, sizeof alpha),
                      BLK_INT(t), BLK_FLOAT(w), BLK_FLOAT(lo), BLK_FLOAT(hi), BLK_INT(n)};
    if (h_run(c, "denoise_blend", h_cdiv(n, 256), 1, 1, args, 11) == 0)
        h_close_bf16("denoise_blend", out, want, (size_t)n, 1.0f / 128, 1e-6f);
    blkc_free(c);
    free(xf); free(ef); free(pf); free(xb); free(eb); free(pb); free(out); free(want);
}

static void temporal_blend(int n) {
    const char *defs[] = {"BLOCK=128", NULL};
    blkc_ctx *c = h_build(h_stdlib, "diffusion.blk", "temporal_blend", defs);
    float *cf = h_rand_f32((size_t)n, -1, 1), *pf = h_rand_f32((size_t)n, -1, 1);
    uint16_t *cb = h_to_bf16(cf, (size_t)n), *pb = h_to_bf16(pf, (size_t)n), *out = calloc((size_t)n, 2);
    float w = 0.7f, thr = 0.9f, *want = malloc(sizeof(float) * (size_t)n);
    for (int i = 0; i < n; i++) {
        float cv = h_bf2f(cb[i]), pv = h_bf2f(pb[i]);
        want[i] = h_round_bf16(fabsf(cv - pv) > thr ? cv : w * cv + (1 - w) * pv);
    }
    blk_arg args[] = {BLK_PTR(cb, 2 * (size_t)n), BLK_PTR(pb, 2 * (size_t)n), BLK_PTR(out, 2 * (size_t)n),
                      BLK_FLOAT(w), BLK_FLOAT(thr), BLK_INT(n)};
    if (h_run(c, "temporal_blend", h_cdiv(n, 128), 1, 1, args, 6) == 0)
        h_close_bf16("temporal_blend", out, want, (size_t)n, 1.0f / 128, 1e-6f);
    blkc_free(c);
    free(cf); free(pf); free(cb); free(pb); free(out); free(want);
}

int main(int argc, char **argv) {
    h_init(argc, argv);
    h_seed(1234567);
    int sizes[] = {1, 255, 256, 1000, 4097};
    for (int i = 0; i < 5; i++) {
        vector_add(sizes[i], 256, 2);
        vector_add(sizes[i], 1024, 0);
    }
    silu_fma(1000);
    silu_fma(3);
    bias_add(37, 100);
    bias_add(8, 64);
    for (int a = 0; a < 3; a++) activation(a, 333);
    denoise_blend(1001);
    temporal_blend(777);
    return test_finish("elementwise");
}

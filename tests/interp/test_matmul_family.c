/* stdlib/matmul.blk's GEMM family and moe.blk's expert computation on the
 * interpreter vs plain C references: random data, ragged shapes (M, N, K not
 * multiples of the blocks), an expert with no tokens. References are f64
 * sums of the values the kernel reads (after rounding to the storage type). */
#include "harness.h"

/* "NAME=V" defines from a printf-style list of tile sizes */
typedef struct { char s[8][48]; const char *p[9]; } defs_t;
static const char *const *mkdefs(defs_t *d, int n, const char *const *items) {
    for (int i = 0; i < n; i++) { snprintf(d->s[i], sizeof d->s[i], "%s", items[i]); d->p[i] = d->s[i]; }
    d->p[n] = NULL;
    return d->p;
}

static uint16_t *rand_bf16(size_t n, float lo, float hi, float *vals) { /* vals: the rounded values */
    uint16_t *p = malloc(2 * (n ? n : 1));
    for (size_t i = 0; i < n; i++) { p[i] = h_f2bf(h_uniform(lo, hi)); vals[i] = h_bf2f(p[i]); }
    return p;
}

/* C[i][j] = sum_k A[i*sak + k*sak2]... kept simple: A row-major [M, K]; B given
 * as element (k, j) at b[k * sbk + j * sbn] */
static void ref_gemm(double *c, const float *a, const float *b, int M, int N, int K, int sbk, int sbn) {
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            double s = 0;
            for (int k = 0; k < K; k++) s += (double)a[(size_t)i * K + k] * b[(size_t)k * sbk + (size_t)j * sbn];
            c[(size_t)i * N + j] = s;
        }
}

static float *to_f32(const double *x, size_t n) {
    float *p = malloc(4 * (n ? n : 1));
    for (size_t i = 0; i < n; i++) p[i] = (float)x[i];
    return p;
}

/* ---- f16 ---- */
static void gemm_f16(int M, int N, int K) {
    const char *items[] = {"BM=16", "BN=32", "BK=16", "GROUP=2"};
    defs_t d;
    size_t na = (size_t)M * K, nb = (size_t)K * N, nc = (size_t)M * N;
    float *av = malloc(4 * na), *bv = malloc(4 * nb);
    uint16_t *a = malloc(2 * na), *b = malloc(2 * nb), *c = malloc(2 * nc);
    for (size_t i = 0; i < na; i++) { a[i] = h_f2h(h_uniform(-1, 1)); av[i] = h_h2f(a[i]); }
    for (size_t i = 0; i < nb; i++) { b[i] = h_f2h(h_uniform(-1, 1)); bv[i] = h_h2f(b[i]); }
    double *want = malloc(8 * nc);
    ref_gemm(want, av, bv, M, N, K, N, 1);
    blkc_ctx *ctx = h_build(h_stdlib, "matmul.blk", "matmul_f16", mkdefs(&d, 4, items));
    blk_arg args[] = {BLK_PTR(a, 2 * na), BLK_PTR(b, 2 * nb), BLK_PTR(c, 2 * nc), BLK_INT(M), BLK_INT(N), BLK_INT(K)};
    if (h_run(ctx, "matmul_f16", h_cdiv(M, 16) * h_cdiv(N, 32), 1, 1, args, 6) == 0) {
        float *g = malloc(4 * nc), *w = to_f32(want, nc);
        for (size_t i = 0; i < nc; i++) g[i] = h_h2f(c[i]);
        h_close("matmul_f16", g, w, nc, 1e-3f, 1e-3f);  /* f16 keeps 11 bits: one rounding */
        free(g); free(w);
    }
    blkc_free(ctx);
    free(av); free(bv); free(a); free(b); free(c); free(want);
}

/* ---- tf32: f32 inputs rounded to 10 mantissa bits (nearest even), as the interpreter documents ---- */
static float tf32(float x) {
    uint32_t u; memcpy(&u, &x, 4);
    u += 0xfff + ((u >> 13) & 1);
    u &= ~0x1fffu;
    memcpy(&x, &u, 4);
    return x;
}
static void gemm_tf32(int M, int N, int K) {
    const char *items[] = {"BM=16", "BN=16", "BK=16", "GROUP=3"};
    defs_t d;
    size_t na = (size_t)M * K, nb = (size_t)N * K, nc = (size_t)M * N;
    float *a = h_rand_f32(na, -1, 1), *bt = h_rand_f32(nb, -1, 1), *c = malloc(4 * nc);
    float *ar = malloc(4 * na), *br = malloc(4 * nb);
    for (size_t i = 0; i < na; i++) ar[i] = tf32(a[i]);
    for (size_t i = 0; i < nb; i++) br[i] = tf32(bt[i]);
    double *want = malloc(8 * nc);
    ref_gemm(want, ar, br, M, N, K, 1, K);  /* B(k, j) = bt[j * K + k] */
    blkc_ctx *ctx = h_build(h_stdlib, "matmul.blk", "matmul_tf32", mkdefs(&d, 4, items));
    blk_arg args[] = {BLK_PTR(a, 4 * na), BLK_PTR(bt, 4 * nb), BLK_PTR(c, 4 * nc), BLK_INT(M), BLK_INT(N), BLK_INT(K)};
    if (h_run(ctx, "matmul_tf32", h_cdiv(M, 16) * h_cdiv(N, 16), 1, 1, args, 6) == 0) {
        float *w = to_f32(want, nc);
        h_close("matmul_tf32", c, w, nc, 1e-5f, 1e-5f);
        free(w);
    }
    blkc_free(ctx);
    free(a); free(bt); free(c); free(ar); free(br); free(want);
}

/* ---- int8 -> i32, exact ---- */
static void gemm_i8(int M, int N, int K) {
    const char *items[] = {"BM=16", "BN=32", "BK=32", "GROUP=2"};
    defs_t d;
    size_t na = (size_t)M * K, nb = (size_t)N * K, nc = (size_t)M * N;
    int8_t *a = malloc(na), *bt = malloc(nb);
    int32_t *c = malloc(4 * nc), *want = malloc(4 * nc);
    for (size_t i = 0; i < na; i++) a[i] = (int8_t)((int)(h_u32() % 256) - 128);
    for (size_t i = 0; i < nb; i++) bt[i] = (int8_t)((int)(h_u32() % 256) - 128);
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            int32_t s = 0;
            for (int k = 0; k < K; k++) s += a[(size_t)i * K + k] * bt[(size_t)j * K + k];
            want[(size_t)i * N + j] = s;
        }
    blkc_ctx *ctx = h_build(h_stdlib, "matmul.blk", "matmul_i8", mkdefs(&d, 4, items));
    blk_arg args[] = {BLK_PTR(a, na), BLK_PTR(bt, nb), BLK_PTR(c, 4 * nc), BLK_INT(M), BLK_INT(N), BLK_INT(K)};
    if (h_run(ctx, "matmul_i8", h_cdiv(M, 16) * h_cdiv(N, 32), 1, 1, args, 6) == 0) h_equal_i32("matmul_i8", c, want, nc);
    blkc_free(ctx);
    free(a); free(bt); free(c); free(want);
}

/* ---- fp8 e4m3 with per-tensor or per-row/column scales, bf16 out ---- */
static float e4m3(uint8_t b) { /* bias 7, no infinities, 0x7f / 0xff are NaN (not generated) */
    int e = (b >> 3) & 15, m = b & 7;
    float v = e == 0 ? ldexpf((float)m, -9) : ldexpf((float)(8 + m), e - 10);
    return (b & 0x80) ? -v : v;
}
static uint8_t rand_e4m3(void) {
    uint8_t b;
    do b = (uint8_t)(h_u32() & 0xff); while ((b & 0x7f) == 0x7f || ((b >> 3) & 15) > 9); /* |x| < 64: sums stay moderate */
    return b;
}
static void gemm_fp8(int M, int N, int K, int row_scale) {
    const char *items[] = {"BM=32", "BN=16", "BK=32", "GROUP=2", row_scale ? "ROW_SCALE=true" : "ROW_SCALE=false"};
    defs_t d;
    size_t na = (size_t)M * K, nb = (size_t)N * K, nc = (size_t)M * N;
    uint8_t *a = malloc(na), *bt = malloc(nb);
    float *av = malloc(4 * na), *bv = malloc(4 * nb);
    for (size_t i = 0; i < na; i++) { a[i] = rand_e4m3(); av[i] = e4m3(a[i]); }
    for (size_t i = 0; i < nb; i++) { bt[i] = rand_e4m3(); bv[i] = e4m3(bt[i]); }
    int ns_a = row_scale ? M : 1, ns_b = row_scale ? N : 1;
    float *sa = h_rand_f32((size_t)ns_a, 0.01f, 0.1f), *sb = h_rand_f32((size_t)ns_b, 0.01f, 0.1f);
    double *want = malloc(8 * nc);
    ref_gemm(want, av, bv, M, N, K, 1, K);
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) want[(size_t)i * N + j] *= (double)sa[row_scale ? i : 0] * sb[row_scale ? j : 0];
    uint16_t *c = malloc(2 * nc);
    blkc_ctx *ctx = h_build(h_stdlib, "matmul.blk", "matmul_fp8", mkdefs(&d, 5, items));
    blk_arg args[] = {BLK_PTR(a, na), BLK_PTR(bt, nb), BLK_PTR(c, 2 * nc), BLK_PTR(sa, 4 * (size_t)ns_a),
                      BLK_PTR(sb, 4 * (size_t)ns_b), BLK_INT(M), BLK_INT(N), BLK_INT(K)};
    if (h_run(ctx, "matmul_fp8", h_cdiv(M, 32) * h_cdiv(N, 16), 1, 1, args, 8) == 0) {
        float *w = to_f32(want, nc);
        h_close_bf16(row_scale ? "matmul_fp8 row scales" : "matmul_fp8 tensor scale", c, w, nc, 1.0f / 128, 1e-3f);
        free(w);
    }
    blkc_free(ctx);
    free(a); free(bt); free(av); free(bv); free(sa); free(sb); free(want); free(c);
}

/* ---- fused epilogue: act(A B + bias) + res, bf16 or f32 out ---- */
static double act_ref(double h, const char *act) {
    if (!strcmp(act, "silu")) return h / (1.0 + exp(-h));
    if (!strcmp(act, "gelu")) return 0.5 * h * (1.0 + erf(h / sqrt(2.0)));
    return h;
}
static void gemm_epilogue(int M, int N, int K, int bias, const char *act, int res, int f32_out) {
    char actdef[32];
    snprintf(actdef, sizeof actdef, "ACT=%s", act);
    const char *items[] = {"BM=16", "BN=32", "BK=16", "GROUP=2", bias ? "BIAS=true" : "BIAS=false", actdef,
                           res ? "RESIDUAL=true" : "RESIDUAL=false"};
    defs_t d;
    size_t na = (size_t)M * K, nb = (size_t)K * N, nc = (size_t)M * N;
    float *av = malloc(4 * na), *bv = malloc(4 * nb), *biasv = malloc(4 * (size_t)N), *rv = malloc(4 * nc);
    uint16_t *a = rand_bf16(na, -1, 1, av), *b = rand_bf16(nb, -1, 1, bv), *bs = rand_bf16((size_t)N, -2, 2, biasv),
             *r = rand_bf16(nc, -2, 2, rv);
    double *want = malloc(8 * nc);
    ref_gemm(want, av, bv, M, N, K, N, 1);
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            double h = want[(size_t)i * N + j] + (bias ? biasv[j] : 0.0);
            want[(size_t)i * N + j] = act_ref(h, act) + (res ? rv[(size_t)i * N + j] : 0.0);
        }
    const char *kn = f32_out ? "matmul_epilogue_f32" : "matmul_epilogue";
    size_t csz = f32_out ? 4 : 2;
    void *c = malloc(csz * nc);
    blkc_ctx *ctx = h_build(h_stdlib, "matmul.blk", kn, mkdefs(&d, 7, items));
    /* bias / res: null when not read (the kernel must not touch them) */
    blk_arg args[] = {BLK_PTR(a, 2 * na), BLK_PTR(b, 2 * nb), BLK_PTR(c, csz * nc),
                      bias ? BLK_PTR(bs, 2 * (size_t)N) : BLK_PTR(NULL, 0), res ? BLK_PTR(r, 2 * nc) : BLK_PTR(NULL, 0),
                      BLK_INT(M), BLK_INT(N), BLK_INT(K)};
    if (h_run(ctx, kn, h_cdiv(M, 16) * h_cdiv(N, 32), 1, 1, args, 8) == 0) {
        char name[96];
        snprintf(name, sizeof name, "%s bias=%d act=%s res=%d", kn, bias, act, res);
        float *w = to_f32(want, nc);
        if (f32_out) h_close(name, c, w, nc, 1e-5f, 1e-5f);
        else h_close_bf16(name, c, w, nc, 1.0f / 128, 1e-3f);
        free(w);
    }
    blkc_free(ctx);
    free(av); free(bv); free(biasv); free(rv); free(a); free(b); free(bs); free(r); free(want); free(c);
}

/* ---- persistent: fewer programs than tiles ---- */
static void gemm_persistent(int M, int N, int K, int programs) {
    const char *items[] = {"BM=16", "BN=16", "BK=16", "GROUP=3"};
    defs_t d;
    size_t na = (size_t)M * K, nb = (size_t)K * N, nc = (size_t)M * N;
    float *av = malloc(4 * na), *bv = malloc(4 * nb);
    uint16_t *a = rand_bf16(na, -1, 1, av), *b = rand_bf16(nb, -1, 1, bv), *c = malloc(2 * nc);
    memset(c, 0xff, 2 * nc); /* NaN: an unwritten tile fails */
    double *want = malloc(8 * nc);
    ref_gemm(want, av, bv, M, N, K, N, 1);
    blkc_ctx *ctx = h_build(h_stdlib, "matmul.blk", "matmul_persistent", mkdefs(&d, 4, items));
    blk_arg args[] = {BLK_PTR(a, 2 * na), BLK_PTR(b, 2 * nb), BLK_PTR(c, 2 * nc), BLK_INT(M), BLK_INT(N), BLK_INT(K)};
    if (h_run(ctx, "matmul_persistent", (unsigned)programs, 1, 1, args, 6) == 0) {
        float *w = to_f32(want, nc);
        char name[64];
        snprintf(name, sizeof name, "matmul_persistent %d programs", programs);
        h_close_bf16(name, c, w, nc, 1.0f / 128, 1e-3f);
        free(w);
    }
    blkc_free(ctx);
    free(av); free(bv); free(a); free(b); free(c); free(want);
}

/* ---- split-K: SPLIT programs per tile, the last one sums the partials;
 * launched twice, the counters back at 0 in between ---- */
static void gemm_splitk(int M, int N, int K, int split) {
    char sp[16];
    snprintf(sp, sizeof sp, "SPLIT=%d", split);
    const char *items[] = {"BM=16", "BN=16", "BK=16", sp};
    defs_t d;
    size_t na = (size_t)M * K, nb = (size_t)K * N, nc = (size_t)M * N;
    int tiles = h_cdiv(M, 16) * h_cdiv(N, 16);
    float *av = malloc(4 * na), *bv = malloc(4 * nb), *ws = malloc(4 * nc * (size_t)split);
    uint16_t *a = rand_bf16(na, -1, 1, av), *b = rand_bf16(nb, -1, 1, bv), *c = malloc(2 * nc);
    int32_t *cnt = calloc((size_t)tiles, 4);
    double *want = malloc(8 * nc);
    ref_gemm(want, av, bv, M, N, K, N, 1);
    float *w = to_f32(want, nc);
    blkc_ctx *ctx = h_build(h_stdlib, "matmul.blk", "matmul_splitk", mkdefs(&d, 4, items));
    blk_arg args[] = {BLK_PTR(a, 2 * na), BLK_PTR(b, 2 * nb), BLK_PTR(c, 2 * nc), BLK_PTR(ws, 4 * nc * (size_t)split),
                      BLK_PTR(cnt, 4 * (size_t)tiles), BLK_INT(M), BLK_INT(N), BLK_INT(K)};
    for (int launch = 0; launch < 2; launch++) {
        memset(c, 0xff, 2 * nc); /* NaN: a tile no program stored fails */
        if (h_run(ctx, "matmul_splitk", (unsigned)tiles, (unsigned)split, 1, args, 8) != 0) break;
        char name[64];
        snprintf(name, sizeof name, "matmul_splitk %dx%dx%d SPLIT=%d launch %d", M, N, K, split, launch + 1);
        h_close_bf16(name, c, w, nc, 1.0f / 128, 1e-3f);
        int left = 0;
        for (int t = 0; t < tiles; t++) left += cnt[t] != 0;
        CHECK(left == 0, "%s: %d tile counters not back at 0", name, left);
    }
    blkc_free(ctx);
    free(av); free(bv); free(ws); free(a); free(b); free(c); free(cnt); free(want); free(w);
}

/* ---- fused QKV projection (+ RoPE) into [B * heads, seq, D] ---- */
static void qkv(int B, int S, int hidden, int H, int KVH, int rope) {
    const int D = 32, half = D / 2;
    const char *items[] = {"D=32", "BM=16", "BK=16", rope ? "ROPE=true" : "ROPE=false"};
    defs_t d;
    int T = B * S, NH = H + 2 * KVH, N = NH * D;
    size_t nx = (size_t)T * hidden, nw = (size_t)hidden * N;
    float *xv = malloc(4 * nx), *wv = malloc(4 * nw);
    uint16_t *x = rand_bf16(nx, -1, 1, xv), *w = rand_bf16(nw, -1, 1, wv);
    float *cos_t = malloc(4 * (size_t)S * half), *sin_t = malloc(4 * (size_t)S * half);
    for (int p = 0; p < S; p++)
        for (int i = 0; i < half; i++) {
            double ang = p * pow(10000.0, -2.0 * i / D);
            cos_t[p * half + i] = (float)cos(ang);
            sin_t[p * half + i] = (float)sin(ang);
        }
    double *y = malloc(8 * (size_t)T * N);
    ref_gemm(y, xv, wv, T, N, hidden, N, 1);
    size_t nq = (size_t)T * H * D, nk = (size_t)T * KVH * D;
    float *want[3] = {malloc(4 * nq), malloc(4 * nk), malloc(4 * nk)};
    for (int t = 0; t < T; t++)
        for (int j = 0; j < NH; j++) {
            int which = j < H ? 0 : j < H + KVH ? 1 : 2, head = which == 0 ? j : which == 1 ? j - H : j - H - KVH;
            int nh = which == 0 ? H : KVH, b = t / S, s = t % S;
            const double *row = y + (size_t)t * N + (size_t)j * D;
            float *o = want[which] + (((size_t)b * nh + head) * S + s) * D;
            for (int i = 0; i < half; i++) {
                double x1 = row[i], x2 = row[i + half];
                if (rope && which < 2) {
                    double c = cos_t[s * half + i], sn = sin_t[s * half + i];
                    o[i] = (float)(x1 * c - x2 * sn);
                    o[i + half] = (float)(x2 * c + x1 * sn);
                } else {
                    o[i] = (float)x1;
                    o[i + half] = (float)x2;
                }
            }
        }
    uint16_t *q = malloc(2 * nq), *k = malloc(2 * nk), *v = malloc(2 * nk);
    blkc_ctx *ctx = h_build(h_stdlib, "matmul.blk", "qkv_proj", mkdefs(&d, 4, items));
    blk_arg args[] = {BLK_PTR(q, 2 * nq), BLK_PTR(k, 2 * nk), BLK_PTR(v, 2 * nk), BLK_PTR(x, 2 * nx), BLK_PTR(w, 2 * nw),
                      rope ? BLK_PTR(cos_t, 4 * (size_t)S * half) : BLK_PTR(NULL, 0),
                      rope ? BLK_PTR(sin_t, 4 * (size_t)S * half) : BLK_PTR(NULL, 0),
                      BLK_INT(T), BLK_INT(S), BLK_INT(hidden), BLK_INT(H), BLK_INT(KVH)};
    if (h_run(ctx, "qkv_proj", h_cdiv(T, 16), (unsigned)NH, 1, args, 12) == 0) {
        char name[64];
        snprintf(name, sizeof name, "qkv_proj%s q", rope ? " rope" : "");
        h_close_bf16(name, q, want[0], nq, 1.0f / 128, 1e-3f);
        name[strlen(name) - 1] = 'k';
        h_close_bf16(name, k, want[1], nk, 1.0f / 128, 1e-3f);
        name[strlen(name) - 1] = 'v';
        h_close_bf16(name, v, want[2], nk, 1.0f / 128, 1e-3f);
    }
    blkc_free(ctx);
    free(xv); free(wv); free(x); free(w); free(cos_t); free(sin_t); free(y);
    for (int i = 0; i < 3; i++) free(want[i]);
    free(q); free(k); free(v);
}

/* Build matmul.blk's `kernel`, run it on grid gx, compare its bf16 output with
 * an f64 reference (one bf16 rounding). */
static void run_bf16_out(const char *kernel, const char *const *defs, unsigned gx, const blk_arg *args, int nargs,
                         const uint16_t *got, const double *want, size_t n) {
    blkc_ctx *c = h_build(h_stdlib, "matmul.blk", kernel, defs);
    if (h_run(c, kernel, gx, 1, 1, args, nargs) == 0) {
        float *w = to_f32(want, n);
        h_close_bf16(kernel, got, w, n, 1.0f / 128, 1e-3f);
        free(w);
    }
    blkc_free(c);
}

/* ---- linear backward: y = x W + b, x [M, K], W [K, N] ---- */
static void linear_bwd(int M, int N, int K) {
    const char *items[] = {"BM=16", "BN=32", "BK=16", "GROUP=2"};
    defs_t d;
    size_t nx = (size_t)M * K, nw = (size_t)K * N, ny = (size_t)M * N;
    float *xv = malloc(4 * nx), *wv = malloc(4 * nw), *gv = malloc(4 * ny);
    uint16_t *x = rand_bf16(nx, -1, 1, xv), *w = rand_bf16(nw, -1, 1, wv), *dy = rand_bf16(ny, -1, 1, gv);
    double *dx_want = malloc(8 * nx), *dw_want = malloc(8 * nw);
    float *db_want = malloc(4 * (size_t)N);
    ref_gemm(dx_want, gv, wv, M, K, N, 1, N);  /* dx[i][k] = sum_j dy[i][j] W[k][j] */
    for (int k = 0; k < K; k++)
        for (int j = 0; j < N; j++) {
            double s = 0;
            for (int i = 0; i < M; i++) s += (double)xv[(size_t)i * K + k] * gv[(size_t)i * N + j];
            dw_want[(size_t)k * N + j] = s;
        }
    for (int j = 0; j < N; j++) {
        double s = 0;
        for (int i = 0; i < M; i++) s += gv[(size_t)i * N + j];
        db_want[j] = (float)s;
    }
    uint16_t *dx = malloc(2 * nx), *dw = malloc(2 * nw);
    float *db = malloc(4 * (size_t)N);
    blk_arg a1[] = {BLK_PTR(dx, 2 * nx), BLK_PTR(dy, 2 * ny), BLK_PTR(w, 2 * nw), BLK_INT(M), BLK_INT(N), BLK_INT(K)};
    run_bf16_out("linear_bwd_dx", mkdefs(&d, 4, items), h_cdiv(M, 16) * h_cdiv(K, 32), a1, 6, dx, dx_want, nx);
    blk_arg a2[] = {BLK_PTR(dw, 2 * nw), BLK_PTR(x, 2 * nx), BLK_PTR(dy, 2 * ny), BLK_INT(M), BLK_INT(N), BLK_INT(K)};
    run_bf16_out("linear_bwd_dw", mkdefs(&d, 4, items), h_cdiv(K, 16) * h_cdiv(N, 32), a2, 6, dw, dw_want, nw);
    const char *items_db[] = {"BM=16", "BN=32"};
    blkc_ctx *c3 = h_build(h_stdlib, "matmul.blk", "linear_bwd_db", mkdefs(&d, 2, items_db));
    blk_arg a3[] = {BLK_PTR(db, 4 * (size_t)N), BLK_PTR(dy, 2 * ny), BLK_INT(M), BLK_INT(N)};
    if (h_run(c3, "linear_bwd_db", h_cdiv(N, 32), 1, 1, a3, 4) == 0) h_close("linear_bwd_db", db, db_want, (size_t)N, 1e-5f, 1e-5f);
    blkc_free(c3);
    free(xv); free(wv); free(gv); free(x); free(w); free(dy); free(dx_want); free(dw_want); free(db_want);
    free(dx); free(dw); free(db);
}

/* ---- MoE: sort -> permute -> grouped GEMM -> unpermute, one expert never chosen ---- */
static void moe(int T, int E, int K, int hidden, int N, int empty) {
    int S = T * K;
    const char *kdef = K == 1 ? "K=1" : K == 2 ? "K=2" : "K=4";
    defs_t d;
    /* routing: K distinct experts per token, none of them `empty` */
    int32_t *ex = malloc(4 * (size_t)S);
    float *wt = malloc(4 * (size_t)S);
    for (int t = 0; t < T; t++)
        for (int j = 0; j < K; j++) {
            int e, dup;
            do {
                e = (int)(h_u32() % (unsigned)E);
                dup = e == empty;
                for (int i = 0; i < j; i++) dup |= ex[t * K + i] == e;
            } while (dup);
            ex[t * K + j] = e;
            wt[t * K + j] = h_uniform(0, 1);
        }
    /* stable counting sort by expert */
    int32_t *off_want = calloc((size_t)E + 1, 4), *pos_want = malloc(4 * (size_t)S), *src_want = malloc(4 * (size_t)S);
    for (int s = 0; s < S; s++) off_want[ex[s] + 1]++;
    for (int e = 0; e < E; e++) off_want[e + 1] += off_want[e];
    int32_t *next = malloc(4 * (size_t)E);
    memcpy(next, off_want, 4 * (size_t)E);
    for (int s = 0; s < S; s++) { pos_want[s] = next[ex[s]]++; src_want[pos_want[s]] = s; }
    int32_t *off = malloc(4 * ((size_t)E + 1)), *pos = malloc(4 * (size_t)S), *src = malloc(4 * (size_t)S);
    const char *sdefs[] = {"BE=16", "BS=16"};
    blkc_ctx *c = h_build(h_stdlib, "moe.blk", "moe_sort", mkdefs(&d, 2, sdefs));
    blk_arg sa[] = {BLK_PTR(off, 4 * ((size_t)E + 1)), BLK_PTR(pos, 4 * (size_t)S), BLK_PTR(src, 4 * (size_t)S),
                    BLK_PTR(ex, 4 * (size_t)S), BLK_INT(S), BLK_INT(E)};
    if (h_run(c, "moe_sort", 1, 1, 1, sa, 6) == 0) {
        h_equal_i32("moe_sort offsets", off, off_want, (size_t)E + 1);
        h_equal_i32("moe_sort pos", pos, pos_want, (size_t)S);
        h_equal_i32("moe_sort src", src, src_want, (size_t)S);
    }
    blkc_free(c);
    /* the later stages run on the reference's indices, so one failure does not cascade */
    size_t nx = (size_t)T * hidden, nxs = (size_t)S * hidden, nw = (size_t)E * N * hidden, ny = (size_t)S * N;
    float *xv = malloc(4 * nx), *wv = malloc(4 * nw);
    uint16_t *x = rand_bf16(nx, -1, 1, xv), *w = rand_bf16(nw, -1, 1, wv), *xs = malloc(2 * nxs);
    const char *pdefs[] = {kdef, "BR=16", "BH=32"};
    c = h_build(h_stdlib, "moe.blk", "moe_permute", mkdefs(&d, 3, pdefs));
    blk_arg pa[] = {BLK_PTR(xs, 2 * nxs), BLK_PTR(x, 2 * nx), BLK_PTR(src_want, 4 * (size_t)S), BLK_INT(S), BLK_INT(hidden)};
    if (h_run(c, "moe_permute", h_cdiv(S, 16), h_cdiv(hidden, 32), 1, pa, 5) == 0) {
        float *g = malloc(4 * nxs), *wnt = malloc(4 * nxs);
        for (int r = 0; r < S; r++)
            for (int h = 0; h < hidden; h++) {
                g[(size_t)r * hidden + h] = h_bf2f(xs[(size_t)r * hidden + h]);
                wnt[(size_t)r * hidden + h] = xv[(size_t)(src_want[r] / K) * hidden + h];
            }
        h_close("moe_permute", g, wnt, nxs, 0, 0);
        free(g); free(wnt);
    }
    blkc_free(c);
    /* grouped GEMM on the reference permutation */
    uint16_t *xs_ref = malloc(2 * nxs), *ys = malloc(2 * ny);
    float *xsv = malloc(4 * nxs);
    for (int r = 0; r < S; r++)
        for (int h = 0; h < hidden; h++) {
            xs_ref[(size_t)r * hidden + h] = x[(size_t)(src_want[r] / K) * hidden + h];
            xsv[(size_t)r * hidden + h] = xv[(size_t)(src_want[r] / K) * hidden + h];
        }
    float *ys_want = malloc(4 * ny);
    for (int e = 0; e < E; e++)
        for (int r = off_want[e]; r < off_want[e + 1]; r++)
            for (int n = 0; n < N; n++) {
                double s = 0;
                for (int h = 0; h < hidden; h++)
                    s += (double)xsv[(size_t)r * hidden + h] * wv[((size_t)e * N + n) * hidden + h];
                ys_want[(size_t)r * N + n] = (float)s;
            }
    const char *gdefs[] = {"BE=16", "BM=16", "BN=16", "BK=16"};
    c = h_build(h_stdlib, "moe.blk", "moe_grouped_gemm", mkdefs(&d, 4, gdefs));
    blk_arg ga[] = {BLK_PTR(ys, 2 * ny), BLK_PTR(xs_ref, 2 * nxs), BLK_PTR(w, 2 * nw), BLK_PTR(off_want, 4 * ((size_t)E + 1)),
                    BLK_INT(N), BLK_INT(hidden), BLK_INT(E)};
    if (h_run(c, "moe_grouped_gemm", h_cdiv(S, 16) + (unsigned)E, h_cdiv(N, 16), 1, ga, 7) == 0)
        h_close_bf16("moe_grouped_gemm", ys, ys_want, ny, 1.0f / 128, 1e-3f);
    blkc_free(c);
    /* unpermute from the reference expert outputs (rounded to bf16 as stored) */
    uint16_t *ys_ref = h_to_bf16(ys_want, ny), *out = malloc(2 * (size_t)T * N);
    float *out_want = malloc(4 * (size_t)T * N);
    for (int t = 0; t < T; t++)
        for (int n = 0; n < N; n++) {
            double s = 0;
            for (int j = 0; j < K; j++) s += (double)wt[t * K + j] * h_bf2f(ys_ref[(size_t)pos_want[t * K + j] * N + n]);
            out_want[(size_t)t * N + n] = (float)s;
        }
    const char *udefs[] = {kdef, "BT=16", "BH=32"};
    c = h_build(h_stdlib, "moe.blk", "moe_unpermute", mkdefs(&d, 3, udefs));
    blk_arg ua[] = {BLK_PTR(out, 2 * (size_t)T * N), BLK_PTR(ys_ref, 2 * ny), BLK_PTR(pos_want, 4 * (size_t)S),
                    BLK_PTR(wt, 4 * (size_t)S), BLK_INT(T), BLK_INT(N)};
    if (h_run(c, "moe_unpermute", h_cdiv(T, 16), h_cdiv(N, 32), 1, ua, 6) == 0)
        h_close_bf16("moe_unpermute", out, out_want, (size_t)T * N, 1.0f / 128, 1e-3f);
    blkc_free(c);
    free(ex); free(wt); free(off_want); free(pos_want); free(src_want); free(next); free(off); free(pos); free(src);
    free(xv); free(wv); free(x); free(w); free(xs); free(xs_ref); free(ys); free(xsv); free(ys_want); free(ys_ref);
    free(out); free(out_want);
}

int main(int argc, char **argv) {
    h_init(argc, argv);
    h_seed(1234);
    gemm_f16(50, 70, 45);
    gemm_f16(16, 32, 16);
    gemm_tf32(37, 29, 41);
    gemm_i8(33, 70, 77);
    gemm_fp8(45, 37, 70, 0);
    gemm_fp8(45, 37, 70, 1);
    gemm_epilogue(40, 70, 33, 0, "none", 0, 0);
    gemm_epilogue(40, 70, 33, 1, "silu", 1, 0);
    gemm_epilogue(23, 50, 40, 1, "gelu", 0, 0);
    gemm_epilogue(23, 50, 40, 1, "gelu", 1, 1);
    gemm_persistent(70, 50, 35, 3);   /* 20 tiles over 3 programs */
    gemm_persistent(16, 16, 16, 4);   /* more programs than tiles */
    gemm_splitk(37, 70, 300, 3);      /* ragged; K slices of 112, 112, 76 */
    gemm_splitk(5, 33, 40, 4);        /* the fourth slice is empty (K = 40, slices of 16) */
    qkv(2, 13, 40, 3, 1, 0);
    qkv(2, 13, 40, 3, 1, 1);
    qkv(1, 20, 24, 2, 2, 1);
    linear_bwd(45, 70, 37);
    moe(37, 6, 2, 40, 24, 3);   /* expert 3 gets no tokens */
    moe(20, 5, 1, 16, 20, 0);   /* expert 0 gets no tokens; top-1 */
    return test_finish("matmul_family");
}

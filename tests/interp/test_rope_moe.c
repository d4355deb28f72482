/* stdlib/attn_variants.blk (RoPE) and moe.blk (router, aux loss) on the
 * interpreter vs plain C (double) references. */
#include "harness.h"

/* ---- RoPE ---- */

/* The caller-side tables of the rope kernels: f32 [max_pos, D/2]. */
static void rope_tables(int max_pos, int D, double theta, float *cos_t, float *sin_t) {
    int half = D / 2;
    for (int p = 0; p < max_pos; p++)
        for (int i = 0; i < half; i++) {
            float ang = (float)p * (float)pow(theta, -2.0 * i / D);
            cos_t[(size_t)p * half + i] = cosf(ang);
            sin_t[(size_t)p * half + i] = sinf(ang);
        }
}

/* want[t, h, :] = rotate-half of x[t, h, :] at position pos_of[t], with the
 * angle's cos/sin either from the tables (cos_t != NULL) or exact. */
static void rope_ref(const uint16_t *x, float *want, int T, int H, int D, const int *pos_of,
                     const float *cos_t, const float *sin_t, double theta) {
    int half = D / 2;
    for (int t = 0; t < T; t++)
        for (int h = 0; h < H; h++)
            for (int i = 0; i < half; i++) {
                size_t o = ((size_t)t * H + h) * D + i;
                double c, s;
                if (cos_t) {
                    c = cos_t[(size_t)pos_of[t] * half + i];
                    s = sin_t[(size_t)pos_of[t] * half + i];
                } else {
                    double ang = pos_of[t] * pow(theta, -2.0 * i / D);
                    c = cos(ang);
                    s = sin(ang);
                }
                double x1 = h_bf2f(x[o]), x2 = h_bf2f(x[o + half]);
                want[o] = (float)(x1 * c - x2 * s);
                want[o + half] = (float)(x2 * c + x1 * s);
            }
}

static uint16_t *rand_bf16(size_t n, float lo, float hi) {
    float *f = h_rand_f32(n, lo, hi);
    uint16_t *b = h_to_bf16(f, n);
    free(f);
    return b;
}

/* rope on [B*S, H, D]; has_pos: random positions < max_pos from an array,
 * else t % S. in_place: out = x. */
static void rope(int B, int S, int H, int D, int BH, int has_pos, int in_place) {
    char dd[32], db[32], dp[32];
    snprintf(dd, sizeof dd, "D=%d", D);
    snprintf(db, sizeof db, "BH=%d", BH);
    snprintf(dp, sizeof dp, "HAS_POS=%s", has_pos ? "true" : "false");
    const char *defs[] = {dd, db, dp, NULL};
    int T = B * S, max_pos = has_pos ? 300 : S, half = D / 2;
    size_t n = (size_t)T * H * D, nt = (size_t)max_pos * half;
    uint16_t *x = rand_bf16(n, -2, 2), *out = in_place ? x : calloc(n, 2);
    float *cos_t = malloc(4 * nt), *sin_t = malloc(4 * nt), *want = malloc(4 * n);
    int32_t *pos = malloc(4 * (size_t)T);
    int *pos_of = malloc(sizeof(int) * (size_t)T);
    for (int t = 0; t < T; t++) {
        pos[t] = (int32_t)(h_u32() % (uint32_t)max_pos);
        pos_of[t] = has_pos ? pos[t] : t % S;
    }
    rope_tables(max_pos, D, 10000.0, cos_t, sin_t);
    rope_ref(x, want, T, H, D, pos_of, cos_t, sin_t, 0);
    blkc_ctx *c = h_build(h_stdlib, "attn_variants.blk", "rope", defs);
    blk_arg args[] = {BLK_PTR(out, 2 * n), BLK_PTR(x, 2 * n), BLK_PTR(cos_t, 4 * nt), BLK_PTR(sin_t, 4 * nt),
                      BLK_PTR(pos, 4 * (size_t)T), BLK_INT(S), BLK_INT(H)};
    if (h_run(c, "rope", (unsigned)T, h_cdiv(H, BH), 1, args, 7) == 0) {
        char what[96];
        snprintf(what, sizeof what, "rope B=%d S=%d H=%d D=%d BH=%d pos=%d in_place=%d", B, S, H, D, BH, has_pos, in_place);
        h_close_bf16(what, out, want, n, 1.0f / 128, 1e-6f);
    }
    blkc_free(c);
    if (!in_place) free(out);
    free(x); free(cos_t); free(sin_t); free(want); free(pos); free(pos_of);
}

/* rope_qk: q [T, Hq, D] and k [T, Hkv, D] in one launch. */
static void rope_qk(int B, int S, int Hq, int Hkv, int D, int BH) {
    char dd[32], db[32];
    snprintf(dd, sizeof dd, "D=%d", D);
    snprintf(db, sizeof db, "BH=%d", BH);
    const char *defs[] = {dd, db, NULL};
    int T = B * S, half = D / 2;
    size_t nq = (size_t)T * Hq * D, nk = (size_t)T * Hkv * D, nt = (size_t)S * half;
    uint16_t *q = rand_bf16(nq, -2, 2), *k = rand_bf16(nk, -2, 2), *qo = calloc(nq, 2), *ko = calloc(nk, 2);
    float *cos_t = malloc(4 * nt), *sin_t = malloc(4 * nt), *wq = malloc(4 * nq), *wk = malloc(4 * nk);
    int *pos_of = malloc(sizeof(int) * (size_t)T);
    for (int t = 0; t < T; t++) pos_of[t] = t % S;
    rope_tables(S, D, 10000.0, cos_t, sin_t);
    rope_ref(q, wq, T, Hq, D, pos_of, cos_t, sin_t, 0);
    rope_ref(k, wk, T, Hkv, D, pos_of, cos_t, sin_t, 0);
    blkc_ctx *c = h_build(h_stdlib, "attn_variants.blk", "rope_qk", defs);
    blk_arg args[] = {BLK_PTR(qo, 2 * nq), BLK_PTR(ko, 2 * nk), BLK_PTR(q, 2 * nq), BLK_PTR(k, 2 * nk),
                      BLK_PTR(cos_t, 4 * nt), BLK_PTR(sin_t, 4 * nt), BLK_PTR(NULL, 0), BLK_INT(S), BLK_INT(Hq), BLK_INT(Hkv)};
    int hmax = Hq > Hkv ? Hq : Hkv;
    if (h_run(c, "rope_qk", (unsigned)T, h_cdiv(hmax, BH), 1, args, 10) == 0) {
        h_close_bf16("rope_qk q", qo, wq, nq, 1.0f / 128, 1e-6f);
        h_close_bf16("rope_qk k", ko, wk, nk, 1.0f / 128, 1e-6f);
    }
    blkc_free(c);
    free(q); free(k); free(qo); free(ko); free(cos_t); free(sin_t); free(wq); free(wk); free(pos_of);
}

/* rope_theta: angles in the kernel (f32), positions up to max_pos. */
static void rope_theta(int T, int H, int D, double theta, int max_pos) {
    char dd[32];
    snprintf(dd, sizeof dd, "D=%d", D);
    const char *defs[] = {dd, "BH=4", "HAS_POS=true", NULL};
    size_t n = (size_t)T * H * D;
    uint16_t *x = rand_bf16(n, -2, 2), *out = calloc(n, 2);
    float *want = malloc(4 * n);
    int32_t *pos = malloc(4 * (size_t)T);
    int *pos_of = malloc(sizeof(int) * (size_t)T);
    for (int t = 0; t < T; t++) pos_of[t] = pos[t] = (int32_t)(h_u32() % (uint32_t)max_pos);
    pos_of[0] = pos[0] = 0;
    pos_of[T - 1] = pos[T - 1] = max_pos - 1;
    rope_ref(x, want, T, H, D, pos_of, NULL, NULL, theta);
    blkc_ctx *c = h_build(h_stdlib, "attn_variants.blk", "rope_theta", defs);
    blk_arg args[] = {BLK_PTR(out, 2 * n), BLK_PTR(x, 2 * n), BLK_PTR(pos, 4 * (size_t)T), BLK_INT(0), BLK_INT(H),
                      BLK_FLOAT(theta)};
    if (h_run(c, "rope_theta", (unsigned)T, h_cdiv(H, 4), 1, args, 6) == 0) {
        /* f32 angles of positions up to max_pos are off by ~max_pos * 2^-23 */
        char what[64];
        snprintf(what, sizeof what, "rope_theta D=%d theta=%g", D, theta);
        h_close_bf16(what, out, want, n, 1.0f / 128, (float)max_pos * 8e-7f + 1e-6f);
    }
    blkc_free(c);
    free(x); free(out); free(want); free(pos); free(pos_of);
}

/* linear_attn on [BH, S, D] bf16 vs a double reference of phi(x) = elu(x) + 1
 * attention. The kernel's dots take f32 inputs as tf32 (10-bit mantissas). */
static double elu1(double x) { return x > 0 ? x + 1 : exp(x); }

static void linear_attn(int BH, int S, int D, int BS, int causal) {
    char dd[32], db[32], dc[32];
    snprintf(dd, sizeof dd, "D=%d", D);
    snprintf(db, sizeof db, "BS=%d", BS);
    snprintf(dc, sizeof dc, "CAUSAL=%s", causal ? "true" : "false");
    const char *defs[] = {dd, db, dc, NULL};
    size_t n = (size_t)BH * S * D;
    uint16_t *q = rand_bf16(n, -1, 1), *k = rand_bf16(n, -1, 1), *v = rand_bf16(n, -1, 1), *out = calloc(n, 2);
    float *want = malloc(4 * n);
    double *kv = malloc(sizeof(double) * (size_t)D * D), *z = malloc(sizeof(double) * (size_t)D);
    double *fq = malloc(sizeof(double) * (size_t)D);
    for (int b = 0; b < BH; b++) {
        const uint16_t *qb = q + (size_t)b * S * D, *kb = k + (size_t)b * S * D, *vb = v + (size_t)b * S * D;
        memset(kv, 0, sizeof(double) * (size_t)D * D);
        memset(z, 0, sizeof(double) * (size_t)D);
        for (int pass = causal ? 1 : 0; pass < 2; pass++)
            for (int i = 0; i < S; i++) {
                if (pass == 0 || causal) /* add key i to the state */
                    for (int a = 0; a < D; a++) {
                        double fk = elu1(h_bf2f(kb[(size_t)i * D + a]));
                        z[a] += fk;
                        for (int c = 0; c < D; c++) kv[(size_t)a * D + c] += fk * h_bf2f(vb[(size_t)i * D + c]);
                    }
                if (pass == 0) continue;
                double den = 0;
                for (int a = 0; a < D; a++) { fq[a] = elu1(h_bf2f(qb[(size_t)i * D + a])); den += fq[a] * z[a]; }
                for (int c = 0; c < D; c++) {
                    double num = 0;
                    for (int a = 0; a < D; a++) num += fq[a] * kv[(size_t)a * D + c];
                    want[((size_t)b * S + i) * D + c] = (float)(num / den);
                }
            }
    }
    blkc_ctx *c = h_build(h_stdlib, "attn_variants.blk", "linear_attn", defs);
    blk_arg args[] = {BLK_PTR(out, 2 * n), BLK_PTR(q, 2 * n), BLK_PTR(k, 2 * n), BLK_PTR(v, 2 * n), BLK_INT(S)};
    if (h_run(c, "linear_attn", (unsigned)BH, 1, 1, args, 5) == 0) {
        char what[96];
        snprintf(what, sizeof what, "linear_attn BH=%d S=%d D=%d BS=%d causal=%d", BH, S, D, BS, causal);
        h_close_bf16(what, out, want, n, 1.0f / 128, 1e-3f); /* ~1 bf16 ulp */
    }
    blkc_free(c);
    free(q); free(k); free(v); free(out); free(want); free(kv); free(z); free(fq);
}

/* ---- MoE router ---- */

typedef struct {
    int T, E, K, BT, BE, renorm, bf16, ties;
} router_case;

static void router(router_case rc) {
    int T = rc.T, E = rc.E, K = rc.K;
    char dk[32], dt[32], de[32], dr[32];
    snprintf(dk, sizeof dk, "K=%d", K);
    snprintf(dt, sizeof dt, "BT=%d", rc.BT);
    snprintf(de, sizeof de, "BE=%d", rc.BE);
    snprintf(dr, sizeof dr, "RENORM=%s", rc.renorm ? "true" : "false");
    const char *defs[] = {dk, dt, de, dr, NULL};
    size_t n = (size_t)T * E, nk = (size_t)T * K;
    float *lf = malloc(4 * n);
    for (size_t i = 0; i < n; i++)
        lf[i] = rc.ties ? (float)((int)(h_u32() % 5) - 2) : h_uniform(-4, 4); /* ties: values in -2..2 */
    uint16_t *lb = h_to_bf16(lf, n);
    if (rc.bf16)
        for (size_t i = 0; i < n; i++) lf[i] = h_bf2f(lb[i]);
    float *w = h_fill_f32(nk, NAN), *ww = malloc(4 * nk), *psum = h_fill_f32((size_t)E, 0), *wpsum = malloc(4 * (size_t)E);
    int32_t *ex = malloc(4 * nk), *wex = malloc(4 * nk), *cnt = calloc((size_t)E, 4), *wcnt = calloc((size_t)E, 4);
    for (size_t i = 0; i < nk; i++) ex[i] = -1;
    double *acc = calloc((size_t)E, sizeof(double)), *p = malloc(sizeof(double) * (size_t)E);
    char *used = malloc((size_t)E);
    for (int t = 0; t < T; t++) {
        const float *x = lf + (size_t)t * E;
        double m = -INFINITY, s = 0, ks = 0;
        for (int e = 0; e < E; e++) m = fmax(m, x[e]);
        for (int e = 0; e < E; e++) s += exp(x[e] - m);
        for (int e = 0; e < E; e++) { p[e] = exp(x[e] - m) / s; acc[e] += p[e]; }
        memset(used, 0, (size_t)E);
        for (int j = 0; j < K; j++) {
            int best = -1;
            for (int e = 0; e < E; e++) /* strict >: ties go to the lower index */
                if (!used[e] && (best < 0 || x[e] > x[best])) best = e;
            used[best] = 1;
            wex[(size_t)t * K + j] = best;
            wcnt[best]++;
            ks += p[best];
        }
        for (int j = 0; j < K; j++) {
            double pj = p[wex[(size_t)t * K + j]];
            ww[(size_t)t * K + j] = (float)(rc.renorm ? pj / ks : pj);
        }
    }
    for (int e = 0; e < E; e++) wpsum[e] = (float)acc[e];

    const char *kernel = rc.bf16 ? "moe_router_bf16" : "moe_router";
    char what[128];
    snprintf(what, sizeof what, "%s T=%d E=%d K=%d BT=%d BE=%d renorm=%d ties=%d", kernel, T, E, K, rc.BT, rc.BE, rc.renorm, rc.ties);
    blkc_ctx *c = h_build(h_stdlib, "moe.blk", kernel, defs);
    blk_arg args[] = {BLK_PTR(w, 4 * nk), BLK_PTR(ex, 4 * nk), BLK_PTR(cnt, 4 * (size_t)E), BLK_PTR(psum, 4 * (size_t)E),
                      rc.bf16 ? BLK_PTR(lb, 2 * n) : BLK_PTR(lf, 4 * n), BLK_INT(T), BLK_INT(E)};
    if (h_run(c, kernel, h_cdiv(T, rc.BT), 1, 1, args, 7) == 0) {
        char name[192];
        snprintf(name, sizeof name, "%s: experts", what);
        h_equal_i32(name, ex, wex, nk);
        snprintf(name, sizeof name, "%s: weights", what);
        h_close(name, w, ww, nk, 2e-6f, 1e-7f);
        snprintf(name, sizeof name, "%s: counts", what);
        h_equal_i32(name, cnt, wcnt, (size_t)E);
        snprintf(name, sizeof name, "%s: prob_sum", what);
        h_close(name, psum, wpsum, (size_t)E, 1e-5f, 1e-5f);
        long total = 0;
        for (int e = 0; e < E; e++) total += cnt[e];
        CHECK(total == (long)T * K, "sum(counts) = %ld, want T*K = %ld", total, (long)T * K);
    }
    blkc_free(c);

    /* the aux loss from the kernel's counts/prob_sum (vs the reference's),
     * BE smaller than E to exercise its loop */
    double l = 0;
    for (int e = 0; e < E; e++) l += ((double)wcnt[e] / ((double)T * K)) * (acc[e] / T);
    float wloss = (float)(E * l), loss = NAN;
    const char *ldefs[] = {"BE=16", NULL};
    c = h_build(h_stdlib, "moe.blk", "moe_aux_loss", ldefs);
    blk_arg largs[] = {BLK_PTR(cnt, 4 * (size_t)E), BLK_PTR(psum, 4 * (size_t)E), BLK_PTR(&loss, 4), BLK_INT(T), BLK_INT(E), BLK_INT(K)};
    snprintf(what, sizeof what, "moe_aux_loss T=%d E=%d K=%d", T, E, K);
    if (h_run(c, "moe_aux_loss", 1, 1, 1, largs, 6) == 0) h_close(what, &loss, &wloss, 1, 1e-5f, 1e-7f);
    blkc_free(c);

    free(lf); free(lb); free(w); free(ww); free(psum); free(wpsum); free(ex); free(wex); free(cnt); free(wcnt);
    free(acc); free(p); free(used);
}

/* A perfectly balanced router (uniform logits) gives loss 1 for any K, and
 * all-equal logits pick experts 0..K-1 for every token. */
static void aux_loss_balanced(int T, int E, int K) {
    int32_t *cnt = malloc(4 * (size_t)E);
    float *psum = malloc(4 * (size_t)E), loss = NAN, one = 1.0f;
    for (int e = 0; e < E; e++) { cnt[e] = T * K / E; psum[e] = (float)T / E; }
    blkc_ctx *c = h_build(h_stdlib, "moe.blk", "moe_aux_loss", NULL);
    blk_arg args[] = {BLK_PTR(cnt, 4 * (size_t)E), BLK_PTR(psum, 4 * (size_t)E), BLK_PTR(&loss, 4), BLK_INT(T), BLK_INT(E), BLK_INT(K)};
    if (h_run(c, "moe_aux_loss", 1, 1, 1, args, 6) == 0) h_close("moe_aux_loss balanced", &loss, &one, 1, 1e-6f, 0);
    blkc_free(c);
    free(cnt); free(psum);
}

int main(int argc, char **argv) {
    h_init(argc, argv);
    h_seed(2024);
    rope(2, 37, 5, 64, 4, 0, 0);    /* H not a multiple of BH */
    rope(1, 16, 8, 128, 8, 0, 0);
    rope(3, 11, 3, 128, 2, 1, 0);   /* positions array */
    rope(2, 9, 4, 64, 8, 0, 1);     /* in place, BH > H */
    rope_qk(2, 13, 6, 2, 128, 4);   /* GQA */
    rope_qk(1, 7, 2, 3, 64, 2);     /* more kv heads than q heads */
    rope_theta(29, 3, 64, 10000.0, 4096);
    rope_theta(17, 2, 128, 500000.0, 8192);
    linear_attn(3, 100, 64, 32, 0);  /* seq not a multiple of BS */
    linear_attn(2, 77, 64, 16, 1);
    linear_attn(1, 64, 128, 32, 1);

    router((router_case){100, 8, 2, 32, 8, 1, 0, 0});    /* T not a multiple of BT */
    router((router_case){100, 8, 2, 32, 8, 1, 0, 1});    /* many ties */
    router((router_case){37, 60, 4, 16, 64, 0, 0, 0});   /* E not a power of two, no renorm */
    router((router_case){53, 60, 4, 8, 64, 1, 0, 1});
    router((router_case){1000, 16, 1, 64, 16, 1, 0, 0}); /* top-1 (Switch) */
    router((router_case){77, 32, 2, 16, 32, 1, 1, 0});   /* bf16 logits */
    router((router_case){31, 5, 5, 32, 8, 0, 1, 1});     /* K = E, K not a power of two */
    router((router_case){200, 64, 6, 16, 64, 1, 0, 0});  /* K = 6 of 64 (DeepSeek-like) */
    router((router_case){90, 64, 6, 32, 64, 1, 0, 1});
    aux_loss_balanced(64, 8, 2);
    aux_loss_balanced(300, 300, 1);
    return test_finish("rope_moe");
}

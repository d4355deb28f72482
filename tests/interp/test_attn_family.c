/* stdlib/fused_attn.blk's attention family on the interpreter vs C references:
 * attn_fwd with a sliding window, attn_fwd_varlen, the backward kernels
 * (attn_bwd_preprocess, attn_bwd_dkdv, attn_bwd_dq) and paged decode
 * (attn_decode_paged + attn_decode_combine), block-sparse attention
 * (attn_fwd_blocksparse) and RoPE fused into the forward (attn_fwd_rope).
 * Ragged shapes throughout: sequences not a multiple of the block, a
 * zero-length sequence, windows smaller than a block, lengths not a multiple
 * of PAGE, a shuffled block table, block lists with empty rows. */
#include "harness.h"

#define D 32 /* head dim of every case (the kernels' D=32) */

static float *bf16_floats(const uint16_t *x, size_t n) {
    float *f = malloc(sizeof(float) * (n ? n : 1));
    for (size_t i = 0; i < n; i++) f[i] = h_bf2f(x[i]);
    return f;
}

static uint16_t *rand_bf16(size_t n) {
    float *f = h_rand_f32(n, -1, 1);
    uint16_t *b = h_to_bf16(f, n);
    free(f);
    return b;
}

/* One query row of head dim hd (<= 128) against keys j0 .. j1-1 (row j of
 * K at k + j * kstride), those with vis[j] set when vis is not NULL:
 * out = softmax(scale q.k) V, lse = ln sum exp(scale q.k) (in double).
 * No key: out 0, lse -inf. */
static void ref_row_vis(int hd, const float *q, const float *k, const float *v, size_t kstride, int j0, int j1,
                        const unsigned char *vis, float scale, float *out, float *lse) {
    double m = -INFINITY, l = 0, o[128] = {0};
    for (int j = j0; j < j1; j++) {
        if (vis && !vis[j]) continue;
        double s = 0;
        for (int d = 0; d < hd; d++) s += (double)q[d] * k[(size_t)j * kstride + d];
        m = fmax(m, s * scale);
    }
    for (int j = j0; j < j1; j++) {
        if (vis && !vis[j]) continue;
        double s = 0;
        for (int d = 0; d < hd; d++) s += (double)q[d] * k[(size_t)j * kstride + d];
        double p = exp(s * scale - m);
        l += p;
        for (int d = 0; d < hd; d++) o[d] += p * v[(size_t)j * kstride + d];
    }
    for (int d = 0; d < hd; d++) out[d] = l > 0 ? (float)(o[d] / l) : 0.0f;
    *lse = l > 0 ? (float)(m + log(l)) : -INFINITY;
}

static void ref_row(const float *q, const float *k, const float *v, size_t kstride, int j0, int j1, float scale,
                    float *out, float *lse) {
    ref_row_vis(D, q, k, v, kstride, j0, j1, NULL, scale, out, lse);
}

/* The consts of an attention kernel's build: D, BM, BN, CAUSAL, LSE=true,
 * GROUP and, where win > 0, WINDOW (the strings live in *d; d->list is
 * NULL-terminated). */
typedef struct {
    char hd[32], bm[32], bn[32], group[32], window[32];
    const char *list[8];
} attn_defs;

static void attn_defs_set(attn_defs *d, int hd, int bm, int bn, int causal, int group, int win) {
    snprintf(d->hd, sizeof d->hd, "D=%d", hd);
    snprintf(d->bm, sizeof d->bm, "BM=%d", bm);
    snprintf(d->bn, sizeof d->bn, "BN=%d", bn);
    snprintf(d->group, sizeof d->group, "GROUP=%d", group);
    snprintf(d->window, sizeof d->window, "WINDOW=%d", win);
    const char *l[8] = {d->hd,     d->bm, d->bn, causal ? "CAUSAL=true" : "CAUSAL=false", "LSE=true",
                        d->group, win > 0 ? d->window : NULL, NULL};
    memcpy(d->list, l, sizeof l);
}

/* the keys query i of a sequence of `seq` sees */
static void visible(int i, int seq, int causal, int window, int *j0, int *j1) {
    *j1 = causal ? i + 1 : seq;
    *j0 = window > 0 && i - window + 1 > 0 ? i - window + 1 : 0;
}

/* ref_row over every row of q [BH, S, hd] against k, v [BH / group, S, hd]
 * (plain or causal attention, window > 0: a causal sliding window): out
 * [BH, S, hd], lse [BH, S] */
static void ref_heads(int hd, const float *q, const float *k, const float *v, int BH, int S, int group, int causal,
                      int window, float scale, float *out, float *lse) {
    for (int bh = 0; bh < BH; bh++)
        for (int i = 0; i < S; i++) {
            int j0, j1;
            visible(i, S, causal, window, &j0, &j1);
            size_t kb = (size_t)(bh / group) * S * hd, qo = ((size_t)bh * S + i) * hd;
            ref_row_vis(hd, q + qo, k + kb, v + kb, hd, j0, j1, NULL, scale, out + qo, lse + (size_t)bh * S + i);
        }
}

/* attn_fwd, CAUSAL with WINDOW (0: plain causal), BM = BN = 16. skip: the
 * keys before the last query block's first key block are NaN, and only that
 * block's rows are compared: a key loop that visited the skipped blocks
 * would carry the NaN into them (0 * NaN in the P.V dot). */
static void window_case(int BH, int S, int win, int group, int skip) {
    char wdef[32], gdef[32];
    snprintf(wdef, sizeof wdef, "WINDOW=%d", win);
    snprintf(gdef, sizeof gdef, "GROUP=%d", group);
    const char *defs[] = {"D=32", "BM=16", "BN=16", "CAUSAL=true", "LSE=true", gdef, wdef, NULL};
    size_t n = (size_t)BH * S * D, nkv = (size_t)(BH / group) * S * D;
    uint16_t *q = rand_bf16(n), *k = rand_bf16(nkv), *v = rand_bf16(nkv), *out = calloc(n, 2);
    int last = (S - 1) / 16 * 16, lo = last - win + 1 > 0 ? (last - win + 1) / 16 * 16 : 0;
    for (size_t i = 0; skip && i < nkv; i++)
        if ((int)(i / D % (size_t)S) < lo) k[i] = v[i] = 0x7fc0; /* bf16 NaN */
    float *qf = bf16_floats(q, n), *kf = bf16_floats(k, nkv), *vf = bf16_floats(v, nkv);
    float scale = 1.0f / sqrtf((float)D), *want = malloc(4 * n);
    float *lse = calloc((size_t)BH * S, 4), *lse_want = malloc(4 * (size_t)BH * S);
    for (int bh = 0; bh < BH; bh++)
        for (int i = skip ? last : 0; i < S; i++) {
            int j0, j1;
            visible(i, S, 1, win, &j0, &j1);
            size_t kb = (size_t)(bh / group) * S * D, qo = ((size_t)bh * S + i) * D;
            ref_row(qf + qo, kf + kb, vf + kb, D, j0, j1, scale, want + qo, lse_want + (size_t)bh * S + i);
        }
    blkc_ctx *c = h_build(h_stdlib, "fused_attn.blk", "attn_fwd", defs);
    blk_arg args[] = {BLK_PTR(out, 2 * n), BLK_PTR(q, 2 * n), BLK_PTR(k, 2 * nkv), BLK_PTR(v, 2 * nkv),
                      BLK_PTR(lse, 4 * (size_t)BH * S), BLK_INT(S), BLK_FLOAT(scale)};
    if (h_run(c, "attn_fwd", h_cdiv(S, 16), (unsigned)BH, 1, args, 7) == 0) {
        char name[64];
        snprintf(name, sizeof name, "attn_fwd window %d seq %d group %d%s", win, S, group, skip ? " skip" : "");
        for (int bh = 0; bh < BH; bh++) { /* skip: the last query block's rows only */
            size_t r0 = (size_t)bh * S + (skip ? (size_t)last : 0), nrows = (size_t)S - (skip ? (size_t)last : 0);
            h_close_bf16(name, out + r0 * D, want + r0 * D, nrows * D, 2e-2f, 1e-2f);
            h_close(name, lse + r0, lse_want + r0, nrows, 1e-5f, 1e-5f);
        }
    }
    blkc_free(c);
    free(q); free(k); free(v); free(out); free(qf); free(kf); free(vf); free(want); free(lse); free(lse_want);
}

static void window(int BH, int S, int win, int group) {
    window_case(BH, S, win, group, 0);
    if (win < S) window_case(BH, S, win, group, 1);
}

/* attn_fwd_varlen over sequences of the given lengths, [total, H, D] packed */
static void varlen(int nb, const int *lens, int H, int group, int causal, int win) {
    char wdef[32], gdef[32];
    snprintf(wdef, sizeof wdef, "WINDOW=%d", win);
    snprintf(gdef, sizeof gdef, "GROUP=%d", group);
    const char *defs[] = {"D=32", "BM=16", "BN=16", causal ? "CAUSAL=true" : "CAUSAL=false", "LSE=true", gdef,
                          wdef, NULL};
    int32_t cu[16];
    int maxlen = 0, KH = H / group;
    cu[0] = 0;
    for (int b = 0; b < nb; b++) {
        cu[b + 1] = cu[b] + lens[b];
        if (lens[b] > maxlen) maxlen = lens[b];
    }
    int total = cu[nb];
    size_t n = (size_t)total * H * D, nkv = (size_t)total * KH * D;
    uint16_t *q = rand_bf16(n), *k = rand_bf16(nkv), *v = rand_bf16(nkv), *out = calloc(n, 2);
    float *qf = bf16_floats(q, n), *kf = bf16_floats(k, nkv), *vf = bf16_floats(v, nkv);
    float scale = 0.3f, *want = malloc(4 * n);
    float *lse = calloc((size_t)H * total + 1, 4), *lse_want = malloc(4 * ((size_t)H * total + 1));
    for (int b = 0; b < nb; b++)
        for (int h = 0; h < H; h++)
            for (int i = 0; i < lens[b]; i++) {
                int j0, j1, t = cu[b] + i;
                visible(i, lens[b], causal, win, &j0, &j1);
                size_t kb = ((size_t)cu[b] * KH + h / group) * D, qo = ((size_t)t * H + h) * D;
                ref_row(qf + qo, kf + kb, vf + kb, (size_t)KH * D, j0, j1, scale, want + qo,
                        lse_want + (size_t)h * total + t);
            }
    blkc_ctx *c = h_build(h_stdlib, "fused_attn.blk", "attn_fwd_varlen", defs);
    blk_arg args[] = {BLK_PTR(out, 2 * n), BLK_PTR(q, 2 * n), BLK_PTR(k, 2 * nkv), BLK_PTR(v, 2 * nkv),
                      BLK_PTR(lse, 4 * (size_t)H * total), BLK_PTR(cu, 4 * (size_t)(nb + 1)), BLK_INT(H),
                      BLK_FLOAT(scale)};
    if (h_run(c, "attn_fwd_varlen", maxlen ? h_cdiv(maxlen, 16) : 1, (unsigned)(nb * H), 1, args, 8) == 0) {
        char name[64];
        snprintf(name, sizeof name, "attn_fwd_varlen%s window %d group %d", causal ? " causal" : "", win, group);
        h_close_bf16(name, out, want, n, 2e-2f, 1e-2f);
        h_close(name, lse, lse_want, (size_t)H * total, 1e-5f, 1e-5f);
    }
    blkc_free(c);
    free(q); free(k); free(v); free(out); free(qf); free(kf); free(vf); free(want); free(lse); free(lse_want);
}

/* largest |x| of n floats: the backward's tolerances scale with it */
static float amax(const float *x, size_t n) {
    float m = 0;
    for (size_t i = 0; i < n; i++) m = fmaxf(m, fabsf(x[i]));
    return m;
}

/* attn_bwd_preprocess, attn_bwd_dkdv, attn_bwd_dq against the gradients of
 * out = softmax(scale QK^T) V computed in double (BM = BN = 16). */
static void backward(int BH, int S, int causal, int group) {
    char gdef[32];
    snprintf(gdef, sizeof gdef, "GROUP=%d", group);
    const char *defs[] = {"D=32", "BM=16", "BN=16", causal ? "CAUSAL=true" : "CAUSAL=false", gdef, NULL};
    const char *pdefs[] = {"D=32", "BM=16", NULL};
    int KH = BH / group;
    size_t n = (size_t)BH * S * D, nkv = (size_t)KH * S * D, nr = (size_t)BH * S;
    uint16_t *q = rand_bf16(n), *k = rand_bf16(nkv), *v = rand_bf16(nkv), *dout = rand_bf16(n);
    float *qf = bf16_floats(q, n), *kf = bf16_floats(k, nkv), *vf = bf16_floats(v, nkv), *dof = bf16_floats(dout, n);
    float scale = 0.4f, *of = malloc(4 * n), *lse = malloc(4 * nr), *delta_want = malloc(4 * nr);
    ref_heads(D, qf, kf, vf, BH, S, group, causal, 0, scale, of, lse);
    uint16_t *o = h_to_bf16(of, n); /* the forward's output, as attn_fwd stores it */
    float *obf = bf16_floats(o, n);
    for (size_t r = 0; r < nr; r++) {
        double s = 0;
        for (int d = 0; d < D; d++) s += (double)obf[r * D + d] * dof[r * D + d];
        delta_want[r] = (float)s;
    }
    /* reference gradients in double */
    double *dq = calloc(n, sizeof(double)), *dk = calloc(nkv, sizeof(double)), *dv = calloc(nkv, sizeof(double));
    for (int bh = 0; bh < BH; bh++) {
        size_t kb = (size_t)(bh / group) * S * D;
        for (int i = 0; i < S; i++) {
            size_t qo = ((size_t)bh * S + i) * D;
            int j0, j1;
            visible(i, S, causal, 0, &j0, &j1);
            for (int j = j0; j < j1; j++) {
                double s = 0, dp = 0;
                for (int d = 0; d < D; d++) {
                    s += (double)qf[qo + d] * kf[kb + (size_t)j * D + d];
                    dp += (double)dof[qo + d] * vf[kb + (size_t)j * D + d];
                }
                double p = exp(s * scale - lse[(size_t)bh * S + i]);
                double ds = p * (dp - delta_want[(size_t)bh * S + i]);
                for (int d = 0; d < D; d++) {
                    dv[kb + (size_t)j * D + d] += p * dof[qo + d];
                    dq[qo + d] += scale * ds * kf[kb + (size_t)j * D + d];
                    dk[kb + (size_t)j * D + d] += scale * ds * qf[qo + d];
                }
            }
        }
    }
    float *dq_want = malloc(4 * n), *dk_want = malloc(4 * nkv), *dv_want = malloc(4 * nkv);
    for (size_t i = 0; i < n; i++) dq_want[i] = (float)dq[i];
    for (size_t i = 0; i < nkv; i++) dk_want[i] = (float)dk[i], dv_want[i] = (float)dv[i];
    char name[64];
    snprintf(name, sizeof name, "attn_bwd%s seq %d group %d", causal ? " causal" : "", S, group);

    float *delta = calloc(nr, 4);
    blkc_ctx *c = h_build(h_stdlib, "fused_attn.blk", "attn_bwd_preprocess", pdefs);
    blk_arg pargs[] = {BLK_PTR(delta, 4 * nr), BLK_PTR(o, 2 * n), BLK_PTR(dout, 2 * n), BLK_INT(S)};
    if (h_run(c, "attn_bwd_preprocess", h_cdiv(S, 16), (unsigned)BH, 1, pargs, 4) == 0)
        h_close("attn_bwd_preprocess delta", delta, delta_want, nr, 1e-5f, 1e-5f);
    blkc_free(c);

    /* dS goes through bf16 into the dots: errors relative to the largest gradient */
    uint16_t *gk = calloc(nkv, 2), *gv = calloc(nkv, 2), *gq = calloc(n, 2);
    c = h_build(h_stdlib, "fused_attn.blk", "attn_bwd_dkdv", defs);
    blk_arg kargs[] = {BLK_PTR(gk, 2 * nkv), BLK_PTR(gv, 2 * nkv), BLK_PTR(q, 2 * n), BLK_PTR(k, 2 * nkv),
                       BLK_PTR(v, 2 * nkv), BLK_PTR(dout, 2 * n), BLK_PTR(lse, 4 * nr), BLK_PTR(delta_want, 4 * nr),
                       BLK_INT(S), BLK_FLOAT(scale)};
    if (h_run(c, "attn_bwd_dkdv", h_cdiv(S, 16), (unsigned)KH, 1, kargs, 10) == 0) {
        char nk[80], nv[80];
        snprintf(nk, sizeof nk, "%s dk", name);
        snprintf(nv, sizeof nv, "%s dv", name);
        h_close_bf16(nk, gk, dk_want, nkv, 2e-2f, 1e-2f * amax(dk_want, nkv));
        h_close_bf16(nv, gv, dv_want, nkv, 2e-2f, 1e-2f * amax(dv_want, nkv));
    }
    blkc_free(c);
    c = h_build(h_stdlib, "fused_attn.blk", "attn_bwd_dq", defs);
    blk_arg qargs[] = {BLK_PTR(gq, 2 * n), BLK_PTR(q, 2 * n), BLK_PTR(k, 2 * nkv), BLK_PTR(v, 2 * nkv),
                       BLK_PTR(dout, 2 * n), BLK_PTR(lse, 4 * nr), BLK_PTR(delta_want, 4 * nr), BLK_INT(S),
                       BLK_FLOAT(scale)};
    if (h_run(c, "attn_bwd_dq", h_cdiv(S, 16), (unsigned)BH, 1, qargs, 9) == 0) {
        char nq[80];
        snprintf(nq, sizeof nq, "%s dq", name);
        h_close_bf16(nq, gq, dq_want, n, 2e-2f, 1e-2f * amax(dq_want, n));
    }
    blkc_free(c);
    free(q); free(k); free(v); free(dout); free(qf); free(kf); free(vf); free(dof); free(of); free(lse);
    free(delta_want); free(o); free(obf); free(dq); free(dk); free(dv); free(dq_want); free(dk_want); free(dv_want);
    free(delta); free(gk); free(gv); free(gq);
}

/* attn_decode_paged + attn_decode_combine: one query token per sequence over
 * a cache of PAGE = 16 token pages placed by a shuffled block table */
static void decode(int nb, const int *lens, int H, int group, int pages_per_split) {
    const int PAGE = 16;
    char gdef[32];
    snprintf(gdef, sizeof gdef, "GROUP=%d", group);
    const char *defs[] = {"D=32", "PAGE=16", gdef, NULL};
    const char *cdefs[] = {"D=32", "BS=8", NULL};
    int KH = H / group, max_blocks = 0;
    for (int b = 0; b < nb; b++) {
        int p = (int)h_cdiv(lens[b], PAGE);
        if (p > max_blocks) max_blocks = p;
    }
    if (max_blocks == 0) max_blocks = 1;
    int num_blocks = nb * max_blocks + 3; /* a few cache blocks nobody uses */
    int num_splits = (int)h_cdiv(max_blocks, pages_per_split);
    /* a random permutation of the cache blocks: sequence b's page p is
     * perm[b * max_blocks + p]; entries past a sequence's pages are -1
     * (never read) */
    int32_t *perm = malloc(4 * (size_t)num_blocks), *table = malloc(4 * (size_t)nb * max_blocks);
    for (int i = 0; i < num_blocks; i++) perm[i] = i;
    for (int i = num_blocks - 1; i > 0; i--) {
        int j = (int)(h_u32() % (uint32_t)(i + 1)), t = perm[i];
        perm[i] = perm[j], perm[j] = t;
    }
    for (int b = 0; b < nb; b++)
        for (int p = 0; p < max_blocks; p++)
            table[b * max_blocks + p] = p * PAGE < lens[b] ? perm[b * max_blocks + p] : -1;
    size_t nq = (size_t)nb * H * D, ncache = (size_t)num_blocks * PAGE * KH * D;
    uint16_t *q = rand_bf16(nq), *kc = rand_bf16(ncache), *vc = rand_bf16(ncache), *out = calloc(nq, 2);
    float *qf = bf16_floats(q, nq), *kcf = bf16_floats(kc, ncache), *vcf = bf16_floats(vc, ncache);
    float scale = 1.0f / sqrtf((float)D), *want = malloc(4 * nq), *lse_want = malloc(4 * (size_t)nb * H);
    /* the reference gathers each sequence's keys into a contiguous array */
    float *kg = malloc(4 * (size_t)(max_blocks * PAGE) * D), *vg = malloc(4 * (size_t)(max_blocks * PAGE) * D);
    for (int b = 0; b < nb; b++)
        for (int h = 0; h < H; h++) {
            for (int j = 0; j < lens[b]; j++) {
                size_t row = ((size_t)table[b * max_blocks + j / PAGE] * PAGE + j % PAGE) * KH + h / group;
                memcpy(kg + (size_t)j * D, kcf + row * D, 4 * D);
                memcpy(vg + (size_t)j * D, vcf + row * D, 4 * D);
            }
            size_t bh = (size_t)b * H + h;
            ref_row(qf + bh * D, kg, vg, D, 0, lens[b], scale, want + bh * D, lse_want + bh);
        }
    int32_t slen[16];
    for (int b = 0; b < nb; b++) slen[b] = lens[b];
    size_t npart = (size_t)nb * H * num_splits;
    float *o_part = malloc(4 * npart * D), *lse_part = malloc(4 * npart), *lse = calloc((size_t)nb * H, 4);
    blkc_ctx *c = h_build(h_stdlib, "fused_attn.blk", "attn_decode_paged", defs);
    blk_arg args[] = {BLK_PTR(o_part, 4 * npart * D), BLK_PTR(lse_part, 4 * npart), BLK_PTR(q, 2 * nq),
                      BLK_PTR(kc, 2 * ncache), BLK_PTR(vc, 2 * ncache), BLK_PTR(table, 4 * (size_t)nb * max_blocks),
                      BLK_PTR(slen, 4 * (size_t)nb), BLK_INT(H), BLK_INT(max_blocks), BLK_INT(pages_per_split),
                      BLK_FLOAT(scale)};
    blkc_ctx *cc = h_build(h_stdlib, "fused_attn.blk", "attn_decode_combine", cdefs);
    blk_arg cargs[] = {BLK_PTR(out, 2 * nq), BLK_PTR(lse, 4 * (size_t)nb * H), BLK_PTR(o_part, 4 * npart * D),
                       BLK_PTR(lse_part, 4 * npart), BLK_INT(num_splits)};
    if (h_run(c, "attn_decode_paged", (unsigned)num_splits, (unsigned)(nb * H), 1, args, 11) == 0 &&
        h_run(cc, "attn_decode_combine", (unsigned)(nb * H), 1, 1, cargs, 5) == 0) {
        char name[64];
        snprintf(name, sizeof name, "attn_decode_paged group %d pages/split %d", group, pages_per_split);
        h_close_bf16(name, out, want, nq, 2e-2f, 1e-2f);
        h_close(name, lse, lse_want, (size_t)nb * H, 1e-5f, 1e-5f);
    }
    blkc_free(c);
    blkc_free(cc);
    free(perm); free(table); free(q); free(kc); free(vc); free(out); free(qf); free(kcf); free(vcf); free(want);
    free(lse_want); free(kg); free(vg); free(o_part); free(lse_part); free(lse);
}

/* attn_fwd_blocksparse: a random block list (each key block listed with
 * probability 1/2, ascending; descending when desc) with every fourth query
 * block's list empty and, when causal, query block 0 listing only the last
 * key block (right of its diagonal): rows that see no key must get out 0 and
 * lse -inf. Causal lists also hold blocks right of the diagonal; visited
 * first (desc), they leave rows without a key before their visible blocks
 * come. Outputs start as NaN, so a row the kernel does not write fails. */
static void blocksparse(int BH, int S, int bm, int bn, int causal, int group, int desc) {
    attn_defs ad;
    attn_defs_set(&ad, D, bm, bn, causal, group, 0);
    const char **defs = ad.list;
    int nqb = (int)h_cdiv(S, bm), nkb = (int)h_cdiv(S, bn);
    int32_t *kv_ptr = malloc(4 * (size_t)(nqb + 1)), *kv_idx = malloc(4 * (size_t)nqb * nkb + 4);
    kv_ptr[0] = 0;
    for (int qb = 0; qb < nqb; qb++) {
        int n = kv_ptr[qb];
        for (int kk = 0; kk < nkb; kk++) {
            int kb = desc ? nkb - 1 - kk : kk, on = h_u32() % 2;
            if (qb % 4 == 1) on = 0;
            if (causal && qb == 0) on = kb == nkb - 1 && kb * bn >= bm;
            if (on) kv_idx[n++] = kb;
        }
        kv_ptr[qb + 1] = n;
    }
    size_t n = (size_t)BH * S * D, nkv = (size_t)(BH / group) * S * D, nr = (size_t)BH * S;
    uint16_t *q = rand_bf16(n), *k = rand_bf16(nkv), *v = rand_bf16(nkv), *out = malloc(2 * n);
    float *qf = bf16_floats(q, n), *kf = bf16_floats(k, nkv), *vf = bf16_floats(v, nkv);
    float scale = 0.5f, *want = malloc(4 * n), *lse = malloc(4 * nr), *lse_want = malloc(4 * nr);
    for (size_t i = 0; i < n; i++) out[i] = 0x7fc0;
    for (size_t i = 0; i < nr; i++) lse[i] = NAN;
    unsigned char *vis = malloc((size_t)S);
    for (int i = 0; i < S; i++) {
        memset(vis, 0, (size_t)S);
        int qb = i / bm;
        for (int e = kv_ptr[qb]; e < kv_ptr[qb + 1]; e++)
            for (int j = kv_idx[e] * bn; j < kv_idx[e] * bn + bn && j < S; j++) vis[j] = !causal || j <= i;
        for (int bh = 0; bh < BH; bh++) {
            size_t kb = (size_t)(bh / group) * S * D, qo = ((size_t)bh * S + i) * D;
            ref_row_vis(D, qf + qo, kf + kb, vf + kb, D, 0, S, vis, scale, want + qo, lse_want + (size_t)bh * S + i);
        }
    }
    blkc_ctx *c = h_build(h_stdlib, "fused_attn.blk", "attn_fwd_blocksparse", defs);
    blk_arg args[] = {BLK_PTR(out, 2 * n), BLK_PTR(q, 2 * n), BLK_PTR(k, 2 * nkv), BLK_PTR(v, 2 * nkv),
                      BLK_PTR(lse, 4 * nr), BLK_PTR(kv_ptr, 4 * (size_t)(nqb + 1)),
                      BLK_PTR(kv_idx, 4 * (size_t)nqb * nkb + 4), BLK_INT(S), BLK_FLOAT(scale)};
    if (h_run(c, "attn_fwd_blocksparse", (unsigned)nqb, (unsigned)BH, 1, args, 9) == 0) {
        char name[80];
        snprintf(name, sizeof name, "attn_fwd_blocksparse%s seq %d BM %d BN %d group %d%s", causal ? " causal" : "",
                 S, bm, bn, group, desc ? " descending" : "");
        h_close_bf16(name, out, want, n, 2e-2f, 1e-2f);
        h_close(name, lse, lse_want, nr, 1e-5f, 1e-5f);
        /* the rows without a key: exactly 0 (h_close's atol would let 0.01 pass) */
        size_t empty = 0, bad = 0;
        for (size_t r = 0; r < nr; r++)
            if (lse_want[r] == -INFINITY)
                for (int d = 0; d < D; d++, empty++) bad += out[r * D + d] != 0 && out[r * D + d] != 0x8000;
        if (bad || !empty) {
            failures++;
            fprintf(stderr, "FAIL: %s: %zu of %zu outputs of rows without a key are not 0\n", name, bad, empty);
        }
    }
    blkc_free(c);
    free(kv_ptr); free(kv_idx); free(q); free(k); free(v); free(out); free(qf); free(kf); free(vf); free(want);
    free(lse); free(lse_want); free(vis);
}

/* x (n rows of hd) rotated by RoPE at position row % S, rounded to bf16 as
 * rope_qk stores it: the halves x[:hd/2], x[hd/2:] with cos/sin tables [P, hd/2] */
static float *rope_ref(int hd, const float *x, size_t n, int S, const float *cs, const float *sn) {
    float *r = malloc(4 * n * hd);
    for (size_t t = 0; t < n; t++) {
        const float *c = cs + (t % (size_t)S) * (hd / 2), *s = sn + (t % (size_t)S) * (hd / 2), *xt = x + t * hd;
        for (int i = 0; i < hd / 2; i++) {
            float a = xt[i] * c[i], b = xt[i + hd / 2] * s[i], e = xt[i + hd / 2] * c[i], f = xt[i] * s[i];
            r[t * hd + i] = h_round_bf16(a - b);
            r[t * hd + i + hd / 2] = h_round_bf16(e + f);
        }
    }
    return r;
}

/* attn_fwd_rope against rope (in C, rounded to bf16) then attention; the
 * tables have more positions than the sequence (row stride hd/2, not seq) */
static void rope_attn(int hd, int BH, int S, int bm, int bn, int causal, int group) {
    attn_defs ad;
    attn_defs_set(&ad, hd, bm, bn, causal, group, 0);
    const char **defs = ad.list;
    int P = S + 5;
    float *cs = malloc(4 * (size_t)P * (hd / 2)), *sn = malloc(4 * (size_t)P * (hd / 2));
    for (int p = 0; p < P; p++)
        for (int i = 0; i < hd / 2; i++) {
            double ang = p * pow(10000.0, -2.0 * i / hd);
            cs[p * (hd / 2) + i] = (float)cos(ang);
            sn[p * (hd / 2) + i] = (float)sin(ang);
        }
    size_t n = (size_t)BH * S * hd, nkv = (size_t)(BH / group) * S * hd, nr = (size_t)BH * S;
    uint16_t *q = rand_bf16(n), *k = rand_bf16(nkv), *v = rand_bf16(nkv), *out = malloc(2 * n);
    float *qf = bf16_floats(q, n), *kf = bf16_floats(k, nkv), *vf = bf16_floats(v, nkv);
    float *qr = rope_ref(hd, qf, n / hd, S, cs, sn), *kr = rope_ref(hd, kf, nkv / hd, S, cs, sn);
    float scale = 0.5f, *want = malloc(4 * n), *lse = malloc(4 * nr), *lse_want = malloc(4 * nr);
    for (size_t i = 0; i < n; i++) out[i] = 0x7fc0;
    ref_heads(hd, qr, kr, vf, BH, S, group, causal, 0, scale, want, lse_want);
    blkc_ctx *c = h_build(h_stdlib, "fused_attn.blk", "attn_fwd_rope", defs);
    blk_arg args[] = {BLK_PTR(out, 2 * n), BLK_PTR(q, 2 * n), BLK_PTR(k, 2 * nkv), BLK_PTR(v, 2 * nkv),
                      BLK_PTR(lse, 4 * nr), BLK_PTR(cs, 4 * (size_t)P * (hd / 2)),
                      BLK_PTR(sn, 4 * (size_t)P * (hd / 2)), BLK_INT(S), BLK_FLOAT(scale)};
    if (h_run(c, "attn_fwd_rope", h_cdiv(S, bm), (unsigned)BH, 1, args, 9) == 0) {
        char name[80];
        snprintf(name, sizeof name, "attn_fwd_rope D %d%s seq %d BM %d BN %d group %d", hd,
                 causal ? " causal" : "", S, bm, bn, group);
        h_close_bf16(name, out, want, n, 2e-2f, 1e-2f);
        h_close(name, lse, lse_want, nr, 1e-5f, 1e-5f);
    }
    blkc_free(c);
    free(cs); free(sn); free(q); free(k); free(v); free(out); free(qf); free(kf); free(vf); free(qr); free(kr);
    free(want); free(lse); free(lse_want);
}

/* attn_fwd_persistent on `progs` programs (fewer than the tiles: each
 * program takes several, from several heads; more: some take none) against
 * the reference; out and lse start as NaN, so a tile no program wrote
 * fails */
static void persistent(int BH, int S, int bm, int bn, int causal, int group, int win, unsigned progs) {
    attn_defs ad;
    attn_defs_set(&ad, D, bm, bn, causal, group, win);
    const char **defs = ad.list;
    size_t n = (size_t)BH * S * D, nkv = (size_t)(BH / group) * S * D, nr = (size_t)BH * S;
    uint16_t *q = rand_bf16(n), *k = rand_bf16(nkv), *v = rand_bf16(nkv), *out = malloc(2 * n);
    float *qf = bf16_floats(q, n), *kf = bf16_floats(k, nkv), *vf = bf16_floats(v, nkv);
    float scale = 0.3f, *want = malloc(4 * n), *lse = malloc(4 * nr), *lse_want = malloc(4 * nr);
    for (size_t i = 0; i < n; i++) out[i] = 0x7fc0;
    for (size_t i = 0; i < nr; i++) lse[i] = NAN;
    ref_heads(D, qf, kf, vf, BH, S, group, causal, win, scale, want, lse_want);
    blkc_ctx *c = h_build(h_stdlib, "fused_attn.blk", "attn_fwd_persistent", defs);
    blk_arg args[] = {BLK_PTR(out, 2 * n), BLK_PTR(q, 2 * n), BLK_PTR(k, 2 * nkv), BLK_PTR(v, 2 * nkv),
                      BLK_PTR(lse, 4 * nr), BLK_INT(S), BLK_INT(BH), BLK_FLOAT(scale)};
    if (h_run(c, "attn_fwd_persistent", progs, 1, 1, args, 8) == 0) {
        char name[96];
        snprintf(name, sizeof name, "attn_fwd_persistent%s seq %d BM %d BN %d group %d window %d programs %u",
                 causal ? " causal" : "", S, bm, bn, group, win, progs);
        h_close_bf16(name, out, want, n, 2e-2f, 1e-2f);
        h_close(name, lse, lse_want, nr, 1e-5f, 1e-5f);
    }
    blkc_free(c);
    free(q); free(k); free(v); free(out); free(qf); free(kf); free(vf); free(want); free(lse); free(lse_want);
}

int main(int argc, char **argv) {
    h_init(argc, argv);
    h_seed(1234);
    window(2, 45, 5, 1);   /* window smaller than a block */
    window(2, 45, 16, 1);  /* exactly a block */
    window(4, 50, 21, 2);  /* grouped-query, window across block edges */
    window(1, 30, 100, 1); /* window longer than the sequence: plain causal */
    window(1, 1, 3, 1);
    {
        int lens[] = {37, 0, 16, 1, 70};
        varlen(5, lens, 2, 1, 0, 0);
        varlen(5, lens, 4, 2, 1, 0);
        varlen(5, lens, 2, 1, 1, 7);
    }
    {
        int lens[] = {0, 0};
        varlen(2, lens, 2, 1, 1, 0); /* no tokens at all: nothing runs past the grid's first row */
    }
    backward(2, 45, 0, 1);
    backward(2, 45, 1, 1);
    backward(4, 33, 1, 2); /* grouped-query: dK, dV summed over the group */
    backward(2, 16, 0, 2);
    {
        int lens[] = {0, 5, 37, 64};
        decode(4, lens, 4, 2, 1);
        decode(4, lens, 2, 1, 3); /* several pages per split, splits with no key */
        int one[] = {100};
        decode(1, one, 8, 8, 2); /* multi-query */
    }
    blocksparse(2, 70, 16, 16, 0, 1, 0);
    blocksparse(2, 70, 16, 16, 1, 1, 0);
    blocksparse(4, 75, 16, 32, 1, 2, 0); /* BM != BN: the diagonal block hides its second half from early rows */
    blocksparse(1, 50, 32, 16, 0, 1, 0);
    blocksparse(2, 70, 16, 16, 1, 1, 1);
    rope_attn(32, 2, 45, 16, 16, 0, 1); /* D % 128 != 0: the halves joined into one dot */
    rope_attn(32, 2, 45, 16, 16, 1, 1);
    rope_attn(32, 4, 50, 32, 16, 1, 2); /* grouped-query */
    rope_attn(32, 1, 1, 16, 16, 0, 1);
    rope_attn(128, 2, 45, 16, 16, 0, 1); /* D = 128: two dots over the halves */
    rope_attn(128, 4, 40, 32, 16, 1, 2);
    persistent(3, 45, 16, 16, 0, 1, 0, 4);  /* 9 tiles on 4 programs, across heads */
    persistent(4, 50, 16, 32, 1, 1, 0, 3);  /* causal: odd heads take their query blocks last to first */
    persistent(4, 33, 32, 16, 1, 2, 0, 5);  /* grouped-query */
    persistent(2, 20, 16, 16, 1, 1, 0, 9);  /* more programs than tiles */
    persistent(1, 1, 16, 16, 0, 1, 0, 1);
    persistent(4, 70, 16, 16, 1, 1, 5, 3);  /* window smaller than a block: the key loop starts late */
    persistent(4, 70, 16, 32, 1, 2, 21, 5); /* across block edges, reversed heads, grouped-query */
    persistent(2, 30, 16, 16, 1, 1, 100, 2); /* longer than the sequence: plain causal */
    return test_finish("attn_family");
}

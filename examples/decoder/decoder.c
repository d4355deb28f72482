/* decoder.c — one Llama-style decoder block launched from C through libblkrt
 * (docs/tutorials/10-decoder-block.md):
 *
 *   h   = x + attn(rope(rmsnorm(x) · Wqkv)) · Wo
 *   out = h + silu(rmsnorm(h) · W1) · W2          (plain MLP, SiLU fused)
 *
 * eight launches of six stdlib kernels: rmsnorm, qkv_proj (one GEMM for q, k
 * and v, RoPE on q and k, written in attention's [B·H, S, D] layout),
 * attn_fwd (causal; GROUP for grouped-query), bhsd_to_bshd (attention's
 * output back to [tokens, H·D] for the projection), matmul_epilogue with the
 * residual added (Wo and W2) and with SiLU (W1). The MLP is not the gated
 * SwiGLU: silu(x·W1)·(x·W3) needs a product of two GEMMs' outputs, which
 * matmul_epilogue does not take, so it would cost a third GEMM launch and an
 * elementwise pass.
 *
 * The program launches the chain once, checks it against the C reference
 * below, captures it into a graph (CUDA graph on a GPU, a recorded list on
 * the CPU device), replays it and checks that the replay writes the same
 * bytes, then times eager launches and replays (median of --reps).
 *
 *   decoder --cpu [SHAPE]                  the CPU interpreter (make test)
 *   decoder --gpu N [--ptx DIR] [SHAPE] [--reps R] [--dump DIR]
 *
 * SHAPE: --batch B --seq S --hidden E --heads H --kv-heads KV --head-dim D
 * --mlp F (defaults: --cpu B1 S80 E128 H2 D64 F256; --gpu B1 S2048 E4096
 * H32 D128 F11008, Llama-2-7B's block). --ptx DIR loads the PTX that the
 * build compiles with blkc (build/examples/decoder_ptx: D 128, GROUP 1,
 * sm_90a); without it the kernels are compiled from the stdlib source by the
 * runtime (a build with the compiler: the `decoder` target). --check full
 * checks each step on every token and runs the C reference of the whole
 * block (the default on the CPU), rows checks each step on 32 tokens (the
 * default on a GPU, where the full reference would take minutes of CPU
 * time), none checks nothing (the
 * fake driver of the tests runs no code). --perturb is the checks' self-test:
 * one value of each output is made wrong after the launch, and the program
 * succeeds only if every check then fails. --dump DIR writes inputs, weights,
 * output and times for check_torch.py.
 */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* TUT_CHECK (a call that must succeed) and tut_uniform (seeded random floats) */
#include "../tutorials/tutorial.h"

#ifndef BLK_STDLIB_DIR
#define BLK_STDLIB_DIR "stdlib"
#endif

static void die(const char *msg, const char *what) {
    fprintf(stderr, "decoder: %s%s\n", msg, what ? what : "");
    exit(2);
}

typedef struct {
    int batch, seq, hidden, heads, kv_heads, head_dim, mlp;
    float eps, theta;
} shape;

static int tokens(const shape *sh) { return sh->batch * sh->seq; }
static int qkv_cols(const shape *sh) { return (sh->heads + 2 * sh->kv_heads) * sh->head_dim; }
static int cdiv(int a, int b) { return (a + b - 1) / b; }

/* ---- bf16: the storage type of every tensor but the RoPE tables ---- */

static uint16_t bf16_bits(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    if ((u & 0x7fffffff) > 0x7f800000) return (uint16_t)((u >> 16) | 0x40); /* NaN stays NaN */
    return (uint16_t)((u + 0x7fff + ((u >> 16) & 1)) >> 16);                 /* nearest even */
}

static float bf16_value(uint16_t h) {
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static float bf16r(double v) { return bf16_value(bf16_bits((float)v)); }

/* ---- the buffers: inputs and weights, then what each step writes ---- */

enum { B_X, B_WN1, B_WQKV, B_COS, B_SIN, B_WO, B_WN2, B_W1, B_W2, /* inputs */
       B_XN, B_Q, B_K, B_V, B_OHEADS, B_O, B_H, B_HN, B_U, B_OUT, NBUF };
#define FIRST_OUT B_XN
static const char *buf_name[NBUF] = {"x",  "wn1", "wqkv", "cos", "sin", "wo",      "wn2", "w1", "w2", "xn",
                                     "q",  "k",   "v",    "o_heads", "o", "h",     "hn",  "u",  "out"};

static size_t buf_elems(const shape *sh, int b) {
    size_t t = (size_t)tokens(sh), e = (size_t)sh->hidden, d = (size_t)sh->head_dim, hd = (size_t)sh->heads * d,
           kvd = (size_t)sh->kv_heads * d, f = (size_t)sh->mlp;
    switch (b) {
    case B_X: case B_XN: case B_H: case B_HN: case B_OUT: return t * e;
    case B_WN1: case B_WN2: return e;
    case B_WQKV: return e * (size_t)qkv_cols(sh);
    case B_COS: case B_SIN: return (size_t)sh->seq * d / 2;
    case B_WO: return hd * e;
    case B_W1: return e * f;
    case B_W2: return f * e;
    case B_Q: case B_OHEADS: case B_O: return t * hd;
    case B_K: case B_V: return t * kvd;
    case B_U: return t * f;
    }
    return 0;
}

static size_t buf_bytes(const shape *sh, int b) { return buf_elems(sh, b) * (b == B_COS || b == B_SIN ? 4 : 2); }

/* ---- the C reference, row by row (double sums, bf16 where a kernel stores) ---- */

/* y = bf16(x · rsqrt(mean(x²) + eps) · w), as norm.blk's rmsnorm (f32 math) */
static void ref_rmsnorm(float *y, const float *x, const float *w, int n, float eps) {
    double ss = 0;
    for (int i = 0; i < n; i++) ss += (double)x[i] * x[i];
    float r = 1.0f / sqrtf((float)(ss / n) + eps);
    for (int i = 0; i < n; i++) y[i] = bf16r(x[i] * r * w[i]);
}

/* y[N] = a[K] · W[K, N], unrounded */
static void ref_matvec(double *y, const float *a, const float *w, int k, int n) {
    for (int j = 0; j < n; j++) y[j] = 0;
    for (int i = 0; i < k; i++) {
        double ai = a[i];
        const float *wr = w + (size_t)i * n;
        for (int j = 0; j < n; j++) y[j] += ai * wr[j];
    }
}

/* y = bf16(act(a · W) + res) (res may be NULL), as matmul_epilogue */
static void ref_linear(float *y, const float *a, const float *w, int k, int n, bool silu, const float *res,
                       double *tmp) {
    ref_matvec(tmp, a, w, k, n);
    for (int j = 0; j < n; j++) {
        double v = silu ? tmp[j] / (1 + exp(-tmp[j])) : tmp[j];
        y[j] = bf16r(v + (res ? res[j] : 0));
    }
}

/* Where qkv_proj writes output head j of token t: buffer B_Q, B_K or B_V and
 * the offset of its D values ([B·nh, S, D]). */
static size_t qkv_dst(const shape *sh, int t, int j, int *buf) {
    int b = t / sh->seq, s = t % sh->seq, head = j, nh = sh->heads;
    *buf = B_Q;
    if (j >= sh->heads + sh->kv_heads) *buf = B_V, head = j - sh->heads - sh->kv_heads, nh = sh->kv_heads;
    else if (j >= sh->heads) *buf = B_K, head = j - sh->heads, nh = sh->kv_heads;
    return (((size_t)b * nh + head) * sh->seq + s) * sh->head_dim;
}

/* Token t's q, k, v heads: xn · Wqkv, q and k rotated by position t % seq
 * ("rotate half" with the f32 tables), rounded once: into row[(H+2KV)·D]. */
static void ref_qkv(float *row, const float *xn, const float *wqkv, const float *cos_t, const float *sin_t,
                    const shape *sh, int t, double *tmp) {
    int d = sh->head_dim, half = d / 2, s = t % sh->seq;
    ref_matvec(tmp, xn, wqkv, sh->hidden, qkv_cols(sh));
    for (int j = 0; j < sh->heads + 2 * sh->kv_heads; j++) {
        double *y = tmp + (size_t)j * d;
        for (int i = 0; i < half; i++) {
            double x1 = y[i], x2 = y[i + half];
            if (j < sh->heads + sh->kv_heads) {
                float c = cos_t[(size_t)s * half + i], sn = sin_t[(size_t)s * half + i];
                /* f32 products as the kernel's rotate_half, summed in double */
                row[j * d + i] = bf16r((float)x1 * c - (double)((float)x2 * sn));
                row[j * d + i + half] = bf16r((float)x2 * c + (double)((float)x1 * sn));
            } else {
                row[j * d + i] = bf16r(x1);
                row[j * d + i + half] = bf16r(x2);
            }
        }
    }
}

/* Token t's attention output, every head, in [tokens, H·D] order (what
 * bhsd_to_bshd leaves): causal softmax(q·kᵀ/√D)·v over keys 0..s of the
 * token's sequence, K/V head h / (H/KV). */
static void ref_attn(float *orow, const float *q, const float *k, const float *v, const shape *sh, int t,
                     double *p) {
    int d = sh->head_dim, b = t / sh->seq, s = t % sh->seq, group = sh->heads / sh->kv_heads;
    double scale = 1.0 / sqrt((double)d);
    for (int h = 0; h < sh->heads; h++) {
        const float *qr = q + (((size_t)b * sh->heads + h) * sh->seq + s) * d;
        size_t kv = ((size_t)b * sh->kv_heads + h / group) * sh->seq * d;
        double m = -INFINITY, l = 0;
        for (int j = 0; j <= s; j++) {
            double dot = 0;
            for (int i = 0; i < d; i++) dot += (double)qr[i] * k[kv + (size_t)j * d + i];
            p[j] = dot * scale;
            m = fmax(m, p[j]);
        }
        for (int j = 0; j <= s; j++) l += (p[j] = exp(p[j] - m));
        for (int i = 0; i < d; i++) {
            double acc = 0;
            for (int j = 0; j <= s; j++) acc += p[j] * v[kv + (size_t)j * d + i];
            orow[h * d + i] = bf16r(acc / l);
        }
    }
}

/* doubles of scratch the reference needs: the widest row, or a row of scores */
static size_t scratch_len(const shape *sh) {
    int n = qkv_cols(sh);
    if (sh->mlp > n) n = sh->mlp;
    if (sh->hidden > n) n = sh->hidden;
    if (sh->seq > n) n = sh->seq;
    return (size_t)n;
}

/* ---- comparing ---- */

typedef struct {
    const char *what;
    double atol, rtol;
    double worst, err, got, want; /* worst = max |got - want| / (atol + rtol |want|): <= 1 passes */
    double max_err, max_want;     /* max |got - want| / max |want|: the relative error printed */
    size_t at, n;
} tally;

static void stat_add(tally *st, const float *got, const float *want, size_t n, size_t base) {
    for (size_t i = 0; i < n; i++) {
        double e = fabs((double)got[i] - want[i]);
        double r = e == 0 ? 0 : e / (st->atol + st->rtol * fabs(want[i]));
        st->max_err = fmax(st->max_err, isnan(e) ? INFINITY : e);
        st->max_want = fmax(st->max_want, fabs(want[i]));
        if (!(r <= st->worst)) { /* NaN (a poisoned, unwritten element) counts as the worst */
            st->worst = isnan(r) ? INFINITY : r;
            st->err = e, st->got = got[i], st->want = want[i], st->at = base + i;
        }
    }
    st->n += n;
}

static int stat_report(const tally *st) {
    bool ok = st->worst <= 1;
    if (st->worst == 0) { /* every value as the reference's */
        printf("  %-26s %8zu values  exact ok\n", st->what, st->n);
        return 0;
    }
    printf("  %-26s %8zu values  rel %.2g  worst %.3g (at %zu: got %.6g, want %.6g) %s\n", st->what, st->n,
           st->max_want > 0 ? st->max_err / st->max_want : st->max_err, st->err, st->at, st->got, st->want,
           ok ? "ok" : "FAIL");
    return !ok;
}

/* ---- the kernels ---- */

enum { K_RMSNORM, K_QKV, K_ATTN, K_HEADS, K_LINEAR_RES, K_LINEAR_SILU, NKERN };
static const char *k_file[NKERN] = {"norm.blk", "matmul.blk", "fused_attn.blk", "layout.blk", "matmul.blk",
                                    "matmul.blk"};
static const char *k_name[NKERN] = {"rmsnorm", "qkv_proj", "attn_fwd", "bhsd_to_bshd", "matmul_epilogue",
                                    "matmul_epilogue"};
/* PTX file stems under --ptx DIR (examples/CMakeLists.txt writes them) */
static const char *k_ptx[NKERN] = {"rmsnorm", "qkv_proj", "attn_fwd", "bhsd_to_bshd", "linear_res", "linear_silu"};

static int pow2_at_least(int n) {
    int p = 16;
    while (p < n) p *= 2;
    return p;
}

/* The const values of kernel k for a compile from source. The GPU's are the
 * ones examples/CMakeLists.txt gives blkc for the PTX; the CPU's are small
 * tiles, so that the test's shape spans several ragged tiles of every kernel. */
static int k_defines(int k, const shape *sh, bool gpu, blkrt_define *o) {
    int n = 0;
#define DEF(N, V) (o[n++] = (blkrt_define){.name = (N), .ival = (V)})
#define DEFS(T) (o[n++] = (blkrt_define){.name = (T)})
    switch (k) {
    case K_RMSNORM:
        DEF("BLOCK", pow2_at_least(sh->hidden));
        if (gpu) DEF("num_warps", 4);
        break;
    case K_QKV:
        DEF("D", sh->head_dim), DEF("ROPE", 1);
        if (!gpu) DEF("BM", 32), DEF("BK", 32), DEF("num_warps", 4);
        break;
    case K_ATTN:
        DEF("D", sh->head_dim), DEF("CAUSAL", 1), DEF("GROUP", sh->heads / sh->kv_heads);
        if (gpu) DEF("BM", 128), DEF("BN", 64), DEF("num_warps", 8);
        else DEF("BM", 32), DEF("BN", 32);
        break;
    case K_HEADS: DEF("D", sh->head_dim); break;
    case K_LINEAR_RES:
    case K_LINEAR_SILU:
        if (k == K_LINEAR_RES) DEF("RESIDUAL", 1);
        else DEFS("ACT=silu"); /* a string const: the -D text form (blkrt.h) */
        if (!gpu) DEF("BM", 32), DEF("BN", 64), DEF("BK", 32), DEF("num_warps", 4);
        break;
    }
#undef DEF
#undef DEFS
    return n;
}

static char *read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) die("cannot open ", path);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *text = malloc((size_t)n + 1);
    if (!text || fread(text, 1, (size_t)n, f) != (size_t)n) die("cannot read ", path);
    fclose(f);
    text[n] = 0;
    *len = (size_t)n;
    return text;
}

static int64_t const_int(blkrt_kernel *k, const char *name) {
    int64_t v;
    TUT_CHECK(blkrt_kernel_const_int(k, name, &v));
    return v;
}

typedef struct {
    shape sh;
    blkrt_device *dev;
    blkrt_module *mod[NKERN];
    blkrt_kernel *k[NKERN];
    blkrt_ptr p[NBUF];
    int qkv_bm, attn_bm, heads_bs, res_bm, res_bn, silu_bm, silu_bn; /* tiles, for the grids */
} block;

/* Kernel k from the stdlib source (compiled by the runtime) or from
 * ptx_dir/<stem>.ptx. PTX carries its consts: those the shape depends on are
 * checked here, since a launch cannot tell a wrong head dim from a right one. */
static void load_kernel(block *bl, int k, const char *ptx_dir, const char *stdlib_dir) {
    char path[1024];
    size_t len;
    if (ptx_dir) {
        snprintf(path, sizeof path, "%s/%s.ptx", ptx_dir, k_ptx[k]);
        char *ptx = read_file(path, &len);
        TUT_CHECK(blkrt_module_load_ptx(bl->dev, ptx, len, &bl->mod[k]));
        free(ptx);
    } else {
        blkrt_device_info info;
        TUT_CHECK(blkrt_device_get_info(bl->dev, &info));
        snprintf(path, sizeof path, "%s/%s", stdlib_dir, k_file[k]);
        char *src = read_file(path, &len);
        blkrt_define defs[8];
        int n = k_defines(k, &bl->sh, info.kind == BLKRT_KIND_GPU, defs);
        blkrt_source_options o = {.path = path, .defines = defs, .ndefines = n, .kernel = k_name[k]};
        TUT_CHECK(blkrt_module_load_source(bl->dev, src, len, &o, &bl->mod[k]));
        free(src);
    }
    TUT_CHECK(blkrt_module_kernel(bl->mod[k], k_name[k], &bl->k[k]));
    const shape *sh = &bl->sh;
    bool bad = false;
    if (k == K_RMSNORM) bad = const_int(bl->k[k], "BLOCK") < sh->hidden; /* the looped path would do; slower */
    if (k == K_QKV || k == K_ATTN || k == K_HEADS) bad = const_int(bl->k[k], "D") != sh->head_dim;
    if (k == K_ATTN) bad |= const_int(bl->k[k], "GROUP") != sh->heads / sh->kv_heads || !const_int(bl->k[k], "CAUSAL");
    if (k == K_QKV) bad |= !const_int(bl->k[k], "ROPE");
    if (bad) die("the kernel's consts do not fit the shape (PTX built for another head dim, GROUP or hidden?): ", path);
}

static blkrt_status launch(block *bl, int k, uint32_t gx, uint32_t gy, uint32_t gz, const blkrt_arg *a, int n,
                           blkrt_stream *s) {
    uint32_t grid[3] = {gx, gy, gz};
    return blkrt_launch(bl->k[k], grid, a, n, s);
}

/* The block's eight launches on s. */
static blkrt_status issue(block *bl, blkrt_stream *s) {
    const shape *sh = &bl->sh;
    blkrt_ptr *p = bl->p;
    int t = tokens(sh), e = sh->hidden, hd = sh->heads * sh->head_dim, f = sh->mlp;
    blkrt_status st;
    /* 1. xn = rmsnorm(x) · wn1, one program per token */
    blkrt_arg a1[] = {BLKRT_PTR(p[B_XN]), BLKRT_PTR(p[B_X]), BLKRT_PTR(p[B_WN1]), BLKRT_INT(e), BLKRT_INT(e),
                      BLKRT_FLOAT(sh->eps)};
    if ((st = launch(bl, K_RMSNORM, (uint32_t)t, 1, 1, a1, 6, s))) return st;
    /* 2. q, k, v = rope(xn · Wqkv) in [B·heads, S, D] */
    blkrt_arg a2[] = {BLKRT_PTR(p[B_Q]),   BLKRT_PTR(p[B_K]),   BLKRT_PTR(p[B_V]),    BLKRT_PTR(p[B_XN]),
                      BLKRT_PTR(p[B_WQKV]), BLKRT_PTR(p[B_COS]), BLKRT_PTR(p[B_SIN]), BLKRT_INT(t),
                      BLKRT_INT(sh->seq),  BLKRT_INT(e),        BLKRT_INT(sh->heads), BLKRT_INT(sh->kv_heads)};
    if ((st = launch(bl, K_QKV, (uint32_t)cdiv(t, bl->qkv_bm), (uint32_t)(sh->heads + 2 * sh->kv_heads), 1, a2,
                     12, s)))
        return st;
    /* 3. causal attention per (query block, batch·head); no lse (LSE = false) */
    blkrt_arg a3[] = {BLKRT_PTR(p[B_OHEADS]), BLKRT_PTR(p[B_Q]), BLKRT_PTR(p[B_K]), BLKRT_PTR(p[B_V]),
                      BLKRT_PTR(0),           BLKRT_INT(sh->seq), BLKRT_FLOAT(1.0 / sqrt((double)sh->head_dim))};
    if ((st = launch(bl, K_ATTN, (uint32_t)cdiv(sh->seq, bl->attn_bm), (uint32_t)(sh->batch * sh->heads), 1, a3, 7,
                     s)))
        return st;
    /* 4. [B, H, S, D] -> [B, S, H, D] = [tokens, H·D], the projection's rows */
    blkrt_arg a4[] = {BLKRT_PTR(p[B_O]), BLKRT_PTR(p[B_OHEADS]), BLKRT_INT(sh->seq), BLKRT_INT(sh->heads)};
    if ((st = launch(bl, K_HEADS, (uint32_t)cdiv(sh->seq, bl->heads_bs), (uint32_t)sh->heads, (uint32_t)sh->batch,
                     a4, 4, s)))
        return st;
    /* 5. h = x + o · Wo (the residual in the GEMM's epilogue) */
    blkrt_arg a5[] = {BLKRT_PTR(p[B_O]), BLKRT_PTR(p[B_WO]), BLKRT_PTR(p[B_H]), BLKRT_PTR(0), BLKRT_PTR(p[B_X]),
                      BLKRT_INT(t),      BLKRT_INT(e),       BLKRT_INT(hd)};
    if ((st = launch(bl, K_LINEAR_RES, (uint32_t)(cdiv(t, bl->res_bm) * cdiv(e, bl->res_bn)), 1, 1, a5, 8, s)))
        return st;
    /* 6. hn = rmsnorm(h) · wn2 */
    blkrt_arg a6[] = {BLKRT_PTR(p[B_HN]), BLKRT_PTR(p[B_H]), BLKRT_PTR(p[B_WN2]), BLKRT_INT(e), BLKRT_INT(e),
                      BLKRT_FLOAT(sh->eps)};
    if ((st = launch(bl, K_RMSNORM, (uint32_t)t, 1, 1, a6, 6, s))) return st;
    /* 7. u = silu(hn · W1) (SiLU in the epilogue) */
    blkrt_arg a7[] = {BLKRT_PTR(p[B_HN]), BLKRT_PTR(p[B_W1]), BLKRT_PTR(p[B_U]), BLKRT_PTR(0), BLKRT_PTR(0),
                      BLKRT_INT(t),       BLKRT_INT(f),       BLKRT_INT(e)};
    if ((st = launch(bl, K_LINEAR_SILU, (uint32_t)(cdiv(t, bl->silu_bm) * cdiv(f, bl->silu_bn)), 1, 1, a7, 8, s)))
        return st;
    /* 8. out = h + u · W2 */
    blkrt_arg a8[] = {BLKRT_PTR(p[B_U]), BLKRT_PTR(p[B_W2]), BLKRT_PTR(p[B_OUT]), BLKRT_PTR(0), BLKRT_PTR(p[B_H]),
                      BLKRT_INT(t),      BLKRT_INT(e),       BLKRT_INT(f)};
    return launch(bl, K_LINEAR_RES, (uint32_t)(cdiv(t, bl->res_bm) * cdiv(e, bl->res_bn)), 1, 1, a8, 8, s);
}

/* ---- host data ---- */

/* Inputs with unit-scale activations: x in [-1, 1), norm weights around 1,
 * each projection uniform with variance 1/fan_in (a ±√(3/fan_in) range), so
 * every step's output stays O(1); RoPE tables for theta (Llama's 10000). */
static void make_inputs(const shape *sh, float **host) {
    uint32_t s = 12345;
    struct { int b; float lo, hi, fan_in; } fill[] = {
        {B_X, -1, 1, 0},     {B_WN1, 0.5f, 1.5f, 0}, {B_WN2, 0.5f, 1.5f, 0},
        {B_WQKV, -1, 1, (float)sh->hidden},          {B_WO, -1, 1, (float)(sh->heads * sh->head_dim)},
        {B_W1, -1, 1, (float)sh->hidden},            {B_W2, -1, 1, (float)sh->mlp}};
    for (size_t i = 0; i < sizeof fill / sizeof fill[0]; i++) {
        float r = fill[i].fan_in ? sqrtf(3.0f / fill[i].fan_in) : 1;
        float *x = host[fill[i].b];
        for (size_t j = 0; j < buf_elems(sh, fill[i].b); j++) x[j] = bf16r(r * tut_uniform(&s, fill[i].lo, fill[i].hi));
    }
    int half = sh->head_dim / 2;
    for (int p = 0; p < sh->seq; p++)
        for (int i = 0; i < half; i++) {
            double ang = p * pow((double)sh->theta, -2.0 * i / sh->head_dim);
            host[B_COS][(size_t)p * half + i] = (float)cos(ang);
            host[B_SIN][(size_t)p * half + i] = (float)sin(ang);
        }
}

static void upload(block *bl, float **host, int b) {
    size_t n = buf_elems(&bl->sh, b);
    if (b == B_COS || b == B_SIN) {
        TUT_CHECK(blkrt_memcpy_htod(bl->dev, bl->p[b], host[b], n * 4));
        return;
    }
    uint16_t *bits = malloc(n * 2);
    if (!bits) die("out of memory", NULL);
    for (size_t i = 0; i < n; i++) bits[i] = bf16_bits(host[b][i]);
    TUT_CHECK(blkrt_memcpy_htod(bl->dev, bl->p[b], bits, n * 2));
    free(bits);
}

/* The bf16 outputs (buffers FIRST_OUT..) into host floats; raw bits too when bits != NULL. */
static void download_outputs(block *bl, float **host, uint16_t **bits) {
    TUT_CHECK(blkrt_device_synchronize(bl->dev));
    for (int b = FIRST_OUT; b < NBUF; b++) {
        size_t n = buf_elems(&bl->sh, b);
        uint16_t *raw = malloc(n * 2);
        if (!raw) die("out of memory", NULL);
        TUT_CHECK(blkrt_memcpy_dtoh(bl->dev, raw, bl->p[b], n * 2));
        for (size_t i = 0; i < n; i++) host[b][i] = bf16_value(raw[i]);
        if (bits) bits[b] = raw;
        else free(raw);
    }
}

/* 0xff bytes (bf16 NaN) in every output: an element a launch does not write fails the checks */
static void poison_outputs(block *bl, blkrt_stream *s) {
    for (int b = FIRST_OUT; b < NBUF; b++)
        TUT_CHECK(blkrt_memset_async(bl->dev, bl->p[b], 0xff, buf_bytes(&bl->sh, b), s));
}

/* ---- the checks ---- */

/* Each step against the reference on its own inputs (the device's output of
 * the step before), for the tokens in rows[0..nrows): one rounding apart,
 * so the tolerances are tight; attention's P·V takes P in bf16 (attn_fwd),
 * hence its absolute term. */
static int check_steps(const shape *sh, float **dv, const int *rows, int nrows) {
    tally st[] = {{.what = "1 rmsnorm(x)", .atol = 1e-3, .rtol = 1e-2},
                  {.what = "2 qkv_proj + rope", .atol = 1e-3, .rtol = 1e-2},
                  {.what = "3-4 attention, heads back", .atol = 8e-3, .rtol = 1e-2},
                  {.what = "5 h = x + o.Wo", .atol = 2e-3, .rtol = 1e-2},
                  {.what = "6 rmsnorm(h)", .atol = 1e-3, .rtol = 1e-2},
                  {.what = "7 u = silu(hn.W1)", .atol = 2e-3, .rtol = 1e-2},
                  {.what = "8 out = h + u.W2", .atol = 2e-3, .rtol = 1e-2}};
    int e = sh->hidden, hd = sh->heads * sh->head_dim, f = sh->mlp, d = sh->head_dim, nq = qkv_cols(sh);
    float *want = malloc(scratch_len(sh) * 4);
    double *tmp = malloc(scratch_len(sh) * 8);
    if (!want || !tmp) die("out of memory", NULL);
    for (int r = 0; r < nrows; r++) {
        size_t t = (size_t)rows[r];
        ref_rmsnorm(want, dv[B_X] + t * e, dv[B_WN1], e, sh->eps);
        stat_add(&st[0], dv[B_XN] + t * e, want, (size_t)e, t * e);
        ref_qkv(want, dv[B_XN] + t * e, dv[B_WQKV], dv[B_COS], dv[B_SIN], sh, (int)t, tmp);
        for (int j = 0; j < nq / d; j++) {
            int buf;
            size_t at = qkv_dst(sh, (int)t, j, &buf);
            stat_add(&st[1], dv[buf] + at, want + (size_t)j * d, (size_t)d, at);
        }
        ref_attn(want, dv[B_Q], dv[B_K], dv[B_V], sh, (int)t, tmp);
        stat_add(&st[2], dv[B_O] + t * hd, want, (size_t)hd, t * hd);
        ref_linear(want, dv[B_O] + t * hd, dv[B_WO], hd, e, false, dv[B_X] + t * e, tmp);
        stat_add(&st[3], dv[B_H] + t * e, want, (size_t)e, t * e);
        ref_rmsnorm(want, dv[B_H] + t * e, dv[B_WN2], e, sh->eps);
        stat_add(&st[4], dv[B_HN] + t * e, want, (size_t)e, t * e);
        ref_linear(want, dv[B_HN] + t * e, dv[B_W1], e, f, true, NULL, tmp);
        stat_add(&st[5], dv[B_U] + t * f, want, (size_t)f, t * f);
        ref_linear(want, dv[B_U] + t * f, dv[B_W2], f, e, false, dv[B_H] + t * e, tmp);
        stat_add(&st[6], dv[B_OUT] + t * e, want, (size_t)e, t * e);
    }
    int fails = 0;
    printf("each step on its inputs, %d tokens:\n", nrows);
    for (size_t i = 0; i < sizeof st / sizeof st[0]; i++) fails += stat_report(&st[i]);
    free(want), free(tmp);
    return fails;
}

/* The whole block from x alone (the reference's own intermediates): h and out. */
static int check_block(const shape *sh, float **dv) {
    int t = tokens(sh), e = sh->hidden, hd = sh->heads * sh->head_dim, f = sh->mlp, d = sh->head_dim,
        nq = qkv_cols(sh);
    size_t te = (size_t)t * e;
    float *xn = malloc(te * 4), *q = malloc(buf_elems(sh, B_Q) * 4), *k = malloc(buf_elems(sh, B_K) * 4),
          *v = malloc(buf_elems(sh, B_V) * 4), *o = malloc(buf_elems(sh, B_O) * 4), *h = malloc(te * 4),
          *hn = malloc(te * 4), *u = malloc((size_t)t * f * 4), *out = malloc(te * 4), *row = malloc((size_t)nq * 4);
    double *tmp = malloc(scratch_len(sh) * 8);
    float *qkv[] = {[B_Q] = q, [B_K] = k, [B_V] = v};
    if (!xn || !q || !k || !v || !o || !h || !hn || !u || !out || !row || !tmp) die("out of memory", NULL);
    for (int i = 0; i < t; i++) {
        ref_rmsnorm(xn + (size_t)i * e, dv[B_X] + (size_t)i * e, dv[B_WN1], e, sh->eps);
        ref_qkv(row, xn + (size_t)i * e, dv[B_WQKV], dv[B_COS], dv[B_SIN], sh, i, tmp);
        for (int j = 0; j < nq / d; j++) {
            int buf;
            size_t at = qkv_dst(sh, i, j, &buf);
            memcpy(qkv[buf] + at, row + (size_t)j * d, (size_t)d * 4);
        }
    }
    for (int i = 0; i < t; i++) {
        size_t r = (size_t)i;
        ref_attn(o + r * hd, q, k, v, sh, i, tmp);
        ref_linear(h + r * e, o + r * hd, dv[B_WO], hd, e, false, dv[B_X] + r * e, tmp);
        ref_rmsnorm(hn + r * e, h + r * e, dv[B_WN2], e, sh->eps);
        ref_linear(u + r * f, hn + r * e, dv[B_W1], e, f, true, NULL, tmp);
        ref_linear(out + r * e, u + r * f, dv[B_W2], f, e, false, h + r * e, tmp);
    }
    /* Looser than a step: a bf16 rounding that goes the other way in an
     * intermediate (one ulp of h is 2^-6 for |h| in [2, 4)) reaches out
     * through the residual and the MLP, whatever out's own size. */
    tally sh_ = {.what = "h (after attention)", .atol = 3e-2, .rtol = 2e-2},
          so = {.what = "out (the block's output)", .atol = 3e-2, .rtol = 2e-2};
    stat_add(&sh_, dv[B_H], h, te, 0);
    stat_add(&so, dv[B_OUT], out, te, 0);
    printf("the whole block against the C reference from x:\n");
    int fails = stat_report(&sh_) + stat_report(&so);
    free(xn), free(q), free(k), free(v), free(o), free(h), free(hn), free(u), free(out), free(row), free(tmp);
    return fails;
}

/* ---- timing ---- */

typedef struct {
    block *bl;
    blkrt_stream *s;
    blkrt_graph *g;
} timed;

static blkrt_status run_eager(void *user) {
    timed *t = user;
    return issue(t->bl, t->s);
}

static blkrt_status run_graph(void *user) {
    timed *t = user;
    return blkrt_graph_launch(t->g, t->s);
}

/* median µs of reps runs, no L2 flush (the weights alone are larger than L2 at Llama's shape) */
static double median_us(block *bl, blkrt_stream *s, blkrt_graph *g, int reps) {
    timed t = {bl, s, g};
    blkrt_bench_options o = {.warmup = 3, .reps = reps, .flush_bytes = SIZE_MAX};
    blkrt_bench_result r;
    TUT_CHECK(blkrt_bench(bl->dev, s, g ? run_graph : run_eager, &t, &o, &r));
    return r.median_ms * 1000;
}

/* ---- --dump DIR: what check_torch.py reads ---- */

static void write_bin(const char *dir, const char *name, const void *data, size_t bytes) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s.bin", dir, name);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(data, 1, bytes, f) != bytes || fclose(f) != 0) die("cannot write ", path);
}

static void dump(const char *dir, const shape *sh, float **host, uint16_t **bits, const blkrt_device_info *info,
                 double eager_us, double graph_us, int reps, const char *check, int fails) {
    mkdir(dir, 0777);
    for (int b = 0; b < NBUF; b++) {
        if (b == B_COS || b == B_SIN) {
            write_bin(dir, buf_name[b], host[b], buf_bytes(sh, b));
        } else if (b < FIRST_OUT) {
            size_t n = buf_elems(sh, b);
            uint16_t *raw = malloc(n * 2);
            if (!raw) die("out of memory", NULL);
            for (size_t i = 0; i < n; i++) raw[i] = bf16_bits(host[b][i]);
            write_bin(dir, buf_name[b], raw, n * 2);
            free(raw);
        } else if (b == B_H || b == B_OUT) {
            write_bin(dir, buf_name[b], bits[b], buf_bytes(sh, b));
        }
    }
    char path[1024];
    snprintf(path, sizeof path, "%s/config.txt", dir);
    FILE *f = fopen(path, "w");
    if (!f) die("cannot write ", path);
    fprintf(f, "batch %d\nseq %d\nhidden %d\nheads %d\nkv_heads %d\nhead_dim %d\nmlp %d\neps %.9g\ntheta %.9g\n",
            sh->batch, sh->seq, sh->hidden, sh->heads, sh->kv_heads, sh->head_dim, sh->mlp, sh->eps, sh->theta);
    fprintf(f, "device %s\narch %s\nreps %d\nblk_eager_us %.3f\nblk_graph_us %.3f\nc_check %s\nc_check_failures %d\n",
            info->name, info->arch, reps, eager_us, graph_us, check, fails);
    fclose(f);
    printf("dumped inputs, weights, h and out to %s/\n", dir);
}

/* ---- main ---- */

static int int_arg(int argc, char **argv, int *i) {
    if (*i + 1 >= argc) die("missing value after ", argv[*i]);
    return atoi(argv[++*i]);
}

int main(int argc, char **argv) {
    bool gpu = false, perturb = false;
    int ordinal = 0, reps = -1;
    const char *ptx_dir = NULL, *dump_dir = NULL, *check = NULL, *stdlib_dir = getenv("BLK_STDLIB_DIR");
    shape sh = {0};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--cpu")) gpu = false;
        else if (!strcmp(a, "--gpu")) gpu = true, ordinal = int_arg(argc, argv, &i);
        else if (!strcmp(a, "--ptx") && i + 1 < argc) ptx_dir = argv[++i];
        else if (!strcmp(a, "--stdlib") && i + 1 < argc) stdlib_dir = argv[++i];
        else if (!strcmp(a, "--dump") && i + 1 < argc) dump_dir = argv[++i];
        else if (!strcmp(a, "--check") && i + 1 < argc) check = argv[++i];
        else if (!strcmp(a, "--perturb")) perturb = true;
        else if (!strcmp(a, "--reps")) reps = int_arg(argc, argv, &i);
        else if (!strcmp(a, "--batch")) sh.batch = int_arg(argc, argv, &i);
        else if (!strcmp(a, "--seq")) sh.seq = int_arg(argc, argv, &i);
        else if (!strcmp(a, "--hidden")) sh.hidden = int_arg(argc, argv, &i);
        else if (!strcmp(a, "--heads")) sh.heads = int_arg(argc, argv, &i);
        else if (!strcmp(a, "--kv-heads")) sh.kv_heads = int_arg(argc, argv, &i);
        else if (!strcmp(a, "--head-dim")) sh.head_dim = int_arg(argc, argv, &i);
        else if (!strcmp(a, "--mlp")) sh.mlp = int_arg(argc, argv, &i);
        else die("unknown argument (see the comment at the top of decoder.c): ", a);
    }
    /* unset sizes take the mode's default shape */
    shape def = gpu ? (shape){1, 2048, 4096, 32, 0, 128, 11008, 1e-5f, 10000.0f}
                    : (shape){1, 80, 128, 2, 0, 64, 256, 1e-5f, 10000.0f};
    int *field[] = {&sh.batch, &sh.seq, &sh.hidden, &sh.heads, &sh.head_dim, &sh.mlp};
    int *dfield[] = {&def.batch, &def.seq, &def.hidden, &def.heads, &def.head_dim, &def.mlp};
    for (int i = 0; i < 6; i++)
        if (!*field[i]) *field[i] = *dfield[i];
    if (!sh.kv_heads) sh.kv_heads = sh.heads;
    sh.eps = 1e-5f, sh.theta = 10000.0f;
    if (sh.heads % sh.kv_heads || sh.head_dim % 32 || sh.head_dim & (sh.head_dim - 1))
        die("heads must be a multiple of kv-heads, head-dim a power of two >= 32", NULL);
    if (!check) check = gpu ? "rows" : "full";
    if (reps < 0) reps = gpu ? 50 : 0;
    if (!stdlib_dir) stdlib_dir = BLK_STDLIB_DIR;
    if (!gpu && ptx_dir) die("--ptx needs --gpu", NULL);

#ifdef DECODER_JIT
    TUT_CHECK(blkrt_jit_install());
#else
    if (!ptx_dir) die("this build has no compiler: give the PTX with --ptx DIR (or use the `decoder` build)", NULL);
#endif
    block bl = {.sh = sh};
    TUT_CHECK(blkrt_device_open(gpu ? ordinal : BLKRT_DEVICE_CPU, &bl.dev));
    blkrt_device_info info;
    TUT_CHECK(blkrt_device_get_info(bl.dev, &info));
    printf("decoder block on %s (%s): B%d S%d hidden %d, %d heads (%d kv) of %d, MLP %d; kernels from %s\n",
           info.name, info.arch, sh.batch, sh.seq, sh.hidden, sh.heads, sh.kv_heads, sh.head_dim, sh.mlp,
           ptx_dir ? ptx_dir : "source");
    for (int k = 0; k < NKERN; k++) load_kernel(&bl, k, ptx_dir, stdlib_dir);
    bl.qkv_bm = (int)const_int(bl.k[K_QKV], "BM");
    bl.attn_bm = (int)const_int(bl.k[K_ATTN], "BM");
    bl.heads_bs = (int)const_int(bl.k[K_HEADS], "BS");
    bl.res_bm = (int)const_int(bl.k[K_LINEAR_RES], "BM"), bl.res_bn = (int)const_int(bl.k[K_LINEAR_RES], "BN");
    bl.silu_bm = (int)const_int(bl.k[K_LINEAR_SILU], "BM"), bl.silu_bn = (int)const_int(bl.k[K_LINEAR_SILU], "BN");

    float *host[NBUF];
    uint16_t *eager_bits[NBUF] = {0}, *graph_bits[NBUF] = {0};
    for (int b = 0; b < NBUF; b++) {
        host[b] = malloc(buf_elems(&sh, b) * 4);
        if (!host[b]) die("out of memory", NULL);
        TUT_CHECK(blkrt_malloc(bl.dev, buf_bytes(&sh, b), &bl.p[b]));
    }
    make_inputs(&sh, host);
    for (int b = 0; b < FIRST_OUT; b++) upload(&bl, host, b);

    /* 1. eagerly, once, and checked */
    blkrt_stream *s;
    TUT_CHECK(blkrt_stream_create(bl.dev, &s));
    poison_outputs(&bl, s);
    TUT_CHECK(issue(&bl, s));
    download_outputs(&bl, host, eager_bits);
    if (perturb) /* the self-test of the checks: element 0 (token 0, always checked) of every output off by 1 */
        for (int b = FIRST_OUT; b < NBUF; b++) host[b][0] += 1.0f;
    int fails = 0;
    if (!strcmp(check, "full")) {
        int t = tokens(&sh);
        int *rows = malloc((size_t)t * sizeof *rows);
        if (!rows) die("out of memory", NULL);
        for (int i = 0; i < t; i++) rows[i] = i;
        fails += check_steps(&sh, host, rows, t);
        fails += check_block(&sh, host);
        free(rows);
    } else if (!strcmp(check, "rows")) {
        /* the first and last tokens of each end of the batch, and 26 drawn at random */
        int t = tokens(&sh), rows[32] = {0, 1, sh.seq - 1, t / 2, t - 2, t - 1};
        uint32_t st = 777;
        for (int i = 6; i < 32; i++) rows[i] = (int)(tut_uniform(&st, 0, 1) * (float)t) % t;
        fails += check_steps(&sh, host, rows, 32);
    } else if (strcmp(check, "none")) {
        die("--check takes full, rows or none: ", check);
    }
    if (perturb) { /* every check of the outputs must have failed: 7 steps, and h and out with --check full */
        int want = strcmp(check, "none") ? 7 + 2 * !strcmp(check, "full") : 0;
        printf("--perturb: %d of %d checks failed: %s\n", fails, want, fails == want ? "ok" : "FAIL");
        fails = fails != want;
    }

    /* 2. captured into a graph, replayed over poisoned outputs: every byte must come back */
    blkrt_graph *g;
    TUT_CHECK(blkrt_graph_begin_capture(s));
    TUT_CHECK(issue(&bl, s));
    TUT_CHECK(blkrt_graph_end_capture(s, &g));
    poison_outputs(&bl, s);
    TUT_CHECK(blkrt_graph_launch(g, s));
    TUT_CHECK(blkrt_stream_synchronize(s));
    download_outputs(&bl, host, graph_bits);
    if (strcmp(check, "none")) {
        size_t differ = 0;
        for (int b = FIRST_OUT; b < NBUF; b++)
            differ += memcmp(eager_bits[b], graph_bits[b], buf_bytes(&sh, b)) != 0;
        printf("graph replay writes what the eager launches wrote (%d buffers): %s\n", NBUF - FIRST_OUT,
               differ ? "FAIL" : "ok");
        fails += differ != 0;
    }

    /* 3. times: eight launches from the host against one graph launch */
    double eager_us = 0, graph_us = 0;
    if (reps > 0) {
        eager_us = median_us(&bl, s, NULL, reps);
        graph_us = median_us(&bl, s, g, reps);
        printf("median of %d: eager launches %.1f us, graph replay %.1f us\n", reps, eager_us, graph_us);
    }
    if (dump_dir) dump(dump_dir, &sh, host, eager_bits, &info, eager_us, graph_us, reps, check, fails);

    TUT_CHECK(blkrt_graph_destroy(g));
    TUT_CHECK(blkrt_stream_destroy(s));
    for (int b = 0; b < NBUF; b++) {
        TUT_CHECK(blkrt_free(bl.dev, bl.p[b]));
        free(host[b]), free(eager_bits[b]), free(graph_bits[b]);
    }
    for (int k = 0; k < NKERN; k++) TUT_CHECK(blkrt_module_unload(bl.mod[k]));
    TUT_CHECK(blkrt_device_close(bl.dev));
    printf("%s\n", fails                   ? "FAILED"
                   : perturb               ? "--perturb: every check caught the wrong values"
                   : strcmp(check, "none") ? "all checks passed"
                                           : "ran (--check none: nothing checked)");
    return fails != 0;
}

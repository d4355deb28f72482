/* Every builtin family on the interpreter (tests/interp/builtins.blk) against
 * plain C computed here. */
#include "harness.h"

#define N 64

static blkc_ctx *build(const char *kernel) { return h_build(h_testdir, "builtins.blk", kernel, NULL); }

static void math_unary(void) {
    float x[N], out[16 * N], want[16 * N];
    for (int i = 0; i < N; i++) x[i] = h_uniform(0.05f, 3.0f);
    for (int i = 0; i < N; i++) {
        float v = x[i];
        float w[16] = {v, expf(v), exp2f(v), logf(v), log2f(v), sqrtf(v), 1.0f / sqrtf(v), sinf(v), cosf(v),
                       tanhf(v), 1.0f / (1.0f + expf(-v)), erff(v), floorf(v * 3), ceilf(v * 3), expf(v), -v};
        for (int f = 0; f < 16; f++) want[f * N + i] = w[f];
    }
    blkc_ctx *c = build("math_unary");
    blk_arg args[] = {BLK_PTR(x, sizeof x), BLK_PTR(out, sizeof out)};
    if (h_run(c, "math_unary", 1, 1, 1, args, 2) == 0) h_close("math_unary", out, want, 16 * N, 2e-6f, 1e-7f);
    blkc_free(c);
}

static void math_binary(void) {
    float x[N], y[N], out[7 * N], want[7 * N];
    for (int i = 0; i < N; i++) { x[i] = h_uniform(0.1f, 2.0f); y[i] = h_uniform(0.1f, 2.0f); }
    for (int i = 0; i < N; i++) {
        float a = x[i], b = y[i];
        float w[7] = {powf(a, b), fminf(a, b), fmaxf(a, b), fmaf(a, b, 1.5f), fminf(fmaxf(a, 0.5f), 1.5f),
                      a > b ? a - b : b * 2, a / b + a * b - b};
        for (int f = 0; f < 7; f++) want[f * N + i] = w[f];
    }
    blkc_ctx *c = build("math_binary");
    blk_arg args[] = {BLK_PTR(x, sizeof x), BLK_PTR(y, sizeof y), BLK_PTR(out, sizeof out)};
    if (h_run(c, "math_binary", 1, 1, 1, args, 3) == 0) h_close("math_binary", out, want, 7 * N, 2e-6f, 1e-7f);
    blkc_free(c);
}

static void int_ops(void) {
    int32_t x[N], y[N], out[12 * N], want[12 * N];
    for (int i = 0; i < N; i++) {
        x[i] = (int32_t)(h_u32() % 2001) - 1000;
        do y[i] = (int32_t)(h_u32() % 41) - 20; while (y[i] == 0);
    }
    x[0] = 0; x[1] = -7; y[1] = 2; x[2] = 7; y[2] = -2; x[3] = 300; /* signs of / and %, i8 wrap */
    for (int i = 0; i < N; i++) {
        int32_t a = x[i], b = y[i];
        int32_t ua = a < 0 ? -a : a, ub = b < 0 ? -b : b;
        int32_t w[12] = {a / b, a % b, a & b, a | b, a ^ b, ~a, (int32_t)((uint32_t)a << (b & 7)), a >> (b & 7),
                         (ua + ub - 1) / ub, (a < b) && a != 0, (int32_t)((float)a * 0.5f), (int32_t)(int8_t)a};
        for (int f = 0; f < 12; f++) want[f * N + i] = w[f];
    }
    blkc_ctx *c = build("int_ops");
    blk_arg args[] = {BLK_PTR(x, sizeof x), BLK_PTR(y, sizeof y), BLK_PTR(out, sizeof out)};
    if (h_run(c, "int_ops", 1, 1, 1, args, 3) == 0) h_equal_i32("int_ops", out, want, 12 * N);
    blkc_free(c);
}

static void reductions(void) {
    enum { R = 8, C = 16 };
    float x[R * C], out[6 * C], want[6 * C];
    int32_t ix[R * C], iout[4 * C], iwant[4 * C];
    for (int i = 0; i < R * C; i++) { x[i] = h_uniform(0.5f, 1.5f); ix[i] = (int32_t)h_u32(); }
    memset(want, 0, sizeof want); memset(iwant, 0, sizeof iwant);
    memcpy(out, want, sizeof out); memcpy(iout, iwant, sizeof iout);
    for (int c = 0; c < C; c++) {
        double s = 0, p = 1; float mx = -INFINITY, mn = INFINITY; int am = 0; int32_t xs = 0;
        for (int r = 0; r < R; r++) {
            float v = x[r * C + c];
            s += v; p *= v;
            if (v > mx) { mx = v; am = r; }
            mn = fminf(mn, v);
            xs ^= ix[r * C + c];
        }
        want[c] = (float)s; want[C + c] = mx; want[2 * C + c] = mn; want[3 * C + c] = (float)p;
        iwant[c] = am; iwant[2 * C + c] = xs;
    }
    for (int r = 0; r < R; r++) {
        double s = 0; float mn = INFINITY; int ai = 0; uint32_t is = 0;
        for (int c = 0; c < C; c++) {
            float v = x[r * C + c];
            s += v;
            if (v < mn) { mn = v; ai = c; }
            is += (uint32_t)ix[r * C + c];
        }
        want[4 * C + r] = (float)s;
        iwant[C + r] = ai; iwant[3 * C + r] = (int32_t)is;
    }
    /* out + 5*C + r + 0*c: every column writes the same address with the same value */
    for (int r = 0; r < R; r++) want[5 * C + r] = want[4 * C + r];
    for (int k = 5 * C + R; k < 6 * C; k++) want[k] = 0;
    blkc_ctx *c = build("reductions");
    blk_arg args[] = {BLK_PTR(x, sizeof x), BLK_PTR(ix, sizeof ix), BLK_PTR(out, sizeof out), BLK_PTR(iout, sizeof iout)};
    if (h_run(c, "reductions", 1, 1, 1, args, 4) == 0) {
        h_close("reductions", out, want, 6 * C, 1e-5f, 1e-6f);
        h_equal_i32("int reductions", iout, iwant, 4 * C);
    }
    blkc_free(c);
}

static void scans(void) {
    float x[N], out[5 * N], want[5 * N];
    for (int i = 0; i < N; i++) x[i] = h_uniform(0.9f, 1.1f);
    memset(want, 0, sizeof want);
    memset(out, 0, sizeof out);
    double s = 0, p = 1; float m = -INFINITY;
    for (int i = 0; i < N; i++) {
        s += x[i]; p *= x[i]; m = fmaxf(m, x[i]);
        want[i] = (float)s; want[N + i] = (float)p; want[2 * N + i] = m;
    }
    double r = 0;
    for (int i = N - 1; i >= 0; i--) { r += x[i]; want[3 * N + i] = (float)r; }
    want[4 * N] = (float)s;
    want[4 * N + 1] = m;
    blkc_ctx *c = build("scans");
    blk_arg args[] = {BLK_PTR(x, sizeof x), BLK_PTR(out, sizeof out)};
    if (h_run(c, "scans", 1, 1, 1, args, 2) == 0) h_close("scans", out, want, 5 * N, 1e-5f, 1e-6f);
    blkc_free(c);
}

static int cmp_f(const void *a, const void *b) {
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

static void selection(void) {
    float x[N], out[3 * N], want[3 * N];
    int32_t idx[8], widx[8];
    for (int i = 0; i < N; i++) x[i] = (float)(h_u32() % 50); /* many ties */
    memset(out, 0, sizeof out); memset(want, 0, sizeof want);
    memcpy(want, x, sizeof x);
    qsort(want, N, sizeof(float), cmp_f);
    for (int i = 0; i < N; i++) want[N + i] = want[N - 1 - i];
    char used[N] = {0};
    for (int k = 0; k < 8; k++) {
        int best = -1;
        for (int i = 0; i < N; i++) if (!used[i] && (best < 0 || x[i] > x[best])) best = i;
        used[best] = 1;
        want[2 * N + k] = x[best];
        widx[k] = best;
    }
    blkc_ctx *c = build("selection");
    blk_arg args[] = {BLK_PTR(x, sizeof x), BLK_PTR(out, sizeof out), BLK_PTR(idx, sizeof idx)};
    if (h_run(c, "selection", 1, 1, 1, args, 3) == 0) {
        h_close("sort/topk", out, want, 3 * N, 0, 0);
        h_equal_i32("topk indices", idx, widx, 8);
    }
    blkc_free(c);
}

static void dots(void) {
    float a[16 * 32], b[32 * 16], cc[16 * 16], want[16 * 16];
    int8_t ia[16 * 32], ib[32 * 16];
    int32_t ic[16 * 16], iwant[16 * 16];
    for (int i = 0; i < 16 * 32; i++) {
        a[i] = h_uniform(-1, 1); b[i] = h_uniform(-1, 1);
        ia[i] = (int8_t)(h_u32() & 0xff); ib[i] = (int8_t)(h_u32() & 0xff);
    }
    for (int i = 0; i < 16; i++)
        for (int j = 0; j < 16; j++) {
            float s = 0; int32_t is = 0;
            for (int k = 0; k < 32; k++) { s = fmaf(a[i * 32 + k], b[k * 16 + j], s); is += ia[i * 32 + k] * ib[k * 16 + j]; }
            want[i * 16 + j] = s; iwant[i * 16 + j] = is;
        }
    blkc_ctx *c = build("dots");
    blk_arg args[] = {BLK_PTR(a, sizeof a), BLK_PTR(b, sizeof b), BLK_PTR(cc, sizeof cc),
                      BLK_PTR(ia, sizeof ia), BLK_PTR(ib, sizeof ib), BLK_PTR(ic, sizeof ic)};
    if (h_run(c, "dots", 1, 1, 1, args, 6) == 0) {
        h_close("dot f32", cc, want, 256, 1e-5f, 1e-5f);
        h_equal_i32("dot i8", ic, iwant, 256);
    }
    blkc_free(c);
}

static void shapes(void) {
    float x[32], out[184], want[184];
    for (int i = 0; i < 32; i++) x[i] = (float)i;
    for (int r = 0; r < 4; r++)
        for (int c = 0; c < 8; c++) {
            want[c * 4 + r] = x[r * 8 + c];             /* trans */
            want[64 + r * 8 + c] = x[c];                 /* broadcast_to */
            want[96 + r * 8 + c] = x[c];                 /* expand_dims */
        }
    for (int i = 0; i < 32; i++) want[32 + i] = x[i]; /* reshape keeps row-major order */
    for (int c = 0; c < 8; c++) want[128 + c] = x[8 + c] - x[c];
    for (int i = 0; i < 8; i++) { want[136 + i] = x[i]; want[144 + i] = x[16 + i]; }
    /* permute([2, 2, 8], [2, 0, 1]) -> [8, 2, 2]: p[k][i][j] = v[i][j][k] */
    for (int k = 0; k < 8; k++)
        for (int i = 0; i < 2; i++)
            for (int j = 0; j < 2; j++) want[152 + k * 4 + i * 2 + j] = x[(i * 2 + j) * 8 + k];
    memset(out, 0, sizeof out);
    blkc_ctx *c = build("shapes");
    blk_arg args[] = {BLK_PTR(x, sizeof x), BLK_PTR(out, sizeof out)};
    if (h_run(c, "shapes", 1, 1, 1, args, 2) == 0) h_close("shapes", out, want, 184, 0, 0);
    blkc_free(c);
}

static void atomics(void) {
    enum { P = 40 };
    int32_t counter[20] = {0, 0, -1000, 1000}, bits[5] = {0, -1, 0, -7, 0}, old[P];
    float fm = -1.0f;
    blkc_ctx *c = build("atomics");
    blk_arg args[] = {BLK_PTR(counter, sizeof counter), BLK_PTR(&fm, sizeof fm), BLK_PTR(bits, sizeof bits), BLK_PTR(old, sizeof old)};
    if (h_run(c, "atomics", P, 1, 1, args, 4) == 0) {
        CHECK(counter[0] == P, "atomic_add count %d", counter[0]);
        CHECK(counter[1] == P * (P - 1) / 2, "atomic_add pids %d", counter[1]);
        CHECK(counter[2] == (P - 1) * 3, "atomic_max %d", counter[2]);
        CHECK(counter[3] == -5, "atomic_min %d", counter[3]);
        CHECK(fm == (float)(P - 1) * 0.5f, "atomic_max f32 %g", fm);
        int32_t or_bits = 0, and_bits = -1, xr = 0;
        for (int p = 0; p < P; p++) { or_bits |= 1 << (p % 31); and_bits &= ~(1 << (p % 31)); xr ^= p; }
        CHECK(bits[0] == or_bits, "atomic_or %x", bits[0]);
        CHECK(bits[1] == and_bits, "atomic_and %x", bits[1]);
        CHECK(bits[2] == xr, "atomic_xor %d", bits[2]);
        CHECK(bits[3] == P - 1, "atomic_xchg final %d", bits[3]);
        CHECK(old[0] == -7, "atomic_xchg returns the old value: %d", old[0]);
        for (int p = 1; p < P; p++) CHECK(old[p] == p - 1, "atomic_xchg old[%d] = %d", p, old[p]);
        CHECK(bits[4] == P, "atomic_cas chain %d", bits[4]); /* programs run in order: 0->1->2... */
        for (int l = 0; l < 16; l++) CHECK(counter[4 + l] == (l < 10 ? l * P : 0), "masked atomic_add lane %d = %d", l, counter[4 + l]);
    }
    blkc_free(c);
}

static void descs(void) {
    enum { M = 13, K = 19 };
    float src[M * K], dst[M * K], want[M * K];
    for (int i = 0; i < M * K; i++) { src[i] = h_uniform(-1, 1); dst[i] = 7.0f; want[i] = src[i] * 2 + 1; }
    blkc_ctx *c = build("descs");
    blk_arg args[] = {BLK_PTR(src, sizeof src), BLK_PTR(dst, sizeof dst), BLK_INT(M), BLK_INT(K)};
    if (h_run(c, "descs", h_cdiv(M, 8), h_cdiv(K, 8), 1, args, 4) == 0) h_close("tensor_desc", dst, want, M * K, 0, 0);
    blkc_free(c);
}

static void loops(void) {
    enum { P = 6 };
    int32_t x[P] = {1, 6, 7, 27, 97, 871}, out[3 * P], want[3 * P];
    int n = 11;
    for (int p = 0; p < P; p++) {
        int v = x[p], steps = 0;
        while (v != 1 && steps < 1000) { v = v % 2 == 0 ? v / 2 : 3 * v + 1; steps++; }
        int odd = 0;
        for (int i = 0; i < n; i++) if (i % 2) odd += i;
        want[3 * p] = steps; want[3 * p + 1] = odd; want[3 * p + 2] = 0 + 1 + 4 + 9 + 16;
    }
    blkc_ctx *c = build("loops");
    blk_arg args[] = {BLK_PTR(x, sizeof x), BLK_PTR(out, sizeof out), BLK_INT(n)};
    if (h_run(c, "loops", P, 1, 1, args, 3) == 0) h_equal_i32("loops", out, want, 3 * P);
    blkc_free(c);
}

/* Philox4x32-10, written here independently of the compiler's. */
static void philox(uint32_t c[4], uint32_t k0, uint32_t k1) {
    for (int r = 0; r < 10; r++) {
        uint64_t p0 = (uint64_t)0xD2511F53u * c[0], p1 = (uint64_t)0xCD9E8D57u * c[2];
        uint32_t n0 = (uint32_t)(p1 >> 32) ^ c[1] ^ k0, n2 = (uint32_t)(p0 >> 32) ^ c[3] ^ k1;
        c[0] = n0; c[1] = (uint32_t)p1; c[2] = n2; c[3] = (uint32_t)p0;
        k0 += 0x9E3779B9u; k1 += 0xBB67AE85u;
    }
}

static void random_numbers(void) {
    enum { P = 4, T = P * N };
    uint32_t u[T];
    float f[T], g[T];
    int64_t seed = 0x123456789abLL;
    blkc_ctx *c = build("random");
    blk_arg args[] = {BLK_PTR(u, sizeof u), BLK_PTR(f, sizeof f), BLK_PTR(g, sizeof g), BLK_INT(seed)};
    if (h_run(c, "random", P, 1, 1, args, 4) == 0) {
        int bad = 0;
        double mean = 0, var = 0;
        for (int i = 0; i < T; i++) {
            uint32_t ctr[4] = {(uint32_t)i, 0, 0, 0};
            philox(ctr, (uint32_t)seed, (uint32_t)((uint64_t)seed >> 32));
            float wf = (float)(ctr[0] >> 8) * (1.0f / 16777216.0f);
            float u1 = (float)((ctr[0] >> 8) + 1) * (1.0f / 16777216.0f), u2 = (float)(ctr[1] >> 8) * (1.0f / 16777216.0f);
            float wn = sqrtf(-2.0f * logf(u1)) * cosf(6.28318530717958647692f * u2);
            bad += u[i] != ctr[0] || f[i] != wf || fabsf(g[i] - wn) > 1e-5f;
            mean += g[i];
            var += (double)g[i] * g[i];
        }
        CHECK(bad == 0, "%d random numbers differ from Philox4x32-10", bad);
        mean /= T; var = var / T - mean * mean;
        CHECK(fabs(mean) < 0.2 && fabs(var - 1) < 0.3, "randn mean %g var %g", mean, var);
    }
    blkc_free(c);
}

static void grid_and_print(void) {
    int32_t out[3 * 12];
    memset(out, 0xff, sizeof out);
    blkc_ctx *c = build("grid_info");
    blk_arg args[] = {BLK_PTR(out, sizeof out)};
    FILE *tmp = tmpfile();
    unsigned grid[3] = {2, 3, 2};
    if (c && tmp && blkc_interp_run(c, "grid_info", grid, args, 1, tmp) == BLK_OK) {
        for (int p = 0; p < 12; p++) {
            CHECK(out[3 * p] == 3 && out[3 * p + 1] == 4 && out[3 * p + 2] == 2, "grid_info program %d: %d %d %d", p, out[3 * p], out[3 * p + 1], out[3 * p + 2]);
        }
        char text[256] = {0};
        rewind(tmp);
        size_t got = fread(text, 1, sizeof text - 1, tmp);
        text[got] = 0;
        CHECK(strstr(text, "pid (1, 0, 0)") && strstr(text, "pid1") && strstr(text, "0, 2, 4, 6"), "print output: '%s'", text);
    } else {
        failures++;
        fprintf(stderr, "FAIL: grid_info did not run:\n%s", c ? blkc_diagnostics(c) : "");
    }
    if (tmp) fclose(tmp);
    blkc_free(c);
}

static void ptr_cast(void) {
    float x[4] = {0, 0, 0, 0};
    int64_t addr = 0;
    blkc_ctx *c = build("ptr_cast");
    blk_arg args[] = {BLK_PTR(x, sizeof x), BLK_PTR(&addr, sizeof addr)};
    if (h_run(c, "ptr_cast", 1, 1, 1, args, 2) == 0) {
        CHECK(addr == (int64_t)(intptr_t)x, "pointer as i64 gave %lld", (long long)addr);
        CHECK(x[1] == 2.5f && x[0] == 0 && x[2] == 0, "store through (a + 4) as *f32 hit the wrong element");
    }
    blkc_free(c);
}

int main(int argc, char **argv) {
    h_init(argc, argv);
    h_seed(2024);
    math_unary();
    math_binary();
    int_ops();
    reductions();
    scans();
    selection();
    dots();
    shapes();
    atomics();
    descs();
    loops();
    random_numbers();
    grid_and_print();
    ptr_cast();
    return test_finish("builtins");
}

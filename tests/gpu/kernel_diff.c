/* kernel_diff — a differential tester for whole kernels (issue 13, "Wrong
 * code"; docs/reliability.md). index_diff.c covers index arithmetic; this
 * one covers the other op families:
 *
 *   kernel_diff [--device N|cpu] [--seed S] [--count N] [--only K]
 *               [--max-seconds T] [--ptx] [--no-shrink] [--verbose] [--perturb]
 *               [--keep DIR] [--family F,...]
 *
 * A generated kernel is a fixed preamble (1-D [B] and 2-D [R, C] offsets,
 * masked loads of x: f32, y: f32, xi: i32; ha, hb: f16 and ga, gb: bf16 are
 * the pipe family's operands) followed by 1..MAXS independent
 * statements, each drawn from a family and storing its result into a region
 * of its own of an output buffer (out: f32, outi: i32, or the zeroed atomic
 * targets acc: i32, accf: f32):
 *
 *   mask     load with a mask (offs < n - c, r % d != 0) and `other`
 *   bcast    [R, C] + [C][None, :] - [R][:, None], a scalar load broadcast
 *   reduce   sum / max / min over axis 0 or 1 of a 2-D block, or all of a 1-D one
 *   scan     cumsum over a 1-D or 2-D block, axis 0 or 1, reverse or not
 *   cast     chains of `as` through f32 f16 bf16 i32 i8 and back
 *   where    where(cond, a, b) on f32 and i32
 *   if       `if` on a scalar (an argument or a loaded value), a var set in both arms
 *   for      a `for` loop (constant or run-time trip count) carrying a var
 *   atomic   atomic_add / atomic_max into a zeroed buffer, many lanes per address
 *   dot      dot of f16 or bf16 [M, K] x [K, N] (16..64), f32 accumulation
 *   math     exp sin sqrt tanh log on f32
 *   pipe     matmul's K loop: `for k in range(0, pe, BK) @num_stages(2..4)`
 *            loading [M, BK] and [BK, N] (or [N, BK] through trans) f16 or
 *            bf16 tiles, pointer or tensor_desc loads, masked at ragged row,
 *            column and K bounds (K a constant or a run-time value, 0 steps
 *            too), accumulating dot(a, b, acc) or acc += dot(a, b): the
 *            pipeliner's cp.async rings, TMA rings and wgmma on sm_90a
 *
 * At most one dot or pipe statement per kernel (each is a whole tile of
 * registers). --family F,... draws only those families (a second dot or
 * pipe still becomes a where).
 *
 * Every kernel runs twice: with 16-byte aligned pointers and n a multiple of
 * 16 (blkc's d16 entry), and with every pointer moved by one element and a
 * ragged n (the fallback entry) — blkc's default specialisation variants.
 * The interpreter (blkc_interp_run, on buffers of exactly their size: an
 * access out of bounds is an error) is the reference; the device gets the
 * same buffers between guards of 0xFF. Comparison per statement region:
 * bit-exact for integers, bit-moving ops, casts, where, max/min, and for sums
 * whose terms are all multiples of 1/16 below 2^10 (x holds such values, so
 * any summation order is exact; so are pipe's operands, compared within
 * 2^-10, below any one product); an absolute bound for float sums in another
 * order (y: arbitrary floats in [-2, 2]; bound terms * 2^-18 for |terms| <= 4,
 * dot K * 2^-14: tensor cores may add in another order and
 * with less than IEEE alignment precision); 4 ulp for the libdevice math (its documented bounds are
 * <= 2 for these, plus the host libm's). Guards and unwritten (poisoned)
 * elements must be identical.
 *
 * On a failure: the kernel source and its runs, then a minimised reproducer
 * (statements dropped, the grid cut, while it fails in the same class).
 * Kernel K of seed S is a function of (S, K) alone: `--seed S --only K`
 * (with the same --family, if any).
 * Exit 0 iff every kernel matched (or no GPU: "skipped:", exit 0), 1 on
 * failures, 2 on bad usage.
 *
 * --device cpu runs the "device" half on libblkrt's CPU interpreter device:
 * it checks that every generated kernel is accepted by blkc and runs on the
 * interpreter (the generator's self-test; CTest gpu/kernel_diff_cpu). --ptx
 * there also compiles each kernel to PTX (BLK_GPU_ARCH, default sm_90a).
 * --perturb flips a bit of each launch's first output (every kernel must fail).
 * --keep DIR writes every kernel as DIR/kd_SEED_K.blk (tests/tools/
 * compare_builds.sh compiles them with a gcc- and a clang-built blkc).
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "blk/blkc.h"
#include "blk/blkrt.h"
#include "blk/blkrt_jit.h"
#include "diff_common.h"

#define MAXS 8         /* statements per kernel */
#define NRUNS 2        /* aligned + d16 n; moved pointers + ragged n */
#define GUARD 256      /* bytes of 0xFF around every device buffer */
#define NBUF 11        /* x y xi ha hb ga gb out outi acc accf */
#define NIN 7          /* the inputs: x y xi ha hb ga gb */

typedef enum { F_MASK, F_BCAST, F_REDUCE, F_SCAN, F_CAST, F_WHERE, F_IF, F_FOR, F_ATOMIC, F_DOT, F_MATH, F_PIPE, NFAM } family;
static const char *const fam_name[NFAM] = {"mask", "bcast", "reduce", "scan", "cast", "where",
                                           "if", "for", "atomic", "dot", "math", "pipe"};
enum { B_X, B_Y, B_XI, B_HA, B_HB, B_GA, B_GB, B_OUT, B_OUTI, B_ACC, B_ACCF };
static const char *const buf_name[NBUF] = {"x", "y", "xi", "ha", "hb", "ga", "gb", "out", "outi", "acc", "accf"};
/* bytes per element: ha, hb (f16) and ga, gb (bf16) are the operands of the
 * pipelined dots, a and b in buffers of their own (a TMA ring's base must be
 * a kernel argument) */
static int elem_bytes(int b) { return b >= B_HA && b <= B_GB ? 2 : 4; }
typedef enum { C_EXACT, C_ABS, C_ULP } cmpkind;

typedef struct {
    int fam;
    int p[9];       /* the family's choices */
    bool on;        /* the shrinker turns statements off */
    /* derived by layout(): */
    int buf;        /* B_OUT .. B_ACCF */
    int64_t base, size;
    int cmp;
    double tol;     /* C_ABS: absolute bound; C_ULP: ulps */
} stmt;

typedef struct {
    int R, C, B, grid;
    int nst;
    stmt st[MAXS];
    int64_t n[NRUNS], s[NRUNS];
    int64_t nin;          /* elements of x, y, xi */
    int64_t nh;           /* elements of ha, hb, ga, gb */
    int64_t bufn[NBUF];   /* elements of each buffer (>= 1) */
} kspec;

static const char *const cast_types[] = {"f32", "f16", "bf16", "i32", "i8"};
static bool cast_is_float(int t) { return t <= 2; }

/* ---------------------------------------------------------------- layout */

/* A pipe statement's choices (gen_stmt): p0 f16 (ha, hb) or bf16 (ga, gb); p1 M, p2 N,
 * p3 BK; p4 num_stages 2..4; p5 bits: 1 b stored [N][K] and read through
 * trans, 2 `acc += dot(a, b)` instead of dot(a, b, acc), 4 tensor_desc
 * loads instead of pointer loads; p6 the K extent: 0 the constant KC, 1
 * minimum(n, KC), 2 n % (KC + 1) (0 iterations when n is a multiple); p7 KC;
 * p8 NC, the columns of b that are in bounds (the rest read 0). a is
 * [grid * M][LDA] in ha (ga), b [KC][N] or [N][LDA] in hb (gb). LDA is KC
 * rounded up to 8 elements (16 bytes), so the rows can take 16-byte copies
 * (cp.async, TMA) where the mask allows. */
typedef struct {
    int M, N, BK, stages, KC, NC, lda;
    bool bt, accadd, desc;
    int64_t end; /* the elements of a's and b's buffers it reads, at most */
} pipe_geom;

static pipe_geom pipe_of(const kspec *K, const stmt *S) {
    const int *p = S->p;
    pipe_geom G = {.M = p[1], .N = p[2], .BK = p[3], .stages = p[4], .KC = p[7], .NC = p[8]};
    G.bt = p[5] & 1, G.accadd = p[5] & 2, G.desc = p[5] & 4;
    G.lda = (G.KC + 7) / 8 * 8;
    int64_t ea = (int64_t)K->grid * G.M * G.lda, eb = G.bt ? (int64_t)G.N * G.lda : (int64_t)G.KC * G.N;
    G.end = ea > eb ? ea : eb;
    return G;
}

/* Output regions, comparison and bound of every statement that is on. */
static void layout(kspec *K) {
    int64_t total = (int64_t)K->grid * K->B;
    int64_t next[NBUF] = {0};
    K->nh = 1;
    for (int i = 0; i < K->nst; i++) {
        stmt *S = &K->st[i];
        const int *p = S->p;
        S->buf = B_OUT, S->size = total, S->cmp = C_EXACT, S->tol = 0;
        switch (S->fam) {
        case F_MASK: S->buf = p[2] == 2 ? B_OUTI : B_OUT; break;
        case F_BCAST: S->buf = p[0] == 2 ? B_OUTI : B_OUT; break;
        case F_REDUCE: {
            /* p0: sum/max/min, p1: a2 b2 ia2 (a-b)2, p2: axis 0/1 or 2 = 1-D all */
            S->buf = p[1] == 2 ? B_OUTI : B_OUT;
            int terms = p[2] == 0 ? K->R : p[2] == 1 ? K->C : K->B;
            if (p[0] == 0 && (p[1] == 1 || p[1] == 3)) S->cmp = C_ABS, S->tol = terms * ldexp(1, -18);
            break;
        }
        case F_SCAN: { /* p0: a b ia a2 b2 ia2, p1: axis, p2: reverse */
            S->buf = p[0] % 3 == 2 ? B_OUTI : B_OUT;
            int terms = p[0] < 3 ? K->B : p[1] == 0 ? K->R : K->C;
            if (p[0] % 3 == 1) S->cmp = C_ABS, S->tol = terms * ldexp(1, -18);
            break;
        }
        case F_CAST: S->buf = cast_is_float(p[p[0] + 1]) ? B_OUT : B_OUTI; break; /* p0: chain length, p1..: types */
        case F_WHERE: S->buf = p[0] == 1 ? B_OUTI : B_OUT; break;
        case F_IF: S->buf = B_OUT; break;
        case F_FOR: S->buf = p[0] ? B_OUT : B_OUTI; break;
        case F_ATOMIC: /* p0: int add, int max, float add; p1: slots */
            S->buf = p[0] == 2 ? B_ACCF : B_ACC, S->size = p[1];
            if (p[0] == 2) S->cmp = C_ABS, S->tol = (double)(total / p[1] + 1) * ldexp(1, -18);
            break;
        case F_DOT: /* p0: f16/bf16, p1 M, p2 N, p3 K */
            S->size = (int64_t)K->grid * p[1] * p[2], S->cmp = C_ABS, S->tol = p[3] * ldexp(1, -14);
            break;
        case F_MATH: S->cmp = C_ULP, S->tol = 4; break;
        case F_PIPE: {
            /* ha..gb hold multiples of 1/16 in [-4, 4]: every product is a
             * multiple of 2^-8 and every sum below 2^13 (KC <= 320), so the
             * result is exact in any order of summation. The bound only
             * admits what is not a product (-0.0 against 0.0): a tile
             * dropped, repeated or read from the wrong slot moves an element
             * by a multiple of 2^-8. */
            pipe_geom G = pipe_of(K, S);
            S->size = (int64_t)K->grid * G.M * G.N, S->cmp = C_ABS, S->tol = ldexp(1, -10);
            if (S->on && G.end > K->nh) K->nh = G.end;
            break;
        }
        }
        if (!S->on) continue;
        S->base = next[S->buf];
        next[S->buf] += S->size;
    }
    int64_t nin = total;
    if (nin < 64 * 64 + 64) nin = 64 * 64 + 64; /* dot tiles read up to [64, 64] + pid * 16 */
    K->nin = nin;
    K->bufn[B_X] = K->bufn[B_Y] = K->bufn[B_XI] = nin;
    for (int b = B_HA; b <= B_GB; b++) K->bufn[b] = K->nh;
    for (int b = B_OUT; b < NBUF; b++) K->bufn[b] = next[b] ? next[b] : 1;
}

/* ---------------------------------------------------------------- source */

static void print_stmt(sbuf *b, const kspec *K, int i) {
    const stmt *S = &K->st[i];
    const int *p = S->p;
    const char *dst = buf_name[S->buf];
    long long X = (long long)S->base;
    static const char *const consts[] = {"0.0", "-1.5", "2.0", "1e30", "-0.0", "0.0625"};
    static const char *const iconsts[] = {"0", "-7", "12", "2147483647", "-1"};
    switch (S->fam) {
    case F_MASK: {
        static const char *const src[] = {"x", "y", "xi"};
        sb_printf(b, "    let v%d = load(%s + offs, (offs < n - %d) && (r %% %d != 0), other = %s);\n", i, src[p[2]],
                  p[0], 1 + p[1], p[2] == 2 ? iconsts[p[3] % 5] : consts[p[3] % 6]);
        sb_printf(b, "    store(%s + %lld + offs, v%d);\n", dst, X, i);
        break;
    }
    case F_BCAST:
        if (p[0] == 0) sb_printf(b, "    let v%d = a2 + load(y + r1)[None, :] - load(x + pid * %d + r0)[:, None];\n", i, K->R);
        else if (p[0] == 1) sb_printf(b, "    let v%d = b2 * 0.5 - load(x + pid);\n", i);
        else sb_printf(b, "    let v%d = ia2 * 3 - load(xi + r1)[None, :] + (r0 * %d)[:, None];\n", i, p[1] % 7 - 3);
        sb_printf(b, "    store(%s + %lld + offs2, v%d%s);\n", dst, X, i, p[2] ? ", m2" : "");
        break;
    case F_REDUCE: {
        static const char *const op[] = {"sum", "max", "min"};
        static const char *const src2[] = {"a2", "b2", "ia2", "(a2 - b2)"};
        static const char *const src1[] = {"a", "b", "ia", "(a - b)"};
        if (p[2] == 2) {
            sb_printf(b, "    let v%d = %s(%s, 0);\n", i, op[p[0]], src1[p[1]]);
            sb_printf(b, "    store(%s + %lld + pid, v%d);\n", dst, X, i);
        } else {
            sb_printf(b, "    let v%d = %s(%s, %d);\n", i, op[p[0]], src2[p[1]], p[2]);
            sb_printf(b, "    store(%s + %lld + pid * %d + %s, v%d);\n", dst, X, K->B, p[2] ? "r0" : "r1", i);
        }
        break;
    }
    case F_SCAN: {
        static const char *const src[] = {"a", "b", "ia", "a2", "b2", "ia2"};
        const char *rev = p[2] ? ", reverse = true" : "";
        if (p[0] < 3) {
            sb_printf(b, "    let v%d = cumsum(%s, 0%s);\n", i, src[p[0]], rev);
            sb_printf(b, "    store(%s + %lld + offs, v%d);\n", dst, X, i);
        } else {
            sb_printf(b, "    let v%d = cumsum(%s, %d%s);\n", i, src[p[0]], p[1], rev);
            sb_printf(b, "    store(%s + %lld + offs2, v%d);\n", dst, X, i);
        }
        break;
    }
    case F_CAST: {
        /* p0: chain length 1..3, p1..p3: types, p4: source (b * scale, ia), p5: scale */
        static const char *const scale[] = {"1.0", "37.5", "1000.0", "0.001"};
        sb_printf(b, "    let v%d = ", i);
        for (int k = 0; k < p[0]; k++) sb_printf(b, "(");
        if (p[4]) sb_printf(b, "ia");
        else sb_printf(b, "(b * %s)", scale[p[5] % 4]);
        for (int k = 0; k < p[0]; k++) sb_printf(b, " as %s)", cast_types[p[k + 1]]);
        sb_printf(b, ";\n    store(%s + %lld + offs, v%d as %s);\n", dst, X, i,
                  cast_is_float(p[p[0]]) ? "f32" : "i32");
        break;
    }
    case F_WHERE:
        if (p[0] == 0) sb_printf(b, "    let v%d = where(a > b, a, b * 2.0);\n", i);
        else if (p[0] == 1) sb_printf(b, "    let v%d = where(ia %% %d == 0, ia, 0 - ia);\n", i, 2 + p[1] % 4);
        else sb_printf(b, "    let v%d = where(m && (b < 0.0), a - b, a);\n", i);
        sb_printf(b, "    store(%s + %lld + offs, v%d);\n", dst, X, i);
        break;
    case F_IF: {
        static const int th[] = {-5, 0, 3, 20};
        sb_printf(b, "    var v%d = a;\n", i);
        if (p[0]) sb_printf(b, "    if load(xi + pid) %% 2 == 0 {\n");
        else sb_printf(b, "    if s > %d {\n", th[p[1] % 4]);
        sb_printf(b, "        v%d = v%d + b;\n    } else {\n        v%d = v%d - 0.75;\n    }\n", i, i, i, i);
        sb_printf(b, "    store(%s + %lld + offs, v%d, m);\n", dst, X, i);
        break;
    }
    case F_FOR: {
        char trip[32];
        if (p[1]) snprintf(trip, sizeof trip, "s & 7");
        else snprintf(trip, sizeof trip, "%d", 1 + p[2] % 6);
        if (p[0] == 0) {
            sb_printf(b, "    var v%d = ia;\n    for i in range(0, %s) {\n        v%d = v%d * 3 + i;\n    }\n", i, trip, i, i);
        } else {
            sb_printf(b, "    var v%d = b;\n    for i in range(0, %s) {\n", i, trip);
            sb_printf(b, "        v%d = maximum(v%d * 0.5, a) + (i as f32);\n    }\n", i, i);
        }
        sb_printf(b, "    store(%s + %lld + offs, v%d);\n", dst, X, i);
        break;
    }
    case F_ATOMIC: {
        const char *val = p[0] == 2 ? "b" : "ia";
        sb_printf(b, "    %s(%s + %lld + (offs %% %d), %s, m);\n", p[0] == 1 ? "atomic_max" : "atomic_add", dst, X, p[1],
                  val);
        break;
    }
    case F_DOT: {
        const char *T = p[0] ? "bf16" : "f16";
        int M = p[1], N = p[2], KK = p[3];
        sb_printf(b, "    let dm%d = arange(0, %d);\n    let dn%d = arange(0, %d);\n    let dk%d = arange(0, %d);\n", i,
                  M, i, N, i, KK);
        sb_printf(b, "    let da%d = load(x + pid * 16 + dm%d[:, None] * %d + dk%d[None, :]) as %s;\n", i, i, KK, i, T);
        sb_printf(b, "    let db%d = load(y + dk%d[:, None] * %d + dn%d[None, :]) as %s;\n", i, i, N, i, T);
        sb_printf(b, "    let v%d = dot(da%d, db%d);\n", i, i, i);
        sb_printf(b, "    store(%s + %lld + pid * %d + dm%d[:, None] * %d + dn%d[None, :], v%d);\n", dst, X, M * N, i, N,
                  i, i);
        break;
    }
    case F_MATH: {
        static const char *const fn[] = {"exp(b)", "sin(b * 3.0)", "sqrt(abs(b))", "tanh(b)", "log(abs(b) + 0.5)"};
        sb_printf(b, "    let v%d = %s;\n    store(%s + %lld + offs, v%d);\n", i, fn[p[0] % 5], dst, X, i);
        break;
    }
    case F_PIPE: { /* a K loop as matmul's: tiles of a and b into a dot per step (see pipe_of) */
        pipe_geom G = pipe_of(K, S);
        const char *HA = p[0] ? "ga" : "ha", *HB = p[0] ? "gb" : "hb";
        sb_printf(b, "    let pm%d = pid * %d + arange(0, %d);\n    let pn%d = arange(0, %d);\n", i, G.M, G.M, i, G.N);
        sb_printf(b, "    let pk%d = arange(0, %d);\n", i, G.BK);
        if (p[6] == 0) sb_printf(b, "    let pe%d = %d;\n", i, G.KC);
        else if (p[6] == 1) sb_printf(b, "    let pe%d = minimum(n, %d);\n", i, G.KC);
        else sb_printf(b, "    let pe%d = n %% %d;\n", i, G.KC + 1);
        if (G.desc) {
            sb_printf(b, "    let da%d = tensor_desc(%s, shape = [n, pe%d], strides = [%d, 1], block = [%d, %d]);\n", i, HA,
                      i, G.lda, G.M, G.BK);
            if (G.bt)
                sb_printf(b, "    let db%d = tensor_desc(%s, shape = [%d, pe%d], strides = [%d, 1], block = [%d, %d]);\n", i,
                          HB, G.NC, i, G.lda, G.N, G.BK);
            else
                sb_printf(b, "    let db%d = tensor_desc(%s, shape = [pe%d, %d], strides = [%d, 1], block = [%d, %d]);\n", i,
                          HB, i, G.NC, G.N, G.BK, G.N);
        }
        sb_printf(b, "    var v%d = zeros([%d, %d], f32);\n", i, G.M, G.N);
        sb_printf(b, "    for k%d in range(0, pe%d, %d) @num_stages(%d) {\n", i, i, G.BK, G.stages);
        if (G.desc) {
            sb_printf(b, "        let pa%d = da%d.load([pid * %d, k%d]);\n", i, i, G.M, i);
            if (G.bt) sb_printf(b, "        let pb%d = trans(db%d.load([0, k%d]));\n", i, i, i);
            else sb_printf(b, "        let pb%d = db%d.load([k%d, 0]);\n", i, i, i);
        } else {
            sb_printf(b, "        let pa%d = load(%s + pm%d[:, None] * %d + (k%d + pk%d)[None, :], "
                         "(pm%d[:, None] < n) & ((k%d + pk%d)[None, :] < pe%d));\n",
                      i, HA, i, G.lda, i, i, i, i, i, i);
            if (G.bt)
                sb_printf(b, "        let pb%d = trans(load(%s + pn%d[:, None] * %d + (k%d + pk%d)[None, :], "
                             "(pn%d[:, None] < %d) & ((k%d + pk%d)[None, :] < pe%d)));\n",
                          i, HB, i, G.lda, i, i, i, G.NC, i, i, i);
            else
                sb_printf(b, "        let pb%d = load(%s + (k%d + pk%d)[:, None] * %d + pn%d[None, :], "
                             "((k%d + pk%d)[:, None] < pe%d) & (pn%d[None, :] < %d));\n",
                          i, HB, i, i, G.N, i, i, i, i, i, G.NC);
        }
        if (G.accadd) sb_printf(b, "        v%d += dot(pa%d, pb%d);\n    }\n", i, i, i);
        else sb_printf(b, "        v%d = dot(pa%d, pb%d, v%d);\n    }\n", i, i, i, i);
        sb_printf(b, "    store(%s + %lld + pm%d[:, None] * %d + pn%d[None, :], v%d);\n", dst, X, i, G.N, i, i);
        break;
    }
    }
}

static char *kernel_source(const kspec *K) {
    sbuf b = {0};
    sb_printf(&b, "kernel kd(x: *f32, y: *f32, xi: *i32, ha: *f16, hb: *f16, ga: *bf16, gb: *bf16, out: *f32, outi: *i32, "
                  "acc: *i32, accf: *f32, n: i32, s: i32) {\n");
    sb_printf(&b, "    let pid = program_id(0);\n    let r = arange(0, %d);\n    let offs = pid * %d + r;\n", K->B, K->B);
    sb_printf(&b, "    let m = offs < n;\n    let a = load(x + offs, m);\n    let b = load(y + offs, m, other = 1.5);\n");
    sb_printf(&b, "    let ia = load(xi + offs, m, other = -3);\n");
    sb_printf(&b, "    let r0 = arange(0, %d);\n    let r1 = arange(0, %d);\n", K->R, K->C);
    sb_printf(&b, "    let offs2 = pid * %d + r0[:, None] * %d + r1[None, :];\n    let m2 = offs2 < n;\n", K->B, K->C);
    sb_printf(&b, "    let a2 = load(x + offs2, m2);\n    let b2 = load(y + offs2, m2, other = -0.25);\n");
    sb_printf(&b, "    let ia2 = load(xi + offs2, m2);\n");
    for (int i = 0; i < K->nst; i++)
        if (K->st[i].on) print_stmt(&b, K, i);
    sb_printf(&b, "}\n");
    return b.s;
}

/* ---------------------------------------------------------------- generation */

static void gen_stmt(rng *R, const kspec *K, stmt *S, int fam) {
    memset(S, 0, sizeof *S);
    S->fam = fam, S->on = true;
    int *p = S->p;
    static const int dims[] = {16, 32, 64};
    switch (fam) {
    case F_MASK: p[0] = rnd(R, 40), p[1] = rnd(R, 5), p[2] = rnd(R, 3), p[3] = rnd(R, 30); break;
    case F_BCAST: p[0] = rnd(R, 3), p[1] = rnd(R, 7), p[2] = rnd(R, 2); break;
    case F_REDUCE: p[0] = rnd(R, 3), p[1] = rnd(R, 4), p[2] = rnd(R, 3); break;
    case F_SCAN: p[0] = rnd(R, 6), p[1] = rnd(R, 2), p[2] = chance(R, 30); break;
    case F_CAST:
        p[0] = 1 + rnd(R, 3);
        for (int k = 1; k <= p[0]; k++) p[k] = rnd(R, 5);
        p[4] = rnd(R, 2), p[5] = rnd(R, 4);
        break;
    case F_WHERE: p[0] = rnd(R, 3), p[1] = rnd(R, 4); break;
    case F_IF: p[0] = rnd(R, 2), p[1] = rnd(R, 4); break;
    case F_FOR: p[0] = rnd(R, 2), p[1] = rnd(R, 2), p[2] = rnd(R, 6); break;
    case F_ATOMIC: {
        static const int slots[] = {1, 3, 16, 64};
        p[0] = rnd(R, 3), p[1] = PICK(R, slots);
        break;
    }
    case F_DOT: p[0] = rnd(R, 2), p[1] = PICK(R, dims), p[2] = PICK(R, dims), p[3] = PICK(R, dims); break;
    case F_MATH: p[0] = rnd(R, 5); break;
    case F_PIPE: {
        /* M and BK of 64 twice as often: wgmma (sm_90a) wants M = 16 * num_warps
         * and 128-byte rows of K, and TMA rings need wgmma */
        static const int dims64[] = {16, 32, 64, 64};
        p[0] = rnd(R, 2), p[1] = PICK(R, dims64), p[2] = PICK(R, dims), p[3] = PICK(R, dims64);
        p[4] = 2 + rnd(R, 3), p[5] = rnd(R, 8), p[6] = rnd(R, 3);
        /* up to 5 steps of BK: fewer, as many and more steps than stages;
         * half of the extents a multiple of 8 (16-byte copies), half ragged */
        int kc = 1 + rnd(R, 5 * p[3]);
        p[7] = chance(R, 50) ? (kc + 7) / 8 * 8 : kc;
        int nn = p[2], pick = rnd(R, 10);
        p[8] = pick < 4 ? nn : pick < 7 ? nn - 8 * rnd(R, nn / 8) : 1 + rnd(R, nn);
        break;
    }
    }
    (void)K;
}

/* families: a mask of the families drawn (0: all); with another mask the
 * kernels of a seed differ, so reproduce with the same --family */
static void generate(uint64_t seed, int index, unsigned families, kspec *K) {
    rng R = kernel_rng(seed, index);
    memset(K, 0, sizeof *K);
    K->R = 2 << rnd(&R, 4);  /* 2 .. 16 */
    K->C = 16 << rnd(&R, 3); /* 16 .. 64 */
    K->B = K->R * K->C;
    K->grid = 1 + rnd(&R, 3);
    K->nst = 1 + rnd(&R, MAXS);
    bool dot = false; /* one dot per kernel: each is a whole tile of registers */
    for (int i = 0; i < K->nst; i++) {
        int fam = rnd(&R, NFAM);
        while (families && !(families >> fam & 1)) fam = rnd(&R, NFAM);
        if ((fam == F_DOT || fam == F_PIPE) && dot) fam = F_WHERE;
        dot |= fam == F_DOT || fam == F_PIPE;
        gen_stmt(&R, K, &K->st[i], fam);
    }
    int64_t total = (int64_t)K->grid * K->B;
    K->n[0] = total;                   /* a multiple of 16: the d16 entry */
    K->n[1] = 1 + rnd(&R, (int)total); /* ragged: the fallback (pointers moved too) */
    K->s[0] = 16 * (rnd(&R, 3) - 1);
    K->s[1] = rnd(&R, 40) - 10;
    layout(K);
}

/* k / 16 (|k| <= 64) as f16 and bf16 bits: at most 7 significant bits, so
 * both are exact (f16: exponent rebiased, mantissa cut from 23 to 10 bits;
 * bf16: the f32's top half). */
static uint16_t f16_bits(float v) {
    uint32_t u;
    memcpy(&u, &v, 4);
    if (!(u & 0x7FFFFFFFu)) return (uint16_t)(u >> 16);
    return (uint16_t)((u >> 16 & 0x8000u) | (((u >> 23 & 0xFF) - 127 + 15) << 10) | (u >> 13 & 0x3FF));
}
static uint16_t bf16_bits(float v) {
    uint32_t u;
    memcpy(&u, &v, 4);
    return (uint16_t)(u >> 16);
}

/* Input values: x multiples of 1/16 in [-4, 4] (f16/bf16-exact, sums exact in
 * any order), y arbitrary floats in [-2, 2], xi integers in [-1000, 1000];
 * ha, hb (f16) and ga, gb (bf16) multiples of 1/16 in [-4, 4] too, from a
 * stream of their own (x, y, xi are those of the generator before them). */
static void fill_inputs(uint64_t seed, int index, const kspec *K, unsigned char *in[NIN]) {
    rng R = kernel_rng(seed ^ 0x5EED5EEDull, index);
    float *x = (float *)in[0], *y = (float *)in[1];
    int32_t *xi = (int32_t *)in[2];
    for (int64_t i = 0; i < K->nin; i++) {
        x[i] = (float)(rnd(&R, 129) - 64) / 16.0f;
        y[i] = (float)((double)(rnext(&R) >> 11) * ldexp(1, -53) * 4.0 - 2.0);
        xi[i] = rnd(&R, 2001) - 1000;
    }
    rng Q = kernel_rng(seed ^ 0x16B1F16Bull, index);
    for (int b = B_HA; b <= B_GB; b++) {
        uint16_t *v = (uint16_t *)in[b];
        for (int64_t i = 0; i < K->nh; i++) {
            float f = (float)(rnd(&Q, 129) - 64) / 16.0f;
            v[i] = b < B_GA ? f16_bits(f) : bf16_bits(f);
        }
    }
}

/* ---------------------------------------------------------------- running */

typedef struct {
    bool cpu, ptx, shrink, verbose, perturb;
    int ordinal, count, only;
    uint64_t seed;
    double max_seconds;
    const char *keep; /* write every kernel's source there (compare_builds.sh compiles them) */
    unsigned families; /* --family: the families drawn (0: all) */
    char family_arg[128];
} options;

typedef enum { R_NONE, R_COMPILE, R_REFERENCE, R_LAUNCH, R_MISMATCH } fclass;
static const char *const fclass_name[] = {"ok", "compile error", "reference (interpreter) error", "launch error",
                                          "mismatch"};
typedef struct {
    fclass cls;
    int stmt; /* R_MISMATCH: the first statement whose region differs (-1: a guard or outside regions) */
    char msg[2048];
} outcome;

static blkrt_device *dev;
static blkrt_device_info dinfo;
static bool device_lost;

static void fail_msg(outcome *O, fclass c, const char *fmt, ...) {
    if (O->cls != R_NONE) return;
    O->cls = c;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(O->msg, sizeof O->msg, fmt, ap);
    va_end(ap);
}

static size_t buf_bytes(const kspec *K, int b) { return (size_t)K->bufn[b] * elem_bytes(b); }

/* The reference of run r into bufs[B_OUT..] (inputs in[0..NIN-1] shared). */
static bool reference(blkc_ctx *c, const kspec *K, int r, unsigned char *in[NIN], unsigned char *bufs[NBUF], outcome *O) {
    for (int b = 0; b < NBUF; b++) {
        if (b < B_OUT) {
            bufs[b] = in[b];
            continue;
        }
        bufs[b] = malloc(buf_bytes(K, b));
        if (!bufs[b]) {
            fail_msg(O, R_REFERENCE, "out of memory");
            return false;
        }
        memset(bufs[b], b >= B_ACC ? 0 : 0xFF, buf_bytes(K, b)); /* outputs poisoned, atomic targets zeroed */
    }
    blk_arg args[NBUF + 2];
    for (int b = 0; b < NBUF; b++) args[b] = BLK_PTR(bufs[b], buf_bytes(K, b));
    args[NBUF] = BLK_INT(K->n[r]);
    args[NBUF + 1] = BLK_INT(K->s[r]);
    unsigned grid[3] = {(unsigned)K->grid, 1, 1};
    size_t before = strlen(blkc_diagnostics(c));
    if (blkc_interp_run(c, "kd", grid, args, NBUF + 2, NULL) != BLK_OK) {
        fail_msg(O, R_REFERENCE, "run %d: the interpreter failed: %s", r, blkc_diagnostics(c) + before);
        return false;
    }
    return true;
}

static int64_t ulp_distance(float a, float b) {
    int32_t ia, ib;
    memcpy(&ia, &a, 4), memcpy(&ib, &b, 4);
    int64_t la = ia < 0 ? (int64_t)INT32_MIN - ia : ia, lb = ib < 0 ? (int64_t)INT32_MIN - ib : ib;
    return la > lb ? la - lb : lb - la;
}

/* Element q (bytes into buffer b's data) within its statement's bound? */
static bool elem_ok(const kspec *K, int b, int64_t e, const unsigned char *got, const unsigned char *want, int *which) {
    *which = -1;
    if (!memcmp(got, want, 4)) return true;
    for (int i = 0; i < K->nst; i++) {
        const stmt *S = &K->st[i];
        if (!S->on || S->buf != b || e < S->base || e >= S->base + S->size) continue;
        *which = i;
        if (S->cmp == C_EXACT || b == B_OUTI || b == B_ACC) return false;
        float g, w;
        memcpy(&g, got, 4), memcpy(&w, want, 4);
        uint32_t wb;
        memcpy(&wb, want, 4);
        if (wb == 0xFFFFFFFFu) return false; /* poison: must be left alone */
        if (isnan(g) || isnan(w)) return isnan(g) && isnan(w);
        if (S->cmp == C_ULP) return ulp_distance(g, w) <= (int64_t)S->tol;
        return fabs((double)g - (double)w) <= S->tol + 1e-6 * fabs((double)w);
    }
    return false;
}

/* One launch of run r on the device (pointers moved by one element in run 1),
 * compared with the reference ref[]. */
static void device_run(const options *o, blkrt_kernel *k, const kspec *K, int r, unsigned char *ref[NBUF], outcome *O) {
    size_t moved = r == 1 ? 1 : 0; /* elements */
    unsigned char *image[NBUF] = {0}, *back = NULL;
    blkrt_ptr base[NBUF] = {0};
    blkrt_arg args[NBUF + 2];
    blkrt_status st = BLKRT_OK;
    const char *what = "";
    for (int b = 0; b < NBUF && !st; b++) {
        size_t start = GUARD + moved * elem_bytes(b), total = start + buf_bytes(K, b) + GUARD;
        image[b] = malloc(total);
        if (!image[b]) {
            fail_msg(O, R_LAUNCH, "out of memory");
            goto done;
        }
        memset(image[b], 0xFF, total);
        if (b < B_OUT) memcpy(image[b] + start, ref[b], buf_bytes(K, b));
        else if (b >= B_ACC) memset(image[b] + start, 0, buf_bytes(K, b));
        what = "blkrt_malloc";
        st = blkrt_malloc(dev, total, &base[b]);
        if (!st) what = "blkrt_memcpy_htod", st = blkrt_memcpy_htod(dev, base[b], image[b], total);
        args[b] = BLKRT_PTR(base[b] + start);
    }
    args[NBUF] = BLKRT_INT(K->n[r]);
    args[NBUF + 1] = BLKRT_INT(K->s[r]);
    uint32_t grid[3] = {(uint32_t)K->grid, 1, 1};
    if (!st) what = "blkrt_launch", st = blkrt_launch(k, grid, args, NBUF + 2, NULL);
    if (!st) what = "blkrt_device_synchronize", st = blkrt_device_synchronize(dev);
    if (st) {
        fail_msg(O, R_LAUNCH, "run %d: %s: %s: %s", r, what, blkrt_status_name(st), blkrt_last_error());
        if (st == BLKRT_ERR_LAUNCH_FAILED || st == BLKRT_ERR_DRIVER) device_lost = !o->cpu;
        goto done;
    }
    for (int b = 0; b < NBUF; b++) {
        size_t es = elem_bytes(b), start = GUARD + moved * es, total = start + buf_bytes(K, b) + GUARD;
        back = malloc(total);
        if (!back) {
            fail_msg(O, R_LAUNCH, "out of memory");
            goto done;
        }
        if ((st = blkrt_memcpy_dtoh(dev, back, base[b], total))) {
            fail_msg(O, R_LAUNCH, "blkrt_memcpy_dtoh: %s", blkrt_last_error());
            goto done;
        }
        if (b >= B_OUT) memcpy(image[b] + start, ref[b], buf_bytes(K, b));
        /* self-test: bit 30 of out[0], which moves any value past every bound (0.0 becomes 2.0) */
        if (o->perturb && b == B_OUT) back[start + 3] ^= 0x40;
        if (!memcmp(back, image[b], total)) {
            free(back), back = NULL;
            continue;
        }
        sbuf s = {0};
        long bad = 0;
        int first_stmt = -2;
        for (size_t q = 0; q < total; q += es) {
            int64_t e = ((int64_t)q - (int64_t)start) / (int64_t)es;
            bool inside = q >= start && q < start + buf_bytes(K, b);
            int which = -1;
            if (inside && b >= B_OUT ? elem_ok(K, b, e, back + q, image[b] + q, &which) : !memcmp(back + q, image[b] + q, es))
                continue;
            if (first_stmt == -2) first_stmt = which;
            if (bad++ >= 6) continue;
            if (!inside || b < B_OUT) {
                sb_printf(&s, "\n      %s %s element %lld: written", buf_name[b], inside ? "input" : "guard at", (long long)e);
            } else if (b == B_OUTI || b == B_ACC) {
                int32_t g, w;
                memcpy(&g, back + q, 4), memcpy(&w, image[b] + q, 4);
                sb_printf(&s, "\n      %s[%lld] (statement %d): got %d, want %d", buf_name[b], (long long)e, which, g, w);
            } else {
                float g, w;
                memcpy(&g, back + q, 4), memcpy(&w, image[b] + q, 4);
                sb_printf(&s, "\n      %s[%lld] (statement %d): got %.9g, want %.9g", buf_name[b], (long long)e, which,
                          (double)g, (double)w);
            }
        }
        if (bad) {
            fail_msg(O, R_MISMATCH, "run %d (%s): %ld element(s) of %s differ:%s", r,
                     r ? "moved pointers, ragged n" : "aligned", bad, buf_name[b], s.s ? s.s : "");
            if (O->stmt == -2) O->stmt = first_stmt;
        }
        free(s.s);
        free(back), back = NULL;
    }
done:
    free(back);
    for (int b = 0; b < NBUF; b++) {
        if (base[b] && !device_lost) blkrt_free(dev, base[b]);
        free(image[b]);
    }
}

static void run_kernel(const options *o, const kspec *K, uint64_t seed, int index, outcome *O) {
    memset(O, 0, sizeof *O);
    O->stmt = -2;
    char *src = kernel_source(K);
    blkc_ctx *c = blkc_new();
    blkrt_module *mod = NULL;
    blkrt_kernel *k = NULL;
    unsigned char *in[NIN] = {0};
    if (!src || !c) {
        fail_msg(O, R_COMPILE, "out of memory");
        goto done;
    }
    const char *arch = o->cpu ? getenv("BLK_GPU_ARCH") : backend_arch(dinfo.arch);
    if (o->cpu && (!arch || !*arch)) arch = "sm_90a";
    if (!arch || blkc_set_arch(c, arch) != BLK_OK) {
        fail_msg(O, R_COMPILE, "blk does not generate code for %s", dinfo.arch);
        goto done;
    }
    if (blkc_load_source(c, "kd.blk", src, strlen(src)) != BLK_OK || blkc_build(c, "kd") != BLK_OK) {
        fail_msg(O, R_COMPILE, "blkc: %s", blkc_diagnostics(c));
        goto done;
    }
    const char *ptx = NULL;
    if (!o->cpu || o->ptx) {
        ptx = blkc_emit(c, "ptx"); /* the default variants: d16 + fallback */
        if (!ptx) {
            fail_msg(O, R_COMPILE, "PTX for %s: %s", arch, blkc_diagnostics(c));
            goto done;
        }
    }
    char err[1024];
    if (!diff_load_kernel(dev, o->cpu ? NULL : ptx, src, "kd", &mod, &k, err, sizeof err)) {
        fail_msg(O, R_COMPILE, "%s", err);
        goto done;
    }
    for (int b = 0; b < NIN; b++)
        if (!(in[b] = malloc(buf_bytes(K, b)))) {
            fail_msg(O, R_REFERENCE, "out of memory");
            goto done;
        }
    fill_inputs(seed, index, K, in);
    for (int r = 0; r < NRUNS && O->cls == R_NONE && !device_lost; r++) {
        unsigned char *ref[NBUF] = {0};
        if (reference(c, K, r, in, ref, O)) device_run(o, k, K, r, ref, O);
        for (int b = B_OUT; b < NBUF; b++) free(ref[b]);
    }
done:
    for (int b = 0; b < NIN; b++) free(in[b]);
    if (mod) blkrt_module_unload(mod);
    blkc_free(c);
    free(src);
}

/* ---------------------------------------------------------------- reporting, shrinking */

static void print_kernel(const kspec *K) {
    char *src = kernel_source(K);
    printf("%s", src ? src : "(out of memory)\n");
    free(src);
    printf("  grid [%d, 1, 1]; x, y: f32[%lld], xi: i32[%lld], ha, hb: f16[%lld], ga, gb: bf16[%lld]; out %lld, outi %lld, "
           "acc %lld, accf %lld elements\n",
           K->grid, (long long)K->nin, (long long)K->nin, (long long)K->nh, (long long)K->nh, (long long)K->bufn[B_OUT],
           (long long)K->bufn[B_OUTI], (long long)K->bufn[B_ACC], (long long)K->bufn[B_ACCF]);
    printf("  run 0: n=%lld s=%lld (aligned pointers); run 1: n=%lld s=%lld (every pointer moved by one element)\n",
           (long long)K->n[0], (long long)K->s[0], (long long)K->n[1], (long long)K->s[1]);
    printf("  inputs: x, ha, hb, ga, gb in {-4, -4+1/16, ..., 4}, y in [-2, 2], xi in [-1000, 1000] (from the seed)\n");
}

/* Greedy: drop statements (the failing one last), then cut the grid, while
 * the kernel fails in the same class. */
static void shrink(const options *o, kspec *K, uint64_t seed, int index, outcome *O, double deadline) {
    int tries = 0, taken = 0;
    bool progress = true;
    while (progress && !device_lost && !(deadline > 0 && now_s() > deadline)) {
        progress = false;
        for (int w = 0; w <= K->nst && !progress && !device_lost; w++) {
            kspec C = *K;
            if (w < K->nst) {
                if (!C.st[w].on) continue;
                int on = 0;
                for (int i = 0; i < C.nst; i++) on += C.st[i].on;
                if (on <= 1) continue;
                C.st[w].on = false;
            } else {
                if (C.grid == 1) continue;
                C.grid = 1;
                if (C.n[0] > C.B) C.n[0] = C.B;
                if (C.n[1] > C.B) C.n[1] = C.B;
            }
            layout(&C);
            outcome CO;
            tries++;
            run_kernel(o, &C, seed, index, &CO);
            if (CO.cls == O->cls) *K = C, *O = CO, taken++, progress = true;
        }
    }
    printf("  shrink: %d candidates run, %d taken\n", tries, taken);
}

/* DIR/kd_SEED_K.blk: the source, its runs in a comment. */
static void keep_kernel(const char *dir, const kspec *K, uint64_t seed, int index) {
    mkdir(dir, 0777);
    char path[4096];
    snprintf(path, sizeof path, "%s/kd_%llu_%d.blk", dir, (unsigned long long)seed, index);
    FILE *f = fopen(path, "w");
    char *src = kernel_source(K);
    if (f && src)
        fprintf(f, "// kernel_diff --seed %llu --only %d: grid %d; run 0 n=%lld s=%lld; run 1 n=%lld s=%lld\n%s",
                (unsigned long long)seed, index, K->grid, (long long)K->n[0], (long long)K->s[0], (long long)K->n[1],
                (long long)K->s[1], src);
    if (f) fclose(f);
    free(src);
}

static void usage(void) {
    fprintf(stderr, "usage: kernel_diff [--device N|cpu] [--seed S] [--count N] [--only K] [--max-seconds T]\n"
                    "                   [--ptx] [--no-shrink] [--verbose] [--perturb] [--keep DIR]\n"
                    "                   [--family F,...]  (F: mask bcast reduce scan cast where if for atomic dot\n"
                    "                                      math pipe; default all)\n");
}

#ifdef INDEX_DIFF_MULTICALL
int kernel_diff_main(int argc, char **argv, const char *prog) {
#else
int main(int argc, char **argv) {
    const char *prog = "kernel_diff";
#endif
    setvbuf(stdout, NULL, _IOLBF, 0);
    options o = {.count = 100, .only = -1, .shrink = true};
    bool seeded = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--device") && v) {
            if (!strcmp(v, "cpu")) o.cpu = true;
            else o.ordinal = atoi(v);
            i++;
        } else if (!strcmp(a, "--seed") && v) o.seed = strtoull(v, NULL, 0), seeded = true, i++;
        else if (!strcmp(a, "--count") && v) o.count = atoi(v), i++;
        else if (!strcmp(a, "--only") && v) o.only = atoi(v), i++;
        else if (!strcmp(a, "--max-seconds") && v) o.max_seconds = atof(v), i++;
        else if (!strcmp(a, "--ptx")) o.ptx = true;
        else if (!strcmp(a, "--no-shrink")) o.shrink = false;
        else if (!strcmp(a, "--verbose")) o.verbose = true;
        else if (!strcmp(a, "--perturb")) o.perturb = true;
        else if (!strcmp(a, "--keep") && v) o.keep = v, i++;
        else if (!strcmp(a, "--family") && v) {
            /* a comma-separated list: focus a run on some families (e.g. pipe, the pipeliner) */
            char list[sizeof o.family_arg];
            snprintf(o.family_arg, sizeof o.family_arg, "%s", v);
            snprintf(list, sizeof list, "%s", v);
            for (char *t = strtok(list, ","); t; t = strtok(NULL, ",")) {
                int f = 0;
                while (f < NFAM && strcmp(t, fam_name[f])) f++;
                if (f == NFAM) {
                    fprintf(stderr, "kernel_diff: no family '%s'\n", t);
                    usage();
                    return 2;
                }
                o.families |= 1u << f;
            }
            i++;
        } else {
            usage();
            return 2;
        }
    }
    if (o.count < 1) o.count = 1;
    if (!seeded) {
        uint64_t s = (uint64_t)time(NULL) ^ ((uint64_t)clock() << 20);
        o.seed = splitmix(&s) % 1000000007ull;
    }
    if (!o.cpu) {
        int count = 0;
        blkrt_status st = blkrt_device_count(&count);
        if (st != BLKRT_OK || count <= o.ordinal) {
            /* the suite runs everywhere; --device cpu is the check without a GPU */
            printf("skipped: no GPU %d (%s)\n", o.ordinal, st ? blkrt_last_error() : "not visible");
            return 0;
        }
    }
    if (blkrt_device_open(o.cpu ? BLKRT_DEVICE_CPU : o.ordinal, &dev) || blkrt_device_get_info(dev, &dinfo)) {
        printf("error: opening the device: %s\n", blkrt_last_error());
        return 1;
    }
    blkrt_jit_install();
    printf("kernel_diff: device %s (%s), blkc %s; seed %llu (one kernel: --seed %llu --only K)\n", dinfo.name,
           dinfo.arch, blkc_version(), (unsigned long long)o.seed, (unsigned long long)o.seed);
    int first = o.only >= 0 ? o.only : 0, last = o.only >= 0 ? o.only + 1 : o.count;
    int passed = 0, failed = 0, shrunk = 0, fams[NFAM] = {0};
    double t0 = now_s();
    for (int ki = first; ki < last; ki++) {
        if (o.max_seconds > 0 && now_s() - t0 > o.max_seconds) {
            printf("stopping after %d kernels: --max-seconds %.0f reached\n", ki - first, o.max_seconds);
            break;
        }
        if (device_lost) {
            printf("stopping: the device was lost (a kernel fault leaves the context unusable)\n");
            failed++;
            break;
        }
        kspec K;
        generate(o.seed, ki, o.families, &K);
        for (int i = 0; i < K.nst; i++) fams[K.st[i].fam]++;
        if (o.keep) keep_kernel(o.keep, &K, o.seed, ki);
        outcome O;
        run_kernel(&o, &K, o.seed, ki, &O);
        if (o.verbose || (o.only >= 0 && O.cls == R_NONE)) {
            printf("---- kernel %d: %s\n", ki, fclass_name[O.cls]);
            print_kernel(&K);
        }
        if (O.cls == R_NONE) {
            passed++;
            continue;
        }
        failed++;
        printf("FAIL kernel %d (seed %llu): %s: %s\n", ki, (unsigned long long)o.seed, fclass_name[O.cls], O.msg);
        print_kernel(&K);
        if (o.shrink && !device_lost && shrunk++ < 3) {
            shrink(&o, &K, o.seed, ki, &O, o.max_seconds > 0 ? t0 + o.max_seconds : 0);
            printf("MINIMAL kernel %d (seed %llu): %s: %s\n", ki, (unsigned long long)o.seed, fclass_name[O.cls], O.msg);
            print_kernel(&K);
        }
        char devname[16];
        snprintf(devname, sizeof devname, o.cpu ? "cpu" : "%d", o.ordinal);
        printf("reproduce: %s --device %s --seed %llu --only %d%s%s\n", prog, devname, (unsigned long long)o.seed, ki,
               o.families ? " --family " : "", o.family_arg);
    }
    printf("%d kernels: %d passed, %d failed (seed %llu, %.1f s, %s%s); statements:", passed + failed, passed, failed,
           (unsigned long long)o.seed, now_s() - t0, o.cpu ? "cpu device" : dinfo.arch, o.cpu && o.ptx ? " + PTX" : "");
    for (int f = 0; f < NFAM; f++) printf(" %s %d", fam_name[f], fams[f]);
    printf("\n");
    blkrt_device_close(dev);
    return failed ? 1 : 0;
}

/* gpu_check — every stdlib kernel without `dot` on a real GPU, against the
 * CPU interpreter (label gpu; docs/gpu-testing.md).
 *
 *   gpu_check [check] [--stdlib DIR] [--device N|cpu] [--seed S] [--quick]
 *             [--kernel NAME]... [--dry-run] [--list]
 *   gpu_check compile-bench [--stdlib DIR] [--device N] [--runs R]
 *   gpu_check launch-bench  [--stdlib DIR] [--device N] [--launches L]
 *   gpu_check ptx FILE.blk [--kernel K] [--arch A] [-D NAME=V]... [-o OUT.ptx]
 *
 * check (the default): for each row of gpu_kernels.h, each const config and
 * each size: compile the .blk source with libblkc for the device's arch,
 * load the PTX through libblkrt, fill the inputs with fresh random data
 * (seeded; the seed is printed), run the kernel on the CPU interpreter
 * (blkc_interp_run) for the reference, then on the GPU twice — aligned
 * pointers (the d16 entry where every integer is a multiple of 16) and every
 * pointer moved by one element (the fallback entry; where an integer
 * argument is 1, an eq1 variant compiled for the case: add_eq1_variants) —
 * on buffers poisoned
 * with 0xFF bytes and framed by guard bytes, and compare: integers
 * identical, floats within the row's tolerance, no poison left where the
 * reference wrote, nothing written where it did not (nor into the guards or
 * the inputs), no NaN where the reference has none. One line per case, a
 * table per kernel, then "N passed, M failed". Exit 0 iff all passed, 1 on
 * failures, 2 on bad usage, 77 without a GPU/driver.
 *
 * BLK_GPU_ARCH=sm_80 compiles for that arch instead of the device's own
 * (older PTX runs on newer GPUs), so one H100 checks both backends.
 *
 * --dry-run stops each case after the launch (for the fake driver, which runs
 * no kernels): compile, load, argument checks, variant choice (checked
 * against the fake's launch record), poisoning, guards and the reference run
 * are still checked. --device cpu runs the "GPU" half on libblkrt's CPU
 * interpreter device (one entry per kernel): a self-test of this program.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "blk/blkc.h"
#include "blk/blkrt.h"
#include "blk/blkrt_jit.h"
#include "../runtime/fake_cuda.h"

/* LLVM's static libraries here were built against glibc 2.36 and call
 * arc4random (GLIBC_2.36). Defining it in the executable resolves those calls
 * at link time, so the static bundle needs only glibc 2.34 (Ubuntu 22.04 has
 * 2.35). Quality is irrelevant: LLVM seeds hashing with it. */
uint32_t arc4random(void) {
    uint32_t v = 0;
    if (getrandom(&v, sizeof v, GRND_NONBLOCK) != (ssize_t)sizeof v) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        v = (uint32_t)ts.tv_nsec * 2654435761u ^ (uint32_t)ts.tv_sec;
    }
    return v;
}

/* ------------------------------------------------------------------ table */

typedef struct {
    int ulp;      /* pass if within this many units in the last place of the output's type */
    double rtol;  /* or if |got - want| <= rtol * (|want| + rms(want over the output)) */
} gk_tol;

#define TOL_EXACT ((gk_tol){0, 0})
#define TOL_BF16 ((gk_tol){1, 1e-5})   /* f32 math rounded to bf16/f16: one unit of the narrow type
                                          (or f32-level error where the result is small: cancellation) */
#define TOL_BF16_MATH ((gk_tol){1, 1e-3}) /* the same after libdevice exp2 (ex2.approx) and sin/cos of
                                              angles up to ~500 rad: angle errors ~1e-4 */
#define TOL_MATH ((gk_tol){4, 1e-5})   /* libdevice vs libm (exp, erf, rsqrt): a few f32 ulps, or
                                          rtol 1e-5 where the formula cancels (gelu, x*scale+shift) */
#define TOL_RED ((gk_tol){4, 1e-5})    /* reductions and scans in another order */
#define TOL_FP8 ((gk_tol){1, 1e-2})    /* f8 dots on sm_90a's wgmma: the tensor cores align each
                                          instruction's 32 products to the largest and keep ~14 bits
                                          (an FP22 sum); blk adds each dot's sum to the f32 accumulator
                                          (two-level accumulation), which bounds the error to one dot's K:
                                          a model of that hardware gives at most 1.8e-3 (BK = 128) and
                                          3.8e-3 (BK = 256) of |want| + rms at K <= 512 */
#define TOL_ATTN ((gk_tol){2, 1e-2})   /* attention: the probabilities are cast to bf16 before the second
                                          dot, so an f32 difference of one ulp in exp or in the first dot's
                                          sum order can move a p by one bf16 unit (2^-8 relative): the
                                          output moves by up to ~p*|v|/l * 2^-8, a few 1e-3 of its rms */

#define GK_MAX_CONFIGS 12 /* configurations per row of gpu_kernels.h */
typedef struct {
    const char *file, *kernel, *args, *grid, *require;
    const char *configs[GK_MAX_CONFIGS];
    const char *sizes[10];
    gk_tol tol;
} gk_kernel;

#include "gpu_kernels.h"

#define NKERNELS ((int)(sizeof gk_table / sizeof gk_table[0]))
#define QUICK_SIZES 2
#define GUARD 1024          /* bytes of 0xFF before and after every buffer */
#define MAX_ARGS 32
#define MAX_VARS 48

/* ------------------------------------------------------------------ util */

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static char *read_text(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)n + 1);
    if (s && fread(s, 1, (size_t)n, f) != (size_t)n) {
        free(s);
        s = NULL;
    }
    fclose(f);
    if (s) s[n] = 0, *len = (size_t)n;
    return s;
}

static int cmp_i64(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, size_t n) {
    qsort(v, n, sizeof *v, cmp_double);
    return n ? (n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2])) : 0;
}

/* splitmix64: seeds; xorshift64*: data */
static uint64_t splitmix(uint64_t *s) {
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
static uint64_t rng_state;
static uint64_t rng_u64(void) {
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 0x2545F4914F6CDD1Dull;
}
static double rng_uniform(double lo, double hi) { return lo + (hi - lo) * (double)(rng_u64() >> 11) * 0x1p-53; }
static uint64_t fnv(const char *s, uint64_t h) {
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 0x100000001B3ull;
    return h;
}

/* ------------------------------------------------------------------ dtypes */

typedef enum { K_FLOAT, K_INT, K_UINT, K_BOOL } dkind;
typedef struct {
    const char *name;
    int size;
    dkind kind;
} dtype;
static const dtype dtypes[] = {
    {"f32", 4, K_FLOAT}, {"f64", 8, K_FLOAT}, {"f16", 2, K_FLOAT}, {"bf16", 2, K_FLOAT}, {"i8", 1, K_INT},
    {"i16", 2, K_INT},   {"i32", 4, K_INT},   {"i64", 8, K_INT},   {"u8", 1, K_UINT},   {"u16", 2, K_UINT},
    {"u32", 4, K_UINT},  {"u64", 8, K_UINT},  {"bool", 1, K_BOOL}, {"f8e4m3", 1, K_FLOAT}, {"f8e5m2", 1, K_FLOAT},
};
static const dtype *find_dtype(const char *name) {
    for (size_t i = 0; i < sizeof dtypes / sizeof dtypes[0]; i++)
        if (!strcmp(dtypes[i].name, name)) return &dtypes[i];
    return NULL;
}

static uint16_t f32_to_bf16(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    if ((u & 0x7fffffff) > 0x7f800000) return (uint16_t)((u >> 16) | 0x40);
    u += 0x7fff + ((u >> 16) & 1);
    return (uint16_t)(u >> 16);
}
static float bf16_to_f32(uint16_t h) {
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}
static uint16_t f32_to_f16(float f) {
    uint32_t x;
    memcpy(&x, &f, 4);
    uint16_t sign = (uint16_t)((x >> 16) & 0x8000);
    uint32_t ax = x & 0x7fffffff;
    if (ax > 0x7f800000) return sign | 0x7e00;
    if (ax >= 0x477ff000) return sign | 0x7c00; /* >= 65520 rounds to inf */
    if (ax < 0x38800000) {                      /* below 2^-14: subnormal */
        float a;
        memcpy(&a, &ax, 4);
        return (uint16_t)(sign | (uint16_t)nearbyint((double)a * 16777216.0));
    }
    uint32_t h = (((ax >> 23) - 112) << 10) | ((ax & 0x7fffff) >> 13), rem = ax & 0x1fff;
    if (rem > 0x1000 || (rem == 0x1000 && (h & 1))) h++;
    return (uint16_t)(sign | h);
}
static float f16_to_f32(uint16_t h) {
    int e = (h >> 10) & 31, m = h & 1023;
    float v = e == 0 ? ldexpf((float)m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexpf((float)(m | 1024), e - 25);
    return (h & 0x8000) ? -v : v;
}

/* f8 (OCP): e4m3 (bias 7, no inf, S.1111.111 NaN), e5m2 (bias 15, IEEE). */
static float f8_to_f32(uint8_t b, bool e5m2) {
    int ebits = e5m2 ? 5 : 4, mbits = e5m2 ? 2 : 3, bias = e5m2 ? 15 : 7;
    int e = (b >> mbits) & ((1 << ebits) - 1), m = b & ((1 << mbits) - 1);
    float v;
    if (e5m2 && e == 31) v = m ? NAN : INFINITY;
    else if (!e5m2 && e == 15 && m == 7) v = NAN;
    else v = e == 0 ? ldexpf((float)m, 1 - bias - mbits) : ldexpf((float)(m | (1 << mbits)), e - bias - mbits);
    return (b & 0x80) ? -v : v;
}
/* The nearest finite f8 (ties to the even code); inputs only, so a search
 * over the 256 codes is fast enough and obviously right. */
static uint8_t f32_to_f8(float f, bool e5m2) {
    int best = 0;
    double bd = INFINITY;
    for (int c = 0; c < 256; c++) {
        float v = f8_to_f32((uint8_t)c, e5m2);
        if (!isfinite(v)) continue;
        double d = fabs((double)v - (double)f);
        if (d < bd || (d == bd && !(c & 1))) bd = d, best = c;
    }
    return (uint8_t)best;
}

static void put_float(const dtype *t, void *p, double v) {
    float f = (float)v;
    if (!strncmp(t->name, "f8", 2)) *(uint8_t *)p = f32_to_f8(f, !strcmp(t->name, "f8e5m2"));
    else if (!strcmp(t->name, "f32")) memcpy(p, &f, 4);
    else if (!strcmp(t->name, "f64")) memcpy(p, &v, 8);
    else {
        uint16_t h = !strcmp(t->name, "bf16") ? f32_to_bf16(f) : f32_to_f16(f);
        memcpy(p, &h, 2);
    }
}
static double get_float(const dtype *t, const void *p) {
    if (!strncmp(t->name, "f8", 2)) return f8_to_f32(*(const uint8_t *)p, !strcmp(t->name, "f8e5m2"));
    if (!strcmp(t->name, "f32")) {
        float f;
        memcpy(&f, p, 4);
        return f;
    }
    if (!strcmp(t->name, "f64")) {
        double d;
        memcpy(&d, p, 8);
        return d;
    }
    uint16_t h;
    memcpy(&h, p, 2);
    return !strcmp(t->name, "bf16") ? bf16_to_f32(h) : f16_to_f32(h);
}
static void put_int(const dtype *t, void *p, int64_t v) {
    if (t->kind == K_BOOL) v = v != 0;
    memcpy(p, &v, (size_t)t->size); /* little-endian: the low bytes */
}
/* The float's bits as an integer that orders like the values (for ulps). */
static int64_t ordered_bits(const dtype *t, const void *p) {
    int64_t b = 0;
    memcpy(&b, p, (size_t)t->size);
    int bits = 8 * t->size;
    uint64_t sign = (uint64_t)1 << (bits - 1);
    uint64_t u = (uint64_t)b & (bits == 64 ? ~0ull : ((uint64_t)1 << bits) - 1);
    return (u & sign) ? -(int64_t)(u & (sign - 1)) : (int64_t)u;
}

/* ------------------------------------------------------------------ expressions */

typedef struct {
    char name[32];
    int64_t v;
} var;
typedef struct {
    var v[MAX_VARS];
    int n;
} env;

static void env_set(env *e, const char *name, size_t len, int64_t v) {
    for (int i = 0; i < e->n; i++)
        if (strlen(e->v[i].name) == len && !strncmp(e->v[i].name, name, len)) {
            e->v[i].v = v;
            return;
        }
    if (e->n < MAX_VARS && len < sizeof e->v[0].name) {
        memcpy(e->v[e->n].name, name, len);
        e->v[e->n].name[len] = 0;
        e->v[e->n++].v = v;
    }
}

typedef struct {
    const char *p;
    const env *e;
    char err[160];
} parser;

static void skip_ws(parser *P) {
    while (isspace((unsigned char)*P->p)) P->p++;
}
static bool accept(parser *P, const char *tok) {
    skip_ws(P);
    size_t n = strlen(tok);
    if (strncmp(P->p, tok, n)) return false;
    /* "<" must not take the first half of "<<" or "<=", nor "&" of "&&" */
    if (n == 1 && (tok[0] == '<' || tok[0] == '>') && (P->p[1] == '=' || P->p[1] == tok[0])) return false;
    P->p += n;
    return true;
}
static void fail(parser *P, const char *fmt, ...) {
    if (P->err[0]) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(P->err, sizeof P->err, fmt, ap);
    va_end(ap);
}

static int64_t p_or(parser *P);
static int64_t p_primary(parser *P) {
    skip_ws(P);
    if (accept(P, "(")) {
        int64_t v = p_or(P);
        if (!accept(P, ")")) fail(P, "expected ')' at '%s'", P->p);
        return v;
    }
    if (accept(P, "-")) return -p_primary(P);
    if (isdigit((unsigned char)*P->p)) {
        char *end;
        int64_t v = strtoll(P->p, &end, 0);
        P->p = end;
        return v;
    }
    if (isalpha((unsigned char)*P->p) || *P->p == '_') {
        const char *s = P->p;
        while (isalnum((unsigned char)*P->p) || *P->p == '_') P->p++;
        size_t len = (size_t)(P->p - s);
        skip_ws(P);
        if (*P->p == '(') {
            P->p++;
            int64_t a = p_or(P), b = 0;
            if (!accept(P, ",")) fail(P, "expected ',' in %.*s(...)", (int)len, s);
            b = p_or(P);
            if (!accept(P, ")")) fail(P, "expected ')' after %.*s(...)", (int)len, s);
            if (len == 4 && !strncmp(s, "cdiv", 4)) return b ? (a + b - 1) / b : 0;
            if (len == 3 && !strncmp(s, "min", 3)) return a < b ? a : b;
            if (len == 3 && !strncmp(s, "max", 3)) return a > b ? a : b;
            fail(P, "unknown function %.*s", (int)len, s);
            return 0;
        }
        for (int i = 0; i < P->e->n; i++)
            if (strlen(P->e->v[i].name) == len && !strncmp(P->e->v[i].name, s, len)) return P->e->v[i].v;
        fail(P, "unknown name '%.*s'", (int)len, s);
        return 0;
    }
    fail(P, "unexpected '%s'", P->p);
    return 0;
}
static int64_t p_mul(parser *P) {
    int64_t v = p_primary(P);
    for (;;) {
        if (accept(P, "*")) v *= p_primary(P);
        else if (accept(P, "/")) {
            int64_t d = p_primary(P);
            v = d ? v / d : (fail(P, "division by 0"), 0);
        } else if (accept(P, "%")) {
            int64_t d = p_primary(P);
            v = d ? v % d : (fail(P, "division by 0"), 0);
        } else return v;
    }
}
static int64_t p_add(parser *P) {
    int64_t v = p_mul(P);
    for (;;) {
        if (accept(P, "+")) v += p_mul(P);
        else if (accept(P, "-")) v -= p_mul(P);
        else return v;
    }
}
static int64_t p_shift(parser *P) {
    int64_t v = p_add(P);
    for (;;) {
        if (accept(P, "<<")) v <<= p_add(P);
        else if (accept(P, ">>")) v >>= p_add(P);
        else return v;
    }
}
static int64_t p_cmp(parser *P) {
    int64_t v = p_shift(P);
    if (accept(P, "<=")) return v <= p_shift(P);
    if (accept(P, ">=")) return v >= p_shift(P);
    if (accept(P, "==")) return v == p_shift(P);
    if (accept(P, "!=")) return v != p_shift(P);
    if (accept(P, "<")) return v < p_shift(P);
    if (accept(P, ">")) return v > p_shift(P);
    return v;
}
static int64_t p_and(parser *P) {
    int64_t v = p_cmp(P);
    while (accept(P, "&&")) {
        int64_t w = p_cmp(P);
        v = v && w;
    }
    return v;
}
static int64_t p_or(parser *P) {
    int64_t v = p_and(P);
    while (accept(P, "||")) {
        int64_t w = p_and(P);
        v = v || w;
    }
    return v;
}

/* Evaluate expression text [s, s+len) (len < 0: to the NUL). */
static bool eval_expr(const env *e, const char *s, int len, int64_t *out, char *err, size_t errn) {
    char buf[512];
    size_t n = len < 0 ? strlen(s) : (size_t)len;
    if (n >= sizeof buf) n = sizeof buf - 1;
    memcpy(buf, s, n);
    buf[n] = 0;
    parser P = {.p = buf, .e = e};
    *out = p_or(&P);
    skip_ws(&P);
    if (!P.err[0] && *P.p) fail(&P, "trailing '%s'", P.p);
    if (P.err[0]) {
        snprintf(err, errn, "'%s': %s", buf, P.err);
        return false;
    }
    return true;
}

/* Split "a,b(c,d),e" at top-level commas into at most max parts. */
static int split_top(const char *s, int len, const char **part, int *plen, int max) {
    int n = 0, depth = 0, start = 0;
    for (int i = 0; i <= len; i++) {
        char c = i < len ? s[i] : ',';
        if (c == '(') depth++;
        else if (c == ')') depth--;
        else if (c == ',' && depth == 0) {
            if (n < max) part[n] = s + start, plen[n] = i - start, n++;
            start = i + 1;
        }
    }
    return n;
}

/* "name=EXPR name=EXPR ..." (sizes) into e, in order. */
static bool parse_assignments(env *e, const char *text, char *err, size_t errn) {
    const char *p = text;
    for (;;) {
        while (isspace((unsigned char)*p)) p++;
        if (!*p) return true;
        const char *eq = strchr(p, '=');
        if (!eq) {
            snprintf(err, errn, "'%s': expected name=value", p);
            return false;
        }
        const char *v = eq + 1, *end = v;
        int depth = 0;
        while (*end && (depth || !isspace((unsigned char)*end))) depth += (*end == '(') - (*end == ')'), end++;
        int64_t val;
        if (!eval_expr(e, v, (int)(end - v), &val, err, errn)) return false;
        env_set(e, p, (size_t)(eq - p), val);
        p = end;
    }
}

/* ------------------------------------------------------------------ kernel metadata */

typedef struct {
    char entry[160];
    char spec[MAX_ARGS][8];    /* "d16", "eq1", "-" per parameter */
    int nassume;
} variant;

typedef struct {
    int nparams;
    char pname[MAX_ARGS][48];
    char ptype[MAX_ARGS][24];  /* as in blk-meta: "*f32", "i32", ... */
    int nvariants;
    variant var[16];           /* most assumptions first, as the runtime orders them */
    uint64_t nospec;           /* @do_not_specialize parameters */
    env consts;
} kmeta;

static const char *field(const char *line, const char *key, char *out, size_t n) {
    char pat[32];
    snprintf(pat, sizeof pat, " %s=", key);
    const char *p = strstr(line, pat);
    out[0] = 0;
    if (!p) return NULL;
    p += strlen(pat);
    size_t i = 0;
    while (p[i] && p[i] != ' ' && p[i] != '\n' && i + 1 < n) out[i] = p[i], i++;
    out[i] = 0;
    return out;
}

/* Parse the blk-meta lines of `kernel` out of text (PTX or CPU meta). */
static bool parse_meta(const char *text, const char *kernel, kmeta *m, char *err, size_t errn) {
    memset(m, 0, sizeof *m);
    char want[128];
    snprintf(want, sizeof want, " kernel=%s ", kernel);
    for (const char *line = text; line && *line;) {
        const char *nl = strchr(line, '\n');
        size_t len = nl ? (size_t)(nl - line) : strlen(line);
        char buf[4096];
        if (len >= sizeof buf) len = sizeof buf - 1;
        memcpy(buf, line, len);
        buf[len] = 0;
        line = nl ? nl + 1 : NULL;
        if (!strstr(buf, "blk-meta v1") || !strstr(buf, want)) continue;
        if (m->nvariants == 16) break;
        variant *v = &m->var[m->nvariants++];
        char params[2048], consts[1024], spec[1024], nospec[1024];
        field(buf, "entry", v->entry, sizeof v->entry);
        field(buf, "params", params, sizeof params);
        field(buf, "consts", consts, sizeof consts);
        field(buf, "spec", spec, sizeof spec);
        field(buf, "nospec", nospec, sizeof nospec);
        if (m->nvariants == 1) {
            for (char *s = strtok(params, ","); s && m->nparams < MAX_ARGS; s = strtok(NULL, ",")) {
                char *colon = strchr(s, ':');
                if (!colon) continue;
                *colon = 0;
                snprintf(m->pname[m->nparams], sizeof m->pname[0], "%s", s);
                snprintf(m->ptype[m->nparams], sizeof m->ptype[0], "%s", colon + 1);
                m->nparams++;
            }
            for (char *s = strtok(consts, ","); s; s = strtok(NULL, ",")) {
                char *c1 = strchr(s, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
                if (!c2) continue;
                *c1 = 0;
                double d = strtod(c2 + 1, NULL);
                int64_t iv = !strcmp(c2 + 1, "true") ? 1 : (int64_t)d;
                env_set(&m->consts, s, strlen(s), iv);
            }
            for (char *s = strtok(nospec, ","); s; s = strtok(NULL, ","))
                for (int i = 0; i < m->nparams; i++)
                    if (!strcmp(m->pname[i], s)) m->nospec |= 1ull << i;
        }
        int i = 0;
        for (int k = 0; k < MAX_ARGS; k++) snprintf(v->spec[k], sizeof v->spec[k], "-");
        for (char *s = strtok(spec, ","); s && i < MAX_ARGS; s = strtok(NULL, ","), i++) {
            char *colon = strrchr(s, ':');
            snprintf(v->spec[i], sizeof v->spec[i], "%s", colon ? colon + 1 : s);
            v->nassume += strcmp(v->spec[i], "-") != 0;
        }
    }
    if (!m->nvariants) {
        snprintf(err, errn, "no blk-meta line for kernel '%s'", kernel);
        return false;
    }
    /* stable sort: most assumptions first (the runtime's order) */
    for (int i = 1; i < m->nvariants; i++)
        for (int j = i; j > 0 && m->var[j].nassume > m->var[j - 1].nassume; j--) {
            variant t = m->var[j];
            m->var[j] = m->var[j - 1];
            m->var[j - 1] = t;
        }
    return true;
}

/* ------------------------------------------------------------------ cases */

typedef enum { A_IN, A_OUT, A_ZERO, A_INT, A_FLOAT } arg_role;

typedef struct {
    arg_role role;
    char name[48];
    const dtype *t;       /* element type (buffers) */
    int64_t count;        /* elements */
    bool dist_int;        /* ri(lo,hi), sri(lo,hi) or cum(lo,hi) */
    bool sorted;          /* sri(lo,hi): the integers in ascending order (offset tables) */
    bool dist_cum;        /* cum(lo,hi): 0, then running sums of ri(lo,hi) steps */
    bool perm;            /* perm: 0 .. count-1 shuffled (a block table) */
    double lo, hi;        /* distribution; A_FLOAT: u(lo,hi) or lo == hi literal */
    int64_t ival;         /* A_INT */
    double fval;          /* A_FLOAT, drawn */
    unsigned char *host;  /* inputs: the data; outputs: the reference result */
    size_t bytes;
} arg;

typedef struct {
    int nargs;
    arg a[MAX_ARGS];
    uint32_t grid[3];
} case_t;

static void free_case(case_t *c) {
    for (int i = 0; i < c->nargs; i++) free(c->a[i].host);
    c->nargs = 0;
}

/* Parse a row's argument list against the kernel's parameters and env. */
/* scalars_only: the integer and float arguments (what a launch key needs),
 * no buffers. */
static bool build_case(const gk_kernel *K, const kmeta *m, const env *e, bool scalars_only, case_t *c, char *err,
                       size_t errn) {
    memset(c, 0, sizeof *c);
    const char *p = K->args;
    int i = 0;
    for (;;) {
        while (isspace((unsigned char)*p)) p++;
        if (!*p) break;
        const char *end = p;
        int depth = 0;
        while (*end && (depth || !isspace((unsigned char)*end))) depth += (*end == '(') - (*end == ')'), end++;
        if (i >= m->nparams) {
            snprintf(err, errn, "the table has more arguments than the kernel's %d parameters", m->nparams);
            return false;
        }
        arg *a = &c->a[i];
        const char *colon = memchr(p, ':', (size_t)(end - p));
        if (!colon) {
            snprintf(err, errn, "argument '%.*s': expected name:role", (int)(end - p), p);
            return false;
        }
        snprintf(a->name, sizeof a->name, "%.*s", (int)(colon - p), p);
        if (strcmp(a->name, m->pname[i])) {
            snprintf(err, errn, "argument %d is '%s' in the table but '%s' in the kernel", i + 1, a->name,
                     m->pname[i]);
            return false;
        }
        const char *ty = m->ptype[i];
        bool is_ptr = ty[0] == '*';
        const char *r = colon + 1;
        if (r[0] == '=') { /* scalar */
            const char *v = r + 1;
            int vlen = (int)(end - v);
            const dtype *t = find_dtype(ty);
            if (is_ptr || !t) {
                snprintf(err, errn, "'%s' (%s) is not a scalar parameter", a->name, ty);
                return false;
            }
            if (t->kind == K_FLOAT) {
                a->role = A_FLOAT;
                if (!strncmp(v, "u(", 2)) {
                    if (sscanf(v, "u(%lf,%lf)", &a->lo, &a->hi) != 2) {
                        snprintf(err, errn, "'%s': bad u(lo,hi)", a->name);
                        return false;
                    }
                    a->fval = rng_uniform(a->lo, a->hi);
                } else {
                    char *fe;
                    a->fval = strtod(v, &fe);
                    if (fe != end) {
                        snprintf(err, errn, "'%s': bad float '%.*s'", a->name, vlen, v);
                        return false;
                    }
                }
            } else {
                a->role = A_INT;
                if (!eval_expr(e, v, vlen, &a->ival, err, errn)) return false;
            }
        } else { /* buffer */
            const char *open = strchr(r, '(');
            if (!is_ptr || !open || open > end || end[-1] != ')') {
                snprintf(err, errn, "'%s' (%s): expected in(...), out(...) or zero(...)", a->name, ty);
                return false;
            }
            size_t rl = (size_t)(open - r);
            a->role = rl == 2 && !strncmp(r, "in", 2)     ? A_IN
                      : rl == 3 && !strncmp(r, "out", 3)  ? A_OUT
                      : rl == 4 && !strncmp(r, "zero", 4) ? A_ZERO
                                                          : (arg_role)-1;
            if ((int)a->role < 0) {
                snprintf(err, errn, "'%s': unknown role '%.*s'", a->name, (int)rl, r);
                return false;
            }
            if (scalars_only) {
                i++;
                p = end;
                continue;
            }
            const char *et = ty + 1;
            if (!strncmp(et, "const.", 6)) et += 6;
            else if (!strncmp(et, "const ", 6)) et += 6;
            a->t = find_dtype(et);
            if (!a->t) {
                snprintf(err, errn, "'%s': unsupported element type %s", a->name, ty);
                return false;
            }
            const char *part[3];
            int plen[3];
            int np = split_top(open + 1, (int)(end - open - 2), part, plen, 3);
            if (np < 1 || !eval_expr(e, part[0], plen[0], &a->count, err, errn)) {
                if (np < 1) snprintf(err, errn, "'%s': no count", a->name);
                return false;
            }
            if (a->count < 0) a->count = 0;
            a->dist_int = a->t->kind != K_FLOAT;
            a->lo = a->dist_int ? -100 : -2;
            a->hi = a->dist_int ? 100 : 2;
            if (a->t->kind == K_UINT || a->t->kind == K_BOOL) a->lo = 0, a->hi = a->t->kind == K_BOOL ? 2 : 200;
            if (np > 1) {
                const char *d = part[1];
                int dl = plen[1];
                const char *dp[2];
                int dpl[2];
                bool is_sri = dl > 4 && !strncmp(d, "sri(", 4), is_cum = dl > 4 && !strncmp(d, "cum(", 4);
                a->perm = dl == 4 && !strncmp(d, "perm", 4) && a->t->kind == K_INT && a->role == A_IN;
                bool is_ri = is_sri || is_cum || (dl > 3 && !strncmp(d, "ri(", 3)), is_u = dl > 2 && !strncmp(d, "u(", 2);
                if (!a->perm) {
                    if (!(is_ri || is_u) || d[dl - 1] != ')') {
                        snprintf(err, errn,
                                 "'%s': distribution '%.*s' is not u(lo,hi), ri(lo,hi), sri(lo,hi), cum(lo,hi) or perm",
                                 a->name, dl, d);
                        return false;
                    }
                    int off = is_sri || is_cum ? 4 : is_ri ? 3 : 2;
                    a->sorted = is_sri;
                    a->dist_cum = is_cum;
                    if (split_top(d + off, dl - off - 1, dp, dpl, 2) != 2) {
                        snprintf(err, errn, "'%s': distribution needs (lo,hi)", a->name);
                        return false;
                    }
                    if (is_ri) {
                        int64_t lo, hi;
                        if (!eval_expr(e, dp[0], dpl[0], &lo, err, errn) || !eval_expr(e, dp[1], dpl[1], &hi, err, errn))
                            return false;
                        if (hi <= lo) hi = lo + 1;
                        a->dist_int = true, a->lo = (double)lo, a->hi = (double)hi;
                    } else {
                        a->dist_int = false;
                        a->lo = strtod(dp[0], NULL), a->hi = strtod(dp[1], NULL);
                    }
                }
            }
            a->bytes = (size_t)a->count * (size_t)a->t->size;
            a->host = malloc(a->bytes + 1);
            int64_t running = 0; /* cum(lo,hi) */
            for (int64_t k = 0; k < a->count; k++) {
                unsigned char *q = a->host + (size_t)k * (size_t)a->t->size;
                if (a->role == A_OUT) memset(q, 0xFF, (size_t)a->t->size);
                else if (a->dist_cum) {
                    int64_t span = (int64_t)(a->hi - a->lo);
                    put_int(a->t, q, running);
                    running += (int64_t)a->lo + (int64_t)(rng_u64() % (uint64_t)(span > 0 ? span : 1));
                }
                else if (a->role == A_ZERO) memset(q, 0, (size_t)a->t->size);
                else if (a->perm) put_int(a->t, q, k); /* shuffled below */
                else if (a->dist_int) {
                    int64_t span = (int64_t)(a->hi - a->lo);
                    int64_t v = (int64_t)a->lo + (int64_t)(rng_u64() % (uint64_t)(span > 0 ? span : 1));
                    if (a->t->kind == K_FLOAT) put_float(a->t, q, (double)v);
                    else put_int(a->t, q, v);
                } else {
                    double v = rng_uniform(a->lo, a->hi);
                    if (a->t->kind == K_FLOAT) put_float(a->t, q, v);
                    else put_int(a->t, q, (int64_t)v);
                }
            }
            /* perm: 0 .. count-1 in a random order (Fisher-Yates on the elements) */
            for (int64_t k = a->count - 1; a->perm && k > 0; k--) {
                size_t sz = (size_t)a->t->size, j = (size_t)(rng_u64() % (uint64_t)(k + 1));
                unsigned char t[8];
                memcpy(t, a->host + (size_t)k * sz, sz);
                memcpy(a->host + (size_t)k * sz, a->host + j * sz, sz);
                memcpy(a->host + j * sz, t, sz);
            }
            if (a->sorted && a->role == A_IN && a->t->kind != K_FLOAT) {
                /* sri: the integers drawn as for ri, put in ascending order (an offset table, as a prefix
                 * sum of counts is: equal neighbours are empty segments) */
                int64_t *v = malloc(sizeof *v * (size_t)(a->count ? a->count : 1));
                int sh = 64 - 8 * a->t->size;
                for (int64_t k = 0; k < a->count; k++) {
                    uint64_t u = 0;
                    memcpy(&u, a->host + (size_t)k * (size_t)a->t->size, (size_t)a->t->size);
                    v[k] = (int64_t)(u << sh) >> sh; /* sign-extended back (the drawn values fit) */
                }
                qsort(v, (size_t)a->count, sizeof *v, cmp_i64);
                for (int64_t k = 0; k < a->count; k++) put_int(a->t, a->host + (size_t)k * (size_t)a->t->size, v[k]);
                free(v);
            }
        }
        i++;
        p = end;
    }
    c->nargs = i;
    if (i != m->nparams) {
        snprintf(err, errn, "the table has %d arguments, the kernel %d parameters", i, m->nparams);
        return false;
    }
    /* grid */
    const char *gp[3];
    int gl[3];
    int ng = split_top(K->grid, (int)strlen(K->grid), gp, gl, 3);
    for (int d = 0; d < 3; d++) {
        int64_t g = 1;
        if (d < ng && !eval_expr(e, gp[d], gl[d], &g, err, errn)) return false;
        c->grid[d] = (uint32_t)(g < 1 ? 1 : g);
    }
    return true;
}

/* ------------------------------------------------------------------ comparison */

typedef struct {
    long written, bad, unwritten, stray, nan;
    int64_t max_ulp;
    double max_rel;
    char first[256];   /* the first bad element, described */
} cmp_stats;

static bool is_poison(const unsigned char *p, int size) {
    for (int i = 0; i < size; i++)
        if (p[i] != 0xFF) return false;
    return true;
}

/* got vs want (the interpreter's result), both started from the same bytes. */
static void compare(const arg *a, const unsigned char *got, gk_tol tol, bool poisoned, cmp_stats *s) {
    const dtype *t = a->t;
    int sz = t->size;
    double rms = 0;
    long nrms = 0;
    if (t->kind == K_FLOAT) {
        for (int64_t i = 0; i < a->count; i++) {
            const unsigned char *w = a->host + (size_t)i * (size_t)sz;
            if (poisoned && is_poison(w, sz)) continue;
            double v = get_float(t, w);
            if (isfinite(v)) rms += v * v, nrms++;
        }
        rms = nrms ? sqrt(rms / (double)nrms) : 0;
    }
    for (int64_t i = 0; i < a->count; i++) {
        const unsigned char *w = a->host + (size_t)i * (size_t)sz, *g = got + (size_t)i * (size_t)sz;
        bool wp = poisoned && is_poison(w, sz), gp = poisoned && is_poison(g, sz);
        const char *why = NULL;
        if (!wp) s->written++;
        if (wp || t->kind != K_FLOAT) {
            if (memcmp(w, g, (size_t)sz)) {
                why = wp ? "written where the reference wrote nothing" : gp ? "not written (poison left)" : "differs";
                if (wp) s->stray++;
                else if (gp) s->unwritten++;
            }
        } else if (gp) {
            why = "not written (poison left)";
            s->unwritten++;
        } else {
            double wv = get_float(t, w), gv = get_float(t, g);
            if (isnan(wv) || isnan(gv)) {
                if (isnan(wv) != isnan(gv)) why = isnan(gv) ? "NaN where the reference has none" : "a number where the reference has NaN";
                if (isnan(gv) && !isnan(wv)) s->nan++;
            } else if (memcmp(w, g, (size_t)sz)) {
                int64_t og = ordered_bits(t, g), ow = ordered_bits(t, w);
                uint64_t d = og > ow ? (uint64_t)og - (uint64_t)ow : (uint64_t)ow - (uint64_t)og;
                int64_t ulp = d > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)d;
                double rel = fabs(gv - wv) / (fabs(wv) + rms);
                if (!isfinite(wv) || !isfinite(gv)) rel = INFINITY;
                if (ulp > s->max_ulp) s->max_ulp = ulp;
                if (rel > s->max_rel) s->max_rel = rel;
                if (ulp > tol.ulp && !(rel <= tol.rtol)) why = "out of tolerance";
            }
        }
        if (why) {
            if (!s->bad) {
                char wb[48], gb[48];
                if (t->kind == K_FLOAT) {
                    snprintf(wb, sizeof wb, wp ? "poison" : "%.9g", get_float(t, w));
                    snprintf(gb, sizeof gb, gp ? "poison" : "%.9g", get_float(t, g));
                } else {
                    int64_t wi = 0, gi = 0;
                    memcpy(&wi, w, (size_t)sz), memcpy(&gi, g, (size_t)sz);
                    snprintf(wb, sizeof wb, "%lld", (long long)wi);
                    snprintf(gb, sizeof gb, "%lld", (long long)gi);
                }
                snprintf(s->first, sizeof s->first, "%s[%lld]: got %s, want %s (%s)", a->name, (long long)i, gb, wb,
                         why);
            }
            s->bad++;
        }
    }
}

/* ------------------------------------------------------------------ devices */

typedef struct {
    bool cpu, dry_run, quick, perturb;
    int ordinal;
    const char *stdlib;
    uint64_t seed;
    const char *only[64];
    int nonly;
    const char *skip[64];
    int nskip;
    int case_timeout;  /* seconds without progress before the watchdog ends the run (exit 3) */
    const char *save_ptx;  /* directory: write each module's PTX there (KERNEL.CONFIG.ptx) */
} options;

static blkrt_device *dev;
static blkrt_device_info dinfo;
static fake_api fake;
static bool have_fake;

/* The arch blk compiles for on this device: its own, or BLK_GPU_ARCH
 * (sm_80 PTX runs on sm_90 GPUs: the suite checks both backends there). */
static const char *backend_arch(const char *arch) {
    const char *force = getenv("BLK_GPU_ARCH");
    if (force && *force) return force;
    int sm = 0;
    if (sscanf(arch, "sm_%d", &sm) != 1) return NULL;
    if (sm == 90) return "sm_90a";
    if (sm > 90) return "sm_90";
    if (sm >= 80) return "sm_80";
    return NULL;
}

/* Open device `o->ordinal` (or the CPU); 77 without a GPU, 1 on errors. */
static int open_device(const options *o) {
    if (!o->cpu) {
        int count = 0;
        blkrt_status st = blkrt_device_count(&count);
        if (st != BLKRT_OK || count == 0) {
            printf("skipped: no CUDA driver/GPU (%s)\n", st ? blkrt_last_error() : "the driver reports 0 devices");
            return 77;
        }
        if (o->ordinal >= count) {
            printf("skipped: no GPU %d (%d visible)\n", o->ordinal, count);
            return 77;
        }
    }
    if (blkrt_device_open(o->cpu ? BLKRT_DEVICE_CPU : o->ordinal, &dev) ||
        blkrt_device_get_info(dev, &dinfo)) {
        printf("error: opening the device: %s\n", blkrt_last_error());
        return 1;
    }
    const char *lib = getenv("BLKRT_CUDA_LIBRARY");
    if (!o->cpu && lib && *lib && fake_api_load(&fake) == 0) have_fake = true;
    return 0;
}

/* ------------------------------------------------------------------ one module */

typedef struct {
    blkc_ctx *ref;        /* the interpreter's build (also the PTX's, for GPUs) */
    blkrt_module *mod;
    blkrt_kernel *k;
    kmeta meta;
    double compile_ms, load_ms;
    int ptx_bytes;
} module_t;

/* Apply "NAME=V NAME=V" to a blkc context (and collect blkrt defines). */
static bool apply_config(const char *cfg, blkc_ctx *c, blkrt_define *defs, char names[][48], int *ndefs,
                         char *err, size_t errn) {
    *ndefs = 0;
    char buf[256];
    snprintf(buf, sizeof buf, "%s", cfg);
    for (char *s = strtok(buf, " "); s; s = strtok(NULL, " ")) {
        char *eq = strchr(s, '=');
        if (!eq || *ndefs >= 8) {
            snprintf(err, errn, "config '%s': expected NAME=VALUE", cfg);
            return false;
        }
        *eq = 0;
        if (blkc_define(c, s, eq + 1) != BLK_OK) {
            snprintf(err, errn, "config '%s': %s", cfg, blkc_diagnostics(c));
            return false;
        }
        blkrt_define *d = &defs[*ndefs];
        snprintf(names[*ndefs], 48, "%s", s);
        d->name = names[*ndefs];
        char *fe;
        long long iv = strtoll(eq + 1, &fe, 0);
        if (*fe == 0) d->is_float = 0, d->ival = iv;
        else if (!strcmp(eq + 1, "true") || !strcmp(eq + 1, "false")) d->is_float = 0, d->ival = eq[1] == 't';
        else d->is_float = 1, d->fval = strtod(eq + 1, NULL);
        (*ndefs)++;
    }
    return true;
}

/* Is every value of "NAME=V NAME=V" a number (what a blkrt_define holds)? */
static bool numeric_config(const char *cfg) {
    for (const char *p = strchr(cfg, '='); p; p = strchr(p + 1, '=')) {
        char *end;
        strtod(p + 1, &end);
        if (end == p + 1 || (*end && *end != ' ')) return false;
    }
    return true;
}

static void unload(module_t *M) {
    if (M->mod) blkrt_module_unload(M->mod);
    if (M->ref) blkc_free(M->ref);
    memset(M, 0, sizeof *M);
}

/* libblkc makes the d16 and the fallback entry of a kernel by default; a
 * case with an integer argument equal to 1 would run the fallback. So for
 * every size this run uses, the launch key of each placement (aligned
 * pointers d16, moved ones nothing; integers eq1 when 1, d16 when a multiple
 * of 16; @do_not_specialize parameters nothing) that holds an eq1 becomes
 * one more variant: stride 1 then runs the vectorised eq1 entry, checked
 * against the interpreter like the others. Size errors are left to the run
 * to report. */
static bool add_eq1_variants(const options *o, const gk_kernel *K, blkc_ctx *c, char *err, size_t errn) {
    const char *front = blkc_emit(c, "meta-front");
    kmeta m;
    if (!front || !parse_meta(front, K->kernel, &m, err, errn)) return false;
    for (int si = 0; si < 10 && K->sizes[si] && !(o->quick && si >= QUICK_SIZES); si++) {
        env e = m.consts;
        int64_t run = 1;
        char ignored[256];
        case_t cs;
        if (!parse_assignments(&e, K->sizes[si], ignored, sizeof ignored) ||
            (K->require && (!eval_expr(&e, K->require, -1, &run, ignored, sizeof ignored) || !run)) ||
            !build_case(K, &m, &e, true, &cs, ignored, sizeof ignored))
            continue;
        for (int off = 0; off < 2; off++) {
            char spec[1024] = "";
            bool eq1 = false;
            for (int i = 0; i < cs.nargs; i++) {
                const dtype *t = find_dtype(m.ptype[i]);
                const char *code = NULL;
                if (m.nospec & (1ull << i)) continue;
                if (m.ptype[i][0] == '*') code = off ? NULL : "d16";
                else if (cs.a[i].role == A_INT && t && (t->kind == K_INT || t->kind == K_UINT))
                    code = cs.a[i].ival == 1 ? "eq1" : ((uint64_t)cs.a[i].ival & 15) == 0 ? "d16" : NULL;
                if (!code) continue;
                eq1 |= code[0] == 'e';
                size_t l = strlen(spec);
                snprintf(spec + l, sizeof spec - l, "%s%s=%s", l ? "," : "", m.pname[i], code);
            }
            if (eq1 && blkc_add_variant(c, spec) != BLK_OK) {
                snprintf(err, errn, "variant %s: %s", spec, blkc_diagnostics(c));
                free_case(&cs);
                return false;
            }
        }
        free_case(&cs);
    }
    return true;
}

static bool load_module(const options *o, const gk_kernel *K, const char *cfg, module_t *M, char *err, size_t errn) {
    memset(M, 0, sizeof *M);
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", o->stdlib, K->file);
    blkrt_define defs[8];
    char names[8][48];
    int ndefs;
    double t0 = now_s();
    M->ref = blkc_new();
    blkc_set_stdlib_dir(M->ref, o->stdlib);
    const char *arch = o->cpu ? "sm_90a" : backend_arch(dinfo.arch);
    if (!arch) {
        snprintf(err, errn, "blk does not generate code for %s", dinfo.arch);
        return false;
    }
    if (blkc_set_arch(M->ref, arch) != BLK_OK || !apply_config(cfg, M->ref, defs, names, &ndefs, err, errn))
        return false;
    if (blkc_load_file(M->ref, path) != BLK_OK || blkc_build(M->ref, K->kernel) != BLK_OK) {
        snprintf(err, errn, "compiling %.1000s:\n%s", path, blkc_diagnostics(M->ref));
        return false;
    }
    if (o->cpu) {
        size_t len;
        char *src = read_text(path, &len);
        blkrt_source_options so = {.path = path, .defines = defs, .ndefines = ndefs, .kernel = K->kernel,
                                   .cache_dir = ""};
        double t1 = now_s();
        M->compile_ms = (t1 - t0) * 1e3;
        blkrt_status st = src ? blkrt_module_load_source(dev, src, len, &so, &M->mod) : BLKRT_ERR_IO;
        free(src);
        M->load_ms = (now_s() - t1) * 1e3;
        if (st) {
            snprintf(err, errn, "loading on the CPU device: %s", blkrt_last_error());
            return false;
        }
    } else {
        if (!add_eq1_variants(o, K, M->ref, err, errn)) return false;
        const char *ptx = blkc_emit(M->ref, "ptx");
        if (!ptx) {
            snprintf(err, errn, "PTX for %s:\n%s", arch, blkc_diagnostics(M->ref));
            return false;
        }
        if (!parse_meta(ptx, K->kernel, &M->meta, err, errn)) return false;
        M->ptx_bytes = (int)strlen(ptx);
        if (o->save_ptx) {
            char fn[4400], tag[128];
            snprintf(tag, sizeof tag, "%s", cfg[0] ? cfg : "defaults");
            for (char *q = tag; *q; q++)
                if (!isalnum((unsigned char)*q) && *q != '=' && *q != '_') *q = '_';
            snprintf(fn, sizeof fn, "%.2000s/%s.%s.ptx", o->save_ptx, K->kernel, tag);
            FILE *f = fopen(fn, "w");
            if (f) fputs(ptx, f), fclose(f);
        }
        double t1 = now_s();
        M->compile_ms = (t1 - t0) * 1e3;
        blkrt_status st = blkrt_module_load_ptx(dev, ptx, strlen(ptx), &M->mod);
        M->load_ms = (now_s() - t1) * 1e3;
        if (st) {
            snprintf(err, errn, "loading the PTX: %s", blkrt_last_error());
            return false;
        }
    }
    if (blkrt_module_kernel(M->mod, K->kernel, &M->k)) {
        snprintf(err, errn, "%s", blkrt_last_error());
        return false;
    }
    if (o->cpu) { /* the CPU device's metadata, through the API */
        blkrt_kernel_info ki;
        blkrt_kernel_get_info(M->k, &ki);
        kmeta *m = &M->meta;
        memset(m, 0, sizeof *m);
        m->nparams = ki.num_params;
        for (int i = 0; i < ki.num_params && i < MAX_ARGS; i++) {
            const char *n, *t;
            blkrt_kernel_param(M->k, i, &n, &t);
            snprintf(m->pname[i], sizeof m->pname[i], "%s", n);
            snprintf(m->ptype[i], sizeof m->ptype[i], "%s", t);
        }
        m->nvariants = 1;
        snprintf(m->var[0].entry, sizeof m->var[0].entry, "%s (cpu)", K->kernel);
        for (int i = 0; i < MAX_ARGS; i++) snprintf(m->var[0].spec[i], sizeof m->var[0].spec[i], "-");
        for (int i = 0; i < ndefs; i++)
            env_set(&m->consts, defs[i].name, strlen(defs[i].name), defs[i].is_float ? 0 : defs[i].ival);
    }
    return true;
}

/* The consts of a kernel with their defaults, for the CPU device (which has
 * no backend meta): the PTX backend's meta when it can run, else the config. */
static void cpu_consts(const options *o, const gk_kernel *K, const char *cfg, kmeta *m) {
    char path[4096], err[256];
    snprintf(path, sizeof path, "%s/%s", o->stdlib, K->file);
    blkc_ctx *c = blkc_new();
    blkrt_define defs[8];
    char names[8][48];
    int nd;
    if (apply_config(cfg, c, defs, names, &nd, err, sizeof err) && blkc_load_file(c, path) == BLK_OK &&
        blkc_build(c, K->kernel) == BLK_OK) {
        const char *meta = blkc_emit(c, "meta");
        kmeta km;
        if (meta && parse_meta(meta, K->kernel, &km, err, sizeof err)) m->consts = km.consts;
    }
    blkc_free(c);
}

/* ------------------------------------------------------------------ running a case */

/* Which entry the runtime picks for these arguments (its rule, docs/runtime.md). */
static int predict_variant(const kmeta *m, const case_t *c, const blkrt_arg *args) {
    for (int v = 0; v < m->nvariants; v++) {
        bool ok = true;
        for (int i = 0; i < c->nargs && ok; i++) {
            const char *s = m->var[v].spec[i];
            if (!strcmp(s, "d16"))
                ok = args[i].kind == BLKRT_ARG_PTR ? args[i].v.ptr % 16 == 0
                                                     : args[i].kind == BLKRT_ARG_INT && args[i].v.i % 16 == 0;
            else if (!strcmp(s, "eq1")) ok = args[i].kind == BLKRT_ARG_INT && args[i].v.i == 1;
        }
        if (ok) return v;
    }
    return -1;
}

typedef struct {
    bool ok;
    char msg[512];
    int64_t max_ulp;
    double max_rel;
    const char *entry;
} result;

static bool device_lost;

/* One placement (offset 0: aligned; 1: every pointer moved by one element). */
static void run_gpu(const options *o, module_t *M, case_t *c, int offset, gk_tol tol, result *R) {
    blkrt_ptr base[MAX_ARGS] = {0};
    unsigned char *image[MAX_ARGS] = {0};
    size_t total[MAX_ARGS] = {0}, start[MAX_ARGS] = {0};
    blkrt_arg args[MAX_ARGS];
    R->ok = false;
    R->entry = "?";
    blkrt_status st = BLKRT_OK;
    const char *what = "";
    for (int i = 0; i < c->nargs && !st; i++) {
        arg *a = &c->a[i];
        if (a->role == A_INT) args[i] = BLKRT_INT(a->ival);
        else if (a->role == A_FLOAT) args[i] = BLKRT_FLOAT(a->fval);
        else {
            start[i] = GUARD + (size_t)(offset * a->t->size);
            total[i] = start[i] + a->bytes + GUARD;
            image[i] = malloc(total[i]);
            memset(image[i], 0xFF, total[i]);
            if (a->role != A_OUT) memcpy(image[i] + start[i], a->host, a->bytes);
            else memset(image[i] + start[i], 0xFF, a->bytes);
            /* outputs: the reference result lives in a->host; the GPU starts from poison */
            what = "blkrt_malloc";
            st = blkrt_malloc(dev, total[i], &base[i]);
            if (!st) what = "blkrt_memcpy_htod", st = blkrt_memcpy_htod(dev, base[i], image[i], total[i]);
            args[i] = BLKRT_PTR(base[i] + start[i]);
        }
    }
    /* zero-role buffers start at 0: their host copy holds the reference result */
    for (int i = 0; i < c->nargs && !st; i++)
        if (c->a[i].role == A_ZERO) {
            memset(image[i] + start[i], 0, c->a[i].bytes);
            st = blkrt_memcpy_htod(dev, base[i], image[i], total[i]);
        }
    int v = predict_variant(&M->meta, c, args);
    R->entry = v >= 0 ? M->meta.var[v].entry : "(none accepts)";
    int launches_before = have_fake ? fake.launch_count() : 0;
    if (!st) what = "blkrt_launch", st = blkrt_launch(M->k, c->grid, args, c->nargs, NULL);
    if (!st) what = "blkrt_device_synchronize", st = blkrt_device_synchronize(dev);
    if (st) {
        snprintf(R->msg, sizeof R->msg, "%s: %s: %s", what, blkrt_status_name(st), blkrt_last_error());
        if (st == BLKRT_ERR_LAUNCH_FAILED || st == BLKRT_ERR_DRIVER) device_lost = !o->cpu;
        goto done;
    }
    if (have_fake) {
        fake_launch l;
        if (fake.launch_count() != launches_before + 1 || fake.get_launch(fake.launch_count() - 1, &l)) {
            snprintf(R->msg, sizeof R->msg, "the driver recorded no launch");
            goto done;
        }
        if (strcmp(l.entry, R->entry)) {
            snprintf(R->msg, sizeof R->msg, "the runtime launched entry %s, expected %s", l.entry, R->entry);
            goto done;
        }
    }
    long bad = 0;
    cmp_stats all = {0};
    for (int i = 0; i < c->nargs; i++) {
        arg *a = &c->a[i];
        if (a->role == A_INT || a->role == A_FLOAT) continue;
        unsigned char *back = malloc(total[i]);
        st = blkrt_memcpy_dtoh(dev, back, base[i], total[i]);
        if (st) {
            snprintf(R->msg, sizeof R->msg, "blkrt_memcpy_dtoh: %s", blkrt_last_error());
            free(back);
            goto done;
        }
        if (o->perturb && a->role != A_IN && a->count > 0) back[start[i] + (size_t)a->t->size - 1] ^= 0x40;
        if (a->role == A_IN) { /* untouched, guards included */
            if (memcmp(back, image[i], total[i])) {
                size_t k = 0;
                while (back[k] == image[i][k]) k++;
                if (!bad++)
                    snprintf(R->msg, sizeof R->msg, "input '%s' was modified (byte %lld)", a->name,
                             (long long)k - (long long)start[i]);
            }
        } else {
            size_t k = 0;
            for (; k < total[i]; k++)
                if ((k < start[i] || k >= start[i] + a->bytes) && back[k] != 0xFF) break;
            if (k < total[i] && !bad++)
                snprintf(R->msg, sizeof R->msg, "'%s': write outside the buffer (byte %lld)", a->name,
                         (long long)k - (long long)start[i]);
            if (!o->dry_run) {
                cmp_stats s = {0};
                compare(a, back + start[i], tol, a->role == A_OUT, &s);
                if (s.max_ulp > all.max_ulp) all.max_ulp = s.max_ulp;
                if (s.max_rel > all.max_rel) all.max_rel = s.max_rel;
                if (s.bad && !bad++) {
                    snprintf(R->msg, sizeof R->msg, "%ld of %lld wrong (%ld unwritten, %ld stray, %ld NaN); first %s",
                             s.bad, (long long)a->count, s.unwritten, s.stray, s.nan, s.first);
                }
            }
        }
        free(back);
    }
    R->max_ulp = all.max_ulp;
    R->max_rel = all.max_rel;
    R->ok = bad == 0;
done:
    for (int i = 0; i < c->nargs; i++) {
        if (base[i] && !device_lost) blkrt_free(dev, base[i]);
        free(image[i]);
    }
}

/* The reference: the interpreter on host buffers of exactly the data's size. */
static bool run_reference(module_t *M, const gk_kernel *K, case_t *c, char *err, size_t errn, double *ms) {
    blk_arg args[MAX_ARGS];
    for (int i = 0; i < c->nargs; i++) {
        arg *a = &c->a[i];
        if (a->role == A_INT) args[i] = BLK_INT(a->ival);
        else if (a->role == A_FLOAT) args[i] = BLK_FLOAT(a->fval);
        else args[i] = BLK_PTR(a->host, a->bytes);
    }
    /* inputs must survive: keep a copy */
    unsigned char *keep[MAX_ARGS] = {0};
    for (int i = 0; i < c->nargs; i++)
        if (c->a[i].role == A_IN) keep[i] = malloc(c->a[i].bytes + 1), memcpy(keep[i], c->a[i].host, c->a[i].bytes);
    unsigned grid[3] = {c->grid[0], c->grid[1], c->grid[2]};
    size_t before = strlen(blkc_diagnostics(M->ref));
    double t0 = now_s();
    blk_status s = blkc_interp_run(M->ref, K->kernel, grid, args, c->nargs, NULL);
    *ms = (now_s() - t0) * 1e3;
    bool ok = s == BLK_OK;
    if (!ok) snprintf(err, errn, "the interpreter failed: %s", blkc_diagnostics(M->ref) + before);
    for (int i = 0; i < c->nargs && ok; i++) {
        arg *a = &c->a[i];
        if (keep[i] && memcmp(keep[i], a->host, a->bytes)) {
            snprintf(err, errn, "the interpreter modified input '%s'", a->name);
            ok = false;
        }
        if (a->role == A_OUT && a->count > 0) {
            long w = 0;
            for (int64_t k = 0; k < a->count; k++) w += !is_poison(a->host + (size_t)k * (size_t)a->t->size, a->t->size);
            if (w == 0) {
                snprintf(err, errn, "the reference wrote nothing into '%s' (table row wrong?)", a->name);
                ok = false;
            }
        }
    }
    for (int i = 0; i < c->nargs; i++) free(keep[i]);
    return ok;
}

/* ------------------------------------------------------------------ watchdog */

/* A kernel that never finishes would hang the synchronize and, under the
 * device call's timeout, lose the whole report. The watchdog names the case
 * and exits with 3; run_on_device.sh then runs again without that kernel. */
static _Atomic double wd_last; /* read by the watchdog thread (ThreadSanitizer-clean) */
static char wd_case[256];
static int wd_timeout;

static void progress(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(wd_case, sizeof wd_case, fmt, ap);
    va_end(ap);
    atomic_store(&wd_last, now_s());
}

static void *watchdog(void *arg) {
    (void)arg;
    for (;;) {
        struct timespec ts = {1, 0};
        nanosleep(&ts, NULL);
        double last = atomic_load(&wd_last);
        if (last > 0 && now_s() - last > wd_timeout) {
            printf("\nHANG: no progress for %d s in %s\n", wd_timeout, wd_case);
            fflush(stdout);
            _exit(3);
        }
    }
    return NULL;
}

static void start_watchdog(int seconds) {
    if (seconds <= 0) return;
    wd_timeout = seconds;
    atomic_store(&wd_last, now_s());
    pthread_t t;
    if (pthread_create(&t, NULL, watchdog, NULL) == 0) pthread_detach(t);
}

/* ------------------------------------------------------------------ check */

typedef struct {
    int sizes, configs, passed, failed, skipped;
    unsigned sizes_run; /* bit per size index */
    int64_t max_ulp;
    double max_rel;
    bool d16, eq1, fallback;
} ksum;

static bool selected(const options *o, const char *kernel) {
    for (int i = 0; i < o->nskip; i++)
        if (!strcmp(o->skip[i], kernel)) return false;
    if (!o->nonly) return true;
    for (int i = 0; i < o->nonly; i++)
        if (!strcmp(o->only[i], kernel)) return true;
    return false;
}

/* Kernels in the stdlib's .blk files that have no row (and use no dot). */
static void report_uncovered(const options *o) {
    char list[4096] = "";
    DIR *dir = opendir(o->stdlib);
    struct dirent *de;
    while (dir && (de = readdir(dir))) {
        size_t nl = strlen(de->d_name);
        if (nl < 5 || strcmp(de->d_name + nl - 4, ".blk")) continue;
        char path[4096];
        size_t len;
        snprintf(path, sizeof path, "%.3000s/%s", o->stdlib, de->d_name);
        char *src = read_text(path, &len);
        if (!src) continue;
        for (char *p = strstr(src, "kernel "); p; p = strstr(p + 7, "kernel ")) {
            if (p != src && p[-1] != '\n') continue;
            char name[96];
            if (sscanf(p + 7, "%95[A-Za-z0-9_]", name) != 1) continue;
            char *next = strstr(p + 7, "\nkernel ");
            char save = 0;
            if (next) save = *next, *next = 0;
            bool has_dot = strstr(p, "dot(") != NULL;
            if (next) *next = save;
            if (has_dot) continue;
            bool covered = false;
            for (int k = 0; k < NKERNELS; k++) covered |= !strcmp(gk_table[k].kernel, name);
            if (!covered) {
                size_t l = strlen(list);
                snprintf(list + l, sizeof list - l, " %s/%s", de->d_name, name);
            }
        }
        free(src);
    }
    if (dir) closedir(dir);
    if (list[0]) printf("note: kernels without a gpu_kernels.h row (not checked):%s\n", list);
}

static int do_check(const options *o) {
    int rc = open_device(o);
    if (rc) return rc;
    blkrt_jit_install();
    printf("gpu_check: device %s (%s, %d SMs, driver %d), blkc %s, blkrt %s\n", dinfo.name, dinfo.arch,
           dinfo.sm_count, dinfo.driver_version, blkc_version(), blkrt_version());
    printf("seed %llu (rerun: --seed %llu)%s%s%s\n", (unsigned long long)o->seed, (unsigned long long)o->seed,
           o->quick ? ", quick sizes" : "", o->dry_run ? ", dry run (stops after the launch)" : "",
           have_fake ? ", fake driver: launched entries checked against its record" : "");
    if (!o->cpu) {
        const char *ld = getenv("BLK_LIBDEVICE");
        printf("libdevice: %s\n", ld && *ld ? ld : "/usr/local/cuda/nvvm/libdevice/libdevice.10.bc (default)");
    }
    report_uncovered(o);
    start_watchdog(o->case_timeout);
    ksum sum[NKERNELS];
    memset(sum, 0, sizeof sum);
    int passed = 0, failed = 0;
    double t_start = now_s(), t_ref = 0, t_compile = 0, t_load = 0;
    for (int ki = 0; ki < NKERNELS; ki++) {
        const gk_kernel *K = &gk_table[ki];
        if (!selected(o, K->kernel)) continue;
        ksum *S = &sum[ki];
        S->max_ulp = 0;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", o->stdlib, K->file);
        FILE *probe = fopen(path, "rb");
        if (!probe) {
            printf("SKIP %-16s %s is not there\n", K->kernel, path);
            S->skipped = 1;
            continue;
        }
        fclose(probe);
        for (int ci = 0; ci < GK_MAX_CONFIGS && K->configs[ci]; ci++) {
            const char *cfg = K->configs[ci];
            const char *cfgname = cfg[0] ? cfg : "defaults";
            S->configs++;
            if (device_lost) {
                printf("FAIL %-16s %-14s the device was lost earlier\n", K->kernel, cfgname);
                failed++, S->failed++;
                continue;
            }
            if (o->cpu && !numeric_config(cfg)) {
                /* blkrt_define has no bool or string kind and libblkc rejects 0/1 for a bool const */
                printf("SKIP %-16s %-14s bool and string consts cannot go through blkrt_module_load_source "
                       "(CPU device)\n",
                       K->kernel, cfgname);
                S->configs--;
                continue;
            }
            module_t M;
            char err[4096] = "";
            progress("kernel=%s config='%s' (compile + load)", K->kernel, cfg);
            if (!load_module(o, K, cfg, &M, err, sizeof err)) {
                printf("FAIL %-16s %-14s %s\n", K->kernel, cfgname, err);
                failed++, S->failed++;
                unload(&M);
                continue;
            }
            if (o->cpu) cpu_consts(o, K, cfg, &M.meta);
            t_compile += M.compile_ms, t_load += M.load_ms;
            printf("     %-16s %-14s compiled in %.0f ms (%d bytes of PTX), loaded in %.0f ms; entries:", K->kernel,
                   cfgname, M.compile_ms, M.ptx_bytes, M.load_ms);
            for (int v = 0; v < M.meta.nvariants; v++) printf(" %s", M.meta.var[v].entry);
            printf("\n");
            const char *jl = NULL;
            if (!o->cpu && blkrt_module_jit_log(M.mod, &jl) == BLKRT_OK && jl && *jl) {
                /* ptxas: "Used N registers, ..." per entry, and any spilling */
                for (const char *u = jl; u && *u;) {
                    const char *nl = strchr(u, '\n');
                    int len = nl ? (int)(nl - u) : (int)strlen(u);
                    char line[512];
                    snprintf(line, sizeof line, "%.*s", len, u);
                    const char *used = strstr(line, "Used "), *sp = strstr(line, "bytes spill stores");
                    if (used) printf("     %-16s   ptxas: %s\n", "", used);
                    else if (sp && !strstr(line, " 0 bytes spill stores")) {
                        const char *t = line;
                        while (*t == ' ' || *t == '\t') t++;
                        printf("     %-16s   ptxas: %s\n", "", t);
                    }
                    u = nl ? nl + 1 : NULL;
                }
            }
            for (int si = 0; si < 10 && K->sizes[si]; si++) {
                if (o->quick && si >= QUICK_SIZES) break;
                if (device_lost) break;
                env e = M.meta.consts;
                char sz[160];
                snprintf(sz, sizeof sz, "%s", K->sizes[si]);
                if (!parse_assignments(&e, K->sizes[si], err, sizeof err)) {
                    printf("FAIL %-16s %-14s %-28s %s\n", K->kernel, cfgname, sz, err);
                    failed++, S->failed++;
                    continue;
                }
                if (K->require) {
                    int64_t ok = 0;
                    if (!eval_expr(&e, K->require, -1, &ok, err, sizeof err)) {
                        printf("FAIL %-16s %-14s %-28s require: %s\n", K->kernel, cfgname, sz, err);
                        failed++, S->failed++;
                        continue;
                    }
                    if (!ok) continue;
                }
                uint64_t cs = o->seed ^ fnv(K->kernel, fnv(cfg, fnv(K->sizes[si], 0xCBF29CE484222325ull)));
                rng_state = splitmix(&cs) | 1;
                case_t c;
                double ref_ms = 0;
                progress("kernel=%s config='%s' size='%s' (reference)", K->kernel, cfg, K->sizes[si]);
                bool ok = build_case(K, &M.meta, &e, false, &c, err, sizeof err) &&
                          run_reference(&M, K, &c, err, sizeof err, &ref_ms);
                t_ref += ref_ms / 1e3;
                if (!ok) {
                    printf("FAIL %-16s %-14s %-28s %s\n", K->kernel, cfgname, sz, err);
                    failed++, S->failed++;
                    free_case(&c);
                    continue;
                }
                S->sizes_run |= 1u << si;
                for (int off = 0; off < 2; off++) {
                    result R = {0};
                    progress("kernel=%s config='%s' size='%s' placement=%s (GPU)", K->kernel, cfg, K->sizes[si],
                             off ? "offset" : "aligned");
                    const char *th = getenv("GPU_CHECK_TEST_HANG"); /* self-test of the watchdog */
                    if (th && !strcmp(th, K->kernel)) sleep(100000);
                    run_gpu(o, &M, &c, off, K->tol, &R);
                    /* which kind of entry ran: the last is the fallback */
                    int vi = 0;
                    while (vi < M.meta.nvariants && strcmp(R.entry, M.meta.var[vi].entry)) vi++;
                    bool has_eq1 = false;
                    for (int a = 0; vi < M.meta.nvariants && a < MAX_ARGS; a++)
                        has_eq1 |= !strcmp(M.meta.var[vi].spec[a], "eq1");
                    if (R.ok) {
                        passed++, S->passed++;
                        if (vi >= M.meta.nvariants - 1) S->fallback = true;
                        else if (has_eq1) S->eq1 = true;
                        else S->d16 = true;
                        if (R.max_ulp > S->max_ulp) S->max_ulp = R.max_ulp;
                        if (R.max_rel > S->max_rel) S->max_rel = R.max_rel;
                        printf("ok   %-16s %-14s %-28s %-7s %-34s %s\n", K->kernel, cfgname, sz,
                               off ? "offset" : "aligned", R.entry,
                               o->dry_run ? "launched" : "");
                        if (!o->dry_run && (R.max_ulp || R.max_rel > 0))
                            printf("     %-16s   max err %lld ulp, rel %.2e\n", "", (long long)R.max_ulp, R.max_rel);
                    } else {
                        failed++, S->failed++;
                        printf("FAIL %-16s %-14s %-28s %-7s %-34s %s\n", K->kernel, cfgname, sz,
                               off ? "offset" : "aligned", R.entry, R.msg);
                    }
                    if (device_lost) {
                        printf("     the GPU context is unusable after that failure: the remaining cases fail\n");
                        break;
                    }
                }
                free_case(&c);
            }
            unload(&M);
        }
    }
    double wall = now_s() - t_start;
    printf("\n| kernel | sizes | configs | result | entries run | max err |\n|---|---|---|---|---|---|\n");
    int kernels_failed = 0;
    for (int ki = 0; ki < NKERNELS; ki++) {
        const gk_kernel *K = &gk_table[ki];
        ksum *S = &sum[ki];
        if (!selected(o, K->kernel)) continue;
        if (S->skipped) {
            printf("| %s | - | - | skipped (no %s) | - | - |\n", K->kernel, K->file);
            continue;
        }
        char res[64], err[64];
        S->sizes = __builtin_popcount(S->sizes_run);
        if (S->failed) snprintf(res, sizeof res, "**FAIL** %d/%d", S->failed, S->failed + S->passed), kernels_failed++;
        else snprintf(res, sizeof res, "pass %d", S->passed);
        if (o->dry_run) snprintf(err, sizeof err, "(dry run)");
        else if (!S->max_ulp && S->max_rel == 0) snprintf(err, sizeof err, "0 (exact)");
        else snprintf(err, sizeof err, "%lld ulp, rel %.1e", (long long)S->max_ulp, S->max_rel);
        char kinds[32];
        snprintf(kinds, sizeof kinds, "%s%s%s%s%s", S->d16 ? "d16" : "", S->d16 && S->eq1 ? "+" : "",
                 S->eq1 ? "eq1" : "", (S->d16 || S->eq1) && S->fallback ? "+" : "", S->fallback ? "fallback" : "");
        printf("| %s | %d | %d | %s | %s | %s |\n", K->kernel, S->sizes, S->configs, res, kinds, err);
    }
    printf("\ntime: %.1f s (compile %.1f s, driver load %.1f s, interpreter %.1f s)\n", wall, t_compile / 1e3,
           t_load / 1e3, t_ref);
    if (failed && passed == 0 && !o->dry_run && have_fake)
        printf("note: the fake driver runs no kernels, so every comparison fails; use --dry-run with it\n");
    printf("%d passed, %d failed\n", passed, failed);
    if (!device_lost) blkrt_device_close(dev);
    (void)kernels_failed;
    return failed ? 1 : 0;
}

/* ------------------------------------------------------------------ benches */

static char *stdlib_source(const options *o, const char *file, char *path, size_t n, size_t *len) {
    snprintf(path, n, "%s/%s", o->stdlib, file);
    char *s = read_text(path, len);
    if (!s) printf("error: cannot read %s\n", path);
    return s;
}

/* The cold path a program takes: vector_add from source to its first
 * launch, no caches (CUDA_CACHE_DISABLE, blk cache off). A load from source
 * runs only libblkc's front end; the first launch compiles the one variant
 * its arguments need (libblkc + the driver's JIT), so the honest number is
 * load + first launch, and the halves are timed on their own: libblkc for
 * one variant (what the launch compiles) and for the two default variants
 * (what a whole-module compile makes), and the driver's load of the one. */
static int do_compile_bench(const options *o, int runs) {
    setenv("CUDA_CACHE_DISABLE", "1", 1); /* the driver's own PTX cache: off, before cuInit */
    int rc = open_device(o);
    if (rc) return rc;
    blkrt_jit_install();
    char path[4096];
    size_t len;
    char *src = stdlib_source(o, "elementwise.blk", path, sizeof path, &len);
    if (!src) return 1;
    const char *arch = backend_arch(dinfo.arch);
    enum { T_ALL, T_LOAD, T_LAUNCH, T_ONE, T_TWO, T_DRIVER, T_FRESH, T_N };
    double *t[T_N];
    for (int i = 0; i < T_N; i++) t[i] = calloc((size_t)runs, sizeof(double));
    int bad = 0;
    blkrt_source_options so = {.path = path, .kernel = "vector_add", .cache_dir = ""};
    blkrt_ptr buf = 0;
    if (blkrt_malloc(dev, 3 * 4096, &buf)) bad = 1;
    /* aligned pointers and n = 1024: the all-d16 variant */
    blkrt_arg a[] = {BLKRT_PTR(buf), BLKRT_PTR(buf + 4096), BLKRT_PTR(buf + 8192), BLKRT_INT(1024)};
    uint32_t g[3] = {1, 1, 1};
    for (int r = 0; r < runs && !bad; r++) {
        /* 1: libblkrt from source (the user's path): load, kernel handle, first launch */
        blkrt_module *m = NULL;
        blkrt_kernel *k = NULL;
        double t0 = now_s();
        if (blkrt_module_load_source(dev, src, len, &so, &m) || blkrt_module_kernel(m, "vector_add", &k)) bad = 1;
        double t1 = now_s();
        if (!bad && blkrt_launch(k, g, a, 4, NULL)) bad = 1;
        double t2 = now_s();
        t[T_LOAD][r] = (t1 - t0) * 1e3, t[T_LAUNCH][r] = (t2 - t1) * 1e3, t[T_ALL][r] = (t2 - t0) * 1e3;
        if (!bad && blkrt_device_synchronize(dev)) bad = 1;
        if (m) blkrt_module_unload(m);
        /* 2: the halves: libblkc source -> PTX of one variant, then of the default two; the driver's load of one */
        for (int two = 0; two < 2 && !bad; two++) {
            t0 = now_s();
            blkc_ctx *c = blkc_new();
            blkc_set_arch(c, arch);
            if (!two) blkc_set_default_variants(c, 0), blkc_add_variant(c, "x=d16,y=d16,out=d16,n=d16");
            const char *ptx = NULL;
            if (blkc_load_source(c, path, src, len) == BLK_OK && blkc_build(c, "vector_add") == BLK_OK)
                ptx = blkc_emit(c, "ptx");
            t1 = now_s();
            t[two ? T_TWO : T_ONE][r] = (t1 - t0) * 1e3;
            if (!ptx) {
                bad = 2;
            } else if (!two) {
                m = NULL;
                if (blkrt_module_load_ptx(dev, ptx, strlen(ptx), &m) || blkrt_module_kernel(m, "vector_add", &k)) bad = 2;
                t[T_DRIVER][r] = (now_s() - t1) * 1e3;
                if (m) blkrt_module_unload(m);
            }
            blkc_free(c);
        }
    }
    if (buf) blkrt_free(dev, buf);
    if (bad) {
        printf("error: compile-bench: %s\n", blkrt_last_error());
        return 1;
    }
    /* 3: a new process would also create the CUDA context: close the device
     * (releasing the primary context), open it again, load, launch. */
    blkrt_device_close(dev);
    int fresh_runs = runs < 10 ? runs : 10;
    for (int r = 0; r < fresh_runs && !bad; r++) {
        double t0 = now_s();
        blkrt_module *m = NULL;
        blkrt_kernel *k = NULL;
        buf = 0;
        if (blkrt_device_open(o->ordinal, &dev) || blkrt_module_load_source(dev, src, len, &so, &m) ||
            blkrt_module_kernel(m, "vector_add", &k) || blkrt_malloc(dev, 3 * 4096, &buf)) {
            bad = 3;
            break;
        }
        blkrt_arg af[] = {BLKRT_PTR(buf), BLKRT_PTR(buf + 4096), BLKRT_PTR(buf + 8192), BLKRT_INT(1024)};
        if (blkrt_launch(k, g, af, 4, NULL) || blkrt_device_synchronize(dev)) bad = 4;
        t[T_FRESH][r] = (now_s() - t0) * 1e3;
        blkrt_free(dev, buf);
        blkrt_module_unload(m);
        blkrt_device_close(dev);
    }
    if (bad) {
        printf("error: compile-bench (fresh context): %s\n", blkrt_last_error());
        return 1;
    }
    double md[T_N];
    for (int i = 0; i < T_N; i++) md[i] = median(t[i], (size_t)(i == T_FRESH ? fresh_runs : runs));
    printf("\n| host-side row | median | runs | notes |\n|---|---|---|---|\n");
    printf("| cold compile+load, vector_add from source to its first launch (blkrt_module_load_source + blkrt_launch, "
           "no caches) | %.1f ms | %d | %s, CUDA_CACHE_DISABLE=1, blk cache off; the launch compiles the d16 variant |\n",
           md[T_ALL], runs, dinfo.name);
    printf("|   of which the load (libblkc front end: blk-meta only) | %.1f ms | %d | |\n", md[T_LOAD], runs);
    printf("|   of which the first launch (one variant: libblkc PTX + cuModuleLoadDataEx + launch) | %.1f ms | %d | |\n",
           md[T_LAUNCH], runs);
    printf("| libblkc source -> PTX, one variant (%s) | %.1f ms | %d | what the first launch compiles |\n", arch,
           md[T_ONE], runs);
    printf("| libblkc source -> PTX, the two default variants | %.1f ms | %d | an ahead-of-time module |\n", md[T_TWO],
           runs);
    printf("| driver PTX -> module (cuModuleLoadDataEx) + kernel, one variant | %.1f ms | %d | |\n", md[T_DRIVER], runs);
    printf("| the same with a new CUDA context: device open + load + first launch + sync | %.1f ms | %d | "
           "the primary context is released between runs |\n", md[T_FRESH], fresh_runs);
    free(src);
    for (int i = 0; i < T_N; i++) free(t[i]);
    return 0;
}

static int do_launch_bench(const options *o, int launches) {
    int rc = open_device(o);
    if (rc) return rc;
    blkrt_jit_install();
    char path[4096];
    size_t len;
    char *src = stdlib_source(o, "elementwise.blk", path, sizeof path, &len);
    if (!src) return 1;
    blkrt_module *m = NULL;
    blkrt_kernel *k = NULL;
    blkrt_source_options so = {.path = path, .kernel = "vector_add", .cache_dir = ""};
    const int n = 4096;
    blkrt_ptr x, y, out;
    if (blkrt_module_load_source(dev, src, len, &so, &m) || blkrt_module_kernel(m, "vector_add", &k) ||
        blkrt_malloc(dev, 4 * n, &x) || blkrt_malloc(dev, 4 * n, &y) || blkrt_malloc(dev, 4 * n, &out)) {
        printf("error: launch-bench: %s\n", blkrt_last_error());
        return 1;
    }
    blkrt_kernel_info ki;
    blkrt_kernel_get_info(k, &ki);
    int64_t block = 1024;
    blkrt_kernel_const_int(k, "BLOCK", &block);
    uint32_t grid[3] = {(uint32_t)((n + block - 1) / block), 1, 1}, blk[3] = {32u * (uint32_t)ki.num_warps, 1, 1};
    blkrt_arg a[] = {BLKRT_PTR(x), BLKRT_PTR(y), BLKRT_PTR(out), BLKRT_INT(n)};
    int32_t nn = n;
    void *params[] = {&x, &y, &out, &nn};
    const int batch = 500;
    double *t = malloc(sizeof(double) * (size_t)launches);
    double results[2][4];
    for (int mode = 0; mode < 2; mode++) {
        for (int w = 0; w < 2000; w++) /* warm-up */
            if (mode ? blkrt_launch_raw(k, grid, blk, 0, params, NULL) : blkrt_launch(k, grid, a, 4, NULL)) {
                printf("error: launch-bench: %s\n", blkrt_last_error());
                return 1;
            }
        blkrt_device_synchronize(dev);
        double busy = 0;
        for (int i = 0; i < launches; i += batch) {
            int nb = launches - i < batch ? launches - i : batch;
            double b0 = now_s();
            for (int j = 0; j < nb; j++) {
                double t0 = now_s();
                blkrt_status st = mode ? blkrt_launch_raw(k, grid, blk, 0, params, NULL)
                                       : blkrt_launch(k, grid, a, 4, NULL);
                t[i + j] = (now_s() - t0) * 1e6;
                if (st) {
                    printf("error: launch-bench: %s\n", blkrt_last_error());
                    return 1;
                }
            }
            busy += now_s() - b0;
            blkrt_device_synchronize(dev); /* not timed: keeps the launch queue from filling */
        }
        results[mode][1] = busy / launches * 1e6;
        results[mode][0] = median(t, (size_t)launches);
        results[mode][2] = t[(size_t)launches / 10];
        results[mode][3] = t[(size_t)launches * 9 / 10];
    }
    printf("\n| host-side row | median per launch | mean (incl. timers) | p10 / p90 | launches | notes |\n"
           "|---|---|---|---|---|---|\n");
    printf("| blkrt_launch, vector_add n=%d (checked: arguments, variant, limits) | %.2f us | %.2f us | %.2f / %.2f us | "
           "%d | %s, d16 entry, synchronised every %d launches (untimed) |\n",
           n, results[0][0], results[0][1], results[0][2], results[0][3], launches, dinfo.name, batch);
    printf("| blkrt_launch_raw (cuLaunchKernel, no checks), same kernel | %.2f us | %.2f us | %.2f / %.2f us | %d | "
           "fallback entry |\n",
           results[1][0], results[1][1], results[1][2], results[1][3], launches);
    printf("| checking overhead of blkrt_launch over raw | %.2f us | | | | |\n", results[0][0] - results[1][0]);
    blkrt_free(dev, x), blkrt_free(dev, y), blkrt_free(dev, out);
    blkrt_module_unload(m);
    blkrt_device_close(dev);
    free(t), free(src);
    return 0;
}

/* ------------------------------------------------------------------ ptx */

/* gpu_check ptx FILE [--kernel K] [--arch A] [-D NAME=V]... [-o OUT]: libblkc's
 * PTX (with blk-meta lines) for a .blk file, so that the carried bundle can
 * compile kernels for bindings on the GPU machine without a second static
 * binary. */
static int do_ptx(int argc, char **argv, const char *stdlib) {
    const char *file = NULL, *kernel = NULL, *arch = "sm_90a", *out = NULL;
    blkc_ctx *c = blkc_new();
    blkc_set_stdlib_dir(c, stdlib);
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--kernel") && v) kernel = v, i++;
        else if (!strcmp(a, "--arch") && v) arch = v, i++;
        else if (!strcmp(a, "-o") && v) out = v, i++;
        else if (!strcmp(a, "-I") && v) blkc_add_include_dir(c, v), i++;
        else if (!strcmp(a, "-D") && v) {
            char name[128];
            const char *eq = strchr(v, '=');
            if (!eq || (size_t)(eq - v) >= sizeof name) {
                fprintf(stderr, "gpu_check ptx: -D %s: expected NAME=VALUE\n", v);
                return 2;
            }
            memcpy(name, v, (size_t)(eq - v));
            name[eq - v] = 0;
            if (blkc_define(c, name, eq + 1) != BLK_OK) {
                fprintf(stderr, "%s", blkc_diagnostics(c));
                return 2;
            }
            i++;
        } else if (a[0] != '-' && !file) file = a;
        else {
            fprintf(stderr, "usage: gpu_check ptx FILE.blk [--kernel K] [--arch sm_90a|sm_90|sm_80] [-D NAME=V]... "
                            "[-I DIR] [-o OUT.ptx]\n");
            return 2;
        }
    }
    if (!file || blkc_set_arch(c, arch) != BLK_OK) {
        fprintf(stderr, "gpu_check ptx: %s\n", file ? blkc_diagnostics(c) : "no input file");
        return 2;
    }
    const char *ptx = NULL;
    if (blkc_load_file(c, file) == BLK_OK && blkc_build(c, kernel) == BLK_OK) ptx = blkc_emit(c, "ptx");
    fputs(blkc_diagnostics(c), stderr);
    if (!ptx) return 1;
    FILE *f = out ? fopen(out, "w") : stdout;
    if (!f || fputs(ptx, f) < 0 || (out && fclose(f))) {
        fprintf(stderr, "gpu_check ptx: cannot write %s\n", out ? out : "stdout");
        return 1;
    }
    blkc_free(c);
    return 0;
}

/* ------------------------------------------------------------------ main */

static void usage(void) {
    fprintf(stderr,
            "usage: gpu_check [check] [--stdlib DIR] [--device N|cpu] [--seed S] [--quick] [--kernel NAME]...\n"
            "                 [--skip NAME]... [--case-timeout SECONDS] [--save-ptx DIR] [--dry-run] [--list]\n"
            "       gpu_check compile-bench [--stdlib DIR] [--device N] [--runs R]\n"
            "       gpu_check launch-bench [--stdlib DIR] [--device N] [--launches L]\n"
            "       gpu_check ptx FILE.blk [--kernel K] [--arch A] [-D NAME=V]... [-I DIR] [-o OUT.ptx]\n");
}

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    options o = {.stdlib = NULL, .ordinal = 0, .case_timeout = 60};
    const char *cmd = "check";
    int runs = 20, launches = 100000;
    bool list = false, seeded = false;
    int i = 1;
    if (argc > 1 && argv[1][0] != '-') cmd = argv[i++];
    if (!strcmp(cmd, "ptx")) {
#ifdef GPU_CHECK_STDLIB
        const char *sl = GPU_CHECK_STDLIB;
#else
        const char *sl = "stdlib";
#endif
        const char *e = getenv("BLK_STDLIB");
        return do_ptx(argc - 2, argv + 2, e && *e ? e : sl);
    }
    for (; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--stdlib") && v) o.stdlib = v, i++;
        else if (!strcmp(a, "--device") && v) {
            if (!strcmp(v, "cpu")) o.cpu = true;
            else o.ordinal = atoi(v);
            i++;
        } else if (!strcmp(a, "--seed") && v) o.seed = strtoull(v, NULL, 0), seeded = true, i++;
        else if (!strcmp(a, "--kernel") && v && o.nonly < 64) o.only[o.nonly++] = v, i++;
        else if (!strcmp(a, "--skip") && v && o.nskip < 64) o.skip[o.nskip++] = v, i++;
        else if (!strcmp(a, "--case-timeout") && v) o.case_timeout = atoi(v), i++;
        else if (!strcmp(a, "--save-ptx") && v) o.save_ptx = v, i++;
        else if (!strcmp(a, "--runs") && v) runs = atoi(v), i++;
        else if (!strcmp(a, "--launches") && v) launches = atoi(v), i++;
        else if (!strcmp(a, "--quick")) o.quick = true;
        else if (!strcmp(a, "--dry-run")) o.dry_run = true;
        else if (!strcmp(a, "--perturb")) o.perturb = true; /* self-test: corrupt one byte of every output */
        else if (!strcmp(a, "--list")) list = true;
        else {
            usage();
            return 2;
        }
    }
    if (!o.stdlib) {
#ifdef GPU_CHECK_STDLIB
        o.stdlib = GPU_CHECK_STDLIB;
#else
        o.stdlib = "stdlib";
#endif
    }
    if (!seeded) {
        uint64_t s = (uint64_t)time(NULL) ^ ((uint64_t)clock() << 20);
        o.seed = splitmix(&s) % 1000000007ull;
    }
    if (runs < 1) runs = 1;
    if (launches < 500) launches = 500;
    if (list) {
        for (int k = 0; k < NKERNELS; k++) {
            int nc = 0, ns = 0;
            while (nc < GK_MAX_CONFIGS && gk_table[k].configs[nc]) nc++;
            while (ns < 10 && gk_table[k].sizes[ns]) ns++;
            printf("%-16s %-16s %d configs, %d sizes\n", gk_table[k].kernel, gk_table[k].file, nc, ns);
        }
        return 0;
    }
    if (!strcmp(cmd, "check")) return do_check(&o);
    if (o.cpu) {
        fprintf(stderr, "%s needs a GPU\n", cmd);
        return 2;
    }
    if (!strcmp(cmd, "compile-bench")) return do_compile_bench(&o, runs);
    if (!strcmp(cmd, "launch-bench")) return do_launch_bench(&o, launches);
    usage();
    return 2;
}

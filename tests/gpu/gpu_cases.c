/* gpu_cases.c — one case of a gpu_kernels.h row (gpu_check.h): the dtypes
 * and their encodings, the size and argument expressions, the kernel's
 * blk-meta, building a case's inputs and buffers, and comparing the
 * device's outputs with the interpreter's.
 */
#include "gpu_check.h"

/* ------------------------------------------------------------------ util */

static int cmp_i64(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

double median(double *v, size_t n) {
    qsort(v, n, sizeof *v, cmp_double);
    return n ? (n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2])) : 0;
}

/* xorshift64*: data (splitmix64, diff_common.h: seeds) */
uint64_t rng_state;
static uint64_t rng_u64(void) {
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 0x2545F4914F6CDD1Dull;
}
static double rng_uniform(double lo, double hi) { return lo + (hi - lo) * (double)(rng_u64() >> 11) * 0x1p-53; }
uint64_t fnv(const char *s, uint64_t h) {
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 0x100000001B3ull;
    return h;
}

/* ------------------------------------------------------------------ dtypes */

static const dtype dtypes[] = {
    {"f32", 4, K_FLOAT}, {"f64", 8, K_FLOAT}, {"f16", 2, K_FLOAT}, {"bf16", 2, K_FLOAT}, {"i8", 1, K_INT},
    {"i16", 2, K_INT},   {"i32", 4, K_INT},   {"i64", 8, K_INT},   {"u8", 1, K_UINT},   {"u16", 2, K_UINT},
    {"u32", 4, K_UINT},  {"u64", 8, K_UINT},  {"bool", 1, K_BOOL}, {"f8e4m3", 1, K_FLOAT}, {"f8e5m2", 1, K_FLOAT},
};
const dtype *find_dtype(const char *name) {
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


void env_set(env *e, const char *name, size_t len, int64_t v) {
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
bool eval_expr(const env *e, const char *s, int len, int64_t *out, char *err, size_t errn) {
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
bool parse_assignments(env *e, const char *text, char *err, size_t errn) {
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
bool parse_meta(const char *text, const char *kernel, kmeta *m, char *err, size_t errn) {
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




void free_case(case_t *c) {
    for (int i = 0; i < c->nargs; i++) free(c->a[i].host);
    c->nargs = 0;
}

/* Parse a row's argument list against the kernel's parameters and env. */
/* scalars_only: the integer and float arguments (what a launch key needs),
 * no buffers. */
bool build_case(const gk_kernel *K, const kmeta *m, const env *e, bool scalars_only, case_t *c, char *err,
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


bool is_poison(const unsigned char *p, int size) {
    for (int i = 0; i < size; i++)
        if (p[i] != 0xFF) return false;
    return true;
}

/* got vs want (the interpreter's result), both started from the same bytes. */
void compare(const arg *a, const unsigned char *got, gk_tol tol, bool poisoned, cmp_stats *s) {
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
                if (ulp > tol.ulp && !(rel <= tol.rtol) && !(fabs(gv - wv) <= tol.atol)) why = "out of tolerance";
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

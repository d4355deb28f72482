/* meta.c — parsing "blk-meta" lines (grammar in docs/runtime.md).
 *
 *   line    := ws* "//" ws* "blk-meta" ws+ "v1" (ws+ field)*
 *   field   := key "=" value       keys: kernel entry num_warps shared params consts spec nospec tmaps cluster
 *                                  cluster_required
 *   params  := "" | param ("," param)*      param := name ":" type
 *   type    := scalar | "*" scalar | "*const." scalar   ("*const " scalar is accepted too)
 *   consts  := "" | const ("," const)*      const := name ":" scalar ":" literal
 *   spec    := item ("," item)*             item  := [name ":"] ("d16" | "eq1" | "-")
 *   nospec  := name ("," name)*             parameters no variant may assume anything of
 *   tmaps   := "" | map (";" map)*          map := arg ":" dims ":" strides ":" box ":" swizzle
 *   dims, strides := "" | expr ("," expr)*  expr := term ("+" term)*  term := factor ("*" factor)*
 *                                           factor := decimal | int param
 *   box     := int ("," int)*               swizzle := 0 | 32 | 64 | 128
 *   cluster := 1 | 2 | 4 | 8                CTAs per thread-block cluster along grid x (default 1)
 *   cluster_required := 0 | 1               1: the code needs its clusters (a kernel's @cluster), so
 *                                           every launch is one and grid x a multiple of cluster
 *
 * Fields are separated by spaces; in the accepted "*const T" spelling the one
 * space belongs to the type. Every error names its line; the parser never trusts the text
 * (lengths, counts and numbers are all range-checked).
 */
#include "meta.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rt.h"

/* ---- the pool ---- */
struct rt_pool {
    struct rt_chunk *chunks;
};

struct rt_chunk {
    struct rt_chunk *next;
    size_t used, cap;
    _Alignas(16) unsigned char data[];
};

rt_pool *rt_pool_new(void) { return calloc(1, sizeof(rt_pool)); }

void *rt_pool_alloc(rt_pool *p, size_t bytes) {
    bytes = (bytes + 15) & ~(size_t)15;
    struct rt_chunk *c = p->chunks;
    if (!c || c->cap - c->used < bytes) {
        size_t cap = bytes > 4096 ? bytes : 4096;
        c = malloc(sizeof(struct rt_chunk) + cap);
        if (!c) return NULL;
        c->next = p->chunks;
        c->used = 0;
        c->cap = cap;
        p->chunks = c;
    }
    void *r = c->data + c->used;
    c->used += bytes;
    memset(r, 0, bytes);
    return r;
}

char *rt_pool_strndup(rt_pool *p, const char *s, size_t n) {
    char *r = rt_pool_alloc(p, n + 1);
    if (r) {
        memcpy(r, s, n);
        r[n] = 0;
    }
    return r;
}

void rt_pool_free(rt_pool *p) {
    if (!p) return;
    for (struct rt_chunk *c = p->chunks, *n; c; c = n) {
        n = c->next;
        free(c);
    }
    free(p);
}

/* ---- types ---- */
static const struct {
    const char *name;
    int bytes;
} type_table[] = {
    [RT_T_BOOL] = {"bool", 1}, [RT_T_I8] = {"i8", 1},       [RT_T_I16] = {"i16", 2},
    [RT_T_I32] = {"i32", 4},   [RT_T_I64] = {"i64", 8},     [RT_T_U8] = {"u8", 1},
    [RT_T_U16] = {"u16", 2},   [RT_T_U32] = {"u32", 4},     [RT_T_U64] = {"u64", 8},
    [RT_T_F16] = {"f16", 2},   [RT_T_BF16] = {"bf16", 2},   [RT_T_F32] = {"f32", 4},
    [RT_T_F64] = {"f64", 8},   [RT_T_F8E4M3] = {"f8e4m3", 1}, [RT_T_F8E5M2] = {"f8e5m2", 1},
    [RT_T_PTR] = {"ptr", 8},
};

const char *rt_type_name(rt_type t) { return t <= RT_T_PTR ? type_table[t].name : "?"; }
int rt_type_bytes(rt_type t) { return t <= RT_T_PTR ? type_table[t].bytes : 0; }
bool rt_type_is_int(rt_type t) { return t >= RT_T_I8 && t <= RT_T_U64; }
bool rt_type_is_float(rt_type t) { return t >= RT_T_F16 && t <= RT_T_F8E5M2; }

static int scalar_type(const char *s, size_t n) {
    for (int t = 0; t < RT_T_PTR; t++)
        if (strlen(type_table[t].name) == n && memcmp(type_table[t].name, s, n) == 0) return t;
    return -1;
}

/* ---- the parser ---- */
typedef struct {
    rt_pool *pool;
    int line;
    blkrt_status status;
} parser;

#define FAIL(P, ...)                                                   \
    do {                                                               \
        (P)->status = rt_err(BLKRT_ERR_META, __VA_ARGS__);             \
        return false;                                                  \
    } while (0)
#define FAIL_OOM(P)                                                    \
    do {                                                               \
        (P)->status = rt_err(BLKRT_ERR_OUT_OF_MEMORY, "out of memory"); \
        return false;                                                  \
    } while (0)

/* A slice of the line. */
typedef struct {
    const char *s;
    size_t n;
} slice;

static bool slice_eq(slice a, const char *b) { return strlen(b) == a.n && memcmp(a.s, b, a.n) == 0; }

static bool is_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
static bool is_digit(char c) { return c >= '0' && c <= '9'; }

/* blk identifiers; PTX entry names may also use '$' and '%'. */
static bool valid_name(slice s, bool ptx) {
    if (s.n == 0 || s.n > 255) return false;
    if (!(is_alpha(s.s[0]) || (ptx && (s.s[0] == '$' || s.s[0] == '%')))) return false;
    for (size_t i = 1; i < s.n; i++)
        if (!(is_alpha(s.s[i]) || is_digit(s.s[i]) || (ptx && s.s[i] == '$'))) return false;
    return true;
}

/* Split s at the first c: *head = before, *tail = after. False if no c. */
static bool split(slice s, char c, slice *head, slice *tail) {
    const char *p = memchr(s.s, c, s.n);
    if (!p) return false;
    head->s = s.s;
    head->n = (size_t)(p - s.s);
    tail->s = p + 1;
    tail->n = s.n - head->n - 1;
    return true;
}

/* Count the comma-separated items of a (non-empty) list. */
static int count_items(slice s) {
    if (s.n == 0) return 0;
    int n = 1;
    for (size_t i = 0; i < s.n; i++) n += s.s[i] == ',';
    return n;
}

/* Next c-separated part of *rest. */
static slice next_part(slice *rest, char c) {
    slice item = *rest, tail;
    if (split(*rest, c, &item, &tail)) {
        *rest = tail;
    } else {
        rest->s += rest->n;
        rest->n = 0;
    }
    return item;
}

/* Next comma-separated item of *rest. */
static slice next_item(slice *rest) { return next_part(rest, ','); }

static int count_char(slice s, char c) {
    int n = 0;
    for (size_t i = 0; i < s.n; i++) n += s.s[i] == c;
    return n;
}

static bool parse_int(parser *P, slice v, const char *what, long long lo, long long hi, long long *out) {
    char buf[32];
    if (v.n == 0 || v.n >= sizeof buf) FAIL(P, "blk-meta line %d: %s '%.*s' is not an integer", P->line, what, (int)v.n, v.s);
    memcpy(buf, v.s, v.n);
    buf[v.n] = 0;
    char *end;
    errno = 0;
    long long x = strtoll(buf, &end, 10);
    if (*end || errno) FAIL(P, "blk-meta line %d: %s '%s' is not an integer", P->line, what, buf);
    if (x < lo || x > hi) FAIL(P, "blk-meta line %d: %s must be %lld..%lld, got %lld", P->line, what, lo, hi, x);
    *out = x;
    return true;
}

static bool parse_type(parser *P, slice t, const char *param, rt_param *out) {
    slice rest = t;
    char *ts = rt_pool_strndup(P->pool, t.s, t.n);
    if (!ts) FAIL_OOM(P);
    out->type_str = ts;
    if (rest.n > 0 && rest.s[0] == '*') {
        rest.s++, rest.n--;
        out->type = RT_T_PTR;
        /* "*const.T" (canonical) or "*const T" (blk's own spelling) */
        if (rest.n >= 6 && memcmp(rest.s, "const", 5) == 0 && (rest.s[5] == '.' || rest.s[5] == ' ')) {
            out->is_const = true;
            rest.s += 6, rest.n -= 6;
            ts[6] = '.'; /* one spelling for blkrt_kernel_param */
        }
        int pt = scalar_type(rest.s, rest.n);
        if (pt < 0) FAIL(P, "blk-meta line %d: parameter '%s' has unknown type '%.*s'", P->line, param, (int)t.n, t.s);
        out->pointee = (rt_type)pt;
        return true;
    }
    int st = scalar_type(rest.s, rest.n);
    if (st < 0) FAIL(P, "blk-meta line %d: parameter '%s' has unknown type '%.*s'", P->line, param, (int)t.n, t.s);
    out->type = (rt_type)st;
    return true;
}

/* A listed name (a parameter's, a const's), checked and copied into the
 * pool; NULL after a failure (P->status says which). */
static char *pool_name(parser *P, slice name, const char *what) {
    if (!valid_name(name, false)) {
        P->status = rt_err(BLKRT_ERR_META, "blk-meta line %d: bad %s name '%.*s'", P->line, what, (int)name.n, name.s);
        return NULL;
    }
    char *s = rt_pool_strndup(P->pool, name.s, name.n);
    if (!s) P->status = rt_err(BLKRT_ERR_OUT_OF_MEMORY, "out of memory");
    return s;
}

static bool parse_params(parser *P, slice v, rt_meta_kernel *k) {
    int n = count_items(v);
    if (n > RT_MAX_PARAMS) FAIL(P, "blk-meta line %d: %d parameters (at most %d)", P->line, n, RT_MAX_PARAMS);
    k->nparams = n;
    k->params = rt_pool_alloc(P->pool, sizeof(rt_param) * (size_t)(n ? n : 1));
    if (!k->params) FAIL_OOM(P);
    slice rest = v;
    for (int i = 0; i < n; i++) {
        slice item = next_item(&rest), name, type;
        if (!split(item, ':', &name, &type))
            FAIL(P, "blk-meta line %d: parameter '%.*s' has no type (write name:type)", P->line, (int)item.n, item.s);
        rt_param *p = &k->params[i];
        if (!(p->name = pool_name(P, name, "parameter"))) return false;
        for (int j = 0; j < i; j++)
            if (strcmp(k->params[j].name, p->name) == 0)
                FAIL(P, "blk-meta line %d: parameter '%s' is listed twice", P->line, p->name);
        if (!parse_type(P, type, p->name, p)) return false;
    }
    return true;
}

static bool parse_consts(parser *P, slice v, rt_meta_kernel *k) {
    int n = count_items(v);
    k->nconsts = n;
    k->consts = rt_pool_alloc(P->pool, sizeof(rt_const) * (size_t)(n ? n : 1));
    if (!k->consts) FAIL_OOM(P);
    slice rest = v;
    for (int i = 0; i < n; i++) {
        slice item = next_item(&rest), name, tail, type, value;
        if (!split(item, ':', &name, &tail) || !split(tail, ':', &type, &value))
            FAIL(P, "blk-meta line %d: const '%.*s' is not NAME:TYPE:VALUE", P->line, (int)item.n, item.s);
        rt_const *c = &k->consts[i];
        if (!(c->name = pool_name(P, name, "const"))) return false;
        int t = scalar_type(type.s, type.n);
        if (t < 0) FAIL(P, "blk-meta line %d: const '%s' has unknown type '%.*s'", P->line, c->name, (int)type.n, type.s);
        c->type = (rt_type)t;
        char buf[64];
        if (value.n == 0 || value.n >= sizeof buf)
            FAIL(P, "blk-meta line %d: const '%s' has a bad value '%.*s'", P->line, c->name, (int)value.n, value.s);
        memcpy(buf, value.s, value.n);
        buf[value.n] = 0;
        char *end;
        errno = 0;
        if (c->type == RT_T_BOOL) {
            if (strcmp(buf, "true") == 0 || strcmp(buf, "1") == 0) c->ival = 1;
            else if (strcmp(buf, "false") == 0 || strcmp(buf, "0") == 0) c->ival = 0;
            else FAIL(P, "blk-meta line %d: const '%s' (bool) has a bad value '%s'", P->line, c->name, buf);
            c->fval = (double)c->ival;
        } else if (rt_type_is_float(c->type)) {
            c->fval = strtod(buf, &end);
            if (*end) FAIL(P, "blk-meta line %d: const '%s' has a bad value '%s'", P->line, c->name, buf);
            c->ival = (int64_t)c->fval;
        } else {
            c->ival = strtoll(buf, &end, 10);
            if (*end || errno) FAIL(P, "blk-meta line %d: const '%s' has a bad value '%s'", P->line, c->name, buf);
            c->fval = (double)c->ival;
        }
        for (int j = 0; j < i; j++)
            if (strcmp(k->consts[j].name, c->name) == 0)
                FAIL(P, "blk-meta line %d: const '%s' is listed twice", P->line, c->name);
    }
    return true;
}

/* nospec=a,b (@do_not_specialize): a mask over the parameters. */
static bool parse_nospec(parser *P, slice v, rt_meta_kernel *k) {
    int n = count_items(v);
    slice rest = v;
    for (int i = 0; i < n; i++) {
        slice name = next_item(&rest);
        int p = 0;
        while (p < k->nparams && !slice_eq(name, k->params[p].name)) p++;
        if (p == k->nparams)
            FAIL(P, "blk-meta line %d: nospec names '%.*s', which is not a parameter", P->line, (int)name.n, name.s);
        if (k->nospec & (UINT64_C(1) << p))
            FAIL(P, "blk-meta line %d: nospec names '%s' twice", P->line, k->params[p].name);
        k->nospec |= UINT64_C(1) << p;
    }
    return true;
}

static bool parse_spec(parser *P, slice v, const rt_meta_kernel *k, rt_meta_variant *var) {
    var->spec = rt_pool_alloc(P->pool, (size_t)(k->nparams ? k->nparams : 1));
    if (!var->spec) FAIL_OOM(P);
    if (v.s == NULL) return true; /* no spec= field: nothing assumed */
    int n = count_items(v);
    if (n != k->nparams)
        FAIL(P, "blk-meta line %d: spec has %d entries but the kernel has %d parameters", P->line, n, k->nparams);
    slice rest = v;
    for (int i = 0; i < n; i++) {
        slice item = next_item(&rest), name, code = item;
        const rt_param *p = &k->params[i];
        if (split(item, ':', &name, &code) && !slice_eq(name, p->name))
            FAIL(P, "blk-meta line %d: spec entry %d names '%.*s' but parameter %d is '%s'", P->line, i + 1,
                 (int)name.n, name.s, i + 1, p->name);
        if (slice_eq(code, "-")) {
            var->spec[i] = RT_SPEC_NONE;
        } else if (slice_eq(code, "d16")) {
            if (p->type != RT_T_PTR && !rt_type_is_int(p->type))
                FAIL(P, "blk-meta line %d: spec 'd16' of parameter '%s' needs a pointer or integer parameter, not %s",
                     P->line, p->name, p->type_str);
            var->spec[i] = RT_SPEC_D16;
        } else if (slice_eq(code, "eq1")) {
            if (!rt_type_is_int(p->type))
                FAIL(P, "blk-meta line %d: spec 'eq1' of parameter '%s' needs an integer parameter, not %s", P->line,
                     p->name, p->type_str);
            var->spec[i] = RT_SPEC_EQ1;
        } else {
            FAIL(P, "blk-meta line %d: unknown spec '%.*s' for parameter '%s' (d16, eq1 or -)", P->line, (int)code.n,
                 code.s, p->name);
        }
        if (var->spec[i] != RT_SPEC_NONE && (k->nospec & (UINT64_C(1) << i)))
            FAIL(P, "blk-meta line %d: spec '%.*s' of parameter '%s', which is in nospec", P->line, (int)code.n,
                 code.s, p->name);
    }
    return true;
}

/* One tmaps dim or stride, a sum of products: "K", "M*H", "64", "H*128+G*256". */
static bool parse_tmap_expr(parser *P, slice v, const rt_meta_kernel *k, const char *arg, rt_tmap_expr *e) {
    int terms = count_char(v, '+') + 1, n = count_char(v, '*') + terms;
    if (terms > RT_TMAP_MAX_TERMS)
        FAIL(P, "blk-meta line %d: tmaps: '%.*s' in the map of '%s' has %d terms (at most %d)", P->line, (int)v.n, v.s,
             arg, terms, RT_TMAP_MAX_TERMS);
    if (n > RT_TMAP_MAX_FACTORS)
        FAIL(P, "blk-meta line %d: tmaps: '%.*s' in the map of '%s' has %d factors (at most %d)", P->line, (int)v.n,
             v.s, arg, n, RT_TMAP_MAX_FACTORS);
    slice sum = v;
    e->nfactors = n;
    for (int i = 0, t = 0; t < terms; t++) {
        slice rest = next_part(&sum, '+');
        for (int nt = count_char(rest, '*') + 1, j = 0; j < nt; j++, i++) {
            slice f = next_part(&rest, '*');
            e->f[i].plus = t > 0 && j == 0;
            if (f.n > 0 && is_digit(f.s[0])) {
                /* a decimal, at most 2^40 (sums and products are overflow-checked at launch) */
                int64_t x = 0;
                for (size_t c = 0; c < f.n; c++) {
                    if (!is_digit(f.s[c]) || x > (INT64_C(1) << 40))
                        FAIL(P, "blk-meta line %d: tmaps: bad factor '%.*s' in the map of '%s' (a decimal 1..2^40 or "
                             "an integer parameter)", P->line, (int)f.n, f.s, arg);
                    x = x * 10 + (f.s[c] - '0');
                }
                if (x < 1 || x > (INT64_C(1) << 40))
                    FAIL(P, "blk-meta line %d: tmaps: bad factor '%.*s' in the map of '%s' (a decimal 1..2^40 or an "
                         "integer parameter)", P->line, (int)f.n, f.s, arg);
                e->f[i].param = -1;
                e->f[i].value = x;
                continue;
            }
            if (!valid_name(f, false))
                FAIL(P, "blk-meta line %d: tmaps: bad factor '%.*s' in the map of '%s' (a decimal 1..2^40 or an "
                     "integer parameter)", P->line, (int)f.n, f.s, arg);
            int p = 0;
            while (p < k->nparams && !slice_eq(f, k->params[p].name)) p++;
            if (p == k->nparams) FAIL(P, "blk-meta line %d: tmaps: unknown parameter '%.*s'", P->line, (int)f.n, f.s);
            if (!rt_type_is_int(k->params[p].type))
                FAIL(P, "blk-meta line %d: tmaps: factor '%s' in the map of '%s' is a %s parameter, not an integer",
                     P->line, k->params[p].name, arg, k->params[p].type_str);
            e->f[i].param = p;
            e->f[i].value = 0;
        }
    }
    return true;
}

/* tmaps=MAP;MAP;...  MAP := ARG ":" DIMS ":" STRIDES ":" BOX ":" SWIZZLE */
static bool parse_tmaps(parser *P, slice v, const rt_meta_kernel *k, rt_meta_variant *var) {
    int n = v.n ? count_char(v, ';') + 1 : 0;
    if (n > RT_MAX_TMAPS) FAIL(P, "blk-meta line %d: tmaps: %d maps (at most %d)", P->line, n, RT_MAX_TMAPS);
    var->ntmaps = n;
    if (n == 0) return true; /* most lines: no maps, tmaps stays NULL */
    var->tmaps = rt_pool_alloc(P->pool, sizeof(rt_tmap) * (size_t)n);
    if (!var->tmaps) FAIL_OOM(P);
    slice maps = v;
    for (int i = 0; i < n; i++) {
        slice map = next_part(&maps, ';');
        if (count_char(map, ':') != 4)
            FAIL(P, "blk-meta line %d: tmaps: '%.*s' is not ARG:DIMS:STRIDES:BOX:SWIZZLE", P->line, (int)map.n, map.s);
        slice rest = map, name = next_part(&rest, ':'), dims = next_part(&rest, ':'),
              strides = next_part(&rest, ':'), box = next_part(&rest, ':'), swz = rest;
        rt_tmap *t = &var->tmaps[i];
        t->arg = 0;
        while (t->arg < k->nparams && !slice_eq(name, k->params[t->arg].name)) t->arg++;
        if (t->arg == k->nparams)
            FAIL(P, "blk-meta line %d: tmaps: unknown parameter '%.*s'", P->line, (int)name.n, name.s);
        const rt_param *p = &k->params[t->arg];
        if (p->type != RT_T_PTR)
            FAIL(P, "blk-meta line %d: tmaps: parameter '%s' is %s, not a pointer", P->line, p->name, p->type_str);
        t->dtype = p->pointee;
        t->rank = count_items(dims);
        if (t->rank < 1 || t->rank > RT_TMAP_MAX_RANK)
            FAIL(P, "blk-meta line %d: tmaps: the map of '%s' has rank %d (1..%d)", P->line, p->name, t->rank,
                 RT_TMAP_MAX_RANK);
        if (count_items(strides) != t->rank - 1)
            FAIL(P, "blk-meta line %d: tmaps: the map of '%s' has %d strides; rank %d needs %d", P->line, p->name,
                 count_items(strides), t->rank, t->rank - 1);
        if (count_items(box) != t->rank)
            FAIL(P, "blk-meta line %d: tmaps: the map of '%s' has %d box sizes; rank %d needs %d", P->line, p->name,
                 count_items(box), t->rank, t->rank);
        char what[300];
        for (int d = 0; d < t->rank; d++) {
            if (!parse_tmap_expr(P, next_item(&dims), k, p->name, &t->dim[d])) return false;
            if (d > 0 && !parse_tmap_expr(P, next_item(&strides), k, p->name, &t->stride[d - 1])) return false;
            long long x;
            snprintf(what, sizeof what, "tmaps: box of '%s'", p->name);
            if (!parse_int(P, next_item(&box), what, 1, 256, &x)) return false;
            t->box[d] = (uint32_t)x;
        }
        long long s;
        snprintf(what, sizeof what, "tmaps: swizzle of '%s'", p->name);
        if (!parse_int(P, swz, what, 0, 1 << 30, &s)) return false;
        if (s != 0 && s != 32 && s != 64 && s != 128)
            FAIL(P, "blk-meta line %d: tmaps: swizzle of '%s' must be 0, 32, 64 or 128, got %lld", P->line, p->name, s);
        t->swizzle = (int)s;
    }
    return true;
}

bool rt_meta_same_kernel(const rt_meta_kernel *a, const rt_meta_kernel *b) {
    if (a->nparams != b->nparams || a->nconsts != b->nconsts || a->nospec != b->nospec) return false;
    for (int i = 0; i < a->nparams; i++)
        if (strcmp(a->params[i].name, b->params[i].name) || strcmp(a->params[i].type_str, b->params[i].type_str))
            return false;
    for (int i = 0; i < a->nconsts; i++)
        if (strcmp(a->consts[i].name, b->consts[i].name) || a->consts[i].type != b->consts[i].type ||
            a->consts[i].ival != b->consts[i].ival ||
            (a->consts[i].fval != b->consts[i].fval && a->consts[i].fval == a->consts[i].fval))
            return false;
    return true;
}

/* Split the line after "blk-meta" into fields. A space right after "*const"
 * is part of a params value. */
static int next_field(const char *s, const char *end, slice *out) {
    while (s < end && (*s == ' ' || *s == '\t' || *s == '\r')) s++;
    if (s >= end) return 0;
    const char *b = s;
    while (s < end && *s != '\t' && *s != '\r') {
        if (*s == ' ' && !(s - b >= 6 && memcmp(s - 6, "*const", 6) == 0)) break;
        s++;
    }
    out->s = b;
    out->n = (size_t)(s - b);
    return 1;
}

typedef struct {
    rt_meta_kernel k;   /* params and consts of this line */
    rt_meta_variant v;
} line_result;

static const char *const keys[] = {"kernel", "entry", "num_warps", "shared", "params",
                                   "consts", "spec",  "nospec",    "tmaps",  "cluster", "cluster_required"};
enum { K_KERNEL, K_ENTRY, K_NUM_WARPS, K_SHARED, K_PARAMS, K_CONSTS, K_SPEC, K_NOSPEC, K_TMAPS, K_CLUSTER,
       K_CLUSTER_REQUIRED, K_COUNT };

/* cluster=N: the entry's code is written for clusters of N CTAs along grid
 * x and also runs correctly without one (a 1-CTA cluster), so a launch may
 * fall back to a plain one (gpu_module.c). N is at most 8, the portable
 * cluster size, and a power of two. */
static bool parse_cluster(parser *P, slice v, rt_meta_variant *var) {
    long long x = 1;
    if (v.s && !parse_int(P, v, "cluster", LLONG_MIN, LLONG_MAX, &x)) return false;
    if (x != 1 && x != 2 && x != 4 && x != 8)
        FAIL(P, "blk-meta line %d: cluster must be 1, 2, 4 or 8, got %lld", P->line, x);
    var->cluster = (int)x;
    return true;
}

static bool parse_line(parser *P, const char *s, const char *end, line_result *out) {
    slice f, val[K_COUNT] = {{0}};
    bool seen[K_COUNT] = {0};
    /* the version */
    if (!next_field(s, end, &f)) FAIL(P, "blk-meta line %d: no version (expected 'v1')", P->line);
    s = f.s + f.n;
    if (!slice_eq(f, "v1")) {
        if (f.n >= 2 && f.s[0] == 'v' && is_digit(f.s[1]))
            FAIL(P, "blk-meta line %d: version '%.*s' is newer than this runtime understands (v1)", P->line,
                 (int)f.n, f.s);
        FAIL(P, "blk-meta line %d: expected 'v1' after 'blk-meta', got '%.*s'", P->line, (int)f.n, f.s);
    }
    while (next_field(s, end, &f)) {
        s = f.s + f.n;
        slice key, value;
        if (!split(f, '=', &key, &value)) FAIL(P, "blk-meta line %d: '%.*s' is not key=value", P->line, (int)f.n, f.s);
        int k = 0;
        while (k < K_COUNT && !slice_eq(key, keys[k])) k++;
        if (k == K_COUNT) FAIL(P, "blk-meta line %d: unknown key '%.*s'", P->line, (int)key.n, key.s);
        if (seen[k]) FAIL(P, "blk-meta line %d: key '%s' appears twice", P->line, keys[k]);
        seen[k] = true;
        val[k] = value;
        if (!val[k].s) val[k].s = ""; /* present but empty: "params=" */
    }
    for (int k = K_KERNEL; k <= K_PARAMS; k++)
        if (!seen[k]) FAIL(P, "blk-meta line %d: missing '%s='", P->line, keys[k]);
    if (!valid_name(val[K_KERNEL], false))
        FAIL(P, "blk-meta line %d: bad kernel name '%.*s'", P->line, (int)val[K_KERNEL].n, val[K_KERNEL].s);
    if (!valid_name(val[K_ENTRY], true))
        FAIL(P, "blk-meta line %d: bad entry name '%.*s'", P->line, (int)val[K_ENTRY].n, val[K_ENTRY].s);
    out->k.name = rt_pool_strndup(P->pool, val[K_KERNEL].s, val[K_KERNEL].n);
    out->v.entry = rt_pool_strndup(P->pool, val[K_ENTRY].s, val[K_ENTRY].n);
    if (!out->k.name || !out->v.entry) FAIL_OOM(P);
    out->v.line = P->line;
    long long x;
    if (!parse_int(P, val[K_NUM_WARPS], "num_warps", 1, 32, &x)) return false;
    out->v.num_warps = (int)x;
    if (!parse_int(P, val[K_SHARED], "shared", 0, 0x7fffffff, &x)) return false;
    out->v.shared = (int)x;
    if (!parse_params(P, val[K_PARAMS], &out->k)) return false;
    if (!parse_consts(P, seen[K_CONSTS] ? val[K_CONSTS] : (slice){"", 0}, &out->k)) return false;
    if (!parse_nospec(P, seen[K_NOSPEC] ? val[K_NOSPEC] : (slice){"", 0}, &out->k)) return false;
    if (!parse_spec(P, seen[K_SPEC] ? val[K_SPEC] : (slice){NULL, 0}, &out->k, &out->v)) return false;
    if (!parse_cluster(P, seen[K_CLUSTER] ? val[K_CLUSTER] : (slice){NULL, 0}, &out->v)) return false;
    if (seen[K_CLUSTER_REQUIRED]) {
        if (!parse_int(P, val[K_CLUSTER_REQUIRED], "cluster_required", 0, 1, &x)) return false;
        out->v.cluster_required = x == 1;
        if (out->v.cluster_required && out->v.cluster < 2)
            FAIL(P, "blk-meta line %d: cluster_required=1 needs cluster= of 2, 4 or 8", P->line);
    }
    return parse_tmaps(P, seen[K_TMAPS] ? val[K_TMAPS] : (slice){"", 0}, &out->k, &out->v);
}

/* Is this line a blk-meta line? Returns the text after "blk-meta". */
static const char *meta_start(const char *s, const char *end) {
    while (s < end && (*s == ' ' || *s == '\t')) s++;
    if (end - s < 2 || s[0] != '/' || s[1] != '/') return NULL;
    s += 2;
    while (s < end && (*s == ' ' || *s == '\t')) s++;
    if (end - s < 8 || memcmp(s, "blk-meta", 8) != 0) return NULL;
    s += 8;
    if (s < end && *s != ' ' && *s != '\t') return NULL; /* "blk-metadata": not ours */
    return s;
}

static bool add_line(parser *P, rt_meta *m, int *cap, line_result *r) {
    rt_meta_kernel *k = NULL;
    for (int i = 0; i < m->nkernels; i++) {
        for (int j = 0; j < m->kernels[i].nvariants; j++)
            if (strcmp(m->kernels[i].variants[j].entry, r->v.entry) == 0)
                FAIL(P, "blk-meta line %d: entry '%s' is already described on line %d", P->line, r->v.entry,
                     m->kernels[i].variants[j].line);
        if (strcmp(m->kernels[i].name, r->k.name) == 0) k = &m->kernels[i];
    }
    if (!k) {
        if (m->nkernels == *cap) {
            int ncap = *cap ? *cap * 2 : 8;
            rt_meta_kernel *nk = rt_pool_alloc(P->pool, sizeof(rt_meta_kernel) * (size_t)ncap);
            if (!nk) FAIL_OOM(P);
            if (m->nkernels) memcpy(nk, m->kernels, sizeof(rt_meta_kernel) * (size_t)m->nkernels);
            m->kernels = nk;
            *cap = ncap;
        }
        k = &m->kernels[m->nkernels++];
        *k = r->k;
        k->variants = NULL;
        k->nvariants = 0;
    } else {
        if (!rt_meta_same_kernel(k, &r->k))
            FAIL(P, "blk-meta line %d: kernel '%s' has different params or consts than on line %d", P->line, k->name,
                 k->variants[0].line);
        /* One spec may have two variants: with tensor maps and without (the
         * fallback when this launch's tensors cannot be mapped). */
        for (int j = 0; j < k->nvariants; j++)
            if (memcmp(k->variants[j].spec, r->v.spec, (size_t)k->nparams) == 0 &&
                (k->variants[j].ntmaps > 0) == (r->v.ntmaps > 0))
                FAIL(P, "blk-meta line %d: kernel '%s' already has a variant with this spec%s (entry '%s', line %d)",
                     P->line, k->name, r->v.ntmaps ? " and tensor maps" : "", k->variants[j].entry,
                     k->variants[j].line);
    }
    /* Variants are few: grow by copying. */
    rt_meta_variant *nv = rt_pool_alloc(P->pool, sizeof(rt_meta_variant) * (size_t)(k->nvariants + 1));
    if (!nv) FAIL_OOM(P);
    if (k->nvariants) memcpy(nv, k->variants, sizeof(rt_meta_variant) * (size_t)k->nvariants);
    nv[k->nvariants++] = r->v;
    k->variants = nv;
    return true;
}

blkrt_status rt_meta_parse(const char *text, size_t len, rt_meta *out) {
    memset(out, 0, sizeof *out);
    out->pool = rt_pool_new();
    if (!out->pool) return rt_err(BLKRT_ERR_OUT_OF_MEMORY, "out of memory");
    parser P = {.pool = out->pool, .line = 0, .status = BLKRT_OK};
    int cap = 0;
    const char *s = text, *end = text + len;
    while (s < end) {
        const char *nl = memchr(s, '\n', (size_t)(end - s));
        const char *eol = nl ? nl : end;
        P.line++;
        const char *body = meta_start(s, eol);
        if (body) {
            line_result r;
            memset(&r, 0, sizeof r);
            if (!parse_line(&P, body, eol, &r) || !add_line(&P, out, &cap, &r)) {
                rt_pool_free(out->pool);
                memset(out, 0, sizeof *out);
                return P.status ? P.status : BLKRT_ERR_META;
            }
        }
        s = nl ? nl + 1 : end;
    }
    return BLKRT_OK;
}

void rt_meta_free(rt_meta *m) {
    if (!m) return;
    rt_pool_free(m->pool);
    memset(m, 0, sizeof *m);
}

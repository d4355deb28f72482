/* index_gen.c — index_diff's kernels (index_gen.h): printing a kernel as
 * blk source, interval arithmetic (every node's range, so nothing
 * overflows and every access is in bounds), exact evaluation (the hints are
 * placed only where true), and the seeded generator.
 */
#define _GNU_SOURCE
#define DIFF_NO_ARC4RANDOM /* index_diff.c's (or, in gpu_tools, gpu_check.c's) */
#include "index_gen.h"

static const char *const bop_text[] = {"+", "-", "*", "/", "%", "<<", ">>", "&", "|", "minimum", "maximum"};






static int elems_per_program(const kspec *K) { return K->rank == 1 ? K->b0 : K->b0 * K->b1; }

/* ---- printing ---- */

static void print_const(sbuf *b, int64_t c) {
    if (c < 0) sb_printf(b, "(%lld)", (long long)c);
    else sb_printf(b, "%lld", (long long)c);
}

/* flat: inside an N_EXPAND*, where aranges are 1-D (r0, not r0[:, None]) */
static void print_expr_in(sbuf *b, const kspec *K, int i, bool flat) {
    const node *n = &K->n_[i];
    switch (n->kind) {
    case N_PID: sb_printf(b, n->wide ? "pidw" : "pid"); break;
    case N_AR0:
        if (K->rank == 1) sb_printf(b, n->wide ? "rw" : "r");
        else if (flat) sb_printf(b, n->wide ? "r0w" : "r0");
        else sb_printf(b, n->wide ? "r0w[:, None]" : "r0[:, None]");
        break;
    case N_AR1:
        if (flat) sb_printf(b, n->wide ? "r1w" : "r1");
        else sb_printf(b, n->wide ? "r1w[None, :]" : "r1[None, :]");
        break;
    case N_EXPAND0:
    case N_EXPAND1:
        sb_printf(b, "(");
        print_expr_in(b, K, n->l, true);
        sb_printf(b, ")%s", n->kind == N_EXPAND0 ? "[:, None]" : "[None, :]");
        break;
    case N_ARG: sb_printf(b, "a%d", n->arg); break;
    case N_CONST: print_const(b, n->c); break;
    case N_BIN:
        if (n->op == B_MIN || n->op == B_MAX) {
            sb_printf(b, "%s(", bop_text[n->op]);
            print_expr_in(b, K, n->l, flat);
            sb_printf(b, ", ");
            print_expr_in(b, K, n->r, flat);
            sb_printf(b, ")");
        } else {
            sb_printf(b, "(");
            print_expr_in(b, K, n->l, flat);
            sb_printf(b, " %s ", bop_text[n->op]);
            print_expr_in(b, K, n->r, flat);
            sb_printf(b, ")");
        }
        break;
    case N_MULTIPLE_OF:
    case N_MAX_CONTIG:
        sb_printf(b, "%s(", n->kind == N_MULTIPLE_OF ? "multiple_of" : "max_contiguous");
        print_expr_in(b, K, n->l, flat);
        sb_printf(b, ", %lld)", (long long)n->c);
        break;
    case N_ALIGNED:
        sb_printf(b, "max_contiguous(multiple_of(");
        print_expr_in(b, K, n->l, flat);
        sb_printf(b, ", %lld), %lld)", (long long)n->c, (long long)n->c);
        break;
    }
}
static void print_expr(sbuf *b, const kspec *K, int i) { print_expr_in(b, K, i, false); }

/* The kernel's source text (malloc'd). */
char *kernel_source(const kspec *K, const kderived *D) {
    sbuf b = {0};
    const char *T = elems[K->elem].name;
    sb_printf(&b, "kernel idx(x: *%s, y: *%s, out: *%s", T, T, T);
    for (int a = 0; a < K->nargs; a++) sb_printf(&b, ", a%d: %s", a, K->arg_wide[a] ? "i64" : "i32");
    if (K->mask & MK_N) sb_printf(&b, ", n: i32");
    sb_printf(&b, ") {\n    let pid = program_id(0);\n    let pidw = pid as i64;\n");
    if (K->rank == 1) {
        sb_printf(&b, "    let r = arange(0, %d);\n    let rw = r as i64;\n", K->b0);
        sb_printf(&b, "    let lin = pid * %d + r;\n", K->b0);
    } else {
        sb_printf(&b, "    let r0 = arange(0, %d);\n    let r1 = arange(0, %d);\n", K->b0, K->b1);
        sb_printf(&b, "    let r0w = r0 as i64;\n    let r1w = r1 as i64;\n");
        sb_printf(&b, "    let lin = (pid * %d + r0)[:, None] * %d + r1[None, :];\n", K->b0, K->b1);
    }
    sb_printf(&b, "    let e = broadcast_to(");
    print_expr(&b, K, K->root);
    if (K->rank == 1) sb_printf(&b, ", [%d]);\n", K->b0);
    else sb_printf(&b, ", [%d, %d]);\n", K->b0, K->b1);
    const char *msk = "";
    if (K->mask) {
        msk = ", m";
        sb_printf(&b, "    let m = ");
        const char *sep = "";
        if (K->mask & MK_N) sb_printf(&b, "(lin < n)"), sep = " & ";
        if (K->mask & MK_AR) {
            const char *rv = K->rank == 1 ? "r" : K->mask_ar_dim ? "r1[None, :]" : "r0[:, None]";
            sb_printf(&b, "%s(%s < %lld)", sep, rv, (long long)K->mask_ar_c), sep = " & ";
        }
        if (K->mask & MK_E) {
            sb_printf(&b, "%s(e %s ", sep, K->mask_e_ge ? ">=" : "<");
            print_const(&b, K->mask_e_c);
            sb_printf(&b, ")");
        }
        sb_printf(&b, ";\n");
    }
    char off[32];
    snprintf(off, sizeof off, D->off < 0 ? "(%lld)" : "%lld", (long long)D->off);
    const char *fx = K->ptr_form == 0 ? "x + %s + e" : K->ptr_form == 1 ? "x + (e + %s)" : "(x + e) + %s";
    const char *fy = K->ptr_form == 0 ? "y + %s + e" : K->ptr_form == 1 ? "y + (e + %s)" : "(y + e) + %s";
    char px[64], py[64];
    snprintf(px, sizeof px, fx, off);
    snprintf(py, sizeof py, fy, off);
    sb_printf(&b, "    store(out + lin, load(%s%s)%s);\n", px, msk, msk);
    sb_printf(&b, "    store(%s, (e * 3 + 1) as %s%s);\n}\n", py, T, msk);
    return b.s;
}

/* ---- interval arithmetic ---- */


static int64_t fdiv(int64_t a, int64_t b) { /* floor division, b > 0 */
    int64_t q = a / b;
    return (a % b != 0 && a < 0) ? q - 1 : q;
}
static int64_t min2(int64_t a, int64_t b) { return a < b ? a : b; }
static int64_t max2(int64_t a, int64_t b) { return a > b ? a : b; }
static int64_t arg_lo(const kspec *K, int a) {
    int64_t v = K->argv[0][a];
    for (int r = 1; r < K->nruns; r++) v = min2(v, K->argv[r][a]);
    return v;
}
static int64_t arg_hi(const kspec *K, int a) {
    int64_t v = K->argv[0][a];
    for (int r = 1; r < K->nruns; r++) v = max2(v, K->argv[r][a]);
    return v;
}

/* The bound every node keeps to: far from its type's overflow, so that the
 * interval arithmetic below (in int64) is exact and wrapping never happens. */

static bool flat_ok(const kspec *K, int i, int ar) {
    const node *n = &K->n_[i];
    switch (n->kind) {
    case N_AR0:
    case N_AR1: return n->kind == ar;
    case N_BIN: return flat_ok(K, n->l, ar) && flat_ok(K, n->r, ar);
    case N_PID:
    case N_ARG:
    case N_CONST: return true;
    default: return false;
    }
}

/* Interval of node i over every launch; false if it may leave its bound or is
 * not a valid expression (a divisor that may be 0, a shift out of range). */
static bool interval(const kspec *K, int i, ival *o) {
    const node *n = &K->n_[i];
    memset(o, 0, sizeof *o);
    switch (n->kind) {
    case N_PID: o->lo = 0, o->hi = K->grid - 1, o->wide = n->wide; return true;
    case N_AR0: o->lo = 0, o->hi = K->b0 - 1, o->wide = n->wide, o->shape = 1; return true;
    case N_AR1: o->lo = 0, o->hi = K->b1 - 1, o->wide = n->wide, o->shape = 2; return K->rank == 2;
    case N_ARG:
        if (n->arg >= K->nargs) return false;
        o->lo = arg_lo(K, n->arg), o->hi = arg_hi(K, n->arg), o->wide = K->arg_wide[n->arg];
        return true;
    case N_CONST: o->lo = o->hi = n->c, o->lit = true; return n->c > -BOUND32 && n->c < BOUND32;
    case N_MULTIPLE_OF:
    case N_MAX_CONTIG:
    case N_ALIGNED: return n->c >= 1 && interval(K, n->l, o) && (o->lit = false, true);
    case N_EXPAND0:
    case N_EXPAND1: {
        /* a 1-D subtree along its own dim: only that arange, no hints, no
         * nested expands (the shrinker may move nodes; this keeps the
         * printed kernel and eval() the same function) */
        int want = n->kind == N_EXPAND0 ? 1 : 2;
        return K->rank == 2 && flat_ok(K, n->l, n->kind == N_EXPAND0 ? N_AR0 : N_AR1) && interval(K, n->l, o) &&
               o->shape == want && !o->lit;
    }
    case N_BIN: break;
    default: return false;
    }
    ival x, y;
    if (!interval(K, n->l, &x) || !interval(K, n->r, &y)) return false;
    o->wide = x.wide || y.wide;
    o->lit = x.lit && y.lit;
    o->shape = x.shape | y.shape;
    int64_t c = y.lo; /* the constant right operand of / % << >> & | */
    bool yconst = y.lo == y.hi;
    switch (n->op) {
    case B_ADD: o->lo = x.lo + y.lo, o->hi = x.hi + y.hi; break;
    case B_SUB: o->lo = x.lo - y.hi, o->hi = x.hi - y.lo; break;
    case B_MUL: {
        int64_t p[4];
        /* operands are within 2^40: a product may not fit int64 (checked, not UB) */
        if (__builtin_mul_overflow(x.lo, y.lo, &p[0]) || __builtin_mul_overflow(x.lo, y.hi, &p[1]) ||
            __builtin_mul_overflow(x.hi, y.lo, &p[2]) || __builtin_mul_overflow(x.hi, y.hi, &p[3]))
            return false;
        o->lo = min2(min2(p[0], p[1]), min2(p[2], p[3]));
        o->hi = max2(max2(p[0], p[1]), max2(p[2], p[3]));
        break;
    }
    case B_DIV: /* truncating division is monotonic in the dividend for a fixed divisor */
        if (y.lo <= 0 && y.hi >= 0) return false;
        {
            int64_t p[4] = {x.lo / y.lo, x.lo / y.hi, x.hi / y.lo, x.hi / y.hi};
            o->lo = min2(min2(p[0], p[1]), min2(p[2], p[3]));
            o->hi = max2(max2(p[0], p[1]), max2(p[2], p[3]));
        }
        break;
    case B_REM: { /* the dividend's sign, |r| < |divisor| */
        if (y.lo <= 0 && y.hi >= 0) return false;
        int64_t m = max2(y.hi < 0 ? -y.lo : y.hi, y.lo < 0 ? -y.lo : y.lo) - 1;
        o->lo = x.lo >= 0 ? 0 : max2(x.lo, -m);
        o->hi = x.hi <= 0 ? 0 : min2(x.hi, m);
        break;
    }
    case B_SHL:
        if (!yconst || c < 0 || c > 8) return false;
        o->lo = x.lo * ((int64_t)1 << c), o->hi = x.hi * ((int64_t)1 << c);
        break;
    case B_SHR: /* arithmetic: floor division by 2^c */
        if (!yconst || c < 0 || c > 8) return false;
        o->lo = fdiv(x.lo, (int64_t)1 << c), o->hi = fdiv(x.hi, (int64_t)1 << c);
        break;
    case B_AND:
        if (!yconst) return false;
        /* c >= 0: 0 <= x & c <= c (and <= x when x >= 0); c < 0 clears the
         * low bits ~c: x - ~c <= x & c <= x */
        if (c >= 0) o->lo = 0, o->hi = x.lo >= 0 ? min2(c, x.hi) : c;
        else o->lo = x.lo - ~c, o->hi = x.hi;
        break;
    case B_OR:
        if (!yconst) return false;
        /* c >= 0: x <= x | c <= x + c; c < 0: c <= x | c <= -1 */
        if (c >= 0) o->lo = x.lo, o->hi = x.hi + c;
        else o->lo = c, o->hi = -1;
        break;
    case B_MIN: o->lo = min2(x.lo, y.lo), o->hi = min2(x.hi, y.hi); break;
    case B_MAX: o->lo = max2(x.lo, y.lo), o->hi = max2(x.hi, y.hi); break;
    default: return false;
    }
    int64_t bound = o->wide ? BOUND64 : BOUND32;
    return o->lo > -bound && o->hi < bound && x.lo > -bound && x.hi < bound;
}

/* ---- exact evaluation (for hints and the report) ---- */


int64_t eval(const kspec *K, int i, const point *p) {
    const node *n = &K->n_[i];
    switch (n->kind) {
    case N_PID: return p->pid;
    case N_AR0: return p->i0;
    case N_AR1: return p->i1;
    case N_ARG: return K->argv[p->run][n->arg];
    case N_CONST: return n->c;
    case N_MULTIPLE_OF:
    case N_MAX_CONTIG:
    case N_ALIGNED:
    case N_EXPAND0:
    case N_EXPAND1: return eval(K, n->l, p);
    default: break;
    }
    int64_t x = eval(K, n->l, p), y = eval(K, n->r, p);
    switch (n->op) {
    case B_ADD: return x + y;
    case B_SUB: return x - y;
    case B_MUL: return x * y;
    case B_DIV: return y ? x / y : 0;
    case B_REM: return y ? x % y : 0;
    case B_SHL: return x * ((int64_t)1 << (y & 31));
    case B_SHR: return fdiv(x, (int64_t)1 << (y & 31));
    case B_AND: return x & y;
    case B_OR: return x | y;
    case B_MIN: return min2(x, y);
    case B_MAX: return max2(x, y);
    }
    return 0;
}

/* Every point of every launch, in order (i1 fastest). */
static bool next_point(const kspec *K, point *p) {
    int n1 = K->rank == 2 ? K->b1 : 1;
    if (++p->i1 < n1) return true;
    p->i1 = 0;
    if (++p->i0 < K->b0) return true;
    p->i0 = 0;
    if (++p->pid < K->grid) return true;
    p->pid = 0;
    return ++p->run < K->nruns;
}

static int64_t gcd64(int64_t a, int64_t b) {
    if (a < 0) a = -a;
    if (b < 0) b = -b;
    while (b) {
        int64_t t = a % b;
        a = b, b = t;
    }
    return a;
}


static facts node_facts(const kspec *K, int i) {
    int last = K->rank == 1 ? K->b0 : K->b1;
    facts f = {0, last, last};
    point p = {0, 0, 0, 0};
    int64_t prev = 0;
    do {
        int64_t v = eval(K, i, &p);
        f.gcd = gcd64(f.gcd, v);
        int li = K->rank == 1 ? p.i0 : p.i1;
        /* a break at li (not a run of consecutive values) limits runs to the pow2 part of li */
        if (li > 0 && v != prev + 1) {
            int64_t c = li & -li;
            if (c < f.contig) f.contig = c;
        }
        if (li % f.aligned == 0)
            while (f.aligned > 1 && (v % f.aligned != 0 || li % f.aligned != 0)) f.aligned /= 2;
        prev = v;
    } while (next_point(K, &p));
    if (f.aligned > f.contig) f.aligned = f.contig;
    /* the starts of the (shorter) runs must still be multiples: re-check */
    while (f.aligned > 1) {
        point q = {0, 0, 0, 0};
        bool ok = true;
        do {
            int li = K->rank == 1 ? q.i0 : q.i1;
            if (li % f.aligned == 0 && eval(K, i, &q) % f.aligned != 0) ok = false;
        } while (ok && next_point(K, &q));
        if (ok) break;
        f.aligned /= 2;
    }
    return f;
}

/* Whether every hint in the tree is true. */
static bool hints_true(const kspec *K, int i) {
    const node *n = &K->n_[i];
    switch (n->kind) {
    case N_BIN: return hints_true(K, n->l) && hints_true(K, n->r);
    case N_EXPAND0:
    case N_EXPAND1: return hints_true(K, n->l);
    case N_MULTIPLE_OF:
    case N_MAX_CONTIG:
    case N_ALIGNED: {
        if (!hints_true(K, n->l)) return false;
        ival v;
        if (!interval(K, n->l, &v) || v.lit) return false; /* hints take typed values, not literals */
        int lastbit = K->rank == 1 ? 1 : 2;
        if (n->kind != N_MULTIPLE_OF && !(v.shape & lastbit)) return false; /* only on values along the last dim */
        if (n->kind == N_ALIGNED && K->rank != 1) return false;
        facts f = node_facts(K, n->l);
        if (n->kind == N_MULTIPLE_OF) return f.gcd % n->c == 0;
        if (n->kind == N_MAX_CONTIG) return f.contig % n->c == 0;
        return f.aligned % n->c == 0;
    }
    default: return true;
    }
}

/* Everything a kspec implies, or false if it is not a valid test (the
 * generator and the shrinker then try something else). */
bool prepare(const kspec *K, kderived *D) {
    ival v;
    if (K->root < 0 || K->root >= K->nn || !interval(K, K->root, &v)) return false;
    D->lo = v.lo, D->hi = v.hi;
    D->off = K->extra_off - v.lo;
    D->span = D->off + v.hi + 1;
    D->total = (int64_t)K->grid * elems_per_program(K);
    if (D->span > MAX_SPAN || D->span < 1) return false;
    if ((K->mask & MK_E) && (K->mask_e_c < -BOUND32 || K->mask_e_c > BOUND32)) return false;
    /* e * 3 + 1 in the expression's type: keep it from wrapping */
    if (!v.wide && (v.lo < -(BOUND32 / 2) || v.hi > BOUND32 / 2)) return false;
    return hints_true(K, K->root);
}

/* ---- generation ---- */

static int add_node(kspec *K, node n) {
    if (K->nn >= MAXN) return -1;
    K->n_[K->nn] = n;
    return K->nn++;
}
static int leaf(kspec *K, nkind k, int64_t c) { return add_node(K, (node){.kind = (uint8_t)k, .c = c}); }
static int bin(kspec *K, bop op, int l, int r) {
    if (l < 0 || r < 0) return -1;
    return add_node(K, (node){.kind = N_BIN, .op = (uint8_t)op, .l = (int16_t)l, .r = (int16_t)r});
}

static const int64_t small_consts[] = {0, 1, 2, 3, 4, 5, 7, 8, 12, 16, 31, 32, 64, 100, -1, -2, -3, -4, -7, -8, -16, -33};
static const int64_t divisors[] = {2, 3, 4, 5, 7, 8, 12, 16, 32, 64, 100, -2, -3, -4, -8, -16};
static const int64_t and_masks[] = {1, 3, 7, 12, 15, 16, 31, 48, 63, 255, -2, -4, -16, -64};
static const int64_t or_masks[] = {1, 2, 3, 7, 8, 15, 16, -16, -4};

static int gen_expr(rng *R, kspec *K, int depth, bool idx64, int flat);
static int gen_expand(rng *R, kspec *K, bool idx64, int ar);

/* (1-D expression over one arange)[:, None] or [None, :] */
static int gen_expand(rng *R, kspec *K, bool idx64, int ar) {
    int c = gen_expr(R, K, 1 + rnd(R, 2), idx64, ar);
    ival v;
    if (c >= 0 && (!interval(K, c, &v) || !v.shape)) c = bin(K, B_ADD, c, add_node(K, (node){.kind = (uint8_t)ar}));
    if (c < 0) return c;
    return add_node(K, (node){.kind = (uint8_t)(ar == N_AR0 ? N_EXPAND0 : N_EXPAND1), .l = (int16_t)c});
}

/* flat: 0, or N_AR0 / N_AR1 inside an N_EXPAND* (only that arange) */
static int gen_leaf(rng *R, kspec *K, bool idx64, int flat) {
    int k = rnd(R, 14);
    node n = {0};
    if (k < 4 || (flat && k < 8)) n.kind = (uint8_t)(flat ? flat : K->rank == 2 && rnd(R, 2) ? N_AR1 : N_AR0);
    else if (k < 6) n.kind = N_PID;
    else if (k < 8 && K->nargs) n.kind = N_ARG, n.arg = (int8_t)rnd(R, K->nargs);
    else if (k == 12 && K->rank == 2 && !flat) { /* a 1-D expression, then expanded */
        int ar = rnd(R, 2) ? N_AR1 : N_AR0;
        return gen_expand(R, K, idx64, ar);
    } else if (k == 13 && K->rank == 2 && !flat) { /* Triton's 2-D offsets: rows[:, None] * stride + cols[None, :] */
        int rows = gen_expand(R, K, idx64, N_AR0);
        int stride = K->nargs && chance(R, 40) ? add_node(K, (node){.kind = N_ARG, .arg = (int8_t)rnd(R, K->nargs)})
                                                : leaf(K, N_CONST, chance(R, 50) ? K->b1 : PICK(R, small_consts));
        int cols = chance(R, 50) ? gen_expand(R, K, idx64, N_AR1) : add_node(K, (node){.kind = N_AR1});
        return bin(K, B_ADD, bin(K, B_MUL, rows, stride), cols);
    } else if (k < 10) { /* Triton's offsets: pid * B + arange, along the last dim */
        node pid = {.kind = N_PID, .wide = idx64 && chance(R, 70)};
        node ar = {.kind = (uint8_t)(flat ? flat : K->rank == 2 ? N_AR1 : N_AR0), .wide = idx64 && chance(R, 50)};
        int blk = ar.kind == N_AR1 ? K->b1 : K->b0;
        int64_t scale = rnd(R, 4) == 0 ? PICK(R, small_consts) : blk;
        return bin(K, B_ADD, bin(K, B_MUL, add_node(K, pid), leaf(K, N_CONST, scale)), add_node(K, ar));
    } else n.kind = N_CONST, n.c = PICK(R, small_consts);
    if ((n.kind == N_PID || n.kind == N_AR0 || n.kind == N_AR1) && idx64) n.wide = chance(R, 70);
    return add_node(K, n);
}

static int gen_expr(rng *R, kspec *K, int depth, bool idx64, int flat) {
    if (depth <= 0 || chance(R, 20)) return gen_leaf(R, K, idx64, flat);
    bop op = (bop)rnd(R, B_MAX + 1);
    int l = gen_expr(R, K, depth - 1, idx64, flat), r;
    switch (op) {
    case B_DIV:
    case B_REM: {
        /* a nonzero divisor: a constant, or an argument (never 0 in any run) */
        if (K->nargs && chance(R, 25)) {
            node a = {.kind = N_ARG, .arg = (int8_t)rnd(R, K->nargs)};
            r = add_node(K, a);
        } else r = leaf(K, N_CONST, PICK(R, divisors));
        break;
    }
    case B_SHL:
    case B_SHR: r = leaf(K, N_CONST, rnd(R, 6)); break;
    case B_AND: r = leaf(K, N_CONST, PICK(R, and_masks)); break;
    case B_OR: r = leaf(K, N_CONST, PICK(R, or_masks)); break;
    case B_MUL: /* keep products small: one side a leaf */
        r = chance(R, 60) ? leaf(K, N_CONST, PICK(R, small_consts)) : gen_leaf(R, K, idx64, flat);
        break;
    default: r = gen_expr(R, K, depth - 1, idx64, flat); break;
    }
    int b = bin(K, op, l, r);
    if (b < 0) return l;
    if (!flat && chance(R, 20)) { /* a hint, kept only if it is true */
        ival v;
        /* evaluate only a valid node (no overflow), never a literal (hints need a type) */
        if (!interval(K, b, &v) || v.lit) return b;
        facts f = node_facts(K, b);
        int lastbit = K->rank == 1 ? 1 : 2;
        int which = rnd(R, 3);
        node h = {.l = (int16_t)b};
        if (which == 0 && f.gcd != 1) {
            int64_t g = f.gcd ? f.gcd : 16;
            h.kind = N_MULTIPLE_OF;
            h.c = rnd(R, 2) ? g : (g & -g);
            if (h.c > (1 << 20)) h.c = 1 << 20;
            if (g % h.c != 0) return b;
        } else if (which == 1 && f.contig >= 2 && (v.shape & lastbit)) {
            h.kind = N_MAX_CONTIG;
            h.c = f.contig >> rnd(R, 2);
        } else if (which == 2 && K->rank == 1 && f.aligned >= 2 && (v.shape & lastbit)) {
            h.kind = N_ALIGNED;
            h.c = f.aligned >> rnd(R, 2);
        } else return b;
        if (h.c < 1) return b;
        int hi = add_node(K, h);
        return hi < 0 ? b : hi;
    }
    return b;
}

static int64_t arbitrary_value(rng *R) {
    for (;;) {
        int64_t v = rnd(R, 81) - 40;
        if (v != 0 && v != 1 && v % 16 != 0) return v;
    }
}
static int64_t d16_value(rng *R) {
    int k = rnd(R, 7) - 3;
    return 16 * (k >= 0 ? k + 1 : k);
}

/* Kernel `index` of the run with seed `seed`. */
void generate(uint64_t seed, int index, kspec *K, kderived *D) {
    rng R = kernel_rng(seed, index);
    for (int attempt = 0;; attempt++) {
        memset(K, 0, sizeof *K);
        K->rank = chance(&R, 30) ? 2 : 1;
        if (K->rank == 1) K->b0 = 16 << rnd(&R, 7); /* 16 .. 1024 */
        else {
            K->b0 = 1 << (1 + rnd(&R, 4));  /* 2 .. 16 */
            K->b1 = 16 << rnd(&R, 3);       /* 16 .. 64 */
        }
        K->grid = 1 + rnd(&R, elems_per_program(K) >= 512 ? 3 : 6);
        static const int elem_w[] = {0, 1, 1, 2, 2, 2, 2, 3};
        K->elem = PICK(&R, elem_w);
        bool idx64 = chance(&R, 35);
        K->nargs = rnd(&R, MAXA + 1);
        for (int a = 0; a < K->nargs; a++) K->arg_wide[a] = idx64 && chance(&R, 70);
        K->mask = 0;
        if (chance(&R, 30)) K->mask |= MK_N;
        if (chance(&R, 20)) K->mask |= MK_AR;
        if (chance(&R, 25)) K->mask |= MK_E;
        K->nruns = K->nargs || (K->mask & MK_N) ? NRUNS : 1;
        int total = K->grid * elems_per_program(K);
        for (int r = 0; r < K->nruns; r++) {
            bool any_eq1 = false;
            for (int a = 0; a < K->nargs; a++) {
                int64_t v = r == 0 ? d16_value(&R) : r == 2 ? arbitrary_value(&R) : 0;
                if (r == 1) {
                    bool one = chance(&R, 60) || (a == K->nargs - 1 && !any_eq1);
                    v = one ? 1 : chance(&R, 50) ? d16_value(&R) : arbitrary_value(&R);
                    any_eq1 |= one;
                }
                K->argv[r][a] = v;
            }
            K->n[r] = r == 0 ? 16 * rnd(&R, total / 16 + 1) : 1 + rnd(&R, total + 16);
        }
        K->mask_ar_dim = K->rank == 2 ? rnd(&R, 2) : 0;
        K->mask_ar_c = rnd(&R, (K->rank == 2 && K->mask_ar_dim ? K->b1 : K->b0) + 1);
        K->mask_e_ge = chance(&R, 50);
        K->ptr_form = rnd(&R, 3);
        K->extra_off = chance(&R, 50) ? 0 : rnd(&R, 40);
        K->root = gen_expr(&R, K, 1 + rnd(&R, 4), idx64, 0);
        ival v;
        bool ok = K->root >= 0 && interval(K, K->root, &v);
        /* too wide a range for the buffers: fold it with a remainder */
        if (ok && v.hi - v.lo + 40 > MAX_SPAN / 2) {
            int c = leaf(K, N_CONST, 17 + rnd(&R, 4080));
            int b = c < 0 ? -1 : bin(K, chance(&R, 50) ? B_REM : B_AND, K->root, c);
            if (b >= 0) K->root = b;
            ok = interval(K, K->root, &v);
        }
        if (ok) K->mask_e_c = v.lo + rnd(&R, (int)min2(v.hi - v.lo + 1, 1 << 20) + 1);
        if (ok && prepare(K, D)) return;
        if (attempt > 200) { /* give up on fancy: the plain offsets */
            memset(K, 0, sizeof *K);
            K->rank = 1, K->b0 = 64, K->grid = 2, K->elem = 2, K->nruns = 1;
            K->root = bin(K, B_ADD, bin(K, B_MUL, leaf(K, N_PID, 0), leaf(K, N_CONST, 64)), leaf(K, N_AR0, 0));
            prepare(K, D);
            return;
        }
    }
}

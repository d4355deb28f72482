/* axisinfo.c — contiguity / divisibility / constancy analysis (axisinfo.h).
 *
 * Needs: verified Block IR (ELEM operands have equal shapes; SPLAT/BROADCAST
 * explicit). Guarantees: a fact for every value of the function, never
 * stronger than what holds for every execution under the given argument
 * assumptions. One forward walk in program order (definitions precede uses);
 * loop-carried values and the results of region ops get the conservative
 * facts, except a FOR's induction variable (divisible by gcd(lb, step)).
 */
#include "axisinfo.h"

#include <string.h>

int64_t ax_pow2_div(int64_t x) {
    if (x == 0) return AX_MAX_DIV;
    uint64_t u = (uint64_t)x;
    int64_t p = (int64_t)(u & (~u + 1));
    return p > AX_MAX_DIV || p <= 0 ? AX_MAX_DIV : p;
}

static int64_t gcd64(int64_t a, int64_t b) {
    while (b) { int64_t t = a % b; a = b; b = t; }
    return a < 0 ? -a : a;
}
static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }
static int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }
static int64_t cap(int64_t x) { return x > AX_MAX_DIV ? AX_MAX_DIV : x < 1 ? 1 : x; }

typedef struct {
    ax_table *t;
    const ax_spec *spec;
} ax_ctx;

static ax_info *slot(ax_table *t, const ir_value *v) {
    return v && v->id >= 0 && v->id < t->num_values ? &t->info[v->id] : NULL;
}

const ax_info *ax_get(const ax_table *t, const ir_value *v) {
    static const ax_info none = {{1, 1, 1, 1}, {1, 1, 1, 1}, {1, 1, 1, 1}, false, 0, false};
    if (!t || !v || v->id < 0 || v->id >= t->num_values) return &none;
    return &t->info[v->id];
}

static int rank_of(const ir_value *v) { return v->type.rank; }
static int64_t dim(const ir_value *v, int d) { return v->type.rank ? v->type.shape[d] : 1; }

static void set_default(ax_info *o) {
    for (int d = 0; d < IR_MAX_RANK; d++) o->contig[d] = o->div[d] = o->constancy[d] = 1;
    o->has_value = false;
    o->value = 0;
    o->nonneg = false;
}

/* A value equal along the whole of every dim (a splat / scalar): its runs
 * are whole dims, and every element has divisibility `div`. */
static void set_uniform(ax_info *o, const ir_value *v, int64_t div) {
    set_default(o);
    for (int d = 0; d < IR_MAX_RANK; d++) {
        o->div[d] = cap(div);
        o->constancy[d] = d < rank_of(v) ? dim(v, d) : 1;
    }
}

int64_t ax_elem_div(const ax_table *t, const ir_value *v) {
    const ax_info *i = ax_get(t, v);
    int64_t r = AX_MAX_DIV;
    int rank = rank_of(v) ? rank_of(v) : 1;
    for (int d = 0; d < rank; d++) r = min64(r, i->contig[d] > 1 ? 1 : i->div[d]);
    return r;
}

/* Shape ops move values, not change them: a known value stays known. */
static void keep_value(ax_info *o, const ax_info *x) {
    o->has_value = x->has_value;
    o->value = x->value;
    o->nonneg = x->nonneg;
}

static bool is_uniform(const ax_info *i, const ir_value *v) {
    for (int d = 0; d < rank_of(v); d++)
        if (i->constancy[d] < dim(v, d)) return false;
    return true;
}

/* The divisibility of the run starts of x along d when the result's runs
 * are c long: x's own (its runs' first elements) where a run of the result
 * starts only where one of x does or x is constant, else gcd(div, c) — the
 * result's runs start inside x's runs, c apart. With c = 1 this is the
 * divisibility of every element: 1 for a contiguous x (r + r is not
 * divisible by anything: index_diff --facts, X1; it became a misaligned
 * 16-byte load through expand_dims, X2). */
static int64_t div_at(const ax_info *x, int d, int64_t c) {
    return x->contig[d] > 1 && c < x->contig[d] ? gcd64(x->div[d], c) : x->div[d];
}

static void visit_binary(ax_ctx *C, ir_inst *in, ax_info *o) {
    ir_value *a = in->operands[0], *b = in->operands[1], *r = in->results[0];
    const ax_info *x = ax_get(C->t, a), *y = ax_get(C->t, b);
    int rank = rank_of(r) ? rank_of(r) : 1;
    set_default(o);
    blk_dtype dt = (blk_dtype)a->type.dtype;
    bool intlike = dtype_is_int(dt) || dt == DT_BOOL;
    /* a product with a known 1 (an eq1 argument) is the other factor */
    if (in->op == IR_MUL && dtype_is_int(dt) && ((x->has_value && x->value == 1) || (y->has_value && y->value == 1))) {
        *o = x->has_value && x->value == 1 ? *y : *x;
        return;
    }
    bool uns = dtype_is_int(dt) && !dtype_is_signed(dt);
    switch (in->op) {
    case IR_ADD: case IR_MUL: case IR_MINIMUM: o->nonneg = x->nonneg && y->nonneg; break;
    case IR_MAXIMUM: case IR_AND: o->nonneg = x->nonneg || y->nonneg; break;
    case IR_REM: o->nonneg = x->nonneg; break;
    case IR_DIV: o->nonneg = x->nonneg && y->nonneg; break; /* truncation keeps the sign */
    default: break;
    }
    for (int d = 0; d < rank; d++) {
        o->constancy[d] = gcd64(x->constancy[d], y->constancy[d]);
        switch (in->op) {
        case IR_ADD:
        case IR_SUB:
            if (!dtype_is_int(dt)) break;
            o->contig[d] = max64(gcd64(x->contig[d], y->constancy[d]),
                                 in->op == IR_ADD ? gcd64(x->constancy[d], y->contig[d]) : 1);
            o->div[d] = gcd64(div_at(x, d, o->contig[d]), div_at(y, d, o->contig[d]));
            break;
        case IR_MUL:
            if (!dtype_is_int(dt)) break;
            /* runs of a contiguous operand times a uniform one are no longer
             * contiguous; every element is then a multiple of both factors'
             * element divisibilities */
            o->div[d] = cap(ax_elem_div(C->t, a) * ax_elem_div(C->t, b));
            if (x->contig[d] == 1 && y->contig[d] == 1) o->div[d] = cap(x->div[d] * y->div[d]);
            break;
        case IR_SHL:
            if (!dtype_is_int(dt) || !is_uniform(y, b) || y->contig[0] != 1) break;
            /* shift by a uniform amount of known divisibility: only the
             * constant case is tracked (via the const's div being 2^k) */
            break;
        case IR_PTRADD: {
            int eb = dtype_bytes((blk_dtype)a->type.pointee);
            /* a uniform pointer plus contiguous offsets, or a contiguous
             * pointer block plus a uniform offset (x + offs + 64) */
            o->contig[d] = max64(max64(gcd64(x->constancy[d], y->contig[d]),
                                       gcd64(x->contig[d], y->constancy[d])), 1);
            o->div[d] = gcd64(div_at(x, d, o->contig[d]), cap(div_at(y, d, o->contig[d]) * eb));
            break;
        }
        case IR_CMP:
            if (!intlike) break;
            /* contiguous lhs vs a uniform rhs (offs < n): the result is
             * constant over aligned runs of gcd(contig, div(lhs), div(rhs)) */
            if (in->kind != IR_CMP_EQ && in->kind != IR_CMP_NE) {
                if (x->contig[d] > 1 && y->constancy[d] >= dim(b, d))
                    o->constancy[d] = max64(o->constancy[d], gcd64(x->contig[d], gcd64(x->div[d], y->div[d])));
                if (y->contig[d] > 1 && x->constancy[d] >= dim(a, d))
                    o->constancy[d] = max64(o->constancy[d], gcd64(y->contig[d], gcd64(y->div[d], x->div[d])));
            }
            break;
        case IR_AND:
        case IR_OR:
        case IR_XOR:
        case IR_MINIMUM:
        case IR_MAXIMUM:
            if (intlike && x->constancy[d] >= dim(a, d) && y->constancy[d] >= dim(b, d))
                o->div[d] = in->op == IR_AND || in->op >= IR_MINIMUM ? gcd64(x->div[d], y->div[d]) : 1;
            break;
        case IR_REM:
            /* (contiguous, never negative) % (uniform c): runs of gcd(contig,
             * div(c)). A negative dividend breaks this: remainder truncates
             * toward zero, so -4..-1 % 4 is 0, -3, -2, -1 (the miscompile of
             * Tensor cores I: one ld.v4 where the interpreter reads x[8], x[5],
             * x[6], x[7]). */
            if (dtype_is_int(dt) && (x->nonneg || uns) && y->constancy[d] >= dim(b, d) && y->contig[d] == 1) {
                /* a run of x starting at a multiple of g = gcd(contig, div(x),
                 * div(c)) stays contiguous for g elements: (1 + r) % 2 is not
                 * contiguous in pairs (index_diff --facts, X3) */
                o->contig[d] = gcd64(x->contig[d], gcd64(x->div[d], y->div[d]));
                o->div[d] = gcd64(div_at(x, d, o->contig[d]), y->div[d]);
            }
            break;
        default:
            break;
        }
        o->contig[d] = max64(o->contig[d], 1);
        o->div[d] = cap(o->div[d]);
        o->constancy[d] = max64(o->constancy[d], 1);
    }
}

static void visit_region(ax_ctx *C, ir_region *r);

/* The facts true of both a and b: the meet (runs and divisibilities of
 * powers of two meet at their gcd). */
static void meet(ax_info *o, const ax_info *a, const ax_info *b) {
    for (int d = 0; d < IR_MAX_RANK; d++) {
        o->contig[d] = gcd64(a->contig[d], b->contig[d]);
        o->div[d] = gcd64(a->div[d], b->div[d]);
        o->constancy[d] = gcd64(a->constancy[d], b->constancy[d]);
    }
    o->has_value = a->has_value && b->has_value && a->value == b->value;
    o->value = o->has_value ? a->value : 0;
    o->nonneg = a->nonneg && b->nonneg;
}

static bool same_info(const ax_info *a, const ax_info *b) {
    for (int d = 0; d < IR_MAX_RANK; d++)
        if (a->contig[d] != b->contig[d] || a->div[d] != b->div[d] || a->constancy[d] != b->constancy[d]) return false;
    return a->has_value == b->has_value && a->value == b->value && a->nonneg == b->nonneg;
}

/* for: the induction variable is lb + k*step; a loop-carried value has, on
 * every iteration, the facts of its init met with those of what the body
 * yields for it — a fixed point, reached from the init by meets (which only
 * weaken, so it ends; after AX_LOOP_ROUNDS it gives up on the facts). So
 * Triton's `p = p + BK` keeps the pointer's contiguity and alignment. */
#define AX_LOOP_ROUNDS 8
static void visit_for(ax_ctx *C, ir_inst *in) {
    ir_region *body = in->regions[0];
    if (body->args.len) {
        ax_info *iv = slot(C->t, body->args.data[0]);
        if (iv) {
            set_default(iv);
            iv->div[0] = gcd64(ax_elem_div(C->t, in->operands[0]), ax_elem_div(C->t, in->operands[2]));
            const ax_info *lb = ax_get(C->t, in->operands[0]), *st = ax_get(C->t, in->operands[2]);
            iv->nonneg = lb->nonneg && st->nonneg;
        }
    }
    for (int k = 1; k < body->args.len; k++) {
        ax_info *s = slot(C->t, body->args.data[k]);
        if (s) *s = 2 + k < in->num_operands ? *ax_get(C->t, in->operands[2 + k]) : (set_default(s), *s);
    }
    ir_inst *y = body->last;
    bool stable = false;
    for (int round = 0; round < AX_LOOP_ROUNDS && !stable; round++) {
        visit_region(C, body);
        stable = true;
        for (int k = 1; k < body->args.len; k++) {
            ax_info *s = slot(C->t, body->args.data[k]);
            if (!s) continue;
            ax_info m;
            if (y && y->op == IR_YIELD && k - 1 < y->num_operands) meet(&m, s, ax_get(C->t, y->operands[k - 1]));
            else set_default(&m);
            if (!same_info(&m, s)) *s = m, stable = false;
        }
    }
    if (!stable) {
        for (int k = 1; k < body->args.len; k++)
            if (slot(C->t, body->args.data[k])) set_default(slot(C->t, body->args.data[k]));
        visit_region(C, body);
    }
}

static void visit_inst(ax_ctx *C, ir_inst *in) {
    ir_value *r = in->num_results ? in->results[0] : NULL;
    ax_info *o = r ? slot(C->t, r) : NULL;
    for (int k = 0; k < in->num_results; k++)
        if (slot(C->t, in->results[k])) set_default(slot(C->t, in->results[k]));
    switch (in->op) {
    case IR_CONST:
        if (!o) break;
        if (dtype_is_int((blk_dtype)r->type.dtype) || r->type.dtype == DT_BOOL) {
            set_uniform(o, r, ax_pow2_div(in->ival));
            o->has_value = true;
            o->value = in->ival;
            o->nonneg = in->ival >= 0;
        } else {
            set_uniform(o, r, 1);
        }
        break;
    case IR_PROGRAM_ID:
    case IR_NUM_PROGRAMS:
        if (o) o->nonneg = true;
        break;
    case IR_ARANGE:
        if (!o) break;
        o->contig[0] = in->ival2 - in->ival;
        o->div[0] = ax_pow2_div(in->ival);
        o->nonneg = in->ival >= 0;
        break;
    case IR_SPLAT:
        if (!o) break;
        set_uniform(o, r, ax_elem_div(C->t, in->operands[0]));
        keep_value(o, ax_get(C->t, in->operands[0]));
        break;
    case IR_BROADCAST: {
        if (!o) break;
        const ax_info *x = ax_get(C->t, in->operands[0]);
        for (int d = 0; d < rank_of(r); d++) {
            bool grown = dim(in->operands[0], d) == 1 && dim(r, d) != 1;
            o->contig[d] = grown ? 1 : x->contig[d];
            o->div[d] = grown ? ax_elem_div(C->t, in->operands[0]) : x->div[d];
            o->constancy[d] = grown ? dim(r, d) : x->constancy[d];
        }
        keep_value(o, x);
        break;
    }
    case IR_EXPAND_DIMS: {
        if (!o) break;
        const ax_info *x = ax_get(C->t, in->operands[0]);
        int src = 0;
        for (int d = 0; d < rank_of(r); d++) {
            if (d == in->axis) {
                o->contig[d] = 1;
                o->div[d] = ax_elem_div(C->t, in->operands[0]);
                o->constancy[d] = 1;
            } else if (rank_of(in->operands[0])) {
                o->contig[d] = x->contig[src];
                o->div[d] = x->div[src];
                o->constancy[d] = x->constancy[src];
                src++;
            } else {
                o->div[d] = x->div[0];
                o->constancy[d] = dim(r, d);
            }
        }
        keep_value(o, x);
        break;
    }
    case IR_PERMUTE: {
        /* result dim d is operand dim perm[d]: its runs and facts move with it
         * (a transposed mask stays uniform along the dim it was uniform on) */
        if (!o) break;
        const ax_info *x = ax_get(C->t, in->operands[0]);
        for (int d = 0; d < rank_of(r); d++) {
            int s = in->perm[d];
            o->contig[d] = x->contig[s];
            o->div[d] = x->div[s];
            o->constancy[d] = x->constancy[s];
        }
        keep_value(o, x);
        break;
    }
    case IR_MULTIPLE_OF:
    case IR_MAX_CONTIGUOUS: {
        if (!o) break;
        *o = *ax_get(C->t, in->operands[0]);
        int rank = rank_of(r) ? rank_of(r) : 1;
        if (in->op == IR_MULTIPLE_OF) {
            for (int d = 0; d < rank; d++) o->div[d] = cap(max64(o->div[d], ax_pow2_div(in->ival)));
        } else if (rank_of(r)) {
            int d = rank_of(r) - 1;
            o->contig[d] = max64(o->contig[d], min64(in->ival, dim(r, d)));
        }
        break;
    }
    case IR_CAST: {
        if (!o) break;
        blk_dtype from = (blk_dtype)in->operands[0]->type.dtype, to = (blk_dtype)r->type.dtype;
        /* widening an integer keeps every fact; so does a same-width cast */
        if (dtype_is_int(from) && dtype_is_int(to) && dtype_bits(to) >= dtype_bits(from)) *o = *ax_get(C->t, in->operands[0]);
        break;
    }
    case IR_ADD: case IR_SUB: case IR_MUL: case IR_PTRADD: case IR_CMP: case IR_AND: case IR_OR:
    case IR_XOR: case IR_REM: case IR_DIV: case IR_MINIMUM: case IR_MAXIMUM: case IR_SHL:
        if (o) visit_binary(C, in, o);
        break;
    case IR_SELECT: {
        if (!o) break;
        const ax_info *c = ax_get(C->t, in->operands[0]), *x = ax_get(C->t, in->operands[1]),
                      *y = ax_get(C->t, in->operands[2]);
        for (int d = 0; d < (rank_of(r) ? rank_of(r) : 1); d++) {
            o->constancy[d] = gcd64(c->constancy[d], gcd64(x->constancy[d], y->constancy[d]));
            o->div[d] = gcd64(x->div[d], y->div[d]);
            if (x->contig[d] > 1 || y->contig[d] > 1) o->div[d] = 1;
        }
        o->nonneg = x->nonneg && y->nonneg; /* either branch's value: what both share */
        break;
    }
    case IR_FOR:
        visit_for(C, in);
        return;
    default:
        break;
    }
    for (int k = 0; k < in->num_regions; k++) {
        ir_region *reg = in->regions[k];
        for (int a = 0; a < reg->args.len; a++) {
            ax_info *s = slot(C->t, reg->args.data[a]);
            if (s && !(in->op == IR_FOR && k == 0 && a == 0)) set_default(s);
        }
        visit_region(C, reg);
    }
}

static void visit_region(ax_ctx *C, ir_region *r) {
    for (ir_inst *i = r->first; i; i = i->next) visit_inst(C, i);
}

ax_table *ax_analyze(blk_arena *a, ir_func *f, const ax_spec *spec) {
    ax_table *t = ARENA_NEW(a, ax_table);
    if (!t) return NULL;
    t->num_values = ir_number_values(f);
    t->info = ARENA_ARRAY(a, ax_info, t->num_values + 1);
    if (!t->info) { t->num_values = 0; return t; }
    ax_ctx C = {t, spec};
    for (int i = 0; i < t->num_values; i++) set_default(&t->info[i]);
    ir_region *body = f->body;
    for (int k = 0; k < body->args.len; k++) {
        ir_value *p = body->args.data[k];
        ax_info *s = slot(t, p);
        if (!s) continue;
        ax_spec sp = spec ? spec[k] : AX_SPEC_NONE;
        int64_t div = 1;
        if (p->type.dtype == DT_PTR) div = dtype_bytes((blk_dtype)p->type.pointee); /* natural alignment */
        if (sp == AX_SPEC_D16) div = 16;
        set_uniform(s, p, div);
        if (sp == AX_SPEC_EQ1 && dtype_is_int((blk_dtype)p->type.dtype)) {
            s->div[0] = 1;
            s->has_value = true;
            s->value = 1;
        }
    }
    visit_region(&C, body);
    return t;
}

ax_spec *ax_d16_spec(blk_arena *a, const ir_func *f) {
    int np = f->body->args.len;
    ax_spec *spec = ARENA_ARRAY(a, ax_spec, np + 1);
    if (!spec) return NULL;
    for (int k = 0; k < np; k++) {
        blk_dtype dt = (blk_dtype)f->body->args.data[k]->type.dtype;
        spec[k] = dt == DT_PTR || dtype_is_int(dt) ? AX_SPEC_D16 : AX_SPEC_NONE;
    }
    for (int j = 0; j < f->do_not_specialize.len; j++)
        if (f->do_not_specialize.data[j] >= 0 && f->do_not_specialize.data[j] < np)
            spec[f->do_not_specialize.data[j]] = AX_SPEC_NONE;
    return spec;
}

/* ---- dump ---- */

static void dump_vals(blk_strbuf *out, const ax_table *t, ir_region *r) {
    for (int a = 0; a < r->args.len; a++) {
        ir_value *v = r->args.data[a];
        if (!(dtype_is_int((blk_dtype)v->type.dtype) || v->type.dtype == DT_PTR)) continue;
        const ax_info *i = ax_get(t, v);
        sb_printf(out, "// %%%d: div=%lld\n", v->id, (long long)i->div[0]);
    }
    for (ir_inst *in = r->first; in; in = in->next) {
        for (int k = 0; k < in->num_results; k++) {
            ir_value *v = in->results[k];
            blk_dtype dt = (blk_dtype)v->type.dtype;
            if (!(dtype_is_int(dt) || dt == DT_PTR || dt == DT_BOOL)) continue;
            const ax_info *i = ax_get(t, v);
            int rank = v->type.rank ? v->type.rank : 1;
            sb_printf(out, "// %%%d: contig=[", v->id);
            for (int d = 0; d < rank; d++) sb_printf(out, "%s%lld", d ? ", " : "", (long long)i->contig[d]);
            sb_puts(out, "] div=[");
            for (int d = 0; d < rank; d++) sb_printf(out, "%s%lld", d ? ", " : "", (long long)i->div[d]);
            sb_puts(out, "] const=[");
            for (int d = 0; d < rank; d++) sb_printf(out, "%s%lld", d ? ", " : "", (long long)i->constancy[d]);
            sb_puts(out, "]\n");
        }
        for (int k = 0; k < in->num_regions; k++) dump_vals(out, t, in->regions[k]);
    }
}

/* The IR (as the printer writes it), then per kernel the facts of its
 * integer/pointer values under the d16 specialisation. */
void ax_dump_module(blk_strbuf *out, ir_module *m) {
    ir_print_module(out, m);
    blk_arena *a = m->arena;
    for (ir_func *f = m->first; f; f = f->next) {
        if (!f->is_kernel) continue;
        ax_spec *spec = ax_d16_spec(a, f);
        if (!spec) return;
        ax_table *t = ax_analyze(a, f, spec);
        sb_printf(out, "// axisinfo @%s (pointer and integer arguments divisible by 16)\n", f->name);
        if (t) dump_vals(out, t, f->body);
    }
}

void pass_axisinfo(ir_module *m) { (void)m; }

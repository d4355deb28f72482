/* cg_tma.c — Hopper's tensor memory accelerator for dot rings.
 *
 * A RING (pipeliner.h) is filled by TMA instead of cp.async when
 *   - the target has TMA (sm_90) and the dot reading the ring takes wgmma
 *     (the ring's tile is then in wgmma's swizzled panels of 128 bytes, or
 *     of a whole 64- or 32-byte row, which is exactly what a TMA box of
 *     panel-wide rows with SWIZZLE_128B / _64B / _32B writes to a
 *     1024-byte-aligned destination), and the ring is not the dot's a
 *     (whose rows the accumulator layout permutes in groups of 8: 1 KB
 *     boxes, slower than cp.async);
 *   - its load is a tensor_desc load, or a pointer load of descriptor form
 *     (load_as_desc below; a scalar offset on the pointer becomes a third,
 *     per-program map dim);
 *   - the base is a kernel argument, 16-byte aligned in this variant, dims
 *     and strides are sums of products of integer arguments and constants
 *     (the runtime evaluates them at launch), the stored dim has stride 1 and
 *     the other strides are multiples of 16 bytes.
 *
 * The runtime encodes one CUtensorMap per such load at launch from the
 * variant's blk-meta `tmaps=` field (docs/runtime.md) and passes it as a
 * 128-byte grid-constant parameter after the declared ones: the map is
 * built on the host once per (pointer, shape) and cached there, where a
 * map built on the device would cost every program a global-memory write
 * and a tensormap proxy fence. Out-of-bounds box elements read as zero,
 * as tensor_desc's loads do, so ragged edges need no masks.
 *
 * A loop with TMA rings keeps one mbarrier per slot (count 1): thread 0
 * arms slot s with arrive.expect_tx(bytes of every TMA ring's slot) and
 * issues the boxes; every thread waits on the slot's barrier with the
 * parity of its use (iteration i waits phase i / S). The per-iteration
 * bar.sync of the ring scheme (cg_pipe.c) still proves that the slot being
 * refilled has no readers left. docs/codegen.md, "TMA rings", has the
 * measurements behind these choices.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cg_dot.h"

/* An integer sum of products of kernel arguments and constants, as the
 * runtime's tmaps= grammar takes it (docs/runtime.md): flat, no
 * parentheses, so a product of sums is distributed into monomials. The
 * bounds are the runtime's (runtime/meta.h RT_TMAP_MAX_TERMS and
 * RT_TMAP_MAX_FACTORS): beyond them the load stays on cp.async. Each
 * monomial keeps its factors in the expression's order, so a plain
 * product prints as it always did ("64*B", not "B*64"). */
#define TM_TERMS 4
#define TM_FACTORS 8
typedef struct {
    int nterms, n[TM_TERMS];          /* monomials, and factors of each */
    const ir_value *f[TM_TERMS][TM_FACTORS]; /* an argument or an IR_CONST */
} tm_sum;

static int tm_factors(const tm_sum *s) {
    int n = 0;
    for (int t = 0; t < s->nterms; t++) n += s->n[t];
    return n;
}

/* *out = a * b distributed: every ai * bj, ai's factors then bj's; false
 * beyond the bounds */
static bool sum_mul(const tm_sum *a, const tm_sum *b, tm_sum *out) {
    tm_sum r = {0};
    if (a->nterms * b->nterms > TM_TERMS) return false;
    for (int i = 0; i < a->nterms; i++)
        for (int j = 0; j < b->nterms; j++, r.nterms++) {
            int t = r.nterms;
            if (a->n[i] + b->n[j] > TM_FACTORS) return false;
            r.n[t] = a->n[i] + b->n[j];
            memcpy(r.f[t], a->f[i], sizeof(a->f[i][0]) * (size_t)a->n[i]);
            memcpy(r.f[t] + a->n[i], b->f[j], sizeof(b->f[j][0]) * (size_t)b->n[j]);
        }
    if (tm_factors(&r) > TM_FACTORS) return false;
    *out = r;
    return true;
}

/* v as a sum of products of integer arguments and positive constants
 * (through widening casts, scalar adds and products), or false. */
static bool sum_of(cg_ctx *C, const ir_value *v, tm_sum *out) {
    memset(out, 0, sizeof *out);
    ir_region *body = C->f->body;
    for (int k = 0; k < body->args.len; k++)
        if (body->args.data[k] == v) {
            if (!dtype_is_int((blk_dtype)v->type.dtype) || k >= C->f->param_names.len || !C->f->param_names.data[k])
                return false;
            *out = (tm_sum){.nterms = 1, .n = {1}, .f = {{v}}};
            return true;
        }
    const ir_inst *d = v->def;
    if (d && d->op == IR_CONST && dtype_is_int((blk_dtype)v->type.dtype) && d->ival > 0) { /* also a constant block */
        *out = (tm_sum){.nterms = 1, .n = {1}, .f = {{v}}};
        return true;
    }
    if (!d || v->type.rank) return false;
    if (d->op == IR_CAST && dtype_is_int((blk_dtype)v->type.dtype) &&
        dtype_is_int((blk_dtype)d->operands[0]->type.dtype) &&
        dtype_bits((blk_dtype)v->type.dtype) >= dtype_bits((blk_dtype)d->operands[0]->type.dtype))
        return sum_of(C, d->operands[0], out);
    if (d->op != IR_MUL && d->op != IR_ADD) return false;
    tm_sum a, b;
    if (!sum_of(C, d->operands[0], &a) || !sum_of(C, d->operands[1], &b)) return false;
    if (d->op == IR_ADD) {
        if (a.nterms + b.nterms > TM_TERMS || tm_factors(&a) + tm_factors(&b) > TM_FACTORS) return false;
        *out = a;
        for (int t = 0; t < b.nterms; t++, out->nterms++) {
            out->n[out->nterms] = b.n[t];
            memcpy(out->f[out->nterms], b.f[t], sizeof b.f[t]);
        }
        return true;
    }
    return sum_mul(&a, &b, out);
}

/* "M", "16", "H*N", "H*128+2*G*128": the text of s (a monomial of no
 * factors is 1) */
static void sum_text(cg_ctx *C, const tm_sum *s, blk_strbuf *out) {
    for (int t = 0; t < s->nterms; t++) {
        if (t) sb_putc(out, '+');
        if (!s->n[t]) sb_putc(out, '1');
        for (int k = 0; k < s->n[t]; k++) {
            const ir_value *v = s->f[t][k];
            int arg = -1;
            for (int a = 0; a < C->f->body->args.len; a++)
                if (C->f->body->args.data[a] == v) arg = a;
            if (k) sb_putc(out, '*');
            if (arg >= 0) sb_puts(out, C->f->param_names.data[arg]);
            else sb_printf(out, "%lld", (long long)v->def->ival);
        }
    }
}

/* v's text as sum_of takes it, or false */
static bool factors(cg_ctx *C, const ir_value *v, blk_strbuf *out) {
    tm_sum s;
    if (!sum_of(C, v, &s)) return false;
    sum_text(C, &s, out);
    return true;
}

/* ---- a pointer load of descriptor form ----
 *
 * load(P + r[:, None] * S + c[None, :], (r[:, None] < R) & (c[None, :] < Q))
 * with r = o_r + arange(0, n) (or arange alone), likewise c, and r, c never
 * negative (axisinfo), reads what tensor_desc(P, shape = [R, Q], strides =
 * [S, 1]).load([o_r, o_c]) reads: TMA takes matmul's pointer loads as
 * they are written (the strides may sit on either dim, products of
 * arguments like a descriptor's). The offsets are computed in 64 bits
 * where the pointer form computes in its index type: they differ only
 * where that arithmetic wraps. */
typedef struct {
    ir_value *base, *plane;       /* P, or P + plane (a scalar offset: attention's head) */
    ir_value *vec[2], *stride[2]; /* per dim: the 1-d index, its stride (NULL: 1) */
    ir_value *mvec[2], *bound[2]; /* per dim: the mask's index and bound */
} ptr_form;

static ir_value *unbroadcast(ir_value *v) {
    while (v->def && v->def->op == IR_BROADCAST) v = v->def->operands[0];
    return v;
}

/* the scalar a block repeats: a splat's operand, or a constant block */
static ir_value *splat_of(ir_value *v) {
    v = unbroadcast(v);
    if (v->def && v->def->op == IR_CONST && !v->def->num_operands) return v;
    return v->def && v->def->op == IR_SPLAT && v->def->operands[0]->type.rank == 0 ? v->def->operands[0] : NULL;
}

/* expand_dims(x, axis) of a 1-d x: x runs along dim 1 - axis */
static ir_value *axis_vec(ir_value *v, int *dim) {
    v = unbroadcast(v);
    if (!v->def || v->def->op != IR_EXPAND_DIMS || v->def->operands[0]->type.rank != 1) return NULL;
    *dim = 1 - v->def->axis;
    return v->def->operands[0];
}

static bool index_terms(ir_value *v, ptr_form *pf) {
    v = unbroadcast(v);
    ir_inst *d = v->def;
    int dim;
    ir_value *x = axis_vec(v, &dim), *s = NULL;
    if (!x && d && d->op == IR_ADD) return index_terms(d->operands[0], pf) && index_terms(d->operands[1], pf);
    if (!x && d && d->op == IR_MUL) {
        for (int k = 0; k < 2 && !x; k++)
            if ((s = splat_of(d->operands[1 - k]))) x = axis_vec(d->operands[k], &dim);
    }
    if (!x || pf->vec[dim]) return false;
    pf->vec[dim] = x, pf->stride[dim] = s;
    return true;
}

static bool ptr_terms(ir_value *v, ptr_form *pf) {
    v = unbroadcast(v);
    ir_inst *d = v->def;
    if (d && d->op == IR_PTRADD) return ptr_terms(d->operands[0], pf) && index_terms(d->operands[1], pf);
    if (d && d->op == IR_SPLAT && !pf->base) {
        ir_value *x = d->operands[0];
        if (x->def && x->def->op == IR_PTRADD && x->type.rank == 0) pf->plane = x->def->operands[1], x = x->def->operands[0];
        return (pf->base = x) != NULL;
    }
    return false;
}

static bool mask_terms(ir_value *v, ptr_form *pf) {
    v = unbroadcast(v);
    ir_inst *d = v->def;
    if (d && d->op == IR_AND && v->type.dtype == DT_BOOL)
        return mask_terms(d->operands[0], pf) && mask_terms(d->operands[1], pf);
    int dim;
    ir_value *x = d && d->op == IR_CMP && d->kind == IR_CMP_LT ? axis_vec(d->operands[0], &dim) : NULL;
    ir_value *b = x ? splat_of(d->operands[1]) : NULL;
    /* m[:, None] of a 1-d m = x < b (a mask computed once for both
     * operands, as qkv_proj's km) is x[:, None] < b */
    ir_inst *e = d && d->op == IR_EXPAND_DIMS && d->operands[0]->type.rank == 1 ? d->operands[0]->def : NULL;
    if (!x && e && e->op == IR_CMP && e->kind == IR_CMP_LT && e->operands[0]->type.rank == 1) {
        x = e->operands[0], dim = 1 - d->axis;
        b = splat_of(e->operands[1]);
    }
    if (!b || pf->mvec[dim]) return false;
    pf->mvec[dim] = x, pf->bound[dim] = b;
    return true;
}

/* x = o + arange(0, n) (either order) or arange(0, n): *o = o or NULL */
static bool offset_of(ir_value *x, ir_value **o) {
    ir_inst *d = x->def;
    if (d && d->op == IR_ARANGE && d->ival == 0) { *o = NULL; return true; }
    if (!d || d->op != IR_ADD) return false;
    for (int k = 0; k < 2; k++) {
        ir_inst *a = d->operands[k]->def;
        if (a && a->op == IR_ARANGE && a->ival == 0 && (*o = splat_of(d->operands[1 - k]))) return true;
    }
    return false;
}

/* What a TMA ring reads: base, per value dim its bound (dim, or the
 * constant dimc where dim is NULL), stride (NULL: 1) and offset (NULL: 0),
 * and a plane: base + z * (zstride's factors), a third map dim of unbounded
 * extent whose coordinate z (never negative) is fixed per program. */
typedef struct {
    ir_value *base;
    ir_value *dim[2], *stride[2], *off[2];
    int64_t dimc[2];
    ir_value *plane, *z;
} tma_form;

/* The leaves of a product (through widening integer casts). */
static int product_leaves(ir_value *v, ir_value **out, int n, int max) {
    ir_inst *d = v->def;
    if (d && v->type.rank == 0 && d->op == IR_MUL && n >= 0) {
        n = product_leaves(d->operands[0], out, n, max);
        return n < 0 ? n : product_leaves(d->operands[1], out, n, max);
    }
    if (d && v->type.rank == 0 && d->op == IR_CAST && dtype_is_int((blk_dtype)v->type.dtype) &&
        dtype_is_int((blk_dtype)d->operands[0]->type.dtype) &&
        dtype_bits((blk_dtype)v->type.dtype) >= dtype_bits((blk_dtype)d->operands[0]->type.dtype))
        return product_leaves(d->operands[0], out, n, max);
    if (n < 0 || n == max) return -1;
    out[n] = v;
    return n + 1;
}

/* An access (a RING load, or a store) of descriptor form (above) through
 * pointer block ptr under mask, or false. A dim with no mask qualifies
 * when its index is arange(0, n): bound n. */
static bool access_as_desc(cg_ctx *C, ir_value *ptr, ir_value *mask, tma_form *tf) {
    ptr_form pf = {0};
    if (!mask || !ptr_terms(ptr, &pf) || !mask_terms(mask, &pf)) return false;
    for (int d = 0; d < 2; d++) {
        ir_value *x = pf.vec[d];
        if (!x || (pf.mvec[d] && x != pf.mvec[d]) || !dtype_is_signed((blk_dtype)x->type.dtype) ||
            !ax_get(C->ax, x)->nonneg || !offset_of(x, &tf->off[d]))
            return false;
        if (!pf.mvec[d] && tf->off[d]) return false;
        tf->dim[d] = pf.bound[d], tf->dimc[d] = pf.mvec[d] ? 0 : x->type.shape[0];
        tf->stride[d] = pf.stride[d];
    }
    tf->base = pf.base;
    tf->plane = pf.plane;
    return true;
}

static int arg_index(cg_ctx *C, const ir_value *v) {
    for (int k = 0; k < C->f->body->args.len; k++)
        if (C->f->body->args.data[k] == v) return k;
    return -1;
}

static bool stride_is_1(cg_ctx *C, ir_value *s) {
    const ax_info *a = s ? ax_get(C->ax, s) : NULL;
    return !s || (a->has_value && a->value == 1);
}

/* Plan TMA for RING load ld of loop: NULL when taken, else why not (for
 * -Rpass-missed); "" where TMA is not in question (no wgmma dot reads it:
 * the dot's own remark says why). */
static bool dim_text(cg_ctx *C, const tma_form *tf, int d, blk_strbuf *out) {
    if (!tf->dim[d]) {
        sb_printf(out, "%lld", (long long)tf->dimc[d]);
        return true;
    }
    return factors(C, tf->dim[d], out);
}

/* The plane's stride: the product of every leaf of its product but one,
 * which is z (never negative, at most 32 bits: a TMA coordinate); a leaf
 * may be a sum (distributed as sum_of does). */
static bool plane_text(cg_ctx *C, tma_form *tf, blk_strbuf *out) {
    ir_value *leaf[8];
    int n = product_leaves(tf->plane, leaf, 0, 8);
    tm_sum acc = {.nterms = 1}; /* 1 */
    for (int i = 0; i < n; i++) {
        tm_sum s;
        if (sum_of(C, leaf[i], &s)) {
            if (!sum_mul(&acc, &s, &acc)) return false;
            continue;
        }
        if (tf->z || !dtype_is_signed((blk_dtype)leaf[i]->type.dtype) || dtype_bits((blk_dtype)leaf[i]->type.dtype) > 32 ||
            !ax_get(C->ax, leaf[i])->nonneg)
            return false;
        tf->z = leaf[i];
    }
    sum_text(C, &acc, out);
    return n > 0 && tf->z;
}

/* What a tensor map of access tf through argument arg (-1: none) needs
 * of it, with dim `fast` stored contiguous and eb-byte elements: NULL, or
 * why not. */
static const char *map_form(cg_ctx *C, const tma_form *tf, int arg, int fast, int eb) {
    int slow = 1 - fast;
    if (arg < 0) return "the base is not a kernel argument";
    if (ax_elem_div(C->ax, tf->base) < 16) return "the base is not 16-byte aligned in this variant";
    if (!stride_is_1(C, tf->stride[fast]) || !tf->stride[slow]) return "the stored dim's stride is not 1";
    if (ax_elem_div(C->ax, tf->stride[slow]) * eb % 16) return "the row stride is not a multiple of 16 bytes in this variant";
    if (tf->plane && ax_elem_div(C->ax, tf->plane) * eb % 16)
        return "the scalar offset is not a multiple of 16 bytes in this variant";
    return NULL;
}

/* Map m (its access, fast dim, box and offsets set) of the access tf
 * through argument arg: its tmaps= text (dims fastest first, the slow
 * dim's stride, a plane's, the box, its swizzle span), appended to the
 * variant's maps (*m gets its meta and z). NULL when added, else why not. */
static const char *add_map(cg_ctx *C, tma_form *tf, int arg, cg_tma *m) {
    int fast = m->fast, slow = 1 - fast;
    blk_strbuf text;
    sb_init(&text);
    bool ok = true;
    sb_printf(&text, "%s:", C->f->param_names.data[arg]);
    ok = ok && dim_text(C, tf, fast, &text);
    sb_putc(&text, ',');
    ok = ok && dim_text(C, tf, slow, &text);
    if (tf->plane) sb_puts(&text, ",2147483647"); /* the pointer form bounds no plane */
    sb_putc(&text, ':');
    ok = ok && factors(C, tf->stride[slow], &text);
    bool plane_ok = true;
    if (tf->plane && ok) {
        sb_putc(&text, ',');
        ok = plane_ok = plane_text(C, tf, &text);
    }
    sb_printf(&text, ":%d,%d%s:%d", m->panel, m->box_rows, tf->plane ? ",1" : "", m->span);
    const char *why = NULL;
    if (ok) {
        m->z = tf->z;
        size_t n = strlen(text.data) + 1;
        char *s = arena_alloc(C->a, n);
        if (s) memcpy(s, text.data, n);
        m->meta = s;
        if (!s) C->failed = true;
        C->tma[C->num_tma++] = *m;
    } else if (!plane_ok)
        why = "the scalar offset is not z * (a sum of products of integer arguments and constants) with one z "
              "provably >= 0 of at most 32 bits";
    else
        why = "a dim or stride is not a sum of products of integer arguments and constants (at most 4 terms and 8 "
              "factors, the runtime's tmaps= bounds)";
    sb_free(&text);
    return why;
}

/* Plan TMA for RING load ld of loop: NULL when taken, else why not (for
 * -Rpass-missed); "" where TMA is not in question (no wgmma dot reads it:
 * the dot's own remark says why). */
static const char *consider(cg_ctx *C, ir_inst *loop, ir_inst *ld) {
    ir_value *v = ld->results[0];
    const pl_entry *e = pl_get(C->pl, v);
    /* a HOIST tile loaded just before the loop (attention's Q): its box is
     * issued once, by the loop's producer warpgroup if it gets one (cg_ws.c
     * keeps the map then, else the tile is stored from registers) */
    bool hoist = e && e->kind == PL_HOIST && ld->op == IR_LOAD && ld->parent == loop->parent;
    if (hoist && getenv("BLK_NO_HOIST_TMA")) return ""; /* A/B runs: every hoisted tile from registers */
    if (!e || (e->kind != PL_RING && !hoist) || e->loop != loop) return "";
    int role;
    ir_inst *dot = cg_dot_reading(loop, v, &role);
    if (!dot || !cg_dot_takes_wgmma(C, dot)) return "";
    int dots = 0; /* the tile replaces the registers: every reader is one of the loop's dots */
    for (ir_inst *i = loop->regions[0]->first; hoist && i; i = i->next)
        dots += i->op == IR_DOT && (i->operands[0] == v) + (i->operands[1] == v);
    if (hoist && cg_uses_in(C->f->body, v) != dots) return "it is read outside the loop's dots";
    if (C->num_tma == CG_MAX_TMA) return "more tensor maps than a kernel takes";
    tma_form tf = {0};
    if (ld->op == IR_DESC_LOAD) {
        tf.base = ld->operands[0];
        for (int d = 0; d < 2; d++)
            tf.dim[d] = ld->operands[1 + d], tf.stride[d] = ld->operands[3 + d], tf.off[d] = ld->operands[5 + d];
    } else if (!access_as_desc(C, ld->operands[0], ld->num_operands > 1 ? ld->operands[1] : NULL, &tf))
        return "not P + r * S + c under the mask r < R & c < Q with r, c provably >= 0 (write it as a tensor_desc load)";
    int arg = arg_index(C, tf.base), fast = e->colv, slow = 1 - fast;
    int eb = e->bytes / (v->type.shape[0] * v->type.shape[1]); /* as stored: f8 as bytes where wgmma reads them */
    const char *bad = map_form(C, &tf, arg, fast, eb);
    if (bad) return bad;
    /* one box per panel: the ring's tile is in wgmma's form (tile_init_wg) */
    int cols = v->type.shape[fast], rows = v->type.shape[slow], span = wg_span(cols * eb), panel = span / eb;
    /* An a tile's rows are permuted in 8-row groups (cg_dot.c's wg_row), so
     * each group would be its own 1 KB box: matmul 8192^3 ran at 448 TFLOP/s
     * with a's 16 boxes per slot against 577 with a on cp.async (H200,
     * docs/benchmarks.md). */
    if (role == 0 && cg_dot_a_perm(C, dot))
        return "a's rows are permuted in groups of 8 for the accumulator layout (1 KB boxes are slower than cp.async)";
    int R = rows < 256 ? rows : 256;
    if (!span || cols % panel || rows % R) return "the tile is not whole swizzle panels";
    cg_tma m = {.ld = ld, .fast = fast, .panel = panel, .box_rows = R, .span = span, .off = {tf.off[0], tf.off[1]},
                .hoist = hoist ? loop : NULL, .boxes = (cols / panel) * (rows / R)};
    const char *why = add_map(C, &tf, arg, &m);
    if (!why && (C->remarks & CG_REMARKS) && !hoist) /* a hoisted tile's remark: cg_ws.c */
        diag_remark(C->diag, ld->loc, "load in %s: ring filled by TMA, %d box%s of %dx%d per slot (tensor map %s)",
                    C->entry ? C->entry : C->f->name, m.boxes, m.boxes == 1 ? "" : "es", panel, R, m.meta);
    return why;
}

static void walk(cg_ctx *C, ir_region *r) {
    for (ir_inst *in = r->first; in; in = in->next) {
        for (int k = 0; k < in->num_regions; k++) walk(C, in->regions[k]);
        if (in->op != IR_FOR) continue;
        for (ir_inst *i = r->first; i != in; i = i->next) /* its hoisted tiles' loads */
            if (i->op == IR_LOAD && i->num_results) {
                const char *why = consider(C, in, i);
                if (why && *why && C->remarks)
                    diag_remark(C->diag, i->loc, "load in %s: tile stored from registers, not TMA: %s",
                                C->entry ? C->entry : C->f->name, why);
            }
        for (ir_inst *i = in->regions[0]->first; i; i = i->next)
            if ((i->op == IR_DESC_LOAD || i->op == IR_LOAD) && i->num_results) {
                const char *why = consider(C, in, i);
                if (why && *why && C->remarks)
                    diag_remark(C->diag, i->loc, "load in %s: ring filled by cp.async, not TMA: %s",
                                C->entry ? C->entry : C->f->name, why);
            }
    }
}

void cg_tma_plan(cg_ctx *C) {
    C->num_tma = 0;
    /* BLK_DISABLE_TMA=1: every ring on cp.async (A/B measurements; docs/codegen.md) */
    const char *off = getenv("BLK_DISABLE_TMA");
    if (tgt_has(C->tgt, TGT_CAP_TMA) && C->pl && !(off && *off && strcmp(off, "0"))) walk(C, C->f->body);
}

void cg_tma_bind(cg_ctx *C, LLVMValueRef fn, int first) {
    unsigned byval = LLVMGetEnumAttributeKindForName("byval", 5), align = LLVMGetEnumAttributeKindForName("align", 5);
    for (int j = 0; j < C->num_tma; j++) {
        unsigned at = (unsigned)(first + j + 1); /* attribute index: parameter + 1 */
        LLVMAddAttributeAtIndex(fn, at, LLVMCreateTypeAttribute(C->llc, byval, LLVMArrayType2(C->i8, 128)));
        LLVMAddAttributeAtIndex(fn, at, LLVMCreateEnumAttribute(C->llc, align, 64));
        LLVMAddAttributeAtIndex(fn, at, LLVMCreateStringAttribute(C->llc, "nvvm.grid_constant", 18, "", 0));
        C->tma[j].map = LLVMGetParam(fn, (unsigned)(first + j));
        char name[32];
        snprintf(name, sizeof name, "tmap%d", j);
        LLVMSetValueName2(C->tma[j].map, name, strlen(name));
    }
}

/* At entry, thread 0 asks for every tensor map the kernel will use
 * (CUTLASS and DeepGEMM do the same): the first box of each map then does
 * not wait for the TMA unit to fetch its 128-byte descriptor. A hint only. */
void cg_tma_prefetch(cg_ctx *C) {
    if (!C->num_tma) return;
    LLVMValueRef t0 = LLVMBuildZExt(C->b, LLVMBuildICmp(C->b, LLVMIntEQ, C->tid, cg_const_i32(C, 0), ""), C->i32, "");
    for (int j = 0; j < C->num_tma; j++)
        cg_inline_asm(C, C->vd, "{ .reg .pred p; setp.ne.b32 p, $1, 0; @p prefetch.tensormap [$0]; }", "l,r,~{memory}",
                      (LLVMValueRef[]){C->tma[j].map, t0}, 2, true);
}

void cg_tma_meta(cg_ctx *C, blk_strbuf *out) {
    for (int j = 0; j < C->num_tma; j++) sb_printf(out, "%s%s", j ? ";" : " tmaps=", C->tma[j].meta);
}

const cg_tma *cg_tma_of(cg_ctx *C, const ir_inst *ld) {
    for (int j = 0; j < C->num_tma; j++)
        if (C->tma[j].ld == ld) return &C->tma[j];
    return NULL;
}

/* ---- tile stores by TMA ----
 *
 * A persistent kernel's tile store (a STORE at the top level of the tile
 * loop around the warp-specialized loop: matmul_persistent's C tile) of
 * 2-byte elements, of descriptor form as a ring's load, goes out through a
 * staging tile in shared memory and TMA (cp.async.bulk.tensor, shared to
 * global): the consumers write their registers into the staging tile in
 * the layout a SWIZZLE_128B box reads (128-byte rows, the 16-byte chunk j
 * of row r at j ^ (r % 8): the accumulator's 8 rows of 4 lanes hit 32
 * different banks), fence the generic proxy's writes for the async proxy,
 * meet on the consumers' barrier, and thread 0 issues the boxes as one
 * bulk group. The copy engine then drains the tile to global memory while
 * the consumers go on to the next tile's wgmmas; before, their own stores
 * (a conversion through the scratch, 16-byte global stores) ran before
 * the next tile could start (matmul_persistent with its store removed ran
 * 4% faster: docs/benchmarks.md). The staging tile is reserved with the
 * rings, before the tile loop, and stays so through it; thread 0 waits for
 * the previous tile's boxes to have read it (cp.async.bulk.wait_group.read
 * 0) before the consumers' barrier that precedes the writes, and for every
 * box to complete when the tile loop ends (cg_pipe_end).
 *
 * A warp-specialized kernel without a tile loop stores its tile the same
 * way once, after the loop (`once`): the staging tile is scratch then, and
 * thread 0 waits until the boxes have read it, not for the writes (the
 * program may end with them in flight, as CUTLASS's sm90 epilogue does).
 * Out-of-bounds box elements are not written, as the mask said.
 *
 * Where the whole staging tile and the rings do not fit together (a tile
 * loop's 128x256 bf16 tile is 64 KB: beside four stages of 48 KB it is 32
 * KB too many), the tile goes out a 64-column panel at a time through
 * nbuf (2, else 1) buffers of one panel: before writing panel p into
 * buffer p % nbuf, thread 0 waits until no more than nbuf - 1 bulk groups
 * still read shared memory (the group of panel p - nbuf, of this tile or
 * the last, one group per panel), the consumers meet, write, fence and
 * meet again, and thread 0 issues the panel's boxes as a group. So a
 * fourth stage costs two barriers per panel, not the TMA store. Only for
 * layouts whose registers each fall in one panel known when compiling
 * (fixed_chunks: the accumulators).
 * BLK_NO_TMA_STORE=1 keeps the stores on registers (A/B runs). */

/* Bytes of the rings of loop (every slot). */
static int64_t ring_bytes(cg_ctx *C, ir_inst *loop) {
    int64_t ring = 0;
    for (int i = 0; i < C->pl->num_values && i < C->num_values; i++)
        if (C->pl->e[i].kind == PL_RING && C->pl->e[i].loop == loop) ring += (int64_t)C->pl->e[i].stages * C->pl->e[i].bytes;
    return ring;
}

static bool fixed_chunks(const cg_lay_info *li, int n);

/* Whether store st could go out by TMA through a staging tile (the form
 * consider_store takes, before its room and map checks): cg_ws.c counts
 * the staging tile against a tile loop's shared memory. */
bool cg_tma_store_may_stage(cg_ctx *C, ir_inst *st) {
    ir_value *val = st->operands[1];
    tma_form tf = {0};
    return !(st->flags & IRF_NO_TMA) && val->type.rank == 2 && val->type.dtype != DT_BOOL &&
           dtype_bytes((blk_dtype)val->type.dtype) == 2 &&
           access_as_desc(C, st->operands[0], st->num_operands > 2 ? st->operands[2] : NULL, &tf) && !tf.plane;
}

/* How many one-panel buffers store st (2-byte elements, whole panels)
 * takes beside `ring` bytes of rings: 0 when its whole staging tile fits,
 * else 2 or 1 where those fit and the value's registers each fall in one
 * panel, else -1. */
static int stage_buffers(cg_ctx *C, ir_inst *st, int64_t ring) {
    ir_value *val = st->operands[1];
    int rows = val->type.shape[0], cols = val->type.shape[1], panels = cols / 64;
    int64_t room = C->tgt->smem_optin_max - 1024 - 256; /* 1 KB alignment, the static mbarriers (cg_ws.c) */
    if (ring + (int64_t)rows * cols * 2 <= room) return 0;
    if (cols % 64) return -1;
    cg_lay_info li;
    cg_lay_shape(cg_lay(C, val), 2, val->type.shape, &li);
    if (!fixed_chunks(&li, li.nregs)) return -1;
    for (int nb = 2; nb >= 1; nb--)
        if (nb < panels && panels % nb == 0 && ring + (int64_t)nb * rows * 128 <= room) return nb;
    return -1;
}

/* The staging memory of a 2-byte tile val: the whole tile, or nbuf
 * buffers of one 64-column panel (128-byte rows). */
static int64_t stage_size(const ir_value *val, int nbuf) {
    return nbuf > 0 ? (int64_t)nbuf * val->type.shape[0] * 128 : 2 * ir_numel(val->type);
}

int64_t cg_tma_store_stage_bytes(cg_ctx *C, ir_inst *st, int64_t ring) {
    return stage_size(st->operands[1], stage_buffers(C, st, ring));
}

/* NULL when store st is planned for TMA, else why not. */
static const char *consider_store(cg_ctx *C, ir_inst *st, bool *staged, bool once) {
    ir_value *val = st->operands[1];
    blk_dtype t = (blk_dtype)val->type.dtype;
    if (st->flags & IRF_NO_TMA) return "tma = false";
    if (val->type.rank != 2) return "the value is not a 2-d block";
    if (t == DT_BOOL || dtype_bytes(t) != 2) return "its elements are not 2 bytes (bf16, f16)";
    if (*staged) return "another store of the tile loop takes the staging memory";
    if (C->num_tma == CG_MAX_TMA) return "more tensor maps than a kernel takes";
    tma_form tf = {0};
    if (!access_as_desc(C, st->operands[0], st->num_operands > 2 ? st->operands[2] : NULL, &tf))
        return "not P + r * S + c under the mask r < R & c < Q with r, c provably >= 0";
    if (tf.plane) return "the pointer has a scalar offset";
    int arg = arg_index(C, tf.base), eb = 2;
    const char *bad = map_form(C, &tf, arg, 1, eb);
    if (bad) return bad;
    int rows = val->type.shape[0], cols = val->type.shape[1], panel = 128 / eb, R = rows < 256 ? rows : 256;
    if (cols % panel || rows % R || R % 8) return "the tile is not whole 128-byte panels";
    /* the staging tile beside the rings (1 KB alignment, and the static
     * mbarriers: cg_ws.c) */
    int nbuf = stage_buffers(C, st, once ? 0 : ring_bytes(C, C->ws_loop));
    if (nbuf < 0 || (once && nbuf))
        return "its staging tile and the rings would not fit in shared memory together";
    cg_tma m = {.ld = st, .store = true, .once = once, .nbuf = nbuf, .fast = 1, .panel = panel, .box_rows = R, .span = 128,
                .off = {tf.off[0], tf.off[1]},
                .boxes = (cols / panel) * (rows / R)};
    const char *why = add_map(C, &tf, arg, &m);
    if (why) return why;
    *staged = true;
    if (C->remarks & CG_REMARKS)
        diag_remark(C->diag, st->loc, "store in %s: by TMA from a staging tile%s, %d box%s of %dx%d (tensor map %s)",
                    C->entry ? C->entry : C->f->name, nbuf ? " a panel at a time" : "", m.boxes,
                    m.boxes == 1 ? "" : "es", panel, R, m.meta);
    return NULL;
}

void cg_tma_plan_stores(cg_ctx *C) {
    const char *off = getenv("BLK_NO_TMA_STORE");
    if (!C->ws_loop || C->failed || (off && *off && strcmp(off, "0"))) return;
    bool staged = false, once = !C->ws_outer;
    if (once && C->ws_loop->parent != C->f->body) return;
    ir_inst *first = once ? C->ws_loop->next : C->ws_outer->regions[0]->first;
    for (ir_inst *i = first; i; i = i->next) {
        if (i->op != IR_STORE) continue;
        const char *why = consider_store(C, i, &staged, once);
        /* a store written `tma = false` got what it asked for: -R says so,
         * -Rpass-missed (what missed a faster path) does not */
        bool asked = why && (i->flags & IRF_NO_TMA);
        if (why && (asked ? C->remarks & CG_REMARKS : C->remarks))
            diag_remark(C->diag, i->loc, "store in %s: from registers, not TMA: %s", C->entry ? C->entry : C->f->name,
                        why);
    }
}

static bool has_tma_store(cg_ctx *C) {
    for (int j = 0; j < C->num_tma; j++)
        if (C->tma[j].store) return true;
    return false;
}

/* thread 0 (a consumer): "cp.async.bulk.wait_group[.read] n" */
static void bulk_wait(cg_ctx *C, bool read, int n) {
    LLVMValueRef t0 = LLVMBuildZExt(C->b, LLVMBuildICmp(C->b, LLVMIntEQ, C->tid, cg_const_i32(C, 0), ""), C->i32, "");
    char text[100];
    snprintf(text, sizeof text, "{ .reg .pred p; setp.ne.b32 p, $0, 0; @p cp.async.bulk.wait_group%s %d; }",
             read ? ".read" : "", n);
    cg_inline_asm(C, C->vd, text, "r,~{memory}", &t0, 1, true);
}

/* The staging tiles, reserved with the rings before the tile loop's body
 * is lowered: a conversion earlier in the body (a later tile's, at run
 * time) then takes scratch past them, never memory a box may still read. */
void cg_tma_store_reserve(cg_ctx *C, blk_loc loc) {
    for (int j = 0; j < C->num_tma; j++) {
        cg_tma *m = &C->tma[j];
        if (m->store && !m->once && !m->stage)
            m->stage = cg_smem_reserve(C, loc, stage_size(m->ld->operands[1], m->nbuf), 1024);
    }
}

void cg_tma_store_drain(cg_ctx *C) {
    if (has_tma_store(C)) bulk_wait(C, false, 0);
}

/* The staging address of element (row, col) of a rows-row tile of 2-byte
 * elements: 64-column panels of rows * 128 bytes, each a SWIZZLE_128B box
 * (above). */
static LLVMValueRef stage_addr(cg_ctx *C, LLVMValueRef stage, int rows, LLVMValueRef row, LLVMValueRef col) {
    LLVMBuilderRef b = C->b;
    LLVMValueRef panel = LLVMBuildLShr(b, col, cg_const_i32(C, 6), "");
    LLVMValueRef bytes = LLVMBuildShl(b, LLVMBuildAnd(b, col, cg_const_i32(C, 63), ""), cg_const_i32(C, 1), "");
    LLVMValueRef chunk = LLVMBuildLShr(b, bytes, cg_const_i32(C, 4), "");
    chunk = LLVMBuildXor(b, chunk, LLVMBuildAnd(b, row, cg_const_i32(C, 7), ""), "");
    LLVMValueRef off = LLVMBuildMul(b, panel, cg_const_i32(C, rows * 128), "");
    off = LLVMBuildAdd(b, off, LLVMBuildMul(b, row, cg_const_i32(C, 128), ""), "");
    off = LLVMBuildAdd(b, off, LLVMBuildShl(b, chunk, cg_const_i32(C, 4), ""), "");
    off = LLVMBuildAdd(b, off, LLVMBuildAnd(b, bytes, cg_const_i32(C, 15), ""), "");
    return LLVMBuildGEP2(b, C->i8, stage, &off, 1, "");
}

/* Whether every register of li (n of them) has its chunk and row phase
 * fixed: its column is base1 + c with base1 + c % 8 < 8 (the lanes along
 * the columns cover one 16-byte chunk, no warp does: base1 < 8) and its
 * row base0 + r with r % 8 == 0, so that its staging address is the
 * thread's address for chunk (c % 64) / 8 (one of 8, the swizzle XOR taken
 * once each) plus a constant. The accumulator layouts qualify (lanes 2 x
 * 4 columns, rows 8 apart). */
static bool fixed_chunks(const cg_lay_info *li, int n) {
    int p = li->f.dims[1];
    if (li->f.spt[p] * li->f.tpw[p] != 8 || li->f.wpc[p] != 1 || li->shape[1] % 8) return false;
    int64_t off[IR_MAX_RANK];
    for (int r = 0; r < li->nregs && r < n; r++) {
        cg_reg_offsets(li, r, off);
        if (off[0] % 8 || off[1] % 8 >= li->f.spt[p]) return false;
    }
    return true;
}

bool cg_tma_store(cg_ctx *C, ir_inst *st) {
    cg_tma *m = NULL;
    for (int j = 0; j < C->num_tma; j++)
        if (C->tma[j].ld == st && C->tma[j].store) m = &C->tma[j];
    if (!m || C->failed) return false;
    LLVMBuilderRef b = C->b;
    ir_value *val = st->operands[1];
    int rows = val->type.shape[0], cols = val->type.shape[1];
    if (m->once) { /* after the loop: scratch, read by the boxes before any later use (below) */
        cg_barrier(C); /* its last readers are done */
        m->stage = cg_smem_aligned(C, st->loc, (int64_t)rows * cols * 2, 1024);
    } else if (!m->stage) { /* reserved with the rings (cg_tma_store_reserve) */
        cg_error(C, st->loc, "internal error: the tile store's staging memory was not reserved");
        return true;
    }
    if (!m->once && !m->nbuf) { /* the previous tile's boxes have read the staging tile */
        bulk_wait(C, true, 0);
        cg_barrier(C);
    }
    const lay_layout *l = cg_lay(C, val);
    cg_val v = cg_get(C, val, l);
    cg_lay_info li;
    cg_lay_info_get(C, l, 2, val->type.shape, &li);
    LLVMTypeRef et = cg_mem_type(C, (blk_dtype)val->type.dtype), pair = LLVMVectorType(et, 2);
    int64_t o0[IR_MAX_RANK], o1[IR_MAX_RANK];
    LLVMValueRef chunk_base[8] = {0}, tb = NULL, phase = NULL;
    bool fixed = fixed_chunks(&li, v.n);
    if (m->nbuf && !fixed) { /* stage_buffers saw the same layout */
        cg_error(C, st->loc, "internal error: a tile stored a panel at a time has registers across panels");
        return true;
    }
    if (fixed) {
        tb = LLVMBuildMul(b, li.base[0], cg_const_i32(C, 128), "");
        tb = LLVMBuildAdd(b, tb, LLVMBuildShl(b, li.base[1], cg_const_i32(C, 1), ""), "");
        phase = LLVMBuildAnd(b, li.base[0], cg_const_i32(C, 7), "");
    }
    LLVMValueRef t0 = LLVMBuildZExt(b, LLVMBuildICmp(b, LLVMIntEQ, C->tid, cg_const_i32(C, 0), ""), C->i32, "");
    LLVMValueRef off[2];
    for (int d = 0; d < 2; d++) {
        off[d] = cg_const_i32(C, 0);
        if (m->off[d]) {
            LLVMValueRef o = cg_get(C, m->off[d], NULL).v[0];
            off[d] = LLVMTypeOf(o) == C->i32 ? o : LLVMBuildTrunc(b, o, C->i32, "");
        }
    }
    LLVMValueRef base32 = LLVMBuildPtrToInt(b, m->stage, C->i32, "");
    /* one round: the whole tile; or one per panel, panel p through buffer p % nbuf */
    int panels = cols / m->panel, rounds = m->nbuf ? panels : 1;
    for (int round = 0; round < rounds; round++) {
        if (m->nbuf) { /* the group of panel round - nbuf has read the buffer */
            bulk_wait(C, true, m->nbuf - 1);
            cg_barrier(C);
        }
        for (int r = 0; r < li.nregs && r < v.n; r++) {
            cg_reg_offsets(&li, r, o0);
            /* a register and the next holding (row, col), (row, col + 1) with
             * col even (a thread's base is a multiple of its spt): one 4-byte
             * store, inside one 16-byte chunk */
            bool two = false;
            if (r + 1 < li.nregs && r + 1 < v.n && li.f.spt[li.f.dims[1]] % 2 == 0) {
                cg_reg_offsets(&li, r + 1, o1);
                two = o0[0] == o1[0] && o1[1] == o0[1] + 1 && o0[1] % 2 == 0;
            }
            if (m->nbuf && o0[1] / 64 != round) { /* another round's panel */
                r += two;
                continue;
            }
            LLVMValueRef at;
            if (fixed) { /* the thread's address for chunk k, plus a constant */
                int k = (int)(o0[1] % 64 / 8);
                if (!chunk_base[k]) {
                    LLVMValueRef sw = LLVMBuildShl(b, LLVMBuildXor(b, phase, cg_const_i32(C, k), ""), cg_const_i32(C, 4), "");
                    LLVMValueRef t = LLVMBuildAdd(b, tb, sw, "");
                    chunk_base[k] = LLVMBuildGEP2(b, C->i8, m->stage, &t, 1, "");
                }
                int64_t slot = m->nbuf ? round % m->nbuf : o0[1] / 64;
                LLVMValueRef c = cg_const_i32(C, slot * rows * 128 + o0[0] * 128 + o0[1] % 8 * 2);
                at = LLVMBuildGEP2(b, C->i8, chunk_base[k], &c, 1, "");
            } else {
                LLVMValueRef row = cg_reg_coord(C, &li, r, 0);
                at = stage_addr(C, m->stage, rows, row, cg_reg_coord(C, &li, r, 1));
            }
            LLVMValueRef x = v.v[r], s;
            if (two) {
                x = LLVMBuildInsertElement(b, LLVMGetUndef(pair), x, cg_const_i32(C, 0), "");
                x = LLVMBuildInsertElement(b, x, v.v[r + 1], cg_const_i32(C, 1), "");
                r++;
            }
            s = LLVMBuildStore(b, x, at);
            LLVMSetAlignment(s, two ? 4 : 2);
        }
        fence_async_smem(C); /* each writer's generic stores, before the async proxy reads them */
        cg_barrier(C);
        /* thread 0: this round's boxes, one bulk group */
        int p0 = m->nbuf ? round : 0, p1 = m->nbuf ? round + 1 : panels;
        for (int p = p0; p < p1; p++)
            for (int q = 0; q < rows / m->box_rows; q++) {
                char text[320];
                int slot = m->nbuf ? p % m->nbuf : p;
                snprintf(text, sizeof text,
                         "{ .reg .pred p; .reg .b32 s, x, y; setp.ne.b32 p, $4, 0; add.s32 s, $0, %d; add.s32 x, $2, %d; "
                         "add.s32 y, $3, %d; @p cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [$1, {x, y}], [s]; }",
                         slot * rows * 128 + q * m->box_rows * 128, p * m->panel, q * m->box_rows);
                LLVMValueRef args[5] = {base32, m->map, off[1], off[0], t0};
                cg_inline_asm(C, C->vd, text, "r,l,r,r,r,~{memory}", args, 5, true);
            }
        cg_inline_asm(C, C->vd, "{ .reg .pred p; setp.ne.b32 p, $0, 0; @p cp.async.bulk.commit_group; }", "r,~{memory}",
                      &t0, 1, true);
    }
    if (m->once) bulk_wait(C, true, 0); /* the scratch is free again once read (the writes land after the program) */
    return true;
}

/* ---- the instructions (inline PTX; the mbarrier is a .b64 in shared
 * memory, addressed by its 32-bit shared-window address) ---- */

/* a barrier whose phase completes after `count` arrivals (and the
 * transaction bytes armed in it) */
void cg_mbar_init(cg_ctx *C, LLVMValueRef bar32, int count, LLVMValueRef pred) {
    char text[120];
    snprintf(text, sizeof text, "{ .reg .pred p; setp.ne.b32 p, $1, 0; @p mbarrier.init.shared::cta.b64 [$0], %d; }", count);
    cg_inline_asm(C, C->vd, text, "r,r,~{memory}", (LLVMValueRef[]){bar32, pred}, 2, true);
}

/* one arrival (a consumer warp's lane 0 releasing a slot: the wgmma
 * groups that read it are complete) */
void cg_mbar_arrive(cg_ctx *C, LLVMValueRef bar32, LLVMValueRef pred) {
    cg_inline_asm(C, C->vd, "{ .reg .pred p; setp.ne.b32 p, $1, 0; @p mbarrier.arrive.shared::cta.b64 _, [$0]; }",
                  "r,r,~{memory}", (LLVMValueRef[]){bar32, pred}, 2, true);
}

/* the inits visible to the other threads' waits and to the async proxy
 * (TMA's complete_tx), before the barrier that follows */
void cg_mbar_init_fence(cg_ctx *C) {
    cg_inline_asm(C, C->vd, "fence.mbarrier_init.release.cluster;", "~{memory}", NULL, 0, true);
}

void cg_mbar_expect(cg_ctx *C, LLVMValueRef bar32, int bytes, LLVMValueRef pred) {
    char text[160];
    snprintf(text, sizeof text,
             "{ .reg .pred p; setp.ne.b32 p, $1, 0; @p mbarrier.arrive.expect_tx.shared::cta.b64 _, [$0], %d; }", bytes);
    cg_inline_asm(C, C->vd, text, "r,r,~{memory}", (LLVMValueRef[]){bar32, pred}, 2, true);
}

/* Spin until the phase of parity `parity` (i32 0/1) completed. The labels
 * are local to the braces, so the statement may appear many times. */
void cg_mbar_wait(cg_ctx *C, LLVMValueRef bar32, LLVMValueRef parity) {
    cg_inline_asm(C, C->vd,
                  "{ .reg .pred done; waitloop: mbarrier.try_wait.parity.shared::cta.b64 done, [$0], $1; "
                  "@!done bra waitloop; }",
                  "r,r,~{memory}", (LLVMValueRef[]){bar32, parity}, 2, true);
}

void cg_mbar_inval(cg_ctx *C, LLVMValueRef bar32, LLVMValueRef pred) {
    cg_inline_asm(C, C->vd, "{ .reg .pred p; setp.ne.b32 p, $1, 0; @p mbarrier.inval.shared::cta.b64 [$0]; }",
                  "r,r,~{memory}", (LLVMValueRef[]){bar32, pred}, 2, true);
}

/* One box of map m at element coordinates (x + dx along the stored dim,
 * y + dy along the other) into dst32 + ddst, completing on bar32. The
 * constant parts are immediates inside the statement: a ring's dozens of
 * boxes then keep three base registers live across the loop, not one
 * hoisted register per box. */
void cg_tma_load(cg_ctx *C, const cg_tma *m, LLVMValueRef dst32, int ddst, LLVMValueRef x, int dx, LLVMValueRef y, int dy,
                 LLVMValueRef z, LLVMValueRef bar32, LLVMValueRef pred, bool multicast) {
    char text[420];
    /* multicast: to the same offsets in both programs of the cluster,
     * completing on the barrier at the same offset in each */
    snprintf(text, sizeof text,
             "{ .reg .pred p; .reg .b32 d, x, y;%s setp.ne.b32 p, $5, 0; add.s32 d, $0, %d; add.s32 x, $2, %d; "
             "add.s32 y, $3, %d; @p cp.async.bulk.tensor.%s.shared::cluster.global.tile.mbarrier::complete_tx::bytes%s "
             "[d], [$1, {x, y%s}], [$4]%s; }",
             multicast ? " .reg .b16 mk; mov.b16 mk, 3;" : "", ddst, dx, dy, z ? "3d" : "2d",
             multicast ? ".multicast::cluster" : "", z ? ", $6" : "", multicast ? ", mk" : "");
    LLVMValueRef args[7] = {dst32, m->map, x, y, bar32, pred, z};
    cg_inline_asm(C, C->vd, text, z ? "r,l,r,r,r,r,r,~{memory}" : "r,l,r,r,r,r,~{memory}", args, z ? 7 : 6, true);
}

/* ---- clusters (cg_ws.c): the pair's producers take turns with shared boxes ---- */

/* One arrival on the barrier at the same offset in cluster CTA `rank`.
 * The default semantics (release at CTA scope), as CUTLASS's
 * ClusterBarrier: what it orders is this warp's completed wgmma reads of
 * the slot before the peer's TMA overwrites it. .release.cluster made
 * every release a cluster-wide fence: matmul 8192^3 ran 1574 -> 2134 us,
 * fp8 512 -> 1052 (H200). */
void cg_mbar_arrive_remote(cg_ctx *C, LLVMValueRef bar32, LLVMValueRef rank, LLVMValueRef pred) {
    cg_inline_asm(C, C->vd,
                  "{ .reg .pred p; .reg .b32 ra; setp.ne.b32 p, $1, 0; mapa.shared::cluster.u32 ra, $0, $2; "
                  "@p mbarrier.arrive.shared::cluster.b64 _, [ra]; }",
                  "r,r,r,~{memory}", (LLVMValueRef[]){bar32, pred, rank}, 3, true);
}

/* a barrier whose phase completes after `count` (an i32 register) arrivals */
void cg_mbar_init_n(cg_ctx *C, LLVMValueRef bar32, LLVMValueRef count, LLVMValueRef pred) {
    cg_inline_asm(C, C->vd, "{ .reg .pred p; setp.ne.b32 p, $1, 0; @p mbarrier.init.shared::cta.b64 [$0], $2; }",
                  "r,r,r,~{memory}", (LLVMValueRef[]){bar32, pred, count}, 3, true);
}

/* every thread of the cluster (of the program, without one) meets here;
 * what each wrote before (barrier inits) is visible to all after */
void cg_cluster_sync(cg_ctx *C) {
    cg_inline_asm(C, C->vd, "barrier.cluster.arrive.release.aligned; barrier.cluster.wait.acquire.aligned;", "~{memory}",
                  NULL, 0, true);
}

LLVMValueRef cg_cluster_sreg(cg_ctx *C, const char *name) {
    char text[48];
    snprintf(text, sizeof text, "mov.u32 $0, %%%s;", name);
    return cg_inline_asm(C, C->i32, text, "=r", NULL, 0, false);
}

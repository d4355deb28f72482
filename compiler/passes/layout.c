/* layout.c — layout algebra and the layout assignment (layout.h).
 *
 * Needs: verified Block IR after canonicalize, the axisinfo of the same
 * function (same value numbering). Guarantees: lay_get gives every block
 * value a layout that fits its shape; the IR itself is not changed —
 * conversions happen in codegen, at the uses whose layout differs.
 *
 * Assignment (Triton's coalesce + remove-layout-conversions, simplified):
 *  1. anchors: each LOAD/STORE/ATOMIC on a pointer block gets the layout of
 *     lay_for_access (the widest vector along the most contiguous dim);
 *  2. backward: walking from the end, a value "wants" the layout its
 *     consumer will read it in — memory ops want their anchor for all
 *     operands, elementwise ops pass the result's want to their operands,
 *     broadcast passes it unchanged, expand_dims passes slice(want), a
 *     reduction whose result wants slice(P, axis) passes P, permute passes
 *     the inverse permutation. The last consumer in program order wins.
 *  3. forward: a value takes its want (if it fits), else the layout its
 *     operands imply (elementwise: the first block operand's; reduce: the
 *     slice of the operand's; expand_dims: lay_expand; ...), else the
 *     default blocked layout for its shape. Loads and atomics always produce
 *     their anchor. Loop-carried values take their init's layout.
 * Cheap producers (arange, splat, constants, index arithmetic) thus compute
 * directly in the layout of the memory access that consumes them.
 */
#include "layout.h"

#include <string.h>

static int ilog2_floor_pow2(int x) {
    int p = 1;
    while (p * 2 <= x) p *= 2;
    return p;
}
static bool is_pow2(int x) { return x > 0 && (x & (x - 1)) == 0; }

const lay_layout *lay_blocked_rin(blk_arena *a, int rank, const int *spt, const int *tpw, const int *rin,
                                  const int *wpc, const int *order) {
    lay_layout *l = ARENA_NEW(a, lay_layout);
    if (!l) return NULL;
    l->kind = LAY_BLOCKED;
    l->rank = rank;
    for (int d = 0; d < rank; d++) {
        l->spt[d] = spt[d];
        l->tpw[d] = tpw[d];
        l->rin[d] = rin ? rin[d] : 1;
        l->wpc[d] = wpc[d];
        l->order[d] = order[d];
    }
    return l;
}

const lay_layout *lay_blocked(blk_arena *a, int rank, const int *spt, const int *tpw, const int *wpc,
                              const int *order) {
    return lay_blocked_rin(a, rank, spt, tpw, NULL, wpc, order);
}

int lay_warp_span(const lay_flat *f, int p) { return f->spt[p] * f->tpw[p] * f->rin[p]; }
int lay_tile(const lay_flat *f, int p) { return lay_warp_span(f, p) * f->wpc[p]; }

const lay_layout *lay_slice(blk_arena *a, const lay_layout *parent, int dim) {
    if (!parent || dim < 0 || dim >= parent->rank) return NULL;
    lay_layout *l = ARENA_NEW(a, lay_layout);
    if (!l) return NULL;
    l->kind = LAY_SLICE;
    l->rank = parent->rank - 1;
    l->slice_dim = dim;
    l->parent = parent;
    return l;
}

const lay_layout *lay_expand(blk_arena *a, const lay_layout *l, int dim) {
    if (!l) return NULL;
    if (l->kind == LAY_SLICE) return l->slice_dim == dim ? l->parent : NULL;
    if (l->rank + 1 > IR_MAX_RANK || dim < 0 || dim > l->rank) return NULL;
    int spt[IR_MAX_RANK], tpw[IR_MAX_RANK], rin[IR_MAX_RANK], wpc[IR_MAX_RANK], order[IR_MAX_RANK];
    for (int d = 0, s = 0; d <= l->rank; d++) {
        if (d == dim) { spt[d] = tpw[d] = rin[d] = wpc[d] = 1; continue; }
        spt[d] = l->spt[s];
        tpw[d] = l->tpw[s];
        rin[d] = l->rin[s];
        wpc[d] = l->wpc[s];
        s++;
    }
    for (int i = 0; i < l->rank; i++) order[i] = l->order[i] >= dim ? l->order[i] + 1 : l->order[i];
    order[l->rank] = dim; /* the new dim is the slowest: it holds one element */
    return lay_blocked_rin(a, l->rank + 1, spt, tpw, rin, wpc, order);
}

const lay_layout *lay_permute(blk_arena *a, const lay_layout *l, const int *perm) {
    if (!l || l->kind != LAY_BLOCKED) return NULL;
    int spt[IR_MAX_RANK], tpw[IR_MAX_RANK], rin[IR_MAX_RANK], wpc[IR_MAX_RANK], order[IR_MAX_RANK], inv[IR_MAX_RANK];
    for (int i = 0; i < l->rank; i++) {
        spt[i] = l->spt[perm[i]];
        tpw[i] = l->tpw[perm[i]];
        rin[i] = l->rin[perm[i]];
        wpc[i] = l->wpc[perm[i]];
        inv[perm[i]] = i;
    }
    for (int j = 0; j < l->rank; j++) order[j] = inv[l->order[j]];
    return lay_blocked_rin(a, l->rank, spt, tpw, rin, wpc, order);
}

void lay_flatten(const lay_layout *l, lay_flat *f) {
    memset(f, 0, sizeof *f);
    if (l->kind == LAY_BLOCKED) {
        f->root_rank = f->rank = l->rank;
        for (int d = 0; d < l->rank; d++) {
            f->spt[d] = l->spt[d];
            f->tpw[d] = l->tpw[d];
            f->wpc[d] = l->wpc[d];
            f->rin[d] = l->rin[d];
            f->order[d] = l->order[d];
            f->dims[d] = d;
        }
    } else {
        lay_flatten(l->parent, f);
        for (int d = l->slice_dim; d + 1 < f->rank; d++) f->dims[d] = f->dims[d + 1];
        f->rank--;
    }
    /* value dims in the root's order, fastest first */
    int k = 0;
    for (int i = 0; i < f->root_rank; i++)
        for (int d = 0; d < f->rank; d++)
            if (f->dims[d] == f->order[i]) f->reg_order[k++] = d;
}

bool lay_eq(const lay_layout *a, const lay_layout *b) {
    if (a == b) return true;
    if (!a || !b || a->rank != b->rank) return false;
    lay_flat x, y;
    lay_flatten(a, &x);
    lay_flatten(b, &y);
    if (x.root_rank != y.root_rank) return false;
    for (int d = 0; d < x.root_rank; d++)
        if (x.spt[d] != y.spt[d] || x.tpw[d] != y.tpw[d] || x.wpc[d] != y.wpc[d] || x.order[d] != y.order[d] ||
            x.rin[d] != y.rin[d])
            return false;
    for (int d = 0; d < x.rank; d++)
        if (x.dims[d] != y.dims[d]) return false;
    return true;
}

bool lay_fits(const lay_layout *l, int rank, const int32_t *shape) {
    if (!l || l->rank != rank) return false;
    lay_flat f;
    lay_flatten(l, &f);
    for (int d = 0; d < rank; d++) {
        int p = f.dims[d];
        int64_t S = shape[d], spt = f.spt[p], tile = lay_tile(&f, p);
        if (S <= spt) continue;
        if (S % spt) return false;
        if (S >= tile ? S % tile : (f.rin[p] > 1 || tile % S)) return false;
    }
    return true;
}

int lay_num_regs(const lay_layout *l, const int32_t *shape, int *n) {
    lay_flat f;
    lay_flatten(l, &f);
    int total = 1;
    for (int d = 0; d < f.rank; d++) {
        int p = f.dims[d];
        int S = shape[d], spt = f.spt[p], tile = lay_tile(&f, p);
        int nd = S <= spt ? S : spt * f.rin[p] * (S / tile > 1 ? S / tile : 1);
        if (n) n[d] = nd;
        total *= nd;
    }
    return total;
}

const lay_layout *lay_choose_blocked(blk_arena *a, int rank, const int32_t *shape, int num_warps, int fast_dim,
                                     int vec) {
    int spt[IR_MAX_RANK] = {0}, tpw[IR_MAX_RANK] = {0}, wpc[IR_MAX_RANK] = {0}, order[IR_MAX_RANK] = {0};
    if (rank < 1 || rank > IR_MAX_RANK) return NULL;
    int k = 0;
    order[k++] = fast_dim;
    for (int d = rank - 1; d >= 0; d--)
        if (d != fast_dim) order[k++] = d;
    for (int d = 0; d < rank; d++) {
        tpw[d] = wpc[d] = 1;
        if (!is_pow2(shape[d])) spt[d] = shape[d]; /* held whole by every thread */
        else spt[d] = d == fast_dim ? (vec < shape[d] ? ilog2_floor_pow2(vec) : shape[d]) : 1;
    }
    int lanes = 32, warps = num_warps;
    for (int i = 0; i < rank; i++) {
        int d = order[i];
        if (!is_pow2(shape[d])) continue;
        int t = shape[d] / spt[d];
        if (t > lanes) t = lanes;
        tpw[d] = t;
        lanes /= t;
    }
    tpw[order[rank - 1]] *= lanes; /* too few elements: replicate */
    for (int i = 0; i < rank; i++) {
        int d = order[i];
        if (!is_pow2(shape[d])) continue;
        int t = shape[d] / (spt[d] * tpw[d]);
        if (t < 1) t = 1;
        if (t > warps) t = warps;
        wpc[d] = t;
        warps /= t;
    }
    wpc[order[rank - 1]] *= warps;
    return lay_blocked(a, rank, spt, tpw, wpc, order);
}

bool lay_is_mma_acc(const lay_layout *l, int rank, const int32_t *shape) {
    return l && l->kind == LAY_BLOCKED && l->rank == 2 && rank == 2 && l->spt[0] == 1 && l->spt[1] == 2 &&
           l->tpw[0] == 8 && l->tpw[1] == 4 && l->order[0] == 1 && shape[0] % (16 * l->wpc[0]) == 0 &&
           l->rin[1] == 1 && (l->rin[0] == 1 || (l->rin[0] == 2 && l->wpc[1] == 1)) && lay_fits(l, rank, shape);
}

bool lay_wgmma_shape(blk_dtype ab, blk_dtype acc, int M, int N, int K, int num_warps) {
    bool types = ((ab == DT_BF16 || ab == DT_F16) && acc == DT_F32 && K % 16 == 0) ||
                 (ab == DT_I8 && acc == DT_I32 && K % 32 == 0) ||
                 ((ab == DT_F8E4M3 || ab == DT_F8E5M2) && acc == DT_F32 && K % 128 == 0) ||
                 (ab == DT_F32 && acc == DT_F32 && K % 32 == 0);
    return types && num_warps % 4 == 0 && M % (16 * num_warps) == 0 && N % 16 == 0;
}

const lay_layout *lay_for_dot(blk_arena *a, int M, int N, int num_warps, bool rows_first, bool wgmma) {
    if (wgmma)
        return lay_blocked_rin(a, 2, (int[]){1, 2}, (int[]){8, 4}, (int[]){2, 1}, (int[]){num_warps, 1}, (int[]){1, 0});
    int w[2] = {1, 1};
    int mt = M / 16 > 0 ? M / 16 : 1; /* m16 tiles: a warp needs at least one */
    while (w[0] * w[1] < num_warps) {
        if (rows_first) {
            if (w[0] < mt) w[0] *= 2;
            else w[1] *= 2;
        } else if (M / 16 / w[0] >= N / 16 / w[1] && w[0] < mt) w[0] *= 2;
        else w[1] *= 2;
    }
    return lay_blocked(a, 2, (int[]){1, 2}, (int[]){8, 4}, w, (int[]){1, 0});
}

static void print_ints(blk_strbuf *out, const char *name, const int *v, int n) {
    sb_printf(out, "%s=[", name);
    for (int i = 0; i < n; i++) sb_printf(out, "%s%d", i ? ", " : "", v[i]);
    sb_puts(out, "]");
}

void lay_print(blk_strbuf *out, const lay_layout *l) {
    if (!l) { sb_puts(out, "#none"); return; }
    if (l->kind == LAY_SLICE) {
        sb_printf(out, "#slice<dim=%d, ", l->slice_dim);
        lay_print(out, l->parent);
        sb_puts(out, ">");
        return;
    }
    sb_puts(out, "#blocked<");
    print_ints(out, "spt", l->spt, l->rank);
    print_ints(out, ", tpw", l->tpw, l->rank);
    bool rin = false;
    for (int d = 0; d < l->rank; d++) rin |= l->rin[d] != 1;
    if (rin) print_ints(out, ", rin", l->rin, l->rank);
    print_ints(out, ", wpc", l->wpc, l->rank);
    print_ints(out, ", order", l->order, l->rank);
    sb_puts(out, ">");
}

/* ---- assignment ---- */

/* aligned: cap the run by the pointer's proven alignment (a vector access
 * needs it); a dot operand staged through shared memory does not
 * (staged_layout). */
static const lay_layout *access_run(blk_arena *a, const ir_value *ptr, const ax_table *ax, int num_warps,
                                    int max_vec_bytes, bool aligned) {
    int rank = ptr->type.rank;
    if (!rank) return NULL;
    const ax_info *i = ax_get(ax, ptr);
    int fast = rank - 1;
    for (int d = rank - 1; d >= 0; d--)
        if (i->contig[d] > i->contig[fast]) fast = d;
    int eb = dtype_bytes((blk_dtype)ptr->type.pointee);
    int64_t vec = max_vec_bytes / eb;
    if (vec < 1) vec = 1;
    if (i->contig[fast] < vec) vec = i->contig[fast];
    int64_t align = i->div[fast] / eb;
    if (align < 1) align = 1;
    if (aligned && align < vec) vec = align;
    int64_t per_thread = ir_numel(ptr->type) / (32 * num_warps);
    if (per_thread < 1) per_thread = 1;
    if (per_thread < vec) vec = per_thread;
    return lay_choose_blocked(a, rank, ptr->type.shape, num_warps, fast, (int)vec);
}

/* The layout a store writes in, given the stored value's (want or
 * assignment): the pointers' access layout, except for a tensor-core
 * accumulator of 4-byte elements (f32, i32), which is written from its own
 * registers. Each thread's pair of adjacent columns is one 8-byte store,
 * and a warp's store covers 8 rows of 32 bytes: whole sectors, as the
 * coalesced layout's 16-byte stores would, without the round trip through
 * shared memory (a 128 x 256 f32 tile would need 128 KB of it, more than
 * fits beside the rings of a loop warp-specialized across a tile loop).
 * Narrower elements convert (their pairs would fill half sectors), except
 * in a persistent kernel's tile loop after its dot loop (its epilogue),
 * unless the store asks for registers (`tma = false`). There the dot loop's
 * rings stay reserved through the epilogue (codegen's warp specialization),
 * and a conversion's scratch competes with them: a store codegen sends by
 * TMA writes the accumulator straight into its staging tile (it converted
 * through scratch first: matmul_persistent 8192^3 1522 -> 1425 us on an
 * H100), and one it cannot (attention's, at a head's offset) writes its
 * 4-byte pairs, since the 32 KB of scratch for a 128 x 128 bf16 tile
 * would cost attn_fwd_persistent at D = 128 its third stage of K and V (2
 * stages ran 12% slower). A `tma = false` store converts and writes 16
 * bytes per access: its pairs ran matmul_persistent 7-10% slower.
 * layout.c's anchors and vectorize.c's access widths both ask this. */
static bool in_tile_epilogue(const ir_inst *st) {
    if (st->flags & IRF_NO_TMA) return false;
    const ir_inst *o = st->parent ? st->parent->parent : NULL;
    if (!o || o->op != IR_FOR) return false;
    for (const ir_inst *i = st->parent->first; i && i != st; i = i->next)
        if (i->op == IR_FOR && ir_region_has(i->regions[0], IR_DOT)) return true;
    return false;
}

const lay_layout *lay_for_store(blk_arena *a, const ir_inst *st, const lay_layout *value, const ax_table *ax,
                                int num_warps, int max_vec_bytes) {
    const ir_value *p = st->operands[0], *v = st->num_operands > 1 ? st->operands[1] : NULL;
    if (!p->type.rank) return NULL;
    int eb = v && v->type.dtype != DT_BOOL ? dtype_bytes((blk_dtype)v->type.dtype) : 0;
    if (v && v->type.rank == 2 && (eb == 4 || (eb == 2 && in_tile_epilogue(st))) &&
        lay_is_mma_acc(value, 2, v->type.shape))
        return value;
    return lay_for_access(a, p, ax, num_warps, max_vec_bytes);
}

const lay_layout *lay_for_access(blk_arena *a, const ir_value *ptr, const ax_table *ax, int num_warps,
                                 int max_vec_bytes) {
    return access_run(a, ptr, ax, num_warps, max_vec_bytes, true);
}

/* DESC_LOAD / DESC_STORE: base, dims[r], strides[r], offsets[r] (, value).
 * The fast dim is the one whose stride is the constant 1 (the last such; the
 * last dim when none is) — a literal or an eq1 argument (axisinfo's value). A group of `vec` consecutive elements along it,
 * starting at a multiple of vec, is one aligned access under a uniform
 * bounds mask when vec divides: the base (in elements), every other
 * stride, the fast dim's offset and its extent. */
int lay_desc_vec(const ir_inst *in, const ax_table *ax, int max_vec_bytes, int *fast_out) {
    bool st = in->op == IR_DESC_STORE;
    const ir_value *blk = st ? in->operands[in->num_operands - 1] : in->results[0];
    int rank = blk->type.rank;
    *fast_out = rank > 0 ? rank - 1 : 0;
    if (rank < 1 || in->num_operands != 1 + 3 * rank + (st ? 1 : 0)) return 1;
    int fast = -1;
    for (int d = rank - 1; d >= 0 && fast < 0; d--) {
        const ax_info *s = ax_get(ax, in->operands[1 + rank + d]);
        if (s->has_value && s->value == 1) fast = d;
    }
    if (fast < 0) return 1;
    *fast_out = fast;
    int eb = dtype_bytes((blk_dtype)in->operands[0]->type.pointee);
    if (eb < 1) eb = 1;
    int64_t v = max_vec_bytes / eb;
    int64_t al = ax_elem_div(ax, in->operands[0]) / eb;
    if (al < v) v = al;
    for (int d = 0; d < rank; d++) {
        if (d != fast) {
            int64_t sd = ax_elem_div(ax, in->operands[1 + rank + d]);
            if (sd < v) v = sd;
        }
    }
    int64_t od = ax_elem_div(ax, in->operands[1 + 2 * rank + fast]), dd = ax_elem_div(ax, in->operands[1 + fast]);
    if (od < v) v = od;
    if (dd < v) v = dd;
    if (v > blk->type.shape[fast]) v = blk->type.shape[fast];
    int p = 1;
    while ((int64_t)p * 2 <= v) p *= 2;
    return p;
}

const lay_layout *lay_for_desc(blk_arena *a, const ir_inst *in, const ax_table *ax, int num_warps, int max_vec_bytes) {
    bool st = in->op == IR_DESC_STORE;
    const ir_value *blk = st ? in->operands[in->num_operands - 1] : in->results[0];
    int rank = blk->type.rank, fast;
    if (!rank) return NULL;
    int64_t vec = lay_desc_vec(in, ax, max_vec_bytes, &fast);
    int64_t per_thread = ir_numel(blk->type) / (32 * num_warps);
    if (per_thread < 1) per_thread = 1;
    if (per_thread < vec) vec = per_thread;
    return lay_choose_blocked(a, rank, blk->type.shape, num_warps, fast, (int)vec);
}

typedef struct {
    blk_arena *a;
    const ax_table *ax;
    lay_table *t;
    const lay_layout **want;
    int max_vec_bytes;
    bool wgmma;  /* the target has wgmma: dots it can take get rows first */
} lay_ctx;

static bool in_range(lay_ctx *L, const ir_value *v) { return v && v->id >= 0 && v->id < L->t->num_values; }

static void want_set(lay_ctx *L, const ir_value *v, const lay_layout *l) {
    if (!l || !in_range(L, v) || !v->type.rank || L->want[v->id]) return;
    if (!lay_fits(l, v->type.rank, v->type.shape)) return;
    L->want[v->id] = l;
}
static const lay_layout *want_of(lay_ctx *L, const ir_value *v) { return in_range(L, v) ? L->want[v->id] : NULL; }

static const lay_layout *access_layout(lay_ctx *L, ir_inst *in) {
    ir_value *p = in->operands[0];
    return p->type.rank ? lay_for_access(L->a, p, L->ax, L->t->num_warps, L->max_vec_bytes) : NULL;
}

static const lay_layout *store_layout(lay_ctx *L, ir_inst *in) {
    const ir_value *v = in->num_operands > 1 ? in->operands[1] : NULL;
    return lay_for_store(L->a, in, v ? want_of(L, v) : NULL, L->ax, L->t->num_warps, L->max_vec_bytes);
}

/* The layout a load (or atomic) produces: its consumers' want when that
 * keeps the access's fastest dimension (so it stays coalesced; e.g. a bias
 * row loaded straight into the slice layout its broadcast needs), else the
 * access anchor. back_inst and fwd_inst agree through this one function. */
static const lay_layout *load_layout(lay_ctx *L, ir_inst *in) {
    const lay_layout *an = access_layout(L, in), *w = in->num_results ? want_of(L, in->results[0]) : NULL;
    if (!an || !w) return an;
    lay_flat fw, fa;
    lay_flatten(w, &fw);
    lay_flatten(an, &fa);
    return fw.reg_order[0] == fa.reg_order[0] ? w : an;
}

/* The same for a DESC_LOAD: its consumers' want when it keeps the fast dim. */
static const lay_layout *desc_load_layout(lay_ctx *L, ir_inst *in) {
    const lay_layout *an = lay_for_desc(L->a, in, L->ax, L->t->num_warps, L->max_vec_bytes);
    const lay_layout *w = in->num_results ? want_of(L, in->results[0]) : NULL;
    if (!an || !w) return an;
    lay_flat fw, fa;
    lay_flatten(w, &fw);
    lay_flatten(an, &fa);
    return fw.reg_order[0] == fa.reg_order[0] ? w : an;
}

/* A dot operand loaded from global memory (v = load(p, ...), or its
 * trans) is read in
 * the access layout without the alignment cap: where alignment is not
 * proven (the fallback variant) the loads stay one element wide
 * (vectorize), but each thread still holds runs of up to 16 bytes along the
 * contiguous dim, so one address register and one 16-byte st.shared serve a
 * run, instead of one of each per element. The per-element form kept ~300
 * address, predicate and accumulator registers live in matmul's loop and
 * spilled (docs/codegen.md, "Staged operands"). Where alignment holds this
 * is lay_for_access's layout: the d16 variants do not change. */
static const lay_layout *staged_layout(lay_ctx *L, const ir_value *v) {
    ir_inst *d = v ? v->def : NULL;
    if (d && d->op == IR_DESC_LOAD && v->type.rank == 2) { /* runs along its fast dim, as lay_for_desc */
        int fast, eb = dtype_bytes((blk_dtype)v->type.dtype);
        lay_desc_vec(d, L->ax, L->max_vec_bytes, &fast);
        int64_t vec = L->max_vec_bytes / (eb > 0 ? eb : 1), per = ir_numel(v->type) / (32 * L->t->num_warps);
        if (vec > v->type.shape[fast]) vec = v->type.shape[fast];
        if (per < vec) vec = per < 1 ? 1 : per;
        return lay_choose_blocked(L->a, 2, v->type.shape, L->t->num_warps, fast, (int)vec);
    }
    if (!d || d->op != IR_LOAD || !d->operands[0]->type.rank) return NULL;
    return access_run(L->a, d->operands[0], L->ax, L->t->num_warps, L->max_vec_bytes, false);
}

static ir_inst *terminator(ir_region *r) { return r ? r->last : NULL; }

/* The region's YIELD, or NULL (it ends in another terminator). */
static ir_inst *yield_of(ir_region *r) {
    ir_inst *y = terminator(r);
    return y && y->op == IR_YIELD ? y : NULL;
}

/* How many of an if's results a branch's yield y (NULL: none) gives. */
static int if_yields(const ir_inst *in, const ir_inst *y) {
    if (!y) return 0;
    return y->num_operands < in->num_results ? y->num_operands : in->num_results;
}

static void back_region(lay_ctx *L, ir_region *r);

static void back_inst(lay_ctx *L, ir_inst *in) {
    ir_value *res = in->num_results ? in->results[0] : NULL;
    const lay_layout *w = res ? want_of(L, res) : NULL;
    switch (in->op) {
    case IR_LOAD: case IR_STORE: case IR_ATOMIC_RMW: case IR_ATOMIC_CAS: {
        const lay_layout *an = in->op == IR_STORE ? store_layout(L, in) : load_layout(L, in);
        for (int k = 0; k < in->num_operands; k++) want_set(L, in->operands[k], an);
        return;
    }
    case IR_DOT:
        for (int k = 0; k < 2; k++) {
            ir_value *o = in->operands[k];
            if (o->def && o->def->op == IR_PERMUTE) o = o->def->operands[0]; /* trans(load) */
            want_set(L, o, staged_layout(L, o));
        }
        return;
    case IR_DESC_STORE:
        want_set(L, in->operands[in->num_operands - 1], lay_for_desc(L->a, in, L->ax, L->t->num_warps, L->max_vec_bytes));
        return;
    case IR_BROADCAST: case IR_MULTIPLE_OF: case IR_MAX_CONTIGUOUS:
        want_set(L, in->operands[0], w);
        return;
    case IR_EXPAND_DIMS:
        if (w && in->operands[0]->type.rank) want_set(L, in->operands[0], lay_slice(L->a, w, in->axis));
        return;
    case IR_REDUCE: case IR_ARGREDUCE: case IR_REDUCE_REGION:
        if (w && w->kind == LAY_SLICE && w->slice_dim == in->axis) want_set(L, in->operands[0], w->parent);
        return;
    case IR_PERMUTE:
        if (w && w->kind == LAY_BLOCKED) {
            int inv[IR_MAX_RANK];
            for (int i = 0; i < res->type.rank; i++) inv[in->perm[i]] = i;
            want_set(L, in->operands[0], lay_permute(L->a, w, inv));
        }
        return;
    case IR_FOR: {
        ir_region *body = in->regions[0];
        for (int pass = 0; pass < 2; pass++) {
            for (int k = 0; k < in->num_results && 1 + k < body->args.len; k++)
                want_set(L, body->args.data[1 + k], want_of(L, in->results[k]));
            ir_inst *y = terminator(body);
            if (y && y->op == IR_YIELD)
                for (int k = 0; k < y->num_operands && 1 + k < body->args.len; k++)
                    want_set(L, y->operands[k], want_of(L, body->args.data[1 + k]));
            back_region(L, body);
        }
        for (int k = 1; k < body->args.len && 2 + k < in->num_operands; k++)
            want_set(L, in->operands[2 + k], want_of(L, body->args.data[k]));
        return;
    }
    case IR_WHILE: {
        back_region(L, in->regions[1]);
        ir_inst *c = terminator(in->regions[0]);
        if (c && c->op == IR_CONDITION)
            for (int k = 1; k < c->num_operands; k++) {
                want_set(L, c->operands[k], want_of(L, in->results[k - 1]));
                if (k - 1 < in->regions[1]->args.len) want_set(L, c->operands[k], want_of(L, in->regions[1]->args.data[k - 1]));
            }
        back_region(L, in->regions[0]);
        for (int k = 0; k < in->num_operands && k < in->regions[0]->args.len; k++)
            want_set(L, in->operands[k], want_of(L, in->regions[0]->args.data[k]));
        return;
    }
    case IR_IF:
        for (int r = 0; r < in->num_regions; r++) {
            ir_inst *y = yield_of(in->regions[r]);
            for (int k = 0; k < if_yields(in, y); k++) want_set(L, y->operands[k], want_of(L, in->results[k]));
            back_region(L, in->regions[r]);
        }
        return;
    default:
        break;
    }
    if (ir_op_has(in->op, OPF_ELEM) && w)
        for (int k = 0; k < in->num_operands; k++) want_set(L, in->operands[k], w);
}

static void back_region(lay_ctx *L, ir_region *r) {
    for (ir_inst *i = r->last; i; i = i->prev) back_inst(L, i);
}

static const lay_layout *lay_of(lay_ctx *L, const ir_value *v) { return in_range(L, v) ? L->t->lay[v->id] : NULL; }

static void assign(lay_ctx *L, ir_value *v, const lay_layout *derived) {
    if (!in_range(L, v) || !v->type.rank) return;
    const lay_layout *l = want_of(L, v);
    if (!l && derived && lay_fits(derived, v->type.rank, v->type.shape)) l = derived;
    if (!l) l = lay_choose_blocked(L->a, v->type.rank, v->type.shape, L->t->num_warps, v->type.rank - 1, 1);
    L->t->lay[v->id] = l;
}

static void force(lay_ctx *L, ir_value *v, const lay_layout *l) {
    if (!in_range(L, v) || !v->type.rank) return;
    if (l && lay_fits(l, v->type.rank, v->type.shape)) L->t->lay[v->id] = l;
    else L->want[v->id] = NULL, assign(L, v, NULL);
}

static void fwd_region(lay_ctx *L, ir_region *r);

static void fwd_inst(lay_ctx *L, ir_inst *in) {
    ir_value *res = in->num_results ? in->results[0] : NULL;
    const lay_layout *x = in->num_operands ? lay_of(L, in->operands[0]) : NULL;
    switch (in->op) {
    case IR_LOAD: case IR_ATOMIC_RMW: case IR_ATOMIC_CAS:
        force(L, res, load_layout(L, in));
        return;
    case IR_DESC_LOAD:
        force(L, res, desc_load_layout(L, in));
        return;
    case IR_DOT:
        force(L, res, want_of(L, res)); /* seed_dots made it the accumulator layout */
        return;
    case IR_CLUSTER_SUM: /* exchanged in its operand's layout (an accumulator's): users convert after */
        force(L, res, x);
        return;
    case IR_BROADCAST: case IR_MULTIPLE_OF: case IR_MAX_CONTIGUOUS:
        assign(L, res, x);
        return;
    case IR_EXPAND_DIMS:
        assign(L, res, lay_expand(L->a, x, in->axis));
        return;
    case IR_REDUCE: case IR_ARGREDUCE: case IR_REDUCE_REGION:
        if (res && res->type.rank) assign(L, res, lay_slice(L->a, x, in->axis));
        for (int k = 0; k < in->num_regions; k++) fwd_region(L, in->regions[k]);
        return;
    case IR_PERMUTE:
        assign(L, res, lay_permute(L->a, x, in->perm));
        return;
    case IR_FOR: {
        ir_region *body = in->regions[0];
        for (int k = 1; k < body->args.len; k++)
            assign(L, body->args.data[k], 2 + k < in->num_operands ? lay_of(L, in->operands[2 + k]) : NULL);
        fwd_region(L, body);
        for (int k = 0; k < in->num_results; k++)
            force(L, in->results[k], 1 + k < body->args.len ? lay_of(L, body->args.data[1 + k]) : NULL);
        return;
    }
    case IR_WHILE: {
        ir_region *cr = in->regions[0], *br = in->regions[1];
        for (int k = 0; k < cr->args.len; k++)
            assign(L, cr->args.data[k], k < in->num_operands ? lay_of(L, in->operands[k]) : NULL);
        fwd_region(L, cr);
        ir_inst *c = terminator(cr);
        bool cond_ok = c && c->op == IR_CONDITION;
        for (int k = 0; k < br->args.len; k++)
            assign(L, br->args.data[k], cond_ok && k + 1 < c->num_operands ? lay_of(L, c->operands[k + 1]) : NULL);
        fwd_region(L, br);
        for (int k = 0; k < in->num_results; k++)
            assign(L, in->results[k], cond_ok && k + 1 < c->num_operands ? lay_of(L, c->operands[k + 1]) : NULL);
        return;
    }
    case IR_IF: {
        for (int r = 0; r < in->num_regions; r++) fwd_region(L, in->regions[r]);
        for (int k = 0; k < in->num_results; k++) {
            const lay_layout *d = NULL;
            for (int r = 0; r < in->num_regions && !d; r++) {
                ir_inst *y = terminator(in->regions[r]);
                if (y && y->op == IR_YIELD && k < y->num_operands) d = lay_of(L, y->operands[k]);
            }
            assign(L, in->results[k], d);
        }
        return;
    }
    default:
        break;
    }
    const lay_layout *derived = NULL;
    if (ir_op_has(in->op, OPF_ELEM))
        for (int k = 0; k < in->num_operands && !derived; k++) derived = lay_of(L, in->operands[k]);
    for (int k = 0; k < in->num_results; k++) assign(L, in->results[k], derived);
    for (int k = 0; k < in->num_regions; k++) fwd_region(L, in->regions[k]);
}

static void fwd_region(lay_ctx *L, ir_region *r) {
    for (int k = 0; k < r->args.len; k++)
        if (in_range(L, r->args.data[k]) && !L->t->lay[r->args.data[k]->id]) assign(L, r->args.data[k], NULL);
    for (ir_inst *i = r->first; i; i = i->next) fwd_inst(L, i);
}

/* ---- tensor-core seeds ----
 *
 * A dot's accumulator layout must win over the layouts that memory accesses
 * ask for: a store after the loop would otherwise pull the loop-carried
 * accumulator (and with it every iteration's dot result) into the store's
 * layout, converting through shared memory twice per iteration. So before
 * the backward walk, each dot's result and accumulator operand want the
 * accumulator layout, and that want flows forward — through elementwise
 * ops, reductions (as a slice), expand_dims, broadcasts, an if's yields into
 * its results, and from a loop's yield into the loop-carried value, its init
 * and the loop's result — to a fixed point. Attention's acc, m_i and l_i thus stay in the accumulator
 * layout and its row slice across iterations. */

typedef void (*inst_fn)(lay_ctx *L, ir_inst *in, void *arg);

static void walk(lay_ctx *L, ir_region *r, inst_fn fn, void *arg) {
    for (ir_inst *in = r->first; in; in = in->next) {
        fn(L, in, arg);
        for (int k = 0; k < in->num_regions; k++) walk(L, in->regions[k], fn, arg);
    }
}

typedef struct {
    bool *mark;   /* values reached from one dot's result */
    bool changed, rows;
} chain_ctx;

static bool marked(lay_ctx *L, bool *mark, const ir_value *v) { return in_range(L, v) && mark[v->id]; }
static void mark_val(lay_ctx *L, chain_ctx *c, const ir_value *v) {
    if (in_range(L, v) && v->type.rank && !c->mark[v->id]) c->mark[v->id] = true, c->changed = true;
}

/* The loop-carried value, init and loop result of yield operand k of FOR. */
static void for_carried(ir_inst *loop, int k, ir_value **arg, ir_value **init, ir_value **res) {
    ir_region *body = loop->regions[0];
    *arg = 1 + k < body->args.len ? body->args.data[1 + k] : NULL;
    *init = 3 + k < loop->num_operands ? loop->operands[3 + k] : NULL;
    *res = k < loop->num_results ? loop->results[k] : NULL;
}

static void chain_step(lay_ctx *L, ir_inst *in, void *arg) {
    chain_ctx *c = arg;
    if (in->op == IR_IF) { /* a result is reached when a branch yields a reached value */
        for (int r = 0; r < in->num_regions; r++) {
            ir_inst *y = yield_of(in->regions[r]);
            for (int k = 0; k < if_yields(in, y); k++)
                if (marked(L, c->mark, y->operands[k])) mark_val(L, c, in->results[k]);
        }
        return;
    }
    if (in->op == IR_FOR) {
        ir_inst *y = terminator(in->regions[0]);
        if (y && y->op == IR_YIELD)
            for (int k = 0; k < y->num_operands; k++)
                if (marked(L, c->mark, y->operands[k])) {
                    ir_value *a, *i, *r;
                    for_carried(in, k, &a, &i, &r);
                    mark_val(L, c, a);
                    mark_val(L, c, r);
                }
        return;
    }
    bool any = false;
    for (int k = 0; k < in->num_operands; k++) any |= marked(L, c->mark, in->operands[k]);
    if (!any) return;
    if ((in->op == IR_REDUCE || in->op == IR_ARGREDUCE || in->op == IR_REDUCE_REGION) &&
        in->axis == in->operands[0]->type.rank - 1)
        c->rows = true;
    if (in->op == IR_DOT && marked(L, c->mark, in->operands[0])) c->rows = true;
    if (ir_op_has(in->op, OPF_ELEM) || in->op == IR_BROADCAST)
        for (int k = 0; k < in->num_results; k++) mark_val(L, c, in->results[k]);
}

/* Does the dot's result (through elementwise ops and loop-carried values)
 * reach a reduction along its rows or another dot's A operand? */
static bool dot_rows_first(lay_ctx *L, ir_func *f, ir_inst *dot) {
    chain_ctx c = {ARENA_ARRAY(L->a, bool, L->t->num_values + 1), true, false};
    if (!c.mark) return false;
    c.mark[dot->results[0]->id] = true;
    for (int it = 0; it < 8 && c.changed; it++) {
        c.changed = false;
        walk(L, f->body, chain_step, &c);
    }
    return c.rows;
}

typedef struct {
    ir_func *f;
    bool *seeded;
    bool changed;
    int phase; /* 0: dots whose rows are reduced, 1: the other dots, 2: loads in loop bodies */
    const bool *expanded; /* phase 2: values only ever expanded to a higher rank (expand_only) */
} seed_ctx;

static void seed_want(lay_ctx *L, seed_ctx *s, const ir_value *v, const lay_layout *l) {
    if (!in_range(L, v) || !v->type.rank || L->want[v->id] || !l) return;
    want_set(L, v, l);
    if (L->want[v->id]) s->seeded[v->id] = true, s->changed = true;
}

static const lay_layout *seeded_want(lay_ctx *L, seed_ctx *s, const ir_value *v) {
    return in_range(L, v) && s->seeded[v->id] ? L->want[v->id] : NULL;
}

/* An elementwise consumer of v whose result already has an accumulator
 * layout of v's shape (attention's acc * alpha + dot(p, v)): v's dot takes
 * that layout instead of converting every iteration. */
typedef struct {
    const ir_value *v;
    seed_ctx *s;
    const lay_layout *found;
} consumer_ctx;

static const lay_layout *seeded_want(lay_ctx *L, seed_ctx *s, const ir_value *v);

static void consumer_step(lay_ctx *L, ir_inst *in, void *arg) {
    consumer_ctx *c = arg;
    if (c->found || !ir_op_has(in->op, OPF_ELEM) || !in->num_results) return;
    for (int k = 0; k < in->num_operands; k++)
        if (in->operands[k] == c->v) {
            const lay_layout *w = seeded_want(L, c->s, in->results[0]);
            if (w && lay_is_mma_acc(w, c->v->type.rank, c->v->type.shape)) c->found = w;
        }
}

/* Which values are only ever expanded to a higher rank: every use is an
 * expand_dims, or a one-operand elementwise op (a cast) whose result is such
 * a value. A load of one in a loop body that also loads a higher-rank tile
 * (SpMM's column indices and values, [BNZ] expanded to meet the gathered
 * [BNZ, BN] rows of B) must not seed its own access layout in phase 2: that
 * layout, expanded and broadcast, spreads the tile one row per thread with
 * the whole BN axis in each thread's registers, replicated over the warps,
 * and the tile's load converts into it through shared memory every
 * iteration. Unseeded, the load reads straight into the slice of the tile's
 * layout (load_layout takes the consumers' want). Without a higher-rank load
 * (moe_sort's [BS] experts against [BE] expert ids) the expanded load's
 * layout is the only one the loop has, and it stays. Walked last use first,
 * so a value's users are counted before it is. */
static void count_expand(lay_ctx *L, const int *uses, int *exp, bool *expanded, ir_region *r) {
    for (ir_inst *in = r->last; in; in = in->prev) {
        for (int k = in->num_regions - 1; k >= 0; k--) count_expand(L, uses, exp, expanded, in->regions[k]);
        for (int k = 0; k < in->num_results; k++)
            if (in_range(L, in->results[k])) {
                int id = in->results[k]->id;
                expanded[id] = uses[id] > 0 && exp[id] == uses[id];
            }
        ir_value *x = in->num_operands ? in->operands[0] : NULL;
        if (!in_range(L, x)) continue;
        bool unary = ir_op_has(in->op, OPF_ELEM) && in->num_operands == 1 && in->num_results == 1;
        if (in->op == IR_EXPAND_DIMS || (unary && in_range(L, in->results[0]) && expanded[in->results[0]->id]))
            exp[x->id]++;
    }
}

static bool loads_rank_above(const ir_region *r, int rank) {
    for (const ir_inst *i = r->first; i; i = i->next)
        if (i->op == IR_LOAD && i->num_results && i->results[0]->type.rank > rank) return true;
    return false;
}

static const bool *expand_only(lay_ctx *L, ir_func *f) {
    int n = 0;
    const int *uses = ir_count_uses(f, &n);
    int *exp = ARENA_ARRAY(L->a, int, L->t->num_values + 1);
    bool *expanded = ARENA_ARRAY(L->a, bool, L->t->num_values + 1);
    if (!uses || !exp || !expanded || n != L->t->num_values) return NULL;
    count_expand(L, uses, exp, expanded, f->body);
    return expanded;
}

static void seed_step(lay_ctx *L, ir_inst *in, void *arg) {
    seed_ctx *s = arg;
    ir_value *res = in->num_results ? in->results[0] : NULL;
    switch (in->op) {
    case IR_DOT: {
        if (!res || res->type.rank != 2 || (in_range(L, res) && s->seeded[res->id])) return;
        bool rows = dot_rows_first(L, s->f, in);
        const ir_type *at = &in->operands[0]->type;
        bool wg = L->wgmma && in->precision != IR_PREC_IEEE && /* "ieee" f32 runs without tensor cores */
                  lay_wgmma_shape((blk_dtype)at->dtype, (blk_dtype)res->type.dtype, res->type.shape[0],
                                  res->type.shape[1], at->shape[1], L->t->num_warps);
        rows = rows || wg;
        if (s->phase == 2 || rows != (s->phase == 0)) return;
        const lay_layout *l = seeded_want(L, s, in->operands[2]);
        if (!l || !lay_is_mma_acc(l, 2, res->type.shape)) {
            consumer_ctx c = {res, s, NULL};
            walk(L, s->f->body, consumer_step, &c);
            l = c.found;
        }
        if (!l) l = lay_for_dot(L->a, res->type.shape[0], res->type.shape[1], L->t->num_warps, rows, wg);
        seed_want(L, s, res, l);
        seed_want(L, s, in->operands[2], l);
        return;
    }
    case IR_LOAD:
        /* phase 2: a load in a loop body seeds its access layout, so the
         * values it is combined with and carried across iterations take it
         * (softmax_online's running max) instead of converting it per
         * iteration */
        if (s->phase == 2 && res && res->type.rank && in->parent->parent && in->parent->parent->op == IR_FOR &&
            !ir_region_has(in->parent, IR_DOT) && /* a loop with dots: their layouts decide */
            !(s->expanded && s->expanded[res->id] && loads_rank_above(in->parent, res->type.rank)))
            seed_want(L, s, res, load_layout(L, in));
        return;
    case IR_FOR: {
        ir_inst *y = terminator(in->regions[0]);
        if (!y || y->op != IR_YIELD) return;
        for (int k = 0; k < y->num_operands; k++) {
            const lay_layout *w = seeded_want(L, s, y->operands[k]);
            if (!w) continue;
            ir_value *a, *i, *r;
            for_carried(in, k, &a, &i, &r);
            seed_want(L, s, a, w);
            seed_want(L, s, i, w);
            seed_want(L, s, r, w);
        }
        return;
    }
    case IR_IF:
        for (int r = 0; r < in->num_regions; r++) {
            ir_inst *y = yield_of(in->regions[r]);
            for (int k = 0; k < if_yields(in, y); k++) seed_want(L, s, in->results[k], seeded_want(L, s, y->operands[k]));
        }
        return;
    case IR_REDUCE: case IR_ARGREDUCE: case IR_REDUCE_REGION: {
        const lay_layout *w = seeded_want(L, s, in->operands[0]);
        if (w && res && res->type.rank) seed_want(L, s, res, lay_slice(L->a, w, in->axis));
        return;
    }
    case IR_EXPAND_DIMS: {
        const lay_layout *w = seeded_want(L, s, in->operands[0]);
        if (w) seed_want(L, s, res, lay_expand(L->a, w, in->axis));
        return;
    }
    case IR_BROADCAST:
        seed_want(L, s, res, seeded_want(L, s, in->operands[0]));
        return;
    default:
        break;
    }
    if (!ir_op_has(in->op, OPF_ELEM) || !res || !res->type.rank) return;
    for (int k = 0; k < in->num_operands; k++) {
        const lay_layout *w = seeded_want(L, s, in->operands[k]);
        if (w && in->operands[k]->type.rank == res->type.rank) {
            seed_want(L, s, res, w);
            return;
        }
    }
}

/* Dots whose rows are reduced first (their layout puts a row in one warp),
 * then the others, which join an accumulator layout already flowing into
 * their consumers or accumulator operand where there is one; then the loads
 * in loop bodies, for the loop-carried values no dot decided. */
static void seed_dots(lay_ctx *L, ir_func *f) {
    seed_ctx s = {f, ARENA_ARRAY(L->a, bool, L->t->num_values + 1), true, 0, NULL};
    if (!s.seeded) return;
    for (int phase = 0; phase < 3; phase++) {
        s.phase = phase;
        if (phase == 2) s.expanded = expand_only(L, f);
        s.changed = true;
        for (int it = 0; it < 16 && s.changed; it++) {
            s.changed = false;
            walk(L, f->body, seed_step, &s);
        }
    }
}

lay_table *lay_assign(blk_arena *a, ir_func *f, const ax_table *ax, int max_vec_bytes, bool wgmma) {
    lay_table *t = ARENA_NEW(a, lay_table);
    if (!t) return NULL;
    t->num_values = ir_number_values(f);
    t->num_warps = f->num_warps;
    t->wgmma = wgmma;
    t->lay = ARENA_ARRAY(a, const lay_layout *, t->num_values + 1);
    lay_ctx L = {a, ax, t, ARENA_ARRAY(a, const lay_layout *, t->num_values + 1), max_vec_bytes, wgmma};
    if (!t->lay || !L.want) { t->num_values = 0; return t; }
    seed_dots(&L, f);
    back_region(&L, f->body);
    fwd_region(&L, f->body);
    return t;
}

const lay_layout *lay_get(const lay_table *t, const ir_value *v) {
    return t && v && v->id >= 0 && v->id < t->num_values ? t->lay[v->id] : NULL;
}

/* ---- dump ---- */

static void dump_region(blk_strbuf *out, const lay_table *t, ir_region *r) {
    for (int k = 0; k < r->args.len; k++)
        if (lay_get(t, r->args.data[k])) {
            sb_printf(out, "// %%%d: ", r->args.data[k]->id);
            lay_print(out, lay_get(t, r->args.data[k]));
            sb_putc(out, '\n');
        }
    for (ir_inst *in = r->first; in; in = in->next) {
        for (int k = 0; k < in->num_results; k++)
            if (lay_get(t, in->results[k])) {
                sb_printf(out, "// %%%d: ", in->results[k]->id);
                lay_print(out, lay_get(t, in->results[k]));
                sb_putc(out, '\n');
            }
        for (int k = 0; k < in->num_regions; k++) dump_region(out, t, in->regions[k]);
    }
}

void lay_dump_module(blk_strbuf *out, ir_module *m) {
    ir_print_module(out, m);
    for (ir_func *f = m->first; f; f = f->next) {
        if (!f->is_kernel) continue;
        ax_spec *spec = ax_d16_spec(m->arena, f);
        if (!spec) return;
        ax_table *ax = ax_analyze(m->arena, f, spec);
        lay_table *t = ax ? lay_assign(m->arena, f, ax, 16, false) : NULL;
        sb_printf(out, "// layouts @%s (num_warps=%d; pointer and integer arguments divisible by 16)\n", f->name,
                  t ? t->num_warps : 0);
        if (t) dump_region(out, t, f->body);
    }
}

void pass_layout(ir_module *m) { (void)m; }

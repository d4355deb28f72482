/* vectorize.c — the width of every global memory access (vectorize.h).
 *
 * Needs: ax and lay of the function (same numbering, same variant).
 * Guarantees: an entry per memory op, read by codegen through vec_get; the
 * width never exceeds what axisinfo proves (see vectorize.h).
 */
#include "vectorize.h"

#include "passes.h"

static int pow2_floor(int64_t x) {
    int p = 1;
    while ((int64_t)p * 2 <= x) p *= 2;
    return p;
}

/* Tighten *v to x, remembering why. */
static void bound(int64_t *v, int64_t x, vec_limit why, vec_limit *limit) {
    if (x < *v) {
        *v = x < 1 ? 1 : x;
        *limit = why;
    }
}

/* Widest group for the registers of `ptr` in layout l: the thread's run of
 * consecutive elements along the layout's fastest dim, cut by contiguity,
 * alignment and mask constancy along that dim, a power of two dividing the
 * run, at most max_vec_bytes. */
static int access_vec(const lay_layout *l, const ir_value *ptr, const ir_value *mask, const ax_table *ax,
                      int max_vec_bytes, vec_limit *limit) {
    lay_flat fl;
    lay_flatten(l, &fl);
    int f = fl.reg_order[0];
    int64_t S = ptr->type.shape[f], spt = fl.spt[fl.dims[f]];
    int64_t run = S <= spt ? S : spt;
    int eb = dtype_bytes((blk_dtype)ptr->type.pointee);
    if (eb < 1) eb = 1;
    const ax_info *ai = ax_get(ax, ptr);
    int64_t v = max_vec_bytes / eb;
    if (v < 1) v = 1;
    *limit = VEC_WIDEST;
    bound(&v, run, VEC_THREAD_RUN, limit);
    bound(&v, ai->contig[f], VEC_CONTIG, limit);
    bound(&v, ai->div[f] / eb, VEC_ALIGN, limit);
    if (mask && mask->type.rank) bound(&v, ax_get(ax, mask)->constancy[f], VEC_MASK, limit);
    int vec = pow2_floor(v);
    while (run % vec) vec /= 2;
    return vec;
}

/* A 2-byte accumulator stored from its registers (pairs: half sectors) as
 * 16-byte accesses: the 4 lanes of a quad hold 8 consecutive columns of a
 * row in every 8-column block, so 4 adjacent blocks transposed across the
 * quad give each lane one block's 8 (codegen: two butterfly stages of 2
 * shuffles). Needs one warp across the columns (a thread's blocks are then
 * adjacent), the columns in whole groups of 4 blocks, and 8
 * consecutive pointers, 16-byte aligned, under one mask value. */
static bool quad_ok(const lay_layout *l, const ir_value *ptr, const ir_value *mask, const ax_table *ax, int max_vec_bytes) {
    int eb = dtype_bytes((blk_dtype)ptr->type.pointee);
    /* one warp across the columns: a thread's blocks are adjacent */
    if (eb != 2 || max_vec_bytes < 16 || !lay_is_mma_acc(l, 2, ptr->type.shape) || l->wpc[1] != 1 ||
        ptr->type.shape[1] % 32)
        return false;
    const ax_info *ai = ax_get(ax, ptr);
    if (ai->contig[1] < 8 || ai->div[1] < 16) return false;
    return !mask || !mask->type.rank || ax_get(ax, mask)->constancy[1] >= 8;
}

/* DESC_LOAD / DESC_STORE: lay_desc_vec's proof, along the layout's fast dim. */
static int desc_vec(const ir_inst *in, const lay_layout *l, const ir_value *blk, const ax_table *ax, int max_vec_bytes) {
    int fast, vec = lay_desc_vec(in, ax, max_vec_bytes, &fast);
    lay_flat fl;
    lay_flatten(l, &fl);
    int f = fl.reg_order[0];
    if (f != fast) return 1;
    int64_t S = blk->type.shape[f], spt = fl.spt[fl.dims[f]], run = S <= spt ? S : spt;
    while (vec > 1 && run % vec) vec /= 2;
    int eb = dtype_bytes((blk_dtype)in->operands[0]->type.pointee);
    while (vec > 1 && vec * eb > max_vec_bytes) vec /= 2;
    return vec;
}

typedef struct {
    blk_arena *a;
    const ax_table *ax;
    const lay_table *lt;
    int max_vec_bytes;
    vec_table *t;
    int cap;
} vec_ctx;

static vec_access *new_entry(vec_ctx *V, ir_inst *in) {
    if (V->t->num + 1 >= V->cap) {
        int cap = V->cap ? V->cap * 2 : 16;
        vec_access *n = ARENA_ARRAY(V->a, vec_access, cap);
        if (!n) return NULL;
        for (int i = 0; i <= V->t->num; i++) n[i] = V->t->acc[i];
        V->t->acc = n, V->cap = cap;
    }
    in->scratch = ++V->t->num;
    vec_access *e = &V->t->acc[in->scratch];
    *e = (vec_access){NULL, 1, 0, VEC_SCALAR};
    return e;
}

static void visit_inst(vec_ctx *V, ir_inst *in) {
    int nw = V->lt->num_warps;
    switch (in->op) {
    case IR_LOAD: case IR_STORE: {
        vec_access *e = new_entry(V, in);
        if (!e) return;
        ir_value *ptr = in->operands[0];
        ir_value *mask = in->op == IR_LOAD ? (in->num_operands > 1 ? in->operands[1] : NULL)
                                           : (in->num_operands > 2 ? in->operands[2] : NULL);
        e->bytes = dtype_bytes((blk_dtype)ptr->type.pointee);
        if (!ptr->type.rank) return;
        /* a load reads in its result's layout (layout.c picked it around the
         * access); a store writes in lay_for_store's: the stored value's own
         * where that is an accumulator, else a fresh access layout */
        const lay_layout *val = in->op == IR_STORE ? lay_get(V->lt, in->operands[1]) : NULL;
        const lay_layout *l = in->op == IR_LOAD ? lay_get(V->lt, in->results[0])
                                                : lay_for_store(V->a, in, val, V->ax, nw, V->max_vec_bytes);
        bool from_acc = val && l == val;
        if (!l || !lay_fits(l, ptr->type.rank, ptr->type.shape)) l = lay_get(V->lt, ptr), from_acc = false;
        if (!l) return;
        e->lay = l;
        e->vec = access_vec(l, ptr, mask, V->ax, V->max_vec_bytes, &e->limit);
        e->bytes *= e->vec;
        if (from_acc && e->limit == VEC_THREAD_RUN) e->limit = VEC_ACC;
        if (e->limit == VEC_ACC && quad_ok(l, ptr, mask, V->ax, V->max_vec_bytes))
            e->vec = 8, e->bytes = 16, e->limit = VEC_ACC_QUAD;
        return;
    }
    case IR_ATOMIC_RMW: case IR_ATOMIC_CAS: {
        vec_access *e = new_entry(V, in);
        if (!e) return;
        ir_value *r = in->results[0];
        e->bytes = dtype_bytes((blk_dtype)in->operands[0]->type.pointee);
        if (r->type.rank) e->lay = lay_get(V->lt, r), e->limit = VEC_ATOMIC;
        return;
    }
    case IR_DESC_LOAD: case IR_DESC_STORE: {
        vec_access *e = new_entry(V, in);
        if (!e) return;
        bool st = in->op == IR_DESC_STORE;
        ir_value *blk = st ? in->operands[in->num_operands - 1] : in->results[0];
        int rank = blk->type.rank;
        e->bytes = dtype_bytes((blk_dtype)in->operands[0]->type.pointee);
        if (rank < 1 || in->num_operands != 1 + 3 * rank + (st ? 1 : 0)) return;
        const lay_layout *l = st ? lay_for_desc(V->a, in, V->ax, nw, V->max_vec_bytes) : lay_get(V->lt, blk);
        if (!l || !lay_fits(l, rank, blk->type.shape)) l = lay_get(V->lt, blk);
        if (!l) return;
        e->lay = l;
        e->vec = desc_vec(in, l, blk, V->ax, V->max_vec_bytes);
        e->bytes *= e->vec;
        e->limit = e->bytes >= V->max_vec_bytes ? VEC_WIDEST : VEC_DESC;
        return;
    }
    default:
        break;
    }
    for (int k = 0; k < in->num_regions; k++)
        for (ir_inst *i = in->regions[k]->first; i; i = i->next) visit_inst(V, i);
}

vec_table *vec_analyze(blk_arena *a, ir_func *f, const ax_table *ax, const lay_table *lt, int max_vec_bytes) {
    vec_table *t = ARENA_NEW(a, vec_table);
    if (!t || !ax || !lt) return NULL;
    vec_ctx V = {a, ax, lt, max_vec_bytes, t, 0};
    t->acc = ARENA_ARRAY(a, vec_access, 1);
    if (!t->acc) return NULL;
    V.cap = 1;
    for (ir_inst *i = f->body->first; i; i = i->next) visit_inst(&V, i);
    return t;
}

const vec_access *vec_get(const vec_table *t, const ir_inst *in) {
    if (!t || !in || in->scratch < 1 || in->scratch > t->num) return NULL;
    return &t->acc[in->scratch];
}

const char *vec_limit_name(vec_limit l) {
    switch (l) {
    case VEC_WIDEST: return "widest";
    case VEC_SCALAR: return "scalar access";
    case VEC_ATOMIC: return "atomic: one element each";
    case VEC_THREAD_RUN: return "limited by the elements per thread";
    case VEC_CONTIG: return "limited by contiguity";
    case VEC_ALIGN: return "limited by alignment";
    case VEC_MASK: return "limited by the mask";
    case VEC_DESC: return "limited by the descriptor";
    case VEC_ACC: return "the accumulator's own pairs, no staging";
    case VEC_ACC_QUAD: return "the accumulator's pairs exchanged across each quad of lanes, no staging";
    }
    return "?";
}

/* ---- dump ---- */

static void dump_inst(blk_strbuf *out, const vec_table *t, ir_inst *in) {
    const vec_access *e = vec_get(t, in);
    if (e) {
        ir_value *p = in->operands[0];
        blk_dtype dt = (blk_dtype)p->type.pointee;
        sb_printf(out, "// %s", ir_op_table[in->op].name);
        if (in->num_results) sb_printf(out, " %%%d", in->results[0]->id);
        sb_printf(out, " (ptr %%%d): %d x %s = %d bytes per access, %s", p->id, e->vec, dtype_name(dt), e->bytes,
                  vec_limit_name(e->limit));
        if (e->lay) {
            sb_puts(out, "; ");
            lay_print(out, e->lay);
        }
        sb_putc(out, '\n');
    }
    for (int k = 0; k < in->num_regions; k++)
        for (ir_inst *i = in->regions[k]->first; i; i = i->next) dump_inst(out, t, i);
}

void vec_dump_module(blk_strbuf *out, ir_module *m) {
    ir_print_module(out, m);
    for (ir_func *f = m->first; f; f = f->next) {
        if (!f->is_kernel) continue;
        kernel_plan p;
        if (!passes_plan_kernel(m->arena, f, passes_d16_spec(m->arena, f), tgt_default(), PL_OPTIMISTIC, &p)) continue;
        sb_printf(out, "// vectorize @%s (pointer and integer arguments divisible by 16)\n", f->name);
        for (ir_inst *i = f->body->first; i; i = i->next) dump_inst(out, p.vec, i);
    }
}

void pass_vectorize(ir_module *m) { (void)m; }

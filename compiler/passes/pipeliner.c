/* pipeliner.c — which dot operands stream through shared-memory rings and
 * which are staged once before their loop (pipeliner.h). */
#include "pipeliner.h"

#include "passes.h"

#include <string.h>

int pl_elem_bytes(blk_dtype t) { return t == DT_F32 ? 4 : t == DT_I8 ? 1 : 2; }

int pl_stored_colv(const lay_layout *l, blk_dtype t, int kdim) {
    if (pl_elem_bytes(t) != 2 || !l) return kdim;
    lay_flat f;
    lay_flatten(l, &f);
    return f.reg_order[0];
}

static bool k_fastest(const lay_table *lt, const ir_value *v, int kdim) {
    const lay_layout *l = lay_get(lt, v);
    if (!l || l->rank != 2) return false;
    lay_flat f;
    lay_flatten(l, &f);
    return f.reg_order[0] == kdim;
}

bool pl_f8_wgmma(const lay_table *lt, const ir_inst *d, const char **why) {
    const ir_value *a = d->operands[0], *b = d->operands[1], *res = d->results[0];
    blk_dtype t = (blk_dtype)a->type.dtype;
    *why = "not an f8 dot";
    if ((t != DT_F8E4M3 && t != DT_F8E5M2) || a->type.rank != 2 || (blk_dtype)res->type.dtype != DT_F32) return false;
    *why = "the target has no wgmma";
    if (!lt || !lt->wgmma) return false;
    *why = "wgmma's f8 form needs num_warps a multiple of 4, M a multiple of 16 x num_warps and K of 128";
    if (!lay_wgmma_shape(t, DT_F32, a->type.shape[0], b->type.shape[1], a->type.shape[1], lt->num_warps)) return false;
    const lay_layout *L = lay_get(lt, res);
    *why = "the accumulator's warps are not all along M (its layout comes from another dot)";
    if (!lay_is_mma_acc(L, 2, res->type.shape) || L->wpc[1] != 1 || L->wpc[0] != lt->num_warps) return false;
    *why = "an operand's registers do not run along K; wgmma reads f8 operands K-major only";
    if (!k_fastest(lt, a, 1) || !k_fastest(lt, b, 0)) return false;
    *why = NULL;
    return true;
}

int pl_dot_elem_bytes(const lay_table *lt, const ir_inst *d) {
    const char *why;
    return pl_f8_wgmma(lt, d, &why) ? 1 : pl_elem_bytes((blk_dtype)d->operands[0]->type.dtype);
}

int pl_tile_bytes(const lay_table *lt, const ir_inst *d, int rows, int cols) {
    return rows * cols * pl_dot_elem_bytes(lt, d);
}

const pl_entry *pl_get(const pl_table *t, const ir_value *v) {
    if (!t || !v || v->id < 0 || v->id >= t->num_values || t->e[v->id].kind == PL_NONE) return NULL;
    return &t->e[v->id];
}

typedef struct {
    blk_arena *a;
    ir_func *f;
    const vec_table *vt;
    pl_table *t;
    int *uses;
    int smem_budget;
    uint8_t *memo; /* chain check per value id: 0 unknown, 1 ok, 2 not */
    bool optimistic; /* no scratch reservation (pipeliner.h) */
    bool regs;       /* rings read into registers allowed */
} pl_ctx;

/* Is inst i inside region r (at any depth)? */
static bool inside(const ir_inst *i, const ir_region *r) {
    for (const ir_region *p = i ? i->parent : NULL; p; p = p->parent ? p->parent->parent : NULL)
        if (p == r) return true;
    return false;
}

static bool defined_outside(const ir_value *v, const ir_inst *loop) {
    const ir_region *body = loop->regions[0];
    if (v->def) return !inside(v->def, body);
    for (const ir_region *p = v->owner; p; p = p->parent ? p->parent->parent : NULL)
        if (p == body) return false;
    return true;
}

/* Can v be computed for another iteration by substituting the induction
 * variable: the iv, values from before the loop, and pure ops of the body's
 * top level over those (no loads, no loop-carried values)? */
static bool chain_ok(pl_ctx *P, const ir_value *v, const ir_inst *loop) {
    if (!v) return true;
    const ir_region *body = loop->regions[0];
    if (body->args.len && v == body->args.data[0]) return true;
    if (defined_outside(v, loop)) return true;
    if (!v->def || v->def->parent != body || !ir_op_has(v->def->op, OPF_PURE) || v->def->num_regions) return false;
    if (v->id >= 0 && v->id < P->t->num_values && P->memo[v->id]) return P->memo[v->id] == 1;
    bool ok = true;
    for (int k = 0; k < v->def->num_operands && ok; k++) ok = chain_ok(P, v->def->operands[k], loop);
    if (v->id >= 0 && v->id < P->t->num_values) P->memo[v->id] = ok ? 1 : 2;
    return ok;
}

static bool is_zero(const ir_value *v) {
    const ir_inst *d = v ? v->def : NULL;
    while (d && (d->op == IR_SPLAT || d->op == IR_BROADCAST) && d->num_operands == 1) d = d->operands[0]->def;
    return d && d->op == IR_CONST && d->ival == 0 && d->fval == 0.0;
}

static void set_why(pl_ctx *P, const ir_value *v, const char *why) {
    if (v->id >= 0 && v->id < P->t->num_values && !P->t->why[v->id]) P->t->why[v->id] = why;
}

/* the uses of v by instruction i and the instructions nested in it */
static int uses_of(const ir_inst *i, const ir_value *v) {
    int n = 0;
    for (int k = 0; k < i->num_operands; k++) n += i->operands[k] == v;
    for (int k = 0; k < i->num_regions; k++)
        for (const ir_inst *j = i->regions[k]->first; j; j = j->next) n += uses_of(j, v);
    return n;
}

/* A tensor_desc load feeding operand `role` (of the stored tile): a RING
 * when its descriptor (base, dims, strides) is fixed before the loop, its
 * offsets follow the induction variable, one dim has stride 1 (stored
 * contiguous) and its groups are 4, 8 or 16 bytes. Codegen fills the ring
 * with TMA where it can (cg_tma.c), else with cp.async. */
/* A ring's copies run ahead of the induction variable toward the bound
 * (codegen issues iteration i + P while i + P*step < end): the loop must
 * count up, by a constant. */
static bool counts_up(const ir_inst *loop) {
    const ir_inst *s = loop->operands[2]->def;
    return s && s->op == IR_CONST && !s->num_operands && s->ival > 0;
}

/* Is every use of the load src a dot of the loop's body reading it as its
 * b operand, directly or through a trans used once — or every use its a
 * operand, directly, in dots whose accumulators share one layout? Then one
 * ring serves them all: each reads the same stored tile, a transposed
 * reader with its other dim contiguous (codegen's resident_tile); b tiles
 * are never row-permuted, and an a tile's row order follows its dot's
 * accumulator layout (wgmma), the same for all. Attention's backward reads
 * q and dO as b twice (Sᵀ = K Qᵀ and dK = dSᵀ Q, dPᵀ = V dOᵀ and
 * dV = Pᵀ dO); qkv_proj reads x as a in the two halves of its head. */
static bool shared_operand_uses(pl_ctx *P, const ir_inst *loop, const ir_value *src, const lay_table *lt) {
    if (P->uses[src->id] == 1) return true;
    int nb = 0, na = 0;
    const lay_layout *acc = NULL;
    for (const ir_inst *i = loop->regions[0]->first; i; i = i->next) {
        if (i->op != IR_DOT) continue;
        const ir_value *b = i->operands[1];
        if (b == src) nb++;
        else if (b->def && b->def->op == IR_PERMUTE && b->def->operands[0] == src && b->def->parent == loop->regions[0] &&
                 P->uses[b->id] == 1)
            nb++;
        if (i->operands[0] == src) {
            const lay_layout *l = lay_get(lt, i->results[0]);
            if (!l || (acc && !lay_eq(acc, l))) return false;
            acc = l, na++;
        }
    }
    return (nb == P->uses[src->id] && !na) || (na == P->uses[src->id] && !nb);
}

static void consider_desc(pl_ctx *P, ir_inst *loop, int stages, ir_inst *d, const lay_table *lt, ir_value *v, ir_value *src,
                          int role) {
    ir_inst *ld = src->def;
    int rank = src->type.rank;
    blk_dtype t = (blk_dtype)src->type.dtype;
    const vec_access *acc = vec_get(P->vt, ld);
    if (stages < 2) { set_why(P, v, "num_stages is 1"); return; }
    if (!counts_up(loop)) { set_why(P, v, "the loop's step is not a positive constant"); return; }
    if (!shared_operand_uses(P, loop, src, lt)) { set_why(P, v, "the load has other uses"); return; }
    if (t != DT_F16 && t != DT_BF16 && t != DT_I8) { set_why(P, v, "f32 and f8 operands are converted in registers"); return; }
    if ((blk_dtype)ld->operands[0]->type.pointee != t) { set_why(P, v, "the descriptor's element type is converted"); return; }
    if (rank != 2 || ld->num_operands != 1 + 3 * rank) { set_why(P, v, "not a 2-d descriptor load"); return; }
    for (int k = 0; k <= 2 * rank; k++)
        if (!defined_outside(ld->operands[k], loop)) {
            set_why(P, v, "the descriptor is computed in the loop");
            return;
        }
    for (int k = 1 + 2 * rank; k < ld->num_operands; k++)
        if (!chain_ok(P, ld->operands[k], loop)) {
            set_why(P, v, "the offsets depend on a loop-carried value or a load");
            return;
        }
    if (!acc || !acc->lay || (acc->bytes != 4 && acc->bytes != 8 && acc->bytes != 16)) {
        set_why(P, v, "accesses narrower than 4 bytes (alignment or contiguity)");
        return;
    }
    lay_flat fl;
    lay_flatten(acc->lay, &fl);
    int kdim = role == 0 ? 1 : 0, fast = fl.reg_order[0];
    if (t == DT_I8 && fast != kdim) {
        set_why(P, v, "an i8 operand must be contiguous along K (ldmatrix .trans is 16-bit)");
        return;
    }
    /* a loop left early would leave copies in flight into memory reused after it */
    if (ir_region_has(loop->regions[0], IR_BREAK) || ir_region_has(loop->regions[0], IR_RETURN)) {
        set_why(P, v, "the loop has a break");
        return;
    }
    P->t->e[src->id] = (pl_entry){PL_RING, loop, stages, pl_tile_bytes(lt, d, src->type.shape[0], src->type.shape[1]), fast,
                                  role, false};
}

/* operand `role` of dot d in loop: RING or HOIST when it qualifies */
static void consider(pl_ctx *P, ir_inst *loop, int stages, ir_inst *d, int role, const lay_table *lt) {
    ir_value *v = d->operands[role];
    int kdim = role == 0 ? 1 : 0, K = d->operands[0]->type.shape[1];
    blk_dtype t = (blk_dtype)v->type.dtype;
    if (t == DT_F32 && d->precision == IR_PREC_IEEE) { set_why(P, v, "exact f32: no tensor cores"); return; }
    int kstep = t == DT_F32 ? 8 : t == DT_I8 ? 32 : 16;
    if (K % kstep) { set_why(P, v, "K is not a multiple of the mma k step"); return; }
    ir_value *src = v;
    bool trans = false;
    if (v->def && v->def->op == IR_PERMUTE && v->def->parent == loop->regions[0] && P->uses[v->id] == 1) {
        src = v->def->operands[0];
        trans = true;
    }
    if (src->def && src->def->op == IR_LOAD && src->def->parent == loop->regions[0]) {
        ir_inst *ld = src->def;
        const vec_access *acc = vec_get(P->vt, ld);
        if (stages < 2) { set_why(P, v, "num_stages is 1"); return; }
        if (!counts_up(loop)) { set_why(P, v, "the loop's step is not a positive constant"); return; }
        if (!shared_operand_uses(P, loop, src, lt)) { set_why(P, v, "the load has other uses"); return; }
        const char *f8why;
        bool raw = pl_f8_wgmma(lt, d, &f8why); /* f8 stays bytes: cp.async copies it as it is */
        if (t == DT_F32) { set_why(P, v, "f32 operands are rounded to tf32 in registers"); return; }
        if (t != DT_F16 && t != DT_BF16 && t != DT_I8 && !raw) {
            set_why(P, v, "f8 operands are converted to f16 in registers (the dot does not take wgmma)");
            return;
        }
        if (ld->num_operands > 2 && !is_zero(ld->operands[2])) { set_why(P, v, "`other` is not zero"); return; }
        if (ld->flags & IRF_VOLATILE) { set_why(P, v, "volatile load"); return; }
        if (!acc || !acc->lay || (acc->bytes != 4 && acc->bytes != 8 && acc->bytes != 16)) {
            set_why(P, v, "accesses narrower than 4 bytes (alignment or contiguity)");
            return;
        }
        if (!chain_ok(P, ld->operands[0], loop) || (ld->num_operands > 1 && !chain_ok(P, ld->operands[1], loop))) {
            set_why(P, v, "the address or mask depends on a loop-carried value or a load");
            return;
        }
        pl_entry *e = &P->t->e[src->id];
        lay_flat fl;
        lay_flatten(acc->lay, &fl);
        if ((t == DT_I8 || raw) && (trans ? 1 - fl.reg_order[0] : fl.reg_order[0]) != kdim) {
            set_why(P, v, "an i8 or f8 operand must be contiguous along K (ldmatrix .trans is 16-bit)");
            return;
        }
        *e = (pl_entry){PL_RING, loop, stages, pl_tile_bytes(lt, d, src->type.shape[0], src->type.shape[1]),
                        fl.reg_order[0], trans ? 1 - role : role, false};
        return;
    }
    if (src->def && src->def->op == IR_DESC_LOAD && src->def->parent == loop->regions[0]) {
        consider_desc(P, loop, stages, d, lt, v, src, trans ? 1 - role : role);
        return;
    }
    if (!defined_outside(v, loop)) { set_why(P, v, "computed in the loop"); return; }
    /* every use of v: this role of a dot directly in this loop's body */
    int here = 0;
    for (ir_inst *i = loop->regions[0]->first; i; i = i->next)
        if (i->op == IR_DOT && i->operands[role] == v && i->operands[1 - role] != v) here++;
    /* its registers are dead once it is stored: other readers may come
     * before the loop (the first block of a rotated loop), not in or after it */
    int after = 0;
    for (ir_inst *i = loop->next; i; i = i->next) after += uses_of(i, v);
    if (here != uses_of(loop, v) || after) { set_why(P, v, "used outside this loop's dots, in or after the loop"); return; }
    pl_entry *e = &P->t->e[v->id];
    if (e->kind == PL_HOIST) { /* two dots share it: one tile, so one element size (f8: pl_f8_wgmma) */
        if (e->bytes != pl_tile_bytes(lt, d, v->type.shape[0], v->type.shape[1])) {
            e->kind = PL_NONE;
            P->t->why[v->id] = "two dots store it differently (f8 as bytes and as f16)";
        }
        return;
    }
    *e = (pl_entry){PL_HOIST, loop, 1, pl_tile_bytes(lt, d, v->type.shape[0], v->type.shape[1]),
                    pl_stored_colv(lay_get(lt, v), t, kdim), role, false};
}

static int loop_bytes(pl_ctx *P, ir_inst *loop) {
    int total = 0;
    for (int i = 0; i < P->t->num_values; i++)
        if (P->t->e[i].kind != PL_NONE && P->t->e[i].loop == loop) total += P->t->e[i].stages * P->t->e[i].bytes;
    return total;
}

static bool is_entry(pl_ctx *P, const ir_value *v) {
    return v && v->id >= 0 && v->id < P->t->num_values && P->t->e[v->id].kind != PL_NONE;
}

/* Does a dot of the loop's body read v (directly or through a trans)? */
static bool read_by_loop_dot(const ir_inst *loop, const ir_value *v) {
    for (const ir_inst *i = loop->regions[0]->first; i; i = i->next) {
        if (i->op != IR_DOT) continue;
        for (int k = 0; k < 2; k++) {
            const ir_value *o = i->operands[k];
            if (o == v || (o->def && o->def->op == IR_PERMUTE && o->def->operands[0] == v)) return true;
        }
    }
    return false;
}

/* A load of the loop's body that no dot reads as it is: a ring read into
 * registers (pipeliner.h) when it qualifies as a dot operand's ring does.
 * Its tile is stored in the load's element size with its groups' dim
 * contiguous, rows of whole 16-byte chunks (the swizzle's unit). */
static const char *regs_why(pl_ctx *P, ir_inst *loop, int stages, ir_inst *ld, int *colv) {
    ir_value *v = ld->results[0];
    const vec_access *acc = vec_get(P->vt, ld);
    int eb = dtype_bytes((blk_dtype)v->type.dtype);
    if (v->type.rank != 2) return "not a 2-d load";
    if (stages < 2) return "num_stages is 1";
    if (!counts_up(loop)) return "the loop's step is not a positive constant";
    if (ld->flags & IRF_VOLATILE) return "volatile load";
    if (eb > 4) return "elements wider than 4 bytes";
    if (ld->num_operands > 2 && !is_zero(ld->operands[2])) return "`other` is not zero";
    if (!acc || !acc->lay || (acc->bytes != 4 && acc->bytes != 8 && acc->bytes != 16))
        return "accesses narrower than 4 bytes (alignment or contiguity)";
    if (!chain_ok(P, ld->operands[0], loop) || (ld->num_operands > 1 && !chain_ok(P, ld->operands[1], loop)))
        return "the address or mask depends on a loop-carried value or a load";
    if (ir_region_has(loop->regions[0], IR_BREAK) || ir_region_has(loop->regions[0], IR_RETURN)) return "the loop has a break";
    lay_flat fl;
    lay_flatten(acc->lay, &fl);
    *colv = fl.reg_order[0];
    if ((v->type.shape[*colv] * eb) % 16) return "its rows are not whole 16-byte chunks";
    if (!P->regs) return "its ring and the loop body's scratch would not fit in shared memory together";
    return NULL;
}

/* why[] of such a load says why not (codegen's -R: cg_pipe.c) */
static void consider_regs(pl_ctx *P, ir_inst *loop, int stages, ir_inst *ld) {
    ir_value *v = ld->results[0];
    if (ld->op != IR_LOAD || !v->type.rank || is_entry(P, v) || read_by_loop_dot(loop, v)) return;
    int colv = 0, eb = dtype_bytes((blk_dtype)v->type.dtype);
    const char *why = regs_why(P, loop, stages, ld, &colv);
    if (why) {
        set_why(P, v, why);
        return;
    }
    P->t->e[v->id] = (pl_entry){PL_RING, loop, stages, (int)(v->type.shape[0] * v->type.shape[1]) * eb, colv, -1, true};
}

static void mark_operands(ir_region *body, ir_inst *in, bool *mark, int n) {
    for (int k = 0; k < in->num_operands; k++) {
        ir_value *v = in->operands[k];
        if (!v->def || v->def->parent != body || v->id < 0 || v->id >= n || mark[v->id]) continue;
        mark[v->id] = true;
        mark_operands(body, v->def, mark, n);
    }
}

/* Can anything in the loop's body ask for scratch shared memory while the
 * rings are live? Not a body of ring loads (their address and mask
 * arithmetic runs again in the copies' layout: pipeliner.h), their trans,
 * dots whose operands are all resident, and scalar arithmetic: matmul's
 * main loop. */
static bool body_needs_scratch(pl_ctx *P, ir_region *r) {
    int n = P->t->num_values;
    bool *chain = ARENA_ARRAY(P->a, bool, n + 1);
    if (!chain) return true;
    for (ir_inst *in = r->first; in; in = in->next)
        if (in->op == IR_LOAD && is_entry(P, in->results[0])) mark_operands(r, in, chain, n);
    for (ir_inst *in = r->first; in; in = in->next) {
        if (in->num_regions) return true;
        if (!in->num_results || in->results[0]->type.rank == 0) continue;
        if (in->results[0]->id >= 0 && in->results[0]->id < n && chain[in->results[0]->id]) continue;
        if ((in->op == IR_LOAD || in->op == IR_DESC_LOAD) && is_entry(P, in->results[0])) continue;
        if (in->op == IR_PERMUTE && is_entry(P, in->operands[0])) continue;
        if (in->op == IR_DOT && (is_entry(P, in->operands[0]) || (in->operands[0]->def && in->operands[0]->def->op == IR_PERMUTE &&
                                                                  is_entry(P, in->operands[0]->def->operands[0]))) &&
            (is_entry(P, in->operands[1]) || (in->operands[1]->def && in->operands[1]->def->op == IR_PERMUTE &&
                                              is_entry(P, in->operands[1]->def->operands[0]))))
            continue;
        return true;
    }
    return false;
}

/* One stage fewer at a time (down to 2), then no rings, then nothing, until
 * the loop fits — with 48 KB left for the scratch users in the body, unless
 * the plan is optimistic (pipeliner.h): then the rings may take the whole
 * budget and the table says so where the reservation would have cut them. */
static void fit(pl_ctx *P, ir_inst *loop) {
    int room = P->smem_budget;
    if (body_needs_scratch(P, loop->regions[0])) {
        if (!P->optimistic) room -= PL_SCRATCH_RESERVE;
        else if (loop_bytes(P, loop) > room - PL_SCRATCH_RESERVE) P->t->optimistic = true;
    }
    /* rings read into registers go first: when the loop does not fit with
     * every ring at 2 stages, they are dropped and the dot operands' rings
     * keep their stages (attn_fwd_rope on sm_80: V's ring stays) */
    int at2 = 0;
    for (int i = 0; i < P->t->num_values; i++) {
        pl_entry *e = &P->t->e[i];
        if (e->kind != PL_NONE && e->loop == loop) at2 += (e->kind == PL_RING && e->stages > 2 ? 2 : e->stages) * e->bytes;
    }
    for (int i = 0; i < P->t->num_values && at2 > room; i++) {
        pl_entry *e = &P->t->e[i];
        if (e->kind == PL_RING && e->regs && e->loop == loop) e->kind = PL_NONE, P->t->why[i] = "the ring does not fit";
    }
    bool shrunk = true;
    while (loop_bytes(P, loop) > room && shrunk) {
        shrunk = false;
        for (int i = 0; i < P->t->num_values; i++) {
            pl_entry *e = &P->t->e[i];
            if (e->kind == PL_RING && e->loop == loop && e->stages > 2) e->stages--, shrunk = true;
        }
    }
    for (int pass = 0; pass < 2 && loop_bytes(P, loop) > room; pass++)
        for (int i = 0; i < P->t->num_values; i++) {
            pl_entry *e = &P->t->e[i];
            if (e->kind == PL_NONE || e->loop != loop) continue;
            if (pass == 0 && e->kind == PL_RING) e->kind = PL_NONE, P->t->why[i] = "the ring does not fit";
            else if (pass == 1) e->kind = PL_NONE, P->t->why[i] = "the tiles do not fit";
        }
}

static void visit(pl_ctx *P, ir_region *r, const lay_table *lt) {
    for (ir_inst *in = r->first; in; in = in->next) {
        for (int k = 0; k < in->num_regions; k++) visit(P, in->regions[k], lt);
        if (in->op != IR_FOR) continue;
        int stages = in->ival2 > 0 ? (int)in->ival2 : P->f->num_stages;
        bool dots = false;
        for (ir_inst *d = in->regions[0]->first; d; d = d->next)
            if (d->op == IR_DOT && d->operands[0]->type.rank == 2) {
                dots = true;
                for (int role = 0; role < 2; role++) consider(P, in, stages, d, role, lt);
            }
        for (ir_inst *ld = in->regions[0]->first; dots && ld; ld = ld->next)
            if (ld->op == IR_LOAD) consider_regs(P, in, stages, ld);
        fit(P, in);
    }
}

pl_table *pl_analyze(blk_arena *a, ir_func *f, const lay_table *lt, const vec_table *vt, int smem_budget, unsigned flags) {
    pl_table *t = ARENA_NEW(a, pl_table);
    if (!t) return NULL;
    int n = 0;
    int *uses = ir_count_uses(f, &n);
    t->num_values = n;
    t->e = ARENA_ARRAY(a, pl_entry, n + 1);
    t->why = ARENA_ARRAY(a, const char *, n + 1);
    pl_ctx P = {a, f, vt, t, uses, smem_budget, ARENA_ARRAY(a, uint8_t, n + 1), (flags & PL_OPTIMISTIC) != 0,
                (flags & PL_NO_REG_RINGS) == 0};
    if (!uses || !t->e || !t->why || !P.memo) return NULL;
    visit(&P, f->body, lt);
    for (int i = 0; i < n; i++) t->regs |= t->e[i].kind == PL_RING && t->e[i].regs;
    return t;
}

/* ---- dump ---- */

static void dump_region(blk_strbuf *out, const pl_table *t, ir_region *r) {
    for (ir_inst *in = r->first; in; in = in->next) {
        for (int k = 0; k < in->num_regions; k++) dump_region(out, t, in->regions[k]);
        if (in->op != IR_FOR) continue;
        for (ir_inst *ld = in->regions[0]->first; ld; ld = ld->next) {
            const pl_entry *e = ld->op == IR_LOAD ? pl_get(t, ld->results[0]) : NULL;
            if (e && e->regs)
                sb_printf(out, "// load %%%d: ring of %d x %d bytes, cp.async, read into registers (dim %d contiguous)\n",
                          ld->results[0]->id, e->stages, e->bytes, e->colv);
        }
        for (ir_inst *d = in->regions[0]->first; d; d = d->next) {
            if (d->op != IR_DOT) continue;
            for (int role = 0; role < 2; role++) {
                ir_value *v = d->operands[role], *src = v;
                if (v->def && v->def->op == IR_PERMUTE) src = v->def->operands[0];
                const pl_entry *e = pl_get(t, src);
                if (!e) e = pl_get(t, v), src = v;
                sb_printf(out, "// dot %%%d operand %c %%%d: ", d->results[0]->id, role ? 'b' : 'a', v->id);
                if (e && e->kind == PL_RING && src->def && src->def->op == IR_DESC_LOAD)
                    sb_printf(out, "ring of %d x %d bytes, TMA or cp.async from descriptor load %%%d (dim %d contiguous)\n",
                              e->stages, e->bytes, src->id, e->colv);
                else if (e && e->kind == PL_RING)
                    sb_printf(out, "ring of %d x %d bytes, cp.async from load %%%d (dim %d contiguous)\n", e->stages,
                              e->bytes, src->id, e->colv);
                else if (e && e->kind == PL_HOIST)
                    sb_printf(out, "staged once before the loop, %d bytes (dim %d contiguous)\n", e->bytes, e->colv);
                else
                    sb_printf(out, "staged per iteration (%s)\n",
                              v->id >= 0 && v->id < t->num_values && t->why[v->id] ? t->why[v->id] : "not a load");
            }
        }
    }
}

void pl_dump_module(blk_strbuf *out, ir_module *m) {
    ir_print_module(out, m);
    for (ir_func *f = m->first; f; f = f->next) {
        if (!f->is_kernel) continue;
        kernel_plan p;
        if (!passes_plan_kernel(m->arena, f, passes_d16_spec(m->arena, f), tgt_default(), PL_OPTIMISTIC, &p) || !p.pl) continue;
        sb_printf(out, "// pipeliner @%s (pointer and integer arguments divisible by 16; %d KB of shared memory, %s)\n",
                  f->name, tgt_default()->smem_optin_max / 1024, tgt_default()->arch);
        dump_region(out, p.pl, f->body);
    }
}

void pass_pipeliner(ir_module *m) { (void)m; }

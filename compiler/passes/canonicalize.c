/* canonicalize.c — constant folding, exact algebraic identities, CSE, DCE
 * and structural simplification, repeated until nothing changes.
 *
 * Needs: verified IR (calls may remain; they are left alone).
 * Guarantees: verified IR that computes exactly what its input computed,
 * bit for bit (folding uses eval.h, the interpreter's own semantics; no
 * identity changes a NaN, an infinity or the sign of a zero), and in which
 *  - no elementwise op or cast has only constant operands where eval.h
 *    defines it, and no splat/broadcast/expand_dims/reshape/permute or hint
 *    has a constant operand (constants are splats: one value, any shape);
 *  - the identities below have been applied;
 *  - no two pure insts compute the same thing where the first dominates the
 *    second (scoped: an inst in a nested region may reuse a value from an
 *    enclosing one, never the reverse; combine regions of reduce_fn/scan_fn
 *    see nothing from outside);
 *  - no pure or reading inst (or side-effect-free if/for) has unused results;
 *    stores, atomics, prints, calls, volatile loads and whiles always stay;
 *  - no if has a constant condition whose taken region ends in a yield;
 *  - no for has a constant trip count of zero (step > 0, lb >= ub);
 *  - no for carries a value whose result is unused and whose body arg is used
 *    only to be passed on to the next iteration / the loop's results.
 *
 * Identities (x any value, c a constant, all exact):
 *   x + 0 (ints), x + -0.0 (floats), x - 0 (ints), x - +0.0 (floats), x * 1,
 *   x / 1, x << 0, x >> 0, x | 0, x ^ 0, x & ~0, x & x, x | x, min(x, x),
 *   max(x, x), ptradd(x, 0)  -> x;    int x * 0, int x % 1, x & 0, int x - x,
 *   x ^ x -> 0;   x | ~0 -> ~0;   int/bool/ptr cmp(x, x) -> true/false;
 *   select(c, a, b) -> a or b;  select(p, a, a) -> a;  not(not x), neg(neg x),
 *   bitnot(bitnot x) -> x;  cast, broadcast or reshape to x's own type and an
 *   identity permute -> x.   (x + 0.0 is NOT x for floats: -0.0 + 0.0 = +0.0.)
 * Commutative ops get a constant operand on the right.
 *
 * One round: a forward walk (operands renamed through a replacement map,
 * then fold / simplify / CSE each inst, constant ifs and empty fors
 * removed), then a backward DCE walk with use counts (dead loop-carried
 * values dropped first). Rounds repeat until one changes nothing.
 */
#include <math.h>
#include <string.h>

#include "../ir/clone.h"
#include "../ir/eval.h"
#include "passes.h"

/* ---- scoped CSE table: chained hash buckets over a stack of entries ----
 * Entries are pushed as insts are seen and popped when their region ends;
 * with head insertion, the newest entry is always its bucket's head, so a
 * pop only resets that head. Entries below `floor` are invisible (a combine
 * region must not use values from outside). */
typedef struct {
    ir_inst *inst;
    uint64_t hash;
    int next;
} cse_entry;

typedef struct {
    ir_func *func;
    blk_arena *arena;
    ir_value_map *repl; /* value -> the value that replaces it */
    int *heads;         /* bucket -> entry index, -1 if empty; NULL: no CSE */
    uint64_t mask;
    VEC(cse_entry) entries;
    int floor;
    bool changed;
} canon;

static uint64_t mix(uint64_t h, uint64_t x) { return hash_bytes(&x, sizeof x, h); }

static uint64_t type_hash(uint64_t h, ir_type t) {
    h = mix(h, (uint64_t)t.dtype | (uint64_t)t.pointee << 8 | (uint64_t)t.rank << 16 | (uint64_t)t.ptr_const << 24);
    for (int d = 0; d < t.rank; d++) h = mix(h, (uint64_t)(uint32_t)t.shape[d]);
    return h;
}

static uint64_t inst_hash(const ir_inst *i) {
    uint64_t h = mix(0, (uint64_t)i->op);
    if (ir_op_has(i->op, OPF_COMM) && i->num_operands == 2) /* order-independent */
        h = mix(h, (uint64_t)(uintptr_t)i->operands[0] + (uint64_t)(uintptr_t)i->operands[1]);
    else
        for (int k = 0; k < i->num_operands; k++) h = mix(h, (uint64_t)(uintptr_t)i->operands[k]);
    for (int k = 0; k < i->num_results; k++) h = type_hash(h, i->results[k]->type);
    uint64_t fbits;
    memcpy(&fbits, &i->fval, sizeof fbits);
    h = mix(h, (uint64_t)i->ival ^ (uint64_t)i->ival2 * 31 ^ fbits * 17);
    h = mix(h, (uint64_t)(uint32_t)i->axis | (uint64_t)(uint32_t)i->kind << 32);
    return h;
}

static bool same_inst(const ir_inst *a, const ir_inst *b) {
    if (a->op != b->op || a->num_operands != b->num_operands || a->num_results != b->num_results) return false;
    bool same_ops = true;
    for (int k = 0; k < a->num_operands && same_ops; k++) same_ops = a->operands[k] == b->operands[k];
    if (!same_ops && !(ir_op_has(a->op, OPF_COMM) && a->num_operands == 2 && a->operands[0] == b->operands[1] &&
                       a->operands[1] == b->operands[0]))
        return false;
    for (int k = 0; k < a->num_results; k++)
        if (!ir_type_eq(a->results[k]->type, b->results[k]->type)) return false;
    if (a->axis != b->axis || a->kind != b->kind || a->ival != b->ival || a->ival2 != b->ival2 ||
        memcmp(&a->fval, &b->fval, sizeof a->fval) != 0 || memcmp(a->perm, b->perm, sizeof a->perm) != 0 ||
        a->flags != b->flags || a->cache != b->cache || a->eviction != b->eviction || a->sem != b->sem ||
        a->precision != b->precision || a->callee != b->callee)
        return false;
    if (a->str != b->str && (!a->str || !b->str || strcmp(a->str, b->str) != 0)) return false;
    return true;
}

static bool cse_candidate(const ir_inst *i) {
    return ir_op_has(i->op, OPF_PURE) && i->num_regions == 0 && i->num_results > 0;
}

/* The earlier equivalent of i in scope, or NULL after recording i. */
static ir_inst *cse_find_or_add(canon *C, ir_inst *i) {
    if (!C->heads || !cse_candidate(i)) return NULL;
    uint64_t h = inst_hash(i);
    int *head = &C->heads[h & C->mask];
    for (int e = *head; e >= 0; e = C->entries.data[e].next)
        if (e >= C->floor && C->entries.data[e].hash == h && same_inst(C->entries.data[e].inst, i))
            return C->entries.data[e].inst;
    cse_entry ent = {i, h, *head};
    int before = C->entries.len;
    VEC_PUSH(C->arena, C->entries, ent);
    if (C->entries.len > before) *head = before;
    return NULL;
}

static void cse_pop(canon *C, int mark) {
    while (C->entries.len > mark) {
        cse_entry *e = &C->entries.data[--C->entries.len];
        C->heads[e->hash & C->mask] = e->next;
    }
}

/* ---- constants ---- */

static bool const_of(const ir_value *v, ir_scalar_val *out) {
    if (!v || !v->def || v->def->op != IR_CONST || v->type.dtype == DT_PTR) return false;
    ir_scalar_val raw;
    if (dtype_is_float(v->type.dtype)) raw.f = v->def->fval;
    else raw.i = v->def->ival;
    *out = eval_normalize(v->type.dtype, raw);
    return true;
}

/* A constant of type t holding x, in front of `at` (or its equivalent in
 * scope). */
static ir_value *make_const(canon *C, ir_inst *at, ir_type t, ir_scalar_val x) {
    ir_builder b = {C->func, at->parent, at, at->loc};
    ir_value *v = dtype_is_float(t.dtype) ? ir_b_const_float(&b, t, x.f) : ir_b_const_int(&b, t, x.i);
    if (!v) return NULL;
    ir_inst *old = cse_find_or_add(C, v->def);
    if (!old) return v;
    ir_unlink(v->def);
    return old->results[0];
}

static ir_value *make_int_const(canon *C, ir_inst *at, ir_type t, int64_t n) {
    ir_scalar_val x;
    x.i = n;
    return make_const(C, at, t, eval_normalize(t.dtype, x));
}

static bool is_zero(ir_scalar_val v, blk_dtype t) { return dtype_is_float(t) ? v.f == 0 : v.i == 0; }
static bool is_pos_zero(ir_scalar_val v, blk_dtype t) { return dtype_is_float(t) && v.f == 0 && !signbit(v.f); }
static bool is_neg_zero(ir_scalar_val v, blk_dtype t) { return dtype_is_float(t) && v.f == 0 && signbit(v.f); }
static bool is_one(ir_scalar_val v, blk_dtype t) { return dtype_is_float(t) ? v.f == 1 : v.i == 1; }
static bool is_all_ones(ir_scalar_val v, blk_dtype t) {
    ir_scalar_val m;
    m.i = t == DT_BOOL ? 1 : -1;
    return !dtype_is_float(t) && v.i == eval_normalize(t, m).i;
}

/* ---- folding and identities ---- */

/* All operands constant: evaluate with eval.h where it defines the op. */
static ir_value *fold_elementwise(canon *C, ir_inst *i) {
    ir_scalar_val x[3];
    for (int k = 0; k < i->num_operands; k++)
        if (k >= 3 || !const_of(i->operands[k], &x[k])) return NULL;
    ir_type rt = i->results[0]->type;
    blk_dtype t = (blk_dtype)i->operands[0]->type.dtype;
    ir_op op = i->op;
    ir_scalar_val r;
    if (op == IR_PTRADD || op == IR_SELECT || rt.dtype == DT_PTR || !eval_supports(op, t)) return NULL;
    if (op == IR_CAST) {
        if (!eval_supports(op, (blk_dtype)rt.dtype)) return NULL;
        r = eval_cast(t, (blk_dtype)rt.dtype, x[0]);
    } else if (op == IR_FMA) {
        r = eval_fma(t, x[0], x[1], x[2]);
    } else if (i->num_operands == 1) {
        r = eval_unary(op, t, x[0]);
    } else {
        r = eval_binary(op, i->kind, t, x[0], x[1]);
    }
    return make_const(C, i, rt, r);
}

static bool same_elem_dtype(const ir_value *a, const ir_value *b) {
    return ir_type_eq(ir_elem(a->type), ir_elem(b->type));
}

static ir_value *same_type_or_null(ir_value *v, ir_type t) { return v && ir_type_eq(v->type, t) ? v : NULL; }

static bool is_op(const ir_value *v, ir_op op) { return v && v->def && v->def->op == op && v->def->num_operands == 1; }

static ir_value *simplify_binary(canon *C, ir_inst *i) {
    ir_value *x = i->operands[0], *y = i->operands[1];
    ir_type rt = i->results[0]->type;
    blk_dtype t = (blk_dtype)x->type.dtype;
    bool fl = dtype_is_float(t), integral = dtype_is_int(t) || t == DT_BOOL;
    ir_scalar_val c;
    bool cy = const_of(y, &c); /* commutative ops have their constant on the right */
    switch (i->op) {
    case IR_ADD:
        if (cy && (fl ? is_neg_zero(c, t) : is_zero(c, t))) return x;
        break;
    case IR_SUB:
        if (cy && (fl ? is_pos_zero(c, t) : is_zero(c, t))) return x;
        if (x == y && integral) return make_int_const(C, i, rt, 0);
        break;
    case IR_MUL:
        if (cy && is_one(c, t)) return x;
        if (cy && integral && is_zero(c, t)) return make_int_const(C, i, rt, 0);
        break;
    case IR_DIV:
        if (cy && is_one(c, t)) return x;
        break;
    case IR_REM:
        if (cy && integral && is_one(c, t)) return make_int_const(C, i, rt, 0);
        break;
    case IR_AND:
        if (x == y) return x;
        if (cy && is_zero(c, t)) return make_int_const(C, i, rt, 0);
        if (cy && is_all_ones(c, t)) return x;
        break;
    case IR_OR:
        if (x == y) return x;
        if (cy && is_zero(c, t)) return x;
        if (cy && is_all_ones(c, t)) return y;
        break;
    case IR_XOR:
        if (x == y) return make_int_const(C, i, rt, 0);
        if (cy && is_zero(c, t)) return x;
        break;
    case IR_SHL:
    case IR_SHR:
        if (cy && is_zero(c, t)) return x;
        break;
    case IR_MINIMUM:
    case IR_MAXIMUM:
        if (x == y) return x;
        break;
    case IR_CMP:
        if (x == y && (integral || t == DT_PTR)) {
            bool r = i->kind == IR_CMP_EQ || i->kind == IR_CMP_LE || i->kind == IR_CMP_GE;
            return make_int_const(C, i, rt, r);
        }
        break;
    case IR_PTRADD: {
        ir_scalar_val off;
        if (const_of(y, &off) && off.i == 0) return x;
        break;
    }
    default:
        break;
    }
    return NULL;
}

/* The value that replaces i's single result, or NULL. Only pure insts. */
static ir_value *simplify(canon *C, ir_inst *i) {
    if (!ir_op_has(i->op, OPF_PURE) || i->num_results != 1 || i->num_regions) return NULL;
    ir_value *res = i->results[0];
    ir_type rt = res->type;
    ir_scalar_val c;
    switch (i->op) {
    case IR_SPLAT:
    case IR_BROADCAST:
    case IR_EXPAND_DIMS:
    case IR_RESHAPE:
    case IR_PERMUTE:
    case IR_MULTIPLE_OF:
    case IR_MAX_CONTIGUOUS: {
        ir_value *x = i->operands[0];
        if (const_of(x, &c) && same_elem_dtype(x, res)) return make_const(C, i, rt, c);
        if (i->op == IR_BROADCAST || i->op == IR_RESHAPE) return same_type_or_null(x, rt);
        if (i->op == IR_PERMUTE) {
            for (int d = 0; d < rt.rank; d++)
                if (i->perm[d] != d) return NULL;
            return same_type_or_null(x, rt);
        }
        return NULL;
    }
    default:
        break;
    }
    if (!ir_op_has(i->op, OPF_ELEM)) return NULL;
    ir_value *folded = fold_elementwise(C, i);
    if (folded) return folded;
    switch (i->op) {
    case IR_NEG:
    case IR_NOT:
    case IR_BITNOT:
        if (is_op(i->operands[0], i->op)) return same_type_or_null(i->operands[0]->def->operands[0], rt);
        return NULL;
    case IR_CAST:
        return same_type_or_null(i->operands[0], rt);
    case IR_SELECT:
        if (const_of(i->operands[0], &c)) return same_type_or_null(i->operands[c.i ? 1 : 2], rt);
        if (i->operands[1] == i->operands[2]) return same_type_or_null(i->operands[1], rt);
        return NULL;
    default:
        break;
    }
    if (i->num_operands == 2 && i->op != IR_CMP && i->op != IR_PTRADD && !ir_type_eq(i->operands[0]->type, rt))
        return NULL; /* malformed; leave it to the verifier */
    if (i->num_operands == 2) return simplify_binary(C, i);
    return NULL;
}

/* ---- structure: constant ifs, empty fors ---- */

/* if with a constant condition whose taken region ends in a yield: the
 * region's insts move in front of the if and the yielded values replace its
 * results; *resume is the first moved inst, where the walk goes on. A region
 * ending in break/continue/return stays as it is. */
static bool fold_if(canon *C, ir_inst *i, ir_inst **resume) {
    ir_scalar_val c;
    if (i->num_regions != 2 || !const_of(i->operands[0], &c)) return false;
    ir_region *taken = i->regions[c.i ? 0 : 1];
    ir_inst *term = taken->last;
    if (!term || term->op != IR_YIELD || term->num_operands != i->num_results) return false;
    for (int k = 0; k < i->num_results; k++) ir_value_map_set(C->repl, i->results[k], term->operands[k]);
    ir_inst *first = taken->first == term ? NULL : taken->first;
    while (taken->first != term) {
        ir_inst *m = taken->first;
        ir_unlink(m);
        ir_insert_before(i, m);
    }
    *resume = first ? first : i->next;
    ir_unlink(i);
    return true;
}

/* for lb to ub step s with constant bounds, s > 0 and lb >= ub runs zero
 * times: its results are its initial values. */
static bool remove_empty_for(canon *C, ir_inst *i) {
    ir_scalar_val lb, ub, step;
    if (i->num_operands < 3 || i->num_results != i->num_operands - 3) return false;
    if (!const_of(i->operands[0], &lb) || !const_of(i->operands[1], &ub) || !const_of(i->operands[2], &step))
        return false;
    blk_dtype t = (blk_dtype)i->operands[0]->type.dtype;
    bool empty = dtype_is_unsigned(t) ? step.u > 0 && lb.u >= ub.u : step.i > 0 && lb.i >= ub.i;
    if (!empty) return false;
    for (int k = 0; k < i->num_results; k++) ir_value_map_set(C->repl, i->results[k], i->operands[3 + k]);
    ir_unlink(i);
    return true;
}

/* ---- the forward walk ---- */

static void walk_region(canon *C, ir_region *r) {
    int mark = C->entries.len;
    ir_inst *i = r->first;
    while (i) {
        ir_inst *next = i->next;
        for (int k = 0; k < i->num_operands; k++) {
            ir_value *v = ir_value_map_resolve(C->repl, i->operands[k]);
            if (v != i->operands[k]) i->operands[k] = v;
        }
        ir_scalar_val c;
        if (ir_op_has(i->op, OPF_COMM) && i->num_operands == 2 && const_of(i->operands[0], &c) &&
            !const_of(i->operands[1], &c)) {
            ir_value *t = i->operands[0];
            i->operands[0] = i->operands[1];
            i->operands[1] = t;
            C->changed = true;
        }
        if (i->op == IR_IF && fold_if(C, i, &next)) {
            C->changed = true;
            i = next;
            continue;
        }
        if (i->op == IR_FOR && remove_empty_for(C, i)) {
            C->changed = true;
            i = next;
            continue;
        }
        if (i->num_regions > 0) {
            bool isolated = i->op == IR_REDUCE_REGION || i->op == IR_SCAN_REGION;
            int floor = C->floor;
            if (isolated) C->floor = C->entries.len;
            for (int k = 0; k < i->num_regions; k++) walk_region(C, i->regions[k]);
            C->floor = floor;
            i = next;
            continue;
        }
        ir_value *v = simplify(C, i);
        if (v && v != i->results[0]) {
            ir_value_map_set(C->repl, i->results[0], v);
            ir_unlink(i);
            C->changed = true;
        } else if (!v) {
            ir_inst *old = cse_find_or_add(C, i);
            if (old) {
                for (int k = 0; k < i->num_results; k++) ir_value_map_set(C->repl, i->results[k], old->results[k]);
                ir_unlink(i);
                C->changed = true;
            }
        }
        i = next;
    }
    if (C->heads) cse_pop(C, mark);
}

/* ---- DCE with use counts ---- */

typedef struct {
    int *uses; /* by value id (ir_count_uses) */
    int n;
} use_counts;

static int uses_of(const use_counts *u, const ir_value *v) {
    return v && v->id >= 0 && v->id < u->n ? u->uses[v->id] : 1; /* unknown: assume used */
}

static void drop_use(use_counts *u, const ir_value *v) {
    if (v && v->id >= 0 && v->id < u->n && u->uses[v->id] > 0) u->uses[v->id]--;
}

static void drop_uses(use_counts *u, const ir_inst *i) {
    for (int k = 0; k < i->num_operands; k++) drop_use(u, i->operands[k]);
    for (int k = 0; k < i->num_regions; k++)
        for (ir_inst *j = i->regions[k]->first; j; j = j->next) drop_uses(u, j);
}

/* Could removing the regions of i change anything besides i's results?
 * loop_depth counts loops entered inside the candidate (a break or continue
 * there stays inside). */
static bool region_has_effects(const ir_region *r, int loop_depth) {
    for (const ir_inst *j = r->first; j; j = j->next) {
        if (ir_op_has(j->op, OPF_SIDE) || j->op == IR_WHILE || j->op == IR_RETURN) return true;
        if (j->op == IR_LOAD && (j->flags & IRF_VOLATILE)) return true;
        if ((j->op == IR_BREAK || j->op == IR_CONTINUE) && loop_depth == 0) return true;
        for (int k = 0; k < j->num_regions; k++)
            if (region_has_effects(j->regions[k], loop_depth + (j->op == IR_FOR))) return true;
    }
    return false;
}

static bool removable(const use_counts *u, const ir_inst *i) {
    if (ir_op_has(i->op, OPF_TERM) || ir_op_has(i->op, OPF_SIDE) || i->op == IR_WHILE) return false;
    if (i->op == IR_LOAD && (i->flags & IRF_VOLATILE)) return false;
    for (int k = 0; k < i->num_results; k++)
        if (uses_of(u, i->results[k]) > 0) return false;
    for (int k = 0; k < i->num_regions; k++)
        if (region_has_effects(i->regions[k], i->op == IR_FOR)) return false;
    return ir_op_has(i->op, OPF_PURE) || ir_op_has(i->op, OPF_READ) || i->num_regions > 0;
}

/* The terminators that pass values to the next iteration or out of `loop`:
 * its body's final yield/continue/break and every break/continue ending a
 * region of an if nested (through ifs only) in the body. */
typedef VEC(ir_inst *) inst_vec;

static void collect_loop_exits(blk_arena *a, ir_region *r, bool top, inst_vec *exits) {
    ir_inst *t = r->last;
    if (t && (t->op == IR_BREAK || t->op == IR_CONTINUE || (top && t->op == IR_YIELD))) VEC_PUSH(a, *exits, t);
    for (ir_inst *j = r->first; j; j = j->next)
        if (j->op == IR_IF)
            for (int k = 0; k < j->num_regions; k++) collect_loop_exits(a, j->regions[k], false, exits);
}

static void remove_operand(ir_inst *i, int k) {
    for (int j = k; j + 1 < i->num_operands; j++) i->operands[j] = i->operands[j + 1];
    i->num_operands--;
}

/* Drop carried value k of a for when its result is unused and its body arg
 * is only passed on (as value k of the loop's exits). */
static void remove_dead_carried(canon *C, use_counts *u, ir_inst *loop) {
    if (loop->num_regions != 1 || loop->num_operands < 3) return;
    ir_region *body = loop->regions[0];
    int ncarried = loop->num_operands - 3;
    if (ncarried == 0 || loop->num_results != ncarried || body->args.len != ncarried + 1) return;
    inst_vec exits = {0};
    collect_loop_exits(C->arena, body, true, &exits);
    for (int j = 0; j < exits.len; j++)
        if (exits.data[j]->num_operands != ncarried) return;
    for (int k = ncarried - 1; k >= 0; k--) {
        ir_value *res = loop->results[k], *arg = body->args.data[k + 1];
        if (uses_of(u, res) != 0) continue;
        int passed_on = 0;
        for (int j = 0; j < exits.len; j++) passed_on += exits.data[j]->operands[k] == arg;
        if (uses_of(u, arg) != passed_on) continue;
        for (int j = 0; j < exits.len; j++) {
            drop_use(u, exits.data[j]->operands[k]);
            remove_operand(exits.data[j], k);
        }
        drop_use(u, loop->operands[3 + k]);
        remove_operand(loop, 3 + k);
        for (int j = k; j + 1 < loop->num_results; j++) {
            loop->results[j] = loop->results[j + 1];
            loop->results[j]->index = j;
        }
        loop->num_results--;
        for (int j = k + 1; j + 1 < body->args.len; j++) {
            body->args.data[j] = body->args.data[j + 1];
            body->args.data[j]->index = j;
        }
        body->args.len--;
        C->changed = true;
    }
}

static void dce_region(canon *C, use_counts *u, ir_region *r) {
    ir_inst *prev;
    for (ir_inst *i = r->last; i; i = prev) {
        prev = i->prev;
        if (i->op == IR_FOR) remove_dead_carried(C, u, i);
        for (int k = 0; k < i->num_regions; k++) dce_region(C, u, i->regions[k]);
        if (removable(u, i)) {
            drop_uses(u, i);
            ir_unlink(i);
            C->changed = true;
        }
    }
}

/* ---- the pass ---- */

static int count_insts(const ir_region *r) {
    int n = 0;
    for (const ir_inst *i = r->first; i; i = i->next) {
        n++;
        for (int k = 0; k < i->num_regions; k++) n += count_insts(i->regions[k]);
    }
    return n;
}

/* Each round strictly shrinks the IR or moves a constant right, so this
 * bound is never reached on sane input; it only caps the work. */
enum { MAX_ROUNDS = 64 };

static void canonicalize_func(ir_func *f) {
    blk_arena *a = f->module->arena;
    for (int round = 0; round < MAX_ROUNDS; round++) {
        canon C;
        memset(&C, 0, sizeof C);
        C.func = f;
        C.arena = a;
        C.repl = ir_value_map_new(a);
        if (!C.repl) return;
        uint64_t nbuckets = 64, want = 2 * (uint64_t)count_insts(f->body);
        while (nbuckets < want && nbuckets < (1u << 26)) nbuckets *= 2;
        C.heads = ARENA_ARRAY(a, int, nbuckets);
        C.mask = nbuckets - 1;
        if (C.heads) memset(C.heads, 0xff, sizeof(int) * nbuckets); /* all -1 */
        walk_region(&C, f->body);
        use_counts u;
        u.uses = ir_count_uses(f, &u.n);
        if (!u.uses) return;
        dce_region(&C, &u, f->body);
        if (!C.changed || arena_failed(a)) return;
    }
}

void pass_canonicalize(ir_module *m) {
    for (ir_func *f = m->first; f; f = f->next) canonicalize_func(f);
}

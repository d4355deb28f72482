/* interp_check.c — the shape facts the interpreter relies on, checked once
 * before a run so that malformed IR (which the verifier should have caught)
 * gives an error instead of a read outside a value's slot.
 *
 * Checked: operands and results exist and belong to this function's
 * numbering; elementwise and memory ops' operands have the result's (or the
 * pointer's) number of elements or are scalars; shape ops, reductions and
 * loops agree on sizes. Ops whose executor checks its own shapes (desc
 * ops, dot, topk, reshape) are left to it.
 */
#include "interp_impl.h"

typedef struct {
    blk_diag *diag;
    int num_values;
    bool ok;
} checker;

static void bad(checker *c, const ir_inst *in, const char *what) {
    if (!c->ok) return; /* one report is enough */
    diag_error(c->diag, in->loc, "interpreter: malformed IR at '%s': %s", ir_op_table[in->op].name, what);
    c->ok = false;
}

static bool value_ok(const checker *c, const ir_value *v) { return v && v->id >= 0 && v->id < c->num_values; }

static int64_t numel(const ir_value *v) { return ir_numel(v->type); }

/* operand k has n elements or is a scalar */
static bool fits(const ir_inst *in, int k, int64_t n) {
    return k >= in->num_operands || numel(in->operands[k]) == n || numel(in->operands[k]) == 1;
}

static void check_broadcast(checker *c, const ir_inst *in) {
    ir_type x = in->operands[0]->type, r = in->results[0]->type;
    int lead = r.rank - x.rank;
    if (lead < 0) { bad(c, in, "operand has a higher rank than the result"); return; }
    for (int d = 0; d < x.rank; d++)
        if (x.shape[d] != 1 && x.shape[d] != r.shape[d + lead]) bad(c, in, "dimension neither 1 nor the result's");
}

static void check_permute(checker *c, const ir_inst *in) {
    ir_type x = in->operands[0]->type, r = in->results[0]->type;
    bool seen[IR_MAX_RANK] = {false};
    if (x.rank != r.rank) { bad(c, in, "rank changes"); return; }
    for (int d = 0; d < r.rank; d++) {
        int p = in->perm[d];
        if (p < 0 || p >= x.rank || seen[p] || x.shape[p] != r.shape[d]) { bad(c, in, "not a permutation of the operand's shape"); return; }
        seen[p] = true;
    }
}

static void check_cat(checker *c, const ir_inst *in) {
    ir_type a = in->operands[0]->type, b = in->operands[1]->type;
    int64_t oa, na, ia, ob, nb, ib;
    if (in->axis < 0 || in->axis >= a.rank || a.rank != b.rank) { bad(c, in, "bad axis or ranks"); return; }
    interp_axis_split(a, in->axis, &oa, &na, &ia);
    interp_axis_split(b, in->axis, &ob, &nb, &ib);
    if (oa != ob || ia != ib || numel(in->results[0]) != oa * (na + nb) * ia) bad(c, in, "operand shapes do not concatenate");
}

static void check_axis_op(checker *c, const ir_inst *in) {
    ir_type x = in->operands[0]->type;
    if (in->axis < 0 || in->axis >= x.rank) { bad(c, in, "axis out of range"); return; }
    int64_t outer, n, inner;
    interp_axis_split(x, in->axis, &outer, &n, &inner);
    bool reduces = in->op == IR_REDUCE || in->op == IR_ARGREDUCE || in->op == IR_REDUCE_REGION;
    int64_t want = reduces ? outer * inner : in->op == IR_TOPK ? outer * in->ival * inner : numel(in->operands[0]);
    for (int k = 0; k < in->num_results; k++)
        if (numel(in->results[k]) != want) bad(c, in, "result size does not match the operand and axis");
    if (in->op == IR_REDUCE_REGION || in->op == IR_SCAN_REGION) {
        if (in->num_regions < 1 || in->regions[0]->args.len != 2 ||
            ir_is_block(in->regions[0]->args.data[0]->type) || ir_is_block(in->regions[0]->args.data[1]->type))
            bad(c, in, "combine region must take two scalars");
    }
}

static void check_inst(checker *c, const ir_inst *in) {
    const ir_op_info *info = &ir_op_table[in->op];
    if ((info->num_operands >= 0 && in->num_operands != info->num_operands) ||
        (info->num_results >= 0 && in->num_results != info->num_results)) {
        bad(c, in, "wrong number of operands or results");
        return;
    }
    for (int k = 0; k < in->num_operands; k++)
        if (!value_ok(c, in->operands[k])) { bad(c, in, "operand missing or defined outside the function"); return; }
    for (int k = 0; k < in->num_results; k++)
        if (!value_ok(c, in->results[k])) { bad(c, in, "result missing"); return; }
    for (int k = 0; k < in->num_regions; k++)
        if (!in->regions[k]) { bad(c, in, "region missing"); return; }

    if (info->flags & OPF_ELEM || in->op == IR_RAND || in->op == IR_RANDN || in->op == IR_RANDINT) {
        for (int k = 0; k < in->num_operands; k++)
            if (!fits(in, k, numel(in->results[0]))) bad(c, in, "operand size differs from the result's");
        return;
    }
    switch (in->op) {
    case IR_LOAD: case IR_STORE: case IR_ATOMIC_RMW: case IR_ATOMIC_CAS: {
        int lo = in->op == IR_LOAD ? 1 : in->op == IR_ATOMIC_CAS ? 3 : 2;
        if (in->num_operands < lo || in->num_operands > lo + (in->op == IR_LOAD ? 2 : 1)) {
            bad(c, in, "wrong number of operands");
            return;
        }
        if (in->operands[0]->type.dtype != DT_PTR) { bad(c, in, "first operand is not a pointer"); return; }
        int64_t n = numel(in->operands[0]);
        for (int k = 1; k < in->num_operands; k++)
            if (!fits(in, k, n)) bad(c, in, "operand size differs from the pointer's");
        if (in->num_results == 1 && numel(in->results[0]) != n) bad(c, in, "result size differs from the pointer's");
        return;
    }
    case IR_DESC_LOAD: case IR_DESC_STORE:
        if (in->operands[0]->type.dtype != DT_PTR) bad(c, in, "base is not a pointer");
        return;
    case IR_SPLAT: case IR_BROADCAST: check_broadcast(c, in); return;
    case IR_PERMUTE: check_permute(c, in); return;
    case IR_JOIN:
        if (numel(in->operands[0]) != numel(in->operands[1]) || numel(in->results[0]) != 2 * numel(in->operands[0]))
            bad(c, in, "operand sizes do not join");
        return;
    case IR_SPLIT:
        if (numel(in->results[0]) != numel(in->results[1]) || numel(in->operands[0]) != 2 * numel(in->results[0]))
            bad(c, in, "operand size does not split");
        return;
    case IR_CAT: check_cat(c, in); return;
    case IR_REDUCE: case IR_ARGREDUCE: case IR_REDUCE_REGION: case IR_SCAN: case IR_SCAN_REGION:
    case IR_SORT: case IR_TOPK:
        check_axis_op(c, in);
        return;
    case IR_FOR:
        if (in->num_operands < 3 || in->num_regions != 1 || in->regions[0]->args.len != in->num_operands - 2)
            bad(c, in, "operands do not match the body's arguments");
        else if (ir_is_block(in->operands[0]->type) || ir_is_block(in->operands[1]->type) || ir_is_block(in->operands[2]->type))
            bad(c, in, "bounds must be scalars");
        return;
    case IR_WHILE:
        if (in->num_regions != 2) bad(c, in, "needs a condition and a body region");
        return;
    case IR_IF:
        if (in->num_regions < 1 || ir_is_block(in->operands[0]->type)) bad(c, in, "needs a scalar condition and a region");
        return;
    case IR_CLUSTER_SUM:
        if (in->num_operands != 1 || in->num_results != 1 || !fits(in, 0, numel(in->results[0])) ||
            in->operands[0]->type.dtype != DT_F32)
            bad(c, in, "cluster_sum needs one f32 operand the size of its result");
        return;
    default: return;
    }
}

static void check_region(checker *c, const ir_region *r) {
    for (int k = 0; k < r->args.len; k++)
        if (!value_ok(c, r->args.data[k])) {
            diag_error(c->diag, r->parent ? r->parent->loc : LOC_NONE, "interpreter: malformed IR: a region argument is missing");
            c->ok = false;
            return;
        }
    for (const ir_inst *in = r->first; in && c->ok; in = in->next) {
        check_inst(c, in);
        for (int k = 0; k < in->num_regions && c->ok; k++)
            if (in->regions[k]) check_region(c, in->regions[k]);
    }
}

bool interp_check_func(ir_func *f, int num_values, blk_diag *diag) {
    checker c = {diag, num_values, true};
    check_region(&c, f->body);
    return c.ok;
}

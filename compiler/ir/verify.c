/* verify.c — the Block IR verifier.
 *
 * Needs: nothing; any IR, however malformed (NULL operands, broken lists,
 * wrong counts), is walked without crashing.
 * Checks: the invariants of ir.h and the per-op rules of ops.def —
 *  - structure: inst lists are consistent doubly-linked lists whose insts
 *    point back at their region, regions at their inst, results and args at
 *    their definer; operand/result/region counts per op;
 *  - dominance: an operand is visible at its use (defined earlier in the same
 *    region or an enclosing one, or an arg of such a region); an inst's own
 *    results are not visible inside its regions;
 *  - types and shapes per op (ELEM shapes equal, dtype classes, shape ops,
 *    memory ops, reductions, dot, calls, loops);
 *  - terminators: one per region, last; yield/condition/break/continue/return
 *    only where they belong, carrying the types their target expects.
 * Each problem is one diag_error at the inst:
 *   IR verifier (after PASS): <what is wrong> in '<op>'
 * A problem that makes further checks of an inst meaningless (a NULL operand,
 * a wrong count) stops the checks of that inst, not of the module.
 */
#include "ir.h"

#include <stdio.h>
#include <string.h>

typedef struct {
    blk_diag *diag;
    const char *pass;
    ir_module *module;
    ir_func *func;
    VEC(ir_value *) values; /* values of func by id (this walk's numbering) */
    bool *visible;          /* visible[id]: defined and in scope here */
    int problems;
} verifier;

static const char *op_name(ir_op op) { return op < IR_OP_COUNT ? ir_op_table[op].name : "?op"; }

static void vfail(verifier *V, blk_loc loc, const char *where, const char *fmt, va_list ap) {
    char what[512];
    vsnprintf(what, sizeof what, fmt, ap);
    V->problems++;
    diag_error(V->diag, loc, "IR verifier (after %s): %s in '%s'", V->pass, what, where);
}

static void fail(verifier *V, const ir_inst *i, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void fail(verifier *V, const ir_inst *i, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vfail(V, i->loc, op_name(i->op), fmt, ap);
    va_end(ap);
}

static void fail_func(verifier *V, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void fail_func(verifier *V, const char *fmt, ...) {
    char where[256];
    snprintf(where, sizeof where, "%s @%s", V->func->is_kernel ? "kernel" : "fn",
             V->func->name ? V->func->name : "?");
    va_list ap;
    va_start(ap, fmt);
    vfail(V, V->func->loc, where, fmt, ap);
    va_end(ap);
}

static const char *tstr(ir_type t, char *buf) {
    ir_type_str(t, buf, 96);
    return buf;
}

/* The next inst of a well-formed list, or NULL where the list is broken (so
 * that a cycle can never make a walk loop forever; see check_region). */
static ir_inst *next_inst(const ir_region *r, const ir_inst *i) {
    ir_inst *n = i->next;
    if (n && (n->prev != i || n->parent != r)) return NULL;
    return n;
}

static ir_inst *first_inst(const ir_region *r) {
    return r->first && !r->first->prev && r->first->parent == r ? r->first : NULL;
}

/* ---- numbering: ids index V->values; NULLs are skipped ---- */

static void number(verifier *V, ir_region *r, int depth) {
    if (!r || depth > 1000) return;
    blk_arena *a = V->module->arena;
    for (int k = 0; k < r->args.len; k++) {
        ir_value *v = r->args.data[k];
        if (!v) continue;
        v->id = V->values.len;
        VEC_PUSH(a, V->values, v);
    }
    for (ir_inst *i = first_inst(r); i; i = next_inst(r, i)) {
        for (int k = 0; i->results && k < i->num_results; k++) {
            ir_value *v = i->results[k];
            if (!v) continue;
            v->id = V->values.len;
            VEC_PUSH(a, V->values, v);
        }
        for (int k = 0; i->regions && k < i->num_regions; k++) number(V, i->regions[k], depth + 1);
    }
}

static bool is_known(verifier *V, const ir_value *v) {
    return v && v->id >= 0 && v->id < V->values.len && V->values.data[v->id] == v;
}

static void set_visible(verifier *V, ir_value *v, bool on) {
    if (is_known(V, v)) V->visible[v->id] = on;
}

/* ---- small type predicates ---- */

static bool is_int(ir_type t) { return dtype_is_int(t.dtype); }
static bool is_float(ir_type t) { return dtype_is_float(t.dtype); }
static bool is_bool(ir_type t) { return t.dtype == DT_BOOL; }
static bool is_ptr(ir_type t) { return t.dtype == DT_PTR; }
static bool same_elem(ir_type a, ir_type b) { return ir_type_eq(ir_elem(a), ir_elem(b)); }
static ir_type ty(const ir_inst *i, int k) { return i->operands[k]->type; }
static ir_type rty(const ir_inst *i, int k) { return i->results[k]->type; }

/* `which` (e.g. "operand 1") must have exactly type want. */
static bool expect_type(verifier *V, const ir_inst *i, const char *which, ir_type got, ir_type want) {
    if (ir_type_eq(got, want)) return true;
    char b1[96], b2[96];
    fail(V, i, "%s has type %s, expected %s", which, tstr(got, b1), tstr(want, b2));
    return false;
}

static void expect_operand_count(verifier *V, const ir_inst *i, int lo, int hi, bool *ok) {
    if (i->num_operands >= lo && i->num_operands <= hi) return;
    if (lo == hi) fail(V, i, "%d operands, expected %d", i->num_operands, lo);
    else if (hi > 1000) fail(V, i, "%d operands, expected at least %d", i->num_operands, lo);
    else fail(V, i, "%d operands, expected %d to %d", i->num_operands, lo, hi);
    *ok = false;
}

static int expected_regions(ir_op op) {
    switch (op) {
    case IR_FOR: case IR_REDUCE_REGION: case IR_SCAN_REGION: return 1;
    case IR_IF: case IR_WHILE: return 2;
    default: return 0;
    }
}

/* The shape of t without dimension `axis`. */
static ir_type drop_axis(ir_type t, int axis) {
    int32_t shape[IR_MAX_RANK];
    int n = 0;
    for (int d = 0; d < t.rank; d++)
        if (d != axis) shape[n++] = t.shape[d];
    return ir_shaped(t, n, shape);
}

/* ---- per-op rules ---- */

static void check_elementwise_dtypes(verifier *V, const ir_inst *i) {
    char b1[96];
    ir_op op = i->op;
    ir_type a = ty(i, 0);
    switch (op) {
    case IR_NEG: case IR_ABS:
        if (!is_int(a) && !is_float(a)) fail(V, i, "operand type %s is not a number", tstr(a, b1));
        break;
    case IR_NOT:
        if (!is_bool(a)) fail(V, i, "operand type %s is not bool", tstr(a, b1));
        break;
    case IR_BITNOT:
        if (!is_int(a)) fail(V, i, "operand type %s is not an integer", tstr(a, b1));
        break;
    case IR_EXP: case IR_EXP2: case IR_LOG: case IR_LOG2: case IR_SQRT: case IR_RSQRT:
    case IR_SIN: case IR_COS: case IR_TANH: case IR_SIGMOID: case IR_ERF: case IR_FLOOR: case IR_CEIL:
    case IR_ROUND: case IR_RINT: case IR_TRUNC: case IR_LOG1P: case IR_EXPM1: case IR_EXP10: case IR_LOG10:
    case IR_TAN: case IR_ASIN: case IR_ACOS: case IR_ATAN: case IR_SINH: case IR_COSH: case IR_ASINH:
    case IR_ACOSH: case IR_ATANH: case IR_CBRT: case IR_ERFC: case IR_ERFINV: case IR_LGAMMA:
        if (!is_float(a)) fail(V, i, "operand type %s is not a float", tstr(a, b1));
        break;
    case IR_CLZ: case IR_POPC: case IR_BREV: case IR_BSWAP:
        if (!is_int(a)) fail(V, i, "operand type %s is not an integer", tstr(a, b1));
        break;
    default:
        break;
    }
    if (op >= IR_NEG && op <= IR_BSWAP) { /* the unary elementwise ops of ops.def */
        expect_type(V, i, "result", rty(i, 0), a);
        return;
    }
    if (op >= IR_ADD && op <= IR_MULHI) { /* the binary elementwise ops */
        if (!expect_type(V, i, "operand 1", ty(i, 1), a)) return;
        expect_type(V, i, "result", rty(i, 0), a);
        bool ok;
        const char *need;
        if (op == IR_AND || op == IR_OR || op == IR_XOR) ok = is_int(a) || is_bool(a), need = "an integer or bool";
        else if (op == IR_SHL || op == IR_SHR) ok = is_int(a), need = "an integer";
        else if (op >= IR_POW && op <= IR_NEXTAFTER) ok = is_float(a), need = "a float";
        else if (op == IR_MULHI) ok = is_int(a), need = "an integer";
        else if (op == IR_MINIMUM || op == IR_MAXIMUM) ok = is_int(a) || is_float(a) || is_bool(a), need = "a number or bool";
        else ok = is_int(a) || is_float(a), need = "a number";
        if (!ok) fail(V, i, "operand type %s is not %s", tstr(a, b1), need);
        return;
    }
    switch (op) {
    case IR_CMP:
        expect_type(V, i, "operand 1", ty(i, 1), a);
        if (!is_bool(rty(i, 0))) fail(V, i, "result type %s is not bool", tstr(rty(i, 0), b1));
        if (i->kind < IR_CMP_EQ || i->kind > IR_CMP_GE) fail(V, i, "bad predicate %d", i->kind);
        break;
    case IR_PTRADD:
        if (!is_ptr(a)) fail(V, i, "operand 0 type %s is not a pointer", tstr(a, b1));
        if (!is_int(ty(i, 1))) fail(V, i, "offset type %s is not an integer", tstr(ty(i, 1), b1));
        expect_type(V, i, "result", rty(i, 0), a);
        break;
    case IR_FMA:
        if (!is_float(a)) fail(V, i, "operand type %s is not a float", tstr(a, b1));
        expect_type(V, i, "operand 1", ty(i, 1), a);
        expect_type(V, i, "operand 2", ty(i, 2), a);
        expect_type(V, i, "result", rty(i, 0), a);
        break;
    case IR_SELECT:
        if (!is_bool(a)) fail(V, i, "condition type %s is not bool", tstr(a, b1));
        expect_type(V, i, "operand 2", ty(i, 2), ty(i, 1));
        expect_type(V, i, "result", rty(i, 0), ty(i, 1));
        break;
    case IR_BITCAST: {
        ir_type r = rty(i, 0);
        char b2[96];
        if (is_ptr(a) || is_ptr(r) || is_bool(a) || is_bool(r) || dtype_bits((blk_dtype)a.dtype) != dtype_bits((blk_dtype)r.dtype))
            fail(V, i, "cannot bitcast %s to %s", tstr(a, b1), tstr(r, b2));
        break;
    }
    case IR_CAST: {
        ir_type r = rty(i, 0);
        if ((is_ptr(a) && !is_ptr(r) && !is_int(r)) || (is_ptr(r) && !is_ptr(a) && !is_int(a))) {
            char b2[96];
            fail(V, i, "cannot cast %s to %s", tstr(a, b1), tstr(r, b2));
        }
        break;
    }
    default:
        break;
    }
}

static void check_mask(verifier *V, const ir_inst *i, int k, ir_type ptr) {
    char b1[96], b2[96];
    ir_type m = ty(i, k);
    if (!is_bool(m) || !ir_shape_eq(m, ptr))
        fail(V, i, "mask has type %s, expected bool with the shape of %s", tstr(m, b1), tstr(ptr, b2));
}

/* ptr operand 0 and a value of the pointee type with the pointer's shape. */
static bool check_pointer_value(verifier *V, const ir_inst *i, ir_type ptr, ir_type val, const char *which) {
    char b1[96], b2[96];
    if (!is_ptr(ptr)) {
        fail(V, i, "operand 0 type %s is not a pointer", tstr(ptr, b1));
        return false;
    }
    if (val.dtype != ptr.pointee || !ir_shape_eq(val, ptr) || is_ptr(val)) {
        fail(V, i, "%s has type %s, which does not match pointer %s", which, tstr(val, b1), tstr(ptr, b2));
        return false;
    }
    return true;
}

static void check_memory(verifier *V, const ir_inst *i) {
    bool ok = true;
    char b1[96];
    switch (i->op) {
    case IR_LOAD:
        expect_operand_count(V, i, 1, 3, &ok);
        if (!ok) return;
        if (!check_pointer_value(V, i, ty(i, 0), rty(i, 0), "result")) return;
        if (i->num_operands >= 2) check_mask(V, i, 1, ty(i, 0));
        if (i->num_operands >= 3) expect_type(V, i, "other", ty(i, 2), rty(i, 0));
        break;
    case IR_STORE:
        expect_operand_count(V, i, 2, 3, &ok);
        if (!ok) return;
        if (!check_pointer_value(V, i, ty(i, 0), ty(i, 1), "stored value")) return;
        if (ty(i, 0).ptr_const) fail(V, i, "store through a *const pointer");
        if (i->num_operands >= 3) check_mask(V, i, 2, ty(i, 0));
        break;
    case IR_ATOMIC_RMW:
    case IR_ATOMIC_CAS: {
        int nval = i->op == IR_ATOMIC_CAS ? 2 : 1;
        expect_operand_count(V, i, 1 + nval, 2 + nval, &ok);
        if (!ok) return;
        if (!check_pointer_value(V, i, ty(i, 0), ty(i, 1), "operand 1")) return;
        if (nval == 2) expect_type(V, i, "operand 2", ty(i, 2), ty(i, 1));
        if (i->num_operands == 2 + nval) check_mask(V, i, 1 + nval, ty(i, 0));
        if (ty(i, 0).ptr_const) fail(V, i, "atomic through a *const pointer");
        expect_type(V, i, "result", rty(i, 0), ty(i, 1));
        if (i->op == IR_ATOMIC_RMW && (i->kind < IR_ATOM_ADD || i->kind > IR_ATOM_XCHG))
            fail(V, i, "bad atomic kind %d", i->kind);
        else if (i->op == IR_ATOMIC_RMW && i->kind >= IR_ATOM_AND && i->kind <= IR_ATOM_XOR && !is_int(ty(i, 1)))
            fail(V, i, "bitwise atomic on %s", tstr(ty(i, 1), b1));
        if (i->sem > IR_SEM_RELEASE) fail(V, i, "bad memory semantics %d", i->sem);
        if (i->scope > IR_SCOPE_CTA) fail(V, i, "bad atomic scope %d", i->scope);
        break;
    }
    case IR_DESC_LOAD:
    case IR_DESC_STORE: {
        int extra = i->op == IR_DESC_STORE;
        int n = i->num_operands - 1 - extra;
        int rank = n / 3;
        if (n < 3 || n % 3 != 0 || rank > IR_MAX_RANK) {
            fail(V, i, "%d operands, expected base, then dims, strides and offsets of rank 1 to %d%s",
                 i->num_operands, IR_MAX_RANK, extra ? ", then the value" : "");
            return;
        }
        ir_type base = ty(i, 0);
        if (!is_ptr(base) || base.rank != 0) {
            fail(V, i, "base type %s is not a scalar pointer", tstr(base, b1));
            return;
        }
        for (int k = 1; k <= 3 * rank; k++)
            if (!is_int(ty(i, k)) || ty(i, k).rank != 0)
                fail(V, i, "operand %d type %s is not a scalar integer", k, tstr(ty(i, k), b1));
        ir_type val = extra ? ty(i, i->num_operands - 1) : rty(i, 0);
        if (val.rank != rank || val.dtype != base.pointee)
            fail(V, i, "%s type %s is not a rank-%d block of the pointee type",
                 extra ? "stored value" : "result", tstr(val, b1), rank);
        if (extra && base.ptr_const) fail(V, i, "store through a *const pointer");
        break;
    }
    default:
        break;
    }
}

static bool check_axis(verifier *V, const ir_inst *i, ir_type t) {
    char b1[96];
    if (t.rank < 1) {
        fail(V, i, "operand type %s is not a block", tstr(t, b1));
        return false;
    }
    if (i->axis < 0 || i->axis >= t.rank) {
        fail(V, i, "axis %d out of range for %s", i->axis, tstr(t, b1));
        return false;
    }
    return true;
}

/* A combine region: args (a, b) of the operand's element type, yielding one. */
static void check_combine_region(verifier *V, const ir_inst *i) {
    ir_region *r = i->regions[0];
    ir_type e = ir_elem(ty(i, 0));
    if (r->args.len != 2) {
        fail(V, i, "combine region has %d args, expected 2", r->args.len);
        return;
    }
    for (int k = 0; k < 2; k++)
        if (r->args.data[k]) expect_type(V, i, k ? "combine arg 1" : "combine arg 0", r->args.data[k]->type, e);
}

static void check_reduction(verifier *V, const ir_inst *i) {
    char b1[96];
    ir_type a = ty(i, 0);
    if (!check_axis(V, i, a)) return;
    switch (i->op) {
    case IR_REDUCE:
        if (i->kind < IR_RED_SUM || i->kind > IR_RED_XOR_SUM) fail(V, i, "bad reduction kind %d", i->kind);
        else if (i->kind == IR_RED_XOR_SUM && !is_int(a)) fail(V, i, "xor_sum of %s", tstr(a, b1));
        else if (!is_int(a) && !is_float(a) && !(is_bool(a) && (i->kind == IR_RED_MAX || i->kind == IR_RED_MIN)))
            fail(V, i, "reduction of %s", tstr(a, b1));
        expect_type(V, i, "result", rty(i, 0), drop_axis(a, i->axis));
        break;
    case IR_ARGREDUCE:
        if (i->kind != IR_RED_ARGMAX && i->kind != IR_RED_ARGMIN) fail(V, i, "bad argreduce kind %d", i->kind);
        if (!is_int(a) && !is_float(a)) fail(V, i, "argreduce of %s", tstr(a, b1));
        expect_type(V, i, "result", rty(i, 0), drop_axis(ir_shaped(ir_scalar(DT_I32), a.rank, a.shape), i->axis));
        break;
    case IR_REDUCE_REGION:
        expect_type(V, i, "result", rty(i, 0), drop_axis(a, i->axis));
        check_combine_region(V, i);
        break;
    case IR_SCAN:
        if (i->kind != IR_RED_SUM && i->kind != IR_RED_PROD) fail(V, i, "bad scan kind %d", i->kind);
        if (!is_int(a) && !is_float(a)) fail(V, i, "scan of %s", tstr(a, b1));
        expect_type(V, i, "result", rty(i, 0), a);
        break;
    case IR_SCAN_REGION:
        expect_type(V, i, "result", rty(i, 0), a);
        check_combine_region(V, i);
        break;
    case IR_SORT:
        if (is_ptr(a)) fail(V, i, "sort of %s", tstr(a, b1));
        expect_type(V, i, "result", rty(i, 0), a);
        break;
    case IR_TOPK: {
        if (i->ival < 1 || i->ival > a.shape[i->axis]) {
            fail(V, i, "k=%lld out of range for %s", (long long)i->ival, tstr(a, b1));
            return;
        }
        ir_type want = a;
        want.shape[i->axis] = (int32_t)i->ival;
        expect_type(V, i, "result 0", rty(i, 0), want);
        expect_type(V, i, "result 1", rty(i, 1), ir_shaped(ir_scalar(DT_I32), want.rank, want.shape));
        break;
    }
    default:
        break;
    }
}

static void check_shape_op(verifier *V, const ir_inst *i) {
    char b1[96], b2[96];
    ir_type a = ty(i, 0), r = rty(i, 0);
    if (i->op != IR_SPLIT && !same_elem(a, r)) {
        fail(V, i, "result type %s has another element type than %s", tstr(r, b1), tstr(a, b2));
        return;
    }
    switch (i->op) {
    case IR_SPLAT:
        if (a.rank != 0 || r.rank == 0) fail(V, i, "splat of %s to %s (scalar to block)", tstr(a, b1), tstr(r, b2));
        break;
    case IR_BROADCAST: {
        bool ok = a.rank == r.rank;
        for (int d = 0; ok && d < a.rank; d++) ok = a.shape[d] == r.shape[d] || a.shape[d] == 1;
        if (!ok) fail(V, i, "cannot broadcast %s to %s", tstr(a, b1), tstr(r, b2));
        break;
    }
    case IR_EXPAND_DIMS: {
        if (i->axis < 0 || i->axis > a.rank || a.rank >= IR_MAX_RANK) {
            fail(V, i, "axis %d out of range for %s", i->axis, tstr(a, b1));
            break;
        }
        int32_t shape[IR_MAX_RANK];
        for (int d = 0, s = 0; d <= a.rank; d++) shape[d] = d == i->axis ? 1 : a.shape[s++];
        expect_type(V, i, "result", r, ir_shaped(a, a.rank + 1, shape));
        break;
    }
    case IR_RESHAPE:
        if (ir_numel(a) != ir_numel(r)) fail(V, i, "cannot reshape %s to %s", tstr(a, b1), tstr(r, b2));
        break;
    case IR_PERMUTE: {
        int seen = 0;
        bool ok = a.rank == r.rank;
        for (int d = 0; ok && d < a.rank; d++) {
            int p = i->perm[d];
            ok = p >= 0 && p < a.rank && !(seen & (1 << p)) && r.shape[d] == a.shape[p];
            if (ok) seen |= 1 << p;
        }
        if (!ok) fail(V, i, "bad permutation of %s to %s", tstr(a, b1), tstr(r, b2));
        break;
    }
    case IR_JOIN: {
        expect_type(V, i, "operand 1", ty(i, 1), a);
        int32_t shape[IR_MAX_RANK];
        if (a.rank >= IR_MAX_RANK) { fail(V, i, "join of rank-%d blocks", a.rank); break; }
        for (int d = 0; d < a.rank; d++) shape[d] = a.shape[d];
        shape[a.rank] = 2;
        expect_type(V, i, "result", r, ir_shaped(a, a.rank + 1, shape));
        break;
    }
    case IR_SPLIT: {
        if (a.rank < 1 || a.shape[a.rank - 1] != 2) {
            fail(V, i, "split of %s (last dimension must be 2)", tstr(a, b1));
            break;
        }
        ir_type want = drop_axis(a, a.rank - 1);
        expect_type(V, i, "result 0", r, want);
        expect_type(V, i, "result 1", rty(i, 1), want);
        break;
    }
    case IR_CAT: {
        ir_type b = ty(i, 1);
        if (!check_axis(V, i, a)) break;
        bool ok = same_elem(a, b) && a.rank == b.rank && r.rank == a.rank;
        for (int d = 0; ok && d < a.rank; d++)
            ok = d == i->axis ? r.shape[d] == a.shape[d] + b.shape[d] : a.shape[d] == b.shape[d] && r.shape[d] == a.shape[d];
        if (!ok) fail(V, i, "cannot concatenate %s and %s along axis %d", tstr(a, b1), tstr(b, b2), i->axis);
        break;
    }
    default:
        break;
    }
}

static bool func_in_module(const ir_module *m, const ir_func *f) {
    for (const ir_func *g = m->first; g; g = g->next)
        if (g == f) return true;
    return false;
}

static void check_call(verifier *V, const ir_inst *i) {
    ir_func *c = i->callee;
    if (!c || !func_in_module(V->module, c)) {
        fail(V, i, "call to a function that is not in the module");
        return;
    }
    if (c->is_kernel) {
        fail(V, i, "call to kernel @%s", c->name);
        return;
    }
    char which[64];
    ir_region *body = c->body;
    int nparams = body ? body->args.len : 0;
    if (i->num_operands != nparams) {
        fail(V, i, "%d arguments to @%s, which takes %d", i->num_operands, c->name, nparams);
        return;
    }
    for (int k = 0; k < nparams; k++) {
        if (!body->args.data[k]) continue;
        snprintf(which, sizeof which, "argument %d", k);
        expect_type(V, i, which, ty(i, k), body->args.data[k]->type);
    }
    if (i->num_results != c->result_types.len) {
        fail(V, i, "%d results from @%s, which returns %d", i->num_results, c->name, c->result_types.len);
        return;
    }
    for (int k = 0; k < i->num_results; k++) {
        snprintf(which, sizeof which, "result %d", k);
        expect_type(V, i, which, rty(i, k), c->result_types.data[k]);
    }
}

static void check_for(verifier *V, const ir_inst *i) {
    char b1[96], which[64];
    if (i->num_operands < 3) {
        fail(V, i, "%d operands, expected lower bound, upper bound, step and carried values", i->num_operands);
        return;
    }
    ir_type lb = ty(i, 0);
    if (!is_int(lb) || lb.rank != 0) fail(V, i, "bound type %s is not a scalar integer", tstr(lb, b1));
    expect_type(V, i, "upper bound", ty(i, 1), lb);
    expect_type(V, i, "step", ty(i, 2), lb);
    int n = i->num_operands - 3;
    if (i->num_results != n) {
        fail(V, i, "%d results for %d carried values", i->num_results, n);
        return;
    }
    ir_region *body = i->regions[0];
    if (body->args.len != n + 1) {
        fail(V, i, "body has %d args, expected the induction variable and %d carried values", body->args.len, n);
        return;
    }
    if (body->args.data[0]) expect_type(V, i, "induction variable", body->args.data[0]->type, lb);
    for (int k = 0; k < n; k++) {
        snprintf(which, sizeof which, "result %d", k);
        expect_type(V, i, which, rty(i, k), ty(i, 3 + k));
        snprintf(which, sizeof which, "body arg %d", k + 1);
        if (body->args.data[k + 1]) expect_type(V, i, which, body->args.data[k + 1]->type, ty(i, 3 + k));
    }
}

static void check_while(verifier *V, const ir_inst *i) {
    char which[64];
    ir_region *cond = i->regions[0], *body = i->regions[1];
    if (cond->args.len != i->num_operands) {
        fail(V, i, "condition region has %d args for %d carried values", cond->args.len, i->num_operands);
        return;
    }
    for (int k = 0; k < i->num_operands; k++) {
        snprintf(which, sizeof which, "condition arg %d", k);
        if (cond->args.data[k]) expect_type(V, i, which, cond->args.data[k]->type, ty(i, k));
    }
    if (body->args.len != i->num_results) {
        fail(V, i, "body has %d args for %d results", body->args.len, i->num_results);
        return;
    }
    for (int k = 0; k < i->num_results; k++) {
        snprintf(which, sizeof which, "body arg %d", k);
        if (body->args.data[k]) expect_type(V, i, which, body->args.data[k]->type, rty(i, k));
    }
}

static void check_op(verifier *V, const ir_inst *i) {
    char b1[96];
    ir_op op = i->op;
    if (ir_op_has(op, OPF_ELEM)) {
        for (int k = 0; k < i->num_operands; k++)
            if (!ir_shape_eq(ty(i, k), ty(i, 0))) {
                char b2[96];
                fail(V, i, "operand %d has shape of %s, operand 0 of %s (elementwise)", k, tstr(ty(i, k), b1),
                     tstr(ty(i, 0), b2));
                return;
            }
        if (!ir_shape_eq(rty(i, 0), ty(i, 0))) {
            char b2[96];
            fail(V, i, "result %s has another shape than operand %s (elementwise)", tstr(rty(i, 0), b1), tstr(ty(i, 0), b2));
            return;
        }
        check_elementwise_dtypes(V, i);
        return;
    }
    switch (op) {
    case IR_CONST: {
        ir_type r = rty(i, 0);
        if (r.dtype == DT_BOOL && i->ival != 0 && i->ival != 1) fail(V, i, "bool constant %lld", (long long)i->ival);
        break;
    }
    case IR_PROGRAM_ID:
    case IR_NUM_PROGRAMS:
        if (i->axis < 0 || i->axis > 2) fail(V, i, "axis %d is not 0, 1 or 2", i->axis);
        expect_type(V, i, "result", rty(i, 0), ir_scalar(DT_I32));
        break;
    case IR_CLUSTER_SUM:
        expect_type(V, i, "result", rty(i, 0), ty(i, 0));
        if (ty(i, 0).dtype != DT_F32) fail(V, i, "cluster_sum of %s (f32 only)", tstr(ty(i, 0), b1));
        /* a device fn's is checked where it is inlined into a kernel */
        if (V->func->is_kernel && V->func->cluster < 2) fail(V, i, "cluster_sum in a kernel without @cluster");
        break;
    case IR_ARANGE: {
        if (i->ival2 <= i->ival || i->ival2 - i->ival > IR_MAX_NUMEL) {
            fail(V, i, "empty or too large range %lld..%lld", (long long)i->ival, (long long)i->ival2);
            break;
        }
        int32_t n = (int32_t)(i->ival2 - i->ival);
        expect_type(V, i, "result", rty(i, 0), ir_shaped(ir_scalar(DT_I32), 1, &n));
        break;
    }
    case IR_SPLAT: case IR_BROADCAST: case IR_EXPAND_DIMS: case IR_RESHAPE: case IR_PERMUTE:
    case IR_JOIN: case IR_SPLIT: case IR_CAT:
        check_shape_op(V, i);
        break;
    case IR_MULTIPLE_OF:
    case IR_MAX_CONTIGUOUS:
        expect_type(V, i, "result", rty(i, 0), ty(i, 0));
        if (!is_int(ty(i, 0)) && !is_ptr(ty(i, 0))) fail(V, i, "hint on %s", tstr(ty(i, 0), b1));
        if (i->ival < 1) fail(V, i, "hint n=%lld is not positive", (long long)i->ival);
        break;
    case IR_LOAD: case IR_STORE: case IR_DESC_LOAD: case IR_DESC_STORE: case IR_ATOMIC_RMW: case IR_ATOMIC_CAS:
        check_memory(V, i);
        break;
    case IR_REDUCE: case IR_ARGREDUCE: case IR_REDUCE_REGION: case IR_SCAN: case IR_SCAN_REGION:
    case IR_SORT: case IR_TOPK:
        check_reduction(V, i);
        break;
    case IR_DOT: {
        ir_type a = ty(i, 0), b = ty(i, 1), c = ty(i, 2);
        if (a.rank != 2 || b.rank != 2 || c.rank != 2 || a.shape[1] != b.shape[0] || c.shape[0] != a.shape[0] ||
            c.shape[1] != b.shape[1]) {
            char b2[96], b3[96];
            fail(V, i, "shapes %s x %s + %s are not [M,K] x [K,N] + [M,N]", tstr(a, b1), tstr(b, b2), tstr(c, b3));
            break;
        }
        if (a.dtype != b.dtype) expect_type(V, i, "operand 1", b, ir_shaped(a, 2, b.shape));
        if (!is_int(a) && !is_float(a)) fail(V, i, "dot of %s", tstr(a, b1));
        expect_type(V, i, "result", rty(i, 0), c);
        if (i->precision > IR_PREC_IEEE) fail(V, i, "bad precision %d", i->precision);
        break;
    }
    case IR_RAND: case IR_RANDN: case IR_RANDINT: {
        ir_type seed = ty(i, 0), offs = ty(i, 1);
        if (!is_int(seed) || seed.rank != 0) fail(V, i, "seed type %s is not a scalar integer", tstr(seed, b1));
        if (!is_int(offs)) fail(V, i, "offsets type %s is not an integer", tstr(offs, b1));
        expect_type(V, i, "result", rty(i, 0),
                    ir_shaped(ir_scalar(op == IR_RANDINT ? DT_U32 : DT_F32), offs.rank, offs.shape));
        break;
    }
    case IR_CALL:
        check_call(V, i);
        break;
    case IR_ASSERT:
        if (i->num_operands == 1 && ty(i, 0).dtype != DT_BOOL) {
            char b1[96];
            fail(V, i, "assert condition of type %s is not bool", tstr(ty(i, 0), b1));
        }
        break;
    case IR_FOR:
        check_for(V, i);
        break;
    case IR_IF:
        if (i->num_operands != 1) break; /* reported by the count check */
        if (!is_bool(ty(i, 0)) || ty(i, 0).rank != 0)
            fail(V, i, "condition type %s is not a scalar bool", tstr(ty(i, 0), b1));
        for (int k = 0; k < 2; k++)
            if (i->regions[k]->args.len != 0) fail(V, i, "region %d has args", k);
        break;
    case IR_WHILE:
        check_while(V, i);
        break;
    default:
        break;
    }
}

/* ---- terminators ---- */

static void expect_values(verifier *V, const ir_inst *t, const char *target, ir_value **want, int nwant) {
    if (t->num_operands != nwant) {
        fail(V, t, "%d values, expected %d for %s", t->num_operands, nwant, target);
        return;
    }
    for (int k = 0; k < nwant; k++) {
        if (!want[k]) continue;
        char which[96];
        snprintf(which, sizeof which, "value %d (for %s)", k, target);
        expect_type(V, t, which, ty(t, k), want[k]->type);
    }
}

/* The loop a break/continue in region r leaves or continues: the innermost
 * FOR body or WHILE body around r, looking through IFs only. */
static ir_inst *enclosing_loop(ir_region *r) {
    for (int guard = 0; r && guard < 10000; guard++) {
        ir_inst *p = r->parent;
        if (!p) return NULL;
        if (p->op == IR_FOR) return p;
        if (p->op == IR_WHILE) return p->num_regions == 2 && r == p->regions[1] ? p : NULL;
        if (p->op != IR_IF) return NULL;
        r = p->parent;
    }
    return NULL;
}

/* RETURN may end any region except a combine region's or a while
 * condition's (or one nested inside those). */
static bool return_allowed(ir_region *r) {
    for (int guard = 0; r && guard < 10000; guard++) {
        ir_inst *p = r->parent;
        if (!p) return true;
        if (p->op == IR_REDUCE_REGION || p->op == IR_SCAN_REGION) return false;
        if (p->op == IR_WHILE && p->num_regions == 2 && r == p->regions[0]) return false;
        r = p->parent;
    }
    return false;
}

static void check_terminator(verifier *V, ir_region *r, const ir_inst *t) {
    ir_inst *p = r->parent;
    switch (t->op) {
    case IR_YIELD:
        if (!p) { fail(V, t, "yield in a function body (use return)"); return; }
        switch (p->op) {
        case IR_FOR:
        case IR_IF:
            expect_values(V, t, p->op == IR_FOR ? "the next iteration" : "the if's results", p->results, p->num_results);
            break;
        case IR_WHILE:
            if (r == p->regions[0]) fail(V, t, "yield ends a while condition region (use condition)");
            else expect_values(V, t, "the next iteration", p->regions[0]->args.data, p->regions[0]->args.len);
            break;
        case IR_REDUCE_REGION:
        case IR_SCAN_REGION:
            if (t->num_operands != 1) fail(V, t, "%d values, expected 1 combined value", t->num_operands);
            else expect_type(V, t, "combined value", ty(t, 0), ir_elem(ty(p, 0)));
            break;
        default:
            fail(V, t, "yield in a region of '%s'", op_name(p->op));
            break;
        }
        return;
    case IR_CONDITION:
        if (!p || p->op != IR_WHILE || r != p->regions[0]) {
            fail(V, t, "condition outside a while condition region");
            return;
        }
        if (t->num_operands < 1 || !is_bool(ty(t, 0)) || ty(t, 0).rank != 0) {
            fail(V, t, "first value must be a scalar bool");
            return;
        }
        if (t->num_operands - 1 != p->num_results) {
            fail(V, t, "%d values, expected %d for the loop body", t->num_operands - 1, p->num_results);
            return;
        }
        for (int k = 0; k < p->num_results; k++)
            expect_type(V, t, "value for the loop body", ty(t, k + 1), rty(p, k));
        return;
    case IR_BREAK:
    case IR_CONTINUE: {
        ir_inst *loop = enclosing_loop(r);
        if (!loop) {
            fail(V, t, "%s outside a loop body", op_name(t->op));
            return;
        }
        if (t->op == IR_BREAK || loop->op == IR_FOR)
            expect_values(V, t, t->op == IR_BREAK ? "the loop's results" : "the next iteration", loop->results,
                          loop->num_results);
        else
            expect_values(V, t, "the next iteration", loop->regions[0]->args.data, loop->regions[0]->args.len);
        return;
    }
    case IR_RETURN: {
        if (!return_allowed(r)) {
            fail(V, t, "return inside a %s", p && p->op == IR_WHILE ? "while condition" : "combine region");
            return;
        }
        ir_func *f = V->func;
        if (t->num_operands != f->result_types.len) {
            fail(V, t, "%d values, expected %d", t->num_operands, f->result_types.len);
            return;
        }
        for (int k = 0; k < t->num_operands; k++) expect_type(V, t, "returned value", ty(t, k), f->result_types.data[k]);
        return;
    }
    default:
        return;
    }
}

/* ---- the walk ---- */

static void check_region(verifier *V, ir_region *r, ir_inst *parent, int depth);

/* Counts, operand visibility, results' back-pointers; then the op's rules
 * and its regions. Returns with the inst's results not yet visible. */
static void check_inst(verifier *V, ir_region *r, ir_inst *i, int depth) {
    char b1[96];
    if (i->op >= IR_OP_COUNT) {
        fail(V, i, "unknown op %d", (int)i->op);
        return;
    }
    const ir_op_info *info = &ir_op_table[i->op];
    bool ok = true;
    if (i->num_operands < 0 || (i->num_operands > 0 && !i->operands)) {
        fail(V, i, "bad operand array");
        return;
    }
    if (i->num_results < 0 || (i->num_results > 0 && !i->results)) {
        fail(V, i, "bad result array");
        return;
    }
    if (info->num_operands >= 0 && i->num_operands != info->num_operands) {
        fail(V, i, "%d operands, expected %d", i->num_operands, info->num_operands);
        ok = false;
    }
    if (info->num_results >= 0 && i->num_results != info->num_results) {
        fail(V, i, "%d results, expected %d", i->num_results, info->num_results);
        ok = false;
    }
    if (i->num_regions != expected_regions(i->op) || (i->num_regions > 0 && !i->regions)) {
        fail(V, i, "%d regions, expected %d", i->num_regions, expected_regions(i->op));
        ok = false;
    }
    for (int k = 0; ok && k < i->num_regions; k++) {
        ir_region *sub = i->regions[k];
        if (!sub) { fail(V, i, "region %d is null", k); ok = false; }
        else if (sub->parent != i) { fail(V, i, "region %d does not point back at its inst", k); ok = false; }
        else if (sub->func != V->func) { fail(V, i, "region %d belongs to another function", k); ok = false; }
    }
    for (int k = 0; k < i->num_operands; k++) {
        ir_value *v = i->operands[k];
        if (!v) {
            fail(V, i, "operand %d is null", k);
            ok = false;
        } else if (!is_known(V, v)) {
            fail(V, i, "operand %d (of type %s) is not defined in this function", k, tstr(v->type, b1));
            ok = false;
        } else if (!V->visible[v->id]) {
            fail(V, i, "operand %d (%%%d) is used where its definition does not dominate", k, v->id);
            ok = false;
        }
    }
    for (int k = 0; k < i->num_results; k++) {
        ir_value *v = i->results[k];
        if (!v) { fail(V, i, "result %d is null", k); ok = false; }
        else if (v->def != i || v->index != k || v->owner) {
            fail(V, i, "result %d does not point back at its inst", k);
            ok = false;
        }
    }
    if (ir_op_has(i->op, OPF_TERM) && i != r->last) fail(V, i, "terminator before the end of its region");
    if (!ok) return;
    check_op(V, i);
    if (ir_op_has(i->op, OPF_TERM) && i == r->last) check_terminator(V, r, i);
    for (int k = 0; k < i->num_regions; k++) check_region(V, i->regions[k], i, depth + 1);
}

static void check_region(verifier *V, ir_region *r, ir_inst *parent, int depth) {
    if (depth > 1000) {
        fail_func(V, "regions nested too deeply");
        return;
    }
    for (int k = 0; k < r->args.len; k++) {
        ir_value *a = r->args.data[k];
        if (!a || a->owner != r || a->index != k || a->def) {
            if (parent) fail(V, parent, "region arg %d is null or does not point back at its region", k);
            else fail_func(V, "parameter %d is null or does not point back at the function", k);
            continue;
        }
        set_visible(V, a, true);
    }
    ir_inst *i = r->first, *last = NULL;
    if (i && (i->prev || i->parent != r)) {
        fail(V, i, "first inst of a region does not point back at it");
        i = NULL;
    }
    for (; i; i = i->next) {
        check_inst(V, r, i, depth);
        for (int k = 0; i->results && k < i->num_results; k++) set_visible(V, i->results[k], true);
        last = i;
        if (i->next && (i->next->prev != i || i->next->parent != r)) {
            fail(V, i->next, "inst list is broken after '%s'", op_name(i->op));
            break;
        }
    }
    if (last != r->last && last && !last->next) fail(V, last, "region's last inst pointer is wrong");
    if (!r->first) {
        if (parent) fail(V, parent, "empty region (no terminator)");
        else fail_func(V, "empty body (no return)");
    } else if (last && last == r->last && !ir_op_has(last->op < IR_OP_COUNT ? last->op : IR_CONST, OPF_TERM)) {
        fail(V, last, "region does not end in a terminator");
    }
    /* Leaving the region: its values go out of scope. */
    for (int k = 0; k < r->args.len; k++) set_visible(V, r->args.data[k], false);
    for (ir_inst *j = first_inst(r); j; j = next_inst(r, j))
        for (int k = 0; j->results && k < j->num_results; k++) set_visible(V, j->results[k], false);
}

static void verify_func(verifier *V, ir_func *f) {
    V->func = f;
    if (f->module != V->module) fail_func(V, "function belongs to another module");
    if (!f->body) {
        fail_func(V, "function has no body");
        return;
    }
    if (f->body->parent || f->body->func != f) fail_func(V, "body region does not point back at the function");
    if (f->is_kernel && f->result_types.len) fail_func(V, "kernel has results");
    V->values.len = 0;
    number(V, f->body, 0);
    V->visible = ARENA_ARRAY(V->module->arena, bool, V->values.len + 1);
    if (!V->visible) return; /* out of memory: the arena reports it */
    check_region(V, f->body, NULL, 0);
}

int ir_verify_module(ir_module *m, blk_diag *d, const char *after_pass) {
    if (!m) return 0;
    verifier V;
    memset(&V, 0, sizeof V);
    V.diag = d;
    V.pass = after_pass ? after_pass : "input";
    V.module = m;
    int nfuncs = 0;
    for (ir_func *f = m->first; f && nfuncs < 100000; f = f->next, nfuncs++) verify_func(&V, f);
    return V.problems;
}

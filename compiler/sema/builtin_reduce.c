/* builtin_reduce.c — reductions and scans: sum, max, ..., argmax, reduce with a
 * combine fn, cumsum, cumprod, scan; sort and topk.
 */
#include "sema/builtin.h"

/* ---- reductions and scans ---- */

/* The dtype sum/cumsum accumulate in (Triton's rule): narrow ints and bool
 * -> i32 (u32 for unsigned); for sum also f16/bf16/f8 -> f32. */
static blk_dtype sum_dtype(blk_dtype t, bool floats) {
    if (t == DT_BOOL) return DT_I32;
    if (dtype_is_int(t) && dtype_bits(t) < 32) return dtype_is_unsigned(t) ? DT_U32 : DT_I32;
    if (floats && dtype_is_float(t) && dtype_bits(t) < 32) return DT_F32;
    return t;
}

/* Flatten x to rank 1 (reductions with no axis reduce every element). */
static ir_value *flatten(sema *S, ir_value *v, blk_loc loc) {
    if (v->type.rank == 1) return v;
    int32_t n = (int32_t)ir_numel(v->type);
    return sema_op1(S, IR_RESHAPE, loc, ir_shaped(v->type, 1, &n), v);
}

static ir_value *keep_dims(sema *S, ir_value *r, ir_type in, int axis, bool all, blk_loc loc) {
    if (all) {
        int32_t ones[IR_MAX_RANK] = {1, 1, 1, 1};
        ir_type t = ir_shaped(r->type, in.rank, ones);
        return r->type.rank == 0 ? sema_op1(S, IR_SPLAT, loc, t, r) : sema_op1(S, IR_RESHAPE, loc, t, r);
    }
    int32_t s[IR_MAX_RANK];
    for (int k = 0; k < in.rank; k++) s[k] = k == axis ? 1 : in.shape[k];
    ir_type t = ir_shaped(r->type, in.rank, s);
    ir_inst *i = sema_inst(S, IR_EXPAND_DIMS, loc, &r, 1, &t, 1, 0);
    if (!i) return NULL;
    i->axis = axis;
    return i->results[0];
}

/* The type left after reducing `axis` of t. */
static ir_type reduced(ir_type t, int axis, blk_dtype dt) {
    int32_t s[IR_MAX_RANK];
    int r = 0;
    for (int k = 0; k < t.rank; k++)
        if (k != axis) s[r++] = t.shape[k];
    return ir_shaped(ir_scalar(dt), r, s);
}

/* sum max min prod xor_sum argmax argmin (x, axis?; keep_dims) */
sema_val sema_builtin_reduce(sema *S, ast_node *call, ast_node **a, const sema_builtin *bi) {
    sema_val x = sema_block_arg(S, a[0], bi);
    if (x.kind == SV_ERROR) return x;
    int axis = 0;
    bool all = !a[1], keep = false;
    if (a[1]) {
        if (bi->kind == IR_RED_MAX || bi->kind == IR_RED_MIN) { /* max(a, b) is a reduction, not a comparison */
            sema_val ax = sema_arg(S, a[1]);
            if (ax.kind == SV_ERROR) return ax;
            if (ax.kind == SV_NONE) all = true;
            else if (!sema_is_const_int(ax)) {
                diag_error(S->d, a[1]->loc, "the axis of '%s' must be a compile-time integer, got %s; to compare two "
                           "values element by element use %s(a, b)", bi->name, sema_got_str(S, ax),
                           bi->kind == IR_RED_MAX ? "maximum" : "minimum");
                return sema_error();
            }
        }
        if (!all && !sema_axis_arg(S, a[1], bi, x.type, &axis)) return sema_error();
    }
    if (a[2] && !sema_const_bool_arg(S, a[2], bi, "'keep_dims'", &keep)) return sema_error();
    blk_dtype t = (blk_dtype)x.type.dtype, rt = t;
    bool arg_red = bi->kind == IR_RED_ARGMAX || bi->kind == IR_RED_ARGMIN;
    if (t == DT_PTR || (bi->kind == IR_RED_XOR_SUM && !dtype_is_int(t)) ||
        ((bi->kind == IR_RED_SUM || bi->kind == IR_RED_PROD || arg_red) && t == DT_BOOL && bi->kind != IR_RED_SUM)) {
        diag_error(S->d, a[0]->loc, "'%s' does not support %s", bi->name, sema_type_str(S, x));
        return sema_error();
    }
    if (bi->kind == IR_RED_SUM) rt = sum_dtype(t, true);
    if (!sema_need_fn(S, call, bi)) return sema_error();
    ir_value *v = x.v;
    if (rt != t) v = sema_op1(S, IR_CAST, a[0]->loc, ir_shaped(ir_scalar(rt), v->type.rank, v->type.shape), v);
    if (all) v = flatten(S, v, call->loc);
    ir_type out = reduced(v->type, all ? 0 : axis, arg_red ? DT_I32 : rt);
    ir_inst *i = sema_inst(S, arg_red ? IR_ARGREDUCE : IR_REDUCE, call->loc, &v, 1, &out, 1, 0);
    if (!i) return sema_error();
    i->axis = all ? 0 : axis;
    i->kind = bi->kind;
    ir_value *r = i->results[0];
    if (keep) r = keep_dims(S, r, x.type, axis, all, call->loc);
    return sema_value(r);
}

/* The combine fn argument of reduce/scan. */
static sema_item *combine_arg(sema *S, ast_node *n, const sema_builtin *bi) {
    sema_val f = sema_arg(S, n);
    if (f.kind == SV_ERROR) return NULL;
    if (f.kind != SV_FN) {
        diag_error(S->d, n->loc, "the combine function of '%s' must be a fn of two arguments, got %s", bi->name,
                   sema_type_str(S, f));
        return NULL;
    }
    return f.item;
}

/* Fill a reduce/scan region: args (a, b) of the element type, yields fn(a, b). */
static bool combine_region(sema *S, ir_inst *i, sema_item *fn, ir_type elem, blk_loc loc) {
    ir_region *r = i->regions[0];
    ir_value *args[2] = {ir_region_add_arg(r, elem, NULL), ir_region_add_arg(r, elem, NULL)};
    ir_region *old = S->fn->b.region;
    ir_inst *before = S->fn->b.before;
    S->fn->b.region = r;
    S->fn->b.before = NULL;
    sema_val res = S->up.call_values(S, fn, args, 2, loc);
    bool ok = res.kind != SV_ERROR;
    if (ok) {
        if (!sema_is_numeric(res) || sema_type_of(res).rank > 0 ||
            (res.kind == SV_VALUE && !ir_type_eq(res.type, elem)) ||
            (res.kind == SV_CONST && !res.weak && res.type.dtype != elem.dtype)) {
            diag_error(S->d, loc, "combine fn '%s' must return a scalar %s, got %s", fn->name,
                       sema_ir_type_str(S, elem), sema_type_str(S, res));
            ok = false;
        }
    }
    ir_value *y = ok ? sema_convert(S, res, (blk_dtype)elem.dtype, elem, loc) : NULL;
    if (!y) y = args[0];
    sema_inst(S, IR_YIELD, loc, &y, 1, NULL, 0, 0);
    S->fn->b.region = old;
    S->fn->b.before = before;
    return ok && y != args[0];
}

/* reduce(x, axis, combine_fn; keep_dims) */
sema_val sema_builtin_reduce_fn(sema *S, ast_node *call, ast_node **a, const sema_builtin *bi) {
    sema_val x = sema_block_arg(S, a[0], bi);
    if (x.kind == SV_ERROR) return x;
    int axis = 0;
    bool keep = false, all = false;
    sema_val ax = sema_arg(S, a[1]);
    if (ax.kind == SV_ERROR) return ax;
    if (ax.kind == SV_NONE) all = true;
    else if (!sema_axis_arg(S, a[1], bi, x.type, &axis)) return sema_error();
    sema_item *fn = combine_arg(S, a[2], bi);
    if (!fn) return sema_error();
    if (a[3] && !sema_const_bool_arg(S, a[3], bi, "'keep_dims'", &keep)) return sema_error();
    if (x.type.dtype == DT_PTR) {
        diag_error(S->d, a[0]->loc, "'reduce' does not support %s", sema_type_str(S, x));
        return sema_error();
    }
    ir_value *v = all ? flatten(S, x.v, call->loc) : x.v;
    ir_type out = reduced(v->type, axis, (blk_dtype)x.type.dtype);
    ir_inst *i = sema_inst(S, IR_REDUCE_REGION, call->loc, &v, 1, &out, 1, 1);
    if (!i) return sema_error();
    i->axis = axis;
    if (!combine_region(S, i, fn, ir_elem(x.type), call->loc)) return sema_error();
    ir_value *r = i->results[0];
    if (keep) r = keep_dims(S, r, x.type, axis, all, call->loc);
    return sema_value(r);
}

/* cumsum(x, axis = 0; reverse), cumprod(...), scan(x, axis, combine_fn; reverse) */
sema_val sema_builtin_scan(sema *S, ast_node *call, ast_node **a, const sema_builtin *bi) {
    bool region = bi->op == IR_SCAN_REGION;
    sema_val x = sema_block_arg(S, a[0], bi);
    if (x.kind == SV_ERROR) return x;
    int axis = 0;
    if (a[1] && !sema_axis_arg(S, a[1], bi, x.type, &axis)) return sema_error();
    sema_item *fn = NULL;
    if (region && !(fn = combine_arg(S, a[2], bi))) return sema_error();
    ast_node *rev_node = a[region ? 3 : 2];
    bool reverse = false;
    if (rev_node && !sema_const_bool_arg(S, rev_node, bi, "'reverse'", &reverse)) return sema_error();
    blk_dtype t = (blk_dtype)x.type.dtype, rt = region ? t : sum_dtype(t, false);
    if (t == DT_PTR || (!region && t == DT_BOOL && bi->kind == IR_RED_PROD)) {
        diag_error(S->d, a[0]->loc, "'%s' does not support %s", bi->name, sema_type_str(S, x));
        return sema_error();
    }
    ir_value *v = x.v;
    if (rt != t) v = sema_op1(S, IR_CAST, a[0]->loc, ir_shaped(ir_scalar(rt), v->type.rank, v->type.shape), v);
    ir_inst *i = sema_inst(S, (ir_op)bi->op, call->loc, &v, 1, &v->type, 1, region ? 1 : 0);
    if (!i) return sema_error();
    i->axis = axis;
    i->kind = bi->kind;
    if (reverse) i->flags |= IRF_REVERSE;
    if (region && !combine_region(S, i, fn, ir_elem(x.type), call->loc)) return sema_error();
    return sema_value(i->results[0]);
}

/* sort(x, axis?, descending?) — axis defaults to the last */
sema_val sema_builtin_sort(sema *S, ast_node *call, ast_node **a, const sema_builtin *bi) {
    sema_val x = sema_block_arg(S, a[0], bi);
    if (x.kind == SV_ERROR) return x;
    int axis = x.type.rank - 1;
    bool desc = false;
    if (a[1] && !sema_axis_arg(S, a[1], bi, x.type, &axis)) return sema_error();
    if (a[2] && !sema_const_bool_arg(S, a[2], bi, "'descending'", &desc)) return sema_error();
    if (x.type.dtype == DT_PTR) {
        diag_error(S->d, a[0]->loc, "'sort' does not support %s", sema_type_str(S, x));
        return sema_error();
    }
    ir_inst *i = sema_inst(S, IR_SORT, call->loc, &x.v, 1, &x.type, 1, 0);
    if (!i) return sema_error();
    i->axis = axis;
    if (desc) i->flags |= IRF_DESCENDING;
    return sema_value(i->results[0]);
}

/* topk(x, k, axis?) -> (values, indices) — axis defaults to the last */
sema_val sema_builtin_topk(sema *S, ast_node *call, ast_node **a, const sema_builtin *bi) {
    sema_val x = sema_block_arg(S, a[0], bi);
    if (x.kind == SV_ERROR) return x;
    int64_t k;
    int axis = x.type.rank - 1;
    if (!sema_const_int_arg(S, a[1], bi, "k", &k)) return sema_error();
    if (a[2] && !sema_axis_arg(S, a[2], bi, x.type, &axis)) return sema_error();
    if (x.type.dtype == DT_PTR || x.type.dtype == DT_BOOL) {
        diag_error(S->d, a[0]->loc, "'topk' does not support %s", sema_type_str(S, x));
        return sema_error();
    }
    if (k < 1 || k > x.type.shape[axis] || !sema_is_pow2(k)) {
        diag_error(S->d, a[1]->loc, "k of 'topk' must be a power of two from 1 to %d (the size of axis %d), got %lld",
                   x.type.shape[axis], axis, (long long)k);
        return sema_error();
    }
    ir_type vt = x.type;
    vt.shape[axis] = (int32_t)k;
    ir_type types[2] = {vt, ir_shaped(ir_scalar(DT_I32), vt.rank, vt.shape)};
    ir_inst *i = sema_inst(S, IR_TOPK, call->loc, &x.v, 1, types, 2, 0);
    if (!i) return sema_error();
    i->axis = axis;
    i->ival = k;
    sema_val r = {.kind = SV_TUPLE, .n = 2, .elems = ARENA_ARRAY(S->a, sema_val, 2)};
    if (!r.elems) return sema_error();
    r.elems[0] = sema_value(i->results[0]);
    r.elems[1] = sema_value(i->results[1]);
    return r;
}


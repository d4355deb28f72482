/* builtin_shape.c — block creation and shapes: arange, zeros, full, trans, permute,
 * reshape, broadcast_to, expand_dims, join, split, cat.
 */
#include "sema/builtin.h"

/* ---- creation ---- */

/* arange(start, end): i32[end - start], end - start a power of two */
sema_val sema_builtin_arange(sema *S, ast_node *call, ast_node **a, const sema_builtin *bi) {
    int64_t lo, hi;
    bool ok_lo = sema_const_int_arg(S, a[0], bi, "start", &lo);
    bool ok_hi = sema_const_int_arg(S, a[1], bi, "end", &hi);
    if (!ok_lo || !ok_hi) return sema_error();
    if (hi <= lo) {
        diag_error(S->d, call->loc, "arange(%lld, %lld) is empty: end must be greater than start", (long long)lo,
                   (long long)hi);
        return sema_error();
    }
    if (lo < INT32_MIN || hi - 1 > INT32_MAX) {
        diag_error(S->d, call->loc, "arange(%lld, %lld) does not fit in i32", (long long)lo, (long long)hi);
        return sema_error();
    }
    int64_t n = hi - lo;
    if (!sema_is_pow2(n)) {
        diag_error(S->d, call->loc, "arange length %lld (end - start) is not a power of two", (long long)n);
        return sema_error();
    }
    if (!sema_numel_ok(S, n, call->loc) || !sema_need_fn(S, call, bi)) return sema_error();
    ir_type t = ir_shaped(ir_scalar(DT_I32), 1, (int32_t[]){(int32_t)n});
    ir_inst *i = sema_inst(S, IR_ARANGE, call->loc, NULL, 0, &t, 1, 0);
    if (!i) return sema_error();
    i->ival = lo;
    i->ival2 = hi;
    return sema_value(i->results[0]);
}

/* zeros(shape, dtype), full(shape, value, dtype) */
sema_val sema_builtin_fill(sema *S, ast_node *call, ast_node **a, const sema_builtin *bi) {
    bool is_full = bi->op == IR_SPLAT;
    ir_type shape, dt;
    if (!sema_shape_arg(S, a[0], bi, &shape)) return sema_error();
    sema_val v = is_full ? sema_numeric_arg(S, a[1], bi, "the value") : sema_weak_int(0);
    if (!sema_dtype_arg(S, a[is_full ? 2 : 1], bi, &dt) || v.kind == SV_ERROR) return sema_error();
    if (sema_type_of(v).rank > 0 || v.type.dtype == DT_PTR) {
        diag_error(S->d, a[1]->loc, "the value of 'full' must be a scalar number, got %s", sema_type_str(S, v));
        return sema_error();
    }
    if (!sema_need_fn(S, call, bi)) return sema_error();
    return sema_value(sema_cast_to(S, v, dt, shape, is_full ? a[1]->loc : call->loc));
}

/* ---- shape ops ---- */

/* The block or a scalar value (materialised) of a shape op. */
static sema_val value_arg(sema *S, ast_node *n, const sema_builtin *bi) {
    sema_val v = sema_numeric_arg(S, n, bi, "the argument");
    if (v.kind == SV_CONST) v = sema_value(sema_materialize(S, v, n->loc));
    return v;
}

static sema_val permute_to(sema *S, ir_value *v, const int *perm, blk_loc loc) {
    int32_t s[IR_MAX_RANK];
    for (int k = 0; k < v->type.rank; k++) s[k] = v->type.shape[perm[k]];
    ir_type t = ir_shaped(v->type, v->type.rank, s);
    ir_inst *i = sema_inst(S, IR_PERMUTE, loc, &v, 1, &t, 1, 0);
    if (!i) return sema_error();
    for (int k = 0; k < v->type.rank; k++) i->perm[k] = perm[k];
    return sema_value(i->results[0]);
}

/* trans(x): a 2-D transpose */
sema_val sema_builtin_trans(sema *S, ast_node *call, ast_node **a, const sema_builtin *bi) {
    sema_val x = sema_block_arg(S, a[0], bi);
    if (x.kind == SV_ERROR) return x;
    if (x.type.rank != 2) {
        diag_error(S->d, a[0]->loc, "'trans' needs a 2-D block, got %s; use permute for other ranks",
                   sema_type_str(S, x));
        return sema_error();
    }
    return permute_to(S, x.v, (int[]){1, 0}, call->loc);
}

/* permute(x, dims) */
sema_val sema_builtin_permute(sema *S, ast_node *call, ast_node **a, const sema_builtin *bi) {
    sema_val x = sema_block_arg(S, a[0], bi);
    if (x.kind == SV_ERROR) return x;
    sema_val d = sema_arg(S, a[1]);
    if (d.kind == SV_ERROR) return d;
    int perm[IR_MAX_RANK];
    bool used[IR_MAX_RANK] = {false};
    bool ok = (d.kind == SV_LIST || d.kind == SV_TUPLE) && d.n == x.type.rank;
    for (int k = 0; ok && k < d.n; k++) {
        ok = sema_is_const_int(d.elems[k]) && d.elems[k].i >= 0 && d.elems[k].i < x.type.rank && !used[d.elems[k].i];
        if (ok) {
            perm[k] = (int)d.elems[k].i;
            used[perm[k]] = true;
        }
    }
    if (!ok) {
        diag_error(S->d, a[1]->loc, "the dims of 'permute' must be a permutation of 0..%d, like [1, 0]", x.type.rank - 1);
        return sema_error();
    }
    return permute_to(S, x.v, perm, call->loc);
}

/* reshape(x, shape) */
sema_val sema_builtin_reshape(sema *S, ast_node *call, ast_node **a, const sema_builtin *bi) {
    sema_val x = value_arg(S, a[0], bi);
    ir_type shape;
    if (x.kind == SV_ERROR || !sema_shape_arg(S, a[1], bi, &shape)) return sema_error();
    if (ir_numel(x.type) != ir_numel(shape)) {
        diag_error(S->d, a[1]->loc, "cannot reshape %s (%lld elements) to %lld elements", sema_type_str(S, x),
                   (long long)ir_numel(x.type), (long long)ir_numel(shape));
        return sema_error();
    }
    ir_type t = ir_shaped(x.type, shape.rank, shape.shape);
    if (ir_shape_eq(x.type, t)) return x;
    return sema_value(sema_op1(S, x.type.rank == 0 ? IR_SPLAT : IR_RESHAPE, call->loc, t, x.v));
}

/* broadcast_to(x, shape) */
sema_val sema_builtin_broadcast_to(sema *S, ast_node *call, ast_node **a, const sema_builtin *bi) {
    sema_val x = value_arg(S, a[0], bi);
    ir_type shape, s;
    if (x.kind == SV_ERROR || !sema_shape_arg(S, a[1], bi, &shape)) return sema_error();
    if (!sema_broadcast_shape(x.type, shape, &s) || !ir_shape_eq(s, shape)) {
        diag_error(S->d, a[1]->loc, "cannot broadcast %s to shape %s", sema_type_str(S, x),
                   sema_ir_type_str(S, ir_shaped(x.type, shape.rank, shape.shape)));
        return sema_error();
    }
    return sema_value(sema_broadcast_ir(S, x.v, shape, call->loc));
}

/* expand_dims(x, axis) */
sema_val sema_builtin_expand_dims(sema *S, ast_node *call, ast_node **a, const sema_builtin *bi) {
    sema_val x = value_arg(S, a[0], bi);
    int64_t ax;
    if (x.kind == SV_ERROR || !sema_const_int_arg(S, a[1], bi, "the axis", &ax)) return sema_error();
    int r = x.type.rank;
    if (ax < -(r + 1) || ax > r) {
        diag_error(S->d, a[1]->loc, "axis %lld is out of range for expand_dims of %s", (long long)ax, sema_type_str(S, x));
        return sema_error();
    }
    if (r + 1 > IR_MAX_RANK) {
        diag_error(S->d, call->loc, "a block has at most %d dimensions", IR_MAX_RANK);
        return sema_error();
    }
    int axis = (int)(ax < 0 ? ax + r + 1 : ax);
    if (r == 0) return sema_value(sema_op1(S, IR_SPLAT, call->loc, ir_shaped(x.type, 1, (int32_t[]){1}), x.v));
    int32_t s[IR_MAX_RANK];
    for (int d = 0, j = 0; d <= r; d++) s[d] = d == axis ? 1 : x.type.shape[j++];
    ir_type t = ir_shaped(x.type, r + 1, s);
    ir_inst *i = sema_inst(S, IR_EXPAND_DIMS, call->loc, &x.v, 1, &t, 1, 0);
    if (!i) return sema_error();
    i->axis = axis;
    return sema_value(i->results[0]);
}

/* Two operands of one dtype and shape (join, cat). */
static bool same_pair(sema *S, ast_node *call, ast_node **a, const sema_builtin *bi, bool broadcast, ir_value **x,
                      ir_value **y) {
    sema_val v[2] = {sema_numeric_arg(S, a[0], bi, "an argument"), sema_numeric_arg(S, a[1], bi, "an argument")};
    if (v[0].kind == SV_ERROR || v[1].kind == SV_ERROR) return false;
    bool weak;
    int dt = v[0].type.dtype == DT_PTR && v[1].type.dtype == DT_PTR && ir_type_eq(ir_elem(v[0].type), ir_elem(v[1].type))
                 ? DT_PTR : sema_promote(v[0], v[1], &weak);
    if (dt < 0) {
        diag_error(S->d, call->loc, "invalid arguments to '%s': %s and %s", bi->name, sema_type_str(S, v[0]),
                   sema_type_str(S, v[1]));
        return false;
    }
    if (dt != DT_PTR && weak) dt = dtype_is_float((blk_dtype)dt) ? DT_F32 : DT_I32;
    ir_type shape;
    if (broadcast) {
        if (!sema_broadcast_all(S, v, a, 2, &shape)) return false;
    } else {
        ir_type ta = sema_type_of(v[0]), tb = sema_type_of(v[1]);
        if (ta.rank != tb.rank || ta.rank == 0) {
            diag_error(S->d, call->loc, "'%s' needs two blocks of the same rank, got %s and %s", bi->name,
                       sema_type_str(S, v[0]), sema_type_str(S, v[1]));
            return false;
        }
    }
    for (int k = 0; k < 2; k++) {
        ir_type s = broadcast ? shape : sema_type_of(v[k]);
        ir_value *r = dt == DT_PTR ? sema_broadcast_ir(S, v[k].v, s, a[k]->loc)
                                   : sema_convert(S, v[k], (blk_dtype)dt, s, a[k]->loc);
        if (!r) return false;
        if (k) *y = r;
        else *x = r;
    }
    return true;
}

/* join(a, b): S + [2] */
sema_val sema_builtin_join(sema *S, ast_node *call, ast_node **a, const sema_builtin *bi) {
    ir_value *x, *y;
    if (!sema_need_fn(S, call, bi) || !same_pair(S, call, a, bi, true, &x, &y)) return sema_error();
    if (x->type.rank + 1 > IR_MAX_RANK) {
        diag_error(S->d, call->loc, "a block has at most %d dimensions", IR_MAX_RANK);
        return sema_error();
    }
    if (!sema_numel_ok(S, 2 * ir_numel(x->type), call->loc)) return sema_error(); /* twice its operands */
    int32_t s[IR_MAX_RANK];
    for (int k = 0; k < x->type.rank; k++) s[k] = x->type.shape[k];
    s[x->type.rank] = 2;
    return sema_value(sema_op2(S, IR_JOIN, call->loc, ir_shaped(x->type, x->type.rank + 1, s), x, y));
}

/* split(x): S + [2] -> (S, S) */
sema_val sema_builtin_split(sema *S, ast_node *call, ast_node **a, const sema_builtin *bi) {
    sema_val x = sema_block_arg(S, a[0], bi);
    if (x.kind == SV_ERROR) return x;
    if (x.type.shape[x.type.rank - 1] != 2) {
        diag_error(S->d, a[0]->loc, "'split' needs a block whose last dimension is 2, got %s", sema_type_str(S, x));
        return sema_error();
    }
    ir_type t = ir_shaped(x.type, x.type.rank - 1, x.type.shape);
    ir_type types[2] = {t, t};
    ir_inst *i = sema_inst(S, IR_SPLIT, call->loc, &x.v, 1, types, 2, 0);
    if (!i) return sema_error();
    sema_val r = {.kind = SV_TUPLE, .n = 2, .elems = ARENA_ARRAY(S->a, sema_val, 2)};
    if (!r.elems) return sema_error();
    r.elems[0] = sema_value(i->results[0]);
    r.elems[1] = sema_value(i->results[1]);
    return r;
}

/* cat(a, b, axis = 0) */
sema_val sema_builtin_cat(sema *S, ast_node *call, ast_node **a, const sema_builtin *bi) {
    ir_value *x, *y;
    if (!sema_need_fn(S, call, bi) || !same_pair(S, call, a, bi, false, &x, &y)) return sema_error();
    int axis = 0;
    if (a[2] && !sema_axis_arg(S, a[2], bi, x->type, &axis)) return sema_error();
    for (int k = 0; k < x->type.rank; k++)
        if (k != axis && x->type.shape[k] != y->type.shape[k]) {
            diag_error(S->d, call->loc, "'cat' along axis %d needs the other dimensions to match: %s and %s", axis,
                       sema_ir_type_str(S, x->type), sema_ir_type_str(S, y->type));
            return sema_error();
        }
    ir_type t = x->type;
    t.shape[axis] += y->type.shape[axis]; /* each at most 2^20: no overflow */
    if (!sema_numel_ok(S, ir_numel(t), call->loc)) return sema_error();
    if (!sema_is_pow2(t.shape[axis])) {
        diag_error(S->d, call->loc, "'cat' result dimension %d is not a power of two", t.shape[axis]);
        return sema_error();
    }
    ir_inst *i = sema_inst(S, IR_CAT, call->loc, (ir_value *[]){x, y}, 2, &t, 1, 0);
    if (!i) return sema_error();
    i->axis = axis;
    return sema_value(i->results[0]);
}


/* builtin_math.c — elementwise math: unary and n-ary functions, integer bits, mulhi,
 * bitcast, float predicates, clamp, where, cdiv.
 */
#include <math.h>
#include <string.h>

#include "sema/builtin.h"

static sema_val emit_flags(ir_value *v, unsigned flags) {
    if (v && v->def) v->def->flags |= flags;
    return sema_value(v);
}

/* ---- math ---- */

static bool float_only(ir_op op) {
    return op != IR_ABS && op != IR_MINIMUM && op != IR_MAXIMUM && op != IR_MULHI;
}

/* abs exp exp2 log log2 sqrt rsqrt sin cos tanh sigmoid erf floor ceil (x; fast) */
sema_val sema_builtin_unary_math(sema *S, ast_node *call, ast_node **a, const sema_builtin *bi) {
    sema_val x = sema_numeric_arg(S, a[0], bi, "the argument");
    bool fast = false;
    if (a[1] && !sema_const_bool_arg(S, a[1], bi, "'fast'", &fast)) return sema_error();
    if (x.kind == SV_ERROR) return x;
    ir_op op = (ir_op)bi->op;
    blk_dtype t = (blk_dtype)x.type.dtype;
    if (t == DT_BOOL || t == DT_PTR) {
        diag_error(S->d, a[0]->loc, "'%s' needs a number, got %s", bi->name, sema_type_str(S, x));
        return sema_error();
    }
    bool to_float = float_only(op) && !dtype_is_float(t);
    if (x.kind == SV_CONST) {
        if (op == IR_ABS && dtype_is_int(t)) {
            sema_i128 v = sema_const_i128(x);
            if (v < 0) v = -v;
            if (x.weak) return sema_weak_int(v);
            if (v > INT64_MAX || (dtype_is_signed(t) && v >= ((sema_i128)1 << (dtype_bits(t) - 1)))) {
                diag_error(S->d, call->loc, "integer overflow in constant expression: abs(%lld) does not fit in %s",
                           (long long)x.i, dtype_name(t));
                return sema_error();
            }
            return sema_int_const(t, false, (int64_t)v);
        }
        ir_scalar_val s;
        s.f = sema_const_f64(x);
        bool weak = x.weak;
        blk_dtype ft = to_float ? DT_F32 : t;
        if (!weak) s = eval_normalize(ft, s);
        ir_scalar_val r = eval_unary(op, weak ? DT_F64 : ft, s);
        return sema_float_const(ft, weak, r.f);
    }
    if (!sema_need_fn(S, call, bi)) return sema_error();
    ir_value *v = x.v;
    if (to_float) v = sema_op1(S, IR_CAST, a[0]->loc, ir_shaped(ir_scalar(DT_F32), v->type.rank, v->type.shape), v);
    return emit_flags(sema_op1(S, op, call->loc, v->type, v), fast ? IRF_FAST : 0);
}

/* Elementwise op over n operands with promotion and broadcasting. */
static sema_val elementwise(sema *S, ast_node *call, const sema_builtin *bi, ir_op op, sema_val *v, ast_node **nodes,
                            int n, bool fast) {
    for (int k = 0; k < n; k++) {
        if (v[k].kind == SV_ERROR) return v[k];
        if (v[k].type.dtype == DT_PTR || (float_only(op) && v[k].type.dtype == DT_BOOL)) {
            diag_error(S->d, nodes[k]->loc, "'%s' needs numbers, got %s", bi->name, sema_type_str(S, v[k]));
            return sema_error();
        }
    }
    bool weak;
    int dt = sema_promote_many(v, n, &weak);
    if (dt < 0) {
        diag_error(S->d, call->loc, "invalid arguments to '%s'", bi->name);
        return sema_error();
    }
    if (float_only(op) && !dtype_is_float((blk_dtype)dt)) dt = DT_F32;
    if (weak && (op == IR_MULHI || op == IR_NEXTAFTER)) { /* literals only: their own types, as at run time */
        weak = false;
        dt = DT_F32;
        if (op == IR_MULHI) {
            dt = DT_I32;
            for (int k = 0; k < n; k++)
                if (!sema_fits(DT_I32, sema_const_i128(v[k]))) dt = DT_I64;
        }
    }
    if (op == IR_NEXTAFTER && dt != DT_F32 && dt != DT_F64) {
        diag_error(S->d, call->loc, "'nextafter' steps in f32 or f64, not %s: convert with `as f32`",
                   dtype_name((blk_dtype)dt));
        return sema_error();
    }
    bool all_const = true;
    for (int k = 0; k < n; k++) all_const &= v[k].kind == SV_CONST;
    if (all_const) {
        if (weak && dtype_is_int((blk_dtype)dt)) { /* minimum/maximum of integer literals */
            sema_i128 x = sema_const_i128(v[0]), y = sema_const_i128(v[1]);
            return sema_weak_int(op == IR_MINIMUM ? (x < y ? x : y) : (x > y ? x : y));
        }
        ir_scalar_val s[3];
        blk_dtype et = weak ? DT_F64 : (blk_dtype)dt;
        for (int k = 0; k < n; k++) {
            sema_val c = v[k];
            if (weak) s[k].f = sema_const_f64(c);
            else {
                if (!sema_const_convert(S, &c, (blk_dtype)dt, nodes[k]->loc)) return sema_error();
                s[k] = dtype_is_float((blk_dtype)dt) ? (ir_scalar_val){.f = c.f} : (ir_scalar_val){.i = c.i};
            }
        }
        ir_scalar_val r = n == 3 ? eval_fma(et, s[0], s[1], s[2]) : eval_binary(op, 0, et, s[0], s[1]);
        if (dtype_is_float((blk_dtype)dt)) return sema_float_const((blk_dtype)dt, weak, r.f);
        sema_val out = {.kind = SV_CONST, .type = ir_scalar((blk_dtype)dt), .i = r.i};
        return out;
    }
    if (!sema_need_fn(S, call, bi)) return sema_error();
    ir_type shape;
    if (!sema_broadcast_all(S, v, nodes, n, &shape)) return sema_error();
    if (weak) dt = DT_F32;
    ir_value *ops[3];
    for (int k = 0; k < n; k++) {
        ops[k] = sema_convert(S, v[k], (blk_dtype)dt, shape, nodes[k]->loc);
        if (!ops[k]) return sema_error();
    }
    ir_type rt = ir_shaped(ir_scalar((blk_dtype)dt), shape.rank, shape.shape);
    ir_inst *i = sema_inst(S, op, call->loc, ops, n, &rt, 1, 0);
    if (!i) return sema_error();
    if (fast) i->flags |= IRF_FAST;
    return sema_value(i->results[0]);
}

/* pow(a, b), minimum(a, b), maximum(a, b), fma(a, b, c) (; fast) */
sema_val sema_builtin_nary_math(sema *S, ast_node *call, ast_node **a, const sema_builtin *bi) {
    int n = bi->op == IR_FMA ? 3 : 2;
    sema_val v[3];
    for (int k = 0; k < n; k++) v[k] = sema_numeric_arg(S, a[k], bi, "an argument");
    bool fast = false;
    if (a[n] && !sema_const_bool_arg(S, a[n], bi, "'fast'", &fast)) return sema_error();
    return elementwise(S, call, bi, (ir_op)bi->op, v, a, n, fast);
}

/* mulhi(a, b): integers only */
sema_val sema_builtin_mulhi(sema *S, ast_node *call, ast_node **a, const sema_builtin *bi) {
    sema_val v[2];
    for (int k = 0; k < 2; k++) {
        v[k] = sema_numeric_arg(S, a[k], bi, "an argument");
        if (v[k].kind == SV_ERROR) return v[k];
        if (!dtype_is_int(v[k].type.dtype)) {
            diag_error(S->d, a[k]->loc, "'mulhi' needs integers, got %s", sema_type_str(S, v[k]));
            return sema_error();
        }
    }
    return elementwise(S, call, bi, IR_MULHI, v, a, 2, false);
}

/* clz popc brev bswap (x): integers; clz and popc count into an i32 */
sema_val sema_builtin_bits(sema *S, ast_node *call, ast_node **a, const sema_builtin *bi) {
    sema_val x = sema_numeric_arg(S, a[0], bi, "the argument");
    if (x.kind == SV_ERROR) return x;
    blk_dtype t = (blk_dtype)x.type.dtype;
    if (!dtype_is_int(t)) {
        diag_error(S->d, a[0]->loc, "'%s' needs an integer, got %s", bi->name, sema_type_str(S, x));
        return sema_error();
    }
    ir_op op = (ir_op)bi->op;
    bool count = op == IR_CLZ || op == IR_POPC;
    if (x.kind == SV_CONST) {
        if (x.weak && !sema_const_convert(S, &x, t, a[0]->loc)) return sema_error();
        ir_scalar_val r = eval_unary(op, t, (ir_scalar_val){.i = x.i});
        return sema_int_const(count ? DT_I32 : t, false, r.i);
    }
    if (!sema_need_fn(S, call, bi)) return sema_error();
    ir_value *r = sema_op1(S, op, call->loc, x.v->type, x.v);
    if (count && r && t != DT_I32) r = sema_op1(S, IR_CAST, call->loc, ir_shaped(ir_scalar(DT_I32), r->type.rank, r->type.shape), r);
    return r ? sema_value(r) : sema_error();
}

/* The signed integer dtype of a float's width (for signbit). */
static blk_dtype int_of_width(int bits) { return bits == 8 ? DT_I8 : bits == 16 ? DT_I16 : bits == 32 ? DT_I32 : DT_I64; }

static ir_value *cmp_ir(sema *S, ir_cmp kind, blk_loc loc, ir_value *x, ir_value *y) {
    ir_type rt = ir_shaped(ir_scalar(DT_BOOL), x->type.rank, x->type.shape);
    ir_value *ops[2] = {x, y};
    ir_inst *i = sema_inst(S, IR_CMP, loc, ops, 2, &rt, 1, 0);
    if (!i) return NULL;
    i->kind = kind;
    return i->results[0];
}

/* isnan isinf isfinite signbit (x): bool; integers are converted to f32.
 * Built from compares (and a bitcast for signbit), so the GPU and the
 * interpreter agree by construction. signbit of a NaN reads its sign bit,
 * which arithmetic leaves unspecified (the GPU's NaN is positive, x86's
 * 0/0 negative). */
sema_val sema_builtin_float_pred(sema *S, ast_node *call, ast_node **a, const sema_builtin *bi) {
    sema_val x = sema_numeric_arg(S, a[0], bi, "the argument");
    if (x.kind == SV_ERROR) return x;
    blk_dtype t = (blk_dtype)x.type.dtype;
    if (t == DT_BOOL || t == DT_PTR) {
        diag_error(S->d, a[0]->loc, "'%s' needs a number, got %s", bi->name, sema_type_str(S, x));
        return sema_error();
    }
    bool is_nan = strcmp(bi->name, "isnan") == 0, is_inf = strcmp(bi->name, "isinf") == 0;
    bool is_sign = strcmp(bi->name, "signbit") == 0; /* else isfinite */
    if (x.kind == SV_CONST) {
        double f = sema_const_f64(x);
        if (!x.weak && !dtype_is_float(t)) f = (float)f;
        return sema_bool_const(is_nan ? isnan(f) : is_inf ? isinf(f) : is_sign ? signbit(f) != 0 : isfinite(f));
    }
    if (!sema_need_fn(S, call, bi)) return sema_error();
    ir_value *v = x.v;
    if (!dtype_is_float(t)) {
        t = DT_F32;
        v = sema_op1(S, IR_CAST, a[0]->loc, ir_shaped(ir_scalar(DT_F32), v->type.rank, v->type.shape), v);
    }
    blk_loc loc = call->loc;
    ir_value *r;
    if (is_nan) { /* x != x */
        r = cmp_ir(S, IR_CMP_NE, loc, v, v);
    } else if (is_sign) { /* the bits as a signed integer are negative */
        blk_dtype it = int_of_width(dtype_bits(t));
        ir_value *bits = sema_op1(S, IR_BITCAST, loc, ir_shaped(ir_scalar(it), v->type.rank, v->type.shape), v);
        ir_value *zero = sema_convert(S, sema_int_const(it, false, 0), it, bits->type, loc);
        r = zero ? cmp_ir(S, IR_CMP_LT, loc, bits, zero) : NULL;
    } else { /* isinf: |x| == inf, isfinite: |x| < inf (false for NaN) */
        ir_value *m = sema_op1(S, IR_ABS, loc, v->type, v);
        ir_value *inf = sema_convert(S, sema_float_const(t, false, INFINITY), t, v->type, loc);
        r = inf ? cmp_ir(S, is_inf ? IR_CMP_EQ : IR_CMP_LT, loc, m, inf) : NULL;
    }
    return r ? sema_value(r) : sema_error();
}

/* bitcast(x, dtype): the same bits as another dtype of the same width */
sema_val sema_builtin_bitcast(sema *S, ast_node *call, ast_node **a, const sema_builtin *bi) {
    sema_val x = sema_numeric_arg(S, a[0], bi, "the argument");
    ir_type to;
    if (!sema_dtype_arg(S, a[1], bi, &to) || x.kind == SV_ERROR) return sema_error();
    blk_dtype from = (blk_dtype)x.type.dtype, tt = (blk_dtype)to.dtype;
    if (from == DT_BOOL || from == DT_PTR || tt == DT_BOOL) {
        diag_error(S->d, from == DT_BOOL || from == DT_PTR ? a[0]->loc : a[1]->loc,
                   "'bitcast' converts between numeric types (bool and pointers use `as`), got %s to %s",
                   sema_type_str(S, x), dtype_name(tt));
        return sema_error();
    }
    if (dtype_bits(from) != dtype_bits(tt)) {
        diag_error(S->d, call->loc, "'bitcast' from %s (%d bits) to %s (%d bits): the widths differ; `as` converts values",
                   dtype_name(from), dtype_bits(from), dtype_name(tt), dtype_bits(tt));
        return sema_error();
    }
    if (x.kind == SV_CONST) {
        if (x.weak && !sema_const_convert(S, &x, from, a[0]->loc)) return sema_error();
        ir_scalar_val in = dtype_is_float(from) ? (ir_scalar_val){.f = x.f} : (ir_scalar_val){.i = x.i};
        ir_scalar_val r = eval_bitcast(from, tt, in);
        return dtype_is_float(tt) ? sema_float_const(tt, false, r.f) : sema_int_const(tt, false, r.i);
    }
    if (!sema_need_fn(S, call, bi)) return sema_error();
    ir_value *r = sema_op1(S, IR_BITCAST, call->loc, ir_shaped(to, x.v->type.rank, x.v->type.shape), x.v);
    return r ? sema_value(r) : sema_error();
}

/* clamp(x, lo, hi) = minimum(maximum(x, lo), hi) */
sema_val sema_builtin_clamp(sema *S, ast_node *call, ast_node **a, const sema_builtin *bi) {
    sema_val v[3];
    for (int k = 0; k < 3; k++) v[k] = sema_numeric_arg(S, a[k], bi, "an argument");
    for (int k = 0; k < 3; k++)
        if (v[k].kind == SV_ERROR) return v[k];
    bool weak;
    int dt = sema_promote_many(v, 3, &weak);
    if (dt < 0 || v[0].type.dtype == DT_BOOL) {
        diag_error(S->d, call->loc, "invalid arguments to 'clamp': %s, %s and %s", sema_type_str(S, v[0]),
                   sema_type_str(S, v[1]), sema_type_str(S, v[2]));
        return sema_error();
    }
    static const sema_builtin max_bi = {"clamp", "", NULL, IR_MAXIMUM, 0, true};
    sema_val lo = elementwise(S, call, &max_bi, IR_MAXIMUM, v, a, 2, false);
    if (lo.kind == SV_ERROR) return lo;
    sema_val w[2] = {lo, v[2]};
    ast_node *wn[2] = {a[0], a[2]};
    return elementwise(S, call, &max_bi, IR_MINIMUM, w, wn, 2, false);
}

/* where(cond, a, b) */
sema_val sema_builtin_where(sema *S, ast_node *call, ast_node **a, const sema_builtin *bi) {
    sema_val c = sema_numeric_arg(S, a[0], bi, "the condition");
    sema_val x = sema_numeric_arg(S, a[1], bi, "an argument"), y = sema_numeric_arg(S, a[2], bi, "an argument");
    if (c.kind == SV_ERROR || x.kind == SV_ERROR || y.kind == SV_ERROR) return sema_error();
    if (c.type.dtype != DT_BOOL) {
        diag_error(S->d, a[0]->loc, "the condition of 'where' must be bool, got %s", sema_type_str(S, c));
        return sema_error();
    }
    bool weak;
    int dt;
    bool ptrs = x.type.dtype == DT_PTR || y.type.dtype == DT_PTR;
    if (ptrs) {
        if (x.kind != SV_VALUE || y.kind != SV_VALUE || !ir_type_eq(ir_elem(x.type), ir_elem(y.type))) {
            diag_error(S->d, call->loc, "'where' cannot choose between %s and %s", sema_type_str(S, x),
                       sema_type_str(S, y));
            return sema_error();
        }
        dt = DT_PTR;
        weak = false;
    } else {
        dt = sema_promote(x, y, &weak);
    }
    if (c.kind == SV_CONST && x.kind == SV_CONST && y.kind == SV_CONST) {
        sema_val r = c.i ? x : y;
        if (!weak && !sema_const_convert(S, &r, (blk_dtype)dt, call->loc)) return sema_error();
        return r;
    }
    if (!sema_need_fn(S, call, bi)) return sema_error();
    sema_val v[3] = {c, x, y};
    ir_type shape;
    if (!sema_broadcast_all(S, v, a, 3, &shape)) return sema_error();
    if (weak) dt = dtype_is_float((blk_dtype)dt) ? DT_F32 : (x.type.dtype == DT_I32 && y.type.dtype == DT_I32 ? DT_I32 : DT_I64);
    ir_value *ops[3] = {sema_convert(S, c, DT_BOOL, shape, a[0]->loc),
                        ptrs ? sema_broadcast_ir(S, x.v, shape, a[1]->loc) : sema_convert(S, x, (blk_dtype)dt, shape, a[1]->loc),
                        ptrs ? sema_broadcast_ir(S, y.v, shape, a[2]->loc) : sema_convert(S, y, (blk_dtype)dt, shape, a[2]->loc)};
    if (!ops[0] || !ops[1] || !ops[2]) return sema_error();
    return sema_value(sema_op3(S, IR_SELECT, call->loc, ops[1]->type, ops[0], ops[1], ops[2]));
}

/* cdiv(a, b) = (a + b - 1) / b on integers; folded on constants */
sema_val sema_builtin_cdiv(sema *S, ast_node *call, ast_node **a, const sema_builtin *bi) {
    sema_val x = sema_numeric_arg(S, a[0], bi, "an argument"), y = sema_numeric_arg(S, a[1], bi, "an argument");
    if (x.kind == SV_ERROR || y.kind == SV_ERROR) return sema_error();
    for (int k = 0; k < 2; k++) {
        sema_val v = k ? y : x;
        if (!dtype_is_int(v.type.dtype)) {
            diag_error(S->d, a[k]->loc, "'cdiv' needs integers, got %s", sema_type_str(S, v));
            return sema_error();
        }
    }
    if (y.kind == SV_CONST && y.i == 0) {
        diag_error(S->d, a[1]->loc, "division by zero in 'cdiv'");
        return sema_error();
    }
    blk_loc loc = call->loc;
    sema_val s = sema_binary(S, TK_PLUS, x, y, loc, a[0], a[1]);
    s = sema_binary(S, TK_MINUS, s, sema_weak_int(1), loc, call, NULL);
    return sema_binary(S, TK_SLASH, s, y, loc, call, a[1]);
}


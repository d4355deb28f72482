/* expr.c — expressions: constant folding, binary and unary operators,
 * casts, indexing, names and fields, type syntax, and sema_expr, the walk
 * over an expression node. A call goes up to call.c (S->up.call).
 *
 * Constant arithmetic is exact: integer overflow is an error (promotion and
 * weak literals: types.c).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "sema/expr.h"

/* The expression walk recurses through these; kept out of line so that
 * sema_expr's own frame stays small (deep expressions, small stacks). */
#define NOINLINE __attribute__((noinline))

/* ---- constant folding ---- */

static bool is_cmp(int op) {
    return op == TK_EQ || op == TK_NE || op == TK_LT || op == TK_LE || op == TK_GT || op == TK_GE;
}

static int cmp_kind(int op) {
    switch (op) {
    case TK_EQ: return IR_CMP_EQ;
    case TK_NE: return IR_CMP_NE;
    case TK_LT: return IR_CMP_LT;
    case TK_LE: return IR_CMP_LE;
    case TK_GT: return IR_CMP_GT;
    default: return IR_CMP_GE;
    }
}

static ir_op arith_op(int op) {
    switch (op) {
    case TK_PLUS: return IR_ADD;
    case TK_MINUS: return IR_SUB;
    case TK_STAR: return IR_MUL;
    case TK_SLASH: return IR_DIV;
    case TK_PERCENT: return IR_REM;
    case TK_AMP: case TK_ANDAND: return IR_AND;
    case TK_PIPE: case TK_OROR: return IR_OR;
    case TK_CARET: return IR_XOR;
    case TK_SHL: return IR_SHL;
    case TK_SHR: return IR_SHR;
    default: return IR_CMP;
    }
}

static sema_val overflow(sema *S, blk_loc loc, sema_val a, sema_val b, int op, const char *type) {
    diag_error(S->d, loc, "integer overflow in constant expression: %s %s %s does not fit in %s", sema_const_str(S, a),
               ast_op_text(op), sema_const_str(S, b), type);
    return sema_error();
}

/* Fold an integer op exactly; the result must fit dtype t (weak: 64 bits). */
static sema_val fold_int(sema *S, int op, sema_val a, sema_val b, blk_dtype t, bool weak, blk_loc loc) {
    sema_i128 x = sema_const_i128(a), y = sema_const_i128(b), r = 0;
    const char *tname = weak ? "64 bits" : dtype_name(t);
    switch (op) {
    case TK_PLUS: r = x + y; break;
    case TK_MINUS: r = x - y; break;
    case TK_STAR: {
        /* |x|, |y| < 2^64: the product fits in 128 bits unless both are large */
        sema_i128 ax = x < 0 ? -x : x, ay = y < 0 ? -y : y;
        if (ax != 0 && ay > ((sema_i128)1 << 126) / ax) return overflow(S, loc, a, b, op, tname);
        r = x * y;
        break;
    }
    case TK_SLASH:
    case TK_PERCENT:
        if (y == 0) {
            diag_error(S->d, loc, "division by zero in constant expression");
            return sema_error();
        }
        r = op == TK_SLASH ? x / y : x % y; /* C: truncate, sign of the dividend */
        break;
    case TK_AMP: r = x & y; break;
    case TK_PIPE: r = x | y; break;
    case TK_CARET: r = x ^ y; break;
    case TK_SHL:
    case TK_SHR:
        if (y < 0) {
            diag_error(S->d, loc, "negative shift amount %s in constant expression", sema_const_str(S, b));
            return sema_error();
        }
        if (op == TK_SHR) {
            r = y >= 127 ? (x < 0 ? -1 : 0) : x >> (int)y;
        } else {
            if (x != 0 && y >= 64) return overflow(S, loc, a, b, op, tname);
            sema_i128 mag = x < 0 ? -x : x;
            __extension__ unsigned __int128 m = (unsigned __int128)mag << (int)(y < 64 ? y : 0);
            if (m >> 126) return overflow(S, loc, a, b, op, tname);
            r = x < 0 ? -(sema_i128)m : (sema_i128)m;
        }
        break;
    default: break;
    }
    if (weak) {
        if (!sema_fits(DT_I64, r) && !sema_fits(DT_U64, r)) return overflow(S, loc, a, b, op, tname);
        return sema_weak_int(r);
    }
    if (!sema_fits(t, r)) {
        /* bitwise ops on unsigned/signed reinterpretations cannot overflow */
        if (op == TK_AMP || op == TK_PIPE || op == TK_CARET || op == TK_SHR) {
            return sema_int_const(t, false, (int64_t)r);
        }
        return overflow(S, loc, a, b, op, tname);
    }
    return sema_int_const(t, false, (int64_t)r);
}

static bool compare(int kind, double x, double y) {
    return kind == IR_CMP_EQ ? x == y : kind == IR_CMP_NE ? x != y : kind == IR_CMP_LT ? x < y
         : kind == IR_CMP_LE ? x <= y : kind == IR_CMP_GT ? x > y : x >= y;
}

static bool compare_int(int kind, sema_i128 x, sema_i128 y) {
    return kind == IR_CMP_EQ ? x == y : kind == IR_CMP_NE ? x != y : kind == IR_CMP_LT ? x < y
         : kind == IR_CMP_LE ? x <= y : kind == IR_CMP_GT ? x > y : x >= y;
}

static sema_val fold_binary(sema *S, int op, sema_val a, sema_val b, blk_dtype t, bool weak, blk_loc loc,
                            blk_loc aloc, blk_loc bloc) {
    if (weak && dtype_is_int(t)) { /* two integer literals: exact */
        if (is_cmp(op)) return sema_bool_const(compare_int(cmp_kind(op), sema_const_i128(a), sema_const_i128(b)));
        return fold_int(S, op, a, b, t, true, loc);
    }
    if (weak) { /* literals with a float among them: double precision until materialised */
        double x = sema_const_f64(a), y = sema_const_f64(b);
        if (is_cmp(op)) return sema_bool_const(compare(cmp_kind(op), x, y));
        ir_scalar_val sx, sy;
        sx.f = x;
        sy.f = y;
        return sema_float_const(DT_F32, true, eval_binary(arith_op(op), 0, DT_F64, sx, sy).f);
    }
    if (!sema_const_convert(S, &a, t, aloc) || !sema_const_convert(S, &b, t, bloc)) return sema_error();
    if (is_cmp(op)) {
        if (dtype_is_float(t)) return sema_bool_const(compare(cmp_kind(op), a.f, b.f));
        return sema_bool_const(compare_int(cmp_kind(op), sema_const_i128(a), sema_const_i128(b)));
    }
    if (t == DT_BOOL) {
        bool x = a.i != 0, y = b.i != 0;
        bool r = op == TK_AMP || op == TK_ANDAND ? (x && y) : op == TK_PIPE || op == TK_OROR ? (x || y) : x != y;
        return sema_bool_const(r);
    }
    if (dtype_is_float(t)) {
        ir_scalar_val r = eval_binary(arith_op(op), 0, t, sema_const_scalar(a), sema_const_scalar(b));
        return sema_float_const(t, false, r.f);
    }
    return fold_int(S, op, a, b, t, false, loc);
}

/* ---- binary operators ---- */

static sema_val invalid_operands(sema *S, int op, sema_val a, sema_val b, blk_loc loc) {
    diag_error(S->d, loc, "invalid operands to '%s': %s and %s", ast_op_text(op), sema_type_str(S, a),
               sema_type_str(S, b));
    return sema_error();
}

static blk_loc node_loc(ast_node *n, blk_loc fallback) { return n ? n->loc : fallback; }

static bool broadcast_pair(sema *S, sema_val a, sema_val b, ir_type *out, blk_loc op_loc, ast_node *lhs,
                           ast_node *rhs) {
    ir_type ta = sema_type_of(a), tb = sema_type_of(b);
    if (!sema_broadcast_shape(ta, tb, out)) {
        diag_error(S->d, op_loc, "cannot broadcast %s and %s", sema_type_str(S, a), sema_type_str(S, b));
        if (lhs) diag_note(S->d, lhs->loc, "left operand is %s", sema_type_str(S, a));
        if (rhs) diag_note(S->d, rhs->loc, "right operand is %s", sema_type_str(S, b));
        return false;
    }
    return sema_numel_ok(S, ir_numel(*out), op_loc);
}

/* pointer + int, int + pointer, pointer - int, pointer comparisons */
static sema_val pointer_binary(sema *S, int op, sema_val a, sema_val b, blk_loc op_loc, ast_node *lhs,
                               ast_node *rhs) {
    bool pa = a.type.dtype == DT_PTR, pb = b.type.dtype == DT_PTR;
    blk_loc aloc = node_loc(lhs, op_loc), bloc = node_loc(rhs, op_loc);
    ir_type shape;
    if (is_cmp(op)) {
        if (!pa || !pb || a.type.pointee != b.type.pointee) return invalid_operands(S, op, a, b, op_loc);
        if (!broadcast_pair(S, a, b, &shape, op_loc, lhs, rhs)) return sema_error();
        ir_value *x = sema_broadcast_ir(S, a.v, shape, aloc), *y = sema_broadcast_ir(S, b.v, shape, bloc);
        ir_value *x2 = y;
        if (!ir_type_eq(x->type, y->type)) /* *const T vs *T */
            x2 = sema_op1(S, IR_CAST, bloc, x->type, y);
        ir_inst *i = sema_inst(S, IR_CMP, op_loc, (ir_value *[]){x, x2}, 2,
                               (ir_type[]){ir_shaped(ir_scalar(DT_BOOL), shape.rank, shape.shape)}, 1, 0);
        if (!i) return sema_error();
        i->kind = cmp_kind(op);
        return sema_value(i->results[0]);
    }
    if (pa && pb) return invalid_operands(S, op, a, b, op_loc);
    if (!(op == TK_PLUS || (op == TK_MINUS && pa))) return invalid_operands(S, op, a, b, op_loc);
    sema_val p = pa ? a : b, off = pa ? b : a;
    blk_loc offloc = pa ? bloc : aloc;
    if (!dtype_is_int(off.type.dtype)) return invalid_operands(S, op, a, b, op_loc);
    if (!broadcast_pair(S, a, b, &shape, op_loc, lhs, rhs)) return sema_error();
    blk_dtype odt = sema_natural_dtype(off);
    if (off.kind == SV_CONST && op == TK_MINUS) { /* p - c == p + (-c) */
        sema_i128 x = -sema_const_i128(off);
        if (!sema_fits(DT_I64, x)) {
            diag_error(S->d, offloc, "pointer offset %s is out of range", sema_const_str(S, off));
            return sema_error();
        }
        off = sema_weak_int(x);
        odt = sema_natural_dtype(off);
    }
    ir_value *o;
    if (off.kind == SV_VALUE && op == TK_MINUS) {
        ir_value *ov = off.v;
        if (dtype_is_unsigned(odt) || dtype_bits(odt) < 64) { /* negate in 64 bits: no wrap-around */
            ov = sema_op1(S, IR_CAST, offloc, ir_shaped(ir_scalar(DT_I64), ov->type.rank, ov->type.shape), ov);
            odt = DT_I64;
        }
        ov = sema_op1(S, IR_NEG, offloc, ov->type, ov);
        o = sema_broadcast_ir(S, ov, shape, offloc);
    } else {
        o = sema_convert(S, off, odt, shape, offloc);
    }
    ir_value *pv = sema_broadcast_ir(S, p.v, shape, pa ? aloc : bloc);
    if (!o || !pv) return sema_error();
    return sema_value(sema_op2(S, IR_PTRADD, op_loc, pv->type, pv, o));
}

sema_val sema_binary(sema *S, int op, sema_val a, sema_val b, blk_loc op_loc, ast_node *lhs, ast_node *rhs) {
    if (a.kind == SV_ERROR || b.kind == SV_ERROR) return sema_error();
    if (a.kind == SV_STRING && b.kind == SV_STRING && (op == TK_EQ || op == TK_NE)) /* const ACT: str */
        return sema_bool_const((a.len == b.len && memcmp(a.str, b.str, (size_t)a.len) == 0) == (op == TK_EQ));
    if (!sema_is_numeric(a) || !sema_is_numeric(b)) return invalid_operands(S, op, a, b, op_loc);
    blk_loc aloc = node_loc(lhs, op_loc), bloc = node_loc(rhs, op_loc);
    if (a.type.dtype == DT_PTR || b.type.dtype == DT_PTR) /* pointers are always run-time values */
        return pointer_binary(S, op, a, b, op_loc, lhs, rhs);
    bool weak;
    int dt = sema_promote(a, b, &weak);
    if (dt < 0) return invalid_operands(S, op, a, b, op_loc);
    blk_dtype t = (blk_dtype)dt;
    switch (op) {
    case TK_PLUS: case TK_MINUS: case TK_STAR: case TK_SLASH: case TK_PERCENT:
        if (t == DT_BOOL) return invalid_operands(S, op, a, b, op_loc);
        break;
    case TK_AMP: case TK_PIPE: case TK_CARET:
        if (dtype_is_float(t)) return invalid_operands(S, op, a, b, op_loc);
        break;
    case TK_SHL: case TK_SHR:
        if (!dtype_is_int(t)) return invalid_operands(S, op, a, b, op_loc);
        break;
    case TK_ANDAND: case TK_OROR:
        if (a.type.dtype != DT_BOOL || b.type.dtype != DT_BOOL) {
            diag_error(S->d, op_loc, "operator '%s' needs bool operands, got %s and %s", ast_op_text(op),
                       sema_type_str(S, a), sema_type_str(S, b));
            return sema_error();
        }
        break;
    default:
        if (!is_cmp(op)) return invalid_operands(S, op, a, b, op_loc);
        break;
    }
    if (a.kind == SV_CONST && b.kind == SV_CONST) return fold_binary(S, op, a, b, t, weak, op_loc, aloc, bloc);
    if (!S->fn) goto not_const;
    if (dtype_is_int(t) && (op == TK_SLASH || op == TK_PERCENT) && b.kind == SV_CONST && b.i == 0)
        diag_warning(S->d, op_loc, "integer division by zero gives an unspecified value");
    ir_type shape;
    if (!broadcast_pair(S, a, b, &shape, op_loc, lhs, rhs)) return sema_error();
    ir_value *x = sema_convert(S, a, t, shape, aloc), *y = sema_convert(S, b, t, shape, bloc);
    if (!x || !y) return sema_error();
    if (is_cmp(op)) {
        ir_inst *i = sema_inst(S, IR_CMP, op_loc, (ir_value *[]){x, y}, 2,
                               (ir_type[]){ir_shaped(ir_scalar(DT_BOOL), shape.rank, shape.shape)}, 1, 0);
        if (!i) return sema_error();
        i->kind = cmp_kind(op);
        return sema_value(i->results[0]);
    }
    return sema_value(sema_op2(S, arith_op(op), op_loc, x->type, x, y));
not_const:
    diag_error(S->d, op_loc, "expression is not a compile-time constant");
    return sema_error();
}

/* ---- unary operators ---- */

NOINLINE static sema_val unary(sema *S, ast_node *e) {
    sema_val x = sema_expr(S, e->lhs);
    if (x.kind == SV_ERROR) return x;
    blk_loc loc = e->op_loc.file >= 0 && e->op_loc.len ? e->op_loc : e->loc;
    int op = e->op;
    blk_dtype t = (blk_dtype)x.type.dtype;
    bool ok = sema_is_numeric(x) && t != DT_PTR;
    if (op == TK_MINUS) ok = ok && t != DT_BOOL;
    else if (op == TK_BANG) ok = ok && t == DT_BOOL;
    else if (op == TK_TILDE) ok = ok && (t == DT_BOOL || dtype_is_int(t));
    else ok = false;
    if (!ok) {
        diag_error(S->d, loc, "invalid operand to unary '%s': %s", ast_op_text(op), sema_type_str(S, x));
        return sema_error();
    }
    if (x.kind == SV_CONST) {
        if (t == DT_BOOL) return sema_bool_const(!x.i);
        if (dtype_is_float(t)) return sema_float_const(t, x.weak, -x.f);
        sema_i128 v = sema_const_i128(x), r = op == TK_MINUS ? -v : -v - 1;
        if (x.weak) {
            if (!sema_fits(DT_I64, r) && !sema_fits(DT_U64, r)) goto overflow;
            return sema_weak_int(r);
        }
        if (op == TK_TILDE) return sema_int_const(t, false, (int64_t)r);
        if (!sema_fits(t, r)) goto overflow;
        return sema_int_const(t, false, (int64_t)r);
    overflow:
        diag_error(S->d, loc, "integer overflow in constant expression: -%s does not fit in %s", sema_const_str(S, x),
                   x.weak ? "64 bits" : dtype_name(t));
        return sema_error();
    }
    ir_op iop = op == TK_MINUS ? IR_NEG : (op == TK_BANG || t == DT_BOOL) ? IR_NOT : IR_BITNOT;
    return sema_value(sema_op1(S, iop, loc, x.v->type, x.v));
}

/* ---- types ---- */

bool sema_type_from_ast(sema *S, ast_node *t, ir_type *out) {
    if (!t) return false;
    switch (t->kind) {
    case AST_NAME:
    case AST_TYPE_SCALAR: {
        int dt = t->name ? dtype_from_name(t->name) : -1;
        if (dt < 0) {
            diag_error(S->d, t->loc, "unknown type '%s'", t->name ? t->name : "?");
            return false;
        }
        *out = ir_scalar((blk_dtype)dt);
        return true;
    }
    case AST_TYPE_PTR: {
        ir_type p;
        if (!sema_type_from_ast(S, t->type, &p)) return false;
        if (p.dtype == DT_PTR || p.rank > 0) {
            diag_error(S->d, t->loc, "a pointer must point to a scalar type, not %s", sema_ir_type_str(S, p));
            return false;
        }
        *out = ir_ptr((blk_dtype)p.dtype, t->is_const);
        return true;
    }
    case AST_TYPE_BLOCK: {
        ir_type e;
        if (!sema_type_from_ast(S, t->type, &e)) return false;
        if (e.rank > 0) {
            diag_error(S->d, t->loc, "block of blocks");
            return false;
        }
        if (t->args.len > IR_MAX_RANK) {
            diag_error(S->d, t->loc, "a block has at most %d dimensions", IR_MAX_RANK);
            return false;
        }
        int32_t dims[IR_MAX_RANK];
        int64_t numel = 1;
        for (int k = 0; k < t->args.len; k++) {
            sema_val d = sema_expr(S, t->args.data[k]);
            if (d.kind == SV_ERROR) return false;
            if (!sema_is_const_int(d) || sema_const_i128(d) <= 0 || sema_const_i128(d) > IR_MAX_NUMEL) {
                diag_error(S->d, t->args.data[k]->loc, "block dimension must be a positive compile-time integer");
                return false;
            }
            dims[k] = (int32_t)d.i;
            numel *= d.i;
            if (numel > IR_MAX_NUMEL) return sema_numel_ok(S, (int64_t)IR_MAX_NUMEL + 1, t->loc);
        }
        *out = ir_shaped(e, t->args.len, dims);
        return true;
    }
    default:
        diag_error(S->d, t->loc, "expected a type");
        return false;
    }
}
/* ---- casts: x as T ---- */

static bool castable(ir_type from, ir_type to) {
    bool fp = from.dtype == DT_PTR, tp = to.dtype == DT_PTR;
    if (fp && tp) return true;
    if (fp) return to.dtype == DT_I64 || to.dtype == DT_U64;
    if (tp) return from.dtype == DT_I64 || from.dtype == DT_U64;
    return true;
}

NOINLINE static sema_val cast_expr(sema *S, ast_node *e) {
    sema_val x = sema_expr(S, e->lhs);
    ir_type to;
    if (!sema_type_from_ast(S, e->type, &to) || x.kind == SV_ERROR) return sema_error();
    blk_loc loc = e->op_loc.file >= 0 && e->op_loc.len ? e->op_loc : e->loc;
    if (to.rank > 0) {
        diag_error(S->d, e->type->loc, "'as' converts the element type; cast to %s, not a block type",
                   dtype_name((blk_dtype)to.dtype));
        return sema_error();
    }
    if (!sema_is_numeric(x)) {
        diag_error(S->d, loc, "cannot cast %s to %s", sema_type_str(S, x), sema_ir_type_str(S, to));
        return sema_error();
    }
    ir_type from = sema_type_of(x);
    if (!castable(from, to) || (x.kind == SV_CONST && to.dtype == DT_PTR && !dtype_is_int(from.dtype))) {
        diag_error(S->d, loc, "cannot cast %s to %s", sema_type_str(S, x), sema_ir_type_str(S, to));
        return sema_error();
    }
    if (x.kind == SV_CONST && to.dtype != DT_PTR) return sema_const_cast(x, to);
    if (!S->fn) {
        diag_error(S->d, loc, "expression is not a compile-time constant");
        return sema_error();
    }
    return sema_value(sema_cast_to(S, x, to, from, loc));
}

/* ---- indexing: x[:, None] ---- */

NOINLINE static sema_val index_expr(sema *S, ast_node *e) {
    sema_val x = sema_expr(S, e->lhs);
    if (x.kind == SV_ERROR) return x;
    if (!sema_is_numeric(x)) {
        diag_error(S->d, e->loc, "cannot index a %s", sema_kind_name(x));
        return sema_error();
    }
    int slices = 0, nones = 0;
    for (int k = 0; k < e->args.len; k++) {
        ast_node *s = e->args.data[k];
        if (s->kind == AST_SLICE) slices++;
        else if (s->kind == AST_NONE) nones++;
        else {
            diag_error(S->d, s->loc, "a subscript must be ':' or None (indexing only reshapes; index memory with "
                       "pointer arithmetic and load)");
            return sema_error();
        }
    }
    ir_type t = sema_type_of(x);
    if (slices != t.rank) {
        diag_error(S->d, e->loc, "%s has %d dimension%s but the subscript has %d ':'", sema_type_str(S, x), t.rank,
                   t.rank == 1 ? "" : "s", slices);
        return sema_error();
    }
    if (t.rank + nones > IR_MAX_RANK) {
        diag_error(S->d, e->loc, "a block has at most %d dimensions", IR_MAX_RANK);
        return sema_error();
    }
    if (nones == 0) return x;
    if (!S->fn) {
        diag_error(S->d, e->loc, "expression is not a compile-time constant");
        return sema_error();
    }
    ir_value *v = sema_materialize(S, x, e->lhs->loc);
    if (t.rank == 0) { /* scalar[None, None]: a block of ones */
        int32_t ones[IR_MAX_RANK] = {1, 1, 1, 1};
        return sema_value(sema_op1(S, IR_SPLAT, e->loc, ir_shaped(v->type, nones, ones), v));
    }
    for (int k = 0, pos = 0; k < e->args.len; k++, pos++) {
        if (e->args.data[k]->kind != AST_NONE) continue;
        ir_type vt = v->type;
        int32_t s[IR_MAX_RANK];
        for (int d = 0, j = 0; d <= vt.rank; d++) s[d] = d == pos ? 1 : vt.shape[j++];
        ir_type nt = ir_shaped(vt, vt.rank + 1, s);
        ir_inst *i = sema_inst(S, IR_EXPAND_DIMS, e->args.data[k]->loc, &v, 1, &nt, 1, 0);
        if (!i) return sema_error();
        i->axis = pos;
        v = i->results[0];
    }
    return sema_value(v);
}

/* ---- names, fields, calls ---- */

NOINLINE static sema_val name_expr(sema *S, ast_node *e) {
    sema_val v;
    sema_binding *b = NULL;
    if (sema_lookup(S, e->name, e->loc, &v, &b)) return v;
    if (sema_builtin_value(e->name, &v)) return v;
    if (sema_is_builtin(e->name)) {
        diag_error(S->d, e->loc, "builtin '%s' can only be called", e->name);
        return sema_error();
    }
    sema_report_undefined(S, e->name, e->loc);
    return sema_error();
}

/* ---- Triton spellings: meet a Triton user where they come from ---- */

/* Triton names that are spelt differently in blk (tl.X, and tl dtypes). */
static const char *const triton_names[][2] = {
    {"float32", "f32"}, {"float16", "f16"}, {"bfloat16", "bf16"}, {"float64", "f64"}, {"float8e4nv", "f8e4m3"},
    {"float8e5", "f8e5m2"}, {"int1", "bool"}, {"int8", "i8"}, {"int16", "i16"}, {"int32", "i32"}, {"int64", "i64"},
    {"uint8", "u8"}, {"uint16", "u16"}, {"uint32", "u32"}, {"uint64", "u64"}, {"constexpr", "const"},
    {"static_print", "print"}, {"device_print", "print"}, {"device_assert", "static_assert"},
    {"math", "the plain builtin"}, {"extra", "the plain builtin"},
};

const char *sema_triton_spelling(const char *name) {
    for (size_t k = 0; k < sizeof triton_names / sizeof triton_names[0]; k++)
        if (strcmp(triton_names[k][0], name) == 0) return triton_names[k][1];
    return NULL;
}

/* `tl.where(...)`, `tl.float32`, `triton.language.X`: blk's builtins and
 * dtypes have no namespace. Reports and returns true if e is such a name
 * (its object an unbound `tl`, `triton` or `libdevice`). */
bool sema_triton_prefix(sema *S, ast_node *e) {
    ast_node *o = e->lhs;
    while (o && o->kind == AST_FIELD) o = o->lhs; /* triton.language.where */
    if (!o || o->kind != AST_NAME) return false;
    const char *ns = o->name;
    if (strcmp(ns, "tl") != 0 && strcmp(ns, "triton") != 0 && strcmp(ns, "libdevice") != 0) return false;
    sema_val v;
    sema_binding *b;
    if (sema_lookup(S, ns, o->loc, &v, &b)) return false; /* a user's own `tl` */
    const char *blk = sema_is_builtin(e->name) || dtype_from_name(e->name) >= 0 ? e->name : NULL;
    if (!blk) blk = sema_triton_spelling(e->name);
    if (blk && strcmp(blk, "const") == 0)
        diag_error(S->d, e->loc, "blk has no '%s.' namespace: a compile-time parameter is written 'const NAME: i32'", ns);
    else if (blk && strcmp(blk, "the plain builtin") == 0)
        diag_error(S->d, e->loc, "blk has no '%s.%s' namespace: math functions are plain builtins (exp, log1p, ...)",
                   ns, e->name);
    else if (blk)
        diag_error(S->d, e->loc, "blk has no '%s.' namespace: write '%s'", ns, blk);
    else
        diag_error(S->d, e->loc, "blk has no '%s.' namespace, and no builtin '%s'", ns, e->name);
    return true;
}

NOINLINE sema_val sema_field_expr(sema *S, ast_node *e) {
    if (sema_triton_prefix(S, e)) return sema_error();
    if (e->lhs && e->lhs->kind == AST_NAME) {
        sema_val m;
        sema_binding *b;
        if (sema_lookup(S, e->lhs->name, e->lhs->loc, &m, &b) && m.kind == SV_MODULE) {
            sema_item *it = sema_unit_lookup_item(S, m.unit, e->name);
            if (!it || it->kind == ITEM_KERNEL) {
                diag_error(S->d, e->loc, "module '%s' has no fn or const named '%s'", e->lhs->name, e->name);
                return sema_error();
            }
            return S->up.item_value(S, it, e->loc);
        }
    }
    sema_val x = sema_expr(S, e->lhs);
    if (x.kind == SV_ERROR) return x;
    if (x.kind == SV_DESC && (strcmp(e->name, "load") == 0 || strcmp(e->name, "store") == 0))
        diag_error(S->d, e->loc, "'%s' of a tensor descriptor must be called: d.%s(...)", e->name, e->name);
    else
        diag_error(S->d, e->loc, "%s has no field '%s'", sema_type_str(S, x), e->name);
    return sema_error();
}

NOINLINE static sema_val elems_expr(sema *S, ast_node *e, sema_kind kind) {
    sema_val r = {.kind = kind, .n = e->args.len};
    r.elems = ARENA_ARRAY(S->a, sema_val, e->args.len + 1);
    if (!r.elems) return sema_error();
    bool bad = false;
    for (int k = 0; k < e->args.len; k++) {
        r.elems[k] = sema_expr(S, e->args.data[k]);
        if (r.elems[k].kind == SV_ERROR) bad = true;
        else if (r.elems[k].kind == SV_VOID) {
            diag_error(S->d, e->args.data[k]->loc, "this expression has no value");
            bad = true;
        }
    }
    return bad ? sema_error() : r;
}

NOINLINE static sema_val type_expr(sema *S, ast_node *e) {
    ir_type t;
    return sema_type_from_ast(S, e, &t) ? (sema_val){.kind = SV_DTYPE, .type = t} : sema_error();
}

/* a OP b — both sides are always evaluated (&& and || too: they are
 * elementwise on blocks) */
NOINLINE static sema_val binary_expr(sema *S, ast_node *e) {
    sema_val a = sema_expr(S, e->lhs);
    sema_val b = sema_expr(S, e->rhs);
    return sema_binary(S, e->op, a, b, e->op_loc.file >= 0 ? e->op_loc : e->loc, e->lhs, e->rhs);
}

sema_val sema_expr(sema *S, ast_node *e) {
    if (!e) return sema_error();
    if (!sema_enter(S, e->loc)) return sema_error();
    sema_val r;
    switch (e->kind) {
    case AST_INT:
        if (e->int_overflow) {
            diag_error(S->d, e->loc, "integer literal is too large (the limit is 2^64 - 1)");
            r = sema_error();
        } else {
            r = sema_weak_int((sema_i128)e->ival);
        }
        break;
    case AST_FLOAT: r = sema_float_const(DT_F32, true, e->fval); break;
    case AST_BOOL: r = sema_bool_const(e->ival != 0); break;
    case AST_STRING:
        r = (sema_val){.kind = SV_STRING, .str = e->str ? e->str : "", .len = e->str_len};
        break;
    case AST_NONE: r = (sema_val){.kind = SV_NONE}; break;
    case AST_NAME: r = name_expr(S, e); break;
    case AST_UNARY: r = unary(S, e); break;
    case AST_BINARY: r = binary_expr(S, e); break;
    case AST_CAST: r = cast_expr(S, e); break;
    case AST_CALL: r = S->up.call(S, e); break;
    case AST_FIELD: r = sema_field_expr(S, e); break;
    case AST_INDEX: r = index_expr(S, e); break;
    case AST_TUPLE: r = elems_expr(S, e, SV_TUPLE); break;
    case AST_LIST: r = elems_expr(S, e, SV_LIST); break;
    case AST_TYPE_SCALAR:
    case AST_TYPE_PTR:
    case AST_TYPE_BLOCK: r = type_expr(S, e); break;
    case AST_NAMED_ARG:
        diag_error(S->d, e->loc, "a named argument is only allowed in a call");
        r = sema_error();
        break;
    case AST_SLICE:
        diag_error(S->d, e->loc, "':' is only allowed in a subscript");
        r = sema_error();
        break;
    case AST_RECORD:
        diag_error(S->d, e->loc, "a record {...} is only allowed in @autotune configs");
        r = sema_error();
        break;
    default:
        diag_error(S->d, e->loc, "expected an expression");
        r = sema_error();
        break;
    }
    sema_leave(S);
    return r;
}

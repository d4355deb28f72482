/* types.c — values and constants: constructors, text for messages, the IR
 * emission helpers, constant conversion, materialisation, implicit
 * conversion and broadcasting, promotion, annotations.
 *
 * Promotion (LANGUAGE.md "Types"), for the two operands of a binary op:
 *   weak literal with a typed operand   the typed operand's dtype, except a
 *                                       float literal with an integer (or
 *                                       bool) operand gives f32
 *   same kind                           the wider; f16 with bf16 gives f32,
 *                                       f8e4m3 with f8e5m2 gives f16;
 *                                       signed with unsigned of one width:
 *                                       unsigned (C)
 *   int with float                      the float type
 *   bool with int/float                 the int/float type
 * A weak integer literal must fit the dtype it adopts ("300 does not fit in
 * i8").
 */
#include <math.h>
#include <string.h>

#include "sema/types.h"

/* ---- value constructors ---- */

sema_val sema_error(void) { return (sema_val){.kind = SV_ERROR}; }
sema_val sema_void(void) { return (sema_val){.kind = SV_VOID}; }

sema_val sema_value(ir_value *v) {
    if (!v) return sema_error();
    return (sema_val){.kind = SV_VALUE, .v = v, .type = v->type};
}

bool sema_fits(blk_dtype t, sema_i128 x) {
    if (t == DT_BOOL) return x == 0 || x == 1;
    int bits = dtype_bits(t);
    if (dtype_is_unsigned(t)) return x >= 0 && x <= (((sema_i128)1 << bits) - 1);
    if (dtype_is_signed(t)) return x >= -((sema_i128)1 << (bits - 1)) && x <= (((sema_i128)1 << (bits - 1)) - 1);
    return false;
}

sema_val sema_int_const(blk_dtype t, bool weak, int64_t v) {
    sema_val r = {.kind = SV_CONST, .weak = weak, .type = ir_scalar(t)};
    ir_scalar_val s;
    s.i = v;
    r.i = eval_normalize(t, s).i;
    return r;
}

sema_val sema_float_const(blk_dtype t, bool weak, double v) {
    sema_val r = {.kind = SV_CONST, .weak = weak, .type = ir_scalar(t)};
    if (weak) {
        r.f = v;
    } else {
        ir_scalar_val s;
        s.f = v;
        r.f = eval_normalize(t, s).f;
    }
    return r;
}

sema_val sema_bool_const(bool b) { return (sema_val){.kind = SV_CONST, .type = ir_scalar(DT_BOOL), .i = b}; }

sema_val sema_fill_results(sema *S, sema_val t, ir_inst *inst) {
    if (t.kind == SV_VALUE) return sema_value(inst && t.i < inst->num_results ? inst->results[t.i] : NULL);
    if (t.kind == SV_TUPLE) {
        sema_val r = t;
        r.elems = ARENA_ARRAY(S->a, sema_val, t.n + 1);
        if (!r.elems) return sema_error();
        for (int k = 0; k < t.n; k++) r.elems[k] = sema_fill_results(S, t.elems[k], inst);
        return r;
    }
    return t;
}

sema_val sema_weak_int(sema_i128 v) {
    blk_dtype t = sema_fits(DT_I32, v) ? DT_I32 : sema_fits(DT_I64, v) ? DT_I64 : DT_U64;
    sema_val r = {.kind = SV_CONST, .weak = true, .type = ir_scalar(t)};
    r.i = (int64_t)(uint64_t)v;
    return r;
}

sema_i128 sema_const_i128(sema_val v) {
    if (dtype_is_unsigned(v.type.dtype)) return (sema_i128)(uint64_t)v.i;
    return (sema_i128)v.i;
}

double sema_const_f64(sema_val v) {
    if (dtype_is_float(v.type.dtype)) return v.f;
    if (dtype_is_unsigned(v.type.dtype)) return (double)(uint64_t)v.i;
    return (double)v.i;
}

bool sema_is_const_int(sema_val v) {
    return v.kind == SV_CONST && (dtype_is_int(v.type.dtype));
}

blk_dtype sema_natural_dtype(sema_val v) { return (blk_dtype)v.type.dtype; }

ir_type sema_type_of(sema_val v) {
    if (v.kind == SV_VALUE) return v.type;
    return ir_elem(v.type);
}

bool sema_is_numeric(sema_val v) { return v.kind == SV_VALUE || v.kind == SV_CONST; }

bool sema_is_pow2(int64_t x) { return x > 0 && (x & (x - 1)) == 0; }

const char *sema_kind_name(sema_val v) {
    switch (v.kind) {
    case SV_ERROR: return "error";
    case SV_VOID: return "no value";
    case SV_VALUE: return "value";
    case SV_CONST: return "constant";
    case SV_TUPLE: return "tuple";
    case SV_LIST: return "list";
    case SV_STRING: return "string";
    case SV_DTYPE: return "type";
    case SV_NONE: return "None";
    case SV_FN: return "fn";
    case SV_MODULE: return "module";
    case SV_DESC: return "tensor descriptor";
    }
    return "?";
}

const char *sema_ir_type_str(sema *S, ir_type t) {
    char buf[128];
    ir_type_str(t, buf, sizeof buf);
    return arena_strdup(S->a, buf);
}

const char *sema_type_str(sema *S, sema_val v) {
    if (v.kind == SV_VALUE || v.kind == SV_DTYPE) return sema_ir_type_str(S, sema_type_of(v));
    if (v.kind == SV_CONST) {
        if (v.weak) return dtype_is_float(v.type.dtype) ? "float literal" : "integer literal";
        return sema_ir_type_str(S, v.type);
    }
    return sema_kind_name(v);
}

/* Text of a constant for messages. */
const char *sema_const_str(sema *S, sema_val v) {
    if (v.type.dtype == DT_BOOL) return v.i ? "true" : "false";
    if (dtype_is_float(v.type.dtype)) return arena_printf(S->a, "%g", v.f);
    if (dtype_is_unsigned(v.type.dtype)) return arena_printf(S->a, "%llu", (unsigned long long)(uint64_t)v.i);
    return arena_printf(S->a, "%lld", (long long)v.i);
}

/* ---- emission ---- */

ir_inst *sema_inst(sema *S, ir_op op, blk_loc loc, ir_value *const *ops, int nops, const ir_type *types,
                   int nres, int nregions) {
    if (!S->fn) return NULL; /* callers check S->fn before emitting; defensive */
    /* The size after inlining: a CALL becomes its callee's body (emit_call
     * adds the callee's expanded size) and a fn's RETURN disappears. */
    bool kernel = S->fn->is_kernel;
    if (op != IR_CALL && (op != IR_RETURN || kernel)) S->fn->expanded++;
    if ((++S->insts > SEMA_MAX_INSTS || (kernel && S->kernels_expanded + S->fn->expanded > SEMA_MAX_INSTS)) &&
        !S->size_reported) {
        S->size_reported = true;
        diag_error(S->d, loc, "program too large: more than %d IR instructions (check static_range trip "
                   "counts and fn calls)", SEMA_MAX_INSTS);
    }
    S->fn->b.loc = loc;
    return ir_build(&S->fn->b, op, ops, nops, types, nres, nregions);
}

ir_value *sema_op1(sema *S, ir_op op, blk_loc loc, ir_type t, ir_value *x) {
    ir_inst *i = sema_inst(S, op, loc, &x, 1, &t, 1, 0);
    return i ? i->results[0] : NULL;
}

ir_value *sema_op2(sema *S, ir_op op, blk_loc loc, ir_type t, ir_value *x, ir_value *y) {
    ir_value *ops[2] = {x, y};
    ir_inst *i = sema_inst(S, op, loc, ops, 2, &t, 1, 0);
    return i ? i->results[0] : NULL;
}

ir_value *sema_op3(sema *S, ir_op op, blk_loc loc, ir_type t, ir_value *x, ir_value *y, ir_value *z) {
    ir_value *ops[3] = {x, y, z};
    ir_inst *i = sema_inst(S, op, loc, ops, 3, &t, 1, 0);
    return i ? i->results[0] : NULL;
}

bool sema_numel_ok(sema *S, int64_t numel, blk_loc loc) {
    if (numel > IR_MAX_NUMEL) {
        diag_error(S->d, loc, "block of %lld elements exceeds the limit of %d elements", (long long)numel, IR_MAX_NUMEL);
        return false;
    }
    return true;
}

/* IR_CONST of type t (scalar or block) holding constant c, which already has t's dtype. */
static ir_value *emit_const(sema *S, sema_val c, ir_type t, blk_loc loc) {
    ir_inst *i = sema_inst(S, IR_CONST, loc, NULL, 0, &t, 1, 0);
    if (!i) return NULL;
    if (dtype_is_float(t.dtype)) {
        ir_scalar_val s;
        s.f = sema_const_f64(c);
        i->fval = eval_normalize((blk_dtype)t.dtype, s).f;
    } else {
        i->ival = c.i;
    }
    return i->results[0];
}

/* ---- constants: conversion ---- */

ir_scalar_val sema_const_scalar(sema_val v) {
    ir_scalar_val s;
    if (dtype_is_float(v.type.dtype)) s.f = v.f;
    else s.i = v.i;
    return s;
}

static sema_val const_from_scalar(blk_dtype t, ir_scalar_val s) {
    sema_val r = {.kind = SV_CONST, .type = ir_scalar(t)};
    if (dtype_is_float(t)) r.f = s.f;
    else r.i = s.i;
    return r;
}

/* `x as T` on a constant: eval_cast semantics (wraps, truncates, saturates). */
sema_val sema_const_cast(sema_val v, ir_type to) {
    blk_dtype from = (blk_dtype)v.type.dtype;
    ir_scalar_val s = sema_const_scalar(v);
    if (v.weak && dtype_is_float(from)) from = DT_F64; /* weak floats hold doubles */
    return const_from_scalar((blk_dtype)to.dtype, eval_cast(from, (blk_dtype)to.dtype, s));
}

bool sema_const_convert(sema *S, sema_val *v, blk_dtype t, blk_loc loc) {
    if (v->type.dtype == t && !v->weak) return true;
    if (v->weak && dtype_is_int(v->type.dtype)) {
        sema_i128 x = sema_const_i128(*v);
        if (dtype_is_int(t) || t == DT_BOOL) {
            if (!sema_fits(t, x)) {
                diag_error(S->d, loc, "integer constant %s does not fit in %s", sema_const_str(S, *v), dtype_name(t));
                return false;
            }
            *v = sema_int_const(t, false, (int64_t)x);
            return true;
        }
        if (dtype_is_float(t)) {
            *v = sema_float_const(t, false, sema_const_f64(*v));
            return true;
        }
    } else if (v->weak && dtype_is_float(v->type.dtype)) {
        if (dtype_is_float(t)) {
            *v = sema_float_const(t, false, v->f);
            return true;
        }
        diag_error(S->d, loc, "float constant %s cannot be converted to %s implicitly; use 'as %s'",
                   sema_const_str(S, *v), dtype_name(t), dtype_name(t));
        return false;
    }
    if (t == DT_PTR) {
        diag_error(S->d, loc, "constant %s cannot be used as a pointer", sema_const_str(S, *v));
        return false;
    }
    *v = sema_const_cast(*v, ir_scalar(t));
    return true;
}

/* ---- materialisation, conversion, broadcasting ---- */

ir_value *sema_broadcast_ir(sema *S, ir_value *v, ir_type shape, blk_loc loc) {
    if (!v) return NULL;
    ir_type t = v->type;
    if (ir_shape_eq(t, shape)) return v;
    if (t.rank == 0) return sema_op1(S, IR_SPLAT, loc, ir_shaped(t, shape.rank, shape.shape), v);
    while (t.rank < shape.rank) { /* numpy: missing leading dims are 1 */
        int32_t s[IR_MAX_RANK];
        s[0] = 1;
        for (int k = 0; k < t.rank; k++) s[k + 1] = t.shape[k];
        ir_type nt = ir_shaped(t, t.rank + 1, s);
        ir_inst *i = sema_inst(S, IR_EXPAND_DIMS, loc, &v, 1, &nt, 1, 0);
        if (!i) return NULL;
        i->axis = 0;
        v = i->results[0];
        t = nt;
    }
    if (ir_shape_eq(t, shape)) return v;
    return sema_op1(S, IR_BROADCAST, loc, ir_shaped(t, shape.rank, shape.shape), v);
}

bool sema_broadcast_shape(ir_type a, ir_type b, ir_type *out) {
    int rank = a.rank > b.rank ? a.rank : b.rank;
    int32_t s[IR_MAX_RANK];
    for (int k = 0; k < rank; k++) {
        int ia = k - (rank - a.rank), ib = k - (rank - b.rank);
        int32_t da = ia >= 0 ? a.shape[ia] : 1, db = ib >= 0 ? b.shape[ib] : 1;
        if (da != db && da != 1 && db != 1) return false;
        s[k] = da == 1 ? db : da;
    }
    *out = ir_shaped(ir_scalar(DT_I32), rank, s);
    return true;
}

ir_value *sema_materialize(sema *S, sema_val v, blk_loc loc) {
    if (v.kind == SV_VALUE) return v.v;
    if (v.kind != SV_CONST) return NULL;
    return emit_const(S, v, ir_elem(v.type), loc);
}

ir_value *sema_convert(sema *S, sema_val v, blk_dtype dt, ir_type shape, blk_loc loc) {
    if (v.kind == SV_CONST) {
        if (!sema_const_convert(S, &v, dt, loc)) return NULL;
        return emit_const(S, v, ir_shaped(ir_scalar(dt), shape.rank, shape.shape), loc);
    }
    if (v.kind != SV_VALUE) return NULL;
    ir_value *x = v.v;
    if (x->type.dtype != dt && dt != DT_PTR)
        x = sema_op1(S, IR_CAST, loc, ir_shaped(ir_scalar(dt), x->type.rank, x->type.shape), x);
    return sema_broadcast_ir(S, x, shape, loc);
}

ir_value *sema_cast_to(sema *S, sema_val v, ir_type elem, ir_type shape, blk_loc loc) {
    elem = ir_elem(elem);
    if (v.kind == SV_CONST) {
        if (elem.dtype == DT_PTR) {
            ir_value *x = emit_const(S, sema_const_cast(v, ir_scalar(DT_I64)), ir_scalar(DT_I64), loc);
            x = sema_op1(S, IR_CAST, loc, elem, x);
            return sema_broadcast_ir(S, x, shape, loc);
        }
        return emit_const(S, sema_const_cast(v, elem), ir_shaped(elem, shape.rank, shape.shape), loc);
    }
    if (v.kind != SV_VALUE) return NULL;
    ir_value *x = v.v;
    if (!ir_type_eq(ir_elem(x->type), elem))
        x = sema_op1(S, IR_CAST, loc, ir_shaped(elem, x->type.rank, x->type.shape), x);
    return sema_broadcast_ir(S, x, shape, loc);
}

/* ---- promotion ---- */

static int float_rank(blk_dtype t) {
    switch (t) {
    case DT_F8E4M3: case DT_F8E5M2: return 1;
    case DT_F16: case DT_BF16: return 2;
    case DT_F32: return 3;
    case DT_F64: return 4;
    default: return 0;
    }
}

static blk_dtype promote_strong(blk_dtype a, blk_dtype b) {
    if (a == b) return a;
    bool fa = dtype_is_float(a), fb = dtype_is_float(b);
    if (fa && fb) {
        int ra = float_rank(a), rb = float_rank(b);
        if (ra != rb) return ra > rb ? a : b;
        return ra == 1 ? DT_F16 : DT_F32; /* f8e4m3+f8e5m2, f16+bf16 */
    }
    if (fa) return a;
    if (fb) return b;
    if (a == DT_BOOL) return b;
    if (b == DT_BOOL) return a;
    int ba = dtype_bits(a), bb = dtype_bits(b);
    if (ba != bb) return ba > bb ? a : b;
    return dtype_is_unsigned(a) ? a : b; /* same width, mixed sign: unsigned */
}

int sema_promote(sema_val a, sema_val b, bool *weak) {
    *weak = false;
    if (!sema_is_numeric(a) || !sema_is_numeric(b)) return -1;
    blk_dtype da = (blk_dtype)a.type.dtype, db = (blk_dtype)b.type.dtype;
    if (da == DT_PTR || db == DT_PTR) return -1;
    bool wa = a.kind == SV_CONST && a.weak, wb = b.kind == SV_CONST && b.weak;
    if (wa && wb) {
        *weak = true;
        if (dtype_is_float(da) || dtype_is_float(db)) return DT_F32;
        return DT_I64; /* weak integer arithmetic; the result picks its natural dtype */
    }
    if (wa || wb) {
        blk_dtype w = wa ? da : db, s = wa ? db : da;
        if (dtype_is_float(s)) return s;
        if (dtype_is_float(w)) return DT_F32;
        if (s == DT_BOOL) return w; /* the literal's natural integer type */
        return s;
    }
    return promote_strong(da, db);
}


/* ---- annotations ---- */

sema_val sema_check_annotation(sema *S, sema_val v, ir_type want, blk_loc loc, const char *what, const char *name) {
    if (v.kind == SV_ERROR) return v;
    const char *wants = sema_ir_type_str(S, want);
    if (!sema_is_numeric(v)) goto mismatch;
    if (v.kind == SV_CONST) {
        if (want.dtype == DT_PTR) goto mismatch;
        if (v.weak) {
            if (!sema_const_convert(S, &v, (blk_dtype)want.dtype, loc)) return sema_error();
        } else if (v.type.dtype != want.dtype) {
            goto mismatch;
        }
        if (want.rank == 0) return v;
        return sema_value(sema_convert(S, v, (blk_dtype)want.dtype, want, loc));
    }
    if (!ir_type_eq(ir_elem(v.v->type), ir_elem(want))) {
        /* *T where *const T is wanted is fine: it only promises less */
        if (!(want.dtype == DT_PTR && v.v->type.dtype == DT_PTR && v.v->type.pointee == want.pointee && want.ptr_const))
            goto mismatch;
    }
    if (want.rank > 0 && !ir_shape_eq(v.v->type, want)) goto mismatch;
    return v;
mismatch:
    diag_error(S->d, loc, "%s '%s' must be %s, got %s", what, name, wants, sema_type_str(S, v));
    return sema_error();
}

/* ---- names that are values: inf, nan, dtype names ---- */

bool sema_builtin_value(const char *name, sema_val *out) {
    if (strcmp(name, "inf") == 0) {
        *out = sema_float_const(DT_F32, true, INFINITY);
        return true;
    }
    if (strcmp(name, "nan") == 0) {
        *out = sema_float_const(DT_F32, true, NAN);
        return true;
    }
    int dt = dtype_from_name(name);
    if (dt >= 0) {
        *out = (sema_val){.kind = SV_DTYPE, .type = ir_scalar((blk_dtype)dt)};
        return true;
    }
    return false;
}

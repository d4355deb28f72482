/* builtin_dot.c — dot: the block matrix product (the tensor cores' op).
 */
#include "sema/builtin.h"

/* ---- dot ---- */

static bool dot_dtype_ok(blk_dtype t) {
    return t == DT_F16 || t == DT_BF16 || t == DT_F8E4M3 || t == DT_F8E5M2 || t == DT_F32 || t == DT_I8;
}

/* dot(a, b, acc?; input_precision) — [M,K] x [K,N] (+ [M,N]) */
sema_val sema_builtin_dot(sema *S, ast_node *call, ast_node **a, const sema_builtin *bi) {
    sema_val x = sema_arg(S, a[0]), y = sema_arg(S, a[1]);
    if (x.kind == SV_ERROR || y.kind == SV_ERROR) return sema_error();
    for (int k = 0; k < 2; k++) {
        sema_val v = k ? y : x;
        if (v.kind != SV_VALUE || v.type.rank != 2) {
            diag_error(S->d, a[k]->loc, "'dot' needs 2-D blocks, got %s", sema_type_str(S, v));
            return sema_error();
        }
        if (!dot_dtype_ok((blk_dtype)v.type.dtype)) {
            diag_error(S->d, a[k]->loc, "'dot' does not support %s operands (f16, bf16, f8e4m3, f8e5m2, f32 or i8)",
                       dtype_name((blk_dtype)v.type.dtype));
            return sema_error();
        }
    }
    blk_dtype ta = (blk_dtype)x.type.dtype, tb = (blk_dtype)y.type.dtype;
    if (ta != tb) {
        diag_error(S->d, a[1]->loc, "the operands of 'dot' must have the same dtype, got %s and %s", dtype_name(ta),
                   dtype_name(tb));
        return sema_error();
    }
    int32_t M = x.type.shape[0], K = x.type.shape[1], K2 = y.type.shape[0], N = y.type.shape[1];
    if (K != K2) {
        diag_error(S->d, a[1]->loc, "'dot' shape mismatch: %s x %s (inner dimensions %d and %d differ)",
                   sema_type_str(S, x), sema_type_str(S, y), K, K2);
        diag_note(S->d, a[0]->loc, "the left operand is %s", sema_type_str(S, x));
        return sema_error();
    }
    if (M < 16 || N < 16 || K < 16) {
        diag_error(S->d, call->loc, "'dot' needs every dimension to be at least 16, got M = %d, N = %d, K = %d", M, N, K);
        return sema_error();
    }
    /* [M, K] and [K, N] are each within the limit, but [M, N] can reach 2^32 */
    if (!sema_numel_ok(S, (int64_t)M * N, call->loc)) return sema_error();
    blk_dtype acc_dt = ta == DT_I8 ? DT_I32 : DT_F32;
    ir_type acc_t = ir_shaped(ir_scalar(acc_dt), 2, (int32_t[]){M, N});
    int prec = 0;
    if (a[3]) {
        static const char *const precs[] = {"tf32", "ieee", NULL};
        prec = sema_string_option(S, a[3], bi, "input precision", precs, "\"tf32\" or \"ieee\"");
        if (!prec) return sema_error();
    }
    ir_value *acc;
    if (a[2]) {
        sema_val c = sema_arg(S, a[2]);
        if (c.kind == SV_ERROR) return c;
        if (c.kind == SV_CONST && (c.weak || c.type.dtype == acc_dt)) {
            acc = sema_convert(S, c, acc_dt, acc_t, a[2]->loc);
        } else if (c.kind == SV_VALUE && ir_type_eq(c.type, acc_t)) {
            acc = c.v;
        } else {
            diag_error(S->d, a[2]->loc, "the accumulator of 'dot' must be %s, got %s", sema_ir_type_str(S, acc_t),
                       sema_type_str(S, c));
            return sema_error();
        }
    } else {
        acc = sema_convert(S, sema_weak_int(0), acc_dt, acc_t, call->loc);
    }
    if (!acc) return sema_error();
    ir_inst *i = sema_inst(S, IR_DOT, call->loc, (ir_value *[]){x.v, y.v, acc}, 3, &acc_t, 1, 0);
    if (!i) return sema_error();
    i->precision = prec == 1 ? IR_PREC_TF32 : prec == 2 ? IR_PREC_IEEE : IR_PREC_DEFAULT;
    return sema_value(i->results[0]);
}


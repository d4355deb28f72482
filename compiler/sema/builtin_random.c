/* builtin_random.c — random numbers: rand, randn, randint (Philox, ir/philox.c).
 */
#include "sema/builtin.h"

/* rand(seed, offsets), randn(seed, offsets), randint(seed, offsets) */
sema_val sema_builtin_random(sema *S, ast_node *call, ast_node **a, const sema_builtin *bi) {
    sema_val seed = sema_numeric_arg(S, a[0], bi, "the seed"), offs = sema_numeric_arg(S, a[1], bi, "the offsets");
    if (seed.kind == SV_ERROR || offs.kind == SV_ERROR) return sema_error();
    if (!dtype_is_int(seed.type.dtype) || sema_type_of(seed).rank > 0) {
        diag_error(S->d, a[0]->loc, "the seed of '%s' must be a scalar integer, got %s", bi->name, sema_type_str(S, seed));
        return sema_error();
    }
    if (!dtype_is_int(offs.type.dtype)) {
        diag_error(S->d, a[1]->loc, "the offsets of '%s' must be integers, got %s", bi->name, sema_type_str(S, offs));
        return sema_error();
    }
    if (!sema_need_fn(S, call, bi)) return sema_error();
    ir_type ot = sema_type_of(offs);
    blk_dtype odt = offs.type.dtype == DT_I32 || offs.type.dtype == DT_U32 ? (blk_dtype)offs.type.dtype : DT_U32;
    if (offs.kind == SV_CONST && offs.weak) odt = DT_I32;
    ir_value *sv = seed.kind == SV_CONST ? sema_cast_to(S, seed, ir_scalar(DT_I64), ir_scalar(DT_I64), a[0]->loc)
                                         : sema_convert(S, seed, DT_I64, ir_scalar(DT_I64), a[0]->loc);
    ir_value *ov = offs.kind == SV_CONST ? sema_cast_to(S, offs, ir_scalar(odt), ot, a[1]->loc)
                                         : sema_convert(S, offs, odt, ot, a[1]->loc);
    if (!sv || !ov) return sema_error();
    blk_dtype rt = bi->op == IR_RANDINT ? DT_U32 : DT_F32;
    return sema_value(sema_op2(S, (ir_op)bi->op, call->loc, ir_shaped(ir_scalar(rt), ot.rank, ot.shape), sv, ov));
}


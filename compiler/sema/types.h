/* types.h — sema's second layer: values and constants, conversions,
 * promotion, broadcasting, and the helpers every later layer emits IR
 * through (types.c). Nothing here evaluates an expression.
 */
#ifndef BLK_SEMA_TYPES_H
#define BLK_SEMA_TYPES_H

#include "sema/scope.h"

/* ---- values and constants ---- */

sema_val sema_error(void);
sema_val sema_void(void);
sema_val sema_value(ir_value *v);
sema_val sema_int_const(blk_dtype t, bool weak, int64_t v);
sema_val sema_float_const(blk_dtype t, bool weak, double v);
sema_val sema_bool_const(bool b);
/* A weak integer constant of any value in [INT64_MIN, UINT64_MAX]. */
sema_val sema_weak_int(sema_i128 v);
/* A result template filled in: each VALUE in t (tuples nested) stands for
 * result t.i of inst (the results of a call, of an if; inst NULL: none). */
sema_val sema_fill_results(sema *S, sema_val t, ir_inst *inst);
sema_i128 sema_const_i128(sema_val v);
bool sema_fits(blk_dtype t, sema_i128 x); /* x is in t's value range */
double sema_const_f64(sema_val v);
bool sema_is_const_int(sema_val v);
/* The dtype a weak constant takes when nothing asks otherwise. */
blk_dtype sema_natural_dtype(sema_val v);
/* The full type of a VALUE or CONST (consts: scalar of natural dtype). */
ir_type sema_type_of(sema_val v);
bool sema_is_numeric(sema_val v); /* VALUE or CONST */
/* A constant's bits as eval.c takes them. */
ir_scalar_val sema_const_scalar(sema_val v);
/* A power of two? */
bool sema_is_pow2(int64_t x);
/* Names usable as values: inf, nan, dtype names. */
bool sema_builtin_value(const char *name, sema_val *out);

/* ---- text for messages ---- */

const char *sema_kind_name(sema_val v);
/* Type text for messages ("f32[128]", "*const bf16", "tuple", ...). */
const char *sema_type_str(sema *S, sema_val v);
const char *sema_ir_type_str(sema *S, ir_type t);
/* Text of a constant ("42", "0.5", "true"). */
const char *sema_const_str(sema *S, sema_val v);

/* ---- emission ---- */

ir_inst *sema_inst(sema *S, ir_op op, blk_loc loc, ir_value *const *ops, int nops, const ir_type *types,
                   int nres, int nregions);
ir_value *sema_op1(sema *S, ir_op op, blk_loc loc, ir_type t, ir_value *x);
ir_value *sema_op2(sema *S, ir_op op, blk_loc loc, ir_type t, ir_value *x, ir_value *y);
ir_value *sema_op3(sema *S, ir_op op, blk_loc loc, ir_type t, ir_value *x, ir_value *y, ir_value *z);
/* A block of numel elements is within IR_MAX_NUMEL; reports at loc if not. */
bool sema_numel_ok(sema *S, int64_t numel, blk_loc loc);

/* ---- conversion, broadcasting, promotion ---- */

/* Run-time form of a VALUE or CONST (weak consts in their natural dtype). */
ir_value *sema_materialize(sema *S, sema_val v, blk_loc loc);
/* Convert a VALUE or CONST to dtype `dt` and shape `shape` (shape must be a
 * broadcast of v's), as an implicit conversion: a weak integer constant must
 * fit. Returns NULL after an error. */
ir_value *sema_convert(sema *S, sema_val v, blk_dtype dt, ir_type shape, blk_loc loc);
/* The same, as a cast (narrowing allowed, float -> int truncates). */
ir_value *sema_cast_to(sema *S, sema_val v, ir_type elem, ir_type shape, blk_loc loc);
/* Convert a constant to dtype t (implicit conversion rules); false after an error. */
bool sema_const_convert(sema *S, sema_val *v, blk_dtype t, blk_loc loc);
sema_val sema_const_cast(sema_val v, ir_type to);
ir_value *sema_broadcast_ir(sema *S, ir_value *v, ir_type shape, blk_loc loc);
/* numpy broadcasting of two shapes; false if incompatible. */
bool sema_broadcast_shape(ir_type a, ir_type b, ir_type *out);
/* The dtype a binary op computes in; -1 if none (then *why says so). */
int sema_promote(sema_val a, sema_val b, bool *weak);
/* Check/convert a value against an annotation; SV_ERROR after an error. */
sema_val sema_check_annotation(sema *S, sema_val v, ir_type want, blk_loc loc, const char *what,
                               const char *name);

#endif

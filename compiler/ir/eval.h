/* eval.h — the scalar semantics of every elementwise op, in one place.
 *
 * The interpreter evaluates blocks element by element with these functions,
 * and canonicalize folds constants with the same ones, so folding can never
 * disagree with execution. Semantics are those stated in ops.def.
 *
 * Representation of one element (ir_scalar_val):
 *   bool, signed ints   .i  (sign-extended to 64 bits, wrapped to the width)
 *   unsigned ints       .u  (zero-extended, wrapped)
 *   floats (any width)  .f  (a double holding a value exactly representable
 *                            in the dtype: f32 values are rounded to float,
 *                            f16/bf16/f8 to their formats)
 *   pointers            .u  (the address)
 */
#ifndef BLK_EVAL_H
#define BLK_EVAL_H

#include "ir.h"

typedef union {
    int64_t i;
    uint64_t u;
    double f;
} ir_scalar_val;

/* Round/wrap a raw value into dtype t's value set (ints: wrap to width and
 * re-extend; floats: round to nearest even into the format). */
ir_scalar_val eval_normalize(blk_dtype t, ir_scalar_val v);

/* Elementwise ops. `t` is the operand dtype (for CMP: the operands' dtype;
 * for PTRADD: offset dtype `t2` and pointee size via `pointee`). Result is in
 * the result dtype's representation. `fast` selects IRF_FAST behaviour (the
 * interpreter may ignore it: exact results are always allowed). */
ir_scalar_val eval_unary(ir_op op, blk_dtype t, ir_scalar_val x);
ir_scalar_val eval_binary(ir_op op, int kind, blk_dtype t, ir_scalar_val x, ir_scalar_val y);
ir_scalar_val eval_ptradd(ir_scalar_val ptr, blk_dtype pointee, blk_dtype offset_t, ir_scalar_val off);
ir_scalar_val eval_fma(blk_dtype t, ir_scalar_val a, ir_scalar_val b, ir_scalar_val c);
ir_scalar_val eval_cast(blk_dtype from, blk_dtype to, ir_scalar_val x);
/* BITCAST between same-width dtypes (no bool, no pointers). */
ir_scalar_val eval_bitcast(blk_dtype from, blk_dtype to, ir_scalar_val x);
/* true if evaluating op on dtype t is defined by these functions (e.g. an
 * int DIV by zero is, giving 0; a float op on a bool is not). */
bool eval_supports(ir_op op, blk_dtype t);

/* Bit-exact conversions between the narrow float formats and float/double,
 * round-to-nearest-even (to f8: saturating to the largest finite value). */
uint16_t fp_f32_to_f16(float x);
float fp_f16_to_f32(uint16_t h);
uint16_t fp_f32_to_bf16(float x);
float fp_bf16_to_f32(uint16_t h);
uint8_t fp_f32_to_f8e4m3(float x);
float fp_f8e4m3_to_f32(uint8_t v);
uint8_t fp_f32_to_f8e5m2(float x);
float fp_f8e5m2_to_f32(uint8_t v);
/* double -> narrow format directly (no double rounding through f32). */
uint16_t fp_f64_to_f16(double x);
uint16_t fp_f64_to_bf16(double x);
uint8_t fp_f64_to_f8e4m3(double x);
uint8_t fp_f64_to_f8e5m2(double x);

/* Memory <-> element: read/write one element of dtype t at p (unaligned ok). */
ir_scalar_val eval_load_mem(blk_dtype t, const void *p);
void eval_store_mem(blk_dtype t, void *p, ir_scalar_val v);

/* Philox4x32-10: counter (c0..c3), key (k0, k1) -> 4 outputs. */
void philox4x32_10(uint32_t ctr[4], const uint32_t key[2], uint32_t out[4]);
/* The blk random functions (see ops.def RAND/RANDN/RANDINT). */
uint32_t blk_randint(uint64_t seed, uint32_t offset);
float blk_rand(uint64_t seed, uint32_t offset);
float blk_randn(uint64_t seed, uint32_t offset);

#endif

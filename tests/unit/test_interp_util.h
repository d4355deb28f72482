/* test_interp_util.h — building small kernels with the IR builder and running
 * them on the interpreter, for the tests/unit/test_interp_*.c programs. */
#ifndef TEST_INTERP_UTIL_H
#define TEST_INTERP_UTIL_H

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "interp/interp.h"
#include "ir/eval.h"

#include "../test_util.h"

/* ---- types ---- */
static inline ir_type T(blk_dtype d) { return ir_scalar(d); }
static inline ir_type TB(blk_dtype d, int rank, ...) {
    int32_t shape[IR_MAX_RANK];
    va_list ap;
    va_start(ap, rank);
    for (int i = 0; i < rank; i++) shape[i] = va_arg(ap, int);
    va_end(ap);
    return ir_shaped(ir_scalar(d), rank, shape);
}
static inline ir_type TP(blk_dtype pointee) { return ir_ptr(pointee, false); }
static inline ir_type with_shape(ir_type elem, ir_type shape_of) { return ir_shaped(elem, shape_of.rank, shape_of.shape); }
static inline ir_type with_dtype(ir_type t, blk_dtype d) {
    ir_type r = with_shape(ir_scalar(d), t);
    return r;
}

/* ---- a kernel under construction ---- */
typedef struct {
    blk_arena *arena;
    ir_module *m;
    ir_func *f;
    ir_builder b;
    blk_diag diag;
} kb;

static inline void kb_init(kb *k, const char *name) {
    k->arena = arena_new();
    diag_init(&k->diag, k->arena);
    k->m = ir_module_new(k->arena);
    k->f = ir_func_new(k->m, name, true, LOC_NONE);
    k->b = (ir_builder){k->f, k->f->body, NULL, LOC_NONE};
}

static inline void kb_free(kb *k) {
    diag_fini(&k->diag);
    arena_free(k->arena);
}

static inline ir_value *kb_param(kb *k, ir_type t, const char *name) { return ir_func_add_param(k->f, t, name); }

static inline blk_status kb_run(kb *k, unsigned gx, unsigned gy, const blk_arg *args, int nargs, FILE *out) {
    unsigned grid[3] = {gx, gy, 1};
    return interp_run(k->f, grid, args, nargs, INTERP_DEFAULT_STEPS, out, &k->diag);
}

static inline const char *kb_diag(kb *k) { return sb_str(&k->diag.out); }

/* ---- values ---- */
static inline ir_value *ci(kb *k, ir_type t, int64_t v) { return ir_b_const_int(&k->b, t, v); }
static inline ir_value *cf(kb *k, ir_type t, double v) { return ir_b_const_float(&k->b, t, v); }
static inline ir_value *c32(kb *k, int64_t v) { return ci(k, T(DT_I32), v); }

static inline ir_value *arange(kb *k, int start, int end) {
    ir_inst *i = ir_build(&k->b, IR_ARANGE, NULL, 0, (ir_type[]){TB(DT_I32, 1, end - start)}, 1, 0);
    i->ival = start;
    i->ival2 = end;
    return i->results[0];
}

static inline ir_value *pid(kb *k, int axis) {
    ir_inst *i = ir_build(&k->b, IR_PROGRAM_ID, NULL, 0, (ir_type[]){T(DT_I32)}, 1, 0);
    i->axis = axis;
    return i->results[0];
}

static inline ir_value *splat(kb *k, ir_value *x, ir_type shape_of) {
    return ir_b1(&k->b, IR_SPLAT, with_shape(ir_elem(x->type), shape_of), x);
}

static inline ir_value *bin(kb *k, ir_op op, ir_value *x, ir_value *y) { return ir_b2(&k->b, op, x->type, x, y); }
static inline ir_value *un(kb *k, ir_op op, ir_value *x) { return ir_b1(&k->b, op, x->type, x); }
static inline ir_value *cmp(kb *k, int kind, ir_value *x, ir_value *y) {
    ir_inst *i = ir_build(&k->b, IR_CMP, (ir_value *[]){x, y}, 2, (ir_type[]){with_dtype(x->type, DT_BOOL)}, 1, 0);
    i->kind = kind;
    return i->results[0];
}
static inline ir_value *cast(kb *k, ir_value *x, blk_dtype to) { return ir_b1(&k->b, IR_CAST, with_dtype(x->type, to), x); }

/* pointer + offsets: a scalar pointer is splatted to the offsets' shape first */
static inline ir_value *ptradd(kb *k, ir_value *p, ir_value *off) {
    if (!ir_is_block(p->type) && ir_is_block(off->type)) p = splat(k, p, off->type);
    return ir_b2(&k->b, IR_PTRADD, p->type, p, off);
}

static inline ir_value *load(kb *k, ir_value *p, ir_value *mask, ir_value *other) {
    ir_value *ops[3] = {p, mask, other};
    int n = other ? 3 : mask ? 2 : 1;
    ir_type rt = with_dtype(p->type, p->type.pointee);
    return ir_build(&k->b, IR_LOAD, ops, n, &rt, 1, 0)->results[0];
}

static inline void store(kb *k, ir_value *p, ir_value *v, ir_value *mask) {
    ir_value *ops[3] = {p, v, mask};
    ir_build(&k->b, IR_STORE, ops, mask ? 3 : 2, NULL, 0, 0);
}

static inline ir_value *expand_dims(kb *k, ir_value *x, int axis) {
    int32_t shape[IR_MAX_RANK];
    int r = 0;
    for (int d = 0; d <= x->type.rank; d++) {
        if (d == axis) shape[r++] = 1;
        if (d < x->type.rank) shape[r++] = x->type.shape[d];
    }
    ir_inst *i = ir_build(&k->b, IR_EXPAND_DIMS, &x, 1, (ir_type[]){ir_shaped(x->type, r, shape)}, 1, 0);
    i->axis = axis;
    return i->results[0];
}

static inline ir_value *broadcast(kb *k, ir_value *x, int rows, int cols) {
    int32_t shape[2] = {rows, cols};
    return ir_b1(&k->b, IR_BROADCAST, ir_shaped(x->type, 2, shape), x);
}

/* Row-major 2-D offsets: rows[:, None] * stride + cols[None, :], i32[R, C]. */
static inline ir_value *offsets_2d(kb *k, ir_value *rows, ir_value *stride, ir_value *cols) {
    int R = rows->type.shape[0], C = cols->type.shape[0];
    ir_value *r = broadcast(k, expand_dims(k, rows, 1), R, C);
    ir_value *c = broadcast(k, expand_dims(k, cols, 0), R, C);
    return bin(k, IR_ADD, bin(k, IR_MUL, r, splat(k, stride, r->type)), c);
}

static inline void yield(kb *k, ir_op op, ir_value **vals, int n) { ir_build(&k->b, op, vals, n, NULL, 0, 0); }

/* Float arrays on the heap with a given byte size, for exact-size arguments. */
static inline float *falloc(size_t n) { return calloc(n ? n : 1, sizeof(float)); }

static uint64_t test_rng = 88172645463325252ull;
static inline uint32_t rnd32(void) { /* xorshift64 */
    test_rng ^= test_rng << 13;
    test_rng ^= test_rng >> 7;
    test_rng ^= test_rng << 17;
    return (uint32_t)(test_rng >> 16);
}
static inline float rndf(void) { return (float)(rnd32() % 2001) / 1000.0f - 1.0f; } /* in [-1, 1] */

#endif

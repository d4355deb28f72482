/* test_ir_canonicalize.c — pass_canonicalize: folding of each op family
 * (against eval.h), exact identities (and the inexact ones it must not do),
 * scoped CSE, DCE, constant ifs, empty fors, dead loop-carried values. Every
 * result must also pass the verifier. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/eval.h"
#include "ir/ir.h"
#include "passes/passes.h"

#include "../test_util.h"

typedef struct {
    blk_arena *arena;
    blk_diag diag;
    ir_module *m;
    ir_func *f;
    ir_builder b;
    blk_strbuf text;
} fx;

static void fx_init(fx *x) {
    x->arena = arena_new();
    diag_init(&x->diag, x->arena);
    x->m = ir_module_new(x->arena);
    x->f = ir_func_new(x->m, "k", true, LOC_NONE);
    x->b = (ir_builder){x->f, x->f->body, NULL, LOC_NONE};
    sb_init(&x->text);
}

static void fx_fini(fx *x) {
    sb_free(&x->text);
    diag_fini(&x->diag);
    arena_free(x->arena);
}

static ir_type S(blk_dtype t) { return ir_scalar(t); }
static ir_type B1(blk_dtype t, int n) { return ir_shaped(ir_scalar(t), 1, (int32_t[]){n}); }
static ir_type B2(blk_dtype t, int n0, int n1) { return ir_shaped(ir_scalar(t), 2, (int32_t[]){n0, n1}); }

static void ret(ir_builder *b) { ir_build(b, IR_RETURN, NULL, 0, NULL, 0, 0); }
static void yield0(ir_func *f, ir_region *r) {
    ir_builder b = {f, r, NULL, LOC_NONE};
    ir_build(&b, IR_YIELD, NULL, 0, NULL, 0, 0);
}

/* store v through a new pointer parameter: keeps v alive */
static ir_inst *sink(fx *x, ir_builder *b, ir_value *v) {
    ir_type pt = ir_shaped(ir_ptr((blk_dtype)v->type.dtype, false), v->type.rank, v->type.shape);
    ir_value *p = ir_func_add_param(x->f, ir_elem(pt), NULL);
    if (v->type.rank) p = ir_b1(b, IR_SPLAT, pt, p);
    ir_value *ops[2] = {p, v};
    return ir_build(b, IR_STORE, ops, 2, NULL, 0, 0);
}

/* Canonicalize, verify, print into x->text. */
static const char *run(fx *x, int line) {
    pass_canonicalize(x->m);
    int problems = ir_verify_module(x->m, &x->diag, "canonicalize");
    sb_free(&x->text);
    ir_print_module(&x->text, x->m);
    if (problems) {
        fprintf(stderr, "%s:%d: IR does not verify after canonicalize:\n%s%s", __FILE__, line, sb_str(&x->diag.out),
                sb_str(&x->text));
        failures++;
    }
    return sb_str(&x->text);
}
#define RUN(x) run((x), __LINE__)

static int count_op(const ir_region *r, ir_op op) {
    int n = 0;
    for (const ir_inst *i = r->first; i; i = i->next) {
        n += i->op == op;
        for (int k = 0; k < i->num_regions; k++) n += count_op(i->regions[k], op);
    }
    return n;
}

/* ---- folding: op over constants gives exactly eval.h's value ---- */

static ir_scalar_val sv_i(int64_t i) { ir_scalar_val v; v.i = i; return v; }
static ir_scalar_val sv_f(double f) { ir_scalar_val v; v.f = f; return v; }

static ir_value *make_const(ir_builder *b, ir_type t, ir_scalar_val v) {
    return dtype_is_float(t.dtype) ? ir_b_const_float(b, t, v.f) : ir_b_const_int(b, t, v.i);
}

static bool same_bits(blk_dtype t, ir_scalar_val a, ir_scalar_val b) {
    if (dtype_is_float(t)) return memcmp(&a.f, &b.f, sizeof a.f) == 0 || (isnan(a.f) && isnan(b.f));
    return a.i == b.i;
}

/* Folds op(a[, b[, c]]) of operand type t (shape `shape`, rank 0 or 1) into
 * a const of type rt and compares with want. */
static void check_fold(ir_op op, int kind, ir_type t, ir_type rt, int nops, ir_scalar_val a, ir_scalar_val b2,
                       ir_scalar_val c, ir_scalar_val want, int line) {
    fx x;
    fx_init(&x);
    ir_value *ops[3];
    ir_scalar_val in[3] = {a, b2, c};
    for (int k = 0; k < nops; k++) ops[k] = make_const(&x.b, op == IR_SELECT && k == 0 ? ir_shaped(S(DT_BOOL), t.rank, t.shape) : t, in[k]);
    ir_inst *i = ir_build(&x.b, op, ops, nops, &rt, 1, 0);
    i->kind = kind;
    ir_inst *st = sink(&x, &x.b, i->results[0]);
    ret(&x.b);
    RUN(&x);
    ir_value *v = st->operands[1];
    ir_scalar_val got;
    bool is_const = v->def && v->def->op == IR_CONST && ir_type_eq(v->type, rt);
    if (is_const) got = dtype_is_float(rt.dtype) ? sv_f(v->def->fval) : sv_i(v->def->ival);
    if (!is_const || !same_bits((blk_dtype)rt.dtype, got, want)) {
        fprintf(stderr, "%s:%d: %s not folded to the expected constant:\n%s", __FILE__, line, ir_op_table[op].name,
                sb_str(&x.text));
        failures++;
    }
    CHECK(count_op(x.f->body, op) == 0);
    fx_fini(&x);
}

#define FOLD1(op, t, rt, a) \
    check_fold(op, 0, t, rt, 1, a, sv_i(0), sv_i(0), eval_unary(op, (blk_dtype)(t).dtype, a), __LINE__)
#define FOLD2(op, kind, t, rt, a, b) \
    check_fold(op, kind, t, rt, 2, a, b, sv_i(0), eval_binary(op, kind, (blk_dtype)(t).dtype, a, b), __LINE__)
#define FOLD_CAST(t, rt, a) \
    check_fold(IR_CAST, 0, t, rt, 1, a, sv_i(0), sv_i(0), eval_cast((blk_dtype)(t).dtype, (blk_dtype)(rt).dtype, a), __LINE__)

static void test_fold_families(void) {
    ir_type i32 = S(DT_I32), u8 = S(DT_U8), f32 = S(DT_F32), f16 = S(DT_F16), bl = S(DT_BOOL);
    ir_type f32b = B1(DT_F32, 64), i32b = B1(DT_I32, 64);
    /* unary */
    FOLD1(IR_NEG, i32, i32, sv_i(INT32_MIN));
    FOLD1(IR_NEG, f32b, f32b, sv_f(0.0));
    FOLD1(IR_ABS, i32, i32, sv_i(-7));
    FOLD1(IR_NOT, bl, bl, sv_i(1));
    FOLD1(IR_BITNOT, u8, u8, sv_i(0x0f));
    FOLD1(IR_EXP, f32, f32, sv_f(1.0));
    FOLD1(IR_SQRT, f32, f32, sv_f(-1.0));
    FOLD1(IR_LOG, f16, f16, sv_f(3.0));
    FOLD1(IR_SIGMOID, f32b, f32b, sv_f(0.5));
    FOLD1(IR_FLOOR, f32, f32, sv_f(-2.5));
    FOLD1(IR_TANH, S(DT_F64), S(DT_F64), sv_f(0.25));
    /* integer arithmetic, including wrap, division by zero and INT_MIN / -1 */
    FOLD2(IR_ADD, 0, i32, i32, sv_i(INT32_MAX), sv_i(1));
    FOLD2(IR_SUB, 0, u8, u8, sv_i(3), sv_i(5));
    FOLD2(IR_MUL, 0, i32b, i32b, sv_i(-6), sv_i(7));
    FOLD2(IR_DIV, 0, i32, i32, sv_i(-7), sv_i(2));
    FOLD2(IR_DIV, 0, i32, i32, sv_i(5), sv_i(0));
    FOLD2(IR_DIV, 0, i32, i32, sv_i(INT32_MIN), sv_i(-1));
    FOLD2(IR_REM, 0, i32, i32, sv_i(-7), sv_i(3));
    FOLD2(IR_MINIMUM, 0, i32, i32, sv_i(-1), sv_i(3));
    /* bitwise and shifts */
    FOLD2(IR_AND, 0, i32, i32, sv_i(0xff0), sv_i(0x0ff));
    FOLD2(IR_OR, 0, bl, bl, sv_i(0), sv_i(1));
    FOLD2(IR_XOR, 0, u8, u8, sv_i(0xaa), sv_i(0xff));
    FOLD2(IR_SHL, 0, i32, i32, sv_i(1), sv_i(40));
    FOLD2(IR_SHR, 0, i32, i32, sv_i(-16), sv_i(2));
    /* float arithmetic rounds to the dtype */
    FOLD2(IR_ADD, 0, f32, f32, sv_f(0.1f), sv_f(0.2f));
    FOLD2(IR_DIV, 0, f32b, f32b, sv_f(1.0), sv_f(0.0));
    FOLD2(IR_MUL, 0, f16, f16, sv_f(300.0), sv_f(300.0));
    FOLD2(IR_POW, 0, f32, f32, sv_f(2.0), sv_f(10.0));
    FOLD2(IR_MAXIMUM, 0, f32, f32, sv_f(NAN), sv_f(1.0));
    FOLD2(IR_REM, 0, f32, f32, sv_f(-7.5), sv_f(2.0));
    /* comparisons give bool */
    FOLD2(IR_CMP, IR_CMP_LT, i32, bl, sv_i(-1), sv_i(1));
    FOLD2(IR_CMP, IR_CMP_LT, S(DT_U32), bl, sv_i(-1), sv_i(1));
    FOLD2(IR_CMP, IR_CMP_NE, f32, bl, sv_f(NAN), sv_f(NAN));
    FOLD2(IR_CMP, IR_CMP_EQ, f32b, B1(DT_BOOL, 64), sv_f(NAN), sv_f(NAN));
    /* fma: one rounding */
    check_fold(IR_FMA, 0, f32, f32, 3, sv_f(0.1f), sv_f(10.0), sv_f(-1.0),
               eval_fma(DT_F32, sv_f(0.1f), sv_f(10.0), sv_f(-1.0)), __LINE__);
    /* select on a constant condition with constant arms */
    check_fold(IR_SELECT, 0, i32b, i32b, 3, sv_i(0), sv_i(4), sv_i(5), sv_i(5), __LINE__);
    /* casts: saturation, rounding, bool */
    FOLD_CAST(f32, i32, sv_f(3e9));
    FOLD_CAST(f32, i32, sv_f(NAN));
    FOLD_CAST(f32, f16, sv_f(70000.0));
    FOLD_CAST(f32, S(DT_F8E4M3), sv_f(1000.0));
    FOLD_CAST(i32, f32, sv_i(16777217));
    FOLD_CAST(i32, u8, sv_i(-1));
    FOLD_CAST(f32, bl, sv_f(0.5));
    FOLD_CAST(S(DT_I64), S(DT_BF16), sv_i(257));
}

/* splat / broadcast / expand_dims / reshape / permute of a constant is a
 * constant; the splatted `a + 1` pattern sema emits folds completely. */
static void test_fold_shapes(void) {
    fx x;
    fx_init(&x);
    ir_value *c = ir_b_const_int(&x.b, S(DT_I32), 3);
    ir_value *s = ir_b1(&x.b, IR_SPLAT, B1(DT_I32, 8), c);
    ir_value *e = ir_b1(&x.b, IR_EXPAND_DIMS, B2(DT_I32, 1, 8), s);
    ir_value *bc = ir_b1(&x.b, IR_BROADCAST, B2(DT_I32, 4, 8), e);
    ir_value *r = ir_b1(&x.b, IR_RESHAPE, B1(DT_I32, 32), bc);
    ir_value *two = ir_b1(&x.b, IR_SPLAT, B1(DT_I32, 32), ir_b_const_int(&x.b, S(DT_I32), 2));
    ir_value *sum = ir_b2(&x.b, IR_MUL, B1(DT_I32, 32), r, two);
    sink(&x, &x.b, sum);
    ret(&x.b);
    CHECK_TEXT(RUN(&x),
               "kernel @k(%0: *i32) num_warps=4 num_stages=3 {\n"
               "  %1 = const 6 : i32[32]\n"
               "  %2 = splat %0 : *i32[32]\n"
               "  store %2, %1\n"
               "  return\n"
               "}\n");
    fx_fini(&x);

    /* a + 1 on a block: add of a splat const stays an add of a const block */
    fx_init(&x);
    ir_value *a = ir_func_add_param(x.f, B1(DT_F32, 16), NULL);
    ir_value *one = ir_b1(&x.b, IR_SPLAT, B1(DT_F32, 16), ir_b_const_float(&x.b, S(DT_F32), 1.0));
    sink(&x, &x.b, ir_b2(&x.b, IR_ADD, B1(DT_F32, 16), one, a));
    ret(&x.b);
    CHECK_TEXT(RUN(&x),
               "kernel @k(%0: f32[16], %1: *f32) num_warps=4 num_stages=3 {\n"
               "  %2 = const 1.0 : f32[16]\n"
               "  %3 = add %0, %2 : f32[16]\n"
               "  %4 = splat %1 : *f32[16]\n"
               "  store %4, %3\n"
               "  return\n"
               "}\n");
    fx_fini(&x);
}

/* ---- identities ---- */

/* op(x, c) with x a parameter: must become `want_x ? x : a const of value
 * want_const`, or stay when neither. */
enum { STAYS, GIVES_X, GIVES_CONST };

static void check_identity(ir_op op, int kind, ir_type t, ir_scalar_val c, bool const_left, int expect,
                           int64_t want_const, int line) {
    fx x;
    fx_init(&x);
    ir_value *p = ir_func_add_param(x.f, t, NULL);
    ir_value *cv = make_const(&x.b, t, c);
    ir_type rt = op == IR_CMP ? ir_shaped(S(DT_BOOL), t.rank, t.shape) : t;
    ir_value *v = const_left ? ir_b2(&x.b, op, rt, cv, p) : ir_b2(&x.b, op, rt, p, cv);
    v->def->kind = kind;
    ir_inst *st = sink(&x, &x.b, v);
    ret(&x.b);
    RUN(&x);
    ir_value *got = st->operands[1];
    bool ok;
    if (expect == GIVES_X) ok = got == p;
    else if (expect == GIVES_CONST) ok = got->def && got->def->op == IR_CONST && got->def->ival == want_const;
    else ok = got->def && got->def->op == op;
    if (!ok) {
        fprintf(stderr, "%s:%d: identity on %s: unexpected result\n%s", __FILE__, line, ir_op_table[op].name,
                sb_str(&x.text));
        failures++;
    }
    fx_fini(&x);
}
#define ID(op, t, c, left, expect) check_identity(op, 0, t, c, left, expect, 0, __LINE__)
#define ID_CONST(op, t, c, left, value) check_identity(op, 0, t, c, left, GIVES_CONST, value, __LINE__)

/* op(x, x) */
static void check_self(ir_op op, int kind, ir_type t, int expect, int64_t want_const, int line) {
    fx x;
    fx_init(&x);
    ir_value *p = ir_func_add_param(x.f, t, NULL);
    ir_type rt = op == IR_CMP ? ir_shaped(S(DT_BOOL), t.rank, t.shape) : t;
    ir_value *v = ir_b2(&x.b, op, rt, p, p);
    v->def->kind = kind;
    ir_inst *st = sink(&x, &x.b, v);
    ret(&x.b);
    RUN(&x);
    ir_value *got = st->operands[1];
    bool ok;
    if (expect == GIVES_X) ok = got == p;
    else if (expect == GIVES_CONST) ok = got->def && got->def->op == IR_CONST && got->def->ival == want_const;
    else ok = got->def && got->def->op == op;
    if (!ok) {
        fprintf(stderr, "%s:%d: %s(x, x): unexpected result\n%s", __FILE__, line, ir_op_table[op].name,
                sb_str(&x.text));
        failures++;
    }
    fx_fini(&x);
}

static void test_identities(void) {
    ir_type i32 = S(DT_I32), f32 = S(DT_F32), bl = S(DT_BOOL), u16b = B1(DT_U16, 8), f32b = B1(DT_F32, 8);
    ID(IR_ADD, i32, sv_i(0), false, GIVES_X);
    ID(IR_ADD, i32, sv_i(0), true, GIVES_X); /* constant moved right first */
    ID(IR_ADD, f32, sv_f(-0.0), false, GIVES_X);
    ID(IR_ADD, f32, sv_f(0.0), false, STAYS); /* -0.0 + 0.0 is +0.0 */
    ID(IR_SUB, i32, sv_i(0), false, GIVES_X);
    ID(IR_SUB, f32b, sv_f(0.0), false, GIVES_X);
    ID(IR_SUB, f32, sv_f(-0.0), false, STAYS);
    ID(IR_SUB, i32, sv_i(0), true, STAYS); /* 0 - x is not x */
    ID(IR_MUL, f32b, sv_f(1.0), true, GIVES_X);
    ID(IR_MUL, i32, sv_i(1), false, GIVES_X);
    ID_CONST(IR_MUL, u16b, sv_i(0), false, 0);
    ID(IR_MUL, f32, sv_f(0.0), false, STAYS); /* NaN * 0, inf * 0 */
    ID(IR_DIV, f32, sv_f(1.0), false, GIVES_X);
    ID(IR_DIV, i32, sv_i(1), true, STAYS);
    ID_CONST(IR_REM, i32, sv_i(1), false, 0);
    ID_CONST(IR_AND, i32, sv_i(0), false, 0);
    ID(IR_AND, i32, sv_i(-1), false, GIVES_X);
    ID(IR_AND, u16b, sv_i(0xffff), true, GIVES_X);
    ID(IR_AND, bl, sv_i(1), false, GIVES_X);
    ID_CONST(IR_AND, bl, sv_i(0), true, 0);
    ID(IR_OR, i32, sv_i(0), false, GIVES_X);
    ID(IR_OR, bl, sv_i(0), false, GIVES_X);
    ID_CONST(IR_OR, bl, sv_i(1), false, 1);
    ID_CONST(IR_OR, i32, sv_i(-1), true, -1);
    ID(IR_XOR, i32, sv_i(0), false, GIVES_X);
    ID(IR_XOR, bl, sv_i(1), false, STAYS);
    ID(IR_SHL, i32, sv_i(0), false, GIVES_X);
    ID(IR_SHR, u16b, sv_i(0), false, GIVES_X);
    ID(IR_SHL, i32, sv_i(1), false, STAYS);
    check_self(IR_AND, 0, i32, GIVES_X, 0, __LINE__);
    check_self(IR_OR, 0, bl, GIVES_X, 0, __LINE__);
    check_self(IR_XOR, 0, u16b, GIVES_CONST, 0, __LINE__);
    check_self(IR_SUB, 0, i32, GIVES_CONST, 0, __LINE__);
    check_self(IR_SUB, 0, f32, STAYS, 0, __LINE__); /* inf - inf */
    check_self(IR_MINIMUM, 0, f32b, GIVES_X, 0, __LINE__);
    check_self(IR_CMP, IR_CMP_LE, i32, GIVES_CONST, 1, __LINE__);
    check_self(IR_CMP, IR_CMP_NE, u16b, GIVES_CONST, 0, __LINE__);
    check_self(IR_CMP, IR_CMP_EQ, f32, STAYS, 0, __LINE__); /* NaN != NaN */
    check_self(IR_ADD, 0, i32, STAYS, 0, __LINE__);
}

/* select, double negation, casts to the same type, shape no-ops */
static void test_unary_identities(void) {
    fx x;
    fx_init(&x);
    ir_value *a = ir_func_add_param(x.f, B1(DT_F32, 8), NULL);
    ir_value *bb = ir_func_add_param(x.f, B1(DT_F32, 8), NULL);
    ir_value *c = ir_func_add_param(x.f, B1(DT_BOOL, 8), NULL);
    ir_value *i = ir_func_add_param(x.f, B1(DT_I32, 8), NULL);
    ir_type f8 = B1(DT_F32, 8);
    ir_value *t = ir_b1(&x.b, IR_SPLAT, B1(DT_BOOL, 8), ir_b_const_int(&x.b, S(DT_BOOL), 1));
    ir_inst *s1 = sink(&x, &x.b, ir_b3(&x.b, IR_SELECT, f8, t, a, bb));
    ir_inst *s2 = sink(&x, &x.b, ir_b3(&x.b, IR_SELECT, f8, c, bb, bb));
    ir_inst *s3 = sink(&x, &x.b, ir_b1(&x.b, IR_NEG, f8, ir_b1(&x.b, IR_NEG, f8, a)));
    ir_inst *s4 = sink(&x, &x.b, ir_b1(&x.b, IR_NOT, B1(DT_BOOL, 8), ir_b1(&x.b, IR_NOT, B1(DT_BOOL, 8), c)));
    ir_inst *s5 = sink(&x, &x.b, ir_b1(&x.b, IR_BITNOT, B1(DT_I32, 8), ir_b1(&x.b, IR_BITNOT, B1(DT_I32, 8), i)));
    ir_inst *s6 = sink(&x, &x.b, ir_b1(&x.b, IR_CAST, f8, a));
    ir_inst *s7 = sink(&x, &x.b, ir_b1(&x.b, IR_BROADCAST, f8, a));
    ir_inst *s8 = sink(&x, &x.b, ir_b1(&x.b, IR_RESHAPE, f8, a));
    ir_inst *s9 = sink(&x, &x.b, ir_b1(&x.b, IR_NEG, f8, a)); /* stays */
    ir_inst *s10 = sink(&x, &x.b, ir_b1(&x.b, IR_CAST, B1(DT_F16, 8), a)); /* stays */
    ret(&x.b);
    RUN(&x);
    CHECK(s1->operands[1] == a);
    CHECK(s2->operands[1] == bb);
    CHECK(s3->operands[1] == a);
    CHECK(s4->operands[1] == c);
    CHECK(s5->operands[1] == i);
    CHECK(s6->operands[1] == a);
    CHECK(s7->operands[1] == a);
    CHECK(s8->operands[1] == a);
    CHECK(s9->operands[1]->def && s9->operands[1]->def->op == IR_NEG);
    CHECK(s10->operands[1]->def && s10->operands[1]->def->op == IR_CAST);
    CHECK(count_op(x.f->body, IR_NEG) == 1);
    CHECK(count_op(x.f->body, IR_NOT) == 0);
    CHECK(count_op(x.f->body, IR_SELECT) == 0);
    fx_fini(&x);
}

/* ---- CSE ---- */

static void test_cse(void) {
    fx x;
    fx_init(&x);
    ir_value *a = ir_func_add_param(x.f, S(DT_I32), NULL);
    ir_value *b = ir_func_add_param(x.f, S(DT_I32), NULL);
    ir_value *c = ir_func_add_param(x.f, S(DT_BOOL), NULL);
    ir_value *s1 = ir_b2(&x.b, IR_ADD, S(DT_I32), a, b);
    ir_value *s2 = ir_b2(&x.b, IR_ADD, S(DT_I32), b, a); /* commutative: same */
    ir_value *d1 = ir_b2(&x.b, IR_SUB, S(DT_I32), a, b);
    ir_value *d2 = ir_b2(&x.b, IR_SUB, S(DT_I32), b, a); /* not the same */
    ir_value *lt = ir_b2(&x.b, IR_CMP, S(DT_BOOL), a, b);
    lt->def->kind = IR_CMP_LT;
    ir_value *gt = ir_b2(&x.b, IR_CMP, S(DT_BOOL), a, b);
    gt->def->kind = IR_CMP_GT; /* attribute differs: not the same */
    ir_value *c1 = ir_b_const_int(&x.b, S(DT_I32), 5);
    ir_value *c2 = ir_b_const_int(&x.b, S(DT_I32), 5);
    ir_value *c3 = ir_b_const_int(&x.b, S(DT_I64), 5); /* type differs */
    ir_value *pr[9] = {s1, s2, d1, d2, lt, gt, c1, c2, c3};
    ir_build(&x.b, IR_PRINT, pr, 9, NULL, 0, 0);
    /* an if: the inner duplicate of an outer value reuses it; a value first
     * computed inside is not visible after the if */
    ir_inst *iff = ir_build(&x.b, IR_IF, &c, 1, NULL, 0, 2);
    ir_builder tb = {x.f, iff->regions[0], NULL, LOC_NONE};
    ir_value *in1 = ir_b2(&tb, IR_ADD, S(DT_I32), a, b);
    ir_value *in2 = ir_b2(&tb, IR_MUL, S(DT_I32), a, b);
    ir_value *ip[2] = {in1, in2};
    ir_build(&tb, IR_PRINT, ip, 2, NULL, 0, 0);
    ir_build(&tb, IR_YIELD, NULL, 0, NULL, 0, 0);
    yield0(x.f, iff->regions[1]);
    ir_value *after = ir_b2(&x.b, IR_MUL, S(DT_I32), a, b);
    ir_build(&x.b, IR_PRINT, &after, 1, NULL, 0, 0);
    ret(&x.b);
    CHECK_TEXT(RUN(&x),
               "kernel @k(%0: i32, %1: i32, %2: bool) num_warps=4 num_stages=3 {\n"
               "  %3 = add %0, %1 : i32\n"
               "  %4 = sub %0, %1 : i32\n"
               "  %5 = sub %1, %0 : i32\n"
               "  %6 = cmp %0, %1 pred=lt : bool\n"
               "  %7 = cmp %0, %1 pred=gt : bool\n"
               "  %8 = const 5 : i32\n"
               "  %9 = const 5 : i64\n"
               "  print %3, %3, %4, %5, %6, %7, %8, %8, %9 prefix=\"\"\n"
               "  if %2 {\n"
               "    %10 = mul %0, %1 : i32\n"
               "    print %3, %10 prefix=\"\"\n"
               "    yield\n"
               "  } else {\n"
               "    yield\n"
               "  }\n"
               "  %11 = mul %0, %1 : i32\n"
               "  print %11 prefix=\"\"\n"
               "  return\n"
               "}\n");
    fx_fini(&x);
}

/* Loads are never CSE'd (a store may come between); combine regions do not
 * reuse values from outside. */
static void test_cse_limits(void) {
    fx x;
    fx_init(&x);
    ir_value *p = ir_func_add_param(x.f, ir_ptr(DT_F32, false), NULL);
    ir_value *v = ir_func_add_param(x.f, B1(DT_F32, 4), NULL);
    ir_value *l1 = ir_build(&x.b, IR_LOAD, &p, 1, (ir_type[]){S(DT_F32)}, 1, 0)->results[0];
    ir_value *l2 = ir_build(&x.b, IR_LOAD, &p, 1, (ir_type[]){S(DT_F32)}, 1, 0)->results[0];
    ir_value *outer = ir_b_const_float(&x.b, S(DT_F32), 2.0);
    ir_inst *rf = ir_build(&x.b, IR_REDUCE_REGION, &v, 1, (ir_type[]){S(DT_F32)}, 1, 1);
    ir_value *ra = ir_region_add_arg(rf->regions[0], S(DT_F32), NULL);
    ir_value *rb = ir_region_add_arg(rf->regions[0], S(DT_F32), NULL);
    ir_builder rbld = {x.f, rf->regions[0], NULL, LOC_NONE};
    ir_value *two = ir_b_const_float(&rbld, S(DT_F32), 2.0);
    ir_value *m = ir_b2(&rbld, IR_MUL, S(DT_F32), ir_b2(&rbld, IR_ADD, S(DT_F32), ra, rb), two);
    ir_build(&rbld, IR_YIELD, &m, 1, NULL, 0, 0);
    ir_value *pr[4] = {l1, l2, outer, rf->results[0]};
    ir_build(&x.b, IR_PRINT, pr, 4, NULL, 0, 0);
    ret(&x.b);
    RUN(&x);
    CHECK(count_op(x.f->body, IR_LOAD) == 2);
    CHECK(count_op(x.f->body, IR_CONST) == 2);
    CHECK(m->def->operands[1] == two);
    fx_fini(&x);
}

/* ---- DCE ---- */

static void test_dce(void) {
    fx x;
    fx_init(&x);
    ir_value *p = ir_func_add_param(x.f, ir_ptr(DT_F32, false), NULL);
    ir_value *n = ir_func_add_param(x.f, S(DT_I32), NULL);
    ir_value *l = ir_build(&x.b, IR_LOAD, &p, 1, (ir_type[]){S(DT_F32)}, 1, 0)->results[0];
    ir_b1(&x.b, IR_EXP, S(DT_F32), l);                             /* dead chain: exp(load) */
    ir_inst *vl = ir_build(&x.b, IR_LOAD, &p, 1, (ir_type[]){S(DT_F32)}, 1, 0);
    vl->flags |= IRF_VOLATILE;                                       /* volatile: stays */
    ir_value *one = ir_b_const_float(&x.b, S(DT_F32), 1.0);
    ir_value *aops[2] = {p, one};
    ir_build(&x.b, IR_ATOMIC_RMW, aops, 2, (ir_type[]){S(DT_F32)}, 1, 0); /* result unused: stays */
    ir_value *cas[3] = {p, one, one};
    ir_build(&x.b, IR_ATOMIC_CAS, cas, 3, (ir_type[]){S(DT_F32)}, 1, 0);
    ir_build(&x.b, IR_PRINT, NULL, 0, NULL, 0, 0)->str = "hi";
    ir_value *sops[2] = {p, one};
    ir_build(&x.b, IR_STORE, sops, 2, NULL, 0, 0);
    /* a pure loop with unused results goes; one that stores stays */
    ir_value *zero = ir_b_const_int(&x.b, S(DT_I32), 0);
    ir_value *c1 = ir_b_const_int(&x.b, S(DT_I32), 1);
    ir_value *fo[4] = {zero, n, c1, zero};
    ir_inst *pure = ir_build(&x.b, IR_FOR, fo, 4, (ir_type[]){S(DT_I32)}, 1, 1);
    ir_value *iv = ir_region_add_arg(pure->regions[0], S(DT_I32), NULL);
    ir_value *acc = ir_region_add_arg(pure->regions[0], S(DT_I32), NULL);
    ir_builder pb = {x.f, pure->regions[0], NULL, LOC_NONE};
    ir_value *nx = ir_b2(&pb, IR_ADD, S(DT_I32), acc, iv);
    ir_build(&pb, IR_YIELD, &nx, 1, NULL, 0, 0);
    ir_value *fo2[3] = {zero, n, c1};
    ir_inst *eff = ir_build(&x.b, IR_FOR, fo2, 3, NULL, 0, 1);
    ir_region_add_arg(eff->regions[0], S(DT_I32), NULL);
    ir_builder eb = {x.f, eff->regions[0], NULL, LOC_NONE};
    ir_build(&eb, IR_STORE, sops, 2, NULL, 0, 0);
    ir_build(&eb, IR_YIELD, NULL, 0, NULL, 0, 0);
    ret(&x.b);
    CHECK_TEXT(RUN(&x),
               "kernel @k(%0: *f32, %1: i32) num_warps=4 num_stages=3 {\n"
               "  %2 = load %0 volatile : f32\n"
               "  %3 = const 1.0 : f32\n"
               "  %4 = atomic_rmw %0, %3 kind=add sem=acq_rel : f32\n"
               "  %5 = atomic_cas %0, %3, %3 sem=acq_rel : f32\n"
               "  print prefix=\"hi\"\n"
               "  store %0, %3\n"
               "  %6 = const 0 : i32\n"
               "  %7 = const 1 : i32\n"
               "  for %6 to %1 step %7 {\n"
               "  ^(%8: i32):\n"
               "    store %0, %3\n"
               "    yield\n"
               "  }\n"
               "  return\n"
               "}\n");
    fx_fini(&x);
}

/* ---- constant ifs, empty fors, dead carried values ---- */

static void test_constant_if(void) {
    fx x;
    fx_init(&x);
    ir_value *a = ir_func_add_param(x.f, S(DT_I32), NULL);
    ir_value *t = ir_b_const_int(&x.b, S(DT_BOOL), 1);
    ir_inst *iff = ir_build(&x.b, IR_IF, &t, 1, (ir_type[]){S(DT_I32)}, 1, 2);
    ir_builder tb = {x.f, iff->regions[0], NULL, LOC_NONE};
    ir_value *two = ir_b_const_int(&tb, S(DT_I32), 2);
    ir_value *m = ir_b2(&tb, IR_MUL, S(DT_I32), a, two);
    ir_build(&tb, IR_YIELD, &m, 1, NULL, 0, 0);
    ir_builder eb = {x.f, iff->regions[1], NULL, LOC_NONE};
    ir_build(&eb, IR_YIELD, &a, 1, NULL, 0, 0);
    sink(&x, &x.b, iff->results[0]);
    ret(&x.b);
    CHECK_TEXT(RUN(&x),
               "kernel @k(%0: i32, %1: *i32) num_warps=4 num_stages=3 {\n"
               "  %2 = const 2 : i32\n"
               "  %3 = mul %0, %2 : i32\n"
               "  store %1, %3\n"
               "  return\n"
               "}\n");
    fx_fini(&x);

    /* the taken region ends in break: the if stays */
    fx_init(&x);
    ir_value *n = ir_func_add_param(x.f, S(DT_I32), NULL);
    ir_value *fo[3] = {n, n, n};
    ir_inst *loop = ir_build(&x.b, IR_FOR, fo, 3, NULL, 0, 1);
    ir_region_add_arg(loop->regions[0], S(DT_I32), NULL);
    ir_builder lb = {x.f, loop->regions[0], NULL, LOC_NONE};
    ir_value *f = ir_b_const_int(&lb, S(DT_BOOL), 0);
    ir_inst *if2 = ir_build(&lb, IR_IF, &f, 1, NULL, 0, 2);
    yield0(x.f, if2->regions[0]);
    ir_builder e2 = {x.f, if2->regions[1], NULL, LOC_NONE};
    ir_build(&e2, IR_BREAK, NULL, 0, NULL, 0, 0);
    ir_build(&lb, IR_PRINT, NULL, 0, NULL, 0, 0);
    ir_build(&lb, IR_YIELD, NULL, 0, NULL, 0, 0);
    ret(&x.b);
    RUN(&x);
    CHECK(count_op(x.f->body, IR_IF) == 1);
    CHECK(count_op(x.f->body, IR_BREAK) == 1);
    fx_fini(&x);
}

static void test_empty_for(void) {
    fx x;
    fx_init(&x);
    ir_value *a = ir_func_add_param(x.f, B1(DT_F32, 4), NULL);
    ir_value *lb = ir_b_const_int(&x.b, S(DT_I32), 10);
    ir_value *ub = ir_b_const_int(&x.b, S(DT_I32), 10);
    ir_value *st = ir_b_const_int(&x.b, S(DT_I32), 1);
    ir_value *fo[4] = {lb, ub, st, a};
    ir_inst *loop = ir_build(&x.b, IR_FOR, fo, 4, (ir_type[]){B1(DT_F32, 4)}, 1, 1);
    ir_region_add_arg(loop->regions[0], S(DT_I32), NULL);
    ir_value *acc = ir_region_add_arg(loop->regions[0], B1(DT_F32, 4), NULL);
    ir_builder bb = {x.f, loop->regions[0], NULL, LOC_NONE};
    ir_build(&bb, IR_PRINT, NULL, 0, NULL, 0, 0);
    ir_value *e = ir_b1(&bb, IR_EXP, B1(DT_F32, 4), acc);
    ir_build(&bb, IR_YIELD, &e, 1, NULL, 0, 0);
    ir_inst *s = sink(&x, &x.b, loop->results[0]);
    /* lb < ub: the loop stays */
    ir_value *ub2 = ir_b_const_int(&x.b, S(DT_I32), 11);
    ir_value *fo2[3] = {lb, ub2, st};
    ir_inst *loop2 = ir_build(&x.b, IR_FOR, fo2, 3, NULL, 0, 1);
    ir_region_add_arg(loop2->regions[0], S(DT_I32), NULL);
    ir_builder b2 = {x.f, loop2->regions[0], NULL, LOC_NONE};
    ir_build(&b2, IR_PRINT, NULL, 0, NULL, 0, 0);
    ir_build(&b2, IR_YIELD, NULL, 0, NULL, 0, 0);
    ret(&x.b);
    RUN(&x);
    CHECK(s->operands[1] == a);
    CHECK(count_op(x.f->body, IR_FOR) == 1);
    CHECK(count_op(x.f->body, IR_EXP) == 0);
    fx_fini(&x);
}

static void test_dead_carried(void) {
    fx x;
    fx_init(&x);
    ir_value *p = ir_func_add_param(x.f, ir_ptr(DT_I32, false), NULL);
    ir_value *n = ir_func_add_param(x.f, S(DT_I32), NULL);
    ir_value *zero = ir_b_const_int(&x.b, S(DT_I32), 0);
    ir_value *one = ir_b_const_int(&x.b, S(DT_I32), 1);
    /* carried: acc (used after), t (overwritten each iteration, unused
     * after), same (passed on unchanged, unused after) */
    ir_value *fo[6] = {zero, n, one, zero, zero, n};
    ir_type tys[3] = {S(DT_I32), S(DT_I32), S(DT_I32)};
    ir_inst *loop = ir_build(&x.b, IR_FOR, fo, 6, tys, 3, 1);
    ir_value *iv = ir_region_add_arg(loop->regions[0], S(DT_I32), "i");
    ir_value *acc = ir_region_add_arg(loop->regions[0], S(DT_I32), "acc");
    ir_region_add_arg(loop->regions[0], S(DT_I32), "t");
    ir_value *same = ir_region_add_arg(loop->regions[0], S(DT_I32), "same");
    ir_builder bb = {x.f, loop->regions[0], NULL, LOC_NONE};
    ir_value *t2 = ir_b2(&bb, IR_MUL, S(DT_I32), iv, iv);
    ir_value *sops[2] = {p, t2};
    ir_build(&bb, IR_STORE, sops, 2, NULL, 0, 0);
    ir_value *acc2 = ir_b2(&bb, IR_ADD, S(DT_I32), acc, iv);
    ir_value *tn = ir_b2(&bb, IR_SHL, S(DT_I32), iv, one); /* only feeds t: dies */
    ir_value *y[3] = {acc2, tn, same};
    ir_build(&bb, IR_YIELD, y, 3, NULL, 0, 0);
    (void)t2;
    sink(&x, &x.b, loop->results[0]);
    ret(&x.b);
    CHECK_TEXT(RUN(&x),
               "kernel @k(%0: *i32, %1: i32, %2: *i32) num_warps=4 num_stages=3 {\n"
               "  %3 = const 0 : i32\n"
               "  %4 = const 1 : i32\n"
               "  %5 = for %3 to %1 step %4 iter(%3) : i32 {\n"
               "  ^(%6: i32, %7: i32):\n"
               "    %8 = mul %6, %6 : i32\n"
               "    store %0, %8\n"
               "    %9 = add %7, %6 : i32\n"
               "    yield %9\n"
               "  }\n"
               "  store %2, %5\n"
               "  return\n"
               "}\n");
    fx_fini(&x);
}

/* Folding reaches a fixpoint through chains and regions: a constant for a
 * loop bound computed from constants, an if whose condition folds. */
static void test_fixpoint(void) {
    fx x;
    fx_init(&x);
    ir_value *p = ir_func_add_param(x.f, ir_ptr(DT_I32, false), NULL);
    ir_value *c4 = ir_b_const_int(&x.b, S(DT_I32), 4);
    ir_value *c8 = ir_b_const_int(&x.b, S(DT_I32), 8);
    ir_value *lt = ir_b2(&x.b, IR_CMP, S(DT_BOOL), c8, c4);
    lt->def->kind = IR_CMP_LT; /* false */
    ir_inst *iff = ir_build(&x.b, IR_IF, &lt, 1, (ir_type[]){S(DT_I32)}, 1, 2);
    ir_builder tb = {x.f, iff->regions[0], NULL, LOC_NONE};
    ir_build(&tb, IR_YIELD, &c4, 1, NULL, 0, 0);
    ir_builder eb = {x.f, iff->regions[1], NULL, LOC_NONE};
    ir_value *s = ir_b2(&eb, IR_SUB, S(DT_I32), c8, c4);
    ir_build(&eb, IR_YIELD, &s, 1, NULL, 0, 0);
    /* for i in 4 .. (if result = 4): empty */
    ir_value *fo[4] = {c4, iff->results[0], c4, c8};
    ir_inst *loop = ir_build(&x.b, IR_FOR, fo, 4, (ir_type[]){S(DT_I32)}, 1, 1);
    ir_region_add_arg(loop->regions[0], S(DT_I32), NULL);
    ir_value *a = ir_region_add_arg(loop->regions[0], S(DT_I32), NULL);
    ir_builder lb = {x.f, loop->regions[0], NULL, LOC_NONE};
    ir_build(&lb, IR_PRINT, NULL, 0, NULL, 0, 0);
    ir_build(&lb, IR_YIELD, &a, 1, NULL, 0, 0);
    ir_value *sops[2] = {p, loop->results[0]};
    ir_build(&x.b, IR_STORE, sops, 2, NULL, 0, 0);
    ret(&x.b);
    CHECK_TEXT(RUN(&x),
               "kernel @k(%0: *i32) num_warps=4 num_stages=3 {\n"
               "  %1 = const 8 : i32\n"
               "  store %0, %1\n"
               "  return\n"
               "}\n");
    fx_fini(&x);
}

/* Canonicalizing twice changes nothing the second time. */
static void test_idempotent(void) {
    fx x;
    fx_init(&x);
    ir_value *a = ir_func_add_param(x.f, B1(DT_F32, 8), NULL);
    ir_value *h = ir_b1(&x.b, IR_SPLAT, B1(DT_F32, 8), ir_b_const_float(&x.b, S(DT_F32), 0.5));
    ir_value *m = ir_b2(&x.b, IR_MUL, B1(DT_F32, 8), h, a);
    ir_value *m2 = ir_b2(&x.b, IR_MUL, B1(DT_F32, 8), a, h);
    sink(&x, &x.b, ir_b2(&x.b, IR_ADD, B1(DT_F32, 8), m, m2));
    ret(&x.b);
    char *first = strdup(RUN(&x));
    CHECK_TEXT(RUN(&x), first);
    CHECK(count_op(x.f->body, IR_MUL) == 1);
    free(first);
    fx_fini(&x);
}

int main(void) {
    test_fold_families();
    test_fold_shapes();
    test_identities();
    test_unary_identities();
    test_cse();
    test_cse_limits();
    test_dce();
    test_constant_if();
    test_empty_for();
    test_dead_carried();
    test_fixpoint();
    test_idempotent();
    return test_finish("test_ir_canonicalize");
}

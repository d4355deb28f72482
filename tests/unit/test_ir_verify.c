/* test_ir_verify.c — the verifier (verify.c) accepts well-formed IR of every
 * op family and rejects each kind of malformed IR with a located message. */
#include <stdio.h>
#include <string.h>

#include "ir/ir.h"

#include "../test_util.h"

/* ---- fixture: one module with one kernel and a builder at its end ---- */

typedef struct {
    blk_arena *arena;
    blk_diag diag;
    ir_module *m;
    ir_func *f;
    ir_builder b;
} fx;

static void fx_init(fx *x) {
    x->arena = arena_new();
    diag_init(&x->diag, x->arena);
    diag_add_file(&x->diag, "t.blk", "kernel t() {}\n", 14);
    x->m = ir_module_new(x->arena);
    x->f = ir_func_new(x->m, "t", true, LOC_NONE);
    x->b = (ir_builder){x->f, x->f->body, NULL, (blk_loc){0, 7, 1}};
}

static void fx_fini(fx *x) {
    diag_fini(&x->diag);
    arena_free(x->arena);
}

static ir_type S(blk_dtype t) { return ir_scalar(t); }
static ir_type B1(blk_dtype t, int n) { return ir_shaped(ir_scalar(t), 1, (int32_t[]){n}); }
static ir_type B2(blk_dtype t, int n0, int n1) { return ir_shaped(ir_scalar(t), 2, (int32_t[]){n0, n1}); }
static ir_type P1(blk_dtype pointee, int n) { return ir_shaped(ir_ptr(pointee, false), 1, (int32_t[]){n}); }

static void ret(fx *x) { ir_build(&x->b, IR_RETURN, NULL, 0, NULL, 0, 0); }

static int verify(fx *x) {
    x->diag.nerrors = 0;
    sb_free(&x->diag.out);
    return ir_verify_module(x->m, &x->diag, "test");
}

/* The module must verify clean. */
static void expect_ok(fx *x, int line) {
    int n = verify(x);
    if (n != 0) {
        fprintf(stderr, "%s:%d: expected clean IR, got %d problem(s):\n%s", __FILE__, line, n, sb_str(&x->diag.out));
        blk_strbuf out;
        sb_init(&out);
        ir_print_module(&out, x->m);
        fprintf(stderr, "%s", sb_str(&out));
        sb_free(&out);
        failures++;
    }
}

/* The module must fail with a message containing `want`. */
static void expect_bad(fx *x, const char *want, int line) {
    int n = verify(x);
    const char *text = sb_str(&x->diag.out);
    if (n == 0 || !strstr(text, want) || !strstr(text, "IR verifier (after test): ")) {
        fprintf(stderr, "%s:%d: expected a problem containing \"%s\", got %d:\n%s", __FILE__, line, want, n, text);
        failures++;
    }
}
#define EXPECT_OK(x) expect_ok((x), __LINE__)
#define EXPECT_BAD(x, want) expect_bad((x), (want), __LINE__)

/* ---- good IR ---- */

/* A kernel using most op families; must verify clean. */
static void test_accepts_good_ir(void) {
    fx x;
    fx_init(&x);
    ir_builder *b = &x.b;
    ir_value *out = ir_func_add_param(x.f, ir_ptr(DT_F32, false), "out");
    ir_value *in = ir_func_add_param(x.f, ir_ptr(DT_F16, true), "in");
    ir_value *n = ir_func_add_param(x.f, S(DT_I32), "n");
    ir_value *pid = ir_build(b, IR_PROGRAM_ID, NULL, 0, (ir_type[]){S(DT_I32)}, 1, 0)->results[0];
    ir_inst *ar = ir_build(b, IR_ARANGE, NULL, 0, (ir_type[]){B1(DT_I32, 64)}, 1, 0);
    ar->ival2 = 64;
    ir_value *offs = ir_b2(b, IR_ADD, B1(DT_I32, 64), ir_b1(b, IR_SPLAT, B1(DT_I32, 64), pid), ar->results[0]);
    ir_value *mask = ir_b2(b, IR_CMP, B1(DT_BOOL, 64), offs, ir_b1(b, IR_SPLAT, B1(DT_I32, 64), n));
    mask->def->kind = IR_CMP_LT;
    ir_value *inp = ir_b2(b, IR_PTRADD, ir_shaped(ir_ptr(DT_F16, true), 1, (int32_t[]){64}),
                          ir_b1(b, IR_SPLAT, ir_shaped(ir_ptr(DT_F16, true), 1, (int32_t[]){64}), in), offs);
    ir_value *other = ir_b_const_float(b, B1(DT_F16, 64), 0);
    ir_value *lops[3] = {inp, mask, other};
    ir_value *v = ir_build(b, IR_LOAD, lops, 3, (ir_type[]){B1(DT_F16, 64)}, 1, 0)->results[0];
    ir_value *vf = ir_b1(b, IR_CAST, B1(DT_F32, 64), v);
    ir_value *e = ir_b1(b, IR_EXP, B1(DT_F32, 64), vf);
    ir_value *fma = ir_b3(b, IR_FMA, B1(DT_F32, 64), e, vf, e);
    ir_value *sel = ir_b3(b, IR_SELECT, B1(DT_F32, 64), mask, fma, e);
    ir_value *sum = ir_b1(b, IR_REDUCE, S(DT_F32), sel);
    ir_value *am = ir_b1(b, IR_ARGREDUCE, S(DT_I32), sel);
    am->def->kind = IR_RED_ARGMAX;
    ir_value *col = ir_b1(b, IR_EXPAND_DIMS, B2(DT_F32, 64, 1), sel);
    col->def->axis = 1;
    ir_value *mat = ir_b1(b, IR_BROADCAST, B2(DT_F32, 64, 16), col);
    ir_value *tr = ir_b1(b, IR_PERMUTE, B2(DT_F32, 16, 64), mat);
    tr->def->perm[0] = 1;
    ir_value *acc = ir_b_const_float(b, B2(DT_F32, 64, 64), 0);
    ir_value *d = ir_b3(b, IR_DOT, B2(DT_F32, 64, 64), mat, tr, acc);
    ir_value *rs = ir_b1(b, IR_RESHAPE, B1(DT_F32, 4096), d);
    ir_value *j = ir_b2(b, IR_JOIN, B2(DT_F32, 64, 2), sel, e);
    ir_inst *sp = ir_build(b, IR_SPLIT, &j, 1, (ir_type[]){B1(DT_F32, 64), B1(DT_F32, 64)}, 2, 0);
    ir_value *cat = ir_b2(b, IR_CAT, B1(DT_F32, 128), sp->results[0], sp->results[1]);
    ir_inst *tk = ir_build(b, IR_TOPK, &cat, 1, (ir_type[]){B1(DT_F32, 2), B1(DT_I32, 2)}, 2, 0);
    tk->ival = 2;
    ir_value *sorted = ir_b1(b, IR_SORT, B1(DT_F32, 128), cat);
    ir_value *cs = ir_b1(b, IR_SCAN, B1(DT_F32, 128), sorted);
    ir_value *seed = ir_b_const_int(b, S(DT_I64), 7);
    ir_value *rnd = ir_b2(b, IR_RAND, B1(DT_F32, 64), seed, offs);
    ir_value *hint = ir_b1(b, IR_MULTIPLE_OF, B1(DT_I32, 64), offs);
    hint->def->ival = 16;
    ir_value *outp = ir_b2(b, IR_PTRADD, P1(DT_F32, 64), ir_b1(b, IR_SPLAT, P1(DT_F32, 64), out), hint);
    ir_value *sops[3] = {outp, rnd, mask};
    ir_build(b, IR_STORE, sops, 3, NULL, 0, 0);
    ir_value *aops[3] = {outp, rnd, mask};
    ir_build(b, IR_ATOMIC_RMW, aops, 3, (ir_type[]){B1(DT_F32, 64)}, 1, 0);
    ir_value *cas[3] = {outp, rnd, rnd};
    ir_build(b, IR_ATOMIC_CAS, cas, 3, (ir_type[]){B1(DT_F32, 64)}, 1, 0);
    ir_value *c1 = ir_b_const_int(b, S(DT_I32), 1);
    ir_value *dops[7] = {out, n, n, n, c1, pid, pid};
    ir_value *tile = ir_build(b, IR_DESC_LOAD, dops, 7, (ir_type[]){B2(DT_F32, 8, 8)}, 1, 0)->results[0];
    ir_value *dsops[8] = {out, n, n, n, c1, pid, pid, tile};
    ir_build(b, IR_DESC_STORE, dsops, 8, NULL, 0, 0);
    ir_value *pv[3] = {sum, am, cs};
    ir_build(b, IR_PRINT, pv, 3, NULL, 0, 0)->str = "s";
    (void)rs;

    /* for with a break inside an if, and a continue */
    ir_value *zero = ir_b_const_int(b, S(DT_I32), 0);
    ir_value *fo[4] = {zero, n, c1, sum};
    ir_inst *loop = ir_build(b, IR_FOR, fo, 4, (ir_type[]){S(DT_F32)}, 1, 1);
    ir_value *iv = ir_region_add_arg(loop->regions[0], S(DT_I32), "i");
    ir_value *carried = ir_region_add_arg(loop->regions[0], S(DT_F32), "s");
    ir_builder lb = {x.f, loop->regions[0], NULL, LOC_NONE};
    ir_value *big = ir_b2(&lb, IR_CMP, S(DT_BOOL), iv, pid);
    ir_inst *iff = ir_build(&lb, IR_IF, &big, 1, NULL, 0, 2);
    ir_builder tb = {x.f, iff->regions[0], NULL, LOC_NONE};
    ir_build(&tb, IR_BREAK, &carried, 1, NULL, 0, 0);
    ir_builder eb = {x.f, iff->regions[1], NULL, LOC_NONE};
    ir_build(&eb, IR_CONTINUE, &carried, 1, NULL, 0, 0);
    ir_value *next = ir_b2(&lb, IR_ADD, S(DT_F32), carried, sum);
    ir_build(&lb, IR_YIELD, &next, 1, NULL, 0, 0);

    /* if with results */
    ir_value *ncmp = ir_b2(b, IR_CMP, S(DT_BOOL), n, pid);
    ir_inst *if2 = ir_build(b, IR_IF, &ncmp, 1, (ir_type[]){S(DT_F32)}, 1, 2);
    ir_builder t2 = {x.f, if2->regions[0], NULL, LOC_NONE};
    ir_build(&t2, IR_YIELD, &loop->results[0], 1, NULL, 0, 0);
    ir_builder e2 = {x.f, if2->regions[1], NULL, LOC_NONE};
    ir_build(&e2, IR_YIELD, &sum, 1, NULL, 0, 0);

    /* while with a break */
    ir_inst *w = ir_build(b, IR_WHILE, &n, 1, (ir_type[]){S(DT_I32)}, 1, 2);
    ir_value *wa = ir_region_add_arg(w->regions[0], S(DT_I32), NULL);
    ir_builder wc = {x.f, w->regions[0], NULL, LOC_NONE};
    ir_value *go = ir_b2(&wc, IR_CMP, S(DT_BOOL), wa, zero);
    ir_value *cv[2] = {go, wa};
    ir_build(&wc, IR_CONDITION, cv, 2, NULL, 0, 0);
    ir_value *wb_arg = ir_region_add_arg(w->regions[1], S(DT_I32), NULL);
    ir_builder wb = {x.f, w->regions[1], NULL, LOC_NONE};
    ir_value *dec = ir_b2(&wb, IR_SUB, S(DT_I32), wb_arg, c1);
    ir_build(&wb, IR_YIELD, &dec, 1, NULL, 0, 0);

    /* reduce_fn */
    ir_inst *rf = ir_build(b, IR_REDUCE_REGION, &sel, 1, (ir_type[]){S(DT_F32)}, 1, 1);
    ir_value *ra = ir_region_add_arg(rf->regions[0], S(DT_F32), NULL);
    ir_value *rb = ir_region_add_arg(rf->regions[0], S(DT_F32), NULL);
    ir_builder rbb = {x.f, rf->regions[0], NULL, LOC_NONE};
    ir_value *mx = ir_b2(&rbb, IR_MAXIMUM, S(DT_F32), ra, rb);
    ir_build(&rbb, IR_YIELD, &mx, 1, NULL, 0, 0);

    /* a device fn and a call */
    ir_func *g = ir_func_new(x.m, "twice", false, LOC_NONE);
    VEC_PUSH(x.arena, g->result_types, S(DT_F32));
    ir_value *ga = ir_func_add_param(g, S(DT_F32), "a");
    ir_builder gb = {g, g->body, NULL, LOC_NONE};
    ir_value *g2 = ir_b2(&gb, IR_ADD, S(DT_F32), ga, ga);
    ir_build(&gb, IR_RETURN, &g2, 1, NULL, 0, 0);
    ir_inst *call = ir_build(b, IR_CALL, &rf->results[0], 1, (ir_type[]){S(DT_F32)}, 1, 0);
    call->callee = g;
    ret(&x);
    EXPECT_OK(&x);
    fx_fini(&x);
}

/* ---- bad IR: each test builds a small kernel with one defect ---- */

static void test_elementwise_shapes(void) {
    fx x;
    fx_init(&x);
    ir_value *a = ir_func_add_param(x.f, B1(DT_F32, 128), NULL);
    ir_value *c = ir_func_add_param(x.f, B1(DT_F32, 64), NULL);
    ir_b2(&x.b, IR_ADD, B1(DT_F32, 128), a, c);
    ret(&x);
    EXPECT_BAD(&x, "operand 1 has shape of f32[64], operand 0 of f32[128] (elementwise) in 'add'");
    CHECK(strstr(sb_str(&x.diag.out), "t.blk:1:8: error: ") != NULL); /* located at the inst */
    fx_fini(&x);
}

static void test_binary_dtypes(void) {
    fx x;
    fx_init(&x);
    ir_value *a = ir_func_add_param(x.f, S(DT_F32), NULL);
    ir_value *i = ir_func_add_param(x.f, S(DT_I32), NULL);
    ir_b2(&x.b, IR_MUL, S(DT_F32), a, i);
    ret(&x);
    EXPECT_BAD(&x, "operand 1 has type i32, expected f32 in 'mul'");
    fx_fini(&x);

    fx_init(&x);
    ir_value *p = ir_func_add_param(x.f, S(DT_BOOL), NULL);
    ir_b2(&x.b, IR_ADD, S(DT_BOOL), p, p);
    ret(&x);
    EXPECT_BAD(&x, "operand type bool is not a number in 'add'");
    fx_fini(&x);

    fx_init(&x);
    a = ir_func_add_param(x.f, S(DT_F32), NULL);
    ir_b2(&x.b, IR_SHL, S(DT_F32), a, a);
    ret(&x);
    EXPECT_BAD(&x, "operand type f32 is not an integer in 'shl'");
    fx_fini(&x);

    fx_init(&x);
    i = ir_func_add_param(x.f, S(DT_I32), NULL);
    ir_b1(&x.b, IR_EXP, S(DT_I32), i);
    ret(&x);
    EXPECT_BAD(&x, "operand type i32 is not a float in 'exp'");
    fx_fini(&x);
}

static void test_cmp_select_ptradd(void) {
    fx x;
    fx_init(&x);
    ir_value *a = ir_func_add_param(x.f, S(DT_I32), NULL);
    ir_b2(&x.b, IR_CMP, S(DT_I32), a, a);
    ret(&x);
    EXPECT_BAD(&x, "result type i32 is not bool in 'cmp'");
    fx_fini(&x);

    fx_init(&x);
    a = ir_func_add_param(x.f, S(DT_I32), NULL);
    ir_b3(&x.b, IR_SELECT, S(DT_I32), a, a, a);
    ret(&x);
    EXPECT_BAD(&x, "condition type i32 is not bool in 'select'");
    fx_fini(&x);

    fx_init(&x);
    ir_value *p = ir_func_add_param(x.f, ir_ptr(DT_F32, false), NULL);
    ir_value *f = ir_func_add_param(x.f, S(DT_F32), NULL);
    ir_b2(&x.b, IR_PTRADD, ir_ptr(DT_F32, false), p, f);
    ret(&x);
    EXPECT_BAD(&x, "offset type f32 is not an integer in 'ptradd'");
    fx_fini(&x);
}

static void test_use_before_def(void) {
    fx x;
    fx_init(&x);
    ir_value *a = ir_func_add_param(x.f, S(DT_I32), NULL);
    ir_value *later = ir_b2(&x.b, IR_ADD, S(DT_I32), a, a);
    ir_value *first = ir_b2(&x.b, IR_MUL, S(DT_I32), a, a);
    later->def->operands[1] = first; /* used one inst before its definition */
    ret(&x);
    EXPECT_BAD(&x, "operand 1 (%2) is used where its definition does not dominate in 'add'");
    fx_fini(&x);
}

static void test_value_escapes_region(void) {
    fx x;
    fx_init(&x);
    ir_value *c = ir_func_add_param(x.f, S(DT_BOOL), NULL);
    ir_value *a = ir_func_add_param(x.f, S(DT_I32), NULL);
    ir_inst *iff = ir_build(&x.b, IR_IF, &c, 1, NULL, 0, 2);
    ir_builder t = {x.f, iff->regions[0], NULL, LOC_NONE};
    ir_value *inner = ir_b2(&t, IR_ADD, S(DT_I32), a, a);
    ir_build(&t, IR_YIELD, NULL, 0, NULL, 0, 0);
    ir_builder e = {x.f, iff->regions[1], NULL, LOC_NONE};
    ir_build(&e, IR_YIELD, NULL, 0, NULL, 0, 0);
    ir_b2(&x.b, IR_MUL, S(DT_I32), inner, a); /* defined inside the if */
    ret(&x);
    EXPECT_BAD(&x, "does not dominate in 'mul'");
    fx_fini(&x);

    /* an inst's own results are not visible in its regions */
    fx_init(&x);
    ir_value *n = ir_func_add_param(x.f, S(DT_I32), NULL);
    ir_value *fo[4] = {n, n, n, n};
    ir_inst *loop = ir_build(&x.b, IR_FOR, fo, 4, (ir_type[]){S(DT_I32)}, 1, 1);
    ir_region_add_arg(loop->regions[0], S(DT_I32), NULL);
    ir_region_add_arg(loop->regions[0], S(DT_I32), NULL);
    ir_builder lb = {x.f, loop->regions[0], NULL, LOC_NONE};
    ir_build(&lb, IR_YIELD, &loop->results[0], 1, NULL, 0, 0);
    ret(&x);
    EXPECT_BAD(&x, "does not dominate in 'yield'");
    fx_fini(&x);
}

static void test_value_from_other_function(void) {
    fx x;
    fx_init(&x);
    ir_func *g = ir_func_new(x.m, "g", false, LOC_NONE);
    ir_value *ga = ir_func_add_param(g, S(DT_I32), NULL);
    ir_builder gb = {g, g->body, NULL, LOC_NONE};
    ir_build(&gb, IR_RETURN, NULL, 0, NULL, 0, 0);
    ir_func_add_param(x.f, S(DT_I32), NULL);
    ir_b2(&x.b, IR_ADD, S(DT_I32), ga, ga);
    ret(&x);
    EXPECT_BAD(&x, "operand 0 (of type i32) is not defined in this function in 'add'");
    fx_fini(&x);
}

static void test_null_and_counts(void) {
    fx x;
    fx_init(&x);
    ir_value *a = ir_func_add_param(x.f, S(DT_I32), NULL);
    ir_b2(&x.b, IR_ADD, S(DT_I32), a, NULL);
    ret(&x);
    EXPECT_BAD(&x, "operand 1 is null in 'add'");
    fx_fini(&x);

    fx_init(&x);
    a = ir_func_add_param(x.f, S(DT_I32), NULL);
    ir_b1(&x.b, IR_ADD, S(DT_I32), a);
    ret(&x);
    EXPECT_BAD(&x, "1 operands, expected 2 in 'add'");
    fx_fini(&x);

    fx_init(&x);
    ir_value *p = ir_func_add_param(x.f, ir_ptr(DT_F32, false), NULL);
    ir_value *ops[4] = {p, p, p, p};
    ir_build(&x.b, IR_LOAD, ops, 4, (ir_type[]){S(DT_F32)}, 1, 0);
    ret(&x);
    EXPECT_BAD(&x, "4 operands, expected 1 to 3 in 'load'");
    fx_fini(&x);

    fx_init(&x);
    a = ir_func_add_param(x.f, S(DT_I32), NULL);
    ir_value *r = ir_b2(&x.b, IR_ADD, S(DT_I32), a, a);
    r->def = NULL; /* result no longer points back */
    ret(&x);
    EXPECT_BAD(&x, "result 0 does not point back at its inst in 'add'");
    fx_fini(&x);
}

static void test_terminators(void) {
    fx x;
    fx_init(&x);
    ir_func_add_param(x.f, S(DT_I32), NULL);
    ir_b_const_int(&x.b, S(DT_I32), 1);
    EXPECT_BAD(&x, "region does not end in a terminator in 'const'");
    fx_fini(&x);

    fx_init(&x);
    EXPECT_BAD(&x, "empty body (no return) in 'kernel @t'");
    fx_fini(&x);

    fx_init(&x);
    ret(&x);
    ir_b_const_int(&x.b, S(DT_I32), 1);
    ret(&x);
    EXPECT_BAD(&x, "terminator before the end of its region in 'return'");
    fx_fini(&x);

    fx_init(&x);
    ir_build(&x.b, IR_YIELD, NULL, 0, NULL, 0, 0);
    EXPECT_BAD(&x, "yield in a function body (use return) in 'yield'");
    fx_fini(&x);

    fx_init(&x);
    ir_value *a = ir_func_add_param(x.f, S(DT_I32), NULL);
    ir_build(&x.b, IR_RETURN, &a, 1, NULL, 0, 0);
    EXPECT_BAD(&x, "1 values, expected 0 in 'return'");
    fx_fini(&x);
}

static void test_break_outside_loop(void) {
    fx x;
    fx_init(&x);
    ir_value *c = ir_func_add_param(x.f, S(DT_BOOL), NULL);
    ir_inst *iff = ir_build(&x.b, IR_IF, &c, 1, NULL, 0, 2);
    ir_builder t = {x.f, iff->regions[0], NULL, LOC_NONE};
    ir_build(&t, IR_BREAK, NULL, 0, NULL, 0, 0);
    ir_builder e = {x.f, iff->regions[1], NULL, LOC_NONE};
    ir_build(&e, IR_YIELD, NULL, 0, NULL, 0, 0);
    ret(&x);
    EXPECT_BAD(&x, "break outside a loop body in 'break'");
    fx_fini(&x);

    /* continue in a combine region inside a loop is still outside a loop body */
    fx_init(&x);
    ir_value *n = ir_func_add_param(x.f, S(DT_I32), NULL);
    ir_value *v = ir_func_add_param(x.f, B1(DT_I32, 8), NULL);
    ir_value *fo[3] = {n, n, n};
    ir_inst *loop = ir_build(&x.b, IR_FOR, fo, 3, NULL, 0, 1);
    ir_region_add_arg(loop->regions[0], S(DT_I32), NULL);
    ir_builder lb = {x.f, loop->regions[0], NULL, LOC_NONE};
    ir_inst *rf = ir_build(&lb, IR_REDUCE_REGION, &v, 1, (ir_type[]){S(DT_I32)}, 1, 1);
    ir_region_add_arg(rf->regions[0], S(DT_I32), NULL);
    ir_region_add_arg(rf->regions[0], S(DT_I32), NULL);
    ir_builder rb = {x.f, rf->regions[0], NULL, LOC_NONE};
    ir_build(&rb, IR_CONTINUE, NULL, 0, NULL, 0, 0);
    ir_build(&lb, IR_YIELD, NULL, 0, NULL, 0, 0);
    ret(&x);
    EXPECT_BAD(&x, "continue outside a loop body in 'continue'");
    fx_fini(&x);
}

static void test_loop_types(void) {
    fx x;
    fx_init(&x);
    ir_value *n = ir_func_add_param(x.f, S(DT_I32), NULL);
    ir_value *f = ir_func_add_param(x.f, S(DT_F32), NULL);
    ir_value *fo[4] = {n, n, n, f};
    ir_inst *loop = ir_build(&x.b, IR_FOR, fo, 4, (ir_type[]){S(DT_F32)}, 1, 1);
    ir_value *iv = ir_region_add_arg(loop->regions[0], S(DT_I32), NULL);
    ir_region_add_arg(loop->regions[0], S(DT_F32), NULL);
    ir_builder lb = {x.f, loop->regions[0], NULL, LOC_NONE};
    ir_build(&lb, IR_YIELD, &iv, 1, NULL, 0, 0); /* yields the i32 iv for an f32 */
    ret(&x);
    EXPECT_BAD(&x, "value 0 (for the next iteration) has type i32, expected f32 in 'yield'");
    fx_fini(&x);

    fx_init(&x);
    n = ir_func_add_param(x.f, S(DT_I32), NULL);
    f = ir_func_add_param(x.f, S(DT_F32), NULL);
    ir_value *fo2[4] = {n, n, n, f};
    loop = ir_build(&x.b, IR_FOR, fo2, 4, (ir_type[]){S(DT_F32)}, 1, 1);
    ir_region_add_arg(loop->regions[0], S(DT_I32), NULL); /* carried arg missing */
    lb = (ir_builder){x.f, loop->regions[0], NULL, LOC_NONE};
    ir_build(&lb, IR_YIELD, &f, 1, NULL, 0, 0);
    ret(&x);
    EXPECT_BAD(&x, "body has 1 args, expected the induction variable and 1 carried values in 'for'");
    fx_fini(&x);

    fx_init(&x);
    f = ir_func_add_param(x.f, S(DT_F32), NULL);
    ir_value *fo3[3] = {f, f, f};
    loop = ir_build(&x.b, IR_FOR, fo3, 3, NULL, 0, 1);
    ir_region_add_arg(loop->regions[0], S(DT_F32), NULL);
    lb = (ir_builder){x.f, loop->regions[0], NULL, LOC_NONE};
    ir_build(&lb, IR_YIELD, NULL, 0, NULL, 0, 0);
    ret(&x);
    EXPECT_BAD(&x, "bound type f32 is not a scalar integer in 'for'");
    fx_fini(&x);

    fx_init(&x);
    ir_value *fl = ir_func_add_param(x.f, S(DT_F32), NULL);
    ir_inst *iff = ir_build(&x.b, IR_IF, &fl, 1, NULL, 0, 2);
    ir_builder t = {x.f, iff->regions[0], NULL, LOC_NONE};
    ir_build(&t, IR_YIELD, NULL, 0, NULL, 0, 0);
    ir_builder e = {x.f, iff->regions[1], NULL, LOC_NONE};
    ir_build(&e, IR_YIELD, NULL, 0, NULL, 0, 0);
    ret(&x);
    EXPECT_BAD(&x, "condition type f32 is not a scalar bool in 'if'");
    fx_fini(&x);

    /* while: condition must end the condition region */
    fx_init(&x);
    n = ir_func_add_param(x.f, S(DT_I32), NULL);
    ir_inst *w = ir_build(&x.b, IR_WHILE, &n, 1, (ir_type[]){S(DT_I32)}, 1, 2);
    ir_value *wa = ir_region_add_arg(w->regions[0], S(DT_I32), NULL);
    ir_builder wc = {x.f, w->regions[0], NULL, LOC_NONE};
    ir_build(&wc, IR_YIELD, &wa, 1, NULL, 0, 0);
    ir_value *wb_arg = ir_region_add_arg(w->regions[1], S(DT_I32), NULL);
    ir_builder wb = {x.f, w->regions[1], NULL, LOC_NONE};
    ir_build(&wb, IR_YIELD, &wb_arg, 1, NULL, 0, 0);
    ret(&x);
    EXPECT_BAD(&x, "yield ends a while condition region (use condition) in 'yield'");
    fx_fini(&x);
}

static void test_shape_ops(void) {
    fx x;
    fx_init(&x);
    ir_value *a = ir_func_add_param(x.f, B1(DT_F32, 8), NULL);
    ir_b1(&x.b, IR_SPLAT, B1(DT_F32, 16), a);
    ret(&x);
    EXPECT_BAD(&x, "splat of f32[8] to f32[16] (scalar to block) in 'splat'");
    fx_fini(&x);

    fx_init(&x);
    a = ir_func_add_param(x.f, B2(DT_F32, 2, 8), NULL);
    ir_b1(&x.b, IR_BROADCAST, B2(DT_F32, 4, 8), a);
    ret(&x);
    EXPECT_BAD(&x, "cannot broadcast f32[2, 8] to f32[4, 8] in 'broadcast'");
    fx_fini(&x);

    fx_init(&x);
    a = ir_func_add_param(x.f, B1(DT_F32, 8), NULL);
    ir_b1(&x.b, IR_EXPAND_DIMS, B2(DT_F32, 8, 1), a); /* axis 0 would give [1, 8] */
    ret(&x);
    EXPECT_BAD(&x, "result has type f32[8, 1], expected f32[1, 8] in 'expand_dims'");
    fx_fini(&x);

    fx_init(&x);
    a = ir_func_add_param(x.f, B2(DT_F32, 4, 8), NULL);
    ir_value *p = ir_b1(&x.b, IR_PERMUTE, B2(DT_F32, 8, 4), a);
    p->def->perm[0] = 1;
    p->def->perm[1] = 1;
    ret(&x);
    EXPECT_BAD(&x, "bad permutation of f32[4, 8] to f32[8, 4] in 'permute'");
    fx_fini(&x);

    fx_init(&x);
    a = ir_func_add_param(x.f, B2(DT_F32, 4, 8), NULL);
    ir_b1(&x.b, IR_RESHAPE, B1(DT_F32, 31), a);
    ret(&x);
    EXPECT_BAD(&x, "cannot reshape f32[4, 8] to f32[31] in 'reshape'");
    fx_fini(&x);

    fx_init(&x);
    ir_inst *ar = ir_build(&x.b, IR_ARANGE, NULL, 0, (ir_type[]){B1(DT_I32, 64)}, 1, 0);
    ar->ival = 0;
    ar->ival2 = 32;
    ret(&x);
    EXPECT_BAD(&x, "result has type i32[64], expected i32[32] in 'arange'");
    fx_fini(&x);

    fx_init(&x);
    a = ir_func_add_param(x.f, B2(DT_F32, 4, 8), NULL);
    ir_value *r = ir_b1(&x.b, IR_REDUCE, B1(DT_F32, 8), a);
    r->def->axis = 2;
    ret(&x);
    EXPECT_BAD(&x, "axis 2 out of range for f32[4, 8] in 'reduce'");
    fx_fini(&x);

    fx_init(&x);
    a = ir_func_add_param(x.f, B2(DT_F32, 4, 8), NULL);
    r = ir_b1(&x.b, IR_REDUCE, B1(DT_F32, 8), a);
    r->def->axis = 1; /* reducing axis 1 leaves [4] */
    ret(&x);
    EXPECT_BAD(&x, "result has type f32[8], expected f32[4] in 'reduce'");
    fx_fini(&x);

    fx_init(&x);
    ir_value *m1 = ir_func_add_param(x.f, B2(DT_F16, 16, 32), NULL);
    ir_value *m2 = ir_func_add_param(x.f, B2(DT_F16, 16, 64), NULL);
    ir_value *acc = ir_func_add_param(x.f, B2(DT_F32, 16, 64), NULL);
    ir_b3(&x.b, IR_DOT, B2(DT_F32, 16, 64), m1, m2, acc);
    ret(&x);
    EXPECT_BAD(&x, "shapes f16[16, 32] x f16[16, 64] + f32[16, 64] are not [M,K] x [K,N] + [M,N] in 'dot'");
    fx_fini(&x);
}

static void test_memory(void) {
    fx x;
    fx_init(&x);
    ir_value *p = ir_func_add_param(x.f, P1(DT_F32, 8), NULL);
    ir_value *m = ir_func_add_param(x.f, B1(DT_I32, 8), NULL);
    ir_value *lops[2] = {p, m};
    ir_build(&x.b, IR_LOAD, lops, 2, (ir_type[]){B1(DT_F32, 8)}, 1, 0);
    ret(&x);
    EXPECT_BAD(&x, "mask has type i32[8], expected bool with the shape of *f32[8] in 'load'");
    fx_fini(&x);

    fx_init(&x);
    p = ir_func_add_param(x.f, P1(DT_F32, 8), NULL);
    ir_value *mk = ir_func_add_param(x.f, B1(DT_BOOL, 8), NULL);
    ir_value *o = ir_func_add_param(x.f, B1(DT_F16, 8), NULL);
    ir_value *lops2[3] = {p, mk, o};
    ir_build(&x.b, IR_LOAD, lops2, 3, (ir_type[]){B1(DT_F32, 8)}, 1, 0);
    ret(&x);
    EXPECT_BAD(&x, "other has type f16[8], expected f32[8] in 'load'");
    fx_fini(&x);

    fx_init(&x);
    p = ir_func_add_param(x.f, P1(DT_F32, 8), NULL);
    ir_build(&x.b, IR_LOAD, &p, 1, (ir_type[]){B1(DT_F32, 4)}, 1, 0);
    ret(&x);
    EXPECT_BAD(&x, "result has type f32[4], which does not match pointer *f32[8] in 'load'");
    fx_fini(&x);

    fx_init(&x);
    ir_value *cp = ir_func_add_param(x.f, ir_ptr(DT_F32, true), NULL);
    ir_value *v = ir_func_add_param(x.f, S(DT_F32), NULL);
    ir_value *sops[2] = {cp, v};
    ir_build(&x.b, IR_STORE, sops, 2, NULL, 0, 0);
    ret(&x);
    EXPECT_BAD(&x, "store through a *const pointer in 'store'");
    fx_fini(&x);
}

static void test_calls(void) {
    fx x;
    fx_init(&x);
    ir_func *g = ir_func_new(x.m, "g", false, LOC_NONE);
    VEC_PUSH(x.arena, g->result_types, S(DT_F32));
    ir_value *ga = ir_func_add_param(g, S(DT_F32), NULL);
    ir_builder gb = {g, g->body, NULL, LOC_NONE};
    ir_build(&gb, IR_RETURN, &ga, 1, NULL, 0, 0);
    ir_value *i = ir_func_add_param(x.f, S(DT_I32), NULL);
    ir_inst *call = ir_build(&x.b, IR_CALL, &i, 1, (ir_type[]){S(DT_F32)}, 1, 0);
    call->callee = g;
    ret(&x);
    EXPECT_BAD(&x, "argument 0 has type i32, expected f32 in 'call'");
    ir_func_remove(x.m, g);
    EXPECT_BAD(&x, "call to a function that is not in the module in 'call'");
    fx_fini(&x);

    /* a device fn returning the wrong type */
    fx_init(&x);
    ret(&x);
    g = ir_func_new(x.m, "g", false, LOC_NONE);
    VEC_PUSH(x.arena, g->result_types, S(DT_F32));
    ir_value *gi = ir_func_add_param(g, S(DT_I32), NULL);
    gb = (ir_builder){g, g->body, NULL, LOC_NONE};
    ir_build(&gb, IR_RETURN, &gi, 1, NULL, 0, 0);
    EXPECT_BAD(&x, "returned value has type i32, expected f32 in 'return'");
    fx_fini(&x);
}

/* Many problems in one module: all reported, no crash. */
static void test_counts_every_problem(void) {
    fx x;
    fx_init(&x);
    ir_value *a = ir_func_add_param(x.f, S(DT_I32), NULL);
    ir_b2(&x.b, IR_ADD, S(DT_I32), a, NULL);
    ir_b2(&x.b, IR_SUB, S(DT_F32), a, a);
    ir_b1(&x.b, IR_NOT, S(DT_I32), a);
    ret(&x);
    CHECK(verify(&x) == 3);
    fx_fini(&x);
}

int main(void) {
    test_accepts_good_ir();
    test_elementwise_shapes();
    test_binary_dtypes();
    test_cmp_select_ptradd();
    test_use_before_def();
    test_value_escapes_region();
    test_value_from_other_function();
    test_null_and_counts();
    test_terminators();
    test_break_outside_loop();
    test_loop_types();
    test_shape_ops();
    test_memory();
    test_calls();
    test_counts_every_problem();
    return test_finish("test_ir_verify");
}

/* test_ir_print.c — the Block IR text form (print.c): exact output for small
 * functions built with the builder. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ir/ir.h"

#include "../test_util.h"

static ir_type blk1(blk_dtype t, int n) {
    int32_t s[1] = {n};
    return ir_shaped(ir_scalar(t), 1, s);
}

/* The example at the top of print.c, built inst by inst. */
static void test_kernel(void) {
    blk_arena *a = arena_new();
    ir_module *m = ir_module_new(a);
    ir_func *f = ir_func_new(m, "scale", true, LOC_NONE);
    ir_const_binding cb = {"BLOCK", 128, 0, false, false};
    VEC_PUSH(a, f->consts, cb);
    ir_value *p = ir_func_add_param(f, ir_ptr(DT_F32, false), "x");
    ir_value *n = ir_func_add_param(f, ir_scalar(DT_I32), "n");
    ir_builder b = {f, f->body, NULL, LOC_NONE};
    ir_type i32 = ir_scalar(DT_I32), f32b = blk1(DT_F32, 128), i32b = blk1(DT_I32, 128);

    ir_inst *pid = ir_build(&b, IR_PROGRAM_ID, NULL, 0, &i32, 1, 0);
    ir_value *c128 = ir_b_const_int(&b, i32, 128);
    ir_value *base = ir_b2(&b, IR_MUL, i32, pid->results[0], c128);
    base->name = "base";
    ir_inst *ar = ir_build(&b, IR_ARANGE, NULL, 0, &i32b, 1, 0);
    ar->ival = 0;
    ar->ival2 = 128;
    ir_value *offs = ir_b2(&b, IR_ADD, i32b, ir_b1(&b, IR_SPLAT, i32b, base), ar->results[0]);
    offs->name = "offs";
    ir_value *ptrs = ir_b2(&b, IR_PTRADD, blk1(DT_PTR, 128), NULL, offs);
    ptrs->type.pointee = DT_F32;
    ptrs->def->operands[0] = ir_b1(&b, IR_SPLAT, ptrs->type, p);
    /* the splat was appended after the ptradd: move it in front */
    ir_unlink(ptrs->def->operands[0]->def);
    ir_insert_before(ptrs->def, ptrs->def->operands[0]->def);
    ir_inst *ld = ir_build(&b, IR_LOAD, &ptrs, 1, &f32b, 1, 0);
    ld->cache = IR_CACHE_CG;
    ir_value *half = ir_b_const_float(&b, f32b, 0.5);

    ir_value *fops[5] = {c128, n, c128, ld->results[0], c128};
    ir_type ftypes[2] = {f32b, i32};
    ir_inst *loop = ir_build(&b, IR_FOR, fops, 5, ftypes, 2, 1);
    loop->ival2 = 2; /* this loop's @num_stages */
    ir_region *body = loop->regions[0];
    ir_region_add_arg(body, i32, "i");
    ir_value *acc = ir_region_add_arg(body, f32b, "acc");
    ir_value *cnt = ir_region_add_arg(body, i32, NULL);
    ir_builder bb = {f, body, NULL, LOC_NONE};
    ir_value *scaled = ir_b2(&bb, IR_MUL, f32b, acc, half);
    ir_value *yv[2] = {scaled, cnt};
    ir_build(&bb, IR_YIELD, yv, 2, NULL, 0, 0);

    ir_value *lt = ir_b2(&b, IR_CMP, ir_scalar(DT_BOOL), n, c128);
    lt->def->kind = IR_CMP_LT;
    ir_inst *iff = ir_build(&b, IR_IF, &lt, 1, NULL, 0, 2);
    ir_builder tb = {f, iff->regions[0], NULL, LOC_NONE};
    ir_value *sv[2] = {ptrs, loop->results[0]};
    ir_build(&tb, IR_STORE, sv, 2, NULL, 0, 0);
    ir_build(&tb, IR_YIELD, NULL, 0, NULL, 0, 0);
    ir_builder eb = {f, iff->regions[1], NULL, LOC_NONE};
    ir_build(&eb, IR_YIELD, NULL, 0, NULL, 0, 0);
    ir_build(&b, IR_RETURN, NULL, 0, NULL, 0, 0);

    ir_func *g = ir_func_new(m, "silu.f32x128", false, LOC_NONE);
    VEC_PUSH(a, g->result_types, f32b);
    ir_value *x = ir_func_add_param(g, f32b, "x");
    ir_builder gb = {g, g->body, NULL, LOC_NONE};
    ir_value *sg = ir_b1(&gb, IR_SIGMOID, f32b, x);
    ir_value *r = ir_b2(&gb, IR_MUL, f32b, x, sg);
    ir_build(&gb, IR_RETURN, &r, 1, NULL, 0, 0);

    blk_strbuf out;
    sb_init(&out);
    ir_print_module(&out, m);
    CHECK_TEXT(sb_str(&out),
               "kernel @scale(%0: *f32, %1: i32) num_warps=4 num_stages=3 consts(BLOCK=128) {\n"
               "  %2 = program_id axis=0 : i32\n"
               "  %3 = const 128 : i32\n"
               "  %4 = mul %2, %3 : i32  // base\n"
               "  %5 = arange start=0 end=128 : i32[128]\n"
               "  %6 = splat %4 : i32[128]\n"
               "  %7 = add %6, %5 : i32[128]  // offs\n"
               "  %8 = splat %0 : *f32[128]\n"
               "  %9 = ptradd %8, %7 : *f32[128]\n"
               "  %10 = load %9 cache=cg : f32[128]\n"
               "  %11 = const 0.5 : f32[128]\n"
               "  %12, %13 = for %3 to %1 step %3 iter(%10, %3) num_stages=2 : f32[128], i32 {\n"
               "  ^(%14: i32, %15: f32[128], %16: i32):\n"
               "    %17 = mul %15, %11 : f32[128]\n"
               "    yield %17, %16\n"
               "  }\n"
               "  %18 = cmp %1, %3 pred=lt : bool\n"
               "  if %18 {\n"
               "    store %9, %12\n"
               "    yield\n"
               "  } else {\n"
               "    yield\n"
               "  }\n"
               "  return\n"
               "}\n"
               "\n"
               "fn @silu.f32x128(%0: f32[128]) -> f32[128] {\n"
               "  %1 = sigmoid %0 : f32[128]\n"
               "  %2 = mul %0, %1 : f32[128]\n"
               "  return %2\n"
               "}\n");
    sb_free(&out);
    arena_free(a);
}

/* Constants: float formatting, bools, unsigned, splats. */
static void test_consts(void) {
    blk_arena *a = arena_new();
    ir_module *m = ir_module_new(a);
    ir_func *f = ir_func_new(m, "c", true, LOC_NONE);
    ir_builder b = {f, f->body, NULL, LOC_NONE};
    ir_type f32 = ir_scalar(DT_F32), f64 = ir_scalar(DT_F64);
    ir_b_const_float(&b, f32, 1.0);
    ir_b_const_float(&b, f32, (float)0.1);
    ir_b_const_float(&b, f64, 0.1);
    ir_b_const_float(&b, f64, 1e-5);
    ir_b_const_float(&b, f32, INFINITY);
    ir_b_const_float(&b, blk1(DT_F32, 4), -INFINITY);
    ir_b_const_float(&b, f32, NAN);
    ir_b_const_float(&b, f32, -0.0);
    ir_b_const_float(&b, ir_scalar(DT_F16), 65504.0);
    ir_b_const_int(&b, ir_scalar(DT_BOOL), 1);
    ir_b_const_int(&b, blk1(DT_BOOL, 2), 0);
    ir_b_const_int(&b, ir_scalar(DT_U64), -1);
    ir_b_const_int(&b, ir_scalar(DT_I8), -128);
    ir_inst *pr = ir_build(&b, IR_PRINT, NULL, 0, NULL, 0, 0);
    pr->str = "a \"q\"\n\\";
    ir_build(&b, IR_RETURN, NULL, 0, NULL, 0, 0);
    blk_strbuf out;
    sb_init(&out);
    ir_print_func(&out, f);
    CHECK_TEXT(sb_str(&out),
               "kernel @c() num_warps=4 num_stages=3 {\n"
               "  %0 = const 1.0 : f32\n"
               "  %1 = const 0.1 : f32\n"
               "  %2 = const 0.1 : f64\n"
               "  %3 = const 1e-05 : f64\n"
               "  %4 = const inf : f32\n"
               "  %5 = const -inf : f32[4]\n"
               "  %6 = const nan : f32\n"
               "  %7 = const -0.0 : f32\n"
               "  %8 = const 65504.0 : f16\n"
               "  %9 = const true : bool\n"
               "  %10 = const false : bool[2]\n"
               "  %11 = const 18446744073709551615 : u64\n"
               "  %12 = const -128 : i8\n"
               "  print prefix=\"a \\\"q\\\"\\n\\\\\"\n"
               "  return\n"
               "}\n");
    sb_free(&out);
    arena_free(a);
}

/* Multi-result ops, while, reduce_fn, attributes, NULL operands. */
static void test_shapes_and_regions(void) {
    blk_arena *a = arena_new();
    ir_module *m = ir_module_new(a);
    ir_func *f = ir_func_new(m, "w", true, LOC_NONE);
    f->num_warps = 8;
    ir_type i32 = ir_scalar(DT_I32), f32 = ir_scalar(DT_F32);
    int32_t s2[2] = {4, 8};
    ir_type f32m = ir_shaped(f32, 2, s2);
    ir_value *x = ir_func_add_param(f, f32m, NULL);
    ir_value *n = ir_func_add_param(f, i32, NULL);
    ir_builder b = {f, f->body, NULL, LOC_NONE};
    int32_t s3[2] = {4, 2};
    ir_type tk[2] = {ir_shaped(f32, 2, s3), ir_shaped(i32, 2, s3)};
    ir_inst *topk = ir_build(&b, IR_TOPK, &x, 1, tk, 2, 0);
    topk->axis = 1;
    topk->ival = 2;
    int32_t s4[2] = {8, 4};
    ir_value *t = ir_b1(&b, IR_PERMUTE, ir_shaped(f32, 2, s4), x);
    t->def->perm[0] = 1;
    t->def->perm[1] = 0;
    ir_value *e = ir_b1(&b, IR_EXP, f32m, x);
    e->def->flags |= IRF_FAST;
    ir_inst *red = ir_build(&b, IR_REDUCE_REGION, &e, 1, (ir_type[]){blk1(DT_F32, 4)}, 1, 1);
    red->axis = 1;
    ir_value *ra = ir_region_add_arg(red->regions[0], f32, NULL);
    ir_value *rb = ir_region_add_arg(red->regions[0], f32, NULL);
    ir_builder rbld = {f, red->regions[0], NULL, LOC_NONE};
    ir_value *sum = ir_b2(&rbld, IR_ADD, f32, ra, rb);
    ir_build(&rbld, IR_YIELD, &sum, 1, NULL, 0, 0);
    ir_inst *w = ir_build(&b, IR_WHILE, &n, 1, &i32, 1, 2);
    ir_value *ca = ir_region_add_arg(w->regions[0], i32, NULL);
    ir_builder cb = {f, w->regions[0], NULL, LOC_NONE};
    ir_value *z = ir_b_const_int(&cb, i32, 0);
    ir_value *gt = ir_b2(&cb, IR_CMP, ir_scalar(DT_BOOL), ca, z);
    gt->def->kind = IR_CMP_GT;
    ir_value *cv[2] = {gt, ca};
    ir_build(&cb, IR_CONDITION, cv, 2, NULL, 0, 0);
    ir_value *ba = ir_region_add_arg(w->regions[1], i32, NULL);
    ir_builder wb = {f, w->regions[1], NULL, LOC_NONE};
    ir_value *one = ir_b_const_int(&wb, i32, 1);
    ir_value *dec = ir_b2(&wb, IR_SUB, i32, ba, one);
    ir_build(&wb, IR_YIELD, &dec, 1, NULL, 0, 0);
    ir_b2(&b, IR_ADD, i32, w->results[0], NULL); /* a NULL operand prints, never crashes */
    ir_build(&b, IR_RETURN, NULL, 0, NULL, 0, 0);
    blk_strbuf out;
    sb_init(&out);
    ir_print_func(&out, f);
    CHECK_TEXT(sb_str(&out),
               "kernel @w(%0: f32[4, 8], %1: i32) num_warps=8 num_stages=3 {\n"
               "  %2, %3 = topk %0 axis=1 k=2 : f32[4, 2], i32[4, 2]\n"
               "  %4 = permute %0 perm=[1, 0] : f32[8, 4]\n"
               "  %5 = exp %0 fast : f32[4, 8]\n"
               "  %6 = reduce_fn %5 axis=1 : f32[4] {\n"
               "  ^(%7: f32, %8: f32):\n"
               "    %9 = add %7, %8 : f32\n"
               "    yield %9\n"
               "  }\n"
               "  %10 = while iter(%1) : i32 {\n"
               "  ^(%11: i32):\n"
               "    %12 = const 0 : i32\n"
               "    %13 = cmp %11, %12 pred=gt : bool\n"
               "    condition %13, %11\n"
               "  } do {\n"
               "  ^(%14: i32):\n"
               "    %15 = const 1 : i32\n"
               "    %16 = sub %14, %15 : i32\n"
               "    yield %16\n"
               "  }\n"
               "  %17 = add %10, %<null> : i32\n"
               "  return\n"
               "}\n");
    sb_free(&out);
    arena_free(a);
}

int main(void) {
    test_kernel();
    test_consts();
    test_shapes_and_regions();
    return test_finish("test_ir_print");
}

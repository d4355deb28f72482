/* test_ir_inline.c — pass_inline and the region cloner: nested calls, calls
 * in loops, callees with their own regions, several results; afterwards no
 * call and no device fn remains and the IR verifies. */
#include <stdio.h>
#include <string.h>

#include "ir/clone.h"
#include "ir/ir.h"
#include "passes/passes.h"

#include "../test_util.h"

static ir_type S(blk_dtype t) { return ir_scalar(t); }
static ir_type B1(blk_dtype t, int n) { return ir_shaped(ir_scalar(t), 1, (int32_t[]){n}); }

static int count_op(const ir_region *r, ir_op op) {
    int n = 0;
    for (const ir_inst *i = r->first; i; i = i->next) {
        n += i->op == op;
        for (int k = 0; k < i->num_regions; k++) n += count_op(i->regions[k], op);
    }
    return n;
}

static ir_value *call(ir_builder *b, ir_func *callee, ir_value **args, int nargs) {
    ir_inst *c = ir_build(b, IR_CALL, args, nargs, callee->result_types.data, callee->result_types.len, 0);
    c->callee = callee;
    return c->num_results ? c->results[0] : NULL;
}

/* fn silu(x) = x * sigmoid(x), specialised for type t */
static ir_func *make_silu(ir_module *m, const char *name, ir_type t) {
    ir_func *f = ir_func_new(m, name, false, LOC_NONE);
    VEC_PUSH(m->arena, f->result_types, t);
    ir_value *x = ir_func_add_param(f, t, "x");
    ir_builder b = {f, f->body, NULL, LOC_NONE};
    ir_value *s = ir_b1(&b, IR_SIGMOID, t, x);
    ir_value *r = ir_b2(&b, IR_MUL, t, x, s);
    r->name = "y";
    ir_build(&b, IR_RETURN, &r, 1, NULL, 0, 0);
    return f;
}

static int verify(ir_module *m, blk_diag *d) {
    int n = ir_verify_module(m, d, "inline");
    if (n) fprintf(stderr, "%s", sb_str(&d->out));
    return n;
}

/* silu called twice with different shapes; device fns disappear. */
static void test_two_specialisations(void) {
    blk_arena *a = arena_new();
    blk_diag d;
    diag_init(&d, a);
    ir_module *m = ir_module_new(a);
    ir_func *s128 = make_silu(m, "silu.f32x128", B1(DT_F32, 128));
    ir_func *k = ir_func_new(m, "k", true, LOC_NONE);
    ir_func *s1 = make_silu(m, "silu.f32", S(DT_F32));
    ir_value *v = ir_func_add_param(k, B1(DT_F32, 128), "v");
    ir_value *s = ir_func_add_param(k, S(DT_F32), "s");
    ir_builder b = {k, k->body, NULL, LOC_NONE};
    ir_value *r1 = call(&b, s128, &v, 1);
    ir_value *r2 = call(&b, s1, &s, 1);
    ir_value *pr[2] = {r1, r2};
    ir_build(&b, IR_PRINT, pr, 2, NULL, 0, 0)->str = "r";
    ir_build(&b, IR_RETURN, NULL, 0, NULL, 0, 0);
    pass_inline(m);
    CHECK(verify(m, &d) == 0);
    CHECK(m->first == k && m->last == k && k->next == NULL);
    blk_strbuf out;
    sb_init(&out);
    ir_print_module(&out, m);
    CHECK_TEXT(sb_str(&out),
               "kernel @k(%0: f32[128], %1: f32) num_warps=4 num_stages=3 {\n"
               "  %2 = sigmoid %0 : f32[128]\n"
               "  %3 = mul %0, %2 : f32[128]  // y\n"
               "  %4 = sigmoid %1 : f32\n"
               "  %5 = mul %1, %4 : f32  // y\n"
               "  print %3, %5 prefix=\"r\"\n"
               "  return\n"
               "}\n");
    sb_free(&out);
    diag_fini(&d);
    arena_free(a);
}

/* outer(x) = inner(x) + inner(x * x); inner has a loop and an if; the kernel
 * calls outer inside a for loop and inside an if. */
static void test_nested_calls_and_regions(void) {
    blk_arena *a = arena_new();
    blk_diag d;
    diag_init(&d, a);
    ir_module *m = ir_module_new(a);
    ir_type i32 = S(DT_I32);

    ir_func *inner = ir_func_new(m, "inner", false, LOC_NONE);
    VEC_PUSH(a, inner->result_types, i32);
    ir_value *x = ir_func_add_param(inner, i32, "x");
    ir_builder ib = {inner, inner->body, NULL, LOC_NONE};
    ir_value *zero = ir_b_const_int(&ib, i32, 0);
    ir_value *one = ir_b_const_int(&ib, i32, 1);
    ir_value *fo[4] = {zero, x, one, zero};
    ir_inst *loop = ir_build(&ib, IR_FOR, fo, 4, &i32, 1, 1);
    ir_value *iv = ir_region_add_arg(loop->regions[0], i32, "i");
    ir_value *acc = ir_region_add_arg(loop->regions[0], i32, "acc");
    ir_builder lb = {inner, loop->regions[0], NULL, LOC_NONE};
    ir_value *odd = ir_b2(&lb, IR_AND, i32, iv, one);
    ir_value *isodd = ir_b2(&lb, IR_CMP, S(DT_BOOL), odd, one);
    ir_inst *iff = ir_build(&lb, IR_IF, &isodd, 1, &i32, 1, 2);
    ir_builder tb = {inner, iff->regions[0], NULL, LOC_NONE};
    ir_value *sum = ir_b2(&tb, IR_ADD, i32, acc, iv);
    ir_build(&tb, IR_YIELD, &sum, 1, NULL, 0, 0);
    ir_builder eb = {inner, iff->regions[1], NULL, LOC_NONE};
    ir_build(&eb, IR_YIELD, &acc, 1, NULL, 0, 0);
    ir_build(&lb, IR_YIELD, &iff->results[0], 1, NULL, 0, 0);
    ir_build(&ib, IR_RETURN, &loop->results[0], 1, NULL, 0, 0);

    ir_func *outer = ir_func_new(m, "outer", false, LOC_NONE);
    VEC_PUSH(a, outer->result_types, i32);
    ir_value *y = ir_func_add_param(outer, i32, "y");
    ir_builder ob = {outer, outer->body, NULL, LOC_NONE};
    ir_value *a1 = call(&ob, inner, &y, 1);
    ir_value *yy = ir_b2(&ob, IR_MUL, i32, y, y);
    ir_value *a2 = call(&ob, inner, &yy, 1);
    ir_value *r = ir_b2(&ob, IR_ADD, i32, a1, a2);
    ir_build(&ob, IR_RETURN, &r, 1, NULL, 0, 0);

    ir_func *k = ir_func_new(m, "k", true, LOC_NONE);
    ir_value *p = ir_func_add_param(k, ir_ptr(DT_I32, false), "p");
    ir_value *n = ir_func_add_param(k, i32, "n");
    ir_value *c = ir_func_add_param(k, S(DT_BOOL), "c");
    ir_builder kb = {k, k->body, NULL, LOC_NONE};
    ir_value *kz = ir_b_const_int(&kb, i32, 0);
    ir_value *k1 = ir_b_const_int(&kb, i32, 1);
    ir_value *kfo[4] = {kz, n, k1, kz};
    ir_inst *kloop = ir_build(&kb, IR_FOR, kfo, 4, &i32, 1, 1);
    ir_value *kiv = ir_region_add_arg(kloop->regions[0], i32, "j");
    ir_value *kacc = ir_region_add_arg(kloop->regions[0], i32, "t");
    ir_builder klb = {k, kloop->regions[0], NULL, LOC_NONE};
    ir_value *o = call(&klb, outer, &kiv, 1);
    ir_value *nacc = ir_b2(&klb, IR_ADD, i32, kacc, o);
    ir_build(&klb, IR_YIELD, &nacc, 1, NULL, 0, 0);
    ir_inst *kif = ir_build(&kb, IR_IF, &c, 1, &i32, 1, 2);
    ir_builder ktb = {k, kif->regions[0], NULL, LOC_NONE};
    ir_value *o2 = call(&ktb, outer, &kloop->results[0], 1);
    ir_build(&ktb, IR_YIELD, &o2, 1, NULL, 0, 0);
    ir_builder keb = {k, kif->regions[1], NULL, LOC_NONE};
    ir_build(&keb, IR_YIELD, &n, 1, NULL, 0, 0);
    ir_value *sops[2] = {p, kif->results[0]};
    ir_build(&kb, IR_STORE, sops, 2, NULL, 0, 0);
    ir_build(&kb, IR_RETURN, NULL, 0, NULL, 0, 0);

    CHECK(verify(m, &d) == 0);
    pass_inline(m);
    CHECK(verify(m, &d) == 0);
    CHECK(m->first == k && k->next == NULL);
    CHECK(count_op(k->body, IR_CALL) == 0);
    /* kernel loop + 2 inner loops per outer x 2 outer calls */
    CHECK(count_op(k->body, IR_FOR) == 5);
    CHECK(count_op(k->body, IR_IF) == 5);
    CHECK(count_op(k->body, IR_RETURN) == 1);
    /* the callees are untouched (they were cloned, not moved) */
    CHECK(count_op(inner->body, IR_FOR) == 1);
    CHECK(count_op(outer->body, IR_CALL) == 2);
    /* and canonicalize afterwards keeps it valid */
    pass_canonicalize(m);
    CHECK(verify(m, &d) == 0);
    diag_fini(&d);
    arena_free(a);
}

/* A callee returning two values and one returning nothing. */
static void test_results(void) {
    blk_arena *a = arena_new();
    blk_diag d;
    diag_init(&d, a);
    ir_module *m = ir_module_new(a);
    ir_type f32 = S(DT_F32);
    ir_func *two = ir_func_new(m, "two", false, LOC_NONE);
    VEC_PUSH(a, two->result_types, f32);
    VEC_PUSH(a, two->result_types, f32);
    ir_value *ta = ir_func_add_param(two, f32, NULL);
    ir_value *tb = ir_func_add_param(two, f32, NULL);
    ir_builder b2 = {two, two->body, NULL, LOC_NONE};
    ir_value *rv[2] = {tb, ta}; /* swap: the body is only its return */
    ir_build(&b2, IR_RETURN, rv, 2, NULL, 0, 0);
    ir_func *none = ir_func_new(m, "none", false, LOC_NONE);
    ir_value *na = ir_func_add_param(none, f32, NULL);
    ir_builder b0 = {none, none->body, NULL, LOC_NONE};
    ir_build(&b0, IR_PRINT, &na, 1, NULL, 0, 0)->str = "n";
    ir_build(&b0, IR_RETURN, NULL, 0, NULL, 0, 0);

    ir_func *k = ir_func_new(m, "k", true, LOC_NONE);
    ir_value *x = ir_func_add_param(k, f32, NULL);
    ir_value *y = ir_func_add_param(k, f32, NULL);
    ir_builder kb = {k, k->body, NULL, LOC_NONE};
    ir_value *args[2] = {x, y};
    ir_inst *c2 = ir_build(&kb, IR_CALL, args, 2, two->result_types.data, 2, 0);
    c2->callee = two;
    ir_value *sub = ir_b2(&kb, IR_SUB, f32, c2->results[0], c2->results[1]);
    call(&kb, none, &sub, 1);
    ir_build(&kb, IR_RETURN, NULL, 0, NULL, 0, 0);
    pass_inline(m);
    CHECK(verify(m, &d) == 0);
    blk_strbuf out;
    sb_init(&out);
    ir_print_module(&out, m);
    CHECK_TEXT(sb_str(&out),
               "kernel @k(%0: f32, %1: f32) num_warps=4 num_stages=3 {\n"
               "  %2 = sub %1, %0 : f32\n"
               "  print %2 prefix=\"n\"\n"
               "  return\n"
               "}\n");
    sb_free(&out);
    diag_fini(&d);
    arena_free(a);
}

/* The cloner on its own: a value map and a region copied with new args. */
static void test_clone(void) {
    blk_arena *a = arena_new();
    ir_module *m = ir_module_new(a);
    ir_func *k = ir_func_new(m, "k", true, LOC_NONE);
    ir_value *n = ir_func_add_param(k, S(DT_I32), NULL);
    ir_builder b = {k, k->body, NULL, LOC_NONE};
    ir_value *fo[4] = {n, n, n, n};
    ir_inst *loop = ir_build(&b, IR_FOR, fo, 4, (ir_type[]){S(DT_I32)}, 1, 1);
    ir_value *iv = ir_region_add_arg(loop->regions[0], S(DT_I32), NULL);
    ir_value *acc = ir_region_add_arg(loop->regions[0], S(DT_I32), NULL);
    ir_builder lb = {k, loop->regions[0], NULL, LOC_NONE};
    ir_value *s = ir_b2(&lb, IR_ADD, S(DT_I32), acc, iv);
    ir_build(&lb, IR_YIELD, &s, 1, NULL, 0, 0);
    ir_value_map *map = ir_value_map_new(a);
    for (int i = 0; i < 200; i++) ir_value_map_set(map, ir_region_add_arg(ir_region_new(k, NULL), S(DT_I32), NULL), n);
    ir_inst *c = ir_clone_inst(k, loop, map);
    CHECK(c && c != loop && c->num_regions == 1 && c->regions[0] != loop->regions[0]);
    CHECK(ir_value_map_get(map, loop->results[0]) == c->results[0]);
    CHECK(ir_value_map_get(map, iv) == c->regions[0]->args.data[0]);
    CHECK(c->regions[0]->args.data[1] != acc);
    ir_inst *cs = c->regions[0]->first;
    CHECK(cs->op == IR_ADD && cs->operands[0] == c->regions[0]->args.data[1] && cs->operands[1] == c->regions[0]->args.data[0]);
    CHECK(cs->parent == c->regions[0] && c->regions[0]->parent == c);
    CHECK(c->regions[0]->last->operands[0] == cs->results[0]);
    CHECK(ir_value_map_resolve(map, n) == n);
    ir_insert_after(loop, c);
    ir_build(&b, IR_RETURN, NULL, 0, NULL, 0, 0);
    blk_diag d;
    diag_init(&d, a);
    CHECK(verify(m, &d) == 0);
    diag_fini(&d);
    arena_free(a);
}

int main(void) {
    test_two_specialisations();
    test_nested_calls_and_regions();
    test_results();
    test_clone();
    return test_finish("test_ir_inline");
}

/* test_ir_pipeline.c — passes_run: the pass list, dump points, -O0, and the
 * verifier between passes stopping the pipeline on broken IR. */
#include <stdio.h>
#include <string.h>

#include "ir/ir.h"
#include "passes/passes.h"

#include "../test_util.h"

typedef struct {
    blk_arena *arena;
    blk_diag diag;
    ir_module *m;
    ir_func *k;
} fx;

/* kernel k(p: *f32, x: f32) { store p, twice(x) * 1.0 }  with
 * fn twice(a) = a + a */
static void fx_init(fx *x) {
    x->arena = arena_new();
    diag_init(&x->diag, x->arena);
    x->m = ir_module_new(x->arena);
    ir_type f32 = ir_scalar(DT_F32);
    ir_func *g = ir_func_new(x->m, "twice", false, LOC_NONE);
    VEC_PUSH(x->arena, g->result_types, f32);
    ir_value *a = ir_func_add_param(g, f32, NULL);
    ir_builder gb = {g, g->body, NULL, LOC_NONE};
    ir_value *s = ir_b2(&gb, IR_ADD, f32, a, a);
    ir_build(&gb, IR_RETURN, &s, 1, NULL, 0, 0);
    x->k = ir_func_new(x->m, "k", true, LOC_NONE);
    ir_value *p = ir_func_add_param(x->k, ir_ptr(DT_F32, false), NULL);
    ir_value *v = ir_func_add_param(x->k, f32, NULL);
    ir_builder b = {x->k, x->k->body, NULL, LOC_NONE};
    ir_inst *call = ir_build(&b, IR_CALL, &v, 1, &f32, 1, 0);
    call->callee = g;
    ir_value *one = ir_b_const_float(&b, f32, 1.0);
    ir_value *m = ir_b2(&b, IR_MUL, f32, call->results[0], one);
    ir_value *ops[2] = {p, m};
    ir_build(&b, IR_STORE, ops, 2, NULL, 0, 0);
    ir_build(&b, IR_RETURN, NULL, 0, NULL, 0, 0);
}

static void fx_fini(fx *x) {
    diag_fini(&x->diag);
    arena_free(x->arena);
}

static int count_calls_left(const fx *x) {
    int n = 0;
    for (const ir_inst *i = x->k->body->first; i; i = i->next) n += i->op == IR_CALL;
    return n;
}

static int run(fx *x, int opt, const char *dump_after, blk_strbuf *dump) {
    pass_opts o = {&x->diag, opt, true, dump_after, dump};
    return passes_run(x->m, &o);
}

static void test_names(void) {
    const char *const *names = pass_names();
    CHECK(names[0] && strcmp(names[0], "inline") == 0);
    CHECK(names[1] && strcmp(names[1], "canonicalize") == 0);
    CHECK(names[2] && strcmp(names[2], "axisinfo") == 0);
    CHECK(names[3] && strcmp(names[3], "layout") == 0);
    CHECK(names[4] && strcmp(names[4], "fuse") == 0);
    CHECK(names[5] && strcmp(names[5], "vectorize") == 0);
    CHECK(names[6] && strcmp(names[6], "pipeliner") == 0);
    CHECK(names[7] == NULL);
}

static void test_dump_points(void) {
    static const struct {
        const char *point;
        int opt;
        bool has_call, has_mul;
    } cases[] = {
        {"sema", 2, true, true},           /* before any pass */
        {"inline", 2, false, true},        /* calls gone, x * 1.0 still there */
        {"canonicalize", 2, false, false}, /* x * 1.0 -> x */
        {"canonicalize", 0, false, true},  /* -O0: canonicalize does not run */
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        fx x;
        fx_init(&x);
        blk_strbuf dump;
        sb_init(&dump);
        CHECK(run(&x, cases[c].opt, cases[c].point, &dump) == 0);
        const char *text = sb_str(&dump);
        CHECK(strstr(text, "kernel @k(") != NULL);
        CHECK((strstr(text, "call @twice") != NULL) == cases[c].has_call);
        CHECK((strstr(text, "fn @twice") != NULL) == cases[c].has_call);
        CHECK((strstr(text, " = mul ") != NULL) == cases[c].has_mul);
        CHECK(x.diag.nerrors == 0);
        sb_free(&dump);
        fx_fini(&x);
    }
    /* no dump requested: nothing printed, and a NULL dump buffer is fine */
    fx x;
    fx_init(&x);
    CHECK(run(&x, 2, NULL, NULL) == 0);
    CHECK(x.m->first == x.k && x.k->next == NULL);
    fx_fini(&x);
}

/* Broken input: the verifier runs before the first pass and stops it. */
static void test_verifier_stops(void) {
    fx x;
    fx_init(&x);
    ir_builder b = {x.k, x.k->body, x.k->body->last, LOC_NONE};
    ir_b2(&b, IR_ADD, ir_scalar(DT_F32), x.k->body->args.data[1], NULL);
    blk_strbuf dump;
    sb_init(&dump);
    CHECK(run(&x, 2, "inline", &dump) == 1);
    CHECK(strstr(sb_str(&x.diag.out), "IR verifier (after sema): operand 1 is null in 'add'") != NULL);
    CHECK(dump.len == 0);                       /* stopped before inline */
    CHECK(count_calls_left(&x) == 1);
    sb_free(&dump);
    fx_fini(&x);
}

int main(void) {
    test_names();
    test_dump_points();
    test_verifier_stops();
    return test_finish("test_ir_pipeline");
}

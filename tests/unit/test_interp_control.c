/* test_interp_control — for (carried values, break/continue inside if,
 * negative and zero steps), while, return, print, shape ops and random
 * numbers through the interpreter. */
#include "test_interp_util.h"

/* Switch the builder into region r; returns the previous builder. */
static ir_builder enter(kb *k, ir_region *r) {
    ir_builder saved = k->b;
    k->b.region = r;
    k->b.before = NULL;
    return saved;
}

static ir_value *at(kb *k, ir_value *p, int i) { return ir_b2(&k->b, IR_PTRADD, p->type, p, c32(k, i)); }

/* IF cond { TERM(vals) } else { yield } with no results */
static void if_then_term(kb *k, ir_value *cond, ir_op term, ir_value **vals, int n) {
    ir_inst *i = ir_build(&k->b, IR_IF, &cond, 1, NULL, 0, 2);
    ir_builder saved = enter(k, i->regions[0]);
    ir_build(&k->b, term, vals, n, NULL, 0, 0);
    k->b.region = i->regions[1];
    ir_build(&k->b, IR_YIELD, NULL, 0, NULL, 0, 0);
    k->b = saved;
}

/* for i in range(0, 100, 3) { if i > n break; if i % 2 == 0 { cnt += 1; continue } s += i; cnt += 1 } */
static void test_for_break_continue(void) {
    kb k;
    kb_init(&k, "loop");
    ir_value *out = kb_param(&k, TP(DT_I32), "out"), *n = kb_param(&k, T(DT_I32), "n");
    ir_value *zero = c32(&k, 0);
    ir_inst *loop = ir_build(&k.b, IR_FOR, (ir_value *[]){zero, c32(&k, 100), c32(&k, 3), zero, zero}, 5,
                             (ir_type[]){T(DT_I32), T(DT_I32)}, 2, 1);
    ir_region *body = loop->regions[0];
    ir_value *i = ir_region_add_arg(body, T(DT_I32), "i");
    ir_value *s = ir_region_add_arg(body, T(DT_I32), "s");
    ir_value *cnt = ir_region_add_arg(body, T(DT_I32), "cnt");
    ir_builder saved = enter(&k, body);
    if_then_term(&k, cmp(&k, IR_CMP_GT, i, n), IR_BREAK, (ir_value *[]){s, cnt}, 2);
    ir_value *cnt1 = bin(&k, IR_ADD, cnt, c32(&k, 1));
    ir_value *even = cmp(&k, IR_CMP_EQ, bin(&k, IR_REM, i, c32(&k, 2)), c32(&k, 0));
    if_then_term(&k, even, IR_CONTINUE, (ir_value *[]){s, cnt1}, 2);
    ir_build(&k.b, IR_YIELD, (ir_value *[]){bin(&k, IR_ADD, s, i), cnt1}, 2, NULL, 0, 0);
    k.b = saved;
    store(&k, out, loop->results[0], NULL);
    store(&k, at(&k, out, 1), loop->results[1], NULL);

    int ns[] = {50, 1000, -1};
    for (int t = 0; t < 3; t++) {
        int32_t o[2] = {-1, -1};
        blk_arg args[] = {BLK_PTR(o, sizeof o), BLK_INT(ns[t])};
        blk_status st = kb_run(&k, 1, 1, args, 2, NULL);
        int32_t ws = 0, wc = 0;
        for (int q = 0; q < 100; q += 3) {
            if (q > ns[t]) break;
            if (q % 2 == 0) { wc++; continue; }
            ws += q;
            wc++;
        }
        CHECK(st == BLK_OK && o[0] == ws && o[1] == wc, "for/break/continue n=%d: %d %d want %d %d %s", ns[t], o[0], o[1],
              ws, wc, kb_diag(&k));
    }
    kb_free(&k);
}

/* (a, b) = (b, a + b) ten times: yields permuting the carried values;
 * range(10, 0, -2) sums 30; range(5, 5, 1) runs zero times; step 0 fails */
static void test_for_steps(void) {
    kb k;
    kb_init(&k, "steps");
    ir_value *out = kb_param(&k, TP(DT_I64), "out"), *step = kb_param(&k, T(DT_I32), "step");
    ir_value *one = ci(&k, T(DT_I64), 1);
    ir_inst *fib = ir_build(&k.b, IR_FOR, (ir_value *[]){c32(&k, 0), c32(&k, 10), c32(&k, 1), one, one}, 5,
                            (ir_type[]){T(DT_I64), T(DT_I64)}, 2, 1);
    ir_region *body = fib->regions[0];
    ir_region_add_arg(body, T(DT_I32), "i");
    ir_value *a = ir_region_add_arg(body, T(DT_I64), "a"), *b = ir_region_add_arg(body, T(DT_I64), "b");
    ir_builder saved = enter(&k, body);
    ir_build(&k.b, IR_YIELD, (ir_value *[]){b, bin(&k, IR_ADD, a, b)}, 2, NULL, 0, 0);
    k.b = saved;
    store(&k, out, fib->results[0], NULL);

    ir_value *z = ci(&k, T(DT_I64), 0);
    ir_inst *down = ir_build(&k.b, IR_FOR, (ir_value *[]){c32(&k, 10), c32(&k, 0), step, z}, 4, (ir_type[]){T(DT_I64)}, 1, 1);
    body = down->regions[0];
    ir_value *i = ir_region_add_arg(body, T(DT_I32), "i");
    ir_value *s = ir_region_add_arg(body, T(DT_I64), "s");
    saved = enter(&k, body);
    ir_build(&k.b, IR_YIELD, (ir_value *[]){bin(&k, IR_ADD, s, cast(&k, i, DT_I64))}, 1, NULL, 0, 0);
    k.b = saved;
    store(&k, at(&k, out, 1), down->results[0], NULL);

    ir_inst *none = ir_build(&k.b, IR_FOR, (ir_value *[]){c32(&k, 5), c32(&k, 5), c32(&k, 1), ci(&k, T(DT_I64), 42)}, 4,
                             (ir_type[]){T(DT_I64)}, 1, 1);
    body = none->regions[0];
    ir_region_add_arg(body, T(DT_I32), "i");
    ir_value *v = ir_region_add_arg(body, T(DT_I64), "v");
    saved = enter(&k, body);
    ir_build(&k.b, IR_YIELD, (ir_value *[]){bin(&k, IR_ADD, v, v)}, 1, NULL, 0, 0);
    k.b = saved;
    store(&k, at(&k, out, 2), none->results[0], NULL);

    int64_t o[3] = {0};
    blk_arg args[] = {BLK_PTR(o, sizeof o), BLK_INT(-2)};
    blk_status st = kb_run(&k, 1, 1, args, 2, NULL);
    CHECK(st == BLK_OK && o[0] == 89 && o[1] == 30 && o[2] == 42, "fib %lld, down %lld, none %lld %s", (long long)o[0],
          (long long)o[1], (long long)o[2], kb_diag(&k));
    args[1] = BLK_INT(0);
    st = kb_run(&k, 1, 1, args, 2, NULL);
    CHECK(st == BLK_ERR_RUNTIME && strstr(kb_diag(&k), "for loop step is zero (program (0, 0, 0))"), "step 0: %s",
          kb_diag(&k));
    args[1] = BLK_INT(3); /* positive step with lb > ub: zero trips */
    st = kb_run(&k, 1, 1, args, 2, NULL);
    CHECK(st == BLK_OK && o[1] == 0, "10 -> 0 step 3 runs zero times: %lld", (long long)o[1]);
    kb_free(&k);
}

/* collatz steps with while: x -> x even ? x / 2 : 3x + 1 until x <= 1 */
static void test_while(void) {
    kb k;
    kb_init(&k, "collatz");
    ir_value *out = kb_param(&k, TP(DT_I32), "out"), *n = kb_param(&k, T(DT_I32), "n");
    ir_inst *w = ir_build(&k.b, IR_WHILE, (ir_value *[]){n, c32(&k, 0)}, 2, (ir_type[]){T(DT_I32), T(DT_I32)}, 2, 2);
    ir_region *cr = w->regions[0], *br = w->regions[1];
    ir_value *cx = ir_region_add_arg(cr, T(DT_I32), "x"), *cs = ir_region_add_arg(cr, T(DT_I32), "steps");
    ir_builder saved = enter(&k, cr);
    ir_build(&k.b, IR_CONDITION, (ir_value *[]){cmp(&k, IR_CMP_GT, cx, c32(&k, 1)), cx, cs}, 3, NULL, 0, 0);
    k.b.region = br;
    ir_value *x = ir_region_add_arg(br, T(DT_I32), "x"), *steps = ir_region_add_arg(br, T(DT_I32), "steps");
    ir_value *even = cmp(&k, IR_CMP_EQ, bin(&k, IR_REM, x, c32(&k, 2)), c32(&k, 0));
    ir_value *half = bin(&k, IR_DIV, x, c32(&k, 2));
    ir_value *up = bin(&k, IR_ADD, bin(&k, IR_MUL, x, c32(&k, 3)), c32(&k, 1));
    ir_value *nx = ir_b3(&k.b, IR_SELECT, T(DT_I32), even, half, up);
    ir_build(&k.b, IR_YIELD, (ir_value *[]){nx, bin(&k, IR_ADD, steps, c32(&k, 1))}, 2, NULL, 0, 0);
    k.b = saved;
    store(&k, out, w->results[1], NULL);
    int32_t o = -1;
    blk_arg args[] = {BLK_PTR(&o, 4), BLK_INT(27)};
    blk_status st = kb_run(&k, 1, 1, args, 2, NULL);
    CHECK(st == BLK_OK && o == 111, "collatz(27) = %d, want 111 %s", o, kb_diag(&k));
    args[1] = BLK_INT(1);
    st = kb_run(&k, 1, 1, args, 2, NULL);
    CHECK(st == BLK_OK && o == 0, "while runs zero times: %d", o);
    kb_free(&k);
}

/* out[pid] = 1; if pid == 2 { return } out[pid] = 2 */
static void test_return(void) {
    kb k;
    kb_init(&k, "ret");
    ir_value *out = kb_param(&k, TP(DT_I32), "out");
    ir_value *p = ir_b2(&k.b, IR_PTRADD, out->type, out, pid(&k, 0));
    store(&k, p, c32(&k, 1), NULL);
    if_then_term(&k, cmp(&k, IR_CMP_EQ, pid(&k, 0), c32(&k, 2)), IR_RETURN, NULL, 0);
    store(&k, p, c32(&k, 2), NULL);
    ir_build(&k.b, IR_RETURN, NULL, 0, NULL, 0, 0);
    int32_t o[4] = {0};
    blk_arg args[] = {BLK_PTR(o, sizeof o)};
    blk_status st = kb_run(&k, 4, 1, args, 1, NULL);
    CHECK(st == BLK_OK && o[0] == 2 && o[1] == 2 && o[2] == 1 && o[3] == 2, "return: %d %d %d %d", o[0], o[1], o[2], o[3]);
    kb_free(&k);
}

static void test_print(void) {
    kb k;
    kb_init(&k, "printer");
    ir_value *in = kb_param(&k, TP(DT_F32), "in");
    ir_value *offs = ir_b1(&k.b, IR_RESHAPE, TB(DT_I32, 2, 2, 3), arange(&k, 0, 6));
    ir_value *blk = load(&k, ptradd(&k, in, offs), NULL, NULL);
    ir_value *h = cf(&k, T(DT_F16), 0.1);
    ir_value *t = ci(&k, T(DT_BOOL), 1);
    ir_value *u = ci(&k, T(DT_U8), 255);
    ir_inst *pr = ir_build(&k.b, IR_PRINT, (ir_value *[]){pid(&k, 1), blk, h, t, u}, 5, NULL, 0, 0);
    pr->str = "vals:";
    ir_inst *bare = ir_build(&k.b, IR_PRINT, NULL, 0, NULL, 0, 0);
    bare->str = "hello";
    float data[6] = {0.5f, 1, -2, 0.1f, INFINITY, NAN};
    FILE *f = tmpfile();
    CHECK(f != NULL, "tmpfile");
    if (!f) return;
    blk_arg args[] = {BLK_PTR(data, sizeof data)};
    blk_status st = kb_run(&k, 1, 2, args, 1, f);
    CHECK(st == BLK_OK, "print: %s", kb_diag(&k));
    rewind(f);
    char text[1024] = {0};
    size_t len = fread(text, 1, sizeof text - 1, f);
    text[len] = 0;
    fclose(f);
    const char *want = "pid (0, 0, 0) vals: 0 [[0.5, 1, -2], [0.1, inf, nan]] 0.1 true 255\n"
                       "pid (0, 0, 0) hello\n"
                       "pid (0, 1, 0) vals: 1 [[0.5, 1, -2], [0.1, inf, nan]] 0.1 true 255\n"
                       "pid (0, 1, 0) hello\n";
    CHECK(strcmp(text, want) == 0, "print output:\n%s\nwant:\n%s", text, want);
    kb_free(&k);
}

static void test_shapes_and_random(void) {
    kb k;
    kb_init(&k, "shapes");
    ir_value *out = kb_param(&k, TP(DT_I32), "out"), *rnd = kb_param(&k, TP(DT_F32), "rnd");
    ir_value *ri = kb_param(&k, TP(DT_U32), "ri");
    ir_value *x = ir_b1(&k.b, IR_RESHAPE, TB(DT_I32, 2, 2, 4), arange(&k, 0, 8)); /* [[0..3], [4..7]] */
    ir_inst *perm = ir_build(&k.b, IR_PERMUTE, &x, 1, (ir_type[]){TB(DT_I32, 2, 4, 2)}, 1, 0);
    perm->perm[0] = 1;
    perm->perm[1] = 0;
    ir_value *y = bin(&k, IR_ADD, x, splat(&k, c32(&k, 100), x->type));
    ir_value *j = ir_b2(&k.b, IR_JOIN, TB(DT_I32, 3, 2, 4, 2), x, y);
    ir_inst *sp = ir_build(&k.b, IR_SPLIT, &j, 1, (ir_type[]){x->type, x->type}, 2, 0);
    ir_value *row = ir_b1(&k.b, IR_RESHAPE, TB(DT_I32, 2, 1, 4), arange(&k, 10, 14));
    ir_value *bc = broadcast(&k, row, 3, 4);
    ir_inst *cat = ir_build(&k.b, IR_CAT, (ir_value *[]){sp->results[1], bc}, 2, (ir_type[]){TB(DT_I32, 2, 5, 4)}, 1, 0);
    cat->axis = 0;
    /* out[0..8) = permute, out[8..24) = join, out[24..44) = cat(split.1, broadcast) */
    ir_value *o1 = ir_b1(&k.b, IR_RESHAPE, TB(DT_I32, 2, 4, 2), arange(&k, 0, 8));
    store(&k, ptradd(&k, out, o1), perm->results[0], NULL);
    ir_value *o2 = ir_b1(&k.b, IR_RESHAPE, TB(DT_I32, 3, 2, 4, 2), arange(&k, 8, 24));
    store(&k, ptradd(&k, out, o2), j, NULL);
    ir_value *o3 = ir_b1(&k.b, IR_RESHAPE, TB(DT_I32, 2, 5, 4), arange(&k, 24, 44));
    store(&k, ptradd(&k, out, o3), cat->results[0], NULL);
    /* random numbers: rand, randn and randint at offsets 0..15, seed 1234 */
    ir_value *offs = arange(&k, 0, 16);
    ir_value *seed = ci(&k, T(DT_I64), 1234);
    ir_value *r = ir_b2(&k.b, IR_RAND, TB(DT_F32, 1, 16), seed, offs);
    ir_value *g = ir_b2(&k.b, IR_RANDN, TB(DT_F32, 1, 16), seed, offs);
    ir_value *ii = ir_b2(&k.b, IR_RANDINT, TB(DT_U32, 1, 16), seed, offs);
    store(&k, ptradd(&k, rnd, offs), r, NULL);
    store(&k, ptradd(&k, rnd, arange(&k, 16, 32)), g, NULL);
    store(&k, ptradd(&k, ri, offs), ii, NULL);

    int32_t o[44];
    float rf[32];
    uint32_t ru[16];
    blk_arg args[] = {BLK_PTR(o, sizeof o), BLK_PTR(rf, sizeof rf), BLK_PTR(ru, sizeof ru)};
    blk_status st = kb_run(&k, 1, 1, args, 3, NULL);
    CHECK(st == BLK_OK, "shapes: %s", kb_diag(&k));
    int want_perm[8] = {0, 4, 1, 5, 2, 6, 3, 7};
    int bad = 0;
    for (int q = 0; q < 8; q++) bad += o[q] != want_perm[q];
    CHECK(bad == 0, "permute");
    bad = 0;
    for (int q = 0; q < 8; q++) bad += o[8 + 2 * q] != q || o[8 + 2 * q + 1] != q + 100;
    CHECK(bad == 0, "join");
    bad = 0;
    for (int q = 0; q < 8; q++) bad += o[24 + q] != q + 100;
    for (int q = 0; q < 12; q++) bad += o[32 + q] != 10 + q % 4;
    CHECK(bad == 0, "split / broadcast / cat");
    bad = 0;
    for (int q = 0; q < 16; q++)
        bad += rf[q] != blk_rand(1234, (uint32_t)q) || rf[16 + q] != blk_randn(1234, (uint32_t)q) ||
               ru[q] != blk_randint(1234, (uint32_t)q);
    CHECK(bad == 0, "random numbers match eval.c");
    kb_free(&k);
}

/* malformed IR is an error, never a crash; calls must have been inlined */
static void test_bad_ir(void) {
    kb k;
    kb_init(&k, "bad");
    ir_value *out = kb_param(&k, TP(DT_I32), "out");
    ir_value *a = arange(&k, 0, 8), *b = arange(&k, 0, 4);
    ir_value *sum = ir_b2(&k.b, IR_ADD, a->type, a, b); /* 8 + 4 elements */
    store(&k, ptradd(&k, out, a), sum, NULL);
    int32_t o[8];
    blk_arg args[] = {BLK_PTR(o, sizeof o)};
    blk_status st = kb_run(&k, 1, 1, args, 1, NULL);
    CHECK(st == BLK_ERR_INTERNAL && strstr(kb_diag(&k), "malformed IR at 'add'"), "bad shapes: %s", kb_diag(&k));
    kb_free(&k);

    kb_init(&k, "caller");
    ir_func *callee = ir_func_new(k.m, "helper", false, LOC_NONE);
    ir_inst *call = ir_build(&k.b, IR_CALL, NULL, 0, NULL, 0, 0);
    call->callee = callee;
    st = kb_run(&k, 1, 1, NULL, 0, NULL);
    CHECK(st == BLK_ERR_INTERNAL && strstr(kb_diag(&k), "call to 'helper' in kernel 'caller' was not inlined"),
          "call: %s", kb_diag(&k));
    unsigned grid[3] = {1, 1, 1};
    st = interp_run(callee, grid, NULL, 0, INTERP_DEFAULT_STEPS, NULL, &k.diag);
    CHECK(st == BLK_ERR_USAGE && strstr(kb_diag(&k), "'helper' is a device function"), "device fn: %s", kb_diag(&k));
    kb_free(&k);
}

int main(void) {
    test_bad_ir();
    test_for_break_continue();
    test_for_steps();
    test_while();
    test_return();
    test_print();
    test_shapes_and_random();
    return test_finish("test_interp_control");
}

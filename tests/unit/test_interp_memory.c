/* test_interp_memory — loads and stores with masks, bounds and alignment
 * checking, block descriptors, atomics and argument checking. */
#include "test_interp_util.h"

enum { BLOCK = 256 };

/* vector_add(x, y, out, n): out[i] = x[i] + y[i] for i < n; with
 * mask_store false the store is unmasked (writes past n). `other` non-zero:
 * masked loads yield it. */
static void build_vadd(kb *k, bool mask_store, double other) {
    kb_init(k, "vector_add");
    ir_value *x = kb_param(k, TP(DT_F32), "x"), *y = kb_param(k, TP(DT_F32), "y");
    ir_value *out = kb_param(k, TP(DT_F32), "out"), *n = kb_param(k, T(DT_I32), "n");
    ir_value *base = bin(k, IR_MUL, pid(k, 0), c32(k, BLOCK));
    ir_value *ar = arange(k, 0, BLOCK);
    ir_value *offs = bin(k, IR_ADD, splat(k, base, ar->type), ar);
    ir_value *m = cmp(k, IR_CMP_LT, offs, splat(k, n, offs->type));
    ir_value *oth = other != 0 ? splat(k, cf(k, T(DT_F32), other), offs->type) : NULL;
    ir_value *xv = load(k, ptradd(k, x, offs), m, oth);
    ir_value *yv = load(k, ptradd(k, y, offs), m, oth);
    store(k, ptradd(k, out, offs), bin(k, IR_ADD, xv, yv), mask_store ? m : NULL);
}

static void test_vector_add(void) {
    const int n = 1000;
    size_t bytes = sizeof(float) * n;
    float *x = falloc(n), *y = falloc(n), *out = falloc(n);
    for (int i = 0; i < n; i++) { x[i] = (float)i * 0.25f; y[i] = 3.0f - (float)i; out[i] = -7; }
    kb k;
    build_vadd(&k, true, 0);
    /* exact-size arguments: the masked-off lanes (offsets 1000..1023) point
     * past every buffer and must be neither checked nor touched */
    blk_arg args[] = {BLK_PTR(x, bytes), BLK_PTR(y, bytes), BLK_PTR(out, bytes), BLK_INT(n)};
    blk_status s = kb_run(&k, (n + BLOCK - 1) / BLOCK, 1, args, 4, NULL);
    CHECK(s == BLK_OK, "vector_add: status %d: %s", s, kb_diag(&k));
    int bad = 0;
    for (int i = 0; i < n; i++) bad += out[i] != x[i] + y[i];
    CHECK(bad == 0, "vector_add: %d wrong elements", bad);
    kb_free(&k);

    /* masked loads yield `other`; the unmasked store writes all 1024 */
    float *out2 = falloc(1024);
    build_vadd(&k, false, -1.5);
    blk_arg args2[] = {BLK_PTR(x, bytes), BLK_PTR(y, bytes), BLK_PTR(out2, 1024 * sizeof(float)), BLK_INT(n)};
    s = kb_run(&k, 4, 1, args2, 4, NULL);
    CHECK(s == BLK_OK, "vector_add other: %s", kb_diag(&k));
    CHECK(out2[999] == x[999] + y[999] && out2[1000] == -3.0f && out2[1023] == -3.0f, "masked lanes yield other");
    kb_free(&k);

    /* the same unmasked store into an exact-size output is out of bounds */
    for (int i = 0; i < n; i++) out[i] = -7;
    build_vadd(&k, false, 0);
    s = kb_run(&k, 4, 1, args, 4, NULL);
    CHECK(s == BLK_ERR_RUNTIME, "OOB store: status %d", s);
    const char *want = "out-of-bounds store: element 232 of the block is at byte offset 4000 from argument 'out' of "
                       "4000 bytes (program (3, 0, 0))";
    CHECK(strstr(kb_diag(&k), want) != NULL, "OOB message: got\n%s", kb_diag(&k));
    CHECK(out[767] == x[767] + y[767], "earlier programs completed");
    kb_free(&k);

    /* unknown size (0) on one pointer turns checking off */
    float *big = falloc(1024);
    build_vadd(&k, false, 0);
    blk_arg args3[] = {BLK_PTR(x, bytes), BLK_PTR(y, bytes), BLK_PTR(big, 0), BLK_INT(n)};
    float *xb = falloc(1024), *yb = falloc(1024);
    args3[0] = BLK_PTR(xb, 0);
    args3[1] = BLK_PTR(yb, 0);
    for (int i = 0; i < 1024; i++) { xb[i] = 1; yb[i] = (float)i; big[i] = -5; }
    s = kb_run(&k, 4, 1, args3, 4, NULL);
    CHECK(s == BLK_OK && big[999] == 1000 && big[1023] == 0, "unchecked run: %s", kb_diag(&k));
    kb_free(&k);
    free(x); free(y); free(out); free(out2); free(big); free(xb); free(yb);
}

static void test_misaligned_and_scalar_oob(void) {
    kb k;
    kb_init(&k, "misaligned");
    ir_value *buf = kb_param(&k, TP(DT_U8), "buf");
    ir_value *p1 = ir_b2(&k.b, IR_PTRADD, buf->type, buf, c32(&k, 1));
    ir_value *pf = cast(&k, p1, DT_PTR);
    pf->type = TP(DT_F32); /* reinterpret: *u8 -> *f32 */
    ir_value *v = load(&k, pf, NULL, NULL);
    store(&k, ir_b2(&k.b, IR_PTRADD, TP(DT_F32), pf, c32(&k, 0)), v, NULL);
    unsigned char bytes[16] = {0};
    blk_arg args[] = {BLK_PTR(bytes, sizeof bytes)};
    blk_status s = kb_run(&k, 1, 1, args, 1, NULL);
    CHECK(s == BLK_ERR_RUNTIME, "misaligned: status %d", s);
    CHECK(strstr(kb_diag(&k), "misaligned load: the address is at byte offset 1 from argument 'buf', not a multiple "
                              "of the 4-byte element size (program (0, 0, 0))"),
          "misaligned message: %s", kb_diag(&k));
    kb_free(&k);

    /* a scalar load before the start of the argument */
    kb_init(&k, "before");
    ir_value *p = kb_param(&k, TP(DT_I32), "p");
    ir_value *q = ir_b2(&k.b, IR_PTRADD, p->type, p, c32(&k, -1));
    store(&k, p, load(&k, q, NULL, NULL), NULL);
    int32_t data[4] = {1, 2, 3, 4};
    blk_arg a2[] = {BLK_PTR(data, sizeof data)};
    s = kb_run(&k, 1, 1, a2, 1, NULL);
    CHECK(s == BLK_ERR_RUNTIME && strstr(kb_diag(&k), "out-of-bounds load: the address is at byte offset -4 from "
                                                      "argument 'p' of 16 bytes"),
          "scalar OOB message: %s", kb_diag(&k));
    kb_free(&k);
}

/* tensor descriptors: a 5 x 7 f32 matrix copied through 4 x 4 blocks */
static void test_descriptors(void) {
    kb k;
    kb_init(&k, "desc_copy");
    ir_value *src = kb_param(&k, TP(DT_F32), "src"), *dst = kb_param(&k, TP(DT_F32), "dst");
    ir_value *blocks = kb_param(&k, TP(DT_F32), "blocks");
    ir_value *M = c32(&k, 5), *N = c32(&k, 7), *one = c32(&k, 1);
    ir_value *om = bin(&k, IR_MUL, pid(&k, 0), c32(&k, 4)), *on = bin(&k, IR_MUL, pid(&k, 1), c32(&k, 4));
    ir_value *lops[7] = {src, M, N, N, one, om, on};
    ir_value *blk = ir_build(&k.b, IR_DESC_LOAD, lops, 7, (ir_type[]){TB(DT_F32, 2, 4, 4)}, 1, 0)->results[0];
    ir_value *sops[8] = {dst, M, N, N, one, om, on, blk};
    ir_build(&k.b, IR_DESC_STORE, sops, 8, NULL, 0, 0);
    /* also store the loaded block densely: blocks[(pid0 * 2 + pid1) * 16 + i * 4 + j] */
    ir_value *which = bin(&k, IR_ADD, bin(&k, IR_MUL, pid(&k, 0), c32(&k, 2)), pid(&k, 1));
    ir_value *offs = offsets_2d(&k, arange(&k, 0, 4), c32(&k, 4), arange(&k, 0, 4));
    offs = bin(&k, IR_ADD, offs, splat(&k, bin(&k, IR_MUL, which, c32(&k, 16)), offs->type));
    store(&k, ptradd(&k, blocks, offs), blk, NULL);

    float a[35], b[35], dense[64];
    for (int i = 0; i < 35; i++) { a[i] = (float)(i + 1); b[i] = -1; }
    blk_arg args[] = {BLK_PTR(a, sizeof a), BLK_PTR(b, sizeof b), BLK_PTR(dense, sizeof dense)};
    blk_status s = kb_run(&k, 2, 2, args, 3, NULL);
    CHECK(s == BLK_OK, "desc: %s", kb_diag(&k));
    CHECK(memcmp(a, b, sizeof a) == 0, "desc copy");
    int bad = 0;
    for (int pm = 0; pm < 2; pm++)
        for (int pn = 0; pn < 2; pn++)
            for (int i = 0; i < 4; i++)
                for (int j = 0; j < 4; j++) {
                    int gi = pm * 4 + i, gj = pn * 4 + j;
                    float want = gi < 5 && gj < 7 ? a[gi * 7 + gj] : 0.0f;
                    bad += dense[(pm * 2 + pn) * 16 + i * 4 + j] != want;
                }
    CHECK(bad == 0, "desc_load: out-of-range elements read 0 (%d wrong)", bad);
    kb_free(&k);
}

static void test_atomics(void) {
    kb k;
    kb_init(&k, "atomics");
    ir_value *cnt = kb_param(&k, TP(DT_I32), "cnt"), *olds = kb_param(&k, TP(DT_I32), "olds");
    ir_value *hist = kb_param(&k, TP(DT_I32), "hist"), *fmax = kb_param(&k, TP(DT_F32), "fmax");
    ir_value *slot = kb_param(&k, TP(DT_I32), "slot"), *lane_old = kb_param(&k, TP(DT_I32), "lane_old");
    ir_value *p = pid(&k, 0);
    ir_value *aops[2] = {cnt, c32(&k, 1)};
    ir_inst *add = ir_build(&k.b, IR_ATOMIC_RMW, aops, 2, (ir_type[]){T(DT_I32)}, 1, 0);
    add->kind = IR_ATOM_ADD;
    store(&k, ir_b2(&k.b, IR_PTRADD, olds->type, olds, p), add->results[0], NULL);
    /* hist[lane % 4] += 1 for lanes < 50 of 64 */
    ir_value *ar = arange(&k, 0, 64);
    ir_value *bucket = bin(&k, IR_REM, ar, splat(&k, c32(&k, 4), ar->type));
    ir_value *m = cmp(&k, IR_CMP_LT, ar, splat(&k, c32(&k, 50), ar->type));
    ir_value *hops[3] = {ptradd(&k, hist, bucket), splat(&k, c32(&k, 1), ar->type), m};
    ir_inst *h = ir_build(&k.b, IR_ATOMIC_RMW, hops, 3, (ir_type[]){ar->type}, 1, 0);
    h->kind = IR_ATOM_ADD;
    /* program 1 stores its per-lane old values */
    store(&k, ptradd(&k, lane_old, ar), h->results[0], cmp(&k, IR_CMP_EQ, splat(&k, p, ar->type), splat(&k, c32(&k, 1), ar->type)));
    /* float max of (pid * 1.5 - 3) */
    ir_value *fv = bin(&k, IR_SUB, bin(&k, IR_MUL, cast(&k, p, DT_F32), cf(&k, T(DT_F32), 1.5)), cf(&k, T(DT_F32), 3));
    ir_inst *mx = ir_build(&k.b, IR_ATOMIC_RMW, (ir_value *[]){fmax, fv}, 2, (ir_type[]){T(DT_F32)}, 1, 0);
    mx->kind = IR_ATOM_MAX;
    /* cas(slot, 0, pid + 100): only the first program succeeds */
    ir_value *cops[3] = {slot, c32(&k, 0), bin(&k, IR_ADD, p, c32(&k, 100))};
    ir_build(&k.b, IR_ATOMIC_CAS, cops, 3, (ir_type[]){T(DT_I32)}, 1, 0);

    int32_t c = 0, o[100], hi[4] = {0}, sl = 0, lo[64];
    float fm = -INFINITY;
    for (int i = 0; i < 64; i++) lo[i] = -1;
    blk_arg args[] = {BLK_PTR(&c, 4), BLK_PTR(o, sizeof o), BLK_PTR(hi, sizeof hi), BLK_PTR(&fm, 4), BLK_PTR(&sl, 4),
                      BLK_PTR(lo, sizeof lo)};
    blk_status s = kb_run(&k, 100, 1, args, 6, NULL);
    CHECK(s == BLK_OK, "atomics: %s", kb_diag(&k));
    CHECK(c == 100, "atomic counter %d", c);
    int bad = 0;
    for (int i = 0; i < 100; i++) bad += o[i] != i;
    CHECK(bad == 0, "atomic_add returns the old values in program order");
    CHECK(hi[0] == 1300 && hi[1] == 1300 && hi[2] == 1200 && hi[3] == 1200, "masked histogram %d %d %d %d", hi[0],
          hi[1], hi[2], hi[3]);
    CHECK(lo[0] == 13 && lo[1] == 13 && lo[4] == 14 && lo[49] == 25 && lo[50] == 0 && lo[63] == 0,
          "block atomic old values (masked lanes 0): %d %d %d %d %d", lo[0], lo[1], lo[4], lo[49], lo[50]);
    CHECK(fm == 99 * 1.5f - 3, "atomic max float %g", fm);
    CHECK(sl == 100, "atomic cas: first program wins (%d)", sl);
    kb_free(&k);
}

static void test_arguments(void) {
    kb k;
    build_vadd(&k, true, 0);
    float x[4];
    blk_arg three[] = {BLK_PTR(x, 16), BLK_PTR(x, 16), BLK_PTR(x, 16)};
    blk_status s = kb_run(&k, 1, 1, three, 3, NULL);
    CHECK(s == BLK_ERR_USAGE && strstr(kb_diag(&k), "kernel 'vector_add' takes 4 runtime arguments, but 3 were given"),
          "count: %s", kb_diag(&k));
    kb_free(&k);

    build_vadd(&k, true, 0);
    blk_arg wrong[] = {BLK_PTR(x, 16), BLK_INT(5), BLK_PTR(x, 16), BLK_INT(4)};
    s = kb_run(&k, 1, 1, wrong, 4, NULL);
    CHECK(s == BLK_ERR_USAGE && strstr(kb_diag(&k), "argument 2 of kernel 'vector_add' is an integer (BLK_ARG_INT), "
                                                    "but parameter 'y' of type *f32 needs a pointer (BLK_ARG_PTR)"),
          "kind: %s", kb_diag(&k));
    kb_free(&k);

    build_vadd(&k, true, 0);
    blk_arg fl[] = {BLK_PTR(x, 16), BLK_PTR(x, 16), BLK_PTR(x, 16), BLK_FLOAT(4.0)};
    s = kb_run(&k, 1, 1, fl, 4, NULL);
    CHECK(s == BLK_ERR_USAGE && strstr(kb_diag(&k), "parameter 'n' of type i32 needs an integer"), "float for int: %s",
          kb_diag(&k));
    kb_free(&k);

    /* float parameters are rounded to their dtype; ints wrap to theirs */
    kb_init(&k, "params");
    ir_value *out = kb_param(&k, TP(DT_F32), "out");
    ir_value *h = kb_param(&k, T(DT_F16), "h");
    ir_value *b = kb_param(&k, T(DT_I8), "b");
    store(&k, out, cast(&k, h, DT_F32), NULL);
    store(&k, ir_b2(&k.b, IR_PTRADD, out->type, out, c32(&k, 1)), cast(&k, b, DT_F32), NULL);
    float o[2];
    blk_arg pa[] = {BLK_PTR(o, sizeof o), BLK_FLOAT(0.1), BLK_INT(200)};
    s = kb_run(&k, 1, 1, pa, 3, NULL);
    CHECK(s == BLK_OK && o[0] == 0.0999755859375f && o[1] == -56.0f, "param rounding: %g %g %s", o[0], o[1], kb_diag(&k));
    blk_arg bad[] = {BLK_PTR(o, sizeof o), BLK_INT(1), BLK_INT(200)};
    s = kb_run(&k, 1, 1, bad, 3, NULL);
    CHECK(s == BLK_ERR_USAGE && strstr(kb_diag(&k), "parameter 'h' of type f16 needs a float (BLK_ARG_FLOAT)"),
          "int for float: %s", kb_diag(&k));
    kb_free(&k);
}

int main(void) {
    test_vector_add();
    test_misaligned_and_scalar_oob();
    test_descriptors();
    test_atomics();
    test_arguments();
    return test_finish("test_interp_memory");
}

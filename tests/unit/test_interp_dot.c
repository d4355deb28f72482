/* test_interp_dot — dot against C triple loops (f32 ieee, f32 tf32, bf16,
 * i8 -> i32) and a blocked 256 x 256 x 256 bf16 matmul kernel with a loop,
 * timed. Products are summed in k order in both, so results are equal. */
#include <time.h>

#include "test_interp_util.h"

enum { M = 16, K = 32, N = 8 };

static ir_value *load_2d(kb *k, ir_value *p, int rows, int cols) {
    return load(k, ptradd(k, p, offsets_2d(k, arange(k, 0, rows), c32(k, cols), arange(k, 0, cols))), NULL, NULL);
}

static void store_2d(kb *k, ir_value *p, ir_value *v) {
    int rows = v->type.shape[0], cols = v->type.shape[1];
    store(k, ptradd(k, p, offsets_2d(k, arange(k, 0, rows), c32(k, cols), arange(k, 0, cols))), v, NULL);
}

/* out = dot(a, b, acc) with a: [M, K] ta, b: [K, N] tb, acc/out: [M, N] tc */
static blk_status run_dot(blk_dtype ta, blk_dtype tb, blk_dtype tc, int precision, void *a, void *b, void *acc,
                          void *out) {
    kb k;
    kb_init(&k, "dot");
    ir_value *pa = kb_param(&k, TP(ta), "a"), *pb = kb_param(&k, TP(tb), "b");
    ir_value *pc = kb_param(&k, TP(tc), "acc"), *po = kb_param(&k, TP(tc), "out");
    ir_value *x = load_2d(&k, pa, M, K), *y = load_2d(&k, pb, K, N), *z = load_2d(&k, pc, M, N);
    ir_inst *d = ir_build(&k.b, IR_DOT, (ir_value *[]){x, y, z}, 3, (ir_type[]){z->type}, 1, 0);
    d->precision = (uint8_t)precision;
    store_2d(&k, po, d->results[0]);
    size_t ea = (size_t)dtype_bytes(ta), eb = (size_t)dtype_bytes(tb), ec = (size_t)dtype_bytes(tc);
    blk_arg args[] = {BLK_PTR(a, ea * M * K), BLK_PTR(b, eb * K * N), BLK_PTR(acc, ec * M * N),
                      BLK_PTR(out, ec * M * N)};
    blk_status s = kb_run(&k, 1, 1, args, 4, NULL);
    CHECK(s == BLK_OK, "dot: %s", kb_diag(&k));
    kb_free(&k);
    return s;
}

/* tf32 written independently of the implementation: 11 significant bits, RNE */
static float tf32_ref(float x) {
    int e;
    double m = frexp(x, &e);
    return (float)ldexp(nearbyint(ldexp(m, 11)), e - 11);
}

static void test_f32(void) {
    float a[M * K], b[K * N], acc[M * N], out[M * N];
    for (int i = 0; i < M * K; i++) a[i] = rndf() * (1 + (float)(rnd32() % 1000) / 7.0f);
    for (int i = 0; i < K * N; i++) b[i] = rndf() / 3.0f;
    for (int i = 0; i < M * N; i++) acc[i] = rndf();
    for (int prec = IR_PREC_DEFAULT; prec <= IR_PREC_IEEE; prec++) {
        run_dot(DT_F32, DT_F32, DT_F32, prec, a, b, acc, out);
        int bad = 0;
        for (int m = 0; m < M; m++)
            for (int n = 0; n < N; n++) {
                float c = acc[m * N + n];
                for (int q = 0; q < K; q++) {
                    if (prec == IR_PREC_IEEE) c = fmaf(a[m * K + q], b[q * N + n], c);
                    else c += tf32_ref(a[m * K + q]) * tf32_ref(b[q * N + n]);
                }
                bad += out[m * N + n] != c;
            }
        CHECK(bad == 0, "f32 dot precision %d: %d wrong", prec, bad);
    }
    /* tf32 and ieee really differ on these inputs */
    float ieee[M * N];
    run_dot(DT_F32, DT_F32, DT_F32, IR_PREC_IEEE, a, b, acc, ieee);
    run_dot(DT_F32, DT_F32, DT_F32, IR_PREC_TF32, a, b, acc, out);
    CHECK(memcmp(ieee, out, sizeof out) != 0, "tf32 rounding has an effect");

    /* tf32 ties go to even: 1 + 2^-11 -> 1, 1 + 3 * 2^-11 -> 1 + 2^-9 */
    memset(a, 0, sizeof a);
    memset(b, 0, sizeof b);
    memset(acc, 0, sizeof acc);
    a[0] = 1 + 0x1p-11f;
    a[1] = 1 + 3 * 0x1p-11f;
    b[0] = 1;
    b[N] = 1;
    run_dot(DT_F32, DT_F32, DT_F32, IR_PREC_TF32, a, b, acc, out);
    CHECK(out[0] == 2 + 0x1p-9f, "tf32 ties to even: %a", out[0]);
    run_dot(DT_F32, DT_F32, DT_F32, IR_PREC_IEEE, a, b, acc, out);
    CHECK(out[0] == 2 + 0x1p-9f, "ieee keeps f32: %a", out[0]);
}

static void test_bf16_i8(void) {
    uint16_t a[M * K], b[K * N];
    float acc[M * N], out[M * N];
    for (int i = 0; i < M * K; i++) a[i] = fp_f32_to_bf16(rndf() * 3);
    for (int i = 0; i < K * N; i++) b[i] = fp_f32_to_bf16(rndf());
    for (int i = 0; i < M * N; i++) acc[i] = 0;
    run_dot(DT_BF16, DT_BF16, DT_F32, IR_PREC_DEFAULT, a, b, acc, out);
    int bad = 0;
    for (int m = 0; m < M; m++)
        for (int n = 0; n < N; n++) {
            float c = 0;
            for (int q = 0; q < K; q++) c += fp_bf16_to_f32(a[m * K + q]) * fp_bf16_to_f32(b[q * N + n]);
            bad += out[m * N + n] != c;
        }
    CHECK(bad == 0, "bf16 dot: %d wrong", bad);

    int8_t ia[M * K], ib[K * N];
    int32_t iacc[M * N], iout[M * N];
    for (int i = 0; i < M * K; i++) ia[i] = (int8_t)rnd32();
    for (int i = 0; i < K * N; i++) ib[i] = (int8_t)rnd32();
    for (int i = 0; i < M * N; i++) iacc[i] = (int32_t)rnd32();
    iacc[0] = INT32_MAX; /* must wrap */
    run_dot(DT_I8, DT_I8, DT_I32, IR_PREC_DEFAULT, ia, ib, iacc, iout);
    bad = 0;
    for (int m = 0; m < M; m++)
        for (int n = 0; n < N; n++) {
            uint32_t c = (uint32_t)iacc[m * N + n];
            for (int q = 0; q < K; q++) c += (uint32_t)(ia[m * K + q] * ib[q * N + n]);
            bad += iout[m * N + n] != (int32_t)c;
        }
    CHECK(bad == 0, "i8 dot: %d wrong", bad);
}

/* matmul(a: *bf16, b: *bf16, c: *f32, M, N, K) with BM = BN = BK = 64 */
static void test_matmul_kernel(void) {
    enum { S = 256, BS = 64 };
    kb k;
    kb_init(&k, "matmul");
    ir_value *pa = kb_param(&k, TP(DT_BF16), "a"), *pb = kb_param(&k, TP(DT_BF16), "b");
    ir_value *pc = kb_param(&k, TP(DT_F32), "c");
    ir_value *Mv = kb_param(&k, T(DT_I32), "M"), *Nv = kb_param(&k, T(DT_I32), "N"), *Kv = kb_param(&k, T(DT_I32), "K");
    (void)Mv;
    ir_value *rm = bin(&k, IR_ADD, splat(&k, bin(&k, IR_MUL, pid(&k, 0), c32(&k, BS)), TB(DT_I32, 1, BS)), arange(&k, 0, BS));
    ir_value *rn = bin(&k, IR_ADD, splat(&k, bin(&k, IR_MUL, pid(&k, 1), c32(&k, BS)), TB(DT_I32, 1, BS)), arange(&k, 0, BS));
    ir_value *acc0 = cf(&k, TB(DT_F32, 2, BS, BS), 0.0);
    ir_inst *loop = ir_build(&k.b, IR_FOR, (ir_value *[]){c32(&k, 0), Kv, c32(&k, BS), acc0}, 4, (ir_type[]){acc0->type}, 1, 1);
    ir_region *body = loop->regions[0];
    ir_value *kk = ir_region_add_arg(body, T(DT_I32), "k");
    ir_value *acc = ir_region_add_arg(body, acc0->type, "acc");
    ir_builder saved = k.b;
    k.b.region = body;
    ir_value *rk = bin(&k, IR_ADD, splat(&k, kk, TB(DT_I32, 1, BS)), arange(&k, 0, BS));
    ir_value *x = load(&k, ptradd(&k, pa, offsets_2d(&k, rm, Kv, rk)), NULL, NULL);
    ir_value *y = load(&k, ptradd(&k, pb, offsets_2d(&k, rk, Nv, rn)), NULL, NULL);
    ir_value *next = ir_b3(&k.b, IR_DOT, acc->type, x, y, acc);
    ir_build(&k.b, IR_YIELD, &next, 1, NULL, 0, 0);
    k.b = saved;
    store(&k, ptradd(&k, pc, offsets_2d(&k, rm, Nv, rn)), loop->results[0], NULL);

    uint16_t *a = malloc(sizeof(uint16_t) * S * S), *b = malloc(sizeof(uint16_t) * S * S);
    float *c = falloc(S * S), *fa = falloc(S * S), *fb = falloc(S * S);
    for (int i = 0; i < S * S; i++) {
        a[i] = fp_f32_to_bf16(rndf());
        b[i] = fp_f32_to_bf16(rndf());
        fa[i] = fp_bf16_to_f32(a[i]);
        fb[i] = fp_bf16_to_f32(b[i]);
    }
    blk_arg args[] = {BLK_PTR(a, 2 * S * S), BLK_PTR(b, 2 * S * S), BLK_PTR(c, 4 * S * S), BLK_INT(S), BLK_INT(S), BLK_INT(S)};
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    blk_status s = kb_run(&k, S / BS, S / BS, args, 6, NULL);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
    CHECK(s == BLK_OK, "matmul: %s", kb_diag(&k));
    int bad = 0;
    for (int m = 0; m < S; m++)
        for (int n = 0; n < S; n++) {
            float r = 0;
            for (int q = 0; q < S; q++) r += fa[m * S + q] * fb[q * S + n];
            bad += c[m * S + n] != r;
        }
    CHECK(bad == 0, "matmul 256^3: %d wrong", bad);
    printf("matmul 256x256x256 (64x64 blocks) on the interpreter: %.3f s\n", secs);
#if !defined(__SANITIZE_ADDRESS__)
    CHECK(secs < 1.0, "matmul took %.3f s (limit 1 s)", secs);
#endif
    free(a); free(b); free(c); free(fa); free(fb);
    kb_free(&k);
}

int main(void) {
    test_f32();
    test_bf16_i8();
    test_matmul_kernel();
    return test_finish("test_interp_dot");
}

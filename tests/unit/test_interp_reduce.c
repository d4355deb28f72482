/* test_interp_reduce — reductions, argmax/argmin, combine-region reductions
 * and scans, sort and topk, each against plain C in the same order. */
#include "test_interp_util.h"

enum { R = 8, C = 16 };

/* offsets 0..numel-1 in the shape of t */
static ir_value *dense_offsets(kb *k, ir_type t) {
    ir_value *offs = arange(k, 0, (int)ir_numel(t));
    if (t.rank != 1) offs = ir_b1(&k->b, IR_RESHAPE, with_dtype(t, DT_I32), offs);
    return offs;
}

static ir_value *load_dense(kb *k, ir_value *p, ir_type t) { return load(k, ptradd(k, p, dense_offsets(k, t)), NULL, NULL); }

static void store_dense(kb *k, ir_value *p, ir_value *v) {
    if (!ir_is_block(v->type)) store(k, p, v, NULL);
    else store(k, ptradd(k, p, dense_offsets(k, v->type)), v, NULL);
}

static ir_type reduced(ir_type t, int axis, blk_dtype d) {
    int32_t shape[IR_MAX_RANK];
    int r = 0;
    for (int i = 0; i < t.rank; i++)
        if (i != axis) shape[r++] = t.shape[i];
    return ir_shaped(ir_scalar(d), r, shape);
}

/* kernel(in: *tin, out: *tout): out = op(load(in as [R, C])) */
static void begin(kb *k, blk_dtype tin, blk_dtype tout, ir_value **x, ir_value **out) {
    kb_init(k, "reduce_test");
    ir_value *in = kb_param(k, TP(tin), "in");
    *out = kb_param(k, TP(tout), "out");
    *x = load_dense(k, in, TB(tin, 2, R, C));
}

static void run(kb *k, void *in, size_t in_bytes, void *out, size_t out_bytes) {
    blk_arg args[] = {BLK_PTR(in, in_bytes), BLK_PTR(out, out_bytes)};
    blk_status s = kb_run(k, 1, 1, args, 2, NULL);
    CHECK(s == BLK_OK, "run: %s", kb_diag(k));
}

static ir_inst *op1(kb *k, ir_op op, ir_value *x, ir_type rt, int axis, int kind) {
    ir_inst *i = ir_build(&k->b, op, &x, 1, &rt, 1, 0);
    i->axis = axis;
    i->kind = kind;
    return i;
}

static float fin[R * C];

static void test_reduce_f32(void) {
    const int kinds[] = {IR_RED_SUM, IR_RED_MAX, IR_RED_MIN, IR_RED_PROD};
    for (int ki = 0; ki < 4; ki++)
        for (int axis = 0; axis < 2; axis++) {
            kb k;
            ir_value *x, *out;
            begin(&k, DT_F32, DT_F32, &x, &out);
            store_dense(&k, out, op1(&k, IR_REDUCE, x, reduced(x->type, axis, DT_F32), axis, kinds[ki])->results[0]);
            float got[C];
            run(&k, fin, sizeof fin, got, sizeof(float) * (axis ? R : C));
            int n = axis ? C : R, lines = axis ? R : C, bad = 0;
            for (int l = 0; l < lines; l++) {
                float acc = 0;
                for (int i = 0; i < n; i++) {
                    float v = axis ? fin[l * C + i] : fin[i * C + l];
                    if (i == 0) acc = v;
                    else if (kinds[ki] == IR_RED_SUM) acc += v;
                    else if (kinds[ki] == IR_RED_PROD) acc *= v;
                    else if (kinds[ki] == IR_RED_MAX) acc = v > acc ? v : acc;
                    else acc = v < acc ? v : acc;
                }
                bad += got[l] != acc;
            }
            CHECK(bad == 0, "reduce kind %d axis %d: %d wrong", kinds[ki], axis, bad);
            kb_free(&k);
        }
    /* NaN loses in max, as in maximum() */
    float nanin[R * C];
    for (int i = 0; i < R * C; i++) nanin[i] = (float)i;
    nanin[5] = NAN;
    kb k;
    ir_value *x, *out;
    begin(&k, DT_F32, DT_F32, &x, &out);
    store_dense(&k, out, op1(&k, IR_REDUCE, x, reduced(x->type, 1, DT_F32), 1, IR_RED_MAX)->results[0]);
    float got[R];
    run(&k, nanin, sizeof nanin, got, sizeof got);
    CHECK(got[0] == 15.0f, "max ignores NaN: %g", got[0]);
    kb_free(&k);
}

static void test_reduce_narrow(void) {
    /* f16 input summed into an f32 result: accumulation happens in f32 */
    uint16_t h[R * C];
    for (int i = 0; i < R * C; i++) h[i] = fp_f32_to_f16(1.0f + (float)i / 1024.0f);
    kb k;
    ir_value *x, *out;
    /* [R, C] -> [C] (f32), then [C] -> scalar */
    begin(&k, DT_F16, DT_F32, &x, &out);
    ir_value *rows = op1(&k, IR_REDUCE, x, reduced(x->type, 0, DT_F32), 0, IR_RED_SUM)->results[0];
    ir_value *total = op1(&k, IR_REDUCE, rows, ir_scalar(DT_F32), 0, IR_RED_SUM)->results[0];
    store_dense(&k, out, total);
    float got;
    run(&k, h, sizeof h, &got, sizeof got);
    float want = 0;
    for (int j = 0; j < C; j++) {
        float col = 0;
        for (int i = 0; i < R; i++) col += fp_f16_to_f32(h[i * C + j]);
        want = j ? want + col : col;
    }
    CHECK(got == want, "f16 -> f32 sum %g want %g", got, want);
    kb_free(&k);

    /* i8 sum wraps in i8; xor_sum */
    int8_t b[R * C];
    for (int i = 0; i < R * C; i++) b[i] = (int8_t)(i * 7);
    begin(&k, DT_I8, DT_I8, &x, &out);
    ir_value *s = op1(&k, IR_REDUCE, x, reduced(x->type, 1, DT_I8), 1, IR_RED_SUM)->results[0];
    ir_value *xs = op1(&k, IR_REDUCE, x, reduced(x->type, 1, DT_I8), 1, IR_RED_XOR_SUM)->results[0];
    store_dense(&k, out, ir_b2(&k.b, IR_JOIN, TB(DT_I8, 2, R, 2), s, xs));
    int8_t got8[R * 2];
    run(&k, b, sizeof b, got8, sizeof got8);
    int bad = 0;
    for (int r = 0; r < R; r++) {
        int8_t sum = 0, x8 = 0;
        for (int c = 0; c < C; c++) { sum = (int8_t)(sum + b[r * C + c]); x8 ^= b[r * C + c]; }
        bad += got8[2 * r] != sum || got8[2 * r + 1] != x8;
    }
    CHECK(bad == 0, "i8 sum wraps / xor_sum (%d wrong)", bad);
    kb_free(&k);
}

static void test_argreduce(void) {
    float in[R * C];
    for (int i = 0; i < R * C; i++) in[i] = (float)((i * 37) % 11);
    /* row 0: ties for the max (10 at 3 and 9) -> first; row 1: NaN ignored;
     * row 2: all NaN -> 0; row 3: -0 and +0 tie for the max */
    for (int c = 0; c < C; c++) { in[c] = 1; in[2 * C + c] = NAN; in[3 * C + c] = -1; }
    in[3] = 10; in[9] = 10; in[1] = -5; in[12] = -5;
    in[C + 4] = NAN; in[C + 0] = 100;
    in[3 * C + 6] = -0.0f; in[3 * C + 2] = 0.0f;
    for (int kind = IR_RED_ARGMAX; kind <= IR_RED_ARGMIN; kind++) {
        kb k;
        ir_value *x, *out;
        begin(&k, DT_F32, DT_I32, &x, &out);
        store_dense(&k, out, op1(&k, IR_ARGREDUCE, x, reduced(x->type, 1, DT_I32), 1, kind)->results[0]);
        int32_t got[R];
        run(&k, in, sizeof in, got, sizeof got);
        for (int r = 0; r < R; r++) {
            int want = -1;
            for (int c = 0; c < C; c++) {
                float v = in[r * C + c];
                if (isnan(v)) continue;
                if (want < 0 || (kind == IR_RED_ARGMAX ? v > in[r * C + want] : v < in[r * C + want])) want = c;
            }
            if (want < 0) want = 0;
            CHECK(got[r] == want, "arg%s row %d: %d want %d", kind == IR_RED_ARGMAX ? "max" : "min", r, got[r], want);
        }
        if (kind == IR_RED_ARGMAX) CHECK(got[0] == 3 && got[1] == 0 && got[2] == 0 && got[3] == 2, "argmax cases");
        else CHECK(got[0] == 1 && got[3] == 0, "argmin cases");
        kb_free(&k);
    }
}

/* combine(a, b) = a * 2 + b: order-sensitive, so the fold order is visible */
static ir_inst *region_op(kb *k, ir_op op, ir_value *x, ir_type rt, int axis, unsigned flags) {
    ir_inst *i = ir_build(&k->b, op, &x, 1, &rt, 1, 1);
    i->axis = axis;
    i->flags = flags;
    ir_region *reg = i->regions[0];
    ir_value *a = ir_region_add_arg(reg, ir_elem(x->type), "a");
    ir_value *b = ir_region_add_arg(reg, ir_elem(x->type), "b");
    ir_builder saved = k->b;
    k->b.region = reg;
    ir_value *v = bin(k, IR_ADD, bin(k, IR_MUL, a, ci(k, ir_elem(x->type), 2)), b);
    ir_build(&k->b, IR_YIELD, &v, 1, NULL, 0, 0);
    k->b = saved;
    return i;
}

static int32_t iin[R * C];

static void test_region_reduce_and_scans(void) {
    for (int i = 0; i < R * C; i++) iin[i] = (int32_t)(rnd32() % 7) - 3;
    kb k;
    ir_value *x, *out;
    /* reduce_fn along axis 1, reduce_fn along axis 0 */
    begin(&k, DT_I32, DT_I32, &x, &out);
    ir_value *r1 = region_op(&k, IR_REDUCE_REGION, x, reduced(x->type, 1, DT_I32), 1, 0)->results[0];
    ir_value *r0 = region_op(&k, IR_REDUCE_REGION, x, reduced(x->type, 0, DT_I32), 0, 0)->results[0];
    store_dense(&k, out, ir_b2(&k.b, IR_CAT, TB(DT_I32, 1, R + C), r1, r0));
    int32_t got[R * C];
    run(&k, iin, sizeof iin, got, sizeof(int32_t) * (R + C));
    int bad = 0;
    for (int r = 0; r < R; r++) {
        int32_t acc = iin[r * C];
        for (int c = 1; c < C; c++) acc = acc * 2 + iin[r * C + c];
        bad += got[r] != acc;
    }
    for (int c = 0; c < C; c++) {
        int32_t acc = iin[c];
        for (int r = 1; r < R; r++) acc = acc * 2 + iin[r * C + c];
        bad += got[R + c] != acc;
    }
    CHECK(bad == 0, "reduce_fn: %d wrong", bad);
    kb_free(&k);

    /* scans: cumsum axis 1, reverse cumsum axis 0, cumprod, scan_fn reverse */
    for (int variant = 0; variant < 4; variant++) {
        begin(&k, DT_I32, DT_I32, &x, &out);
        int axis = variant == 1 ? 0 : 1;
        bool reverse = variant == 1 || variant == 3;
        ir_value *s;
        if (variant == 3) {
            s = region_op(&k, IR_SCAN_REGION, x, x->type, axis, IRF_REVERSE)->results[0];
        } else {
            ir_inst *i = op1(&k, IR_SCAN, x, x->type, axis, variant == 2 ? IR_RED_PROD : IR_RED_SUM);
            if (reverse) i->flags = IRF_REVERSE;
            s = i->results[0];
        }
        store_dense(&k, out, s);
        run(&k, iin, sizeof iin, got, sizeof got);
        bad = 0;
        int n = axis ? C : R, lines = axis ? R : C;
        for (int l = 0; l < lines; l++) {
            int32_t acc = 0;
            for (int step = 0; step < n; step++) {
                int i = reverse ? n - 1 - step : step;
                int pos = axis ? l * C + i : i * C + l;
                int32_t v = iin[pos];
                if (step == 0) acc = v;
                else if (variant == 2) acc *= v;
                else if (variant == 3) acc = acc * 2 + v;
                else acc += v;
                bad += got[pos] != acc;
            }
        }
        CHECK(bad == 0, "scan variant %d: %d wrong", variant, bad);
        kb_free(&k);
    }
}

static void test_sort_topk(void) {
    float in[R * C];
    for (int i = 0; i < R * C; i++) in[i] = (float)(rnd32() % 5);
    /* row 0: +0 before -0 and -0 before +0: a stable sort keeps that order */
    for (int c = 0; c < C; c++) in[c] = c % 2 ? -0.0f : 0.0f;
    in[5] = NAN;
    in[7] = 1;
    for (int desc = 0; desc < 2; desc++) {
        kb k;
        ir_value *x, *out;
        begin(&k, DT_F32, DT_F32, &x, &out);
        ir_inst *s = op1(&k, IR_SORT, x, x->type, 1, 0);
        if (desc) s->flags = IRF_DESCENDING;
        store_dense(&k, out, s->results[0]);
        float got[R * C];
        run(&k, in, sizeof in, got, sizeof got);
        int bad = 0;
        for (int r = 1; r < R; r++) {
            int count[5] = {0};
            for (int c = 0; c < C; c++) count[(int)in[r * C + c]]++;
            int pos = 0;
            for (int v = 0; v < 5; v++) {
                int val = desc ? 4 - v : v;
                for (int q = 0; q < count[val]; q++) bad += got[r * C + pos++] != (float)val;
            }
        }
        CHECK(bad == 0, "sort %s: %d wrong", desc ? "descending" : "ascending", bad);
        /* row 0: 7 zeros of alternating sign (in input order), one 1, one NaN */
        if (!desc) {
            CHECK(isnan(got[C - 1]) && got[C - 2] == 1, "ascending: NaN last");
            bool stable = true;
            int zi = 0;
            for (int c = 0; c < C; c++) {
                if (c == 5 || c == 7) continue;
                stable &= got[zi] == 0 && (signbit(got[zi]) != 0) == (c % 2 == 1);
                zi++;
            }
            CHECK(stable, "sort is stable for -0/+0");
        } else {
            CHECK(isnan(got[0]) && got[1] == 1 && !signbit(got[2]) && signbit(got[3]), "descending: NaN first, stable");
        }
        kb_free(&k);
    }

    /* topk k = 3 along axis 1 with ties -> lower index first */
    kb k;
    ir_value *x, *out;
    begin(&k, DT_F32, DT_F32, &x, &out);
    ir_value *idxp = kb_param(&k, TP(DT_I32), "idx");
    ir_type vt = TB(DT_F32, 2, R, 3), it = TB(DT_I32, 2, R, 3);
    ir_inst *tk = ir_build(&k.b, IR_TOPK, &x, 1, (ir_type[]){vt, it}, 2, 0);
    tk->axis = 1;
    tk->ival = 3;
    store_dense(&k, out, tk->results[0]);
    store_dense(&k, idxp, tk->results[1]);
    for (int i = 0; i < R * C; i++) in[i] = (float)(rnd32() % 6);
    float vals[R * 3];
    int32_t idx[R * 3];
    blk_arg args[] = {BLK_PTR(in, sizeof in), BLK_PTR(vals, sizeof vals), BLK_PTR(idx, sizeof idx)};
    blk_status st = kb_run(&k, 1, 1, args, 3, NULL);
    CHECK(st == BLK_OK, "topk: %s", kb_diag(&k));
    int bad = 0;
    for (int r = 0; r < R; r++) {
        bool used[C] = {false};
        for (int q = 0; q < 3; q++) {
            int best = -1;
            for (int c = 0; c < C; c++)
                if (!used[c] && (best < 0 || in[r * C + c] > in[r * C + best])) best = c;
            used[best] = true;
            bad += vals[r * 3 + q] != in[r * C + best] || idx[r * 3 + q] != best;
        }
    }
    CHECK(bad == 0, "topk: %d wrong", bad);
    kb_free(&k);
}

int main(void) {
    for (int i = 0; i < R * C; i++) fin[i] = rndf() * 2;
    test_reduce_f32();
    test_reduce_narrow();
    test_argreduce();
    test_region_reduce_and_scans();
    test_sort_topk();
    return test_finish("test_interp_reduce");
}

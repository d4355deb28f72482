/* stdlib/reduce.blk and layout.blk on the interpreter vs C. */
#include "harness.h"

static void reductions(int rows, int cols) {
    const char *defs[] = {"BLOCK=256", NULL};
    size_t n = (size_t)rows * cols;
    float *x = h_rand_f32(n, -10, 10);
    float *out = h_fill_f32((size_t)rows, NAN), *want = malloc(4 * (size_t)rows);
    int32_t *idx = calloc((size_t)rows, 4), *widx = calloc((size_t)rows, 4);
    for (int r = 0; r < rows; r++) {
        double s = 0;
        for (int j = 0; j < cols; j++) s += x[(size_t)r * cols + j];
        want[r] = (float)s;
    }
    blkc_ctx *c = h_build(h_stdlib, "reduce.blk", "row_sum", defs);
    blk_arg args[] = {BLK_PTR(out, 4 * (size_t)rows), BLK_PTR(x, 4 * n), BLK_INT(cols), BLK_INT(cols)};
    if (h_run(c, "row_sum", (unsigned)rows, 1, 1, args, 4) == 0) h_close("row_sum", out, want, (size_t)rows, 1e-5f, 1e-4f);
    blkc_free(c);

    x[(size_t)1 * cols + 3] = x[(size_t)1 * cols + 7] = 50.0f; /* a tie: argmax takes the first */
    for (int r = 0; r < rows; r++) {
        float m = -INFINITY; int mi = 0;
        for (int j = 0; j < cols; j++) if (x[(size_t)r * cols + j] > m) { m = x[(size_t)r * cols + j]; mi = j; }
        want[r] = m; widx[r] = mi;
    }
    c = h_build(h_stdlib, "reduce.blk", "row_max_argmax", defs);
    blk_arg margs[] = {BLK_PTR(out, 4 * (size_t)rows), BLK_PTR(idx, 4 * (size_t)rows), BLK_PTR(x, 4 * n), BLK_INT(cols), BLK_INT(cols)};
    if (h_run(c, "row_max_argmax", (unsigned)rows, 1, 1, margs, 5) == 0) {
        h_close("row_max", out, want, (size_t)rows, 0, 0);
        h_equal_i32("row_argmax", idx, widx, (size_t)rows);
    }
    blkc_free(c);

    float *cs = h_fill_f32((size_t)cols, NAN), *wcs = malloc(4 * (size_t)cols);
    for (int j = 0; j < cols; j++) {
        double s = 0;
        for (int r = 0; r < rows; r++) s += x[(size_t)r * cols + j];
        wcs[j] = (float)s;
    }
    const char *cdefs[] = {"BR=4", "BC=32", NULL};
    c = h_build(h_stdlib, "reduce.blk", "col_sum", cdefs);
    blk_arg cargs[] = {BLK_PTR(cs, 4 * (size_t)cols), BLK_PTR(x, 4 * n), BLK_INT(rows), BLK_INT(cols), BLK_INT(cols)};
    if (h_run(c, "col_sum", h_cdiv(cols, 32), 1, 1, cargs, 5) == 0) h_close("col_sum", cs, wcs, (size_t)cols, 1e-5f, 1e-4f);
    blkc_free(c);

    float *scan = h_fill_f32(n, NAN), *wscan = malloc(4 * n);
    for (int r = 0; r < rows; r++) {
        double s = 0;
        for (int j = 0; j < cols; j++) { s += x[(size_t)r * cols + j]; wscan[(size_t)r * cols + j] = (float)s; }
    }
    c = h_build(h_stdlib, "reduce.blk", "cumsum_rows", defs);
    blk_arg sargs[] = {BLK_PTR(scan, 4 * n), BLK_PTR(x, 4 * n), BLK_INT(cols), BLK_INT(cols)};
    if (h_run(c, "cumsum_rows", (unsigned)rows, 1, 1, sargs, 4) == 0) h_close("cumsum_rows", scan, wscan, n, 1e-5f, 1e-4f);
    blkc_free(c);

    const int K = 4;
    float *tv = h_fill_f32((size_t)rows * K, NAN), *wtv = malloc(4 * (size_t)rows * K);
    int32_t *ti = calloc((size_t)rows * K, 4), *wti = calloc((size_t)rows * K, 4);
    for (int r = 0; r < rows; r++) {
        char *used = calloc((size_t)cols, 1);
        for (int k = 0; k < K; k++) {
            int best = -1;
            for (int j = 0; j < cols; j++)
                if (!used[j] && (best < 0 || x[(size_t)r * cols + j] > x[(size_t)r * cols + best])) best = j;
            used[best] = 1;
            wtv[r * K + k] = x[(size_t)r * cols + best];
            wti[r * K + k] = best;
        }
        free(used);
    }
    const char *tdefs[] = {"BLOCK=256", "K=4", NULL};
    c = h_build(h_stdlib, "reduce.blk", "topk_rows", tdefs);
    blk_arg targs[] = {BLK_PTR(tv, 4 * (size_t)rows * K), BLK_PTR(ti, 4 * (size_t)rows * K), BLK_PTR(x, 4 * n), BLK_INT(cols), BLK_INT(cols)};
    if (h_run(c, "topk_rows", (unsigned)rows, 1, 1, targs, 5) == 0) {
        h_close("topk values", tv, wtv, (size_t)rows * K, 0, 0);
        h_equal_i32("topk indices", ti, wti, (size_t)rows * K);
    }
    blkc_free(c);
    free(x); free(out); free(want); free(idx); free(widx); free(cs); free(wcs); free(scan); free(wscan);
    free(tv); free(wtv); free(ti); free(wti);
}

static void transpose(int rows, int cols) {
    const char *defs[] = {"B=16", NULL};
    size_t n = (size_t)rows * cols;
    float *x = h_rand_f32(n, -1, 1), *out = h_fill_f32(n, NAN), *want = malloc(4 * n);
    for (int r = 0; r < rows; r++)
        for (int j = 0; j < cols; j++) want[(size_t)j * rows + r] = x[(size_t)r * cols + j];
    blkc_ctx *c = h_build(h_stdlib, "layout.blk", "transpose", defs);
    blk_arg args[] = {BLK_PTR(out, 4 * n), BLK_PTR(x, 4 * n), BLK_INT(rows), BLK_INT(cols)};
    if (h_run(c, "transpose", h_cdiv(rows, 16), h_cdiv(cols, 16), 1, args, 4) == 0) h_close("transpose", out, want, n, 0, 0);
    blkc_free(c);
    free(x); free(out); free(want);
}

static void head_reshape(int B, int S, int H) {
    const int D = 16;
    const char *defs[] = {"D=16", "BS=8", NULL};
    size_t n = (size_t)B * S * H * D;
    uint16_t *x = malloc(2 * n), *y = calloc(n, 2), *back = calloc(n, 2);
    for (size_t i = 0; i < n; i++) x[i] = (uint16_t)(h_u32() & 0x7f7f);
    blkc_ctx *c = h_build(h_stdlib, "layout.blk", "bshd_to_bhsd", defs);
    blk_arg args[] = {BLK_PTR(y, 2 * n), BLK_PTR(x, 2 * n), BLK_INT(S), BLK_INT(H)};
    if (h_run(c, "bshd_to_bhsd", h_cdiv(S, 8), (unsigned)H, (unsigned)B, args, 4) == 0) {
        int bad = 0;
        for (int b = 0; b < B; b++)
            for (int s = 0; s < S; s++)
                for (int h = 0; h < H; h++)
                    for (int d = 0; d < D; d++)
                        bad += y[(((size_t)b * H + h) * S + s) * D + d] != x[(((size_t)b * S + s) * H + h) * D + d];
        CHECK(bad == 0, "bshd_to_bhsd: %d elements misplaced", bad);
    }
    blkc_free(c);
    c = h_build(h_stdlib, "layout.blk", "bhsd_to_bshd", defs);
    blk_arg bargs[] = {BLK_PTR(back, 2 * n), BLK_PTR(y, 2 * n), BLK_INT(S), BLK_INT(H)};
    if (h_run(c, "bhsd_to_bshd", h_cdiv(S, 8), (unsigned)H, (unsigned)B, bargs, 4) == 0)
        CHECK(memcmp(back, x, 2 * n) == 0, "bhsd_to_bshd does not invert bshd_to_bhsd");
    blkc_free(c);
    free(x); free(y); free(back);
}

int main(int argc, char **argv) {
    h_init(argc, argv);
    h_seed(7);
    reductions(9, 200);
    reductions(4, 256);
    transpose(37, 50);
    transpose(16, 16);
    head_reshape(2, 19, 3);
    return test_finish("reduce_layout");
}

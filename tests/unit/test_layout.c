/* test_layout — the layout algebra of compiler/passes/layout.[ch] and the
 * PTX backend end to end through the public API:
 *  - lay_choose_blocked gives the expected Triton-style parameters;
 *  - every layout covers every element of the blocks it fits (brute force
 *    over all threads with the ownership formula of layout.h), each thread's
 *    registers are distinct elements, and lay_num_regs counts them;
 *  - slice / expand_dims and permute round trips;
 *  - blkc_emit(c, "ptx" / "meta" / "llvm") on a kernel with a loop, a
 *    reduction and masks; an unknown arch is refused before LLVM runs. */
#include <stdio.h>
#include <string.h>

#include "blk/blkc.h"
#include "passes/layout.h"

#include "../test_util.h"

/* Coordinate of register index k (one dim) for thread coordinate tc, with
 * rin register repeats spt*tpw apart inside a warp's span (layout.h). */
static int coord(int S, int spt, int tpw, int rin, int tile, int tc, int k) {
    if (S <= spt) return k;
    int kr = k / spt, c = (kr / rin) * tile + (kr % rin) * spt * tpw + tc * spt + k % spt;
    return S < tile ? (tc * spt % S) + k % spt : c;
}

/* Brute-force coverage check of layout l on shape (num_warps warps). */
static void check_cover(const lay_layout *l, int rank, const int32_t *shape, int num_warps, const char *what) {
    lay_flat f;
    lay_flatten(l, &f);
    int n[IR_MAX_RANK];
    int nregs = lay_num_regs(l, shape, n);
    int numel = 1;
    for (int d = 0; d < rank; d++) numel *= shape[d];
    static unsigned char seen[1 << 16], mine[1 << 16];
    memset(seen, 0, sizeof seen);
    for (int tid = 0; tid < 32 * num_warps; tid++) {
        int lane = tid % 32, warp = tid / 32, ls = 1, ws = 1, tc[IR_MAX_RANK + 1];
        for (int i = 0; i < f.root_rank; i++) {
            int p = f.order[i];
            tc[p] = ((warp / ws) % f.wpc[p]) * f.tpw[p] * f.rin[p] + (lane / ls) % f.tpw[p];
            ls *= f.tpw[p];
            ws *= f.wpc[p];
        }
        memset(mine, 0, (size_t)numel);
        for (int r = 0; r < nregs; r++) {
            int rest = r, lin = 0, k[IR_MAX_RANK];
            for (int i = 0; i < rank; i++) {
                int d = f.reg_order[i];
                k[d] = rest % n[d];
                rest /= n[d];
            }
            for (int d = 0; d < rank; d++) {
                int p = f.dims[d], spt = f.spt[p], tile = lay_tile(&f, p);
                int c = coord(shape[d], spt, f.tpw[p], f.rin[p], tile, tc[p], k[d]);
                CHECK(c >= 0 && c < shape[d], "%s: tid %d reg %d dim %d coord %d out of range", what, tid, r, d, c);
                lin = lin * shape[d] + c;
            }
            CHECK(!mine[lin], "%s: tid %d holds element %d twice", what, tid, lin);
            mine[lin] = 1;
            seen[lin] = 1;
        }
    }
    for (int i = 0; i < numel; i++) CHECK(seen[i], "%s: element %d owned by no thread", what, i);
}

static void test_choose(blk_arena *a) {
    int32_t s1[] = {1024};
    const lay_layout *l = lay_choose_blocked(a, 1, s1, 4, 0, 4);
    CHECK(l->spt[0] == 4 && l->tpw[0] == 32 && l->wpc[0] == 4, "vector layout");
    check_cover(l, 1, s1, 4, "[1024] v4");
    int32_t s2[] = {16, 256};
    l = lay_choose_blocked(a, 2, s2, 4, 1, 8);
    CHECK(l->spt[1] == 8 && l->tpw[1] == 32 && l->tpw[0] == 1 && l->wpc[0] == 4 && l->order[0] == 1, "2-D layout");
    check_cover(l, 2, s2, 4, "[16,256] v8");
    int32_t s3[] = {16, 1};
    check_cover(l, 2, s3, 4, "[16,1] in a [16,256] layout");
    int32_t s4[] = {8};
    l = lay_choose_blocked(a, 1, s4, 8, 0, 1);
    check_cover(l, 1, s4, 8, "[8] over 256 threads (replicated)");
    int32_t s5[] = {64, 64};
    l = lay_choose_blocked(a, 2, s5, 4, 0, 4); /* column-major fastest */
    check_cover(l, 2, s5, 4, "[64,64] order [0,1]");
    int32_t s6[] = {3, 32};
    l = lay_choose_blocked(a, 2, s6, 4, 1, 1);
    CHECK(lay_fits(l, 2, s6), "non-power-of-two dim fits");
    check_cover(l, 2, s6, 4, "[3,32]");
    int32_t bad[] = {48};
    l = lay_choose_blocked(a, 1, s1, 4, 0, 4);
    CHECK(!lay_fits(l, 1, bad), "[48] does not fit a 512-element tile");
}

static void test_algebra(blk_arena *a) {
    int32_t s[] = {32, 128};
    const lay_layout *l = lay_choose_blocked(a, 2, s, 8, 1, 4);
    for (int d = 0; d < 2; d++) {
        const lay_layout *sl = lay_slice(a, l, d);
        CHECK(lay_eq(lay_expand(a, sl, d), l), "expand_dims(slice(L, %d), %d) == L", d, d);
        int32_t rs[] = {s[1 - d]};
        check_cover(sl, 1, rs, 8, d ? "slice dim 1" : "slice dim 0");
    }
    int perm[] = {1, 0};
    const lay_layout *p = lay_permute(a, l, perm);
    CHECK(lay_eq(lay_permute(a, p, perm), l), "permute twice");
    int32_t ps[] = {128, 32};
    check_cover(p, 2, ps, 8, "permuted");
    blk_strbuf sb;
    sb_init(&sb);
    lay_print(&sb, lay_slice(a, l, 0));
    CHECK(strcmp(sb_str(&sb), "#slice<dim=0, #blocked<spt=[1, 4], tpw=[1, 32], wpc=[8, 1], order=[1, 0]>>") == 0,
          "print: %s", sb_str(&sb));
    sb_free(&sb);
}

/* wgmma's accumulator (lay_for_dot's wgmma form): warp w, lane (g, t),
 * register (k0, k1) with k0 = 2i + h sits at row 16w + 8h + g + 16*Wm*i,
 * column 8*(k1 / 2) + 2t + k1 % 2 — the m64nNk16 d[] fragment of FACTS.md,
 * instruction i of its warpgroup. */
static void test_wgmma_acc(blk_arena *a) {
    int W = 8;
    int32_t s[] = {256, 64};
    const lay_layout *l = lay_for_dot(a, s[0], s[1], W, true, true);
    CHECK(lay_is_mma_acc(l, 2, s), "an accumulator layout");
    CHECK(!lay_eq(l, lay_for_dot(a, s[0], s[1], W, true, false)), "differs from mma.sync's rows-first form");
    check_cover(l, 2, s, W, "wgmma accumulator");
    int n[2], nregs = lay_num_regs(l, s, n);
    CHECK(n[0] == 4 && n[1] == 16 && nregs == 64, "registers %d x %d", n[0], n[1]);
    lay_flat f;
    lay_flatten(l, &f);
    for (int tid = 0; tid < 32 * W; tid += 37) {
        int w = tid / 32, g = tid % 32 / 4, t = tid % 4;
        for (int k0 = 0; k0 < n[0]; k0++)
            for (int k1 = 0; k1 < n[1]; k1++) {
                int row = coord(s[0], 1, 8, 2, lay_tile(&f, 0), w * 8 * 2 + g, k0);
                int col = coord(s[1], 2, 4, 1, lay_tile(&f, 1), t, k1);
                int i = k0 / 2, h = k0 % 2;
                CHECK(row == 16 * w + 8 * h + g + 16 * W * i && col == 8 * (k1 / 2) + 2 * t + k1 % 2,
                      "tid %d reg (%d, %d) at (%d, %d)", tid, k0, k1, row, col);
            }
    }
    int32_t half[] = {64, 64}; /* rin > 1 fits whole tiles only (128 rows here) */
    CHECK(!lay_fits(l, 2, half), "[64, 64] does not fit a 128-row tile with repeats inside warps");
    blk_strbuf sb;
    sb_init(&sb);
    lay_print(&sb, l);
    CHECK(strcmp(sb_str(&sb), "#blocked<spt=[1, 2], tpw=[8, 4], rin=[2, 1], wpc=[8, 1], order=[1, 0]>") == 0,
          "print: %s", sb_str(&sb));
    sb_free(&sb);
    const lay_layout *sl = lay_slice(a, l, 1);
    CHECK(lay_eq(lay_expand(a, sl, 1), l), "expand_dims(slice(acc, 1), 1) == acc");
    int32_t rows[] = {256};
    check_cover(sl, 1, rows, W, "slice of the wgmma accumulator");
}

static const char kernel_src[] =
    "kernel k(out: *f32, x: *f32, n: i32, const B: i32 = 256) {\n"
    "    let c = arange(0, B);\n"
    "    var acc = zeros([B], f32);\n"
    "    for i in range(0, n) { acc += load(x + i * B + c, c < n, 0.0); }\n"
    "    store(out + program_id(0), sum(acc, 0));\n"
    "    store(out + c, exp(acc) / max(acc, 0), c < n);\n"
    "}\n";

static void test_api(void) {
    blkc_ctx *c = blkc_new();
    CHECK(blkc_set_arch(c, "sm_75") == BLK_ERR_USAGE, "unknown arch refused");
    CHECK(strstr(blkc_diagnostics(c), "unknown GPU arch 'sm_75'") != NULL, "arch diagnostic: %s", blkc_diagnostics(c));
    blkc_free(c);
    const char *archs[] = {"sm_80", "sm_90", "sm_90a"};
    for (int i = 0; i < 3; i++) {
        c = blkc_new();
        CHECK(blkc_set_arch(c, archs[i]) == BLK_OK, "arch %s", archs[i]);
        CHECK(blkc_load_source(c, "k.blk", kernel_src, sizeof kernel_src - 1) == BLK_OK, "load");
        CHECK(blkc_build(c, NULL) == BLK_OK, "build: %s", blkc_diagnostics(c));
        const char *ptx = blkc_emit(c, "ptx");
        CHECK(ptx && strstr(ptx, ".visible .entry k__d16_d16_d16(") && strstr(ptx, ".visible .entry k("),
              "ptx for %s: %s", archs[i], blkc_diagnostics(c));
        CHECK(ptx && strstr(ptx, "bar.sync"), "cross-warp reduction uses bar.sync");
        const char *meta = blkc_emit(c, "meta");
        static const char prefix[] = "// blk-meta v1 kernel=k entry=k__d16_d16_d16 num_warps=4 shared=";
        CHECK(meta && strncmp(meta, prefix, sizeof prefix - 1) == 0,
              "meta: %s", meta ? meta : "(null)");
        const char *ll = blkc_emit(c, "llvm");
        CHECK(ll && strstr(ll, "ptx_kernel"), "llvm IR");
        blkc_free(c);
    }
    /* dot: tensor cores on every target */
    static const char dot_src[] =
        "kernel d(o: *f32) { let a = zeros([16, 16], bf16); store(o + arange(0, 16)[:, None] * 16 + arange(0, 16)[None, :], dot(a, a)); }\n";
    for (int i = 0; i < 2; i++) {
        c = blkc_new();
        CHECK(blkc_load_source(c, "d.blk", dot_src, sizeof dot_src - 1) == BLK_OK, "load dot");
        blkc_set_arch(c, archs[i]);
        CHECK(blkc_build(c, NULL) == BLK_OK, "build dot: %s", blkc_diagnostics(c));
        const char *ptx = blkc_emit(c, "ptx");
        CHECK(ptx && strstr(ptx, "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32") && strstr(ptx, "ldmatrix"),
              "dot on %s: %s", archs[i], blkc_diagnostics(c));
        blkc_free(c);
    }
    /* a dot whose operand tiles exceed what a block can stage (registers,
     * shared memory): a located error naming the limit */
    static const char big_src[] =
        "kernel d(o: *f32) { let a = zeros([256, 512], bf16);\n"
        "  store(o + arange(0, 256)[:, None] * 256 + arange(0, 256)[None, :], dot(a, trans(a))); }\n";
    c = blkc_new();
    CHECK(blkc_load_source(c, "big.blk", big_src, sizeof big_src - 1) == BLK_OK, "load big dot");
    if (blkc_build(c, NULL) == BLK_OK) {
        CHECK(blkc_emit(c, "ptx") == NULL, "an oversized dot gives no PTX");
        CHECK(strstr(blkc_diagnostics(c), "big.blk:2:") && strstr(blkc_diagnostics(c), "error: dot stages 2048 operand "
                                                                              "elements per thread through registers"),
              "oversized dot diagnostic: %s", blkc_diagnostics(c));
    }
    blkc_free(c);
}

int main(void) {
    blk_arena *a = arena_new();
    test_choose(a);
    test_algebra(a);
    test_wgmma_acc(a);
    arena_free(a);
    test_api();
    return test_finish("test_layout");
}

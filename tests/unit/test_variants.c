/* test_variants.c — the libblkc API of kernel variants (blk/blkc.h):
 * blkc_add_variant before and after blkc_build, blkc_set_default_variants,
 * the statuses and messages of bad specs, "meta-front", and that adding a
 * variant after an emit makes the next emit see it. */
#include "blk/blkc.h"
#include "test_interp_util.h" /* CHECK, test_finish */

static const char SRC[] = "@do_not_specialize(n)\n"
                          "kernel k(x: *f32, s: i32, n: i32, f: f32) {\n"
                          "    let o = arange(0, 64);\n"
                          "    store(x + o * s, f, o < n);\n"
                          "}\n";

static blkc_ctx *ctx(void) {
    blkc_ctx *c = blkc_new();
    blkc_load_source(c, "v.blk", SRC, sizeof SRC - 1);
    return c;
}

static int count(const char *text, const char *what) {
    int n = 0;
    for (const char *p = text; p && (p = strstr(p, what)); p++) n++;
    return n;
}

int main(void) {
    /* syntax errors at once, names at build (BLK_ERR_USAGE both) */
    blkc_ctx *c = ctx();
    CHECK(blkc_add_variant(c, "s=d8") == BLK_ERR_USAGE, "failed");
    CHECK(strstr(blkc_diagnostics(c), "variant 's=d8': unknown code 'd8' for 's' (d16, eq1 or -)") != NULL, "failed");
    CHECK(blkc_add_variant(c, NULL) == BLK_ERR_USAGE, "failed");
    CHECK(blkc_add_variant(c, "s=eq1,") == BLK_ERR_USAGE, "failed");
    blkc_free(c);
    c = ctx();
    CHECK(blkc_add_variant(c, "q=eq1") == BLK_OK, "failed"); /* not checked before the build */
    CHECK(blkc_build(c, NULL) == BLK_ERR_USAGE, "failed");
    CHECK(strstr(blkc_diagnostics(c), "variant 'q=eq1': kernel 'k' has no runtime parameter 'q'") != NULL, "failed");
    blkc_free(c);

    /* after the build: checked at once; the defaults (the d16 one keeps only
     * the assumptions its code uses: here maybe none, so one entry) plus the
     * new one */
    c = ctx();
    CHECK(blkc_build(c, NULL) == BLK_OK, "failed");
    const char *meta = blkc_emit(c, "meta");
    int defaults = count(meta, "blk-meta v1");
    CHECK(meta && defaults >= 1 && defaults <= 2 && count(meta, "nospec=n") == defaults, "failed");
    CHECK(blkc_add_variant(c, "n=eq1") == BLK_ERR_USAGE, "failed");
    CHECK(strstr(blkc_diagnostics(c), "variant 'n=eq1': 'n' is @do_not_specialize in kernel 'k'") != NULL, "failed");
    CHECK(blkc_add_variant(c, "f=d16") == BLK_ERR_USAGE, "failed");
    CHECK(blkc_add_variant(c, "x=eq1") == BLK_ERR_USAGE, "failed");
    CHECK(blkc_add_variant(c, "k:s=eq1,x=d16") == BLK_OK, "failed");
    meta = blkc_emit(c, "meta"); /* the earlier emit is not reused */
    CHECK(meta && count(meta, "blk-meta v1") == defaults + 1, "failed");
    CHECK(meta && strstr(meta, "entry=k__d16_eq1_x_x ") != NULL, "failed");
    /* an identical request makes no second entry */
    CHECK(blkc_add_variant(c, "x=d16,s=eq1,n=-") == BLK_OK, "failed");
    meta = blkc_emit(c, "meta");
    CHECK(meta && count(meta, "blk-meta v1") == defaults + 1, "failed");
    blkc_free(c);

    /* only the requested variant: what the runtime's JIT compiles */
    c = ctx();
    blkc_set_default_variants(c, 0);
    CHECK(blkc_add_variant(c, "s=eq1") == BLK_OK, "failed");
    CHECK(blkc_build(c, "k") == BLK_OK, "failed");
    const char *ptx = blkc_emit(c, "ptx");
    CHECK(ptx && count(ptx, ".entry") == 1 && strstr(ptx, ".entry k__x_eq1_x_x(") != NULL, "failed");
    /* the front end's description: the unspecialised line, no code */
    const char *front = blkc_emit(c, "meta-front");
    CHECK(front && strcmp(front, "// blk-meta v1 kernel=k entry=k num_warps=4 shared=0 params=x:*f32,s:i32,n:i32,f:f32 "
                                 "consts= spec=x:-,s:-,n:-,f:- nospec=n\n") == 0, "failed");
    blkc_free(c);
    /* no defaults and nothing requested: no entry */
    c = ctx();
    blkc_set_default_variants(c, 0);
    CHECK(blkc_build(c, NULL) == BLK_OK, "failed");
    meta = blkc_emit(c, "meta");
    CHECK(meta && meta[0] == 0, "failed");
    blkc_free(c);

    return test_finish("test_variants");
}

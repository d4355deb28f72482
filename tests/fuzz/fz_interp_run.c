/* fz_interp_run.c — see fz_interp_run.h. */
#include "fz_interp_run.h"

#include <string.h>

blk_status fz_run_source(const char *text, size_t len, int n, float s, unsigned grid,
                         FILE *print_out, int verbose) {
    /* x, y: a spread of ordinary and awkward floats; idx: mostly in-range
     * indices plus negative and far out-of-range ones (indirect loads). */
    static const float fvals[] = {1.0f, -2.5f, 0.0f, 3.0f, 1e30f, -0.0f, 0.5f, 7.0f,
                                  -1e-40f, 100.0f, -3.0f, 2.0f, 1e-3f, -7.5f, 65504.0f, 0.25f};
    static const int ivals[] = {0, 1, 2, 3, -1, 31, 32, 5, 2147483647, -2147483647 - 1,
                                7, 8, 16, 4, 1000, 9};
    float x[FZ_ELEMS], y[FZ_ELEMS], out[FZ_ELEMS];
    int idx[FZ_ELEMS], iout[FZ_ELEMS];
    for (int i = 0; i < FZ_ELEMS; i++) {
        x[i] = fvals[i % 16];
        y[i] = fvals[(i * 7 + 3) % 16];
        idx[i] = ivals[(i * 5 + 1) % 16];
        out[i] = 0.0f;
        iout[i] = 0;
    }
    blkc_ctx *c = blkc_new();
    if (!c) return BLK_ERR_NOMEM;
    blkc_set_stdlib_dir(c, BLK_STDLIB_DIR);
    blk_status st = blkc_load_source(c, "fz.blk", text, len);
    if (st == BLK_OK) st = blkc_build(c, "fz");
    if (st == BLK_OK) {
        blk_arg args[] = {
            BLK_PTR(x, sizeof x), BLK_PTR(y, sizeof y), BLK_PTR(out, sizeof out),
            BLK_PTR(idx, sizeof idx), BLK_PTR(iout, sizeof iout), BLK_INT(n), BLK_FLOAT(s),
        };
        unsigned g[3] = {grid ? grid : 1, 1, 1};
        st = blkc_interp_run(c, "fz", g, args, 7, print_out);
    }
    if (verbose) fprintf(stderr, "status %d\n%s", (int)st, blkc_diagnostics(c));
    blkc_free(c);
    return st;
}

/* interp_vector_add — compile stdlib/elementwise.blk's vector_add and run it
 * on the CPU interpreter (the device every machine has), then check it.
 *
 *   ./interp_vector_add [N]
 */
#include <stdio.h>
#include <stdlib.h>

#include "blk/blkc.h"

#ifndef BLK_STDLIB_DIR
#define BLK_STDLIB_DIR "stdlib"
#endif

int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 1000;
    if (n <= 0) { fprintf(stderr, "N must be positive\n"); return 2; }
    float *x = malloc(sizeof(float) * (size_t)n), *y = malloc(sizeof(float) * (size_t)n);
    float *out = malloc(sizeof(float) * (size_t)n);
    if (!x || !y || !out) return 1;
    for (int i = 0; i < n; i++) { x[i] = (float)i * 0.5f; y[i] = 1000.0f - (float)i; out[i] = -1.0f; }

    blkc_ctx *c = blkc_new();
    const int block = 256;
    blkc_define_int(c, "BLOCK", block);
    blk_status s = blkc_load_file(c, BLK_STDLIB_DIR "/elementwise.blk");
    if (s == BLK_OK) s = blkc_build(c, "vector_add");
    blk_arg args[] = {BLK_PTR(x, sizeof(float) * (size_t)n), BLK_PTR(y, sizeof(float) * (size_t)n),
                      BLK_PTR(out, sizeof(float) * (size_t)n), BLK_INT(n)};
    unsigned grid[3] = {(unsigned)((n + block - 1) / block), 1, 1};
    if (s == BLK_OK) s = blkc_interp_run(c, "vector_add", grid, args, 4, NULL);
    if (s != BLK_OK) {
        fputs(blkc_diagnostics(c), stderr);
        blkc_free(c);
        return 1;
    }
    int bad = 0;
    for (int i = 0; i < n; i++) bad += out[i] != x[i] + y[i];
    printf("vector_add on the CPU interpreter: n = %d, BLOCK = %d, grid = %u programs\n", n, block, grid[0]);
    printf("  out[0] = %g, out[%d] = %g, out[%d] = %g\n", out[0], n / 2, out[n / 2], n - 1, out[n - 1]);
    printf("  %s (%d mismatches against x + y)\n", bad ? "FAILED" : "ok", bad);
    blkc_free(c);
    free(x); free(y); free(out);
    return bad != 0;
}

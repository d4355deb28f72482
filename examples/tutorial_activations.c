/* tutorial_activations — docs/tutorials/01-activations.md, step 3: compile
 * examples/tutorials/activations.blk once per activation (the string const
 * ACT) and run it on the CPU interpreter against the same formula in C.
 *
 *   ./tutorial_activations [N]      (make test runs it)
 */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blk/blkc.h"

#ifndef BLK_EXAMPLES_DIR
#define BLK_EXAMPLES_DIR "examples"
#endif

static double softplus(double x) { return x > 20 ? x : log1p(exp(x)); }

static double reference(const char *act, double x) {
    if (!strcmp(act, "gelu")) return 0.5 * x * (1 + erf(x / sqrt(2.0)));
    if (!strcmp(act, "gelu_tanh")) return 0.5 * x * (1 + tanh(0.7978845608 * (x + 0.044715 * x * x * x)));
    if (!strcmp(act, "silu")) return x / (1 + exp(-x));
    if (!strcmp(act, "softplus")) return softplus(x);
    if (!strcmp(act, "mish")) return x * tanh(softplus(x));
    return x;
}

int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 3000;
    if (n <= 0) return 2;
    float *x = malloc(sizeof(float) * (size_t)n), *out = malloc(sizeof(float) * (size_t)n);
    if (!x || !out) return 1;
    for (int i = 0; i < n; i++) x[i] = -30.0f + 60.0f * (float)i / (float)n; /* -30 .. 30: both tails */
    static const char *const acts[] = {"gelu", "gelu_tanh", "silu", "softplus", "mish", "none"};
    int failures = 0;
    for (size_t a = 0; a < sizeof acts / sizeof acts[0]; a++) {
        blkc_ctx *c = blkc_new();
        blkc_define(c, "ACT", acts[a]); /* the string const: one specialised kernel per value */
        blk_status s = blkc_load_file(c, BLK_EXAMPLES_DIR "/tutorials/activations.blk");
        if (s == BLK_OK) s = blkc_build(c, "activation");
        blk_arg args[] = {BLK_PTR(out, sizeof(float) * (size_t)n), BLK_PTR(x, sizeof(float) * (size_t)n), BLK_INT(n)};
        unsigned grid[3] = {(unsigned)((n + 1023) / 1024), 1, 1};
        if (s == BLK_OK) s = blkc_interp_run(c, "activation", grid, args, 3, NULL);
        if (s != BLK_OK) {
            fputs(blkc_diagnostics(c), stderr);
            blkc_free(c);
            return 1;
        }
        double worst = 0;
        for (int i = 0; i < n; i++) {
            double want = reference(acts[a], x[i]);
            double err = fabs(out[i] - want) / (fabs(want) + 1e-6);
            if (err > worst) worst = err;
        }
        bool ok = worst < 1e-5;
        printf("%-10s max relative error %.2e %s\n", acts[a], worst, ok ? "ok" : "FAIL");
        failures += !ok;
        blkc_free(c);
    }
    free(x);
    free(out);
    return failures != 0;
}

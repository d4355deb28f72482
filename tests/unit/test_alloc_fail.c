/* test_alloc_fail — every allocation of libblkc failing in turn (SQLite's
 * OOM tests): for each stdlib file, load + build + emit "ir" and
 * "meta-front" with the 1st, 2nd, ... allocation failing (blk_alloc_fail_at)
 * until one run reaches no failure; then the same for a run of vector_add
 * on the interpreter. Each failure must come back as an error status
 * (BLK_ERR_NOMEM where the compiler knows it), never as a success with
 * truncated output, never as a crash; ASan (make test SANITIZE=1) reports
 * any leak. LLVM's own allocations (the PTX backend) are not covered. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blk/blkc.h"
#include "compile.h"
#include "util.h"

static int failures;
static long injected; /* failures injected over the whole test */

/* One compile (and, with kernel, one run) under the nth allocation failing.
 * 1: the nth allocation was reached (so a failure was injected). */
static int once(const char *path, const char *kernel, long n) {
    blk_alloc_fail_at(n);
    blkc_ctx *c = blkc_new();
    blk_status s = c ? BLK_OK : BLK_ERR_NOMEM;
    const char *ir = NULL, *meta = NULL;
    if (s == BLK_OK) s = blkc_load_file(c, path);
    if (s == BLK_OK) s = blkc_build(c, NULL);
    if (s == BLK_OK && !(ir = blkc_emit(c, "ir"))) s = BLK_ERR_NOMEM;
    if (s == BLK_OK && !(meta = blkc_emit(c, "meta-front"))) s = BLK_ERR_NOMEM;
    float x[300], y[300], out[300];
    for (int i = 0; i < 300; i++) x[i] = (float)i, y[i] = 1.0f, out[i] = 0;
    if (s == BLK_OK && kernel) {
        blk_arg a[] = {BLK_PTR(x, sizeof x), BLK_PTR(y, sizeof y), BLK_PTR(out, sizeof out), BLK_INT(300)};
        unsigned grid[3] = {2, 1, 1};
        s = blkc_interp_run(c, kernel, grid, a, 4, NULL);
    }
    const char *diags = c ? blkc_diagnostics(c) : "";
    long made = blk_alloc_fail_at(0);
    int reached = made >= n;
    if (reached) {
        injected++;
        if (s == BLK_OK) {
            failures++;
            fprintf(stderr, "FAIL %s: allocation %ld failed, yet every call succeeded\n", path, n);
        }
    } else if (s != BLK_OK) {
        failures++;
        fprintf(stderr, "FAIL %s: status %d without an injected failure (n=%ld):\n%s", path, s, n, diags);
    } else if (kernel && out[299] != 300.0f) {
        failures++;
        fprintf(stderr, "FAIL %s: %s computed out[299] = %g\n", path, kernel, out[299]);
    }
    blkc_free(c);
    return reached;
}

/* n = 1, 2, ... until a run reaches no failure; the number of runs. */
static long every(const char *path, const char *kernel) {
    long n = 1;
    while (once(path, kernel, n) && n < 100000) n++;
    return n;
}

static int by_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

int main(void) {
    const char *dir = compile_stdlib_dir();
    DIR *d = opendir(dir);
    if (!d) {
        fprintf(stderr, "cannot open the stdlib directory %s\n", dir);
        return 1;
    }
    char *names[256];
    int nnames = 0;
    for (struct dirent *e; (e = readdir(d)) && nnames < 256;) {
        size_t len = strlen(e->d_name);
        if (len > 4 && strcmp(e->d_name + len - 4, ".blk") == 0) names[nnames++] = strdup(e->d_name);
    }
    closedir(d);
    qsort(names, (size_t)nnames, sizeof *names, by_name);
    long runs = 0;
    for (int i = 0; i < nnames; i++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        long r = every(path, strcmp(names[i], "elementwise.blk") == 0 ? "vector_add" : NULL);
        runs += r;
        free(names[i]);
    }
    printf("test_alloc_fail: %d stdlib files, %ld runs, %ld allocation failures injected, %d wrong\n", nnames, runs,
           injected, failures);
    return failures != 0 || nnames == 0;
}

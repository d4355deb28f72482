/* test_runaway.c — the interpreter's step budget (interp.h): an endless or
 * too long loop ends with a located error at the innermost loop running,
 * the context stays usable, and the budget comes from blkc_set_interp_steps
 * or $BLK_INTERP_STEPS (0 = no limit). runaway.blk's kernels. */
#include "harness.h"

static blkc_ctx *build(void) {
    char path[1024];
    snprintf(path, sizeof path, "%s/runaway.blk", h_testdir);
    blkc_ctx *c = blkc_new();
    if (blkc_load_file(c, path) || blkc_build(c, NULL)) {
        fprintf(stderr, "FAIL: building %s:\n%s", path, blkc_diagnostics(c));
        blkc_free(c);
        return NULL;
    }
    return c;
}

/* Run kernel with out (and n when nargs is 2); the status, and the
 * diagnostics of this run in msg. */
static blk_status run(blkc_ctx *c, const char *kernel, int32_t *out, int nargs, int32_t n, unsigned grid,
                      char *msg, size_t cap) {
    size_t before = strlen(blkc_diagnostics(c));
    blk_arg a[] = {BLK_PTR(out, sizeof(int32_t) * (grid > 1 ? grid : 1)), BLK_INT(n)};
    unsigned g[3] = {grid, 1, 1};
    blk_status s = blkc_interp_run(c, kernel, g, a, nargs, NULL);
    snprintf(msg, cap, "%s", blkc_diagnostics(c) + before);
    return s;
}

/* The first line of a diagnostic must be exactly want. */
static void first_line(const char *what, const char *msg, const char *want) {
    size_t n = strcspn(msg, "\n");
    CHECK(strlen(want) == n && strncmp(msg, want, n) == 0, "%s: got\n%s\nwant\n%s", what, msg, want);
}

int main(int argc, char **argv) {
    h_init(argc, argv);
    char path[1024], want[1200], msg[4096];
    snprintf(path, sizeof path, "%s/runaway.blk", h_testdir);
    int32_t out[8] = {0};

    /* An endless loop: stopped at the while, with the source line and caret. */
    blkc_ctx *c = build();
    if (!c) return 1;
    blkc_set_interp_steps(c, 100000);
    CHECK(run(c, "spin", out, 1, 0, 1, msg, sizeof msg) == BLK_ERR_RUNTIME, "spin ran");
    snprintf(want, sizeof want,
             "%s:7:5: error: kernel exceeded its step budget in this loop (100000 steps; BLK_INTERP_STEPS raises it) "
             "(program (0, 0, 0))", path);
    first_line("spin", msg, want);
    CHECK(strstr(msg, "        while true {\n        ^~~~~") != NULL, "no source line and caret:\n%s", msg);

    /* The innermost loop running is named, and the context still runs kernels. */
    CHECK(run(c, "nested", out, 2, 2000000000, 1, msg, sizeof msg) == BLK_ERR_RUNTIME, "nested ran");
    snprintf(want, sizeof want,
             "%s:16:13: error: kernel exceeded its step budget in this loop (100000 steps; BLK_INTERP_STEPS raises it) "
             "(program (0, 0, 0))", path);
    first_line("nested", msg, want);
    CHECK(run(c, "sum_to", out, 2, 1000, 1, msg, sizeof msg) == BLK_OK, "sum_to: %s", msg);
    CHECK(out[0] == 499500, "sum_to gave %d", out[0]);

    /* The budget counts the whole grid: one program fits, eight do not. */
    blkc_set_interp_steps(c, 20);
    CHECK(run(c, "straight", out, 1, 0, 1, msg, sizeof msg) == BLK_OK, "straight x1: %s", msg);
    CHECK(run(c, "straight", out, 1, 0, 8, msg, sizeof msg) == BLK_ERR_RUNTIME, "straight x8 ran");
    CHECK(strstr(msg, "error: kernel 'straight' exceeded its step budget (20 steps;") != NULL, "straight:\n%s", msg);

    /* 0 = no limit: a long finite loop runs to its end. */
    blkc_set_interp_steps(c, 0);
    CHECK(run(c, "sum_to", out, 2, 3000000, 1, msg, sizeof msg) == BLK_OK, "unlimited: %s", msg);
    blkc_free(c);

    /* $BLK_INTERP_STEPS when the context sets nothing; a bad value is a usage error. */
    setenv("BLK_INTERP_STEPS", "5000", 1);
    if (!(c = build())) return 1;
    CHECK(run(c, "sum_to", out, 2, 100, 1, msg, sizeof msg) == BLK_OK, "env, short: %s", msg);
    CHECK(run(c, "sum_to", out, 2, 100000, 1, msg, sizeof msg) == BLK_ERR_RUNTIME, "env, long ran");
    CHECK(strstr(msg, "(5000 steps;") != NULL, "env budget:\n%s", msg);
    setenv("BLK_INTERP_STEPS", "lots", 1);
    CHECK(run(c, "sum_to", out, 2, 1, 1, msg, sizeof msg) == BLK_ERR_USAGE, "bad env ran");
    CHECK(strstr(msg, "BLK_INTERP_STEPS='lots' is not a number of steps") != NULL, "bad env:\n%s", msg);
    unsetenv("BLK_INTERP_STEPS");

    /* The default budget (2^30 steps: ~40 s of an endless loop, too long
     * for a test) leaves room for real work. */
    CHECK(run(c, "sum_to", out, 2, 1000000, 1, msg, sizeof msg) == BLK_OK, "default: %s", msg);
    blkc_free(c);
    return failures ? 1 : 0;
}

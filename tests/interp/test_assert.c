/* test_assert.c — device_assert on the interpreter: a false element stops
 * the launch with a located error naming the message, the element and the
 * program instance (BLK_ERR_RUNTIME); writes before it stay, the context
 * runs on. assert.blk's kernels. */
#include "harness.h"

static char path[1024];

static void first_line(const char *what, const char *msg, const char *want_tail) {
    char want[1400];
    snprintf(want, sizeof want, "%s:%s", path, want_tail);
    size_t n = strcspn(msg, "\n");
    CHECK(strlen(want) == n && strncmp(msg, want, n) == 0, "%s: got\n%s\nwant\n%s", what, msg, want);
}

int main(int argc, char **argv) {
    h_init(argc, argv);
    snprintf(path, sizeof path, "%s/assert.blk", h_testdir);
    blkc_ctx *c = blkc_new();
    if (blkc_load_file(c, path) || blkc_build(c, NULL)) {
        fprintf(stderr, "FAIL: building %s:\n%s", path, blkc_diagnostics(c));
        return 1;
    }
    char msg[4096];
    float x[20];
    for (int i = 0; i < 20; i++) x[i] = (float)(i + 1);
    blk_arg a[] = {BLK_PTR(x, sizeof x), BLK_INT(20)};

    /* Holds: the kernel runs to its end (padding lanes load 1.0). */
    CHECK(h_run_msg(c, "positive", 3, a, 2, msg, sizeof msg) == BLK_OK, "positive: %s", msg);
    CHECK(x[19] == 40.0f, "x[19] = %g", x[19]);

    /* Fails in program 1 at element 3 (x[11]); program 0 has run already. */
    x[11] = -5.0f;
    CHECK(h_run_msg(c, "positive", 3, a, 2, msg, sizeof msg) == BLK_ERR_RUNTIME, "positive ran");
    first_line("positive", msg, "7:5: error: device_assert failed: x must be positive (element [3] is false) "
               "(program (1, 0, 0))");
    CHECK(strstr(msg, "        device_assert(v > 0.0, \"x must be positive\");\n        ^~~~") != NULL,
          "source line and caret:\n%s", msg);
    CHECK(x[0] == 4.0f && x[8] == 18.0f, "program 0 stored, program 1 did not: %g %g", x[0], x[8]);

    /* A 2-D block names the element by its coordinates; no message: the condition. */
    int32_t g[16];
    for (int i = 0; i < 16; i++) g[i] = i;
    blk_arg b[] = {BLK_PTR(g, sizeof g)};
    CHECK(h_run_msg(c, "grid2", 1, b, 1, msg, sizeof msg) == BLK_ERR_RUNTIME, "grid2 ran");
    first_line("grid2", msg, "14:5: error: device_assert failed: v != 7 (element [1, 3] is false) (program (0, 0, 0))");

    /* In an inlined fn: located at the fn's device_assert. The context runs on. */
    int32_t out = 0;
    blk_arg s1[] = {BLK_PTR(&out, 4), BLK_INT(5)}, s2[] = {BLK_PTR(&out, 4), BLK_INT(500)};
    CHECK(h_run_msg(c, "scalar", 1, s1, 2, msg, sizeof msg) == BLK_OK && out == 5, "scalar 5: %s", msg);
    CHECK(h_run_msg(c, "scalar", 1, s2, 2, msg, sizeof msg) == BLK_ERR_RUNTIME, "scalar 500 ran");
    first_line("scalar", msg, "18:5: error: device_assert failed: n too large (program (0, 0, 0))");
    CHECK(out == 5, "nothing stored after the failed assert: %d", out);
    blkc_free(c);
    return failures ? 1 : 0;
}

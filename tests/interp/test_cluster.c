/* test_cluster.c — cluster_sum on the interpreter (the reference the GPU
 * is checked against): the last program of each cluster gets the f32 sum
 * in rank order, the others their own value; a grid x that the cluster
 * does not divide, and a cluster whose programs do not all reach it, are
 * located runtime errors. cluster.blk's kernels. */
#include "harness.h"

static char path[1024];

static blkc_ctx *build(const char *split) {
    blkc_ctx *c = blkc_new();
    if (split) blkc_define_int(c, "SPLIT", atoi(split));
    if (blkc_load_file(c, path) || blkc_build(c, NULL)) {
        fprintf(stderr, "FAIL: building %s:\n%s", path, blkc_diagnostics(c));
        exit(1);
    }
    return c;
}

int main(int argc, char **argv) {
    h_init(argc, argv);
    snprintf(path, sizeof path, "%s/cluster.blk", h_testdir);
    char msg[4096];
    static float x[64 * 64], out[4096 + 64 * 64];
    for (int i = 0; i < 64 * 64; i++) x[i] = (float)((i * 2654435761u) % 1000) / 7.0f - 60.0f;
    int splits[] = {2, 4, 8};
    for (int si = 0; si < 3; si++) {
        int n = splits[si], clusters = 6;
        char def[8];
        snprintf(def, sizeof def, "%d", n);
        blkc_ctx *c = build(def);
        memset(out, 0, sizeof out);
        blk_arg a[] = {BLK_PTR(x, sizeof x), BLK_PTR(out, sizeof out)};
        CHECK(h_run_msg(c, "csum", (unsigned)(clusters * n), a, 2, msg, sizeof msg) == BLK_OK, "csum %d: %s", n, msg);
        int bad = 0, own = 0;
        for (int t = 0; t < clusters; t++)
            for (int i = 0; i < 64; i++) {
                float s = x[(t * n) * 64 + i] * 0.5f;
                for (int r = 1; r < n; r++) s = s + x[(t * n + r) * 64 + i] * 0.5f;
                bad += memcmp(&s, &out[t * 64 + i], 4) != 0;
                for (int r = 0; r < n - 1; r++) {
                    float mine = x[(t * n + r) * 64 + i] * 0.5f;
                    own += memcmp(&mine, &out[4096 + (t * n + r) * 64 + i], 4) != 0;
                }
            }
        CHECK(bad == 0, "SPLIT=%d: %d sums differ from the rank-order f32 sum", n, bad);
        CHECK(own == 0, "SPLIT=%d: %d values of the other ranks are not their own", n, own);
        /* grid x not a multiple of the cluster */
        CHECK(h_run_msg(c, "csum", (unsigned)(clusters * n + 1), a, 2, msg, sizeof msg) == BLK_ERR_USAGE, "odd grid ran");
        CHECK(strstr(msg, "runs in clusters of") && strstr(msg, "is not a multiple of"), "odd grid: %s", msg);
        blkc_free(c);
    }

    blkc_ctx *c = build(NULL);
    float y[8] = {1, 2, 3, 4, 5, 6, 7, 8}, o[8];
    blk_arg ok[] = {BLK_PTR(y, sizeof y), BLK_PTR(o, sizeof o), BLK_INT(0)};
    CHECK(h_run_msg(c, "skips", 8, ok, 3, msg, sizeof msg) == BLK_OK, "skips 0: %s", msg);
    CHECK(o[0] == 1 && o[1] == 3 && o[6] == 7 && o[7] == 15, "sums: %g %g %g %g", o[0], o[1], o[6], o[7]);
    blk_arg skip[] = {BLK_PTR(y, sizeof y), BLK_PTR(o, sizeof o), BLK_INT(1)};
    CHECK(h_run_msg(c, "skips", 8, skip, 3, msg, sizeof msg) == BLK_ERR_RUNTIME, "a cluster that did not all reach it ran");
    CHECK(strstr(msg, "cluster_sum not reached by every program of cluster 0 (programs 0 to 1 along axis 0): 1 of 2 "
                      "reached it") != NULL, "message: %s", msg);
    blkc_free(c);
    return failures ? 1 : 0;
}

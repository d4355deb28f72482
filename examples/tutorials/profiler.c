/* Tutorial 9 (docs/tutorials/09-profiler.md): the runtime's profiler and
 * blkrt_bench on the kernels of tutorials 3 and 4. Launches are timed while
 * the profiler is on (here blkrt_profile_enable; BLK_PROFILE=1 in the
 * environment does the same and prints the table at exit); stated work gives
 * GB/s and TFLOP/s. The program checks what it can without timing:
 * launch counts, one row per configuration, the table's names.
 *
 *   tutorial_profiler [cpu|GPU] [ROWS COLS MNK]   (make test: cpu, small sizes)
 */
#include "tutorial.h"

typedef struct {
    blkrt_kernel *k;
    blkrt_arg args[9];
    int nargs;
    uint32_t grid[3];
} launch;

/* blkrt_bench calls this for every run: it issues the work to time */
static blkrt_status run_launch(void *user) {
    launch *l = user;
    return blkrt_launch(l->k, l->grid, l->args, l->nargs, NULL);
}

int main(int argc, char **argv) {
    blkrt_device *d = tut_device(argc, argv);
    int rows = argc > 3 ? atoi(argv[2]) : 64, cols = argc > 3 ? atoi(argv[3]) : 1000;
    int mnk = argc > 4 ? atoi(argv[4]) : 96;
    int block = 1;
    while (block < cols) block *= 2;
    int fails = 0;

    /* 1. the profiler: every launch from here on is timed */
    TUT_CHECK(blkrt_profile_enable(1));

    /* softmax with two block sizes: two configurations, two rows */
    blkrt_module *sm[2];
    blkrt_kernel *soft[2];
    for (int i = 0; i < 2; i++) {
        blkrt_define def = {.name = "BLOCK", .ival = block << i};
        soft[i] = tut_kernel(d, "softmax.blk", "softmax", &def, 1, &sm[i]);
        /* bytes per launch: each row read once and written once */
        TUT_CHECK(blkrt_profile_set_work(soft[i], 2.0 * 4 * rows * cols, 0));
    }
    size_t bytes = (size_t)rows * cols * 4;
    float *x = malloc(bytes);
    tut_fill(x, (size_t)rows * cols, 5, -3.0f, 3.0f);
    blkrt_ptr dx = tut_upload(d, x, bytes), dy = tut_upload(d, NULL, bytes);
    launch ls = {soft[0], {BLKRT_PTR(dy), BLKRT_PTR(dx), BLKRT_INT(cols), BLKRT_INT(cols), BLKRT_INT(rows), BLKRT_INT(cols)},
                 6, {(uint32_t)rows, 1, 1}};
    for (int i = 0; i < 5; i++) TUT_CHECK(run_launch(&ls));
    ls.k = soft[1];
    for (int i = 0; i < 3; i++) TUT_CHECK(run_launch(&ls));

    /* matmul: flops per launch 2 M N K, bytes the three matrices in f16 */
    blkrt_module *mm;
    blkrt_define mdefs[] = {{.name = "BM", .ival = 32}, {.name = "BN", .ival = 32}, {.name = "BK", .ival = 32}};
    blkrt_kernel *mat = tut_kernel(d, "matmul.blk", "matmul", mdefs, 3, &mm);
    TUT_CHECK(blkrt_profile_set_work(mat, 3.0 * 2 * mnk * mnk, 2.0 * mnk * mnk * mnk));
    size_t mbytes = (size_t)mnk * mnk * 2;
    blkrt_ptr da = tut_upload(d, NULL, mbytes), db = tut_upload(d, NULL, mbytes), dc = tut_upload(d, NULL, mbytes);
    uint32_t tiles = (uint32_t)((mnk + 31) / 32);
    launch lm = {mat, {BLKRT_PTR(dc), BLKRT_PTR(da), BLKRT_PTR(db), BLKRT_INT(mnk), BLKRT_INT(mnk), BLKRT_INT(mnk),
                       BLKRT_INT(mnk), BLKRT_INT(mnk), BLKRT_INT(mnk)},
                 9, {tiles * tiles, 1, 1}};
    for (int i = 0; i < 4; i++) TUT_CHECK(run_launch(&lm));

    /* 2. the numbers: rows in first-launch order */
    blkrt_profile_row r[8];
    int n = 0;
    TUT_CHECK(blkrt_profile_rows(r, 8, &n));
    char cfg0[64], cfg1[64];
    snprintf(cfg0, sizeof cfg0, "BLOCK=%d,w4", block);
    snprintf(cfg1, sizeof cfg1, "BLOCK=%d,w4", block << 1);
    int ok = n == 3 && !strcmp(r[0].kernel, "softmax") && !strcmp(r[0].config, cfg0) && r[0].launches == 5 &&
             !strcmp(r[1].config, cfg1) && r[1].launches == 3 && !strcmp(r[2].kernel, "matmul") &&
             r[2].launches == 4 && r[2].flops == 4 * 2.0 * mnk * mnk * mnk;
    printf("profile rows: %d (softmax %s x%llu, softmax %s x%llu, matmul x%llu) %s\n", n, r[0].config,
           (unsigned long long)r[0].launches, n > 1 ? r[1].config : "?", n > 1 ? (unsigned long long)r[1].launches : 0,
           n > 2 ? (unsigned long long)r[2].launches : 0, ok ? "ok" : "FAIL");
    fails += !ok;
    char *table;
    TUT_CHECK(blkrt_profile_table(&table));
    fputs(table, stdout);
    free(table);

    /* 3. blkrt_bench: warmup, then each timed run after an L2 flush; the median */
    TUT_CHECK(blkrt_profile_enable(0)); /* the benchmark's launches need not be in the table */
    blkrt_bench_result b;
    blkrt_bench_options o = {.warmup = 2, .reps = 10};
    TUT_CHECK(blkrt_bench(d, NULL, run_launch, &ls, &o, &b));
    double gbps = 2.0 * bytes / (b.median_ms * 1e-3) * 1e-9;
    printf("bench softmax %dx%d: median %.4f ms (min %.4f, max %.4f) over %d runs, %.1f GB/s, flush %zu MB\n", rows,
           cols, b.median_ms, b.min_ms, b.max_ms, b.reps, gbps, b.flush_bytes >> 20);
    ok = b.reps == 10 && b.min_ms >= 0 && b.min_ms <= b.median_ms && b.median_ms <= b.max_ms;
    fails += !ok;
    TUT_CHECK(blkrt_bench(d, NULL, run_launch, &lm, &o, &b));
    printf("bench matmul %d^3: median %.4f ms, %.3f TFLOP/s\n", mnk, b.median_ms,
           2.0 * mnk * mnk * mnk / (b.median_ms * 1e-3) * 1e-12);

    TUT_CHECK(blkrt_profile_reset());
    blkrt_ptr all[] = {dx, dy, da, db, dc};
    for (int i = 0; i < 5; i++) TUT_CHECK(blkrt_free(d, all[i]));
    TUT_CHECK(blkrt_module_unload(sm[0]));
    TUT_CHECK(blkrt_module_unload(sm[1]));
    TUT_CHECK(blkrt_module_unload(mm));
    TUT_CHECK(blkrt_device_close(d));
    free(x);
    return fails != 0;
}

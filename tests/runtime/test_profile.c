/* test_profile — the light profiler, NVTX ranges and blkrt_bench.
 *
 *   test_profile fake          the fake driver: events recorded around each
 *                              timed launch (and none when profiling is off
 *                              or the stream captures), rows per kernel and
 *                              configuration in first-launch order, counts,
 *                              stated work, failed launches not counted,
 *                              every event destroyed, 4 threads launching at
 *                              once, pending launches timed when their device
 *                              closes; blkrt_bench's runs,
 *                              flushes (4 x the fake's L2) and errors
 *   test_profile nvtx          with NVTX_INJECTION64_PATH = fake_nvtx: one
 *                              balanced range per launch named
 *                              "kernel[consts,wN]"
 *   test_profile nonvtx        without it: the tool library is never loaded
 *   test_profile cpu STDLIB    the CPU device: stdlib kernels timed by wall
 *                              time, BLK_PROFILE=1 from the environment,
 *                              blkrt_bench on the interpreter
 * No assertion depends on how long anything takes: times are only checked
 * to be non-negative and ordered (min <= median <= max).
 */
#include <dlfcn.h>
#include <math.h>
#include <pthread.h>
#include <stdbool.h>

#include "blk/blkrt_jit.h"
#include "fake_cuda.h"
#include "rt_test.h"

static fake_api F;

#define P64(n) ".param .u64 " n
static const char PTX[] = ".version 8.0\n.target sm_90a\n.address_size 64\n" VADD_META("vector_add", "")
    PTX_ENTRY("vector_add", VADD_PARAMS)
    "// blk-meta v1 kernel=vadd entry=vadd_generic num_warps=4 shared=0 params=x:*f32,y:*f32,out:*f32,n:i32\n"
    "// blk-meta v1 kernel=vadd entry=vadd_d16 num_warps=8 shared=0 params=x:*f32,y:*f32,out:*f32,n:i32 "
    "spec=d16,d16,d16,d16\n" PTX_ENTRY("vadd_generic", VADD_PARAMS) PTX_ENTRY("vadd_d16", VADD_PARAMS)
    "// blk-meta v1 kernel=scale entry=scale num_warps=2 shared=0 params=x:*f32 consts=ALPHA:f32:0.5,N:i32:7\n"
    PTX_ENTRY("scale", P64("x")) PTX_ENTRY("raw_kernel", P64("p"));

static blkrt_profile_row rows[16];

static int get_rows(void) {
    int n = -1;
    OK(blkrt_profile_rows(rows, 16, &n));
    return n;
}

static void check_times(const blkrt_profile_row *r) {
    CHECK(r->total_ms >= 0 && r->min_ms >= 0, "%s: non-negative times", r->kernel);
    CHECK(r->min_ms <= r->median_ms && r->median_ms <= r->max_ms, "%s: min %g <= median %g <= max %g", r->kernel,
          r->min_ms, r->median_ms, r->max_ms);
    CHECK(r->max_ms <= r->total_ms + 1e-9, "%s: max %g <= total %g", r->kernel, r->max_ms, r->total_ms);
}

static blkrt_status launch4(blkrt_kernel *k, blkrt_ptr x, int n, blkrt_stream *s) {
    blkrt_arg a[] = {BLKRT_PTR(x), BLKRT_PTR(x), BLKRT_PTR(x), BLKRT_INT(n)};
    uint32_t grid[3] = {1, 1, 1};
    return blkrt_launch(k, grid, a, 4, s);
}

/* ---- the fake driver ---- */

typedef struct {
    blkrt_kernel *k;
    blkrt_ptr x;
    int calls, fail_at;
} bench_user;

static blkrt_status bench_fn(void *user) {
    bench_user *u = user;
    u->calls++;
    if (u->calls == u->fail_at) { /* a launch the runtime refuses */
        blkrt_arg bad[] = {BLKRT_INT(0)};
        uint32_t grid[3] = {1, 1, 1};
        return blkrt_launch(u->k, grid, bad, 1, NULL);
    }
    return launch4(u->k, u->x, 64, NULL);
}

/* Launches from several threads while profiling: every one counted once. */
typedef struct {
    blkrt_kernel *k;
    blkrt_ptr x;
    int fails;
} thread_arg;

static void *launch_thread(void *p) {
    thread_arg *a = p;
    for (int i = 0; i < 25; i++) a->fails += launch4(a->k, a->x, 100, NULL) != BLKRT_OK;
    int n = 0;
    a->fails += blkrt_profile_rows(NULL, 0, &n) != BLKRT_OK; /* reading while others launch */
    return NULL;
}

static void threads(blkrt_kernel *k, blkrt_ptr x) {
    OK(blkrt_profile_reset());
    OK(blkrt_profile_enable(1));
    pthread_t t[4];
    thread_arg a[4];
    for (int i = 0; i < 4; i++) {
        a[i] = (thread_arg){k, x, 0};
        pthread_create(&t[i], NULL, launch_thread, &a[i]);
    }
    for (int i = 0; i < 4; i++) {
        pthread_join(t[i], NULL);
        CHECK(a[i].fails == 0, "thread %d: every call succeeded", i);
    }
    CHECK(get_rows() == 1 && rows[0].launches == 100, "4 threads x 25 launches: %llu counted",
          (unsigned long long)rows[0].launches);
    OK(blkrt_profile_enable(0));
    OK(blkrt_profile_reset());
}

static void fake(void) {
    CHECK(fake_api_load(&F) == 0, "fake driver hooks");
    blkrt_device *d;
    OK(blkrt_device_open(0, &d));
    blkrt_module *m = load_ptx(d, PTX);
    blkrt_kernel *va, *vadd, *scale, *raw;
    OK(blkrt_module_kernel(m, "vector_add", &va));
    OK(blkrt_module_kernel(m, "vadd", &vadd));
    OK(blkrt_module_kernel(m, "scale", &scale));
    OK(blkrt_module_kernel(m, "raw_kernel", &raw));
    blkrt_ptr x;
    OK(blkrt_malloc(d, 4096, &x));

    /* off (BLK_PROFILE is not set for this test): nothing recorded */
    F.reset();
    OK(launch4(va, x, 100, NULL));
    CHECK(F.count_calls("cuEventRecord") == 0 && F.count_calls("cuEventCreate") == 0, "no events while off");
    CHECK(get_rows() == 0, "no rows while off");

    OK(blkrt_profile_enable(1));
    F.reset();
    OK(blkrt_profile_set_work(va, 3 * 4 * 100.0, 100.0));
    for (int i = 0; i < 5; i++) OK(launch4(va, x, 100, NULL));
    char log[4096];
    F.call_log(log, sizeof log);
    CHECK(strstr(log, "cuEventRecord cuLaunchKernel cuEventRecord") != NULL, "events around the launch: %s", log);
    CHECK(F.count_calls("cuEventRecord") == 10 && F.launch_count() == 5, "two events per timed launch");
    /* variants of one kernel with other warps are other configurations */
    OK(launch4(vadd, x, 96, NULL)); /* all divisible by 16: vadd_d16, 8 warps */
    OK(launch4(vadd, x, 97, NULL)); /* n is not: vadd_generic, 4 warps */
    OK(launch4(vadd, x, 96, NULL));
    uint32_t g1[3] = {1, 1, 1}, block[3] = {32, 1, 1};
    void *params[] = {&x};
    OK(blkrt_launch_raw(raw, g1, block, 0, params, NULL));
    blkrt_arg sa[] = {BLKRT_PTR(x)};
    OK(blkrt_launch(scale, g1, sa, 1, NULL));
    /* refused by the runtime, or failed in the driver: not counted */
    blkrt_arg bad[] = {BLKRT_INT(0)};
    FAILS(blkrt_launch(va, g1, bad, 1, NULL), BLKRT_ERR_INVALID_LAUNCH, "takes 4 arguments");
    F.fail_next("cuLaunchKernel", 700);
    CHECK(launch4(va, x, 100, NULL) != BLKRT_OK, "a failed launch fails");

    int n = get_rows();
    CHECK(n == 5, "5 rows, got %d", n);
    if (n == 5) {
        const char *want[5][2] = {{"vector_add", "BLOCK=1024,w4"}, {"vadd", "w8"}, {"vadd", "w4"}, {"raw_kernel", ""},
                                  {"scale", "ALPHA=0.5,N=7,w2"}};
        const uint64_t count[5] = {5, 2, 1, 1, 1};
        for (int i = 0; i < 5; i++) {
            CHECK(strcmp(rows[i].kernel, want[i][0]) == 0 && strcmp(rows[i].config, want[i][1]) == 0,
                  "row %d (first-launch order): %s [%s], expected %s [%s]", i, rows[i].kernel, rows[i].config,
                  want[i][0], want[i][1]);
            CHECK(rows[i].launches == count[i], "row %d: %llu launches, expected %llu", i,
                  (unsigned long long)rows[i].launches, (unsigned long long)count[i]);
            CHECK(rows[i].device == 0, "row %d on GPU 0", i);
            check_times(&rows[i]);
        }
        CHECK(rows[0].bytes == 5 * 1200.0 && rows[0].flops == 500.0, "stated work summed: %g B, %g flop",
              rows[0].bytes, rows[0].flops);
        if (rows[0].total_ms > 0)
            CHECK(fabs(rows[0].gbps - rows[0].bytes / (rows[0].total_ms * 1e-3) * 1e-9) <= 1e-6 * rows[0].gbps,
                  "GB/s = bytes / total time");
        CHECK(rows[1].bytes == 0 && rows[1].gbps == 0 && rows[1].tflops == 0, "no work stated: no GB/s");
    }
    CHECK(F.count_calls("cuEventCreate") == F.count_calls("cuEventDestroy_v2"), "every event destroyed: %d created, %d destroyed",
          F.count_calls("cuEventCreate"), F.count_calls("cuEventDestroy_v2"));
    int counted = 0;
    CHECK(blkrt_profile_rows(NULL, 0, &counted) == BLKRT_OK && counted == 5, "count with rows = NULL");
    FAILS(blkrt_profile_rows(NULL, 3, &counted), BLKRT_ERR_INVALID_VALUE, "rows is NULL");
    FAILS(blkrt_profile_set_work(NULL, 1, 1), BLKRT_ERR_INVALID_HANDLE, "not a kernel handle");
    FAILS(blkrt_profile_set_work(va, -1, 0), BLKRT_ERR_INVALID_VALUE, ">= 0");

    char *table = NULL;
    OK(blkrt_profile_table(&table));
    CHECK(table && strstr(table, "vector_add") && strstr(table, "BLOCK=1024,w4") && strstr(table, "ALPHA=0.5,N=7,w2") &&
              strstr(table, "median ms") && strstr(table, "gpu0"),
          "the table names kernels and configs:\n%s", table ? table : "(null)");
    /* slowest total first: each line's total is no larger than the one above */
    double prev = INFINITY;
    int lines = 0;
    for (const char *p = table ? strchr(strchr(table, '\n') + 1, '\n') : NULL; p && p[1]; p = strchr(p + 1, '\n')) {
        char kname[64], cfg[64], dev[16];
        unsigned long long launches;
        double total;
        /* raw_kernel has an empty config column: read what is there */
        if (sscanf(p + 1, "%63s %63s %15s %llu %lf", kname, cfg, dev, &launches, &total) == 5) {
            CHECK(total <= prev, "table sorted by total: %g after %g", total, prev);
            prev = total;
        }
        lines++;
    }
    CHECK(lines == 5, "5 table lines, got %d", lines);
    free(table);

    /* a capture: launches run when the graph does, they are not timed */
    blkrt_stream *s;
    OK(blkrt_stream_create(d, &s));
    OK(blkrt_graph_begin_capture(s));
    F.reset();
    OK(launch4(va, x, 100, s));
    blkrt_graph *g;
    OK(blkrt_graph_end_capture(s, &g));
    CHECK(F.count_calls("cuEventRecord") == 0, "no events in a capture");
    OK(blkrt_graph_destroy(g));
    CHECK(get_rows() == 5 && rows[0].launches == 5, "the captured launch is not counted");

    /* off again: launches are not counted; reset forgets the rows */
    OK(blkrt_profile_enable(0));
    OK(launch4(va, x, 100, NULL));
    CHECK(get_rows() == 5 && rows[0].launches == 5, "off: not counted");
    OK(blkrt_profile_reset());
    CHECK(get_rows() == 0, "reset: no rows");

    /* blkrt_bench: warmup + reps runs, a flush of 4 x L2 before each timed run */
    bench_user u = {va, x, 0, 0};
    float times[7];
    blkrt_bench_options o = {.warmup = 2, .reps = 7, .times = times};
    blkrt_bench_result r;
    F.reset();
    OK(blkrt_bench(d, NULL, bench_fn, &u, &o, &r));
    CHECK(u.calls == 9 && F.launch_count() == 9, "2 warmup + 7 timed runs: %d calls", u.calls);
    CHECK(F.count_calls("cuMemsetD8Async") == 7, "one flush per timed run: %d", F.count_calls("cuMemsetD8Async"));
    CHECK(r.flush_bytes == (size_t)4 * 52428800, "flush = 4 x the fake H200's 50 MB L2: %zu", r.flush_bytes);
    CHECK(r.reps == 7 && r.min_ms >= 0 && r.min_ms <= r.median_ms && r.median_ms <= r.max_ms &&
              r.mean_ms >= r.min_ms && r.mean_ms <= r.max_ms,
          "bench result ordered: min %g median %g max %g mean %g", r.min_ms, r.median_ms, r.max_ms, r.mean_ms);
    int below = 0, above = 0;
    for (int i = 0; i < 7; i++) {
        CHECK(times[i] >= 0, "time %d >= 0", i);
        below += times[i] <= r.median_ms;
        above += times[i] >= r.median_ms;
    }
    CHECK(below >= 4 && above >= 4, "the median splits the 7 times");
    F.call_log(log, sizeof log);
    CHECK(strstr(log, "cuMemsetD8Async cuEventRecord cuLaunchKernel cuEventRecord") != NULL,
          "flush, then the timed run between events: %s", log);
    CHECK(F.count_calls("cuEventCreate") == F.count_calls("cuEventDestroy_v2") &&
              F.count_calls("cuMemAlloc_v2") == F.count_calls("cuMemFree_v2"),
          "bench frees its events and flush buffer");
    /* no flush; defaults */
    F.reset();
    u.calls = 0;
    o = (blkrt_bench_options){.warmup = -1, .flush_bytes = SIZE_MAX};
    OK(blkrt_bench(d, NULL, bench_fn, &u, &o, &r));
    CHECK(u.calls == 20 && r.reps == 20 && r.flush_bytes == 0 && F.count_calls("cuMemsetD8Async") == 0,
          "no warmup, 20 reps by default, no flush: %d calls", u.calls);
    /* the user's failure stops it and is returned */
    u.calls = 0;
    u.fail_at = 4;
    F.reset();
    FAILS(blkrt_bench(d, NULL, bench_fn, &u, NULL, &r), BLKRT_ERR_INVALID_LAUNCH, "takes 4 arguments");
    CHECK(u.calls == 4, "stopped at the failing run: %d", u.calls);
    CHECK(F.count_calls("cuEventCreate") == F.count_calls("cuEventDestroy_v2") &&
              F.count_calls("cuMemAlloc_v2") == F.count_calls("cuMemFree_v2"),
          "a failed bench frees everything");
    FAILS(blkrt_bench(d, NULL, NULL, &u, NULL, &r), BLKRT_ERR_INVALID_VALUE, "fn or out is NULL");
    o = (blkrt_bench_options){.reps = -2};
    FAILS(blkrt_bench(d, NULL, bench_fn, &u, &o, &r), BLKRT_ERR_INVALID_VALUE, "negative");
    FAILS(blkrt_bench(NULL, NULL, bench_fn, &u, NULL, &r), BLKRT_ERR_INVALID_HANDLE, "blkrt_bench");

    threads(va, x);

    /* launches still pending when their device closes are timed then */
    OK(blkrt_profile_enable(1));
    F.reset();
    for (int i = 0; i < 3; i++) OK(launch4(va, x, 100, s));
    OK(blkrt_stream_destroy(s));
    OK(blkrt_free(d, x));
    OK(blkrt_module_unload(m));
    OK(blkrt_device_close(d));
    CHECK(F.count_calls("cuEventSynchronize") >= 1 && F.count_calls("cuEventDestroy_v2") == 6,
          "pending events read and destroyed at close: %d destroyed", F.count_calls("cuEventDestroy_v2"));
    CHECK(get_rows() == 1 && rows[0].launches == 3, "the three launches counted after close");
    OK(blkrt_profile_reset());
    OK(blkrt_profile_enable(0));
}

/* ---- NVTX ---- */

static void nvtx(bool attached) {
    const char *path = getenv("NVTX_INJECTION64_PATH");
    const char *lib_path = getenv("FAKE_NVTX_LIBRARY");
    CHECK(lib_path != NULL, "FAKE_NVTX_LIBRARY names the fake tool");
    CHECK(attached == (path != NULL), "NVTX_INJECTION64_PATH %s", attached ? "set" : "unset");
    blkrt_device *d;
    OK(blkrt_device_open(0, &d));
    blkrt_module *m = load_ptx(d, PTX);
    blkrt_kernel *va, *scale;
    OK(blkrt_module_kernel(m, "vector_add", &va));
    OK(blkrt_module_kernel(m, "scale", &scale));
    blkrt_ptr x;
    OK(blkrt_malloc(d, 4096, &x));
    OK(launch4(va, x, 100, NULL));
    uint32_t g1[3] = {1, 1, 1};
    blkrt_arg sa[] = {BLKRT_PTR(x)};
    OK(blkrt_launch(scale, g1, sa, 1, NULL));
    OK(launch4(va, x, 100, NULL));

    void *tool = lib_path ? dlopen(lib_path, RTLD_NOW | RTLD_NOLOAD) : NULL;
    if (!attached) {
        CHECK(tool == NULL, "no tool: the injection library is never loaded");
    } else {
        CHECK(tool != NULL, "the tool was loaded from NVTX_INJECTION64_PATH");
        if (tool) {
            int (*count)(void), (*depth)(void), (*inits)(void);
            const char *(*range)(int);
            *(void **)&count = dlsym(tool, "fake_nvtx_count");
            *(void **)&depth = dlsym(tool, "fake_nvtx_depth");
            *(void **)&inits = dlsym(tool, "fake_nvtx_inits");
            *(void **)&range = dlsym(tool, "fake_nvtx_range");
            CHECK(inits() == 1, "initialised once: %d", inits());
            CHECK(count() == 3, "one range per launch: %d", count());
            CHECK(depth() == 0, "every range closed");
            const char *want[3] = {"vector_add[BLOCK=1024,w4]", "scale[ALPHA=0.5,N=7,w2]", "vector_add[BLOCK=1024,w4]"};
            for (int i = 0; i < 3 && i < count(); i++)
                CHECK(strcmp(range(i), want[i]) == 0, "range %d: '%s', expected '%s'", i, range(i), want[i]);
            /* NVTX alone does not time: no rows */
            CHECK(get_rows() == 0, "NVTX without BLK_PROFILE: no rows");
        }
    }
    OK(blkrt_free(d, x));
    OK(blkrt_module_unload(m));
    OK(blkrt_device_close(d));
}

/* ---- the CPU device ---- */

static blkrt_module *load_std(blkrt_device *cpu, const char *stdlib, const char *file, int64_t block) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", stdlib, file);
    size_t len;
    char *text = test_read_file(path, &len);
    CHECK(text != NULL, "read %s", path);
    if (!text) return NULL;
    blkrt_define def = {.name = "BLOCK", .ival = block};
    blkrt_source_options o = {.path = path, .defines = &def, .ndefines = 1};
    blkrt_module *m = NULL;
    OK(blkrt_module_load_source(cpu, text, len, &o, &m));
    free(text);
    return m;
}

typedef struct {
    blkrt_kernel *k;
    blkrt_arg args[4];
    int calls;
} cpu_user;

static blkrt_status cpu_fn(void *user) {
    cpu_user *u = user;
    u->calls++;
    uint32_t grid[3] = {(unsigned)(1000 + 127) / 128, 1, 1};
    return blkrt_launch(u->k, grid, u->args, 4, NULL);
}

static void cpu(const char *stdlib) {
    const char *e = getenv("BLK_PROFILE");
    CHECK(e && strcmp(e, "1") == 0, "this mode runs with BLK_PROFILE=1");
    OK(blkrt_jit_install());
    blkrt_device *d;
    OK(blkrt_device_open(BLKRT_DEVICE_CPU, &d));
    blkrt_module *ew = load_std(d, stdlib, "elementwise.blk", 128);
    blkrt_module *sm = load_std(d, stdlib, "softmax.blk", 64);
    if (!ew || !sm) return;
    blkrt_kernel *va, *soft;
    OK(blkrt_module_kernel(ew, "vector_add", &va));
    OK(blkrt_module_kernel(sm, "softmax", &soft));
    enum { N = 1000, ROWS = 5, COLS = 37 };
    blkrt_ptr x, out, a, b;
    OK(blkrt_malloc(d, N * 4, &x));
    OK(blkrt_malloc(d, N * 4, &out));
    OK(blkrt_malloc(d, ROWS * COLS * 4, &a));
    OK(blkrt_malloc(d, ROWS * COLS * 4, &b));
    float host[N];
    for (int i = 0; i < N; i++) host[i] = (float)(i % 17) * 0.25f;
    OK(blkrt_memcpy_htod(d, x, host, sizeof host));
    OK(blkrt_memcpy_htod(d, a, host, ROWS * COLS * 4));
    OK(blkrt_profile_set_work(va, 3.0 * 4 * N, N));

    blkrt_arg vargs[] = {BLKRT_PTR(x), BLKRT_PTR(x), BLKRT_PTR(out), BLKRT_INT(N)};
    uint32_t vgrid[3] = {(N + 127) / 128, 1, 1};
    blkrt_arg sargs[] = {BLKRT_PTR(b), BLKRT_PTR(a), BLKRT_INT(COLS), BLKRT_INT(COLS)};
    uint32_t sgrid[3] = {ROWS, 1, 1};
    OK(blkrt_launch(soft, sgrid, sargs, 4, NULL));
    for (int i = 0; i < 3; i++) OK(blkrt_launch(va, vgrid, vargs, 4, NULL));
    OK(blkrt_launch(soft, sgrid, sargs, 4, NULL));
    /* the kernels really ran: out = 2x, each softmax row sums to 1 */
    float o[N], p[ROWS * COLS];
    OK(blkrt_memcpy_dtoh(d, o, out, sizeof o));
    OK(blkrt_memcpy_dtoh(d, p, b, sizeof p));
    CHECK(o[999] == 2 * host[999], "vector_add ran");
    double row0 = 0;
    for (int j = 0; j < COLS; j++) row0 += p[j];
    CHECK(fabs(row0 - 1) < 1e-5, "softmax ran: row sums to %g", row0);

    int n = get_rows();
    CHECK(n == 2, "2 rows, got %d", n);
    if (n == 2) {
        CHECK(strcmp(rows[0].kernel, "softmax") == 0 && strcmp(rows[0].config, "BLOCK=64,FAST=0,w8") == 0,
              "row 0: %s [%s]", rows[0].kernel, rows[0].config);
        CHECK(strcmp(rows[1].kernel, "vector_add") == 0 && strcmp(rows[1].config, "BLOCK=128,w4") == 0,
              "row 1: %s [%s]", rows[1].kernel, rows[1].config);
        CHECK(rows[0].launches == 2 && rows[1].launches == 3, "counts %llu %llu", (unsigned long long)rows[0].launches,
              (unsigned long long)rows[1].launches);
        CHECK(rows[0].device == BLKRT_DEVICE_CPU, "on the CPU device");
        CHECK(rows[1].bytes == 3 * 12000.0, "stated bytes: %g", rows[1].bytes);
        check_times(&rows[0]);
        check_times(&rows[1]);
        /* the interpreter takes measurable time for 1000 elements */
        CHECK(rows[1].total_ms > 0 && rows[1].gbps > 0, "wall time recorded: %g ms", rows[1].total_ms);
    }

    /* blkrt_bench on the interpreter */
    cpu_user u = {va, {BLKRT_PTR(x), BLKRT_PTR(x), BLKRT_PTR(out), BLKRT_INT(N)}, 0};
    blkrt_bench_options bo = {.warmup = 1, .reps = 5, .flush_bytes = 1 << 20};
    blkrt_bench_result r;
    OK(blkrt_bench(d, NULL, cpu_fn, &u, &bo, &r));
    CHECK(u.calls == 6 && r.reps == 5 && r.flush_bytes == 1 << 20, "bench runs: %d", u.calls);
    CHECK(r.min_ms > 0 && r.min_ms <= r.median_ms && r.median_ms <= r.max_ms, "bench times %g %g %g", r.min_ms,
          r.median_ms, r.max_ms);
    u.calls = 0;
    OK(blkrt_bench(d, NULL, cpu_fn, &u, &(blkrt_bench_options){.warmup = -1, .reps = 1}, &r));
    CHECK(r.flush_bytes == (size_t)32 << 20, "the CPU device's default flush: %zu", r.flush_bytes);
    /* the bench's launches were profiled too */
    CHECK(get_rows() == 2 && rows[1].launches == 3 + 6 + 1, "bench launches counted: %llu",
          (unsigned long long)rows[1].launches);
    OK(blkrt_free(d, x));
    OK(blkrt_free(d, out));
    OK(blkrt_free(d, a));
    OK(blkrt_free(d, b));
    OK(blkrt_module_unload(ew));
    OK(blkrt_module_unload(sm));
    OK(blkrt_device_close(d));
    /* at exit the table goes to stderr (BLK_PROFILE=1); the CTest property
     * of this test checks it */
}

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "fake";
    if (strcmp(mode, "fake") == 0) fake();
    else if (strcmp(mode, "nvtx") == 0) nvtx(true);
    else if (strcmp(mode, "nonvtx") == 0) nvtx(false);
    else if (strcmp(mode, "cpu") == 0) cpu(argc > 2 ? argv[2] : "stdlib");
    else CHECK(0, "unknown mode %s", mode);
    return test_finish("test_profile");
}

/* test_cpu_device — the CPU interpreter as a blkrt device, end to end through
 * libblkrt_jit: stdlib/elementwise.blk from source, vector_add and friends
 * launched through the checked blkrt API on blkrt memory, results checked
 * against C; launch checks, interpreter failures (out of bounds) and compile
 * errors as statuses; the step budget and device_assert; streams, events and graph
 * capture/replay; threads.
 *
 *   rt_test_cpu_device STDLIB_DIR
 */
#include <pthread.h>

#include "blk/blkrt_jit.h"
#include "rt_test.h"

static blkrt_device *cpu;
static char *elementwise;
static size_t elementwise_len;
static char elementwise_path[1024];

static blkrt_module *load_elementwise(int64_t block) {
    blkrt_define def = {.name = "BLOCK", .ival = block};
    blkrt_source_options o = {.path = elementwise_path, .defines = &def, .ndefines = 1};
    blkrt_module *m = NULL;
    OK(blkrt_module_load_source(cpu, elementwise, elementwise_len, &o, &m));
    return m;
}

static void vector_add(void) {
    blkrt_module *m = load_elementwise(256);
    if (!m) return;
    blkrt_kernel *k;
    OK(blkrt_module_kernel(m, "vector_add", &k));
    blkrt_kernel_info info;
    OK(blkrt_kernel_get_info(k, &info));
    CHECK(info.checked && info.num_params == 4 && info.num_warps == 4, "vector_add described by blk-meta");
    const char *pn, *pt;
    OK(blkrt_kernel_param(k, 0, &pn, &pt));
    CHECK(strcmp(pn, "x") == 0 && strcmp(pt, "*f32") == 0, "param 0: %s %s", pn, pt);
    OK(blkrt_kernel_param(k, 3, &pn, &pt));
    CHECK(strcmp(pn, "n") == 0 && strcmp(pt, "i32") == 0, "param 3: %s %s", pn, pt);
    int64_t block = 0;
    OK(blkrt_kernel_const_int(k, "BLOCK", &block));
    CHECK(block == 256, "BLOCK = %lld", (long long)block);

    enum { N = 1000 };
    float x[N], y[N], out[N];
    for (int i = 0; i < N; i++) x[i] = (float)i * 0.5f, y[i] = 1000.0f - (float)i;
    blkrt_ptr dx, dy, dout;
    OK(blkrt_malloc(cpu, sizeof x, &dx));
    OK(blkrt_malloc(cpu, sizeof y, &dy));
    OK(blkrt_malloc(cpu, sizeof out, &dout));
    OK(blkrt_memcpy_htod(cpu, dx, x, sizeof x));
    OK(blkrt_memcpy_htod(cpu, dy, y, sizeof y));
    OK(blkrt_memset(cpu, dout, 0xFF, sizeof out)); /* poison: NaN everywhere */
    blkrt_arg args[] = {BLKRT_PTR(dx), BLKRT_PTR(dy), BLKRT_PTR(dout), BLKRT_INT(N)};
    uint32_t grid[3] = {(N + 255) / 256, 1, 1};
    uint32_t progs = 0;
    OK(blkrt_kernel_max_programs(k, args, 4, &progs));
    CHECK(progs == 1, "the interpreter runs one program at a time: %u", progs);
    OK(blkrt_launch(k, grid, args, 4, NULL));
    OK(blkrt_memcpy_dtoh(cpu, out, dout, sizeof out));
    int bad = 0;
    for (int i = 0; i < N; i++) bad += out[i] != x[i] + y[i];
    CHECK(bad == 0, "vector_add: %d wrong of %d", bad, N);

    /* copy and relu from the same module */
    blkrt_kernel *copy, *act;
    OK(blkrt_module_kernel(m, "copy", &copy));
    OK(blkrt_module_kernel(m, "activation", &act));
    for (int i = 0; i < N; i++) x[i] = (float)(i - 500);
    OK(blkrt_memcpy_htod(cpu, dx, x, sizeof x));
    blkrt_arg cargs[] = {BLKRT_PTR(dx), BLKRT_PTR(dout), BLKRT_INT(N)};
    OK(blkrt_launch(copy, grid, cargs, 3, NULL));
    OK(blkrt_memcpy_dtoh(cpu, out, dout, sizeof out));
    CHECK(memcmp(out, x, sizeof x) == 0, "copy");
    OK(blkrt_launch(act, grid, cargs, 3, NULL));
    OK(blkrt_memcpy_dtoh(cpu, out, dout, sizeof out));
    bad = 0;
    for (int i = 0; i < N; i++) bad += out[i] != (x[i] > 0 ? x[i] : 0.0f);
    CHECK(bad == 0, "relu: %d wrong", bad);

    /* Launch checks are the GPU's: count, kinds, grid. */
    FAILS_EXACTLY(blkrt_launch(k, grid, args, 3, NULL), BLKRT_ERR_INVALID_LAUNCH,
                  "kernel 'vector_add' takes 4 arguments, got 3");
    blkrt_arg fl[] = {BLKRT_PTR(dx), BLKRT_PTR(dy), BLKRT_PTR(dout), BLKRT_FLOAT(N)};
    FAILS(blkrt_launch(k, grid, fl, 4, NULL), BLKRT_ERR_INVALID_LAUNCH, "argument 4 'n' (i32) needs an integer");
    uint32_t g0[3] = {0, 1, 1};
    FAILS(blkrt_launch(k, g0, args, 4, NULL), BLKRT_ERR_INVALID_LAUNCH, "grid[0] is 0");
    uint32_t block3[3] = {32, 1, 1};
    FAILS(blkrt_launch_raw(k, grid, block3, 0, NULL, NULL), BLKRT_ERR_UNSUPPORTED, "checked kernels only");
    /* n past the end of the buffers: the interpreter stops the run. */
    blkrt_arg over[] = {BLKRT_PTR(dx), BLKRT_PTR(dy), BLKRT_PTR(dout), BLKRT_INT(N + 100)};
    uint32_t grid2[3] = {(N + 100 + 255) / 256, 1, 1};
    FAILS(blkrt_launch(k, grid2, over, 4, NULL), BLKRT_ERR_LAUNCH_FAILED,
          "kernel 'vector_add' failed on the CPU interpreter:\n");
    CHECK(strstr(blkrt_last_error(), "elementwise.blk:"), "the interpreter's located message: %s", blkrt_last_error());
    /* ... and the next launch is fine, with only its own messages. */
    OK(blkrt_launch(k, grid, args, 4, NULL));

    /* Copies are bounds-checked against allocations. */
    FAILS(blkrt_memcpy_htod(cpu, dx + sizeof x - 4, x, 8), BLKRT_ERR_INVALID_VALUE,
          "is not inside an allocation of the CPU device");
    FAILS(blkrt_free(cpu, dx + 4), BLKRT_ERR_INVALID_VALUE, "is not an allocation of the CPU device");
    OK(blkrt_free(cpu, dx));
    OK(blkrt_free(cpu, dy));
    OK(blkrt_free(cpu, dout));
    OK(blkrt_module_unload(m));
}

static const char ACC[] =
    "kernel acc(x: *f32, y: *f32, n: i32, const BLOCK: i32 = 128) {\n"
    "    let offs = program_id(0) * BLOCK + arange(0, BLOCK);\n"
    "    let m = offs < n;\n"
    "    store(y + offs, load(y + offs, m) + load(x + offs, m), m);\n"
    "}\n"
    "kernel scale(x: *f32, out: *f32, a: f32, n: i32, const BLOCK: i32 = 128) {\n"
    "    let offs = program_id(0) * BLOCK + arange(0, BLOCK);\n"
    "    let m = offs < n;\n"
    "    store(out + offs, load(x + offs, m) * a, m);\n"
    "}\n";

static void streams_graphs(void) {
    blkrt_source_options o = {.path = "acc.blk"};
    blkrt_module *m = NULL;
    OK(blkrt_module_load_source(cpu, ACC, strlen(ACC), &o, &m));
    if (!m) return;
    blkrt_kernel *acc, *scale;
    OK(blkrt_module_kernel(m, "acc", &acc));
    OK(blkrt_module_kernel(m, "scale", &scale));
    enum { N = 300 };
    float x[N], y[N];
    for (int i = 0; i < N; i++) x[i] = (float)i;
    blkrt_ptr dx, dy;
    OK(blkrt_malloc(cpu, sizeof x, &dx));
    OK(blkrt_malloc(cpu, sizeof y, &dy));
    blkrt_stream *s;
    blkrt_event *e0, *e1;
    OK(blkrt_stream_create(cpu, &s));
    OK(blkrt_event_create(cpu, &e0));
    OK(blkrt_event_create(cpu, &e1));
    OK(blkrt_memcpy_htod_async(cpu, dx, x, sizeof x, s));
    OK(blkrt_memset_async(cpu, dy, 0, sizeof y, s));
    blkrt_arg a[] = {BLKRT_PTR(dx), BLKRT_PTR(dy), BLKRT_INT(N)};
    uint32_t grid[3] = {(N + 127) / 128, 1, 1};
    OK(blkrt_event_record(e0, s));
    OK(blkrt_graph_begin_capture(s));
    OK(blkrt_launch(acc, grid, a, 3, s));
    OK(blkrt_launch(acc, grid, a, 3, s));
    FAILS(blkrt_memset_async(cpu, dy, 0, 4, s), BLKRT_ERR_UNSUPPORTED, "only launches can be captured");
    blkrt_graph *g;
    OK(blkrt_graph_end_capture(s, &g));
    OK(blkrt_memcpy_dtoh(cpu, y, dy, sizeof y));
    CHECK(y[7] == 0, "captured launches did not run");
    for (int r = 0; r < 3; r++) OK(blkrt_graph_launch(g, s));
    OK(blkrt_event_record(e1, s));
    OK(blkrt_stream_synchronize(s));
    OK(blkrt_event_synchronize(e1));
    float ms = -1;
    OK(blkrt_event_elapsed_ms(e0, e1, &ms));
    CHECK(ms >= 0, "elapsed %g", ms);
    OK(blkrt_memcpy_dtoh_async(cpu, y, dy, sizeof y, s));
    int bad = 0;
    for (int i = 0; i < N; i++) bad += y[i] != 6.0f * x[i];
    CHECK(bad == 0, "3 replays of 2 captured launches: y = 6x (%d wrong)", bad);
    blkrt_graph *g2 = NULL;
    FAILS(blkrt_graph_end_capture(s, &g2), BLKRT_ERR_INVALID_VALUE, "not capturing");

    /* A float parameter. */
    blkrt_arg sa[] = {BLKRT_PTR(dx), BLKRT_PTR(dy), BLKRT_FLOAT(-2.5), BLKRT_INT(N)};
    OK(blkrt_launch(scale, grid, sa, 4, NULL));
    OK(blkrt_memcpy_dtoh(cpu, y, dy, sizeof y));
    bad = 0;
    for (int i = 0; i < N; i++) bad += y[i] != -2.5f * x[i];
    CHECK(bad == 0, "scale by -2.5: %d wrong", bad);

    FAILS(blkrt_device_close(cpu), BLKRT_ERR_INVALID_VALUE, "still alive");
    OK(blkrt_graph_destroy(g));
    OK(blkrt_event_destroy(e0));
    OK(blkrt_event_destroy(e1));
    OK(blkrt_stream_destroy(s));
    OK(blkrt_free(cpu, dx));
    OK(blkrt_free(cpu, dy));
    OK(blkrt_module_unload(m));
}

static void compile_errors(void) {
    blkrt_module *m = (blkrt_module *)1;
    const char *bad = "kernel broken(x: *f32 {\n}\n";
    blkrt_source_options o = {.path = "broken.blk"};
    FAILS(blkrt_module_load_source(cpu, bad, strlen(bad), &o, &m), BLKRT_ERR_COMPILE,
          "broken.blk: compiling for the CPU interpreter failed:\nbroken.blk:1:");
    CHECK(m == NULL, "no module");
    blkrt_define def = {.name = "BLOCK", .ival = 100}; /* arange needs a power of two */
    blkrt_source_options o2 = {.path = elementwise_path, .defines = &def, .ndefines = 1, .kernel = "vector_add"};
    FAILS(blkrt_module_load_source(cpu, elementwise, elementwise_len, &o2, &m), BLKRT_ERR_COMPILE, "error:");
    blkrt_source_options o3 = {.path = elementwise_path, .kernel = "no_such_kernel"};
    FAILS(blkrt_module_load_source(cpu, elementwise, elementwise_len, &o3, &m), BLKRT_ERR_COMPILE, "no_such_kernel");
    o3.kernel = "copy";
    OK(blkrt_module_load_source(cpu, elementwise, elementwise_len, &o3, &m));
    blkrt_kernel *k;
    FAILS_EXACTLY(blkrt_module_kernel(m, "vector_add", &k), BLKRT_ERR_NOT_FOUND,
                  "module has no kernel named 'vector_add' (blk-meta kernels: copy)");
    OK(blkrt_module_unload(m));
}

/* Defines whose name is the whole -D text ("MODE=one"): how a string const
 * is set through blkrt_define (numbers go in ival/fval). */
static const char PICK[] =
    "kernel pick(out: *i32, const MODE: str = \"none\", const N: i32 = 1) {\n"
    "    var v = 0;\n"
    "    if MODE == \"one\" { v = 1; }\n"
    "    if MODE == \"two words\" { v = 2; }\n"
    "    store(out, v + N * 10);\n"
    "}\n";

static int run_pick(const blkrt_define *defs, int n) {
    blkrt_source_options o = {.path = "pick.blk", .defines = defs, .ndefines = n};
    blkrt_module *m = NULL;
    blkrt_kernel *k;
    blkrt_ptr d;
    int got = -1;
    OK(blkrt_module_load_source(cpu, PICK, strlen(PICK), &o, &m));
    if (!m) return -1;
    OK(blkrt_module_kernel(m, "pick", &k));
    OK(blkrt_malloc(cpu, 4, &d));
    blkrt_arg a[] = {BLKRT_PTR(d)};
    OK(blkrt_launch(k, (uint32_t[3]){1, 1, 1}, a, 1, NULL));
    OK(blkrt_memcpy_dtoh(cpu, &got, d, 4));
    OK(blkrt_free(cpu, d));
    OK(blkrt_module_unload(m));
    return got;
}

static void string_defines(void) {
    CHECK(run_pick(NULL, 0) == 10, "defaults");
    blkrt_define one = {.name = "MODE=one", .ival = 7}; /* ival ignored */
    CHECK(run_pick(&one, 1) == 11, "MODE=one");
    blkrt_define two[] = {{.name = "MODE=\"two words\""}, {.name = "N", .ival = 3}};
    CHECK(run_pick(two, 2) == 32, "quoted MODE and a numeric N");
    blkrt_define n4 = {.name = "N=4"}; /* the text form takes numbers too */
    CHECK(run_pick(&n4, 1) == 40, "N=4");
    blkrt_define bad = {.name = "MOD=one"};
    blkrt_source_options o = {.path = "pick.blk", .defines = &bad, .ndefines = 1};
    blkrt_module *m = NULL;
    FAILS(blkrt_module_load_source(cpu, PICK, strlen(PICK), &o, &m), BLKRT_ERR_COMPILE, "MOD");
}

/* Threads: each loads its own module and launches, and all launch one
 * shared kernel (the interpreter program runs one launch at a time). */
/* The step budget: an endless loop fails the launch with the interpreter's
 * located message, and the device goes on working. */
static const char SPIN[] =
    "kernel spin(out: *i32, n: i32) {\n"
    "    var i = 0;\n"
    "    while i < n {\n"
    "        i = i + 1 - n / 2147483647;\n"
    "    }\n"
    "    store(out, i);\n"
    "}\n";

static void step_budget(void) {
    blkrt_source_options o = {.path = "spin.blk"};
    blkrt_module *m = NULL;
    OK(blkrt_module_load_source(cpu, SPIN, sizeof SPIN - 1, &o, &m));
    if (!m) return;
    blkrt_kernel *k;
    OK(blkrt_module_kernel(m, "spin", &k));
    blkrt_ptr out;
    OK(blkrt_malloc(cpu, 4, &out));
    uint32_t grid[3] = {1, 1, 1};
    OK(blkrt_device_set_step_limit(cpu, 50000));
    blkrt_arg args[] = {BLKRT_PTR(out), BLKRT_INT(2147483647)}; /* i + 1 - 1: forever */
    FAILS(blkrt_launch(k, grid, args, 2, NULL), BLKRT_ERR_LAUNCH_FAILED,
          "kernel 'spin' failed on the CPU interpreter:\nspin.blk:3:5: error: kernel exceeded its step budget in "
          "this loop (50000 steps; BLK_INTERP_STEPS raises it) (program (0, 0, 0))\n        while i < n {\n        ^");
    args[1] = BLKRT_INT(1000);
    OK(blkrt_launch(k, grid, args, 2, NULL));
    int32_t got = 0;
    OK(blkrt_memcpy_dtoh(cpu, &got, out, 4));
    CHECK(got == 1000, "spin to 1000 gave %d", got);
    args[1] = BLKRT_INT(100000); /* ~5 steps an iteration: over 50000 */
    FAILS(blkrt_launch(k, grid, args, 2, NULL), BLKRT_ERR_LAUNCH_FAILED, "exceeded its step budget in this loop");
    OK(blkrt_device_set_step_limit(cpu, 0)); /* no limit */
    OK(blkrt_launch(k, grid, args, 2, NULL));
    OK(blkrt_memcpy_dtoh(cpu, &got, out, 4));
    CHECK(got == 100000, "spin to 100000 gave %d", got);
    FAILS(blkrt_device_set_step_limit(NULL, 1), BLKRT_ERR_INVALID_HANDLE, "blkrt_device_set_step_limit");
    OK(blkrt_device_set_step_limit(cpu, 1u << 30)); /* the default again, for what follows */
    OK(blkrt_free(cpu, out));
    OK(blkrt_module_unload(m));
}

/* A failed device_assert fails the launch with the interpreter's located
 * message; the device goes on. */
static const char ASSERTS[] =
    "kernel small(n: i32) {\n"
    "    device_assert(n < 10, \"n must be below 10\");\n"
    "}\n";

static void device_asserts(void) {
    blkrt_source_options o = {.path = "asserts.blk"};
    blkrt_module *m = NULL;
    OK(blkrt_module_load_source(cpu, ASSERTS, sizeof ASSERTS - 1, &o, &m));
    if (!m) return;
    blkrt_kernel *k;
    OK(blkrt_module_kernel(m, "small", &k));
    uint32_t grid[3] = {2, 1, 1};
    blkrt_arg a = BLKRT_INT(3);
    OK(blkrt_launch(k, grid, &a, 1, NULL));
    a = BLKRT_INT(12);
    FAILS_EXACTLY(blkrt_launch(k, grid, &a, 1, NULL), BLKRT_ERR_LAUNCH_FAILED,
                  "kernel 'small' failed on the CPU interpreter:\nasserts.blk:2:5: error: device_assert failed: n must "
                  "be below 10 (program (0, 0, 0))\n        device_assert(n < 10, \"n must be below 10\");\n"
                  "        ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~\n");
    a = BLKRT_INT(9);
    OK(blkrt_launch(k, grid, &a, 1, NULL));
    OK(blkrt_module_unload(m));
}

static blkrt_kernel *shared_k;

static void *worker(void *arg) {
    int t = (int)(intptr_t)arg, bad = 0;
    enum { N = 512 };
    float x[N], y[N], out[N];
    for (int i = 0; i < N; i++) x[i] = (float)(i * t), y[i] = (float)t;
    blkrt_ptr dx, dy, dout;
    bad += blkrt_malloc(cpu, sizeof x, &dx) != BLKRT_OK;
    bad += blkrt_malloc(cpu, sizeof y, &dy) != BLKRT_OK;
    bad += blkrt_malloc(cpu, sizeof out, &dout) != BLKRT_OK;
    bad += blkrt_memcpy_htod(cpu, dx, x, sizeof x) != BLKRT_OK;
    bad += blkrt_memcpy_htod(cpu, dy, y, sizeof y) != BLKRT_OK;
    blkrt_module *m = load_elementwise(128);
    blkrt_kernel *k = NULL;
    bad += !m || blkrt_module_kernel(m, "vector_add", &k) != BLKRT_OK;
    blkrt_arg a[] = {BLKRT_PTR(dx), BLKRT_PTR(dy), BLKRT_PTR(dout), BLKRT_INT(N)};
    for (int r = 0; r < 4 && k; r++) {
        uint32_t g1[3] = {N / 128, 1, 1}, g2[3] = {N / 256, 1, 1};
        bad += blkrt_launch(k, g1, a, 4, NULL) != BLKRT_OK;
        bad += blkrt_launch(shared_k, g2, a, 4, NULL) != BLKRT_OK;
    }
    bad += blkrt_memcpy_dtoh(cpu, out, dout, sizeof out) != BLKRT_OK;
    for (int i = 0; i < N; i++) bad += out[i] != x[i] + y[i];
    if (m) bad += blkrt_module_unload(m) != BLKRT_OK;
    blkrt_free(cpu, dx);
    blkrt_free(cpu, dy);
    blkrt_free(cpu, dout);
    return (void *)(intptr_t)bad;
}

static void threads(void) {
    blkrt_module *m = load_elementwise(256);
    if (!m) return;
    OK(blkrt_module_kernel(m, "vector_add", &shared_k));
    pthread_t th[4];
    for (int t = 0; t < 4; t++) pthread_create(&th[t], NULL, worker, (void *)(intptr_t)(t + 1));
    for (int t = 0; t < 4; t++) {
        void *r;
        pthread_join(th[t], &r);
        CHECK(r == NULL, "thread %d: %d failures", t, (int)(intptr_t)r);
    }
    OK(blkrt_module_unload(m));
}

int main(int argc, char **argv) {
    const char *stdlib = argc > 1 ? argv[1] : "stdlib";
    snprintf(elementwise_path, sizeof elementwise_path, "%s/elementwise.blk", stdlib);
    elementwise = test_read_file(elementwise_path, &elementwise_len);
    if (!elementwise) {
        fprintf(stderr, "cannot read %s\n", elementwise_path);
        return 1;
    }
    OK(blkrt_jit_install());
    OK(blkrt_device_open(BLKRT_DEVICE_CPU, &cpu));
    blkrt_device_info info;
    OK(blkrt_device_get_info(cpu, &info));
    CHECK(info.kind == BLKRT_KIND_CPU && info.ordinal == BLKRT_DEVICE_CPU && strcmp(info.arch, "cpu") == 0, "CPU info");
    vector_add();
    streams_graphs();
    compile_errors();
    string_defines();
    step_budget();
    device_asserts();
    threads();
    OK(blkrt_device_close(cpu));
    free(elementwise);
    return test_finish("test_cpu_device");
}

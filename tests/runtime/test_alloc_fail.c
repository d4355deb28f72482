/* test_alloc_fail — libblkrt's API sequence with the 1st, 2nd, ... nth
 * allocation failing in turn (rt_alloc_fail_at; SQLite's OOM tests), until a
 * run reaches no failure:
 *   gpu   the fake driver: PTX load, kernel, memory, a stream, a launch, a
 *         timed synchronisation, events, a graph capture and replay;
 *   cpu   the CPU device through libblkrt_jit: .blk source, memory, a
 *         launch on the interpreter, the result;
 *   jit   the same CPU sequence with libblkc's allocations failing instead
 *         (blk_alloc_fail_at: the compiler and the interpreter).
 * Every injected failure must come back as BLKRT_ERR_OUT_OF_MEMORY from
 * some call, the cleanup (free, unload, destroy, close) must succeed after
 * it, and ASan (make test SANITIZE=1) reports any leak. Allocations of the
 * driver and of LLVM are not covered. */
#include "blk/blkrt_jit.h"
#include "rt.h"
#include "rt_test.h"
#include "util.h"

static const char PTX[] = ".version 8.0\n.target sm_90a\n" VADD_META("vector_add", "") PTX_ENTRY("vector_add", VADD_PARAMS);

static const char SRC[] =
    "kernel vector_add(x: *f32, y: *f32, out: *f32, n: i32, const BLOCK: i32 = 64) {\n"
    "    let offs = program_id(0) * BLOCK + arange(0, BLOCK);\n"
    "    let m = offs < n;\n"
    "    store(out + offs, load(x + offs, m) + load(y + offs, m), m);\n"
    "}\n";

/* The first failure of a sequence (later calls are skipped). */
#define STEP(call)                     \
    do {                               \
        if (st == BLKRT_OK) st = (call); \
    } while (0)
/* Cleanup must work whatever failed before. */
#define CLEAN(call)                                                                                 \
    do {                                                                                            \
        blkrt_status c_ = (call);                                                                   \
        CHECK(c_ == BLKRT_OK, "cleanup %s -> %s: %s", #call, blkrt_status_name(c_), blkrt_last_error()); \
    } while (0)

static blkrt_status gpu_sequence(void) {
    blkrt_status st = BLKRT_OK;
    blkrt_device *d = NULL;
    blkrt_module *m = NULL;
    blkrt_kernel *k = NULL;
    blkrt_stream *s = NULL;
    blkrt_event *e = NULL;
    blkrt_graph *g = NULL;
    blkrt_ptr x = 0;
    STEP(blkrt_device_open(0, &d));
    STEP(blkrt_module_load_ptx(d, PTX, sizeof PTX - 1, &m));
    STEP(blkrt_module_kernel(m, "vector_add", &k));
    STEP(blkrt_malloc(d, 4096, &x));
    STEP(blkrt_stream_create(d, &s));
    blkrt_arg a[] = {BLKRT_PTR(x), BLKRT_PTR(x), BLKRT_PTR(x), BLKRT_INT(1024)};
    uint32_t grid[3] = {1, 1, 1};
    STEP(blkrt_launch(k, grid, a, 4, s));
    STEP(blkrt_stream_synchronize_timeout(d, s, 1000));
    STEP(blkrt_event_create(d, &e));
    STEP(blkrt_event_record(e, s));
    STEP(blkrt_event_synchronize(e));
    STEP(blkrt_graph_begin_capture(s));
    bool capturing = st == BLKRT_OK;
    STEP(blkrt_launch(k, grid, a, 4, s));
    if (capturing) { /* ended whatever failed during it */
        blkrt_status c = blkrt_graph_end_capture(s, &g);
        if (st == BLKRT_OK) st = c;
    }
    STEP(blkrt_graph_launch(g, s));
    STEP(blkrt_device_synchronize(d));
    blkrt_status first = st;
    char msg[512];
    snprintf(msg, sizeof msg, "%s", blkrt_last_error());
    if (g) CLEAN(blkrt_graph_destroy(g));
    if (e) CLEAN(blkrt_event_destroy(e));
    if (s) CLEAN(blkrt_stream_destroy(s));
    if (x) CLEAN(blkrt_free(d, x));
    if (m) CLEAN(blkrt_module_unload(m));
    if (d) CLEAN(blkrt_device_close(d));
    rt_err(first, "%s", msg); /* the first failure's message, for the report */
    return first;
}

static blkrt_status cpu_sequence(void) {
    blkrt_status st = BLKRT_OK;
    blkrt_device *d = NULL;
    blkrt_module *m = NULL;
    blkrt_kernel *k = NULL;
    blkrt_ptr x = 0, out = 0;
    float hx[100], hout[100];
    for (int i = 0; i < 100; i++) hx[i] = (float)i, hout[i] = 0;
    blkrt_source_options o = {.path = "vadd.blk"};
    STEP(blkrt_device_open(BLKRT_DEVICE_CPU, &d));
    STEP(blkrt_module_load_source(d, SRC, sizeof SRC - 1, &o, &m));
    STEP(blkrt_module_kernel(m, "vector_add", &k));
    STEP(blkrt_malloc(d, sizeof hx, &x));
    STEP(blkrt_malloc(d, sizeof hout, &out));
    STEP(blkrt_memcpy_htod(d, x, hx, sizeof hx));
    blkrt_arg a[] = {BLKRT_PTR(x), BLKRT_PTR(x), BLKRT_PTR(out), BLKRT_INT(100)};
    uint32_t grid[3] = {2, 1, 1};
    STEP(blkrt_launch(k, grid, a, 4, NULL));
    STEP(blkrt_memcpy_dtoh(d, hout, out, sizeof hout));
    if (st == BLKRT_OK) CHECK(hout[99] == 198.0f, "out[99] = %g", hout[99]);
    blkrt_status first = st;
    char msg[512];
    snprintf(msg, sizeof msg, "%s", blkrt_last_error());
    if (out) CLEAN(blkrt_free(d, out));
    if (x) CLEAN(blkrt_free(d, x));
    if (m) CLEAN(blkrt_module_unload(m));
    if (d) CLEAN(blkrt_device_close(d));
    rt_err(first, "%s", msg);
    return first;
}

/* Run seq with the nth allocation failing (arm: whose), n = 1, 2, ...
 * until no failure was injected; the number of failures injected. */
static long every(const char *what, blkrt_status (*seq)(void), long (*arm)(long)) {
    long n = 1;
    for (;; n++) {
        arm(n);
        blkrt_status st = seq();
        long made = arm(0);
        if (made < n) {
            CHECK(st == BLKRT_OK, "%s: no failure injected, yet %s: %s", what, blkrt_status_name(st), blkrt_last_error());
            return n - 1;
        }
        CHECK(st == BLKRT_ERR_OUT_OF_MEMORY, "%s: allocation %ld failed: %s: %s", what, n, blkrt_status_name(st),
              blkrt_last_error());
        if (n > 100000) return n;
    }
}

int main(void) {
    OK(blkrt_jit_install());
    long gpu = every("gpu", gpu_sequence, rt_alloc_fail_at);
    long cpu = every("cpu", cpu_sequence, rt_alloc_fail_at);
    long jit = every("jit", cpu_sequence, blk_alloc_fail_at);
    printf("test_alloc_fail: failures injected: %ld (fake GPU sequence), %ld (CPU device, runtime), %ld (CPU device, "
           "compiler and interpreter)\n", gpu, cpu, jit);
    CHECK(gpu > 5 && cpu > 5 && jit > 5, "too few allocations to be a test");
    return test_finish("test_alloc_fail");
}

/* test_gpu_vadd — libblkrt on a real GPU (label gpu).
 *
 * Loads vadd.ptx (tests/gpu/vadd.cu compiled by nvcc at build time) with
 * hand-written blk-meta lines appended, then on every GPU: checked launches
 * on poisoned device memory against C results (both variants of vadd, a
 * 64 KB dynamic-shared-memory kernel, an f16 scalar parameter), host time per
 * launch (printed, not asserted), events, a graph capture/replay round trip,
 * and the driver's own JIT error log / unsupported-PTX-version status.
 * Without a driver or GPU it prints "skipped: ..." and exits 77 (CTest SKIP).
 *
 *   test_gpu_vadd [vadd.ptx]     (default: vadd.ptx next to the executable)
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "blk/blkrt.h"

#include "../test_util.h"

#define OK(call)                                                                               \
    do {                                                                                       \
        blkrt_status s_ = (call);                                                              \
        CHECK(s_ == BLKRT_OK, "%s -> %s: %s", #call, blkrt_status_name(s_), blkrt_last_error()); \
    } while (0)

static const char META[] =
    "// blk-meta v1 kernel=vadd entry=vadd num_warps=4 shared=0 params=x:*const.f32,y:*const.f32,out:*f32,n:i32 "
    "consts=BLOCK:i32:512 spec=x:-,y:-,out:-,n:-\n"
    "// blk-meta v1 kernel=vadd entry=vadd_v4 num_warps=4 shared=0 params=x:*const.f32,y:*const.f32,out:*f32,n:i32 "
    "consts=BLOCK:i32:512 spec=x:d16,y:d16,out:d16,n:d16\n"
    "// blk-meta v1 kernel=acc entry=acc num_warps=4 shared=0 params=x:*const.f32,acc:*f32,n:i32 consts=BLOCK:i32:512\n"
    "// blk-meta v1 kernel=smem_reverse entry=smem_reverse num_warps=4 shared=65536 params=x:*const.f32,out:*f32,n:i32 "
    "consts=BLOCK:i32:16384\n"
    "// blk-meta v1 kernel=scale_f16 entry=scale_f16 num_warps=4 shared=0 params=x:*const.f32,out:*f32,a:f16,n:i32 "
    "consts=BLOCK:i32:512\n";

static double now_us(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e6 + (double)t.tv_nsec * 1e-3;
}

static char *read_ptx(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)n + sizeof META + 1);
    if (!s || fread(s, 1, (size_t)n, f) != (size_t)n) {
        fclose(f);
        free(s);
        return NULL;
    }
    fclose(f);
    memcpy(s + n, META, sizeof META); /* the blk-meta lines, as the compiler would write them */
    *len = (size_t)n + sizeof META - 1;
    return s;
}

static uint32_t cdiv(uint32_t a, uint32_t b) { return (a + b - 1) / b; }

static void vadd_case(blkrt_device *d, blkrt_kernel *k, int n, int misalign) {
    size_t bytes = sizeof(float) * (size_t)(n + 4);
    float *x = malloc(bytes), *y = malloc(bytes), *out = malloc(bytes);
    for (int i = 0; i < n + 4; i++) x[i] = (float)i * 0.5f, y[i] = 3.0f - (float)(i % 1000);
    blkrt_ptr dx, dy, dout;
    OK(blkrt_malloc(d, bytes, &dx));
    OK(blkrt_malloc(d, bytes, &dy));
    OK(blkrt_malloc(d, bytes, &dout));
    OK(blkrt_memcpy_htod(d, dx, x, bytes));
    OK(blkrt_memcpy_htod(d, dy, y, bytes));
    OK(blkrt_memset(d, dout, 0xFF, bytes)); /* poison: NaN */
    size_t off = misalign ? sizeof(float) : 0;
    blkrt_arg a[] = {BLKRT_PTR(dx + off), BLKRT_PTR(dy + off), BLKRT_PTR(dout + off), BLKRT_INT(n)};
    uint32_t grid[3] = {cdiv((uint32_t)n, 512), 1, 1};
    OK(blkrt_launch(k, grid, a, 4, NULL));
    OK(blkrt_device_synchronize(d));
    OK(blkrt_memcpy_dtoh(d, out, dout, bytes));
    int bad = 0, first = -1;
    int o = misalign ? 1 : 0;
    for (int i = 0; i < n; i++)
        if (out[i + o] != x[i + o] + y[i + o]) {
            bad++;
            if (first < 0) first = i;
        }
    uint32_t tail;
    memcpy(&tail, &out[n + o], 4);
    CHECK(bad == 0, "vadd n=%d misalign=%d: %d wrong (first at %d)", n, misalign, bad, first);
    CHECK(tail == 0xFFFFFFFFu, "vadd n=%d: wrote past n", n);
    if (!bad)
        printf("  vadd n=%d%s: ok\n", n, misalign ? " (misaligned: fallback entry)" : n % 16 ? " (fallback entry)" : " (d16 entry)");
    OK(blkrt_free(d, dx));
    OK(blkrt_free(d, dy));
    OK(blkrt_free(d, dout));
    free(x);
    free(y);
    free(out);
}

static void run_device(int ordinal, const char *ptx, size_t len) {
    blkrt_device *d;
    blkrt_device_info info;
    OK(blkrt_device_open(ordinal, &d));
    if (!d) return;
    OK(blkrt_device_get_info(d, &info));
    printf("GPU %d: %s, sm_%d (%s), %d SMs, %zu MiB, shared %d / opt-in %d, driver %d\n", ordinal, info.name, info.sm,
           info.arch, info.sm_count, info.total_memory >> 20, info.max_shared_per_block, info.max_shared_optin,
           info.driver_version);
    blkrt_module *m = NULL;
    OK(blkrt_module_load_ptx(d, ptx, len, &m));
    if (!m) {
        blkrt_device_close(d);
        return;
    }
    const char *log;
    OK(blkrt_module_jit_log(m, &log));
    printf("  JIT info log: %.300s%s\n", log, strlen(log) > 300 ? "..." : "");
    blkrt_kernel *vadd, *acc, *smem, *scale;
    OK(blkrt_module_kernel(m, "vadd", &vadd));
    OK(blkrt_module_kernel(m, "acc", &acc));
    OK(blkrt_module_kernel(m, "smem_reverse", &smem));
    OK(blkrt_module_kernel(m, "scale_f16", &scale));

    vadd_case(d, vadd, 1 << 20, 0);       /* d16 variant */
    vadd_case(d, vadd, (1 << 20) + 13, 0); /* n not divisible by 16 */
    vadd_case(d, vadd, 4096, 1);           /* pointers not 16-byte aligned */

    /* 64 KB of dynamic shared memory (the runtime opted the function in). */
    enum { CH = 16384, NCH = 8 };
    int n = CH * NCH - 100;
    size_t bytes = sizeof(float) * CH * NCH;
    float *x = malloc(bytes), *out = malloc(bytes);
    for (int i = 0; i < CH * NCH; i++) x[i] = (float)i;
    blkrt_ptr dx, dout;
    OK(blkrt_malloc(d, bytes, &dx));
    OK(blkrt_malloc(d, bytes, &dout));
    OK(blkrt_memcpy_htod(d, dx, x, bytes));
    OK(blkrt_memset(d, dout, 0xFF, bytes));
    blkrt_arg sa[] = {BLKRT_PTR(dx), BLKRT_PTR(dout), BLKRT_INT(n)};
    uint32_t sgrid[3] = {NCH, 1, 1};
    OK(blkrt_launch(smem, sgrid, sa, 3, NULL));
    OK(blkrt_memcpy_dtoh(d, out, dout, bytes));
    int bad = 0;
    for (int i = 0; i < n; i++) {
        int c = i / CH, j = i % CH, src = c * CH + (CH - 1 - j);
        float want = src < n ? x[src] : 0.0f;
        bad += out[i] != want;
    }
    CHECK(bad == 0, "smem_reverse (64 KB dynamic shared memory): %d wrong", bad);
    if (!bad) printf("  smem_reverse with 64 KB dynamic shared memory: ok\n");

    /* An f16 scalar parameter: 2 bytes, rounded from the double. */
    blkrt_arg fa[] = {BLKRT_PTR(dx), BLKRT_PTR(dout), BLKRT_FLOAT(1.5), BLKRT_INT(n)};
    uint32_t fgrid[3] = {cdiv((uint32_t)n, 512), 1, 1};
    OK(blkrt_launch(scale, fgrid, fa, 4, NULL));
    OK(blkrt_memcpy_dtoh(d, out, dout, bytes));
    bad = 0;
    for (int i = 0; i < n; i++) bad += out[i] != x[i] * 1.5f;
    CHECK(bad == 0, "scale_f16 by 1.5: %d wrong", bad);
    if (!bad) printf("  f16 parameter: ok\n");

    /* Host time per launch: checked path and raw path, small grid, one stream.
     * Launches are timed in batches of 256 with a synchronize between
     * batches (untimed), so a full launch queue never makes the host wait
     * for the GPU: what is measured is the host cost of a launch call. */
    blkrt_stream *s;
    OK(blkrt_stream_create(d, &s));
    enum { BATCH = 256, BATCHES = 40 };
    int small = 4096;
    blkrt_arg la[] = {BLKRT_PTR(dx), BLKRT_PTR(dx), BLKRT_PTR(dout), BLKRT_INT(small)};
    uint32_t lgrid[3] = {cdiv((uint32_t)small, 512), 1, 1};
    uint64_t p0 = dx, p2 = dout;
    int32_t pn = small;
    void *params[] = {&p0, &p0, &p2, &pn};
    uint32_t block[3] = {128, 1, 1};
    for (int i = 0; i < 100; i++) blkrt_launch(vadd, lgrid, la, 4, s); /* warm up */
    OK(blkrt_stream_synchronize(s));
    double checked_us = 0, raw_us = 0;
    blkrt_status ls = BLKRT_OK;
    for (int b = 0; b < BATCHES && ls == BLKRT_OK; b++) {
        double t0 = now_us();
        for (int i = 0; i < BATCH && ls == BLKRT_OK; i++) ls = blkrt_launch(vadd, lgrid, la, 4, s);
        double t1 = now_us();
        OK(blkrt_stream_synchronize(s));
        double t2 = now_us();
        for (int i = 0; i < BATCH && ls == BLKRT_OK; i++) ls = blkrt_launch_raw(vadd, lgrid, block, 0, params, s);
        double t3 = now_us();
        OK(blkrt_stream_synchronize(s));
        checked_us += t1 - t0;
        raw_us += t3 - t2;
    }
    OK(ls);
    printf("  host time per launch: blkrt_launch %.2f us, blkrt_launch_raw %.2f us (%d launches each)\n",
           checked_us / (BATCH * BATCHES), raw_us / (BATCH * BATCHES), BATCH * BATCHES);

    /* Events around 100 launches. */
    blkrt_event *e0, *e1;
    OK(blkrt_event_create(d, &e0));
    OK(blkrt_event_create(d, &e1));
    OK(blkrt_event_record(e0, s));
    for (int i = 0; i < 100; i++) OK(blkrt_launch(vadd, lgrid, la, 4, s));
    OK(blkrt_event_record(e1, s));
    OK(blkrt_event_synchronize(e1));
    float ms = -1;
    OK(blkrt_event_elapsed_ms(e0, e1, &ms));
    CHECK(ms > 0 && ms < 10000, "event time %g ms", ms);
    printf("  100 launches: %.3f ms of GPU time (events)\n", ms);

    /* Graph: capture 10 acc launches, replay 3 times: acc = 30 x. */
    int gn = 100000;
    blkrt_ptr dacc;
    OK(blkrt_malloc(d, sizeof(float) * (size_t)gn, &dacc));
    OK(blkrt_memset(d, dacc, 0, sizeof(float) * (size_t)gn));
    blkrt_arg ga[] = {BLKRT_PTR(dx), BLKRT_PTR(dacc), BLKRT_INT(gn)};
    uint32_t ggrid[3] = {cdiv((uint32_t)gn, 512), 1, 1};
    blkrt_graph *g = NULL;
    OK(blkrt_graph_begin_capture(s));
    for (int i = 0; i < 10; i++) OK(blkrt_launch(acc, ggrid, ga, 3, s));
    OK(blkrt_graph_end_capture(s, &g));
    OK(blkrt_stream_synchronize(s));
    float *h = malloc(sizeof(float) * (size_t)gn);
    OK(blkrt_memcpy_dtoh(d, h, dacc, sizeof(float) * (size_t)gn));
    CHECK(h[gn - 1] == 0.0f, "captured launches must not run before replay (%g)", h[gn - 1]);
    if (g) {
        double g0 = now_us();
        for (int r = 0; r < 3; r++) OK(blkrt_graph_launch(g, s));
        double g1 = now_us();
        OK(blkrt_stream_synchronize(s));
        OK(blkrt_memcpy_dtoh(d, h, dacc, sizeof(float) * (size_t)gn));
        bad = 0;
        for (int i = 0; i < gn; i++) bad += h[i] != 30.0f * x[i];
        CHECK(bad == 0, "graph replay: %d wrong (acc[1] = %g, want %g)", bad, h[1], 30.0f * x[1]);
        if (!bad) printf("  graph of 10 launches replayed 3 times: ok (%.2f us host time per replay)\n", (g1 - g0) / 3);
        OK(blkrt_graph_destroy(g));
    }
    free(h);
    OK(blkrt_free(d, dacc));

    /* The driver's JIT error log and the unsupported-version status. */
    const char *bad_ptx = ".version 8.0\n.target sm_80\n.address_size 64\n"
                          ".visible .entry broken()\n{\n\tthis_is_not_an_instruction %r1;\n\tret;\n}\n";
    blkrt_module *mb = NULL;
    blkrt_status st = blkrt_module_load_ptx(d, bad_ptx, strlen(bad_ptx), &mb);
    CHECK(st == BLKRT_ERR_JIT, "broken PTX -> %s (expected BLKRT_ERR_JIT)", blkrt_status_name(st));
    CHECK(strstr(blkrt_last_error(), "JIT error log:") != NULL, "the JIT log is in the message");
    printf("  broken PTX -> %s:\n    %s\n", blkrt_status_name(st), st ? blkrt_last_error() : "");
    if (mb) OK(blkrt_module_unload(mb));
    const char *future = ".version 99.0\n.target sm_80\n.address_size 64\n.visible .entry k()\n{\n\tret;\n}\n";
    mb = NULL;
    st = blkrt_module_load_ptx(d, future, strlen(future), &mb);
    CHECK(st == BLKRT_ERR_PTX_VERSION, "PTX .version 99.0 -> %s (expected BLKRT_ERR_PTX_VERSION)",
          blkrt_status_name(st));
    printf("  PTX .version 99.0 -> %s:\n    %s\n", blkrt_status_name(st), st ? blkrt_last_error() : "");
    if (mb) OK(blkrt_module_unload(mb));

    OK(blkrt_event_destroy(e0));
    OK(blkrt_event_destroy(e1));
    OK(blkrt_stream_destroy(s));
    OK(blkrt_free(d, dx));
    OK(blkrt_free(d, dout));
    free(x);
    free(out);
    OK(blkrt_module_unload(m));
    OK(blkrt_device_close(d));
}

int main(int argc, char **argv) {
    int count = 0;
    blkrt_status st = blkrt_device_count(&count);
    if (st != BLKRT_OK || count == 0) {
        printf("skipped: no CUDA driver/GPU (%s)\n", st ? blkrt_last_error() : "the driver reports 0 devices");
        return 77;
    }
    char path[4096];
    if (argc > 1) {
        snprintf(path, sizeof path, "%s", argv[1]);
    } else { /* next to the executable */
        ssize_t n = readlink("/proc/self/exe", path, sizeof path - 16);
        if (n < 0) n = 0;
        path[n] = 0;
        char *slash = strrchr(path, '/');
        snprintf(slash ? slash + 1 : path, sizeof path - (size_t)(slash ? slash + 1 - path : 0), "vadd.ptx");
    }
    size_t len;
    char *ptx = read_ptx(path, &len);
    if (!ptx) {
        fprintf(stderr, "cannot read %s\n", path);
        return 1;
    }
    for (int i = 0; i < count; i++) run_device(i, ptx, len);
    free(ptx);
    if (failures) fprintf(stderr, "test_gpu_vadd: %d failure(s)\n", failures);
    else printf("test_gpu_vadd: ok on %d GPU(s)\n", count);
    return failures != 0;
}

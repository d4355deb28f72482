/* test_gpu_multi — libblkrt on several real GPUs (label gpu; the device side
 * of tests/gpu/multi_gpu.sh). Loads stdlib vector_add as PTX (blkc output,
 * built here: libblkrt alone, no compiler on the GPU machine) on GPU 0 and
 * copies it to every other GPU with blkrt_module_for_device, then checks
 * results on poisoned memory:
 *   - every GPU runs its copy (one load per GPU, the copy asked for twice);
 *   - one thread per GPU, each on its own stream, LAUNCHES launches at once;
 *   - one thread launching round-robin over all GPUs;
 *   - peer copies GPU 0 -> every GPU before and after enabling peer access
 *     (bytes compared; GB/s printed, not asserted); where two GPUs cannot
 *     reach each other, enabling fails with BLKRT_ERR_NO_PEER_ACCESS and
 *     the staged copy still works;
 *   - with peer access, a kernel on GPU 1 reading its input from GPU 0's
 *     memory directly.
 * With fewer than two GPUs (or no driver) it prints "skipped: ..." and exits
 * 77. --dry-run (against the fake driver in make test) runs every step but
 * does not compare kernel results, which the fake does not compute.
 *
 *   test_gpu_multi [--dry-run] vadd.ptx
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rt_test.h" /* CHECK, OK (tests/runtime) */

enum { MAX_GPUS = 8, N = 1 << 22, LAUNCHES = 200 };

static int dry_run, ngpu;
static blkrt_device *dev[MAX_GPUS];
static blkrt_module *mod[MAX_GPUS];

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* x[i] = i + 1000 g, y[i] = 2 i: out = x + y, distinct per GPU. */
typedef struct {
    blkrt_ptr x, y, out;
} bufs;

static bufs make_bufs(int g) {
    bufs b = {0, 0, 0};
    float *h = malloc(sizeof(float) * N);
    if (!h) return b;
    OK(blkrt_malloc(dev[g], sizeof(float) * N, &b.x));
    OK(blkrt_malloc(dev[g], sizeof(float) * N, &b.y));
    OK(blkrt_malloc(dev[g], sizeof(float) * N, &b.out));
    for (int i = 0; i < N; i++) h[i] = (float)i + 1000.0f * (float)g;
    OK(blkrt_memcpy_htod(dev[g], b.x, h, sizeof(float) * N));
    for (int i = 0; i < N; i++) h[i] = 2.0f * (float)i;
    OK(blkrt_memcpy_htod(dev[g], b.y, h, sizeof(float) * N));
    free(h);
    return b;
}

static void free_bufs(int g, bufs b) {
    OK(blkrt_free(dev[g], b.x));
    OK(blkrt_free(dev[g], b.y));
    OK(blkrt_free(dev[g], b.out));
}

static blkrt_status vadd(int g, blkrt_ptr x, blkrt_ptr y, blkrt_ptr out, blkrt_stream *s) {
    blkrt_kernel *k = NULL;
    blkrt_status st = blkrt_module_kernel(mod[g], "vector_add", &k);
    int64_t block = 1024;
    if (!st) st = blkrt_kernel_const_int(k, "BLOCK", &block);
    blkrt_arg a[] = {BLKRT_PTR(x), BLKRT_PTR(y), BLKRT_PTR(out), BLKRT_INT(N)};
    uint32_t grid[3] = {(uint32_t)((N + block - 1) / block), 1, 1};
    return st ? st : blkrt_launch(k, grid, a, 4, s);
}

/* out (on GPU g) must be x + y of GPU xg's pattern; poisoned before. */
static void expect_sum(int g, blkrt_ptr out, int xg, const char *what) {
    if (dry_run) return;
    float *h = malloc(sizeof(float) * N);
    if (!h) return;
    OK(blkrt_memcpy_dtoh(dev[g], h, out, sizeof(float) * N));
    int bad = 0, first = -1;
    for (int i = 0; i < N; i++)
        if (h[i] != (float)i + 1000.0f * (float)xg + 2.0f * (float)i && bad++ == 0) first = i;
    CHECK(bad == 0, "%s: %d of %d elements wrong on GPU %d (first at %d: %g)", what, bad, N, g, first,
          first >= 0 ? h[first] : 0.0);
    free(h);
}

static void poison(int g, blkrt_ptr p) { OK(blkrt_memset(dev[g], p, 0xFF, sizeof(float) * N)); }

/* ---- one thread per GPU ---- */
static bufs tb[MAX_GPUS];
static int thread_bad[MAX_GPUS];
static pthread_barrier_t barrier;

static void *per_gpu(void *arg) {
    int g = (int)(intptr_t)arg, bad = 0;
    blkrt_stream *s = NULL;
    bad += blkrt_stream_create(dev[g], &s) != BLKRT_OK;
    pthread_barrier_wait(&barrier);
    for (int i = 0; i < LAUNCHES && s; i++) bad += vadd(g, tb[g].x, tb[g].y, tb[g].out, s) != BLKRT_OK;
    if (s) bad += blkrt_stream_synchronize(s) != BLKRT_OK;
    if (s) bad += blkrt_stream_destroy(s) != BLKRT_OK;
    thread_bad[g] = bad;
    return NULL;
}

static void test_launches(void) {
    for (int g = 0; g < ngpu; g++) tb[g] = make_bufs(g);
    /* each GPU its copy, alone */
    for (int g = 0; g < ngpu; g++) {
        poison(g, tb[g].out);
        OK(vadd(g, tb[g].x, tb[g].y, tb[g].out, NULL));
        OK(blkrt_device_synchronize(dev[g]));
        expect_sum(g, tb[g].out, g, "per-device module");
    }
    /* one thread per GPU */
    for (int g = 0; g < ngpu; g++) poison(g, tb[g].out);
    pthread_t th[MAX_GPUS];
    pthread_barrier_init(&barrier, NULL, (unsigned)ngpu);
    double t0 = now_s();
    for (int g = 0; g < ngpu; g++) pthread_create(&th[g], NULL, per_gpu, (void *)(intptr_t)g);
    for (int g = 0; g < ngpu; g++) pthread_join(th[g], NULL);
    double t1 = now_s();
    pthread_barrier_destroy(&barrier);
    for (int g = 0; g < ngpu; g++) {
        CHECK(thread_bad[g] == 0, "GPU %d's thread: %d calls failed (%s)", g, thread_bad[g], blkrt_last_error());
        expect_sum(g, tb[g].out, g, "one thread per GPU");
    }
    printf("  one thread per GPU: %d x %d launches in %.1f ms\n", ngpu, LAUNCHES, (t1 - t0) * 1e3);
    /* one thread, round-robin */
    for (int g = 0; g < ngpu; g++) poison(g, tb[g].out);
    t0 = now_s();
    for (int i = 0; i < LAUNCHES; i++)
        for (int g = 0; g < ngpu; g++) OK(vadd(g, tb[g].x, tb[g].y, tb[g].out, NULL));
    for (int g = 0; g < ngpu; g++) OK(blkrt_device_synchronize(dev[g]));
    t1 = now_s();
    for (int g = 0; g < ngpu; g++) expect_sum(g, tb[g].out, g, "one thread, round-robin");
    printf("  one thread, round-robin: %d x %d launches in %.1f ms\n", ngpu, LAUNCHES, (t1 - t0) * 1e3);
    for (int g = 0; g < ngpu; g++) free_bufs(g, tb[g]);
}

/* ---- peers ---- */
static double copy_gbs(int to, blkrt_ptr dst, blkrt_ptr src, size_t bytes) {
    blkrt_stream *s = NULL;
    blkrt_event *e0 = NULL, *e1 = NULL;
    float ms = 0;
    OK(blkrt_stream_create(dev[to], &s));
    OK(blkrt_event_create(dev[to], &e0));
    OK(blkrt_event_create(dev[to], &e1));
    OK(blkrt_memcpy_peer_async(dev[to], dst, dev[0], src, bytes, s)); /* warm-up */
    OK(blkrt_event_record(e0, s));
    for (int r = 0; r < 5; r++) OK(blkrt_memcpy_peer_async(dev[to], dst, dev[0], src, bytes, s));
    OK(blkrt_event_record(e1, s));
    OK(blkrt_event_synchronize(e1));
    OK(blkrt_event_elapsed_ms(e0, e1, &ms));
    OK(blkrt_event_destroy(e0));
    OK(blkrt_event_destroy(e1));
    OK(blkrt_stream_destroy(s));
    return ms > 0 ? 5.0 * (double)bytes / (ms * 1e-3) / 1e9 : 0;
}

static void expect_bytes(int g, blkrt_ptr p, const unsigned char *want, size_t n, const char *what) {
    unsigned char *h = malloc(n);
    if (!h) return;
    OK(blkrt_memcpy_dtoh(dev[g], h, p, n));
    CHECK(memcmp(h, want, n) == 0, "%s: the bytes on GPU %d differ", what, g);
    free(h);
}

static void test_peers(void) {
    size_t bytes = sizeof(float) * N;
    unsigned char *pattern = malloc(bytes);
    if (!pattern) return;
    for (size_t i = 0; i < bytes; i++) pattern[i] = (unsigned char)(i * 131 + 7);
    bufs b0 = make_bufs(0);
    OK(blkrt_memcpy_htod(dev[0], b0.out, pattern, bytes));
    for (int g = 1; g < ngpu; g++) {
        int can = 0, back = 0;
        OK(blkrt_device_can_access_peer(dev[g], dev[0], &can));
        OK(blkrt_device_can_access_peer(dev[0], dev[g], &back));
        blkrt_ptr dst = 0;
        OK(blkrt_malloc(dev[g], bytes, &dst));
        OK(blkrt_memset(dev[g], dst, 0, bytes));
        OK(blkrt_memcpy_peer(dev[g], dst, dev[0], b0.out, bytes));
        expect_bytes(g, dst, pattern, bytes, "peer copy before enabling");
        double before = copy_gbs(g, dst, b0.out, bytes);
        if (!can || !back) { /* the direction without a path must say so */
            blkrt_status st = blkrt_device_enable_peer_access(can ? dev[0] : dev[g], can ? dev[g] : dev[0]);
            CHECK(st == BLKRT_ERR_NO_PEER_ACCESS, "GPU %d <-> 0 without a path: %s", g, blkrt_status_name(st));
            printf("  GPU 0 -> GPU %d: no peer path (%s); staged copy %.1f GB/s\n", g, blkrt_last_error(), before);
            OK(blkrt_free(dev[g], dst));
            continue;
        }
        OK(blkrt_device_enable_peer_access(dev[g], dev[0]));
        OK(blkrt_device_enable_peer_access(dev[0], dev[g]));
        OK(blkrt_device_enable_peer_access(dev[g], dev[0])); /* again: a no-op */
        OK(blkrt_memset(dev[g], dst, 0, bytes));
        OK(blkrt_memcpy_peer(dev[g], dst, dev[0], b0.out, bytes));
        expect_bytes(g, dst, pattern, bytes, "peer copy after enabling");
        double after = copy_gbs(g, dst, b0.out, bytes);
        printf("  GPU 0 -> GPU %d: peer copy %.1f GB/s before enabling peer access, %.1f GB/s after\n", g, before,
               after);

        /* a kernel on GPU g reading x from GPU 0's memory directly */
        OK(blkrt_free(dev[g], dst));
        bufs bg = make_bufs(g);
        poison(g, bg.out);
        OK(vadd(g, b0.x, bg.y, bg.out, NULL));
        OK(blkrt_device_synchronize(dev[g]));
        expect_sum(g, bg.out, 0, "kernel on GPU g reading GPU 0's memory");
        free_bufs(g, bg);
    }
    free_bufs(0, b0);
    free(pattern);
}

int main(int argc, char **argv) {
    const char *path = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--dry-run") == 0) dry_run = 1;
        else path = argv[i];
    }
    if (!path) {
        fprintf(stderr, "usage: test_gpu_multi [--dry-run] vadd.ptx\n");
        return 2;
    }
    blkrt_status st = blkrt_device_count(&ngpu);
    if (st != BLKRT_OK || ngpu < 2) {
        printf("skipped: %s\n", st ? blkrt_last_error() : "fewer than two GPUs (this test needs two)");
        return 77;
    }
    if (ngpu > MAX_GPUS) ngpu = MAX_GPUS;
    size_t len = 0;
    char *ptx = test_read_file(path, &len);
    if (!ptx) {
        fprintf(stderr, "test_gpu_multi: cannot read %s\n", path);
        return 1;
    }
    for (int g = 0; g < ngpu; g++) {
        blkrt_device_info info;
        OK(blkrt_device_open(g, &dev[g]));
        if (!dev[g]) return 1;
        OK(blkrt_device_get_info(dev[g], &info));
        printf("GPU %d: %s (%s, %d SMs)\n", g, info.name, info.arch, info.sm_count);
    }
    OK(blkrt_module_load_ptx(dev[0], ptx, len, &mod[0]));
    free(ptx);
    if (!mod[0]) return 1;
    for (int g = 1; g < ngpu; g++) {
        blkrt_module *again = NULL;
        OK(blkrt_module_for_device(mod[0], dev[g], &mod[g]));
        OK(blkrt_module_for_device(mod[0], dev[g], &again));
        CHECK(mod[g] && again == mod[g] && mod[g] != mod[0], "GPU %d: one copy of the module", g);
    }
    if (failures) return 1;
    printf("per-device modules, concurrent launches:\n");
    test_launches();
    printf("peers:\n");
    test_peers();
    OK(blkrt_module_unload(mod[0])); /* and its copies */
    for (int g = 0; g < ngpu; g++) OK(blkrt_device_close(dev[g]));
    printf("test_gpu_multi: %s (%d GPUs%s)\n", failures ? "FAILED" : "ok", ngpu, dry_run ? ", dry run" : "");
    return failures != 0;
}

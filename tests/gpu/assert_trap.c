/* assert_trap — what a GPU does with a kernel that stops: a failed
 * device_assert (a trap) and a kernel that never ends, through libblkrt
 * (docs/runtime.md, "Failures on the GPU"). Each mode runs in a process of
 * its own, because each leaves the CUDA context unusable:
 *
 *   gpu_assert_trap assert PTX   `below` passes once, then fails its
 *       device_assert: the synchronisation must be BLKRT_ERR_LAUNCH_FAILED
 *       with CUDA_ERROR_ASSERT and kernel 'below' named; later calls on the
 *       context fail too (printed: the context is lost). The driver prints
 *       "... Assertion `x must be below the limit` failed." on stdout.
 *   gpu_assert_trap hang PTX     `wait_flag` never ends: a synchronisation
 *       with a 2 s deadline must be BLKRT_ERR_TIMEOUT naming 'wait_flag',
 *       after ~2 s; then the process exits with the kernel still running.
 *
 * PTX: tests/gpu/assert_trap.blk compiled by blkc for sm_80 at build time.
 * With the fake driver (BLKRT_CUDA_LIBRARY, CTest gpu/assert_trap_fake_*)
 * the trap and the hang are injected (CUDA_ERROR_ASSERT from the query; a
 * query that never completes), so the expectations are checked here too.
 * Exit 0 when everything came as expected, 1 otherwise, 77 without a GPU.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fake_cuda.h"
#include "rt_test.h" /* CHECK, OK */

static fake_api F;
static int fake; /* the fake driver: inject what a GPU would do */

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

static void has(const char *what, const char *text) {
    CHECK(strstr(blkrt_last_error(), text) != NULL, "%s: the message\n  %s\nlacks\n  %s", what, blkrt_last_error(),
          text);
}

static void assert_mode(blkrt_device *d, blkrt_module *m) {
    blkrt_kernel *k;
    OK(blkrt_module_kernel(m, "below", &k));
    enum { N = 1000 };
    int32_t h[N];
    for (int i = 0; i < N; i++) h[i] = i;
    blkrt_ptr x;
    OK(blkrt_malloc(d, sizeof h, &x));
    OK(blkrt_memcpy_htod(d, x, h, sizeof h));
    blkrt_stream *s;
    OK(blkrt_stream_create(d, &s));
    uint32_t grid[3] = {(N + 255) / 256, 1, 1};
    blkrt_arg a[] = {BLKRT_PTR(x), BLKRT_INT(N), BLKRT_INT(5000)};
    OK(blkrt_launch(k, grid, a, 3, s));
    OK(blkrt_stream_synchronize_timeout(d, s, 10000));
    printf("assert: a launch whose assertion holds: ok\n");

    a[2] = BLKRT_INT(700); /* x[i] = i + 1 reaches 700 at i = 699 */
    OK(blkrt_launch(k, grid, a, 3, s));
    if (fake) F.fail_next("cuStreamQuery", 710);
    blkrt_status st = blkrt_stream_synchronize_timeout(d, s, 10000);
    printf("assert: the synchronisation after the failing launch: %s: %s\n", blkrt_status_name(st),
           blkrt_last_error());
    CHECK(st == BLKRT_ERR_LAUNCH_FAILED, "status %s", blkrt_status_name(st));
    has("assert", "cuStreamQuery: CUDA_ERROR_ASSERT (710)");
    has("assert", "the launch not known to have finished: kernel 'below' (grid 4x1x1, 128 threads a block)");

    /* A plain synchronisation (which also makes the driver print the device's
     * "Assertion ... failed." lines) says the same. */
    if (fake) F.fail_next("cuStreamSynchronize", 710);
    st = blkrt_stream_synchronize(s);
    printf("assert: blkrt_stream_synchronize: %s: %s\n", blkrt_status_name(st), blkrt_last_error());
    CHECK(st == BLKRT_ERR_LAUNCH_FAILED, "plain sync: %s", blkrt_status_name(st));
    has("plain sync", "cuStreamSynchronize: CUDA_ERROR_ASSERT (710)");
    has("plain sync", "kernel 'below'");
    fflush(stdout);

    /* The context is lost: later calls report the same error. */
    if (fake) F.fail_next("cuMemcpyDtoH_v2", 710);
    st = blkrt_memcpy_dtoh(d, h, x, sizeof h);
    printf("assert: a copy afterwards: %s: %s\n", blkrt_status_name(st), blkrt_last_error());
    CHECK(st == BLKRT_ERR_LAUNCH_FAILED, "the copy after a trap: %s", blkrt_status_name(st));
    has("copy", "CUDA_ERROR_ASSERT");
    st = blkrt_launch(k, grid, a, 3, s);
    printf("assert: a launch afterwards: %s%s%s\n", blkrt_status_name(st), st ? ": " : "", st ? blkrt_last_error() : "");
    /* what cleanup reports (not checked: the context is gone) */
    printf("assert: cleanup: free %s, stream %s, unload %s", blkrt_status_name(blkrt_free(d, x)),
           blkrt_status_name(blkrt_stream_destroy(s)), blkrt_status_name(blkrt_module_unload(m)));
    printf(", device %s\n", blkrt_status_name(blkrt_device_close(d)));
}

static void hang_mode(blkrt_device *d, blkrt_module *m) {
    blkrt_kernel *k;
    OK(blkrt_module_kernel(m, "wait_flag", &k));
    blkrt_ptr flag;
    OK(blkrt_malloc(d, 4, &flag));
    OK(blkrt_memset(d, flag, 0, 4));
    blkrt_stream *s;
    OK(blkrt_stream_create(d, &s));
    uint32_t grid[3] = {1, 1, 1};
    blkrt_arg a = BLKRT_PTR(flag);
    OK(blkrt_launch(k, grid, &a, 1, s));
    if (fake) F.stall(1);
    double t0 = now_ms();
    blkrt_status st = blkrt_stream_synchronize_timeout(d, s, 2000);
    double took = now_ms() - t0;
    printf("hang: a 2000 ms deadline: %s after %.0f ms: %s\n", blkrt_status_name(st), took, blkrt_last_error());
    CHECK(st == BLKRT_ERR_TIMEOUT, "status %s", blkrt_status_name(st));
    CHECK(took >= 2000 && took < 4000, "took %.0f ms", took);
    has("hang", "the stream has not finished after");
    has("hang", "the launch not known to have finished: kernel 'wait_flag' (grid 1x1x1, 128 threads a block)");
    st = blkrt_device_synchronize_timeout(d, 100);
    printf("hang: the device, 100 ms: %s: %s\n", blkrt_status_name(st), blkrt_last_error());
    CHECK(st == BLKRT_ERR_TIMEOUT, "device status %s", blkrt_status_name(st));
    has("device", "kernel 'wait_flag'");
    if (fake) { /* the fake's "kernel" can be let go: release everything (LSan) */
        F.stall(0);
        OK(blkrt_stream_synchronize(s));
        OK(blkrt_stream_destroy(s));
        OK(blkrt_free(d, flag));
        OK(blkrt_module_unload(m));
        OK(blkrt_device_close(d));
        return;
    }
    printf("hang: exiting with the kernel still running\n");
    /* nothing is freed: every call that waits would wait forever */
}

int main(int argc, char **argv) {
    if (argc != 3 || (strcmp(argv[1], "assert") != 0 && strcmp(argv[1], "hang") != 0)) {
        fprintf(stderr, "usage: gpu_assert_trap assert|hang PTX\n");
        return 2;
    }
    fake = fake_api_load(&F) == 0;
    size_t len;
    char *ptx = test_read_file(argv[2], &len);
    if (!ptx) {
        fprintf(stderr, "cannot read %s\n", argv[2]);
        return 1;
    }
    int n = 0;
    blkrt_status st = blkrt_device_count(&n);
    if (st || n == 0) {
        printf("skipped: no CUDA driver/GPU (%s)\n", st ? blkrt_last_error() : "0 devices");
        free(ptx);
        return 77;
    }
    blkrt_device *d;
    blkrt_module *m = NULL;
    OK(blkrt_device_open(0, &d));
    OK(blkrt_module_load_ptx(d, ptx, len, &m));
    free(ptx);
    if (!m) return 1;
    blkrt_device_info info;
    OK(blkrt_device_get_info(d, &info));
    printf("%s: %s%s\n", argv[1], info.name, fake ? " (the fake driver: trap and hang injected)" : "");
    if (strcmp(argv[1], "assert") == 0) assert_mode(d, m);
    else hang_mode(d, m);
    printf("%s: %s\n", argv[1], failures ? "FAILED" : "as expected");
    fflush(stdout);
    return failures ? 1 : 0;
}

/* test_multi_gpu — several GPUs in one process, against the fake driver with
 * four devices (FAKE_CUDA_DEVICES=4) of which 0-1 and 2-3 are peers
 * (FAKE_CUDA_PEERS=0-1,2-3):
 *   - per-device modules: blkrt_module_for_device loads PTX and cubin
 *     modules once per device, in that device's context; copies launch on
 *     their device, are unloaded with their root and only with it;
 *   - eight threads asking for copies at once: one load per device;
 *   - one thread launching round-robin on every device, and one thread per
 *     device on its own stream: each launch arrives once, on its device,
 *     and no context is left stacked;
 *   - peer access: what the driver reports, enabling (twice is fine), the
 *     can't-reach error naming both GPUs, a device as its own peer;
 *   - peer copies: the bytes arrive with and without peer access, on a
 *     stream of either device; a stream of a third device and addresses of
 *     the wrong device are refused. */
#include <pthread.h>
#include <stdbool.h>

#include "cuda_api.h"
#include "fake_cuda.h"
#include "rt_test.h"

enum { NDEV = 4, THREADS = 8, LAUNCHES = 500 };

static fake_api F;
static blkrt_device *dev[NDEV];

static const char PTX[] = ".version 8.0\n.target sm_80\n" VADD_META("vector_add", "")
    PTX_ENTRY("vector_add", VADD_PARAMS);

/* Launch vector_add of m with n as the marker; NULL stream. */
static blkrt_status launch(blkrt_module *m, int n, blkrt_stream *s) {
    blkrt_kernel *k = NULL;
    blkrt_status st = blkrt_module_kernel(m, "vector_add", &k);
    if (st) return st;
    blkrt_arg a[] = {BLKRT_PTR(0x1000), BLKRT_PTR(0x2000), BLKRT_PTR(0x3000), BLKRT_INT(n)};
    uint32_t grid[3] = {1, 1, 1};
    return blkrt_launch(k, grid, a, 4, s);
}

static int last_device(void) {
    fake_launch l;
    return F.get_launch(F.launch_count() - 1, &l) == 0 ? l.device : -1;
}

static void test_module_copies(void) {
    blkrt_module *m = load_ptx(dev[0], PTX), *c[NDEV] = {0}, *again = NULL;
    if (!m) return;
    F.reset();
    for (int i = 1; i < NDEV; i++) {
        OK(blkrt_module_for_device(m, dev[i], &c[i]));
        CHECK(c[i] && c[i] != m, "device %d: a copy of its own", i);
    }
    CHECK(F.count_calls("cuModuleLoadDataEx") == NDEV - 1, "one load per other device (%d)",
          F.count_calls("cuModuleLoadDataEx"));
    OK(blkrt_module_for_device(m, dev[2], &again));
    CHECK(again == c[2], "the second call returns the kept copy");
    OK(blkrt_module_for_device(c[3], dev[2], &again));
    CHECK(again == c[2], "a copy asks its root");
    OK(blkrt_module_for_device(c[3], dev[0], &again));
    CHECK(again == m, "the root's own device gives the root");
    CHECK(F.count_calls("cuModuleLoadDataEx") == NDEV - 1, "no more loads");
    for (int i = 0; i < NDEV; i++) {
        OK(launch(i ? c[i] : m, 40 + i, NULL));
        CHECK(last_device() == i, "the copy on device %d launched on device %d", i, last_device());
    }
    FAILS(blkrt_module_unload(c[1]), BLKRT_ERR_INVALID_VALUE,
          "this module on GPU 1 is the copy of a module on GPU 0 (blkrt_module_for_device)");
    FAILS(blkrt_device_close(dev[1]), BLKRT_ERR_INVALID_VALUE, "1 module(s)");
    FAILS(blkrt_module_for_device(m, NULL, &again), BLKRT_ERR_INVALID_HANDLE, "not a device handle");
    FAILS(blkrt_module_for_device(NULL, dev[1], &again), BLKRT_ERR_INVALID_HANDLE, "not a module handle");
    OK(blkrt_module_unload(m));
    /* the copies went with the root: every device closes */
    for (int i = 0; i < NDEV; i++) {
        OK(blkrt_device_close(dev[i]));
        OK(blkrt_device_open(i, &dev[i]));
    }

    /* a failing copy load names the device; nothing is kept */
    m = load_ptx(dev[0], PTX);
    F.fail_next("cuModuleLoadDataEx", RT_CUDA_ERROR_OUT_OF_MEMORY);
    FAILS(blkrt_module_for_device(m, dev[3], &again), BLKRT_ERR_OUT_OF_MEMORY,
          "blkrt_module_for_device: loading on GPU 3: cuModuleLoadDataEx");
    CHECK(again == NULL, "no copy after a failure");
    OK(blkrt_module_for_device(m, dev[3], &again));
    OK(launch(again, 7, NULL));
    CHECK(last_device() == 3, "retried copy launches on device 3");
    OK(blkrt_module_unload(m));

    /* cubin images are kept as well, with their blk-meta text */
    static const char body[] = ".version 8.0\n.target sm_80\n" PTX_ENTRY("vector_add", VADD_PARAMS);
    char image[sizeof body + 4];
    memcpy(image, "\177ELF", 4);
    memcpy(image + 4, body, sizeof body);
    blkrt_module *cb = NULL;
    OK(blkrt_module_load_cubin(dev[1], image, sizeof image, VADD_META("vector_add", ""), &cb));
    memset(image, 0, sizeof image); /* the module keeps its own copy */
    OK(blkrt_module_for_device(cb, dev[2], &again));
    OK(launch(again, 8, NULL));
    CHECK(last_device() == 2, "cubin copy launches on device 2");
    OK(blkrt_module_unload(cb));
}

/* ---- eight threads asking for copies at once ---- */
static blkrt_module *shared_root;
static blkrt_module *got[THREADS];
static pthread_barrier_t barrier;

static void *ask(void *arg) {
    int t = (int)(intptr_t)arg;
    pthread_barrier_wait(&barrier);
    if (blkrt_module_for_device(shared_root, dev[t % NDEV], &got[t]) != BLKRT_OK) got[t] = NULL;
    return NULL;
}

static void test_concurrent_copies(void) {
    shared_root = load_ptx(dev[1], PTX);
    if (!shared_root) return;
    F.reset();
    pthread_t th[THREADS];
    pthread_barrier_init(&barrier, NULL, THREADS);
    for (int t = 0; t < THREADS; t++) pthread_create(&th[t], NULL, ask, (void *)(intptr_t)t);
    for (int t = 0; t < THREADS; t++) pthread_join(th[t], NULL);
    pthread_barrier_destroy(&barrier);
    CHECK(F.count_calls("cuModuleLoadDataEx") == NDEV - 1, "%d loads for %d other devices",
          F.count_calls("cuModuleLoadDataEx"), NDEV - 1);
    for (int t = 0; t < THREADS; t++) {
        CHECK(got[t] != NULL, "thread %d got no module", t);
        CHECK(got[t] == got[t % NDEV], "threads of device %d got one copy", t % NDEV);
    }
    CHECK(got[1] == shared_root, "device 1 is the root's own");
    OK(blkrt_module_unload(shared_root));
}

/* ---- launches: one thread on every device, one thread per device ---- */
static blkrt_module *mods[NDEV];
static blkrt_stream *streams[NDEV];
static int thread_bad[NDEV];

static void *per_device(void *arg) {
    int d = (int)(intptr_t)arg, bad = 0;
    pthread_barrier_wait(&barrier);
    for (int i = 0; i < LAUNCHES; i++) bad += launch(mods[d], d * 100000 + i, streams[d]) != BLKRT_OK;
    bad += blkrt_stream_synchronize(streams[d]) != BLKRT_OK;
    bad += F.ctx_depth() > 1;
    thread_bad[d] = bad;
    return NULL;
}

/* Every launch of vector_add since reset arrived once, on device marker/100000. */
static void check_launches(int per_device_count, bool on_streams) {
    int n = F.launch_count(), wrong = 0;
    static unsigned char seen[NDEV][LAUNCHES];
    memset(seen, 0, sizeof seen);
    CHECK(n == NDEV * per_device_count, "%d launches recorded, expected %d", n, NDEV * per_device_count);
    for (int i = 0; i < n; i++) {
        fake_launch l;
        int32_t v = -1;
        if (F.get_launch(i, &l) == 0) memcpy(&v, l.param[3], 4);
        int d = v / 100000, j = v % 100000;
        if (v < 0 || d >= NDEV || j >= per_device_count || l.device != d || (on_streams && l.stream == NULL) ||
            seen[d][j]++)
            wrong++;
    }
    CHECK(wrong == 0, "%d launches missing, duplicated or on the wrong device", wrong);
}

static void test_launches(void) {
    blkrt_module *root = load_ptx(dev[0], PTX);
    if (!root) return;
    for (int d = 0; d < NDEV; d++) OK(blkrt_module_for_device(root, dev[d], &mods[d]));

    /* one thread, every device in turn: the caller's context is untouched */
    F.reset();
    for (int i = 0; i < LAUNCHES; i++)
        for (int d = 0; d < NDEV; d++) OK(launch(mods[d], d * 100000 + i, NULL));
    check_launches(LAUNCHES, false);
    CHECK(F.ctx_depth() <= 1, "context stack depth %d after switching devices", F.ctx_depth());
    /* a kernel of device 0 on a stream of device 2 is refused before the driver */
    OK(blkrt_stream_create(dev[2], &streams[2]));
    FAILS(launch(mods[0], 1, streams[2]), BLKRT_ERR_INVALID_VALUE, "the stream belongs to another device");
    OK(blkrt_stream_destroy(streams[2]));

    /* one thread per device, each on its own stream */
    for (int d = 0; d < NDEV; d++) OK(blkrt_stream_create(dev[d], &streams[d]));
    F.reset();
    pthread_t th[NDEV];
    pthread_barrier_init(&barrier, NULL, NDEV);
    for (int d = 0; d < NDEV; d++) pthread_create(&th[d], NULL, per_device, (void *)(intptr_t)d);
    for (int d = 0; d < NDEV; d++) pthread_join(th[d], NULL);
    pthread_barrier_destroy(&barrier);
    for (int d = 0; d < NDEV; d++) CHECK(thread_bad[d] == 0, "device %d thread: %d failed checks", d, thread_bad[d]);
    check_launches(LAUNCHES, true);
    for (int d = 0; d < NDEV; d++) OK(blkrt_stream_destroy(streams[d]));
    OK(blkrt_module_unload(root));
}

/* ---- peers ---- */
static void test_peer_access(void) {
    int can = -1;
    OK(blkrt_device_can_access_peer(dev[0], dev[1], &can));
    CHECK(can == 1, "0 -> 1: can %d", can);
    OK(blkrt_device_can_access_peer(dev[0], dev[2], &can));
    CHECK(can == 0, "0 -> 2: can %d", can);

    OK(blkrt_device_enable_peer_access(dev[0], dev[1]));
    CHECK(F.peer_enabled(0, 1) && !F.peer_enabled(1, 0), "enabled one direction");
    OK(blkrt_device_enable_peer_access(dev[0], dev[1])); /* again: fine */
    OK(blkrt_device_enable_peer_access(dev[1], dev[0]));
    CHECK(F.peer_enabled(1, 0), "and the other");
    CHECK(F.ctx_depth() <= 1, "no context left stacked");

    F.reset();
    FAILS_EXACTLY(blkrt_device_enable_peer_access(dev[0], dev[2]), BLKRT_ERR_NO_PEER_ACCESS,
                  "blkrt_device_enable_peer_access: GPU 0 (Fake H200) cannot access the memory of GPU 2 (Fake A100) "
                  "directly: the driver reports no peer-to-peer path (NVLink or PCIe) between them; copies still "
                  "work (blkrt_memcpy_peer stages them through host memory)");
    CHECK(F.count_calls("cuCtxEnablePeerAccess") == 0, "refused before the driver's enable");
    CHECK(!F.peer_enabled(0, 2), "nothing enabled");
    /* the driver's own refusals map to the same status */
    F.fail_next("cuCtxEnablePeerAccess", RT_CUDA_ERROR_TOO_MANY_PEERS);
    FAILS(blkrt_device_enable_peer_access(dev[2], dev[3]), BLKRT_ERR_NO_PEER_ACCESS,
          "cuCtxEnablePeerAccess (GPU 2 -> GPU 3): CUDA_ERROR_TOO_MANY_PEERS");

    blkrt_device *again = NULL;
    OK(blkrt_device_open(0, &again));
    FAILS(blkrt_device_enable_peer_access(dev[0], again), BLKRT_ERR_INVALID_VALUE,
          "both handles are GPU 0: a device is not its own peer");
    OK(blkrt_device_close(again));
    FAILS(blkrt_device_can_access_peer(dev[0], NULL, &can), BLKRT_ERR_INVALID_HANDLE, "not a device handle");
    FAILS(blkrt_device_can_access_peer(dev[0], dev[1], NULL), BLKRT_ERR_INVALID_VALUE, "can is NULL");
}

static void test_peer_copies(void) {
    enum { N = 4096 };
    static unsigned char host[N], back[N];
    for (int i = 0; i < N; i++) host[i] = (unsigned char)(i * 7 + 3);
    blkrt_ptr a = 0, b = 0, c = 0;
    OK(blkrt_malloc(dev[0], N, &a));
    OK(blkrt_malloc(dev[2], N, &b)); /* no peer path between 0 and 2 */
    OK(blkrt_malloc(dev[1], N, &c)); /* peers with 0, access enabled above */
    OK(blkrt_memcpy_htod(dev[0], a, host, N));

    OK(blkrt_memcpy_peer(dev[2], b, dev[0], a, N));
    OK(blkrt_memcpy_dtoh(dev[2], back, b, N));
    CHECK(memcmp(host, back, N) == 0, "0 -> 2 without a peer path: the bytes differ");

    blkrt_stream *s0 = NULL, *s1 = NULL, *s2 = NULL;
    OK(blkrt_stream_create(dev[0], &s0));
    OK(blkrt_stream_create(dev[1], &s1));
    OK(blkrt_stream_create(dev[2], &s2));
    OK(blkrt_memset(dev[1], c, 0, N));
    OK(blkrt_memcpy_peer_async(dev[1], c, dev[0], a, N, s1)); /* destination's stream */
    OK(blkrt_stream_synchronize(s1));
    memset(back, 0, N);
    OK(blkrt_memcpy_dtoh(dev[1], back, c, N));
    CHECK(memcmp(host, back, N) == 0, "0 -> 1 on device 1's stream: the bytes differ");
    OK(blkrt_memset(dev[0], a, 0, N));
    OK(blkrt_memcpy_peer_async(dev[0], a, dev[2], b, N, s2)); /* source's stream, back again */
    OK(blkrt_memcpy_peer_async(dev[0], a, dev[2], b, N, NULL));
    OK(blkrt_stream_synchronize(s2));
    memset(back, 0, N);
    OK(blkrt_memcpy_dtoh(dev[0], back, a, N));
    CHECK(memcmp(host, back, N) == 0, "2 -> 0 on device 2's stream: the bytes differ");
    CHECK(F.ctx_depth() <= 1, "no context left stacked");

    FAILS(blkrt_memcpy_peer_async(dev[2], b, dev[0], a, N, s1), BLKRT_ERR_INVALID_VALUE,
          "the stream belongs to neither GPU 0 nor GPU 2");
    /* the driver checks each address against its device */
    FAILS(blkrt_memcpy_peer(dev[2], a, dev[0], b, N), BLKRT_ERR_DRIVER,
          "cuMemcpyPeer (4096 bytes, GPU 0 -> GPU 2): CUDA_ERROR_INVALID_VALUE");
    FAILS(blkrt_memcpy_peer(dev[2], 0, dev[0], a, N), BLKRT_ERR_INVALID_VALUE, "the destination address is 0");
    OK(blkrt_memcpy_peer(dev[2], b, dev[0], a, 0)); /* nothing to copy */
    FAILS(blkrt_memcpy_peer(NULL, b, dev[0], a, N), BLKRT_ERR_INVALID_HANDLE, "blkrt_memcpy_peer: not a device handle");

    OK(blkrt_stream_destroy(s0));
    OK(blkrt_stream_destroy(s1));
    OK(blkrt_stream_destroy(s2));
    OK(blkrt_free(dev[0], a));
    OK(blkrt_free(dev[2], b));
    OK(blkrt_free(dev[1], c));
}

int main(void) {
    if (fake_api_load(&F) != 0) return 1;
    int n = 0;
    OK(blkrt_device_count(&n));
    if (n != NDEV) {
        fprintf(stderr, "test_multi_gpu: needs FAKE_CUDA_DEVICES=%d (the driver reports %d)\n", NDEV, n);
        return 1;
    }
    for (int i = 0; i < NDEV; i++) OK(blkrt_device_open(i, &dev[i]));
    test_module_copies();
    test_concurrent_copies();
    test_launches();
    test_peer_access();
    test_peer_copies();
    for (int i = 0; i < NDEV; i++) OK(blkrt_device_close(dev[i]));
    return test_finish("test_multi_gpu");
}

/* test_threads — libblkrt from 8 threads at once against the fake driver:
 * launches on per-thread streams and two devices (every launch arrives once,
 * with its own arguments), concurrent module loads, the lazily made raw
 * kernel handle, the once-only shared-memory opt-in under a race, and error
 * messages that stay per thread. Run under the sanitizer build as well. */
#include <pthread.h>

#include "fake_cuda.h"
#include "rt_test.h"

enum { THREADS = 8, LAUNCHES = 1000 };

static fake_api F;
static blkrt_device *dev[2];
static blkrt_module *mod[2];
static pthread_barrier_t barrier;
static blkrt_stream *streams[THREADS];
static blkrt_kernel *raw_handles[THREADS];
static int thread_failures[THREADS];

static const char PTX[] = ".version 8.0\n.target sm_90a\n" VADD_META("vector_add", "")
    PTX_ENTRY("vector_add", VADD_PARAMS) PTX_ENTRY("raw_kernel", ".param .u64 p");

static void *worker(void *arg) {
    int t = (int)(intptr_t)arg;
    int dv = t % 2;
    int bad = 0;
#define TCHECK(c)          \
    do {                   \
        if (!(c)) bad++;   \
    } while (0)
    blkrt_kernel *k = NULL;
    TCHECK(blkrt_module_kernel(mod[dv], "vector_add", &k) == BLKRT_OK);
    TCHECK(blkrt_stream_create(dev[dv], &streams[t]) == BLKRT_OK);
    pthread_barrier_wait(&barrier);
    for (int i = 0; i < LAUNCHES && k; i++) {
        blkrt_arg a[] = {BLKRT_PTR(0x1000), BLKRT_PTR(0x2000), BLKRT_PTR(0x3000), BLKRT_INT(t * 100000 + i)};
        uint32_t grid[3] = {(uint32_t)(t + 1), 1, 1};
        TCHECK(blkrt_launch(k, grid, a, 4, streams[t]) == BLKRT_OK);
    }
    /* The raw handle is made once, whoever asks first. */
    TCHECK(blkrt_module_kernel(mod[0], "raw_kernel", &raw_handles[t]) == BLKRT_OK);
    /* Everyone races to the first launch needing 64 KB: one opt-in. */
    pthread_barrier_wait(&barrier);
    uint64_t p = 0;
    void *params[] = {&p};
    uint32_t grid[3] = {1, 1, 1}, block[3] = {32, 1, 1};
    TCHECK(blkrt_launch_raw(raw_handles[t], grid, block, 65536, params, NULL) == BLKRT_OK);
    /* Loading modules concurrently. */
    blkrt_module *m = NULL;
    TCHECK(blkrt_module_load_ptx(dev[dv], PTX, sizeof PTX, &m) == BLKRT_OK);
    TCHECK(m && blkrt_module_unload(m) == BLKRT_OK);
    /* Error messages are per thread. */
    char want[64];
    snprintf(want, sizeof want, "%lld is out of range", 5000000000LL + t);
    blkrt_arg a[] = {BLKRT_PTR(0), BLKRT_PTR(0), BLKRT_PTR(0), BLKRT_INT(5000000000LL + t)};
    pthread_barrier_wait(&barrier);
    TCHECK(k && blkrt_launch(k, grid, a, 4, NULL) == BLKRT_ERR_INVALID_LAUNCH);
    pthread_barrier_wait(&barrier);
    TCHECK(strstr(blkrt_last_error(), want) != NULL);
    TCHECK(blkrt_stream_synchronize(streams[t]) == BLKRT_OK);
    TCHECK(F.ctx_depth() <= 1); /* the primary context stays bound, never stacked */
    thread_failures[t] = bad;
    return NULL;
}

int main(void) {
    if (fake_api_load(&F) != 0) return 1;
    for (int i = 0; i < 2; i++) {
        OK(blkrt_device_open(i, &dev[i]));
        mod[i] = load_ptx(dev[i], PTX);
    }
    if (!mod[0] || !mod[1]) return test_finish("test_threads");
    F.reset();
    pthread_barrier_init(&barrier, NULL, THREADS);
    pthread_t th[THREADS];
    for (int t = 0; t < THREADS; t++) pthread_create(&th[t], NULL, worker, (void *)(intptr_t)t);
    for (int t = 0; t < THREADS; t++) pthread_join(th[t], NULL);
    for (int t = 0; t < THREADS; t++) CHECK(thread_failures[t] == 0, "thread %d: %d failed checks", t, thread_failures[t]);

    /* Every launch arrived exactly once, on its thread's stream and device. */
    int n = F.launch_count();
    CHECK(n == THREADS * LAUNCHES + THREADS, "%d launches recorded", n);
    static unsigned char seen[THREADS][LAUNCHES];
    int wrong = 0;
    for (int i = 0; i < n; i++) {
        fake_launch l;
        if (F.get_launch(i, &l) != 0) {
            wrong++;
            continue;
        }
        if (strcmp(l.entry, "vector_add") != 0) continue;
        int32_t v;
        memcpy(&v, l.param[3], 4);
        int t = v / 100000, j = v % 100000;
        if (t < 0 || t >= THREADS || j >= LAUNCHES || l.stream == NULL || l.device != t % 2 ||
            l.grid[0] != (unsigned)(t + 1) || seen[t][j]++)
            wrong++;
    }
    for (int t = 0; t < THREADS; t++)
        for (int j = 0; j < LAUNCHES; j++) wrong += seen[t][j] != 1;
    CHECK(wrong == 0, "%d launches missing, duplicated or mixed up", wrong);
    for (int t = 1; t < THREADS; t++) CHECK(raw_handles[t] == raw_handles[0], "one raw handle for all threads");
    CHECK(F.attr_sets("raw_kernel") == 1, "one opt-in under the race (%d)", F.attr_sets("raw_kernel"));

    for (int t = 0; t < THREADS; t++) OK(blkrt_stream_destroy(streams[t]));
    for (int i = 0; i < 2; i++) {
        OK(blkrt_module_unload(mod[i]));
        OK(blkrt_device_close(dev[i]));
    }
    pthread_barrier_destroy(&barrier);
    return test_finish("test_threads");
}

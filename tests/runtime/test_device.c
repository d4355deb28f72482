/* test_device — driver loading, devices and memory against the fake driver:
 * two devices with different properties in one process, primary contexts
 * made current around each call and the caller's context restored, memory
 * round trips (sync and async), allocation failures, closing rules.
 * Registered twice: with cuGetProcAddress and with plain dlsym
 * (FAKE_CUDA_NO_GETPROC=1). */
#include "cuda_api.h"
#include "fake_cuda.h"
#include "rt_test.h"

static fake_api F;

static void devices(void) {
    int n = -1;
    OK(blkrt_device_count(&n));
    CHECK(n == 2, "2 fake devices, got %d", n);
    const char *nogp = getenv("FAKE_CUDA_NO_GETPROC");
    if (nogp && *nogp == '1') CHECK(F.proc_address_calls() > 0, "cuGetProcAddress was tried first");
    else CHECK(F.proc_address_calls() >= 40, "entry points came from cuGetProcAddress (%d)", F.proc_address_calls());

    blkrt_device *d0, *d1, *bad = (blkrt_device *)1;
    OK(blkrt_device_open(0, &d0));
    OK(blkrt_device_open(1, &d1));
    blkrt_device_info i0, i1;
    OK(blkrt_device_get_info(d0, &i0));
    OK(blkrt_device_get_info(d1, &i1));
    CHECK(i0.kind == BLKRT_KIND_GPU && i0.ordinal == 0, "kind/ordinal");
    CHECK(strcmp(i0.name, "Fake H200") == 0 && i0.sm == 90 && strcmp(i0.arch, "sm_90a") == 0, "device 0: %s sm %d %s",
          i0.name, i0.sm, i0.arch);
    CHECK(i0.sm_count == 132 && i0.max_threads_per_block == 1024 && i0.warp_size == 32, "device 0 limits");
    CHECK(i0.max_grid[0] == 2147483647u && i0.max_grid[1] == 65535 && i0.max_grid[2] == 65535, "grid limits");
    CHECK(i0.max_shared_per_block == 49152 && i0.max_shared_optin == 232448, "shared limits");
    CHECK(i0.total_memory == (size_t)1 << 32 && i0.driver_version == 13000, "memory, driver version");
    CHECK(strcmp(i1.name, "Fake A100") == 0 && i1.sm == 80 && strcmp(i1.arch, "sm_80") == 0 &&
              i1.max_shared_optin == 166912 && i1.sm_count == 108,
          "device 1: %s sm %d %s", i1.name, i1.sm, i1.arch);

    FAILS_EXACTLY(blkrt_device_open(2, &bad), BLKRT_ERR_NO_DEVICE, "no GPU with ordinal 2 (the driver reports 2)");
    CHECK(bad == NULL, "out cleared on failure");
    FAILS(blkrt_device_open(-7, &bad), BLKRT_ERR_NO_DEVICE, "no GPU with ordinal -7");
    FAILS(blkrt_device_open(0, NULL), BLKRT_ERR_INVALID_VALUE, "out is NULL");
    FAILS(blkrt_device_count(NULL), BLKRT_ERR_INVALID_VALUE, "count is NULL");

    /* A second handle on ordinal 0 shares its primary context. */
    blkrt_device *d0b;
    OK(blkrt_device_open(0, &d0b));
    OK(blkrt_device_close(d0b));
    OK(blkrt_device_close(d0));
    OK(blkrt_device_close(d1));
}

static void memory(void) {
    blkrt_device *d;
    OK(blkrt_device_open(0, &d));
    long before = F.live_allocs();
    enum { N = 1000 };
    float h[N], back[N];
    for (int i = 0; i < N; i++) h[i] = (float)i * 0.25f;
    blkrt_ptr a = 0, b = 0;
    OK(blkrt_malloc(d, sizeof h, &a));
    OK(blkrt_malloc(d, sizeof h, &b));
    CHECK(a && b && a != b, "two allocations");
    CHECK(F.live_allocs() == before + 2, "driver holds 2 more allocations");
    OK(blkrt_memcpy_htod(d, a, h, sizeof h));
    OK(blkrt_memcpy_dtod(d, b, a, sizeof h));
    memset(back, 0, sizeof back);
    OK(blkrt_memcpy_dtoh(d, back, b, sizeof h));
    CHECK(memcmp(h, back, sizeof h) == 0, "htod, dtod, dtoh round trip");
    OK(blkrt_memset(d, b, 0xAB, 16));
    unsigned char bytes[16];
    OK(blkrt_memcpy_dtoh(d, bytes, b, 16));
    CHECK(bytes[0] == 0xAB && bytes[15] == 0xAB, "memset");

    blkrt_stream *s;
    OK(blkrt_stream_create(d, &s));
    OK(blkrt_memset_async(d, a, 0, sizeof h, s));
    OK(blkrt_memcpy_htod_async(d, b, h, sizeof h, NULL));
    OK(blkrt_memcpy_dtod_async(d, a, b, sizeof h, s));
    memset(back, 0, sizeof back);
    OK(blkrt_memcpy_dtoh_async(d, back, a, sizeof h, s));
    OK(blkrt_stream_synchronize(s));
    CHECK(memcmp(h, back, sizeof h) == 0, "async round trip");
    CHECK(F.count_calls("cuMemcpyDtoHAsync_v2") == 1 && F.count_calls("cuMemsetD8Async") == 1, "async entry points used");
    OK(blkrt_memcpy_htod(d, a, h, 0)); /* zero bytes: nothing to do */

    /* Errors: reported with the driver's code and the call. */
    blkrt_ptr big = 7;
    FAILS_EXACTLY(blkrt_malloc(d, 0, &big), BLKRT_ERR_INVALID_VALUE, "blkrt_malloc: size is 0");
    big = 7;
    FAILS_EXACTLY(blkrt_malloc(d, (size_t)1 << 40, &big), BLKRT_ERR_OUT_OF_MEMORY,
                  "blkrt_malloc: out of device memory allocating 1099511627776 bytes on GPU 0");
    CHECK(big == 0, "out cleared");
    F.fail_next("cuMemAlloc_v2", RT_CUDA_ERROR_OUT_OF_MEMORY);
    FAILS(blkrt_malloc(d, 64, &big), BLKRT_ERR_OUT_OF_MEMORY, "out of device memory");
    FAILS_EXACTLY(blkrt_memcpy_htod(d, b + sizeof h - 4, h, 8), BLKRT_ERR_DRIVER,
                  "cuMemcpyHtoD: CUDA_ERROR_INVALID_VALUE (1): invalid argument");
    FAILS(blkrt_memcpy_htod(d, b, NULL, 8), BLKRT_ERR_INVALID_VALUE, "blkrt_memcpy_htod: host pointer is NULL");
    FAILS(blkrt_free(d, 12345), BLKRT_ERR_DRIVER, "cuMemFree: CUDA_ERROR_INVALID_VALUE");
    F.fail_next("cuMemcpyDtoH_v2", RT_CUDA_ERROR_LAUNCH_FAILED);
    FAILS(blkrt_memcpy_dtoh(d, back, a, 4), BLKRT_ERR_LAUNCH_FAILED, "cuMemcpyDtoH: CUDA_ERROR_LAUNCH_FAILED (719)");

    /* A stream works only with its own device. */
    blkrt_device *d1;
    OK(blkrt_device_open(1, &d1));
    FAILS(blkrt_memcpy_htod_async(d1, a, h, 4, s), BLKRT_ERR_INVALID_VALUE, "the stream belongs to another device");
    OK(blkrt_device_close(d1));

    /* A device with live children does not close. */
    FAILS(blkrt_device_close(d), BLKRT_ERR_INVALID_VALUE, "still alive");
    OK(blkrt_stream_destroy(s));
    OK(blkrt_free(d, a));
    OK(blkrt_free(d, b));
    OK(blkrt_free(d, 0)); /* like free(NULL) */
    CHECK(F.live_allocs() == before, "all freed");
    OK(blkrt_device_synchronize(d));
    OK(blkrt_device_close(d));
    CHECK(F.ctx_depth() == 0, "no context left current on this thread");
}

/* An application with another context current keeps it: the runtime pushes
 * its own around each call and pops it after. */
static void foreign_context(void) {
    void *h = dlopen(getenv("BLKRT_CUDA_LIBRARY"), RTLD_NOW);
    CUresult (*retain)(CUcontext *, CUdevice);
    CUresult (*push)(CUcontext);
    CUresult (*pop)(CUcontext *);
    CUresult (*get)(CUcontext *);
    *(void **)&retain = dlsym(h, "cuDevicePrimaryCtxRetain");
    *(void **)&push = dlsym(h, "cuCtxPushCurrent_v2");
    *(void **)&pop = dlsym(h, "cuCtxPopCurrent_v2");
    *(void **)&get = dlsym(h, "cuCtxGetCurrent");
    CUcontext app = NULL, cur = NULL;
    CHECK(retain(&app, 1) == 0 && push(app) == 0, "app makes device 1 current");
    blkrt_device *d;
    OK(blkrt_device_open(0, &d));
    blkrt_ptr p;
    OK(blkrt_malloc(d, 256, &p));
    OK(blkrt_memset(d, p, 1, 256));
    OK(blkrt_free(d, p));
    get(&cur);
    CHECK(cur == app && F.ctx_depth() == 1, "the app's context is current again (depth %d)", F.ctx_depth());
    OK(blkrt_device_close(d));
    pop(&cur);
}

int main(void) {
    if (fake_api_load(&F) != 0) {
        fprintf(stderr, "cannot load the fake driver (BLKRT_CUDA_LIBRARY=%s)\n", getenv("BLKRT_CUDA_LIBRARY"));
        return 1;
    }
    devices();
    memory();
    foreign_context();
    return test_finish("test_device");
}

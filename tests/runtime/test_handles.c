/* test_handles — NULL, garbage and wrong-kind handles given to every API
 * function come back as BLKRT_ERR_INVALID_HANDLE with a message naming the
 * function, never a crash; status names; the per-thread message. */
#include <pthread.h>

#include "fake_cuda.h"
#include "rt_test.h"

/* Every function with handle h of whatever type (as void *). */
static void all_calls(void *h, const char *what) {
    blkrt_device *d = h;
    blkrt_module *m = h;
    blkrt_kernel *k = h;
    blkrt_stream *s = h;
    blkrt_event *e = h;
    blkrt_graph *g = h;
    blkrt_ptr p = 0;
    blkrt_device_info di;
    blkrt_kernel_info ki;
    blkrt_module *mo;
    blkrt_kernel *ko;
    blkrt_stream *so;
    blkrt_event *eo;
    blkrt_graph *go;
    const char *str;
    int64_t iv;
    double dv;
    float ms;
    char buf[16];
    uint32_t grid[3] = {1, 1, 1}, block[3] = {32, 1, 1};
    struct {
        blkrt_status s;
        const char *fn;
    } r[] = {
        {blkrt_device_close(d), "blkrt_device_close"},
        {blkrt_device_get_info(d, &di), "blkrt_device_get_info"},
        {blkrt_device_synchronize(d), "blkrt_device_synchronize"},
        {blkrt_device_synchronize_timeout(d, 1), "blkrt_device_synchronize_timeout"},
        {blkrt_device_set_step_limit(d, 1), "blkrt_device_set_step_limit"},
        {blkrt_malloc(d, 16, &p), "blkrt_malloc"},
        {blkrt_free(d, 16), "blkrt_free"},
        {blkrt_memcpy_htod(d, 16, buf, 4), "blkrt_memcpy_htod"},
        {blkrt_memcpy_dtoh(d, buf, 16, 4), "blkrt_memcpy_dtoh"},
        {blkrt_memcpy_dtod(d, 16, 32, 4), "blkrt_memcpy_dtod"},
        {blkrt_memset(d, 16, 0, 4), "blkrt_memset"},
        {blkrt_memcpy_htod_async(d, 16, buf, 4, NULL), "blkrt_memcpy_htod_async"},
        {blkrt_memcpy_dtoh_async(d, buf, 16, 4, NULL), "blkrt_memcpy_dtoh_async"},
        {blkrt_memcpy_dtod_async(d, 16, 32, 4, NULL), "blkrt_memcpy_dtod_async"},
        {blkrt_memset_async(d, 16, 0, 4, NULL), "blkrt_memset_async"},
        {blkrt_stream_create(d, &so), "blkrt_stream_create"},
        {blkrt_stream_destroy(s), "blkrt_stream_destroy"},
        {blkrt_stream_synchronize(s), "blkrt_stream_synchronize"},
        {blkrt_stream_synchronize_timeout(d, s, 1), "blkrt_stream_synchronize_timeout"},
        {blkrt_event_create(d, &eo), "blkrt_event_create"},
        {blkrt_event_destroy(e), "blkrt_event_destroy"},
        {blkrt_event_record(e, NULL), "blkrt_event_record"},
        {blkrt_event_synchronize(e), "blkrt_event_synchronize"},
        {blkrt_event_elapsed_ms(e, e, &ms), "blkrt_event_elapsed_ms"},
        {blkrt_graph_begin_capture(s), "blkrt_graph_begin_capture"},
        {blkrt_graph_end_capture(s, &go), "blkrt_graph_end_capture"},
        {blkrt_graph_launch(g, NULL), "blkrt_graph_launch"},
        {blkrt_graph_destroy(g), "blkrt_graph_destroy"},
        {blkrt_module_load_ptx(d, ".version 8.0\n", 13, &mo), "blkrt_module_load_ptx"},
        {blkrt_module_load_cubin(d, "\177ELF", 4, NULL, &mo), "blkrt_module_load_cubin"},
        {blkrt_module_load_source(d, "", 0, NULL, &mo), "blkrt_module_load_source"},
        {blkrt_module_unload(m), "blkrt_module_unload"},
        {blkrt_module_jit_log(m, &str), "blkrt_module_jit_log"},
        {blkrt_module_kernel(m, "k", &ko), "blkrt_module_kernel"},
        {blkrt_kernel_get_info(k, &ki), "blkrt_kernel_get_info"},
        {blkrt_kernel_param(k, 0, &str, &str), "blkrt_kernel_param"},
        {blkrt_kernel_const_int(k, "B", &iv), "blkrt_kernel_const_int"},
        {blkrt_kernel_const_float(k, "B", &dv), "blkrt_kernel_const_float"},
        {blkrt_launch(k, grid, NULL, 0, NULL), "blkrt_launch"},
        {blkrt_launch_raw(k, grid, block, 0, NULL, NULL), "blkrt_launch_raw"},
    };
    for (size_t i = 0; i < sizeof r / sizeof r[0]; i++)
        CHECK(r[i].s == BLKRT_ERR_INVALID_HANDLE, "%s(%s) -> %s", r[i].fn, what, blkrt_status_name(r[i].s));
    /* The message names the function that failed last. */
    blkrt_launch_raw(k, grid, block, 0, NULL, NULL);
    CHECK(strstr(blkrt_last_error(), "blkrt_launch_raw: not a kernel handle"), "message: %s", blkrt_last_error());
}

static void *fresh_thread(void *arg) {
    (void)arg;
    return (void *)(intptr_t)(blkrt_last_error()[0] == 0);
}

int main(void) {
    fake_api F;
    if (fake_api_load(&F) != 0) return 1;
    all_calls(NULL, "NULL");
    /* Garbage: readable memory that is no handle. */
    static uint64_t junk[64];
    for (int i = 0; i < 64; i++) junk[i] = 0x9e3779b97f4a7c15ull * (uint64_t)(i + 1);
    all_calls(junk, "garbage");
    memset(junk, 0, sizeof junk);
    all_calls(junk, "zeros");

    /* Real handles of the wrong kind. */
    blkrt_device *d;
    blkrt_stream *s;
    OK(blkrt_device_open(0, &d));
    OK(blkrt_stream_create(d, &s));
    blkrt_kernel *k;
    FAILS_EXACTLY(blkrt_module_kernel((blkrt_module *)d, "k", &k), BLKRT_ERR_INVALID_HANDLE,
                  "blkrt_module_kernel: not a module handle");
    FAILS_EXACTLY(blkrt_malloc((blkrt_device *)s, 4, &(blkrt_ptr){0}), BLKRT_ERR_INVALID_HANDLE,
                  "blkrt_malloc: not a device handle");
    FAILS(blkrt_event_record((blkrt_event *)s, NULL), BLKRT_ERR_INVALID_HANDLE, "not an event handle");
    FAILS(blkrt_graph_launch((blkrt_graph *)d, s), BLKRT_ERR_INVALID_HANDLE, "not a graph handle");
    blkrt_event *e;
    OK(blkrt_event_create(d, &e));
    FAILS(blkrt_event_record(e, (blkrt_stream *)e), BLKRT_ERR_INVALID_HANDLE, "blkrt_event_record: not a stream handle");
    OK(blkrt_event_destroy(e));
    OK(blkrt_stream_destroy(s));
    OK(blkrt_device_close(d));

    /* Status names and the per-thread message. */
    CHECK(strcmp(blkrt_status_name(BLKRT_OK), "BLKRT_OK") == 0, "OK name");
    CHECK(strcmp(blkrt_status_name(BLKRT_ERR_PTX_VERSION), "BLKRT_ERR_PTX_VERSION") == 0, "PTX_VERSION name");
    CHECK(strcmp(blkrt_status_name(BLKRT_ERR_DRIVER), "BLKRT_ERR_DRIVER") == 0, "DRIVER name");
    CHECK(strcmp(blkrt_status_name(BLKRT_ERR_TIMEOUT), "BLKRT_ERR_TIMEOUT") == 0, "TIMEOUT name");
    CHECK(strcmp(blkrt_status_name((blkrt_status)999), "BLKRT_ERR_?") == 0, "unknown status");
    CHECK(strcmp(blkrt_version(), BLKRT_VERSION) == 0, "version");
    pthread_t t;
    void *fresh = NULL;
    pthread_create(&t, NULL, fresh_thread, NULL);
    pthread_join(t, &fresh);
    CHECK(fresh != NULL, "a new thread starts with an empty message");
    return test_finish("test_handles");
}

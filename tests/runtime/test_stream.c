/* test_stream — streams, events and graphs against the fake driver: the
 * driver call sequences, capture (launches recorded, not run, until the
 * graph is replayed; replays in order), errors during and around capture;
 * synchronisation with a deadline over work that never finishes (the fake's
 * stall) and kernel faults at synchronisation, both naming the launch. */
#include <stdarg.h>

#include "cuda_api.h"
#include "fake_cuda.h"
#include "rt.h"
#include "rt_test.h"

static fake_api F;
static blkrt_device *d;
static blkrt_kernel *k;

static const char PTX[] = ".version 8.0\n.target sm_90a\n" VADD_META("vector_add", "") PTX_ENTRY("vector_add", VADD_PARAMS);

static char logbuf[8192];
static const char *calls(void) {
    F.call_log(logbuf, sizeof logbuf);
    return logbuf;
}

static blkrt_status launch_n(int n, blkrt_stream *s) {
    blkrt_arg a[] = {BLKRT_PTR(0x1000), BLKRT_PTR(0x2000), BLKRT_PTR(0x3000), BLKRT_INT(n)};
    uint32_t grid[3] = {(uint32_t)n, 1, 1};
    return blkrt_launch(k, grid, a, 4, s);
}

static int32_t n_of(int i) {
    fake_launch l;
    if (F.get_launch(i, &l) != 0) return -1;
    int32_t v;
    memcpy(&v, l.param[3], 4);
    return v;
}

static void streams_and_events(void) {
    blkrt_stream *s;
    blkrt_event *e0, *e1;
    F.reset();
    OK(blkrt_stream_create(d, &s));
    OK(blkrt_event_create(d, &e0));
    OK(blkrt_event_create(d, &e1));
    OK(blkrt_event_record(e0, s));
    OK(launch_n(5, s));
    OK(blkrt_event_record(e1, s));
    OK(blkrt_event_synchronize(e1));
    float ms = -1;
    OK(blkrt_event_elapsed_ms(e0, e1, &ms));
    CHECK(ms >= 0 && ms < 1000, "elapsed %g ms", ms);
    OK(blkrt_stream_synchronize(s));
    OK(blkrt_event_destroy(e0));
    OK(blkrt_event_destroy(e1));
    OK(blkrt_stream_destroy(s));
    CHECK(strcmp(calls(), "cuStreamCreate cuEventCreate cuEventCreate cuEventRecord cuLaunchKernel cuEventRecord "
                          "cuEventSynchronize cuEventElapsedTime_v2 cuStreamSynchronize cuEventDestroy_v2 "
                          "cuEventDestroy_v2 cuStreamDestroy_v2") == 0,
          "call sequence: %s", logbuf);

    /* events on the default stream; errors */
    OK(blkrt_event_create(d, &e0));
    OK(blkrt_event_create(d, &e1));
    FAILS(blkrt_event_elapsed_ms(e0, e1, &ms), BLKRT_ERR_DRIVER, "cuEventElapsedTime: CUDA_ERROR_INVALID_HANDLE");
    OK(blkrt_event_record(e0, NULL));
    OK(blkrt_event_record(e1, NULL));
    OK(blkrt_event_elapsed_ms(e0, e1, &ms));
    FAILS(blkrt_event_elapsed_ms(e0, e1, NULL), BLKRT_ERR_INVALID_VALUE, "ms is NULL");
    blkrt_device *cpu;
    blkrt_event *ce;
    OK(blkrt_device_open(BLKRT_DEVICE_CPU, &cpu));
    OK(blkrt_event_create(cpu, &ce));
    FAILS_EXACTLY(blkrt_event_elapsed_ms(e0, ce, &ms), BLKRT_ERR_INVALID_VALUE,
                  "blkrt_event_elapsed_ms: the events belong to different devices");
    OK(blkrt_event_destroy(ce));
    OK(blkrt_device_close(cpu));
    OK(blkrt_event_destroy(e0));
    OK(blkrt_event_destroy(e1));
}

static void graphs(void) {
    blkrt_stream *s, *s2;
    OK(blkrt_stream_create(d, &s));
    OK(blkrt_stream_create(d, &s2));
    F.reset();
    OK(blkrt_graph_begin_capture(s));
    OK(launch_n(1, s));
    OK(launch_n(2, s));
    OK(launch_n(3, s));
    CHECK(F.launch_count() == 0, "captured launches do not run");
    blkrt_graph *g = NULL;
    OK(blkrt_graph_end_capture(s, &g));
    CHECK(strcmp(calls(), "cuStreamBeginCapture_v2 cuLaunchKernel cuLaunchKernel cuLaunchKernel cuStreamEndCapture "
                          "cuGraphInstantiateWithFlags cuGraphDestroy") == 0,
          "capture sequence: %s", logbuf);
    OK(blkrt_graph_launch(g, s));
    OK(blkrt_graph_launch(g, s2));
    OK(blkrt_graph_launch(g, NULL));
    CHECK(F.launch_count() == 9, "3 replays x 3 launches (%d)", F.launch_count());
    for (int i = 0; i < 9; i++) CHECK(n_of(i) == i % 3 + 1, "replay order: launch %d has n=%d", i, n_of(i));
    fake_launch l;
    F.get_launch(0, &l);
    CHECK(l.from_graph && l.grid[0] == 1 && l.block[0] == 128, "a replayed launch");
    CHECK(F.count_calls("cuGraphLaunch") == 3, "one driver call per replay");
    OK(blkrt_graph_destroy(g));
    CHECK(F.count_calls("cuGraphExecDestroy") == 1, "exec destroyed");

    /* Capture rules. */
    FAILS(blkrt_graph_begin_capture(NULL), BLKRT_ERR_INVALID_HANDLE, "capture needs a created stream");
    FAILS(blkrt_graph_end_capture(s, &g), BLKRT_ERR_DRIVER, "cuStreamEndCapture: CUDA_ERROR_INVALID_VALUE");
    CHECK(g == NULL, "no graph");
    OK(blkrt_graph_begin_capture(s));
    blkrt_ptr p;
    float h[4] = {0};
    FAILS(blkrt_malloc(d, 64, &p), BLKRT_ERR_DRIVER, "cuMemAlloc: CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED (900)");
    FAILS(blkrt_memcpy_dtoh(d, h, 0x1000, 16), BLKRT_ERR_DRIVER, "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED");
    OK(launch_n(4, s));
    F.fail_next("cuGraphInstantiateWithFlags", RT_CUDA_ERROR_OUT_OF_MEMORY);
    FAILS(blkrt_graph_end_capture(s, &g), BLKRT_ERR_OUT_OF_MEMORY, "cuGraphInstantiate: CUDA_ERROR_OUT_OF_MEMORY");
    CHECK(g == NULL, "no graph after a failed instantiation");

    /* A graph belongs to its device. */
    OK(blkrt_graph_begin_capture(s));
    OK(launch_n(8, s));
    OK(blkrt_graph_end_capture(s, &g));
    blkrt_device *d1;
    blkrt_stream *s1;
    OK(blkrt_device_open(1, &d1));
    OK(blkrt_stream_create(d1, &s1));
    FAILS(blkrt_graph_launch(g, s1), BLKRT_ERR_INVALID_VALUE, "the stream belongs to another device");
    OK(blkrt_stream_destroy(s1));
    OK(blkrt_device_close(d1));
    FAILS(blkrt_device_close(d), BLKRT_ERR_INVALID_VALUE, "still alive");
    OK(blkrt_graph_destroy(g));
    OK(blkrt_stream_destroy(s));
    OK(blkrt_stream_destroy(s2));
}

/* A CUstream made elsewhere (torch's) adopted with blkrt_stream_wrap:
 * launches and capture go to it; destroying the handle leaves it alone. */
static void foreign_streams(void) {
    blkrt_stream *own, *wrapped;
    F.reset();
    OK(blkrt_stream_create(d, &own));
    OK(blkrt_stream_wrap(d, (uint64_t)(uintptr_t)own->cu, &wrapped));
    OK(launch_n(7, wrapped));
    fake_launch l;
    CHECK(F.get_launch(0, &l) == 0 && l.stream == (void *)own->cu, "launch on the adopted CUstream");
    OK(blkrt_stream_synchronize(wrapped));
    blkrt_graph *g;
    OK(blkrt_graph_begin_capture(wrapped));
    OK(launch_n(8, wrapped));
    OK(blkrt_graph_end_capture(wrapped, &g));
    OK(blkrt_graph_launch(g, wrapped));
    OK(blkrt_graph_destroy(g));
    CHECK(n_of(F.launch_count() - 1) == 8, "captured launch replayed on the adopted stream");
    OK(blkrt_stream_destroy(wrapped));
    CHECK(F.count_calls("cuStreamDestroy_v2") == 0, "an adopted CUstream is not destroyed");
    OK(blkrt_stream_destroy(own));
    CHECK(F.count_calls("cuStreamDestroy_v2") == 1, "the owned one is");
    blkrt_device *cpu;
    OK(blkrt_device_open(BLKRT_DEVICE_CPU, &cpu));
    CHECK(blkrt_stream_wrap(cpu, 1, &wrapped) == BLKRT_ERR_UNSUPPORTED, "no CUstreams on the CPU device");
    CHECK(blkrt_stream_wrap(d, 1, NULL) == BLKRT_ERR_INVALID_VALUE, "out is NULL");
    OK(blkrt_device_close(cpu));
}

/* The message must contain every one of the texts (NULL-terminated). */
static void message_has(const char *what, ...) {
    va_list ap;
    va_start(ap, what);
    for (const char *t; (t = va_arg(ap, const char *));)
        CHECK(strstr(blkrt_last_error(), t) != NULL, "%s: message\n  %s\nlacks\n  %s", what, blkrt_last_error(), t);
    va_end(ap);
}

static void deadlines(void) {
    blkrt_stream *s;
    OK(blkrt_stream_create(d, &s));
    OK(blkrt_device_synchronize(d)); /* what the tests before left unfinished */
    F.reset();
    OK(launch_n(5, s));
    F.stall(1);
    double t0 = rt_now_ms();
    FAILS(blkrt_stream_synchronize_timeout(NULL, s, 50), BLKRT_ERR_TIMEOUT,
          "blkrt_stream_synchronize_timeout: the stream has not finished after ");
    double took = rt_now_ms() - t0;
    CHECK(took >= 50 && took < 2000, "a 50 ms deadline took %.1f ms", took);
    CHECK(F.count_calls("cuStreamQuery") > 2, "polled (%d queries)", F.count_calls("cuStreamQuery"));
    CHECK(F.count_calls("cuStreamSynchronize") == 0, "never blocks in the driver");
    message_has("one launch", "; the launch not known to have finished: kernel 'vector_add' (grid 5x1x1, 128 threads "
                "a block), launched 0.0", "It goes on running: a kernel that never ends cannot be stopped", NULL);
    CHECK(!strstr(blkrt_last_error(), "oldest"), "one launch: %s", blkrt_last_error());

    /* Several launches: the oldest is named (stream order: the rest wait for it). */
    OK(launch_n(6, s));
    FAILS(blkrt_stream_synchronize_timeout(d, s, 1), BLKRT_ERR_TIMEOUT, "(grid 5x1x1, 128 threads a block)");
    message_has("two launches", "(the oldest of 2 unfinished ones: the later ones wait for it)", NULL);

    /* The default stream's launches are its own; the device's are all of them. */
    OK(launch_n(3, NULL));
    FAILS(blkrt_stream_synchronize_timeout(d, NULL, 1), BLKRT_ERR_TIMEOUT, "kernel 'vector_add' (grid 3x1x1,");
    FAILS(blkrt_device_synchronize_timeout(d, 1), BLKRT_ERR_TIMEOUT,
          "blkrt_device_synchronize_timeout: the device's work has not finished after ");
    message_has("device", "(grid 5x1x1,", "(the oldest of 3 unfinished ones on the device)", NULL);
    CHECK(F.count_calls("cuEventQuery") >= 1, "the device waits on an event");

    /* Work that finishes: OK, and a success marks the stream's launches finished. */
    F.stall(0);
    OK(blkrt_stream_synchronize_timeout(NULL, s, 1000));
    F.stall(1);
    FAILS(blkrt_device_synchronize_timeout(d, 1), BLKRT_ERR_TIMEOUT, "(grid 3x1x1,");
    F.stall(0);
    OK(blkrt_device_synchronize(d));
    F.stall(1);
    FAILS(blkrt_device_synchronize_timeout(d, 0), BLKRT_ERR_TIMEOUT,
          "; no launch through blkrt is pending on the device (the work was issued elsewhere, or before the last 16 "
          "launches)");
    F.stall(0);

    /* Only the last 16 launches are kept; a graph replay is one launch. */
    for (int i = 0; i < 40; i++) OK(launch_n(100 + i, s));
    F.stall(1);
    FAILS(blkrt_stream_synchronize_timeout(NULL, s, 0), BLKRT_ERR_TIMEOUT, "(grid 124x1x1,");
    F.stall(0);
    OK(blkrt_stream_synchronize(s));
    blkrt_graph *g;
    OK(blkrt_graph_begin_capture(s));
    OK(launch_n(77, s));
    OK(blkrt_graph_end_capture(s, &g));
    F.stall(1);
    /* captured launches are not logged: they run with the replay */
    FAILS(blkrt_stream_synchronize_timeout(NULL, s, 0), BLKRT_ERR_TIMEOUT, "no launch through blkrt is pending on this stream");
    FAILS(blkrt_device_synchronize_timeout(d, 0), BLKRT_ERR_TIMEOUT, "no launch through blkrt is pending on the device");
    OK(blkrt_graph_launch(g, s));
    FAILS(blkrt_stream_synchronize_timeout(NULL, s, 0), BLKRT_ERR_TIMEOUT,
          "the launch not known to have finished: a graph replay, launched");
    F.stall(0);
    OK(blkrt_stream_synchronize(s));
    OK(blkrt_graph_destroy(g));

    /* A kernel's fault surfaces at the next synchronisation or copy: named. */
    OK(launch_n(9, s));
    F.fail_next("cuStreamSynchronize", RT_CUDA_ERROR_ASSERT);
    FAILS(blkrt_stream_synchronize(s), BLKRT_ERR_LAUNCH_FAILED,
          "cuStreamSynchronize: CUDA_ERROR_ASSERT (710): device-side assert triggered; the launch not known to have "
          "finished: kernel 'vector_add' (grid 9x1x1, 128 threads a block)");
    F.fail_next("cuStreamQuery", RT_CUDA_ERROR_ILLEGAL_INSTRUCTION);
    FAILS(blkrt_stream_synchronize_timeout(NULL, s, 100), BLKRT_ERR_LAUNCH_FAILED,
          "cuStreamQuery: CUDA_ERROR_ILLEGAL_INSTRUCTION (715): an illegal instruction was encountered; the launch "
          "not known to have finished: kernel 'vector_add' (grid 9x1x1,");
    F.fail_next("cuCtxSynchronize", RT_CUDA_ERROR_ILLEGAL_ADDRESS);
    FAILS(blkrt_device_synchronize(d), BLKRT_ERR_LAUNCH_FAILED, "CUDA_ERROR_ILLEGAL_ADDRESS (700)");
    message_has("device sync", "kernel 'vector_add' (grid 9x1x1,", NULL);
    float h[4];
    F.fail_next("cuMemcpyDtoH_v2", RT_CUDA_ERROR_ASSERT);
    FAILS(blkrt_memcpy_dtoh(d, h, 0x1000, 16), BLKRT_ERR_LAUNCH_FAILED, "cuMemcpyDtoH: CUDA_ERROR_ASSERT (710)");
    message_has("copy", "kernel 'vector_add' (grid 9x1x1,", NULL);
    F.fail_next("cuMemcpyDtoH_v2", RT_CUDA_ERROR_INVALID_VALUE);
    FAILS(blkrt_memcpy_dtoh(d, h, 0x1000, 16), BLKRT_ERR_DRIVER, "cuMemcpyDtoH: CUDA_ERROR_INVALID_VALUE");
    CHECK(!strstr(blkrt_last_error(), "vector_add"), "not a kernel fault: %s", blkrt_last_error());
    OK(blkrt_stream_synchronize(s));

    /* Handles; the CPU device has nothing to wait for. */
    FAILS(blkrt_stream_synchronize_timeout(NULL, NULL, 1), BLKRT_ERR_INVALID_HANDLE, "blkrt_stream_synchronize_timeout");
    FAILS(blkrt_device_synchronize_timeout(NULL, 1), BLKRT_ERR_INVALID_HANDLE, "blkrt_device_synchronize_timeout");
    blkrt_device *cpu;
    OK(blkrt_device_open(BLKRT_DEVICE_CPU, &cpu));
    FAILS(blkrt_stream_synchronize_timeout(cpu, s, 1), BLKRT_ERR_INVALID_VALUE, "the stream belongs to another device");
    OK(blkrt_stream_synchronize_timeout(cpu, NULL, 0));
    OK(blkrt_device_synchronize_timeout(cpu, 0));
    OK(blkrt_device_close(cpu));
    OK(blkrt_stream_destroy(s));
}

int main(void) {
    if (fake_api_load(&F) != 0) return 1;
    if (blkrt_device_open(0, &d) != BLKRT_OK) return 1;
    blkrt_module *m = load_ptx(d, PTX);
    if (!m || blkrt_module_kernel(m, "vector_add", &k) != BLKRT_OK) return test_finish("test_stream");
    streams_and_events();
    graphs();
    foreign_streams();
    deadlines();
    OK(blkrt_module_unload(m));
    OK(blkrt_device_close(d));
    CHECK(F.ctx_depth() == 0, "contexts restored");
    return test_finish("test_stream");
}

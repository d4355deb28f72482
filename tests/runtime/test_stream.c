/* test_stream — streams, events and graphs against the fake driver: the
 * driver call sequences, capture (launches recorded, not run, until the
 * graph is replayed; replays in order), errors during and around capture. */
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

int main(void) {
    if (fake_api_load(&F) != 0) return 1;
    if (blkrt_device_open(0, &d) != BLKRT_OK) return 1;
    blkrt_module *m = load_ptx(d, PTX);
    if (!m || blkrt_module_kernel(m, "vector_add", &k) != BLKRT_OK) return finish("test_stream");
    streams_and_events();
    graphs();
    foreign_streams();
    OK(blkrt_module_unload(m));
    OK(blkrt_device_close(d));
    CHECK(F.ctx_depth() == 0, "contexts restored");
    return finish("test_stream");
}

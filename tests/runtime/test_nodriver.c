/* test_nodriver — machines without a usable driver, one mode per process
 * (the driver is loaded once per process):
 *   missing   BLKRT_CUDA_LIBRARY names no file: BLKRT_ERR_NO_DRIVER naming it
 *   stub      cuInit returns CUDA_ERROR_STUB_LIBRARY (34), as the toolkit's stub does
 *   nodevice  cuInit returns CUDA_ERROR_NO_DEVICE: zero devices, not an error
 * In every mode the CPU device still works. */
#include "rt_test.h"

static void cpu_still_works(void) {
    blkrt_device *cpu;
    OK(blkrt_device_open(BLKRT_DEVICE_CPU, &cpu));
    blkrt_device_info info;
    OK(blkrt_device_get_info(cpu, &info));
    CHECK(info.kind == BLKRT_KIND_CPU && strcmp(info.arch, "cpu") == 0, "CPU device info");
    int h[4] = {1, 2, 3, 4}, back[4] = {0};
    blkrt_ptr p;
    OK(blkrt_malloc(cpu, sizeof h, &p));
    OK(blkrt_memcpy_htod(cpu, p, h, sizeof h));
    OK(blkrt_memcpy_dtoh(cpu, back, p, sizeof h));
    CHECK(memcmp(h, back, sizeof h) == 0, "CPU memory round trip");
    blkrt_module *m;
    FAILS(blkrt_module_load_source(cpu, "kernel k() {}", 13, NULL, &m), BLKRT_ERR_NO_COMPILER, "no compiler linked");
    OK(blkrt_free(cpu, p));
    OK(blkrt_device_close(cpu));
}

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "missing";
    int n = -1;
    blkrt_device *d = (blkrt_device *)1;
    if (strcmp(mode, "missing") == 0) {
        const char *lib = getenv("BLKRT_CUDA_LIBRARY");
        char want[512];
        snprintf(want, sizeof want, "no CUDA driver: cannot load %s (", lib);
        FAILS(blkrt_device_count(&n), BLKRT_ERR_NO_DRIVER, want);
        CHECK(n == 0, "count 0 without a driver");
        FAILS(blkrt_device_open(0, &d), BLKRT_ERR_NO_DRIVER, want);
        CHECK(d == NULL, "no handle");
        FAILS(blkrt_device_count(&n), BLKRT_ERR_NO_DRIVER, want); /* and again: the same answer */
    } else if (strcmp(mode, "stub") == 0) {
        const char *want = "no CUDA driver: cuInit failed with CUDA_ERROR_STUB_LIBRARY (34): the loaded libcuda is "
                           "the toolkit's link-only stub";
        FAILS_EXACTLY(blkrt_device_count(&n), BLKRT_ERR_NO_DRIVER, want);
        FAILS_EXACTLY(blkrt_device_open(0, &d), BLKRT_ERR_NO_DRIVER, want);
    } else if (strcmp(mode, "nodevice") == 0) {
        OK(blkrt_device_count(&n));
        CHECK(n == 0, "no devices: count 0 (%d)", n);
        FAILS_EXACTLY(blkrt_device_open(0, &d), BLKRT_ERR_NO_DEVICE, "no GPU with ordinal 0 (the driver reports 0)");
    } else {
        fprintf(stderr, "unknown mode %s\n", mode);
        return 2;
    }
    cpu_still_works();
    return test_finish(mode);
}

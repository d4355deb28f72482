/* run_vector_add — the runtime's story in one file: compile stdlib
 * vector_add from .blk source at load time, launch it, check it. It runs on
 * GPU 0 when a CUDA driver and GPU are present and on the CPU interpreter
 * device otherwise — the same API either way.
 *
 *   ./run_vector_add [N] [--cpu]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blk/blkrt.h"
#include "blk/blkrt_jit.h"

#ifndef BLK_STDLIB_DIR
#define BLK_STDLIB_DIR "stdlib"
#endif

static int fail(const char *what, blkrt_status s) {
    fprintf(stderr, "%s: %s: %s\n", what, blkrt_status_name(s), blkrt_last_error());
    return 1;
}

int main(int argc, char **argv) {
    int n = 100000, force_cpu = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--cpu") == 0) force_cpu = 1;
        else n = atoi(argv[i]);
    }
    if (n <= 0) { fprintf(stderr, "N must be positive\n"); return 2; }

    blkrt_jit_install(); /* lets the runtime compile .blk source */
    int ngpu = 0;
    blkrt_device *dev = NULL;
    blkrt_status s = BLKRT_ERR_NO_DEVICE;
    if (!force_cpu && blkrt_device_count(&ngpu) == BLKRT_OK && ngpu > 0) s = blkrt_device_open(0, &dev);
    if (s != BLKRT_OK) {
        if (!force_cpu) printf("no GPU (%s): using the CPU interpreter device\n", blkrt_last_error());
        if ((s = blkrt_device_open(BLKRT_DEVICE_CPU, &dev)) != BLKRT_OK) return fail("open CPU device", s);
    }
    blkrt_device_info info;
    blkrt_device_get_info(dev, &info);
    printf("device: %s\n", info.name);

    /* the source, compiled when loaded (PTX for a GPU, IR for the CPU) */
    FILE *f = fopen(BLK_STDLIB_DIR "/elementwise.blk", "rb");
    if (!f) { perror(BLK_STDLIB_DIR "/elementwise.blk"); return 1; }
    static char src[1 << 16];
    size_t len = fread(src, 1, sizeof src, f);
    fclose(f);
    blkrt_define block = {"BLOCK", 0, 1024, 0};
    blkrt_source_options opts = {BLK_STDLIB_DIR "/elementwise.blk", &block, 1, "vector_add", ""};
    blkrt_module *mod;
    if ((s = blkrt_module_load_source(dev, src, len, &opts, &mod)) != BLKRT_OK) return fail("load", s);
    blkrt_kernel *k;
    if ((s = blkrt_module_kernel(mod, "vector_add", &k)) != BLKRT_OK) return fail("kernel", s);

    size_t bytes = sizeof(float) * (size_t)n;
    float *x = malloc(bytes), *y = malloc(bytes), *out = malloc(bytes);
    for (int i = 0; i < n; i++) { x[i] = (float)i; y[i] = 0.5f * (float)i; }
    blkrt_ptr dx, dy, dout;
    if ((s = blkrt_malloc(dev, bytes, &dx)) || (s = blkrt_malloc(dev, bytes, &dy)) || (s = blkrt_malloc(dev, bytes, &dout)))
        return fail("malloc", s);
    blkrt_memcpy_htod(dev, dx, x, bytes);
    blkrt_memcpy_htod(dev, dy, y, bytes);
    blkrt_memset(dev, dout, 0xff, bytes); /* poison: every element must be written */

    blkrt_arg args[] = {BLKRT_PTR(dx), BLKRT_PTR(dy), BLKRT_PTR(dout), BLKRT_INT(n)};
    uint32_t grid[3] = {(uint32_t)((n + 1023) / 1024), 1, 1};
    if ((s = blkrt_launch(k, grid, args, 4, NULL)) != BLKRT_OK) return fail("launch", s);
    if ((s = blkrt_memcpy_dtoh(dev, out, dout, bytes)) != BLKRT_OK) return fail("copy back", s);

    int bad = 0;
    for (int i = 0; i < n; i++) bad += out[i] != x[i] + y[i];
    printf("vector_add, n = %d, %u programs: %s (%d mismatches)\n", n, grid[0], bad ? "FAILED" : "ok", bad);
    blkrt_free(dev, dx); blkrt_free(dev, dy); blkrt_free(dev, dout);
    blkrt_module_unload(mod);
    blkrt_device_close(dev);
    free(x); free(y); free(out);
    return bad != 0;
}

/* test_gpu_jit — .blk source to a real GPU through libblkrt_jit (label gpu):
 * stdlib/elementwise.blk described at load and compiled by libblkc's PTX
 * backend for the device one variant per argument key at the first launch
 * (aligned pointers: a d16 variant; moved ones: the unspecialised one),
 * cached on disk (a fresh temporary cache: the second pass is all hits), run
 * through checked launches on poisoned memory, checked against C and against
 * the same kernel on the CPU interpreter device. Exits 77 without a GPU.
 *
 *   test_gpu_jit STDLIB_DIR
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "blk/blkrt_jit.h"

#include "../test_util.h"

#define OK(call)                                                                               \
    do {                                                                                       \
        blkrt_status s_ = (call);                                                              \
        CHECK(s_ == BLKRT_OK, "%s -> %s: %s", #call, blkrt_status_name(s_), blkrt_last_error()); \
    } while (0)

/* Run vector_add on device d from source; results into out (n floats). */
static void vector_add_on(blkrt_device *d, const char *src, size_t len, const char *path, const char *cache,
                          const float *x, const float *y, float *out, int n, int offset) {
    blkrt_define def = {.name = "BLOCK", .ival = 1024};
    blkrt_source_options o = {.path = path, .defines = &def, .ndefines = 1, .kernel = "vector_add", .cache_dir = cache};
    blkrt_module *m = NULL;
    blkrt_kernel *k = NULL;
    OK(blkrt_module_load_source(d, src, len, &o, &m));
    if (!m) return;
    OK(blkrt_module_kernel(m, "vector_add", &k));
    size_t bytes = sizeof(float) * (size_t)(n + offset);
    blkrt_ptr dx, dy, dout;
    OK(blkrt_malloc(d, bytes, &dx));
    OK(blkrt_malloc(d, bytes, &dy));
    OK(blkrt_malloc(d, bytes, &dout));
    OK(blkrt_memcpy_htod(d, dx + sizeof(float) * (size_t)offset, x, sizeof(float) * (size_t)n));
    OK(blkrt_memcpy_htod(d, dy + sizeof(float) * (size_t)offset, y, sizeof(float) * (size_t)n));
    OK(blkrt_memset(d, dout, 0xFF, bytes));
    size_t off = sizeof(float) * (size_t)offset;
    blkrt_arg a[] = {BLKRT_PTR(dx + off), BLKRT_PTR(dy + off), BLKRT_PTR(dout + off), BLKRT_INT(n)};
    uint32_t grid[3] = {(uint32_t)((n + 1023) / 1024), 1, 1};
    OK(blkrt_launch(k, grid, a, 4, NULL));
    OK(blkrt_device_synchronize(d));
    OK(blkrt_memcpy_dtoh(d, out, dout + off, sizeof(float) * (size_t)n));
    OK(blkrt_free(d, dx));
    OK(blkrt_free(d, dy));
    OK(blkrt_free(d, dout));
    OK(blkrt_module_unload(m));
}

static int cache_entries(const char *dir) {
    DIR *dd = opendir(dir);
    int n = 0;
    struct dirent *e;
    while (dd && (e = readdir(dd))) n += strstr(e->d_name, ".blkc") != NULL;
    if (dd) closedir(dd);
    return n;
}

int main(int argc, char **argv) {
    int count = 0;
    blkrt_status st = blkrt_device_count(&count);
    if (st != BLKRT_OK || count == 0) {
        printf("skipped: no CUDA driver/GPU (%s)\n", st ? blkrt_last_error() : "the driver reports 0 devices");
        return 77;
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/elementwise.blk", argc > 1 ? argv[1] : "stdlib");
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "cannot read %s\n", path);
        return 1;
    }
    static char src[1 << 16];
    size_t len = fread(src, 1, sizeof src - 1, f);
    fclose(f);
    char cache[] = "/tmp/blkrt-gpu-jit-XXXXXX";
    if (!mkdtemp(cache)) return 1;
    OK(blkrt_jit_install());

    int n = (1 << 20) + 7;
    float *x = malloc(sizeof(float) * (size_t)n), *y = malloc(sizeof(float) * (size_t)n);
    float *gpu = malloc(sizeof(float) * (size_t)n), *cpu = malloc(sizeof(float) * (size_t)n);
    for (int i = 0; i < n; i++) x[i] = (float)(i % 977) * 0.25f, y[i] = 1.0f / (float)(1 + i % 13);

    blkrt_device *c;
    OK(blkrt_device_open(BLKRT_DEVICE_CPU, &c));
    vector_add_on(c, src, len, path, NULL, x, y, cpu, n, 0);
    OK(blkrt_device_close(c));

    for (int g = 0; g < count; g++) {
        blkrt_device *d;
        blkrt_device_info info;
        OK(blkrt_device_open(g, &d));
        if (!d) continue;
        OK(blkrt_device_get_info(d, &info));
        for (int pass = 0; pass < 2; pass++) { /* compile, then from the cache */
            for (int offset = 0; offset < 2; offset++) { /* d16 pointers, then the fallback */
                vector_add_on(d, src, len, path, cache, x, y, gpu, n, offset);
                int bad = 0;
                for (int i = 0; i < n; i++) bad += gpu[i] != x[i] + y[i] || gpu[i] != cpu[i];
                CHECK(bad == 0, "GPU %d (%s) pass %d offset %d: %d wrong", g, info.arch, pass, offset, bad);
                if (!bad)
                    printf("GPU %d (%s): vector_add from source, %s variant, %s: ok (matches C and the interpreter)\n",
                           g, info.arch, offset ? "unspecialised" : "d16-pointer", pass ? "cached PTX" : "compiled");
            }
        }
        OK(blkrt_device_close(d));
    }
    CHECK(cache_entries(cache) >= 1, "the PTX was cached");
    DIR *dd = opendir(cache);
    struct dirent *e;
    char p[4200];
    while (dd && (e = readdir(dd)))
        if (e->d_name[0] != '.') {
            snprintf(p, sizeof p, "%s/%s", cache, e->d_name);
            unlink(p);
        }
    if (dd) closedir(dd);
    rmdir(cache);
    free(x), free(y), free(gpu), free(cpu);
    return test_finish("test_gpu_jit");
}

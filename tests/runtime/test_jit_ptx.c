/* test_jit_ptx — .blk source to a GPU through the whole runtime path, on the
 * fake driver: libblkc's front end describes stdlib/elementwise.blk at load
 * (no PTX yet), each launch with a new argument key compiles exactly that
 * variant through libblkc's PTX backend (libblkrt_jit), the disk cache
 * stores the description and every variant, the runtime parses the
 * backend's blk-meta line and launches that entry. What the GPU then
 * computes is tests/gpu's job; test_lazy covers the lazy path in detail.
 *
 *   rt_test_jit_ptx STDLIB_DIR
 */
#include <stdbool.h>
#include <unistd.h>

#include "blk/blkrt_jit.h"
#include "fake_cuda.h"
#include "rt_test.h"

static fake_api F;
static char dir[64];

static int entries(void) { return cache_count(dir); }

static fake_launch last(void) {
    fake_launch l;
    CHECK(fake_last_launch(&F, &l) == 0, "a launch was recorded");
    return l;
}

int main(int argc, char **argv) {
    char path[1024];
    snprintf(path, sizeof path, "%s/elementwise.blk", argc > 1 ? argv[1] : "stdlib");
    FILE *f = fopen(path, "rb");
    if (!f || fake_api_load(&F) != 0) return 1;
    static char src[1 << 16];
    size_t len = fread(src, 1, sizeof src - 1, f);
    fclose(f);
    snprintf(dir, sizeof dir, "/tmp/blkrt-jit-test-XXXXXX");
    if (!mkdtemp(dir)) return 1;

    OK(blkrt_jit_install());
    blkrt_device *d0, *d1;
    OK(blkrt_device_open(0, &d0));
    OK(blkrt_device_open(1, &d1));
    F.reset();
    blkrt_define def = {.name = "BLOCK", .ival = 512};
    blkrt_source_options o = {.path = path, .defines = &def, .ndefines = 1, .kernel = "vector_add", .cache_dir = dir};
    blkrt_module *m = NULL, *m2 = NULL, *m1 = NULL;
    OK(blkrt_module_load_source(d0, src, len, &o, &m));
    if (!m) {
        rmdir(dir);
        return test_finish("test_jit_ptx");
    }
    CHECK(F.count_calls("cuModuleLoadDataEx") == 0, "a load from source compiles nothing");
    CHECK(entries() == 1, "the description cached (%d entries)", entries());
    OK(blkrt_module_load_source(d0, src, len, &o, &m2)); /* from the cache */
    CHECK(entries() == 1, "still one entry");
    OK(blkrt_module_load_source(d1, src, len, &o, &m1)); /* sm_80: another target, another entry */
    CHECK(entries() == 2, "one entry per target (%d)", entries());

    blkrt_kernel *k;
    OK(blkrt_module_kernel(m, "vector_add", &k));
    blkrt_kernel_info info;
    OK(blkrt_kernel_get_info(k, &info));
    CHECK(info.checked && info.num_params == 4 && info.num_variants == 0 && info.num_warps == 4 &&
              info.shared_bytes == 0,
          "vector_add before any launch: %d params, %d variants, %d warps", info.num_params, info.num_variants,
          info.num_warps);
    int64_t block = 0;
    OK(blkrt_kernel_const_int(k, "BLOCK", &block));
    CHECK(block == 512, "BLOCK = %lld", (long long)block);
    const char *pn = NULL, *pt = NULL;
    OK(blkrt_kernel_param(k, 3, &pn, &pt));
    CHECK(pn && pt && !strcmp(pn, "n") && !strcmp(pt, "i32"), "parameter 4 is n: i32");

    blkrt_ptr x, y, out;
    OK(blkrt_malloc(d0, 1 << 16, &x));
    OK(blkrt_malloc(d0, 1 << 16, &y));
    OK(blkrt_malloc(d0, 1 << 16, &out));
    /* one variant per argument key, compiled and loaded by the first launch */
    struct {
        blkrt_ptr off;
        int n;
        const char *entry;
        int loads; /* driver loads so far */
    } cases[] = {{0, 4096, "vector_add__d16_d16_d16_d16", 1},
                 {0, 1000, "vector_add__d16_d16_d16_x", 2},
                 {4, 4096, "vector_add__x_d16_d16_d16", 3},
                 {0, 4112, "vector_add__d16_d16_d16_d16", 3}, /* a known key: nothing compiled */
                 {0, 1, "vector_add__d16_d16_d16_eq1", 4}};
    for (int i = 0; i < 5; i++) {
        blkrt_arg a[] = {BLKRT_PTR(x + cases[i].off), BLKRT_PTR(y), BLKRT_PTR(out), BLKRT_INT(cases[i].n)};
        uint32_t grid[3] = {(uint32_t)((cases[i].n + block - 1) / block), 1, 1};
        OK(blkrt_launch(k, grid, a, 4, NULL));
        fake_launch l = last();
        CHECK(strcmp(l.entry, cases[i].entry) == 0, "case %d: entry %s, expected %s", i, l.entry, cases[i].entry);
        CHECK(F.count_calls("cuModuleLoadDataEx") == cases[i].loads, "case %d: %d driver loads, expected %d", i,
              F.count_calls("cuModuleLoadDataEx"), cases[i].loads);
        CHECK(l.block[0] == 32u * (unsigned)info.num_warps && l.grid[0] == grid[0], "case %d: block %u grid %u", i,
              l.block[0], l.grid[0]);
        CHECK(l.nparams == 4 && l.param_size[0] == 8 && l.param_size[3] == 4, "the backend's parameter list");
    }
    CHECK(entries() == 2 + 4, "each variant cached (%d entries)", entries());
    OK(blkrt_kernel_get_info(k, &info));
    CHECK(info.num_variants == 4, "4 variants compiled, info says %d", info.num_variants);
    const char *jl = NULL;
    OK(blkrt_module_jit_log(m, &jl));
    CHECK(jl && strstr(jl, "fake driver"), "the latest variant's JIT log: %s", jl ? jl : "(null)");
    /* the second module: the same variant from the cache, loaded once more */
    blkrt_kernel *k2;
    OK(blkrt_module_kernel(m2, "vector_add", &k2));
    blkrt_arg a2[] = {BLKRT_PTR(x), BLKRT_PTR(y), BLKRT_PTR(out), BLKRT_INT(4096)};
    uint32_t g2[3] = {8, 1, 1};
    OK(blkrt_launch(k2, g2, a2, 4, NULL));
    CHECK(!strcmp(last().entry, "vector_add__d16_d16_d16_d16") && F.count_calls("cuModuleLoadDataEx") == 5,
          "a module of its own: loaded again, from the cache");
    CHECK(entries() == 6, "no new entry (%d)", entries());
    const char *bad = "kernel broken(x: *f32) { let y = x + ; }\n";
    blkrt_module *mb = NULL;
    blkrt_source_options ob = {.path = "broken.blk", .cache_dir = dir};
    FAILS(blkrt_module_load_source(d0, bad, strlen(bad), &ob, &mb), BLKRT_ERR_COMPILE,
          "broken.blk: compiling for sm_90a failed:\nbroken.blk:1:");
    CHECK(entries() == 6, "errors are not cached");

    OK(blkrt_free(d0, x));
    OK(blkrt_free(d0, y));
    OK(blkrt_free(d0, out));
    OK(blkrt_module_unload(m));
    OK(blkrt_module_unload(m2));
    OK(blkrt_module_unload(m1));
    OK(blkrt_device_close(d0));
    OK(blkrt_device_close(d1));
    remove_cache_dir(dir);
    return test_finish("test_jit_ptx");
}

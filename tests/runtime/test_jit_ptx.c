/* test_jit_ptx — .blk source to a GPU through the whole runtime path, on the
 * fake driver: libblkc's PTX backend (through libblkrt_jit) compiles
 * stdlib/elementwise.blk, the disk cache stores it, the runtime parses the
 * backend's blk-meta lines and picks between its two entries (d16 and
 * fallback) by the arguments. What the GPU then computes is tests/gpu's job.
 *
 *   rt_test_jit_ptx STDLIB_DIR
 */
#include <dirent.h>
#include <stdbool.h>
#include <unistd.h>

#include "blk/blkrt_jit.h"
#include "fake_cuda.h"
#include "rt_test.h"

static fake_api F;
static char dir[64];

static int entries(void) {
    DIR *dd = opendir(dir);
    int n = 0;
    struct dirent *e;
    while (dd && (e = readdir(dd)))
        if (strstr(e->d_name, ".blkc")) n++;
    if (dd) closedir(dd);
    return n;
}

static fake_launch last(void) {
    fake_launch l;
    memset(&l, 0, sizeof l);
    CHECK(F.get_launch(F.launch_count() - 1, &l) == 0, "a launch was recorded");
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
    blkrt_define def = {.name = "BLOCK", .ival = 512};
    blkrt_source_options o = {.path = path, .defines = &def, .ndefines = 1, .kernel = "vector_add", .cache_dir = dir};
    blkrt_module *m = NULL, *m2 = NULL, *m1 = NULL;
    OK(blkrt_module_load_source(d0, src, len, &o, &m));
    if (!m) {
        rmdir(dir);
        return finish("test_jit_ptx");
    }
    CHECK(entries() == 1, "PTX cached (%d entries)", entries());
    OK(blkrt_module_load_source(d0, src, len, &o, &m2)); /* from the cache */
    CHECK(entries() == 1, "still one entry");
    OK(blkrt_module_load_source(d1, src, len, &o, &m1)); /* sm_80: another target, another entry */
    CHECK(entries() == 2, "one entry per target (%d)", entries());

    blkrt_kernel *k;
    OK(blkrt_module_kernel(m, "vector_add", &k));
    blkrt_kernel_info info;
    OK(blkrt_kernel_get_info(k, &info));
    CHECK(info.checked && info.num_params == 4 && info.num_variants == 2, "vector_add: %d params, %d variants",
          info.num_params, info.num_variants);
    int64_t block = 0;
    OK(blkrt_kernel_const_int(k, "BLOCK", &block));
    CHECK(block == 512, "BLOCK = %lld", (long long)block);

    blkrt_ptr x, y, out;
    OK(blkrt_malloc(d0, 1 << 16, &x));
    OK(blkrt_malloc(d0, 1 << 16, &y));
    OK(blkrt_malloc(d0, 1 << 16, &out));
    struct {
        blkrt_ptr off;
        int n;
        int d16;
    } cases[] = {{0, 4096, 1}, {0, 1000, 0}, {4, 4096, 0}};
    for (int i = 0; i < 3; i++) {
        blkrt_arg a[] = {BLKRT_PTR(x + cases[i].off), BLKRT_PTR(y), BLKRT_PTR(out), BLKRT_INT(cases[i].n)};
        uint32_t grid[3] = {(uint32_t)((cases[i].n + block - 1) / block), 1, 1};
        OK(blkrt_launch(k, grid, a, 4, NULL));
        fake_launch l = last();
        bool is_d16 = strcmp(l.entry, "vector_add") != 0;
        CHECK(is_d16 == cases[i].d16, "case %d: entry %s", i, l.entry);
        CHECK(l.block[0] == 32u * (unsigned)info.num_warps && l.grid[0] == grid[0], "case %d: block %u grid %u", i,
              l.block[0], l.grid[0]);
        CHECK(l.nparams == 4 && l.param_size[0] == 8 && l.param_size[3] == 4, "the backend's parameter list");
    }
    const char *bad = "kernel broken(x: *f32) { let y = x + ; }\n";
    blkrt_module *mb = NULL;
    blkrt_source_options ob = {.path = "broken.blk", .cache_dir = dir};
    FAILS(blkrt_module_load_source(d0, bad, strlen(bad), &ob, &mb), BLKRT_ERR_COMPILE,
          "broken.blk: compiling for sm_90a failed:\nbroken.blk:1:");
    CHECK(entries() == 2, "errors are not cached");

    OK(blkrt_free(d0, x));
    OK(blkrt_free(d0, y));
    OK(blkrt_free(d0, out));
    OK(blkrt_module_unload(m));
    OK(blkrt_module_unload(m2));
    OK(blkrt_module_unload(m1));
    OK(blkrt_device_close(d0));
    OK(blkrt_device_close(d1));
    DIR *dd = opendir(dir);
    struct dirent *e;
    char p[400];
    while (dd && (e = readdir(dd)))
        if (e->d_name[0] != '.') {
            snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
            unlink(p);
        }
    if (dd) closedir(dd);
    rmdir(dir);
    return finish("test_jit_ptx");
}

/* test_jit_lineinfo — BLK_LINEINFO=1 makes the JIT's PTX carry line info
 * (.file naming the source, .loc lines inside the kernel's body), as
 * `blkc -lineinfo` does, and PTX with and without it are separate entries
 * of the disk cache (a cached plain PTX is never served to a line-info
 * build, nor the reverse).
 *
 *   rt_test_jit_lineinfo STDLIB_DIR
 */
#include <stdlib.h>
#include <unistd.h>

#include "blk/blkrt_jit.h"
#include "fake_cuda.h"
#include "rt_test.h"

/* The PTX of the compiler hook for vector_add of path (every variant). */
static char *ptx_of(const char *text, size_t len, const char *path) {
    blkrt_compile_request req = {.source = text, .len = len, .path = path, .kernel = "vector_add", .arch = "sm_90a"};
    blkrt_compile_result res = {0};
    blkrt_status st = blkrt_jit_compiler()->compile_ptx(&req, &res);
    CHECK(st == BLKRT_OK && res.text, "compile_ptx: %s %s", blkrt_status_name(st), res.log ? res.log : "");
    free(res.log);
    for (int i = 0; i < res.ndeps; i++) free(res.deps[i]);
    free(res.deps);
    return res.text;
}

/* The line of the first .loc directive of file 1, 0 if none. */
static int first_loc_line(const char *ptx) {
    const char *p = ptx ? strstr(ptx, ".loc\t1 ") : NULL;
    return p ? atoi(p + 7) : 0;
}

int main(int argc, char **argv) {
    const char *stdlib = argc > 1 ? argv[1] : "stdlib";
    char path[4096];
    snprintf(path, sizeof path, "%s/elementwise.blk", stdlib);
    size_t len;
    char *text = test_read_file(path, &len);
    CHECK(text != NULL, "read %s", path);
    if (!text) return test_finish("test_jit_lineinfo");

    unsetenv("BLK_LINEINFO");
    char *plain = ptx_of(text, len, path);
    CHECK(plain && !strstr(plain, ".loc") && !strstr(plain, ".file"), "no line info by default");

    setenv("BLK_LINEINFO", "1", 1);
    char *lined = ptx_of(text, len, path);
    char want_file[4200];
    snprintf(want_file, sizeof want_file, ".file\t1 \"%s\"", path);
    CHECK(lined && strstr(lined, want_file), "BLK_LINEINFO=1: %s", want_file);
    /* vector_add starts on line 13 of elementwise.blk and spans a few lines */
    int line = first_loc_line(lined);
    CHECK(line >= 13 && line <= 18, "the first .loc is in vector_add's body: line %d", line);
    CHECK(lined && strstr(lined, "blk-meta v1 kernel=vector_add"), "still carries blk-meta");
    setenv("BLK_LINEINFO", "0", 1);
    char *zero = ptx_of(text, len, path);
    CHECK(zero && !strstr(zero, ".loc"), "BLK_LINEINFO=0 is off");

    /* the runtime's path on the fake driver, through a disk cache */
    char dir[64];
    snprintf(dir, sizeof dir, "/tmp/blk-lineinfo-%d", (int)getpid());
    OK(blkrt_jit_install());
    blkrt_device *d;
    OK(blkrt_device_open(0, &d));
    blkrt_source_options o = {.path = path, .kernel = "vector_add", .cache_dir = dir};
    blkrt_ptr x;
    OK(blkrt_malloc(d, 4096, &x));
    blkrt_arg args[] = {BLKRT_PTR(x), BLKRT_PTR(x), BLKRT_PTR(x), BLKRT_INT(1000)};
    uint32_t grid[3] = {1, 1, 1};
    int counts[2];
    for (int pass = 0; pass < 2; pass++) {
        setenv("BLK_LINEINFO", pass ? "1" : "0", 1);
        blkrt_module *m;
        blkrt_kernel *k;
        OK(blkrt_module_load_source(d, text, len, &o, &m));
        OK(blkrt_module_kernel(m, "vector_add", &k));
        OK(blkrt_launch(k, grid, args, 4, NULL));
        OK(blkrt_module_unload(m));
        counts[pass] = cache_count(dir);
    }
    /* pass 0: the description and one variant; pass 1: the description
     * again from the cache, and the variant compiled anew with line info */
    CHECK(counts[1] == counts[0] + 1, "line-info PTX cached apart: %d then %d entries", counts[0], counts[1]);
    OK(blkrt_free(d, x));
    OK(blkrt_device_close(d));
    remove_cache_dir(dir);
    free(plain);
    free(lined);
    free(zero);
    free(text);
    return test_finish("test_jit_lineinfo");
}

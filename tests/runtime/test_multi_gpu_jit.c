/* test_multi_gpu_jit — .blk source on several devices (libblkrt_jit over the
 * fake driver with three devices: 0 is an H200 model, sm_90; 1 and 2 are one
 * A100 model, sm_80):
 *   - blkrt_module_for_device of a module from source compiles each copy for
 *     its own device's arch (the source is kept, not the PTX it became),
 *     and a copy on the CPU device runs on the interpreter;
 *   - the autotuner is keyed per device model: GPUs 1 and 2 share choices
 *     (a key GPU 1 tuned is not tuned again by a tuner of GPU 2 made before
 *     that), GPU 0 tunes its own, and the shared file keeps both GPUs'
 *     keys after each saves. */
#include <dirent.h>
#include <unistd.h>

#include "blk/blkrt_jit.h"
#include "fake_cuda.h"
#include "rt_test.h"

static const char SRC[] =
    "@autotune(key = [n], configs = [{BLOCK = 64}, {BLOCK = 128, num_warps = 2}, {BLOCK = 256}])\n"
    "kernel scale(out: *f32, x: *f32, n: i32, const BLOCK: i32 = 128) {\n"
    "    let o = program_id(0) * BLOCK + arange(0, BLOCK);\n"
    "    store(out + o, load(x + o, o < n) * 2.0, o < n);\n"
    "}\n";

static fake_api F;
static blkrt_device *dev[3];
static char dir[64];

/* libblkrt_jit, remembering the arch of the last PTX compile */
static const blkrt_compiler *real;
static char last_arch[16];

static blkrt_status compile_ptx(const blkrt_compile_request *req, blkrt_compile_result *res) {
    snprintf(last_arch, sizeof last_arch, "%s", req->arch);
    return real->compile_ptx(req, res);
}

static blkrt_compiler recording;

static void grid_of(blkrt_kernel *k, const blkrt_arg *args, int nargs, uint32_t grid[3], void *user) {
    int64_t block = 1;
    blkrt_kernel_const_int(k, "BLOCK", &block);
    grid[0] = (uint32_t)((args[2].v.i + block - 1) / block);
    grid[1] = grid[2] = 1;
}

static int last_device(void) {
    fake_launch l;
    return F.get_launch(F.launch_count() - 1, &l) == 0 ? l.device : -1;
}

static blkrt_status launch(blkrt_module *m, blkrt_ptr out, blkrt_ptr x, int n) {
    blkrt_kernel *k = NULL;
    blkrt_status st = blkrt_module_kernel(m, "scale", &k);
    blkrt_arg a[] = {BLKRT_PTR(out), BLKRT_PTR(x), BLKRT_INT(n)};
    uint32_t grid[3];
    if (!st) grid_of(k, a, 3, grid, NULL);
    return st ? st : blkrt_launch(k, grid, a, 3, NULL);
}

static void test_source_copies(void) {
    blkrt_source_options o = {.path = "scale.blk", .cache_dir = ""};
    blkrt_module *m = NULL, *c1 = NULL, *cpu_copy = NULL;
    OK(blkrt_module_load_source(dev[0], SRC, sizeof SRC - 1, &o, &m));
    if (!m) return;
    OK(launch(m, 0x10000, 0x20000, 1000));
    CHECK(strcmp(last_arch, "sm_90a") == 0 && last_device() == 0, "root: %s on device %d", last_arch, last_device());
    OK(blkrt_module_for_device(m, dev[1], &c1));
    OK(launch(c1, 0x10000, 0x20000, 1000));
    CHECK(strcmp(last_arch, "sm_80") == 0 && last_device() == 1, "copy: %s on device %d", last_arch, last_device());

    /* the CPU device: the same source on the interpreter */
    blkrt_device *cpu = NULL;
    OK(blkrt_device_open(BLKRT_DEVICE_CPU, &cpu));
    OK(blkrt_module_for_device(c1, cpu, &cpu_copy));
    blkrt_ptr x = 0, out = 0;
    OK(blkrt_malloc(cpu, 1000 * 4, &x));
    OK(blkrt_malloc(cpu, 1000 * 4, &out));
    float *hx = (float *)(uintptr_t)x, *ho = (float *)(uintptr_t)out;
    for (int i = 0; i < 1000; i++) hx[i] = (float)i, ho[i] = -1;
    OK(launch(cpu_copy, out, x, 1000));
    int bad = 0;
    for (int i = 0; i < 1000; i++) bad += ho[i] != 2.0f * (float)i;
    CHECK(bad == 0, "the CPU copy computed %d wrong elements", bad);
    OK(blkrt_free(cpu, x));
    OK(blkrt_free(cpu, out));
    OK(blkrt_module_unload(m));
    OK(blkrt_device_close(cpu));
}

/* ---- the autotuner per device model ---- */
static int tuning_files(void) {
    DIR *dp = opendir(dir);
    struct dirent *e;
    int n = 0;
    while (dp && (e = readdir(dp)))
        n += strncmp(e->d_name, "autotune-", 9) == 0 && strstr(e->d_name, ".txt") && !strstr(e->d_name, ".txt.");
    if (dp) closedir(dp);
    return n;
}

static blkrt_autotuner *tuner(blkrt_device *d) {
    blkrt_source_options o = {.path = "scale.blk", .cache_dir = dir};
    blkrt_autotuner *t = NULL;
    OK(blkrt_autotuner_create(d, SRC, sizeof SRC - 1, &o, "scale", &t));
    return t;
}

static void tune(blkrt_autotuner *t, int n, int *config, int *tuned) {
    blkrt_arg a[] = {BLKRT_PTR(0x10000), BLKRT_PTR(0x20000), BLKRT_INT(n)};
    *config = *tuned = -1;
    OK(blkrt_autotuner_launch(t, grid_of, NULL, a, 3, NULL, NULL, config, tuned));
}

static void test_autotune_per_model(void) {
    snprintf(dir, sizeof dir, "/tmp/blk-mgpu-XXXXXX");
    CHECK(mkdtemp(dir) != NULL, "mkdtemp");
    blkrt_autotuner *a1 = tuner(dev[1]), *a2 = tuner(dev[2]), *h0 = tuner(dev[0]);
    if (!a1 || !a2 || !h0) return;
    int config, tuned, first;
    tune(a1, 1000, &config, &tuned);
    CHECK(tuned == 1, "GPU 1 tunes n=1000 first (tuned %d)", tuned);
    CHECK(last_device() == 1, "on its own device");
    first = config;
    tune(a2, 1000, &config, &tuned);
    CHECK(tuned == 0 && config == first, "GPU 2, same model, uses GPU 1's choice (tuned %d, config %d)", tuned, config);
    CHECK(last_device() == 2, "and launches on device 2");
    tune(h0, 1000, &config, &tuned);
    CHECK(tuned == 1, "GPU 0, another model, tunes for itself (tuned %d)", tuned);
    CHECK(tuning_files() == 2, "one tuning file per model: %d", tuning_files());

    /* each tuner saves the union: GPU 2's new key and GPU 1's old one */
    tune(a2, 4096, &config, &tuned);
    CHECK(tuned == 1, "n=4096 is new for the A100 model");
    tune(a1, 4096, &config, &tuned);
    CHECK(tuned == 0, "GPU 1 finds GPU 2's n=4096 (tuned %d)", tuned);
    OK(blkrt_autotuner_destroy(a1));
    OK(blkrt_autotuner_destroy(a2));
    blkrt_autotuner *later = tuner(dev[1]);
    tune(later, 1000, &config, &tuned);
    CHECK(tuned == 0 && config == first, "a new tuner of the model reads n=1000 (tuned %d)", tuned);
    tune(later, 4096, &config, &tuned);
    CHECK(tuned == 0, "and n=4096 (tuned %d)", tuned);
    OK(blkrt_autotuner_destroy(later));
    OK(blkrt_autotuner_destroy(h0));
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    CHECK(system(cmd) == 0, "cleanup");
}

int main(void) {
    if (fake_api_load(&F) != 0) return 1;
    OK(blkrt_jit_install());
    real = blkrt_jit_compiler();
    recording = *real;
    recording.compile_ptx = compile_ptx;
    OK(blkrt_use_compiler(&recording));
    int n = 0;
    OK(blkrt_device_count(&n));
    if (n != 3) {
        fprintf(stderr, "test_multi_gpu_jit: needs FAKE_CUDA_DEVICES=3 (the driver reports %d)\n", n);
        return 1;
    }
    for (int i = 0; i < 3; i++) OK(blkrt_device_open(i, &dev[i]));
    test_source_copies();
    test_autotune_per_model();
    for (int i = 0; i < 3; i++) OK(blkrt_device_close(dev[i]));
    return test_finish("test_multi_gpu_jit");
}

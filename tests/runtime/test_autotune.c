/* test_autotune — the runtime autotuner on the CPU device (through
 * libblkrt_jit): configs from @autotune, every config timed once per key with
 * outputs restored (an accumulating kernel gives the one-launch result),
 * pre/post hooks around each run, the choice reused for the key and
 * persisted; a choice written into the tuning file is used without tuning
 * (config choice), a corrupt file is ignored and rewritten, a new key tunes
 * again, a kernel without @autotune has one config. No timing assertions.
 */
#include <dirent.h>
#include <unistd.h>

#include "blk/blkrt_jit.h"
#include "rt_test.h"

static const char SRC[] =
    "@autotune(key = [n], configs = [{BLOCK = 64}, {BLOCK = 128, num_warps = 2}, {BLOCK = 256}])\n"
    "kernel acc(out: *f32, x: *f32, n: i32, const BLOCK: i32) {\n"
    "    let o = program_id(0) * BLOCK + arange(0, BLOCK);\n"
    "    let m = o < n;\n"
    "    store(out + o, load(out + o, m) + load(x + o, m), m);\n"
    "}\n"
    "kernel plain(out: *f32, n: i32, const BLOCK: i32 = 32) {\n"
    "    let o = program_id(0) * BLOCK + arange(0, BLOCK);\n"
    "    store(out + o, 7.0, o < n);\n"
    "}\n";

static blkrt_device *cpu;
static char dir[256];
static int hooks;

static void grid_of(blkrt_kernel *k, const blkrt_arg *args, int nargs, uint32_t grid[3], void *user) {
    int64_t block = 1;
    blkrt_kernel_const_int(k, "BLOCK", &block);
    grid[0] = (uint32_t)((args[2].v.i + block - 1) / block);
    grid[1] = grid[2] = 1;
}

static void count_hook(void *user) { (*(int *)user)++; }

static blkrt_autotuner *make(const char *kernel) {
    blkrt_source_options o = {.path = "acc.blk", .cache_dir = dir};
    blkrt_autotuner *t = NULL;
    OK(blkrt_autotuner_create(cpu, SRC, sizeof SRC - 1, &o, kernel, &t));
    return t;
}

/* The single tuning file of dir (its path in buf); 0 if not exactly one. */
static int tuning_file(char *buf, size_t n) {
    DIR *dp = opendir(dir);
    struct dirent *e;
    int count = 0;
    while (dp && (e = readdir(dp)))
        if (strncmp(e->d_name, "autotune-", 9) == 0 && strstr(e->d_name, ".txt") && !strstr(e->d_name, ".txt."))
            count++, snprintf(buf, n, "%s/%s", dir, e->d_name);
    if (dp) closedir(dp);
    return count == 1;
}

static char *slurp(const char *path) {
    static char text[8192];
    FILE *f = fopen(path, "r");
    size_t n = f ? fread(text, 1, sizeof text - 1, f) : 0;
    if (f) fclose(f);
    text[n] = 0;
    return text;
}

/* out = 1, x = i; one tuner launch; every element must be 1 + i. */
static void run(blkrt_autotuner *t, int n, int *config, int *tuned, int restore) {
    blkrt_ptr out, x;
    OK(blkrt_malloc(cpu, (size_t)n * 4, &out));
    OK(blkrt_malloc(cpu, (size_t)n * 4, &x));
    float *ho = (float *)(uintptr_t)out, *hx = (float *)(uintptr_t)x;
    for (int i = 0; i < n; i++) ho[i] = 1.0f, hx[i] = (float)i;
    size_t bytes[3] = {(size_t)n * 4, 0, 0};
    blkrt_autotune_options o = {.restore_bytes = restore ? bytes : NULL, .pre_hook = count_hook,
                                .post_hook = count_hook, .hook_user = &hooks, .reps = 2};
    blkrt_arg args[] = {BLKRT_PTR(out), BLKRT_PTR(x), BLKRT_INT(n)};
    OK(blkrt_autotuner_launch(t, grid_of, NULL, args, 3, &o, NULL, config, tuned));
    int bad = 0;
    for (int i = 0; i < n; i++) bad += ho[i] != 1.0f + (float)i;
    CHECK(!restore || bad == 0, "n=%d: %d elements differ from one launch's result", n, bad);
    OK(blkrt_free(cpu, out));
    OK(blkrt_free(cpu, x));
}

int main(void) {
    OK(blkrt_jit_install());
    OK(blkrt_device_open(BLKRT_DEVICE_CPU, &cpu));
    snprintf(dir, sizeof dir, "/tmp/blk-autotune-XXXXXX");
    CHECK(mkdtemp(dir) != NULL, "mkdtemp");

    blkrt_autotuner *t = make("acc");
    int n = 0, config = -1, tuned = -1;
    const char *text;
    blkrt_kernel *k;
    OK(blkrt_autotuner_num_configs(t, &n));
    CHECK(n == 3, "3 configs, got %d", n);
    OK(blkrt_autotuner_config(t, 1, &text, &k));
    CHECK(strcmp(text, "BLOCK=128,num_warps=2") == 0, "config 1 is '%s'", text);
    blkrt_kernel_info info;
    OK(blkrt_kernel_get_info(k, &info));
    CHECK(info.num_warps == 2, "config 1 compiled with num_warps 2, got %d", info.num_warps);
    FAILS(blkrt_autotuner_config(t, 3, &text, &k), BLKRT_ERR_NOT_FOUND, "no config 3");

    /* first launch of a key: every config timed (1 warm-up + 2 runs, a pre
     * and a post hook each), outputs restored, the choice persisted */
    hooks = 0;
    run(t, 1000, &config, &tuned, 1);
    CHECK(tuned == 1 && config >= 0 && config < 3, "tuned %d, config %d", tuned, config);
    CHECK(hooks == 3 * 3 * 2, "hooks around every run: %d", hooks);
    int first = config;
    hooks = 0;
    run(t, 1000, &config, &tuned, 1);
    CHECK(tuned == 0 && config == first && hooks == 0, "same key: no tuning (tuned %d, config %d)", tuned, config);
    char path[600];
    CHECK(tuning_file(path, sizeof path), "one tuning file in %s", dir);
    char *file = slurp(path);
    CHECK(strncmp(file, "blk-autotune-file v1 configs=3\n", 31) == 0, "tuning file header: %s", file);
    char key[256] = "";
    sscanf(file + 31, "%255[^\t]", key);
    CHECK(strncmp(key, "1000|", 5) == 0, "key of n=1000: '%s'", key);
    OK(blkrt_autotuner_destroy(t));

    /* a second tuner (another process, as far as the file is concerned)
     * reads the choice: here one written by hand, config 2 */
    FILE *f = fopen(path, "w");
    fprintf(f, "blk-autotune-file v1 configs=3\n%s\t2\tBLOCK=256\n", key);
    fclose(f);
    t = make("acc");
    run(t, 1000, &config, &tuned, 1);
    CHECK(tuned == 0 && config == 2, "the file's choice: tuned %d, config %d", tuned, config);
    /* a new key tunes and adds a line */
    run(t, 4096, &config, &tuned, 1);
    CHECK(tuned == 1, "n=4096 is a new key");
    file = slurp(path);
    CHECK(strstr(file, "\t2\tBLOCK=256\n") && strstr(file, "4096|"), "both keys in the file: %s", file);
    OK(blkrt_autotuner_destroy(t));

    /* a corrupt file (or one whose config text no longer matches) is
     * ignored: tuning again, and the file rewritten whole */
    const char *bad[] = {"garbage\n", "blk-autotune-file v1 configs=3\nno tabs here\n",
                         "blk-autotune-file v1 configs=3\n1000|d16,d16,-\t9\tBLOCK=64\n",
                         "blk-autotune-file v1 configs=2\n"};
    for (int i = 0; i < 4; i++) {
        f = fopen(path, "w");
        fprintf(f, "%s%s\t0\tBLOCK=32\n", bad[i], key);
        fclose(f);
        t = make("acc");
        run(t, 1000, &config, &tuned, 1);
        CHECK(tuned == 1, "corrupt file %d ignored", i);
        file = slurp(path);
        CHECK(strncmp(file, "blk-autotune-file v1 configs=3\n", 31) == 0 && !strstr(file, "BLOCK=32"),
              "corrupt file %d rewritten: %s", i, file);
        OK(blkrt_autotuner_destroy(t));
    }

    /* no @autotune: the source's values, one config, nothing to tune */
    t = make("plain");
    OK(blkrt_autotuner_num_configs(t, &n));
    OK(blkrt_autotuner_config(t, 0, &text, NULL));
    CHECK(n == 1 && strcmp(text, "") == 0, "plain: %d configs ('%s')", n, text);
    blkrt_ptr out;
    OK(blkrt_malloc(cpu, 400, &out));
    blkrt_arg args[] = {BLKRT_PTR(out), BLKRT_INT(100)};
    uint32_t g[3] = {4, 1, 1};
    (void)g;
    OK(blkrt_autotuner_launch(t, NULL, NULL, args, 2, NULL, NULL, &config, &tuned));
    CHECK(config == 0 && tuned == 0, "plain launch");
    CHECK(((float *)(uintptr_t)out)[31] == 7.0f, "plain kernel ran (grid 1: the first BLOCK elements)");
    OK(blkrt_free(cpu, out));
    OK(blkrt_autotuner_destroy(t));

    FAILS(blkrt_autotuner_destroy(NULL), BLKRT_ERR_INVALID_HANDLE, "not an autotuner");
    blkrt_source_options o = {.cache_dir = ""};
    FAILS(blkrt_autotuner_create(cpu, SRC, sizeof SRC - 1, &o, "nope", &t), BLKRT_ERR_COMPILE, "nope");
    OK(blkrt_device_close(cpu));
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    CHECK(system(cmd) == 0, "cleanup");
    return test_finish("test_autotune");
}

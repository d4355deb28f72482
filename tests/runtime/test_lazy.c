/* test_lazy — kernels from source on the fake driver, compiled one variant
 * at a time by the launch that needs it (runtime/lazy.c, docs/runtime.md
 * "Lazy variants"), through libblkrt_jit wrapped by a counting compiler:
 *
 *   - a load runs only the front end (describe): no PTX, no driver load;
 *     kernel info, params and consts work before any variant exists;
 *   - the argument key (eq1 / d16 / nothing per parameter) picks the entry:
 *     stride 1 gets the eq1 variant, 3 the unspecialised stride, 16 d16;
 *     @do_not_specialize parameters never enter the key;
 *   - one compile and one cuModuleLoadDataEx per new key, none for a known
 *     key; the disk cache holds the description and every variant, so a
 *     second module compiles nothing;
 *   - blkrt_launch_raw compiles the unspecialised variant;
 *   - errors come back from the launch as status + message: a compiler
 *     failure (injected), a real backend error (a kernel too large), a
 *     driver failure (then a retry works), PTX for the wrong kernel;
 *   - 8 threads launching one new key at once compile it once; 8 threads
 *     with 8 keys compile 8;
 *   - a compiled variant's cluster= (added to its blk-meta line by the
 *     wrapper) reaches the launch: cuLaunchKernelEx where the grid divides.
 *
 *   rt_test_lazy
 */
#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>

#include "blk/blkrt_jit.h"
#include "fake_cuda.h"
#include "rt_test.h"

static const char SRC[] =
    "kernel strided(x: *f32, out: *f32, stride_x: i32, n: i32, const BLOCK: i32 = 256) {\n"
    "    let offs = program_id(0) * BLOCK + arange(0, BLOCK);\n"
    "    let m = offs < n;\n"
    "    store(out + offs, load(x + offs * stride_x, m), m);\n"
    "}\n"
    "@do_not_specialize(stride, n)\n"
    "kernel rows(x: *f32, stride: i32, n: i32, s: f32, const BLOCK: i32 = 128) {\n"
    "    let offs = arange(0, BLOCK);\n"
    "    let p = x + program_id(0) * stride + offs;\n"
    "    store(p, load(p, offs < n) * s, offs < n);\n"
    "}\n";

/* The GPU backend refuses this (its size budget); the front end does not. */
static const char HUGE[] = "@num_warps(1) kernel huge(x: *f32) {\n"
                           "    var v = load(x + arange(0, 1024));\n"
                           "    for i in static_range(4000) { v = v * 1.0001 + 0.5; }\n"
                           "    store(x + arange(0, 1024), v);\n"
                           "}\n";

static fake_api F;
static char dir[64];

/* libblkrt_jit, counted, with failures on demand */
static const blkrt_compiler *real;
static atomic_int n_describe, n_compile;
static char fail_if[64];        /* compile_ptx fails for variants containing this */
static atomic_int wrong_kernel; /* compile_ptx compiles "rows" whatever is asked */
static atomic_int add_cluster;  /* compile_ptx appends " cluster=2" to the blk-meta line */
static char last_variant[256];

/* " cluster=2" at the end of the (first) blk-meta line of res->text, unless
 * the compiler wrote a cluster= itself. */
static blkrt_status with_cluster(blkrt_compile_result *res) {
    char *meta = res->text ? strstr(res->text, "// blk-meta v1 ") : NULL;
    if (!meta) return BLKRT_OK;
    const char *eol = strchr(meta, '\n');
    size_t at = eol ? (size_t)(eol - res->text) : res->len;
    const char *c = strstr(meta, " cluster=");
    if (c && (size_t)(c - res->text) < at) return BLKRT_OK;
    static const char add[] = " cluster=2";
    char *t = malloc(res->len + sizeof add);
    if (!t) return BLKRT_ERR_OUT_OF_MEMORY;
    memcpy(t, res->text, at);
    memcpy(t + at, add, sizeof add - 1);
    memcpy(t + at + sizeof add - 1, res->text + at, res->len - at);
    t[res->len + sizeof add - 1] = 0;
    free(res->text);
    res->text = t;
    res->len += sizeof add - 1;
    return BLKRT_OK;
}

static blkrt_status describe(const blkrt_compile_request *req, blkrt_compile_result *res) {
    atomic_fetch_add(&n_describe, 1);
    return real->describe(req, res);
}

static blkrt_status compile_ptx(const blkrt_compile_request *req, blkrt_compile_result *res) {
    atomic_fetch_add(&n_compile, 1);
    if (fail_if[0] && req->variant && strstr(req->variant, fail_if)) {
        res->log = strdup("lazy.blk:4:5: error: injected failure");
        return BLKRT_ERR_COMPILE;
    }
    if (req->variant) snprintf(last_variant, sizeof last_variant, "%s", req->variant);
    blkrt_compile_request r = *req;
    if (atomic_load(&wrong_kernel)) r.kernel = "rows", r.variant = "";
    blkrt_status st = real->compile_ptx(&r, res);
    if (st == BLKRT_OK && atomic_load(&add_cluster)) st = with_cluster(res);
    return st;
}

static blkrt_compiler counting;

static int entries(void) { return cache_count(dir); }

static const char *last_entry(void) {
    static fake_launch l;
    memset(&l, 0, sizeof l);
    if (F.launch_count() == 0 || F.get_launch(F.launch_count() - 1, &l) != 0) return "(none)";
    return l.entry;
}

static blkrt_module *load(blkrt_device *d, const char *src, const char *cache) {
    blkrt_source_options o = {.path = "lazy.blk", .cache_dir = cache};
    blkrt_module *m = NULL;
    OK(blkrt_module_load_source(d, src, strlen(src), &o, &m));
    return m;
}

static blkrt_status strided(blkrt_kernel *k, blkrt_ptr x, int stride, int n) {
    blkrt_arg a[] = {BLKRT_PTR(x), BLKRT_PTR(0x20000), BLKRT_INT(stride), BLKRT_INT(n)};
    uint32_t grid[3] = {(uint32_t)((n + 255) / 256), 1, 1};
    return blkrt_launch(k, grid, a, 4, NULL);
}

/* ---- threads ---- */
static pthread_barrier_t barrier;
static blkrt_kernel *shared_k;
static int thread_bad[8];

static void *same_key(void *arg) {
    int t = (int)(intptr_t)arg;
    pthread_barrier_wait(&barrier);
    for (int i = 0; i < 3; i++) thread_bad[t] += strided(shared_k, 0x10000, 1, 4096 + 16 * t) != BLKRT_OK;
    return NULL;
}

static void *own_key(void *arg) {
    int t = (int)(intptr_t)arg;
    /* 8 keys: x aligned or not, stride 1 / 3, n a multiple of 16 or not */
    blkrt_ptr x = 0x10000 + (blkrt_ptr)(t & 1) * 4;
    int stride = t & 2 ? 3 : 1, n = t & 4 ? 1000 : 4096;
    pthread_barrier_wait(&barrier);
    for (int i = 0; i < 3; i++) thread_bad[t] += strided(shared_k, x, stride, n) != BLKRT_OK;
    return NULL;
}

static int run_threads(void *(*fn)(void *)) {
    pthread_t th[8];
    pthread_barrier_init(&barrier, NULL, 8);
    for (int t = 0; t < 8; t++) thread_bad[t] = 0, pthread_create(&th[t], NULL, fn, (void *)(intptr_t)t);
    int bad = 0;
    for (int t = 0; t < 8; t++) pthread_join(th[t], NULL), bad += thread_bad[t];
    pthread_barrier_destroy(&barrier);
    return bad;
}

int main(void) {
    if (fake_api_load(&F) != 0) {
        fprintf(stderr, "test_lazy: cannot load the fake driver (BLKRT_CUDA_LIBRARY)\n");
        return 1;
    }
    snprintf(dir, sizeof dir, "/tmp/blkrt-lazy-test-XXXXXX");
    if (!mkdtemp(dir)) return 1;
    real = blkrt_jit_compiler();
    counting = *real;
    counting.describe = describe;
    counting.compile_ptx = compile_ptx;
    OK(blkrt_use_compiler(&counting));
    blkrt_device *d;
    OK(blkrt_device_open(0, &d));
    if (!d) return test_finish("test_lazy");
    F.reset();

    /* the load: front end only */
    blkrt_module *m = load(d, SRC, dir);
    if (!m) return test_finish("test_lazy");
    CHECK(n_describe == 1 && n_compile == 0, "a load describes (%d) and compiles nothing (%d)", n_describe, n_compile);
    CHECK(F.count_calls("cuModuleLoadDataEx") == 0, "no driver load");
    CHECK(entries() == 1, "the description is cached (%d entries)", entries());
    blkrt_kernel *k, *kr;
    OK(blkrt_module_kernel(m, "strided", &k));
    OK(blkrt_module_kernel(m, "rows", &kr));
    FAILS(blkrt_module_kernel(m, "strided__d16_d16_eq1_d16", &k), BLKRT_ERR_NOT_FOUND,
          "module has no kernel named 'strided__d16_d16_eq1_d16' (blk-meta kernels: strided, rows)");
    OK(blkrt_module_kernel(m, "strided", &k));
    blkrt_kernel_info info;
    OK(blkrt_kernel_get_info(k, &info));
    CHECK(info.checked && info.num_params == 4 && info.num_variants == 0 && info.num_warps == 4 && info.shared_bytes == 0,
          "before any launch: %d params, %d variants, %d warps, %d shared", info.num_params, info.num_variants,
          info.num_warps, info.shared_bytes);
    int64_t block = 0;
    OK(blkrt_kernel_const_int(k, "BLOCK", &block));
    CHECK(block == 256, "BLOCK = %lld", (long long)block);
    const char *jl = NULL;
    OK(blkrt_module_jit_log(m, &jl));
    CHECK(jl && !*jl, "no JIT log before a variant is loaded");

    /* one variant per key, compiled by the first launch with it */
    struct {
        blkrt_ptr x;
        int stride, n;
        const char *entry, *variant;
        int compiles;
    } cases[] = {
        {0x10000, 1, 4096, "strided__d16_d16_eq1_d16", "x=d16,out=d16,stride_x=eq1,n=d16", 1},
        {0x10000, 1, 8192, "strided__d16_d16_eq1_d16", NULL, 1}, /* the same key */
        {0x10000, 3, 4096, "strided__d16_d16_x_d16", "x=d16,out=d16,n=d16", 2},
        {0x10000, 16, 4096, "strided__d16_d16_d16_d16", "x=d16,out=d16,stride_x=d16,n=d16", 3},
        {0x10004, 1, 1, "strided__x_d16_eq1_eq1", "out=d16,stride_x=eq1,n=eq1", 4},
        {0x10000, 3, 4096, "strided__d16_d16_x_d16", NULL, 4},
    };
    for (int i = 0; i < 6; i++) {
        int launches = F.launch_count();
        OK(strided(k, cases[i].x, cases[i].stride, cases[i].n));
        CHECK(F.launch_count() == launches + 1 && !strcmp(last_entry(), cases[i].entry), "case %d: entry %s, expected %s",
              i, last_entry(), cases[i].entry);
        CHECK(n_compile == cases[i].compiles && F.count_calls("cuModuleLoadDataEx") == cases[i].compiles,
              "case %d: %d compiles, %d driver loads, expected %d", i, n_compile,
              F.count_calls("cuModuleLoadDataEx"), cases[i].compiles);
        if (cases[i].variant)
            CHECK(!strcmp(last_variant, cases[i].variant), "case %d: compiled variant '%s', expected '%s'", i,
                  last_variant, cases[i].variant);
    }
    OK(blkrt_kernel_get_info(k, &info));
    CHECK(info.num_variants == 4 && info.num_warps == 4, "4 variants compiled, info says %d", info.num_variants);
    CHECK(entries() == 1 + 4, "the description and 4 variants cached (%d)", entries());
    OK(blkrt_module_jit_log(m, &jl));
    CHECK(jl && strstr(jl, "fake driver"), "the JIT log of the latest variant load: '%s'", jl ? jl : "(null)");

    /* @do_not_specialize(stride, n): only x and (never) s make the key */
    blkrt_arg ra[] = {BLKRT_PTR(0x10000), BLKRT_INT(1), BLKRT_INT(1), BLKRT_FLOAT(2.0)};
    uint32_t g1[3] = {1, 1, 1};
    OK(blkrt_launch(kr, g1, ra, 4, NULL));
    CHECK(!strcmp(last_entry(), "rows__d16_x_x_x") && !strcmp(last_variant, "x=d16"), "rows: entry %s, variant %s",
          last_entry(), last_variant);
    ra[1] = BLKRT_INT(4096), ra[2] = BLKRT_INT(4096);
    int before = n_compile;
    OK(blkrt_launch(kr, g1, ra, 4, NULL));
    CHECK(n_compile == before && !strcmp(last_entry(), "rows__d16_x_x_x"), "stride and n are not in the key");
    ra[0] = BLKRT_PTR(0x10008);
    OK(blkrt_launch(kr, g1, ra, 4, NULL));
    CHECK(n_compile == before + 1 && !strcmp(last_entry(), "rows") && !strcmp(last_variant, ""),
          "a misaligned x: the unspecialised variant (entry %s)", last_entry());

    /* raw launches run the unspecialised variant, compiled for them */
    blkrt_ptr xp = 0x10000, op = 0x20000;
    int32_t st1 = 1, nn = 256;
    void *params[] = {&xp, &op, &st1, &nn};
    uint32_t blk[3] = {256, 1, 1};
    before = n_compile;
    OK(blkrt_launch_raw(k, g1, blk, 0, params, NULL));
    CHECK(!strcmp(last_entry(), "strided") && n_compile == before + 1, "raw: entry %s", last_entry());
    OK(blkrt_launch_raw(k, g1, blk, 0, params, NULL));
    CHECK(n_compile == before + 1, "raw again: nothing compiled");

    /* a second module from the cache: nothing described or compiled again,
     * each variant loaded into the driver for this module */
    int loads = F.count_calls("cuModuleLoadDataEx"), described = n_describe;
    before = n_compile;
    blkrt_module *m2 = load(d, SRC, dir);
    blkrt_kernel *k2 = NULL;
    if (m2) OK(blkrt_module_kernel(m2, "strided", &k2));
    if (k2) {
        OK(strided(k2, 0x10000, 1, 4096));
        OK(strided(k2, 0x10000, 3, 4096));
    }
    CHECK(n_describe == described && n_compile == before, "from the cache: %d describes, %d compiles",
          n_describe - described, n_compile - before);
    CHECK(F.count_calls("cuModuleLoadDataEx") == loads + 2, "two variants loaded for the second module");
    if (m2) OK(blkrt_module_unload(m2));

    /* errors of a lazy compile come back from the launch */
    blkrt_module *m3 = load(d, SRC, ""); /* no cache */
    blkrt_kernel *k3 = NULL;
    if (m3) OK(blkrt_module_kernel(m3, "strided", &k3));
    if (k3) {
        snprintf(fail_if, sizeof fail_if, "stride_x=eq1");
        int launches = F.launch_count();
        loads = F.count_calls("cuModuleLoadDataEx");
        FAILS_EXACTLY(strided(k3, 0x10000, 1, 4096), BLKRT_ERR_COMPILE,
                      "lazy.blk: compiling kernel 'strided' variant 'x=d16,out=d16,stride_x=eq1,n=d16' for sm_90a "
                      "failed:\nlazy.blk:4:5: error: injected failure");
        before = n_compile;
        FAILS(strided(k3, 0x10000, 1, 4096), BLKRT_ERR_COMPILE, "injected failure");
        CHECK(n_compile == before + 1, "a failed variant is compiled again by the next launch");
        CHECK(F.launch_count() == launches && F.count_calls("cuModuleLoadDataEx") == loads, "nothing reached the driver");
        OK(strided(k3, 0x10000, 3, 4096)); /* other keys still work */
        fail_if[0] = 0;
        OK(strided(k3, 0x10000, 1, 4096));
        CHECK(!strcmp(last_entry(), "strided__d16_d16_eq1_d16"), "after the failure: %s", last_entry());
        /* the driver refuses the load: the launch says so, the next one loads */
        F.fail_next("cuModuleLoadDataEx", 218);
        FAILS(strided(k3, 0x10004, 1, 4096), BLKRT_ERR_JIT, "cuModuleLoadDataEx: CUDA_ERROR_INVALID_PTX");
        OK(strided(k3, 0x10004, 1, 4096));
        CHECK(!strcmp(last_entry(), "strided__x_d16_eq1_d16"), "retried: %s", last_entry());
        /* a compiler that returns another kernel's PTX */
        atomic_store(&wrong_kernel, 1);
        FAILS(strided(k3, 0x10004, 3, 4096), BLKRT_ERR_META,
              "kernel 'strided': the PTX compiled for one variant does not describe one entry of it");
        atomic_store(&wrong_kernel, 0);
        OK(blkrt_kernel_get_info(k3, &info));
        CHECK(info.num_variants == 3, "failed compiles add no variant (%d)", info.num_variants);
    }
    if (m3) OK(blkrt_module_unload(m3));

    /* a variant compiled with cluster=2: in clusters of 2 where the grid
     * divides into them, a plain launch where not */
    blkrt_module *mc = load(d, SRC, ""); /* no cache: the wrapper's text is not kept */
    blkrt_kernel *kc = NULL;
    if (mc) OK(blkrt_module_kernel(mc, "strided", &kc));
    if (kc) {
        atomic_store(&add_cluster, 1);
        int ex = F.count_calls("cuLaunchKernelEx"), plain = F.count_calls("cuLaunchKernel");
        unsigned cl[3] = {0, 0, 0};
        OK(strided(kc, 0x10000, 3, 4096)); /* 16 programs */
        CHECK(F.get_cluster(F.launch_count() - 1, cl) == 0 && cl[0] == 2 && cl[1] == 1 && cl[2] == 1,
              "grid 16: clusters (%u,%u,%u)", cl[0], cl[1], cl[2]);
        CHECK(F.count_calls("cuLaunchKernelEx") == ex + 1 && F.count_calls("cuLaunchKernel") == plain,
              "grid 16 through cuLaunchKernelEx");
        before = n_compile;
        OK(strided(kc, 0x10000, 3, 768)); /* the same key, 3 programs */
        CHECK(n_compile == before && F.count_calls("cuLaunchKernel") == plain + 1 &&
                  F.count_calls("cuLaunchKernelEx") == ex + 1,
              "grid 3: the same variant through cuLaunchKernel");
        atomic_store(&add_cluster, 0);
    }
    if (mc) OK(blkrt_module_unload(mc));

    /* a real backend error: the front end accepts the kernel, codegen not */
    blkrt_module *mh = load(d, HUGE, "");
    blkrt_kernel *kh = NULL;
    if (mh) OK(blkrt_module_kernel(mh, "huge", &kh));
    if (kh) {
        blkrt_arg ha[] = {BLKRT_PTR(0x10000)};
        FAILS(blkrt_launch(kh, g1, ha, 1, NULL), BLKRT_ERR_COMPILE,
              "lazy.blk: compiling kernel 'huge' variant 'x=d16' for sm_90a failed:\nlazy.blk:3:");
        FAILS(blkrt_launch(kh, g1, ha, 1, NULL), BLKRT_ERR_COMPILE, "kernel too large for the GPU backend");
    }
    if (mh) OK(blkrt_module_unload(mh));

    /* threads: one new key from 8 threads at once is compiled once */
    blkrt_module *mt = load(d, SRC, "");
    if (mt && blkrt_module_kernel(mt, "strided", &shared_k) == BLKRT_OK) {
        before = n_compile;
        loads = F.count_calls("cuModuleLoadDataEx");
        int launches = F.launch_count();
        CHECK(run_threads(same_key) == 0, "8 threads, one key: every launch succeeds");
        CHECK(n_compile == before + 1 && F.count_calls("cuModuleLoadDataEx") == loads + 1,
              "one key from 8 threads: %d compiles, %d loads", n_compile - before,
              F.count_calls("cuModuleLoadDataEx") - loads);
        CHECK(F.launch_count() == launches + 24, "24 launches recorded");
        CHECK(run_threads(own_key) == 0, "8 threads, 8 keys: every launch succeeds");
        CHECK(n_compile == before + 8, "8 keys (one already known) from 8 threads: %d compiles", n_compile - before);
        OK(blkrt_kernel_get_info(shared_k, &info));
        CHECK(info.num_variants == 8, "8 variants (%d)", info.num_variants);
        OK(blkrt_module_unload(mt));
    }
    OK(blkrt_module_unload(m));
    OK(blkrt_device_close(d));
    CHECK(F.ctx_depth() == 0, "no context left current after close");
    remove_cache_dir(dir);
    return test_finish("test_lazy");
}

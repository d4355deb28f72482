/* test_jit_threads — JIT compilation from source from 8 threads at once.
 *
 * Every thread, in two rounds, through blkrt_module_load_source:
 *   - on the fake driver (devices 0 = sm_90a and 1 = sm_80, thread t uses
 *     t % 2), sharing one disk cache directory:
 *       A: the same kernel with the same const (S = 3): every thread of a
 *          device races to compile and store one cache entry;
 *       B: the same kernel with its own const (S = 100 + t): one entry each;
 *       C: the whole module (both kernels, defaults);
 *       E: a source with an error: COMPILE, its own message, never cached;
 *     and launches every kernel it got, the argument n carrying (thread,
 *     round, module, launch) so the fake's launch records can be checked one
 *     by one (device, entry, grid, parameter);
 *   - on the CPU interpreter device: the module with S = t + 1 and
 *     C = t + 0.5, both kernels launched on blkrt memory, results checked
 *     against C.
 * Loads run the front end only; each launch with a new argument key
 * compiles that variant (lazy.c), so threads also race to compile the same
 * variant of a shared module (A, C) and of modules loaded from one cache
 * entry. Afterwards: one cache entry per module description (2 + 8 + 2) and
 * one per distinct (module, kernel, argument key) launched, every launch
 * recorded once, no context left current. Then every cache entry is damaged
 * (truncated, garbage, a flipped payload byte) and 8 threads reload at once
 * and launch a variant they launched before: each gets its right module
 * back, and the damaged entries come back whole. Last, cache directories
 * that cannot be written (/proc; a mode-0500 directory when not root) cost a
 * compile, not a failure. Must be clean under ThreadSanitizer (make TSAN=1)
 * and ASan/LSan (make SANITIZE=1).
 *
 *   rt_test_jit_threads
 */
#include <dirent.h>
#include <math.h>
#include <pthread.h>
#include <sys/stat.h>
#include <stdint.h>
#include <unistd.h>

#include "blk/blkrt_jit.h"
#include "fake_cuda.h"
#include "rt_test.h"

enum { THREADS = 8, ROUNDS = 2, LAUNCHES = 4, N = 200 };

static const char SRC[] =
    "// test_jit_threads: two kernels, two consts\n"
    "kernel scale(x: *f32, out: *f32, n: i32, const S: i32 = 1, const BLOCK: i32 = 64) {\n"
    "    let o = program_id(0) * BLOCK + arange(0, BLOCK);\n"
    "    let m = o < n;\n"
    "    let v = load(x + o, m);\n"
    "    store(out + o, v * (S as f32) + exp(v) * 0.0, m);\n"
    "}\n"
    "kernel addc(x: *f32, out: *f32, n: i32, const C: f32 = 2.5, const BLOCK: i32 = 32) {\n"
    "    let o = program_id(0) * BLOCK + arange(0, BLOCK);\n"
    "    let m = o < n;\n"
    "    store(out + o, load(x + o, m) + C, m);\n"
    "}\n";
static const char BAD[] = "kernel broken(x: *f32) {\n    let y = x + ;\n}\n";

static fake_api F;
static blkrt_device *gpu[2], *cpu;
static char cache[64];
static pthread_barrier_t barrier;
static int thread_failures[THREADS];
static int launches_made[THREADS];

/* n = 1 + t * 100000 + round * 10000 + module * 1000 + j: unique per
 * launch, never 0 (the grid is cdiv(n, BLOCK)), in range of i32, and
 * decodable from the fake's record. */
static int32_t encode(int t, int r, int mod, int j) { return 1 + t * 100000 + r * 10000 + mod * 1000 + j; }

/* Launch `name` of m on the fake LAUNCHES times; 0 on success. */
static int gpu_launches(int t, int r, int mod, blkrt_module *m, const char *name, int64_t want_s) {
    blkrt_kernel *k = NULL;
    if (blkrt_module_kernel(m, name, &k) != BLKRT_OK) return 1;
    int bad = 0;
    if (want_s >= 0) {
        int64_t s = -1;
        if (blkrt_kernel_const_int(k, "S", &s) != BLKRT_OK || s != want_s) bad++;
    }
    int64_t block = 0;
    if (blkrt_kernel_const_int(k, "BLOCK", &block) != BLKRT_OK || block <= 0) return bad + 1;
    for (int j = 0; j < LAUNCHES; j++) {
        int32_t n = encode(t, r, mod, j);
        /* 16-byte aligned pointers or not: both variants get used */
        blkrt_arg a[] = {BLKRT_PTR(0x10000 + (uint64_t)(j & 1) * 4), BLKRT_PTR(0x20000), BLKRT_INT(n)};
        uint32_t grid[3] = {(uint32_t)((n + block - 1) / block), 1, 1};
        if (blkrt_launch(k, grid, a, 3, NULL) != BLKRT_OK) {
            bad++;
            fprintf(stderr, "thread %d: launch of %s: %s\n", t, name, blkrt_last_error());
        } else {
            launches_made[t]++;
        }
    }
    return bad;
}

static int cpu_check(int t) {
    int bad = 0;
    blkrt_define defs[] = {{.name = "S", .ival = t + 1}, {.name = "C", .is_float = 1, .fval = t + 0.5}};
    blkrt_source_options o = {.path = "jit_threads.blk", .defines = defs, .ndefines = 2};
    blkrt_module *m = NULL;
    if (blkrt_module_load_source(cpu, SRC, sizeof SRC - 1, &o, &m) != BLKRT_OK) return 1;
    float x[N], out[N];
    for (int i = 0; i < N; i++) x[i] = (float)(i - 50) * 0.25f;
    blkrt_ptr dx = 0, dout = 0;
    if (blkrt_malloc(cpu, sizeof x, &dx) || blkrt_malloc(cpu, sizeof out, &dout) ||
        blkrt_memcpy_htod(cpu, dx, x, sizeof x))
        bad++;
    const char *names[2] = {"scale", "addc"};
    for (int kk = 0; kk < 2 && !bad; kk++) {
        blkrt_kernel *k = NULL;
        int64_t block = 0;
        if (blkrt_module_kernel(m, names[kk], &k) || blkrt_kernel_const_int(k, "BLOCK", &block)) {
            bad++;
            break;
        }
        blkrt_arg a[] = {BLKRT_PTR(dx), BLKRT_PTR(dout), BLKRT_INT(N)};
        uint32_t grid[3] = {(uint32_t)((N + block - 1) / block), 1, 1};
        if (blkrt_memset(cpu, dout, 0, sizeof out) || blkrt_launch(k, grid, a, 3, NULL) ||
            blkrt_memcpy_dtoh(cpu, out, dout, sizeof out)) {
            bad++;
            break;
        }
        for (int i = 0; i < N; i++) {
            float want = kk == 0 ? x[i] * (float)(t + 1) : x[i] + (float)(t + 0.5);
            if (fabsf(out[i] - want) > 1e-5f * (1.0f + fabsf(want))) {
                bad++;
                break;
            }
        }
    }
    if (dx) bad += blkrt_free(cpu, dx) != BLKRT_OK;
    if (dout) bad += blkrt_free(cpu, dout) != BLKRT_OK;
    bad += blkrt_module_unload(m) != BLKRT_OK;
    return bad;
}

static void *worker(void *arg) {
    int t = (int)(intptr_t)arg;
    blkrt_device *d = gpu[t % 2];
    int bad = 0;
#define TCHECK(c)                                                                           \
    do {                                                                                    \
        if (!(c)) {                                                                         \
            bad++;                                                                          \
            fprintf(stderr, "thread %d line %d: %s: %s\n", t, __LINE__, #c, blkrt_last_error()); \
        }                                                                                   \
    } while (0)
    for (int r = 0; r < ROUNDS; r++) {
        pthread_barrier_wait(&barrier);
        blkrt_module *ma = NULL, *mb = NULL, *mc = NULL, *me = NULL;
        blkrt_define same = {.name = "S", .ival = 3};
        blkrt_define own = {.name = "S", .ival = 100 + t};
        blkrt_source_options oa = {.path = "jit_threads.blk", .defines = &same, .ndefines = 1, .kernel = "scale",
                                   .cache_dir = cache};
        blkrt_source_options ob = oa;
        ob.defines = &own;
        blkrt_source_options oc = {.path = "jit_threads.blk", .cache_dir = cache};
        blkrt_source_options oe = {.path = "jit_threads_bad.blk", .cache_dir = cache};
        /* the order differs by thread so that every kind overlaps every other */
        for (int step = 0; step < 4; step++) {
            switch ((step + t) % 4) {
            case 0: TCHECK(blkrt_module_load_source(d, SRC, sizeof SRC - 1, &oa, &ma) == BLKRT_OK); break;
            case 1: TCHECK(blkrt_module_load_source(d, SRC, sizeof SRC - 1, &ob, &mb) == BLKRT_OK); break;
            case 2: TCHECK(blkrt_module_load_source(d, SRC, sizeof SRC - 1, &oc, &mc) == BLKRT_OK); break;
            default:
                TCHECK(blkrt_module_load_source(d, BAD, sizeof BAD - 1, &oe, &me) == BLKRT_ERR_COMPILE);
                TCHECK(me == NULL);
                TCHECK(strstr(blkrt_last_error(), "jit_threads_bad.blk: compiling for ") != NULL);
                TCHECK(strstr(blkrt_last_error(), "jit_threads_bad.blk:2:") != NULL);
                break;
            }
        }
        if (ma) bad += gpu_launches(t, r, 0, ma, "scale", 3);
        if (mb) bad += gpu_launches(t, r, 1, mb, "scale", 100 + t);
        if (mc) {
            bad += gpu_launches(t, r, 2, mc, "scale", 1);
            bad += gpu_launches(t, r, 3, mc, "addc", -1);
        }
        if (ma) {
            blkrt_kernel *k = NULL;
            TCHECK(blkrt_module_kernel(ma, "addc", &k) == BLKRT_ERR_NOT_FOUND); /* only "scale" was built */
        }
        /* the CPU interpreter device: compiled concurrently, results checked */
        bad += cpu_check(t);
        pthread_barrier_wait(&barrier); /* everyone launched before anyone unloads */
        if (ma) TCHECK(blkrt_module_unload(ma) == BLKRT_OK);
        if (mb) TCHECK(blkrt_module_unload(mb) == BLKRT_OK);
        if (mc) TCHECK(blkrt_module_unload(mc) == BLKRT_OK);
    }
    /* the primary context stays bound to a thread that had none (rt_ctx_enter),
     * never stacked: one level at most */
    TCHECK(F.ctx_depth() <= 1);
#undef TCHECK
    thread_failures[t] = bad;
    return NULL;
}

/* Phase 2: every entry damaged (truncated, garbage, a flipped payload byte),
 * then 8 threads load A and B again at once and launch the variant of their
 * own first launch: each must get the right module and variant (recompiled),
 * and the entries come back whole. */
static void *reloader(void *arg) {
    int t = (int)(intptr_t)arg;
    int bad = 0;
    blkrt_define same = {.name = "S", .ival = 3}, own = {.name = "S", .ival = 100 + t};
    blkrt_source_options o = {.path = "jit_threads.blk", .defines = &same, .ndefines = 1, .kernel = "scale",
                              .cache_dir = cache};
    pthread_barrier_wait(&barrier);
    for (int i = 0; i < 2; i++) {
        blkrt_module *m = NULL;
        blkrt_kernel *k = NULL;
        int64_t s = -1;
        o.defines = i ? &own : &same;
        int32_t n = encode(t, 0, i, 0); /* launched in round 0: its variant is cached */
        blkrt_arg a[] = {BLKRT_PTR(0x10000), BLKRT_PTR(0x20000), BLKRT_INT(n)};
        uint32_t grid[3] = {(uint32_t)((n + 63) / 64), 1, 1};
        if (blkrt_module_load_source(gpu[t % 2], SRC, sizeof SRC - 1, &o, &m) != BLKRT_OK ||
            blkrt_module_kernel(m, "scale", &k) != BLKRT_OK || blkrt_kernel_const_int(k, "S", &s) != BLKRT_OK ||
            s != (i ? 100 + t : 3) || blkrt_launch(k, grid, a, 3, NULL) != BLKRT_OK) {
            bad++;
            fprintf(stderr, "reload thread %d: %s\n", t, blkrt_last_error());
        }
        if (m) bad += blkrt_module_unload(m) != BLKRT_OK;
    }
    thread_failures[t] = bad;
    return NULL;
}

static void damage_entries(void) {
    DIR *dd = opendir(cache);
    struct dirent *e;
    char p[400];
    int i = 0;
    while (dd && (e = readdir(dd))) {
        if (!strstr(e->d_name, ".blkc")) continue;
        snprintf(p, sizeof p, "%s/%s", cache, e->d_name);
        struct stat st;
        if (stat(p, &st) != 0) continue;
        if (i % 3 == 0) {
            CHECK(truncate(p, st.st_size / 2) == 0, "truncate %s", p);
        } else {
            FILE *f = fopen(p, i % 3 == 1 ? "wb" : "r+b");
            if (f && i % 3 == 1) fputs("blk-cache v1\npayload 12 zz\nend\ngarbage\n", f);
            if (f && i % 3 == 2) {
                fseek(f, -10, SEEK_END);
                fputc('#', f);
            }
            if (f) fclose(f);
        }
        i++;
    }
    if (dd) closedir(dd);
}

/* Cache directories that cannot be written: the load compiles and succeeds. */
static void unwritable_cache(void) {
    char ro[64] = "";
    const char *dirs[2] = {"/proc", NULL}; /* exists, unwritable even for root */
    if (geteuid() != 0) {
        snprintf(ro, sizeof ro, "/tmp/blkrt-jit-ro-XXXXXX");
        if (mkdtemp(ro) && chmod(ro, 0500) == 0) dirs[1] = ro;
    }
    for (int i = 0; i < 2 && dirs[i]; i++) {
        blkrt_define def = {.name = "S", .ival = 7};
        blkrt_source_options o = {.path = "jit_threads.blk", .defines = &def, .ndefines = 1, .kernel = "scale",
                                  .cache_dir = dirs[i]};
        blkrt_module *m = NULL;
        blkrt_kernel *k = NULL;
        int64_t s = -1;
        OK(blkrt_module_load_source(gpu[0], SRC, sizeof SRC - 1, &o, &m));
        if (m) {
            OK(blkrt_module_kernel(m, "scale", &k));
            OK(blkrt_kernel_const_int(k, "S", &s));
            CHECK(s == 7, "S = %lld with cache dir %s", (long long)s, dirs[i]);
            OK(blkrt_module_unload(m));
        }
    }
    if (ro[0]) rmdir(ro);
}

static int cache_entries(int remove) {
    DIR *dd = opendir(cache);
    int n = 0;
    struct dirent *e;
    char p[400];
    while (dd && (e = readdir(dd))) {
        if (e->d_name[0] == '.') continue;
        if (strstr(e->d_name, ".blkc") && strlen(e->d_name) == 64 + 5) n++;
        else if (!remove) fprintf(stderr, "stray file in the cache: %s\n", e->d_name);
        if (remove) {
            snprintf(p, sizeof p, "%s/%s", cache, e->d_name);
            unlink(p);
        }
    }
    if (dd) closedir(dd);
    return n;
}

int main(void) {
    if (fake_api_load(&F) != 0) {
        fprintf(stderr, "test_jit_threads: cannot load the fake driver (BLKRT_CUDA_LIBRARY)\n");
        return 1;
    }
    snprintf(cache, sizeof cache, "/tmp/blkrt-jit-threads-XXXXXX");
    if (!mkdtemp(cache)) return 1;
    OK(blkrt_jit_install());
    for (int i = 0; i < 2; i++) OK(blkrt_device_open(i, &gpu[i]));
    OK(blkrt_device_open(BLKRT_DEVICE_CPU, &cpu));
    if (!gpu[0] || !gpu[1] || !cpu) return test_finish("test_jit_threads");
    F.reset();

    pthread_barrier_init(&barrier, NULL, THREADS);
    pthread_t th[THREADS];
    for (int t = 0; t < THREADS; t++) pthread_create(&th[t], NULL, worker, (void *)(intptr_t)t);
    for (int t = 0; t < THREADS; t++) pthread_join(th[t], NULL);
    pthread_barrier_destroy(&barrier);
    int made = 0;
    for (int t = 0; t < THREADS; t++) {
        CHECK(thread_failures[t] == 0, "thread %d: %d failed checks", t, thread_failures[t]);
        made += launches_made[t];
    }

    /* Every launch arrived once, on its thread's device, with its grid and an
     * entry of the right kernel. */
    enum { PER_THREAD = ROUNDS * 4 * LAUNCHES };
    int n = F.launch_count();
    /* the compiled variants: (module, entry) pairs, a module being A or C of a
     * device (shared by its threads) or B of a thread */
    static char variants[THREADS * PER_THREAD][160], loaded[THREADS * PER_THREAD][160];
    int nvariants = 0, nloaded = 0;
    CHECK(n == THREADS * PER_THREAD && made == n, "%d launches recorded, %d made, expected %d", n, made,
          THREADS * PER_THREAD);
    static unsigned char seen[THREADS][ROUNDS][4][LAUNCHES];
    int wrong = 0;
    for (int i = 0; i < n; i++) {
        fake_launch l;
        if (F.get_launch(i, &l) != 0 || l.nparams != 3 || l.param_size[2] != 4) {
            wrong++;
            continue;
        }
        int32_t v, c;
        memcpy(&v, l.param[2], 4);
        c = v - 1;
        int t = c / 100000, r = c / 10000 % 10, mod = c / 1000 % 10, j = c % 1000;
        const char *want = mod == 3 ? "addc" : "scale";
        unsigned block = mod == 3 ? 32 : 64;
        if (t < 0 || t >= THREADS || r >= ROUNDS || mod > 3 || j >= LAUNCHES || l.device != t % 2 ||
            strncmp(l.entry, want, strlen(want)) != 0 || l.grid[0] != ((unsigned)v + block - 1) / block ||
            seen[t][r][mod][j]++) {
            wrong++;
            fprintf(stderr, "launch %d: entry %s device %d n %d grid %u\n", i, l.entry, l.device, v, l.grid[0]);
            continue;
        }
        char key[160];
        snprintf(key, sizeof key, "%c%d %s", "ABCC"[mod], mod == 1 ? t : l.device, l.entry);
        int k = 0;
        while (k < nvariants && strcmp(variants[k], key) != 0) k++;
        if (k == nvariants) snprintf(variants[nvariants++], sizeof variants[0], "%s", key);
        /* each module handle (a thread's, per round) loads its own variants */
        snprintf(key, sizeof key, "%d %d %c %s", t, r, "ABCC"[mod], l.entry);
        k = 0;
        while (k < nloaded && strcmp(loaded[k], key) != 0) k++;
        if (k == nloaded) snprintf(loaded[nloaded++], sizeof loaded[0], "%s", key);
    }
    for (int t = 0; t < THREADS; t++)
        for (int r = 0; r < ROUNDS; r++)
            for (int mod = 0; mod < 4; mod++)
                for (int j = 0; j < LAUNCHES; j++) wrong += seen[t][r][mod][j] != 1;
    CHECK(wrong == 0, "%d launches missing, duplicated or mixed up", wrong);
    CHECK(F.ctx_depth() == 0, "no context left current");
    /* descriptions: A one per device arch, B one per thread, C one per arch;
     * then one entry per compiled variant, each compiled and loaded once */
    int entries = cache_entries(0), want = 2 + THREADS + 2 + nvariants;
    CHECK(entries == want, "%d cache entries, expected %d (%d variants)", entries, want, nvariants);
    CHECK(F.count_calls("cuModuleLoadDataEx") == nloaded, "%d driver loads, expected %d (one per module and variant)",
          F.count_calls("cuModuleLoadDataEx"), nloaded);

    damage_entries();
    pthread_barrier_init(&barrier, NULL, THREADS);
    for (int t = 0; t < THREADS; t++) pthread_create(&th[t], NULL, reloader, (void *)(intptr_t)t);
    for (int t = 0; t < THREADS; t++) pthread_join(th[t], NULL);
    pthread_barrier_destroy(&barrier);
    for (int t = 0; t < THREADS; t++) CHECK(thread_failures[t] == 0, "reload thread %d failed", t);
    /* the damaged entries that were used came back whole, none was added */
    entries = cache_entries(0);
    CHECK(entries == want, "%d cache entries after the reload, expected %d", entries, want);
    unwritable_cache();

    for (int i = 0; i < 2; i++) OK(blkrt_device_close(gpu[i]));
    OK(blkrt_device_close(cpu));
    cache_entries(1);
    rmdir(cache);
    return test_finish("test_jit_threads");
}

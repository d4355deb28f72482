/* gpu_suite.c — the check suite (gpu_check.h): every row of gpu_kernels.h,
 * each config and size, through gpu_run.c; one line per case, a table per
 * kernel, the totals; the watchdog; --list.
 */
#include "gpu_check.h"
#include "gpu_kernels.h"

#define NKERNELS ((int)(sizeof gk_table / sizeof gk_table[0]))

/* ------------------------------------------------------------------ watchdog */

/* A kernel that never finishes would hang the synchronize and, under the
 * device call's timeout, lose the whole report. The watchdog names the case
 * and exits with 3; run_on_device.sh then runs again without that kernel. */
static _Atomic double wd_last; /* read by the watchdog thread (ThreadSanitizer-clean) */
static char wd_case[256];
static int wd_timeout;

static void progress(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(wd_case, sizeof wd_case, fmt, ap);
    va_end(ap);
    atomic_store(&wd_last, now_s());
}

static void *watchdog(void *arg) {
    (void)arg;
    for (;;) {
        struct timespec ts = {1, 0};
        nanosleep(&ts, NULL);
        double last = atomic_load(&wd_last);
        if (last > 0 && now_s() - last > wd_timeout) {
            printf("\nHANG: no progress for %d s in %s\n", wd_timeout, wd_case);
            fflush(stdout);
            _exit(3);
        }
    }
    return NULL;
}

static void start_watchdog(int seconds) {
    if (seconds <= 0) return;
    wd_timeout = seconds;
    atomic_store(&wd_last, now_s());
    pthread_t t;
    if (pthread_create(&t, NULL, watchdog, NULL) == 0) pthread_detach(t);
}

/* ------------------------------------------------------------------ check */

typedef struct {
    int sizes, configs, passed, failed, skipped;
    unsigned sizes_run; /* bit per size index */
    int64_t max_ulp;
    double max_rel;
    bool d16, eq1, fallback;
} ksum;

static bool selected(const options *o, const char *kernel) {
    for (int i = 0; i < o->nskip; i++)
        if (!strcmp(o->skip[i], kernel)) return false;
    if (!o->nonly) return true;
    for (int i = 0; i < o->nonly; i++)
        if (!strcmp(o->only[i], kernel)) return true;
    return false;
}

/* Kernels in the stdlib's .blk files that have no row (and use no dot). */
static void report_uncovered(const options *o) {
    char list[4096] = "";
    DIR *dir = opendir(o->stdlib);
    struct dirent *de;
    while (dir && (de = readdir(dir))) {
        size_t nl = strlen(de->d_name);
        if (nl < 5 || strcmp(de->d_name + nl - 4, ".blk")) continue;
        char path[4096];
        size_t len;
        snprintf(path, sizeof path, "%.3000s/%s", o->stdlib, de->d_name);
        char *src = test_read_file(path, &len);
        if (!src) continue;
        for (char *p = strstr(src, "kernel "); p; p = strstr(p + 7, "kernel ")) {
            if (p != src && p[-1] != '\n') continue;
            char name[96];
            if (sscanf(p + 7, "%95[A-Za-z0-9_]", name) != 1) continue;
            char *next = strstr(p + 7, "\nkernel ");
            char save = 0;
            if (next) save = *next, *next = 0;
            bool has_dot = strstr(p, "dot(") != NULL;
            if (next) *next = save;
            if (has_dot) continue;
            bool covered = false;
            for (int k = 0; k < NKERNELS; k++) covered |= !strcmp(gk_table[k].kernel, name);
            if (!covered) {
                size_t l = strlen(list);
                snprintf(list + l, sizeof list - l, " %s/%s", de->d_name, name);
            }
        }
        free(src);
    }
    if (dir) closedir(dir);
    if (list[0]) printf("note: kernels without a gpu_kernels.h row (not checked):%s\n", list);
}

int do_check(const options *o) {
    int rc = open_device(o);
    if (rc) return rc;
    blkrt_jit_install();
    printf("gpu_check: device %s (%s, %d SMs, driver %d), blkc %s, blkrt %s\n", dinfo.name, dinfo.arch,
           dinfo.sm_count, dinfo.driver_version, blkc_version(), blkrt_version());
    printf("seed %llu (rerun: --seed %llu)%s%s%s\n", (unsigned long long)o->seed, (unsigned long long)o->seed,
           o->quick ? ", quick sizes" : "", o->dry_run ? ", dry run (stops after the launch)" : "",
           have_fake ? ", fake driver: launched entries checked against its record" : "");
    if (!o->cpu) {
        const char *ld = getenv("BLK_LIBDEVICE");
        printf("libdevice: %s\n", ld && *ld ? ld : "/usr/local/cuda/nvvm/libdevice/libdevice.10.bc (default)");
    }
    report_uncovered(o);
    start_watchdog(o->case_timeout);
    ksum sum[NKERNELS];
    memset(sum, 0, sizeof sum);
    int passed = 0, failed = 0;
    double t_start = now_s(), t_ref = 0, t_compile = 0, t_load = 0;
    for (int ki = 0; ki < NKERNELS; ki++) {
        const gk_kernel *K = &gk_table[ki];
        if (!selected(o, K->kernel)) continue;
        ksum *S = &sum[ki];
        S->max_ulp = 0;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", o->stdlib, K->file);
        FILE *probe = fopen(path, "rb");
        if (!probe) {
            printf("SKIP %-16s %s is not there\n", K->kernel, path);
            S->skipped = 1;
            continue;
        }
        fclose(probe);
        const char *arch = o->cpu ? "sm_90a" : backend_arch(dinfo.arch);
        bool clusters = false;
        for (int j = 0; gk_cluster_kernels[j]; j++) clusters |= strcmp(gk_cluster_kernels[j], K->kernel) == 0;
        if (clusters && strncmp(arch, "sm_9", 4) != 0) {
            printf("SKIP %-16s needs thread-block clusters, which %s does not have\n", K->kernel, arch);
            S->skipped = 1;
            continue;
        }
        for (int ci = 0; ci < GK_MAX_CONFIGS && K->configs[ci]; ci++) {
            const char *cfg = K->configs[ci];
            const char *cfgname = cfg[0] ? cfg : "defaults";
            S->configs++;
            if (device_lost) {
                printf("FAIL %-16s %-14s the device was lost earlier\n", K->kernel, cfgname);
                failed++, S->failed++;
                continue;
            }
            if (o->cpu && !numeric_config(cfg)) {
                /* blkrt_define has no bool or string kind and libblkc rejects 0/1 for a bool const */
                printf("SKIP %-16s %-14s bool and string consts cannot go through blkrt_module_load_source "
                       "(CPU device)\n",
                       K->kernel, cfgname);
                S->configs--;
                continue;
            }
            module_t M;
            char err[4096] = "";
            progress("kernel=%s config='%s' (compile + load)", K->kernel, cfg);
            if (!load_module(o, K, cfg, &M, err, sizeof err)) {
                printf("FAIL %-16s %-14s %s\n", K->kernel, cfgname, err);
                failed++, S->failed++;
                unload(&M);
                continue;
            }
            if (o->cpu) cpu_consts(o, K, cfg, &M.meta);
            t_compile += M.compile_ms, t_load += M.load_ms;
            printf("     %-16s %-14s compiled in %.0f ms (%d bytes of PTX), loaded in %.0f ms; entries:", K->kernel,
                   cfgname, M.compile_ms, M.ptx_bytes, M.load_ms);
            for (int v = 0; v < M.meta.nvariants; v++) printf(" %s", M.meta.var[v].entry);
            printf("\n");
            const char *jl = NULL;
            if (!o->cpu && blkrt_module_jit_log(M.mod, &jl) == BLKRT_OK && jl && *jl) {
                /* ptxas: "Used N registers, ..." per entry, and any spilling */
                for (const char *u = jl; u && *u;) {
                    const char *nl = strchr(u, '\n');
                    int len = nl ? (int)(nl - u) : (int)strlen(u);
                    char line[512];
                    snprintf(line, sizeof line, "%.*s", len, u);
                    const char *used = strstr(line, "Used "), *sp = strstr(line, "bytes spill stores");
                    if (used) printf("     %-16s   ptxas: %s\n", "", used);
                    else if (sp && !strstr(line, " 0 bytes spill stores")) {
                        const char *t = line;
                        while (*t == ' ' || *t == '\t') t++;
                        printf("     %-16s   ptxas: %s\n", "", t);
                    }
                    u = nl ? nl + 1 : NULL;
                }
            }
            for (int si = 0; si < 10 && K->sizes[si]; si++) {
                if (o->quick && si >= QUICK_SIZES) break;
                if (device_lost) break;
                env e = M.meta.consts;
                char sz[160];
                snprintf(sz, sizeof sz, "%s", K->sizes[si]);
                if (!parse_assignments(&e, K->sizes[si], err, sizeof err)) {
                    printf("FAIL %-16s %-14s %-28s %s\n", K->kernel, cfgname, sz, err);
                    failed++, S->failed++;
                    continue;
                }
                if (K->require) {
                    int64_t ok = 0;
                    if (!eval_expr(&e, K->require, -1, &ok, err, sizeof err)) {
                        printf("FAIL %-16s %-14s %-28s require: %s\n", K->kernel, cfgname, sz, err);
                        failed++, S->failed++;
                        continue;
                    }
                    if (!ok) continue;
                }
                uint64_t cs = o->seed ^ fnv(K->kernel, fnv(cfg, fnv(K->sizes[si], 0xCBF29CE484222325ull)));
                rng_state = splitmix(&cs) | 1;
                case_t c;
                double ref_ms = 0;
                progress("kernel=%s config='%s' size='%s' (reference)", K->kernel, cfg, K->sizes[si]);
                bool ok = build_case(K, &M.meta, &e, false, &c, err, sizeof err) &&
                          run_reference(&M, K, &c, err, sizeof err, &ref_ms);
                t_ref += ref_ms / 1e3;
                if (!ok) {
                    printf("FAIL %-16s %-14s %-28s %s\n", K->kernel, cfgname, sz, err);
                    failed++, S->failed++;
                    free_case(&c);
                    continue;
                }
                S->sizes_run |= 1u << si;
                for (int off = 0; off < 2; off++) {
                    result R = {0};
                    progress("kernel=%s config='%s' size='%s' placement=%s (GPU)", K->kernel, cfg, K->sizes[si],
                             off ? "offset" : "aligned");
                    const char *th = getenv("GPU_CHECK_TEST_HANG"); /* self-test of the watchdog */
                    if (th && !strcmp(th, K->kernel)) sleep(100000);
                    run_gpu(o, &M, &c, off, K->tol, &R);
                    /* which kind of entry ran: the last is the fallback */
                    int vi = 0;
                    while (vi < M.meta.nvariants && strcmp(R.entry, M.meta.var[vi].entry)) vi++;
                    bool has_eq1 = false;
                    for (int a = 0; vi < M.meta.nvariants && a < MAX_ARGS; a++)
                        has_eq1 |= !strcmp(M.meta.var[vi].spec[a], "eq1");
                    if (R.ok) {
                        passed++, S->passed++;
                        if (vi >= M.meta.nvariants - 1) S->fallback = true;
                        else if (has_eq1) S->eq1 = true;
                        else S->d16 = true;
                        if (R.max_ulp > S->max_ulp) S->max_ulp = R.max_ulp;
                        if (R.max_rel > S->max_rel) S->max_rel = R.max_rel;
                        printf("ok   %-16s %-14s %-28s %-7s %-34s %s\n", K->kernel, cfgname, sz,
                               off ? "offset" : "aligned", R.entry,
                               o->dry_run ? "launched" : "");
                        if (!o->dry_run && (R.max_ulp || R.max_rel > 0))
                            printf("     %-16s   max err %lld ulp, rel %.2e\n", "", (long long)R.max_ulp, R.max_rel);
                    } else {
                        failed++, S->failed++;
                        printf("FAIL %-16s %-14s %-28s %-7s %-34s %s\n", K->kernel, cfgname, sz,
                               off ? "offset" : "aligned", R.entry, R.msg);
                    }
                    if (device_lost) {
                        printf("     the GPU context is unusable after that failure: the remaining cases fail\n");
                        break;
                    }
                }
                free_case(&c);
            }
            unload(&M);
        }
    }
    double wall = now_s() - t_start;
    printf("\n| kernel | sizes | configs | result | entries run | max err |\n|---|---|---|---|---|---|\n");
    int kernels_failed = 0;
    for (int ki = 0; ki < NKERNELS; ki++) {
        const gk_kernel *K = &gk_table[ki];
        ksum *S = &sum[ki];
        if (!selected(o, K->kernel)) continue;
        if (S->skipped) {
            printf("| %s | - | - | skipped (no %s) | - | - |\n", K->kernel, K->file);
            continue;
        }
        char res[64], err[64];
        S->sizes = __builtin_popcount(S->sizes_run);
        if (S->failed) snprintf(res, sizeof res, "**FAIL** %d/%d", S->failed, S->failed + S->passed), kernels_failed++;
        else snprintf(res, sizeof res, "pass %d", S->passed);
        if (o->dry_run) snprintf(err, sizeof err, "(dry run)");
        else if (!S->max_ulp && S->max_rel == 0) snprintf(err, sizeof err, "0 (exact)");
        else snprintf(err, sizeof err, "%lld ulp, rel %.1e", (long long)S->max_ulp, S->max_rel);
        char kinds[32];
        snprintf(kinds, sizeof kinds, "%s%s%s%s%s", S->d16 ? "d16" : "", S->d16 && S->eq1 ? "+" : "",
                 S->eq1 ? "eq1" : "", (S->d16 || S->eq1) && S->fallback ? "+" : "", S->fallback ? "fallback" : "");
        printf("| %s | %d | %d | %s | %s | %s |\n", K->kernel, S->sizes, S->configs, res, kinds, err);
    }
    printf("\ntime: %.1f s (compile %.1f s, driver load %.1f s, interpreter %.1f s)\n", wall, t_compile / 1e3,
           t_load / 1e3, t_ref);
    if (failed && passed == 0 && !o->dry_run && have_fake)
        printf("note: the fake driver runs no kernels, so every comparison fails; use --dry-run with it\n");
    printf("%d passed, %d failed\n", passed, failed);
    if (!device_lost) blkrt_device_close(dev);
    (void)kernels_failed;
    return failed ? 1 : 0;
}

/* --list: the table's rows. */
int do_list(void) {
    for (int k = 0; k < NKERNELS; k++) {
        int nc = 0, ns = 0;
        while (nc < GK_MAX_CONFIGS && gk_table[k].configs[nc]) nc++;
        while (ns < 10 && gk_table[k].sizes[ns]) ns++;
        printf("%-16s %-16s %d configs, %d sizes\n", gk_table[k].kernel, gk_table[k].file, nc, ns);
    }
    return 0;
}

/* compile_time.c — how long the runtime's JIT takes to compile one variant of
 * one kernel (issue 9: "a cold compile of fused_attn stays under 100 ms").
 *
 *   compile_time FILE.blk KERNEL [--variant SPEC|all] [--arch A] [-D NAME=V]...
 *                [--runs N]
 *
 * The compile goes through blkrt_jit_compiler()->compile_ptx, the very hook a
 * launch of a kernel loaded from source calls (runtime/lazy.c asks it for
 * the one variant the arguments need, runtime/jit.c runs libblkc: front end,
 * passes, LLVM, PTX text), with the request the runtime builds: the source
 * text, the defines in their text form, the arch and the variant spec
 * ("out=d16,q=d16" as lazy.c's key_spec writes it; "all" = the default
 * variants, what a whole-module compile makes). No GPU, no caches.
 *
 * Printed: the first compile of this process (cold: LLVM's one-time set-up
 * and the first touch of its code and data), then the median, min and max of
 * N more, then each phase's median over N compiles through libblkc itself
 * (blkc_emit "times": parse, sema, passes, the backend's lower, verify,
 * libdevice, llvm-opt, llvm-emit). Run it in a fresh process for the cold
 * number; wall time, so a loaded machine shows in it (the tool says nothing
 * about what is fast enough: tests make no timing assertions).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "blk/blkc.h"
#include "blk/blkrt_jit.h"
#include "../test_util.h"

enum { MAX_DEFINES = 32, MAX_RUNS = 1000, NPHASES = 9 };
static const char *const phase_names[NPHASES] = {"parse",    "sema",     "passes",    "lower", "verify",
                                                  "libdevice", "llvm-opt", "llvm-emit", "total"};

static double clock_ms(clockid_t id) {
    struct timespec ts;
    clock_gettime(id, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* One compile through the runtime's hook; wall ms (and *cpu: this thread's
 * CPU ms, which other load on the machine inflates less), or -1 on failure. */
static double jit_once(const blkrt_compile_request *req, double *cpu) {
    const blkrt_compiler *jit = blkrt_jit_compiler();
    blkrt_compile_result res = {0};
    double t0 = clock_ms(CLOCK_MONOTONIC), c0 = clock_ms(CLOCK_THREAD_CPUTIME_ID);
    blkrt_status st = jit->compile_ptx(req, &res);
    double t = clock_ms(CLOCK_MONOTONIC) - t0;
    *cpu = clock_ms(CLOCK_THREAD_CPUTIME_ID) - c0;
    if (st != BLKRT_OK) fprintf(stderr, "compile_time: %s: %s\n", blkrt_status_name(st), res.log ? res.log : "");
    free(res.text);
    free(res.log);
    for (int i = 0; i < res.ndeps; i++) free(res.deps[i]);
    free(res.deps);
    return st == BLKRT_OK ? t : -1;
}

/* The same compile through libblkc, as jit.c's build() sets it up, for the
 * phase times (ms[NPHASES]); nonzero on failure. */
static int phases_once(const blkrt_compile_request *req, double *ms) {
    blkc_ctx *c = blkc_new();
    blk_status s = blkc_set_arch(c, req->arch);
    for (int i = 0; i < req->ndefines && s == BLK_OK; i++) {
        const char *d = req->defines[i].name, *eq = strchr(d, '=');
        char name[128];
        snprintf(name, sizeof name, "%.*s", (int)(eq - d), d);
        s = blkc_define(c, name, eq + 1);
    }
    if (s == BLK_OK && req->variant) {
        blkc_set_default_variants(c, 0);
        s = blkc_add_variant(c, req->variant);
    }
    if (s == BLK_OK) s = blkc_load_source(c, req->path, req->source, req->len);
    if (s == BLK_OK) s = blkc_build(c, req->kernel);
    const char *times = s == BLK_OK && blkc_emit(c, "ptx") ? blkc_emit(c, "times") : NULL;
    for (int p = 0; times && p < NPHASES; p++) {
        const char *at = strstr(times, phase_names[p]);
        ms[p] = at ? atof(at + strlen(phase_names[p])) : 0;
    }
    if (!times) fprintf(stderr, "compile_time: %s", blkc_diagnostics(c));
    blkc_free(c);
    return times ? 0 : 1;
}

int main(int argc, char **argv) {
    const char *file = NULL, *kernel = NULL, *arch = "sm_90a", *variant = NULL;
    blkrt_define defs[MAX_DEFINES];
    int ndefs = 0, runs = 10;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--variant") && v) variant = strcmp(v, "all") ? v : NULL, i++;
        else if (!strcmp(a, "--arch") && v) arch = v, i++;
        else if (!strcmp(a, "--runs") && v) runs = atoi(v), i++;
        else if (!strcmp(a, "-D") && v && strchr(v, '=') && ndefs < MAX_DEFINES)
            defs[ndefs++] = (blkrt_define){.name = v}, i++; /* the text form: jit.c passes it to blkc_define */
        else if (a[0] != '-' && !file) file = a;
        else if (a[0] != '-' && !kernel) kernel = a;
        else file = NULL, i = argc;
    }
    if (!file || !kernel || runs < 1 || runs > MAX_RUNS) {
        fprintf(stderr, "usage: compile_time FILE.blk KERNEL [--variant SPEC|all] [--arch A] [-D NAME=V]... "
                        "[--runs N (1..%d)]\n",
                MAX_RUNS);
        return 2;
    }
    size_t len;
    char *src = test_read_file(file, &len);
    if (!src) {
        fprintf(stderr, "compile_time: cannot read %s\n", file);
        return 1;
    }
    blkrt_compile_request req = {.source = src, .len = len, .path = file, .defines = defs, .ndefines = ndefs,
                                 .kernel = kernel, .arch = arch, .variant = variant};
    printf("compile_time %s %s --arch %s --variant '%s'", file, kernel, arch, variant ? variant : "all");
    for (int i = 0; i < ndefs; i++) printf(" -D %s", defs[i].name);
    printf("\n");

    double cold_cpu, cold = jit_once(&req, &cold_cpu);
    if (cold < 0) return 1;
    static double warm[MAX_RUNS], warm_cpu[MAX_RUNS], ph[NPHASES][MAX_RUNS];
    for (int r = 0; r < runs; r++)
        if ((warm[r] = jit_once(&req, &warm_cpu[r])) < 0) return 1;
    for (int r = 0; r < runs; r++) {
        double ms[NPHASES];
        if (phases_once(&req, ms)) return 1;
        for (int p = 0; p < NPHASES; p++) ph[p][r] = ms[p];
    }
    printf("cold (the process's first compile): %.1f ms (cpu %.1f ms)\n", cold, cold_cpu);
    double med = median(warm, runs);
    printf("warm: median %.1f ms, min %.1f, max %.1f (%d runs; cpu median %.1f ms)\n", med, warm[0], warm[runs - 1],
           runs, median(warm_cpu, runs));
    printf("phases (median ms):");
    for (int p = 0; p < NPHASES; p++) printf(" %s %.1f", phase_names[p], median(ph[p], runs));
    printf("\n");
    free(src);
    return 0;
}

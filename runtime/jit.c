/* jit.c — libblkrt_jit: the compiler hook of libblkrt over libblkc.
 *
 * This is the only file that sees both libraries. It implements
 * blkrt_compiler:
 *   cpu_build   .blk source -> a built blkc_ctx (the interpreter's program)
 *               plus blk-meta lines describing its kernels (blkc_emit
 *               "meta-front": the backend's lines without running it), so
 *               the CPU device checks launches exactly like a GPU does;
 *   cpu_run     one launch through blkc_interp_run (cpu_set_steps: its
 *               step budget, blkc_set_interp_steps);
 *   describe    .blk source -> the same blk-meta lines, for a GPU load that
 *               compiles variants only when launches need them;
 *   compile_ptx .blk source -> PTX with the backend's own blk-meta lines
 *               (blkc_emit "ptx"): every default variant, or the one
 *               req->variant names; the imported files as res->deps for the
 *               runtime's disk cache; with line info (.file/.loc) when
 *               BLK_LINEINFO=1.
 *
 * PTX compiles are serialised (one lock here; LLVM is initialised once,
 * codegen/cg_module.c init_llvm, but the lock keeps one LLVM pipeline in
 * flight per process). Descriptions and interpreter builds are front end
 * only, share nothing and run concurrently.
 */
#define _GNU_SOURCE /* dladdr */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "blk/blkc.h"
#include "blk/blkrt_jit.h"
#include "util.h"

#ifndef BLKRT_JIT_COMPILER_VERSION
#define BLKRT_JIT_COMPILER_VERSION "blkrt_jit"
#endif

static char *dup_str(const char *s) {
    size_t n = strlen(s);
    char *r = malloc(n + 1);
    if (r) memcpy(r, s, n + 1);
    return r;
}

/* st, or OUT_OF_MEMORY when it failed after an allocation of libblkc did
 * (since `before`, blk_alloc_failures): whatever status the failure turned
 * into on its way out (a NULL text reads as a compile error). */
static blkrt_status oom_or(long before, blkrt_status st) {
    return st != BLKRT_OK && blk_alloc_failures() != before ? BLKRT_ERR_OUT_OF_MEMORY : st;
}

/* One define: "NAME=VALUE" as a name is the text form of -D (what string
 * consts such as matmul_epilogue's ACT=silu need: ival/fval hold numbers
 * only); otherwise the number in ival or fval. */
static blk_status define_one(blkc_ctx *c, const blkrt_define *d) {
    const char *eq = strchr(d->name, '=');
    if (!eq) return d->is_float ? blkc_define_float(c, d->name, d->fval) : blkc_define_int(c, d->name, d->ival);
    char name[128];
    size_t n = (size_t)(eq - d->name);
    if (n >= sizeof name) n = sizeof name - 1; /* too long for any const: blkc names the bad name */
    memcpy(name, d->name, n);
    name[n] = 0;
    return blkc_define(c, name, eq + 1);
}

/* The front end over req: a built context (or NULL with res->log and the
 * status). target: the backend's arch (NULL for the CPU interpreter);
 * variant: req->variant for compile_ptx, NULL otherwise. */
static blkc_ctx *build(const blkrt_compile_request *req, const char *target, const char *variant,
                       blkrt_compile_result *res, blkrt_status *st) {
    blkc_ctx *c = blkc_new();
    *st = BLKRT_ERR_OUT_OF_MEMORY;
    if (!c) return NULL;
    blk_status s = target ? blkc_set_arch(c, target) : BLK_OK;
    for (int i = 0; i < req->ndefines && s == BLK_OK; i++) {
        const blkrt_define *d = &req->defines[i];
        s = define_one(c, d);
    }
    if (s == BLK_OK && variant) {
        blkc_set_default_variants(c, 0);
        s = blkc_add_variant(c, variant);
    }
    if (s == BLK_OK) s = blkc_load_source(c, req->path, req->source, req->len);
    if (s == BLK_OK) s = blkc_build(c, req->kernel);
    const char *diags = blkc_diagnostics(c);
    if (diags && *diags) res->log = dup_str(diags); /* errors, or warnings of a good build */
    if (s != BLK_OK) {
        *st = s == BLK_ERR_NOMEM ? BLKRT_ERR_OUT_OF_MEMORY : BLKRT_ERR_COMPILE;
        blkc_free(c);
        return NULL;
    }
    *st = BLKRT_OK;
    return c;
}

/* res->text = a copy of text (NULL: what failed went to res->log), and the
 * imported files for the cache (units[0] is the source itself). */
static blkrt_status finish(blkc_ctx *c, const char *text, blkrt_compile_result *res) {
    if (!text) {
        const char *diags = blkc_diagnostics(c);
        free(res->log);
        res->log = diags && *diags ? dup_str(diags) : NULL;
        return BLKRT_ERR_COMPILE;
    }
    res->len = strlen(text);
    if (!(res->text = dup_str(text))) return BLKRT_ERR_OUT_OF_MEMORY;
    int nu = blkc_num_units(c);
    if (nu > 1) {
        res->deps = calloc((size_t)nu - 1, sizeof(char *));
        for (int i = 1; res->deps && i < nu; i++) res->deps[res->ndeps++] = dup_str(blkc_unit_path(c, i));
    }
    return BLKRT_OK;
}

/* The CPU device's blk-meta: the backend's description of each kernel's
 * unspecialised entry, without running the backend. */
static blkrt_status cpu_build(const blkrt_compile_request *req, blkrt_compile_result *res) {
    long before = blk_alloc_failures();
    blkrt_status st;
    blkc_ctx *c = build(req, NULL, NULL, res, &st);
    if (!c) return oom_or(before, st);
    if ((st = finish(c, blkc_emit(c, "meta-front"), res))) {
        blkc_free(c);
        return oom_or(before, st);
    }
    res->program = c;
    return BLKRT_OK;
}

static blkrt_status cpu_run(void *program, const char *kernel, const uint32_t grid[3], const blkrt_cpu_arg *args,
                            int nargs, char **log) {
    blkc_ctx *c = program;
    blk_arg a[64];
    if (nargs > 64) return BLKRT_ERR_INVALID_VALUE;
    for (int i = 0; i < nargs; i++) {
        blk_arg_kind k = args[i].kind == BLKRT_ARG_PTR ? BLK_ARG_PTR
                         : args[i].kind == BLKRT_ARG_INT ? BLK_ARG_INT
                                                          : BLK_ARG_FLOAT;
        a[i] = (blk_arg){k, args[i].ptr, args[i].size, args[i].i, args[i].f};
    }
    /* Diagnostics accumulate in the context: report only this run's. */
    size_t before = strlen(blkc_diagnostics(c));
    unsigned g[3] = {grid[0], grid[1], grid[2]};
    blk_status s = blkc_interp_run(c, kernel, g, a, nargs, NULL);
    if (s != BLK_OK) {
        const char *d = blkc_diagnostics(c);
        *log = dup_str(strlen(d) >= before ? d + before : d);
        return s == BLK_ERR_NOMEM ? BLKRT_ERR_OUT_OF_MEMORY : BLKRT_ERR_LAUNCH_FAILED;
    }
    return BLKRT_OK;
}

static void cpu_free(void *program) { blkc_free(program); }

static void cpu_set_steps(void *program, uint64_t steps) { blkc_set_interp_steps(program, steps); }

/* The backend's target for a device: the arch itself where the backend has
 * it, else the newest target whose PTX the device can JIT (PTX runs on any
 * later GPU, except the "a" features, which are sm_90-only). */
static const char *target_for(const char *arch) {
    int sm = 0;
    if (sscanf(arch, "sm_%d", &sm) != 1) return NULL;
    if (sm == 90) return "sm_90a";
    if (sm > 90) return "sm_90";
    if (sm >= 80) return "sm_80";
    return NULL;
}

static pthread_mutex_t ptx_lock = PTHREAD_MUTEX_INITIALIZER;

static blkrt_status unsupported(const blkrt_compile_request *req, blkrt_compile_result *res) {
    char msg[128];
    snprintf(msg, sizeof msg, "blk generates code for sm_80 and newer GPUs, not %s", req->arch);
    res->log = dup_str(msg);
    return BLKRT_ERR_UNSUPPORTED;
}

/* PTX: every default variant (req->variant NULL) or exactly one. */
static blkrt_status compile_ptx(const blkrt_compile_request *req, blkrt_compile_result *res) {
    const char *target = target_for(req->arch);
    if (!target) return unsupported(req, res);
    long before = blk_alloc_failures();
    blkrt_status st;
    blkc_ctx *c = build(req, target, req->variant, res, &st);
    if (!c) return oom_or(before, st);
    /* BLK_LINEINFO=1: .file/.loc as `blkc -lineinfo` writes them (Nsight
     * Compute's source view). source.c keys the disk cache on it too. */
    const char *li = getenv("BLK_LINEINFO");
    if (li && *li && strcmp(li, "0") != 0) blkc_set_lineinfo(c, 1);
    pthread_mutex_lock(&ptx_lock);
    st = finish(c, blkc_emit(c, "ptx"), res);
    pthread_mutex_unlock(&ptx_lock);
    blkc_free(c);
    return oom_or(before, st);
}

/* Text the front end alone gives (blkc_emit `what`) for target (NULL: the
 * interpreter's). */
static blkrt_status front_text(const blkrt_compile_request *req, const char *target, const char *what,
                               blkrt_compile_result *res) {
    long before = blk_alloc_failures();
    blkrt_status st;
    blkc_ctx *c = build(req, target, NULL, res, &st);
    if (!c) return oom_or(before, st);
    st = finish(c, blkc_emit(c, what), res);
    blkc_free(c);
    return oom_or(before, st);
}

/* The kernels of a GPU load before any variant is compiled: front end only. */
static blkrt_status describe(const blkrt_compile_request *req, blkrt_compile_result *res) {
    const char *target = target_for(req->arch);
    if (!target) return unsupported(req, res);
    return front_text(req, target, "meta-front", res);
}

/* The @autotune configs (blk-autotune lines). */
static blkrt_status autotune(const blkrt_compile_request *req, blkrt_compile_result *res) {
    return front_text(req, NULL, "autotune", res);
}

/* The version in cache keys: the compiler's version, and the identity of the
 * binary libblkc is linked into (path, size, mtime), so that rebuilding the
 * compiler during development never serves PTX from an older one. */
static char version[1200];
static blkrt_compiler jit = {
    .version = version,
    .compile_ptx = compile_ptx,
    .cpu_build = cpu_build,
    .cpu_run = cpu_run,
    .cpu_free = cpu_free,
    .describe = describe,
    .autotune = autotune,
    .cpu_set_steps = cpu_set_steps,
};
static pthread_once_t jit_once = PTHREAD_ONCE_INIT;

static void init_version(void) {
    Dl_info info;
    struct stat st;
    if (dladdr((void *)&blkc_build, &info) && info.dli_fname && stat(info.dli_fname, &st) == 0)
        snprintf(version, sizeof version, "%s %s (%s %lld %lld)", BLKRT_JIT_COMPILER_VERSION, blkc_version(),
                 info.dli_fname, (long long)st.st_size, (long long)st.st_mtime);
    else
        snprintf(version, sizeof version, "%s %s", BLKRT_JIT_COMPILER_VERSION, blkc_version());
}

const blkrt_compiler *blkrt_jit_compiler(void) {
    pthread_once(&jit_once, init_version);
    return &jit;
}

blkrt_status blkrt_jit_install(void) { return blkrt_use_compiler(blkrt_jit_compiler()); }

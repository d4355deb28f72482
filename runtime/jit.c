/* jit.c — libblkrt_jit: the compiler hook of libblkrt over libblkc.
 *
 * This is the only file that sees both libraries. It implements
 * blkrt_compiler:
 *   cpu_build   .blk source -> a built blkc_ctx (the interpreter's program)
 *               plus blk-meta lines describing its kernels, so the CPU device
 *               checks launches exactly like a GPU does;
 *   cpu_run     one launch through blkc_interp_run;
 *   compile_ptx .blk source -> PTX with the backend's own blk-meta lines
 *               (blkc_emit "ptx"), the imported files as res->deps for the
 *               runtime's disk cache.
 *
 * The blk-meta of a CPU build is derived from the IR (compiler internals:
 * compile.h, ir/ir.h) rather than from blkc_emit("meta"), which runs the GPU
 * backend (LLVM) and describes GPU entries. Const parameters are recorded as
 * i64 / f64: the IR keeps a const's value, not its declared type.
 *
 * PTX compiles are serialised (one lock here): the backend initialises LLVM
 * through a process-wide flag without a lock (codegen/cg_module.c,
 * init_llvm). Interpreter builds share nothing and run concurrently.
 */
#define _GNU_SOURCE /* dladdr */
#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "blk/blkc.h"
#include "blk/blkrt_jit.h"
#include "compile.h"
#include "ir/ir.h"

#ifndef BLKRT_JIT_COMPILER_VERSION
#define BLKRT_JIT_COMPILER_VERSION "blkrt_jit"
#endif

static char *dup_str(const char *s) {
    size_t n = strlen(s);
    char *r = malloc(n + 1);
    if (r) memcpy(r, s, n + 1);
    return r;
}

/* A malloc'd growable string for the meta text. */
typedef struct {
    char *s;
    size_t len, cap;
    bool failed;
} text_buf;

static void put(text_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(text_buf *b, const char *fmt, ...) {
    if (b->failed) return;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(b->s ? b->s + b->len : NULL, b->s ? b->cap - b->len : 0, fmt, ap);
        va_end(ap);
        if (n < 0) {
            b->failed = true;
            return;
        }
        if (b->s && b->len + (size_t)n < b->cap) {
            b->len += (size_t)n;
            return;
        }
        size_t cap = (b->cap ? b->cap * 2 : 256) + (size_t)n;
        char *s = realloc(b->s, cap);
        if (!s) {
            b->failed = true;
            return;
        }
        b->s = s;
        b->cap = cap;
    }
}

static void meta_line(text_buf *b, const ir_func *f) {
    put(b, "// blk-meta v1 kernel=%s entry=%s num_warps=%d shared=0 params=", f->name, f->name, f->num_warps);
    for (int i = 0; i < f->body->args.len; i++) {
        char type[64];
        ir_type t = f->body->args.data[i]->type;
        if (t.dtype == DT_PTR)
            snprintf(type, sizeof type, "*%s%s", t.ptr_const ? "const." : "", dtype_name((blk_dtype)t.pointee));
        else
            snprintf(type, sizeof type, "%s", dtype_name((blk_dtype)t.dtype));
        const char *name = i < f->param_names.len && f->param_names.data[i] ? f->param_names.data[i] : NULL;
        if (name) put(b, "%s%s:%s", i ? "," : "", name, type);
        else put(b, "%sarg%d:%s", i ? "," : "", i, type);
    }
    put(b, " consts=");
    for (int i = 0; i < f->consts.len; i++) {
        const ir_const_binding *c = &f->consts.data[i];
        if (c->is_float) put(b, "%s%s:f64:%.17g", i ? "," : "", c->name, c->fval);
        else put(b, "%s%s:i64:%lld", i ? "," : "", c->name, (long long)c->ival);
    }
    put(b, "\n");
}

static blkrt_status cpu_build(const blkrt_compile_request *req, blkrt_compile_result *res) {
    blkc_ctx *c = blkc_new();
    if (!c) return BLKRT_ERR_OUT_OF_MEMORY;
    blk_status s = BLK_OK;
    for (int i = 0; i < req->ndefines && s == BLK_OK; i++) {
        const blkrt_define *d = &req->defines[i];
        s = d->is_float ? blkc_define_float(c, d->name, d->fval) : blkc_define_int(c, d->name, d->ival);
    }
    if (s == BLK_OK) s = blkc_load_source(c, req->path, req->source, req->len);
    if (s == BLK_OK) s = blkc_build(c, req->kernel);
    const char *diags = blkc_diagnostics(c);
    if (diags && *diags) res->log = dup_str(diags); /* errors, or warnings of a good build */
    if (s != BLK_OK) {
        blkc_free(c);
        return s == BLK_ERR_NOMEM ? BLKRT_ERR_OUT_OF_MEMORY : BLKRT_ERR_COMPILE;
    }
    text_buf b = {0};
    for (const ir_func *f = c->ir->first; f; f = f->next)
        if (f->is_kernel) meta_line(&b, f);
    if (b.failed) {
        free(b.s);
        blkc_free(c);
        return BLKRT_ERR_OUT_OF_MEMORY;
    }
    res->text = b.s;
    res->len = b.len;
    /* Imported files, for the cache (units[0] is the source itself). */
    if (c->units.len > 1) {
        res->deps = calloc((size_t)c->units.len - 1, sizeof(char *));
        for (int i = 1; res->deps && i < c->units.len; i++) res->deps[res->ndeps++] = dup_str(c->units.data[i].path);
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

static blkrt_status compile_ptx(const blkrt_compile_request *req, blkrt_compile_result *res) {
    const char *target = target_for(req->arch);
    if (!target) {
        char msg[128];
        snprintf(msg, sizeof msg, "blk generates code for sm_80 and newer GPUs, not %s", req->arch);
        res->log = dup_str(msg);
        return BLKRT_ERR_UNSUPPORTED;
    }
    blkc_ctx *c = blkc_new();
    if (!c) return BLKRT_ERR_OUT_OF_MEMORY;
    blk_status s = blkc_set_arch(c, target);
    for (int i = 0; i < req->ndefines && s == BLK_OK; i++) {
        const blkrt_define *d = &req->defines[i];
        s = d->is_float ? blkc_define_float(c, d->name, d->fval) : blkc_define_int(c, d->name, d->ival);
    }
    if (s == BLK_OK) s = blkc_load_source(c, req->path, req->source, req->len);
    if (s == BLK_OK) s = blkc_build(c, req->kernel);
    const char *ptx = NULL;
    if (s == BLK_OK) {
        pthread_mutex_lock(&ptx_lock);
        ptx = blkc_emit(c, "ptx");
        if (ptx) {
            res->len = strlen(ptx);
            res->text = dup_str(ptx);
        }
        pthread_mutex_unlock(&ptx_lock);
    }
    const char *diags = blkc_diagnostics(c);
    if (diags && *diags) res->log = dup_str(diags);
    blkrt_status st = BLKRT_OK;
    if (s == BLK_ERR_NOMEM || (ptx && !res->text)) st = BLKRT_ERR_OUT_OF_MEMORY;
    else if (s != BLK_OK || !ptx) st = BLKRT_ERR_COMPILE;
    if (st == BLKRT_OK && c->units.len > 1) {
        res->deps = calloc((size_t)c->units.len - 1, sizeof(char *));
        for (int i = 1; res->deps && i < c->units.len; i++) res->deps[res->ndeps++] = dup_str(c->units.data[i].path);
    }
    blkc_free(c);
    return st;
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

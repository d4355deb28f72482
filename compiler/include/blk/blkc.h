/* blkc.h — the public API of libblkc, the blk compiler library.
 *
 * A blkc_ctx is one compilation: its sources, options, diagnostics and every
 * allocation (one arena). Nothing here prints or exits; errors are returned
 * as a status and rendered diagnostics text (blkc_diagnostics).
 *
 *   blkc_ctx *c = blkc_new();
 *   blkc_define_int(c, "BLOCK", 256);
 *   if (blkc_load_file(c, "vadd.blk") || blkc_build(c, NULL))
 *       fputs(blkc_diagnostics(c), stderr);
 *   blk_arg args[] = {BLK_PTR(x, n * 4), BLK_PTR(y, n * 4), BLK_PTR(out, n * 4), BLK_INT(n)};
 *   unsigned grid[3] = {(n + 255) / 256, 1, 1};
 *   blkc_interp_run(c, "vector_add", grid, args, 4, NULL);
 *   blkc_free(c);
 */
#ifndef BLK_BLKC_H
#define BLK_BLKC_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    BLK_OK = 0,
    BLK_ERR_COMPILE = 1,  /* the source has errors: see blkc_diagnostics */
    BLK_ERR_USAGE = 2,    /* bad API use or option (unknown kernel, bad define, ...) */
    BLK_ERR_IO = 3,       /* file not found / unreadable */
    BLK_ERR_RUNTIME = 4,  /* interpreter: the kernel failed at run time (OOB access, ...) */
    BLK_ERR_NOMEM = 5,
    BLK_ERR_INTERNAL = 6, /* an IR verifier failure: a compiler bug */
} blk_status;

typedef struct blkc_ctx blkc_ctx;

blkc_ctx *blkc_new(void);
void blkc_free(blkc_ctx *c);

/* Options; call before blkc_load_*. */
void blkc_add_include_dir(blkc_ctx *c, const char *dir);
void blkc_set_stdlib_dir(blkc_ctx *c, const char *dir); /* default: BLK_STDLIB_DIR at build time */
void blkc_set_opt_level(blkc_ctx *c, int level);         /* 0..3, default 2 */
void blkc_set_lineinfo(blkc_ctx *c, int on);             /* .file/.loc in the PTX (nvcc -lineinfo); default off */
/* Optimisation remarks with the diagnostics (blkc -R / -Rpass-missed): 0 none
 * (default), 1 every global access's width and what limited it, 2 only the
 * accesses narrower than the widest. */
void blkc_set_remarks(blkc_ctx *c, int level);
void blkc_set_verify_each(blkc_ctx *c, int on);          /* verifier after every pass (default on) */
void blkc_set_max_errors(blkc_ctx *c, int n);
void blkc_set_werror(blkc_ctx *c, int on);              /* warnings count as errors */
/* GPU target of the PTX backend: "sm_90a" (default), "sm_90" or "sm_80".
 * Checked here, before LLVM sees it (LLVM ends the process on an arch/PTX
 * pair it does not accept). BLK_ERR_USAGE with a diagnostic if unknown. */
blk_status blkc_set_arch(blkc_ctx *c, const char *arch);
/* Keep a printout of the IR after pass `pass` ("sema" = before any pass) for
 * blkc_emit(c, "ir-after=PASS"). */
void blkc_set_dump_after(blkc_ctx *c, const char *pass);
/* Const values for kernels' const parameters (like -D NAME=VALUE). The text
 * form accepts integers, floats and true/false. blkc_build refuses a name
 * that no kernel of the loaded files has as a const parameter
 * (BLK_ERR_USAGE, with the closest name as a suggestion). */
blk_status blkc_define(blkc_ctx *c, const char *name, const char *value);
blk_status blkc_define_int(blkc_ctx *c, const char *name, int64_t value);
blk_status blkc_define_float(blkc_ctx *c, const char *name, double value);

/* Parse the main module (imports are resolved by blkc_build). */
blk_status blkc_load_file(blkc_ctx *c, const char *path);
blk_status blkc_load_source(blkc_ctx *c, const char *path, const char *text, size_t len);

/* Check the module and lower `kernel` (NULL: every kernel) to Block IR, then
 * run the pass pipeline. */
blk_status blkc_build(blkc_ctx *c, const char *kernel);

/* Text of all diagnostics so far ("" if none). Owned by c. */
const char *blkc_diagnostics(const blkc_ctx *c);
int blkc_error_count(const blkc_ctx *c);

/* Debug output, owned by c, valid until the next call:
 *   "tokens", "ast"          after blkc_load_*
 *   "ir"                     after blkc_build (IR after the whole pipeline)
 *   "ir-after=PASS"          after blkc_build with blkc_set_dump_after(c, PASS)
 *   "ptx"                    after blkc_build: PTX for the arch (blkc_set_arch),
 *                            one entry per kernel variant (see blkc_add_variant),
 *                            each with a metadata line
 *   "meta"                   just the metadata lines, one per entry:
 *     // blk-meta v1 kernel=K entry=E num_warps=W shared=BYTES params=NAME:TYPE,...
 *        consts=NAME:TYPE:VALUE,... spec=NAME:d16|eq1|-,... [nospec=NAME,...]
 *   "meta-front"             one metadata line per kernel without code generation
 *                            (no LLVM): the unspecialised entry's, with shared=0
 *   "llvm"                   the optimised LLVM IR the PTX comes from
 *   "autotune"               after blkc_build: one line per kernel with @autotune,
 *     // blk-autotune v1 kernel=K key=P,... configs=NAME:VALUE,...;NAME:VALUE,...
 *                            (literal values; none for a kernel whose configs
 *                            use constant expressions)
 *   "times"                  the wall time of each compile phase so far, one
 *                            "NAME MS ms" line each: parse, sema, passes, then
 *                            the backend's (after "ptx"/"llvm"/"meta") lower,
 *                            verify, libdevice, llvm-opt, llvm-emit; and total
 * The PTX kinds return NULL (with diagnostics) when codegen fails.
 * Returns NULL (with a diagnostic) for an unknown name. */
const char *blkc_emit(blkc_ctx *c, const char *what);

/* The files the last load read: 0 is the source itself, then every file it
 * imports (directly or not), for a cache that must notice an edited import.
 * blkc_unit_path returns NULL past the end. */
int blkc_num_units(const blkc_ctx *c);
const char *blkc_unit_path(const blkc_ctx *c, int i);

/* Kernel variants (argument specialisation, docs/codegen.md). By default the
 * PTX backend makes two entries per kernel: one assuming every pointer and
 * integer argument divisible by 16 (except @do_not_specialize parameters)
 * and the fallback assuming nothing. blkc_add_variant asks for one more:
 *
 *   SPEC := [KERNEL ":"] [NAME "=" CODE ("," NAME "=" CODE)*]
 *   CODE := d16 (divisible by 16) | eq1 (an integer equal to 1) | - (nothing)
 *
 * e.g. "stride_x=eq1,n=d16"; parameters not named assume nothing. Without
 * KERNEL it applies to every kernel built, which must all have the named
 * parameters. Entries come most assumptions first, so a runtime taking the
 * first entry whose assumptions hold takes the most specialised one.
 * The syntax is checked here, the names by blkc_build (at once if c is
 * built already): unknown or const parameters, eq1 on a pointer, d16/eq1 on
 * a float or bool, @do_not_specialize parameters are BLK_ERR_USAGE with a
 * diagnostic. Identical assumptions make one entry. */
blk_status blkc_add_variant(blkc_ctx *c, const char *spec);
/* on = 0: only the variants added with blkc_add_variant (the runtime's JIT
 * compiles exactly one per launch signature). Default 1. */
void blkc_set_default_variants(blkc_ctx *c, int on);

/* ---- the CPU interpreter ---- */
typedef enum { BLK_ARG_PTR, BLK_ARG_INT, BLK_ARG_FLOAT } blk_arg_kind;
typedef struct {
    blk_arg_kind kind;
    void *ptr;      /* BLK_ARG_PTR: host memory */
    size_t size;    /* BLK_ARG_PTR: bytes reachable from ptr, 0 = unknown (unchecked) */
    int64_t i;      /* BLK_ARG_INT (any integer or bool parameter) */
    double f;       /* BLK_ARG_FLOAT (f16/bf16/f32/f64 parameter; rounded to its type) */
} blk_arg;
#define BLK_PTR(p, bytes) ((blk_arg){BLK_ARG_PTR, (void *)(p), (size_t)(bytes), 0, 0.0})
#define BLK_INT(v) ((blk_arg){BLK_ARG_INT, NULL, 0, (int64_t)(v), 0.0})
#define BLK_FLOAT(v) ((blk_arg){BLK_ARG_FLOAT, NULL, 0, 0, (double)(v)})

/* Run a built kernel over the whole grid on host memory, one program
 * instance after another. Arguments are checked against the kernel's runtime
 * parameters (count and kind). Accesses outside a pointer argument's `size`
 * (when given) stop the run with BLK_ERR_RUNTIME and a located diagnostic.
 * `print` output goes to print_out (stdout when NULL). */
blk_status blkc_interp_run(blkc_ctx *c, const char *kernel, const unsigned grid[3],
                           const blk_arg *args, int nargs, FILE *print_out);
/* The step budget of each blkc_interp_run: a step is one instruction over
 * one element of its result, counted over the whole grid; a run that takes
 * more stops with BLK_ERR_RUNTIME and "kernel exceeded its step budget in
 * this loop" at the innermost loop running (an endless loop ends instead of
 * hanging the process). 0 = no limit. Default: $BLK_INTERP_STEPS when set
 * (a decimal number; 0 = no limit), else 2^30 (~40 s of an endless loop). */
void blkc_set_interp_steps(blkc_ctx *c, uint64_t steps);

/* The pass pipeline, in order (NULL-terminated): the names blkc_set_dump_after
 * takes besides "sema". */
const char *const *blkc_pass_names(void);

/* Compiler version string, e.g. "0.1.0". */
const char *blkc_version(void);

#ifdef __cplusplus
}
#endif
#endif

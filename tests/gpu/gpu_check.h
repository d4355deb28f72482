/* gpu_check.h — what the files of gpu_check share (docs/gpu-testing.md):
 *
 *   gpu_check.c   the command line (main) and the usage text
 *   gpu_suite.c   the check suite over gpu_kernels.h, its watchdog, --list
 *   gpu_bench.c   compile-bench and launch-bench
 *   gpu_ptx.c     `gpu_check ptx`: libblkc's PTX for a .blk file
 *   gpu_cases.c   one case of a row: dtypes, the size expressions, blk-meta,
 *                 inputs and buffers, the comparison against the reference
 *   gpu_run.c     the device, compiling and loading a row's module, running
 *                 one case on the device and on the interpreter
 */
#ifndef GPU_CHECK_H
#define GPU_CHECK_H

#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>
#include "blk/blkc.h"
#include "blk/blkrt.h"
#include "blk/blkrt_jit.h"
#include "../runtime/fake_cuda.h"
#include "../../runtime/meta.h" /* rt_meta: the variants' tensor maps, as the runtime reads them */
/* now_s, splitmix, backend_arch: shared with the differential testers
 * (arc4random is gpu_check.c's) */
#define DIFF_NO_ARC4RANDOM
#include "diff_common.h"
#include "../test_util.h" /* test_read_file */
typedef struct {
    int ulp;      /* pass if within this many units in the last place of the output's type */
    double rtol;  /* or if |got - want| <= rtol * (|want| + rms(want over the output)) */
    double atol;  /* or if |got - want| <= atol (0: not used) */
} gk_tol;

#define TOL_EXACT ((gk_tol){0, 0, 0})
#define TOL_BF16 ((gk_tol){1, 1e-5, 0})   /* f32 math rounded to bf16/f16: one unit of the narrow type
                                             (or f32-level error where the result is small: cancellation) */
#define TOL_BF16_MATH ((gk_tol){1, 1e-3, 0}) /* the same after libdevice exp2 (ex2.approx) and sin/cos of
                                                angles up to ~500 rad: angle errors ~1e-4 */
#define TOL_MATH ((gk_tol){4, 1e-5, 0})   /* libdevice vs libm (exp, erf, rsqrt): a few f32 ulps, or
                                             rtol 1e-5 where the formula cancels (gelu, x*scale+shift) */
/* GELU epilogues: 0.5 x (1 + erf(x / sqrt 2)) cancels for x below about -3
 * (torch's form too): an f32 ulp of erf near -1 (6e-8) moves the result by
 * |x| * 3e-8 absolute, i.e. by many ulps of a result of ~1e-6. The rms term
 * covers that where the output has other values; a 1x1 output has none,
 * so an absolute 1e-6 (|x| up to ~30) on top. */
#define TOL_BF16_GELU ((gk_tol){1, 1e-3, 1e-6})
#define TOL_MATH_GELU ((gk_tol){4, 1e-5, 1e-6})
#define TOL_RED ((gk_tol){4, 1e-5, 0})    /* reductions and scans in another order */
#define TOL_FP8 ((gk_tol){1, 1e-2, 0})    /* f8 dots on sm_90a's wgmma: the tensor cores align each
                                             instruction's 32 products to the largest and keep ~14 bits
                                             (an FP22 sum); blk adds each dot's sum to the f32 accumulator
                                             (two-level accumulation), which bounds the error to one dot's K:
                                             a model of that hardware gives at most 1.8e-3 (BK = 128) and
                                             3.8e-3 (BK = 256) of |want| + rms at K <= 512 */
#define TOL_ATTN ((gk_tol){2, 1e-2, 0})   /* attention: the probabilities are cast to bf16 before the second
                                             dot, so an f32 difference of one ulp in exp or in the first dot's
                                             sum order can move a p by one bf16 unit (2^-8 relative): the
                                             output moves by up to ~p*|v|/l * 2^-8, a few 1e-3 of its rms */

#define GK_MAX_CONFIGS 12 /* configurations per row of gpu_kernels.h */
typedef struct {
    const char *file, *kernel, *args, *grid, *require;
    const char *configs[GK_MAX_CONFIGS];
    const char *sizes[10];
    gk_tol tol;
} gk_kernel;


#define QUICK_SIZES 2
#define GUARD 1024          /* bytes of 0xFF before and after every buffer */
#define MAX_ARGS 32
#define MAX_VARS 48

typedef enum { K_FLOAT, K_INT, K_UINT, K_BOOL } dkind;

typedef struct {
    const char *name;
    int size;
    dkind kind;
} dtype;

typedef struct {
    char name[32];
    int64_t v;
} var;

typedef struct {
    var v[MAX_VARS];
    int n;
} env;

typedef struct {
    char entry[160];
    char spec[MAX_ARGS][8];    /* "d16", "eq1", "-" per parameter */
    int nassume;
} variant;

typedef struct {
    int nparams;
    char pname[MAX_ARGS][48];
    char ptype[MAX_ARGS][24];  /* as in blk-meta: "*f32", "i32", ... */
    int nvariants;
    variant var[16];           /* most assumptions first, as the runtime orders them */
    uint64_t nospec;           /* @do_not_specialize parameters */
    env consts;
} kmeta;

typedef enum { A_IN, A_OUT, A_ZERO, A_INT, A_FLOAT } arg_role;

typedef struct {
    arg_role role;
    char name[48];
    const dtype *t;       /* element type (buffers) */
    int64_t count;        /* elements */
    bool dist_int;        /* ri(lo,hi), sri(lo,hi) or cum(lo,hi) */
    bool sorted;          /* sri(lo,hi): the integers in ascending order (offset tables) */
    bool dist_cum;        /* cum(lo,hi): 0, then running sums of ri(lo,hi) steps */
    bool perm;            /* perm: 0 .. count-1 shuffled (a block table) */
    double lo, hi;        /* distribution; A_FLOAT: u(lo,hi) or lo == hi literal */
    int64_t ival;         /* A_INT */
    double fval;          /* A_FLOAT, drawn */
    unsigned char *host;  /* inputs: the data; outputs: the reference result */
    size_t bytes;
} arg;

typedef struct {
    int nargs;
    arg a[MAX_ARGS];
    uint32_t grid[3];
} case_t;

typedef struct {
    long written, bad, unwritten, stray, nan;
    int64_t max_ulp;
    double max_rel;
    char first[256];   /* the first bad element, described */
} cmp_stats;

typedef struct {
    bool cpu, dry_run, quick, perturb;
    int ordinal;
    const char *stdlib;
    uint64_t seed;
    const char *only[64];
    int nonly;
    const char *skip[64];
    int nskip;
    int case_timeout;  /* seconds without progress before the watchdog ends the run (exit 3) */
    const char *save_ptx;  /* directory: write each module's PTX there (KERNEL.CONFIG.ptx) */
} options;

typedef struct {
    blkc_ctx *ref;        /* the interpreter's build (also the PTX's, for GPUs) */
    blkrt_module *mod;
    blkrt_kernel *k;
    kmeta meta;
    rt_meta rtm;          /* the PTX's blk-meta as libblkrt parses it (tmaps=: predict_variant) */
    double compile_ms, load_ms;
    int ptx_bytes;
} module_t;

typedef struct {
    bool ok;
    char msg[512];
    int64_t max_ulp;
    double max_rel;
    const char *entry;
} result;

/* ---- gpu_cases.c ---- */
double median(double *v, size_t n);
extern uint64_t rng_state;
uint64_t fnv(const char *s, uint64_t h);
const dtype *find_dtype(const char *name);
void env_set(env *e, const char *name, size_t len, int64_t v);
bool eval_expr(const env *e, const char *s, int len, int64_t *out, char *err, size_t errn);
bool parse_assignments(env *e, const char *text, char *err, size_t errn);
bool parse_meta(const char *text, const char *kernel, kmeta *m, char *err, size_t errn);
void free_case(case_t *c);
bool build_case(const gk_kernel *K, const kmeta *m, const env *e, bool scalars_only, case_t *c, char *err,
                size_t errn);
bool is_poison(const unsigned char *p, int size);
void compare(const arg *a, const unsigned char *got, gk_tol tol, bool poisoned, cmp_stats *s);

/* ---- gpu_run.c ---- */
extern blkrt_device *dev;
extern blkrt_device_info dinfo;
extern bool have_fake;
int open_device(const options *o);
bool numeric_config(const char *cfg);
void unload(module_t *M);
bool load_module(const options *o, const gk_kernel *K, const char *cfg, module_t *M, char *err, size_t errn);
void cpu_consts(const options *o, const gk_kernel *K, const char *cfg, kmeta *m);
extern bool device_lost;
void run_gpu(const options *o, module_t *M, case_t *c, int offset, gk_tol tol, result *R);
bool run_reference(module_t *M, const gk_kernel *K, case_t *c, char *err, size_t errn, double *ms);

/* ---- the subcommands (gpu_suite.c, gpu_bench.c, gpu_ptx.c) ---- */
int do_check(const options *o);
int do_compile_bench(const options *o, int runs);
int do_launch_bench(const options *o, int launches);
int do_ptx(int argc, char **argv, const char *stdlib);
int do_list(void);

#endif

/* index_gen.h — index_diff's kernels (index_gen.c): the model of a
 * generated kernel (an expression tree over program ids, aranges,
 * arguments and constants, its mask and pointer form), what prepare()
 * derives from it, and the generator; index_diff.c runs, checks and
 * shrinks them.
 */
#ifndef BLK_INDEX_GEN_H
#define BLK_INDEX_GEN_H

#include "diff_common.h"

#define MAXN 64        /* nodes of one expression */
#define MAXA 3         /* integer index arguments a0..a2 */
#define NRUNS 3        /* argument sets: d16, eq1, arbitrary */
#define MAX_SPAN (1 << 18) /* elements of x and y */
#define GUARD 1024     /* bytes of 0xFF before and after every device buffer */
#define MAX_SHRINKS 3  /* failures shrunk per run (later ones: reported, with --only to rerun) */
typedef enum { N_PID, N_AR0, N_AR1, N_ARG, N_CONST, N_BIN, N_MULTIPLE_OF, N_MAX_CONTIG, N_ALIGNED, N_EXPAND0, N_EXPAND1 } nkind;

typedef enum { B_ADD, B_SUB, B_MUL, B_DIV, B_REM, B_SHL, B_SHR, B_AND, B_OR, B_MIN, B_MAX } bop;

/* One node; children by index into the kernel's pool (so a kernel copies by
 * value, which the shrinker relies on). N_ALIGNED is Triton's idiom
 * max_contiguous(multiple_of(x, c), c) (1-D only: on 2-D values multiple_of
 * also speaks about the other dim). N_EXPAND0/1 (2-D only) compute a 1-D
 * expression over r0 (r1), pid, arguments and constants, then expand it:
 * `(r0 + r0)[:, None]` — facts then reach the new dim through expand_dims,
 * not through the leaves' own `[:, None]`. */
typedef struct {
    uint8_t kind, op;
    bool wide;         /* N_PID/N_AR*: the i64 copy (pidw, rw) */
    int8_t arg;        /* N_ARG */
    int16_t l, r;      /* N_BIN: both; hints: l */
    int64_t c;         /* N_CONST value; hints: the hint's constant */
} node;

enum { MK_N = 1, MK_AR = 2, MK_E = 4 }; /* mask terms: lin < n, r < c, e < c (or e >= c) */

/* the element types of x, y and out */
static const struct { const char *name; int size; } elems[] = {{"i8", 1}, {"i16", 2}, {"i32", 4}, {"i64", 8}};

typedef struct {
    int rank, b0, b1, grid; /* block [b0] or [b0, b1]; grid programs along axis 0 */
    int elem;               /* index into elems: the type of x, y, out */
    int nargs;
    bool arg_wide[MAXA];    /* i64 argument */
    int nruns;
    int64_t argv[NRUNS][MAXA];
    int mask;               /* MK_* bits */
    int mask_ar_dim;        /* MK_AR on 2-D: which arange (0: r0, 1: r1) */
    int64_t mask_ar_c, mask_e_c;
    bool mask_e_ge;
    int64_t n[NRUNS];       /* MK_N: n per run */
    int ptr_form;           /* 0: x + OFF + e, 1: x + (e + OFF), 2: (x + e) + OFF */
    int extra_off;          /* OFF = extra_off - lo(EXPR) */
    int nn, root;
    node n_[MAXN];
} kspec;

/* What prepare() derives from a kspec. */
typedef struct {
    int64_t lo, hi, off, span; /* EXPR in [lo, hi]; x and y hold span elements */
    int64_t total;             /* elements of out */
} kderived;

typedef struct {
    int64_t lo, hi;
    bool wide;   /* the node's type is i64 (literals adopt the other operand's type) */
    bool lit;    /* a literal (weakly typed) */
    int shape;   /* bit 0: varies along dim 0 (1-D: the block), bit 1: along dim 1 */
} ival;

#define BOUND32 ((int64_t)1 << 30)
#define BOUND64 ((int64_t)1 << 40)

typedef struct {
    int run, pid, i0, i1;
} point;

/* Facts about node i that hints may state, from its values over every
 * launch: the gcd of all values (0 if all are 0), the largest power of two c
 * (<= the last dim) such that the values come in aligned runs of c
 * consecutive integers along the last dim, and the largest such c whose runs
 * also start at multiples of c. */
typedef struct {
    int64_t gcd, contig, aligned;
} facts;

char *kernel_source(const kspec *K, const kderived *D);
int64_t eval(const kspec *K, int i, const point *p);
bool prepare(const kspec *K, kderived *D);
void generate(uint64_t seed, int index, kspec *K, kderived *D);

#endif

/* meta.h — kernel metadata ("blk-meta" lines) as the runtime reads it.
 *
 * The compiler writes one comment line per kernel variant into the PTX:
 *
 *   // blk-meta v1 kernel=vector_add entry=vector_add num_warps=4 shared=0
 *      params=x:*f32,y:*f32,out:*f32,n:i32 consts=BLOCK:i32:1024 spec=x:d16,y:d16,out:d16,n:-
 *
 * (one line in the file). docs/runtime.md is the specification; meta.c the
 * parser. Lines of one kernel name are its variants: the same params and
 * consts, different entries and specs. Parsing needs no driver and no device.
 */
#ifndef BLK_RT_META_H
#define BLK_RT_META_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "blk/blkrt.h"

#define RT_MAX_PARAMS 64   /* specialisation masks are 64-bit */

/* blk scalar types, in blk-meta spelling order (meta.c's table). */
typedef enum {
    RT_T_BOOL, RT_T_I8, RT_T_I16, RT_T_I32, RT_T_I64, RT_T_U8, RT_T_U16, RT_T_U32, RT_T_U64,
    RT_T_F16, RT_T_BF16, RT_T_F32, RT_T_F64, RT_T_F8E4M3, RT_T_F8E5M2,
    RT_T_PTR,
} rt_type;

typedef enum { RT_SPEC_NONE = 0, RT_SPEC_D16 = 1, RT_SPEC_EQ1 = 2 } rt_spec;

typedef struct {
    const char *name;
    const char *type_str;  /* "*f32", "*const.bf16", "i32" (const pointers always "*const.") */
    rt_type type;
    rt_type pointee;       /* RT_T_PTR only */
    bool is_const;         /* *const.T (or *const T) */
} rt_param;

typedef struct {
    const char *name;
    rt_type type;
    int64_t ival;
    double fval;           /* float consts; ints are also given here as doubles */
} rt_const;

/* TMA tensor maps (tmaps=, docs/runtime.md): the runtime encodes one
 * CUtensorMap per map at launch and passes it after the declared params. */
#define RT_TMAP_MAX_RANK 5     /* cuTensorMapEncodeTiled's limit */
#define RT_TMAP_MAX_FACTORS 8  /* factors of one dim or stride, over all its terms */
#define RT_TMAP_MAX_TERMS 4    /* terms of one dim or stride sum */
#define RT_MAX_TMAPS 16        /* maps per variant (each is 128 bytes on the launch stack) */

/* A sum of products of factors, flat: f[0..nfactors) in text order, a
 * factor with `plus` set starting the next term. Each factor is a decimal
 * (param < 0) or the value of integer parameter `param` at launch. */
typedef struct {
    int nfactors;
    struct {
        int param;         /* index into params, or -1 */
        int64_t value;     /* param < 0: the decimal, 1..2^40 */
        bool plus;         /* a '+' before it (never on f[0]) */
    } f[RT_TMAP_MAX_FACTORS];
} rt_tmap_expr;

typedef struct {
    int arg;               /* the pointer parameter whose argument is the base */
    rt_type dtype;         /* its pointee */
    int rank;              /* 1..RT_TMAP_MAX_RANK */
    rt_tmap_expr dim[RT_TMAP_MAX_RANK];        /* elements, fastest first */
    rt_tmap_expr stride[RT_TMAP_MAX_RANK - 1]; /* elements, of dims 1..rank-1 */
    uint32_t box[RT_TMAP_MAX_RANK];            /* 1..256 each */
    int swizzle;           /* bytes: 0, 32, 64 or 128 */
} rt_tmap;

typedef struct {
    const char *entry;
    int num_warps;
    int shared;
    uint8_t *spec;         /* rt_spec per parameter */
    int line;              /* 1-based line in the text it came from */
    int ntmaps;            /* tmaps=: 0 on lines without it */
    rt_tmap *tmaps;
    int cluster;           /* cluster=: CTAs per cluster along grid x (1, 2, 4, 8); 1 on lines without it */
    bool cluster_required; /* cluster_required=1: the code needs its clusters (@cluster); every launch is one */
} rt_meta_variant;

typedef struct {
    const char *name;
    int nparams;
    rt_param *params;
    int nconsts;
    rt_const *consts;
    uint64_t nospec;       /* parameters no variant may assume anything of (@do_not_specialize) */
    int nvariants;
    rt_meta_variant *variants;  /* in file order */
} rt_meta_kernel;

typedef struct rt_pool rt_pool;

typedef struct {
    int nkernels;
    rt_meta_kernel *kernels;
    rt_pool *pool;         /* owns everything above */
} rt_meta;

/* Parse every blk-meta line of text (other lines are ignored). On error the
 * message names the line: "blk-meta line 3: ...". *out is empty after an
 * error and must be freed with rt_meta_free either way. */
blkrt_status rt_meta_parse(const char *text, size_t len, rt_meta *out);
void rt_meta_free(rt_meta *m);
/* Same parameters, consts and nospec (what the variants of a kernel share). */
bool rt_meta_same_kernel(const rt_meta_kernel *a, const rt_meta_kernel *b);

const char *rt_type_name(rt_type t);
bool rt_type_is_int(rt_type t);    /* integers (not bool) */
bool rt_type_is_float(rt_type t);
int rt_type_bytes(rt_type t);      /* size as a kernel parameter */

/* A bump allocator: everything of one metadata set is freed at once. */
rt_pool *rt_pool_new(void);
void *rt_pool_alloc(rt_pool *p, size_t bytes);  /* zeroed; NULL when out of memory */
char *rt_pool_strndup(rt_pool *p, const char *s, size_t n);
void rt_pool_free(rt_pool *p);

#endif

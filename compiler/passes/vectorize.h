/* vectorize.h — how wide each global memory access is (Triton's coalesce +
 * the vector width its LoadStoreOpToLLVM derives).
 *
 * For every LOAD, STORE, ATOMIC_RMW/CAS, DESC_LOAD and DESC_STORE of a
 * kernel the pass decides the layout the access is performed in and `vec`:
 * a thread's registers of the access come in groups of vec consecutive
 * elements along the layout's fastest dim, and each group is one
 * ld.global.v{2,4} / st.global.v{2,4} of vec * element bytes (at most 16).
 * A group is one access only when axisinfo proves that
 *   - its pointers are consecutive (contiguity along the fast dim),
 *   - the first is aligned to the group's size (divisibility), and
 *   - the mask is the same for the whole group (constancy),
 * and the layout gives a thread at least vec consecutive elements. `limit`
 * records which of these stopped the access from being wider — the first
 * thing to look at when a kernel is slower than expected.
 *
 *   kernel vector_add(x: *f32, ...)  n % 16 == 0 variant:
 *     load x + offs under offs < n:  4 x f32 = 16 bytes (widest)
 *   the fallback (n unknown): 1 x f32 (mask: offs < n may change between
 *   any two elements)
 *
 * Needs: ax and lay of the same function and variant (same numbering).
 * Guarantees: every memory op has an entry; codegen (cg_memory.c) performs
 * the accesses exactly as recorded. Analysis only: the IR is unchanged.
 */
#ifndef BLK_VECTORIZE_H
#define BLK_VECTORIZE_H

#include "axisinfo.h"
#include "layout.h"

typedef enum {
    VEC_WIDEST,     /* the target's widest access (16 bytes) */
    VEC_SCALAR,     /* a scalar access */
    VEC_ATOMIC,     /* atomics are one element each */
    VEC_THREAD_RUN, /* the layout gives a thread fewer consecutive elements */
    VEC_CONTIG,     /* the pointers are not consecutive further */
    VEC_ALIGN,      /* the first pointer of a group is not aligned further */
    VEC_MASK,       /* the mask may change within a wider group */
    VEC_DESC,       /* descriptor: stride-1 dim, base/stride/offset/extent divisibility */
    VEC_ACC,        /* a tensor-core accumulator stored from its registers (lay_for_store):
                       pairs (whole sectors at 4 bytes); not a missed width */
    VEC_ACC_QUAD,   /* the same, 2-byte elements: the pairs of 4 adjacent 8-column
                       blocks exchanged across each quad of lanes (codegen: 4
                       shuffles), so that a lane writes 8 consecutive elements */
} vec_limit;

typedef struct {
    const lay_layout *lay; /* layout of the access (NULL: scalar) */
    int vec;               /* elements per access */
    int bytes;             /* vec * element bytes */
    vec_limit limit;
} vec_access;

typedef struct {
    int num;
    vec_access *acc; /* indexed by the memory op's ir_inst.scratch (1-based) */
} vec_table;

/* Needs ax and lt for f; numbers the memory ops of f in ir_inst.scratch. */
vec_table *vec_analyze(blk_arena *a, ir_func *f, const ax_table *ax, const lay_table *lt, int max_vec_bytes);
/* The decision for memory op `in` (NULL if in is not one the table knows). */
const vec_access *vec_get(const vec_table *t, const ir_inst *in);
const char *vec_limit_name(vec_limit l);

/* --emit=ir-after=vectorize: the IR, then one line per memory op. */
void vec_dump_module(blk_strbuf *out, ir_module *m);
void pass_vectorize(ir_module *m); /* analysis only: leaves the IR unchanged */

#endif

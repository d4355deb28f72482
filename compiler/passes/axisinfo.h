/* axisinfo.h — per-dimension facts about integer and pointer values
 * (Triton's AxisInfo), the proof behind vectorised and coalesced accesses.
 *
 * For every value v of rank r and every dimension d, three numbers:
 *
 *   contig[d]     the elements come in runs of `contig` consecutive values
 *                 along d (v[.., i+1, ..] == v[.., i, ..] + 1), each run
 *                 starting at an index that is a multiple of contig;
 *   div[d]        the first element of each such run is a multiple of div
 *                 (pointers: in bytes); for contig == 1, every element is;
 *   constancy[d]  runs of `constancy` equal values along d, aligned likewise.
 *
 * Example (BLOCK = 8, the variant that assumes n % 16 == 0):
 *
 *   pid   = program_id(0)            scalar        div 1
 *   base  = pid * 8                  scalar        div 8
 *   offs  = base + arange(0, 8)      [8]  contig 8  div 8   const 1
 *   p     = x + offs   (x: *f32)     [8]  contig 8  div 16  (gcd(16, 8*4))
 *   m     = offs < n                 [8]  contig 1  div 1   const 8
 *
 * so a thread owning 4 consecutive elements of p may use ld.global.v4 (16
 * bytes, 16-aligned) under a mask that is uniform over those 4.
 *
 * Scalars are rank 0 and use index 0 (contig = constancy = 1).
 *
 * Argument specialisation (Triton's): the runtime compiles a variant that
 * assumes each pointer and integer argument is divisible by 16 (AX_SPEC_D16)
 * and a fallback without assumptions; ax_analyze takes the assumption per
 * runtime parameter. An integer argument assumed equal to 1 (AX_SPEC_EQ1) is
 * the constant 1, and a product with a known 1 has the other factor's facts:
 *
 *   offs  = base + arange(0, 8)      [8]  contig 8  div 8
 *   s     = stride  (i32, eq1)       scalar         value 1
 *   p     = x + offs * s             [8]  contig 8  div 16   (d16 x)
 *
 * so a strided load becomes a vector load in the variant where stride == 1.
 */
#ifndef BLK_AXISINFO_H
#define BLK_AXISINFO_H

#include "../ir/ir.h"

/* Divisibilities are capped here (0 is divisible by everything). */
#define AX_MAX_DIV ((int64_t)1 << 30)

typedef enum { AX_SPEC_NONE, AX_SPEC_D16, AX_SPEC_EQ1 } ax_spec;

typedef struct {
    int64_t contig[IR_MAX_RANK];
    int64_t div[IR_MAX_RANK];
    int64_t constancy[IR_MAX_RANK];
    bool has_value;  /* every element equals value: integer constants, eq1 */
    int64_t value;   /* arguments and their splats/broadcasts/widenings */
    bool nonneg;     /* every element is >= 0 (program ids, aranges from 0, their sums
                        and products): what makes x % c contiguous */
} ax_info;

typedef struct {
    int num_values;
    ax_info *info; /* indexed by ir_value.id (ir_number_values numbering) */
} ax_table;

/* Analyse f (numbers its values). spec[i] is the assumption for runtime
 * parameter i (NULL: none). Never fails; unknown ops get the conservative
 * facts (1, 1, 1). */
ax_table *ax_analyze(blk_arena *a, ir_func *f, const ax_spec *spec);
/* The default specialisation: AX_SPEC_D16 for every pointer and integer
 * parameter not in @do_not_specialize, AX_SPEC_NONE for the others (NULL
 * when out of memory). */
ax_spec *ax_d16_spec(blk_arena *a, const ir_func *f);
const ax_info *ax_get(const ax_table *t, const ir_value *v);
/* The largest power of two dividing x (AX_MAX_DIV for 0). */
int64_t ax_pow2_div(int64_t x);
/* Divisibility every element of v has (not just run starts). */
int64_t ax_elem_div(const ax_table *t, const ir_value *v);

/* --emit=ir-after=axisinfo: the IR, then one comment line per block value. */
void ax_dump_module(blk_strbuf *out, ir_module *m);
void pass_axisinfo(ir_module *m); /* analysis only: leaves the IR unchanged */

#endif

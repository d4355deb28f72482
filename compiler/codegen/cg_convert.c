/* cg_convert.c — moving elements between threads through shared memory:
 * layout conversions and the shape ops (reshape, permute, join, split, cat).
 *
 * Protocol of the one scratch buffer (cg_smem): bar.sync; every thread
 * writes each element it owns at its row-major index (replicas write the
 * same value: harmless); bar.sync; every thread reads the elements its
 * target layout gives it. The leading barrier keeps a previous reader of the
 * scratch from seeing it overwritten. Barriers use
 * llvm.nvvm.barrier.cta.sync.aligned.all (FACTS.md); control flow is uniform
 * so every thread reaches them.
 *
 * permute of a blocked layout is free when the result's layout is the
 * permuted one (the registers are merely renamed); the other shape ops
 * always go through memory (lower_gather: one element at a time;
 * cg_convert: vectors, below; its rows swizzled where one warp access
 * meets several rows).
 */
#include <string.h>

#include "cg_internal.h"

static int elem_bytes(blk_dtype t) { return t == DT_BOOL ? 1 : dtype_bytes(t); }

static LLVMValueRef smem_addr(cg_ctx *C, LLVMValueRef base, LLVMValueRef lin, blk_dtype t) {
    LLVMValueRef off = LLVMBuildMul(C->b, lin, cg_const_i32(C, elem_bytes(t)), "");
    return LLVMBuildGEP2(C->b, C->i8, base, &off, 1, "");
}

static void smem_store(cg_ctx *C, LLVMValueRef base, LLVMValueRef lin, blk_dtype t, LLVMValueRef v) {
    if (t == DT_BOOL) v = LLVMBuildZExt(C->b, v, C->i8, "");
    LLVMValueRef s = LLVMBuildStore(C->b, v, smem_addr(C, base, lin, t));
    LLVMSetAlignment(s, (unsigned)elem_bytes(t));
}

static LLVMValueRef smem_load(cg_ctx *C, LLVMValueRef base, LLVMValueRef lin, blk_dtype t) {
    LLVMValueRef v = LLVMBuildLoad2(C->b, cg_mem_type(C, t), smem_addr(C, base, lin, t), "");
    LLVMSetAlignment(v, (unsigned)elem_bytes(t));
    if (t == DT_BOOL) v = LLVMBuildICmp(C->b, LLVMIntNE, v, LLVMConstInt(C->i8, 0, 0), "");
    return v;
}

/* write all of x (shape of t) at row-major positions + offset */
static void write_all(cg_ctx *C, LLVMValueRef base, cg_val x, ir_type t, int64_t offset) {
    cg_lay_info li;
    cg_lay_info_get(C, x.lay, t.rank, t.shape, &li);
    for (int i = 0; i < li.nregs && i < x.n; i++)
        smem_store(C, base, LLVMBuildAdd(C->b, cg_reg_linear(C, &li, i), cg_const_i32(C, offset), ""),
                   (blk_dtype)t.dtype, x.v[i]);
}

/* ---- cg_convert: vector accesses, swizzled rows ----
 *
 * A thread's registers that hold consecutive elements of the last dim (a
 * run inside one spt group: coord = base + ... + k % spt, base a multiple
 * of spt) are written and read as one vector of up to 16 bytes: the mma
 * accumulator's pairs as 4 bytes, a coalesced store layout's 8 bf16 as 16
 * (sm_80 attention's epilogue: 96 st.shared.b16 and 120 ld.shared.u16 per
 * thread became 4-byte stores and 16-byte loads).
 *
 * The accumulator layouts write 8 rows of 4 lanes at once: with rows of a
 * multiple of 128 bytes, all 8 in the same banks (an 8-way conflict per
 * store in attention's epilogue, ncu). So where a side's warp access meets
 * several rows with under 128 bytes of each, 16-byte chunk c of row r is
 * stored at chunk c ^ (r % 8) (fewer for rows under 128 bytes): the 8 rows
 * land in 8 different chunks, and a 128-byte run of one row stays in its
 * 128 bytes, permuted. A vector access of at most 16 bytes, aligned to its
 * size, never straddles a chunk. (Padding the rows instead changed LLVM's
 * block placement around attention's loop so that ptxas serialized its
 * wgmmas: C7515, caught by the ptx tests.) */

/* whether one warp access in layout li (v-element vectors) meets several
 * rows with less than 128 bytes of each */
static bool rows_collide(const cg_lay_info *li, int v, int eb) {
    if (li->rank < 2) return false;
    int last = li->f.dims[li->rank - 1], prev = li->f.dims[li->rank - 2];
    return li->f.tpw[prev] > 1 && li->f.tpw[last] * v * eb < 128;
}

/* the chunks a row's swizzle permutes (rows of rb bytes): 0 for none */
static int swizzle_chunks(int64_t rb) {
    if (rb < 32 || (rb & (rb - 1))) return 0;
    return rb >= 128 ? 8 : (int)(rb / 16);
}

/* The scratch address of register r of layout li (eb-byte elements, rows
 * of rb bytes): row-major, its 16-byte chunk XORed with its row modulo k
 * when k. A thread's coordinates are its base plus a constant per register
 * (cg_reg_offsets); the XOR takes the base and the constant's part below
 * 16k bytes only, since (x + h) ^ s = (x ^ s) + h for h a multiple of 16k
 * and s < 16k: a thread computes one swizzled column per distinct low
 * part, not one address per register (an XOR per register of matmul's
 * epilogue made matmul_persistent spill). The thread's row and column
 * bases are taken through an opaque asm once per side of a conversion:
 * as plain arithmetic on the thread's coordinates, LLVM matched them with
 * the same expressions before attention's loop (its tiles' swizzles) and
 * kept those live across the loop for the epilogue (sm_80 causal
 * attention: 196 -> 232 bytes of spills, 3% slower). */
typedef struct {
    LLVMValueRef row, col, sw[8]; /* row index, column bytes, (row + j) % k << 4 */
} scratch_side;

static LLVMValueRef opaque(cg_ctx *C, LLVMValueRef v) {
    return cg_inline_asm(C, C->i32, "mov.b32 $0, $1;", "=r,r", &v, 1, false);
}

/* opaque(v) for v = base of value dim d (a multiple of its spt when the
 * dim spans more than one thread's registers), the multiple kept visible */
static LLVMValueRef aligned_opaque(cg_ctx *C, const cg_lay_info *li, int d, LLVMValueRef v) {
    int sh = 0, spt = li->shape[d] > li->f.spt[li->f.dims[d]] ? li->f.spt[li->f.dims[d]] : 1;
    while (spt % (2 << sh) == 0) sh++;
    LLVMValueRef q = LLVMBuildLShr(C->b, v, cg_const_i32(C, sh), "");
    return LLVMBuildShl(C->b, opaque(C, q), cg_const_i32(C, sh), "");
}

static LLVMValueRef scratch_addr(cg_ctx *C, LLVMValueRef base, const cg_lay_info *li, int r, int eb, int64_t rb, int k,
                                 scratch_side *side) {
    LLVMBuilderRef b = C->b;
    if (!k) {
        LLVMValueRef off = LLVMBuildMul(b, cg_reg_linear(C, li, r), cg_const_i32(C, eb), "");
        return LLVMBuildGEP2(b, C->i8, base, &off, 1, "");
    }
    int64_t off[IR_MAX_RANK], rc = 0, stride = 1, span = 16 * k;
    cg_reg_offsets(li, r, off);
    int last = li->rank - 1;
    for (int d = last - 1; d >= 0; d--) {
        rc += off[d] * stride;
        stride *= li->shape[d];
    }
    if (!side->row) {
        LLVMValueRef row = cg_const_i32(C, 0);
        for (int d = last - 1, st = 1; d >= 0; st *= li->shape[d], d--) {
            LLVMValueRef t = LLVMBuildMul(b, li->base[d], cg_const_i32(C, st), "");
            row = LLVMBuildAdd(b, row, t, "");
        }
        /* a base is a multiple of its dim's spt: said again after the
         * asm, so that LLVM still folds a thread's registers into a few
         * addresses plus immediates (moe_sort's [256, 64] cumsum: 116
         * bytes of spills without it) */
        side->row = last == 1 ? aligned_opaque(C, li, 0, row) : opaque(C, row);
        LLVMValueRef col = aligned_opaque(C, li, last, li->base[last]);
        side->col = LLVMBuildMul(b, col, cg_const_i32(C, eb), "");
    }
    LLVMValueRef row = side->row;
    if (!side->sw[rc % k]) {
        LLVMValueRef rlow = LLVMBuildAdd(b, row, cg_const_i32(C, rc % k), "");
        LLVMValueRef sel = LLVMBuildAnd(b, rlow, cg_const_i32(C, k - 1), "");
        side->sw[rc % k] = LLVMBuildShl(b, sel, cg_const_i32(C, 4), "");
    }
    LLVMValueRef sw = side->sw[rc % k];
    int64_t cb = off[last] * eb;
    LLVMValueRef cl = LLVMBuildAdd(b, side->col, cg_const_i32(C, cb % span), "");
    LLVMValueRef x = LLVMBuildXor(b, cl, sw, "");
    LLVMValueRef rowb = LLVMBuildMul(b, row, cg_const_i32(C, rb), "");
    LLVMValueRef at = LLVMBuildAdd(b, rowb, x, "");
    LLVMValueRef o = LLVMBuildAdd(b, at, cg_const_i32(C, rc * rb + cb - cb % span), "");
    return LLVMBuildGEP2(b, C->i8, base, &o, 1, "");
}

/* the widest run (elements, a power of two) of consecutive last-dim
 * elements in one thread's registers, aligned, at most 16 bytes */
static int run_width(const cg_lay_info *li, int eb) {
    int d = li->rank - 1, p = li->f.dims[d];
    int v = 1;
    while (v * 2 * eb <= 16 && li->f.spt[p] % (v * 2) == 0 && li->shape[d] % (v * 2) == 0 && li->n[d] % (v * 2) == 0) v *= 2;
    return v;
}

/* whether register r starts its group of v (its last-dim index a
 * multiple of v), and the group's j-th register */
static bool group_first(const cg_lay_info *li, int r, int v) {
    int k[IR_MAX_RANK];
    cg_reg_index(li, r, k);
    return k[li->rank - 1] % v == 0;
}

static int group_reg(const cg_lay_info *li, int r, int j) {
    int k[IR_MAX_RANK];
    cg_reg_index(li, r, k);
    k[li->rank - 1] += j;
    return cg_reg_of(li, k);
}

/* The distinct swizzled column terms a thread of layout li needs
 * (scratch_addr: one per pair of row residue and low column bytes of its
 * v-element groups). A layout that keeps a row's many columns in one
 * thread needs one address register per group: moe_sort's [256, 64]
 * cumsum, one row per lane, would need 32 and spilled. */
static int swizzle_terms(const cg_lay_info *li, int v, int eb, int k) {
    bool seen[8 * 128] = {0};
    int n = 0, last = li->rank - 1;
    for (int r = 0; r < li->nregs; r++) {
        if (!group_first(li, r, v)) continue;
        int64_t off[IR_MAX_RANK], rc = 0, stride = 1;
        cg_reg_offsets(li, r, off);
        for (int d = last - 1; d >= 0; d--) rc += off[d] * stride, stride *= li->shape[d];
        int key = (int)(rc % k) * 128 + (int)(off[last] * eb % (16 * k));
        if (!seen[key]) seen[key] = true, n++;
    }
    return n;
}

cg_val cg_convert(cg_ctx *C, blk_loc loc, cg_val x, ir_type t, const lay_layout *to) {
    LLVMBuilderRef b = C->b;
    blk_dtype dt = (blk_dtype)t.dtype;
    int eb = elem_bytes(dt);
    if (dt == DT_BOOL || t.rank == 0) { /* i1 in registers, i8 in memory: one at a time */
        int64_t bytes = ir_numel(t) * eb;
        LLVMValueRef base = cg_smem(C, loc, bytes);
        cg_barrier(C);
        write_all(C, base, x, t, 0);
        cg_barrier(C);
        cg_lay_info li;
        cg_lay_info_get(C, to, t.rank, t.shape, &li);
        cg_val r = cg_new_val(C, li.nregs, to);
        for (int i = 0; i < li.nregs; i++) r.v[i] = smem_load(C, base, cg_reg_linear(C, &li, i), dt);
        return r;
    }
    LLVMValueRef base = cg_smem_aligned(C, loc, ir_numel(t) * eb, 16);
    LLVMTypeRef et = cg_mem_type(C, dt);
    cg_barrier(C);
    cg_lay_info wi, li;
    cg_lay_info_get(C, x.lay, t.rank, t.shape, &wi);
    cg_lay_info_get(C, to, t.rank, t.shape, &li);
    int wv = x.n >= wi.nregs ? run_width(&wi, eb) : 1, rv = run_width(&li, eb);
    int64_t rb = (int64_t)t.shape[t.rank - 1] * eb;
    int k = rows_collide(&wi, wv, eb) || rows_collide(&li, rv, eb) ? swizzle_chunks(rb) : 0;
    if (k && (swizzle_terms(&wi, wv, eb, k) > 8 || swizzle_terms(&li, rv, eb, k) > 8)) k = 0;
    scratch_side ws = {0}, rs = {0}; /* the writers' and the readers' */
    for (int i = 0; i < wi.nregs && i < x.n; i++) {
        if (!group_first(&wi, i, wv)) continue;
        LLVMValueRef at = scratch_addr(C, base, &wi, i, eb, rb, k, &ws), v;
        if (wv == 1) v = x.v[i];
        else {
            v = LLVMGetUndef(LLVMVectorType(et, (unsigned)wv));
            for (int j = 0; j < wv; j++) v = LLVMBuildInsertElement(b, v, x.v[group_reg(&wi, i, j)], cg_const_i32(C, j), "");
        }
        LLVMSetAlignment(LLVMBuildStore(b, v, at), (unsigned)(wv * eb));
    }
    cg_barrier(C);
    cg_val r = cg_new_val(C, li.nregs, to);
    for (int i = 0; i < li.nregs; i++) {
        if (!group_first(&li, i, rv)) continue;
        LLVMValueRef at = scratch_addr(C, base, &li, i, eb, rb, k, &rs);
        LLVMTypeRef ty = rv == 1 ? et : LLVMVectorType(et, (unsigned)rv);
        LLVMValueRef v = LLVMBuildLoad2(b, ty, at, "");
        LLVMSetAlignment(v, (unsigned)(rv * eb));
        if (rv == 1) r.v[i] = v;
        else
            for (int j = 0; j < rv; j++) r.v[group_reg(&li, i, j)] = LLVMBuildExtractElement(b, v, cg_const_i32(C, j), "");
    }
    return r;
}

/* Row-major linear index of coordinates c in shape s. */
static LLVMValueRef linear_of(cg_ctx *C, LLVMValueRef *c, const int32_t *s, int rank) {
    LLVMValueRef lin = cg_const_i32(C, 0);
    int64_t stride = 1;
    for (int d = rank - 1; d >= 0; d--) {
        lin = LLVMBuildAdd(C->b, lin, LLVMBuildMul(C->b, c[d], cg_const_i32(C, stride), ""), "");
        stride *= s[d];
    }
    return lin;
}

static void lower_gather(cg_ctx *C, ir_inst *in) {
    LLVMBuilderRef b = C->b;
    ir_value *a = in->operands[0], *bv = in->num_operands > 1 ? in->operands[1] : NULL;
    blk_dtype dt = (blk_dtype)a->type.dtype;
    int64_t na = ir_numel(a->type), nb = bv ? ir_numel(bv->type) : 0;
    LLVMValueRef base = cg_smem(C, in->loc, (na + nb) * elem_bytes(dt));
    cg_val av = cg_get(C, a, a->type.rank ? cg_lay(C, a) : NULL), bvv = {0};
    if (bv) bvv = cg_get(C, bv, bv->type.rank ? cg_lay(C, bv) : NULL);
    cg_barrier(C);
    if (a->type.rank) write_all(C, base, av, a->type, 0);
    else smem_store(C, base, cg_const_i32(C, 0), dt, av.v[0]);
    if (bv) {
        if (bv->type.rank) write_all(C, base, bvv, bv->type, na);
        else smem_store(C, base, cg_const_i32(C, na), dt, bvv.v[0]);
    }
    cg_barrier(C);
    for (int k = 0; k < in->num_results; k++) {
        ir_value *r = in->results[k];
        const lay_layout *l = cg_lay(C, r);
        cg_lay_info li;
        cg_lay_info_get(C, l, r->type.rank, r->type.shape, &li);
        cg_val v = cg_new_val(C, li.nregs, l);
        for (int i = 0; i < li.nregs; i++) {
            LLVMValueRef c[IR_MAX_RANK];
            for (int d = 0; d < r->type.rank; d++) c[d] = cg_reg_coord(C, &li, i, d);
            LLVMValueRef src;
            switch (in->op) {
            case IR_RESHAPE:
                src = linear_of(C, c, r->type.shape, r->type.rank);
                break;
            case IR_PERMUTE: {
                LLVMValueRef sc[IR_MAX_RANK];
                for (int d = 0; d < r->type.rank; d++) sc[in->perm[d]] = c[d];
                src = linear_of(C, sc, a->type.shape, a->type.rank);
                break;
            }
            case IR_JOIN: { /* S + [2]: last coordinate picks a or b */
                /* one instruction per statement: argument order is unspecified (F7) */
                LLVMValueRef half = LLVMBuildMul(b, c[r->type.rank - 1], cg_const_i32(C, na), "");
                src = LLVMBuildAdd(b, linear_of(C, c, r->type.shape, r->type.rank - 1), half, "");
                break;
            }
            case IR_SPLIT: /* result k = element k of the last dim */
                src = LLVMBuildAdd(b, LLVMBuildMul(b, linear_of(C, c, r->type.shape, r->type.rank), cg_const_i32(C, 2), ""),
                                   cg_const_i32(C, k), "");
                break;
            default: { /* CAT along axis */
                int ax = in->axis;
                int32_t ea = a->type.shape[ax];
                LLVMValueRef inb = LLVMBuildICmp(b, LLVMIntSGE, c[ax], cg_const_i32(C, ea), "");
                LLVMValueRef cb[IR_MAX_RANK];
                for (int d = 0; d < r->type.rank; d++) cb[d] = c[d];
                cb[ax] = LLVMBuildSub(b, c[ax], cg_const_i32(C, ea), "");
                LLVMValueRef la = linear_of(C, c, a->type.shape, a->type.rank);
                LLVMValueRef lb = LLVMBuildAdd(b, linear_of(C, cb, bv->type.shape, bv->type.rank), cg_const_i32(C, na), "");
                src = LLVMBuildSelect(b, inb, lb, la, "");
                break;
            }
            }
            v.v[i] = smem_load(C, base, src, dt);
        }
        cg_set(C, r, v);
    }
}

bool cg_convert_op(cg_ctx *C, ir_inst *in) {
    switch (in->op) {
    case IR_PERMUTE: {
        ir_value *r = in->results[0], *x = in->operands[0];
        const lay_layout *l = cg_lay(C, r), *have = cg_lay(C, x);
        /* an index or mask operand (fuse.h) is recomputed in the layout
         * whose permutation is l: the permute is then a renaming */
        if (l->kind == LAY_BLOCKED && fuse_remat(C->fuse, x)) {
            int inv[IR_MAX_RANK];
            for (int i = 0; i < r->type.rank; i++) inv[in->perm[i]] = i;
            const lay_layout *src = lay_permute(C->a, l, inv);
            if (src && lay_fits(src, x->type.rank, x->type.shape)) have = src;
        }
        if (lay_eq(lay_permute(C->a, have, in->perm), l)) {
            cg_val v = cg_get(C, x, have);
            v.lay = l;
            cg_set(C, r, v);
            return true;
        }
        lower_gather(C, in);
        return true;
    }
    case IR_RESHAPE: case IR_JOIN: case IR_SPLIT: case IR_CAT:
        lower_gather(C, in);
        return true;
    default:
        return false;
    }
}

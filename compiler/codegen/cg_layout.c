/* cg_layout.c — where a layout puts a block's elements, as LLVM values.
 *
 * For a value of shape S in layout l, thread `tid` (lane = tid % 32,
 * warp = tid / 32) has per root dim p the coordinate
 *     tc[p] = warp_coord[p] * tpw[p] * rin[p] + lane_coord[p]
 * where lane and warp are split over the dims in the layout's order
 * (fastest first). Its register with per-dim index k holds, along value
 * dim d (root dim p, tile = spt*tpw*rin*wpc, kr = k / spt):
 *     S <= spt:    coord = k                      (every thread: all of it)
 *     otherwise:   coord = base + (kr / rin) * tile + (kr % rin) * spt*tpw
 *                          + k % spt,
 *                  base  = tc[p]*spt        (S >= tile)
 *                        = (tc[p]*spt) % S  (S < tile: wrapped, replicas;
 *                                            never with rin > 1: lay_fits)
 * so coordinates are an LLVM base per dim plus a compile-time offset.
 */
#include "cg_internal.h"

#include <string.h>

void cg_lay_shape(const lay_layout *l, int rank, const int32_t *shape, cg_lay_info *li) {
    memset(li, 0, sizeof *li);
    lay_flatten(l, &li->f);
    li->rank = rank;
    for (int d = 0; d < rank; d++) li->shape[d] = shape[d];
    li->nregs = lay_num_regs(l, shape, li->n);
}

void cg_lay_info_get(cg_ctx *C, const lay_layout *l, int rank, const int32_t *shape, cg_lay_info *li) {
    cg_lay_shape(l, rank, shape, li);
    const lay_flat *f = &li->f;
    LLVMBuilderRef b = C->b;
    int lane_stride = 1, warp_stride = 1;
    for (int i = 0; i < f->root_rank; i++) {
        int p = f->order[i];
        LLVMValueRef lc = LLVMBuildURem(b, LLVMBuildUDiv(b, C->lane, cg_const_i32(C, lane_stride), ""),
                                        cg_const_i32(C, f->tpw[p]), "");
        LLVMValueRef wc = LLVMBuildURem(b, LLVMBuildUDiv(b, C->warp, cg_const_i32(C, warp_stride), ""),
                                        cg_const_i32(C, f->wpc[p]), "");
        lane_stride *= f->tpw[p];
        warp_stride *= f->wpc[p];
        li->tc[p] = LLVMBuildAdd(b, LLVMBuildMul(b, wc, cg_const_i32(C, f->tpw[p] * f->rin[p]), ""), lc, "");
    }
    for (int d = 0; d < rank; d++) {
        int p = f->dims[d];
        int64_t S = shape[d], spt = f->spt[p], tile = lay_tile(f, p);
        if (S <= spt) li->base[d] = cg_const_i32(C, 0);
        else {
            LLVMValueRef x = LLVMBuildMul(b, li->tc[p], cg_const_i32(C, spt), "");
            li->base[d] = S >= tile ? x : LLVMBuildURem(b, x, cg_const_i32(C, S), "");
        }
    }
}

void cg_reg_index(const cg_lay_info *li, int r, int *k) {
    for (int i = 0; i < li->rank; i++) {
        int d = li->f.reg_order[i];
        k[d] = r % li->n[d];
        r /= li->n[d];
    }
}

int cg_reg_of(const cg_lay_info *li, const int *k) {
    int r = 0;
    for (int i = li->rank - 1; i >= 0; i--) {
        int d = li->f.reg_order[i];
        r = r * li->n[d] + k[d];
    }
    return r;
}

void cg_reg_offsets(const cg_lay_info *li, int r, int64_t *off) {
    int k[IR_MAX_RANK];
    cg_reg_index(li, r, k);
    for (int d = 0; d < li->rank; d++) {
        int p = li->f.dims[d];
        int64_t S = li->shape[d], spt = li->f.spt[p], tile = lay_tile(&li->f, p), rin = li->f.rin[p];
        int64_t kr = k[d] / spt;
        off[d] = S <= spt ? k[d] : (kr / rin) * tile + (kr % rin) * spt * li->f.tpw[p] + k[d] % spt;
    }
}

LLVMValueRef cg_reg_coord(cg_ctx *C, const cg_lay_info *li, int r, int d) {
    int64_t off[IR_MAX_RANK];
    cg_reg_offsets(li, r, off);
    return LLVMBuildAdd(C->b, li->base[d], cg_const_i32(C, off[d]), "");
}

LLVMValueRef cg_reg_canonical(cg_ctx *C, const cg_lay_info *li, int r) {
    (void)r;
    LLVMValueRef ok = LLVMConstInt(C->i1, 1, 0);
    bool present[IR_MAX_RANK + 1] = {0};
    for (int d = 0; d < li->rank; d++) {
        int p = li->f.dims[d];
        present[p] = true;
        int64_t S = li->shape[d], spt = li->f.spt[p], tile = lay_tile(&li->f, p);
        if (S >= tile) continue;
        LLVMValueRef c = LLVMBuildICmp(C->b, LLVMIntULT, LLVMBuildMul(C->b, li->tc[p], cg_const_i32(C, spt), ""),
                                       cg_const_i32(C, S), "");
        ok = LLVMBuildAnd(C->b, ok, c, "");
    }
    for (int p = 0; p < li->f.root_rank; p++)
        if (!present[p] && li->f.tpw[p] * li->f.wpc[p] > 1)
            ok = LLVMBuildAnd(C->b, ok, LLVMBuildICmp(C->b, LLVMIntEQ, li->tc[p], cg_const_i32(C, 0), ""), "");
    return ok;
}

LLVMValueRef cg_reg_linear(cg_ctx *C, const cg_lay_info *li, int r) {
    int64_t off[IR_MAX_RANK];
    cg_reg_offsets(li, r, off);
    LLVMValueRef lin = cg_const_i32(C, 0);
    int64_t cst = 0, stride = 1;
    for (int d = li->rank - 1; d >= 0; d--) {
        lin = LLVMBuildAdd(C->b, lin, LLVMBuildMul(C->b, li->base[d], cg_const_i32(C, stride), ""), "");
        cst += off[d] * stride;
        stride *= li->shape[d];
    }
    return LLVMBuildAdd(C->b, lin, cg_const_i32(C, cst), "");
}

/* The register holding the same value as register r when the value is
 * constant along each dim d in aligned runs of constancy[d] (axisinfo):
 * r itself, or the register with the same coordinates except that along
 * every d the coordinate is moved back to the start of its run inside the
 * thread. Along d a thread's coordinates are base + off with base a
 * multiple of spt and off = (k / spt) * tile + k % spt, so the thread's
 * registers k and k - (k % spt) % g (g = gcd(constancy, spt), both powers of
 * two in practice, the gcd keeps it exact otherwise) lie in one run; when
 * the thread holds the whole dim (S <= spt, coord = k) it is k - k % c. */
int cg_reg_rep(const cg_lay_info *li, const int64_t *constancy, int r) {
    int k[IR_MAX_RANK];
    cg_reg_index(li, r, k);
    bool moved = false;
    for (int d = 0; d < li->rank; d++) {
        int64_t c = constancy[d];
        if (c <= 1) continue;
        int p = li->f.dims[d];
        int64_t S = li->shape[d], spt = li->f.spt[p];
        int64_t back;
        if (S <= spt) back = k[d] % c;
        else {
            if (S % spt) continue; /* base not a multiple of spt: no claim */
            int64_t g = spt, x = c;
            while (x) { int64_t t = g % x; g = x; x = t; }
            back = (k[d] % spt) % g;
        }
        if (back) { k[d] -= (int)back; moved = true; }
    }
    return moved ? cg_reg_of(li, k) : r;
}

/* cg_dot.c — dot(a[M, K], b[K, N], acc[M, N]) on the tensor cores.
 *
 * The accumulator is in the layout lay_for_dot chose (layout.h):
 *     #blocked<spt=[1, 2], tpw=[8, 4], wpc=[Wm, Wn], order=[1, 0]>
 * warp (wm, wn), lane l (g = l / 4, t = l % 4), register (k0, k1) holds
 *     row 8*wm + g + 8*Wm*k0,   col 8*wn + 2t + (k1 % 2) + 8*Wn*(k1 / 2)
 * so registers k0 = 2i, 2i+1 and k1 = 2j, 2j+1 are the c0..c3 of the
 * mma.sync m16n8 tile (i, j) — whose rows are R(i) + g and R(i) + 8*Wm + g,
 * R(i) = 8*wm + 16*Wm*i, and whose columns are N0(j) + 0..7,
 * N0(j) = 8*wn + 8*Wn*j. ldmatrix takes one row address per lane, so the A
 * fragment gathers exactly those rows: the permutation costs nothing.
 *
 * Operands reach the tensor cores through shared memory, from registers in
 * whatever layout they were loaded in:
 *
 *   bar.sync; every thread stores its elements of a and b (16-byte vector
 *   stores where its registers run along the stored rows); bar.sync;
 *   ldmatrix.x4 (.trans for an operand stored with M or N contiguous)
 *   -> mma.sync per (m16 tile, n8 tile, k step).
 *
 * Each operand is one tile of `rows` stored rows of `cols` elements,
 * K-contiguous ([M][K] for a, [N][K] for b) or, for 16-bit types whose
 * registers run along M / N, MN-contiguous ([K][M], [K][N]) read with
 * ldmatrix .trans. Rows are split in 16-byte chunks and chunk c of row r is
 * stored at chunk c ^ ((r / per_phase) % max_phase) (Triton's swizzled
 * shared layout, vec = 16 bytes): the 8 row addresses of one ldmatrix
 * matrix then fall in 8 different bank groups (docs/codegen.md).
 *
 * Types (interp_dot.c is the reference):
 *   f16, bf16   m16n8k16, f32 accumulate
 *   f8e4m3/e5m2 converted exactly to f16 when stored, then as f16 (sm_80
 *               has no f8 mma); on sm_90a a dot that takes wgmma's
 *               e4m3 / e5m2 form (pipeliner.h's pl_f8_wgmma) stores raw
 *               bytes instead and adds each dot's sum to the accumulator
 *               in f32 (lower_wgmma)
 *   f32         tf32 (the default / "tf32"): rounded to nearest even to
 *               10 mantissa bits when stored (as the interpreter), m16n8k8
 *               (wgmma m64nNk8 on sm_90a: its operands are always stored
 *               from registers, so always rounded: never rings);
 *               "ieee": no tensor cores — each thread sums its outputs with
 *               one fma per k in k order, bit-exact with the interpreter
 *   i8          m16n8k32, s32 accumulate (wrapping); K padded with zeros
 *               to a multiple of 32
 */
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cg_dot.h"


void tile_init(sm_tile *t, LLVMValueRef base, int rows, int cols, int e, int colv) {
    t->base = base;
    t->rows = rows;
    t->cols = cols;
    t->e = e;
    t->rb = cols * e;
    t->colv = colv;
    int chunks = t->rb / 16;
    t->max_phase = chunks < 8 ? chunks : 8;
    t->per_phase = chunks < 8 ? 8 / chunks : 1;
    if (t->max_phase < 1) t->max_phase = 1;
    t->wg = false;
    t->perm_wm = 0;
}

/* wgmma reads shared memory through matrix descriptors, whose swizzle
 * mode fixes the form. With the 128-byte mode the stored columns are cut
 * into panels of 128 bytes, panel p holding every row's bytes
 * 128p..128p+127 (rows * 128 bytes, 1024-byte aligned), and chunk c of row
 * r sits at chunk c ^ (r % 8) of its 128-byte row — the pattern the
 * hardware applies to address bits 4..6 from bits 7..9. A stored row of 64
 * or 32 bytes (a 64x32 bf16 tile's b, BK = 32's a) takes the 64- or
 * 32-byte mode: panels of sw bytes, the hardware XORing address bits 4..5
 * with 7..8 (64) or bit 4 with bit 7 (32), i.e. chunk c of row r at
 * c ^ ((r / (128 / sw)) % (sw / 16)); the pattern repeats every 8 rows in
 * each mode. (The mma.sync form above is the same pattern when a row is
 * 128 bytes.) An A tile's rows are also permuted (wg_row): warp w of a
 * warpgroup reads rows 16w..16w+15 of each 64-row block, while the
 * accumulator layout gives warp w rows 8w + g and 8w + g + 8*Wm. */
int wg_span(int rb) { return rb > 0 && rb % 128 == 0 ? 128 : rb == 64 || rb == 32 ? rb : 0; }

void tile_init_wg(sm_tile *t, LLVMValueRef base, int rows, int cols, int e, int colv, int perm_wm) {
    tile_init(t, base, rows, cols, e, colv);
    t->wg = true;
    t->sw = wg_span(t->rb);
    t->perm_wm = perm_wm;
}

/* Stored row of logical row r in an A tile for Wm warps (all along M):
 * r = 8*Wm*k0 + 8*w + g with k0 = 2i + h (m64 instruction i, half h) and
 * w = 4*G + wl (warpgroup G) sits at 64*(i*Wm/4 + G) + 16*wl + 8*h + g. */
static LLVMValueRef wg_row(cg_ctx *C, int Wm, LLVMValueRef r) {
    LLVMBuilderRef b = C->b;
    LLVMValueRef g = LLVMBuildAnd(b, r, cg_const_i32(C, 7), "");
    LLVMValueRef w = LLVMBuildURem(b, LLVMBuildLShr(b, r, cg_const_i32(C, 3), ""), cg_const_i32(C, Wm), "");
    LLVMValueRef k0 = LLVMBuildUDiv(b, r, cg_const_i32(C, 8 * Wm), "");
    LLVMValueRef h = LLVMBuildAnd(b, k0, cg_const_i32(C, 1), ""), i = LLVMBuildLShr(b, k0, cg_const_i32(C, 1), "");
    /* one instruction per statement: C leaves the order of arguments open,
     * and the PTX must not depend on the compiler that built blkc (F8) */
    LLVMValueRef im = LLVMBuildMul(b, i, cg_const_i32(C, Wm / 4), "");
    LLVMValueRef blk = LLVMBuildAdd(b, im, LLVMBuildLShr(b, w, cg_const_i32(C, 2), ""), "");
    LLVMValueRef wl = LLVMBuildShl(b, LLVMBuildAnd(b, w, cg_const_i32(C, 3), ""), cg_const_i32(C, 4), "");
    LLVMValueRef in = LLVMBuildAdd(b, wl, LLVMBuildAdd(b, LLVMBuildShl(b, h, cg_const_i32(C, 3), ""), g, ""), "");
    return LLVMBuildAdd(b, LLVMBuildShl(b, blk, cg_const_i32(C, 6), ""), in, "");
}

/* Byte offset (i32) of chunk `chunk` of stored row `row`, swizzled. */
static LLVMValueRef tile_chunk(cg_ctx *C, const sm_tile *t, LLVMValueRef row, LLVMValueRef chunk) {
    LLVMBuilderRef b = C->b;
    if (t->wg) { /* cpp chunks per panel, the phase changing every 8 / cpp rows */
        int cpp = t->sw / 16, lg = cpp == 8 ? 3 : cpp == 4 ? 2 : 1;
        LLVMValueRef panel = LLVMBuildLShr(b, chunk, cg_const_i32(C, lg), "");
        LLVMValueRef cl = LLVMBuildAnd(b, chunk, cg_const_i32(C, cpp - 1), "");
        LLVMValueRef r = lg == 3 ? row : LLVMBuildLShr(b, row, cg_const_i32(C, 3 - lg), "");
        LLVMValueRef phase = LLVMBuildAnd(b, r, cg_const_i32(C, cpp - 1), "");
        LLVMValueRef c = LLVMBuildXor(b, cl, phase, "");
        LLVMValueRef off = LLVMBuildMul(b, panel, cg_const_i32(C, t->rows * t->sw), "");
        off = LLVMBuildAdd(b, off, LLVMBuildMul(b, row, cg_const_i32(C, t->sw), ""), "");
        return LLVMBuildAdd(b, off, LLVMBuildShl(b, c, cg_const_i32(C, 4), ""), "");
    }
    LLVMValueRef phase = LLVMBuildURem(b, LLVMBuildUDiv(b, row, cg_const_i32(C, t->per_phase), ""),
                                       cg_const_i32(C, t->max_phase), "");
    LLVMValueRef c = LLVMBuildXor(b, chunk, phase, "");
    LLVMValueRef off = LLVMBuildMul(b, row, cg_const_i32(C, t->rb), "");
    return LLVMBuildAdd(b, off, LLVMBuildMul(b, c, cg_const_i32(C, 16), ""), "");
}

LLVMValueRef tile_ptr(cg_ctx *C, const sm_tile *t, LLVMValueRef byte_off) {
    return LLVMBuildGEP2(C->b, C->i8, t->base, &byte_off, 1, "");
}

/* Byte offset (i32) of element (row, col) of the stored tile. */
LLVMValueRef tile_elem(cg_ctx *C, const sm_tile *t, LLVMValueRef row, LLVMValueRef col) {
    LLVMBuilderRef b = C->b;
    LLVMValueRef cb = LLVMBuildMul(b, col, cg_const_i32(C, t->e), "");
    if (t->perm_wm) row = wg_row(C, t->perm_wm, row);
    LLVMValueRef off = tile_chunk(C, t, row, LLVMBuildLShr(b, cb, cg_const_i32(C, 4), ""));
    return LLVMBuildAdd(b, off, LLVMBuildAnd(b, cb, cg_const_i32(C, 15), ""), "");
}

/* The 32-bit shared-window address ldmatrix takes. */
LLVMValueRef tile_addr32(cg_ctx *C, const sm_tile *t, LLVMValueRef byte_off) {
    return LLVMBuildTrunc(C->b, LLVMBuildPtrToInt(C->b, tile_ptr(C, t, byte_off), C->i64, ""), C->i32, "");
}

/* Operands staged through registers are stored element by element in one
 * straight-line block, and LLVM's NVPTX straight-line strength reduction
 * is quadratic in it (reliability finding F11: 1152 elements per thread
 * took 22 s, 384 took 2.4 s). Real kernels stage at most ~128 per thread
 * (a misaligned 128x256x64 matmul on 8 warps: 96); past the limit the dot
 * is a located error rather than a compile of minutes. */
enum { CG_MAX_STAGED_PER_THREAD = 512 };

bool staged_too_big(cg_ctx *C, ir_inst *in, int64_t elems) {
    int64_t per = elems / (32 * (int64_t)C->num_warps);
    if (per <= CG_MAX_STAGED_PER_THREAD) return false;
    cg_error(C, in->loc, "dot stages %lld operand elements per thread through registers (limit %d): use more warps, "
             "smaller blocks, or operands the loop can stream (16-byte aligned, in a pipelined loop)",
             (long long)per, CG_MAX_STAGED_PER_THREAD);
    C->failed = true;
    return true;
}

/* ---- operand elements as stored bits ---- */

int stored_bytes(blk_dtype t) { return pl_elem_bytes(t); }

/* Round an f32 (as i32 bits) to tf32, nearest even, as interp_dot.c's
 * round_tf32: inf and NaN unchanged. */
static LLVMValueRef round_tf32(cg_ctx *C, LLVMValueRef u) {
    LLVMBuilderRef b = C->b;
    LLVMValueRef lsb = LLVMBuildAnd(b, LLVMBuildLShr(b, u, cg_const_i32(C, 13), ""), cg_const_i32(C, 1), "");
    LLVMValueRef r = LLVMBuildAdd(b, u, LLVMBuildAdd(b, lsb, cg_const_i32(C, 0xFFF), ""), "");
    r = LLVMBuildAnd(b, r, cg_const_i32(C, (int64_t)(int32_t)0xFFFFE000u), "");
    LLVMValueRef exp = LLVMBuildAnd(b, u, cg_const_i32(C, 0x7F800000), "");
    LLVMValueRef special = LLVMBuildICmp(b, LLVMIntEQ, exp, cg_const_i32(C, 0x7F800000), "");
    return LLVMBuildSelect(b, special, u, r, "");
}

static LLVMValueRef stored_bits(cg_ctx *C, blk_loc loc, blk_dtype t, bool tf32, LLVMValueRef x) {
    switch (t) {
    case DT_F16: return LLVMBuildBitCast(C->b, x, C->i16, "");
    case DT_BF16: return LLVMBuildBitCast(C->b, x, C->i16, "");
    case DT_F8E4M3: case DT_F8E5M2:
        return LLVMBuildBitCast(C->b, cg_cast_scalar(C, loc, t, DT_F16, x), C->i16, "");
    case DT_F32: {
        LLVMValueRef u = LLVMBuildBitCast(C->b, x, C->i32, "");
        return tf32 ? round_tf32(C, u) : u;
    }
    default: return x; /* i8 */
    }
}

/* Store operand x (value dims v0, v1 = shape) into tile t: stored row = the
 * value dim that is not t->colv. Registers that run along colv go out as
 * one vector store per aligned group of up to 16 bytes. */
void store_regs(cg_ctx *C, blk_loc loc, sm_tile *t, cg_val x, ir_type ty, bool tf32, int r0, int r1) {
    LLVMBuilderRef b = C->b;
    cg_lay_info li;
    cg_lay_info_get(C, x.lay, 2, ty.shape, &li);
    int cv = t->colv, rv = 1 - cv, p = li.f.dims[cv];
    int run = ty.shape[cv] <= li.f.spt[p] ? ty.shape[cv] : li.f.spt[p];
    int w = li.f.reg_order[0] == cv ? run : 1;
    if (w > 16 / t->e) w = 16 / t->e;
    if (w < 1) w = 1;
    LLVMTypeRef et = LLVMIntTypeInContext(C->llc, (unsigned)(8 * t->e));
    /* a tile of 1-byte elements holds f8 as its raw bits (wgmma's e4m3 /
     * e5m2 forms: pl_f8_wgmma), stored as i8 is */
    blk_dtype dt = t->e == 1 ? DT_I8 : (blk_dtype)ty.dtype;
    for (int r = r0; r < r1 && r < li.nregs && r < x.n; r += w) {
        LLVMValueRef row = cg_reg_coord(C, &li, r, rv);
        LLVMValueRef off = tile_elem(C, t, row, cg_reg_coord(C, &li, r, cv));
        LLVMValueRef v;
        if (w == 1) v = stored_bits(C, loc, dt, tf32, x.v[r]);
        else {
            v = LLVMGetUndef(LLVMVectorType(et, (unsigned)w));
            for (int i = 0; i < w; i++)
                v = LLVMBuildInsertElement(b, v, stored_bits(C, loc, dt, tf32, x.v[r + i]),
                                           cg_const_i32(C, i), "");
        }
        LLVMValueRef s = LLVMBuildStore(b, v, tile_ptr(C, t, off));
        LLVMSetAlignment(s, (unsigned)(w * t->e));
    }
}

void store_operand(cg_ctx *C, blk_loc loc, sm_tile *t, cg_val x, ir_type ty, bool tf32) {
    store_regs(C, loc, t, x, ty, tf32, 0, x.n);
}

/* Zero columns [from, cols) of every stored row (K padding for i8). The
 * threads share the rows; each writes whole 16-byte chunks. */
static void zero_pad(cg_ctx *C, sm_tile *t, int from) {
    int threads = 32 * C->num_warps, first = from * t->e / 16, chunks = t->rb / 16 - first;
    LLVMTypeRef v4 = LLVMVectorType(C->i32, 4);
    for (int q0 = 0; q0 < t->rows * chunks; q0 += threads) {
        LLVMValueRef q = LLVMBuildAdd(C->b, C->tid, cg_const_i32(C, q0), "");
        LLVMValueRef in = LLVMBuildICmp(C->b, LLVMIntULT, q, cg_const_i32(C, t->rows * chunks), "");
        LLVMValueRef row = LLVMBuildUDiv(C->b, q, cg_const_i32(C, chunks), "");
        LLVMValueRef ch = LLVMBuildAdd(C->b, LLVMBuildURem(C->b, q, cg_const_i32(C, chunks), ""), cg_const_i32(C, first), "");
        /* out-of-range threads rewrite chunk 0's padding of row 0 instead: a
         * store of zeros there is harmless and keeps the code branch-free */
        row = LLVMBuildSelect(C->b, in, row, cg_const_i32(C, 0), "");
        ch = LLVMBuildSelect(C->b, in, ch, cg_const_i32(C, first), "");
        LLVMValueRef s = LLVMBuildStore(C->b, LLVMConstNull(v4), tile_ptr(C, t, tile_chunk(C, t, row, ch)));
        LLVMSetAlignment(s, 16);
    }
}

/* ---- which dots take wgmma ----
 *
 * On sm_90a a 16-bit, f8 or f32 (tf32) dot with an f32 accumulator, or an
 * i8 one with i32, goes to wgmma when the
 * accumulator has its warps along M in whole warpgroups (layout.c puts them
 * so where lay_wgmma_shape allows), a is in shared memory K-major (16-bit:
 * or M-major, through transpose-a) or (16-bit) in registers in the
 * accumulator layout (attention's P), b is K-major for
 * i8, f8 and tf32 (their forms have no transpose; f8 also needs both
 * operands' registers along K: pl_f8_wgmma), and each operand's
 * stored row is a whole number of 128-byte panels or exactly 64 or 32
 * bytes (wg_span; an M-major a: 128-byte panels). Anything else takes
 * mma.sync. The choice is made before the loop (its ring tiles take the
 * wgmma form) and again at the dot, from the same facts. */


/* The pipeliner entry holding operand v (or the value v transposes) and
 * v's stored colv through it. */
const pl_entry *operand_entry(cg_ctx *C, ir_value *v, int *colv) {
    const pl_entry *e = C->pl ? pl_get(C->pl, v) : NULL;
    if (e && e->kind != PL_NONE) { *colv = e->colv; return e; }
    if (v->def && v->def->op == IR_PERMUTE) {
        e = C->pl ? pl_get(C->pl, v->def->operands[0]) : NULL;
        if (e && e->kind != PL_NONE) { *colv = 1 - e->colv; return e; }
    }
    return NULL;
}

static int stored_colv(cg_val x, blk_dtype t, int kdim);

static bool wg_no(wg_plan *p, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->why, sizeof p->why, fmt, ap);
    va_end(ap);
    return false;
}

bool wg_choose(cg_ctx *C, ir_inst *in, wg_plan *p) {
    *p = (wg_plan){0};
    ir_value *a = in->operands[0], *bo = in->operands[1], *res = in->results[0];
    if (!tgt_has(C->tgt, TGT_CAP_WGMMA)) return wg_no(p, "%s has no wgmma", C->tgt->arch);
    if (in->precision == IR_PREC_IEEE) return wg_no(p, "input_precision = \"ieee\" runs without tensor cores");
    blk_dtype ta = (blk_dtype)a->type.dtype, tr = (blk_dtype)res->type.dtype;
    int M = a->type.shape[0], K = a->type.shape[1], N = bo->type.shape[1];
    bool i8 = ta == DT_I8 && tr == DT_I32, f16 = (ta == DT_BF16 || ta == DT_F16) && tr == DT_F32;
    bool f8 = (ta == DT_F8E4M3 || ta == DT_F8E5M2) && tr == DT_F32, tf32 = ta == DT_F32 && tr == DT_F32;
    const char *f8why;
    /* f8: the pipeliner's rule, which also sized the tiles (raw bytes) */
    if (f8 && !pl_f8_wgmma(C->lt, in, &f8why)) return wg_no(p, "%s", f8why);
    if ((!i8 && !f16 && !f8 && !tf32) || (blk_dtype)bo->type.dtype != ta)
        return wg_no(p, "wgmma is used for bf16, f16, f8 and f32 (tf32) inputs with an f32 accumulator and i8 with "
                     "i32 (here %s x %s -> %s)",
                     dtype_name((blk_dtype)a->type.dtype), dtype_name((blk_dtype)bo->type.dtype), dtype_name(tr));
    if (tf32 && !wg_span(K * 4))
        return wg_no(p, "a's rows are %d bytes of K; wgmma's swizzle needs 32, 64 or a multiple of 128", K * 4);
    if (!lay_wgmma_shape(ta, tr, M, N, K, C->num_warps))
        return wg_no(p, "wgmma needs num_warps a multiple of 4 and M a multiple of 16 x num_warps (M = %d, %d warps)",
                     M, C->num_warps);
    bool kmajor = !f16; /* i8, f8 and tf32 forms have no transpose: b is K-major too */
    const lay_layout *L = cg_lay(C, res);
    if (!lay_is_mma_acc(L, 2, res->type.shape) || L->wpc[1] != 1 || L->wpc[0] != C->num_warps)
        return wg_no(p, "the accumulator's warps are not all along M (its layout comes from another dot)");
    int e = pl_dot_elem_bytes(C->lt, in);
    int cv;
    if (operand_entry(C, a, &cv)) {
        /* M-contiguous (x^T of a linear layer's dW): wgmma's transpose-a,
         * 16-bit types only, each warpgroup's 64 rows one 128-byte panel;
         * not with a's rows permuted for mma.sync's accumulator order */
        if (cv == 0 && !f16)
            return wg_no(p, "a is stored M-contiguous; wgmma reads i8, f8 and tf32 operands K-contiguous only");
        if (cv == 0 && cg_dot_a_perm(C, in))
            return wg_no(p, "a is stored M-contiguous and its accumulator is in mma.sync's row order");
        if (cv == 0 && M * e % 128) return wg_no(p, "a's stored rows are %d bytes of M; the 128-byte swizzle needs a multiple of 128", M * e);
        if (cv == 1 && !wg_span(K * e))
            return wg_no(p, "a's rows are %d bytes of K; wgmma's swizzle needs 32, 64 or a multiple of 128", K * e);
        p->acv = cv;
    } else if (f16 && a_in_registers((cg_val){NULL, 0, cg_lay(C, a), true}, a->type, L)) p->areg = true;
    else if (wg_span(K * e)) p->acv = 1;
    else return wg_no(p, "a's rows are %d bytes of K; wgmma's swizzle needs 32, 64 or a multiple of 128", K * e);
    int rb[2] = {K * e, N * e}; /* stored row bytes: K-major (colv 0) rows hold K, N-major rows N */
    if (operand_entry(C, bo, &cv)) {
        if (!wg_span(rb[cv]))
            return wg_no(p, "b's stored rows are %d bytes; wgmma's swizzle needs 32, 64 or a multiple of 128", rb[cv]);
        if (kmajor && cv != 0) return wg_no(p, "b is stored N-contiguous; wgmma reads i8, f8 and tf32 operands K-contiguous only");
        p->bcv = cv;
    } else if (kmajor) {
        if (!wg_span(rb[0]))
            return wg_no(p, "b's rows are %d bytes of K; wgmma's swizzle needs 32, 64 or a multiple of 128", rb[0]);
        p->bcv = 0;
    } else {
        int want = stored_colv((cg_val){NULL, 0, cg_lay(C, bo), true}, ta, 0);
        if (wg_span(rb[want])) p->bcv = want;
        else if (wg_span(rb[1 - want])) p->bcv = 1 - want;
        else return wg_no(p, "b's rows are %d (K) or %d (N) bytes; wgmma's swizzle needs 32, 64 or a multiple of 128",
                          rb[0], rb[1]);
    }
    p->ok = true;
    return true;
}

bool cg_operand_reads(const ir_value *o, const ir_value *v) {
    return o == v || (o->def && o->def->op == IR_PERMUTE && o->def->operands[0] == v);
}

/* The dot of `loop`'s body that reads v (directly or through trans) and
 * which operand v is. */
ir_inst *cg_dot_reading(ir_inst *loop, ir_value *v, int *role) {
    for (ir_inst *i = loop->regions[0]->first; i; i = i->next) {
        if (i->op != IR_DOT) continue;
        for (int k = 0; k < 2; k++) {
            if (cg_operand_reads(i->operands[k], v)) {
                *role = k;
                return i;
            }
        }
    }
    return NULL;
}

bool cg_dot_takes_wgmma(cg_ctx *C, ir_inst *dot) {
    wg_plan p;
    return wg_choose(C, dot, &p);
}

/* Whether a wgmma dot's a tile has its rows permuted (wg_row): only when
 * its accumulator is in mma.sync's row order (a layout chosen for another
 * dot), not wgmma's own (rin = 2: layout.h). */
int cg_dot_a_perm(cg_ctx *C, ir_inst *dot) {
    const lay_layout *L = cg_lay(C, dot->results[0]);
    return L && L->kind == LAY_BLOCKED && L->rin[0] == 2 ? 0 : C->num_warps;
}

void fence_async_smem(cg_ctx *C) {
    cg_inline_asm(C, C->vd, "fence.proxy.async.shared::cta;", "~{memory}", NULL, 0, true);
}

/* ---- tensor-core path ---- */

typedef struct {
    const char *mma;  /* the instruction, {d}, {a}, {b}, {c} */
    int kstep;        /* K per instruction */
    bool int_acc;
} mma_kind;

static mma_kind mma_for(blk_dtype t) {
    switch (t) {
    case DT_BF16: return (mma_kind){"mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32", 16, false};
    case DT_F32: return (mma_kind){"mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32", 8, false};
    case DT_I8: return (mma_kind){"mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32", 32, true};
    default: return (mma_kind){"mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32", 16, false}; /* f16, f8 */
    }
}

/* ldmatrix.x4 (or .x2) at this lane's address + imm bytes: n 32-bit
 * fragment registers. */
static void ldmatrix(cg_ctx *C, LLVMValueRef addr, int imm, int n, bool trans, LLVMValueRef *out) {
    char text[112], at[24] = "";
    if (imm) snprintf(at, sizeof at, "+%d", imm);
    snprintf(text, sizeof text, "ldmatrix.sync.aligned.m8n8.x%d%s.shared.b16 {%s}, [$%d%s];", n, trans ? ".trans" : "",
             n == 4 ? "$0, $1, $2, $3" : "$0, $1", n, at);
    LLVMTypeRef ret = LLVMStructTypeInContext(C->llc, (LLVMTypeRef[]){C->i32, C->i32, C->i32, C->i32}, (unsigned)n, 0);
    /* side effects: it reads shared memory, so it must stay after the barrier */
    LLVMValueRef r = cg_inline_asm(C, ret, text, n == 4 ? "=r,=r,=r,=r,r" : "=r,=r,r", &addr, 1, true);
    for (int i = 0; i < n; i++) out[i] = LLVMBuildExtractValue(C->b, r, (unsigned)i, "");
}

static void mma(cg_ctx *C, const mma_kind *k, LLVMValueRef *a, LLVMValueRef *bf, LLVMValueRef *acc) {
    char text[256];
    snprintf(text, sizeof text, "%s {$0, $1, $2, $3}, {$4, $5, $6, $7}, {$8, $9}, {$10, $11, $12, $13};", k->mma);
    LLVMTypeRef at = k->int_acc ? C->i32 : C->f32;
    LLVMTypeRef ret = LLVMStructTypeInContext(C->llc, (LLVMTypeRef[]){at, at, at, at}, 4, 0);
    LLVMValueRef args[10] = {a[0], a[1], a[2], a[3], bf[0], bf[1], acc[0], acc[1], acc[2], acc[3]};
    const char *cons = k->int_acc ? "=r,=r,=r,=r,r,r,r,r,r,r,0,1,2,3" : "=f,=f,=f,=f,r,r,r,r,r,r,0,1,2,3";
    LLVMValueRef r = cg_inline_asm(C, ret, text, cons, args, 10, false);
    for (int i = 0; i < 4; i++) acc[i] = LLVMBuildExtractValue(C->b, r, (unsigned)i, "");
}

static bool is_pow2(int x) { return x > 0 && (x & (x - 1)) == 0; }

static int stored_colv(cg_val x, blk_dtype t, int kdim) { return pl_stored_colv(x.lay, t, kdim); }

/* The A operand straight from registers (attention's P): a 16-bit value in
 * an accumulator layout with all warps along M (Wn = 1) and the dot's own
 * warp rows. Its registers (2i, 2i+1) x (4s .. 4s+3) are exactly the A
 * fragment of m tile i, k step s: the accumulator's c0 c1 / c2 c3 of the n8
 * tiles 2s and 2s+1 are a0a1 / a2a3 and a4a5 / a6a7 (TENSORCORES.md). */
bool a_in_registers(cg_val av, ir_type t, const lay_layout *L) {
    blk_dtype dt = (blk_dtype)t.dtype;
    if (!av.set || !av.lay || (dt != DT_BF16 && dt != DT_F16 && dt != DT_F8E4M3 && dt != DT_F8E5M2)) return false;
    return lay_is_mma_acc(av.lay, 2, t.shape) && av.lay->wpc[1] == 1 && L->wpc[1] == 1 &&
           av.lay->wpc[0] == L->wpc[0] && av.lay->rin[0] == L->rin[0] && t.shape[1] % 16 == 0;
}

/* The f32 a 16-bit value was rounded from, when it is an fptrunc of one. */
static LLVMValueRef truncated_from(cg_ctx *C, LLVMValueRef v) {
    if (!LLVMIsAInstruction(v) || LLVMGetInstructionOpcode(v) != LLVMFPTrunc) return NULL;
    LLVMValueRef x = LLVMGetOperand(v, 0);
    return LLVMTypeOf(x) == C->f32 ? x : NULL;
}

static LLVMValueRef pack2(cg_ctx *C, blk_dtype t, LLVMValueRef lo, LLVMValueRef hi) {
    LLVMBuilderRef b = C->b;
    /* P = s as bf16 in registers: round the two f32 as one pair
     * (cvt.rn.bf16x2.f32), the same rounding as two scalar conversions, in
     * one instruction instead of two conversions and three to pack */
    LLVMValueRef fl = (t == DT_BF16 || t == DT_F16) ? truncated_from(C, lo) : NULL;
    LLVMValueRef fh = fl ? truncated_from(C, hi) : NULL;
    if (fl && fh) {
        LLVMValueRef v = LLVMGetUndef(LLVMVectorType(C->f32, 2));
        v = LLVMBuildInsertElement(b, v, fl, cg_const_i32(C, 0), "");
        v = LLVMBuildInsertElement(b, v, fh, cg_const_i32(C, 1), "");
        LLVMTypeRef ht = LLVMTypeOf(lo); /* bfloat or half */
        return LLVMBuildBitCast(b, LLVMBuildFPTrunc(b, v, LLVMVectorType(ht, 2), ""), C->i32, "");
    }
    LLVMValueRef l = LLVMBuildZExt(b, stored_bits(C, LOC_NONE, t, false, lo), C->i32, "");
    LLVMValueRef h = LLVMBuildZExt(b, stored_bits(C, LOC_NONE, t, false, hi), C->i32, "");
    return LLVMBuildOr(b, l, LLVMBuildShl(b, h, cg_const_i32(C, 16), ""), "");
}

void a_fragment(cg_ctx *C, cg_val av, ir_type t, int i, int s, LLVMValueRef *out) {
    cg_lay_info li;
    cg_lay_shape(av.lay, 2, t.shape, &li);
    blk_dtype dt = (blk_dtype)t.dtype;
    for (int q = 0; q < 4; q++) {
        int k0 = 2 * i + (q & 1), k1 = 4 * s + 2 * (q >> 1);
        LLVMValueRef lo = av.v[cg_reg_of(&li, (int[]){k0, k1})], hi = av.v[cg_reg_of(&li, (int[]){k0, k1 + 1})];
        out[q] = pack2(C, dt, lo, hi);
    }
}

/* Where one warp's fragments come from (lower_mma). */
typedef struct {
    const sm_tile *ta, *tb;
    cg_val av;         /* a's registers when areg */
    ir_type at;
    bool areg;
    int mt, nt, Wm, Wn, N;
    int hrow;          /* rows between an m16 tile's halves (g, g + 8) */
    LLVMValueRef rowbase, colbase, j8, qlo, qhi; /* warp and lane parts of the addresses */
} frag_ctx;

typedef struct {
    LLVMValueRef a[16][4], b[64][2];
} frags;

/* ldmatrix addresses, one register per lane offset that differs.
 *
 * Every ldmatrix of a dot reads stored row row_lane + R, chunk chunk_lane +
 * Cc of its tile: row_lane and chunk_lane depend on the lane and warp only
 * (one formula per operand and form, `form`), R and Cc are constants (the
 * m/n tile and the k step). The swizzle repeats every 8 rows and every 8
 * chunks (tile_init: per_phase * max_phase = 8 when a row holds a power of
 * two chunks; wgmma's form XORs chunk bits 0..2 with row bits 0..2), so
 * moving R or Cc by a multiple of 8 moves the byte offset by a constant:
 * the address is reg(form, R % 8, Cc % 8) + an immediate. Attention's
 * q kᵀ and p v then keep 12 address registers instead of one per ldmatrix
 * (72), each updated once per ring slot. */
typedef struct {
    const sm_tile *t;
    int form, rr, cr;
    LLVMValueRef addr;
} frag_addr_reg;

typedef struct {
    frag_addr_reg r[32];
    int n;
} frag_addrs;

static bool swizzle_period8(const sm_tile *t) {
    if (t->perm_wm) return false; /* wg_row: not a function of the row's low bits */
    if (t->wg) return true;
    return is_pow2(t->max_phase) && t->max_phase * t->per_phase == 8;
}

/* The address register and immediate of (row_lane + R, chunk_lane + Cc). */
static LLVMValueRef frag_addr(cg_ctx *C, frag_addrs *A, const sm_tile *t, int form, LLVMValueRef row_lane, int R,
                              LLVMValueRef chunk_lane, int Cc, int *imm) {
    LLVMBuilderRef b = C->b;
    int rr = R % 8, cr = Cc % 8;
    if (!swizzle_period8(t)) rr = R, cr = Cc;
    *imm = t->wg ? (R - rr) * t->sw + (Cc - cr) / (t->sw / 16) * t->rows * t->sw : (R - rr) * t->rb + (Cc - cr) * 16;
    for (int i = 0; i < A->n; i++)
        if (A->r[i].t == t && A->r[i].form == form && A->r[i].rr == rr && A->r[i].cr == cr) return A->r[i].addr;
    LLVMValueRef row = LLVMBuildAdd(b, row_lane, cg_const_i32(C, rr), "");
    LLVMValueRef chunk = LLVMBuildAdd(b, chunk_lane, cg_const_i32(C, cr), "");
    LLVMValueRef addr = tile_addr32(C, t, tile_chunk(C, t, row, chunk));
    if (A->n < (int)(sizeof A->r / sizeof A->r[0])) A->r[A->n++] = (frag_addr_reg){t, form, rr, cr, addr};
    return addr;
}

/* The A and B fragments of k step s (32 bytes of K). */
static void load_frags(cg_ctx *C, const frag_ctx *F, frag_addrs *A, int s, frags *out) {
    LLVMBuilderRef b = C->b;
    const sm_tile *ta = F->ta, *tb = F->tb;
    int csteps = 2; /* a k step is 32 bytes = 2 chunks of every type */
    for (int i = 0; i < F->mt && i < 16 && F->areg; i++) a_fragment(C, F->av, F->at, i, s, out->a[i]);
    /* matrix q of an A ldmatrix: rows R(i) (+hrow for odd q), k chunk 2s (+1 for q >= 2) */
    LLVMValueRef mrow = LLVMBuildAdd(b, F->rowbase, LLVMBuildMul(b, F->qlo, cg_const_i32(C, F->hrow), ""), "");
    for (int i = 0; i < F->mt && i < 16 && !F->areg; i++) {
        LLVMValueRef addr;
        int imm = 0;
        if (ta->colv == 1 && ta->perm_wm) { /* a tile in wgmma's form, read by mma.sync */
            LLVMValueRef row = LLVMBuildAdd(b, LLVMBuildAdd(b, mrow, cg_const_i32(C, 16 * F->Wm * i), ""), F->j8, "");
            row = wg_row(C, ta->perm_wm, row);
            addr = tile_addr32(C, ta, tile_chunk(C, ta, row, LLVMBuildAdd(b, F->qhi, cg_const_i32(C, csteps * s), "")));
        } else if (ta->colv == 1) {
            addr = frag_addr(C, A, ta, 0, LLVMBuildAdd(b, mrow, F->j8, ""), 16 * F->Wm * i, F->qhi, csteps * s, &imm);
        } else { /* [K][M]: stored rows are k, chunks hold 8 rows of M (mrow is a multiple of 8) */
            LLVMValueRef row = LLVMBuildAdd(b, LLVMBuildMul(b, F->qhi, cg_const_i32(C, 8), ""), F->j8, "");
            addr = frag_addr(C, A, ta, 1, row, 16 * s, LLVMBuildLShr(b, mrow, cg_const_i32(C, 3), ""), 2 * F->Wm * i,
                             &imm);
        }
        ldmatrix(C, addr, imm, 4, ta->colv == 0, out->a[i]);
    }
    /* b's n8 tiles of this warp: columns 8*wn + 8*Wn*j (+ 8*Wn*qhi for the
     * second pair of an x4) — modulo N when the layout repeats columns */
    bool wraps = 8 * F->Wn * F->nt > F->N;
    for (int j = 0; j < F->nt && j < 64; j += 2) {
        int n = j + 1 < F->nt ? 4 : 2;
        /* matrix q: n tile j (+1 for q >= 2 when x4), k half q & 1 */
        LLVMValueRef addr;
        int imm = 0;
        if (wraps) {
            LLVMValueRef jj = n == 4 ? LLVMBuildAdd(b, F->qhi, cg_const_i32(C, j), "") : cg_const_i32(C, j);
            LLVMValueRef ncol = LLVMBuildAdd(b, F->colbase, LLVMBuildMul(b, jj, cg_const_i32(C, 8 * F->Wn), ""), "");
            ncol = LLVMBuildURem(b, ncol, cg_const_i32(C, F->N), "");
            LLVMValueRef off;
            if (tb->colv == 0) {
                LLVMValueRef row = LLVMBuildAdd(b, ncol, F->j8, "");
                off = tile_chunk(C, tb, row, LLVMBuildAdd(b, F->qlo, cg_const_i32(C, csteps * s), ""));
            } else { /* [K][N] */
                LLVMValueRef row = LLVMBuildAdd(b, LLVMBuildMul(b, F->qlo, cg_const_i32(C, 8), ""), F->j8, "");
                row = LLVMBuildAdd(b, row, cg_const_i32(C, 16 * s), "");
                off = tile_chunk(C, tb, row, LLVMBuildLShr(b, ncol, cg_const_i32(C, 3), ""));
            }
            addr = tile_addr32(C, tb, off);
        } else {
            /* the lane's first column: colbase (= 8*wn), + 8*Wn*qhi for an x4 */
            LLVMValueRef ncol = F->colbase;
            if (n == 4) ncol = LLVMBuildAdd(b, ncol, LLVMBuildMul(b, F->qhi, cg_const_i32(C, 8 * F->Wn), ""), "");
            int form = 2 + 2 * tb->colv + (n == 4); /* 0, 1: a's */
            if (tb->colv == 0)
                addr = frag_addr(C, A, tb, form, LLVMBuildAdd(b, ncol, F->j8, ""), 8 * F->Wn * j, F->qlo,
                                 csteps * s, &imm);
            else { /* [K][N] */
                LLVMValueRef row = LLVMBuildAdd(b, LLVMBuildMul(b, F->qlo, cg_const_i32(C, 8), ""), F->j8, "");
                addr = frag_addr(C, A, tb, form, row, 16 * s, LLVMBuildLShr(b, ncol, cg_const_i32(C, 3), ""),
                                 F->Wn * j, &imm);
            }
        }
        LLVMValueRef d[4];
        ldmatrix(C, addr, imm, n, tb->colv == 1, d);
        out->b[j][0] = d[0], out->b[j][1] = d[1];
        if (n == 4) out->b[j + 1][0] = d[2], out->b[j + 1][1] = d[3];
    }
}

/* This warp's and lane's parts of the fragment addresses (load_frags). */
static frag_ctx frag_setup(cg_ctx *C, const sm_tile *ta, const sm_tile *tb, cg_val av, ir_type at, bool areg,
                           const lay_layout *L, const int *res_shape, int N) {
    LLVMBuilderRef b = C->b;
    int Wm = L->wpc[0], Wn = L->wpc[1];
    cg_lay_info li;
    cg_lay_shape(L, 2, res_shape, &li);
    int mt = li.n[0] / 2, nt = li.n[1] / 2;
    /* this warp's (wm, wn) as cg_layout.c splits warps: dim 1 fastest */
    LLVMValueRef wn = LLVMBuildURem(b, C->warp, cg_const_i32(C, Wn), "");
    LLVMValueRef wm = LLVMBuildURem(b, LLVMBuildUDiv(b, C->warp, cg_const_i32(C, Wn), ""), cg_const_i32(C, Wm), "");
    LLVMValueRef q = LLVMBuildLShr(b, C->lane, cg_const_i32(C, 3), "");
    LLVMValueRef j8 = LLVMBuildAnd(b, C->lane, cg_const_i32(C, 7), "");
    LLVMValueRef qlo = LLVMBuildAnd(b, q, cg_const_i32(C, 1), ""), qhi = LLVMBuildLShr(b, q, cg_const_i32(C, 1), "");
    /* R(0); the "+8" rows of an m16 tile are 8*Wm further, or 8 further in
     * wgmma's form (rin = 2: layout.h), where warp wm's rows start at 16*wm */
    int hrow = L->rin[0] == 2 ? 8 : 8 * Wm;
    LLVMValueRef rowbase = LLVMBuildMul(b, wm, cg_const_i32(C, L->rin[0] == 2 ? 16 : 8), "");
    LLVMValueRef colbase = LLVMBuildURem(b, LLVMBuildMul(b, wn, cg_const_i32(C, 8), ""), cg_const_i32(C, N), "");
    return (frag_ctx){ta, tb, av, at, areg, mt, nt, Wm, Wn, N, hrow, rowbase, colbase, j8, qlo, qhi};
}

/* The first k step's fragments through the prefetch registers: stored
 * (store) or loaded into f. */
static void prefetched(cg_ctx *C, cg_mma_pf *pf, const frag_ctx *F, frags *f, bool store) {
    LLVMBuilderRef b = C->b;
    for (int i = 0; i < F->mt && i < 16; i++)
        for (int q = 0; q < 4; q++) {
            if (store) LLVMBuildStore(b, f->a[i][q], pf->a[i][q]);
            else f->a[i][q] = LLVMBuildLoad2(b, C->i32, pf->a[i][q], "");
        }
    for (int j = 0; j < F->nt && j < 64; j++)
        for (int q = 0; q < 2; q++) {
            if (store) LLVMBuildStore(b, f->b[j][q], pf->b[j][q]);
            else f->b[j][q] = LLVMBuildLoad2(b, C->i32, pf->b[j][q], "");
        }
}

static void lower_mma(cg_ctx *C, ir_inst *in, cg_val av, cg_val bv, cg_val *acc, const lay_layout *L) {
    LLVMBuilderRef b = C->b;
    ir_value *a = in->operands[0], *bo = in->operands[1], *res = in->results[0];
    blk_dtype ta = (blk_dtype)a->type.dtype;
    int M = a->type.shape[0], K = a->type.shape[1], N = bo->type.shape[1];
    mma_kind mk = mma_for(ta);
    int e = stored_bytes(ta), Kp = (K + mk.kstep - 1) / mk.kstep * mk.kstep;
    bool tf32 = ta == DT_F32;

    /* each operand: a resident tile (ring slot or hoisted: pipeliner.h), or
     * staged here from registers into the scratch (a first, 128-byte aligned) */
    sm_tile ta_t, tb_t;
    bool ares = resident_tile(C, a, &ta_t), bres = resident_tile(C, bo, &tb_t);
    bool areg = !ares && a_in_registers(av, a->type, L);
    ares |= areg; /* nothing to stage for a */
    if (!ares || !bres) {
        if (staged_too_big(C, in, (ares ? 0 : (int64_t)M * K) + (bres ? 0 : (int64_t)K * N))) return;
        int acv = stored_colv(av, ta, 1), bcv = stored_colv(bv, ta, 0);
        int64_t abytes = ares ? 0 : (acv == 1 ? (int64_t)M * Kp : (int64_t)K * M) * e;
        abytes = (abytes + 127) / 128 * 128;
        int64_t bbytes = bres ? 0 : (bcv == 0 ? (int64_t)N * Kp : (int64_t)K * N) * e;
        LLVMValueRef base = cg_smem(C, in->loc, abytes + bbytes);
        LLVMValueRef bbase = LLVMBuildGEP2(b, C->i8, base, (LLVMValueRef[]){cg_const_i32(C, abytes)}, 1, "");
        if (!ares) {
            if (acv == 1) tile_init(&ta_t, base, M, Kp, e, 1);
            else tile_init(&ta_t, base, K, M, e, 0);
        }
        if (!bres) {
            if (bcv == 0) tile_init(&tb_t, bbase, N, Kp, e, 0);
            else tile_init(&tb_t, bbase, K, N, e, 1);
        }
        cg_barrier(C);
        if (!ares) stage_operand(C, in, a, &ta_t, av, tf32);
        if (!bres) stage_operand(C, in, bo, &tb_t, bv, tf32);
        if (Kp > K) {
            if (!ares && acv == 1) zero_pad(C, &ta_t, K);
            if (!bres && bcv == 0) zero_pad(C, &tb_t, K);
        }
        cg_barrier(C);
    }

    frag_ctx F = frag_setup(C, &ta_t, &tb_t, av, a->type, areg, L, res->type.shape, N);
    cg_lay_info li;
    cg_lay_shape(L, 2, res->type.shape, &li);
    /* fragments of k step s+1 are loaded before the mma of step s: ldmatrix
     * latency hides under the tensor cores (double-buffered fragments) */
    frags cur, nxt;
    frag_addrs addrs = {.n = 0};
    int steps = Kp / mk.kstep;
    cg_mma_pf *pf = C->mma_pf && C->mma_pf->dot == in ? C->mma_pf : NULL;
    if (pf) prefetched(C, pf, &F, &cur, false);
    else load_frags(C, &F, &addrs, 0, &cur);
    for (int s = 0; s < steps; s++) {
        if (s + 1 < steps) load_frags(C, &F, &addrs, s + 1, &nxt);
        if (pf) cg_pipe_spread(C, pf, s, steps);
        if (pf && s == steps - 1) {
            /* every fragment of this iteration is loaded: wait for the next
             * tiles, then load its first k step under this step's mma */
            LLVMValueRef here = cg_pipe_mma_next(C, pf->loop);
            sm_tile na, nb;
            resident_tile(C, a, &na);
            resident_tile(C, bo, &nb);
            frag_ctx F2 = F;
            F2.ta = &na, F2.tb = &nb;
            frag_addrs addrs2 = {.n = 0};
            frags ahead;
            load_frags(C, &F2, &addrs2, 0, &ahead);
            prefetched(C, pf, &F, &ahead, true);
            if (here) cg_pipe_set_slot(C, pf->loop, here);
        }
        for (int i = 0; i < F.mt && i < 16; i++)
            for (int j = 0; j < F.nt && j < 64; j++) {
                int reg[4];
                for (int c = 0; c < 4; c++) reg[c] = cg_reg_of(&li, (int[]){2 * i + (c >> 1), 2 * j + (c & 1)});
                LLVMValueRef x[4];
                for (int c = 0; c < 4; c++) x[c] = acc->v[reg[c]];
                mma(C, &mk, cur.a[i], cur.b[j], x);
                for (int c = 0; c < 4; c++) acc->v[reg[c]] = x[c];
            }
        if (s + 1 < steps) cur = nxt;
    }
}

/* The accumulator layout of a dot: the assigned one when it has the mma
 * form (layout.c's seeds make it so), else lay_for_dot's and a conversion. */
const lay_layout *dot_acc_layout(cg_ctx *C, ir_inst *in) {
    ir_value *a = in->operands[0], *bo = in->operands[1], *res = in->results[0];
    const lay_layout *want = cg_lay(C, res);
    return lay_is_mma_acc(want, 2, res->type.shape)
               ? want
               : lay_for_dot(C->a, a->type.shape[0], bo->type.shape[1], C->num_warps, false, false);
}

/* Before a prefetching loop (cg_pipe.c prefetch_dot; its rings at slot 0,
 * iteration 0's tiles in): the registers that carry the first k step's
 * fragments from one iteration to the next — allocas in the entry block,
 * which LLVM turns into the loop's phis — loaded with iteration 0's. */
void mma_prefetch_begin(cg_ctx *C, ir_inst *loop, ir_inst *dot) {
    ir_value *a = dot->operands[0], *bo = dot->operands[1], *res = dot->results[0];
    const lay_layout *L = dot_acc_layout(C, dot);
    sm_tile ta, tb;
    if (!resident_tile(C, a, &ta) || !resident_tile(C, bo, &tb)) return;
    cg_mma_pf *pf = ARENA_NEW(C->a, cg_mma_pf);
    if (!pf) { C->failed = true; return; }
    pf->loop = loop, pf->dot = dot;
    frag_ctx F = frag_setup(C, &ta, &tb, (cg_val){0}, a->type, false, L, res->type.shape, bo->type.shape[1]);
    for (int i = 0; i < F.mt && i < 16; i++)
        for (int q = 0; q < 4; q++) pf->a[i][q] = cg_entry_alloca(C, C->i32, "pf.a");
    for (int j = 0; j < F.nt && j < 64; j++)
        for (int q = 0; q < 2; q++) pf->b[j][q] = cg_entry_alloca(C, C->i32, "pf.b");
    frag_addrs addrs = {.n = 0};
    frags f;
    load_frags(C, &F, &addrs, 0, &f);
    prefetched(C, pf, &F, &f, true);
    C->mma_pf = pf;
}

/* ---- exact f32 ("ieee"): one fma per k, in k order ---- */

static void lower_simt(cg_ctx *C, ir_inst *in, cg_val av, cg_val bv, cg_val *acc, const lay_layout *L) {
    LLVMBuilderRef b = C->b;
    ir_value *a = in->operands[0], *bo = in->operands[1], *res = in->results[0];
    int M = a->type.shape[0], K = a->type.shape[1], N = bo->type.shape[1];
    /* plain row-major tiles: A [M][K], B [K][N] */
    int64_t abytes = (int64_t)M * K * 4;
    LLVMValueRef base = cg_smem(C, in->loc, abytes + (int64_t)K * N * 4);
    cg_barrier(C);
    for (int pass = 0; pass < 2; pass++) {
        cg_val x = pass ? bv : av;
        ir_type t = pass ? bo->type : a->type;
        cg_lay_info li;
        cg_lay_info_get(C, x.lay, 2, t.shape, &li);
        for (int r = 0; r < li.nregs && r < x.n; r++) {
            LLVMValueRef lin = LLVMBuildAdd(b, cg_reg_linear(C, &li, r), cg_const_i32(C, pass ? M * K : 0), "");
            LLVMValueRef p = LLVMBuildGEP2(b, C->f32, base, &lin, 1, "");
            LLVMSetAlignment(LLVMBuildStore(b, x.v[r], p), 4);
        }
    }
    cg_barrier(C);
    cg_lay_info li;
    cg_lay_info_get(C, L, 2, res->type.shape, &li);
    /* k loop: acc[r] = fma(A[row r][k], B[k][col r], acc[r]) */
    int nr = li.nregs;
    LLVMValueRef *rowv = ARENA_ARRAY(C->a, LLVMValueRef, nr), *colv = ARENA_ARRAY(C->a, LLVMValueRef, nr);
    if (!rowv || !colv) { C->failed = true; return; }
    for (int r = 0; r < nr; r++) rowv[r] = cg_reg_coord(C, &li, r, 0), colv[r] = cg_reg_coord(C, &li, r, 1);
    cg_loop kl = cg_loop_begin(C, C->i32, cg_const_i32(C, 0), "dot.k", NULL, "dot.done"); /* tested at its bottom */
    LLVMValueRef k = kl.iv;
    LLVMValueRef *phi = ARENA_ARRAY(C->a, LLVMValueRef, nr);
    if (!phi) { C->failed = true; return; }
    for (int r = 0; r < nr; r++) phi[r] = cg_loop_phi(C, &kl, C->f32, acc->v[r]);
    LLVMValueRef *next = ARENA_ARRAY(C->a, LLVMValueRef, nr);
    if (!next) { C->failed = true; return; }
    LLVMTypeRef fty = C->f32;
    for (int r = 0; r < nr; r++) {
        LLVMValueRef ai = LLVMBuildAdd(b, LLVMBuildMul(b, rowv[r], cg_const_i32(C, K), ""), k, "");
        LLVMValueRef bi = LLVMBuildAdd(b, LLVMBuildMul(b, k, cg_const_i32(C, N), ""), colv[r], "");
        bi = LLVMBuildAdd(b, bi, cg_const_i32(C, M * K), "");
        LLVMValueRef x = LLVMBuildLoad2(b, fty, LLVMBuildGEP2(b, fty, base, &ai, 1, ""), "");
        LLVMValueRef y = LLVMBuildLoad2(b, fty, LLVMBuildGEP2(b, fty, base, &bi, 1, ""), "");
        LLVMSetAlignment(x, 4);
        LLVMSetAlignment(y, 4);
        next[r] = cg_call_intrinsic(C, "llvm.fma", &fty, 1, (LLVMValueRef[]){x, y, phi[r]}, 3);
    }
    LLVMValueRef k1 = LLVMBuildAdd(b, k, cg_const_i32(C, 1), "");
    LLVMBasicBlockRef latch = cg_loop_end_while(C, &kl, k1, LLVMBuildICmp(b, LLVMIntSLT, k1, cg_const_i32(C, K), ""));
    for (int r = 0; r < nr; r++) cg_phi_add(phi[r], next[r], latch);
    for (int r = 0; r < nr; r++) acc->v[r] = next[r];
}

/* blkc -R: the path each dot took in this entry, and on a wgmma target why
 * not wgmma (-Rpass-missed: only those). */
static void remark_dot(cg_ctx *C, ir_inst *in, const wg_plan *p, const lay_layout *L) {
    if (!C->remarks) return;
    const char *entry = C->entry ? C->entry : C->f->name;
    int N = in->operands[1]->type.shape[1];
    if (p->ok) {
        if (!(C->remarks & CG_REMARKS)) return;
        ir_inst *loop = in->parent ? in->parent->parent : NULL;
        diag_remark(C->diag, in->loc, "dot in %s: wgmma m64n%dk%d on %d warpgroup%s, a from %s, b %s-major%s", entry,
                    N < 256 ? N : 256, 32 / pl_dot_elem_bytes(C->lt, in), C->num_warps / 4, C->num_warps > 4 ? "s" : "",
                    p->areg ? "registers" : "shared memory", p->bcv == 0 ? "K" : "N",
                    wg_wait(C, loop, in) == WG_KEEP1   ? ", its group kept in flight across iterations"
                    : wg_wait(C, loop, in) == WG_CARRY ? ", its group completed in the next iteration, before its first reader"
                    : wg_wait(C, loop, in) == WG_USE ? ", its group completed before its first reader"
                                                       : "");
        return;
    }
    bool missed = tgt_has(C->tgt, TGT_CAP_WGMMA) && in->precision != IR_PREC_IEEE;
    if (!(C->remarks & CG_REMARKS) && !missed) return;
    if (in->precision == IR_PREC_IEEE && (blk_dtype)in->operands[0]->type.dtype == DT_F32)
        diag_remark(C->diag, in->loc, "dot in %s: exact f32 fma per k (input_precision = \"ieee\"), no tensor cores", entry);
    else
        diag_remark(C->diag, in->loc, "dot in %s: mma.sync %s over %dx%d warps, not wgmma: %s", entry,
                    strstr(mma_for((blk_dtype)in->operands[0]->type.dtype).mma, "m16n8"), L->wpc[0], L->wpc[1], p->why);
}

bool cg_dot(cg_ctx *C, ir_inst *in) {
    if (in->op != IR_DOT) return false;
    ir_value *a = in->operands[0], *bo = in->operands[1], *c = in->operands[2], *res = in->results[0];
    blk_dtype ta = (blk_dtype)a->type.dtype;
    int M = a->type.shape[0], K = a->type.shape[1], N = bo->type.shape[1];
    const lay_layout *want = cg_lay(C, res);
    if (!is_pow2(M) || !is_pow2(N) || !is_pow2(K) || M < 16 || N < 16 || K < 16) {
        cg_error(C, in->loc, "dot on the GPU needs M, N and K to be powers of two of at least 16, got M = %d, N = %d, "
                 "K = %d", M, N, K);
        C->failed = true;
        return true;
    }
    if (ta == DT_F64 || (blk_dtype)res->type.dtype == DT_F64) {
        cg_error(C, in->loc, "dot on the GPU does not support f64");
        C->failed = true;
        return true;
    }
    const lay_layout *L = dot_acc_layout(C, in);
    sm_tile unused;
    wg_plan wp;
    cg_val av = {0}, bv = {0};
    if (!resident_tile(C, a, &unused)) av = operand_regs(C, a);
    if (!resident_tile(C, bo, &unused)) bv = operand_regs(C, bo);
    cg_val cv = cg_get(C, c, L);
    cg_val acc = cg_new_val(C, cv.n, L);
    for (int i = 0; i < cv.n; i++) acc.v[i] = cv.v[i];
    if (ta == DT_F32 && in->precision == IR_PREC_IEEE) {
        if (!av.set) av = cg_get(C, a, cg_lay(C, a));
        if (!bv.set) bv = cg_get(C, bo, cg_lay(C, bo));
        wg_choose(C, in, &wp);
        remark_dot(C, in, &wp, L);
        lower_simt(C, in, av, bv, &acc, L);
    }
    else if (wg_choose(C, in, &wp) && lay_eq(L, want)) {
        remark_dot(C, in, &wp, L);
        lower_wgmma(C, in, &wp, av, bv, &acc, L);
    } else {
        remark_dot(C, in, &wp, L);
        lower_mma(C, in, av, bv, &acc, L);
    }
    if (!lay_eq(L, want)) acc = cg_convert(C, in->loc, acc, res->type, want);
    cg_set(C, res, acc);
    return true;
}

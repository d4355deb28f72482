/* cg_sort_keys.c — the integer keys of sort and topk (cg_sort.c): format,
 * encoding and decoding, compare, keys in shared memory.
 *
 * Both compare unsigned integer keys whose order is exactly the order of the
 * interpreter (interp_reduce.c: NaN above every number, -0 == +0, ties to
 * the lower index, ascending unless descending), so a compare is one or two
 * integer compares and no float is ever widened:
 *
 *   canon(x)  w bits: unsigned ints as they are; signed ints with the sign
 *             bit flipped; sign-magnitude floats (f8, f16, bf16, f32, f64)
 *             x | sign when positive, ~x when negative, every zero the key
 *             of +0, every NaN all ones; complemented when descending.
 *   hi        canon(x) << (ib + pb) | index << pb | payload
 *   lo        the index (i32) when the value has 64 bits
 *   aux       the value's bits when the key cannot give them back (f32, f64:
 *             canon forgets -0 and NaN payloads)
 *
 * ib = log2 S index bits when the order needs the index (floats: -0 and
 * NaNs are equal but distinguishable, so the index makes the order strict
 * and the result the stable sort; topk: the reported index) and 0 for an
 * integer sort (equal keys are identical values). 8- and 16-bit floats keep
 * their own bits in the low pb bits of hi. hi is i32 when it fits, else i64
 * (at most 16 + 20 + 16 bits: a block has at most 2^20 elements).
 */
#include "cg_sort.h"

/* ---- keys ---- */

int sk_log2(int64_t v) {
    int l = 0;
    while ((1LL << l) < v) l++;
    return l;
}

sk_fmt sk_format(cg_ctx *C, blk_dtype t, bool desc, bool index, int32_t S) {
    sk_fmt F = {.t = t, .desc = desc, .w = dtype_bits(t)};
    bool fl = dtype_is_float(t);
    if (fl) index = true;
    if (index && F.w == 64) F.lo = true;
    else if (index) F.ib = sk_log2(S);
    F.aux = fl && F.w >= 32;
    F.pb = fl && F.w < 32 ? F.w : 0;
    F.vt = LLVMIntTypeInContext(C->llc, (unsigned)F.w);
    F.ht = F.w + F.ib + F.pb <= 32 ? C->i32 : C->i64;
    return F;
}

/* The largest magnitude (bits without the sign) that is not a NaN. */
static uint64_t max_number_bits(blk_dtype t) {
    switch (t) {
    case DT_F8E4M3: return 0x7E; /* no infinity: S.1111.111 is the NaN */
    case DT_F8E5M2: return 0x7C;
    case DT_F16: return 0x7C00;
    case DT_BF16: return 0x7F80;
    case DT_F32: return 0x7F800000;
    default: return 0x7FF0000000000000ULL;
    }
}

/* x's bits as vt (floats bitcast; f8, ints and bool already are). */
static LLVMValueRef value_bits(cg_ctx *C, const sk_fmt *F, LLVMValueRef x) {
    return LLVMTypeOf(x) == F->vt ? x : LLVMBuildBitCast(C->b, x, F->vt, "");
}

static LLVMValueRef canon(cg_ctx *C, const sk_fmt *F, LLVMValueRef bits) {
    LLVMBuilderRef b = C->b;
    LLVMValueRef ones = LLVMConstAllOnes(F->vt);
    LLVMValueRef sign = LLVMConstInt(F->vt, 1ULL << (F->w - 1), 0);
    LLVMValueRef c = bits;
    if (dtype_is_float(F->t)) {
        LLVMValueRef mag = LLVMBuildAnd(b, bits, LLVMConstInt(F->vt, (1ULL << (F->w - 1)) - 1, 0), "");
        LLVMValueRef neg = LLVMBuildICmp(b, LLVMIntSLT, bits, LLVMConstInt(F->vt, 0, 0), "");
        LLVMValueRef flipped = LLVMBuildXor(b, bits, ones, "");
        LLVMValueRef positive = LLVMBuildOr(b, bits, sign, "");
        c = LLVMBuildSelect(b, neg, flipped, positive, "");
        LLVMValueRef zero = LLVMBuildICmp(b, LLVMIntEQ, mag, LLVMConstInt(F->vt, 0, 0), "");
        c = LLVMBuildSelect(b, zero, sign, c, "");
        LLVMValueRef nan = LLVMBuildICmp(b, LLVMIntUGT, mag, LLVMConstInt(F->vt, max_number_bits(F->t), 0), "");
        c = LLVMBuildSelect(b, nan, ones, c, "");
    } else if (dtype_is_signed(F->t)) {
        c = LLVMBuildXor(b, bits, sign, "");
    }
    if (F->desc) c = LLVMBuildXor(b, c, ones, "");
    return c;
}

static LLVMValueRef widen(cg_ctx *C, LLVMValueRef v, LLVMTypeRef t) {
    return LLVMTypeOf(v) == t ? v : LLVMBuildZExt(C->b, v, t, "");
}

/* The key of element x at position pos (i32) along the axis. */
sk_key sk_encode(cg_ctx *C, const sk_fmt *F, LLVMValueRef x, LLVMValueRef pos) {
    LLVMBuilderRef b = C->b;
    LLVMValueRef bits = value_bits(C, F, x);
    LLVMValueRef hi = widen(C, canon(C, F, bits), F->ht);
    if (F->ib + F->pb) hi = LLVMBuildShl(b, hi, LLVMConstInt(F->ht, (unsigned)(F->ib + F->pb), 0), "");
    if (F->ib) {
        LLVMValueRef i = LLVMBuildZExt(b, pos, F->ht, "");
        if (F->pb) i = LLVMBuildShl(b, i, LLVMConstInt(F->ht, (unsigned)F->pb, 0), "");
        hi = LLVMBuildOr(b, hi, i, "");
    }
    if (F->pb) hi = LLVMBuildOr(b, hi, widen(C, bits, F->ht), "");
    return (sk_key){hi, F->lo ? pos : NULL, F->aux ? bits : NULL};
}

LLVMValueRef sk_decode_value(cg_ctx *C, const sk_fmt *F, sk_key k) {
    LLVMBuilderRef b = C->b;
    LLVMValueRef bits;
    if (F->aux) {
        bits = k.aux;
    } else if (F->pb) {
        bits = LLVMBuildTrunc(b, k.hi, F->vt, "");
    } else { /* integers: canon is invertible */
        LLVMValueRef c = k.hi;
        if (F->ib) c = LLVMBuildLShr(b, c, LLVMConstInt(F->ht, (unsigned)F->ib, 0), "");
        if (F->ht != F->vt) c = LLVMBuildTrunc(b, c, F->vt, "");
        if (F->desc) c = LLVMBuildXor(b, c, LLVMConstAllOnes(F->vt), "");
        if (dtype_is_signed(F->t)) c = LLVMBuildXor(b, c, LLVMConstInt(F->vt, 1ULL << (F->w - 1), 0), "");
        bits = c;
    }
    LLVMTypeRef rt = cg_type(C, F->t);
    return rt == F->vt ? bits : LLVMBuildBitCast(b, bits, rt, "");
}

LLVMValueRef sk_decode_index(cg_ctx *C, const sk_fmt *F, sk_key k) {
    if (F->lo) return k.lo;
    LLVMValueRef i = k.hi;
    if (F->pb) i = LLVMBuildLShr(C->b, i, LLVMConstInt(F->ht, (unsigned)F->pb, 0), "");
    i = LLVMBuildAnd(C->b, i, LLVMConstInt(F->ht, (1ULL << F->ib) - 1, 0), "");
    return F->ht == C->i32 ? i : LLVMBuildTrunc(C->b, i, C->i32, "");
}

/* a strictly before b. Keys are unique when they hold an index; without one
 * equal keys are equal values, so which of two equal keys goes first never
 * shows. */
LLVMValueRef sk_before(cg_ctx *C, const sk_fmt *F, sk_key a, sk_key b) {
    LLVMValueRef lt = LLVMBuildICmp(C->b, LLVMIntULT, a.hi, b.hi, "");
    if (!F->lo) return lt;
    LLVMValueRef eq = LLVMBuildICmp(C->b, LLVMIntEQ, a.hi, b.hi, "");
    LLVMValueRef lo = LLVMBuildICmp(C->b, LLVMIntULT, a.lo, b.lo, "");
    LLVMValueRef tie = LLVMBuildAnd(C->b, eq, lo, "");
    return LLVMBuildOr(C->b, lt, tie, "");
}

sk_key sk_pick(cg_ctx *C, LLVMValueRef c, sk_key a, sk_key b) {
    sk_key r = {LLVMBuildSelect(C->b, c, a.hi, b.hi, ""), NULL, NULL};
    if (a.lo) r.lo = LLVMBuildSelect(C->b, c, a.lo, b.lo, "");
    if (a.aux) r.aux = LLVMBuildSelect(C->b, c, a.aux, b.aux, "");
    return r;
}

/* Positions of a and b (a first) in order: ascending when asc; left alone
 * when `on` (may be NULL) is false. Swapping equal keys (no index) is
 * harmless. */
void sk_order_pair(cg_ctx *C, const sk_fmt *F, sk_key *a, sk_key *b, LLVMValueRef asc, LLVMValueRef on) {
    LLVMValueRef swap = LLVMBuildXor(C->b, asc, sk_before(C, F, *a, *b), "");
    if (on) swap = LLVMBuildAnd(C->b, swap, on, "");
    sk_key x = sk_pick(C, swap, *b, *a);
    sk_key y = sk_pick(C, swap, *a, *b);
    *a = x;
    *b = y;
}

sk_key sk_shfl_key(cg_ctx *C, sk_key k, LLVMValueRef mask) {
    sk_key r = {cg_shfl_bfly(C, k.hi, mask), NULL, NULL};
    if (k.lo) r.lo = cg_shfl_bfly(C, k.lo, mask);
    if (k.aux) r.aux = cg_shfl_bfly(C, k.aux, mask);
    return r;
}

/* ---- keys in shared memory: one array per field ---- */

LLVMValueRef sk_byte_offset(cg_ctx *C, LLVMValueRef base, int64_t off) {
    LLVMValueRef o = cg_const_i32(C, off);
    return LLVMBuildGEP2(C->b, C->i8, base, &o, 1, "");
}

int sk_type_bytes(LLVMTypeRef t) { return (int)(LLVMGetIntTypeWidth(t) / 8); }

/* Room for `count` keys. */
sk_smem sk_smem_keys(cg_ctx *C, blk_loc loc, const sk_fmt *F, int64_t count) {
    int64_t lo_off = (count * sk_type_bytes(F->ht) + 15) / 16 * 16;
    int64_t aux_off = lo_off + (F->lo ? (count * 4 + 15) / 16 * 16 : 0);
    int64_t total = aux_off + (F->aux ? count * sk_type_bytes(F->vt) : 0);
    sk_smem M = {cg_smem(C, loc, total), NULL, NULL};
    M.lo = sk_byte_offset(C, M.hi, lo_off);
    M.aux = sk_byte_offset(C, M.hi, aux_off);
    return M;
}

LLVMValueRef sk_slot(cg_ctx *C, LLVMValueRef arr, LLVMTypeRef t, LLVMValueRef i) {
    return LLVMBuildGEP2(C->b, t, arr, &i, 1, "");
}

void sk_store_key(cg_ctx *C, const sk_fmt *F, const sk_smem *M, LLVMValueRef i, sk_key k) {
    LLVMBuildStore(C->b, k.hi, sk_slot(C, M->hi, F->ht, i));
    if (F->lo) LLVMBuildStore(C->b, k.lo, sk_slot(C, M->lo, C->i32, i));
    if (F->aux) LLVMBuildStore(C->b, k.aux, sk_slot(C, M->aux, F->vt, i));
}

sk_key sk_load_key(cg_ctx *C, const sk_fmt *F, const sk_smem *M, LLVMValueRef i) {
    sk_key k = {LLVMBuildLoad2(C->b, F->ht, sk_slot(C, M->hi, F->ht, i), ""), NULL, NULL};
    if (F->lo) k.lo = LLVMBuildLoad2(C->b, C->i32, sk_slot(C, M->lo, C->i32, i), "");
    if (F->aux) k.aux = LLVMBuildLoad2(C->b, F->vt, sk_slot(C, M->aux, F->vt, i), "");
    return k;
}

/* cg_warp.c — warp-level primitives: shfl.sync of any register type, as
 * 32-bit shuffles (llvm.nvvm.shfl.sync.*.i32). The one definition for
 * reductions, scans (cg_reduce.c) and sort / topk (cg_sort.c,
 * cg_sort_keys.c); declared in cg_internal.h. */
#include "cg_internal.h"

/* The i64 of two shuffled i32 halves. One emitting call per statement,
 * high half first: the PTX must not depend on the C compiler's argument
 * order (reliability F7). */
static LLVMValueRef join_halves(cg_ctx *C, LLVMValueRef lo, LLVMValueRef hi) {
    LLVMValueRef hi64 = LLVMBuildZExt(C->b, hi, C->i64, "");
    LLVMValueRef hs = LLVMBuildShl(C->b, hi64, LLVMConstInt(C->i64, 32, 0), "");
    LLVMValueRef lo64 = LLVMBuildZExt(C->b, lo, C->i64, "");
    return LLVMBuildOr(C->b, lo64, hs, "");
}

/* Butterfly shuffle of any register type by lane mask `mask` (i32,
 * constant or not): 64-bit values as two 32-bit shuffles. */
LLVMValueRef cg_shfl_bfly(cg_ctx *C, LLVMValueRef v, LLVMValueRef mask) {
    LLVMBuilderRef b = C->b;
    LLVMTypeRef t = LLVMTypeOf(v);
    LLVMTypeKind k = LLVMGetTypeKind(t);
    LLVMValueRef args[4] = {cg_const_i32(C, -1), NULL, mask, cg_const_i32(C, 31)};
    if (k == LLVMPointerTypeKind) return LLVMBuildIntToPtr(b, cg_shfl_bfly(C, LLVMBuildPtrToInt(b, v, C->i64, ""), mask), t, "");
    unsigned bits = k == LLVMIntegerTypeKind ? LLVMGetIntTypeWidth(t)
                    : k == LLVMHalfTypeKind || k == LLVMBFloatTypeKind ? 16
                    : k == LLVMFloatTypeKind ? 32 : 64;
    LLVMTypeRef it = LLVMIntTypeInContext(C->llc, bits);
    LLVMValueRef x = k == LLVMIntegerTypeKind ? v : LLVMBuildBitCast(b, v, it, "");
    LLVMValueRef r;
    if (bits == 64) {
        LLVMValueRef lo = LLVMBuildTrunc(b, x, C->i32, "");
        LLVMValueRef hi = LLVMBuildTrunc(b, LLVMBuildLShr(b, x, LLVMConstInt(C->i64, 32, 0), ""), C->i32, "");
        args[1] = lo;
        lo = cg_call_intrinsic(C, "llvm.nvvm.shfl.sync.bfly.i32", NULL, 0, args, 4);
        args[1] = hi;
        hi = cg_call_intrinsic(C, "llvm.nvvm.shfl.sync.bfly.i32", NULL, 0, args, 4);
        r = join_halves(C, lo, hi);
    } else {
        args[1] = bits == 32 ? x : LLVMBuildZExt(b, x, C->i32, "");
        r = cg_call_intrinsic(C, "llvm.nvvm.shfl.sync.bfly.i32", NULL, 0, args, 4);
        if (bits < 32) r = LLVMBuildTrunc(b, r, it, "");
    }
    return k == LLVMIntegerTypeKind ? r : LLVMBuildBitCast(b, r, t, "");
}

/* shfl.sync.up (up) or .down by a constant `delta` lanes: the scans'
 * neighbour exchange. */
LLVMValueRef cg_shfl_dir(cg_ctx *C, LLVMValueRef v, int delta, bool up) {
    LLVMBuilderRef b = C->b;
    LLVMTypeRef t = LLVMTypeOf(v);
    LLVMTypeKind k = LLVMGetTypeKind(t);
    if (k == LLVMPointerTypeKind) return LLVMBuildIntToPtr(b, cg_shfl_dir(C, LLVMBuildPtrToInt(b, v, C->i64, ""), delta, up), t, "");
    unsigned bits = k == LLVMIntegerTypeKind ? LLVMGetIntTypeWidth(t)
                    : k == LLVMHalfTypeKind || k == LLVMBFloatTypeKind ? 16
                    : k == LLVMFloatTypeKind ? 32 : 64;
    LLVMTypeRef it = LLVMIntTypeInContext(C->llc, bits);
    LLVMValueRef x = k == LLVMIntegerTypeKind ? v : LLVMBuildBitCast(b, v, it, "");
    const char *name = up ? "llvm.nvvm.shfl.sync.up.i32" : "llvm.nvvm.shfl.sync.down.i32";
    LLVMValueRef args[4] = {cg_const_i32(C, -1), NULL, cg_const_i32(C, delta), cg_const_i32(C, up ? 0 : 31)};
    LLVMValueRef r;
    if (bits == 64) {
        args[1] = LLVMBuildTrunc(b, x, C->i32, "");
        LLVMValueRef lo = cg_call_intrinsic(C, name, NULL, 0, args, 4);
        args[1] = LLVMBuildTrunc(b, LLVMBuildLShr(b, x, LLVMConstInt(C->i64, 32, 0), ""), C->i32, "");
        LLVMValueRef hi = cg_call_intrinsic(C, name, NULL, 0, args, 4);
        r = join_halves(C, lo, hi);
    } else {
        args[1] = bits == 32 ? x : LLVMBuildZExt(b, x, C->i32, "");
        r = cg_call_intrinsic(C, name, NULL, 0, args, 4);
        if (bits < 32) r = LLVMBuildTrunc(b, r, it, "");
    }
    return k == LLVMIntegerTypeKind ? r : LLVMBuildBitCast(b, r, t, "");
}

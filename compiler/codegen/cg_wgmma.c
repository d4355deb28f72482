/* cg_wgmma.c — dot on Hopper's wgmma.mma_async (cg_dot.c chooses the path:
 * wg_choose; the operands' shared tiles and the mma.sync path live there). */
#include <stdio.h>
#include <string.h>

#include "cg_dot.h"

/* ---- Hopper: wgmma.mma_async ----
 *
 * A warpgroup (4 warps) computes m64 x n (n <= 256) x k16 per instruction:
 * a from shared memory through a descriptor (or from registers: the same
 * per-warp fragment as mma.sync's A), b from shared memory. Its f32
 * accumulator d[j] sits at row 16*wl + g + 8*((j >> 1) & 1), column
 * n0 + 8*(j >> 2) + 2t + (j & 1) (FACTS.md) — in our accumulator layout
 * (Wn = 1) register (k0, k1) = (2i + ((j >> 1) & 1), 2*(n0/8 + (j >> 2)) +
 * (j & 1)) of m64 instruction i, once a's rows are permuted (wg_row).
 *
 * The dot issues wgmma.fence, every instruction of every k step, one
 * commit_group and wait_group 0. The fence and the wait take the
 * accumulator (and a's fragments) as tied operands: LLVM cannot move their
 * producers past the fence or their users above the wait. */

/* The 64-bit matrix descriptor: start address, leading and stride byte
 * offsets (>> 4), the swizzle mode in bits 62..63 (1: 128 bytes, 2: 64,
 * 3: 32; the tile's span sw). */
static LLVMValueRef wg_desc(cg_ctx *C, LLVMValueRef addr32, int lbo, int sbo, int sw) {
    LLVMBuilderRef b = C->b;
    LLVMValueRef start = LLVMBuildZExt(b, LLVMBuildAnd(b, LLVMBuildLShr(b, addr32, cg_const_i32(C, 4), ""),
                                                       cg_const_i32(C, 0x3FFF), ""), C->i64, "");
    uint64_t mode = sw == 128 ? 1 : sw == 64 ? 2 : 3;
    uint64_t k = ((uint64_t)(lbo >> 4) & 0x3FFF) << 16 | ((uint64_t)(sbo >> 4) & 0x3FFF) << 32 | mode << 62;
    return LLVMBuildOr(b, start, LLVMConstInt(C->i64, k, 0), "");
}

/* the descriptor of desc's address + off (a multiple of 16) */
static LLVMValueRef desc_at(cg_ctx *C, LLVMValueRef desc, int off) {
    return off ? LLVMBuildAdd(C->b, desc, LLVMConstInt(C->i64, (unsigned long long)(off >> 4), 0), "") : desc;
}

/* An asm statement through which values pass unchanged, ordered with the
 * wgmma instructions (side effects): vals[0..n) in and out. */
void wg_pass(cg_ctx *C, const char *text, LLVMValueRef *vals, int n) {
    if (n == 0) { cg_inline_asm(C, C->vd, text, "~{memory}", NULL, 0, true); return; }
    LLVMTypeRef *ts = ARENA_ARRAY(C->a, LLVMTypeRef, n);
    blk_strbuf cons;
    sb_init(&cons);
    if (!ts) { C->failed = true; sb_free(&cons); return; }
    for (int i = 0; i < n; i++) {
        ts[i] = LLVMTypeOf(vals[i]);
        sb_printf(&cons, "%s=%s", i ? "," : "", ts[i] == C->f32 ? "f" : "r");
    }
    for (int i = 0; i < n; i++) sb_printf(&cons, ",%d", i);
    sb_puts(&cons, ",~{memory}");
    LLVMValueRef r = cg_inline_asm(C, LLVMStructTypeInContext(C->llc, ts, (unsigned)n, 0), text, cons.data, vals, n, true);
    for (int i = 0; i < n; i++) vals[i] = LLVMBuildExtractValue(C->b, r, (unsigned)i, "");
    sb_free(&cons);
}

/* One wgmma: d[0..nI/2) accumulate, a by descriptor (adesc) or registers
 * (areg[4]), b by descriptor; trans_b for an N-major b. */
static void wg_mma(cg_ctx *C, blk_dtype t, int nI, LLVMValueRef *d, LLVMValueRef adesc, LLVMValueRef *areg,
                   LLVMValueRef bdesc, bool trans_a, bool trans_b, bool zero_d) {
    int nd = nI / 2, na = areg ? 4 : 1;
    int scale_d = zero_d ? 0 : 1; /* 0: d = a*b, the accumulator's registers are not read */
    blk_strbuf text, cons;
    sb_init(&text);
    sb_init(&cons);
    bool i8 = t == DT_I8;
    sb_printf(&text, "{ .reg .pred p; setp.ne.b32 p, %d, 0; ", scale_d);
    /* 32 bytes of K per instruction: k32 for 8-bit, k16 for 16-bit, k8 for tf32 */
    const char *ab = t == DT_BF16 ? "bf16" : t == DT_F16 ? "f16" : t == DT_F8E4M3 ? "e4m3" : t == DT_F8E5M2 ? "e5m2" : "tf32";
    bool notrans = t != DT_BF16 && t != DT_F16; /* f8 and tf32: scale immediates, no transpose */
    if (i8) sb_printf(&text, "wgmma.mma_async.sync.aligned.m64n%dk32.s32.s8.s8 {", nI);
    else sb_printf(&text, "wgmma.mma_async.sync.aligned.m64n%dk%d.f32.%s.%s {", nI, t == DT_F32 ? 8 : notrans ? 32 : 16, ab, ab);
    for (int i = 0; i < nd; i++) sb_printf(&text, "%s$%d", i ? ", " : "", i), sb_printf(&cons, "%s=%s", i ? "," : "", i8 ? "r" : "f");
    /* scale-d is a predicate operand: set from an immediate; integer
     * wgmma has no scale-a/b or transpose immediates (b is K-major) */
    if (i8) sb_printf(&text, "}, $%d, $%d, p;", nd, nd + 1);
    else if (notrans) sb_printf(&text, "}, $%d, $%d, p, 1, 1;", nd, nd + 1);
    else if (areg)
        sb_printf(&text, "}, {$%d, $%d, $%d, $%d}, $%d, p, 1, 1, %d;", nd, nd + 1, nd + 2, nd + 3, nd + 4, trans_b);
    else sb_printf(&text, "}, $%d, $%d, p, 1, 1, %d, %d;", nd, nd + 1, trans_a, trans_b);
    sb_puts(&text, " }");
    for (int i = 0; i < na; i++) sb_puts(&cons, areg ? ",r" : ",l");
    sb_puts(&cons, ",l");
    for (int i = 0; i < nd; i++) sb_printf(&cons, ",%d", i);
    int nargs = na + 1 + nd;
    int regs = nd + (areg ? 4 : 2) + 2; /* the accumulator, a, b's 64-bit descriptor */
    if (regs > C->wg_mma_regs) C->wg_mma_regs = regs;
    LLVMValueRef *args = ARENA_ARRAY(C->a, LLVMValueRef, nargs);
    LLVMTypeRef *ts = ARENA_ARRAY(C->a, LLVMTypeRef, nd);
    if (!args || !ts) { C->failed = true; goto out; }
    for (int i = 0; i < na; i++) args[i] = areg ? areg[i] : adesc;
    args[na] = bdesc;
    LLVMTypeRef dt = i8 ? C->i32 : C->f32;
    for (int i = 0; i < nd; i++) args[na + 1 + i] = zero_d ? LLVMGetUndef(dt) : d[i], ts[i] = dt;
    LLVMValueRef r = cg_inline_asm(C, LLVMStructTypeInContext(C->llc, ts, (unsigned)nd, 0), text.data, cons.data, args,
                                   nargs, true);
    for (int i = 0; i < nd; i++) d[i] = LLVMBuildExtractValue(C->b, r, (unsigned)i, "");
out:
    sb_free(&text);
    sb_free(&cons);
}

void lower_wgmma(cg_ctx *C, ir_inst *in, const wg_plan *p, cg_val av, cg_val bv, cg_val *acc,
                 const lay_layout *L) {
    LLVMBuilderRef b = C->b;
    ir_value *a = in->operands[0], *bo = in->operands[1], *res = in->results[0];
    blk_dtype ta = (blk_dtype)a->type.dtype;
    int M = a->type.shape[0], K = a->type.shape[1], N = bo->type.shape[1], e = pl_dot_elem_bytes(C->lt, in);
    int Wm = L->wpc[0];

    sm_tile ta_t, tb_t;
    bool ares = p->areg || resident_tile(C, a, &ta_t), bres = resident_tile(C, bo, &tb_t);
    if (!ares || !bres) {
        if (staged_too_big(C, in, (ares ? 0 : (int64_t)M * K) + (bres ? 0 : (int64_t)K * N))) return;
        int64_t abytes = ares ? 0 : (int64_t)M * K * e, bbytes = bres ? 0 : (int64_t)K * N * e;
        LLVMValueRef base = cg_smem_aligned(C, in->loc, abytes + bbytes, 1024);
        LLVMValueRef bbase = LLVMBuildGEP2(b, C->i8, base, (LLVMValueRef[]){cg_const_i32(C, abytes)}, 1, "");
        if (!ares) tile_init_wg(&ta_t, base, M, K, e, 1, cg_dot_a_perm(C, in));
        if (!bres) {
            if (p->bcv == 0) tile_init_wg(&tb_t, bbase, N, K, e, 0, 0);
            else tile_init_wg(&tb_t, bbase, K, N, e, 1, 0);
        }
        cg_barrier(C);
        if (!ares) stage_operand(C, in, a, &ta_t, av, ta == DT_F32);
        if (!bres) stage_operand(C, in, bo, &tb_t, bv, ta == DT_F32);
        fence_async_smem(C);
        cg_barrier(C);
    }

    cg_lay_info li;
    cg_lay_shape(L, 2, res->type.shape, &li);
    int mt = li.n[0] / 2;                  /* m64 instructions per warpgroup */
    int nI = N < 256 ? N : 256, nc = N / nI, steps = K * e / 32; /* 32 bytes of K per instruction */
    bool trans_b = tb_t.colv == 1, trans_a = !p->areg && ta_t.colv == 0;
    LLVMValueRef grp = LLVMBuildLShr(b, C->warp, cg_const_i32(C, 2), ""); /* warpgroup (Wn = 1: warp = wm) */

    /* a's fragments when from registers, for every (i, s) */
    typedef LLVMValueRef afrag[4];
    afrag *afr = NULL;
    if (p->areg) {
        afr = ARENA_ARRAY(C->a, afrag, mt * steps);
        if (!afr) { C->failed = true; return; }
        for (int i = 0; i < mt; i++)
            for (int s = 0; s < steps; s++) a_fragment(C, av, a->type, i, s, afr[i * steps + s]);
    }
    /* f8: the tensor cores keep an fp8 sum to about 13 mantissa bits
     * (products aligned to the largest and truncated; FP22 between
     * instructions), so the dot sums its K into fresh registers (scale-d 0
     * first) and adds them to the f32 accumulator after its wait, one f32
     * add each: the error is that of one dot's K, not of the whole loop's
     * (two-level accumulation: cuBLAS's fp8 default, DeepSeek's promotion
     * every 128) */
    bool promote = ta == DT_F8E4M3 || ta == DT_F8E5M2;
    LLVMValueRef *acc0 = promote ? ARENA_ARRAY(C->a, LLVMValueRef, acc->n > 0 ? acc->n : 1) : NULL;
    if (promote && !acc0) { C->failed = true; return; }
    for (int r = 0; promote && r < acc->n; r++) acc0[r] = acc->v[r], acc->v[r] = LLVMGetUndef(C->f32);
    /* an accumulator of zeros (q k^T): the first k step does not read it */
    bool zero = acc->n > 0;
    for (int r = 0; r < acc->n && zero; r++) zero = LLVMIsConstant(acc->v[r]) && LLVMIsNull(acc->v[r]);
    zero |= promote;
    int nacc = acc->n, nf = zero ? 0 : nacc, npass = nf + (p->areg ? 4 * mt * steps : 0);
    LLVMValueRef *pass = ARENA_ARRAY(C->a, LLVMValueRef, npass > 0 ? npass : 1);
    if (!pass) { C->failed = true; return; }
    for (int r = 0; r < nf; r++) pass[r] = acc->v[r];
    for (int q = 0; q < npass - nf; q++) pass[nf + q] = afr[q / 4][q % 4];
    wg_pass(C, "wgmma.fence.sync.aligned;", pass, npass);
    for (int r = 0; r < nf; r++) acc->v[r] = pass[r];
    for (int q = 0; q < npass - nf; q++) afr[q / 4][q % 4] = pass[nf + q];

    LLVMValueRef *d = ARENA_ARRAY(C->a, LLVMValueRef, nI / 2);
    int *reg = ARENA_ARRAY(C->a, int, nI / 2);
    if (!d || !reg) { C->failed = true; return; }
    /* one descriptor per operand block, then constant offsets: the start
     * address field (bits 0..13, address / 16) cannot carry into the next
     * field, shared addresses being below 256 KB */
    LLVMValueRef abase = p->areg ? NULL : tile_addr32(C, &ta_t, cg_const_i32(C, 0));
    /* a panel of sw bytes per row: 8 rows (one swizzle period) are 8 * sw
     * bytes (SBO), the next panel rows * sw bytes on (LBO, MN-major forms);
     * kps k steps of 32 bytes per panel of a K-major operand */
    int asw = p->areg ? 128 : ta_t.sw, bsw = tb_t.sw, akps = asw / 32, bkps = bsw / 32;
    LLVMValueRef bdesc0 = wg_desc(C, tile_addr32(C, &tb_t, cg_const_i32(C, 0)), trans_b ? K * bsw : 16, 8 * bsw, bsw);
    LLVMValueRef *adesc0 = ARENA_ARRAY(C->a, LLVMValueRef, mt);
    if (!adesc0) { C->failed = true; return; }
    for (int i = 0; i < mt && !p->areg; i++) {
        /* 64-row block i*Wm/4 + grp: 64 rows of 128 bytes, or (transpose-a,
         * a stored [K][M]) the 128-byte panel of those 64 M columns, K rows
         * of 128 bytes, described as b's N-major form */
        LLVMValueRef blk = LLVMBuildAdd(b, grp, cg_const_i32(C, i * (Wm / 4)), "");
        LLVMValueRef row0 = LLVMBuildMul(b, blk, cg_const_i32(C, trans_a ? K * 128 : 64 * asw), "");
        adesc0[i] = wg_desc(C, LLVMBuildAdd(b, abase, row0, ""), trans_a ? K * 128 : 16, 8 * asw, asw);
    }
    for (int s = 0; s < steps; s++)
        for (int i = 0; i < mt; i++)
            for (int c = 0; c < nc; c++) {
                int n0 = c * nI;
                /* A: K panel s/kps, 32 bytes per k step within the row; transposed: rows 16s.. */
                LLVMValueRef adesc = p->areg ? NULL
                                     : trans_a ? desc_at(C, adesc0[i], s * 16 * 128)
                                               : desc_at(C, adesc0[i], (s / akps) * M * asw + (s % akps) * 32);
                LLVMValueRef bdesc;
                if (!trans_b) /* [N][K]: K panel s/kps, rows n0.., 32 bytes per k step */
                    bdesc = desc_at(C, bdesc0, (s / bkps) * N * bsw + n0 * bsw + (s % bkps) * 32);
                else /* [K][N]: panel n0 / (sw / e) (next panels LBO apart), rows 16s.. */
                    bdesc = desc_at(C, bdesc0, (n0 / (bsw / e)) * K * bsw + s * 16 * bsw);
                for (int j = 0; j < nI / 2; j++) {
                    int k0 = 2 * i + ((j >> 1) & 1), k1 = 2 * (n0 / 8 + (j >> 2)) + (j & 1);
                    reg[j] = cg_reg_of(&li, (int[]){k0, k1});
                    d[j] = acc->v[reg[j]];
                }
                wg_mma(C, ta, nI, d, adesc, p->areg ? afr[i * steps + s] : NULL, bdesc, trans_a, trans_b,
                       zero && s == 0);
                for (int j = 0; j < nI / 2; j++) acc->v[reg[j]] = d[j];
            }
    cg_inline_asm(C, C->vd, "wgmma.commit_group.sync.aligned;", "~{memory}", NULL, 0, true);
    C->wg_commits++;
    ir_inst *loop = in->parent ? in->parent->parent : NULL;
    int how = wg_wait(C, loop, in);
    if (how == WG_CARRY) return; /* the next iteration waits (cg_pipe_inst) */
    if (how == WG_USE) { /* its first reader waits (cg_pipe_inst); dots_flat bounds the count */
        C->wg_pending[C->num_wg_pending].v = res;
        C->wg_pending[C->num_wg_pending].base = promote ? in->operands[2] : NULL; /* f8: added after the wait */
        C->wg_pending[C->num_wg_pending].group = C->wg_commits - 1;
        C->num_wg_pending++;
        return;
    }
    wg_pass(C, how == WG_KEEP1 ? "wgmma.wait_group.sync.aligned 1;" : "wgmma.wait_group.sync.aligned 0;", acc->v,
            nacc);
    for (int r = 0; promote && r < nacc; r++) acc->v[r] = LLVMBuildFAdd(b, acc0[r], acc->v[r], ""); /* WG_NOW */
}


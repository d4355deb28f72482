/* cg_cluster.c — a kernel's thread-block clusters (@cluster(N): programs
 * N i .. N i + N - 1 along axis 0) and cluster_sum, which sums a value
 * over the cluster's programs through distributed shared memory.
 *
 * Split-K is what it is for: each program of a cluster computes a partial
 * accumulator over its slice of K, and the last program (rank N - 1) adds
 * the others' and stores the tile. Through global memory that exchange is a
 * store, a fence, an atomic and a load on the critical path (matmul_splitk:
 * about 3 us at 64x4096x4096 on an H200); within a cluster it is stores
 * into the last program's shared memory and two cluster barriers.
 *
 * Each cluster_sum op gets a receive buffer in the last program's shared
 * memory (passes_cluster_sum_bytes), (N - 1) slots of (registers per
 * thread, in groups of 4) x (threads) x 16 bytes, group-major: group g of
 * thread t in slot r at ((r * groups + g) * threads + t) * 16, so a warp's
 * 32 16-byte stores of one group are 512 consecutive bytes
 * (st.shared::cluster.v4: a quarter of the stores one per register would
 * take). The programs run the same code, so thread t's register k holds
 * the same element in every program of the cluster whatever the layout is
 * (an accumulator's, replicated or not): the exchange never needs to know
 * it.
 *
 *   at entry:       the cluster meets (barrier.cluster arrive.release /
 *                   wait.acquire): every program is running before any
 *                   writes into another's memory;
 *   ranks 0 .. N-2: st.shared::cluster of every register into its slot of
 *                   the last program's buffer (mapa), then the cluster
 *                   meets: the release orders the stores before it;
 *   rank N - 1:     the cluster meets (acquire), then sum = slot 0 +
 *                   slot 1 + ... + its own, in that order (the
 *                   interpreter's: ((x0 + x1) + x2) + x3).
 *
 * The cluster barrier, not an mbarrier, orders the exchange: it also keeps
 * the last program alive while the others write into it, which
 * compute-sanitizer's racecheck checks (with an mbarrier it reported every
 * remote store as a write into a block that "might have already exited").
 * The threads that run the op are the consumers (num_warps warps): a
 * warp-specialized loop's producer warpgroup has exited by then, and
 * exited threads count as arrived.
 */
#include "cg_internal.h"

static void collect(cg_ctx *C, ir_region *r) {
    for (ir_inst *in = r ? r->first : NULL; in; in = in->next) {
        if (in->op == IR_CLUSTER_SUM && C->ncsum < CG_MAX_CLUSTER_SUMS) C->csum_ops[C->ncsum++] = in;
        else if (in->op == IR_CLUSTER_SUM)
            cg_error(C, in->loc, "more than %d cluster_sum in one kernel", CG_MAX_CLUSTER_SUMS);
        for (int k = 0; k < in->num_regions; k++) collect(C, in->regions[k]);
    }
}

static LLVMValueRef shared32(cg_ctx *C, LLVMValueRef p) {
    return LLVMBuildTrunc(C->b, LLVMBuildPtrToInt(C->b, p, C->i64, ""), C->i32, "");
}

void cg_cluster_entry(cg_ctx *C) {
    C->ncsum = 0;
    int n = C->f->cluster;
    if (n < 2 || C->failed) return;
    collect(C, C->f->body);
    if (!tgt_has(C->tgt, TGT_CAP_CLUSTER)) {
        cg_error(C, C->ncsum ? C->csum_ops[0]->loc : C->f->loc,
                 "@cluster needs thread-block clusters, which %s does not have (sm_90a has them)", C->tgt->arch);
        C->failed = true;
        return;
    }
    for (int j = 0; j < C->ncsum; j++) {
        ir_inst *in = C->csum_ops[j];
        int64_t bytes = passes_cluster_sum_bytes(C->f, C->lt, in);
        if (C->smem_reserved + bytes + C->smem_static > C->tgt->smem_optin_max) {
            char ty[96];
            ir_type_str(in->operands[0]->type, ty, sizeof ty);
            cg_error(C, in->loc,
                     "cluster_sum of %s over %d programs needs %lld bytes of the last program's shared memory; a block "
                     "has at most %d on %s (fewer programs per cluster, or a smaller block)",
                     ty, n, (long long)bytes, C->tgt->smem_optin_max, C->tgt->arch);
            C->failed = true;
            return;
        }
        C->csum_buf[j] = cg_smem_reserve(C, in->loc, bytes, 16);
    }
    cg_cluster_sync(C);
    if (C->remarks & CG_REMARKS)
        for (int j = 0; j < C->ncsum; j++)
            diag_remark(C->diag, C->csum_ops[j]->loc,
                        "cluster_sum in %s: through distributed shared memory, clusters of %d programs along axis 0 "
                        "(%lld bytes of the last program's shared memory)",
                        C->entry ? C->entry : C->f->name, n,
                        (long long)passes_cluster_sum_bytes(C->f, C->lt, C->csum_ops[j]));
}

bool cg_cluster_sum(cg_ctx *C, ir_inst *in) {
    if (in->op != IR_CLUSTER_SUM) return false;
    int j = 0;
    while (j < C->ncsum && C->csum_ops[j] != in) j++;
    ir_value *x = in->operands[0];
    cg_val v = cg_get(C, x, x->type.rank ? cg_lay(C, x) : NULL);
    cg_val out = cg_new_val(C, v.n, v.lay);
    if (j == C->ncsum || C->failed) { /* reported at entry (no clusters on this target) */
        for (int k = 0; k < v.n; k++) out.v[k] = v.v[k];
        cg_set(C, in->results[0], out);
        return true;
    }
    LLVMBuilderRef b = C->b;
    int n = C->f->cluster, threads = C->num_warps * 32, ng = (v.n + 3) / 4;
    LLVMValueRef rank = cg_cluster_sreg(C, "cluster_ctarank");
    LLVMValueRef last = cg_const_i32(C, n - 1);
    LLVMValueRef buf = shared32(C, C->csum_buf[j]);
    /* registers in groups of 4, one 16-byte access each: group g of slot r
     * at ((r * ng + g) * threads + tid) * 16 */
    LLVMValueRef tid16 = LLVMBuildMul(b, C->tid, cg_const_i32(C, 16), "");
    LLVMBasicBlockRef recv, send, join = cg_block(C, "csum.join");
    cg_branch(C, LLVMBuildICmp(b, LLVMIntEQ, rank, last, ""), "csum.recv", &recv, "csum.send", &send);

    LLVMPositionBuilderAtEnd(b, send);
    {
        LLVMValueRef rbuf = cg_inline_asm(C, C->i32, "mapa.shared::cluster.u32 $0, $1, $2;", "=r,r,r",
                                          (LLVMValueRef[]){buf, last}, 2, false);
        LLVMValueRef base = LLVMBuildAdd(b, rbuf, tid16, "");
        base = LLVMBuildAdd(b, base, LLVMBuildMul(b, rank, cg_const_i32(C, ng * threads * 16), ""), "");
        for (int g = 0; g < ng; g++) {
            LLVMValueRef a = LLVMBuildAdd(b, base, cg_const_i32(C, g * threads * 16), "");
            if (4 * g + 4 <= v.n) {
                cg_inline_asm(C, C->vd, "st.shared::cluster.v4.f32 [$0], {$1, $2, $3, $4};", "r,f,f,f,f,~{memory}",
                              (LLVMValueRef[]){a, v.v[4 * g], v.v[4 * g + 1], v.v[4 * g + 2], v.v[4 * g + 3]}, 5, true);
                continue;
            }
            for (int k = 4 * g; k < v.n; k++)
                cg_inline_asm(C, C->vd, "st.shared::cluster.f32 [$0], $1;", "r,f,~{memory}",
                              (LLVMValueRef[]){LLVMBuildAdd(b, a, cg_const_i32(C, 4 * (k - 4 * g)), ""), v.v[k]}, 2,
                              true);
        }
        cg_cluster_sync(C);
        LLVMBuildBr(b, join);
    }
    LLVMBasicBlockRef send_end = LLVMGetInsertBlock(b);

    LLVMPositionBuilderAtEnd(b, recv);
    LLVMValueRef *sum = ARENA_ARRAY(C->a, LLVMValueRef, 4 * ng);
    if (!sum) { C->failed = true; return true; }
    cg_cluster_sync(C);
    LLVMValueRef base = LLVMBuildAdd(b, buf, tid16, "");
    LLVMTypeRef f4 = LLVMStructTypeInContext(C->llc, (LLVMTypeRef[]){C->f32, C->f32, C->f32, C->f32}, 4, 0);
    for (int k = 0; k < v.n; k++) sum[k] = NULL;
    for (int r = 0; r < n - 1; r++)
        for (int g = 0; g < ng; g++) {
            LLVMValueRef a = LLVMBuildAdd(b, base, cg_const_i32(C, (r * ng + g) * threads * 16), "");
            LLVMValueRef w[4];
            if (4 * g + 4 <= v.n) {
                LLVMValueRef q = cg_inline_asm(C, f4, "ld.shared.v4.f32 {$0, $1, $2, $3}, [$4];", "=f,=f,=f,=f,r,~{memory}",
                                               (LLVMValueRef[]){a}, 1, true);
                for (int i = 0; i < 4; i++) w[i] = LLVMBuildExtractValue(b, q, (unsigned)i, "");
            } else {
                for (int k = 4 * g; k < v.n; k++)
                    w[k - 4 * g] = cg_inline_asm(C, C->f32, "ld.shared.f32 $0, [$1];", "=f,r,~{memory}",
                                                 (LLVMValueRef[]){LLVMBuildAdd(b, a, cg_const_i32(C, 4 * (k - 4 * g)), "")},
                                                 1, true);
            }
            for (int k = 4 * g; k < v.n && k < 4 * g + 4; k++)
                sum[k] = sum[k] ? LLVMBuildFAdd(b, sum[k], w[k - 4 * g], "") : w[k - 4 * g];
        }
    for (int k = 0; k < v.n; k++) sum[k] = LLVMBuildFAdd(b, sum[k], v.v[k], "");
    LLVMBuildBr(b, join);
    LLVMBasicBlockRef recv_end = LLVMGetInsertBlock(b);

    LLVMPositionBuilderAtEnd(b, join);
    for (int k = 0; k < v.n; k++) {
        LLVMValueRef phi = LLVMBuildPhi(b, C->f32, "csum");
        LLVMAddIncoming(phi, (LLVMValueRef[]){sum[k], v.v[k]}, (LLVMBasicBlockRef[]){recv_end, send_end}, 2);
        out.v[k] = phi;
    }
    cg_set(C, in->results[0], out);
    return true;
}

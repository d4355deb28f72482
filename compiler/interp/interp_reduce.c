/* interp_reduce.c — reductions, scans, sort and topk along one axis.
 *
 * A block of shape [outer..., n, inner...] is viewed as outer x n x inner;
 * every op works on the `outer * inner` lines of n elements, each in index
 * order (reverse order for reverse scans), so results are deterministic:
 *
 *   REDUCE         acc = x[0] converted to the result dtype (which may be
 *                  wider: sums of narrow types accumulate in it), then
 *                  acc = acc OP x[k] for k = 1..n-1 with the elementwise
 *                  semantics of eval.c (ints wrap; MAX/MIN are MAXIMUM /
 *                  MINIMUM, so NaNs lose; XOR_SUM is XOR).
 *   ARGREDUCE      the first index of the largest (smallest) element; NaNs
 *                  are ignored, like MAXIMUM/MINIMUM ignore them, so
 *                  x[argmax(x)] == max(x); a line of only NaNs gives 0.
 *                  -0.0 and +0.0 tie (first index wins).
 *   REDUCE_REGION  acc = x[0]; acc = region(acc, x[k]) for k = 1..n-1.
 *   SCAN           inclusive: out[k] = out[k-1] OP x[k] (SUM/PROD), in the
 *                  result dtype; IRF_REVERSE runs from the last element.
 *   SCAN_REGION    out[first] = x[first]; out[k] = region(out[prev], x[k]).
 *   SORT           stable; ascending unless IRF_DESCENDING. NaN sorts as
 *                  larger than every number (last ascending, first
 *                  descending); -0.0 and +0.0 are equal (stable order kept).
 *   TOPK           the k largest in descending order with the same order as
 *                  SORT descending (NaN largest; ties -> lower index first);
 *                  results: values and their i32 indices along the axis.
 */
#include <math.h>
#include <stdlib.h>

#include "interp_impl.h"

/* Where line l (of outer * inner, in the order of a reduction's results)
 * starts in a block whose axis has n elements: line[k * inner] is its k-th. */
static int64_t line_at(int64_t l, int64_t n, int64_t inner) { return l / inner * n * inner + l % inner; }

static bool bad_axis(interp *I, ir_inst *in, ir_type t) {
    if (in->axis >= 0 && in->axis < t.rank) return false;
    interp_error(I, in, "%s axis %d out of range for a rank-%d block", ir_op_table[in->op].name, in->axis, t.rank);
    return true;
}

static interp_sig exec_reduce(interp *I, ir_inst *in) {
    ir_value *x = in->operands[0], *r = in->results[0];
    if (bad_axis(I, in, x->type)) return SIG_ERROR;
    ir_op op = ir_reduce_combine(in->kind);
    if (op == IR_OP_COUNT) {
        interp_error(I, in, "reduce kind %d is not a plain reduction", in->kind);
        return SIG_ERROR;
    }
    blk_dtype from = interp_dtype(x), to = interp_dtype(r);
    int64_t outer, n, inner;
    interp_axis_split(x->type, in->axis, &outer, &n, &inner);
    ir_scalar_val *src = interp_val(I, x), *out = interp_val(I, r);
    for (int64_t l = 0; l < outer * inner; l++) {
        const ir_scalar_val *line = src + line_at(l, n, inner);
        ir_scalar_val acc = eval_cast(from, to, line[0]);
        for (int64_t k = 1; k < n; k++)
            acc = eval_binary(op, 0, to, acc, eval_cast(from, to, line[k * inner]));
        out[l] = acc;
    }
    return SIG_NEXT;
}

static bool is_nan(blk_dtype t, ir_scalar_val v) { return dtype_is_float(t) && isnan(v.f); }

static interp_sig exec_argreduce(interp *I, ir_inst *in) {
    ir_value *x = in->operands[0], *r = in->results[0];
    if (bad_axis(I, in, x->type)) return SIG_ERROR;
    blk_dtype t = interp_dtype(x);
    int better = in->kind == IR_RED_ARGMIN ? IR_CMP_LT : IR_CMP_GT;
    int64_t outer, n, inner;
    interp_axis_split(x->type, in->axis, &outer, &n, &inner);
    ir_scalar_val *src = interp_val(I, x), *out = interp_val(I, r);
    for (int64_t l = 0; l < outer * inner; l++) {
        const ir_scalar_val *line = src + line_at(l, n, inner);
        int64_t best = -1;
        for (int64_t k = 0; k < n; k++) {
            if (is_nan(t, line[k * inner])) continue;
            if (best < 0 || eval_binary(IR_CMP, better, t, line[k * inner], line[best * inner]).i) best = k;
        }
        ir_scalar_val v;
        v.i = best < 0 ? 0 : best;
        out[l] = eval_normalize(interp_dtype(r), v);
    }
    return SIG_NEXT;
}

/* Apply a combine region to (a, b); false after an error. */
static bool call_combine(interp *I, ir_inst *in, ir_scalar_val a, ir_scalar_val b, ir_scalar_val *result) {
    ir_region *reg = in->regions[0];
    interp_val(I, reg->args.data[0])[0] = a;
    interp_val(I, reg->args.data[1])[0] = b;
    ir_inst *t;
    interp_sig s = interp_run_region(I, reg, &t);
    if (s == SIG_ERROR) return false;
    if (s != SIG_YIELD || !t || t->num_operands < 1) {
        interp_error(I, in, "%s combine region must end in a yield of one value", ir_op_table[in->op].name);
        return false;
    }
    *result = interp_val(I, t->operands[0])[0];
    return true;
}

static bool region_ok(interp *I, ir_inst *in) {
    if (in->num_regions >= 1 && in->regions[0]->args.len == 2) return true;
    interp_error(I, in, "%s needs a combine region of two arguments", ir_op_table[in->op].name);
    return false;
}

static interp_sig exec_reduce_region(interp *I, ir_inst *in) {
    ir_value *x = in->operands[0], *r = in->results[0];
    if (bad_axis(I, in, x->type) || !region_ok(I, in)) return SIG_ERROR;
    int64_t outer, n, inner;
    interp_axis_split(x->type, in->axis, &outer, &n, &inner);
    ir_scalar_val *src = interp_val(I, x), *out = interp_val(I, r);
    for (int64_t l = 0; l < outer * inner; l++) {
        const ir_scalar_val *line = src + line_at(l, n, inner);
        ir_scalar_val acc = line[0];
        for (int64_t k = 1; k < n; k++)
            if (!call_combine(I, in, acc, line[k * inner], &acc)) return SIG_ERROR;
        out[l] = acc;
    }
    return SIG_NEXT;
}

static interp_sig exec_scan(interp *I, ir_inst *in) {
    ir_value *x = in->operands[0], *r = in->results[0];
    bool with_region = in->op == IR_SCAN_REGION;
    if (bad_axis(I, in, x->type) || (with_region && !region_ok(I, in))) return SIG_ERROR;
    ir_op op = IR_OP_COUNT;
    if (!with_region) {
        if (in->kind != IR_RED_SUM && in->kind != IR_RED_PROD) {
            interp_error(I, in, "scan kind %d is not sum or prod", in->kind);
            return SIG_ERROR;
        }
        op = ir_reduce_combine(in->kind);
    }
    blk_dtype from = interp_dtype(x), to = interp_dtype(r);
    bool reverse = (in->flags & IRF_REVERSE) != 0;
    int64_t outer, n, inner;
    interp_axis_split(x->type, in->axis, &outer, &n, &inner);
    ir_scalar_val *src = interp_val(I, x), *dst = interp_val(I, r);
    for (int64_t l = 0; l < outer * inner; l++) {
        const ir_scalar_val *line = src + line_at(l, n, inner);
        ir_scalar_val *out = dst + line_at(l, n, inner);
        ir_scalar_val acc;
        acc.u = 0;
        for (int64_t step = 0; step < n; step++) {
            int64_t k = reverse ? n - 1 - step : step;
            ir_scalar_val v = with_region ? line[k * inner] : eval_cast(from, to, line[k * inner]);
            if (step == 0) acc = v;
            else if (with_region) {
                if (!call_combine(I, in, acc, v, &acc)) return SIG_ERROR;
            } else {
                acc = eval_binary(op, 0, to, acc, v);
            }
            out[k * inner] = acc;
        }
    }
    return SIG_NEXT;
}

/* Total order for sorting: NaN above everything, -0 == +0. */
static int key_cmp(blk_dtype t, ir_scalar_val a, ir_scalar_val b) {
    if (dtype_is_float(t)) {
        int an = isnan(a.f) != 0, bn = isnan(b.f) != 0;
        if (an || bn) return an - bn;
        return a.f < b.f ? -1 : a.f > b.f ? 1 : 0;
    }
    if (dtype_is_signed(t) || t == DT_BOOL) return a.i < b.i ? -1 : a.i > b.i ? 1 : 0;
    return a.u < b.u ? -1 : a.u > b.u ? 1 : 0;
}

/* Stable bottom-up merge sort of idx[0..n) (positions in a line read with
 * stride `inner`), using tmp[0..n) as scratch. */
static void sort_line(blk_dtype t, const ir_scalar_val *line, int64_t inner, bool descending, int32_t *idx,
                      int32_t *tmp, int64_t n) {
    for (int64_t k = 0; k < n; k++) idx[k] = (int32_t)k;
    for (int64_t width = 1; width < n; width *= 2) {
        for (int64_t lo = 0; lo < n; lo += 2 * width) {
            int64_t mid = lo + width < n ? lo + width : n;
            int64_t hi = lo + 2 * width < n ? lo + 2 * width : n;
            int64_t a = lo, b = mid, o = lo;
            while (a < mid && b < hi) {
                int c = key_cmp(t, line[idx[b] * inner], line[idx[a] * inner]);
                bool take_b = descending ? c > 0 : c < 0; /* strictly before: ties keep a */
                tmp[o++] = take_b ? idx[b++] : idx[a++];
            }
            while (a < mid) tmp[o++] = idx[a++];
            while (b < hi) tmp[o++] = idx[b++];
        }
        for (int64_t k = 0; k < n; k++) idx[k] = tmp[k];
    }
}

static interp_sig exec_sort(interp *I, ir_inst *in) {
    ir_value *x = in->operands[0];
    if (bad_axis(I, in, x->type)) return SIG_ERROR;
    bool topk = in->op == IR_TOPK;
    if (topk && in->num_results < 2) {
        interp_error(I, in, "topk must have two results");
        return SIG_ERROR;
    }
    blk_dtype t = interp_dtype(x);
    bool descending = topk || (in->flags & IRF_DESCENDING);
    int64_t outer, n, inner;
    interp_axis_split(x->type, in->axis, &outer, &n, &inner);
    int64_t k = topk ? in->ival : n;
    if (k < 0 || k > n || (topk && ir_numel(in->results[0]->type) != outer * k * inner)) {
        interp_error(I, in, "topk: k = %lld does not fit an axis of %lld elements and the result shape",
                     (long long)k, (long long)n);
        return SIG_ERROR;
    }
    ir_scalar_val *src = interp_val(I, x), *vals = interp_val(I, in->results[0]);
    ir_scalar_val *inds = topk ? interp_val(I, in->results[1]) : NULL;
    blk_dtype it = topk ? interp_dtype(in->results[1]) : DT_I32;
    int32_t *idx = I->scratch_idx, *tmp = I->scratch_idx + n;
    for (int64_t l = 0; l < outer * inner; l++) {
        const ir_scalar_val *line = src + line_at(l, n, inner);
        sort_line(t, line, inner, descending, idx, tmp, n);
        for (int64_t q = 0; q < k; q++) {
            int64_t pos = line_at(l, k, inner) + q * inner;
            vals[pos] = line[(int64_t)idx[q] * inner];
            if (inds) {
                ir_scalar_val v;
                v.i = idx[q];
                inds[pos] = eval_normalize(it, v);
            }
        }
    }
    return SIG_NEXT;
}

interp_sig interp_reduce(interp *I, ir_inst *in) {
    if (in->num_operands < 1 || in->num_results < 1) {
        interp_error(I, in, "%s without operand or result in the IR", ir_op_table[in->op].name);
        return SIG_ERROR;
    }
    switch (in->op) {
    case IR_REDUCE: return exec_reduce(I, in);
    case IR_ARGREDUCE: return exec_argreduce(I, in);
    case IR_REDUCE_REGION: return exec_reduce_region(I, in);
    case IR_SCAN: case IR_SCAN_REGION: return exec_scan(I, in);
    default: return exec_sort(I, in);
    }
}

/* ---- cluster_sum: across the programs of a cluster ---- */

/* Programs run one after another, x fastest, so a cluster's programs (N
 * consecutive x) run in rank order with no other program between them:
 * rank 0 starts the sum, each later rank adds its x in f32 (the GPU's
 * order: ((x0 + x1) + x2) + ...), and rank N - 1 gets the sum. */
interp_sig interp_cluster_sum_op(interp *I, ir_inst *in) {
    ir_value *v = in->operands[0];
    int n_cl = I->func->cluster > 1 ? I->func->cluster : 1;
    int rank = (int)(I->pid[0] % (unsigned)n_cl);
    unsigned cl[3] = {I->pid[0] / (unsigned)n_cl, I->pid[1], I->pid[2]};
    int64_t n = ir_numel(v->type);
    const ir_scalar_val *x = interp_val(I, v);
    ir_scalar_val *r = interp_val(I, in->results[0]);
    interp_cluster_sum *e = NULL;
    for (int k = 0; k < I->ncsum && !e; k++)
        if (I->csum[k].in == in) e = &I->csum[k];
    if (!e) {
        interp_cluster_sum *grown = blk_realloc(I->csum, sizeof *grown * (size_t)(I->ncsum + 1));
        float *acc = blk_malloc(sizeof(float) * (size_t)(n > 0 ? n : 1));
        if (!grown || !acc) {
            free(acc);
            if (grown) I->csum = grown;
            interp_error(I, in, "out of memory for cluster_sum");
            return SIG_ERROR;
        }
        I->csum = grown;
        e = &I->csum[I->ncsum++];
        *e = (interp_cluster_sum){.in = in, .arrived = n_cl, .n = n, .acc = acc};
    }
    bool same = e->arrived < n_cl && e->cluster[0] == cl[0] && e->cluster[1] == cl[1] && e->cluster[2] == cl[2];
    if (rank == 0 ? e->arrived < n_cl : !same || e->arrived != rank) {
        interp_error(I, in, "cluster_sum reached twice by a program, or not by every program of its cluster "
                     "(every program of the cluster must reach it exactly once)");
        return SIG_ERROR;
    }
    if (rank == 0) {
        e->cluster[0] = cl[0], e->cluster[1] = cl[1], e->cluster[2] = cl[2];
        e->arrived = 0;
        for (int64_t k = 0; k < n; k++) e->acc[k] = (float)x[k].f;
    } else {
        for (int64_t k = 0; k < n; k++) e->acc[k] = e->acc[k] + (float)x[k].f;
    }
    e->arrived++;
    for (int64_t k = 0; k < n; k++) r[k].f = e->arrived == n_cl ? (double)e->acc[k] : x[k].f;
    return SIG_NEXT;
}

bool interp_cluster_done(interp *I, bool done) {
    bool ok = true;
    for (int k = 0; k < I->ncsum; k++) {
        interp_cluster_sum *e = &I->csum[k];
        if (!done && e->arrived < I->func->cluster) {
            interp_error(I, e->in, "cluster_sum not reached by every program of cluster %u (programs %u to %u along "
                         "axis 0): %d of %d reached it", e->cluster[0], e->cluster[0] * (unsigned)I->func->cluster,
                         e->cluster[0] * (unsigned)I->func->cluster + (unsigned)I->func->cluster - 1, e->arrived,
                         I->func->cluster);
            ok = false;
            break;
        }
        if (done) free(e->acc);
    }
    if (done) {
        free(I->csum);
        I->csum = NULL;
        I->ncsum = 0;
    }
    return ok;
}

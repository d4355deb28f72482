/* interp_elem.c — constants, grid queries, shape manipulation, elementwise
 * ops (through eval.c, element by element) and random numbers.
 *
 * Blocks are row-major. Elementwise operands have the result's shape after
 * the verifier; a scalar operand of a block op (never produced by sema) is
 * read as if splatted rather than read out of bounds.
 */
#include <string.h>

#include "interp_impl.h"

/* Row-major strides of t, in elements. */
static void row_major_strides(ir_type t, int64_t *strides) {
    int64_t s = 1;
    for (int d = t.rank - 1; d >= 0; d--) {
        strides[d] = s;
        s *= t.shape[d];
    }
}

/* dst (shape `shape`, row-major) <- src at src_strides per dimension. */
static void gather_strided(ir_scalar_val *dst, const ir_scalar_val *src, int rank, const int32_t *shape,
                           const int64_t *src_strides) {
    int64_t idx[IR_MAX_RANK] = {0};
    int64_t n = 1;
    for (int d = 0; d < rank; d++) n *= shape[d];
    int64_t off = 0;
    for (int64_t i = 0; i < n; i++) {
        dst[i] = src[off];
        for (int d = rank - 1; d >= 0; d--) { /* odometer increment */
            idx[d]++;
            off += src_strides[d];
            if (idx[d] < shape[d]) break;
            off -= src_strides[d] * idx[d];
            idx[d] = 0;
        }
    }
}

static void splat(ir_scalar_val *dst, int64_t n, ir_scalar_val v) {
    for (int64_t i = 0; i < n; i++) dst[i] = v;
}

static interp_sig exec_const(interp *I, ir_inst *in) {
    ir_value *r = in->results[0];
    blk_dtype t = interp_dtype(r);
    ir_scalar_val v;
    if (dtype_is_float(t)) v.f = in->fval;
    else v.i = in->ival;
    splat(interp_val(I, r), ir_numel(r->type), eval_normalize(t, v));
    return SIG_NEXT;
}

static interp_sig exec_grid_query(interp *I, ir_inst *in) {
    if (in->axis < 0 || in->axis > 2) {
        interp_error(I, in, "%s axis %d is not 0, 1 or 2", ir_op_table[in->op].name, in->axis);
        return SIG_ERROR;
    }
    ir_scalar_val v;
    v.i = in->op == IR_PROGRAM_ID ? I->pid[in->axis] : I->grid[in->axis];
    ir_value *r = in->results[0];
    splat(interp_val(I, r), ir_numel(r->type), eval_normalize(interp_dtype(r), v));
    return SIG_NEXT;
}

static interp_sig exec_arange(interp *I, ir_inst *in) {
    ir_value *r = in->results[0];
    ir_scalar_val *out = interp_val(I, r);
    int64_t n = ir_numel(r->type);
    for (int64_t i = 0; i < n; i++) {
        ir_scalar_val v;
        v.i = in->ival + i;
        out[i] = eval_normalize(interp_dtype(r), v);
    }
    return SIG_NEXT;
}

/* BROADCAST (and SPLAT): dims of size 1 (or missing on the left) repeat. */
static interp_sig exec_broadcast(interp *I, ir_inst *in) {
    ir_value *x = in->operands[0], *r = in->results[0];
    ir_type rt = r->type, xt = x->type;
    int64_t xs[IR_MAX_RANK], strides[IR_MAX_RANK];
    row_major_strides(xt, xs);
    int lead = rt.rank - xt.rank; /* numpy: align shapes on the right */
    if (lead < 0) {
        interp_error(I, in, "broadcast to a lower rank in the IR");
        return SIG_ERROR;
    }
    for (int d = 0; d < rt.rank; d++) {
        int xd = d - lead;
        strides[d] = xd < 0 || xt.shape[xd] == 1 ? 0 : xs[xd];
    }
    gather_strided(interp_val(I, r), interp_val(I, x), rt.rank, rt.shape, strides);
    return SIG_NEXT;
}

static interp_sig exec_copy(interp *I, ir_inst *in) {
    ir_value *x = in->operands[0], *r = in->results[0];
    int64_t n = ir_numel(r->type), m = ir_numel(x->type);
    if (n != m) {
        interp_error(I, in, "%s changes the number of elements (%lld to %lld)", ir_op_table[in->op].name,
                     (long long)m, (long long)n);
        return SIG_ERROR;
    }
    memcpy(interp_val(I, r), interp_val(I, x), sizeof(ir_scalar_val) * (size_t)n);
    return SIG_NEXT;
}

static interp_sig exec_permute(interp *I, ir_inst *in) {
    ir_value *x = in->operands[0], *r = in->results[0];
    int64_t xs[IR_MAX_RANK], strides[IR_MAX_RANK];
    row_major_strides(x->type, xs);
    for (int d = 0; d < r->type.rank; d++) {
        int p = in->perm[d];
        if (p < 0 || p >= x->type.rank) {
            interp_error(I, in, "permute: bad dimension %d in the IR", p);
            return SIG_ERROR;
        }
        strides[d] = xs[p];
    }
    gather_strided(interp_val(I, r), interp_val(I, x), r->type.rank, r->type.shape, strides);
    return SIG_NEXT;
}

static interp_sig exec_join(interp *I, ir_inst *in) {
    ir_scalar_val *a = interp_val(I, in->operands[0]), *b = interp_val(I, in->operands[1]);
    ir_scalar_val *out = interp_val(I, in->results[0]);
    int64_t n = ir_numel(in->operands[0]->type);
    for (int64_t i = 0; i < n; i++) {
        out[2 * i] = a[i];
        out[2 * i + 1] = b[i];
    }
    return SIG_NEXT;
}

static interp_sig exec_split(interp *I, ir_inst *in) {
    if (in->num_results != 2) {
        interp_error(I, in, "split must have two results");
        return SIG_ERROR;
    }
    ir_scalar_val *x = interp_val(I, in->operands[0]);
    ir_scalar_val *a = interp_val(I, in->results[0]), *b = interp_val(I, in->results[1]);
    int64_t n = ir_numel(in->results[0]->type);
    for (int64_t i = 0; i < n; i++) {
        a[i] = x[2 * i];
        b[i] = x[2 * i + 1];
    }
    return SIG_NEXT;
}

static interp_sig exec_cat(interp *I, ir_inst *in) {
    ir_value *a = in->operands[0], *b = in->operands[1];
    int64_t outer, na, nb, inner;
    interp_axis_split(a->type, in->axis, &outer, &na, &inner);
    interp_axis_split(b->type, in->axis, &outer, &nb, &inner);
    ir_scalar_val *pa = interp_val(I, a), *pb = interp_val(I, b), *out = interp_val(I, in->results[0]);
    if (outer * (na + nb) * inner != ir_numel(in->results[0]->type)) {
        interp_error(I, in, "cat: result shape does not match the operands in the IR");
        return SIG_ERROR;
    }
    for (int64_t o = 0; o < outer; o++) {
        memcpy(out, pa + o * na * inner, sizeof *out * (size_t)(na * inner));
        out += na * inner;
        memcpy(out, pb + o * nb * inner, sizeof *out * (size_t)(nb * inner));
        out += nb * inner;
    }
    return SIG_NEXT;
}

/* ---- elementwise ---- */

/* Element i of operand k: scalars repeat across a block result. */
#define ELT(p, n, i) ((p)[(n) == 1 ? 0 : (i)])

static interp_sig exec_elementwise(interp *I, ir_inst *in) {
    ir_value *r = in->results[0];
    ir_scalar_val *out = interp_val(I, r);
    int64_t n = ir_numel(r->type);
    ir_scalar_val *x = interp_val(I, in->operands[0]);
    int64_t nx = ir_numel(in->operands[0]->type);
    blk_dtype t = interp_dtype(in->operands[0]);
    int nops = ir_op_table[in->op].num_operands;
    if (in->num_operands != nops) {
        interp_error(I, in, "%s has %d operands in the IR, not %d", ir_op_table[in->op].name, in->num_operands, nops);
        return SIG_ERROR;
    }
    if (in->op == IR_CAST) {
        blk_dtype to = interp_dtype(r);
        for (int64_t i = 0; i < n; i++) out[i] = eval_cast(t, to, ELT(x, nx, i));
        return SIG_NEXT;
    }
    if (in->op == IR_BITCAST) {
        blk_dtype to = interp_dtype(r);
        for (int64_t i = 0; i < n; i++) out[i] = eval_bitcast(t, to, ELT(x, nx, i));
        return SIG_NEXT;
    }
    if (nops == 1) {
        for (int64_t i = 0; i < n; i++) out[i] = eval_unary(in->op, t, ELT(x, nx, i));
        return SIG_NEXT;
    }
    ir_scalar_val *y = interp_val(I, in->operands[1]);
    int64_t ny = ir_numel(in->operands[1]->type);
    if (in->op == IR_PTRADD) {
        /* eval_ptradd inlined (a hot path): ptr + offset * sizeof(pointee),
         * the offset's 64-bit pattern being already sign/zero-extended. */
        uint64_t size = (uint64_t)dtype_bytes(in->operands[0]->type.pointee);
        for (int64_t i = 0; i < n; i++) out[i].u = ELT(x, nx, i).u + ELT(y, ny, i).u * size;
        return SIG_NEXT;
    }
    if (nops == 2) {
        /* The common f32 arithmetic inline: same results as eval_binary. */
        if (t == DT_F32 && nx == n && ny == n && (in->op == IR_ADD || in->op == IR_SUB || in->op == IR_MUL)) {
            for (int64_t i = 0; i < n; i++) {
                float a = (float)x[i].f, b = (float)y[i].f;
                out[i].f = in->op == IR_ADD ? a + b : in->op == IR_SUB ? a - b : a * b;
            }
            return SIG_NEXT;
        }
        for (int64_t i = 0; i < n; i++) out[i] = eval_binary(in->op, in->kind, t, ELT(x, nx, i), ELT(y, ny, i));
        return SIG_NEXT;
    }
    ir_scalar_val *z = interp_val(I, in->operands[2]);
    int64_t nz = ir_numel(in->operands[2]->type);
    if (in->op == IR_SELECT) {
        for (int64_t i = 0; i < n; i++) out[i] = ELT(x, nx, i).i ? ELT(y, ny, i) : ELT(z, nz, i);
        return SIG_NEXT;
    }
    t = interp_dtype(r); /* FMA */
    for (int64_t i = 0; i < n; i++) out[i] = eval_fma(t, ELT(x, nx, i), ELT(y, ny, i), ELT(z, nz, i));
    return SIG_NEXT;
}

/* RAND/RANDN/RANDINT: see compiler/ir/philox.c for the exact definition.
 * The seed is the 64-bit value of the seed operand (sign-extended if it is
 * a signed type); the counter is the low 32 bits of the offset. */
static interp_sig exec_random(interp *I, ir_inst *in) {
    ir_value *r = in->results[0];
    ir_scalar_val *seed = interp_val(I, in->operands[0]), *off = interp_val(I, in->operands[1]);
    int64_t ns = ir_numel(in->operands[0]->type), no = ir_numel(in->operands[1]->type);
    ir_scalar_val *out = interp_val(I, r);
    int64_t n = ir_numel(r->type);
    blk_dtype t = interp_dtype(r);
    for (int64_t i = 0; i < n; i++) {
        uint64_t s = ELT(seed, ns, i).u;
        uint32_t o = (uint32_t)ELT(off, no, i).u;
        ir_scalar_val v;
        if (in->op == IR_RANDINT) {
            v.u = blk_randint(s, o);
            out[i] = eval_normalize(t, v);
        } else {
            v.f = in->op == IR_RAND ? blk_rand(s, o) : blk_randn(s, o);
            out[i] = eval_normalize(t, v);
        }
    }
    return SIG_NEXT;
}

interp_sig interp_elem(interp *I, ir_inst *in) {
    if (ir_op_table[in->op].num_operands > in->num_operands || in->num_results < ir_op_table[in->op].num_results) {
        interp_error(I, in, "%s has too few operands or results in the IR", ir_op_table[in->op].name);
        return SIG_ERROR;
    }
    switch (in->op) {
    case IR_CONST: return exec_const(I, in);
    case IR_PROGRAM_ID: case IR_NUM_PROGRAMS: return exec_grid_query(I, in);
    case IR_ARANGE: return exec_arange(I, in);
    case IR_SPLAT: case IR_BROADCAST: return exec_broadcast(I, in);
    case IR_EXPAND_DIMS: case IR_RESHAPE: case IR_MULTIPLE_OF: case IR_MAX_CONTIGUOUS: return exec_copy(I, in);
    case IR_PERMUTE: return exec_permute(I, in);
    case IR_JOIN: return exec_join(I, in);
    case IR_SPLIT: return exec_split(I, in);
    case IR_CAT: return exec_cat(I, in);
    case IR_RAND: case IR_RANDN: case IR_RANDINT: return exec_random(I, in);
    default:
        if (ir_op_has(in->op, OPF_ELEM)) return exec_elementwise(I, in);
        interp_error(I, in, "the interpreter cannot execute '%s' here", ir_op_table[in->op].name);
        return SIG_ERROR;
    }
}

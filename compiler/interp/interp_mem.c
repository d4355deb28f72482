/* interp_mem.c — loads, stores, block descriptors and atomics over host
 * memory, with bounds checking.
 *
 * Masks: a lane whose mask is false performs no access and is never checked;
 * a masked-off LOAD lane yields `other` (0 when absent), a masked-off atomic
 * lane yields 0.
 *
 * Checking: when every pointer argument has a known size (blk_arg.size > 0),
 * each access must lie wholly inside one pointer argument's [ptr, ptr + size)
 * and its byte offset from that argument must be a multiple of the element
 * size (the GPU faults on misaligned accesses; host buffers themselves may be
 * less aligned than device allocations, so the offset is what is checked).
 * Violations stop the run with, for example:
 *
 *   out-of-bounds store: element 130 of the block is at byte offset 520 from
 *   argument 'out' of 512 bytes (program (1, 0, 0))
 *   misaligned load: element 3 of the block is at byte offset 6 from argument
 *   'x', not a multiple of the 4-byte element size (program (0, 0, 0))
 *
 * naming the argument nearest to the address ("the address" instead of
 * "element N of the block" for scalar accesses). With any size unknown, or
 * no pointer arguments at all, nothing is checked.
 *
 * Atomics run one lane after another in index order (the interpreter is
 * sequential, so each is trivially atomic); they return the old values.
 * ATOMIC_CAS compares the stored bytes with `cmp` encoded in the pointee type
 * (bitwise, as the hardware does, also for floats).
 */
#include <string.h>

#include "interp_impl.h"

#define ELT(p, n, i) ((p)[(n) == 1 ? 0 : (i)])

static void describe_element(char *buf, size_t size, bool is_block, int64_t elem) {
    if (is_block) snprintf(buf, size, "element %lld of the block", (long long)elem);
    else snprintf(buf, size, "the address");
}

/* Returns false (after reporting) if the access is not allowed. */
static bool check_access(interp *I, const ir_inst *in, const char *what, uint64_t addr, int bytes, bool is_block,
                         int64_t elem) {
    if (!I->checked) return true;
    const interp_ptr_arg *last = &I->ptr_args[I->last_arg]; /* usually the same argument again */
    if (addr >= last->base && addr - last->base <= last->size && last->size - (addr - last->base) >= (uint64_t)bytes &&
        (addr - last->base) % (uint64_t)bytes == 0)
        return true;
    int nearest = 0;
    uint64_t nearest_dist = UINT64_MAX;
    for (int a = 0; a < I->num_ptr_args; a++) {
        const interp_ptr_arg *p = &I->ptr_args[a];
        if (addr >= p->base && addr - p->base <= p->size && p->size - (addr - p->base) >= (uint64_t)bytes) {
            uint64_t off = addr - p->base;
            I->last_arg = a;
            if (off % (uint64_t)bytes == 0) return true;
            char el[64];
            describe_element(el, sizeof el, is_block, elem);
            interp_error(I, in, "misaligned %s: %s is at byte offset %llu from argument '%s', not a multiple of the "
                         "%d-byte element size", what, el, (unsigned long long)off, p->name, bytes);
            return false;
        }
        uint64_t dist = addr < p->base ? p->base - addr : addr - (p->base + p->size);
        if (dist < nearest_dist) { nearest_dist = dist; nearest = a; }
    }
    const interp_ptr_arg *p = &I->ptr_args[nearest];
    char el[64];
    describe_element(el, sizeof el, is_block, elem);
    interp_error(I, in, "out-of-bounds %s: %s is at byte offset %lld from argument '%s' of %zu bytes", what, el,
                 (long long)(addr - p->base), p->name, p->size);
    return false;
}

static bool lane_on(const ir_scalar_val *mask, int64_t nmask, int64_t i) {
    return !mask || ELT(mask, nmask, i).i != 0;
}

static interp_sig exec_load(interp *I, ir_inst *in) {
    ir_value *pv = in->operands[0], *r = in->results[0];
    blk_dtype t = interp_dtype(r);
    int bytes = dtype_bytes(t);
    ir_scalar_val *ptr = interp_val(I, pv), *out = interp_val(I, r);
    ir_scalar_val *mask = in->num_operands > 1 ? interp_val(I, in->operands[1]) : NULL;
    ir_scalar_val *other = in->num_operands > 2 ? interp_val(I, in->operands[2]) : NULL;
    int64_t n = ir_numel(r->type), np = ir_numel(pv->type);
    int64_t nmask = mask ? ir_numel(in->operands[1]->type) : 0;
    int64_t nother = other ? ir_numel(in->operands[2]->type) : 0;
    bool is_block = ir_is_block(r->type);
    for (int64_t i = 0; i < n; i++) {
        if (!lane_on(mask, nmask, i)) {
            if (other) out[i] = ELT(other, nother, i);
            else out[i].u = 0;
            continue;
        }
        uint64_t addr = ELT(ptr, np, i).u;
        if (!check_access(I, in, "load", addr, bytes, is_block, i)) return SIG_ERROR;
        out[i] = eval_load_mem(t, (const void *)(uintptr_t)addr);
    }
    return SIG_NEXT;
}

static interp_sig exec_store(interp *I, ir_inst *in) {
    if (in->num_operands < 2) {
        interp_error(I, in, "store without a value in the IR");
        return SIG_ERROR;
    }
    ir_value *pv = in->operands[0], *vv = in->operands[1];
    blk_dtype t = pv->type.pointee, vt = interp_dtype(vv);
    int bytes = dtype_bytes(t);
    ir_scalar_val *ptr = interp_val(I, pv), *val = interp_val(I, vv);
    ir_scalar_val *mask = in->num_operands > 2 ? interp_val(I, in->operands[2]) : NULL;
    int64_t n = ir_numel(pv->type), nv = ir_numel(vv->type);
    int64_t nmask = mask ? ir_numel(in->operands[2]->type) : 0;
    bool is_block = ir_is_block(pv->type);
    for (int64_t i = 0; i < n; i++) {
        if (!lane_on(mask, nmask, i)) continue;
        uint64_t addr = ptr[i].u;
        if (!check_access(I, in, "store", addr, bytes, is_block, i)) return SIG_ERROR;
        ir_scalar_val v = ELT(val, nv, i);
        if (vt != t) v = eval_cast(vt, t, v);
        eval_store_mem(t, (void *)(uintptr_t)addr, v);
    }
    return SIG_NEXT;
}

/* DESC_LOAD / DESC_STORE: base, dims[r], strides[r], offsets[r] (, value).
 * Element i (multi-index) of the block is global index offsets + i; inside
 * [0, dims) in every dimension it is at base + sum(index_d * strides_d)
 * elements; outside, it reads 0 and is not written. */
static interp_sig exec_desc(interp *I, ir_inst *in) {
    bool is_store = in->op == IR_DESC_STORE;
    ir_value *block = is_store ? in->operands[in->num_operands - 1] : in->results[0];
    int rank = block->type.rank;
    if (in->num_operands != 1 + 3 * rank + (is_store ? 1 : 0) || rank < 1) {
        interp_error(I, in, "%s has %d operands in the IR for a rank-%d block", ir_op_table[in->op].name,
                     in->num_operands, rank);
        return SIG_ERROR;
    }
    ir_value *basev = in->operands[0];
    blk_dtype t = basev->type.pointee;
    int bytes = dtype_bytes(t);
    uint64_t base = interp_val(I, basev)[0].u;
    int64_t dims[IR_MAX_RANK], strides[IR_MAX_RANK], offs[IR_MAX_RANK], idx[IR_MAX_RANK];
    for (int d = 0; d < rank; d++) {
        dims[d] = interp_val(I, in->operands[1 + d])[0].i;
        strides[d] = interp_val(I, in->operands[1 + rank + d])[0].i;
        offs[d] = interp_val(I, in->operands[1 + 2 * rank + d])[0].i;
        idx[d] = 0;
    }
    ir_scalar_val *data = interp_val(I, block);
    blk_dtype vt = interp_dtype(block);
    int64_t n = ir_numel(block->type);
    for (int64_t i = 0; i < n; i++) {
        bool inside = true;
        uint64_t elem_off = 0;
        for (int d = 0; d < rank; d++) {
            int64_t g = offs[d] + idx[d];
            if (g < 0 || g >= dims[d]) inside = false;
            elem_off += (uint64_t)g * (uint64_t)strides[d];
        }
        if (inside) {
            uint64_t addr = base + elem_off * (uint64_t)bytes;
            if (!check_access(I, in, is_store ? "store" : "load", addr, bytes, true, i)) return SIG_ERROR;
            if (is_store) {
                ir_scalar_val v = vt == t ? data[i] : eval_cast(vt, t, data[i]);
                eval_store_mem(t, (void *)(uintptr_t)addr, v);
            } else {
                data[i] = eval_load_mem(t, (const void *)(uintptr_t)addr);
            }
        } else if (!is_store) {
            data[i].u = 0;
        }
        for (int d = rank - 1; d >= 0; d--) {
            if (++idx[d] < block->type.shape[d]) break;
            idx[d] = 0;
        }
    }
    return SIG_NEXT;
}

static ir_scalar_val atomic_combine(int kind, blk_dtype t, ir_scalar_val old, ir_scalar_val v) {
    switch (kind) {
    case IR_ATOM_ADD: return eval_binary(IR_ADD, 0, t, old, v);
    case IR_ATOM_MAX: return eval_binary(IR_MAXIMUM, 0, t, old, v);
    case IR_ATOM_MIN: return eval_binary(IR_MINIMUM, 0, t, old, v);
    case IR_ATOM_AND: return eval_binary(IR_AND, 0, t, old, v);
    case IR_ATOM_OR: return eval_binary(IR_OR, 0, t, old, v);
    case IR_ATOM_XOR: return eval_binary(IR_XOR, 0, t, old, v);
    default: return v; /* XCHG */
    }
}

static interp_sig exec_atomic(interp *I, ir_inst *in) {
    bool cas = in->op == IR_ATOMIC_CAS;
    int nfixed = cas ? 3 : 2;
    if (in->num_operands < nfixed || in->num_results < 1) {
        interp_error(I, in, "%s has too few operands in the IR", ir_op_table[in->op].name);
        return SIG_ERROR;
    }
    ir_value *pv = in->operands[0], *r = in->results[0];
    blk_dtype t = pv->type.pointee;
    int bytes = dtype_bytes(t);
    ir_scalar_val *ptr = interp_val(I, pv), *out = interp_val(I, r);
    ir_value *cv = cas ? in->operands[1] : NULL, *vv = in->operands[nfixed - 1];
    ir_scalar_val *val = interp_val(I, vv), *cmp = cv ? interp_val(I, cv) : NULL;
    ir_scalar_val *mask = in->num_operands > nfixed ? interp_val(I, in->operands[nfixed]) : NULL;
    int64_t n = ir_numel(pv->type), nv = ir_numel(vv->type), nc = cv ? ir_numel(cv->type) : 0;
    int64_t nmask = mask ? ir_numel(in->operands[nfixed]->type) : 0;
    blk_dtype vt = interp_dtype(vv);
    bool is_block = ir_is_block(pv->type);
    for (int64_t i = 0; i < n; i++) {
        if (!lane_on(mask, nmask, i)) {
            out[i].u = 0;
            continue;
        }
        uint64_t addr = ptr[i].u;
        if (!check_access(I, in, cas ? "atomic_cas" : "atomic", addr, bytes, is_block, i)) return SIG_ERROR;
        void *p = (void *)(uintptr_t)addr;
        ir_scalar_val old = eval_load_mem(t, p);
        ir_scalar_val v = ELT(val, nv, i);
        if (vt != t) v = eval_cast(vt, t, v);
        if (cas) {
            unsigned char want[8];
            ir_scalar_val c = ELT(cmp, nc, i);
            if (interp_dtype(cv) != t) c = eval_cast(interp_dtype(cv), t, c);
            eval_store_mem(t, want, c);
            if (memcmp(want, p, (size_t)bytes) == 0) eval_store_mem(t, p, v);
        } else {
            eval_store_mem(t, p, atomic_combine(in->kind, t, old, v));
        }
        out[i] = old;
    }
    return SIG_NEXT;
}

interp_sig interp_memory(interp *I, ir_inst *in) {
    bool needs_result = in->op == IR_LOAD || in->op == IR_DESC_LOAD;
    if (in->num_operands < 1 || (needs_result && in->num_results < 1)) {
        interp_error(I, in, "%s without a pointer or result in the IR", ir_op_table[in->op].name);
        return SIG_ERROR;
    }
    switch (in->op) {
    case IR_LOAD: return exec_load(I, in);
    case IR_STORE: return exec_store(I, in);
    case IR_DESC_LOAD: case IR_DESC_STORE: return exec_desc(I, in);
    default: return exec_atomic(I, in);
    }
}

/* builtin_atomic.c — atomics: atomic_add/max/min/and/or/xor/xchg and atomic_cas.
 */
#include "sema/builtin.h"

static const char *const sem_names[] = {"relaxed", "acq_rel", "acquire", "release", NULL};
/* No "sys": LLVM 22 emits read-modify-writes without a scope (.gpu), which
 * would not order them with the host; a system scope needs inline PTX. */
static const char *const scope_names[] = {"gpu", "cta", NULL};
/* atomic_add/max/min/and/or/xor/xchg(ptr, value, mask?; sem, scope), atomic_cas(ptr, cmp, value; sem, scope) */
sema_val sema_builtin_atomic(sema *S, ast_node *call, ast_node **a, const sema_builtin *bi) {
    bool cas = bi->op == IR_ATOMIC_CAS;
    sema_val v[3] = {{0}};
    ast_node *nodes[3] = {a[0], a[1], a[2]};
    bool ok = sema_pointer_arg(S, a[0], bi, true, &v[0]);
    for (int k = 1; k < 3; k++) {
        if (!a[k]) continue;
        if (!cas && k == 2) {
            if (!sema_mask_arg(S, a[2], bi, &v[2])) ok = false;
            continue;
        }
        v[k] = sema_numeric_arg(S, a[k], bi, k == 1 && cas ? "the compare value" : "the value");
        if (v[k].kind == SV_ERROR) ok = false;
        else if (v[k].type.dtype == DT_PTR) {
            diag_error(S->d, a[k]->loc, "atomics operate on numbers, got %s", sema_type_str(S, v[k]));
            ok = false;
        }
    }
    int sem = 0, scope = 0;
    ast_node *sem_node = a[3];
    if (sem_node && !(sem = sema_string_option(S, sem_node, bi, "memory semantics", sem_names,
                                          "\"relaxed\", \"acq_rel\", \"acquire\" or \"release\"")))
        ok = false;
    if (a[4] && !(scope = sema_string_option(S, a[4], bi, "scope", scope_names, "\"gpu\" or \"cta\"")))
        ok = false;
    if (!ok) return sema_error();
    blk_dtype pt = (blk_dtype)v[0].type.pointee;
    bool bitwise = !cas && (bi->kind == IR_ATOM_AND || bi->kind == IR_ATOM_OR || bi->kind == IR_ATOM_XOR);
    if ((bitwise && !dtype_is_int(pt)) || (!bitwise && pt == DT_BOOL) ||
        (!cas && (bi->kind == IR_ATOM_ADD || bi->kind == IR_ATOM_MAX || bi->kind == IR_ATOM_MIN) &&
         (pt == DT_F8E4M3 || pt == DT_F8E5M2))) {
        diag_error(S->d, a[0]->loc, "'%s' does not support %s", bi->name, sema_type_str(S, v[0]));
        return sema_error();
    }
    if (!sema_need_fn(S, call, bi)) return sema_error();
    if (!cas && a[2] && v[2].kind == SV_CONST && v[2].i) nodes[2] = NULL;
    ir_type shape;
    if (!sema_broadcast_all(S, v, nodes, 3, &shape)) return sema_error();
    ir_type elem = ir_scalar(pt);
    ir_value *ops[4];
    int n = 0;
    ops[n++] = sema_broadcast_ir(S, v[0].v, shape, a[0]->loc);
    ops[n++] = sema_cast_to(S, v[1], elem, shape, a[1]->loc);
    if (cas) ops[n++] = sema_cast_to(S, v[2], elem, shape, a[2]->loc);
    else if (nodes[2]) ops[n++] = sema_convert(S, v[2], DT_BOOL, shape, a[2]->loc);
    for (int k = 0; k < n; k++)
        if (!ops[k]) return sema_error();
    ir_type rt = ir_shaped(elem, shape.rank, shape.shape);
    ir_inst *i = sema_inst(S, (ir_op)bi->op, call->loc, ops, n, &rt, 1, 0);
    if (!i) return sema_error();
    i->kind = bi->kind;
    static const uint8_t sem_ir[] = {IR_SEM_ACQ_REL, IR_SEM_RELAXED, IR_SEM_ACQ_REL, IR_SEM_ACQUIRE, IR_SEM_RELEASE};
    static const uint8_t scope_ir[] = {IR_SCOPE_GPU, IR_SCOPE_GPU, IR_SCOPE_CTA};
    i->sem = sem_ir[sem]; /* 0: not given, acq_rel */
    i->scope = scope_ir[scope];
    return sema_value(i->results[0]);
}


/* inline.c — replace every IR_CALL by a copy of the callee's body.
 *
 * Needs: calls only to device fns of the same module; no recursion (sema
 * guarantees it); each device fn's body ends with its only RETURN, the last
 * inst of the body region.
 * Guarantees: no IR_CALL remains in any kernel and the module holds only
 * kernels (device fns are removed). A call whose callee breaks the rules
 * above is left in place for the verifier to report (a compiler bug).
 * Runs at every optimisation level: the interpreter and codegen know no calls.
 *
 * A call is replaced in place: the callee's body is cloned in front of the
 * call with the parameters mapped to the call's operands, the call's results
 * are replaced by the (mapped) operands of the callee's RETURN, and the walk
 * resumes at the first cloned inst, so calls inside the callee are inlined in
 * turn.
 */
#include "../ir/clone.h"
#include "passes.h"

static bool inlinable(const ir_inst *call) {
    const ir_func *c = call->callee;
    if (!c || c->is_kernel || !c->body) return false;
    const ir_region *body = c->body;
    const ir_inst *ret = body->last;
    if (!ret || ret->op != IR_RETURN || ret->num_operands != call->num_results) return false;
    if (body->args.len != call->num_operands) return false;
    return true;
}

/* Inline `call`; returns the first inst that replaced it (or the inst after
 * it when the callee's body was only its RETURN). */
static ir_inst *inline_call(ir_func *f, ir_inst *call) {
    ir_region *body = call->callee->body;
    ir_value_map *map = ir_value_map_new(f->module->arena);
    if (!map) return call->next;
    for (int k = 0; k < body->args.len; k++) ir_value_map_set(map, body->args.data[k], call->operands[k]);
    ir_inst *before = call->prev;
    ir_inst *ret = ir_clone_insts(call->parent, call, body, map, true);
    if (!ret) return call->next; /* out of memory; the arena records it */
    for (int k = 0; k < call->num_results; k++)
        ir_replace_uses(call->parent, call->results[k], ir_value_map_resolve(map, ret->operands[k]));
    ir_inst *first = before ? before->next : call->parent->first;
    ir_inst *after = call->next;
    ir_unlink(call);
    return first == call ? after : first;
}

/* Sema rules out recursion; the budget only keeps a broken module (a call
 * cycle) from hanging the compiler. Calls left over are the verifier's. */
enum { MAX_INLINED_CALLS = 1 << 20 };

static void inline_region(ir_func *f, ir_region *r, int *budget) {
    ir_inst *i = r->first;
    while (i) {
        if (i->op == IR_CALL && *budget > 0 && inlinable(i)) {
            --*budget;
            i = inline_call(f, i);
            continue;
        }
        for (int k = 0; k < i->num_regions; k++) inline_region(f, i->regions[k], budget);
        i = i->next;
    }
}

void pass_inline(ir_module *m) {
    int budget = MAX_INLINED_CALLS;
    for (ir_func *f = m->first; f; f = f->next)
        if (f->is_kernel) inline_region(f, f->body, &budget);
    ir_func *f = m->first;
    while (f) {
        ir_func *next = f->next;
        if (!f->is_kernel) ir_func_remove(m, f);
        f = next;
    }
}

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
 * call with the parameters mapped to the call's operands, and the walk
 * resumes at the first cloned inst, so calls inside the callee are inlined in
 * turn.
 *
 * Linear time: a call's results are not replaced by walking the kernel (that
 * made N calls cost O(N * size)). Instead one substitution map per kernel
 * records "call result -> the (cloned) value the callee returns", and the
 * walk, which visits every inst once and in program order, rewrites each
 * operand through the map as it reaches it. That is enough because every use
 * of a call's result comes after the call in program order (SSA with
 * structured regions: a value dominates its uses), and the walk reaches the
 * call — and records its results — before any of those uses. A returned
 * value may itself be the result of a cloned call that is inlined later
 * (still before the original call's uses), so lookups follow chains; a chain
 * is at most as long as the fn call nesting (COMPILE_MAX_INLINE_DEPTH).
 *
 * The same map serves as the clone map (callee value -> its copy): callee
 * values and kernel values are distinct, and each callee value is set again
 * by every clone before the copy reads it, so entries left from an earlier
 * inlining of the same callee are never read. The map's size is linear in
 * the number of calls plus the callees' sizes.
 *
 * Sema bounds the size after inlining (SEMA_MAX_INSTS, counted per kernel
 * over each fn's fully expanded size), so fns that call the next one twice
 * are reported there instead of growing the kernel as 2^depth here.
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

/* Inline `call` (its operands already substituted); returns the first inst
 * that replaced it (or the inst after it when the callee's body was only its
 * RETURN). Records the call's results in `subst`. */
static ir_inst *inline_call(ir_inst *call, ir_value_map *subst) {
    ir_region *body = call->callee->body;
    for (int k = 0; k < body->args.len; k++) ir_value_map_set(subst, body->args.data[k], call->operands[k]);
    ir_inst *before = call->prev;
    ir_inst *ret = ir_clone_insts(call->parent, call, body, subst, true);
    if (!ret) return call->next; /* out of memory; the arena records it */
    for (int k = 0; k < call->num_results; k++) {
        ir_value *to = ret->operands[k] ? ir_value_map_resolve(subst, ret->operands[k]) : NULL;
        if (call->results[k] && to) ir_value_map_set(subst, call->results[k], to);
    }
    ir_inst *first = before ? before->next : call->parent->first;
    ir_inst *after = call->next;
    ir_unlink(call);
    return first == call ? after : first;
}

/* Sema rules out recursion; the budget only keeps a broken module (a call
 * cycle) from hanging the compiler. Calls left over are the verifier's. */
enum { MAX_INLINED_CALLS = 1 << 20 };

typedef struct {
    ir_value_map *subst;
    bool any;   /* subst holds a call result (nothing to rewrite before) */
    int budget;
    blk_arena *arena;
} inliner;

static void inline_region(inliner *in, ir_region *r) {
    ir_inst *i = r->first;
    /* out of memory: a clone may be half built; passes_run stops after this */
    while (i && !arena_failed(in->arena)) {
        if (in->any)
            for (int k = 0; k < i->num_operands; k++)
                if (i->operands[k]) i->operands[k] = ir_value_map_resolve(in->subst, i->operands[k]);
        if (i->op == IR_CALL && in->budget > 0 && inlinable(i)) {
            in->budget--;
            in->any = true;
            i = inline_call(i, in->subst);
            continue;
        }
        for (int k = 0; k < i->num_regions; k++) inline_region(in, i->regions[k]);
        i = i->next;
    }
}

void pass_inline(ir_module *m) {
    inliner in = {.budget = MAX_INLINED_CALLS, .arena = m->arena};
    for (ir_func *f = m->first; f; f = f->next) {
        if (!f->is_kernel) continue;
        in.subst = ir_value_map_new(m->arena);
        in.any = false;
        if (in.subst) inline_region(&in, f->body);
    }
    ir_func *f = m->first;
    while (f) {
        ir_func *next = f->next;
        if (!f->is_kernel) ir_func_remove(m, f);
        f = next;
    }
}

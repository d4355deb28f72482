/* cg_wg_flight.c — wgmma groups left in flight across instructions and
 * iterations (wg_wait): which dots may leave their group running (into the
 * next iteration, WG_KEEP1 / WG_CARRY, or to their first reader, WG_USE),
 * and the wait_group that completes a group where its result is read
 * (cg_wg_drain_for, cg_pipe_results). cg_dot.c issues the groups; cg_pipe.c
 * sizes the rings' lead by them. */
#include <limits.h>
#include <stdio.h>

#include "cg_dot.h"

static bool reads(const ir_inst *in, const ir_value *v) {
    for (int k = 0; k < in->num_operands; k++)
        if (in->operands[k] == v) return true;
    for (int k = 0; k < in->num_regions; k++)
        if (cg_uses_in(in->regions[k], v)) return true;
    return false;
}

/* An f8 dot on wgmma whose group waits at its first reader sums its K
 * into fresh registers: it does not read its accumulator operand v before
 * its own wait (the add comes after it: drain_for), so v's group may
 * still run while it issues. v must be in the dot's accumulator layout
 * (no conversion of registers still being written). */
static bool f8_defers(cg_ctx *C, ir_inst *in, ir_value *v) {
    ir_inst *loop = in->parent ? in->parent->parent : NULL;
    blk_dtype t = in->op == IR_DOT ? (blk_dtype)in->operands[0]->type.dtype : DT_F32;
    if (!(t == DT_F8E4M3 || t == DT_F8E5M2) || in->operands[2] != v || in->operands[0] == v || in->operands[1] == v ||
        wg_wait(C, loop, in) != WG_USE)
        return false;
    const lay_layout *lv = cg_lay(C, v), *lr = cg_lay(C, in->results[0]);
    return lay_eq(lv, lr);
}

/* One wait_group for the pending group g that `in` reads: it leaves the
 * groups committed after g running, and completes every group up to g
 * (they finish in order), so all of those values are rebound to the
 * wait's tied outputs — an f8 dot's as its accumulator operand plus them,
 * in commit order (a chain of f8 dots adds each sum to its predecessor's
 * result). */
void cg_wg_drain_for(cg_ctx *C, ir_inst *in) {
    int g = INT_MIN;
    for (int q = 0; q < C->num_wg_pending; q++)
        if (reads(in, C->wg_pending[q].v) && !f8_defers(C, in, C->wg_pending[q].v) && C->wg_pending[q].group > g)
            g = C->wg_pending[q].group;
    if (g == INT_MIN) return;
    int n = 0, keep = 0;
    cg_val vals[8];
    for (int q = 0; q < C->num_wg_pending; q++) {
        if (C->wg_pending[q].group > g) {
            C->wg_pending[keep++] = C->wg_pending[q];
            continue;
        }
        ir_value *v = C->wg_pending[q].v;
        vals[n++] = cg_get(C, v, cg_lay(C, v));
    }
    int nt = 0;
    for (int q = 0; q < n; q++) nt += vals[q].n;
    LLVMValueRef *tied = ARENA_ARRAY(C->a, LLVMValueRef, nt > 0 ? nt : 1);
    if (!tied) { C->failed = true; return; }
    for (int q = 0, at = 0; q < n; at += vals[q].n, q++)
        for (int r = 0; r < vals[q].n; r++) tied[at + r] = vals[q].v[r];
    char text[48];
    snprintf(text, sizeof text, "wgmma.wait_group.sync.aligned %d;", C->wg_commits - g - 1);
    wg_pass(C, text, tied, nt);
    for (int q = 0, j = 0, at = 0; q < C->num_wg_pending; q++) {
        if (C->wg_pending[q].group > g) continue;
        cg_val w = cg_new_val(C, vals[j].n, vals[j].lay);
        for (int r = 0; r < w.n; r++) w.v[r] = tied[at + r];
        at += w.n;
        if (C->wg_pending[q].base) {
            cg_val bv = cg_get(C, C->wg_pending[q].base, w.lay);
            for (int r = 0; r < w.n && r < bv.n; r++) w.v[r] = LLVMBuildFAdd(C->b, bv.v[r], w.v[r], "");
        }
        cg_set(C, C->wg_pending[q].v, w);
        j++;
    }
    C->num_wg_pending = keep;
}

/* The yield slot carrying dot's result when that is its only use. */
static int yield_slot(ir_inst *loop, ir_inst *dot) {
    ir_region *body = loop->regions[0];
    ir_inst *y = body->last;
    if (dot->parent != body || !y || y->op != IR_YIELD || cg_uses_in(body, dot->results[0]) != 1) return -1;
    for (int k = 0; k < y->num_operands && 1 + k < body->args.len; k++)
        if (y->operands[k] == dot->results[0]) return k;
    return -1;
}

/* every dot of the body at its top level, and few enough to track
 * (cg_ctx.wg_pending) */
static bool dots_flat(const ir_region *body) {
    int n = 0;
    for (const ir_inst *i = body->first; i; i = i->next) {
        n += i->op == IR_DOT;
        for (int k = 0; k < i->num_regions; k++)
            if (ir_region_has(i->regions[k], IR_DOT)) return false;
    }
    return n <= 8;
}

/* Whether dot's result can stay in flight into the next iteration, read
 * there as the carried `arg`: every reader of arg comes before dot (its
 * registers are then free when dot issues), and a wait_group 0 comes before
 * the first of them — the first reader of a dot read in the body that is
 * the last dot committed before it. The wait that completes the carried
 * group then finds it done: LLVM may copy its registers into the wait's
 * tied operands, and a copy of registers still being written makes ptxas
 * serialize every wgmma of the kernel (C7514). */
static bool carry_ok(ir_region *body, ir_inst *dot, ir_value *arg) {
    int before = 0;
    for (ir_inst *i = body->first; i != dot; i = i->next) before += reads(i, arg);
    if (!before || before != cg_uses_in(body, arg)) return false;
    ir_inst *last = NULL; /* the last dot committed so far */
    bool full = false;
    for (ir_inst *i = body->first; i != dot; i = i->next) {
        if (last && reads(i, last->results[0])) full = true;
        if (reads(i, arg)) return full;
        if (i->op == IR_DOT) last = i;
    }
    return false;
}

/* cg_dot.h's WG_* for a dot of any type (wg_wait adds f8's rule) */
static int wait_kind(cg_ctx *C, ir_inst *loop, ir_inst *dot) {
    wg_plan p;
    int cv;
    if (!loop || loop->op != IR_FOR || !C->pl || cg_pipe_stages(C, loop) < 2 || !wg_choose(C, dot, &p)) return WG_NOW;
    for (int k = p.areg ? 1 : 0; k < 2; k++) {
        const pl_entry *e = operand_entry(C, dot->operands[k], &cv);
        if (!e || e->loop != loop) return WG_NOW;
    }
    ir_region *body = loop->regions[0];
    if (dot->parent != body || !dots_flat(body)) return WG_NOW;
    int k = yield_slot(loop, dot);
    if (k < 0) return WG_USE;
    /* a group running into the next iteration needs a third slot (the
     * copies run S-2 ahead); one completed in its own iteration does not */
    if (cg_pipe_stages(C, loop) < 3) return WG_USE;
    ir_value *arg = body->args.data[1 + k];
    if (!p.areg && dot->operands[2] == arg && cg_uses_in(body, arg) == 1) return WG_KEEP1;
    return carry_ok(body, dot, arg) ? WG_CARRY : WG_USE;
}

/* An f8 dot's sum is added to its accumulator after the wait (lower_wgmma,
 * drain_for): its group never runs into the next iteration, but it may
 * wait at its first reader (WG_USE), so that the next f8 dot issues first. */
int wg_wait(cg_ctx *C, ir_inst *loop, ir_inst *dot) {
    int w = wait_kind(C, loop, dot);
    blk_dtype t = (blk_dtype)dot->operands[0]->type.dtype;
    return (t == DT_F8E4M3 || t == DT_F8E5M2) && (w == WG_KEEP1 || w == WG_CARRY) ? WG_USE : w;
}

bool cg_wg_in_flight(cg_ctx *C, ir_inst *loop) {
    for (ir_inst *i = loop->regions[0]->first; i; i = i->next)
        if (i->op == IR_DOT && (wg_wait(C, loop, i) == WG_KEEP1 || wg_wait(C, loop, i) == WG_CARRY)) return true;
    return false;
}

/* The initial value of an accumulator whose group stays in flight, made
 * opaque (an empty asm) in the preheader: its registers are then defined
 * once, before the loop's guard, where LLVM would otherwise materialise a
 * zero accumulator separately on the path that skips the loop — registers
 * ptxas sees defined while a wgmma pipeline may be open at the final
 * wait, which makes it serialize every wgmma (C7515). */
void cg_wg_opaque_inits(cg_ctx *C, ir_inst *loop) {
    for (ir_inst *i = loop->regions[0]->first; i; i = i->next) {
        int w = i->op == IR_DOT ? wg_wait(C, loop, i) : WG_NOW;
        if (w != WG_KEEP1 && w != WG_CARRY) continue;
        ir_value *init = loop->operands[3 + yield_slot(loop, i)];
        cg_val v = cg_get(C, init, cg_lay(C, loop->regions[0]->args.data[1 + yield_slot(loop, i)]));
        cg_val x = cg_new_val(C, v.n, v.lay);
        for (int r = 0; r < v.n; r++) x.v[r] = v.v[r];
        wg_pass(C, "", x.v, x.n);
        cg_set(C, init, x);
    }
}

/* The carried results of WG_CARRY dots are in flight at the top of the
 * body: the last iteration committed them, then the groups of the dots
 * after them in the body. Group indices are set so that a reader's wait
 * counts those groups and the ones this iteration commits before it. */
void cg_wg_carry_pending(cg_ctx *C, ir_inst *loop) {
    ir_region *body = loop->regions[0];
    int total = 0, pos = 0;
    wg_plan p;
    C->num_wg_pending = 0;
    for (ir_inst *i = body->first; i; i = i->next) total += i->op == IR_DOT && wg_choose(C, i, &p);
    for (ir_inst *i = body->first; i; i = i->next) {
        if (i->op != IR_DOT || !wg_choose(C, i, &p)) continue;
        if (wg_wait(C, loop, i) == WG_CARRY) {
            C->wg_pending[C->num_wg_pending].v = body->args.data[1 + yield_slot(loop, i)];
            C->wg_pending[C->num_wg_pending].base = NULL;
            C->wg_pending[C->num_wg_pending].group = C->wg_commits - total + pos;
            C->num_wg_pending++;
        }
        pos++;
    }
}

void cg_pipe_results(cg_ctx *C, ir_inst *loop) {
    if (C->failed || !C->pl || !cg_pipe_has(C, loop) || !cg_wg_in_flight(C, loop)) return;
    /* the last groups of the in-flight dots complete before their
     * accumulators leave the loop: wait_group 0 takes them as tied operands */
    for (ir_inst *i = loop->regions[0]->first; i; i = i->next) {
        if (i->op != IR_DOT || (wg_wait(C, loop, i) != WG_KEEP1 && wg_wait(C, loop, i) != WG_CARRY)) continue;
        ir_value *r = loop->results[yield_slot(loop, i)];
        cg_val v = cg_get(C, r, cg_lay(C, r)), w = cg_new_val(C, v.n, v.lay);
        for (int k = 0; k < v.n; k++) w.v[k] = v.v[k];
        wg_pass(C, "wgmma.wait_group.sync.aligned 0;", w.v, w.n);
        cg_set(C, r, w);
    }
}


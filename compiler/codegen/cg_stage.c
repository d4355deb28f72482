/* cg_stage.c — dot operands loaded from global memory and staged through
 * shared memory chunk by chunk (the fallback variant's dots; cg_dot.c
 * lowers the dots, cg_memory.c prepares the loads: cg_load_prepare). */
#include "cg_dot.h"

/* ---- loads staged in chunks ----
 *
 * A dot operand that is not streamed (the fallback variant: alignment
 * unproven, one-element loads, no cp.async ring) is loaded into registers
 * and stored into the dot's shared tile between two barriers. Loaded where
 * the program says, all of it is live across the first barrier together
 * with the accumulator: 96 loaded + 128 accumulator registers per thread
 * in matmul's 128x256x64 on 8 warps, which spilled. When a dot's loaded
 * operands take more than a budget of registers per thread (one per
 * element for one-element loads, one per 32-bit word for vector ones), the
 * dot issues those loads itself, after the first barrier, a chunk of at
 * most `budget` registers at a time, each chunk stored before the next is
 * loaded. The budget is what a thread has left beside the accumulator:
 * CG_THREAD_REGS - CG_STAGE_RESERVE (addresses, masks, indices,
 * descriptors) - the accumulator's registers (twice that for an f8 wgmma,
 * which sums into a second set), in multiples of 16, at least 16. Under
 * the budget the loads stay where they are and their latency overlaps the
 * barrier (every all-d16 entry: their operands stream or fit). */
enum { CG_THREAD_REGS = 255, CG_STAGE_RESERVE = 64 };

static int stage_budget(cg_ctx *C, ir_inst *dot) {
    int acc = lay_num_regs(dot_acc_layout(C, dot), dot->results[0]->type.shape, NULL);
    blk_dtype t = (blk_dtype)dot->operands[0]->type.dtype;
    wg_plan p;
    if ((t == DT_F8E4M3 || t == DT_F8E5M2) && wg_choose(C, dot, &p)) acc *= 2;
    int b = (CG_THREAD_REGS - CG_STAGE_RESERVE - acc) / 16 * 16;
    return b < 16 ? 16 : b;
}

/* The dot operand through which the dot reads load result v: v, or trans(v)
 * when that permute is a renaming of v's registers (cg_convert.c). */
static ir_value *staged_operand(cg_ctx *C, ir_value *v, ir_inst *perm) {
    if (!perm) return v;
    ir_value *r = perm->results[0];
    const lay_layout *renamed = lay_permute(C->a, cg_lay(C, v), perm->perm);
    return lay_eq(renamed, cg_lay(C, r)) ? r : NULL;
}

/* The dot that stages load ld's result as its a or b (directly or through
 * trans), when it may issue the load itself: the load (and its trans) is
 * used once, nothing between it and the dot has effects or regions (so no
 * store comes between the load and its new place), and it is neither
 * volatile nor a resident tile nor a in registers nor an operand of the
 * exact f32 path, its registers being the ones the dot reads. */
static ir_inst *staging_dot(cg_ctx *C, ir_inst *ld) {
    ir_value *v = ld->results[0];
    if (ld->op != IR_LOAD || !v->type.rank || (ld->flags & IRF_VOLATILE) || !ld->parent) return NULL;
    ir_inst *dot = NULL, *perm = NULL;
    for (ir_inst *i = ld->next; i && !dot; i = i->next) {
        if (i->op == IR_PERMUTE && i->operands[0] == v && !perm) perm = i;
        else if (i->op == IR_DOT && (cg_operand_reads(i->operands[0], v) || cg_operand_reads(i->operands[1], v))) dot = i;
        else if (i->op == IR_DOT || ir_op_has(i->op, OPF_SIDE) || i->num_regions) return NULL;
    }
    if (!dot || dot->operands[0] == dot->operands[1] || cg_uses_in(ld->parent, v) != 1) return NULL;
    ir_value *o = staged_operand(C, v, perm);
    if (!o || (o != dot->operands[0] && o != dot->operands[1]) || (perm && cg_uses_in(ld->parent, o) != 1)) return NULL;
    if (dot->precision == IR_PREC_IEEE && (blk_dtype)v->type.dtype == DT_F32) return NULL;
    sm_tile t;
    const vec_access *e = vec_get(C->vt, ld);
    if (resident_tile(C, o, &t) || !e || !lay_eq(e->lay, cg_lay(C, v))) return NULL;
    if (o == dot->operands[0] && a_in_registers((cg_val){NULL, 0, cg_lay(C, o), true}, o->type, dot_acc_layout(C, dot)))
        return NULL;
    return dot;
}

/* The load behind dot operand o (o or trans of it), or NULL. */
static ir_inst *operand_load(ir_value *o) {
    if (o->def && o->def->op == IR_PERMUTE) o = o->def->operands[0];
    return o->def && o->def->op == IR_LOAD ? o->def : NULL;
}

/* Elements of load ld per 32-bit register: a vector access of narrow
 * elements delivers whole words (2 halves, 4 bytes); a one-element access
 * takes a register per element. */
static int elems_per_reg(cg_ctx *C, ir_inst *ld) {
    const vec_access *e = vec_get(C->vt, ld);
    int eb = dtype_bytes((blk_dtype)ld->results[0]->type.dtype);
    return e && eb < 4 && e->vec * eb >= 4 ? 4 / eb : 1;
}

bool cg_dot_stages_load(cg_ctx *C, ir_inst *ld) {
    ir_inst *dot = staging_dot(C, ld);
    if (!dot) return false;
    int regs = 0;
    for (int k = 0; k < 2; k++) {
        ir_value *o = dot->operands[k];
        ir_inst *l = operand_load(o);
        if (l && staging_dot(C, l) == dot) regs += lay_num_regs(cg_lay(C, o), o->type.shape, NULL) / elems_per_reg(C, l);
    }
    return regs > stage_budget(C, dot);
}

/* The loads the dot issues itself (cg_memory.c prepared them): the stash
 * entry of dot operand o (a load's result or its trans), or NULL. */
static cg_load_parts *staged_parts(cg_ctx *C, ir_value *o) {
    ir_inst *l = operand_load(o);
    for (int i = 0; l && i < C->num_staged; i++)
        if (C->staged[i].ld == l) return &C->staged[i];
    return NULL;
}

bool cg_dot_staged(cg_ctx *C, ir_value *v) {
    for (int i = 0; i < C->num_staged; i++)
        if (C->staged[i].ld->results[0] == v) return true;
    return false;
}

/* Store dot operand o (registers x) into tile t: a load the dot issues
 * itself goes chunk by chunk, each chunk's loads then its stores (x shares
 * the load's registers: operand_regs). */
void stage_operand(cg_ctx *C, ir_inst *dot, ir_value *o, sm_tile *t, cg_val x, bool tf32) {
    cg_load_parts *P = staged_parts(C, o);
    if (!P) {
        store_operand(C, dot->loc, t, x, o->type, tf32);
        return;
    }
    int chunk = stage_budget(C, dot) * elems_per_reg(C, P->ld);
    for (int r0 = 0; r0 < P->v.n; r0 += chunk) {
        cg_load_part(C, P, r0, r0 + chunk);
        store_regs(C, dot->loc, t, x, o->type, tf32, r0, r0 + chunk);
    }
    cg_set(C, P->ld->results[0], P->v);
    cg_set(C, o, x);
    *P = C->staged[--C->num_staged];
}

/* The registers of dot operand o as lower_mma / lower_wgmma take them: a
 * load the dot issues itself has no registers yet; they are its result's,
 * in o's layout (trans: a renaming). */
cg_val operand_regs(cg_ctx *C, ir_value *o) {
    cg_load_parts *P = staged_parts(C, o);
    if (!P) return cg_get(C, o, cg_lay(C, o));
    cg_val x = P->v;
    x.lay = cg_lay(C, o);
    return x;
}

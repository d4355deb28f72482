/* cg_control.c — structured control flow: for, while, if, yield,
 * condition, break, continue, return.
 *
 * Conditions and loop bounds are uniform scalars (ops.def), so every branch
 * is taken by the whole block of threads together: plain LLVM branches, and
 * barriers inside loops and ifs stay legal. Block values flowing through
 * control flow become one phi node per register; a value reaching a join in
 * another layout than the join's is converted first (cg_get).
 *
 * A jump target (cg_target) is a basic block with phis for the values it
 * receives: the loop latch (yield/continue of a for), the loop exit
 * (break, normal exit), an if's join, a while's condition block.
 *
 * for iv in [lb, ub) step s: the induction variable is kept in 64 bits (as
 * the interpreter does: no wrap-around for i32 bounds near INT_MAX); the
 * loop runs while (s > 0 ? iv < ub : iv > ub) (unsigned: iv < ub).
 */
#include <string.h>

#include "cg_internal.h"

typedef struct {
    LLVMBasicBlockRef bb;
    int nvals;
    cg_val *phis;
    const lay_layout **lays;
} cg_target;

/* A target receiving values typed like vals[0..n-1] in layouts lays[]. */
static cg_target target_new(cg_ctx *C, const char *name, ir_value *const *like, const lay_layout **lays, int n) {
    cg_target t = {0};
    t.bb = cg_block(C, name);
    t.nvals = n;
    t.phis = ARENA_ARRAY(C->a, cg_val, n + 1);
    t.lays = lays;
    LLVMBasicBlockRef cur = LLVMGetInsertBlock(C->b);
    LLVMPositionBuilderAtEnd(C->b, t.bb);
    for (int k = 0; k < n; k++) {
        ir_value *v = like[k];
        int nr = v->type.rank ? lay_num_regs(lays[k], v->type.shape, NULL) : 1;
        t.phis[k] = cg_new_val(C, nr, v->type.rank ? lays[k] : NULL);
        for (int i = 0; i < nr; i++) t.phis[k].v[i] = LLVMBuildPhi(C->b, cg_type(C, (blk_dtype)v->type.dtype), "");
    }
    LLVMPositionBuilderAtEnd(C->b, cur);
    return t;
}

/* Branch from the current block to t carrying vals (converted to t's layouts). */
static void jump(cg_ctx *C, cg_target *t, ir_value *const *vals, int n) {
    cg_val tmp[64];
    int m = n < t->nvals ? n : t->nvals;
    if (m > 64) m = 64;
    for (int k = 0; k < m; k++) tmp[k] = cg_get(C, vals[k], vals[k]->type.rank ? t->lays[k] : NULL);
    LLVMBasicBlockRef from = LLVMGetInsertBlock(C->b);
    for (int k = 0; k < m; k++)
        for (int i = 0; i < t->phis[k].n && i < tmp[k].n; i++) {
            LLVMValueRef v = tmp[k].v[i];
            LLVMAddIncoming(t->phis[k].v[i], &v, &from, 1);
        }
    LLVMBuildBr(C->b, t->bb);
}

/* cg_val phis -> plain values (the same registers) */
static void bind(cg_ctx *C, ir_value *const *vals, int n, cg_target *t) {
    for (int k = 0; k < n && k < t->nvals; k++) cg_set(C, vals[k], t->phis[k]);
}

/* Where yield / continue / break of the innermost construct go. */
typedef struct cg_flow {
    struct cg_flow *outer;
    cg_target *yield;     /* YIELD of the current region (NULL: none) */
    cg_target *cont, *brk;/* innermost loop */
} cg_flow;

static const lay_layout **lays_of(cg_ctx *C, ir_value *const *vals, int n) {
    const lay_layout **l = ARENA_ARRAY(C->a, const lay_layout *, n + 1);
    for (int k = 0; k < n; k++) l[k] = vals[k]->type.rank ? cg_lay(C, vals[k]) : NULL;
    return l;
}

/* Run a region whose YIELD goes to `yield`; falls through to nothing. */
static void run_region(cg_ctx *C, ir_region *r, cg_target *yield, cg_target *cont, cg_target *brk) {
    cg_flow fl = {C->flow, yield, cont, brk};
    C->flow = &fl;
    cg_region(C, r);
    C->flow = fl.outer;
    /* a region that fell off its end without a terminator (should not
     * happen after the verifier) still needs one */
    if (!LLVMGetBasicBlockTerminator(LLVMGetInsertBlock(C->b))) {
        if (yield) jump(C, yield, NULL, 0);
        else LLVMBuildUnreachable(C->b);
    }
}

/* A loop over a 32-bit induction variable with a constant positive step
 * runs in 32-bit registers: the trip count n is computed once (in u32:
 * ub - lb is exact modulo 2^32 when ub > lb, and iv + step may wrap past
 * the last iteration without ending the loop early or late) and the
 * header tests a counter against it. With the loop's iv in i64, as every
 * other loop has it, LLVM widens the body's 32-bit index arithmetic to
 * i64 (IndVarSimplify eliminates the truncs): matmul's sm_80 k loop then
 * compared each copy's K mask in two 64-bit halves and divided the
 * iteration count for the ring slot in 64 bits (docs/codegen.md). */
static bool narrow_loop(blk_dtype it, LLVMValueRef step) {
    return dtype_bits(it) == 32 && LLVMIsAConstantInt(step) && LLVMConstIntGetSExtValue(step) > 0;
}

/* ceil((ub - lb) / step) iterations in u32, 0 when ub <= lb */
static LLVMValueRef trip_count32(cg_ctx *C, bool uns, LLVMValueRef lb, LLVMValueRef ub, LLVMValueRef step) {
    LLVMBuilderRef b = C->b;
    LLVMValueRef d = LLVMBuildSub(b, ub, lb, "");
    LLVMValueRef q = LLVMBuildUDiv(b, d, step, "");
    LLVMValueRef part = LLVMBuildICmp(b, LLVMIntNE, LLVMBuildURem(b, d, step, ""), cg_const_i32(C, 0), "");
    LLVMValueRef n = LLVMBuildAdd(b, q, LLVMBuildZExt(b, part, C->i32, ""), "");
    LLVMValueRef any = LLVMBuildICmp(b, uns ? LLVMIntUGT : LLVMIntSGT, ub, lb, "");
    return LLVMBuildSelect(b, any, n, cg_const_i32(C, 0), "trips");
}

static void lower_for(cg_ctx *C, ir_inst *in) {
    LLVMBuilderRef b = C->b;
    ir_region *body = in->regions[0];
    ir_value *ivv = body->args.data[0];
    blk_dtype it = (blk_dtype)ivv->type.dtype;
    bool uns = dtype_is_unsigned(it);
    LLVMValueRef lb = cg_get(C, in->operands[0], NULL).v[0], ub = cg_get(C, in->operands[1], NULL).v[0],
                 step = cg_get(C, in->operands[2], NULL).v[0];
    bool narrow = narrow_loop(it, step);
    LLVMValueRef lb32 = lb, step32 = step, trips = NULL;
    if (narrow) trips = trip_count32(C, uns, lb, ub, step);
    if (dtype_bits(it) < 64) {
        lb = uns ? LLVMBuildZExt(b, lb, C->i64, "") : LLVMBuildSExt(b, lb, C->i64, "");
        ub = uns ? LLVMBuildZExt(b, ub, C->i64, "") : LLVMBuildSExt(b, ub, C->i64, "");
        step = uns ? LLVMBuildZExt(b, step, C->i64, "") : LLVMBuildSExt(b, step, C->i64, "");
    }
    int nc = body->args.len - 1;
    ir_value *const *carried = body->args.data + 1;
    const lay_layout **lays = lays_of(C, carried, nc);
    /* header: iv + carried phis; latch: yields/continues; exit: results */
    cg_target head = target_new(C, "for.head", carried, lays, nc);
    cg_target latch = target_new(C, "for.latch", carried, lays, nc);
    cg_target exit = target_new(C, "for.exit", carried, lays, nc);
    LLVMBasicBlockRef body_bb = cg_block(C, "for.body");
    LLVMBasicBlockRef pre = LLVMGetInsertBlock(b);
    LLVMPositionBuilderAtEnd(b, head.bb);
    /* narrow: iv is the i32 value and count the iterations run so far */
    LLVMValueRef iv = LLVMBuildPhi(b, narrow ? C->i32 : C->i64, "iv");
    LLVMValueRef count = narrow ? LLVMBuildPhi(b, C->i32, "count") : NULL;
    LLVMPositionBuilderAtEnd(b, pre);
    cg_pipe_begin(C, in, lb, ub, step); /* may add blocks: the preheader is where it ends */
    pre = LLVMGetInsertBlock(b);
    jump(C, &head, in->operands + 3, in->num_operands - 3);
    LLVMValueRef zero32 = cg_const_i32(C, 0);
    LLVMAddIncoming(iv, narrow ? &lb32 : &lb, &pre, 1);
    if (narrow) LLVMAddIncoming(count, &zero32, &pre, 1);

    LLVMPositionBuilderAtEnd(b, head.bb);
    LLVMValueRef go;
    if (narrow) go = LLVMBuildICmp(b, LLVMIntULT, count, trips, "");
    else if (uns) go = LLVMBuildICmp(b, LLVMIntULT, iv, ub, "");
    else {
        LLVMValueRef pos = LLVMBuildICmp(b, LLVMIntSGT, step, LLVMConstInt(C->i64, 0, 0), "");
        /* one instruction per statement: argument order is unspecified (F7) */
        LLVMValueRef down = LLVMBuildICmp(b, LLVMIntSGT, iv, ub, "");
        LLVMValueRef up = LLVMBuildICmp(b, LLVMIntSLT, iv, ub, "");
        go = LLVMBuildSelect(b, pos, up, down, "");
    }
    /* the exit target receives the header's carried values on normal exit */
    for (int k = 0; k < nc; k++)
        for (int i = 0; i < head.phis[k].n; i++) LLVMAddIncoming(exit.phis[k].v[i], &head.phis[k].v[i], &head.bb, 1);
    LLVMBuildCondBr(b, go, body_bb, exit.bb);

    LLVMPositionBuilderAtEnd(b, body_bb);
    cg_val ivx = cg_new_val(C, 1, NULL);
    ivx.v[0] = narrow ? iv : dtype_bits(it) < 64 ? LLVMBuildTrunc(b, iv, cg_type(C, it), "") : iv;
    cg_set(C, ivv, ivx);
    bind(C, carried, nc, &head);
    /* the pipeline's own arithmetic is in i64; inside the loop iv's value
     * fits its type, so the extension is exact */
    LLVMValueRef iv64 = !narrow ? iv : uns ? LLVMBuildZExt(b, iv, C->i64, "") : LLVMBuildSExt(b, iv, C->i64, "");
    cg_pipe_top(C, in, iv64, count, trips);
    run_region(C, body, &latch, &latch, &exit);

    LLVMPositionBuilderAtEnd(b, latch.bb);
    for (int k = 0; k < nc; k++)
        for (int i = 0; i < latch.phis[k].n; i++) LLVMAddIncoming(head.phis[k].v[i], &latch.phis[k].v[i], &latch.bb, 1);
    LLVMValueRef next = LLVMBuildAdd(b, iv, narrow ? step32 : step, ""); /* narrow: may wrap after the last */
    LLVMAddIncoming(iv, &next, &latch.bb, 1);
    if (narrow) {
        LLVMValueRef cn = LLVMBuildAdd(b, count, cg_const_i32(C, 1), "");
        LLVMAddIncoming(count, &cn, &latch.bb, 1);
    }
    LLVMBuildBr(b, head.bb);

    LLVMPositionBuilderAtEnd(b, exit.bb);
    bind(C, in->results, in->num_results, &exit);
    /* the groups still in flight complete before the rings are released:
     * ptxas then sees the wgmma pipeline end before the loop's barriers
     * (after them, it serialized the wgmmas of a warp-specialized loop:
     * C7515) */
    cg_pipe_results(C, in);
    cg_pipe_end(C, in);
}

static void lower_while(cg_ctx *C, ir_inst *in) {
    LLVMBuilderRef b = C->b;
    ir_region *cr = in->regions[0], *br = in->regions[1];
    const lay_layout **clays = lays_of(C, cr->args.data, cr->args.len);
    const lay_layout **rlays = lays_of(C, in->results, in->num_results);
    cg_target head = target_new(C, "while.cond", cr->args.data, clays, cr->args.len);
    cg_target exit = target_new(C, "while.exit", in->results, rlays, in->num_results);
    jump(C, &head, in->operands, in->num_operands);
    LLVMPositionBuilderAtEnd(b, head.bb);
    bind(C, cr->args.data, cr->args.len, &head);
    /* the cond region ends in CONDITION: lowered here, not by cg_control */
    cg_flow fl = {C->flow, NULL, NULL, NULL};
    C->flow = &fl;
    for (ir_inst *i = cr->first; i && i->op != IR_CONDITION; i = i->next) cg_region_inst(C, i);
    C->flow = fl.outer;
    ir_inst *c = cr->last;
    if (!c || c->op != IR_CONDITION || c->num_operands < 1) {
        cg_error(C, in->loc, "internal error: while condition region does not end in a condition");
        return;
    }
    ir_value *const *vals = c->operands + 1;
    int nvals = c->num_operands - 1;
    if (nvals == 0) { vals = cr->args.data; nvals = cr->args.len; }
    const lay_layout **blays = lays_of(C, br->args.data, br->args.len);
    cg_target bodyt = target_new(C, "while.body", br->args.data, blays, br->args.len);
    LLVMValueRef cond = cg_get(C, c->operands[0], NULL).v[0];
    /* two jumps with values from one block: go through small trampolines */
    LLVMBasicBlockRef tb, fb;
    cg_branch(C, cond, "while.go", &tb, "while.stop", &fb);
    LLVMPositionBuilderAtEnd(b, tb);
    jump(C, &bodyt, vals, nvals);
    LLVMPositionBuilderAtEnd(b, fb);
    jump(C, &exit, vals, nvals);
    LLVMPositionBuilderAtEnd(b, bodyt.bb);
    bind(C, br->args.data, br->args.len, &bodyt);
    run_region(C, br, &head, &head, &exit);
    LLVMPositionBuilderAtEnd(b, exit.bb);
    bind(C, in->results, in->num_results, &exit);
}

static void lower_if(cg_ctx *C, ir_inst *in) {
    LLVMBuilderRef b = C->b;
    LLVMValueRef cond = cg_get(C, in->operands[0], NULL).v[0];
    const lay_layout **lays = lays_of(C, in->results, in->num_results);
    cg_target join = target_new(C, "if.join", in->results, lays, in->num_results);
    LLVMBasicBlockRef tb, eb;
    cg_branch(C, cond, "if.then", &tb, "if.else", &eb);
    cg_target *cont = C->flow ? C->flow->cont : NULL, *brk = C->flow ? C->flow->brk : NULL;
    LLVMPositionBuilderAtEnd(b, tb);
    if (in->num_regions > 0) run_region(C, in->regions[0], &join, cont, brk);
    else jump(C, &join, NULL, 0);
    LLVMPositionBuilderAtEnd(b, eb);
    if (in->num_regions > 1) run_region(C, in->regions[1], &join, cont, brk);
    else jump(C, &join, NULL, 0);
    LLVMPositionBuilderAtEnd(b, join.bb);
    bind(C, in->results, in->num_results, &join);
}

bool cg_control(cg_ctx *C, ir_inst *in) {
    switch (in->op) {
    case IR_FOR: lower_for(C, in); return true;
    case IR_WHILE: lower_while(C, in); return true;
    case IR_IF: lower_if(C, in); return true;
    case IR_YIELD:
        if (C->flow && C->flow->yield) jump(C, C->flow->yield, in->operands, in->num_operands);
        else LLVMBuildRetVoid(C->b); /* the function body's end */
        return true;
    case IR_CONTINUE:
        if (C->flow && C->flow->cont) jump(C, C->flow->cont, in->operands, in->num_operands);
        else cg_error(C, in->loc, "internal error: continue outside a loop");
        return true;
    case IR_BREAK:
        if (C->flow && C->flow->brk) jump(C, C->flow->brk, in->operands, in->num_operands);
        else cg_error(C, in->loc, "internal error: break outside a loop");
        return true;
    case IR_RETURN:
        LLVMBuildRetVoid(C->b);
        return true;
    case IR_CONDITION:
        cg_error(C, in->loc, "internal error: condition outside a while");
        return true;
    default:
        return false;
    }
}

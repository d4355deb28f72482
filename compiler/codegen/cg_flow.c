/* cg_flow.c — the control flow a lowering builds for itself: a guarded
 * block (an atomic, a print, an assert's failure), a run-time loop (the sort
 * network's stages, the CUDA-core dot's k loop, the warp-specialized
 * producer's loops), and a stack slot in the entry block. The IR's own
 * for / if / while are cg_control.c's (they carry block values in layouts).
 *
 * Blocks are appended to the function in the order these calls make them;
 * the PTX's block order follows that order, so each builder appends its
 * blocks in one fixed order (written at each).
 */
#include "cg_internal.h"

LLVMBasicBlockRef cg_block(cg_ctx *C, const char *name) {
    return LLVMAppendBasicBlockInContext(C->llc, C->fn, name);
}

void cg_phi_add(LLVMValueRef phi, LLVMValueRef v, LLVMBasicBlockRef from) {
    LLVMAddIncoming(phi, &v, &from, 1);
}

void cg_branch(cg_ctx *C, LLVMValueRef cond, const char *then_name, LLVMBasicBlockRef *then, const char *else_name,
               LLVMBasicBlockRef *other) {
    *then = cg_block(C, then_name);
    *other = cg_block(C, else_name);
    LLVMBuildCondBr(C->b, cond, *then, *other);
}

/* Appends `name`, then `join_name`; the body runs when cond == when. */
static cg_if if_begin(cg_ctx *C, LLVMValueRef cond, bool when, const char *name, const char *join_name) {
    cg_if I = {LLVMGetInsertBlock(C->b), NULL};
    LLVMBasicBlockRef body = cg_block(C, name);
    I.join = cg_block(C, join_name);
    LLVMBuildCondBr(C->b, cond, when ? body : I.join, when ? I.join : body);
    LLVMPositionBuilderAtEnd(C->b, body);
    return I;
}

cg_if cg_if_begin(cg_ctx *C, LLVMValueRef cond, const char *name, const char *join_name) {
    return if_begin(C, cond, true, name, join_name);
}

cg_if cg_if_not_begin(cg_ctx *C, LLVMValueRef cond, const char *name, const char *join_name) {
    return if_begin(C, cond, false, name, join_name);
}

LLVMBasicBlockRef cg_if_end(cg_ctx *C, const cg_if *I) {
    LLVMBasicBlockRef end = LLVMGetInsertBlock(C->b);
    LLVMBuildBr(C->b, I->join);
    LLVMPositionBuilderAtEnd(C->b, I->join);
    return end;
}

/* Appends the header `name`, the body `body_name` when given (else
 * cg_loop_test appends it, or the header is the body), the exit. */
cg_loop cg_loop_begin(cg_ctx *C, LLVMTypeRef ivt, LLVMValueRef init, const char *name, const char *body_name,
                      const char *exit_name) {
    cg_loop L = {LLVMGetInsertBlock(C->b), cg_block(C, name), NULL, NULL, NULL};
    if (body_name) L.body = cg_block(C, body_name);
    L.exit = cg_block(C, exit_name);
    LLVMBuildBr(C->b, L.head);
    LLVMPositionBuilderAtEnd(C->b, L.head);
    L.iv = cg_loop_phi(C, &L, ivt, init);
    return L;
}

LLVMValueRef cg_loop_phi(cg_ctx *C, const cg_loop *L, LLVMTypeRef t, LLVMValueRef init) {
    LLVMValueRef phi = LLVMBuildPhi(C->b, t, "");
    cg_phi_add(phi, init, L->pre);
    return phi;
}

void cg_loop_test(cg_ctx *C, cg_loop *L, LLVMValueRef go, const char *body_name) {
    LLVMBasicBlockRef body = L->body ? L->body : (L->body = cg_block(C, body_name));
    LLVMBuildCondBr(C->b, go, body, L->exit);
    LLVMPositionBuilderAtEnd(C->b, body);
}

/* The latch: iv's next value, then back to the header (go == NULL) or, for
 * a loop tested at its bottom, back while go holds. */
static LLVMBasicBlockRef loop_end(cg_ctx *C, const cg_loop *L, LLVMValueRef next, LLVMValueRef go) {
    LLVMBasicBlockRef latch = LLVMGetInsertBlock(C->b);
    cg_phi_add(L->iv, next, latch);
    if (go) LLVMBuildCondBr(C->b, go, L->head, L->exit);
    else LLVMBuildBr(C->b, L->head);
    LLVMPositionBuilderAtEnd(C->b, L->exit);
    return latch;
}

LLVMBasicBlockRef cg_loop_end(cg_ctx *C, const cg_loop *L, LLVMValueRef next) {
    return loop_end(C, L, next, NULL);
}

LLVMBasicBlockRef cg_loop_end_while(cg_ctx *C, const cg_loop *L, LLVMValueRef next, LLVMValueRef go) {
    return loop_end(C, L, next, go);
}

/* Before the entry block's first instruction: NVPTX gives a static alloca
 * a fixed local-memory slot, where one inside a loop would be dynamic. */
LLVMValueRef cg_entry_alloca(cg_ctx *C, LLVMTypeRef t, const char *name) {
    LLVMBasicBlockRef cur = LLVMGetInsertBlock(C->b), entry = LLVMGetEntryBasicBlock(C->fn);
    LLVMValueRef first = LLVMGetFirstInstruction(entry);
    if (first) LLVMPositionBuilderBefore(C->b, first);
    else LLVMPositionBuilderAtEnd(C->b, entry);
    LLVMValueRef a = LLVMBuildAlloca(C->b, t, name);
    LLVMPositionBuilderAtEnd(C->b, cur);
    return a;
}

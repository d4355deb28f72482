/* cg_memory.c — load, store and atomics on global memory.
 *
 * A thread's registers of a block access come in groups of `vec`
 * consecutive elements along the layout's fastest dim; a group is one
 * vector access (ld.global.v4.f32: 16 bytes) when axisinfo proves that the
 * pointers of the group are contiguous, the first is aligned to the vector's
 * size and the mask is uniform over the group: the vectorize pass
 * (passes/vectorize.c) decides each access's layout and width, this file
 * performs the access exactly so.
 *
 * Masks: a masked-off element performs no memory access (ops.def). Masked
 * loads and stores are inline PTX with a predicate (`@p ld.global...`), as
 * are accesses with cache modifiers / eviction hints; plain unmasked
 * accesses are LLVM loads/stores with the proven alignment, so LLVM can
 * still optimise them. Masked-off load lanes take `other` (0 when absent).
 *
 * Atomics are LLVM atomicrmw/cmpxchg in the instruction's scope (syncscope
 * "block"/"device" = .cta/.gpu; LLVM 22 prints read-modify-writes without
 * a scope, i.e. .gpu, which includes .cta) executed only by the element's
 * canonical owner (replicated layouts hold an element in several threads;
 * each element must be updated once), under a branch on the mask. A scalar
 * atomic runs in thread 0 and its old value is shared with the block
 * through shared memory.
 *
 * Ordering (sem): LLVM 22's NVPTX backend drops the ordering of atomicrmw
 * (an acq_rel add became a plain `atom.global.add`, which PTX reads as
 * .relaxed), so read-modify-writes are emitted relaxed and the ordering is
 * made with fences, the PTX memory model's release and acquire patterns:
 * `fence.acq_rel.scope` before the atomic (release, acq_rel) and after it
 * (acquire, acq_rel). cmpxchg keeps its ordering (`atom.acq_rel.gpu.cas`).
 * A scalar atomic that releases is preceded by a CTA barrier, so the
 * release covers the writes of every thread of the program, not only of
 * thread 0 (message passing: store the data, then release a flag).
 *
 * Tensor-descriptor loads/stores (desc_load / desc_store) are the same
 * predicated accesses with the address and bounds mask computed from the
 * descriptor's dims, strides and offsets (lower_desc).
 */
#include <stdio.h>
#include <string.h>

#include "cg_internal.h"

/* PTX spelling of one access word */
typedef struct {
    int words;          /* number of words */
    int word_bytes;     /* 1, 2, 4, 8 */
    const char *ptx;    /* "f32", "b32", "u8", ... */
    const char *cons;   /* "f", "r", "h", "l", "d" */
    LLVMTypeRef ty;     /* LLVM type of a word */
    bool packed;        /* elements narrower than a word: bitcast through a vector */
} mem_words;

static mem_words words_for(cg_ctx *C, blk_dtype t, int vec) {
    int eb = dtype_bytes(t);
    mem_words w = {0};
    if (eb >= 4) {
        w.words = vec;
        w.word_bytes = eb;
        switch (t) {
        case DT_F32: w.ptx = "f32"; w.cons = "f"; w.ty = C->f32; break;
        case DT_F64: w.ptx = "f64"; w.cons = "d"; w.ty = C->f64; break;
        case DT_I32: case DT_U32: w.ptx = "b32"; w.cons = "r"; w.ty = C->i32; break;
        default: w.ptx = "b64"; w.cons = "l"; w.ty = C->i64; break;
        }
        return w;
    }
    int bytes = eb * vec;
    w.packed = true;
    if (bytes >= 4) { w.words = bytes / 4; w.word_bytes = 4; w.ptx = "b32"; w.cons = "r"; w.ty = C->i32; }
    else if (bytes == 2) { w.words = 1; w.word_bytes = 2; w.ptx = "b16"; w.cons = "h"; w.ty = C->i16; }
    else { w.words = 1; w.word_bytes = 1; w.ptx = "u8"; w.cons = "h"; w.ty = C->i16; }
    return w;
}

/* element values (register types) -> words */
static void pack_words(cg_ctx *C, blk_dtype t, const mem_words *w, LLVMValueRef *elems, int vec, LLVMValueRef *out) {
    LLVMBuilderRef b = C->b;
    LLVMTypeRef mt = cg_mem_type(C, t);
    LLVMValueRef e[16];
    for (int i = 0; i < vec; i++) {
        e[i] = elems[i];
        if (t == DT_BOOL) e[i] = LLVMBuildZExt(b, e[i], C->i8, "");
    }
    if (!w->packed) {
        for (int i = 0; i < vec; i++) out[i] = t == DT_PTR ? LLVMBuildPtrToInt(b, e[i], C->i64, "") : e[i];
        return;
    }
    if (w->word_bytes == 1) { out[0] = LLVMBuildZExt(b, e[0], C->i16, ""); return; }
    LLVMValueRef v = LLVMGetUndef(LLVMVectorType(mt, (unsigned)vec));
    for (int i = 0; i < vec; i++) v = LLVMBuildInsertElement(b, v, e[i], cg_const_i32(C, i), "");
    if (w->words == 1) { out[0] = LLVMBuildBitCast(b, v, w->ty, ""); return; }
    LLVMValueRef wv = LLVMBuildBitCast(b, v, LLVMVectorType(w->ty, (unsigned)w->words), "");
    for (int i = 0; i < w->words; i++) out[i] = LLVMBuildExtractElement(b, wv, cg_const_i32(C, i), "");
}

static void unpack_words(cg_ctx *C, blk_dtype t, const mem_words *w, LLVMValueRef *words, int vec, LLVMValueRef *out) {
    LLVMBuilderRef b = C->b;
    LLVMTypeRef mt = cg_mem_type(C, t);
    if (!w->packed) {
        for (int i = 0; i < vec; i++) out[i] = t == DT_PTR ? LLVMBuildIntToPtr(b, words[i], C->ptr1, "") : words[i];
    } else if (w->word_bytes == 1) {
        out[0] = LLVMBuildTrunc(b, words[0], C->i8, "");
    } else {
        /* element i is bits [8*eb*i, 8*eb*(i+1)) of the little-endian words:
         * integer shifts, not a bitcast to a vector of halves, so that LLVM
         * folds the bf16 -> f32 widening that usually follows into one
         * `and` (high half) or `shl` (low half) of the word */
        int eb = dtype_bytes(t) < 1 ? 1 : dtype_bytes(t), per = w->word_bytes / eb;
        LLVMTypeRef et = LLVMIntTypeInContext(C->llc, (unsigned)(8 * eb));
        for (int i = 0; i < vec; i++) {
            LLVMValueRef wd = words[i / per];
            int sh = 8 * eb * (i % per);
            if (sh) wd = LLVMBuildLShr(b, wd, LLVMConstInt(w->ty, (unsigned long long)sh, 0), "");
            LLVMValueRef e = LLVMBuildTrunc(b, wd, et, "");
            out[i] = LLVMGetTypeKind(mt) == LLVMIntegerTypeKind ? e : LLVMBuildBitCast(b, e, mt, "");
        }
    }
    if (t == DT_BOOL)
        for (int i = 0; i < vec; i++) out[i] = LLVMBuildICmp(b, LLVMIntNE, out[i], LLVMConstInt(C->i8, 0, 0), "");
}

void cg_load_vec(cg_ctx *C, blk_dtype t, int vec, LLVMValueRef p, LLVMValueRef *out) {
    LLVMBuilderRef b = C->b;
    int eb = dtype_bytes(t);
    mem_words w = words_for(C, t, vec);
    if (w.packed && w.word_bytes == 4) { /* halves / bytes: as words, unpacked by shifts */
        LLVMTypeRef lt = w.words == 1 ? w.ty : LLVMVectorType(w.ty, (unsigned)w.words);
        LLVMValueRef v = LLVMBuildLoad2(b, lt, p, ""), words[4];
        LLVMSetAlignment(v, (unsigned)(eb * vec));
        for (int i = 0; i < w.words; i++) words[i] = w.words == 1 ? v : LLVMBuildExtractElement(b, v, cg_const_i32(C, i), "");
        unpack_words(C, t, &w, words, vec, out);
        return;
    }
    LLVMTypeRef mt = cg_mem_type(C, t);
    LLVMTypeRef lt = vec == 1 ? mt : LLVMVectorType(mt, (unsigned)vec);
    LLVMValueRef v = LLVMBuildLoad2(b, lt, p, "");
    LLVMSetAlignment(v, (unsigned)(eb * vec));
    for (int i = 0; i < vec; i++) {
        LLVMValueRef e = vec == 1 ? v : LLVMBuildExtractElement(b, v, cg_const_i32(C, i), "");
        out[i] = t == DT_BOOL ? LLVMBuildICmp(b, LLVMIntNE, e, LLVMConstInt(C->i8, 0, 0), "") : e;
    }
}

static const char *cache_suffix(ir_inst *in) {
    switch (in->eviction) {
    case IR_EVICT_FIRST: return ".L1::evict_first";
    case IR_EVICT_LAST: return ".L1::evict_last";
    case IR_EVICT_NORMAL: return ".L1::evict_normal";
    default: break;
    }
    switch (in->cache) {
    case IR_CACHE_CA: return ".ca";
    case IR_CACHE_CG: return ".cg";
    case IR_CACHE_CS: return ".cs";
    default: return "";
    }
}

static bool needs_asm(ir_inst *in, bool masked) {
    return masked || in->cache != IR_CACHE_DEFAULT || in->eviction != IR_EVICT_DEFAULT || (in->flags & IRF_VOLATILE);
}

/* One (vector) load of `vec` elements at p; pred may be NULL. With pred,
 * `other` (vec element values) is what a masked-off group yields. For a
 * vector group the words of other are tied to the asm's outputs (LLVM moves
 * them into the output registers before `@p ld`), so a lane that skips the
 * load keeps them: one move per 32-bit word instead of a select per element
 * (8 selp for a v4 of bf16). pred is the whole group's mask: vectorize only
 * groups elements whose mask is the same (constancy), so this is exactly
 * where(mask, load, other). A single element keeps the select after the
 * load (lower_load), which ptxas drops where the value is only used under
 * the same predicate (a masked copy); it cannot drop the move. tie: tie
 * other for a single element too (lower_load: dot operands). */
static void load_group(cg_ctx *C, ir_inst *in, blk_dtype t, int vec, LLVMValueRef p, LLVMValueRef pred,
                       LLVMValueRef *other, bool tie, LLVMValueRef *out) {
    if (!needs_asm(in, pred != NULL)) {
        cg_load_vec(C, t, vec, p, out);
        return;
    }
    LLVMBuilderRef b = C->b;
    mem_words w = words_for(C, t, vec);
    char text[256], cons[256];
    int pos = 0, cpos = 0;
    int nout = w.words;
    if (pred) pos += snprintf(text + pos, sizeof text - (size_t)pos, "@$%d ", nout);
    pos += snprintf(text + pos, sizeof text - (size_t)pos, "ld%s.global%s%s.%s ", (in->flags & IRF_VOLATILE) ? ".volatile" : "",
                    (in->flags & IRF_VOLATILE) ? "" : cache_suffix(in), nout > 1 ? (nout == 2 ? ".v2" : ".v4") : "", w.ptx);
    if (nout > 1) pos += snprintf(text + pos, sizeof text - (size_t)pos, "{");
    for (int i = 0; i < nout; i++) {
        pos += snprintf(text + pos, sizeof text - (size_t)pos, "%s$%d", i ? ", " : "", i);
        cpos += snprintf(cons + cpos, sizeof cons - (size_t)cpos, "%s=%s", i ? "," : "", w.cons);
    }
    if (nout > 1) pos += snprintf(text + pos, sizeof text - (size_t)pos, "}");
    snprintf(text + pos, sizeof text - (size_t)pos, ", [$%d];", nout + (pred ? 1 : 0));
    if (pred) cpos += snprintf(cons + cpos, sizeof cons - (size_t)cpos, ",b");
    cpos += snprintf(cons + cpos, sizeof cons - (size_t)cpos, ",l");
    LLVMValueRef args[2 + 4];
    int na = 0;
    if (pred) args[na++] = pred;
    args[na++] = p;
    if (pred && tie) { /* the masked-off value, tied to output i */
        pack_words(C, t, &w, other, vec, args + na);
        for (int i = 0; i < nout; i++) cpos += snprintf(cons + cpos, sizeof cons - (size_t)cpos, ",%d", i);
        na += nout;
    }
    snprintf(cons + cpos, sizeof cons - (size_t)cpos, ",~{memory}");
    LLVMTypeRef rt = w.ty;
    if (nout > 1) {
        LLVMTypeRef f[4] = {w.ty, w.ty, w.ty, w.ty};
        rt = LLVMStructTypeInContext(C->llc, f, (unsigned)nout, 0);
    }
    LLVMValueRef r = cg_inline_asm(C, rt, text, cons, args, na, true);
    LLVMValueRef words[4];
    for (int i = 0; i < nout; i++) words[i] = nout > 1 ? LLVMBuildExtractValue(b, r, (unsigned)i, "") : r;
    unpack_words(C, t, &w, words, vec, out);
}

static void store_group(cg_ctx *C, ir_inst *in, blk_dtype t, int vec, LLVMValueRef p, LLVMValueRef pred, LLVMValueRef *vals) {
    LLVMBuilderRef b = C->b;
    int eb = dtype_bytes(t);
    if (!needs_asm(in, pred != NULL)) {
        LLVMTypeRef mt = cg_mem_type(C, t);
        LLVMValueRef v;
        if (vec == 1) v = t == DT_BOOL ? LLVMBuildZExt(b, vals[0], C->i8, "") : vals[0];
        else {
            v = LLVMGetUndef(LLVMVectorType(mt, (unsigned)vec));
            for (int i = 0; i < vec; i++)
                v = LLVMBuildInsertElement(b, v, t == DT_BOOL ? LLVMBuildZExt(b, vals[i], C->i8, "") : vals[i], cg_const_i32(C, i), "");
        }
        LLVMValueRef s = LLVMBuildStore(b, v, p);
        LLVMSetAlignment(s, (unsigned)(eb * vec));
        return;
    }
    mem_words w = words_for(C, t, vec);
    LLVMValueRef args[8];
    int na = 0;
    char text[256], cons[256];
    int pos = 0, cpos = 0;
    if (pred) {
        args[na++] = pred;
        pos += snprintf(text + pos, sizeof text - (size_t)pos, "@$0 ");
        cpos += snprintf(cons + cpos, sizeof cons - (size_t)cpos, "b,");
    }
    int pidx = na;
    args[na++] = p;
    cpos += snprintf(cons + cpos, sizeof cons - (size_t)cpos, "l");
    const char *cs = cache_suffix(in);
    if (in->eviction == IR_EVICT_DEFAULT && in->cache == IR_CACHE_CA) cs = ""; /* .ca is a load-only modifier */
    pos += snprintf(text + pos, sizeof text - (size_t)pos, "st.global%s%s.%s [$%d], ", cs,
                    w.words > 1 ? (w.words == 2 ? ".v2" : ".v4") : "", w.ptx, pidx);
    LLVMValueRef words[4];
    pack_words(C, t, &w, vals, vec, words);
    if (w.words > 1) pos += snprintf(text + pos, sizeof text - (size_t)pos, "{");
    for (int i = 0; i < w.words; i++) {
        pos += snprintf(text + pos, sizeof text - (size_t)pos, "%s$%d", i ? ", " : "", na);
        cpos += snprintf(cons + cpos, sizeof cons - (size_t)cpos, ",%s", w.cons);
        args[na++] = words[i];
    }
    if (w.words > 1) pos += snprintf(text + pos, sizeof text - (size_t)pos, "}");
    snprintf(text + pos, sizeof text - (size_t)pos, ";");
    snprintf(cons + cpos, sizeof cons - (size_t)cpos, ",~{memory}");
    cg_inline_asm(C, C->vd, text, cons, args, na, true);
}

/* blkc -R: the width of this access in this entry and what limited it
 * (vectorize.h), where the access is written. -Rpass-missed: only the
 * accesses narrower than the widest (atomics and scalars are what they are). */
static void remark_access(cg_ctx *C, ir_inst *in, const vec_access *e) {
    bool missed = e->limit != VEC_WIDEST && e->limit != VEC_SCALAR && e->limit != VEC_ATOMIC && e->limit != VEC_ACC &&
                  e->limit != VEC_ACC_QUAD;
    if (!(C->remarks & CG_REMARKS) && !missed) return;
    ir_value *p = in->operands[0];
    static const char *const what[] = {[IR_LOAD] = "load", [IR_STORE] = "store", [IR_ATOMIC_RMW] = "atomic",
                                       [IR_ATOMIC_CAS] = "atomic_cas", [IR_DESC_LOAD] = "descriptor load",
                                       [IR_DESC_STORE] = "descriptor store"};
    const char *w = in->op < (int)(sizeof what / sizeof what[0]) && what[in->op] ? what[in->op] : "access";
    diag_remark(C->diag, in->loc, "%s of %s in %s: %d x %s = %d bytes per access (%s)", w,
                p->type.rank ? "a block" : "a scalar", C->entry ? C->entry : C->f->name, e->vec,
                dtype_name((blk_dtype)p->type.pointee), e->bytes ? e->bytes : e->vec * dtype_bytes((blk_dtype)p->type.pointee),
                vec_limit_name(e->limit));
}

/* The access's layout and width, as the vectorize pass decided them. */
static const vec_access *access_of(cg_ctx *C, ir_inst *in) {
    static const vec_access scalar = {NULL, 1, 0, VEC_SCALAR};
    const vec_access *e = vec_get(C->vt, in);
    if (!e) {
        cg_error(C, in->loc, "internal error: the vectorize pass left %s without an entry", ir_op_table[in->op].name);
        C->failed = true;
        return &scalar;
    }
    if (C->remarks) remark_access(C, in, e);
    return e;
}

/* Whether a dot of the load's region reads its result (or its trans) as a
 * or b. Such a
 * value goes to shared memory whatever the mask (the dot stages it), so
 * ptxas cannot drop a select after the load; a tied `other` costs the same
 * one move per element and lets the predicate die at the load instead of
 * living until the store: in the fallback variant of matmul (one-element
 * loads) 96 predicates stayed live across the staging barrier and spilled. */
static bool read_by_dot(ir_inst *in) {
    for (ir_inst *i = in->parent ? in->parent->first : NULL; i; i = i->next)
        if (i->op == IR_DOT && (cg_operand_reads(i->operands[0], in->results[0]) ||
                                cg_operand_reads(i->operands[1], in->results[0])))
            return true;
    return false;
}

void cg_load_prepare(cg_ctx *C, ir_inst *in, cg_load_parts *P) {
    ir_value *r = in->results[0], *ptr = in->operands[0];
    ir_value *mask = in->num_operands > 1 ? in->operands[1] : NULL, *other = in->num_operands > 2 ? in->operands[2] : NULL;
    const vec_access *acc = access_of(C, in);
    const lay_layout *l = r->type.rank ? acc->lay : NULL;
    if (r->type.rank && !l) l = cg_lay(C, r);
    *P = (cg_load_parts){.ld = in, .vec = l ? acc->vec : 1};
    P->p = cg_get(C, ptr, l);
    if (mask) P->m = cg_get(C, mask, l);
    if (other) P->o = cg_get(C, other, l);
    P->v = cg_new_val(C, l ? lay_num_regs(l, r->type.shape, NULL) : 1, l);
}

void cg_load_part(cg_ctx *C, cg_load_parts *P, int r0, int r1) {
    ir_inst *in = P->ld;
    blk_dtype t = (blk_dtype)in->results[0]->type.dtype;
    int vec = P->vec, n = P->v.n;
    bool tie = vec > 1 || read_by_dot(in);
    for (int i = r0; i < r1 && i < n; i += vec) {
        LLVMValueRef pred = P->m.set ? P->m.v[P->m.n == n ? i : 0] : NULL, o[16];
        for (int j = 0; j < vec; j++) o[j] = P->o.set ? P->o.v[P->o.n == n ? i + j : 0] : LLVMConstNull(cg_type(C, t));
        load_group(C, in, t, vec, P->p.v[P->p.n == n ? i : 0], pred, o, tie, P->v.v + i);
        if (pred && !tie) P->v.v[i] = LLVMBuildSelect(C->b, pred, P->v.v[i], o[0], "");
    }
}

/* A load that a dot stages itself (cg_dot_stages_load) is only prepared
 * here: the dot issues it chunk by chunk after its first barrier. */
static void lower_load(cg_ctx *C, ir_inst *in) {
    cg_load_parts P;
    cg_load_prepare(C, in, &P);
    if (C->num_staged < CG_MAX_STAGED && cg_dot_stages_load(C, in)) {
        C->staged[C->num_staged++] = P;
        return;
    }
    cg_load_part(C, &P, 0, P.v.n);
    cg_set(C, in->results[0], P.v);
}

/* VEC_ACC_QUAD (vectorize.c quad_ok): per row of the thread and group of 4
 * adjacent 8-column blocks j0..j0+3, lane q of a quad holds a pair (one
 * 32-bit word) of each block, at columns 8 (j0 + b) + 2q; transposed across
 * the quad (butterfly: exchange halves with lane q ^ 2, then with q ^ 1),
 * lane q holds block j0 + q's 8 columns in order and writes them as one
 * 16-byte access, at its own pair's pointer of that block less 2q elements
 * (8 consecutive pointers: proven), under that pair's mask (constant over
 * the 8). False, nothing emitted, where the registers are not in that
 * shape. */
static bool store_quads(cg_ctx *C, ir_inst *in, const lay_layout *l, cg_val pv, cg_val vv, cg_val mv, int n) {
    LLVMBuilderRef b = C->b;
    ir_value *ptr = in->operands[0];
    blk_dtype t = (blk_dtype)in->operands[1]->type.dtype;
    cg_lay_info li;
    cg_lay_info_get(C, l, 2, ptr->type.shape, &li);
    if (li.nregs != n || li.n[1] % 8 || pv.n != n || vv.n != n || (mv.set && mv.n != n && mv.n != 1)) return false;
    for (int r = 0; r < n; r++) { /* the shape: off[1] = 8 block + element, k[1] = 2 block + element */
        int k[IR_MAX_RANK];
        int64_t off[IR_MAX_RANK];
        cg_reg_index(&li, r, k);
        cg_reg_offsets(&li, r, off);
        if (off[1] != (int64_t)(k[1] / 2) * 8 + k[1] % 2) return false;
    }
    LLVMValueRef q = LLVMBuildAnd(b, C->lane, cg_const_i32(C, 3), "");
    LLVMValueRef bit0 = LLVMBuildICmp(b, LLVMIntNE, LLVMBuildAnd(b, q, cg_const_i32(C, 1), ""), cg_const_i32(C, 0), "");
    LLVMValueRef bit1 = LLVMBuildICmp(b, LLVMIntNE, LLVMBuildAnd(b, q, cg_const_i32(C, 2), ""), cg_const_i32(C, 0), "");
    LLVMTypeRef et = cg_type(C, t), pair = LLVMVectorType(et, 2);
    /* lane q's first element of its block: 2q elements before its own pair */
    LLVMValueRef back = LLVMBuildMul(b, q, cg_const_i32(C, -2 * dtype_bytes(t)), "");
    for (int r = 0; r < n; r++) {
        int k[IR_MAX_RANK];
        cg_reg_index(&li, r, k);
        if (k[1] % 8) continue; /* not the first register of a group */
        LLVMValueRef w[4], p[4], m[4];
        for (int j = 0; j < 4; j++) {
            int kk[IR_MAX_RANK] = {k[0], k[1] + 2 * j}, r0 = cg_reg_of(&li, kk);
            kk[1]++;
            int r1 = cg_reg_of(&li, kk);
            LLVMValueRef v = LLVMBuildInsertElement(b, LLVMGetUndef(pair), vv.v[r0], cg_const_i32(C, 0), "");
            v = LLVMBuildInsertElement(b, v, vv.v[r1], cg_const_i32(C, 1), "");
            w[j] = LLVMBuildBitCast(b, v, C->i32, "");
            p[j] = pv.v[r0];
            m[j] = mv.set ? mv.v[mv.n == n ? r0 : 0] : NULL;
        }
        /* stage 1, lanes q and q ^ 2: the lower pair of lanes keeps words
         * 0, 1 and takes the other's 0, 1 as its 2, 3; the upper keeps 2, 3 */
        LLVMValueRef x0 = LLVMBuildSelect(b, bit1, w[0], w[2], ""), x1 = LLVMBuildSelect(b, bit1, w[1], w[3], "");
        LLVMValueRef y0 = cg_shfl_bfly(C, x0, cg_const_i32(C, 2)), y1 = cg_shfl_bfly(C, x1, cg_const_i32(C, 2));
        LLVMValueRef c[4]; /* one statement each: an initializer list's order is unspecified */
        c[0] = LLVMBuildSelect(b, bit1, y0, w[0], "");
        c[1] = LLVMBuildSelect(b, bit1, y1, w[1], "");
        c[2] = LLVMBuildSelect(b, bit1, w[2], y0, "");
        c[3] = LLVMBuildSelect(b, bit1, w[3], y1, "");
        /* stage 2, lanes q and q ^ 1: even lanes keep words 0, 2, odd 1, 3 */
        x0 = LLVMBuildSelect(b, bit0, c[0], c[1], "");
        x1 = LLVMBuildSelect(b, bit0, c[2], c[3], "");
        y0 = cg_shfl_bfly(C, x0, cg_const_i32(C, 1));
        y1 = cg_shfl_bfly(C, x1, cg_const_i32(C, 1));
        LLVMValueRef d[4];
        d[0] = LLVMBuildSelect(b, bit0, y0, c[0], "");
        d[1] = LLVMBuildSelect(b, bit0, c[1], y0, "");
        d[2] = LLVMBuildSelect(b, bit0, y1, c[2], "");
        d[3] = LLVMBuildSelect(b, bit0, c[3], y1, "");
        LLVMValueRef hi = LLVMBuildSelect(b, bit0, p[3], p[2], ""), lo = LLVMBuildSelect(b, bit0, p[1], p[0], "");
        LLVMValueRef own = LLVMBuildSelect(b, bit1, hi, lo, "");
        LLVMValueRef at = LLVMBuildGEP2(b, C->i8, own, &back, 1, "");
        LLVMValueRef pred = NULL;
        if (m[0]) {
            hi = LLVMBuildSelect(b, bit0, m[3], m[2], "");
            lo = LLVMBuildSelect(b, bit0, m[1], m[0], "");
            pred = LLVMBuildSelect(b, bit1, hi, lo, "");
        }
        LLVMValueRef vals[8];
        for (int j = 0; j < 4; j++) {
            LLVMValueRef v = LLVMBuildBitCast(b, d[j], pair, "");
            vals[2 * j] = LLVMBuildExtractElement(b, v, cg_const_i32(C, 0), "");
            vals[2 * j + 1] = LLVMBuildExtractElement(b, v, cg_const_i32(C, 1), "");
        }
        store_group(C, in, t, 8, at, pred, vals);
    }
    return true;
}

static void lower_store(cg_ctx *C, ir_inst *in) {
    if (cg_tma_store(C, in)) return;
    ir_value *ptr = in->operands[0], *val = in->operands[1];
    ir_value *mask = in->num_operands > 2 ? in->operands[2] : NULL;
    blk_dtype t = (blk_dtype)val->type.dtype;
    const vec_access *acc = access_of(C, in);
    const lay_layout *l = ptr->type.rank ? acc->lay : NULL;
    if (ptr->type.rank && !l) l = cg_lay(C, ptr);
    cg_val pv = cg_get(C, ptr, l), vv = cg_get(C, val, l), mv = {0};
    if (mask) mv = cg_get(C, mask, l);
    int vec = l ? acc->vec : 1, n = l ? lay_num_regs(l, ptr->type.shape, NULL) : 1;
    if (l && acc->limit == VEC_ACC_QUAD) {
        if (store_quads(C, in, l, pv, vv, mv, n)) return;
        vec = 2; /* not the registers quad_ok expects: the pairs as they are */
    }
    /* A scalar store is one store of the program, done by thread 0: were
     * every thread to store, `store(c, load(c) + 1)` would add once per warp
     * that loads after another warp's store (seen under compute-sanitizer). */
    LLVMValueRef first = ptr->type.rank ? NULL : LLVMBuildICmp(C->b, LLVMIntEQ, C->tid, cg_const_i32(C, 0), "");
    for (int i = 0; i < n; i += vec) {
        LLVMValueRef pred = mask ? mv.v[mv.n == n ? i : 0] : NULL;
        if (first) pred = pred ? LLVMBuildAnd(C->b, pred, first, "") : first;
        LLVMValueRef vals[16];
        for (int j = 0; j < vec; j++) vals[j] = vv.v[vv.n == n ? i + j : 0];
        store_group(C, in, t, vec, pv.v[pv.n == n ? i : 0], pred, vals);
    }
}

static LLVMAtomicRMWBinOp rmw_op(cg_ctx *C, ir_inst *in, blk_dtype t) {
    bool fl = dtype_is_float(t), s = dtype_is_signed(t);
    switch (in->kind) {
    case IR_ATOM_ADD: return fl ? LLVMAtomicRMWBinOpFAdd : LLVMAtomicRMWBinOpAdd;
    case IR_ATOM_MAX: return fl ? LLVMAtomicRMWBinOpFMax : s ? LLVMAtomicRMWBinOpMax : LLVMAtomicRMWBinOpUMax;
    case IR_ATOM_MIN: return fl ? LLVMAtomicRMWBinOpFMin : s ? LLVMAtomicRMWBinOpMin : LLVMAtomicRMWBinOpUMin;
    case IR_ATOM_AND: return LLVMAtomicRMWBinOpAnd;
    case IR_ATOM_OR: return LLVMAtomicRMWBinOpOr;
    case IR_ATOM_XOR: return LLVMAtomicRMWBinOpXor;
    default: (void)C; return LLVMAtomicRMWBinOpXchg;
    }
}

/* One atomic on element i, executed when pred holds; returns the old value
 * (undef where pred is false). */
static LLVMValueRef atomic_one(cg_ctx *C, ir_inst *in, blk_dtype t, LLVMValueRef p, LLVMValueRef cmp, LLVMValueRef val,
                               LLVMValueRef pred) {
    LLVMBuilderRef b = C->b;
    cg_if guard = cg_if_begin(C, pred, "atom", "atom.join");
    static const char *const scope_names[] = {"device", "block"}; /* ir_scope */
    const char *sn = scope_names[in->scope == IR_SCOPE_CTA];
    unsigned scope = LLVMGetSyncScopeID(C->llc, sn, strlen(sn));
    bool acquire = in->sem == IR_SEM_ACQ_REL || in->sem == IR_SEM_ACQUIRE;
    bool release = in->sem == IR_SEM_ACQ_REL || in->sem == IR_SEM_RELEASE;
    LLVMAtomicOrdering ord = acquire && release ? LLVMAtomicOrderingAcquireRelease
                           : acquire ? LLVMAtomicOrderingAcquire
                           : release ? LLVMAtomicOrderingRelease : LLVMAtomicOrderingMonotonic;
    LLVMValueRef old;
    LLVMTypeRef ty = cg_type(C, t);
    if (t == DT_BOOL) val = LLVMBuildZExt(b, val, C->i8, "");
    if (in->op == IR_ATOMIC_CAS) {
        LLVMTypeRef it = LLVMIntTypeInContext(C->llc, (unsigned)dtype_bytes(t) * 8);
        LLVMValueRef c = t == DT_BOOL ? LLVMBuildZExt(b, cmp, C->i8, "") : cmp;
        if (dtype_is_float(t)) { c = LLVMBuildBitCast(b, c, it, ""); val = LLVMBuildBitCast(b, val, it, ""); }
        LLVMValueRef x = LLVMBuildAtomicCmpXchg(b, p, c, val, ord,
                                                acquire ? LLVMAtomicOrderingAcquire : LLVMAtomicOrderingMonotonic, 0);
        LLVMSetAtomicSyncScopeID(x, scope);
        old = LLVMBuildExtractValue(b, x, 0, "");
        if (dtype_is_float(t)) old = LLVMBuildBitCast(b, old, ty, "");
    } else {
        if (release) LLVMBuildFenceSyncScope(b, LLVMAtomicOrderingAcquireRelease, scope, "");
        old = LLVMBuildAtomicRMWSyncScope(b, rmw_op(C, in, t), p, val, LLVMAtomicOrderingMonotonic, scope);
        if (acquire) LLVMBuildFenceSyncScope(b, LLVMAtomicOrderingAcquireRelease, scope, "");
    }
    if (t == DT_BOOL) old = LLVMBuildICmp(b, LLVMIntNE, old, LLVMConstInt(C->i8, 0, 0), "");
    LLVMBasicBlockRef done = cg_if_end(C, &guard);
    LLVMValueRef phi = LLVMBuildPhi(b, ty, "");
    LLVMValueRef in_v[2] = {old, LLVMGetUndef(ty)};
    LLVMBasicBlockRef in_b[2] = {done, guard.from};
    LLVMAddIncoming(phi, in_v, in_b, 2);
    return phi;
}

static void lower_atomic(cg_ctx *C, ir_inst *in) {
    ir_value *r = in->results[0], *ptr = in->operands[0];
    bool cas = in->op == IR_ATOMIC_CAS;
    ir_value *cmp = cas ? in->operands[1] : NULL, *val = in->operands[cas ? 2 : 1];
    ir_value *mask = in->num_operands > (cas ? 3 : 2) ? in->operands[cas ? 3 : 2] : NULL;
    blk_dtype t = (blk_dtype)val->type.dtype;
    const lay_layout *l = r->type.rank ? cg_lay(C, r) : NULL;
    cg_val pv = cg_get(C, ptr, l), vv = cg_get(C, val, l), cv = {0}, mv = {0};
    if (cmp) cv = cg_get(C, cmp, l);
    if (mask) mv = cg_get(C, mask, l);
    if (!l) {
        if (in->sem == IR_SEM_ACQ_REL || in->sem == IR_SEM_RELEASE) cg_barrier(C); /* every thread's writes first */
        LLVMValueRef pred = LLVMBuildICmp(C->b, LLVMIntEQ, C->tid, cg_const_i32(C, 0), "");
        if (mask) pred = LLVMBuildAnd(C->b, pred, mv.v[0], "");
        LLVMValueRef old = atomic_one(C, in, t, pv.v[0], cmp ? cv.v[0] : NULL, vv.v[0], pred);
        /* thread 0 -> everyone */
        LLVMValueRef sm = cg_smem(C, in->loc, 8);
        LLVMTypeRef mt = cg_mem_type(C, t);
        cg_barrier(C);
        cg_if first = cg_if_begin(C, LLVMBuildICmp(C->b, LLVMIntEQ, C->tid, cg_const_i32(C, 0), ""), "atom.bcast",
                                  "atom.bcast.join");
        LLVMBuildStore(C->b, t == DT_BOOL ? LLVMBuildZExt(C->b, old, C->i8, "") : old, sm);
        cg_if_end(C, &first);
        cg_barrier(C);
        LLVMValueRef x = LLVMBuildLoad2(C->b, mt, sm, "");
        if (t == DT_BOOL) x = LLVMBuildICmp(C->b, LLVMIntNE, x, LLVMConstInt(C->i8, 0, 0), "");
        cg_val v = cg_new_val(C, 1, NULL);
        v.v[0] = x;
        cg_set(C, r, v);
        return;
    }
    cg_lay_info li;
    cg_lay_info_get(C, l, r->type.rank, r->type.shape, &li);
    cg_val v = cg_new_val(C, li.nregs, l);
    for (int i = 0; i < li.nregs; i++) {
        LLVMValueRef pred = cg_reg_canonical(C, &li, i);
        if (mask) pred = LLVMBuildAnd(C->b, pred, mv.v[i], "");
        v.v[i] = atomic_one(C, in, t, pv.v[i], cmp ? cv.v[i] : NULL, vv.v[i], pred);
    }
    cg_set(C, r, v);
}

/* DESC_LOAD / DESC_STORE as ordinary predicated accesses (ops.def): element
 * idx of the block at offsets o is base[sum_d (o_d + idx_d) * s_d] when
 * 0 <= o_d + idx_d < dim_d for every d (64-bit arithmetic, offsets
 * sign-extended), else 0 (load) / not written (store). Groups of `vec`
 * registers along the fast dim are one vector access when the vectorize
 * pass (lay_desc_vec) proves them aligned and uniformly in or out of bounds. (TMA on sm_90 is a
 * later optimisation.) */
static void lower_desc(cg_ctx *C, ir_inst *in) {
    LLVMBuilderRef b = C->b;
    bool st = in->op == IR_DESC_STORE;
    ir_value *blk = st ? in->operands[in->num_operands - 1] : in->results[0];
    int rank = blk->type.rank;
    if (rank < 1 || in->num_operands != 1 + 3 * rank + (st ? 1 : 0)) {
        cg_error(C, in->loc, "internal error: %s has %d operands for a rank-%d block", ir_op_table[in->op].name,
                 in->num_operands, rank);
        return;
    }
    blk_dtype t = (blk_dtype)in->operands[0]->type.pointee, vt = (blk_dtype)blk->type.dtype;
    const vec_access *acc = access_of(C, in);
    const lay_layout *l = acc->lay ? acc->lay : cg_lay(C, blk);
    int vec = acc->vec;
    cg_lay_info li;
    cg_lay_info_get(C, l, rank, blk->type.shape, &li);
    LLVMValueRef base = cg_get(C, in->operands[0], NULL).v[0];
    LLVMValueRef dims[IR_MAX_RANK], strides[IR_MAX_RANK], offs[IR_MAX_RANK];
    for (int d = 0; d < rank; d++) {
        dims[d] = cg_cast_scalar(C, in->loc, (blk_dtype)in->operands[1 + d]->type.dtype, DT_I64,
                                 cg_get(C, in->operands[1 + d], NULL).v[0]);
        strides[d] = cg_cast_scalar(C, in->loc, (blk_dtype)in->operands[1 + rank + d]->type.dtype, DT_I64,
                                    cg_get(C, in->operands[1 + rank + d], NULL).v[0]);
        offs[d] = cg_cast_scalar(C, in->loc, (blk_dtype)in->operands[1 + 2 * rank + d]->type.dtype, DT_I64,
                                 cg_get(C, in->operands[1 + 2 * rank + d], NULL).v[0]);
    }
    cg_val sv = {0};
    if (st) sv = cg_get(C, blk, l);
    cg_val out = cg_new_val(C, li.nregs, l);
    bool tie = vec > 1 || (!st && read_by_dot(in));
    LLVMTypeRef mt = cg_mem_type(C, t);
    LLVMValueRef zero64 = LLVMConstInt(C->i64, 0, 0);
    for (int i = 0; i < li.nregs; i += vec) {
        LLVMValueRef inside = LLVMConstInt(C->i1, 1, 0), eoff = zero64;
        for (int d = 0; d < rank; d++) {
            LLVMValueRef g = LLVMBuildAdd(b, offs[d], LLVMBuildZExt(b, cg_reg_coord(C, &li, i, d), C->i64, ""), "");
            inside = LLVMBuildAnd(b, inside, LLVMBuildICmp(b, LLVMIntSGE, g, zero64, ""), "");
            inside = LLVMBuildAnd(b, inside, LLVMBuildICmp(b, LLVMIntSLT, g, dims[d], ""), "");
            eoff = LLVMBuildAdd(b, eoff, LLVMBuildMul(b, g, strides[d], ""), "");
        }
        LLVMValueRef ptr = LLVMBuildGEP2(b, mt, base, &eoff, 1, "");
        if (st) {
            LLVMValueRef vals[16];
            for (int j = 0; j < vec; j++) vals[j] = vt == t ? sv.v[i + j] : cg_cast_scalar(C, in->loc, vt, t, sv.v[i + j]);
            store_group(C, in, t, vec, ptr, inside, vals);
        } else {
            LLVMValueRef zeros[16];
            for (int j = 0; j < vec; j++) zeros[j] = LLVMConstNull(cg_type(C, t));
            load_group(C, in, t, vec, ptr, inside, zeros, tie, out.v + i);
            for (int j = 0; j < vec; j++) {
                if (!tie) out.v[i] = LLVMBuildSelect(b, inside, out.v[i], zeros[0], "");
                if (vt != t) out.v[i + j] = cg_cast_scalar(C, in->loc, t, vt, out.v[i + j]);
            }
        }
    }
    if (!st) cg_set(C, blk, out);
}

bool cg_memory(cg_ctx *C, ir_inst *in) {
    switch (in->op) {
    case IR_LOAD: lower_load(C, in); return true;
    case IR_STORE: lower_store(C, in); return true;
    case IR_DESC_LOAD: case IR_DESC_STORE: lower_desc(C, in); return true;
    case IR_ATOMIC_RMW: case IR_ATOMIC_CAS: lower_atomic(C, in); return true;
    default: return false;
    }
}

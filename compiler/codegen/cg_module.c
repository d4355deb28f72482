/* cg_module.c — the LLVM side of the PTX backend: context, module, target
 * machine, one entry per kernel variant, libdevice, PTX text, metadata.
 *
 * Needs: inlined Block IR (pass pipeline run), a tgt_target whose LLVM
 * CPU/PTX pair is known good (target.c). Guarantees: every kernel yields one
 * `.entry` per variant (by default the d16 specialisation and the fallback;
 * codegen.h) with a blk-meta line each, or located diagnostics; the module
 * handed to LLVM's backend has passed LLVMVerifyModule.
 */
#include <llvm-c/Analysis.h>
#include <llvm-c/BitReader.h>
#include <llvm-c/Linker.h>
#include <llvm-c/Target.h>
#include <llvm-c/Transforms/PassBuilder.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <pthread.h>
#include <string.h>

#include "cg_internal.h"

void cg_error(cg_ctx *C, blk_loc loc, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    diag_report(C->diag, DIAG_ERROR, loc, fmt, ap);
    va_end(ap);
    C->failed = true;
}

LLVMTypeRef cg_type(cg_ctx *C, blk_dtype t) {
    switch (t) {
    case DT_BOOL: return C->i1;
    case DT_I8: case DT_U8: case DT_F8E4M3: case DT_F8E5M2: return C->i8;
    case DT_I16: case DT_U16: return C->i16;
    case DT_I32: case DT_U32: return C->i32;
    case DT_I64: case DT_U64: return C->i64;
    case DT_F16: return C->f16;
    case DT_BF16: return C->bf16;
    case DT_F32: return C->f32;
    case DT_F64: return C->f64;
    case DT_PTR: return C->ptr1;
    default: return C->i32;
    }
}

LLVMTypeRef cg_mem_type(cg_ctx *C, blk_dtype t) { return t == DT_BOOL ? C->i8 : cg_type(C, t); }

LLVMValueRef cg_const_i32(cg_ctx *C, int64_t v) { return LLVMConstInt(C->i32, (unsigned long long)v, 1); }

LLVMValueRef cg_call_intrinsic(cg_ctx *C, const char *name, LLVMTypeRef *overload, int noverload,
                               LLVMValueRef *args, int nargs) {
    unsigned id = LLVMLookupIntrinsicID(name, strlen(name));
    if (!id) {
        cg_error(C, LOC_NONE, "internal error: LLVM has no intrinsic '%s'", name);
        return LLVMGetUndef(C->i32);
    }
    LLVMValueRef fn = LLVMGetIntrinsicDeclaration(C->mod, id, overload, (size_t)noverload);
    LLVMTypeRef ty = LLVMIntrinsicGetType(C->llc, id, overload, (size_t)noverload);
    return LLVMBuildCall2(C->b, ty, fn, args, (unsigned)nargs, "");
}

LLVMValueRef cg_call_extern(cg_ctx *C, const char *name, LLVMTypeRef ret, LLVMValueRef *args, int nargs) {
    LLVMTypeRef pt[8];
    for (int i = 0; i < nargs && i < 8; i++) pt[i] = LLVMTypeOf(args[i]);
    LLVMTypeRef fty = LLVMFunctionType(ret, pt, (unsigned)nargs, 0);
    LLVMValueRef fn = LLVMGetNamedFunction(C->mod, name);
    if (!fn) fn = LLVMAddFunction(C->mod, name, fty);
    return LLVMBuildCall2(C->b, fty, fn, args, (unsigned)nargs, "");
}

LLVMValueRef cg_inline_asm(cg_ctx *C, LLVMTypeRef ret, const char *text, const char *constraints,
                           LLVMValueRef *args, int nargs, bool side_effects) {
    /* wgmma's accumulators: up to 128 tied operands plus fragments */
    LLVMTypeRef pt[512];
    if (nargs > 512) { C->failed = true; nargs = 512; }
    for (int i = 0; i < nargs; i++) pt[i] = LLVMTypeOf(args[i]);
    LLVMTypeRef fty = LLVMFunctionType(ret, pt, (unsigned)nargs, 0);
    LLVMValueRef fn = LLVMGetInlineAsm(fty, text, strlen(text), constraints, strlen(constraints), side_effects, 0,
                                       LLVMInlineAsmDialectATT, 0);
    return LLVMBuildCall2(C->b, fty, fn, args, (unsigned)nargs, "");
}

/* bar.sync 0 — llvm.nvvm.barrier0 no longer exists in LLVM 22 (FACTS.md).
 * With a producer warpgroup (cg_ws.c) the program's barriers are the
 * consumers' named one: the producer never reaches them. */
void cg_barrier(cg_ctx *C) {
    if (C->ws_loop) {
        cg_named_barrier(C, CG_BAR_CONSUMERS, 32 * C->num_warps, true);
        return;
    }
    LLVMValueRef zero = cg_const_i32(C, 0);
    cg_call_intrinsic(C, "llvm.nvvm.barrier.cta.sync.aligned.all", NULL, 0, &zero, 1);
}

/* bar.sync id, threads: the first `threads` to arrive (whole warps). The
 * aligned form promises that every thread that blocks on one use of the
 * barrier executes the same instruction: true of the consumers' own
 * barrier, not of the hand-off to a producer (cg_ws.c), where producer and
 * consumers block from different branches: that one is the unaligned
 * barrier.sync (compute-sanitizer's synccheck reports it as divergent
 * otherwise). */
void cg_named_barrier(cg_ctx *C, int id, int threads, bool aligned) {
    LLVMValueRef args[2] = {cg_const_i32(C, id), cg_const_i32(C, threads)};
    cg_call_intrinsic(C, aligned ? "llvm.nvvm.barrier.cta.sync.aligned.count" : "llvm.nvvm.barrier.cta.sync.count", NULL, 0,
                      args, 2);
}


/* Scratch shared memory is dynamic (`.extern .shared .b8 __blk_smem[]`):
 * the blk-meta `shared=` field tells the runtime how many bytes to pass at
 * launch, and one symbol serves every kernel of the module. The kernel's
 * static buffers (cg_reduce.c, smem_static) count against the same limit:
 * the target's opt-in maximum (libblkrt raises a function's dynamic limit
 * past the default 48 KB when it loads the module). */
static LLVMValueRef smem_symbol(cg_ctx *C) {
    LLVMValueRef g = LLVMGetNamedGlobal(C->mod, "__blk_smem");
    if (!g) {
        g = LLVMAddGlobalInAddressSpace(C->mod, LLVMArrayType2(C->i8, 0), "__blk_smem", 3);
        LLVMSetLinkage(g, LLVMExternalLinkage);
        LLVMSetAlignment(g, 16);
    }
    return g;
}

/* bytes at offset `at` of the dynamic shared memory, within the limit */
static LLVMValueRef smem_at(cg_ctx *C, blk_loc loc, int64_t at, int64_t bytes) {
    if (at + bytes + C->smem_static > C->tgt->smem_optin_max) {
        if (C->smem_probe) C->smem_retry = true; /* lower_kernel lowers the variant again (see there) */
        else cg_error(C, loc, "this operation needs %lld bytes of shared memory; a block has at most %d on %s "
                      "(use smaller blocks)", (long long)(at + bytes + C->smem_static), C->tgt->smem_optin_max,
                      C->tgt->arch);
        bytes = 0;
    }
    if (at + bytes > C->smem_bytes) C->smem_bytes = (int)((at + bytes + 15) / 16 * 16);
    LLVMValueRef off = cg_const_i32(C, at);
    return at ? LLVMBuildGEP2(C->b, C->i8, smem_symbol(C), &off, 1, "") : smem_symbol(C);
}

LLVMValueRef cg_smem(cg_ctx *C, blk_loc loc, int64_t bytes) { return smem_at(C, loc, C->smem_reserved, bytes); }

/* The dynamic array's own alignment is raised with the largest one asked
 * for (wgmma's swizzled tiles need 1024), so offsets aligned within it are
 * aligned addresses. */
static int64_t align_at(cg_ctx *C, int64_t at, int align) {
    LLVMValueRef g = smem_symbol(C);
    if ((int)LLVMGetAlignment(g) < align) LLVMSetAlignment(g, (unsigned)align);
    return (at + align - 1) / align * align;
}

LLVMValueRef cg_smem_aligned(cg_ctx *C, blk_loc loc, int64_t bytes, int align) {
    return smem_at(C, loc, align_at(C, C->smem_reserved, align), bytes);
}

LLVMValueRef cg_smem_reserve(cg_ctx *C, blk_loc loc, int64_t bytes, int align) {
    int64_t at = align_at(C, C->smem_reserved, align);
    LLVMValueRef p = smem_at(C, loc, at, bytes);
    C->smem_reserved = (int)(at + bytes);
    return p;
}

/* ---- values ---- */

cg_val cg_new_val(cg_ctx *C, int n, const lay_layout *lay) {
    cg_val x = {ARENA_ARRAY(C->a, LLVMValueRef, n > 0 ? n : 1), n, lay, true};
    if (!x.v) { x.n = 0; C->failed = true; }
    return x;
}

void cg_set(cg_ctx *C, ir_value *v, cg_val x) {
    if (v && v->id >= 0 && v->id < C->num_values) C->vals[v->id] = x;
}

const lay_layout *cg_lay(cg_ctx *C, ir_value *v) {
    const lay_layout *l = lay_get(C->lt, v);
    if (!l && v->type.rank)
        l = lay_choose_blocked(C->a, v->type.rank, v->type.shape, C->num_warps, v->type.rank - 1, 1);
    return l;
}

/* fuse.h: v's definition chain recomputed in layout `want` (its block
 * operands likewise, through cg_get) instead of a conversion through shared
 * memory. The lowering of v's defining op runs again with v's layout set to
 * `want`; v's own registers are put back afterwards. A recomputed value is
 * reused for later uses in the same basic block only (there it dominates). */
struct cg_remat {
    int id;
    const lay_layout *lay;
    LLVMBasicBlockRef bb;
    cg_val v;
};

static cg_val remat(cg_ctx *C, ir_value *v, const lay_layout *want) {
    LLVMBasicBlockRef bb = LLVMGetInsertBlock(C->b);
    for (int i = 0; i < C->num_remat; i++) {
        struct cg_remat *e = &C->remat[i];
        if (e->id == v->id && e->bb == bb && lay_eq(e->lay, want)) return e->v;
    }
    const lay_layout *own = C->lt->lay[v->id];
    cg_val saved = C->vals[v->id];
    C->lt->lay[v->id] = want;
    C->vals[v->id] = (cg_val){0};
    cg_region_inst(C, v->def);
    cg_val r = C->vals[v->id];
    C->lt->lay[v->id] = own;
    C->vals[v->id] = saved;
    if (!r.set) return cg_convert(C, v->def->loc, saved, v->type, want);
    if (C->num_remat == C->cap_remat) {
        int cap = C->cap_remat ? 2 * C->cap_remat : 16;
        struct cg_remat *n = ARENA_ARRAY(C->a, struct cg_remat, cap);
        if (!n) return r;
        for (int i = 0; i < C->num_remat; i++) n[i] = C->remat[i];
        C->remat = n, C->cap_remat = cap;
    }
    C->remat[C->num_remat++] = (struct cg_remat){v->id, want, LLVMGetInsertBlock(C->b), r};
    return r;
}

cg_val cg_get(cg_ctx *C, ir_value *v, const lay_layout *want) {
    cg_val x = {0};
    if (v && v->id >= 0 && v->id < C->num_values) x = C->vals[v->id];
    if (!x.set) {
        if (!C->failed) cg_error(C, v && v->def ? v->def->loc : LOC_NONE, "internal error: value %%%d used before codegen defined it", v ? v->id : -1);
        C->failed = true;
        int n = v && v->type.rank ? lay_num_regs(want ? want : cg_lay(C, v), v->type.shape, NULL) : 1;
        x = cg_new_val(C, n, v && v->type.rank ? (want ? want : cg_lay(C, v)) : NULL);
        for (int i = 0; i < x.n; i++) x.v[i] = LLVMGetUndef(v ? cg_type(C, (blk_dtype)v->type.dtype) : C->i32);
        return x;
    }
    if (!v->type.rank || !want || lay_eq(x.lay, want)) return x;
    /* a constant, splat or broadcast is rebuilt in `want` from its (smaller) operand
     * instead of moving the whole broadcast block through shared memory
     * (idx[:, :, None] == e[None, None, :] converts e, not [16, 8, 128]) */
    ir_inst *d = v->def;
    if (d && d->op == IR_CONST && x.n > 0 && lay_fits(want, v->type.rank, v->type.shape)) {
        cg_val r = cg_new_val(C, lay_num_regs(want, v->type.shape, NULL), want);
        for (int i = 0; i < r.n; i++) r.v[i] = x.v[0];
        return r;
    }
    if (d && d->op == IR_SPLAT && d->num_operands == 1 && !d->operands[0]->type.rank && lay_fits(want, v->type.rank, v->type.shape)) {
        LLVMValueRef s = cg_get(C, d->operands[0], NULL).v[0];
        cg_val r = cg_new_val(C, lay_num_regs(want, v->type.shape, NULL), want);
        for (int i = 0; i < r.n; i++) r.v[i] = s;
        return r;
    }
    if (d && d->op == IR_BROADCAST && d->num_operands == 1 && d->operands[0]->type.rank == v->type.rank &&
        ir_numel(d->operands[0]->type) < ir_numel(v->type) && lay_fits(want, v->type.rank, v->type.shape) &&
        lay_fits(want, v->type.rank, d->operands[0]->type.shape))
        return cg_broadcast_regs(C, d->operands[0], &v->type, want);
    if (d && fuse_remat(C->fuse, v) && lay_fits(want, v->type.rank, v->type.shape)) return remat(C, v, want);
    cg_val ring;
    if (d && d->op == IR_LOAD && cg_pipe_ring_read(C, v, want, &ring)) return ring; /* read again, not converted */
    return cg_convert(C, v->def ? v->def->loc : LOC_NONE, x, v->type, want);
}

/* ---- instructions ---- */

/* More registers per thread than this for one value is a block far too big
 * for one program instance: reported instead of handing LLVM (and ptxas)
 * tens of thousands of values. */
/* Size budgets. LLVM's time and memory grow with the per-thread values a
 * kernel lowers to (O3 + NVPTX on 500k of them took 15-20 s and 1 GB), so a
 * kernel past CG_MAX_WORK is refused with a located error before LLVM sees it
 * (reliability finding F6); real kernels stay far below (flash attention with
 * 128x128 tiles: about 30k). */
enum { CG_MAX_REGS_PER_VALUE = 2048, CG_MAX_WORK = 100000 };

static bool too_big(cg_ctx *C, ir_inst *in) {
    C->work += 1;
    for (int k = 0; k < in->num_results; k++) {
        ir_value *r = in->results[k];
        if (!r->type.rank) continue;
        int n = lay_num_regs(cg_lay(C, r), r->type.shape, NULL);
        C->work += n;
        if (n > CG_MAX_REGS_PER_VALUE) {
            cg_error(C, in->loc, "block of %lld elements needs %d registers per thread with %d warps (limit %d): use "
                     "smaller blocks or more warps", (long long)ir_numel(r->type), n, C->num_warps, CG_MAX_REGS_PER_VALUE);
            return true;
        }
    }
    if (C->work > CG_MAX_WORK) {
        if (C->failed) return true; /* said once per kernel */
        cg_error(C, in->loc, "kernel too large for the GPU backend: more than %d values per thread after "
                 "inlining and unrolling (smaller blocks, fewer unrolled iterations or a run-time loop help)",
                 CG_MAX_WORK);
        return true;
    }
    return false;
}

void cg_region_inst(cg_ctx *C, ir_inst *in) {
    if (C->lineinfo) cg_lineinfo_at(C, in->loc);
    if (too_big(C, in)) {
        C->failed = true;
        return;
    }
    if (cg_pipe_inst(C, in)) return;
    if (cg_control(C, in) || cg_elementwise(C, in) || cg_memory(C, in) || cg_reduce(C, in) || cg_sort(C, in) ||
        cg_convert_op(C, in) || cg_print(C, in) || cg_dot(C, in) || cg_cluster_sum(C, in))
        return;
    cg_error(C, in->loc, "'%s' is not supported by the PTX backend", ir_op_table[in->op].name);
    /* give results placeholder values so lowering can go on and report more */
    for (int k = 0; k < in->num_results; k++) {
        ir_value *r = in->results[k];
        const lay_layout *l = r->type.rank ? cg_lay(C, r) : NULL;
        cg_val x = cg_new_val(C, l ? lay_num_regs(l, r->type.shape, NULL) : 1, l);
        for (int i = 0; i < x.n; i++) x.v[i] = LLVMGetUndef(cg_type(C, (blk_dtype)r->type.dtype));
        cg_set(C, r, x);
    }
}

void cg_region(cg_ctx *C, ir_region *r) {
    for (ir_inst *i = r->first; i; i = i->next) {
        if (diag_should_stop(C->diag)) return;
        cg_region_inst(C, i);
        /* after a terminator (break/continue/return) the rest is unreachable */
        if (ir_op_has(i->op, OPF_TERM)) return;
    }
}

/* ---- kernels ---- */

static const char *spec_code(ax_spec s) { return s == AX_SPEC_D16 ? "d16" : s == AX_SPEC_EQ1 ? "eq1" : "-"; }

static void type_str(ir_type t, char *buf, int n) {
    if (t.dtype == DT_PTR) snprintf(buf, (size_t)n, "*%s%s", t.ptr_const ? "const." : "", dtype_name((blk_dtype)t.pointee));
    else snprintf(buf, (size_t)n, "%s", dtype_name((blk_dtype)t.dtype));
}

/* PTX identifiers: letters, digits, _ and $. */
static char *ptx_ident(blk_arena *a, const char *s) {
    char *r = arena_strdup(a, s);
    for (char *p = r; p && *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '_' || *p == '$'))
            *p = '_';
    return r;
}

static const char *param_name(const ir_func *f, int k) {
    const char *name = k < f->param_names.len ? f->param_names.data[k] : f->body->args.data[k]->name;
    return name ? name : "_";
}

/* The blk-meta line of one entry (docs/runtime.md has the grammar). nospec=
 * (the @do_not_specialize parameters) only where there are any. */
static void write_meta(cg_ctx *C, blk_strbuf *out, const ir_func *f, const char *entry, int num_warps, int shared,
                       const ax_spec *spec) {
    sb_printf(out, "// blk-meta v1 kernel=%s entry=%s num_warps=%d shared=%d params=", f->name, entry, num_warps,
              shared);
    ir_region *body = f->body;
    char buf[64];
    for (int k = 0; k < body->args.len; k++) {
        type_str(body->args.data[k]->type, buf, sizeof buf);
        sb_printf(out, "%s%s:%s", k ? "," : "", param_name(f, k), buf);
    }
    sb_puts(out, " consts=");
    for (int k = 0; k < f->consts.len; k++) {
        const ir_const_binding *cb = &f->consts.data[k];
        if (cb->is_float) sb_printf(out, "%s%s:f32:%.17g", k ? "," : "", cb->name, cb->fval);
        else if (cb->is_bool) sb_printf(out, "%s%s:bool:%s", k ? "," : "", cb->name, cb->ival ? "true" : "false");
        else sb_printf(out, "%s%s:%s:%lld", k ? "," : "", cb->name,
                       cb->ival >= INT32_MIN && cb->ival <= INT32_MAX ? "i32" : "i64", (long long)cb->ival);
    }
    sb_puts(out, " spec=");
    for (int k = 0; k < body->args.len; k++)
        sb_printf(out, "%s%s:%s", k ? "," : "", param_name(f, k), spec_code(spec[k]));
    for (int j = 0; j < f->do_not_specialize.len; j++)
        sb_printf(out, "%s%s", j ? "," : " nospec=", param_name(f, f->do_not_specialize.data[j]));
    if (C) cg_tma_meta(C, out);
    if (f->cluster > 1) /* @cluster: its code needs the cluster, so every launch is one (runtime/meta.c) */
        sb_printf(out, " cluster=%d cluster_required=1", f->cluster);
    else if (C && C->cluster)
        sb_printf(out, " cluster=%d", C->cluster); /* cg_ws.c; the runtime launches pairs */
    sb_putc(out, '\n');
}

static void meta_line(cg_ctx *C, blk_strbuf *out, ir_func *f, const char *entry, const ax_spec *spec) {
    write_meta(C, out, f, entry, cg_ws_threads(C) / 32, C->smem_bytes, spec);
}

void cg_front_meta(blk_strbuf *out, ir_module *m, const tgt_target *t) {
    for (ir_func *f = m->first; f; f = f->next) {
        if (!f->is_kernel) continue;
        ax_spec *none = ARENA_ARRAY(m->arena, ax_spec, f->body->args.len + 1);
        if (!none) return;
        write_meta(NULL, out, f, ptx_ident(m->arena, f->name), f->num_warps, 0, none);
    }
}

/* Lowers one variant from its plan (optimistic: pipeliner.h); returns the
 * function, or NULL where the plan failed. */
static LLVMValueRef lower_variant(cg_ctx *C, ir_func *f, const ax_spec *spec, const char *entry, unsigned plan_flags) {
    C->f = f;
    C->num_warps = f->num_warps; /* resolved by sema (sema/kernel.c: resolve_launch) */
    /* the variant's analyses, in pipeline order (passes/pipeline.c) */
    kernel_plan plan;
    bool planned = passes_plan_kernel(C->a, f, spec, C->tgt, plan_flags, &plan);
    /* an overflow of shared memory is retried (lower_kernel) while the plan
     * has something to give up: the optimistic rings, rings read into
     * registers */
    C->smem_probe = planned && (plan.pl->optimistic || plan.pl->regs);
    C->smem_retry = false;
    C->ax = plan.ax, C->lt = plan.lt, C->fuse = plan.fuse, C->vt = plan.vec, C->pl = plan.pl;
    C->num_values = C->ax ? C->ax->num_values : 0;
    C->vals = ARENA_ARRAY(C->a, cg_val, C->num_values + 1);
    C->smem_bytes = 0;
    C->wg_mma_regs = 0;
    C->smem_static = 0;
    C->smem_reserved = 0;
    C->tiles = ARENA_ARRAY(C->a, struct cg_tile *, C->num_values + 1);
    C->work = 0;
    C->flow = NULL;
    C->remat = NULL, C->num_remat = 0, C->cap_remat = 0;
    C->num_staged = 0;
    if (!planned || !C->vals || !C->tiles) { C->failed = true; return NULL; }

    ir_region *body = f->body;
    int np = body->args.len;
    C->entry = entry;
    cg_tma_plan(C); /* its CUtensorMaps follow the declared parameters */
    cg_ws_plan(C);
    if (C->ws_outer) C->smem_probe = true; /* the rings stay reserved through the tile loop's epilogue */
    cg_tma_plan_stores(C); /* its maps follow the loads' */
    LLVMTypeRef *pt = ARENA_ARRAY(C->a, LLVMTypeRef, np + C->num_tma + 1);
    if (!pt) { C->failed = true; return NULL; }
    for (int k = 0; k < np; k++) {
        blk_dtype dt = (blk_dtype)body->args.data[k]->type.dtype;
        pt[k] = dt == DT_BOOL ? C->i8 : cg_type(C, dt);
    }
    for (int j = 0; j < C->num_tma; j++) pt[np + j] = LLVMPointerTypeInContext(C->llc, 0);
    LLVMValueRef fn = LLVMAddFunction(C->mod, entry, LLVMFunctionType(C->vd, pt, (unsigned)(np + C->num_tma), 0));
    cg_tma_bind(C, fn, np);
    C->fn = fn;
    C->entry = entry;
    cg_lineinfo_function(C, fn, f, entry);
    LLVMSetFunctionCallConv(fn, LLVMPTXKernelCallConv);
    char nt[32];
    snprintf(nt, sizeof nt, "%d", cg_ws_threads(C));
    LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex,
                               LLVMCreateStringAttribute(C->llc, "nvvm.maxntid", 12, nt, (unsigned)strlen(nt)));
    /* a warp-specialized kernel's nvvm.minctasm: cg_ws_finish */
    LLVMBasicBlockRef bb = cg_block(C, "entry");
    LLVMPositionBuilderAtEnd(C->b, bb);
    C->tid = cg_call_intrinsic(C, "llvm.nvvm.read.ptx.sreg.tid.x", NULL, 0, NULL, 0);
    C->lane = LLVMBuildAnd(C->b, C->tid, cg_const_i32(C, 31), "lane");
    C->warp = LLVMBuildLShr(C->b, C->tid, cg_const_i32(C, 5), "warp");
    for (int k = 0; k < np; k++) {
        ir_value *p = body->args.data[k];
        LLVMValueRef v = LLVMGetParam(fn, (unsigned)k);
        const char *name = k < f->param_names.len ? f->param_names.data[k] : NULL;
        if (name) LLVMSetValueName2(v, name, strlen(name));
        if (p->type.dtype == DT_BOOL) v = LLVMBuildICmp(C->b, LLVMIntNE, v, LLVMConstInt(C->i8, 0, 0), "");
        cg_val x = cg_new_val(C, 1, NULL);
        x.v[0] = v;
        cg_set(C, p, x);
    }
    cg_tma_prefetch(C);
    cg_cluster_entry(C);
    cg_ws_entry(C);
    cg_region(C, body);
    if (!LLVMGetBasicBlockTerminator(LLVMGetInsertBlock(C->b))) LLVMBuildRetVoid(C->b);
    cg_ws_finish(C, fn);
    C->smem_probe = false;
    return fn;
}

/* The optimistic plan first; where a loop body's scratch then did not fit
 * beside its rings (smem_at), the function and what its lowering reported
 * are dropped and the variant is lowered again from the reserving plan.
 * Where a producer warpgroup serves a loop nested in a tile loop, its rings
 * stay reserved through the tile's epilogue (cg_ws.c); if the epilogue's
 * scratch does not fit beside them, the last attempt goes without that
 * producer, and the rings' memory is the epilogue's again. */
static void lower_kernel(cg_ctx *C, ir_func *f, const ax_spec *spec, const char *entry, blk_strbuf *meta) {
    size_t out0 = C->diag->out.len;
    int errors0 = C->diag->nerrors, warnings0 = C->diag->nwarnings;
    bool failed0 = C->failed;
    LLVMValueRef fn = lower_variant(C, f, spec, entry, PL_OPTIMISTIC);
    for (int attempt = 1; fn && C->smem_retry && attempt <= 3; attempt++) {
        LLVMDeleteFunction(fn);
        C->diag->out.len = out0;
        if (C->diag->out.data) C->diag->out.data[out0] = '\0';
        C->diag->nerrors = errors0, C->diag->nwarnings = warnings0;
        C->failed = failed0;
        C->ws_flat = attempt >= 2; /* a retry from the reserving plan: its producer was nested */
        /* the last: no rings read into registers, whose memory the body's
         * scratch needed */
        fn = lower_variant(C, f, spec, entry, attempt == 3 ? PL_NO_REG_RINGS : 0);
    }
    C->ws_flat = false;
    if (fn) meta_line(C, meta, f, entry, spec);
}

/* The LLVM middle end of -O1/-O2, the default and what the runtime's JIT
 * runs (issue 9: a cold compile of one fused_attn variant under 100 ms;
 * docs/benchmarks.md "Compile time"). It is default<O2>'s function passes in
 * default<O2>'s order, with the options default<O2> gives them, less:
 *  - what has nothing to work on in blk's module (one function per kernel
 *    variant, libdevice the only callee, always inlined): the CGSCC inliner
 *    walk (always-inline then globaldce do it), coroutines, OpenMP,
 *    attributes, tail calls, memprof, loop vectorisation/distribution,
 *    constant merging and the like — cheap, but ~60 passes;
 *  - two of default<O2>'s eight instcombine runs (the two just before
 *    slp-vectorizer, ~1.2 ms each on fused_attn): no stdlib entry's SASS
 *    grew without them;
 *  - slp-vectorizer where the module has no 16-bit arithmetic (see
 *    FAST_PIPELINE_SLP).
 * Kept, because some entry's SASS grew without it (tests/tools/sass_sizes.sh
 * over every stdlib kernel for sm_90a and sm_80): gvn (conv2d_nhwc +15%),
 * slp-vectorizer where there is 16-bit arithmetic (f16x2: elementwise
 * bias_add 112 -> 136 instructions without it), the second instcombine
 * (linear_attn), the loop passes. The first instcombine (~9 ms on
 * fused_attn) and gvn (~7 ms) stay the costly ones. In the backend: Default
 * codegen instead of Aggressive (NVPTX then runs EarlyCSE where Aggressive
 * runs GVN, twice). -O3: default<O3> and Aggressive codegen, as before. */
#define IC "instcombine<max-iterations=1;no-verify-fixpoint>,"
/* default<O2>'s simplifycfg configurations, in the order they appear */
#define SCFG(o) "simplifycfg<bonus-inst-threshold=1;" o ">,"
#define SC1 SCFG("no-forward-switch-cond;no-switch-range-to-icmp;no-switch-to-arithmetic;no-switch-to-lookup;"      \
                 "keep-loops;no-hoist-common-insts;no-hoist-loads-stores-with-cond-faulting;no-sink-common-insts;"  \
                 "speculate-blocks;simplify-cond-branch;no-speculate-unpredictables")
#define SC2 SCFG("no-forward-switch-cond;switch-range-to-icmp;no-switch-to-arithmetic;no-switch-to-lookup;"         \
                 "keep-loops;no-hoist-common-insts;no-hoist-loads-stores-with-cond-faulting;no-sink-common-insts;"  \
                 "speculate-blocks;simplify-cond-branch;no-speculate-unpredictables")
#define SC3 SCFG("no-forward-switch-cond;switch-range-to-icmp;switch-to-arithmetic;no-switch-to-lookup;keep-loops;" \
                 "hoist-common-insts;no-hoist-loads-stores-with-cond-faulting;sink-common-insts;speculate-blocks;"  \
                 "simplify-cond-branch;no-speculate-unpredictables")
#define SC4 SCFG("forward-switch-cond;switch-range-to-icmp;switch-to-arithmetic;switch-to-lookup;no-keep-loops;"    \
                 "hoist-common-insts;no-hoist-loads-stores-with-cond-faulting;sink-common-insts;speculate-blocks;"  \
                 "simplify-cond-branch;no-speculate-unpredictables")
#define SC5 "simplifycfg<bonus-inst-threshold=1;no-forward-switch-cond;switch-range-to-icmp;switch-to-arithmetic;" \
            "no-switch-to-lookup;keep-loops;no-hoist-common-insts;hoist-loads-stores-with-cond-faulting;"          \
            "no-sink-common-insts;speculate-blocks;simplify-cond-branch;speculate-unpredictables>"
#define FAST_PIPELINE_HEAD                                                                                           \
    /* NVPTX's pipeline-start passes (__nvvm_reflect, the ranges of tid/ntid),                                       \
     * then libdevice inlined and its unused functions dropped */                                                    \
    "nvvm-reflect,function(nvvm-intr-range),always-inline,globaldce,"                                                \
    /* default<O2>'s early simplification and module-level constant propagation */                                   \
    "function(" SC1 "sroa<modify-cfg>,early-cse<>),ipsccp,function(" IC SC2 "sroa<modify-cfg>,"                      \
    /* its function simplification pipeline */                                                                       \
    "early-cse<memssa>,speculative-execution<only-if-divergent-target>,jump-threading,correlated-propagation," SC2 IC\
    "aggressive-instcombine," SC2 "reassociate,constraint-elimination,"                                              \
    "loop-mssa(loop-instsimplify,loop-simplifycfg,licm<no-allowspeculation>,"                                        \
    "loop-rotate<header-duplication;no-prepare-for-lto>,licm<allowspeculation>,"                                     \
    "simple-loop-unswitch<no-nontrivial;trivial>)," SC2 IC                                                           \
    "loop(loop-idiom,indvars,loop-deletion,loop-unroll-full),sroa<modify-cfg>,vector-combine,"                       \
    "mldst-motion<no-split-footer-bb>,gvn<>,sccp,bdce," IC "jump-threading,correlated-propagation,adce,memcpyopt,dse,"\
    "loop-mssa(licm<allowspeculation>)," SC3 IC                                                                      \
    /* its optimisation pipeline */                                                                                  \
    "float2int,lower-constant-intrinsics,loop(loop-rotate<header-duplication;no-prepare-for-lto>,loop-deletion),"    \
    "infer-alignment," SC4
#define FAST_PIPELINE_TAIL                                                                                       \
    "vector-combine,loop-unroll<O2>,sroa<preserve-cfg>,infer-alignment," IC                                      \
    "loop-mssa(licm<allowspeculation>),alignment-from-assumptions,loop-sink,instsimplify,div-rem-pairs," SC5       \
    "),globaldce"
/* slp-vectorizer (~10-17 ms on fused_attn and matmul) pairs 16-bit scalars
 * for the targets blk has (NVPTX's vector registers are 32 bits): it runs
 * only for a module with 16-bit arithmetic (has_16bit_math), and no stdlib
 * entry without any had other SASS without it. */
static const char FAST_PIPELINE_SLP[] = FAST_PIPELINE_HEAD "slp-vectorizer," FAST_PIPELINE_TAIL;
static const char FAST_PIPELINE[] = FAST_PIPELINE_HEAD FAST_PIPELINE_TAIL;

static bool is_16bit(LLVMTypeRef t) {
    LLVMTypeKind k = LLVMGetTypeKind(t);
    return k == LLVMHalfTypeKind || k == LLVMBFloatTypeKind ||
           (k == LLVMIntegerTypeKind && LLVMGetIntTypeWidth(t) == 16);
}

/* Does any instruction compute on 16-bit scalars (f16, bf16, i16 results,
 * compared operands, or widened: fpext/sext/zext/...tofp from them), what
 * SLP could pair into f16x2/bf16x2/i16x2? Narrowing casts (fptrunc to bf16
 * after an mma), phis, loads and aggregate moves do not count: the pairs SLP
 * makes of those alone changed no SASS of the stdlib (matmul, attention). */
static bool has_16bit_math(LLVMModuleRef m) {
    for (LLVMValueRef fn = LLVMGetFirstFunction(m); fn; fn = LLVMGetNextFunction(fn))
        for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(fn); bb; bb = LLVMGetNextBasicBlock(bb))
            for (LLVMValueRef in = LLVMGetFirstInstruction(bb); in; in = LLVMGetNextInstruction(in)) {
                LLVMOpcode op = LLVMGetInstructionOpcode(in);
                bool cast = (op >= LLVMTrunc && op <= LLVMBitCast) || op == LLVMAddrSpaceCast; /* (not contiguous) */
                if (cast && op != LLVMTrunc && op != LLVMFPTrunc && op != LLVMBitCast &&
                    is_16bit(LLVMTypeOf(LLVMGetOperand(in, 0))))
                    return true;
                if (cast || op == LLVMPHI || op == LLVMLoad ||
                    op == LLVMExtractValue || op == LLVMInsertValue || op == LLVMExtractElement ||
                    op == LLVMInsertElement)
                    continue;
                if (op == LLVMICmp || op == LLVMFCmp ? is_16bit(LLVMTypeOf(LLVMGetOperand(in, 0)))
                                                     : is_16bit(LLVMTypeOf(in)))
                    return true;
            }
    return false;
}

/* LLVM's target registry is process-global: initialise it exactly once,
 * also when several threads JIT-compile at the same time. */
static void init_llvm_once(void) {
    LLVMInitializeNVPTXTargetInfo();
    LLVMInitializeNVPTXTarget();
    LLVMInitializeNVPTXTargetMC();
    LLVMInitializeNVPTXAsmPrinter();
}
static pthread_once_t llvm_once = PTHREAD_ONCE_INIT;
static void init_llvm(void) { pthread_once(&llvm_once, init_llvm_once); }

static const char *libdevice_path(void) {
    const char *env = getenv("BLK_LIBDEVICE");
    if (env && *env) return env;
    return "/usr/local/cuda/nvvm/libdevice/libdevice.10.bc";
}

static bool uses_libdevice(LLVMModuleRef m) {
    for (LLVMValueRef fn = LLVMGetFirstFunction(m); fn; fn = LLVMGetNextFunction(fn)) {
        size_t len;
        const char *n = LLVMGetValueName2(fn, &len);
        if (LLVMIsDeclaration(fn) && len > 5 && strncmp(n, "__nv_", 5) == 0) return true;
    }
    return false;
}

/* Link libdevice and make everything but the kernels internal, so that O3
 * drops the unused math functions. */
static bool link_libdevice(cg_ctx *C) {
    if (!uses_libdevice(C->mod)) return true;
    const char *path = libdevice_path();
    LLVMMemoryBufferRef buf;
    char *msg = NULL;
    if (LLVMCreateMemoryBufferWithContentsOfFile(path, &buf, &msg)) {
        diag_error(C->diag, LOC_NONE, "cannot read libdevice '%s' (math functions need it; set BLK_LIBDEVICE): %s", path,
                   msg ? msg : "?");
        LLVMDisposeMessage(msg);
        return false;
    }
    LLVMModuleRef lib;
    if (LLVMParseBitcodeInContext2(C->llc, buf, &lib)) {
        LLVMDisposeMemoryBuffer(buf);
        diag_error(C->diag, LOC_NONE, "cannot parse libdevice '%s'", path);
        return false;
    }
    LLVMDisposeMemoryBuffer(buf);
    LLVMSetTarget(lib, LLVMGetTarget(C->mod));
    LLVMSetDataLayout(lib, LLVMGetDataLayoutStr(C->mod));
    if (LLVMLinkModules2(C->mod, lib)) {
        diag_error(C->diag, LOC_NONE, "internal error: linking libdevice failed");
        return false;
    }
    for (LLVMValueRef fn = LLVMGetFirstFunction(C->mod); fn; fn = LLVMGetNextFunction(fn))
        if (!LLVMIsDeclaration(fn) && LLVMGetFunctionCallConv(fn) != LLVMPTXKernelCallConv)
            LLVMSetLinkage(fn, LLVMInternalLinkage);
    for (LLVMValueRef g = LLVMGetFirstGlobal(C->mod); g; g = LLVMGetNextGlobal(g))
        if (!LLVMIsDeclaration(g) && LLVMGetLinkage(g) != LLVMExternalLinkage) LLVMSetLinkage(g, LLVMInternalLinkage);
    return true;
}

void cg_output_init(cg_output *o) {
    sb_init(&o->llvm);
    sb_init(&o->ptx);
    sb_init(&o->meta);
    for (int i = 0; i < CG_NPHASES; i++) o->ms[i] = 0;
}
void cg_output_free(cg_output *o) {
    sb_free(&o->llvm);
    sb_free(&o->ptx);
    sb_free(&o->meta);
}

/* ---- variants ---- */

static int assumptions(const ax_spec *spec, int np, ax_spec which) {
    int n = 0;
    for (int k = 0; k < np; k++) n += which == AX_SPEC_NONE ? spec[k] != AX_SPEC_NONE : spec[k] == which;
    return n;
}

/* Does list already hold these assumptions? (identical ones make one entry) */
static bool has_spec(const ax_spec *const *list, int n, const ax_spec *spec, int np) {
    for (int i = 0; i < n; i++)
        if (memcmp(list[i], spec, sizeof(ax_spec) * (size_t)np) == 0) return true;
    return false;
}

/* The variants of kernel f, in the order the entries are emitted: most
 * assumptions first, then more eq1 (a known 1 folds away more than a
 * divisibility), then as requested (default d16, the extra ones, the
 * fallback), so that a runtime's first-match rule picks the most specialised
 * entry whose assumptions hold. Returns the count. */
static int kernel_variants(blk_arena *a, ir_func *f, const cg_variants *vs, const tgt_target *tgt, const ax_spec ***out) {
    int np = f->body->args.len, n = 0, cap = (vs ? vs->nextra : 0) + 2;
    const ax_spec **list = ARENA_ARRAY(a, const ax_spec *, cap);
    ax_spec *d16 = ax_d16_spec(a, f), *none = ARENA_ARRAY(a, ax_spec, np + 1);
    if (!list || !d16 || !none) return 0;
    /* the default d16 variant keeps only the assumptions its lowering uses:
     * a d16 on a timestep that never reaches an address would send t = 500
     * to the fallback; when none is used it equals the fallback (one entry) */
    if (passes_prune_spec(a, f, d16, tgt) < 0) return 0;
    bool defaults = !vs || !vs->no_defaults;
    if (defaults) list[n++] = d16;
    for (int i = 0; vs && i < vs->nextra; i++)
        if (vs->extra[i].kernel == f && !has_spec(list, n, vs->extra[i].spec, np)) list[n++] = vs->extra[i].spec;
    if (defaults && !has_spec(list, n, none, np)) list[n++] = none;
    for (int i = 1; i < n; i++) /* stable insertion sort */
        for (int j = i; j > 0; j--) {
            int sj = assumptions(list[j], np, AX_SPEC_NONE), sp = assumptions(list[j - 1], np, AX_SPEC_NONE);
            int ej = assumptions(list[j], np, AX_SPEC_EQ1), ep = assumptions(list[j - 1], np, AX_SPEC_EQ1);
            if (sj < sp || (sj == sp && ej <= ep)) break;
            const ax_spec *t = list[j];
            list[j] = list[j - 1];
            list[j - 1] = t;
        }
    *out = list;
    return n;
}

/* NAME for the variant without assumptions, else NAME__<code>_<code>...
 * with d16 / eq1 / x per parameter: unique per kernel and deterministic. */
static const char *entry_name(blk_arena *a, const ir_func *f, const ax_spec *spec) {
    int np = f->body->args.len;
    const char *base = ptx_ident(a, f->name);
    if (!assumptions(spec, np, AX_SPEC_NONE)) return base;
    blk_strbuf name;
    sb_init(&name);
    sb_printf(&name, "%s_", base);
    for (int k = 0; k < np; k++)
        sb_printf(&name, "_%s", spec[k] == AX_SPEC_D16 ? "d16" : spec[k] == AX_SPEC_EQ1 ? "eq1" : "x");
    const char *r = arena_strdup(a, sb_str(&name));
    sb_free(&name);
    return r;
}

/* An eq1 parameter is the constant 1 in its entry: LLVM folds `offs *
 * stride` away instead of computing addresses the vector access ignores. */
static void bind_eq1(cg_ctx *C, const char *entry, const ax_spec *spec, int np) {
    LLVMValueRef fn = LLVMGetNamedFunction(C->mod, entry);
    for (int k = 0; fn && k < np && k < (int)LLVMCountParams(fn); k++)
        if (spec[k] == AX_SPEC_EQ1) {
            LLVMValueRef p = LLVMGetParam(fn, (unsigned)k);
            LLVMReplaceAllUsesWith(p, LLVMConstInt(LLVMTypeOf(p), 1, 0));
        }
}

int cg_emit_module(ir_module *m, const tgt_target *t, blk_diag *d, int opt_level, bool want_llvm,
                   const cg_variants *vs, unsigned flags, cg_output *out) {
    double t0 = blk_now_ms(), t1;
    init_llvm();
    int errors0 = d->nerrors;
    cg_ctx C0 = {0}, *C = &C0;
    C->a = m->arena;
    C->diag = d;
    C->tgt = t;
    C->llc = LLVMContextCreate();
    C->mod = LLVMModuleCreateWithNameInContext("blk", C->llc);
    C->b = LLVMCreateBuilderInContext(C->llc);
    C->i1 = LLVMInt1TypeInContext(C->llc);
    C->i8 = LLVMInt8TypeInContext(C->llc);
    C->i16 = LLVMInt16TypeInContext(C->llc);
    C->i32 = LLVMInt32TypeInContext(C->llc);
    C->i64 = LLVMInt64TypeInContext(C->llc);
    C->f16 = LLVMHalfTypeInContext(C->llc);
    C->bf16 = LLVMBFloatTypeInContext(C->llc);
    C->f32 = LLVMFloatTypeInContext(C->llc);
    C->f64 = LLVMDoubleTypeInContext(C->llc);
    C->ptr1 = LLVMPointerTypeInContext(C->llc, 1);
    C->ptr3 = LLVMPointerTypeInContext(C->llc, 3);
    C->vd = LLVMVoidTypeInContext(C->llc);

    const char *triple = "nvptx64-nvidia-cuda";
    LLVMTargetRef target;
    char *msg = NULL;
    LLVMTargetMachineRef tm = NULL;
    if (LLVMGetTargetFromTriple(triple, &target, &msg)) {
        diag_error(d, LOC_NONE, "internal error: LLVM has no NVPTX target: %s", msg ? msg : "?");
        LLVMDisposeMessage(msg);
        goto done;
    }
    /* -O3 keeps LLVM's Aggressive codegen; below it Default (see FAST_PIPELINE) */
    tm = LLVMCreateTargetMachine(target, triple, t->llvm_cpu, t->ptx_feature,
                                 opt_level >= 3 ? LLVMCodeGenLevelAggressive : LLVMCodeGenLevelDefault,
                                 LLVMRelocDefault, LLVMCodeModelDefault);
    LLVMSetTarget(C->mod, triple);
    LLVMTargetDataRef dl = LLVMCreateTargetDataLayout(tm);
    char *dls = LLVMCopyStringRepOfTargetData(dl);
    LLVMSetDataLayout(C->mod, dls);
    LLVMDisposeMessage(dls);
    LLVMDisposeTargetData(dl);
    if (flags & CG_LINEINFO) cg_lineinfo_begin(C);
    C->remarks = flags & (CG_REMARKS | CG_REMARKS_MISSED);

    blk_strbuf meta;
    sb_init(&meta);
    for (ir_func *f = m->first; f && !diag_should_stop(d); f = f->next) {
        if (!f->is_kernel) continue;
        const ax_spec **variants = NULL;
        int nv = kernel_variants(m->arena, f, vs, t, &variants);
        int e0 = d->nerrors;
        /* after an error, the other variants would repeat the same diagnostics */
        for (int i = 0; i < nv && d->nerrors == e0; i++) {
            const char *entry = entry_name(m->arena, f, variants[i]);
            lower_kernel(C, f, variants[i], entry, &meta);
            bind_eq1(C, entry, variants[i], f->body->args.len);
        }
    }
    cg_lineinfo_finish(C);
    if (C->failed || d->nerrors > errors0) goto done_meta;
    t1 = blk_now_ms(), out->ms[CG_T_LOWER] = t1 - t0, t0 = t1;
    char *vmsg = NULL;
    if (LLVMVerifyModule(C->mod, LLVMReturnStatusAction, &vmsg)) {
        diag_error(d, LOC_NONE, "internal error: codegen produced invalid LLVM IR: %.2000s", vmsg ? vmsg : "?");
        LLVMDisposeMessage(vmsg);
        goto done_meta;
    }
    LLVMDisposeMessage(vmsg);
    t1 = blk_now_ms(), out->ms[CG_T_VERIFY] = t1 - t0, t0 = t1;
    if (!link_libdevice(C)) goto done_meta;
    t1 = blk_now_ms(), out->ms[CG_T_LIBDEVICE] = t1 - t0, t0 = t1;
    if (opt_level > 0) {
        LLVMPassBuilderOptionsRef po = LLVMCreatePassBuilderOptions();
        const char *pl = opt_level >= 3 ? "default<O3>" : has_16bit_math(C->mod) ? FAST_PIPELINE_SLP : FAST_PIPELINE;
        LLVMErrorRef err = LLVMRunPasses(C->mod, pl, tm, po);
        LLVMDisposePassBuilderOptions(po);
        if (err) {
            char *em = LLVMGetErrorMessage(err);
            diag_error(d, LOC_NONE, "internal error: LLVM optimisation failed: %s", em);
            LLVMDisposeErrorMessage(em);
            goto done_meta;
        }
    }
    t1 = blk_now_ms(), out->ms[CG_T_OPT] = t1 - t0, t0 = t1;
    if (want_llvm) {
        char *ir = LLVMPrintModuleToString(C->mod);
        sb_puts(&out->llvm, ir);
        LLVMDisposeMessage(ir);
    }
    LLVMMemoryBufferRef buf = NULL;
    if (LLVMTargetMachineEmitToMemoryBuffer(tm, C->mod, LLVMAssemblyFile, &msg, &buf)) {
        diag_error(d, LOC_NONE, "internal error: PTX emission failed: %s", msg ? msg : "?");
        LLVMDisposeMessage(msg);
        goto done_meta;
    }
    sb_puts(&out->meta, sb_str(&meta));
    sb_puts(&out->ptx, sb_str(&meta));
    sb_putn(&out->ptx, LLVMGetBufferStart(buf), LLVMGetBufferSize(buf));
    LLVMDisposeMemoryBuffer(buf);
    out->ms[CG_T_EMIT] = blk_now_ms() - t0;
done_meta:
    sb_free(&meta);
done:
    if (tm) LLVMDisposeTargetMachine(tm);
    LLVMDisposeBuilder(C->b);
    LLVMDisposeModule(C->mod);
    LLVMContextDispose(C->llc);
    return d->nerrors - errors0;
}

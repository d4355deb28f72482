/* cg_print.c — the debugging ops: ASSERT through CUDA's __assertfail (at the
 * end of this file), and PRINT through CUDA's device printf, `i32 vprintf(ptr fmt,
 * ptr args)`: the format string is a constant in global memory (addrspace
 * 1, cast to generic), the arguments a struct in local memory (an alloca in
 * the entry block) laid out with natural alignment, as vprintf reads them.
 *
 * Lines (Triton's device_print; docs/codegen.md):
 *
 *   block operand, one line per element, printed by its canonical owner
 *   (replicas stay silent):
 *       pid (X, Y, Z) idx (i, j) PREFIX: VALUE
 *   with several operands the prefix names the operand:
 *       pid (X, Y, Z) idx (i, j) PREFIX (operand K): VALUE
 *   scalar operand, printed once by thread 0:
 *       pid (X, Y, Z) PREFIX: VALUE        (or PREFIX (operand K): VALUE)
 *   no operands, thread 0:
 *       pid (X, Y, Z) PREFIX
 *
 * PREFIX is normalised like the interpreter's (trailing blanks and one ':'
 * removed; an empty prefix leaves "...: VALUE"). VALUE: bool true/false,
 * signed ints %d / %lld, unsigned %u / %llu, pointers 0x%llx, f64 %.17g,
 * other floats %.9g of the value widened to double (exact for f32 and
 * narrower; not the interpreter's shortest form). The order of lines across
 * threads is unspecified.
 */
#include <stdio.h>
#include <string.h>

#include "cg_internal.h"

static LLVMValueRef fmt_global(cg_ctx *C, const char *s) {
    size_t n = strlen(s);
    /* one global per distinct string */
    for (LLVMValueRef g = LLVMGetFirstGlobal(C->mod); g; g = LLVMGetNextGlobal(g)) {
        size_t len, glen;
        const char *name = LLVMGetValueName2(g, &len);
        if (len < 9 || strncmp(name, "__blk_fmt", 9) != 0) continue;
        LLVMValueRef init = LLVMGetInitializer(g);
        const char *gs = init ? LLVMGetAsString(init, &glen) : NULL;
        if (gs && glen == n + 1 && memcmp(gs, s, n + 1) == 0)
            return LLVMBuildAddrSpaceCast(C->b, g, LLVMPointerTypeInContext(C->llc, 0), "");
    }
    LLVMValueRef init = LLVMConstStringInContext2(C->llc, s, n, 0); /* NUL-terminated */
    LLVMValueRef g = LLVMAddGlobalInAddressSpace(C->mod, LLVMTypeOf(init), "__blk_fmt", 1);
    LLVMSetInitializer(g, init);
    LLVMSetGlobalConstant(g, 1);
    LLVMSetLinkage(g, LLVMPrivateLinkage);
    LLVMSetUnnamedAddress(g, LLVMGlobalUnnamedAddr);
    LLVMSetAlignment(g, 1);
    return LLVMBuildAddrSpaceCast(C->b, g, LLVMPointerTypeInContext(C->llc, 0), "");
}

/* append s to buf, doubling every '%' */
static void put_escaped(blk_strbuf *sb, const char *s, size_t n) {
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '%') sb_putc(sb, '%');
        sb_putc(sb, s[i]);
    }
}

/* the conversion for one value of dtype t, and the value as passed */
static const char *value_conv(cg_ctx *C, blk_dtype t, LLVMValueRef *v) {
    LLVMBuilderRef b = C->b;
    if (t == DT_BOOL) {
        /* one string per statement: argument order is unspecified (F7) */
        LLVMValueRef no = fmt_global(C, "false");
        LLVMValueRef yes = fmt_global(C, "true");
        *v = LLVMBuildSelect(b, *v, yes, no, "");
        return "%s";
    }
    if (t == DT_PTR) { *v = LLVMBuildPtrToInt(b, *v, C->i64, ""); return "0x%llx"; }
    if (dtype_is_float(t)) {
        *v = cg_cast_scalar(C, LOC_NONE, t, DT_F64, *v);
        return t == DT_F64 ? "%.17g" : "%.9g";
    }
    bool u = dtype_is_unsigned(t);
    if (dtype_bytes(t) == 8) return u ? "%llu" : "%lld";
    *v = u ? LLVMBuildZExt(b, *v, C->i32, "") : LLVMBuildSExt(b, *v, C->i32, "");
    if (LLVMTypeOf(*v) != C->i32) *v = LLVMBuildTrunc(b, *v, C->i32, "");
    return u ? "%u" : "%d";
}

/* vprintf(fmt, {args...}) under `pred` (NULL: always); *slot caches the
 * argument buffer, shared by the calls of one operand (same struct type) */
static void emit_printf(cg_ctx *C, const char *fmt, LLVMValueRef *args, int nargs, LLVMValueRef pred, LLVMValueRef *slot) {
    LLVMBuilderRef b = C->b;
    cg_if guard = {0};
    if (pred) guard = cg_if_begin(C, pred, "print", "print.join");
    LLVMTypeRef ptr0 = LLVMPointerTypeInContext(C->llc, 0);
    LLVMValueRef buf = LLVMConstNull(ptr0);
    if (nargs > 0) {
        LLVMTypeRef el[16];
        for (int i = 0; i < nargs; i++) el[i] = LLVMTypeOf(args[i]);
        LLVMTypeRef st = LLVMStructTypeInContext(C->llc, el, (unsigned)nargs, 0);
        /* the alloca goes to the entry block (one stack slot per operand) */
        LLVMValueRef a = *slot;
        if (!a) {
            a = *slot = cg_entry_alloca(C, st, "printf.args");
            LLVMSetAlignment(a, 8);
        }
        for (int i = 0; i < nargs; i++) LLVMBuildStore(b, args[i], LLVMBuildStructGEP2(b, st, a, (unsigned)i, ""));
        buf = a;
        if (LLVMGetPointerAddressSpace(LLVMTypeOf(a)) != 0) buf = LLVMBuildAddrSpaceCast(b, a, ptr0, "");
    }
    LLVMValueRef cargs[2] = {fmt_global(C, fmt), buf};
    cg_call_extern(C, "vprintf", C->i32, cargs, 2);
    if (pred) cg_if_end(C, &guard);
}

static void lower_print(cg_ctx *C, ir_inst *in) {
    LLVMBuilderRef b = C->b;
    const char *prefix = in->str ? in->str : "";
    size_t plen = strlen(prefix);
    while (plen > 0 && (prefix[plen - 1] == ' ' || prefix[plen - 1] == '\t')) plen--;
    if (plen > 0 && prefix[plen - 1] == ':') plen--;
    LLVMValueRef pid[3];
    static const char *const ctaid[3] = {"llvm.nvvm.read.ptx.sreg.ctaid.x", "llvm.nvvm.read.ptx.sreg.ctaid.y",
                                         "llvm.nvvm.read.ptx.sreg.ctaid.z"};
    for (int i = 0; i < 3; i++) pid[i] = cg_call_intrinsic(C, ctaid[i], NULL, 0, NULL, 0);
    LLVMValueRef t0 = LLVMBuildICmp(b, LLVMIntEQ, C->tid, cg_const_i32(C, 0), "");
    if (in->num_operands == 0) {
        blk_strbuf sb;
        sb_init(&sb);
        sb_puts(&sb, "pid (%u, %u, %u)");
        if (plen) { sb_putc(&sb, ' '); put_escaped(&sb, prefix, plen); }
        sb_putc(&sb, '\n');
        LLVMValueRef slot = NULL;
        emit_printf(C, sb_str(&sb), pid, 3, t0, &slot);
        sb_free(&sb);
        return;
    }
    for (int k = 0; k < in->num_operands; k++) {
        ir_value *v = in->operands[k];
        blk_dtype t = (blk_dtype)v->type.dtype;
        cg_val x = cg_get(C, v, NULL);
        int rank = v->type.rank;
        cg_lay_info li;
        int nregs = 1;
        if (rank) {
            cg_lay_info_get(C, x.lay, rank, v->type.shape, &li);
            nregs = li.nregs < x.n ? li.nregs : x.n;
        }
        LLVMValueRef slot = NULL;
        for (int r = 0; r < nregs; r++) {
            LLVMValueRef args[3 + IR_MAX_RANK + 1];
            int na = 0;
            for (int i = 0; i < 3; i++) args[na++] = pid[i];
            blk_strbuf sb;
            sb_init(&sb);
            sb_puts(&sb, "pid (%u, %u, %u)");
            if (rank) {
                sb_puts(&sb, " idx (");
                for (int d = 0; d < rank; d++) {
                    sb_puts(&sb, d ? ", %d" : "%d");
                    args[na++] = cg_reg_coord(C, &li, r, d);
                }
                sb_putc(&sb, ')');
            }
            if (plen) { sb_putc(&sb, ' '); put_escaped(&sb, prefix, plen); }
            if (in->num_operands > 1) sb_printf(&sb, " (operand %d)", k);
            sb_puts(&sb, ": ");
            LLVMValueRef val = x.v[r];
            sb_puts(&sb, value_conv(C, t, &val));
            args[na++] = val;
            sb_putc(&sb, '\n');
            emit_printf(C, sb_str(&sb), args, na, rank ? cg_reg_canonical(C, &li, r) : t0, &slot);
            sb_free(&sb);
        }
    }
}

/* ASSERT: each thread checks the elements it holds (replicas check their
 * copies too: the same verdict) and on a false one calls CUDA's
 *   void __assertfail(const char *message, const char *file, unsigned line,
 *                     const char *function, size_t char_size)
 * which prints "FILE:LINE: KERNEL: block: [x,y,z], thread: [x,y,z]
 * Assertion `MESSAGE` failed." and traps; the launch fails with
 * CUDA_ERROR_ASSERT at the host's next synchronisation, and the context is
 * lost (docs/runtime.md). A `trap` follows in case it returns. */
static void lower_assert(cg_ctx *C, ir_inst *in) {
    LLVMBuilderRef b = C->b;
    cg_val x = cg_get(C, in->operands[0], NULL);
    LLVMValueRef ok = NULL;
    for (int r = 0; r < x.n; r++) {
        LLVMValueRef v = x.v[r];
        if (LLVMTypeOf(v) != C->i1) v = LLVMBuildICmp(b, LLVMIntNE, v, LLVMConstNull(LLVMTypeOf(v)), "");
        ok = ok ? LLVMBuildAnd(b, ok, v, "") : v;
    }
    if (!ok) return;
    cg_if failed = cg_if_not_begin(C, ok, "assert.fail", "assert.ok");
    int line = 0, col = 0;
    diag_line_col(C->diag, in->loc, &line, &col);
    const char *file = in->loc.file >= 0 && in->loc.file < C->diag->files.len ? C->diag->files.data[in->loc.file].path
                                                                              : "<source>";
    /* one string per statement: argument order is unspecified (F7) */
    LLVMValueRef args[5];
    args[0] = fmt_global(C, in->str ? in->str : "");
    args[1] = fmt_global(C, file);
    args[2] = cg_const_i32(C, line);
    args[3] = fmt_global(C, C->f->name);
    args[4] = LLVMConstInt(C->i64, 1, 0);
    cg_call_extern(C, "__assertfail", LLVMVoidTypeInContext(C->llc), args, 5);
    cg_call_intrinsic(C, "llvm.trap", NULL, 0, NULL, 0);
    cg_if_end(C, &failed);
}

bool cg_print(cg_ctx *C, ir_inst *in) {
    if (in->op == IR_ASSERT) {
        lower_assert(C, in);
        return true;
    }
    if (in->op != IR_PRINT) return false;
    lower_print(C, in);
    return true;
}

/* print.c — the text form of Block IR (blkc --emit=ir, golden tests).
 *
 *   kernel @scale(%0: *f32, %1: i32) num_warps=4 num_stages=3 consts(BLOCK=128) {
 *     %2 = program_id axis=0 : i32
 *     %3 = const 128 : i32
 *     %4 = mul %2, %3 : i32  // base
 *     %5 = arange start=0 end=128 : i32[128]
 *     %6 = splat %4 : i32[128]
 *     %7 = add %6, %5 : i32[128]  // offs
 *     %8 = splat %0 : *f32[128]
 *     %9 = ptradd %8, %7 : *f32[128]
 *     %10 = load %9 cache=cg : f32[128]
 *     %11 = const 0.5 : f32[128]
 *     %12, %13 = for %3 to %1 step %3 iter(%10, %3) num_stages=2 : f32[128], i32 {
 *     ^(%14: i32, %15: f32[128], %16: i32):
 *       %17 = mul %15, %11 : f32[128]
 *       yield %17, %16
 *     }
 *     %18 = cmp %1, %3 pred=lt : bool
 *     if %18 {
 *       store %9, %12
 *       yield
 *     } else {
 *       yield
 *     }
 *     return
 *   }
 *
 *   fn @silu.f32x128(%0: f32[128]) -> f32[128] {
 *     %1 = sigmoid %0 : f32[128]
 *     %2 = mul %0, %1 : f32[128]
 *     return %2
 *   }
 *
 * (tests/unit/test_ir_print.c builds exactly this and compares.) The rules:
 *  - values are %N, numbered per function in definition order (the order of
 *    ir_number_values): parameters, then every result and region arg in the
 *    order a walk meets them; each result has its own number, so an inst with
 *    two results prints `%4, %5 = topk ...`;
 *  - one inst per line: `RESULTS = OP OPERANDS ATTRIBUTES : RESULT TYPES`;
 *    operands are comma-separated, attributes space-separated as name=value
 *    (axis=0 pred=lt kind=sum k=2 perm=[1, 0] cache=cg eviction=first
 *    sem=relaxed prec=tf32 prefix="text" start=0 end=128 n=16) or bare flags
 *    (fast reverse descending volatile no_tma); insts without results have no ` : `;
 *  - const prints its value: integers in decimal, bools true/false, floats in
 *    the fewest digits that give back the same value in the const's dtype,
 *    always with a `.` or an exponent (0.5, 1.0, 1e-05, inf, -inf, nan);
 *    a block-typed const is a splat of that value;
 *  - for prints `for LB to UB step STEP iter(INITS...) [num_stages=N]`; the body's args
 *    (induction variable, carried values) follow on a `^(...)` line; if has
 *    `} else {` before its second region, while `} do {` before its body;
 *    desc_load/desc_store group their operands as dims(...) strides(...)
 *    offsets(...); call prints `call @callee(args...)`;
 *  - a kernel's header lists num_warps, num_stages, then the parameters of
 *    @do_not_specialize as `do_not_specialize(%1, %3)` (when there are any)
 *    and its const values as `consts(NAME=V, ...)`;
 *  - two spaces of indentation per region level; a source name hint is
 *    appended as `  // name`.
 * Output depends only on the IR, never on addresses or allocation order.
 */
#include "ir.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const cmp_names[] = {"eq", "ne", "lt", "le", "gt", "ge"};
static const char *const reduce_names[] = {"sum", "max", "min", "prod", "xor_sum", "argmax", "argmin"};
static const char *const atomic_names[] = {"add", "max", "min", "and", "or", "xor", "xchg"};
static const char *const cache_names[] = {"default", "ca", "cg", "cs"};
static const char *const evict_names[] = {"default", "normal", "first", "last"};
static const char *const sem_names[] = {"acq_rel", "relaxed", "acquire", "release"};
static const char *const scope_names[] = {"gpu", "cta"};
static const char *const prec_names[] = {"default", "tf32", "ieee"};
#define COUNT(a) ((int)(sizeof(a) / sizeof((a)[0])))

static void put_enum(blk_strbuf *out, const char *attr, const char *const *names, int n, int v) {
    if (v >= 0 && v < n) sb_printf(out, " %s=%s", attr, names[v]);
    else sb_printf(out, " %s=?%d", attr, v);
}

static void put_value(blk_strbuf *out, const ir_value *v) {
    if (v) sb_printf(out, "%%%d", v->id);
    else sb_puts(out, "%<null>");
}

static void put_type(blk_strbuf *out, ir_type t) {
    char buf[96];
    ir_type_str(t, buf, sizeof buf);
    sb_puts(out, buf);
}

/* Shortest "%.*g" that reads back as the same value: in float precision
 * when the value is a float (f32 and the narrower formats, whose values are
 * all floats), in double precision otherwise. */
static void format_float(char *buf, size_t size, double v, bool as_double) {
    if (isnan(v)) { snprintf(buf, size, "nan"); return; }
    if (isinf(v)) { snprintf(buf, size, v < 0 ? "-inf" : "inf"); return; }
    bool single = !as_double && (double)(float)v == v;
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(buf, size, "%.*g", prec, v);
        double back = strtod(buf, NULL);
        if (single ? (float)back == (float)v : back == v) break;
    }
    if (!strpbrk(buf, ".eEn")) { /* "1" -> "1.0": a float never reads as an int */
        size_t n = strlen(buf);
        if (n + 2 < size) memcpy(buf + n, ".0", 3);
    }
}

static void put_string(blk_strbuf *out, const char *s) {
    sb_putc(out, '"');
    for (; s && *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') { sb_putc(out, '\\'); sb_putc(out, (char)c); }
        else if (c == '\n') sb_puts(out, "\\n");
        else if (c == '\t') sb_puts(out, "\\t");
        else if (c < 32 || c == 127) sb_printf(out, "\\x%02x", c);
        else sb_putc(out, (char)c);
    }
    sb_putc(out, '"');
}

static void put_const_value(blk_strbuf *out, const ir_inst *i) {
    ir_type t = i->num_results > 0 && i->results[0] ? i->results[0]->type : ir_scalar(DT_I64);
    char buf[64];
    if (dtype_is_float(t.dtype)) {
        format_float(buf, sizeof buf, i->fval, t.dtype == DT_F64);
        sb_puts(out, buf);
    } else if (t.dtype == DT_BOOL) {
        sb_puts(out, i->ival == 0 ? "false" : i->ival == 1 ? "true" : "?bool");
    } else if (dtype_is_unsigned(t.dtype) || t.dtype == DT_PTR) {
        sb_printf(out, "%llu", (unsigned long long)(uint64_t)i->ival);
    } else {
        sb_printf(out, "%lld", (long long)i->ival);
    }
}

static void put_operand_list(blk_strbuf *out, ir_value *const *vals, int n) {
    for (int k = 0; k < n; k++) {
        if (k) sb_puts(out, ", ");
        put_value(out, vals[k]);
    }
}

static void put_indent(blk_strbuf *out, int depth) {
    for (int k = 0; k < depth; k++) sb_puts(out, "  ");
}

/* Operands, in the op's own form where it has one. */
static void put_operands(blk_strbuf *out, const ir_inst *i) {
    ir_value *const *ops = i->operands;
    int n = ops ? i->num_operands : 0;
    switch (i->op) {
    case IR_FOR:
        if (n < 3) break;
        sb_puts(out, " ");
        put_value(out, ops[0]);
        sb_puts(out, " to ");
        put_value(out, ops[1]);
        sb_puts(out, " step ");
        put_value(out, ops[2]);
        if (n > 3) {
            sb_puts(out, " iter(");
            put_operand_list(out, ops + 3, n - 3);
            sb_puts(out, ")");
        }
        return;
    case IR_WHILE:
        if (n > 0) {
            sb_puts(out, " iter(");
            put_operand_list(out, ops, n);
            sb_puts(out, ")");
        }
        return;
    case IR_CALL:
        sb_printf(out, " @%s(", i->callee && i->callee->name ? i->callee->name : "<null>");
        put_operand_list(out, ops, n);
        sb_puts(out, ")");
        return;
    case IR_DESC_LOAD:
    case IR_DESC_STORE: {
        int rank = (n - 1 - (i->op == IR_DESC_STORE)) / 3;
        if (n < 1 || rank < 1 || 1 + 3 * rank + (i->op == IR_DESC_STORE) != n) break;
        sb_puts(out, " ");
        put_value(out, ops[0]);
        static const char *const groups[] = {"dims", "strides", "offsets"};
        for (int g = 0; g < 3; g++) {
            sb_printf(out, ", %s(", groups[g]);
            put_operand_list(out, ops + 1 + g * rank, rank);
            sb_puts(out, ")");
        }
        if (i->op == IR_DESC_STORE) {
            sb_puts(out, ", ");
            put_value(out, ops[n - 1]);
        }
        return;
    }
    default:
        break;
    }
    if (n > 0) {
        sb_puts(out, " ");
        put_operand_list(out, ops, n);
    }
}

static void put_attrs(blk_strbuf *out, const ir_inst *i) {
    switch (i->op) {
    case IR_CONST:
        break; /* the value went where operands go */
    case IR_PROGRAM_ID:
    case IR_NUM_PROGRAMS:
    case IR_EXPAND_DIMS:
    case IR_CAT:
    case IR_REDUCE_REGION:
    case IR_SCAN_REGION:
    case IR_SORT:
        sb_printf(out, " axis=%d", i->axis);
        break;
    case IR_REDUCE:
    case IR_ARGREDUCE:
    case IR_SCAN:
        sb_printf(out, " axis=%d", i->axis);
        put_enum(out, "kind", reduce_names, COUNT(reduce_names), i->kind);
        break;
    case IR_TOPK:
        sb_printf(out, " axis=%d k=%lld", i->axis, (long long)i->ival);
        break;
    case IR_ARANGE:
        sb_printf(out, " start=%lld end=%lld", (long long)i->ival, (long long)i->ival2);
        break;
    case IR_PERMUTE: {
        int rank = i->num_results > 0 && i->results[0] ? i->results[0]->type.rank : 0;
        sb_puts(out, " perm=[");
        for (int k = 0; k < rank && k < IR_MAX_RANK; k++) sb_printf(out, "%s%d", k ? ", " : "", i->perm[k]);
        sb_puts(out, "]");
        break;
    }
    case IR_CMP:
        put_enum(out, "pred", cmp_names, COUNT(cmp_names), i->kind);
        break;
    case IR_MULTIPLE_OF:
    case IR_MAX_CONTIGUOUS:
        sb_printf(out, " n=%lld", (long long)i->ival);
        break;
    case IR_LOAD:
    case IR_STORE:
        if (i->cache != IR_CACHE_DEFAULT) put_enum(out, "cache", cache_names, COUNT(cache_names), i->cache);
        if (i->eviction != IR_EVICT_DEFAULT)
            put_enum(out, "eviction", evict_names, COUNT(evict_names), i->eviction);
        break;
    case IR_ATOMIC_RMW:
        put_enum(out, "kind", atomic_names, COUNT(atomic_names), i->kind);
        put_enum(out, "sem", sem_names, COUNT(sem_names), i->sem);
        if (i->scope != IR_SCOPE_GPU) put_enum(out, "scope", scope_names, COUNT(scope_names), i->scope);
        break;
    case IR_ATOMIC_CAS:
        put_enum(out, "sem", sem_names, COUNT(sem_names), i->sem);
        if (i->scope != IR_SCOPE_GPU) put_enum(out, "scope", scope_names, COUNT(scope_names), i->scope);
        break;
    case IR_DOT:
        if (i->precision != IR_PREC_DEFAULT) put_enum(out, "prec", prec_names, COUNT(prec_names), i->precision);
        break;
    case IR_FOR: /* sema keeps a loop's @num_stages in ival2 (0: the kernel's) */
        if (i->ival2 != 0) sb_printf(out, " num_stages=%lld", (long long)i->ival2);
        break;
    case IR_PRINT:
        sb_puts(out, " prefix=");
        put_string(out, i->str ? i->str : "");
        break;
    case IR_ASSERT:
        sb_puts(out, " message=");
        put_string(out, i->str ? i->str : "");
        break;
    default:
        break;
    }
    if (i->flags & IRF_FAST) sb_puts(out, " fast");
    if (i->flags & IRF_REVERSE) sb_puts(out, " reverse");
    if (i->flags & IRF_DESCENDING) sb_puts(out, " descending");
    if (i->flags & IRF_VOLATILE) sb_puts(out, " volatile");
    if (i->flags & IRF_NO_TMA) sb_puts(out, " no_tma");
}

static void put_region(blk_strbuf *out, const ir_region *r, int depth);

/* "%0: f32, %1: i32": a region's arguments with their types */
static void put_args(blk_strbuf *out, const ir_region *r) {
    for (int k = 0; r && k < r->args.len; k++) {
        const ir_value *a = r->args.data[k];
        if (k) sb_puts(out, ", ");
        put_value(out, a);
        sb_puts(out, ": ");
        if (a) put_type(out, a->type);
    }
}

static void put_region_args(blk_strbuf *out, const ir_region *r, int depth) {
    if (!r || r->args.len == 0) return;
    put_indent(out, depth);
    sb_puts(out, "^(");
    put_args(out, r);
    sb_puts(out, "):\n");
}

static void put_inst(blk_strbuf *out, const ir_inst *i, int depth) {
    put_indent(out, depth);
    if (i->op >= IR_OP_COUNT) {
        sb_printf(out, "<bad op %d>\n", (int)i->op);
        return;
    }
    int nres = i->results ? i->num_results : 0;
    for (int k = 0; k < nres; k++) {
        if (k) sb_puts(out, ", ");
        put_value(out, i->results[k]);
    }
    if (nres > 0) sb_puts(out, " = ");
    sb_puts(out, ir_op_table[i->op].name);
    if (i->op == IR_CONST) {
        sb_puts(out, " ");
        put_const_value(out, i);
    }
    put_operands(out, i);
    put_attrs(out, i);
    if (nres > 0) {
        sb_puts(out, " : ");
        for (int k = 0; k < nres; k++) {
            if (k) sb_puts(out, ", ");
            if (i->results[k]) put_type(out, i->results[k]->type);
        }
    }
    if (i->num_regions > 0 && i->regions) {
        static const char *const joins[] = {"", "} else {", "} do {"};
        for (int k = 0; k < i->num_regions; k++) {
            if (k == 0) {
                sb_puts(out, " {\n");
            } else {
                put_indent(out, depth);
                sb_printf(out, "%s\n", i->op == IR_WHILE ? joins[2] : i->op == IR_IF ? joins[1] : "} {");
            }
            put_region_args(out, i->regions[k], depth);
            if (i->regions[k]) put_region(out, i->regions[k], depth + 1);
        }
        put_indent(out, depth);
        sb_puts(out, "}");
    }
    if (nres > 0 && i->results[0] && i->results[0]->name && i->results[0]->name[0])
        sb_printf(out, "  // %s", i->results[0]->name);
    sb_puts(out, "\n");
}

static void put_region(blk_strbuf *out, const ir_region *r, int depth) {
    for (const ir_inst *i = r->first; i; i = i->next) put_inst(out, i, depth);
}

/* The numbering of ir_number_values, but safe on the broken IR a failing
 * pass may leave behind (NULL values are skipped): the pipeline prints
 * before it verifies. */
static void number_region(ir_region *r, int *next, int depth) {
    if (!r || depth > 1000) return;
    for (int k = 0; k < r->args.len; k++)
        if (r->args.data[k]) r->args.data[k]->id = (*next)++;
    for (ir_inst *i = r->first; i; i = i->next) {
        for (int k = 0; i->results && k < i->num_results; k++)
            if (i->results[k]) i->results[k]->id = (*next)++;
        for (int k = 0; i->regions && k < i->num_regions; k++) number_region(i->regions[k], next, depth + 1);
    }
}

void ir_print_func(blk_strbuf *out, ir_func *f) {
    if (!f) return;
    int next = 0;
    number_region(f->body, &next, 0);
    sb_printf(out, "%s @%s(", f->is_kernel ? "kernel" : "fn", f->name ? f->name : "<null>");
    ir_region *body = f->body;
    put_args(out, body);
    sb_puts(out, ")");
    if (!f->is_kernel && f->result_types.len > 0) {
        sb_puts(out, f->result_types.len > 1 ? " -> (" : " -> ");
        for (int k = 0; k < f->result_types.len; k++) {
            if (k) sb_puts(out, ", ");
            put_type(out, f->result_types.data[k]);
        }
        if (f->result_types.len > 1) sb_puts(out, ")");
    }
    if (f->is_kernel) sb_printf(out, " num_warps=%d num_stages=%d", f->num_warps, f->num_stages);
    if (f->is_kernel && f->cluster > 1) sb_printf(out, " cluster=%d", f->cluster);
    if (f->do_not_specialize.len > 0) {
        sb_puts(out, " do_not_specialize(");
        for (int k = 0; k < f->do_not_specialize.len; k++) {
            int p = f->do_not_specialize.data[k];
            if (k) sb_puts(out, ", ");
            put_value(out, body && p >= 0 && p < body->args.len ? body->args.data[p] : NULL);
        }
        sb_puts(out, ")");
    }
    if (f->consts.len > 0) {
        sb_puts(out, " consts(");
        for (int k = 0; k < f->consts.len; k++) {
            const ir_const_binding *c = &f->consts.data[k];
            sb_printf(out, "%s%s=", k ? ", " : "", c->name ? c->name : "?");
            if (c->is_float) {
                char buf[64];
                format_float(buf, sizeof buf, c->fval, true);
                sb_puts(out, buf);
            } else if (c->is_bool) {
                sb_puts(out, c->ival ? "true" : "false");
            } else {
                sb_printf(out, "%lld", (long long)c->ival);
            }
        }
        sb_puts(out, ")");
    }
    sb_puts(out, " {\n");
    if (body) put_region(out, body, 1);
    sb_puts(out, "}\n");
}

void ir_print_module(blk_strbuf *out, ir_module *m) {
    if (!m) return;
    for (ir_func *f = m->first; f; f = f->next) {
        if (f != m->first) sb_puts(out, "\n");
        ir_print_func(out, f);
    }
}

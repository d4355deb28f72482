/* interp_print.c — PRINT and ASSERT (the debugging ops).
 *
 * ASSERT: the first false element stops the run with a located error
 * "device_assert failed: MESSAGE" (naming the element of a block and the
 * program instance), as the GPU's trap stops the launch.
 *
 * PRINT: one line per program instance and print op,
 *
 *   pid (X, Y, Z) PREFIX: V1 V2 ...
 *
 * PREFIX is the op's string with trailing blanks and one trailing ':'
 * removed (so print("x", v) and print("x:", v) both give "x: ..."); with no
 * operands the line ends after the prefix, with an empty prefix it is
 * "pid (X, Y, Z): V1 ...". Each operand is printed as
 *   scalar   bool: true/false; signed ints %lld; unsigned %llu; pointers
 *            0x%llx; floats in the shortest %g form (at most 17 digits)
 *            that reads back to the same value of their dtype, plus "inf",
 *            "-inf", "nan"
 *   block    row-major with one pair of brackets per dimension:
 *            [[1, 2, 3], [4, 5, 6]] for a [2, 3] block
 * and operands are separated by one space. The line is written with one
 * fputs, so lines of different prints never interleave.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "interp_impl.h"

static void format_float(blk_strbuf *sb, blk_dtype t, double x) {
    if (isnan(x)) { sb_puts(sb, "nan"); return; }
    if (isinf(x)) { sb_puts(sb, x < 0 ? "-inf" : "inf"); return; }
    char buf[64];
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(buf, sizeof buf, "%.*g", prec, x);
        ir_scalar_val v;
        v.f = strtod(buf, NULL);
        if (eval_normalize(t, v).f == x) break;
    }
    sb_puts(sb, buf);
}

static void format_scalar(blk_strbuf *sb, blk_dtype t, ir_scalar_val v) {
    if (t == DT_BOOL) sb_puts(sb, v.i ? "true" : "false");
    else if (dtype_is_float(t)) format_float(sb, t, v.f);
    else if (t == DT_PTR) sb_printf(sb, "0x%llx", (unsigned long long)v.u);
    else if (dtype_is_unsigned(t)) sb_printf(sb, "%llu", (unsigned long long)v.u);
    else sb_printf(sb, "%lld", (long long)v.i);
}

/* Elements [*pos, ...) of a block with dims shape[dim..rank). */
static void format_block(blk_strbuf *sb, blk_dtype t, const ir_scalar_val *v, const ir_type *ty, int dim,
                         int64_t *pos) {
    sb_putc(sb, '[');
    for (int32_t i = 0; i < ty->shape[dim]; i++) {
        if (i) sb_puts(sb, ", ");
        if (dim + 1 < ty->rank && dim + 1 < IR_MAX_RANK) { /* (the bound: for gcc -O3's -Warray-bounds) */
            format_block(sb, t, v, ty, dim + 1, pos);
        } else {
            format_scalar(sb, t, v[*pos]);
            (*pos)++;
        }
    }
    sb_putc(sb, ']');
}

interp_sig interp_print(interp *I, ir_inst *in) {
    blk_strbuf sb;
    sb_init(&sb);
    sb_printf(&sb, "pid (%u, %u, %u)", I->pid[0], I->pid[1], I->pid[2]);
    const char *prefix = in->str ? in->str : "";
    size_t len = strlen(prefix);
    while (len > 0 && (prefix[len - 1] == ' ' || prefix[len - 1] == '\t')) len--;
    if (len > 0 && prefix[len - 1] == ':') len--;
    if (len > 0) {
        sb_putc(&sb, ' ');
        sb_putn(&sb, prefix, len);
    }
    if (in->num_operands > 0) sb_putc(&sb, ':');
    for (int k = 0; k < in->num_operands; k++) {
        ir_value *v = in->operands[k];
        sb_putc(&sb, ' ');
        if (ir_is_block(v->type)) {
            int64_t pos = 0;
            format_block(&sb, interp_dtype(v), interp_val(I, v), &v->type, 0, &pos);
        } else {
            format_scalar(&sb, interp_dtype(v), interp_val(I, v)[0]);
        }
    }
    sb_putc(&sb, '\n');
    fputs(sb_str(&sb), I->out);
    sb_free(&sb);
    return SIG_NEXT;
}

interp_sig interp_assert(interp *I, ir_inst *in) {
    ir_value *v = in->operands[0];
    const ir_scalar_val *x = interp_val(I, v);
    int64_t n = ir_numel(v->type);
    for (int64_t k = 0; k < n; k++) {
        if (x[k].i != 0) continue;
        const char *msg = in->str ? in->str : "";
        if (!ir_is_block(v->type)) {
            interp_error(I, in, "device_assert failed: %s", msg);
            return SIG_ERROR;
        }
        char idx[96];
        int len = 0;
        int64_t rest = k;
        int64_t coord[IR_MAX_RANK];
        for (int d = v->type.rank - 1; d >= 0; d--) {
            coord[d] = rest % v->type.shape[d];
            rest /= v->type.shape[d];
        }
        for (int d = 0; d < v->type.rank; d++)
            len += snprintf(idx + len, sizeof idx - (size_t)len, "%s%lld", d ? ", " : "", (long long)coord[d]);
        interp_error(I, in, "device_assert failed: %s (element [%s] is false)", msg, idx);
        return SIG_ERROR;
    }
    return SIG_NEXT;
}

/* autotune.c — the @autotune configs of the kernels, for the runtime's
 * autotuner (blkc_emit "autotune"). One line per kernel that has them:
 *
 *   // blk-autotune v1 kernel=matmul key=M,N,K configs=BM:128,BN:256,num_warps:8;BM:64,BN:64
 *
 * Sema has checked the attribute (names are const parameters or
 * num_warps/num_stages, values constants); here each value is written as the
 * literal it is: integers, floats (always with '.' or 'e'), true/false.
 * A config value that is a constant expression rather than a literal
 * (2 * 64) is not evaluated here: the kernel then gets no line, and the
 * runtime uses the first config only, as the compiler does.
 */
#include <stdio.h>
#include <string.h>

#include "compile.h"
#include "front/parse.h" /* TK_MINUS */

/* The literal of a config value into buf; false if it is not one. */
static bool literal(const ast_node *e, char *buf, size_t n) {
    bool neg = false;
    if (e->kind == AST_UNARY && e->op == TK_MINUS && e->lhs) neg = true, e = e->lhs;
    if (e->kind == AST_INT && !e->int_overflow) {
        snprintf(buf, n, "%s%llu", neg ? "-" : "", (unsigned long long)e->ival);
        return true;
    }
    if (e->kind == AST_FLOAT) {
        snprintf(buf, n, "%.17g", neg ? -e->fval : e->fval);
        if (!strpbrk(buf, ".eEn")) strncat(buf, ".0", n - strlen(buf) - 1); /* 2.0 stays a float */
        return true;
    }
    if (e->kind == AST_BOOL && !neg) {
        snprintf(buf, n, "%s", e->ival ? "true" : "false");
        return true;
    }
    return false;
}

static const ast_node *attr_named(const ast_node *attr, const char *name) {
    for (int i = 0; i < attr->args.len; i++) {
        const ast_node *a = attr->args.data[i];
        if (a->kind == AST_NAMED_ARG && a->name && strcmp(a->name, name) == 0) return a->lhs;
    }
    return NULL;
}

/* One kernel's line into out (nothing when a value is not a literal). */
static void kernel_line(blk_strbuf *out, const ast_node *k, const ast_node *attr) {
    const ast_node *key = attr_named(attr, "key"), *configs = attr_named(attr, "configs");
    if (!configs || configs->kind != AST_LIST || configs->args.len == 0) return;
    blk_strbuf line;
    sb_init(&line);
    sb_printf(&line, "// blk-autotune v1 kernel=%s key=", k->name);
    for (int i = 0; key && key->kind == AST_LIST && i < key->args.len; i++)
        sb_printf(&line, "%s%s", i ? "," : "", key->args.data[i]->kind == AST_NAME ? key->args.data[i]->name : "?");
    sb_puts(&line, " configs=");
    bool ok = true;
    for (int j = 0; j < configs->args.len && ok; j++) {
        const ast_node *rec = configs->args.data[j];
        if (rec->kind != AST_RECORD) { ok = false; break; }
        if (j) sb_puts(&line, ";");
        for (int e = 0; e < rec->args.len && ok; e++) {
            const ast_node *ent = rec->args.data[e];
            char v[64];
            if (ent->kind != AST_NAMED_ARG || !ent->name || !ent->lhs || !literal(ent->lhs, v, sizeof v)) ok = false;
            else sb_printf(&line, "%s%s:%s", e ? "," : "", ent->name, v);
        }
    }
    if (ok) sb_printf(out, "%s\n", sb_str(&line));
    sb_free(&line);
}

void compile_autotune_text(blkc_ctx *c, blk_strbuf *out) {
    const ast_node *m = c->units.len ? c->units.data[0].ast : NULL;
    for (int i = 0; m && i < m->args.len; i++) {
        const ast_node *k = m->args.data[i];
        if (k->kind != AST_KERNEL) continue;
        for (int a = 0; a < k->attrs.len; a++)
            if (k->attrs.data[a]->name && strcmp(k->attrs.data[a]->name, "autotune") == 0)
                kernel_line(out, k, k->attrs.data[a]);
    }
}

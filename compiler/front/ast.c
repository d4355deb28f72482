/* ast.c — syntax tree builders and the --emit=ast printer. */
#include "ast.h"
#include "front/parse.h"

#include <inttypes.h>
#include <stdio.h>
#include <math.h>
#include <stdlib.h>

/* ---- builders ---- */

ast_node *ast_new(blk_arena *a, ast_kind kind, blk_loc loc) {
    ast_node *n = ARENA_NEW(a, ast_node);
    if (!n) return NULL;
    n->kind = kind;
    n->loc = loc;
    n->op_loc = loc;
    return n;
}

ast_node *ast_int(blk_arena *a, blk_loc loc, uint64_t v, bool overflow) {
    ast_node *n = ast_new(a, AST_INT, loc);
    if (n) n->ival = v, n->int_overflow = overflow;
    return n;
}

ast_node *ast_float(blk_arena *a, blk_loc loc, double v) {
    ast_node *n = ast_new(a, AST_FLOAT, loc);
    if (n) n->fval = v;
    return n;
}

ast_node *ast_name(blk_arena *a, blk_loc loc, const char *name) {
    ast_node *n = ast_new(a, AST_NAME, loc);
    if (n) n->name = name;
    return n;
}

/* op_loc is the operator: the first byte of the span (- ! ~ are one byte). */
ast_node *ast_unary(blk_arena *a, blk_loc loc, int op, ast_node *x) {
    ast_node *n = ast_new(a, AST_UNARY, loc);
    if (!n) return NULL;
    n->op = op;
    n->lhs = x;
    n->op_loc = (blk_loc){loc.file, loc.off, loc.file >= 0 ? 1 : 0};
    return n;
}

/* loc spans both operands; op_loc is the operator token. */
ast_node *ast_binary(blk_arena *a, blk_loc op_loc, int op, ast_node *l, ast_node *r) {
    blk_loc loc = loc_join(l ? l->loc : op_loc, r ? r->loc : op_loc);
    ast_node *n = ast_new(a, AST_BINARY, loc);
    if (!n) return NULL;
    n->op = op;
    n->op_loc = op_loc;
    n->lhs = l;
    n->rhs = r;
    return n;
}

/* NULL is not added: empty statements (`;`) have no node, and a failed
 * allocation is reported once, by the parser, through arena_failed. */
void ast_push(blk_arena *a, ast_list *l, ast_node *n) {
    if (n) VEC_PUSH(a, *l, n);
}

const char *ast_kind_name(ast_kind k) {
    static const char *const names[AST_KIND_COUNT] = {
        [AST_INT] = "int", [AST_FLOAT] = "float", [AST_STRING] = "string", [AST_BOOL] = "bool",
        [AST_NONE] = "none", [AST_NAME] = "name", [AST_UNARY] = "unary", [AST_BINARY] = "binary",
        [AST_CAST] = "cast", [AST_CALL] = "call", [AST_NAMED_ARG] = "named_arg", [AST_FIELD] = "field",
        [AST_INDEX] = "index", [AST_SLICE] = "slice", [AST_TUPLE] = "tuple", [AST_LIST] = "list",
        [AST_RECORD] = "record", [AST_TYPE_SCALAR] = "type_scalar", [AST_TYPE_PTR] = "type_ptr",
        [AST_TYPE_BLOCK] = "type_block", [AST_BLOCK] = "block", [AST_LET] = "let", [AST_VAR] = "var",
        [AST_ASSIGN] = "assign", [AST_EXPR_STMT] = "expr_stmt", [AST_IF] = "if", [AST_FOR] = "for",
        [AST_WHILE] = "while", [AST_BREAK] = "break", [AST_CONTINUE] = "continue",
        [AST_RETURN] = "return", [AST_IMPORT] = "import", [AST_CONST] = "const", [AST_FN] = "fn",
        [AST_KERNEL] = "kernel", [AST_PARAM] = "param", [AST_ATTR] = "attr", [AST_MODULE] = "module",
    };
    return (unsigned)k < AST_KIND_COUNT && names[k] ? names[k] : "?";
}

/* ---- printer ----
 *
 * One node per line, children indented by two, Lisp-style closing parens:
 *
 *   (kernel vector_add
 *     (param x (ptr f32))
 *     (param const BLOCK i32
 *       (int 1024))
 *     (block
 *       (let offs
 *         (binary +
 *           (name a)
 *           (name b)))))
 *
 * Types are printed inline ("f32", "(ptr const f32)", "(type_block f32 (int
 * 128) (name BN))"), as is everything inside a type. */

/* Shortest %g form that reads back as the same double (deterministic). */
static void put_double(blk_strbuf *out, double v) {
    if (isnan(v)) { sb_puts(out, "nan"); return; }
    if (isinf(v)) { sb_puts(out, v < 0 ? "-inf" : "inf"); return; }
    char buf[40];
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(buf, sizeof buf, "%.*g", prec, v);
        if (strtod(buf, NULL) == v) break;
    }
    sb_puts(out, buf);
}

static void put_string(blk_strbuf *out, const char *s, int len) {
    sb_putc(out, '"');
    for (int i = 0; s && i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        switch (c) {
        case '\n': sb_puts(out, "\\n"); break;
        case '\t': sb_puts(out, "\\t"); break;
        case '\r': sb_puts(out, "\\r"); break;
        case '\0': sb_puts(out, "\\0"); break;
        case '"': sb_puts(out, "\\\""); break;
        case '\\': sb_puts(out, "\\\\"); break;
        default:
            if (c < 0x20 || c == 0x7F) sb_printf(out, "\\x%02X", c);
            else sb_putc(out, (char)c);
        }
    }
    sb_putc(out, '"');
}

static void print_node(blk_strbuf *out, const ast_node *n, int indent, bool flat);

static void child(blk_strbuf *out, const ast_node *n, int indent, bool flat) {
    if (flat) {
        sb_putc(out, ' ');
    } else {
        sb_putc(out, '\n');
        for (int i = 0; i < indent + 2; i++) sb_putc(out, ' ');
    }
    print_node(out, n, indent + 2, flat);
}

static void children(blk_strbuf *out, const ast_list *l, int indent, bool flat) {
    for (int i = 0; i < l->len; i++) child(out, l->data[i], indent, flat);
}

/* Types, always on one line. */
static void put_type(blk_strbuf *out, const ast_node *t) {
    if (!t) { sb_puts(out, "?"); return; }
    switch (t->kind) {
    case AST_TYPE_SCALAR: sb_puts(out, t->name ? t->name : "?"); return;
    case AST_TYPE_PTR:
        sb_puts(out, t->is_const ? "(ptr const " : "(ptr ");
        put_type(out, t->type);
        sb_putc(out, ')');
        return;
    case AST_TYPE_BLOCK:
        sb_puts(out, "(type_block ");
        put_type(out, t->type);
        children(out, &t->args, 0, true);
        sb_putc(out, ')');
        return;
    default: print_node(out, t, 0, true); return;
    }
}

static void put_opt_type(blk_strbuf *out, const ast_node *t) {
    if (!t) return;
    sb_putc(out, ' ');
    put_type(out, t);
}

static void print_node(blk_strbuf *out, const ast_node *n, int indent, bool flat) {
    if (!n) { sb_puts(out, "(null)"); return; }
    if (n->kind == AST_TYPE_SCALAR || n->kind == AST_TYPE_PTR || n->kind == AST_TYPE_BLOCK) {
        put_type(out, n);
        return;
    }
    sb_printf(out, "(%s", ast_kind_name(n->kind));
    switch (n->kind) {
    case AST_INT:
        sb_printf(out, " %" PRIu64 "%s", n->ival, n->int_overflow ? " overflow" : "");
        break;
    case AST_FLOAT: sb_putc(out, ' '); put_double(out, n->fval); break;
    case AST_STRING: sb_putc(out, ' '); put_string(out, n->str, n->str_len); break;
    case AST_BOOL: sb_puts(out, n->ival ? " true" : " false"); break;
    case AST_NAME: sb_printf(out, " %s", n->name ? n->name : "?"); break;
    case AST_UNARY:
    case AST_BINARY:
        sb_printf(out, " %s", ast_op_text(n->op));
        child(out, n->lhs, indent, flat);
        if (n->kind == AST_BINARY) child(out, n->rhs, indent, flat);
        break;
    case AST_CAST: put_opt_type(out, n->type); child(out, n->lhs, indent, flat); break;
    case AST_CALL:
    case AST_INDEX:
        child(out, n->lhs, indent, flat);
        children(out, &n->args, indent, flat);
        break;
    case AST_NAMED_ARG:
    case AST_FIELD:
        sb_printf(out, " %s", n->name ? n->name : "?");
        child(out, n->lhs, indent, flat);
        break;
    case AST_TUPLE:
    case AST_LIST:
    case AST_RECORD:
    case AST_BLOCK:
    case AST_MODULE:
        children(out, &n->args, indent, flat);
        break;
    case AST_LET:
    case AST_VAR:
        if (n->is_tuple) {
            sb_puts(out, " (");
            for (int i = 0; i < n->names.len; i++)
                sb_printf(out, "%s%s", i ? " " : "", n->names.data[i]->name ? n->names.data[i]->name : "?");
            sb_putc(out, ')');
        } else {
            for (int i = 0; i < n->names.len; i++)
                sb_printf(out, " %s", n->names.data[i]->name ? n->names.data[i]->name : "?");
        }
        put_opt_type(out, n->type);
        child(out, n->rhs, indent, flat);
        break;
    case AST_ASSIGN:
        if (n->op) sb_printf(out, " %s=", ast_op_text(n->op));
        child(out, n->lhs, indent, flat);
        child(out, n->rhs, indent, flat);
        break;
    case AST_EXPR_STMT: child(out, n->lhs, indent, flat); break;
    case AST_IF:
        child(out, n->cond, indent, flat);
        child(out, n->then_body, indent, flat);
        if (n->else_body) child(out, n->else_body, indent, flat);
        break;
    case AST_FOR:
        sb_printf(out, " %s", n->name ? n->name : "?");
        child(out, n->lhs, indent, flat);
        children(out, &n->attrs, indent, flat);
        child(out, n->body, indent, flat);
        break;
    case AST_WHILE:
        child(out, n->cond, indent, flat);
        child(out, n->body, indent, flat);
        break;
    case AST_RETURN:
        if (n->lhs) child(out, n->lhs, indent, flat);
        break;
    case AST_IMPORT:
        sb_putc(out, ' ');
        put_string(out, n->str, n->str_len);
        if (n->name) sb_printf(out, " as %s", n->name);
        break;
    case AST_CONST:
        sb_printf(out, " %s", n->name ? n->name : "?");
        put_opt_type(out, n->type);
        child(out, n->rhs, indent, flat);
        break;
    case AST_FN:
    case AST_KERNEL:
        sb_printf(out, " %s", n->name ? n->name : "?");
        if (n->type) { sb_puts(out, " ->"); put_opt_type(out, n->type); }
        children(out, &n->attrs, indent, flat);
        children(out, &n->params, indent, flat);
        child(out, n->body, indent, flat);
        break;
    case AST_PARAM:
        sb_printf(out, "%s %s", n->is_const ? " const" : "", n->name ? n->name : "?");
        put_opt_type(out, n->type);
        if (n->rhs) child(out, n->rhs, indent, flat);
        break;
    case AST_ATTR:
        sb_printf(out, " %s", n->name ? n->name : "?");
        children(out, &n->args, indent, flat);
        break;
    default: /* NONE, SLICE, BREAK, CONTINUE: the kind says it all */
        break;
    }
    sb_putc(out, ')');
}

void ast_print(blk_strbuf *out, const ast_node *n, int indent) {
    for (int i = 0; i < indent; i++) sb_putc(out, ' ');
    print_node(out, n, indent, false);
    sb_putc(out, '\n');
}

/* ast.h — the syntax tree the parser builds and sema walks.
 *
 * One node struct for every kind; which fields a kind uses is listed next to
 * the kind below. Every node carries loc, the span diagnostics point at
 * (for a binary expression: the whole expression; for a call: the whole
 * call; op_loc keeps the operator token's span for carets on the operator).
 * Nodes live in the compilation's arena and are never freed one by one.
 */
#ifndef BLK_AST_H
#define BLK_AST_H

#include "diag.h"

/* Bracket nesting the parser accepts (parens, blocks): deeper input is an
 * error, never a stack overflow. A tree is therefore at most a few times this
 * deep, which the walks over it (sema included) rely on. */
enum { COMPILE_MAX_NESTING = 256 };

typedef struct ast_node ast_node;
typedef VEC(ast_node *) ast_list;

typedef enum {
    /* ---- expressions ---- */
    AST_INT,        /* ival (value, saturated), int_overflow (literal does not fit u64) */
    AST_FLOAT,      /* fval */
    AST_STRING,     /* str, str_len: contents with escapes decoded */
    AST_BOOL,       /* ival 0/1 */
    AST_NONE,       /* None (in x[:, None]) */
    AST_NAME,       /* name */
    AST_UNARY,      /* op (TK_MINUS, TK_BANG, TK_TILDE), lhs */
    AST_BINARY,     /* op (TK_ token of the operator), lhs, rhs, op_loc */
    AST_CAST,       /* lhs = expr, type = target type        x as T */
    AST_CALL,       /* lhs = callee (NAME, or FIELD for d.load(...)), args (may hold AST_NAMED_ARG) */
    AST_NAMED_ARG,  /* name, lhs = value                     cache = "cg" */
    AST_FIELD,      /* lhs = object, name                    d.load */
    AST_INDEX,      /* lhs = base, args = subscripts (AST_SLICE / AST_NONE / expr) */
    AST_SLICE,      /* ':' in a subscript (no bounds; blk indexing only reshapes) */
    AST_TUPLE,      /* args = elements                      (a, b) */
    AST_LIST,       /* args = elements                      [M, N, K] */
    AST_RECORD,     /* args = AST_NAMED_ARG entries         {BM = 128, num_warps = 8} */

    /* ---- types (appear in params, returns, `as`, let annotations) ---- */
    AST_TYPE_SCALAR, /* name = "f32" etc. */
    AST_TYPE_PTR,    /* type = pointee, is_const (for *const T) */
    AST_TYPE_BLOCK,  /* type = element type, args = dimension exprs   f32[128, 64] */

    /* ---- statements ---- */
    AST_BLOCK,      /* args = statements */
    AST_LET,        /* names (AST_NAME nodes; >1 or is_tuple for let (a, b) = ...), type (optional), rhs */
    AST_VAR,        /* same fields as AST_LET */
    AST_ASSIGN,     /* lhs = target (AST_NAME), rhs, op = 0 for '=' or the binary op token of '+=' etc. */
    AST_EXPR_STMT,  /* lhs */
    AST_IF,         /* cond, then_body (AST_BLOCK), else_body (AST_BLOCK, AST_IF, or NULL) */
    AST_FOR,        /* name (loop variable), lhs = iterator call (range/static_range), attrs, body */
    AST_WHILE,      /* cond, body */
    AST_BREAK,
    AST_CONTINUE,
    AST_RETURN,     /* lhs = value or NULL */

    /* ---- items ---- */
    AST_IMPORT,     /* str = path as written; name = alias (import "x.blk" as nn) or NULL */
    AST_CONST,      /* name, type (optional), rhs */
    AST_FN,         /* name, params, type = return type (optional), body */
    AST_KERNEL,     /* name, params, attrs, body */
    AST_PARAM,      /* name, type (optional for fn), is_const, rhs = default value (const only) */
    AST_ATTR,       /* name (num_warps, num_stages, autotune, ...), args (exprs / named args) */
    AST_MODULE,     /* args = items */

    AST_KIND_COUNT
} ast_kind;

struct ast_node {
    ast_kind kind;
    blk_loc loc;
    blk_loc op_loc;       /* operator / keyword / name token, where useful */
    int op;               /* token kind (TK_PLUS, ...) for UNARY/BINARY/ASSIGN */
    const char *name;
    const char *str;
    int str_len;
    uint64_t ival;
    bool int_overflow;
    bool is_const;        /* PARAM: const param; TYPE_PTR: *const T */
    bool is_tuple;        /* LET/VAR: parenthesised pattern */
    double fval;
    ast_node *lhs, *rhs;
    ast_node *type;
    ast_node *cond, *then_body, *else_body, *body;
    ast_list args;        /* call args, subscripts, elements, stmts, items, dims */
    ast_list params;      /* FN/KERNEL params */
    ast_list attrs;       /* KERNEL / FOR attributes */
    ast_list names;       /* LET/VAR pattern */
};

/* Builders, one per construct; the Lemon actions are one-line calls to these.
 * All take the arena; none fail except on allocation failure (then NULL, and
 * arena_failed() reports it). */
ast_node *ast_new(blk_arena *a, ast_kind kind, blk_loc loc);
ast_node *ast_int(blk_arena *a, blk_loc loc, uint64_t v, bool overflow);
ast_node *ast_float(blk_arena *a, blk_loc loc, double v);
ast_node *ast_name(blk_arena *a, blk_loc loc, const char *name);
ast_node *ast_unary(blk_arena *a, blk_loc loc, int op, ast_node *x);
ast_node *ast_binary(blk_arena *a, blk_loc op_loc, int op, ast_node *l, ast_node *r);
void ast_push(blk_arena *a, ast_list *l, ast_node *n);

const char *ast_kind_name(ast_kind k);
/* The text of the operator token in a node's op (TK_PLUS -> "+"), for the
 * printer and messages; "?" for a token without a fixed text. Defined in
 * lex.re beside the one token table (LEX_TOKENS). */
const char *ast_op_text(int op);
/* Print the tree (for --emit=ast) as an indented S-expression-like dump. */
struct blk_diag;
void ast_print(blk_strbuf *out, const ast_node *n, int indent);

#endif

/* parse_build.h — what parse.y's actions and the AST builders share: the
 * parser's state and the builders (parse_build.c), so that the grammar file
 * holds the grammar and its push driver. Private to compiler/front/. */
#ifndef BLK_PARSE_BUILD_H
#define BLK_PARSE_BUILD_H

#include "front/front.h"

/* From lex.re. */
int lex_scan(blk_diag *d, int file, uint32_t *pos, blk_loc *tok);
const char *lex_token_spelling(int kind);
uint64_t lex_int_value(const char *s, size_t n, bool *overflow);
double lex_float_value(const char *s, size_t n);
char *lex_string_value(blk_arena *a, const char *s, size_t n, int *len);

typedef struct { int op; blk_loc loc; } parse_op;            /* '=' / '+=' ... */
typedef struct { ast_node *head, *tail; } parse_if;          /* if / else if chain */
typedef struct { int kind; blk_loc loc; bool block; int gen; } parse_open; /* an open bracket */

enum { MODE_PARSE, MODE_SKIP, MODE_DONE };
/* Deepest syntax tree parse_file hands on: sema and ast_print recurse over
 * it. Bracket nesting is limited to COMPILE_MAX_NESTING as it is read; this
 * catches what brackets do not count, like `a + a + ... + a` or long
 * else-if chains. */
enum { PARSE_MAX_TREE_DEPTH = 4 * COMPILE_MAX_NESTING };

typedef struct parse_state {
    blk_arena *a;
    blk_diag *diag;
    int file;
    const char *text;
    blk_loc file_loc;
    ast_node *module;        /* set when the main parser accepts */
    void *parser;
    int mode;
    bool error;              /* the parser just reported a syntax error */
    bool abort;              /* stop reading: nesting limit, stack overflow */
    bool recovering;         /* the parser restarted after an error (RECOVER) */
    bool dirty;              /* recovery dropped brackets that were never closed */
    bool else_ok;            /* an `else` may follow: drop it (see parse_step) */
    int gen;                 /* restarts so far; parse_open.gen says which parser opened it */
    uint32_t restart_mark;   /* 1 + offset of the last token a parser restarted at */
    int tok_kind, prev_kind;
    blk_loc tok, prev;
    bool at_stmt_start;
    int stmt_kw;             /* first token of the current statement or item */
    int unary_run;           /* prefix operators in a row */
    parse_open open[COMPILE_MAX_NESTING];
    int nopen;
    parse_open before;       /* innermost open bracket before the current token */
    bool has_before;
} parse_state;

/* ---- builders used by the actions; all tolerate NULL (allocation failed) ---- */
blk_loc nloc(const ast_node *n);
const char *tok_text(parse_state *ps, blk_loc t);
ast_node *mk(parse_state *ps, ast_kind k, blk_loc loc);
ast_list list1(parse_state *ps, ast_node *n);
ast_node *mk_name(parse_state *ps, blk_loc t);
ast_node *mk_int(parse_state *ps, blk_loc t);
ast_node *mk_float(parse_state *ps, blk_loc t);
ast_node *mk_string(parse_state *ps, blk_loc t);
ast_node *mk_bool(parse_state *ps, blk_loc t, int v);
ast_node *mk_list(parse_state *ps, ast_kind k, blk_loc open, ast_list items, blk_loc close);
ast_node *mk_tuple(parse_state *ps, blk_loc open, ast_node *first, ast_list rest, blk_loc close);
ast_node *mk_call(parse_state *ps, ast_node *callee, ast_list args, blk_loc close);
ast_node *mk_field(parse_state *ps, ast_node *obj, blk_loc name);
ast_node *mk_index(parse_state *ps, ast_node *base, blk_loc open, ast_list subs, blk_loc close);
ast_node *mk_named(parse_state *ps, blk_loc name, ast_node *value);
ast_node *mk_cast(parse_state *ps, ast_node *x, blk_loc as, ast_node *type);
ast_node *mk_type_scalar(parse_state *ps, blk_loc name);
ast_node *mk_type_block(parse_state *ps, blk_loc name, ast_list dims, blk_loc close);
ast_node *mk_type_ptr(parse_state *ps, blk_loc star, bool is_const, ast_node *pointee);
ast_node *mk_let(parse_state *ps, ast_kind k, blk_loc kw, ast_node *pat, ast_node *type, ast_node *value, blk_loc semi);
ast_node *mk_assign(parse_state *ps, ast_node *target, parse_op op, ast_node *value, blk_loc semi);
ast_node *mk_expr_stmt(parse_state *ps, ast_node *x, blk_loc semi);
ast_node *mk_jump(parse_state *ps, ast_kind k, blk_loc kw, ast_node *value, blk_loc semi);
ast_node *mk_if(parse_state *ps, blk_loc kw, ast_node *cond, ast_node *then);
parse_if if_start(parse_state *ps, blk_loc kw, ast_node *cond, ast_node *then);
parse_if if_link(parse_state *ps, parse_if c, blk_loc kw, ast_node *cond, ast_node *then);
ast_node *if_end(parse_state *ps, parse_if c, ast_node *els);
ast_node *mk_for(parse_state *ps, blk_loc kw, blk_loc var, ast_node *iter, ast_list attrs, ast_node *body);
ast_node *mk_while(parse_state *ps, blk_loc kw, ast_node *cond, ast_node *body);
ast_node *mk_import(parse_state *ps, blk_loc kw, blk_loc path, const blk_loc *alias, blk_loc semi);
ast_node *mk_const(parse_state *ps, blk_loc kw, blk_loc name, ast_node *type, ast_node *value, blk_loc semi);
ast_node *mk_param(parse_state *ps, blk_loc first, blk_loc name, bool is_const, ast_node *type, ast_node *dflt);
ast_node *mk_param_bad_default(parse_state *ps, blk_loc name, ast_node *type, blk_loc eq, ast_node *dflt);
ast_node *mk_attr(parse_state *ps, blk_loc at, blk_loc name, ast_list args, blk_loc end);
ast_node *mk_fn(parse_state *ps, blk_loc kw, blk_loc name, ast_list params, ast_node *ret, ast_node *body);
ast_node *mk_kernel(parse_state *ps, ast_list attrs, blk_loc kw, blk_loc name, ast_list params, ast_node *body);
ast_node *mk_kernel_ret(parse_state *ps, ast_list attrs, blk_loc kw, blk_loc name, ast_list params, blk_loc arrow, ast_node *ret, ast_node *body);
ast_node *mk_module(parse_state *ps, ast_list items);

#endif

/* parse_build.c — the AST builders parse.y's actions call (parse_build.h):
 * tokens into literal and name nodes, the nodes of each construct, and the
 * few checks that belong to a construct's shape (a kernel returns nothing). */
#include "front/parse_build.h"

#include <stdlib.h>
#include <string.h>

blk_loc nloc(const ast_node *n) { return n ? n->loc : LOC_NONE; }

const char *tok_text(parse_state *ps, blk_loc t) {
    return arena_strndup(ps->a, ps->text + t.off, t.len);
}

ast_node *mk(parse_state *ps, ast_kind k, blk_loc loc) { return ast_new(ps->a, k, loc); }

ast_list list1(parse_state *ps, ast_node *n) {
    ast_list l = {0};
    ast_push(ps->a, &l, n);
    return l;
}

ast_node *mk_name(parse_state *ps, blk_loc t) { return ast_name(ps->a, t, tok_text(ps, t)); }

ast_node *mk_int(parse_state *ps, blk_loc t) {
    bool overflow;
    uint64_t v = lex_int_value(ps->text + t.off, t.len, &overflow);
    return ast_int(ps->a, t, v, overflow);
}

ast_node *mk_float(parse_state *ps, blk_loc t) {
    return ast_float(ps->a, t, lex_float_value(ps->text + t.off, t.len));
}

ast_node *mk_string(parse_state *ps, blk_loc t) {
    ast_node *n = mk(ps, AST_STRING, t);
    if (n) n->str = lex_string_value(ps->a, ps->text + t.off, t.len, &n->str_len);
    return n;
}

ast_node *mk_bool(parse_state *ps, blk_loc t, int v) {
    ast_node *n = mk(ps, AST_BOOL, t);
    if (n) n->ival = (uint64_t)v;
    return n;
}

/* BLOCK, TUPLE, LIST, RECORD: items between two bracket tokens. */
ast_node *mk_list(parse_state *ps, ast_kind k, blk_loc open, ast_list items, blk_loc close) {
    ast_node *n = mk(ps, k, loc_join(open, close));
    if (n) n->args = items, n->op_loc = open;
    return n;
}

ast_node *mk_tuple(parse_state *ps, blk_loc open, ast_node *first, ast_list rest, blk_loc close) {
    ast_list items = list1(ps, first);
    for (int i = 0; i < rest.len; i++) ast_push(ps->a, &items, rest.data[i]);
    return mk_list(ps, AST_TUPLE, open, items, close);
}

ast_node *mk_call(parse_state *ps, ast_node *callee, ast_list args, blk_loc close) {
    ast_node *n = mk(ps, AST_CALL, loc_join(nloc(callee), close));
    if (!n) return NULL;
    n->lhs = callee;
    n->args = args;
    n->op_loc = callee ? (callee->kind == AST_FIELD ? callee->op_loc : callee->loc) : close;
    return n;
}

ast_node *mk_field(parse_state *ps, ast_node *obj, blk_loc name) {
    ast_node *n = mk(ps, AST_FIELD, loc_join(nloc(obj), name));
    if (n) n->lhs = obj, n->name = tok_text(ps, name), n->op_loc = name;
    return n;
}

ast_node *mk_index(parse_state *ps, ast_node *base, blk_loc open, ast_list subs, blk_loc close) {
    ast_node *n = mk(ps, AST_INDEX, loc_join(nloc(base), close));
    if (n) n->lhs = base, n->args = subs, n->op_loc = open;
    return n;
}

ast_node *mk_named(parse_state *ps, blk_loc name, ast_node *value) {
    ast_node *n = mk(ps, AST_NAMED_ARG, loc_join(name, nloc(value)));
    if (n) n->name = tok_text(ps, name), n->lhs = value, n->op_loc = name;
    return n;
}

ast_node *mk_cast(parse_state *ps, ast_node *x, blk_loc as, ast_node *type) {
    ast_node *n = mk(ps, AST_CAST, loc_join(nloc(x), nloc(type)));
    if (n) n->lhs = x, n->type = type, n->op_loc = as;
    return n;
}

ast_node *mk_type_scalar(parse_state *ps, blk_loc name) {
    ast_node *n = mk(ps, AST_TYPE_SCALAR, name);
    if (n) n->name = tok_text(ps, name);
    return n;
}

ast_node *mk_type_block(parse_state *ps, blk_loc name, ast_list dims, blk_loc close) {
    ast_node *n = mk(ps, AST_TYPE_BLOCK, loc_join(name, close));
    if (n) n->type = mk_type_scalar(ps, name), n->args = dims;
    return n;
}

ast_node *mk_type_ptr(parse_state *ps, blk_loc star, bool is_const, ast_node *pointee) {
    ast_node *n = mk(ps, AST_TYPE_PTR, loc_join(star, nloc(pointee)));
    if (n) n->type = pointee, n->is_const = is_const, n->op_loc = star;
    return n;
}

/* let x = e;  let x: T = e;  let (a, b) = e;  (and var) */
ast_node *mk_let(parse_state *ps, ast_kind k, blk_loc kw, ast_node *pat, ast_node *type,
                        ast_node *value, blk_loc semi) {
    ast_node *n = mk(ps, k, loc_join(kw, semi));
    if (!n || !pat) return n;
    n->is_tuple = pat->kind == AST_TUPLE;
    n->names = n->is_tuple ? pat->args : list1(ps, pat);
    n->op_loc = pat->loc;
    n->type = type;
    n->rhs = value;
    return n;
}

/* x = e;  x += e;  The target must be a plain variable name. */
ast_node *mk_assign(parse_state *ps, ast_node *target, parse_op op, ast_node *value, blk_loc semi) {
    ast_node *n = mk(ps, AST_ASSIGN, loc_join(nloc(target), semi));
    if (!n) return NULL;
    if (target && target->kind != AST_NAME)
        diag_error(ps->diag, target->loc, "left side of '%.*s' must be a variable name", (int)op.loc.len,
                   ps->text + op.loc.off);
    n->lhs = target, n->op = op.op, n->rhs = value, n->op_loc = op.loc;
    return n;
}

ast_node *mk_expr_stmt(parse_state *ps, ast_node *x, blk_loc semi) {
    ast_node *n = mk(ps, AST_EXPR_STMT, loc_join(nloc(x), semi));
    if (n) n->lhs = x, n->op_loc = nloc(x);
    return n;
}

/* break; continue; return; return e; */
ast_node *mk_jump(parse_state *ps, ast_kind k, blk_loc kw, ast_node *value, blk_loc semi) {
    ast_node *n = mk(ps, k, loc_join(kw, semi));
    if (n) n->lhs = value, n->op_loc = kw;
    return n;
}

ast_node *mk_if(parse_state *ps, blk_loc kw, ast_node *cond, ast_node *then) {
    ast_node *n = mk(ps, AST_IF, loc_join(kw, nloc(then)));
    if (n) n->cond = cond, n->then_body = then, n->op_loc = kw;
    return n;
}

/* The if / else if chain is built left-recursively (the parser stack stays
 * flat however long the chain); each AST_IF's span runs to the chain's end. */
parse_if if_start(parse_state *ps, blk_loc kw, ast_node *cond, ast_node *then) {
    ast_node *n = mk_if(ps, kw, cond, then);
    return (parse_if){n, n};
}

parse_if if_link(parse_state *ps, parse_if c, blk_loc kw, ast_node *cond, ast_node *then) {
    ast_node *n = mk_if(ps, kw, cond, then);
    if (c.tail) c.tail->else_body = n;
    return (parse_if){c.head, n};
}

ast_node *if_end(parse_state *ps, parse_if c, ast_node *els) {
    (void)ps;
    if (c.tail) c.tail->else_body = els;
    blk_loc end = els ? els->loc : nloc(c.tail);
    for (ast_node *n = c.head; n && n->kind == AST_IF; n = n->else_body) n->loc = loc_join(n->loc, end);
    return c.head;
}

/* for NAME in ITER ATTRS BLOCK: ITER must be a call (range, static_range). */
ast_node *mk_for(parse_state *ps, blk_loc kw, blk_loc var, ast_node *iter, ast_list attrs, ast_node *body) {
    ast_node *n = mk(ps, AST_FOR, loc_join(kw, nloc(body)));
    if (!n) return NULL;
    if (iter && iter->kind != AST_CALL)
        diag_error(ps->diag, iter->loc, "a for loop iterates over a call such as range(0, n) or static_range(4)");
    n->name = tok_text(ps, var), n->op_loc = var;
    n->lhs = iter, n->attrs = attrs, n->body = body;
    return n;
}

ast_node *mk_while(parse_state *ps, blk_loc kw, ast_node *cond, ast_node *body) {
    ast_node *n = mk(ps, AST_WHILE, loc_join(kw, nloc(body)));
    if (n) n->cond = cond, n->body = body, n->op_loc = kw;
    return n;
}

ast_node *mk_import(parse_state *ps, blk_loc kw, blk_loc path, const blk_loc *alias, blk_loc semi) {
    ast_node *n = mk(ps, AST_IMPORT, loc_join(kw, semi));
    if (!n) return NULL;
    n->str = lex_string_value(ps->a, ps->text + path.off, path.len, &n->str_len);
    n->name = alias ? tok_text(ps, *alias) : NULL;
    n->op_loc = path;
    return n;
}

ast_node *mk_const(parse_state *ps, blk_loc kw, blk_loc name, ast_node *type, ast_node *value, blk_loc semi) {
    ast_node *n = mk(ps, AST_CONST, loc_join(kw, semi));
    if (n) n->name = tok_text(ps, name), n->op_loc = name, n->type = type, n->rhs = value;
    return n;
}

/* NAME[: T]  or  const NAME[: T][= default] */
ast_node *mk_param(parse_state *ps, blk_loc first, blk_loc name, bool is_const, ast_node *type, ast_node *dflt) {
    ast_node *n = mk(ps, AST_PARAM, loc_join(loc_join(first, nloc(type)), nloc(dflt)));
    if (n) n->name = tok_text(ps, name), n->op_loc = name, n->is_const = is_const, n->type = type, n->rhs = dflt;
    return n;
}

/* NAME: T = value: only const parameters have defaults. */
ast_node *mk_param_bad_default(parse_state *ps, blk_loc name, ast_node *type, blk_loc eq, ast_node *dflt) {
    diag_error(ps->diag, eq, "only 'const' parameters can have a default value");
    return mk_param(ps, name, name, false, type, dflt);
}

ast_node *mk_attr(parse_state *ps, blk_loc at, blk_loc name, ast_list args, blk_loc end) {
    ast_node *n = mk(ps, AST_ATTR, loc_join(at, end));
    if (n) n->name = tok_text(ps, name), n->op_loc = name, n->args = args;
    return n;
}

ast_node *mk_fn(parse_state *ps, blk_loc kw, blk_loc name, ast_list params, ast_node *ret, ast_node *body) {
    ast_node *n = mk(ps, AST_FN, loc_join(kw, nloc(body)));
    if (n) n->name = tok_text(ps, name), n->op_loc = name, n->params = params, n->type = ret, n->body = body;
    return n;
}

/* [attrs] kernel NAME(params) body. Kernel parameters are the launch
 * arguments, so each non-const one needs a type. */
ast_node *mk_kernel(parse_state *ps, ast_list attrs, blk_loc kw, blk_loc name, ast_list params, ast_node *body) {
    blk_loc start = attrs.len && attrs.data[0] ? attrs.data[0]->loc : kw;
    ast_node *n = mk(ps, AST_KERNEL, loc_join(start, nloc(body)));
    if (!n) return NULL;
    for (int i = 0; i < params.len; i++) {
        ast_node *p = params.data[i];
        if (p && !p->is_const && !p->type)
            diag_error(ps->diag, p->op_loc, "kernel parameter '%s' needs a type", p->name ? p->name : "?");
    }
    n->name = tok_text(ps, name), n->op_loc = name, n->attrs = attrs, n->params = params, n->body = body;
    return n;
}

ast_node *mk_kernel_ret(parse_state *ps, ast_list attrs, blk_loc kw, blk_loc name, ast_list params,
                               blk_loc arrow, ast_node *ret, ast_node *body) {
    diag_error(ps->diag, loc_join(arrow, nloc(ret)), "a kernel cannot return a value");
    return mk_kernel(ps, attrs, kw, name, params, body);
}

ast_node *mk_module(parse_state *ps, ast_list items) {
    ast_node *n = mk(ps, AST_MODULE, ps->file_loc);
    if (n) n->args = items;
    return n;
}

// parse.y — the blk grammar (Lemon, LALR(1)).
//
// Actions are one-line calls to the builders in the %include block below
// (SQLite's parse.y style); the tree is described in ast.h. The push-driven
// parse loop, error recovery and syntax-error messages are in the %code block
// at the end, because they need the parser's tables.
//
// Precedence (loosest first): || && | ^ & (== !=) (< <= > >=) (<< >>) (+ -)
// (* / %), then `as`, then unary - ! ~, then postfix calls, fields and
// subscripts. The tiers below `*` are separate nonterminals (cast, unary,
// postfix, primary), so `-x as f32` is `(-x) as f32` and `a * b as T` is
// `a * (b as T)` without precedence tricks.
//
// Records `{ name = value }` are values only after `name =` in an argument
// list or inside a list, so `if x {` is never ambiguous; a record outside an
// attribute is rejected after parsing (parse_check_tree).
//
// Also accepted: a trailing ',' in parameter, argument, list and record
// lists; `;` alone as an empty statement (no node), also between items.
// Attributes go on kernels and on for loops. Rejected here rather than in
// sema because they are about form: a default on a non-const parameter, a
// kernel parameter without a type, a kernel return type, a for loop over
// something other than a call, an assignment to anything but a name.

%name Parser
%token_prefix TK_
%start_symbol input
%token_type {blk_loc}
%default_type {ast_node *}
%extra_context {parse_state *ps}
%stack_size 16384
%stack_overflow { parse_stack_overflow(ps); }
%syntax_error { parse_syntax_error(ps, yypParser, yymajor, yyminor); }

// Token codes: literals, keywords, punctuation, operators. ILLEGAL is what the
// lexer returns for a malformed token (never given to the parser); RECOVER
// starts a parser that resumes after a syntax error (see input below).
%token IDENT INT FLOAT STRING.
%token KERNEL FN CONST LET VAR IF ELSE FOR IN WHILE BREAK CONTINUE RETURN IMPORT AS TRUE FALSE NONE.
%token LPAREN RPAREN LBRACKET RBRACKET LBRACE RBRACE COMMA SEMI COLON DOT ARROW AT ASSIGN.
%token OROR ANDAND PIPE CARET AMP EQ NE LT LE GT GE SHL SHR PLUS MINUS STAR SLASH PERCENT BANG TILDE.
%token PLUSEQ MINUSEQ STAREQ SLASHEQ PERCENTEQ AMPEQ PIPEEQ CARETEQ SHLEQ SHREQ.
%token ILLEGAL RECOVER.

%left OROR.
%left ANDAND.
%left PIPE.
%left CARET.
%left AMP.
%left EQ NE.
%left LT LE GT GE.
%left SHL SHR.
%left PLUS MINUS.
%left STAR SLASH PERCENT.

%include {
#include "front/parse_build.h" /* the parser's state, the AST builders */

#include <stdlib.h>
#include <string.h>

/* The parse loop does its own recovery (parse_step); Lemon only reports. */
#define YYNOERRORRECOVERY 1

struct yyParser;
static void parse_syntax_error(parse_state *ps, struct yyParser *p, int major, blk_loc tok);
static void parse_stack_overflow(parse_state *ps);
}

// ---------------------------------------------------------------- module
// input is a module, or, after a syntax error, whatever follows the point
// where parsing resumed: statements and items in any order, and the closing
// braces of blocks that were opened before it (see parse_restart).
input ::= items(L).                                   { ps->module = mk_module(ps, L); }
input ::= RECOVER recover_seq.

%type items {ast_list}
items(A) ::= .                                        { A = (ast_list){0}; }
items(A) ::= items(A) item(I).                        { ast_push(ps->a, &A, I); }
items(A) ::= items(A) SEMI.

recover_seq ::= .
recover_seq ::= recover_seq item.
recover_seq ::= recover_seq stmt.
recover_seq ::= recover_seq RBRACE.

// ---------------------------------------------------------------- items
item(A) ::= IMPORT(K) STRING(P) SEMI(E).              { A = mk_import(ps, K, P, NULL, E); }
item(A) ::= IMPORT(K) STRING(P) AS IDENT(N) SEMI(E).  { A = mk_import(ps, K, P, &N, E); }
item(A) ::= CONST(K) IDENT(N) type_opt(T) ASSIGN expr(V) SEMI(E). { A = mk_const(ps, K, N, T, V, E); }
item(A) ::= FN(K) IDENT(N) LPAREN params(P) RPAREN ret_opt(T) block(B). { A = mk_fn(ps, K, N, P, T, B); }
item(A) ::= attrs(T) KERNEL(K) IDENT(N) LPAREN params(P) RPAREN block(B). { A = mk_kernel(ps, T, K, N, P, B); }
item(A) ::= attrs(T) KERNEL(K) IDENT(N) LPAREN params(P) RPAREN ARROW(R) type(Y) block(B). { A = mk_kernel_ret(ps, T, K, N, P, R, Y, B); }

type_opt(A) ::= .                                     { A = NULL; }
type_opt(A) ::= COLON type(T).                        { A = T; }
ret_opt(A) ::= .                                      { A = NULL; }
ret_opt(A) ::= ARROW type(T).                         { A = T; }

%type params {ast_list}
%type param_list {ast_list}
params(A) ::= .                                       { A = (ast_list){0}; }
params(A) ::= param_list(A).
params(A) ::= param_list(A) COMMA.
param_list(A) ::= param(P).                           { A = list1(ps, P); }
param_list(A) ::= param_list(A) COMMA param(P).       { ast_push(ps->a, &A, P); }
param(A) ::= IDENT(N) type_opt(T).                    { A = mk_param(ps, N, N, false, T, NULL); }
param(A) ::= IDENT(N) type_opt(T) ASSIGN(E) expr(D).  { A = mk_param_bad_default(ps, N, T, E, D); }
param(A) ::= CONST(K) IDENT(N) type_opt(T).           { A = mk_param(ps, K, N, true, T, NULL); }
param(A) ::= CONST(K) IDENT(N) type_opt(T) ASSIGN expr(D). { A = mk_param(ps, K, N, true, T, D); }

// @name  @name(args): on kernels and on for loops.
%type attrs {ast_list}
attrs(A) ::= .                                        { A = (ast_list){0}; }
attrs(A) ::= attrs(A) attr(T).                        { ast_push(ps->a, &A, T); }
attr(A) ::= AT(K) IDENT(N).                           { A = mk_attr(ps, K, N, (ast_list){0}, N); }
attr(A) ::= AT(K) IDENT(N) LPAREN args(L) RPAREN(R).  { A = mk_attr(ps, K, N, L, R); }

// ---------------------------------------------------------------- types
// f32   *f32   *const f32   f32[128, 64]
type(A) ::= IDENT(N).                                 { A = mk_type_scalar(ps, N); }
type(A) ::= IDENT(N) LBRACKET exprs(D) RBRACKET(R).   { A = mk_type_block(ps, N, D, R); }
type(A) ::= STAR(S) type(T).                          { A = mk_type_ptr(ps, S, false, T); }
type(A) ::= STAR(S) CONST type(T).                    { A = mk_type_ptr(ps, S, true, T); }

// ---------------------------------------------------------------- statements
block(A) ::= LBRACE(L) stmts(S) RBRACE(R).            { A = mk_list(ps, AST_BLOCK, L, S, R); }
%type stmts {ast_list}
stmts(A) ::= .                                        { A = (ast_list){0}; }
stmts(A) ::= stmts(A) stmt(S).                        { ast_push(ps->a, &A, S); }

stmt(A) ::= SEMI.                                     { A = NULL; }
stmt(A) ::= block(A).
stmt(A) ::= LET(K) pattern(P) type_opt(T) ASSIGN expr(V) SEMI(E). { A = mk_let(ps, AST_LET, K, P, T, V, E); }
stmt(A) ::= VAR(K) pattern(P) type_opt(T) ASSIGN expr(V) SEMI(E). { A = mk_let(ps, AST_VAR, K, P, T, V, E); }
stmt(A) ::= expr(X) assign_op(O) expr(V) SEMI(E).     { A = mk_assign(ps, X, O, V, E); }
stmt(A) ::= expr(X) SEMI(E).                          { A = mk_expr_stmt(ps, X, E); }
stmt(A) ::= if_stmt(A).
stmt(A) ::= FOR(K) IDENT(N) IN expr(I) attrs(T) block(B). { A = mk_for(ps, K, N, I, T, B); }
stmt(A) ::= WHILE(K) expr(C) block(B).                { A = mk_while(ps, K, C, B); }
stmt(A) ::= BREAK(K) SEMI(E).                         { A = mk_jump(ps, AST_BREAK, K, NULL, E); }
stmt(A) ::= CONTINUE(K) SEMI(E).                      { A = mk_jump(ps, AST_CONTINUE, K, NULL, E); }
stmt(A) ::= RETURN(K) SEMI(E).                        { A = mk_jump(ps, AST_RETURN, K, NULL, E); }
stmt(A) ::= RETURN(K) expr(V) SEMI(E).                { A = mk_jump(ps, AST_RETURN, K, V, E); }

// let x   let (a, b)
pattern(A) ::= IDENT(N).                              { A = mk_name(ps, N); }
pattern(A) ::= LPAREN(L) names(X) RPAREN(R).          { A = mk_list(ps, AST_TUPLE, L, X, R); }
%type names {ast_list}
names(A) ::= IDENT(N).                                { A = list1(ps, mk_name(ps, N)); }
names(A) ::= names(A) COMMA IDENT(N).                 { ast_push(ps->a, &A, mk_name(ps, N)); }

%type assign_op {parse_op}
assign_op(A) ::= ASSIGN(T).                           { A = (parse_op){0, T}; }
assign_op(A) ::= PLUSEQ(T).                           { A = (parse_op){TK_PLUS, T}; }
assign_op(A) ::= MINUSEQ(T).                          { A = (parse_op){TK_MINUS, T}; }
assign_op(A) ::= STAREQ(T).                           { A = (parse_op){TK_STAR, T}; }
assign_op(A) ::= SLASHEQ(T).                          { A = (parse_op){TK_SLASH, T}; }
assign_op(A) ::= PERCENTEQ(T).                        { A = (parse_op){TK_PERCENT, T}; }
assign_op(A) ::= AMPEQ(T).                            { A = (parse_op){TK_AMP, T}; }
assign_op(A) ::= PIPEEQ(T).                           { A = (parse_op){TK_PIPE, T}; }
assign_op(A) ::= CARETEQ(T).                          { A = (parse_op){TK_CARET, T}; }
assign_op(A) ::= SHLEQ(T).                            { A = (parse_op){TK_SHL, T}; }
assign_op(A) ::= SHREQ(T).                            { A = (parse_op){TK_SHR, T}; }

// if c { } else if d { } else { }   (braces required, so no dangling else)
%type if_chain {parse_if}
if_stmt(A) ::= if_chain(C).                           { A = if_end(ps, C, NULL); }
if_stmt(A) ::= if_chain(C) ELSE block(E).             { A = if_end(ps, C, E); }
if_chain(A) ::= IF(K) expr(C) block(T).               { A = if_start(ps, K, C, T); }
if_chain(A) ::= if_chain(A) ELSE IF(K) expr(C) block(T). { A = if_link(ps, A, K, C, T); }

// ---------------------------------------------------------------- expressions
expr(A) ::= cast(A).
expr(A) ::= expr(L) OROR(O) expr(R).                  { A = ast_binary(ps->a, O, TK_OROR, L, R); }
expr(A) ::= expr(L) ANDAND(O) expr(R).                { A = ast_binary(ps->a, O, TK_ANDAND, L, R); }
expr(A) ::= expr(L) PIPE(O) expr(R).                  { A = ast_binary(ps->a, O, TK_PIPE, L, R); }
expr(A) ::= expr(L) CARET(O) expr(R).                 { A = ast_binary(ps->a, O, TK_CARET, L, R); }
expr(A) ::= expr(L) AMP(O) expr(R).                   { A = ast_binary(ps->a, O, TK_AMP, L, R); }
expr(A) ::= expr(L) EQ(O) expr(R).                    { A = ast_binary(ps->a, O, TK_EQ, L, R); }
expr(A) ::= expr(L) NE(O) expr(R).                    { A = ast_binary(ps->a, O, TK_NE, L, R); }
expr(A) ::= expr(L) LT(O) expr(R).                    { A = ast_binary(ps->a, O, TK_LT, L, R); }
expr(A) ::= expr(L) LE(O) expr(R).                    { A = ast_binary(ps->a, O, TK_LE, L, R); }
expr(A) ::= expr(L) GT(O) expr(R).                    { A = ast_binary(ps->a, O, TK_GT, L, R); }
expr(A) ::= expr(L) GE(O) expr(R).                    { A = ast_binary(ps->a, O, TK_GE, L, R); }
expr(A) ::= expr(L) SHL(O) expr(R).                   { A = ast_binary(ps->a, O, TK_SHL, L, R); }
expr(A) ::= expr(L) SHR(O) expr(R).                   { A = ast_binary(ps->a, O, TK_SHR, L, R); }
expr(A) ::= expr(L) PLUS(O) expr(R).                  { A = ast_binary(ps->a, O, TK_PLUS, L, R); }
expr(A) ::= expr(L) MINUS(O) expr(R).                 { A = ast_binary(ps->a, O, TK_MINUS, L, R); }
expr(A) ::= expr(L) STAR(O) expr(R).                  { A = ast_binary(ps->a, O, TK_STAR, L, R); }
expr(A) ::= expr(L) SLASH(O) expr(R).                 { A = ast_binary(ps->a, O, TK_SLASH, L, R); }
expr(A) ::= expr(L) PERCENT(O) expr(R).               { A = ast_binary(ps->a, O, TK_PERCENT, L, R); }

cast(A) ::= unary(A).
cast(A) ::= cast(X) AS(K) type(T).                    { A = mk_cast(ps, X, K, T); }

unary(A) ::= postfix(A).
unary(A) ::= MINUS(O) unary(X).                       { A = ast_unary(ps->a, loc_join(O, nloc(X)), TK_MINUS, X); }
unary(A) ::= BANG(O) unary(X).                        { A = ast_unary(ps->a, loc_join(O, nloc(X)), TK_BANG, X); }
unary(A) ::= TILDE(O) unary(X).                       { A = ast_unary(ps->a, loc_join(O, nloc(X)), TK_TILDE, X); }

postfix(A) ::= primary(A).
postfix(A) ::= postfix(F) LPAREN args(L) RPAREN(R).   { A = mk_call(ps, F, L, R); }
postfix(A) ::= postfix(X) DOT IDENT(N).               { A = mk_field(ps, X, N); }
postfix(A) ::= postfix(X) LBRACKET(O) subs(L) RBRACKET(R). { A = mk_index(ps, X, O, L, R); }

primary(A) ::= IDENT(N).                              { A = mk_name(ps, N); }
primary(A) ::= INT(T).                                { A = mk_int(ps, T); }
primary(A) ::= FLOAT(T).                              { A = mk_float(ps, T); }
primary(A) ::= STRING(T).                             { A = mk_string(ps, T); }
primary(A) ::= TRUE(T).                               { A = mk_bool(ps, T, 1); }
primary(A) ::= FALSE(T).                              { A = mk_bool(ps, T, 0); }
primary(A) ::= NONE(T).                               { A = mk(ps, AST_NONE, T); }
primary(A) ::= LPAREN expr(X) RPAREN.                { A = X; }
primary(A) ::= LPAREN(L) expr(X) COMMA exprs(Y) RPAREN(R). { A = mk_tuple(ps, L, X, Y, R); }
primary(A) ::= LBRACKET(L) values(V) RBRACKET(R).     { A = mk_list(ps, AST_LIST, L, V, R); }

%type exprs {ast_list}
exprs(A) ::= expr(X).                                 { A = list1(ps, X); }
exprs(A) ::= exprs(A) COMMA expr(X).                  { ast_push(ps->a, &A, X); }

// Subscripts: x[:, None]
%type subs {ast_list}
subs(A) ::= sub(X).                                   { A = list1(ps, X); }
subs(A) ::= subs(A) COMMA sub(X).                     { ast_push(ps->a, &A, X); }
sub(A) ::= COLON(C).                                  { A = mk(ps, AST_SLICE, C); }
sub(A) ::= expr(A).

// Call and attribute arguments: f(a, b, name = v); a trailing comma is fine.
%type args {ast_list}
%type arg_list {ast_list}
args(A) ::= .                                         { A = (ast_list){0}; }
args(A) ::= arg_list(A).
args(A) ::= arg_list(A) COMMA.
arg_list(A) ::= arg(X).                               { A = list1(ps, X); }
arg_list(A) ::= arg_list(A) COMMA arg(X).             { ast_push(ps->a, &A, X); }
arg(A) ::= expr(A).
arg(A) ::= IDENT(N) ASSIGN value(V).                  { A = mk_named(ps, N, V); }

// Values: expressions, and records { name = value, ... } where they cannot
// be mistaken for a block (after `name =`, inside a list).
value(A) ::= expr(A).
value(A) ::= LBRACE(L) fields(F) RBRACE(R).           { A = mk_list(ps, AST_RECORD, L, F, R); }

%type values {ast_list}
%type value_list {ast_list}
values(A) ::= .                                       { A = (ast_list){0}; }
values(A) ::= value_list(A).
values(A) ::= value_list(A) COMMA.
value_list(A) ::= value(X).                           { A = list1(ps, X); }
value_list(A) ::= value_list(A) COMMA value(X).       { ast_push(ps->a, &A, X); }

%type fields {ast_list}
%type field_list {ast_list}
fields(A) ::= .                                       { A = (ast_list){0}; }
fields(A) ::= field_list(A).
fields(A) ::= field_list(A) COMMA.
field_list(A) ::= field(X).                           { A = list1(ps, X); }
field_list(A) ::= field_list(A) COMMA field(X).       { ast_push(ps->a, &A, X); }
field(A) ::= IDENT(N) ASSIGN value(V).                { A = mk_named(ps, N, V); }

%code {
/* ==================================================================== *
 * The parse loop. parse_file reads tokens with lex_scan and pushes them
 * into the Lemon parser (SQLite's sqlite3RunParser pattern). Around it:
 *
 *  - a bracket tracker (ps->open): nesting deeper than COMPILE_MAX_NESTING
 *    is an error before anything recurses or grows; it also names the
 *    bracket that a missing ')' or '}' belongs to, and guides recovery.
 *  - recovery: after a syntax error the loop skips tokens to a point where
 *    a statement or item must begin (a ';' or '}' that ends a statement of
 *    a block, or a keyword that starts one), then starts a fresh parser
 *    there with RECOVER. Everything that parser reports is a real error:
 *    it never sees the tokens of the broken statement. The tree is dropped
 *    once any error is reported, so the resumed parser only checks.
 * ==================================================================== */

static bool is_closer(int k) { return k == TK_RPAREN || k == TK_RBRACKET || k == TK_RBRACE; }
static int opener_of(int k) { return k == TK_RPAREN ? TK_LPAREN : k == TK_RBRACKET ? TK_LBRACKET : TK_LBRACE; }
static int closer_of(int k) { return k == TK_LPAREN ? TK_RPAREN : k == TK_LBRACKET ? TK_RBRACKET : TK_RBRACE; }
static char bracket_char(int k) {
    switch (k) {
    case TK_LPAREN: return '(';
    case TK_RPAREN: return ')';
    case TK_LBRACKET: return '[';
    case TK_RBRACKET: return ']';
    case TK_LBRACE: return '{';
    default: return '}';
    }
}

static bool is_stmt_keyword(int k) {
    return k == TK_LET || k == TK_VAR || k == TK_IF || k == TK_FOR || k == TK_WHILE || k == TK_RETURN ||
           k == TK_BREAK || k == TK_CONTINUE;
}

/* Tokens after which an operand has ended; a '-' '!' '~' '*' elsewhere is
 * a prefix operator (or the '*' of a pointer type). */
static bool ends_operand(int k) {
    return k == TK_IDENT || k == TK_INT || k == TK_FLOAT || k == TK_STRING || k == TK_TRUE || k == TK_FALSE ||
           k == TK_NONE || k == TK_RPAREN || k == TK_RBRACKET;
}

/* Tokens that could only continue the expression or type before them; they
 * are left out of "expected ..." when anything else would also fit. */
static bool is_continuation(int k) {
    switch (k) {
    case TK_OROR: case TK_ANDAND: case TK_PIPE: case TK_CARET: case TK_AMP: case TK_EQ: case TK_NE:
    case TK_LT: case TK_LE: case TK_GT: case TK_GE: case TK_SHL: case TK_SHR: case TK_PLUS:
    case TK_MINUS: case TK_STAR: case TK_SLASH: case TK_PERCENT: case TK_AS: case TK_LPAREN:
    case TK_LBRACKET: case TK_DOT:
        return true;
    }
    return false;
}

/* '=' and '+=' ... : after an expression they would make it an assignment
 * (or a named argument), which is not what a user who forgot a ';' or ','
 * wants to hear; after `let x` or `const X` the '=' is the point. */
static bool is_assign_op(int k) {
    switch (k) {
    case TK_ASSIGN: case TK_PLUSEQ: case TK_MINUSEQ: case TK_STAREQ: case TK_SLASHEQ: case TK_PERCENTEQ:
    case TK_AMPEQ: case TK_PIPEEQ: case TK_CARETEQ: case TK_SHLEQ: case TK_SHREQ:
        return true;
    }
    return false;
}

static bool starts_expr(int k) {
    return k == TK_IDENT || k == TK_INT || k == TK_FLOAT || k == TK_STRING || k == TK_TRUE || k == TK_FALSE ||
           k == TK_NONE || k == TK_LPAREN || k == TK_LBRACKET || k == TK_MINUS || k == TK_BANG || k == TK_TILDE;
}

/* Would the parser, in its current state, shift token `tok` (after any
 * reductions)? Simulates the LR automaton on the state numbers only, with
 * the states that reductions push kept in a small overlay above the real
 * stack. */
static bool parser_accepts(yyParser *p, int tok) {
    YYACTIONTYPE over[64];
    int nover = 0;
    long real = p->yytos - p->yystack; /* top of the real stack still in use */
    for (int steps = 0; steps < 4096; steps++) {
        YYACTIONTYPE st = nover ? over[nover - 1] : p->yystack[real].stateno;
        YYACTIONTYPE act = yy_find_shift_action((YYCODETYPE)tok, st);
        if (act >= YY_MIN_REDUCE) {
            unsigned rule = act - YY_MIN_REDUCE;
            int pop = -yyRuleInfoNRhs[rule];
            for (; pop > 0 && nover > 0; pop--) nover--;
            if (real - pop < 0) return false;
            real -= pop;
            YYACTIONTYPE top = nover ? over[nover - 1] : p->yystack[real].stateno;
            if (nover == (int)(sizeof over / sizeof over[0])) return false;
            over[nover++] = yy_find_reduce_action(top, yyRuleInfoLhs[rule]);
        } else if (act <= YY_MAX_SHIFTREDUCE) {
            return true;
        } else {
            return act == YY_ACCEPT_ACTION;
        }
    }
    return false;
}

/* The token as a message names it: ';', 'else', identifier 'foo'. */
static void describe_token(blk_strbuf *sb, parse_state *ps, int kind, blk_loc tok) {
    if (kind == TK_IDENT || kind == TK_INT || kind == TK_FLOAT) {
        int n = tok.len > 32 ? 32 : (int)tok.len;
        sb_printf(sb, "%s '%.*s%s'", kind == TK_IDENT ? "identifier" : "number", n, ps->text + tok.off,
                  tok.len > 32 ? "..." : "");
    } else {
        sb_puts(sb, lex_token_spelling(kind));
    }
}

/* What a name is for, from the token before it. */
static const char *name_phrase(int prev) {
    switch (prev) {
    case TK_LET: return "a variable name after 'let'";
    case TK_VAR: return "a variable name after 'var'";
    case TK_FN: return "a function name after 'fn'";
    case TK_KERNEL: return "a kernel name after 'kernel'";
    case TK_FOR: return "a loop variable name after 'for'";
    case TK_CONST: return "a name after 'const'";
    case TK_AT: return "an attribute name after '@'";
    case TK_DOT: return "a field name after '.'";
    case TK_AS: return "a name after 'as'";
    }
    return "a name";
}

/* The keywords are declared in one %token run, KERNEL first, NONE last. */
static bool is_keyword(int k) { return k >= TK_KERNEL && k <= TK_NONE; }

/* %syntax_error: say what was expected, in the terms a user thinks in.
 * Missing ';' and end-of-file errors point just past the previous token
 * (where the missing text belongs); all others point at the token that
 * does not fit. */
/* A Python or Triton habit near a syntax error: the word, and what blk
 * writes instead (`def`, `elif`, `and`, `a.to(...)` is sema's). */
static const char *python_hint(const char *s, uint32_t n) {
    static const char *const hints[][2] = {
        {"def", "blk declares device functions with 'fn' and kernels with 'kernel'"},
        {"elif", "blk writes 'else if'"},
        {"and", "blk writes '&&' (elementwise on blocks)"},
        {"or", "blk writes '||' (elementwise on blocks)"},
        {"not", "blk writes '!'"},
        {"pass", "blk writes an empty block '{}'"},
        {"lambda", "blk passes named 'fn's, e.g. reduce(x, 0, my_combine)"},
    };
    for (size_t k = 0; k < sizeof hints / sizeof hints[0]; k++)
        if (strlen(hints[k][0]) == n && memcmp(hints[k][0], s, n) == 0) return hints[k][1];
    return NULL;
}

static void report_syntax_error(parse_state *ps, yyParser *p, int major, blk_loc tok);

static void parse_syntax_error(parse_state *ps, yyParser *p, int major, blk_loc tok) {
    report_syntax_error(ps, p, major, tok);
    /* the word at the error, or the one just before it (`elif a < b` stops at `a`) */
    const char *h = NULL;
    blk_loc at = tok;
    if (major == TK_IDENT) h = python_hint(ps->text + tok.off, tok.len);
    if (!h && ps->prev_kind == TK_IDENT && ps->prev.file >= 0) {
        h = python_hint(ps->text + ps->prev.off, ps->prev.len);
        at = ps->prev;
    }
    if (h) diag_note(ps->diag, at, "'%.*s' is Python: %s", (int)at.len, ps->text + at.off, h);
    else if (major == TK_VAR && (ps->prev_kind == TK_LET || ps->prev_kind == TK_VAR || ps->prev_kind == TK_FOR ||
                                 ps->prev_kind == TK_COMMA || ps->prev_kind == TK_LPAREN))
        diag_note(ps->diag, tok, "'var' is blk's keyword for a mutable variable: pick another name ('v', 'variance')");
}

static void report_syntax_error(parse_state *ps, yyParser *p, int major, blk_loc tok) {
    ps->error = true;
    bool e[YYNTOKEN];
    bool other = false;
    for (int t = 0; t < YYNTOKEN; t++) {
        e[t] = t != TK_RECOVER && t != TK_ILLEGAL && parser_accepts(p, t);
        if (e[t] && !is_continuation(t)) other = true;
    }
    bool had_ident = e[TK_IDENT];
    /* A type may start here: '*' is then a pointer, not a continuation. */
    bool type_pos = e[TK_IDENT] && e[TK_STAR] && !e[TK_INT];
    bool after_expr = e[TK_PLUS];
    if (other)
        for (int t = 0; t < YYNTOKEN; t++)
            if (is_continuation(t) || (after_expr && is_assign_op(t))) e[t] = false;

    bool eof = major == 0;
    blk_loc after_prev = ps->prev.file >= 0 ? (blk_loc){ps->file, ps->prev.off + ps->prev.len, 0} : tok;
    blk_loc at = eof ? after_prev : tok;
    const char *at_end = eof ? " at end of file" : "";
    const parse_open *inner = ps->has_before ? &ps->before : NULL;
    int closer = inner ? closer_of(inner->kind) : -1;
    bool stmt_pos = e[TK_LET] && (!e[TK_FN] || ps->nopen > 0);
    bool item_pos = e[TK_FN] && !stmt_pos;

    /* let x = 1  <newline>   (a ';' that could only be an empty statement
     * where a statement or item starts does not count) */
    if (e[TK_SEMI] && !e[TK_LET] && !e[TK_FN]) {
        const char *what = ps->stmt_kw == TK_IMPORT ? "import"
                         : ps->stmt_kw == TK_CONST && !inner ? "constant" : "statement";
        diag_error(ps->diag, after_prev, "expected ';' after %s", what);
        return;
    }
    /* A missing ')' ']' '}': at end of file, before the next item, or where
     * only it or a ',' could come (in a parameter list, also the ':' or '='
     * of the parameter just read, which are not worth listing). */
    if (inner && closer > 0 && e[closer]) {
        bool only = true;
        for (int t = 0; t < YYNTOKEN; t++)
            if (e[t] && t != closer && t != TK_COMMA && !(e[TK_COMMA] && (t == TK_COLON || t == TK_ASSIGN)))
                only = false;
        if (eof || major == TK_KERNEL || major == TK_FN || major == TK_IMPORT || only) {
            if (e[TK_COMMA] && only)
                diag_error(ps->diag, at, "expected ',' or '%c'%s", bracket_char(closer), at_end);
            else
                diag_error(ps->diag, at, "expected '%c'%s", bracket_char(closer), at_end);
            diag_note(ps->diag, inner->loc, "to match this '%c'", bracket_char(inner->kind));
            return;
        }
    }
    blk_strbuf found;
    sb_init(&found);
    describe_token(&found, ps, major, tok);
    if (item_pos) {
        if (is_stmt_keyword(major))
            diag_error(ps->diag, at, "unexpected %s at top level; statements belong inside a kernel or fn",
                       sb_str(&found));
        else
            diag_error(ps->diag, at, "unexpected %s, expected 'kernel', 'fn', 'const' or 'import'", sb_str(&found));
    } else if (stmt_pos) {
        if (major == TK_ELSE)
            diag_error(ps->diag, at, "'else' without a matching 'if'");
        else if (major == TK_CONST)
            diag_error(ps->diag, at, "'const' is only allowed at top level (use 'let' inside a function)");
        else
            diag_error(ps->diag, at, "unexpected %s, expected a statement", sb_str(&found));
    } else if (e[TK_KERNEL] && e[TK_AT]) {
        diag_error(ps->diag, at, "expected 'kernel' after attributes");
    } else {
        /* Build "A, B or C" from what fits here. */
        const char *parts[8];
        int n = 0;
        bool named = false;
        if (e[TK_INT]) {
            parts[n++] = ps->prev_kind == TK_IF ? "a condition after 'if'"
                       : ps->prev_kind == TK_WHILE ? "a condition after 'while'" : "an expression";
            for (int t = 0; t < YYNTOKEN; t++)
                if (starts_expr(t)) e[t] = false;
            e[TK_LBRACE] = false; /* a record: only attributes use them */
        }
        if (type_pos) {
            parts[n++] = ps->prev_kind == TK_AS ? "a type after 'as'" : "a type";
            e[TK_IDENT] = e[TK_STAR] = e[TK_CONST] = false;
        }
        if (e[TK_IDENT] && e[TK_CONST]) {
            parts[n++] = "a parameter";
            e[TK_IDENT] = e[TK_CONST] = false;
        }
        if (e[TK_IDENT]) {
            parts[n++] = name_phrase(ps->prev_kind);
            e[TK_IDENT] = false;
            named = true;
        }
        if (e[TK_STRING] && ps->prev_kind == TK_IMPORT) {
            parts[n++] = "a file name string after 'import'";
            e[TK_STRING] = false;
        }
        e[0] = false;
        /* Punctuation and keywords in token order, closing brackets last. */
        for (int pass = 0; pass < 2; pass++)
            for (int t = 1; t < YYNTOKEN; t++)
                if (e[t] && is_closer(t) == (pass == 1)) {
                    if (n < 8) parts[n] = lex_token_spelling(t);
                    n++;
                }
        if (n == 0 || n > 4) {
            diag_error(ps->diag, at, "unexpected %s", sb_str(&found));
        } else {
            blk_strbuf msg;
            sb_init(&msg);
            sb_puts(&msg, "expected ");
            for (int i = 0; i < n; i++) {
                if (i) sb_puts(&msg, i == n - 1 ? " or " : ", ");
                sb_puts(&msg, parts[i]);
            }
            sb_puts(&msg, at_end);
            if (named && had_ident && is_keyword(major))
                sb_printf(&msg, " ('%.*s' is a keyword)", (int)tok.len, ps->text + tok.off);
            diag_error(ps->diag, at, "%s", sb_str(&msg));
            sb_free(&msg);
        }
    }
    sb_free(&found);
}

static void parse_stack_overflow(parse_state *ps) {
    diag_error(ps->diag, ps->tok, "nesting too deep for the parser");
    ps->abort = true;
}

/* ---- bracket tracker ---- */

typedef struct {
    bool unmatched;  /* a closer with no opener of its kind anywhere */
    bool block;      /* a '}' that closed a block (not a record) */
    bool outer;      /* ... opened before the current parser started */
} track_result;

static track_result track(parse_state *ps, int kind, blk_loc tok) {
    track_result r = {0};
    bool prefix = (kind == TK_MINUS || kind == TK_BANG || kind == TK_TILDE || kind == TK_STAR) &&
                  !ends_operand(ps->prev_kind);
    ps->unary_run = prefix ? ps->unary_run + 1 : 0;
    if (kind == TK_LPAREN || kind == TK_LBRACKET || kind == TK_LBRACE) {
        if (ps->nopen >= COMPILE_MAX_NESTING) {
            diag_error(ps->diag, tok, "nesting too deep (limit %d)", COMPILE_MAX_NESTING);
            ps->abort = true;
            return r;
        }
        /* A '{' after '=', ',', '[' or '(' opens a record; any other opens a block. */
        bool block = kind == TK_LBRACE && ps->prev_kind != TK_ASSIGN && ps->prev_kind != TK_COMMA &&
                     ps->prev_kind != TK_LBRACKET && ps->prev_kind != TK_LPAREN;
        ps->open[ps->nopen++] = (parse_open){kind, tok, block, ps->gen};
    } else if (is_closer(kind)) {
        int i = ps->nopen - 1, want = opener_of(kind);
        while (i >= 0 && ps->open[i].kind != want) i--;
        if (i < 0) {
            r.unmatched = true;
        } else {
            r.block = ps->open[i].block;
            r.outer = ps->open[i].gen < ps->gen;
            ps->nopen = i;
        }
    } else if (prefix && ps->nopen + ps->unary_run > COMPILE_MAX_NESTING) {
        diag_error(ps->diag, tok, "nesting too deep (limit %d)", COMPILE_MAX_NESTING);
        ps->abort = true;
    }
    return r;
}

/* ---- feeding and recovery ---- */

/* The token goes to the parser only if it will be shifted: Lemon's default
 * reductions would otherwise run first on a bad token and leave a stack
 * that no longer shows what was expected before it. */
static void feed(parse_state *ps, int kind, blk_loc tok) {
    ps->tok_kind = kind;
    ps->tok = tok;
    if (!parser_accepts(ps->parser, kind)) {
        parse_syntax_error(ps, ps->parser, kind, tok);
        ps->error = false;
        ps->mode = MODE_SKIP;
        return;
    }
    Parser(ps->parser, kind, tok);
    if (ps->error) {
        ps->error = false;
        ps->mode = MODE_SKIP;
    }
}

/* Start a fresh parser in recovery mode. */
static void parse_restart(parse_state *ps) {
    ParserFinalize(ps->parser);
    ParserInit(ps->parser, ps);
    ps->gen++;
    ps->recovering = true;
    ps->mode = MODE_PARSE;
    ps->at_stmt_start = true;
    Parser(ps->parser, TK_RECOVER, ps->tok);
}

/* Restart with this token as the first one, unless a parser already
 * restarted here (then the token is skipped, so the loop always moves on). */
static void restart_at(parse_state *ps, int kind, blk_loc tok) {
    if (ps->restart_mark == tok.off + 1) return;
    ps->restart_mark = tok.off + 1;
    parse_restart(ps);
    ps->stmt_kw = kind;
    ps->at_stmt_start = false;
    feed(ps, kind, tok);
}

/* Is tok the first token on its line? A keyword that starts a line starts
 * a statement; one in the middle of a broken line may be part of it. */
static bool starts_line(parse_state *ps, blk_loc tok) {
    uint32_t from = ps->prev.file >= 0 ? ps->prev.off + ps->prev.len : 0;
    if (ps->prev.file < 0) return true;
    for (uint32_t i = from; i < tok.off; i++)
        if (ps->text[i] == '\n') return true;
    return false;
}

/* In skip mode: is this token where the next statement or item begins? */
static void skip_step(parse_state *ps, int kind, blk_loc tok, track_result tr) {
    if (kind == 0) {
        ps->mode = MODE_DONE;
    } else if (kind == TK_SEMI && (ps->nopen == 0 || ps->open[ps->nopen - 1].block)) {
        parse_restart(ps);
    } else if (kind == TK_RBRACE && !tr.unmatched && tr.block) {
        parse_restart(ps);
        ps->else_ok = true;
    } else if (!starts_line(ps, tok)) {
        return;
    } else if (is_stmt_keyword(kind)) {
        int i = ps->nopen - 1;
        while (i >= 0 && !ps->open[i].block) i--;
        if (i < 0) return;
        if (i < ps->nopen - 1) ps->dirty = true;
        ps->nopen = i + 1;
        restart_at(ps, kind, tok);
    } else if (kind == TK_KERNEL || kind == TK_FN || kind == TK_IMPORT ||
               ((kind == TK_CONST || kind == TK_AT) && ps->nopen == 0)) {
        if (ps->nopen) ps->dirty = true;
        ps->nopen = 0;
        restart_at(ps, kind, tok);
    }
}

/* One token through tracker, parser and recovery. */
static void parse_step(parse_state *ps, int kind, blk_loc tok) {
    ps->has_before = ps->nopen > 0;
    if (ps->has_before) ps->before = ps->open[ps->nopen - 1];
    if (ps->at_stmt_start) ps->stmt_kw = kind;
    track_result tr = track(ps, kind, tok);
    if (ps->abort) return;
    bool block_open = kind == TK_LBRACE && ps->nopen > 0 && ps->open[ps->nopen - 1].block;
    ps->at_stmt_start = kind == TK_SEMI || kind == TK_RBRACE || block_open;

    /* After a restart at a '}' that closed an earlier parser's block, an
     * `else` continues that parser's `if`: drop it, the block or `if`
     * after it parses as a statement. */
    bool drop_else = ps->else_ok && kind == TK_ELSE;
    ps->else_ok = false;
    if (ps->mode == MODE_PARSE && !drop_else) {
        if (tr.unmatched) {
            if (!(ps->recovering && ps->dirty)) diag_error(ps->diag, tok, "unmatched '%c'", bracket_char(kind));
            ps->mode = MODE_SKIP;
        } else if (kind == TK_ILLEGAL) {
            ps->mode = MODE_SKIP; /* the lexer reported it */
        } else {
            feed(ps, kind, tok);
            if (ps->mode == MODE_PARSE && kind == TK_RBRACE && tr.outer) ps->else_ok = true;
            if (ps->mode == MODE_PARSE && kind == 0) {
                /* A resumed parser accepts at any statement boundary; the
                 * tracker knows whether a block is still open. */
                if (ps->recovering && ps->nopen > 0) {
                    parse_open *o = &ps->open[ps->nopen - 1];
                    blk_loc end = ps->prev.file >= 0 ? (blk_loc){ps->file, ps->prev.off + ps->prev.len, 0} : tok;
                    diag_error(ps->diag, end, "expected '%c' at end of file", bracket_char(closer_of(o->kind)));
                    diag_note(ps->diag, o->loc, "to match this '%c'", bracket_char(o->kind));
                }
                ps->mode = MODE_DONE;
            }
        }
        if (ps->mode == MODE_SKIP) skip_step(ps, kind, tok, tr);
    } else if (ps->mode == MODE_SKIP) {
        skip_step(ps, kind, tok, tr);
    }
    if (kind != TK_ILLEGAL) {
        ps->prev_kind = kind;
        ps->prev = tok;
    }
}

/* ---- checks on the finished tree ---- */

/* Depth of the tree (sema and ast_print recurse over it) and records only
 * inside attributes. Iterative, so a degenerate tree cannot overflow the
 * C stack here either. */
static void parse_check_tree(parse_state *ps, ast_node *root) {
    typedef struct { const ast_node *n; int depth; bool in_attr; } item;
    int cap = 256, sp = 0;
    item *st = blk_malloc(sizeof(item) * (size_t)cap);
    if (!st) { diag_error(ps->diag, LOC_NONE, "out of memory"); return; }
    st[sp++] = (item){root, 1, false};
    while (sp > 0 && !diag_should_stop(ps->diag)) {
        item it = st[--sp];
        const ast_node *n = it.n;
        if (it.depth > PARSE_MAX_TREE_DEPTH) {
            diag_error(ps->diag, n->op_loc.file >= 0 ? n->op_loc : n->loc,
                       "%s nested too deeply (the syntax tree is more than %d levels deep)",
                       n->kind < AST_TYPE_SCALAR ? "expression" : "code", PARSE_MAX_TREE_DEPTH);
            break;
        }
        if (n->kind == AST_RECORD && !it.in_attr)
            diag_error(ps->diag, n->loc, "a record '{...}' is only allowed in attribute arguments");
        bool in_attr = it.in_attr || n->kind == AST_ATTR;
        const ast_node *kids[7] = {n->lhs, n->rhs, n->type, n->cond, n->then_body, n->else_body, n->body};
        const ast_list *lists[4] = {&n->args, &n->params, &n->attrs, &n->names};
        int need = 7;
        for (int i = 0; i < 4; i++) need += lists[i]->len;
        if (sp + need > cap) {
            while (sp + need > cap) cap *= 2;
            item *grown = blk_realloc(st, sizeof(item) * (size_t)cap);
            if (!grown) { diag_error(ps->diag, LOC_NONE, "out of memory"); break; }
            st = grown;
        }
        for (int i = 0; i < 7; i++)
            if (kids[i]) st[sp++] = (item){kids[i], it.depth + 1, in_attr};
        for (int i = 0; i < 4; i++)
            for (int j = 0; j < lists[i]->len; j++)
                if (lists[i]->data[j]) st[sp++] = (item){lists[i]->data[j], it.depth + 1, in_attr};
    }
    free(st);
}

ast_node *parse_file(blk_arena *a, blk_diag *diag, int file) {
    if (!diag || file < 0 || file >= diag->files.len) return NULL;
    int errors_before = diag->nerrors;
    parse_state *ps = blk_calloc(1, sizeof *ps);
    if (!ps) { diag_error(diag, LOC_NONE, "out of memory"); return NULL; }
    const blk_source *src = &diag->files.data[file];
    ps->a = a;
    ps->diag = diag;
    ps->file = file;
    ps->text = src->text;
    ps->file_loc = (blk_loc){file, 0, (uint32_t)src->size};
    ps->prev = LOC_NONE;
    ps->tok = (blk_loc){file, 0, 0};
    ps->at_stmt_start = true;
    ps->parser = ParserAlloc(blk_malloc, ps);
    if (!ps->parser) { diag_error(diag, LOC_NONE, "out of memory"); free(ps); return NULL; }

    uint32_t pos = 0;
    bool finished = false;
    while (!ps->abort && !diag_should_stop(diag)) {
        blk_loc tok;
        int kind = lex_scan(diag, file, &pos, &tok);
        parse_step(ps, kind, tok);
        if (kind == 0 || ps->mode == MODE_DONE) { finished = kind == 0 || ps->mode == MODE_DONE; break; }
    }
    ParserFree(ps->parser, free);

    ast_node *module = ps->module;
    if (finished && module && diag->nerrors == errors_before) parse_check_tree(ps, module);
    if (arena_failed(a)) diag_error(diag, LOC_NONE, "out of memory while parsing");
    if (!finished || diag->nerrors != errors_before || ps->recovering) module = NULL;
    free(ps);
    return module;
}
}

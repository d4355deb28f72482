/* test_parse.c — lexer and parser: tree shapes, locations, diagnostics.
 *
 * Expressions are checked through a compact S-expression of the tree built
 * here from the node fields (not through ast_print), so each assertion
 * states the shape sema will see: "(+ a (* b c))".
 */
#include "front/front.h"
#include "front/parse.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../test_util.h"

#define CHECK_STR(got, want)                                                           \
    do {                                                                               \
        const char *g_ = (got), *w_ = (want);                                          \
        if (!g_ || strcmp(g_, w_) != 0) {                                              \
            fprintf(stderr, "%s:%d: got  %s\n%*swant %s\n", __FILE__, __LINE__,       \
                    g_ ? g_ : "(null)", (int)strlen(__FILE__) + 8, "", w_);            \
            failures++;                                                                \
        }                                                                              \
    } while (0)

/* One parse: arena, diagnostics, the module (NULL on errors). */
typedef struct {
    blk_arena *a;
    blk_diag d;
    int file;
    ast_node *m;
} parsed;

static void parse_src(parsed *p, const char *src) {
    p->a = arena_new();
    diag_init(&p->d, p->a);
    p->file = diag_add_file(&p->d, "t.blk", src, strlen(src));
    p->m = parse_file(p->a, &p->d, p->file);
}

static void done(parsed *p) {
    diag_fini(&p->d);
    arena_free(p->a);
}

/* ---- compact S-expressions of trees ---- */

static const char *op_name(int op) {
    switch (op) {
    case TK_OROR: return "||"; case TK_ANDAND: return "&&"; case TK_PIPE: return "|";
    case TK_CARET: return "^"; case TK_AMP: return "&"; case TK_EQ: return "==";
    case TK_NE: return "!="; case TK_LT: return "<"; case TK_LE: return "<=";
    case TK_GT: return ">"; case TK_GE: return ">="; case TK_SHL: return "<<";
    case TK_SHR: return ">>"; case TK_PLUS: return "+"; case TK_MINUS: return "-";
    case TK_STAR: return "*"; case TK_SLASH: return "/"; case TK_PERCENT: return "%";
    case TK_BANG: return "!"; case TK_TILDE: return "~";
    }
    return "?op";
}

static void sx(blk_strbuf *b, const ast_node *n);

static void sx_list(blk_strbuf *b, const ast_list *l) {
    for (int i = 0; i < l->len; i++) {
        sb_putc(b, ' ');
        sx(b, l->data[i]);
    }
}

static void sx(blk_strbuf *b, const ast_node *n) {
    if (!n) { sb_puts(b, "NULL"); return; }
    switch (n->kind) {
    case AST_INT: sb_printf(b, "%llu%s", (unsigned long long)n->ival, n->int_overflow ? "!" : ""); break;
    case AST_FLOAT: sb_printf(b, "%gf", n->fval); break;
    case AST_STRING: sb_printf(b, "\"%.*s\"", n->str_len, n->str); break;
    case AST_BOOL: sb_puts(b, n->ival ? "true" : "false"); break;
    case AST_NONE: sb_puts(b, "None"); break;
    case AST_NAME: sb_puts(b, n->name); break;
    case AST_UNARY:
        sb_printf(b, "(%s ", n->op == TK_MINUS ? "neg" : op_name(n->op));
        sx(b, n->lhs);
        sb_putc(b, ')');
        break;
    case AST_BINARY:
        sb_printf(b, "(%s ", op_name(n->op));
        sx(b, n->lhs);
        sb_putc(b, ' ');
        sx(b, n->rhs);
        sb_putc(b, ')');
        break;
    case AST_CAST:
        sb_puts(b, "(as ");
        sx(b, n->lhs);
        sb_putc(b, ' ');
        sx(b, n->type);
        sb_putc(b, ')');
        break;
    case AST_CALL: sb_puts(b, "(call "); sx(b, n->lhs); sx_list(b, &n->args); sb_putc(b, ')'); break;
    case AST_INDEX: sb_puts(b, "(idx "); sx(b, n->lhs); sx_list(b, &n->args); sb_putc(b, ')'); break;
    case AST_NAMED_ARG: sb_printf(b, "%s=", n->name); sx(b, n->lhs); break;
    case AST_FIELD: sb_puts(b, "(. "); sx(b, n->lhs); sb_printf(b, " %s)", n->name); break;
    case AST_SLICE: sb_puts(b, ":"); break;
    case AST_TUPLE: sb_puts(b, "(tuple"); sx_list(b, &n->args); sb_putc(b, ')'); break;
    case AST_LIST: sb_puts(b, "[list"); sx_list(b, &n->args); sb_putc(b, ']'); break;
    case AST_RECORD: sb_puts(b, "{rec"); sx_list(b, &n->args); sb_putc(b, '}'); break;
    case AST_TYPE_SCALAR: sb_puts(b, n->name); break;
    case AST_TYPE_PTR: sb_puts(b, n->is_const ? "*const " : "*"); sx(b, n->type); break;
    case AST_TYPE_BLOCK: sx(b, n->type); sb_putc(b, '['); sx_list(b, &n->args); sb_puts(b, " ]"); break;
    default: sb_printf(b, "<%s>", ast_kind_name(n->kind)); break;
    }
}

/* The S-expression of the initializer in `fn t() { let r = EXPR; }`. */
static char *expr_sx(const char *expr) {
    static char out[4096];
    char src[2048];
    snprintf(src, sizeof src, "fn t() { let r = %s; }", expr);
    parsed p;
    parse_src(&p, src);
    if (!p.m) {
        snprintf(out, sizeof out, "PARSE ERROR: %s", sb_str(&p.d.out));
    } else {
        blk_strbuf b;
        sb_init(&b);
        sx(&b, p.m->args.data[0]->body->args.data[0]->rhs);
        snprintf(out, sizeof out, "%s", sb_str(&b));
        sb_free(&b);
    }
    done(&p);
    return out;
}

static void test_precedence(void) {
    CHECK_STR(expr_sx("a + b * c"), "(+ a (* b c))");
    CHECK_STR(expr_sx("a * b + c"), "(+ (* a b) c)");
    CHECK_STR(expr_sx("a - b - c"), "(- (- a b) c)");
    CHECK_STR(expr_sx("a / b % c"), "(% (/ a b) c)");
    CHECK_STR(expr_sx("a as i64 * b"), "(* (as a i64) b)");
    CHECK_STR(expr_sx("pid as i64 * BLOCK"), "(* (as pid i64) BLOCK)");
    CHECK_STR(expr_sx("a * b as i64"), "(* a (as b i64))");
    CHECK_STR(expr_sx("-x as f32"), "(as (neg x) f32)");
    CHECK_STR(expr_sx("x as i32 as f32"), "(as (as x i32) f32)");
    CHECK_STR(expr_sx("a < b == c"), "(== (< a b) c)");
    CHECK_STR(expr_sx("a & b == c"), "(& a (== b c))");
    CHECK_STR(expr_sx("a | b ^ c & d"), "(| a (^ b (& c d)))");
    CHECK_STR(expr_sx("a || b && c"), "(|| a (&& b c))");
    CHECK_STR(expr_sx("a && b || c"), "(|| (&& a b) c)");
    CHECK_STR(expr_sx("a << b + c"), "(<< a (+ b c))");
    CHECK_STR(expr_sx("a < b << c"), "(< a (<< b c))");
    CHECK_STR(expr_sx("a != b >= c"), "(!= a (>= b c))");
    CHECK_STR(expr_sx("(a + b) * c"), "(* (+ a b) c)");
    CHECK_STR(expr_sx("-a * b"), "(* (neg a) b)");
    CHECK_STR(expr_sx("- - a"), "(neg (neg a))");
    CHECK_STR(expr_sx("!a == ~b"), "(== (! a) (~ b))");
    CHECK_STR(expr_sx("-f(x)[0]"), "(neg (idx (call f x) 0))");
    CHECK_STR(expr_sx("!d.load(x)"), "(! (call (. d load) x))");
    CHECK_STR(expr_sx("p as *const f32"), "(as p *const f32)");
    CHECK_STR(expr_sx("x as f32[128, BN]"), "(as x f32[ 128 BN ])");
    CHECK_STR(expr_sx("acc as bf16 + 1"), "(+ (as acc bf16) 1)");
}

static void test_expressions(void) {
    CHECK_STR(expr_sx("f(a, b, cache = \"cg\", volatile = true)"), "(call f a b cache=\"cg\" volatile=true)");
    CHECK_STR(expr_sx("f()"), "(call f)");
    CHECK_STR(expr_sx("f(a, b,)"), "(call f a b)");
    CHECK_STR(expr_sx("x[:, None]"), "(idx x : None)");
    CHECK_STR(expr_sx("x[None, :]"), "(idx x None :)");
    CHECK_STR(expr_sx("(k + rk)[None, :] < K"), "(< (idx (+ k rk) None :) K)");
    CHECK_STR(expr_sx("(a, b)"), "(tuple a b)");
    CHECK_STR(expr_sx("(a, b, c + 1)"), "(tuple a b (+ c 1))");
    CHECK_STR(expr_sx("(a)"), "a");
    CHECK_STR(expr_sx("[BM, BN]"), "[list BM BN]");
    CHECK_STR(expr_sx("[]"), "[list]");
    CHECK_STR(expr_sx("zeros([BM, BN], f32)"), "(call zeros [list BM BN] f32)");
    CHECK_STR(expr_sx("d.store([m, k], v)"), "(call (. d store) [list m k] v)");
    CHECK_STR(expr_sx("a.b.c"), "(. (. a b) c)");
    CHECK_STR(expr_sx("42 + 0x2A + 0b101 + 1_000_000"), "(+ (+ (+ 42 42) 5) 1000000)");
    CHECK_STR(expr_sx("1.5 + 1e-5 + .5 + 2. + 1_0.2_5"), "(+ (+ (+ (+ 1.5f 1e-05f) 0.5f) 2f) 10.25f)");
    CHECK_STR(expr_sx("18446744073709551615"), "18446744073709551615");
    CHECK_STR(expr_sx("18446744073709551616"), "18446744073709551615!");
    CHECK_STR(expr_sx("true && false"), "(&& true false)");
    CHECK_STR(expr_sx("-inf"), "(neg inf)");
    CHECK_STR(expr_sx("\"a\\tb\""), "\"a\tb\"");

    /* String escapes decode into str/str_len (with an embedded NUL). */
    parsed p;
    parse_src(&p, "const S = \"x\\n\\t\\\\\\\"\\0y\";");
    CHECK(p.m != NULL);
    if (p.m) {
        ast_node *s = p.m->args.data[0]->rhs;
        CHECK(s->kind == AST_STRING);
        CHECK(s->str_len == 7);
        CHECK(s->str && memcmp(s->str, "x\n\t\\\"\0y", 7) == 0);
    }
    done(&p);
}

static void test_locations(void) {
    parsed p;
    /*                  0         1         2         3
     *                  012345678901234567890123456789012345678 */
    parse_src(&p, "fn t() { let xy = a + b * c; f(x, 1); }");
    CHECK(p.m != NULL);
    if (!p.m) { done(&p); return; }
    ast_node *let = p.m->args.data[0]->body->args.data[0];
    CHECK(let->kind == AST_LET);
    CHECK(let->loc.off == 9 && let->loc.len == 19);    /* let ... ; */
    CHECK(let->op_loc.off == 13 && let->op_loc.len == 2); /* xy */
    ast_node *add = let->rhs;
    CHECK(add->loc.off == 18 && add->loc.len == 9);    /* a + b * c */
    CHECK(add->op_loc.off == 20 && add->op_loc.len == 1);
    CHECK(add->rhs->op_loc.off == 24);
    ast_node *a = add->lhs;
    CHECK(a->kind == AST_NAME && a->loc.off == 18 && a->loc.len == 1);
    ast_node *call = p.m->args.data[0]->body->args.data[1]->lhs;
    CHECK(call->kind == AST_CALL && call->loc.off == 29 && call->loc.len == 7); /* f(x, 1) */
    ast_node *fn = p.m->args.data[0];
    CHECK(fn->op_loc.off == 3 && fn->op_loc.len == 1);
    CHECK(fn->loc.off == 0 && fn->loc.len == 39);
    done(&p);
}

static void test_statements(void) {
    parsed p;
    parse_src(&p,
              "fn t(n) {\n"
              "  let x = 1;\n"
              "  let y: f32 = 2.0;\n"
              "  let (a, b) = topk(s, 2, 1);\n"
              "  var acc = zeros([4], f32);\n"
              "  var (c, d): i32 = g();\n"
              "  acc = dot(a, b, acc);\n"
              "  acc += x; acc -= x; acc *= x; acc /= x; acc %= x;\n"
              "  acc &= x; acc |= x; acc ^= x; acc <<= x; acc >>= x;\n"
              "  f(x);\n"
              "  if c { } else if d { } else { }\n"
              "  if c { }\n"
              "  for i in range(0, K, BK) @num_stages(3) { }\n"
              "  for i in static_range(4) { break; continue; }\n"
              "  while x < n { }\n"
              "  { ; }\n"
              "  return;\n"
              "  return (a, b);\n"
              "  return x + 1;\n"
              "}\n");
    CHECK(p.m != NULL);
    if (!p.m) { fprintf(stderr, "%s", sb_str(&p.d.out)); done(&p); return; }
    ast_list *s = &p.m->args.data[0]->body->args;
    CHECK(s->len == 26);
    if (s->len != 26) { done(&p); return; }
    int i = 0;
    ast_node *n = s->data[i++];
    CHECK(n->kind == AST_LET && n->names.len == 1 && !n->is_tuple && !n->type &&
          strcmp(n->names.data[0]->name, "x") == 0 && n->rhs->kind == AST_INT);
    n = s->data[i++];
    CHECK(n->kind == AST_LET && n->type && n->type->kind == AST_TYPE_SCALAR && strcmp(n->type->name, "f32") == 0 &&
          n->rhs->kind == AST_FLOAT && n->rhs->fval == 2.0);
    n = s->data[i++];
    CHECK(n->kind == AST_LET && n->is_tuple && n->names.len == 2 && n->names.data[0]->kind == AST_NAME &&
          strcmp(n->names.data[1]->name, "b") == 0 && n->rhs->kind == AST_CALL);
    n = s->data[i++];
    CHECK(n->kind == AST_VAR && n->names.len == 1 && !n->is_tuple);
    n = s->data[i++];
    CHECK(n->kind == AST_VAR && n->is_tuple && n->names.len == 2 && n->type);
    n = s->data[i++];
    CHECK(n->kind == AST_ASSIGN && n->op == 0 && n->lhs->kind == AST_NAME && n->rhs->kind == AST_CALL);
    int ops[] = {TK_PLUS, TK_MINUS, TK_STAR, TK_SLASH, TK_PERCENT, TK_AMP, TK_PIPE, TK_CARET, TK_SHL, TK_SHR};
    for (int k = 0; k < 10; k++) {
        n = s->data[i++];
        CHECK(n->kind == AST_ASSIGN && n->op == ops[k] && strcmp(n->lhs->name, "acc") == 0);
    }
    n = s->data[i++];
    CHECK(n->kind == AST_EXPR_STMT && n->lhs->kind == AST_CALL);
    n = s->data[i++];
    CHECK(n->kind == AST_IF && n->cond->kind == AST_NAME && n->then_body->kind == AST_BLOCK &&
          n->else_body && n->else_body->kind == AST_IF && n->else_body->else_body &&
          n->else_body->else_body->kind == AST_BLOCK);
    CHECK(n->loc.len == n->else_body->loc.off - n->loc.off + n->else_body->loc.len); /* spans the chain */
    n = s->data[i++];
    CHECK(n->kind == AST_IF && n->else_body == NULL);
    n = s->data[i++];
    CHECK(n->kind == AST_FOR && strcmp(n->name, "i") == 0 && n->lhs->kind == AST_CALL && n->attrs.len == 1 &&
          strcmp(n->attrs.data[0]->name, "num_stages") == 0 && n->attrs.data[0]->args.len == 1 &&
          n->body->kind == AST_BLOCK);
    n = s->data[i++];
    CHECK(n->kind == AST_FOR && n->attrs.len == 0 && n->body->args.len == 2 &&
          n->body->args.data[0]->kind == AST_BREAK && n->body->args.data[1]->kind == AST_CONTINUE);
    n = s->data[i++];
    CHECK(n->kind == AST_WHILE && n->cond->kind == AST_BINARY && n->body->kind == AST_BLOCK);
    n = s->data[i++];
    CHECK(n->kind == AST_BLOCK && n->args.len == 0); /* `;` is an empty statement: no node */
    n = s->data[i++];
    CHECK(n->kind == AST_RETURN && n->lhs == NULL);
    n = s->data[i++];
    CHECK(n->kind == AST_RETURN && n->lhs && n->lhs->kind == AST_TUPLE && n->lhs->args.len == 2);
    n = s->data[i++];
    CHECK(n->kind == AST_RETURN && n->lhs && n->lhs->kind == AST_BINARY);
    done(&p);
}

static void test_items(void) {
    parsed p;
    parse_src(&p,
              "import \"nn.blk\";\n"
              "import \"lib/x.blk\" as nn;\n"
              "const A = 1;\n"
              "const B: f32 = 2.5;\n"
              "fn f(a, b: f32) -> f32 { return a; }\n"
              "fn g() { }\n"
              "@num_warps(8)\n"
              "@autotune(key = [M, N], configs = [ {BM = 128, BN = 64, num_warps = 8}, {BM = 64, BN = 64,}, ])\n"
              "kernel k(x: *f32, p: *const bf16, n: i32, t: f32[128, 64], const BLOCK: i32 = 1024, const C) { }\n"
              "kernel plain() { }\n");
    CHECK(p.m != NULL);
    if (!p.m) { fprintf(stderr, "%s", sb_str(&p.d.out)); done(&p); return; }
    CHECK(p.m->kind == AST_MODULE && p.m->args.len == 8);
    ast_node **it = p.m->args.data;
    CHECK(it[0]->kind == AST_IMPORT && it[0]->str_len == 6 && strcmp(it[0]->str, "nn.blk") == 0 && !it[0]->name);
    CHECK(it[1]->kind == AST_IMPORT && strcmp(it[1]->str, "lib/x.blk") == 0 && it[1]->name &&
          strcmp(it[1]->name, "nn") == 0);
    CHECK(it[2]->kind == AST_CONST && strcmp(it[2]->name, "A") == 0 && !it[2]->type && it[2]->rhs->ival == 1);
    CHECK(it[3]->kind == AST_CONST && it[3]->type && strcmp(it[3]->type->name, "f32") == 0);
    ast_node *f = it[4];
    CHECK(f->kind == AST_FN && strcmp(f->name, "f") == 0 && f->params.len == 2 && f->type &&
          strcmp(f->type->name, "f32") == 0 && f->body->kind == AST_BLOCK);
    CHECK(f->params.data[0]->kind == AST_PARAM && !f->params.data[0]->type && !f->params.data[0]->is_const);
    CHECK(f->params.data[1]->type && f->params.data[1]->type->kind == AST_TYPE_SCALAR);
    CHECK(it[5]->kind == AST_FN && it[5]->params.len == 0 && !it[5]->type);
    ast_node *k = it[6];
    CHECK(k->kind == AST_KERNEL && strcmp(k->name, "k") == 0 && k->attrs.len == 2 && k->params.len == 6);
    CHECK(strcmp(k->attrs.data[0]->name, "num_warps") == 0 && k->attrs.data[0]->args.len == 1 &&
          k->attrs.data[0]->args.data[0]->ival == 8);
    ast_node *at = k->attrs.data[1];
    CHECK(strcmp(at->name, "autotune") == 0 && at->args.len == 2);
    if (at->args.len == 2) {
        ast_node *key = at->args.data[0], *cfg = at->args.data[1];
        CHECK(key->kind == AST_NAMED_ARG && strcmp(key->name, "key") == 0 && key->lhs->kind == AST_LIST &&
              key->lhs->args.len == 2);
        CHECK(cfg->kind == AST_NAMED_ARG && cfg->lhs->kind == AST_LIST && cfg->lhs->args.len == 2);
        if (cfg->lhs->args.len == 2) {
            ast_node *r0 = cfg->lhs->args.data[0];
            CHECK(r0->kind == AST_RECORD && r0->args.len == 3 && r0->args.data[2]->kind == AST_NAMED_ARG &&
                  strcmp(r0->args.data[2]->name, "num_warps") == 0 && r0->args.data[2]->lhs->ival == 8);
            CHECK(cfg->lhs->args.data[1]->args.len == 2);
        }
    }
    ast_node **pa = k->params.data;
    CHECK(pa[0]->type->kind == AST_TYPE_PTR && !pa[0]->type->is_const && strcmp(pa[0]->type->type->name, "f32") == 0);
    CHECK(pa[1]->type->kind == AST_TYPE_PTR && pa[1]->type->is_const && strcmp(pa[1]->type->type->name, "bf16") == 0);
    CHECK(pa[3]->type->kind == AST_TYPE_BLOCK && pa[3]->type->args.len == 2 &&
          strcmp(pa[3]->type->type->name, "f32") == 0 && pa[3]->type->args.data[1]->ival == 64);
    CHECK(pa[4]->is_const && strcmp(pa[4]->name, "BLOCK") == 0 && pa[4]->rhs && pa[4]->rhs->ival == 1024 &&
          strcmp(pa[4]->op_loc.off + p.d.files.data[0].text, "BLOCK: i32 = 1024, const C) { }\nkernel plain() { }\n") == 0);
    CHECK(pa[5]->is_const && !pa[5]->type && !pa[5]->rhs);
    CHECK(k->loc.off == it[6]->attrs.data[0]->loc.off); /* a kernel's span starts at its first attribute */
    CHECK(it[7]->kind == AST_KERNEL && it[7]->attrs.len == 0 && it[7]->params.len == 0);
    done(&p);
}

/* The four programs of LANGUAGE.md (online_update completed). */
static const char *language_md =
    "kernel vector_add(x: *f32, y: *f32, out: *f32, n: i32, const BLOCK: i32 = 1024) {\n"
    "    let offs = program_id(0) * BLOCK + arange(0, BLOCK);\n"
    "    let m = offs < n;\n"
    "    store(out + offs, load(x + offs, m) + load(y + offs, m), m);\n"
    "}\n"
    "\n"
    "@num_warps(8)\n"
    "kernel softmax(out: *f32, inp: *f32, stride: i32, n_cols: i32, const BLOCK: i32 = 1024) {\n"
    "    let row = program_id(0);\n"
    "    let cols = arange(0, BLOCK);\n"
    "    let x = load(inp + row * stride + cols, cols < n_cols, -inf);\n"
    "    let e = exp(x - max(x, 0));\n"
    "    store(out + row * stride + cols, e / sum(e, 0), cols < n_cols);\n"
    "}\n"
    "\n"
    "@num_warps(8)\n"
    "kernel matmul(a: *bf16, b: *bf16, c: *bf16, M: i32, N: i32, K: i32,\n"
    "              const BM: i32 = 128, const BN: i32 = 256, const BK: i32 = 64) {\n"
    "    let pm = program_id(0) / cdiv(N, BN);\n"
    "    let pn = program_id(0) % cdiv(N, BN);\n"
    "    let rm = pm * BM + arange(0, BM);\n"
    "    let rn = pn * BN + arange(0, BN);\n"
    "    let rk = arange(0, BK);\n"
    "    var acc = zeros([BM, BN], f32);\n"
    "    for k in range(0, K, BK) @num_stages(3) {\n"
    "        let x = load(a + rm[:, None] * K + (k + rk)[None, :], (k + rk)[None, :] < K);\n"
    "        let y = load(b + (k + rk)[:, None] * N + rn[None, :], (k + rk)[:, None] < K);\n"
    "        acc = dot(x, y, acc);\n"
    "    }\n"
    "    store(c + rm[:, None] * N + rn[None, :], acc as bf16, (rm[:, None] < M) & (rn[None, :] < N));\n"
    "}\n"
    "\n"
    "fn online_update(m, l, s) {   // device functions keep attention readable\n"
    "    let m_new = maximum(m, max(s, 1));\n"
    "    let alpha = exp2((m - m_new) * 1.4426950408889634);\n"
    "    let p = exp2((s - m_new[:, None]) * 1.4426950408889634);\n"
    "    let l_new = l * alpha + sum(p, 1);\n"
    "    return (m_new, l_new, p, alpha);\n"
    "}\n";

/* The other snippets of LANGUAGE.md. */
static const char *language_md_snippets =
    "import \"nn.blk\";                      // device fns/consts from another file\n"
    "const LOG2E = 1.4426950408889634;     // module constant\n"
    "fn silu(x) { return x * sigmoid(x); } // device function\n"
    "fn scale(x: f32, s: f32) -> f32 { return x * s; }   /* annotations optional */\n"
    "@autotune(key = [M, N, K], configs = [ {BM = 128, BN = 256, BK = 64, num_warps = 8, num_stages = 3} ])\n"
    "kernel k(a: *f32, M: i32, N: i32, K: i32, const BM: i32 = 64, const BN: i32 = 64, const BK: i32 = 32) {\n"
    "    let pid = program_id(0);\n"
    "    let offs = pid * BM + arange(0, BM);\n"
    "    let (vals, idx) = topk(load(a + offs), 2, 1);\n"
    "    var acc = zeros([BM, BN], f32);\n"
    "    acc = dot(load(a + offs), load(a + offs), acc);  acc += 1.0;\n"
    "    if M > 0 { acc = acc * 2; } else { acc = acc; }\n"
    "    for i in static_range(4) { acc += i; }\n"
    "    while pid < M { break; }\n"
    "    static_assert(BM % 32 == 0, \"BLOCK must be a multiple of 32\");\n"
    "    print(\"row max\", max(acc, 1));\n"
    "    let d = tensor_desc(a, shape = [M, K], strides = [K, 1], block = [BM, BK]);\n"
    "    d.store([0, 0], d.load([pid * BM, 0]));\n"
    "    store(a + offs, load(a + offs, offs < M, cache = \"cg\", eviction = \"last\", volatile = true));\n"
    "    let z = pid as i64 * BM;\n"
    "    return;\n"
    "}\n";

static void test_good_programs(void) {
    const char *srcs[] = {language_md, language_md_snippets, "", "// only a comment\n/* and a block */\n",
                          "\n\n   \t\n", ";;"};
    for (size_t i = 0; i < sizeof srcs / sizeof srcs[0]; i++) {
        parsed p;
        parse_src(&p, srcs[i]);
        CHECK(p.m != NULL);
        CHECK(p.d.nerrors == 0);
        if (p.d.nerrors) fprintf(stderr, "program %zu:\n%s", i, sb_str(&p.d.out));
        done(&p);
    }
    parsed p;
    parse_src(&p, language_md);
    CHECK(p.m && p.m->args.len == 4);
    if (p.m && p.m->args.len == 4) {
        ast_node *mm = p.m->args.data[2];
        CHECK(mm->kind == AST_KERNEL && strcmp(mm->name, "matmul") == 0 && mm->params.len == 9);
        CHECK(p.m->args.data[3]->kind == AST_FN);
    }
    done(&p);
    parse_src(&p, "");
    CHECK(p.m && p.m->kind == AST_MODULE && p.m->args.len == 0);
    done(&p);
}

/* Diagnostics: text of the first line of each error, in order. */
static void expect_errors(const char *src, const char *want) {
    parsed p;
    parse_src(&p, src);
    blk_strbuf got;
    sb_init(&got);
    const char *s = sb_str(&p.d.out);
    while (*s) {
        const char *e = strchr(s, '\n');
        size_t n = e ? (size_t)(e - s) : strlen(s);
        if (strncmp(s, "t.blk:", 6) == 0 && strstr(s, ": error: ") && (size_t)(strstr(s, ": error: ") - s) < n) {
            sb_putn(&got, s + 6, n - 6);
            sb_putc(&got, '\n');
        }
        s += n + (e ? 1 : 0);
    }
    CHECK_STR(sb_str(&got), want);
    CHECK(p.m == NULL);
    CHECK(p.d.nerrors > 0);
    sb_free(&got);
    done(&p);
}

static void test_diagnostics(void) {
    expect_errors("kernel k() {\n    let x = 1\n    let y = 2;\n}\n", "2:14: error: expected ';' after statement\n");
    expect_errors("fn f() {\n  let x = ;\n}\n", "2:11: error: expected an expression\n");
    expect_errors("fn f() { g(a b); }", "1:14: error: expected ',' or ')'\n");
    expect_errors("fn f() { if x let y = 1; }", "1:15: error: expected '{'\n");
    expect_errors("fn f() {\n  let x = 1;\n", "2:13: error: expected '}' at end of file\n");
    expect_errors("let x = 1;", "1:1: error: unexpected 'let' at top level; statements belong inside a kernel or fn\n");
    expect_errors("fn f() { let x = a $ b; }", "1:20: error: unexpected character '$'\n");
    /* Recovery: one error per broken statement, none derived from them. */
    expect_errors("fn f() {\n  let a = ;\n  let b = 1 2;\n  let c = 3;\n  if x { let d = (; }\n  let e = 4\n}\n",
                  "2:11: error: expected an expression\n"
                  "3:12: error: expected ';' after statement\n"
                  "5:19: error: expected an expression\n"
                  "6:12: error: expected ';' after statement\n");
    expect_errors("fn f() { let x = 1; }\nfn g() { let y = ; }\nkernel k(a) { }\n",
                  "2:18: error: expected an expression\n3:10: error: kernel parameter 'a' needs a type\n");
    expect_errors("fn f() { let x 5; }", "1:16: error: expected ':' or '='\n");
    expect_errors("kernel k(x: *f32 y: i32) { }", "1:18: error: expected ',' or ')'\n");
    expect_errors("kernel k(const B: i32 4) { }", "1:23: error: expected ',' or ')'\n");
    expect_errors("fn f() { let x = [1 2]; }", "1:21: error: expected ',' or ']'\n");
    expect_errors("fn f() { x[0] = 1; }", "1:10: error: left side of '=' must be a variable name\n");
    expect_errors("fn f() { let x = {a = 1}; }", "1:18: error: expected an expression\n");
    expect_errors("fn f() { g(x = {a = 1}); }", "1:16: error: a record '{...}' is only allowed in attribute arguments\n");
    expect_errors("fn f() { let x = 0x; let y = 1.5f; }",
                  "1:18: error: hexadecimal literal '0x' has no digits\n"
                  "1:30: error: invalid suffix 'f' on floating-point literal\n");
    expect_errors("fn f() { /* open", "1:10: error: unterminated comment\n");
    expect_errors("fn f() { let s = \"open; }\nfn g() { }\n", "1:18: error: unterminated string literal\n");
    /* max_errors bounds the report. */
    parsed p;
    blk_strbuf src;
    sb_init(&src);
    sb_puts(&src, "fn f() {\n");
    for (int i = 0; i < 100; i++) sb_puts(&src, "  let x = ;\n");
    sb_puts(&src, "}\n");
    parse_src(&p, sb_str(&src));
    CHECK(p.m == NULL);
    CHECK(p.d.nerrors == p.d.max_errors);
    CHECK(strstr(sb_str(&p.d.out), "too many errors") != NULL);
    done(&p);
    sb_free(&src);
}

static void test_lex_dump(void) {
    blk_arena *a = arena_new();
    blk_diag d;
    diag_init(&d, a);
    const char *src = "let offs = x[:, None] <<= 0x2A; // c\n  /* b */ \"s\\n\" 1.5e3 ->";
    int f = diag_add_file(&d, "t.blk", src, strlen(src));
    blk_strbuf out;
    sb_init(&out);
    lex_dump(&out, &d, f);
    CHECK_STR(sb_str(&out),
              "1:1 LET 'let'\n1:5 IDENT 'offs'\n1:10 ASSIGN '='\n1:12 IDENT 'x'\n1:13 LBRACKET '['\n"
              "1:14 COLON ':'\n1:15 COMMA ','\n1:17 NONE 'None'\n1:21 RBRACKET ']'\n1:23 SHLEQ '<<='\n"
              "1:27 INT '0x2A'\n1:31 SEMI ';'\n2:11 STRING '\"s\\n\"'\n2:17 FLOAT '1.5e3'\n2:23 ARROW '->'\nEOF\n");
    CHECK(d.nerrors == 0);
    sb_free(&out);
    diag_fini(&d);
    arena_free(a);
}

static void test_ast_print(void) {
    parsed p;
    parse_src(&p, "@num_warps(4)\nkernel k(x: *const f32, const B: i32 = 8) { let (a, b) = f(x, n = 1.5); a += -b as i32; }");
    CHECK(p.m != NULL);
    blk_strbuf out;
    sb_init(&out);
    if (p.m) ast_print(&out, p.m, 0);
    CHECK_STR(sb_str(&out),
              "(module\n"
              "  (kernel k\n"
              "    (attr num_warps\n"
              "      (int 4))\n"
              "    (param x (ptr const f32))\n"
              "    (param const B i32\n"
              "      (int 8))\n"
              "    (block\n"
              "      (let (a b)\n"
              "        (call\n"
              "          (name f)\n"
              "          (name x)\n"
              "          (named_arg n\n"
              "            (float 1.5))))\n"
              "      (assign +=\n"
              "        (name a)\n"
              "        (cast i32\n"
              "          (unary -\n"
              "            (name b)))))))\n");
    sb_free(&out);
    done(&p);
    CHECK_STR(ast_kind_name(AST_NAMED_ARG), "named_arg");
    CHECK_STR(ast_kind_name(AST_MODULE), "module");
}

int main(void) {
    test_precedence();
    test_expressions();
    test_locations();
    test_statements();
    test_items();
    test_good_programs();
    test_diagnostics();
    test_lex_dump();
    test_ast_print();
    return test_finish("test_parse");
}

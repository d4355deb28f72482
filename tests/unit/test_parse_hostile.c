/* test_parse_hostile.c — the front end on inputs meant to break it.
 *
 * Every input must come back: a module with no errors, or NULL with located
 * errors (at most max_errors of them rendered), never a crash, hang or
 * unbounded recursion. Run it under the sanitizer build too
 * (cmake -DBLK_SANITIZE=ON) so leaks and undefined behaviour fail it.
 */
#include "front/front.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../test_util.h"

/* The lexer's entry point (lex.re); used to cut a program into tokens. */
int lex_scan(blk_diag *d, int file, uint32_t *pos, blk_loc *tok);

typedef struct {
    bool module;      /* parse_file returned a module */
    int nerrors;
    bool has_message; /* some rendered message contains want */
} result;

/* Parse len bytes (and dump their tokens and tree), checking the invariants
 * that hold for any input. */
static result run(const char *src, size_t len, const char *want) {
    result r = {0};
    blk_arena *a = arena_new();
    blk_diag d;
    diag_init(&d, a);
    int f = diag_add_file(&d, "h.blk", src, len);
    ast_node *m = parse_file(a, &d, f);
    r.module = m != NULL;
    r.nerrors = d.nerrors;
    /* NULL exactly when errors were reported. */
    CHECK((m == NULL) == (d.nerrors > 0));
    /* Rendered errors are bounded and located. */
    int shown = 0;
    for (const char *s = sb_str(&d.out); (s = strstr(s, ": error: ")); s++) shown++;
    CHECK(shown <= d.max_errors);
    CHECK(d.nerrors == 0 || strncmp(sb_str(&d.out), "h.blk:", 6) == 0 || strncmp(sb_str(&d.out), "blkc:", 5) == 0);
    r.has_message = want && strstr(sb_str(&d.out), want) != NULL;
    if (want && !r.has_message) fprintf(stderr, "wanted '%s' in:\n%.2000s\n", want, sb_str(&d.out));
    blk_strbuf out;
    sb_init(&out);
    if (m) ast_print(&out, m, 0);
    blk_diag d2; /* tokens: a fresh diag so its error count is separate */
    diag_init(&d2, a);
    int f2 = diag_add_file(&d2, "h.blk", src, len);
    lex_dump(&out, &d2, f2);
    CHECK(strstr(sb_str(&out), "EOF\n") != NULL);
    sb_free(&out);
    diag_fini(&d2);
    diag_fini(&d);
    arena_free(a);
    return r;
}

static result run_str(const char *src, const char *want) { return run(src, strlen(src), want); }

/* "prefix" + n * "unit" + "middle" + n * "close" + "suffix", malloc'd. */
static char *repeat(const char *prefix, const char *unit, size_t n, const char *middle, const char *close,
                    const char *suffix) {
    size_t len = strlen(prefix) + n * (strlen(unit) + strlen(close)) + strlen(middle) + strlen(suffix) + 1;
    char *s = malloc(len), *p = s;
    if (!s) return NULL;
    p += sprintf(p, "%s", prefix);
    for (size_t i = 0; i < n; i++) p += sprintf(p, "%s", unit);
    p += sprintf(p, "%s", middle);
    for (size_t i = 0; i < n; i++) p += sprintf(p, "%s", close);
    sprintf(p, "%s", suffix);
    return s;
}

static void test_nesting(void) {
    struct { const char *pre, *unit, *mid, *close, *suf, *want; } cases[] = {
        {"fn f() { let x = ", "(", "1", ")", "; }", "nesting too deep (limit 256)"},
        {"fn f() { let x = ", "[", "1", "]", "; }", "nesting too deep (limit 256)"},
        {"fn f() ", "{", "", "}", "", "nesting too deep (limit 256)"},
        {"fn f() { let x = ", "-", "1", "", "; }", "nesting too deep (limit 256)"},
        {"fn f() { let x = ", "!~", "1", "", "; }", "nesting too deep (limit 256)"},
        {"fn f(x: ", "*", "f32", "", ") { }", "nesting too deep (limit 256)"},
        {"fn f() { let x = ", "f(", "1", ")", "; }", "nesting too deep (limit 256)"},
        {"fn f() { let x = ", "a[", "1", "]", "; }", "nesting too deep (limit 256)"},
        {"fn f() ", "{ if x ", "{", "}}", "", "nesting too deep (limit 256)"},
        /* Unbalanced: only openers. */
        {"fn f() { let x = ", "(", "", "", "", "nesting too deep (limit 256)"},
        {"", "{", "", "", "", "nesting too deep (limit 256)"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *s = repeat(cases[i].pre, cases[i].unit, 100000, cases[i].mid, cases[i].close, cases[i].suf);
        result r = run_str(s, cases[i].want);
        /* Stray '{' at top level is an error of its own before the limit. */
        CHECK(!r.module && r.nerrors == (i == 10 ? 2 : 1) && r.has_message);
        free(s);
    }
    /* At the limit it still parses: 250 parens, 250 blocks, 200 minus signs. */
    const char *ok[][5] = {
        {"fn f() { let x = ", "(", "1", ")", "; }"},
        {"fn f() ", "{", "", "}", ""},
        {"fn f() { let x = ", "-", "1", "", "; }"},
    };
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        char *s = repeat(ok[i][0], ok[i][1], i == 2 ? 200 : 250, ok[i][2], ok[i][3], ok[i][4]);
        result r = run_str(s, NULL);
        CHECK(r.module && r.nerrors == 0);
        free(s);
    }
    /* Flat but long: a 200000-term sum and a 5000-link else-if chain give
     * trees too deep to recurse over safely; they are errors, not crashes. */
    char *s = repeat("fn f() { let x = 1", "+1", 200000, "", "", "; }");
    result r = run_str(s, "expression nested too deeply");
    CHECK(!r.module && r.nerrors == 1);
    free(s);
    s = repeat("fn f() { if a { }", " else if a { }", 5000, "", "", " }");
    r = run_str(s, "nested too deeply");
    CHECK(!r.module && r.nerrors == 1);
    free(s);
    /* Prefix runs that restart inside each paren stay under the bracket
     * limit but not under the parser's stack: a located error too. */
    blk_strbuf b;
    sb_init(&b);
    sb_puts(&b, "fn f() { let x = ");
    for (int i = 0; i < 240; i++) {
        for (int k = 0; k < 250 - i; k++) sb_putc(&b, '-');
        sb_putc(&b, '(');
    }
    sb_putc(&b, '1');
    for (int i = 0; i < 240; i++) sb_putc(&b, ')');
    sb_puts(&b, "; }");
    r = run_str(sb_str(&b), "nesting too deep for the parser");
    CHECK(!r.module && r.nerrors == 1);
    sb_free(&b);
    /* ... while a long flat list is fine: 100000 arguments, 20000 statements. */
    s = repeat("fn f() { g(0", ", 1", 100000, "", "", "); }");
    r = run_str(s, NULL);
    CHECK(r.module);
    free(s);
    s = repeat("fn f() {", " let x = a + b * c;", 20000, "", "", " }");
    r = run_str(s, NULL);
    CHECK(r.module);
    free(s);
}

static void test_bytes(void) {
    /* NUL bytes: in code, in a string, in a comment; one at the very end. */
    static const char nul_code[] = "fn f() { let x = 1;\0\0 let y = 2; }";
    result r = run(nul_code, sizeof nul_code - 1, "unexpected null byte in source");
    CHECK(!r.module && r.nerrors == 1);
    static const char nul_str[] = "fn f() { print(\"a\0b\"); }";
    r = run(nul_str, sizeof nul_str - 1, "null byte in string literal");
    CHECK(!r.module && r.nerrors == 1);
    static const char nul_comment[] = "fn f() { } // a\0b\n/* c\0d */";
    r = run(nul_comment, sizeof nul_comment - 1, NULL);
    CHECK(r.module);
    static const char nul_end[] = "fn f() { }\0";
    r = run(nul_end, sizeof nul_end - 1, "unexpected null byte");
    CHECK(!r.module);
    static const char only_nul[] = "\0";
    r = run(only_nul, 1, "unexpected null byte");
    CHECK(!r.module && r.nerrors == 1);

    /* Invalid UTF-8 is an error in code, and fine in strings and comments. */
    r = run_str("fn f() { let x = \xff\xfe\xfd; }", "invalid UTF-8 byte 0xFF");
    CHECK(!r.module && r.nerrors == 1);
    r = run_str("fn f() { let x = \xc0\xaf; }", "invalid UTF-8 byte 0xC0"); /* overlong '/' */
    CHECK(!r.module && r.nerrors == 1);
    r = run_str("fn f() { let x = \xed\xa0\x80; }", "invalid UTF-8 byte 0xED"); /* surrogate */
    CHECK(!r.module && r.nerrors == 1);
    r = run_str("fn f() { let \xce\xbb = 1; }", "unexpected character '\xce\xbb' (U+03BB)");
    CHECK(!r.module && r.nerrors == 1);
    r = run_str("fn f() { print(\"\xff \xce\xbb\"); } // \xff\xfe\n/* \xc0 */", NULL);
    CHECK(r.module);
    r = run_str("fn f() { let x = \xe2\x82; }", "invalid UTF-8"); /* truncated sequence */
    CHECK(!r.module);

    /* Empty and comment-only files are empty modules. */
    r = run("", 0, NULL);
    CHECK(r.module);
    r = run_str("// nothing\n/* at\n all */ // here", NULL);
    CHECK(r.module);
    r = run_str("/**/", NULL);
    CHECK(r.module);

    /* Unterminated everything. */
    const char *open_cases[][2] = {
        {"/* never closed", "unterminated comment"},
        {"fn f() { /* never closed", "unterminated comment"},
        {"/*/", "unterminated comment"},
        {"fn f() { print(\"never closed); }", "unterminated string literal"},
        {"fn f() { print(\"ends in escape\\", "unterminated string literal"},
        {"fn f() { print(\"\\", "unterminated string literal"},
        {"\"", "unterminated string literal"},
        {"fn f() { print(\"two\nlines\"); }", "unterminated string literal"},
        {"fn f() {", "expected '}' at end of file"},
        {"fn f(", "at end of file"},
        {"fn f() { g(", "at end of file"},
        {"fn f() { let x = [1, 2", "at end of file"},
        {"@autotune(configs = [{A = 1", "at end of file"},
        {"import", "at end of file"},
        {"kernel", "at end of file"},
        {"fn f() { let x = 1 +", "at end of file"},
    };
    for (size_t i = 0; i < sizeof open_cases / sizeof open_cases[0]; i++) {
        r = run_str(open_cases[i][0], open_cases[i][1]);
        CHECK(!r.module && r.nerrors >= 1 && r.has_message);
    }

    /* Integers: 10^40 saturates and is flagged (sema reports it); a long
     * float literal still reads. */
    blk_arena *a = arena_new();
    blk_diag d;
    diag_init(&d, a);
    const char *big = "const X = 10000000000000000000000000000000000000000; const Y = 0xFFFFFFFFFFFFFFFFF; "
                      "const Z = 0xFFFFFFFFFFFFFFFF;";
    ast_node *m = parse_file(a, &d, diag_add_file(&d, "h.blk", big, strlen(big)));
    CHECK(m != NULL && m->args.len == 3);
    if (m && m->args.len == 3) {
        CHECK(m->args.data[0]->rhs->int_overflow && m->args.data[0]->rhs->ival == UINT64_MAX);
        CHECK(m->args.data[1]->rhs->int_overflow);
        CHECK(!m->args.data[2]->rhs->int_overflow && m->args.data[2]->rhs->ival == UINT64_MAX);
    }
    diag_fini(&d);
    arena_free(a);
    char *longfloat = repeat("const X = 1", "0", 5000, ".5e-4990", "", ";");
    r = run_str(longfloat, NULL);
    CHECK(r.module);
    free(longfloat);
    r = run_str("const X = 1e400;", "floating-point literal is out of range");
    CHECK(!r.module);
}

/* 1 MB single-line files: valid, and invalid at the very end. */
static void test_large(void) {
    char *s = repeat("", "const A = 1 + 2 * 3; ", 50000, "", "", "");
    result r = run_str(s, NULL);
    CHECK(r.module);
    free(s);
    s = repeat("fn f() {", " x = y;", 150000, "", "", " let");
    r = run_str(s, "at end of file");
    CHECK(!r.module && r.nerrors == 1);
    free(s);
    s = repeat("", "$", 1000000, "", "", "");
    r = run_str(s, "unexpected character '$'");
    CHECK(!r.module);
    free(s);
    s = repeat("fn f() { let x = \"", "a", 1000000, "", "", "\"; }");
    r = run_str(s, NULL);
    CHECK(r.module);
    free(s);
}

/* xorshift64*: fixed seed, the same inputs on every run. */
static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static uint64_t rng(void) {
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 2685821657736338717ull;
}

static const char *const token_texts[] = {
    "kernel", "fn", "const", "let", "var", "if", "else", "for", "in", "while", "break", "continue", "return",
    "import", "as", "true", "false", "None", "x", "acc", "range", "f32", "*f32", "i64", "42", "0x2A", "1.5",
    "1e-5", ".5", "\"s\"", "(", ")", "[", "]", "{", "}", ",", ";", ":", ".", "->", "@", "=", "||", "&&",
    "|", "^", "&", "==", "!=", "<", "<=", ">", ">=", "<<", ">>", "+", "-", "*", "/", "%", "!", "~", "+=",
    "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<=", ">>=", "// c\n", "/* c */", "\n", "num_warps", "$",
    "\"", "/*", "0x", "1.5f", "\xff", "\0",
};

static void test_soup(void) {
    enum { N = 300 };
    char *buf = malloc(8192);
    if (!buf) return;
    /* Random bytes. */
    for (int i = 0; i < N; i++) {
        size_t len = rng() % 2048;
        for (size_t k = 0; k < len; k++) buf[k] = (char)(rng() & 0xFF);
        run(buf, len, NULL);
    }
    /* Random printable ASCII (more of it gets past the lexer). */
    for (int i = 0; i < N; i++) {
        size_t len = rng() % 2048;
        for (size_t k = 0; k < len; k++) buf[k] = (char)(' ' + rng() % 95);
        run(buf, len, NULL);
    }
    /* Random token sequences. */
    size_t ntok = sizeof token_texts / sizeof token_texts[0];
    for (int i = 0; i < N; i++) {
        size_t len = 0, count = rng() % 400;
        for (size_t k = 0; k < count; k++) {
            const char *t = token_texts[rng() % ntok];
            size_t tl = t[0] ? strlen(t) : 1; /* "\0" is one NUL byte */
            if (len + tl + 1 >= 8192) break;
            memcpy(buf + len, t, tl);
            len += tl;
            buf[len++] = ' ';
        }
        run(buf, len, NULL);
    }
    free(buf);
}

/* A good program with tokens deleted, duplicated or replaced: close to
 * real mistakes, so it exercises recovery far more than random soup. */
static void test_mutations(void) {
    const char *good =
        "@num_warps(8) @autotune(key = [M], configs = [{BM = 64, num_warps = 4}])\n"
        "kernel matmul(a: *bf16, b: *const bf16, c: *bf16, M: i32, N: i32, K: i32, const BM: i32 = 128) {\n"
        "    let pm = program_id(0) / cdiv(N, BM);\n"
        "    var acc = zeros([BM, BM], f32);\n"
        "    for k in range(0, K, BM) @num_stages(3) {\n"
        "        let x = load(a + pm[:, None] * K + (k + 1)[None, :], k < K);\n"
        "        acc = dot(x, x, acc);\n"
        "        if k > 0 { acc += 1; } else if k < 0 { break; } else { continue; }\n"
        "    }\n"
        "    let (u, v) = topk(acc, 2, 1);\n"
        "    store(c + pm, acc as bf16, pm < M);\n"
        "}\n"
        "fn f(x: f32, y) -> f32 { while x < y { x = -x as f32; } return (x, y); }\n"
        "import \"a.blk\" as nn;\nconst C: i32 = 3;\n";
    /* Split into tokens by lexing it. */
    blk_arena *a = arena_new();
    blk_diag d;
    diag_init(&d, a);
    int f = diag_add_file(&d, "good.blk", good, strlen(good));
    result base = run_str(good, NULL);
    CHECK(base.module);
    typedef struct { uint32_t off, len; } span;
    span sp[1024];
    int n = 0;
    uint32_t pos = 0;
    blk_loc t;
    while (n < 1024 && lex_scan(&d, f, &pos, &t) != 0) sp[n++] = (span){t.off, t.len};
    char *buf = malloc(strlen(good) * 3 + 64);
    for (int i = 0; buf && i < 600; i++) {
        size_t len = 0;
        int edits = 1 + (int)(rng() % 3);
        int at[3], kind[3];
        for (int e = 0; e < edits; e++) at[e] = (int)(rng() % (uint64_t)n), kind[e] = (int)(rng() % 3);
        for (int k = 0; k < n; k++) {
            int op = -1;
            for (int e = 0; e < edits; e++)
                if (at[e] == k) op = kind[e];
            const char *t = good + sp[k].off;
            size_t tl = sp[k].len;
            if (op == 1) { /* replace with a random token */
                t = token_texts[rng() % (sizeof token_texts / sizeof token_texts[0])];
                tl = t[0] ? strlen(t) : 1;
            }
            if (op != 0) { memcpy(buf + len, t, tl); len += tl; buf[len++] = ' '; }
            if (op == 2) { memcpy(buf + len, t, tl); len += tl; buf[len++] = ' '; } /* duplicate */
        }
        run(buf, len, NULL);
    }
    free(buf);
    diag_fini(&d);
    arena_free(a);
}

int main(void) {
    test_nesting();
    test_bytes();
    test_large();
    test_soup();
    test_mutations();
    return test_finish("test_parse_hostile");
}

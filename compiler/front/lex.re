/* lex.re — the blk lexer (re2c) and --emit=tokens.
 *
 * lex_scan returns one token per call: its kind (a TK_ code from parse.h, 0 at
 * the end of input) and its byte span. Line and column are never computed
 * here; diagnostics compute them when they render (ninja's lexer does the
 * same). The scanner itself is stateless: the caller keeps the position.
 *
 * The text is NUL-terminated (diag_add_file guarantees it) but may contain
 * NUL bytes, so the NUL rule checks whether it is the sentinel at the end.
 * No pattern other than the NUL rule matches a NUL, so re2c never reads past
 * the sentinel.
 *
 * Lexical errors are reported here, where the facts are. A malformed token
 * that the parser could not use (an unknown character, invalid UTF-8, a NUL,
 * a bad number, an unterminated string or comment) comes back as TK_ILLEGAL
 * so the parser skips to the next statement instead of reporting a second,
 * derived error. A token that is malformed only inside (a bad escape in a
 * string, a float that overflows) is reported and returned as usual.
 *
 * Literal values are decoded later, by the parser's actions, with
 * lex_int_value / lex_float_value / lex_string_value below; the scanner has
 * already checked that the text is well formed.
 *
 * Literals (where LANGUAGE.md leaves a choice):
 *   integers  42  0x2A  0b101  1_000_000   underscores may follow any digit;
 *             a value over u64 saturates with int_overflow set (sema reports)
 *   floats    1.0  1e-5  .5  2.  1_000.25  a '.' or an exponent makes a float;
 *             one that overflows f64 is an error here
 *   strings   "..." on one line; escapes \n \t \r \0 \\ \" \'; other bytes,
 *             UTF-8 or not, are kept as they are
 * A number run into letters (123abc, 1.5f, 0x, 0b12) is one error, not a
 * number and a name. Comments may hold any bytes. A UTF-8 byte order mark
 * at the start of the file is skipped.
 */
#include "front/front.h"
#include "front/parse.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Every token: TK_ name (also the --emit=tokens kind) and how messages spell
 * it. W: a token spelled by a word ("identifier"); Q: one with a fixed text,
 * which messages quote ("'+'") and ast_op_text gives bare ("+"). */
#define LEX_TOKENS(W, Q)                                                        \
    W(IDENT, "identifier") W(INT, "integer literal") W(FLOAT, "float literal") \
    W(STRING, "string literal") Q(KERNEL, "kernel") Q(FN, "fn")                \
    Q(CONST, "const") Q(LET, "let") Q(VAR, "var") Q(IF, "if") Q(ELSE, "else")  \
    Q(FOR, "for") Q(IN, "in") Q(WHILE, "while") Q(BREAK, "break")              \
    Q(CONTINUE, "continue") Q(RETURN, "return") Q(IMPORT, "import")            \
    Q(AS, "as") Q(TRUE, "true") Q(FALSE, "false") Q(NONE, "None")              \
    Q(LPAREN, "(") Q(RPAREN, ")") Q(LBRACKET, "[") Q(RBRACKET, "]")            \
    Q(LBRACE, "{") Q(RBRACE, "}") Q(COMMA, ",") Q(SEMI, ";") Q(COLON, ":")     \
    Q(DOT, ".") Q(ARROW, "->") Q(AT, "@") Q(ASSIGN, "=") Q(OROR, "||")         \
    Q(ANDAND, "&&") Q(PIPE, "|") Q(CARET, "^") Q(AMP, "&") Q(EQ, "==")         \
    Q(NE, "!=") Q(LT, "<") Q(LE, "<=") Q(GT, ">") Q(GE, ">=") Q(SHL, "<<")     \
    Q(SHR, ">>") Q(PLUS, "+") Q(MINUS, "-") Q(STAR, "*") Q(SLASH, "/")         \
    Q(PERCENT, "%") Q(BANG, "!") Q(TILDE, "~") Q(PLUSEQ, "+=")                 \
    Q(MINUSEQ, "-=") Q(STAREQ, "*=") Q(SLASHEQ, "/=") Q(PERCENTEQ, "%=")       \
    Q(AMPEQ, "&=") Q(PIPEEQ, "|=") Q(CARETEQ, "^=") Q(SHLEQ, "<<=")            \
    Q(SHREQ, ">>=") W(ILLEGAL, "invalid token") W(RECOVER, "recovery marker")

const char *lex_token_name(int kind) {
    switch (kind) {
    case 0: return "EOF";
#define X(k, s) case TK_##k: return #k;
    LEX_TOKENS(X, X)
#undef X
    }
    return "?";
}

const char *lex_token_spelling(int kind) {
    switch (kind) {
    case 0: return "end of file";
#define W(k, s) case TK_##k: return s;
#define Q(k, s) case TK_##k: return "'" s "'";
    LEX_TOKENS(W, Q)
#undef W
#undef Q
    }
    return "?";
}

const char *ast_op_text(int op) {
    switch (op) {
#define W(k, s)
#define Q(k, s) case TK_##k: return s;
    LEX_TOKENS(W, Q)
#undef W
#undef Q
    }
    return "?";
}

/* ---- literal values ---- */

/* Value of an integer literal the scanner accepted: 42, 0x2A, 0b101,
 * 1_000. Saturates at UINT64_MAX and sets *overflow when it does not fit. */
uint64_t lex_int_value(const char *s, size_t n, bool *overflow) {
    unsigned base = 10;
    size_t i = 0;
    if (n > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) base = 16, i = 2;
    else if (n > 2 && s[0] == '0' && (s[1] == 'b' || s[1] == 'B')) base = 2, i = 2;
    uint64_t v = 0;
    *overflow = false;
    for (; i < n; i++) {
        char c = s[i];
        unsigned d;
        if (c == '_') continue;
        if (c >= '0' && c <= '9') d = (unsigned)(c - '0');
        else if (c >= 'a' && c <= 'f') d = (unsigned)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F') d = (unsigned)(c - 'A' + 10);
        else break;
        if (v > (UINT64_MAX - d) / base) { *overflow = true; return UINT64_MAX; }
        v = v * base + d;
    }
    return v;
}

/* Value of a float literal the scanner accepted (digits, '.', exponent,
 * underscores). strtod does the rounding; underscores are dropped first. */
double lex_float_value(const char *s, size_t n) {
    char small[128];
    char *buf = n < sizeof small ? small : blk_malloc(n + 1);
    if (!buf) return 0.0;
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (s[i] != '_') buf[k++] = s[i];
    buf[k] = 0;
    double v = strtod(buf, NULL);
    if (buf != small) free(buf);
    return v;
}

/* Decoded contents of a string literal token (s points at the opening quote,
 * n covers both quotes). Escapes the scanner rejected are kept as written. */
char *lex_string_value(blk_arena *a, const char *s, size_t n, int *len) {
    size_t body = n >= 2 ? n - 2 : 0;
    char *out = arena_alloc(a, body + 1);
    *len = 0;
    if (!out) return NULL;
    size_t k = 0;
    for (size_t i = 1; i + 1 < n; i++) {
        char c = s[i];
        if (c == '\\' && i + 2 < n) {
            char e = s[++i];
            switch (e) {
            case 'n': c = '\n'; break;
            case 't': c = '\t'; break;
            case 'r': c = '\r'; break;
            case '0': c = '\0'; break;
            case '\\': case '"': case '\'': c = e; break;
            default: out[k++] = '\\'; c = e; break;
            }
        }
        out[k++] = c;
    }
    out[k] = 0;
    *len = (int)k;
    return out;
}

/* ---- scanner ---- */

/* Length of the well-formed UTF-8 sequence at p (RFC 3629: no overlong forms,
 * no surrogates, at most U+10FFFF), or 0. */
static int utf8_decode(const unsigned char *p, const unsigned char *end, uint32_t *cp) {
    unsigned char c = p[0];
    int n;
    uint32_t v, min;
    if (c >= 0xC2 && c <= 0xDF) n = 2, v = c & 0x1F, min = 0x80;
    else if (c >= 0xE0 && c <= 0xEF) n = 3, v = c & 0x0F, min = 0x800;
    else if (c >= 0xF0 && c <= 0xF4) n = 4, v = c & 0x07, min = 0x10000;
    else return 0;
    if (end - p < n) return 0;
    for (int i = 1; i < n; i++) {
        if ((p[i] & 0xC0) != 0x80) return 0;
        v = v << 6 | (p[i] & 0x3F);
    }
    if (v < min || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF)) return 0;
    *cp = v;
    return n;
}

static blk_loc span(int file, const unsigned char *base, const unsigned char *a, const unsigned char *b) {
    return (blk_loc){file, (uint32_t)(a - base), (uint32_t)(b - a)};
}

/* A byte that starts no token. Consumes it (a whole UTF-8 character, or a
 * run of bytes that are not UTF-8) and reports it. */
static const unsigned char *bad_char(blk_diag *d, int file, const unsigned char *base,
                                     const unsigned char *p, const unsigned char *end) {
    uint32_t cp;
    unsigned char c = *p;
    if (c < 0x80) {
        if (c >= 0x20 && c < 0x7F)
            diag_error(d, span(file, base, p, p + 1), "unexpected character '%c'", c);
        else
            diag_error(d, span(file, base, p, p + 1), "unexpected control character (byte 0x%02X)", c);
        return p + 1;
    }
    int n = utf8_decode(p, end, &cp);
    if (n) {
        diag_error(d, span(file, base, p, p + n), "unexpected character '%.*s' (U+%04X)", n,
                   (const char *)p, (unsigned)cp);
        return p + n;
    }
    const unsigned char *q = p + 1;
    while (q < end && *q >= 0x80 && !utf8_decode(q, end, &cp)) q++;
    diag_error(d, span(file, base, p, q), "invalid UTF-8 byte 0x%02X", c);
    return q;
}

/* A run of digits and letters that is not a number (123abc, 0x, 0b12,
 * 1.5f, 1e+): say what is wrong with it. */
static void bad_number(blk_diag *d, blk_loc loc, const unsigned char *s, size_t n) {
    size_t i = 0;
    const char *what = "decimal";
    int len = n > 40 ? 40 : (int)n;
    const char *more = n > 40 ? "..." : "";
    if (n >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) what = "hexadecimal", i = 2;
    else if (n >= 2 && s[0] == '0' && (s[1] == 'b' || s[1] == 'B')) what = "binary", i = 2;
    if (i == 2) {
        while (i < n && s[i] == '_') i++;
        if (i == n) { diag_error(d, loc, "%s literal '%.*s' has no digits", what, len, (const char *)s); return; }
        for (; i < n; i++) {
            bool ok = s[i] == '_' || (what[0] == 'b' ? (s[i] == '0' || s[i] == '1')
                                                      : ((s[i] >= '0' && s[i] <= '9') ||
                                                         (s[i] >= 'a' && s[i] <= 'f') ||
                                                         (s[i] >= 'A' && s[i] <= 'F')));
            if (!ok) break;
        }
        diag_error(d, loc, "invalid digit '%c' in %s literal '%.*s%s'", s[i < n ? i : n - 1], what, len,
                   (const char *)s, more);
        return;
    }
    /* Decimal or float: find where the number proper ends. */
    while (i < n && ((s[i] >= '0' && s[i] <= '9') || s[i] == '_' || s[i] == '.')) i++;
    if (i < n && (s[i] == 'e' || s[i] == 'E')) {
        size_t j = i + 1;
        if (j < n && (s[j] == '+' || s[j] == '-')) j++;
        if (j >= n || s[j] < '0' || s[j] > '9') {
            diag_error(d, loc, "exponent of '%.*s%s' has no digits", len, (const char *)s, more);
            return;
        }
        for (i = j; i < n && ((s[i] >= '0' && s[i] <= '9') || s[i] == '_'); i++) {}
    }
    bool is_float = memchr(s, '.', i) || memchr(s, 'e', i) || memchr(s, 'E', i);
    int slen = (int)(n - i) > 40 ? 40 : (int)(n - i);
    diag_error(d, loc, "invalid suffix '%.*s' on %s literal", slen, (const char *)s + i,
               is_float ? "floating-point" : "integer");
}

/* A string literal; p is just past the opening quote. Escapes: \n \t \r \0
 * \\ \" \'. Strings end at the closing quote and may not span lines.
 * Returns the kind (TK_STRING, or TK_ILLEGAL when unterminated) and moves *pp
 * past the token. */
static int scan_string(blk_diag *d, int file, const unsigned char *base, const unsigned char *start,
                       const unsigned char **pp, const unsigned char *end) {
    const unsigned char *p = *pp;
    for (;;) {
        if (p >= end || *p == '\n') {
            diag_error(d, span(file, base, start, start + 1), "unterminated string literal");
            *pp = p;
            return TK_ILLEGAL;
        }
        unsigned char c = *p;
        if (c == '"') { *pp = p + 1; return TK_STRING; }
        if (c == 0) {
            diag_error(d, span(file, base, p, p + 1), "null byte in string literal");
        } else if (c == '\\') {
            unsigned char e = p + 1 < end ? p[1] : 0;
            if (p + 1 >= end || e == '\n') { p++; continue; } /* reported as unterminated */
            if (!strchr("ntr0\\\"'", e) || e == 0) {
                uint32_t cp;
                int n = e >= 0x80 ? utf8_decode(p + 1, end, &cp) : 1;
                if (n == 0) n = 1;
                if (e >= 0x20 && e < 0x7F)
                    diag_error(d, span(file, base, p, p + 2), "unknown escape sequence '\\%c'", e);
                else
                    diag_error(d, span(file, base, p, p + 1 + n), "unknown escape sequence in string literal");
                p += 1 + n;
                continue;
            }
            p += 2;
            continue;
        }
        p++;
    }
}

int lex_scan(blk_diag *d, int file, uint32_t *pos, blk_loc *tok) {
    const blk_source *src = &d->files.data[file];
    const unsigned char *base = (const unsigned char *)src->text;
    const unsigned char *end = base + src->size; /* *end == 0: the sentinel */
    const unsigned char *p = base + (*pos < src->size ? *pos : src->size);
    const unsigned char *q = p, *start;
    int kind;
    /* A UTF-8 byte order mark some editors write is not part of the program. */
    if (p == base && src->size >= 3 && memcmp(base, "\xEF\xBB\xBF", 3) == 0) p += 3;

    for (;;) {
        start = p;
        /*!re2c
        re2c:define:YYCTYPE = "unsigned char";
        re2c:define:YYCURSOR = p;
        re2c:define:YYMARKER = q;
        re2c:yyfill:enable = 0;

        digits = [0-9] [0-9_]*;
        exp    = [eE] [+-]? digits;
        float  = digits "." ([0-9] [0-9_]*)? exp? | "." [0-9] [0-9_]* exp? | digits exp;
        word   = [A-Za-z0-9_];

        "\x00" {
            if (start == end) { kind = 0; break; }
            while (p < end && *p == 0) p++;
            diag_error(d, span(file, base, start, p), "unexpected null byte in source");
            kind = TK_ILLEGAL; break;
        }
        [ \t\r\n\v\f]+ { continue; }
        "//" { while (p < end && *p != '\n') p++; continue; }
        "/*" {
            while (p < end && !(p[0] == '*' && p + 1 < end && p[1] == '/')) p++;
            if (p >= end) {
                diag_error(d, span(file, base, start, start + 2), "unterminated comment");
                kind = TK_ILLEGAL; break;
            }
            p += 2;
            continue;
        }
        "\"" { kind = scan_string(d, file, base, start, &p, end); break; }

        "kernel"   { kind = TK_KERNEL; break; }
        "fn"       { kind = TK_FN; break; }
        "const"    { kind = TK_CONST; break; }
        "let"      { kind = TK_LET; break; }
        "var"      { kind = TK_VAR; break; }
        "if"       { kind = TK_IF; break; }
        "else"     { kind = TK_ELSE; break; }
        "for"      { kind = TK_FOR; break; }
        "in"       { kind = TK_IN; break; }
        "while"    { kind = TK_WHILE; break; }
        "break"    { kind = TK_BREAK; break; }
        "continue" { kind = TK_CONTINUE; break; }
        "return"   { kind = TK_RETURN; break; }
        "import"   { kind = TK_IMPORT; break; }
        "as"       { kind = TK_AS; break; }
        "true"     { kind = TK_TRUE; break; }
        "false"    { kind = TK_FALSE; break; }
        "None"     { kind = TK_NONE; break; }
        [A-Za-z_] word* { kind = TK_IDENT; break; }

        digits                                   { kind = TK_INT; break; }
        "0" [xX] "_"* [0-9a-fA-F] [0-9a-fA-F_]* { kind = TK_INT; break; }
        "0" [bB] "_"* [01] [01_]*               { kind = TK_INT; break; }
        float {
            const char *s = (const char *)start;
            if (isinf(lex_float_value(s, (size_t)(p - start))))
                diag_error(d, span(file, base, start, p), "floating-point literal is out of range");
            kind = TK_FLOAT; break;
        }
        /* Longer than any number above: a number run into letters. */
        [0-9] word* | float [A-Za-z_] word* {
            bad_number(d, span(file, base, start, p), start, (size_t)(p - start));
            kind = TK_ILLEGAL; break;
        }

        "("   { kind = TK_LPAREN; break; }
        ")"   { kind = TK_RPAREN; break; }
        "["   { kind = TK_LBRACKET; break; }
        "]"   { kind = TK_RBRACKET; break; }
        "{"   { kind = TK_LBRACE; break; }
        "}"   { kind = TK_RBRACE; break; }
        ","   { kind = TK_COMMA; break; }
        ";"   { kind = TK_SEMI; break; }
        ":"   { kind = TK_COLON; break; }
        "."   { kind = TK_DOT; break; }
        "->"  { kind = TK_ARROW; break; }
        "@"   { kind = TK_AT; break; }
        "="   { kind = TK_ASSIGN; break; }
        "||"  { kind = TK_OROR; break; }
        "&&"  { kind = TK_ANDAND; break; }
        "|"   { kind = TK_PIPE; break; }
        "^"   { kind = TK_CARET; break; }
        "&"   { kind = TK_AMP; break; }
        "=="  { kind = TK_EQ; break; }
        "!="  { kind = TK_NE; break; }
        "<"   { kind = TK_LT; break; }
        "<="  { kind = TK_LE; break; }
        ">"   { kind = TK_GT; break; }
        ">="  { kind = TK_GE; break; }
        "<<"  { kind = TK_SHL; break; }
        ">>"  { kind = TK_SHR; break; }
        "+"   { kind = TK_PLUS; break; }
        "-"   { kind = TK_MINUS; break; }
        "*"   { kind = TK_STAR; break; }
        "/"   { kind = TK_SLASH; break; }
        "%"   { kind = TK_PERCENT; break; }
        "!"   { kind = TK_BANG; break; }
        "~"   { kind = TK_TILDE; break; }
        "+="  { kind = TK_PLUSEQ; break; }
        "-="  { kind = TK_MINUSEQ; break; }
        "*="  { kind = TK_STAREQ; break; }
        "/="  { kind = TK_SLASHEQ; break; }
        "%="  { kind = TK_PERCENTEQ; break; }
        "&="  { kind = TK_AMPEQ; break; }
        "|="  { kind = TK_PIPEEQ; break; }
        "^="  { kind = TK_CARETEQ; break; }
        "<<=" { kind = TK_SHLEQ; break; }
        ">>=" { kind = TK_SHREQ; break; }

        * { p = bad_char(d, file, base, start, end); kind = TK_ILLEGAL; break; }
        */
    }
    (void)q;
    *tok = span(file, base, start, p);
    *pos = (uint32_t)(p - base);
    return kind;
}

/* --emit=tokens: "LINE:COL KIND 'text'" per token, then "EOF". Line and
 * column are tracked incrementally so a large file stays linear. */
void lex_dump(blk_strbuf *out, blk_diag *d, int file) {
    if (file < 0 || file >= d->files.len) return;
    const char *text = d->files.data[file].text;
    uint32_t pos = 0, at = 0;
    int line = 1, col = 1;
    blk_loc tok;
    for (;;) {
        int kind = lex_scan(d, file, &pos, &tok);
        if (kind == 0) break;
        for (; at < tok.off; at++) {
            if (text[at] == '\n') line++, col = 1;
            else col++;
        }
        sb_printf(out, "%d:%d %s '", line, col, kind == TK_ILLEGAL ? "ERROR" : lex_token_name(kind));
        for (uint32_t i = 0; i < tok.len; i++) {
            unsigned char c = (unsigned char)text[tok.off + i];
            if (c < 0x20 || c == 0x7F) sb_printf(out, "\\x%02X", c);
            else sb_putc(out, (char)c);
        }
        sb_puts(out, "'\n");
    }
    sb_puts(out, "EOF\n");
}

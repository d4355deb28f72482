/* test_editor_files — the editor files under editors/ name exactly the
 * compiler's keywords (the lexer's token table), builtins (sema's table)
 * and type names (the dtypes, plus `str` for string const parameters), so
 * highlighting never drifts from the language:
 *   editors/vim/syntax/blk.vim             `syn keyword GROUP words` lines
 *   editors/vscode/syntaxes/blk.tmLanguage.json   "\\b(a|b|...)\\b" matches,
 *                                           grouped by the scope name above
 * and the VS Code package and language configuration exist (comments,
 * brackets). The repository is found from this file's path. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "front/parse.h"
#include "sema/types.h"

#include "../test_util.h"

const char *lex_token_spelling(int kind);

enum { KW, BUILTIN, TYPE, CONST_NAME, NCLASS };
static const char *const class_names[NCLASS] = {"keyword", "builtin", "type", "constant"};

#define MAXW 512
typedef struct {
    char *w[MAXW];
    int n;
} wordset;

static bool has(const wordset *s, const char *w, size_t n) {
    for (int k = 0; k < s->n; k++)
        if (strlen(s->w[k]) == n && strncmp(s->w[k], w, n) == 0) return true;
    return false;
}
static void add(wordset *s, const char *w, size_t n) {
    if (s->n < MAXW && !has(s, w, n)) {
        s->w[s->n] = malloc(n + 1);
        memcpy(s->w[s->n], w, n);
        s->w[s->n++][n] = 0;
    }
}

static char *read_repo_file(const char *root, const char *rel) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", root, rel);
    return test_read_file(path, NULL);
}

/* Words of the given delimited list: separated by any of `seps`. */
static void add_words(wordset *s, const char *p, const char *end, const char *seps) {
    while (p < end) {
        while (p < end && strchr(seps, *p)) p++;
        const char *q = p;
        while (q < end && !strchr(seps, *q)) q++;
        if (q > p) add(s, p, (size_t)(q - p));
        p = q;
    }
}

static int vim_class(const char *group, size_t n) {
    static const char *const g[][2] = {{"blkKeyword", "k"}, {"blkConditional", "k"}, {"blkRepeat", "k"},
                                       {"blkBoolean", "k"}, {"blkType", "t"}, {"blkBuiltin", "b"},
                                       {"blkConstant", "c"}};
    for (size_t k = 0; k < sizeof g / sizeof g[0]; k++)
        if (strlen(g[k][0]) == n && strncmp(g[k][0], group, n) == 0)
            return g[k][1][0] == 'k' ? KW : g[k][1][0] == 't' ? TYPE : g[k][1][0] == 'b' ? BUILTIN : CONST_NAME;
    return -1;
}

static void parse_vim(const char *text, wordset *got) {
    for (const char *line = text; line && *line;) {
        const char *eol = strchr(line, '\n');
        if (!eol) eol = line + strlen(line);
        if (strncmp(line, "syn keyword ", 12) == 0) {
            const char *g = line + 12, *ge = g;
            while (ge < eol && *ge != ' ') ge++;
            int c = vim_class(g, (size_t)(ge - g));
            if (c >= 0) add_words(&got[c], ge, eol, " ");
        }
        line = *eol ? eol + 1 : eol;
    }
}

/* The scope name just before a "match": "\\b(a|b)\\b" picks the class. */
static int tm_class(const char *scope) {
    if (!strncmp(scope, "keyword.declaration", 19) || !strncmp(scope, "keyword.control", 15) ||
        !strncmp(scope, "constant.language", 17))
        return KW;
    if (!strncmp(scope, "storage.type", 12)) return TYPE;
    if (!strncmp(scope, "support.function.builtin", 24)) return BUILTIN;
    if (!strncmp(scope, "constant.numeric.builtin", 24)) return CONST_NAME;
    return -1;
}

static void parse_tm(const char *text, wordset *got) {
    const char *scope = "";
    for (const char *p = text; (p = strstr(p, "\"")) != NULL; p++) {
        if (!strncmp(p, "\"name\": \"", 9)) scope = p + 9;
        if (!strncmp(p, "\"match\": \"\\\\b(", 14)) {
            const char *a = p + 14, *e = strstr(a, ")\\\\b\"");
            int c = tm_class(scope);
            if (e && c >= 0) add_words(&got[c], a, e, "|");
        }
    }
}

static void compare(const char *file, wordset *want, wordset *got) {
    for (int c = 0; c < NCLASS; c++) {
        for (int k = 0; k < want[c].n; k++)
            CHECK(has(&got[c], want[c].w[k], strlen(want[c].w[k])), "%s lacks the %s '%s'", file, class_names[c],
                  want[c].w[k]);
        for (int k = 0; k < got[c].n; k++)
            CHECK(has(&want[c], got[c].w[k], strlen(got[c].w[k])), "%s names '%s' as a %s; the compiler has none",
                  file, got[c].w[k], class_names[c]);
    }
}

static void free_sets(wordset *s) {
    for (int c = 0; c < NCLASS; c++)
        for (int k = 0; k < s[c].n; k++) free(s[c].w[k]);
}

int main(void) {
    /* the repository: this file is ROOT/tests/unit/test_editor_files.c */
    char root[4096];
    snprintf(root, sizeof root, "%s", __FILE__);
    char *cut = strstr(root, "tests/unit/test_editor_files.c");
    if (!cut) {
        fprintf(stderr, "cannot find the repository from %s\n", __FILE__);
        return 1;
    }
    *cut = 0;
    if (cut == root) strcpy(root, ".");

    wordset want[NCLASS] = {{{0}, 0}};
    for (int k = TK_KERNEL; k <= TK_NONE; k++) { /* spelt 'kernel' */
        const char *s = lex_token_spelling(k);
        add(&want[KW], s + 1, strlen(s) - 2);
    }
    for (int i = 0; sema_builtin_name(i); i++) add(&want[BUILTIN], sema_builtin_name(i), strlen(sema_builtin_name(i)));
    for (int t = 0; t < DT_COUNT; t++)
        if (t != DT_PTR) add(&want[TYPE], dtype_name((blk_dtype)t), strlen(dtype_name((blk_dtype)t)));
    add(&want[TYPE], "str", 3);
    add(&want[CONST_NAME], "inf", 3);
    add(&want[CONST_NAME], "nan", 3);
    sema_val v;
    CHECK(sema_builtin_value("inf", &v) && sema_builtin_value("nan", &v), "inf and nan are builtin values");

    static const char *const files[] = {"editors/vim/syntax/blk.vim", "editors/vscode/syntaxes/blk.tmLanguage.json"};
    for (int f = 0; f < 2; f++) {
        char *text = read_repo_file(root, files[f]);
        CHECK(text != NULL, "cannot read %s/%s", root, files[f]);
        if (!text) continue;
        wordset got[NCLASS] = {{{0}, 0}};
        if (f == 0) parse_vim(text, got);
        else parse_tm(text, got);
        compare(files[f], want, got);
        free_sets(got);
        free(text);
    }
    char *ft = read_repo_file(root, "editors/vim/ftdetect/blk.vim");
    CHECK(ft && strstr(ft, "*.blk") && strstr(ft, "setfiletype blk"), "editors/vim/ftdetect/blk.vim maps *.blk");
    free(ft);
    char *pkg = read_repo_file(root, "editors/vscode/package.json");
    CHECK(pkg && strstr(pkg, "\".blk\"") && strstr(pkg, "source.blk") && strstr(pkg, "language-configuration.json"),
          "editors/vscode/package.json registers .blk, the grammar and the configuration");
    free(pkg);
    char *lc = read_repo_file(root, "editors/vscode/language-configuration.json");
    CHECK(lc && strstr(lc, "\"lineComment\": \"//\"") && strstr(lc, "\"/*\"") && strstr(lc, "\"{\""),
          "editors/vscode/language-configuration.json: comments and brackets");
    free(lc);
    free_sets(want);
    return test_finish("test_editor_files");
}

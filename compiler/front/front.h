/* front.h — lexer and parser entry points (lex.re, parse.y, ast.c). */
#ifndef BLK_FRONT_H
#define BLK_FRONT_H

#include "ast.h"

/* Parse diag file `file` into an AST_MODULE. Syntax errors are reported to
 * diag (several per run where the parser can resynchronise at the next item
 * or statement); returns NULL if any were reported. Nesting deeper than
 * COMPILE_MAX_NESTING is an error, never a stack overflow. */
ast_node *parse_file(blk_arena *a, blk_diag *diag, int file);

/* --emit=tokens: one line per token, "LINE:COL KIND 'text'". Lexical errors
 * are reported to diag. */
void lex_dump(blk_strbuf *out, blk_diag *diag, int file);

#endif

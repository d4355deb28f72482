/* STUB — replaced by the lexer work. */
#include "front.h"
#include "parse.h"
ast_node *parse_file(blk_arena *a, blk_diag *diag, int file) { (void)a; diag_error(diag, LOC_NONE, "parser not implemented"); (void)file; return NULL; }
void lex_dump(blk_strbuf *out, blk_diag *diag, int file) { (void)out; (void)diag; (void)file; }

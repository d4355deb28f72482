/* STUB — replaced by the parser work. */
#include "ast.h"
const char *ast_kind_name(ast_kind k) { (void)k; return "?"; }

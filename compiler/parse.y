// STUB — replaced by the parser work.
%name Parser
%token_prefix TK_
%include {
#include <assert.h>
}
%token INT.
module ::= .

/* passes.h — the pass pipeline over Block IR. pipeline.c writes the list
 * out in one place; each pass's first comment states what it needs and what
 * it guarantees. */
#ifndef BLK_PASSES_H
#define BLK_PASSES_H

#include "../ir/ir.h"

typedef struct {
    blk_diag *diag;
    int opt_level;           /* 0: only what correctness needs (inline) */
    bool verify_each;        /* run the verifier after every pass */
    const char *dump_after;  /* pass name whose output is printed to dump */
    blk_strbuf *dump;
} pass_opts;

/* Returns 0, or the number of verifier problems (a compiler bug). */
int passes_run(ir_module *m, const pass_opts *o);
/* NULL-terminated list of pipeline pass names, in order. */
const char *const *pass_names(void);

/* the passes */
void pass_inline(ir_module *m);        /* inline every IR_CALL; drop device fns */
void pass_canonicalize(ir_module *m);  /* fold, CSE, DCE, algebraic identities */

#endif

/* pipeline.c — the pass pipeline, written out in one place (QBE's main.c).
 *
 *   sema ──► inline ──► canonicalize ──► (codegen passes, later)
 *
 * Before the first pass and after each one, the verifier runs when
 * verify_each is set (a failure is a compiler bug: the pipeline stops and
 * returns the problem count), and the IR is printed to o->dump when
 * o->dump_after names that point ("sema" = the input). A pass skipped at the
 * current optimisation level still has a dump point: -O0 with
 * ir-after=canonicalize prints the IR that inline left.
 */
#include "passes.h"

#include <string.h>

/* The list: name (pass_NAME is its entry point) and the lowest -O level
 * that runs it. */
#define PIPELINE(X)                                                         \
    X(inline, 0)       /* always: the interpreter and codegen know no calls */ \
    X(canonicalize, 1) /* fold, identities, CSE, DCE, constant ifs */

typedef struct {
    const char *name;
    void (*run)(ir_module *m);
    int min_opt_level;
} pass_entry;

static const pass_entry pipeline[] = {
#define X(name, level) {#name, pass_##name, level},
    PIPELINE(X)
#undef X
};
#define NUM_PASSES ((int)(sizeof pipeline / sizeof pipeline[0]))

static const char *const names[] = {
#define X(name, level) #name,
    PIPELINE(X)
#undef X
    NULL};

const char *const *pass_names(void) { return names; }

static void dump_if_asked(ir_module *m, const pass_opts *o, const char *point) {
    if (o->dump && o->dump_after && strcmp(o->dump_after, point) == 0) ir_print_module(o->dump, m);
}

int passes_run(ir_module *m, const pass_opts *o) {
    dump_if_asked(m, o, "sema");
    if (o->verify_each) {
        int problems = ir_verify_module(m, o->diag, "sema");
        if (problems) return problems;
    }
    for (int p = 0; p < NUM_PASSES; p++) {
        if (o->opt_level >= pipeline[p].min_opt_level) pipeline[p].run(m);
        /* Dump before verifying: a broken IR is what one wants to look at. */
        dump_if_asked(m, o, pipeline[p].name);
        if (o->verify_each) {
            int problems = ir_verify_module(m, o->diag, pipeline[p].name);
            if (problems) return problems;
        }
    }
    return 0;
}

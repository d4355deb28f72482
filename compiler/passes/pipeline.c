/* pipeline.c — the pass pipeline, written out in one place (QBE's main.c).
 *
 *   sema ──► inline ──► canonicalize ──► axisinfo ──► layout ──► (codegen)
 *
 * axisinfo and layout are analyses: codegen recomputes them per argument
 * specialisation; here they only provide dump points that print their facts
 * after the IR (ax_dump_module, lay_dump_module).
 *
 * Before the first pass and after each one, the verifier runs when
 * verify_each is set (a failure is a compiler bug: the pipeline stops and
 * returns the problem count), and the IR is printed to o->dump when
 * o->dump_after names that point ("sema" = the input). A pass skipped at the
 * current optimisation level still has a dump point: -O0 with
 * ir-after=canonicalize prints the IR that inline left.
 */
#include "passes.h"

#include "axisinfo.h"
#include "layout.h"

#include <string.h>

/* The list: name (pass_NAME is its entry point) and the lowest -O level
 * that runs it. */
#define PIPELINE(X)                                                         \
    X(inline, 0, NULL)       /* always: the interpreter and codegen know no calls */ \
    X(canonicalize, 1, NULL) /* fold, identities, CSE, DCE, constant ifs */          \
    X(axisinfo, 0, ax_dump_module) /* analysis: contiguity/divisibility/constancy */ \
    X(layout, 0, lay_dump_module)  /* analysis: distributed layouts */

typedef struct {
    const char *name;
    void (*run)(ir_module *m);
    int min_opt_level;
    void (*dump)(blk_strbuf *out, ir_module *m); /* NULL: print the IR */
} pass_entry;

static const pass_entry pipeline[] = {
#define X(name, level, dump) {#name, pass_##name, level, dump},
    PIPELINE(X)
#undef X
};
#define NUM_PASSES ((int)(sizeof pipeline / sizeof pipeline[0]))

static const char *const names[] = {
#define X(name, level, dump) #name,
    PIPELINE(X)
#undef X
    NULL};

const char *const *pass_names(void) { return names; }

static void dump_if_asked(ir_module *m, const pass_opts *o, const char *point,
                          void (*dump)(blk_strbuf *, ir_module *)) {
    if (!o->dump || !o->dump_after || strcmp(o->dump_after, point) != 0) return;
    if (dump) dump(o->dump, m);
    else ir_print_module(o->dump, m);
}

int passes_run(ir_module *m, const pass_opts *o) {
    dump_if_asked(m, o, "sema", NULL);
    if (o->verify_each) {
        int problems = ir_verify_module(m, o->diag, "sema");
        if (problems) return problems;
    }
    for (int p = 0; p < NUM_PASSES; p++) {
        if (o->opt_level >= pipeline[p].min_opt_level) pipeline[p].run(m);
        /* Dump before verifying: a broken IR is what one wants to look at. */
        dump_if_asked(m, o, pipeline[p].name, pipeline[p].dump);
        if (o->verify_each) {
            int problems = ir_verify_module(m, o->diag, pipeline[p].name);
            if (problems) return problems;
        }
    }
    return 0;
}

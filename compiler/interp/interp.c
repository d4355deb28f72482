/* STUB — replaced by the interpreter work. */
#include "interp.h"
blk_status interp_run(ir_func *f, const unsigned grid[3], const blk_arg *args, int nargs, FILE *print_out, blk_diag *diag) {
    (void)f; (void)grid; (void)args; (void)nargs; (void)print_out;
    diag_error(diag, LOC_NONE, "interpreter not implemented");
    return BLK_ERR_RUNTIME;
}

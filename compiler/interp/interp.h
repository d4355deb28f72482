/* interp.h — the reference interpreter over Block IR. */
#ifndef BLK_INTERP_H
#define BLK_INTERP_H

#include "../ir/ir.h"
#include "blk/blkc.h"

/* Run kernel f (after inlining: no IR_CALL remains) for every program
 * instance of grid, one after another, over host memory. Runtime failures
 * (an unmasked access outside a pointer argument's known size, a bad
 * argument) are reported as errors to diag at the op's location and return
 * BLK_ERR_RUNTIME; nothing aborts. */
blk_status interp_run(ir_func *f, const unsigned grid[3], const blk_arg *args, int nargs,
                      FILE *print_out, blk_diag *diag);

#endif

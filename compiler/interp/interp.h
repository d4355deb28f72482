/* interp.h — the reference interpreter over Block IR. */
#ifndef BLK_INTERP_H
#define BLK_INTERP_H

#include "../ir/ir.h"
#include "blk/blkc.h"

/* The step budget of one launch when nothing else is said: a step is one
 * instruction executed over one element of its result (a control-flow op or
 * a store counts one), so the budget bounds the work of a launch, not its
 * shape. 2^30 steps take ~40 s of an endless scalar loop on one core;
 * every kernel of the test suite takes under 2^26 (docs/reliability.md). */
#define INTERP_DEFAULT_STEPS (1ull << 30)

/* Run kernel f (after inlining: no IR_CALL remains) for every program
 * instance of grid, one after another, over host memory. Runtime failures
 * (an unmasked access outside a pointer argument's known size, a bad
 * argument, a failed device_assert, more than max_steps steps (0 = no limit)
 * over the whole grid) are reported as errors to diag at the op's location
 * (the innermost running loop's, for the step budget) and return
 * BLK_ERR_RUNTIME; nothing aborts. */
blk_status interp_run(ir_func *f, const unsigned grid[3], const blk_arg *args, int nargs, uint64_t max_steps,
                      FILE *print_out, blk_diag *diag);

#endif

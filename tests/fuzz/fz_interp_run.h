/* fz_interp_run.h — run one generated kernel on the interpreter, shared by
 * the fuzz_interp target and the interp_replay regression runner.
 *
 * Every generated program defines
 *   kernel fz(x: *f32, y: *f32, out: *f32, idx: *i32, iout: *i32, n: i32, s: f32, ...)
 * and runs over FZ_ELEMS-element host buffers whose sizes are passed to the
 * interpreter (blk_arg.size), so an out-of-bounds access is a BLK_ERR_RUNTIME,
 * never memory corruption.
 */
#ifndef BLK_FZ_INTERP_RUN_H
#define BLK_FZ_INTERP_RUN_H

#include <stddef.h>
#include <stdio.h>

#include "blk/blkc.h"

enum { FZ_ELEMS = 32 };

/* Build `text` and run kernel fz with n, s on a grid of `grid` programs.
 * Returns the blk_status of the first step that failed (BLK_OK if none).
 * print_out: where `print` goes; verbose: diagnostics to stderr. */
blk_status fz_run_source(const char *text, size_t len, int n, float s, unsigned grid,
                         FILE *print_out, int verbose);

#endif

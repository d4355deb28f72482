/* fuzz_frontend.c — libFuzzer target: bytes -> whole front end.
 *
 * load + blkc_build(c, NULL) (sema, IR, verifier, inline, canonicalize),
 * then the IR printer. The input is the main module's source verbatim, so a
 * crash input reproduces with `blkc --emit=ir FILE`. Imports resolve next to
 * "fuzz.blk" (the working directory) and in the repository's stdlib.
 */
#include <stddef.h>
#include <stdint.h>

#include "blk/blkc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    blkc_ctx *c = blkc_new();
    if (!c) return 0;
    blkc_set_stdlib_dir(c, BLK_STDLIB_DIR);
    if (blkc_load_source(c, "fuzz.blk", (const char *)data, size) == BLK_OK &&
        blkc_build(c, NULL) == BLK_OK)
        blkc_emit(c, "ir");
    (void)blkc_diagnostics(c);
    blkc_free(c);
    return 0;
}

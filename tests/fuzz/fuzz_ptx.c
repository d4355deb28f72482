/* fuzz_ptx.c — libFuzzer target: bytes -> the whole pipeline to PTX.
 *
 * load + blkc_build(c, NULL) (sema, IR, verifier, inline, canonicalize) +
 * blkc_emit(c, "ptx"): the GPU passes, the LLVM-C backend (module, libdevice
 * linking when a math function is used, O3, the NVPTX target machine) and the
 * blk-meta lines. Inputs of even length target sm_90a, odd lengths sm_80, so
 * the input bytes stay the main module's source verbatim and a crash input
 * reproduces with `blkc --arch sm_90a FILE` (or `--arch sm_80`). Imports
 * resolve next to "fuzz.blk" (the working directory) and in the stdlib.
 *
 * LLVM runs inside, so one execution costs milliseconds to a second (libdevice
 * is 470 KB of bitcode parsed per use): run it with a small -max_len and a
 * generous -timeout (tests/fuzz/campaign.sh: 2048 bytes, 60 s, since a
 * kernel at the 500000-instruction limit takes 10-25 s in LLVM).
 */
#include <stddef.h>
#include <stdint.h>

#include "blk/blkc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    blkc_ctx *c = blkc_new();
    if (!c) return 0;
    blkc_set_stdlib_dir(c, BLK_STDLIB_DIR);
    if (blkc_set_arch(c, (size & 1) ? "sm_80" : "sm_90a") == BLK_OK &&
        blkc_load_source(c, "fuzz.blk", (const char *)data, size) == BLK_OK && blkc_build(c, NULL) == BLK_OK)
        (void)blkc_emit(c, "ptx");
    (void)blkc_diagnostics(c);
    blkc_free(c);
    return 0;
}

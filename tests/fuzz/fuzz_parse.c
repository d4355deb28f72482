/* fuzz_parse.c — libFuzzer target: bytes -> lexer + parser + AST printer.
 *
 * The input is used verbatim as the source of the main module, so any crash
 * input reproduces with `blkc --emit=ast FILE` (or --emit=tokens).
 */
#include <stddef.h>
#include <stdint.h>

#include "blk/blkc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    blkc_ctx *c = blkc_new();
    if (!c) return 0;
    blkc_load_source(c, "fuzz.blk", (const char *)data, size);
    blkc_emit(c, "tokens");
    blkc_emit(c, "ast");
    (void)blkc_diagnostics(c);
    blkc_free(c);
    return 0;
}

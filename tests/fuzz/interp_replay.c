/* interp_replay.c — run a fuzz_interp-style kernel file on the interpreter.
 *
 *   interp_replay FILE.blk
 *
 * FILE defines kernel fz (see fz_interp_run.h); a line
 *   // FUZZ-INTERP n=N s=S grid=G
 * gives the run's parameters (defaults n=8 s=1.5 grid=1). Exit status 0 if
 * the compiler and interpreter returned any status (errors in the input are
 * fine), so only a crash, sanitizer report or hang fails the test.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fz_interp_run.h"

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: interp_replay FILE.blk\n");
        return 2;
    }
    FILE *f = fopen(argv[1], "rb");
    if (!f) { perror(argv[1]); return 2; }
    size_t cap = 1 << 16, len = 0;
    char *text = malloc(cap);
    size_t got;
    while (text && (got = fread(text + len, 1, cap - len, f)) > 0) {
        len += got;
        if (len == cap) text = realloc(text, cap *= 2);
    }
    fclose(f);
    if (!text) return 2;
    int n = 8, grid = 1;
    float s = 1.5f;
    char *h = NULL;
    for (size_t i = 0; i + 14 <= len && !h; i++)
        if (memcmp(text + i, "// FUZZ-INTERP", 14) == 0) h = text + i + 14;
    if (h) {
        char line[256];
        size_t k = 0;
        while (k + 1 < sizeof line && h + k < text + len && h[k] != '\n') { line[k] = h[k]; k++; }
        line[k] = 0;
        char *p;
        if ((p = strstr(line, "n="))) n = atoi(p + 2);
        if ((p = strstr(line, "s="))) s = strtof(p + 2, NULL);
        if ((p = strstr(line, "grid="))) grid = atoi(p + 5);
    }
    FILE *null = fopen("/dev/null", "w");
    blk_status st = fz_run_source(text, len, n, s, (unsigned)grid, null ? null : stdout, 1);
    if (null) fclose(null);
    free(text);
    printf("interp_replay: status %d\n", (int)st);
    return 0;
}

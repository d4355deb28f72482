/* gpu_ptx.c — gpu_check ptx (gpu_check.h): libblkc's PTX for a .blk file. */
#include "gpu_check.h"

/* ------------------------------------------------------------------ ptx */

/* gpu_check ptx FILE [--kernel K] [--arch A] [-D NAME=V]... [-o OUT]: libblkc's
 * PTX (with blk-meta lines) for a .blk file, so that the carried bundle can
 * compile kernels for bindings on the GPU machine without a second static
 * binary. */
int do_ptx(int argc, char **argv, const char *stdlib) {
    const char *file = NULL, *kernel = NULL, *arch = "sm_90a", *out = NULL;
    blkc_ctx *c = blkc_new();
    blkc_set_stdlib_dir(c, stdlib);
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--kernel") && v) kernel = v, i++;
        else if (!strcmp(a, "--arch") && v) arch = v, i++;
        else if (!strcmp(a, "-o") && v) out = v, i++;
        else if (!strcmp(a, "-I") && v) blkc_add_include_dir(c, v), i++;
        else if (!strcmp(a, "-D") && v) {
            char name[128];
            const char *eq = strchr(v, '=');
            if (!eq || (size_t)(eq - v) >= sizeof name) {
                fprintf(stderr, "gpu_check ptx: -D %s: expected NAME=VALUE\n", v);
                return 2;
            }
            memcpy(name, v, (size_t)(eq - v));
            name[eq - v] = 0;
            if (blkc_define(c, name, eq + 1) != BLK_OK) {
                fprintf(stderr, "%s", blkc_diagnostics(c));
                return 2;
            }
            i++;
        } else if (a[0] != '-' && !file) file = a;
        else {
            fprintf(stderr, "usage: gpu_check ptx FILE.blk [--kernel K] [--arch sm_90a|sm_90|sm_80] [-D NAME=V]... "
                            "[-I DIR] [-o OUT.ptx]\n");
            return 2;
        }
    }
    if (!file || blkc_set_arch(c, arch) != BLK_OK) {
        fprintf(stderr, "gpu_check ptx: %s\n", file ? blkc_diagnostics(c) : "no input file");
        return 2;
    }
    const char *ptx = NULL;
    if (blkc_load_file(c, file) == BLK_OK && blkc_build(c, kernel) == BLK_OK) ptx = blkc_emit(c, "ptx");
    fputs(blkc_diagnostics(c), stderr);
    if (!ptx) return 1;
    FILE *f = out ? fopen(out, "w") : stdout;
    if (!f || fputs(ptx, f) < 0 || (out && fclose(f))) {
        fprintf(stderr, "gpu_check ptx: cannot write %s\n", out ? out : "stdout");
        return 1;
    }
    blkc_free(c);
    return 0;
}

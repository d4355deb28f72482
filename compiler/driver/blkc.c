/* blkc — the blk compiler command line, over libblkc (blk/blkc.h).
 *
 *   blkc FILE.blk [-o OUT] [--emit=KIND] [--arch ARCH] [-D NAME=VALUE]...
 *        [-I DIR]... [-O0..3] [--kernel NAME] [--variant SPEC]...
 *        [--no-default-variants] [-Werror] [--max-errors=N] [--no-verify] [-lineinfo]
 *        [-R | -Rpass-missed]
 *
 * Exit status: 0 success, 1 errors in the input, 2 bad command line.
 * Diagnostics go to stderr; the requested output to OUT (stdout if OUT is
 * "-" or absent).
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blk/blkc.h"

static const char usage[] =
    "usage: blkc FILE.blk [options]\n"
    "  -o FILE               write output to FILE ('-' = stdout, the default)\n"
    "  --emit=KIND           tokens | ast | ir | ir-after=PASS | ptx | llvm | meta | meta-front\n"
    "                        (PASS: sema, inline, canonicalize, axisinfo, layout);\n"
    "                        default: ptx when OUT ends in .ptx, else ir\n"
    "  --arch ARCH           GPU target: sm_90a (default), sm_90, sm_80\n"
    "  -D NAME=VALUE         value of a kernel const parameter (int, float, true/false)\n"
    "  -I DIR                add DIR to the import search path\n"
    "  -O0 .. -O3            optimisation level (default -O2)\n"
    "  --kernel NAME         build only kernel NAME\n"
    "  --variant SPEC        one more PTX entry per kernel: [KERNEL:]NAME=d16|eq1|-,...\n"
    "                        (e.g. stride=eq1,n=d16; parameters not named assume nothing)\n"
    "  --no-default-variants only the --variant entries (default: also all-d16 and fallback)\n"
    "  -Werror               treat warnings as errors\n"
    "  -lineinfo             .file/.loc line info in the PTX (Nsight Compute source view)\n"
    "  -R, -Rpass-missed     remarks: each global access's width and what limited it (-Rpass-missed: the\n"
    "                        narrower ones only)\n"
    "  --max-errors=N        stop after N errors (default 20)\n"
    "  --no-verify           do not run the IR verifier between passes\n"
    "  --version, --help\n";

static int usage_error(const char *fmt, const char *arg) {
    fprintf(stderr, "blkc: error: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\n(run 'blkc --help' for usage)\n");
    return 2;
}

/* Option value either attached ("-DX=1", "--emit=ir") or the next argument. */
static const char *opt_value(int argc, char **argv, int *i, const char *opt) {
    size_t n = strlen(opt);
    const char *a = argv[*i];
    if (a[n] == '=' && opt[0] == '-' && opt[1] == '-') return a + n + 1;
    if (a[n] && !(opt[0] == '-' && opt[1] == '-')) return a + n;
    if (a[n]) return NULL;
    if (*i + 1 >= argc) return NULL;
    return argv[++*i];
}

int main(int argc, char **argv) {
    const char *input = NULL, *output = NULL, *emit = NULL, *kernel = NULL, *arch = NULL;
    int opt = 2, max_errors = 20;
    int werror = 0, verify = 1;
    blkc_ctx *c = blkc_new();
    if (!c) { fprintf(stderr, "blkc: error: out of memory\n"); return 1; }
    int status = 0;

    for (int i = 1; i < argc && !status; i++) {
        const char *a = argv[i], *v;
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            fputs(usage, stdout);
            blkc_free(c);
            return 0;
        } else if (strcmp(a, "--version") == 0) {
            printf("blkc %s\n", blkc_version());
            blkc_free(c);
            return 0;
        } else if (strncmp(a, "-o", 2) == 0 && (a[2] == 0 || a[1] == 'o')) {
            if (!(v = opt_value(argc, argv, &i, "-o"))) status = usage_error("%s needs a file name", "-o");
            else output = v;
        } else if (strncmp(a, "--emit", 6) == 0) {
            if (!(v = opt_value(argc, argv, &i, "--emit"))) status = usage_error("%s needs a kind", "--emit");
            else emit = v;
        } else if (strncmp(a, "--arch", 6) == 0) {
            if (!(v = opt_value(argc, argv, &i, "--arch"))) status = usage_error("%s needs an arch name", "--arch");
            else arch = v;
        } else if (strncmp(a, "--kernel", 8) == 0) {
            if (!(v = opt_value(argc, argv, &i, "--kernel"))) status = usage_error("%s needs a name", "--kernel");
            else kernel = v;
        } else if (strncmp(a, "--variant", 9) == 0 && (a[9] == 0 || a[9] == '=')) {
            if (!(v = opt_value(argc, argv, &i, "--variant"))) status = usage_error("%s needs a spec", "--variant");
            else if (blkc_add_variant(c, v) != BLK_OK) status = 2;
        } else if (strcmp(a, "--no-default-variants") == 0) {
            blkc_set_default_variants(c, 0);
        } else if (strncmp(a, "--max-errors", 12) == 0) {
            if (!(v = opt_value(argc, argv, &i, "--max-errors")) || atoi(v) <= 0)
                status = usage_error("%s needs a positive number", "--max-errors");
            else max_errors = atoi(v);
        } else if (strncmp(a, "-D", 2) == 0) {
            if (!(v = opt_value(argc, argv, &i, "-D"))) { status = usage_error("%s needs NAME=VALUE", "-D"); break; }
            const char *eq = strchr(v, '=');
            if (!eq) { status = usage_error("-D %s: expected NAME=VALUE", v); break; }
            char name[256];
            size_t n = (size_t)(eq - v);
            if (n >= sizeof name) { status = usage_error("-D %s: name too long", v); break; }
            memcpy(name, v, n);
            name[n] = 0;
            if (blkc_define(c, name, eq + 1) != 0) status = 2;
        } else if (strncmp(a, "-I", 2) == 0) {
            if (!(v = opt_value(argc, argv, &i, "-I"))) status = usage_error("%s needs a directory", "-I");
            else blkc_add_include_dir(c, v);
        } else if (a[0] == '-' && a[1] == 'O' && a[2] >= '0' && a[2] <= '3' && !a[3]) {
            opt = a[2] - '0';
        } else if (strcmp(a, "-Werror") == 0) {
            werror = 1;
        } else if (strcmp(a, "-lineinfo") == 0) {
            blkc_set_lineinfo(c, 1);
        } else if (strcmp(a, "-R") == 0 || strcmp(a, "-Rpass-missed") == 0) {
            blkc_set_remarks(c, a[2] ? 2 : 1);
        } else if (strcmp(a, "--no-verify") == 0) {
            verify = 0;
        } else if (a[0] == '-' && a[1]) {
            status = usage_error("unknown option '%s'", a);
        } else if (input) {
            status = usage_error("more than one input file ('%s')", a);
        } else {
            input = a;
        }
    }
    if (!status && !input) status = usage_error("%s", "no input file");
    if (status) {
        fputs(blkc_diagnostics(c), stderr);
        blkc_free(c);
        return status;
    }

    if (!emit) {
        size_t ol = output ? strlen(output) : 0;
        emit = ol > 4 && strcmp(output + ol - 4, ".ptx") == 0 ? "ptx" : "ir";
    }
    if (arch && blkc_set_arch(c, arch) != BLK_OK) {
        fputs(blkc_diagnostics(c), stderr);
        blkc_free(c);
        return 2;
    }
    blkc_set_opt_level(c, opt);
    blkc_set_max_errors(c, max_errors);
    blkc_set_verify_each(c, verify);
    if (werror) blkc_set_werror(c, 1);
    bool front_only = strcmp(emit, "tokens") == 0 || strcmp(emit, "ast") == 0;
    bool after = strncmp(emit, "ir-after=", 9) == 0;
    bool backend = strcmp(emit, "ptx") == 0 || strcmp(emit, "llvm") == 0 || strcmp(emit, "meta") == 0 ||
                   strcmp(emit, "meta-front") == 0;
    if (!front_only && !after && !backend && strcmp(emit, "ir") != 0) {
        blkc_free(c);
        return usage_error("unknown --emit kind '%s' (tokens, ast, ir, ir-after=PASS, ptx, llvm, meta, meta-front)",
                           emit);
    }
    if (after) blkc_set_dump_after(c, emit + 9);

    blk_status s = blkc_load_file(c, input);
    const char *text = NULL;
    if (front_only && strcmp(emit, "tokens") == 0) {
        /* tokens are useful precisely when the parse failed */
        text = blkc_emit(c, emit);
    } else if (s == BLK_OK) {
        if (front_only) text = blkc_emit(c, emit);
        else if ((s = blkc_build(c, kernel)) == BLK_OK) text = blkc_emit(c, emit);
    }
    fputs(blkc_diagnostics(c), stderr);
    int rc = 0;
    if (s == BLK_ERR_USAGE) rc = 2;
    else if (s != BLK_OK || blkc_error_count(c) > 0) rc = 1;
    /* Tokens are printed even when the parse failed: that is when they help. */
    if (text && (rc == 0 || (front_only && emit[0] == 't' && s != BLK_ERR_IO))) {
        FILE *out = stdout;
        if (output && strcmp(output, "-") != 0 && !(out = fopen(output, "w"))) {
            fprintf(stderr, "blkc: error: cannot write '%s'\n", output);
            rc = 1;
        } else {
            fputs(text, out);
            if (out != stdout && fclose(out) != 0) {
                fprintf(stderr, "blkc: error: cannot write '%s'\n", output);
                rc = 1;
            }
        }
    }
    blkc_free(c);
    return rc;
}

/* blkc — the blk compiler command line, over libblkc (blk/blkc.h).
 *
 *   blkc FILE.blk|- [-o OUT] [--emit=KIND] [--arch ARCH | -arch=ARCH]
 *        [-D NAME=VALUE]... [-I DIR]... [-O0..3] [--kernel NAME]
 *        [--variant SPEC]... [--no-default-variants] [-Werror]
 *        [--max-errors=N] [--no-verify] [-lineinfo] [-R | -Rpass-missed]
 *
 * Exit status: 0 success, 1 errors in the input, 2 bad command line.
 * Diagnostics go to stderr; the requested output to OUT (stdout if OUT is
 * "-" or absent). The options are one table (options[]): the parser, --help
 * and the bash completion (--completion=bash) are all made from it, so they
 * cannot disagree.
 */
#define _GNU_SOURCE /* mkstemps */
#include <errno.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "blk/blkc.h"

extern char **environ;

typedef enum {
    OPT_OUTPUT, OPT_EMIT, OPT_ARCH, OPT_DEFINE, OPT_INCLUDE, OPT_OPT, OPT_KERNEL, OPT_VARIANT,
    OPT_NO_DEFAULT_VARIANTS, OPT_WERROR, OPT_LINEINFO, OPT_REMARKS, OPT_MAX_ERRORS, OPT_NO_VERIFY, OPT_TIME_PHASES, OPT_COMPLETION,
    OPT_VERSION, OPT_HELP,
} opt_id;

/* One command-line option. names: spellings separated by '|'; a single-dash
 * one-letter name ("-o", "-D") also takes its value attached ("-DX=1"), any
 * name taking a value also takes it after '=' ("--emit=ir", "-arch=sm_90a")
 * or as the next argument. complete: what bash completes the value with
 * (words, or "@file", "@dir"). */
typedef struct {
    opt_id id;
    const char *names;
    const char *value;      /* metavariable, NULL for a flag */
    const char *complete;
    const char *help;
} blkc_option;

static const blkc_option options[] = {
    {OPT_OUTPUT, "-o", "FILE", "@file",
     "write output to FILE ('-' = stdout, the default); FILE.ptx means --emit=ptx,\n"
     "FILE.cubin means --emit=cubin"},
    {OPT_EMIT, "--emit", "KIND", "tokens ast ir ir-after= ptx cubin llvm meta meta-front autotune",
     "tokens | ast | ir | ir-after=PASS | ptx | cubin | llvm | meta | meta-front |\n"
     "autotune (the @autotune configs, for the runtime's autotuner)\n"
     "(default: from -o's extension, else ir); cubin runs ptxas ($PTXAS, PATH,\n"
     "/usr/local/cuda/bin) on the PTX"},
    {OPT_ARCH, "--arch|-arch", "ARCH", "sm_90a sm_90 sm_80",
     "GPU target: sm_90a (default), sm_90, sm_80 (newer GPUs run sm_90 PTX,\n"
     "sm_8x GPUs sm_80 PTX; other names are refused with this list)"},
    {OPT_DEFINE, "-D", "NAME=VALUE", NULL,
     "value of a kernel const parameter (int, float, true/false); a NAME that\n"
     "no kernel has is an error"},
    {OPT_INCLUDE, "-I", "DIR", "@dir", "add DIR to the import search path"},
    {OPT_OPT, "-O0|-O1|-O2|-O3", NULL, NULL,
     "optimisation level (default -O2). -O1, -O2: LLVM's O2 passes less those\n"
     "blk's IR never needs, Default codegen (the runtime JIT's pipeline, fast to\n"
     "compile); -O3: LLVM's default<O3> and Aggressive codegen (slower to\n"
     "compile); -O0: no LLVM middle end"},
    {OPT_KERNEL, "--kernel", "NAME", NULL, "build only kernel NAME"},
    {OPT_VARIANT, "--variant", "SPEC", NULL,
     "one more PTX entry per kernel: [KERNEL:]NAME=d16|eq1|-,...\n"
     "(e.g. stride=eq1,n=d16; parameters not named assume nothing)"},
    {OPT_NO_DEFAULT_VARIANTS, "--no-default-variants", NULL, NULL,
     "only the --variant entries (default: also all-d16 and fallback)"},
    {OPT_WERROR, "-Werror", NULL, NULL, "treat warnings as errors"},
    {OPT_LINEINFO, "-lineinfo", NULL, NULL, ".file/.loc line info in the PTX (Nsight Compute source view)"},
    {OPT_REMARKS, "-R|-Rpass-missed", NULL, NULL,
     "remarks: each global access's width and what limited it, each dot's\n"
     "tensor-core path and why not wgmma (-Rpass-missed: the narrower accesses\n"
     "and the dots that missed wgmma only)"},
    {OPT_MAX_ERRORS, "--max-errors", "N", NULL, "stop after N errors (default 20)"},
    {OPT_NO_VERIFY, "--no-verify", NULL, NULL, "do not run the IR verifier between passes"},
    {OPT_TIME_PHASES, "--time-phases", NULL, NULL,
     "print each compile phase's wall time to stderr (parse, sema, passes, the\n"
     "backend's lower, verify, libdevice, llvm-opt, llvm-emit)"},
    {OPT_COMPLETION, "--completion", "SHELL", "bash", "print the completion script for SHELL (bash) and exit"},
    {OPT_VERSION, "--version", NULL, NULL, "print the version and exit"},
    {OPT_HELP, "--help|-h", NULL, NULL, "print this help and exit"},
};
#define NUM_OPTIONS ((int)(sizeof options / sizeof options[0]))

static void print_help(void) {
    printf("usage: blkc FILE.blk [options]      ('-' as FILE reads the source from stdin)\n");
    for (int i = 0; i < NUM_OPTIONS; i++) {
        const blkc_option *o = &options[i];
        char head[64];
        snprintf(head, sizeof head, "%s%s%s", o->names, o->value ? " " : "", o->value ? o->value : "");
        for (char *p = head; *p; p++)
            if (*p == '|') *p = ',';
        printf("  %-24s", head);
        if (strlen(head) > 24) printf("\n  %-24s", "");
        for (const char *h = o->help; *h; h++) {
            putchar(*h);
            if (*h == '\n') printf("  %-24s", "");
        }
        putchar('\n');
    }
    /* The passes come from the pipeline table itself (blkc_pass_names). */
    printf("\npasses (for --emit=ir-after=PASS), in pipeline order:\n  sema (before any pass)");
    for (const char *const *p = blkc_pass_names(); *p; p++) printf(", %s", *p);
    printf("\n\nexit status: 0 ok, 1 errors in the input, 2 bad command line\n");
}

/* Every spelling of every option, one word each, for completion. */
static void print_words(bool with_values_only, const char *sep) {
    const char *s = "";
    for (int i = 0; i < NUM_OPTIONS; i++) {
        if (with_values_only && !options[i].value) continue;
        const char *n = options[i].names;
        while (*n) {
            size_t len = strcspn(n, "|");
            printf("%s%.*s", s, (int)len, n);
            s = sep;
            n += len + (n[len] == '|');
        }
    }
}

static void print_bash_completion(void) {
    printf("# bash completion for blkc (generated by 'blkc --completion=bash' from its option table)\n"
           "_blkc() {\n"
           "    local cur=\"${COMP_WORDS[COMP_CWORD]}\" prev=\"${COMP_WORDS[COMP_CWORD-1]}\"\n"
           "    # '--emit=ir' arrives as '--emit' '=' 'ir' (= is a word break)\n"
           "    if [ \"$cur\" = = ]; then cur=; else [ \"$prev\" = = ] && prev=\"${COMP_WORDS[COMP_CWORD-2]}\"; fi\n"
           "    case \"$prev\" in\n");
    for (int i = 0; i < NUM_OPTIONS; i++) {
        const blkc_option *o = &options[i];
        if (!o->value) continue;
        printf("        %s)\n            ", o->names);
        if (!o->complete) printf("return 0;;\n");
        else if (strcmp(o->complete, "@file") == 0) printf("COMPREPLY=($(compgen -f -- \"$cur\")); return 0;;\n");
        else if (strcmp(o->complete, "@dir") == 0) printf("COMPREPLY=($(compgen -d -- \"$cur\")); return 0;;\n");
        else printf("COMPREPLY=($(compgen -W \"%s\" -- \"$cur\")); return 0;;\n", o->complete);
    }
    printf("    esac\n"
           "    if [[ \"$cur\" == -* ]]; then\n"
           "        COMPREPLY=($(compgen -W \"");
    print_words(false, " ");
    printf("\" -- \"$cur\"))\n"
           "    else\n"
           "        COMPREPLY=($(compgen -f -X '!*.blk' -- \"$cur\") $(compgen -d -- \"$cur\"))\n"
           "    fi\n"
           "}\n"
           "complete -o filenames -F _blkc blkc\n");
}

static int usage_error(const char *fmt, const char *arg) {
    fprintf(stderr, "blkc: error: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\n(run 'blkc --help' for usage)\n");
    return 2;
}

/* Match argv[*i] against the table: the option, and its value (NULL for a
 * flag) in *value. Returns NULL for no option; *missing when the value is
 * absent. */
static const blkc_option *match(int argc, char **argv, int *i, const char **value, bool *missing) {
    const char *a = argv[*i];
    *value = NULL;
    *missing = false;
    for (int k = 0; k < NUM_OPTIONS; k++) {
        const blkc_option *o = &options[k];
        for (const char *n = o->names; *n;) {
            size_t len = strcspn(n, "|");
            if (strncmp(a, n, len) == 0) {
                const char *rest = a + len;
                if (!o->value && !*rest) return o;
                if (o->value) {
                    if (*rest == '=') { *value = rest + 1; return o; }
                    if (*rest && len == 2) { *value = rest; return o; } /* -DX=1, -Idir, -ofile */
                    if (!*rest) {
                        if (*i + 1 >= argc) *missing = true;
                        else *value = argv[++*i];
                        return o;
                    }
                }
            }
            n += len + (n[len] == '|');
        }
    }
    return NULL;
}

static bool ends_with(const char *s, const char *suffix) {
    size_t n = s ? strlen(s) : 0, m = strlen(suffix);
    return n > m && strcmp(s + n - m, suffix) == 0;
}

/* The ptxas to run: $PTXAS, else ptxas on PATH, else the CUDA default. */
static const char *find_ptxas(char *buf, size_t cap) {
    const char *env = getenv("PTXAS");
    if (env && *env) return access(env, X_OK) == 0 ? env : NULL;
    const char *path = getenv("PATH");
    while (path && *path) {
        size_t len = strcspn(path, ":");
        if (len && (size_t)snprintf(buf, cap, "%.*s/ptxas", (int)len, path) < cap && access(buf, X_OK) == 0)
            return buf;
        path += len + (path[len] == ':');
    }
    return access("/usr/local/cuda/bin/ptxas", X_OK) == 0 ? "/usr/local/cuda/bin/ptxas" : NULL;
}

/* PTX text -> a cubin at `output` through ptxas. Returns the exit status. */
static int write_cubin(const char *ptx, const char *arch, const char *output) {
    char buf[4096];
    const char *ptxas = find_ptxas(buf, sizeof buf);
    if (!ptxas) {
        fprintf(stderr, "blkc: error: a cubin needs ptxas (the CUDA toolkit), not found in $PTXAS, PATH or "
                        "/usr/local/cuda/bin; write PTX instead (-o FILE.ptx): the driver compiles it at load\n");
        return 1;
    }
    if (!output || strcmp(output, "-") == 0) {
        fprintf(stderr, "blkc: error: a cubin is binary: name the output file with -o FILE.cubin\n");
        return 2;
    }
    char tmp[] = "/tmp/blkc-XXXXXX.ptx";
    int fd = mkstemps(tmp, 4);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!f || fputs(ptx, f) < 0 || fclose(f) != 0) {
        fprintf(stderr, "blkc: error: cannot write a temporary PTX file (%s)\n", strerror(errno));
        if (fd >= 0) unlink(tmp);
        return 1;
    }
    char archopt[64];
    snprintf(archopt, sizeof archopt, "-arch=%s", arch);
    char *args[] = {(char *)ptxas, archopt, tmp, "-o", (char *)output, NULL};
    pid_t pid;
    int status = 0, rc = posix_spawn(&pid, ptxas, NULL, NULL, args, environ);
    if (rc == 0 && waitpid(pid, &status, 0) < 0) rc = errno;
    unlink(tmp);
    if (rc) {
        fprintf(stderr, "blkc: error: cannot run %s: %s\n", ptxas, strerror(rc));
        return 1;
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        fprintf(stderr, "blkc: error: %s failed on the generated PTX (a compiler bug: please report it)\n", ptxas);
        unlink(output);
        return 1;
    }
    return 0;
}

/* All of standard input (for the input file "-"). */
static char *read_stdin(size_t *len) {
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    while (buf) {
        size_t got = fread(buf + n, 1, cap - n, stdin);
        n += got;
        if (n < cap) break;
        char *more = realloc(buf, cap * 2);
        if (!more) { free(buf); return NULL; }
        buf = more, cap *= 2;
    }
    if (buf && ferror(stdin)) { free(buf); return NULL; }
    *len = n;
    return buf;
}

int main(int argc, char **argv) {
    const char *input = NULL, *output = NULL, *emit = NULL, *kernel = NULL, *arch = NULL;
    int opt = 2, max_errors = 20;
    int werror = 0, verify = 1;
    bool time_phases = false;
    blkc_ctx *c = blkc_new();
    if (!c) { fprintf(stderr, "blkc: error: out of memory\n"); return 1; }
    int status = 0;

    for (int i = 1; i < argc && !status; i++) {
        const char *a = argv[i], *v;
        bool missing;
        const blkc_option *o = a[0] == '-' && a[1] ? match(argc, argv, &i, &v, &missing) : NULL;
        if (!o) {
            if (a[0] == '-' && a[1]) status = usage_error("unknown option '%s'", a);
            else if (input) status = usage_error("more than one input file ('%s')", a);
            else input = a;
            continue;
        }
        if (missing) {
            char what[80];
            snprintf(what, sizeof what, "%%s needs %s", o->value);
            status = usage_error(what, a);
            break;
        }
        switch (o->id) {
        case OPT_HELP: print_help(); blkc_free(c); return 0;
        case OPT_VERSION: printf("blkc %s\n", blkc_version()); blkc_free(c); return 0;
        case OPT_COMPLETION:
            if (strcmp(v, "bash") != 0) { status = usage_error("--completion: only 'bash' is known, not '%s'", v); break; }
            print_bash_completion();
            blkc_free(c);
            return 0;
        case OPT_OUTPUT: output = v; break;
        case OPT_EMIT: emit = v; break;
        case OPT_ARCH: arch = v; break;
        case OPT_KERNEL: kernel = v; break;
        case OPT_VARIANT: if (blkc_add_variant(c, v) != BLK_OK) status = 2; break;
        case OPT_NO_DEFAULT_VARIANTS: blkc_set_default_variants(c, 0); break;
        case OPT_MAX_ERRORS:
            if (atoi(v) <= 0) status = usage_error("%s needs a positive number", "--max-errors");
            else max_errors = atoi(v);
            break;
        case OPT_DEFINE: {
            const char *eq = strchr(v, '=');
            if (!eq) { status = usage_error("-D %s: expected NAME=VALUE", v); break; }
            char name[256];
            size_t n = (size_t)(eq - v);
            if (n >= sizeof name) { status = usage_error("-D %s: name too long", v); break; }
            memcpy(name, v, n);
            name[n] = 0;
            if (blkc_define(c, name, eq + 1) != 0) status = 2;
            break;
        }
        case OPT_INCLUDE: blkc_add_include_dir(c, v); break;
        case OPT_OPT: opt = a[2] - '0'; break;
        case OPT_WERROR: werror = 1; break;
        case OPT_LINEINFO: blkc_set_lineinfo(c, 1); break;
        case OPT_REMARKS: blkc_set_remarks(c, a[2] ? 2 : 1); break;
        case OPT_NO_VERIFY: verify = 0; break;
        case OPT_TIME_PHASES: time_phases = true; break;
        }
    }
    if (!status && !input) status = usage_error("%s", "no input file");
    if (status) {
        fputs(blkc_diagnostics(c), stderr);
        blkc_free(c);
        return status;
    }

    if (!emit) emit = ends_with(output, ".ptx") ? "ptx" : ends_with(output, ".cubin") ? "cubin" : "ir";
    bool cubin = strcmp(emit, "cubin") == 0;
    if (!cubin && ends_with(output, ".cubin")) {
        blkc_free(c);
        return usage_error("-o *.cubin holds a cubin, not --emit=%s output (use --emit=cubin or another name)", emit);
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
    bool backend = strcmp(emit, "ptx") == 0 || cubin || strcmp(emit, "llvm") == 0 || strcmp(emit, "meta") == 0 ||
                   strcmp(emit, "meta-front") == 0 || strcmp(emit, "autotune") == 0;
    if (!front_only && !after && !backend && strcmp(emit, "ir") != 0) {
        blkc_free(c);
        return usage_error("unknown --emit kind '%s' (tokens, ast, ir, ir-after=PASS, ptx, cubin, llvm, meta, meta-front, autotune)",
                           emit);
    }
    if (after) blkc_set_dump_after(c, emit + 9);

    blk_status s;
    if (strcmp(input, "-") == 0) {
        size_t len = 0;
        char *text = read_stdin(&len);
        if (!text) {
            fprintf(stderr, "blkc: error: cannot read the source from standard input\n");
            blkc_free(c);
            return 1;
        }
        s = blkc_load_source(c, "<stdin>", text, len);
        free(text);
    } else {
        s = blkc_load_file(c, input);
    }
    const char *text = NULL;
    if (front_only && strcmp(emit, "tokens") == 0) {
        /* tokens are useful precisely when the parse failed */
        text = blkc_emit(c, emit);
    } else if (s == BLK_OK) {
        if (front_only) text = blkc_emit(c, emit);
        else if ((s = blkc_build(c, kernel)) == BLK_OK) text = blkc_emit(c, cubin ? "ptx" : emit);
    }
    fputs(blkc_diagnostics(c), stderr);
    int rc = 0;
    if (s == BLK_ERR_USAGE) rc = 2;
    else if (s != BLK_OK || blkc_error_count(c) > 0) rc = 1;
    if (cubin && text && rc == 0) {
        rc = write_cubin(text, arch ? arch : "sm_90a", output);
        text = NULL;
    }
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
    if (time_phases && rc == 0) fputs(blkc_emit(c, "times"), stderr);
    blkc_free(c);
    return rc;
}

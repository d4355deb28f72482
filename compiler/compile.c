/* compile.c — the public libblkc API (blkc.h) over the stages in compile.h. */
#include "compile.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "front/front.h"
#include "interp/interp.h"
#include "passes/passes.h"
#include "sema/sema.h"

#ifndef BLK_VERSION
#define BLK_VERSION "0.0.0"
#endif

const char *blkc_version(void) { return BLK_VERSION; }

const char *const *blkc_pass_names(void) { return pass_names(); }

blkc_ctx *blkc_new(void) {
    blk_arena *a = arena_new();
    if (!a) return NULL;
    blkc_ctx *c = ARENA_NEW(a, blkc_ctx);
    if (!c) { arena_free(a); return NULL; }
    c->arena = a;
    diag_init(&c->diag, a);
    c->stdlib_dir = compile_stdlib_dir();
    c->opt_level = 2;
    c->verify_each = true;
    sb_init(&c->emit);
    sb_init(&c->sema_ir);
    sb_init(&c->pass_dumps);
    c->target = tgt_default();
    cg_output_init(&c->cg);
    return c;
}

void blkc_free(blkc_ctx *c) {
    if (!c) return;
    diag_fini(&c->diag);
    sb_free(&c->emit);
    sb_free(&c->sema_ir);
    sb_free(&c->pass_dumps);
    cg_output_free(&c->cg);
    arena_free(c->arena);
}

/* The status of a public call during which an allocation failed (since
 * `before`, blk_alloc_failures): BLK_ERR_NOMEM whatever it managed, since
 * what it built may be truncated. */
static blk_status nomem(blkc_ctx *c, long before, blk_status s) {
    if (blk_alloc_failures() == before) return s;
    diag_error(&c->diag, LOC_NONE, "out of memory");
    return BLK_ERR_NOMEM;
}

void blkc_add_include_dir(blkc_ctx *c, const char *dir) {
    VEC_PUSH(c->arena, c->include_dirs, arena_strdup(c->arena, dir));
}
void blkc_set_stdlib_dir(blkc_ctx *c, const char *dir) { c->stdlib_dir = arena_strdup(c->arena, dir); }
void blkc_set_opt_level(blkc_ctx *c, int level) { c->opt_level = level < 0 ? 0 : level > 3 ? 3 : level; }
void blkc_set_verify_each(blkc_ctx *c, int on) { c->verify_each = on != 0; }
void blkc_set_lineinfo(blkc_ctx *c, int on) { c->cg_flags = on ? c->cg_flags | CG_LINEINFO : c->cg_flags & ~(unsigned)CG_LINEINFO; }
void blkc_set_remarks(blkc_ctx *c, int level) {
    c->cg_flags &= ~(unsigned)(CG_REMARKS | CG_REMARKS_MISSED);
    if (level == 1) c->cg_flags |= CG_REMARKS;
    if (level == 2) c->cg_flags |= CG_REMARKS_MISSED;
}
void blkc_set_max_errors(blkc_ctx *c, int n) { c->diag.max_errors = n > 0 ? n : 1; }
void blkc_set_werror(blkc_ctx *c, int on) { c->diag.werror = on != 0; }
blk_status blkc_set_arch(blkc_ctx *c, const char *arch) {
    const tgt_target *t = tgt_lookup(arch);
    if (!t) {
        diag_error(&c->diag, LOC_NONE, "unknown GPU arch '%s' (supported: %s)", arch ? arch : "(null)",
                   tgt_known_list());
        diag_note(&c->diag, LOC_NONE,
                  "PTX for sm_90 runs on newer GPUs (sm_100, sm_120) through the driver's JIT; "
                  "sm_89 and older sm_8x GPUs run sm_80 PTX");
        return BLK_ERR_USAGE;
    }
    c->target = t;
    return BLK_OK;
}
void blkc_set_dump_after(blkc_ctx *c, const char *pass) { c->dump_after = pass ? arena_strdup(c->arena, pass) : NULL; }
const char *blkc_diagnostics(const blkc_ctx *c) { return sb_str(&c->diag.out); }
int blkc_error_count(const blkc_ctx *c) { return c->diag.nerrors; }
int blkc_num_units(const blkc_ctx *c) { return c ? c->units.len : 0; }
const char *blkc_unit_path(const blkc_ctx *c, int i) { return c && i >= 0 && i < c->units.len ? c->units.data[i].path : NULL; }

static bool valid_const_name(const char *s) {
    if (!s || !(*s == '_' || (*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z'))) return false;
    for (; *s; s++)
        if (!(*s == '_' || (*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9')))
            return false;
    return true;
}

static blk_status push_define(blkc_ctx *c, compile_define d) {
    if (!valid_const_name(d.name)) {
        diag_error(&c->diag, LOC_NONE, "invalid const name '%s' in a define", d.name ? d.name : "");
        return BLK_ERR_USAGE;
    }
    d.name = arena_strdup(c->arena, d.name);
    d.loc = LOC_NONE;
    for (int i = 0; i < c->defines.len; i++)
        if (strcmp(c->defines.data[i].name, d.name) == 0) { c->defines.data[i] = d; return BLK_OK; }
    VEC_PUSH(c->arena, c->defines, d);
    return BLK_OK;
}

blk_status blkc_define_int(blkc_ctx *c, const char *name, int64_t value) {
    return push_define(c, (compile_define){.name = name, .ival = value});
}

blk_status blkc_define_float(blkc_ctx *c, const char *name, double value) {
    return push_define(c, (compile_define){.name = name, .is_float = true, .fval = value});
}

/* A string define: an identifier-like word (-D ACT=gelu) or a quoted
 * string (-D 'ACT="gelu tanh"'); anything else that is not a number stays
 * an error, so a mistyped number (-D BLOCK=12x) is still reported here. */
static bool string_define(blkc_ctx *c, const char *value, const char **out) {
    size_t n = strlen(value);
    if (n >= 2 && value[0] == '"' && value[n - 1] == '"') {
        char *s = arena_strdup(c->arena, value + 1);
        if (s) s[n - 2] = 0;
        *out = s;
        return s != NULL;
    }
    if (!(isalpha((unsigned char)value[0]) || value[0] == '_')) return false;
    for (size_t k = 1; k < n; k++)
        if (!(isalnum((unsigned char)value[k]) || value[k] == '_')) return false;
    *out = arena_strdup(c->arena, value);
    return *out != NULL;
}

/* -D NAME=VALUE: VALUE is an integer (decimal, 0x hex, optional sign),
 * a float (strtod syntax, inf, nan), true/false, or a string (see
 * string_define). */
blk_status blkc_define(blkc_ctx *c, const char *name, const char *value) {
    if (!value || !*value) {
        diag_error(&c->diag, LOC_NONE, "define '%s' has no value (use -D %s=VALUE)", name, name);
        return BLK_ERR_USAGE;
    }
    if (strcmp(value, "true") == 0 || strcmp(value, "false") == 0)
        return push_define(c, (compile_define){.name = name, .is_bool = true, .ival = value[0] == 't'});
    char *end;
    errno = 0;
    long long iv = strtoll(value, &end, 0);
    if (*end == 0 && errno == 0) return blkc_define_int(c, name, iv);
    if (*end == 0 && errno == ERANGE) {
        diag_error(&c->diag, LOC_NONE, "value of define '%s' does not fit in 64 bits: %s", name, value);
        return BLK_ERR_USAGE;
    }
    errno = 0;
    double fv = strtod(value, &end);
    if (*end == 0 && end != value) return blkc_define_float(c, name, fv);
    const char *str;
    if (string_define(c, value, &str)) return push_define(c, (compile_define){.name = name, .is_str = true, .sval = str});
    diag_error(&c->diag, LOC_NONE, "value of define '%s' is not a number, bool or name: '%s'", name, value);
    return BLK_ERR_USAGE;
}

static int add_unit(blkc_ctx *c, const char *path, const char *text, size_t len) {
    compile_unit u = {0};
    u.path = arena_strdup(c->arena, path);
    u.file = diag_add_file(&c->diag, path, text, len);
    VEC_PUSH(c->arena, c->units, u);
    int idx = c->units.len - 1;
    c->units.data[idx].ast = parse_file(c->arena, &c->diag, u.file);
    return idx;
}

static blk_status load_source_impl(blkc_ctx *c, const char *path, const char *text, size_t len) {
    if (c->units.len) {
        diag_error(&c->diag, LOC_NONE, "a main module is already loaded");
        return BLK_ERR_USAGE;
    }
    if (len > COMPILE_MAX_FILE_BYTES) {
        diag_error(&c->diag, LOC_NONE, "%s: file too large (limit %d bytes)", path, COMPILE_MAX_FILE_BYTES);
        return BLK_ERR_IO;
    }
    int u = add_unit(c, path ? path : "<input>", text, len);
    if (arena_failed(c->arena)) return BLK_ERR_NOMEM;
    return c->units.data[u].ast ? BLK_OK : BLK_ERR_COMPILE;
}

static blk_status load_file_impl(blkc_ctx *c, const char *path) {
    char *text;
    size_t len;
    char err[256];
    if (read_file(path, COMPILE_MAX_FILE_BYTES, &text, &len, err, sizeof err) != 0) {
        diag_error(&c->diag, LOC_NONE, "cannot read '%s': %s", path, err);
        return BLK_ERR_IO;
    }
    blk_status s = blkc_load_source(c, path, text, len);
    free(text);
    return s;
}

/* Directory part of a path ("a/b.blk" -> "a", "b.blk" -> "."). */
static char *dir_of(blk_arena *a, const char *path) {
    const char *slash = strrchr(path, '/');
    if (!slash) return arena_strdup(a, ".");
    if (slash == path) return arena_strdup(a, "/");
    return arena_strndup(a, path, (size_t)(slash - path));
}

/* Load (once) a source file for an import written in unit `from` at `loc`:
 * searched next to the importing file, then in -I dirs, then the stdlib dir.
 * Returns the unit index, or -1 after reporting a located error. */
static int load_import(blkc_ctx *c, const char *path, int from_unit, blk_loc loc) {
    if (!path || !*path) {
        diag_error(&c->diag, loc, "empty import path");
        return -1;
    }
    /* candidates: next to the importing file, -I dirs in order, stdlib */
    VEC(const char *) cands = {0};
    if (path[0] == '/') {
        VEC_PUSH(c->arena, cands, path);
    } else {
        const char *from = from_unit >= 0 && from_unit < c->units.len ? c->units.data[from_unit].path : ".";
        VEC_PUSH(c->arena, cands, arena_printf(c->arena, "%s/%s", dir_of(c->arena, from), path));
        for (int i = 0; i < c->include_dirs.len; i++)
            VEC_PUSH(c->arena, cands, arena_printf(c->arena, "%s/%s", c->include_dirs.data[i], path));
        if (c->stdlib_dir) VEC_PUSH(c->arena, cands, arena_printf(c->arena, "%s/%s", c->stdlib_dir, path));
    }
    for (int k = 0; k < cands.len; k++) {
        const char *cand = cands.data[k];
        char *real = realpath(cand, NULL);
        if (!real) continue;
        for (int i = 0; i < c->units.len; i++) {
            char *ur = realpath(c->units.data[i].path, NULL);
            bool same = ur && strcmp(ur, real) == 0;
            free(ur);
            if (same) { free(real); return i; }
        }
        free(real);
        if (c->units.len >= COMPILE_MAX_IMPORTS) {
            diag_error(&c->diag, loc, "too many imported files (limit %d)", COMPILE_MAX_IMPORTS);
            return -1;
        }
        char *text;
        size_t len;
        char err[256];
        if (read_file(cand, COMPILE_MAX_FILE_BYTES, &text, &len, err, sizeof err) != 0) {
            diag_error(&c->diag, loc, "cannot read imported file '%s': %s", cand, err);
            return -1;
        }
        int u = add_unit(c, cand, text, len);
        free(text);
        return c->units.data[u].ast ? u : -1;
    }
    diag_error(&c->diag, loc, "import '%s' not found", path);
    diag_note(&c->diag, LOC_NONE, "searched next to the importing file, %d -I director%s, and the stdlib (%s)",
              c->include_dirs.len, c->include_dirs.len == 1 ? "y" : "ies", c->stdlib_dir ? c->stdlib_dir : "none");
    return -1;
}

/* Load every file unit `u` imports, transitively, before sema starts (sema
 * only looks the units up: c->units.data[u].imports). Depth first in source
 * order, so units are numbered in the order sema's walk meets them; a file
 * already loaded is not followed again, which ends a cycle (sema reports it). */
static void load_imports(blkc_ctx *c, int u) {
    ast_node *m = c->units.data[u].ast;
    for (int k = 0; m && k < m->args.len; k++) {
        ast_node *n = m->args.data[k];
        if (n->kind != AST_IMPORT) continue;
        int before = c->units.len;
        int v = load_import(c, n->str, u, n->loc);
        VEC_PUSH(c->arena, c->units.data[u].imports, v); /* units may have grown: index again */
        if (v >= before) load_imports(c, v);
    }
}

/* A define (-D, blkc_define*) must name a const parameter of some kernel of
 * the loaded files: a misspelt name would otherwise be ignored silently and
 * the kernel built with its default (with -Werror too). */
static blk_status check_defines(blkc_ctx *c) {
    VEC(const char *) names = {0};
    /* launch parameters a define may set for every kernel (sema/kernel.c) */
    VEC_PUSH(c->arena, names, "num_warps");
    VEC_PUSH(c->arena, names, "num_stages");
    for (int u = 0; u < c->units.len; u++) {
        ast_node *m = c->units.data[u].ast;
        for (int i = 0; m && i < m->args.len; i++) {
            ast_node *k = m->args.data[i];
            if (k->kind != AST_KERNEL) continue;
            for (int j = 0; j < k->params.len; j++)
                if (k->params.data[j]->is_const) VEC_PUSH(c->arena, names, k->params.data[j]->name);
        }
    }
    blk_status st = BLK_OK;
    for (int d = 0; d < c->defines.len; d++) {
        const char *name = c->defines.data[d].name;
        bool found = false;
        for (int i = 0; i < names.len && !found; i++) found = strcmp(names.data[i], name) == 0;
        if (found) continue;
        const char *best = sema_closest_name(name, names.data, names.len);
        if (best)
            diag_error(&c->diag, LOC_NONE, "define '%s': no kernel has a const parameter of that name; did you mean '%s'?",
                       name, best);
        else
            diag_error(&c->diag, LOC_NONE, "define '%s': no kernel has a const parameter of that name", name);
        st = BLK_ERR_USAGE;
    }
    return st;
}

static blk_status build_impl(blkc_ctx *c, const char *kernel) {
    if (!c->units.len) {
        diag_error(&c->diag, LOC_NONE, "no source loaded");
        return BLK_ERR_USAGE;
    }
    if (!c->units.data[0].ast) return BLK_ERR_COMPILE;
    if (c->ir) {
        diag_error(&c->diag, LOC_NONE, "blkc_build called twice on one context");
        return BLK_ERR_USAGE;
    }
    if (c->dump_after) {
        bool known = strcmp(c->dump_after, "sema") == 0;
        for (const char *const *p = pass_names(); *p && !known; p++) known = strcmp(*p, c->dump_after) == 0;
        if (!known) {
            blk_strbuf names;
            sb_init(&names);
            sb_puts(&names, "sema");
            for (const char *const *p = pass_names(); *p; p++) sb_printf(&names, ", %s", *p);
            diag_error(&c->diag, LOC_NONE, "unknown pass '%s' (passes: %s)", c->dump_after, sb_str(&names));
            sb_free(&names);
            return BLK_ERR_USAGE;
        }
    }
    if (check_defines(c) != BLK_OK) return BLK_ERR_USAGE; /* the main module's kernels only */
    double t0 = blk_now_ms();
    load_imports(c, 0);
    if (sema_build(c, kernel) != 0 || c->diag.nerrors) return arena_failed(c->arena) ? BLK_ERR_NOMEM : BLK_ERR_COMPILE;
    if (!c->ir) return BLK_ERR_COMPILE;
    if (arena_failed(c->arena)) return BLK_ERR_NOMEM; /* IR half built: no pass may see it */
    blk_status vs = compile_resolve_variants(c);
    if (vs != BLK_OK) return vs;
    double t1 = blk_now_ms();
    c->ms_sema = t1 - t0;
    pass_opts o = {
        .diag = &c->diag,
        .opt_level = c->opt_level,
        .verify_each = c->verify_each,
        .dump_after = c->dump_after,
        .dump = &c->pass_dumps,
    };
    if (passes_run(c->ir, &o) != 0) return BLK_ERR_INTERNAL;
    c->ms_passes = blk_now_ms() - t1;
    if (arena_failed(c->arena)) return BLK_ERR_NOMEM;
    return c->diag.nerrors ? BLK_ERR_COMPILE : BLK_OK;
}

static const char *emit_impl(blkc_ctx *c, const char *what) {
    sb_free(&c->emit);
    if (strcmp(what, "tokens") == 0 || strcmp(what, "ast") == 0) {
        if (!c->units.len) return NULL;
        if (what[0] == 't') {
            /* The parse already reported any lexical errors: lex again into a
             * scratch diagnostics context so they are not repeated. */
            blk_diag scratch;
            const blk_source *src = &c->diag.files.data[c->units.data[0].file];
            diag_init(&scratch, c->arena);
            int f = diag_add_file(&scratch, src->path, src->text, src->size);
            lex_dump(&c->emit, &scratch, f);
            diag_fini(&scratch);
        }
        else if (c->units.data[0].ast) ast_print(&c->emit, c->units.data[0].ast, 0);
        else return NULL;
        return sb_str(&c->emit);
    }
    if (strcmp(what, "ir") == 0) {
        if (!c->ir) return NULL;
        ir_print_module(&c->emit, c->ir);
        return sb_str(&c->emit);
    }
    if (strcmp(what, "autotune") == 0) {
        if (!c->ir) return NULL;
        compile_autotune_text(c, &c->emit);
        return sb_str(&c->emit);
    }
    if (strcmp(what, "meta-front") == 0) {
        if (!c->ir) return NULL;
        cg_front_meta(&c->emit, c->ir, c->target);
        return sb_str(&c->emit);
    }
    if (strncmp(what, "ir-after=", 9) == 0) {
        if (!c->ir || !c->dump_after || strcmp(what + 9, c->dump_after) != 0) return NULL;
        return sb_str(&c->pass_dumps);
    }
    if (strcmp(what, "ptx") == 0 || strcmp(what, "llvm") == 0 || strcmp(what, "meta") == 0) {
        if (!c->ir) return NULL;
        bool llvm = what[0] == 'l';
        if (!c->cg_done || (llvm && !c->cg_llvm)) {
            cg_output_free(&c->cg);
            cg_output_init(&c->cg);
            cg_variants vs = {c->no_default_variants, c->cg_variants.data, c->cg_variants.len};
            c->cg_errors = cg_emit_module(c->ir, c->target, &c->diag, c->opt_level, llvm, &vs, c->cg_flags, &c->cg);
            c->cg_done = true;
            c->cg_llvm = llvm;
        }
        if (c->cg_errors) return NULL;
        return sb_str(llvm ? &c->cg.llvm : what[0] == 'p' ? &c->cg.ptx : &c->cg.meta);
    }
    if (strcmp(what, "times") == 0) {
        static const char *const cg_names[CG_NPHASES] = {"lower", "verify", "libdevice", "llvm-opt", "llvm-emit"};
        double total = c->ms_load + c->ms_sema + c->ms_passes;
        sb_printf(&c->emit, "parse %.2f ms\nsema %.2f ms\npasses %.2f ms\n", c->ms_load, c->ms_sema, c->ms_passes);
        for (int i = 0; i < CG_NPHASES; i++) {
            sb_printf(&c->emit, "%s %.2f ms\n", cg_names[i], c->cg.ms[i]);
            total += c->cg.ms[i];
        }
        sb_printf(&c->emit, "total %.2f ms\n", total);
        return sb_str(&c->emit);
    }
    diag_error(&c->diag, LOC_NONE, "unknown --emit kind '%s'", what);
    return NULL;
}

static ir_func *find_kernel(blkc_ctx *c, const char *name) {
    if (!c->ir) return NULL;
    for (ir_func *f = c->ir->first; f; f = f->next)
        if (f->is_kernel && strcmp(f->name, name) == 0) return f;
    return NULL;
}

static blk_status interp_run_impl(blkc_ctx *c, const char *kernel, const unsigned grid[3], const blk_arg *args,
                                  int nargs, FILE *print_out) {
    if (!c->ir) {
        diag_error(&c->diag, LOC_NONE, "blkc_interp_run: nothing built (call blkc_build first)");
        return BLK_ERR_USAGE;
    }
    ir_func *f = kernel ? find_kernel(c, kernel) : NULL;
    if (!f) {
        diag_error(&c->diag, LOC_NONE, "blkc_interp_run: no kernel named '%s' was built", kernel ? kernel : "(null)");
        return BLK_ERR_USAGE;
    }
    if (!grid || grid[0] == 0 || grid[1] == 0 || grid[2] == 0) {
        diag_error(&c->diag, LOC_NONE, "blkc_interp_run: every grid dimension must be at least 1");
        return BLK_ERR_USAGE;
    }
    if (nargs < 0 || (nargs > 0 && !args)) {
        diag_error(&c->diag, LOC_NONE, "blkc_interp_run: bad argument array");
        return BLK_ERR_USAGE;
    }
    uint64_t steps = c->interp_steps;
    if (!c->interp_steps_set) {
        const char *env = getenv("BLK_INTERP_STEPS");
        steps = INTERP_DEFAULT_STEPS;
        if (env && *env) {
            char *end;
            errno = 0;
            unsigned long long v = strtoull(env, &end, 10);
            if (*end || errno || env[0] == '-') {
                diag_error(&c->diag, LOC_NONE, "BLK_INTERP_STEPS='%s' is not a number of steps (0 = no limit)", env);
                return BLK_ERR_USAGE;
            }
            steps = v;
        }
    }
    return interp_run(f, grid, args, nargs, steps, print_out ? print_out : stdout, &c->diag);
}

void blkc_set_interp_steps(blkc_ctx *c, uint64_t steps) {
    c->interp_steps = steps;
    c->interp_steps_set = true;
}

blk_status blkc_load_source(blkc_ctx *c, const char *path, const char *text, size_t len) {
    long before = blk_alloc_failures();
    double t0 = blk_now_ms();
    blk_status s = load_source_impl(c, path, text, len);
    c->ms_load = blk_now_ms() - t0;
    return nomem(c, before, s);
}

blk_status blkc_load_file(blkc_ctx *c, const char *path) {
    long before = blk_alloc_failures();
    return nomem(c, before, load_file_impl(c, path));
}

blk_status blkc_build(blkc_ctx *c, const char *kernel) {
    long before = blk_alloc_failures();
    return nomem(c, before, build_impl(c, kernel));
}

const char *blkc_emit(blkc_ctx *c, const char *what) {
    long before = blk_alloc_failures();
    const char *out = emit_impl(c, what);
    return nomem(c, before, BLK_OK) == BLK_OK ? out : NULL;
}

blk_status blkc_interp_run(blkc_ctx *c, const char *kernel, const unsigned grid[3],
                           const blk_arg *args, int nargs, FILE *print_out) {
    long before = blk_alloc_failures();
    return nomem(c, before, interp_run_impl(c, kernel, grid, args, nargs, print_out));
}

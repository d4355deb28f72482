/* variant.c — requested kernel variants (argument specialisation):
 * blkc_add_variant's "[KERNEL:]NAME=CODE,..." specs, checked against the
 * kernels that were built and turned into one assumption per runtime
 * parameter for codegen (cg_variants; docs/codegen.md "Kernel variants").
 *
 *   blkc_add_variant(c, "softmax:stride=eq1,n_cols=d16")
 *     syntax now (BLK_ERR_USAGE: bad code, repeated name, ...);
 *   blkc_build(c, ...)  (or at once when c is already built)
 *     names against each kernel it applies to: unknown or const parameters,
 *     eq1 on a pointer, anything on a float or bool, @do_not_specialize.
 *
 * Every error is a diagnostic without a location ("variant 'SPEC': ...") and
 * BLK_ERR_USAGE: a variant is an option, not source.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "compile.h"
#include "sema/sema.h"

static bool is_alpha(char c) { return c == '_' || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z'); }

static bool is_ident(const char *s, size_t n) {
    if (n == 0 || !is_alpha(s[0])) return false;
    for (size_t i = 1; i < n; i++)
        if (!is_alpha(s[i]) && !(s[i] >= '0' && s[i] <= '9')) return false;
    return true;
}

static blk_status bad(blkc_ctx *c, const char *spec, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static blk_status bad(blkc_ctx *c, const char *spec, const char *fmt, ...) {
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    diag_error(&c->diag, LOC_NONE, "variant '%s': %s", spec, msg);
    return BLK_ERR_USAGE;
}

/* The kernels a variant applies to must have every named parameter, of a
 * kind the code can be assumed of. One assumption per runtime parameter. */
static blk_status resolve_for(blkc_ctx *c, const compile_variant *v, const ir_func *f) {
    int np = f->body->args.len;
    ax_spec *spec = ARENA_ARRAY(c->arena, ax_spec, np + 1);
    if (!spec) return BLK_ERR_NOMEM;
    blk_status st = BLK_OK;
    for (int i = 0; i < v->n; i++) {
        const char *name = v->names[i];
        int k = 0;
        while (k < np && k < f->param_names.len && !(f->param_names.data[k] && !strcmp(f->param_names.data[k], name)))
            k++;
        if (k == f->param_names.len) k = np;
        if (k == np) {
            bool is_const = false;
            for (int j = 0; j < f->consts.len; j++) is_const |= strcmp(f->consts.data[j].name, name) == 0;
            const char *best = sema_closest_name(name, (const char *const *)f->param_names.data, f->param_names.len);
            if (is_const)
                st = bad(c, v->text,
                         "'%s' is a const parameter of kernel '%s' (variants specialise runtime parameters)", name,
                         f->name);
            else if (best)
                st = bad(c, v->text, "kernel '%s' has no runtime parameter '%s'; did you mean '%s'?", f->name, name,
                         best);
            else
                st = bad(c, v->text, "kernel '%s' has no runtime parameter '%s'", f->name, name);
            continue;
        }
        ir_type t = f->body->args.data[k]->type;
        ax_spec code = v->codes[i];
        bool dns = false;
        for (int j = 0; j < f->do_not_specialize.len; j++) dns |= f->do_not_specialize.data[j] == k;
        if (code == AX_SPEC_NONE) {
            spec[k] = code;
        } else if (dns) {
            st = bad(c, v->text, "'%s' is @do_not_specialize in kernel '%s'", name, f->name);
        } else if (t.dtype != DT_PTR && !dtype_is_int((blk_dtype)t.dtype)) {
            st = bad(c, v->text, "'%s' is %s: only pointer and integer parameters are specialised", name,
                     dtype_name((blk_dtype)t.dtype));
        } else if (t.dtype == DT_PTR && code == AX_SPEC_EQ1) {
            st = bad(c, v->text, "'%s' is a pointer: eq1 is for integer parameters (pointers take d16)", name);
        } else {
            spec[k] = code;
        }
    }
    if (st == BLK_OK) VEC_PUSH(c->arena, c->cg_variants, ((cg_variant){f, spec}));
    return st;
}

static blk_status resolve(blkc_ctx *c, const compile_variant *v) {
    blk_status st = BLK_OK;
    bool found = false;
    const char *kernels[256];
    int nk = 0;
    for (ir_func *f = c->ir->first; f; f = f->next) {
        if (!f->is_kernel) continue;
        if (nk < 256) kernels[nk++] = f->name;
        if (v->kernel && strcmp(v->kernel, f->name) != 0) continue;
        found = true;
        blk_status s = resolve_for(c, v, f);
        if (s) st = s;
    }
    if (!found && v->kernel) {
        const char *best = sema_closest_name(v->kernel, kernels, nk);
        if (best) return bad(c, v->text, "no kernel '%s' was built; did you mean '%s'?", v->kernel, best);
        return bad(c, v->text, "no kernel '%s' was built", v->kernel);
    }
    return st;
}

blk_status compile_resolve_variants(blkc_ctx *c) {
    blk_status st = BLK_OK;
    c->cg_variants.len = 0;
    for (int i = 0; i < c->variants.len; i++) {
        blk_status s = resolve(c, &c->variants.data[i]);
        if (s) st = s;
    }
    return arena_failed(c->arena) ? BLK_ERR_NOMEM : st;
}

/* SPEC := [KERNEL ":"] [ITEM ("," ITEM)*]    ITEM := NAME "=" ("d16" | "eq1" | "-") */
blk_status blkc_add_variant(blkc_ctx *c, const char *spec) {
    if (!spec) return bad(c, "(null)", "no spec");
    compile_variant v = {.text = arena_strdup(c->arena, spec)};
    const char *p = spec, *colon = strchr(spec, ':');
    if (colon) {
        if (!is_ident(spec, (size_t)(colon - spec)))
            return bad(c, spec, "'%.*s' before ':' is not a kernel name", (int)(colon - spec), spec);
        v.kernel = arena_strndup(c->arena, spec, (size_t)(colon - spec));
        p = colon + 1;
    }
    int cap = 1;
    for (const char *q = p; *q; q++) cap += *q == ',';
    v.names = ARENA_ARRAY(c->arena, const char *, cap);
    v.codes = ARENA_ARRAY(c->arena, ax_spec, cap);
    if (!v.names || !v.codes) return BLK_ERR_NOMEM;
    while (*p) {
        const char *end = strchr(p, ',');
        if (!end) end = p + strlen(p);
        const char *item = arena_strndup(c->arena, p, (size_t)(end - p)), *eq = strchr(item, '=');
        if (!eq || !is_ident(item, (size_t)(eq - item)))
            return bad(c, spec, "expected NAME=CODE (CODE: d16, eq1 or -), got '%s'", item);
        const char *name = arena_strndup(c->arena, item, (size_t)(eq - item)), *code = eq + 1;
        ax_spec s = strcmp(code, "d16") == 0 ? AX_SPEC_D16 : strcmp(code, "eq1") == 0 ? AX_SPEC_EQ1 : AX_SPEC_NONE;
        if (s == AX_SPEC_NONE && strcmp(code, "-") != 0)
            return bad(c, spec, "unknown code '%s' for '%s' (d16, eq1 or -)", code, name);
        for (int i = 0; i < v.n; i++)
            if (strcmp(v.names[i], name) == 0) return bad(c, spec, "'%s' is named twice", name);
        v.names[v.n] = name;
        v.codes[v.n++] = s;
        p = *end ? end + 1 : end;
        if (*end && !*p) return bad(c, spec, "a ',' ends the spec");
    }
    VEC_PUSH(c->arena, c->variants, v);
    c->cg_done = false;
    if (arena_failed(c->arena)) return BLK_ERR_NOMEM;
    if (!c->ir) return BLK_OK; /* names are checked by blkc_build */
    return resolve(c, &c->variants.data[c->variants.len - 1]);
}

void blkc_set_default_variants(blkc_ctx *c, int on) {
    c->no_default_variants = !on;
    c->cg_done = false;
}

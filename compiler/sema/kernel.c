/* kernel.c — a kernel as one IR function: its const parameters bound to this
 * compilation's values (-D, default, first autotune config), its runtime
 * parameters as IR params, its attributes (@num_warps, @num_stages,
 * @autotune, @do_not_specialize, @cluster) checked and applied, its body elaborated.
 */
#include <string.h>

#include "sema/item.h"

/* ---- defines, attributes, autotune configs ---- */

static const compile_define *find_define(sema *S, const char *name) {
    for (int k = 0; k < S->c->defines.len; k++)
        if (strcmp(S->c->defines.data[k].name, name) == 0) return &S->c->defines.data[k];
    return NULL;
}

static sema_val define_value(const compile_define *d) {
    if (d->is_str) return (sema_val){.kind = SV_STRING, .str = d->sval, .len = (int)strlen(d->sval)};
    if (d->is_bool) return sema_bool_const(d->ival != 0);
    if (d->is_float) return sema_float_const(DT_F32, true, d->fval);
    return sema_weak_int((sema_i128)d->ival);
}

/* The value a named argument of an attribute: @autotune(key = ..., configs = ...) */
static ast_node *attr_arg(ast_node *attr, const char *name) {
    for (int k = 0; k < attr->args.len; k++) {
        ast_node *a = attr->args.data[k];
        if (a->kind == AST_NAMED_ARG && a->name && strcmp(a->name, name) == 0) return a->lhs;
    }
    return NULL;
}

static ast_node *find_param(ast_node *k, const char *name) {
    for (int p = 0; p < k->params.len; p++)
        if (strcmp(k->params.data[p]->name, name) == 0) return k->params.data[p];
    return NULL;
}

static bool check_num_warps(sema *S, int64_t v, blk_loc loc) {
    if (!sema_is_pow2(v) || v > 32) {
        diag_error(S->d, loc, "num_warps must be a power of two from 1 to 32, got %lld", (long long)v);
        return false;
    }
    return true;
}

static bool check_num_stages(sema *S, int64_t v, blk_loc loc) {
    if (v < 1 || v > 16) {
        diag_error(S->d, loc, "num_stages must be from 1 to 16, got %lld", (long long)v);
        return false;
    }
    return true;
}

/* A compile-time integer argument (attribute values). */
static bool const_int_arg(sema *S, ast_node *e, const char *what, int64_t *out) {
    sema_val v = sema_expr(S, e);
    if (v.kind == SV_ERROR) return false;
    if (!sema_is_const_int(v)) {
        diag_error(S->d, e->loc, "%s must be a compile-time integer, got %s", what, sema_type_str(S, v));
        return false;
    }
    *out = v.i;
    return true;
}

/* @autotune(key = [M, N], configs = [{BM = 128, num_warps = 8}, ...]):
 * keys are runtime parameters; config entries set const parameters or
 * num_warps/num_stages to constants. Returns the first config (or NULL). */
static ast_node *check_autotune(sema *S, ast_node *k, ast_node *attr) {
    for (int a = 0; a < attr->args.len; a++) {
        ast_node *arg = attr->args.data[a];
        if (arg->kind != AST_NAMED_ARG || !arg->name ||
            (strcmp(arg->name, "key") != 0 && strcmp(arg->name, "configs") != 0)) {
            diag_error(S->d, arg->loc, "@autotune takes 'key = [...]' and 'configs = [...]'");
            return NULL;
        }
    }
    ast_node *key = attr_arg(attr, "key"), *configs = attr_arg(attr, "configs");
    if (!configs) {
        diag_error(S->d, attr->loc, "@autotune needs 'configs = [{...}, ...]'");
        return NULL;
    }
    if (key) {
        if (key->kind != AST_LIST) {
            diag_error(S->d, key->loc, "autotune key must be a list of runtime parameter names");
        } else {
            for (int j = 0; j < key->args.len; j++) {
                ast_node *e = key->args.data[j];
                ast_node *p = e->kind == AST_NAME ? find_param(k, e->name) : NULL;
                if (!p || p->is_const)
                    diag_error(S->d, e->loc, "autotune key '%s' is not a runtime parameter of kernel '%s'",
                               e->kind == AST_NAME ? e->name : "?", k->name);
            }
        }
    }
    if (configs->kind != AST_LIST || configs->args.len == 0) {
        diag_error(S->d, configs->loc, "autotune configs must be a non-empty list of {NAME = VALUE, ...}");
        return NULL;
    }
    for (int j = 0; j < configs->args.len; j++) {
        ast_node *rec = configs->args.data[j];
        if (rec->kind != AST_RECORD) {
            diag_error(S->d, rec->loc, "an autotune config is a record {NAME = VALUE, ...}");
            continue;
        }
        for (int e = 0; e < rec->args.len; e++) {
            ast_node *ent = rec->args.data[e];
            if (ent->kind != AST_NAMED_ARG || !ent->name) continue;
            for (int e2 = 0; e2 < e; e2++)
                if (rec->args.data[e2]->name && strcmp(rec->args.data[e2]->name, ent->name) == 0)
                    diag_error(S->d, ent->loc, "'%s' is set twice in this config", ent->name);
            bool nw = strcmp(ent->name, "num_warps") == 0, ns = strcmp(ent->name, "num_stages") == 0;
            ast_node *p = find_param(k, ent->name);
            if (!nw && !ns && (!p || !p->is_const)) {
                diag_error(S->d, ent->loc, "autotune config sets '%s', which is not a const parameter of kernel '%s'",
                           ent->name, k->name);
                continue;
            }
            sema_val v = sema_expr(S, ent->lhs);
            if (v.kind == SV_ERROR) continue;
            if (v.kind != SV_CONST) {
                diag_error(S->d, ent->lhs->loc, "autotune config value must be a compile-time constant");
                continue;
            }
            if ((nw || ns) && !p) {
                if (!sema_is_const_int(v)) diag_error(S->d, ent->lhs->loc, "%s must be an integer", ent->name);
                else if (nw) check_num_warps(S, v.i, ent->lhs->loc);
                else check_num_stages(S, v.i, ent->lhs->loc);
            }
        }
    }
    return configs->args.data[0]->kind == AST_RECORD ? configs->args.data[0] : NULL;
}

static ast_node *config_entry(ast_node *config, const char *name) {
    if (!config) return NULL;
    for (int e = 0; e < config->args.len; e++) {
        ast_node *ent = config->args.data[e];
        if (ent->kind == AST_NAMED_ARG && ent->name && strcmp(ent->name, name) == 0) return ent->lhs;
    }
    return NULL;
}

static void record_const(sema *S, ir_func *f, const char *name, sema_val v) {
    ir_const_binding b = {.name = name};
    if (dtype_is_float(v.type.dtype)) {
        b.is_float = true;
        b.fval = v.f;
    } else {
        b.ival = v.i;
        b.is_bool = v.type.dtype == DT_BOOL;
    }
    VEC_PUSH(S->a, f->consts, b);
}

/* ---- launch configuration ---- */

enum { LAUNCH_WARPS, LAUNCH_STAGES };

/* Where a kernel's num_warps [0] and num_stages [1] can come from, gathered
 * while its attributes and parameters are checked (each value valid; 0:
 * not given). resolve_launch picks. */
typedef struct {
    int64_t attr[2];  /* @num_warps(N), @num_stages(N) */
    int64_t param[2]; /* a const parameter of that name: its value */
} launch_sources;

/* A kernel's num_warps and num_stages, decided here and nowhere else (layout,
 * the pipeliner and codegen read f->num_warps and f->num_stages). For each,
 * the first of these that gives a value wins:
 *
 *   1. a const parameter of that name (its own value: -D, its default, or the
 *      first autotune config), when the kernel has one — then 2 and 3 do
 *      not apply even if its value was rejected;
 *   2. an integer define of that name (-D num_warps=8, blkc_define_int), which
 *      applies to every kernel;
 *   3. the first @autotune config's entry, when that config supplied the value
 *      of some const parameter (use_config);
 *   4. the attribute @num_warps(N) / @num_stages(N);
 *   5. the target's default_num_warps / default_num_stages (target/sm*.c).
 *
 * A value from 2 or 3 is checked here (an error keeps the next source's). */
static void resolve_launch(sema *S, ast_node *k, ir_func *f, const launch_sources *src, ast_node *config,
                           bool use_config) {
    const char *names[2] = {"num_warps", "num_stages"};
    int64_t value[2] = {S->c->target->default_num_warps, S->c->target->default_num_stages};
    for (int j = 0; j < 2; j++) {
        if (src->attr[j]) value[j] = src->attr[j];
        if (find_param(k, names[j])) {
            if (src->param[j]) value[j] = src->param[j];
            continue;
        }
        const compile_define *d = find_define(S, names[j]);
        ast_node *e = use_config ? config_entry(config, names[j]) : NULL;
        int64_t v;
        if (d && !d->is_float && !d->is_bool) v = d->ival;
        else if (e && const_int_arg(S, e, names[j], &v)) {}
        else continue;
        blk_loc loc = e ? e->loc : LOC_NONE;
        if (j == LAUNCH_WARPS ? check_num_warps(S, v, loc) : check_num_stages(S, v, loc)) value[j] = v;
    }
    f->num_warps = (int)value[LAUNCH_WARPS];
    f->num_stages = (int)value[LAUNCH_STAGES];
}

/* ---- kernels ---- */

/* const NAME[: T] [= default] — the value of this compilation. */
static void bind_const_param(sema *S, ast_node *k, ast_node *p, ast_node *config, bool *use_config,
                             launch_sources *launch) {
    ir_func *f = S->fn->func;
    ir_type t = ir_scalar(DT_I32);
    bool typed = false;
    /* `const ACT: str = "gelu"`: a string that only compile-time code sees
     * (`if ACT == "gelu"`); str is not a type anywhere else */
    bool is_str = p->type && p->type->kind == AST_TYPE_SCALAR && p->type->name && strcmp(p->type->name, "str") == 0;
    if (p->type && !is_str) {
        if (!sema_type_from_ast(S, p->type, &t)) goto fail;
        if (t.rank > 0 || t.dtype == DT_PTR) {
            diag_error(S->d, p->type->loc, "a const parameter has a scalar type (int, float or bool), not %s",
                       sema_ir_type_str(S, t));
            goto fail;
        }
        typed = true;
    }
    sema_val v;
    blk_loc vloc = sema_name_loc(p);
    const compile_define *d = find_define(S, p->name);
    ast_node *from_config = config_entry(config, p->name);
    if (d) {
        v = define_value(d);
    } else if (p->rhs) {
        v = sema_expr(S, p->rhs);
        vloc = p->rhs->loc;
    } else if (from_config) {
        *use_config = true;
        v = sema_expr(S, from_config);
        vloc = from_config->loc;
    } else {
        diag_error(S->d, sema_name_loc(p), "const parameter '%s' of kernel '%s' has no value: give it a default or pass "
                   "-D %s=VALUE", p->name, k->name, p->name);
        goto fail;
    }
    if (v.kind == SV_ERROR) goto fail;
    if (is_str != (v.kind == SV_STRING) && (is_str || typed)) {
        diag_error(S->d, vloc, "const parameter '%s' is declared %s, got %s", p->name,
                   is_str ? "str" : dtype_name((blk_dtype)t.dtype), v.kind == SV_STRING ? "a string" : sema_type_str(S, v));
        goto fail;
    }
    if (v.kind == SV_STRING) {
        /* not in f->consts: blk-meta carries numbers and bools only; a
         * string const selects code at compile time and is gone after */
        sema_bind(S, p->name, BIND_PARAM, v, sema_name_loc(p));
        return;
    }
    if (v.kind != SV_CONST) {
        diag_error(S->d, vloc, "the value of const parameter '%s' must be a compile-time constant (a number, bool or "
                   "string), got %s", p->name, sema_type_str(S, v));
        goto fail;
    }
    if (typed && d) { /* a -D value: say which define does not fit */
        blk_dtype dt = (blk_dtype)t.dtype;
        /* APIs without a bool kind (blkrt_define, blkc_define_int) pass a
         * bool const as the integer 0 or 1 */
        bool ok = dt == DT_BOOL ? d->is_bool || (!d->is_float && (d->ival == 0 || d->ival == 1))
                : dtype_is_float(dt) ? !d->is_bool
                : !d->is_bool && !d->is_float && sema_fits(dt, (sema_i128)d->ival);
        if (!ok) {
            diag_error(S->d, vloc, "-D %s does not give a valid %s for const parameter '%s'", p->name,
                       dtype_name(dt), p->name);
            goto fail;
        }
        if (dt == DT_BOOL) v = sema_bool_const(d->ival != 0);
    }
    if (typed) {
        if (v.type.dtype != t.dtype && !v.weak) {
            diag_error(S->d, vloc, "const parameter '%s' is declared %s, got %s", p->name, dtype_name((blk_dtype)t.dtype),
                       sema_type_str(S, v));
            goto fail;
        }
        if (!sema_const_convert(S, &v, (blk_dtype)t.dtype, vloc)) goto fail;
    }
    if (strcmp(p->name, "num_warps") == 0) {
        if (!sema_is_const_int(v) || !check_num_warps(S, v.i, vloc)) goto fail;
        launch->param[LAUNCH_WARPS] = v.i;
    } else if (strcmp(p->name, "num_stages") == 0) {
        if (!sema_is_const_int(v) || !check_num_stages(S, v.i, vloc)) goto fail;
        launch->param[LAUNCH_STAGES] = v.i;
    }
    record_const(S, f, p->name, v);
    sema_bind(S, p->name, BIND_PARAM, v, sema_name_loc(p));
    return;
fail:
    sema_bind(S, p->name, BIND_PARAM, sema_error(), sema_name_loc(p));
}

/* @do_not_specialize(a, b): runtime parameters that no variant assumes
 * anything of (neither d16 nor eq1), for arguments whose values vary so much
 * that a variant per value class would only cost compiles. Checked after the
 * parameters are bound; the indexes go to f->do_not_specialize, ascending. */
static void check_do_not_specialize(sema *S, ast_node *k, ast_node *attr, ir_func *f) {
    if (attr->args.len == 0)
        diag_error(S->d, attr->loc, "@do_not_specialize needs the names of runtime parameters");
    for (int j = 0; j < attr->args.len; j++) {
        ast_node *e = attr->args.data[j];
        if (e->kind != AST_NAME) {
            diag_error(S->d, e->loc, "@do_not_specialize takes parameter names");
            continue;
        }
        bool twice = false;
        for (int i = 0; i < j && !twice; i++)
            twice = attr->args.data[i]->kind == AST_NAME && strcmp(attr->args.data[i]->name, e->name) == 0;
        ast_node *p = find_param(k, e->name);
        if (twice) {
            diag_error(S->d, e->loc, "'%s' is named twice in @do_not_specialize", e->name);
        } else if (!p) {
            const char *names[SEMA_MAX_PARAMS];
            int n = 0;
            for (int q = 0; q < k->params.len && n < SEMA_MAX_PARAMS; q++)
                if (!k->params.data[q]->is_const) names[n++] = k->params.data[q]->name;
            const char *best = sema_closest_name(e->name, names, n);
            if (best)
                diag_error(S->d, e->loc, "kernel '%s' has no parameter '%s'; did you mean '%s'?", k->name, e->name,
                           best);
            else
                diag_error(S->d, e->loc, "kernel '%s' has no parameter '%s'", k->name, e->name);
        } else if (p->is_const) {
            diag_error(S->d, e->loc,
                       "'%s' is a const parameter: @do_not_specialize names runtime parameters (a const has one "
                       "value per compilation)", e->name);
        } else {
            for (int q = 0; q < f->param_names.len; q++) {
                if (!f->param_names.data[q] || strcmp(f->param_names.data[q], e->name) != 0) continue;
                int at = f->do_not_specialize.len;
                VEC_PUSH(S->a, f->do_not_specialize, q);
                for (; at > 0 && f->do_not_specialize.data[at - 1] > q; at--)
                    f->do_not_specialize.data[at] = f->do_not_specialize.data[at - 1];
                f->do_not_specialize.data[at] = q;
            }
        }
    }
}

/* @cluster(N): programs N i .. N i + N - 1 along axis 0 run as one
 * thread-block cluster (cluster_sum sums over them). N may name const
 * parameters (@cluster(SPLIT)), so it is read after they are bound. */
static void check_cluster(sema *S, ast_node *attr, ir_func *f) {
    if (attr->args.len != 1 || attr->args.data[0]->kind == AST_NAMED_ARG) {
        diag_error(S->d, attr->loc, "@cluster takes one integer: the programs per cluster along axis 0");
        return;
    }
    int64_t n;
    if (!const_int_arg(S, attr->args.data[0], "@cluster", &n)) return;
    if (n != 1 && n != 2 && n != 4 && n != 8) {
        diag_error(S->d, attr->args.data[0]->loc, "@cluster must be 1, 2, 4 or 8 (programs per cluster), got %lld",
                   (long long)n);
        return;
    }
    f->cluster = (int)n;
}

void sema_lower_kernel(sema *S, sema_item *item) {
    ast_node *k = item->ast;
    sema_check_params(S, k, "kernel");
    if (k->params.len > SEMA_MAX_PARAMS) return; /* reported; the body would only add noise */
    ir_func *f = ir_func_new(S->c->ir, k->name, true, k->loc);
    if (!f) return;
    sema_fnctx F = {.item = item, .func = f, .unit = item->unit, .is_kernel = true};
    F.b = (ir_builder){f, f->body, NULL, k->loc};
    S->fn = &F;
    S->unit = item->unit;

    /* attributes: validated here; resolve_launch applies them */
    launch_sources launch = {0};
    ast_node *config = NULL, *no_spec = NULL, *cluster = NULL;
    for (int a = 0; a < k->attrs.len; a++) {
        ast_node *attr = k->attrs.data[a];
        const char *an = attr->name ? attr->name : "";
        for (int b = 0; b < a; b++)
            if (k->attrs.data[b]->name && strcmp(k->attrs.data[b]->name, an) == 0)
                diag_error(S->d, attr->loc, "duplicate attribute '@%s'", an);
        bool nw = strcmp(an, "num_warps") == 0, ns = strcmp(an, "num_stages") == 0;
        if (nw || ns) {
            if (attr->args.len != 1 || attr->args.data[0]->kind == AST_NAMED_ARG) {
                diag_error(S->d, attr->loc, "@%s takes one integer", an);
                continue;
            }
            int64_t v;
            if (!const_int_arg(S, attr->args.data[0], an, &v)) continue;
            if (nw && check_num_warps(S, v, attr->args.data[0]->loc)) launch.attr[LAUNCH_WARPS] = v;
            if (ns && check_num_stages(S, v, attr->args.data[0]->loc)) launch.attr[LAUNCH_STAGES] = v;
        } else if (strcmp(an, "autotune") == 0) {
            config = check_autotune(S, k, attr);
        } else if (strcmp(an, "do_not_specialize") == 0) {
            if (!no_spec) no_spec = attr; /* a second one is reported above */
        } else if (strcmp(an, "cluster") == 0) {
            if (!cluster) cluster = attr;
        } else {
            diag_error(S->d, attr->loc,
                       "unknown kernel attribute '@%s' (known: @num_warps, @num_stages, @autotune, @do_not_specialize, "
                       "@cluster)",
                       an);
        }
    }

    bool use_config = false;
    for (int p = 0; p < k->params.len; p++) {
        ast_node *param = k->params.data[p];
        if (param->is_const) {
            bind_const_param(S, k, param, config, &use_config, &launch);
            continue;
        }
        ir_type t;
        if (!param->type) {
            diag_error(S->d, sema_name_loc(param), "kernel parameter '%s' needs a type", param->name);
            sema_bind(S, param->name, BIND_PARAM, sema_error(), sema_name_loc(param));
            continue;
        }
        if (!sema_type_from_ast(S, param->type, &t)) {
            sema_bind(S, param->name, BIND_PARAM, sema_error(), sema_name_loc(param));
            continue;
        }
        if (t.rank > 0) {
            diag_error(S->d, param->type->loc, "a kernel parameter is a scalar or a pointer, not %s",
                       sema_ir_type_str(S, t));
            sema_bind(S, param->name, BIND_PARAM, sema_error(), sema_name_loc(param));
            continue;
        }
        sema_bind(S, param->name, BIND_PARAM, sema_value(ir_func_add_param(f, t, param->name)), sema_name_loc(param));
    }
    if (no_spec) check_do_not_specialize(S, k, no_spec, f);
    if (cluster) check_cluster(S, cluster, f);
    if (f->cluster > 1 && !tgt_has(S->c->target, TGT_CAP_CLUSTER) && !S->one_kernel) {
        /* a module for sm_80 (the stdlib's matmul.blk) keeps its other
         * kernels; asked for by name, codegen says why it cannot be built */
        diag_warning(S->d, cluster->loc, "kernel '%s' is left out: @cluster needs thread-block clusters, which %s does "
                     "not have (sm_90a has them)", k->name, S->c->target->arch);
        ir_func_remove(S->c->ir, f);
        S->fn = NULL;
        return;
    }
    resolve_launch(S, k, f, &launch, config, use_config);

    bool terminated = sema_block(S, k->body);
    if (!terminated) sema_inst(S, IR_RETURN, k->loc, NULL, 0, NULL, 0, 0);
    S->kernels_expanded += F.expanded;
    S->fn = NULL;
}


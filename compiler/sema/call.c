/* call.c — calls: a call expression (a builtin, a device fn, a method of a
 * tensor descriptor) and device fn specialisation.
 *
 * A device fn is specialised per distinct argument signature (types,
 * shapes, const values) into an IR function `name.sig` that calls reach
 * through IR_CALL (the inline pass inlines them). Const parts of a fn's
 * result stay const at the call site, so `BLOCK * factor(2)`-like shape math
 * folds.
 */
#include <string.h>

#include "sema/item.h"

/* ---- device fns ---- */

static void key_of(sema *S, blk_strbuf *key, sema_val v) {
    switch (v.kind) {
    case SV_VALUE: sb_printf(key, "v%s;", sema_ir_type_str(S, v.type)); break;
    case SV_CONST:
        sb_printf(key, "c%d%c%llx;", v.type.dtype, v.weak ? 'w' : 's',
                  dtype_is_float(v.type.dtype) ? (unsigned long long)0 : (unsigned long long)v.i);
        if (dtype_is_float(v.type.dtype)) sb_printf(key, "%.17g;", v.f);
        break;
    case SV_DTYPE: sb_printf(key, "t%s;", sema_ir_type_str(S, v.type)); break;
    case SV_FN: sb_printf(key, "f%p;", (void *)v.item); break;
    case SV_STRING: sb_printf(key, "s%d:%s;", v.len, v.str); break;
    case SV_NONE: sb_puts(key, "n;"); break;
    default: sb_puts(key, "?;"); break;
    }
}

/* Mangled name piece of one argument: f32x128, pf16, c64, ... */
static void mangle_arg(blk_strbuf *out, sema_val v) {
    switch (v.kind) {
    case SV_VALUE:
        if (v.type.dtype == DT_PTR) sb_printf(out, "p%s", dtype_name((blk_dtype)v.type.pointee));
        else sb_puts(out, dtype_name((blk_dtype)v.type.dtype));
        for (int k = 0; k < v.type.rank; k++) sb_printf(out, "x%d", v.type.shape[k]);
        break;
    case SV_CONST:
        if (v.type.dtype == DT_BOOL) sb_puts(out, v.i ? "true" : "false");
        else if (dtype_is_float(v.type.dtype)) sb_printf(out, "c%g", v.f);
        else if (dtype_is_unsigned(v.type.dtype)) sb_printf(out, "c%llu", (unsigned long long)v.i);
        else sb_printf(out, "c%lld", (long long)v.i);
        break;
    case SV_DTYPE: sb_puts(out, dtype_name((blk_dtype)v.type.dtype)); break;
    case SV_FN: sb_puts(out, v.item->name); break;
    case SV_NONE: sb_puts(out, "none"); break;
    default: sb_puts(out, "s"); break;
    }
}

static const char *unique_fn_name(sema *S, const char *base) {
    const char *name = base;
    for (int k = 2; ; k++) {
        bool taken = false;
        for (ir_func *f = S->c->ir->first; f && !taken; f = f->next) taken = strcmp(f->name, name) == 0;
        if (!taken) return name;
        name = arena_printf(S->a, "%s.%d", base, k);
    }
}

/* Flatten the run-time leaves of a fn's result into rets, leaving a template. */
static bool result_template(sema *S, sema_val *v, ir_value ***rets, int *n, int *cap, blk_loc loc) {
    switch (v->kind) {
    case SV_VALUE:
        if (*n == *cap) {
            int nc = *cap ? *cap * 2 : 4;
            ir_value **grown = ARENA_ARRAY(S->a, ir_value *, nc);
            if (!grown) return false;
            if (*n) memcpy(grown, *rets, sizeof(ir_value *) * (size_t)*n);
            *rets = grown;
            *cap = nc;
        }
        (*rets)[*n] = v->v;
        v->v = NULL;
        v->i = (*n)++;
        return true;
    case SV_TUPLE: {
        sema_val *copy = ARENA_ARRAY(S->a, sema_val, v->n + 1);
        if (!copy) return false;
        memcpy(copy, v->elems, sizeof(sema_val) * (size_t)v->n);
        v->elems = copy;
        for (int k = 0; k < v->n; k++)
            if (!result_template(S, &v->elems[k], rets, n, cap, loc)) return false;
        return true;
    }
    case SV_DESC:
        diag_error(S->d, loc, "a fn cannot return a tensor descriptor");
        return false;
    case SV_LIST:
        diag_error(S->d, loc, "a fn cannot return a list");
        return false;
    default:
        return true;
    }
}

/* Elaborate fn body for one argument signature. */
static sema_spec *specialise(sema *S, sema_item *fn, const char *key, sema_val *args, blk_loc call_loc) {
    ast_node *f = fn->ast;
    sema_spec *sp = ARENA_NEW(S->a, sema_spec);
    if (!sp) return NULL;
    sp->key = key;
    blk_strbuf mangled;
    sb_init(&mangled);
    sb_puts(&mangled, fn->name);
    for (int k = 0; k < f->params.len; k++) {
        sb_putc(&mangled, k ? '_' : '.');
        mangle_arg(&mangled, args[k]);
    }
    const char *name = unique_fn_name(S, arena_strdup(S->a, sb_str(&mangled)));
    sb_free(&mangled);
    ir_func *g = ir_func_new(S->c->ir, name, false, f->loc);
    if (!g) return NULL;
    sp->func = g;

    sema_fnctx F = {.caller = S->fn, .call_loc = call_loc, .item = fn, .func = g, .unit = fn->unit};
    F.b = (ir_builder){g, g->body, NULL, f->loc};
    sema_fnctx *saved_fn = S->fn;
    int saved_unit = S->unit, errors = S->d->nerrors;
    S->fn = &F;
    S->unit = fn->unit;
    S->call_depth++;
    for (int k = 0; k < f->params.len; k++) {
        ast_node *p = f->params.data[k];
        sema_val v = args[k];
        if (v.kind == SV_VALUE) v = sema_value(ir_func_add_param(g, v.type, p->name));
        sema_bind(S, p->name, BIND_PARAM, v, sema_name_loc(p));
    }
    sema_val ret = sema_void();
    sema_fn_body(S, f->body, &ret);
    if (f->type && ret.kind != SV_ERROR) {
        ir_type want;
        blk_loc rloc = f->type->loc;
        if (!sema_type_from_ast(S, f->type, &want)) ret = sema_error();
        else if (ret.kind == SV_VOID) {
            diag_error(S->d, rloc, "fn '%s' declares a result of type %s but returns no value", fn->name,
                       sema_ir_type_str(S, want));
            ret = sema_error();
        } else {
            ret = sema_check_annotation(S, ret, want, rloc, "the result of fn", fn->name);
        }
    }
    ir_value **rets = NULL;
    int n = 0, cap = 0;
    if (ret.kind != SV_ERROR && !result_template(S, &ret, &rets, &n, &cap, f->loc)) ret = sema_error();
    ir_inst *r = sema_inst(S, IR_RETURN, f->loc, rets, n, NULL, 0, 0);
    (void)r;
    for (int k = 0; k < n; k++) VEC_PUSH(S->a, g->result_types, rets[k]->type);
    sp->result = ret;
    sp->expanded = F.expanded;
    S->call_depth--;
    S->fn = saved_fn;
    S->unit = saved_unit;
    sp->failed = S->d->nerrors > errors || ret.kind == SV_ERROR;
    VEC_PUSH(S->a, fn->specs, sp);
    return sp;
}

static bool check_recursion(sema *S, sema_item *fn, blk_loc loc) {
    sema_fnctx *F = S->fn;
    while (F && F->item != fn) F = F->caller;
    if (F) {
        diag_error(S->d, loc, "recursive call to '%s' (fns are inlined, so they cannot recurse)", fn->name);
        /* the chain, outermost first */
        sema_fnctx *chain[COMPILE_MAX_INLINE_DEPTH + 2];
        int n = 0;
        for (sema_fnctx *G = S->fn; G && n < COMPILE_MAX_INLINE_DEPTH + 1; G = G->caller) {
            chain[n++] = G;
            if (G == F) break;
        }
        for (int k = n - 1; k >= 0; k--)
            diag_note(S->d, chain[k]->call_loc, "'%s' is called here", chain[k]->item->name);
        return false;
    }
    if (S->call_depth >= COMPILE_MAX_INLINE_DEPTH) {
        diag_error(S->d, loc, "fn calls nested more than %d deep", COMPILE_MAX_INLINE_DEPTH);
        return false;
    }
    return true;
}

/* The inlining bound. Sema emits each specialisation once, but the inline
 * pass copies a callee's body per call, so sizes multiply: fns that each call
 * the next one twice double per level. Each specialisation knows its size
 * after inlining (sema_spec.expanded); a call adds the callee's to the
 * caller's, which must stay within SEMA_MAX_INSTS — for a kernel together
 * with the kernels lowered before it, as the limit is per compilation. */
static bool inline_size_ok(sema *S, sema_item *fn, sema_spec *sp, blk_loc loc) {
    sema_fnctx *F = S->fn;
    int64_t before = F->is_kernel ? S->kernels_expanded : 0;
    if (before + F->expanded + sp->expanded <= SEMA_MAX_INSTS) return true;
    if (!S->size_reported) {
        S->size_reported = true; /* stops elaborating: one report, no more expansion */
        diag_error(S->d, loc, "inlining '%s' would make %s '%s' larger than %d instructions", fn->name,
                   F->is_kernel ? "kernel" : "fn", F->item->name, SEMA_MAX_INSTS);
        diag_note(S->d, sema_name_loc(fn->ast), "'%s' expands to %lld instructions with the fn calls in it inlined",
                  fn->name, (long long)sp->expanded);
        if (before)
            diag_note(S->d, sema_name_loc(F->item->ast), "the kernels compiled before '%s' take %lld of them",
                      F->item->name, (long long)before);
        sema_fnctx *G = F; /* in a fn: the kernel's call that led here */
        while (G->caller && !G->caller->is_kernel) G = G->caller;
        if (!G->is_kernel && G->caller)
            diag_note(S->d, G->call_loc, "'%s' is called from kernel '%s' here", G->item->name,
                      G->caller->item->name);
    }
    return false;
}

/* Call a specialisation: IR_CALL on the run-time arguments. */
static sema_val emit_call(sema *S, sema_item *fn, sema_spec *sp, sema_val *args, int n, blk_loc loc) {
    if (sp->failed) return sema_error();
    ir_value **ops = ARENA_ARRAY(S->a, ir_value *, n + 1);
    if (!ops) return sema_error();
    int nops = 0;
    for (int k = 0; k < n; k++)
        if (args[k].kind == SV_VALUE) ops[nops++] = args[k].v;
    ir_func *g = sp->func;
    if (g->result_types.len == 0 && g->body->first == g->body->last) /* a fn that only computed constants */
        return sema_fill_results(S, sp->result, NULL);
    if (!inline_size_ok(S, fn, sp, loc)) return sema_error();
    ir_inst *call = sema_inst(S, IR_CALL, loc, ops, nops, g->result_types.data, g->result_types.len, 0);
    if (!call) return sema_error();
    call->callee = g;
    S->fn->expanded += sp->expanded;
    return sema_fill_results(S, sp->result, call);
}

static sema_spec *find_or_specialise(sema *S, sema_item *fn, sema_val *args, blk_loc loc) {
    blk_strbuf key;
    sb_init(&key);
    for (int k = 0; k < fn->ast->params.len; k++) key_of(S, &key, args[k]);
    const char *ks = arena_strdup(S->a, sb_str(&key));
    sb_free(&key);
    if (!ks) return NULL; /* out of memory: the arena reports it */
    for (int k = 0; k < fn->specs.len; k++)
        if (strcmp(fn->specs.data[k]->key, ks) == 0) return fn->specs.data[k];
    return specialise(S, fn, ks, args, loc);
}

/* Call a device fn with evaluated arguments (args[k] named by names[k] or NULL). */
static sema_val call_fn(sema *S, sema_item *fn, ast_node *call, sema_val *args, ast_node **arg_nodes,
                        const char **names, int nargs) {
    if (fn->bad_params) return sema_error(); /* reported at its definition */
    ast_node *f = fn->ast;
    int np = f->params.len;
    sema_val *bound = ARENA_ARRAY(S->a, sema_val, np + 1);
    bool *set = ARENA_ARRAY(S->a, bool, np + 1);
    if (!bound || !set) return sema_error();
    int npos = 0;
    for (int k = 0; k < nargs; k++) {
        if (names[k]) {
            int p = 0;
            while (p < np && strcmp(f->params.data[p]->name, names[k]) != 0) p++;
            if (p == np) {
                diag_error(S->d, arg_nodes[k]->loc, "fn '%s' has no parameter named '%s'", fn->name, names[k]);
                diag_note(S->d, sema_name_loc(f), "'%s' is defined here", fn->name);
                return sema_error();
            }
            if (set[p]) {
                diag_error(S->d, arg_nodes[k]->loc, "parameter '%s' of fn '%s' is given twice", names[k], fn->name);
                return sema_error();
            }
            set[p] = true;
            bound[p] = args[k];
        } else {
            if (npos < np && set[npos]) {
                diag_error(S->d, arg_nodes[k]->loc, "positional argument after named arguments");
                return sema_error();
            }
            if (npos < np) {
                set[npos] = true;
                bound[npos] = args[k];
            }
            npos++;
        }
    }
    int given = 0;
    for (int p = 0; p < np; p++) given += set[p];
    if (npos > np || given < np) {
        diag_error(S->d, call->loc, "fn '%s' takes %d argument%s, got %d", fn->name, np, np == 1 ? "" : "s", nargs);
        diag_note(S->d, sema_name_loc(f), "'%s' is defined here", fn->name);
        return sema_error();
    }
    for (int p = 0; p < np; p++) {
        ast_node *param = f->params.data[p];
        sema_val *v = &bound[p];
        blk_loc aloc = call->loc;
        for (int k = 0; k < nargs; k++)
            if ((names[k] && strcmp(names[k], param->name) == 0) || (!names[k] && k == p)) aloc = arg_nodes[k]->loc;
        switch (v->kind) {
        case SV_VALUE: case SV_CONST: case SV_DTYPE: case SV_FN: case SV_STRING: case SV_NONE: break;
        case SV_VOID:
            diag_error(S->d, aloc, "this argument has no value");
            return sema_error();
        default:
            diag_error(S->d, aloc, "a %s cannot be passed to a fn%s", sema_kind_name(*v),
                       v->kind == SV_TUPLE ? "; pass its elements" : "");
            return sema_error();
        }
        if (param->is_const && v->kind == SV_VALUE) {
            diag_error(S->d, aloc, "argument '%s' of fn '%s' must be a compile-time constant", param->name, fn->name);
            diag_note(S->d, sema_name_loc(param), "'%s' is declared const here", param->name);
            return sema_error();
        }
        if (param->type) {
            ir_type want;
            if (!sema_type_from_ast(S, param->type, &want)) return sema_error();
            int errs = S->d->nerrors;
            *v = sema_check_annotation(S, *v, want, aloc, "argument", param->name);
            if (v->kind == SV_ERROR) {
                if (S->d->nerrors > errs) diag_note(S->d, sema_name_loc(param), "parameter '%s' of '%s' is declared here",
                                                    param->name, fn->name);
                return sema_error();
            }
        }
    }
    if (!S->fn) {
        diag_error(S->d, call->loc, "a fn call is not a compile-time constant");
        return sema_error();
    }
    if (!check_recursion(S, fn, call->loc)) return sema_error();
    sema_spec *sp = find_or_specialise(S, fn, bound, call->loc);
    if (!sp) return sema_error();
    return emit_call(S, fn, sp, bound, np, call->loc);
}

sema_val sema_call_values(sema *S, sema_item *fn, ir_value **vals, int n, blk_loc loc) {
    if (fn->bad_params) return sema_error(); /* reported at its definition */
    ast_node *f = fn->ast;
    if (f->params.len != n) {
        diag_error(S->d, loc, "combine fn '%s' must take %d arguments, it takes %d", fn->name, n, f->params.len);
        diag_note(S->d, sema_name_loc(f), "'%s' is defined here", fn->name);
        return sema_error();
    }
    sema_val args[4];
    for (int k = 0; k < n && k < 4; k++) {
        args[k] = sema_value(vals[k]);
        ast_node *param = f->params.data[k];
        if (param->type) {
            ir_type want;
            if (!sema_type_from_ast(S, param->type, &want)) return sema_error();
            args[k] = sema_check_annotation(S, args[k], want, loc, "argument", param->name);
            if (args[k].kind == SV_ERROR) return args[k];
        }
    }
    if (!check_recursion(S, fn, loc)) return sema_error();
    sema_spec *sp = find_or_specialise(S, fn, args, loc);
    if (!sp) return sema_error();
    return emit_call(S, fn, sp, args, n, loc);
}

/* ---- call expressions ---- */

/* x.to(f16), x.sum(0), ...: blk values have no methods. */
static void report_method(sema *S, ast_node *callee, sema_val obj, ast_node *call) {
    const char *m = callee->name;
    if (strcmp(m, "to") == 0) {
        ast_node *a = call->args.len ? call->args.data[0] : NULL;
        bool bitcast = false;
        for (int k = 1; k < call->args.len; k++) {
            ast_node *n = call->args.data[k];
            bitcast |= n->kind == AST_NAMED_ARG && n->name && strcmp(n->name, "bitcast") == 0;
        }
        const char *t = a && a->kind == AST_NAME ? a->name : a && a->kind == AST_FIELD ? a->name : "T";
        if (sema_triton_spelling(t)) t = sema_triton_spelling(t);
        if (bitcast)
            diag_error(S->d, callee->loc, "%s has no method 'to': blk reinterprets bits with 'bitcast(x, %s)'",
                       sema_type_str(S, obj), t);
        else
            diag_error(S->d, callee->loc, "%s has no method 'to': blk converts with 'as', as in 'x as %s'",
                       sema_type_str(S, obj), t);
        return;
    }
    if (sema_builtin_find(m))
        diag_error(S->d, callee->loc, "%s has no method '%s': blk writes builtins as functions, '%s(x, ...)'",
                   sema_type_str(S, obj), m, m);
    else
        diag_error(S->d, callee->loc, "%s has no method '%s'", sema_type_str(S, obj), m);
}

sema_val sema_call_expr(sema *S, ast_node *e) {
    ast_node *callee = e->lhs;
    sema_item *fn = NULL;
    if (callee->kind == AST_NAME) {
        sema_val v;
        sema_binding *b = NULL;
        if (sema_lookup(S, callee->name, callee->loc, &v, &b)) {
            if (v.kind == SV_ERROR) return v;
            if (v.kind != SV_FN) {
                diag_error(S->d, callee->loc, "'%s' is a %s, not a fn", callee->name, sema_kind_name(v));
                if (b) diag_note(S->d, b->loc, "'%s' is declared here", callee->name);
                return sema_error();
            }
            fn = v.item;
        } else {
            const sema_builtin *bi = sema_builtin_find(callee->name);
            if (bi) return sema_builtin_call(S, bi, e);
            sema_report_undefined(S, callee->name, callee->loc);
            for (int k = 0; k < e->args.len; k++) { /* still check the arguments */
                ast_node *a = e->args.data[k];
                sema_expr(S, a->kind == AST_NAMED_ARG ? a->lhs : a);
            }
            return sema_error();
        }
    } else if (callee->kind == AST_FIELD) {
        sema_val obj;
        if (sema_triton_prefix(S, callee)) {
            for (int k = 0; k < e->args.len; k++) { /* still check the arguments */
                ast_node *a = e->args.data[k];
                sema_expr(S, a->kind == AST_NAMED_ARG ? a->lhs : a);
            }
            return sema_error();
        }
        if (callee->lhs->kind == AST_NAME) {
            sema_binding *b;
            if (sema_lookup(S, callee->lhs->name, callee->lhs->loc, &obj, &b) && obj.kind == SV_MODULE) {
                sema_val f = sema_field_expr(S, callee);
                if (f.kind == SV_ERROR) return f;
                if (f.kind != SV_FN) {
                    diag_error(S->d, callee->loc, "'%s.%s' is not a fn", callee->lhs->name, callee->name);
                    return sema_error();
                }
                fn = f.item;
                goto user_fn;
            }
        }
        obj = sema_expr(S, callee->lhs);
        if (obj.kind == SV_ERROR) return obj;
        if (obj.kind == SV_DESC) return sema_desc_method(S, obj, callee->name, e);
        report_method(S, callee, obj, e);
        return sema_error();
    } else {
        diag_error(S->d, callee->loc, "this expression cannot be called");
        return sema_error();
    }
user_fn:;
    int n = e->args.len;
    sema_val *args = ARENA_ARRAY(S->a, sema_val, n + 1);
    ast_node **nodes = ARENA_ARRAY(S->a, ast_node *, n + 1);
    const char **names = ARENA_ARRAY(S->a, const char *, n + 1);
    if (!args || !nodes || !names) return sema_error();
    bool bad = false;
    for (int k = 0; k < n; k++) {
        ast_node *a = e->args.data[k];
        names[k] = a->kind == AST_NAMED_ARG ? a->name : NULL;
        nodes[k] = a->kind == AST_NAMED_ARG ? a->lhs : a;
        args[k] = sema_expr(S, nodes[k]);
        if (args[k].kind == SV_ERROR) bad = true;
    }
    if (bad) return sema_error();
    return call_fn(S, fn, e, args, nodes, names, n);
}


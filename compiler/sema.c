/* sema.c — from AST to Block IR: modules, items, consts, kernels, fns.
 *
 * sema_build walks the main module's items and its imports, then lowers each
 * kernel once, for the const parameter values of this compilation:
 *
 *   1. modules: every unit's items go in a name table (duplicates are
 *      errors); imports are followed depth first, so a cycle is seen as an
 *      import of a unit still in progress;
 *   2. module consts are evaluated lazily (cycles detected), the main
 *      module's eagerly so that their errors show even when unused;
 *   3. a kernel becomes one IR function: const params are bound to their
 *      values (-D, default, first autotune config), runtime params become IR
 *      params, attributes set num_warps/num_stages, the body is elaborated;
 *   4. a device fn is specialised per distinct argument signature (types,
 *      shapes, const values) into an IR function `name.sig` that calls reach
 *      through IR_CALL (the inline pass inlines them). Const parts of a fn's
 *      result stay const at the call site, so `BLOCK * factor(2)`-like shape
 *      math folds.
 */
#include <string.h>

#include "sema_internal.h"

/* ---- name maps ---- */

static uint64_t name_hash(const char *s) { return hash_bytes(s, strlen(s), 0); }

void *sema_map_get(const sema_map *m, const char *key) {
    if (!m->cap || !key) return NULL;
    for (uint64_t h = name_hash(key) & (uint64_t)(m->cap - 1);; h = (h + 1) & (uint64_t)(m->cap - 1)) {
        if (!m->keys[h]) return NULL;
        if (strcmp(m->keys[h], key) == 0) return m->vals[h];
    }
}

void sema_map_put(blk_arena *a, sema_map *m, const char *key, void *val) {
    if ((m->len + 1) * 2 > m->cap) {
        int cap = m->cap ? m->cap * 2 : 16;
        const char **keys = ARENA_ARRAY(a, const char *, cap);
        void **vals = ARENA_ARRAY(a, void *, cap);
        if (!keys || !vals) return;
        for (int k = 0; k < m->cap; k++) {
            if (!m->keys[k]) continue;
            uint64_t h = name_hash(m->keys[k]) & (uint64_t)(cap - 1);
            while (keys[h]) h = (h + 1) & (uint64_t)(cap - 1);
            keys[h] = m->keys[k];
            vals[h] = m->vals[k];
        }
        m->keys = keys;
        m->vals = vals;
        m->cap = cap;
    }
    uint64_t h = name_hash(key) & (uint64_t)(m->cap - 1);
    while (m->keys[h] && strcmp(m->keys[h], key) != 0) h = (h + 1) & (uint64_t)(m->cap - 1);
    if (!m->keys[h]) m->len++;
    m->keys[h] = key;
    m->vals[h] = val;
}

/* ---- recursion guard ---- */

bool sema_enter(sema *S, blk_loc loc) {
    if (S->depth >= SEMA_MAX_DEPTH) {
        if (!S->size_reported) {
            S->size_reported = true;
            diag_error(S->d, loc, "program nested too deeply (more than %d levels of expressions, statements "
                       "and calls)", SEMA_MAX_DEPTH);
        }
        return false;
    }
    S->depth++;
    return true;
}

void sema_leave(sema *S) { S->depth--; }

/* ---- units and items ---- */

sema_unit *sema_unit_get(sema *S, int index) {
    while (S->units.len <= index) {
        sema_unit *u = ARENA_NEW(S->a, sema_unit);
        if (!u) return NULL;
        u->index = S->units.len;
        VEC_PUSH(S->a, S->units, u);
    }
    return S->units.data[index];
}

static blk_loc name_loc(ast_node *n) { return n->op_loc.file >= 0 && n->op_loc.len ? n->op_loc : n->loc; }

static const char *base_name(const char *path) {
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

static const char *unit_name(sema *S, int u) {
    return u < S->c->units.len && S->c->units.data[u].path ? base_name(S->c->units.data[u].path) : "?";
}

/* A kernel's or fn's parameter list: at most SEMA_MAX_PARAMS parameters,
 * reported at the first one over the limit, and distinct names (one pass
 * over a hash map, not every pair). Returns false after an error. */
static bool check_params(sema *S, ast_node *n, const char *what) {
    if (n->params.len > SEMA_MAX_PARAMS) {
        diag_error(S->d, name_loc(n->params.data[SEMA_MAX_PARAMS]),
                   "%s '%s' has %d parameters, more than the limit of %d", what, n->name, n->params.len,
                   SEMA_MAX_PARAMS);
        return false;
    }
    bool ok = true;
    sema_map seen = {0};
    for (int k = 0; k < n->params.len; k++) {
        ast_node *param = n->params.data[k];
        if (!param->name) continue;
        ast_node *first = sema_map_get(&seen, param->name);
        if (first) {
            diag_error(S->d, name_loc(param), "duplicate parameter '%s'", param->name);
            diag_note(S->d, name_loc(first), "'%s' is first declared here", param->name);
            ok = false;
        } else {
            sema_map_put(S->a, &seen, param->name, param);
        }
    }
    return ok;
}

static void add_item(sema *S, sema_unit *U, ast_node *n, sema_item_kind kind) {
    if (!n->name) return;
    sema_item *prev = sema_map_get(&U->items, n->name);
    if (prev) {
        diag_error(S->d, name_loc(n), "duplicate definition of '%s'", n->name);
        diag_note(S->d, name_loc(prev->ast), "'%s' is first defined here", n->name);
        return;
    }
    sema_item *it = ARENA_NEW(S->a, sema_item);
    if (!it) return;
    it->kind = kind;
    it->name = n->name;
    it->ast = n;
    it->unit = U->index;
    if (kind == ITEM_FN && !check_params(S, n, "fn")) it->bad_params = true;
    sema_map_put(S->a, &U->items, n->name, it);
    VEC_PUSH(S->a, U->item_list, it);
}

/* The units whose imports are being followed, outermost first. */
typedef VEC(int) unit_stack;

static void report_cycle(sema *S, unit_stack *stack, int target) {
    int start = 0;
    while (start < stack->len && stack->data[start] != target) start++;
    blk_strbuf chain;
    sb_init(&chain);
    for (int k = start; k < stack->len; k++) sb_printf(&chain, "%s -> ", unit_name(S, stack->data[k]));
    sb_puts(&chain, unit_name(S, target));
    sema_unit *T = sema_unit_get(S, target);
    diag_error(S->d, T->importing, "import cycle: %s", sb_str(&chain));
    sb_free(&chain);
    for (int k = start + 1; k < stack->len; k++) {
        int u = stack->data[k], next = k + 1 < stack->len ? stack->data[k + 1] : target;
        diag_note(S->d, sema_unit_get(S, u)->importing, "%s imports %s here", unit_name(S, u), unit_name(S, next));
    }
}

/* Collect a unit's items and follow its imports (depth first). */
static void process_unit(sema *S, int index, unit_stack *stack) {
    sema_unit *U = sema_unit_get(S, index);
    if (!U || U->state != 0) return;
    U->state = 1;
    ast_node *m = index < S->c->units.len ? S->c->units.data[index].ast : NULL;
    if (!m) {
        U->state = 2;
        return;
    }
    VEC_PUSH(S->a, *stack, index);
    for (int k = 0; k < m->args.len; k++) {
        ast_node *n = m->args.data[k];
        if (n->kind == AST_CONST) add_item(S, U, n, ITEM_CONST);
        else if (n->kind == AST_FN) add_item(S, U, n, ITEM_FN);
        else if (n->kind == AST_KERNEL) add_item(S, U, n, ITEM_KERNEL);
    }
    for (int k = 0; k < m->args.len; k++) {
        ast_node *n = m->args.data[k];
        if (n->kind != AST_IMPORT) continue;
        U->importing = n->loc;
        int v = compile_import(S->c, n->str, index, n->loc);
        if (v < 0) continue;
        sema_unit *V = sema_unit_get(S, v);
        if (!V) continue;
        if (V->state == 1) {
            report_cycle(S, stack, v);
            continue;
        }
        process_unit(S, v, stack);
        U = sema_unit_get(S, index); /* the units vector may have grown */
        if (n->name) {
            if (sema_map_get(&U->items, n->name) || sema_map_get(&U->aliases, n->name)) {
                diag_error(S->d, name_loc(n), "import alias '%s' is already defined in this file", n->name);
                continue;
            }
            sema_map_put(S->a, &U->aliases, n->name, (void *)(intptr_t)(v + 1));
        } else {
            bool seen = false;
            for (int j = 0; j < U->imports.len; j++) seen |= U->imports.data[j] == v;
            if (!seen && v != index) VEC_PUSH(S->a, U->imports, v);
        }
    }
    stack->len--;
    U->state = 2;
}

sema_item *sema_unit_lookup_item(sema *S, int unit, const char *name) {
    sema_unit *U = sema_unit_get(S, unit);
    return U ? sema_map_get(&U->items, name) : NULL;
}

/* Evaluate a module const (once). Consts are evaluated in their own unit
 * with no function context, so anything needing run-time IR is an error. */
static sema_val eval_const_item(sema *S, sema_item *it, blk_loc use) {
    if (it->state == 2) return it->value;
    if (it->state == 1) {
        diag_error(S->d, use, "const '%s' is defined in terms of itself", it->name);
        int start = 0;
        while (start < S->const_stack.len && S->const_stack.data[start] != it) start++;
        for (int k = start; k < S->const_stack.len; k++)
            diag_note(S->d, name_loc(S->const_stack.data[k]->ast), "'%s' is defined here",
                      S->const_stack.data[k]->name);
        return sema_error();
    }
    it->state = 1;
    VEC_PUSH(S->a, S->const_stack, it);
    sema_fnctx *saved_fn = S->fn;
    int saved_unit = S->unit;
    S->fn = NULL;
    S->unit = it->unit;
    ast_node *n = it->ast;
    sema_val v = sema_expr(S, n->rhs);
    if (v.kind == SV_CONST && n->type) {
        ir_type t;
        if (!sema_type_from_ast(S, n->type, &t)) v = sema_error();
        else if (t.rank > 0 || t.dtype == DT_PTR) {
            diag_error(S->d, n->type->loc, "a const has a scalar type, not %s", sema_ir_type_str(S, t));
            v = sema_error();
        } else {
            v = sema_check_annotation(S, v, t, n->rhs->loc, "const", n->name);
        }
    } else if (v.kind == SV_VOID) {
        diag_error(S->d, n->rhs->loc, "this expression has no value");
        v = sema_error();
    } else if (v.kind == SV_DESC || v.kind == SV_VALUE) {
        diag_error(S->d, n->rhs->loc, "a module const must be a compile-time constant");
        v = sema_error();
    }
    S->fn = saved_fn;
    S->unit = saved_unit;
    S->const_stack.len--;
    it->state = 2;
    it->value = v;
    return v;
}

sema_val sema_item_value(sema *S, sema_item *it, blk_loc use) {
    switch (it->kind) {
    case ITEM_CONST: return eval_const_item(S, it, use);
    case ITEM_FN: return (sema_val){.kind = SV_FN, .item = it};
    case ITEM_KERNEL:
        diag_error(S->d, use, "'%s' is a kernel; kernels are launched from the host, not used in blk code",
                   it->name);
        return sema_error();
    }
    return sema_error();
}

bool sema_lookup(sema *S, const char *name, blk_loc loc, sema_val *out, sema_binding **binding) {
    *binding = NULL;
    if (!name) return false;
    if (S->fn) {
        sema_binding *b = sema_map_get(&S->fn->names, name);
        if (b) {
            *binding = b;
            *out = b->val;
            return true;
        }
    }
    sema_unit *U = sema_unit_get(S, S->unit);
    if (!U) return false;
    sema_item *it = sema_map_get(&U->items, name);
    if (it) {
        *out = sema_item_value(S, it, loc);
        return true;
    }
    void *alias = sema_map_get(&U->aliases, name);
    if (alias) {
        *out = (sema_val){.kind = SV_MODULE, .unit = (int)(intptr_t)alias - 1};
        return true;
    }
    for (int k = 0; k < U->imports.len; k++) {
        it = sema_unit_lookup_item(S, U->imports.data[k], name);
        if (it && it->kind != ITEM_KERNEL) {
            *out = sema_item_value(S, it, loc);
            return true;
        }
    }
    return false;
}

/* ---- undefined names: "did you mean" ---- */

static int edit_distance(const char *a, const char *b, int limit) {
    int la = (int)strlen(a), lb = (int)strlen(b);
    if (la - lb > limit || lb - la > limit || la > 64 || lb > 64) return limit + 1;
    int row[65];
    for (int j = 0; j <= lb; j++) row[j] = j;
    for (int i = 1; i <= la; i++) {
        int diag = row[0];
        row[0] = i;
        for (int j = 1; j <= lb; j++) {
            int up = row[j];
            int best = diag + (a[i - 1] != b[j - 1]);
            if (up + 1 < best) best = up + 1;
            if (row[j - 1] + 1 < best) best = row[j - 1] + 1;
            row[j] = best;
            diag = up;
        }
    }
    return row[lb];
}

typedef struct {
    const char *name;
    const char *best;
    int best_dist;
    int limit;
} suggestion;

static void consider(suggestion *s, const char *cand) {
    if (!cand || strcmp(cand, s->name) == 0) return;
    int d = edit_distance(s->name, cand, s->limit);
    if (d <= s->limit && d < s->best_dist) {
        s->best = cand;
        s->best_dist = d;
    }
}

static void consider_map(suggestion *s, const sema_map *m) {
    for (int k = 0; k < m->cap; k++) consider(s, m->keys[k]);
}

void sema_report_undefined(sema *S, const char *name, blk_loc loc) {
    if (S->fn) {
        if (sema_map_get(&S->fn->undefined, name)) return; /* reported once per function */
        sema_map_put(S->a, &S->fn->undefined, name, (void *)1);
    }
    /* Python spellings a Triton user brings along */
    static const char *const python[][2] = {{"True", "true"}, {"False", "false"}, {"elif", "else if"},
                                            {"and", "&&"}, {"or", "||"}, {"not", "!"}};
    for (size_t k = 0; k < sizeof python / sizeof python[0]; k++)
        if (strcmp(name, python[k][0]) == 0) {
            diag_error(S->d, loc, "undefined name '%s': blk writes '%s'", name, python[k][1]);
            return;
        }
    int len = (int)strlen(name);
    suggestion s = {name, NULL, 1 << 30, len <= 2 ? 0 : len <= 5 ? 1 : 2};
    if (s.limit > 0 && !diag_should_stop(S->d)) {
        if (S->fn)
            for (int k = 0; k < S->fn->stack.len; k++) consider(&s, S->fn->stack.data[k]->name);
        sema_unit *U = sema_unit_get(S, S->unit);
        if (U) {
            consider_map(&s, &U->items);
            consider_map(&s, &U->aliases);
            for (int k = 0; k < U->imports.len; k++) consider_map(&s, &sema_unit_get(S, U->imports.data[k])->items);
        }
        for (int k = 0; sema_builtin_name(k); k++) consider(&s, sema_builtin_name(k));
    }
    if (s.best) diag_error(S->d, loc, "undefined name '%s'; did you mean '%s'?", name, s.best);
    else diag_error(S->d, loc, "undefined name '%s'", name);
}

const char *sema_closest_name(const char *name, const char *const *cands, int n) {
    int len = (int)strlen(name);
    suggestion s = {name, NULL, 1 << 30, len <= 2 ? 0 : len <= 5 ? 1 : 2};
    for (int k = 0; k < n && s.limit > 0; k++) consider(&s, cands[k]);
    return s.best;
}

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

static sema_val instantiate(sema *S, sema_val t, ir_inst *call) {
    if (t.kind == SV_VALUE) return sema_value(call && t.i < call->num_results ? call->results[t.i] : NULL);
    if (t.kind == SV_TUPLE) {
        sema_val r = t;
        r.elems = ARENA_ARRAY(S->a, sema_val, t.n + 1);
        if (!r.elems) return sema_error();
        for (int k = 0; k < t.n; k++) r.elems[k] = instantiate(S, t.elems[k], call);
        return r;
    }
    return t;
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
        sema_bind(S, p->name, BIND_PARAM, v, name_loc(p));
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
        diag_note(S->d, name_loc(fn->ast), "'%s' expands to %lld instructions with the fn calls in it inlined",
                  fn->name, (long long)sp->expanded);
        if (before)
            diag_note(S->d, name_loc(F->item->ast), "the kernels compiled before '%s' take %lld of them",
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
        return instantiate(S, sp->result, NULL);
    if (!inline_size_ok(S, fn, sp, loc)) return sema_error();
    ir_inst *call = sema_inst(S, IR_CALL, loc, ops, nops, g->result_types.data, g->result_types.len, 0);
    if (!call) return sema_error();
    call->callee = g;
    S->fn->expanded += sp->expanded;
    return instantiate(S, sp->result, call);
}

static sema_spec *find_or_specialise(sema *S, sema_item *fn, sema_val *args, blk_loc loc) {
    blk_strbuf key;
    sb_init(&key);
    for (int k = 0; k < fn->ast->params.len; k++) key_of(S, &key, args[k]);
    const char *ks = arena_strdup(S->a, sb_str(&key));
    sb_free(&key);
    for (int k = 0; k < fn->specs.len; k++)
        if (strcmp(fn->specs.data[k]->key, ks) == 0) return fn->specs.data[k];
    return specialise(S, fn, ks, args, loc);
}

sema_val sema_call_fn(sema *S, sema_item *fn, ast_node *call, sema_val *args, ast_node **arg_nodes,
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
                diag_note(S->d, name_loc(f), "'%s' is defined here", fn->name);
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
        diag_note(S->d, name_loc(f), "'%s' is defined here", fn->name);
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
            diag_note(S->d, name_loc(param), "'%s' is declared const here", param->name);
            return sema_error();
        }
        if (param->type) {
            ir_type want;
            if (!sema_type_from_ast(S, param->type, &want)) return sema_error();
            int errs = S->d->nerrors;
            *v = sema_check_annotation(S, *v, want, aloc, "argument", param->name);
            if (v->kind == SV_ERROR) {
                if (S->d->nerrors > errs) diag_note(S->d, name_loc(param), "parameter '%s' of '%s' is declared here",
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
        diag_note(S->d, name_loc(f), "'%s' is defined here", fn->name);
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

/* ---- kernels ---- */

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

/* const NAME[: T] [= default] — the value of this compilation. */
static void bind_const_param(sema *S, ast_node *k, ast_node *p, ast_node *config, bool *use_config) {
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
    blk_loc vloc = name_loc(p);
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
        diag_error(S->d, name_loc(p), "const parameter '%s' of kernel '%s' has no value: give it a default or pass "
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
        sema_bind(S, p->name, BIND_PARAM, v, name_loc(p));
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
        f->num_warps = (int)v.i;
    } else if (strcmp(p->name, "num_stages") == 0) {
        if (!sema_is_const_int(v) || !check_num_stages(S, v.i, vloc)) goto fail;
        f->num_stages = (int)v.i;
    }
    record_const(S, f, p->name, v);
    sema_bind(S, p->name, BIND_PARAM, v, name_loc(p));
    return;
fail:
    sema_bind(S, p->name, BIND_PARAM, sema_error(), name_loc(p));
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

static void lower_kernel(sema *S, sema_item *item) {
    ast_node *k = item->ast;
    check_params(S, k, "kernel");
    if (k->params.len > SEMA_MAX_PARAMS) return; /* reported; the body would only add noise */
    ir_func *f = ir_func_new(S->c->ir, k->name, true, k->loc);
    if (!f) return;
    sema_fnctx F = {.item = item, .func = f, .unit = item->unit, .is_kernel = true};
    F.b = (ir_builder){f, f->body, NULL, k->loc};
    S->fn = &F;
    S->unit = item->unit;

    /* attributes: validate; values are applied after the params (a const param wins) */
    int64_t num_warps = 0, num_stages = 0;
    ast_node *config = NULL, *no_spec = NULL;
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
            if (nw && check_num_warps(S, v, attr->args.data[0]->loc)) num_warps = v;
            if (ns && check_num_stages(S, v, attr->args.data[0]->loc)) num_stages = v;
        } else if (strcmp(an, "autotune") == 0) {
            config = check_autotune(S, k, attr);
        } else if (strcmp(an, "do_not_specialize") == 0) {
            if (!no_spec) no_spec = attr; /* a second one is reported above */
        } else {
            diag_error(S->d, attr->loc,
                       "unknown kernel attribute '@%s' (known: @num_warps, @num_stages, @autotune, @do_not_specialize)",
                       an);
        }
    }
    if (num_warps) f->num_warps = (int)num_warps;
    if (num_stages) f->num_stages = (int)num_stages;

    bool use_config = false;
    for (int p = 0; p < k->params.len; p++) {
        ast_node *param = k->params.data[p];
        if (param->is_const) {
            bind_const_param(S, k, param, config, &use_config);
            continue;
        }
        ir_type t;
        if (!param->type) {
            diag_error(S->d, name_loc(param), "kernel parameter '%s' needs a type", param->name);
            sema_bind(S, param->name, BIND_PARAM, sema_error(), name_loc(param));
            continue;
        }
        if (!sema_type_from_ast(S, param->type, &t)) {
            sema_bind(S, param->name, BIND_PARAM, sema_error(), name_loc(param));
            continue;
        }
        if (t.rank > 0) {
            diag_error(S->d, param->type->loc, "a kernel parameter is a scalar or a pointer, not %s",
                       sema_ir_type_str(S, t));
            sema_bind(S, param->name, BIND_PARAM, sema_error(), name_loc(param));
            continue;
        }
        sema_bind(S, param->name, BIND_PARAM, sema_value(ir_func_add_param(f, t, param->name)), name_loc(param));
    }
    if (no_spec) check_do_not_specialize(S, k, no_spec, f);
    /* the first autotune config, when it had to supply a value, also sets
     * num_warps/num_stages unless a const param or -D does */
    const char *launch[2] = {"num_warps", "num_stages"};
    for (int j = 0; j < 2; j++) {
        const compile_define *d = find_define(S, launch[j]);
        ast_node *e = use_config ? config_entry(config, launch[j]) : NULL;
        if (find_param(k, launch[j])) continue;
        int64_t v;
        if (d && !d->is_float && !d->is_bool) v = d->ival;
        else if (e && const_int_arg(S, e, launch[j], &v)) {}
        else continue;
        if (j == 0 && check_num_warps(S, v, e ? e->loc : LOC_NONE)) f->num_warps = (int)v;
        if (j == 1 && check_num_stages(S, v, e ? e->loc : LOC_NONE)) f->num_stages = (int)v;
    }

    bool terminated = sema_block(S, k->body);
    if (!terminated) sema_inst(S, IR_RETURN, k->loc, NULL, 0, NULL, 0, 0);
    S->kernels_expanded += F.expanded;
    S->fn = NULL;
}

int sema_build(blkc_ctx *c, const char *kernel) {
    sema S0 = {.c = c, .a = c->arena, .d = &c->diag};
    sema *S = &S0;
    int errors = c->diag.nerrors;
    c->ir = ir_module_new(c->arena);
    if (!c->ir) return 1;
    if (!c->units.len || !c->units.data[0].ast) {
        diag_error(S->d, LOC_NONE, "no module to check");
        return 1;
    }
    unit_stack stack = {0};
    process_unit(S, 0, &stack);
    sema_unit *main_unit = sema_unit_get(S, 0);
    S->unit = 0;
    for (int k = 0; k < main_unit->item_list.len && !diag_should_stop(S->d); k++) {
        sema_item *it = main_unit->item_list.data[k];
        if (it->kind == ITEM_CONST) sema_item_value(S, it, name_loc(it->ast));
    }
    bool found = false;
    for (int k = 0; k < main_unit->item_list.len && !diag_should_stop(S->d); k++) {
        sema_item *it = main_unit->item_list.data[k];
        if (it->kind != ITEM_KERNEL || (kernel && strcmp(it->name, kernel) != 0)) continue;
        found = true;
        S->depth = 0;
        S->call_depth = 0;
        lower_kernel(S, it);
    }
    if (kernel && !found) diag_error(S->d, LOC_NONE, "no kernel named '%s' in %s", kernel, c->units.data[0].path);
    return c->diag.nerrors - errors;
}

/* stmt.c — statements and structured control flow.
 *
 * Elaboration updates a var's binding in place as assignments are met
 * (scope.c), so straight-line code needs no SSA construction. Regions need
 * it: before an if, for or while is emitted, its bodies are scanned for
 * assignments; the vars they assign are "carried":
 *
 *   if     results = carried vars; each region yields their values at its end
 *   for    inits = their values before; region args (iv, carried...); the
 *          body yields them; results = their values after the loop
 *   while  the same, with the condition in a region of its own
 *
 * A carried var is pinned to its type and shape for the duration: an
 * assignment of anything else is an error showing both sites. break and
 * continue carry the innermost loop's vars as they are at that point.
 *
 * A fn's `return` is allowed only in tail position (the last statement, or
 * the last statement of both branches of a final if/else, recursively), so a
 * fn body always ends in exactly one IR_RETURN — the inline pass relies on it.
 */
#include <string.h>

#include "sema/stmt.h"

/* ---- carried vars ---- */

typedef VEC(const char *) name_list;

/* Names assigned anywhere in a statement, in source order. */
static void collect_assigned(sema *S, ast_node *n, sema_map *seen, name_list *names, int depth) {
    if (!n || depth > COMPILE_MAX_NESTING * 4) return;
    switch (n->kind) {
    case AST_ASSIGN:
        if (n->lhs && n->lhs->kind == AST_NAME && !sema_map_get(seen, n->lhs->name)) {
            sema_map_put(S->a, seen, n->lhs->name, n); /* the first assignment, for messages */
            VEC_PUSH(S->a, *names, n->lhs->name);
        }
        break;
    case AST_BLOCK:
        for (int k = 0; k < n->args.len; k++) collect_assigned(S, n->args.data[k], seen, names, depth + 1);
        break;
    case AST_IF:
        collect_assigned(S, n->then_body, seen, names, depth + 1);
        collect_assigned(S, n->else_body, seen, names, depth + 1);
        break;
    case AST_FOR:
    case AST_WHILE:
        collect_assigned(S, n->body, seen, names, depth + 1);
        break;
    default:
        break;
    }
}

typedef struct {
    sema_binding **vars;  /* carried */
    int n;
    sema_val *before;     /* their values before the construct */
    sema_binding **lost;  /* assigned, but not carriable: poisoned afterwards */
    int nlost;
} carry_set;

static void carry_begin(sema *S, ast_node *a, ast_node *b, bool by_loop, carry_set *cs) {
    memset(cs, 0, sizeof *cs);
    sema_map seen = {0};
    name_list names = {0};
    collect_assigned(S, a, &seen, &names, 0);
    collect_assigned(S, b, &seen, &names, 0);
    cs->vars = ARENA_ARRAY(S->a, sema_binding *, names.len + 1);
    cs->before = ARENA_ARRAY(S->a, sema_val, names.len + 1);
    cs->lost = ARENA_ARRAY(S->a, sema_binding *, names.len + 1);
    if (!cs->vars || !cs->before || !cs->lost) return;
    for (int k = 0; k < names.len; k++) {
        sema_binding *bd = sema_map_get(&S->fn->names, names.data[k]);
        if (!bd || bd->kind != BIND_VAR) continue;
        if (bd->val.kind == SV_CONST) {
            bd->val = sema_value(sema_materialize(S, bd->val, bd->loc));
            if (bd->val.kind == SV_VALUE && !bd->val.v->name) bd->val.v->name = bd->name;
        }
        if (bd->val.kind != SV_VALUE) {
            if (bd->val.kind != SV_ERROR) {
                ast_node *at = sema_map_get(&seen, bd->name);
                diag_error(S->d, at ? at->loc : bd->loc, "var '%s' holds a %s, which cannot be reassigned inside a %s",
                           bd->name, sema_kind_name(bd->val), by_loop ? "loop" : "branch");
                diag_note(S->d, bd->loc, "'%s' is declared here", bd->name);
            }
            cs->lost[cs->nlost++] = bd;
            continue;
        }
        if (bd->pins++ == 0) {
            bd->pin_type = bd->val.v->type;
            bd->pinned_by_loop = by_loop;
        }
        cs->before[cs->n] = bd->val;
        cs->vars[cs->n++] = bd;
    }
}

static ir_type *carry_types(sema *S, carry_set *cs) {
    ir_type *t = ARENA_ARRAY(S->a, ir_type, cs->n + 1);
    for (int k = 0; t && k < cs->n; k++) t[k] = cs->vars[k]->pin_type;
    return t;
}

static ir_value **carry_values(sema *S, sema_binding **vars, int n) {
    ir_value **v = ARENA_ARRAY(S->a, ir_value *, n + 1);
    for (int k = 0; v && k < n; k++) v[k] = vars[k]->val.kind == SV_VALUE ? vars[k]->val.v : NULL;
    return v;
}

static bool carry_ok(carry_set *cs) {
    for (int k = 0; k < cs->n; k++)
        if (cs->vars[k]->val.kind != SV_VALUE) return false;
    return true;
}

/* Set every carried var to `results` (NULL: back to the values before). */
static void carry_end(carry_set *cs, ir_value **results) {
    for (int k = 0; k < cs->n; k++) {
        sema_binding *bd = cs->vars[k];
        bd->val = results ? sema_value(results[k]) : cs->before[k];
        bd->pins--;
    }
    for (int k = 0; k < cs->nlost; k++) cs->lost[k]->val = sema_error();
}

static void carry_restore(carry_set *cs) {
    for (int k = 0; k < cs->n; k++) cs->vars[k]->val = cs->before[k];
}

/* The terminator of a region that falls off its end: yield the carried vars. */
static void yield_carried(sema *S, carry_set *cs, ir_op op, blk_loc loc) {
    if (!carry_ok(cs)) { /* an error left a var without a value: yield what was there before */
        for (int k = 0; k < cs->n; k++)
            if (cs->vars[k]->val.kind != SV_VALUE) cs->vars[k]->val = cs->before[k];
    }
    sema_inst(S, op, loc, carry_values(S, cs->vars, cs->n), cs->n, NULL, 0, 0);
}

/* Point the builder at region r (end); returns the previous region. */
static ir_region *enter_region(sema *S, ir_region *r) {
    ir_region *old = S->fn->b.region;
    S->fn->b.region = r;
    S->fn->b.before = NULL;
    return old;
}

/* ---- let / var ---- */

/* let NAME [: T] = EXPR;   let (A, B) = EXPR;   var ... likewise */
static void let_stmt(sema *S, ast_node *n) {
    bool is_var = n->kind == AST_VAR;
    sema_val v = sema_expr(S, n->rhs);
    if (v.kind == SV_VOID) {
        diag_error(S->d, n->rhs->loc, "this expression has no value");
        v = sema_error();
    }
    bool pattern = n->is_tuple || n->names.len > 1;
    if (!pattern && n->names.len == 1 && n->type && v.kind != SV_ERROR) {
        ir_type t;
        if (!sema_type_from_ast(S, n->type, &t)) v = sema_error();
        else v = sema_check_annotation(S, v, t, n->rhs->loc, is_var ? "var" : "let", n->names.data[0]->name);
    }
    if (pattern && v.kind != SV_ERROR) {
        if (v.kind != SV_TUPLE) {
            diag_error(S->d, n->rhs->loc, "cannot destructure %s into %d names", sema_type_str(S, v), n->names.len);
            v = sema_error();
        } else if (v.n != n->names.len) {
            diag_error(S->d, n->rhs->loc, "cannot destructure a tuple of %d values into %d names", v.n, n->names.len);
            v = sema_error();
        }
    }
    for (int k = 0; k < n->names.len; k++) {
        ast_node *nm = n->names.data[k];
        if (!nm->name || strcmp(nm->name, "_") == 0) continue;
        sema_val e = v.kind == SV_ERROR ? v : pattern ? v.elems[k] : v;
        sema_bind(S, nm->name, is_var ? BIND_VAR : BIND_LET, e, nm->loc);
    }
}

/* ---- assignment ---- */

/* NAME = EXPR;   NAME op= EXPR; */
static void assign_stmt(sema *S, ast_node *n) {
    ast_node *t = n->lhs;
    if (!t || t->kind != AST_NAME) {
        diag_error(S->d, t ? t->loc : n->loc, "only a var can be assigned");
        sema_expr(S, n->rhs);
        return;
    }
    sema_binding *b = sema_map_get(&S->fn->names, t->name);
    if (!b) {
        sema_val dummy;
        sema_binding *none;
        if (sema_lookup(S, t->name, t->loc, &dummy, &none)) {
            if (dummy.kind != SV_ERROR)
                diag_error(S->d, t->loc, "cannot assign to '%s': it is a module %s, not a var", t->name,
                           dummy.kind == SV_FN ? "fn" : dummy.kind == SV_MODULE ? "import" : "const");
        } else {
            sema_report_undefined(S, t->name, t->loc);
        }
        sema_expr(S, n->rhs);
        return;
    }
    if (b->kind != BIND_VAR) {
        const char *what = b->kind == BIND_LET ? "it is declared with 'let' (use 'var' for a mutable binding)"
                         : b->kind == BIND_PARAM ? "parameters are immutable"
                         : "a loop variable is immutable";
        diag_error(S->d, t->loc, "cannot assign to '%s': %s", t->name, what);
        diag_note(S->d, b->loc, "'%s' is declared here", t->name);
        sema_expr(S, n->rhs);
        return;
    }
    sema_val v = sema_expr(S, n->rhs);
    if (n->op && v.kind != SV_ERROR) {
        blk_loc oloc = n->op_loc.file >= 0 && n->op_loc.len ? n->op_loc : n->loc;
        v = sema_binary(S, n->op, b->val, v, oloc, t, n->rhs);
    }
    if (v.kind == SV_VOID) {
        diag_error(S->d, n->rhs->loc, "this expression has no value");
        v = sema_error();
    }
    if (b->pins > 0 && v.kind != SV_ERROR) {
        ir_type want = b->pin_type;
        bool ok = false;
        if (v.kind == SV_CONST && v.type.dtype != DT_PTR && (v.weak || v.type.dtype == want.dtype)) {
            int errs = S->d->nerrors;
            ir_value *x = sema_convert(S, v, (blk_dtype)want.dtype, want, n->rhs->loc);
            if (!x && S->d->nerrors > errs) {
                b->val = sema_error();
                return;
            }
            if (x) {
                v = sema_value(x);
                ok = true;
            }
        } else if (v.kind == SV_VALUE) {
            ok = ir_type_eq(v.v->type, want);
        }
        if (!ok) {
            const char *where = b->pinned_by_loop ? "inside a loop" : "in a branch";
            diag_error(S->d, n->loc, "var '%s' changes type %s: it is %s, the new value is %s (a var keeps its type "
                       "and shape in loops and branches)", t->name, where, sema_ir_type_str(S, want),
                       sema_type_str(S, v));
            diag_note(S->d, b->loc, "'%s' is declared here with type %s", t->name, sema_ir_type_str(S, want));
            return; /* keep the old value: the loop stays well-typed */
        }
    }
    if (v.kind == SV_VALUE && v.v && !v.v->name) v.v->name = b->name;
    b->val = v;
}

/* ---- if ---- */

static bool stmt(sema *S, ast_node *n);

/* A branch: an AST_BLOCK, or an AST_IF (else if). */
static bool branch(sema *S, ast_node *body) {
    if (!body) return false;
    if (body->kind == AST_BLOCK) return sema_block(S, body);
    return stmt(S, body);
}

/* Check an if/while condition: a scalar bool. */
static bool check_cond(sema *S, sema_val c, ast_node *e) {
    if (c.kind == SV_ERROR) return false;
    if (!sema_is_numeric(c) || c.type.dtype != DT_BOOL || sema_type_of(c).rank > 0) {
        if (sema_is_numeric(c) && sema_type_of(c).rank > 0)
            diag_error(S->d, e->loc, "condition must be a scalar bool, got %s; use where() to choose per element",
                       sema_type_str(S, c));
        else
            diag_error(S->d, e->loc, "condition must be a scalar bool, got %s", sema_type_str(S, c));
        return false;
    }
    return true;
}

/* Elaborate a body for its diagnostics only (its condition was bad). */
static void discard_branch(sema *S, ast_node *body, carry_set *cs) {
    if (!body) return;
    ir_region *scratch = ir_region_new(S->fn->func, NULL);
    ir_region *old = enter_region(S, scratch);
    int mark = sema_scope_mark(S);
    sema_loop *loop = S->fn->loop;
    branch(S, body);
    S->fn->loop = loop;
    sema_scope_pop(S, mark);
    enter_region(S, old);
    carry_restore(cs);
}

/* if COND { ... } [else { ... } | else if ...] */
static bool if_stmt(sema *S, ast_node *n) {
    sema_val c = sema_expr(S, n->cond);
    bool ok = check_cond(S, c, n->cond);
    if (ok && c.kind == SV_CONST) { /* decided at compile time: only the taken branch is elaborated */
        int mark = sema_scope_mark(S);
        bool t = branch(S, c.i ? n->then_body : n->else_body);
        sema_scope_pop(S, mark);
        return t;
    }
    carry_set cs;
    carry_begin(S, n->then_body, n->else_body, false, &cs);
    if (!ok) {
        discard_branch(S, n->then_body, &cs);
        discard_branch(S, n->else_body, &cs);
        carry_end(&cs, NULL);
        return false;
    }
    ir_inst *inst = sema_inst(S, IR_IF, sema_name_loc(n), &c.v, 1, carry_types(S, &cs), cs.n, 2);
    if (!inst) {
        carry_end(&cs, NULL);
        return false;
    }
    bool term[2];
    for (int r = 0; r < 2; r++) {
        ast_node *body = r ? n->else_body : n->then_body;
        ir_region *old = enter_region(S, inst->regions[r]);
        int mark = sema_scope_mark(S);
        term[r] = branch(S, body);
        sema_scope_pop(S, mark);
        if (!term[r]) yield_carried(S, &cs, IR_YIELD, body ? body->loc : n->loc);
        enter_region(S, old);
        carry_restore(&cs);
    }
    carry_end(&cs, inst->results);
    return term[0] && term[1];
}

/* ---- loops ---- */

/* range(end) | range(start, end) | range(start, end, step), also static_range */
static bool range_args(sema *S, ast_node *it, sema_val v[3]) {
    int n = it->args.len;
    if (n < 1 || n > 3) {
        diag_error(S->d, it->loc, "'%s' takes 1 to 3 arguments (end | start, end | start, end, step), got %d",
                   it->lhs->name, n);
        return false;
    }
    sema_val a[3];
    bool bad = false;
    for (int k = 0; k < n; k++) {
        ast_node *e = it->args.data[k];
        if (e->kind == AST_NAMED_ARG) {
            diag_error(S->d, e->loc, "'%s' takes no named arguments", it->lhs->name);
            return false;
        }
        a[k] = sema_expr(S, e);
        if (a[k].kind == SV_ERROR) bad = true;
        else if (!sema_is_numeric(a[k]) || !dtype_is_int(a[k].type.dtype) || sema_type_of(a[k]).rank > 0) {
            diag_error(S->d, e->loc, "range bounds must be scalar integers, got %s", sema_type_str(S, a[k]));
            bad = true;
        }
    }
    if (bad) return false;
    if (n == 1) {
        v[0] = sema_weak_int(0);
        v[1] = a[0];
        v[2] = sema_weak_int(1);
    } else {
        v[0] = a[0];
        v[1] = a[1];
        v[2] = n == 3 ? a[2] : sema_weak_int(1);
    }
    return true;
}

static void push_loop(sema *S, sema_loop *L, carry_set *cs, bool is_static) {
    L->outer = S->fn->loop;
    L->carried = cs ? cs->vars : NULL;
    L->ncarried = cs ? cs->n : 0;
    L->is_static = is_static;
    S->fn->loop = L;
}

static bool static_for(sema *S, ast_node *n, sema_val r[3]) {
    for (int k = 0; k < 3; k++)
        if (r[k].kind != SV_CONST) {
            diag_error(S->d, n->lhs->args.data[k < n->lhs->args.len ? k : 0]->loc,
                       "static_range bounds must be compile-time integers");
            return false;
        }
    if (n->attrs.len) diag_error(S->d, n->attrs.data[0]->loc, "a static_range loop takes no attributes");
    sema_i128 lo = sema_const_i128(r[0]), hi = sema_const_i128(r[1]), step = sema_const_i128(r[2]);
    if (step == 0) {
        diag_error(S->d, n->lhs->loc, "static_range step must not be 0");
        return false;
    }
    sema_i128 trips = step > 0 ? (hi > lo ? (hi - lo + step - 1) / step : 0) : (lo > hi ? (lo - hi - step - 1) / -step : 0);
    if (trips > COMPILE_MAX_UNROLL) {
        diag_error(S->d, n->lhs->loc, "static_range of %lld iterations exceeds the unroll limit of %d",
                   (long long)trips, COMPILE_MAX_UNROLL);
        return false;
    }
    int errors = S->d->nerrors;
    for (sema_i128 i = 0; i < trips; i++) {
        if (++S->unrolled > SEMA_MAX_UNROLLED) { /* nested static_ranges multiply */
            if (!S->size_reported)
                diag_error(S->d, n->lhs->loc, "static_range loops unroll more than %d iterations in total",
                           SEMA_MAX_UNROLLED);
            S->size_reported = true;
            return false;
        }
        int mark = sema_scope_mark(S);
        sema_loop L;
        push_loop(S, &L, NULL, true);
        sema_bind(S, n->name, BIND_LOOP, sema_weak_int(lo + i * step), sema_name_loc(n));
        bool t = sema_block(S, n->body);
        S->fn->loop = L.outer;
        sema_scope_pop(S, mark);
        if (t) return true;
        if (S->d->nerrors > errors || S->size_reported) break; /* one report, not one per iteration */
    }
    return false;
}

/* The common integer type of a range's bounds. */
static blk_dtype range_dtype(sema *S, sema_val r[3]) {
    int strong = -1;
    for (int k = 0; k < 3; k++) {
        if (r[k].kind == SV_CONST && r[k].weak) continue;
        blk_dtype t = (blk_dtype)r[k].type.dtype;
        if (strong < 0) {
            strong = t;
        } else {
            bool w;
            sema_val a = r[k], b = sema_int_const((blk_dtype)strong, false, 0);
            a.weak = false;
            strong = sema_promote(a, b, &w);
        }
    }
    if (strong >= 0) return (blk_dtype)strong;
    for (int k = 0; k < 3; k++)
        if (r[k].type.dtype != DT_I32) return DT_I64;
    return DT_I32;
}

/* A loop's body region, entered with the carried values bound: the body
 * (yielding the carried values where it falls off its end) with the loop
 * open for break/continue, then the scope back to mark, the region back to
 * old, and the loop's results bound to the carried names. */
static void loop_body(sema *S, ast_node *body, carry_set *cs, int mark, ir_region *old, ir_value **results) {
    sema_loop L;
    push_loop(S, &L, cs, false);
    if (!sema_block(S, body)) yield_carried(S, cs, IR_YIELD, body->loc);
    S->fn->loop = L.outer;
    sema_scope_pop(S, mark);
    enter_region(S, old);
    carry_end(cs, results);
}

/* for NAME in range(...) [@num_stages(N)] { ... } */
static bool for_stmt(sema *S, ast_node *n) {
    ast_node *it = n->lhs;
    bool is_static = it && it->kind == AST_CALL && it->lhs->kind == AST_NAME && strcmp(it->lhs->name, "static_range") == 0;
    bool is_range = it && it->kind == AST_CALL && it->lhs->kind == AST_NAME && strcmp(it->lhs->name, "range") == 0;
    if (!is_static && !is_range) {
        diag_error(S->d, it ? it->loc : n->loc, "a for loop iterates over range(...) or static_range(...)");
        return false;
    }
    sema_val r[3];
    if (!range_args(S, it, r)) {
        carry_set cs;
        carry_begin(S, n->body, NULL, true, &cs);
        int mark = sema_scope_mark(S);
        sema_bind(S, n->name, BIND_LOOP, sema_error(), sema_name_loc(n));
        sema_loop L;
        push_loop(S, &L, &cs, false);
        discard_branch(S, n->body, &cs);
        S->fn->loop = L.outer;
        sema_scope_pop(S, mark);
        carry_end(&cs, NULL);
        return false;
    }
    if (is_static) return static_for(S, n, r);

    /* A negative step counts down (iv > end), as in Python and Triton; IR
     * FOR runs both directions. Zero would never end. */
    if (r[2].kind == SV_CONST && sema_const_i128(r[2]) == 0) {
        diag_error(S->d, it->args.data[2]->loc, "range step must not be 0");
        return false;
    }
    int64_t stages = 0;
    for (int a = 0; a < n->attrs.len; a++) {
        ast_node *attr = n->attrs.data[a];
        if (!attr->name || strcmp(attr->name, "num_stages") != 0) {
            diag_error(S->d, attr->loc, "unknown loop attribute '@%s' (known: @num_stages)",
                       attr->name ? attr->name : "?");
            continue;
        }
        sema_val v = attr->args.len == 1 ? sema_expr(S, attr->args.data[0]) : sema_error();
        if (attr->args.len != 1) diag_error(S->d, attr->loc, "@num_stages takes one integer");
        else if (v.kind != SV_ERROR && (!sema_is_const_int(v) || v.i < 1 || v.i > 16))
            diag_error(S->d, attr->args.data[0]->loc, "num_stages must be a compile-time integer from 1 to 16");
        else if (v.kind != SV_ERROR) stages = v.i;
    }
    blk_dtype dt = range_dtype(S, r);
    ir_type st = ir_scalar(dt);
    ir_value *bounds[3];
    for (int k = 0; k < 3; k++) {
        blk_loc l = k < it->args.len ? it->args.data[it->args.len == 1 ? 0 : k]->loc : it->loc;
        bounds[k] = sema_convert(S, r[k], dt, st, l);
        if (!bounds[k]) return false;
    }
    carry_set cs;
    carry_begin(S, n->body, NULL, true, &cs);
    int nops = 3 + cs.n;
    ir_value **ops = ARENA_ARRAY(S->a, ir_value *, nops);
    if (!ops) return false;
    memcpy(ops, bounds, sizeof bounds);
    for (int k = 0; k < cs.n; k++) ops[3 + k] = cs.vars[k]->val.v;
    ir_inst *inst = sema_inst(S, IR_FOR, sema_name_loc(n), ops, nops, carry_types(S, &cs), cs.n, 1);
    if (!inst) {
        carry_end(&cs, NULL);
        return false;
    }
    inst->ival2 = stages; /* @num_stages of this loop; 0 = the kernel's */
    ir_region *body = inst->regions[0];
    ir_value *iv = ir_region_add_arg(body, st, n->name);
    for (int k = 0; k < cs.n; k++) cs.vars[k]->val = sema_value(ir_region_add_arg(body, cs.vars[k]->pin_type, cs.vars[k]->name));
    ir_region *old = enter_region(S, body);
    int mark = sema_scope_mark(S);
    sema_bind(S, n->name, BIND_LOOP, sema_value(iv), sema_name_loc(n));
    loop_body(S, n->body, &cs, mark, old, inst->results);
    return false;
}

/* while COND { ... } */
static bool while_stmt(sema *S, ast_node *n) {
    carry_set cs;
    carry_begin(S, n->body, NULL, true, &cs);
    ir_inst *inst = sema_inst(S, IR_WHILE, sema_name_loc(n), carry_values(S, cs.vars, cs.n), cs.n, carry_types(S, &cs),
                              cs.n, 2);
    if (!inst) {
        carry_end(&cs, NULL);
        return false;
    }
    ir_region *regions[2] = {inst->regions[0], inst->regions[1]};
    ir_value **args[2];
    for (int r = 0; r < 2; r++) {
        args[r] = ARENA_ARRAY(S->a, ir_value *, cs.n + 1);
        for (int k = 0; k < cs.n && args[r]; k++)
            args[r][k] = ir_region_add_arg(regions[r], cs.vars[k]->pin_type, cs.vars[k]->name);
    }
    /* condition region: CONDITION(cond, carried...) */
    ir_region *old = enter_region(S, regions[0]);
    for (int k = 0; k < cs.n; k++) cs.vars[k]->val = sema_value(args[0][k]);
    int mark = sema_scope_mark(S);
    sema_val c = sema_expr(S, n->cond);
    ir_value *cv = NULL;
    if (check_cond(S, c, n->cond)) cv = sema_materialize(S, c, n->cond->loc);
    if (!cv) cv = sema_materialize(S, sema_bool_const(false), n->cond->loc);
    sema_scope_pop(S, mark);
    ir_value **cops = ARENA_ARRAY(S->a, ir_value *, cs.n + 2);
    if (cops) {
        cops[0] = cv;
        for (int k = 0; k < cs.n; k++) cops[k + 1] = args[0][k];
        sema_inst(S, IR_CONDITION, n->cond->loc, cops, cs.n + 1, NULL, 0, 0);
    }
    /* body region */
    enter_region(S, regions[1]);
    for (int k = 0; k < cs.n; k++) cs.vars[k]->val = sema_value(args[1][k]);
    loop_body(S, n->body, &cs, sema_scope_mark(S), old, inst->results);
    return false;
}

/* break; continue; */
static bool loop_exit(sema *S, ast_node *n) {
    const char *kw = n->kind == AST_BREAK ? "break" : "continue";
    sema_loop *L = S->fn->loop;
    if (!L) {
        diag_error(S->d, n->loc, "'%s' outside a loop", kw);
        return false;
    }
    if (L->is_static) {
        diag_error(S->d, n->loc, "'%s' is not allowed in a static_range loop (it is unrolled at compile time)", kw);
        return false;
    }
    for (int k = 0; k < L->ncarried; k++)
        if (L->carried[k]->val.kind != SV_VALUE) return false; /* an error was reported */
    sema_inst(S, n->kind == AST_BREAK ? IR_BREAK : IR_CONTINUE, n->loc, carry_values(S, L->carried, L->ncarried),
              L->ncarried, NULL, 0, 0);
    return true;
}

/* return; in a kernel (tail returns of fns are handled by sema_fn_body) */
static bool return_stmt(sema *S, ast_node *n) {
    if (!S->fn->is_kernel) {
        diag_error(S->d, n->loc, "'return' in a fn must be its last statement, or the last statement of both "
                   "branches of a final if/else (fns are inlined)");
        if (n->lhs) sema_expr(S, n->lhs);
        return true;
    }
    if (n->lhs) {
        sema_val v = sema_expr(S, n->lhs);
        if (v.kind != SV_ERROR) diag_error(S->d, n->lhs->loc, "a kernel cannot return a value");
    }
    sema_inst(S, IR_RETURN, n->loc, NULL, 0, NULL, 0, 0);
    return true;
}

static void expr_stmt(sema *S, ast_node *n) {
    sema_val v = sema_expr(S, n->lhs);
    if (n->lhs->kind != AST_CALL && v.kind != SV_ERROR) diag_warning(S->d, n->lhs->loc, "expression result unused");
}

/* One statement; true if control cannot continue after it. */
static bool stmt(sema *S, ast_node *n) {
    if (!sema_enter(S, n->loc)) return true;
    bool t = false;
    switch (n->kind) {
    case AST_LET:
    case AST_VAR: let_stmt(S, n); break;
    case AST_ASSIGN: assign_stmt(S, n); break;
    case AST_EXPR_STMT: expr_stmt(S, n); break;
    case AST_IF: t = if_stmt(S, n); break;
    case AST_FOR: t = for_stmt(S, n); break;
    case AST_WHILE: t = while_stmt(S, n); break;
    case AST_BREAK:
    case AST_CONTINUE: t = loop_exit(S, n); break;
    case AST_RETURN: t = return_stmt(S, n); break;
    case AST_BLOCK: t = sema_block(S, n); break;
    default: diag_error(S->d, n->loc, "expected a statement"); break;
    }
    sema_leave(S);
    return t;
}

static bool stop(sema *S) { return diag_should_stop(S->d) || S->size_reported || arena_failed(S->a); }

bool sema_block(sema *S, ast_node *block) {
    if (!block) return false;
    if (block->kind != AST_BLOCK) return stmt(S, block);
    int mark = sema_scope_mark(S);
    bool t = false;
    for (int k = 0; k < block->args.len && !stop(S); k++) {
        ast_node *n = block->args.data[k];
        if (t) {
            diag_warning(S->d, n->loc, "unreachable code");
            break;
        }
        t = stmt(S, n);
    }
    sema_scope_pop(S, mark);
    return t;
}

/* ---- fn bodies and tail returns ---- */

/* Does statement n end in a return on every path, in tail form? */
static bool tail_returns(ast_node *n, int depth) {
    if (!n || depth > COMPILE_MAX_NESTING * 4) return false;
    switch (n->kind) {
    case AST_RETURN: return true;
    case AST_BLOCK: return n->args.len > 0 && tail_returns(n->args.data[n->args.len - 1], depth + 1);
    case AST_IF: return n->else_body && tail_returns(n->then_body, depth + 1) && tail_returns(n->else_body, depth + 1);
    default: return false;
    }
}

static bool tail_block(sema *S, ast_node *block, sema_val *ret);

/* Pairs of run-time leaves of two branch results, unified into one type each. */
typedef struct {
    sema_val *a, *b;   /* leaves */
    ir_type *types;
    int n, cap;
} unify_set;

static bool unify_push(sema *S, unify_set *u, sema_val *a, sema_val *b, ir_type t) {
    if (u->n == u->cap) {
        int cap = u->cap ? u->cap * 2 : 4;
        sema_val *na = ARENA_ARRAY(S->a, sema_val, cap), *nb = ARENA_ARRAY(S->a, sema_val, cap);
        ir_type *nt = ARENA_ARRAY(S->a, ir_type, cap);
        if (!na || !nb || !nt) return false;
        if (u->n) {
            memcpy(na, u->a, sizeof(sema_val) * (size_t)u->n);
            memcpy(nb, u->b, sizeof(sema_val) * (size_t)u->n);
            memcpy(nt, u->types, sizeof(ir_type) * (size_t)u->n);
        }
        u->a = na;
        u->b = nb;
        u->types = nt;
        u->cap = cap;
    }
    u->a[u->n] = *a;
    u->b[u->n] = *b;
    u->types[u->n++] = t;
    return true;
}

static bool same_const(sema_val a, sema_val b) {
    if (a.kind != b.kind) return false;
    switch (a.kind) {
    case SV_CONST: return a.type.dtype == b.type.dtype && a.weak == b.weak && a.i == b.i && (a.f == b.f || a.f != a.f);
    case SV_DTYPE: return ir_type_eq(a.type, b.type);
    case SV_FN: return a.item == b.item;
    case SV_STRING: return strcmp(a.str, b.str) == 0;
    case SV_NONE: case SV_VOID: return true;
    default: return false;
    }
}

/* Build the result template of a returning if: *out gets the shape of the
 * results; run-time leaves become VALUE placeholders numbered in u. */
static bool unify(sema *S, sema_val a, sema_val b, sema_val *out, unify_set *u, blk_loc loc) {
    if (a.kind == SV_ERROR || b.kind == SV_ERROR) return false;
    if (a.kind == SV_TUPLE && b.kind == SV_TUPLE && a.n == b.n) {
        *out = a;
        out->elems = ARENA_ARRAY(S->a, sema_val, a.n + 1);
        if (!out->elems) return false;
        for (int k = 0; k < a.n; k++)
            if (!unify(S, a.elems[k], b.elems[k], &out->elems[k], u, loc)) return false;
        return true;
    }
    if (same_const(a, b)) {
        *out = a;
        return true;
    }
    if (sema_is_numeric(a) && sema_is_numeric(b)) {
        ir_type t;
        if (a.kind == SV_VALUE && b.kind == SV_VALUE) {
            if (!ir_type_eq(a.type, b.type)) goto mismatch;
            t = a.type;
        } else if (a.kind == SV_VALUE || b.kind == SV_VALUE) {
            sema_val v = a.kind == SV_VALUE ? a : b, c = a.kind == SV_VALUE ? b : a;
            if (!c.weak && c.type.dtype != v.type.dtype) goto mismatch;
            t = v.type;
        } else {
            bool w;
            int dt = sema_promote(a, b, &w);
            if (dt < 0) goto mismatch;
            t = ir_scalar(w && dt == DT_I64 ? (blk_dtype)(a.type.dtype == DT_I32 && b.type.dtype == DT_I32 ? DT_I32 : DT_I64)
                                            : (blk_dtype)dt);
        }
        *out = (sema_val){.kind = SV_VALUE, .type = t, .i = u->n};
        return unify_push(S, u, &a, &b, t);
    }
mismatch:
    diag_error(S->d, loc, "the branches of this if return different types: %s and %s", sema_type_str(S, a),
               sema_type_str(S, b));
    return false;
}

/* if COND { ...; return A; } else { ...; return B; } as a fn's last statement:
 * an IF whose results are the returned values. */
static bool returning_if(sema *S, ast_node *n, sema_val *ret) {
    sema_val c = sema_expr(S, n->cond);
    if (!check_cond(S, c, n->cond)) {
        *ret = sema_error();
        return true;
    }
    if (c.kind == SV_CONST) {
        ast_node *b = c.i ? n->then_body : n->else_body;
        return b->kind == AST_IF ? returning_if(S, b, ret) : tail_block(S, b, ret);
    }
    /* nothing follows a returning if, so vars assigned in its branches need
     * no carrying: only each branch must start from the values before it */
    sema_map seen = {0};
    name_list names = {0};
    collect_assigned(S, n->then_body, &seen, &names, 0);
    collect_assigned(S, n->else_body, &seen, &names, 0);
    sema_binding **vars = ARENA_ARRAY(S->a, sema_binding *, names.len + 1);
    sema_val *before = ARENA_ARRAY(S->a, sema_val, names.len + 1);
    int nvars = 0;
    for (int k = 0; vars && before && k < names.len; k++) {
        sema_binding *bd = sema_map_get(&S->fn->names, names.data[k]);
        if (bd && bd->kind == BIND_VAR) {
            vars[nvars] = bd;
            before[nvars++] = bd->val;
        }
    }
    ir_region *regions[2] = {ir_region_new(S->fn->func, NULL), ir_region_new(S->fn->func, NULL)};
    sema_val r[2];
    for (int k = 0; k < 2; k++) {
        ast_node *b = k ? n->else_body : n->then_body;
        ir_region *old = enter_region(S, regions[k]);
        if (b->kind == AST_IF) returning_if(S, b, &r[k]);
        else tail_block(S, b, &r[k]);
        enter_region(S, old);
        for (int j = 0; j < nvars; j++) vars[j]->val = before[j];
    }
    sema_val tmpl;
    unify_set u = {0};
    ast_node *else_ret = n->else_body;
    while (else_ret && else_ret->kind == AST_BLOCK && else_ret->args.len) else_ret = else_ret->args.data[else_ret->args.len - 1];
    if (!unify(S, r[0], r[1], &tmpl, &u, else_ret ? else_ret->loc : n->loc)) {
        *ret = sema_error();
        return true;
    }
    for (int k = 0; k < 2; k++) {
        ir_region *old = enter_region(S, regions[k]);
        ir_value **vals = ARENA_ARRAY(S->a, ir_value *, u.n + 1);
        bool ok = vals != NULL;
        for (int j = 0; j < u.n && ok; j++) {
            sema_val leaf = k ? u.b[j] : u.a[j];
            vals[j] = sema_convert(S, leaf, (blk_dtype)u.types[j].dtype, u.types[j], n->loc);
            ok = vals[j] != NULL;
        }
        if (ok) sema_inst(S, IR_YIELD, n->loc, vals, u.n, NULL, 0, 0);
        enter_region(S, old);
        if (!ok) {
            *ret = sema_error();
            return true;
        }
    }
    ir_inst *inst = sema_inst(S, IR_IF, sema_name_loc(n), &c.v, 1, u.types, u.n, 0);
    if (!inst) {
        *ret = sema_error();
        return true;
    }
    inst->regions = ARENA_ARRAY(S->a, ir_region *, 2);
    if (!inst->regions) return true;
    inst->num_regions = 2;
    for (int k = 0; k < 2; k++) {
        inst->regions[k] = regions[k];
        regions[k]->parent = inst;
    }
    *ret = sema_fill_results(S, tmpl, inst);
    return true;
}

/* Statements of a fn body (or a branch of a returning if): all but the last
 * are ordinary; the last may be `return` or a returning if. */
static bool tail_block(sema *S, ast_node *block, sema_val *ret) {
    *ret = sema_void();
    if (block->kind != AST_BLOCK) return stmt(S, block);
    int mark = sema_scope_mark(S);
    bool t = false;
    int n = block->args.len;
    for (int k = 0; k < n && !stop(S); k++) {
        ast_node *s = block->args.data[k];
        if (t) {
            diag_warning(S->d, s->loc, "unreachable code");
            break;
        }
        bool last = k == n - 1;
        if (last && s->kind == AST_RETURN) {
            *ret = s->lhs ? sema_expr(S, s->lhs) : sema_void();
            t = true;
        } else if (last && tail_returns(s, 0) && (s->kind == AST_IF || s->kind == AST_BLOCK)) {
            if (!sema_enter(S, s->loc)) break;
            t = s->kind == AST_IF ? returning_if(S, s, ret) : tail_block(S, s, ret);
            sema_leave(S);
        } else {
            t = stmt(S, s);
        }
    }
    sema_scope_pop(S, mark);
    return t;
}

bool sema_fn_body(sema *S, ast_node *block, sema_val *ret) { return tail_block(S, block, ret); }

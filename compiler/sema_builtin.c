/* sema_builtin.c — every builtin of LANGUAGE.md "Builtins", one table.
 *
 * Each entry names the builtin, its parameters and the function that checks
 * the arguments and emits the IR. Arguments are bound to parameters first
 * (positional, then by name; arity, unknown and repeated names are reported
 * here, once for all builtins), so a check function sees one slot per
 * parameter: the argument's AST, or NULL when it was not given.
 *
 * Parameter strings: positional parameters in order, '?' after optional
 * ones; after ';' the named-only options. "*" means variadic (print).
 */
#include <math.h>
#include <string.h>

#include "sema_internal.h"

#define MAX_PARAMS 12

typedef struct {
    const char *names[MAX_PARAMS];
    int npos, nreq, n;
} param_list;

/* Length of a parameter name inside a spec string. */
static size_t pname_len(const char *s) {
    size_t n = 0;
    while (s[n] && s[n] != ',' && s[n] != ';' && s[n] != '?' && s[n] != ' ') n++;
    return n;
}

static bool pname_is(const char *spec_name, const char *name) {
    size_t n = pname_len(spec_name);
    return strlen(name) == n && strncmp(spec_name, name, n) == 0;
}

/* Split a parameter string; names point into it (see pname_len). */
static void parse_params(const char *spec, param_list *p) {
    memset(p, 0, sizeof *p);
    bool named_only = false;
    while (*spec && p->n < MAX_PARAMS) {
        while (*spec == ' ' || *spec == ',') spec++;
        if (*spec == ';') {
            named_only = true;
            spec++;
            continue;
        }
        if (!*spec) break;
        p->names[p->n++] = spec;
        spec += pname_len(spec);
        bool optional = *spec == '?';
        if (optional) spec++;
        if (!named_only) {
            p->npos++;
            if (!optional) p->nreq = p->npos;
        }
    }
}

static const char *count_text(sema *S, int lo, int hi) {
    if (lo == hi) return arena_printf(S->a, "%d argument%s", lo, lo == 1 ? "" : "s");
    if (hi == lo + 1) return arena_printf(S->a, "%d or %d arguments", lo, hi);
    return arena_printf(S->a, "%d to %d arguments", lo, hi);
}

/* Bind call arguments to the parameter slots; false after an error. */
static bool bind_args(sema *S, const sema_builtin *bi, const char *display, ast_node *call, ast_node **slots,
                      param_list *p) {
    parse_params(bi->params, p);
    int npos_given = 0;
    bool named_seen = false, ok = true;
    for (int k = 0; k < call->args.len; k++) {
        ast_node *a = call->args.data[k];
        if (a->kind == AST_NAMED_ARG) {
            named_seen = true;
            int j = 0;
            while (j < p->n && !pname_is(p->names[j], a->name)) j++;
            if (j == p->n) {
                diag_error(S->d, a->loc, "unknown named argument '%s' for '%s'", a->name, display);
                ok = false;
                continue;
            }
            if (slots[j]) {
                diag_error(S->d, a->loc, "argument '%s' of '%s' is given twice", a->name, display);
                ok = false;
                continue;
            }
            slots[j] = a->lhs;
        } else {
            if (named_seen) {
                diag_error(S->d, a->loc, "positional argument after named arguments");
                ok = false;
                continue;
            }
            if (npos_given < p->npos) slots[npos_given] = a;
            npos_given++;
        }
    }
    if (!ok) return false;
    int have = 0;
    for (int j = 0; j < p->nreq; j++) have += slots[j] != NULL;
    if (npos_given > p->npos || have < p->nreq) {
        int given = 0;
        for (int j = 0; j < p->npos; j++) given += slots[j] != NULL;
        if (npos_given > p->npos) given = npos_given;
        diag_error(S->d, call->loc, "'%s' takes %s, got %d", display, count_text(S, p->nreq, p->npos), given);
        return false;
    }
    return true;
}

/* ---- argument helpers ---- */

static sema_val arg(sema *S, ast_node *n) {
    sema_val v = sema_expr(S, n);
    if (v.kind == SV_VOID) {
        diag_error(S->d, n->loc, "this argument has no value");
        return sema_error();
    }
    return v;
}

static const char *bname(const sema_builtin *bi) { return bi->name; }

/* "i32", or "a run-time i32" where a constant was wanted */
static const char *got_str(sema *S, sema_val v) {
    if (v.kind == SV_VALUE) return arena_printf(S->a, "a run-time %s", sema_type_str(S, v));
    return sema_type_str(S, v);
}

/* A numeric argument (run-time value or constant). */
static sema_val numeric_arg(sema *S, ast_node *n, const sema_builtin *bi, const char *what) {
    sema_val v = arg(S, n);
    if (v.kind == SV_ERROR || sema_is_numeric(v)) return v;
    diag_error(S->d, n->loc, "%s of '%s' must be a number or a block, got %s", what, bname(bi), sema_type_str(S, v));
    return sema_error();
}

static bool const_int(sema *S, ast_node *n, const sema_builtin *bi, const char *what, int64_t *out) {
    sema_val v = arg(S, n);
    if (v.kind == SV_ERROR) return false;
    if (!sema_is_const_int(v) || sema_const_i128(v) > INT64_MAX) {
        diag_error(S->d, n->loc, "%s of '%s' must be a compile-time integer, got %s", what, bname(bi),
                   got_str(S, v));
        return false;
    }
    *out = v.i;
    return true;
}

static bool const_bool(sema *S, ast_node *n, const sema_builtin *bi, const char *what, bool *out) {
    sema_val v = arg(S, n);
    if (v.kind == SV_ERROR) return false;
    if (v.kind != SV_CONST || v.type.dtype != DT_BOOL) {
        diag_error(S->d, n->loc, "%s of '%s' must be true or false, got %s", what, bname(bi), got_str(S, v));
        return false;
    }
    *out = v.i != 0;
    return true;
}

/* A string option from a fixed set: returns its index + 1, 0 after an error. */
static int string_option(sema *S, ast_node *n, const sema_builtin *bi, const char *what, const char *const *choices,
                         const char *choice_text) {
    sema_val v = arg(S, n);
    if (v.kind == SV_ERROR) return 0;
    if (v.kind == SV_STRING)
        for (int k = 0; choices[k]; k++)
            if (strcmp(v.str, choices[k]) == 0) return k + 1;
    if (v.kind == SV_STRING)
        diag_error(S->d, n->loc, "invalid %s \"%s\" for '%s'; expected %s", what, v.str, bname(bi), choice_text);
    else
        diag_error(S->d, n->loc, "%s of '%s' must be a string: %s", what, bname(bi), choice_text);
    return 0;
}

static bool dtype_arg(sema *S, ast_node *n, const sema_builtin *bi, ir_type *out) {
    sema_val v = arg(S, n);
    if (v.kind == SV_ERROR) return false;
    if (v.kind != SV_DTYPE || v.type.rank > 0 || v.type.dtype == DT_PTR) {
        diag_error(S->d, n->loc, "the dtype of '%s' must be a scalar type name (f32, bf16, i32, ...), got %s",
                   bname(bi), sema_type_str(S, v));
        return false;
    }
    *out = v.type;
    return true;
}

static bool check_numel(sema *S, int64_t numel, blk_loc loc) {
    if (numel > IR_MAX_NUMEL) {
        diag_error(S->d, loc, "block of %lld elements exceeds the limit of %d elements", (long long)numel, IR_MAX_NUMEL);
        return false;
    }
    return true;
}

/* A shape: a list of compile-time powers of two, e.g. [BM, BN]. */
static bool shape_arg(sema *S, ast_node *n, const sema_builtin *bi, ir_type *out) {
    sema_val v = arg(S, n);
    if (v.kind == SV_ERROR) return false;
    if (v.kind != SV_LIST && v.kind != SV_TUPLE) {
        diag_error(S->d, n->loc, "the shape of '%s' must be a list of compile-time integers like [64, 32], got %s",
                   bname(bi), sema_type_str(S, v));
        return false;
    }
    if (v.n > IR_MAX_RANK) {
        diag_error(S->d, n->loc, "a block has at most %d dimensions, this shape has %d", IR_MAX_RANK, v.n);
        return false;
    }
    int32_t dims[IR_MAX_RANK];
    int64_t numel = 1;
    for (int k = 0; k < v.n; k++) {
        sema_val d = v.elems[k];
        blk_loc dl = n->kind == AST_LIST && k < n->args.len ? n->args.data[k]->loc : n->loc;
        if (!sema_is_const_int(d)) {
            diag_error(S->d, dl, "shape dimension must be a compile-time integer, got %s", got_str(S, d));
            return false;
        }
        if (!sema_is_pow2(d.i) || d.i > IR_MAX_NUMEL) {
            diag_error(S->d, dl, "shape dimension must be a power of two, got %lld", (long long)d.i);
            return false;
        }
        dims[k] = (int32_t)d.i;
        numel *= d.i;
        if (!check_numel(S, numel, n->loc)) return false;
    }
    *out = ir_shaped(ir_scalar(DT_I32), v.n, dims);
    return true;
}

/* A block argument (rank >= 1 run-time value). */
static sema_val block_arg(sema *S, ast_node *n, const sema_builtin *bi) {
    sema_val v = arg(S, n);
    if (v.kind == SV_ERROR) return v;
    if (v.kind != SV_VALUE || v.type.rank == 0) {
        diag_error(S->d, n->loc, "'%s' needs a block, got %s", bname(bi), sema_type_str(S, v));
        return sema_error();
    }
    return v;
}

static bool axis_arg(sema *S, ast_node *n, const sema_builtin *bi, ir_type t, int *axis) {
    int64_t a;
    if (!const_int(S, n, bi, "the axis", &a)) return false;
    if (a < -(int64_t)t.rank || a >= t.rank) {
        diag_error(S->d, n->loc, "axis %lld is out of range for %s", (long long)a, sema_ir_type_str(S, t));
        return false;
    }
    *axis = (int)(a < 0 ? a + t.rank : a);
    return true;
}

static bool need_fn(sema *S, ast_node *call, const sema_builtin *bi) {
    if (S->fn) return true;
    diag_error(S->d, call->loc, "'%s' cannot be used in a compile-time constant", bname(bi));
    return false;
}

/* Common shape of several numeric operands; reports the first that does not broadcast. */
static bool broadcast_all(sema *S, sema_val *v, ast_node **nodes, int n, ir_type *shape) {
    *shape = ir_scalar(DT_I32);
    int first = -1;
    for (int k = 0; k < n; k++) {
        if (!nodes[k]) continue;
        ir_type s;
        if (!sema_broadcast_shape(*shape, sema_type_of(v[k]), &s)) {
            diag_error(S->d, nodes[k]->loc, "cannot broadcast %s with %s", sema_type_str(S, v[k]),
                       sema_type_str(S, v[first]));
            diag_note(S->d, nodes[first]->loc, "%s comes from here", sema_type_str(S, v[first]));
            return false;
        }
        if (first < 0 || s.rank > shape->rank || !ir_shape_eq(s, *shape)) first = first < 0 ? k : first;
        *shape = s;
    }
    return check_numel(S, ir_numel(*shape), nodes[0] ? nodes[0]->loc : LOC_NONE);
}

/* Promote the dtypes of several numeric operands (LANGUAGE.md "Types"). */
static int promote_many(sema_val *v, int n, bool *weak) {
    sema_val acc = v[0];
    *weak = acc.kind == SV_CONST && acc.weak;
    if (acc.type.dtype == DT_PTR) return -1;
    for (int k = 1; k < n; k++) {
        bool w;
        int dt = sema_promote(acc, v[k], &w);
        if (dt < 0) return -1;
        acc = (sema_val){.kind = w ? SV_CONST : SV_VALUE, .weak = w, .type = ir_scalar((blk_dtype)dt)};
        *weak = w;
    }
    return acc.type.dtype;
}

static sema_val emit_flags(ir_value *v, unsigned flags) {
    if (v && v->def) v->def->flags |= flags;
    return sema_value(v);
}

/* ---- grid ---- */

/* program_id(axis), num_programs(axis) */
static sema_val b_grid(sema *S, ast_node *call, ast_node **a, const sema_builtin *bi) {
    int64_t axis;
    if (!const_int(S, a[0], bi, "the axis", &axis)) return sema_error();
    if (axis < 0 || axis > 2) {
        diag_error(S->d, a[0]->loc, "the axis of '%s' must be 0, 1 or 2, got %lld", bname(bi), (long long)axis);
        return sema_error();
    }
    if (!need_fn(S, call, bi)) return sema_error();
    ir_type t = ir_scalar(DT_I32);
    ir_inst *i = sema_inst(S, (ir_op)bi->op, call->loc, NULL, 0, &t, 1, 0);
    if (!i) return sema_error();
    i->axis = (int)axis;
    return sema_value(i->results[0]);
}

/* ---- creation ---- */

/* arange(start, end): i32[end - start], end - start a power of two */
static sema_val b_arange(sema *S, ast_node *call, ast_node **a, const sema_builtin *bi) {
    int64_t lo, hi;
    bool ok_lo = const_int(S, a[0], bi, "start", &lo);
    bool ok_hi = const_int(S, a[1], bi, "end", &hi);
    if (!ok_lo || !ok_hi) return sema_error();
    if (hi <= lo) {
        diag_error(S->d, call->loc, "arange(%lld, %lld) is empty: end must be greater than start", (long long)lo,
                   (long long)hi);
        return sema_error();
    }
    if (lo < INT32_MIN || hi - 1 > INT32_MAX) {
        diag_error(S->d, call->loc, "arange(%lld, %lld) does not fit in i32", (long long)lo, (long long)hi);
        return sema_error();
    }
    int64_t n = hi - lo;
    if (!sema_is_pow2(n)) {
        diag_error(S->d, call->loc, "arange length %lld (end - start) is not a power of two", (long long)n);
        return sema_error();
    }
    if (!check_numel(S, n, call->loc) || !need_fn(S, call, bi)) return sema_error();
    ir_type t = ir_shaped(ir_scalar(DT_I32), 1, (int32_t[]){(int32_t)n});
    ir_inst *i = sema_inst(S, IR_ARANGE, call->loc, NULL, 0, &t, 1, 0);
    if (!i) return sema_error();
    i->ival = lo;
    i->ival2 = hi;
    return sema_value(i->results[0]);
}

/* zeros(shape, dtype), full(shape, value, dtype) */
static sema_val b_fill(sema *S, ast_node *call, ast_node **a, const sema_builtin *bi) {
    bool is_full = bi->op == IR_SPLAT;
    ir_type shape, dt;
    if (!shape_arg(S, a[0], bi, &shape)) return sema_error();
    sema_val v = is_full ? numeric_arg(S, a[1], bi, "the value") : sema_weak_int(0);
    if (!dtype_arg(S, a[is_full ? 2 : 1], bi, &dt) || v.kind == SV_ERROR) return sema_error();
    if (sema_type_of(v).rank > 0 || v.type.dtype == DT_PTR) {
        diag_error(S->d, a[1]->loc, "the value of 'full' must be a scalar number, got %s", sema_type_str(S, v));
        return sema_error();
    }
    if (!need_fn(S, call, bi)) return sema_error();
    return sema_value(sema_cast_to(S, v, dt, shape, is_full ? a[1]->loc : call->loc));
}

/* ---- memory ---- */

static const char *const cache_names[] = {"ca", "cg", "cs", NULL};
static const char *const evict_names[] = {"first", "last", "normal", NULL};
static const char *const sem_names[] = {"relaxed", "acq_rel", "acquire", "release", NULL};
/* No "sys": LLVM 22 emits read-modify-writes without a scope (.gpu), which
 * would not order them with the host; a system scope needs inline PTX. */
static const char *const scope_names[] = {"gpu", "cta", NULL};

static bool pointer_arg(sema *S, ast_node *n, const sema_builtin *bi, bool writes, sema_val *out) {
    sema_val p = arg(S, n);
    if (p.kind == SV_ERROR) return false;
    if (p.kind != SV_VALUE || p.type.dtype != DT_PTR) {
        diag_error(S->d, n->loc, "the pointer of '%s' must be a pointer or a block of pointers, got %s", bname(bi),
                   sema_type_str(S, p));
        return false;
    }
    if (writes && p.type.ptr_const) {
        diag_error(S->d, n->loc, "cannot %s through %s: the pointer is read-only", bi->op == IR_STORE ? "store" : "write",
                   sema_type_str(S, p));
        return false;
    }
    *out = p;
    return true;
}

static bool mask_arg(sema *S, ast_node *n, const sema_builtin *bi, sema_val *out) {
    sema_val m = arg(S, n);
    if (m.kind == SV_ERROR) return false;
    if (!sema_is_numeric(m) || m.type.dtype != DT_BOOL) {
        diag_error(S->d, n->loc, "the mask of '%s' must be bool (a comparison), got %s", bname(bi), sema_type_str(S, m));
        return false;
    }
    *out = m;
    return true;
}

static bool cache_evict(sema *S, ast_node *cache, ast_node *evict, const sema_builtin *bi, ir_inst *i) {
    static const uint8_t cache_ir[] = {IR_CACHE_CA, IR_CACHE_CG, IR_CACHE_CS};
    static const uint8_t evict_ir[] = {IR_EVICT_FIRST, IR_EVICT_LAST, IR_EVICT_NORMAL};
    if (cache) {
        int c = string_option(S, cache, bi, "cache modifier", cache_names, "\"ca\", \"cg\" or \"cs\"");
        if (!c) return false;
        if (i) i->cache = cache_ir[c - 1];
    }
    if (evict) {
        int e = string_option(S, evict, bi, "eviction policy", evict_names, "\"first\", \"last\" or \"normal\"");
        if (!e) return false;
        if (i) i->eviction = evict_ir[e - 1];
    }
    return true;
}

/* load(ptr, mask?, other?; cache, eviction, volatile) */
static sema_val b_load(sema *S, ast_node *call, ast_node **a, const sema_builtin *bi) {
    sema_val v[3] = {{0}};
    ast_node *nodes[3] = {a[0], a[1], a[2]};
    bool ok = pointer_arg(S, a[0], bi, false, &v[0]);
    if (a[1] && !mask_arg(S, a[1], bi, &v[1])) ok = false;
    if (a[2]) {
        v[2] = numeric_arg(S, a[2], bi, "'other'");
        if (v[2].kind == SV_ERROR) ok = false;
        else if (v[2].type.dtype == DT_PTR) {
            diag_error(S->d, a[2]->loc, "'other' of 'load' must be a number, got %s", sema_type_str(S, v[2]));
            ok = false;
        }
    }
    bool is_volatile = false;
    if (a[5] && !const_bool(S, a[5], bi, "'volatile'", &is_volatile)) ok = false;
    if (!cache_evict(S, a[3], a[4], bi, NULL)) ok = false;
    if (!ok || !need_fn(S, call, bi)) return sema_error();
    if (a[2] && !a[1]) {
        diag_warning(S->d, a[2]->loc, "'other' has no effect without a mask");
        nodes[2] = NULL;
    }
    if (a[1] && v[1].kind == SV_CONST && v[1].i) nodes[1] = nodes[2] = NULL; /* mask = true */
    ir_type shape;
    if (!broadcast_all(S, v, nodes, 3, &shape)) return sema_error();
    ir_type elem = ir_scalar((blk_dtype)v[0].type.pointee);
    ir_value *ops[3];
    int n = 0;
    ops[n++] = sema_broadcast_ir(S, v[0].v, shape, a[0]->loc);
    if (nodes[1]) ops[n++] = sema_convert(S, v[1], DT_BOOL, shape, a[1]->loc);
    if (nodes[1] && nodes[2]) ops[n++] = sema_cast_to(S, v[2], elem, shape, a[2]->loc);
    for (int k = 0; k < n; k++)
        if (!ops[k]) return sema_error();
    ir_type rt = ir_shaped(elem, shape.rank, shape.shape);
    ir_inst *i = sema_inst(S, IR_LOAD, call->loc, ops, n, &rt, 1, 0);
    if (!i) return sema_error();
    cache_evict(S, a[3], a[4], bi, i);
    if (is_volatile) i->flags |= IRF_VOLATILE;
    return sema_value(i->results[0]);
}

/* store(ptr, value, mask?; cache, eviction) */
static sema_val b_store(sema *S, ast_node *call, ast_node **a, const sema_builtin *bi) {
    sema_val v[3] = {{0}};
    ast_node *nodes[3] = {a[0], a[1], a[2]};
    bool ok = pointer_arg(S, a[0], bi, true, &v[0]);
    v[1] = numeric_arg(S, a[1], bi, "the value");
    if (v[1].kind == SV_ERROR) ok = false;
    else if (v[1].type.dtype == DT_PTR) {
        diag_error(S->d, a[1]->loc, "cannot store a pointer value (%s)", sema_type_str(S, v[1]));
        ok = false;
    }
    if (a[2] && !mask_arg(S, a[2], bi, &v[2])) ok = false;
    if (!cache_evict(S, a[3], a[4], bi, NULL)) ok = false;
    if (!ok || !need_fn(S, call, bi)) return sema_error();
    if (a[2] && v[2].kind == SV_CONST && v[2].i) nodes[2] = NULL;
    ir_type shape;
    if (!broadcast_all(S, v, nodes, 3, &shape)) return sema_error();
    ir_type elem = ir_scalar((blk_dtype)v[0].type.pointee);
    ir_value *ops[3];
    int n = 0;
    ops[n++] = sema_broadcast_ir(S, v[0].v, shape, a[0]->loc);
    ops[n++] = sema_cast_to(S, v[1], elem, shape, a[1]->loc);
    if (nodes[2]) ops[n++] = sema_convert(S, v[2], DT_BOOL, shape, a[2]->loc);
    for (int k = 0; k < n; k++)
        if (!ops[k]) return sema_error();
    ir_inst *i = sema_inst(S, IR_STORE, call->loc, ops, n, NULL, 0, 0);
    if (!i) return sema_error();
    cache_evict(S, a[3], a[4], bi, i);
    return sema_void();
}

/* atomic_add/max/min/and/or/xor/xchg(ptr, value, mask?; sem, scope), atomic_cas(ptr, cmp, value; sem, scope) */
static sema_val b_atomic(sema *S, ast_node *call, ast_node **a, const sema_builtin *bi) {
    bool cas = bi->op == IR_ATOMIC_CAS;
    sema_val v[3] = {{0}};
    ast_node *nodes[3] = {a[0], a[1], a[2]};
    bool ok = pointer_arg(S, a[0], bi, true, &v[0]);
    for (int k = 1; k < 3; k++) {
        if (!a[k]) continue;
        if (!cas && k == 2) {
            if (!mask_arg(S, a[2], bi, &v[2])) ok = false;
            continue;
        }
        v[k] = numeric_arg(S, a[k], bi, k == 1 && cas ? "the compare value" : "the value");
        if (v[k].kind == SV_ERROR) ok = false;
        else if (v[k].type.dtype == DT_PTR) {
            diag_error(S->d, a[k]->loc, "atomics operate on numbers, got %s", sema_type_str(S, v[k]));
            ok = false;
        }
    }
    int sem = 0, scope = 0;
    ast_node *sem_node = a[3];
    if (sem_node && !(sem = string_option(S, sem_node, bi, "memory semantics", sem_names,
                                          "\"relaxed\", \"acq_rel\", \"acquire\" or \"release\"")))
        ok = false;
    if (a[4] && !(scope = string_option(S, a[4], bi, "scope", scope_names, "\"gpu\" or \"cta\"")))
        ok = false;
    if (!ok) return sema_error();
    blk_dtype pt = (blk_dtype)v[0].type.pointee;
    bool bitwise = !cas && (bi->kind == IR_ATOM_AND || bi->kind == IR_ATOM_OR || bi->kind == IR_ATOM_XOR);
    if ((bitwise && !dtype_is_int(pt)) || (!bitwise && pt == DT_BOOL) ||
        (!cas && (bi->kind == IR_ATOM_ADD || bi->kind == IR_ATOM_MAX || bi->kind == IR_ATOM_MIN) &&
         (pt == DT_F8E4M3 || pt == DT_F8E5M2))) {
        diag_error(S->d, a[0]->loc, "'%s' does not support %s", bname(bi), sema_type_str(S, v[0]));
        return sema_error();
    }
    if (!need_fn(S, call, bi)) return sema_error();
    if (!cas && a[2] && v[2].kind == SV_CONST && v[2].i) nodes[2] = NULL;
    ir_type shape;
    if (!broadcast_all(S, v, nodes, 3, &shape)) return sema_error();
    ir_type elem = ir_scalar(pt);
    ir_value *ops[4];
    int n = 0;
    ops[n++] = sema_broadcast_ir(S, v[0].v, shape, a[0]->loc);
    ops[n++] = sema_cast_to(S, v[1], elem, shape, a[1]->loc);
    if (cas) ops[n++] = sema_cast_to(S, v[2], elem, shape, a[2]->loc);
    else if (nodes[2]) ops[n++] = sema_convert(S, v[2], DT_BOOL, shape, a[2]->loc);
    for (int k = 0; k < n; k++)
        if (!ops[k]) return sema_error();
    ir_type rt = ir_shaped(elem, shape.rank, shape.shape);
    ir_inst *i = sema_inst(S, (ir_op)bi->op, call->loc, ops, n, &rt, 1, 0);
    if (!i) return sema_error();
    i->kind = bi->kind;
    static const uint8_t sem_ir[] = {IR_SEM_ACQ_REL, IR_SEM_RELAXED, IR_SEM_ACQ_REL, IR_SEM_ACQUIRE, IR_SEM_RELEASE};
    static const uint8_t scope_ir[] = {IR_SCOPE_GPU, IR_SCOPE_GPU, IR_SCOPE_CTA};
    i->sem = sem_ir[sem]; /* 0: not given, acq_rel */
    i->scope = scope_ir[scope];
    return sema_value(i->results[0]);
}

/* ---- tensor descriptors ---- */

/* A list of scalar integers converted to `dt` (tensor_desc shape/strides, desc offsets). */
static bool int_list(sema *S, ast_node *n, const sema_builtin *bi, const char *what, blk_dtype dt, ir_value **out,
                     int *count) {
    sema_val v = arg(S, n);
    if (v.kind == SV_ERROR) return false;
    if (v.kind != SV_LIST && v.kind != SV_TUPLE) {
        diag_error(S->d, n->loc, "%s of '%s' must be a list like [M, K], got %s", what, bname(bi), sema_type_str(S, v));
        return false;
    }
    if (v.n < 1 || v.n > IR_MAX_RANK) {
        diag_error(S->d, n->loc, "%s of '%s' must have 1 to %d entries, got %d", what, bname(bi), IR_MAX_RANK, v.n);
        return false;
    }
    for (int k = 0; k < v.n; k++) {
        sema_val e = v.elems[k];
        blk_loc el = n->kind == AST_LIST && k < n->args.len ? n->args.data[k]->loc : n->loc;
        if (!sema_is_numeric(e) || !dtype_is_int(e.type.dtype) || sema_type_of(e).rank > 0) {
            diag_error(S->d, el, "entries of %s of '%s' must be scalar integers, got %s", what, bname(bi),
                       sema_type_str(S, e));
            return false;
        }
        if (out) {
            out[k] = sema_convert(S, e, dt, ir_scalar(dt), el);
            if (!out[k]) return false;
        }
    }
    *count = v.n;
    return true;
}

/* tensor_desc(base, shape = [..], strides = [..], block = [..]) */
static sema_val b_tensor_desc(sema *S, ast_node *call, ast_node **a, const sema_builtin *bi) {
    sema_val base;
    if (!pointer_arg(S, a[0], bi, false, &base)) return sema_error();
    if (base.type.rank > 0) {
        diag_error(S->d, a[0]->loc, "the base of 'tensor_desc' must be a scalar pointer, got %s", sema_type_str(S, base));
        return sema_error();
    }
    if (!need_fn(S, call, bi)) return sema_error();
    sema_desc *d = ARENA_NEW(S->a, sema_desc);
    if (!d) return sema_error();
    int nshape, nstrides;
    ir_type block;
    if (!int_list(S, a[1], bi, "the shape", DT_I64, d->dims, &nshape) ||
        !int_list(S, a[2], bi, "the strides", DT_I64, d->strides, &nstrides) || !shape_arg(S, a[3], bi, &block))
        return sema_error();
    if (nshape != nstrides || nshape != block.rank) {
        diag_error(S->d, call->loc, "shape, strides and block of 'tensor_desc' must have the same length, got %d, %d "
                   "and %d", nshape, nstrides, block.rank);
        return sema_error();
    }
    d->base = base.v;
    d->rank = nshape;
    for (int k = 0; k < block.rank; k++) d->block[k] = block.shape[k];
    d->func = S->fn->func;
    return (sema_val){.kind = SV_DESC, .desc = d};
}

static const sema_builtin desc_load_bi = {"load", "offsets", NULL, IR_DESC_LOAD, 0, false};
static const sema_builtin desc_store_bi = {"store", "offsets, value", NULL, IR_DESC_STORE, 0, false};

/* d.load([offs]), d.store([offs], value) */
sema_val sema_desc_method(sema *S, sema_val desc, const char *method, ast_node *call) {
    sema_desc *d = desc.desc;
    bool is_load = strcmp(method, "load") == 0;
    if (!is_load && strcmp(method, "store") != 0) {
        diag_error(S->d, call->lhs->loc, "a tensor descriptor has no method '%s' (it has load and store)", method);
        return sema_error();
    }
    const sema_builtin *bi = is_load ? &desc_load_bi : &desc_store_bi;
    ast_node *a[MAX_PARAMS] = {0};
    param_list p;
    const char *display = is_load ? "desc.load" : "desc.store";
    if (!bind_args(S, bi, display, call, a, &p)) return sema_error();
    if (!S->fn || d->func != S->fn->func) {
        diag_error(S->d, call->loc, "a tensor descriptor can only be used in the kernel or fn that created it");
        return sema_error();
    }
    ir_value *offs[IR_MAX_RANK];
    int n;
    if (!int_list(S, a[0], bi, "the offsets", DT_I32, offs, &n)) return sema_error();
    if (n != d->rank) {
        diag_error(S->d, a[0]->loc, "the descriptor has %d dimension%s but %d offset%s given", d->rank,
                   d->rank == 1 ? "" : "s", n, n == 1 ? " is" : "s are");
        return sema_error();
    }
    ir_type elem = ir_scalar((blk_dtype)d->base->type.pointee);
    ir_type bt = ir_shaped(elem, d->rank, d->block);
    ir_value *ops[1 + 3 * IR_MAX_RANK + 1];
    int k = 0;
    ops[k++] = d->base;
    for (int j = 0; j < d->rank; j++) ops[k++] = d->dims[j];
    for (int j = 0; j < d->rank; j++) ops[k++] = d->strides[j];
    for (int j = 0; j < d->rank; j++) ops[k++] = offs[j];
    if (is_load) {
        ir_inst *i = sema_inst(S, IR_DESC_LOAD, call->loc, ops, k, &bt, 1, 0);
        return i ? sema_value(i->results[0]) : sema_error();
    }
    if (d->base->type.ptr_const) {
        diag_error(S->d, call->loc, "cannot store through a descriptor of %s: the pointer is read-only",
                   sema_ir_type_str(S, d->base->type));
        return sema_error();
    }
    sema_val v = numeric_arg(S, a[1], bi, "the value");
    if (v.kind == SV_ERROR) return v;
    ir_type vt = sema_type_of(v), s;
    if (v.type.dtype == DT_PTR || !sema_broadcast_shape(vt, bt, &s) || !ir_shape_eq(s, bt)) {
        diag_error(S->d, a[1]->loc, "the value stored through the descriptor must be a block of shape %s, got %s",
                   sema_ir_type_str(S, bt), sema_type_str(S, v));
        return sema_error();
    }
    ops[k] = sema_cast_to(S, v, elem, bt, a[1]->loc);
    if (!ops[k]) return sema_error();
    sema_inst(S, IR_DESC_STORE, call->loc, ops, k + 1, NULL, 0, 0);
    return sema_void();
}

/* ---- math ---- */

static bool float_only(ir_op op) {
    return op != IR_ABS && op != IR_MINIMUM && op != IR_MAXIMUM && op != IR_MULHI;
}

/* abs exp exp2 log log2 sqrt rsqrt sin cos tanh sigmoid erf floor ceil (x; fast) */
static sema_val b_unary_math(sema *S, ast_node *call, ast_node **a, const sema_builtin *bi) {
    sema_val x = numeric_arg(S, a[0], bi, "the argument");
    bool fast = false;
    if (a[1] && !const_bool(S, a[1], bi, "'fast'", &fast)) return sema_error();
    if (x.kind == SV_ERROR) return x;
    ir_op op = (ir_op)bi->op;
    blk_dtype t = (blk_dtype)x.type.dtype;
    if (t == DT_BOOL || t == DT_PTR) {
        diag_error(S->d, a[0]->loc, "'%s' needs a number, got %s", bname(bi), sema_type_str(S, x));
        return sema_error();
    }
    bool to_float = float_only(op) && !dtype_is_float(t);
    if (x.kind == SV_CONST) {
        if (op == IR_ABS && dtype_is_int(t)) {
            sema_i128 v = sema_const_i128(x);
            if (v < 0) v = -v;
            if (x.weak) return sema_weak_int(v);
            if (v > INT64_MAX || (dtype_is_signed(t) && v >= ((sema_i128)1 << (dtype_bits(t) - 1)))) {
                diag_error(S->d, call->loc, "integer overflow in constant expression: abs(%lld) does not fit in %s",
                           (long long)x.i, dtype_name(t));
                return sema_error();
            }
            return sema_int_const(t, false, (int64_t)v);
        }
        ir_scalar_val s;
        s.f = sema_const_f64(x);
        bool weak = x.weak;
        blk_dtype ft = to_float ? DT_F32 : t;
        if (!weak) s = eval_normalize(ft, s);
        ir_scalar_val r = eval_unary(op, weak ? DT_F64 : ft, s);
        return sema_float_const(ft, weak, r.f);
    }
    if (!need_fn(S, call, bi)) return sema_error();
    ir_value *v = x.v;
    if (to_float) v = sema_op1(S, IR_CAST, a[0]->loc, ir_shaped(ir_scalar(DT_F32), v->type.rank, v->type.shape), v);
    return emit_flags(sema_op1(S, op, call->loc, v->type, v), fast ? IRF_FAST : 0);
}

/* Elementwise op over n operands with promotion and broadcasting. */
static sema_val elementwise(sema *S, ast_node *call, const sema_builtin *bi, ir_op op, sema_val *v, ast_node **nodes,
                            int n, bool fast) {
    for (int k = 0; k < n; k++) {
        if (v[k].kind == SV_ERROR) return v[k];
        if (v[k].type.dtype == DT_PTR || (float_only(op) && v[k].type.dtype == DT_BOOL)) {
            diag_error(S->d, nodes[k]->loc, "'%s' needs numbers, got %s", bname(bi), sema_type_str(S, v[k]));
            return sema_error();
        }
    }
    bool weak;
    int dt = promote_many(v, n, &weak);
    if (dt < 0) {
        diag_error(S->d, call->loc, "invalid arguments to '%s'", bname(bi));
        return sema_error();
    }
    if (float_only(op) && !dtype_is_float((blk_dtype)dt)) dt = DT_F32;
    if (weak && (op == IR_MULHI || op == IR_NEXTAFTER)) { /* literals only: their own types, as at run time */
        weak = false;
        dt = DT_F32;
        if (op == IR_MULHI) {
            dt = DT_I32;
            for (int k = 0; k < n; k++)
                if (!sema_fits(DT_I32, sema_const_i128(v[k]))) dt = DT_I64;
        }
    }
    if (op == IR_NEXTAFTER && dt != DT_F32 && dt != DT_F64) {
        diag_error(S->d, call->loc, "'nextafter' steps in f32 or f64, not %s: convert with `as f32`",
                   dtype_name((blk_dtype)dt));
        return sema_error();
    }
    bool all_const = true;
    for (int k = 0; k < n; k++) all_const &= v[k].kind == SV_CONST;
    if (all_const) {
        if (weak && dtype_is_int((blk_dtype)dt)) { /* minimum/maximum of integer literals */
            sema_i128 x = sema_const_i128(v[0]), y = sema_const_i128(v[1]);
            return sema_weak_int(op == IR_MINIMUM ? (x < y ? x : y) : (x > y ? x : y));
        }
        ir_scalar_val s[3];
        blk_dtype et = weak ? DT_F64 : (blk_dtype)dt;
        for (int k = 0; k < n; k++) {
            sema_val c = v[k];
            if (weak) s[k].f = sema_const_f64(c);
            else {
                if (!sema_const_convert(S, &c, (blk_dtype)dt, nodes[k]->loc)) return sema_error();
                s[k] = dtype_is_float((blk_dtype)dt) ? (ir_scalar_val){.f = c.f} : (ir_scalar_val){.i = c.i};
            }
        }
        ir_scalar_val r = n == 3 ? eval_fma(et, s[0], s[1], s[2]) : eval_binary(op, 0, et, s[0], s[1]);
        if (dtype_is_float((blk_dtype)dt)) return sema_float_const((blk_dtype)dt, weak, r.f);
        sema_val out = {.kind = SV_CONST, .type = ir_scalar((blk_dtype)dt), .i = r.i};
        return out;
    }
    if (!need_fn(S, call, bi)) return sema_error();
    ir_type shape;
    if (!broadcast_all(S, v, nodes, n, &shape)) return sema_error();
    if (weak) dt = DT_F32;
    ir_value *ops[3];
    for (int k = 0; k < n; k++) {
        ops[k] = sema_convert(S, v[k], (blk_dtype)dt, shape, nodes[k]->loc);
        if (!ops[k]) return sema_error();
    }
    ir_type rt = ir_shaped(ir_scalar((blk_dtype)dt), shape.rank, shape.shape);
    ir_inst *i = sema_inst(S, op, call->loc, ops, n, &rt, 1, 0);
    if (!i) return sema_error();
    if (fast) i->flags |= IRF_FAST;
    return sema_value(i->results[0]);
}

/* pow(a, b), minimum(a, b), maximum(a, b), fma(a, b, c) (; fast) */
static sema_val b_nary_math(sema *S, ast_node *call, ast_node **a, const sema_builtin *bi) {
    int n = bi->op == IR_FMA ? 3 : 2;
    sema_val v[3];
    for (int k = 0; k < n; k++) v[k] = numeric_arg(S, a[k], bi, "an argument");
    bool fast = false;
    if (a[n] && !const_bool(S, a[n], bi, "'fast'", &fast)) return sema_error();
    return elementwise(S, call, bi, (ir_op)bi->op, v, a, n, fast);
}

/* mulhi(a, b): integers only */
static sema_val b_mulhi(sema *S, ast_node *call, ast_node **a, const sema_builtin *bi) {
    sema_val v[2];
    for (int k = 0; k < 2; k++) {
        v[k] = numeric_arg(S, a[k], bi, "an argument");
        if (v[k].kind == SV_ERROR) return v[k];
        if (!dtype_is_int(v[k].type.dtype)) {
            diag_error(S->d, a[k]->loc, "'mulhi' needs integers, got %s", sema_type_str(S, v[k]));
            return sema_error();
        }
    }
    return elementwise(S, call, bi, IR_MULHI, v, a, 2, false);
}

/* clz popc brev bswap (x): integers; clz and popc count into an i32 */
static sema_val b_bits(sema *S, ast_node *call, ast_node **a, const sema_builtin *bi) {
    sema_val x = numeric_arg(S, a[0], bi, "the argument");
    if (x.kind == SV_ERROR) return x;
    blk_dtype t = (blk_dtype)x.type.dtype;
    if (!dtype_is_int(t)) {
        diag_error(S->d, a[0]->loc, "'%s' needs an integer, got %s", bname(bi), sema_type_str(S, x));
        return sema_error();
    }
    ir_op op = (ir_op)bi->op;
    bool count = op == IR_CLZ || op == IR_POPC;
    if (x.kind == SV_CONST) {
        if (x.weak && !sema_const_convert(S, &x, t, a[0]->loc)) return sema_error();
        ir_scalar_val r = eval_unary(op, t, (ir_scalar_val){.i = x.i});
        return sema_int_const(count ? DT_I32 : t, false, r.i);
    }
    if (!need_fn(S, call, bi)) return sema_error();
    ir_value *r = sema_op1(S, op, call->loc, x.v->type, x.v);
    if (count && r && t != DT_I32) r = sema_op1(S, IR_CAST, call->loc, ir_shaped(ir_scalar(DT_I32), r->type.rank, r->type.shape), r);
    return r ? sema_value(r) : sema_error();
}

/* The signed integer dtype of a float's width (for signbit). */
static blk_dtype int_of_width(int bits) { return bits == 8 ? DT_I8 : bits == 16 ? DT_I16 : bits == 32 ? DT_I32 : DT_I64; }

static ir_value *cmp_ir(sema *S, ir_cmp kind, blk_loc loc, ir_value *x, ir_value *y) {
    ir_type rt = ir_shaped(ir_scalar(DT_BOOL), x->type.rank, x->type.shape);
    ir_value *ops[2] = {x, y};
    ir_inst *i = sema_inst(S, IR_CMP, loc, ops, 2, &rt, 1, 0);
    if (!i) return NULL;
    i->kind = kind;
    return i->results[0];
}

/* isnan isinf isfinite signbit (x): bool; integers are converted to f32.
 * Built from compares (and a bitcast for signbit), so the GPU and the
 * interpreter agree by construction. signbit of a NaN reads its sign bit,
 * which arithmetic leaves unspecified (the GPU's NaN is positive, x86's
 * 0/0 negative). */
static sema_val b_float_pred(sema *S, ast_node *call, ast_node **a, const sema_builtin *bi) {
    sema_val x = numeric_arg(S, a[0], bi, "the argument");
    if (x.kind == SV_ERROR) return x;
    blk_dtype t = (blk_dtype)x.type.dtype;
    if (t == DT_BOOL || t == DT_PTR) {
        diag_error(S->d, a[0]->loc, "'%s' needs a number, got %s", bname(bi), sema_type_str(S, x));
        return sema_error();
    }
    bool is_nan = strcmp(bi->name, "isnan") == 0, is_inf = strcmp(bi->name, "isinf") == 0;
    bool is_sign = strcmp(bi->name, "signbit") == 0; /* else isfinite */
    if (x.kind == SV_CONST) {
        double f = sema_const_f64(x);
        if (!x.weak && !dtype_is_float(t)) f = (float)f;
        return sema_bool_const(is_nan ? isnan(f) : is_inf ? isinf(f) : is_sign ? signbit(f) != 0 : isfinite(f));
    }
    if (!need_fn(S, call, bi)) return sema_error();
    ir_value *v = x.v;
    if (!dtype_is_float(t)) {
        t = DT_F32;
        v = sema_op1(S, IR_CAST, a[0]->loc, ir_shaped(ir_scalar(DT_F32), v->type.rank, v->type.shape), v);
    }
    blk_loc loc = call->loc;
    ir_value *r;
    if (is_nan) { /* x != x */
        r = cmp_ir(S, IR_CMP_NE, loc, v, v);
    } else if (is_sign) { /* the bits as a signed integer are negative */
        blk_dtype it = int_of_width(dtype_bits(t));
        ir_value *bits = sema_op1(S, IR_BITCAST, loc, ir_shaped(ir_scalar(it), v->type.rank, v->type.shape), v);
        ir_value *zero = sema_convert(S, sema_int_const(it, false, 0), it, bits->type, loc);
        r = zero ? cmp_ir(S, IR_CMP_LT, loc, bits, zero) : NULL;
    } else { /* isinf: |x| == inf, isfinite: |x| < inf (false for NaN) */
        ir_value *m = sema_op1(S, IR_ABS, loc, v->type, v);
        ir_value *inf = sema_convert(S, sema_float_const(t, false, INFINITY), t, v->type, loc);
        r = inf ? cmp_ir(S, is_inf ? IR_CMP_EQ : IR_CMP_LT, loc, m, inf) : NULL;
    }
    return r ? sema_value(r) : sema_error();
}

/* bitcast(x, dtype): the same bits as another dtype of the same width */
static sema_val b_bitcast(sema *S, ast_node *call, ast_node **a, const sema_builtin *bi) {
    sema_val x = numeric_arg(S, a[0], bi, "the argument");
    ir_type to;
    if (!dtype_arg(S, a[1], bi, &to) || x.kind == SV_ERROR) return sema_error();
    blk_dtype from = (blk_dtype)x.type.dtype, tt = (blk_dtype)to.dtype;
    if (from == DT_BOOL || from == DT_PTR || tt == DT_BOOL) {
        diag_error(S->d, from == DT_BOOL || from == DT_PTR ? a[0]->loc : a[1]->loc,
                   "'bitcast' converts between numeric types (bool and pointers use `as`), got %s to %s",
                   sema_type_str(S, x), dtype_name(tt));
        return sema_error();
    }
    if (dtype_bits(from) != dtype_bits(tt)) {
        diag_error(S->d, call->loc, "'bitcast' from %s (%d bits) to %s (%d bits): the widths differ; `as` converts values",
                   dtype_name(from), dtype_bits(from), dtype_name(tt), dtype_bits(tt));
        return sema_error();
    }
    if (x.kind == SV_CONST) {
        if (x.weak && !sema_const_convert(S, &x, from, a[0]->loc)) return sema_error();
        ir_scalar_val in = dtype_is_float(from) ? (ir_scalar_val){.f = x.f} : (ir_scalar_val){.i = x.i};
        ir_scalar_val r = eval_bitcast(from, tt, in);
        return dtype_is_float(tt) ? sema_float_const(tt, false, r.f) : sema_int_const(tt, false, r.i);
    }
    if (!need_fn(S, call, bi)) return sema_error();
    ir_value *r = sema_op1(S, IR_BITCAST, call->loc, ir_shaped(to, x.v->type.rank, x.v->type.shape), x.v);
    return r ? sema_value(r) : sema_error();
}

/* clamp(x, lo, hi) = minimum(maximum(x, lo), hi) */
static sema_val b_clamp(sema *S, ast_node *call, ast_node **a, const sema_builtin *bi) {
    sema_val v[3];
    for (int k = 0; k < 3; k++) v[k] = numeric_arg(S, a[k], bi, "an argument");
    for (int k = 0; k < 3; k++)
        if (v[k].kind == SV_ERROR) return v[k];
    bool weak;
    int dt = promote_many(v, 3, &weak);
    if (dt < 0 || v[0].type.dtype == DT_BOOL) {
        diag_error(S->d, call->loc, "invalid arguments to 'clamp': %s, %s and %s", sema_type_str(S, v[0]),
                   sema_type_str(S, v[1]), sema_type_str(S, v[2]));
        return sema_error();
    }
    static const sema_builtin max_bi = {"clamp", "", NULL, IR_MAXIMUM, 0, true};
    sema_val lo = elementwise(S, call, &max_bi, IR_MAXIMUM, v, a, 2, false);
    if (lo.kind == SV_ERROR) return lo;
    sema_val w[2] = {lo, v[2]};
    ast_node *wn[2] = {a[0], a[2]};
    return elementwise(S, call, &max_bi, IR_MINIMUM, w, wn, 2, false);
}

/* where(cond, a, b) */
static sema_val b_where(sema *S, ast_node *call, ast_node **a, const sema_builtin *bi) {
    sema_val c = numeric_arg(S, a[0], bi, "the condition");
    sema_val x = numeric_arg(S, a[1], bi, "an argument"), y = numeric_arg(S, a[2], bi, "an argument");
    if (c.kind == SV_ERROR || x.kind == SV_ERROR || y.kind == SV_ERROR) return sema_error();
    if (c.type.dtype != DT_BOOL) {
        diag_error(S->d, a[0]->loc, "the condition of 'where' must be bool, got %s", sema_type_str(S, c));
        return sema_error();
    }
    bool weak;
    int dt;
    bool ptrs = x.type.dtype == DT_PTR || y.type.dtype == DT_PTR;
    if (ptrs) {
        if (x.kind != SV_VALUE || y.kind != SV_VALUE || !ir_type_eq(ir_elem(x.type), ir_elem(y.type))) {
            diag_error(S->d, call->loc, "'where' cannot choose between %s and %s", sema_type_str(S, x),
                       sema_type_str(S, y));
            return sema_error();
        }
        dt = DT_PTR;
        weak = false;
    } else {
        dt = sema_promote(x, y, &weak);
    }
    if (c.kind == SV_CONST && x.kind == SV_CONST && y.kind == SV_CONST) {
        sema_val r = c.i ? x : y;
        if (!weak && !sema_const_convert(S, &r, (blk_dtype)dt, call->loc)) return sema_error();
        return r;
    }
    if (!need_fn(S, call, bi)) return sema_error();
    sema_val v[3] = {c, x, y};
    ir_type shape;
    if (!broadcast_all(S, v, a, 3, &shape)) return sema_error();
    if (weak) dt = dtype_is_float((blk_dtype)dt) ? DT_F32 : (x.type.dtype == DT_I32 && y.type.dtype == DT_I32 ? DT_I32 : DT_I64);
    ir_value *ops[3] = {sema_convert(S, c, DT_BOOL, shape, a[0]->loc),
                        ptrs ? sema_broadcast_ir(S, x.v, shape, a[1]->loc) : sema_convert(S, x, (blk_dtype)dt, shape, a[1]->loc),
                        ptrs ? sema_broadcast_ir(S, y.v, shape, a[2]->loc) : sema_convert(S, y, (blk_dtype)dt, shape, a[2]->loc)};
    if (!ops[0] || !ops[1] || !ops[2]) return sema_error();
    return sema_value(sema_op3(S, IR_SELECT, call->loc, ops[1]->type, ops[0], ops[1], ops[2]));
}

/* cdiv(a, b) = (a + b - 1) / b on integers; folded on constants */
static sema_val b_cdiv(sema *S, ast_node *call, ast_node **a, const sema_builtin *bi) {
    sema_val x = numeric_arg(S, a[0], bi, "an argument"), y = numeric_arg(S, a[1], bi, "an argument");
    if (x.kind == SV_ERROR || y.kind == SV_ERROR) return sema_error();
    for (int k = 0; k < 2; k++) {
        sema_val v = k ? y : x;
        if (!dtype_is_int(v.type.dtype)) {
            diag_error(S->d, a[k]->loc, "'cdiv' needs integers, got %s", sema_type_str(S, v));
            return sema_error();
        }
    }
    if (y.kind == SV_CONST && y.i == 0) {
        diag_error(S->d, a[1]->loc, "division by zero in 'cdiv'");
        return sema_error();
    }
    blk_loc loc = call->loc;
    sema_val s = sema_binary(S, TK_PLUS, x, y, loc, a[0], a[1]);
    s = sema_binary(S, TK_MINUS, s, sema_weak_int(1), loc, call, NULL);
    return sema_binary(S, TK_SLASH, s, y, loc, call, a[1]);
}

/* ---- reductions and scans ---- */

/* The dtype sum/cumsum accumulate in (Triton's rule): narrow ints and bool
 * -> i32 (u32 for unsigned); for sum also f16/bf16/f8 -> f32. */
static blk_dtype sum_dtype(blk_dtype t, bool floats) {
    if (t == DT_BOOL) return DT_I32;
    if (dtype_is_int(t) && dtype_bits(t) < 32) return dtype_is_unsigned(t) ? DT_U32 : DT_I32;
    if (floats && dtype_is_float(t) && dtype_bits(t) < 32) return DT_F32;
    return t;
}

/* Flatten x to rank 1 (reductions with no axis reduce every element). */
static ir_value *flatten(sema *S, ir_value *v, blk_loc loc) {
    if (v->type.rank == 1) return v;
    int32_t n = (int32_t)ir_numel(v->type);
    return sema_op1(S, IR_RESHAPE, loc, ir_shaped(v->type, 1, &n), v);
}

static ir_value *keep_dims(sema *S, ir_value *r, ir_type in, int axis, bool all, blk_loc loc) {
    if (all) {
        int32_t ones[IR_MAX_RANK] = {1, 1, 1, 1};
        ir_type t = ir_shaped(r->type, in.rank, ones);
        return r->type.rank == 0 ? sema_op1(S, IR_SPLAT, loc, t, r) : sema_op1(S, IR_RESHAPE, loc, t, r);
    }
    int32_t s[IR_MAX_RANK];
    for (int k = 0; k < in.rank; k++) s[k] = k == axis ? 1 : in.shape[k];
    ir_type t = ir_shaped(r->type, in.rank, s);
    ir_inst *i = sema_inst(S, IR_EXPAND_DIMS, loc, &r, 1, &t, 1, 0);
    if (!i) return NULL;
    i->axis = axis;
    return i->results[0];
}

/* The type left after reducing `axis` of t. */
static ir_type reduced(ir_type t, int axis, blk_dtype dt) {
    int32_t s[IR_MAX_RANK];
    int r = 0;
    for (int k = 0; k < t.rank; k++)
        if (k != axis) s[r++] = t.shape[k];
    return ir_shaped(ir_scalar(dt), r, s);
}

/* sum max min prod xor_sum argmax argmin (x, axis?; keep_dims) */
static sema_val b_reduce(sema *S, ast_node *call, ast_node **a, const sema_builtin *bi) {
    sema_val x = block_arg(S, a[0], bi);
    if (x.kind == SV_ERROR) return x;
    int axis = 0;
    bool all = !a[1], keep = false;
    if (a[1]) {
        if (bi->kind == IR_RED_MAX || bi->kind == IR_RED_MIN) { /* max(a, b) is a reduction, not a comparison */
            sema_val ax = arg(S, a[1]);
            if (ax.kind == SV_ERROR) return ax;
            if (ax.kind == SV_NONE) all = true;
            else if (!sema_is_const_int(ax)) {
                diag_error(S->d, a[1]->loc, "the axis of '%s' must be a compile-time integer, got %s; to compare two "
                           "values element by element use %s(a, b)", bname(bi), got_str(S, ax),
                           bi->kind == IR_RED_MAX ? "maximum" : "minimum");
                return sema_error();
            }
        }
        if (!all && !axis_arg(S, a[1], bi, x.type, &axis)) return sema_error();
    }
    if (a[2] && !const_bool(S, a[2], bi, "'keep_dims'", &keep)) return sema_error();
    blk_dtype t = (blk_dtype)x.type.dtype, rt = t;
    bool arg_red = bi->kind == IR_RED_ARGMAX || bi->kind == IR_RED_ARGMIN;
    if (t == DT_PTR || (bi->kind == IR_RED_XOR_SUM && !dtype_is_int(t)) ||
        ((bi->kind == IR_RED_SUM || bi->kind == IR_RED_PROD || arg_red) && t == DT_BOOL && bi->kind != IR_RED_SUM)) {
        diag_error(S->d, a[0]->loc, "'%s' does not support %s", bname(bi), sema_type_str(S, x));
        return sema_error();
    }
    if (bi->kind == IR_RED_SUM) rt = sum_dtype(t, true);
    if (!need_fn(S, call, bi)) return sema_error();
    ir_value *v = x.v;
    if (rt != t) v = sema_op1(S, IR_CAST, a[0]->loc, ir_shaped(ir_scalar(rt), v->type.rank, v->type.shape), v);
    if (all) v = flatten(S, v, call->loc);
    ir_type out = reduced(v->type, all ? 0 : axis, arg_red ? DT_I32 : rt);
    ir_inst *i = sema_inst(S, arg_red ? IR_ARGREDUCE : IR_REDUCE, call->loc, &v, 1, &out, 1, 0);
    if (!i) return sema_error();
    i->axis = all ? 0 : axis;
    i->kind = bi->kind;
    ir_value *r = i->results[0];
    if (keep) r = keep_dims(S, r, x.type, axis, all, call->loc);
    return sema_value(r);
}

/* The combine fn argument of reduce/scan. */
static sema_item *combine_arg(sema *S, ast_node *n, const sema_builtin *bi) {
    sema_val f = arg(S, n);
    if (f.kind == SV_ERROR) return NULL;
    if (f.kind != SV_FN) {
        diag_error(S->d, n->loc, "the combine function of '%s' must be a fn of two arguments, got %s", bname(bi),
                   sema_type_str(S, f));
        return NULL;
    }
    return f.item;
}

/* Fill a reduce/scan region: args (a, b) of the element type, yields fn(a, b). */
static bool combine_region(sema *S, ir_inst *i, sema_item *fn, ir_type elem, blk_loc loc) {
    ir_region *r = i->regions[0];
    ir_value *args[2] = {ir_region_add_arg(r, elem, NULL), ir_region_add_arg(r, elem, NULL)};
    ir_region *old = S->fn->b.region;
    ir_inst *before = S->fn->b.before;
    S->fn->b.region = r;
    S->fn->b.before = NULL;
    sema_val res = sema_call_values(S, fn, args, 2, loc);
    bool ok = res.kind != SV_ERROR;
    if (ok) {
        if (!sema_is_numeric(res) || sema_type_of(res).rank > 0 ||
            (res.kind == SV_VALUE && !ir_type_eq(res.type, elem)) ||
            (res.kind == SV_CONST && !res.weak && res.type.dtype != elem.dtype)) {
            diag_error(S->d, loc, "combine fn '%s' must return a scalar %s, got %s", fn->name,
                       sema_ir_type_str(S, elem), sema_type_str(S, res));
            ok = false;
        }
    }
    ir_value *y = ok ? sema_convert(S, res, (blk_dtype)elem.dtype, elem, loc) : NULL;
    if (!y) y = args[0];
    sema_inst(S, IR_YIELD, loc, &y, 1, NULL, 0, 0);
    S->fn->b.region = old;
    S->fn->b.before = before;
    return ok && y != args[0];
}

/* reduce(x, axis, combine_fn; keep_dims) */
static sema_val b_reduce_fn(sema *S, ast_node *call, ast_node **a, const sema_builtin *bi) {
    sema_val x = block_arg(S, a[0], bi);
    if (x.kind == SV_ERROR) return x;
    int axis = 0;
    bool keep = false, all = false;
    sema_val ax = arg(S, a[1]);
    if (ax.kind == SV_ERROR) return ax;
    if (ax.kind == SV_NONE) all = true;
    else if (!axis_arg(S, a[1], bi, x.type, &axis)) return sema_error();
    sema_item *fn = combine_arg(S, a[2], bi);
    if (!fn) return sema_error();
    if (a[3] && !const_bool(S, a[3], bi, "'keep_dims'", &keep)) return sema_error();
    if (x.type.dtype == DT_PTR) {
        diag_error(S->d, a[0]->loc, "'reduce' does not support %s", sema_type_str(S, x));
        return sema_error();
    }
    ir_value *v = all ? flatten(S, x.v, call->loc) : x.v;
    ir_type out = reduced(v->type, axis, (blk_dtype)x.type.dtype);
    ir_inst *i = sema_inst(S, IR_REDUCE_REGION, call->loc, &v, 1, &out, 1, 1);
    if (!i) return sema_error();
    i->axis = axis;
    if (!combine_region(S, i, fn, ir_elem(x.type), call->loc)) return sema_error();
    ir_value *r = i->results[0];
    if (keep) r = keep_dims(S, r, x.type, axis, all, call->loc);
    return sema_value(r);
}

/* cumsum(x, axis = 0; reverse), cumprod(...), scan(x, axis, combine_fn; reverse) */
static sema_val b_scan(sema *S, ast_node *call, ast_node **a, const sema_builtin *bi) {
    bool region = bi->op == IR_SCAN_REGION;
    sema_val x = block_arg(S, a[0], bi);
    if (x.kind == SV_ERROR) return x;
    int axis = 0;
    if (a[1] && !axis_arg(S, a[1], bi, x.type, &axis)) return sema_error();
    sema_item *fn = NULL;
    if (region && !(fn = combine_arg(S, a[2], bi))) return sema_error();
    ast_node *rev_node = a[region ? 3 : 2];
    bool reverse = false;
    if (rev_node && !const_bool(S, rev_node, bi, "'reverse'", &reverse)) return sema_error();
    blk_dtype t = (blk_dtype)x.type.dtype, rt = region ? t : sum_dtype(t, false);
    if (t == DT_PTR || (!region && t == DT_BOOL && bi->kind == IR_RED_PROD)) {
        diag_error(S->d, a[0]->loc, "'%s' does not support %s", bname(bi), sema_type_str(S, x));
        return sema_error();
    }
    ir_value *v = x.v;
    if (rt != t) v = sema_op1(S, IR_CAST, a[0]->loc, ir_shaped(ir_scalar(rt), v->type.rank, v->type.shape), v);
    ir_inst *i = sema_inst(S, (ir_op)bi->op, call->loc, &v, 1, &v->type, 1, region ? 1 : 0);
    if (!i) return sema_error();
    i->axis = axis;
    i->kind = bi->kind;
    if (reverse) i->flags |= IRF_REVERSE;
    if (region && !combine_region(S, i, fn, ir_elem(x.type), call->loc)) return sema_error();
    return sema_value(i->results[0]);
}

/* sort(x, axis?, descending?) — axis defaults to the last */
static sema_val b_sort(sema *S, ast_node *call, ast_node **a, const sema_builtin *bi) {
    sema_val x = block_arg(S, a[0], bi);
    if (x.kind == SV_ERROR) return x;
    int axis = x.type.rank - 1;
    bool desc = false;
    if (a[1] && !axis_arg(S, a[1], bi, x.type, &axis)) return sema_error();
    if (a[2] && !const_bool(S, a[2], bi, "'descending'", &desc)) return sema_error();
    if (x.type.dtype == DT_PTR) {
        diag_error(S->d, a[0]->loc, "'sort' does not support %s", sema_type_str(S, x));
        return sema_error();
    }
    ir_inst *i = sema_inst(S, IR_SORT, call->loc, &x.v, 1, &x.type, 1, 0);
    if (!i) return sema_error();
    i->axis = axis;
    if (desc) i->flags |= IRF_DESCENDING;
    return sema_value(i->results[0]);
}

/* topk(x, k, axis?) -> (values, indices) — axis defaults to the last */
static sema_val b_topk(sema *S, ast_node *call, ast_node **a, const sema_builtin *bi) {
    sema_val x = block_arg(S, a[0], bi);
    if (x.kind == SV_ERROR) return x;
    int64_t k;
    int axis = x.type.rank - 1;
    if (!const_int(S, a[1], bi, "k", &k)) return sema_error();
    if (a[2] && !axis_arg(S, a[2], bi, x.type, &axis)) return sema_error();
    if (x.type.dtype == DT_PTR || x.type.dtype == DT_BOOL) {
        diag_error(S->d, a[0]->loc, "'topk' does not support %s", sema_type_str(S, x));
        return sema_error();
    }
    if (k < 1 || k > x.type.shape[axis] || !sema_is_pow2(k)) {
        diag_error(S->d, a[1]->loc, "k of 'topk' must be a power of two from 1 to %d (the size of axis %d), got %lld",
                   x.type.shape[axis], axis, (long long)k);
        return sema_error();
    }
    ir_type vt = x.type;
    vt.shape[axis] = (int32_t)k;
    ir_type types[2] = {vt, ir_shaped(ir_scalar(DT_I32), vt.rank, vt.shape)};
    ir_inst *i = sema_inst(S, IR_TOPK, call->loc, &x.v, 1, types, 2, 0);
    if (!i) return sema_error();
    i->axis = axis;
    i->ival = k;
    sema_val r = {.kind = SV_TUPLE, .n = 2, .elems = ARENA_ARRAY(S->a, sema_val, 2)};
    if (!r.elems) return sema_error();
    r.elems[0] = sema_value(i->results[0]);
    r.elems[1] = sema_value(i->results[1]);
    return r;
}

/* ---- dot ---- */

static bool dot_dtype_ok(blk_dtype t) {
    return t == DT_F16 || t == DT_BF16 || t == DT_F8E4M3 || t == DT_F8E5M2 || t == DT_F32 || t == DT_I8;
}

/* dot(a, b, acc?; input_precision) — [M,K] x [K,N] (+ [M,N]) */
static sema_val b_dot(sema *S, ast_node *call, ast_node **a, const sema_builtin *bi) {
    sema_val x = arg(S, a[0]), y = arg(S, a[1]);
    if (x.kind == SV_ERROR || y.kind == SV_ERROR) return sema_error();
    for (int k = 0; k < 2; k++) {
        sema_val v = k ? y : x;
        if (v.kind != SV_VALUE || v.type.rank != 2) {
            diag_error(S->d, a[k]->loc, "'dot' needs 2-D blocks, got %s", sema_type_str(S, v));
            return sema_error();
        }
        if (!dot_dtype_ok((blk_dtype)v.type.dtype)) {
            diag_error(S->d, a[k]->loc, "'dot' does not support %s operands (f16, bf16, f8e4m3, f8e5m2, f32 or i8)",
                       dtype_name((blk_dtype)v.type.dtype));
            return sema_error();
        }
    }
    blk_dtype ta = (blk_dtype)x.type.dtype, tb = (blk_dtype)y.type.dtype;
    if (ta != tb) {
        diag_error(S->d, a[1]->loc, "the operands of 'dot' must have the same dtype, got %s and %s", dtype_name(ta),
                   dtype_name(tb));
        return sema_error();
    }
    int32_t M = x.type.shape[0], K = x.type.shape[1], K2 = y.type.shape[0], N = y.type.shape[1];
    if (K != K2) {
        diag_error(S->d, a[1]->loc, "'dot' shape mismatch: %s x %s (inner dimensions %d and %d differ)",
                   sema_type_str(S, x), sema_type_str(S, y), K, K2);
        diag_note(S->d, a[0]->loc, "the left operand is %s", sema_type_str(S, x));
        return sema_error();
    }
    if (M < 16 || N < 16 || K < 16) {
        diag_error(S->d, call->loc, "'dot' needs every dimension to be at least 16, got M = %d, N = %d, K = %d", M, N, K);
        return sema_error();
    }
    /* [M, K] and [K, N] are each within the limit, but [M, N] can reach 2^32 */
    if (!check_numel(S, (int64_t)M * N, call->loc)) return sema_error();
    blk_dtype acc_dt = ta == DT_I8 ? DT_I32 : DT_F32;
    ir_type acc_t = ir_shaped(ir_scalar(acc_dt), 2, (int32_t[]){M, N});
    int prec = 0;
    if (a[3]) {
        static const char *const precs[] = {"tf32", "ieee", NULL};
        prec = string_option(S, a[3], bi, "input precision", precs, "\"tf32\" or \"ieee\"");
        if (!prec) return sema_error();
    }
    ir_value *acc;
    if (a[2]) {
        sema_val c = arg(S, a[2]);
        if (c.kind == SV_ERROR) return c;
        if (c.kind == SV_CONST && (c.weak || c.type.dtype == acc_dt)) {
            acc = sema_convert(S, c, acc_dt, acc_t, a[2]->loc);
        } else if (c.kind == SV_VALUE && ir_type_eq(c.type, acc_t)) {
            acc = c.v;
        } else {
            diag_error(S->d, a[2]->loc, "the accumulator of 'dot' must be %s, got %s", sema_ir_type_str(S, acc_t),
                       sema_type_str(S, c));
            return sema_error();
        }
    } else {
        acc = sema_convert(S, sema_weak_int(0), acc_dt, acc_t, call->loc);
    }
    if (!acc) return sema_error();
    ir_inst *i = sema_inst(S, IR_DOT, call->loc, (ir_value *[]){x.v, y.v, acc}, 3, &acc_t, 1, 0);
    if (!i) return sema_error();
    i->precision = prec == 1 ? IR_PREC_TF32 : prec == 2 ? IR_PREC_IEEE : IR_PREC_DEFAULT;
    return sema_value(i->results[0]);
}

/* ---- shape ops ---- */

/* The block or a scalar value (materialised) of a shape op. */
static sema_val value_arg(sema *S, ast_node *n, const sema_builtin *bi) {
    sema_val v = numeric_arg(S, n, bi, "the argument");
    if (v.kind == SV_CONST) v = sema_value(sema_materialize(S, v, n->loc));
    return v;
}

static sema_val permute_to(sema *S, ir_value *v, const int *perm, blk_loc loc) {
    int32_t s[IR_MAX_RANK];
    for (int k = 0; k < v->type.rank; k++) s[k] = v->type.shape[perm[k]];
    ir_type t = ir_shaped(v->type, v->type.rank, s);
    ir_inst *i = sema_inst(S, IR_PERMUTE, loc, &v, 1, &t, 1, 0);
    if (!i) return sema_error();
    for (int k = 0; k < v->type.rank; k++) i->perm[k] = perm[k];
    return sema_value(i->results[0]);
}

/* trans(x): a 2-D transpose */
static sema_val b_trans(sema *S, ast_node *call, ast_node **a, const sema_builtin *bi) {
    sema_val x = block_arg(S, a[0], bi);
    if (x.kind == SV_ERROR) return x;
    if (x.type.rank != 2) {
        diag_error(S->d, a[0]->loc, "'trans' needs a 2-D block, got %s; use permute for other ranks",
                   sema_type_str(S, x));
        return sema_error();
    }
    return permute_to(S, x.v, (int[]){1, 0}, call->loc);
}

/* permute(x, dims) */
static sema_val b_permute(sema *S, ast_node *call, ast_node **a, const sema_builtin *bi) {
    sema_val x = block_arg(S, a[0], bi);
    if (x.kind == SV_ERROR) return x;
    sema_val d = arg(S, a[1]);
    if (d.kind == SV_ERROR) return d;
    int perm[IR_MAX_RANK];
    bool used[IR_MAX_RANK] = {false};
    bool ok = (d.kind == SV_LIST || d.kind == SV_TUPLE) && d.n == x.type.rank;
    for (int k = 0; ok && k < d.n; k++) {
        ok = sema_is_const_int(d.elems[k]) && d.elems[k].i >= 0 && d.elems[k].i < x.type.rank && !used[d.elems[k].i];
        if (ok) {
            perm[k] = (int)d.elems[k].i;
            used[perm[k]] = true;
        }
    }
    if (!ok) {
        diag_error(S->d, a[1]->loc, "the dims of 'permute' must be a permutation of 0..%d, like [1, 0]", x.type.rank - 1);
        return sema_error();
    }
    return permute_to(S, x.v, perm, call->loc);
}

/* reshape(x, shape) */
static sema_val b_reshape(sema *S, ast_node *call, ast_node **a, const sema_builtin *bi) {
    sema_val x = value_arg(S, a[0], bi);
    ir_type shape;
    if (x.kind == SV_ERROR || !shape_arg(S, a[1], bi, &shape)) return sema_error();
    if (ir_numel(x.type) != ir_numel(shape)) {
        diag_error(S->d, a[1]->loc, "cannot reshape %s (%lld elements) to %lld elements", sema_type_str(S, x),
                   (long long)ir_numel(x.type), (long long)ir_numel(shape));
        return sema_error();
    }
    ir_type t = ir_shaped(x.type, shape.rank, shape.shape);
    if (ir_shape_eq(x.type, t)) return x;
    return sema_value(sema_op1(S, x.type.rank == 0 ? IR_SPLAT : IR_RESHAPE, call->loc, t, x.v));
}

/* broadcast_to(x, shape) */
static sema_val b_broadcast_to(sema *S, ast_node *call, ast_node **a, const sema_builtin *bi) {
    sema_val x = value_arg(S, a[0], bi);
    ir_type shape, s;
    if (x.kind == SV_ERROR || !shape_arg(S, a[1], bi, &shape)) return sema_error();
    if (!sema_broadcast_shape(x.type, shape, &s) || !ir_shape_eq(s, shape)) {
        diag_error(S->d, a[1]->loc, "cannot broadcast %s to shape %s", sema_type_str(S, x),
                   sema_ir_type_str(S, ir_shaped(x.type, shape.rank, shape.shape)));
        return sema_error();
    }
    return sema_value(sema_broadcast_ir(S, x.v, shape, call->loc));
}

/* expand_dims(x, axis) */
static sema_val b_expand_dims(sema *S, ast_node *call, ast_node **a, const sema_builtin *bi) {
    sema_val x = value_arg(S, a[0], bi);
    int64_t ax;
    if (x.kind == SV_ERROR || !const_int(S, a[1], bi, "the axis", &ax)) return sema_error();
    int r = x.type.rank;
    if (ax < -(r + 1) || ax > r) {
        diag_error(S->d, a[1]->loc, "axis %lld is out of range for expand_dims of %s", (long long)ax, sema_type_str(S, x));
        return sema_error();
    }
    if (r + 1 > IR_MAX_RANK) {
        diag_error(S->d, call->loc, "a block has at most %d dimensions", IR_MAX_RANK);
        return sema_error();
    }
    int axis = (int)(ax < 0 ? ax + r + 1 : ax);
    if (r == 0) return sema_value(sema_op1(S, IR_SPLAT, call->loc, ir_shaped(x.type, 1, (int32_t[]){1}), x.v));
    int32_t s[IR_MAX_RANK];
    for (int d = 0, j = 0; d <= r; d++) s[d] = d == axis ? 1 : x.type.shape[j++];
    ir_type t = ir_shaped(x.type, r + 1, s);
    ir_inst *i = sema_inst(S, IR_EXPAND_DIMS, call->loc, &x.v, 1, &t, 1, 0);
    if (!i) return sema_error();
    i->axis = axis;
    return sema_value(i->results[0]);
}

/* Two operands of one dtype and shape (join, cat). */
static bool same_pair(sema *S, ast_node *call, ast_node **a, const sema_builtin *bi, bool broadcast, ir_value **x,
                      ir_value **y) {
    sema_val v[2] = {numeric_arg(S, a[0], bi, "an argument"), numeric_arg(S, a[1], bi, "an argument")};
    if (v[0].kind == SV_ERROR || v[1].kind == SV_ERROR) return false;
    bool weak;
    int dt = v[0].type.dtype == DT_PTR && v[1].type.dtype == DT_PTR && ir_type_eq(ir_elem(v[0].type), ir_elem(v[1].type))
                 ? DT_PTR : sema_promote(v[0], v[1], &weak);
    if (dt < 0) {
        diag_error(S->d, call->loc, "invalid arguments to '%s': %s and %s", bname(bi), sema_type_str(S, v[0]),
                   sema_type_str(S, v[1]));
        return false;
    }
    if (dt != DT_PTR && weak) dt = dtype_is_float((blk_dtype)dt) ? DT_F32 : DT_I32;
    ir_type shape;
    if (broadcast) {
        if (!broadcast_all(S, v, a, 2, &shape)) return false;
    } else {
        ir_type ta = sema_type_of(v[0]), tb = sema_type_of(v[1]);
        if (ta.rank != tb.rank || ta.rank == 0) {
            diag_error(S->d, call->loc, "'%s' needs two blocks of the same rank, got %s and %s", bname(bi),
                       sema_type_str(S, v[0]), sema_type_str(S, v[1]));
            return false;
        }
    }
    for (int k = 0; k < 2; k++) {
        ir_type s = broadcast ? shape : sema_type_of(v[k]);
        ir_value *r = dt == DT_PTR ? sema_broadcast_ir(S, v[k].v, s, a[k]->loc)
                                   : sema_convert(S, v[k], (blk_dtype)dt, s, a[k]->loc);
        if (!r) return false;
        if (k) *y = r;
        else *x = r;
    }
    return true;
}

/* join(a, b): S + [2] */
static sema_val b_join(sema *S, ast_node *call, ast_node **a, const sema_builtin *bi) {
    ir_value *x, *y;
    if (!need_fn(S, call, bi) || !same_pair(S, call, a, bi, true, &x, &y)) return sema_error();
    if (x->type.rank + 1 > IR_MAX_RANK) {
        diag_error(S->d, call->loc, "a block has at most %d dimensions", IR_MAX_RANK);
        return sema_error();
    }
    if (!check_numel(S, 2 * ir_numel(x->type), call->loc)) return sema_error(); /* twice its operands */
    int32_t s[IR_MAX_RANK];
    for (int k = 0; k < x->type.rank; k++) s[k] = x->type.shape[k];
    s[x->type.rank] = 2;
    return sema_value(sema_op2(S, IR_JOIN, call->loc, ir_shaped(x->type, x->type.rank + 1, s), x, y));
}

/* split(x): S + [2] -> (S, S) */
static sema_val b_split(sema *S, ast_node *call, ast_node **a, const sema_builtin *bi) {
    sema_val x = block_arg(S, a[0], bi);
    if (x.kind == SV_ERROR) return x;
    if (x.type.shape[x.type.rank - 1] != 2) {
        diag_error(S->d, a[0]->loc, "'split' needs a block whose last dimension is 2, got %s", sema_type_str(S, x));
        return sema_error();
    }
    ir_type t = ir_shaped(x.type, x.type.rank - 1, x.type.shape);
    ir_type types[2] = {t, t};
    ir_inst *i = sema_inst(S, IR_SPLIT, call->loc, &x.v, 1, types, 2, 0);
    if (!i) return sema_error();
    sema_val r = {.kind = SV_TUPLE, .n = 2, .elems = ARENA_ARRAY(S->a, sema_val, 2)};
    if (!r.elems) return sema_error();
    r.elems[0] = sema_value(i->results[0]);
    r.elems[1] = sema_value(i->results[1]);
    return r;
}

/* cat(a, b, axis = 0) */
static sema_val b_cat(sema *S, ast_node *call, ast_node **a, const sema_builtin *bi) {
    ir_value *x, *y;
    if (!need_fn(S, call, bi) || !same_pair(S, call, a, bi, false, &x, &y)) return sema_error();
    int axis = 0;
    if (a[2] && !axis_arg(S, a[2], bi, x->type, &axis)) return sema_error();
    for (int k = 0; k < x->type.rank; k++)
        if (k != axis && x->type.shape[k] != y->type.shape[k]) {
            diag_error(S->d, call->loc, "'cat' along axis %d needs the other dimensions to match: %s and %s", axis,
                       sema_ir_type_str(S, x->type), sema_ir_type_str(S, y->type));
            return sema_error();
        }
    ir_type t = x->type;
    t.shape[axis] += y->type.shape[axis]; /* each at most 2^20: no overflow */
    if (!check_numel(S, ir_numel(t), call->loc)) return sema_error();
    if (!sema_is_pow2(t.shape[axis])) {
        diag_error(S->d, call->loc, "'cat' result dimension %d is not a power of two", t.shape[axis]);
        return sema_error();
    }
    ir_inst *i = sema_inst(S, IR_CAT, call->loc, (ir_value *[]){x, y}, 2, &t, 1, 0);
    if (!i) return sema_error();
    i->axis = axis;
    return sema_value(i->results[0]);
}

/* ---- hints, random, debug ---- */

/* multiple_of(x, n), max_contiguous(x, n) */
static sema_val b_hint(sema *S, ast_node *call, ast_node **a, const sema_builtin *bi) {
    sema_val x = arg(S, a[0]);
    int64_t n;
    if (x.kind == SV_ERROR || !const_int(S, a[1], bi, "n", &n)) return sema_error();
    if (x.kind != SV_VALUE || !(dtype_is_int(x.type.dtype) || x.type.dtype == DT_PTR)) {
        diag_error(S->d, a[0]->loc, "'%s' applies to integer or pointer values, got %s", bname(bi), sema_type_str(S, x));
        return sema_error();
    }
    if (n < 1) {
        diag_error(S->d, a[1]->loc, "n of '%s' must be positive, got %lld", bname(bi), (long long)n);
        return sema_error();
    }
    ir_inst *i = sema_inst(S, (ir_op)bi->op, call->loc, &x.v, 1, &x.type, 1, 0);
    if (!i) return sema_error();
    i->ival = n;
    return sema_value(i->results[0]);
}

/* rand(seed, offsets), randn(seed, offsets), randint(seed, offsets) */
static sema_val b_random(sema *S, ast_node *call, ast_node **a, const sema_builtin *bi) {
    sema_val seed = numeric_arg(S, a[0], bi, "the seed"), offs = numeric_arg(S, a[1], bi, "the offsets");
    if (seed.kind == SV_ERROR || offs.kind == SV_ERROR) return sema_error();
    if (!dtype_is_int(seed.type.dtype) || sema_type_of(seed).rank > 0) {
        diag_error(S->d, a[0]->loc, "the seed of '%s' must be a scalar integer, got %s", bname(bi), sema_type_str(S, seed));
        return sema_error();
    }
    if (!dtype_is_int(offs.type.dtype)) {
        diag_error(S->d, a[1]->loc, "the offsets of '%s' must be integers, got %s", bname(bi), sema_type_str(S, offs));
        return sema_error();
    }
    if (!need_fn(S, call, bi)) return sema_error();
    ir_type ot = sema_type_of(offs);
    blk_dtype odt = offs.type.dtype == DT_I32 || offs.type.dtype == DT_U32 ? (blk_dtype)offs.type.dtype : DT_U32;
    if (offs.kind == SV_CONST && offs.weak) odt = DT_I32;
    ir_value *sv = seed.kind == SV_CONST ? sema_cast_to(S, seed, ir_scalar(DT_I64), ir_scalar(DT_I64), a[0]->loc)
                                         : sema_convert(S, seed, DT_I64, ir_scalar(DT_I64), a[0]->loc);
    ir_value *ov = offs.kind == SV_CONST ? sema_cast_to(S, offs, ir_scalar(odt), ot, a[1]->loc)
                                         : sema_convert(S, offs, odt, ot, a[1]->loc);
    if (!sv || !ov) return sema_error();
    blk_dtype rt = bi->op == IR_RANDINT ? DT_U32 : DT_F32;
    return sema_value(sema_op2(S, (ir_op)bi->op, call->loc, ir_shaped(ir_scalar(rt), ot.rank, ot.shape), sv, ov));
}

/* print(prefix?, values...) */
static sema_val b_print(sema *S, ast_node *call, ast_node **a, const sema_builtin *bi) {
    (void)a;
    const char *prefix = "";
    int n = call->args.len, first = 0;
    ir_value **ops = ARENA_ARRAY(S->a, ir_value *, n + 1);
    if (!ops) return sema_error();
    int nops = 0;
    bool ok = true;
    for (int k = 0; k < n; k++) {
        ast_node *e = call->args.data[k];
        if (e->kind == AST_NAMED_ARG) {
            diag_error(S->d, e->loc, "unknown named argument '%s' for 'print'", e->name);
            ok = false;
            continue;
        }
        sema_val v = arg(S, e);
        if (v.kind == SV_ERROR) {
            ok = false;
        } else if (v.kind == SV_STRING && k == first) {
            prefix = v.str;
        } else if (sema_is_numeric(v)) {
            if (S->fn) ops[nops++] = sema_materialize(S, v, e->loc);
        } else {
            diag_error(S->d, e->loc, "'print' prints numbers and blocks (after an optional prefix string), got %s",
                       sema_type_str(S, v));
            ok = false;
        }
    }
    if (!ok || !need_fn(S, call, bi)) return sema_error();
    ir_inst *i = sema_inst(S, IR_PRINT, call->loc, ops, nops, NULL, 0, 0);
    if (i) i->str = prefix;
    return sema_void();
}

/* device_assert(cond, "message"?): cond a bool or a block of bools, checked
 * when the kernel runs; without a message, the condition's source text is
 * the message. */
static sema_val b_device_assert(sema *S, ast_node *call, ast_node **a, const sema_builtin *bi) {
    sema_val c = arg(S, a[0]);
    if (c.kind == SV_ERROR) return sema_error();
    if (!sema_is_numeric(c) || sema_type_of(c).dtype != DT_BOOL) {
        diag_error(S->d, a[0]->loc, "the condition of 'device_assert' must be a bool or a block of bools, got %s",
                   got_str(S, c));
        return sema_error();
    }
    const char *msg;
    if (a[1]) {
        sema_val m = arg(S, a[1]);
        if (m.kind == SV_ERROR) return sema_error();
        if (m.kind != SV_STRING) {
            diag_error(S->d, a[1]->loc, "the message of 'device_assert' must be a string, got %s", sema_type_str(S, m));
            return sema_error();
        }
        msg = m.str;
    } else {
        blk_loc l = a[0]->loc;
        const blk_source *src = l.file >= 0 && l.file < S->d->files.len ? &S->d->files.data[l.file] : NULL;
        msg = src && l.off + l.len <= src->size ? arena_strndup(S->a, src->text + l.off, l.len) : "";
    }
    if (!need_fn(S, call, bi)) return sema_error();
    ir_value *v = sema_materialize(S, c, a[0]->loc);
    ir_inst *i = sema_inst(S, IR_ASSERT, call->loc, &v, 1, NULL, 0, 0);
    if (i) i->str = msg;
    return sema_void();
}

/* static_assert(cond, "message"?) */
static sema_val b_static_assert(sema *S, ast_node *call, ast_node **a, const sema_builtin *bi) {
    sema_val c = arg(S, a[0]);
    if (c.kind == SV_ERROR) return sema_void();
    if (c.kind != SV_CONST || c.type.dtype != DT_BOOL) {
        diag_error(S->d, a[0]->loc, "the condition of 'static_assert' must be a compile-time bool, got %s",
                   got_str(S, c));
        return sema_void();
    }
    const char *msg = NULL;
    if (a[1]) {
        sema_val m = arg(S, a[1]);
        if (m.kind == SV_ERROR) return sema_void();
        if (m.kind != SV_STRING) {
            diag_error(S->d, a[1]->loc, "the message of 'static_assert' must be a string, got %s", sema_type_str(S, m));
            return sema_void();
        }
        msg = m.str;
    }
    if (!c.i) {
        if (msg) diag_error(S->d, call->loc, "static assertion failed: %s", msg);
        else diag_error(S->d, call->loc, "static assertion failed");
    }
    return sema_void();
}

/* range(...) / static_range(...) outside a for */
static sema_val b_range(sema *S, ast_node *call, ast_node **a, const sema_builtin *bi) {
    (void)a;
    diag_error(S->d, call->loc, "'%s' can only be used as the iterator of a for loop", bname(bi));
    return sema_error();
}

/* ---- the table ---- */

#define MATH1(name, op) {name, "x; fast", b_unary_math, op, 0, true}

static const sema_builtin builtins[] = {
    /* grid */
    {"program_id", "axis", b_grid, IR_PROGRAM_ID, 0, false},
    {"num_programs", "axis", b_grid, IR_NUM_PROGRAMS, 0, false},
    /* creation */
    {"arange", "start, end", b_arange, IR_ARANGE, 0, false},
    {"zeros", "shape, dtype", b_fill, IR_CONST, 0, false},
    {"full", "shape, value, dtype", b_fill, IR_SPLAT, 0, false},
    /* memory */
    {"load", "ptr, mask?, other?; cache, eviction, volatile", b_load, IR_LOAD, 0, false},
    {"store", "ptr, value, mask?; cache, eviction", b_store, IR_STORE, 0, false},
    {"tensor_desc", "base, shape, strides, block", b_tensor_desc, IR_DESC_LOAD, 0, false},
    /* atomics */
    {"atomic_add", "ptr, value, mask?; sem, scope", b_atomic, IR_ATOMIC_RMW, IR_ATOM_ADD, false},
    {"atomic_max", "ptr, value, mask?; sem, scope", b_atomic, IR_ATOMIC_RMW, IR_ATOM_MAX, false},
    {"atomic_min", "ptr, value, mask?; sem, scope", b_atomic, IR_ATOMIC_RMW, IR_ATOM_MIN, false},
    {"atomic_and", "ptr, value, mask?; sem, scope", b_atomic, IR_ATOMIC_RMW, IR_ATOM_AND, false},
    {"atomic_or", "ptr, value, mask?; sem, scope", b_atomic, IR_ATOMIC_RMW, IR_ATOM_OR, false},
    {"atomic_xor", "ptr, value, mask?; sem, scope", b_atomic, IR_ATOMIC_RMW, IR_ATOM_XOR, false},
    {"atomic_xchg", "ptr, value, mask?; sem, scope", b_atomic, IR_ATOMIC_RMW, IR_ATOM_XCHG, false},
    {"atomic_cas", "ptr, cmp, value; sem, scope", b_atomic, IR_ATOMIC_CAS, 0, false},
    /* math */
    MATH1("abs", IR_ABS), MATH1("exp", IR_EXP), MATH1("exp2", IR_EXP2), MATH1("log", IR_LOG),
    MATH1("log2", IR_LOG2), MATH1("sqrt", IR_SQRT), MATH1("rsqrt", IR_RSQRT), MATH1("sin", IR_SIN),
    MATH1("cos", IR_COS), MATH1("tanh", IR_TANH), MATH1("sigmoid", IR_SIGMOID), MATH1("erf", IR_ERF),
    MATH1("floor", IR_FLOOR), MATH1("ceil", IR_CEIL), MATH1("round", IR_ROUND), MATH1("rint", IR_RINT),
    MATH1("trunc", IR_TRUNC), MATH1("log1p", IR_LOG1P), MATH1("expm1", IR_EXPM1), MATH1("exp10", IR_EXP10),
    MATH1("log10", IR_LOG10), MATH1("tan", IR_TAN), MATH1("asin", IR_ASIN), MATH1("acos", IR_ACOS),
    MATH1("atan", IR_ATAN), MATH1("sinh", IR_SINH), MATH1("cosh", IR_COSH), MATH1("asinh", IR_ASINH),
    MATH1("acosh", IR_ACOSH), MATH1("atanh", IR_ATANH), MATH1("cbrt", IR_CBRT), MATH1("erfc", IR_ERFC),
    MATH1("erfinv", IR_ERFINV), MATH1("lgamma", IR_LGAMMA),
    {"fma", "a, b, c; fast", b_nary_math, IR_FMA, 0, true},
    {"pow", "a, b; fast", b_nary_math, IR_POW, 0, true},
    {"atan2", "y, x", b_nary_math, IR_ATAN2, 0, true},
    {"hypot", "a, b", b_nary_math, IR_HYPOT, 0, true},
    {"fmod", "a, b", b_nary_math, IR_REM, 0, true}, /* REM on floats is C's fmod */
    {"remainder", "a, b", b_nary_math, IR_REMAINDER, 0, true},
    {"copysign", "a, b", b_nary_math, IR_COPYSIGN, 0, true},
    {"nextafter", "a, b", b_nary_math, IR_NEXTAFTER, 0, true},
    {"isnan", "x", b_float_pred, 0, 0, true},
    {"isinf", "x", b_float_pred, 0, 0, true},
    {"isfinite", "x", b_float_pred, 0, 0, true},
    {"signbit", "x", b_float_pred, 0, 0, true},
    /* integer bits */
    {"clz", "x", b_bits, IR_CLZ, 0, true},
    {"popc", "x", b_bits, IR_POPC, 0, true},
    {"brev", "x", b_bits, IR_BREV, 0, true},
    {"bswap", "x", b_bits, IR_BSWAP, 0, true},
    {"mulhi", "a, b", b_mulhi, IR_MULHI, 0, true},
    {"bitcast", "x, dtype", b_bitcast, IR_BITCAST, 0, true},
    {"minimum", "a, b", b_nary_math, IR_MINIMUM, 0, true},
    {"maximum", "a, b", b_nary_math, IR_MAXIMUM, 0, true},
    {"clamp", "x, lo, hi", b_clamp, IR_MINIMUM, 0, true},
    {"where", "cond, a, b", b_where, IR_SELECT, 0, true},
    {"cdiv", "a, b", b_cdiv, IR_DIV, 0, true},
    /* reductions */
    {"sum", "x, axis?; keep_dims", b_reduce, IR_REDUCE, IR_RED_SUM, false},
    {"max", "x, axis?; keep_dims", b_reduce, IR_REDUCE, IR_RED_MAX, false},
    {"min", "x, axis?; keep_dims", b_reduce, IR_REDUCE, IR_RED_MIN, false},
    {"prod", "x, axis?; keep_dims", b_reduce, IR_REDUCE, IR_RED_PROD, false},
    {"xor_sum", "x, axis?; keep_dims", b_reduce, IR_REDUCE, IR_RED_XOR_SUM, false},
    {"argmax", "x, axis?; keep_dims", b_reduce, IR_ARGREDUCE, IR_RED_ARGMAX, false},
    {"argmin", "x, axis?; keep_dims", b_reduce, IR_ARGREDUCE, IR_RED_ARGMIN, false},
    {"reduce", "x, axis, combine_fn; keep_dims", b_reduce_fn, IR_REDUCE_REGION, 0, false},
    /* scans */
    {"cumsum", "x, axis?; reverse", b_scan, IR_SCAN, IR_RED_SUM, false},
    {"cumprod", "x, axis?; reverse", b_scan, IR_SCAN, IR_RED_PROD, false},
    {"scan", "x, axis, combine_fn; reverse", b_scan, IR_SCAN_REGION, 0, false},
    /* selection */
    {"sort", "x, axis?, descending?", b_sort, IR_SORT, 0, false},
    {"topk", "x, k, axis?", b_topk, IR_TOPK, 0, false},
    /* matrix */
    {"dot", "a, b, acc?; input_precision", b_dot, IR_DOT, 0, false},
    /* shape */
    {"trans", "x", b_trans, IR_PERMUTE, 0, false},
    {"permute", "x, dims", b_permute, IR_PERMUTE, 0, false},
    {"reshape", "x, shape", b_reshape, IR_RESHAPE, 0, false},
    {"broadcast_to", "x, shape", b_broadcast_to, IR_BROADCAST, 0, false},
    {"expand_dims", "x, axis", b_expand_dims, IR_EXPAND_DIMS, 0, false},
    {"join", "a, b", b_join, IR_JOIN, 0, false},
    {"split", "x", b_split, IR_SPLIT, 0, false},
    {"cat", "a, b, axis?", b_cat, IR_CAT, 0, false},
    /* hints */
    {"multiple_of", "x, n", b_hint, IR_MULTIPLE_OF, 0, false},
    {"max_contiguous", "x, n", b_hint, IR_MAX_CONTIGUOUS, 0, false},
    /* random */
    {"rand", "seed, offsets", b_random, IR_RAND, 0, false},
    {"randn", "seed, offsets", b_random, IR_RANDN, 0, false},
    {"randint", "seed, offsets", b_random, IR_RANDINT, 0, false},
    /* debugging and compile-time checks */
    {"print", "*", b_print, IR_PRINT, 0, false},
    {"static_assert", "cond, message?", b_static_assert, 0, 0, true},
    {"device_assert", "cond, message?", b_device_assert, IR_ASSERT, 0, false},
    /* loop iterators (only valid in `for`) */
    {"range", "*", b_range, 0, 0, true},
    {"static_range", "*", b_range, 0, 0, true},
};

#define NUM_BUILTINS ((int)(sizeof builtins / sizeof builtins[0]))

const sema_builtin *sema_builtin_find(const char *name) {
    for (int k = 0; k < NUM_BUILTINS; k++)
        if (strcmp(builtins[k].name, name) == 0) return &builtins[k];
    return NULL;
}

const char *sema_builtin_name(int i) { return i >= 0 && i < NUM_BUILTINS ? builtins[i].name : NULL; }

bool sema_builtin_value(const char *name, sema_val *out) {
    if (strcmp(name, "inf") == 0) {
        *out = sema_float_const(DT_F32, true, INFINITY);
        return true;
    }
    if (strcmp(name, "nan") == 0) {
        *out = sema_float_const(DT_F32, true, NAN);
        return true;
    }
    int dt = dtype_from_name(name);
    if (dt >= 0) {
        *out = (sema_val){.kind = SV_DTYPE, .type = ir_scalar((blk_dtype)dt)};
        return true;
    }
    return false;
}

sema_val sema_builtin_call(sema *S, const sema_builtin *bi, ast_node *call) {
    ast_node *slots[MAX_PARAMS] = {0};
    if (strcmp(bi->params, "*") != 0) {
        param_list p;
        if (!bind_args(S, bi, bi->name, call, slots, &p)) {
            for (int k = 0; k < call->args.len; k++) { /* still check the arguments themselves */
                ast_node *a = call->args.data[k];
                sema_expr(S, a->kind == AST_NAMED_ARG ? a->lhs : a);
            }
            return sema_error();
        }
    }
    if (!S->fn && !bi->const_ok) {
        diag_error(S->d, call->loc, "'%s' cannot be used in a compile-time constant", bi->name);
        return sema_error();
    }
    return bi->check(S, call, slots, bi);
}

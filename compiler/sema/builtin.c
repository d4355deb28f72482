/* builtin.c — calls of builtins: arguments bound to the parameters of the
 * builtin's builtins.def entry, the argument helpers the families share,
 * and the dispatch to the family's check function.
 *
 * Arguments are bound to parameters first (positional, then by name; arity,
 * unknown and repeated names are reported here, once for all builtins), so a
 * check function sees one slot per parameter: the argument's AST, or NULL
 * when it was not given.
 */
#include <string.h>

#include "sema/builtin.h"

typedef struct {
    const char *names[SEMA_BUILTIN_MAX_PARAMS];
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
    while (*spec && p->n < SEMA_BUILTIN_MAX_PARAMS) {
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

bool sema_bind_args(sema *S, const sema_builtin *bi, const char *display, ast_node *call, ast_node **slots) {
    param_list pl, *p = &pl;
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

sema_val sema_arg(sema *S, ast_node *n) {
    sema_val v = sema_expr(S, n);
    if (v.kind == SV_VOID) {
        diag_error(S->d, n->loc, "this argument has no value");
        return sema_error();
    }
    return v;
}

/* "i32", or "a run-time i32" where a constant was wanted */
const char *sema_got_str(sema *S, sema_val v) {
    if (v.kind == SV_VALUE) return arena_printf(S->a, "a run-time %s", sema_type_str(S, v));
    return sema_type_str(S, v);
}

/* A numeric argument (run-time value or constant). */
sema_val sema_numeric_arg(sema *S, ast_node *n, const sema_builtin *bi, const char *what) {
    sema_val v = sema_arg(S, n);
    if (v.kind == SV_ERROR || sema_is_numeric(v)) return v;
    diag_error(S->d, n->loc, "%s of '%s' must be a number or a block, got %s", what, bi->name, sema_type_str(S, v));
    return sema_error();
}

bool sema_const_int_arg(sema *S, ast_node *n, const sema_builtin *bi, const char *what, int64_t *out) {
    sema_val v = sema_arg(S, n);
    if (v.kind == SV_ERROR) return false;
    if (!sema_is_const_int(v) || sema_const_i128(v) > INT64_MAX) {
        diag_error(S->d, n->loc, "%s of '%s' must be a compile-time integer, got %s", what, bi->name,
                   sema_got_str(S, v));
        return false;
    }
    *out = v.i;
    return true;
}

bool sema_const_bool_arg(sema *S, ast_node *n, const sema_builtin *bi, const char *what, bool *out) {
    sema_val v = sema_arg(S, n);
    if (v.kind == SV_ERROR) return false;
    if (v.kind != SV_CONST || v.type.dtype != DT_BOOL) {
        diag_error(S->d, n->loc, "%s of '%s' must be true or false, got %s", what, bi->name, sema_got_str(S, v));
        return false;
    }
    *out = v.i != 0;
    return true;
}

/* A string option from a fixed set: returns its index + 1, 0 after an error. */
int sema_string_option(sema *S, ast_node *n, const sema_builtin *bi, const char *what, const char *const *choices,
                         const char *choice_text) {
    sema_val v = sema_arg(S, n);
    if (v.kind == SV_ERROR) return 0;
    if (v.kind == SV_STRING)
        for (int k = 0; choices[k]; k++)
            if (strcmp(v.str, choices[k]) == 0) return k + 1;
    if (v.kind == SV_STRING)
        diag_error(S->d, n->loc, "invalid %s \"%s\" for '%s'; expected %s", what, v.str, bi->name, choice_text);
    else
        diag_error(S->d, n->loc, "%s of '%s' must be a string: %s", what, bi->name, choice_text);
    return 0;
}

bool sema_dtype_arg(sema *S, ast_node *n, const sema_builtin *bi, ir_type *out) {
    sema_val v = sema_arg(S, n);
    if (v.kind == SV_ERROR) return false;
    if (v.kind != SV_DTYPE || v.type.rank > 0 || v.type.dtype == DT_PTR) {
        diag_error(S->d, n->loc, "the dtype of '%s' must be a scalar type name (f32, bf16, i32, ...), got %s",
                   bi->name, sema_type_str(S, v));
        return false;
    }
    *out = v.type;
    return true;
}

/* A shape: a list of compile-time powers of two, e.g. [BM, BN]. */
bool sema_shape_arg(sema *S, ast_node *n, const sema_builtin *bi, ir_type *out) {
    sema_val v = sema_arg(S, n);
    if (v.kind == SV_ERROR) return false;
    if (v.kind != SV_LIST && v.kind != SV_TUPLE) {
        diag_error(S->d, n->loc, "the shape of '%s' must be a list of compile-time integers like [64, 32], got %s",
                   bi->name, sema_type_str(S, v));
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
            diag_error(S->d, dl, "shape dimension must be a compile-time integer, got %s", sema_got_str(S, d));
            return false;
        }
        if (!sema_is_pow2(d.i) || d.i > IR_MAX_NUMEL) {
            diag_error(S->d, dl, "shape dimension must be a power of two, got %lld", (long long)d.i);
            return false;
        }
        dims[k] = (int32_t)d.i;
        numel *= d.i;
        if (!sema_numel_ok(S, numel, n->loc)) return false;
    }
    *out = ir_shaped(ir_scalar(DT_I32), v.n, dims);
    return true;
}

/* A block argument (rank >= 1 run-time value). */
sema_val sema_block_arg(sema *S, ast_node *n, const sema_builtin *bi) {
    sema_val v = sema_arg(S, n);
    if (v.kind == SV_ERROR) return v;
    if (v.kind != SV_VALUE || v.type.rank == 0) {
        diag_error(S->d, n->loc, "'%s' needs a block, got %s", bi->name, sema_type_str(S, v));
        return sema_error();
    }
    return v;
}

bool sema_axis_arg(sema *S, ast_node *n, const sema_builtin *bi, ir_type t, int *axis) {
    int64_t a;
    if (!sema_const_int_arg(S, n, bi, "the axis", &a)) return false;
    if (a < -(int64_t)t.rank || a >= t.rank) {
        diag_error(S->d, n->loc, "axis %lld is out of range for %s", (long long)a, sema_ir_type_str(S, t));
        return false;
    }
    *axis = (int)(a < 0 ? a + t.rank : a);
    return true;
}

bool sema_need_fn(sema *S, ast_node *call, const sema_builtin *bi) {
    if (S->fn) return true;
    diag_error(S->d, call->loc, "'%s' cannot be used in a compile-time constant", bi->name);
    return false;
}

/* Common shape of several numeric operands; reports the first that does not broadcast. */
bool sema_broadcast_all(sema *S, sema_val *v, ast_node **nodes, int n, ir_type *shape) {
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
    return sema_numel_ok(S, ir_numel(*shape), nodes[0] ? nodes[0]->loc : LOC_NONE);
}

/* Promote the dtypes of several numeric operands (LANGUAGE.md "Types"). */
int sema_promote_many(sema_val *v, int n, bool *weak) {
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


bool sema_pointer_arg(sema *S, ast_node *n, const sema_builtin *bi, bool writes, sema_val *out) {
    sema_val p = sema_arg(S, n);
    if (p.kind == SV_ERROR) return false;
    if (p.kind != SV_VALUE || p.type.dtype != DT_PTR) {
        diag_error(S->d, n->loc, "the pointer of '%s' must be a pointer or a block of pointers, got %s", bi->name,
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

bool sema_mask_arg(sema *S, ast_node *n, const sema_builtin *bi, sema_val *out) {
    sema_val m = sema_arg(S, n);
    if (m.kind == SV_ERROR) return false;
    if (!sema_is_numeric(m) || m.type.dtype != DT_BOOL) {
        diag_error(S->d, n->loc, "the mask of '%s' must be bool (a comparison), got %s", bi->name, sema_type_str(S, m));
        return false;
    }
    *out = m;
    return true;
}

/* ---- the table and the dispatch ---- */

static const sema_builtin builtins[] = {
#define BUILTIN(name, params, check, op, kind, const_ok) {name, params, check, op, kind, const_ok},
#include "builtins.def"
#undef BUILTIN
};

#define NUM_BUILTINS ((int)(sizeof builtins / sizeof builtins[0]))

const sema_builtin *sema_builtin_find(const char *name) {
    for (int k = 0; k < NUM_BUILTINS; k++)
        if (strcmp(builtins[k].name, name) == 0) return &builtins[k];
    return NULL;
}

sema_val sema_builtin_call(sema *S, const sema_builtin *bi, ast_node *call) {
    ast_node *slots[SEMA_BUILTIN_MAX_PARAMS] = {0};
    if (strcmp(bi->params, "*") != 0) {
        if (!sema_bind_args(S, bi, bi->name, call, slots)) {
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

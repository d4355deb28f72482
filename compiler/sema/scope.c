/* scope.c — the bottom layer of sema: name maps, the recursion guard, units
 * and their item tables, local bindings and scopes, name lookup, and the
 * "did you mean" of undefined names.
 *
 * Bindings live in a per-function stack with a name map pointing at the
 * innermost binding of each name (shadowing restores the hidden one when its
 * scope ends). Elaboration updates a var's binding in place as assignments
 * are met, so straight-line code needs no SSA construction (stmt.c carries
 * vars through regions).
 */
#include <string.h>

#include "sema/scope.h"

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

blk_loc sema_name_loc(ast_node *n) { return n->op_loc.file >= 0 && n->op_loc.len ? n->op_loc : n->loc; }

sema_item *sema_unit_lookup_item(sema *S, int unit, const char *name) {
    sema_unit *U = sema_unit_get(S, unit);
    return U ? sema_map_get(&U->items, name) : NULL;
}

/* ---- scopes ---- */

sema_binding *sema_bind(sema *S, const char *name, sema_bind_kind kind, sema_val v, blk_loc loc) {
    if (!S->fn || !name) return NULL;
    sema_binding *b = ARENA_NEW(S->a, sema_binding);
    if (!b) return NULL;
    b->name = name;
    b->kind = kind;
    b->val = v;
    b->loc = loc;
    b->shadowed = sema_map_get(&S->fn->names, name);
    if (v.kind == SV_VALUE && v.v && !v.v->name) v.v->name = name;
    sema_map_put(S->a, &S->fn->names, name, b);
    VEC_PUSH(S->a, S->fn->stack, b);
    return b;
}

int sema_scope_mark(sema *S) { return S->fn ? S->fn->stack.len : 0; }

void sema_scope_pop(sema *S, int mark) {
    if (!S->fn) return;
    while (S->fn->stack.len > mark) {
        sema_binding *b = S->fn->stack.data[--S->fn->stack.len];
        sema_map_put(S->a, &S->fn->names, b->name, b->shadowed);
    }
}

/* ---- name lookup ---- */

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
        *out = S->up.item_value(S, it, loc);
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
            *out = S->up.item_value(S, it, loc);
            return true;
        }
    }
    return false;
}

/* ---- builtin names ---- */

static const char *const builtin_names[] = {
#define BUILTIN(name, params, check, op, kind, const_ok) name,
#include "sema/builtins.def"
#undef BUILTIN
};

const char *sema_builtin_name(int i) {
    return i >= 0 && i < (int)(sizeof builtin_names / sizeof builtin_names[0]) ? builtin_names[i] : NULL;
}

bool sema_is_builtin(const char *name) {
    for (int k = 0; sema_builtin_name(k); k++)
        if (strcmp(sema_builtin_name(k), name) == 0) return true;
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


/* clone.c — copying insts and regions with a value map (see clone.h). */
#include "clone.h"

#include <string.h>

/* Open addressing over value pointers; grows at half full. Old tables are
 * abandoned in the arena (maps are small and short-lived). */
typedef struct {
    const ir_value *from;
    ir_value *to;
} map_slot;

struct ir_value_map {
    blk_arena *arena;
    map_slot *slots;
    size_t cap, len; /* cap is a power of two */
};

static size_t slot_of(const ir_value *v, size_t cap) {
    uintptr_t p = (uintptr_t)v;
    p ^= p >> 17;
    p *= (uintptr_t)0x9E3779B97F4A7C15ull;
    return (size_t)(p >> 7) & (cap - 1);
}

ir_value_map *ir_value_map_new(blk_arena *a) {
    ir_value_map *m = ARENA_NEW(a, ir_value_map);
    if (!m) return NULL;
    m->arena = a;
    m->cap = 64;
    m->slots = ARENA_ARRAY(a, map_slot, m->cap);
    if (!m->slots) m->cap = 0;
    return m;
}

static void put(map_slot *slots, size_t cap, const ir_value *from, ir_value *to, size_t *len) {
    size_t k = slot_of(from, cap);
    while (slots[k].from && slots[k].from != from) k = (k + 1) & (cap - 1);
    if (!slots[k].from) (*len)++;
    slots[k].from = from;
    slots[k].to = to;
}

void ir_value_map_set(ir_value_map *m, ir_value *from, ir_value *to) {
    if (!m || !from) return;
    if (m->cap == 0 || (m->len + 1) * 2 > m->cap) {
        size_t ncap = m->cap ? m->cap * 2 : 64;
        map_slot *ns = ARENA_ARRAY(m->arena, map_slot, ncap);
        if (!ns) return; /* out of memory: the arena records the failure */
        size_t nlen = 0;
        for (size_t k = 0; k < m->cap; k++)
            if (m->slots[k].from) put(ns, ncap, m->slots[k].from, m->slots[k].to, &nlen);
        m->slots = ns;
        m->cap = ncap;
        m->len = nlen;
    }
    put(m->slots, m->cap, from, to, &m->len);
}

ir_value *ir_value_map_get(const ir_value_map *m, const ir_value *v) {
    if (!m || !v || m->cap == 0) return NULL;
    size_t k = slot_of(v, m->cap);
    while (m->slots[k].from) {
        if (m->slots[k].from == v) return m->slots[k].to;
        k = (k + 1) & (m->cap - 1);
    }
    return NULL;
}

ir_value *ir_value_map_resolve(const ir_value_map *m, ir_value *v) {
    /* Chains are short (a folded value mapped to a value folded later); the
     * bound only guards against a cycle in a buggy caller. */
    for (int guard = 0; guard < 1000; guard++) {
        ir_value *to = ir_value_map_get(m, v);
        if (!to || to == v) return v;
        v = to;
    }
    return v;
}

static void clone_region(ir_region *dst, const ir_region *src, ir_value_map *m);

ir_inst *ir_clone_inst(ir_func *f, const ir_inst *i, ir_value_map *m) {
    ir_type types[8];
    ir_type *rtypes = types;
    if (i->num_results > 8) {
        rtypes = ARENA_ARRAY(f->module->arena, ir_type, i->num_results);
        if (!rtypes) return NULL;
    }
    for (int k = 0; k < i->num_results; k++)
        rtypes[k] = i->results[k] ? i->results[k]->type : ir_scalar(DT_I32);
    ir_inst *c = ir_inst_new(f, i->op, i->loc, NULL, i->num_operands, rtypes, i->num_results,
                             i->num_regions);
    if (!c) return NULL;
    for (int k = 0; k < i->num_operands && c->operands; k++)
        c->operands[k] = i->operands[k] ? ir_value_map_resolve(m, i->operands[k]) : NULL;
    for (int k = 0; k < i->num_results && c->results; k++) {
        if (!i->results[k] || !c->results[k]) continue;
        c->results[k]->name = i->results[k]->name;
        ir_value_map_set(m, i->results[k], c->results[k]);
    }
    c->axis = i->axis;
    c->kind = i->kind;
    c->ival = i->ival;
    c->ival2 = i->ival2;
    c->fval = i->fval;
    memcpy(c->perm, i->perm, sizeof c->perm);
    c->flags = i->flags;
    c->cache = i->cache;
    c->eviction = i->eviction;
    c->sem = i->sem;
    c->precision = i->precision;
    c->str = i->str;
    c->callee = i->callee;
    c->scratch = i->scratch;
    for (int k = 0; k < i->num_regions && c->regions; k++)
        if (i->regions[k] && c->regions[k]) clone_region(c->regions[k], i->regions[k], m);
    return c;
}

static void clone_region(ir_region *dst, const ir_region *src, ir_value_map *m) {
    for (int k = 0; k < src->args.len; k++) {
        ir_value *a = src->args.data[k];
        if (!a) continue;
        ir_value *na = ir_region_add_arg(dst, a->type, a->name);
        ir_value_map_set(m, a, na);
    }
    ir_clone_insts(dst, NULL, src, m, false);
}

ir_inst *ir_clone_insts(ir_region *dst, ir_inst *pos, const ir_region *src, ir_value_map *m,
                        bool skip_terminator) {
    ir_inst *last = NULL;
    for (ir_inst *i = src->first; i; i = i->next) {
        if (skip_terminator && !i->next && ir_op_has(i->op, OPF_TERM)) return i;
        ir_inst *c = ir_clone_inst(dst->func, i, m);
        if (!c) return NULL;
        if (pos) ir_insert_before(pos, c);
        else ir_append(dst, c);
        last = c;
    }
    return last;
}

/* ir.c — the op table and IR construction. */
#include "ir.h"
#include "target/target.h"

#include <string.h>

const ir_op_info ir_op_table[IR_OP_COUNT] = {
#define X(e, name, nops, nres, flags) {name, nops, nres, flags},
#include "ops.def"
#undef X
};

ir_module *ir_module_new(blk_arena *a) {
    ir_module *m = ARENA_NEW(a, ir_module);
    if (m) m->arena = a;
    return m;
}

ir_func *ir_func_new(ir_module *m, const char *name, bool is_kernel, blk_loc loc) {
    ir_func *f = ARENA_NEW(m->arena, ir_func);
    if (!f) return NULL;
    f->module = m;
    f->name = arena_strdup(m->arena, name);
    f->loc = loc;
    f->is_kernel = is_kernel;
    /* IR built by hand (tests) launches as the default target's kernels
     * do; sema sets both for every kernel it lowers (sema/kernel.c) */
    f->num_warps = tgt_default()->default_num_warps;
    f->num_stages = tgt_default()->default_num_stages;
    f->cluster = 1;
    f->body = ir_region_new(f, NULL);
    if (m->last) m->last->next = f; else m->first = f;
    m->last = f;
    return f;
}

void ir_func_remove(ir_module *m, ir_func *f) {
    ir_func **pp = &m->first;
    ir_func *prev = NULL;
    while (*pp && *pp != f) { prev = *pp; pp = &(*pp)->next; }
    if (!*pp) return;
    *pp = f->next;
    if (m->last == f) m->last = prev;
    f->next = NULL;
}

static ir_value *new_value(ir_module *m, ir_type t) {
    ir_value *v = ARENA_NEW(m->arena, ir_value);
    if (v) { v->type = t; v->id = m->next_value_id++; }
    return v;
}

ir_region *ir_region_new(ir_func *f, ir_inst *parent) {
    ir_region *r = ARENA_NEW(f->module->arena, ir_region);
    if (r) { r->func = f; r->parent = parent; }
    return r;
}

ir_value *ir_region_add_arg(ir_region *r, ir_type t, const char *name) {
    if (!r) return NULL; /* the region's own allocation failed (ir_func_new's body) */
    ir_value *v = new_value(r->func->module, t);
    if (!v) return NULL;
    v->owner = r;
    v->index = r->args.len;
    v->name = name;
    VEC_PUSH(r->func->module->arena, r->args, v);
    return v;
}

ir_value *ir_func_add_param(ir_func *f, ir_type t, const char *name) {
    VEC_PUSH(f->module->arena, f->param_names, name ? arena_strdup(f->module->arena, name) : NULL);
    return ir_region_add_arg(f->body, t, name);
}

ir_inst *ir_inst_new(ir_func *f, ir_op op, blk_loc loc, ir_value *const *operands, int nops,
                     const ir_type *result_types, int nres, int nregions) {
    blk_arena *a = f->module->arena;
    ir_inst *i = ARENA_NEW(a, ir_inst);
    if (!i) return NULL;
    i->op = op;
    i->loc = loc;
    i->num_operands = nops;
    i->operands = nops ? ARENA_ARRAY(a, ir_value *, nops) : NULL;
    for (int k = 0; k < nops && operands && i->operands; k++) i->operands[k] = operands[k];
    i->num_results = nres;
    i->results = nres ? ARENA_ARRAY(a, ir_value *, nres) : NULL;
    for (int k = 0; k < nres && i->results; k++) {
        i->results[k] = new_value(f->module, result_types[k]);
        if (i->results[k]) { i->results[k]->def = i; i->results[k]->index = k; }
    }
    i->num_regions = nregions;
    i->regions = nregions ? ARENA_ARRAY(a, ir_region *, nregions) : NULL;
    for (int k = 0; k < nregions && i->regions; k++) i->regions[k] = ir_region_new(f, i);
    /* Out of memory part way: no half-built inst (callers check NULL; the
     * arena has recorded the failure). */
    return arena_failed(a) ? NULL : i;
}

void ir_append(ir_region *r, ir_inst *i) {
    i->parent = r;
    i->next = NULL;
    i->prev = r->last;
    if (r->last) r->last->next = i; else r->first = i;
    r->last = i;
}

void ir_insert_before(ir_inst *pos, ir_inst *i) {
    ir_region *r = pos->parent;
    i->parent = r;
    i->next = pos;
    i->prev = pos->prev;
    if (pos->prev) pos->prev->next = i; else r->first = i;
    pos->prev = i;
}

void ir_insert_after(ir_inst *pos, ir_inst *i) {
    if (pos->next) ir_insert_before(pos->next, i);
    else ir_append(pos->parent, i);
}

void ir_unlink(ir_inst *i) {
    ir_region *r = i->parent;
    if (!r) return;
    if (i->prev) i->prev->next = i->next; else r->first = i->next;
    if (i->next) i->next->prev = i->prev; else r->last = i->prev;
    i->prev = i->next = NULL;
    i->parent = NULL;
}

void ir_replace_uses(ir_region *r, ir_value *from, ir_value *to) {
    for (ir_inst *i = r->first; i; i = i->next) {
        for (int k = 0; k < i->num_operands; k++)
            if (i->operands[k] == from) i->operands[k] = to;
        for (int k = 0; k < i->num_regions; k++) ir_replace_uses(i->regions[k], from, to);
    }
}

static void number_region(ir_region *r, int *next) {
    if (!r) return;
    for (int k = 0; k < r->args.len; k++)
        if (r->args.data[k]) r->args.data[k]->id = (*next)++;
    for (ir_inst *i = r->first; i; i = i->next) {
        for (int k = 0; k < i->num_results; k++)
            if (i->results[k]) i->results[k]->id = (*next)++;
        for (int k = 0; k < i->num_regions; k++) number_region(i->regions[k], next);
    }
}

int ir_number_values(ir_func *f) {
    int n = 0;
    number_region(f->body, &n);
    return n;
}

static void count_region(ir_region *r, int *uses, int n) {
    if (!r) return;
    for (ir_inst *i = r->first; i; i = i->next) {
        for (int k = 0; k < i->num_operands; k++) {
            ir_value *v = i->operands[k];
            if (v && v->id >= 0 && v->id < n) uses[v->id]++;
        }
        for (int k = 0; k < i->num_regions; k++) count_region(i->regions[k], uses, n);
    }
}

int *ir_count_uses(ir_func *f, int *num_values) {
    int n = ir_number_values(f);
    int *uses = ARENA_ARRAY(f->module->arena, int, n + 1);
    if (uses) count_region(f->body, uses, n);
    *num_values = n;
    return uses;
}

ir_inst *ir_build(ir_builder *b, ir_op op, ir_value *const *operands, int nops,
                  const ir_type *result_types, int nres, int nregions) {
    ir_inst *i = ir_inst_new(b->func, op, b->loc, operands, nops, result_types, nres, nregions);
    if (!i) return NULL;
    if (b->before) ir_insert_before(b->before, i);
    else ir_append(b->region, i);
    return i;
}

ir_value *ir_b1(ir_builder *b, ir_op op, ir_type result, ir_value *x) {
    ir_inst *i = ir_build(b, op, &x, 1, &result, 1, 0);
    return i ? i->results[0] : NULL;
}

ir_value *ir_b2(ir_builder *b, ir_op op, ir_type result, ir_value *x, ir_value *y) {
    ir_value *ops[2] = {x, y};
    ir_inst *i = ir_build(b, op, ops, 2, &result, 1, 0);
    return i ? i->results[0] : NULL;
}

ir_value *ir_b3(ir_builder *b, ir_op op, ir_type result, ir_value *x, ir_value *y, ir_value *z) {
    ir_value *ops[3] = {x, y, z};
    ir_inst *i = ir_build(b, op, ops, 3, &result, 1, 0);
    return i ? i->results[0] : NULL;
}

ir_value *ir_b_const_int(ir_builder *b, ir_type t, int64_t v) {
    ir_inst *i = ir_build(b, IR_CONST, NULL, 0, &t, 1, 0);
    if (!i) return NULL;
    i->ival = v;
    return i->results[0];
}

ir_value *ir_b_const_float(ir_builder *b, ir_type t, double v) {
    ir_inst *i = ir_build(b, IR_CONST, NULL, 0, &t, 1, 0);
    if (!i) return NULL;
    i->fval = v;
    return i->results[0];
}

bool ir_region_has(const ir_region *r, ir_op op) {
    for (const ir_inst *i = r->first; i; i = i->next) {
        if (i->op == op) return true;
        for (int k = 0; k < i->num_regions; k++)
            if (ir_region_has(i->regions[k], op)) return true;
    }
    return false;
}

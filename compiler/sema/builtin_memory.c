/* builtin_memory.c — memory: load, store, and tensor descriptors (tensor_desc and
 * their load/store methods).
 */
#include <string.h>

#include "sema/builtin.h"

/* ---- memory ---- */

static const char *const cache_names[] = {"ca", "cg", "cs", NULL};
static const char *const evict_names[] = {"first", "last", "normal", NULL};
static bool cache_evict(sema *S, ast_node *cache, ast_node *evict, const sema_builtin *bi, ir_inst *i) {
    static const uint8_t cache_ir[] = {IR_CACHE_CA, IR_CACHE_CG, IR_CACHE_CS};
    static const uint8_t evict_ir[] = {IR_EVICT_FIRST, IR_EVICT_LAST, IR_EVICT_NORMAL};
    if (cache) {
        int c = sema_string_option(S, cache, bi, "cache modifier", cache_names, "\"ca\", \"cg\" or \"cs\"");
        if (!c) return false;
        if (i) i->cache = cache_ir[c - 1];
    }
    if (evict) {
        int e = sema_string_option(S, evict, bi, "eviction policy", evict_names, "\"first\", \"last\" or \"normal\"");
        if (!e) return false;
        if (i) i->eviction = evict_ir[e - 1];
    }
    return true;
}

/* A load's or store's operands: the pointer v[0], then v[1] and v[2] where
 * their nodes are given, broadcast to one shape (*shape; *elem the pointee):
 * v[mask] converted to bool, the other one cast to the element type. Their
 * count, or -1 after an error. */
static int mem_operands(sema *S, sema_val *v, ast_node **nodes, int mask, ir_value **ops, ir_type *shape,
                        ir_type *elem) {
    if (!sema_broadcast_all(S, v, nodes, 3, shape)) return -1;
    *elem = ir_scalar((blk_dtype)v[0].type.pointee);
    int n = 0;
    ops[n++] = sema_broadcast_ir(S, v[0].v, *shape, nodes[0]->loc);
    for (int k = 1; k < 3; k++) {
        if (!nodes[k]) continue;
        ops[n++] = k == mask ? sema_convert(S, v[k], DT_BOOL, *shape, nodes[k]->loc)
                             : sema_cast_to(S, v[k], *elem, *shape, nodes[k]->loc);
    }
    for (int k = 0; k < n; k++)
        if (!ops[k]) return -1;
    return n;
}

/* load(ptr, mask?, other?; cache, eviction, volatile) */
sema_val sema_builtin_load(sema *S, ast_node *call, ast_node **a, const sema_builtin *bi) {
    sema_val v[3] = {{0}};
    ast_node *nodes[3] = {a[0], a[1], a[2]};
    bool ok = sema_pointer_arg(S, a[0], bi, false, &v[0]);
    if (a[1] && !sema_mask_arg(S, a[1], bi, &v[1])) ok = false;
    if (a[2]) {
        v[2] = sema_numeric_arg(S, a[2], bi, "'other'");
        if (v[2].kind == SV_ERROR) ok = false;
        else if (v[2].type.dtype == DT_PTR) {
            diag_error(S->d, a[2]->loc, "'other' of 'load' must be a number, got %s", sema_type_str(S, v[2]));
            ok = false;
        }
    }
    bool is_volatile = false;
    if (a[5] && !sema_const_bool_arg(S, a[5], bi, "'volatile'", &is_volatile)) ok = false;
    if (!cache_evict(S, a[3], a[4], bi, NULL)) ok = false;
    if (!ok || !sema_need_fn(S, call, bi)) return sema_error();
    if (a[2] && !a[1]) {
        diag_warning(S->d, a[2]->loc, "'other' has no effect without a mask");
        nodes[2] = NULL;
    }
    if (a[1] && v[1].kind == SV_CONST && v[1].i) nodes[1] = nodes[2] = NULL; /* mask = true */
    ir_type shape, elem;
    ir_value *ops[3];
    int n = mem_operands(S, v, nodes, 1, ops, &shape, &elem); /* 'other' is left out without a mask (above) */
    if (n < 0) return sema_error();
    ir_type rt = ir_shaped(elem, shape.rank, shape.shape);
    ir_inst *i = sema_inst(S, IR_LOAD, call->loc, ops, n, &rt, 1, 0);
    if (!i) return sema_error();
    cache_evict(S, a[3], a[4], bi, i);
    if (is_volatile) i->flags |= IRF_VOLATILE;
    return sema_value(i->results[0]);
}

/* store(ptr, value, mask?; cache, eviction, tma): tma = false keeps a tile
 * store that the compiler would issue by TMA on registers (cg_tma.c) */
sema_val sema_builtin_store(sema *S, ast_node *call, ast_node **a, const sema_builtin *bi) {
    sema_val v[3] = {{0}};
    ast_node *nodes[3] = {a[0], a[1], a[2]};
    bool ok = sema_pointer_arg(S, a[0], bi, true, &v[0]);
    v[1] = sema_numeric_arg(S, a[1], bi, "the value");
    if (v[1].kind == SV_ERROR) ok = false;
    else if (v[1].type.dtype == DT_PTR) {
        diag_error(S->d, a[1]->loc, "cannot store a pointer value (%s)", sema_type_str(S, v[1]));
        ok = false;
    }
    if (a[2] && !sema_mask_arg(S, a[2], bi, &v[2])) ok = false;
    if (!cache_evict(S, a[3], a[4], bi, NULL)) ok = false;
    bool tma = true;
    if (a[5] && !sema_const_bool_arg(S, a[5], bi, "'tma'", &tma)) ok = false;
    if (!ok || !sema_need_fn(S, call, bi)) return sema_error();
    if (a[2] && v[2].kind == SV_CONST && v[2].i) nodes[2] = NULL;
    ir_type shape, elem;
    ir_value *ops[3];
    int n = mem_operands(S, v, nodes, 2, ops, &shape, &elem);
    if (n < 0) return sema_error();
    ir_inst *i = sema_inst(S, IR_STORE, call->loc, ops, n, NULL, 0, 0);
    if (!i) return sema_error();
    cache_evict(S, a[3], a[4], bi, i);
    if (!tma) i->flags |= IRF_NO_TMA;
    return sema_void();
}

/* ---- tensor descriptors ---- */

/* A list of scalar integers converted to `dt` (tensor_desc shape/strides, desc offsets). */
static bool int_list(sema *S, ast_node *n, const sema_builtin *bi, const char *what, blk_dtype dt, ir_value **out,
                     int *count) {
    sema_val v = sema_arg(S, n);
    if (v.kind == SV_ERROR) return false;
    if (v.kind != SV_LIST && v.kind != SV_TUPLE) {
        diag_error(S->d, n->loc, "%s of '%s' must be a list like [M, K], got %s", what, bi->name, sema_type_str(S, v));
        return false;
    }
    if (v.n < 1 || v.n > IR_MAX_RANK) {
        diag_error(S->d, n->loc, "%s of '%s' must have 1 to %d entries, got %d", what, bi->name, IR_MAX_RANK, v.n);
        return false;
    }
    for (int k = 0; k < v.n; k++) {
        sema_val e = v.elems[k];
        blk_loc el = n->kind == AST_LIST && k < n->args.len ? n->args.data[k]->loc : n->loc;
        if (!sema_is_numeric(e) || !dtype_is_int(e.type.dtype) || sema_type_of(e).rank > 0) {
            diag_error(S->d, el, "entries of %s of '%s' must be scalar integers, got %s", what, bi->name,
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
sema_val sema_builtin_tensor_desc(sema *S, ast_node *call, ast_node **a, const sema_builtin *bi) {
    sema_val base;
    if (!sema_pointer_arg(S, a[0], bi, false, &base)) return sema_error();
    if (base.type.rank > 0) {
        diag_error(S->d, a[0]->loc, "the base of 'tensor_desc' must be a scalar pointer, got %s", sema_type_str(S, base));
        return sema_error();
    }
    if (!sema_need_fn(S, call, bi)) return sema_error();
    sema_desc *d = ARENA_NEW(S->a, sema_desc);
    if (!d) return sema_error();
    int nshape, nstrides;
    ir_type block;
    if (!int_list(S, a[1], bi, "the shape", DT_I64, d->dims, &nshape) ||
        !int_list(S, a[2], bi, "the strides", DT_I64, d->strides, &nstrides) || !sema_shape_arg(S, a[3], bi, &block))
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
    ast_node *a[SEMA_BUILTIN_MAX_PARAMS] = {0};
    const char *display = is_load ? "desc.load" : "desc.store";
    if (!sema_bind_args(S, bi, display, call, a)) return sema_error();
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
    sema_val v = sema_numeric_arg(S, a[1], bi, "the value");
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


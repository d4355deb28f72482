/* builtin_program.c — what a kernel asks of its launch and of the compiler
 * rather than of its data: program_id, num_programs, cluster_sum, the
 * multiple_of and max_contiguous hints, print, static_assert, device_assert,
 * and range/static_range met outside a for.
 */
#include "sema/builtin.h"

/* ---- grid ---- */

/* program_id(axis), num_programs(axis) */
sema_val sema_builtin_grid(sema *S, ast_node *call, ast_node **a, const sema_builtin *bi) {
    int64_t axis;
    if (!sema_const_int_arg(S, a[0], bi, "the axis", &axis)) return sema_error();
    if (axis < 0 || axis > 2) {
        diag_error(S->d, a[0]->loc, "the axis of '%s' must be 0, 1 or 2, got %lld", bi->name, (long long)axis);
        return sema_error();
    }
    if (!sema_need_fn(S, call, bi)) return sema_error();
    ir_type t = ir_scalar(DT_I32);
    ir_inst *i = sema_inst(S, (ir_op)bi->op, call->loc, NULL, 0, &t, 1, 0);
    if (!i) return sema_error();
    i->axis = (int)axis;
    return sema_value(i->results[0]);
}

/* cluster_sum(x): x (f32) summed over the programs of the kernel's cluster
 * (@cluster(N)) into its last program. Once per program: not in a loop
 * (here or in a caller of the fn it is in), and only in a kernel that
 * declares its clusters. */
sema_val sema_builtin_cluster_sum(sema *S, ast_node *call, ast_node **a, const sema_builtin *bi) {
    sema_val x = sema_arg(S, a[0]);
    if (x.kind == SV_ERROR || !sema_need_fn(S, call, bi)) return sema_error();
    if (!sema_is_numeric(x) || x.type.dtype != DT_F32) {
        diag_error(S->d, a[0]->loc, "'cluster_sum' sums f32 values (accumulate in f32, then cast), got %s",
                   sema_type_str(S, x));
        return sema_error();
    }
    sema_fnctx *k = S->fn;
    for (sema_fnctx *F = S->fn; F; F = F->caller) {
        if (F->loop) {
            diag_error(S->d, call->loc, "'cluster_sum' inside a loop: every program of a cluster reaches it exactly "
                       "once, after its loops");
            return sema_error();
        }
        k = F;
    }
    if (!k->is_kernel || k->func->cluster < 2) {
        diag_error(S->d, call->loc, "'cluster_sum' needs clusters: declare them on the kernel with @cluster(N), N "
                   "programs along axis 0 per cluster");
        return sema_error();
    }
    ir_value *v = sema_materialize(S, x, a[0]->loc);
    if (!v) return sema_error();
    ir_inst *i = sema_inst(S, IR_CLUSTER_SUM, call->loc, &v, 1, &v->type, 1, 0);
    if (!i) return sema_error();
    return sema_value(i->results[0]);
}

/* ---- hints, random, debug ---- */

/* multiple_of(x, n), max_contiguous(x, n) */
sema_val sema_builtin_hint(sema *S, ast_node *call, ast_node **a, const sema_builtin *bi) {
    sema_val x = sema_arg(S, a[0]);
    int64_t n;
    if (x.kind == SV_ERROR || !sema_const_int_arg(S, a[1], bi, "n", &n)) return sema_error();
    if (x.kind != SV_VALUE || !(dtype_is_int(x.type.dtype) || x.type.dtype == DT_PTR)) {
        diag_error(S->d, a[0]->loc, "'%s' applies to integer or pointer values, got %s", bi->name, sema_type_str(S, x));
        return sema_error();
    }
    if (n < 1) {
        diag_error(S->d, a[1]->loc, "n of '%s' must be positive, got %lld", bi->name, (long long)n);
        return sema_error();
    }
    ir_inst *i = sema_inst(S, (ir_op)bi->op, call->loc, &x.v, 1, &x.type, 1, 0);
    if (!i) return sema_error();
    i->ival = n;
    return sema_value(i->results[0]);
}

/* print(prefix?, values...) */
sema_val sema_builtin_print(sema *S, ast_node *call, ast_node **a, const sema_builtin *bi) {
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
        sema_val v = sema_arg(S, e);
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
    if (!ok || !sema_need_fn(S, call, bi)) return sema_error();
    ir_inst *i = sema_inst(S, IR_PRINT, call->loc, ops, nops, NULL, 0, 0);
    if (i) i->str = prefix;
    return sema_void();
}

/* device_assert(cond, "message"?): cond a bool or a block of bools, checked
 * when the kernel runs; without a message, the condition's source text is
 * the message. */
sema_val sema_builtin_device_assert(sema *S, ast_node *call, ast_node **a, const sema_builtin *bi) {
    sema_val c = sema_arg(S, a[0]);
    if (c.kind == SV_ERROR) return sema_error();
    if (!sema_is_numeric(c) || sema_type_of(c).dtype != DT_BOOL) {
        diag_error(S->d, a[0]->loc, "the condition of 'device_assert' must be a bool or a block of bools, got %s",
                   sema_got_str(S, c));
        return sema_error();
    }
    const char *msg;
    if (a[1]) {
        sema_val m = sema_arg(S, a[1]);
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
    if (!sema_need_fn(S, call, bi)) return sema_error();
    ir_value *v = sema_materialize(S, c, a[0]->loc);
    ir_inst *i = sema_inst(S, IR_ASSERT, call->loc, &v, 1, NULL, 0, 0);
    if (i) i->str = msg;
    return sema_void();
}

/* static_assert(cond, "message"?) */
sema_val sema_builtin_static_assert(sema *S, ast_node *call, ast_node **a, const sema_builtin *bi) {
    sema_val c = sema_arg(S, a[0]);
    if (c.kind == SV_ERROR) return sema_void();
    if (c.kind != SV_CONST || c.type.dtype != DT_BOOL) {
        diag_error(S->d, a[0]->loc, "the condition of 'static_assert' must be a compile-time bool, got %s",
                   sema_got_str(S, c));
        return sema_void();
    }
    const char *msg = NULL;
    if (a[1]) {
        sema_val m = sema_arg(S, a[1]);
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
sema_val sema_builtin_range(sema *S, ast_node *call, ast_node **a, const sema_builtin *bi) {
    (void)a;
    diag_error(S->d, call->loc, "'%s' can only be used as the iterator of a for loop", bi->name);
    return sema_error();
}


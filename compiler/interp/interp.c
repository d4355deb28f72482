/* interp.c — the reference interpreter's driver: setup, arguments, program
 * instances, regions and structured control flow.
 *
 * The interpreter is the semantic reference for the GPU backend: it runs the
 * kernel's Block IR for every program instance of the grid (x fastest, then
 * y, then z), one after another, each op over its whole block before the
 * next op starts. Program order within an instance is therefore exact; the
 * order between instances is one legal schedule among many.
 *
 * Control flow (ops.def):
 *   FOR    lb, ub, step are read once. The induction variable starts at lb
 *          and runs while iv < ub (step > 0) or iv > ub (step < 0), adding
 *          step after each iteration (the loop ends, rather than wrapping,
 *          if iv + step overflows the 64-bit range). step == 0 is the runtime
 *          error "for loop step is zero". Body args: (iv, carried...); YIELD
 *          and CONTINUE give the next carried values, BREAK the results.
 *   WHILE  regions[0] (cond) and regions[1] (body) both take the carried
 *          values. CONDITION(c, v...) ends the cond region: if c, v... become
 *          the body's args, otherwise the WHILE's results (when CONDITION
 *          carries no values, the cond region's args are passed on). The
 *          body's YIELD or CONTINUE values start the next cond region; BREAK
 *          values are the results.
 *   IF     regions[0] if cond else regions[1] (absent: nothing to run); its
 *          YIELD gives the results. BREAK/CONTINUE/RETURN inside it end the
 *          enclosing loop / the program instance.
 *   RETURN in the kernel body or any nested region ends the instance.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "interp_impl.h"

void interp_error(interp *I, const ir_inst *in, const char *fmt, ...) {
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    diag_error(I->diag, in ? in->loc : I->func->loc, "%s (program (%u, %u, %u))", msg, I->pid[0],
               I->pid[1], I->pid[2]);
}

void interp_axis_split(ir_type t, int axis, int64_t *outer, int64_t *n, int64_t *inner) {
    *outer = *inner = 1;
    *n = 1;
    for (int d = 0; d < t.rank; d++) {
        if (d < axis) *outer *= t.shape[d];
        else if (d == axis) *n = t.shape[d];
        else *inner *= t.shape[d];
    }
}

static void copy_value(interp *I, ir_value *dst, ir_value *src) {
    int64_t n = ir_numel(dst->type), m = ir_numel(src->type);
    ir_scalar_val *d = interp_val(I, dst), *s = interp_val(I, src);
    if (d == s) return;
    if (m == n) {
        memcpy(d, s, sizeof *d * (size_t)n);
    } else { /* a scalar into a block (never after the verifier): splat */
        for (int64_t i = 0; i < n; i++) d[i] = s[m == 1 ? 0 : i % m];
    }
}

/* dst[k] <- src[k] for k < min(counts). */
static void copy_values(interp *I, ir_value **dst, int ndst, ir_value *const *src, int nsrc) {
    int n = ndst < nsrc ? ndst : nsrc;
    for (int k = 0; k < n; k++) copy_value(I, dst[k], src[k]);
}

static interp_sig exec_inst(interp *I, ir_inst *in, ir_inst **term);

/* Charge in's steps against the budget; false after reporting that it ran
 * out, at the innermost loop running (a kernel without loops can only run
 * out over a huge grid: then at the kernel). */
static bool charge(interp *I, const ir_inst *in) {
    int64_t n = in->num_results > 0 ? ir_numel(in->results[0]->type) : 1;
    I->steps += (uint64_t)(n > 0 ? n : 1);
    if (I->max_steps == 0 || I->steps <= I->max_steps) return true;
    if (I->loop)
        interp_error(I, I->loop, "kernel exceeded its step budget in this loop (%llu steps; "
                     "BLK_INTERP_STEPS raises it)", (unsigned long long)I->max_steps);
    else
        interp_error(I, NULL, "kernel '%s' exceeded its step budget (%llu steps; BLK_INTERP_STEPS raises it)",
                     I->func->name, (unsigned long long)I->max_steps);
    return false;
}

interp_sig interp_run_region(interp *I, ir_region *r, ir_inst **term) {
    *term = NULL;
    for (ir_inst *in = r->first; in; in = in->next) {
        switch (in->op) {
        case IR_YIELD: case IR_CONDITION: *term = in; return SIG_YIELD;
        case IR_BREAK: *term = in; return SIG_BREAK;
        case IR_CONTINUE: *term = in; return SIG_CONTINUE;
        case IR_RETURN: *term = in; return SIG_RETURN;
        default: break;
        }
        if (!charge(I, in)) return SIG_ERROR;
        interp_sig s = exec_inst(I, in, term);
        if (s != SIG_NEXT) return s;
    }
    return SIG_YIELD; /* no terminator (the verifier forbids it): yields nothing */
}

/* ---- control flow ---- */

static interp_sig exec_if(interp *I, ir_inst *in, ir_inst **term) {
    bool cond = interp_val(I, in->operands[0])[0].i != 0;
    int which = cond ? 0 : 1;
    if (which >= in->num_regions) return SIG_NEXT;
    ir_inst *t;
    interp_sig s = interp_run_region(I, in->regions[which], &t);
    if (s != SIG_YIELD) { *term = t; return s; }
    if (t) copy_values(I, in->results, in->num_results, t->operands, t->num_operands);
    return SIG_NEXT;
}

static bool for_continues(bool is_signed, ir_scalar_val iv, ir_scalar_val ub, ir_scalar_val step) {
    if (!is_signed) return iv.u < ub.u;
    return step.i > 0 ? iv.i < ub.i : iv.i > ub.i;
}

/* iv += step; false when that leaves the 64-bit range (the loop ends). */
static bool for_step(bool is_signed, ir_scalar_val *iv, ir_scalar_val step) {
    if (!is_signed) {
        uint64_t next = iv->u + step.u;
        if (next < iv->u) return false;
        iv->u = next;
        return true;
    }
    if (step.i > 0 ? iv->i > INT64_MAX - step.i : iv->i < INT64_MIN - step.i) return false;
    iv->i += step.i;
    return true;
}

static interp_sig exec_for(interp *I, ir_inst *in, ir_inst **term) {
    if (in->num_operands < 3 || in->num_regions < 1 || in->regions[0]->args.len < 1) {
        interp_error(I, in, "malformed for loop in the IR");
        return SIG_ERROR;
    }
    ir_region *body = in->regions[0];
    ir_value *ivv = body->args.data[0];
    blk_dtype it = interp_dtype(ivv);
    ir_scalar_val iv = interp_val(I, in->operands[0])[0];
    ir_scalar_val ub = interp_val(I, in->operands[1])[0];
    ir_scalar_val step = interp_val(I, in->operands[2])[0];
    if (step.u == 0) {
        interp_error(I, in, "for loop step is zero");
        return SIG_ERROR;
    }
    bool is_signed = !dtype_is_unsigned(it);
    ir_value **carried = body->args.data + 1;
    int ncarried = body->args.len - 1;
    copy_values(I, carried, ncarried, in->operands + 3, in->num_operands - 3);

    while (for_continues(is_signed, iv, ub, step)) {
        interp_val(I, ivv)[0] = eval_normalize(it, iv);
        ir_inst *t;
        interp_sig s = interp_run_region(I, body, &t);
        if (s == SIG_BREAK) {
            if (t) copy_values(I, in->results, in->num_results, t->operands, t->num_operands);
            return SIG_NEXT;
        }
        if (s != SIG_YIELD && s != SIG_CONTINUE) { *term = t; return s; }
        /* Through the results: a YIELD may permute the carried args. */
        if (t) {
            copy_values(I, in->results, in->num_results, t->operands, t->num_operands);
            copy_values(I, carried, ncarried, in->results, in->num_results);
        }
        if (!for_step(is_signed, &iv, step)) break;
    }
    copy_values(I, in->results, in->num_results, carried, ncarried);
    return SIG_NEXT;
}

static interp_sig exec_while(interp *I, ir_inst *in, ir_inst **term) {
    if (in->num_regions < 2) {
        interp_error(I, in, "malformed while loop in the IR");
        return SIG_ERROR;
    }
    ir_region *cond = in->regions[0], *body = in->regions[1];
    copy_values(I, cond->args.data, cond->args.len, in->operands, in->num_operands);
    for (;;) {
        ir_inst *t;
        interp_sig s = interp_run_region(I, cond, &t);
        if (s != SIG_YIELD) { *term = t; return s; }
        if (!t || t->op != IR_CONDITION || t->num_operands < 1) {
            interp_error(I, in, "while condition region does not end in a condition");
            return SIG_ERROR;
        }
        bool c = interp_val(I, t->operands[0])[0].i != 0;
        ir_value *const *vals = t->operands + 1;
        int nvals = t->num_operands - 1;
        if (nvals == 0) { vals = cond->args.data; nvals = cond->args.len; }
        if (!c) {
            copy_values(I, in->results, in->num_results, vals, nvals);
            return SIG_NEXT;
        }
        copy_values(I, body->args.data, body->args.len, vals, nvals);
        s = interp_run_region(I, body, &t);
        if (s == SIG_BREAK) {
            if (t) copy_values(I, in->results, in->num_results, t->operands, t->num_operands);
            return SIG_NEXT;
        }
        if (s != SIG_YIELD && s != SIG_CONTINUE) { *term = t; return s; }
        if (t) copy_values(I, cond->args.data, cond->args.len, t->operands, t->num_operands);
    }
}

/* A loop, as the innermost one running while it runs (for the budget). */
static interp_sig exec_loop(interp *I, ir_inst *in, ir_inst **term) {
    const ir_inst *outer = I->loop;
    I->loop = in;
    interp_sig s = in->op == IR_FOR ? exec_for(I, in, term) : exec_while(I, in, term);
    I->loop = outer;
    return s;
}

static interp_sig exec_inst(interp *I, ir_inst *in, ir_inst **term) {
    switch (in->op) {
    case IR_FOR: case IR_WHILE: return exec_loop(I, in, term);
    case IR_IF: return exec_if(I, in, term);
    case IR_LOAD: case IR_STORE: case IR_DESC_LOAD: case IR_DESC_STORE:
    case IR_ATOMIC_RMW: case IR_ATOMIC_CAS:
        return interp_memory(I, in);
    case IR_REDUCE: case IR_ARGREDUCE: case IR_REDUCE_REGION: case IR_SCAN:
    case IR_SCAN_REGION: case IR_SORT: case IR_TOPK:
        return interp_reduce(I, in);
    case IR_DOT: return interp_dot(I, in);
    case IR_PRINT: return interp_print(I, in);
    case IR_ASSERT: return interp_assert(I, in);
    case IR_CLUSTER_SUM: return interp_cluster_sum_op(I, in);
    case IR_CALL:
        interp_error(I, in, "call to '%s' was not inlined", in->callee ? in->callee->name : "?");
        return SIG_ERROR;
    default: return interp_elem(I, in);
    }
}

/* ---- setup ---- */

typedef struct {
    int64_t total;       /* elements over all values */
    int64_t max_numel;
    const ir_inst *call; /* first IR_CALL found */
    bool malformed;      /* an op outside the table, or a missing value or region */
    const ir_inst *where; /* ... found at this inst (NULL: a parameter) */
} layout_info;

static void mark_malformed(layout_info *li, const ir_inst *in) {
    if (!li->malformed) li->where = in;
    li->malformed = true;
}

static void account(layout_info *li, const ir_inst *in, const ir_value *v) {
    if (!v) {
        mark_malformed(li, in);
        return;
    }
    int64_t n = ir_numel(v->type);
    li->total += n;
    if (n > li->max_numel) li->max_numel = n;
}

static void scan_region(layout_info *li, const ir_inst *parent, const ir_region *r) {
    for (int k = 0; k < r->args.len; k++) account(li, parent, r->args.data[k]);
    for (const ir_inst *in = r->first; in; in = in->next) {
        if ((unsigned)in->op >= IR_OP_COUNT) mark_malformed(li, in);
        if (in->op == IR_CALL && !li->call) li->call = in;
        for (int k = 0; k < in->num_results; k++) account(li, in, in->results[k]);
        for (int k = 0; k < in->num_regions; k++) {
            if (in->regions[k]) scan_region(li, in, in->regions[k]);
            else mark_malformed(li, in);
        }
    }
}

static void assign_slots(interp *I, ir_scalar_val **next, const ir_region *r) {
    for (int k = 0; k < r->args.len; k++) {
        I->vals[r->args.data[k]->id] = *next;
        *next += ir_numel(r->args.data[k]->type);
    }
    for (const ir_inst *in = r->first; in; in = in->next) {
        for (int k = 0; k < in->num_results; k++) {
            I->vals[in->results[k]->id] = *next;
            *next += ir_numel(in->results[k]->type);
        }
        for (int k = 0; k < in->num_regions; k++) assign_slots(I, next, in->regions[k]);
    }
}

static const char *arg_kind_name(blk_arg_kind k) {
    switch (k) {
    case BLK_ARG_PTR: return "a pointer (BLK_ARG_PTR)";
    case BLK_ARG_INT: return "an integer (BLK_ARG_INT)";
    case BLK_ARG_FLOAT: return "a float (BLK_ARG_FLOAT)";
    }
    return "an argument of unknown kind";
}

/* Check args against the kernel's runtime parameters and store them in the
 * parameters' slots. Returns false after reporting a mismatch. */
static bool bind_args(interp *I, const blk_arg *args, int nargs) {
    ir_func *f = I->func;
    int np = f->body->args.len;
    if (nargs != np || (nargs > 0 && !args)) {
        diag_error(I->diag, f->loc, "kernel '%s' takes %d runtime argument%s, but %d %s given", f->name, np,
                   np == 1 ? "" : "s", nargs, nargs == 1 ? "was" : "were");
        return false;
    }
    I->num_ptr_args = 0;
    I->checked = true;
    for (int i = 0; i < np; i++) {
        ir_value *p = f->body->args.data[i];
        const char *name = i < f->param_names.len && f->param_names.data[i] ? f->param_names.data[i] : "?";
        blk_dtype t = interp_dtype(p);
        blk_arg_kind want = t == DT_PTR ? BLK_ARG_PTR : dtype_is_float(t) ? BLK_ARG_FLOAT : BLK_ARG_INT;
        char ty[64];
        ir_type_str(p->type, ty, sizeof ty);
        if (ir_is_block(p->type)) {
            diag_error(I->diag, f->loc, "parameter '%s' of kernel '%s' has block type %s, which no argument can give",
                       name, f->name, ty);
            return false;
        }
        if (args[i].kind != want) {
            diag_error(I->diag, f->loc, "argument %d of kernel '%s' is %s, but parameter '%s' of type %s needs %s", i + 1,
                       f->name, arg_kind_name(args[i].kind), name, ty, arg_kind_name(want));
            return false;
        }
        ir_scalar_val v;
        if (want == BLK_ARG_PTR) {
            v.u = (uint64_t)(uintptr_t)args[i].ptr;
            I->ptr_args[I->num_ptr_args++] = (interp_ptr_arg){v.u, args[i].size, name};
            if (args[i].size == 0) I->checked = false;
        } else if (want == BLK_ARG_FLOAT) {
            v.f = args[i].f;
            v = eval_normalize(t, v);
        } else {
            v.i = args[i].i;
            v = eval_normalize(t, v);
        }
        interp_val(I, p)[0] = v;
    }
    if (I->num_ptr_args == 0) I->checked = false;
    return true;
}

static blk_status run_grid(interp *I) {
    for (unsigned z = 0; z < I->grid[2]; z++)
        for (unsigned y = 0; y < I->grid[1]; y++)
            for (unsigned x = 0; x < I->grid[0]; x++) {
                I->pid[0] = x, I->pid[1] = y, I->pid[2] = z;
                ir_inst *t;
                interp_sig s = interp_run_region(I, I->func->body, &t);
                if (s == SIG_ERROR) return BLK_ERR_RUNTIME;
                if (s == SIG_BREAK || s == SIG_CONTINUE) {
                    interp_error(I, t, "%s outside a loop", s == SIG_BREAK ? "break" : "continue");
                    return BLK_ERR_RUNTIME;
                }
                if ((x + 1) % (unsigned)I->func->cluster == 0 && !interp_cluster_done(I, false)) return BLK_ERR_RUNTIME;
            }
    return BLK_OK;
}

blk_status interp_run(ir_func *f, const unsigned grid[3], const blk_arg *args, int nargs, uint64_t max_steps,
                      FILE *print_out, blk_diag *diag) {
    if (!f || !f->body) {
        diag_error(diag, LOC_NONE, "interpreter: no function to run");
        return BLK_ERR_USAGE;
    }
    if (!f->is_kernel) {
        diag_error(diag, f->loc, "interpreter: '%s' is a device function, not a kernel", f->name);
        return BLK_ERR_USAGE;
    }
    if (!grid) {
        diag_error(diag, f->loc, "interpreter: no grid given for kernel '%s'", f->name);
        return BLK_ERR_USAGE;
    }
    layout_info li = {0, 1, NULL, false, NULL};
    scan_region(&li, NULL, f->body);
    if (li.malformed) {
        diag_error(diag, li.where ? li.where->loc : f->loc, "interpreter: malformed IR in kernel '%s' (%s)", f->name,
                   li.where ? "an op, value or region is missing or unknown" : "a parameter is missing");
        return BLK_ERR_INTERNAL;
    }
    if (li.call) {
        diag_error(diag, li.call->loc, "interpreter: call to '%s' in kernel '%s' was not inlined",
                   li.call->callee ? li.call->callee->name : "?", f->name);
        return BLK_ERR_INTERNAL;
    }

    interp I;
    memset(&I, 0, sizeof I);
    I.func = f;
    I.diag = diag;
    I.out = print_out ? print_out : stdout;
    I.max_steps = max_steps;
    for (int d = 0; d < 3; d++) I.grid[d] = grid[d];
    if (f->cluster > 1 && grid[0] % (unsigned)f->cluster != 0) {
        diag_error(diag, f->loc, "interpreter: kernel '%s' runs in clusters of %d programs along axis 0 (@cluster): "
                   "grid x = %u is not a multiple of %d", f->name, f->cluster, grid[0], f->cluster);
        return BLK_ERR_USAGE;
    }
    I.num_values = ir_number_values(f);
    if (!interp_check_func(f, I.num_values, diag)) return BLK_ERR_INTERNAL;
    size_t maxn = (size_t)li.max_numel;
    I.vals = blk_calloc((size_t)I.num_values + 1, sizeof *I.vals);
    ir_scalar_val *data = blk_calloc((size_t)li.total + 1, sizeof *data);
    I.ptr_args = blk_calloc((size_t)f->body->args.len + 1, sizeof *I.ptr_args);
    I.scratch_f32 = blk_malloc(sizeof(float) * 3 * maxn);
    I.scratch_idx = blk_malloc(sizeof(int32_t) * 2 * maxn);
    blk_status st = BLK_OK;
    if (!I.vals || !data || !I.ptr_args || !I.scratch_f32 || !I.scratch_idx) {
        diag_error(diag, f->loc, "interpreter: out of memory for the values of kernel '%s' (%lld elements)",
                   f->name, (long long)li.total);
        st = BLK_ERR_NOMEM;
    } else {
        ir_scalar_val *next = data;
        assign_slots(&I, &next, f->body);
        if (!bind_args(&I, args, nargs)) st = BLK_ERR_USAGE;
        else st = run_grid(&I);
    }
    free(I.vals);
    free(data);
    free(I.ptr_args);
    free(I.scratch_f32);
    free(I.scratch_idx);
    interp_cluster_done(&I, true);
    if (I.out) fflush(I.out);
    return st;
}

/* fuse.c — rematerialisation decisions and the exchange report (fuse.h).
 *
 * Needs: the layout assignment of the function (lt; its numbering).
 * Guarantees: cost[v] > 0 only for block values whose definition chain is
 * made of cheap ops (OPF_CHEAP in ir/ops.def: pure, memory-free, about one
 * ALU instruction per element), with every block operand itself
 * rematerialisable, at most FUSE_MAX_COST ops in all. One forward
 * walk in program order: operands are decided before their users.
 */
#include "fuse.h"

#include "passes.h"

static bool in_range(const fuse_table *t, const ir_value *v) { return v && v->id >= 0 && v->id < t->num_values; }

static void visit_region(fuse_table *t, ir_region *r) {
    for (ir_inst *in = r->first; in; in = in->next) {
        for (int k = 0; k < in->num_regions; k++) visit_region(t, in->regions[k]);
        if (in->num_results != 1 || !ir_op_has(in->op, OPF_CHEAP)) continue;
        ir_value *res = in->results[0];
        if (!res->type.rank || !in_range(t, res)) continue;
        int cost = 1;
        for (int k = 0; k < in->num_operands && cost; k++) {
            ir_value *o = in->operands[k];
            if (!o->type.rank) continue; /* scalars are uniform: nothing to convert */
            cost = in_range(t, o) && t->cost[o->id] ? cost + t->cost[o->id] : 0;
        }
        t->cost[res->id] = (unsigned char)(cost <= FUSE_MAX_COST ? cost : 0);
    }
}

fuse_table *fuse_analyze(blk_arena *a, ir_func *f, const lay_table *lt) {
    fuse_table *t = ARENA_NEW(a, fuse_table);
    if (!t || !lt) return NULL;
    t->num_values = lt->num_values;
    t->cost = ARENA_ARRAY(a, unsigned char, t->num_values + 1);
    if (!t->cost) return NULL;
    visit_region(t, f->body);
    return t;
}

bool fuse_remat(const fuse_table *t, const ir_value *v) { return t && in_range(t, v) && t->cost[v->id] > 0; }

/* ---- dump ---- */

typedef struct {
    blk_strbuf *out;
    const kernel_plan *p;
    blk_arena *a;
    int remats, converts, exchanges;
} dump_ctx;

/* How a reduction-like op along `axis` of x moves data, from x's layout. */
static void print_exchange(dump_ctx *D, const ir_value *x, int axis) {
    const lay_layout *l = lay_get(D->p->lt, x);
    if (!l || axis < 0 || axis >= x->type.rank) { sb_puts(D->out, "in-thread"); return; }
    lay_flat fl;
    lay_flatten(l, &fl);
    int p = fl.dims[axis];
    int n[IR_MAX_RANK];
    lay_num_regs(l, x->type.shape, n);
    const char *sep = "";
    if (n[axis] > 1) sb_printf(D->out, "in-thread (%d per thread)", n[axis]), sep = ", ";
    int tpw = fl.tpw[p] < x->type.shape[axis] ? fl.tpw[p] : x->type.shape[axis];
    if (tpw > 1) sb_printf(D->out, "%swarp shuffles across %d lanes", sep, tpw), sep = ", ";
    if (fl.wpc[p] > 1 && x->type.shape[axis] > lay_warp_span(&fl, p))
        sb_printf(D->out, "%sshared memory across %d warps", sep, fl.wpc[p]), D->exchanges++;
    if (!*sep && !(fl.wpc[p] > 1)) sb_puts(D->out, "in-thread");
}

/* The layout codegen reads operand k of `in` in (NULL: its own layout). */
static const lay_layout *use_want(dump_ctx *D, ir_inst *in, int k) {
    const lay_table *lt = D->p->lt;
    ir_value *res = in->num_results ? in->results[0] : NULL;
    switch (in->op) {
    case IR_LOAD: case IR_ATOMIC_RMW: case IR_ATOMIC_CAS:
        return res && res->type.rank ? lay_get(lt, res) : NULL;
    case IR_STORE: {
        const vec_access *e = vec_get(D->p->vec, in);
        return e ? e->lay : NULL;
    }
    case IR_BROADCAST:
        return lay_get(lt, res);
    case IR_EXPAND_DIMS: {
        const lay_layout *have = lay_get(lt, in->operands[0]), *l = lay_get(lt, res);
        if (!have || !l || lay_eq(lay_expand(D->a, have, in->axis), l)) return NULL;
        return lay_slice(D->a, l, in->axis);
    }
    default:
        break;
    }
    if (ir_op_has(in->op, OPF_ELEM) && res && res->type.rank) return lay_get(lt, res);
    (void)k;
    return NULL;
}

static void print_use(dump_ctx *D, ir_inst *in) {
    sb_puts(D->out, ir_op_table[in->op].name);
    if (in->num_results) sb_printf(D->out, " %%%d", in->results[0]->id);
    else if (in->num_operands) sb_printf(D->out, " (ptr %%%d)", in->operands[0]->id);
}

static void dump_region(dump_ctx *D, ir_region *r) {
    const lay_table *lt = D->p->lt;
    for (ir_inst *in = r->first; in; in = in->next) {
        ir_value *res = in->num_results ? in->results[0] : NULL;
        switch (in->op) {
        case IR_REDUCE: case IR_ARGREDUCE: case IR_REDUCE_REGION: case IR_SCAN: case IR_SCAN_REGION:
        case IR_SORT: case IR_TOPK:
            sb_printf(D->out, "// %%%d = %s along %d: ", res->id, ir_op_table[in->op].name, in->axis);
            print_exchange(D, in->operands[0], in->axis);
            sb_putc(D->out, '\n');
            break;
        case IR_RESHAPE: case IR_JOIN: case IR_SPLIT: case IR_CAT:
            sb_printf(D->out, "// %%%d = %s: shared memory\n", res->id, ir_op_table[in->op].name);
            D->exchanges++;
            break;
        case IR_PERMUTE: {
            const lay_layout *have = lay_get(lt, in->operands[0]), *l = lay_get(lt, res);
            bool free = have && l && lay_eq(lay_permute(D->a, have, in->perm), l);
            if (free || fuse_remat(D->p->fuse, in->operands[0]))
                sb_printf(D->out, "// %%%d = permute: registers (%s)\n", res->id,
                          free ? "the layouts are permutations" : "operand rematerialised");
            else
                sb_printf(D->out, "// %%%d = permute: shared memory\n", res->id), D->exchanges++;
            break;
        }
        default:
            break;
        }
        for (int k = 0; k < in->num_operands; k++) {
            ir_value *o = in->operands[k];
            const lay_layout *want = o->type.rank ? use_want(D, in, k) : NULL, *have = lay_get(lt, o);
            if (!want || !have || lay_eq(want, have)) continue;
            bool remat = fuse_remat(D->p->fuse, o);
            sb_printf(D->out, "// %%%d -> ", o->id);
            print_use(D, in);
            sb_puts(D->out, remat ? ": rematerialised in " : ": converted through shared memory to ");
            lay_print(D->out, want);
            if (remat) sb_printf(D->out, " (%d ops)", D->p->fuse->cost[o->id]);
            sb_putc(D->out, '\n');
            if (remat) D->remats++;
            else D->converts++;
        }
        for (int k = 0; k < in->num_regions; k++) dump_region(D, in->regions[k]);
    }
}

void fuse_dump_module(blk_strbuf *out, ir_module *m) {
    ir_print_module(out, m);
    for (ir_func *f = m->first; f; f = f->next) {
        if (!f->is_kernel) continue;
        kernel_plan p;
        if (!passes_plan_kernel(m->arena, f, passes_d16_spec(m->arena, f), tgt_default(), PL_OPTIMISTIC, &p)) continue;
        sb_printf(out, "// fuse @%s (pointer and integer arguments divisible by 16)\n", f->name);
        dump_ctx D = {out, &p, m->arena, 0, 0, 0};
        dump_region(&D, f->body);
        sb_printf(out, "// fuse @%s: %d rematerialised uses, %d conversions and %d other exchanges through shared "
                       "memory; every other value stays in registers\n",
                  f->name, D.remats, D.converts, D.exchanges);
    }
}

void pass_fuse(ir_module *m) { (void)m; }

/* cg_sort.c — sort and topk along one axis.
 *
 * Both compare unsigned integer keys (cg_sort_keys.c: one or two integer
 * compares, in the interpreter's order, ties to the lower index).
 *
 * sort: the operand moves to a layout with n consecutive elements of a line
 * per thread, lanes then warps along the axis: a line within one warp when
 * there are lines enough for every warp (several lines per thread), over
 * several warps when there are fewer lines than warps (sort_chunk). A
 * bitonic network over each line, with run-time loops over its stages, so
 * that the code grows with the keys per thread and not with the number of
 * stages (log S (log S + 1) / 2):
 *
 *   for kk = 2, 4, .. S:                        (merge size)
 *     j = kk/2 .. W (W = n * lanes of a line):  partners in other warps: the
 *                                               block's keys in shared
 *                                               memory, bar.sync per stage
 *     j = min(kk/2, W/2) .. n:                  partners in the warp:
 *                                               shfl.sync.bfly by (j/n)*stride
 *     j = n/2 .. 1 (unrolled; none >= kk):      partners in the thread
 *
 * where positions i and i + j (i & j == 0) are put in ascending order when
 * i & kk == 0, descending otherwise. Replicas (threads holding copies) never
 * write shared memory; they read their keys back like the others. Past
 * SORT_MAX_STEP compare-exchanges per merge step the keys go to per-thread
 * local memory and the in-thread and shuffle stages become loops too.
 *
 * topk: k <= 8 (or when the sort's keys would not fit the scratch): k rounds
 * (a run-time loop) of a minimum over the keys in the operand's layout
 * (in-thread, butterfly over the lanes, [warps x lines] in shared memory),
 * each round taking the least key above the previous winner. Larger k: the
 * sort above (descending, with indices), then the first k of each line
 * through shared memory into the results' layouts.
 */
#include "cg_sort.h"

/* ---- run-time loops and ifs carrying the keys as phis (no mem2reg needed,
 * so -O0 code keeps them in registers too) ---- */

typedef struct {
    LLVMValueRef **refs; /* every field of every key register */
    int n;
} sk_state;

typedef struct {
    cg_loop loop;
    LLVMValueRef iv, *phis; /* iv: loop.iv */
} sk_loop;

typedef struct {
    cg_if branch;
    LLVMValueRef *saved;
} sk_if;

/* header: iv = phi(init, next); the state's phis. Then loop_test. */
static void loop_begin(cg_ctx *C, sk_state *st, sk_loop *L, LLVMValueRef init) {
    L->loop = cg_loop_begin(C, C->i32, init, "sort.loop", NULL, "sort.next");
    L->iv = L->loop.iv;
    int n = st ? st->n : 0;
    L->phis = ARENA_ARRAY(C->a, LLVMValueRef, n + 1);
    if (!L->phis) { C->failed = true; return; }
    for (int i = 0; i < n; i++) {
        LLVMValueRef v = *st->refs[i];
        L->phis[i] = cg_loop_phi(C, &L->loop, LLVMTypeOf(v), v);
        *st->refs[i] = L->phis[i];
    }
}

/* The body runs while `go` holds. */
static void loop_test(cg_ctx *C, sk_loop *L, LLVMValueRef go) {
    cg_loop_test(C, &L->loop, go, "sort.step");
}

static void loop_end(cg_ctx *C, sk_state *st, sk_loop *L, LLVMValueRef next) {
    if (!L->phis) return;
    LLVMBasicBlockRef latch = cg_loop_end(C, &L->loop, next);
    for (int i = 0; st && i < st->n; i++) {
        cg_phi_add(L->phis[i], *st->refs[i], latch);
        *st->refs[i] = L->phis[i]; /* the values on exit: the header's */
    }
}

static void if_begin(cg_ctx *C, sk_state *st, sk_if *I, LLVMValueRef cond) {
    I->branch = cg_if_begin(C, cond, "sort.then", "sort.join");
    int n = st ? st->n : 0;
    I->saved = ARENA_ARRAY(C->a, LLVMValueRef, n + 1);
    if (!I->saved) { C->failed = true; return; }
    for (int i = 0; i < n; i++) I->saved[i] = *st->refs[i];
}

static void if_end(cg_ctx *C, sk_state *st, sk_if *I) {
    LLVMBasicBlockRef end = cg_if_end(C, &I->branch);
    for (int i = 0; st && I->saved && i < st->n; i++) {
        LLVMValueRef v = *st->refs[i];
        if (v == I->saved[i]) continue;
        LLVMValueRef phi = LLVMBuildPhi(C->b, LLVMTypeOf(v), "");
        cg_phi_add(phi, v, end);
        cg_phi_add(phi, I->saved[i], I->branch.from);
        *st->refs[i] = phi;
    }
}

/* ---- shared-memory stages ----
 * The block's keys row-major in shared memory. A stage orders the pairs
 * (i, i + j) of every line, i = q + (q & -j) for the line's pairs q < S/2.
 * The block's numel/2 pairs go to the threads by number (pair P = m *
 * threads + tid, line P / (S/2)), so the work is even whatever the layouts
 * and no thread is a replica; bar.sync after every stage. */

typedef struct {
    const sk_fmt *F;
    blk_loc loc;
    sk_smem M;            /* M.hi == NULL until block_smem */
    int32_t S;
    int64_t numel, inner; /* inner: elements after the axis (its stride) */
} sk_block;

static sk_block block_keys(const sk_fmt *F, blk_loc loc, const ir_type *t, int ax) {
    sk_block K = {F, loc, {0}, t->shape[ax], ir_numel(*t), 1};
    for (int d = ax + 1; d < t->rank; d++) K.inner *= t->shape[d];
    return K;
}

/* The scratch, reserved only by the sorts that use it. */
static void block_smem(cg_ctx *C, sk_block *K) {
    if (!K->M.hi) K->M = sk_smem_keys(C, K->loc, K->F, K->numel);
}

/* Every register's key at its row-major place lin[r] (canonical threads
 * only: a replica's write would race with the owner's). */
static void store_keys(cg_ctx *C, sk_block *K, const cg_lay_info *li, const LLVMValueRef *lin, const sk_key *keys) {
    sk_if own;
    block_smem(C, K);
    cg_barrier(C); /* an earlier reader of the scratch is done */
    if_begin(C, NULL, &own, cg_reg_canonical(C, li, 0));
    for (int r = 0; r < li->nregs; r++) sk_store_key(C, K->F, &K->M, lin[r], keys[r]);
    if_end(C, NULL, &own);
    cg_barrier(C);
}

static LLVMValueRef bit_clear(cg_ctx *C, LLVMValueRef v, LLVMValueRef bit) {
    LLVMValueRef a = LLVMBuildAnd(C->b, v, bit, "");
    return LLVMBuildICmp(C->b, LLVMIntEQ, a, cg_const_i32(C, 0), "");
}

/* The stages j = kk/2, kk/4, .. >= stop of merge size kk. */
static void smem_stages(cg_ctx *C, const sk_block *K, LLVMValueRef kk, LLVMValueRef stop) {
    LLVMBuilderRef b = C->b;
    int64_t threads = 32 * (int64_t)C->num_warps, pairs = K->numel / 2, half = K->S / 2;
    int64_t per = pairs > threads ? pairs / threads : 1;
    sk_loop J, Mp;
    loop_begin(C, NULL, &J, LLVMBuildLShr(b, kk, cg_const_i32(C, 1), ""));
    loop_test(C, &J, LLVMBuildICmp(b, LLVMIntUGE, J.iv, stop, ""));
    LLVMValueRef negj = LLVMBuildNeg(b, J.iv, "");
    LLVMValueRef jstride = LLVMBuildMul(b, J.iv, cg_const_i32(C, K->inner), "");
    LLVMValueRef m = cg_const_i32(C, 0);
    if (per > 1) {
        loop_begin(C, NULL, &Mp, m);
        loop_test(C, &Mp, LLVMBuildICmp(b, LLVMIntULT, Mp.iv, cg_const_i32(C, per), ""));
        m = Mp.iv;
    }
    LLVMValueRef P = LLVMBuildMul(b, m, cg_const_i32(C, threads), "");
    P = LLVMBuildAdd(b, P, C->tid, "");
    sk_if some;
    if (pairs < threads) if_begin(C, NULL, &some, LLVMBuildICmp(b, LLVMIntULT, P, cg_const_i32(C, pairs), ""));
    LLVMValueRef line = LLVMBuildUDiv(b, P, cg_const_i32(C, half), "");
    LLVMValueRef q = LLVMBuildURem(b, P, cg_const_i32(C, half), "");
    LLVMValueRef outer = LLVMBuildUDiv(b, line, cg_const_i32(C, K->inner), "");
    LLVMValueRef in = LLVMBuildURem(b, line, cg_const_i32(C, K->inner), "");
    LLVMValueRef start = LLVMBuildMul(b, outer, cg_const_i32(C, (int64_t)K->S * K->inner), "");
    start = LLVMBuildAdd(b, start, in, "");
    LLVMValueRef hi_part = LLVMBuildAnd(b, q, negj, "");
    LLVMValueRef i = LLVMBuildAdd(b, q, hi_part, "");
    LLVMValueRef ia = LLVMBuildMul(b, i, cg_const_i32(C, K->inner), "");
    ia = LLVMBuildAdd(b, start, ia, "");
    LLVMValueRef ib = LLVMBuildAdd(b, ia, jstride, "");
    sk_key ka = sk_load_key(C, K->F, &K->M, ia);
    sk_key kb = sk_load_key(C, K->F, &K->M, ib);
    sk_order_pair(C, K->F, &ka, &kb, bit_clear(C, i, kk), NULL);
    sk_store_key(C, K->F, &K->M, ia, ka);
    sk_store_key(C, K->F, &K->M, ib, kb);
    if (pairs < threads) if_end(C, NULL, &some);
    if (per > 1) loop_end(C, NULL, &Mp, LLVMBuildAdd(b, m, cg_const_i32(C, 1), ""));
    cg_barrier(C);
    loop_end(C, NULL, &J, LLVMBuildLShr(b, J.iv, cg_const_i32(C, 1), ""));
}

/* ---- the network in registers ---- */

typedef struct {
    const sk_fmt *F;
    const cg_lay_info *li;
    int ax, n, nl;      /* elements per thread along ax; lines per thread */
    int32_t S;
    int *reg;           /* reg[l * n + e]: element e of line l */
    LLVMValueRef *pos;  /* per register: coordinate along ax */
    LLVMValueRef *lin;  /* per register: row-major index */
    sk_key *k;          /* per register */
} sk_net;

/* reg[l * n + e] for the thread's lines (registers sharing the coordinates
 * off the axis), in register order of their first element. */
static int *line_regs(cg_ctx *C, const cg_lay_info *li, int ax) {
    int n = li->n[ax];
    int *reg = ARENA_ARRAY(C->a, int, li->nregs), *line = ARENA_ARRAY(C->a, int, li->nregs);
    if (!reg || !line) return NULL;
    for (int r = 0, nl = 0; r < li->nregs; r++) {
        int k[IR_MAX_RANK];
        cg_reg_index(li, r, k);
        int e = k[ax];
        k[ax] = 0;
        int r0 = cg_reg_of(li, k);
        if (r0 == r) line[r] = nl++;
        reg[line[r0] * n + e] = r;
    }
    return reg;
}

/* Keys of xv's registers in layout li (positions and row-major indices). */
static bool net_init(cg_ctx *C, sk_net *N, const sk_fmt *F, const cg_lay_info *li, int ax, cg_val xv) {
    N->F = F, N->li = li, N->ax = ax, N->S = li->shape[ax];
    N->n = li->n[ax];
    N->nl = li->nregs / N->n;
    N->reg = line_regs(C, li, ax);
    N->pos = ARENA_ARRAY(C->a, LLVMValueRef, li->nregs);
    N->lin = ARENA_ARRAY(C->a, LLVMValueRef, li->nregs);
    N->k = ARENA_ARRAY(C->a, sk_key, li->nregs);
    if (!N->reg || !N->pos || !N->lin || !N->k || xv.n < li->nregs) { C->failed = true; return false; }
    for (int r = 0; r < li->nregs; r++) {
        N->pos[r] = cg_reg_coord(C, li, r, ax);
        N->lin[r] = cg_reg_linear(C, li, r);
        N->k[r] = sk_encode(C, F, xv.v[r], N->pos[r]);
    }
    return true;
}

static sk_state net_state(cg_ctx *C, sk_net *N) {
    int per = 1 + (N->F->lo ? 1 : 0) + (N->F->aux ? 1 : 0);
    sk_state st = {ARENA_ARRAY(C->a, LLVMValueRef *, N->li->nregs * per), 0};
    if (!st.refs) { C->failed = true; return st; }
    for (int r = 0; r < N->li->nregs; r++) {
        st.refs[st.n++] = &N->k[r].hi;
        if (N->F->lo) st.refs[st.n++] = &N->k[r].lo;
        if (N->F->aux) st.refs[st.n++] = &N->k[r].aux;
    }
    return st;
}

/* Sort every line of N's keys ascending; K: the block in shared memory for
 * the stages whose partners are in other warps. */
static void sort_lines(cg_ctx *C, sk_net *N, sk_block *K) {
    LLVMBuilderRef b = C->b;
    const cg_lay_info *li = N->li;
    int n = N->n, p = li->f.dims[N->ax];
    int32_t S = N->S;
    if (S < 2) return;
    int64_t lanes = li->f.tpw[p] < S / n ? li->f.tpw[p] : S / n;
    int64_t W = n * lanes; /* positions of a line within one warp */
    int stride = 1;
    for (int i = 0; i < li->f.root_rank && li->f.order[i] != p; i++) stride *= li->f.tpw[li->f.order[i]];
    sk_state st = net_state(C, N);
    if (C->failed) return;
    sk_loop L;
    loop_begin(C, &st, &L, cg_const_i32(C, 1));
    loop_test(C, &L, LLVMBuildICmp(b, LLVMIntULE, L.iv, cg_const_i32(C, sk_log2(S)), ""));
    LLVMValueRef kk = LLVMBuildShl(b, cg_const_i32(C, 1), L.iv, "");
    if (S > W) { /* j >= W: through shared memory */
        sk_if far;
        if_begin(C, &st, &far, LLVMBuildICmp(b, LLVMIntUGT, kk, cg_const_i32(C, W), ""));
        store_keys(C, K, li, N->lin, N->k);
        smem_stages(C, K, kk, cg_const_i32(C, W));
        for (int r = 0; r < li->nregs; r++) N->k[r] = sk_load_key(C, N->F, &K->M, N->lin[r]);
        if_end(C, &st, &far);
    }
    if (W > n) { /* n <= j < W: butterfly shuffles within the warp */
        sk_loop J;
        LLVMValueRef half = LLVMBuildLShr(b, kk, cg_const_i32(C, 1), "");
        LLVMValueRef small = LLVMBuildICmp(b, LLVMIntULT, half, cg_const_i32(C, W / 2), "");
        loop_begin(C, &st, &J, LLVMBuildSelect(b, small, half, cg_const_i32(C, W / 2), ""));
        loop_test(C, &J, LLVMBuildICmp(b, LLVMIntUGE, J.iv, cg_const_i32(C, n), ""));
        LLVMValueRef lanej = LLVMBuildUDiv(b, J.iv, cg_const_i32(C, n), "");
        LLVMValueRef mask = LLVMBuildMul(b, lanej, cg_const_i32(C, stride), "");
        for (int r = 0; r < li->nregs; r++) {
            sk_key other = sk_shfl_key(C, N->k[r], mask);
            LLVMValueRef lower = bit_clear(C, N->pos[r], J.iv);
            LLVMValueRef asc = bit_clear(C, N->pos[r], kk);
            LLVMValueRef keep_min = LLVMBuildICmp(b, LLVMIntEQ, lower, asc, "");
            LLVMValueRef mine_first = sk_before(C, N->F, N->k[r], other);
            LLVMValueRef take = LLVMBuildXor(b, keep_min, mine_first, "");
            N->k[r] = sk_pick(C, take, other, N->k[r]);
        }
        loop_end(C, &st, &J, LLVMBuildLShr(b, J.iv, cg_const_i32(C, 1), ""));
    }
    /* j < n: in the thread. Stages j >= kk do not exist while kk <= n: a
     * predicate rather than a branch, whose join would need a phi per
     * register */
    for (int j = n / 2; j >= 1; j /= 2) {
        LLVMValueRef on = j > 1 ? LLVMBuildICmp(b, LLVMIntUGT, kk, cg_const_i32(C, j), "") : NULL;
        for (int l = 0; l < N->nl; l++)
            for (int e = 0; e < n; e++) {
                if (e & j) continue;
                int ra = N->reg[l * n + e], rb = N->reg[l * n + (e ^ j)];
                sk_order_pair(C, N->F, &N->k[ra], &N->k[rb], bit_clear(C, N->pos[ra], kk), on);
            }
    }
    loop_end(C, &st, &L, LLVMBuildAdd(b, L.iv, cg_const_i32(C, 1), ""));
}

/* ---- the network in local memory ----
 * Past SORT_MAX_STEP compare-exchanges per merge step (more than ~100 keys
 * per thread, which would spill anyway) LLVM's time grows too fast with the
 * unrolled network (f16[64, 256], 4 warps: 10 s; f32[8, 1024], 1 warp:
 * 20 s). Then the keys live in per-thread arrays (local memory, cached) and
 * every stage is a run-time loop over them: constant code size. The
 * schedule is the register network's; key a of line l is element
 * a = l * n + e, at position base + e along the axis. */

enum { SORT_MAX_STEP = 192 };

typedef struct {
    LLVMValueRef hi, lo, aux; /* [regs x field] allocas */
    LLVMTypeRef thi, tlo, taux;
} sk_local;

/* A static alloca (entry block: NVPTX puts it in local memory). */
static LLVMValueRef entry_array(cg_ctx *C, LLVMTypeRef elem, int64_t count, LLVMTypeRef *type) {
    *type = LLVMArrayType2(elem, (uint64_t)count);
    return cg_entry_alloca(C, *type, "sort.keys");
}

static LLVMValueRef local_slot(cg_ctx *C, LLVMValueRef arr, LLVMTypeRef at, LLVMValueRef i) {
    LLVMValueRef idx[2] = {cg_const_i32(C, 0), i};
    return LLVMBuildGEP2(C->b, at, arr, idx, 2, "");
}

static sk_key local_get(cg_ctx *C, const sk_fmt *F, const sk_local *A, LLVMValueRef i) {
    sk_key k = {LLVMBuildLoad2(C->b, F->ht, local_slot(C, A->hi, A->thi, i), ""), NULL, NULL};
    if (F->lo) k.lo = LLVMBuildLoad2(C->b, C->i32, local_slot(C, A->lo, A->tlo, i), "");
    if (F->aux) k.aux = LLVMBuildLoad2(C->b, F->vt, local_slot(C, A->aux, A->taux, i), "");
    return k;
}

static void local_set(cg_ctx *C, const sk_fmt *F, const sk_local *A, LLVMValueRef i, sk_key k) {
    LLVMBuildStore(C->b, k.hi, local_slot(C, A->hi, A->thi, i));
    if (F->lo) LLVMBuildStore(C->b, k.lo, local_slot(C, A->lo, A->tlo, i));
    if (F->aux) LLVMBuildStore(C->b, k.aux, local_slot(C, A->aux, A->taux, i));
}

/* for (i = 0; i < count; i++): the body between count_begin and loop_end */
static LLVMValueRef count_begin(cg_ctx *C, sk_loop *L, int64_t count) {
    loop_begin(C, NULL, L, cg_const_i32(C, 0));
    loop_test(C, L, LLVMBuildICmp(C->b, LLVMIntULT, L->iv, cg_const_i32(C, count), ""));
    return L->iv;
}

static void count_end(cg_ctx *C, sk_loop *L) {
    loop_end(C, NULL, L, LLVMBuildAdd(C->b, L->iv, cg_const_i32(C, 1), ""));
}

static void sort_local(cg_ctx *C, sk_net *N, sk_block *K) {
    LLVMBuilderRef b = C->b;
    const cg_lay_info *li = N->li;
    const sk_fmt *F = N->F;
    int n = N->n, p = li->f.dims[N->ax];
    int64_t R = li->nregs, S = N->S;
    int64_t lanes = li->f.tpw[p] < S / n ? li->f.tpw[p] : S / n;
    int64_t W = n * lanes;
    int stride = 1;
    for (int i = 0; i < li->f.root_rank && li->f.order[i] != p; i++) stride *= li->f.tpw[li->f.order[i]];
    if (S > W && N->nl != 1) {
        cg_error(C, K->loc, "internal error: a sort line spanning warps shares its threads with other lines");
        return;
    }
    sk_local A = {0};
    A.hi = entry_array(C, F->ht, R, &A.thi);
    if (F->lo) A.lo = entry_array(C, C->i32, R, &A.tlo);
    if (F->aux) A.aux = entry_array(C, F->vt, R, &A.taux);
    for (int l = 0; l < N->nl; l++)
        for (int e = 0; e < n; e++) local_set(C, F, &A, cg_const_i32(C, l * n + e), N->k[N->reg[l * n + e]]);
    LLVMValueRef base = li->base[N->ax], nv = cg_const_i32(C, n);
    sk_loop L, J, E;
    loop_begin(C, NULL, &L, cg_const_i32(C, 1));
    loop_test(C, &L, LLVMBuildICmp(b, LLVMIntULE, L.iv, cg_const_i32(C, sk_log2(S)), ""));
    LLVMValueRef kk = LLVMBuildShl(b, cg_const_i32(C, 1), L.iv, "");
    LLVMValueRef half = LLVMBuildLShr(b, kk, cg_const_i32(C, 1), "");
    if (S > W) { /* j >= W: the one line through shared memory */
        sk_if far, own;
        if_begin(C, NULL, &far, LLVMBuildICmp(b, LLVMIntUGT, kk, cg_const_i32(C, W), ""));
        block_smem(C, K);
        LLVMValueRef lin0 = N->lin[N->reg[0]], inner = cg_const_i32(C, K->inner);
        cg_barrier(C); /* an earlier reader of the scratch is done */
        if_begin(C, NULL, &own, cg_reg_canonical(C, li, 0));
        LLVMValueRef e = count_begin(C, &E, n);
        LLVMValueRef at = LLVMBuildMul(b, e, inner, "");
        sk_key ke = local_get(C, F, &A, e);
        sk_store_key(C, F, &K->M, LLVMBuildAdd(b, lin0, at, ""), ke);
        count_end(C, &E);
        if_end(C, NULL, &own);
        cg_barrier(C);
        smem_stages(C, K, kk, cg_const_i32(C, W));
        e = count_begin(C, &E, n);
        at = LLVMBuildMul(b, e, inner, "");
        local_set(C, F, &A, e, sk_load_key(C, F, &K->M, LLVMBuildAdd(b, lin0, at, "")));
        count_end(C, &E);
        if_end(C, NULL, &far);
    }
    if (W > n) { /* n <= j < W: shuffles, every key of the thread in turn */
        LLVMValueRef small = LLVMBuildICmp(b, LLVMIntULT, half, cg_const_i32(C, W / 2), "");
        loop_begin(C, NULL, &J, LLVMBuildSelect(b, small, half, cg_const_i32(C, W / 2), ""));
        loop_test(C, &J, LLVMBuildICmp(b, LLVMIntUGE, J.iv, nv, ""));
        LLVMValueRef lanej = LLVMBuildUDiv(b, J.iv, nv, "");
        LLVMValueRef mask = LLVMBuildMul(b, lanej, cg_const_i32(C, stride), "");
        LLVMValueRef a = count_begin(C, &E, R);
        LLVMValueRef pos = LLVMBuildAdd(b, base, LLVMBuildURem(b, a, nv, ""), "");
        sk_key mine = local_get(C, F, &A, a);
        sk_key other = sk_shfl_key(C, mine, mask);
        LLVMValueRef lower = bit_clear(C, pos, J.iv);
        LLVMValueRef asc = bit_clear(C, pos, kk);
        LLVMValueRef keep_min = LLVMBuildICmp(b, LLVMIntEQ, lower, asc, "");
        LLVMValueRef mine_first = sk_before(C, F, mine, other);
        LLVMValueRef take = LLVMBuildXor(b, keep_min, mine_first, "");
        local_set(C, F, &A, a, sk_pick(C, take, other, mine));
        count_end(C, &E);
        loop_end(C, NULL, &J, LLVMBuildLShr(b, J.iv, cg_const_i32(C, 1), ""));
    }
    /* j < n, from min(n, kk)/2: pairs t of the thread, t = l * n/2 + q */
    LLVMValueRef small = LLVMBuildICmp(b, LLVMIntULT, half, cg_const_i32(C, n / 2), "");
    loop_begin(C, NULL, &J, LLVMBuildSelect(b, small, half, cg_const_i32(C, n / 2), ""));
    loop_test(C, &J, LLVMBuildICmp(b, LLVMIntUGE, J.iv, cg_const_i32(C, 1), ""));
    LLVMValueRef negj = LLVMBuildNeg(b, J.iv, "");
    LLVMValueRef t = count_begin(C, &E, R / 2);
    LLVMValueRef l = LLVMBuildUDiv(b, t, cg_const_i32(C, n / 2), "");
    LLVMValueRef q = LLVMBuildURem(b, t, cg_const_i32(C, n / 2), "");
    LLVMValueRef e = LLVMBuildAnd(b, q, negj, "");
    e = LLVMBuildAdd(b, q, e, "");
    LLVMValueRef ia = LLVMBuildMul(b, l, nv, "");
    ia = LLVMBuildAdd(b, ia, e, "");
    LLVMValueRef ib = LLVMBuildAdd(b, ia, J.iv, "");
    sk_key ka = local_get(C, F, &A, ia);
    sk_key kb = local_get(C, F, &A, ib);
    sk_order_pair(C, F, &ka, &kb, bit_clear(C, LLVMBuildAdd(b, base, e, ""), kk), NULL);
    local_set(C, F, &A, ia, ka);
    local_set(C, F, &A, ib, kb);
    count_end(C, &E);
    loop_end(C, NULL, &J, LLVMBuildLShr(b, J.iv, cg_const_i32(C, 1), ""));
    loop_end(C, NULL, &L, LLVMBuildAdd(b, L.iv, cg_const_i32(C, 1), ""));
    for (int l2 = 0; l2 < N->nl; l2++)
        for (int e2 = 0; e2 < n; e2++) N->k[N->reg[l2 * n + e2]] = local_get(C, F, &A, cg_const_i32(C, l2 * n + e2));
}

/* ---- sort ---- */

/* Elements of a line per thread: a line spreads over one warp's lanes (at
 * most) when there are lines enough for every warp, over more warps when
 * there are fewer lines than warps. */
static int64_t sort_chunk(cg_ctx *C, const ir_type *t, int ax) {
    int64_t S = t->shape[ax], lines = ir_numel(*t) / S, threads = 32 * (int64_t)C->num_warps;
    int64_t per_line = threads / lines;
    if (per_line < 32) per_line = 32;
    if (per_line > S) per_line = S;
    return S / per_line;
}

static bool check_axis(cg_ctx *C, ir_inst *in) {
    ir_value *x = in->operands[0];
    int32_t S = x->type.rank ? x->type.shape[in->axis] : 0;
    if (x->type.rank < 1 || S < 1 || (S & (S - 1))) {
        cg_error(C, in->loc, "internal error: %s needs a power-of-two axis (got %d)", ir_op_table[in->op].name, (int)S);
        return false;
    }
    return true;
}

/* x in the layout with n = sort_chunk consecutive elements of a line per
 * thread, lanes then warps along the axis (returned; *li describes it),
 * every line sorted in N's keys; K: the block in shared memory for the
 * stages whose partners are in other warps. */
static const lay_layout *sorted_keys(cg_ctx *C, ir_inst *in, sk_block *K, cg_lay_info *li, sk_net *N) {
    ir_value *x = in->operands[0];
    int ax = in->axis;
    int64_t n = sort_chunk(C, &x->type, ax);
    const lay_layout *sl = lay_choose_blocked(C->a, x->type.rank, x->type.shape, C->num_warps, ax, (int)n);
    cg_val xv = cg_get(C, x, sl);
    cg_lay_info_get(C, sl, x->type.rank, x->type.shape, li);
    if (li->n[ax] != n) {
        cg_error(C, in->loc, "internal error: the sort layout does not give %d elements per thread", (int)n);
        return NULL;
    }
    if (!net_init(C, N, K->F, li, ax, xv)) return NULL;
    /* compare-exchanges per merge step (shuffled ones count twice) */
    int64_t step = n < x->type.shape[ax] ? 2 * li->nregs : 0;
    for (int64_t j = n / 2; j >= 1; j /= 2) step += li->nregs / 2;
    if (step <= SORT_MAX_STEP) sort_lines(C, N, K);
    else sort_local(C, N, K);
    return C->failed ? NULL : sl;
}

static void lower_sort(cg_ctx *C, ir_inst *in) {
    ir_value *x = in->operands[0], *r = in->results[0];
    if (!check_axis(C, in)) return;
    sk_fmt F = sk_format(C, (blk_dtype)x->type.dtype, (in->flags & IRF_DESCENDING) != 0, false,
                         x->type.shape[in->axis]);
    sk_block K = block_keys(&F, in->loc, &x->type, in->axis);
    cg_lay_info li;
    sk_net N;
    const lay_layout *sl = sorted_keys(C, in, &K, &li, &N);
    if (!sl) return;
    cg_val out = cg_new_val(C, li.nregs, sl);
    for (int i = 0; i < li.nregs && i < out.n; i++) out.v[i] = sk_decode_value(C, &F, N.k[i]);
    const lay_layout *rl = cg_lay(C, r);
    if (!lay_eq(sl, rl)) out = cg_convert(C, in->loc, out, r->type, rl);
    cg_set(C, r, out);
}

/* ---- topk ---- */

enum { TOPK_MAX_ROUNDS = 8 };

static LLVMValueRef index_result(cg_ctx *C, ir_inst *in, LLVMValueRef i) {
    return cg_cast_scalar(C, in->loc, DT_I32, (blk_dtype)in->results[1]->type.dtype, i);
}

/* Large k: the descending sort with indices. The first k elements of every
 * line go to shared memory at their places in the result (row-major values,
 * then i32 indices), and the results read them in their layouts. */
static void topk_sorted(cg_ctx *C, ir_inst *in) {
    LLVMBuilderRef b = C->b;
    ir_value *x = in->operands[0], *rv = in->results[0];
    int ax = in->axis, rank = x->type.rank, K = (int)in->ival;
    blk_dtype t = (blk_dtype)x->type.dtype;
    sk_fmt F = sk_format(C, t, true, true, x->type.shape[ax]);
    sk_block blk = block_keys(&F, in->loc, &x->type, ax);
    cg_lay_info li;
    sk_net N;
    if (!sorted_keys(C, in, &blk, &li, &N)) return;
    int64_t count = ir_numel(rv->type), ioff = (count * dtype_bytes(t) + 15) / 16 * 16;
    LLVMValueRef vbase = cg_smem(C, in->loc, ioff + count * 4);
    LLVMValueRef ibase = sk_byte_offset(C, vbase, ioff);
    LLVMTypeRef vt = cg_type(C, t);
    sk_if own;
    cg_barrier(C); /* an earlier reader of the scratch is done */
    if_begin(C, NULL, &own, cg_reg_canonical(C, &li, 0));
    for (int r = 0; r < li.nregs; r++) {
        sk_if first;
        if_begin(C, NULL, &first, LLVMBuildICmp(b, LLVMIntULT, N.pos[r], cg_const_i32(C, K), ""));
        LLVMValueRef lin = cg_const_i32(C, 0);
        int64_t stride = 1;
        for (int d = rank - 1; d >= 0; d--) {
            LLVMValueRef c = d == ax ? N.pos[r] : cg_reg_coord(C, &li, r, d);
            LLVMValueRef cs = LLVMBuildMul(b, c, cg_const_i32(C, stride), "");
            lin = LLVMBuildAdd(b, lin, cs, "");
            stride *= rv->type.shape[d];
        }
        LLVMValueRef v = sk_decode_value(C, &F, N.k[r]);
        LLVMBuildStore(b, v, sk_slot(C, vbase, vt, lin));
        LLVMValueRef i = sk_decode_index(C, &F, N.k[r]);
        LLVMBuildStore(b, i, sk_slot(C, ibase, C->i32, lin));
        if_end(C, NULL, &first);
    }
    if_end(C, NULL, &own);
    cg_barrier(C);
    for (int k = 0; k < 2; k++) {
        ir_value *res = in->results[k];
        const lay_layout *l = cg_lay(C, res);
        cg_lay_info ro;
        cg_lay_info_get(C, l, rank, res->type.shape, &ro);
        cg_val v = cg_new_val(C, ro.nregs, l);
        for (int r = 0; r < ro.nregs && r < v.n; r++) {
            LLVMValueRef lin = cg_reg_linear(C, &ro, r);
            v.v[r] = k == 0 ? LLVMBuildLoad2(b, vt, sk_slot(C, vbase, vt, lin), "")
                            : index_result(C, in, LLVMBuildLoad2(b, C->i32, sk_slot(C, ibase, C->i32, lin), ""));
        }
        cg_set(C, res, v);
    }
}

/* Small k, in the operand's layout: a run-time loop of k rounds; round t
 * takes, per line, the least key above round t-1's winner (keys are unique:
 * they hold the index). A key not above it becomes all ones, which no key of
 * a value with an index equals (hi has spare bits or the index is in lo),
 * except for 16-bit integers of a 65536-element axis, whose one such key
 * decodes to itself anyway. The minimum: in-thread, butterfly over the lanes
 * holding distinct elements, then [warps x lines] in shared memory when the
 * axis spans warps. Every thread of a line ends with the winner, and keeps it
 * in a local array [lines x k]; a result register reads the round of its
 * coordinate along the axis. */
static void topk_rounds(cg_ctx *C, ir_inst *in, const lay_layout *xl, int K) {
    LLVMBuilderRef b = C->b;
    ir_value *x = in->operands[0], *rv = in->results[0], *ri = in->results[1];
    int ax = in->axis, rank = x->type.rank;
    blk_dtype t = (blk_dtype)x->type.dtype;
    sk_fmt F = sk_format(C, t, true, true, x->type.shape[ax]);
    cg_val xv = cg_get(C, x, xl);
    cg_lay_info li, ro;
    cg_lay_info_get(C, xl, rank, x->type.shape, &li);
    cg_lay_info_get(C, xl, rank, rv->type.shape, &ro);
    sk_net N;
    if (!net_init(C, &N, &F, &li, ax, xv)) return;
    int n = N.n, nl = N.nl;
    sk_key *w = ARENA_ARRAY(C->a, sk_key, nl), *prev = ARENA_ARRAY(C->a, sk_key, nl);
    LLVMValueRef *outlin = ARENA_ARRAY(C->a, LLVMValueRef, nl);
    int *line_of = ARENA_ARRAY(C->a, int, li.nregs);
    sk_state st = {ARENA_ARRAY(C->a, LLVMValueRef *, 2 * nl), 0};
    if (!w || !prev || !outlin || !line_of || !st.refs) { C->failed = true; return; }
    for (int l = 0; l < nl; l++)
        for (int e = 0; e < n; e++) line_of[N.reg[l * n + e]] = l;
    int64_t total = 1; /* lines in the whole block */
    for (int d = 0; d < rank; d++)
        if (d != ax) total *= x->type.shape[d];
    for (int l = 0; l < nl; l++) {
        /* the line's index among all lines (row-major, axis removed) */
        LLVMValueRef lin = cg_const_i32(C, 0);
        int64_t stride = 1, cst = 0, off[IR_MAX_RANK];
        cg_reg_offsets(&li, N.reg[l * n], off);
        for (int d = rank - 1; d >= 0; d--) {
            if (d == ax) continue;
            LLVMValueRef bs = LLVMBuildMul(b, li.base[d], cg_const_i32(C, stride), "");
            lin = LLVMBuildAdd(b, lin, bs, "");
            cst += off[d] * stride;
            stride *= x->type.shape[d];
        }
        outlin[l] = LLVMBuildAdd(b, lin, cg_const_i32(C, cst), "");
    }
    int p = li.f.dims[ax];
    int64_t S = x->type.shape[ax], spt = li.f.spt[p], tpw = li.f.tpw[p], wpc = li.f.wpc[p];
    int64_t lanes = S <= spt ? 1 : (S / spt < tpw ? S / spt : tpw);
    int64_t per_warp = lay_warp_span(&li.f, p), warps = S <= per_warp ? 1 : (S / per_warp < wpc ? S / per_warp : wpc);
    int stride = 1, wstride = 1;
    for (int i = 0; i < li.f.root_rank && li.f.order[i] != p; i++) {
        stride *= li.f.tpw[li.f.order[i]];
        wstride *= li.f.wpc[li.f.order[i]];
    }
    sk_smem M = {0};
    LLVMValueRef wc = NULL;
    if (warps > 1) {
        M = sk_smem_keys(C, in->loc, &F, warps * total);
        wc = LLVMBuildUDiv(b, C->warp, cg_const_i32(C, wstride), "");
        wc = LLVMBuildURem(b, wc, cg_const_i32(C, wpc), "");
        wc = LLVMBuildURem(b, wc, cg_const_i32(C, warps), "");
    }
    sk_key none = {LLVMConstAllOnes(F.ht), F.lo ? LLVMConstAllOnes(C->i32) : NULL, NULL};
    sk_local A = {0};
    A.hi = entry_array(C, F.ht, (int64_t)nl * K, &A.thi);
    if (F.lo) A.lo = entry_array(C, C->i32, (int64_t)nl * K, &A.tlo);
    if (F.aux) A.aux = entry_array(C, F.vt, (int64_t)nl * K, &A.taux);
    for (int l = 0; l < nl; l++) { /* the previous winner: only its order matters */
        prev[l] = (sk_key){none.hi, none.lo, NULL};
        st.refs[st.n++] = &prev[l].hi;
        if (F.lo) st.refs[st.n++] = &prev[l].lo;
    }
    sk_loop L;
    loop_begin(C, &st, &L, cg_const_i32(C, 0));
    loop_test(C, &L, LLVMBuildICmp(b, LLVMIntULT, L.iv, cg_const_i32(C, K), ""));
    LLVMValueRef first = LLVMBuildICmp(b, LLVMIntEQ, L.iv, cg_const_i32(C, 0), "");
    for (int l = 0; l < nl; l++) {
        sk_key a = {0};
        for (int e = 0; e < n; e++) {
            sk_key k = N.k[N.reg[l * n + e]];
            LLVMValueRef above = sk_before(C, &F, prev[l], k);
            none.aux = k.aux;
            k = sk_pick(C, LLVMBuildOr(b, first, above, ""), k, none);
            a = e == 0 ? k : sk_pick(C, sk_before(C, &F, k, a), k, a);
        }
        for (int64_t off = 1; off < lanes; off *= 2) {
            sk_key o = sk_shfl_key(C, a, cg_const_i32(C, off * stride));
            a = sk_pick(C, sk_before(C, &F, o, a), o, a);
        }
        w[l] = a;
    }
    if (warps > 1) {
        cg_barrier(C); /* the previous round's readers are done */
        for (int l = 0; l < nl; l++) {
            LLVMValueRef s = LLVMBuildMul(b, wc, cg_const_i32(C, total), "");
            sk_store_key(C, &F, &M, LLVMBuildAdd(b, s, outlin[l], ""), w[l]);
        }
        cg_barrier(C);
        for (int l = 0; l < nl; l++)
            for (int v = 0; v < warps; v++) {
                sk_key o = sk_load_key(C, &F, &M, LLVMBuildAdd(b, cg_const_i32(C, v * total), outlin[l], ""));
                w[l] = v == 0 ? o : sk_pick(C, sk_before(C, &F, o, w[l]), o, w[l]);
            }
    }
    for (int l = 0; l < nl; l++) {
        LLVMValueRef at = LLVMBuildAdd(b, L.iv, cg_const_i32(C, (int64_t)l * K), "");
        local_set(C, &F, &A, at, w[l]);
        prev[l] = (sk_key){w[l].hi, w[l].lo, NULL};
    }
    loop_end(C, &st, &L, LLVMBuildAdd(b, L.iv, cg_const_i32(C, 1), ""));
    cg_val ov = cg_new_val(C, ro.nregs, xl), oi = cg_new_val(C, ro.nregs, xl);
    for (int r = 0; r < ro.nregs && r < ov.n && r < oi.n; r++) {
        int k[IR_MAX_RANK];
        cg_reg_index(&ro, r, k);
        k[ax] = 0;
        int l = line_of[cg_reg_of(&li, k)];
        LLVMValueRef c = cg_reg_coord(C, &ro, r, ax);
        sk_key key = local_get(C, &F, &A, LLVMBuildAdd(b, c, cg_const_i32(C, (int64_t)l * K), ""));
        ov.v[r] = sk_decode_value(C, &F, key);
        oi.v[r] = index_result(C, in, sk_decode_index(C, &F, key));
    }
    const lay_layout *lv = cg_lay(C, rv), *lx = cg_lay(C, ri);
    if (!lay_eq(xl, lv)) ov = cg_convert(C, in->loc, ov, rv->type, lv);
    if (!lay_eq(xl, lx)) oi = cg_convert(C, in->loc, oi, ri->type, lx);
    cg_set(C, rv, ov);
    cg_set(C, ri, oi);
}

/* Does the sort's scratch fit (the keys of a block whose lines span warps)? */
static bool sort_fits(cg_ctx *C, const sk_fmt *F, const ir_type *t, int ax) {
    if (t->shape[ax] / sort_chunk(C, t, ax) <= 32) return true;
    int64_t key = sk_type_bytes(F->ht) + (F->lo ? 4 : 0) + (F->aux ? sk_type_bytes(F->vt) : 0);
    return ir_numel(*t) * key + 48 <= C->tgt->smem_static_max;
}

static void lower_topk(cg_ctx *C, ir_inst *in) {
    ir_value *x = in->operands[0], *rv = in->results[0];
    if (!check_axis(C, in)) return;
    int K = (int)in->ival, ax = in->axis;
    if (in->num_results < 2 || K < 1 || K > x->type.shape[ax]) {
        cg_error(C, in->loc, "internal error: topk of %d along an axis of %d elements", K, x->type.shape[ax]);
        return;
    }
    const lay_layout *xl = cg_lay(C, x);
    sk_fmt F = sk_format(C, (blk_dtype)x->type.dtype, true, true, x->type.shape[ax]);
    /* rounds also where the sort's keys would not fit its scratch: slower
     * to compile for a large k, but it compiles */
    bool rounds = K <= TOPK_MAX_ROUNDS || !sort_fits(C, &F, &x->type, ax);
    if (rounds && lay_fits(xl, x->type.rank, rv->type.shape)) topk_rounds(C, in, xl, K);
    else topk_sorted(C, in);
}

bool cg_sort(cg_ctx *C, ir_inst *in) {
    switch (in->op) {
    case IR_SORT: lower_sort(C, in); return true;
    case IR_TOPK: lower_topk(C, in); return true;
    default: return false;
    }
}

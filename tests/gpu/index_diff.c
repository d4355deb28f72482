/* index_diff — a differential tester for index arithmetic (issue 8, the
 * axisinfo bullet; docs/gpu-testing.md).
 *
 *   index_diff [--device N|cpu] [--seed S] [--count N] [--only K] [--keep DIR]
 *              [--max-seconds T] [--ptx] [--facts] [--no-shrink] [--verbose] [--perturb]
 *              [--dry-run]
 *
 * axisinfo derives contiguity / divisibility / constancy of integer index
 * expressions and vectorize turns them into 16-byte accesses; a wrong fact is
 * silent wrong code (`(pid*B + arange(0, B) - 4) % 4` was once "contiguous").
 * This program generates random valid kernels whose load and store offsets
 * are such expressions, runs each on the CPU interpreter (the reference) and
 * on the device, and compares the buffers byte for byte.
 *
 * A kernel (1-D or 2-D block, i32 or i64 index type):
 *
 *   kernel idx(x: *T, y: *T, out: *T, a0: i32, ..., [n: i32]) {
 *       let e = broadcast_to(EXPR, [B]);              // the index under test
 *       let m = MASK;                                  // lin < n, r < c, e < c ...
 *       store(out + lin, load(x + OFF + e, m), m);    // lin = pid*B + arange: injective
 *       store(y + OFF + e, (e * 3 + 1) as T, m);      // value a function of the address:
 *   }                                                  // any writer order gives one result
 *
 * EXPR is a random tree over program_id(0), arange (r, r0[:, None],
 * r1[None, :]), the integer arguments and small constants (negative ones and
 * non-powers of two), with + - * / % << >> & | minimum maximum, and
 * multiple_of / max_contiguous hints placed only where they are true (checked
 * by evaluating the hinted value over every launch). Interval arithmetic
 * bounds every node (no overflow of its type) and EXPR (OFF = -lo, so every
 * access is inside the buffer; the interpreter checks it). Each kernel runs
 * with up to three argument sets — every integer a multiple of 16 (the d16
 * entry), some equal to 1 (an eq1 variant is added, as gpu_check does), and
 * arbitrary values (the fallback) — with 16-byte aligned pointers, and once
 * with every pointer moved by one element (the fallback). Buffers sit between
 * guards of 0xFF, outputs start as 0xFF (poison), and the whole image must
 * equal the reference's.
 *
 * On a failure: the kernel, its arguments, the first differing elements, then
 * a greedy shrink (subtrees replaced by a child or a leaf, constants made
 * smaller, mask terms, wide types and the grid dropped, while the same kind
 * of failure persists; the first MAX_SHRINKS failures of a run, within
 * --max-seconds) and the minimal reproducer. Kernel K of seed S is the
 * same for any --count: `--seed S --only K` reruns it. Exit 0 iff every
 * kernel matched, 1 on failures, 2 on bad usage, 77 without a GPU/driver.
 *
 * --device cpu runs the "device" half on libblkrt's CPU interpreter device:
 * a self-test of the generator and the harness (both sides interpret).
 * --ptx there also compiles the PTX of every kernel (catches backend errors
 * without a GPU). --dry-run (for the fake driver, BLKRT_CUDA_LIBRARY, which
 * runs nothing) stops each launch there: PTX, variants, module load and the
 * entry the runtime picks (against the fake's launch record) are checked.
 * --facts also checks axisinfo's facts about e and m (the d16 plan) against
 * their values in the all-multiples-of-16 launch, without a GPU (see the
 * oracle below); off by default while axisinfo has known findings
 * (docs/reliability.md).
 * --perturb flips a bit of every launch's out[0] (every kernel must fail:
 * a self-test of the comparison and the shrinker). BLK_GPU_ARCH=sm_80
 * compiles for sm_80 instead of the device's own arch (as gpu_check does).
 *
 * The kernels (their model, printing, interval arithmetic, exact
 * evaluation, the generator) are index_gen.c; this file runs them, checks
 * axisinfo's facts, reports and shrinks.
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>

#include "blk/blkc.h"
#include "blk/blkrt.h"
#include "blk/blkrt_jit.h"
#include "../runtime/fake_cuda.h"
#include "diff_common.h"
#include "index_gen.h" /* the kernels: model, printing, intervals, generator */

/* ------------------------------------------------------------------ running */

typedef struct {
    bool cpu, ptx, shrink, verbose, perturb, dry_run, facts;
    int ordinal, count, only;
    uint64_t seed;
    const char *keep;
    double max_seconds;
} options;

static blkrt_device *dev;
static blkrt_device_info dinfo;
static bool device_lost;
static char prog_name[256] = "index_diff"; /* how to run this program again (reproduce lines) */
static fake_api fake; /* --dry-run on the fake driver: its launch record */
static bool have_fake;

/* What went wrong with a kernel; the shrinker keeps a candidate only if it
 * fails in the same class. */
typedef enum { F_NONE, F_COMPILE, F_REFERENCE, F_FACT, F_LAUNCH, F_MISMATCH } fclass;
static const char *const fclass_name[] = {"ok", "compile error", "reference (interpreter) error",
                                          "unsound axisinfo fact", "launch error", "mismatch"};

typedef struct {
    fclass cls;
    int sub;             /* F_FACT: which fact (the shrinker keeps it): 1 contig, 2 const, 3 div at run starts, 4 div (contig 1) */
    char msg[2048];
    int vector_accesses; /* ld/st.global.v* in the PTX (GPU, --ptx) */
    int entries[3];      /* launches predicted on d16 / eq1 / fallback entries */
} outcome;

static void fail_msg(outcome *O, fclass c, const char *fmt, ...) {
    if (O->cls != F_NONE) return; /* keep the first */
    O->cls = c;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(O->msg, sizeof O->msg, fmt, ap);
    va_end(ap);
}

/* x[i]: distinct-looking values, so a load from a wrong address shows. */
static void put_elem(unsigned char *p, int size, int64_t v) {
    for (int k = 0; k < size; k++) p[k] = (unsigned char)((uint64_t)v >> (8 * k));
}
static int64_t get_elem(const unsigned char *p, int size) {
    uint64_t u = 0;
    for (int k = 0; k < size; k++) u |= (uint64_t)p[k] << (8 * k);
    if (size < 8 && (u >> (8 * size - 1)) & 1) u |= ~(uint64_t)0 << (8 * size); /* sign-extend */
    return (int64_t)u;
}
static int64_t x_value(int64_t i) { return (int64_t)((uint64_t)(i + 1) * 0x9E3779B97F4A7C15ull >> 17); }

/* The launch key of run r: "x=d16,...,a0=eq1" (aligned pointers d16,
 * integers eq1 when 1, d16 when a multiple of 16), and whether it has eq1. */
static bool run_key(const kspec *K, int r, char *key, size_t n) {
    bool eq1 = false;
    snprintf(key, n, "x=d16,y=d16,out=d16");
    for (int a = 0; a < K->nargs; a++) {
        int64_t v = K->argv[r][a];
        const char *c = v == 1 ? "eq1" : v % 16 == 0 ? "d16" : NULL;
        eq1 |= v == 1;
        size_t l = strlen(key);
        if (c) snprintf(key + l, n - l, ",a%d=%s", a, c);
    }
    if (K->mask & MK_N && (K->n[r] == 1 || K->n[r] % 16 == 0)) {
        size_t l = strlen(key);
        snprintf(key + l, n - l, ",n=%s", K->n[r] == 1 ? "eq1" : "d16");
        eq1 |= K->n[r] == 1;
    }
    return eq1;
}

/* Entries of the PTX (blk-meta lines) and which one the runtime takes for
 * given arguments: the first whose assumptions hold (docs/runtime.md). */
#define MAX_ENTRIES 8
typedef struct {
    int n;
    char name[MAX_ENTRIES][128];
    char spec[MAX_ENTRIES][MAXA + 4][4]; /* per parameter: "d16", "eq1", "-" (first letter used) */
    int kind[MAX_ENTRIES];               /* 0 d16, 1 eq1, 2 fallback */
} entries;

static void parse_entries(const char *ptx, entries *E) {
    memset(E, 0, sizeof *E);
    for (const char *l = strstr(ptx, "// blk-meta v1"); l && E->n < MAX_ENTRIES; l = strstr(l + 1, "// blk-meta v1")) {
        const char *sp = strstr(l, " spec=");
        const char *eol = strchr(l, '\n');
        const char *en = strstr(l, " entry=");
        if (!sp || !en || (eol && (sp > eol || en > eol))) continue;
        sscanf(en + 7, "%127[^ \n]", E->name[E->n]);
        sp += 6;
        int p = 0, kind = 2;
        while (*sp && *sp != ' ' && *sp != '\n' && p < MAXA + 4) {
            const char *colon = strchr(sp, ':');
            if (!colon) break;
            E->spec[E->n][p][0] = colon[1];
            if (colon[1] == 'e') kind = 1;
            else if (colon[1] == 'd' && kind == 2) kind = 0;
            p++;
            sp = colon + 1;
            while (*sp && *sp != ',' && *sp != ' ' && *sp != '\n') sp++;
            if (*sp == ',') sp++;
        }
        E->kind[E->n++] = kind;
    }
}
static int predict_entry(const entries *E, const blkrt_arg *args, int nargs) {
    for (int v = 0; v < E->n; v++) {
        bool ok = true;
        for (int i = 0; i < nargs && ok; i++) {
            char c = E->spec[v][i][0];
            if (c == 'd')
                ok = args[i].kind == BLKRT_ARG_PTR ? args[i].v.ptr % 16 == 0 : args[i].v.i % 16 == 0;
            else if (c == 'e') ok = args[i].kind == BLKRT_ARG_INT && args[i].v.i == 1;
        }
        if (ok) return v;
    }
    return -1;
}

/* The reference of run r: the interpreter on buffers of exactly their size;
 * y and out start as 0xFF (poison). bufs[0..2] = x, y, out. */
static bool reference(blkc_ctx *c, const kspec *K, const kderived *D, int r, unsigned char *bufs[3], outcome *O) {
    int es = elems[K->elem].size;
    size_t bytes[3] = {(size_t)D->span * es, (size_t)D->span * es, (size_t)D->total * es};
    for (int b = 0; b < 3; b++) {
        bufs[b] = malloc(bytes[b]);
        if (!bufs[b]) {
            fail_msg(O, F_REFERENCE, "out of memory");
            return false;
        }
    }
    for (int64_t i = 0; i < D->span; i++) put_elem(bufs[0] + i * es, es, x_value(i));
    memset(bufs[1], 0xFF, bytes[1]);
    memset(bufs[2], 0xFF, bytes[2]);
    blk_arg args[3 + MAXA + 1];
    int na = 0;
    for (int b = 0; b < 3; b++) args[na++] = BLK_PTR(bufs[b], bytes[b]);
    for (int a = 0; a < K->nargs; a++) args[na++] = BLK_INT(K->argv[r][a]);
    if (K->mask & MK_N) args[na++] = BLK_INT(K->n[r]);
    unsigned grid[3] = {(unsigned)K->grid, 1, 1};
    size_t before = strlen(blkc_diagnostics(c));
    if (blkc_interp_run(c, "idx", grid, args, na, NULL) != BLK_OK) {
        /* an access outside the buffers: the interval arithmetic is wrong */
        fail_msg(O, F_REFERENCE, "run %d: the interpreter failed: %s", r, blkc_diagnostics(c) + before);
        return false;
    }
    return true;
}

/* One launch on the device (offset: every pointer moved by one element),
 * compared byte for byte with the reference, guards included. */
static void device_run(const options *o, blkrt_kernel *k, const entries *E, const kspec *K, const kderived *D, int r,
                       int offset, unsigned char *ref[3], outcome *O) {
    int es = elems[K->elem].size;
    size_t bytes[3] = {(size_t)D->span * es, (size_t)D->span * es, (size_t)D->total * es};
    size_t start = GUARD + (size_t)(offset * es);
    unsigned char *image[3] = {0}, *back = NULL;
    blkrt_ptr base[3] = {0};
    blkrt_arg args[3 + MAXA + 1];
    int na = 0;
    blkrt_status st = BLKRT_OK;
    const char *what = "";
    for (int b = 0; b < 3 && !st; b++) {
        size_t total = start + bytes[b] + GUARD;
        image[b] = malloc(total);
        if (!image[b]) {
            fail_msg(O, F_LAUNCH, "out of memory");
            goto done;
        }
        memset(image[b], 0xFF, total);
        if (b == 0) memcpy(image[b] + start, ref[0], bytes[0]);
        what = "blkrt_malloc";
        st = blkrt_malloc(dev, total, &base[b]);
        if (!st) what = "blkrt_memcpy_htod", st = blkrt_memcpy_htod(dev, base[b], image[b], total);
        args[na++] = BLKRT_PTR(base[b] + start);
    }
    for (int a = 0; a < K->nargs; a++) args[na++] = BLKRT_INT(K->argv[r][a]);
    if (K->mask & MK_N) args[na++] = BLKRT_INT(K->n[r]);
    /* the entry the runtime takes (on the CPU device with --ptx: would take) */
    int v = E->n ? predict_entry(E, args, na) : -1;
    const char *ename = o->cpu ? "cpu" : v < 0 ? "none" : E->kind[v] == 0 ? "d16" : E->kind[v] == 1 ? "eq1" : "fallback";
    if (v >= 0) O->entries[E->kind[v]]++;
    int launches_before = have_fake ? fake.launch_count() : 0;
    uint32_t grid[3] = {(uint32_t)K->grid, 1, 1};
    if (!st) what = "blkrt_launch", st = blkrt_launch(k, grid, args, na, NULL);
    if (!st) what = "blkrt_device_synchronize", st = blkrt_device_synchronize(dev);
    if (st) {
        fail_msg(O, F_LAUNCH, "run %d %s (%s entry): %s: %s: %s", r, offset ? "offset" : "aligned", ename, what,
                 blkrt_status_name(st), blkrt_last_error());
        if (st == BLKRT_ERR_LAUNCH_FAILED || st == BLKRT_ERR_DRIVER) device_lost = !o->cpu;
        goto done;
    }
    if (have_fake) { /* the entry launched must be the predicted one */
        fake_launch l;
        if (fake.launch_count() != launches_before + 1 || fake.get_launch(fake.launch_count() - 1, &l))
            fail_msg(O, F_LAUNCH, "run %d: the driver recorded no launch", r);
        else if (v < 0 || strcmp(l.entry, E->name[v]))
            fail_msg(O, F_LAUNCH, "run %d %s: the runtime launched entry %s, expected %s", r,
                     offset ? "offset" : "aligned", l.entry, v < 0 ? "(none accepts)" : E->name[v]);
    }
    if (o->dry_run) goto done; /* the fake runs nothing: no results to compare */
    static const char *const bname[3] = {"x", "y", "out"};
    for (int b = 0; b < 3; b++) {
        size_t total = start + bytes[b] + GUARD;
        back = malloc(total);
        if (!back) {
            fail_msg(O, F_LAUNCH, "out of memory");
            goto done;
        }
        st = blkrt_memcpy_dtoh(dev, back, base[b], total);
        if (st) {
            fail_msg(O, F_LAUNCH, "blkrt_memcpy_dtoh: %s", blkrt_last_error());
            goto done;
        }
        if (b > 0) memcpy(image[b] + start, ref[b], bytes[b]); /* what the reference left there */
        if (o->perturb && b == 2) back[start] ^= 0x40;         /* self-test: out[0] is always compared */
        if (memcmp(back, image[b], total)) {
            sbuf s = {0};
            int shown = 0;
            long bad = 0;
            for (size_t q = 0; q < total; q += (size_t)es) {
                /* guards are compared per element-sized chunk too */
                if (!memcmp(back + q, image[b] + q, (size_t)es)) continue;
                bad++;
                if (shown++ >= 6) continue;
                int64_t idx = ((int64_t)q - (int64_t)start) / es;
                if (q < start || q >= start + bytes[b])
                    sb_printf(&s, "\n      %s guard at element %lld: written", bname[b], (long long)idx);
                else
                    sb_printf(&s, "\n      %s[%lld]: got %lld, want %lld%s", bname[b], (long long)idx,
                              (long long)get_elem(back + q, es), (long long)get_elem(image[b] + q, es),
                              get_elem(image[b] + q, es) == -1 ? " (poison: not written by the reference)"
                              : get_elem(back + q, es) == -1 ? " (poison: not written)" : "");
            }
            fail_msg(O, F_MISMATCH, "run %d %s (%s entry): %ld element(s) of %s differ:%s", r,
                     offset ? "offset" : "aligned", ename, bad, bname[b], s.s ? s.s : "");
            free(s.s);
        }
        free(back);
        back = NULL;
    }
done:
    free(back);
    for (int b = 0; b < 3; b++) {
        if (base[b] && !device_lost) blkrt_free(dev, base[b]);
        free(image[b]);
    }
}

/* ---- the facts oracle ----
 * axisinfo's facts about `e` and `m` (--emit=ir-after=axisinfo: the d16
 * plan, every pointer and integer argument divisible by 16) must hold for
 * their values in run 0, whose integer arguments (and n) are all multiples
 * of 16. This needs no GPU: a too-strong fact is found here even where
 * vectorize does not (yet) act on it. Semantics (axisinfo.h), per dim d:
 * at an index not a multiple of contig[d] the value is the previous one
 * along d plus 1; not a multiple of const[d], equal to it; at a multiple of
 * contig[d], divisible by div[d]. */

typedef struct {
    int id, rank;
    int64_t contig[2], div[2], cnst[2];
    char line[160]; /* the IR line that defines the value */
} vfacts;

/* The value named `name` (the printer's "// name" comment on the line that
 * defines it) and its facts; false if the dump has no such line (a let
 * that only renames, e.g. broadcast_to of a full-shape arange). */
static bool find_facts(const char *ir, const char *name, vfacts *F) {
    memset(F, 0, sizeof *F);
    char tail[32];
    snprintf(tail, sizeof tail, "  // %s\n", name);
    const char *end = strstr(ir, "// axisinfo @");
    const char *hit = NULL;
    for (const char *p = strstr(ir, tail); p && (!end || p < end); p = strstr(p + 1, tail)) hit = p;
    if (!hit) return false;
    const char *bol = hit;
    while (bol > ir && bol[-1] != '\n') bol--;
    snprintf(F->line, sizeof F->line, "%.*s", (int)(hit - bol), bol);
    const char *pc = strchr(bol, '%');
    if (!pc || pc > hit || sscanf(pc + 1, "%d", &F->id) != 1) return false;
    char key[32];
    snprintf(key, sizeof key, "// %%%d: contig=[", F->id);
    const char *f = end ? strstr(end, key) : NULL;
    if (!f) return false;
    long long a[2], b[2], c[2];
    int n = sscanf(f + strlen(key), "%lld, %lld] div=[%lld, %lld] const=[%lld, %lld]", &a[0], &a[1], &b[0], &b[1],
                   &c[0], &c[1]);
    if (n == 6) F->rank = 2;
    else if (sscanf(f + strlen(key), "%lld] div=[%lld] const=[%lld]", &a[0], &b[0], &c[0]) == 3) F->rank = 1;
    else return false;
    for (int d = 0; d < F->rank; d++) F->contig[d] = a[d], F->div[d] = b[d], F->cnst[d] = c[d];
    return true;
}

/* The mask's value at a point (1 = on). */
static int64_t mask_value(const kspec *K, const point *p) {
    int64_t lin = K->rank == 1 ? (int64_t)p->pid * K->b0 + p->i0 : ((int64_t)p->pid * K->b0 + p->i0) * K->b1 + p->i1;
    int64_t e = eval(K, K->root, p);
    bool on = true;
    if (K->mask & MK_N) on = on && lin < K->n[p->run];
    if (K->mask & MK_AR) on = on && (K->rank == 2 && K->mask_ar_dim ? p->i1 : p->i0) < K->mask_ar_c;
    if (K->mask & MK_E) on = on && (K->mask_e_ge ? e >= K->mask_e_c : e < K->mask_e_c);
    return on;
}

static bool check_value_facts(const kspec *K, const vfacts *F, bool is_mask, const char *name, outcome *O) {
    if (F->rank != K->rank) return true; /* not the value we think it is */
    int n0 = K->b0, n1 = K->rank == 2 ? K->b1 : 1, per = n0 * n1;
    int64_t *v = malloc(sizeof *v * (size_t)per);
    if (!v) return true;
    bool ok = true;
    for (int pid = 0; pid < K->grid && ok; pid++) {
        for (int i = 0; i < per; i++) {
            point p = {0, pid, i / n1, i % n1};
            v[i] = is_mask ? mask_value(K, &p) : eval(K, K->root, &p);
        }
        for (int i = 0; i < per && ok; i++) {
            int idx[2] = {i / n1, i % n1};
            for (int d = 0; d < K->rank && ok; d++) {
                int step = d == 0 ? n1 : 1; /* the previous element along d */
                const char *why = NULL;
                int sub = 0;
                int64_t c = F->contig[d] > 0 ? F->contig[d] : 1, k = F->cnst[d] > 0 ? F->cnst[d] : 1;
                int64_t q = F->div[d] > 0 ? F->div[d] : 1;
                if (!is_mask && idx[d] % c != 0 && v[i] != v[i - step] + 1) why = "not contiguous", sub = 1;
                else if (idx[d] % k != 0 && v[i] != v[i - step]) why = "not constant", sub = 2;
                else if (!is_mask && idx[d] % c == 0 && v[i] % q != 0) {
                    why = c > 1 ? "not divisible at a run start" : "not divisible (contig 1: every element)";
                    sub = c > 1 ? 3 : 4;
                }
                if (why) {
                    ok = false;
                    char at[64];
                    if (K->rank == 1) snprintf(at, sizeof at, "[%d]", idx[0]);
                    else snprintf(at, sizeof at, "[%d, %d]", idx[0], idx[1]);
                    char prev[48] = "";
                    if (idx[d] > 0) snprintf(prev, sizeof prev, " (previous along dim %d: %lld)", d, (long long)v[i - step]);
                    char fx[160];
                    if (K->rank == 1)
                        snprintf(fx, sizeof fx, "contig=[%lld] div=[%lld] const=[%lld]", (long long)F->contig[0],
                                 (long long)F->div[0], (long long)F->cnst[0]);
                    else
                        snprintf(fx, sizeof fx, "contig=[%lld, %lld] div=[%lld, %lld] const=[%lld, %lld]",
                                 (long long)F->contig[0], (long long)F->contig[1], (long long)F->div[0],
                                 (long long)F->div[1], (long long)F->cnst[0], (long long)F->cnst[1]);
                    fail_msg(O, F_FACT, "%s (%s) has %s, but in run 0 at pid %d, element %s: %s = %lld%s: %s along dim %d",
                             name, F->line + strspn(F->line, " "), fx, pid, at, name, (long long)v[i], prev, why, d);
                    O->sub = sub;
                }
            }
        }
    }
    free(v);
    return ok;
}

static bool check_facts(blkc_ctx *c, const kspec *K, outcome *O) {
    const char *ir = blkc_emit(c, "ir-after=axisinfo");
    if (!ir) return true;
    vfacts F;
    if (find_facts(ir, "e", &F) && !check_value_facts(K, &F, false, "e", O)) return false;
    if (K->mask && find_facts(ir, "m", &F) && !check_value_facts(K, &F, true, "m", O)) return false;
    return true;
}

static int count_substr(const char *s, const char *w) {
    int n = 0;
    for (const char *p = strstr(s, w); p; p = strstr(p + 1, w)) n++;
    return n;
}

/* Compile, run the reference and the device for every run and placement. */
static void run_kernel(const options *o, const kspec *K, const kderived *D, outcome *O) {
    memset(O, 0, sizeof *O);
    char *src = kernel_source(K, D);
    if (!src) {
        fail_msg(O, F_COMPILE, "out of memory");
        return;
    }
    blkc_ctx *c = blkc_new();
    blkrt_module *mod = NULL;
    blkrt_kernel *k = NULL;
    entries E = {0};
    const char *arch = o->cpu ? "sm_90a" : backend_arch(dinfo.arch);
    if (!arch || blkc_set_arch(c, arch) != BLK_OK) {
        fail_msg(O, F_COMPILE, "blk does not generate code for %s", dinfo.arch);
        goto done;
    }
    if (o->facts) blkc_set_dump_after(c, "axisinfo");
    if (blkc_load_source(c, "idx.blk", src, strlen(src)) != BLK_OK || blkc_build(c, "idx") != BLK_OK) {
        fail_msg(O, F_COMPILE, "blkc: %s", blkc_diagnostics(c));
        goto done;
    }
    if (o->facts && !check_facts(c, K, O)) goto done;
    const char *ptx = NULL;
    if (!o->cpu || o->ptx) {
        /* an eq1 variant for each launch key that holds one (the defaults are d16 + fallback) */
        for (int r = 0; r < K->nruns; r++) {
            char key[256];
            if (run_key(K, r, key, sizeof key) && blkc_add_variant(c, key) != BLK_OK) {
                fail_msg(O, F_COMPILE, "variant %s: %s", key, blkc_diagnostics(c));
                goto done;
            }
        }
        ptx = blkc_emit(c, "ptx");
        if (!ptx) {
            fail_msg(O, F_COMPILE, "PTX for %s: %s", arch, blkc_diagnostics(c));
            goto done;
        }
        parse_entries(ptx, &E);
        O->vector_accesses = count_substr(ptx, "ld.global.v") + count_substr(ptx, "st.global.v");
    }
    char err[1024];
    if (!diff_load_kernel(dev, o->cpu ? NULL : ptx, src, "idx", &mod, &k, err, sizeof err)) {
        fail_msg(O, F_COMPILE, "%s", err);
        goto done;
    }
    for (int r = 0; r < K->nruns && O->cls == F_NONE && !device_lost; r++) {
        unsigned char *ref[3] = {0};
        if (reference(c, K, D, r, ref, O)) {
            device_run(o, k, &E, K, D, r, 0, ref, O);
            if (r == 0 && !device_lost) device_run(o, k, &E, K, D, r, 1, ref, O);
        }
        for (int b = 0; b < 3; b++) free(ref[b]);
    }
done:
    if (mod) blkrt_module_unload(mod);
    blkc_free(c);
    free(src);
}

/* ------------------------------------------------------------------ reporting and shrinking */

static void print_args(const kspec *K, const kderived *D) {
    printf("  grid [%d, 1, 1]; x, y: %lld elements of %s, out: %lld; e in [%lld, %lld] (interval), OFF %lld\n",
           K->grid, (long long)D->span, elems[K->elem].name, (long long)D->total, (long long)D->lo,
           (long long)D->hi, (long long)D->off);
    for (int r = 0; r < K->nruns; r++) {
        printf("  run %d:", r);
        for (int a = 0; a < K->nargs; a++) printf(" a%d=%lld", a, (long long)K->argv[r][a]);
        if (K->mask & MK_N) printf(" n=%lld", (long long)K->n[r]);
        char key[256];
        run_key(K, r, key, sizeof key);
        printf("   (launch key %s%s)\n", key, r == 0 ? "; also with every pointer moved by one element" : "");
    }
}

static void print_kernel(const kspec *K, const kderived *D) {
    char *src = kernel_source(K, D);
    printf("%s", src ? src : "(out of memory)\n");
    free(src);
    print_args(K, D);
}

/* Nodes reachable from the root (the shrinker only edits those). */
static void reachable(const kspec *K, int i, bool *seen) {
    if (i < 0 || i >= K->nn || seen[i]) return;
    seen[i] = true;
    const node *n = &K->n_[i];
    if (n->kind == N_BIN) reachable(K, n->r, seen);
    if (n->kind == N_BIN || n->kind >= N_MULTIPLE_OF) reachable(K, n->l, seen);
}

/* Candidate edit number `which` of K (false when there is no such edit).
 * Ordered roughly from the biggest simplification to the smallest. */
static bool shrink_candidate(const kspec *K, int which, kspec *C) {
    *C = *K;
    bool seen[MAXN] = {0};
    reachable(K, K->root, seen);
    int w = which;
    /* 1. a node replaced by one of its children, or by a simpler leaf (in
     * this order; an inner node, an argument or another constant by any:
     * every step makes progress, so the loop ends) */
    static const int leaves[][2] = {{N_CONST, 0}, {N_CONST, 1}, {N_AR0, 0}, {N_AR1, 0}, {N_PID, 0}};
    for (int i = 0; i < K->nn; i++) {
        if (!seen[i]) continue;
        const node *n = &K->n_[i];
        bool inner = n->kind == N_BIN || n->kind >= N_MULTIPLE_OF;
        if (inner) {
            if (w-- == 0) { C->n_[i] = K->n_[n->l]; return true; }
            if (n->kind == N_BIN && w-- == 0) { C->n_[i] = K->n_[n->r]; return true; }
        }
        int rank = 5; /* of n among the leaves */
        for (int l = 0; l < 5; l++)
            if (n->kind == leaves[l][0] && (n->kind != N_CONST || n->c == leaves[l][1])) rank = l;
        for (int l = 0; l < rank; l++) {
            if (w-- == 0) {
                C->n_[i] = (node){.kind = (uint8_t)leaves[l][0], .c = leaves[l][1]};
                return true;
            }
        }
    }
    /* 2. mask terms, the wide types, the element type, the pointer form, the grid, the block */
    for (int bit = 1; bit <= MK_E; bit <<= 1)
        if ((K->mask & bit) && w-- == 0) { C->mask &= ~bit; return true; }
    for (int i = 0; i < K->nn; i++)
        if (seen[i] && K->n_[i].wide && w-- == 0) { C->n_[i].wide = false; return true; }
    for (int a = 0; a < K->nargs; a++)
        if (K->arg_wide[a] && w-- == 0) { C->arg_wide[a] = false; return true; }
    if (K->nargs > 0) { /* the last argument, if nothing uses it any more */
        bool used = false;
        for (int i = 0; i < K->nn; i++) used |= seen[i] && K->n_[i].kind == N_ARG && K->n_[i].arg == K->nargs - 1;
        if (!used && w-- == 0) { C->nargs--; return true; }
    }
    if (K->elem != 2 && w-- == 0) { C->elem = 2; return true; }
    if (K->ptr_form != 0 && w-- == 0) { C->ptr_form = 0; return true; }
    if (K->extra_off != 0 && w-- == 0) { C->extra_off = 0; return true; }
    if (K->grid > 1 && w-- == 0) { C->grid = 1; return true; }
    if (K->grid > 2 && w-- == 0) { C->grid = 2; return true; }
    if (K->rank == 1 && K->b0 > 16 && w-- == 0) { C->b0 /= 2; return true; }
    if (K->rank == 2 && K->b0 > 2 && w-- == 0) { C->b0 /= 2; return true; }
    if (K->rank == 2 && K->b1 > 16 && w-- == 0) { C->b1 /= 2; return true; }
    if (K->nruns > 1 && w-- == 0) { /* keep the failing run only if it is run 0's sets: try one run */
        C->nruns = 1;
        return true;
    }
    /* 3. constants towards 0 */
    for (int i = 0; i < K->nn; i++) {
        const node *n = &K->n_[i];
        if (!seen[i] || n->kind != N_CONST || n->c == 0 || n->c == 1) continue;
        if (w-- == 0) { C->n_[i].c = n->c / 2; return true; }
    }
    return false;
}

/* Greedy shrink: take the first candidate that still fails in the same
 * class, start over; stop when none does (or after `budget` runs). */
static void shrink(const options *o, kspec *K, kderived *D, outcome *O, double deadline) {
    int tries = 0, taken = 0;
    const int budget = 400;
    bool progress = true, late = false;
    while (progress && tries < budget && !device_lost && !late) {
        progress = false;
        for (int w = 0; tries < budget && !device_lost && !(late = deadline > 0 && now_s() > deadline); w++) {
            kspec C;
            kderived CD;
            if (!shrink_candidate(K, w, &C)) break;
            if (C.root < 0 || !prepare(&C, &CD)) continue;
            /* the mask's e-constant must stay inside the (new) range */
            if ((C.mask & MK_E) && (C.mask_e_c < CD.lo - 1 || C.mask_e_c > CD.hi + 1))
                C.mask_e_c = CD.lo + (CD.hi - CD.lo) / 2;
            outcome CO;
            tries++;
            run_kernel(o, &C, &CD, &CO);
            if (CO.cls == O->cls && CO.sub == O->sub) {
                *K = C, *D = CD, *O = CO;
                taken++;
                progress = true;
                break;
            }
        }
    }
    printf("  shrink: %d candidates run, %d taken%s\n", tries, taken,
           tries >= budget ? " (budget spent)" : late ? " (--max-seconds reached)" : "");
}

static void keep_kernel(const options *o, const kspec *K, const kderived *D, int index, const char *tag) {
    if (!o->keep) return;
    mkdir(o->keep, 0777);
    char path[4096];
    snprintf(path, sizeof path, "%s/idx_%llu_%d%s.blk", o->keep, (unsigned long long)o->seed, index, tag);
    FILE *f = fopen(path, "w");
    if (!f) return;
    char *src = kernel_source(K, D);
    fprintf(f, "// %s%s --seed %llu --only %d%s\n", tag[0] ? "shrunk from " : "", prog_name, (unsigned long long)o->seed,
            index, o->facts ? " --facts" : "");
    for (int r = 0; r < K->nruns; r++) {
        fprintf(f, "// run %d: grid %d", r, K->grid);
        for (int a = 0; a < K->nargs; a++) fprintf(f, " a%d=%lld", a, (long long)K->argv[r][a]);
        if (K->mask & MK_N) fprintf(f, " n=%lld", (long long)K->n[r]);
        fprintf(f, "\n");
    }
    fputs(src ? src : "", f);
    free(src);
    fclose(f);
}

/* ------------------------------------------------------------------ main */

static int open_device(const options *o) {
    return diff_open_device(o->cpu, o->ordinal, &dev, &dinfo);
}

static void usage(void) {
    fprintf(stderr, "usage: index_diff [--device N|cpu] [--seed S] [--count N] [--only K] [--keep DIR]\n"
                    "                  [--max-seconds T] [--ptx] [--facts] [--no-shrink] [--verbose] [--perturb]\n"
                    "                  [--dry-run]\n");
}

/* The carry bundle's gpu_check is one binary with this program in it (LLVM
 * linked statically is ~40 MB: two such binaries would not fit the 64 MiB
 * that travels to the GPU machine). tests/gpu/CMakeLists.txt builds it as
 * gpu_tools from gpu_check's files (gpu_check.c's main renamed gpu_check_main) and this file
 * with INDEX_DIFF_MULTICALL: `gpu_check index-diff ARGS` runs index_diff,
 * `gpu_check kernel-diff ARGS` kernel_diff (kernel_diff.c, built in with
 * the same definition), anything else is gpu_check unchanged. */
#ifdef INDEX_DIFF_MULTICALL
int gpu_check_main(int argc, char **argv);
int kernel_diff_main(int argc, char **argv, const char *prog); /* kernel_diff.c */
static int index_diff_main(int argc, char **argv);
int main(int argc, char **argv) {
    if (argc > 1 && !strcmp(argv[1], "index-diff")) {
        snprintf(prog_name, sizeof prog_name, "%s index-diff", argv[0]);
        return index_diff_main(argc - 1, argv + 1);
    }
    if (argc > 1 && !strcmp(argv[1], "kernel-diff")) {
        char prog[300];
        snprintf(prog, sizeof prog, "%s kernel-diff", argv[0]);
        return kernel_diff_main(argc - 1, argv + 1, prog);
    }
    return gpu_check_main(argc, argv);
}
#define main index_diff_main
static
#endif
int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    options o = {.count = 100, .only = -1, .shrink = true};
    bool seeded = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--device") && v) {
            if (!strcmp(v, "cpu")) o.cpu = true;
            else o.ordinal = atoi(v);
            i++;
        } else if (!strcmp(a, "--seed") && v) o.seed = strtoull(v, NULL, 0), seeded = true, i++;
        else if (!strcmp(a, "--count") && v) o.count = atoi(v), i++;
        else if (!strcmp(a, "--only") && v) o.only = atoi(v), i++;
        else if (!strcmp(a, "--keep") && v) o.keep = v, i++;
        else if (!strcmp(a, "--max-seconds") && v) o.max_seconds = atof(v), i++;
        else if (!strcmp(a, "--ptx")) o.ptx = true;
        else if (!strcmp(a, "--no-shrink")) o.shrink = false;
        else if (!strcmp(a, "--verbose")) o.verbose = true;
        else if (!strcmp(a, "--perturb")) o.perturb = true; /* self-test: every kernel must fail */
        else if (!strcmp(a, "--dry-run")) o.dry_run = true;
        else if (!strcmp(a, "--facts")) o.facts = true;
        else {
            usage();
            return 2;
        }
    }
    if (o.count < 1) o.count = 1;
    if (!seeded) {
        uint64_t s = (uint64_t)time(NULL) ^ ((uint64_t)clock() << 20);
        o.seed = splitmix(&s) % 1000000007ull;
    }
    int rc = open_device(&o);
    if (rc) return rc;
    const char *lib = getenv("BLKRT_CUDA_LIBRARY");
    if (!o.cpu && lib && *lib && fake_api_load(&fake) == 0) have_fake = true;
    if (have_fake && !o.dry_run) printf("note: the fake CUDA driver runs no kernels: every comparison will fail (use --dry-run)\n");
    blkrt_jit_install();
    const char *arch = o.cpu ? "cpu" : backend_arch(dinfo.arch);
    printf("index_diff: device %s (%s, compiling for %s), blkc %s\n", dinfo.name, dinfo.arch, arch ? arch : "?",
           blkc_version());
    printf("seed %llu (rerun: --seed %llu; one kernel: --seed %llu --only K)\n", (unsigned long long)o.seed,
           (unsigned long long)o.seed, (unsigned long long)o.seed);
    int first = o.only >= 0 ? o.only : 0, last = o.only >= 0 ? o.only + 1 : o.count;
    int passed = 0, failed = 0, vec_kernels = 0, launches[3] = {0};
    double t0 = now_s();
    for (int ki = first; ki < last; ki++) {
        if (o.max_seconds > 0 && now_s() - t0 > o.max_seconds) {
            printf("stopping after %d kernels: --max-seconds %.0f reached\n", ki - first, o.max_seconds);
            break;
        }
        if (device_lost) {
            printf("stopping: the device was lost (a kernel fault leaves the context unusable)\n");
            failed++;
            break;
        }
        kspec K;
        kderived D;
        generate(o.seed, ki, &K, &D);
        outcome O;
        run_kernel(&o, &K, &D, &O);
        vec_kernels += O.vector_accesses > 0;
        for (int e = 0; e < 3; e++) launches[e] += O.entries[e];
        if (o.verbose || (o.only >= 0 && O.cls == F_NONE)) {
            printf("---- kernel %d: %s\n", ki, fclass_name[O.cls]);
            print_kernel(&K, &D);
        }
        if (O.cls == F_NONE) {
            passed++;
        } else {
            failed++;
            printf("FAIL kernel %d (seed %llu): %s: %s\n", ki, (unsigned long long)o.seed, fclass_name[O.cls], O.msg);
            print_kernel(&K, &D);
            keep_kernel(&o, &K, &D, ki, "");
            /* a systematic bug fails many kernels: shrink the first few only */
            if (o.shrink && !device_lost && failed <= MAX_SHRINKS) {
                shrink(&o, &K, &D, &O, o.max_seconds > 0 ? t0 + o.max_seconds : 0);
                printf("MINIMAL kernel %d (seed %llu): %s: %s\n", ki, (unsigned long long)o.seed, fclass_name[O.cls],
                       O.msg);
                print_kernel(&K, &D);
                keep_kernel(&o, &K, &D, ki, "_min");
            }
            char devname[16];
            snprintf(devname, sizeof devname, o.cpu ? "cpu" : "%d", o.ordinal);
            printf("reproduce: %s --device %s --seed %llu --only %d%s\n", prog_name, devname, (unsigned long long)o.seed,
                   ki, o.facts ? " --facts" : "");
        }
        if ((ki - first + 1) % 500 == 0)
            printf("... %d kernels, %d failed, %.1f s\n", ki - first + 1, failed, now_s() - t0);
    }
    printf("%d kernels: %d passed, %d failed (seed %llu, %.1f s)", passed + failed, passed, failed,
           (unsigned long long)o.seed, now_s() - t0);
    if (!o.cpu) printf("; launches on d16 %d, eq1 %d, fallback %d entries", launches[0], launches[1], launches[2]);
    if (!o.cpu || o.ptx) printf("; %d kernels with vector accesses", vec_kernels);
    printf("\n");
    blkrt_device_close(dev);
    return failed ? 1 : 0;
}

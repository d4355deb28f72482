/* gpu_run.c — running a case (gpu_check.h): the device, compiling and
 * loading a row's module for one config, the case on the device (aligned
 * and moved pointers, poisoned and guarded buffers) and on the CPU
 * interpreter for the reference.
 */
#include "gpu_check.h"
#define RT_NO_ALLOC_REDIRECT /* this file's malloc and free are libc's */
#include "../../runtime/rt.h" /* rt_tmap_eval */

/* ------------------------------------------------------------------ devices */


blkrt_device *dev;
blkrt_device_info dinfo;
static fake_api fake;
bool have_fake;

/* Open device `o->ordinal` (or the CPU); 77 without a GPU, 1 on errors. */
int open_device(const options *o) {
    int rc = diff_open_device(o->cpu, o->ordinal, &dev, &dinfo);
    if (rc) return rc;
    const char *lib = getenv("BLKRT_CUDA_LIBRARY");
    if (!o->cpu && lib && *lib && fake_api_load(&fake) == 0) have_fake = true;
    return 0;
}

/* ------------------------------------------------------------------ one module */


/* Apply "NAME=V NAME=V" to a blkc context (and collect blkrt defines). */
static bool apply_config(const char *cfg, blkc_ctx *c, blkrt_define *defs, char names[][48], int *ndefs,
                         char *err, size_t errn) {
    *ndefs = 0;
    char buf[256];
    snprintf(buf, sizeof buf, "%s", cfg);
    for (char *s = strtok(buf, " "); s; s = strtok(NULL, " ")) {
        char *eq = strchr(s, '=');
        if (!eq || *ndefs >= 8) {
            snprintf(err, errn, "config '%s': %s", cfg, eq ? "more than 8 NAME=VALUE" : "expected NAME=VALUE");
            return false;
        }
        *eq = 0;
        if (blkc_define(c, s, eq + 1) != BLK_OK) {
            snprintf(err, errn, "config '%s': %s", cfg, blkc_diagnostics(c));
            return false;
        }
        blkrt_define *d = &defs[*ndefs];
        snprintf(names[*ndefs], 48, "%s", s);
        d->name = names[*ndefs];
        char *fe;
        long long iv = strtoll(eq + 1, &fe, 0);
        if (*fe == 0) d->is_float = 0, d->ival = iv;
        else if (!strcmp(eq + 1, "true") || !strcmp(eq + 1, "false")) d->is_float = 0, d->ival = eq[1] == 't';
        else d->is_float = 1, d->fval = strtod(eq + 1, NULL);
        (*ndefs)++;
    }
    return true;
}

/* Is every value of "NAME=V NAME=V" a number (what a blkrt_define holds)? */
bool numeric_config(const char *cfg) {
    for (const char *p = strchr(cfg, '='); p; p = strchr(p + 1, '=')) {
        char *end;
        strtod(p + 1, &end);
        if (end == p + 1 || (*end && *end != ' ')) return false;
    }
    return true;
}

void unload(module_t *M) {
    if (M->mod) blkrt_module_unload(M->mod);
    if (M->ref) blkc_free(M->ref);
    rt_meta_free(&M->rtm);
    memset(M, 0, sizeof *M);
}

/* libblkc makes the d16 and the fallback entry of a kernel by default; a
 * case with an integer argument equal to 1 would run the fallback. So for
 * every size this run uses, the launch key of each placement (aligned
 * pointers d16, moved ones nothing; integers eq1 when 1, d16 when a multiple
 * of 16; @do_not_specialize parameters nothing) that holds an eq1 becomes
 * one more variant: stride 1 then runs the vectorised eq1 entry, checked
 * against the interpreter like the others. Size errors are left to the run
 * to report. */
static bool add_eq1_variants(const options *o, const gk_kernel *K, blkc_ctx *c, char *err, size_t errn) {
    const char *front = blkc_emit(c, "meta-front");
    kmeta m;
    if (!front || !parse_meta(front, K->kernel, &m, err, errn)) return false;
    for (int si = 0; si < 10 && K->sizes[si] && !(o->quick && si >= QUICK_SIZES); si++) {
        env e = m.consts;
        int64_t run = 1;
        char ignored[256];
        case_t cs;
        if (!parse_assignments(&e, K->sizes[si], ignored, sizeof ignored) ||
            (K->require && (!eval_expr(&e, K->require, -1, &run, ignored, sizeof ignored) || !run)) ||
            !build_case(K, &m, &e, true, &cs, ignored, sizeof ignored))
            continue;
        for (int off = 0; off < 2; off++) {
            char spec[1024] = "";
            bool eq1 = false;
            for (int i = 0; i < cs.nargs; i++) {
                const dtype *t = find_dtype(m.ptype[i]);
                const char *code = NULL;
                if (m.nospec & (1ull << i)) continue;
                if (m.ptype[i][0] == '*') code = off ? NULL : "d16";
                else if (cs.a[i].role == A_INT && t && (t->kind == K_INT || t->kind == K_UINT))
                    code = cs.a[i].ival == 1 ? "eq1" : ((uint64_t)cs.a[i].ival & 15) == 0 ? "d16" : NULL;
                if (!code) continue;
                eq1 |= code[0] == 'e';
                size_t l = strlen(spec);
                snprintf(spec + l, sizeof spec - l, "%s%s=%s", l ? "," : "", m.pname[i], code);
            }
            if (eq1 && blkc_add_variant(c, spec) != BLK_OK) {
                snprintf(err, errn, "variant %s: %s", spec, blkc_diagnostics(c));
                free_case(&cs);
                return false;
            }
        }
        free_case(&cs);
    }
    return true;
}

bool load_module(const options *o, const gk_kernel *K, const char *cfg, module_t *M, char *err, size_t errn) {
    memset(M, 0, sizeof *M);
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", o->stdlib, K->file);
    blkrt_define defs[8];
    char names[8][48];
    int ndefs;
    double t0 = now_s();
    M->ref = blkc_new();
    blkc_set_stdlib_dir(M->ref, o->stdlib);
    const char *arch = o->cpu ? "sm_90a" : backend_arch(dinfo.arch);
    if (!arch) {
        snprintf(err, errn, "blk does not generate code for %s", dinfo.arch);
        return false;
    }
    if (blkc_set_arch(M->ref, arch) != BLK_OK || !apply_config(cfg, M->ref, defs, names, &ndefs, err, errn))
        return false;
    if (blkc_load_file(M->ref, path) != BLK_OK || blkc_build(M->ref, K->kernel) != BLK_OK) {
        snprintf(err, errn, "compiling %.1000s:\n%s", path, blkc_diagnostics(M->ref));
        return false;
    }
    if (o->cpu) {
        size_t len;
        char *src = test_read_file(path, &len);
        blkrt_source_options so = {.path = path, .defines = defs, .ndefines = ndefs, .kernel = K->kernel,
                                   .cache_dir = ""};
        double t1 = now_s();
        M->compile_ms = (t1 - t0) * 1e3;
        blkrt_status st = src ? blkrt_module_load_source(dev, src, len, &so, &M->mod) : BLKRT_ERR_IO;
        free(src);
        M->load_ms = (now_s() - t1) * 1e3;
        if (st) {
            snprintf(err, errn, "loading on the CPU device: %s", blkrt_last_error());
            return false;
        }
    } else {
        if (!add_eq1_variants(o, K, M->ref, err, errn)) return false;
        const char *ptx = blkc_emit(M->ref, "ptx");
        if (!ptx) {
            snprintf(err, errn, "PTX for %s:\n%s", arch, blkc_diagnostics(M->ref));
            return false;
        }
        if (!parse_meta(ptx, K->kernel, &M->meta, err, errn)) return false;
        if (rt_meta_parse(ptx, strlen(ptx), &M->rtm)) {
            snprintf(err, errn, "blk-meta: %s", blkrt_last_error());
            return false;
        }
        M->ptx_bytes = (int)strlen(ptx);
        if (o->save_ptx) {
            char fn[4400], tag[128];
            snprintf(tag, sizeof tag, "%s", cfg[0] ? cfg : "defaults");
            for (char *q = tag; *q; q++)
                if (!isalnum((unsigned char)*q) && *q != '=' && *q != '_') *q = '_';
            snprintf(fn, sizeof fn, "%.2000s/%s.%s.ptx", o->save_ptx, K->kernel, tag);
            FILE *f = fopen(fn, "w");
            if (f) fputs(ptx, f), fclose(f);
        }
        double t1 = now_s();
        M->compile_ms = (t1 - t0) * 1e3;
        blkrt_status st = blkrt_module_load_ptx(dev, ptx, strlen(ptx), &M->mod);
        M->load_ms = (now_s() - t1) * 1e3;
        if (st) {
            snprintf(err, errn, "loading the PTX: %s", blkrt_last_error());
            return false;
        }
    }
    if (blkrt_module_kernel(M->mod, K->kernel, &M->k)) {
        snprintf(err, errn, "%s", blkrt_last_error());
        return false;
    }
    if (o->cpu) { /* the CPU device's metadata, through the API */
        blkrt_kernel_info ki;
        blkrt_kernel_get_info(M->k, &ki);
        kmeta *m = &M->meta;
        memset(m, 0, sizeof *m);
        m->nparams = ki.num_params;
        for (int i = 0; i < ki.num_params && i < MAX_ARGS; i++) {
            const char *n, *t;
            blkrt_kernel_param(M->k, i, &n, &t);
            snprintf(m->pname[i], sizeof m->pname[i], "%s", n);
            snprintf(m->ptype[i], sizeof m->ptype[i], "%s", t);
        }
        m->nvariants = 1;
        snprintf(m->var[0].entry, sizeof m->var[0].entry, "%s (cpu)", K->kernel);
        for (int i = 0; i < MAX_ARGS; i++) snprintf(m->var[0].spec[i], sizeof m->var[0].spec[i], "-");
        for (int i = 0; i < ndefs; i++)
            env_set(&m->consts, defs[i].name, strlen(defs[i].name), defs[i].is_float ? 0 : defs[i].ival);
    }
    return true;
}

/* The consts of a kernel with their defaults, for the CPU device (which has
 * no backend meta): the PTX backend's meta when it can run, else the config. */
void cpu_consts(const options *o, const gk_kernel *K, const char *cfg, kmeta *m) {
    char path[4096], err[256];
    snprintf(path, sizeof path, "%s/%s", o->stdlib, K->file);
    blkc_ctx *c = blkc_new();
    blkrt_define defs[8];
    char names[8][48];
    int nd;
    if (apply_config(cfg, c, defs, names, &nd, err, sizeof err) && blkc_load_file(c, path) == BLK_OK &&
        blkc_build(c, K->kernel) == BLK_OK) {
        const char *meta = blkc_emit(c, "meta");
        kmeta km;
        if (meta && parse_meta(meta, K->kernel, &km, err, sizeof err)) m->consts = km.consts;
    }
    blkc_free(c);
}

/* ------------------------------------------------------------------ running a case */

/* Whether entry's tensor maps (tmaps=) can be encoded for these arguments,
 * by the runtime's own rule (rt_tmap_eval): where they cannot (a dim or
 * stride sum out of range, say), the runtime launches the next variant. */
static bool tmaps_fit(const rt_meta *r, const char *entry, const blkrt_arg *args) {
    for (int k = 0; k < r->nkernels; k++)
        for (int v = 0; v < r->kernels[k].nvariants; v++) {
            const rt_meta_variant *mv = &r->kernels[k].variants[v];
            if (strcmp(mv->entry, entry)) continue;
            for (int i = 0; i < mv->ntmaps; i++) {
                rt_tmap_args ta;
                if (rt_tmap_eval(&mv->tmaps[i], args, &ta) != RT_TMAP_FITS) return false;
            }
        }
    return true;
}

/* Which entry the runtime picks for these arguments (its rule, docs/runtime.md). */
static int predict_variant(const module_t *M, const case_t *c, const blkrt_arg *args) {
    const kmeta *m = &M->meta;
    for (int v = 0; v < m->nvariants; v++) {
        bool ok = tmaps_fit(&M->rtm, m->var[v].entry, args);
        for (int i = 0; i < c->nargs && ok; i++) {
            const char *s = m->var[v].spec[i];
            if (!strcmp(s, "d16"))
                ok = args[i].kind == BLKRT_ARG_PTR ? args[i].v.ptr % 16 == 0
                                                     : args[i].kind == BLKRT_ARG_INT && args[i].v.i % 16 == 0;
            else if (!strcmp(s, "eq1")) ok = args[i].kind == BLKRT_ARG_INT && args[i].v.i == 1;
        }
        if (ok) return v;
    }
    return -1;
}


bool device_lost;

/* One placement (offset 0: aligned; 1: every pointer moved by one element). */
void run_gpu(const options *o, module_t *M, case_t *c, int offset, gk_tol tol, result *R) {
    blkrt_ptr base[MAX_ARGS] = {0};
    unsigned char *image[MAX_ARGS] = {0};
    size_t total[MAX_ARGS] = {0}, start[MAX_ARGS] = {0};
    blkrt_arg args[MAX_ARGS];
    R->ok = false;
    R->entry = "?";
    blkrt_status st = BLKRT_OK;
    const char *what = "";
    for (int i = 0; i < c->nargs && !st; i++) {
        arg *a = &c->a[i];
        if (a->role == A_INT) args[i] = BLKRT_INT(a->ival);
        else if (a->role == A_FLOAT) args[i] = BLKRT_FLOAT(a->fval);
        else {
            start[i] = GUARD + (size_t)(offset * a->t->size);
            total[i] = start[i] + a->bytes + GUARD;
            image[i] = malloc(total[i]);
            memset(image[i], 0xFF, total[i]);
            if (a->role != A_OUT) memcpy(image[i] + start[i], a->host, a->bytes);
            else memset(image[i] + start[i], 0xFF, a->bytes);
            /* outputs: the reference result lives in a->host; the GPU starts from poison */
            what = "blkrt_malloc";
            st = blkrt_malloc(dev, total[i], &base[i]);
            if (!st) what = "blkrt_memcpy_htod", st = blkrt_memcpy_htod(dev, base[i], image[i], total[i]);
            args[i] = BLKRT_PTR(base[i] + start[i]);
        }
    }
    /* zero-role buffers start at 0: their host copy holds the reference result */
    for (int i = 0; i < c->nargs && !st; i++)
        if (c->a[i].role == A_ZERO) {
            memset(image[i] + start[i], 0, c->a[i].bytes);
            st = blkrt_memcpy_htod(dev, base[i], image[i], total[i]);
        }
    int v = predict_variant(M, c, args);
    R->entry = v >= 0 ? M->meta.var[v].entry : "(none accepts)";
    int launches_before = have_fake ? fake.launch_count() : 0;
    if (!st) what = "blkrt_launch", st = blkrt_launch(M->k, c->grid, args, c->nargs, NULL);
    if (!st) what = "blkrt_device_synchronize", st = blkrt_device_synchronize(dev);
    if (st) {
        snprintf(R->msg, sizeof R->msg, "%s: %s: %s", what, blkrt_status_name(st), blkrt_last_error());
        if (st == BLKRT_ERR_LAUNCH_FAILED || st == BLKRT_ERR_DRIVER) device_lost = !o->cpu;
        goto done;
    }
    if (have_fake) {
        fake_launch l;
        if (fake.launch_count() != launches_before + 1 || fake.get_launch(fake.launch_count() - 1, &l)) {
            snprintf(R->msg, sizeof R->msg, "the driver recorded no launch");
            goto done;
        }
        if (strcmp(l.entry, R->entry)) {
            snprintf(R->msg, sizeof R->msg, "the runtime launched entry %s, expected %s", l.entry, R->entry);
            goto done;
        }
    }
    long bad = 0;
    cmp_stats all = {0};
    for (int i = 0; i < c->nargs; i++) {
        arg *a = &c->a[i];
        if (a->role == A_INT || a->role == A_FLOAT) continue;
        unsigned char *back = malloc(total[i]);
        st = blkrt_memcpy_dtoh(dev, back, base[i], total[i]);
        if (st) {
            snprintf(R->msg, sizeof R->msg, "blkrt_memcpy_dtoh: %s", blkrt_last_error());
            free(back);
            goto done;
        }
        if (o->perturb && a->role != A_IN && a->count > 0) back[start[i] + (size_t)a->t->size - 1] ^= 0x40;
        if (a->role == A_IN) { /* untouched, guards included */
            if (memcmp(back, image[i], total[i])) {
                size_t k = 0;
                while (back[k] == image[i][k]) k++;
                if (!bad++)
                    snprintf(R->msg, sizeof R->msg, "input '%s' was modified (byte %lld)", a->name,
                             (long long)k - (long long)start[i]);
            }
        } else {
            size_t k = 0;
            for (; k < total[i]; k++)
                if ((k < start[i] || k >= start[i] + a->bytes) && back[k] != 0xFF) break;
            if (k < total[i] && !bad++)
                snprintf(R->msg, sizeof R->msg, "'%s': write outside the buffer (byte %lld)", a->name,
                         (long long)k - (long long)start[i]);
            if (!o->dry_run) {
                cmp_stats s = {0};
                compare(a, back + start[i], tol, a->role == A_OUT, &s);
                if (s.max_ulp > all.max_ulp) all.max_ulp = s.max_ulp;
                if (s.max_rel > all.max_rel) all.max_rel = s.max_rel;
                if (s.bad && !bad++) {
                    snprintf(R->msg, sizeof R->msg, "%ld of %lld wrong (%ld unwritten, %ld stray, %ld NaN); first %s",
                             s.bad, (long long)a->count, s.unwritten, s.stray, s.nan, s.first);
                }
            }
        }
        free(back);
    }
    R->max_ulp = all.max_ulp;
    R->max_rel = all.max_rel;
    R->ok = bad == 0;
done:
    for (int i = 0; i < c->nargs; i++) {
        if (base[i] && !device_lost) blkrt_free(dev, base[i]);
        free(image[i]);
    }
}

/* The reference: the interpreter on host buffers of exactly the data's size. */
bool run_reference(module_t *M, const gk_kernel *K, case_t *c, char *err, size_t errn, double *ms) {
    blk_arg args[MAX_ARGS];
    for (int i = 0; i < c->nargs; i++) {
        arg *a = &c->a[i];
        if (a->role == A_INT) args[i] = BLK_INT(a->ival);
        else if (a->role == A_FLOAT) args[i] = BLK_FLOAT(a->fval);
        else args[i] = BLK_PTR(a->host, a->bytes);
    }
    /* inputs must survive: keep a copy */
    unsigned char *keep[MAX_ARGS] = {0};
    for (int i = 0; i < c->nargs; i++)
        if (c->a[i].role == A_IN) keep[i] = malloc(c->a[i].bytes + 1), memcpy(keep[i], c->a[i].host, c->a[i].bytes);
    unsigned grid[3] = {c->grid[0], c->grid[1], c->grid[2]};
    size_t before = strlen(blkc_diagnostics(M->ref));
    double t0 = now_s();
    blk_status s = blkc_interp_run(M->ref, K->kernel, grid, args, c->nargs, NULL);
    *ms = (now_s() - t0) * 1e3;
    bool ok = s == BLK_OK;
    if (!ok) snprintf(err, errn, "the interpreter failed: %s", blkc_diagnostics(M->ref) + before);
    for (int i = 0; i < c->nargs && ok; i++) {
        arg *a = &c->a[i];
        if (keep[i] && memcmp(keep[i], a->host, a->bytes)) {
            snprintf(err, errn, "the interpreter modified input '%s'", a->name);
            ok = false;
        }
        if (a->role == A_OUT && a->count > 0) {
            long w = 0;
            for (int64_t k = 0; k < a->count; k++) w += !is_poison(a->host + (size_t)k * (size_t)a->t->size, a->t->size);
            if (w == 0) {
                snprintf(err, errn, "the reference wrote nothing into '%s' (table row wrong?)", a->name);
                ok = false;
            }
        }
    }
    for (int i = 0; i < c->nargs; i++) free(keep[i]);
    return ok;
}

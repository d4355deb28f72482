/* autotune.c — the runtime autotuner (blkrt.h, "the autotuner").
 *
 * A tuner holds one module per @autotune config, loaded from the source with
 * the config's values as defines (so each is an ordinary kernel from source:
 * compiled lazily per variant on a GPU, interpreted on the CPU device). The
 * configs come from the compiler hook's `autotune` function as
 * "// blk-autotune v1" lines (compiler/autotune.c).
 *
 * The first launch of a tuning key times every config on the launch's own
 * arguments: a warm-up launch (it compiles), then `reps` timed launches, the
 * fastest counting; GPU time with events on the launch's stream, CPU time
 * with the clock (the CPU device runs a launch when it is issued). Pointer
 * arguments named in restore_bytes are saved first and restored before each
 * run and before the real launch, which then uses the fastest config.
 *
 * Persistence: "autotune-<hash>.txt" in the cache directory, the hash of the
 * device model (name and arch, so sm), driver, compiler version, source,
 * kernel and defines: tuners of two GPUs of one model share a file and each
 * other's choices, GPUs of two models never do.
 *   blk-autotune-file v1 configs=N
 *   KEY<TAB>INDEX<TAB>CONFIG-TEXT
 * An entry counts only if its config text is still config INDEX's; a file
 * with any line that does not parse is ignored as a whole and rewritten at
 * the next choice (written to a temporary file, then renamed).
 */
#define _GNU_SOURCE /* mkstemp */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cache.h"
#include "rt.h"

#define AT_MAGIC 0x41545531u /* "ATU1" */
#define AT_MAX_CONFIGS 256
#define AT_MAX_DEFINES 64

typedef struct {
    char *text;                 /* "BLOCK=64,num_warps=2" ("" for the source's own values) */
    blkrt_define defs[AT_MAX_DEFINES];
    char *names[AT_MAX_DEFINES];
    int ndefs;
    blkrt_module *m;
    blkrt_kernel *k;
} at_config;

typedef struct {
    char *key;
    int config;
} at_choice;

struct blkrt_autotuner {
    uint32_t magic;
    blkrt_device *d;
    at_config *cfg;
    int ncfg;
    int key_params[64];         /* parameter indices of the key */
    int nkey;
    at_choice *choices;
    int nchoices;
    char path[4200];            /* the tuning file; "" = in memory only */
    pthread_mutex_t lock;
};

static char *dup_str(const char *s) {
    size_t n = strlen(s);
    char *r = malloc(n + 1);
    if (r) memcpy(r, s, n + 1);
    return r;
}

static bool verbose(void) {
    const char *v = getenv("BLK_AUTOTUNE_VERBOSE");
    return v && *v && strcmp(v, "0") != 0;
}

/* "BLOCK:64,num_warps:2" -> c->text "BLOCK=64,num_warps=2" and defines. */
static bool parse_config(const char *s, size_t len, at_config *c) {
    c->text = malloc(len + 1);
    if (!c->text) return false;
    memcpy(c->text, s, len);
    c->text[len] = 0;
    for (char *p = c->text; *p; p++)
        if (*p == ':') *p = '=';
    for (const char *p = c->text; *p;) {
        size_t n = strcspn(p, ",");
        const char *eq = memchr(p, '=', n);
        if (!eq || c->ndefs == AT_MAX_DEFINES) return false;
        char value[64];
        size_t vn = n - (size_t)(eq + 1 - p);
        if (vn == 0 || vn >= sizeof value) return false;
        memcpy(value, eq + 1, vn);
        value[vn] = 0;
        blkrt_define *d = &c->defs[c->ndefs];
        if (!(c->names[c->ndefs] = malloc((size_t)(eq - p) + 1))) return false;
        memcpy(c->names[c->ndefs], p, (size_t)(eq - p));
        c->names[c->ndefs][eq - p] = 0;
        d->name = c->names[c->ndefs];
        char *end;
        if (strcmp(value, "true") == 0 || strcmp(value, "false") == 0) {
            d->ival = value[0] == 't';
        } else if (strpbrk(value, ".eEn")) {
            d->is_float = 1;
            d->fval = strtod(value, &end);
            if (*end) return false;
        } else {
            d->ival = strtoll(value, &end, 10);
            if (*end) return false;
        }
        c->ndefs++;
        p += n + (p[n] == ',');
    }
    return true;
}

/* The configs and key of `kernel` from the compiler's autotune lines; no
 * line: one config of the source's own values. */
static blkrt_status read_configs(blkrt_autotuner *t, const char *text, const char *kernel, char *key, size_t keycap) {
    char want[300];
    snprintf(want, sizeof want, "// blk-autotune v1 kernel=%s ", kernel);
    const char *line = text ? strstr(text, want) : NULL;
    key[0] = 0;
    if (!line) {
        t->cfg = calloc(1, sizeof *t->cfg);
        if (!t->cfg || !(t->cfg[0].text = dup_str(""))) return rt_err(BLKRT_ERR_OUT_OF_MEMORY, "out of memory");
        t->ncfg = 1;
        return BLKRT_OK;
    }
    line += strlen(want);
    size_t len = strcspn(line, "\n");
    const char *k = strstr(line, "key="), *c = strstr(line, " configs=");
    if (!k || !c || k > c || c > line + len) return rt_err(BLKRT_ERR_META, "autotune: malformed line for kernel '%s'", kernel);
    size_t kl = (size_t)(c - (k + 4));
    if (kl >= keycap) return rt_err(BLKRT_ERR_META, "autotune: key of kernel '%s' too long", kernel);
    memcpy(key, k + 4, kl);
    key[kl] = 0;
    const char *p = c + 9, *end = line + len;
    int n = 1;
    for (const char *q = p; q < end; q++) n += *q == ';';
    if (n > AT_MAX_CONFIGS) return rt_err(BLKRT_ERR_META, "autotune: kernel '%s' has more than %d configs", kernel, AT_MAX_CONFIGS);
    if (!(t->cfg = calloc((size_t)n, sizeof *t->cfg))) return rt_err(BLKRT_ERR_OUT_OF_MEMORY, "out of memory");
    for (; p <= end && t->ncfg < n; t->ncfg++) {
        size_t cl = strcspn(p, ";\n");
        if (p + cl > end) cl = (size_t)(end - p);
        if (!parse_config(p, cl, &t->cfg[t->ncfg]))
            return rt_err(BLKRT_ERR_META, "autotune: malformed config %d of kernel '%s'", t->ncfg + 1, kernel);
        p += cl + 1;
    }
    return BLKRT_OK;
}

/* ---- the tuning file ---- */

static void file_path(blkrt_autotuner *t, const char *source, size_t len, const blkrt_source_options *o,
                      const char *kernel, const char *compiler_version) {
    char dir[4096];
    t->path[0] = 0;
    if (!rt_cache_dir(o ? o->cache_dir : NULL, dir, sizeof dir)) return;
    rt_sha256 h;
    char num[64];
    rt_sha256_init(&h);
    /* each part NUL-terminated, so that no two part lists hash alike */
    rt_sha256_update(&h, "blk-autotune-file v1", 21);
    rt_sha256_update(&h, t->d->info.name, strlen(t->d->info.name) + 1);
    snprintf(num, sizeof num, "%d %s", t->d->info.driver_version, t->d->info.arch);
    rt_sha256_update(&h, num, strlen(num) + 1);
    rt_sha256_update(&h, compiler_version, strlen(compiler_version) + 1);
    rt_sha256_update(&h, source, len);
    rt_sha256_update(&h, "", 1);
    rt_sha256_update(&h, kernel, strlen(kernel) + 1);
    for (int i = 0; o && i < o->ndefines; i++) {
        const blkrt_define *d = &o->defines[i];
        snprintf(num, sizeof num, "=%d %lld %.17g", d->is_float, (long long)d->ival, d->fval);
        rt_sha256_update(&h, d->name, strlen(d->name));
        rt_sha256_update(&h, num, strlen(num) + 1);
    }
    unsigned char digest[32];
    char hex[65];
    rt_sha256_final(&h, digest);
    rt_sha256_digest_hex(digest, hex);
    snprintf(t->path, sizeof t->path, "%s/autotune-%.32s.txt", dir, hex);
}

static bool add_choice(blkrt_autotuner *t, const char *key, int config) {
    at_choice *v = realloc(t->choices, sizeof *v * (size_t)(t->nchoices + 1));
    if (!v) return false;
    t->choices = v;
    if (!(v[t->nchoices].key = dup_str(key))) return false;
    v[t->nchoices++].config = config;
    return true;
}

static void drop_choices(blkrt_autotuner *t) {
    for (int i = 0; i < t->nchoices; i++) free(t->choices[i].key);
    t->nchoices = 0;
}

/* Add the file's choices for keys t has not chosen: all or nothing (a line
 * that does not fit: none). Read at create, before tuning a new key and
 * before saving, because a tuner of another GPU of the same model (in this
 * process or another: torchrun starts one per GPU) shares the file. */
static void merge_file(blkrt_autotuner *t) {
    FILE *f = t->path[0] ? fopen(t->path, "r") : NULL;
    if (!f) return;
    char line[8192], head[64];
    snprintf(head, sizeof head, "blk-autotune-file v1 configs=%d\n", t->ncfg);
    int had = t->nchoices;
    bool ok = fgets(line, sizeof line, f) && strcmp(line, head) == 0;
    while (ok && fgets(line, sizeof line, f)) {
        char *tab1 = strchr(line, '\t'), *tab2 = tab1 ? strchr(tab1 + 1, '\t') : NULL, *nl = strchr(line, '\n');
        char *end;
        if (!tab1 || !tab2 || !nl) { ok = false; break; }
        *tab1 = *tab2 = *nl = 0;
        long idx = strtol(tab1 + 1, &end, 10);
        ok = *end == 0 && end != tab1 + 1 && idx >= 0 && idx < t->ncfg && strcmp(tab2 + 1, t->cfg[idx].text) == 0;
        bool known = false;
        for (int i = 0; ok && i < had && !known; i++) known = strcmp(t->choices[i].key, line) == 0;
        if (ok && !known) ok = add_choice(t, line, (int)idx);
    }
    fclose(f);
    if (!ok) {
        while (t->nchoices > had) free(t->choices[--t->nchoices].key);
        if (verbose()) fprintf(stderr, "blk autotune: %s does not parse: ignored (rewritten at the next choice)\n", t->path);
    }
}

/* The file's choices and t's (t's win). Two tuners saving at once may drop
 * each other's newest entry: that costs a later tuning, never a wrong choice
 * (each entry is checked against its config text when read). */
static void save_file(blkrt_autotuner *t) {
    if (!t->path[0]) return;
    merge_file(t);
    char tmp[4300];
    snprintf(tmp, sizeof tmp, "%s.XXXXXX", t->path);
    int fd = mkstemp(tmp);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!f) {
        if (fd >= 0) close(fd), unlink(tmp);
        return; /* the choice stays in memory: a cache that cannot be written is not an error */
    }
    fprintf(f, "blk-autotune-file v1 configs=%d\n", t->ncfg);
    for (int i = 0; i < t->nchoices; i++)
        fprintf(f, "%s\t%d\t%s\n", t->choices[i].key, t->choices[i].config, t->cfg[t->choices[i].config].text);
    if (fclose(f) != 0 || rename(tmp, t->path) != 0) unlink(tmp);
}

/* ---- create / destroy ---- */

static void free_tuner(blkrt_autotuner *t) {
    for (int i = 0; i < t->ncfg; i++) {
        if (t->cfg[i].m) blkrt_module_unload(t->cfg[i].m);
        free(t->cfg[i].text);
        for (int j = 0; j < t->cfg[i].ndefs; j++) free(t->cfg[i].names[j]);
    }
    free(t->cfg);
    drop_choices(t);
    free(t->choices);
    pthread_mutex_destroy(&t->lock);
    t->magic = 0;
    free(t);
}

blkrt_status blkrt_autotuner_create(blkrt_device *d, const char *source, size_t len, const blkrt_source_options *opts,
                                    const char *kernel, blkrt_autotuner **out) {
    blkrt_status st = rt_check_device(d, "blkrt_autotuner_create");
    if (st) return st;
    if (!out || !source || !kernel) return rt_err(BLKRT_ERR_INVALID_VALUE, "blkrt_autotuner_create: NULL argument");
    *out = NULL;
    const blkrt_compiler *c = rt_compiler();
    if (!c) return rt_err(BLKRT_ERR_NO_COMPILER, "blkrt_autotuner_create: no compiler registered (link libblk)");
    int nuser = opts ? opts->ndefines : 0;
    if (nuser < 0 || nuser > AT_MAX_DEFINES)
        return rt_err(BLKRT_ERR_INVALID_VALUE, "blkrt_autotuner_create: %d defines", nuser);
    blkrt_autotuner *t = calloc(1, sizeof *t);
    if (!t) return rt_err(BLKRT_ERR_OUT_OF_MEMORY, "out of memory");
    t->magic = AT_MAGIC;
    t->d = d;
    pthread_mutex_init(&t->lock, NULL);

    /* the configs, from the compiler's front end */
    blkrt_compile_request req = {source, len, opts && opts->path ? opts->path : "<source>",
                                 nuser ? opts->defines : NULL, nuser, kernel, "cpu", NULL};
    blkrt_compile_result res = {0};
    char key[1024];
    if (c->autotune) {
        st = c->autotune(&req, &res);
        if (st) rt_err(st, "%s", res.log ? res.log : "autotune: the compiler failed");
    }
    if (!st) st = read_configs(t, res.text, kernel, key, sizeof key);
    rt_free_result(&res);

    /* one module per config: the user's defines, then the config's (which win) */
    for (int i = 0; !st && i < t->ncfg; i++) {
        at_config *cf = &t->cfg[i];
        blkrt_define defs[2 * AT_MAX_DEFINES];
        int n = 0;
        for (int j = 0; j < nuser; j++) {
            bool over = false;
            for (int k = 0; k < cf->ndefs && !over; k++) over = strcmp(cf->defs[k].name, opts->defines[j].name) == 0;
            if (!over) defs[n++] = opts->defines[j];
        }
        for (int k = 0; k < cf->ndefs; k++) defs[n++] = cf->defs[k];
        blkrt_source_options o = {opts ? opts->path : NULL, defs, n, kernel, opts ? opts->cache_dir : NULL};
        st = blkrt_module_load_source(d, source, len, &o, &cf->m);
        if (!st) st = blkrt_module_kernel(cf->m, kernel, &cf->k);
    }

    /* the key's parameter indices */
    for (const char *p = key; !st && *p;) {
        size_t n = strcspn(p, ",");
        int found = -1;
        blkrt_kernel_info info;
        st = blkrt_kernel_get_info(t->cfg[0].k, &info);
        for (int i = 0; !st && i < info.num_params && found < 0; i++) {
            const char *name;
            if (blkrt_kernel_param(t->cfg[0].k, i, &name, NULL) == BLKRT_OK && strlen(name) == n &&
                strncmp(name, p, n) == 0)
                found = i;
        }
        if (!st && (found < 0 || t->nkey == 64))
            st = rt_err(BLKRT_ERR_META, "autotune: key '%.*s' is not a parameter of kernel '%s'", (int)n, p, kernel);
        if (!st) t->key_params[t->nkey++] = found;
        p += n + (p[n] == ',');
    }
    if (st) {
        char msg[2048];
        snprintf(msg, sizeof msg, "%s", blkrt_last_error());
        free_tuner(t);
        return rt_err(st, "%s", msg);
    }
    file_path(t, source, len, opts, kernel, c->version);
    merge_file(t);
    atomic_fetch_add(&d->children, 1);
    *out = t;
    return BLKRT_OK;
}

static blkrt_status check_tuner(blkrt_autotuner *t, const char *fn) {
    if (!t || t->magic != AT_MAGIC) return rt_err(BLKRT_ERR_INVALID_HANDLE, "%s: not an autotuner handle", fn);
    return BLKRT_OK;
}

blkrt_status blkrt_autotuner_destroy(blkrt_autotuner *t) {
    blkrt_status st = check_tuner(t, "blkrt_autotuner_destroy");
    if (st) return st;
    blkrt_device *d = t->d;
    free_tuner(t);
    atomic_fetch_sub(&d->children, 1);
    return BLKRT_OK;
}

blkrt_status blkrt_autotuner_num_configs(blkrt_autotuner *t, int *n) {
    blkrt_status st = check_tuner(t, "blkrt_autotuner_num_configs");
    if (st) return st;
    if (n) *n = t->ncfg;
    return BLKRT_OK;
}

blkrt_status blkrt_autotuner_config(blkrt_autotuner *t, int i, const char **text, blkrt_kernel **k) {
    blkrt_status st = check_tuner(t, "blkrt_autotuner_config");
    if (st) return st;
    if (i < 0 || i >= t->ncfg) return rt_err(BLKRT_ERR_NOT_FOUND, "the autotuner has %d configs, no config %d", t->ncfg, i);
    if (text) *text = t->cfg[i].text;
    if (k) *k = t->cfg[i].k;
    return BLKRT_OK;
}

/* ---- launching ---- */

/* The tuning key of these arguments: key parameter values, then for every
 * pointer and integer argument d16 / eq1 / - (what picks a variant). */
static void make_key(blkrt_autotuner *t, const blkrt_arg *args, int nargs, char *buf, size_t n) {
    size_t at = 0;
    for (int i = 0; i < t->nkey && at < n; i++) {
        int p = t->key_params[i];
        const blkrt_arg *a = p < nargs ? &args[p] : NULL;
        if (!a) at += (size_t)snprintf(buf + at, n - at, "%s?", i ? "," : "");
        else if (a->kind == BLKRT_ARG_FLOAT) at += (size_t)snprintf(buf + at, n - at, "%s%.17g", i ? "," : "", a->v.f);
        else at += (size_t)snprintf(buf + at, n - at, "%s%lld", i ? "," : "", (long long)a->v.i);
    }
    if (at < n) at += (size_t)snprintf(buf + at, n - at, "|");
    for (int i = 0; i < nargs && at < n; i++) {
        const blkrt_arg *a = &args[i];
        const char *code = a->kind == BLKRT_ARG_FLOAT ? "f"
                           : a->v.i % 16 == 0         ? "d16"
                           : a->kind == BLKRT_ARG_INT && a->v.i == 1 ? "eq1"
                                                                    : "-";
        at += (size_t)snprintf(buf + at, n - at, "%s%s", i ? "," : "", code);
    }
}

typedef struct {
    void *copy;         /* GPU: a blkrt_ptr in a uint64_t; CPU: host memory */
    blkrt_ptr devcopy;
    size_t bytes;
} at_saved;

static blkrt_status save_args(blkrt_autotuner *t, const blkrt_arg *args, int nargs, const blkrt_autotune_options *o,
                              at_saved *saved, blkrt_stream *s) {
    for (int i = 0; i < nargs; i++) {
        size_t b = o && o->restore_bytes ? o->restore_bytes[i] : 0;
        if (!b || args[i].kind != BLKRT_ARG_PTR || !args[i].v.ptr) continue;
        saved[i].bytes = b;
        if (t->d->ops->host_memory) { /* the pointer may be a host array, not an allocation */
            if (!(saved[i].copy = malloc(b))) return rt_err(BLKRT_ERR_OUT_OF_MEMORY, "autotune: saving %zu bytes", b);
            memcpy(saved[i].copy, (void *)(uintptr_t)args[i].v.ptr, b);
        } else {
            blkrt_status st = blkrt_malloc(t->d, b, &saved[i].devcopy);
            if (!st) st = blkrt_memcpy_dtod_async(t->d, saved[i].devcopy, args[i].v.ptr, b, s);
            if (st) return st;
        }
    }
    return BLKRT_OK;
}

static blkrt_status restore_args(blkrt_autotuner *t, const blkrt_arg *args, int nargs, at_saved *saved,
                                 blkrt_stream *s) {
    for (int i = 0; i < nargs; i++) {
        if (!saved[i].bytes) continue;
        if (t->d->ops->host_memory) {
            memcpy((void *)(uintptr_t)args[i].v.ptr, saved[i].copy, saved[i].bytes);
        } else {
            blkrt_status st = blkrt_memcpy_dtod_async(t->d, args[i].v.ptr, saved[i].devcopy, saved[i].bytes, s);
            if (st) return st;
        }
    }
    return BLKRT_OK;
}

static void free_saved(blkrt_autotuner *t, at_saved *saved, int nargs) {
    for (int i = 0; i < nargs; i++) {
        free(saved[i].copy);
        if (saved[i].devcopy) blkrt_free(t->d, saved[i].devcopy);
    }
}

static blkrt_status launch_config(blkrt_autotuner *t, int i, blkrt_grid_fn grid, void *user, const blkrt_arg *args,
                                  int nargs, blkrt_stream *s) {
    uint32_t g[3] = {1, 1, 1};
    if (grid) grid(t->cfg[i].k, args, nargs, g, user);
    return blkrt_launch(t->cfg[i].k, g, args, nargs, s);
}

/* The fastest of `reps` runs of config i (after a warm-up run) in *ms. */
static blkrt_status time_config(blkrt_autotuner *t, int i, blkrt_grid_fn grid, void *user, const blkrt_arg *args,
                                int nargs, const blkrt_autotune_options *o, at_saved *saved, blkrt_stream *s,
                                double *ms) {
    int reps = o && o->reps > 0 ? o->reps : 3;
    bool gpu = !t->d->ops->host_memory; /* device-side timing; the host clock where work runs as it is issued */
    blkrt_event *e0 = NULL, *e1 = NULL;
    blkrt_status st = gpu ? blkrt_event_create(t->d, &e0) : BLKRT_OK;
    if (!st && gpu) st = blkrt_event_create(t->d, &e1);
    *ms = INFINITY;
    for (int r = -1; !st && r < reps; r++) { /* r = -1: the warm-up (compiles) */
        st = restore_args(t, args, nargs, saved, s);
        if (st) break;
        if (o && o->pre_hook) o->pre_hook(o->hook_user);
        double t0 = rt_now_ms();
        if (gpu) st = blkrt_event_record(e0, s);
        if (!st) st = launch_config(t, i, grid, user, args, nargs, s);
        if (!st && gpu) st = blkrt_event_record(e1, s);
        if (!st && gpu) st = blkrt_event_synchronize(e1);
        double t1 = rt_now_ms();
        if (o && o->post_hook) o->post_hook(o->hook_user);
        if (st || r < 0) continue;
        float gms = 0;
        if (gpu && (st = blkrt_event_elapsed_ms(e0, e1, &gms))) break;
        double v = gpu ? (double)gms : t1 - t0;
        if (v < *ms) *ms = v;
    }
    if (e0) blkrt_event_destroy(e0);
    if (e1) blkrt_event_destroy(e1);
    return st;
}

/* Time every config for this key; the index of the fastest, or -1 with the
 * first failure's status in *first. */
static int tune(blkrt_autotuner *t, const char *key, blkrt_grid_fn grid, void *user, const blkrt_arg *args, int nargs,
                const blkrt_autotune_options *o, at_saved *saved, blkrt_stream *s, blkrt_status *first, char *msg,
                size_t msgcap) {
    bool talk = verbose(), tty = talk && isatty(2);
    int best = -1;
    double best_ms = INFINITY;
    *first = BLKRT_OK;
    for (int i = 0; i < t->ncfg; i++) {
        if (tty) fprintf(stderr, "\rblk autotune: config %d/%d ", i + 1, t->ncfg);
        double ms;
        blkrt_status st = time_config(t, i, grid, user, args, nargs, o, saved, s, &ms);
        if (st) {
            if (!*first) *first = st, snprintf(msg, msgcap, "%s", blkrt_last_error());
            if (talk) fprintf(stderr, "%sblk autotune: key %s config %d {%s}: failed: %s\n", tty ? "\r" : "", key, i,
                              t->cfg[i].text, blkrt_last_error());
            continue;
        }
        if (talk) fprintf(stderr, "%sblk autotune: key %s config %d {%s}: %.4f ms\n", tty ? "\r" : "", key, i,
                          t->cfg[i].text, ms);
        if (ms < best_ms) best_ms = ms, best = i;
    }
    if (talk && best >= 0) fprintf(stderr, "blk autotune: key %s: config %d {%s}\n", key, best, t->cfg[best].text);
    return best;
}

blkrt_status blkrt_autotuner_launch(blkrt_autotuner *t, blkrt_grid_fn grid, void *grid_user, const blkrt_arg *args,
                                    int nargs, const blkrt_autotune_options *o, blkrt_stream *s, int *config,
                                    int *tuned) {
    blkrt_status st = check_tuner(t, "blkrt_autotuner_launch");
    if (st) return st;
    if (nargs < 0 || nargs > 64 || (nargs && !args))
        return rt_err(BLKRT_ERR_INVALID_VALUE, "blkrt_autotuner_launch: bad arguments (%d)", nargs);
    char key[2048];
    make_key(t, args, nargs, key, sizeof key);
    if (tuned) *tuned = 0;
    pthread_mutex_lock(&t->lock);
    int chosen = -1;
    for (int i = 0; i < t->nchoices && chosen < 0; i++)
        if (strcmp(t->choices[i].key, key) == 0) chosen = t->choices[i].config;
    if (chosen < 0 && t->ncfg == 1) chosen = 0; /* nothing to choose from */
    if (chosen < 0 && t->path[0]) { /* another GPU of this model may have tuned the key since */
        merge_file(t);
        for (int i = 0; i < t->nchoices && chosen < 0; i++)
            if (strcmp(t->choices[i].key, key) == 0) chosen = t->choices[i].config;
    }
    if (chosen < 0) {
        at_saved saved[64];
        memset(saved, 0, sizeof saved);
        char msg[2048] = "";
        blkrt_status first = BLKRT_OK;
        st = save_args(t, args, nargs, o, saved, s);
        if (!st) chosen = tune(t, key, grid, grid_user, args, nargs, o, saved, s, &first, msg, sizeof msg);
        if (!st && chosen < 0) st = rt_err(first, "%s", msg);
        if (!st) st = restore_args(t, args, nargs, saved, s);
        /* before the copies go (no wait where work runs as it is issued) */
        if (s && !st) st = blkrt_stream_synchronize(s);
        else if (!st) st = blkrt_device_synchronize(t->d);
        free_saved(t, saved, nargs);
        if (!st) {
            if (add_choice(t, key, chosen)) save_file(t);
            if (tuned) *tuned = 1;
        }
    }
    if (!st) st = launch_config(t, chosen, grid, grid_user, args, nargs, s);
    pthread_mutex_unlock(&t->lock);
    if (!st && config) *config = chosen;
    return st;
}

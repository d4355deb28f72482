/* cache.c — the content-addressed JIT disk cache (format in cache.h and
 * docs/runtime.md).
 *
 * Entry file <dir>/<sha256 of the inputs>.blkc:
 *
 *   blk-cache v1
 *   payload <bytes> <sha256 of the payload>
 *   dep <sha256 of the file> <path>          (one per import; none usually)
 *   end
 *   <payload bytes>
 *
 * Concurrency: writers never modify an entry in place. Each writes a private
 * temporary (mkstemp) and renames it over the entry name, so readers in any
 * process see a complete entry or none; two processes compiling the same
 * source both write identical bytes, and the last rename wins harmlessly.
 * Entries are only trusted when they belong to this user and are not
 * writable by others (a shared cache directory must not be a way to inject
 * code): an entry is opened with O_NOFOLLOW (a symlink planted under an
 * entry's name is a miss, then replaced by the rename), and the directory
 * itself must be this user's and not writable by others unless sticky (as
 * /tmp is: then others cannot rename over our entries); otherwise there is
 * no cache, silently (a cache only saves compiles).
 *
 * The header's first line names the format: an entry of another format (an
 * older or newer runtime's) reads as corrupt, is deleted and rewritten.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cache.h"
#include "rt.h"

#define CACHE_MAX_ENTRY (256u << 20)

/* ---- the key ---- */
static void put_field(rt_sha256 *s, const char *tag, const void *data, size_t n) {
    char head[96];
    int h = snprintf(head, sizeof head, "%s:%zu:", tag, n);
    rt_sha256_update(s, head, (size_t)h);
    if (n) rt_sha256_update(s, data, n);
    rt_sha256_update(s, "\n", 1);
}

void rt_cache_key_compute(const char *compiler_version, const char *kind, const blkrt_compile_request *req,
                          rt_cache_key *out) {
    rt_sha256 s;
    rt_sha256_init(&s);
    rt_sha256_update(&s, "blk-jit-cache v1\n", 17);
    put_field(&s, "compiler", compiler_version, strlen(compiler_version));
    put_field(&s, "output", kind, strlen(kind));
    put_field(&s, "arch", req->arch, strlen(req->arch));
    put_field(&s, "path", req->path, strlen(req->path));
    if (req->kernel) put_field(&s, "kernel", req->kernel, strlen(req->kernel));
    else put_field(&s, "all-kernels", "", 0);
    /* one entry per variant; none = every default variant */
    if (req->variant) put_field(&s, "variant", req->variant, strlen(req->variant));
    else put_field(&s, "default-variants", "", 0);
    /* Defines in a canonical order: by name, the last of duplicates (as the
     * compiler applies them), so the order a caller lists them in does not
     * split the cache. */
    int n = req->ndefines, m = 0;
    int small[64];
    int *idx = n <= 64 ? small : malloc(sizeof(int) * (size_t)n);
    if (!idx) n = 0; /* cannot canonicalise: hash in given order below */
    for (int i = 0; i < n; i++) {
        bool later = false;
        for (int j = i + 1; j < n && !later; j++) later = strcmp(req->defines[i].name, req->defines[j].name) == 0;
        if (later) continue;
        int at = m++;
        while (at > 0 && strcmp(req->defines[idx[at - 1]].name, req->defines[i].name) > 0) {
            idx[at] = idx[at - 1];
            at--;
        }
        idx[at] = i;
    }
    for (int k = 0; k < (idx ? m : req->ndefines); k++) {
        const blkrt_define *d = &req->defines[idx ? idx[k] : k];
        char v[160];
        int len = d->is_float ? snprintf(v, sizeof v, "%s=f%a", d->name, d->fval)
                              : snprintf(v, sizeof v, "%s=i%lld", d->name, (long long)d->ival);
        put_field(&s, "define", v, (size_t)(len < (int)sizeof v ? len : (int)sizeof v - 1));
        if (len >= (int)sizeof v) put_field(&s, "define-name", d->name, strlen(d->name));
    }
    if (idx && idx != small) free(idx);
    put_field(&s, "source", req->source, req->len);
    unsigned char dg[32];
    rt_sha256_final(&s, dg);
    rt_sha256_digest_hex(dg, out->hex);
}

/* ---- the directory ---- */
static bool mkdirs(char *path) {
    for (char *p = path + 1; *p; p++) {
        if (*p != '/') continue;
        *p = 0;
        bool ok = mkdir(path, 0700) == 0 || errno == EEXIST;
        *p = '/';
        if (!ok) return false;
    }
    return mkdir(path, 0700) == 0 || errno == EEXIST;
}

bool rt_cache_dir(const char *opt, char *buf, size_t n) {
    const char *env;
    int len;
    if (opt) {
        if (!*opt) return false;
        len = snprintf(buf, n, "%s", opt);
    } else if ((env = getenv("BLKRT_CACHE_DIR"))) {
        if (!*env) return false;
        len = snprintf(buf, n, "%s", env);
    } else if ((env = getenv("XDG_CACHE_HOME")) && *env) {
        len = snprintf(buf, n, "%s/blk", env);
    } else if ((env = getenv("HOME")) && *env) {
        len = snprintf(buf, n, "%s/.cache/blk", env);
    } else {
        return false;
    }
    if (len <= 0 || (size_t)len >= n - 80) return false; /* room for the entry name */
    struct stat st;
    if (!mkdirs(buf) || stat(buf, &st) != 0 || !S_ISDIR(st.st_mode)) return false;
    /* Someone else's directory, or one others may write without the sticky
     * bit, could be made to serve their entries: no cache there. */
    if (st.st_uid != geteuid()) return false;
    if ((st.st_mode & 022) && !(st.st_mode & S_ISVTX)) return false;
    return true;
}

void rt_cache_entry_path(const char *dir, const rt_cache_key *k, char *buf, size_t n) {
    snprintf(buf, n, "%s/%s.blkc", dir, k->hex);
}

/* ---- files ---- */
static int read_all(const char *path, size_t max, bool check_owner, char **out, size_t *len) {
    /* entries: never through a symlink (dependencies may be links) */
    int fd = open(path, O_RDONLY | O_CLOEXEC | (check_owner ? O_NOFOLLOW : 0));
    if (fd < 0) return -1;
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || (size_t)st.st_size > max ||
        (check_owner && (st.st_uid != geteuid() || (st.st_mode & 022)))) {
        close(fd);
        return -1;
    }
    size_t size = (size_t)st.st_size, got = 0;
    char *buf = malloc(size + 1);
    if (!buf) {
        close(fd);
        return -1;
    }
    while (got < size) {
        ssize_t r = read(fd, buf + got, size - got);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) break;
        got += (size_t)r;
    }
    close(fd);
    if (got != size) {
        free(buf);
        return -1;
    }
    buf[size] = 0;
    *out = buf;
    *len = size;
    return 0;
}

static bool file_hash(const char *path, char hex[65]) {
    char *data;
    size_t len;
    if (read_all(path, CACHE_MAX_ENTRY, false, &data, &len) != 0) return false;
    rt_sha256_hex(data, len, hex);
    free(data);
    return true;
}

/* Parse and verify an entry. 1: good (*payload points into data), 0: stale
 * (a dependency changed), -1: corrupt. */
static int verify(char *data, size_t len, const char **payload, size_t *plen) {
    char *p = data, *end = data + len;
    char *nl = memchr(p, '\n', (size_t)(end - p));
    if (!nl || strncmp(p, "blk-cache v1\n", 13) != 0) return -1;
    p = nl + 1;
    nl = memchr(p, '\n', (size_t)(end - p));
    if (!nl) return -1;
    *nl = 0;
    unsigned long long n;
    char sum[65];
    if (sscanf(p, "payload %llu %64[0-9a-f]", &n, sum) != 2 || strlen(sum) != 64) return -1;
    p = nl + 1;
    int stale = 0;
    for (;;) {
        nl = memchr(p, '\n', (size_t)(end - p));
        if (!nl) return -1;
        *nl = 0;
        if (strcmp(p, "end") == 0) break;
        if (strncmp(p, "dep ", 4) != 0 || strlen(p) < 4 + 64 + 2 || p[4 + 64] != ' ') return -1;
        char have[65];
        if (!file_hash(p + 4 + 64 + 1, have) || memcmp(have, p + 4, 64) != 0) stale = 1;
        p = nl + 1;
    }
    p = nl + 1;
    if ((unsigned long long)(end - p) != n) return -1;
    char got[65];
    rt_sha256_hex(p, (size_t)n, got);
    if (strcmp(got, sum) != 0) return -1;
    if (stale) return 0;
    *payload = p;
    *plen = (size_t)n;
    return 1;
}

blkrt_status rt_cache_load(const char *dir, const rt_cache_key *k, char **text, size_t *len) {
    char path[4200];
    rt_cache_entry_path(dir, k, path, sizeof path);
    char *data;
    size_t n;
    if (read_all(path, CACHE_MAX_ENTRY, true, &data, &n) != 0) return BLKRT_ERR_NOT_FOUND;
    const char *payload;
    size_t plen;
    int v = verify(data, n, &payload, &plen);
    if (v < 0) unlink(path); /* torn or corrupted: recompile and rewrite */
    if (v <= 0) {
        free(data);
        return BLKRT_ERR_NOT_FOUND;
    }
    char *out = rt_strndup(payload, plen);
    free(data);
    if (!out) return BLKRT_ERR_OUT_OF_MEMORY;
    *text = out;
    *len = plen;
    return BLKRT_OK;
}

static bool write_all(int fd, const void *p, size_t n) {
    const char *c = p;
    while (n > 0) {
        ssize_t w = write(fd, c, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return false;
        c += w, n -= (size_t)w;
    }
    return true;
}

blkrt_status rt_cache_store(const char *dir, const rt_cache_key *k, const char *text, size_t len,
                            const char *const *deps, int ndeps) {
    char head[8192];
    char sum[65];
    rt_sha256_hex(text, len, sum);
    size_t h = (size_t)snprintf(head, sizeof head, "blk-cache v1\npayload %zu %s\n", len, sum);
    for (int i = 0; i < ndeps; i++) {
        char dh[65];
        if (!deps[i] || strchr(deps[i], '\n') || !file_hash(deps[i], dh))
            return rt_err(BLKRT_ERR_IO, "cache: cannot record dependency '%s'", deps[i] ? deps[i] : "(null)");
        h += (size_t)snprintf(head + h, sizeof head - h, "dep %s %s\n", dh, deps[i]);
        if (h >= sizeof head - 8) return rt_err(BLKRT_ERR_IO, "cache: too many dependencies");
    }
    h += (size_t)snprintf(head + h, sizeof head - h, "end\n");
    char tmp[4200], path[4200];
    snprintf(tmp, sizeof tmp, "%s/.tmp-%.16s-XXXXXX", dir, k->hex);
    rt_cache_entry_path(dir, k, path, sizeof path);
    int fd = mkstemp(tmp);
    if (fd < 0) return rt_err(BLKRT_ERR_IO, "cache: cannot create a file in %s: %s", dir, strerror(errno));
    bool ok = write_all(fd, head, h) && write_all(fd, text, len);
    ok = close(fd) == 0 && ok;
    if (!ok || rename(tmp, path) != 0) {
        int e = errno;
        unlink(tmp);
        return rt_err(BLKRT_ERR_IO, "cache: cannot write %s: %s", path, strerror(e));
    }
    return BLKRT_OK;
}

/* ---- a compiler hook through the cache ---- */

/* A hook's result is libc memory (blkrt.h), not the runtime allocator's. */
void rt_free_result(blkrt_compile_result *res) {
    rt_libc_free(res->text);
    rt_libc_free(res->log);
    for (int i = 0; i < res->ndeps; i++) rt_libc_free(res->deps[i]);
    rt_libc_free(res->deps);
    memset(res, 0, sizeof *res);
}

blkrt_status rt_compile_cached(const blkrt_compiler *c, const char *kind, const blkrt_compile_request *req,
                               const char *dir, const char *what, char **text, size_t *len) {
    blkrt_status (*hook)(const blkrt_compile_request *, blkrt_compile_result *) =
        strcmp(kind, "meta") == 0 ? c->describe : c->compile_ptx;
    rt_cache_key key;
    *text = NULL;
    *len = 0;
    if (dir) {
        /* PTX with line info (BLK_LINEINFO, read by jit.c's compile_ptx) is
         * other text: another key */
        const char *li = getenv("BLK_LINEINFO");
        bool lineinfo = strcmp(kind, "ptx") == 0 && li && *li && strcmp(li, "0") != 0;
        rt_cache_key_compute(c->version, lineinfo ? "ptx+lineinfo" : kind, req, &key);
        if (rt_cache_load(dir, &key, text, len) == BLKRT_OK) return BLKRT_OK;
    }
    blkrt_compile_result res = {0};
    blkrt_status st = hook(req, &res);
    if (st) {
        rt_err(st, "%s: compiling %s%sfor %s failed%s%s", req->path, what ? what : "", what ? " " : "", req->arch,
               res.log ? ":\n" : "", res.log ? res.log : "");
        rt_free_result(&res);
        return st;
    }
    if (!res.text) {
        rt_free_result(&res);
        return rt_err(BLKRT_ERR_COMPILE, "%s: the compiler returned no %s", req->path,
                      strcmp(kind, "meta") == 0 ? "blk-meta" : "PTX");
    }
    if (res.len == 0) res.len = strlen(res.text);
    /* A failed cache write only costs the next load a compile, and the call
     * still succeeds: keep the caller's last error message as it was. */
    if (dir) {
        char saved[RT_MSG_SIZE];
        snprintf(saved, sizeof saved, "%s", blkrt_last_error());
        rt_cache_store(dir, &key, res.text, res.len, (const char *const *)res.deps, res.ndeps);
        rt_err(BLKRT_OK, "%s", saved);
    }
    *text = rt_strndup(res.text, res.len); /* into the runtime's allocator */
    *len = res.len;
    rt_free_result(&res);
    return *text ? BLKRT_OK : rt_err(BLKRT_ERR_OUT_OF_MEMORY, "out of memory");
}

/* util.c — arena, growable arrays, string buffer, file reading. */
#include "util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

typedef struct chunk {
    struct chunk *next;
    size_t size, used;
    _Alignas(16) unsigned char mem[];
} chunk;

struct blk_arena {
    chunk *head;
    size_t total;
    bool failed;
};

enum { CHUNK_MIN = 64 * 1024 };

static _Thread_local long alloc_count, alloc_fail; /* blk_alloc_fail_at */
static _Thread_local long alloc_failures;         /* blk_alloc_failures */

static bool alloc_ok(void) { return ++alloc_count != alloc_fail; }

static void *counted(void *p) {
    if (!p) alloc_failures++;
    return p;
}

void *blk_malloc(size_t n) { return counted(alloc_ok() ? malloc(n ? n : 1) : NULL); }
void *blk_calloc(size_t n, size_t size) { return counted(alloc_ok() ? calloc(n ? n : 1, size ? size : 1) : NULL); }
void *blk_realloc(void *p, size_t n) { return counted(alloc_ok() ? realloc(p, n ? n : 1) : NULL); }
long blk_alloc_failures(void) { return alloc_failures; }

long blk_alloc_fail_at(long nth) {
    long made = alloc_count;
    alloc_count = 0;
    alloc_fail = nth;
    return made;
}

blk_arena *arena_new(void) { return blk_calloc(1, sizeof(blk_arena)); }

void arena_free(blk_arena *a) {
    if (!a) return;
    for (chunk *c = a->head, *n; c; c = n) {
        n = c->next;
        free(c);
    }
    free(a);
}

void *arena_alloc(blk_arena *a, size_t bytes) {
    if (!a || a->failed) return NULL;
    size_t need = (bytes + 15) & ~(size_t)15;
    if (need < bytes) { a->failed = true; return NULL; }
    chunk *c = a->head;
    if (!c || c->size - c->used < need) {
        size_t size = need > CHUNK_MIN ? need : CHUNK_MIN;
        c = blk_malloc(sizeof(chunk) + size);
        if (!c) { a->failed = true; return NULL; }
        c->size = size;
        c->used = 0;
        c->next = a->head;
        a->head = c;
        a->total += size;
    }
    void *p = c->mem + c->used;
    c->used += need;
    memset(p, 0, need);
    return p;
}

bool arena_failed(const blk_arena *a) { return !a || a->failed; }
size_t arena_bytes_used(const blk_arena *a) { return a ? a->total : 0; }

char *arena_strndup(blk_arena *a, const char *s, size_t n) {
    char *p = arena_alloc(a, n + 1);
    if (p) { memcpy(p, s, n); p[n] = 0; }
    return p;
}

char *arena_strdup(blk_arena *a, const char *s) { return arena_strndup(a, s, strlen(s)); }

char *arena_printf(blk_arena *a, const char *fmt, ...) {
    va_list ap, ap2;
    va_start(ap, fmt);
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char *p = n >= 0 ? arena_alloc(a, (size_t)n + 1) : NULL;
    if (p) vsnprintf(p, (size_t)n + 1, fmt, ap2);
    va_end(ap2);
    return p;
}

void vec_grow_(blk_arena *a, void **data, int *cap, size_t elem, int need) {
    int ncap = *cap ? *cap : 4;
    while (ncap < need) {
        if (ncap > (1 << 28)) return; /* refuse absurd sizes; VEC_PUSH then drops */
        ncap *= 2;
    }
    void *p = arena_alloc(a, elem * (size_t)ncap);
    if (!p) return;
    if (*data) memcpy(p, *data, elem * (size_t)*cap);
    *data = p;
    *cap = ncap;
}

void sb_init(blk_strbuf *sb) { memset(sb, 0, sizeof *sb); }
void sb_free(blk_strbuf *sb) { free(sb->data); sb_init(sb); }

static bool sb_reserve(blk_strbuf *sb, size_t extra) {
    if (sb->failed) return false;
    if (sb->len + extra + 1 <= sb->cap) return true;
    size_t ncap = sb->cap ? sb->cap : 256;
    while (ncap < sb->len + extra + 1) ncap *= 2;
    char *p = blk_realloc(sb->data, ncap);
    if (!p) { sb->failed = true; return false; }
    sb->data = p;
    sb->cap = ncap;
    return true;
}

void sb_putn(blk_strbuf *sb, const char *s, size_t n) {
    if (!sb_reserve(sb, n)) return;
    memcpy(sb->data + sb->len, s, n);
    sb->len += n;
    sb->data[sb->len] = 0;
}
void sb_putc(blk_strbuf *sb, char c) { sb_putn(sb, &c, 1); }
void sb_puts(blk_strbuf *sb, const char *s) { sb_putn(sb, s, strlen(s)); }

void sb_vprintf(blk_strbuf *sb, const char *fmt, va_list ap) {
    va_list ap2;
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap);
    if (n > 0 && sb_reserve(sb, (size_t)n)) {
        vsnprintf(sb->data + sb->len, (size_t)n + 1, fmt, ap2);
        sb->len += (size_t)n;
    }
    va_end(ap2);
}

void sb_printf(blk_strbuf *sb, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    sb_vprintf(sb, fmt, ap);
    va_end(ap);
}

const char *sb_str(const blk_strbuf *sb) { return sb->data ? sb->data : ""; }

int read_file(const char *path, size_t max_bytes, char **out, size_t *len, char *err, size_t errlen) {
    *out = NULL;
    *len = 0;
    struct stat st;
    if (stat(path, &st) != 0) {
        snprintf(err, errlen, "%s", strerror(errno));
        return -1;
    }
    if (S_ISDIR(st.st_mode)) {
        snprintf(err, errlen, "is a directory");
        return -1;
    }
    /* FIFOs, sockets and devices could block forever or never end. */
    if (!S_ISREG(st.st_mode)) {
        snprintf(err, errlen, "not a regular file");
        return -1;
    }
    if ((uint64_t)st.st_size > max_bytes) {
        snprintf(err, errlen, "file too large (limit %zu bytes)", max_bytes);
        return -1;
    }
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, errlen, "%s", strerror(errno));
        return -1;
    }
    size_t cap = 4096, n = 0;
    char *buf = blk_malloc(cap + 1);
    while (buf) {
        if (n == cap) {
            if (cap >= max_bytes) {
                free(buf);
                fclose(f);
                snprintf(err, errlen, "file too large (limit %zu bytes)", max_bytes);
                return -1;
            }
            cap = cap * 2 > max_bytes ? max_bytes : cap * 2;
            char *nb = blk_realloc(buf, cap + 1);
            if (!nb) { free(buf); buf = NULL; break; }
            buf = nb;
        }
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (got == 0) break;
    }
    bool bad = ferror(f);
    fclose(f);
    if (!buf || bad) {
        free(buf);
        snprintf(err, errlen, "%s", buf ? "read error" : "out of memory");
        return -1;
    }
    if (n > max_bytes) {
        free(buf);
        snprintf(err, errlen, "file too large (limit %zu bytes)", max_bytes);
        return -1;
    }
    buf[n] = 0;
    *out = buf;
    *len = n;
    return 0;
}

uint64_t hash_bytes(const void *p, size_t n, uint64_t seed) {
    const unsigned char *s = p;
    uint64_t h = 1469598103934665603ull ^ seed;
    for (size_t i = 0; i < n; i++) { h ^= s[i]; h *= 1099511628211ull; }
    return h;
}

double blk_now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* error.c — how libblkrt reports failure (SQLite's way: record and return).
 *
 * Each thread has one message buffer; a failing call writes it and returns a
 * status. Successful calls do not touch it, so the launch path never pays for
 * error reporting unless something is wrong.
 */
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define RT_NO_ALLOC_REDIRECT /* this file calls the real ones */
#include "rt.h"

static _Thread_local long alloc_count, alloc_fail; /* rt_alloc_fail_at */

static bool alloc_ok(void) { return ++alloc_count != alloc_fail; }

/* The host allocator (blkrt_set_allocator): the user's pair, else libc's.
 * Every runtime allocation carries a header naming the block the allocator
 * gave (alignment may move the start) and the size asked for (realloc
 * copies it), so rt_free needs nothing but the pointer and the allocator is
 * asked only for plain blocks. `live` counts blocks not yet freed: the
 * allocator may change only while it is 0. */
typedef struct {
    void *raw;
    size_t n;
} rt_hdr;
static void *(*user_alloc)(size_t, void *);
static void (*user_release)(void *, void *);
static void *user_ud;
static atomic_long live;

static void *hdr_alloc(size_t align, size_t n) {
    if (!alloc_ok()) return NULL;
    if (align < sizeof(rt_hdr)) align = sizeof(rt_hdr);
    if (n > SIZE_MAX - sizeof(rt_hdr) - align) return NULL;
    size_t total = n + sizeof(rt_hdr) + align;
    char *raw = user_alloc ? user_alloc(total, user_ud) : malloc(total);
    if (!raw) return NULL;
    uintptr_t p = ((uintptr_t)raw + sizeof(rt_hdr) + align - 1) & ~(uintptr_t)(align - 1);
    rt_hdr *h = (rt_hdr *)p - 1;
    h->raw = raw;
    h->n = n;
    atomic_fetch_add(&live, 1);
    return (void *)p;
}

void *rt_malloc(size_t n) { return hdr_alloc(16, n); }
void *rt_calloc(size_t n, size_t size) {
    if (size && n > SIZE_MAX / size) return NULL;
    void *p = hdr_alloc(16, n * size);
    if (p) memset(p, 0, n * size);
    return p;
}
void *rt_aligned_alloc(size_t align, size_t n) { return hdr_alloc(align, n); }
void rt_free(void *p) {
    if (!p) return;
    void *raw = ((rt_hdr *)p - 1)->raw;
    atomic_fetch_sub(&live, 1);
    if (user_release) user_release(raw, user_ud);
    else free(raw);
}
void *rt_realloc(void *p, size_t n) {
    if (!p) return rt_malloc(n);
    void *q = hdr_alloc(16, n);
    if (!q) return NULL; /* p stays valid, as with realloc */
    size_t old = ((rt_hdr *)p - 1)->n;
    memcpy(q, p, old < n ? old : n);
    rt_free(p);
    return q;
}
void *rt_user_malloc(size_t n) { return alloc_ok() ? malloc(n) : NULL; }
void rt_libc_free(void *p) { free(p); }

blkrt_status blkrt_set_allocator(void *(*alloc)(size_t bytes, void *user), void (*release)(void *block, void *user),
                                 void *user) {
    if (!alloc != !release)
        return rt_err(BLKRT_ERR_INVALID_VALUE, "blkrt_set_allocator: give both functions, or neither (libc's)");
    long n = atomic_load(&live);
    if (n != 0)
        return rt_err(BLKRT_ERR_INVALID_VALUE,
                      "blkrt_set_allocator: the runtime holds %ld blocks from the current allocator; set it before "
                      "any other call (or after every handle is released)",
                      n);
    user_alloc = alloc, user_release = release, user_ud = user;
    return BLKRT_OK;
}

long rt_alloc_fail_at(long nth) {
    long made = alloc_count;
    alloc_count = 0;
    alloc_fail = nth;
    return made;
}



static _Thread_local char msg[RT_MSG_SIZE];

const char *blkrt_last_error(void) { return msg; }
const char *blkrt_version(void) { return BLKRT_VERSION; }

blkrt_status rt_err(blkrt_status s, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return s;
}

void rt_err_append(const char *text) {
    size_t n = strlen(msg);
    if (n + 1 >= sizeof msg) return;
    snprintf(msg + n, sizeof msg - n, "%s", text);
    /* Mark truncation so that a cut log does not look complete. */
    if (n + strlen(text) + 1 > sizeof msg) memcpy(msg + sizeof msg - 16, "\n...(truncated)", 16);
}

const char *blkrt_status_name(blkrt_status s) {
    switch (s) {
    case BLKRT_OK: return "BLKRT_OK";
    case BLKRT_ERR_NO_DRIVER: return "BLKRT_ERR_NO_DRIVER";
    case BLKRT_ERR_NO_DEVICE: return "BLKRT_ERR_NO_DEVICE";
    case BLKRT_ERR_INVALID_HANDLE: return "BLKRT_ERR_INVALID_HANDLE";
    case BLKRT_ERR_INVALID_VALUE: return "BLKRT_ERR_INVALID_VALUE";
    case BLKRT_ERR_INVALID_LAUNCH: return "BLKRT_ERR_INVALID_LAUNCH";
    case BLKRT_ERR_META: return "BLKRT_ERR_META";
    case BLKRT_ERR_NOT_FOUND: return "BLKRT_ERR_NOT_FOUND";
    case BLKRT_ERR_JIT: return "BLKRT_ERR_JIT";
    case BLKRT_ERR_PTX_VERSION: return "BLKRT_ERR_PTX_VERSION";
    case BLKRT_ERR_OUT_OF_MEMORY: return "BLKRT_ERR_OUT_OF_MEMORY";
    case BLKRT_ERR_NO_COMPILER: return "BLKRT_ERR_NO_COMPILER";
    case BLKRT_ERR_COMPILE: return "BLKRT_ERR_COMPILE";
    case BLKRT_ERR_LAUNCH_FAILED: return "BLKRT_ERR_LAUNCH_FAILED";
    case BLKRT_ERR_UNSUPPORTED: return "BLKRT_ERR_UNSUPPORTED";
    case BLKRT_ERR_IO: return "BLKRT_ERR_IO";
    case BLKRT_ERR_DRIVER: return "BLKRT_ERR_DRIVER";
    case BLKRT_ERR_NO_PEER_ACCESS: return "BLKRT_ERR_NO_PEER_ACCESS";
    case BLKRT_ERR_TIMEOUT: return "BLKRT_ERR_TIMEOUT";
    }
    return "BLKRT_ERR_?";
}

char *rt_strndup(const char *s, size_t n) {
    char *r = rt_malloc(n + 1);
    if (r) {
        memcpy(r, s, n);
        r[n] = 0;
    }
    return r;
}

double rt_now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

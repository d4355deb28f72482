/* util.h — arena allocation, growable arrays and a string buffer.
 *
 * Every compilation owns one blk_arena; AST nodes, IR, types and strings all
 * live there and are freed together (QBE's freeall). Nothing in libblkc frees
 * individual nodes. Growable arrays are arena-backed too: growth copies into a
 * new arena chunk and abandons the old one, which is fine for the small arrays
 * a compiler builds.
 */
#ifndef BLK_UTIL_H
#define BLK_UTIL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct blk_arena blk_arena;

blk_arena *arena_new(void);
void arena_free(blk_arena *a);
/* Zeroed, 16-byte aligned memory. Returns NULL only if malloc fails; callers
 * treat that as fatal for the compilation (see arena_failed). */
void *arena_alloc(blk_arena *a, size_t bytes);
char *arena_strdup(blk_arena *a, const char *s);
char *arena_strndup(blk_arena *a, const char *s, size_t n);
char *arena_printf(blk_arena *a, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* true once any allocation in this arena has failed. */
bool arena_failed(const blk_arena *a);
size_t arena_bytes_used(const blk_arena *a);

/* Every allocation of libblkc goes through these three (the arena's chunks,
 * string buffers, the parser's stacks, the interpreter's values), so a test
 * can make the nth one fail (blk_alloc_fail_at) and check that each failure
 * ends in a clean error: no crash, no leak, no output claimed complete. */
void *blk_malloc(size_t n);
void *blk_calloc(size_t n, size_t size);
void *blk_realloc(void *p, size_t n);
/* Test mode, per thread: the nth allocation from now (1 = the next) fails,
 * the others succeed; 0 = off. Returns how many allocations this thread made
 * since the previous call (so a caller knows whether the nth was reached). */
long blk_alloc_fail_at(long nth);
/* Allocations that failed on this thread so far: the public API compares it
 * before and after a call, so any failure inside (even one that only
 * truncated a name or a text) makes the call report BLK_ERR_NOMEM. */
long blk_alloc_failures(void);

/* Milliseconds on CLOCK_MONOTONIC: the compile-phase times (blkc_emit "times"). */
double blk_now_ms(void);

#define ARENA_NEW(a, T) ((T *)arena_alloc((a), sizeof(T)))
#define ARENA_ARRAY(a, T, n) ((T *)arena_alloc((a), sizeof(T) * (size_t)(n)))

/* Growable array of T in an arena:  VEC(int) v = {0};  VEC_PUSH(arena, v, 3); */
#define VEC(T) struct { T *data; int len, cap; }
void vec_grow_(blk_arena *a, void **data, int *cap, size_t elem, int need);
#define VEC_PUSH(arena, v, x)                                                   \
    do {                                                                        \
        if ((v).len >= (v).cap)                                                 \
            vec_grow_((arena), (void **)&(v).data, &(v).cap, sizeof(*(v).data), \
                      (v).len + 1);                                             \
        if ((v).len < (v).cap) (v).data[(v).len++] = (x);                       \
    } while (0)

/* Growable text buffer on malloc (used for output that outlives an arena:
 * diagnostics text, printed IR handed to the caller). */
typedef struct {
    char *data;
    size_t len, cap;
    bool failed; /* an allocation failed; contents are truncated */
} blk_strbuf;

void sb_init(blk_strbuf *sb);
void sb_free(blk_strbuf *sb);
void sb_putc(blk_strbuf *sb, char c);
void sb_puts(blk_strbuf *sb, const char *s);
void sb_putn(blk_strbuf *sb, const char *s, size_t n);
void sb_printf(blk_strbuf *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void sb_vprintf(blk_strbuf *sb, const char *fmt, va_list ap);
/* Always NUL-terminated; "" for an empty buffer. */
const char *sb_str(const blk_strbuf *sb);

/* Read a whole file. Returns 0 and a malloc'd NUL-terminated buffer (size in
 * *len, may contain NULs) or -1 with a message in err (strerror or "is a
 * directory" or "file too large"). max_bytes bounds the file size. */
int read_file(const char *path, size_t max_bytes, char **out, size_t *len, char *err, size_t errlen);

/* FNV-1a, for hash tables keyed by strings. */
uint64_t hash_bytes(const void *p, size_t n, uint64_t seed);

#endif

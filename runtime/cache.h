/* cache.h — the JIT disk cache (cache.c) and SHA-256 (sha256.c).
 *
 * An entry is the compiler's output (PTX, or a lazy load's blk-meta lines)
 * stored under the SHA-256 of everything that determines it: compiler
 * version, what it holds, target arch, source path and text, kernel
 * selection, variant, const defines. Files the compilation
 * read besides the source (imports) are recorded with their hashes and
 * re-checked on every hit. Entries are written to a temporary file and
 * renamed into place (atomic: readers see a whole entry or none) and carry a
 * checksum of their payload: a torn or corrupted entry is deleted and the
 * source recompiled.
 */
#ifndef BLK_RT_CACHE_H
#define BLK_RT_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "blk/blkrt.h"

typedef struct {
    uint32_t h[8];
    uint64_t bytes;
    unsigned char buf[64];
    size_t fill;
} rt_sha256;

void rt_sha256_init(rt_sha256 *s);
void rt_sha256_update(rt_sha256 *s, const void *data, size_t n);
void rt_sha256_final(rt_sha256 *s, unsigned char out[32]);
void rt_sha256_digest_hex(const unsigned char d[32], char out[65]);
void rt_sha256_hex(const void *data, size_t n, char out[65]);

typedef struct {
    char hex[65];
} rt_cache_key;

/* kind: what the entry holds ("ptx", "meta"); req->variant is part of the
 * key too, so each compiled variant has an entry of its own. */
void rt_cache_key_compute(const char *compiler_version, const char *kind, const blkrt_compile_request *req,
                          rt_cache_key *out);

/* The cache directory: opt if given ("" = no cache), else $BLKRT_CACHE_DIR
 * ("" = no cache), else $XDG_CACHE_HOME/blk, else $HOME/.cache/blk. Creates
 * it (mode 0700). False when caching is off or the directory is unusable:
 * not creatable, not a directory, owned by another user, or writable by
 * others without the sticky bit. */
bool rt_cache_dir(const char *opt, char *buf, size_t n);

/* The payload of an entry, malloc'd and NUL-terminated. BLKRT_ERR_NOT_FOUND
 * on a miss; a corrupt entry is removed and reported as a miss. */
blkrt_status rt_cache_load(const char *dir, const rt_cache_key *k, char **text, size_t *len);
blkrt_status rt_cache_store(const char *dir, const rt_cache_key *k, const char *text, size_t len,
                            const char *const *deps, int ndeps);
/* The path of an entry (for tests and tools). */
void rt_cache_entry_path(const char *dir, const rt_cache_key *k, char *buf, size_t n);

#endif

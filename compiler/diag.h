/* diag.h — source files and located diagnostics.
 *
 * A blk_loc is a byte span in one source file. Line and column are computed
 * only when a diagnostic is rendered (ninja's lexer does the same), so tokens
 * and nodes stay small. Rendering follows chibicc's verror_at:
 *
 *   kern.blk:3:17: error: cannot add f32[128] and f32[64]
 *       let z = x + y;
 *               ~~^~~
 *   kern.blk:2:9: note: 'y' defined here
 *
 * Columns are 1-based byte columns; tabs in the echoed line are kept so the
 * caret lines up in a terminal. Library code never prints: the text collects
 * in diag->out and the driver writes it to stderr.
 */
#ifndef BLK_DIAG_H
#define BLK_DIAG_H

#include "util.h"

typedef struct {
    int32_t file;  /* index into blk_diag.files; -1 = no location */
    uint32_t off;  /* byte offset of the span start */
    uint32_t len;  /* span length in bytes (0 = a point) */
} blk_loc;

#define LOC_NONE ((blk_loc){-1, 0, 0})

typedef struct {
    const char *path; /* as given / as found on the search path */
    const char *text; /* NUL-terminated; may contain embedded NULs before size */
    size_t size;
} blk_source;

typedef enum { DIAG_ERROR, DIAG_WARNING, DIAG_NOTE, DIAG_REMARK } diag_level;

typedef struct blk_diag {
    blk_arena *arena;
    VEC(blk_source) files;
    blk_strbuf out;      /* rendered diagnostics */
    int nerrors, nwarnings;
    int max_errors;      /* stop recording after this many errors (default 20) */
    bool werror;         /* warnings count as errors */
    bool color;          /* not used yet; here so the driver can pass --color */
} blk_diag;

void diag_init(blk_diag *d, blk_arena *a);
void diag_fini(blk_diag *d);
/* Register a source text (copied into the arena); returns its file index. */
int diag_add_file(blk_diag *d, const char *path, const char *text, size_t size);

void diag_error(blk_diag *d, blk_loc loc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void diag_warning(blk_diag *d, blk_loc loc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void diag_note(blk_diag *d, blk_loc loc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* An optimisation remark (blkc -R): located, one line, no source excerpt. */
void diag_remark(blk_diag *d, blk_loc loc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void diag_report(blk_diag *d, diag_level level, blk_loc loc, const char *fmt, va_list ap);

/* 1-based line and column of a location (0,0 for LOC_NONE). */
void diag_line_col(const blk_diag *d, blk_loc loc, int *line, int *col);
/* Span covering both a and b (same file; otherwise a). */
blk_loc loc_join(blk_loc a, blk_loc b);
/* true when too many errors were reported and callers should stop early. */
bool diag_should_stop(const blk_diag *d);

#endif

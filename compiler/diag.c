/* diag.c — rendering of located diagnostics (see diag.h). */
#include "diag.h"

#include <stdio.h>
#include <string.h>

void diag_init(blk_diag *d, blk_arena *a) {
    memset(d, 0, sizeof *d);
    d->arena = a;
    d->max_errors = 20;
    sb_init(&d->out);
}

void diag_fini(blk_diag *d) { sb_free(&d->out); }

int diag_add_file(blk_diag *d, const char *path, const char *text, size_t size) {
    blk_source s;
    s.path = arena_strdup(d->arena, path ? path : "<input>");
    char *t = arena_alloc(d->arena, size + 1);
    if (t && size) memcpy(t, text, size);
    s.text = t ? t : "";
    s.size = t ? size : 0;
    VEC_PUSH(d->arena, d->files, s);
    return d->files.len - 1;
}

blk_loc loc_join(blk_loc a, blk_loc b) {
    if (a.file < 0) return b;
    if (b.file != a.file) return a;
    uint32_t lo = a.off < b.off ? a.off : b.off;
    uint32_t ha = a.off + a.len, hb = b.off + b.len;
    uint32_t hi = ha > hb ? ha : hb;
    return (blk_loc){a.file, lo, hi - lo};
}

void diag_line_col(const blk_diag *d, blk_loc loc, int *line, int *col) {
    *line = *col = 0;
    if (loc.file < 0 || loc.file >= d->files.len) return;
    const blk_source *s = &d->files.data[loc.file];
    size_t off = loc.off > s->size ? s->size : loc.off;
    int ln = 1;
    size_t bol = 0;
    for (size_t i = 0; i < off; i++)
        if (s->text[i] == '\n') { ln++; bol = i + 1; }
    *line = ln;
    *col = (int)(off - bol) + 1;
}

bool diag_should_stop(const blk_diag *d) { return d->nerrors >= d->max_errors; }

/* Echo the source line with a caret and a ~ underline for the rest of the
 * span (clipped to the line). Non-printable bytes are shown as '?' so invalid
 * UTF-8 or NULs cannot garble the terminal. */
static void render_excerpt(blk_diag *d, blk_loc loc) {
    const blk_source *s = &d->files.data[loc.file];
    size_t off = loc.off > s->size ? s->size : loc.off;
    size_t bol = off, eol = off;
    while (bol > 0 && s->text[bol - 1] != '\n') bol--;
    while (eol < s->size && s->text[eol] != '\n') eol++;
    if (eol - bol > 400) { /* very long line: show a window around the caret */
        size_t lo = off > 200 ? off - 200 : 0;
        if (lo > bol) bol = lo;
        if (eol > bol + 400) eol = bol + 400;
    }
    sb_puts(&d->out, "    ");
    for (size_t i = bol; i < eol; i++) {
        unsigned char c = (unsigned char)s->text[i];
        sb_putc(&d->out, (c == '\t' || (c >= 32 && c < 127) || c >= 0x80) && c != 0 ? (char)c : '?');
    }
    sb_puts(&d->out, "\n    ");
    for (size_t i = bol; i < off; i++) sb_putc(&d->out, s->text[i] == '\t' ? '\t' : ' ');
    sb_putc(&d->out, '^');
    size_t end = off + loc.len;
    if (end > eol) end = eol;
    for (size_t i = off + 1; i < end; i++) sb_putc(&d->out, '~');
    sb_putc(&d->out, '\n');
}

void diag_report(blk_diag *d, diag_level level, blk_loc loc, const char *fmt, va_list ap) {
    if (level == DIAG_WARNING && d->werror) level = DIAG_ERROR;
    if (level == DIAG_ERROR) {
        if (d->nerrors >= d->max_errors) { d->nerrors++; return; }
        d->nerrors++;
    } else if (level == DIAG_WARNING) {
        d->nwarnings++;
    } else if (d->nerrors > d->max_errors) {
        return; /* notes of suppressed errors */
    }
    static const char *names[] = {"error", "warning", "note", "remark"};
    bool located = loc.file >= 0 && loc.file < d->files.len;
    if (located) {
        int line, col;
        diag_line_col(d, loc, &line, &col);
        sb_printf(&d->out, "%s:%d:%d: %s: ", d->files.data[loc.file].path, line, col, names[level]);
    } else {
        sb_printf(&d->out, "blkc: %s: ", names[level]);
    }
    sb_vprintf(&d->out, fmt, ap);
    sb_putc(&d->out, '\n');
    if (located && level != DIAG_REMARK) render_excerpt(d, loc);
    if (level == DIAG_ERROR && d->nerrors == d->max_errors)
        sb_printf(&d->out, "blkc: note: too many errors (%d); stopping\n", d->max_errors);
}

#define DIAG_FN(name, level)                                  \
    void name(blk_diag *d, blk_loc loc, const char *fmt, ...) { \
        va_list ap;                                           \
        va_start(ap, fmt);                                    \
        diag_report(d, level, loc, fmt, ap);                  \
        va_end(ap);                                           \
    }
DIAG_FN(diag_error, DIAG_ERROR)
DIAG_FN(diag_warning, DIAG_WARNING)
DIAG_FN(diag_note, DIAG_NOTE)
DIAG_FN(diag_remark, DIAG_REMARK)

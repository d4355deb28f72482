/* cg_lineinfo.c — `blkc -lineinfo` (blkc_set_lineinfo): `.file`/`.loc`
 * directives in the PTX, so Nsight Compute's source view maps SASS back to
 * .blk lines, as nvcc -lineinfo does. ptxas accepts them as they are
 * (-lineinfo keeps them in the cubin; no -g needed).
 *
 * LLVM debug info of emission kind DebugDirectivesOnly (3; the C API's
 * enum stops at LineTablesOnly): NVPTX then prints the line table as PTX
 * directives and no DWARF sections. One compile unit, a DIFile per source
 * file that code comes from, a DISubprogram per PTX entry; every Block IR
 * instruction sets the builder's location to its own line and column
 * (cg_region_inst), so all LLVM instructions lowered from it carry it.
 * Line numbers: a table of line starts per file, built on first use.
 */
#include <string.h>

#include <llvm-c/DebugInfo.h>

#include "cg_internal.h"

struct cg_lineinfo {
    LLVMDIBuilderRef dib;
    LLVMMetadataRef cu, scope;
    LLVMMetadataRef *files;   /* by diag file index, created on first use */
    LLVMMetadataRef *blocks;  /* the current entry's scope in another file (imported fns) */
    uint32_t **starts;        /* line start offsets per file */
    int *nstarts;
    int nfiles;
    int fn_file;              /* the file of the entry being lowered */
};

void cg_lineinfo_begin(cg_ctx *C) {
    cg_lineinfo *L = ARENA_NEW(C->a, cg_lineinfo);
    int n = C->diag->files.len;
    if (!L || n <= 0) return;
    L->files = ARENA_ARRAY(C->a, LLVMMetadataRef, n);
    L->starts = ARENA_ARRAY(C->a, uint32_t *, n);
    L->nstarts = ARENA_ARRAY(C->a, int, n);
    L->blocks = ARENA_ARRAY(C->a, LLVMMetadataRef, n);
    if (!L->files || !L->starts || !L->nstarts || !L->blocks) return;
    L->nfiles = n;
    L->dib = LLVMCreateDIBuilder(C->mod);
    const char *path = C->diag->files.data[0].path;
    LLVMMetadataRef f0 = LLVMDIBuilderCreateFile(L->dib, path, strlen(path), "", 0);
    L->files[0] = f0;
    L->cu = LLVMDIBuilderCreateCompileUnit(L->dib, LLVMDWARFSourceLanguageC, f0, "blkc", 4, 1, "", 0, 0, "", 0,
                                           (LLVMDWARFEmissionKind)3 /* DebugDirectivesOnly */, 0, 0, 0, "", 0, "", 0);
    LLVMAddModuleFlag(C->mod, LLVMModuleFlagBehaviorWarning, "Debug Info Version", 18,
                      LLVMValueAsMetadata(LLVMConstInt(C->i32, LLVMDebugMetadataVersion(), 0)));
    LLVMAddModuleFlag(C->mod, LLVMModuleFlagBehaviorWarning, "Dwarf Version", 13,
                      LLVMValueAsMetadata(LLVMConstInt(C->i32, 2, 0)));
    C->lineinfo = L;
}

static LLVMMetadataRef file_of(cg_ctx *C, int file) {
    cg_lineinfo *L = C->lineinfo;
    if (file < 0 || file >= L->nfiles) file = 0;
    if (!L->files[file]) {
        const char *path = C->diag->files.data[file].path;
        L->files[file] = LLVMDIBuilderCreateFile(L->dib, path, strlen(path), "", 0);
    }
    return L->files[file];
}

static void line_col(cg_ctx *C, blk_loc loc, unsigned *line, unsigned *col) {
    cg_lineinfo *L = C->lineinfo;
    *line = *col = 0;
    if (loc.file < 0 || loc.file >= L->nfiles) return;
    const blk_source *s = &C->diag->files.data[loc.file];
    if (!L->starts[loc.file]) {
        int n = 1;
        for (size_t i = 0; i < s->size; i++) n += s->text[i] == '\n';
        uint32_t *st = ARENA_ARRAY(C->a, uint32_t, n);
        if (!st) return;
        int k = 0;
        st[k++] = 0;
        for (size_t i = 0; i < s->size; i++)
            if (s->text[i] == '\n') st[k++] = (uint32_t)(i + 1);
        L->starts[loc.file] = st;
        L->nstarts[loc.file] = n;
    }
    const uint32_t *st = L->starts[loc.file];
    int lo = 0, hi = L->nstarts[loc.file] - 1; /* the last start <= off */
    while (lo < hi) {
        int mid = (lo + hi + 1) / 2;
        if (st[mid] <= loc.off) lo = mid;
        else hi = mid - 1;
    }
    *line = (unsigned)lo + 1;
    *col = loc.off - st[lo] + 1;
}

void cg_lineinfo_function(cg_ctx *C, LLVMValueRef fn, const ir_func *f, const char *entry) {
    cg_lineinfo *L = C->lineinfo;
    if (!L || !L->dib) return;
    unsigned line, col;
    line_col(C, f->loc, &line, &col);
    LLVMMetadataRef file = file_of(C, f->loc.file);
    LLVMMetadataRef ty = LLVMDIBuilderCreateSubroutineType(L->dib, file, NULL, 0, LLVMDIFlagZero);
    L->scope = LLVMDIBuilderCreateFunction(L->dib, file, f->name, strlen(f->name), entry, strlen(entry), file, line, ty,
                                           0, 1, line, LLVMDIFlagZero, 1);
    LLVMSetSubprogram(fn, L->scope);
    L->fn_file = f->loc.file;
    memset(L->blocks, 0, sizeof *L->blocks * (size_t)L->nfiles);
    cg_lineinfo_at(C, f->loc);
}

void cg_lineinfo_at(cg_ctx *C, blk_loc loc) {
    cg_lineinfo *L = C->lineinfo;
    if (!L || !L->scope) return;
    unsigned line, col;
    line_col(C, loc, &line, &col);
    if (!line) return; /* keep the previous location */
    /* code inlined from an imported file: a lexical block in that file, so
     * its .loc names the right file */
    LLVMMetadataRef scope = L->scope;
    if (loc.file != L->fn_file) {
        if (!L->blocks[loc.file])
            L->blocks[loc.file] = LLVMDIBuilderCreateLexicalBlockFile(L->dib, L->scope, file_of(C, loc.file), 0);
        scope = L->blocks[loc.file];
    }
    LLVMSetCurrentDebugLocation2(C->b, LLVMDIBuilderCreateDebugLocation(C->llc, line, col, scope, NULL));
}

void cg_lineinfo_finish(cg_ctx *C) {
    cg_lineinfo *L = C->lineinfo;
    if (!L || !L->dib) return;
    LLVMDIBuilderFinalize(L->dib);
    LLVMDisposeDIBuilder(L->dib);
    L->dib = NULL;
}

/* compile.h — the compilation context behind blkc_ctx, and the internal
 * entry points of each stage. The stages, in order:
 *
 *   front/    parse_file         source text -> AST_MODULE   (lex.re, parse.y, ast.c)
 *   sema/     sema_build         AST -> Block IR, every check  (compiler/sema/)
 *   passes.h  passes_run         the pass pipeline             (passes/)
 *   interp.h  interp_run         run Block IR on the CPU       (interp/)
 *
 * compile.c implements the public blkc.h API over these.
 */
#ifndef BLK_COMPILE_H
#define BLK_COMPILE_H

#include "front/ast.h"
#include "blk/blkc.h"
#include "diag.h"
#include "codegen/codegen.h"
#include "ir/ir.h"
#include "target/target.h"

typedef struct {
    const char *name;
    blk_loc loc;        /* LOC_NONE for API/-D defines */
    bool is_float, is_bool, is_str;
    int64_t ival;
    double fval;
    const char *sval;   /* is_str: the text (a `const X: str` parameter) */
} compile_define;

/* A variant requested with blkc_add_variant: "[KERNEL:]NAME=CODE,...". */
typedef struct {
    const char *text;    /* as given, for messages */
    const char *kernel;  /* NULL: every kernel built */
    int n;
    const char **names;
    ax_spec *codes;
} compile_variant;

/* A parsed source file: the main module or an import. */
typedef struct {
    const char *path;   /* resolved path */
    int file;           /* diag file index */
    ast_node *ast;      /* AST_MODULE, NULL if it failed to parse */
    VEC(int) imports;   /* per `import` item of ast, in source order: the unit
                           it names, -1 if it did not load (reported) */
} compile_unit;

/* Limits that keep hostile input from exhausting the machine (and
 * COMPILE_MAX_NESTING, the parser's, in front/ast.h). */
enum {
    COMPILE_MAX_FILE_BYTES = 16 << 20,
    COMPILE_MAX_INLINE_DEPTH = 64, /* fn call chain depth during specialisation */
    COMPILE_MAX_UNROLL = 4096,     /* static_range trip count */
    COMPILE_MAX_IMPORTS = 256,
};

struct blkc_ctx {
    blk_arena *arena;
    blk_diag diag;
    VEC(const char *) include_dirs;
    const char *stdlib_dir;
    VEC(compile_define) defines;
    VEC(compile_unit) units;   /* units.data[0] is the main module */
    int opt_level;
    unsigned cg_flags;         /* CG_LINEINFO, CG_REMARKS... (blkc_set_lineinfo, blkc_set_remarks) */
    bool verify_each;
    uint64_t interp_steps;     /* blkc_set_interp_steps (0 = none) ... */
    bool interp_steps_set;     /* ... else $BLK_INTERP_STEPS, else INTERP_DEFAULT_STEPS */
    ir_module *ir;             /* after blkc_build */
    blk_strbuf emit;           /* blkc_emit output */
    blk_strbuf sema_ir;        /* IR as sema produced it (for ir-after=sema) */
    blk_strbuf pass_dumps;     /* ir-after=PASS requested before build */
    const char *dump_after;    /* pass name to dump, or NULL */
    const tgt_target *target;  /* blkc_set_arch; default tgt_default() */
    VEC(compile_variant) variants;  /* blkc_add_variant */
    VEC(cg_variant) cg_variants;    /* ... resolved per kernel after the build */
    bool no_default_variants;       /* blkc_set_default_variants(c, 0) */
    bool cg_done, cg_llvm;     /* codegen ran (with LLVM IR text kept) */
    int cg_errors;
    cg_output cg;              /* PTX / LLVM IR / metadata */
    double ms_load, ms_sema, ms_passes; /* front-end phase times (blkc_emit "times") */
};

/* The @autotune configs as "// blk-autotune v1" lines (autotune.c). */
void compile_autotune_text(blkc_ctx *c, blk_strbuf *out);
/* The default stdlib directory (stdlib_dir.c: installed, packaged or source). */
const char *compile_stdlib_dir(void);

/* Check every blkc_add_variant spec against the kernels built and fill
 * c->cg_variants (variant.c). BLK_ERR_USAGE after reporting errors. */
blk_status compile_resolve_variants(blkc_ctx *c);

#endif

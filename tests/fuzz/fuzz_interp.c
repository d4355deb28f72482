/* fuzz_interp.c — structure-aware libFuzzer target: bytes -> a kernel -> the
 * interpreter.
 *
 * The bytes are a stream of choices. The first few pick a template (a 1-D
 * kernel over [BLOCK] or a 2-D one over [R, C], tiny sizes) and the run's
 * parameters (n, s, grid of 1-2 programs); the rest drive a typed generator
 * that splices statements and expressions over a fixed set of names into
 * the template: arithmetic, comparisons, casts, math builtins, masked and
 * unmasked (direct and indirect) loads and stores, atomics, reductions,
 * scans, sort, rand, user fns, if / for / static_range / while, break and
 * continue. Loops are always bounded (literal trip counts, or n <= 39 at the
 * outermost level; every while loop counts up a fresh var as its first
 * statement) because the interpreter has no step limit.
 *
 * When the bytes run out every choice is 0, which always means "a terminal"
 * or "stop", so every input gives a finite program.
 *
 * FZ_PRINT=1 in the environment prints the generated program with its run
 * parameters as a `// FUZZ-INTERP` line: save that as a .blk and it replays
 * with interp_replay (tests/regress/interp/).
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fz_interp_run.h"

typedef struct {
    const uint8_t *p;
    size_t n, i;
} fz_in;

/* A choice in [0, k); 0 once the input is exhausted. */
static unsigned pick(fz_in *in, unsigned k) {
    if (k <= 1 || in->i >= in->n) return 0;
    return in->p[in->i++] % k;
}

enum { OUT_CAP = 1 << 16 };
typedef struct {
    char buf[OUT_CAP];
    size_t len;
    int overflow;
} fz_out;

static void emit(fz_out *o, const char *fmt, ...) {
    if (o->overflow) return;
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(o->buf + o->len, OUT_CAP - o->len, fmt, ap);
    va_end(ap);
    if (k < 0 || (size_t)k >= OUT_CAP - o->len) o->overflow = 1;
    else o->len += (size_t)k;
}

/* Value kinds the generator keeps apart so that most programs type-check:
 * blocks have the template's shape. */
enum { FB, IB, BB, FS, IS, NKIND };

enum { MAX_NAMES = 64, MAX_EXPR_DEPTH = 5, MAX_STMT_DEPTH = 3, MAX_STMTS = 48 };

typedef struct {
    fz_in in;
    fz_out out;
    int two_d;                /* template: 0 = [BLOCK], 1 = [R, C] */
    int square16;             /* [R, C] is [16, 16]: dot and trans apply */
    const char *shape;        /* "[BLOCK]" or "[R, C]" */
    const char *names[NKIND][MAX_NAMES];
    int nnames[NKIND];
    char name_store[256][8];  /* storage for generated names */
    int nstore;
    int loop_depth;           /* runtime loops around the current statement */
    int static_depth;         /* static_range loops (no break/continue there) */
    int stmts;
} fz_gen;

static void add_name(fz_gen *g, int kind, const char *name) {
    if (g->nnames[kind] < MAX_NAMES) g->names[kind][g->nnames[kind]++] = name;
}

static const char *new_name(fz_gen *g, char prefix) {
    if (g->nstore >= 256) return NULL;
    char *s = g->name_store[g->nstore];
    snprintf(s, 8, "%c%d", prefix, g->nstore);
    g->nstore++;
    return s;
}

static void gen(fz_gen *g, int kind, int depth);

static int axis(fz_gen *g) {
    /* rarely out of range, to keep the diagnostics path in the mix */
    unsigned k = pick(&g->in, 16);
    if (k == 15) return 2;
    return g->two_d ? (int)(k & 1) : 0;
}

static void gen_name(fz_gen *g, int kind) {
    emit(&g->out, "%s", g->names[kind][pick(&g->in, (unsigned)g->nnames[kind])]);
}

static const char *const unary_math[] = {"abs", "exp", "exp2", "log", "log2", "sqrt", "rsqrt", "sin",
                                         "cos", "tanh", "sigmoid", "erf", "floor", "ceil"};
static const char *const float_lits[] = {"0.0", "1.5", "-2.0", "1e30", "inf", "-inf", "nan", "1e-40",
                                         "3.0", "0.5", "65504.0", "-0.0"};
static const char *const int_lits[] = {"0", "1", "2", "3", "-1", "7", "31", "32",
                                       "2147483647", "(-2147483647 - 1)", "8", "16"};
static const char *const farith[] = {"+", "-", "*", "/"};
static const char *const iarith[] = {"+", "-", "*", "/", "%", "&", "|", "^", "<<", ">>"};
static const char *const cmps[] = {"<", "<=", ">", ">=", "==", "!="};
static const char *const freduce[] = {"sum", "max", "min", "prod"};

static void gen_fb(fz_gen *g, int d) {
    fz_in *in = &g->in;
    fz_out *o = &g->out;
    switch (pick(in, 18)) {
    case 0: gen_name(g, FB); break;
    case 1:
        emit(o, "(");
        gen(g, FB, d);
        emit(o, " %s ", farith[pick(in, 4)]);
        gen(g, pick(in, 2) ? FS : FB, d);
        emit(o, ")");
        break;
    case 2:
        if (pick(in, 8) == 0) {
            emit(o, "(-");
            gen(g, FB, d);
            emit(o, ")");
        } else {
            emit(o, "%s(", unary_math[pick(in, 14)]);
            gen(g, FB, d);
            emit(o, pick(in, 8) == 0 ? ", fast = true)" : ")");
        }
        break;
    case 3:
        emit(o, "where(");
        gen(g, BB, d);
        emit(o, ", ");
        gen(g, FB, d);
        emit(o, ", ");
        gen(g, pick(in, 2) ? FS : FB, d);
        emit(o, ")");
        break;
    case 4: emit(o, "("); gen(g, IB, d); emit(o, " as f32)"); break;
    case 5:
        switch (pick(in, 3)) {
        case 0: emit(o, "load(x + "); gen(g, IB, d); emit(o, ", "); gen(g, BB, d); emit(o, ")"); break;
        case 1:
            emit(o, "load(y + "); gen(g, IB, d); emit(o, ", "); gen(g, BB, d); emit(o, ", ");
            gen(g, FS, d); emit(o, ")");
            break;
        default: emit(o, "load(x + "); gen(g, IB, d); emit(o, ")"); break;
        }
        break;
    case 6: {
        static const char *const f2[] = {"minimum", "maximum", "pow"};
        emit(o, "%s(", f2[pick(in, 3)]);
        gen(g, FB, d);
        emit(o, ", ");
        gen(g, pick(in, 2) ? FS : FB, d);
        emit(o, ")");
        break;
    }
    case 7:
        if (pick(in, 2)) {
            emit(o, "fma("); gen(g, FB, d); emit(o, ", "); gen(g, FB, d); emit(o, ", "); gen(g, FB, d); emit(o, ")");
        } else {
            emit(o, "clamp("); gen(g, FB, d); emit(o, ", "); gen(g, FS, d); emit(o, ", "); gen(g, FS, d); emit(o, ")");
        }
        break;
    case 8:
        emit(o, "(%s(", freduce[pick(in, 4)]);
        gen(g, FB, d);
        emit(o, ", %d, keep_dims = true) + zeros(%s, f32))", axis(g), g->shape);
        break;
    case 9:
        switch (pick(in, 5)) {
        case 0: emit(o, "cumsum("); gen(g, FB, d); emit(o, ", %d)", axis(g)); break;
        case 1: emit(o, "cumprod("); gen(g, FB, d); emit(o, ", %d, reverse = true)", axis(g)); break;
        case 2: emit(o, "sort("); gen(g, FB, d); emit(o, ", %d%s)", axis(g), pick(in, 2) ? ", descending = true" : ""); break;
        case 3: emit(o, "scan("); gen(g, FB, d); emit(o, ", %d, fmax)", axis(g)); break;
        default:
            emit(o, "(reduce(");
            gen(g, FB, d);
            emit(o, ", %d, fadd, keep_dims = true) + zeros(%s, f32))", axis(g), g->shape);
            break;
        }
        break;
    case 10:
        emit(o, "%s(", pick(in, 2) ? "rand" : "randn");
        gen(g, IS, d);
        emit(o, ", ");
        gen(g, IB, d);
        emit(o, ")");
        break;
    case 11:
        if (pick(in, 2)) {
            emit(o, "full(%s, ", g->shape); gen(g, FS, d); emit(o, ", f32)");
        } else {
            emit(o, "("); gen(g, FS, d); emit(o, " + zeros(%s, f32))", g->shape);
        }
        break;
    case 12: {
        static const char *const narrow[] = {"f16", "bf16", "f8e4m3", "f8e5m2", "f64", "i8", "u32"};
        emit(o, "(");
        gen(g, FB, d);
        emit(o, " as %s as f32)", narrow[pick(in, 7)]);
        break;
    }
    case 13: emit(o, "h("); gen(g, FB, d); emit(o, ", "); gen(g, pick(in, 2) ? FS : FB, d); emit(o, ")"); break;
    case 14:
        emit(o, "atomic_%s(out + ", pick(in, 2) ? "add" : "max");
        gen(g, IB, d);
        emit(o, ", ");
        gen(g, FB, d);
        if (pick(in, 2)) { emit(o, ", "); gen(g, BB, d); }
        emit(o, ")");
        break;
    case 15: emit(o, "(%s(", pick(in, 2) ? "max" : "min"); gen(g, FB, d); emit(o, ", 0) + zeros(%s, f32))", g->shape); break;
    case 16:
        if (g->square16 && pick(in, 2)) {
            switch (pick(in, 4)) {
            case 0: emit(o, "dot("); gen(g, FB, d); emit(o, ", "); gen(g, FB, d); emit(o, ", input_precision = \"ieee\")"); break;
            case 1: emit(o, "dot(("); gen(g, FB, d); emit(o, ") as f16, trans("); gen(g, FB, d); emit(o, ") as f16, acc)"); break;
            case 2: emit(o, "dot("); gen(g, FB, d); emit(o, ", "); gen(g, FB, d); emit(o, ")"); break;
            default: emit(o, "(dot(("); gen(g, IB, d); emit(o, ") as i8, ("); gen(g, IB, d); emit(o, ") as i8) as f32)"); break;
            }
        } else if (g->two_d && pick(in, 4) == 0) {
            /* a tensor descriptor over x seen as an [n, C] matrix; OOB reads as 0 */
            emit(o, "tensor_desc(x, shape = [n, C], strides = [C, 1], block = [R, C]).load([");
            gen(g, IS, d);
            emit(o, ", ");
            gen(g, IS, d);
            emit(o, "])");
        } else if (g->two_d) {
            emit(o, "trans(trans(");
            gen(g, FB, d);
            emit(o, "))");
        } else {
            emit(o, "reshape(expand_dims(");
            gen(g, FB, d);
            emit(o, ", 0), [BLOCK])");
        }
        break;
    default: emit(o, "(%s + zeros(%s, f32))", float_lits[pick(in, 12)], g->shape); break;
    }
}

static void gen_ib(fz_gen *g, int d) {
    fz_in *in = &g->in;
    fz_out *o = &g->out;
    switch (pick(in, 13)) {
    case 0: gen_name(g, IB); break;
    case 1:
        emit(o, "(");
        gen(g, IB, d);
        emit(o, " %s ", iarith[pick(in, 10)]);
        gen(g, pick(in, 2) ? IS : IB, d);
        emit(o, ")");
        break;
    case 2: emit(o, "("); gen(g, FB, d); emit(o, " as i32)"); break;
    case 3:
        emit(o, "where("); gen(g, BB, d); emit(o, ", "); gen(g, IB, d); emit(o, ", ");
        gen(g, pick(in, 2) ? IS : IB, d); emit(o, ")");
        break;
    case 4:
        emit(o, "load(idx + ");
        gen(g, IB, d);
        if (pick(in, 2)) { emit(o, ", "); gen(g, BB, d); }
        emit(o, ")");
        break;
    case 5: {
        static const char *const un[] = {"(-", "(~", "abs("};
        emit(o, "%s", un[pick(in, 3)]);
        gen(g, IB, d);
        emit(o, ")");
        break;
    }
    case 6:
        switch (pick(in, 4)) {
        case 0: emit(o, "cumsum("); gen(g, IB, d); emit(o, ", %d)", axis(g)); break;
        case 1: emit(o, "minimum("); gen(g, IB, d); emit(o, ", "); gen(g, IB, d); emit(o, ")"); break;
        case 2: emit(o, "maximum("); gen(g, IB, d); emit(o, ", "); gen(g, IS, d); emit(o, ")"); break;
        default: emit(o, "sort("); gen(g, IB, d); emit(o, ", %d)", axis(g)); break;
        }
        break;
    case 7: emit(o, "("); gen(g, IS, d); emit(o, " + zeros(%s, i32))", g->shape); break;
    case 8: emit(o, "cdiv("); gen(g, IB, d); emit(o, ", "); gen(g, IS, d); emit(o, ")"); break;
    case 9: {
        static const char *const at[] = {"add", "max", "min", "and", "or", "xor", "xchg"};
        unsigned k = pick(in, 8);
        if (k == 7) {
            emit(o, "atomic_cas(iout + "); gen(g, IB, d); emit(o, ", "); gen(g, IB, d); emit(o, ", ");
            gen(g, IB, d); emit(o, ")");
        } else {
            emit(o, "atomic_%s(iout + ", at[k]); gen(g, IB, d); emit(o, ", "); gen(g, IB, d);
            if (pick(in, 2)) { emit(o, ", "); gen(g, BB, d); }
            emit(o, ")");
        }
        break;
    }
    case 10: {
        static const char *const narrow[] = {"i8", "u8", "i16", "u16", "i64", "u64", "u32", "bool"};
        emit(o, "(");
        gen(g, IB, d);
        emit(o, " as %s as i32)", narrow[pick(in, 8)]);
        break;
    }
    case 11:
        emit(o, "(%s(", pick(in, 2) ? "argmax" : "argmin");
        gen(g, FB, d);
        emit(o, ", %d, keep_dims = true) + zeros(%s, i32))", axis(g), g->shape);
        break;
    default: emit(o, "(%s + zeros(%s, i32))", int_lits[pick(in, 12)], g->shape); break;
    }
}

static void gen_bb(fz_gen *g, int d) {
    fz_in *in = &g->in;
    fz_out *o = &g->out;
    switch (pick(in, 5)) {
    case 0: gen_name(g, BB); break;
    case 1:
        emit(o, "("); gen(g, FB, d); emit(o, " %s ", cmps[pick(in, 6)]);
        gen(g, pick(in, 2) ? FS : FB, d); emit(o, ")");
        break;
    case 2:
        emit(o, "("); gen(g, IB, d); emit(o, " %s ", cmps[pick(in, 6)]);
        gen(g, pick(in, 2) ? IS : IB, d); emit(o, ")");
        break;
    case 3: {
        static const char *const bops[] = {"&", "|", "^", "&&", "||"};
        emit(o, "("); gen(g, BB, d); emit(o, " %s ", bops[pick(in, 5)]); gen(g, BB, d); emit(o, ")");
        break;
    }
    default: emit(o, "(!"); gen(g, BB, d); emit(o, ")"); break;
    }
}

static void gen_fs(fz_gen *g, int d) {
    fz_in *in = &g->in;
    fz_out *o = &g->out;
    switch (pick(in, 7)) {
    case 0: gen_name(g, FS); break;
    case 1: emit(o, "%s", float_lits[pick(in, 12)]); break;
    case 2: emit(o, "("); gen(g, FS, d); emit(o, " %s ", farith[pick(in, 4)]); gen(g, FS, d); emit(o, ")"); break;
    case 3: {
        const char *r = freduce[pick(in, 4)];
        if (g->two_d) {
            emit(o, "%s(%s(", r, r); gen(g, FB, d); emit(o, ", %d), 0)", axis(g));
        } else {
            emit(o, "%s(", r); gen(g, FB, d); emit(o, ", 0)");
        }
        break;
    }
    case 4: emit(o, "("); gen(g, IS, d); emit(o, " as f32)"); break;
    case 5: emit(o, "%s(", unary_math[pick(in, 14)]); gen(g, FS, d); emit(o, ")"); break;
    default: emit(o, "load(x + "); gen(g, IS, d); emit(o, ")"); break;
    }
}

static void gen_is(fz_gen *g, int d) {
    fz_in *in = &g->in;
    fz_out *o = &g->out;
    switch (pick(in, 8)) {
    case 0: gen_name(g, IS); break;
    case 1: emit(o, "%s", int_lits[pick(in, 12)]); break;
    case 2: emit(o, "("); gen(g, IS, d); emit(o, " %s ", iarith[pick(in, 10)]); gen(g, IS, d); emit(o, ")"); break;
    case 3:
        if (g->two_d) {
            emit(o, "sum(sum("); gen(g, IB, d); emit(o, ", 0), 0)");
        } else {
            switch (pick(in, 3)) {
            case 0: emit(o, "argmax("); gen(g, FB, d); break;
            case 1: emit(o, "xor_sum("); gen(g, IB, d); break;
            default: emit(o, "sum("); gen(g, IB, d); break;
            }
            emit(o, ", 0)");
        }
        break;
    case 4: emit(o, "("); gen(g, FS, d); emit(o, " as i32)"); break;
    case 5: emit(o, "%s(0)", pick(in, 2) ? "num_programs" : "program_id"); break;
    case 6: emit(o, "cdiv("); gen(g, IS, d); emit(o, ", "); gen(g, IS, d); emit(o, ")"); break;
    default: emit(o, "load(idx + "); gen(g, IS, d); emit(o, ")"); break;
    }
}

static void gen(fz_gen *g, int kind, int depth) {
    if (depth >= MAX_EXPR_DEPTH || g->in.i >= g->in.n) {
        /* terminals only */
        switch (kind) {
        case FS: if (pick(&g->in, 2)) { emit(&g->out, "%s", float_lits[pick(&g->in, 12)]); return; } break;
        case IS: if (pick(&g->in, 2)) { emit(&g->out, "%s", int_lits[pick(&g->in, 12)]); return; } break;
        }
        gen_name(g, kind);
        return;
    }
    switch (kind) {
    case FB: gen_fb(g, depth + 1); break;
    case IB: gen_ib(g, depth + 1); break;
    case BB: gen_bb(g, depth + 1); break;
    case FS: gen_fs(g, depth + 1); break;
    default: gen_is(g, depth + 1); break;
    }
}

static void indent(fz_gen *g, int depth) {
    for (int i = 0; i <= depth; i++) emit(&g->out, "    ");
}

static void gen_block(fz_gen *g, int depth);

static void gen_cond(fz_gen *g) {
    if (pick(&g->in, 2)) {
        gen(g, IS, 2);
        emit(&g->out, " %s ", cmps[pick(&g->in, 6)]);
        gen(g, IS, 2);
    } else {
        gen(g, FS, 2);
        emit(&g->out, " %s ", cmps[pick(&g->in, 6)]);
        gen(g, FS, 2);
    }
}

/* One statement at nesting `depth` (0 = kernel body). */
static void gen_stmt(fz_gen *g, int depth) {
    fz_in *in = &g->in;
    fz_out *o = &g->out;
    g->stmts++;
    indent(g, depth);
    unsigned k = pick(in, 14);
    if (depth >= MAX_STMT_DEPTH && k >= 6 && k <= 9) k = 0;
    switch (k) {
    case 0: case 1: {
        int kind = (int)pick(in, NKIND);
        static const char prefix[NKIND] = {'f', 'i', 'b', 'g', 'j'};
        const char *nm = new_name(g, prefix[kind]);
        if (!nm) { emit(o, "acc += a;\n"); return; }
        emit(o, "let %s = ", nm);
        gen(g, kind, 0);
        emit(o, ";\n");
        add_name(g, kind, nm);
        break;
    }
    case 2: emit(o, "acc %s ", pick(in, 2) ? "=" : "+="); gen(g, FB, 0); emit(o, ";\n"); break;
    case 3: emit(o, "iacc %s ", pick(in, 2) ? "=" : "^="); gen(g, IB, 0); emit(o, ";\n"); break;
    case 4: emit(o, "t %s ", pick(in, 2) ? "=" : "*="); gen(g, FS, 0); emit(o, ";\n"); break;
    case 5:
        if (pick(in, 2)) {
            emit(o, "store(out + "); gen(g, IB, 0); emit(o, ", "); gen(g, FB, 0);
        } else {
            emit(o, "store(iout + "); gen(g, IB, 0); emit(o, ", "); gen(g, pick(in, 2) ? IS : IB, 0);
        }
        if (pick(in, 2)) { emit(o, ", "); gen(g, BB, 0); }
        emit(o, ");\n");
        break;
    case 6:
        emit(o, "if ");
        gen_cond(g);
        emit(o, " {\n");
        gen_block(g, depth + 1);
        indent(g, depth);
        if (pick(in, 2)) {
            emit(o, "} else {\n");
            gen_block(g, depth + 1);
            indent(g, depth);
        }
        emit(o, "}\n");
        break;
    case 7: {
        /* bounded run-time loop; the loop var is an i32 scalar */
        const char *nm = new_name(g, 'k');
        if (!nm) { emit(o, "t += 1.0;\n"); return; }
        static const char *const starts[] = {"0", "1", "-2", "pid"};
        static const char *const ends[] = {"0", "1", "2", "3", "4", "n"};
        unsigned e = pick(in, depth == 0 ? 6 : 5);
        unsigned st = pick(in, 4);
        if (st == 3 && e == 5) st = 0; /* pid..n is fine, keep it simple */
        /* (positive constant steps; a negative one counts down, 0 is rejected) */
        emit(o, "for %s in range(%s, %s, %u) {\n", nm, starts[st], ends[e], 1 + pick(in, 3));
        g->loop_depth++;
        int save = g->nnames[IS];
        add_name(g, IS, nm);
        gen_block(g, depth + 1);
        g->nnames[IS] = save;
        g->loop_depth--;
        indent(g, depth);
        emit(o, "}\n");
        break;
    }
    case 8: {
        const char *nm = new_name(g, 'u');
        if (!nm) { emit(o, "t += 1.0;\n"); return; }
        emit(o, "for %s in static_range(%u) {\n", nm, pick(in, 5));
        g->static_depth++;
        int save = g->nnames[IS];
        add_name(g, IS, nm);
        gen_block(g, depth + 1);
        g->nnames[IS] = save;
        g->static_depth--;
        indent(g, depth);
        emit(o, "}\n");
        break;
    }
    case 9: {
        /* while: count up first, so break/continue cannot skip it */
        const char *nm = new_name(g, 'w');
        if (!nm) { emit(o, "t += 1.0;\n"); return; }
        emit(o, "var %s = 0;\n", nm);
        indent(g, depth);
        emit(o, "while %s < %u {\n", nm, pick(in, 4));
        indent(g, depth + 1);
        emit(o, "%s += 1;\n", nm);
        g->loop_depth++;
        int save = g->nnames[IS];
        add_name(g, IS, nm);
        gen_block(g, depth + 1);
        g->nnames[IS] = save;
        g->loop_depth--;
        indent(g, depth);
        emit(o, "}\n");
        break;
    }
    case 10:
        if (g->loop_depth > 0 && g->static_depth == 0) {
            emit(o, "if ");
            gen_cond(g);
            emit(o, " { %s; }\n", pick(in, 2) ? "break" : "continue");
        } else {
            emit(o, "t += 1.0;\n");
        }
        break;
    case 11: emit(o, "print(\"v\", "); gen(g, pick(in, 2) ? FB : IS, 0); emit(o, ");\n"); break;
    case 12:
        if (!g->two_d) {
            /* topk of a 1-D block: values and indices of the K largest */
            const char *v = new_name(g, 'p'), *ix = new_name(g, 'q');
            if (!v || !ix) { emit(o, "t += 1.0;\n"); return; }
            emit(o, "let (%s, %s) = topk(", v, ix);
            gen(g, FB, 0);
            emit(o, ", %u, 0);\n", 1u << pick(in, 3));
            indent(g, depth);
            emit(o, "t += sum(%s, 0) + (sum(%s, 0) as f32);\n", v, ix);
        } else if (pick(in, 2)) {
            emit(o, "tensor_desc(out, shape = [n, C], strides = [C, 1], block = [R, C]).store([");
            gen(g, IS, 0);
            emit(o, ", ");
            gen(g, IS, 0);
            emit(o, "], ");
            gen(g, FB, 0);
            emit(o, ");\n");
        } else {
            emit(o, "acc = where(m, acc, ");
            gen(g, FB, 0);
            emit(o, ");\n");
        }
        break;
    default: emit(o, "if "); gen_cond(g); emit(o, " { return; }\n"); break;
    }
}

static void gen_block(fz_gen *g, int depth) {
    int save[NKIND];
    memcpy(save, g->nnames, sizeof save);
    int count = 0;
    while (g->stmts < MAX_STMTS && count < 8 && pick(&g->in, 6) != 0) {
        gen_stmt(g, depth);
        count++;
    }
    memcpy(g->nnames, save, sizeof save);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static fz_gen g;
    static FILE *null_out;
    if (!null_out) null_out = fopen("/dev/null", "w");
    memset(&g, 0, sizeof g);
    g.in = (fz_in){data, size, 0};

    unsigned tmpl = pick(&g.in, 2);
    unsigned grid = 1 + pick(&g.in, 2);
    int n = (int)pick(&g.in, 40);
    static const float svals[] = {1.5f, 0.0f, -1.0f, 1e30f, 0.5f, 3.0f, -0.0f, 1e-3f};
    float s = svals[pick(&g.in, 8)];

    fz_out *o = &g.out;
    emit(o, "// FUZZ-INTERP n=%d s=%.9g grid=%u\n", n, (double)s, grid);
    emit(o, "fn h(u, v) { return u * v + 1.0; }\n"
            "fn fadd(u, v) { return u + v; }\n"
            "fn fmax(u, v) { return maximum(u, v); }\n");
    if (tmpl == 0) {
        g.two_d = 0;
        g.shape = "[BLOCK]";
        emit(o, "kernel fz(x: *f32, y: *f32, out: *f32, idx: *i32, iout: *i32, n: i32, s: f32,"
                " const BLOCK: i32 = %u) {\n", 1u << pick(&g.in, 5));
        emit(o, "    let pid = program_id(0);\n"
                "    let offs = pid * BLOCK + arange(0, BLOCK);\n");
    } else {
        g.two_d = 1;
        g.shape = "[R, C]";
        unsigned r = 1u << pick(&g.in, 3), c = 1u << pick(&g.in, 3);
        if (pick(&g.in, 4) == 0) r = c = 16, g.square16 = 1;
        emit(o, "kernel fz(x: *f32, y: *f32, out: *f32, idx: *i32, iout: *i32, n: i32, s: f32,"
                " const R: i32 = %u, const C: i32 = %u) {\n", r, c);
        emit(o, "    let pid = program_id(0);\n"
                "    let offs = pid * R * C + arange(0, R)[:, None] * C + arange(0, C)[None, :];\n");
    }
    emit(o, "    let m = offs < n;\n"
            "    let a = load(x + offs, m);\n"
            "    let b = load(y + offs, m, 1.0);\n"
            "    let k = load(idx + offs, m);\n"
            "    var acc = zeros(%s, f32);\n"
            "    var iacc = zeros(%s, i32);\n"
            "    var t = s;\n", g.shape, g.shape);
    add_name(&g, FB, "a");
    add_name(&g, FB, "b");
    add_name(&g, FB, "acc");
    add_name(&g, IB, "offs");
    add_name(&g, IB, "k");
    add_name(&g, IB, "iacc");
    add_name(&g, BB, "m");
    add_name(&g, FS, "s");
    add_name(&g, FS, "t");
    add_name(&g, IS, "pid");
    add_name(&g, IS, "n");
    gen_block(&g, 0);
    emit(o, "    store(out + offs, acc + t, m);\n"
            "    store(iout + offs, iacc, m);\n"
            "}\n");
    if (o->overflow) return 0;
    static int print = -1;
    if (print < 0) print = getenv("FZ_PRINT") != NULL;
    if (print) fwrite(o->buf, 1, o->len, stderr);
    fz_run_source(o->buf, o->len, n, s, grid, null_out ? null_out : stdout, print);
    return 0;
}

/* test_meta — blk-meta line parsing (runtime/meta.c) without any driver:
 * well-formed lines and their fields, variants of one kernel, cluster=, and
 * each kind of malformed line with its exact message. */
#include "meta.h"
#include "rt_test.h"

static void good_line(void) {
    const char *t = "// blk-meta v1 kernel=vector_add entry=vector_add num_warps=4 shared=0 "
                    "params=x:*f32,y:*f32,out:*f32,n:i32 consts=BLOCK:i32:1024 spec=x:d16,y:d16,out:d16,n:-\n";
    rt_meta m;
    OK(rt_meta_parse(t, strlen(t), &m));
    CHECK(m.nkernels == 1, "one kernel, got %d", m.nkernels);
    if (m.nkernels != 1) return;
    const rt_meta_kernel *k = &m.kernels[0];
    CHECK(strcmp(k->name, "vector_add") == 0, "name %s", k->name);
    CHECK(k->nparams == 4, "nparams %d", k->nparams);
    CHECK(strcmp(k->params[0].name, "x") == 0 && k->params[0].type == RT_T_PTR && k->params[0].pointee == RT_T_F32 &&
              !k->params[0].is_const,
          "param x");
    CHECK(strcmp(k->params[3].name, "n") == 0 && k->params[3].type == RT_T_I32, "param n");
    CHECK(strcmp(k->params[2].type_str, "*f32") == 0, "type_str %s", k->params[2].type_str);
    CHECK(k->nconsts == 1 && strcmp(k->consts[0].name, "BLOCK") == 0 && k->consts[0].type == RT_T_I32 &&
              k->consts[0].ival == 1024,
          "const BLOCK");
    CHECK(k->nvariants == 1, "one variant");
    const rt_meta_variant *v = &k->variants[0];
    CHECK(strcmp(v->entry, "vector_add") == 0 && v->num_warps == 4 && v->shared == 0 && v->line == 1, "variant fields");
    CHECK(v->cluster == 1, "no cluster= field: cluster 1, got %d", v->cluster);
    CHECK(v->spec[0] == RT_SPEC_D16 && v->spec[1] == RT_SPEC_D16 && v->spec[2] == RT_SPEC_D16 &&
              v->spec[3] == RT_SPEC_NONE,
          "spec");
    rt_meta_free(&m);
}

/* Among PTX lines, with variants, const pointers, every type, float and bool
 * consts, optional fields left out, a kernel without parameters. */
static void variants_and_types(void) {
    const char *t =
        ".version 8.0\n"
        "  //   blk-meta v1 kernel=k entry=k_d16 num_warps=8 shared=65536 params=a:*const bf16,n:i64 spec=d16,d16\n"
        ".visible .entry k_d16()\n"
        "// blk-meta v1 kernel=k entry=k_any num_warps=4 shared=0 params=a:*const.bf16,n:i64\n"
        "// blk-meta v1 kernel=k entry=k_one num_warps=4 shared=0 params=a:*const.bf16,n:i64 spec=a:-,n:eq1\r\n"
        "// blk-meta v1 kernel=noargs entry=noargs num_warps=1 shared=0 params= consts=\n"
        "// blk-meta v1 kernel=all entry=all num_warps=32 shared=0 "
        "params=a:bool,b:i8,c:i16,d:i32,e:i64,f:u8,g:u16,h:u32,i:u64,j:f16,k:bf16,l:f32,m:f64,n:f8e4m3,o:f8e5m2,p:*u8 "
        "consts=S:f32:0.5,B:bool:true,N:i64:-7\n"
        "// blk-metadata is not ours\n"
        "// a comment mentioning blk-meta v2 is not a meta line\n";
    rt_meta m;
    OK(rt_meta_parse(t, strlen(t), &m));
    CHECK(m.nkernels == 3, "3 kernels, got %d", m.nkernels);
    if (m.nkernels != 3) return;
    const rt_meta_kernel *k = &m.kernels[0];
    CHECK(k->nvariants == 3, "k has 3 variants");
    CHECK(k->params[0].type == RT_T_PTR && k->params[0].pointee == RT_T_BF16 && k->params[0].is_const &&
              strcmp(k->params[0].type_str, "*const.bf16") == 0,
          "*const bf16 parsed, type_str '%s'", k->params[0].type_str);
    CHECK(k->variants[0].line == 2 && k->variants[0].shared == 65536 && k->variants[0].num_warps == 8, "k_d16 fields");
    CHECK(k->variants[1].spec[0] == RT_SPEC_NONE && k->variants[1].spec[1] == RT_SPEC_NONE, "k_any has no spec");
    CHECK(k->variants[2].spec[1] == RT_SPEC_EQ1, "k_one: n eq1 (CRLF line)");
    CHECK(m.kernels[1].nparams == 0 && m.kernels[1].nconsts == 0, "noargs");
    const rt_meta_kernel *a = &m.kernels[2];
    CHECK(a->nparams == 16, "all: 16 params");
    static const rt_type want[] = {RT_T_BOOL, RT_T_I8,  RT_T_I16, RT_T_I32, RT_T_I64, RT_T_U8,     RT_T_U16,    RT_T_U32,
                                   RT_T_U64,  RT_T_F16, RT_T_BF16, RT_T_F32, RT_T_F64, RT_T_F8E4M3, RT_T_F8E5M2, RT_T_PTR};
    for (int i = 0; i < 16 && i < a->nparams; i++) CHECK(a->params[i].type == want[i], "param %d type", i);
    CHECK(a->nconsts == 3 && a->consts[0].fval == 0.5 && a->consts[1].ival == 1 && a->consts[2].ival == -7,
          "float, bool, negative consts");
    rt_meta_free(&m);

    /* No meta lines at all: fine, nothing described. */
    OK(rt_meta_parse(".version 8.0\n.entry x()\n{ ret; }\n", 31, &m));
    CHECK(m.nkernels == 0, "no meta -> no kernels");
    rt_meta_free(&m);
}

/* cluster=N (1, 2, 4 or 8) per variant; 1 where absent. */
static void cluster(void) {
    const char *t = "// blk-meta v1 kernel=k entry=k_c2 num_warps=4 shared=0 params=x:*f32 spec=d16 cluster=2\n"
                    "// blk-meta v1 kernel=k entry=k num_warps=4 shared=0 params=x:*f32\n"
                    "// blk-meta v1 kernel=c8 entry=c8 num_warps=4 shared=0 cluster=8 params=\n"
                    "// blk-meta v1 kernel=c1 entry=c1 num_warps=4 shared=0 params= cluster=1\n";
    rt_meta m;
    OK(rt_meta_parse(t, strlen(t), &m));
    CHECK(m.nkernels == 3, "3 kernels, got %d", m.nkernels);
    if (m.nkernels != 3) return;
    CHECK(m.kernels[0].nvariants == 2, "k has 2 variants");
    if (m.kernels[0].nvariants == 2)
        CHECK(m.kernels[0].variants[0].cluster == 2 && m.kernels[0].variants[1].cluster == 1,
              "k_c2: cluster 2 (got %d), k: 1 (got %d)", m.kernels[0].variants[0].cluster,
              m.kernels[0].variants[1].cluster);
    CHECK(m.kernels[1].variants[0].cluster == 8, "c8: cluster 8, got %d", m.kernels[1].variants[0].cluster);
    CHECK(m.kernels[2].variants[0].cluster == 1, "c1: cluster 1, got %d", m.kernels[2].variants[0].cluster);
    rt_meta_free(&m);
}

static void bad(const char *line, const char *message) {
    rt_meta m;
    char text[1024];
    snprintf(text, sizeof text, ".version 8.0\n%s\n", line);
    FAILS_EXACTLY(rt_meta_parse(text, strlen(text), &m), BLKRT_ERR_META, message);
    CHECK(m.nkernels == 0 && m.pool == NULL, "empty after an error");
    rt_meta_free(&m);
}

#define L "// blk-meta v1 kernel=k entry=k num_warps=4 shared=0 "

static void malformed(void) {
    bad("// blk-meta", "blk-meta line 2: no version (expected 'v1')");
    bad("// blk-meta v2 kernel=k", "blk-meta line 2: version 'v2' is newer than this runtime understands (v1)");
    bad("// blk-meta kernel=k", "blk-meta line 2: expected 'v1' after 'blk-meta', got 'kernel=k'");
    bad(L "params=x:*f32 bogus", "blk-meta line 2: 'bogus' is not key=value");
    bad(L "params=x:*f32 colour=red", "blk-meta line 2: unknown key 'colour'");
    bad(L "params=x:*f32 shared=4", "blk-meta line 2: key 'shared' appears twice");
    bad("// blk-meta v1 kernel=k num_warps=4 shared=0 params=", "blk-meta line 2: missing 'entry='");
    bad("// blk-meta v1 kernel=k entry=k shared=0 params=", "blk-meta line 2: missing 'num_warps='");
    bad("// blk-meta v1 kernel=k entry=k num_warps=4 shared=0", "blk-meta line 2: missing 'params='");
    bad("// blk-meta v1 kernel=9k entry=k num_warps=4 shared=0 params=", "blk-meta line 2: bad kernel name '9k'");
    bad("// blk-meta v1 kernel=k entry=k- num_warps=4 shared=0 params=", "blk-meta line 2: bad entry name 'k-'");
    bad("// blk-meta v1 kernel=k entry=k num_warps=0 shared=0 params=", "blk-meta line 2: num_warps must be 1..32, got 0");
    bad("// blk-meta v1 kernel=k entry=k num_warps=64 shared=0 params=", "blk-meta line 2: num_warps must be 1..32, got 64");
    bad("// blk-meta v1 kernel=k entry=k num_warps=four shared=0 params=",
        "blk-meta line 2: num_warps 'four' is not an integer");
    bad("// blk-meta v1 kernel=k entry=k num_warps=4 shared=-1 params=",
        "blk-meta line 2: shared must be 0..2147483647, got -1");
    bad(L "params=x", "blk-meta line 2: parameter 'x' has no type (write name:type)");
    bad(L "params=x:f33", "blk-meta line 2: parameter 'x' has unknown type 'f33'");
    bad(L "params=x:*", "blk-meta line 2: parameter 'x' has unknown type '*'");
    bad(L "params=x:*const f99", "blk-meta line 2: parameter 'x' has unknown type '*const f99'");
    bad(L "params=x:*const.f99", "blk-meta line 2: parameter 'x' has unknown type '*const.f99'");
    bad(L "params=x:*constf32", "blk-meta line 2: parameter 'x' has unknown type '*constf32'");
    bad(L "params=x:i32,x:i32", "blk-meta line 2: parameter 'x' is listed twice");
    bad(L "params=:i32", "blk-meta line 2: bad parameter name ''");
    bad(L "params=x:i32 consts=B", "blk-meta line 2: const 'B' is not NAME:TYPE:VALUE");
    bad(L "params=x:i32 consts=B:i33:1", "blk-meta line 2: const 'B' has unknown type 'i33'");
    bad(L "params=x:i32 consts=B:i32:1x", "blk-meta line 2: const 'B' has a bad value '1x'");
    bad(L "params=x:i32 consts=B:bool:maybe", "blk-meta line 2: const 'B' (bool) has a bad value 'maybe'");
    bad(L "params=x:i32 spec=d16,d16", "blk-meta line 2: spec has 2 entries but the kernel has 1 parameters");
    bad(L "params=x:i32 spec=y:d16", "blk-meta line 2: spec entry 1 names 'y' but parameter 1 is 'x'");
    bad(L "params=x:f32 spec=d16",
        "blk-meta line 2: spec 'd16' of parameter 'x' needs a pointer or integer parameter, not f32");
    bad(L "params=x:*f32 spec=eq1", "blk-meta line 2: spec 'eq1' of parameter 'x' needs an integer parameter, not *f32");
    bad(L "params=x:i32 spec=d8", "blk-meta line 2: unknown spec 'd8' for parameter 'x' (d16, eq1 or -)");
    bad(L "params=x:i32 cluster=3", "blk-meta line 2: cluster must be 1, 2, 4 or 8, got 3");
    bad(L "params=x:i32 cluster=0", "blk-meta line 2: cluster must be 1, 2, 4 or 8, got 0");
    bad(L "params=x:i32 cluster=16", "blk-meta line 2: cluster must be 1, 2, 4 or 8, got 16");
    bad(L "params=x:i32 cluster=-2", "blk-meta line 2: cluster must be 1, 2, 4 or 8, got -2");
    bad(L "params=x:i32 cluster=x", "blk-meta line 2: cluster 'x' is not an integer");
    bad(L "params=x:i32 cluster=2x", "blk-meta line 2: cluster '2x' is not an integer");
    bad(L "params=x:i32 cluster=", "blk-meta line 2: cluster '' is not an integer");
    bad(L "params=x:i32 cluster=2 cluster=2", "blk-meta line 2: key 'cluster' appears twice");

    /* Inconsistent variants of one kernel. */
    bad(L "params=x:i32\n" L "params=x:i32", "blk-meta line 3: entry 'k' is already described on line 2");
    bad(L "params=x:i32\n// blk-meta v1 kernel=k entry=k2 num_warps=4 shared=0 params=x:i64",
        "blk-meta line 3: kernel 'k' has different params or consts than on line 2");
    bad(L "params=x:i32 consts=B:i32:1\n// blk-meta v1 kernel=k entry=k2 num_warps=4 shared=0 params=x:i32 consts=B:i32:2",
        "blk-meta line 3: kernel 'k' has different params or consts than on line 2");
    bad(L "params=x:i32 spec=d16\n// blk-meta v1 kernel=k entry=k2 num_warps=4 shared=0 params=x:i32 spec=x:d16",
        "blk-meta line 3: kernel 'k' already has a variant with this spec (entry 'k', line 2)");

    /* 65 parameters: more than the runtime's masks hold. */
    char many[2048] = L "params=";
    for (int i = 0; i < 65; i++) snprintf(many + strlen(many), sizeof many - strlen(many), "%sp%d:i32", i ? "," : "", i);
    bad(many, "blk-meta line 2: 65 parameters (at most 64)");
}

int main(void) {
    good_line();
    variants_and_types();
    cluster();
    malformed();
    return test_finish("test_meta");
}

/* test_tmap — TMA tensor maps (tmaps= on a blk-meta line; runtime/tmap.c,
 * docs/runtime.md "Tensor maps") without a GPU:
 *
 *   - parsing: good lines field by field, every error with its exact message;
 *   - rt_tmap_eval: the cuTensorMapEncodeTiled arguments (dtype, rank, base,
 *     dims from products of arguments, strides in bytes, box, swizzle, L2,
 *     OOB fill) and each reason a map does not fit; 3000 random launches
 *     against a reference written from cuda.h's rules;
 *   - launches on the fake driver (whose encoder checks the documented
 *     requirements and writes its arguments into the map): the TMA variant
 *     when the maps fit, the next variant otherwise (misaligned base, stride
 *     not a multiple of 16 bytes, zero dim); the maps' bytes after the
 *     declared params; the cache (one encode per new key, bounded, round
 *     robin); an encode failure named; graph capture and the profiler;
 *     8 threads; lazy variants from source falling back to the
 *     unspecialised one;
 *   - `rt_test_tmap notmap` (a fake driver without cuTensorMapEncodeTiled):
 *     loads work, a launch needing maps fails with a clear message, others run.
 */
#include <pthread.h>
#include <stdlib.h>

#include "blk/blkrt.h"
#include "cuda_api.h"
#include "fake_cuda.h"
#include "meta.h"
#define RT_NO_ALLOC_REDIRECT /* the compiler hook's results are libc's (the runtime frees them so) */
#include "rt.h"
#include "rt_test.h"

static fake_api F;
static blkrt_device *d;

/* ---- parsing ---- */
#define MM_PARAMS "params=a:*bf16,b:*bf16,c:*f32,M:i32,N:i32,K:i32"
#define MM_LINE(entry, extra) "// blk-meta v1 kernel=mm entry=" entry " num_warps=8 shared=1024 " MM_PARAMS extra "\n"

static void parse_good(void) {
    const char *t = MM_LINE("mm_tma", " spec=d16,d16,d16,-,-,- tmaps=a:K,M:K:64,8:128;b:N,K:N:64,64:128")
        MM_LINE("mm", "")
        "// blk-meta v1 kernel=g entry=g num_warps=4 shared=0 params=x:*f8e4m3,B:i64,H:u32,y:*const.f32 "
        "tmaps=x:B*H*64,7,3,2,1:64*B,448,3,2:16,1,1,1,1:0;y:B::4:32\n"
        "// blk-meta v1 kernel=e entry=e num_warps=4 shared=0 params=x:*f32 tmaps=\n"
        "// blk-meta v1 kernel=s entry=s num_warps=4 shared=0 params=w:*bf16,h:i32,H:i32,G:i32 "
        "tmaps=w:H*128+2*G*128,h:H*128+2*G*128:64,64:128\n";
    rt_meta m;
    OK(rt_meta_parse(t, strlen(t), &m));
    CHECK(m.nkernels == 4, "4 kernels, got %d", m.nkernels);
    if (m.nkernels != 4) return;
    const rt_meta_kernel *k = &m.kernels[0];
    CHECK(k->nvariants == 2 && k->variants[0].ntmaps == 2 && k->variants[1].ntmaps == 0, "mm: 2 maps, then none");
    const rt_tmap *a = &k->variants[0].tmaps[0], *b = &k->variants[0].tmaps[1];
    CHECK(a->arg == 0 && a->dtype == RT_T_BF16 && a->rank == 2 && a->swizzle == 128, "map a header");
    CHECK(a->dim[0].nfactors == 1 && a->dim[0].f[0].param == 5 && a->dim[1].nfactors == 1 && a->dim[1].f[0].param == 3,
          "a dims K, M");
    CHECK(a->stride[0].nfactors == 1 && a->stride[0].f[0].param == 5, "a stride K");
    CHECK(a->box[0] == 64 && a->box[1] == 8, "a box 64,8");
    CHECK(b->arg == 1 && b->dim[0].f[0].param == 4 && b->dim[1].f[0].param == 5 && b->stride[0].f[0].param == 4 &&
              b->box[0] == 64 && b->box[1] == 64 && b->swizzle == 128,
          "map b");
    const rt_tmap *x = &m.kernels[1].variants[0].tmaps[0], *y = &m.kernels[1].variants[0].tmaps[1];
    CHECK(m.kernels[1].variants[0].ntmaps == 2, "g: 2 maps");
    CHECK(x->dtype == RT_T_F8E4M3 && x->rank == 5 && x->swizzle == 0, "x: f8, rank 5");
    CHECK(x->dim[0].nfactors == 3 && x->dim[0].f[0].param == 1 && x->dim[0].f[1].param == 2 &&
              x->dim[0].f[2].param == -1 && x->dim[0].f[2].value == 64,
          "x dim 0 = B*H*64");
    CHECK(x->dim[4].nfactors == 1 && x->dim[4].f[0].param == -1 && x->dim[4].f[0].value == 1, "x dim 4 = 1");
    CHECK(x->stride[0].nfactors == 2 && x->stride[0].f[0].value == 64 && x->stride[0].f[1].param == 1 &&
              x->stride[3].f[0].value == 2,
          "x strides");
    CHECK(x->box[0] == 16 && x->box[4] == 1, "x box");
    CHECK(y->arg == 3 && y->dtype == RT_T_F32 && y->rank == 1 && y->box[0] == 4 && y->swizzle == 32, "y: rank 1");
    CHECK(m.kernels[2].variants[0].ntmaps == 0 && m.kernels[2].variants[0].tmaps == NULL, "tmaps= empty: none");
    /* a sum of products (qkv_proj's weight row stride (H + 2 * G) * 128): flat,
     * '+' marking the first factor of each term after the first */
    const rt_tmap *w = &m.kernels[3].variants[0].tmaps[0];
    for (int i = 0; i < 2; i++) {
        const rt_tmap_expr *e = i ? &w->stride[0] : &w->dim[0];
        CHECK(e->nfactors == 5 && e->f[0].param == 2 && !e->f[0].plus && e->f[1].param == -1 &&
                  e->f[1].value == 128 && !e->f[1].plus && e->f[2].param == -1 && e->f[2].value == 2 &&
                  e->f[2].plus && e->f[3].param == 3 && !e->f[3].plus && e->f[4].value == 128 && !e->f[4].plus,
              "w %s = H*128+2*G*128", i ? "stride" : "dim 0");
    }
    CHECK(w->dim[1].nfactors == 1 && w->dim[1].f[0].param == 1 && !w->dim[1].f[0].plus, "w dim 1 = h");
    CHECK(!x->dim[0].f[1].plus && !x->dim[0].f[2].plus, "a product has no '+'");
    rt_meta_free(&m);

    /* the 1st, 2nd, ... allocation of the parse failing: out of memory, an
     * empty result, until a run needs no more */
    int failed = 0;
    for (long nth = 1;; nth++) {
        rt_alloc_fail_at(nth);
        blkrt_status st = rt_meta_parse(t, strlen(t), &m);
        bool injected = rt_alloc_fail_at(0) >= nth;
        if (!injected) {
            CHECK(st == BLKRT_OK && m.nkernels == 4, "no failure injected: parsed");
            rt_meta_free(&m);
            break;
        }
        failed++;
        CHECK(st == BLKRT_ERR_OUT_OF_MEMORY && m.nkernels == 0 && m.pool == NULL, "allocation %ld failing: %s", nth,
              blkrt_status_name(st));
        rt_meta_free(&m);
    }
    CHECK(failed >= 2, "the parse allocates (%d failures injected)", failed);
}

static void bad(const char *line, const char *message) {
    rt_meta m;
    char text[2048];
    snprintf(text, sizeof text, ".version 8.0\n%s\n", line);
    FAILS_EXACTLY(rt_meta_parse(text, strlen(text), &m), BLKRT_ERR_META, message);
    rt_meta_free(&m);
}

#define L "// blk-meta v1 kernel=mm entry=mm num_warps=4 shared=0 params=a:*bf16,n:i32,s:f32,K:i64 tmaps="

static void parse_errors(void) {
    bad(L "a:K", "blk-meta line 2: tmaps: 'a:K' is not ARG:DIMS:STRIDES:BOX:SWIZZLE");
    bad(L "a:K:::64:0", "blk-meta line 2: tmaps: 'a:K:::64:0' is not ARG:DIMS:STRIDES:BOX:SWIZZLE");
    bad(L "Q:K::64:0", "blk-meta line 2: tmaps: unknown parameter 'Q'");
    bad(L "a:Q::64:0", "blk-meta line 2: tmaps: unknown parameter 'Q'");
    bad(L "a:K,n:Q:64,8:0", "blk-meta line 2: tmaps: unknown parameter 'Q'");
    bad(L "n:K::64:0", "blk-meta line 2: tmaps: parameter 'n' is i32, not a pointer");
    bad(L "a:::64:0", "blk-meta line 2: tmaps: the map of 'a' has rank 0 (1..5)");
    bad(L "a:1,1,1,1,1,1:1,1,1,1,1:8,1,1,1,1,1:0", "blk-meta line 2: tmaps: the map of 'a' has rank 6 (1..5)");
    bad(L "a:K,n::64,8:0", "blk-meta line 2: tmaps: the map of 'a' has 0 strides; rank 2 needs 1");
    bad(L "a:K:K:64:0", "blk-meta line 2: tmaps: the map of 'a' has 1 strides; rank 1 needs 0");
    bad(L "a:K,n:K:64:0", "blk-meta line 2: tmaps: the map of 'a' has 1 box sizes; rank 2 needs 2");
    bad(L "a:K::300:0", "blk-meta line 2: tmaps: box of 'a' must be 1..256, got 300");
    bad(L "a:K::0:0", "blk-meta line 2: tmaps: box of 'a' must be 1..256, got 0");
    bad(L "a:K::x:0", "blk-meta line 2: tmaps: box of 'a' 'x' is not an integer");
    bad(L "a:K::64:16", "blk-meta line 2: tmaps: swizzle of 'a' must be 0, 32, 64 or 128, got 16");
    bad(L "a:K::64:256", "blk-meta line 2: tmaps: swizzle of 'a' must be 0, 32, 64 or 128, got 256");
    bad(L "a:K::64:", "blk-meta line 2: tmaps: swizzle of 'a' '' is not an integer");
    bad(L "a:s::64:0", "blk-meta line 2: tmaps: factor 's' in the map of 'a' is a f32 parameter, not an integer");
    bad(L "a:K*a::64:0", "blk-meta line 2: tmaps: factor 'a' in the map of 'a' is a *bf16 parameter, not an integer");
    bad(L "a:3x::64:0",
        "blk-meta line 2: tmaps: bad factor '3x' in the map of 'a' (a decimal 1..2^40 or an integer parameter)");
    bad(L "a:0::64:0",
        "blk-meta line 2: tmaps: bad factor '0' in the map of 'a' (a decimal 1..2^40 or an integer parameter)");
    bad(L "a:K*::64:0",
        "blk-meta line 2: tmaps: bad factor '' in the map of 'a' (a decimal 1..2^40 or an integer parameter)");
    bad(L "a:99999999999999::64:0",
        "blk-meta line 2: tmaps: bad factor '99999999999999' in the map of 'a' (a decimal 1..2^40 or an integer "
        "parameter)");
    bad(L "a:K*n*K*n*K*n*K*n*K::64:0",
        "blk-meta line 2: tmaps: 'K*n*K*n*K*n*K*n*K' in the map of 'a' has 9 factors (at most 8)");
    /* sums: at most 4 terms and 8 factors in all, no empty term, no other operator */
    bad(L "a:K+n+K+n+K::64:0", "blk-meta line 2: tmaps: 'K+n+K+n+K' in the map of 'a' has 5 terms (at most 4)");
    bad(L "a:K*n+K*n+K*n+K*n*K::64:0",
        "blk-meta line 2: tmaps: 'K*n+K*n+K*n+K*n*K' in the map of 'a' has 9 factors (at most 8)");
    bad(L "a:K+::64:0",
        "blk-meta line 2: tmaps: bad factor '' in the map of 'a' (a decimal 1..2^40 or an integer parameter)");
    bad(L "a:+K::64:0",
        "blk-meta line 2: tmaps: bad factor '' in the map of 'a' (a decimal 1..2^40 or an integer parameter)");
    bad(L "a:K,n*2+*K:n:64,8:0",
        "blk-meta line 2: tmaps: bad factor '' in the map of 'a' (a decimal 1..2^40 or an integer parameter)");
    bad(L "a:K-n::64:0",
        "blk-meta line 2: tmaps: bad factor 'K-n' in the map of 'a' (a decimal 1..2^40 or an integer parameter)");
    bad(L "a:K+s::64:0", "blk-meta line 2: tmaps: factor 's' in the map of 'a' is a f32 parameter, not an integer");
    bad(L "a:K+0::64:0",
        "blk-meta line 2: tmaps: bad factor '0' in the map of 'a' (a decimal 1..2^40 or an integer parameter)");
    bad(L "a:K,n:K+Q:64,8:0", "blk-meta line 2: tmaps: unknown parameter 'Q'");
    char many[2048] = L;
    for (int i = 0; i < RT_MAX_TMAPS + 1; i++)
        snprintf(many + strlen(many), sizeof many - strlen(many), "%sa:K::64:0", i ? ";" : "");
    bad(many, "blk-meta line 2: tmaps: 17 maps (at most 16)");

    /* One spec may have a variant with maps and one without, not two of either. */
    bad(MM_LINE("m1", " spec=d16,d16,d16,-,-,- tmaps=a:K::64:0") MM_LINE("m2", " spec=d16,d16,d16,-,-,- tmaps=b:K::64:0"),
        "blk-meta line 3: kernel 'mm' already has a variant with this spec and tensor maps (entry 'm1', line 2)");
    rt_meta m;
    const char *pair = MM_LINE("m1", " spec=d16,d16,d16,-,-,-") MM_LINE("m2", " spec=d16,d16,d16,-,-,- tmaps=a:K::64:0");
    OK(rt_meta_parse(pair, strlen(pair), &m));
    rt_meta_free(&m);
}

/* ---- evaluation (pure) ---- */
static rt_tmap parse_one(const char *params, const char *map) {
    char text[1024];
    snprintf(text, sizeof text, "// blk-meta v1 kernel=k entry=k num_warps=4 shared=0 params=%s tmaps=%s\n", params,
             map);
    rt_meta m;
    rt_tmap t;
    memset(&t, 0, sizeof t);
    OK(rt_meta_parse(text, strlen(text), &m));
    if (m.nkernels == 1) t = m.kernels[0].variants[0].tmaps[0];
    rt_meta_free(&m);
    return t;
}

static void eval(void) {
    /* matmul's A[M, K] bf16 row-major: dims K, M; stride K elements = 2K bytes */
    rt_tmap a = parse_one("a:*bf16,M:i32,K:i32", "a:K,M:K:64,8:128");
    blkrt_arg args[] = {BLKRT_PTR(0x7f0000001000ull), BLKRT_INT(100), BLKRT_INT(72)};
    rt_tmap_args ta;
    CHECK(rt_tmap_eval(&a, args, &ta) == RT_TMAP_FITS, "A fits");
    CHECK(ta.dtype == RT_CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 && ta.rank == 2 && ta.addr == 0x7f0000001000ull, "A header");
    CHECK(ta.dims[0] == 72 && ta.dims[1] == 100 && ta.strides[0] == 144, "A dims %llu,%llu stride %llu",
          (unsigned long long)ta.dims[0], (unsigned long long)ta.dims[1], (unsigned long long)ta.strides[0]);
    CHECK(ta.box[0] == 64 && ta.box[1] == 8 && ta.elem_strides[0] == 1 && ta.elem_strides[1] == 1, "A box");
    CHECK(ta.swizzle == RT_CU_TENSOR_MAP_SWIZZLE_128B && ta.interleave == RT_CU_TENSOR_MAP_INTERLEAVE_NONE &&
              ta.l2 == RT_CU_TENSOR_MAP_L2_PROMOTION_L2_128B && ta.oob == RT_CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE,
          "A enums");
    CHECK(ta.dims[2] == 0 && ta.strides[1] == 0 && ta.box[2] == 0, "zeros past the rank (the cache key)");

    /* each reason */
    struct {
        uint64_t base;
        int64_t M, K;
        rt_tmap_fit want;
    } cases[] = {
        {0, 8, 64, RT_TMAP_NULL_BASE},
        {0x1008, 8, 64, RT_TMAP_BASE_ALIGN},
        {0x1010, 0, 64, RT_TMAP_DIM_RANGE},
        {0x1010, -8, 64, RT_TMAP_DIM_RANGE},
        {0x1010, 8, 0, RT_TMAP_DIM_RANGE},
        {0x1010, 8, 4, RT_TMAP_STRIDE_ALIGN},   /* 8 bytes */
        {0x1010, 8, 12, RT_TMAP_STRIDE_ALIGN},  /* 24 bytes */
        {0x1010, 8, 8, RT_TMAP_FITS},           /* 16 bytes */
        {0x1010, INT32_MAX, 8, RT_TMAP_FITS},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        blkrt_arg c[] = {BLKRT_PTR(cases[i].base), BLKRT_INT(cases[i].M), BLKRT_INT(cases[i].K)};
        rt_tmap_fit f = rt_tmap_eval(&a, c, &ta);
        CHECK(f == cases[i].want, "case %zu: %s, expected %s", i, rt_tmap_fit_text(f), rt_tmap_fit_text(cases[i].want));
    }

    /* products of i64 parameters: 2^32 fits, 2^32 + 16 does not; an
     * overflowing product and two negative factors are out of range */
    rt_tmap p = parse_one("x:*f32,B:i64,H:i64", "x:B*H,H:B*H:4,1:0");
    struct {
        int64_t B, H;
        rt_tmap_fit want;
    } prods[] = {
        {INT64_C(1) << 16, INT64_C(1) << 16, RT_TMAP_FITS},
        {(INT64_C(1) << 28) + 1, 16, RT_TMAP_DIM_RANGE},
        {INT64_C(1) << 40, INT64_C(1) << 40, RT_TMAP_DIM_RANGE},
        {-4, -4, RT_TMAP_DIM_RANGE},
        {INT64_C(1) << 20, INT64_C(1) << 12, RT_TMAP_FITS}, /* 2^32 again, other factors */
    };
    for (size_t i = 0; i < sizeof prods / sizeof prods[0]; i++) {
        blkrt_arg c[] = {BLKRT_PTR(0x2000), BLKRT_INT(prods[i].B), BLKRT_INT(prods[i].H)};
        rt_tmap_fit f = rt_tmap_eval(&p, c, &ta);
        CHECK(f == prods[i].want, "product %zu: %s, expected %s", i, rt_tmap_fit_text(f),
              rt_tmap_fit_text(prods[i].want));
    }
    blkrt_arg c1[] = {BLKRT_PTR(0x2000), BLKRT_INT(1 << 16), BLKRT_INT(1 << 16)};
    CHECK(rt_tmap_eval(&p, c1, &ta) == RT_TMAP_FITS && ta.dims[0] == (UINT64_C(1) << 32) &&
              ta.strides[0] == (UINT64_C(1) << 34),
          "dim 2^32, stride 2^32 * 4 bytes");
    /* a stride of 2^40 bytes is out of range, 2^40 - 16 is not */
    rt_tmap s = parse_one("x:*u8,S:i64", "x:16,4:S:16,1:0");
    blkrt_arg s1[] = {BLKRT_PTR(0x2000), BLKRT_INT(INT64_C(1) << 40)}, s2[] = {BLKRT_PTR(0x2000),
                                                                            BLKRT_INT((INT64_C(1) << 40) - 16)};
    CHECK(rt_tmap_eval(&s, s1, &ta) == RT_TMAP_STRIDE_RANGE, "stride 2^40 bytes");
    CHECK(rt_tmap_eval(&s, s2, &ta) == RT_TMAP_FITS && ta.dtype == RT_CU_TENSOR_MAP_DATA_TYPE_UINT8, "2^40 - 16");

    /* sums of products: qkv_proj's weight [h, (H + 2 G) * 128] bf16 */
    rt_tmap q = parse_one("w:*bf16,h:i32,H:i64,G:i64", "w:H*128+2*G*128,h:H*128+2*G*128:64,64:128");
    struct {
        int64_t H, G;
        rt_tmap_fit want;
        uint64_t dim; /* when it fits */
    } sums[] = {
        {32, 8, RT_TMAP_FITS, 6144},
        {32, 32, RT_TMAP_FITS, 12288},
        {1, 1, RT_TMAP_FITS, 384},
        {32, 0, RT_TMAP_DIM_RANGE, 0},  /* a factor < 1: not eligible, though the sum would be 4096 */
        {32, -4, RT_TMAP_DIM_RANGE, 0}, /* a negative term must not shrink the sum */
        {INT64_C(1) << 24, INT64_C(1) << 23, RT_TMAP_FITS, UINT64_C(1) << 32}, /* 2^31 + 2^31: 2^32 fits */
        {INT64_C(1) << 24, (INT64_C(1) << 23) + 1, RT_TMAP_DIM_RANGE, 0},  /* 2^32 + 256 */
        {INT64_C(1) << 56, 1, RT_TMAP_DIM_RANGE, 0},                        /* a term overflows: 2^63 */
        {INT64_C(1) << 55, INT64_C(1) << 54, RT_TMAP_DIM_RANGE, 0},         /* 2^62 + 2^62 overflows as a sum... */
        {(INT64_C(1) << 55) - 1, INT64_C(1) << 54, RT_TMAP_DIM_RANGE, 0},   /* ...and 2^63 - 128, out of range */
    };
    for (size_t i = 0; i < sizeof sums / sizeof sums[0]; i++) {
        blkrt_arg c[] = {BLKRT_PTR(0x2000), BLKRT_INT(4096), BLKRT_INT(sums[i].H), BLKRT_INT(sums[i].G)};
        rt_tmap_fit f = rt_tmap_eval(&q, c, &ta);
        CHECK(f == sums[i].want, "sum %zu: %s, expected %s", i, rt_tmap_fit_text(f), rt_tmap_fit_text(sums[i].want));
        if (f == RT_TMAP_FITS && sums[i].want == RT_TMAP_FITS)
            CHECK(ta.dims[0] == sums[i].dim && ta.dims[1] == 4096 && ta.strides[0] == 2 * sums[i].dim,
                  "sum %zu: dims %llu,%llu stride %llu", i, (unsigned long long)ta.dims[0],
                  (unsigned long long)ta.dims[1], (unsigned long long)ta.strides[0]);
    }
    /* a sum whose stride is not a multiple of 16 bytes (odd + 2 * 4 elements of 2 bytes) */
    rt_tmap q2 = parse_one("w:*bf16,h:i32,n:i32", "w:n+2*4,h:n+2*4:64,64:128");
    blkrt_arg odd[] = {BLKRT_PTR(0x2000), BLKRT_INT(64), BLKRT_INT(1001)},
              even[] = {BLKRT_PTR(0x2000), BLKRT_INT(64), BLKRT_INT(1000)};
    CHECK(rt_tmap_eval(&q2, odd, &ta) == RT_TMAP_STRIDE_ALIGN, "n + 8 = 1009 elements: stride not 16-byte");
    CHECK(rt_tmap_eval(&q2, even, &ta) == RT_TMAP_FITS && ta.strides[0] == 2016, "n + 8 = 1008 elements: fits");

    /* box rules: box[0] * element size a multiple of 16, within the swizzle span */
    blkrt_arg one[] = {BLKRT_PTR(0x2000), BLKRT_INT(64)};
    rt_tmap b1 = parse_one("x:*bf16,n:i32", "x:n::4:0"), b2 = parse_one("x:*bf16,n:i32", "x:n::64:32"),
            b3 = parse_one("x:*bf16,n:i32", "x:n::16:32"), b4 = parse_one("x:*f32,n:i32", "x:n::32:128");
    CHECK(rt_tmap_eval(&b1, one, &ta) == RT_TMAP_BOX_ALIGN, "box 4 x 2 bytes");
    CHECK(rt_tmap_eval(&b2, one, &ta) == RT_TMAP_BOX_SWIZZLE, "128 bytes over a 32-byte swizzle");
    CHECK(rt_tmap_eval(&b3, one, &ta) == RT_TMAP_FITS && ta.swizzle == RT_CU_TENSOR_MAP_SWIZZLE_32B, "32 bytes in 32");
    CHECK(rt_tmap_eval(&b4, one, &ta) == RT_TMAP_FITS && ta.swizzle == RT_CU_TENSOR_MAP_SWIZZLE_128B &&
              ta.dtype == RT_CU_TENSOR_MAP_DATA_TYPE_FLOAT32,
          "128 bytes in 128");

    /* every element type */
    static const struct {
        rt_type t;
        int want;
    } types[] = {
        {RT_T_BOOL, RT_CU_TENSOR_MAP_DATA_TYPE_UINT8},  {RT_T_I8, RT_CU_TENSOR_MAP_DATA_TYPE_UINT8},
        {RT_T_U8, RT_CU_TENSOR_MAP_DATA_TYPE_UINT8},    {RT_T_F8E4M3, RT_CU_TENSOR_MAP_DATA_TYPE_UINT8},
        {RT_T_F8E5M2, RT_CU_TENSOR_MAP_DATA_TYPE_UINT8}, {RT_T_I16, RT_CU_TENSOR_MAP_DATA_TYPE_UINT16},
        {RT_T_U16, RT_CU_TENSOR_MAP_DATA_TYPE_UINT16},  {RT_T_I32, RT_CU_TENSOR_MAP_DATA_TYPE_INT32},
        {RT_T_U32, RT_CU_TENSOR_MAP_DATA_TYPE_UINT32},  {RT_T_I64, RT_CU_TENSOR_MAP_DATA_TYPE_INT64},
        {RT_T_U64, RT_CU_TENSOR_MAP_DATA_TYPE_UINT64},  {RT_T_F16, RT_CU_TENSOR_MAP_DATA_TYPE_FLOAT16},
        {RT_T_BF16, RT_CU_TENSOR_MAP_DATA_TYPE_BFLOAT16}, {RT_T_F32, RT_CU_TENSOR_MAP_DATA_TYPE_FLOAT32},
        {RT_T_F64, RT_CU_TENSOR_MAP_DATA_TYPE_FLOAT64},
    };
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
        CHECK(rt_tmap_dtype(types[i].t) == types[i].want, "dtype of %s", rt_type_name(types[i].t));
}

/* The rule written again from cuda.h, for the random sweep: A[M, K] and
 * B[K, N] bf16 with boxes 64 x 8 and 64 x 64 (128-byte rows, 128B swizzle). */
static bool ref_fits(uint64_t a, uint64_t b, int64_t M, int64_t N, int64_t K) {
    bool dims = M >= 1 && N >= 1 && K >= 1;
    return a && b && a % 16 == 0 && b % 16 == 0 && dims && (2 * K) % 16 == 0 && (2 * N) % 16 == 0;
}

/* ---- launches on the fake driver ---- */
#define MM_ENTRY(name) \
    PTX_ENTRY(name, ".param .u64 a, .param .u64 b, .param .u64 c, .param .u32 M, .param .u32 N, .param .u32 K")
#define MM_TMA_ENTRY(name)                                                                                  \
    PTX_ENTRY(name, ".param .u64 a, .param .u64 b, .param .u64 c, .param .u32 M, .param .u32 N, .param .u32 K, " \
                    ".param .align 64 .b8 a_map[128], .param .align 64 .b8 b_map[128]")
#define MM_TMAPS " tmaps=a:K,M:K:64,8:128;b:N,K:N:64,64:128"

static const char PTX[] = ".version 8.0\n.target sm_90a\n.address_size 64\n"
    MM_LINE("mm_generic", "") MM_LINE("mm_tma", " spec=d16,d16,d16,-,-,-" MM_TMAPS)
    MM_ENTRY("mm_generic") MM_TMA_ENTRY("mm_tma")
    /* one spec with and without a map: the one with the map is tried first */
    "// blk-meta v1 kernel=pair entry=pair_plain num_warps=4 shared=0 params=x:*f16,n:i32 spec=d16,-\n"
    "// blk-meta v1 kernel=pair entry=pair_tma num_warps=4 shared=0 params=x:*f16,n:i32 spec=d16,- tmaps=x:n::64:0\n"
    "// blk-meta v1 kernel=pair entry=pair_any num_warps=4 shared=0 params=x:*f16,n:i32\n"
    PTX_ENTRY("pair_plain", ".param .u64 x, .param .u32 n")
    PTX_ENTRY("pair_tma", ".param .u64 x, .param .u32 n, .param .align 64 .b8 x_map[128]")
    PTX_ENTRY("pair_any", ".param .u64 x, .param .u32 n")
    /* only a TMA variant: a launch it cannot take has no variant */
    "// blk-meta v1 kernel=only entry=only num_warps=4 shared=0 params=x:*f16,n:i32 tmaps=x:n::64:0\n"
    PTX_ENTRY("only", ".param .u64 x, .param .u32 n, .param .align 64 .b8 x_map[128]")
    /* a row stride that is a sum, as qkv_proj's weight: (H + 2 G) * 128 */
    "// blk-meta v1 kernel=qkv entry=qkv_tma num_warps=4 shared=0 params=w:*bf16,h:i32,H:i32,G:i32 spec=d16,-,-,- "
    "tmaps=w:H*128+2*G*128,h:H*128+2*G*128:64,64:128\n"
    "// blk-meta v1 kernel=qkv entry=qkv_any num_warps=4 shared=0 params=w:*bf16,h:i32,H:i32,G:i32\n"
    PTX_ENTRY("qkv_tma", ".param .u64 w, .param .u32 h, .param .u32 H, .param .u32 G, .param .align 64 .b8 w_map[128]")
    PTX_ENTRY("qkv_any", ".param .u64 w, .param .u32 h, .param .u32 H, .param .u32 G");

/* A recorded launch and the tensor maps it passed (its parameters over 8
 * bytes, as the fake encoder wrote them). */
typedef struct {
    fake_launch l;
    int nbig;
    fake_tmap map[FAKE_MAX_BIG];
} launch_rec;

static launch_rec get(int i) {
    launch_rec r;
    memset(&r, 0, sizeof r);
    CHECK(F.get_launch(i, &r.l) == 0, "launch %d was recorded", i);
    unsigned char b[128];
    while (r.nbig < FAKE_MAX_BIG && F.get_big(i, r.nbig, b) == 0) memcpy(&r.map[r.nbig++], b, sizeof(fake_tmap));
    return r;
}

static launch_rec last(void) { return get(F.launch_count() - 1); }

/* The maps of an mm_tma launch are A's and B's for these arguments. */
static bool mm_maps_ok(const launch_rec *l, uint64_t a, uint64_t b, int64_t M, int64_t N, int64_t K) {
    if (l->nbig != 2 || l->l.nparams != 8 || l->l.param_size[6] != 128 || l->l.param_size[7] != 128) return false;
    fake_tmap ta = l->map[0], tb = l->map[1];
    return ta.magic == FAKE_TMAP_MAGIC && ta.addr == a && ta.dtype == 9 && ta.rank == 2 && ta.dims[0] == (uint64_t)K &&
           ta.dims[1] == (uint64_t)M && ta.strides[0] == (uint64_t)(2 * K) && ta.box[0] == 64 && ta.box[1] == 8 &&
           ta.elem_strides[0] == 1 && ta.elem_strides[1] == 1 && ta.swizzle == 3 && ta.l2 == 2 && ta.oob == 0 &&
           ta.interleave == 0 && tb.magic == FAKE_TMAP_MAGIC && tb.addr == b && tb.dims[0] == (uint64_t)N &&
           tb.dims[1] == (uint64_t)K && tb.strides[0] == (uint64_t)(2 * N) && tb.box[0] == 64 && tb.box[1] == 64;
}

static blkrt_status launch_mm(blkrt_kernel *k, uint64_t a, uint64_t b, uint64_t c, int64_t M, int64_t N, int64_t K,
                              blkrt_stream *s) {
    blkrt_arg args[] = {BLKRT_PTR(a), BLKRT_PTR(b), BLKRT_PTR(c), BLKRT_INT(M), BLKRT_INT(N), BLKRT_INT(K)};
    uint32_t grid[3] = {1, 1, 1};
    return blkrt_launch(k, grid, args, 6, s);
}

static void selection(blkrt_module *m, blkrt_ptr base) {
    blkrt_kernel *k;
    OK(blkrt_module_kernel(m, "mm", &k));
    uint64_t a = base, b = base + 4096, c = base + 8192;
    OK(launch_mm(k, a, b, c, 100, 72, 64, NULL));
    launch_rec l = last();
    CHECK(strcmp(l.l.entry, "mm_tma") == 0, "aligned: mm_tma, got %s", l.l.entry);
    CHECK(l.l.block[0] == 256 && l.l.shared == 1024, "the TMA variant's launch config");
    CHECK(mm_maps_ok(&l, a, b, 100, 72, 64), "the maps after the declared params");
    int32_t K;
    memcpy(&K, l.l.param[5], 4);
    CHECK(K == 64, "declared params unchanged");

    /* what TMA cannot take runs the generic variant, with no maps */
    struct {
        uint64_t a;
        int64_t M, N, K;
        const char *why;
    } fallback[] = {
        {base + 32, 100, 72, 64, NULL},   /* control: still TMA */
        {base + 8, 100, 72, 64, "a misaligned (and not d16)"},
        {base, 100, 72, 20, "K stride 40 bytes"},
        {base, 100, 36, 64, "N stride 72 bytes"},
        {base, 0, 72, 64, "M = 0"},
        {base, 100, 72, 0, "K = 0"},
    };
    for (size_t i = 0; i < sizeof fallback / sizeof fallback[0]; i++) {
        OK(launch_mm(k, fallback[i].a, b, c, fallback[i].M, fallback[i].N, fallback[i].K, NULL));
        l = last();
        const char *want = fallback[i].why ? "mm_generic" : "mm_tma";
        CHECK(strcmp(l.l.entry, want) == 0, "case %zu (%s): %s, expected %s", i, fallback[i].why ? fallback[i].why : "-",
              l.l.entry, want);
        CHECK(fallback[i].why ? l.nbig == 0 && l.l.nparams == 6 : l.nbig == 2, "case %zu: maps passed iff TMA", i);
    }

    /* 3000 random launches against the reference rule */
    srand(7);
    static const int64_t sizes[] = {0, -1, 1, 7, 8, 16, 24, 40, 64, 100, 129, 1000, 4096, INT32_MAX};
    int tma = 0, generic = 0;
    for (int it = 0; it < 3000; it++) {
        int64_t M = sizes[rand() % 14], N = sizes[rand() % 14], Kr = sizes[rand() % 14];
        uint64_t ao = (uint64_t)(rand() % 4) * 8, bo = (uint64_t)(rand() % 4) * 16;
        bool fits = ref_fits(a + ao, b + bo, M, N, Kr);
        OK(launch_mm(k, a + ao, b + bo, c, M, N, Kr, NULL));
        l = last();
        bool got = strcmp(l.l.entry, "mm_tma") == 0;
        CHECK(got == fits, "M=%lld N=%lld K=%lld a+%llu b+%llu: %s", (long long)M, (long long)N, (long long)Kr,
              (unsigned long long)ao, (unsigned long long)bo, l.l.entry);
        if (got) CHECK(mm_maps_ok(&l, a + ao, b + bo, M, N, Kr), "random launch %d: maps", it);
        tma += got, generic += !got;
    }
    CHECK(tma > 200 && generic > 200, "the sweep covers both (%d TMA, %d generic)", tma, generic);

    /* the same spec with and without maps */
    blkrt_kernel *pk;
    OK(blkrt_module_kernel(m, "pair", &pk));
    uint32_t grid[3] = {1, 1, 1};
    blkrt_arg p1[] = {BLKRT_PTR(a), BLKRT_INT(1000)}, p0[] = {BLKRT_PTR(a), BLKRT_INT(0)},
              px[] = {BLKRT_PTR(a + 2), BLKRT_INT(1000)};
    OK(blkrt_launch(pk, grid, p1, 2, NULL));
    l = last();
    CHECK(strcmp(l.l.entry, "pair_tma") == 0 && l.nbig == 1 && l.map[0].dims[0] == 1000 && l.map[0].rank == 1 &&
              l.map[0].dtype == 6,
          "pair: the variant with the map, got %s", l.l.entry);
    OK(blkrt_launch(pk, grid, p0, 2, NULL));
    CHECK(strcmp(last().l.entry, "pair_plain") == 0, "pair, n = 0: its twin without the map");
    OK(blkrt_launch(pk, grid, px, 2, NULL));
    CHECK(strcmp(last().l.entry, "pair_any") == 0, "pair, misaligned: the generic one");

    /* a sum: the map's dim and stride evaluated at launch; a sum out of
     * range (or a term with a factor < 1) runs the variant without maps */
    blkrt_kernel *qk;
    OK(blkrt_module_kernel(m, "qkv", &qk));
    struct {
        int32_t h, H, G;
        const char *want;
    } qs[] = {
        {4096, 32, 8, "qkv_tma"},     /* GQA: (32 + 16) * 128 */
        {4096, 32, 32, "qkv_tma"},    /* MHA */
        {4096, 32, 0, "qkv_any"},     /* G = 0: a factor < 1 */
        {4096, INT32_MAX, INT32_MAX, "qkv_any"}, /* (2^31 - 1) * 384 > 2^32 */
        {0, 32, 8, "qkv_any"},        /* no rows */
    };
    for (size_t i = 0; i < sizeof qs / sizeof qs[0]; i++) {
        blkrt_arg qa[] = {BLKRT_PTR(a), BLKRT_INT(qs[i].h), BLKRT_INT(qs[i].H), BLKRT_INT(qs[i].G)};
        OK(blkrt_launch(qk, grid, qa, 4, NULL));
        l = last();
        CHECK(strcmp(l.l.entry, qs[i].want) == 0, "qkv case %zu: %s, expected %s", i, l.l.entry, qs[i].want);
        uint64_t n = (uint64_t)(qs[i].H + 2 * (int64_t)qs[i].G) * 128;
        if (strcmp(qs[i].want, "qkv_tma") == 0)
            CHECK(l.nbig == 1 && l.map[0].dims[0] == n && l.map[0].dims[1] == (uint64_t)qs[i].h &&
                      l.map[0].strides[0] == 2 * n && l.map[0].box[0] == 64 && l.map[0].box[1] == 64,
                  "qkv case %zu: the map of the sum", i);
        else
            CHECK(l.nbig == 0, "qkv case %zu: no map", i);
    }

    /* no variant: the message says which map and why */
    blkrt_kernel *ok;
    OK(blkrt_module_kernel(m, "only", &ok));
    int calls = F.count_calls("cuLaunchKernel");
    FAILS_EXACTLY(blkrt_launch(ok, grid, px, 2, NULL), BLKRT_ERR_INVALID_LAUNCH,
                  "kernel 'only': no variant accepts these arguments: entry 'only' takes a tensor map of 'x' and the "
                  "base pointer is not 16-byte aligned");
    FAILS_EXACTLY(blkrt_launch(ok, grid, p0, 2, NULL), BLKRT_ERR_INVALID_LAUNCH,
                  "kernel 'only': no variant accepts these arguments: entry 'only' takes a tensor map of 'x' and a "
                  "dimension is not in 1..2^32");
    CHECK(F.count_calls("cuLaunchKernel") == calls, "nothing launched");
}

static void cache(blkrt_module *m, blkrt_ptr base) {
    blkrt_kernel *k;
    OK(blkrt_module_kernel(m, "mm", &k));
    uint64_t a = base, b = base + 4096, c = base + 8192;
    F.reset();
    OK(launch_mm(k, a, b, c, 64, 64, 64, NULL));
    CHECK(F.count_calls("cuTensorMapEncodeTiled") <= 2, "at most one encode per map");
    F.reset();
    for (int i = 0; i < 5; i++) OK(launch_mm(k, a, b, c, 64, 64, 64, NULL));
    OK(launch_mm(k, a, b, c + 16, 64, 64, 64, NULL)); /* c has no map */
    CHECK(F.count_calls("cuTensorMapEncodeTiled") == 0, "repeated tensors: no encode, got %d",
          F.count_calls("cuTensorMapEncodeTiled"));
    CHECK(F.count_calls("cuLaunchKernel") == 6, "6 launches");
    OK(launch_mm(k, a + 16, b, c, 64, 64, 64, NULL));
    CHECK(F.count_calls("cuTensorMapEncodeTiled") == 1, "a new base for A: one encode (B's is cached)");
    OK(launch_mm(k, a + 16, b, c, 65, 64, 64, NULL));
    CHECK(F.count_calls("cuTensorMapEncodeTiled") == 2, "a new M: A's map again");
    launch_rec l = last();
    CHECK(mm_maps_ok(&l, a + 16, b, 65, 64, 64), "the map of the new key");

    /* bounded: 100 new keys (a one-map kernel) evict the oldest (round robin over 64) */
    blkrt_kernel *pk;
    OK(blkrt_module_kernel(m, "pair", &pk));
    uint32_t grid[3] = {1, 1, 1};
    F.reset();
    for (int i = 0; i < 100; i++) {
        blkrt_arg x[] = {BLKRT_PTR(a + 16 * (uint64_t)i), BLKRT_INT(512)};
        OK(blkrt_launch(pk, grid, x, 2, NULL));
    }
    CHECK(F.count_calls("cuTensorMapEncodeTiled") == 100, "100 new keys: 100 encodes, got %d",
          F.count_calls("cuTensorMapEncodeTiled"));
    blkrt_arg x99[] = {BLKRT_PTR(a + 16 * 99), BLKRT_INT(512)}, x1[] = {BLKRT_PTR(a + 16), BLKRT_INT(512)};
    OK(blkrt_launch(pk, grid, x99, 2, NULL));
    CHECK(F.count_calls("cuTensorMapEncodeTiled") == 100, "a recent one is cached");
    OK(blkrt_launch(pk, grid, x1, 2, NULL));
    CHECK(F.count_calls("cuTensorMapEncodeTiled") == 101, "an old one was evicted");
    l = last();
    CHECK(strcmp(l.l.entry, "pair_tma") == 0 && l.map[0].addr == a + 16 && l.map[0].dims[0] == 512,
          "and encoded again right");

    /* a failed encode: named, nothing launched, nothing cached */
    OK(launch_mm(k, a, b, c, 64, 64, 64, NULL)); /* B's map in the cache */
    F.reset();
    F.fail_next("cuTensorMapEncodeTiled", RT_CUDA_ERROR_INVALID_VALUE);
    FAILS_EXACTLY(launch_mm(k, a + 48, b, c, 64, 64, 64, NULL), BLKRT_ERR_DRIVER,
                  "cuTensorMapEncodeTiled (kernel 'mm', the tensor map of 'a'): CUDA_ERROR_INVALID_VALUE (1): invalid "
                  "argument");
    CHECK(F.count_calls("cuLaunchKernel") == 0, "no launch after a failed encode");
    OK(launch_mm(k, a + 48, b, c, 64, 64, 64, NULL));
    l = last();
    CHECK(F.count_calls("cuTensorMapEncodeTiled") == 2 && mm_maps_ok(&l, a + 48, b, 64, 64, 64),
          "the retry encodes A's map again and launches");
}

/* Graph capture and the profiler pass the maps like any launch. */
static void capture_and_profile(blkrt_module *m, blkrt_ptr base) {
    blkrt_kernel *k;
    OK(blkrt_module_kernel(m, "mm", &k));
    uint64_t a = base, b = base + 4096, c = base + 8192;
    blkrt_stream *s;
    blkrt_graph *g;
    OK(blkrt_stream_create(d, &s));
    OK(blkrt_graph_begin_capture(s));
    OK(launch_mm(k, a, b, c, 128, 64, 32, s));
    OK(launch_mm(k, a + 8, b, c, 128, 64, 32, s));
    OK(blkrt_graph_end_capture(s, &g));
    F.reset();
    OK(blkrt_graph_launch(g, s));
    CHECK(F.launch_count() == 2, "two replayed launches");
    launch_rec l0 = get(0), l1 = get(1);
    CHECK(l0.l.from_graph && strcmp(l0.l.entry, "mm_tma") == 0 && mm_maps_ok(&l0, a, b, 128, 64, 32), "replay: TMA + maps");
    CHECK(strcmp(l1.l.entry, "mm_generic") == 0 && l1.nbig == 0, "replay: the generic launch");
    OK(blkrt_graph_destroy(g));

    OK(blkrt_profile_enable(1));
    F.reset();
    OK(launch_mm(k, a, b, c, 96, 64, 32, s));
    CHECK(F.count_calls("cuEventRecord") == 2, "the profiler timed it");
    launch_rec lp = last();
    CHECK(mm_maps_ok(&lp, a, b, 96, 64, 32), "profiled launch: maps");
    OK(blkrt_profile_enable(0));
    OK(blkrt_profile_reset());
    OK(blkrt_stream_synchronize(s));
    OK(blkrt_stream_destroy(s));
}

/* 8 threads, each its own tensors and a shared one: every launch carries the
 * maps of its own arguments (the cache under contention). */
typedef struct {
    blkrt_kernel *k;
    uint64_t base;
    int id, bad;
} worker;

static void *work(void *p) {
    worker *w = p;
    for (int i = 0; i < 200; i++) {
        uint64_t a = w->base + 16 * (uint64_t)(w->id * 1000 + i % 40);
        int64_t M = 8 + (i % 7) * 8;
        if (launch_mm(w->k, a, w->base, w->base, M, 64, 64, NULL) != BLKRT_OK) w->bad++;
    }
    return NULL;
}

static void threads(blkrt_module *m, blkrt_ptr base) {
    blkrt_kernel *k;
    OK(blkrt_module_kernel(m, "mm", &k));
    F.reset();
    pthread_t t[8];
    worker w[8];
    for (int i = 0; i < 8; i++) {
        w[i] = (worker){k, base, i, 0};
        pthread_create(&t[i], NULL, work, &w[i]);
    }
    for (int i = 0; i < 8; i++) pthread_join(t[i], NULL);
    int bad = 0;
    for (int i = 0; i < 8; i++) bad += w[i].bad;
    CHECK(bad == 0, "%d failed launches", bad);
    int n = F.launch_count(), wrong = 0;
    for (int i = 0; i < n; i++) {
        launch_rec l = get(i);
        uint64_t a;
        int32_t M;
        memcpy(&a, l.l.param[0], 8);
        memcpy(&M, l.l.param[3], 4);
        wrong += !mm_maps_ok(&l, a, base, M, 64, 64);
    }
    CHECK(n == 1600 && wrong == 0, "%d launches, %d with maps of other arguments", n, wrong);
}

/* ---- lazy variants: a compiler whose d16 variant of a and b uses TMA ---- */
static int compiles;

static char *dup_text(const char *s) {
    char *r = malloc(strlen(s) + 1);
    strcpy(r, s);
    return r;
}

static blkrt_status lazy_describe(const blkrt_compile_request *req, blkrt_compile_result *res) {
    (void)req;
    res->text = dup_text("// blk-meta v1 kernel=mm entry=mm num_warps=4 shared=0 " MM_PARAMS "\n");
    return BLKRT_OK;
}

static blkrt_status lazy_compile(const blkrt_compile_request *req, blkrt_compile_result *res) {
    compiles++;
    bool tma = req->variant && strstr(req->variant, "a=d16") && strstr(req->variant, "b=d16");
    char buf[4096];
    snprintf(buf, sizeof buf, "%s%s", PTX_HEAD,
             tma ? "// blk-meta v1 kernel=mm entry=mm_tma num_warps=4 shared=0 " MM_PARAMS
                   " spec=d16,d16,-,-,-,-" MM_TMAPS "\n" MM_TMA_ENTRY("mm_tma")
                 : "// blk-meta v1 kernel=mm entry=mm_plain num_warps=4 shared=0 " MM_PARAMS "\n" MM_ENTRY("mm_plain"));
    res->text = dup_text(buf);
    return BLKRT_OK;
}

static void lazy(blkrt_ptr base) {
    static const blkrt_compiler fc = {.version = "tmap-fake 1", .compile_ptx = lazy_compile, .describe = lazy_describe};
    OK(blkrt_use_compiler(&fc));
    blkrt_source_options o = {.path = "mm.blk", .cache_dir = ""};
    blkrt_module *m = NULL;
    OK(blkrt_module_load_source(d, "kernel mm", 9, &o, &m));
    if (!m) return;
    blkrt_kernel *k;
    OK(blkrt_module_kernel(m, "mm", &k));
    uint64_t a = base, b = base + 4096, c = base + 8192;
    OK(launch_mm(k, a, b, c, 64, 64, 64, NULL));
    launch_rec l = last();
    CHECK(strcmp(l.l.entry, "mm_tma") == 0 && mm_maps_ok(&l, a, b, 64, 64, 64), "lazy: the TMA variant, got %s", l.l.entry);
    CHECK(compiles == 1, "one compile");
    /* the same key (0 is divisible by 16), but M = 0 cannot be mapped: the unspecialised variant */
    OK(launch_mm(k, a, b, c, 0, 64, 64, NULL));
    l = last();
    CHECK(strcmp(l.l.entry, "mm_plain") == 0 && l.nbig == 0, "lazy, M = 0: the unspecialised variant, got %s", l.l.entry);
    CHECK(compiles == 2, "compiled once more (the unspecialised key)");
    OK(launch_mm(k, a, b, c, 0, 64, 64, NULL));
    OK(launch_mm(k, a, b, c, 64, 64, 64, NULL));
    CHECK(compiles == 2 && strcmp(last().l.entry, "mm_tma") == 0, "both known now");
    OK(blkrt_module_unload(m));
    OK(blkrt_use_compiler(NULL));
}

/* ---- a driver older than CUDA 12.0 ---- */
static void old_driver(void) {
    blkrt_module *m = load_ptx(d, PTX);
    if (!m) return;
    blkrt_ptr base;
    OK(blkrt_malloc(d, 1 << 16, &base));
    blkrt_kernel *k;
    OK(blkrt_module_kernel(m, "mm", &k));
    FAILS_EXACTLY(launch_mm(k, base, base + 4096, base, 64, 64, 64, NULL), BLKRT_ERR_DRIVER,
                  "kernel 'mm': the tensor map of 'a' needs cuTensorMapEncodeTiled, which this CUDA driver lacks "
                  "(CUDA 12.0 or newer)");
    OK(launch_mm(k, base + 8, base + 4096, base, 64, 64, 64, NULL));
    CHECK(strcmp(last().l.entry, "mm_generic") == 0, "what needs no map still runs");
    OK(blkrt_free(d, base));
    OK(blkrt_module_unload(m));
}

int main(int argc, char **argv) {
    if (fake_api_load(&F) != 0) {
        fprintf(stderr, "test_tmap: cannot load the fake driver\n");
        return 1;
    }
    OK(blkrt_device_open(0, &d));
    if (!d) return test_finish("test_tmap");
    if (argc > 1 && strcmp(argv[1], "notmap") == 0) {
        old_driver();
        OK(blkrt_device_close(d));
        return test_finish("test_tmap_old_driver");
    }
    parse_good();
    parse_errors();
    eval();
    blkrt_module *m = load_ptx(d, PTX);
    blkrt_ptr base;
    OK(blkrt_malloc(d, 1 << 20, &base));
    if (m) {
        selection(m, base);
        cache(m, base);
        capture_and_profile(m, base);
        threads(m, base);
        OK(blkrt_module_unload(m));
    }
    lazy(base);
    OK(blkrt_free(d, base));
    OK(blkrt_device_close(d));
    return test_finish("test_tmap");
}

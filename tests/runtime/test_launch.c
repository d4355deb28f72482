/* test_launch — checked and raw launches against the fake driver: what the
 * driver receives (grid, block, shared memory, every parameter's bytes),
 * argument validation with exact messages and nothing sent to the driver,
 * grid / block / shared-memory limits, the >48 KB opt-in set once per
 * function, variant selection by specialisation, launch failures, streams
 * and a second device; variants with cluster= through cuLaunchKernelEx
 * (grids that do not divide into clusters, and variants without the field,
 * through cuLaunchKernel).
 *
 *   rt_test_launch              everything, on the fake driver
 *   rt_test_launch old_driver   a driver without cuLaunchKernelEx (libfake_cuda_notmap):
 *                               cluster= variants launch through cuLaunchKernel */
#include "cuda_api.h"
#include "fake_cuda.h"
#include "rt_test.h"

static fake_api F;
static blkrt_device *d;

#define P64(n) ".param .u64 " n
static const char PTX[] = ".version 8.0\n.target sm_90a\n.address_size 64\n"
    VADD_META("vector_add", "")
    PTX_ENTRY("vector_add", VADD_PARAMS)
    /* variants of one kernel */
    "// blk-meta v1 kernel=vadd entry=vadd_generic num_warps=4 shared=0 params=x:*f32,y:*f32,out:*f32,n:i32\n"
    "// blk-meta v1 kernel=vadd entry=vadd_x16 num_warps=4 shared=0 params=x:*f32,y:*f32,out:*f32,n:i32 spec=x:d16,y:-,out:-,n:-\n"
    "// blk-meta v1 kernel=vadd entry=vadd_d16 num_warps=8 shared=0 params=x:*f32,y:*f32,out:*f32,n:i32 spec=d16,d16,d16,d16\n"
    "// blk-meta v1 kernel=vadd entry=vadd_n1 num_warps=4 shared=0 params=x:*f32,y:*f32,out:*f32,n:i32 spec=-,-,-,eq1\n"
    PTX_ENTRY("vadd_generic", VADD_PARAMS) PTX_ENTRY("vadd_x16", VADD_PARAMS)
    PTX_ENTRY("vadd_d16", VADD_PARAMS) PTX_ENTRY("vadd_n1", VADD_PARAMS)
    "// blk-meta v1 kernel=only16 entry=only16_d16 num_warps=4 shared=0 params=x:*f32 spec=d16\n"
    PTX_ENTRY("only16_d16", P64("x"))
    /* shared memory */
    "// blk-meta v1 kernel=big entry=big num_warps=4 shared=65536 params=x:*f32\n" PTX_ENTRY("big", P64("x"))
    "// blk-meta v1 kernel=huge entry=huge num_warps=4 shared=240000 params=x:*f32\n" PTX_ENTRY("huge", P64("x"))
    "// blk-meta v1 kernel=mixed entry=mixed num_warps=4 shared=16384 params=x:*f32\n" PTX_ENTRY("mixed", P64("x"))
    "// fake-attr entry=mixed static_shared=40000\n"
    "// blk-meta v1 kernel=small entry=small num_warps=4 shared=1024 params=x:*f32\n" PTX_ENTRY("small", P64("x"))
    /* threads */
    "// blk-meta v1 kernel=wide entry=wide num_warps=32 shared=0 params=\n" PTX_ENTRY("wide", "")
    "// blk-meta v1 kernel=heavy entry=heavy num_warps=16 shared=0 params=\n" PTX_ENTRY("heavy", "")
    "// fake-attr entry=heavy max_threads=256\n"
    /* parameter encodings */
    "// blk-meta v1 kernel=types entry=types num_warps=1 shared=0 "
    "params=a:bool,b:i8,c:f16,d:bf16,e:f32,f:i64,g:u16,h:f64,i:*const f16\n"
    PTX_ENTRY("types", ".param .u8 a, .param .u8 b, .param .b16 c, .param .b16 d, .param .f32 e, .param .u64 f, "
                       ".param .u16 g, .param .f64 h, .param .u64 i")
    PTX_ENTRY("raw_kernel", P64("p") ", .param .u32 n")
    /* thread-block clusters: cluster=2 and 4; a d16 variant with a cluster
     * and its generic one without */
    "// blk-meta v1 kernel=clus entry=clus num_warps=4 shared=1024 params=x:*f32,n:i32 cluster=2\n"
    PTX_ENTRY("clus", P64("x") ", .param .u32 n")
    "// blk-meta v1 kernel=clus4 entry=clus4 num_warps=2 shared=0 params=x:*f32 cluster=4\n" PTX_ENTRY("clus4", P64("x"))
    /* @cluster(2): the code needs its clusters (cluster_sum) */
    "// blk-meta v1 kernel=creq entry=creq num_warps=4 shared=0 params=x:*f32 cluster=2 cluster_required=1\n"
    PTX_ENTRY("creq", P64("x"))
    "// blk-meta v1 kernel=cv entry=cv_d16 num_warps=4 shared=0 params=x:*f32 spec=d16 cluster=2\n"
    "// blk-meta v1 kernel=cv entry=cv num_warps=4 shared=0 params=x:*f32\n"
    PTX_ENTRY("cv_d16", P64("x")) PTX_ENTRY("cv", P64("x"));

static fake_launch last(void) {
    fake_launch l;
    CHECK(fake_last_launch(&F, &l) == 0, "a launch was recorded");
    return l;
}
static int32_t p32(const fake_launch *l, int i) { int32_t v; memcpy(&v, l->param[i], 4); return v; }
static uint64_t p64(const fake_launch *l, int i) { uint64_t v; memcpy(&v, l->param[i], 8); return v; }

static void basic(blkrt_module *m) {
    blkrt_kernel *k;
    OK(blkrt_module_kernel(m, "vector_add", &k));
    blkrt_ptr x, y, out;
    OK(blkrt_malloc(d, 4096, &x));
    OK(blkrt_malloc(d, 4096, &y));
    OK(blkrt_malloc(d, 4096, &out));
    blkrt_arg args[] = {BLKRT_PTR(x), BLKRT_PTR(y), BLKRT_PTR(out), BLKRT_INT(1000)};
    uint32_t grid[3] = {7, 2, 3};
    OK(blkrt_launch(k, grid, args, 4, NULL));
    fake_launch l = last();
    CHECK(strcmp(l.entry, "vector_add") == 0, "entry %s", l.entry);
    CHECK(l.grid[0] == 7 && l.grid[1] == 2 && l.grid[2] == 3, "grid");
    CHECK(l.block[0] == 128 && l.block[1] == 1 && l.block[2] == 1, "block = 32 * num_warps");
    CHECK(l.shared == 0 && l.stream == NULL && l.device == 0, "shared, stream, device");
    CHECK(l.nparams == 4 && l.param_size[0] == 8 && l.param_size[3] == 4, "param sizes from the PTX");
    CHECK(p64(&l, 0) == x && p64(&l, 1) == y && p64(&l, 2) == out && p32(&l, 3) == 1000, "param values");

    /* Every validation error: exact message, and the driver sees nothing. */
    int calls = F.count_calls("cuLaunchKernel");
    FAILS_EXACTLY(blkrt_launch(k, grid, args, 3, NULL), BLKRT_ERR_INVALID_LAUNCH, "kernel 'vector_add' takes 4 arguments, got 3");
    FAILS_EXACTLY(blkrt_launch(k, grid, NULL, 4, NULL), BLKRT_ERR_INVALID_LAUNCH,
                  "kernel 'vector_add' takes 4 arguments, got 4 (args is NULL)");
    blkrt_arg wrong[] = {BLKRT_INT(0), BLKRT_PTR(y), BLKRT_PTR(out), BLKRT_INT(1000)};
    FAILS_EXACTLY(blkrt_launch(k, grid, wrong, 4, NULL), BLKRT_ERR_INVALID_LAUNCH,
                  "kernel 'vector_add': argument 1 'x' (*f32) needs a pointer (BLKRT_PTR), got an integer (BLKRT_INT)");
    blkrt_arg wrong2[] = {BLKRT_PTR(x), BLKRT_PTR(y), BLKRT_PTR(out), BLKRT_FLOAT(1000)};
    FAILS_EXACTLY(blkrt_launch(k, grid, wrong2, 4, NULL), BLKRT_ERR_INVALID_LAUNCH,
                  "kernel 'vector_add': argument 4 'n' (i32) needs an integer (BLKRT_INT), got a float (BLKRT_FLOAT)");
    blkrt_arg big[] = {BLKRT_PTR(x), BLKRT_PTR(y), BLKRT_PTR(out), BLKRT_INT(1LL << 32)};
    FAILS_EXACTLY(blkrt_launch(k, grid, big, 4, NULL), BLKRT_ERR_INVALID_LAUNCH,
                  "kernel 'vector_add': argument 4 'n' (i32): 4294967296 is out of range");
    uint32_t g0[3] = {7, 0, 1}, gx[3] = {0x80000000u, 1, 1}, gz[3] = {1, 1, 65536};
    FAILS_EXACTLY(blkrt_launch(k, g0, args, 4, NULL), BLKRT_ERR_INVALID_LAUNCH,
                  "kernel 'vector_add': grid[1] is 0 (every grid dimension must be at least 1)");
    FAILS_EXACTLY(blkrt_launch(k, gx, args, 4, NULL), BLKRT_ERR_INVALID_LAUNCH,
                  "kernel 'vector_add': grid[0] = 2147483648 exceeds the device's maximum 2147483647");
    FAILS_EXACTLY(blkrt_launch(k, gz, args, 4, NULL), BLKRT_ERR_INVALID_LAUNCH,
                  "kernel 'vector_add': grid[2] = 65536 exceeds the device's maximum 65535");
    FAILS(blkrt_launch(k, NULL, args, 4, NULL), BLKRT_ERR_INVALID_VALUE, "grid is NULL");
    CHECK(F.count_calls("cuLaunchKernel") == calls, "no rejected launch reached the driver");

    /* Driver failures come back with the kernel named. */
    F.fail_next("cuLaunchKernel", RT_CUDA_ERROR_LAUNCH_FAILED);
    FAILS_EXACTLY(blkrt_launch(k, grid, args, 4, NULL), BLKRT_ERR_LAUNCH_FAILED,
                  "cuLaunchKernel (kernel 'vector_add', entry 'vector_add'): CUDA_ERROR_LAUNCH_FAILED (719): "
                  "unspecified launch failure");

    /* Streams: the driver gets the stream; another device's stream is refused. */
    blkrt_stream *s;
    OK(blkrt_stream_create(d, &s));
    OK(blkrt_launch(k, grid, args, 4, s));
    l = last();
    CHECK(l.stream != NULL, "launched on the stream");
    blkrt_device *d1;
    blkrt_stream *s1;
    OK(blkrt_device_open(1, &d1));
    OK(blkrt_stream_create(d1, &s1));
    FAILS_EXACTLY(blkrt_launch(k, grid, args, 4, s1), BLKRT_ERR_INVALID_VALUE,
                  "blkrt_launch: the stream belongs to another device");
    FAILS(blkrt_launch(k, grid, args, 4, (blkrt_stream *)k), BLKRT_ERR_INVALID_HANDLE, "not a stream handle");
    OK(blkrt_stream_destroy(s1));

    /* The same PTX on device 1 runs in device 1's context. */
    blkrt_module *m1 = load_ptx(d1, PTX);
    blkrt_kernel *k1;
    if (m1) {
        OK(blkrt_module_kernel(m1, "vector_add", &k1));
        blkrt_ptr x1;
        OK(blkrt_malloc(d1, 4096, &x1));
        blkrt_arg a1[] = {BLKRT_PTR(x1), BLKRT_PTR(x1), BLKRT_PTR(x1), BLKRT_INT(16)};
        OK(blkrt_launch(k1, grid, a1, 4, NULL));
        l = last();
        CHECK(l.device == 1, "launched on device 1 (%d)", l.device);
        /* device 1 (A100-like) has a smaller opt-in limit */
        blkrt_kernel *h1;
        OK(blkrt_module_kernel(m1, "big", &h1));
        OK(blkrt_launch(h1, grid, a1, 1, NULL));
        OK(blkrt_free(d1, x1));
        OK(blkrt_module_unload(m1));
    }
    OK(blkrt_device_close(d1));
    OK(blkrt_stream_destroy(s));
    OK(blkrt_free(d, x));
    OK(blkrt_free(d, y));
    OK(blkrt_free(d, out));
}

static void variants(blkrt_module *m) {
    blkrt_kernel *k, *o;
    OK(blkrt_module_kernel(m, "vadd", &k));
    blkrt_kernel_info info;
    OK(blkrt_kernel_get_info(k, &info));
    CHECK(info.num_variants == 4 && info.num_warps == 4, "4 variants; the least specialised has 4 warps");
    const blkrt_ptr A = 0x10000, B = 0x20000, C = 0x30000; /* never dereferenced by the fake */
    struct {
        blkrt_ptr x;
        int64_t n;
        const char *entry;
    } cases[] = {
        {A, 1024, "vadd_d16"},     /* everything divisible by 16 */
        {A, 1000, "vadd_x16"},     /* n not: the x-only variant */
        {A + 4, 1024, "vadd_generic"},
        {A + 4, 1, "vadd_n1"},
        {A, 1, "vadd_x16"},        /* x16 and n1 both hold: equally specialised, the earlier line wins */
        {A, 0, "vadd_d16"},        /* 0 is divisible by 16 */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        blkrt_arg args[] = {BLKRT_PTR(cases[i].x), BLKRT_PTR(B), BLKRT_PTR(C), BLKRT_INT(cases[i].n)};
        uint32_t grid[3] = {1, 1, 1};
        OK(blkrt_launch(k, grid, args, 4, NULL));
        fake_launch l = last();
        CHECK(strcmp(l.entry, cases[i].entry) == 0, "case %zu: picked %s, expected %s", i, l.entry, cases[i].entry);
        if (strcmp(cases[i].entry, "vadd_d16") == 0) CHECK(l.block[0] == 256, "vadd_d16 has 8 warps");
    }
    OK(blkrt_module_kernel(m, "only16", &o));
    blkrt_arg mis[] = {BLKRT_PTR(A + 8)};
    uint32_t grid[3] = {1, 1, 1};
    FAILS_EXACTLY(blkrt_launch(o, grid, mis, 1, NULL), BLKRT_ERR_INVALID_LAUNCH,
                  "kernel 'only16': no variant accepts these arguments: every variant assumes 'x' is divisible by 16 "
                  "(entry 'only16_d16') and it is not");
}

static void limits(blkrt_module *m) {
    blkrt_kernel *big, *huge, *mixed, *small, *wide, *heavy;
    OK(blkrt_module_kernel(m, "big", &big));
    OK(blkrt_module_kernel(m, "huge", &huge));
    OK(blkrt_module_kernel(m, "mixed", &mixed));
    OK(blkrt_module_kernel(m, "small", &small));
    OK(blkrt_module_kernel(m, "wide", &wide));
    OK(blkrt_module_kernel(m, "heavy", &heavy));
    blkrt_arg a[] = {BLKRT_PTR(0x1000)};
    uint32_t grid[3] = {4, 1, 1};
    /* The opt-in happened at load (opted_in_at_load) and holds for every launch. */
    F.reset();
    for (int i = 0; i < 5; i++) OK(blkrt_launch(big, grid, a, 1, NULL));
    CHECK(F.attr_sets("big") == 0, "no more cuFuncSetAttribute calls (%d)", F.attr_sets("big"));
    CHECK(last().shared == 65536, "64 KB dynamic shared memory passed");
    OK(blkrt_launch(small, grid, a, 1, NULL));
    OK(blkrt_launch(mixed, grid, a, 1, NULL));
    FAILS_EXACTLY(blkrt_launch(huge, grid, a, 1, NULL), BLKRT_ERR_INVALID_LAUNCH,
                  "kernel 'huge': entry 'huge' needs 240000 bytes of shared memory (240000 dynamic + 0 static), more "
                  "than the device's maximum of 232448 per block");
    OK(blkrt_launch(wide, grid, NULL, 0, NULL));
    CHECK(last().block[0] == 1024, "32 warps = 1024 threads");
    FAILS_EXACTLY(blkrt_launch(heavy, grid, NULL, 0, NULL), BLKRT_ERR_INVALID_LAUNCH,
                  "kernel 'heavy': 512 threads per block (32 x num_warps) exceed the 256 that entry 'heavy' can run "
                  "with (its register use)");
}

/* blkrt_kernel_max_programs: the fake's occupancy (an H100-like
 * multiprocessor: 2048 threads, 228 KB of shared memory with 1 KB per block,
 * a function's max_threads as its register file share) times its 132
 * multiprocessors, for the variant a launch would pick; launch's checks and
 * messages; nothing launched. */
static void max_programs(blkrt_module *m) {
    blkrt_kernel *vadd, *big, *huge, *heavy, *raw_k;
    OK(blkrt_module_kernel(m, "vadd", &vadd));
    OK(blkrt_module_kernel(m, "big", &big));
    OK(blkrt_module_kernel(m, "huge", &huge));
    OK(blkrt_module_kernel(m, "heavy", &heavy));
    OK(blkrt_module_kernel(m, "raw_kernel", &raw_k));
    F.reset();
    uint32_t n = 7;
    blkrt_arg d16[] = {BLKRT_PTR(0x10000), BLKRT_PTR(0x20000), BLKRT_PTR(0x30000), BLKRT_INT(1024)};
    OK(blkrt_kernel_max_programs(vadd, d16, 4, &n));
    CHECK(n == 4 * 132, "vadd_d16 (8 warps, 1024 threads' registers): 4 per multiprocessor, got %u", n);
    blkrt_arg odd[] = {BLKRT_PTR(0x10004), BLKRT_PTR(0x20000), BLKRT_PTR(0x30000), BLKRT_INT(1000)};
    OK(blkrt_kernel_max_programs(vadd, odd, 4, &n));
    CHECK(n == 8 * 132, "vadd_generic (4 warps): 8 per multiprocessor, got %u", n);
    blkrt_arg x[] = {BLKRT_PTR(0x1000)};
    OK(blkrt_kernel_max_programs(big, x, 1, &n));
    CHECK(n == 3 * 132, "64 KB of shared memory: 3 per multiprocessor, got %u", n);
    CHECK(F.launch_count() == 0, "nothing launched (%d)", F.launch_count());
    FAILS_EXACTLY(blkrt_kernel_max_programs(huge, x, 1, &n), BLKRT_ERR_INVALID_LAUNCH,
                  "kernel 'huge': entry 'huge' needs 240000 bytes of shared memory (240000 dynamic + 0 static), more "
                  "than the device's maximum of 232448 per block");
    CHECK(n == 0, "0 on failure");
    FAILS_EXACTLY(blkrt_kernel_max_programs(heavy, NULL, 0, &n), BLKRT_ERR_INVALID_LAUNCH,
                  "kernel 'heavy': 512 threads per block (32 x num_warps) exceed the 256 that entry 'heavy' can run "
                  "with (its register use)");
    FAILS_EXACTLY(blkrt_kernel_max_programs(vadd, d16, 3, &n), BLKRT_ERR_INVALID_LAUNCH,
                  "kernel 'vadd' takes 4 arguments, got 3");
    FAILS_EXACTLY(blkrt_kernel_max_programs(raw_k, NULL, 0, &n), BLKRT_ERR_INVALID_LAUNCH,
                  "kernel 'raw_kernel' has no blk-meta line: its arguments cannot be checked; launch it with "
                  "blkrt_launch_raw");
    FAILS_EXACTLY(blkrt_kernel_max_programs(NULL, NULL, 0, &n), BLKRT_ERR_INVALID_HANDLE,
                  "blkrt_kernel_max_programs: not a kernel handle");
    FAILS_EXACTLY(blkrt_kernel_max_programs(vadd, d16, 4, NULL), BLKRT_ERR_INVALID_VALUE,
                  "blkrt_kernel_max_programs: out is NULL");
    F.fail_next("cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags", 700);
    blkrt_status st = blkrt_kernel_max_programs(big, x, 1, &n);
    CHECK(st != BLKRT_OK && n == 0, "a driver failure is reported (%d, %u: %s)", (int)st, n, blkrt_last_error());
}

/* Right after the load: each function that needs more than 48 KB was opted
 * in exactly once; the others not at all. */
static void opted_in_at_load(void) {
    CHECK(F.attr_sets("big") == 1, "64 KB kernel opted in once at load (%d)", F.attr_sets("big"));
    CHECK(F.attr_sets("small") == 0, "1 KB needs no opt-in");
    /* 16 KB dynamic + 40000 static is over 48 KB together: opted in too. */
    CHECK(F.attr_sets("mixed") == 1, "static + dynamic over 48 KB opted in");
    CHECK(F.attr_sets("huge") == 0, "what cannot fit is not opted in");
}

static void encodings(blkrt_module *m) {
    blkrt_kernel *k;
    OK(blkrt_module_kernel(m, "types", &k));
    blkrt_arg a[] = {BLKRT_INT(1),        BLKRT_INT(-3),       BLKRT_FLOAT(1.5), BLKRT_FLOAT(-2.0),
                     BLKRT_FLOAT(0.25),   BLKRT_INT(-5000000000LL), BLKRT_INT(65535), BLKRT_FLOAT(0.1),
                     BLKRT_PTR(0xABCDEF00u)};
    uint32_t grid[3] = {1, 1, 1};
    OK(blkrt_launch(k, grid, a, 9, NULL));
    fake_launch l = last();
    CHECK(l.nparams == 9, "9 params");
    CHECK(l.param_size[0] == 1 && l.param[0][0] == 1, "bool byte");
    CHECK(l.param_size[1] == 1 && l.param[1][0] == 0xFD, "i8 -3");
    uint16_t h, b, u;
    memcpy(&h, l.param[2], 2);
    memcpy(&b, l.param[3], 2);
    memcpy(&u, l.param[6], 2);
    CHECK(l.param_size[2] == 2 && h == 0x3E00, "f16 1.5 = 0x%04x", h);
    CHECK(b == 0xC000, "bf16 -2 = 0x%04x", b);
    float f;
    memcpy(&f, l.param[4], 4);
    CHECK(f == 0.25f, "f32");
    CHECK((int64_t)p64(&l, 5) == -5000000000LL, "i64");
    CHECK(u == 65535, "u16");
    double dv;
    memcpy(&dv, l.param[7], 8);
    CHECK(dv == 0.1, "f64");
    CHECK(p64(&l, 8) == 0xABCDEF00u, "pointer");
}

static void raw(blkrt_module *m) {
    blkrt_kernel *r, *v;
    OK(blkrt_module_kernel(m, "raw_kernel", &r));
    blkrt_arg none[1];
    uint32_t grid[3] = {2, 1, 1}, block[3] = {64, 2, 1};
    FAILS_EXACTLY(blkrt_launch(r, grid, none, 0, NULL), BLKRT_ERR_INVALID_LAUNCH,
                  "kernel 'raw_kernel' has no blk-meta line: its arguments cannot be checked; launch it with "
                  "blkrt_launch_raw");
    uint64_t p = 0x1234;
    uint32_t n = 77;
    void *params[] = {&p, &n};
    OK(blkrt_launch_raw(r, grid, block, 0, params, NULL));
    fake_launch l = last();
    CHECK(strcmp(l.entry, "raw_kernel") == 0 && l.block[0] == 64 && l.block[1] == 2 && p64(&l, 0) == 0x1234 &&
              p32(&l, 1) == 77,
          "raw launch as given");
    /* dynamic shared memory above 48 KB: opted in on first need, once per new maximum */
    OK(blkrt_launch_raw(r, grid, block, 60000, params, NULL));
    OK(blkrt_launch_raw(r, grid, block, 60000, params, NULL));
    OK(blkrt_launch_raw(r, grid, block, 50000, params, NULL));
    CHECK(F.attr_sets("raw_kernel") == 1, "one opt-in for 60000 (%d)", F.attr_sets("raw_kernel"));
    OK(blkrt_launch_raw(r, grid, block, 100000, params, NULL));
    CHECK(F.attr_sets("raw_kernel") == 2, "another for 100000");
    uint32_t b0[3] = {2048, 1, 1}, b1[3] = {32, 32, 2}, bz[3] = {32, 0, 1};
    FAILS_EXACTLY(blkrt_launch_raw(r, grid, b0, 0, params, NULL), BLKRT_ERR_INVALID_LAUNCH,
                  "kernel 'raw_kernel': block[0] = 2048 is not in 1..1024");
    FAILS_EXACTLY(blkrt_launch_raw(r, grid, b1, 0, params, NULL), BLKRT_ERR_INVALID_LAUNCH,
                  "kernel 'raw_kernel': 2048 threads per block (the block size) exceed the device's maximum 1024");
    FAILS(blkrt_launch_raw(r, grid, bz, 0, params, NULL), BLKRT_ERR_INVALID_LAUNCH, "block[1] = 0 is not in 1..1024");
    FAILS(blkrt_launch_raw(r, grid, block, 300000, params, NULL), BLKRT_ERR_INVALID_LAUNCH,
          "needs 300000 bytes of shared memory");
    /* A checked kernel launched raw runs its least specialised variant. */
    OK(blkrt_module_kernel(m, "vadd", &v));
    uint64_t x = 0x10000;
    int32_t cnt = 16;
    void *vp[] = {&x, &x, &x, &cnt};
    OK(blkrt_launch_raw(v, grid, block, 0, vp, NULL));
    CHECK(strcmp(last().entry, "vadd_generic") == 0, "raw launch of vadd: %s", last().entry);
}

/* The newest launch's cluster dims (0,0,0: launched without a cluster). */
static void last_cluster(unsigned out[3]) {
    out[0] = out[1] = out[2] = 99;
    CHECK(F.get_cluster(F.launch_count() - 1, out) == 0, "a launch was recorded");
}

/* Launch k (params x, and n if it has two) on grid; returns the cluster dims
 * the driver got and counts the two launch calls made. */
static blkrt_status launch_c(blkrt_kernel *k, int nargs, uint32_t gx, uint32_t gy, blkrt_stream *s, unsigned cl[3],
                             int *plain, int *ex) {
    int p0 = F.count_calls("cuLaunchKernel"), e0 = F.count_calls("cuLaunchKernelEx");
    blkrt_arg a[] = {BLKRT_PTR(0x10000), BLKRT_INT(77)};
    uint32_t grid[3] = {gx, gy, 1};
    blkrt_status st = blkrt_launch(k, grid, a, nargs, s);
    *plain = F.count_calls("cuLaunchKernel") - p0;
    *ex = F.count_calls("cuLaunchKernelEx") - e0;
    if (st == BLKRT_OK) last_cluster(cl);
    return st;
}

#define CLUSTER_IS(cl, x, y, z) ((cl)[0] == (x) && (cl)[1] == (y) && (cl)[2] == (z))

static void clusters(blkrt_module *m) {
    blkrt_kernel *c, *c4, *cv, *va;
    OK(blkrt_module_kernel(m, "clus", &c));
    OK(blkrt_module_kernel(m, "clus4", &c4));
    OK(blkrt_module_kernel(m, "cv", &cv));
    OK(blkrt_module_kernel(m, "vector_add", &va));
    unsigned cl[3];
    int plain, ex;

    /* cluster=2, an even grid: cuLaunchKernelEx with clusterDim (2,1,1), and
     * everything else as cuLaunchKernel would get it */
    OK(launch_c(c, 2, 6, 3, NULL, cl, &plain, &ex));
    CHECK(ex == 1 && plain == 0, "cluster=2, grid 6: %d cuLaunchKernelEx, %d cuLaunchKernel", ex, plain);
    CHECK(CLUSTER_IS(cl, 2, 1, 1), "cluster dims (%u,%u,%u), expected (2,1,1)", cl[0], cl[1], cl[2]);
    fake_launch l = last();
    CHECK(strcmp(l.entry, "clus") == 0 && l.grid[0] == 6 && l.grid[1] == 3 && l.grid[2] == 1, "entry and grid");
    CHECK(l.block[0] == 128 && l.block[1] == 1 && l.block[2] == 1 && l.shared == 1024 && l.stream == NULL,
          "block %u, shared %u", l.block[0], l.shared);
    CHECK(l.nparams == 2 && p64(&l, 0) == 0x10000 && p32(&l, 1) == 77, "params through cuLaunchKernelEx");

    /* an odd grid cannot be cut into clusters of 2: a plain launch */
    OK(launch_c(c, 2, 7, 1, NULL, cl, &plain, &ex));
    CHECK(ex == 0 && plain == 1 && CLUSTER_IS(cl, 0, 0, 0), "grid 7: cuLaunchKernel (%d, %d), no cluster", plain, ex);
    CHECK(last().grid[0] == 7 && last().block[0] == 128 && last().shared == 1024, "the plain launch's config");
    /* a grid of 1 likewise; grid y and z do not matter */
    OK(launch_c(c, 2, 1, 2, NULL, cl, &plain, &ex));
    CHECK(ex == 0 && plain == 1, "grid 1: cuLaunchKernel");

    /* cluster_required=1 (@cluster(2)): always in clusters; an odd grid is
     * refused before the driver sees it, and so is a raw launch */
    blkrt_kernel *cr;
    OK(blkrt_module_kernel(m, "creq", &cr));
    OK(launch_c(cr, 1, 4, 1, NULL, cl, &plain, &ex));
    CHECK(ex == 1 && plain == 0 && CLUSTER_IS(cl, 2, 1, 1), "cluster_required, grid 4: cuLaunchKernelEx");
    int before = F.launch_count();
    FAILS(launch_c(cr, 1, 5, 1, NULL, cl, &plain, &ex), BLKRT_ERR_INVALID_LAUNCH,
               "runs in clusters of 2 programs along axis 0 (@cluster), so grid[0] must be a multiple of 2, got 5");
    uint32_t g5[3] = {4, 1, 1}, b5[3] = {128, 1, 1};
    uint64_t xp = 0x10000;
    void *rp[] = {&xp};
    FAILS(blkrt_launch_raw(cr, g5, b5, 0, rp, NULL), BLKRT_ERR_UNSUPPORTED, "runs in clusters (@cluster)");
    CHECK(F.launch_count() == before, "nothing launched");

    /* cluster=4: the grid must divide by 4, not just by 2 */
    OK(launch_c(c4, 1, 6, 1, NULL, cl, &plain, &ex));
    CHECK(ex == 0 && plain == 1 && CLUSTER_IS(cl, 0, 0, 0), "cluster=4, grid 6: cuLaunchKernel");
    OK(launch_c(c4, 1, 8, 1, NULL, cl, &plain, &ex));
    CHECK(ex == 1 && plain == 0 && CLUSTER_IS(cl, 4, 1, 1), "cluster=4, grid 8: (%u,%u,%u) by cuLaunchKernelEx",
          cl[0], cl[1], cl[2]);
    CHECK(last().block[0] == 64, "2 warps");

    /* no cluster= field: cuLaunchKernel, whatever the grid */
    int p0 = F.count_calls("cuLaunchKernel"), e0 = F.count_calls("cuLaunchKernelEx");
    blkrt_arg va_args[] = {BLKRT_PTR(0x10000), BLKRT_PTR(0x20000), BLKRT_PTR(0x30000), BLKRT_INT(64)};
    uint32_t g8[3] = {8, 1, 1};
    OK(blkrt_launch(va, g8, va_args, 4, NULL));
    last_cluster(cl);
    CHECK(F.count_calls("cuLaunchKernel") == p0 + 1 && F.count_calls("cuLaunchKernelEx") == e0 &&
              CLUSTER_IS(cl, 0, 0, 0),
          "a variant without cluster=: cuLaunchKernel");

    /* the cluster belongs to the variant: cv_d16 has one, cv not */
    OK(launch_c(cv, 1, 4, 1, NULL, cl, &plain, &ex));
    CHECK(strcmp(last().entry, "cv_d16") == 0 && ex == 1 && CLUSTER_IS(cl, 2, 1, 1), "cv_d16 in clusters of 2");
    p0 = F.count_calls("cuLaunchKernel"), e0 = F.count_calls("cuLaunchKernelEx");
    blkrt_arg mis[] = {BLKRT_PTR(0x10004)};
    uint32_t g4[3] = {4, 1, 1};
    OK(blkrt_launch(cv, g4, mis, 1, NULL));
    last_cluster(cl);
    CHECK(strcmp(last().entry, "cv") == 0 && F.count_calls("cuLaunchKernel") == p0 + 1 &&
              F.count_calls("cuLaunchKernelEx") == e0 && CLUSTER_IS(cl, 0, 0, 0),
          "cv (no cluster=) by cuLaunchKernel: entry %s", last().entry);

    /* a stream goes to cuLaunchKernelEx too */
    blkrt_stream *s;
    OK(blkrt_stream_create(d, &s));
    OK(launch_c(c, 2, 2, 1, s, cl, &plain, &ex));
    CHECK(ex == 1 && last().stream != NULL, "on the stream, through cuLaunchKernelEx");

    /* a failing cuLaunchKernelEx: its status, a message naming the call,
     * kernel and entry, and nothing launched */
    int launches = F.launch_count();
    F.fail_next("cuLaunchKernelEx", RT_CUDA_ERROR_LAUNCH_FAILED);
    uint32_t g2[3] = {2, 1, 1};
    blkrt_arg a[] = {BLKRT_PTR(0x10000), BLKRT_INT(1)};
    FAILS_EXACTLY(blkrt_launch(c, g2, a, 2, NULL), BLKRT_ERR_LAUNCH_FAILED,
                  "cuLaunchKernelEx (kernel 'clus', entry 'clus'): CUDA_ERROR_LAUNCH_FAILED (719): unspecified launch "
                  "failure");
    F.fail_next("cuLaunchKernelEx", RT_CUDA_ERROR_INVALID_CLUSTER_SIZE);
    FAILS(blkrt_launch(c, g2, a, 2, NULL), BLKRT_ERR_DRIVER,
          "cuLaunchKernelEx (kernel 'clus', entry 'clus'): CUDA_ERROR_INVALID_CLUSTER_SIZE (912)");
    CHECK(F.launch_count() == launches, "failed launches record nothing");
    OK(blkrt_launch(c, g2, a, 2, NULL)); /* and the next one works */

    /* graph capture: the replay keeps the cluster */
    blkrt_graph *g;
    OK(blkrt_graph_begin_capture(s));
    OK(launch_c(c, 2, 4, 1, s, cl, &plain, &ex));
    OK(blkrt_graph_end_capture(s, &g));
    launches = F.launch_count();
    OK(blkrt_graph_launch(g, s));
    CHECK(F.launch_count() == launches + 1, "one replayed launch");
    last_cluster(cl);
    CHECK(last().from_graph && CLUSTER_IS(cl, 2, 1, 1), "the replay is in clusters of 2");
    OK(blkrt_graph_destroy(g));

    /* the profiler's events surround cuLaunchKernelEx as they do cuLaunchKernel */
    OK(blkrt_profile_enable(1));
    F.reset();
    OK(launch_c(c, 2, 2, 1, s, cl, &plain, &ex));
    OK(launch_c(c, 2, 3, 1, s, cl, &plain, &ex));
    char log[1024];
    F.call_log(log, sizeof log);
    CHECK(strstr(log, "cuEventRecord cuLaunchKernelEx cuEventRecord") != NULL &&
              strstr(log, "cuEventRecord cuLaunchKernel cuEventRecord") != NULL,
          "events around both launches: %s", log);
    OK(blkrt_profile_enable(0));
    OK(blkrt_profile_reset());

    /* a raw launch has an explicit block and no cluster: cuLaunchKernel */
    uint64_t x = 0x10000;
    int32_t n = 1;
    void *params[] = {&x, &n};
    uint32_t block[3] = {128, 1, 1};
    p0 = F.count_calls("cuLaunchKernel"), e0 = F.count_calls("cuLaunchKernelEx");
    OK(blkrt_launch_raw(c, g2, block, 1024, params, NULL));
    CHECK(F.count_calls("cuLaunchKernel") == p0 + 1 && F.count_calls("cuLaunchKernelEx") == e0, "raw: cuLaunchKernel");
    OK(blkrt_stream_synchronize(s));
    OK(blkrt_stream_destroy(s));
}

/* A driver without cuLaunchKernelEx (older than CUDA 12.0): the runtime
 * loads, and a cluster= variant launches without a cluster. */
static void old_driver(void) {
    blkrt_module *m = load_ptx(d, PTX);
    if (!m) return;
    blkrt_kernel *c;
    OK(blkrt_module_kernel(m, "clus", &c));
    unsigned cl[3];
    int plain, ex;
    OK(launch_c(c, 2, 6, 1, NULL, cl, &plain, &ex));
    CHECK(plain == 1 && ex == 0 && CLUSTER_IS(cl, 0, 0, 0), "cluster=2, grid 6, no cuLaunchKernelEx: cuLaunchKernel");
    CHECK(strcmp(last().entry, "clus") == 0 && last().grid[0] == 6 && last().block[0] == 128 && last().shared == 1024,
          "as configured");
    OK(blkrt_module_unload(m));
}

/* A launch loop on a thread with no context of its own binds the device's
 * once and then pays no push/pop per launch (rt_ctx_enter). */
static void no_ctx_switch_per_launch(blkrt_module *m) {
    blkrt_kernel *r;
    OK(blkrt_module_kernel(m, "raw_kernel", &r));
    uint64_t p = 0;
    uint32_t n = 1, grid[3] = {1, 1, 1}, block[3] = {32, 1, 1};
    void *params[] = {&p, &n};
    OK(blkrt_launch_raw(r, grid, block, 0, params, NULL));
    int push = F.count_calls("cuCtxPushCurrent_v2"), set = F.count_calls("cuCtxSetCurrent");
    for (int i = 0; i < 100; i++) OK(blkrt_launch_raw(r, grid, block, 0, params, NULL));
    CHECK(F.count_calls("cuCtxPushCurrent_v2") == push && F.count_calls("cuCtxSetCurrent") == set,
          "100 launches: %d pushes, %d binds", F.count_calls("cuCtxPushCurrent_v2") - push,
          F.count_calls("cuCtxSetCurrent") - set);
    CHECK(F.ctx_depth() == 1, "the device's context stays bound (depth %d)", F.ctx_depth());
}

int main(int argc, char **argv) {
    if (fake_api_load(&F) != 0) return 1;
    if (blkrt_device_open(0, &d) != BLKRT_OK) {
        fprintf(stderr, "%s\n", blkrt_last_error());
        return 1;
    }
    F.reset();
    if (argc > 1 && strcmp(argv[1], "old_driver") == 0) {
        old_driver();
        OK(blkrt_device_close(d));
        return test_finish("test_launch_old_driver");
    }
    blkrt_module *m = load_ptx(d, PTX);
    if (!m) return test_finish("test_launch");
    opted_in_at_load();
    basic(m);
    variants(m);
    limits(m);
    max_programs(m);
    encodings(m);
    raw(m);
    clusters(m);
    no_ctx_switch_per_launch(m);
    OK(blkrt_module_unload(m));
    OK(blkrt_device_close(d));
    CHECK(F.ctx_depth() == 0, "contexts restored");
    return test_finish("test_launch");
}

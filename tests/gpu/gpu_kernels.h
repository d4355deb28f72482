/* gpu_kernels.h — the table gpu_check runs: one row per stdlib kernel.
 *
 * Included once, by gpu_suite.c (gpu_check.h defines gk_kernel and the TOL_*
 * macros).
 * Adding a kernel is adding a row:
 *
 *   {"file.blk", "kernel",
 *    "ARGS",                one item per runtime parameter, in order (names are
 *                           checked against the compiled kernel's blk-meta):
 *                             name:in(COUNT[,DIST])   input buffer, random data
 *                             name:out(COUNT)         output buffer, poisoned (0xFF bytes)
 *                             name:zero(COUNT)        in/out buffer starting at 0 (atomics)
 *                             name:=EXPR              integer scalar; a float scalar is a
 *                                                     literal or u(LO,HI) (random per case)
 *                           DIST: u(LO,HI) uniform floats (default u(-2,2)),
 *                                 ri(LO,HI) integers in [LO,HI) (default ri(-100,100)),
 *                                 sri(LO,HI) those integers sorted ascending (offset tables:
 *                                 moe_grouped_gemm's per-expert row offsets)
 *                                 cum(LO,HI) integers 0, s1, s1+s2, ... with steps
 *                                 s drawn from ri(LO,HI): CSR row pointers (LO = 0
 *                                 gives empty rows; COUNT-1 rows hold at most
 *                                 (COUNT-1)*(HI-1) nonzeros: size the index arrays so),
 *                                 perm 0 .. COUNT-1 shuffled (a block table)
 *    "GRID",                "gx[,gy[,gz]]"
 *    "REQUIRE" or NULL,     a (config, size) pair where this is 0 is not run
 *    {CONFIGS},             const values, "NAME=V NAME=V" ("" = the kernel's defaults)
 *    {SIZES},               problem sizes, "name=EXPR ..." (later names may use earlier
 *                           ones and the consts); the first two are the --quick sizes
 *    TOL},                  for float outputs (integer outputs must be identical)
 *
 * EXPR: integers, the size names, the consts (with their defaults), + - * / %
 * << comparisons && || and cdiv(a,b) min(a,b) max(a,b).
 *
 * The kernel variant: every pointer 16-byte aligned and every integer argument
 * a multiple of 16 selects the d16 entry; gpu_check runs each case twice, with
 * aligned pointers and with every pointer moved by one element (the fallback
 * entry). Sizes whose integers are all multiples of 16 exercise d16 at all;
 * an integer argument equal to 1 gets an eq1 variant compiled for it (the
 * specialize.blk rows: stride 1 against strides 3 and 16).
 * Keep sizes moderate: the CPU interpreter computes every reference.
 * A file is relative to the stdlib directory (../tests/gpu/ for test kernels).
 */

/* kernels with @cluster: they need thread-block clusters (sm_90a) and are
 * skipped where the arch has none (BLK_GPU_ARCH=sm_80) */
static const char *const gk_cluster_kernels[] = {"matmul_splitk_cluster", NULL};

static const gk_kernel gk_table[] = {
    /* ---- ../tests/gpu/tensor_desc.blk: desc_load / desc_store, out-of-bounds rows and columns ---- */
    {"../tests/gpu/tensor_desc.blk", "desc_tiles", "src:in(m*k) dst:out(m*k) M:=m K:=k", "cdiv(m,BM)", NULL,
     {"", "BM=32 BK=64"},
     {"m=16 k=32", "m=33 k=70", "m=1 k=1", "m=64 k=256", "m=100 k=1000"},
     TOL_EXACT},
    /* ---- ../tests/gpu/specialize.blk: eq1 variants (stride 1) next to d16 and fallback ---- */
    {"../tests/gpu/specialize.blk", "strided_gather", "out:out(n) x:in(n*s) stride_x:=s n:=n", "cdiv(n,BLOCK)", NULL,
     {"", "BLOCK=256"},
     {"n=4096 s=1", "n=4096 s=3", "n=1000 s=1", "n=4112 s=16", "n=1 s=1", "n=65536 s=1", "n=65536 s=2"},
     TOL_EXACT},
    {"../tests/gpu/specialize.blk", "strided_rows",
     "out:out(rows*cols) x:in(rows*sr+cols*sc) stride_row:=sr stride_col:=sc n_cols:=cols", "rows", "cols<=BLOCK",
     {"", "BLOCK=1024"},
     {"rows=8 cols=200 sr=256 sc=1", "rows=8 cols=100 sr=320 sc=3", "rows=1 cols=1 sr=1 sc=1",
      "rows=16 cols=256 sr=256 sc=1", "rows=5 cols=77 sr=80 sc=1"},
     TOL_EXACT},

    /* ---- ../tests/gpu/index.blk: index facts that decide access widths ---- */
    {"../tests/gpu/index.blk", "remneg", "x:in(g*B+8) out:out(g*B)", "g", NULL,
     {"", "B=64"},
     {"g=1", "g=3", "g=100"},
     TOL_EXACT},
    {"../tests/gpu/index.blk", "mis2", "x:in(1024) out:out(1024)", "1", NULL, {""}, {"n=1"}, TOL_EXACT},
    {"../tests/gpu/index.blk", "loopptr", "x:in(g*B*n) out:out(g*B) n:=n", "g", NULL,
     {"", "B=128"},
     {"g=1 n=1", "g=2 n=3", "g=16 n=16", "g=5 n=33"},
     TOL_RED},
    /* ---- ../tests/gpu/dot.blk: dot on the tensor cores (cg_dot.c) ---- */
    {"../tests/gpu/dot.blk", "mm_bf16",
     "a:in(m*k) b:in(k*n) c:out(m*n) M:=m N:=n K:=k sa_m:=k sa_k:=1 sb_k:=n sb_n:=1", "cdiv(m,BM),cdiv(n,BN)", NULL,
     {"", "BM=16 BN=16 BK=16", "BM=128 BN=128 BK=64", "BM=32 BN=256 BK=16",
      /* sm_90a: wgmma with one and two warpgroups, two m64 blocks per warpgroup, two K panels */
      "BM=64 BN=128 BK=64", "BM=128 BN=256 BK=64 num_warps=8", "BM=256 BN=64 BK=128 num_warps=8"},
     {"m=64 n=64 k=32", "m=1 n=15 k=17", "m=127 n=129 k=100", "m=256 n=256 k=256", "m=300 n=200 k=48"},
     TOL_RED},
    /* a persistent tile loop on 5 programs storing its f32 tile: from the accumulator's registers
     * (the producer kept), and transposed (128 x 256: lowered again without the producer) */
    {"../tests/gpu/dot.blk", "mm_tiles_f32", "a:in(m*k) b:in(k*n) c:out(m*n) M:=m N:=n K:=k", "5", NULL,
     {"", "TRANS=true", "BN=128 TRANS=true", "BM=64 BN=64 BK=32"},
     {"m=512 n=256 k=256", "m=300 n=200 k=100", "m=1024 n=256 k=192", "m=16 n=16 k=16", "m=7 n=250 k=70"},
     TOL_RED},
    {"../tests/gpu/dot.blk", "mm_nt", "a:in(m*k) b:in(n*k) c:out(m*n) M:=m N:=n K:=k", "cdiv(m,BM),cdiv(n,BN)", NULL,
     {"", "BM=128 BN=64 BK=128", "BM=128 BN=256 BK=64 num_warps=8", "BM=64 BN=32 BK=32"},
     {"m=64 n=128 k=64", "m=3 n=5 k=7", "m=129 n=200 k=130", "m=256 n=512 k=256"},
     TOL_BF16},
    {"../tests/gpu/dot.blk", "mm_down", "a:in(m*k) b:in(k*n) c:out(m*n) M:=m N:=n K:=k", "cdiv(m,BM),cdiv(n,BN)", NULL,
     {"", "BM=128 BN=256 BK=64 num_warps=8"}, {"m=64 n=128 k=256", "m=3 n=5 k=7", "m=129 n=200 k=130"}, TOL_RED},
    /* loads turned in registers before the dot (rings read into registers): d16 and fallback sizes */
    {"../tests/gpu/dot.blk", "mm_dequant", "a:in(m*k) b:in(k*n,ri(-128,128)) s:in(n,u(-0.05,0.05)) c:out(m*n) M:=m N:=n K:=k",
     "cdiv(m,BM),cdiv(n,BN)", NULL,
     {"", "STAGES=2", "BM=128 BN=128 BK=32 num_warps=8 STAGES=4", "BM=16 BN=16 BK=16 STAGES=6"},
     {"m=64 n=64 k=128", "m=3 n=5 k=7", "m=128 n=160 k=96", "m=100 n=96 k=200", "m=32 n=48 k=16"},
     TOL_RED},
    {"../tests/gpu/dot.blk", "mm_bf16",  /* A stored [K][M] through the strides: registers along K, rows strided */
     "a:in(m*k) b:in(k*n) c:out(m*n) M:=m N:=n K:=k sa_m:=1 sa_k:=m sb_k:=1 sb_n:=k", "cdiv(m,BM),cdiv(n,BN)", NULL,
     {"", "BM=32 BN=64 BK=64"},
     {"m=64 n=64 k=32", "m=33 n=70 k=45", "m=128 n=96 k=80"},
     TOL_RED},
    {"../tests/gpu/dot.blk", "mm_f16_tt", "a:in(m*k) b:in(k*n) c:out(m*n) M:=m N:=n K:=k", "cdiv(m,BM),cdiv(n,BN)", NULL,
     {"", "BM=16 BN=64 BK=16", "BM=128 BN=64 BK=64"},
     {"m=64 n=32 k=32", "m=15 n=17 k=1", "m=129 n=127 k=77", "m=200 n=160 k=160"},
     TOL_BF16},
    {"../tests/gpu/dot.blk", "mm_tf32", "a:in(m*k) b:in(k*n) c:out(m*n) M:=m N:=n K:=k", "cdiv(m,BM),cdiv(n,BN)", NULL,
     /* sm_90a: BM=64 BK=32 and the 8-warp one (two K panels) take wgmma tf32, b stored K-major from registers */
     {"", "BM=64 BN=64 BK=32", "BM=16 BN=16 BK=16", "BM=128 BN=64 BK=64 num_warps=8"},
     {"m=32 n=64 k=16", "m=17 n=31 k=9", "m=130 n=100 k=70", "m=256 n=128 k=128"},
     TOL_RED},
    {"../tests/gpu/dot.blk", "mm_ieee", "a:in(m*k) b:in(k*n) c:out(m*n) M:=m N:=n K:=k", "cdiv(m,BM),cdiv(n,BN)", NULL,
     {"", "BM=64 BN=16 BK=32"},
     {"m=32 n=32 k=16", "m=17 n=31 k=9", "m=100 n=70 k=50"},
     TOL_EXACT},
    {"../tests/gpu/dot.blk", "mm_i8", "a:in(m*k,ri(-128,128)) b:in(k*n,ri(-128,128)) c:out(m*n) M:=m N:=n K:=k",
     "cdiv(m,BM),cdiv(n,BN)", NULL,
     {"", "BM=16 BN=32 BK=64", "BM=128 BN=64 BK=32"},
     {"m=64 n=64 k=16", "m=5 n=70 k=33", "m=130 n=129 k=100", "m=256 n=256 k=256"},
     TOL_EXACT},
    {"../tests/gpu/dot.blk", "mm_e4m3", "a:in(m*k) b:in(k*n) c:out(m*n) M:=m N:=n K:=k", "cdiv(m,BM),cdiv(n,BN)", NULL,
     {"", "BM=32 BN=16 BK=64"},
     {"m=64 n=64 k=32", "m=50 n=70 k=90", "m=128 n=128 k=128"},
     TOL_RED},
    {"../tests/gpu/dot.blk", "mm_e5m2", "a:in(m*k) b:in(k*n) c:out(m*n) M:=m N:=n K:=k", "cdiv(m,BM),cdiv(n,BN)", NULL,
     {""},
     {"m=32 n=32 k=32", "m=40 n=33 k=65"},
     TOL_RED},
    /* sm_90a: wgmma e4m3 / e5m2 from raw-byte rings (and, in the fallback entry, raw bytes stored
     * from registers); one and two warpgroups, two K panels (BK = 256); sm_80: the f16 path */
    {"../tests/gpu/dot.blk", "mm_e4m3_nt", "a:in(m*k) bt:in(n*k) c:out(m*n) M:=m N:=n K:=k", "cdiv(m,BM),cdiv(n,BN)", NULL,
     {"", "BM=128 BN=128 num_warps=8", "BM=64 BN=128 BK=256"},
     {"m=64 n=64 k=128", "m=50 n=70 k=90", "m=130 n=129 k=300", "m=256 n=256 k=512", "m=1 n=1 k=1"},
     TOL_FP8},
    {"../tests/gpu/dot.blk", "mm_e5m2_nt", "a:in(m*k) bt:in(n*k) c:out(m*n) M:=m N:=n K:=k", "cdiv(m,BM),cdiv(n,BN)", NULL,
     {"", "BM=128 BN=64 num_warps=8", "BM=64 BN=64 BK=256"},
     {"m=64 n=64 k=128", "m=50 n=70 k=90", "m=130 n=129 k=300", "m=256 n=256 k=512"},
     TOL_FP8},
    {"../tests/gpu/dot.blk", "mm_epilogue",
     "a:in(m*k) b:in(k*n) bias:in(n) res:in(m*n) c:out(m*n) M:=m N:=n K:=k", "cdiv(m,BM),cdiv(n,BN)", NULL,
     {"", "BM=128 BN=128 BK=32"},
     {"m=64 n=128 k=64", "m=70 n=130 k=33", "m=256 n=256 k=192"},
     TOL_BF16_MATH},
    /* ---- matmul.blk: the stdlib GEMM (grouped tile order, cp.async rings) ---- */
    {"matmul.blk", "matmul", "a:in(m*k) b:in(k*n) c:out(m*n) M:=m N:=n K:=k", "cdiv(m,BM)*cdiv(n,BN)", NULL,
     {"", "BM=64 BN=64 BK=32 GROUP=3", "BM=128 BN=128 BK=64 num_warps=4",
      /* the few-tile shapes of the @autotune list: rings deeper than some loops' trip counts */
      "BM=128 BN=64 BK=64 STAGES=8 num_warps=8", "BM=64 BN=64 BK=64 STAGES=12 num_warps=4",
      "BM=64 BN=128 BK=64 STAGES=8 num_warps=4",
      /* wgmma's 64- and 32-byte swizzles: b's rows of 32 bf16, a's rows of 16 */
      "BM=64 BN=32 BK=64 STAGES=12 num_warps=4", "BM=64 BN=64 BK=16 num_warps=4"},
     {"m=256 n=256 k=64", "m=1 n=1 k=1", "m=300 n=200 k=100", "m=512 n=512 k=512", "m=1000 n=130 k=72"},
     TOL_BF16},
    /* ---- matmul.blk: matmul_desc, the operands through tensor descriptors (TMA rings on sm_90a where
     * the pointers, K and N are 16-byte multiples: ragged M and N and a K past the last block read
     * zeros from TMA's out-of-bounds fill; the other sizes take the generic variant) ---- */
    {"matmul.blk", "matmul_desc", "a:in(m*k) b:in(k*n) c:out(m*n) M:=m N:=n K:=k", "cdiv(m,BM)*cdiv(n,BN)", NULL,
     {"", "BM=64 BN=64 BK=32 GROUP=3", "BM=128 BN=128 BK=64 num_warps=4", "BM=128 BN=128 BK=128 num_warps=8 STAGES=3",
      "BM=64 BN=32 BK=16 num_warps=4"},
     {"m=256 n=256 k=64", "m=1 n=1 k=1", "m=300 n=208 k=96", "m=512 n=512 k=512", "m=1000 n=144 k=1040",
      "m=300 n=200 k=100"},
     TOL_BF16},
    /* ---- matmul.blk: the GEMM family (f16, tf32, int8, fp8, epilogues, persistent, QKV, backward) ---- */
#define GK_MM_SIZES {"m=256 n=256 k=64", "m=1 n=1 k=1", "m=300 n=200 k=100", "m=512 n=512 k=512", "m=1000 n=130 k=72"}
    {"matmul.blk", "matmul_f16", "a:in(m*k) b:in(k*n) c:out(m*n) M:=m N:=n K:=k", "cdiv(m,BM)*cdiv(n,BN)", NULL,
     {"", "BM=64 BN=64 BK=32 GROUP=3", "BM=128 BN=128 BK=64 num_warps=4"}, GK_MM_SIZES, TOL_BF16},
    {"matmul.blk", "matmul_tf32", "a:in(m*k) bt:in(n*k) c:out(m*n) M:=m N:=n K:=k", "cdiv(m,BM)*cdiv(n,BN)", NULL,
     {"", "BM=64 BN=64 BK=16 GROUP=3"}, GK_MM_SIZES, TOL_RED},
    {"matmul.blk", "matmul_i8", "a:in(m*k,ri(-128,128)) bt:in(n*k,ri(-128,128)) c:out(m*n) M:=m N:=n K:=k",
     "cdiv(m,BM)*cdiv(n,BN)", NULL,
     {"", "BM=64 BN=64 BK=64 GROUP=3 num_warps=4"}, GK_MM_SIZES, TOL_EXACT},
    {"matmul.blk", "matmul_fp8",  /* BK = 64: the f16 path (mma.sync) on every target */
     "a:in(m*k) bt:in(n*k) c:out(m*n) scale_a:in(m,u(0.25,2)) scale_b:in(n,u(0.25,2)) M:=m N:=n K:=k",
     "cdiv(m,BM)*cdiv(n,BN)", NULL,
     {"BM=64 BN=64 BK=64 GROUP=3 num_warps=4 ROW_SCALE=true", "BM=64 BN=64 BK=64 GROUP=3 num_warps=4"},
     GK_MM_SIZES, TOL_BF16},
    {"matmul.blk", "matmul_fp8",  /* sm_90a: wgmma e4m3, per-tensor and per-row scales */
     "a:in(m*k) bt:in(n*k) c:out(m*n) scale_a:in(m,u(0.25,2)) scale_b:in(n,u(0.25,2)) M:=m N:=n K:=k",
     "cdiv(m,BM)*cdiv(n,BN)", NULL,
     {"", "ROW_SCALE=true", "BM=64 BN=128 BK=128 GROUP=3 num_warps=4", "BM=64 BN=128 BK=128 GROUP=3 num_warps=4 ROW_SCALE=true"},
     /* GK_MM_SIZES, and a K of 5.5 loop iterations (the last one masked) */
     {"m=256 n=256 k=64", "m=1 n=1 k=1", "m=300 n=200 k=100", "m=512 n=512 k=512", "m=1000 n=130 k=72",
      "m=200 n=130 k=700"},
     TOL_FP8},
    /* persistent fp8: 5 programs (tiles per program 0 to many) and 132; the default (4 stages,
     * warp-specialized across the tile loop on sm_90a) and 6 stages, both scale modes; BK = 64 is
     * the f16 path (mma.sync) */
    {"matmul.blk", "matmul_fp8_persistent",
     "a:in(m*k) bt:in(n*k) c:out(m*n) scale_a:in(m,u(0.25,2)) scale_b:in(n,u(0.25,2)) M:=m N:=n K:=k", "5", NULL,
     {"", "ROW_SCALE=true STAGES=6", "BM=64 BN=64 BK=64 GROUP=3 num_warps=4 ROW_SCALE=true"},
     {"m=256 n=256 k=64", "m=1 n=1 k=1", "m=300 n=200 k=100", "m=512 n=512 k=512", "m=1000 n=130 k=72",
      "m=200 n=130 k=700"},
     TOL_FP8},
    {"matmul.blk", "matmul_fp8_persistent",
     "a:in(m*k) bt:in(n*k) c:out(m*n) scale_a:in(m,u(0.25,2)) scale_b:in(n,u(0.25,2)) M:=m N:=n K:=k", "132", NULL,
     {"", "ROW_SCALE=true", "BK=256 STAGES=3"}, {"m=1000 n=1000 k=256", "m=7 n=9 k=5", "m=2048 n=1024 k=384", "m=1500 n=2100 k=300"},
     TOL_FP8},
    {"matmul.blk", "matmul_epilogue",
     "a:in(m*k) b:in(k*n) c:out(m*n) bias:in(n) res:in(m*n) M:=m N:=n K:=k", "cdiv(m,BM)*cdiv(n,BN)", NULL,
     {"", "BIAS=true ACT=silu RESIDUAL=true", "BIAS=true ACT=gelu", "BM=64 BN=64 BK=32 ACT=silu RESIDUAL=true",
      /* examples/decoder's two: the projections + residual, W1 + SiLU */
      "RESIDUAL=true", "ACT=silu"},
     GK_MM_SIZES, TOL_BF16_GELU},
    {"matmul.blk", "matmul_epilogue_f32",
     "a:in(m*k) b:in(k*n) c:out(m*n) bias:in(n) res:in(m*n) M:=m N:=n K:=k", "cdiv(m,BM)*cdiv(n,BN)", NULL,
     {"BIAS=true ACT=gelu RESIDUAL=true", "BM=64 BN=64 BK=32 BIAS=true ACT=silu"}, GK_MM_SIZES, TOL_MATH_GELU},
    /* tiles of two column blocks (BN1 + BN2 columns): columns past N in either block, a second
     * block wholly past N (n = 400: the last tile's 384..575) */
    {"matmul.blk", "matmul_wide", "a:in(m*k) b:in(k*n) c:out(m*n) M:=m N:=n K:=k", "cdiv(m,BM)*cdiv(n,BN1+BN2)", NULL,
     {"", "STAGES=3", "BN1=64 BN2=32 STAGES=6", "BM=64 BN1=32 BN2=16 BK=32 GROUP=3 num_warps=4"},
     {"m=256 n=384 k=64", "m=1 n=1 k=1", "m=300 n=200 k=100", "m=512 n=576 k=512", "m=1000 n=130 k=72",
      "m=130 n=400 k=200"},
     TOL_BF16},
    /* persistent: 5 programs (fewer than the tiles but for the 1x1 size) and 132 (an H100's SMs) */
    /* the defaults are warp-specialized across the tile loop on sm_90a (slots and phases run on
     * from tile to tile: k of 1, 3 and 5 iterations, tiles per program from 0 to many) */
    {"matmul.blk", "matmul_persistent", "a:in(m*k) b:in(k*n) c:out(m*n) M:=m N:=n K:=k", "5", NULL,
     {"", "BM=64 BN=64 BK=32 GROUP=3", "BM=128 BN=128 STAGES=4", "BM=128 BN=64 STAGES=8",
      /* the default (4 stages) stores its tile a panel at a time; 3 stages stage the whole tile */
      "STAGES=3", "BM=128 BN=128 STAGES=6"}, GK_MM_SIZES, TOL_BF16},
    /* f16 through the same tile loop (mm_tile_loop): the store converts to f16 */
    {"matmul.blk", "matmul_persistent_f16", "a:in(m*k) b:in(k*n) c:out(m*n) M:=m N:=n K:=k", "7", NULL,
     {"", "STAGES=3 GROUP=16", "TMA_STORE=false STAGES=3", "BM=64 BN=64 BK=32 GROUP=3"},
     {"m=256 n=256 k=64", "m=1 n=1 k=1", "m=300 n=200 k=100", "m=1000 n=1000 k=320", "m=1500 n=2100 k=300"}, TOL_BF16},
    {"matmul.blk", "matmul_persistent", "a:in(m*k) b:in(k*n) c:out(m*n) M:=m N:=n K:=k", "132", NULL,
     {"", "BM=64 BN=64 BK=32 GROUP=3", "TMA_STORE=false", "STAGES=3 GROUP=16"}, {"m=1000 n=1000 k=64", "m=7 n=9 k=5", "m=2048 n=1024 k=128",
     "m=1500 n=2100 k=300"}, TOL_BF16},
    /* split-K: SPLIT programs per tile, the last sums the partials (acq_rel tickets) */
    {"matmul.blk", "matmul_splitk",
     "a:in(m*k) b:in(k*n) c:out(m*n) ws:out(SPLIT*m*n) cnt:zero(cdiv(m,BM)*cdiv(n,BN)) M:=m N:=n K:=k",
     "cdiv(m,BM)*cdiv(n,BN),SPLIT", NULL,
     {"", "SPLIT=2 BK=32", "SPLIT=8 BM=64 BN=128 STAGES=3", "BM=128 BN=64 BK=64 SPLIT=3", "SPLIT=2 STAGES=12"},
     {"m=16 n=512 k=2048", "m=5 n=70 k=300", "m=64 n=256 k=1000", "m=1 n=1 k=1", "m=100 n=96 k=40"},
     TOL_BF16},
    /* split-K in clusters: the SPLIT programs of a tile sum their partials in the last one's
     * shared memory (cluster_sum); grid x = tiles * SPLIT */
    {"matmul.blk", "matmul_splitk_cluster", "a:in(m*k) b:in(k*n) c:out(m*n) M:=m N:=n K:=k",
     "cdiv(m,BM)*cdiv(n,BN)*SPLIT", NULL,
     {"", "SPLIT=4 BK=32", "SPLIT=8 BK=32 STAGES=3", "SPLIT=2 STAGES=12", "BM=128 BN=64 SPLIT=2 num_warps=8"},
     {"m=64 n=256 k=1024", "m=5 n=70 k=300", "m=16 n=512 k=2048", "m=1 n=1 k=1", "m=100 n=96 k=40",
      "m=64 n=4096 k=4096"},
     TOL_BF16},
#undef GK_MM_SIZES
    /* sm_90a: the d16 entry of D = 128 (configs "" and ROPE=true) loads x and
     * both halves of w by TMA, w's row stride the sum (H + 2 KVH) * D in
     * tmaps=; such an entry runs where n_tokens and hidden are multiples of
     * 16 (sizes 1, 6, 7: ragged n_tokens 208 and 48 against BM 128, hidden
     * 272 and 80 against BK 64, grouped-query KVH < H; KVH = 1 runs the
     * entry that also assumes kv_heads = 1, TMA too). hid=0 is d16 too, but
     * its maps have a zero dim: the runtime rejects the TMA entry and runs
     * the generic one (gpu_check predicts so: predict_variant; the dry run
     * checks it), which writes zeros. The other sizes (and every case's
     * moved pointers) run entries without TMA. */
    {"matmul.blk", "qkv_proj",
     "q:out(Bt*S*H*D) k:out(Bt*S*KVH*D) v:out(Bt*S*KVH*D) x:in(Bt*S*hid) w:in(hid*(H+2*KVH)*D) "
     "cos_t:in(S*(D/2),u(-1,1)) sin_t:in(S*(D/2),u(-1,1)) n_tokens:=Bt*S seq:=S hidden:=hid heads:=H kv_heads:=KVH",
     "cdiv(Bt*S,BM),H+2*KVH", NULL,
     {"", "ROPE=true", "D=64 BM=64 BK=32 ROPE=true num_warps=4", "D=32 BM=16 BK=16 ROPE=true num_warps=4"},
     {"Bt=1 S=128 hid=128 H=2 KVH=2", "Bt=2 S=13 hid=40 H=3 KVH=1", "Bt=2 S=100 hid=256 H=4 KVH=2",
      "Bt=1 S=1 hid=16 H=1 KVH=1", "Bt=3 S=77 hid=200 H=8 KVH=8", "Bt=2 S=104 hid=272 H=4 KVH=2",
      "Bt=1 S=48 hid=80 H=8 KVH=1", "Bt=1 S=32 hid=0 H=4 KVH=2"},
     TOL_BF16},
    {"matmul.blk", "linear_bwd_dx", "dx:out(m*k) dy:in(m*n) w:in(k*n) M:=m N:=n K:=k", "cdiv(m,BM)*cdiv(k,BN)", NULL,
     {"", "BM=64 BN=64 BK=32 GROUP=3 num_warps=4"},
     {"m=256 n=128 k=256", "m=1 n=1 k=1", "m=300 n=200 k=100", "m=512 n=512 k=512", "m=1000 n=72 k=130"}, TOL_BF16},
    /* dW's a is xᵀ, stored M-major (mma.sync, ldmatrix .trans; d16 sizes, ragged ones included) */
    {"matmul.blk", "linear_bwd_dw", "dw:out(k*n) x:in(m*k) dy:in(m*n) M:=m N:=n K:=k", "cdiv(k,BM)*cdiv(n,BN)", NULL,
     {"", "BM=64 BN=64 BK=32 GROUP=3 num_warps=4", "BM=64 BN=128 BK=64 num_warps=4"},
     {"m=256 n=128 k=256", "m=1 n=1 k=1", "m=300 n=200 k=100", "m=512 n=512 k=512", "m=1000 n=72 k=130",
      "m=208 n=144 k=272"}, TOL_BF16},
    {"matmul.blk", "linear_bwd_db", "db:out(n) dy:in(m*n) M:=m N:=n", "cdiv(n,BN)", NULL,
     {"", "BM=16 BN=256"},
     {"m=256 n=128", "m=1 n=1", "m=300 n=200", "m=4096 n=1000"}, TOL_RED},
    /* ---- conv.blk: conv2d NHWC as an implicit GEMM (oh, ow: the output size; c = 3: accesses
     * narrower than 4 bytes, no rings), batchnorm (scale, shift) + SiLU epilogue ---- */
    {"conv.blk", "conv2d_nhwc",
     "out:out(n*oh*ow*k) x:in(n*h*w*c) w:in(KH*KW*c*k) scale:in(k,u(0.5,1.5)) shift:in(k,u(-1,1)) "
     "N:=n H:=h W:=w C:=c K:=k stride:=s pad:=p",
     "cdiv(n*oh*ow,BM)*cdiv(k,BN)", NULL,
     {"", "BM=64 BN=64 BK=32 num_warps=4", "KH=1 KW=1", "BM=64 BN=128 num_warps=4 NORM=false ACT=none",
      "BM=128 BN=64 BK=64 STAGES=2 ACT=none"},
     {"n=2 h=8 w=8 c=64 k=64 s=1 p=1 oh=(h+2*p-KH)/s+1 ow=(w+2*p-KW)/s+1",
      "n=1 h=5 w=7 c=3 k=5 s=1 p=1 oh=(h+2*p-KH)/s+1 ow=(w+2*p-KW)/s+1",
      "n=2 h=9 w=9 c=48 k=80 s=2 p=1 oh=(h+2*p-KH)/s+1 ow=(w+2*p-KW)/s+1",
      "n=3 h=14 w=14 c=32 k=128 s=1 p=1 oh=(h+2*p-KH)/s+1 ow=(w+2*p-KW)/s+1",
      "n=2 h=7 w=9 c=20 k=24 s=1 p=0 oh=(h+2*p-KH)/s+1 ow=(w+2*p-KW)/s+1",
      "n=1 h=16 w=16 c=64 k=128 s=2 p=0 oh=(h+2*p-KH)/s+1 ow=(w+2*p-KW)/s+1"},
     TOL_BF16_MATH},
    /* ---- sparse.blk: CSR row pointers from cum(0,L) (row lengths 0..L-1, empty rows included),
     * columns in range; BSR: up to nbc blocks per block row (a block column may repeat) ---- */
    {"sparse.blk", "spmv_csr",
     "y:out(rows) row_ptr:in(rows+1,cum(0,L)) col_idx:in(rows*L,ri(0,cols)) vals:in(rows*L) x:in(cols) n_rows:=rows",
     "cdiv(rows,BR)", NULL,
     {"", "BR=4 BNZ=64", "BR=32 BNZ=16 num_warps=8"},
     {"rows=16 cols=64 L=8", "rows=1 cols=1 L=2", "rows=1000 cols=500 L=20", "rows=77 cols=3000 L=100",
      "rows=4096 cols=4096 L=80"},
     TOL_RED},
    {"sparse.blk", "spmm_csr",
     "c:out(rows*n) row_ptr:in(rows+1,cum(0,L)) col_idx:in(rows*L,ri(0,cols)) vals:in(rows*L) b:in(cols*n) N:=n",
     "rows,cdiv(n,BN)", NULL,
     /* the bench's candidates (configs.txt spmm.*) and two narrower column blocks */
     {"", "BN=64 BNZ=32", "BN=256 BNZ=8 num_warps=8", "BN=256 BNZ=16", "BN=256 BNZ=32 num_warps=8",
      "BN=256 BNZ=16 num_warps=8"},
     /* rows of up to L-1 nonzeros (several BNZ steps, the last partial) and empty ones; N
      * not a multiple of BN: 7, 130, 300 (and not of 16: the fallback entry), 272 (d16, a
      * second column block 16 wide at BN=256) */
     {"rows=16 cols=32 n=64 L=8", "rows=3 cols=5 n=7 L=3", "rows=100 cols=300 n=130 L=20",
      "rows=256 cols=1024 n=256 L=40", "rows=50 cols=700 n=300 L=100", "rows=64 cols=2048 n=272 L=200"},
     TOL_RED},
    {"sparse.blk", "spmm_csr_bf16",
     "c:out(rows*n) row_ptr:in(rows+1,cum(0,L)) col_idx:in(rows*L,ri(0,cols)) vals:in(rows*L) b:in(cols*n) N:=n",
     "rows,cdiv(n,BN)", NULL,
     {"", "BN=64 BNZ=32", "BN=256 BNZ=16", "BN=256 BNZ=32", "BN=256 BNZ=32 num_warps=8",
      "BN=256 BNZ=16 num_warps=8"},
     {"rows=16 cols=32 n=64 L=8", "rows=3 cols=5 n=7 L=3", "rows=100 cols=300 n=130 L=20",
      "rows=256 cols=1024 n=256 L=40", "rows=50 cols=700 n=300 L=100", "rows=64 cols=2048 n=272 L=200"},
     TOL_RED},
    {"sparse.blk", "bsr_matmul",
     "c:out(m*n) brow_ptr:in(cdiv(m,BS)+1,cum(0,nbc+1)) bcol_idx:in(cdiv(m,BS)*nbc,ri(0,nbc)) "
     "bvals:in(cdiv(m,BS)*nbc*BS*BS) b:in(k*n) M:=m N:=n K:=k",
     "cdiv(m,BS),cdiv(n,BN)", NULL,
     {"", "BS=16 BN=64", "BS=64 BN=128", "BS=64 BN=256 STAGES=4", "BS=128 BN=128 num_warps=8"},
     {"m=64 n=128 k=64 nbc=cdiv(k,BS)", "m=20 n=7 k=33 nbc=cdiv(k,BS)", "m=100 n=130 k=96 nbc=cdiv(k,BS)",
      "m=256 n=256 k=512 nbc=cdiv(k,BS)"},
     TOL_BF16},
    /* ---- fused_attn.blk, attn_variants.blk: attention on the tensor cores ---- */
    {"fused_attn.blk", "attn_fwd", "out:out(bh*seq*D) q:in(bh*seq*D) k:in(bh*seq*D) v:in(bh*seq*D) lse:out(bh*seq) seq:=seq scale:=0.125",
     "cdiv(seq,BM),bh", NULL,
     {"LSE=1", "CAUSAL=1 LSE=1", "D=128 LSE=1", "BM=16 BN=16 D=32 LSE=1",
      /* sm_90a wgmma: two warpgroups, a 128-wide key block, head dim 256 */
      "D=128 BM=128 num_warps=8 LSE=1", "BM=128 BN=128 num_warps=8 CAUSAL=1 LSE=1", "D=256 BN=32 LSE=1",
      /* grouped-query (k, v allocated for every head: a group reads the first bh/GROUP) */
      "GROUP=2 LSE=1", "D=128 BM=128 num_warps=8 GROUP=3 CAUSAL=1 LSE=1",
      /* the bench's: three 64 KB stages (the optimistic ring plan) and ping-pong */
      "D=128 BM=128 BN=128 num_warps=8 LSE=1",
      /* D = 256 on two warpgroups: acc * alpha skipped per warp where every factor is 1 */
      "D=256 BM=128 num_warps=8 CAUSAL=1 LSE=1"},
     {"bh=2 seq=64", "bh=1 seq=1", "bh=3 seq=100", "bh=2 seq=257", "bh=2 seq=1000"},
     TOL_ATTN},
    {"fused_attn.blk", "attn_fwd", /* LSE = false: lse is never touched */
     "out:out(bh*seq*D) q:in(bh*seq*D) k:in(bh*seq*D) v:in(bh*seq*D) lse:in(1) seq:=seq scale:=0.125",
     "cdiv(seq,BM),bh", NULL,
     {"", "D=128 CAUSAL=1 BM=128", "D=128 CAUSAL=1 BM=128 BN=64 num_warps=8" /* examples/decoder's */,
      "D=128 CAUSAL=1 BM=128 BN=32" /* the fastest causal one on sm_80 PTX */},
     {"bh=2 seq=64", "bh=1 seq=1", "bh=3 seq=100", "bh=2 seq=257"},
     TOL_ATTN},
    /* persistent: 5 programs (several tiles each, heads mixed) and 132; on sm_90a the key loop is
     * warp-specialized across the tile loop, q by TMA per tile (its barrier's phase runs on) */
    {"fused_attn.blk", "attn_fwd_persistent",
     "out:out(bh*seq*D) q:in(bh*seq*D) k:in(bh*seq*D) v:in(bh*seq*D) lse:out(bh*seq) seq:=seq planes:=bh scale:=0.125",
     "5", NULL,
     {"LSE=1", "CAUSAL=1 LSE=1", "D=128 BM=128 BN=128 num_warps=8 LSE=1", "D=128 BM=128 BN=128 num_warps=8 CAUSAL=1 LSE=1",
      "D=128 BM=128 BN=64 num_warps=8 STAGES=3 GROUP=2 CAUSAL=1 LSE=1", "D=64 BM=128 BN=128 LSE=1",
      "BM=16 BN=16 D=32 CAUSAL=1 LSE=1", "D=64 BM=128 BN=64 STAGES=3 GROUP=3 LSE=1"},
     {"bh=2 seq=64", "bh=1 seq=1", "bh=3 seq=100", "bh=6 seq=257", "bh=2 seq=1000", "bh=12 seq=128"},
     TOL_ATTN},
    {"fused_attn.blk", "attn_fwd_persistent", /* LSE = false: lse is never touched */
     "out:out(bh*seq*D) q:in(bh*seq*D) k:in(bh*seq*D) v:in(bh*seq*D) lse:in(1) seq:=seq planes:=bh scale:=0.125",
     "132", NULL,
     {"", "D=128 BM=128 BN=128 num_warps=8 CAUSAL=1", "D=128 BM=128 BN=128 num_warps=8"},
     {"bh=2 seq=64", "bh=1 seq=1", "bh=3 seq=100", "bh=40 seq=520"},
     TOL_ATTN},
    /* persistent with a sliding window: each tile's key loop starts at its own first visible block */
    {"fused_attn.blk", "attn_fwd_persistent",
     "out:out(bh*seq*D) q:in(bh*seq*D) k:in(bh*seq*D) v:in(bh*seq*D) lse:out(bh*seq) seq:=seq planes:=bh scale:=0.125",
     "7", NULL,
     {"CAUSAL=1 WINDOW=1 LSE=1", "CAUSAL=1 WINDOW=40 LSE=1", "BM=16 BN=16 D=32 CAUSAL=1 WINDOW=100 LSE=1",
      "D=128 BM=128 BN=128 num_warps=8 CAUSAL=1 WINDOW=200 LSE=1",
      "D=128 BM=128 BN=64 num_warps=8 GROUP=2 CAUSAL=1 WINDOW=129 LSE=1"},
     {"bh=2 seq=64", "bh=1 seq=1", "bh=3 seq=100", "bh=4 seq=257", "bh=2 seq=600"},
     TOL_ATTN},
    /* sliding window (attn_fwd WINDOW): 1 = each query sees itself only; smaller than a block,
     * across block edges, longer than the sequence */
    {"fused_attn.blk", "attn_fwd", "out:out(bh*seq*D) q:in(bh*seq*D) k:in(bh*seq*D) v:in(bh*seq*D) lse:out(bh*seq) seq:=seq scale:=0.125",
     "cdiv(seq,BM),bh", NULL,
     {"CAUSAL=1 WINDOW=1 LSE=1", "CAUSAL=1 WINDOW=40 LSE=1", "BM=16 BN=16 D=32 CAUSAL=1 WINDOW=100 LSE=1",
      "D=128 BM=128 num_warps=8 CAUSAL=1 WINDOW=200 LSE=1", "D=128 BM=128 BN=128 num_warps=8 GROUP=2 CAUSAL=1 WINDOW=129 LSE=1"},
     {"bh=2 seq=64", "bh=1 seq=1", "bh=3 seq=100", "bh=2 seq=257", "bh=2 seq=600"},
     TOL_ATTN},
    /* varlen: B sequences packed [total, H, D], cum offsets (lengths 0 .. L; 1 .. L when B < 3, so
     * that some token is written); buffers sized for B*L tokens, the tail past the total stays poisoned */
    {"fused_attn.blk", "attn_fwd_varlen",
     "out:out(B*L*H*D) q:in(B*L*H*D) k:in(B*L*H*D) v:in(B*L*H*D) lse:out(H*B*L) cu_seqlens:in(B+1,cum(B<3,L+1)) "
     "heads:=H scale:=0.125",
     "cdiv(L,BM),B*H", NULL,
     {"LSE=1", "CAUSAL=1 LSE=1", "CAUSAL=1 WINDOW=30 GROUP=2 LSE=1", "D=128 BM=128 num_warps=8 CAUSAL=1 LSE=1",
      "BM=16 BN=16 D=32 LSE=1"},
     {"B=3 L=64 H=2", "B=1 L=1 H=2", "B=4 L=100 H=2", "B=5 L=257 H=4"},
     TOL_ATTN},
    /* block-sparse: CSR block lists from cum(0,NKB+1) (0 .. NKB blocks a query block, empty lists
     * included: out 0, lse -inf), the indices ri(0,NKB) in any order with repeats (the interpreter
     * runs the same list); NKB = cdiv(seq,BN) */
    {"fused_attn.blk", "attn_fwd_blocksparse",
     "out:out(bh*seq*D) q:in(bh*seq*D) k:in(bh*seq*D) v:in(bh*seq*D) lse:out(bh*seq) "
     "kv_ptr:in(cdiv(seq,BM)+1,cum(0,cdiv(seq,BN)+1)) kv_idx:in(cdiv(seq,BM)*cdiv(seq,BN),ri(0,cdiv(seq,BN))) "
     "seq:=seq scale:=0.125",
     "cdiv(seq,BM),bh", NULL,
     {"LSE=1", "CAUSAL=1 LSE=1", "D=128 LSE=1", "BM=16 BN=16 D=32 LSE=1", "BM=64 BN=32 CAUSAL=1 LSE=1",
      "D=128 BM=128 num_warps=8 CAUSAL=1 LSE=1", "D=128 BM=128 BN=128 num_warps=8 LSE=1",
      "D=128 BM=128 num_warps=8 GROUP=2 CAUSAL=1 LSE=1"},
     {"bh=2 seq=64", "bh=1 seq=1", "bh=3 seq=100", "bh=2 seq=257", "bh=2 seq=600"},
     TOL_ATTN},
    /* RoPE fused into attention: cos/sin tables of P >= seq positions (rows of D/2) */
    {"fused_attn.blk", "attn_fwd_rope",
     "out:out(bh*seq*D) q:in(bh*seq*D) k:in(bh*seq*D) v:in(bh*seq*D) lse:out(bh*seq) "
     "cos_t:in(P*(D/2),u(-1,1)) sin_t:in(P*(D/2),u(-1,1)) seq:=seq scale:=0.125",
     "cdiv(seq,BM),bh", "seq<=P",
     {"LSE=1", "CAUSAL=1 LSE=1", "D=128 LSE=1", "BM=16 BN=16 D=32 LSE=1", "D=128 BM=128 num_warps=8 CAUSAL=1 LSE=1",
      "D=128 BM=128 BN=128 num_warps=8 LSE=1", "D=128 BM=128 num_warps=8 GROUP=2 CAUSAL=1 LSE=1"},
     {"bh=2 seq=64 P=64", "bh=1 seq=1 P=8", "bh=3 seq=100 P=128", "bh=2 seq=257 P=300"},
     TOL_ATTN},
    /* backward: delta, dK/dV (one program per key block and K/V head), dQ; lse and delta drawn
     * in the range a forward gives (lse ~ ln(seq)) */
    {"fused_attn.blk", "attn_bwd_preprocess", "delta:out(bh*seq) o:in(bh*seq*D) dout:in(bh*seq*D) seq:=seq",
     "cdiv(seq,BM),bh", NULL,
     {"", "D=128 BM=32"},
     {"bh=2 seq=64", "bh=1 seq=1", "bh=3 seq=100", "bh=2 seq=257"},
     TOL_RED},
    {"fused_attn.blk", "attn_bwd_dkdv",
     "dk:out(bh*seq*D) dv:out(bh*seq*D) q:in(bh*seq*D,u(-1,1)) k:in(bh*seq*D,u(-1,1)) v:in(bh*seq*D) "
     "dout:in(bh*seq*D) lse:in(bh*seq,u(3,5)) delta:in(bh*seq,u(-1,1)) seq:=seq scale:=0.125",
     "cdiv(seq,BN),bh/GROUP", NULL,
     {"", "CAUSAL=1", "D=128 CAUSAL=1", "BM=16 BN=16 D=32", "D=128 BN=128 num_warps=8 CAUSAL=1", "GROUP=2 CAUSAL=1"},
     {"bh=2 seq=64", "bh=2 seq=1", "bh=4 seq=100", "bh=2 seq=257"},
     TOL_ATTN},
    {"fused_attn.blk", "attn_bwd_dq",
     "dq:out(bh*seq*D) q:in(bh*seq*D,u(-1,1)) k:in(bh*seq*D,u(-1,1)) v:in(bh*seq*D) dout:in(bh*seq*D) "
     "lse:in(bh*seq,u(3,5)) delta:in(bh*seq,u(-1,1)) seq:=seq scale:=0.125",
     "cdiv(seq,BM),bh", NULL,
     {"", "CAUSAL=1", "D=128 CAUSAL=1", "BM=16 BN=16 D=32", "D=128 BM=128 num_warps=8 CAUSAL=1", "GROUP=2 CAUSAL=1",
      "D=128 BM=128 BN=128 num_warps=8" /* rings past the 48 KB reservation (optimistic plan) */},
     {"bh=2 seq=64", "bh=2 seq=1", "bh=4 seq=100", "bh=2 seq=257"},
     TOL_ATTN},
    /* paged decode: a cache of B*MB pages, the block table a random permutation of them, lengths
     * 0 .. MB*PAGE (splits past a sequence's end write lse -inf, out 0); NS = splits */
    {"fused_attn.blk", "attn_decode_paged",
     "o_part:out(B*H*NS*D) lse_part:out(B*H*NS) q:in(B*H*D) k_cache:in(B*MB*PAGE*(H/GROUP)*D) "
     "v_cache:in(B*MB*PAGE*(H/GROUP)*D) block_table:in(B*MB,perm) seq_lens:in(B,ri(0,MB*PAGE+1)) heads:=H "
     "max_blocks:=MB pages_per_split:=PPS scale:=0.125",
     "NS,B*H", NULL,
     {"", "GROUP=2", "D=64 PAGE=32 GROUP=4"},
     {"B=2 H=4 MB=4 PPS=1 NS=4", "B=1 H=4 MB=1 PPS=1 NS=1", "B=3 H=8 MB=7 PPS=2 NS=cdiv(MB,PPS)",
      "B=4 H=8 MB=16 PPS=3 NS=cdiv(MB,PPS)"},
     TOL_BF16_MATH},
    {"fused_attn.blk", "attn_decode_combine",
     "out:out(R*D) lse:out(R) o_part:in(R*NS*D) lse_part:in(R*NS,u(-5,5)) num_splits:=NS", "R", "NS<=BS",
     {"", "D=64 BS=4"},
     {"R=4 NS=3", "R=1 NS=1", "R=37 NS=16", "R=64 NS=4"},
     TOL_BF16_MATH},
    {"attn_variants.blk", "linear_attn", "out:out(bh*seq*D) q:in(bh*seq*D) k:in(bh*seq*D) v:in(bh*seq*D) seq:=seq", "bh", NULL,
     {"", "CAUSAL=1"},
     {"bh=2 seq=64", "bh=1 seq=1", "bh=2 seq=100", "bh=1 seq=300"},
     TOL_BF16_MATH},

    /* ---- ../tests/gpu/math.blk: the math library (libdevice) against the interpreter (host libm).
     * Tolerances: libdevice's documented maximum ulp error (CUDA Programming Guide, "Mathematical
     * Functions") plus 1 ulp for the host libm, in units of the output type; rounding, fmod,
     * remainder, copysign, nextafter, predicates, bit operations and bit casts are exact. Every
     * 16th element and its neighbours are NaN, +-inf, +-0 or subnormal (SPECIALS=0 for the
     * fast forms, which do not promise IEEE special cases). F selects the function: see math.blk ---- */
    {"../tests/gpu/math.blk", "math_unary_f32", "out:out(n) x:in(n,u(-4,4)) n:=n", "cdiv(n,BLOCK)", NULL,
     {"F=0", "F=1", "F=2"}, /* round rint trunc */
     {"n=1000", "n=65536", "n=1", "n=300007"},
     TOL_EXACT},
    {"../tests/gpu/math.blk", "math_unary_f32", "out:out(n) x:in(n,u(-0.9,4)) n:=n", "cdiv(n,BLOCK)", NULL,
     {"F=3", "F=4", "F=16"}, /* log1p expm1 cbrt: 1 ulp */
     {"n=1000", "n=65536", "n=300007"},
     ((gk_tol){2, 0, 0})},
    {"../tests/gpu/math.blk", "math_unary_f32", "out:out(n) x:in(n,u(-0.9,4)) n:=n", "cdiv(n,BLOCK)", NULL,
     {"F=5", "F=6", "F=10", "F=12"}, /* exp10 log10 atan cosh: 2 ulp */
     {"n=1000", "n=65536", "n=300007"},
     ((gk_tol){3, 0, 0})},
    {"../tests/gpu/math.blk", "math_unary_f32", "out:out(n) x:in(n,u(-1,1)) n:=n", "cdiv(n,BLOCK)", NULL,
     {"F=8", "F=9", "F=18"}, /* asin acos erfinv: 2 ulp */
     {"n=1000", "n=65536", "n=300007"},
     ((gk_tol){3, 0, 0})},
    {"../tests/gpu/math.blk", "math_unary_f32", "out:out(n) x:in(n,u(-1,1)) n:=n", "cdiv(n,BLOCK)", NULL,
     {"F=11", "F=13", "F=15"}, /* sinh asinh atanh: 3 ulp */
     {"n=1000", "n=65536", "n=300007"},
     ((gk_tol){4, 0, 0})},
    {"../tests/gpu/math.blk", "math_unary_f32", "out:out(n) x:in(n,u(-4,4)) n:=n", "cdiv(n,BLOCK)", NULL,
     {"F=7", "F=17"}, /* tan erfc: 4 ulp */
     {"n=1000", "n=65536", "n=300007"},
     ((gk_tol){5, 0, 0})},
    {"../tests/gpu/math.blk", "math_unary_f32", "out:out(n) x:in(n,u(1,6)) n:=n", "cdiv(n,BLOCK)", NULL,
     {"F=14"}, /* acosh: 4 ulp */
     {"n=1000", "n=65536"},
     ((gk_tol){5, 0, 0})},
    {"../tests/gpu/math.blk", "math_unary_f32", "out:out(n) x:in(n,u(0.1,8)) n:=n", "cdiv(n,BLOCK)", NULL,
     {"F=19"}, /* lgamma: 6 ulp away from its zeros at 1 and 2, absolute error near them */
     {"n=1000", "n=65536"},
     ((gk_tol){7, 1e-6, 0})},
    {"../tests/gpu/math.blk", "math_unary_f32", "out:out(n) x:in(n,u(0.1,1.5)) n:=n", "cdiv(n,BLOCK)", NULL,
     {"F=20 SPECIALS=0", "F=21 SPECIALS=0", "F=22 SPECIALS=0"}, /* fast exp10 log10 tan */
     {"n=1000", "n=65536"},
     ((gk_tol){0, 2e-5, 0})},
    {"../tests/gpu/math.blk", "math_unary_f32", "out:out(n) x:in(n,u(-20,20)) n:=n", "cdiv(n,BLOCK)", NULL,
     {"F=23 SPECIALS=0"}, /* fast sigmoid (matmul's SiLU epilogue) */
     {"n=1000", "n=65536"},
     ((gk_tol){0, 2e-5, 0})},
    {"../tests/gpu/math.blk", "math_unary_f64", "out:out(n) x:in(n,u(-4,4)) n:=n", "cdiv(n,BLOCK)", NULL,
     {"F=0", "F=1", "F=2"},
     {"n=1000", "n=65536", "n=1"},
     TOL_EXACT},
    {"../tests/gpu/math.blk", "math_unary_f64", "out:out(n) x:in(n,u(-0.9,4)) n:=n", "cdiv(n,BLOCK)", NULL,
     {"F=3", "F=4", "F=5", "F=6", "F=12"}, /* log1p expm1 exp10 log10 cosh: 1 ulp */
     {"n=1000", "n=65536"},
     ((gk_tol){2, 0, 0})},
    {"../tests/gpu/math.blk", "math_unary_f64", "out:out(n) x:in(n,u(-1,1)) n:=n", "cdiv(n,BLOCK)", NULL,
     {"F=8", "F=9", "F=15", "F=10", "F=11", "F=7", "F=16"}, /* asin acos atanh atan sinh tan: 2 ulp;
                                                              cbrt: 1 ulp, 3 seen (libm's own error) */
     {"n=1000", "n=65536"},
     ((gk_tol){3, 0, 0})},
    {"../tests/gpu/math.blk", "math_unary_f64", "out:out(n) x:in(n,u(-1,1)) n:=n", "cdiv(n,BLOCK)", NULL,
     {"F=13", "F=17", "F=18"}, /* asinh: 3 ulp, erfc erfinv: 5 ulp */
     {"n=1000", "n=65536"},
     ((gk_tol){6, 0, 0})},
    {"../tests/gpu/math.blk", "math_unary_f64", "out:out(n) x:in(n,u(1,6)) n:=n", "cdiv(n,BLOCK)", NULL,
     {"F=14"}, /* acosh: 3 ulp */
     {"n=1000", "n=65536"},
     ((gk_tol){4, 0, 0})},
    {"../tests/gpu/math.blk", "math_unary_f64", "out:out(n) x:in(n,u(0.1,8)) n:=n", "cdiv(n,BLOCK)", NULL,
     {"F=19"}, /* lgamma: 4 ulp away from its zeros */
     {"n=1000", "n=65536"},
     ((gk_tol){5, 1e-14, 0})},
    {"../tests/gpu/math.blk", "math_unary_f16", "out:out(n) x:in(n,u(0.1,3)) n:=n", "cdiv(n,BLOCK)", NULL,
     {"F=0", "F=3", "F=5", "F=8", "F=16", "F=19"}, /* f32 math rounded to f16 once: 1 f16 ulp at a tie */
     {"n=1000", "n=65536"},
     ((gk_tol){1, 0, 0})},
    {"../tests/gpu/math.blk", "math_binary_f32", "out:out(n) x:in(n,u(-4,4)) y:in(n,u(-4,4)) n:=n", "cdiv(n,BLOCK)",
     NULL,
     {"F=0", "F=1", "F=2", "F=3"}, /* fmod remainder copysign nextafter */
     {"n=1000", "n=65536", "n=1", "n=300007"},
     TOL_EXACT},
    {"../tests/gpu/math.blk", "math_binary_f32", "out:out(n) x:in(n,u(-4,4)) y:in(n,u(-4,4)) n:=n", "cdiv(n,BLOCK)",
     NULL,
     {"F=4", "F=5", "F=6", "F=7"}, /* atan2 hypot: 3 ulp; pow (float and integer exponents): 4 ulp */
     {"n=1000", "n=65536", "n=300007"},
     ((gk_tol){5, 0, 0})},
    {"../tests/gpu/math.blk", "math_binary_f32", "out:out(n) x:in(n,u(0.1,4)) y:in(n,u(-3,3)) n:=n",
     "cdiv(n,BLOCK)", NULL,
     {"F=8 SPECIALS=0"}, /* fast pow: ex2.approx(y * lg2.approx(x)) */
     {"n=1000", "n=65536"},
     ((gk_tol){0, 1e-5, 0})},
    {"../tests/gpu/math.blk", "math_binary_f64", "out:out(n) x:in(n,u(-4,4)) y:in(n,u(-4,4)) n:=n", "cdiv(n,BLOCK)",
     NULL,
     {"F=0", "F=1", "F=2", "F=3"},
     {"n=1000", "n=65536"},
     TOL_EXACT},
    {"../tests/gpu/math.blk", "math_binary_f64", "out:out(n) x:in(n,u(-4,4)) y:in(n,u(-4,4)) n:=n", "cdiv(n,BLOCK)",
     NULL,
     {"F=4", "F=5", "F=6", "F=7"}, /* atan2 hypot pow: 2 ulp */
     {"n=1000", "n=65536"},
     ((gk_tol){3, 0, 0})},
    {"../tests/gpu/math.blk", "math_bits", "out:out(8*n) out64:out(4*n) x:in(n) n:=n seed:=7", "cdiv(n,BLOCK)", NULL,
     {"", "BLOCK=256"}, /* isnan isinf isfinite signbit, clz popc brev bswap mulhi, bitcast: exact */
     {"n=1000", "n=65536", "n=1", "n=300007"},
     TOL_EXACT},
    {"../tests/gpu/math.blk", "range_countdown", "out:out(n) x:in(n) n:=n", "1", NULL,
     {""}, /* for k in range(n - 1, -1, -1) */
     {"n=17", "n=1000", "n=1", "n=0"},
     TOL_EXACT},

    /* ---- ../tests/gpu/atomics.blk: ordering between programs (acquire/release fences around relaxed
     * read-modify-writes, a CTA barrier before a scalar release). A lost update or a stale read changes
     * the output; the results do not depend on the schedule ---- */
    {"../tests/gpu/atomics.blk", "ticket_lock", "lock:zero(2) shared_block:zero(B) count:zero(1)", "p", NULL,
     {"", "B=1024 num_warps=8"},
     {"p=1", "p=100", "p=2000"},
     TOL_EXACT},
    {"../tests/gpu/atomics.blk", "message_pass", "ticket:zero(1) flags:zero(q) data:out(q*B)", "q", NULL,
     {"", "B=2048 num_warps=8"},
     {"q=1", "q=64", "q=1000"},
     TOL_EXACT},

    /* ---- elementwise.blk ---- */
    {"elementwise.blk", "vector_add", "x:in(n) y:in(n) out:out(n) n:=n", "cdiv(n,BLOCK)",
     "n<(1<<24) || BLOCK==256", /* 2^24+5 with BLOCK=256: 65537 programs, past 16 bits */
     {"", "BLOCK=256", "BLOCK=4096"},
     {"n=17", "n=4112", "n=1", "n=1000", "n=65536", "n=1048583", "n=(1<<24)+5"},
     TOL_EXACT},
    {"elementwise.blk", "silu_fma", "a:in(n) b:in(n) c:in(n) out:out(n) n:=n", "cdiv(n,BLOCK)", NULL,
     {"", "BLOCK=512"},
     {"n=33", "n=4112", "n=1", "n=65536", "n=1048583"},
     TOL_BF16},
    {"elementwise.blk", "bias_add", "x:in(rows*cols) bias:in(cols) out:out(rows*cols) n_rows:=rows n_cols:=cols",
     "cdiv(rows,BR),cdiv(cols,BC)", NULL,
     {"", "BR=4 BC=64", "BR=32 BC=512"},
     {"rows=3 cols=5", "rows=48 cols=272", "rows=1 cols=1", "rows=33 cols=1000", "rows=64 cols=4096"},
     TOL_EXACT},
    {"elementwise.blk", "activation", "x:in(n) out:out(n) n:=n", "cdiv(n,BLOCK)", NULL,
     {"ACT=0", "ACT=1", "ACT=2", "ACT=1 BLOCK=256"},
     {"n=17", "n=4112", "n=65536", "n=300007"},
     TOL_MATH},
    {"elementwise.blk", "copy", "x:in(n) out:out(n) n:=n", "cdiv(n,BLOCK)", NULL,
     {"", "BLOCK=128"},
     {"n=5", "n=4112", "n=65536", "n=300007"},
     TOL_EXACT},

    /* ---- diffusion.blk ---- */
    {"diffusion.blk", "denoise_blend",
     "x_noisy:in(n) noise_pred:in(n) prev_frame:in(n) out:out(n) sqrt_alpha_bar:in(T,u(0.1,1)) "
     "alpha:in(T,u(0.5,1)) t:=ts w:=u(0,1) lo:=-1.5 hi:=1.5 n:=n",
     "cdiv(n,BLOCK)", NULL,
     {"", "BLOCK=256"},
     {"n=21 T=50 ts=7", "n=4112 T=64 ts=32", "n=65536 T=1000 ts=0", "n=300007 T=1000 ts=999"},
     TOL_BF16},
    {"diffusion.blk", "temporal_blend", "cur:in(n) prev:in(n) out:out(n) w:=u(0,1) threshold:=0.5 n:=n",
     "cdiv(n,BLOCK)", NULL,
     {"", "BLOCK=256"},
     {"n=21", "n=4112", "n=65536", "n=300007"},
     TOL_BF16},

    /* ---- softmax.blk ---- */
    {"softmax.blk", "softmax", "out:out(rows*stride) inp:in(rows*stride) stride:=stride n_cols:=cols", "rows",
     "cols<=BLOCK",
     {"", "BLOCK=256", "BLOCK=2048"},
     {"rows=3 cols=5 stride=7", "rows=16 cols=256 stride=256", "rows=1 cols=1 stride=1",
      "rows=37 cols=1000 stride=1003", "rows=64 cols=1024 stride=1040", "rows=8 cols=2048 stride=2048"},
     TOL_RED},
    {"softmax.blk", "softmax_online", "out:out(rows*stride) inp:in(rows*stride) stride:=stride n_cols:=cols", "rows",
     NULL,
     {"", "BLOCK=256", "BLOCK=128"},
     {"rows=3 cols=5 stride=7", "rows=16 cols=512 stride=512", "rows=37 cols=1000 stride=1003",
      "rows=8 cols=5000 stride=5003", "rows=16 cols=4096 stride=4096"},
     TOL_RED},
    {"softmax.blk", "log_softmax", "out:out(rows*stride) inp:in(rows*stride) stride:=stride n_cols:=cols", "rows",
     "cols<=BLOCK",
     {"", "BLOCK=256"},
     {"rows=3 cols=5 stride=7", "rows=16 cols=256 stride=256", "rows=37 cols=1000 stride=1003",
      "rows=64 cols=1024 stride=1024"},
     TOL_RED},
    {"softmax.blk", "cross_entropy",
     "loss:out(rows) logits:in(rows*stride) target:in(rows,ri(0,cols)) stride:=stride n_cols:=cols", "rows",
     "cols<=BLOCK",
     {"", "BLOCK=256"},
     {"rows=3 cols=5 stride=7", "rows=16 cols=256 stride=256", "rows=37 cols=1000 stride=1003",
      "rows=64 cols=1024 stride=1024"},
     TOL_RED},

    /* ---- norm.blk ---- */
    {"norm.blk", "layernorm_fwd",
     "y:out(rows*stride) x:in(rows*stride) w:in(cols) b:in(cols) mean:out(rows) rstd:out(rows) "
     "stride:=stride n_cols:=cols eps:=1e-5",
     "rows", "cols<=BLOCK",
     {"", "BLOCK=256"},
     {"rows=3 cols=5 stride=7", "rows=16 cols=256 stride=256", "rows=37 cols=1000 stride=1003",
      "rows=64 cols=1024 stride=1024"},
     TOL_RED},
    {"norm.blk", "layernorm_bwd",
     "dx:out(rows*stride) dw:zero(cols) db:zero(cols) dy:in(rows*stride) x:in(rows*stride) w:in(cols) "
     "mean:in(rows,u(-0.5,0.5)) rstd:in(rows,u(0.5,2)) stride:=stride n_cols:=cols",
     "rows", "cols<=BLOCK",
     {"", "BLOCK=256"},
     {"rows=3 cols=5 stride=7", "rows=16 cols=256 stride=256", "rows=37 cols=1000 stride=1003",
      "rows=64 cols=1024 stride=1024"},
     TOL_RED},
    {"norm.blk", "rmsnorm", "y:out(rows*stride) x:in(rows*stride) w:in(cols) stride:=stride n_cols:=cols eps:=1e-6",
     "rows", "cols<=BLOCK",
     {"", "BLOCK=256", "BLOCK=4096 num_warps=4" /* examples/decoder's */},
     {"rows=3 cols=5 stride=7", "rows=16 cols=256 stride=256", "rows=37 cols=1000 stride=1003",
      "rows=64 cols=1024 stride=1024"},
     TOL_BF16},
    {"norm.blk", "add_layernorm",
     "y:out(rows*stride) h_out:out(rows*stride) x:in(rows*stride) residual:in(rows*stride) w:in(cols) b:in(cols) "
     "stride:=stride n_cols:=cols eps:=1e-5",
     "rows", "cols<=BLOCK",
     {"", "BLOCK=256"},
     {"rows=3 cols=5 stride=7", "rows=16 cols=256 stride=256", "rows=37 cols=1000 stride=1003",
      "rows=64 cols=1024 stride=1024"},
     TOL_BF16},
    {"norm.blk", "batchnorm_infer",
     "y:out(N*C*hw) x:in(N*C*hw) running_mean:in(C) running_var:in(C,u(0.1,2)) gamma:in(C) beta:in(C) "
     "channels:=C hw:=hw eps:=1e-5",
     "cdiv(hw,BLOCK),C,N", NULL,
     {"", "BLOCK=256"},
     {"N=1 C=3 hw=5", "N=2 C=16 hw=1024", "N=3 C=5 hw=1000", "N=2 C=32 hw=4112"},
     TOL_MATH},

    /* ---- reduce.blk ---- */
    {"reduce.blk", "row_sum", "out:out(rows) x:in(rows*stride) stride:=stride n_cols:=cols", "rows", "cols<=BLOCK",
     {"", "BLOCK=256", "BLOCK=2048"},
     {"rows=3 cols=5 stride=7", "rows=16 cols=256 stride=256", "rows=37 cols=1000 stride=1003",
      "rows=64 cols=1024 stride=1024", "rows=8 cols=2048 stride=2048"},
     TOL_RED},
    {"reduce.blk", "row_max_argmax", "out:out(rows) idx:out(rows) x:in(rows*stride) stride:=stride n_cols:=cols",
     "rows", "cols<=BLOCK",
     {"", "BLOCK=256"},
     {"rows=3 cols=5 stride=7", "rows=16 cols=256 stride=256", "rows=37 cols=1000 stride=1003",
      "rows=64 cols=1024 stride=1024"},
     TOL_EXACT},
    {"reduce.blk", "col_sum", "out:out(cols) x:in(rows*stride) n_rows:=rows n_cols:=cols stride:=stride",
     "cdiv(cols,BC)", NULL,
     {"", "BR=8 BC=64", "BR=64 BC=256"},
     {"rows=3 cols=5 stride=7", "rows=64 cols=256 stride=256", "rows=1 cols=1 stride=1",
      "rows=100 cols=1000 stride=1003", "rows=512 cols=1024 stride=1024"},
     TOL_RED},
    {"reduce.blk", "cumsum_rows", "out:out(rows*stride) x:in(rows*stride) stride:=stride n_cols:=cols", "rows",
     "cols<=BLOCK",
     {"", "BLOCK=256"},
     {"rows=3 cols=5 stride=7", "rows=16 cols=256 stride=256", "rows=37 cols=1000 stride=1003",
      "rows=64 cols=1024 stride=1024"},
     TOL_RED},
    {"reduce.blk", "topk_rows",
     "values:out(rows*K) indices:out(rows*K) x:in(rows*stride) stride:=stride n_cols:=cols", "rows",
     "cols<=BLOCK && cols>=K",
     {"", "K=1", "K=8 BLOCK=256"},
     {"rows=3 cols=9 stride=11", "rows=16 cols=256 stride=256", "rows=37 cols=1000 stride=1003",
      "rows=64 cols=1024 stride=1024"},
     TOL_EXACT},

    /* ---- layout.blk ---- */
    {"layout.blk", "transpose", "out:out(rows*cols) x:in(rows*cols) n_rows:=rows n_cols:=cols",
     "cdiv(rows,B),cdiv(cols,B)", NULL,
     {"", "B=32", "B=16"},
     {"rows=3 cols=5", "rows=64 cols=48", "rows=1 cols=1", "rows=100 cols=37", "rows=512 cols=272"},
     TOL_EXACT},
    {"layout.blk", "bshd_to_bhsd", "out:out(Bt*S*H*D) x:in(Bt*S*H*D) seq:=S heads:=H", "cdiv(S,BS),H,Bt", NULL,
     {"", "D=64 BS=16", "D=32 BS=64"},
     {"Bt=1 S=3 H=2", "Bt=2 S=64 H=16", "Bt=2 S=100 H=3", "Bt=1 S=256 H=16"},
     TOL_EXACT},
    {"layout.blk", "bhsd_to_bshd", "out:out(Bt*S*H*D) x:in(Bt*S*H*D) seq:=S heads:=H", "cdiv(S,BS),H,Bt", NULL,
     {"", "D=64 BS=16", "D=32 BS=64"},
     {"Bt=1 S=3 H=2", "Bt=2 S=64 H=16", "Bt=2 S=100 H=3", "Bt=1 S=256 H=16"},
     TOL_EXACT},

    /* ---- attn_variants.blk ---- */
    {"attn_variants.blk", "rope",
     "out:out(T*H*D) x:in(T*H*D) cos_t:in(P*(D/2),u(-1,1)) sin_t:in(P*(D/2),u(-1,1)) pos:in(T,ri(0,P)) "
     "seq:=S heads:=H",
     "T,cdiv(H,BH)", "S<=P",
     {"", "D=64 BH=4 HAS_POS=true", "D=32 BH=2"},
     {"T=3 S=3 H=1 P=8", "T=32 S=16 H=16 P=64", "T=40 S=7 H=5 P=64", "T=256 S=128 H=32 P=512"},
     TOL_BF16},
    {"attn_variants.blk", "rope_qk",
     "q_out:out(T*QH*D) k_out:out(T*KH*D) q:in(T*QH*D) k:in(T*KH*D) cos_t:in(P*(D/2),u(-1,1)) "
     "sin_t:in(P*(D/2),u(-1,1)) pos:in(T,ri(0,P)) seq:=S q_heads:=QH kv_heads:=KH",
     "T,cdiv(max(QH,KH),BH)", "S<=P",
     {"", "D=64 BH=4 HAS_POS=true", "D=32 BH=2"},
     {"T=3 S=3 QH=2 KH=1 P=8", "T=32 S=16 QH=32 KH=16 P=64", "T=40 S=7 QH=12 KH=4 P=64",
      "T=128 S=64 QH=32 KH=8 P=128"},
     TOL_BF16},
    {"attn_variants.blk", "rope_theta", "out:out(T*H*D) x:in(T*H*D) pos:in(T,ri(0,P)) seq:=S heads:=H theta:=10000",
     "T,cdiv(H,BH)", NULL,
     {"", "D=64 BH=4 HAS_POS=true", "D=32 BH=2"},
     {"T=3 S=3 H=1 P=8", "T=32 S=16 H=16 P=64", "T=40 S=7 H=5 P=64", "T=256 S=128 H=32 P=512"},
     TOL_BF16_MATH},

    /* ---- moe.blk ---- */
    {"moe.blk", "moe_router",
     "weights:out(T*K) experts:out(T*K) counts:zero(E) prob_sum:zero(E) logits:in(T*E) n_tokens:=T n_experts:=E",
     "cdiv(T,BT)", "E<=BE && K<=E",
     {"", "K=1 BT=16 BE=16 RENORM=false", "K=6 BE=128", "K=8 BT=64"},
     {"T=5 E=8", "T=64 E=16", "T=100 E=60", "T=1000 E=64", "T=777 E=128"},
     TOL_RED},
    {"moe.blk", "moe_router_bf16",
     "weights:out(T*K) experts:out(T*K) counts:zero(E) prob_sum:zero(E) logits:in(T*E) n_tokens:=T n_experts:=E",
     "cdiv(T,BT)", "E<=BE && K<=E",
     {"", "K=1 BT=16 BE=16 RENORM=false", "K=6 BE=128"},
     {"T=5 E=8", "T=64 E=16", "T=100 E=60", "T=1000 E=64", "T=777 E=128"},
     TOL_RED},
    {"moe.blk", "moe_aux_loss",
     "counts:in(E,ri(0,100)) prob_sum:in(E,u(0,50)) loss:out(1) n_tokens:=T n_experts:=E k:=kk", "1", NULL,
     {"", "BE=64"},
     {"T=10 E=8 kk=2", "T=4096 E=64 kk=16", "T=1000 E=300 kk=1", "T=8192 E=1000 kk=16"},
     TOL_RED},

    /* moe.blk expert computation: sort (random routing: the counts are taken from it), permute and
     * unpermute (random in-range row indices), grouped GEMM (sorted random offsets: empty experts,
     * rows before offsets[0] and after offsets[E] left unwritten) */
    {"moe.blk", "moe_sort", "offsets:out(E+1) pos:out(S) src:out(S) experts:in(S,ri(0,E)) n_slots:=S n_experts:=E",
     "1", "E<=BE",
     {"", "BE=16 BS=64", "BE=128 BS=128"},
     {"S=64 E=8", "S=1 E=1", "S=100 E=60", "S=2000 E=16", "S=4099 E=64"},
     TOL_EXACT},
    {"moe.blk", "moe_permute", "xs:out(T*K*hid) x:in(T*hid) src:in(T*K,ri(0,T*K)) n_rows:=T*K hidden:=hid",
     "cdiv(T*K,BR),cdiv(hid,BH)", NULL,
     {"", "K=1 BR=32 BH=64", "K=4 BH=128"},
     {"T=64 hid=256", "T=1 hid=1", "T=37 hid=300", "T=500 hid=1000"},
     TOL_EXACT},
    {"moe.blk", "moe_grouped_gemm",
     "out:out(R*n) xs:in(R*k) w:in(E*n*k) offsets:in(E+1,sri(0,R+1)) N:=n K:=k n_experts:=E",
     "cdiv(R,BM)+E,cdiv(n,BN)", "E<=BE",
     {"", "BM=64 BN=64 BK=32 num_warps=4", "BM=16 BN=32 BK=16 num_warps=4 BE=16"},
     {"R=256 n=128 k=64 E=4", "R=7 n=3 k=5 E=6", /* offsets all equal (nothing written): about 1 in 7^6 */ "R=300 n=200 k=100 E=8", "R=1000 n=130 k=72 E=16",
      "R=64 n=64 k=64 E=12"},
     TOL_BF16},
    {"moe.blk", "moe_unpermute",
     "out:out(T*hid) ys:in(T*K*hid) pos:in(T*K,ri(0,T*K)) weights:in(T*K,u(0,1)) n_tokens:=T hidden:=hid",
     "cdiv(T,BT),cdiv(hid,BH)", NULL,
     {"", "K=1 BT=32 BH=64", "K=4 BH=128"},
     {"T=64 hid=256", "T=1 hid=1", "T=37 hid=300", "T=500 hid=1000"},
     TOL_BF16},

    /* ---- long rows (issue 3): norm.blk rmsnorm / layernorm of any length and alignment
     * (16-byte-aligned rows in registers, the rest CHUNK columns at a time), softmax FAST ---- */
#define GK_ANY_ROWS /* configs and sizes: the aligned whole-row path, LOOPED, rows longer than BLOCK */ \
    {"BLOCK=256", "LOOPED=true CHUNK=128", "BLOCK=64 CHUNK=256", "BLOCK=8192"},                  \
    {"rows=16 cols=200 stride=208", "rows=3 cols=300 stride=300", "rows=16 cols=256 stride=256",  \
     "rows=37 cols=1000 stride=1003", "rows=8 cols=5000 stride=5000", "rows=4 cols=1 stride=8"}
    {"norm.blk", "rmsnorm", "y:out(rows*stride) x:in(rows*stride) w:in(cols) stride:=stride n_cols:=cols eps:=1e-6",
     "rows", NULL, GK_ANY_ROWS, TOL_BF16},
    {"norm.blk", "layernorm",
     "y:out(rows*stride) x:in(rows*stride) w:in(cols) b:in(cols) stride:=stride n_cols:=cols eps:=1e-5",
     "rows", NULL, GK_ANY_ROWS, TOL_BF16},
#undef GK_ANY_ROWS
    {"softmax.blk", "softmax", "out:out(rows*stride) inp:in(rows*stride) stride:=stride n_cols:=cols", "rows",
     "cols<=BLOCK",
     {"FAST=true", "BLOCK=256 FAST=true", "BLOCK=16384 num_warps=16 FAST=true"},
     {"rows=3 cols=5 stride=7", "rows=16 cols=256 stride=256", "rows=37 cols=1000 stride=1003",
      "rows=8 cols=12345 stride=12345"},
     TOL_RED},
    {"softmax.blk", "softmax_online", "out:out(rows*stride) inp:in(rows*stride) stride:=stride n_cols:=cols", "rows",
     NULL,
     {"FAST=true", "BLOCK=2048 FAST=true"},
     {"rows=3 cols=5 stride=7", "rows=16 cols=512 stride=512", "rows=8 cols=12345 stride=12345"},
     TOL_RED},

    /* ---- ../tests/gpu/sort.blk: sort and topk (compiler/codegen/cg_sort.c). Inputs ri(-4,4):
     * ties everywhere; the kernels add NaNs and -0.0 and store zeros as 1/x. Configs reach the
     * register network (one warp per row, rows over warps), registers + shared memory (a row over
     * several warps), the local-memory network (BLOCK=256 R=64 f16; BLOCK=8192 i32 also crosses
     * warps), topk by rounds (K <= 8) and through the sort ---- */
    {"../tests/gpu/sort.blk", "sort_rows_f32", "out:out(rows*cols) x:in(rows*cols,ri(-4,4)) n_rows:=rows n_cols:=cols",
     "cdiv(rows,R)", "cols<=BLOCK",
     {"", "BLOCK=256 R=4 DESC=true", "BLOCK=4096", "BLOCK=32 R=16 num_warps=2", "BLOCK=2048 num_warps=8 DESC=true"},
     {"rows=3 cols=5", "rows=16 cols=256", "rows=7 cols=1000", "rows=3 cols=4096", "rows=40 cols=32"},
     TOL_EXACT},
    {"../tests/gpu/sort.blk", "sort_rows_f16", "out:out(rows*cols) x:in(rows*cols,ri(-4,4)) n_rows:=rows n_cols:=cols",
     "cdiv(rows,R)", "cols<=BLOCK",
     {"", "BLOCK=4096 DESC=true", "BLOCK=256 R=64", "BLOCK=4096 num_warps=2", "BLOCK=64 R=8 num_warps=1"},
     {"rows=3 cols=5", "rows=16 cols=256", "rows=70 cols=200", "rows=3 cols=4096"},
     TOL_EXACT},
    {"../tests/gpu/sort.blk", "sort_rows_bf16", "out:out(rows*cols) x:in(rows*cols,ri(-4,4)) n_rows:=rows n_cols:=cols",
     "cdiv(rows,R)", "cols<=BLOCK",
     {"", "BLOCK=512 R=2 DESC=true"},
     {"rows=3 cols=5", "rows=16 cols=256", "rows=7 cols=1000"},
     TOL_EXACT},
    {"../tests/gpu/sort.blk", "sort_rows_i32", "out:out(rows*cols) x:in(rows*cols,ri(-4,4)) n_rows:=rows n_cols:=cols",
     "cdiv(rows,R)", "cols<=BLOCK",
     {"", "BLOCK=2048 DESC=true", "BLOCK=64 R=32", "BLOCK=8192"},
     {"rows=3 cols=5", "rows=16 cols=256", "rows=70 cols=50", "rows=2 cols=8000"},
     TOL_EXACT},
    {"../tests/gpu/sort.blk", "sort_cols_f32", "out:out(rows*cols) x:in(rows*cols,ri(-4,4)) n_rows:=rows n_cols:=cols",
     "cdiv(cols,C)", "rows<=BLOCK",
     {"", "BLOCK=1024 C=2 DESC=true", "BLOCK=32 C=64"},
     {"rows=5 cols=3", "rows=256 cols=16", "rows=1000 cols=7", "rows=32 cols=100"},
     TOL_EXACT},
    {"../tests/gpu/sort.blk", "sort_topk_f32",
     "values:out(rows*K) indices:out(rows*K) x:in(rows*cols,ri(-4,4)) n_rows:=rows n_cols:=cols", "cdiv(rows,R)",
     "cols<=BLOCK",
     {"", "K=8 BLOCK=256 R=4", "K=64", "K=1024", "K=16 BLOCK=4096", "K=2 BLOCK=32 R=8 num_warps=1"},
     {"rows=3 cols=9", "rows=16 cols=256", "rows=7 cols=1000", "rows=2 cols=4096"},
     TOL_EXACT},
    {"../tests/gpu/sort.blk", "sort_topk_f16",
     "values:out(rows*K) indices:out(rows*K) x:in(rows*cols,ri(-4,4)) n_rows:=rows n_cols:=cols", "cdiv(rows,R)",
     "cols<=BLOCK",
     {"K=2", "K=32 BLOCK=2048", "K=256 BLOCK=256 R=4"},
     {"rows=3 cols=9", "rows=16 cols=256", "rows=5 cols=2000"},
     TOL_EXACT},
    {"../tests/gpu/sort.blk", "sort_topk_i32",
     "values:out(rows*K) indices:out(rows*K) x:in(rows*cols,ri(-4,4)) n_rows:=rows n_cols:=cols", "cdiv(rows,R)",
     "cols<=BLOCK",
     {"", "K=128", "K=8 BLOCK=64 R=16"},
     {"rows=3 cols=9", "rows=16 cols=256", "rows=7 cols=1000"},
     TOL_EXACT},
    /* ---- ../examples/tutorials: the kernels of docs/tutorials ---- */
    {"../examples/tutorials/vector_add.blk", "vector_add", "x:in(n) y:in(n) out:out(n) n:=n", "cdiv(n,BLOCK)", NULL,
     {"", "BLOCK=256"},
     {"n=1000", "n=4096", "n=1", "n=100003"},
     TOL_EXACT},
    {"../examples/tutorials/softmax.blk", "softmax",
     "y:out(rows*stride) x:in(rows*stride) x_stride:=stride y_stride:=stride n_rows:=rows n_cols:=cols",
     "min(rows,8)", "cols<=BLOCK",
     {"", "BLOCK=128", "BLOCK=4096 num_warps=8"},
     {"rows=3 cols=5 stride=7", "rows=16 cols=256 stride=256", "rows=53 cols=100 stride=131",
      "rows=37 cols=1000 stride=1003", "rows=5 cols=2500 stride=2500"},
     TOL_RED},
    {"../examples/tutorials/matmul.blk", "matmul",
     "c:out(m*n) a:in(m*k) b:in(k*n) M:=m N:=n K:=k stride_am:=k stride_bk:=n stride_cm:=n",
     "cdiv(m,BM)*cdiv(n,BN)", NULL,
     {"", "BM=32 BN=32 BK=16 GROUP=3", "BM=128 BN=128 BK=32 num_warps=8", "LEAKY_RELU=1"},
     {"m=64 n=64 k=32", "m=1 n=1 k=1", "m=100 n=75 k=130", "m=256 n=256 k=256", "m=300 n=200 k=48"},
     TOL_BF16},
    {"../examples/tutorials/attention.blk", "attention",
     "out:out(bh*seq*D) q:in(bh*seq*D) k:in(bh*seq*D) v:in(bh*seq*D) seq:=seq scale:=0.125",
     "cdiv(seq,BM),bh", NULL,
     {"", "CAUSAL=1", "D=32 BM=32 BN=16 CAUSAL=1", "BM=128 BN=64 num_warps=8"},
     {"bh=2 seq=64", "bh=1 seq=1", "bh=3 seq=77", "bh=2 seq=257"},
     TOL_ATTN},
    {"../examples/tutorials/layer_norm.blk", "layer_norm_fwd",
     "y:out(rows*stride) x:in(rows*stride) w:in(cols) b:in(cols) mean:out(rows) rstd:out(rows) "
     "stride:=stride N:=cols eps:=1e-5",
     "rows", "cols<=BLOCK",
     {"", "BLOCK=256"},
     {"rows=3 cols=5 stride=7", "rows=16 cols=256 stride=256", "rows=45 cols=300 stride=310",
      "rows=64 cols=1024 stride=1024"},
     TOL_RED},
    {"../examples/tutorials/layer_norm.blk", "layer_norm_bwd_dx",
     "dx:out(rows*stride) dw_part:out(g*cols) db_part:out(g*cols) dy:in(rows*stride) x:in(rows*stride) w:in(cols) "
     "mean:in(rows,u(-0.5,0.5)) rstd:in(rows,u(0.5,2)) stride:=stride M:=rows N:=cols",
     "g", "cols<=BLOCK",
     {"", "BLOCK=256"},
     {"rows=3 cols=5 stride=7 g=2", "rows=16 cols=256 stride=256 g=4", "rows=45 cols=300 stride=310 g=8",
      "rows=7 cols=1000 stride=1000 g=16"},
     TOL_RED},
    {"../examples/tutorials/layer_norm.blk", "layer_norm_bwd_dwdb",
     "dw:out(cols) db:out(cols) dw_part:in(g*cols) db_part:in(g*cols) G:=g N:=cols", "cdiv(cols,BN)", NULL,
     {"", "BG=4 BN=64"},
     {"g=2 cols=5", "g=16 cols=256", "g=37 cols=1000"},
     TOL_RED},
    {"../examples/tutorials/dropout.blk", "dropout", "out:out(n) x:in(n) n:=n p:=0.3 seed:=12345", "cdiv(n,BLOCK)",
     NULL,
     {"", "BLOCK=256"},
     {"n=1000", "n=4096", "n=1", "n=100003"},
     TOL_MATH},
};

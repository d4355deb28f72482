// tma_stream.cu: how fast can a matmul's operand tiles stream through TMA rings
// at a few-token shape, by how the tiles are cut? No tensor cores: consumers wait
// for each stage and release it at once, so each line is the data movement's floor
// for that tiling (docs/benchmarks.md, twenty-third session). a [M,K] (tokens) and
// b [K,N] (weights) bf16 row-major, as bench.py's sweep rows; per program a ring of
// STAGES slots, each BK = 64 deep: one producer thread (TMA, mbarrier expect_tx),
// one consumer warpgroup (try_wait, one arrive per warp). Tilings:
//   tok x w   : each program reads tok rows of a and w columns of b over its K range
//   split S   : the K range cut into S programs
//   mc        : clusters of two along M sharing the weights tile, each CTA issuing
//               half its rows multicast to both (cuBLAS's nvjet 64x32 1x2 at
//               64x4096x4096, in its transposed view: 64 weight columns, 32 tokens)
//   cl, cl+x  : split 2 launched as clusters of two (the pair = the tile's two K
//               halves), meeting at entry and exit (barrier.cluster); +x: then the
//               exchange cluster_sum makes (rank 0 stores 32 f32 per consumer
//               thread into rank 1's shared memory through mapa)
// cuBLAS (cublasGemmEx, the same product) runs in the same loop for reference.
// The L2 is flushed (256 MB memset) before every launch; median of REPS, µs.
//   nvcc -O3 -std=c++17 -gencode arch=compute_90a,code=sm_90a tma_stream.cu -lcuda -lcublas -o tma_stream
//   ./tma_stream [REPS [M N K]]
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <algorithm>
#include <cuda.h>
#include <cuda_runtime.h>
#include <cublas_v2.h>
#include <cuda_bf16.h>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { printf("%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); exit(1); } } while (0)

struct Params { int M, N, K, tok, w, split, mc, stages, nk, cl; };

__device__ __forceinline__ unsigned smem_addr(const void *p) { return (unsigned)__cvta_generic_to_shared(p); }
__device__ __forceinline__ void wait_parity(unsigned bar, unsigned ph) {
    asm volatile("{ .reg .pred p; W: mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1; @!p bra W; }" :: "r"(bar), "r"(ph) : "memory");
}

__global__ void __launch_bounds__(256) stream(const __grid_constant__ CUtensorMap ta, const __grid_constant__ CUtensorMap tb,
                                              Params P, int *sink) {
    extern __shared__ __align__(1024) unsigned char raw[];
    unsigned base = (smem_addr(raw) + 1023) & ~1023u;
    int tokb = P.tok * 64 * 2, wb = P.w * 64 * 2, slot = tokb + wb;
    unsigned bars = base + P.stages * slot;  // full[stages], empty[stages]
    int bid = blockIdx.x, s = bid % P.split, rest = bid / P.split, mt = P.M / P.tok;
    int m_t = rest % mt, n_t = rest / mt;
    unsigned rank = 0;
    if (P.mc || P.cl) asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));
    if (threadIdx.x == 0) {
        for (int i = 0; i < P.stages; i++) {
            asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(bars + 8 * i));
            asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" :: "r"(bars + 8 * (P.stages + i)), "r"(P.mc ? 8 : 4));
        }
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    }
    if (P.mc || P.cl) {
        asm volatile("barrier.cluster.arrive.release.aligned; barrier.cluster.wait.acquire.aligned;" ::: "memory");
    } else {
        __syncthreads();
    }
    int k0 = s * P.nk;
    if (threadIdx.x == 128) {
        asm volatile("prefetch.tensormap [%0];" :: "l"(&ta) : "memory");
        asm volatile("prefetch.tensormap [%0];" :: "l"(&tb) : "memory");
        for (int i = 0; i < P.nk; i++) {
            int st = i % P.stages;
            if (i >= P.stages) wait_parity(bars + 8 * (P.stages + st), ((i / P.stages) - 1) & 1);
            unsigned full = bars + 8 * st, dst = base + st * slot;
            asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" :: "r"(full), "r"(slot) : "memory");
            int kc = (k0 + i) * 64;
            asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];"
                         :: "r"(dst), "l"(&ta), "r"(kc), "r"(m_t * P.tok), "r"(full) : "memory");
            if (P.mc) {
                unsigned short mask = 3;
                asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster [%0], [%1, {%2, %3}], [%4], %5;"
                             :: "r"(dst + tokb + rank * (wb / 2)), "l"(&tb), "r"(n_t * P.w), "r"(kc + (int)rank * 32), "r"(full), "h"(mask) : "memory");
            } else {
                asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];"
                             :: "r"(dst + tokb), "l"(&tb), "r"(n_t * P.w), "r"(kc), "r"(full) : "memory");
            }
        }
    } else if (threadIdx.x < 128) {
        int acc = 0;
        for (int i = 0; i < P.nk; i++) {
            int st = i % P.stages;
            wait_parity(bars + 8 * st, (i / P.stages) & 1);
            int v;
            asm volatile("ld.shared.b32 %0, [%1];" : "=r"(v) : "r"(base + st * slot + threadIdx.x * 4) : "memory");
            acc += v;
            __syncwarp();
            if ((threadIdx.x & 31) == 0) {
                unsigned e = bars + 8 * (P.stages + st);
                asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" :: "r"(e) : "memory");
                if (P.mc) {
                    unsigned r;
                    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(r) : "r"(e), "r"(rank ^ 1));
                    asm volatile("mbarrier.arrive.shared::cluster.b64 _, [%0];" :: "r"(r) : "memory");
                }
            }
        }
        if (acc == 0x12345) sink[0] = acc;
        if (P.cl == 2 && rank == 0) { /* cluster_sum's exchange: 32 registers per thread into rank 1 */
            unsigned buf = bars + 16 * P.stages + 64, r;
            asm volatile("mapa.shared::cluster.u32 %0, %1, 1;" : "=r"(r) : "r"(buf));
            for (int k = 0; k < 32; k++)
                asm volatile("st.shared::cluster.f32 [%0], %1;" :: "r"(r + (k * 128 + threadIdx.x) * 4), "f"((float)(acc + k)) : "memory");
        }
    }
    if (P.mc || P.cl) asm volatile("barrier.cluster.arrive.release.aligned; barrier.cluster.wait.acquire.aligned;" ::: "memory");
}

typedef CUresult (*encode_fn)(CUtensorMap *, CUtensorMapDataType, cuuint32_t, void *, const cuuint64_t *, const cuuint64_t *,
                              const cuuint32_t *, const cuuint32_t *, CUtensorMapInterleave, CUtensorMapSwizzle,
                              CUtensorMapL2promotion, CUtensorMapFloatOOBfill);

static CUtensorMap map2d(void *p, int rows, int cols, int box_cols, int box_rows) {
    CUtensorMap m;
    cuuint64_t dims[2] = {(cuuint64_t)cols, (cuuint64_t)rows}, strides[1] = {(cuuint64_t)cols * 2};
    cuuint32_t box[2] = {(cuuint32_t)box_cols, (cuuint32_t)box_rows}, es[2] = {1, 1};
    CUtensorMapSwizzle sw = box_cols * 2 == 128 ? CU_TENSOR_MAP_SWIZZLE_128B : box_cols * 2 == 64 ? CU_TENSOR_MAP_SWIZZLE_64B : CU_TENSOR_MAP_SWIZZLE_32B;
    CUresult r = cuTensorMapEncodeTiled(&m, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, p, dims, strides, box, es, CU_TENSOR_MAP_INTERLEAVE_NONE, sw,
                                        CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (r != CUDA_SUCCESS) { printf("encode failed %d\n", (int)r); exit(1); }
    return m;
}

__global__ void fill(__nv_bfloat16 *p, size_t n, unsigned seed) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        p[i] = __float2bfloat16((float)((unsigned)(i * 2654435761u + seed) >> 8) / 16777216.0f - 0.5f);
}

int main(int argc, char **argv) {
    int reps = argc > 1 ? atoi(argv[1]) : 50;
    int M = argc > 4 ? atoi(argv[2]) : 64, N = argc > 4 ? atoi(argv[3]) : 4096, K = argc > 4 ? atoi(argv[4]) : 4096;
    __nv_bfloat16 *a, *b, *c;
    int *sink;
    char *flush;
    CK(cudaMalloc(&a, (size_t)M * K * 2)); CK(cudaMalloc(&b, (size_t)K * N * 2)); CK(cudaMalloc(&c, (size_t)M * N * 2));
    CK(cudaMalloc(&sink, 4)); CK(cudaMalloc(&flush, 256 << 20));
    fill<<<1024, 256>>>(a, (size_t)M * K, 1); fill<<<1024, 256>>>(b, (size_t)K * N, 2);
    CK(cudaDeviceSynchronize());
    cublasHandle_t h; cublasCreate(&h);
    CK(cudaFuncSetAttribute(stream, cudaFuncAttributeMaxDynamicSharedMemorySize, 227 * 1024));
    struct { int tok, w, split, mc, stages, cl; } cfgs[] = {
        {64, 64, 1, 0, 12, 0}, {64, 32, 1, 0, 16, 0}, {64, 64, 2, 0, 12, 0}, {64, 32, 2, 0, 16, 0}, {32, 64, 1, 0, 16, 0},
        {32, 64, 1, 1, 16, 0}, {64, 64, 1, 0, 6, 0}, {64, 64, 2, 0, 6, 0}, {32, 64, 1, 1, 8, 0}, {64, 64, 4, 0, 6, 0},
        {32, 64, 2, 0, 8, 0}, {64, 64, 2, 0, 12, 1}, {64, 64, 2, 0, 12, 2}, {64, 64, 2, 0, 6, 1}, {64, 64, 2, 0, 6, 2},
    };
    cudaEvent_t e0, e1; cudaEventCreate(&e0); cudaEventCreate(&e1);
    printf("%dx%dx%d, median of %d, L2 flushed (µs)\n", M, N, K, reps);
    printf("%-22s %8s %8s\n", "tiling", "programs", "us");
    for (int ci = -1; ci < (int)(sizeof cfgs / sizeof cfgs[0]); ci++) {
        std::vector<float> t;
        Params P{};
        CUtensorMap ta{}, tb{};
        int grid = 0, smem = 0;
        if (ci >= 0) {
            auto &C = cfgs[ci];
            P = Params{M, N, K, C.tok, C.w, C.split, C.mc, C.stages, K / 64 / C.split, C.cl};
            ta = map2d(a, M, K, 64, C.tok);
            tb = map2d(b, K, N, C.w, C.mc ? 32 : 64);
            grid = (M / C.tok) * (N / C.w) * C.split;
            smem = C.stages * (C.tok + C.w) * 128 + 1024 + 16 * C.stages + (C.cl == 2 ? 64 + 16384 : 0);
        }
        for (int r = 0; r < reps + 10; r++) {
            CK(cudaMemsetAsync(flush, r & 0xff, 256 << 20));
            cudaEventRecord(e0);
            if (ci < 0) {
                float one = 1, zero = 0;
                cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, &one, b, CUDA_R_16BF, N, a, CUDA_R_16BF, K, &zero, c, CUDA_R_16BF, N,
                             CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
            } else {
                cudaLaunchConfig_t lc = {};
                cudaLaunchAttribute at[1];
                lc.gridDim = dim3(grid); lc.blockDim = dim3(256); lc.dynamicSmemBytes = smem;
                at[0].id = cudaLaunchAttributeClusterDimension;
                at[0].val.clusterDim.x = P.mc || P.cl ? 2 : 1; at[0].val.clusterDim.y = 1; at[0].val.clusterDim.z = 1;
                lc.attrs = at; lc.numAttrs = 1;
                CK(cudaLaunchKernelEx(&lc, stream, ta, tb, P, sink));
            }
            cudaEventRecord(e1);
            CK(cudaEventSynchronize(e1));
            float ms; cudaEventElapsedTime(&ms, e0, e1);
            if (r >= 10) t.push_back(ms * 1000);
        }
        CK(cudaGetLastError());
        std::sort(t.begin(), t.end());
        char name[64];
        if (ci < 0) snprintf(name, sizeof name, "cuBLAS GemmEx");
        else snprintf(name, sizeof name, "%dx%d s%d split%d%s%s", cfgs[ci].tok, cfgs[ci].w, cfgs[ci].stages, cfgs[ci].split,
                      cfgs[ci].mc ? " mc" : "", cfgs[ci].cl == 1 ? " cl" : cfgs[ci].cl == 2 ? " cl+x" : "");
        printf("%-22s %8d %8.2f\n", name, grid, t[t.size() / 2]);
    }
    return 0;
}

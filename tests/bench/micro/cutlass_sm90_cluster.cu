// cutlass_sm90_cluster.cu: does TMA multicast within thread-block clusters make
// bf16 GEMMs faster on H100/H200? CUTLASS 3.x's sm90a TMA warp-specialized GEMM
// (wgmma + TMA, CollectiveBuilder, NVIDIA's own) at cluster 1x1x1 (no multicast),
// 2x1x1 (B tile multicast to the 2 CTAs along M) and 1x2x1 (A tile multicast to
// the 2 CTAs along N), for the cooperative and ping-pong persistent schedules
// (128xN tiles) and the plain one-consumer-warpgroup schedule (64xN tiles).
// bf16 A row-major [M,K], B column-major [K,N] (= B^T row-major [N,K]; both
// K-major: "TN"), D bf16 row-major [M,N], f32 accumulate, alpha=1 beta=0 (no C
// operand: ElementC=void, so no smem goes to C). TMA epilogues; stage count
// StageCountAutoCarveout; tile scheduler defaults (persistent, raster heuristic,
// swizzle 1). Events around each launch, median of REPS after 10 warm-up
// launches; the L2 is never flushed (it stays warm: A/B of the small shapes fit).
// Each config's output is checked on 64 random elements against a host double
// reference: printed for the shape's first config, else only when BAD.
// Build here (CUTLASS is header-only; the device machine has no network):
//   fetch github:NVIDIA/cutlass, then
//   nvcc -O3 -DNDEBUG -std=c++17 -gencode arch=compute_90a,code=sm_90a --expt-relaxed-constexpr \
//        -I cutlass/include -I cutlass/tools/util/include \
//        cutlass_sm90_cluster.cu -o cutlass_sm90_cluster
// (-DNDEBUG: CUTLASS's device asserts otherwise make ptxas serialize every
// wgmma; static cudart; 15 sm90 instantiations, 1.5 minutes on 2 cores) and
// carry the binary:
//   ./cutlass_sm90_cluster REPS [MxNxK ...]
// Output, one line per (shape, config): MxNxK tile cluster schedule median_us tflops
#include <cstdio>
#include <cstdlib>
#include <cstdint>
#include <cmath>
#include <vector>
#include <algorithm>
#include <cuda_runtime.h>

#include "cutlass/cutlass.h"
#include "cutlass/bfloat16.h"
#include "cute/tensor.hpp"
#include "cutlass/gemm/dispatch_policy.hpp"
#include "cutlass/gemm/collective/collective_builder.hpp"
#include "cutlass/epilogue/collective/collective_builder.hpp"
#include "cutlass/gemm/device/gemm_universal_adapter.h"
#include "cutlass/gemm/kernel/gemm_universal.hpp"
#include "cutlass/util/packed_stride.hpp"

#if defined(__CUDA_ARCH__) && !defined(CUTLASS_ARCH_MMA_SM90A_ENABLED)
#error "needs -gencode arch=compute_90a,code=sm_90a (wgmma/TMA kernels)"
#endif

using namespace cute;
using bf16 = cutlass::bfloat16_t;

template <class TileShape, class ClusterShape, class KernelSched, class EpiSched>
struct Cfg {
  using LayoutA = cutlass::layout::RowMajor;     // [M,K], K-major
  using LayoutB = cutlass::layout::ColumnMajor;  // [K,N] column-major = [N,K] row-major, K-major
  using LayoutD = cutlass::layout::RowMajor;     // [M,N]
  static constexpr int Align = 16 / sizeof(bf16);

  using CollectiveEpilogue = typename cutlass::epilogue::collective::CollectiveBuilder<
      cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, TileShape, ClusterShape,
      cutlass::epilogue::collective::EpilogueTileAuto, float, float,
      void, LayoutD, Align,  // no C operand (beta = 0)
      bf16, LayoutD, Align, EpiSched>::CollectiveOp;

  using CollectiveMainloop = typename cutlass::gemm::collective::CollectiveBuilder<
      cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp,
      bf16, LayoutA, Align, bf16, LayoutB, Align, float, TileShape, ClusterShape,
      cutlass::gemm::collective::StageCountAutoCarveout<
          static_cast<int>(sizeof(typename CollectiveEpilogue::SharedStorage))>,
      KernelSched>::CollectiveOp;

  using GemmKernel = cutlass::gemm::kernel::GemmUniversal<
      Shape<int, int, int, int>, CollectiveMainloop, CollectiveEpilogue>;
  using Gemm = cutlass::gemm::device::GemmUniversalAdapter<GemmKernel>;
};

using Coop = cutlass::gemm::KernelTmaWarpSpecializedCooperative;
using CoopEpi = cutlass::epilogue::TmaWarpSpecializedCooperative;
using Ping = cutlass::gemm::KernelTmaWarpSpecializedPingpong;
using WS = cutlass::gemm::KernelTmaWarpSpecialized;
using WSEpi = cutlass::epilogue::TmaWarpSpecialized;

struct Problem {
  int M, N, K;
  bf16 *a, *b, *d;
  const std::vector<bf16> *ha, *hb;
  int reps;
  bool first;  // no config has verified this shape yet
  cutlass::KernelHardwareInfo hw;
};

static uint32_t lcg_state = 12345u;
static inline uint32_t lcg() { lcg_state = lcg_state * 1664525u + 1013904223u; return lcg_state; }

// 64 random elements of D against a double reference; returns max |d-ref|/(|ref|+1)
// (NaN/inf output -> inf).
static double check(const Problem &p) {
  double worst = 0;
  uint32_t s = 777u;
  for (int t = 0; t < 64; t++) {
    s = s * 1664525u + 1013904223u; int i = (s >> 8) % p.M;
    s = s * 1664525u + 1013904223u; int j = (s >> 8) % p.N;
    double ref = 0;
    const bf16 *ar = p.ha->data() + (size_t)i * p.K, *br = p.hb->data() + (size_t)j * p.K;
    for (int k = 0; k < p.K; k++) ref += (double)(float)ar[k] * (double)(float)br[k];
    bf16 g;
    cudaMemcpy(&g, p.d + (size_t)i * p.N + j, sizeof(bf16), cudaMemcpyDeviceToHost);
    double got = (float)g;
    double e = std::isfinite(got) ? std::abs(got - ref) / (std::abs(ref) + 1.0) : INFINITY;
    worst = std::max(worst, e);
  }
  return worst;
}

template <class C>
static void run(Problem &p, const char *tile, const char *cluster, const char *sched) {
  using Gemm = typename C::Gemm;
  using SA = typename Gemm::GemmKernel::StrideA;
  using SB = typename Gemm::GemmKernel::StrideB;
  using SC = typename Gemm::GemmKernel::StrideC;
  using SD = typename Gemm::GemmKernel::StrideD;
  int M = p.M, N = p.N, K = p.K;
  char shape[64];
  snprintf(shape, sizeof shape, "%dx%dx%d", M, N, K);
  SA sa = cutlass::make_cute_packed_stride(SA{}, make_shape(M, K, 1));
  SB sb = cutlass::make_cute_packed_stride(SB{}, make_shape(N, K, 1));
  SC sc = cutlass::make_cute_packed_stride(SC{}, make_shape(M, N, 1));
  SD sd = cutlass::make_cute_packed_stride(SD{}, make_shape(M, N, 1));
  typename Gemm::Arguments args{
      cutlass::gemm::GemmUniversalMode::kGemm, {M, N, K, 1},
      {p.a, sa, p.b, sb},
      {{1.0f, 0.0f}, nullptr, sc, p.d, sd},
      p.hw};
  Gemm gemm;
  cutlass::Status st = gemm.can_implement(args);
  if (st != cutlass::Status::kSuccess) {
    printf("%-16s %-10s %-6s %-9s cannot implement: %s\n", shape, tile, cluster, sched, cutlassGetStatusString(st));
    return;
  }
  size_t ws = Gemm::get_workspace_size(args);
  void *workspace = nullptr;
  if (ws) cudaMalloc(&workspace, ws);
  st = gemm.initialize(args, workspace);
  if (st != cutlass::Status::kSuccess) {
    printf("%-16s %-10s %-6s %-9s init failed: %s\n", shape, tile, cluster, sched, cutlassGetStatusString(st));
    cudaFree(workspace);
    return;
  }
  cudaMemset(p.d, 0xff, (size_t)M * N * sizeof(bf16));  // NaN: stale output can't pass the check
  for (int i = 0; i < 10 && st == cutlass::Status::kSuccess; i++) st = gemm.run();
  cudaError_t err = cudaDeviceSynchronize();
  if (st != cutlass::Status::kSuccess || err != cudaSuccess) {
    printf("%-16s %-10s %-6s %-9s run failed: %s / %s\n", shape, tile, cluster, sched,
           cutlassGetStatusString(st), cudaGetErrorString(err));
    cudaGetLastError();
    cudaFree(workspace);
    return;
  }
  cudaEvent_t e0, e1;
  cudaEventCreate(&e0); cudaEventCreate(&e1);
  std::vector<float> t;
  t.reserve(p.reps);
  for (int i = 0; i < p.reps; i++) {
    cudaEventRecord(e0);
    st = gemm.run();
    cudaEventRecord(e1);
    cudaEventSynchronize(e1);
    float ms; cudaEventElapsedTime(&ms, e0, e1); t.push_back(ms);
    if (st != cutlass::Status::kSuccess) break;
  }
  err = cudaGetLastError();
  cudaEventDestroy(e0); cudaEventDestroy(e1);
  cudaFree(workspace);
  if (st != cutlass::Status::kSuccess || err != cudaSuccess) {
    printf("%-16s %-10s %-6s %-9s run failed: %s / %s\n", shape, tile, cluster, sched,
           cutlassGetStatusString(st), cudaGetErrorString(err));
    return;
  }
  std::sort(t.begin(), t.end());
  double us = t[t.size() / 2] * 1e3;
  printf("%-16s %-10s %-6s %-9s %10.1f %8.1f\n", shape, tile, cluster, sched, us, 2.0 * M * N * K / us * 1e-6);
  double e = check(p);
  if (p.first || !(e < 2e-2))
    printf("check %s (%s %s %s): max rel err |d-ref|/(|ref|+1) over 64 elements %.3g (%s)\n",
           shape, tile, cluster, sched, e, e < 2e-2 ? "ok" : "BAD");
  p.first = false;
  fflush(stdout);
}

template <int M, int N, int K> using T = Shape<Int<M>, Int<N>, Int<K>>;
template <int X, int Y> using CL = Shape<Int<X>, Int<Y>, _1>;

static void run_all(Problem &p) {
  run<Cfg<T<128, 256, 64>, CL<1, 1>, Coop, CoopEpi>>(p, "128x256x64", "1x1x1", "coop");
  run<Cfg<T<128, 256, 64>, CL<2, 1>, Coop, CoopEpi>>(p, "128x256x64", "2x1x1", "coop");
  run<Cfg<T<128, 256, 64>, CL<1, 2>, Coop, CoopEpi>>(p, "128x256x64", "1x2x1", "coop");
  run<Cfg<T<128, 128, 64>, CL<1, 1>, Coop, CoopEpi>>(p, "128x128x64", "1x1x1", "coop");
  run<Cfg<T<128, 128, 64>, CL<2, 1>, Coop, CoopEpi>>(p, "128x128x64", "2x1x1", "coop");
  run<Cfg<T<128, 128, 64>, CL<1, 2>, Coop, CoopEpi>>(p, "128x128x64", "1x2x1", "coop");
  run<Cfg<T<128, 128, 64>, CL<1, 1>, Ping, WSEpi>>(p, "128x128x64", "1x1x1", "pingpong");
  run<Cfg<T<128, 128, 64>, CL<2, 1>, Ping, WSEpi>>(p, "128x128x64", "2x1x1", "pingpong");
  run<Cfg<T<128, 128, 64>, CL<1, 2>, Ping, WSEpi>>(p, "128x128x64", "1x2x1", "pingpong");
  run<Cfg<T<64, 128, 64>, CL<1, 1>, WS, WSEpi>>(p, "64x128x64", "1x1x1", "ws");
  run<Cfg<T<64, 128, 64>, CL<2, 1>, WS, WSEpi>>(p, "64x128x64", "2x1x1", "ws");
  run<Cfg<T<64, 128, 64>, CL<1, 2>, WS, WSEpi>>(p, "64x128x64", "1x2x1", "ws");
  run<Cfg<T<64, 64, 64>, CL<1, 1>, WS, WSEpi>>(p, "64x64x64", "1x1x1", "ws");
  run<Cfg<T<64, 64, 64>, CL<2, 1>, WS, WSEpi>>(p, "64x64x64", "2x1x1", "ws");
  run<Cfg<T<64, 64, 64>, CL<1, 2>, WS, WSEpi>>(p, "64x64x64", "1x2x1", "ws");
}

int main(int argc, char **argv) {
  int reps = argc > 1 ? atoi(argv[1]) : 50;
  if (reps < 1) reps = 1;
  std::vector<const char *> shapes;
  for (int i = 2; i < argc; i++) shapes.push_back(argv[i]);
  if (shapes.empty())
    shapes = {"64x4096x4096", "256x11008x4096", "256x4096x4096", "1024x4096x4096", "4096x4096x4096", "8192x8192x8192"};

  cudaDeviceProp prop;
  if (cudaGetDeviceProperties(&prop, 0) != cudaSuccess) { printf("no CUDA device\n"); return 1; }
  printf("# %s, %d SMs, sm_%d%d; reps %d, median of individually timed launches, L2 warm\n",
         prop.name, prop.multiProcessorCount, prop.major, prop.minor, reps);
  printf("%-16s %-10s %-6s %-9s %10s %8s\n", "MxNxK", "tile", "cluster", "schedule", "median_us", "tflops");

  for (const char *s : shapes) {
    int M, N, K;
    if (sscanf(s, "%dx%dx%d", &M, &N, &K) != 3 || M < 1 || N < 1 || K < 1) { printf("bad shape %s\n", s); continue; }
    std::vector<bf16> ha((size_t)M * K), hb((size_t)N * K);  // A [M,K], B^T [N,K]
    for (auto &x : ha) x = bf16((lcg() >> 8) * (2.0f / 16777216.0f) - 1.0f);
    for (auto &x : hb) x = bf16((lcg() >> 8) * (2.0f / 16777216.0f) - 1.0f);
    bf16 *a, *b, *d;
    if (cudaMalloc(&a, ha.size() * sizeof(bf16)) != cudaSuccess ||
        cudaMalloc(&b, hb.size() * sizeof(bf16)) != cudaSuccess ||
        cudaMalloc(&d, (size_t)M * N * sizeof(bf16)) != cudaSuccess) {
      printf("%s: cudaMalloc failed\n", s); return 1;
    }
    cudaMemcpy(a, ha.data(), ha.size() * sizeof(bf16), cudaMemcpyHostToDevice);
    cudaMemcpy(b, hb.data(), hb.size() * sizeof(bf16), cudaMemcpyHostToDevice);
    Problem p{M, N, K, a, b, d, &ha, &hb, reps, true, {}};
    p.hw.device_id = 0;
    p.hw.sm_count = cutlass::KernelHardwareInfo::query_device_multiprocessor_count(0);
    run_all(p);
    cudaFree(a); cudaFree(b); cudaFree(d);
  }
  return 0;
}

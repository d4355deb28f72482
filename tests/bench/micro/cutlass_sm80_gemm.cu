// cutlass_sm80_gemm.cu: the mma.sync reference for docs/benchmarks.md ("mma.sync
// at the power cap"): CUTLASS 2.x's sm80 multistage GEMM (mma.sync m16n8k16 +
// cp.async, NVIDIA's own), bf16 row-major A[M,K] x B[K,N] -> C bf16, f32
// accumulate: the problem of stdlib matmul on sm_80 PTX, 8192^3. Events, median.
// Build here (CUTLASS is header-only; the device machine has no network):
//   fetch github:NVIDIA/cutlass, then
//   nvcc -O3 -std=c++17 -gencode arch=compute_80,code=sm_90 -I cutlass/include \
//        cutlass_sm80_gemm.cu -o cutlass_sm80_gemm
// and carry the binary: ./cutlass_sm80_gemm REPS [CONFIG] (CONFIG 0..4, else all).
// REPS >= 1000 measures the card's sustained (power-capped) clock.
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <algorithm>
#include <cuda_runtime.h>
#include "cutlass/cutlass.h"
#include "cutlass/gemm/device/gemm.h"
#include "cutlass/bfloat16.h"

using bf16 = cutlass::bfloat16_t;
using Row = cutlass::layout::RowMajor;

template <int BM, int BN, int BK, int WM, int WN, int STAGES, int SWZ>
struct Cfg {
  using Gemm = cutlass::gemm::device::Gemm<
      bf16, Row, bf16, Row, bf16, Row, float,
      cutlass::arch::OpClassTensorOp, cutlass::arch::Sm80,
      cutlass::gemm::GemmShape<BM, BN, BK>, cutlass::gemm::GemmShape<WM, WN, BK>,
      cutlass::gemm::GemmShape<16, 8, 16>,
      cutlass::epilogue::thread::LinearCombination<bf16, 8, float, float>,
      cutlass::gemm::threadblock::GemmIdentityThreadblockSwizzle<SWZ>, STAGES>;
};

template <class G>
static void run(const char *name, int M, int N, int K, bf16 *a, bf16 *b, bf16 *c, int reps) {
  G gemm;
  typename G::Arguments args({M, N, K}, {a, K}, {b, N}, {c, N}, {c, N}, {1.0f, 0.0f});
  cutlass::Status st = gemm.can_implement(args);
  if (st != cutlass::Status::kSuccess) { printf("%-28s cannot implement: %s\n", name, cutlassGetStatusString(st)); return; }
  st = gemm.initialize(args);
  if (st != cutlass::Status::kSuccess) { printf("%-28s init failed: %s\n", name, cutlassGetStatusString(st)); return; }
  for (int i = 0; i < 5; i++) gemm();
  cudaEvent_t e0, e1;
  cudaEventCreate(&e0); cudaEventCreate(&e1);
  std::vector<float> t;
  for (int i = 0; i < reps; i++) {
    cudaEventRecord(e0);
    st = gemm();
    cudaEventRecord(e1);
    cudaEventSynchronize(e1);
    float ms; cudaEventElapsedTime(&ms, e0, e1); t.push_back(ms);
  }
  cudaError_t err = cudaGetLastError();
  if (st != cutlass::Status::kSuccess || err != cudaSuccess) { printf("%-28s run failed: %s\n", name, cudaGetErrorString(err)); return; }
  std::sort(t.begin(), t.end());
  double us = t[t.size() / 2] * 1e3;
  printf("%-28s %5dx%5dx%5d  %8.1f us  %6.1f TFLOP/s\n", name, M, N, K, us, 2.0 * M * N * K / us * 1e-6);
}

static void check(int M, int N, int K, const std::vector<bf16> &ha, const std::vector<bf16> &hb, bf16 *c) {
  std::vector<bf16> hc((size_t)M * N);
  cudaMemcpy(hc.data(), c, hc.size() * sizeof(bf16), cudaMemcpyDeviceToHost);
  double worst = 0;
  for (int s = 0; s < 64; s++) {
    int i = (s * 7919) % M, j = (s * 104729) % N;
    double ref = 0;
    for (int k = 0; k < K; k++) ref += (double)(float)ha[(size_t)i * K + k] * (double)(float)hb[(size_t)k * N + j];
    double got = (float)hc[(size_t)i * N + j];
    worst = std::max(worst, std::abs(got - ref) / (std::abs(ref) + 1.0));
  }
  printf("check %dx%dx%d: worst rel err %.3g (%s)\n", M, N, K, worst, worst < 2e-2 ? "ok" : "BAD");
}

int main(int argc, char **argv) {
  int M = 8192, N = 8192, K = 8192, reps = argc > 1 ? atoi(argv[1]) : 50;
  std::vector<bf16> ha((size_t)M * K), hb((size_t)K * N);
  srand(1234);
  for (auto &x : ha) x = bf16((rand() / (float)RAND_MAX) * 2.f - 1.f);
  for (auto &x : hb) x = bf16((rand() / (float)RAND_MAX) * 2.f - 1.f);
  bf16 *a, *b, *c;
  cudaMalloc(&a, ha.size() * 2); cudaMalloc(&b, hb.size() * 2); cudaMalloc(&c, (size_t)M * N * 2);
  cudaMemcpy(a, ha.data(), ha.size() * 2, cudaMemcpyHostToDevice);
  cudaMemcpy(b, hb.data(), hb.size() * 2, cudaMemcpyHostToDevice);
  cudaMemset(c, 0xff, (size_t)M * N * 2);
  int only = argc > 2 ? atoi(argv[2]) : -1;
  if (only < 0 || only == 0) { run<Cfg<128, 256, 64, 64, 64, 3, 8>::Gemm>("cutlass 128x256x64 s3", M, N, K, a, b, c, reps); check(M, N, K, ha, hb, c); }
  if (only < 0 || only == 1) run<Cfg<128, 256, 64, 64, 64, 4, 8>::Gemm>("cutlass 128x256x64 s4", M, N, K, a, b, c, reps);
  if (only < 0 || only == 2) run<Cfg<256, 128, 64, 64, 64, 3, 8>::Gemm>("cutlass 256x128x64 s3", M, N, K, a, b, c, reps);
  if (only < 0 || only == 3) run<Cfg<128, 128, 64, 64, 64, 4, 8>::Gemm>("cutlass 128x128x64 s4 w4", M, N, K, a, b, c, reps);
  if (only < 0 || only == 4) run<Cfg<128, 256, 32, 64, 64, 3, 8>::Gemm>("cutlass 128x256x32 s3", M, N, K, a, b, c, reps);
  return 0;
}

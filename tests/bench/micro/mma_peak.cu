// mma_peak.cu: the peak of mma.sync m16n8k16 bf16 (f32 accumulate) on this GPU, by
// warps per SM (docs/benchmarks.md, "How far mma.sync can go"). Each warp runs
// ITERS x NACC independent mma.sync on register operands (no memory in the loop).
// On the GPU machine: nvcc -O3 -arch=sm_90a -o mma_peak mma_peak.cu && ./mma_peak
#include <cstdio>
#include <cuda_runtime.h>
template <int NACC>
__global__ void mma_loop(float *out, int iters) {
    unsigned a0 = threadIdx.x, a1 = a0 * 3, a2 = a0 * 5, a3 = a0 * 7, b0 = a0 * 11, b1 = a0 * 13;
    float acc[NACC][4] = {};
    for (int it = 0; it < iters; it++) {
#pragma unroll
        for (int k = 0; k < NACC; k++)
            asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                         : "+f"(acc[k][0]), "+f"(acc[k][1]), "+f"(acc[k][2]), "+f"(acc[k][3])
                         : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
    }
    float s = 0;
    for (int k = 0; k < NACC; k++) s += acc[k][0] + acc[k][1] + acc[k][2] + acc[k][3];
    if (s == 12345.f) out[0] = s;
}
int main() {
    int sms; cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
    float *out; cudaMalloc(&out, 4);
    cudaEvent_t e0, e1; cudaEventCreate(&e0); cudaEventCreate(&e1);
    int iters = 4096;
    printf("warps/SM  TFLOP/s (mma.sync m16n8k16 bf16, 16 independent accumulators per warp)\n");
    int wps[] = {4, 8, 12, 16, 24, 32};
    for (int w : wps) {
        int threads = 128, blocks = sms * (w / 4);
        mma_loop<16><<<blocks, threads>>>(out, 16);
        cudaEventRecord(e0);
        mma_loop<16><<<blocks, threads>>>(out, iters);
        cudaEventRecord(e1); cudaEventSynchronize(e1);
        float ms; cudaEventElapsedTime(&ms, e0, e1);
        double flops = 2.0 * 16 * 8 * 16 * 16.0 * iters * blocks * (threads / 32);
        printf("%8d  %7.1f\n", w, flops / ms / 1e9);
    }
    return 0;
}

// vadd.cu — tiny hand-written kernels for tests/gpu/test_gpu_vadd.c, compiled
// to PTX by nvcc at build time. They follow blk's launch model: one program
// (thread block of 32 * num_warps = 128 threads) per BLOCK elements, grid =
// cdiv(n, BLOCK). The blk-meta lines describing them are written by the test.
#include <cuda_fp16.h>

#define THREADS 128
#define BLOCK 512  // elements per program: 4 per thread

// Fallback variant: any alignment, any n.
extern "C" __global__ void vadd(const float *x, const float *y, float *out, int n) {
    int base = blockIdx.x * BLOCK;
    for (int k = 0; k < 4; k++) {
        int i = base + k * THREADS + threadIdx.x;
        if (i < n) out[i] = x[i] + y[i];
    }
}

// Specialised variant: x, y, out 16-byte aligned and n divisible by 16, so
// every float4 is either wholly inside or wholly outside [0, n).
extern "C" __global__ void vadd_v4(const float *x, const float *y, float *out, int n) {
    int i = blockIdx.x * BLOCK + threadIdx.x * 4;
    if (i < n) {
        float4 a = *reinterpret_cast<const float4 *>(x + i);
        float4 b = *reinterpret_cast<const float4 *>(y + i);
        *reinterpret_cast<float4 *>(out + i) = make_float4(a.x + b.x, a.y + b.y, a.z + b.z, a.w + b.w);
    }
}

// acc[i] += x[i]: replaying a captured graph of k launches adds k * x.
extern "C" __global__ void acc(const float *x, float *acc, int n) {
    int base = blockIdx.x * BLOCK;
    for (int k = 0; k < 4; k++) {
        int i = base + k * THREADS + threadIdx.x;
        if (i < n) acc[i] += x[i];
    }
}

// Reverses each 16384-element chunk through 64 KB of dynamic shared memory
// (more than the 48 KB default: needs the opt-in the runtime does).
#define CHUNK 16384
extern "C" __global__ void smem_reverse(const float *x, float *out, int n) {
    extern __shared__ float buf[];
    int base = blockIdx.x * CHUNK;
    for (int j = threadIdx.x; j < CHUNK; j += THREADS) buf[j] = base + j < n ? x[base + j] : 0.0f;
    __syncthreads();
    for (int j = threadIdx.x; j < CHUNK; j += THREADS)
        if (base + j < n) out[base + j] = buf[CHUNK - 1 - j];
}

// out[i] = x[i] * a with an f16 scalar parameter (a 2-byte .b16 param).
extern "C" __global__ void scale_f16(const float *x, float *out, __half a, int n) {
    int base = blockIdx.x * BLOCK;
    float s = __half2float(a);
    for (int k = 0; k < 4; k++) {
        int i = base + k * THREADS + threadIdx.x;
        if (i < n) out[i] = x[i] * s;
    }
}

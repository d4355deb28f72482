/* test_cuda_abi — runtime/cuda_api.h against the CUDA toolkit's headers.
 *
 * libblkrt declares the driver entry points itself (no toolkit needed to
 * build it). Here the same X-macro list is compiled with NVIDIA's types and
 * every signature is compared with cudaTypedefs.h's PFN_<name>_v<version>, and
 * every constant with cuda.h's: a mismatch fails the build of this test. */
#define RT_CUDA_REAL_HEADER 1
#include <cuda.h>
#include <cudaTypedefs.h>
#include <stdio.h>

#include "cuda_api.h"

#define CHECK_SIG(name, version, symbol, params)                                           \
    _Static_assert(__builtin_types_compatible_p(PFN_##name##_v##version, rt_pfn_##name), \
                   #name " v" #version " differs from cudaTypedefs.h");
RT_CUDA_FUNCS(CHECK_SIG)
_Static_assert(__builtin_types_compatible_p(PFN_cuGetProcAddress_v12000, rt_pfn_cuGetProcAddress), "cuGetProcAddress");

#define SAME(x) _Static_assert((int)RT_##x == (int)x, #x);
SAME(CUDA_SUCCESS)
SAME(CUDA_ERROR_INVALID_VALUE)
SAME(CUDA_ERROR_OUT_OF_MEMORY)
SAME(CUDA_ERROR_NOT_INITIALIZED)
SAME(CUDA_ERROR_DEINITIALIZED)
SAME(CUDA_ERROR_STUB_LIBRARY)
SAME(CUDA_ERROR_NO_DEVICE)
SAME(CUDA_ERROR_INVALID_DEVICE)
SAME(CUDA_ERROR_INVALID_IMAGE)
SAME(CUDA_ERROR_INVALID_CONTEXT)
SAME(CUDA_ERROR_NO_BINARY_FOR_GPU)
SAME(CUDA_ERROR_INVALID_PTX)
SAME(CUDA_ERROR_JIT_COMPILER_NOT_FOUND)
SAME(CUDA_ERROR_UNSUPPORTED_PTX_VERSION)
SAME(CUDA_ERROR_JIT_COMPILATION_DISABLED)
SAME(CUDA_ERROR_INVALID_HANDLE)
SAME(CUDA_ERROR_NOT_FOUND)
SAME(CUDA_ERROR_NOT_READY)
SAME(CUDA_ERROR_ILLEGAL_ADDRESS)
SAME(CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES)
SAME(CUDA_ERROR_LAUNCH_TIMEOUT)
SAME(CUDA_ERROR_ILLEGAL_INSTRUCTION)
SAME(CUDA_ERROR_MISALIGNED_ADDRESS)
SAME(CUDA_ERROR_LAUNCH_FAILED)
SAME(CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED)
SAME(CUDA_ERROR_STREAM_CAPTURE_INVALIDATED)
SAME(CUDA_ERROR_UNKNOWN)
SAME(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK)
SAME(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X)
SAME(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y)
SAME(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z)
SAME(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X)
SAME(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y)
SAME(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z)
SAME(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK)
SAME(CU_DEVICE_ATTRIBUTE_WARP_SIZE)
SAME(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)
SAME(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)
SAME(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)
SAME(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)
SAME(CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK)
SAME(CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES)
SAME(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES)
SAME(CU_JIT_INFO_LOG_BUFFER)
SAME(CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES)
SAME(CU_JIT_ERROR_LOG_BUFFER)
SAME(CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES)
SAME(CU_JIT_LOG_VERBOSE)
SAME(CU_STREAM_DEFAULT)
SAME(CU_EVENT_DEFAULT)
SAME(CU_STREAM_CAPTURE_MODE_THREAD_LOCAL)
SAME(CU_GET_PROC_ADDRESS_LEGACY_STREAM)
SAME(CU_GET_PROC_ADDRESS_SUCCESS)

/* The handle and value types of the non-toolkit build have the same sizes. */
_Static_assert(sizeof(CUdeviceptr) == sizeof(unsigned long long), "CUdeviceptr");
_Static_assert(sizeof(CUdevice) == sizeof(int), "CUdevice");
_Static_assert(sizeof(CUresult) == sizeof(int), "CUresult");
_Static_assert(sizeof(CUjit_option) == sizeof(int), "enums are int-sized");

int main(void) {
    printf("test_cuda_abi: ok (runtime/cuda_api.h matches cuda.h %d)\n", CUDA_VERSION);
    return 0;
}

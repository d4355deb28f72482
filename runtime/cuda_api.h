/* cuda_api.h — the part of the CUDA Driver API that libblkrt uses, declared
 * here so that building the runtime needs no CUDA toolkit (the driver is
 * opened with dlopen at run time; see driver.c).
 *
 * RT_CUDA_FUNCS is the one list of entry points: X(name, version, symbol,
 * params). `version` is the CUDA version whose ABI of `name` the signature
 * below matches: cuGetProcAddress(name, version) returns exactly that
 * variant, so a newer driver can never hand us a function whose signature
 * changed (cuCtxSynchronize took a context in 13.0, for example). `symbol` is
 * the exported name for plain dlsym when cuGetProcAddress is unavailable.
 * tests/runtime/test_cuda_abi.c checks every signature and constant here
 * against the toolkit's cuda.h / cudaTypedefs.h (PFN_<name>_v<version>).
 */
#ifndef BLK_RT_CUDA_API_H
#define BLK_RT_CUDA_API_H

#include <stddef.h>

#ifdef RT_CUDA_REAL_HEADER
#include <cuda.h>  /* only in the ABI test: the same names with NVIDIA's types */
#else
typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef unsigned long long cuuint64_t;
typedef struct CUctx_st *CUcontext;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct CUstream_st *CUstream;
typedef struct CUevent_st *CUevent;
typedef struct CUgraph_st *CUgraph;
typedef struct CUgraphExec_st *CUgraphExec;
/* C enums are passed as int: these are the enum types' ABI. */
typedef int CUdevice_attribute;
typedef int CUfunction_attribute;
typedef int CUjit_option;
typedef int CUstreamCaptureMode;
typedef int CUdriverProcAddressQueryResult;
typedef unsigned int cuuint32_t;
typedef int CUtensorMapDataType;
typedef int CUtensorMapInterleave;
typedef int CUtensorMapSwizzle;
typedef int CUtensorMapL2promotion;
typedef int CUtensorMapFloatOOBfill;
/* 128 opaque bytes; the driver wants them 64-byte aligned, cuda.h declares
 * 128 (the stricter one serves both). */
typedef struct CUtensorMap_st {
    _Alignas(128) cuuint64_t opaque[16];
} CUtensorMap;
/* cuLaunchKernelEx's configuration, with only the attribute value the
 * runtime sets (clusterDim). cuda.h's value union is 64 bytes and holds
 * pointers (8-byte aligned); CUlaunchAttributeID is an enum (int) padded to 8
 * bytes. The layout is pinned below against both definitions. */
typedef int CUlaunchAttributeID;
typedef struct CUlaunchAttribute_st {
    CUlaunchAttributeID id;
    char pad[8 - sizeof(CUlaunchAttributeID)];
    union {
        _Alignas(8) char pad[64];
        struct {
            unsigned int x, y, z;
        } clusterDim;
    } value;
} CUlaunchAttribute;
typedef struct CUlaunchConfig_st {
    unsigned int gridDimX, gridDimY, gridDimZ;
    unsigned int blockDimX, blockDimY, blockDimZ;
    unsigned int sharedMemBytes;
    CUstream hStream;
    CUlaunchAttribute *attrs;  /* NULL if numAttrs == 0 */
    unsigned int numAttrs;
} CUlaunchConfig;
#endif

/* The layout the driver reads (LP64), for this file's types and, in the ABI
 * test, for cuda.h's. */
_Static_assert(sizeof(CUlaunchAttribute) == 72 && _Alignof(CUlaunchAttribute) == 8, "CUlaunchAttribute");
_Static_assert(offsetof(CUlaunchAttribute, value) == 8 && offsetof(CUlaunchAttribute, value.clusterDim.z) == 16,
               "CUlaunchAttribute.value");
_Static_assert(offsetof(CUlaunchConfig, sharedMemBytes) == 24 && offsetof(CUlaunchConfig, hStream) == 32 &&
                   offsetof(CUlaunchConfig, attrs) == 40 && offsetof(CUlaunchConfig, numAttrs) == 48 &&
                   sizeof(CUlaunchConfig) == 56,
               "CUlaunchConfig");

/* Constants, RT_-prefixed so that the ABI test can compare them with cuda.h. */
enum {
    RT_CUDA_SUCCESS = 0,
    RT_CUDA_ERROR_INVALID_VALUE = 1,
    RT_CUDA_ERROR_OUT_OF_MEMORY = 2,
    RT_CUDA_ERROR_NOT_INITIALIZED = 3,
    RT_CUDA_ERROR_DEINITIALIZED = 4,
    RT_CUDA_ERROR_STUB_LIBRARY = 34,
    RT_CUDA_ERROR_NO_DEVICE = 100,
    RT_CUDA_ERROR_INVALID_DEVICE = 101,
    RT_CUDA_ERROR_INVALID_IMAGE = 200,
    RT_CUDA_ERROR_INVALID_CONTEXT = 201,
    RT_CUDA_ERROR_NO_BINARY_FOR_GPU = 209,
    RT_CUDA_ERROR_PEER_ACCESS_UNSUPPORTED = 217,
    RT_CUDA_ERROR_INVALID_PTX = 218,
    RT_CUDA_ERROR_JIT_COMPILER_NOT_FOUND = 221,
    RT_CUDA_ERROR_UNSUPPORTED_PTX_VERSION = 222,
    RT_CUDA_ERROR_JIT_COMPILATION_DISABLED = 223,
    RT_CUDA_ERROR_INVALID_HANDLE = 400,
    RT_CUDA_ERROR_NOT_FOUND = 500,
    RT_CUDA_ERROR_NOT_READY = 600,
    RT_CUDA_ERROR_ILLEGAL_ADDRESS = 700,
    RT_CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES = 701,
    RT_CUDA_ERROR_LAUNCH_TIMEOUT = 702,
    RT_CUDA_ERROR_ASSERT = 710,
    RT_CUDA_ERROR_HARDWARE_STACK_ERROR = 714,
    RT_CUDA_ERROR_ILLEGAL_INSTRUCTION = 715,
    RT_CUDA_ERROR_MISALIGNED_ADDRESS = 716,
    RT_CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED = 704,
    RT_CUDA_ERROR_PEER_ACCESS_NOT_ENABLED = 705,
    RT_CUDA_ERROR_TOO_MANY_PEERS = 711,
    RT_CUDA_ERROR_LAUNCH_FAILED = 719,
    RT_CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED = 900,
    RT_CUDA_ERROR_STREAM_CAPTURE_INVALIDATED = 901,
    RT_CUDA_ERROR_INVALID_CLUSTER_SIZE = 912,
    RT_CUDA_ERROR_UNKNOWN = 999,

    RT_CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 1,
    RT_CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X = 2,
    RT_CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y = 3,
    RT_CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z = 4,
    RT_CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X = 5,
    RT_CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y = 6,
    RT_CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z = 7,
    RT_CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK = 8,
    RT_CU_DEVICE_ATTRIBUTE_WARP_SIZE = 10,
    RT_CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16,
    RT_CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE = 38,
    RT_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75,
    RT_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76,
    RT_CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97,

    RT_CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 0,
    RT_CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES = 1,
    RT_CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8,

    RT_CU_JIT_INFO_LOG_BUFFER = 3,
    RT_CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES = 4,
    RT_CU_JIT_ERROR_LOG_BUFFER = 5,
    RT_CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6,
    RT_CU_JIT_LOG_VERBOSE = 12,

    RT_CU_STREAM_DEFAULT = 0,
    RT_CU_EVENT_DEFAULT = 0,
    RT_CU_EVENT_DISABLE_TIMING = 2,
    RT_CU_STREAM_CAPTURE_MODE_THREAD_LOCAL = 1,
    RT_CU_GET_PROC_ADDRESS_LEGACY_STREAM = 1,
    RT_CU_GET_PROC_ADDRESS_SUCCESS = 0,

    RT_CU_TENSOR_MAP_DATA_TYPE_UINT8 = 0,
    RT_CU_TENSOR_MAP_DATA_TYPE_UINT16 = 1,
    RT_CU_TENSOR_MAP_DATA_TYPE_UINT32 = 2,
    RT_CU_TENSOR_MAP_DATA_TYPE_INT32 = 3,
    RT_CU_TENSOR_MAP_DATA_TYPE_UINT64 = 4,
    RT_CU_TENSOR_MAP_DATA_TYPE_INT64 = 5,
    RT_CU_TENSOR_MAP_DATA_TYPE_FLOAT16 = 6,
    RT_CU_TENSOR_MAP_DATA_TYPE_FLOAT32 = 7,
    RT_CU_TENSOR_MAP_DATA_TYPE_FLOAT64 = 8,
    RT_CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 = 9,
    RT_CU_TENSOR_MAP_INTERLEAVE_NONE = 0,
    RT_CU_TENSOR_MAP_SWIZZLE_NONE = 0,
    RT_CU_TENSOR_MAP_SWIZZLE_32B = 1,
    RT_CU_TENSOR_MAP_SWIZZLE_64B = 2,
    RT_CU_TENSOR_MAP_SWIZZLE_128B = 3,
    RT_CU_TENSOR_MAP_L2_PROMOTION_L2_128B = 2,
    RT_CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE = 0,

    RT_CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION = 4,
};

/* Dynamic shared memory above this needs cuFuncSetAttribute (opt-in). */
#define RT_SHARED_DEFAULT_LIMIT 49152

#define RT_CUDA_FUNCS(X)                                                                                \
    X(cuInit, 2000, cuInit, (unsigned int flags))                                                       \
    X(cuDriverGetVersion, 2020, cuDriverGetVersion, (int *version))                                     \
    X(cuGetErrorName, 6000, cuGetErrorName, (CUresult error, const char **str))                         \
    X(cuGetErrorString, 6000, cuGetErrorString, (CUresult error, const char **str))                     \
    X(cuDeviceGetCount, 2000, cuDeviceGetCount, (int *count))                                           \
    X(cuDeviceGet, 2000, cuDeviceGet, (CUdevice * device, int ordinal))                                 \
    X(cuDeviceGetName, 2000, cuDeviceGetName, (char *name, int len, CUdevice dev))                      \
    X(cuDeviceGetAttribute, 2000, cuDeviceGetAttribute, (int *value, CUdevice_attribute attr, CUdevice dev)) \
    X(cuDeviceTotalMem, 3020, cuDeviceTotalMem_v2, (size_t * bytes, CUdevice dev))                      \
    X(cuDevicePrimaryCtxRetain, 7000, cuDevicePrimaryCtxRetain, (CUcontext * ctx, CUdevice dev))        \
    X(cuDevicePrimaryCtxRelease, 11000, cuDevicePrimaryCtxRelease_v2, (CUdevice dev))                   \
    X(cuCtxGetCurrent, 4000, cuCtxGetCurrent, (CUcontext * ctx))                                        \
    X(cuCtxSetCurrent, 4000, cuCtxSetCurrent, (CUcontext ctx))                                          \
    X(cuCtxPushCurrent, 4000, cuCtxPushCurrent_v2, (CUcontext ctx))                                     \
    X(cuCtxPopCurrent, 4000, cuCtxPopCurrent_v2, (CUcontext * ctx))                                     \
    X(cuCtxSynchronize, 2000, cuCtxSynchronize, (void))                                                 \
    X(cuDeviceCanAccessPeer, 4000, cuDeviceCanAccessPeer, (int *can, CUdevice dev, CUdevice peer))      \
    X(cuCtxEnablePeerAccess, 4000, cuCtxEnablePeerAccess, (CUcontext peer, unsigned int flags))         \
    X(cuMemAlloc, 3020, cuMemAlloc_v2, (CUdeviceptr * dptr, size_t bytes))                              \
    X(cuMemFree, 3020, cuMemFree_v2, (CUdeviceptr dptr))                                                \
    X(cuMemcpyHtoD, 3020, cuMemcpyHtoD_v2, (CUdeviceptr dst, const void *src, size_t bytes))            \
    X(cuMemcpyDtoH, 3020, cuMemcpyDtoH_v2, (void *dst, CUdeviceptr src, size_t bytes))                  \
    X(cuMemcpyDtoD, 3020, cuMemcpyDtoD_v2, (CUdeviceptr dst, CUdeviceptr src, size_t bytes))            \
    X(cuMemcpyHtoDAsync, 3020, cuMemcpyHtoDAsync_v2, (CUdeviceptr dst, const void *src, size_t bytes, CUstream s)) \
    X(cuMemcpyDtoHAsync, 3020, cuMemcpyDtoHAsync_v2, (void *dst, CUdeviceptr src, size_t bytes, CUstream s)) \
    X(cuMemcpyDtoDAsync, 3020, cuMemcpyDtoDAsync_v2, (CUdeviceptr dst, CUdeviceptr src, size_t bytes, CUstream s)) \
    X(cuMemcpyPeer, 4000, cuMemcpyPeer,                                                                 \
      (CUdeviceptr dst, CUcontext dst_ctx, CUdeviceptr src, CUcontext src_ctx, size_t bytes))           \
    X(cuMemcpyPeerAsync, 4000, cuMemcpyPeerAsync,                                                       \
      (CUdeviceptr dst, CUcontext dst_ctx, CUdeviceptr src, CUcontext src_ctx, size_t bytes, CUstream s)) \
    X(cuMemsetD8, 3020, cuMemsetD8_v2, (CUdeviceptr dst, unsigned char value, size_t n))                \
    X(cuMemsetD8Async, 3020, cuMemsetD8Async, (CUdeviceptr dst, unsigned char value, size_t n, CUstream s)) \
    X(cuModuleLoadDataEx, 2010, cuModuleLoadDataEx,                                                     \
      (CUmodule * module, const void *image, unsigned int nopts, CUjit_option *opts, void **values))    \
    X(cuModuleUnload, 2000, cuModuleUnload, (CUmodule module))                                          \
    X(cuModuleGetFunction, 2000, cuModuleGetFunction, (CUfunction * fn, CUmodule module, const char *name)) \
    X(cuFuncGetAttribute, 2020, cuFuncGetAttribute, (int *value, CUfunction_attribute attr, CUfunction fn)) \
    X(cuFuncSetAttribute, 9000, cuFuncSetAttribute, (CUfunction fn, CUfunction_attribute attr, int value)) \
    X(cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags, 7000,                                       \
      cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags,                                             \
      (int *blocks, CUfunction fn, int block_size, size_t dynamic_shared, unsigned int flags))         \
    X(cuLaunchKernel, 4000, cuLaunchKernel,                                                             \
      (CUfunction fn, unsigned int gx, unsigned int gy, unsigned int gz, unsigned int bx, unsigned int by, \
       unsigned int bz, unsigned int shared, CUstream s, void **params, void **extra))                  \
    X(cuStreamCreate, 2000, cuStreamCreate, (CUstream * s, unsigned int flags))                         \
    X(cuStreamDestroy, 4000, cuStreamDestroy_v2, (CUstream s))                                          \
    X(cuStreamSynchronize, 2000, cuStreamSynchronize, (CUstream s))                                     \
    X(cuStreamQuery, 2000, cuStreamQuery, (CUstream s))                                                 \
    X(cuEventCreate, 2000, cuEventCreate, (CUevent * e, unsigned int flags))                            \
    X(cuEventDestroy, 4000, cuEventDestroy_v2, (CUevent e))                                             \
    X(cuEventRecord, 2000, cuEventRecord, (CUevent e, CUstream s))                                      \
    X(cuEventSynchronize, 2000, cuEventSynchronize, (CUevent e))                                        \
    X(cuEventQuery, 2000, cuEventQuery, (CUevent e))                                                    \
    X(cuEventElapsedTime, 12080, cuEventElapsedTime_v2, (float *ms, CUevent start, CUevent end))        \
    X(cuStreamBeginCapture, 10010, cuStreamBeginCapture_v2, (CUstream s, CUstreamCaptureMode mode))     \
    X(cuStreamEndCapture, 10000, cuStreamEndCapture, (CUstream s, CUgraph * graph))                     \
    X(cuGraphInstantiateWithFlags, 11040, cuGraphInstantiateWithFlags,                                  \
      (CUgraphExec * exec, CUgraph graph, unsigned long long flags))                                    \
    X(cuGraphLaunch, 10000, cuGraphLaunch, (CUgraphExec exec, CUstream s))                              \
    X(cuGraphExecDestroy, 10000, cuGraphExecDestroy, (CUgraphExec exec))                                \
    X(cuGraphDestroy, 10000, cuGraphDestroy, (CUgraph graph))

/* Entry points a driver may lack without the runtime being unusable: their
 * table field is NULL then, and only the feature that needs one fails, with
 * a message naming it, or does without. cuTensorMapEncodeTiled (CUDA 12.0):
 * TMA tensor maps, needed only by variants with tmaps= (tmap.c).
 * cuLaunchKernelEx (PFN_cuLaunchKernelEx_v11060 in cudaTypedefs.h): cluster
 * launches of variants with cluster=, which launch without a cluster where
 * it is missing (gpu_module.c). */
#define RT_CUDA_OPTIONAL_FUNCS(X)                                                                       \
    X(cuTensorMapEncodeTiled, 12000, cuTensorMapEncodeTiled,                                            \
      (CUtensorMap * map, CUtensorMapDataType dtype, cuuint32_t rank, void *addr, const cuuint64_t *dims, \
       const cuuint64_t *strides, const cuuint32_t *box, const cuuint32_t *elem_strides,                \
       CUtensorMapInterleave interleave, CUtensorMapSwizzle swizzle, CUtensorMapL2promotion l2,         \
       CUtensorMapFloatOOBfill oob))                                                                    \
    X(cuLaunchKernelEx, 11060, cuLaunchKernelEx,                                                        \
      (const CUlaunchConfig *config, CUfunction fn, void **params, void **extra))

/* The resolver itself, found with dlsym (CUDA 12.0 ABI). */
typedef CUresult (*rt_pfn_cuGetProcAddress)(const char *symbol, void **fn, int version, cuuint64_t flags,
                                            CUdriverProcAddressQueryResult *found);

#define RT_CUDA_PFN_TYPEDEF(name, version, symbol, params) typedef CUresult (*rt_pfn_##name) params;
RT_CUDA_FUNCS(RT_CUDA_PFN_TYPEDEF)
RT_CUDA_OPTIONAL_FUNCS(RT_CUDA_PFN_TYPEDEF)
#undef RT_CUDA_PFN_TYPEDEF

/* The dispatch table: one pointer per entry point, filled once. */
typedef struct {
#define RT_CUDA_FIELD(name, version, symbol, params) rt_pfn_##name name;
    RT_CUDA_FUNCS(RT_CUDA_FIELD)
    RT_CUDA_OPTIONAL_FUNCS(RT_CUDA_FIELD) /* NULL where the driver lacks them */
#undef RT_CUDA_FIELD
} rt_cuda;

#endif

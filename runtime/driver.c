/* driver.c — finding the CUDA driver at run time.
 *
 * libblkrt has no link-time CUDA dependency: the first call that needs the
 * GPU dlopens libcuda.so.1 (or $BLKRT_CUDA_LIBRARY, which the tests point at
 * a fake driver), resolves every entry point of cuda_api.h and calls cuInit,
 * exactly once per process (pthread_once). A missing optional entry point
 * (RT_CUDA_OPTIONAL_FUNCS) leaves its field NULL: only what needs it fails.
 * The table is immutable afterwards, so the launch path reads it without a
 * lock. A missing driver is a status with a message, never a crash: the CPU
 * device works without one.
 */
#include <dlfcn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rt.h"

static struct {
    pthread_once_t once;
    blkrt_status status;
    char msg[1024];
    rt_cuda cu;
    bool no_device;
    int version;
    atomic_bool ready;
} drv = {.once = PTHREAD_ONCE_INIT};

/* cuGetProcAddress first: asking for the ABI version we declared gives that
 * exact variant. Plain dlsym of the versioned export name is the fallback
 * (older drivers, minimal fakes). */
static void *resolve(void *lib, rt_pfn_cuGetProcAddress gpa, const char *name, int version, const char *symbol) {
    void *fn = NULL;
    if (gpa) {
        CUdriverProcAddressQueryResult found = -1;
        CUresult r = gpa(name, &fn, version, RT_CU_GET_PROC_ADDRESS_LEGACY_STREAM, &found);
        if (r != RT_CUDA_SUCCESS || found != RT_CU_GET_PROC_ADDRESS_SUCCESS) fn = NULL;
    }
    if (!fn) fn = dlsym(lib, symbol);
    return fn;
}

static void load(void) {
    const char *path = getenv("BLKRT_CUDA_LIBRARY");
    if (!path || !*path) path = "libcuda.so.1";
    drv.status = BLKRT_ERR_NO_DRIVER;
    void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        const char *why = dlerror();
        snprintf(drv.msg, sizeof drv.msg, "no CUDA driver: cannot load %s (%s)", path, why ? why : "unknown reason");
        return;
    }
    rt_pfn_cuGetProcAddress gpa;
    *(void **)&gpa = dlsym(lib, "cuGetProcAddress_v2");
#define RT_RESOLVE(name, version, symbol, params)                                                          \
    *(void **)&drv.cu.name = resolve(lib, gpa, #name, version, #symbol);                                   \
    if (!drv.cu.name) {                                                                                    \
        snprintf(drv.msg, sizeof drv.msg, "no usable CUDA driver: %s has no %s (driver older than CUDA 12.8?)", \
                 path, #symbol);                                                                           \
        return;                                                                                            \
    }
    RT_CUDA_FUNCS(RT_RESOLVE)
#undef RT_RESOLVE
#define RT_RESOLVE_OPTIONAL(name, version, symbol, params) \
    *(void **)&drv.cu.name = resolve(lib, gpa, #name, version, #symbol);
    RT_CUDA_OPTIONAL_FUNCS(RT_RESOLVE_OPTIONAL)
#undef RT_RESOLVE_OPTIONAL
    CUresult r = drv.cu.cuInit(0);
    if (r == RT_CUDA_ERROR_NO_DEVICE) {
        drv.no_device = true;
    } else if (r != RT_CUDA_SUCCESS) {
        /* rt_cu_name's own table: a stub library cannot name its errors */
        snprintf(drv.msg, sizeof drv.msg, "no CUDA driver: cuInit failed with %s (%d)%s", rt_cu_name(r), (int)r,
                 r == RT_CUDA_ERROR_STUB_LIBRARY ? ": the loaded libcuda is the toolkit's link-only stub" : "");
        return;
    }
    if (drv.cu.cuDriverGetVersion(&drv.version) != RT_CUDA_SUCCESS) drv.version = 0;
    drv.status = BLKRT_OK;
    atomic_store(&drv.ready, true);
}

const rt_cuda *rt_driver(blkrt_status *status) {
    pthread_once(&drv.once, load);
    if (drv.status != BLKRT_OK) {
        *status = rt_err(drv.status, "%s", drv.msg);
        return NULL;
    }
    *status = BLKRT_OK;
    return &drv.cu;
}

/* The table if the driver is already up; never loads it (error.c uses this
 * to name CUresults). */
const rt_cuda *rt_driver_peek(void) { return atomic_load(&drv.ready) ? &drv.cu : NULL; }

bool rt_driver_has_no_device(void) { return drv.no_device; }
int rt_driver_version(void) { return drv.version; }

/* ---- the driver's errors: names, text, statuses ---- */

/* Names for when the driver cannot be asked (and for drivers that do not
 * know a code). */
static const struct {
    int code;
    const char *name;
} cu_names[] = {
    {RT_CUDA_SUCCESS, "CUDA_SUCCESS"},
    {RT_CUDA_ERROR_INVALID_VALUE, "CUDA_ERROR_INVALID_VALUE"},
    {RT_CUDA_ERROR_OUT_OF_MEMORY, "CUDA_ERROR_OUT_OF_MEMORY"},
    {RT_CUDA_ERROR_NOT_INITIALIZED, "CUDA_ERROR_NOT_INITIALIZED"},
    {RT_CUDA_ERROR_DEINITIALIZED, "CUDA_ERROR_DEINITIALIZED"},
    {RT_CUDA_ERROR_STUB_LIBRARY, "CUDA_ERROR_STUB_LIBRARY"},
    {RT_CUDA_ERROR_NO_DEVICE, "CUDA_ERROR_NO_DEVICE"},
    {RT_CUDA_ERROR_INVALID_DEVICE, "CUDA_ERROR_INVALID_DEVICE"},
    {RT_CUDA_ERROR_INVALID_IMAGE, "CUDA_ERROR_INVALID_IMAGE"},
    {RT_CUDA_ERROR_INVALID_CONTEXT, "CUDA_ERROR_INVALID_CONTEXT"},
    {RT_CUDA_ERROR_NO_BINARY_FOR_GPU, "CUDA_ERROR_NO_BINARY_FOR_GPU"},
    {RT_CUDA_ERROR_PEER_ACCESS_UNSUPPORTED, "CUDA_ERROR_PEER_ACCESS_UNSUPPORTED"},
    {RT_CUDA_ERROR_INVALID_PTX, "CUDA_ERROR_INVALID_PTX"},
    {RT_CUDA_ERROR_JIT_COMPILER_NOT_FOUND, "CUDA_ERROR_JIT_COMPILER_NOT_FOUND"},
    {RT_CUDA_ERROR_UNSUPPORTED_PTX_VERSION, "CUDA_ERROR_UNSUPPORTED_PTX_VERSION"},
    {RT_CUDA_ERROR_JIT_COMPILATION_DISABLED, "CUDA_ERROR_JIT_COMPILATION_DISABLED"},
    {RT_CUDA_ERROR_INVALID_HANDLE, "CUDA_ERROR_INVALID_HANDLE"},
    {RT_CUDA_ERROR_NOT_FOUND, "CUDA_ERROR_NOT_FOUND"},
    {RT_CUDA_ERROR_NOT_READY, "CUDA_ERROR_NOT_READY"},
    {RT_CUDA_ERROR_ILLEGAL_ADDRESS, "CUDA_ERROR_ILLEGAL_ADDRESS"},
    {RT_CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES, "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES"},
    {RT_CUDA_ERROR_LAUNCH_TIMEOUT, "CUDA_ERROR_LAUNCH_TIMEOUT"},
    {RT_CUDA_ERROR_ASSERT, "CUDA_ERROR_ASSERT"},
    {RT_CUDA_ERROR_HARDWARE_STACK_ERROR, "CUDA_ERROR_HARDWARE_STACK_ERROR"},
    {RT_CUDA_ERROR_ILLEGAL_INSTRUCTION, "CUDA_ERROR_ILLEGAL_INSTRUCTION"},
    {RT_CUDA_ERROR_MISALIGNED_ADDRESS, "CUDA_ERROR_MISALIGNED_ADDRESS"},
    {RT_CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED, "CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED"},
    {RT_CUDA_ERROR_PEER_ACCESS_NOT_ENABLED, "CUDA_ERROR_PEER_ACCESS_NOT_ENABLED"},
    {RT_CUDA_ERROR_TOO_MANY_PEERS, "CUDA_ERROR_TOO_MANY_PEERS"},
    {RT_CUDA_ERROR_LAUNCH_FAILED, "CUDA_ERROR_LAUNCH_FAILED"},
    {RT_CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED"},
    {RT_CUDA_ERROR_STREAM_CAPTURE_INVALIDATED, "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED"},
    {RT_CUDA_ERROR_INVALID_CLUSTER_SIZE, "CUDA_ERROR_INVALID_CLUSTER_SIZE"},
    {RT_CUDA_ERROR_UNKNOWN, "CUDA_ERROR_UNKNOWN"},
};

const char *rt_cu_name(CUresult r) {
    const rt_cuda *cu = rt_driver_peek();
    const char *s = NULL;
    if (cu && cu->cuGetErrorName(r, &s) == RT_CUDA_SUCCESS && s) return s;
    for (size_t i = 0; i < sizeof cu_names / sizeof cu_names[0]; i++)
        if (cu_names[i].code == r) return cu_names[i].name;
    return "CUDA_ERROR_?";
}

const char *rt_cu_string(CUresult r) {
    const rt_cuda *cu = rt_driver_peek();
    const char *s = NULL;
    if (cu && cu->cuGetErrorString(r, &s) == RT_CUDA_SUCCESS && s) return s;
    return "no description";
}

/* The status a driver error maps to: the caller can act on these classes
 * (retry smaller, fix the PTX, give up on the device) without parsing text. */
static blkrt_status status_of(CUresult r) {
    switch (r) {
    case RT_CUDA_ERROR_OUT_OF_MEMORY: return BLKRT_ERR_OUT_OF_MEMORY;
    case RT_CUDA_ERROR_NOT_INITIALIZED:
    case RT_CUDA_ERROR_DEINITIALIZED:
    case RT_CUDA_ERROR_STUB_LIBRARY:
    case RT_CUDA_ERROR_NO_DEVICE:
    case RT_CUDA_ERROR_INVALID_DEVICE: return BLKRT_ERR_NO_DEVICE;
    case RT_CUDA_ERROR_INVALID_IMAGE:
    case RT_CUDA_ERROR_NO_BINARY_FOR_GPU:
    case RT_CUDA_ERROR_INVALID_PTX:
    case RT_CUDA_ERROR_JIT_COMPILER_NOT_FOUND:
    case RT_CUDA_ERROR_JIT_COMPILATION_DISABLED: return BLKRT_ERR_JIT;
    case RT_CUDA_ERROR_UNSUPPORTED_PTX_VERSION: return BLKRT_ERR_PTX_VERSION;
    case RT_CUDA_ERROR_PEER_ACCESS_UNSUPPORTED:
    case RT_CUDA_ERROR_PEER_ACCESS_NOT_ENABLED:
    case RT_CUDA_ERROR_TOO_MANY_PEERS: return BLKRT_ERR_NO_PEER_ACCESS;
    case RT_CUDA_ERROR_NOT_FOUND: return BLKRT_ERR_NOT_FOUND;
    case RT_CUDA_ERROR_ILLEGAL_ADDRESS:
    case RT_CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES:
    case RT_CUDA_ERROR_LAUNCH_TIMEOUT:
    case RT_CUDA_ERROR_ASSERT:
    case RT_CUDA_ERROR_HARDWARE_STACK_ERROR:
    case RT_CUDA_ERROR_ILLEGAL_INSTRUCTION:
    case RT_CUDA_ERROR_MISALIGNED_ADDRESS:
    case RT_CUDA_ERROR_LAUNCH_FAILED: return BLKRT_ERR_LAUNCH_FAILED;
    default: return BLKRT_ERR_DRIVER;
    }
}

blkrt_status rt_cu_err(CUresult r, const char *what) {
    return rt_err(status_of(r), "%s: %s (%d): %s", what, rt_cu_name(r), (int)r, rt_cu_string(r));
}

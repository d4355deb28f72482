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

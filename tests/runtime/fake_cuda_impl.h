/* fake_cuda_impl.h — what the fake CUDA driver's two files share
 * (fake_cuda.c: its state, the test hooks, init, devices, contexts, memory,
 * cuGetProcAddress; fake_cuda_exec.c: modules, launches, streams, graphs,
 * events, tensor maps). Private to them; the tests see fake_cuda.h. */
#ifndef FAKE_CUDA_IMPL_H
#define FAKE_CUDA_IMPL_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "cuda_api.h"
#include "fake_cuda.h"

#define EXPORT __attribute__((visibility("default")))
#define MAX_DEV 8

/* one lock over the driver's shared state */
extern pthread_mutex_t driver_lock;
#define LOCK() pthread_mutex_lock(&driver_lock)
#define UNLOCK() pthread_mutex_unlock(&driver_lock)

enum { M_MOD = 0x4d4f4431, M_FUNC = 0x46554e31, M_STREAM = 0x53545231, M_EVENT = 0x45564e31, M_GRAPH = 0x47525031,
       M_EXEC = 0x45584531, M_DEAD = 0 };

struct CUctx_st {
    int device;
    int refs;
};

/* A launch as recorded: what fake_get_launch gives (fake_launch keeps the
 * layout tests/python mirrors), the parameters over 8 bytes (fake_get_big)
 * and the cluster dims cuLaunchKernelEx got (fake_get_cluster; zeros for
 * cuLaunchKernel). */
typedef struct {
    fake_launch l;
    int nbig;
    unsigned char big[FAKE_MAX_BIG][128];
    unsigned cluster[3];
} launch_rec;

extern bool initialised;                   /* cuInit succeeded */
extern _Thread_local int capturing_here;   /* stream captures begun by this thread */
CUcontext current(void);                   /* this thread's current context */
/* An entry point's start: counts and logs the call; an injected failure's
 * result (fake_fail_next), else 0. */
int enter(const char *sym);
void record_launch(const launch_rec *l);   /* into the launch log (fake_get_launch) */
void count_attr_set(const char *entry);    /* a cuFuncSetAttribute (fake_attr_sets) */
CUresult check_stream(CUstream s);         /* NULL or a stream of the current context */

#define ENTER(sym)                                    \
    do {                                              \
        int inj_ = enter(sym);                        \
        if (inj_) return inj_;                        \
    } while (0)
#define NEED_INIT()                                          \
    do {                                                     \
        if (!initialised) return RT_CUDA_ERROR_NOT_INITIALIZED; \
    } while (0)
#define NEED_CTX()                                             \
    do {                                                       \
        NEED_INIT();                                           \
        if (!current()) return RT_CUDA_ERROR_INVALID_CONTEXT;  \
    } while (0)

#endif

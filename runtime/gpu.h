/* gpu.h — what the GPU device's files share: gpu_device.c (devices,
 * contexts, peers, memory, the table rt_gpu_ops), gpu_module.c (loading
 * images, binding functions, launches), gpu_stream.c (streams, events,
 * graphs, timed waits, the launch log) and lazy.c (kernels from source).
 * Nothing outside these files includes it: the rest of the runtime reaches
 * a GPU through d->ops (rt.h).
 */
#ifndef BLK_RT_GPU_H
#define BLK_RT_GPU_H

#include "rt.h"

/* ---- gpu_module.c ---- */
/* cuModuleLoadDataEx of image with error and info logs (the caller's
 * context must be current). *info_log (malloc'd) is set either way. */
blkrt_status rt_gpu_load_image(blkrt_device *d, const void *image, const char *ptx_text, CUmodule *out,
                               char **info_log);
/* The last step of every load: kernels bound (under d's context), the
 * device's child count, *out; on error m is freed. */
blkrt_status rt_gpu_finish_load(blkrt_module *m, blkrt_status st, blkrt_module **out);
/* v's CUfunction in cu and its limits (the context must be current). */
blkrt_status rt_gpu_bind_function(blkrt_module *m, CUmodule cu, rt_variant *v);
blkrt_status rt_gpu_bind_entry(blkrt_module *m, rt_variant *v);
blkrt_status rt_gpu_load_ptx(blkrt_device *d, const char *ptx, size_t len, blkrt_module **out);
blkrt_status rt_gpu_load_cubin(blkrt_device *d, const void *image, size_t size, const char *meta, blkrt_module **out);
blkrt_status rt_gpu_max_programs(blkrt_kernel *k, const rt_variant *v, uint32_t *out);
blkrt_status rt_gpu_launch(blkrt_kernel *k, const rt_variant *v, const uint32_t grid[3], const blkrt_arg *args,
                           int nargs, void **params, const rt_tmap_args *ta, blkrt_stream *s, CUstream cs, bool prof);
blkrt_status rt_gpu_launch_raw(blkrt_kernel *k, rt_variant *v, const uint32_t grid[3], const uint32_t block[3],
                               uint32_t shared_bytes, void **params, blkrt_stream *s, CUstream cs,
                               uint32_t threads);

/* ---- gpu_stream.c ---- */
/* Log a launch issued on cs (s: its handle or NULL; launches into a capture
 * are not logged: they run only when the graph does). */
void rt_launch_logged(blkrt_device *d, blkrt_stream *s, CUstream cs, const char *kernel, const uint32_t grid[3],
                      uint32_t threads);
/* The seq of the newest launch: take it before a synchronisation ... */
uint64_t rt_launch_mark(blkrt_device *d);
/* ... and pass it after: r == SUCCESS marks the launches of cs (all: of
 * every stream) up to mark finished and returns OK; otherwise the error of
 * `call`, naming the oldest unfinished launch. */
blkrt_status rt_synced(blkrt_device *d, CUstream cs, bool all, uint64_t mark, CUresult r, const char *call);
/* rt_cu_err for a call on d that may report an earlier kernel's fault
 * (a synchronous copy): a fault code also names the oldest unfinished launch. */
blkrt_status rt_cu_err_on(blkrt_device *d, CUresult r, const char *call);
blkrt_status rt_gpu_synchronize(blkrt_device *d);
blkrt_status rt_gpu_synchronize_timeout(blkrt_device *d, uint32_t timeout_ms, const char *fn);
void rt_gpu_timer_start(blkrt_device *d, rt_prof_launch *p, CUstream cs);
blkrt_status rt_gpu_stream_create(blkrt_stream *s);
blkrt_status rt_gpu_stream_wrap(blkrt_device *d, uint64_t custream, blkrt_stream **out);
blkrt_status rt_gpu_stream_destroy(blkrt_stream *s);
blkrt_status rt_gpu_stream_synchronize(blkrt_stream *s);
blkrt_status rt_gpu_stream_synchronize_timeout(blkrt_device *d, CUstream cs, uint32_t timeout_ms, const char *fn);
blkrt_status rt_gpu_event_create(blkrt_event *e);
blkrt_status rt_gpu_event_destroy(blkrt_event *e);
blkrt_status rt_gpu_event_record(blkrt_event *e, CUstream cs);
blkrt_status rt_gpu_event_synchronize(blkrt_event *e);
blkrt_status rt_gpu_event_elapsed_ms(blkrt_event *start, blkrt_event *end, float *ms);
blkrt_status rt_gpu_capture_begin(blkrt_stream *s);
blkrt_status rt_gpu_capture_end(blkrt_stream *s, blkrt_graph *g);
void rt_gpu_capture_abandon(blkrt_stream *s);
blkrt_status rt_gpu_graph_launch(blkrt_graph *g, blkrt_stream *s, CUstream cs);
blkrt_status rt_gpu_graph_destroy(blkrt_graph *g);

/* ---- lazy.c ----
 * Loading source (lazily through the describe hook, or whole PTX through
 * the cache) and the module lifetime parts that know about lazy variants. */
blkrt_status rt_gpu_load_source(blkrt_device *d, const blkrt_compiler *c, const blkrt_compile_request *req,
                                const char *cache_dir, blkrt_module **out);
blkrt_status rt_gpu_unload(blkrt_module *m);
void rt_gpu_release(blkrt_module *m);
const char *rt_gpu_jit_log(blkrt_module *m);

#endif

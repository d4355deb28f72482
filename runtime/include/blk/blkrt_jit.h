/* blkrt_jit.h — libblkrt_jit: the glue that lets libblkrt compile .blk
 * source with libblkc (the CPU interpreter as a device today; the PTX backend
 * when it exists). libblkrt itself never links the compiler; a program that
 * wants JIT links libblkrt_jit (which pulls in both) and installs the hook:
 *
 *   blkrt_jit_install();
 *   blkrt_device_open(BLKRT_DEVICE_CPU, &cpu);
 *   blkrt_module_load_source(cpu, text, len, &opts, &m);
 */
#ifndef BLK_BLKRT_JIT_H
#define BLK_BLKRT_JIT_H

#include "blk/blkrt.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The hook over libblkc (static storage; never freed). */
const blkrt_compiler *blkrt_jit_compiler(void);
/* blkrt_use_compiler(blkrt_jit_compiler()). */
blkrt_status blkrt_jit_install(void);

#ifdef __cplusplus
}
#endif
#endif

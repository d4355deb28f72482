/* blk.h — libblk: the blk compiler and runtime in one shared library.
 *
 * libblk.so holds libblkc (blk/blkc.h), libblkrt (blk/blkrt.h) and the JIT
 * hook between them (blk/blkrt_jit.h), registered when the library is loaded:
 * a program linked with -lblk compiles .blk source at run time with no setup.
 *
 *   blkrt_device *d;  blkrt_module *m;  blkrt_kernel *k;
 *   blkrt_device_open(0, &d);                 // or BLKRT_DEVICE_CPU
 *   blkrt_module_load_source(d, text, len, NULL, &m);
 *   blkrt_module_kernel(m, "vector_add", &k);
 *
 * Programs that only load ahead-of-time PTX link the compiler-free libblkrt
 * (-lblkrt) instead. docs/embedding.md has both, with CMake and pkg-config.
 */
#ifndef BLK_BLK_H
#define BLK_BLK_H

#include "blk/blkc.h"
#include "blk/blkrt.h"
#include "blk/blkrt_jit.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The version these headers belong to (CMake checks it against the project's). */
#define BLK_VERSION_MAJOR 0
#define BLK_VERSION_MINOR 1
#define BLK_VERSION_PATCH 0
#define BLK_VERSION_STRING "0.1.0"

/* The version of the loaded library, "MAJOR.MINOR.PATCH"; compare with
 * BLK_VERSION_STRING to catch a program built against other headers. */
const char *blk_version(void);
/* The same as numbers; any pointer may be NULL. */
void blk_version_numbers(int *major, int *minor, int *patch);

#ifdef __cplusplus
}
#endif
#endif

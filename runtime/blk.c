/* blk.c — what libblk.so adds to libblkc + libblkrt: the version call and the
 * JIT hook registered at load time (so blkrt_module_load_source needs no
 * setup call; a program may still register another compiler, or NULL). */
#include "blk/blk.h"

#ifndef BLK_VERSION
#define BLK_VERSION "0.0.0"
#endif

const char *blk_version(void) { return BLK_VERSION; }

void blk_version_numbers(int *major, int *minor, int *patch) {
    if (major) *major = BLK_VERSION_MAJOR;
    if (minor) *minor = BLK_VERSION_MINOR;
    if (patch) *patch = BLK_VERSION_PATCH;
}

/* Runs when the library is loaded (dlopen, or at program start when linked). */
__attribute__((constructor)) static void blk_register_jit(void) { blkrt_jit_install(); }

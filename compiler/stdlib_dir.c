/* stdlib_dir.c — where the compiler finds the stdlib .blk files by default.
 *
 * The same libblkc runs from the build tree, from an install prefix
 * (cmake --install, make install) and from the Python wheel, so the place is
 * looked up once at run time, first found wins:
 *   1. $BLK_STDLIB_DIR (non-empty)
 *   2. beside the binary or shared library libblkc is linked into (dladdr):
 *      DIR/../share/blk/stdlib   an install prefix (bin/blkc, lib/libblk.so)
 *      DIR/stdlib                the Python package (blk/libblk.so, blk/stdlib)
 *   3. BLK_STDLIB_DIR of the build: the source tree's stdlib/
 * A directory counts when it holds elementwise.blk (an unrelated "stdlib"
 * folder next to a program must not shadow the real one).
 */
#define _GNU_SOURCE /* dladdr */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "compile.h"

#ifndef BLK_STDLIB_DIR
#define BLK_STDLIB_DIR "stdlib"
#endif

static char found[4096];
static pthread_once_t once = PTHREAD_ONCE_INIT;

static int is_stdlib(const char *dir) {
    char probe[4200];
    struct stat st;
    if (snprintf(probe, sizeof probe, "%s/elementwise.blk", dir) >= (int)sizeof probe) return 0;
    return stat(probe, &st) == 0 && S_ISREG(st.st_mode);
}

static void locate(void) {
    const char *env = getenv("BLK_STDLIB_DIR");
    if (env && *env && strlen(env) < sizeof found) {
        snprintf(found, sizeof found, "%s", env);
        return;
    }
    Dl_info info;
    if (dladdr((void *)&compile_stdlib_dir, &info) && info.dli_fname) {
        char *real = realpath(info.dli_fname, NULL);
        if (real) {
            char *slash = strrchr(real, '/');
            if (slash) *slash = 0;
            const char *tails[] = {"/../share/blk/stdlib", "/stdlib"};
            for (int i = 0; i < 2; i++) {
                char cand[4096];
                if (snprintf(cand, sizeof cand, "%s%s", real, tails[i]) >= (int)sizeof cand || !is_stdlib(cand))
                    continue;
                char *canon = realpath(cand, NULL);
                snprintf(found, sizeof found, "%s", canon ? canon : cand);
                free(canon);
                free(real);
                return;
            }
            free(real);
        }
    }
    snprintf(found, sizeof found, "%s", BLK_STDLIB_DIR);
}

const char *compile_stdlib_dir(void) {
    pthread_once(&once, locate);
    return found;
}

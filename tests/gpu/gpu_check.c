/* gpu_check — every stdlib kernel without `dot` on a real GPU, against the
 * CPU interpreter (label gpu; docs/gpu-testing.md).
 *
 *   gpu_check [check] [--stdlib DIR] [--device N|cpu] [--seed S] [--quick]
 *             [--kernel NAME]... [--dry-run] [--list]
 *   gpu_check compile-bench [--stdlib DIR] [--device N] [--runs R]
 *   gpu_check launch-bench  [--stdlib DIR] [--device N] [--launches L]
 *   gpu_check ptx FILE.blk [--kernel K] [--arch A] [-D NAME=V]... [-o OUT.ptx]
 *
 * check (the default): for each row of gpu_kernels.h, each const config and
 * each size: compile the .blk source with libblkc for the device's arch,
 * load the PTX through libblkrt, fill the inputs with fresh random data
 * (seeded; the seed is printed), run the kernel on the CPU interpreter
 * (blkc_interp_run) for the reference, then on the GPU twice — aligned
 * pointers (the d16 entry where every integer is a multiple of 16) and every
 * pointer moved by one element (the fallback entry; where an integer
 * argument is 1, an eq1 variant compiled for the case: add_eq1_variants) —
 * on buffers poisoned
 * with 0xFF bytes and framed by guard bytes, and compare: integers
 * identical, floats within the row's tolerance, no poison left where the
 * reference wrote, nothing written where it did not (nor into the guards or
 * the inputs), no NaN where the reference has none. One line per case, a
 * table per kernel, then "N passed, M failed". Exit 0 iff all passed, 1 on
 * failures, 2 on bad usage, 77 without a GPU/driver.
 *
 * BLK_GPU_ARCH=sm_80 compiles for that arch instead of the device's own
 * (older PTX runs on newer GPUs), so one H100 checks both backends.
 *
 * --dry-run stops each case after the launch (for the fake driver, which runs
 * no kernels): compile, load, argument checks, variant choice (checked
 * against the fake's launch record), poisoning, guards and the reference run
 * are still checked. --device cpu runs the "GPU" half on libblkrt's CPU
 * interpreter device (one entry per kernel): a self-test of this program.
 *
 * This file is the command line; each role is a file of its own (the map
 * is in gpu_check.h): the suite, the benches, the PTX emitter, one case's
 * inputs and comparison, compiling and running it.
 */
#define _GNU_SOURCE
/* arc4random (diff_common.h): defined here, the one file of gpu_check that
 * does (gpu_check.h includes the header with DIFF_NO_ARC4RANDOM) */
#include "diff_common.h"
#include "gpu_check.h"

/* ------------------------------------------------------------------ main */

static void usage(void) {
    fprintf(stderr,
            "usage: gpu_check [check] [--stdlib DIR] [--device N|cpu] [--seed S] [--quick] [--kernel NAME]...\n"
            "                 [--skip NAME]... [--case-timeout SECONDS] [--save-ptx DIR] [--dry-run] [--list]\n"
            "       gpu_check compile-bench [--stdlib DIR] [--device N] [--runs R]\n"
            "       gpu_check launch-bench [--stdlib DIR] [--device N] [--launches L]\n"
            "       gpu_check ptx FILE.blk [--kernel K] [--arch A] [-D NAME=V]... [-I DIR] [-o OUT.ptx]\n");
}

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    options o = {.stdlib = NULL, .ordinal = 0, .case_timeout = 60};
    const char *cmd = "check";
    int runs = 20, launches = 100000;
    bool list = false, seeded = false;
    int i = 1;
    if (argc > 1 && argv[1][0] != '-') cmd = argv[i++];
    if (!strcmp(cmd, "ptx")) {
#ifdef GPU_CHECK_STDLIB
        const char *sl = GPU_CHECK_STDLIB;
#else
        const char *sl = "stdlib";
#endif
        const char *e = getenv("BLK_STDLIB");
        return do_ptx(argc - 2, argv + 2, e && *e ? e : sl);
    }
    for (; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--stdlib") && v) o.stdlib = v, i++;
        else if (!strcmp(a, "--device") && v) {
            if (!strcmp(v, "cpu")) o.cpu = true;
            else o.ordinal = atoi(v);
            i++;
        } else if (!strcmp(a, "--seed") && v) o.seed = strtoull(v, NULL, 0), seeded = true, i++;
        else if (!strcmp(a, "--kernel") && v && o.nonly < 64) o.only[o.nonly++] = v, i++;
        else if (!strcmp(a, "--skip") && v && o.nskip < 64) o.skip[o.nskip++] = v, i++;
        else if (!strcmp(a, "--case-timeout") && v) o.case_timeout = atoi(v), i++;
        else if (!strcmp(a, "--save-ptx") && v) o.save_ptx = v, i++;
        else if (!strcmp(a, "--runs") && v) runs = atoi(v), i++;
        else if (!strcmp(a, "--launches") && v) launches = atoi(v), i++;
        else if (!strcmp(a, "--quick")) o.quick = true;
        else if (!strcmp(a, "--dry-run")) o.dry_run = true;
        else if (!strcmp(a, "--perturb")) o.perturb = true; /* self-test: corrupt one byte of every output */
        else if (!strcmp(a, "--list")) list = true;
        else {
            usage();
            return 2;
        }
    }
    if (!o.stdlib) {
#ifdef GPU_CHECK_STDLIB
        o.stdlib = GPU_CHECK_STDLIB;
#else
        o.stdlib = "stdlib";
#endif
    }
    if (!seeded) {
        uint64_t s = (uint64_t)time(NULL) ^ ((uint64_t)clock() << 20);
        o.seed = splitmix(&s) % 1000000007ull;
    }
    if (runs < 1) runs = 1;
    if (launches < 500) launches = 500;
    if (list) return do_list();
    if (!strcmp(cmd, "check")) return do_check(&o);
    if (o.cpu) {
        fprintf(stderr, "%s needs a GPU\n", cmd);
        return 2;
    }
    if (!strcmp(cmd, "compile-bench")) return do_compile_bench(&o, runs);
    if (!strcmp(cmd, "launch-bench")) return do_launch_bench(&o, launches);
    usage();
    return 2;
}

/* test_allocator — blkrt_set_allocator: the runtime's host blocks come from
 * the user's pair. A counting allocator that hands out only 8-byte aligned
 * blocks (so the runtime must do its own alignment) and records every block:
 * a kernel compiled from source on the CPU device, launched on runtime
 * memory (which is host memory from this allocator) over a ragged size and
 * checked against C; every block released is one it gave, none twice, none
 * left after the handles are closed; the allocator cannot change while the
 * runtime holds blocks; an allocator that runs dry fails calls with
 * OUT_OF_MEMORY and the runtime goes on once it gives again.
 */
#include <stdbool.h>

#include "blk/blkrt_jit.h"
#include "rt_test.h"

enum { MAXB = 1 << 16 };
typedef struct {
    void *blocks[MAXB]; /* what alloc gave and release has not taken back */
    long allocs, releases, foreign, dry_after;
} counter;
static counter C;

static void *count_alloc(size_t n, void *user) {
    counter *c = user;
    if (c->dry_after >= 0 && c->allocs >= c->dry_after) return NULL;
    char *p = malloc(n + 8);
    if (!p) return NULL;
    for (int i = 0; i < MAXB; i++)
        if (!c->blocks[i]) {
            c->blocks[i] = p + 8; /* 8-byte aligned only, never 16 */
            c->allocs++;
            return p + 8;
        }
    free(p);
    return NULL;
}

static void count_release(void *block, void *user) {
    counter *c = user;
    for (int i = 0; i < MAXB; i++)
        if (c->blocks[i] == block) {
            c->blocks[i] = NULL;
            c->releases++;
            free((char *)block - 8);
            return;
        }
    c->foreign++; /* not ours: must never happen */
}

static const char SRC[] = "kernel axpy(x: *f32, y: *f32, out: *f32, a: f32, n: i32) {\n"
                          "    let offs = program_id(0) * 128 + arange(0, 128);\n"
                          "    let m = offs < n;\n"
                          "    store(out + offs, a * load(x + offs, m) + load(y + offs, m), m);\n"
                          "}\n";

/* One compile + launch + check on the CPU device; false if a call failed. */
static bool run_axpy(blkrt_status *fail) {
    enum { N = 1000 };
    static float x[N], y[N], out[N];
    for (int i = 0; i < N; i++) x[i] = (float)i * 0.25f, y[i] = 7.0f - (float)i;
    blkrt_device *d = NULL;
    blkrt_module *m = NULL;
    blkrt_kernel *k;
    blkrt_ptr p[3] = {0};
    blkrt_status st;
    blkrt_source_options o = {.path = "axpy.blk", .cache_dir = ""};
    if ((st = blkrt_device_open(BLKRT_DEVICE_CPU, &d))) goto done;
    if ((st = blkrt_module_load_source(d, SRC, strlen(SRC), &o, &m))) goto done;
    if ((st = blkrt_module_kernel(m, "axpy", &k))) goto done;
    for (int i = 0; i < 3; i++)
        if ((st = blkrt_malloc(d, sizeof x, &p[i]))) goto done;
    CHECK(p[0] % 256 == 0 && p[1] % 256 == 0, "CPU device memory stays 256-byte aligned over an 8-aligned allocator");
    if ((st = blkrt_memcpy_htod(d, p[0], x, sizeof x)) || (st = blkrt_memcpy_htod(d, p[1], y, sizeof y))) goto done;
    blkrt_arg args[] = {BLKRT_PTR(p[0]), BLKRT_PTR(p[1]), BLKRT_PTR(p[2]), BLKRT_FLOAT(1.5), BLKRT_INT(N)};
    uint32_t grid[3] = {(N + 127) / 128, 1, 1};
    if ((st = blkrt_launch(k, grid, args, 5, NULL)) || (st = blkrt_memcpy_dtoh(d, out, p[2], sizeof out))) goto done;
    int bad = 0;
    for (int i = 0; i < N; i++) bad += out[i] != 1.5f * x[i] + y[i];
    CHECK(bad == 0, "axpy: %d of %d wrong", bad, N);
    /* the allocator may not change while the runtime holds its blocks */
    FAILS(blkrt_set_allocator(NULL, NULL, NULL), BLKRT_ERR_INVALID_VALUE, "set it before any other call");
done:
    for (int i = 0; i < 3; i++)
        if (p[i]) blkrt_free(d, p[i]);
    if (m) blkrt_module_unload(m);
    if (d) blkrt_device_close(d);
    *fail = st;
    return st == BLKRT_OK;
}

int main(void) {
    FAILS(blkrt_set_allocator(count_alloc, NULL, &C), BLKRT_ERR_INVALID_VALUE, "both functions");
    C.dry_after = -1;
    OK(blkrt_set_allocator(count_alloc, count_release, &C));
    OK(blkrt_jit_install());
    blkrt_status st;
    CHECK(run_axpy(&st), "axpy through the user's allocator: %s: %s", blkrt_status_name(st), blkrt_last_error());
    long used = C.allocs;
    CHECK(used > 10, "the runtime allocated through the user's allocator (%ld blocks)", used);
    CHECK(C.foreign == 0, "%ld blocks released that the allocator never gave", C.foreign);
    CHECK(C.allocs == C.releases, "%ld blocks given, %ld released: every handle closed leaves none", C.allocs,
          C.releases);

    /* runs dry at each point of the sequence in turn: a clean error, no
     * crash, nothing held afterwards; then it gives again and all works */
    int dry = 0;
    for (long at = 0; at < used; at += 1 + used / 40) {
        C.dry_after = C.allocs + at;
        if (!run_axpy(&st)) {
            dry++;
            CHECK(st == BLKRT_ERR_OUT_OF_MEMORY, "dry after %ld blocks: %s (%s), expected OUT_OF_MEMORY", at,
                  blkrt_status_name(st), blkrt_last_error());
        }
        CHECK(C.allocs == C.releases && C.foreign == 0, "dry after %ld: %ld given, %ld released, %ld foreign", at,
              C.allocs, C.releases, C.foreign);
    }
    CHECK(dry > 0, "the dry allocator failed some runs");
    printf("test_allocator: one run %ld blocks; %d of the runs with the allocator going dry failed cleanly\n", used, dry);
    C.dry_after = -1;
    CHECK(run_axpy(&st), "after running dry: %s: %s", blkrt_status_name(st), blkrt_last_error());

    /* back to libc's: allowed now that nothing is held */
    OK(blkrt_set_allocator(NULL, NULL, NULL));
    long before = C.allocs;
    CHECK(run_axpy(&st), "with libc's allocator again: %s", blkrt_last_error());
    CHECK(C.allocs == before, "libc's allocator in use again (%ld blocks through the old one)", C.allocs - before);
    return test_finish("test_allocator");
}

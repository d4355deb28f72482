/* Tutorial 5 (docs/tutorials/05-dropout.md): dropout.blk against a C
 * Philox4x32-10 (docs/language.md: key = the seed, counter = (offset, 0, 0,
 * 0), rand = (out[0] >> 8) * 2^-24): the same elements dropped, bit for
 * bit; the same seed gives the same mask (the backward pass), another seed
 * another one; the kept fraction is about 1 - p.
 *
 *   tutorial_dropout [cpu|GPU] [N]     (make test: cpu, small sizes)
 */
#include "tutorial.h"

static float philox_rand(uint64_t seed, uint32_t offset) {
    uint32_t c[4] = {offset, 0, 0, 0}, k[2] = {(uint32_t)seed, (uint32_t)(seed >> 32)};
    for (int round = 0; round < 10; round++) {
        if (round > 0) {
            k[0] += 0x9E3779B9u;
            k[1] += 0xBB67AE85u;
        }
        uint64_t p0 = (uint64_t)0xD2511F53u * c[0], p1 = (uint64_t)0xCD9E8D57u * c[2];
        uint32_t n0 = (uint32_t)(p1 >> 32) ^ c[1] ^ k[0], n2 = (uint32_t)(p0 >> 32) ^ c[3] ^ k[1];
        c[0] = n0;
        c[1] = (uint32_t)p1;
        c[2] = n2;
        c[3] = (uint32_t)p0;
    }
    return (float)(c[0] >> 8) * 0x1p-24f;
}

/* out = dropout(x) with seed on the device */
static void dropout(blkrt_device *d, blkrt_kernel *k, blkrt_ptr out, blkrt_ptr x, int n, float p, int64_t seed) {
    blkrt_arg args[] = {BLKRT_PTR(out), BLKRT_PTR(x), BLKRT_INT(n), BLKRT_FLOAT(p), BLKRT_INT(seed)};
    TUT_CHECK(blkrt_launch(k, (uint32_t[3]){(uint32_t)((n + 1023) / 1024), 1, 1}, args, 5, NULL));
    (void)d;
}

int main(int argc, char **argv) {
    blkrt_device *d = tut_device(argc, argv);
    int n = argc > 2 ? atoi(argv[2]) : 10007;
    const float p = 0.3f;
    const int64_t seed = 0x5eed1234abcdLL;
    blkrt_module *m;
    blkrt_kernel *k = tut_kernel(d, "dropout.blk", "dropout", NULL, 0, &m);
    float *x = malloc((size_t)n * 4), *y = malloc((size_t)n * 4), *y2 = malloc((size_t)n * 4);
    double *want = malloc((size_t)n * 8);
    tut_fill(x, (size_t)n, 9, 0.5f, 1.5f); /* never 0: a 0 output means dropped */
    blkrt_ptr dx = tut_upload(d, x, (size_t)n * 4), dy = tut_upload(d, NULL, (size_t)n * 4);
    int fails = 0;

    dropout(d, k, dy, dx, n, p, seed);
    tut_download(d, y, dy, (size_t)n * 4);
    int kept = 0;
    for (int i = 0; i < n; i++) {
        want[i] = philox_rand((uint64_t)seed, (uint32_t)i) > p ? x[i] / (1.0f - p) : 0.0;
        kept += y[i] != 0;
    }
    fails += tut_compare("dropout vs C Philox", y, want, (size_t)n, 0, 1e-6);
    double frac = (double)kept / n;
    int ok = fabs(frac - (1 - p)) < 0.02; /* 4.4 standard deviations at n = 10007 */
    printf("kept %.4f of the elements (1 - p = %.2f) %s\n", frac, 1 - p, ok ? "ok" : "FAIL");
    fails += !ok;

    /* the backward pass: the same seed regenerates the same mask */
    dropout(d, k, dy, dx, n, p, seed);
    tut_download(d, y2, dy, (size_t)n * 4);
    ok = memcmp(y, y2, (size_t)n * 4) == 0;
    printf("same seed, same mask %s\n", ok ? "ok" : "FAIL");
    fails += !ok;
    dropout(d, k, dy, dx, n, p, seed + 1);
    tut_download(d, y2, dy, (size_t)n * 4);
    int differ = 0;
    for (int i = 0; i < n; i++) differ += (y[i] == 0) != (y2[i] == 0);
    ok = differ > n / 4; /* two independent masks disagree on 2 p (1 - p) = 42% */
    printf("another seed: %d of %d elements dropped differently %s\n", differ, n, ok ? "ok" : "FAIL");
    fails += !ok;

    TUT_CHECK(blkrt_free(d, dx));
    TUT_CHECK(blkrt_free(d, dy));
    TUT_CHECK(blkrt_module_unload(m));
    TUT_CHECK(blkrt_device_close(d));
    free(x), free(y), free(y2), free(want);
    return fails != 0;
}

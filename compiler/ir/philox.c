/* philox.c — Philox4x32-10 and blk's random functions.
 *
 * Philox4x32-10 is the counter-based generator of Salmon et al., "Parallel
 * random numbers: as easy as 1, 2, 3" (SC'11), exactly as in Random123:
 * multipliers 0xD2511F53, 0xCD9E8D57; Weyl key increments 0x9E3779B9,
 * 0xBB67AE85; 10 rounds, the key bumped between rounds. Each round:
 *
 *   (hi0, lo0) = 0xD2511F53 * c0      (64-bit product split in halves)
 *   (hi1, lo1) = 0xCD9E8D57 * c2
 *   c = (hi1 ^ c1 ^ k0, lo1, hi0 ^ c3 ^ k1, lo0)
 *
 * blk's random functions — the GPU backend must produce these bit for bit:
 *
 *   key     = (seed & 0xFFFFFFFF, seed >> 32)
 *   counter = (offset, 0, 0, 0)
 *   out     = philox4x32_10(counter, key)
 *
 *   randint(seed, offset) = out[0]                        (u32)
 *   rand(seed, offset)    = (out[0] >> 8) * 2^-24          (f32, exact, in [0, 1))
 *   randn(seed, offset)   = Box-Muller, every step in f32 with the correctly
 *                           rounded/libm float functions:
 *       u1 = ((out[0] >> 8) + 1) * 2^-24                   (in (0, 1], so log is finite)
 *       u2 = (out[1] >> 8) * 2^-24                         (in [0, 1))
 *       r  = sqrtf(-2.0f * logf(u1))
 *       randn = r * cosf(6.28318530717958647692f * u2)
 *   (logf/cosf of the host libm; the GPU's libdevice versions may differ in
 *   the last ulp, which is inside the documented tolerance for randn.)
 */
#include <math.h>

#include "eval.h"

static void philox_round(uint32_t c[4], const uint32_t k[2]) {
    uint64_t p0 = (uint64_t)0xD2511F53u * c[0];
    uint64_t p1 = (uint64_t)0xCD9E8D57u * c[2];
    uint32_t hi0 = (uint32_t)(p0 >> 32), lo0 = (uint32_t)p0;
    uint32_t hi1 = (uint32_t)(p1 >> 32), lo1 = (uint32_t)p1;
    uint32_t n0 = hi1 ^ c[1] ^ k[0];
    uint32_t n2 = hi0 ^ c[3] ^ k[1];
    c[0] = n0;
    c[1] = lo1;
    c[2] = n2;
    c[3] = lo0;
}

void philox4x32_10(uint32_t ctr[4], const uint32_t key[2], uint32_t out[4]) {
    uint32_t c[4] = {ctr[0], ctr[1], ctr[2], ctr[3]};
    uint32_t k[2] = {key[0], key[1]};
    for (int round = 0; round < 10; round++) {
        if (round > 0) {
            k[0] += 0x9E3779B9u;
            k[1] += 0xBB67AE85u;
        }
        philox_round(c, k);
    }
    for (int i = 0; i < 4; i++) out[i] = c[i];
}

static void blk_philox(uint64_t seed, uint32_t offset, uint32_t out[4]) {
    uint32_t ctr[4] = {offset, 0, 0, 0};
    uint32_t key[2] = {(uint32_t)seed, (uint32_t)(seed >> 32)};
    philox4x32_10(ctr, key, out);
}

uint32_t blk_randint(uint64_t seed, uint32_t offset) {
    uint32_t out[4];
    blk_philox(seed, offset, out);
    return out[0];
}

float blk_rand(uint64_t seed, uint32_t offset) {
    uint32_t out[4];
    blk_philox(seed, offset, out);
    return (float)(out[0] >> 8) * 0x1p-24f;
}

float blk_randn(uint64_t seed, uint32_t offset) {
    uint32_t out[4];
    blk_philox(seed, offset, out);
    float u1 = (float)((out[0] >> 8) + 1) * 0x1p-24f;
    float u2 = (float)(out[1] >> 8) * 0x1p-24f;
    float r = sqrtf(-2.0f * logf(u1));
    return r * cosf(6.28318530717958647692f * u2);
}

/* sm80.c — Ampere (A100): cp.async, mma.sync, 164 KB shared memory per SM
 * (163 KB per block opt-in). No TMA, no wgmma, no f8 conversions. */
#include "target.h"

const tgt_target tgt_sm80 = {
    .arch = "sm_80",
    .llvm_cpu = "sm_80",
    .ptx_feature = "+ptx80",
    .ptx_version = 80,
    .sm = 80,
    .warp_size = 32,
    .max_threads_per_block = 1024,
    .smem_static_max = 48 * 1024,
    .smem_optin_max = 163 * 1024,
    .smem_per_sm = 164 * 1024,
    .smem_block_reserved = 1024,
    .regs_per_sm = 65536,
    .max_vec_bytes = 16,
    .default_num_warps = 4,
    .default_num_stages = 3,
    .caps = TGT_CAP_CP_ASYNC,
};

/* sm90.c — Hopper (H100/H200). sm_90a adds the arch-specific instructions
 * (wgmma, setmaxnreg) to plain sm_90; both have TMA + mbarrier transaction
 * counts, f8 conversions and 227 KB of shared memory per block opt-in
 * (228 KB per SM, 1 KB of it reserved per resident block).
 * LLVM 22 accepts sm_90a from +ptx80 on; sm_90 defaults to PTX 7.8 but we
 * ask for 8.0 on both so the same inline PTX assembles for either. */
#include "target.h"

#define SM90_COMMON                                                               \
    .ptx_feature = "+ptx80", .ptx_version = 80, .sm = 90, .warp_size = 32,        \
    .max_threads_per_block = 1024, .smem_static_max = 48 * 1024,                  \
    .smem_optin_max = 227 * 1024, .smem_per_sm = 228 * 1024,                      \
    .smem_block_reserved = 1024, .regs_per_sm = 65536, .max_vec_bytes = 16,       \
    .default_num_warps = 4, .default_num_stages = 3

const tgt_target tgt_sm90 = {
    .arch = "sm_90",
    .llvm_cpu = "sm_90",
    SM90_COMMON,
    .caps = TGT_CAP_CP_ASYNC | TGT_CAP_TMA | TGT_CAP_F8_CVT | TGT_CAP_BF16_MATH,
};

const tgt_target tgt_sm90a = {
    .arch = "sm_90a",
    .llvm_cpu = "sm_90a",
    SM90_COMMON,
    .caps = TGT_CAP_CP_ASYNC | TGT_CAP_TMA | TGT_CAP_WGMMA | TGT_CAP_F8_CVT | TGT_CAP_BF16_MATH | TGT_CAP_CLUSTER,
};

/* target.h — what blk knows about one GPU target, in one struct of data.
 *
 * Generic passes and codegen ask the struct (tgt_has_wgmma(t), t->max_vec_bytes,
 * ...) and never compare arch names: adding a target means adding a file like
 * sm80.c / sm90.c and a line in target.c's table.
 *
 * The LLVM CPU / PTX-feature pair is part of the description because LLVM
 * 22's NVPTX backend terminates the process when handed a PTX version too old
 * for the CPU (FACTS.md): only pairs listed here ever reach LLVM.
 */
#ifndef BLK_TARGET_H
#define BLK_TARGET_H

#include <stdbool.h>

enum { /* tgt_target.caps */
    TGT_CAP_CP_ASYNC = 1 << 0, /* cp.async global->shared (sm_80) */
    TGT_CAP_TMA = 1 << 1,      /* cp.async.bulk.tensor + mbarrier tx (sm_90) */
    TGT_CAP_WGMMA = 1 << 2,    /* wgmma.mma_async (sm_90a only) */
    TGT_CAP_F8_CVT = 1 << 3,   /* cvt.rn.satfinite.e4m3x2.f32 etc. (sm_89+) */
    TGT_CAP_BF16_MATH = 1 << 4,/* native bf16 add/mul/fma (sm_90) */
    TGT_CAP_CLUSTER = 1 << 5,  /* thread-block clusters with TMA multicast (sm_90a: the
                                * multicast form is sm_90a-only; mapa, barrier.cluster) */
};

typedef struct {
    const char *arch;          /* the name users write: "sm_90a" */
    const char *llvm_cpu;      /* LLVM NVPTX CPU: "sm_90a" */
    const char *ptx_feature;   /* LLVM feature string selecting the PTX ISA: "+ptx80" */
    int ptx_version;           /* 80 = PTX ISA 8.0 (what ptx_feature selects) */
    int sm;                    /* compute capability * 10: 90 */
    int warp_size;             /* 32 */
    int max_threads_per_block; /* 1024 */
    int smem_static_max;       /* bytes of static shared memory per block (48 KB) */
    int smem_optin_max;        /* bytes per block with the opt-in attribute */
    int smem_per_sm;           /* bytes of shared memory per multiprocessor (what the blocks
                                * resident on it share, each with smem_block_reserved more) */
    int smem_block_reserved;   /* bytes the system keeps per resident block (1 KB) */
    int regs_per_sm;           /* 32-bit registers per multiprocessor (65536) */
    int max_vec_bytes;         /* widest global access per thread (16: ld.v4.b32) */
    int default_num_warps;     /* a kernel's num_warps and num_stages where the program */
    int default_num_stages;    /* sets none (sema/kernel.c: resolve_launch) */
    unsigned caps;             /* TGT_CAP_* */
} tgt_target;

/* The description for an arch name, or NULL when blk does not know it. */
const tgt_target *tgt_lookup(const char *arch);
/* "sm_90a, sm_90, sm_80" — for diagnostics. */
const char *tgt_known_list(void);
/* The arch used when none is given. */
const tgt_target *tgt_default(void);

static inline bool tgt_has(const tgt_target *t, unsigned cap) { return (t->caps & cap) != 0; }

/* filled in sm80.c / sm90.c */
extern const tgt_target tgt_sm80, tgt_sm90, tgt_sm90a;

#endif

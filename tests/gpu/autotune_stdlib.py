#!/usr/bin/env python3
"""The stdlib's @autotune spaces on a GPU, through the runtime's autotuner.

    BLK_LIBBLKRT=build-pycarry/libblk.so PYTHONPATH=runtime/python \\
        python3 tests/gpu/autotune_stdlib.py [--quick]

For stdlib matmul.blk `matmul` (bf16) and fused_attn.blk `attn_fwd` (D=128,
causal and not) at several shapes: the tuner times every config of the
kernel's @autotune list on the launch's own arguments and keeps the fastest
(blkrt_autotuner_launch); this script then checks the tuned launch against
torch (relative error) and times the tuned config, the kernel's default
config (the source's values, what `blkc` compiles without -D) and the peer
(cuBLAS through torch.matmul, SDPA's cuDNN backend) with
triton.testing.do_bench in the same process. It prints one table; exit 1 when a
check fails or no config ran. The choices go to a fresh cache directory.
"""
import os
import sys
import tempfile

import torch
import triton.testing

import blk

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
STDLIB = os.path.join(ROOT, "stdlib")


def tflops(flop, ms):
    return flop / ms / 1e9


def bench(fn):
    return triton.testing.do_bench(fn, warmup=25, rep=100)


def rel_err(got, want):
    return ((got.float() - want.float()).norm() / want.float().norm()).item()


def matmul_rows(dev, cache, shapes):
    path = os.path.join(STDLIB, "matmul.blk")
    tuner = dev.autotuner(open(path).read(), "matmul", path=path, cache_dir=cache)
    default = dev.load_source_file(path, kernel="matmul", cache_dir=cache).kernel("matmul")
    rows = []
    for M, N, K in shapes:
        a = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
        b = torch.randn(K, N, device="cuda", dtype=torch.bfloat16)
        c = torch.full((M, N), float("nan"), device="cuda", dtype=torch.bfloat16)

        def grid(cf):
            return (blk.cdiv(M, cf["BM"]) * blk.cdiv(N, cf["BN"]),)
        tuner[grid](a, b, c, M, N, K)
        idx = tuner.last_config
        err = rel_err(c, a.float() @ b.float())
        chosen = tuner.kernels[idx]
        t_tuned = bench(lambda: chosen[grid(chosen.consts)](a, b, c, M, N, K))
        t_default = bench(lambda: default[grid(default.consts)](a, b, c, M, N, K))
        t_peer = bench(lambda: torch.matmul(a, b))
        flop = 2.0 * M * N * K
        rows.append(("matmul bf16", "%dx%dx%d" % (M, N, K), tuner.configs[idx], err,
                     tflops(flop, t_tuned), tflops(flop, t_default), tflops(flop, t_peer), "cuBLAS"))
    return rows, len(tuner.configs)


def attn_rows(dev, cache, shapes):
    path = os.path.join(STDLIB, "fused_attn.blk")
    rows, nconf = [], 0
    for causal in (False, True):
        defines = {"D": 128, "CAUSAL": causal}
        tuner = dev.autotuner(open(path).read(), "attn_fwd", path=path, defines=defines, cache_dir=cache)
        default = dev.load_source_file(path, defines=defines, kernel="attn_fwd", cache_dir=cache).kernel("attn_fwd")
        nconf = len(tuner.configs)
        for B, H, S in shapes:
            D = 128
            q, k, v = (torch.randn(B, H, S, D, device="cuda", dtype=torch.bfloat16) for _ in range(3))
            o = torch.full_like(q, float("nan"))
            lse = torch.empty(1, device="cuda", dtype=torch.float32)
            scale = D ** -0.5

            def grid(cf):
                return (blk.cdiv(S, cf["BM"]), B * H)
            tuner[grid](o, q, k, v, lse, S, scale)
            idx = tuner.last_config
            want = torch.nn.functional.scaled_dot_product_attention(q.float(), k.float(), v.float(), is_causal=causal)
            err = rel_err(o, want)
            chosen = tuner.kernels[idx]
            t_tuned = bench(lambda: chosen[grid(chosen.consts)](o, q, k, v, lse, S, scale))
            t_default = bench(lambda: default[grid(default.consts)](o, q, k, v, lse, S, scale))
            with torch.nn.attention.sdpa_kernel(torch.nn.attention.SDPBackend.CUDNN_ATTENTION):
                t_peer = bench(lambda: torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal))
            flop = 4.0 * B * H * S * S * D * (0.5 if causal else 1.0)
            rows.append(("attention fwd%s" % (" causal" if causal else ""), "B%d H%d N%d D%d" % (B, H, S, D),
                         tuner.configs[idx], err, tflops(flop, t_tuned), tflops(flop, t_default),
                         tflops(flop, t_peer), "cuDNN"))
    return rows, nconf


def main():
    quick = "--quick" in sys.argv
    dev = blk.Device(0)
    cache = tempfile.mkdtemp(prefix="blk-autotune-")
    mm = [(8192, 8192, 8192), (4096, 4096, 4096), (256, 11008, 4096), (64, 4096, 4096)]
    at = [(4, 32, 4096), (16, 32, 1024)]
    if quick:
        mm, at = mm[2:3], at[1:]
    rows, n_mm = matmul_rows(dev, cache, mm)
    more, n_at = attn_rows(dev, cache, at)
    rows += more
    print("%s (sm_%d%d); %d matmul configs, %d attn_fwd configs per variant" %
          (torch.cuda.get_device_name(), *torch.cuda.get_device_capability(), n_mm, n_at))
    print("| workload | shape | tuned config | rel err | tuned TFLOP/s | default TFLOP/s | peer TFLOP/s | tuned/peer |")
    print("|---|---|---|---|---|---|---|---|")
    bad = 0
    for name, shape, cfg, err, tt, td, tp, peer in rows:
        ok = err < 1e-2
        bad += not ok
        print("| %s | %s | %s | %.1e%s | %.0f | %.0f | %s %.0f | %.2fx |" %
              (name, shape, cfg, err, "" if ok else " FAIL", tt, td, peer, tp, tt / tp))
    return 1 if bad or not rows else 0


if __name__ == "__main__":
    sys.exit(main())

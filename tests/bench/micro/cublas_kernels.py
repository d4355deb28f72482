"""Which kernel cuBLAS (torch.matmul, bf16) runs per shape: name, grid, block,
shared memory, registers and its own duration (the profiler's, no launch
overhead), so that a blk configuration can be set beside the peer's.

    python3 tests/bench/micro/cublas_kernels.py 1024x1024x1024 64x4096x4096 ...

Each argument is MxNxK; C[M, N] = A[M, K] @ B[K, N], row-major, as bench.py's
matmul rows. Prints one line per kernel launched by one matmul (the median of
20 profiled calls after 20 warm-up calls)."""
import json
import os
import statistics
import sys
import tempfile

import torch
from torch.profiler import ProfilerActivity, profile


def kernels_of(M, N, K, reps=20):
    a = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(K, N, device="cuda", dtype=torch.bfloat16)
    c = torch.empty(M, N, device="cuda", dtype=torch.bfloat16)
    for _ in range(20):
        torch.matmul(a, b, out=c)
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(reps):
            torch.matmul(a, b, out=c)
        torch.cuda.synchronize()
    path = os.path.join(tempfile.mkdtemp(), "trace.json")
    prof.export_chrome_trace(path)
    with open(path) as f:
        events = [e for e in json.load(f)["traceEvents"] if e.get("cat") == "kernel"]
    by_name = {}
    for e in events:
        by_name.setdefault(e["name"], []).append(e)
    rows = []
    for name, es in by_name.items():
        args = es[0].get("args", {})
        rows.append((name, len(es) // reps, statistics.median(e["dur"] for e in es), args.get("grid"),
                     args.get("block"), args.get("shared memory"), args.get("registers per thread")))
    return rows


def main():
    shapes = sys.argv[1:] or ["1024x1024x1024", "4096x4096x4096"]
    print("device:", torch.cuda.get_device_name(), "torch", torch.__version__)
    for s in shapes:
        M, N, K = (int(x) for x in s.split("x"))
        for name, per_call, us, grid, block, smem, regs in kernels_of(M, N, K):
            tf = 2 * M * N * K / (us * 1e-6) / 1e12
            print("%-18s %6.1f us %6.0f TFLOP/s  x%d grid=%s block=%s smem=%s regs=%s  %s" %
                  (s, us, tf, per_call, grid, block, smem, regs, name))


if __name__ == "__main__":
    main()

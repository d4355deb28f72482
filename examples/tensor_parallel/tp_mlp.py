"""A tensor-parallel transformer MLP with blk kernels, one process per GPU.

    python3 -m torch.distributed.run --nproc_per_node=2 examples/tensor_parallel/tp_mlp.py
    (torchrun --nproc_per_node=2 ... is the same; --help lists the sizes)

The MLP is y = gelu(x W1 + b1) W2 + b2 (GPT-2's, bf16), split over the GPUs
as in Megatron-LM: each rank holds a column block of W1 (and of b1) and the
matching row block of W2, so

    h_r = gelu(x W1[:, r] + b1[r])     blk linear_gelu (tp_mlp.blk: matmul +
                                       bias + GELU in one kernel)
    p_r = h_r W2[r, :]                 blk stdlib matmul
    y   = sum_r p_r + b2               NCCL all-reduce (torch.distributed)

and the GPUs exchange only the one all-reduce of y per forward. Rank 0 also
runs the whole MLP on its GPU alone (the same kernels, full weights), and the
script checks that the tensor-parallel y equals it within TOL_TP of max|y|
(h is bit-identical; y differs by the roundings of two bf16 partial sums and
of their bf16 all-reduce instead of one f32 sum rounded once: up to four
bf16 roundings, 2^-8 each, of values of the size of max|y|, so 2e-2), that
it matches an f32 torch reference within TOL_REF (bf16 h and y),
and that every rank holds the same y. It then times one forward (CUDA events,
median of --iters after warm-up; the slowest rank for parallel runs): blk on
one GPU, blk tensor-parallel, torch eager tensor-parallel (cuBLAS + the same
all-reduce) and torch eager on one GPU, and prints a table. Exit status 0
when every check passes.
"""
import argparse
import os
import statistics
import sys

import torch
import torch.distributed as dist
import torch.nn.functional as F

import blk

HERE = os.path.dirname(os.path.abspath(__file__))
TOL_TP = 2e-2    # tensor-parallel vs one GPU, relative to max |y| (why: the docstring)
TOL_REF = 2e-2   # blk (bf16 storage, f32 accumulation) vs torch in f32, relative to max |y|


def parse():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--tokens", type=int, default=4096, help="rows of x (batch x sequence)")
    p.add_argument("--hidden", type=int, default=4096, help="model width")
    p.add_argument("--ffn", type=int, default=16384, help="MLP width (4 x hidden in GPT-2)")
    p.add_argument("--iters", type=int, default=20, help="timed forwards per run")
    return p.parse_args()


class BlkMLP:
    """The two blk kernels on this rank's GPU, launched on torch tensors."""

    def __init__(self, dev):
        self.gelu = dev.load_source_file(os.path.join(HERE, "tp_mlp.blk")).kernel("linear_gelu")
        self.mm = dev.load_source_file(blk.stdlib("matmul.blk")).kernel("matmul")

    def linear_gelu(self, a, w, b, out):
        M, K = a.shape
        N = w.shape[1]
        self.gelu[lambda c: blk.cdiv(M, c["BM"]) * blk.cdiv(N, c["BN"])](a, w, b, out, M, N, K)

    def matmul(self, a, w, out):
        M, K = a.shape
        N = w.shape[1]
        self.mm[lambda c: blk.cdiv(M, c["BM"]) * blk.cdiv(N, c["BN"])](a, w, out, M, N, K)


def timed(fn, iters, together):
    """Median ms of one fn() (CUDA events on the current stream); together:
    every rank starts each run at once and the slowest rank's median counts."""
    for _ in range(3):
        fn()
    times = []
    for _ in range(iters):
        if together:
            dist.barrier()
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        e0.record()
        fn()
        e1.record()
        e1.synchronize()
        times.append(e0.elapsed_time(e1))
    ms = torch.tensor([statistics.median(times)], device="cuda")
    if together:
        dist.all_reduce(ms, op=dist.ReduceOp.MAX)
    return ms.item()


def main():
    args = parse()
    if not torch.cuda.is_available():
        print("tp_mlp: no GPU visible to torch")
        return 77
    local = int(os.environ.get("LOCAL_RANK", "0"))
    torch.cuda.set_device(local)
    dist.init_process_group("nccl")
    rank, world = dist.get_rank(), dist.get_world_size()
    dev = blk.Device()  # torch's current device: this rank's GPU
    assert dev.info.ordinal == local, (dev.info.ordinal, local)
    M, H, FF = args.tokens, args.hidden, args.ffn
    if FF % world:
        raise SystemExit("tp_mlp: --ffn must be a multiple of the number of GPUs")
    Fr = FF // world
    cols = slice(rank * Fr, (rank + 1) * Fr)

    # The same weights on every rank (one seed), each keeping its shard.
    g = torch.Generator(device="cuda").manual_seed(0)
    bf = dict(device="cuda", dtype=torch.bfloat16)

    def randn(*shape, scale=1.0):
        return (torch.randn(*shape, generator=g, device="cuda") * scale).to(torch.bfloat16)
    x = randn(M, H)
    w1, b1 = randn(H, FF, scale=H ** -0.5), randn(FF, scale=0.1)
    w2, b2 = randn(FF, H, scale=FF ** -0.5), randn(H, scale=0.1)
    w1_r, b1_r, w2_r = w1[:, cols].contiguous(), b1[cols].contiguous(), w2[cols, :].contiguous()

    k = BlkMLP(dev)
    h_r, y_tp = torch.empty(M, Fr, **bf), torch.empty(M, H, **bf)

    def blk_tp():
        k.linear_gelu(x, w1_r, b1_r, h_r)
        k.matmul(h_r, w2_r, y_tp)
        dist.all_reduce(y_tp)
        y_tp.add_(b2)

    def torch_tp():
        h = F.gelu(torch.addmm(b1_r, x, w1_r))
        y = h @ w2_r
        dist.all_reduce(y)
        return y.add_(b2)

    # ---- correctness ----
    blk_tp()
    torch.cuda.synchronize()
    y0 = y_tp.clone()
    dist.broadcast(y0, 0)
    same = torch.equal(y0, y_tp)
    checks, rows = [], []
    if rank == 0:
        h, y1 = torch.empty(M, FF, **bf), torch.empty(M, H, **bf)

        def blk_one():
            k.linear_gelu(x, w1, b1, h)
            k.matmul(h, w2, y1)
            y1.add_(b2)
        blk_one()
        ref = F.gelu(x.float() @ w1.float() + b1.float()) @ w2.float() + b2.float()
        top = y1.float().abs().max().item()
        d_tp = (y_tp.float() - y1.float()).abs().max().item() / top
        d_ref = (y1.float() - ref).abs().max().item() / top
        checks = [("tensor-parallel vs one GPU", d_tp, TOL_TP), ("blk one GPU vs torch f32", d_ref, TOL_REF)]
        del ref
    flag = torch.tensor([0 if same else 1], device="cuda")
    dist.all_reduce(flag)

    # ---- timing ----
    flops = 2.0 * 2 * M * H * FF
    ms_blk_tp = timed(blk_tp, args.iters, True)
    ms_torch_tp = timed(torch_tp, args.iters, True)
    if rank == 0:
        ms_blk_one = timed(blk_one, args.iters, False)
        ms_torch_one = timed(lambda: F.gelu(torch.addmm(b1, x, w1)) @ w2 + b2, args.iters, False)
        rows = [("blk, one GPU", 1, ms_blk_one), ("blk, tensor-parallel + NCCL all-reduce", world, ms_blk_tp),
                ("torch eager, tensor-parallel + NCCL all-reduce", world, ms_torch_tp),
                ("torch eager, one GPU", 1, ms_torch_one)]
    dist.barrier()

    ok = True
    if rank == 0:
        print("tensor-parallel MLP y = gelu(x W1 + b1) W2 + b2: tokens %d, hidden %d, ffn %d, bf16, %d x %s" % (
            M, H, FF, world, torch.cuda.get_device_name()))
        print("| run | GPUs | ms / forward | TFLOP/s | vs blk one GPU |")
        print("|---|---|---|---|---|")
        for name, n, ms in rows:
            print("| %s | %d | %.3f | %.0f | %.2fx |" % (name, n, ms, flops / ms / 1e9, ms_blk_one / ms))
        for name, d, tol in checks:
            good = d <= tol
            ok = ok and good
            print("check: %s: max |diff| / max |y| = %.2e (tolerance %.0e) %s" % (name, d, tol, "ok" if good else "FAIL"))
        agree = flag.item() == 0
        ok = ok and agree
        print("check: every rank holds the same y: %s" % ("ok" if agree else "FAIL"))
        print("tp_mlp: %s" % ("ok" if ok else "FAILED"))
    status = torch.tensor([0 if ok else 1], device="cuda")
    dist.all_reduce(status)
    dist.destroy_process_group()
    return 0 if status.item() == 0 else 1


if __name__ == "__main__":
    sys.exit(main())

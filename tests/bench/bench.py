#!/usr/bin/env python3
"""blk vs Triton vs PyTorch on the workloads of BENCH.md (memory- and compute-bound).

On the GPU machine (PyTorch, Triton, an H200; no LLVM):

    python3 tests/bench/bench.py --ptx-dir DIR --out $OUT

DIR comes from tests/bench/build_ptx.sh (run where blkc is): one PTX file per
blk configuration (tests/bench/configs.txt) and libblkrt.so. blk kernels load
and launch through the Python binding (runtime/python/blk) over libblkrt, the
path users take; inputs and references come from PyTorch.

Per row: every blk configuration is first checked against a reference in
higher precision (fresh random inputs, NaN-poisoned outputs, relative error
under BENCH.md's tolerance, no NaN), then timed; a configuration that fails
prints FAIL and is not timed; the fastest passing one is reported. Peers
(Triton kernels from ../shared/bench/peers.py, copied in peers_kernels.py, and
PyTorch) are timed in the same process on the same (default) stream, with
triton.testing.do_bench (median; it flushes L2 between repetitions). Rows
print as they finish; the markdown table prints last; $OUT/bench.json holds
every number and the versions, rewritten after each row.

    python3 tests/bench/bench.py --self-test --ptx-dir DIR

runs without torch/triton/GPU against the fake driver of tests/runtime: every
PTX loads, every row's arguments and grid pass libblkrt's checks, the peer
kernels match peers.py, the table and JSON render.
"""
import argparse
import glob
import json
import math
import os
import re
import signal
import subprocess
import sys
import time
import types

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "runtime", "python"))
sys.path.insert(0, HERE)

TOL = {"f32": 1e-5, "bf16": 1e-2}
N28 = 1 << 28


# ---------------------------------------------------------------- workload specs
#
# A spec describes one row without touching torch: its tensors (shape, dtype,
# initialiser), which are outputs, the blk kernels (configs.txt keys) with the
# argument list and grid, and — for the GPU run — reference and peers as
# factories of a namespace `t` of tensors (and the torch module `T`).

class Spec:
    def __init__(self, key, workload, shape, tol, nbytes, tensors, outputs, blk, args, grid,
                 ref=None, triton=None, torch_fn=None, note="", flops=None, extra=None, pre=None, post=None,
                 prepare=None):
        self.key, self.workload, self.shape, self.tol, self.nbytes = key, workload, shape, tol, nbytes
        self.flops = flops          # compute-bound rows: TFLOP/s = flops / time
        self.extra = extra or []    # more peers: [(label, factory(T, t) -> fn)], reported in the notes
        self.tensors, self.outputs = tensors, outputs
        self.blk = blk              # [(configs.txt key, kernel name, [param names])]
        self.args, self.grid = args, grid  # args(t) -> tuple; grid(consts) -> tuple
        self.ref = ref              # ref(T, t) -> {output name: reference tensor}
        self.triton = triton        # triton(T, P, t, nsm) -> [(label, fn)]
        self.torch_fn = torch_fn    # torch_fn(T, t) -> fn
        # blk kernels launched before / after the row's kernel in every timed call (a pipeline: the
        # attention backward's preprocess and dQ, paged decode's combine), each with the first of its
        # configurations: [(configs.txt key, kernel name, [param names], args(t), grid(consts))]
        self.pre, self.post = pre or [], post or []
        self.prepare = prepare      # prepare(T, t): inputs derived from the random ones (after each refresh)
        self.note = note


def cdiv(a, b):
    return -(-a // b)


def blk_entries(spec):
    """spec.blk as (key, kernel, params, args(t), grid(consts)): an entry may
    bring its own arguments and grid (split-K's workspace and 2-d grid)."""
    return [(e[0], e[1], e[2], e[3], e[4]) if len(e) > 3 else (e[0], e[1], e[2], spec.args, spec.grid)
            for e in spec.blk]


def grid_consts(k, args):
    """What a grid function sees: the kernel's consts, the warps it launches
    with as _warps (a warp-specialized kernel's producer included), and as
    _programs how many programs of it the GPU runs at once for these
    arguments (blkrt_kernel_max_programs: the persistent kernels' grid)."""
    return dict(k.consts, _warps=k.num_warps, _programs=k.max_programs(*args))


def _uniform(lo, hi):
    return ("uniform", lo, hi)


DEVICE = "cuda"


def _sdpa(T, backend, t, causal):
    be = {"flash": T.nn.attention.SDPBackend.FLASH_ATTENTION,
          "cudnn": T.nn.attention.SDPBackend.CUDNN_ATTENTION}[backend]
    with T.nn.attention.sdpa_kernel(be):
        return T.nn.functional.scaled_dot_product_attention(t.q, t.k, t.v, is_causal=causal)


# The Triton peer's (BM, BN, num_warps, num_stages) per head dim (attn_spec). D = 128: the four the
# table has always used. D = 64: the same tiles. D = 256: the Q tile and the f32 accumulator double, so
# BN <= 64 and fewer stages: Q + stages * (K + V) tiles stay under 227 KB of shared memory (at most
# 64 KB + 2 * 64 KB = 192 KB: BM 128, BN 64, 2 stages).
TRITON_ATTN = {128: [(128, 64, 8, 3), (128, 128, 8, 2), (128, 64, 4, 3), (64, 64, 4, 3)],
               64: [(128, 64, 8, 3), (128, 128, 8, 2), (128, 64, 4, 3), (64, 64, 4, 3)],
               256: [(64, 64, 4, 2), (64, 32, 4, 3), (128, 64, 8, 2), (128, 32, 8, 3)]}


def rope_tables(T, npos, D, which):
    """RoPE's f32 table [npos, D/2]: cos (which = "cos") or sin of p * 10000^(-2i/D)."""
    inv = 10000.0 ** (-T.arange(0, D // 2, device=DEVICE, dtype=T.float64) * 2 / D)
    ang = T.arange(0, npos, device=DEVICE, dtype=T.float64)[:, None] * inv[None, :]
    return (T.cos(ang) if which == "cos" else T.sin(ang)).to(T.float32).contiguous()


def specs(small=False):
    """The rows. small: tiny shapes with the same keys and labels (--dry-run)."""
    out = []
    n = (1 << 16) if small else N28

    def R(m):  # rows actually allocated
        return min(m, 64) if small else m

    # copy: the ceiling row (torch copy_ is BENCH.md's copy ceiling)
    out.append(Spec(
        "copy", "copy f32 (ceiling)", "2^28", "f32", 2 * n * 4,
        {"x": ((n,), "f32", "randn"), "out": ((n,), "f32", "out")}, ["out"],
        [("copy", "copy", ["x", "out", "n"])],
        lambda t: (t.x, t.out, n), lambda c: (cdiv(n, c["BLOCK"]),),
        ref=lambda T, t: {"out": t.x},
        torch_fn=lambda T, t: (lambda: t.out.copy_(t.x))))

    out.append(Spec(
        "vector_add", "vector add f32", "2^28", "f32", 3 * n * 4,
        {"x": ((n,), "f32", "randn"), "y": ((n,), "f32", "randn"), "out": ((n,), "f32", "out")}, ["out"],
        [("vector_add", "vector_add", ["x", "y", "out", "n"])],
        lambda t: (t.x, t.y, t.out, n), lambda c: (cdiv(n, c["BLOCK"]),),
        ref=lambda T, t: {"out": t.x.double() + t.y.double()},
        triton=lambda T, P, t, nsm: [
            ("BLOCK=%d" % B, (lambda B=B: lambda: P.add_k[(cdiv(n, B),)](t.x, t.y, t.out, n, BLOCK=B))())
            for B in (1024, 2048, 4096)],  # 1024: peers.py's
        torch_fn=lambda T, t: (lambda: T.add(t.x, t.y, out=t.out))))

    def silu_ref(T, t):
        x = t.a.float() + t.b.float() * t.c.float()
        return {"out": x * T.sigmoid(x)}
    out.append(Spec(
        "silu_fma", "silu(a+b*c) bf16", "2^28", "bf16", 4 * n * 2,
        {"a": ((n,), "bf16", "randn"), "b": ((n,), "bf16", "randn"), "c": ((n,), "bf16", "randn"),
         "out": ((n,), "bf16", "out")}, ["out"],
        [("silu_fma", "silu_fma", ["a", "b", "c", "out", "n"])],
        lambda t: (t.a, t.b, t.c, t.out, n), lambda c: (cdiv(n, c["BLOCK"]),),
        ref=silu_ref,
        triton=lambda T, P, t, nsm: [
            ("BLOCK=%d" % B, (lambda B=B: lambda: P.silu_fma_k[(cdiv(n, B),)](t.a, t.b, t.c, t.out, n, BLOCK=B))())
            for B in (2048, 1024, 4096)],  # 2048: peers.py's
        torch_fn=lambda T, t: (lambda: T.nn.functional.silu(T.addcmul(t.a, t.b, t.c)))))

    def softmax_spec(ML, N, keys, blocks_warps, key=None):
        M = R(ML)
        return Spec(
            key or "softmax_%dx%d" % (ML, N), "softmax f32", "%dx%d" % (ML, N), "f32", 2 * M * N * 4,
            {"x": ((M, N), "f32", "randn"), "out": ((M, N), "f32", "out")}, ["out"],
            [(k, kn, ["out", "inp", "stride", "n_cols"]) for k, kn in keys],
            lambda t: (t.out, t.x, N, N), lambda c: (M,),
            ref=lambda T, t: {"out": T.softmax(t.x.double(), -1)},
            triton=lambda T, P, t, nsm: [
                ("BLOCK=%d num_warps=%d grid=%d*SMs" % (B, w, 4),
                 (lambda B=B, w=w: lambda: P.softmax_k[(nsm * 4,)](
                     t.out, t.x, N, N, M, N, BLOCK=B, num_stages=2, num_warps=w))())
                for B, w in blocks_warps],
            torch_fn=lambda T, t: (lambda: T.softmax(t.x, -1)))
    out.append(softmax_spec(32768, 4096, [("softmax4k", "softmax")], [(4096, 8), (4096, 16)]))  # (4096, 8): peers.py's
    out.append(softmax_spec(4096, 12345, [("softmax16k", "softmax"), ("softmax_online", "softmax_online")],
                            [(16384, 8), (16384, 16), (16384, 32)]))
    # size sweep, Triton's tutorial 02 perf_report (run only when --rows names it: --rows sweep_softmax):
    # M = 4096 rows of N columns, GB/s against N. Triton's BLOCK is the next power of two >= N as in the
    # tutorial, at its 8 warps and one other count; blk's configurations: configs.txt softmax_sweep_nN
    for N_ in (256, 512, 1024, 2048, 4096, 8192, 12288, 16384):
        B = 1 << (N_ - 1).bit_length()
        out.append(softmax_spec(4096, N_, [("softmax_sweep_n%d" % N_, "softmax")],
                                [(B, 8), (B, 4 if B <= 2048 else 16)], key="sweep_softmax_n%d" % N_))

    def ln_spec(ML, N, keys, blocks_warps):
        M = R(ML)
        def ref(T, t):
            return {"y": T.nn.functional.layer_norm(t.x.float(), (N,), t.w.float(), t.b.float(), 1e-5)}
        return Spec(
            "layernorm_%dx%d" % (ML, N), "layernorm bf16", "%dx%d" % (ML, N), "bf16", 2 * M * N * 2 + 2 * N * 2,
            {"x": ((M, N), "bf16", "randn"), "w": ((N,), "bf16", "randn"), "b": ((N,), "bf16", "randn"),
             "y": ((M, N), "bf16", "out")}, ["y"],
            [(k, kn, ["y", "x", "w", "b", "stride", "n_cols", "eps"]) for k, kn in keys],
            lambda t: (t.y, t.x, t.w, t.b, N, N, 1e-5), lambda c: (M,),
            ref=ref,
            triton=lambda T, P, t, nsm: [
                ("BLOCK=%d num_warps=%d" % (B, w),
                 (lambda B=B, w=w: lambda: P.ln_k[(M,)](t.x, t.y, t.w, t.b, N, N, 1e-5, BLOCK=B, num_warps=w))())
                for B, w in blocks_warps],
            torch_fn=lambda T, t: (lambda: T.nn.functional.layer_norm(t.x, (N,), t.w, t.b, 1e-5)),
            note="blk: tests/bench/bench_kernels.blk layernorm_bf16 (the peer's plain form) and stdlib "
                 "norm.blk layernorm (aligned rows in registers, else / lnloop: CHUNK columns at a time)")
    out.append(ln_spec(32768, 4096, [("layernorm4k", "layernorm_bf16"), ("lnstd4k", "layernorm")],
                       [(4096, 8), (4096, 4), (4096, 16)]))  # (4096, 8): peers.py's
    out.append(ln_spec(8192, 5000, [("layernorm8k", "layernorm_bf16"), ("lnstd8k", "layernorm"),
                                    ("lnloop", "layernorm")], [(8192, 8), (8192, 16)]))

    M, N = R(32768), 4096

    def lnf_ref(T, t):
        x = t.x.double()
        mu = x.mean(-1)
        var = ((x - mu[:, None]) ** 2).mean(-1)
        rstd = 1.0 / T.sqrt(var + 1e-5)
        return {"y": (x - mu[:, None]) * rstd[:, None] * t.w.double() + t.b.double(), "mean": mu, "rstd": rstd}
    out.append(Spec(
        "layernorm_f32", "layernorm f32 (+mean, rstd)", "32768x4096", "f32", 2 * M * N * 4 + 2 * N * 4 + 2 * M * 4,
        {"x": ((M, N), "f32", "randn"), "w": ((N,), "f32", "randn"), "b": ((N,), "f32", "randn"),
         "y": ((M, N), "f32", "out"), "mean": ((M,), "f32", "out"), "rstd": ((M,), "f32", "out")},
        ["y", "mean", "rstd"],
        [("layernorm_f32", "layernorm_fwd", ["y", "x", "w", "b", "mean", "rstd", "stride", "n_cols", "eps"])],
        lambda t: (t.y, t.x, t.w, t.b, t.mean, t.rstd, N, N, 1e-5), lambda c: (M,),
        ref=lnf_ref,
        torch_fn=lambda T, t: (lambda: T.nn.functional.layer_norm(t.x, (N,), t.w, t.b, 1e-5)),
        note="stdlib layernorm_fwd; no Triton peer (peers.py's is bf16); torch does not write mean/rstd"))

    def rms_spec(ML, N, keys, blocks_warps):
        M = R(ML)
        def ref(T, t):
            x = t.x.float()
            return {"y": x * T.rsqrt((x * x).mean(-1, keepdim=True) + 1e-5) * t.w.float()}
        return Spec(
            "rmsnorm_%dx%d" % (ML, N), "rmsnorm bf16", "%dx%d" % (ML, N), "bf16", 2 * M * N * 2 + N * 2,
            {"x": ((M, N), "bf16", "randn"), "w": ((N,), "bf16", "randn"), "y": ((M, N), "bf16", "out")}, ["y"],
            [(k, "rmsnorm", ["y", "x", "w", "stride", "n_cols", "eps"]) for k in keys],
            lambda t: (t.y, t.x, t.w, N, N, 1e-5), lambda c: (M,),
            ref=ref,
            triton=lambda T, P, t, nsm: [
                ("BLOCK=%d num_warps=%d" % (B, w),
                 (lambda B=B, w=w: lambda: P.rmsnorm_k[(M,)](t.x, t.y, t.w, N, N, 1e-5, BLOCK=B, num_warps=w))())
                for B, w in blocks_warps],
            torch_fn=lambda T, t: (lambda: T.nn.functional.rms_norm(t.x, (N,), t.w, 1e-5)),
            note="Triton peer rmsnorm_k added in peers_kernels.py (peers.py has none)")
    out.append(rms_spec(32768, 4096, ["rmsnorm4k"], [(4096, 8), (4096, 4), (4096, 16)]))
    out.append(rms_spec(8192, 5000, ["rmsnorm8k", "rmsloop"], [(8192, 8), (8192, 16)]))

    # diffusion step: denoise + temporal blend + clamp
    TS, tstep, wb, lo, hi = 1000, 500, 0.7, -2.5, 2.5

    def den_ref(T, t):
        sab, a = t.sab[tstep].double(), t.alpha[tstep].double()
        d = (t.xn.double() - sab * t.eps.double()) / a
        return {"out": T.clamp(wb * d + (1 - wb) * t.prev.double(), lo, hi)}

    def den_torch(T, t):
        sab, a = float(t.sab[tstep]), float(t.alpha[tstep])  # host scalars, read once outside the timing
        return lambda: T.clamp(wb * ((t.xn - sab * t.eps) / a) + (1 - wb) * t.prev, lo, hi)
    out.append(Spec(
        "denoise", "diffusion step bf16", "2^28", "bf16", 4 * n * 2,
        {"xn": ((n,), "bf16", "randn"), "eps": ((n,), "bf16", "randn"), "prev": ((n,), "bf16", "randn"),
         "out": ((n,), "bf16", "out"), "sab": ((TS,), "f32", _uniform(0.1, 1.0)),
         "alpha": ((TS,), "f32", _uniform(0.5, 1.0))}, ["out"],
        [("denoise", "denoise_blend", ["x_noisy", "noise_pred", "prev_frame", "out", "sqrt_alpha_bar", "alpha",
                                       "t", "w", "lo", "hi", "n"])],
        lambda t: (t.xn, t.eps, t.prev, t.out, t.sab, t.alpha, tstep, wb, lo, hi, n),
        lambda c: (cdiv(n, c["BLOCK"]),),
        ref=den_ref,
        triton=lambda T, P, t, nsm: [
            ("BLOCK=%d" % B, (lambda B=B: lambda: P.denoise_k[(cdiv(n, B),)](
                t.xn, t.eps, t.prev, t.out, t.sab, t.alpha, tstep, wb, lo, hi, n, BLOCK=B))())
            for B in (1024, 2048, 4096)],
        torch_fn=den_torch,
        note="stdlib diffusion.blk denoise_blend; Triton peer denoise_k added; torch eager (several kernels)"))

    # RoPE on q: [B*S tokens, H, D] bf16, f32 cos/sin tables [S, D/2]
    Bz, S, H, D = (1, 64, 32, 128) if small else (4, 4096, 32, 128)
    ntok = Bz * S

    def tables(T, shape, dtype, which):
        return rope_tables(T, S, D, which)

    def rope_ref(T, t):
        x = t.x.float().view(Bz, S, H, D)
        c = t.cos_t.view(1, S, 1, D // 2)
        s = t.sin_t.view(1, S, 1, D // 2)
        x1, x2 = x[..., :D // 2], x[..., D // 2:]
        return {"out": T.cat((x1 * c - x2 * s, x2 * c + x1 * s), -1).view(ntok, H, D)}

    def rope_torch(T, t):
        # the usual eager form (HF Llama): q * cos + rotate_half(q) * sin, bf16 cos/sin of full width
        cos = T.cat((t.cos_t, t.cos_t), -1).to(T.bfloat16).view(1, S, 1, D)
        sin = T.cat((t.sin_t, t.sin_t), -1).to(T.bfloat16).view(1, S, 1, D)
        x = t.x.view(Bz, S, H, D)

        def f():
            x1, x2 = x[..., :D // 2], x[..., D // 2:]
            return x * cos + T.cat((-x2, x1), -1) * sin
        return f
    out.append(Spec(
        "rope", "RoPE bf16", "B4 S4096 H32 D128", "bf16", 2 * ntok * H * D * 2 + 2 * S * (D // 2) * 4,
        {"x": ((ntok, H, D), "bf16", "randn"), "out": ((ntok, H, D), "bf16", "out"),
         "cos_t": ((S, D // 2), "f32", lambda T, shape, dtype: tables(T, shape, dtype, "cos")),
         "sin_t": ((S, D // 2), "f32", lambda T, shape, dtype: tables(T, shape, dtype, "sin"))}, ["out"],
        [("rope", "rope", ["out", "x", "cos_t", "sin_t", "pos", "seq", "heads"])],
        lambda t: (t.out, t.x, t.cos_t, t.sin_t, None, S, H),
        lambda c: (ntok, cdiv(H, c["BH"])),
        ref=rope_ref,
        triton=lambda T, P, t, nsm: [
            ("BH=%d num_warps=%d" % (bh, w), (lambda bh=bh, w=w: lambda: P.rope_k[(ntok, cdiv(H, bh))](
                t.out, t.x, t.cos_t, t.sin_t, S, H, D=D, BH=bh, num_warps=w))())
            for bh, w in ((8, 4), (16, 4), (32, 8))],
        torch_fn=rope_torch,
        note="stdlib attn_variants.blk rope (table form); Triton peer rope_k added; torch eager HF-style"))

    # ---- compute-bound: matmul (C = A B, bf16 in, f32 accumulate, bf16 out) and attention
    SPLITK_MAX = 8  # configs.txt's mm_splitk SPLIT values are at most this

    def mm_spec(SL, key=None, desc=False, mnk=None):
        M, N, K = (256, 256, 256) if small else (mnk or (SL, SL, SL))
        tensors = {"a": ((M, K), "bf16", "randn"), "b": ((K, N), "bf16", "randn"), "c": ((M, N), "bf16", "out")}
        blk = [("mmdesc", "matmul_desc", ["a", "b", "c", "M", "N", "K"]) if desc else
               ("matmul", "matmul", ["a", "b", "c", "M", "N", "K"])]
        if not desc:  # tiles of two column blocks, BN1 + BN2 wide (192, 96)
            blk.append(("mm_wide", "matmul_wide", ["a", "b", "c", "M", "N", "K"], lambda t: (t.a, t.b, t.c, M, N, K),
                        lambda c: (cdiv(M, c["BM"]) * cdiv(N, c["BN1"] + c["BN2"]),)))
        if mnk and M <= 1024:
            # few rows: matmul_splitk too (its workspace and the tiles' counters, zero at the start)
            tensors["ws"] = ((SPLITK_MAX * M * N,), "f32", "out")
            tensors["cnt"] = ((cdiv(M, 16) * cdiv(N, 16),), "i32",  # one per tile of any configs.txt shape
                              lambda T, shape, d: T.zeros(shape, device=DEVICE, dtype=d))
            blk.append(("mm_splitk", "matmul_splitk", ["a", "b", "c", "ws", "cnt", "M", "N", "K"],
                        lambda t: (t.a, t.b, t.c, t.ws, t.cnt, M, N, K),
                        lambda c: (cdiv(M, c["BM"]) * cdiv(N, c["BN"]), c["SPLIT"])))
            # split-K in clusters: the partials summed in the last program's shared memory (cluster_sum)
            blk.append(("mm_splitk_cluster", "matmul_splitk_cluster", ["a", "b", "c", "M", "N", "K"],
                        lambda t: (t.a, t.b, t.c, M, N, K),
                        lambda c: (cdiv(M, c["BM"]) * cdiv(N, c["BN"]) * c["SPLIT"],)))
        persistent = bool(key) and key.startswith("sweep_") and not desc and M >= 1024
        if persistent:
            # the sweeps' many-tile points: matmul_persistent too (as many programs as the GPU runs at
            # once, its tile loop warp-specialized: the next tile's loads under this one's epilogue)
            blk.append(("mm_persistent", "matmul_persistent", ["a", "b", "c", "M", "N", "K"],
                        lambda t: (t.a, t.b, t.c, M, N, K), lambda c: (c["_programs"],)))
        return Spec(
            key or "matmul_%d" % SL, "matmul bf16" + (" (tensor_desc: TMA)" if desc else ""),
            "%dx%dx%d" % mnk if mnk else "%d^3" % SL, "bf16", (M * K + K * N + M * N) * 2,
            tensors, ["c"], blk,
            lambda t: (t.a, t.b, t.c, M, N, K), lambda c: (cdiv(M, c["BM"]) * cdiv(N, c["BN"]),),
            ref=lambda T, t: {"c": t.a.double() @ t.b.double()} if small else {"c": (t.a.float() @ t.b.float())},
            triton=lambda T, P, t, nsm: [("tutorial autotune", lambda: P.mm_k[lambda m: (
                cdiv(M, m["BM"]) * cdiv(N, m["BN"]),)](t.a, t.b, t.c, M, N, K, K, 1, N, 1, N, 1))],
            torch_fn=lambda T, t: (lambda: T.matmul(t.a, t.b, out=t.c)),
            flops=2 * M * N * K,
            note=("stdlib matmul.blk matmul_desc (wgmma on sm_90a, TMA rings filled by a producer warpgroup, group in flight)" if desc else
                  "stdlib matmul.blk (wgmma on sm_90a, TMA rings filled by a producer warpgroup, group in flight)") +
                 (", or matmul_persistent (as many programs as the GPU runs at once)" if persistent else "") +
                 "; Triton: the tutorial kernel with its autotune configs (peers.py); torch: cuBLAS")
    out.append(mm_spec(8192))
    out.append(mm_spec(4096))
    out.append(mm_spec(8192, "matmul_desc_8192", desc=True))
    out.append(mm_spec(4096, "matmul_desc_4096", desc=True))
    # size sweeps (run only when --rows names them: --rows sweep_): plotted as lines
    for SL in (512, 1024, 2048, 4096, 8192, 16384):
        out.append(mm_spec(SL, "sweep_matmul_%d" % SL))
    # LLM projections (BENCH.md): tokens M against the (N, K) of a layer
    for N_, K_ in ((4096, 4096), (11008, 4096), (4096, 11008), (14336, 4096)):
        for M_ in (16, 64, 256, 1024, 4096, 8192):
            out.append(mm_spec(0, "sweep_llm%dx%d_m%d" % (N_, K_, M_), mnk=(M_, N_, K_)))
    out.extend(mm_family_specs(small))

    # D_ and ptx: the head dim and its configs.txt key (attn: D = 128, attn_d64 / attn_d256 for the sweeps)
    def attn_spec(causal, N_=4096, Bz_=4, key=None, D_=128, ptx=None):
        Bz, H, N, D = (1, 2, 256, D_) if small else (Bz_, 32, N_, D_)
        fl = 4 * Bz * H * N * N * D * (0.5 if causal else 1.0)
        shape = (Bz, H, N, D)
        return Spec(
            key or "attn_fwd%s" % ("_causal" if causal else ""), "attention fwd bf16%s" % (" causal" if causal else ""),
            "B%d H%d N%d D%d" % (Bz, H, N, D), "bf16", 4 * Bz * H * N * D * 2,
            {"q": (shape, "bf16", "randn"), "k": (shape, "bf16", "randn"), "v": (shape, "bf16", "randn"),
             "o": (shape, "bf16", "out"), "lse": ((1,), "f32", "out")}, ["o"],
            [(ptx or "attn%s" % ("_causal" if causal else ""), "attn_fwd", ["out", "q", "k", "v", "lse", "seq", "scale"]),
             # the persistent form (attnp* tags): as many programs as the GPU runs at once (grid_consts:
             # two per multiprocessor where one consumer warpgroup runs it; the -R remark says two)
             ((ptx or "attn%s" % ("_causal" if causal else "")).replace("attn", "attnp", 1), "attn_fwd_persistent",
              ["out", "q", "k", "v", "lse", "seq", "planes", "scale"],
              lambda t: (t.o, t.q, t.k, t.v, t.lse, N, Bz * H, D ** -0.5),
              lambda c: (c["_programs"],))],
            lambda t: (t.o, t.q, t.k, t.v, t.lse, N, D ** -0.5), lambda c: (cdiv(N, c["BM"]), Bz * H),
            ref=lambda T, t: {"o": T.nn.functional.scaled_dot_product_attention(
                t.q.float(), t.k.float(), t.v.float(), is_causal=causal)},
            triton=lambda T, P, t, nsm: [
                ("BM=%d BN=%d w%d s%d" % (bm, bn, nw, ns),
                 (lambda bm=bm, bn=bn, nw=nw, ns=ns: lambda: P.attn_k[(N // bm, Bz * H)](
                     t.q, t.k, t.v, t.o, D ** -0.5, N, H=H, D=D, BM=bm, BN=bn, CAUSAL=causal,
                     num_warps=nw, num_stages=ns))())
                for bm, bn, nw, ns in TRITON_ATTN[D]],
            torch_fn=lambda T, t: (lambda: _sdpa(T, "flash", t, causal)),
            extra=[("torch sdpa cudnn", lambda T, t: (lambda: _sdpa(T, "cudnn", t, causal)))],
            flops=fl,
            note="stdlib fused_attn.blk attn_fwd (wgmma on sm_90a, K/V by TMA from a producer warpgroup, P in registers); Triton: peers.py's "
                 "FA2-style kernel, %d configs; torch: SDPA flash backend (FlashAttention-2); cuDNN in extra" % len(TRITON_ATTN[D]))
    out.append(attn_spec(False))
    out.append(attn_spec(True))
    for N_ in (1024, 2048, 4096, 8192, 16384):  # 16384 tokens per head at every length
        out.append(attn_spec(False, N_, 16384 // N_, "sweep_attn_n%d" % N_))
    # the same sweep at head dims 64 and 256 (issue 9), from N = 512; one plot family per head dim
    # (sweep_families: attn64, attn256 beside attn, the D = 128 rows above)
    for D_ in (64, 256):
        for N_ in (512, 1024, 2048, 4096, 8192, 16384):
            out.append(attn_spec(False, N_, 16384 // N_, "sweep_attn%d_n%d" % (D_, N_), D_, "attn_d%d" % D_))

    # ---- the attention family (issue 10)
    W = 1024  # configs.txt's attn_window WINDOW (the small shapes of --dry-run see a plain causal mask)

    def window_mask(T, n):
        i = T.arange(n, device=DEVICE)
        d = i[:, None] - i[None, :]
        return (d >= 0) & (d < W)  # True: attend (query i sees keys i - W < j <= i)

    def window_extra():
        def flash(T, t):  # FlashAttention-2's own sliding window, where the package is installed
            from flash_attn import flash_attn_func
            q, k, v = (x.transpose(1, 2) for x in (t.q, t.k, t.v))  # [B, N, H, D] views
            return lambda: flash_attn_func(q, k, v, causal=True, window_size=(W - 1, 0))

        def flex(T, t):  # torch's FlexAttention with the window as a block mask (compiled)
            from torch.nn.attention.flex_attention import create_block_mask, flex_attention
            fa = T.compile(flex_attention)
            bm = create_block_mask(lambda b, h, qi, kj: (qi >= kj) & (qi - kj < W), None, None,
                                   t.q.shape[2], t.q.shape[2], device=DEVICE)
            return lambda: fa(t.q, t.k, t.v, block_mask=bm)
        return [("flash_attn window_size", flash), ("torch flex_attention", flex)]

    def window_spec():
        Bz, H, N, D = (1, 2, 256, 128) if small else (4, 32, 4096, 128)
        shape = (Bz, H, N, D)
        visible = sum(min(i + 1, W) for i in range(N))  # keys per row, summed
        return Spec(
            "attn_window", "attention fwd bf16 window %d" % W, "B%d H%d N%d D%d" % (Bz, H, N, D), "bf16",
            4 * Bz * H * N * D * 2,
            {"q": (shape, "bf16", "randn"), "k": (shape, "bf16", "randn"), "v": (shape, "bf16", "randn"),
             "o": (shape, "bf16", "out"), "lse": ((1,), "f32", "out")}, ["o"],
            [("attn_window", "attn_fwd", ["out", "q", "k", "v", "lse", "seq", "scale"])],
            lambda t: (t.o, t.q, t.k, t.v, t.lse, N, D ** -0.5), lambda c: (cdiv(N, c["BM"]), Bz * H),
            ref=lambda T, t: {"o": T.nn.functional.scaled_dot_product_attention(
                t.q.float(), t.k.float(), t.v.float(), attn_mask=window_mask(T, N))},
            torch_fn=lambda T, t: (lambda m=window_mask(T, N): T.nn.functional.scaled_dot_product_attention(
                t.q, t.k, t.v, attn_mask=m)),
            extra=window_extra(),
            flops=4 * Bz * H * D * visible,
            note="stdlib fused_attn.blk attn_fwd CAUSAL WINDOW=%d (the key loop starts at the window's first "
                 "block); torch: SDPA with the equivalent boolean mask (its dispatcher's choice: no flash "
                 "kernel takes a mask); flash_attn window_size=(W-1, 0) and compiled FlexAttention in extra, "
                 "where importable; TFLOP/s count only the visible scores" % W)
    out.append(window_spec())

    def bwd_spec(causal):
        Bz, H, N, D = (1, 2, 256, 128) if small else (4, 32, 4096, 128)
        shape, scale = (Bz, H, N, D), D ** -0.5
        suffix = "_causal" if causal else ""

        def prepare(T, t):
            # the forward's outputs the backward reads: o (bf16) and lse (ln sum exp of scaled scores)
            for b in range(Bz):
                s = (t.q[b].float() @ t.k[b].float().transpose(-1, -2)) * scale
                if causal:
                    s.masked_fill_(T.ones(N, N, dtype=T.bool, device=DEVICE).triu(1), float("-inf"))
                t.lse.view(Bz, H, N)[b] = T.logsumexp(s, -1)
                t.o[b] = (T.softmax(s, -1) @ t.v[b].float()).to(T.bfloat16)
                del s

        def ref(T, t):
            q, k, v = (x.float().requires_grad_() for x in (t.q, t.k, t.v))
            o = T.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal)
            dq, dk, dv = T.autograd.grad(o, (q, k, v), t.do.float())
            return {"dq": dq, "dk": dk, "dv": dv}

        def sdpa_bwd(backend):
            def factory(T, t):
                be = {"flash": T.nn.attention.SDPBackend.FLASH_ATTENTION,
                      "cudnn": T.nn.attention.SDPBackend.CUDNN_ATTENTION}[backend]
                q, k, v = (x.detach().requires_grad_() for x in (t.q, t.k, t.v))
                with T.nn.attention.sdpa_kernel(be):
                    o = T.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal)
                return lambda: T.autograd.grad(o, (q, k, v), t.do, retain_graph=True)
            return factory

        empty = lambda T, shape, dt: T.empty(shape, device=DEVICE, dtype=dt)  # noqa: E731 (filled by prepare)
        return Spec(
            "attn_bwd" + suffix, "attention bwd bf16%s" % (" causal" if causal else ""),
            "B%d H%d N%d D%d" % (Bz, H, N, D), "bf16", 8 * Bz * H * N * D * 2,
            {"q": (shape, "bf16", "randn"), "k": (shape, "bf16", "randn"), "v": (shape, "bf16", "randn"),
             "do": (shape, "bf16", "randn"), "o": (shape, "bf16", empty), "lse": ((Bz * H * N,), "f32", empty),
             "delta": ((Bz * H * N,), "f32", empty), "dq": (shape, "bf16", "out"), "dk": (shape, "bf16", "out"),
             "dv": (shape, "bf16", "out")}, ["dq", "dk", "dv"],
            [("attn_bwd_dkdv" + suffix, "attn_bwd_dkdv",
              ["dk", "dv", "q", "k", "v", "dout", "lse", "delta", "seq", "scale"])],
            lambda t: (t.dk, t.dv, t.q, t.k, t.v, t.do, t.lse, t.delta, N, scale),
            lambda c: (cdiv(N, c["BN"]), Bz * H),
            pre=[("attn_bwd_pre", "attn_bwd_preprocess", ["delta", "o", "dout", "seq"],
                  lambda t: (t.delta, t.o, t.do, N), lambda c: (cdiv(N, c["BM"]), Bz * H)),
                 ("attn_bwd_dq" + suffix, "attn_bwd_dq", ["dq", "q", "k", "v", "dout", "lse", "delta", "seq", "scale"],
                  lambda t: (t.dq, t.q, t.k, t.v, t.do, t.lse, t.delta, N, scale),
                  lambda c: (cdiv(N, c["BM"]), Bz * H))],
            prepare=prepare, ref=ref,
            torch_fn=sdpa_bwd("flash"), extra=[("torch sdpa cudnn bwd", sdpa_bwd("cudnn"))],
            flops=2.5 * 4 * Bz * H * N * N * D * (0.5 if causal else 1.0),
            note="stdlib fused_attn.blk attn_bwd_preprocess + attn_bwd_dq + attn_bwd_dkdv, all three in each "
                 "timed call (the dK/dV kernel's configurations tried, the others' first); torch: SDPA "
                 "backward (autograd.grad through the flash backend; cuDNN in extra); TFLOP/s: 2.5x the "
                 "forward's (five matmuls to two)")
    out.append(bwd_spec(False))
    out.append(bwd_spec(True))

    def bwd_dq_spec():
        # dQ alone (after the preprocess), its configurations tried: the
        # backward's split between its two kernels, and dQ's best tile
        s = bwd_spec(False)
        dq = s.pre[1]
        s.key, s.workload, s.outputs = "attn_bwd_dq", "attention bwd dQ only bf16", ["dq"]
        s.blk, s.pre = [dq], s.pre[:1]
        s.flops = s.flops * 3 / 5  # S, dP, dQ: three of its five-matmul count's forward-equivalent units
        s.torch_fn, s.extra = None, []
        s.note = ("stdlib fused_attn.blk attn_bwd_dq after attn_bwd_preprocess (its configurations tried); "
                  "no peer (a part of the backward); TFLOP/s: 3/5 of the backward's count")
        return s
    out.append(bwd_dq_spec())

    def linattn_spec(causal):
        Bz, H, N, D = (1, 2, 256, 64) if small else (4, 32, 4096, 64)
        shape = (Bz, H, N, D)

        def feature(T, x):  # elu(x) + 1, linear_attn's feature map
            return T.nn.functional.elu(x) + 1.0

        def compute(T, q, k, v):
            fq, fk = feature(T, q), feature(T, k)
            if causal:  # the quadratic masked form: what an eager model writes for a causal prefix
                a = (fq @ fk.transpose(-1, -2)).tril()
                return (a @ v) / a.sum(-1, keepdim=True)
            kv, z = fk.transpose(-1, -2) @ v, fk.sum(-2, keepdim=True)
            return (fq @ kv) / (fq * z).sum(-1, keepdim=True)
        key = "linear_attn" + ("_causal" if causal else "")
        return Spec(
            key, "linear attention bf16%s" % (" causal" if causal else ""), "B%d H%d N%d D%d" % shape, "bf16",
            4 * Bz * H * N * D * 2,
            {"q": (shape, "bf16", "randn"), "k": (shape, "bf16", "randn"), "v": (shape, "bf16", "randn"),
             "o": (shape, "bf16", "out")}, ["o"],
            [(key, "linear_attn", ["out", "q", "k", "v", "seq"])],
            lambda t: (t.o, t.q, t.k, t.v, N), lambda c: (Bz * H,),
            ref=lambda T, t: {"o": compute(T, t.q.float(), t.k.float(), t.v.float())},
            torch_fn=lambda T, t: (lambda: compute(T, t.q, t.k, t.v)),
            note="stdlib attn_variants.blk linear_attn (feature map elu + 1, the K^T V state in registers, one "
                 "program per head); torch: the same in eager bf16 (%s)" %
                 ("the causal prefix as the masked quadratic form" if causal else "K^T V, then Q (K^T V)"))
    out.append(linattn_spec(False))
    out.append(linattn_spec(True))

    def decode_spec():
        Bz, H, G, D, PAGE, L, NS = (2, 8, 4, 128, 16, 256, 4) if small else (8, 32, 4, 128, 16, 4096, 8)
        KH, MB = H // G, cdiv(L, PAGE)
        NB, PPS = Bz * MB, cdiv(MB, NS)
        cache = (NB, PAGE, KH, D)
        scale = D ** -0.5

        def gathered(T, t):  # [B, H, L, D]: each sequence's pages in order, K/V heads repeated per group
            pages = t.table.view(Bz, MB).long()
            return [c[pages].reshape(Bz, MB * PAGE, KH, D)[:, :L].permute(0, 2, 1, 3).repeat_interleave(G, 1)
                    for c in (t.kc, t.vc)]

        def ref(T, t):
            kg, vg = gathered(T, t)
            o = T.nn.functional.scaled_dot_product_attention(t.q.float().view(Bz, H, 1, D), kg.float(), vg.float())
            return {"out": o.view(Bz, H, D)}

        def torch_fn(T, t):  # SDPA on the cache already gathered (the gather is not timed)
            kg, vg = (x.contiguous() for x in gathered(T, t))
            q = t.q.view(Bz, H, 1, D)
            return lambda: T.nn.functional.scaled_dot_product_attention(q, kg, vg)

        def gather_sdpa(T, t):
            q = t.q.view(Bz, H, 1, D)
            return lambda: T.nn.functional.scaled_dot_product_attention(q, *gathered(T, t))
        return Spec(
            "attn_decode", "paged decode bf16 (split-K)", "B%d H%d/%d L%d D%d" % (Bz, H, KH, L, D), "bf16",
            2 * Bz * L * KH * D * 2 + 2 * Bz * H * D * 2,
            {"q": ((Bz, H, D), "bf16", "randn"), "kc": (cache, "bf16", "randn"), "vc": (cache, "bf16", "randn"),
             "table": ((Bz * MB,), "i32", lambda T, shape, dt: T.randperm(NB, device=DEVICE, dtype=dt)),
             "lens": ((Bz,), "i32", lambda T, shape, dt: T.full(shape, L, device=DEVICE, dtype=dt)),
             "o_part": ((Bz * H * NS * D,), "f32", "out"), "lse_part": ((Bz * H * NS,), "f32", "out"),
             "out": ((Bz, H, D), "bf16", "out"), "lse": ((Bz * H,), "f32", "out")}, ["out"],
            [("attn_decode", "attn_decode_paged",
              ["o_part", "lse_part", "q", "k_cache", "v_cache", "block_table", "seq_lens", "heads", "max_blocks",
               "pages_per_split", "scale"])],
            lambda t: (t.o_part, t.lse_part, t.q, t.kc, t.vc, t.table, t.lens, H, MB, PPS, scale),
            lambda c: (NS, Bz * H),
            post=[("attn_decode_combine", "attn_decode_combine", ["out", "lse", "o_part", "lse_part", "num_splits"],
                   lambda t: (t.out, t.lse, t.o_part, t.lse_part, NS), lambda c: (Bz * H,))],
            ref=ref,
            triton=lambda T, P, t, nsm: [
                ("BN=%d w%d s%d" % (bn, nw, ns),
                 (lambda bn=bn, nw=nw, ns=ns: lambda: P.decode_paged_k[(Bz * H,)](
                     t.q, t.kc, t.vc, t.table, t.lens, t.out, scale, H, MB, D=D, PAGE=PAGE, GROUP=G, BN=bn,
                     num_warps=nw, num_stages=ns))())
                for bn, nw, ns in [(PAGE, 4, 2), (4 * PAGE, 4, 3), (8 * PAGE, 8, 3)]],
            torch_fn=torch_fn, extra=[("torch gather + sdpa", gather_sdpa)],
            note="stdlib fused_attn.blk attn_decode_paged (PAGE=%d, GROUP=%d, %d splits) + attn_decode_combine; "
                 "shuffled block table; Triton: a single-pass paged decode kernel (one program per batch·head, "
                 "BN keys per step through the block table, no split), 3 configs; torch: SDPA on the cache "
                 "gathered beforehand (gather untimed; gather + SDPA in extra); GB/s: the K/V cache read once"
                 % (PAGE, G, NS))
    out.append(decode_spec())

    # block-sparse attention: a local + strided pattern of G x G blocks shared by every head (each
    # query block sees the key blocks within 2 of its own and every 8th, the last of each 8: 27% of
    # the blocks at N = 4096); blk walks it as a CSR block list, torch SDPA takes the dense mask
    def bsparse_spec():
        Bz, H, N, D = (1, 2, 256, 128) if small else (4, 32, 4096, 128)
        G, shape = 128, (Bz, H, N, D)
        nb = N // G
        rows = [[kb for kb in range(nb) if abs(qb - kb) <= 2 or kb % 8 == 7] for qb in range(nb)]

        def csr(bn):  # kv_ptr, kv_idx for query blocks of G rows and key blocks of bn
            ptr, idx = [0], []
            for r in rows:
                idx += [kb * (G // bn) + i for kb in r for i in range(G // bn)]
                ptr.append(len(idx))
            return ptr, idx

        def dense_mask(T):  # [N, N] bool, True: attend
            m = T.zeros(nb, nb, dtype=T.bool, device=DEVICE)
            for qb, r in enumerate(rows):
                m[qb, r] = True
            return m.repeat_interleave(G, 0).repeat_interleave(G, 1)

        def mask_mod(b, h, qi, kj):  # FlexAttention's form of the same pattern
            d = qi // G - kj // G
            return ((d <= 2) & (d >= -2)) | (kj // G % 8 == 7)

        def flex(T, t):
            from torch.nn.attention.flex_attention import create_block_mask, flex_attention
            fa = T.compile(flex_attention)
            bm = create_block_mask(mask_mod, None, None, N, N, device=DEVICE, BLOCK_SIZE=G)
            return lambda: fa(t.q, t.k, t.v, block_mask=bm)

        def grid(c):
            if c["BM"] != G:
                raise ValueError("the block list is built for BM = %d, not %d" % (G, c["BM"]))
            return (N // G, Bz * H)

        tensors = {"q": (shape, "bf16", "randn"), "k": (shape, "bf16", "randn"), "v": (shape, "bf16", "randn"),
                   "o": (shape, "bf16", "out"), "lse": ((1,), "f32", "out")}
        for bn in (64, 128):
            for name, vals in zip(("kv_ptr", "kv_idx"), csr(bn)):
                tensors["%s%d" % (name, bn)] = ((len(vals),), "i32",
                                                (lambda vals: lambda T, shape, dt: T.tensor(vals, device=DEVICE,
                                                                                            dtype=dt))(vals))
        params = ["out", "q", "k", "v", "lse", "kv_ptr", "kv_idx", "seq", "scale"]
        visible = sum(len(r) for r in rows) * G * G
        return Spec(
            "attn_bsparse", "attention fwd bf16 block-sparse", "B%d H%d N%d D%d" % (Bz, H, N, D), "bf16",
            4 * Bz * H * N * D * 2, tensors, ["o"],
            [("attn_bsparse", "attn_fwd_blocksparse", params,
              lambda t: (t.o, t.q, t.k, t.v, t.lse, t.kv_ptr64, t.kv_idx64, N, D ** -0.5), grid),
             ("attn_bsparse_bn128", "attn_fwd_blocksparse", params,
              lambda t: (t.o, t.q, t.k, t.v, t.lse, t.kv_ptr128, t.kv_idx128, N, D ** -0.5), grid)],
            None, None,
            ref=lambda T, t: {"o": T.nn.functional.scaled_dot_product_attention(
                t.q.float(), t.k.float(), t.v.float(), attn_mask=dense_mask(T))},
            triton=lambda T, P, t, nsm: [
                ("BM=128 BN=%d w%d s%d" % (bn, nw, ns),
                 (lambda bn=bn, nw=nw, ns=ns: lambda: P.attn_bsparse_k[(N // G, Bz * H)](
                     t.q, t.k, t.v, t.o, getattr(t, "kv_ptr%d" % bn), getattr(t, "kv_idx%d" % bn), D ** -0.5, N,
                     D=D, BM=G, BN=bn, num_warps=nw, num_stages=ns))())
                for bn, nw, ns in [(64, 8, 3), (128, 8, 2), (64, 4, 3)]],
            torch_fn=lambda T, t: (lambda m=dense_mask(T): T.nn.functional.scaled_dot_product_attention(
                t.q, t.k, t.v, attn_mask=m)),
            extra=[("torch flex_attention", flex)],
            flops=4 * Bz * H * D * visible,
            note="stdlib fused_attn.blk attn_fwd_blocksparse over a CSR list of %d-row query blocks (local "
                 "+ strided, %.0f%% of the blocks; K/V staged per iteration: their addresses come from the "
                 "list); Triton: attn_k's loop over the same list (peers_kernels.py attn_bsparse_k, added); "
                 "torch: SDPA with the equivalent boolean mask (its dispatcher's choice); compiled "
                 "FlexAttention with the block mask in extra; TFLOP/s count only the visible scores"
                 % (G, 100.0 * visible / (N * N)))
    out.append(bsparse_spec())

    # RoPE fused into attention (causal): attn_fwd_rope rotates q and k as it loads them; against
    # torch's eager RoPE then SDPA, and blk's own unfused pair (attn_rope_unfused: rope_qk, then
    # attn_fwd on the rotated copies)
    def rope_attn_spec(fused):
        Bz, H, N, D = (1, 2, 256, 128) if small else (4, 32, 4096, 128)
        shape, scale = (Bz, H, N, D), D ** -0.5
        tensors = {"q": (shape, "bf16", "randn"), "k": (shape, "bf16", "randn"), "v": (shape, "bf16", "randn"),
                   "o": (shape, "bf16", "out"), "lse": ((1,), "f32", "out"),
                   "cos_t": ((N, D // 2), "f32", lambda T, shape, dt: rope_tables(T, N, D, "cos")),
                   "sin_t": ((N, D // 2), "f32", lambda T, shape, dt: rope_tables(T, N, D, "sin"))}

        def ref(T, t):  # rotated in f32 and rounded to bf16 (rope_qk's output), then attention in f32
            c, s = t.cos_t.view(1, 1, N, D // 2), t.sin_t.view(1, 1, N, D // 2)

            def rot(x):
                x1, x2 = x.float()[..., :D // 2], x.float()[..., D // 2:]
                return T.cat((x1 * c - x2 * s, x2 * c + x1 * s), -1).to(T.bfloat16).float()
            return {"o": T.nn.functional.scaled_dot_product_attention(rot(t.q), rot(t.k), t.v.float(),
                                                                       is_causal=True)}

        def torch_fn(T, t):  # HF Llama's eager apply_rotary_pos_emb (bf16 cos/sin of full width), then SDPA
            cos = T.cat((t.cos_t, t.cos_t), -1).to(T.bfloat16).view(1, 1, N, D)
            sin = T.cat((t.sin_t, t.sin_t), -1).to(T.bfloat16).view(1, 1, N, D)

            def rot(x):
                return x * cos + T.cat((-x[..., D // 2:], x[..., :D // 2]), -1) * sin
            return lambda: T.nn.functional.scaled_dot_product_attention(rot(t.q), rot(t.k), t.v, is_causal=True)

        grid = lambda c: (cdiv(N, c["BM"]), Bz * H)  # noqa: E731
        common = dict(ref=ref, torch_fn=torch_fn, flops=2 * Bz * H * N * N * D)
        if fused:
            return Spec(
                "attn_rope", "attention fwd bf16 causal + RoPE", "B%d H%d N%d D%d" % (Bz, H, N, D), "bf16",
                4 * Bz * H * N * D * 2 + 2 * N * (D // 2) * 4, tensors, ["o"],
                [("attn_rope", "attn_fwd_rope", ["out", "q", "k", "v", "lse", "cos_t", "sin_t", "seq", "scale"])],
                lambda t: (t.o, t.q, t.k, t.v, t.lse, t.cos_t, t.sin_t, N, scale), grid,
                note="stdlib fused_attn.blk attn_fwd_rope CAUSAL (q rotated once per program, k per key "
                     "block, in registers; K staged per iteration, V by the TMA ring); torch: HF-style eager "
                     "RoPE on q and k, then SDPA (its dispatcher: flash); blk's unfused pair is row "
                     "attn_rope_unfused", **common)
        empty = lambda T, shape, dt: T.empty(shape, device=DEVICE, dtype=dt)  # noqa: E731 (rope_qk fills them)
        tensors.update({"qr": (shape, "bf16", empty), "kr": (shape, "bf16", empty)})
        return Spec(
            "attn_rope_unfused", "attention fwd bf16 causal + RoPE, unfused", "B%d H%d N%d D%d" % (Bz, H, N, D),
            "bf16", 4 * Bz * H * N * D * 2 + 2 * N * (D // 2) * 4, tensors, ["o"],
            [("attn_causal", "attn_fwd", ["out", "q", "k", "v", "lse", "seq", "scale"])],
            lambda t: (t.o, t.qr, t.kr, t.v, t.lse, N, scale), grid,
            pre=[("rope_qk", "rope_qk",
                  ["q_out", "k_out", "q", "k", "cos_t", "sin_t", "pos", "seq", "q_heads", "kv_heads"],
                  lambda t: (t.qr, t.kr, t.q, t.k, t.cos_t, t.sin_t, None, N, 1, 1),
                  lambda c: (Bz * H * N, 1))],
            note="stdlib attn_variants.blk rope_qk (q and k viewed as [B*H*N tokens, 1 head, D]: position = "
                 "token % N) into copies, then fused_attn.blk attn_fwd CAUSAL (attn_causal's configurations), "
                 "both in each timed call; torch as in attn_rope", **common)
    out.append(rope_attn_spec(True))
    out.append(rope_attn_spec(False))
    # ---- conv2d NHWC + batchnorm (folded: y*scale + shift) + SiLU, bf16 (stdlib conv.blk)
    def conv_spec(key, Nb, HW, C, K, ks, pad):
        Nb, HW = (2, 8) if small else (Nb, HW)
        OH = HW + 2 * pad - ks + 1
        npix = Nb * OH * OH

        def ref(T, t):
            x = t.x.double() if small else t.x.float()
            with T.backends.cudnn.flags(enabled=True, allow_tf32=False):
                y = T.nn.functional.conv2d(x.permute(0, 3, 1, 2), t.w.to(x.dtype).permute(3, 2, 0, 1), padding=pad)
            y = y * t.scale.to(x.dtype)[None, :, None, None] + t.shift.to(x.dtype)[None, :, None, None]
            return {"out": (y * T.sigmoid(y)).permute(0, 2, 3, 1)}

        def peer(T, t):
            # torch's own layers on channels_last tensors: cuDNN conv, batch_norm (running stats:
            # mean 0, var 1 - eps (torch wants eps > 0), gamma = scale, beta = shift is y*scale + shift), silu
            x = t.x.permute(0, 3, 1, 2)  # NCHW view of the NHWC buffer = channels_last
            w = t.w.permute(3, 2, 0, 1).contiguous(memory_format=T.channels_last)
            mean, var = T.zeros(K, device=DEVICE), T.full((K,), 1.0 - 1e-5, device=DEVICE)

            def f():
                y = T.nn.functional.conv2d(x, w, padding=pad)
                y = T.nn.functional.batch_norm(y, mean, var, t.scale, t.shift, False, 0.0, 1e-5)
                return T.nn.functional.silu(y)
            return f

        def compiled(T, t):
            f = T.compile(peer(T, t))
            f()  # compile outside the timing
            return f
        return Spec(
            key, "conv2d+bn+silu bf16 %dx%d" % (ks, ks), "N%d %dx%d C%d K%d pad %d" % (Nb, HW, HW, C, K, pad), "bf16",
            2 * (Nb * HW * HW * C + ks * ks * C * K + npix * K),
            {"x": ((Nb, HW, HW, C), "bf16", "randn"), "w": ((ks, ks, C, K), "bf16", _uniform(-0.1, 0.1)),
             "scale": ((K,), "f32", _uniform(0.5, 1.5)), "shift": ((K,), "f32", _uniform(-1.0, 1.0)),
             "out": ((Nb, OH, OH, K), "bf16", "out")}, ["out"],
            [(key, "conv2d_nhwc", ["out", "x", "w", "scale", "shift", "N", "H", "W", "C", "K", "stride", "pad"])],
            lambda t: (t.out, t.x, t.w, t.scale, t.shift, Nb, HW, HW, C, K, 1, pad),
            lambda c: (cdiv(npix, c["BM"]) * cdiv(K, c["BN"]),),
            ref=ref, torch_fn=peer,
            extra=[("torch.compile", compiled)],
            flops=2 * npix * K * C * ks * ks,
            note="stdlib conv.blk conv2d_nhwc (implicit GEMM, both operands through cp.async rings, wgmma on "
                 "sm_90a; batchnorm folded to scale/shift and SiLU in the epilogue); torch: channels_last "
                 "cuDNN conv2d + batch_norm + silu, eager (torch.compile in extra); no Triton peer")
    out.append(conv_spec("conv3x3", 32, 56, 128, 128, 3, 1))
    out.append(conv_spec("conv1x1", 32, 56, 256, 256, 1, 0))

    # ---- sparse (stdlib sparse.blk): random patterns made once per row (seeded), values fresh per check
    def csr_pattern(T, n_rows, n_cols, nnz, cache):
        """nnz entries at uniformly random (row, col), sorted by row then column (repeats allowed:
        they add up); row lengths binomial. Returns (row_ptr, col_idx, row_of_each_entry)."""
        if not cache:
            g = T.Generator(device=DEVICE).manual_seed(1234)
            key = T.randint(0, n_rows * n_cols, (nnz,), device=DEVICE, generator=g).sort().values
            rows = key // n_cols
            rp = T.zeros(n_rows + 1, dtype=T.int64, device=DEVICE)
            rp[1:] = T.bincount(rows, minlength=n_rows).cumsum(0)
            cache += [rp.to(T.int32), (key % n_cols).to(T.int32), rows]
        return cache

    def spmv_spec():
        n = 1024 if small else 32768
        nnz = n * n // 100
        cache = []

        def ref(T, t):
            rp, col, rows = csr_pattern(T, n, n, nnz, cache)
            y = T.zeros(n, dtype=T.float64, device=DEVICE)
            return {"y": y.index_add_(0, rows, t.vals.double() * t.x.double()[col.long()])}

        def peer(T, t):
            a = T.sparse_csr_tensor(t.row_ptr, t.col_idx, t.vals, size=(n, n))
            return lambda: T.mv(a, t.x)
        return Spec(
            "spmv_csr", "SpMV CSR f32 (1%)", "%dx%d nnz %d" % (n, n, nnz), "f32",
            8 * nnz + 4 * (n + 1) + 8 * n,
            {"row_ptr": ((n + 1,), "i32", lambda T, shape, d: csr_pattern(T, n, n, nnz, cache)[0]),
             "col_idx": ((nnz,), "i32", lambda T, shape, d: csr_pattern(T, n, n, nnz, cache)[1]),
             "vals": ((nnz,), "f32", "randn"), "x": ((n,), "f32", "randn"), "y": ((n,), "f32", "out")}, ["y"],
            [("spmv", "spmv_csr", ["y", "row_ptr", "col_idx", "vals", "x", "n_rows"])],
            lambda t: (t.y, t.row_ptr, t.col_idx, t.vals, t.x, n), lambda c: (cdiv(n, c["BR"]),),
            ref=ref, torch_fn=peer,
            note="stdlib sparse.blk spmv_csr (BR rows x BNZ nonzeros per step); torch: sparse CSR mv (cuSPARSE); "
                 "GB/s counts vals, col_idx, row_ptr, x and y once")
    out.append(spmv_spec())

    def spmm_spec(dt):
        n, N = (1024, 64) if small else (16384, 256)
        nnz = n * n // 100
        cache = []

        def ref(T, t):
            rp, col, rows = csr_pattern(T, n, n, nnz, cache)
            c = T.zeros(n, N, dtype=T.float64, device=DEVICE)
            b, col = t.b.double(), col.long()
            for e in range(0, nnz, 1 << 18):  # [chunk, N] products in f64: 512 MB at a time
                c.index_add_(0, rows[e:e + (1 << 18)], t.vals[e:e + (1 << 18)].double()[:, None] * b[col[e:e + (1 << 18)]])
            return {"c": c}

        def peer(T, t):
            a = T.sparse_csr_tensor(t.row_ptr, t.col_idx, t.vals, size=(n, n))
            return lambda: T.matmul(a, t.b)
        es = 4 if dt == "f32" else 2
        return Spec(
            "spmm_csr" + ("" if dt == "f32" else "_bf16"), "SpMM CSR %s (1%%)" % dt,
            "%dx%d nnz %d x N %d" % (n, n, nnz, N), "f32", (4 + es) * nnz + 4 * (n + 1) + es * n * N + 4 * n * N,
            {"row_ptr": ((n + 1,), "i32", lambda T, shape, d: csr_pattern(T, n, n, nnz, cache)[0]),
             "col_idx": ((nnz,), "i32", lambda T, shape, d: csr_pattern(T, n, n, nnz, cache)[1]),
             "vals": ((nnz,), dt, "randn"), "b": ((n, N), dt, "randn"), "c": ((n, N), "f32", "out")}, ["c"],
            [("spmm" if dt == "f32" else "spmm_bf16", "spmm_csr" if dt == "f32" else "spmm_csr_bf16",
              ["c", "row_ptr", "col_idx", "vals", "b", "N"])],
            lambda t: (t.c, t.row_ptr, t.col_idx, t.vals, t.b, N), lambda c: (n, cdiv(N, c["BN"])),
            ref=ref, torch_fn=peer, flops=2 * nnz * N,
            note="stdlib sparse.blk %s (one row x BN columns per program, BNZ nonzeros per step); torch: sparse "
                 "CSR matmul (cuSPARSE SpMM%s)" % ("spmm_csr" if dt == "f32" else "spmm_csr_bf16",
                                                   "" if dt == "f32" else "; torch's output is bf16, blk's f32"))
    out.append(spmm_spec("f32"))
    out.append(spmm_spec("bf16"))

    def bsr_spec(BS, density):
        S = 512 if small else 8192
        nb = S // BS
        cache = []

        def pattern(T):
            if not cache:
                # nnzb distinct blocks at random, none in block row 1 (an empty block row), row-major order
                g = T.Generator(device=DEVICE).manual_seed(4321)
                cand = T.randperm(nb * nb, device=DEVICE, generator=g)
                cand = cand[cand // nb != 1]
                idx = cand[:nnzb].sort().values
                br, bc = idx // nb, idx % nb
                rp = T.zeros(nb + 1, dtype=T.int64, device=DEVICE)
                rp[1:] = T.bincount(br, minlength=nb).cumsum(0)
                cache.extend([rp.to(T.int32), bc.to(T.int32), br, bc])  # not +=: that makes cache local
            return cache
        nnzb = int(nb * nb * density)

        def dense_a(T, t):
            rp, bcol, br, bc = pattern(T)
            a = T.zeros(nb, nb, BS, BS, dtype=t.bvals.dtype, device=DEVICE)
            a[br, bc] = t.bvals
            return a.permute(0, 2, 1, 3).reshape(S, S)

        def ref(T, t):
            a = dense_a(T, t)
            return {"c": a.double() @ t.b.double()} if small else {"c": a.float() @ t.b.float()}

        def peer(T, t):
            a = dense_a(T, t)
            return lambda: T.matmul(a, t.b, out=t.c)

        def torch_bsr(T, t):
            a = dense_a(T, t).to_sparse_bsr((BS, BS))
            return lambda: T.matmul(a, t.b)
        return Spec(
            "bsr_matmul_bs%d" % BS, "BSR matmul bf16 (%d%% blocks)" % round(100 * density),
            "%d^3 BS %d" % (S, BS), "bf16", 2 * (nnzb * BS * BS + 2 * S * S),
            {"brow_ptr": ((nb + 1,), "i32", lambda T, shape, d: pattern(T)[0]),
             "bcol_idx": ((nnzb,), "i32", lambda T, shape, d: pattern(T)[1]),
             "bvals": ((nnzb, BS, BS), "bf16", lambda T, shape, d: T.randn(shape, device=DEVICE, dtype=d)),
             "b": ((S, S), "bf16", "randn"), "c": ((S, S), "bf16", "out")}, ["c"],
            [("bsr%d" % BS, "bsr_matmul", ["c", "brow_ptr", "bcol_idx", "bvals", "b", "M", "N", "K"])],
            lambda t: (t.c, t.brow_ptr, t.bcol_idx, t.bvals, t.b, S, S, S), lambda c: (nb, cdiv(S, c["BN"])),
            ref=ref, torch_fn=peer, extra=[("torch BSR matmul", torch_bsr)],
            flops=2 * nnzb * BS * BS * S,
            note="stdlib sparse.blk bsr_matmul (one [BS,BS]x[BS,BN] dot per stored block; blocks through a "
                 "cp.async ring, B's rows staged per iteration); torch: dense cuBLAS matmul of the same matrix "
                 "(zeros included); TFLOP/s counts the stored blocks' work only; block values fixed per row "
                 "(not refreshed between checks)")
    out.append(bsr_spec(32, 0.1))
    out.append(bsr_spec(64, 0.1))
    return out


def mm_family_specs(small):
    """matmul.blk's GEMM family and moe.blk's grouped GEMM against cuBLAS / torch eager."""
    out = []
    M, N, K = (256, 256, 128) if small else (8192, 8192, 4096)
    shape = "%dx%dx%d" % (M, N, K)
    mmargs = ["a", "b", "c", "M", "N", "K"]
    btargs = ["a", "bt", "c", "M", "N", "K"]

    def grid2(m, n):
        return lambda c: (cdiv(m, c["BM"]) * cdiv(n, c["BN"]),)

    out.append(Spec(
        "mm_f16", "matmul f16", shape, "bf16", 2 * (M * K + K * N + M * N),
        {"a": ((M, K), "f16", "randn"), "b": ((K, N), "f16", "randn"), "c": ((M, N), "f16", "out")}, ["c"],
        [("mm_f16", "matmul_f16", mmargs)], lambda t: (t.a, t.b, t.c, M, N, K), grid2(M, N),
        ref=lambda T, t: {"c": t.a.float() @ t.b.float()},
        torch_fn=lambda T, t: (lambda: T.matmul(t.a, t.b, out=t.c)),
        flops=2 * M * N * K, note="stdlib matmul.blk matmul_f16 (wgmma on sm_90a); torch: cuBLAS"))
    # f16 8192^3 (issue 9's f16 row): matmul_f16 and the persistent kernel in f16
    F = 256 if small else 8192
    out.append(Spec(
        "mm_f16_8192", "matmul f16", "%dx%dx%d" % (F, F, F), "bf16", 2 * 3 * F * F,
        {"a": ((F, F), "f16", "randn"), "b": ((F, F), "f16", "randn"), "c": ((F, F), "f16", "out")}, ["c"],
        [("mm_f16", "matmul_f16", mmargs),
         ("mm_persistent_f16", "matmul_persistent_f16", mmargs, lambda t: (t.a, t.b, t.c, F, F, F),
          lambda c: (c["_programs"],))],
        lambda t: (t.a, t.b, t.c, F, F, F), grid2(F, F),
        ref=lambda T, t: {"c": t.a.float() @ t.b.float()},
        torch_fn=lambda T, t: (lambda: T.matmul(t.a, t.b, out=t.c)),
        flops=2 * F * F * F, note="stdlib matmul.blk matmul_f16 or matmul_persistent_f16 (wgmma, TMA, warp-specialized "
                                  "on sm_90a); torch: cuBLAS"))

    def fp8_init(T, shape, d):
        return (T.randn(shape, device=DEVICE) * 0.5).to(d)

    def fp8_spec(row):
        sa, sb = ((M,), (N,)) if row else ((1,), (1,))

        def ref(T, t):
            return {"c": (t.a.float() @ t.bt.float().t()) * t.sa.view(-1, 1) * t.sb.view(1, -1)}

        def peer(T, t):
            a_s, b_s = (t.sa.view(-1, 1), t.sb.view(1, -1)) if row else (t.sa, t.sb)
            return lambda: T._scaled_mm(t.a, t.bt.t(), scale_a=a_s, scale_b=b_s, out_dtype=T.bfloat16)
        return Spec(
            "mm_fp8%s" % ("_rowscale" if row else ""), "matmul fp8 e4m3 %s" % ("row scales" if row else "tensor scale"),
            shape, "bf16", M * K + N * K + 2 * M * N,
            {"a": ((M, K), "f8e4m3", fp8_init), "bt": ((N, K), "f8e4m3", fp8_init),
             "sa": (sa, "f32", _uniform(0.5, 1.5)), "sb": (sb, "f32", _uniform(0.5, 1.5)),
             "c": ((M, N), "bf16", "out")}, ["c"],
            [("mm_fp8%s" % ("_row" if row else ""), "matmul_fp8",
              ["a", "bt", "c", "scale_a", "scale_b", "M", "N", "K"]),
             # persistent: as many programs as the GPU runs at once (as mm_persistent)
             ("mm_fp8p%s" % ("_row" if row else ""), "matmul_fp8_persistent",
              ["a", "bt", "c", "scale_a", "scale_b", "M", "N", "K"],
              lambda t: (t.a, t.bt, t.c, t.sa, t.sb, M, N, K), lambda c: (c["_programs"],))],
            lambda t: (t.a, t.bt, t.c, t.sa, t.sb, M, N, K), grid2(M, N),
            ref=ref, torch_fn=peer, flops=2 * M * N * K,
            note="stdlib matmul.blk matmul_fp8 (B stored [N, K]; sm_90a: wgmma m64nNk32 e4m3 from TMA rings "
                 "of raw bytes, each BK's sum added in f32; sm_80: mma.sync through f16), and matmul_fp8_persistent on "
                 "as many programs as the GPU runs at once; torch: _scaled_mm (cuBLASLt fp8)")
    out.append(fp8_spec(False))
    out.append(fp8_spec(True))

    def i8_init(T, shape, d):
        return T.randint(-128, 128, shape, device=DEVICE, dtype=d)
    out.append(Spec(
        "mm_i8", "matmul int8 -> i32", shape, "f32", M * K + N * K + 4 * M * N,
        {"a": ((M, K), "i8", i8_init), "bt": ((N, K), "i8", i8_init), "c": ((M, N), "i32", "out")}, ["c"],
        [("mm_i8", "matmul_i8", btargs)], lambda t: (t.a, t.bt, t.c, M, N, K), grid2(M, N),
        ref=lambda T, t: {"c": t.a.double() @ t.bt.double().t()},
        torch_fn=lambda T, t: (lambda: T._int_mm(t.a, t.bt.t())),
        flops=2 * M * N * K,
        note="stdlib matmul.blk matmul_i8 (B stored [N, K]; wgmma m64nNk32 s8 on sm_90a when BK is 128, else mma.sync m16n8k32); "
             "torch: _int_mm (cuBLASLt int8); TOP/s"))

    def epi_spec(act, name, note):
        # matmul_epilogue BIAS=true ACT=act (one kernel) against eager addmm + act (two); act as torch's
        # functional (silu, gelu: the erf form, torch's default and blk's)
        def ref(T, t):
            return {"c": getattr(T.nn.functional, act)(t.a.float() @ t.b.float() + t.bias.float())}
        return Spec(
            "mm_epilogue_" + act, "matmul bf16 + bias + " + name, shape, "bf16", 2 * (M * K + K * N + M * N + N),
            {"a": ((M, K), "bf16", "randn"), "b": ((K, N), "bf16", "randn"), "bias": ((N,), "bf16", "randn"),
             "c": ((M, N), "bf16", "out")}, ["c"],
            [("mm_epi_" + act, "matmul_epilogue", ["a", "b", "c", "bias", "res", "M", "N", "K"])],
            lambda t: (t.a, t.b, t.c, t.bias, None, M, N, K), grid2(M, N),
            ref=ref,
            torch_fn=lambda T, t: (lambda: getattr(T.nn.functional, act)(T.addmm(t.bias, t.a, t.b))),
            flops=2 * M * N * K, note=note)
    out.append(epi_spec("silu", "SiLU", "stdlib matmul.blk matmul_epilogue BIAS=true ACT=silu (one kernel); "
                        "torch: eager addmm + silu (two)"))
    out.append(epi_spec("gelu", "GELU", "stdlib matmul.blk matmul_epilogue BIAS=true ACT=gelu (one kernel; the erf "
                        "GELU); torch: eager addmm + gelu (two; the erf GELU, torch's default)"))

    out.append(Spec(
        "mm_persistent", "matmul bf16 persistent", shape, "bf16", 2 * (M * K + K * N + M * N),
        {"a": ((M, K), "bf16", "randn"), "b": ((K, N), "bf16", "randn"), "c": ((M, N), "bf16", "out")}, ["c"],
        [("mm_persistent", "matmul_persistent", mmargs)], lambda t: (t.a, t.b, t.c, M, N, K),
        lambda c: (c["_programs"],),
        ref=lambda T, t: {"c": t.a.float() @ t.b.float()},
        torch_fn=lambda T, t: (lambda: T.matmul(t.a, t.b, out=t.c)),
        flops=2 * M * N * K,
        note="stdlib matmul.blk matmul_persistent, as many programs as the GPU runs at once (blkrt_kernel_max_programs); torch: cuBLAS"))

    # linear backward: y = x W + b, x [Mt, Kin], W [Kin, Nout]
    Mt, Kin, Nout = (256, 128, 256) if small else (8192, 4096, 4096)
    lshape = "x %dx%d W %dx%d" % (Mt, Kin, Kin, Nout)
    ltensors = {"x": ((Mt, Kin), "bf16", "randn"), "w": ((Kin, Nout), "bf16", "randn"),
                "dy": ((Mt, Nout), "bf16", "randn")}

    def autograd(T, t):
        x = t.x.detach().requires_grad_()
        w = t.w.detach().requires_grad_()
        b = T.zeros(Nout, device=DEVICE, dtype=T.bfloat16, requires_grad=True)
        y = T.addmm(b, x, w)

        def f():
            x.grad = w.grad = b.grad = None
            y.backward(t.dy, retain_graph=True)
        return f
    out.append(Spec(
        "linear_bwd_dx", "linear bwd dx = dy W^T", lshape, "bf16", 2 * (Mt * Nout + Kin * Nout + Mt * Kin),
        dict(ltensors, dx=((Mt, Kin), "bf16", "out")), ["dx"],
        [("linear_bwd_dx", "linear_bwd_dx", ["dx", "dy", "w", "M", "N", "K"])],
        lambda t: (t.dx, t.dy, t.w, Mt, Nout, Kin), grid2(Mt, Kin),
        ref=lambda T, t: {"dx": t.dy.float() @ t.w.float().t()},
        torch_fn=lambda T, t: (lambda: T.matmul(t.dy, t.w.t(), out=t.dx)),
        extra=[("torch autograd dx+dW+db", autograd)],
        flops=2 * Mt * Nout * Kin,
        note="stdlib matmul.blk linear_bwd_dx (W through trans(): a K-major wgmma operand); torch: cuBLAS "
             "dy @ W.t(); the whole autograd backward (dx, dW, db) in extra"))
    out.append(Spec(
        "linear_bwd_dw", "linear bwd dW = x^T dy", lshape, "bf16", 2 * (Mt * Nout + Kin * Nout + Mt * Kin),
        dict(ltensors, dw=((Kin, Nout), "bf16", "out")), ["dw"],
        [("linear_bwd_dw", "linear_bwd_dw", ["dw", "x", "dy", "M", "N", "K"])],
        lambda t: (t.dw, t.x, t.dy, Mt, Nout, Kin), grid2(Kin, Nout),
        ref=lambda T, t: {"dw": t.x.float().t() @ t.dy.float()},
        torch_fn=lambda T, t: (lambda: T.matmul(t.x.t(), t.dy, out=t.dw)),
        extra=[("torch autograd dx+dW+db", autograd)],
        flops=2 * Mt * Nout * Kin,
        note="stdlib matmul.blk linear_bwd_dw (x^T through trans(): an M-major wgmma operand, "
             "transpose-a); torch: cuBLAS x.t() @ dy"))

    # MoE grouped GEMM: R sorted token rows over E experts, each expert's weight [N, K]
    R, E, GN, GK = (512, 4, 128, 128) if small else (32768, 8, 4096, 4096)

    def offsets_init(T, shape, d):
        g = T.Generator().manual_seed(0)
        base = R // E
        c = base + T.randint(-base // 8, base // 8 + 1, (E,), generator=g)
        c[-1] = R - int(c[:-1].sum())
        return T.cat((T.zeros(1, dtype=T.int64), T.cumsum(c, 0))).to(device=DEVICE, dtype=d)

    def grouped_ref(T, t):
        o = t.offsets.tolist()
        return {"out": T.cat([t.xs[o[e]:o[e + 1]].float() @ t.w[e].float().t() for e in range(E)])}

    def grouped_torch(T, t):
        if hasattr(T, "_grouped_mm"):
            return lambda: T._grouped_mm(t.xs, t.w.transpose(-2, -1), offs=t.offsets[1:])
        return grouped_loop(T, t)

    def grouped_loop(T, t):
        o = t.offsets.tolist()  # host copy outside the timed loop
        return lambda: [T.matmul(t.xs[o[e]:o[e + 1]], t.w[e].t(), out=t.out[o[e]:o[e + 1]]) for e in range(E)]

    def grouped_triton(T, P, t, nsm):
        o = t.offsets.tolist()  # the row-tile table, built on the host outside the timed loop

        def cfg(bm, bn, bk, nw, ns):
            tiles = [(e, m0, o[e + 1]) for e in range(E) for m0 in range(o[e], o[e + 1], bm)]
            te, tm, tend = (T.tensor([x[i] for x in tiles], device=DEVICE, dtype=T.int32) for i in range(3))
            nt = len(tiles)
            return ("BM=%d BN=%d BK=%d w%d s%d" % (bm, bn, bk, nw, ns),
                    lambda: P.grouped_mm_k[(nt * cdiv(GN, bn),)](
                        t.xs, t.w, t.out, te, tm, tend, nt, GN, GK, BM=bm, BN=bn, BK=bk, G=8,
                        num_warps=nw, num_stages=ns))
        return [cfg(*c) for c in [(128, 256, 64, 8, 3), (128, 128, 64, 8, 4), (128, 128, 64, 4, 4)]]
    out.append(Spec(
        "moe_grouped_gemm", "MoE grouped GEMM bf16", "R%d E%d N%d K%d" % (R, E, GN, GK), "bf16",
        2 * (R * GK + E * GN * GK + R * GN),
        {"xs": ((R, GK), "bf16", "randn"), "w": ((E, GN, GK), "bf16", "randn"),
         "offsets": ((E + 1,), "i32", offsets_init), "out": ((R, GN), "bf16", "out")}, ["out"],
        [("moe_grouped_gemm", "moe_grouped_gemm", ["out", "xs", "w", "offsets", "N", "K", "n_experts"])],
        lambda t: (t.out, t.xs, t.w, t.offsets, GN, GK, E), lambda c: (cdiv(R, c["BM"]) + E, cdiv(GN, c["BN"])),
        ref=grouped_ref, triton=grouped_triton, torch_fn=grouped_torch,
        extra=[("torch loop of matmul", grouped_loop)],
        flops=2 * R * GN * GK,
        note="stdlib moe.blk moe_grouped_gemm (one launch, tiles found from the offsets); Triton: a grouped GEMM "
             "in the tutorial matmul's form (one launch over a row-tile table built on the host from the "
             "offsets, untimed), 3 configs; torch: _grouped_mm where this torch has it, else a loop of matmul "
             "over the experts (also in extra)"))
    return out


# ---------------------------------------------------------------- PTX configurations

def ptx_configs(ptx_dir, key):
    """[(tag, path)] of DIR/KEY.*.ptx, in name order."""
    return [(os.path.basename(p)[:-4], p) for p in sorted(glob.glob(os.path.join(ptx_dir, key + ".*.ptx")))]


def read_manifest(ptx_dir):
    m = {}
    try:
        with open(os.path.join(ptx_dir, "manifest.txt")) as f:
            for line in f:
                k, _, v = line.strip().partition(" ")
                if k:
                    m[k] = v
    except OSError:
        pass
    return m


def ensure_libblkrt(ptx_dir, log):
    """Make `import blk` find a working libblkrt: $BLK_LIBBLKRT, DIR/libblkrt.so,
    else build one from runtime/*.c with cc (it needs only libc)."""
    import blk
    if not os.environ.get("BLK_LIBBLKRT") and ptx_dir and os.path.exists(os.path.join(ptx_dir, "libblkrt.so")):
        os.environ["BLK_LIBBLKRT"] = os.path.abspath(os.path.join(ptx_dir, "libblkrt.so"))
    try:
        blk.version()
        return blk
    except blk.Error as e:
        log("libblkrt: %s; building it with cc" % e)
    out = os.path.join("/tmp", "blk-bench-libblkrt")
    os.makedirs(out, exist_ok=True)
    srcs = [p for p in sorted(glob.glob(os.path.join(ROOT, "runtime", "*.c"))) if not p.endswith("/jit.c")]
    cmd = ["cc", "-O2", "-std=c11", "-D_XOPEN_SOURCE=700", "-fPIC", "-shared", "-I",
           os.path.join(ROOT, "runtime", "include"), "-I", os.path.join(ROOT, "runtime")] + srcs + [
        "-Wl,--version-script=" + os.path.join(ROOT, "runtime", "blkrt.map"), "-ldl", "-lpthread",
        "-o", os.path.join(out, "libblkrt.so")]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode:
        raise SystemExit("cannot build libblkrt.so:\n" + r.stderr)
    os.environ["BLK_LIBBLKRT"] = os.path.join(out, "libblkrt.so")
    blk.version()
    return blk


# ---------------------------------------------------------------- report

def fmt_us(ms):
    return "—" if ms is None else ("%.1f µs" % (ms * 1e3))


def fmt_cell(r):
    if r is None or r.get("ms") is None:
        return "—"
    s = fmt_us(r["ms"])
    if r.get("gbs"):
        s += " · %.0f GB/s" % r["gbs"]
    if r.get("tflops"):
        s += " · %.0f TFLOP/s" % r["tflops"]
    return s


def fmt_ratio(a, b):
    return "—" if not a or not b else "%.2f×" % (b / a)  # times: b/a = throughput ratio


def table(rows, ceiling_gbs):
    lines = ["| workload | shape | blk | triton | torch | blk/triton | blk/best peer | % of ceiling |",
             "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        b, tr, to = r.get("blk"), r.get("triton"), r.get("torch")
        bms = b.get("ms") if b else None
        peers = [x["ms"] for x in (tr, to) if x and x.get("ms")]
        best = min(peers) if peers else None
        if r.get("status") not in (None, "ok"):
            bcell = r["status"]
        else:
            bcell = fmt_cell(b)
        pct = "—"
        if b and b.get("gbs") and ceiling_gbs:
            pct = "%.0f%%" % (100.0 * b["gbs"] / ceiling_gbs)
        elif b and b.get("tflops") and r.get("ceiling_tflops"):
            pct = "%.0f%%" % (100.0 * b["tflops"] / r["ceiling_tflops"])
        lines.append("| %s | %s | %s | %s | %s | %s | %s | %s |" % (
            r["workload"], r["shape"], bcell, fmt_cell(tr), fmt_cell(to),
            fmt_ratio(bms, tr.get("ms") if tr else None), fmt_ratio(bms, best), pct))
    return "\n".join(lines)


def table_notes(rows, ceiling_gbs, extra):
    notes = ["Times: median of `triton.testing.do_bench` (L2 flushed between repetitions), µs; "
             "GB/s = bytes each kernel must move (inputs read once, outputs written once) / time. "
             "Ratios are throughput ratios (> 1: blk faster). "
             "%% of ceiling: blk GB/s over the measured copy ceiling (%s)." %
             ("%.0f GB/s" % ceiling_gbs if ceiling_gbs else "not measured")]
    for r in rows:
        b = r.get("blk") or {}
        bits = []
        if b.get("cfg"):
            bits.append("blk %s" % b["cfg"])
        if (r.get("triton") or {}).get("cfg"):
            bits.append("triton %s" % r["triton"]["cfg"])
        if r.get("failed_configs"):
            bits.append("FAILED blk configs: %s" % ", ".join(r["failed_configs"]))
        if r.get("note"):
            bits.append(r["note"])
        if bits:
            notes.append("- %s %s: %s" % (r["workload"], r["shape"], "; ".join(bits)))
    notes += extra
    return "\n".join(notes)


# ---------------------------------------------------------------- the GPU run

class Deadline(BaseException):
    """Time is up (budget or SIGTERM): stop starting work, report what is done."""


def gpu_meta(T, triton, blk, dev, ptx_dir, args):
    drv = dev.info.driver_version
    manifest = read_manifest(ptx_dir)
    try:
        smi = subprocess.run(["nvidia-smi", "--query-gpu=driver_version,clocks.max.sm,clocks.max.mem",
                              "--format=csv,noheader"], capture_output=True, text=True, timeout=20).stdout.strip()
    except Exception as e:  # noqa: BLE001
        smi = "unavailable (%s)" % type(e).__name__
    meta = {
        "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "device": dev.info.name, "sm_count": dev.info.sm_count, "arch": dev.info.arch,
        "driver": "%d.%d" % (drv // 1000, drv % 1000 // 10), "nvidia_smi": smi,
        "torch": T.__version__, "torch_cuda": T.version.cuda, "triton": triton.__version__,
        "python": sys.version.split()[0], "libblkrt": blk.version(), "libblkrt_path": blk.library_path(),
        "blk_commit": os.environ.get("BLK_COMMIT") or manifest.get("commit", "unknown"),
        "ptx_manifest": manifest, "warmup_ms": args.warmup, "rep_ms": args.rep, "tolerance": TOL,
    }
    try:
        with open(os.path.join(ptx_dir, "ptxas.txt")) as f:
            meta["ptxas_offline"] = f.read().splitlines()
    except OSError:
        pass
    return meta


def log(*a):
    print(*a, flush=True)


def worker(args):
    """Run the rows named by --worker (comma-separated keys, or 'matmul_ceiling')
    in this process; write each as <results>/<key>.json."""
    def on_term(signum, frame):
        raise Deadline("signal %d" % signum)
    signal.signal(signal.SIGTERM, on_term)
    os.environ.setdefault("TRITON_CACHE_DIR", "/tmp/blk-bench-triton-cache")
    if args.dry_run:
        os.environ["TRITON_INTERPRET"] = "1"
        use_fake_driver()
    import torch as T
    import triton
    from triton.testing import do_bench
    import peers_kernels as P
    blk = ensure_libblkrt(args.ptx_dir, log)
    dev = blk.Device(0)
    dry = args.dry_run
    if dry:  # CPU torch, Triton's interpreter, blk on the fake driver (outputs simulated)
        global DEVICE
        DEVICE = "cpu"
        nsm = 4
        T.cuda.synchronize = T.cuda.empty_cache = lambda: None
    else:
        nsm = T.cuda.get_device_properties(0).multi_processor_count
    meta = gpu_meta(T, triton, blk, dev, args.ptx_dir, args)
    keys = args.worker.split(",")
    os.makedirs(args.results, exist_ok=True)

    def bench(fn):
        if dry:
            t0 = time.perf_counter()
            for _ in range(3):
                fn()
            return (time.perf_counter() - t0) / 3 * 1e3
        return do_bench(fn, warmup=args.warmup, rep=args.rep, return_mode="median")

    def save(row):
        row["meta"] = meta
        tmp = os.path.join(args.results, row["key"] + ".json.tmp")
        with open(tmp, "w") as f:
            json.dump(row, f, indent=1)
        os.replace(tmp, os.path.join(args.results, row["key"] + ".json"))

    if "matmul_ceiling" in keys:
        S = 8192
        S = 256 if dry else S
        ma = T.randn(S, S, device=DEVICE, dtype=T.bfloat16)
        mb = T.randn(S, S, device=DEVICE, dtype=T.bfloat16)
        mc = T.empty_like(ma)
        ms = bench(lambda: T.matmul(ma, mb, out=mc))
        row = {"key": "matmul_ceiling", "ms": ms, "tflops": 2 * S ** 3 / ms / 1e9}
        log("      %-26s %-18s torch %-22s %10.1f us %7.0f TFLOP/s" % ("ceiling: cuBLAS bf16", "8192^3", "",
                                                                      ms * 1e3, row["tflops"]))
        save(row)
        del ma, mb, mc

    if "python_launch" in keys:
        # host time per launch from Python: the binding vs Triton vs torch (tiny kernels, queue never empty)
        row = {"key": "python_launch"}
        try:
            nl = 20 if dry else 5000
            x, y, o = (T.randn(1024, device=DEVICE) for _ in range(3))
            k = dev.load_ptx_file(ptx_configs(args.ptx_dir, "vector_add")[0][1]).kernel("vector_add")
            launch = k[1]
            xp, yp, op = x.data_ptr(), y.data_ptr(), o.data_ptr()
            cases = [("blk_us", lambda: launch(x, y, o, 1024)),
                     ("blk_int_pointers_us", lambda: launch(xp, yp, op, 1024)),
                     ("triton_us", lambda: P.add_k[(1,)](x, y, o, 1024, BLOCK=1024)),
                     ("torch_us", lambda: T.add(x, y, out=o))]
            for name, f in cases:
                for _ in range(min(nl, 200)):
                    f()
                T.cuda.synchronize()
                t0 = time.perf_counter()
                for _ in range(nl):
                    f()
                T.cuda.synchronize()
                row[name] = (time.perf_counter() - t0) / nl * 1e6
            log("      python host time per launch: blk %.2f us (int pointers %.2f), triton %.2f us, torch %.2f us"
                % (row["blk_us"], row["blk_int_pointers_us"], row["triton_us"], row["torch_us"]))
        except Exception as e:  # noqa: BLE001
            row["error"] = "%s: %s" % (type(e).__name__, str(e)[:300])
            log("ERROR python launch overhead: %s" % row["error"])
        save(row)

    tdt = {"f32": T.float32, "bf16": T.bfloat16, "f64": T.float64, "i32": T.int32, "f16": T.float16,
           "i8": T.int8, "f8e4m3": getattr(T, "float8_e4m3fn", None)}

    def make(spec):
        t = types.SimpleNamespace()
        for name, (shape, dt, init) in spec.tensors.items():
            d = tdt[dt]
            if init == "out":
                v = T.empty(shape, device=DEVICE, dtype=d)
            elif init == "randn":
                v = T.randn(shape, device=DEVICE, dtype=d)
            elif isinstance(init, tuple) and init[0] == "uniform":
                v = T.empty(shape, device=DEVICE, dtype=d).uniform_(init[1], init[2])
            else:
                v = init(T, shape, d)
            setattr(t, name, v)
        return t

    def refresh(spec, t):
        """Fresh random inputs (in place), poisoned outputs."""
        for name, (shape, dt, init) in spec.tensors.items():
            v = getattr(t, name)
            if init == "out":
                v.fill_(float("nan") if v.is_floating_point() else -(1 << 31))  # integers: a value no row gives
            elif init == "randn":
                v.normal_()
            elif isinstance(init, tuple) and init[0] == "uniform":
                v.uniform_(init[1], init[2])

    def check(spec, t, fn):
        """Run fn on fresh inputs into poisoned outputs: (ok, worst rel err, message)."""
        refresh(spec, t)
        if spec.prepare:
            spec.prepare(T, t)
        fn()
        T.cuda.synchronize()
        refs = spec.ref(T, t)
        worst, msgs = 0.0, []
        for name in spec.outputs:
            o, r = getattr(t, name), refs[name]
            if o.shape != r.shape:
                r = r.reshape(o.shape)
            nan = int(T.isnan(o).sum().item())
            rd = r.double()
            err = ((o.double() - rd).norm() / rd.norm()).item()
            worst = err if math.isnan(err) else max(worst, err)
            if nan:
                msgs.append("%s: %d NaN / unwritten elements" % (name, nan))
            if not (err < TOL[spec.tol]):
                msgs.append("%s: rel err %.3g >= %g" % (name, err, TOL[spec.tol]))
        return not msgs, worst, "; ".join(msgs)

    def peer_err(spec, t, fn):
        """The peer's own error against the row's reference, measured as blk's (norm of the difference over
        the reference's), where its call returns one tensor the shape of the row's first output; else None."""
        try:
            o = fn()
            r = spec.ref(T, t)[spec.outputs[0]]
            if not T.is_tensor(o) or o.numel() != r.numel():
                return None
            rd = r.double().reshape(-1)
            return ((o.double().reshape(-1) - rd).norm() / rd.norm()).item()
        except Exception:  # noqa: BLE001 (the peer's error is a note, never a failure)
            return None

    def result(spec, ms, **kw):
        d = {"ms": ms, "us": ms * 1e3, "gbs": spec.nbytes / ms / 1e6}
        if spec.flops:
            d["tflops"] = spec.flops / ms / 1e9
        d.update(kw)
        return d

    for spec in specs(small=dry):
        if spec.key not in keys:
            continue
        row = {"key": spec.key, "workload": spec.workload, "shape": spec.shape, "bytes": spec.nbytes,
               "tol": TOL[spec.tol], "note": spec.note, "status": "ok", "blk_configs": {}, "failed_configs": []}
        t0 = time.monotonic()
        try:
            t = make(spec)
            if spec.prepare:
                spec.prepare(T, t)
            stages = {"pre": [], "post": []}  # the pipeline's other kernels: [(launch, args)]
            for where in stages:
                for skey, skname, spnames, sargs, sgrid in getattr(spec, where):
                    sk = dev.load_ptx_file(ptx_configs(args.ptx_dir, skey)[0][1]).kernel(skname)
                    if [p.name for p in sk.params] != spnames:
                        raise RuntimeError("kernel signature changed: %s, bench expects %s" % (
                            [p.name for p in sk.params], spnames))
                    stages[where].append((sk[sgrid(sk.consts)], sargs(t)))
            # ---- blk: every configuration, checked then timed
            best = None
            for key, kname, pnames, eargs, egrid in blk_entries(spec):
                for tag, path in ptx_configs(args.ptx_dir, key):
                    c = row["blk_configs"][tag] = {"kernel": kname}
                    try:
                        tl0 = time.monotonic()
                        mod = dev.load_ptx_file(path)
                        k = mod.kernel(kname)
                        c["load_ms"] = (time.monotonic() - tl0) * 1e3
                        c["consts"] = dict(k.consts)
                        c["num_warps"] = k.num_warps
                        c["jit_log"] = [ln for ln in mod.jit_log.splitlines() if "Used" in ln or "spill" in ln]
                        got = [p.name for p in k.params]
                        if got != pnames:
                            raise RuntimeError("kernel signature changed: %s, bench expects %s" % (got, pnames))
                        a = eargs(t)
                        launch = k[egrid(grid_consts(k, a))]
                        def fn(launch=launch, a=a):
                            for sl, sa in stages["pre"]:
                                sl(*sa)
                            launch(*a)
                            for sl, sa in stages["post"]:
                                sl(*sa)
                        if not stages["pre"] and not stages["post"]:
                            fn = (lambda launch=launch, a=a: launch(*a))
                        if dry and "w16" not in tag:  # the fake driver runs nothing: pretend (w16: a FAIL)
                            def fn(run=fn, spec=spec, t=t):
                                run()
                                for name, r in spec.ref(T, t).items():
                                    getattr(t, name).copy_(r.reshape(getattr(t, name).shape))
                        ok, err, msg = check(spec, t, fn)
                        c["rel_err"] = err
                        if not ok:
                            c["status"] = "FAIL"
                            c["error"] = msg
                            row["failed_configs"].append(tag)
                            log("FAIL  %-26s %-18s blk %-24s %s" % (spec.workload, spec.shape, tag, msg))
                            if args.time_failed:  # an ablation (say, the epilogue removed): timed, never the row's
                                c.update(result(spec, bench(fn)))
                                log("      %-26s %-18s blk %-24s %10.1f us (failed the check)" % (
                                    spec.workload, spec.shape, tag, c["us"]))
                            continue
                        ms = bench(fn)
                        c.update(result(spec, ms))
                        c["status"] = "ok"
                        log("      %-26s %-18s blk %-24s %10.1f us %7.0f GB/s  err %.1e" % (
                            spec.workload, spec.shape, tag, ms * 1e3, c["gbs"], err))
                        if best is None or ms < best[0]:
                            best = (ms, tag, err)
                    except Exception as e:  # noqa: BLE001
                        c["status"] = "FAIL"
                        c["error"] = "%s: %s" % (type(e).__name__, e)
                        row["failed_configs"].append(tag)
                        log("FAIL  %-26s %-18s blk %-24s %s" % (spec.workload, spec.shape, tag, c["error"]))
                        if "CUDA" in str(e) and "illegal" in str(e).lower():
                            raise  # the context is gone: nothing else in this process can run
            if best:
                row["blk"] = result(spec, best[0], cfg=best[1], rel_err=best[2])
            else:
                row["status"] = "FAIL" if row["blk_configs"] else "no PTX"
            save(row)
            # ---- Triton peer: checked (reported), timed; the fastest configuration
            if spec.triton:
                tbest = None
                row["triton_configs"] = {}
                for label, fn in spec.triton(T, P, t, nsm):
                    tc = row["triton_configs"][label] = {}
                    try:
                        ok, err, msg = check(spec, t, fn)
                        tc["rel_err"] = err
                        if not ok:
                            tc["status"] = "FAIL"
                            tc["error"] = msg
                            log("FAIL  %-26s %-18s triton %-21s %s" % (spec.workload, spec.shape, label, msg))
                            continue
                        ms = bench(fn)
                        tc.update(result(spec, ms))
                        log("      %-26s %-18s triton %-21s %10.1f us %7.0f GB/s" % (
                            spec.workload, spec.shape, label, ms * 1e3, tc["gbs"]))
                        if tbest is None or ms < tbest[0]:
                            tbest = (ms, label)
                    except Exception as e:  # noqa: BLE001
                        tc["status"] = "ERROR"
                        tc["error"] = "%s: %s" % (type(e).__name__, str(e)[:300])
                        log("ERROR %-26s %-18s triton %-21s %s" % (spec.workload, spec.shape, label, tc["error"]))
                if tbest:
                    row["triton"] = result(spec, tbest[0], cfg=tbest[1])
                save(row)
            # ---- PyTorch
            if spec.torch_fn:
                try:
                    fn = spec.torch_fn(T, t)
                    ms = bench(fn)
                    row["torch"] = result(spec, ms)
                    err = peer_err(spec, t, fn)
                    if err is not None:
                        row["torch"]["rel_err"] = err
                    log("      %-26s %-18s torch %-22s %10.1f us %7.0f GB/s  err %s" % (
                        spec.workload, spec.shape, "", ms * 1e3, row["torch"]["gbs"],
                        "-" if err is None else "%.1e" % err))
                except Exception as e:  # noqa: BLE001
                    row["torch_error"] = "%s: %s" % (type(e).__name__, str(e)[:300])
                    log("ERROR %-26s %-18s torch: %s" % (spec.workload, spec.shape, row["torch_error"]))
            # ---- more peers (e.g. SDPA's cuDNN backend beside its flash backend)
            for label, factory in spec.extra:
                try:
                    ms = bench(factory(T, t))  # a reference library, timed like torch (not checked)
                    row.setdefault("extra", {})[label] = result(spec, ms)
                    log("      %-26s %-18s %-28s %10.1f us %7.1f TFLOP/s" % (
                        spec.workload, spec.shape, label, ms * 1e3, row["extra"][label].get("tflops") or 0))
                except Exception as e:  # noqa: BLE001
                    row.setdefault("extra", {})[label] = {"status": "ERROR", "error": "%s: %s" % (type(e).__name__, str(e)[:200])}
                    log("ERROR %-26s %-18s %s: %s" % (spec.workload, spec.shape, label, row["extra"][label]["error"]))
        except Deadline as e:
            row["stopped"] = str(e)
            save(row)
            raise
        except Exception as e:  # noqa: BLE001
            row["status"] = "ERROR"
            row["error"] = "%s: %s" % (type(e).__name__, str(e)[:500])
            log("ERROR %s %s: %s" % (spec.workload, spec.shape, row["error"]))
            save(row)
            return 1
        row["elapsed_s"] = time.monotonic() - t0
        save(row)
        del t
        T.cuda.synchronize()
        T.cuda.empty_cache()
    return 0


def select_keys(rows_regex):
    """The rows a run does: those whose key the --rows regex finds, else all
    but the sweep_ rows; then the matmul ceiling and the Python launch cost."""
    only = re.compile(rows_regex) if rows_regex else None
    keys = [s.key for s in specs() if (only.search(s.key) if only else not s.key.startswith("sweep_"))]
    return keys + [k for k in ("matmul_ceiling", "python_launch") if not only or only.search(k)]


def run_gpu(args):
    """The parent: one worker process per row (a crashed or hung kernel costs
    its row only; Triton's cache is shared), then the report."""
    t_start = time.monotonic()
    out_dir = args.out or os.environ.get("OUT") or "."
    os.makedirs(out_dir, exist_ok=True)
    results = args.results or os.path.join("/tmp", "blk-bench-rows-%d" % os.getpid())
    os.makedirs(results, exist_ok=True)
    keys = select_keys(args.rows)
    host = {}
    rows, extra_notes, meta = [], [], {}
    ceiling = {"copy_gbs": None, "matmul_tflops": None}
    child = [None]

    def on_term(signum, frame):
        raise Deadline("signal %d" % signum)
    signal.signal(signal.SIGTERM, on_term)

    def save():
        with open(os.path.join(out_dir, "bench.json"), "w") as f:
            json.dump({"meta": meta, "ceiling": ceiling, "rows": rows, "host": host, "notes": extra_notes,
                       "elapsed_s": time.monotonic() - t_start}, f, indent=1)

    log("# blk benchmark: %d rows, budget %d s, results in %s" % (len(keys), args.budget, out_dir))
    key = None
    try:
        for key in keys:
            left = args.budget - (time.monotonic() - t_start)
            if left < 10:
                raise Deadline("time budget of %d s used" % args.budget)
            cmd = [sys.executable, os.path.abspath(__file__), "--ptx-dir", args.ptx_dir, "--worker", key,
                   "--results", results, "--warmup", str(args.warmup), "--rep", str(args.rep)]
            if args.dry_run:
                cmd.append("--dry-run")
            if args.time_failed:
                cmd.append("--time-failed")
            rc = None
            try:
                child[0] = subprocess.Popen(cmd)
                rc = child[0].wait(timeout=min(left, args.row_timeout))
            except subprocess.TimeoutExpired:
                child[0].kill()
                child[0].wait()
                log("TIMEOUT %s after %d s" % (key, min(left, args.row_timeout)))
            child[0] = None
            path = os.path.join(results, key + ".json")
            row = None
            if os.path.exists(path):
                with open(path) as f:
                    row = json.load(f)
                meta = row.pop("meta", meta) or meta
            if key == "matmul_ceiling":
                if row:
                    ceiling["matmul_tflops"], ceiling["matmul_ms"] = row["tflops"], row["ms"]
                continue
            if key == "python_launch":
                host.update(row or {"error": "no result (rc %s)" % rc})
                continue
            spec = next(s for s in specs() if s.key == key)
            if row is None:
                row = {"key": key, "workload": spec.workload, "shape": spec.shape, "note": spec.note}
            if rc != 0 and row.get("status", "ok") == "ok":
                what = "TIMEOUT" if rc is None else "CRASH (rc %s)" % rc
                if row.get("blk"):  # blk is measured; a peer's part is missing
                    row["note"] = ("%s; " % row["note"] if row.get("note") else "") + "peers incomplete: " + what
                else:
                    row["status"] = what
                    log("%s %s %s: the worker ended without a blk result" % (what, spec.workload, spec.shape))
            rows.append(row)
            if key == "copy" and row.get("torch"):
                ceiling["copy_gbs"] = row["torch"]["gbs"]
            save()
    except (Deadline, KeyboardInterrupt) as e:
        if child[0] is not None:
            child[0].kill()
            child[0].wait()
            # the row in progress, as far as its worker got
            path = os.path.join(results, key + ".json")
            if key not in ("matmul_ceiling", "python_launch") and os.path.exists(path) and \
                    not any(r.get("key") == key for r in rows):
                try:
                    with open(path) as f:
                        row = json.load(f)
                    meta = row.pop("meta", meta) or meta
                    row["note"] = ("%s; " % row["note"] if row.get("note") else "") + "incomplete: stopped"
                    if not row.get("blk") and row.get("status") == "ok":
                        row["status"] = "STOPPED"
                    rows.append(row)
                except (OSError, ValueError):
                    pass
        extra_notes.append("- STOPPED EARLY (%s): rows not listed were not run." % (e or type(e).__name__))
        log("# stopped early: %s" % (e or type(e).__name__))
    save()
    if ceiling.get("matmul_tflops"):
        extra_notes.append("- Matmul ceiling: cuBLAS bf16 8192³ %.0f TFLOP/s (%.1f µs)." % (
            ceiling["matmul_tflops"], ceiling["matmul_ms"] * 1e3))
    if host.get("blk_us"):
        extra_notes.append("- Python host time per launch (5000 launches of a 1024-element vector add): blk binding "
                           "%.2f µs (int pointers %.2f µs), Triton %.2f µs, torch.add %.2f µs." % (
                               host["blk_us"], host["blk_int_pointers_us"], host["triton_us"], host["torch_us"]))
    if meta:
        extra_notes.append("- %s; driver %s; torch %s (CUDA %s); triton %s; blk %s; %s; %.0f s." % (
            meta.get("device"), meta.get("driver"), meta.get("torch"), meta.get("torch_cuda"), meta.get("triton"),
            meta.get("blk_commit"), meta.get("date"), time.monotonic() - t_start))
    save()
    md = table(rows, ceiling["copy_gbs"]) + "\n\n" + table_notes(rows, ceiling["copy_gbs"], extra_notes)
    with open(os.path.join(out_dir, "bench.md"), "w") as f:
        f.write(md + "\n")
    try:
        plot([r for r in rows if not r.get("key", "").startswith("sweep_")], ceiling["copy_gbs"],
             os.path.join(out_dir, "bench.png"), meta)
        plot_sweeps(rows, out_dir, meta, ceiling["copy_gbs"])
    except Exception as e:  # noqa: BLE001
        log("# plot skipped: %s: %s" % (type(e).__name__, e))
    print()
    print(md, flush=True)
    return 0


def plot(rows, ceiling_gbs, path, meta):
    """Two panels: memory-bound rows in GB/s (with the copy ceiling) and
    compute-bound rows (those that state their flops) in TFLOP/s; the legend
    sits above the panels, clear of the bars."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    rs = [r for r in rows if any(r.get(s) for s in ("blk", "triton", "torch"))]
    if not rs:
        return
    compute = [r for r in rs if any((r.get(s) or {}).get("tflops") for s in ("blk", "triton", "torch"))]
    memory = [r for r in rs if r not in compute]
    panels = [(g, unit) for g, unit in ((memory, "gbs"), (compute, "tflops")) if g]
    fig, axes = plt.subplots(1, len(panels), figsize=(max(8, 1.0 * len(rs) + 2), 5),
                             gridspec_kw={"width_ratios": [len(g) for g, _ in panels]}, squeeze=False)
    w = 0.27
    for ax, (group, unit) in zip(axes[0], panels):
        for i, (sysname, color) in enumerate((("blk", "#1f77b4"), ("triton", "#ff7f0e"), ("torch", "#2ca02c"))):
            xs = [j + (i - 1) * w for j in range(len(group))]
            ys = [(r.get(sysname) or {}).get(unit) or 0 for r in group]
            ax.bar(xs, ys, w, label=sysname, color=color)
        if unit == "gbs" and ceiling_gbs:
            ax.axhline(ceiling_gbs, color="gray", ls="--", lw=1, label="copy ceiling")
        ax.set_xticks(range(len(group)))
        ax.set_xticklabels(["%s\n%s" % (r["workload"], r["shape"]) for r in group], fontsize=7, rotation=30,
                           ha="right")
        ax.set_ylabel("GB/s" if unit == "gbs" else "TFLOP/s")
        ax.set_title("memory-bound" if unit == "gbs" else "compute-bound", fontsize=9)
    handles, labels = [], []
    for ax in axes[0]:
        for h, l in zip(*ax.get_legend_handles_labels()):
            if l not in labels:
                handles.append(h)
                labels.append(l)
    fig.suptitle("blk, Triton and PyTorch on %s (%s)" % (meta["device"], meta["date"][:10]), fontsize=10)
    fig.legend(handles, labels, loc="upper center", bbox_to_anchor=(0.5, 0.94), ncol=len(labels), fontsize=8,
               frameon=False)
    fig.tight_layout(rect=(0, 0, 1, 0.88))
    fig.savefig(path, dpi=110)


SWEEP_SYSTEMS = [("blk", lambda r: r.get("blk")), ("triton", lambda r: r.get("triton")),
                 ("torch", lambda r: r.get("torch"))]


def sweep_families(rows):
    """{family: (unit, [(size, row)] by size, [(line label, row -> result)])}
    of the sweep_ rows: sweep_matmul_S (M = N = K = S), sweep_llmNxK_mM (M
    tokens through an N x K projection), sweep_attn_nN (sequence length N,
    batch 16384 / N, 32 heads, D 128; sweep_attn64_nN and sweep_attn256_nN:
    the families attn64 and attn256, D 64 and 256), sweep_softmax_nN (f32,
    4096 rows of N columns). The unit is "tflops" where the rows state flops, else "gbs"
    (memory-bound: softmax)."""
    fams = {}
    for r in rows:
        m = re.match(r"sweep_(\w+?)_?n?(\d+)$", r.get("key", ""))
        if m:
            fams.setdefault(m.group(1), []).append((int(m.group(2)), r))
    out = {}
    for fam, pts in fams.items():
        pts.sort(key=lambda p: p[0])
        extras = sorted({k for _, r in pts for k in (r.get("extra") or {})})
        lines = SWEEP_SYSTEMS + [(k, (lambda k: lambda r: (r.get("extra") or {}).get(k))(k)) for k in extras]
        unit = "tflops" if any((get(r) or {}).get("tflops") for _, r in pts for _, get in lines) else "gbs"
        out[fam] = (unit, pts, lines)
    return out


def plot_sweeps(rows, out_dir, meta, ceiling_gbs=None):
    """Like Triton's perf_report: throughput against the problem size, a line
    per system, for each family of sweep_families(rows); GB/s families get the
    copy ceiling when the copy row ran too. Writes OUT/sweep_<family>.png and
    returns their paths."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    paths = []
    for fam, (unit, pts, lines) in sweep_families(rows).items():
        fig, ax = plt.subplots(figsize=(6, 4))
        for name, get in lines:
            xy = [(x, (get(r) or {}).get(unit)) for x, r in pts]
            xy = [(x, y) for x, y in xy if y]
            if xy:
                ax.plot([x for x, _ in xy], [y for _, y in xy], marker="o", label=name)
        if unit == "gbs" and ceiling_gbs:
            ax.axhline(ceiling_gbs, color="gray", ls="--", lw=1, label="copy ceiling")
        ax.set_xscale("log", base=2)
        ax.set_xticks([x for x, _ in pts])
        # 12288 next to 16384 on a log axis: "12k" and "16k" fit where five digits overlap
        ax.set_xticklabels(["%dk" % (x // 1024) if x >= 1024 and x % 1024 == 0 else str(x) for x, _ in pts])
        llm = re.match(r"llm(\d+)x(\d+)_m$", fam)
        attn_d = re.match(r"attn(\d+)$", fam)  # attn64, attn256; plain attn is D 128
        ax.set_xlabel("M = N = K" if fam == "matmul" else "M (tokens)" if llm else
                      "N (columns per row)" if fam == "softmax" else
                      "sequence length (batch 16384 / N, 32 heads, D %s)" % (attn_d.group(1) if attn_d else 128))
        ax.set_ylabel("TFLOP/s" if unit == "tflops" else "GB/s (input read once, output written once)")
        ax.set_ylim(bottom=0)
        ax.grid(alpha=0.3)
        what = ("matmul bf16" if fam == "matmul" else "matmul bf16 N=%s K=%s" % llm.groups() if llm else
                "softmax f32, 4096 rows of N" if fam == "softmax" else "attention forward bf16")
        ax.set_title("%s on %s (%s)" % (what, meta.get("device"), meta.get("date", "")[:10]), fontsize=9)
        ax.legend(fontsize=8)
        fig.tight_layout()
        paths.append(os.path.join(out_dir, "sweep_%s.png" % fam))
        fig.savefig(paths[-1], dpi=110)
        plt.close(fig)
    return paths


# ---------------------------------------------------------------- self-test (no torch, fake driver)

class FakeDtype:
    def __init__(self, name):
        self.name = name

    def __str__(self):
        return "torch." + self.name

    __repr__ = __str__


FAKE_DT = {"f32": FakeDtype("float32"), "bf16": FakeDtype("bfloat16"), "f64": FakeDtype("float64"),
           "i32": FakeDtype("int32"), "f16": FakeDtype("float16"), "i8": FakeDtype("int8"),
           "f8e4m3": FakeDtype("float8_e4m3fn")}


class FakeTensor:
    """What the binding sees of a torch tensor: data_ptr() and dtype."""
    _next = 0x7f0000000000

    def __init__(self, shape, dt):
        self.shape, self.dtype = shape, FAKE_DT[dt]
        self._ptr = FakeTensor._next
        FakeTensor._next += 1 << 32  # 16-byte (in fact 4 GiB) aligned, distinct

    def data_ptr(self):
        return self._ptr


def use_fake_driver():
    """Point libblkrt at the fake driver of tests/runtime (for --self-test, --dry-run)."""
    if not os.environ.get("BLKRT_CUDA_LIBRARY"):
        cands = [os.path.join(ROOT, "build-py", "tests", "runtime", "libfake_cuda.so")] + sorted(
            glob.glob(os.path.join(ROOT, "build*", "tests", "runtime", "libfake_cuda.so")))
        for c in cands:
            if os.path.exists(c):
                os.environ["BLKRT_CUDA_LIBRARY"] = c
                break
        else:
            raise SystemExit("no fake driver (build target fake_cuda or set BLKRT_CUDA_LIBRARY)")


def self_test(args):
    failures = []

    def fail(msg):
        failures.append(msg)
        print("FAIL", msg, flush=True)

    use_fake_driver()
    import ctypes
    blk = ensure_libblkrt(args.ptx_dir, print)
    fake = ctypes.CDLL(os.environ["BLKRT_CUDA_LIBRARY"])
    fake.fake_launch_count.restype = ctypes.c_int
    print("self-test: libblkrt %s (%s), fake driver %s" % (blk.version(), blk.library_path(),
                                                           os.environ["BLKRT_CUDA_LIBRARY"]))
    dev = blk.Device(0)
    nconf = 0
    for spec in specs():
        t = types.SimpleNamespace(**{n: FakeTensor(shape, dt) for n, (shape, dt, init) in spec.tensors.items()})
        for o in spec.outputs:
            if spec.tensors[o][2] != "out":
                fail("%s: output %s is not declared 'out'" % (spec.key, o))
        if spec.ref is None:
            fail("%s: no reference" % spec.key)
        found = 0
        for key, kname, pnames, eargs, egrid in blk_entries(spec):
            for tag, path in ptx_configs(args.ptx_dir, key):
                found += 1
                nconf += 1
                try:
                    k = dev.load_ptx_file(path).kernel(kname)
                    got = [p.name for p in k.params]
                    if got != pnames:
                        fail("%s: %s params %s, bench expects %s" % (spec.key, tag, got, pnames))
                        continue
                    grid = egrid(grid_consts(k, eargs(t)))
                    before = fake.fake_launch_count()
                    k[grid](*eargs(t))
                    for skey, skname, spnames, sargs, sgrid in spec.pre + spec.post:
                        sk = dev.load_ptx_file(ptx_configs(args.ptx_dir, skey)[0][1]).kernel(skname)
                        if [p.name for p in sk.params] != spnames:
                            fail("%s: %s params %s, bench expects %s" % (spec.key, skey, [p.name for p in sk.params], spnames))
                        sk[sgrid(sk.consts)](*sargs(t))
                    if fake.fake_launch_count() != before + 1 + len(spec.pre) + len(spec.post):
                        fail("%s: %s: the fake driver saw no launch" % (spec.key, tag))
                    print("ok   %-16s %-24s grid=%-18s %s" % (spec.key, tag, grid, k.consts))
                except blk.Error as e:
                    fail("%s: %s: %s" % (spec.key, tag, e))
        if not found:
            fail("%s: no PTX for %s in %s" % (spec.key, [b[0] for b in spec.blk], args.ptx_dir))
    # the binding refuses a tensor of the wrong dtype (the harness relies on it)
    try:
        k = dev.load_ptx_file(ptx_configs(args.ptx_dir, "vector_add")[0][1]).kernel("vector_add")
        k[1](FakeTensor((4,), "bf16"), FakeTensor((4,), "f32"), FakeTensor((4,), "f32"), 4)
        fail("a bf16 tensor passed for *f32")
    except (blk.Error, IndexError) as e:
        print("ok   dtype check:", e)
    # the peer kernels copied from peers.py are verbatim
    peers_py = os.path.join(ROOT, "..", "shared", "bench", "peers.py")
    if os.path.exists(peers_py):
        src = open(peers_py).read()
        mine = open(os.path.join(HERE, "peers_kernels.py")).read()
        for name in ("add_k", "silu_fma_k", "softmax_k", "ln_k"):
            m = re.search(r"@triton\.jit\ndef %s\(.*?\n(?=\S)" % name, src, re.S)
            if not m:
                fail("peers.py has no %s" % name)
            elif m.group(0).rstrip() not in mine:
                fail("peers_kernels.py: %s differs from peers.py" % name)
            else:
                print("ok   peer %s verbatim" % name)
    else:
        print("skip peers.py comparison (%s not found)" % peers_py)
    # sweeps: --rows sweep_ runs every sweep_ row (and nothing else of the table), a plain run none;
    # each family is drawn in the right unit (rows with made-up numbers, only to exercise the code)
    all_keys = [s.key for s in specs()]
    sweeps = sorted(k for k in all_keys if k.startswith("sweep_"))
    if sorted(k for k in select_keys("sweep_") if k.startswith("sweep_")) != sweeps or \
            [k for k in select_keys("sweep_") if not k.startswith("sweep_")]:
        fail("--rows sweep_ selects %s" % select_keys("sweep_"))
    if [k for k in select_keys(None) if k.startswith("sweep_")] or len(set(all_keys)) != len(all_keys):
        fail("a plain run selects sweep_ rows, or two rows share a key")
    fake_rows = [{"key": s.key, "blk": {"gbs": 1.0, "tflops": 1.0 if s.flops else None}}
                 for s in specs() if s.key.startswith("sweep_")]
    fams = sweep_families(fake_rows)
    want = {"matmul": ("tflops", [512, 1024, 2048, 4096, 8192, 16384]),
            "attn": ("tflops", [1024, 2048, 4096, 8192, 16384]),
            "attn64": ("tflops", [512, 1024, 2048, 4096, 8192, 16384]),
            "attn256": ("tflops", [512, 1024, 2048, 4096, 8192, 16384]),
            "softmax": ("gbs", [256, 512, 1024, 2048, 4096, 8192, 12288, 16384])}
    for fam, (unit, sizes) in want.items():
        got = fams.get(fam)
        if not got or got[0] != unit or [x for x, _ in got[1]] != sizes:
            fail("sweep family %s: %s, want %s %s" % (fam, got and (got[0], [x for x, _ in got[1]]), unit, sizes))
        else:
            print("ok   sweep %-8s %-6s %s" % (fam, unit, sizes))
    try:
        import matplotlib  # noqa: F401
        import tempfile
        with tempfile.TemporaryDirectory() as tmp:
            paths = plot_sweeps(fake_rows, tmp, {"device": "self-test", "date": "2026-01-01"}, 1000.0)
            drawn = sorted(os.path.basename(p) for p in paths if os.path.getsize(p) > 0)
            if "sweep_softmax.png" not in drawn or len(drawn) != len(fams):
                fail("plot_sweeps drew %s of %s" % (drawn, sorted(fams)))
            else:
                print("ok   plot_sweeps drew %d plots" % len(drawn))
    except ImportError:
        print("skip plot_sweeps (no matplotlib here)")
    # table and notes render; JSON serialises
    rows = [{"workload": "vector add f32", "shape": "2^28", "status": "ok", "note": "n",
             "blk": {"ms": 0.75, "gbs": 4300.0, "cfg": "vector_add.b1k_w4"},
             "triton": {"ms": 0.74, "gbs": 4350.0, "cfg": "BLOCK=1024"}, "torch": {"ms": 0.76, "gbs": 4240.0}},
            {"workload": "softmax f32", "shape": "4096x12345", "status": "FAIL", "failed_configs": ["x"],
             "triton": {"ms": 0.2, "gbs": 4000.0}}]
    md = table(rows, 4250.0) + "\n\n" + table_notes(rows, 4250.0, ["- extra"])
    json.dumps(rows)
    print(md)
    if "0.99×" not in md or "101%" not in md:
        fail("table arithmetic")
    print("self-test: %d configurations, %d failures" % (nconf, len(failures)))
    return 1 if failures else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ptx-dir", required=True, help="PTX files from tests/bench/build_ptx.sh (and libblkrt.so)")
    ap.add_argument("--out", help="where bench.json/md/png go (default $OUT, else .)")
    ap.add_argument("--rows", help="regex: only rows whose key matches (vector_add, softmax_4096x12345, ...)")
    ap.add_argument("--warmup", type=int, default=25, help="do_bench warm-up, ms (default 25)")
    ap.add_argument("--rep", type=int, default=200, help="do_bench repetition time, ms (default 200)")
    ap.add_argument("--budget", type=int, default=450, help="stop starting new work after this many s (default 450)")
    ap.add_argument("--row-timeout", type=int, default=150, help="kill a row's worker after this many s (default 150)")
    ap.add_argument("--time-failed", action="store_true",
                    help="time configurations that fail the check too (ablations); they never win a row")
    ap.add_argument("--self-test", action="store_true", help="no GPU: check PTX, arguments and report code")
    ap.add_argument("--dry-run", action="store_true",
                    help="development aid: CPU torch, Triton's interpreter, tiny shapes, blk launches on the fake "
                         "driver with simulated outputs (needs torch + triton on this machine)")
    ap.add_argument("--worker", help=argparse.SUPPRESS)   # internal: rows to run in this process
    ap.add_argument("--results", help=argparse.SUPPRESS)  # internal: where workers put their rows
    args = ap.parse_args()
    if not os.path.isdir(args.ptx_dir):
        raise SystemExit("--ptx-dir %s is not a directory" % args.ptx_dir)
    if args.self_test:
        return self_test(args)
    if args.worker:
        return worker(args)
    return run_gpu(args)


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""check_torch.py DIR — the PyTorch side of examples/decoder
(docs/tutorials/10-decoder-block.md).

DIR is what `decoder --gpu 0 --dump DIR` wrote: config.txt (the shape, eps,
RoPE theta, blk's times) and raw little-endian files: x, the weights (bf16)
and the RoPE tables cos, sin (f32 [seq, head_dim/2]) as inputs; h and out
(bf16) as blk computed them. This script

  1. runs the same block in PyTorch in f32 from the same bf16 values (TF32
     off): the reference;
  2. runs it in bf16 the way a PyTorch model would (bf16 GEMMs, RoPE and the
     norms in f32, SDPA with is_causal, whose softmax is f32 inside), eagerly
     and through torch.compile;
  3. compares blk's h and out, and torch's bf16 out, with the reference:
     max |got - ref| / max |ref| and ||got - ref|| / ||ref||; blk passes when
     each is at most twice torch bf16's own (or under a floor of 5e-3 / 2e-2);
  4. times torch eager, torch.compile and torch.compile with CUDA graphs
     (mode="reduce-overhead") the way decoder timed blk: median of --reps
     runs between CUDA events, no L2 flush between runs;
  5. prints a table and writes DIR/results.json. Exit status 1 when blk's
     output fails the comparison.

  python3 check_torch.py DIR [--reps 50] [--no-compile]
"""
import argparse
import json
import os
import statistics
import sys

import numpy as np
import torch
import torch.nn.functional as F


def read_config(d):
    cfg = {}
    with open(os.path.join(d, "config.txt")) as f:
        for line in f:
            key, _, value = line.rstrip("\n").partition(" ")
            cfg[key] = value
    return cfg


def load(d, name, shape, bf16, device):
    # bf16 comes as int16 bits (numpy has no bfloat16; torch's int16 is a full dtype, uint16 is not)
    raw = np.fromfile(os.path.join(d, name + ".bin"), dtype=np.int16 if bf16 else np.float32)
    t = torch.from_numpy(raw.copy())
    if bf16:
        t = t.view(torch.bfloat16)
    return t.reshape(shape).to(device)


def block(x, w, c):
    """h = x + attn(rope(rmsnorm(x) Wqkv)) Wo; out = h + silu(rmsnorm(h) W1) W2,
    in the dtype of x and w (the RoPE tables stay f32). Weights are [in, out]
    as decoder.c keeps them, so a projection is t @ W."""
    B, S, E, H, KV, D = c["batch"], c["seq"], c["hidden"], c["heads"], c["kv_heads"], c["head_dim"]
    dt = x.dtype

    def rmsnorm(t, wn):  # f32 inside, as norm.blk's rmsnorm
        tf = t.float()
        return (tf * torch.rsqrt(tf.pow(2).mean(-1, keepdim=True) + c["eps"]) * wn.float()).to(dt)

    def rope(t):  # [B, S, heads, D], "rotate half" by position s, in f32
        cos, sin = w["cos"][None, :, None, :], w["sin"][None, :, None, :]
        t1, t2 = t[..., : D // 2].float(), t[..., D // 2:].float()
        return torch.cat((t1 * cos - t2 * sin, t2 * cos + t1 * sin), -1).to(dt)

    xn = rmsnorm(x, w["wn1"])
    qkv = (xn @ w["wqkv"]).view(B, S, H + 2 * KV, D)
    q = rope(qkv[:, :, :H]).transpose(1, 2)
    k = rope(qkv[:, :, H: H + KV]).transpose(1, 2)
    v = qkv[:, :, H + KV:].transpose(1, 2)
    if KV != H:  # query head h reads K/V head h // (H / KV), as attn_fwd's GROUP
        k = k.repeat_interleave(H // KV, dim=1)
        v = v.repeat_interleave(H // KV, dim=1)
    o = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    h = x + o.transpose(1, 2).reshape(B * S, H * D) @ w["wo"]
    u = F.silu(rmsnorm(h, w["wn2"]) @ w["w1"])
    return h, h + u @ w["w2"]


def errors(got, ref):
    d = (got.float() - ref).abs()
    return {"rel_max": (d.max() / ref.abs().max()).item(),
            "rel_l2": (torch.linalg.vector_norm(d) / torch.linalg.vector_norm(ref)).item()}


def median_us(fn, reps, warmup=3):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) * 1000.0)
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("dir")
    ap.add_argument("--reps", type=int, default=50)
    ap.add_argument("--no-compile", action="store_true", help="skip torch.compile (minutes of compiling)")
    a = ap.parse_args()
    if not torch.cuda.is_available():
        sys.exit("check_torch.py: no CUDA device")
    dev = "cuda"
    raw = read_config(a.dir)
    c = {k: int(raw[k]) for k in ("batch", "seq", "hidden", "heads", "kv_heads", "head_dim", "mlp")}
    c["eps"] = float(raw["eps"])
    T, E, H, KV, D, Fm = c["batch"] * c["seq"], c["hidden"], c["heads"], c["kv_heads"], c["head_dim"], c["mlp"]
    shapes = {"x": (T, E), "wn1": (E,), "wqkv": (E, (H + 2 * KV) * D), "wo": (H * D, E), "wn2": (E,),
              "w1": (E, Fm), "w2": (Fm, E)}
    w = {n: load(a.dir, n, s, True, dev) for n, s in shapes.items()}
    for n in ("cos", "sin"):
        w[n] = load(a.dir, n, (c["seq"], D // 2), False, dev)
    x = w.pop("x")
    blk_h = load(a.dir, "h", (T, E), True, dev)
    blk_out = load(a.dir, "out", (T, E), True, dev)

    # 1. the f32 reference from the same bf16 values
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    w32 = {n: t.float() for n, t in w.items()}
    with torch.no_grad():
        ref_h, ref_out = block(x.float(), w32, c)

    # 2. torch in bf16, eager and compiled
    def eager():
        return block(x, w, c)

    rows, errs = {}, {}
    with torch.no_grad():
        errs["blk h"] = errors(blk_h, ref_h)
        errs["blk out"] = errors(blk_out, ref_out)
        errs["torch bf16 out"] = errors(eager()[1], ref_out)
        rows["torch eager"] = median_us(eager, a.reps)
        if not a.no_compile:
            for label, mode in (("torch.compile", None), ("torch.compile, CUDA graphs", "reduce-overhead")):
                try:
                    fn = torch.compile(eager, mode=mode)
                    errs[label + " out"] = errors(fn()[1], ref_out)
                    rows[label] = median_us(fn, a.reps)
                except Exception as e:  # a compile failure is a row of the table, not the end of the check
                    rows[label] = None
                    print(f"{label}: failed: {type(e).__name__}: {e}", file=sys.stderr)

    ok = (errs["blk out"]["rel_l2"] <= max(2 * errs["torch bf16 out"]["rel_l2"], 5e-3)
          and errs["blk out"]["rel_max"] <= max(2 * errs["torch bf16 out"]["rel_max"], 2e-2))

    name = torch.cuda.get_device_name()
    print(f"decoder block B{c['batch']} S{c['seq']} hidden {E}, {H} heads ({KV} kv) of {D}, MLP {Fm} on {name}")
    print(f"torch {torch.__version__}; blk's C check: {raw.get('c_check', '?')}, "
          f"{raw.get('c_check_failures', '?')} failures")
    print("\nagainst the f32 PyTorch reference:")
    print("| output | max err / max ref | rel L2 |\n|---|---|---|")
    for k, e in errs.items():
        print(f"| {k} | {e['rel_max']:.2e} | {e['rel_l2']:.2e} |")
    print(f"blk out: {'ok' if ok else 'FAIL'} (bound: twice torch bf16's, floors 2e-2 and 5e-3)")

    blk_graph, blk_eager = float(raw["blk_graph_us"]), float(raw["blk_eager_us"])
    table = {"blk graph replay": blk_graph, "blk eager launches": blk_eager, **rows}
    print(f"\ntimes, median of {a.reps} (blk: {raw.get('reps', '?')}), no L2 flush:")
    print("| | µs | blk graph replay is |\n|---|---|---|")
    for k, us in table.items():
        if us is None:
            print(f"| {k} | failed | |")
        elif k == "blk graph replay" or not blk_graph:  # blk untimed: decoder --reps 0
            print(f"| {k} | {us:.1f} | |")
        else:
            print(f"| {k} | {us:.1f} | {us / blk_graph:.2f}x as fast |")
    with open(os.path.join(a.dir, "results.json"), "w") as f:
        json.dump({"config": raw, "device": name, "torch": torch.__version__, "errors": errs, "times_us": table,
                   "blk_ok": ok}, f, indent=1)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

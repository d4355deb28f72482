"""The tensor-parallel MLP's kernels and split on blk's CPU interpreter (no
GPU, no torch): what tp_mlp.py relies on, at sizes the interpreter runs in a
second. Run by `make test` (python/tp_mlp_cpu); by hand:

    BLK_LIBBLKRT=build/runtime/libblk.so PYTHONPATH=runtime/python python3 examples/tensor_parallel/check_cpu.py

Checks, with small tiles (BM=16, BN=32, BK=16):
  - linear_gelu (tp_mlp.blk) = bf16(gelu(x W + b)) against a float64 reference;
  - each rank's h_r = linear_gelu(x, W1[:, r], b1[r]) is bit-identical to the
    matching columns of the one-GPU h (column parallelism changes nothing);
  - sum_r h_r W2[r, :] (stdlib matmul per rank, reduced in f32 and rounded
    to bf16, as an all-reduce would) equals h W2 within the example's TOL_TP.
"""
import math
import os
import random
import struct
import sys

import blk

HERE = os.path.dirname(os.path.abspath(__file__))
M, K, FF, N = 16, 32, 64, 32        # tokens, hidden, ffn, hidden (out)
TILES = {"BM": 16, "BN": 32, "BK": 16, "GROUP": 1, "STAGES": 1}
TOL_TP = 2e-2  # tp_mlp.py's


def bf16_bits(v):
    """float -> bf16 bits, round to nearest even (as the kernels' casts)."""
    b = struct.unpack("<I", struct.pack("<f", v))[0]
    return ((b + 0x7FFF + ((b >> 16) & 1)) >> 16) & 0xFFFF


def bf16(v):
    return struct.unpack("<f", struct.pack("<I", bf16_bits(v) << 16))[0]


def to_buffer(dev, values):
    b = dev.malloc(2 * len(values))
    b.copy_from_host(struct.pack("<%dH" % len(values), *[bf16_bits(v) for v in values]))
    return b


def from_buffer(b, n):
    return [struct.unpack("<f", struct.pack("<I", h << 16))[0] for h in struct.unpack("<%dH" % n, b.copy_to_host())]


def gelu(v):
    return 0.5 * v * (1.0 + math.erf(v / math.sqrt(2.0)))


def main():
    dev = blk.Device.cpu()
    lg = dev.load_source_file(os.path.join(HERE, "tp_mlp.blk"), defines=TILES).kernel("linear_gelu")
    mm = dev.load_source_file(blk.stdlib("matmul.blk"), defines=TILES).kernel("matmul")
    rnd = random.Random(14)
    x = [bf16(rnd.gauss(0, 1)) for _ in range(M * K)]
    w1 = [bf16(rnd.gauss(0, K ** -0.5)) for _ in range(K * FF)]
    b1 = [bf16(rnd.gauss(0, 0.1)) for _ in range(FF)]
    w2 = [bf16(rnd.gauss(0, FF ** -0.5)) for _ in range(FF * N)]
    failures = []

    def grid(rows, cols):
        return lambda c: blk.cdiv(rows, c["BM"]) * blk.cdiv(cols, c["BN"])

    def linear_gelu(w, b, cols):
        out = dev.malloc(2 * M * cols)
        lg[grid(M, cols)](to_buffer(dev, x), to_buffer(dev, w), to_buffer(dev, b), out, M, cols, K)
        return from_buffer(out, M * cols)

    def matmul(a, w, rows, inner, cols):
        out = dev.malloc(2 * rows * cols)
        mm[grid(rows, cols)](to_buffer(dev, a), to_buffer(dev, w), out, rows, cols, inner)
        return from_buffer(out, rows * cols)

    h = linear_gelu(w1, b1, FF)
    worst = 0.0
    for i in range(M):
        for j in range(FF):
            ref = gelu(sum(x[i * K + k] * w1[k * FF + j] for k in range(K)) + b1[j])
            worst = max(worst, abs(h[i * FF + j] - ref) / max(1.0, abs(ref)))
    print("linear_gelu vs float64: max error %.2e (bf16 output: 2^-8 = %.2e)" % (worst, 2.0 ** -8))
    if worst > 2.0 ** -8:
        failures.append("linear_gelu")

    half = FF // 2
    y = matmul(h, w2, M, FF, N)
    partial = []
    for r in range(2):
        c0 = r * half
        w1_r = [w1[k * FF + c0 + j] for k in range(K) for j in range(half)]
        h_r = linear_gelu(w1_r, b1[c0:c0 + half], half)
        same = all(h_r[i * half + j] == h[i * FF + c0 + j] for i in range(M) for j in range(half))
        print("rank %d: h_r equals the one-GPU h's columns bit for bit: %s" % (r, same))
        if not same:
            failures.append("h_%d" % r)
        partial.append(matmul(h_r, w2[c0 * N:(c0 + half) * N], M, half, N))
    y_tp = [bf16(a + b) for a, b in zip(*partial)]
    top = max(abs(v) for v in y)
    d = max(abs(a - b) for a, b in zip(y_tp, y)) / top
    print("tensor-parallel vs one device: max |diff| / max |y| = %.2e (tolerance %.0e)" % (d, TOL_TP))
    if d > TOL_TP:
        failures.append("y")
    print("check_cpu: %s" % ("FAILED: " + ", ".join(failures) if failures else "ok"))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

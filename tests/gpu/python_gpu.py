"""The Python front door on a real GPU (not part of ctest: no GPU here).

On the GPU machine, from the repository root, with libblk.so from
tests/gpu/bundle_python.sh carried in build-pycarry/ (and torch installed):

    BLK_LIBBLKRT=build-pycarry/libblk.so PYTHONPATH=runtime/python python3 tests/gpu/python_gpu.py

It checks, each against torch: stdlib kernels JIT-compiled from source
(load_source_file with defines, load_source text) on torch CUDA tensors;
launches on a non-default torch.cuda.Stream (adopted by libblkrt) ordered with
torch work on that stream; a graph captured on a blk stream; DLPack /
__cuda_array_interface__ producers when CuPy is installed; the same script
under BLK_DEVICE=cpu (CUDA tensors copied to the interpreter and back); and a
host-time-per-launch row (blk vs torch eager, not a test). Exit 0 = all ok.
"""
import os
import subprocess
import sys
import time

import blk

# libblk.so carried in build-pycarry/ finds the stdlib beside it or where it
# was built; the checkout on the GPU machine may live elsewhere.
os.environ.setdefault("BLK_STDLIB_DIR", blk.stdlib())

try:
    import torch
except ImportError:
    print("python_gpu: SKIPPED: torch is not installed")
    sys.exit(77)

failures = []


def check(name, ok, detail=""):
    print("%-52s %s %s" % (name, "ok" if ok else "FAIL", detail))
    if not ok:
        failures.append(name)


def main():
    dev = blk.Device()
    on_cpu = dev.is_cpu
    print("python_gpu: blk %s, %s, device %s (%s)" % (blk.__version__, blk.library_path(), dev.info.name,
                                                    dev.info.arch))
    if not on_cpu and not torch.cuda.is_available():
        print("python_gpu: SKIPPED: torch sees no GPU")
        sys.exit(77)
    cuda = torch.device("cuda") if torch.cuda.is_available() else torch.device("cpu")
    torch.manual_seed(0)

    # JIT from source with defines, torch tensors
    ew = dev.load_source_file(blk.stdlib("elementwise.blk"), defines={"BLOCK": 1024})
    vadd = ew.kernel("vector_add")
    n = 1 << 20
    x, y = torch.randn(n, device=cuda), torch.randn(n, device=cuda)
    out = torch.empty_like(x)
    vadd[blk.cdiv(n, vadd.consts["BLOCK"])](x, y, out, n)
    if cuda.type == "cuda":
        torch.cuda.synchronize()
    check("vector_add from source (BLOCK=1024)", torch.equal(out, x + y))

    sm = dev.load_source_file(blk.stdlib("softmax.blk"), kernel="softmax", defines={"BLOCK": 1024}).kernel("softmax")
    rows, cols = 512, 1000
    a = torch.randn(rows, cols, device=cuda)
    o = torch.empty_like(a)
    sm[rows](o, a, cols, cols)
    err = (o - torch.softmax(a, dim=1)).abs().max().item()
    check("softmax from source", err < 1e-5, "max err %.2e" % err)

    txt = dev.load_source("kernel axpy(x: *f32, y: *f32, n: i32, a: f32, const BLOCK: i32 = 256) {\n"
                          "    let o = program_id(0) * BLOCK + arange(0, BLOCK);\n"
                          "    store(y + o, load(x + o, o < n) * a + load(y + o, o < n), o < n);\n}\n").kernel("axpy")
    y2 = y.clone()
    txt[blk.cdiv(n, 256)](x, y2, n, 2.0)
    check("load_source text", torch.allclose(y2, 2.0 * x + y))

    if not on_cpu:
        # a non-default torch stream: blk's launch is ordered between torch ops on it
        s = torch.cuda.Stream()
        with torch.cuda.stream(s):
            big = torch.randn(1 << 24, device=cuda)
            z = torch.empty_like(big)
            torch.cuda._sleep(5_000_000)  # keep the stream busy: a launch on another stream would race
            big.mul_(3.0)
            vadd[blk.cdiv(big.numel(), 1024)](big, big, z, big.numel(), stream=s)
            z.add_(1.0)
        s.synchronize()
        check("launch on a non-default torch.cuda.Stream", torch.equal(z, 2 * big + 1),
              "(adopted: %d foreign stream(s))" % len(dev._foreign))

        # graphs on a blk stream
        bs = dev.stream()
        with bs.capture() as cap:
            vadd[blk.cdiv(n, 1024)](x, y, out, n, stream=bs)
        out.zero_()
        cap.graph.launch(bs)
        bs.synchronize()
        check("graph replay on a blk stream", torch.equal(out, x + y))

        try:
            import cupy
        except ImportError:
            print("%-52s skipped (no cupy)" % "CuPy arrays (__cuda_array_interface__ / DLPack)")
        else:
            cx = cupy.arange(n, dtype=cupy.float32)
            co = cupy.empty_like(cx)
            vadd[blk.cdiv(n, 1024)](cx, cx, co, n)
            cupy.cuda.runtime.deviceSynchronize()
            check("CuPy arrays", bool((co == 2 * cx).all()))

        # the autotuner: softmax rows with BLOCK/num_warps configs, chosen per
        # shape; a second process reads the choices and does not tune again
        tsrc = ("@autotune(key = [n_cols], configs = [{BLOCK = 1024, num_warps = 2}, {BLOCK = 1024, num_warps = 8},"
                " {BLOCK = 2048, num_warps = 4}, {BLOCK = 2048, num_warps = 16}])\n"
                "kernel softmax_t(out: *f32, inp: *f32, stride: i32, n_cols: i32, const BLOCK: i32) {\n"
                "    let cols = arange(0, BLOCK);\n"
                "    let x = load(inp + program_id(0) * stride + cols, cols < n_cols, -inf);\n"
                "    let e = exp(x - max(x, 0));\n"
                "    store(out + program_id(0) * stride + cols, e / sum(e, 0), cols < n_cols);\n}\n")
        cache = os.environ.get("BLK_TUNE_CACHE") or "/tmp/blk-python-gpu-tune"
        os.makedirs(cache, exist_ok=True)
        t = dev.autotuner(tsrc, "softmax_t", cache_dir=cache)
        for cols in (128, 700, 1000):  # every config covers a row
            a = torch.randn(8192, cols, device=cuda)
            o = torch.empty_like(a)
            t[8192](o, a, cols, cols)
            torch.cuda.synchronize()
            err = (o - torch.softmax(a, dim=1)).abs().max().item()
            print("autotune softmax %5d cols: config %d {%s} (tuned %s) err %.1e" % (
                cols, t.last_config, t.configs[t.last_config], t.last_tuned, err))
            check("autotuned softmax, %d cols" % cols, err < 1e-5)
        if os.environ.get("BLK_TUNE_CHILD"):
            return 0 if not t.last_tuned else 1
        r = subprocess.run([sys.executable, __file__], env=dict(os.environ, BLK_TUNE_CHILD="1", BLK_TUNE_CACHE=cache),
                           capture_output=True, text=True)
        check("second process does not retune", "(tuned True)" not in r.stdout, r.stdout[-300:])
        t.close()

        # host time per launch, a benchmark row (BENCH.md), not a test
        small = torch.randn(1024, device=cuda)
        so = torch.empty_like(small)
        launch = vadd[1]
        for _ in range(100):
            launch(small, small, so, 1024)
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(2000):
            launch(small, small, so, 1024)
        t1 = time.perf_counter()
        for _ in range(2000):
            torch.add(small, small, out=so)
        t2 = time.perf_counter()
        torch.cuda.synchronize()
        print("host time per launch: blk %.2f us, torch eager add %.2f us" % ((t1 - t0) / 2e-3, (t2 - t1) / 2e-3))

        # the same script on the CPU interpreter, CUDA tensors copied around launches
        if os.environ.get("BLK_DEVICE") != "cpu":
            r = subprocess.run([sys.executable, __file__], env=dict(os.environ, BLK_DEVICE="cpu"),
                               capture_output=True, text=True)
            check("BLK_DEVICE=cpu, the unchanged script", r.returncode == 0, r.stdout.strip().splitlines()[-1:])
    print("python_gpu: %s" % ("FAILED: " + ", ".join(failures) if failures else "ok"))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

"""The runtime's profiler, blk.do_bench, NVTX and JIT line info on a real GPU
(not part of ctest: no GPU here).

On the GPU machine, from the repository root, with libblk.so from
tests/gpu/bundle_python.sh carried in build-pycarry/ (and torch installed):

    BLK_LIBBLKRT=build-pycarry/libblk.so PYTHONPATH=runtime/python python3 tests/gpu/profile_check.py

For stdlib vector_add (2^26 f32) and softmax (16384 x 4096 f32), each
launched on torch CUDA tensors and checked against torch first:
  - the profiler (blk.profile_enable; rows per kernel and configuration):
    launch count, the config names, GB/s from the stated bytes;
  - three timings of the same kernel: the profiler's median, blk.do_bench's
    median, and triton.testing.do_bench's (a torch-event timer with the
    same 256 MB L2 flush when triton is not installed). The profiler and
    blk.do_bench must agree with the reference timer within 15% (these
    kernels stream 256+ MB, far beyond L2, so a flush changes little);
    torch's own op is printed beside them (not a check);
  - BLK_LINEINFO=1: PTX with .file/.loc compiled and loaded by the driver's
    JIT (it accepts the line info) and the kernel still right;
  - NVTX: when `nsys` is on PATH, a child run of this script under
    `nsys profile -t cuda,nvtx` and `nsys stats -r nvtx_sum` must list the
    range "vector_add[BLOCK=1024,w4]"; otherwise SKIPPED (say so in the report).
Prints the profiler table at the end (for docs/runtime.md). Exit 0 = all ok.
"""
import os
import shutil
import subprocess
import sys
import tempfile

import blk

os.environ.setdefault("BLK_STDLIB_DIR", blk.stdlib())

try:
    import torch
except ImportError:
    print("profile_check: SKIPPED: torch is not installed")
    sys.exit(77)

failures = []


def check(name, ok, detail=""):
    print("%-56s %s %s" % (name, "ok" if ok else "FAIL", detail))
    if not ok:
        failures.append(name)


def reference_bench(fn, rep=50):
    """triton.testing.do_bench when triton is there, else the same method with
    torch events: a 256 MB flush before each timed call, the median."""
    try:
        import triton.testing
        return triton.testing.do_bench(fn, warmup=25, rep=100, return_mode="median"), "triton.testing.do_bench"
    except ImportError:
        pass
    flush = torch.empty(256 << 20, dtype=torch.int8, device="cuda")
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(rep):
        flush.zero_()
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b))
    times.sort()
    return times[len(times) // 2], "torch events + 256 MB flush"


def kernels(dev):
    vadd = dev.load_source_file(blk.stdlib("elementwise.blk"), kernel="vector_add",
                                defines={"BLOCK": 1024}).kernel("vector_add")
    soft = dev.load_source_file(blk.stdlib("softmax.blk"), kernel="softmax",
                                defines={"BLOCK": 4096}).kernel("softmax")
    return vadd, soft


def nvtx_child():
    """Run under nsys: a few launches, nothing else."""
    dev = blk.Device()
    vadd, _ = kernels(dev)
    n = 1 << 20
    x = torch.randn(n, device="cuda")
    out = torch.empty_like(x)
    for _ in range(5):
        vadd[blk.cdiv(n, 1024),](x, x, out, n)
    torch.cuda.synchronize()


def check_nvtx():
    nsys = shutil.which("nsys")
    if not nsys:
        print("%-56s SKIPPED (no nsys on PATH)" % "nvtx: ranges in Nsight Systems")
        return
    with tempfile.TemporaryDirectory() as tmp:
        rep = os.path.join(tmp, "prof")
        r = subprocess.run([nsys, "profile", "-t", "cuda,nvtx", "-o", rep, "--force-overwrite", "true",
                            sys.executable, os.path.abspath(__file__), "--nvtx-child"],
                           capture_output=True, text=True)
        if r.returncode != 0:
            check("nvtx: nsys profile ran", False, r.stderr[-400:])
            return
        s = subprocess.run([nsys, "stats", "-r", "nvtx_sum", "--format", "csv", rep + ".nsys-rep"],
                           capture_output=True, text=True)
        text = s.stdout + s.stderr
        check("nvtx: range vector_add[BLOCK=1024,w4] in nsys stats", "vector_add[BLOCK=1024,w4]" in text,
              "" if "vector_add[BLOCK=1024,w4]" in text else text[-600:])


def main():
    dev = blk.Device()
    if dev.is_cpu or not torch.cuda.is_available():
        print("profile_check: SKIPPED: needs a GPU (and torch with CUDA)")
        sys.exit(77)
    print("profile_check: blk %s on %s (%s)" % (blk.__version__, dev.info.name, dev.info.arch))
    torch.manual_seed(0)
    vadd, soft = kernels(dev)

    n = 1 << 26
    x, y = torch.randn(n, device="cuda"), torch.randn(n, device="cuda")
    out = torch.empty_like(x)
    rows, cols = 16384, 4096
    a = torch.randn(rows, cols, device="cuda") * 4
    b = torch.empty_like(a)

    def run_vadd():
        vadd[blk.cdiv(n, 1024),](x, y, out, n)

    def run_soft():
        soft[rows,](b, a, cols, cols)

    run_vadd()
    run_soft()
    torch.cuda.synchronize()
    check("vector_add == x + y", torch.equal(out, x + y))
    check("softmax == torch.softmax", torch.allclose(b, torch.softmax(a, 1), rtol=1e-5, atol=1e-7))

    blk.profile_reset()
    blk.profile_enable()
    vadd.set_work(bytes=3 * 4 * n)
    soft.set_work(bytes=2 * 4 * rows * cols)
    for _ in range(50):
        run_vadd()
    for _ in range(30):
        run_soft()
    rows_ = blk.profile_rows()
    blk.profile_enable(False)
    by = {(r.kernel, r.config): r for r in rows_}
    rv = by.get(("vector_add", "BLOCK=1024,w4"))
    rs = by.get(("softmax", "BLOCK=4096,FAST=0,w8"))
    check("profiler: rows named by configuration", rv is not None and rs is not None,
          " ".join("%s[%s]" % (r.kernel, r.config) for r in rows_))
    if rv is None or rs is None:
        return
    check("profiler: launch counts 50 / 30", rv.launches == 50 and rs.launches == 30,
          "%d / %d" % (rv.launches, rs.launches))
    check("profiler: times ordered", 0 < rv.min_ms <= rv.median_ms <= rv.max_ms and
          0 < rs.min_ms <= rs.median_ms <= rs.max_ms)

    for name, fn, row, torch_fn in (("vector_add", run_vadd, rv, lambda: torch.add(x, y, out=out)),
                                    ("softmax", run_soft, rs, lambda: torch.softmax(a, 1))):
        ref, how = reference_bench(fn)
        ours = blk.do_bench(fn, device=dev, warmup=5, rep=50)
        t_torch, _ = reference_bench(torch_fn)
        gb = row.bytes / row.launches
        print("  %-10s profiler median %.4f ms (%.0f GB/s)  blk.do_bench %.4f ms  %s %.4f ms  torch op %.4f ms"
              % (name, row.median_ms, gb / (row.median_ms * 1e-3) * 1e-9, ours, how, ref, t_torch))
        check("%s: profiler median within 15%% of %s" % (name, how.split()[0]), abs(row.median_ms - ref) <= 0.15 * ref,
              "%.4f vs %.4f ms" % (row.median_ms, ref))
        check("%s: blk.do_bench within 15%% of %s" % (name, how.split()[0]), abs(ours - ref) <= 0.15 * ref,
              "%.4f vs %.4f ms" % (ours, ref))

    # JIT line info: the driver's JIT takes PTX with .file/.loc
    os.environ["BLK_LINEINFO"] = "1"
    try:
        li = dev.load_source_file(blk.stdlib("elementwise.blk"), kernel="vector_add",
                                  defines={"BLOCK": 512}).kernel("vector_add")
        out.zero_()
        li[blk.cdiv(n, 512),](x, y, out, n)
        torch.cuda.synchronize()
        check("BLK_LINEINFO=1: PTX with line info loads and runs", torch.equal(out, x + y))
    finally:
        del os.environ["BLK_LINEINFO"]

    check_nvtx()
    print()
    print(blk.profile_table())


if __name__ == "__main__":
    if "--nvtx-child" in sys.argv:
        nvtx_child()
        sys.exit(0)
    main()
    print("profile_check: %s" % ("FAILED: " + ", ".join(failures) if failures else "all ok"))
    sys.exit(1 if failures else 0)

r"""The runtime's profiler, blk.do_bench, NVTX and JIT line info on a real GPU
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
  - NVTX: a child run of this script (no torch: vector_add BLOCK=1024
    launched 3 times, BLOCK=512 twice) under an Nsight tool. With `nsys` on
    PATH, `nsys profile -t cuda,nvtx` and `nsys stats -r nvtx_sum` must list
    the range "vector_add[BLOCK=1024,w4]". Else, with `ncu` (PATH or
    /usr/local/cuda/bin), Nsight Compute's NVTX filter must profile exactly
    the 3 launches inside that range (`ncu --nvtx --nvtx-include
    'vector_add\[BLOCK=1024\,w4\]/' --metrics gpu__time_duration.sum
    --csv`), and none for a range that was never pushed
    (vector_add[BLOCK=256,w4]). With neither: SKIPPED (say so in the report).
Prints the profiler table at the end (for docs/runtime.md). Exit 0 = all ok.
"""
import csv
import os
import re
import shutil
import subprocess
import sys
import tempfile

import blk

os.environ.setdefault("BLK_STDLIB_DIR", blk.stdlib())


def vector_add(dev, block):
    return dev.load_source_file(blk.stdlib("elementwise.blk"), kernel="vector_add",
                                defines={"BLOCK": block}).kernel("vector_add")


def kernels(dev):
    soft = dev.load_source_file(blk.stdlib("softmax.blk"), kernel="softmax",
                                defines={"BLOCK": 4096}).kernel("softmax")
    return vector_add(dev, 1024), soft


NVTX_CHILD_LAUNCHES = {1024: 3, 512: 2}  # vector_add BLOCK: launches, each in its NVTX range


def nvtx_child():
    """Run under nsys or ncu: the launches of NVTX_CHILD_LAUNCHES on blk
    buffers, nothing else (no torch: its import and its own kernels would
    only slow the profiler down)."""
    print("nvtx child: NVTX_INJECTION64_PATH=%s" % os.environ.get("NVTX_INJECTION64_PATH"), flush=True)
    dev = blk.Device()
    n = 1 << 20
    x, out = dev.malloc(4 * n).fill(0), dev.malloc(4 * n)
    for block, count in NVTX_CHILD_LAUNCHES.items():
        k = vector_add(dev, block)
        for _ in range(count):
            k[blk.cdiv(n, block),](x, x, out, n)
    dev.synchronize()


if __name__ == "__main__" and "--nvtx-child" in sys.argv:  # before torch is imported
    nvtx_child()
    sys.exit(0)

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


NVTX_RANGE = "vector_add[BLOCK=1024,w4]"  # the runtime's name for vector_add BLOCK=1024 (4 warps)


def ncu_include(name):
    """Nsight Compute's --nvtx-include for the push/pop range `name`: the
    filter's quantifiers @ , [ ] / * + inside a name are escaped with a
    backslash, and a trailing / marks a push/pop range (Nsight Compute CLI
    manual, "NVTX Filtering")."""
    return re.sub(r"([@,\[\]/*+])", r"\\\1", name) + "/"


def ncu_launches(ncu, include, tmp):
    """Run the NVTX child under ncu with one --nvtx-include: (exit status,
    [(kernel name, grid size)] of the launches it profiled, its log)."""
    log = os.path.join(tmp, "ncu.csv")
    if os.path.exists(log):
        os.remove(log)
    cmd = [ncu, "--nvtx", "--nvtx-include", include, "--metrics", "gpu__time_duration.sum", "--csv",
           "--target-processes", "all", "--log-file", log, sys.executable, os.path.abspath(__file__), "--nvtx-child"]
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=180)
    except subprocess.TimeoutExpired:
        return None, [], "ncu timed out after 180 s"
    text = open(log).read() if os.path.exists(log) else ""
    # --csv: a header line ("ID","Process ID",...,"Kernel Name",...,"Grid Size",...,"Metric Name",...), then a
    # row per launch and metric; the ==PROF== progress lines are not quoted
    header, launches = None, {}
    for row in csv.reader(line for line in text.splitlines() if line.startswith('"')):
        if row and row[0] == "ID":
            header = row
        elif header and len(row) == len(header):
            d = dict(zip(header, row))
            if d.get("Metric Name") == "gpu__time_duration.sum":
                launches[(d.get("Process ID"), d["ID"])] = (d.get("Kernel Name"), d.get("Grid Size"))
    return r.returncode, list(launches.values()), text + r.stdout + r.stderr


def tail(text, n=12):
    return "\n".join(text.splitlines()[-n:])


def check_nvtx_ncu(ncu):
    """Nsight Compute's NVTX filter selects launches by the runtime's range
    names: exactly the BLOCK=1024 launches inside NVTX_RANGE (not the
    BLOCK=512 ones in their own range, nor anything outside), and nothing
    for a range that was never pushed."""
    want = NVTX_CHILD_LAUNCHES[1024]
    with tempfile.TemporaryDirectory() as tmp:
        rc, got, log = ncu_launches(ncu, ncu_include(NVTX_RANGE), tmp)
        if "ERR_NVGPUCTRPERM" in log:
            print("%-56s SKIPPED (ncu may not read the GPU counters here: ERR_NVGPUCTRPERM)" % "nvtx: ncu filter")
            return
        ok = rc == 0 and len(got) == want and all("vector_add" in (k or "") for k, _ in got)
        detail = "%d launches %s" % (len(got), got)
        if not ok:
            # was it the escaping? the same range as a regex with no quantifier in it
            _, alt, _ = ncu_launches(ncu, "regex:vector_add.BLOCK=1024.w4./", tmp)
            detail += "; regex:vector_add.BLOCK=1024.w4./ profiles %d; rc %s; log: %s" % (len(alt), rc, tail(log))
        check("nvtx: ncu --nvtx-include %s profiles its %d launches" % (ncu_include(NVTX_RANGE), want), ok, detail)
        rc, got, log = ncu_launches(ncu, ncu_include("vector_add[BLOCK=256,w4]"), tmp)
        check("nvtx: ncu, a range never pushed profiles nothing", rc == 0 and not got,
              "%d launches %s; rc %s%s" % (len(got), got, rc, "" if rc == 0 else "; log: " + tail(log)))


def check_nvtx():
    nsys = shutil.which("nsys")
    ncu = shutil.which("ncu") or ("/usr/local/cuda/bin/ncu" if os.access("/usr/local/cuda/bin/ncu", os.X_OK) else None)
    if not nsys and ncu:
        check_nvtx_ncu(ncu)
        return
    if not nsys:
        print("%-56s SKIPPED (neither nsys nor ncu found)" % "nvtx: ranges in Nsight Systems / Compute")
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
        found = NVTX_RANGE in text
        check("nvtx: range %s in nsys stats" % NVTX_RANGE, found, "" if found else text[-600:])


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
    main()
    print("profile_check: %s" % ("FAILED: " + ", ".join(failures) if failures else "all ok"))
    sys.exit(1 if failures else 0)

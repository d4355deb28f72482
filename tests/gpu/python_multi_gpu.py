"""blk from Python on two GPUs in one process (not part of ctest: no GPU here;
tests/gpu/multi_gpu.sh runs it on the GPU machine):

    BLK_LIBBLKRT=build-mgpu/libblk.so PYTHONPATH=runtime/python python3 tests/gpu/python_multi_gpu.py

Each check against torch: one kernel (loaded once, on GPU 0) launched on
tensors of cuda:0 and cuda:1 (its module copied to GPU 1); on a non-default
torch stream of cuda:1 without passing it (torch's current stream of the
tensors' device); one Python thread per GPU launching at once; peer access
and a kernel on GPU 1 reading a tensor of GPU 0; blk.Buffer peer copies; the
autotuner on each GPU. Prints the time of a matmul batch on one GPU and
split over both from one thread (not asserted). Exits 77 with fewer than two
GPUs, 0 when every check passes.
"""
import os
import sys
import threading
import time

import blk

os.environ.setdefault("BLK_STDLIB_DIR", blk.stdlib())

try:
    import torch
except ImportError:
    print("python_multi_gpu: SKIPPED: torch is not installed")
    sys.exit(77)

failures = []


def check(name, ok, detail=""):
    print("%-60s %s %s" % (name, "ok" if ok else "FAIL", detail))
    if not ok:
        failures.append(name)


def main():
    if not torch.cuda.is_available() or torch.cuda.device_count() < 2:
        print("python_multi_gpu: SKIPPED: fewer than two GPUs")
        return 77
    torch.manual_seed(0)
    d0, d1 = torch.device("cuda:0"), torch.device("cuda:1")
    dev = blk.Device(0)
    print("python_multi_gpu: blk %s, %s; %s and %s" % (blk.__version__, blk.library_path(), torch.cuda.get_device_name(0),
                                                      torch.cuda.get_device_name(1)))
    vadd = dev.load_source_file(blk.stdlib("elementwise.blk")).kernel("vector_add")
    n = 1 << 22

    # one kernel, tensors on either GPU
    for d in (d0, d1, d0):
        x, y = torch.randn(n, device=d), torch.randn(n, device=d)
        out = torch.full_like(x, float("nan"))
        vadd[blk.cdiv(n, 1024)](x, y, out, n)
        torch.cuda.synchronize(d)
        check("vector_add on %s tensors" % d, torch.equal(out, x + y))
    check("the module was copied to GPU 1 once", list(vadd.module._copies) == [1], str(list(vadd.module._copies)))

    # torch's current stream of the tensors' device, without passing it
    with torch.cuda.device(1):
        s = torch.cuda.Stream()
        with torch.cuda.stream(s):
            big = torch.randn(1 << 24, device=d1)
            z = torch.empty_like(big)
            torch.cuda._sleep(5_000_000)  # keep s busy: a launch on another stream would race
            big.mul_(3.0)
            vadd[blk.cdiv(big.numel(), 1024)](big, big, z, big.numel())
            z.add_(1.0)
        s.synchronize()
    check("launch on torch's current stream of cuda:1", torch.equal(z, 2 * big + 1))

    # one Python thread per GPU
    def worker(d, res):
        torch.cuda.set_device(d)
        x = torch.arange(n, device=d, dtype=torch.float32)
        out = torch.empty_like(x)
        for _ in range(200):
            vadd[blk.cdiv(n, 1024)](x, x, out, n)
        torch.cuda.synchronize(d)
        res[d.index] = torch.equal(out, 2 * x)
    res = {}
    th = [threading.Thread(target=worker, args=(d, res)) for d in (d0, d1)]
    for t in th:
        t.start()
    for t in th:
        t.join()
    check("one thread per GPU, 200 launches each", res == {0: True, 1: True}, str(res))

    # peers
    g0, g1 = blk.gpu(0), blk.gpu(1)
    if g1.can_access_peer(g0) and g0.can_access_peer(g1):
        g1.enable_peer_access(g0)
        g0.enable_peer_access(g1)
        x0 = torch.randn(n, device=d0)
        y1 = torch.randn(n, device=d1)
        out1 = torch.full_like(y1, float("nan"))
        torch.cuda.synchronize(d0)  # x0 is made on GPU 0's stream, read from GPU 1's
        # the first tensor decides the device: GPU 1, reading x0 over the peer path
        vadd[blk.cdiv(n, 1024)](y1, x0, out1, n)
        torch.cuda.synchronize(d1)
        check("kernel on GPU 1 reading a tensor of GPU 0", torch.equal(out1, y1 + x0.to(d1)))
    else:
        try:
            g0.enable_peer_access(g1)
            check("no peer path: BLKRT_ERR_NO_PEER_ACCESS", False, "enabling succeeded")
        except blk.Error as e:
            check("no peer path: BLKRT_ERR_NO_PEER_ACCESS", e.status_name == "BLKRT_ERR_NO_PEER_ACCESS", e.message)
    a, b = g0.malloc(1 << 20), g1.malloc(1 << 20)
    data = os.urandom(1 << 20)
    a.copy_from_host(data)
    b.copy_from(a)
    check("blk.Buffer peer copy GPU 0 -> GPU 1", bytes(b.copy_to_host()) == data)
    a.close()
    b.close()

    # the autotuner on each GPU
    tsrc = ("@autotune(key = [n_cols], configs = [{BLOCK = 1024, num_warps = 4}, {BLOCK = 1024, num_warps = 8}])\n"
            "kernel softmax_t(out: *f32, inp: *f32, stride: i32, n_cols: i32, const BLOCK: i32) {\n"
            "    let cols = arange(0, BLOCK);\n"
            "    let x = load(inp + program_id(0) * stride + cols, cols < n_cols, -inf);\n"
            "    let e = exp(x - max(x, 0));\n"
            "    store(out + program_id(0) * stride + cols, e / sum(e, 0), cols < n_cols);\n}\n")
    t = dev.autotuner(tsrc, "softmax_t", cache_dir="")
    for d in (d0, d1):
        a = torch.randn(4096, 1000, device=d)
        o = torch.empty_like(a)
        t[4096](o, a, 1000, 1000)
        torch.cuda.synchronize(d)
        err = (o - torch.softmax(a, dim=1)).abs().max().item()
        check("autotuned softmax on %s (config %d, tuned %s)" % (d, t.last_config, t.last_tuned), err < 1e-5,
              "err %.1e" % err)
    t.close()

    # one thread driving both GPUs: a matmul batch on one GPU, then split (printed)
    mm = dev.load_source_file(blk.stdlib("matmul.blk")).kernel("matmul")
    S = 4096
    ops = {d: [torch.randn(S, S, device=d, dtype=torch.bfloat16) for _ in range(3)] for d in (d0, d1)}

    def run(devices, count):
        for i in range(count):
            a, b, c = ops[devices[i % len(devices)]]
            mm[lambda cs: blk.cdiv(S, cs["BM"]) * blk.cdiv(S, cs["BN"])](a, b, c, S, S, S)
    run([d0, d1], 4)
    for d in (d0, d1):
        torch.cuda.synchronize(d)
    times = {}
    for name, devices in (("one GPU", [d0]), ("two GPUs, one thread", [d0, d1])):
        t0 = time.perf_counter()
        run(devices, 40)
        for d in (d0, d1):
            torch.cuda.synchronize(d)
        times[name] = (time.perf_counter() - t0) * 1e3
    print("40 bf16 matmuls %dx%dx%d: one GPU %.1f ms, two GPUs from one thread %.1f ms (%.2fx)" % (
        S, S, S, times["one GPU"], times["two GPUs, one thread"], times["one GPU"] / times["two GPUs, one thread"]))
    a, b, c = ops[d1]
    ref = a.float() @ b.float()
    err = ((c.float() - ref).abs().max() / ref.abs().max()).item()
    check("matmul on GPU 1 from the same kernel", err < 2e-2, "max |diff| / max |ref| %.1e" % err)

    print("python_multi_gpu: %s" % ("FAILED: " + ", ".join(failures) if failures else "ok"))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

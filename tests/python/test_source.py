"""`import blk` over libblk.so (compiler + runtime): .blk source compiled and
run on the CPU device, host buffers, BLK_DEVICE=cpu, python -m blk.

Environment (CTest, tests/python/CMakeLists.txt): BLK_LIBBLKRT = libblk.so,
PYTHONPATH = runtime/python, BLK_SOURCE_DIR = the source tree.
"""
import array
import ctypes
import os
import subprocess
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import blk  # noqa: E402
import cpu_kernels  # noqa: E402


class FakeCudaTensor:
    """What the CPU launcher uses of a torch CUDA tensor: is_cuda, dtype,
    detach().cpu() (a host copy with data_ptr) and copy_(host)."""
    dtype = "torch.float32"
    is_cuda = True

    def __init__(self, values):
        self.values = array.array("f", values)
        self.copied_back = False

    def detach(self):
        return self

    def cpu(self):
        host = array.array("f", self.values)
        outer = self

        class Host:
            dtype = "torch.float32"

            def __init__(self):
                self.storage = (ctypes.c_float * len(host)).from_buffer(host)
                self.keep = host

            def data_ptr(self):
                return ctypes.addressof(self.storage)
        h = Host()
        h.outer = outer
        return h

    def copy_(self, host):
        self.values = array.array("f", host.keep)
        self.copied_back = True


class DLPackProducer:
    """A CPU DLPack producer (what torch/JAX/CuPy hand out): __dlpack__ gives
    a "dltensor" capsule over float32 storage."""

    def __init__(self, values, device_type=1):
        self.storage = array.array("f", values)
        self.buf = (ctypes.c_float * len(self.storage)).from_buffer(self.storage)
        import blk as _blk
        t = _blk._DLTensor()
        t.data = ctypes.addressof(self.buf)
        t.device_type, t.device_id, t.ndim, t.code, t.bits, t.lanes = device_type, 0, 1, 2, 32, 1
        self.shape = (ctypes.c_int64 * 1)(len(self.storage))
        t.shape = ctypes.addressof(self.shape)
        self.managed = (ctypes.c_char * (ctypes.sizeof(t) + 16))()  # DLManagedTensor: tensor, ctx, deleter (NULL)
        ctypes.memmove(self.managed, ctypes.addressof(t), ctypes.sizeof(t))
        new = ctypes.pythonapi.PyCapsule_New
        new.restype, new.argtypes = ctypes.py_object, [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
        self.new = new

    def __dlpack__(self, stream=None):
        return self.new(ctypes.addressof(self.managed), b"dltensor", None)


class Source(unittest.TestCase):
    def setUp(self):
        self.dev = blk.Device.cpu()

    def tearDown(self):
        self.dev = None

    def test_library_has_compiler(self):
        self.assertTrue(blk.has_compiler(), blk.library_path())
        self.assertTrue(os.path.isfile(blk.stdlib("softmax.blk")))

    def test_stdlib_kernels_against_reference(self):
        checked = cpu_kernels.run(self.dev, log=lambda *a: None)
        self.assertIn("softmax.softmax", checked)

    def test_cuda_tensors_copied_around_a_cpu_launch(self):
        k = self.dev.load_source_file(blk.stdlib("elementwise.blk"), kernel="vector_add",
                                      defines={"BLOCK": 32}).kernel("vector_add")
        x, y, out = FakeCudaTensor(range(50)), FakeCudaTensor([1.0] * 50), FakeCudaTensor([0.0] * 50)
        k[2](x, y, out, 50)
        self.assertTrue(out.copied_back)
        self.assertEqual(list(out.values), [float(i + 1) for i in range(50)])

    def test_foreign_stream_on_cpu_is_the_default(self):
        k = self.dev.load_source_file(blk.stdlib("elementwise.blk"), kernel="copy").kernel("copy")
        a, b = array.array("f", [3.0] * 8), array.array("f", [0.0] * 8)
        k[1](a, b, 8, stream=type("TorchStream", (), {"cuda_stream": 0x1234})())
        self.assertEqual(list(b), [3.0] * 8)

    def test_dlpack_host_tensor(self):
        k = self.dev.load_source_file(blk.stdlib("elementwise.blk"), kernel="copy").kernel("copy")
        src, dst = DLPackProducer([5.0] * 16), DLPackProducer([0.0] * 16)
        k[1](src, dst, 16)
        self.assertEqual(list(dst.storage), [5.0] * 16)
        # for GPU kernels only CUDA memory counts: a CPU tensor is not a device address
        cuda_like = DLPackProducer([0.0] * 4, device_type=2)
        self.assertEqual(blk._pointer_value(cuda_like), ctypes.addressof(cuda_like.buf))
        self.assertIsNone(blk._pointer_value(DLPackProducer([0.0] * 4)))

    def test_step_limit_ends_a_runaway_kernel(self):
        src = ("kernel spin(out: *i32, n: i32) {\n"
               "    var i = 0;\n"
               "    while i >= 0 { i = (i + 1) % n; }\n"
               "    store(out, i);\n}\n")
        k = self.dev.load_source(src, path="spin.blk").kernel("spin")
        out = array.array("i", [7])
        self.dev.set_step_limit(100000)
        try:
            with self.assertRaises(blk.Error) as cm:
                k[1](out, 5)
            self.assertIn("spin.blk:3:5: error: kernel exceeded its step budget", cm.exception.message)
        finally:
            self.dev.set_step_limit(0)
        # the device is healthy afterwards
        c = self.dev.load_source_file(blk.stdlib("elementwise.blk"), kernel="copy").kernel("copy")
        a, b = array.array("f", [2.0] * 8), array.array("f", [0.0] * 8)
        c[1](a, b, 8)
        self.dev.synchronize(timeout_ms=1000)
        self.assertEqual(list(b), [2.0] * 8)

    def test_string_define(self):
        src = ('kernel pick(out: *i32, const MODE: str = "none") {\n'
               '    var v = 0;\n    if MODE == "one" { v = 1; }\n    store(out, v);\n}\n')
        for defines, want in ((None, 0), ({"MODE": "one"}, 1)):
            out = array.array("i", [7])
            self.dev.load_source(src, path="pick.blk", defines=defines).kernel("pick")[1](out)
            self.dev.synchronize(timeout_ms=1000)
            self.assertEqual(list(out), [want], defines)

    def test_read_only_buffer_refused(self):
        k = self.dev.load_source_file(blk.stdlib("elementwise.blk"), kernel="copy").kernel("copy")
        with self.assertRaises(blk.Error) as cm:
            k[1](memoryview(bytes(32)).toreadonly(), bytearray(32), 8)
        self.assertIn("read-only", cm.exception.message)

    def test_autotuner(self):
        import tempfile
        src = ("@autotune(key = [n], configs = [{BLOCK = 32}, {BLOCK = 64, num_warps = 2}, {BLOCK = 128}])\n"
               "kernel acc(out: *f32, x: *f32, n: i32, const BLOCK: i32) {\n"
               "    let o = program_id(0) * BLOCK + arange(0, BLOCK);\n"
               "    store(out + o, load(out + o, o < n) + load(x + o, o < n), o < n);\n}\n")
        with tempfile.TemporaryDirectory() as cache:
            t = self.dev.autotuner(src, "acc", cache_dir=cache)
            self.assertEqual(t.configs, ["BLOCK=32", "BLOCK=64,num_warps=2", "BLOCK=128"])
            self.assertEqual([k.consts["BLOCK"] for k in t.kernels], [32, 64, 128])
            n = 300
            x = array.array("f", range(n))
            out = array.array("f", [1.0] * n)
            runs = []
            cfg = t[lambda c: blk.cdiv(n, c["BLOCK"])](out, x, n, pre_hook=lambda: runs.append(1), reps=2)
            self.assertTrue(t.last_tuned)
            self.assertIn(cfg, (0, 1, 2))
            self.assertEqual(len(runs), 3 * 3)  # warm-up + 2 timed runs per config
            self.assertEqual(list(out), [1.0 + i for i in range(n)])  # restored: one launch's result
            t[lambda c: blk.cdiv(n, c["BLOCK"])](out, x, n)
            self.assertFalse(t.last_tuned)
            self.assertEqual(t.last_config, cfg)
            t.close()
            t2 = self.dev.autotuner(src, "acc", cache_dir=cache)  # another process: the file's choice
            out = array.array("f", [0.0] * n)
            t2[lambda c: blk.cdiv(n, c["BLOCK"])](out, x, n)
            self.assertEqual((t2.last_tuned, t2.last_config), (False, cfg))
            self.assertEqual(list(out), list(x))
            with self.assertRaises(ZeroDivisionError):  # an exception in the grid function reaches the caller
                t2[lambda c: 1 // 0](out, x, n + 1)
            t2.close()

    def test_blk_device_switch(self):
        old = os.environ.get("BLK_DEVICE")
        os.environ["BLK_DEVICE"] = "cpu"
        try:
            self.assertTrue(blk.Device().is_cpu)
            self.assertTrue(blk.Device(0).is_cpu)  # an unchanged GPU script lands on the CPU
        finally:
            if old is None:
                del os.environ["BLK_DEVICE"]
            else:
                os.environ["BLK_DEVICE"] = old

    def test_python_m_blk(self):
        r = subprocess.run([sys.executable, "-m", "blk", "--version"], capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertTrue(r.stdout.startswith("blk %s (library 0.1.0)" % blk.__version__), r.stdout)
        r = subprocess.run([sys.executable, "-m", "blk"], capture_output=True, text=True,
                           env=dict(os.environ, BLKRT_CUDA_LIBRARY="/nonexistent/libcuda.so.1"))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("compiler and runtime", r.stdout)


if __name__ == "__main__":
    unittest.main()

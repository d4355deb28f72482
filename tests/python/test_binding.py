"""Tests of the Python binding (runtime/python/blk) against libblkrt and the
fake CUDA driver of tests/runtime (no GPU, no torch).

Environment (set by CTest, tests/python/CMakeLists.txt):
  BLK_LIBBLKRT        libblkrt.so (target blkrt_shared)
  BLKRT_CUDA_LIBRARY  libfake_cuda.so (target fake_cuda)
  BLKC                blkc, to produce PTX from stdlib/ (--emit=ptx)
  BLK_SOURCE_DIR      the source tree
  PYTHONPATH          runtime/python

Run by hand: python3 -m unittest -v test_binding (from tests/python/).
"""
import ctypes
import os
import struct
import subprocess
import sys
import tempfile
import unittest

SRC = os.environ.get("BLK_SOURCE_DIR") or os.path.normpath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(SRC, "runtime", "python"))
import blk  # noqa: E402

FAKE = os.environ.get("BLKRT_CUDA_LIBRARY")
BLKC = os.environ.get("BLKC")


class FakeLaunch(ctypes.Structure):
    """fake_launch of tests/runtime/fake_cuda.h"""
    _fields_ = [("entry", ctypes.c_char * 128), ("device", ctypes.c_int), ("grid", ctypes.c_uint * 3),
                ("block", ctypes.c_uint * 3), ("shared", ctypes.c_uint), ("stream", ctypes.c_void_p),
                ("from_graph", ctypes.c_int), ("nparams", ctypes.c_int), ("param_size", ctypes.c_int * 64),
                ("param", (ctypes.c_ubyte * 8) * 64)]


class Fake:
    def __init__(self, path):
        self.lib = ctypes.CDLL(path)  # the same instance libblkrt dlopens
        self.lib.fake_fail_next.argtypes = [ctypes.c_char_p, ctypes.c_int]
        self.lib.fake_get_launch.argtypes = [ctypes.c_int, ctypes.POINTER(FakeLaunch)]
        self.lib.fake_count_calls.argtypes = [ctypes.c_char_p]
        self.lib.fake_live_allocs.restype = ctypes.c_long

    def reset(self):
        self.lib.fake_reset()

    def count(self):
        return self.lib.fake_launch_count()

    def last(self, back=1):
        lr = FakeLaunch()
        self.lib.fake_get_launch(self.count() - back, ctypes.byref(lr))
        return lr

    def param(self, launch, i):
        return bytes(launch.param[i])[:launch.param_size[i]]

    def fail_next(self, symbol, result):
        self.lib.fake_fail_next(symbol.encode(), result)

    def stall(self, on):
        """Launched work never finishes (a hung kernel)."""
        self.lib.fake_stall(1 if on else 0)

    def calls(self, symbol):
        return self.lib.fake_count_calls(symbol.encode())

    def live_allocs(self):
        return self.lib.fake_live_allocs()


def blkc_ptx(src, *extra):
    out = tempfile.NamedTemporaryFile(suffix=".ptx", delete=False)
    out.close()
    subprocess.run([BLKC, os.path.join(SRC, src), "--arch", "sm_90a", "-o", out.name] + list(extra), check=True)
    with open(out.name) as f:
        text = f.read()
    os.unlink(out.name)
    return text


def entry(name, params):
    return ".visible .entry %s(\n\t%s\n)\n{\n\tret;\n}\n" % (name, params)


HEAD = ".version 8.0\n.target sm_90a\n.address_size 64\n"
# every scalar kind, for the argument encodings
TYPES_PTX = (HEAD +
             "// blk-meta v1 kernel=types entry=types num_warps=1 shared=0 "
             "params=a:bool,b:i8,c:f16,d:bf16,e:f32,f:i64,g:u64,h:f64,i:*const.f16,j:f8e4m3,k:u32\n" +
             entry("types", ".param .u8 a, .param .u8 b, .param .b16 c, .param .b16 d, .param .f32 e, "
                            ".param .u64 f, .param .u64 g, .param .f64 h, .param .u64 i, .param .u8 j, .param .u32 k") +
             entry("raw_kernel", ".param .u64 p, .param .u32 n"))


class FakeTensor:
    """Looks like a torch tensor to the binding: data_ptr() and dtype."""

    class _DT:
        def __init__(self, s):
            self.s = s

        def __str__(self):
            return self.s

    def __init__(self, ptr, dtype="torch.float32"):
        self.ptr, self.dtype = ptr, FakeTensor._DT(dtype)

    def data_ptr(self):
        return self.ptr


class CudaArray:
    def __init__(self, ptr):
        self.__cuda_array_interface__ = {"data": (ptr, False), "shape": (4,), "typestr": "<f4", "version": 3}


@unittest.skipUnless(FAKE and os.path.exists(FAKE), "needs BLKRT_CUDA_LIBRARY (the fake driver)")
class FakeGPU(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.fake = Fake(FAKE)
        cls.dev = blk.Device(0)
        cls.ew_ptx = blkc_ptx("stdlib/elementwise.blk") if BLKC else None

    def setUp(self):
        self.fake.reset()

    def need_blkc(self):
        if not self.ew_ptx:
            self.skipTest("needs BLKC")

    def vadd(self):
        self.need_blkc()
        return self.dev.load_ptx(self.ew_ptx).kernel("vector_add")

    # -- devices
    def test_device(self):
        self.assertEqual(blk.device_count(), 2)  # the fake's default
        info = self.dev.info
        self.assertEqual(info.kind, "gpu")
        self.assertEqual(info.arch, "sm_90a")
        self.assertEqual(info.sm, 90)
        self.assertGreater(info.sm_count, 0)
        self.assertEqual(len(info.max_grid), 3)
        self.assertIn("Fake", info.name)
        self.assertIn("sm_90a", repr(self.dev))
        self.dev.synchronize()
        self.assertTrue(blk.library_path().endswith(".so"))
        self.assertEqual(blk.version(), "0.1.0")
        with blk.Device(1) as d1:
            self.assertEqual(d1.info.ordinal, 1)

    def test_no_such_device(self):
        with self.assertRaises(blk.Error) as cm:
            blk.Device(7)
        self.assertEqual(cm.exception.status_name, "BLKRT_ERR_NO_DEVICE")
        self.assertEqual(cm.exception.status, blk.BLKRT_ERR_NO_DEVICE)
        self.assertTrue(str(cm.exception).startswith("BLKRT_ERR_NO_DEVICE: "))

    # -- synchronisation with a deadline
    def test_timed_sync_names_the_hung_launch(self):
        k = self.vadd()
        s = blk.Stream(self.dev)
        k[7](0x10000, 0x20000, 0x30000, 12345, stream=s)
        self.dev.synchronize(timeout_ms=1000)  # finished work: no error
        s.synchronize(timeout_ms=1000)
        self.fake.stall(True)
        try:
            k[3](0x10000, 0x20000, 0x30000, 100, stream=s)
            for sync in (lambda: s.synchronize(timeout_ms=20), lambda: self.dev.synchronize(timeout_ms=20)):
                with self.assertRaises(blk.Error) as cm:
                    sync()
                self.assertEqual(cm.exception.status_name, "BLKRT_ERR_TIMEOUT")
                self.assertIn("vector_add", cm.exception.message)
        finally:
            self.fake.stall(False)
        s.synchronize(timeout_ms=1000)
        with self.assertRaises(blk.Error) as cm:
            self.dev.set_step_limit(1000)  # a GPU has no step budget
        self.assertEqual(cm.exception.status_name, "BLKRT_ERR_UNSUPPORTED")

    # -- modules from blkc's PTX
    def test_kernel_metadata(self):
        k = self.vadd()
        self.assertEqual(k.name, "vector_add")
        self.assertTrue(k.checked)
        self.assertEqual([p.name for p in k.params], ["x", "y", "out", "n"])
        self.assertEqual([p.type for p in k.params], ["*f32", "*f32", "*f32", "i32"])
        self.assertEqual(k.consts, {"BLOCK": 1024})
        self.assertEqual(k.const("BLOCK"), 1024)
        self.assertEqual(k.num_warps, 4)
        self.assertEqual(k.num_variants, 2)
        self.assertIn("vector_add(x: *f32", repr(k))
        act = self.dev.load_ptx(self.ew_ptx).kernel("activation")
        self.assertEqual(act.consts, {"ACT": 0, "BLOCK": 1024})

    def test_defines_and_num_warps(self):
        self.need_blkc()
        mod = self.dev.load_ptx(blkc_ptx("stdlib/softmax.blk", "--kernel", "softmax", "-D", "BLOCK=16384",
                                         "-D", "num_warps=16"))
        k = mod["softmax"]
        self.assertEqual(k.consts, {"BLOCK": 16384, "FAST": 0})
        self.assertEqual(k.num_warps, 16)
        k[7](0x10000, 0x20000, 16384, 12345)
        lr = self.fake.last()
        self.assertEqual(tuple(lr.block), (512, 1, 1))
        self.assertEqual(tuple(lr.grid), (7, 1, 1))
        self.assertEqual(lr.entry, b"softmax")  # 12345 is not divisible by 16: the generic variant
        self.assertIn("fake driver", mod.jit_log)

    def test_load_ptx_file_and_bytes(self):
        self.need_blkc()
        with tempfile.NamedTemporaryFile("w", suffix=".ptx", delete=False) as f:
            f.write(self.ew_ptx)
        try:
            self.assertEqual(self.dev.load_ptx_file(f.name).kernel("copy").params[1].name, "out")
        finally:
            os.unlink(f.name)
        self.assertEqual(self.dev.load_ptx(self.ew_ptx.encode()).kernel("copy").name, "copy")

    # -- launches: what the driver receives
    def test_launch_buffers(self):
        k = self.vadd()
        x, y, out = (self.dev.malloc(4096) for _ in range(3))
        k[blk.cdiv(1024, k.consts["BLOCK"]), ](x, y, out, 1024)
        lr = self.fake.last()
        self.assertEqual(lr.entry, b"vector_add__d16_d16_d16_d16")
        self.assertEqual(tuple(lr.grid), (1, 1, 1))
        self.assertEqual(tuple(lr.block), (128, 1, 1))
        self.assertEqual(lr.stream, None)
        self.assertEqual([struct.unpack("<Q", self.fake.param(lr, i))[0] for i in range(3)],
                         [x.data_ptr(), y.data_ptr(), out.data_ptr()])
        self.assertEqual(self.fake.param(lr, 3), struct.pack("<i", 1024))
        # n = 1000 is not divisible by 16: the generic variant
        k.launch((1,), x, y, out, 1000)
        self.assertEqual(self.fake.last().entry, b"vector_add")

    def test_max_programs(self):
        k = self.vadd()
        # the fake's multiprocessor holds 8 programs of 4 warps; device 0 has 132
        self.assertEqual(k.max_programs(0x1000, 0x2000, 0x3000, 1024), 8 * 132)
        self.assertEqual(self.fake.count(), 0)  # nothing launched
        with self.assertRaises(blk.Error) as cm:
            k.max_programs(0x1000, 0x2000, 0x3000)
        self.assertEqual(cm.exception.status_name, "BLKRT_ERR_INVALID_LAUNCH")
        self.assertIn("takes 4 arguments, got 3", str(cm.exception))

    def test_pointer_kinds(self):
        k = self.vadd()
        k[2, 3](0x1000, FakeTensor(0x2000), CudaArray(0x3000), 16)
        lr = self.fake.last()
        self.assertEqual(tuple(lr.grid), (2, 3, 1))
        self.assertEqual([struct.unpack("<Q", self.fake.param(lr, i))[0] for i in range(3)],
                         [0x1000, 0x2000, 0x3000])
        k[1](None, 0x10, 0x20, 16)  # None: the null pointer
        self.assertEqual(self.fake.param(self.fake.last(), 0), bytes(8))

    def test_grid_forms(self):
        k = self.vadd()
        k[lambda meta: (blk.cdiv(4096, meta["BLOCK"]),)](0x10, 0x20, 0x30, 4096)
        self.assertEqual(tuple(self.fake.last().grid), (4, 1, 1))
        k[(5, 6, 7)](0x10, 0x20, 0x30, 16)
        self.assertEqual(tuple(self.fake.last().grid), (5, 6, 7))
        for bad in ((1, 2, 3, 4), (-1,), (1 << 32,)):
            with self.assertRaises(blk.Error) as cm:
                k[bad](0x10, 0x20, 0x30, 16)
            self.assertEqual(cm.exception.status_name, "BLKRT_ERR_INVALID_LAUNCH")
        with self.assertRaises(blk.Error) as cm:
            k[0](0x10, 0x20, 0x30, 16)
        self.assertEqual(cm.exception.message,
                         "kernel 'vector_add': grid[0] is 0 (every grid dimension must be at least 1)")
        self.assertEqual(self.fake.count(), 2)

    def test_argument_errors(self):
        k = self.vadd()
        cases = [
            ((0x10, 0x20, 0x30), "kernel 'vector_add' takes 4 arguments, got 3"),
            ((0x10, 0x20, 0x30, 4, 5), "kernel 'vector_add' takes 4 arguments, got 5"),
            ((0x10, 0x20, 1.5, 16),
             "kernel 'vector_add': argument 3 'out' (*f32) needs a pointer (BLKRT_PTR), got a float (BLKRT_FLOAT)"),
            ((0x10, 0x20, 0x30, 1 << 32), "kernel 'vector_add': argument 4 'n' (i32): 4294967296 is out of range"),
            ((0x10, 0x20, 0x30, 2.0),
             "kernel 'vector_add': argument 4 'n' (i32) needs an integer (BLKRT_INT), got a float (BLKRT_FLOAT)"),
            ((0x10, 0x20, 0x30, FakeTensor(0x40)),
             "kernel 'vector_add': argument 4 'n' (i32) needs an integer (BLKRT_INT), got a pointer (BLKRT_PTR)"),
            ((FakeTensor(0x10, "torch.bfloat16"), 0x20, 0x30, 16),
             "kernel 'vector_add': argument 1 'x' (*f32) is a torch.bfloat16 tensor"),
            ((0x10, 0x20, 0x30, 1 << 70), "kernel 'vector_add': argument 4 'n' (i32): %d is out of range" % (1 << 70)),
            ((-5, 0x20, 0x30, 16), "kernel 'vector_add': argument 1 'x' (*f32): -5 is not a device address"),
            ((0x10, 0x20, 0x30, "16"), "kernel 'vector_add': argument 4 'n' (i32): cannot pass a str"),
        ]
        for args, msg in cases:
            with self.subTest(msg=msg):
                with self.assertRaises(blk.Error) as cm:
                    k[1](*args)
                self.assertEqual(cm.exception.status_name, "BLKRT_ERR_INVALID_LAUNCH")
                self.assertEqual(cm.exception.message, msg)
        self.assertEqual(self.fake.count(), 0)  # nothing reached the driver
        # numpy-style dtype names are checked too; a raw address bypasses the check
        with self.assertRaises(blk.Error):
            k[1](FakeTensor(0x10, "int32"), 0x20, 0x30, 16)
        k[1](FakeTensor(0x10, "float32"), FakeTensor(0x20, "something_else"), 0x30, 16)
        self.assertEqual(self.fake.count(), 1)

    def test_scalar_encodings(self):
        k = self.dev.load_ptx(TYPES_PTX).kernel("types")
        self.assertEqual(k.params[8].type, "*const.f16")
        k[1](True, -3, 1.0, 1.0, 0.1, -(1 << 40), (1 << 64) - 1, 2.5, FakeTensor(0x100, "torch.float16"), 1000.0,
             (1 << 32) - 1)
        lr = self.fake.last()
        got = [self.fake.param(lr, i) for i in range(11)]
        self.assertEqual(got[0], b"\x01")
        self.assertEqual(got[1], struct.pack("<b", -3))
        self.assertEqual(got[2], struct.pack("<H", 0x3C00))       # f16 1.0
        self.assertEqual(got[3], struct.pack("<H", 0x3F80))       # bf16 1.0
        self.assertEqual(got[4], struct.pack("<f", 0.1))
        self.assertEqual(got[5], struct.pack("<q", -(1 << 40)))
        self.assertEqual(got[6], b"\xff" * 8)                     # u64: the bit pattern
        self.assertEqual(got[7], struct.pack("<d", 2.5))
        self.assertEqual(got[8], struct.pack("<Q", 0x100))
        self.assertEqual(got[9], b"\x7e")                         # f8e4m3 saturates to 448
        self.assertEqual(got[10], struct.pack("<I", (1 << 32) - 1))
        # ints are accepted for float parameters (and converted)
        k[1](0, 0, 2, 2, 3, 0, 0, 4, 0, 1, 0)
        lr = self.fake.last()
        self.assertEqual(self.fake.param(lr, 2), struct.pack("<H", 0x4000))  # f16 2.0
        self.assertEqual(self.fake.param(lr, 4), struct.pack("<f", 3.0))
        with self.assertRaises(blk.Error) as cm:
            k[1](0, 128, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        self.assertEqual(cm.exception.message, "kernel 'types': argument 2 'b' (i8): 128 is out of range")

    def test_raw_kernels(self):
        mod = self.dev.load_ptx(TYPES_PTX)
        raw = mod.kernel("raw_kernel")
        self.assertFalse(raw.checked)
        self.assertEqual(raw.params, ())
        with self.assertRaises(blk.Error) as cm:
            raw[1](0x10, 4)
        self.assertIn("launch it with blkrt_launch_raw", cm.exception.message)
        raw.launch_raw((3,), (64,), [ctypes.c_uint64(0x1234), ctypes.c_uint32(99)], shared=256)
        lr = self.fake.last()
        self.assertEqual(lr.entry, b"raw_kernel")
        self.assertEqual((tuple(lr.grid), tuple(lr.block), lr.shared), ((3, 1, 1), (64, 1, 1), 256))
        self.assertEqual(self.fake.param(lr, 0), struct.pack("<Q", 0x1234))
        self.assertEqual(self.fake.param(lr, 1), struct.pack("<I", 99))

    # -- load errors surface with their messages
    def test_load_errors(self):
        with self.assertRaises(blk.Error) as cm:
            self.dev.load_ptx(HEAD + "// blk-meta v1 kernel=k entry=k num_warps=64 shared=0 params=\n" + entry("k", ""))
        self.assertEqual(cm.exception.status_name, "BLKRT_ERR_META")
        self.assertIn("blk-meta line 4", cm.exception.message)
        with self.assertRaises(blk.Error) as cm:
            self.dev.load_ptx(HEAD + "FAKE_JIT_ERROR something broke\n" + entry("k", ""))
        self.assertEqual(cm.exception.status_name, "BLKRT_ERR_JIT")
        self.assertIn("something broke", cm.exception.message)
        self.assertIn("JIT error log:", cm.exception.message)
        with self.assertRaises(blk.Error) as cm:
            self.dev.load_ptx(".version 9.9\n.target sm_90a\n" + entry("k", ""))
        self.assertEqual(cm.exception.status_name, "BLKRT_ERR_PTX_VERSION")
        mod = self.dev.load_ptx(TYPES_PTX)
        with self.assertRaises(blk.Error) as cm:
            mod.kernel("nope")
        self.assertEqual(cm.exception.status_name, "BLKRT_ERR_NOT_FOUND")
        with self.assertRaises(blk.Error) as cm:
            mod.kernel("types").const("BLOCK")
        self.assertEqual(cm.exception.status_name, "BLKRT_ERR_NOT_FOUND")
        with self.assertRaises(FileNotFoundError):
            self.dev.load_ptx_file("/nonexistent.ptx")

    def test_driver_failure(self):
        k = self.vadd()
        self.fake.fail_next("cuLaunchKernel", 719)  # CUDA_ERROR_LAUNCH_FAILED
        with self.assertRaises(blk.Error) as cm:
            k[1](0x10, 0x20, 0x30, 16)
        self.assertIn("cuLaunchKernel", cm.exception.message)
        self.assertIn(cm.exception.status_name, ("BLKRT_ERR_LAUNCH_FAILED", "BLKRT_ERR_DRIVER"))
        self.fake.fail_next("cuMemAlloc_v2", 2)  # CUDA_ERROR_OUT_OF_MEMORY
        with self.assertRaises(blk.Error) as cm:
            self.dev.malloc(1 << 20)
        self.assertEqual(cm.exception.status_name, "BLKRT_ERR_OUT_OF_MEMORY")

    # -- memory
    def test_memory(self):
        b = self.dev.malloc(64)
        self.assertIn("64 bytes", repr(b))
        b.copy_from_host(bytes(range(64)))
        self.assertEqual(bytes(b.copy_to_host()), bytes(range(64)))
        b.fill(7, nbytes=8)
        self.assertEqual(bytes(b.copy_to_host(nbytes=10)), b"\x07" * 8 + bytes([8, 9]))
        c = self.dev.malloc(64).copy_from(b)
        out = bytearray(64)
        c.copy_to_host(out)
        self.assertEqual(out[:9], b"\x07" * 8 + b"\x08")
        arr = (ctypes.c_float * 4)(1, 2, 3, 4)  # any buffer-protocol object
        c.copy_from_host(arr)
        back = (ctypes.c_float * 4)()
        c.copy_to_host(back, nbytes=16)
        self.assertEqual(list(back), [1.0, 2.0, 3.0, 4.0])
        s = self.dev.stream()
        c.copy_from_host(bytearray(b"abcd"), stream=s)
        c.fill(0, nbytes=2, stream=s)
        s.synchronize()
        self.assertEqual(bytes(c.copy_to_host(nbytes=4)), b"\x00\x00cd")
        with self.assertRaises(blk.Error):
            c.copy_from_host(bytes(65))
        with self.assertRaises(blk.Error):
            c.copy_to_host(bytearray(4))
        s.close()
        live = self.fake.live_allocs()
        b.close()
        c.close()
        self.assertEqual(self.fake.live_allocs(), live - 2)
        b.close()  # twice is fine

    # -- streams, graphs, events
    def test_streams(self):
        k = self.vadd()
        s = self.dev.stream()
        k[1](0x10, 0x20, 0x30, 16, stream=s)
        self.assertIsNotNone(self.fake.last().stream)
        for default in (None, 0, type("TorchStream", (), {"cuda_stream": 0})()):
            k[1](0x10, 0x20, 0x30, 16, stream=default)
            self.assertIsNone(self.fake.last().stream)
        # a foreign CUstream (a non-default torch stream; here the fake driver's
        # CUstream of s, read off the launch) is adopted, once per device
        k[1](0x10, 0x20, 0x30, 16, stream=s)
        raw = self.fake.last().stream
        torch_stream = type("TorchStream", (), {"cuda_stream": raw})()
        destroyed = self.fake.calls("cuStreamDestroy_v2")
        k[1](0x10, 0x20, 0x30, 17, stream=torch_stream)
        self.assertEqual(self.fake.last().stream, raw)
        k.launch(1, 0x10, 0x20, 0x30, 18, stream=raw)
        self.assertEqual(self.fake.last().stream, raw)
        self.assertEqual(len(self.dev._foreign), 1)
        with self.assertRaises(blk.Error) as cm:
            k[1](0x10, 0x20, 0x30, 16, stream="nope")
        self.assertEqual(cm.exception.status_name, "BLKRT_ERR_INVALID_VALUE")
        s.synchronize()
        s.close()
        self.assertEqual(self.fake.calls("cuStreamDestroy_v2"), destroyed + 1)  # s, not the adopted one

    def test_graph(self):
        k = self.vadd()
        s = self.dev.stream()
        with s.capture() as cap:
            k[1](0x10, 0x20, 0x30, 16, stream=s)
            k[2](0x10, 0x20, 0x30, 16, stream=s)
        self.assertIsNotNone(cap.graph)
        n = self.fake.count()
        cap.graph.launch()
        cap.graph.launch(stream=s)
        s.synchronize()
        self.assertEqual(self.fake.count(), n + 4)
        self.assertTrue(self.fake.last().from_graph)
        self.assertEqual(tuple(self.fake.last().grid), (2, 1, 1))
        # begin/end by hand; a failing capture body ends the capture and re-raises
        s.begin_capture()
        k[3](0x10, 0x20, 0x30, 16, stream=s)
        g = s.end_capture()
        g.launch()
        g.close()
        with self.assertRaises(blk.Error):
            with s.capture():
                k[1](0x10, 0x20, 0x30, stream=s)
        cap.graph.close()
        s.close()

    def test_events(self):
        e0, e1 = self.dev.event(), self.dev.event()
        e0.record()
        e1.record()
        e1.synchronize()
        self.assertGreaterEqual(e0.elapsed_ms(e1), 0.0)
        e0.close()
        e1.close()

    # -- lifetimes
    def test_closed_handles(self):
        self.need_blkc()
        with blk.Device(0) as d:
            mod = d.load_ptx(self.ew_ptx)
            k = mod.kernel("vector_add")
            launch = k[1]
            with self.assertRaises(blk.Error) as cm:
                d.close()  # a module is alive
            mod.close()
            for f in (lambda: launch(0x10, 0x20, 0x30, 16), lambda: k.launch(1, 0x10, 0x20, 0x30, 16)):
                with self.assertRaises(blk.Error) as cm:
                    f()
                self.assertEqual(cm.exception.status_name, "BLKRT_ERR_INVALID_HANDLE")
            with self.assertRaises(blk.Error) as cm:
                mod.kernel("copy")
            self.assertEqual(cm.exception.status_name, "BLKRT_ERR_INVALID_HANDLE")
        with self.assertRaises(blk.Error):
            d.malloc(16)

    def test_collected_objects_are_destroyed(self):
        import gc
        live = self.fake.live_allocs()
        for _ in range(10):
            self.dev.malloc(1024)
        gc.collect()
        self.assertEqual(self.fake.live_allocs(), live)


class CPUDevice(unittest.TestCase):
    def test_cpu_device(self):
        with blk.Device.cpu() as d:
            self.assertTrue(d.is_cpu)
            self.assertEqual(d.info.kind, "cpu")
            self.assertEqual(d.info.arch, "cpu")
            b = d.malloc(16)
            b.copy_from_host(b"0123456789abcdef")
            self.assertEqual(bytes(b.copy_to_host()), b"0123456789abcdef")
            with self.assertRaises(blk.Error) as cm:  # libblkrt.so has no compiler linked in
                d.load_source("kernel k() {}", defines={"BLOCK": 4, "EPS": 0.5})
            self.assertEqual(cm.exception.status_name, "BLKRT_ERR_NO_COMPILER")
            with self.assertRaises(blk.Error) as cm:
                d.load_ptx(HEAD)
            self.assertEqual(cm.exception.status_name, "BLKRT_ERR_UNSUPPORTED")
            b.close()


def run_py(code, **env):
    e = dict(os.environ)
    e["PYTHONPATH"] = os.pathsep.join(filter(None, [os.path.join(SRC, "runtime", "python"), e.get("PYTHONPATH")]))
    e.update(env)
    return subprocess.run([sys.executable, "-c", code], env=e, capture_output=True, text=True)


class Environment(unittest.TestCase):
    def test_no_driver(self):
        r = run_py("import blk\ntry:\n    blk.Device(0)\nexcept blk.Error as e:\n    print(e.status_name)\n",
                   BLKRT_CUDA_LIBRARY="/nonexistent/libcuda.so.1")
        self.assertEqual(r.stdout.strip(), "BLKRT_ERR_NO_DRIVER", r.stderr)

    def test_no_library(self):
        r = run_py("import blk\ntry:\n    blk.version()\nexcept blk.Error as e:\n    print(e.status_name, e.message)\n",
                   BLK_LIBBLKRT="/nonexistent/libblkrt.so")
        self.assertTrue(r.stdout.startswith("BLK_NO_LIBRARY libblk.so / libblkrt.so not found"), r.stdout + r.stderr)

    def test_import_needs_nothing(self):
        r = run_py("import sys, blk\nassert 'torch' not in sys.modules and 'numpy' not in sys.modules\n"
                   "print(blk.cdiv(10, 4))", BLK_LIBBLKRT="/nonexistent/libblkrt.so")
        self.assertEqual(r.stdout.strip(), "3", r.stderr)


if __name__ == "__main__":
    unittest.main()

"""Several GPUs from Python, against the fake driver with three devices
(FAKE_CUDA_DEVICES=3: 0 an H200 model, 1 and 2 an A100 model; FAKE_CUDA_PEERS=0-1)
and libblk.so (compiler + runtime). No GPU and no torch: tensors of cuda:N
are stand-ins with what blk reads of a torch tensor (data_ptr, get_device,
dtype), and a stand-in `torch` module gives the current stream and device.

  - a kernel launched on tensors of cuda:N runs on GPU N, its module copied
    there once (PTX, and source compiled per device), for blk.Buffers and
    DLPack producers too; closing the module closes its copies;
  - with stream=None it runs on torch's current stream of that device; a
    torch stream of another device is refused;
  - blk.Device() is torch's current device (a torch.distributed process's
    own GPU) unless BLK_DEVICE says otherwise;
  - peer access and peer copies (blk.Buffer.copy_from across GPUs);
  - the autotuner tunes per GPU model on the tensors' device.

Run by CTest (tests/python/CMakeLists.txt: python/multi_gpu).
"""
import ctypes
import os
import sys
import types
import unittest

from test_binding import FAKE, BLKC, Fake, blkc_ptx  # noqa: E402 (sets sys.path)
import blk  # noqa: E402

SRC = os.environ.get("BLK_SOURCE_DIR") or os.path.normpath(os.path.join(os.path.dirname(__file__), "..", ".."))


class CudaTensor:
    """A torch CUDA tensor as blk sees one."""

    class _DT:
        def __str__(self):
            return "torch.float32"

    dtype = _DT()

    def __init__(self, ptr, device):
        self.ptr, self.device_index = ptr, device

    def data_ptr(self):
        return self.ptr

    def get_device(self):
        return self.device_index


class DLPackCuda:
    """A CuPy array as far as the device goes: __dlpack_device__ on CUDA."""

    def __init__(self, ptr, device):
        self.ptr, self.device_index = ptr, device
        self.__cuda_array_interface__ = {"data": (ptr, False), "shape": (4,), "typestr": "<f4", "version": 3}

    def __dlpack_device__(self):
        return (2, self.device_index)


def fake_torch(streams=None, current=0):
    """A stand-in torch module: current raw streams per device, current device."""
    t = types.ModuleType("torch")
    t._C = types.SimpleNamespace(_cuda_getCurrentRawStream=lambda i: (streams or {}).get(i, 0))
    t.cuda = types.SimpleNamespace(is_available=lambda: True, current_device=lambda: current)
    return t


@unittest.skipUnless(FAKE and os.path.exists(FAKE), "needs BLKRT_CUDA_LIBRARY (the fake driver)")
class MultiGPU(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.fake = Fake(FAKE)
        if blk.device_count() != 3:
            raise unittest.SkipTest("needs FAKE_CUDA_DEVICES=3")
        cls.dev0 = blk.Device(0)
        cls.ew_ptx = blkc_ptx("stdlib/elementwise.blk") if BLKC else None

    def setUp(self):
        self.fake.reset()
        self.saved_torch = sys.modules.get("torch")

    def tearDown(self):
        if self.saved_torch is None:
            sys.modules.pop("torch", None)
        else:
            sys.modules["torch"] = self.saved_torch
        blk._raw_stream = None  # the stand-in's stream function is cached

    def vadd(self):
        if not self.ew_ptx:
            self.skipTest("needs BLKC")
        return self.dev0.load_ptx(self.ew_ptx).kernel("vector_add")

    def test_tensors_pick_the_device(self):
        k = self.vadd()
        for dev in (1, 2, 0, 1):
            x = CudaTensor(0x10000 * (dev + 1), dev)
            k[4](x, x, x, 4000)
            self.assertEqual(self.fake.last().device, dev)
        # one load per device: the module's own on 0, copies on 1 and 2 made once
        self.assertEqual(self.fake.calls("cuModuleLoadDataEx"), 3)
        self.assertIs(k.module.for_device(1), k.module.for_device(blk.gpu(1)))
        self.assertIs(k.module.for_device(0), k.module)
        # a CPU tensor or a plain address says nothing: the kernel's own device
        k[1](CudaTensor(0x1000, -1), 0x2000, 0x3000, 8)
        self.assertEqual(self.fake.last().device, 0)
        # blk.Buffer and DLPack producers say where they live
        b = blk.gpu(2).malloc(64)
        k[1](b, b, b, 16)
        self.assertEqual(self.fake.last().device, 2)
        k[1](DLPackCuda(0x5000, 1), 0x5000, 0x5000, 16)
        self.assertEqual(self.fake.last().device, 1)
        # the copy goes with its root
        copy_k = k.module.for_device(2).kernel("vector_add")
        k.module.close()
        with self.assertRaises(blk.Error) as e:
            copy_k[1](0x1000, 0x1000, 0x1000, 8)
        self.assertEqual(e.exception.status, blk.BLKRT_ERR_INVALID_HANDLE)

    def test_torch_current_stream(self):
        k = self.vadd()
        # a CUstream of device 1, made in its context as torch would
        lib = self.fake.lib
        ctx, cs, prev = ctypes.c_void_p(), ctypes.c_void_p(), ctypes.c_void_p()
        self.assertEqual(lib.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), 1), 0)
        self.assertEqual(lib.cuCtxPushCurrent_v2(ctx), 0)
        self.assertEqual(lib.cuStreamCreate(ctypes.byref(cs), 0), 0)
        lib.cuCtxPopCurrent_v2(ctypes.byref(prev))
        sys.modules["torch"] = fake_torch({1: cs.value})
        x1, x0 = CudaTensor(0x1000, 1), CudaTensor(0x1000, 0)
        k[1](x1, x1, x1, 8)
        last = self.fake.last()
        self.assertEqual((last.device, last.stream), (1, cs.value))
        k[1](x0, x0, x0, 8)  # device 0's current stream is the default one
        self.assertEqual((self.fake.last().device, self.fake.last().stream), (0, None))
        s = blk.gpu(1).stream()  # an explicit stream wins
        k[1](x1, x1, x1, 8, stream=s)
        self.assertNotIn(self.fake.last().stream, (None, cs.value))
        wrong = types.SimpleNamespace(cuda_stream=0x1234, device=types.SimpleNamespace(index=0))
        with self.assertRaises(blk.Error) as e:
            k[1](x1, x1, x1, 8, stream=wrong)
        self.assertIn("is on cuda:0, the launch on GPU 1", e.exception.message)
        s.close()
        lib.cuStreamDestroy_v2(cs)
        lib.cuDevicePrimaryCtxRelease_v2(1)

    def test_default_device_follows_torch(self):
        sys.modules["torch"] = fake_torch(current=2)
        saved = os.environ.pop("BLK_DEVICE", None)
        try:
            with blk.Device() as d:
                self.assertEqual(d.info.ordinal, 2)  # torchrun's process for GPU 2
            os.environ["BLK_DEVICE"] = "1"
            with blk.Device() as d:
                self.assertEqual(d.info.ordinal, 1)
        finally:
            os.environ.pop("BLK_DEVICE", None)
            if saved is not None:
                os.environ["BLK_DEVICE"] = saved

    def test_source_per_device(self):
        if not blk.has_compiler():
            self.skipTest("needs libblk.so")
        k = self.dev0.load_source_file(os.path.join(SRC, "stdlib", "elementwise.blk"), cache_dir="").kernel(
            "vector_add")
        for dev in (0, 1):
            x = CudaTensor(0x10000, dev)
            k[4](x, x, x, 4096)
            self.assertEqual(self.fake.last().device, dev)
        # one variant compiled and loaded per device (sm_90a, then sm_80)
        self.assertEqual(self.fake.calls("cuModuleLoadDataEx"), 2)
        k.module.close()

    def test_peers(self):
        g0, g1, g2 = blk.gpu(0), blk.gpu(1), blk.gpu(2)
        self.assertTrue(g0.can_access_peer(g1))
        self.assertFalse(g0.can_access_peer(g2))
        g0.enable_peer_access(g1)
        g0.enable_peer_access(g1)  # again: fine
        with self.assertRaises(blk.Error) as e:
            g0.enable_peer_access(g2)
        self.assertEqual(e.exception.status_name, "BLKRT_ERR_NO_PEER_ACCESS")
        self.assertIn("GPU 0 (Fake H200) cannot access the memory of GPU 2 (Fake A100) directly", e.exception.message)
        a, b = g0.malloc(256), g2.malloc(256)
        data = bytes(range(256))
        a.copy_from_host(data)
        b.copy_from(a)  # no peer path: the driver stages it
        self.assertEqual(bytes(b.copy_to_host()), data)
        self.assertEqual(self.fake.calls("cuMemcpyPeer"), 1)
        c = g1.malloc(256)
        s = g1.stream()
        c.copy_from(a, stream=s)
        s.synchronize()
        self.assertEqual(bytes(c.copy_to_host()), data)
        self.assertEqual(self.fake.calls("cuMemcpyPeerAsync"), 1)
        s.close()

    def test_autotuner_per_device(self):
        if not blk.has_compiler():
            self.skipTest("needs libblk.so")
        src = ("@autotune(key = [n], configs = [{BLOCK = 64}, {BLOCK = 128}])\n"
               "kernel twice(out: *f32, x: *f32, n: i32, const BLOCK: i32) {\n"
               "    let o = program_id(0) * BLOCK + arange(0, BLOCK);\n"
               "    store(out + o, load(x + o, o < n) * 2.0, o < n);\n}\n")
        t = self.dev0.autotuner(src, "twice", cache_dir="")
        x = CudaTensor(0x10000, 1)
        t[lambda c: blk.cdiv(1000, c["BLOCK"])](x, x, 1000, restore=False)
        self.assertTrue(t.last_tuned)
        self.assertEqual(self.fake.last().device, 1)
        t[lambda c: blk.cdiv(1000, c["BLOCK"])](x, x, 1000, restore=False)
        self.assertFalse(t.last_tuned)
        self.assertEqual(list(t._on), [1])
        t.close()


if __name__ == "__main__":
    unittest.main()

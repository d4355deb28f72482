"""The profiler and do_bench from Python (libblk.so): rows and table of
launches on the CPU device, stated work, reset; do_bench's call count,
flush, quantiles and errors on the CPU device and on the fake driver (its
launches counted through the fake's own hooks). No timing assertions.

Environment (CTest, tests/python/CMakeLists.txt): BLK_LIBBLKRT = libblk.so,
BLKRT_CUDA_LIBRARY = the fake driver, PYTHONPATH = runtime/python.
"""
import array
import ctypes
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import blk  # noqa: E402


class Profile(unittest.TestCase):
    def setUp(self):
        self.dev = blk.Device.cpu()
        self.va = self.dev.load_source_file(blk.stdlib("elementwise.blk"), kernel="vector_add",
                                            defines={"BLOCK": 128}).kernel("vector_add")
        self.n = 300
        self.x = array.array("f", [float(i) for i in range(self.n)])
        self.out = array.array("f", [0.0] * self.n)
        blk.profile_reset()

    def tearDown(self):
        blk.profile_enable(False)
        blk.profile_reset()

    def launch(self):
        self.va[blk.cdiv(self.n, 128),](self.x, self.x, self.out, self.n)

    def test_rows_and_table(self):
        self.launch()
        self.assertEqual(blk.profile_rows(), [], "off by default (no BLK_PROFILE)")
        blk.profile_enable()
        self.va.set_work(bytes=12 * self.n, flops=self.n)
        for _ in range(4):
            self.launch()
        self.assertEqual(self.out[299], 598.0)
        rows = blk.profile_rows()
        self.assertEqual(len(rows), 1)
        r = rows[0]
        self.assertEqual((r.kernel, r.config, r.device, r.launches), ("vector_add", "BLOCK=128,w4", blk.DEVICE_CPU, 4))
        self.assertGreaterEqual(r.min_ms, 0)
        self.assertLessEqual(r.min_ms, r.median_ms)
        self.assertLessEqual(r.median_ms, r.max_ms)
        self.assertEqual(r.bytes, 4 * 12 * self.n)
        self.assertEqual(r.flops, 4 * self.n)
        table = blk.profile_table()
        self.assertIn("vector_add", table)
        self.assertIn("BLOCK=128,w4", table)
        self.assertIn(" cpu ", table)
        blk.profile_reset()
        self.assertEqual(blk.profile_rows(), [])

    def test_do_bench_cpu(self):
        calls = []

        def fn():
            calls.append(1)
            self.launch()
        ms = blk.do_bench(fn, device=self.dev, warmup=2, rep=5, flush_bytes=1 << 16)
        self.assertEqual(len(calls), 7)
        self.assertGreater(ms, 0)
        lo, mid, hi = blk.do_bench(fn, device=self.dev, warmup=0, rep=9, quantiles=[0, 0.5, 1])
        self.assertEqual(len(calls), 16)
        self.assertTrue(0 <= lo <= mid <= hi)
        every = blk.do_bench(fn, device=self.dev, warmup=0, rep=3, flush_bytes=0, return_mode="all")
        self.assertEqual(len(every), 3)
        self.assertTrue(all(t >= 0 for t in every))

    def test_do_bench_errors(self):
        def bad_launch():
            self.va[1,](self.x)  # wrong argument count

        with self.assertRaises(blk.Error) as e:
            blk.do_bench(bad_launch, device=self.dev, warmup=0, rep=3)
        self.assertEqual(e.exception.status, blk.BLKRT_ERR_INVALID_LAUNCH)

        def boom():
            raise KeyError("mine")
        with self.assertRaises(KeyError):
            blk.do_bench(boom, device=self.dev)
        with self.assertRaises(ValueError):
            blk.do_bench(self.launch, device=self.dev, rep=0)


class FakeGpu(unittest.TestCase):
    def test_do_bench_and_profile_on_the_fake_driver(self):
        fake = ctypes.CDLL(os.environ["BLKRT_CUDA_LIBRARY"])
        fake.fake_reset()
        dev = blk.Device(0)
        k = dev.load_source_file(blk.stdlib("elementwise.blk"), kernel="vector_add").kernel("vector_add")
        buf = dev.malloc(4096)
        blk.profile_enable()
        try:
            ms = blk.do_bench(lambda: k[1,](buf, buf, buf, 1000), device=dev, warmup=1, rep=6)
            self.assertGreaterEqual(ms, 0)
            self.assertEqual(fake.fake_launch_count(), 7)
            self.assertEqual(fake.fake_count_calls(b"cuMemsetD8Async"), 6)  # one flush per timed run
            rows = blk.profile_rows()
            self.assertEqual([(r.kernel, r.config, r.device, r.launches) for r in rows],
                             [("vector_add", "BLOCK=1024,w4", 0, 7)])
        finally:
            blk.profile_enable(False)
            blk.profile_reset()


if __name__ == "__main__":
    unittest.main()

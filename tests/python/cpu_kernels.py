"""Stdlib kernels compiled from source by `import blk` and run on the CPU
device (the interpreter), checked against plain-Python references. No
dependency besides blk: host memory is array.array / bytearray / blk.Buffer /
an __array_interface__ object (and numpy arrays when numpy is importable).

Used by tests/python/test_source.py (in the build tree) and by
tests/python/pip_install.sh (in a fresh virtual environment, on the
pip-installed package). `python cpu_kernels.py` runs it alone; exit 0 = ok.
"""
import array
import ctypes
import math
import random
import sys

import blk


class ArrayInterface:
    """The smallest __array_interface__ producer (what numpy exposes)."""

    def __init__(self, typestr, n):
        self.storage = (ctypes.c_char * (n * int(typestr[2:])))()
        self.__array_interface__ = {"version": 3, "shape": (n,), "typestr": typestr,
                                    "data": (ctypes.addressof(self.storage), False)}

    def floats(self):
        return array.array("f", bytes(self.storage))


def close(a, b, tol=1e-5):
    return all(abs(x - y) <= tol * (1 + abs(y)) for x, y in zip(a, b)) and len(a) == len(b)


def run(dev=None, log=print):
    dev = dev or blk.Device()  # the CPU when BLK_DEVICE=cpu
    rng = random.Random(7)
    checked = []

    # elementwise.blk: vector_add from a file, with a define; array.array in,
    # an __array_interface__ object and a blk.Buffer out
    ew = dev.load_source_file(blk.stdlib("elementwise.blk"), defines={"BLOCK": 256})
    k = ew.kernel("vector_add")
    assert k.consts == {"BLOCK": 256}, k.consts
    n = 1000
    x = array.array("f", [rng.uniform(-4, 4) for _ in range(n)])
    y = array.array("f", [rng.uniform(-4, 4) for _ in range(n)])
    want = [float(array.array("f", [a + b])[0]) for a, b in zip(x, y)]
    out = ArrayInterface("<f4", n)
    k[blk.cdiv(n, k.consts["BLOCK"])](x, y, out, n)
    assert close(out.floats(), want, 0), "vector_add into __array_interface__"
    buf = dev.malloc(4 * n)
    k[lambda c: blk.cdiv(n, c["BLOCK"])](x, y, buf, n)
    assert close(array.array("f", bytes(buf.copy_to_host())), want, 0), "vector_add into blk.Buffer"
    assert k.max_programs(x, y, buf, n) == 1, "the interpreter runs one program at a time"
    checked.append("elementwise.vector_add")

    # softmax.blk: rows of a bytearray (buffer protocol, no element type)
    sm = dev.load_source_file(blk.stdlib("softmax.blk"), defines={"BLOCK": 128}).kernel("softmax")
    rows, cols = 5, 100
    inp = array.array("f", [rng.gauss(0, 2) for _ in range(rows * cols)])
    res = bytearray(4 * rows * cols)
    sm[rows](res, inp, cols, cols)
    got = array.array("f", bytes(res))
    for r in range(rows):
        row = inp[r * cols:(r + 1) * cols]
        m = max(row)
        e = [math.exp(v - m) for v in row]
        s = sum(e)
        assert close(got[r * cols:(r + 1) * cols], [v / s for v in e], 1e-5), "softmax row %d" % r
    checked.append("softmax.softmax")

    # reduce.blk: row sums
    rs = dev.load_source_file(blk.stdlib("reduce.blk"), kernel="row_sum", defines={"BLOCK": 128}).kernel("row_sum")
    sums = array.array("f", [0.0] * rows)
    rs[rows](sums, inp, cols, cols)
    assert close(sums, [sum(inp[r * cols:(r + 1) * cols]) for r in range(rows)], 1e-4), "row_sum"
    checked.append("reduce.row_sum")

    # source text with an import of the stdlib, and a float argument
    mod = dev.load_source('import "elementwise.blk" as ew;\n'
                          'kernel scaled_relu(x: *f32, out: *f32, n: i32, s: f32, const BLOCK: i32 = 64) {\n'
                          '    let o = program_id(0) * BLOCK + arange(0, BLOCK);\n'
                          '    store(out + o, ew.relu(load(x + o, o < n)) * s, o < n);\n'
                          '}\n')
    kr = mod.kernel("scaled_relu")
    out2 = array.array("f", [0.0] * n)
    kr[blk.cdiv(n, 64)](x, out2, n, 0.5)
    assert close(out2, [max(v, 0.0) * 0.5 for v in x], 1e-6), "scaled_relu"
    checked.append("source text with an import")

    # the element type of typed host memory is checked
    try:
        k[4](array.array("d", [0.0] * n), y, out2, n)
    except blk.Error as e:
        assert e.status_name == "BLKRT_ERR_INVALID_LAUNCH" and "f64" in e.message, e
    else:
        raise AssertionError("an f64 array for an *f32 parameter was accepted")

    # compile errors come back as blk.Error with the diagnostics
    try:
        dev.load_source("kernel bad(x: *f32) { store(x, nope); }\n", path="bad.blk")
    except blk.Error as e:
        assert e.status_name == "BLKRT_ERR_COMPILE" and "bad.blk:1:" in e.message, e
    else:
        raise AssertionError("a bad source loaded")

    try:
        import numpy as np
    except ImportError:
        np = None
    if np is not None:
        a = np.arange(n, dtype=np.float32)
        o = np.empty_like(a)
        k[blk.cdiv(n, 256)](a, a, o, n)
        assert (o == 2 * a).all(), "numpy"
        checked.append("numpy arrays")
    log("cpu_kernels: %s on %s: ok (%s)" % (blk.library_path(), dev.info.name, ", ".join(checked)))
    return checked


if __name__ == "__main__":
    run()
    sys.exit(0)

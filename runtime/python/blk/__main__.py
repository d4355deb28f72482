"""python -m blk [--version]: the package, its library and the devices."""
import sys

import blk


def main(argv):
    if argv[1:] == ["--version"]:
        print("blk %s (library %s)" % (blk.__version__, blk.version()))
        return 0
    if argv[1:]:
        print("usage: python -m blk [--version]", file=sys.stderr)
        return 2
    print("blk %s" % blk.__version__)
    print("library: %s (%s)" % (blk.library_path(), "compiler and runtime" if blk.has_compiler()
                                else "runtime only: no JIT from source, no CPU device kernels"))
    try:
        print("stdlib: %s" % blk.stdlib())
    except blk.Error as e:
        print("stdlib: %s" % e.message)
    try:
        n = blk.device_count()
    except blk.Error as e:
        n = 0
        print("GPUs: none (%s)" % e.status_name)
    for i in range(n):
        d = blk.Device(i)
        print("GPU %d: %s (%s)" % (i, d.info.name, d.info.arch))
        d.close()
    print("CPU device: the interpreter (BLK_DEVICE=cpu selects it)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

"""setuptools glue of pyproject.toml: puts libblk.so and stdlib/*.blk into the
package at build time.

libblk.so comes from $BLK_LIBBLK (a built libblk.so: bundled as it is), else
it is built here: CMake configures this repository (two levels up) in
$BLK_CMAKE_BUILD_DIR (default build-py/ at the repository root, reused by
later installs) and builds the `blk` target only. The wheel is tagged for the
platform, not pure Python, since it carries a shared library.
"""
import glob
import os
import shutil
import subprocess

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.dist import Distribution

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))


def libblk_path():
    given = os.environ.get("BLK_LIBBLK")
    if given:
        if not os.path.isfile(given):
            raise SystemExit("BLK_LIBBLK=%s: no such file" % given)
        return given
    if not os.path.isfile(os.path.join(ROOT, "CMakeLists.txt")):
        raise SystemExit("libblk.so: set BLK_LIBBLK to a built libblk.so (no blk source tree at %s)" % ROOT)
    build = os.environ.get("BLK_CMAKE_BUILD_DIR") or os.path.join(ROOT, "build-py")
    subprocess.check_call(["cmake", "-S", ROOT, "-B", build, "-DCMAKE_BUILD_TYPE=Release"])
    subprocess.check_call(["cmake", "--build", build, "--target", "blk", "-j", str(os.cpu_count() or 2)])
    return os.path.join(build, "runtime", "libblk.so")


class BuildWithLibblk(build_py):
    def run(self):
        super().run()
        pkg = os.path.join(self.build_lib, "blk")
        lib = libblk_path()
        dst = os.path.join(pkg, "libblk.so")
        # Debug info is two thirds of a RelWithDebInfo libblk.so: stripped,
        # the wheel is smaller and builds faster (BLK_NO_STRIP=1 keeps it).
        strip = shutil.which("strip")
        if strip and not os.environ.get("BLK_NO_STRIP"):
            subprocess.check_call([strip, "--strip-unneeded", "-o", dst, os.path.realpath(lib)])
        else:
            shutil.copyfile(os.path.realpath(lib), dst)
        os.chmod(dst, 0o755)
        stdlib = os.path.join(pkg, "stdlib")
        os.makedirs(stdlib, exist_ok=True)
        for f in glob.glob(os.path.join(ROOT, "stdlib", "*.blk")):
            shutil.copy(f, stdlib)


class BinaryDistribution(Distribution):
    def has_ext_modules(self):
        return True


setup(cmdclass={"build_py": BuildWithLibblk}, distclass=BinaryDistribution)

#!/bin/bash
# bundle_python.sh DIR — libblk.so for the Python GPU check (tests/gpu/python_gpu.py).
#
#   bash tests/gpu/bundle_python.sh build-pycarry
#
# Builds the `blk` target (LLVM linked statically, the default) in
# build-py-static/ (Release), strips it into DIR/libblk.so (~43 MB: carry DIR
# alone, it does not fit beside gpu_check's bundle in one 64 MiB carry) and
# checks that it needs nothing the GPU machine lacks (no LLVM there).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
DIR=${1:?usage: bundle_python.sh DIR}
case "$DIR" in /*) ;; *) DIR="$ROOT/$DIR" ;; esac
BUILD=${BLK_BUNDLE_BUILD:-$ROOT/build-py-static}
cmake -S "$ROOT" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$BUILD" -j"${JOBS:-2}" --target blk >/dev/null
mkdir -p "$DIR"
strip --strip-unneeded -o "$DIR/libblk.so" "$BUILD/runtime/libblk.so"
bad=$(ldd "$DIR/libblk.so" | grep -v -E 'linux-vdso|ld-linux|libc\.so|libm\.so|libstdc\+\+\.so|libgcc_s\.so|libdl\.so|libpthread\.so|librt\.so' || true)
if [ -n "$bad" ]; then
  echo "bundle_python.sh: libblk.so needs libraries the GPU machine may not have:" >&2
  echo "$bad" >&2
  exit 1
fi
ls -la "$DIR/libblk.so"

#!/bin/bash
# bundle_multi_gpu.sh DIR — what tests/gpu/multi_gpu.sh needs on a machine
# with several GPUs and no LLVM, built here into DIR (a path .gitignore
# ignores, e.g. build-mgpu/, so that the device call names it in `carry`):
#
#   bash tests/gpu/bundle_multi_gpu.sh build-mgpu
#
#   libblk.so         compiler + runtime for Python (tests/gpu/bundle_python.sh:
#                     LLVM linked in statically, stripped, ~43 MB)
#   test_gpu_multi    the C multi-GPU test (tests/gpu/test_gpu_multi.c): libblkrt
#                     alone, linked statically, stripped
#   multi_vadd.ptx    its kernel, stdlib vector_add compiled by blkc for sm_80
#                     (the driver JIT-compiles it for newer GPUs)
#   MANIFEST          commit, sizes, what each binary links
# Built in build-py-static/ (Release), the build bundle_python.sh uses.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
DIR=${1:?usage: bundle_multi_gpu.sh DIR}
case "$DIR" in /*) ;; *) DIR="$ROOT/$DIR" ;; esac
BUILD=${BLK_BUNDLE_BUILD:-$ROOT/build-py-static}

bash "$ROOT/tests/gpu/bundle_python.sh" "$DIR"
cmake --build "$BUILD" -j"${JOBS:-2}" --target test_gpu_multi gpu_multi_ptx >/dev/null
strip -o "$DIR/test_gpu_multi" "$BUILD/tests/gpu/test_gpu_multi"
cp "$BUILD/tests/gpu/multi_vadd.ptx" "$DIR/multi_vadd.ptx"
chmod +x "$DIR/test_gpu_multi"

bad=$(ldd "$DIR/test_gpu_multi" | grep -v -E 'linux-vdso|ld-linux|libc\.so|libm\.so|libdl\.so|libpthread\.so|librt\.so' || true)
if [ -n "$bad" ]; then
  echo "bundle_multi_gpu.sh: test_gpu_multi needs libraries the GPU machine may not have:" >&2
  echo "$bad" >&2
  exit 1
fi
{
  echo "blk multi-GPU bundle"
  echo "built: $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(uname -n), commit $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo '?')$(git -C "$ROOT" diff --quiet 2>/dev/null || echo ' (dirty tree)')"
  ls -l "$DIR" | tail -n +2 | grep -v MANIFEST
  echo "ldd test_gpu_multi:"
  ldd "$DIR/test_gpu_multi"
} > "$DIR/MANIFEST"
total=$(du -cb "$DIR"/* | tail -1 | cut -f1)
echo "bundle_multi_gpu.sh: $DIR: $(du -sh "$DIR" | cut -f1) ($total bytes)"
if [ "$total" -gt $((60 * 1024 * 1024)) ]; then
  echo "bundle_multi_gpu.sh: warning: over 60 MB; the tree that travels is limited to 64 MiB" >&2
fi

#!/bin/bash
# bundle.sh DIR — build the carry bundle for the GPU machine (docs/gpu-testing.md).
#
#   bash tests/gpu/bundle.sh build-carry
#
# Builds gpu_check self-contained (LLVM linked statically: -DBLK_LLVM_STATIC=ON,
# Release) in build-gc-static/, strips it and puts into DIR (a path inside the
# repo that .gitignore ignores, e.g. build-carry/, so that the device call must
# name it in `carry`):
#   gpu_check           the GPU suite + compile-bench + launch-bench + a PTX emitter,
#                       and `gpu_check index-diff ARGS`: index_diff (random index
#                       arithmetic, GPU against the interpreter), and
#                       `gpu_check kernel-diff ARGS`: kernel_diff (random kernels
#                       over the other op families, tests/gpu/kernel_diff.c). It is the
#                       gpu_tools target: one binary, since LLVM static twice
#                       (~41 MB each) would not fit the 64 MiB tree
#   libblkrt.so         the runtime for bindings (Python ctypes)
#   gpu_assert_trap     a failed device_assert and a hung kernel, each in a
#   assert_trap.ptx     process of its own (tests/gpu/assert_trap.c; libc only)
#   run_on_device.sh    a copy of tests/gpu/run_on_device.sh
#   decoder/            examples/decoder: decoder (the decoder_aot build: libblkrt
#                       linked in, no LLVM), ptx/ (its six kernels for sm_90a) and
#                       check_torch.py; docs/tutorials/10-decoder-block.md runs them
#   MANIFEST            what was built, from which commit, sizes, ldd
# The stdlib sources travel with the tree (stdlib/). Needs libzstd-dev (static
# libzstd.a) and LLVM 22's static libraries, as for the static blkc.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
DIR=${1:?usage: bundle.sh DIR}
case "$DIR" in /*) ;; *) DIR="$ROOT/$DIR" ;; esac
BUILD=${BLK_BUNDLE_BUILD:-$ROOT/build-gc-static}
JOBS=${JOBS:-2}

cmake -S "$ROOT" -B "$BUILD" -DBLK_LLVM_STATIC=ON -DCMAKE_BUILD_TYPE=Release >/dev/null
make -C "$BUILD" -j"$JOBS" gpu_tools blkrt_shared gpu_assert_trap decoder_aot decoder_ptx >/dev/null

mkdir -p "$DIR"
rm -f "$DIR/gpu_check" "$DIR/index_diff" "$DIR/libblkrt.so" "$DIR/run_on_device.sh" "$DIR/MANIFEST" \
      "$DIR/gpu_assert_trap" "$DIR/assert_trap.ptx"
strip -o "$DIR/gpu_check" "$BUILD/tests/gpu/gpu_tools"
strip -o "$DIR/gpu_assert_trap" "$BUILD/tests/gpu/gpu_assert_trap"
cp "$BUILD/tests/gpu/assert_trap.ptx" "$DIR/assert_trap.ptx"
strip --strip-unneeded -o "$DIR/libblkrt.so" "$BUILD/runtime/libblkrt.so"
cp "$ROOT/tests/gpu/run_on_device.sh" "$DIR/run_on_device.sh"
chmod +x "$DIR/gpu_check" "$DIR/gpu_assert_trap" "$DIR/run_on_device.sh"
rm -rf "$DIR/decoder"
mkdir -p "$DIR/decoder/ptx"
strip -o "$DIR/decoder/decoder" "$BUILD/examples/decoder_aot"
cp "$BUILD"/examples/decoder_ptx/*.ptx "$DIR/decoder/ptx/"
cp "$ROOT/examples/decoder/check_torch.py" "$DIR/decoder/"

# Only the C/C++ runtime may remain dynamic: the GPU machine has no LLVM.
for bin in "$DIR/gpu_check" "$DIR/decoder/decoder"; do
  bad=$(ldd "$bin" | grep -v -E 'linux-vdso|ld-linux|libc\.so|libm\.so|libstdc\+\+\.so|libgcc_s\.so|libdl\.so|libpthread\.so|librt\.so' || true)
  if [ -n "$bad" ]; then
    echo "bundle.sh: $bin needs libraries the GPU machine may not have:" >&2
    echo "$bad" >&2
    exit 1
  fi
done
glibc=$(objdump -T "$DIR/gpu_check" | grep -o 'GLIBC_[0-9.]*' | sort -uV | tail -1)
glibcxx=$(objdump -T "$DIR/gpu_check" | grep -o 'GLIBCXX_[0-9.]*' | sort -uV | tail -1 || true)
{
  echo "blk carry bundle"
  echo "built: $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(uname -n), commit $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo '?')$(git -C "$ROOT" diff --quiet 2>/dev/null || echo ' (dirty tree)')"
  echo "needs: $glibc ${glibcxx:-} (newest symbol versions used)"
  ls -l "$DIR" | tail -n +2 | grep -v MANIFEST
  ls -l "$DIR/decoder" "$DIR/decoder/ptx"
  echo "ldd gpu_check:"
  ldd "$DIR/gpu_check"
} > "$DIR/MANIFEST"
total=$(du -cb "$DIR"/* | tail -1 | cut -f1)
echo "bundle.sh: $DIR: $(du -sh "$DIR" | cut -f1) ($total bytes); gpu_check needs $glibc ${glibcxx:-}"
if [ "$total" -gt $((48 * 1024 * 1024)) ]; then
  echo "bundle.sh: warning: the bundle is over 48 MB; the tree that travels is limited to 64 MiB" >&2
fi

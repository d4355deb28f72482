#!/bin/bash
# compare_builds.sh [-jN] [FILE.blk...] — does blkc's output depend on the C
# compiler that built it, or on its optimisation level? (issue 13: wrong code
# from undefined behaviour, evaluation order or uninitialised memory in the
# compiler shows up as a difference between such builds.)
#
# Builds blkc twice, in their own build dirs — gcc -O3 (build-cmp-gcc-O3) and
# clang -O0 (build-cmp-clang-O0; CLANG=clang-22 or whatever `clang` is) — then
# runs tests/tools/ptx_identical.sh with the first as the reference and the
# second checked against it: Block IR after sema of every file, PTX for sm_90a
# and sm_80 of every kernel (and of every "// PTXAS:" configuration),
# diagnostics and exit statuses included. Default files: every .blk under
# stdlib/ and tests/, except tests/diag (error inputs: tests/tools/diag.sh
# compares those) and the inputs that exist to be slow (tests/regress/hang_*,
# sort_long_compiles), plus GEN (default 100) random kernels of kernel_diff
# (tests/gpu/kernel_diff.c --keep, seed GEN_SEED, default 1; KERNEL_DIFF names
# the binary, default build/tests/gpu/kernel_diff; left out when it is not
# built): masks, reductions, scans, casts, control flow, atomics, dot.
# Exit 0: identical; 1: outputs differ (named); 0 with "skipped:" when a
# compiler is missing.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT" || exit 2
JOBS=2
if [ $# -gt 0 ] && [[ $1 == -j* ]]; then JOBS=${1#-j}; shift; fi
GCC=${GCC:-gcc}
CLANG=${CLANG:-}
if [ -z "$CLANG" ]; then
  for c in clang-22 clang-21 clang-20 clang-19 clang-18 clang; do
    command -v "$c" >/dev/null 2>&1 && { CLANG=$c; break; }
  done
fi
command -v "$GCC" >/dev/null 2>&1 || { echo "skipped: no gcc"; exit 0; }
[ -n "$CLANG" ] && command -v "$CLANG" >/dev/null 2>&1 || { echo "skipped: no clang"; exit 0; }

A=${BUILD_A:-build-cmp-gcc-O3}
B=${BUILD_B:-build-cmp-clang-O0}
# CMAKE_BUILD_TYPE=None: only the flags given here (the top-level default is
# RelWithDebInfo, -O2)
build() { # DIR CC CFLAGS
  mkdir -p "$1"
  cmake -S . -B "$1" -DCMAKE_C_COMPILER="$2" -DCMAKE_BUILD_TYPE=None -DCMAKE_C_FLAGS="$3" >"$1/compare_build.log" 2>&1 &&
    cmake --build "$1" -j"$JOBS" --target blkc >>"$1/compare_build.log" 2>&1 ||
    { echo "error: building $1 failed (see $1/compare_build.log)"; exit 2; }
}
t0=$(date +%s)
build "$A" "$GCC" "-O3 -DNDEBUG"
build "$B" "$CLANG" "-O0 -g"
echo "built: $A ($($GCC --version | head -1), -O3), $B ($($CLANG --version | head -1), -O0) in $(($(date +%s) - t0)) s"

explicit=$*
if [ $# -eq 0 ]; then
  mapfile -t files < <(find stdlib tests -name '*.blk' -not -path 'tests/diag/*' -not -name 'hang_*' \
                         -not -name 'sort_long_compiles.blk' | sort)
  set -- "${files[@]}"
fi
ref=${TMPDIR:-/tmp}/compare_builds.$$
gen=${TMPDIR:-/tmp}/compare_builds_gen.$$
trap 'rm -rf "$ref" "$gen"' EXIT
KD=${KERNEL_DIFF:-build/tests/gpu/kernel_diff}
if [ "${GEN:-100}" -gt 0 ] && [ -x "$KD" ] && [ -z "${explicit:-}" ]; then
  BLKRT_CACHE_DIR= "$KD" --device cpu --count "${GEN:-100}" --seed "${GEN_SEED:-1}" --keep "$gen" >/dev/null
  set -- "$@" "$gen"/*.blk
  echo "with $(ls "$gen" | wc -l) kernel_diff kernels (seed ${GEN_SEED:-1}; one: $KD --device cpu --seed ${GEN_SEED:-1} --only K --keep DIR)"
fi
t1=$(date +%s)
sh tests/tools/ptx_identical.sh "$A/blkc" "$ref" save "$@" >/dev/null
out=$(sh tests/tools/ptx_identical.sh "$B/blkc" "$ref" check "$@")
rc=$?
echo "$out" | grep '^DIFFERS' | head -50
errs=$(find "$ref" -name '*.err' -size +0 | wc -l)
echo "compare_builds: $# files, $(echo "$out" | tail -1) (gcc -O3 vs $CLANG -O0; $errs outputs are diagnostics/refusals, compared too; $(($(date +%s) - t1)) s)"
exit $rc

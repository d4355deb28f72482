#!/bin/sh
# golden.sh BLKC FILECHECK FILE.blk
# The file names what to print with a line "// EMIT: ir-after=canonicalize"
# (default: ir) and optional "// ARGS: -D BLOCK=64 --kernel k"; its CHECK
# lines are matched by FileCheck against blkc's output (against its stderr,
# the diagnostics and remarks, with a line "// CHECK-STDERR: yes").
blkc=$1; filecheck=$2; src=$3
# "// INPUT: stdlib/softmax.blk": compile that file of the repository instead
# (the CHECK lines stay in this one)
input=$(sed -n 's|^// INPUT: *||p' "$src" | head -n 1)
if [ -n "$input" ]; then input="$(cd "$(dirname "$0")/../.." && pwd)/$input"; else input=$src; fi
# "// ENV: BLK_CLUSTER=1": that environment variable set for blkc (a codegen
# knob that is off by default)
env=$(sed -n 's|^// ENV: *||p' "$src" | head -n 1)
if [ -n "$env" ]; then export "${env?}"; fi
emit=$(sed -n 's|^// EMIT: *||p' "$src" | head -n 1)
args=$(sed -n 's|^// ARGS: *||p' "$src" | head -n 1)
[ -n "$emit" ] || emit=ir
stderr=$(sed -n 's|^// CHECK-STDERR: *||p' "$src" | head -n 1)
if [ -n "$stderr" ]; then
  # "// CHECK-STDERR: yes": check the diagnostics (remarks, warnings) instead of the output
  # shellcheck disable=SC2086
  "$blkc" --emit="$emit" $args "$input" -o /dev/null 2> "${TMPDIR:-/tmp}/golden.$$.out" || { echo "blkc failed on $src"; cat "${TMPDIR:-/tmp}/golden.$$.out"; rm -f "${TMPDIR:-/tmp}/golden.$$.out"; exit 1; }
else
# shellcheck disable=SC2086
"$blkc" --emit="$emit" $args "$input" -o - > "${TMPDIR:-/tmp}/golden.$$.out" || { echo "blkc failed on $src"; rm -f "${TMPDIR:-/tmp}/golden.$$.out"; exit 1; }
fi
"$filecheck" --dump-input=fail "$src" < "${TMPDIR:-/tmp}/golden.$$.out"; rc=$?
rm -f "${TMPDIR:-/tmp}/golden.$$.out"
exit $rc

#!/bin/sh
# golden.sh BLKC FILECHECK FILE.blk
# The file names what to print with a line "// EMIT: ir-after=canonicalize"
# (default: ir) and optional "// ARGS: -D BLOCK=64 --kernel k"; its CHECK
# lines are matched by FileCheck against blkc's output.
blkc=$1; filecheck=$2; src=$3
emit=$(sed -n 's|^// EMIT: *||p' "$src" | head -n 1)
args=$(sed -n 's|^// ARGS: *||p' "$src" | head -n 1)
[ -n "$emit" ] || emit=ir
# shellcheck disable=SC2086
"$blkc" --emit="$emit" $args "$src" -o - > "${TMPDIR:-/tmp}/golden.$$.out" || { echo "blkc failed on $src"; rm -f "${TMPDIR:-/tmp}/golden.$$.out"; exit 1; }
"$filecheck" --dump-input=fail "$src" < "${TMPDIR:-/tmp}/golden.$$.out"; rc=$?
rm -f "${TMPDIR:-/tmp}/golden.$$.out"
exit $rc

#!/bin/sh
# diag.sh BLKC FILE.blk
# Every "// EXPECT: LINE:COL: error: message" line of the file must appear in
# blkc's stderr as "FILE:LINE:COL: error: message" (exactly that line), and
# blkc must exit with status 1. "// ARGS:" adds command-line arguments.
blkc=$1; src=$2
args=$(sed -n 's|^// ARGS: *||p' "$src" | head -n 1)
out="${TMPDIR:-/tmp}/diag.$$.err"
# shellcheck disable=SC2086
"$blkc" --emit=ir $args "$src" -o /dev/null 2> "$out"; rc=$?
fail=0
if [ "$rc" != 1 ]; then echo "expected exit status 1, got $rc"; fail=1; fi
n=0
while IFS= read -r want; do
  [ -n "$want" ] || continue
  n=$((n + 1))
  if ! grep -qxF -- "$src:$want" "$out"; then echo "missing diagnostic: $src:$want"; fail=1; fi
done <<EOT
$(sed -n 's|^.*// EXPECT: *||p' "$src")
EOT
if [ "$n" = 0 ] || ! grep -q 'EXPECT:' "$src"; then echo "no EXPECT lines in $src"; fail=1; fi
if [ $fail != 0 ]; then echo "--- blkc stderr:"; cat "$out"; fi
rm -f "$out"
exit $fail

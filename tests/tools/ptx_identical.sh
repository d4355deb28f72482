#!/bin/sh
# ptx_identical.sh BLKC REFDIR [save|check] [FILE.blk...] — the refactoring
# check: every kernel of every FILE (default: stdlib/*.blk, tests/gpu/*.blk,
# tests/ptx/*.blk) compiled to PTX for sm_90a and sm_80, in its default
# configuration and in each "// PTXAS: KERNEL -D ..." configuration (the
# kernels tests/ptx/ptxas.sh enumerates), plus each file's Block IR after
# sema (only that with IR_ONLY=1: cheap, for many files, errors compared
# too). `save` writes them under REFDIR (run it with the blkc from before a
# change); `check` (the default) compiles them again and compares byte for
# byte, naming every output that differs. Exit 0: all identical.
blkc=$1; ref=$2; mode=${3:-check}
[ -n "$blkc" ] && [ -n "$ref" ] || { echo "usage: $0 BLKC REFDIR [save|check] [FILE.blk...]" >&2; exit 2; }
shift 2; [ $# -gt 0 ] && shift
[ $# -gt 0 ] || set -- stdlib/*.blk tests/gpu/*.blk tests/ptx/*.blk
tmp=${TMPDIR:-/tmp}/ptx_identical.$$; mkdir -p "$tmp" "$ref"; trap 'rm -rf "$tmp"' EXIT
out=$ref; [ "$mode" = save ] || out=$tmp
n=0; differ=0
# one output: NAME, then the blkc arguments
emit() {
  name=$1; shift
  "$blkc" "$@" -o "$out/$name" 2> "$out/$name.err" < /dev/null || echo "exit $?" >> "$out/$name.err"
  n=$((n + 1))
  [ "$mode" = save ] && return
  for f in "$name" "$name.err"; do
    [ -e "$ref/$f" ] || [ -e "$out/$f" ] || continue # no output either time (an error: .err compares)
    if ! cmp -s "$ref/$f" "$out/$f"; then echo "DIFFERS: $f"; differ=$((differ + 1)); fi
  done
}
for src in "$@"; do
  base=$(echo "$src" | tr / _)
  emit "$base.sema.ir" "$src" --emit=ir-after=sema
  kernels=$(sed -n 's/^[[:space:]]*kernel[[:space:]]\{1,\}\([A-Za-z_][A-Za-z0-9_]*\).*/\1/p' "$src")
  [ "${IR_ONLY:-0}" = 1 ] && continue
  configs=$(sed -n 's|^// PTXAS: *||p' "$src")
  c=0
  while read -r k defs; do
    [ -n "$k" ] || continue
    c=$((c + 1))
    for arch in sm_90a sm_80; do
      # shellcheck disable=SC2086 # defs: -D options, split on purpose
      emit "$base.$k.$c.$arch.ptx" "$src" --kernel "$k" $defs --arch "$arch" --emit=ptx
    done
  done <<EOF2
$kernels
$configs
EOF2
done
if [ "$mode" = save ]; then echo "saved $n outputs in $ref"; exit 0; fi
echo "$n outputs compared, $differ differ"
[ "$differ" = 0 ]

#!/bin/sh
# ptxas.sh BLKC PTXAS FILE.blk — every kernel of FILE through the PTX backend
# for sm_80 and sm_90a, each result assembled by ptxas: proves the PTX is
# valid (not that it computes the right thing: that is tests/gpu), and that
# no wgmma was serialised (ptxas C75xx warnings fail).
# Exit 77 (CTest: skipped) when ptxas is not installed.
# A line "// PTXAS: KERNEL -D NAME=VALUE ..." in FILE adds a configuration of
# KERNEL (compiled and assembled like the defaults); -lineinfo there is also
# given to ptxas.
blkc=$1; ptxas=$2; src=$3
if [ -z "$ptxas" ] || [ ! -x "$ptxas" ]; then
  echo "SKIP: ptxas not found (install the CUDA toolkit or put ptxas on PATH)"; exit 77
fi
tmp=${TMPDIR:-/tmp}/ptxas.$$; mkdir -p "$tmp"; trap 'rm -rf "$tmp"' EXIT
kernels=$(sed -n 's/^[[:space:]]*kernel[[:space:]]\{1,\}\([A-Za-z_][A-Za-z0-9_]*\).*/\1/p' "$src")
[ -n "$kernels" ] || { echo "no kernels in $src"; exit 1; }
fail=0; ok=0
configs=$(sed -n 's|^// PTXAS: *||p' "$src")
while read -r k defs; do
  [ -n "$k" ] || continue
  for arch in sm_80 sm_90a; do
    # shellcheck disable=SC2086 # defs: -D options, split on purpose
    if ! "$blkc" "$src" --kernel "$k" $defs --arch "$arch" -o "$tmp/$k.$arch.ptx" 2> "$tmp/err" < /dev/null; then
      # a @cluster kernel on an arch without clusters: refused by design (docs/language.md)
      if grep -q "needs thread-block clusters, which $arch does not have" "$tmp/err"; then
        echo "skip: $k on $arch (@cluster: no thread-block clusters)"; continue
      fi
      echo "FAIL: blkc $src --kernel $k $defs --arch $arch"; cat "$tmp/err"; fail=1; continue
    fi
    if ! grep -q "^// blk-meta v1 kernel=$k " "$tmp/$k.$arch.ptx"; then
      echo "FAIL: $k ($arch): no blk-meta line"; fail=1
    fi
    pflags=""; case " $defs " in *" -lineinfo "*) pflags="-lineinfo";; esac
    # shellcheck disable=SC2086 # pflags: empty or one option
    if ! "$ptxas" $pflags -arch="$arch" "$tmp/$k.$arch.ptx" -o "$tmp/out.cubin" 2> "$tmp/perr" < /dev/null; then
      echo "FAIL: ptxas -arch=$arch on $k $defs"; cat "$tmp/perr"; fail=1; continue
    fi
    # wgmma serialised for lack of registers or because other code touched
    # its accumulators (C7510/C7511/C7515...), setmaxnreg ignored (C7508):
    # valid PTX, but the Hopper path it promises is gone — a failure
    if grep -E "C75[0-9][0-9]|wgmma" "$tmp/perr" > /dev/null; then
      echo "FAIL: ptxas -arch=$arch on $k $defs warns:"; cat "$tmp/perr"; fail=1; continue
    fi
    ok=$((ok + 1))
  done
done <<EOF
$kernels
$configs
EOF
echo "$src: $ok assembled"
exit $fail

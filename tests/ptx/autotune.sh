#!/bin/sh
# autotune.sh BLKC PTXAS FILE.blk... — every @autotune config of every kernel
# of the FILEs (as `blkc --emit=autotune` lists them for the runtime's
# autotuner) compiled for sm_90a and assembled by ptxas, with the checks of
# ptxas.sh (no wgmma serialised, no setmaxnreg dropped): a config the tuner
# would time must be valid PTX for the GPUs the stdlib is tuned on. (On an
# sm_80 a config may need more shared memory than the GPU has; blkc refuses
# it with a located error and the tuner skips it.)
# Exit 77 (CTest: skipped) when ptxas is not installed.
blkc=$1; ptxas=$2; shift 2
if [ -z "$ptxas" ] || [ ! -x "$ptxas" ]; then
  echo "SKIP: ptxas not found (install the CUDA toolkit or put ptxas on PATH)"; exit 77
fi
tmp=${TMPDIR:-/tmp}/autotune.$$; mkdir -p "$tmp"; trap 'rm -rf "$tmp"' EXIT
fail=0; ok=0
for src in "$@"; do
  "$blkc" --emit=autotune "$src" > "$tmp/lines" < /dev/null || { echo "FAIL: blkc --emit=autotune $src"; fail=1; continue; }
  # // blk-autotune v1 kernel=K key=A,B configs=N:V,N:V;N:V
  while read -r _ _ _ kf _ cf; do
    k=${kf#kernel=}; configs=${cf#configs=}
    echo "$configs" | tr ';' '\n' > "$tmp/configs"
    while read -r c; do
      defs=$(echo "$c" | tr ',' '\n' | sed 's/^\([^:]*\):\(.*\)$/-D \1=\2/' | tr '\n' ' ')
      # shellcheck disable=SC2086 # defs: -D options, split on purpose
      if ! "$blkc" "$src" --kernel "$k" $defs --arch sm_90a -o "$tmp/k.ptx" 2> "$tmp/err" < /dev/null; then
        echo "FAIL: blkc $src --kernel $k $defs"; cat "$tmp/err"; fail=1; continue
      fi
      if ! "$ptxas" -arch=sm_90a "$tmp/k.ptx" -o "$tmp/k.cubin" 2> "$tmp/perr" < /dev/null; then
        echo "FAIL: ptxas on $k $defs"; cat "$tmp/perr"; fail=1; continue
      fi
      if grep -E "C75[0-9][0-9]|wgmma" "$tmp/perr" > /dev/null; then
        echo "FAIL: ptxas on $k $defs warns:"; cat "$tmp/perr"; fail=1; continue
      fi
      ok=$((ok + 1))
    done < "$tmp/configs"
  done < "$tmp/lines"
done
[ "$ok" -gt 0 ] || { echo "FAIL: no @autotune config in $*"; exit 1; }
echo "autotune: $ok configs assembled"
exit $fail

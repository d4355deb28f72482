#!/bin/sh
# ptx_each.sh BLKC FILE.blk OUT.ptx ARCH — the main job's step for one stdlib
# file: the whole file to PTX; where the backend refuses it, each kernel on
# its own (--kernel), so that one kernel the backend cannot lower does not
# hide the others. Prints one line per file (or per kernel when split) and
# exits 1 only when a kernel fails for another reason than an unsupported
# operation ("is not yet supported by the PTX backend" / "needs sm_...").
blkc=$1 src=$2 out=$3 arch=$4
err=$(mktemp) || exit 1
trap 'rm -f "$err"' EXIT
if "$blkc" "$src" --arch "$arch" -o "$out" 2>"$err"; then
  echo "stdlib: $src -> $out ($(grep -c 'blk-meta' "$out") kernel entries)"
  exit 0
fi
status=0
for k in $("$blkc" "$src" --emit=meta-front | sed -n 's/.* kernel=\([A-Za-z_0-9]*\) .*/\1/p'); do
  kout="${out%.ptx}.$k.ptx"
  if "$blkc" "$src" --kernel "$k" --arch "$arch" -o "$kout" 2>"$err"; then
    echo "stdlib: $src kernel $k -> $kout"
  elif grep -q -e 'not yet supported by the PTX backend' -e 'needs sm_' "$err"; then
    echo "stdlib: $src kernel $k SKIPPED for $arch: $(grep -m1 'error:' "$err" | sed 's/.*error: //')"
  else
    cat "$err" >&2
    status=1
  fi
done
exit $status

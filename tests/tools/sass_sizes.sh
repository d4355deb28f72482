#!/bin/bash
# sass_sizes.sh — does a compiler change make any kernel's machine code
# bigger or hungrier? (issue 9: the compile-time work may cut LLVM passes, but
# not kernel speed.)
#
#   sass_sizes.sh snap BLKC DIR [BLKC_FLAGS...]   measure every stdlib entry
#   sass_sizes.sh diff BEFORE_DIR AFTER_DIR       compare two snapshots
#   sass_sizes.sh ptxdir DIR [ARCH]               measure DIR/*.ptx (e.g. the
#                                                 bench configurations of
#                                                 tests/bench/build_ptx.sh)
#
# snap compiles every stdlib/*.blk (at its default consts, and at each
# "// PTXAS: KERNEL -D ..." configuration of the file) with BLKC for sm_90a
# and sm_80, assembles the PTX with ptxas -v for the same arch ($PTXAS, else
# /usr/local/cuda/bin/ptxas, else PATH) and writes DIR/sizes.txt, one line per
# entry:  FILE[:CONFIG] ARCH ENTRY SASS_INSTRUCTIONS REGISTERS SPILL_BYTES
# (spill = spill stores + spill loads, bytes). The instruction count comes from
# `cuobjdump -sass` ($CUOBJDUMP, /usr/local/cuda/bin, PATH) where there is one,
# else from the size of the cubin's .text.ENTRY section / 16 (every SASS
# instruction of sm_70 and newer is 16 bytes; the two agree, padding
# included). Kernels the backend refuses for an arch (unsupported operation,
# "needs sm_...") are left out, as tests/tools/ptx_each.sh does.
#
# ptxdir measures PTX files that exist already (for ARCH, default sm_90a),
# one label per file (its name without .ptx), into DIR/sizes.txt.
#
# diff prints every entry whose instruction count, registers or spills grew
# (and the entries only one side has), then a summary; exit 1 if any grew.
#
# Example (the compile-time change of issue 9, before = a copy of the old blkc):
#   tests/tools/sass_sizes.sh snap /tmp/blkc_old /tmp/sass_before
#   tests/tools/sass_sizes.sh snap build/blkc /tmp/sass_after
#   tests/tools/sass_sizes.sh diff /tmp/sass_before /tmp/sass_after
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)

find_tool() { # NAME ENVVALUE
  if [ -n "$2" ]; then echo "$2"; return; fi
  if [ -x "/usr/local/cuda/bin/$1" ]; then echo "/usr/local/cuda/bin/$1"; return; fi
  command -v "$1" 2>/dev/null
}

# One PTX file -> its entries' lines (appended to $out). $1 PTX, $2 arch, $3 label
measure() {
  local ptx=$1 arch=$2 label=$3 cubin=${1%.ptx}.cubin log=${1%.ptx}.ptxas
  if ! "$PTXAS" -arch="$arch" -v "$ptx" -o "$cubin" >"$log" 2>&1; then
    echo "ptxas failed: $label $arch ($log)" >&2
    return 1
  fi
  local e
  for e in $(sed -n 's/^\.visible \.entry \([A-Za-z0-9_$]*\)(.*/\1/p' "$ptx"); do
    local n regs spill
    if [ -n "$CUOBJDUMP" ]; then
      n=$("$CUOBJDUMP" -sass -fun "$e" "$cubin" | grep -cE '^\s+/\*[0-9a-f]{4}\*/')
    else
      n=$(readelf -S -W "$cubin" 2>/dev/null | awk -v s=".text.$e" '{for (i = 1; i <= NF; i++) if ($i == s) print $(i + 4)}')
      [ -n "$n" ] && n=$((0x$n / 16))
    fi
    # ptxas -v: "Compiling entry function 'E' for 'ARCH'", then the spills line, then "Used N registers"
    regs=$(awk -v e="'$e'" '/Compiling entry function/ {on = ($7 == e)} on && /Used [0-9]+ registers/ {for (i = 1; i <= NF; i++) if ($i == "Used") print $(i + 1); on = 0}' "$log")
    spill=$(awk -v e="'$e'" '/Compiling entry function/ {on = ($7 == e)} on && /spill stores/ {s = 0; for (i = 1; i <= NF; i++) if ($i == "spill") s += $(i - 2); print s; on = 0}' "$log")
    echo "$label $arch $e ${n:-?} ${regs:-?} ${spill:-0}"
  done
}

snap() {
  local blkc=$1 dir=$2
  shift 2
  mkdir -p "$dir" || exit 2
  : >"$dir/sizes.txt"
  local f arch status=0
  for f in "$ROOT"/stdlib/*.blk; do
    local base
    base=$(basename "$f" .blk)
    for arch in sm_90a sm_80; do
      # the default consts: the whole file, else kernel by kernel (as ptx_each.sh)
      if "$blkc" "$f" --arch "$arch" "$@" -o "$dir/$base.$arch.ptx" 2>"$dir/err"; then
        measure "$dir/$base.$arch.ptx" "$arch" "$base" >>"$dir/sizes.txt" || status=1
      else
        local k
        for k in $("$blkc" "$f" --emit=meta-front | sed -n 's/.* kernel=\([A-Za-z_0-9]*\) .*/\1/p'); do
          if "$blkc" "$f" --kernel "$k" --arch "$arch" "$@" -o "$dir/$base.$k.$arch.ptx" 2>"$dir/err"; then
            measure "$dir/$base.$k.$arch.ptx" "$arch" "$base" >>"$dir/sizes.txt" || status=1
          elif ! grep -q -e 'not yet supported by the PTX backend' -e 'needs sm_' "$dir/err"; then
            cat "$dir/err" >&2
            status=1
          fi
        done
      fi
      # each // PTXAS: configuration (kernel and -D flags)
      local i=0 cfg
      while IFS= read -r cfg; do
        i=$((i + 1))
        local k=${cfg%% *} defs=${cfg#* }
        # shellcheck disable=SC2086 # the -D flags are words
        if "$blkc" "$f" --kernel "$k" $defs --arch "$arch" "$@" -o "$dir/$base.cfg$i.$arch.ptx" 2>"$dir/err"; then
          measure "$dir/$base.cfg$i.$arch.ptx" "$arch" "$base:cfg$i" >>"$dir/sizes.txt" || status=1
        elif ! grep -q -e 'not yet supported by the PTX backend' -e 'needs sm_' "$dir/err"; then
          cat "$dir/err" >&2
          status=1
        fi
      done < <(sed -n 's|^// PTXAS: *||p' "$f")
    done
  done
  rm -f "$dir/err"
  echo "$(wc -l <"$dir/sizes.txt") entries -> $dir/sizes.txt"
  return $status
}

diff_snaps() {
  awk '
    NR == FNR { k = $1 " " $2 " " $3; n[k] = $4; r[k] = $5; s[k] = $6; next }
    {
      k = $1 " " $2 " " $3; seen[k] = 1
      if (!(k in n)) { print "only after:  " k; odd++; next }
      total++
      if ($4 > n[k] || $5 > r[k] || $6 > s[k]) {
        printf "GREW  %s  insts %s -> %s  regs %s -> %s  spill %s -> %s\n", k, n[k], $4, r[k], $5, s[k], $6; grew++
      } else if ($4 < n[k] || $5 < r[k] || $6 < s[k]) {
        printf "shrank %s  insts %s -> %s  regs %s -> %s  spill %s -> %s\n", k, n[k], $4, r[k], $5, s[k], $6; shrank++
      }
      before += n[k]; after += $4
    }
    END {
      for (k in n) if (!(k in seen)) { print "only before: " k; odd++ }
      printf "%d entries compared: %d grew, %d shrank, %d unchanged, %d on one side only; SASS instructions %d -> %d\n",
             total, grew, shrank, total - grew - shrank, odd, before, after
      exit grew > 0 || odd > 0
    }' "$1/sizes.txt" "$2/sizes.txt"
}

PTXAS=$(find_tool ptxas "${PTXAS:-}")
CUOBJDUMP=$(find_tool cuobjdump "${CUOBJDUMP:-}")
case "${1:-}" in
  snap)
    [ $# -ge 3 ] || { echo "usage: $0 snap BLKC DIR [BLKC_FLAGS...]" >&2; exit 2; }
    [ -n "$PTXAS" ] || { echo "skipped: no ptxas"; exit 0; }
    shift
    snap "$@"
    ;;
  ptxdir)
    [ $# -ge 2 ] || { echo "usage: $0 ptxdir DIR [ARCH]" >&2; exit 2; }
    [ -n "$PTXAS" ] || { echo "skipped: no ptxas"; exit 0; }
    : >"$2/sizes.txt"
    st=0
    for p in "$2"/*.ptx; do measure "$p" "${3:-sm_90a}" "$(basename "$p" .ptx)" >>"$2/sizes.txt" || st=1; done
    echo "$(wc -l <"$2/sizes.txt") entries -> $2/sizes.txt"
    exit $st
    ;;
  diff)
    [ $# -eq 3 ] || { echo "usage: $0 diff BEFORE_DIR AFTER_DIR" >&2; exit 2; }
    diff_snaps "$2" "$3"
    ;;
  *) echo "usage: $0 snap BLKC DIR [BLKC_FLAGS...] | ptxdir DIR [ARCH] | diff BEFORE_DIR AFTER_DIR" >&2; exit 2 ;;
esac

#!/bin/sh
# build_ptx.sh DIR — compile every configuration of tests/bench/configs.txt
# to PTX for sm_90a into DIR (DIR/TAG.ptx), check each with ptxas where it is
# installed (DIR/ptxas.txt: registers and spills), and put libblkrt.so and a
# manifest (commit, date, blkc version) next to them. DIR is then everything
# the GPU machine needs besides the source tree:
#   python3 tests/bench/bench.py --ptx-dir DIR --out $OUT
# Environment: BLKC (default: build-py/blkc, build/blkc, blkc on PATH),
# BLK_LIBBLKRT (default: build-py/runtime/libblkrt.so, build/runtime/...),
# PTXAS (default: ptxas on PATH or /usr/local/cuda/bin/ptxas; "" skips it),
# ARCH (default sm_90a), CONFIGS (an extended regex: only the tags it
# matches, e.g. CONFIGS='^(matmul|mmdesc|attn)\.' for a quick run).
set -u
[ $# -eq 1 ] || { echo "usage: $0 DIR" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
out=$1
mkdir -p "$out" || exit 1
out=$(cd "$out" && pwd)
arch=${ARCH:-sm_90a}

pick() { for f in "$@"; do [ -n "$f" ] && [ -x "$f" ] && { echo "$f"; return 0; }; done; return 1; }
blkc=${BLKC:-$(pick "$root/build-py/blkc" "$root/build/blkc" "$(command -v blkc)")} ||
    { echo "build_ptx.sh: no blkc (set BLKC)" >&2; exit 1; }
if [ -z "${PTXAS+x}" ]; then
    PTXAS=$(pick "$(command -v ptxas)" /usr/local/cuda/bin/ptxas) || PTXAS=
fi
lib=${BLK_LIBBLKRT:-}
if [ -z "$lib" ]; then
    for f in "$root/build-py/runtime/libblkrt.so" "$root/build/runtime/libblkrt.so"; do
        [ -f "$f" ] && { lib=$f; break; }
    done
fi

rm -f "$out"/*.ptx "$out/ptxas.txt" "$out/errors.txt"
# configs.txt: TAG SOURCE KERNEL [NAME=VALUE ...]; '#' starts a comment
grep -v '^[[:space:]]*#' "$here/configs.txt" | while read -r tag src kernel defs; do
    [ -n "$tag" ] || continue
    if [ -n "${CONFIGS:-}" ] && ! echo "$tag" | grep -Eq "$CONFIGS"; then continue; fi
    if [ ! -f "$root/$src" ]; then
        echo "skip $tag: $src does not exist" >&2
        echo "skip $tag" >> "$out/errors.txt"
        continue
    fi
    dargs=
    for d in $defs; do dargs="$dargs -D $d"; done
    # shellcheck disable=SC2086
    if ! "$blkc" "$root/$src" -I "$root/stdlib" --kernel "$kernel" $dargs --arch "$arch" -o "$out/$tag.ptx" 2> "$out/$tag.err"; then
        echo "FAIL $tag: blkc $src --kernel $kernel$dargs" >&2
        cat "$out/$tag.err" >&2
        { echo "FAIL $tag (blkc)"; cat "$out/$tag.err"; } >> "$out/errors.txt"
        rm -f "$out/$tag.ptx" "$out/$tag.err"
        continue
    fi
    rm -f "$out/$tag.err"
    if [ -n "$PTXAS" ]; then
        if ! "$PTXAS" -arch="$arch" -v "$out/$tag.ptx" -o /dev/null > "$out/$tag.ptxas" 2>&1; then
            echo "FAIL $tag: ptxas rejects the PTX" >&2
            cat "$out/$tag.ptxas" >&2
            { echo "FAIL $tag (ptxas)"; cat "$out/$tag.ptxas"; } >> "$out/errors.txt"
            rm -f "$out/$tag.ptx" "$out/$tag.ptxas"
            continue
        fi
        # one line per entry: TAG entry: registers, spills
        awk -v tag="$tag" '/Compiling entry function/ { e = $0; sub(/.*function ./, "", e); sub(/. for .*/, "", e) }
             /bytes stack frame/ { s = $0; sub(/.*ptxas info *: */, "", s) }
             /Used [0-9]+ registers/ { r = $0; sub(/.*Used /, "", r); sub(/,.*/, "", r); print tag, e ":", r, "|", s }' \
            "$out/$tag.ptxas" >> "$out/ptxas.txt"
        rm -f "$out/$tag.ptxas"
    fi
    echo "ok   $tag" >&2
done

n=$(ls "$out"/*.ptx 2>/dev/null | wc -l)
if [ -n "$lib" ] && [ -f "$lib" ]; then
    cp "$lib" "$out/libblkrt.so"
else
    echo "build_ptx.sh: no libblkrt.so found (build target blkrt_shared or set BLK_LIBBLKRT);" \
         "bench.py will try to build one with cc" >&2
fi
commit=$(git -C "$root" rev-parse HEAD 2>/dev/null || echo unknown)
dirty=$(git -C "$root" status --porcelain 2>/dev/null | grep -v '^??' | head -1)
{
    echo "commit $commit${dirty:+ (+ uncommitted changes)}"
    echo "date $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "blkc $("$blkc" --version 2>&1 | head -1)"
    echo "arch $arch"
    echo "ptxas ${PTXAS:+$("$PTXAS" --version 2>&1 | tail -1)}"
    echo "kernels $n"
} > "$out/manifest.txt"
echo "build_ptx.sh: $n PTX files in $out" >&2
if [ -f "$out/errors.txt" ] && grep -q '^FAIL' "$out/errors.txt"; then
    echo "build_ptx.sh: some configurations failed (see $out/errors.txt)" >&2
    exit 1
fi
exit 0

#!/bin/sh
# determinism.sh BLKC STDLIB_DIR WORK — the same source and options give
# byte-identical output, whatever the process around the compiler looks like.
#
# Every kernel of every STDLIB_DIR/*.blk is compiled twice, each time in its
# own process, as --emit=ptx for sm_90a and for sm_80, --emit=ir and
# --emit=meta:
#   run A: `env -i` (PATH only), cwd WORK/a, TMPDIR WORK/a/tmp, the -D options
#          in one order;
#   run B: a polluted environment (other locale, TZ, HOME, TMPDIR, cwd,
#          MALLOC_PERTURB_ so fresh heap memory is not zero, ~400 extra
#          variables so the stack and heap start elsewhere), the -D options in
#          the reverse order.
# ASLR stays as it is, so addresses differ between the runs. stdout, stderr
# (diagnostics too must be deterministic) and the exit status must be
# identical. A kernel the backend refuses (dot; a @cluster kernel for sm_80)
# compares its diagnostics.
# BLK_LIBDEVICE, an input of the compiler, is passed to both runs when set.
set -u
blkc=$1; stdlib=$2; work=$3
rm -rf "$work"; mkdir -p "$work/a/tmp" "$work/b/tmp" "$work/b/home" "$work/out"
case $blkc in /*) ;; *) blkc=$(pwd)/$blkc ;; esac
case $stdlib in /*) ;; *) stdlib=$(pwd)/$stdlib ;; esac
keep=""
[ -n "${BLK_LIBDEVICE:-}" ] && keep="BLK_LIBDEVICE=$BLK_LIBDEVICE"

# ~400 junk variables for run B
junk=""
i=0
while [ $i -lt 400 ]; do junk="$junk DET_JUNK_$i=$i$i$i$i$i$i$i$i"; i=$((i + 1)); done

run_a() { # out-prefix args...
    p=$1; shift
    (cd "$work/a" && env -i PATH=/usr/bin:/bin TMPDIR="$work/a/tmp" $keep "$blkc" "$@" >"$p.out" 2>"$p.err"; echo $? >"$p.rc")
}
run_b() {
    p=$1; shift
    (cd "$work/b" && env LC_ALL=de_DE.UTF-8 LANG=tr_TR.UTF-8 LC_NUMERIC=de_DE.UTF-8 TZ=Asia/Kathmandu \
        HOME="$work/b/home" TMPDIR="$work/b/tmp" XDG_CACHE_HOME="$work/b/home" MALLOC_PERTURB_=165 \
        BLKRT_CACHE_DIR="$work/b/tmp" $junk $keep "$blkc" "$@" >"$p.out" 2>"$p.err"; echo $? >"$p.rc")
}

fail=0; n=0; ok_ptx=0; refused=0
for src in "$stdlib"/*.blk; do
    base=$(basename "$src" .blk)
    kernels=$(sed -n 's/^[[:space:]]*kernel[[:space:]]\{1,\}\([A-Za-z_][A-Za-z0-9_]*\).*/\1/p' "$src")
    for k in $kernels; do
        # -D: the kernel's const parameters at their default values (from its
        # meta; none if the backend refuses it). (Names no kernel has are an
        # error since -D is checked, tests/cli/cli.sh.)
        defs=$(cd "$work/a" && "$blkc" "$src" --kernel "$k" --emit=meta 2>/dev/null | head -1 |
               sed -n 's/.* consts=\([^ ]*\).*/\1/p' | tr ',' '\n' | awk -F: 'NF == 3 { print $1 "=" $3 }')
        fwd="$defs"
        rev=$(for d in $fwd; do echo "$d"; done | awk '{ l[NR] = $0 } END { for (i = NR; i > 0; i--) print l[i] }')
        da=""; for d in $fwd; do da="$da -D $d"; done
        db=""; for d in $rev; do db="$db -D $d"; done
        for emit in ptx:sm_90a ptx:sm_80 ir meta; do
            kind=${emit%%:*}
            arch=sm_90a
            [ "$kind" = ptx ] && arch=${emit#*:}
            o=$work/out/$base.$k.$kind.$arch
            run_a "$o.A" "$src" --kernel "$k" --emit="$kind" --arch "$arch" $da
            run_b "$o.B" "$src" $db --arch "$arch" --emit="$kind" --kernel "$k"
            n=$((n + 1))
            for part in out err rc; do
                if ! cmp -s "$o.A.$part" "$o.B.$part"; then
                    echo "FAIL: $base.blk kernel $k --emit=$kind --arch $arch: $part differs"
                    diff "$o.A.$part" "$o.B.$part" | head -10
                    fail=1
                fi
            done
            if [ "$kind" = ptx ]; then
                if [ "$(cat "$o.A.rc")" = 0 ]; then
                    ok_ptx=$((ok_ptx + 1))
                    grep -q "^// blk-meta v1 kernel=$k " "$o.A.out" || { echo "FAIL: $k: PTX without blk-meta"; fail=1; }
                elif grep -q -e "dot is not yet supported by the PTX backend" \
                        -e "@cluster needs thread-block clusters, which $arch does not have" "$o.A.err"; then
                    refused=$((refused + 1))
                else
                    echo "FAIL: $base.blk kernel $k --arch $arch: exit $(cat "$o.A.rc")"; head -5 "$o.A.err"; fail=1
                fi
            fi
        done
    done
done
echo "determinism: $n compilations compared in pairs; $ok_ptx PTX outputs identical, $refused refused (dot; @cluster on an arch without clusters) with identical diagnostics"
[ $ok_ptx -gt 0 ] || { echo "FAIL: no PTX was produced"; fail=1; }
[ $fail = 0 ] && rm -rf "$work"
exit $fail

#!/bin/sh
# campaign.sh — a bounded libFuzzer campaign over the blk front end.
#
#   tests/fuzz/campaign.sh [TARGET...]      (default: fuzz_parse fuzz_frontend fuzz_interp,
#                                            and fuzz_ptx where it is built)
#
# Environment: BUILD (default build-fuzz, configured with -DBLK_FUZZ=ON and
# clang), FUZZ_SECONDS per target (default 60), FUZZ_FLAGS (extra libFuzzer
# flags). The working corpus of each target is $BUILD/fuzz/corpus/TARGET:
# seeded from stdlib/*.blk, tests/interp/*.blk, tests/golden/**/*.blk,
# tests/diag/**/*.blk (fuzz_parse, fuzz_frontend) plus the hand-made seeds in
# tests/fuzz/corpus/TARGET/, and it keeps growing across campaigns.
# fuzz_ptx (the whole pipeline to PTX: LLVM inside, milliseconds to a second
# per input; a kernel at the 500000-instruction limit takes 10-25 s in LLVM,
# docs/reliability.md F6) runs with -max_len=2048 -timeout=60; the others with
# -max_len=4096 -timeout=5.
# Crashes, timeouts (hangs > 5 s, 60 s for fuzz_ptx), OOMs and leaks land in
# $BUILD/fuzz/artifacts/TARGET/. Prints the executions per target; exits 1 if
# any target left an artifact in this campaign.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD:-build-fuzz}
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
SECS=${FUZZ_SECONDS:-60}
DEFAULT="fuzz_parse fuzz_frontend fuzz_interp"
[ -x "$BUILD/tests/fuzz/fuzz_ptx" ] && DEFAULT="$DEFAULT fuzz_ptx"
TARGETS=${*:-$DEFAULT}
status=0
summary=""
for t in $TARGETS; do
    exe=$BUILD/tests/fuzz/$t
    [ -x "$exe" ] || { echo "campaign: $exe not built (cmake -DBLK_FUZZ=ON -DCMAKE_C_COMPILER=clang)" >&2; exit 2; }
    corpus=$BUILD/fuzz/corpus/$t
    art=$BUILD/fuzz/artifacts/$t
    logs=$BUILD/fuzz/logs/$t
    mkdir -p "$corpus" "$art" "$logs"
    if [ "$t" != fuzz_interp ]; then
        # flat copies named after their path, so golden/ast/x.blk and diag/sema/x.blk do not collide
        for f in "$ROOT"/stdlib/*.blk "$ROOT"/tests/interp/*.blk \
                 $(find "$ROOT/tests/golden" "$ROOT/tests/diag" -name '*.blk' | sort); do
            [ -f "$f" ] || continue
            name=$(echo "${f#$ROOT/}" | tr / _)
            [ -f "$corpus/$name" ] || cp "$f" "$corpus/$name"
        done
    fi
    case $t in
    fuzz_ptx) limits="-max_len=2048 -timeout=60" ;;
    *) limits="-max_len=4096 -timeout=5" ;;
    esac
    FLAGS="-jobs=1 -workers=1 $limits -rss_limit_mb=2048 -max_total_time=$SECS -print_final_stats=1"
    before=$(ls "$art" | wc -l)
    echo "== $t: $SECS s (corpus $(ls "$corpus" | wc -l) files + $(ls "$ROOT/tests/fuzz/corpus/$t" | wc -l) seeds)"
    # -jobs=1 writes the run's output to fuzz-0.log in the working directory
    (cd "$logs" && rm -f fuzz-0.log &&
     "$exe" $FLAGS ${FUZZ_FLAGS:-} -dict="$ROOT/tests/fuzz/blk.dict" -artifact_prefix="$art/" \
        "$corpus" "$ROOT/tests/fuzz/corpus/$t" >/dev/null 2>&1)
    log=$logs/fuzz-0.log
    execs=$(grep -a 'stat::number_of_executed_units' "$log" | tail -1 | awk '{print $2}')
    cov=$(grep -a -o 'cov: [0-9]*' "$log" | tail -1)
    after=$(ls "$art" | wc -l)
    new=$((after - before))
    cp "$log" "$logs/$(date +%Y%m%d-%H%M%S).log"
    line="$t: ${execs:-?} execs in $SECS s, $cov, corpus $(ls "$corpus" | wc -l), new artifacts: $new"
    echo "$line"
    if [ "$new" -gt 0 ]; then
        status=1
        grep -a -E '^==[0-9]+==ERROR|SUMMARY|runtime error|ALARM|out-of-memory|leak' "$log" | head -5
        ls -t "$art" | head -"$new" | sed "s|^|  artifact: $art/|"
    fi
    summary="$summary$line\n"
done
echo "== summary"
printf "$summary"
exit $status

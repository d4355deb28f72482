#!/bin/bash
# run_on_device.sh [BUNDLE_DIR] — the GPU machine's side of the gpu suite
# (docs/gpu-testing.md). Run from the repository root, after
# `bash tests/gpu/bundle.sh build-carry` here and with build-carry carried:
#
#   bash tests/gpu/run_on_device.sh build-carry
#
# Steps (each under `timeout`, the whole within BLK_GPU_BUDGET seconds,
# default 560; a step that no longer fits is skipped and says so;
# BLK_GPU_STEPS picks steps, default "check indexdiff kerneldiff bench memcheck racecheck traps"):
#   env        nvidia-smi -L, driver, libdevice, compute-sanitizer, the bundle's MANIFEST
#   check      gpu_check, every kernel/config/size (a hung kernel is named by
#              the watchdog, then the check runs again without it), at most
#              BLK_GPU_CHECK_SECONDS (default 480: the suite, 3240 cases, took 404 s on
#              an H200 on 2026-11-26; it grows with the table)
#   indexdiff  index_diff: random index arithmetic (axisinfo + vectorize), the
#              GPU against the interpreter; BLK_INDEX_DIFF_ARGS (default
#              "--count 3000"), at most BLK_INDEX_DIFF_SECONDS (default 90)
#   kerneldiff kernel_diff: random kernels (masks, broadcasting, reductions, scans,
#              casts, where, if/for, atomics, dot, math, pipelined dot loops), the
#              GPU against the interpreter; BLK_KERNEL_DIFF_ARGS (default "--count
#              3000"; "--count 3000 --family pipe": the pipelined loops alone), at
#              most BLK_KERNEL_DIFF_SECONDS (default 90)
#   bench      gpu_check compile-bench and launch-bench (host-side rows of BENCH.md)
#   memcheck   compute-sanitizer --tool memcheck on gpu_check --quick
#   racecheck  compute-sanitizer --tool racecheck on gpu_check --quick, for the
#              kernels that go through shared memory (reductions, scans, conversions)
#   traps      gpu_assert_trap: a failed device_assert (CUDA_ERROR_ASSERT named
#              with its kernel, the driver's "Assertion ... failed." line) and a
#              hung kernel (a 2 s deadline names it), each in its own process,
#              then gpu_check on vector_add in a fresh process (the GPU is fine)
# Logs go to $OUT (or /tmp/blk-gpu-out), six files (a device call returns at
# most 8): gpu_check.txt index_diff.txt kernel_diff.txt gpu_bench_host.txt gpu_sanitizer.txt
# gpu_traps.txt gpu_summary.txt.
# stdout gets the environment, failures, tables and the summary only (the
# device call returns the tail). Exit status: the check's (1 if a kernel hung),
# else 1 if index_diff, kernel_diff or the traps failed.
# BLK_GPU_CHECK_ARGS adds arguments to the gpu_check runs (e.g. --dry-run with
# the fake driver, --kernel NAME).
set -u
B=${1:-build-carry}
OUT=${OUT:-/tmp/blk-gpu-out}
BUDGET=${BLK_GPU_BUDGET:-560}
STDLIB=${BLK_STDLIB_DIR:-stdlib}
STEPS=" ${BLK_GPU_STEPS:-check indexdiff kerneldiff bench memcheck racecheck traps} "
mkdir -p "$OUT"
T0=$(date +%s)
export BLKRT_CACHE_DIR=   # no blk disk cache: every module is compiled here
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
GC="$B/gpu_check"   # also index_diff: "$GC" index-diff ARGS (bundle.sh)
LOG="$OUT/gpu_check.txt"
ILOG="$OUT/index_diff.txt"
KLOG="$OUT/kernel_diff.txt"
BLOG="$OUT/gpu_bench_host.txt"
SAN="$OUT/gpu_sanitizer.txt"
TLOG="$OUT/gpu_traps.txt"
SUMF="$OUT/gpu_summary.txt"
read -r -a EXTRA <<< "${BLK_GPU_CHECK_ARGS:-}"
SUMMARY=()
skip=()

want() { case "$STEPS" in *" $1 "*) return 0 ;; esac; return 1; }
elapsed() { echo $(( $(date +%s) - T0 )); }

# run_step NAME LIMIT LOG CMD...: CMD under timeout min(LIMIT, what is left of
# the budget), stdout+stderr appended to LOG; sets RC and DUR.
run_step() {
  local name=$1 limit=$2 log=$3; shift 3
  local left=$(( BUDGET - $(elapsed) ))
  if [ "$left" -lt 15 ]; then
    echo "[$name] skipped: the budget of ${BUDGET}s is spent" | tee -a "$log"
    RC=skipped; DUR=0; return
  fi
  [ "$limit" -gt "$left" ] && limit=$left
  echo "[$name] (limit ${limit}s) $*" >> "$log"
  local t; t=$(date +%s)
  timeout -k 5 "$limit" "$@" >> "$log" 2>&1
  RC=$?
  DUR=$(( $(date +%s) - t ))
  if [ "$RC" = 124 ] || [ "$RC" = 137 ]; then echo "[$name] TIMED OUT after ${limit}s" | tee -a "$log"; fi
}

# ---- environment ----
{
  echo "== $(date -u +%Y-%m-%dT%H:%M:%SZ) $(uname -nrm), budget ${BUDGET}s, steps:$STEPS"
  nvidia-smi -L
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader
  echo "glibc: $(ldd --version 2>&1 | head -1)"
} > "$SUMF" 2>&1
if [ -z "${BLK_LIBDEVICE:-}" ] && [ ! -f /usr/local/cuda/nvvm/libdevice/libdevice.10.bc ]; then
  cand=$(ls /usr/local/cuda*/nvvm/libdevice/libdevice*.bc 2>/dev/null | head -1)
  [ -z "$cand" ] && cand=$(find /usr/local /opt /usr/lib /usr/share -name 'libdevice.10.bc' 2>/dev/null | head -1)
  [ -n "$cand" ] && export BLK_LIBDEVICE=$cand
fi
echo "libdevice: ${BLK_LIBDEVICE:-/usr/local/cuda/nvvm/libdevice/libdevice.10.bc}" \
     "$( [ -f "${BLK_LIBDEVICE:-/usr/local/cuda/nvvm/libdevice/libdevice.10.bc}" ] && echo '(found)' || echo '(MISSING: math kernels will not compile)')" >> "$SUMF"
CS=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer /usr/local/cuda*/bin/compute-sanitizer \
     /opt/nvidia/*/compute-sanitizer 2>/dev/null | head -1)
echo "compute-sanitizer: ${CS:-not found} $( [ -n "$CS" ] && "$CS" --version 2>&1 | grep -i version | tail -1)" >> "$SUMF"
[ -f "$B/MANIFEST" ] && head -3 "$B/MANIFEST" >> "$SUMF"
cat "$SUMF"
if [ ! -x "$GC" ]; then
  echo "no $GC: build the bundle (bash tests/gpu/bundle.sh $B) and carry $B" | tee -a "$SUMF"
  exit 1
fi
if ! "$GC" --list > /dev/null 2>&1; then
  { echo "$GC does not run here:"; "$GC" --list 2>&1 | head -5; ldd "$GC"; } | tee -a "$SUMF"
  exit 1
fi
: > "$LOG"; : > "$ILOG"; : > "$BLOG"; : > "$SAN"; : > "$TLOG"

# ---- the check ----
CHECK_RC=skipped
if want check; then
  for attempt in 1 2 3; do
    run_step check "${BLK_GPU_CHECK_SECONDS:-480}" "$LOG" "$GC" --stdlib "$STDLIB" --case-timeout 30 ${skip[@]+"${skip[@]}"} ${EXTRA[@]+"${EXTRA[@]}"}
    [ "$RC" = 3 ] || break
    hung=$(grep -o 'HANG: .* kernel=[A-Za-z0-9_]*' "$LOG" | tail -1 | sed 's/.*kernel=//')
    [ -n "$hung" ] || break
    echo "[check] $hung hung: running again without it" | tee -a "$LOG"
    skip+=(--skip "$hung")
    SUMMARY+=("check: $hung HUNG (watchdog); the next run skips it")
  done
  CHECK_RC=$RC
  [ ${#skip[@]} -gt 0 ] && [ "$CHECK_RC" = 0 ] && CHECK_RC=1   # a hung kernel is a failure
  SUMMARY+=("check: rc=$RC ${DUR}s: $(grep -E '^[0-9]+ passed, [0-9]+ failed' "$LOG" | tail -1)")
fi

# ---- random index arithmetic ----
# Its own time limit (--max-seconds, checked between kernels) inside the
# step's timeout, so it ends with its summary line rather than being killed.
INDEX_RC=skipped
if want indexdiff; then
  if "$GC" index-diff --help 2>&1 | grep -q 'usage: index_diff'; then   # an older bundle has no index-diff
    isec=${BLK_INDEX_DIFF_SECONDS:-90}
    read -r -a IARGS <<< "${BLK_INDEX_DIFF_ARGS:---count 3000}"
    run_step indexdiff $((isec + 30)) "$ILOG" "$GC" index-diff --device 0 --max-seconds "$isec" "${IARGS[@]}"
    INDEX_RC=$RC
    SUMMARY+=("indexdiff: rc=$RC ${DUR}s: $(grep -E '^[0-9]+ kernels: ' "$ILOG" | tail -1)")
  else
    INDEX_RC=1
    SUMMARY+=("indexdiff: $GC has no index-diff (an older bundle: rebuild it with bundle.sh)")
  fi
fi

# ---- random kernels (kernel_diff.c), the same way ----
KDIFF_RC=skipped
if want kerneldiff; then
  if "$GC" kernel-diff --help 2>&1 | grep -q 'usage: kernel_diff'; then   # an older bundle has no kernel-diff
    ksec=${BLK_KERNEL_DIFF_SECONDS:-90}
    read -r -a KARGS <<< "${BLK_KERNEL_DIFF_ARGS:---count 3000}"
    run_step kerneldiff $((ksec + 30)) "$KLOG" "$GC" kernel-diff --device 0 --max-seconds "$ksec" "${KARGS[@]}"
    KDIFF_RC=$RC
    SUMMARY+=("kerneldiff: rc=$RC ${DUR}s: $(grep -E '^[0-9]+ kernels: ' "$KLOG" | tail -1)")
  else
    KDIFF_RC=1
    SUMMARY+=("kerneldiff: $GC has no kernel-diff (an older bundle: rebuild it with bundle.sh)")
  fi
fi

# ---- host-side benchmarks ----
if want bench; then
  run_step compile-bench 60 "$BLOG" "$GC" compile-bench --stdlib "$STDLIB" --runs 20
  SUMMARY+=("compile-bench: rc=$RC ${DUR}s")
  run_step launch-bench 45 "$BLOG" "$GC" launch-bench --stdlib "$STDLIB" --launches 100000
  SUMMARY+=("launch-bench: rc=$RC ${DUR}s")
fi

# ---- compute-sanitizer ----
san_line() { # the tool's summary line and gpu_check's closing line of the last run in $SAN
  echo "$(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$SAN" | tail -1) / $(grep -E '^[0-9]+ passed' "$SAN" | tail -1)"
}
if [ -n "$CS" ]; then
  if want memcheck; then
    echo "==== memcheck ====" >> "$SAN"
    run_step memcheck 150 "$SAN" "$CS" --tool memcheck --error-exitcode 99 \
      "$GC" --stdlib "$STDLIB" --quick --case-timeout 90 ${skip[@]+"${skip[@]}"} ${EXTRA[@]+"${EXTRA[@]}"}
    SUMMARY+=("memcheck: rc=$RC ${DUR}s: $(san_line)")
  fi
  if want racecheck; then
    rk=()
    for k in softmax softmax_online log_softmax cross_entropy layernorm_fwd layernorm_bwd rmsnorm layernorm add_layernorm row_sum \
             row_max_argmax col_sum cumsum_rows topk_rows transpose moe_router moe_aux_loss \
             sort_rows_f32 sort_rows_f16 sort_rows_i32 sort_cols_f32 sort_topk_f32 sort_topk_i32 \
             mm_bf16 mm_f16_tt mm_tf32 mm_i8 mm_e4m3 mm_epilogue matmul attn_fwd linear_attn; do
      rk+=(--kernel "$k")
    done
    echo "==== racecheck ====" >> "$SAN"
    run_step racecheck 200 "$SAN" "$CS" --tool racecheck --error-exitcode 99 \
      "$GC" --stdlib "$STDLIB" --quick --case-timeout 90 "${rk[@]}" ${skip[@]+"${skip[@]}"} ${EXTRA[@]+"${EXTRA[@]}"}
    SUMMARY+=("racecheck: rc=$RC ${DUR}s: $(san_line)")
  fi
elif want memcheck || want racecheck; then
  SUMMARY+=("memcheck, racecheck: compute-sanitizer not found")
fi

# ---- kernels that stop: a trap and a hang, each in its own process (last:
# a hung kernel may keep the GPU busy until its process is gone) ----
TRAPS_RC=skipped
if want traps; then
  if [ -x "$B/gpu_assert_trap" ] && [ -f "$B/assert_trap.ptx" ]; then
    TRAPS_RC=0
    run_step trap-assert 60 "$TLOG" "$B/gpu_assert_trap" assert "$B/assert_trap.ptx"
    [ "$RC" = 0 ] || TRAPS_RC=1
    grep -q 'Assertion `x must be below the limit` failed' "$TLOG" || { TRAPS_RC=1; echo "[trap-assert] no Assertion line from the driver" >> "$TLOG"; }
    SUMMARY+=("trap-assert: rc=$RC ${DUR}s: $(grep -c 'Assertion `x must be below the limit` failed' "$TLOG") Assertion lines from the driver")
    run_step trap-hang 60 "$TLOG" "$B/gpu_assert_trap" hang "$B/assert_trap.ptx"
    [ "$RC" = 0 ] || TRAPS_RC=1
    SUMMARY+=("trap-hang: rc=$RC ${DUR}s (exit with the kernel running: $(grep -c 'exiting with the kernel still running' "$TLOG"))")
    run_step trap-after 60 "$TLOG" "$GC" --stdlib "$STDLIB" --quick --kernel vector_add
    [ "$RC" = 0 ] || TRAPS_RC=1
    SUMMARY+=("trap-after: rc=$RC ${DUR}s: a fresh process: $(grep -E '^[0-9]+ passed, [0-9]+ failed' "$TLOG" | tail -1)")
  else
    TRAPS_RC=1
    SUMMARY+=("traps: no $B/gpu_assert_trap (an older bundle: rebuild it with bundle.sh)")
  fi
fi

# ---- what the call's output shows ----
{
  if want check; then
    echo
    echo "==== gpu_check: failures (first 25, cut at 240 characters; full log gpu_check.txt) ===="
    grep -E '^FAIL|HANG:' "$LOG" | head -25 | cut -c1-240
    echo
    echo "==== gpu_check table ===="
    sed -n '/^| kernel | sizes/,$p' "$LOG" | grep -E '^\||^time:|passed, .* failed' | tail -45
  fi
  if want indexdiff && [ -s "$ILOG" ]; then
    echo
    echo "==== index_diff: failures (first 3 minimal reproducers; full log index_diff.txt) ===="
    grep -E '^seed |^FAIL|^reproduce:|TIMED OUT' "$ILOG" | head -12 | cut -c1-240
    awk '/^MINIMAL/{p=1; n++} p && n<=3 {print} /^reproduce:/{p=0}' "$ILOG" | head -60
  fi
  if want kerneldiff && [ -s "$KLOG" ]; then
    echo
    echo "==== kernel_diff: failures (first 2 minimal reproducers; full log kernel_diff.txt) ===="
    grep -E '^kernel_diff:|^FAIL|^reproduce:|TIMED OUT' "$KLOG" | head -12 | cut -c1-240
    awk '/^MINIMAL/{p=1; n++} p && n<=2 {print} /^reproduce:/{p=0}' "$KLOG" | head -60
  fi
  if want bench; then
    echo
    echo "==== host-side benchmarks ===="
    grep -E '^\||^error|TIMED OUT' "$BLOG"
  fi
  if want traps && [ -s "$TLOG" ]; then
    echo
    echo "==== traps (gpu_traps.txt) ===="
    grep -E '^(assert|hang):|^FAIL|TIMED OUT|Assertion|^\[trap' "$TLOG" | head -20 | cut -c1-400
  fi
  if [ -n "$CS" ] && [ -s "$SAN" ]; then
    echo
    echo "==== compute-sanitizer (gpu_sanitizer.txt) ===="
    echo "error reports: $(grep -cE '^========= (Invalid|Race|Error|Program hit)' "$SAN")"
    grep -E '^==== |^========= (Invalid|Race|Error|Program hit|.*SUMMARY)|TIMED OUT|^FAIL|HANG:' "$SAN" | head -24
  fi
  echo
  echo "==== summary ($(elapsed)s of ${BUDGET}s) ===="
  for s in ${SUMMARY[@]+"${SUMMARY[@]}"}; do echo "  $s"; done
} > "$OUT/gpu_summary.tail"
cat "$OUT/gpu_summary.tail" | tee -a "$SUMF"
rm -f "$OUT/gpu_summary.tail"
# Exit status: the check's, else index_diff's or kernel_diff's (any failing fails the run).
if want check; then
  case "$CHECK_RC" in ''|*[!0-9]*) exit 1 ;; esac
  [ "$CHECK_RC" != 0 ] && exit "$CHECK_RC"
fi
if want indexdiff; then
  case "$INDEX_RC" in 0|skipped) ;; *) exit 1 ;; esac
fi
if want kerneldiff; then
  case "$KDIFF_RC" in 0|skipped) ;; *) exit 1 ;; esac
fi
case "$TRAPS_RC" in 0|skipped) ;; *) exit 1 ;; esac
exit 0

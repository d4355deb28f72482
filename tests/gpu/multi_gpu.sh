#!/bin/bash
# multi_gpu.sh [BUNDLE_DIR] — blk on a machine with two or more GPUs (issue 14).
#
# Here (with LLVM), build the bundle into an ignored folder:
#
#   bash tests/gpu/bundle_multi_gpu.sh build-mgpu
#
# then on the GPU machine, from the repository root, with build-mgpu carried
# (the device tool: kind nvidia-h100-x2, carry ["build-mgpu"]):
#
#   bash tests/gpu/multi_gpu.sh build-mgpu
#
# Steps, each under `timeout` and the whole within BLK_MGPU_BUDGET seconds
# (default 420: a step that no longer fits is skipped and says so):
#   env      nvidia-smi -L and topology (NVLink?), torch and NCCL versions
#   c        test_gpu_multi: per-device modules, one thread per GPU and one
#            thread over all GPUs, peer access, peer copies, a kernel reading
#            another GPU's memory (libblkrt alone)
#   python   tests/gpu/python_multi_gpu.py: kernels on cuda:0 and cuda:1
#            tensors in one process, torch's current stream, threads, peers,
#            the autotuner per GPU, one thread driving both GPUs
#   tp       examples/tensor_parallel/tp_mlp.py under torch.distributed.run,
#            one process per GPU (2 unless BLK_MGPU_NPROC): the tensor-parallel
#            MLP against the one-GPU result, and its timing table
# Logs in $OUT (default /tmp/blk-mgpu-out): c.txt python.txt tp.txt
# summary.txt; stdout has the environment, each step's tail and the summary.
# Exit status: 0 when every step passed, 77 with fewer than two GPUs (every
# step skipped), else 1.
set -u
B=${1:-build-mgpu}
OUT=${OUT:-/tmp/blk-mgpu-out}
BUDGET=${BLK_MGPU_BUDGET:-420}
NPROC=${BLK_MGPU_NPROC:-2}
mkdir -p "$OUT"
T0=$(date +%s)
# NVLink multicast (NVLS) stays off on the lent machines
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-4}   # torch.distributed.run warns when it has to set it
# the carried libblk.so, the checkout's stdlib and Python package; a fresh JIT
# cache shared by the GPUs and ranks of this run (compiled once per arch)
export BLK_LIBBLKRT=$PWD/$B/libblk.so BLK_STDLIB_DIR=$PWD/stdlib PYTHONPATH=$PWD/runtime/python${PYTHONPATH:+:$PYTHONPATH}
BLKRT_CACHE_DIR=$(mktemp -d /tmp/blk-mgpu-cache.XXXXXX)
export BLKRT_CACHE_DIR
trap 'rm -rf "$BLKRT_CACHE_DIR"' EXIT
if [ -z "${BLK_LIBDEVICE:-}" ] && [ ! -f /usr/local/cuda/nvvm/libdevice/libdevice.10.bc ]; then
  cand=$(ls /usr/local/cuda*/nvvm/libdevice/libdevice*.bc 2>/dev/null | head -1)
  [ -z "$cand" ] && cand=$(find /usr/local /opt /usr/lib /usr/share -name 'libdevice.10.bc' 2>/dev/null | head -1)
  [ -n "$cand" ] && export BLK_LIBDEVICE=$cand
fi
SUMMARY=()
FAILED=0
PASSED=0

elapsed() { echo $(( $(date +%s) - T0 )); }

# step NAME LIMIT LOG CMD...: CMD under timeout min(LIMIT, budget left);
# rc 0 ok, 77 skipped, else failed; the log's last lines go to stdout.
step() {
  local name=$1 limit=$2 log=$3; shift 3
  local left=$(( BUDGET - $(elapsed) ))
  if [ "$left" -lt 20 ]; then
    SUMMARY+=("$name: skipped: the budget of ${BUDGET}s is spent"); FAILED=1; return
  fi
  [ "$limit" -gt "$left" ] && limit=$left
  echo "[$name] (limit ${limit}s) $*" > "$log"
  local t rc; t=$(date +%s)
  timeout -k 10 "$limit" "$@" >> "$log" 2>&1
  rc=$?
  local dur=$(( $(date +%s) - t ))
  echo
  echo "==== $name (rc=$rc, ${dur}s; full log $log) ===="
  tail -n "${TAIL_LINES:-30}" "$log" | cut -c1-300
  case $rc in
    0) SUMMARY+=("$name: ok (${dur}s)"); PASSED=$((PASSED + 1)) ;;
    77) SUMMARY+=("$name: skipped (${dur}s): $(grep -i -m1 'skipped' "$log" | cut -c1-160)") ;;
    124|137) SUMMARY+=("$name: TIMED OUT after ${limit}s"); FAILED=1 ;;
    *) SUMMARY+=("$name: FAILED rc=$rc (${dur}s)"); FAILED=1 ;;
  esac
}

{
  echo "== $(date -u +%Y-%m-%dT%H:%M:%SZ) $(uname -nrm), budget ${BUDGET}s"
  nvidia-smi -L
  nvidia-smi topo -m 2>/dev/null | head -12
  python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, "nccl", torch.cuda.nccl.version(), "gpus", torch.cuda.device_count())' 2>&1 | tail -1
  echo "libdevice: ${BLK_LIBDEVICE:-/usr/local/cuda/nvvm/libdevice/libdevice.10.bc}"
  [ -f "$B/MANIFEST" ] && head -2 "$B/MANIFEST"
} 2>&1 | tee "$OUT/summary.txt"
if [ ! -x "$B/test_gpu_multi" ] || [ ! -f "$B/libblk.so" ]; then
  echo "multi_gpu.sh: no bundle in $B: run 'bash tests/gpu/bundle_multi_gpu.sh $B' where LLVM is, and carry $B" | tee -a "$OUT/summary.txt"
  exit 1
fi

step c 90 "$OUT/c.txt" "$B/test_gpu_multi" "$B/multi_vadd.ptx"
step python 150 "$OUT/python.txt" python3 tests/gpu/python_multi_gpu.py
gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
if [ "${gpus:-0}" -ge "$NPROC" ]; then
  TAIL_LINES=16 step tp 200 "$OUT/tp.txt" python3 -m torch.distributed.run --standalone --nproc_per_node="$NPROC" \
    examples/tensor_parallel/tp_mlp.py
else
  SUMMARY+=("tp: skipped: $gpus GPU(s), the example runs on $NPROC")
fi

{
  echo
  echo "==== summary ($(elapsed)s of ${BUDGET}s) ===="
  for s in "${SUMMARY[@]}"; do echo "  $s"; done
} | tee -a "$OUT/summary.txt"
[ "$FAILED" != 0 ] && exit 1
[ "$PASSED" = 0 ] && exit 77
exit 0

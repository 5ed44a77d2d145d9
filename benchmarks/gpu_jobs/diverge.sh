#!/usr/bin/env bash
# GPU job of issue #48 (graphscope diverge): bash benchmarks/gpu_jobs/diverge.sh CALL, with RESULTS set.
#   1: the search and the audit on ten seeded-fault cases (CuPy and PyTorch), every node's launch kept
#   2: all 30 seeded faults (search + audit), then the GPU tests
#   3: the same as 2 (final confirmation on merged main)
set +e
CALL="${1:-1}"
RESULTS="${RESULTS:-$PWD/diverge-results}"
mkdir -p "$RESULTS"
export PYTHONUNBUFFERED=1
echo "call $CALL at $(date -u +%H:%M:%S)"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1 | head -2
faults() {  # faults SECONDS NAME CASES
  timeout "$1" python3 benchmarks/diverge_faults.py --out "$RESULTS/faults_$2.json" --cases "$3" \
    > "$RESULTS/faults_$2.log" 2>&1
  echo "$2 rc=$? at $(date -u +%H:%M:%S)"
  grep -v '^\s*$' "$RESULTS/faults_$2.log" | tail -25
}
if [ "$CALL" = 1 ]; then
  faults 30 cupy cupy:stale:3,cupy:scalar:5,cupy:grid:1,cupy:host:7,cupy:none:0
  faults 38 torch torch:stale:1,torch:scalar:2,torch:grid:0,torch:host:1,torch:none:0
else
  faults 28 cupy cupy
  faults 34 torch torch
  timeout 34 python3 -m pytest -m gpu tests/gpu/test_diverge_gpu.py -q -p no:cacheprovider \
    > "$RESULTS/tests.log" 2>&1
  echo "tests rc=$? at $(date -u +%H:%M:%S)"
  tail -30 "$RESULTS/tests.log"
fi
ls -la "$RESULTS"

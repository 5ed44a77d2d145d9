#!/usr/bin/env bash
# GPU job of issue #48 (graphscope diverge): bash benchmarks/gpu_jobs/diverge.sh CALL, with RESULTS set.
# Every call: the 30 seeded faults plus one sound case per workload (search + audit:
# benchmarks/diverge_faults.py, results written case by case), then the GPU tests. Call 2 (H100, 00:07 UTC)
# took 3 s, 19 s and 16 s for the three; the limits below keep the whole within 80 s.
set +e
CALL="${1:-2}"
RESULTS="${RESULTS:-$PWD/diverge-results}"
mkdir -p "$RESULTS"
export PYTHONUNBUFFERED=1
echo "call $CALL at $(date -u +%H:%M:%S)"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1 | head -2
faults() {  # faults SECONDS NAME CASES
  timeout "$1" python3 benchmarks/diverge_faults.py --out "$RESULTS/faults_$2.json" --cases "$3" \
    > "$RESULTS/faults_$2.log" 2>&1
  echo "$2 rc=$? at $(date -u +%H:%M:%S)"
  grep -v '^\s*$' "$RESULTS/faults_$2.log" | tail -22
}
faults 20 cupy cupy
faults 30 torch torch
timeout 25 python3 -m pytest -m gpu tests/gpu/test_diverge_gpu.py -q -p no:cacheprovider \
  > "$RESULTS/tests.log" 2>&1
echo "tests rc=$? at $(date -u +%H:%M:%S)"
tail -30 "$RESULTS/tests.log"
ls -la "$RESULTS"

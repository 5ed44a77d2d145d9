#!/usr/bin/env bash
# GPU job of issue #48 (graphscope diverge): bash benchmarks/gpu_jobs/diverge.sh CALL, with RESULTS set.
#   1: the search on eight seeded faults (CuPy and PyTorch), every node's launch printed (API facts)
#   2: all 30 seeded faults (search + audit) and the GPU tests
#   3: the GPU tests and the 30 faults again (final confirmation on merged main)
set +e
CALL="${1:-1}"
RESULTS="${RESULTS:-$PWD/diverge-results}"
mkdir -p "$RESULTS"
export PYTHONUNBUFFERED=1
echo "call $CALL at $(date -u +%H:%M:%S)"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1 | head -2
if [ "$CALL" = 1 ]; then
  timeout 30 python3 benchmarks/diverge_faults.py --out "$RESULTS/faults_cupy.json" \
    --cases cupy:stale:3,cupy:scalar:5,cupy:grid:1,cupy:host:7,cupy:none:0 2>&1 | tail -40
  echo "cupy rc=$? at $(date -u +%H:%M:%S)"
  timeout 38 python3 benchmarks/diverge_faults.py --out "$RESULTS/faults_torch.json" \
    --cases torch:stale:1,torch:scalar:2,torch:grid:0,torch:host:1,torch:none:0 2>&1 | tail -40
  echo "torch rc=$? at $(date -u +%H:%M:%S)"
else
  timeout 40 python3 -m pytest -m gpu tests/gpu/test_diverge_gpu.py -q -p no:cacheprovider -x 2>&1 | tail -30
  echo "tests rc=$? at $(date -u +%H:%M:%S)"
  timeout 25 python3 benchmarks/diverge_faults.py --out "$RESULTS/faults_cupy.json" --cases cupy 2>&1 | tail -25
  echo "cupy rc=$? at $(date -u +%H:%M:%S)"
  timeout 30 python3 benchmarks/diverge_faults.py --out "$RESULTS/faults_torch.json" --cases torch 2>&1 | tail -25
  echo "torch rc=$? at $(date -u +%H:%M:%S)"
fi
ls -la "$RESULTS"

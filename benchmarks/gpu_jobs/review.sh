#!/usr/bin/env bash
# GPU job of the lead's review (2026-12-06): what call 3/4 of that day showed failing, after the fixes.
# Usage: RESULTS=DIR bash benchmarks/gpu_jobs/review.sh CALL
set +e
RESULTS="${RESULTS:-$PWD/review-out}"
mkdir -p "$RESULTS"
export PYTHONUNBUFFERED=1
step() { echo "== $(date -u +%T) $*"; }
step "profiler stacks: what events() carries"
timeout 40 python3 benchmarks/probe_profiler_stacks.py 2>&1 | tail -4 | tee "$RESULTS/stacks.json"
step "DAG of the decode step: lines and shapes; a CuPy run's lines"
timeout 90 python3 -m pytest -m gpu -q -s -p no:cacheprovider tests/gpu/test_attribution_gpu.py \
  -k "dag_of_a_decode or cupy_chain" 2>&1 | tail -15
step "eager overhead: where it goes"
timeout 90 python3 benchmarks/own_overhead_gpu.py --rounds 5 2>&1 | tail -40 | tee "$RESULTS/own_overhead.json"
step "the runner against a plain CuPy loop (test)"
timeout 90 python3 -m pytest -m gpu -q -s -p no:cacheprovider tests/gpu/test_runner_gpu.py \
  -k plain_cupy_loop 2>&1 | tail -12
step "demo plan re-read and re-planned"
timeout 10 python3 -m graphscope plan plan:demo --session "$RESULTS/s.sqlite" 2>&1 | head -4
step done

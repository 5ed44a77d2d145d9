#!/usr/bin/env bash
# GPU job: where the in-place apply's time goes (benchmarks/apply_cost_gpu.py), and the test that compares it
# with a re-capture, three times. Usage: RESULTS=/abs/dir bash benchmarks/gpu_jobs/apply.sh CALL
set +e
RESULTS="${RESULTS:-$PWD/gpu-results}"; mkdir -p "$RESULTS"
export PYTHONUNBUFFERED=1
grep -m1 "model name" /proc/cpuinfo; nproc
# (apply_cost_gpu.py ran in calls 1-2)
timeout 60 python3 benchmarks/gpu_jobs/apply3.py
for i in; do
  timeout 60 python3 -m pytest -m gpu -q -s -p no:cacheprovider \
    "tests/gpu/test_dag_and_tuning_gpu.py::test_applying_a_block_in_place_keeps_outputs_and_costs_far_less_than_a_capture" 2>&1 | grep -E "apply 1000|passed|failed"
done
echo "== the child profiled (sitecustomize), gc logged"
rm -f /tmp/apply_probe.txt
APPLY_PROBE=/tmp/apply_probe.txt PYTHONPATH="$PWD/benchmarks/gpu_jobs/probe_site:$PYTHONPATH" timeout 60 python3 benchmarks/gpu_jobs/apply3.py
cat /tmp/apply_probe.txt | head -120

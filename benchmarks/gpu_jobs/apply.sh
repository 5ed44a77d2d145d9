#!/usr/bin/env bash
# GPU job: where the in-place apply's time goes (benchmarks/apply_cost_gpu.py, calls 1-2), the first apply
# against the later ones in one session (gpu_jobs/apply3.py), and the same with the child profiled and its
# garbage collections logged (probe_site/sitecustomize.py). Usage: RESULTS=/abs/dir bash benchmarks/gpu_jobs/apply.sh CALL
set +e
RESULTS="${RESULTS:-$PWD/gpu-results}"; mkdir -p "$RESULTS"
export PYTHONUNBUFFERED=1
grep -m1 "model name" /proc/cpuinfo; nproc
if [ "${1:-1}" -le 2 ]; then timeout 60 python3 benchmarks/apply_cost_gpu.py --rounds 9; fi
timeout 60 python3 benchmarks/gpu_jobs/apply3.py
echo "== the child profiled (sitecustomize), gc logged"
rm -f /tmp/apply_probe.txt
APPLY_PROBE=/tmp/apply_probe.txt PYTHONPATH="$PWD/benchmarks/gpu_jobs/probe_site:$PYTHONPATH" timeout 60 python3 benchmarks/gpu_jobs/apply3.py
grep -E "^apply|^gc" /tmp/apply_probe.txt

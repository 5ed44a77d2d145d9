#!/usr/bin/env bash
# GPU job of issue 46 (attribution of a run's replay), 44 (the shipped demo plan) and 42 (graph memory
# against PyTorch's and CuPy's accounting). Usage: RESULTS=DIR bash benchmarks/gpu_jobs/attrib.sh CALL
set +e
CALL="${1:-1}"
RESULTS="${RESULTS:-$PWD/gpu-out}"
mkdir -p "$RESULTS"
export PYTHONUNBUFFERED=1
step() { echo "== $(date -u +%T) $*"; }
step "call $CALL on $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null)"
python3 -c "from importlib.metadata import version as v; print('torch', v('torch'), 'transformers', v('transformers'))"

if [ "$CALL" = 1 ]; then
  step "attribution of a transformers decode step (graph mode, --profile torch)"
  ATTRIB_TIMEOUT=30 timeout 33 python3 - "$RESULTS" <<'PY'
import sys, benchmarks.attribution_gpu as b
b.WORKLOAD_ARGS = ["--mode", "graph"]
sys.exit(b.run(__import__("pathlib").Path(sys.argv[1])))
PY
  step "demo plan: examples/batched_mlp.py"
  timeout 22 python3 -m graphscope plan examples/batched_mlp.py --reps 20 --serve 2000 --json \
    --session "$RESULTS/plan.sqlite" > "$RESULTS/demo_plan_raw.json" 2> "$RESULTS/demo_plan.err"
  echo "plan rc $?"; tail -3 "$RESULTS/demo_plan.err"
  step "node identity calls (CUDA 13.1+) on this driver"
  timeout 4 python3 benchmarks/probe_node_ids.py | tee "$RESULTS/node_ids.json"
  step "graph memory: torch"
  timeout 13 python3 benchmarks/graph_memory_gpu.py torch "$RESULTS" 1,4,16,64
fi

if [ "$CALL" = 2 ] || [ "$CALL" = 3 ]; then
  step "attribution of a transformers decode step (--profile torch)"
  ATTRIB_TIMEOUT=42 timeout 46 python3 benchmarks/attribution_gpu.py run "$RESULTS"
  step "capture cost of recording stacks, shapes and modules"
  timeout 20 python3 benchmarks/attribution_gpu.py cost "$RESULTS"
  step "graph memory: torch"
  timeout 15 python3 benchmarks/graph_memory_gpu.py torch "$RESULTS" 1,4,16,64
fi
step "done"

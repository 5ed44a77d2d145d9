#!/usr/bin/env bash
# GPU job of engineer "launchcost" (issue #45): graph launch cost by shape, the decoder fusion check,
# a PDL chain traced. Usage: RESULTS=/abs/dir bash benchmarks/gpu_jobs/launchcost.sh CALL   (CALL = 1, 2, 3)
# Every step is under `timeout` and guarded; results are written as they come.
set +e
CALL="${1:-1}"
RESULTS="${RESULTS:-$PWD/gpu-results}"
mkdir -p "$RESULTS"
W=/tmp/launchcost-work; rm -rf "$W"; mkdir -p "$W"
export PYTHONUNBUFFERED=1
B=benchmarks
T0=$(date +%s)
step() { echo "== [$(( $(date +%s) - T0 )) s] $*"; }

step "environment"
timeout 5 bash -c 'nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader; nsys --version' 2>&1 | tee "$RESULTS/environment.txt"

if [ "$CALL" = 1 ]; then
  step "launch cost: quick sweep"
  timeout 18 python3 $B/graph_launch_cost.py measure --quick --reps 15 -o "$RESULTS/launch_raw_quick.json"
  step "decoder three ways (untraced times, torch.profiler traces)"
  timeout 30 python3 $B/fusion_check.py measure -o "$RESULTS" --layers 8 --steps 100 --active 6
  step "PDL chain under nsys"
  timeout 12 nsys profile --trace=cuda --sample=none --cpuctxsw=none -o "$W/pdl" -f true \
      python3 $B/pdl_chain.py -o "$RESULTS/pdl_stamps.json"
  timeout 6 nsys export --type sqlite -f true -o "$RESULTS/pdl_chain.sqlite" "$W/pdl.nsys-rep"
  step "launch cost traced by nsys, --cuda-graph-trace=graph"
  timeout 12 nsys profile --trace=cuda --cuda-graph-trace=graph --sample=none --cpuctxsw=none -o "$W/lc_graph" -f true \
      python3 $B/graph_launch_cost.py traced -o "$W/plan_graph.json"
  timeout 6 nsys export --type sqlite -f true -o "$W/lc_graph.sqlite" "$W/lc_graph.nsys-rep"
  timeout 4 python3 $B/graph_launch_cost.py latency "$W/lc_graph.sqlite" "$W/plan_graph.json" --mode graph \
      -o "$RESULTS/launch_nsys_graph.json"
  step "done"
fi

if [ "$CALL" = 2 ]; then
  step "launch cost: full sweep"
  timeout 30 python3 $B/graph_launch_cost.py measure --reps 25 -o "$RESULTS/launch_raw.json"
  for mode in node graph; do
    step "launch cost traced by nsys, --cuda-graph-trace=$mode"
    timeout 16 nsys profile --trace=cuda --cuda-graph-trace=$mode --sample=none --cpuctxsw=none -o "$W/lc_$mode" -f true \
        python3 $B/graph_launch_cost.py traced -o "$W/plan_$mode.json"
    timeout 8 nsys export --type sqlite -f true -o "$W/lc_$mode.sqlite" "$W/lc_$mode.nsys-rep"
    timeout 5 python3 $B/graph_launch_cost.py latency "$W/lc_$mode.sqlite" "$W/plan_$mode.json" --mode $mode \
        -o "$RESULTS/launch_nsys_$mode.json"
  done
  step "decoder three ways"
  timeout 30 python3 $B/fusion_check.py measure -o "$RESULTS" --layers 8 --steps 200 --active 6
  step "done"
fi

if [ "$CALL" = 3 ]; then  # the final confirmation (80 s): GPU tests, the measurement, the fusion check, PDL
  step "gpu tests: launch cost, PDL overlap"
  GRAPHSCOPE_PDL_TRACE_OUT="$RESULTS/pdl_chain.sqlite" timeout 28 python3 -m pytest -m gpu tests/gpu/test_launch_cost_gpu.py tests/gpu/test_pdl_overlap_gpu.py -q -s \
      -p no:cacheprovider 2>&1 | tail -15
  step "graphscope launch-cost --measure --quick (the user's command)"
  GRAPHSCOPE_DATA_DIR="$W" timeout 12 python3 -m graphscope launch-cost --measure --quick --nodes 2876 | tail -8
  cp "$W/launch_cost.json" "$RESULTS/launch_cost_measured.json" 2>/dev/null
  step "decoder three ways, and the fusion check on its traces"
  timeout 22 python3 $B/fusion_check.py measure -o "$W/decoder" --layers 8 --steps 100 --active 6
  cp "$W/decoder/fusion_times.json" "$RESULTS/" 2>/dev/null
  timeout 10 python3 $B/fusion_check.py check "$W/decoder" > "$RESULTS/fusion_check.json"
  python3 -c "import json; r = json.load(open('$RESULTS/fusion_check.json')); print('prediction error', round(r['prediction_error'], 4), [round(x, 4) for x in r['prediction_error_95']], 'untraced', r.get('untraced', {}).get('speedup_full_over_piecewise'))"
  step "done"
fi

#!/bin/bash
# GPU job of engineer "pdl" (issue #47, programmatic dependent launch). Usage: bash benchmarks/gpu_jobs/pdl.sh CALL
# Writes everything under $RESULTS; every step has its own timeout and failures do not stop the rest.
set +e
CALL=${1:-1}
RESULTS=${RESULTS:-/tmp/pdl-results}
mkdir -p "$RESULTS"
export PYTHONUNBUFFERED=1
step() { echo "== $(date +%T) $*"; }

if [ "$CALL" = 1 ]; then
  step probe
  timeout 18 python3 benchmarks/pdl_probe.py 2>&1 | tee "$RESULTS/probe.log"
  step nsys trace of the standalone chain
  T=$(mktemp -d)
  timeout 26 nsys profile --trace=cuda,nvtx --cuda-graph-trace=node --sample=none --cpuctxsw=none \
    -o "$T/pdl_chain" -f true python3 benchmarks/pdl_trace_chain.py > "$RESULTS/nsys.log" 2>&1
  timeout 8 nsys export --type sqlite -f true -o "$T/pdl_chain.sqlite" "$T/pdl_chain.nsys-rep" >> "$RESULTS/nsys.log" 2>&1
  ls -la "$T" | tee -a "$RESULTS/nsys.log"
  SIZE=$(stat -c %s "$T/pdl_chain.sqlite" 2>/dev/null || echo 0)
  if [ "$SIZE" -gt 0 ] && [ "$SIZE" -lt 2000000 ]; then cp "$T/pdl_chain.sqlite" "$RESULTS/";
  elif [ "$SIZE" -gt 0 ]; then gzip -c "$T/pdl_chain.sqlite" > "$T/pdl_chain.sqlite.gz";
    [ "$(stat -c %s "$T/pdl_chain.sqlite.gz")" -lt 2000000 ] && cp "$T/pdl_chain.sqlite.gz" "$RESULTS/"; fi
  step graphscope dag --pdl
  timeout 12 python3 -m graphscope dag examples/pdl_chain.py --pdl --reps 30 2>&1 | tee "$RESULTS/dag_pdl.txt" | tail -50
  step gpu tests
  timeout 14 python3 -m pytest -m gpu tests/gpu/test_pdl_gpu.py -q -s -p no:cacheprovider -k "eager or switched" 2>&1 | tail -30
  step done
  exit 0
fi

# calls 2 and 3: the GPU tests, the figures, tune --pdl, then traces (nsys and Kineto) with their second counts
step gpu tests
timeout 40 python3 -m pytest -m gpu tests/gpu/test_pdl_gpu.py -q -p no:cacheprovider -s 2>&1 | tail -45 | tee "$RESULTS/tests.log"
step measurement
timeout 25 python3 benchmarks/pdl_measure.py "$RESULTS" 2>&1 | tee "$RESULTS/measure.log"
step "tune --pdl from PDL off everywhere (each name's and each launch's flip, winners together, confirmed afresh)"
echo '{"format": "graphscope-launch-config/1", "blocks": {}, "pdl": {"link": false, "loose": false}}' > "$RESULTS/pdl_off.json"
timeout 25 python3 -m graphscope tune examples/pdl_chain.py --pdl --reps 100 --config "$RESULTS/pdl_off.json" \
  --save "$RESULTS/pdl_tuned.json" --json > "$RESULTS/tune_pdl.json" 2> "$RESULTS/tune_pdl.err"
tail -c 1500 "$RESULTS/tune_pdl.err"; python3 -c "import json,sys; from graphscope.cli.pdl import render_pdl_tuning as r; print(r(json.load(open(sys.argv[1]))))" "$RESULTS/tune_pdl.json" 2>&1 | tee "$RESULTS/tune_pdl.txt"
step "node-level nsys traces of the chain's graph, PDL on and off; each edge's gap from them"
N=$(mktemp -d)
timeout 30 python3 -m graphscope run examples/pdl_chain.py --mode graph --reps 10 --nsys --trace-dir "$N/on" --json > "$RESULTS/run_nsys_on.json" 2> "$RESULTS/run_nsys_on.err"
timeout 30 python3 -m graphscope run examples/pdl_chain.py --mode graph --reps 10 --nsys --trace-dir "$N/off" --config "$RESULTS/pdl_off.json" --json > "$RESULTS/run_nsys_off.json" 2> "$RESULTS/run_nsys_off.err"
ls -la "$N/on" "$N/off" | tee "$RESULTS/nsys_files.txt"
ON=$(ls "$N"/on/*graph*.sqlite 2>/dev/null | head -1); OFF=$(ls "$N"/off/*graph*.sqlite 2>/dev/null | head -1)
for f in "$ON" "$OFF"; do
  [ -n "$f" ] || continue
  name="h100_pdl_chain_$(basename "$(dirname "$f")")_node.sqlite"
  if [ "$(stat -c %s "$f")" -lt 2500000 ]; then cp "$f" "$RESULTS/$name"; else gzip -c "$f" > "$RESULTS/$name.gz"; fi
done
[ -n "$ON" ] && timeout 20 python3 -m graphscope dag examples/pdl_chain.py --trace "$ON" ${OFF:+--plain-trace "$OFF"} 2>&1 | tee "$RESULTS/dag_trace.txt" | tail -45
timeout 20 python3 benchmarks/pdl_trace_check.py $ON $OFF 2>&1 | tee "$RESULTS/trace_check.txt"
step "Kineto: the PDL chain under torch.profiler; overlap by graphscope and by plain JSON"
K=$(mktemp -d)
timeout 20 python3 -m graphscope run examples/pdl_chain.py --profile torch --trace-dir "$K" --reps 5 --json > "$RESULTS/run_torch.json" 2> "$RESULTS/run_torch.err"
for f in "$K"/*.json; do [ -f "$f" ] && gzip -c "$f" > "$RESULTS/h100_$(basename "$f").gz"; done
timeout 15 python3 benchmarks/pdl_trace_check.py "$K"/*.json 2>&1 | tee -a "$RESULTS/trace_check.txt"
step done

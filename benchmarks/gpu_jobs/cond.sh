#!/usr/bin/env bash
# GPU job of engineer "cond" (issue #47, conditional nodes). Usage: bash benchmarks/gpu_jobs/cond.sh CALL
# with RESULTS=<dir> set (every output file goes there). Each step is guarded and timed out.
set +e
CALL="${1:-1}"
RESULTS="${RESULTS:-$PWD/gpu-out}"
TRACES=/tmp/cond_traces
mkdir -p "$RESULTS" "$TRACES"
export PYTHONUNBUFFERED=1
step() {  # step NAME SECONDS COMMAND...: run one guarded step, its output in $RESULTS/NAME.log
  local name="$1" limit="$2"; shift 2
  echo "== $name (limit ${limit}s) $(date -u +%T)"
  timeout "$limit" "$@" > "$RESULTS/$name.log" 2>&1
  echo "   rc=$? $(date -u +%T)"; tail -4 "$RESULTS/$name.log"
}
GS="python3 -m graphscope"  # timeout runs programs, not shell functions
keep_traces() {  # the small files of the profiled runs: sidecars always, traces when small
  for f in "$TRACES"/*.conditionals.json "$TRACES"/*.pt.trace.json "$TRACES"/*.sqlite; do
    [ -f "$f" ] && [ "$(stat -c %s "$f")" -lt 1200000 ] && cp "$f" "$RESULTS/"
  done
}
case "$CALL" in
  1)
    step probes 15 python3 benchmarks/probe_conditional.py
    step cost 20 python3 benchmarks/conditional_cost.py --no-torch --reps 10 --dot "$RESULTS/while_decode.dot"
    step run_json 18 $GS run examples/while_decode.py --reps 5 --warmup 1 --json
    step run_torch 20 $GS run examples/while_decode.py --mode graph --reps 3 --warmup 1 --profile torch \
      --trace-dir "$TRACES"
    keep_traces
    ;;
  2)  # the one GPU call of the session: facts first, then measurement, tests, the profiled runs
    step probes 14 python3 benchmarks/probe_conditional.py
    step cost 24 python3 benchmarks/conditional_cost.py --reps 15 --dot "$RESULTS/while_decode.dot"
    step gpu_tests 30 python3 -m pytest -m gpu tests/gpu/test_conditional_gpu.py -q -s -x -p no:cacheprovider
    step run_torch 16 $GS run examples/while_decode.py --mode graph --reps 3 --warmup 1 --profile torch \
      --trace-dir "$TRACES"
    keep_traces
    step run_nsys 16 $GS run examples/while_decode.py --mode graph --reps 3 --warmup 1 --profile nsys \
      --trace-dir "$TRACES"
    keep_traces
    ;;
  *)  # 3: the final confirmation on merged main: what call 2 could not reach first (the profiled runs and
      # their trace check, summary of the trace), then the GPU tests and the measurement
    step run_torch 18 $GS run examples/while_decode.py --mode graph --reps 3 --warmup 1 --profile torch \
      --trace-dir "$TRACES"
    step summary_torch 8 $GS summary "$TRACES/while_decode_graph.pt.trace.json"
    keep_traces
    step gpu_tests 25 python3 -m pytest -m gpu tests/gpu/test_conditional_gpu.py -q -s -x -p no:cacheprovider
    step run_nsys 25 $GS run examples/while_decode.py --mode graph --reps 3 --warmup 1 --profile nsys \
      --trace-dir "$TRACES"
    keep_traces
    step cost 20 python3 benchmarks/conditional_cost.py --reps 20 --dot "$RESULTS/while_decode.dot"
    ls -la "$TRACES" > "$RESULTS/traces_ls.txt" 2>&1
    ;;
esac
echo "done $(date -u +%T)"

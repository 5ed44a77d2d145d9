#!/usr/bin/env bash
# GPU job of engineer "cond" (issue #47, conditional nodes). Usage: bash benchmarks/gpu_jobs/cond.sh CALL
# with RESULTS=<dir> set (every output file goes there). Each step is guarded and timed out.
set +e
CALL="${1:-1}"
RESULTS="${RESULTS:-$PWD/gpu-out}"
mkdir -p "$RESULTS"
export PYTHONUNBUFFERED=1
step() {  # step NAME SECONDS COMMAND...: run one guarded step, its output in $RESULTS/NAME.log
  local name="$1" limit="$2"; shift 2
  echo "== $name (limit ${limit}s) $(date -u +%T)"
  timeout "$limit" "$@" > "$RESULTS/$name.log" 2>&1
  echo "   rc=$? $(date -u +%T)"; tail -5 "$RESULTS/$name.log"
}
gs() { python3 -m graphscope "$@"; }
case "$CALL" in
  1)
    step probes 20 python3 benchmarks/probe_conditional.py
    step cost 25 python3 benchmarks/conditional_cost.py --no-torch --reps 10 --dot "$RESULTS/while_decode.dot"
    step run_json 20 gs run examples/while_decode.py --reps 5 --warmup 1 --json
    ;;
  *)
    step gpu_tests 45 python3 -m pytest -m gpu tests/gpu/test_conditional_gpu.py -q -p no:cacheprovider -x
    step run_json 20 gs run examples/while_decode.py --reps 30 --json
    step dag_json 10 gs dag examples/while_decode.py --json
    step dag_dot 10 gs dag examples/while_decode.py --dot
    step measure 20 python3 benchmarks/conditional_cost.py
    ;;
esac
echo "done $(date -u +%T)"

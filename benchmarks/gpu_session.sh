#!/usr/bin/env bash
# Everything that needs the GPU machine, in one call (see README "On a GPU"): the gpu-marked tests,
# the measured figures of the three examples, a DAG, two tuning runs, the in-place update study and
# an --nsys run. Results land in $OUT (or ./gpu-out). Usage on the lent H200:
#   bash benchmarks/gpu_session.sh [tests|measure|traces|all]   (each part fits one 10-minute call)
set -uo pipefail
cd "$(dirname "$0")/.."
OUT="${OUT:-$PWD/gpu-out}"  # at most 8 files come back: logs there, everything else in results.tgz
WORK=/tmp/gpu-results
mkdir -p "$OUT" "$WORK"
if [ -d .whl ]; then  # pure-Python packages the GPU image lacks (sqlite-utils and friends)
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
  export PYTHONPATH=/tmp/site
fi
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
if [ -d .device/lib ]; then  # Nsight Systems' importer needs these two libraries there
  export LD_LIBRARY_PATH="$PWD/.device/lib:${LD_LIBRARY_PATH:-}"
  export PATH="/opt/nvidia/nsight-compute/2025.3.1/host/target-linux-x64:$PATH"
fi
what="${1:-all}"
gs() { python3 -m graphscope "$@"; }
{
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  python3 -c "import cupy, numpy; print('cupy', cupy.__version__, 'numpy', numpy.__version__)"
  python3 -c "import torch; print('torch', torch.__version__)"
  python3 -c "from importlib.metadata import version; print('cuda-bindings', version('cuda-bindings'))"
  command -v nsys && nsys --version
} 2>&1 | tee "$WORK/environment.txt"

if [ "$what" = tests ] || [ "$what" = all ]; then
  python3 -m pytest -m gpu tests/gpu -v -s -p no:cacheprovider ${PYTEST_K:+-k "$PYTEST_K"} 2>&1 \
    | tee "$OUT/gpu_tests.log" | tail -40
fi
if [ "$what" = measure ] || [ "$what" = all ]; then
  exec > >(tee "$OUT/measure.log") 2>&1
  OUT_LOGS="$OUT"; OUT="$WORK"
  db="$OUT/session.sqlite"
  for example in seed_vecadd forkjoin transformer_step decoder_step torch_block; do
    gs run "examples/$example.py" --reps 30 --session "$db" --json > "$OUT/run_$example.json" 2>"$OUT/run_$example.txt"
    python3 -c "import json, sys; from graphscope.text.run import render_run; \
print(render_run(json.load(open(sys.argv[1]))))" "$OUT/run_$example.json" >> "$OUT/run_$example.txt"
    tail -12 "$OUT/run_$example.txt"
  done
  for example in forkjoin decoder_step torch_block; do
    gs dag "examples/$example.py" > "$OUT/dag_$example.txt" 2>&1; head -30 "$OUT/dag_$example.txt"
    gs dag "examples/$example.py" --json > "$OUT/dag_$example.json" 2>&1
  done
  gs dag examples/forkjoin.py --dot > "$OUT/dag_forkjoin.dot" 2>&1
  gs tune examples/decoder_step.py --node side_gemm --session "$db" --save "$OUT/decoder_tuned.json" \
     > "$OUT/tune_decoder_2d.txt" 2>&1; tail -30 "$OUT/tune_decoder_2d.txt"
  gs tune examples/decoder_step.py --node transpose --block 32x8,64x4,16x16,32x16,32x4 --session "$db" \
     > "$OUT/tune_decoder_transpose.txt" 2>&1; tail -16 "$OUT/tune_decoder_transpose.txt"
  gs tune examples/seed_vecadd.py --node add --block 64,128,256,512 --session "$db" \
     --save "$OUT/seed_tuned.json" > "$OUT/tune_seed.txt" 2>&1; tail -20 "$OUT/tune_seed.txt"
  gs tune examples/transformer_step.py --strategy descent --session "$db" --save "$OUT/transformer_tuned.json" \
     > "$OUT/tune_transformer.txt" 2>&1; tail -12 "$OUT/tune_transformer.txt"
  tar czf "$OUT_LOGS/results_measure.tgz" -C /tmp gpu-results
fi
if [ "$what" = traces ] || [ "$what" = all ]; then
  exec > >(tee "$OUT/traces.log") 2>&1
  OUT_LOGS="$OUT"; OUT="$WORK"
  db="$OUT/session.sqlite"
  python3 benchmarks/inplace_update.py > "$OUT/inplace.json" 2> "$OUT/inplace.txt"; cat "$OUT/inplace.txt"
  gs run examples/seed_vecadd.py --reps 3 --nsys --nsys-dir "$OUT/traces" --session "$db" > "$OUT/run_nsys.txt" 2>&1
  tail -4 "$OUT/run_nsys.txt"
  gs run examples/decoder_step.py --reps 20 --nsys --nsys-dir "$OUT/traces" --session "$db" --json \
     > "$OUT/run_decoder_nsys.json" 2>"$OUT/run_decoder_nsys.txt"
  run_id=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['run_id'])" "$OUT/run_decoder_nsys.json")
  gs report "run:$run_id" --session "$db" -o "$OUT_LOGS/report_decoder_run.html"
  gs report "run:$run_id" --session "$db" -o "$OUT/report_decoder_run.md"; cat "$OUT/report_decoder_run.md"
  gs tune examples/decoder_step.py --node side_gemm --block 16x16,32x8,64x4,256x4 --session "$db" > /dev/null 2>&1
  tuning_id=$(python3 -c "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute('select max(id) from tunings').fetchone()[0])" "$db")
  gs report "tune:$tuning_id" --session "$db" -o "$OUT/report_tuning.md"; head -30 "$OUT/report_tuning.md"
  for t in "$OUT"/traces/*.sqlite; do gs summary "$t" | head -20; done > "$OUT/trace_summaries.txt" 2>&1
  cat "$OUT/trace_summaries.txt"
  cp "$OUT"/traces/*.sqlite "$OUT/" 2>/dev/null || true
  rm -rf "$OUT/traces"
  tar czf "$OUT_LOGS/results.tgz" -C /tmp gpu-results
fi

"""Reading a PyTorch-profiler trace: graphscope's reader against Holistic Trace Analysis' loader.

Each side runs as a fresh process, interleaved, on the same file; the figure is wall time and peak
resident memory (ru_maxrss) of the whole process, start-up included. graphscope: `load_trace` (every
table, the graph-node grouping). HTA: `TraceAnalysis(trace_dir=...)` on a folder holding the one file
(its parse of every event into a DataFrame). HTA runs from another Python where it is installed:

    python benchmarks/kineto_read.py TRACE.json.gz --hta-python /path/to/venv/bin/python [--rounds 5]
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

OURS = """
import json, resource, sys, time
t = time.perf_counter()
from graphscope.trace import load_trace
trace = load_trace(sys.argv[1])
wall = time.perf_counter() - t
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
print(json.dumps({"s": wall, "kernels": len(trace.kernels), "gib": peak}))
"""
HTA = """
import json, resource, sys, time, logging
logging.disable(logging.CRITICAL)
t = time.perf_counter()
from hta.trace_analysis import TraceAnalysis
analysis = TraceAnalysis(trace_dir=sys.argv[1])
frame = next(iter(analysis.t.traces.values()))
wall = time.perf_counter() - t
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
print(json.dumps({"s": wall, "events": len(frame), "gib": peak}))
"""


def run(python: str, code: str, target: str) -> dict:
    out = subprocess.run([python, "-c", code, target], capture_output=True, text=True, cwd=ROOT, timeout=900)
    if out.returncode != 0:
        raise SystemExit(f"{python}: {out.stderr[-800:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("trace", type=Path)
    parser.add_argument("--hta-python", help="a Python with holistictraceanalysis installed")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    results: dict[str, list[dict]] = {"graphscope": [], "hta": []}
    with tempfile.TemporaryDirectory() as folder:
        shutil.copy(args.trace, Path(folder) / args.trace.name)
        for _ in range(args.rounds):
            results["graphscope"].append(run(sys.executable, OURS, str(args.trace)))
            if args.hta_python:
                results["hta"].append(run(args.hta_python, HTA, folder))
    for name, rounds in results.items():
        if rounds:
            wall = statistics.median(r["s"] for r in rounds)
            memory = statistics.median(r["gib"] for r in rounds)
            print(f"{name}: median {wall:.2f} s, peak {memory:.3f} GiB over {len(rounds)} rounds")


if __name__ == "__main__":
    main()

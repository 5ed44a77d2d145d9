"""A PyTorch-profiler trace's summary: graphscope against Holistic Trace Analysis' loader and the decode floor.

Each side runs as a fresh process, interleaved round by round on the same file (graphscope, HTA, floor,
graphscope, ...); each figure is the child's own wall time, CPU time (user + system, from wait4) and
peak resident memory (ru_maxrss), start-up and imports included. Ratios are medians of the round-by-round
ratios.

- graphscope: `python -m graphscope summary --no-cache --json TRACE` (the whole command: read, analyse,
  print; --no-cache so every round reads the JSON).
- HTA: `TraceAnalysis(trace_dir=...)` on a folder holding the one file (its parse of every event into a
  DataFrame), from a Python where HolisticTraceAnalysis is installed (--hta-python; default
  /work/venv-hta/bin/python when it exists: `python3 -m venv /work/venv-hta &&
  /work/venv-hta/bin/pip install HolisticTraceAnalysis`).
- floor: inflate the file and decode it whole with msgspec into structs of only the fields graphscope
  reads (the garbage collector off, as graphscope's commands run): what any reader of the JSON pays
  before it has one column.

graphscope's modules are compiled to bytecode first (`compileall`), as an installed package's are: with
PYTHONDONTWRITEBYTECODE set and no __pycache__, every round would compile 65 modules (~0.15 s).

    python benchmarks/kineto_read.py [TRACE ...] [--rounds 5] [--stitched 1.09M] [--stitched 5.0M]
                                     [--hta-python PY] [--no-hta]

Without TRACE or --stitched: the three public 105-109k-event traces in tests/data/kineto. --stitched:
copies of HTA's eager trace stitched to 1.09M or 5.0M events (made once under benchmarks/out/kineto/:
each copy shifted past the one before, its correlation and external ids offset).
Results: benchmarks/out/kineto_read.json (a run replaces the entries of the traces it measured).
"""

from __future__ import annotations

import argparse
import compileall
import gzip
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "benchmarks" / "out"
DATA = ROOT / "tests" / "data" / "kineto"
REAL = ("hta__trace_diff_test_graph_replay", "hta__trace_diff_control_eager", "hta__rank0_of_16_graph_launches")
EAGER = DATA / "hta__trace_diff_control_eager.json.gz"  # 109,123 events: x10 = 1.09M, x46 = 5.0M
SIZES = {10: ("1.09M", "eager_x10_1.09M.json.gz"), 46: ("5.0M", "eager_x46_5.0M.json.gz")}
STITCHED = {copies: name for copies, (_, name) in SIZES.items()}
HTA_VENV = Path("/work/venv-hta/bin/python")

HTA = """
import logging, sys
logging.disable(logging.CRITICAL)
from hta.trace_analysis import TraceAnalysis
analysis = TraceAnalysis(trace_dir=sys.argv[1])
print(len(next(iter(analysis.t.traces.values()))))
"""
# The floor's structs are trace/kineto_json.py's Args and Event, written out: importing that module loads the
# graphscope.trace package (the SQLite reader, NumPy), and the floor is the decode alone, in a bare process.
FLOOR = """
import gc, gzip, sys
import msgspec
gc.disable()
Number = int | float | str | None
class Args(msgspec.Struct, gc=False):
    correlation: Number = None
    device: Number = None
    stream: Number = None
    context: Number = None
    grid: object = None
    block: object = None
    bytes: Number = None
    registers: Number = msgspec.field(default=None, name="registers per thread")
    shared: Number = msgspec.field(default=None, name="shared memory")
    graph_node: Number = msgspec.field(default=None, name="graph node id")
    graph: Number = msgspec.field(default=None, name="graph id")
    input_dims: msgspec.Raw = msgspec.field(default=msgspec.Raw(), name="Input Dims")
    input_type: msgspec.Raw = msgspec.field(default=msgspec.Raw(), name="Input type")
class Event(msgspec.Struct, gc=False):
    ph: str = ""
    cat: str | None = None
    name: str = ""
    pid: Number = None
    tid: Number = None
    ts: Number = 0.0
    dur: Number = 0.0
    args: Args | None = None
class Trace(msgspec.Struct):
    traceEvents: list[Event] = []
with gzip.open(sys.argv[1]) as f:
    data = f.read()
print(len(msgspec.json.decode(data, type=Trace).traceEvents))
"""


def child(command: list[str]) -> dict[str, float]:
    """Run one fresh process; its wall time, CPU time and peak memory (its own, from wait4)."""
    start = time.perf_counter()
    process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - start
    error = process.stderr.read().decode(errors="replace") if process.stderr else ""
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        raise SystemExit(f"{' '.join(command[:4])}...: exit {process.returncode}: {error[-800:]}")
    return {"wall_s": wall, "cpu_s": usage.ru_utime + usage.ru_stime, "peak_mib": usage.ru_maxrss / 1024}


def stitched(copies: int) -> Path:
    """HTA's eager trace `copies` times over, each copy after the one before (made once)."""
    import msgspec

    path = OUT / "kineto" / STITCHED[copies]
    if path.exists():
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    with gzip.open(EAGER) as source:
        document = msgspec.json.decode(source.read())
    events = document.pop("traceEvents")
    times = [(e["ts"], e.get("dur", 0)) for e in events if isinstance(e.get("ts"), int)]
    span = max(t + d for t, d in times) - min(t for t, _ in times) + 1000  # 1 ms between copies
    ids = [v for e in events for v in (e.get("id"), *(e.get("args") or {}).values()) if isinstance(v, int)]
    step = max(ids) + 1

    def shifted(event: dict, k: int) -> dict:
        event = dict(event)
        if isinstance(event.get("ts"), int):
            event["ts"] += k * span
        if isinstance(event.get("id"), int):  # a flow's id (ac2g)
            event["id"] += k * step
        args = event.get("args")
        if isinstance(args, dict):
            args = event["args"] = dict(args)
            for key in ("correlation", "External id"):
                if isinstance(args.get(key), int):
                    args[key] += k * step
        return event

    part = path.with_suffix(".part")
    with gzip.open(part, "wb", compresslevel=1) as out:
        out.write(msgspec.json.encode(document)[:-1] + b',"traceEvents":[\n')
        for k in range(copies):
            out.write((b",\n" if k else b"") + msgspec.json.encode([shifted(e, k) for e in events])[1:-1])
        out.write(b"\n]}\n")
    part.rename(path)
    return path


COUNT = """
import gzip, sys, msgspec
class Trace(msgspec.Struct):
    traceEvents: list[msgspec.Raw] = []
with gzip.open(sys.argv[1]) as f:
    print(len(msgspec.json.decode(f.read(), type=Trace).traceEvents))
"""


def events_of(path: Path) -> int:
    """The trace's events, counted in a child: this process stays small, since a child's ru_maxrss
    starts from the RSS of the process that spawned it (Linux carries it over exec)."""
    out = subprocess.run([sys.executable, "-c", COUNT, str(path)], capture_output=True, text=True, check=True)
    return int(out.stdout)


def measure(path: Path, rounds: int, hta: str | None) -> dict:
    sides = {
        "graphscope": [sys.executable, "-m", "graphscope", "summary", "--no-cache", "--json", str(path)],
        "floor": [sys.executable, "-c", FLOOR, str(path)],
    }
    results: dict[str, list[dict]] = {side: [] for side in sides}
    with tempfile.TemporaryDirectory() as folder:
        if hta:
            os.symlink(path.resolve(), Path(folder) / path.name)
            sides["hta"] = [hta, "-c", HTA, folder]
            results["hta"] = []
        for _ in range(rounds):
            for side, command in sides.items():
                results[side].append(child(command))
    ours = results["graphscope"]
    figures: dict = {"events": events_of(path), "rounds": rounds}
    for side, runs in results.items():
        figures[side] = {key: statistics.median(r[key] for r in runs) for key in runs[0]}
        figures[side]["runs"] = runs

    def ratio(side: str, key: str, theirs_over_ours: bool = True) -> float:
        pairs = zip(ours, results[side])
        return statistics.median(t[key] / o[key] if theirs_over_ours else o[key] / t[key] for o, t in pairs)

    if hta:
        figures["hta_over_graphscope_wall"] = ratio("hta", "wall_s")
        figures["hta_over_graphscope_cpu"] = ratio("hta", "cpu_s")
        figures["graphscope_over_hta_memory"] = ratio("hta", "peak_mib", theirs_over_ours=False)
    figures["graphscope_over_floor_wall"] = ratio("floor", "wall_s", theirs_over_ours=False)
    figures["graphscope_over_floor_cpu"] = ratio("floor", "cpu_s", theirs_over_ours=False)
    figures["graphscope_bytes_per_event"] = figures["graphscope"]["peak_mib"] * 2**20 / figures["events"]
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("traces", nargs="*", type=Path)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument(
        "--stitched",
        action="append",
        choices=[size for size, _ in SIZES.values()],
        help="a stitched copy of HTA's eager trace (made once if missing); repeatable; without TRACE, only these",
    )
    parser.add_argument("--hta-python", default=str(HTA_VENV) if HTA_VENV.exists() else None)
    parser.add_argument("--no-hta", action="store_true", help="graphscope and the floor only")
    parser.add_argument("--make-stitched", type=int, choices=sorted(STITCHED), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.make_stitched:
        stitched(args.make_stitched)
        return
    hta = None if args.no_hta else args.hta_python
    compileall.compile_dir(ROOT / "graphscope", quiet=1)  # as an installed package is (module docstring)
    traces = args.traces or ([] if args.stitched else [DATA / f"{name}.json.gz" for name in REAL])
    for copies, (size, name) in SIZES.items():
        if size in (args.stitched or []):  # made in a child, for the reason events_of gives
            subprocess.run([sys.executable, __file__, "--make-stitched", str(copies)], check=True)
            traces.append(OUT / "kineto" / name)
    report = {"hta_python": hta, "machine_load": os.getloadavg(), "traces": {}}
    for path in traces:
        figures = measure(path, args.rounds, hta)
        report["traces"][path.name] = figures
        line = f"{path.name}: {figures['events']:,} events, {args.rounds} rounds (medians)"
        for side in ("graphscope", "hta", "floor"):
            if side in figures:
                f = figures[side]
                line += f"\n  {side:10} {f['wall_s']:7.2f} s wall {f['cpu_s']:7.2f} s CPU {f['peak_mib']:8.1f} MiB peak"
        if hta:
            line += (
                f"\n  HTA / graphscope: {figures['hta_over_graphscope_wall']:.2f}x wall, "
                f"{figures['hta_over_graphscope_cpu']:.2f}x CPU; graphscope's memory "
                f"{figures['graphscope_over_hta_memory']:.3f}x HTA's"
            )
        line += (
            f"\n  graphscope / floor: {figures['graphscope_over_floor_wall']:.2f}x wall, "
            f"{figures['graphscope_over_floor_cpu']:.2f}x CPU; {figures['graphscope_bytes_per_event']:.0f} B/event peak"
        )
        print(line, flush=True)
    OUT.mkdir(exist_ok=True)
    results = OUT / "kineto_read.json"  # one file for every trace measured: a run updates its traces' entries
    try:
        kept = json.loads(results.read_text())["traces"]
    except (OSError, ValueError, KeyError):
        kept = {}
    report["traces"] = {**kept, **report["traces"]}
    results.write_text(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()

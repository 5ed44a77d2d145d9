"""Graph launch cost by shape on this machine's GPU (issue #45): measure, fit, and check under Nsight Systems.

    python benchmarks/graph_launch_cost.py measure -o raw.json [--quick]
        synthetic graphs of 10 to 5,000 tiny kernel nodes in six shapes (graphscope/workload/launch_bench.py),
        each launched one at a time on an idle GPU: host cuGraphLaunch time, GPU time from an event before
        the call to one after it, first launch without upload, a launch into a busy stream
    python benchmarks/graph_launch_cost.py fit raw.json [nsys.json] -o graphscope/core/launch_cost_h100.json
        fixed + per-node + per-edge terms with 95% bootstrap intervals (core/launch_cost.py)
    python benchmarks/graph_launch_cost.py traced -o plan.json        (run under nsys: the workload traced)
    python benchmarks/graph_launch_cost.py latency trace.sqlite plan.json -o nsys.json
        from the Nsight export, by plain SQL: per launch its call's host time, the first node's start
        after the call began (first-node latency) and the replay (first node start to last node end)
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

TRACED_SIZES = (10, 100, 1000, 2000, 5000)
TRACED_SHAPES = ("chain", "fanout")
TRACED_REPS = 20


def _measure(args: argparse.Namespace) -> int:
    from graphscope.workload.launch_bench import SHAPES, SIZES, measure

    sizes = (10, 100, 1000, 5000) if args.quick else SIZES
    t0 = time.perf_counter()
    raw = measure(SHAPES, sizes, reps=args.reps, say=print, keep=lambda r: Path(args.out).write_text(json.dumps(r)))
    raw["seconds"] = round(time.perf_counter() - t0, 2)
    Path(args.out).write_text(json.dumps(raw))
    print(f"{len(raw['samples'])} graphs measured on {raw['gpu']} in {raw['seconds']} s -> {args.out}")
    return 0


def _traced(args: argparse.Namespace) -> int:
    """The workload nsys traces: each (shape, size) instantiated, uploaded, launched TRACED_REPS times,
    each launch on an idle GPU (synchronised, then 200 us of host sleep)."""
    from graphscope.workload.launch_bench import _Driver, _nodes, build

    drv = _Driver()
    plan = []
    for shape in TRACED_SHAPES:
        for n in TRACED_SIZES:
            g, edges, _, _ = build(drv, shape, n)
            exec_ = drv.ok(drv.d.cuGraphInstantiate(g, 0))
            drv.ok(drv.d.cuGraphUpload(exec_, drv.stream))
            drv.sync()
            for _ in range(TRACED_REPS):
                time.sleep(200e-6)
                drv.launch(exec_)
                drv.sync()
            plan.append({"shape": shape, "nodes": _nodes(drv, g), "edges": edges, "launches": TRACED_REPS})
            drv.ok(drv.d.cuGraphExecDestroy(exec_))
    Path(args.out).write_text(json.dumps({"gpu": drv.name, "plan": plan}))
    return 0


def launches_by_sql(path: Path) -> list[dict[str, int]]:
    """Every graph-launch call in an Nsight export with its GPU work, by plain SQL: call start and end, and
    the first start and last end of the work that carries its correlation id (node rows in node mode, the
    graph row in graph mode)."""
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    work = [t for t in ("CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_GRAPH_TRACE",
                        "CUPTI_ACTIVITY_KIND_MEMSET", "CUPTI_ACTIVITY_KIND_MEMCPY") if t in tables]  # fmt: skip
    union = " UNION ALL ".join(f"SELECT correlationId, start, end FROM {t}" for t in work)
    rows = db.execute(
        f"""SELECT a.start, a.end, MIN(w.start), MAX(w.end), COUNT(w.start)
            FROM CUPTI_ACTIVITY_KIND_RUNTIME a JOIN StringIds s ON s.id = a.nameId
            JOIN ({union}) w ON w.correlationId = a.correlationId
            WHERE s.value LIKE 'cuGraphLaunch%' OR s.value LIKE 'cudaGraphLaunch%'
            GROUP BY a.correlationId ORDER BY a.start"""
    ).fetchall()
    db.close()
    keys = ("call_start", "call_end", "first_start", "last_end", "rows")
    return [dict(zip(keys, r, strict=True)) for r in rows]


def _latency(args: argparse.Namespace) -> int:
    plan = json.loads(Path(args.plan).read_text())
    launches = launches_by_sql(Path(args.trace))
    expected = sum(p["launches"] for p in plan["plan"])
    if len(launches) != expected:
        print(f"{args.trace}: {len(launches)} graph launches with work, the plan made {expected}", file=sys.stderr)
        return 2
    out, at = [], 0
    for p in plan["plan"]:
        mine = launches[at : at + p["launches"]][1:]  # the first launch after upload left out
        at += p["launches"]

        def med(values: list[int]) -> float:
            return float(statistics.median(values))

        out.append(
            p
            | {
                "host_ns": med([r["call_end"] - r["call_start"] for r in mine]),
                "first_node_ns": med([r["first_start"] - r["call_start"] for r in mine]),
                "after_return_ns": med([r["first_start"] - r["call_end"] for r in mine]),
                "replay_ns": med([r["last_end"] - r["first_start"] for r in mine]),
                "rows": mine[0]["rows"],
            }
        )
        print(json.dumps(out[-1]))
    Path(args.out).write_text(json.dumps({"gpu": plan["gpu"], "trace_mode": args.mode, "points": out}))
    return 0


def _fit(args: argparse.Namespace) -> int:
    from graphscope.core.launch_cost import fit_measurement

    raw = json.loads(Path(args.raw).read_text())
    traced = [json.loads(Path(p).read_text()) for p in args.traced]
    model = fit_measurement(raw, traced, source=args.source)
    Path(args.out).write_text(json.dumps(model, indent=1) + "\n")
    print(json.dumps({k: v for k, v in model.items() if k != "points"}, indent=1))
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="what", required=True)
    p = sub.add_parser("measure")
    p.add_argument("-o", "--out", required=True)
    p.add_argument("--quick", action="store_true")
    p.add_argument("--reps", type=int, default=30)
    p.set_defaults(run=_measure)
    p = sub.add_parser("traced")
    p.add_argument("-o", "--out", required=True)
    p.set_defaults(run=_traced)
    p = sub.add_parser("latency")
    p.add_argument("trace")
    p.add_argument("plan")
    p.add_argument("--mode", default="node")
    p.add_argument("-o", "--out", required=True)
    p.set_defaults(run=_latency)
    p = sub.add_parser("fit")
    p.add_argument("raw")
    p.add_argument("traced", nargs="*")
    p.add_argument("--source", default="benchmarks/graph_launch_cost.py")
    p.add_argument("-o", "--out", required=True)
    p.set_defaults(run=_fit)
    args = parser.parse_args()
    return int(args.run(args))


if __name__ == "__main__":
    sys.exit(main())

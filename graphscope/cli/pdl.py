"""The PDL parts of `graphscope dag` and `graphscope tune --pdl` (registered in cli.py; no Qt).

`dag W.py --pdl` times each programmatic edge in the workload's child (the graph replayed with that edge
made plain, workload/child/pdl.py); `dag W.py --trace T` measures each edge's gap in a node-level trace of the
same workload (`graphscope run W.py --nsys`); both feed one verdict per edge (graph/edges.py).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

from graphscope.core.errors import BadInputError

if TYPE_CHECKING:  # numpy and the DAG load only when a PDL option is used: `graphscope --help` stays quick
    import numpy as np

    from graphscope.graph.model import Dag

DAG_REPS = 100


def add_dag_options(parser: argparse.ArgumentParser) -> None:
    """`dag`'s PDL options."""
    parser.add_argument(
        "--pdl",
        action="store_true",
        help="time each programmatic (PDL) edge: the graph replayed with that edge made plain, against as captured",
    )
    parser.add_argument(
        "--trace",
        type=Path,
        metavar="FILE",
        help="a node-level trace of this workload (graphscope run W.py --nsys): each PDL edge's gap in it",
    )
    parser.add_argument(
        "--plain-trace",
        type=Path,
        metavar="FILE",
        help='with --trace: a node-level trace of the same workload with PDL off (--config {"pdl": {NAME: '
        "false}}): its gaps are what a plain edge costs (default: this graph's own plain kernel edges)",
    )
    parser.add_argument("--reps", type=int, default=DAG_REPS, metavar="N", help="replays per variant with --pdl")


def check_dag_options(args: argparse.Namespace) -> None:
    """Refuse option combinations before any GPU work (one line, exit 2)."""
    if args.reps < 5:
        raise BadInputError(f"--reps {args.reps}: at least 5 replays are needed for an interval")
    if args.plain_trace is not None and args.trace is None:
        raise BadInputError("--plain-trace needs --trace (the trace whose gaps it is compared with)")
    if (args.pdl or args.trace is not None) and args.target.suffix != ".py":
        raise BadInputError(
            "--pdl and --trace time a live capture: give the workload .py (the trace's own DAG has no edges)"
        )
    for path in (args.trace, args.plain_trace):
        if path is not None and not path.exists():
            raise BadInputError(f"{path}: no such file")


def measure_dag(dag: Dag, session: Any, args: argparse.Namespace) -> None:
    """Judge the live DAG's programmatic edges with what `args` asks for (nothing asked: code only)."""
    from graphscope.graph.edges import judge_pdl, kinds_of

    if not (getattr(args, "pdl", False) or getattr(args, "trace", None)):
        return
    check_dag_options(args)
    if not len(kinds_of(dag).programmatic()):
        dag.notes.append("no programmatic edges: nothing for --pdl or --trace to time")
        return
    replays, gaps, reference = None, None, None
    if args.pdl:
        timed = session.request("pdl_edges", reps=args.reps, warmup=3)
        replays = {int(k): v for k, v in timed["edges"].items()}
        plain = timed["all_plain"]
        dag.notes.append(
            f"replay as captured {timed['captured']['median_ns'] / 1e3:.2f} us; with every programmatic edge plain "
            f"{plain['plain_median_ns'] / 1e3:.2f} us ({plain['saving_ns']:+.0f} ns, 95% interval "
            f"[{plain['ci_low_ns']:.0f}, {plain['ci_high_ns']:.0f}]; {timed['reps']} interleaved replays each)"
        )
    if args.trace is not None:
        gaps, reference = trace_gaps(dag, args.trace)
    if args.plain_trace is not None:
        import numpy as np

        pooled = list(trace_gaps(dag, args.plain_trace)[0].values())
        reference = np.concatenate(pooled) if pooled else None
    judge_pdl(dag, gaps, reference, replays)


def trace_gaps(dag: Dag, path: Path) -> tuple[dict[int, np.ndarray], np.ndarray | None]:
    """Each edge's gap per replay in the node-level trace at `path` (graph/edges.py `trace_edge_gaps`); and no
    reference (this DAG's own plain kernel edges are used)."""
    from graphscope.analysis.graphs import node_activities
    from graphscope.graph.edges import trace_edge_gaps
    from graphscope.trace import load_trace

    if not path.exists():
        raise BadInputError(f"{path}: no such file")
    nodes = node_activities(load_trace(path))
    if not len(nodes):
        raise BadInputError(f"{path}: no graph node activity (trace with nsys --cuda-graph-trace=node)")
    found = trace_edge_gaps(dag, nodes.node, nodes.start, nodes.end)
    if found is None:
        raise BadInputError(f"{path}: no graph in it has this workload's {len(dag.nodes)} nodes")
    gaps, graph, replays = found
    dag.notes.append(f"gaps from {path.name}: graph {graph}, {replays} replays")
    return gaps, None


def add_tune_options(parser: argparse.ArgumentParser) -> None:
    """`tune`'s PDL option."""
    parser.add_argument(
        "--pdl",
        action="store_true",
        help="tune programmatic dependent launch instead of blocks: each launch's pdl flag flipped (--node: "
        "one site name or site), re-captured and re-measured, the winners confirmed afresh",
    )


def run_tune_pdl(args: argparse.Namespace, start: Any, recorder: Any, progress: Any) -> int:
    """`graphscope tune W.py --pdl`: load, sweep the PDL flags, print the result, save an adopted config."""
    import json

    from graphscope.core.text import shown_path
    from graphscope.tune.controller import TuningController

    if args.reps is not None and args.reps < 5:
        raise BadInputError(f"--reps {args.reps}: at least 5 replays are needed for an interval")
    if args.block:
        raise BadInputError("--pdl flips launches' PDL flags; --block is for block tuning (drop one of them)")
    controller = TuningController(args.workload, start, args.timeout, recorder)
    try:
        loaded = controller.load(progress)
        if not loaded.sites:
            raise BadInputError(f"{args.workload}: no ctx.launch sites, so no launch's PDL flag to flip")
        result = controller.sweep_pdl(args.node, args.reps, progress)
    finally:
        controller.close()
    data = result.to_json()
    data["workload"] = str(args.workload)
    if args.save:
        data["saved"] = str(args.save) if result.adopt and result.best is not None else None
        if data["saved"]:
            result.best.config.save(args.save)
    if args.json:
        print(json.dumps(data, indent=2))
        return 0
    print(render_pdl_tuning(data))
    if args.save:
        print(
            f"  best config written to {shown_path(args.save)}" if data["saved"] else "  nothing written: not adopted"
        )
    return 0


def render_pdl_tuning(data: dict[str, Any]) -> str:
    """The readable form of `tune --pdl`'s JSON."""
    from graphscope.core.text import printable

    def interval(row: dict[str, Any]) -> str:
        if row.get("median_ns") is None:
            return f"{'-':>10}  {'-':<21}"
        return f"{row['median_ns'] / 1e3:>8.2f}us  [{row['ci_low_ns'] / 1e3:.2f}, {row['ci_high_ns'] / 1e3:.2f}] us"

    def gain(row: dict[str, Any]) -> str:
        ratio = row.get("speedup")
        if not ratio:
            return row.get("status", "")
        word = "faster" if ratio["value"] > 1 else "slower"
        return f"{ratio['value']:.3f}x ({word}{'' if ratio['significant'] else ', within noise'})"

    lines = [
        f"{printable(data['workload'])}: PDL per launch site, {data['reps']} replays per trial, each a fresh capture",
        f"  {'trial':<26} {'median':>10}  {'95% interval':<21}  against the baseline",
        f"  {'baseline':<26} {interval(data['baseline'])}",
    ]
    for row in data["trials"]:
        sites = f" ({row['sites']} sites)" if row.get("sites", 1) > 1 else ""
        label = f"{printable(row['site'])}{sites} PDL {'on' if row['pdl'] else 'off'}"
        lines.append(f"  {label:<26} {interval(row)}  {gain(row)}" + (f" {row['reason']}" if row.get("reason") else ""))
    if data.get("combined"):
        lines.append(f"  {'winners together':<26} {interval(data['combined'])}  {gain(data['combined'])}")
    if data.get("confirmed"):
        base, best = data["confirmed"]
        lines.append(f"  {'confirmed: baseline':<26} {interval(base)}")
        lines.append(f"  {'confirmed: best':<26} {interval(best)}  {gain(best)}")
    if data["adopt"]:
        flips = ", ".join(f"{k}={'on' if v else 'off'}" for k, v in data["best_config"]["pdl"].items())
        lines.append(f"  adopted: PDL {flips}")
    lines += [f"  note: {printable(n)}" for n in data["notes"]]
    return "\n".join(lines)

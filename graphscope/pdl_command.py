"""The PDL parts of `graphscope dag` and `graphscope tune --pdl` (registered in cli.py; no Qt).

`dag W.py --pdl` times each programmatic edge in the workload's child (the graph replayed with that edge
made plain, workload/pdl.py); `dag W.py --trace T` measures each edge's gap in a node-level trace of the
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
    parser.add_argument("--reps", type=int, default=DAG_REPS, metavar="N", help="replays per variant with --pdl")


def measure_dag(dag: Dag, session: Any, args: argparse.Namespace) -> None:
    """Judge the live DAG's programmatic edges with what `args` asks for (nothing asked: code only)."""
    from graphscope.graph.edges import judge_pdl, kinds_of

    if not (getattr(args, "pdl", False) or getattr(args, "trace", None)):
        return
    if not len(kinds_of(dag).programmatic()):
        dag.notes.append("no programmatic edges: nothing for --pdl or --trace to time")
        return
    replays, gaps, reference = None, None, None
    if args.pdl:
        if args.reps < 5:
            raise BadInputError(f"--reps {args.reps}: at least 5 replays are needed for an interval")
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
    judge_pdl(dag, gaps, reference, replays)


def trace_gaps(dag: Dag, path: Path) -> tuple[dict[int, np.ndarray], np.ndarray | None]:
    """Each edge's gap per replay in a node-level trace, the trace's graph picked by its node count; and no
    reference (this DAG's own plain kernel edges are used)."""
    import numpy as np

    from graphscope.analysis.graphs import node_activities
    from graphscope.core.events import graph_of, index_in_graph, node_id
    from graphscope.graph.edges import edge_gaps
    from graphscope.trace import load_trace

    if not path.exists():
        raise BadInputError(f"{path}: no such file")
    nodes = node_activities(load_trace(path))
    if not len(nodes):
        raise BadInputError(f"{path}: no graph node activity (trace with nsys --cuda-graph-trace=node)")
    graphs = graph_of(nodes.node)
    best, rows = None, 0
    for graph in np.unique(graphs):
        mine = graphs == graph
        if int(index_in_graph(nodes.node[mine]).max()) + 1 == len(dag.nodes) and int(mine.sum()) > rows:
            best, rows = int(graph), int(mine.sum())
    if best is None:
        raise BadInputError(f"{path}: no graph in it has this workload's {len(dag.nodes)} nodes")
    ids: list[int | None] = [int(node_id(best, i)) for i in range(len(dag.nodes))]
    dag.notes.append(f"gaps from {path.name}: graph {best}, {rows // max(len(dag.nodes), 1)} replays")
    return edge_gaps(dag, nodes.node, nodes.start, nodes.end, node_ids=ids), None

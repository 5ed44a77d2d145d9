"""A trace's CUDA graphs as DAG models (graph/model.py): nodes in capture order with their durations,
edges unknown (a trace does not record them). What `graphscope dag TRACE` prints, the DAG panel shows
(view/document.py) and a report's side draws (report/sides.py)."""

from __future__ import annotations

from pathlib import Path

from graphscope.analysis.graphs import node_activities, node_durations
from graphscope.core.errors import BadInputError
from graphscope.core.table import Table
from graphscope.graph.from_trace import dags_from_trace
from graphscope.graph.model import Dag
from graphscope.trace.model import Trace


def trace_dags(trace: Trace, nodes: Table) -> list[Dag]:
    """The DAGs a node-mode trace shows (nodes and durations; edges unknown), one per executed graph."""
    durations = node_durations(trace, nodes)
    if not len(durations):
        return []
    return dags_from_trace(durations, trace.symbols, trace.graph_nodes.node[trace.graph_nodes.original_node >= 0])


def dags_of_file(path: Path) -> list[Dag]:
    """The DAGs of a node-mode trace file (`graphscope dag TRACE`); refused where it holds no node work."""
    from graphscope.trace import load_trace

    trace = load_trace(path)
    dags = trace_dags(trace, node_activities(trace))
    if not dags:
        mode = trace.info.graph_trace_mode or "no graph tracing"
        raise BadInputError(
            f"{path}: no graph node activity in this trace ({mode}); capture with "
            "`nsys profile --cuda-graph-trace=node` to see graph nodes"
        )
    return dags

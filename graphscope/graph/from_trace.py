"""A graph's DAG as far as a trace can tell: nodes and their durations, not edges.

A node-mode trace records every executed node (its graphNodeId: `core.events.node_id`) with its
duration per launch; CUDA_GRAPH_NODE_EVENTS also lists nodes that do no GPU work (event record/wait,
empty). Dependencies are not recorded, so `edges_known` is False. Inputs are plain columns (from
graphscope.analysis.graphs.node_durations), so this module needs no trace reader.
"""

from __future__ import annotations

import numpy as np

from graphscope.core import sets
from graphscope.core.events import COPY_DIRECTIONS, Activity, graph_of, index_in_graph, node_id
from graphscope.core.symbols import SymbolTable, elide
from graphscope.core.table import Table
from graphscope.graph.model import Dag, DagNode

NO_EDGES = "a trace does not record dependencies between nodes: edges are unknown (capture the graph live for them)"


def dags_from_trace(nodes: Table, symbols: SymbolTable, created: np.ndarray | None = None) -> list[Dag]:
    """One DAG per executed graph id.

    `nodes` has one row per executed node: node (graphNodeId), kind (an Activity of NODE_WORK),
    name (kernel short-name id in `symbols`, -1 otherwise), stream, count, median_ns, and the launch
    configuration of kernel nodes (grid_x .. block_z).
    `created` optionally lists graphNodeIds created for the instantiated graphs (to show idle nodes).
    """
    ids = nodes.node.astype(np.int64)
    graph_ids = graph_of(ids)
    dags = []
    for graph in sets.unique(graph_ids).tolist():
        mine = np.flatnonzero(graph_ids == graph)
        by_index = {int(index_in_graph(ids[r])): r for r in mine}
        extra = set()
        if created is not None:
            extra = {index_in_graph(int(c)) for c in created if graph_of(int(c)) == graph} - set(by_index)
        dag_nodes = []
        for index in sorted(set(by_index) | extra):
            if index in extra:
                dag_nodes.append(
                    DagNode(index, "other", "no GPU work (event, empty or host node)", trace_id=node_id(graph, index))
                )
                continue
            row = by_index[index]
            kind = Activity(int(nodes.kind[row])).noun
            name = elide(symbols.name(int(nodes.name[row]))) if kind == "kernel" and nodes.name[row] >= 0 else kind
            node = DagNode(
                index,
                kind,
                name,
                trace_id=int(ids[row]),
                duration_ns=float(nodes.median_ns[row]),
                launches=int(nodes.count[row]),
                stream=int(nodes.stream[row]),
            )
            if Activity(int(nodes.kind[row])) != Activity.KERNEL and "bytes" in nodes and nodes.bytes[row] >= 0:
                node.detail["bytes"] = int(nodes.bytes[row])
                direction = COPY_DIRECTIONS.get(int(nodes.copy_kind[row])) if "copy_kind" in nodes else None
                if Activity(int(nodes.kind[row])) == Activity.MEMCPY and direction and direction != "unknown":
                    node.detail["direction"] = direction
                    node.name = f"memcpy {direction}"
            if kind == "kernel" and "block_x" in nodes:
                node.grid = (int(nodes.grid_x[row]), int(nodes.grid_y[row]), int(nodes.grid_z[row]))
                node.block = (int(nodes.block_x[row]), int(nodes.block_y[row]), int(nodes.block_z[row]))
            dag_nodes.append(node)
        dags.append(Dag(dag_nodes, [], "trace", edges_known=False, graph_id=graph, notes=[NO_EDGES]))
    return dags

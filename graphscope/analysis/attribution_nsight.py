"""Replayed nodes of a node-mode Nsight export attributed through the export's node-creation events.

`CUDA_GRAPH_NODE_EVENTS` has a row per node made: the captured graph's nodes (made inside the captured
launch, copy or memset call, on its thread) and the instantiated graph's, which point back through
`originalGraphNodeId` (chains may be longer than one hop). A replayed kernel carries the instantiated
node's id; following the chain to the node that capture made gives the creating thread and time, so the
API call that made it (the call on that thread whose span holds that time) and the NVTX ranges open then
(the operator, with `emit_nvtx` its shapes, and module ranges) are known, with no capture trace.
"""

from __future__ import annotations

import numpy as np

from graphscope.analysis.attribution import Context, NodeAttribution
from graphscope.core import sets
from graphscope.core.events import graph_of
from graphscope.core.symbols import display_api_name
from graphscope.trace.model import Trace

HOPS = 8  # an instantiated node of a cloned graph is two hops from its capture; more is not seen


def created(trace: Trace, node: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per graph-node id: the creation row of the node it was made from (-1: none), and that node's id."""
    table = trace.graph_nodes
    if not len(table) or not len(node):
        return np.full(len(node), -1, np.int64), node.copy(), np.zeros(len(node), bool)
    # an instantiated node has two rows: its creation (no original) and its cloning (the original)
    clone = np.flatnonzero(table.original_node >= 0)
    clone = clone[np.argsort(table.node[clone], kind="stable")]
    ids, original = table.node[clone].astype(np.int64), table.original_node[clone].astype(np.int64)
    current = node.astype(np.int64).copy()
    hops = np.zeros(len(node), np.int64)
    for _ in range(HOPS if len(ids) else 0):
        at = np.minimum(np.searchsorted(ids, current), len(ids) - 1)
        step = ids[at] == current
        if not step.any():
            break
        current = np.where(step, original[at], current)
        hops += step
    made = np.flatnonzero(table.original_node < 0)
    order = made[np.argsort(table.node[made], kind="stable")]
    if not len(order):
        return np.full(len(node), -1, np.int64), current, hops > 0
    at = np.minimum(np.searchsorted(table.node[order], current), len(order) - 1)
    found = table.node[order][at] == current
    return np.where(found, order[at], -1), current, hops > 0


def attribute_created(trace: Trace, nodes: NodeAttribution) -> int:
    """Fill the fields `nodes` lacks from the export's creation events; returns how many nodes were found."""
    rows, origin, _ = created(trace, nodes.node)
    has = np.flatnonzero(rows >= 0)
    if not len(has):
        return 0
    table, api, names = trace.graph_nodes, trace.api, trace.symbols
    context = Context(trace)
    first = len(nodes.captures)
    graphs = graph_of(origin[has])
    for graph in sets.unique(graphs).tolist():  # a capture per graph that capture made
        made = rows[has][graphs == graph]
        nodes.captures.append(
            {
                "file": str(trace.path),
                "graph": int(graph),
                "thread": int(table.thread[made[0]]),
                "start_ns": int(table.start[made].min()),
                "end_ns": int(table.start[made].max()),
                "calls": len(made),
                "rank": None,
            }
        )
    numbers = {g: first + i for i, g in enumerate(sets.unique(graphs).tolist())}
    calls = _calls_at(api, table.thread[rows[has]], table.start[rows[has]])
    stories: list = [None] * len(has)
    threads, times = table.thread[rows[has]], table.start[rows[has]]
    for thread in sets.unique(threads).tolist():  # one binary search per thread
        mine = np.flatnonzero(threads == thread)
        for at, story in zip(mine.tolist(), context.stories(thread, times[mine]), strict=True):
            stories[at] = story
    for name in ("operator", "module", "shapes", "frame", "stack"):
        nodes.set(has, name, [getattr(s, name) for s in stories], overwrite=False)
    nodes.set(
        has,
        "api",
        [None if c < 0 else display_api_name(names.name(int(api.name[c]))) for c in calls.tolist()],
        overwrite=False,
    )
    nodes.set(has, "capture", [str(numbers[g]) for g in graphs.tolist()], overwrite=False)
    return len(has)


def _calls_at(api, threads: np.ndarray, times: np.ndarray) -> np.ndarray:
    """Per (thread, time), the API row on that thread whose span holds the time (-1: none)."""
    out = np.full(len(times), -1, np.int64)
    for thread in sets.unique(threads).tolist():
        mine = np.flatnonzero(threads == thread)
        rows = np.flatnonzero(api.thread == thread)
        if not len(rows):
            continue
        rows = rows[np.argsort(api.start[rows], kind="stable")]
        at = np.searchsorted(api.start[rows], times[mine], side="right") - 1
        ok = (at >= 0) & (api.end[rows[np.maximum(at, 0)]] >= times[mine])
        out[mine[ok]] = rows[at[ok]]
    return out

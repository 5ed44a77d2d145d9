"""Which operator, module, shapes and line of code made each replayed graph node: the summary's answer.

A graph replay shows kernels but not who asked for them: their CPU side is one `cudaGraphLaunch`. The
sources that know are read into one columnar table (analysis/attribution.py): the calls of a capture
trace (the replay's own, which `graphscope run --profile torch` records, or files given with --capture;
analysis/attribution_match.py) and, in a node-mode Nsight export, the node-creation events
(analysis/attribution_nsight.py), which fill what a capture trace left unknown. Where a PyTorch-profiler
graph ran on more than one stream, start order can differ from capture order and the match is only by
position: that is said.
"""

from __future__ import annotations

import weakref
from typing import Any

import numpy as np

from graphscope.analysis.attribution import NO_OPERATOR, NodeAttribution, replayed_nodes
from graphscope.analysis.attribution_match import Window, match, windows
from graphscope.analysis.attribution_nsight import attribute_created
from graphscope.core import sets
from graphscope.trace.model import Trace

__all__ = ["NO_OPERATOR", "attribute", "attribution", "captures", "hold", "made_by"]
DETAILS = (("operator", "operator"), ("module", "module"), ("shapes", "input shapes"), ("frame", "line"))
_HELD: dict[int, NodeAttribution] = {}


def captures(trace: Trace) -> list[Window]:
    """Every capture window of the trace with the story of each node-making call in it."""
    return windows(trace)


def attribution(replay: Trace, capture_traces: list[Trace] | None = None) -> tuple[NodeAttribution, dict[str, Any]]:
    """The replay's nodes with every field the sources give, and how each graph matched."""
    nodes = replayed_nodes(replay)
    matched = np.zeros(len(nodes.node), bool)
    created, found, graphs = 0, [], []
    creation_first = not capture_traces and len(replay.graph_nodes) > 0  # exact: no matching by kinds
    if creation_first and len(nodes.node):
        created = attribute_created(replay, nodes)
    if not created:
        for trace in capture_traces if capture_traces else [replay]:
            found += windows(trace)
        if found and len(nodes.node):
            graphs = match(replay, nodes, found).graphs
            for graph in graphs:
                matched[nodes.rows_of(graph["graph"])] = True
        if len(replay.graph_nodes) and len(nodes.node) and not creation_first:
            created = attribute_created(replay, nodes)  # what the capture trace left unknown
    matched |= nodes.fields["capture"] >= 0
    for capture in nodes.captures:  # null: the replay's own trace
        capture["file"] = None if capture["file"] == str(replay.path) else capture["file"]
    unmatched = [g for g in nodes.graphs() if not matched[nodes.rows_of(g)].any()]
    meta = {"graphs": graphs, "windows": len(found), "created": created, "matched": matched, "unmatched": unmatched}
    return nodes, meta


def attribute(replay: Trace, capture_trace: Trace | list[Trace] | None = None, stacks: bool = False) -> dict[str, Any]:
    """Replayed graph work by the operator, module and frame that made it during capture.

    Returns {"graphs", "operators": [{"operator", "module", "frame", "api", "kinds", "nodes", "activities",
    "gpu_ns"}], "modules": [{"module", ...}], "coverage", "captures", "unmatched", "note"}, and with
    `stacks` "nodes": one entry per replayed node with every field and its whole Python stack."""
    traces = [capture_trace] if isinstance(capture_trace, Trace) else capture_trace
    nodes, meta = attribution(replay, traces)
    empty = {"graphs": [], "operators": [], "modules": [], "captures": [], "coverage": nodes.coverage()}
    if not len(nodes.node):
        return {**empty, "unmatched": [], "note": "no graph replays with their work in the trace"}
    if not meta["windows"] and not meta["created"]:
        where = "the capture trace" if traces else "this trace"
        return {
            **empty,
            "unmatched": nodes.graphs(),
            "note": f"{where} holds no stream capture: profile the capture too (graphscope run --profile torch "
            "records it), or give the capture's trace with --capture",
        }
    rows = np.flatnonzero(meta["matched"])
    operators = nodes.grouped(("operator", "module", "frame", "api"), rows)
    for entry in operators:
        entry["operator"] = entry["operator"] or NO_OPERATOR
    note = None
    if meta["unmatched"]:
        note = (
            f"{len(meta['unmatched'])} of {len(nodes.graphs())} graphs match no single capture (node counts or "
            "kinds differ)"
        )
    result = {
        "graphs": meta["graphs"] or _created_graphs(nodes, rows),
        "operators": operators,
        "modules": [m for m in nodes.grouped(("module",), rows) if m["module"] is not None],
        "coverage": nodes.coverage(),
        "captures": nodes.captures,
        "unmatched": meta["unmatched"],
        "note": note,
    }
    if stacks:
        result["nodes"] = nodes.node_rows()
    return result


def _created_graphs(nodes: NodeAttribution, rows: np.ndarray) -> list[dict[str, Any]]:
    """The graphs attributed through creation events alone (an Nsight export without a capture trace)."""
    out = []
    for graph in nodes.graphs():
        mine = sets.intersect(nodes.rows_of(graph), rows)
        if len(mine):
            numbers = sets.unique(nodes.fields["capture"][mine])
            only = int(nodes.texts.name(int(numbers[0]))) if len(numbers) == 1 and numbers[0] >= 0 else None
            out.append(
                {
                    "graph": graph,
                    "nodes": len(mine),
                    "capture": only,
                    "candidates": [] if only is None else [only],
                    "match": "node creation events",
                    "by_position_only": False,
                }
            )
    return out


def node_attribution(trace: Trace) -> NodeAttribution:
    """The trace's own attribution (its capture, or its node-creation events), made once per loaded trace:
    Details asks for it at every click on a replayed kernel."""
    key = id(trace)
    found = _HELD.get(key)
    if found is None:
        found = _HELD.setdefault(key, attribution(trace)[0])  # an attachment held meanwhile wins
        weakref.finalize(trace, _HELD.pop, key, None)
    return found


def hold(trace: Trace, nodes: NodeAttribution | None) -> None:
    """Make `nodes` the trace's attribution for Details and the panels (a capture trace attached in the
    GUI: view/attached.py); None gives it back its own."""
    key = id(trace)
    if nodes is None:
        _HELD.pop(key, None)
        return
    if key not in _HELD:
        weakref.finalize(trace, _HELD.pop, key, None)
    _HELD[key] = nodes


def made_by(trace: Trace, node: int) -> list[tuple[str, str]]:
    """(label, text) of what made one graph node during capture, for Details: operator, module, input
    shapes, the user's line and the call; only the fields the trace tells."""
    nodes = node_attribution(trace)
    at = int(np.searchsorted(nodes.node, node))
    if at >= len(nodes.node) or int(nodes.node[at]) != node:
        return []
    fields = [(label, nodes.text(name, at)) for name, label in DETAILS]
    call = nodes.text("api", at)
    if call is not None:
        fields.append(("captured from", call))
    return [(label, text) for label, text in fields if text is not None]

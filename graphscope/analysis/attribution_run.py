"""A run's graph trace attributed: how much of its replay came back to a module and a line of code.

`graphscope run --profile torch` records the graph mode's capture with stacks, shapes and module paths
(workload/child/torch_profile.py) in the same trace as its replays; an Nsight run's node-mode export carries
node-creation events. Either way the replay's own trace is enough (analysis/capture_ops.py). This is
the run's short answer: the coverage per field, the modules that take the most replay time, and, where
something is not attributed, which kernels lost it (the first thing to look at when coverage falls).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from graphscope.analysis.attribution import NodeAttribution
from graphscope.analysis.capture_ops import attribution
from graphscope.trace.model import Trace

TOP = 5


def node_names(trace: Trace, nodes: NodeAttribution) -> list[str]:
    """Per attributed node, the short name of its kernel ('(copy)' / '(memset)' for other node kinds)."""
    kernels = trace.kernels
    names = ["(copy)" if int(k) == 1 else "(memset)" if int(k) == 2 else "(kernel)" for k in nodes.kind.tolist()]
    if not len(kernels) or "graph_node" not in kernels.columns:
        return names
    member = np.flatnonzero(kernels.graph_node >= 0)
    ids, first = np.unique(kernels.graph_node[member], return_index=True)
    at = np.searchsorted(ids, nodes.node)
    found = (at < len(ids)) & (ids[np.minimum(at, len(ids) - 1)] == nodes.node)
    short = kernels.short_name if "short_name" in kernels.columns else kernels.name
    for row in np.flatnonzero(found).tolist():
        names[row] = trace.symbols.name(int(short[member[first[at[row]]]]))
    return names


def lost(trace: Trace, nodes: NodeAttribution, name: str, top: int = TOP) -> list[dict[str, Any]]:
    """The kernels (by short name) whose nodes lack field `name`, most replay GPU time first."""
    rows = np.flatnonzero(nodes.fields[name] < 0)
    if not len(rows):
        return []
    names = node_names(trace, nodes)
    totals: dict[str, list[int]] = {}
    for row in rows.tolist():
        entry = totals.setdefault(names[row], [0, 0])
        entry[0] += 1
        entry[1] += int(nodes.gpu_ns[row])
    ordered = sorted(totals.items(), key=lambda item: -item[1][1])[:top]
    return [{"kernel": kernel, "nodes": count, "gpu_ns": gpu} for kernel, (count, gpu) in ordered]


def run_attribution(trace: Trace) -> dict[str, Any]:
    """{"coverage": {field: share of replay GPU time, "gpu_ns"}, "nodes", "graphs", "modules": the top
    modules [{"module", "nodes", "gpu_ns"}], "frames": the top user lines, "lost": {field: kernels that
    lack it}, "note"} of a run's graph-mode trace; coverage 0 with a note where nothing replayed or the
    capture was not recorded."""
    nodes, meta = attribution(trace)
    coverage = nodes.coverage()
    answer: dict[str, Any] = {
        "file": str(trace.path),
        "coverage": coverage,
        "nodes": len(nodes.node),
        "graphs": len(nodes.graphs()),
        "modules": [],
        "frames": [],
        "lost": {},
        "note": None,
    }
    if not len(nodes.node):
        answer["note"] = "no graph replays with their work in the trace"
        return answer
    if not meta["windows"] and not meta["created"]:
        answer["note"] = "the trace holds no capture of the replayed graphs"
    elif meta["unmatched"]:
        answer["note"] = f"{len(meta['unmatched'])} of {answer['graphs']} graphs match no capture"
    answer["modules"] = [m for m in nodes.grouped(("module",)) if m["module"] is not None][:TOP]
    answer["frames"] = [f for f in nodes.grouped(("frame",)) if f["frame"] is not None][:TOP]
    answer["lost"] = {name: found for name in ("module", "frame") if (found := lost(trace, nodes, name))}
    return answer


def attribute_run_trace(path: Path) -> dict[str, Any]:
    """`run_attribution` of the trace file a run wrote (its graph mode's), read here; a trace that cannot
    be read gives its reason as the note (the run itself stands)."""
    from graphscope.core.errors import GraphscopeError
    from graphscope.trace import load_trace

    try:
        return run_attribution(load_trace(path))
    except GraphscopeError as exc:
        return {"file": str(path), "coverage": {}, "nodes": 0, "graphs": 0, "note": f"not attributed: {exc}"}


def annotate_run(data: dict[str, Any]) -> None:
    """A run's JSON form gets `attribution` where its graph mode was profiled (workload/record.py's
    `annotate`, from the CLI and the Run panel), and each profiled mode the check of its conditional nodes
    against its trace (analysis/conditional_trace.py)."""
    from graphscope.analysis.conditional_trace import check_run

    graph = (data.get("traces") or {}).get("graph")
    if graph:
        data["attribution"] = attribute_run_trace(Path(graph["sqlite"]))
    check_run(data)

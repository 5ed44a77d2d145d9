"""Which operator launched each replayed graph kernel: a graph's nodes matched to its capture's calls.

A graph replay shows kernels but not who asked for them: their CPU side is one `cudaGraphLaunch`. The
capture shows who asked (each launch call sits inside the PyTorch operator, and with `with_stack` the
Python frame, that made it) but runs no kernel. Stream capture turns the node-making calls of one
thread between `cudaStreamBeginCapture` and `cudaStreamEndCapture` (kernel launches, copies, memsets)
into the graph's nodes in the order they were made, and a PyTorch-profiler replay numbers a launch's
work by start order (trace/kineto.py), so node i of a graph is call i of the capture whose calls match
it in count and kind. The capture may be in the replay's own trace (`graphscope run --profile torch`
records it) or in another. Where the graph's work ran on more than one stream, start order can differ
from capture order and the match is only by position: that is said.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from graphscope.core.events import NODE_WORK, Activity, ApiKind, graph_of
from graphscope.trace.kineto import RANGE_DOMAINS
from graphscope.trace.model import Trace
from graphscope.trace.schema import classify_api

BEGIN = ("cudaStreamBeginCapture", "cuStreamBeginCapture", "hipStreamBeginCapture")
END = ("cudaStreamEndCapture", "cuStreamEndCapture", "hipStreamEndCapture")
NODE_CALLS = {ApiKind.KERNEL_LAUNCH: Activity.KERNEL, ApiKind.MEMCPY: Activity.MEMCPY, ApiKind.MEMSET: Activity.MEMSET}
OPERATOR, FRAME = RANGE_DOMAINS["cpu_op"], RANGE_DOMAINS["python_function"]
NO_OPERATOR = "(no operator)"


@dataclass
class Capture:
    """One stream capture: its thread, window and node-making calls (kind, operator, frame) in order."""

    thread: int
    start: int
    end: int
    calls: list[tuple[int, str, str | None]] = field(default_factory=list)

    @property
    def kinds(self) -> tuple[int, ...]:
        return tuple(kind for kind, _, _ in self.calls)


def captures(trace: Trace) -> list[Capture]:
    """Every capture window of the trace with the operator and frame around each node-making call."""
    api, names = trace.api, trace.symbols
    ids, inverse = np.unique(api.name, return_inverse=True)  # classify each distinct name once
    texts = [names.name(int(n)) for n in ids.tolist()]
    kinds = np.array([classify_api(t) for t in texts], dtype=np.int8)[inverse]
    begins = np.array([t.startswith(BEGIN) for t in texts], dtype=bool)[inverse]
    ends = np.array([t.startswith(END) for t in texts], dtype=bool)[inverse]
    makes_node = np.isin(kinds, [int(k) for k in NODE_CALLS])
    kineto = trace.info.layout == "kineto"
    found = []
    for row in np.flatnonzero(begins).tolist():
        thread, start = int(api.thread[row]), int(api.start[row])
        same = api.thread == thread
        closing = np.flatnonzero(same & ends & (api.start > start))
        if not len(closing):
            continue  # a capture the trace cut off
        end = int(api.start[closing].min())
        capture = Capture(thread, start, end)
        inside = np.flatnonzero(same & makes_node & (api.start > start) & (api.start < end))
        nvtx = trace.nvtx
        ranges = np.flatnonzero((nvtx.thread == thread) & (nvtx.start <= end) & (nvtx.end >= start))
        ranges = ranges[np.argsort(nvtx.start[ranges], kind="stable")]  # the window's ranges, once
        for call in inside[np.argsort(api.start[inside], kind="stable")].tolist():
            activity = NODE_CALLS[ApiKind(int(kinds[call]))]
            capture.calls.append((int(activity), *_around(trace, ranges, int(api.start[call]), kineto)))
        found.append(capture)
    return found


def _around(trace: Trace, ranges: np.ndarray, at: int, kineto: bool) -> tuple[str, str | None]:
    """The innermost operator and Python frame among `ranges` open at `at` (the frame outside torch's own
    files and built-ins where there is one: the user's line, not the library's). In an Nsight export the
    operator is the innermost NVTX range (PyTorch's `emit_nvtx` names them after the operators)."""
    nvtx = trace.nvtx
    open_ = ranges[(nvtx.start[ranges] <= at) & (nvtx.end[ranges] >= at)]  # `ranges`: by start, one thread
    operator, innermost_frame, user_frame = None, None, None
    for row in open_.tolist():
        domain = int(nvtx.domain[row]) if kineto else OPERATOR
        text = trace.symbols.name(int(nvtx.text[row]))
        if domain == OPERATOR:
            operator = text
        elif domain == FRAME:
            innermost_frame = text
            if not text.startswith("<built-in") and "torch/" not in text and "site-packages" not in text:
                user_frame = text
    return operator or NO_OPERATOR, user_frame or innermost_frame


def attribute(replay: Trace, capture_trace: Trace | None = None) -> dict[str, Any]:
    """Replayed graph work by the operator (and frame) that launched it during capture.

    Returns {"graphs": [{"graph", "nodes", "capture", "by_position_only"}], "operators": [{"operator",
    "frame", "kinds", "nodes", "activities", "gpu_ns"}], "unmatched": [graph ids], "note"}."""
    windows = captures(capture_trace if capture_trace is not None else replay)
    nodes = _graph_nodes(replay)
    ordered_by_start = replay.info.layout == "kineto"  # an Nsight export's node ids come from the capture
    if not nodes:
        return {"graphs": [], "operators": [], "unmatched": [], "note": "no graph replays with their work in the trace"}
    if not windows:
        where = "the capture trace" if capture_trace is not None else "this trace"
        return {
            "graphs": [],
            "operators": [],
            "unmatched": sorted(nodes),
            "note": f"{where} holds no stream capture: profile the capture too (graphscope run --profile torch "
            "records it), or give the capture's trace with --capture",
        }
    by_kinds = defaultdict(list)
    for number, window in enumerate(windows):
        by_kinds[window.kinds].append(number)
    graphs, unmatched = [], []
    totals: dict[tuple[str, str | None], Counter] = defaultdict(Counter)
    for graph, info in sorted(nodes.items()):
        candidates = by_kinds.get(info["kinds"], [])
        # several captures of the same shape (one per batch size): they agree on the operators or are ambiguous
        calls = {tuple((op, frame) for _, op, frame in windows[c].calls) for c in candidates}
        if len(calls) != 1:
            unmatched.append(graph)
            continue
        chosen = next(iter(calls))
        reordered = ordered_by_start and info["streams"] > 1
        graphs.append({"graph": graph, "nodes": len(chosen), "capture": candidates[0], "by_position_only": reordered})
        for index, (op, frame) in enumerate(chosen):
            kind = Activity(info["kinds"][index]).noun
            totals[(op, frame)]["nodes"] += 1
            totals[(op, frame)]["activities"] += info["count"][index]
            totals[(op, frame)]["gpu_ns"] += info["gpu_ns"][index]
            totals[(op, frame)][f"kind:{kind}"] += 1
    operators = [
        {
            "operator": op,
            "frame": frame,
            "kinds": {k.removeprefix("kind:"): v for k, v in sorted(c.items()) if k.startswith("kind:")},
            "nodes": c["nodes"],
            "activities": c["activities"],
            "gpu_ns": c["gpu_ns"],
        }
        for (op, frame), c in sorted(totals.items(), key=lambda item: -item[1]["gpu_ns"])
    ]
    note = None
    if unmatched:
        note = (
            f"{len(unmatched)} of {len(nodes)} graphs match no single capture (node counts or kinds differ, or "
            "several captures of that shape launched from different operators)"
        )
    return {"graphs": graphs, "operators": operators, "unmatched": unmatched, "note": note}


def _graph_nodes(trace: Trace) -> dict[int, dict[str, Any]]:
    """Per graph: its node kinds in index order, and per node the replayed activities and GPU time
    (columns grouped with numpy: a replay trace holds millions of node activities)."""
    ids, kinds, durations, streams = [], [], [], []
    for kind in NODE_WORK:
        table = getattr(trace, kind.table)
        if not len(table) or "graph_node" not in table.columns:
            continue
        member = table.graph_node >= 0
        ids.append(table.graph_node[member].astype(np.int64))
        kinds.append(np.full(int(member.sum()), int(kind), np.int64))
        durations.append((table.end - table.start)[member].astype(np.int64))
        streams.append(table.stream[member].astype(np.int64))
    if not ids or not sum(len(i) for i in ids):
        return {}
    node, kind, duration, stream = (np.concatenate(c) for c in (ids, kinds, durations, streams))
    unique, first, inverse = np.unique(node, return_index=True, return_inverse=True)  # sorted: graph, then index
    count = np.bincount(inverse)
    gpu = np.bincount(inverse, weights=duration).astype(np.int64)
    graphs = graph_of(unique)
    per_graph_streams = np.unique(np.stack([graph_of(node), stream], axis=1), axis=0)
    result = {}
    for graph in np.unique(graphs).tolist():
        mine = np.flatnonzero(graphs == graph)
        result[graph] = {
            "kinds": tuple(kind[first[mine]].tolist()),
            "count": count[mine].tolist(),
            "gpu_ns": gpu[mine].tolist(),
            "streams": int((per_graph_streams[:, 0] == graph).sum()),
        }
    return result

"""Replayed graph nodes matched to the calls of a capture trace (the replay's own trace, or other files).

Stream capture turns the node-making calls of one thread between `cudaStreamBeginCapture` and
`cudaStreamEndCapture` (kernel launches, copies, memsets) into the graph's nodes in the order they were
made, and a replay numbers a launch's work in that order (an Nsight export by creation, a PyTorch-profiler
trace by start: trace/kineto.py), so node i of a graph is call i of the capture whose calls match it in
count and kind. Real pairs are less tidy, and each untidiness has its rule:

- several captures of one shape (one per batch size, per rank, or identical layer pieces): a node's field
  is kept where every candidate capture agrees on it; where they disagree (shapes, mostly) and the replay
  holds as many graphs of that shape as there are captures, graphs and captures are paired by size (the
  graph's thread blocks against the capture's input elements, both strictly ordered), else left unknown;
- a replay that lacks some nodes (work the profiler did not record): the replay's kinds are a subsequence
  of a capture's holding at most twice as many calls; node i may be any call between its earliest and its
  latest placement, and a field is kept where all those calls agree; a capture that lacks calls (the
  other way round): a node gets the call placed on it in every placement, else stays unknown;
- captures of other ranks (vLLM and SGLang write one file per size and rank): where the replay names its
  rank (`distributedInfo`, else its file name: `rank1`, `tp1`), captures of other ranks are left out.
"""

from __future__ import annotations

import functools
import math
import re
from dataclasses import dataclass, field

import numpy as np

from graphscope.analysis.attribution import Context, NodeAttribution
from graphscope.core import sets
from graphscope.core.events import Activity, ApiKind, graph_of
from graphscope.trace.model import Trace
from graphscope.trace.schema import classify_api

BEGIN = ("cudaStreamBeginCapture", "cuStreamBeginCapture", "hipStreamBeginCapture")
END = ("cudaStreamEndCapture", "cuStreamEndCapture", "hipStreamEndCapture")
NODE_CALLS = {ApiKind.KERNEL_LAUNCH: Activity.KERNEL, ApiKind.MEMCPY: Activity.MEMCPY, ApiKind.MEMSET: Activity.MEMSET}
MATCHED_FIELDS = ("operator", "module", "shapes", "frame", "stack", "api")
_DIMS = re.compile(r"\[([\d, ]+)\]")
_RANK = re.compile(r"(?<![a-z])(?:rank|tp)[-_]?(\d+)", re.IGNORECASE)


def rank_of(trace: Trace) -> str | None:
    """The rank a trace is of: its `distributedInfo`, else a `rank1` or `tp1` in its file name."""
    rank = trace.info.capture.get("rank")
    if rank is None:
        found = _RANK.search(trace.path.name)
        rank = found[1] if found else None
    return None if rank is None else str(int(rank)) if str(rank).isdigit() else str(rank)


@dataclass
class Window:
    """One stream capture: its thread, window, and per node-making call its kind and what made it."""

    file: str
    rank: str | None
    thread: int
    start: int
    end: int
    kinds: tuple[int, ...] = ()
    fields: dict[str, list[str | None]] = field(default_factory=dict)
    number: int = -1  # its place in the attribution's list of captures

    @property
    def elements(self) -> int:
        """The input elements of the calls' operators, summed (a size that grows with the batch)."""
        return sum(_elements(shapes) for shapes in self.fields.get("shapes", []) if shapes)


@functools.lru_cache(maxsize=4096)
def _elements(shapes: str) -> int:
    """The elements of the tensors a shapes text names ("float[4, 16], Scalar" -> 64)."""
    return sum(math.prod(int(d) for d in dims.split(",") if d.strip()) for dims in _DIMS.findall(shapes))


def windows(trace: Trace) -> list[Window]:
    """Every complete capture window of the trace with the story of each node-making call in it."""
    api, names = trace.api, trace.symbols
    if not len(api):
        return []
    ids, inverse = np.unique(api.name, return_inverse=True)  # classify each distinct name once
    texts = [names.name(int(n)) for n in ids.tolist()]
    kinds = np.array([classify_api(t) for t in texts], dtype=np.int8)[inverse]
    begins = np.array([t.startswith(BEGIN) for t in texts], dtype=bool)[inverse]
    ends = np.array([t.startswith(END) for t in texts], dtype=bool)[inverse]
    makes_node = sets.isin(kinds, [int(k) for k in NODE_CALLS])
    context = Context(trace)
    rank = rank_of(trace)
    found = []
    for row in np.flatnonzero(begins).tolist():
        thread, start = int(api.thread[row]), int(api.start[row])
        same = api.thread == thread
        closing = np.flatnonzero(same & ends & (api.start > start))
        if not len(closing):
            continue  # a capture the trace cut off
        end = int(api.start[closing].min())
        inside = np.flatnonzero(same & makes_node & (api.start > start) & (api.start < end))
        inside = inside[np.argsort(api.start[inside], kind="stable")]
        window = Window(str(trace.path), rank, thread, start, end)
        window.kinds = tuple(int(NODE_CALLS[ApiKind(int(k))]) for k in kinds[inside].tolist())
        stories = context.stories(thread, api.start[inside])
        window.fields = {name: [getattr(s, name) for s in stories] for name in MATCHED_FIELDS if name != "api"}
        window.fields["api"] = [names.name(int(api.name[call])) for call in inside.tolist()]
        found.append(window)
    return found


def _subsequence(small: tuple[int, ...], big: tuple[int, ...]) -> tuple[list[int], list[int]] | None:
    """The earliest and the latest placement of `small` inside `big` (None where it is not inside)."""
    early, j = [], 0
    for kind in small:
        while j < len(big) and big[j] != kind:
            j += 1
        if j == len(big):
            return None
        early.append(j)
        j += 1
    late, j = [], len(big) - 1
    for kind in reversed(small):
        while big[j] != kind:
            j -= 1
        late.append(j)
        j -= 1
    return early, late[::-1]


def _options(kinds: tuple[int, ...], window: Window) -> list[list[int]] | None:
    """Per replayed node, the capture calls it may be: one where the kinds match exactly; where the replay
    lacks nodes, the calls of its kind between its earliest and latest placement; where the capture lacks
    calls (a launch the profiler did not record), the one call placed on it in every placement, or none.
    None: no match (neither holds the other, or one holds more than twice the other's)."""
    if kinds == window.kinds:
        return [[i] for i in range(len(kinds))]
    if len(kinds) < len(window.kinds) <= 2 * len(kinds):
        placed = _subsequence(kinds, window.kinds)
        if placed is None:
            return None
        return [
            [j for j in range(a, b + 1) if window.kinds[j] == kind] for kind, a, b in zip(kinds, *placed, strict=True)
        ]
    if len(window.kinds) < len(kinds) <= 2 * len(window.kinds):
        placed = _subsequence(window.kinds, kinds)
        if placed is None:
            return None
        options: list[list[int]] = [[] for _ in kinds]
        for call, (a, b) in enumerate(zip(*placed, strict=True)):
            if a == b:
                options[a] = [call]
        return options
    return None


def _block_counts(replay: Trace, nodes: NodeAttribution) -> dict[int, int]:
    """Per graph, the thread blocks of one replay of its kernel nodes (a size that grows with the batch)."""
    kernels = replay.kernels
    if not len(kernels) or "graph_node" not in kernels.columns:
        return {}
    member = np.flatnonzero(kernels.graph_node >= 0)
    unique, first = np.unique(kernels.graph_node[member], return_index=True)
    rows = member[first]
    blocks = (
        kernels.grid_x[rows].astype(np.int64)
        * kernels.grid_y[rows].astype(np.int64)
        * kernels.grid_z[rows].astype(np.int64)
    )
    per_graph = graph_of(unique)
    return {int(g): int(blocks[per_graph == g].sum()) for g in sets.unique(per_graph).tolist()}


@dataclass
class MatchReport:
    graphs: list[dict] = field(default_factory=list)
    unmatched: list[int] = field(default_factory=list)


def match(replay: Trace, nodes: NodeAttribution, found: list[Window]) -> MatchReport:
    """Fill `nodes`' fields from the capture windows `found`; per graph how it matched."""
    report = MatchReport()
    rank = rank_of(replay)
    if rank is not None and any(w.rank == rank for w in found):
        found = [w for w in found if w.rank in (rank, None)]  # this rank's captures (vLLM/SGLang: a file each)
    for number, window in enumerate(found):
        nodes.captures.append(
            {
                "file": window.file,
                "thread": window.thread,
                "start_ns": window.start,
                "end_ns": window.end,
                "calls": len(window.kinds),
                "rank": window.rank,
            }
        )
        window.number = number
    chosen: dict[int, list[tuple[Window, list[list[int]]]]] = {}
    for graph in nodes.graphs():
        kinds = tuple(nodes.kind[nodes.rows_of(graph)].tolist())
        same = [[i] for i in range(len(kinds))]  # one list for every exact match
        exact = [(w, same) for w in found if w.kinds == kinds]
        chosen[graph] = exact or [(w, o) for w in found if (o := _options(kinds, w)) is not None]
        if not chosen[graph]:
            report.unmatched.append(graph)
    _pair_by_size(replay, nodes, chosen)
    for graph, candidates in chosen.items():
        if not candidates:
            continue
        rows = nodes.rows_of(graph)
        for name in MATCHED_FIELDS:
            nodes.set(rows, name, [_agreed(candidates, name, i) for i in range(len(rows))])
        numbers = sorted({w.number for w, _ in candidates})
        if len(numbers) == 1:
            nodes.set(rows, "capture", [str(numbers[0])] * len(rows))
        kinds_agree = all(w.kinds == tuple(nodes.kind[rows].tolist()) for w, _ in candidates)
        report.graphs.append(
            {
                "graph": graph,
                "nodes": len(rows),
                "capture": numbers[0] if len(numbers) == 1 else None,
                "candidates": numbers,
                "match": "exact" if kinds_agree else _missing(len(rows), candidates),
                "by_position_only": replay.info.layout == "kineto" and nodes.streams_per_graph.get(graph, 1) > 1,
            }
        )
    return report


def _missing(nodes: int, candidates: list[tuple[Window, list[list[int]]]]) -> str:
    """How an inexact match differs: the replay lacks nodes, or the capture lacks calls."""
    return "nodes missing from the replay" if len(candidates[0][0].kinds) > nodes else "calls missing from the capture"


def _agreed(candidates: list[tuple[Window, list[list[int]]]], name: str, index: int) -> str | None:
    """Node `index`'s field `name`: the one value every call it may be agrees on, else None."""
    values = {w.fields[name][j] for w, options in candidates for j in options[index]}
    return values.pop() if len(values) == 1 else None


def _pair_by_size(replay: Trace, nodes: NodeAttribution, chosen: dict) -> None:
    """Graphs of one shape with as many exact captures of it that disagree: paired by size order."""
    groups: dict[tuple, list[int]] = {}
    for graph, candidates in chosen.items():
        exact = len(candidates) > 1 and all(len(o) == 1 for _, opts in candidates for o in opts)
        if exact and len({tuple(w.fields["shapes"]) for w, _ in candidates}) > 1:  # sizes to tell apart
            groups.setdefault(tuple(id(w) for w, _ in candidates), []).append(graph)
    if not groups:
        return
    blocks = _block_counts(replay, nodes)
    for graphs in groups.values():
        candidates = chosen[graphs[0]]
        if len(graphs) != len(candidates):
            continue
        sizes = [blocks.get(g, 0) for g in graphs]
        elements = [w.elements for w, _ in candidates]
        if len(set(sizes)) != len(sizes) or len(set(elements)) != len(elements):
            continue  # ties: no order to pair by
        by_size = [graphs[i] for i in np.argsort(sizes).tolist()]
        by_elements = [candidates[i] for i in np.argsort(elements).tolist()]
        for graph, candidate in zip(by_size, by_elements, strict=True):
            chosen[graph] = [candidate]

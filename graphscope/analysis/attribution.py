"""Where each replayed graph node came from: one columnar table of who made it during capture.

A graph replay shows kernels but not who asked for them. Each node of a graph was made by one call
(a captured kernel launch, copy or memset) on one CPU thread at one time, and what was open on that
thread then tells its story: the PyTorch operator (innermost `cpu_op`; in an Nsight export the innermost
NVTX range), the nn.Module path (`nn.Module: Name_k` ranges, which `with_modules=True` records), the
operator's input shapes (`record_shapes=True`), the Python stack (`with_stack=True`) and in it the first
frame of the user's code. `Context` reads that story at (thread, time) points; the sources
(analysis/attribution_match.py for a capture trace, analysis/attribution_nsight.py for an export's
node-creation events) say which point each node was made at; `NodeAttribution` holds the answer, one
array per field over the replayed nodes, and turns it into the summary's tables and coverage.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from graphscope.core import sets
from graphscope.core.events import NODE_WORK, RANGE_DOMAINS, Activity, graph_of, index_in_graph
from graphscope.core.frames import is_user_frame  # re-exported: the rule lives in core
from graphscope.core.symbols import SymbolTable
from graphscope.trace.model import Trace

OPERATOR, FRAME = RANGE_DOMAINS["cpu_op"], RANGE_DOMAINS["python_function"]
MODULE_PREFIX = "nn.Module: "
PATH_PREFIX = "module: "
"""graphscope's own runs name a range per module call by its whole path ('module: model.layers.0.mlp':
workload/child/op_attribution.py MODULE_MARK, which analysis may not import)."""
NO_OPERATOR = "(no operator)"
FIELDS = ("operator", "module", "shapes", "frame", "api", "capture")
"""The attribution's fields; coverage is the share of replay GPU time that has each."""

_NVTX_OPERATOR = re.compile(r"^(?P<op>[^,]+), seq = \d+")  # torch.autograd.profiler.emit_nvtx's ranges
_NVTX_SIZES = re.compile(r"sizes = (?P<sizes>\[(?:[^\[\]]|\[[^\[\]]*\])*\])")  # a list of lists, no further


@dataclass
class Story:
    """What was open on a thread at one time: operator, module path, shapes, user frame, whole stack."""

    operator: str | None = None
    module: str | None = None
    shapes: str | None = None
    frame: str | None = None
    stack: str | None = None


@dataclass
class _Tree:
    """One thread's ranges by start with their parent links, as plain lists for the walks up."""

    starts: np.ndarray
    ends: list[int]
    parent: list[int]
    text: list[int]
    domain: list[int]
    shapes: list[int]


class Context:
    """The ranges of some threads of a trace as trees (ranges nest on a thread), read at (thread, time).

    Built once per trace; each thread's parent links are made on first use in one pass over its ranges,
    so a point costs a binary search (one per batch of points) and a walk up its open ranges."""

    def __init__(self, trace: Trace) -> None:
        self.trace = trace
        self.kineto = trace.info.layout == "kineto"
        self._threads: dict[int, _Tree] = {}
        self._joined: dict[tuple[int, ...], str] = {}  # one string per distinct stack or module path
        self._kind: dict[int, int] = {}  # (text id, domain) -> 0 other, 1 module, 2 user frame, 3 other frame, 4 path

    def _tree(self, thread: int) -> _Tree:
        found = self._threads.get(thread)
        if found is None:
            nvtx = self.trace.nvtx
            rows = np.flatnonzero(nvtx.thread == thread) if len(nvtx) else np.empty(0, np.int64)
            ends = np.maximum(nvtx.end[rows], nvtx.start[rows]).astype(np.int64)
            order = np.lexsort((-ends, nvtx.start[rows]))  # by start; a parent before a child starting with it
            rows, ends = rows[order], ends[order].tolist()
            starts = np.ascontiguousarray(nvtx.start[rows], dtype=np.int64)
            parent: list[int] = []
            stack: list[int] = []
            for i, start in enumerate(starts.tolist()):
                while stack and ends[stack[-1]] < start:
                    stack.pop()
                parent.append(stack[-1] if stack else -1)
                stack.append(i)
            domain = nvtx.domain[rows].tolist() if self.kineto else [0] * len(rows)
            shapes = nvtx.shapes[rows].tolist() if "shapes" in nvtx.columns else [-1] * len(rows)
            found = self._threads[thread] = _Tree(starts, ends, parent, nvtx.text[rows].tolist(), domain, shapes)
        return found

    def _open(self, tree: _Tree, i: int, at: int) -> list[int]:
        """Positions in `tree` open at `at`, innermost first, from the last range started by then (`i`)."""
        while i >= 0 and tree.ends[i] < at:
            i = tree.parent[i]
        found = []
        while i >= 0:
            found.append(i)
            i = tree.parent[i]
        return found

    def _classify(self, text_id: int, domain: int) -> int:
        key = text_id * 8 + domain
        kind = self._kind.get(key)
        if kind is None:
            text = self.trace.symbols.name(text_id)
            if text.startswith(MODULE_PREFIX):
                kind = 1
            elif text.startswith(PATH_PREFIX) and domain != FRAME:
                kind = 4
            elif domain == FRAME:
                kind = 2 if is_user_frame(text) else 3
            else:
                kind = 0
            self._kind[key] = kind
        return kind

    def stories(self, thread: int, times: np.ndarray) -> list[Story]:
        """Per time: operator, module path, shapes, the user's frame and the whole stack open on `thread`."""
        tree = self._tree(thread)
        last = (np.searchsorted(tree.starts, np.asarray(times, np.int64), side="right") - 1).tolist()
        return [self._story(tree, i, int(at)) for i, at in zip(last, np.asarray(times).tolist(), strict=True)]

    def story(self, thread: int, at: int) -> Story:
        """What was open on `thread` at `at`."""
        return self.stories(thread, np.array([at], np.int64))[0]

    def _story(self, tree: _Tree, last: int, at: int) -> Story:
        names = self.trace.symbols
        story, modules, frames, path = Story(), [], [], None
        for i in self._open(tree, last, at):  # innermost first
            text_id, domain = tree.text[i], tree.domain[i]
            kind = self._classify(text_id, domain)
            if kind == 1:
                modules.append(text_id)
            elif kind == 4:
                path = path or names.name(text_id).removeprefix(PATH_PREFIX)  # the innermost: a whole path
            elif kind in (2, 3):
                frames.append(text_id)
                if kind == 2 and story.frame is None:
                    story.frame = names.name(text_id)
            elif story.operator is None and (domain == OPERATOR or not self.kineto):
                story.operator, story.shapes = _operator_text(names.name(text_id), self.kineto)
                if tree.shapes[i] >= 0:
                    story.shapes = names.name(tree.shapes[i])
        story.module = path or self._join(modules, ".", MODULE_PREFIX)
        story.stack = self._join(frames, "\n", "")
        return story

    def _join(self, text_ids: list[int], between: str, prefix: str) -> str | None:
        """Texts outermost first (`text_ids` is innermost first), joined once per distinct list: a
        capture of 100,000 calls repeats a few thousand stacks."""
        if not text_ids:
            return None
        key = (len(between), *text_ids)
        found = self._joined.get(key)
        if found is None:
            names = self.trace.symbols
            found = self._joined[key] = between.join(names.name(t).removeprefix(prefix) for t in reversed(text_ids))
        return found


def _operator_text(text: str, kineto: bool) -> tuple[str, str | None]:
    """An operator range's name and shapes: an `emit_nvtx` range ("aten::addmm, seq = 3, op_id = 7,
    sizes = [[4, 16], [16, 16]]") split in two; any other range as it is."""
    if kineto:
        return text, None
    found = _NVTX_OPERATOR.match(text)
    if found is None:
        return text, None
    sizes = _NVTX_SIZES.search(text)
    return found["op"], sizes["sizes"] if sizes else None


@dataclass
class NodeAttribution:
    """Per replayed graph node (a graphNodeId of the replay): its kind, replays, GPU time, and per field
    (FIELDS, and `stack`) a text id into `texts` (-1: unknown). One array per field, no object per node."""

    node: np.ndarray
    kind: np.ndarray
    activities: np.ndarray
    gpu_ns: np.ndarray
    streams_per_graph: dict[int, int]
    texts: SymbolTable = field(default_factory=SymbolTable)
    fields: dict[str, np.ndarray] = field(default_factory=dict)
    captures: list[dict[str, Any]] = field(default_factory=list)

    def __post_init__(self) -> None:
        for name in (*FIELDS, "stack"):
            self.fields.setdefault(name, np.full(len(self.node), -1, np.int32))

    def graphs(self) -> list[int]:
        return sets.unique(graph_of(self.node)).tolist() if len(self.node) else []

    def rows_of(self, graph: int) -> np.ndarray:
        """The rows of one graph's nodes, in node-index order."""
        return np.flatnonzero(graph_of(self.node) == graph)

    def set(self, rows: np.ndarray, name: str, values: Iterable[str | None], overwrite: bool = True) -> None:
        """Field `name` of `rows` from texts (None leaves a row as it is)."""
        column = self.fields[name]
        for row, value in zip(rows.tolist(), values, strict=True):
            if value is not None and (overwrite or column[row] < 0):
                column[row] = self.texts.intern(value)

    def text(self, name: str, row: int) -> str | None:
        value = int(self.fields[name][row])
        return None if value < 0 else self.texts.name(value)

    def coverage(self) -> dict[str, Any]:
        """The share of replay GPU time whose nodes have each field (and the time itself)."""
        total = int(self.gpu_ns.sum())
        shares = {name: (float(self.gpu_ns[self.fields[name] >= 0].sum() / total) if total else 0.0) for name in FIELDS}
        return {"gpu_ns": total, **shares}

    def grouped(self, keys: tuple[str, ...], rows: np.ndarray | None = None) -> list[dict[str, Any]]:
        """Nodes grouped by the texts of `keys`: nodes, replays, GPU time and node kinds, most time first."""
        rows = np.arange(len(self.node)) if rows is None else rows
        if not len(rows):
            return []
        key = np.stack([self.fields[k][rows].astype(np.int64) for k in keys], axis=1)
        unique, inverse = np.unique(key, axis=0, return_inverse=True)
        inverse = inverse.reshape(-1)
        gpu = np.bincount(inverse, weights=self.gpu_ns[rows], minlength=len(unique)).astype(np.int64)
        replays = np.bincount(inverse, weights=self.activities[rows], minlength=len(unique)).astype(np.int64)
        nodes = np.bincount(inverse, minlength=len(unique))
        out = []
        for group in np.argsort(-gpu, kind="stable").tolist():
            mine = rows[inverse == group]
            kinds = np.bincount(self.kind[mine], minlength=len(NODE_WORK))
            entry: dict[str, Any] = {
                k: (None if int(v) < 0 else self.texts.name(int(v)))
                for k, v in zip(keys, unique[group].tolist(), strict=True)
            }
            entry |= {
                "kinds": {NODE_WORK[k].noun: int(n) for k, n in enumerate(kinds.tolist()) if n},
                "nodes": int(nodes[group]),
                "activities": int(replays[group]),
                "gpu_ns": int(gpu[group]),
            }
            out.append(entry)
        return out

    def node_rows(self) -> list[dict[str, Any]]:
        """Every node with all its fields (the whole stack included): the summary's --stacks listing."""
        out = []
        for row in range(len(self.node)):
            node = int(self.node[row])
            entry: dict[str, Any] = {
                "graph": int(graph_of(node)),
                "index": int(index_in_graph(node)),
                "kind": Activity(int(self.kind[row])).noun,
                "activities": int(self.activities[row]),
                "gpu_ns": int(self.gpu_ns[row]),
            }
            entry |= {name: self.text(name, row) for name in (*FIELDS, "stack") if name != "capture"}
            capture = int(self.fields["capture"][row])
            entry["capture"] = None if capture < 0 else int(self.texts.name(capture))
            out.append(entry)
        return out


def replayed_nodes(trace: Trace) -> NodeAttribution:
    """The replay's graph nodes with their kind, replay count and summed GPU time (numpy grouping: a
    replay trace holds millions of node activities); fields all unknown."""
    ids, kinds, durations, streams = [], [], [], []
    for kind in NODE_WORK:
        table = getattr(trace, kind.table)
        if not len(table) or "graph_node" not in table.columns:
            continue
        member = table.graph_node >= 0
        ids.append(table.graph_node[member].astype(np.int64))
        kinds.append(np.full(int(member.sum()), int(kind), np.int8))
        durations.append((table.end - table.start)[member].astype(np.int64))
        streams.append(table.stream[member].astype(np.int64))
    if not ids or not sum(len(i) for i in ids):
        empty = np.empty(0, np.int64)
        return NodeAttribution(empty, np.empty(0, np.int8), empty, empty, {})
    node, node_kind, duration, stream = (np.concatenate(c) for c in (ids, kinds, durations, streams))
    unique, first, inverse = np.unique(node, return_index=True, return_inverse=True)  # sorted: graph, then index
    pairs = sets.unique_rows(np.stack([graph_of(node), stream], axis=1))
    graphs, per_graph = np.unique(pairs[:, 0], return_counts=True)
    return NodeAttribution(
        node=unique,
        kind=node_kind[first],
        activities=np.bincount(inverse).astype(np.int64),
        gpu_ns=np.bincount(inverse, weights=duration).astype(np.int64),
        streams_per_graph=dict(zip(graphs.tolist(), per_graph.tolist(), strict=True)),
    )

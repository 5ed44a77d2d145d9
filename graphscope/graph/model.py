"""The CUDA-graph DAG: nodes (type, kernel, launch config, launch site, trace id) and edges.

Built from a live captured graph (graph/live.py, in the workload child) or from a trace
(graph/from_trace.py, where edges are unknown). Plain data: the GUI and the exporters read it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from statistics import median
from typing import Any

from graphscope.graph.edge_table import EdgeKinds

FOLD_AT = 4
"""A run of this many identical nodes or more, one after another, is shown as one ("vec_add x1000")."""


@dataclass
class DagNode:
    index: int  # position in capture order
    type: str
    name: str = ""  # kernel name, or a short description of other nodes
    grid: tuple[int, int, int] | None = None
    block: tuple[int, int, int] | None = None
    shared_mem: int = 0
    site: str | None = None  # the ctx.launch site that produced it (tunable), if any
    trace_id: int | None = None  # the graphNodeId a node-mode trace records for it
    duration_ns: float | None = None  # median duration over launches (from a trace or a measurement)
    launches: int = 0  # how many executions the duration summarises
    stream: int | None = None
    detail: dict[str, Any] = field(default_factory=dict)
    bodies: list[Dag] = field(default_factory=list)  # a conditional node's body graphs (graph/conditional.py)

    def same_as(self, other: DagNode) -> bool:
        """The one definition of "identical" for folding: same work, same launch, same stream (a
        conditional node, which holds graphs, is never folded)."""
        if self.bodies or other.bodies or self.type == "conditional":
            return False
        return (self.type, self.name, self.grid, self.block, self.stream) == (
            other.type,
            other.name,
            other.grid,
            other.block,
            other.stream,
        )

    def to_json(self) -> dict[str, Any]:
        data = {
            "index": self.index,
            "type": self.type,
            "name": self.name,
            "site": self.site,
            "trace_id": self.trace_id,
            "shared_mem": self.shared_mem,
            "duration_ns": self.duration_ns,
            "launches": self.launches,
            "stream": self.stream,
        }
        data["grid"] = list(self.grid) if self.grid else None
        data["block"] = list(self.block) if self.block else None
        if self.detail:
            data["detail"] = self.detail
        if self.bodies:
            data["bodies"] = [body.to_json() for body in self.bodies]
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> DagNode:
        return cls(
            index=data["index"],
            type=data["type"],
            name=data.get("name", ""),
            grid=tuple(data["grid"]) if data.get("grid") else None,
            block=tuple(data["block"]) if data.get("block") else None,
            shared_mem=data.get("shared_mem", 0),
            site=data.get("site"),
            trace_id=data.get("trace_id"),
            duration_ns=data.get("duration_ns"),
            launches=data.get("launches", 0),
            stream=data.get("stream"),
            detail=data.get("detail", {}),
            bodies=[Dag.from_json(body) for body in data.get("bodies", [])],
        )


@dataclass
class Dag:
    nodes: list[DagNode]
    edges: list[tuple[int, int]]  # (from index, to index): `to` depends on `from`
    source: str  # "live" or "trace"
    edges_known: bool = True
    graph_id: int | None = None  # the id profilers record for the executed graph (core.events.graph_of)
    notes: list[str] = field(default_factory=list)
    edge_kinds: EdgeKinds | None = None  # per edge: default or programmatic, its ports (graph/edges.py)

    def to_json(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "edges_known": self.edges_known,
            "graph_id": self.graph_id,
            "notes": self.notes,
            "nodes": [n.to_json() for n in self.nodes],
            "edges": [list(e) for e in self.edges],
            "edge_kinds": self.edge_kinds.to_json() if self.edge_kinds is not None else None,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Dag:
        return cls(
            [DagNode.from_json(n) for n in data["nodes"]],
            [tuple(e) for e in data["edges"]],
            data["source"],
            data.get("edges_known", True),
            data.get("graph_id"),
            data.get("notes", []),
            EdgeKinds.from_json(data["edge_kinds"], len(data["edges"])) if data.get("edge_kinds") else None,
        )

    def kernel_nodes(self) -> list[DagNode]:
        return [n for n in self.nodes if n.type == "kernel"]

    def fold(self, at: int = FOLD_AT, modules: Sequence[str | None] | None = None) -> list[Fold]:
        """The DAG as every face shows it: runs of `at` or more identical nodes (`DagNode.same_as`) along
        a chain, or in capture order when edges are unknown, become one group; every other node is a
        group of its own. Groups come in chain order; each lists positions in `nodes`.

        With `modules` (one per node: the nn.Module that made it, None where unknown), consecutive nodes
        of one module on one stream become one group whatever their kernels (two or more); nodes of no
        known module fold as above."""
        chains = self.chains() if self.edges_known else [list(range(len(self.nodes)))]
        groups: list[Fold] = []
        for chain in chains:
            start = 0
            while start < len(chain):
                module = modules[chain[start]] if modules is not None else None
                end = start
                while end + 1 < len(chain) and self._joins(chain[start], chain[end + 1], module, modules):
                    end += 1
                run = chain[start : end + 1]
                if module is not None and len(run) >= 2:
                    groups.append(Fold(self, run, module))
                elif len(run) >= at:
                    groups.append(Fold(self, run))
                else:
                    groups.extend(Fold(self, [member]) for member in run)
                start = end + 1
        return groups

    def _joins(self, first: int, next_: int, module: str | None, modules: Sequence[str | None] | None) -> bool:
        """Whether node `next_` continues the run that `first` starts (same module, or identical)."""
        if module is not None and modules is not None:
            return modules[next_] == module and self.nodes[next_].stream == self.nodes[first].stream
        if modules is not None and modules[next_] is not None:
            return False  # a node of a known module starts its own run
        return self.nodes[first].same_as(self.nodes[next_])

    def total_time_ns(self) -> float:
        """GPU time of every node over every launch the durations summarise (0 without durations)."""
        return sum(n.duration_ns * max(n.launches, 1) for n in self.nodes if n.duration_ns)

    def chains(self) -> list[list[int]]:
        """Maximal runs of nodes joined one-to-one (a->b where a has one child and b one parent)."""
        out: dict[int, list[int]] = {}
        into: dict[int, list[int]] = {}
        for a, b in self.edges:
            out.setdefault(a, []).append(b)
            into.setdefault(b, []).append(a)
        runs, seen = [], set()
        for node in range(len(self.nodes)):
            if node in seen:
                continue
            parents = into.get(node, [])
            if len(parents) == 1 and len(out.get(parents[0], [])) == 1:
                continue  # not the head of a chain
            run = [node]
            seen.add(node)
            while len(out.get(run[-1], [])) == 1 and len(into.get(out[run[-1]][0], [])) == 1:
                run.append(out[run[-1]][0])
                seen.add(run[-1])
            runs.append(run)
        return runs


@dataclass(frozen=True)
class Fold:
    """One box of a folded DAG: `members` are positions in `dag.nodes` (one, a run of identical nodes, or
    with `module` a run of nodes that module made)."""

    dag: Dag
    members: list[int]
    module: str | None = None

    @property
    def first(self) -> DagNode:
        return self.dag.nodes[self.members[0]]

    @property
    def nodes(self) -> list[DagNode]:
        return [self.dag.nodes[i] for i in self.members]

    def __len__(self) -> int:
        return len(self.members)

    @property
    def label(self) -> str:
        if self.module is not None:
            return f"{self.module} · {len(self)} nodes"
        return self.first.name if len(self) == 1 else f"{self.first.name} x{len(self)}"

    @property
    def median_ns(self) -> float | None:
        """The median of the members' durations (the box stands for all of them, not its first)."""
        values = [n.duration_ns for n in self.nodes if n.duration_ns is not None]
        return float(median(values)) if values else None

    @property
    def time_ns(self) -> float:
        return sum((n.duration_ns or 0.0) * max(n.launches, 1) for n in self.nodes)

    @property
    def span(self) -> str:
        """Node indices it covers: "7" or "0-999"."""
        first, last = self.first.index, self.dag.nodes[self.members[-1]].index
        return f"{first}" if len(self) == 1 else f"{first}-{last}"

"""The Kernels table grouped by module: replayed graph work per nn.Module path (Qt-free).

Each replayed graph node's module comes from the attribution model (analysis/attribution.py, through
analysis/capture_ops.py); a row per module sums its nodes' replays and GPU time, and gives the share
of all replay GPU time (kernels, copies and memsets of graph replays, as `summary --json`'s
capture_attribution.coverage.gpu_ns counts it). Nodes whose module is unknown form one row,
NOT_ATTRIBUTED, so the rows always add up to the whole replay. The Graph panel colours and folds a
trace's DAG by the same modules (`dag_modules`, `module_colours`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from graphscope.analysis.attribution import NodeAttribution
from graphscope.core.colours import RGB, module_rgb
from graphscope.core.events import Activity
from graphscope.graph.model import Dag

NOT_ATTRIBUTED = "(not attributed)"


@dataclass(frozen=True)
class ModuleRow:
    """One module's replayed graph work."""

    module: str
    nodes: int
    replayed: int
    kernels: int
    gpu_ns: int
    share: float


def module_rows(nodes: NodeAttribution) -> list[ModuleRow]:
    """Rows per module, most GPU time first; the unattributed row (if any) last."""
    total = int(nodes.gpu_ns.sum())
    kernel = nodes.kind == int(Activity.KERNEL)
    rows = []
    for entry in nodes.grouped(("module",)):
        module = entry["module"]
        mine = nodes.fields["module"] == (-1 if module is None else nodes.texts.intern(module))
        rows.append(
            ModuleRow(
                module=NOT_ATTRIBUTED if module is None else module,
                nodes=entry["nodes"],
                replayed=entry["activities"],
                kernels=int(nodes.activities[mine & kernel].sum()),
                gpu_ns=entry["gpu_ns"],
                share=entry["gpu_ns"] / total if total else 0.0,
            )
        )
    return sorted(rows, key=lambda r: (r.module == NOT_ATTRIBUTED, -r.gpu_ns))


def module_colours(rows: list[ModuleRow]) -> dict[str, RGB]:
    """Each attributed module's fill, by its rank of replay GPU time (the same module, the same colour
    in every graph of the trace)."""
    named = [r.module for r in rows if r.module != NOT_ATTRIBUTED]
    return {module: module_rgb(rank) for rank, module in enumerate(named)}


def dag_modules(dag: Dag, nodes: NodeAttribution) -> list[str | None]:
    """The module of each node of a trace's DAG (by its graphNodeId), None where unknown."""
    out: list[str | None] = []
    for node in dag.nodes:
        at = int(np.searchsorted(nodes.node, node.trace_id)) if node.trace_id is not None else len(nodes.node)
        found = at < len(nodes.node) and int(nodes.node[at]) == node.trace_id
        out.append(nodes.text("module", at) if found else None)
    return out

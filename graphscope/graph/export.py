"""DAG exports: Graphviz DOT (left to right, chains of identical nodes folded as `Dag.fold` does)."""

from __future__ import annotations

from graphscope.core.colours import PDL_EDGE_RGB, hex_of
from graphscope.core.launch_config import format_dim
from graphscope.graph.edges import dot_attributes, inner_programmatic
from graphscope.graph.model import Dag, Fold

SHAPES = {
    "kernel": "box",
    "memcpy": "trapezium",
    "memset": "invtrapezium",
    "wait_event": "diamond",
    "event_record": "diamond",
    "empty": "point",
    "host": "ellipse",
    "graph": "folder",
}


def _label(fold: Fold) -> str:
    node = fold.first
    lines = [f"{node.index}: {node.name}"]
    if node.block:
        lines.append(f"grid {format_dim(node.grid, whole=True)} block {format_dim(node.block, whole=True)}")
    if node.site:
        lines.append(f"site {node.site}")
    if fold.median_ns is not None:
        lines.append(f"{fold.median_ns / 1e3:.2f} us" + (" median" if len(fold) > 1 else ""))
    if len(fold) > 1:
        lines.append(f"x{len(fold)} " + ("in a chain" if fold.dag.edges_known else "in capture order"))
        if inner_programmatic(fold.dag, fold.members):  # PDL edges folded out of sight: said in the box
            lines.append(f"{inner_programmatic(fold.dag, fold.members)} programmatic edges inside")
    return "\\n".join(lines)


def to_dot(dag: Dag, fold: bool = True) -> str:
    """DOT text; with `fold`, runs of identical nodes become one node 'xN' (`Dag.fold`)."""
    groups = dag.fold() if fold else dag.fold(at=len(dag.nodes) + 1)
    representative = {}
    for group in groups:
        for member in group.members:
            representative[dag.nodes[member].index] = group.first.index
    lines = ["digraph graphscope {", "  rankdir=LR;", '  node [fontname="Helvetica", fontsize=10];']
    if not dag.edges_known:
        lines.append('  label="edges unknown (from a trace)";')
    for group in groups:
        node = group.first
        lines.append(f'  n{node.index} [shape={SHAPES.get(node.type, "box")}, label="{_label(group)}"];')
    seen = set()
    for position, (a, b) in enumerate(dag.edges):
        edge = (representative[a], representative[b])
        if edge[0] != edge[1] and edge not in seen:
            seen.add(edge)
            lines.append(f"  n{edge[0]} -> n{edge[1]}{dot_attributes(dag, position, hex_of(PDL_EDGE_RGB))};")
    lines.append("}")
    return "\n".join(lines) + "\n"

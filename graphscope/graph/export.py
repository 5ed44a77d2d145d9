"""DAG exports: Graphviz DOT (left to right, chains of identical nodes folded as `Dag.fold` does)."""

from __future__ import annotations

from graphscope.core.colours import PDL_EDGE_RGB, hex_of
from graphscope.core.launch_config import format_dim
from graphscope.graph.conditional import body_title, facts, label
from graphscope.graph.edges import dot_attributes, inner_programmatic
from graphscope.graph.model import Dag, DagNode, Fold

SHAPES = {
    "kernel": "box",
    "memcpy": "trapezium",
    "memset": "invtrapezium",
    "wait_event": "diamond",
    "event_record": "diamond",
    "empty": "point",
    "host": "ellipse",
    "graph": "folder",
    "conditional": "hexagon",
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
    """DOT text; with `fold`, runs of identical nodes become one node 'xN' (`Dag.fold`). A conditional
    node is a cluster holding its node and its body graphs (`cluster_nK`, bodies `nK_bI_...`)."""
    lines = ["digraph graphscope {", "  rankdir=LR;", "  compound=true;"]
    lines.append('  node [fontname="Helvetica", fontsize=10];')
    if not dag.edges_known:
        lines.append('  label="edges unknown (from a trace)";')
    lines += _graph_lines(dag, fold, "n", "  ")
    lines.append("}")
    return "\n".join(lines) + "\n"


def _graph_lines(dag: Dag, fold: bool, prefix: str, indent: str) -> list[str]:
    """Node and edge lines of one graph (the top level, or a body with its own `prefix`)."""
    groups = dag.fold() if fold else dag.fold(at=len(dag.nodes) + 1)
    representative = {}
    for group in groups:
        for member in group.members:
            representative[dag.nodes[member].index] = group.first.index
    lines = []
    for group in groups:
        node = group.first
        if node.type == "conditional":
            lines += _cluster_lines(node, fold, f"{prefix}{node.index}", indent)
        else:
            shape = SHAPES.get(node.type, "box")
            lines.append(f'{indent}{prefix}{node.index} [shape={shape}, label="{_label(group)}"];')
    seen = set()
    for position, (a, b) in enumerate(dag.edges):
        edge = (representative[a], representative[b])
        if edge[0] != edge[1] and edge not in seen:
            seen.add(edge)
            attributes = dot_attributes(dag, position, hex_of(PDL_EDGE_RGB))
            lines.append(f"{indent}{prefix}{edge[0]} -> {prefix}{edge[1]}{attributes};")
    return lines


def _cluster_lines(node: DagNode, fold: bool, name: str, indent: str) -> list[str]:
    """A conditional node: a cluster labelled with its type and facts, its own node first, then each body
    graph in a cluster of its own, entered from the node by a dashed edge."""
    title = _escape(f"{node.index}: {label(node)} {node.name}")
    known = _escape(facts(node))
    lines = [f"{indent}subgraph cluster_{name} {{"]
    lines.append(f'{indent}  label="{title}' + (f"\\n{known}" if known else "") + '";')
    lines.append(f'{indent}  style=rounded; {name} [shape=hexagon, label="{_escape(label(node))}"];')
    for i, body in enumerate(node.bodies):
        inner = f"{name}_b{i}_"
        lines.append(f"{indent}  subgraph cluster_{name}_b{i} {{")
        lines.append(f'{indent}    label="{_escape(body_title(node, i))}"; style=dashed;')
        lines += _graph_lines(body, fold, inner, indent + "    ")
        lines.append(f"{indent}  }}")
        heads = [n.index for n in body.nodes if all(b != n.index for _, b in body.edges)]
        lines += [f"{indent}  {name} -> {inner}{h} [style=dashed];" for h in heads[:1]]
    lines.append(f"{indent}}}")
    return lines


def _escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"')

"""DAG exports: Graphviz DOT (left to right, chains of identical nodes folded) and JSON."""

from __future__ import annotations

from graphscope.graph.model import Dag, DagNode

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
FOLD_AT = 4  # a chain of this many identical nodes or more is drawn as one


def _label(node: DagNode) -> str:
    lines = [f"{node.index}: {node.name}"]
    if node.block:
        lines.append(
            f"grid {node.grid[0]}x{node.grid[1]}x{node.grid[2]} block {node.block[0]}x{node.block[1]}x{node.block[2]}"
        )
    if node.site:
        lines.append(f"site {node.site}")
    if node.duration_ns is not None:
        lines.append(f"{node.duration_ns / 1e3:.2f} us")
    return "\\n".join(lines)


def _same(a: DagNode, b: DagNode) -> bool:
    return (a.type, a.name, a.grid, a.block) == (b.type, b.name, b.grid, b.block)


def to_dot(dag: Dag, fold: bool = True) -> str:
    """DOT text; with `fold`, runs of >= 4 identical chained nodes become one node 'xN'."""
    representative = {n.index: n.index for n in dag.nodes}
    folded: dict[int, int] = {}
    if fold:
        for chain in dag.chains():
            start = 0
            while start < len(chain):
                end = start
                while end + 1 < len(chain) and _same(dag.nodes[chain[start]], dag.nodes[chain[end + 1]]):
                    end += 1
                if end - start + 1 >= FOLD_AT:
                    folded[chain[start]] = end - start + 1
                    for member in chain[start : end + 1]:
                        representative[member] = chain[start]
                start = end + 1
    lines = ["digraph graphscope {", "  rankdir=LR;", '  node [fontname="Helvetica", fontsize=10];']
    if not dag.edges_known:
        lines.append('  label="edges unknown (from a trace)";')
    for node in dag.nodes:
        if representative[node.index] != node.index:
            continue
        label = _label(node) + (f"\\nx{folded[node.index]} in a chain" if node.index in folded else "")
        lines.append(f'  n{node.index} [shape={SHAPES.get(node.type, "box")}, label="{label}"];')
    seen = set()
    for a, b in dag.edges:
        edge = (representative[a], representative[b])
        if edge[0] != edge[1] and edge not in seen:
            seen.add(edge)
            lines.append(f"  n{edge[0]} -> n{edge[1]};")
    lines.append("}")
    return "\n".join(lines) + "\n"

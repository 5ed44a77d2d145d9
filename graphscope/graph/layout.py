"""Where each box of a DAG drawing goes: layers left to right, crossings reduced (no Qt here).

A live graph (fork/join, with edges) is laid out by the Sugiyama method through igraph, a maintained
library with its C core in the wheel (no system Graphviz needed, and it ships inside the frozen app):
longest-path layering, then barycentre ordering within layers to reduce edge crossings. A trace's
graph has no edges: its boxes run in capture order, one band per stream, wrapped into rows.
"""

from __future__ import annotations

from collections import deque

WRAP = 12  # boxes per row in a band (trace graphs, no edges)


def layered(count: int, edges: list[tuple[int, int]]) -> list[tuple[float, float]]:
    """(column, row) of each of `count` boxes joined by `edges` (from, to)."""
    try:
        import igraph
    except ImportError:  # a minimal install: longest-path layers, boxes stacked in order
        return _longest_path(count, edges)
    graph = igraph.Graph(n=count, edges=edges, directed=True)
    coords = graph.layout_sugiyama().coords[:count]  # the rest are dummy vertices on long edges
    return [(float(y), float(x)) for x, y in coords]


def banded(streams: list[int]) -> list[tuple[float, float]]:
    """(column, row) of boxes without edges: one band of rows per stream, capture order within it."""
    bands = sorted(set(streams))
    used = {band: 0 for band in bands}
    top, row_of_band = 0, {}
    for band in bands:
        row_of_band[band] = top
        top += -(-streams.count(band) // WRAP)
    positions = []
    for stream in streams:
        slot = used[stream]
        used[stream] += 1
        positions.append((float(slot % WRAP), float(row_of_band[stream] + slot // WRAP)))
    return positions


def longest_path_layers(count: int, edges: list[tuple[int, int]]) -> list[int]:
    """The longest-path depth of each node: its column in a left-to-right drawing."""
    depth, incoming = [0] * count, [0] * count
    children: dict[int, list[int]] = {}
    for a, b in edges:
        children.setdefault(a, []).append(b)
        incoming[b] += 1
    ready = deque(i for i in range(count) if incoming[i] == 0)
    while ready:
        node = ready.popleft()
        for child in children.get(node, ()):
            depth[child] = max(depth[child], depth[node] + 1)
            incoming[child] -= 1
            if incoming[child] == 0:
                ready.append(child)
    return depth


def _longest_path(count: int, edges: list[tuple[int, int]]) -> list[tuple[float, float]]:
    depth = longest_path_layers(count, edges)
    rows: dict[int, int] = {}
    positions = []
    for node in range(count):
        rows[depth[node]] = rows.get(depth[node], -1) + 1
        positions.append((float(depth[node]), float(rows[depth[node]])))
    return positions

"""The kinds of a CUDA graph's edges as columns (graph/edges.py judges them; graph/model.py holds them).

`EdgeKinds` holds three int8 columns parallel to `Dag.edges` (core/edge_kinds.py names the codes) plus, per
programmatic edge, what was measured of it; `read_edges` reads edges and kinds from the driver.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from graphscope.core.edge_kinds import EdgeKind, Port, kind_word, parse_kind, parse_port, port_word


@dataclass
class EdgeKinds:
    """Per edge of `Dag.edges` (same order): kind, from port, to port; `measured`: edge position -> PDL data."""

    kind: np.ndarray
    from_port: np.ndarray
    to_port: np.ndarray
    measured: dict[int, dict[str, Any]] = field(default_factory=dict)

    @classmethod
    def default(cls, count: int) -> EdgeKinds:
        zeros = np.zeros(count, dtype=np.int8)
        return cls(zeros, zeros.copy(), zeros.copy())

    @classmethod
    def of(cls, rows: list[tuple[int, int, int]]) -> EdgeKinds:
        """From (kind, from port, to port) per edge."""
        table = np.array(rows, dtype=np.int8).reshape(-1, 3)
        return cls(table[:, 0].copy(), table[:, 1].copy(), table[:, 2].copy())

    def __len__(self) -> int:
        return len(self.kind)

    def programmatic(self) -> np.ndarray:
        """Positions (in `Dag.edges`) of the programmatic edges."""
        return np.flatnonzero(self.kind == EdgeKind.PROGRAMMATIC)

    def ports(self, position: int) -> str:
        """'programmatic -> default': the edge's from port and to port."""
        return f"{port_word(int(self.from_port[position]))} -> {port_word(int(self.to_port[position]))}"

    def describe(self, position: int) -> str:
        """'programmatic edge (port programmatic -> default)'; 'default edge' for a plain one."""
        kind = int(self.kind[position])
        plain = kind == EdgeKind.DEFAULT and self.from_port[position] == Port.DEFAULT and self.to_port[position] == 0
        return f"{kind_word(kind)} edge" + ("" if plain else f" (ports {self.ports(position)})")

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": [kind_word(int(v)) for v in self.kind],
            "from_port": [port_word(int(v)) for v in self.from_port],
            "to_port": [port_word(int(v)) for v in self.to_port],
            "pdl": [{"edge": position, **data} for position, data in sorted(self.measured.items())],
        }

    @classmethod
    def from_json(cls, data: dict[str, Any], count: int) -> EdgeKinds:
        kinds = [parse_kind(v) for v in data.get("kind", [])]
        if len(kinds) != count:  # written by an older graphscope, or damaged: every edge is default
            return cls.default(count)
        edges = cls.of(
            [
                (k, parse_port(f), parse_port(t))
                for k, f, t in zip(kinds, data.get("from_port", [0] * count), data.get("to_port", [0] * count))
            ]
        )
        rows = data.get("pdl", [])
        edges.measured = {int(row["edge"]): {k: v for k, v in row.items() if k != "edge"} for row in rows}
        return edges


def _check(result: tuple[Any, ...], what: str) -> tuple[Any, ...]:
    if int(result[0]) != 0:
        raise RuntimeError(f"{what} failed: {getattr(result[0], 'name', result[0])}")
    return result[1:]


def read_edges(driver: Any, graph: Any, position: dict[int, int]) -> tuple[list[tuple[int, int]], EdgeKinds]:
    """The graph's edges as (from, to) node positions and their kinds, through `cuGraphGetEdges` with edge
    data (cuda.bindings 12.3+; a binding that returns no data leaves every edge default)."""
    count = int(_check(driver.cuGraphGetEdges(graph, 0), "cuGraphGetEdges (count)")[-1])
    sources, targets, data, count = _check(driver.cuGraphGetEdges(graph, count), "cuGraphGetEdges")
    count = int(count)
    edges = [(position[int(a)], position[int(b)]) for a, b in zip(sources[:count], targets[:count])]
    if data is None or len(data) < count:
        return edges, EdgeKinds.default(count)
    return edges, EdgeKinds.of([(int(d.type), int(d.from_port), int(d.to_port)) for d in data[:count]])

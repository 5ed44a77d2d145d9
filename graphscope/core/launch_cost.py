"""What one graph launch costs the host, as fixed + per-node terms, and where the figures came from.

No GPU was lent when this model was written, so the default is the orientation measurement issue #45
quotes (measured on a lent H100 with CuPy, not yet re-measured by graphscope): the host's
`cudaGraphLaunch` of an uploaded chain of tiny kernels took 1.27 us at 10 nodes and 5.5 us at 5,000. The
line through those two points is 1.26 us + 0.85 ns per node (the issue rounds it to "about 1.5 us +
0.8 ns per node"; the points are what was measured, so the line goes through them). Two points give no
interval, and the per-edge term and first-node latency the issue asks for are not measured: a
measurement on the user's GPU replaces this default when one exists.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

_POINTS = ((10, 1_270.0), (5_000, 5_500.0))  # (kernel nodes, host ns per cudaGraphLaunch), issue #45


@dataclass(frozen=True)
class LaunchCost:
    """Host time of one graph launch: `fixed_ns` + `per_node_ns` x nodes."""

    fixed_ns: float
    per_node_ns: float
    gpu: str
    source: str
    measured_here: bool  # False: a figure carried from elsewhere, not measured by graphscope

    def launch_ns(self, nodes: int | np.ndarray) -> float | np.ndarray:
        """Predicted host time of launching a graph of `nodes` nodes."""
        return self.fixed_ns + self.per_node_ns * nodes

    def describe(self) -> str:
        """'1.26 us + 0.85 ns per node (H100, ...)'."""
        return f"{self.fixed_ns / 1000:.2f} us + {self.per_node_ns:.2f} ns per node ({self.gpu}; {self.source})"

    def to_json(self) -> dict[str, object]:
        return {
            "fixed_ns": round(self.fixed_ns, 1),
            "per_node_ns": round(self.per_node_ns, 3),
            "gpu": self.gpu,
            "source": self.source,
            "measured_here": self.measured_here,
        }


def _through(points: tuple[tuple[int, float], tuple[int, float]]) -> tuple[float, float]:
    (n0, t0), (n1, t1) = points
    slope = (t1 - t0) / (n1 - n0)
    return t0 - slope * n0, slope


_FIXED, _PER_NODE = _through(_POINTS)

DEFAULT = LaunchCost(
    fixed_ns=_FIXED,
    per_node_ns=_PER_NODE,
    gpu="NVIDIA H100",
    source="issue #45's orientation figures (CuPy, uploaded chain of tiny kernels: 1.27 us at 10 nodes, "
    "5.5 us at 5,000); not yet checked on a GPU by graphscope",
    measured_here=False,
)
"""The model graphscope uses until it measures the user's GPU (module docstring)."""

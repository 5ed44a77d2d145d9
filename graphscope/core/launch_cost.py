"""What one graph launch costs the host, as fixed + per-node + per-edge terms, where the figures came from,
and the fit that makes them from a measurement (benchmarks/graph_launch_cost.py, `graphscope launch-cost`).

The model graphscope uses (`current()`): the user's own measurement (`graphscope launch-cost --measure`
writes it to the data folder) when there is one, else the one shipped beside this module
(launch_cost_h100.json: measured by graphscope on a lent H100), else issue #45's orientation figures
(1.27 us at 10 nodes, 5.5 us at 5,000: a line through two points, no interval).

A measurement (workload/launch_bench.py) holds, per synthetic graph (shape, nodes, edges), the host time of
each `cuGraphLaunch` of the uploaded graph on an idle GPU, and the GPU time from an event before the call to
one after it; plus the one-offs: the first launch without an upload, a launch into a busy stream. The fit is
ordinary least squares of the per-graph medians on [1, nodes, edges], its 95% intervals from a bootstrap
that resamples each graph's launches (BOOTSTRAP draws).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

_POINTS = ((10, 1_270.0), (5_000, 5_500.0))  # (kernel nodes, host ns per cudaGraphLaunch), issue #45
SHIPPED = Path(__file__).with_name("launch_cost_h100.json")
USER_FILE = "launch_cost.json"  # in core/settings.data_dir()
BOOTSTRAP = 400
TERMS = ("fixed_ns", "per_node_ns", "per_edge_ns", "per_root_ns")  # per_root_ns: each root node beyond the first


@dataclass(frozen=True)
class LaunchCost:
    """Host time of one graph launch: `fixed_ns` + `per_node_ns` x nodes + `per_edge_ns` x edges."""

    fixed_ns: float
    per_node_ns: float
    gpu: str
    source: str
    measured_here: bool  # False: a figure carried from elsewhere, not measured by graphscope
    per_edge_ns: float = 0.0
    per_root_ns: float = 0.0  # each root node beyond the first
    interval: dict[str, list[float]] = field(default_factory=dict)  # 95% per term, where measured
    other: dict[str, Any] = field(default_factory=dict)  # the other fits of the measurement (fit_measurement)

    def launch_ns(
        self, nodes: float | np.ndarray, edges: float | np.ndarray | None = None, roots: float | np.ndarray = 1
    ) -> Any:
        """Predicted host time of launching a graph of `nodes` nodes, `edges` edges (unknown: a chain's,
        nodes - 1) and `roots` root nodes."""
        if edges is None:
            edges = np.maximum(np.asarray(nodes) - 1, 0)
        return self.fixed_ns + self.per_node_ns * nodes + self.per_edge_ns * edges + self.per_root_ns * (roots - 1)

    def describe(self) -> str:
        """'1.26 us + 0.85 ns per node (H100; ...)'."""
        edge = f" + {self.per_edge_ns:.2f} ns per edge" if self.per_edge_ns else ""
        edge += f" + {self.per_root_ns / 1000:.2f} us per root beyond the first" if self.per_root_ns else ""
        return f"{self.fixed_ns / 1000:.2f} us + {self.per_node_ns:.2f} ns per node{edge} ({self.gpu}; {self.source})"

    def to_json(self) -> dict[str, object]:
        return {
            "fixed_ns": round(self.fixed_ns, 1),
            "per_node_ns": round(self.per_node_ns, 3),
            "per_edge_ns": round(self.per_edge_ns, 3),
            "per_root_ns": round(self.per_root_ns, 1),
            "interval": self.interval,
            "gpu": self.gpu,
            "source": self.source,
            "measured_here": self.measured_here,
        }


def _through(points: tuple[tuple[int, float], tuple[int, float]]) -> tuple[float, float]:
    (n0, t0), (n1, t1) = points
    slope = (t1 - t0) / (n1 - n0)
    return t0 - slope * n0, slope


_FIXED, _PER_NODE = _through(_POINTS)

ORIENTATION = LaunchCost(
    fixed_ns=_FIXED,
    per_node_ns=_PER_NODE,
    gpu="NVIDIA H100",
    source="issue #45's orientation figures (CuPy, uploaded chain of tiny kernels: 1.27 us at 10 nodes, "
    "5.5 us at 5,000); not yet checked on a GPU by graphscope",
    measured_here=False,
)
"""The model before graphscope measured a GPU (module docstring)."""


def from_json(data: dict[str, Any], where: str) -> LaunchCost:
    """The model stored in a fit file (fit_measurement's dict)."""
    host = data["host"]
    terms = [float(host["fixed_ns"]), float(host["per_node_ns"])]
    terms += [float(host.get("per_edge_ns", 0.0)), float(host.get("per_root_ns", 0.0))]
    if not all(math.isfinite(t) and abs(t) < 1e9 for t in terms):  # a damaged or planted file prices nothing
        raise ValueError(f"terms out of range: {terms}")
    return LaunchCost(
        fixed_ns=terms[0],
        per_node_ns=terms[1],
        per_edge_ns=terms[2],
        per_root_ns=terms[3],
        gpu=str(data["gpu"]),
        source=f"measured by graphscope ({data.get('measured', where)})",
        measured_here=True,
        interval={k: list(v) for k, v in host.get("interval", {}).items()},
        other={k: v for k, v in data.items() if k not in ("host", "points")},
    )


def load(path: Path) -> LaunchCost:
    """The model in a fit file; ValueError when it is not one."""
    try:
        return from_json(json.loads(path.read_text()), path.name)
    except (OSError, KeyError, TypeError, ValueError) as e:
        raise ValueError(f"{path}: not a launch-cost fit ({e})") from e


def current(data_dir: Path | None = None) -> LaunchCost:
    """The model graphscope uses now (module docstring): the user's, the shipped one, or ORIENTATION."""
    for path in ([data_dir / USER_FILE] if data_dir is not None else []) + [SHIPPED]:
        if path.exists():
            try:
                return load(path)
            except ValueError:
                continue
    return ORIENTATION


DEFAULT = current()
"""The model shipped with graphscope (the user's own measurement is read by `model()`)."""


def model() -> LaunchCost:
    """The model a trace is judged with now: the user's own measurement (in the data folder, where
    `graphscope launch-cost --measure` writes it) when there is one, else DEFAULT."""
    from graphscope.core.settings import data_dir

    return current(data_dir())


def ols(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Least-squares coefficients of y on the columns of x."""
    coef: np.ndarray = np.linalg.lstsq(x, y, rcond=None)[0]
    return coef


def fit_terms(design: np.ndarray, samples: list[np.ndarray], names: tuple[str, ...], seed: int = 0) -> dict[str, Any]:
    """OLS of each graph's median sample on its design row, with 95% bootstrap intervals (each graph's
    samples resampled) and the largest residual relative to the prediction."""
    y = np.array([np.median(s) for s in samples])
    coef = ols(design, y)
    rng = np.random.default_rng(seed)
    draws = np.empty((BOOTSTRAP, len(names)))
    for b in range(BOOTSTRAP):
        yb = np.array([np.median(rng.choice(s, len(s))) for s in samples])
        draws[b] = ols(design, yb)
    lo, hi = np.percentile(draws, [2.5, 97.5], axis=0)
    predicted = design @ coef
    worst = float(np.max(np.abs(y - predicted) / np.maximum(predicted, 1.0)))
    return {
        **{n: round(float(c), 3) for n, c in zip(names, coef, strict=True)},
        "interval": {n: [round(float(a), 3), round(float(b), 3)] for n, a, b in zip(names, lo, hi, strict=True)},
        "worst_relative_residual": round(worst, 4),
        "graphs": len(samples),
    }


SERIAL_SHAPES = ("chain", "layered", "streams")  # few nodes ready at a time: fixed + node + edge + root terms
EXTRA_UNITS: dict[str, tuple[str, Callable[[dict[str, Any]], int]]] = {
    # shapes whose nodes cost more, and what is counted as one unit of that extra cost
    "fanout": ("parallel_node_ns", lambda s: int(s["nodes"]) - 2),  # leaves beyond the first, ready at once
    "memops": ("memop_node_ns", lambda s: int(s.get("memops", 0))),  # memset and memcpy nodes
    "hostnodes": ("host_node_ns", lambda s: int(s.get("hostnodes", 0))),  # host nodes
}
BLOCKED_SHARE = 0.8  # a launch call lasting 80% of the GPU's time from before it to the graph's end kept
# pace with the GPU (measured: a fan-out of 100 tiny kernels, 25 of 31 us): its time is the GPU's, not its own


def blocked(sample: dict[str, Any]) -> bool:
    """Did the launch call keep pace with the GPU (BLOCKED_SHARE)?"""
    return bool(np.median(sample["host_ns"]) >= BLOCKED_SHARE * np.median(sample["gpu_ns"]))


def fit_measurement(
    raw: dict[str, Any], traced: list[dict[str, Any]] | None = None, source: str = ""
) -> dict[str, Any]:
    """The stored model from a raw measurement (workload/launch_bench.measure) and, optionally, nsys-traced
    points (benchmarks/graph_launch_cost.py latency).

    - `host`: fixed + per node + per edge, fitted on the serial shapes (SERIAL_SHAPES: chains, layers of 4,
      four parallel chains), whose calls never kept pace with the GPU;
    - `extra`: what a node of each other kind costs the call beyond that (EXTRA_UNITS: a fan-out leaf, an
      extra root, a memset/memcpy node, a host node), the median over the sizes whose call did not keep
      pace with the GPU; `blocked_from`: per shape, the smallest graph whose call did (BLOCKED_SHARE);
    - `host_nodes`: what a host node adds to the call and to the GPU's time;
    - `gpu_by_shape`: the GPU's time from an event before the call to the graph's end, per shape;
    - the one-offs: first launch without an upload, after one, into a busy stream, instantiation;
    - `traced_<mode>`: under Nsight, chains only: the call, the first node's start after the call began,
      the replay."""
    every = raw["samples"]
    serial = [s for s in every if s["shape"] in SERIAL_SHAPES]
    design = np.array([_row(s) for s in serial], float)
    host = fit_terms(design, [np.asarray(s["host_ns"], float) for s in serial], TERMS)
    result: dict[str, Any] = {
        "gpu": raw["gpu"],
        "driver_version": raw.get("driver_version"),
        "measured": source or "benchmarks/graph_launch_cost.py",
        "reps": raw.get("reps"),
        "ctypes_floor_ns": raw.get("floor_ns"),
        "host": host,
        "extra": {},
        "blocked_from": {},
    }
    coef = np.array([host[t] for t in TERMS])
    for shape, (name, units) in EXTRA_UNITS.items():
        mine = [s for s in every if s["shape"] == shape and units(s) > 0]
        each = [
            (float(np.median(s["host_ns"])) - float(coef @ _row(s))) / units(s)
            for s in mine
            if not blocked(s)
        ]
        if each:
            result["extra"][name] = round(float(np.median(each)), 1)
    for shape in sorted({s["shape"] for s in every}):
        sizes = sorted(s["nodes"] for s in every if s["shape"] == shape and blocked(s))
        result["blocked_from"][shape] = sizes[0] if sizes else None
    result["gpu_by_shape"] = {}
    for shape in sorted({s["shape"] for s in every}):
        mine = [s for s in every if s["shape"] == shape]
        if len(mine) >= 2:
            result["gpu_by_shape"][shape] = fit_terms(
                line(mine), [np.asarray(s["gpu_ns"], float) for s in mine], ("fixed_ns", "per_node_ns")
            )
    chains = [s for s in every if s["shape"] == "chain"] or serial
    for key in ("first_no_upload_ns", "first_uploaded_ns", "busy_launch_ns", "instantiate_ns"):
        result[key.removesuffix("_ns")] = _line(ols(line(chains), np.array([s[key] for s in chains], float)))
    result["host_nodes"] = _host_nodes(every)
    for t in traced or []:
        pts = [p for p in t["points"] if p.get("shape", "chain") == "chain"]
        x = np.column_stack([np.ones(len(pts)), [p["nodes"] for p in pts]])
        result[f"traced_{t.get('trace_mode', 'node')}"] = {
            key.removesuffix("_ns"): _line(ols(x, np.array([p[key] for p in pts], float)))
            for key in ("host_ns", "first_node_ns", "replay_ns")
        }
    result["points"] = [
        {
            **{k: s.get(k, 0) for k in ("shape", "nodes", "edges", "memops", "hostnodes")},
            **{k: round(float(np.median(s[k])), 1) for k in ("host_ns", "gpu_ns")},
            **{k: s[k] for k in ("first_no_upload_ns", "first_uploaded_ns", "busy_launch_ns", "instantiate_ns")},
            "blocked": blocked(s),
        }
        for s in every
    ]
    result["traced_points"] = list(traced or [])
    return result


def line(rows: list[dict[str, Any]]) -> np.ndarray:
    """The design [1, nodes] of some measured graphs."""
    return np.column_stack([np.ones(len(rows)), [s["nodes"] for s in rows]])


def roots(sample: dict[str, Any]) -> int:
    """A measured graph's root nodes (launch_bench records them; older measurements: from the shape)."""
    if "roots" in sample:
        return int(sample["roots"])
    return {"independent": int(sample["nodes"]), "layered": 4}.get(sample["shape"], 1)


def _row(sample: dict[str, Any]) -> list[float]:
    return [1.0, float(sample["nodes"]), float(sample["edges"]), float(roots(sample) - 1)]


def _line(coef: np.ndarray) -> dict[str, float]:
    return {"fixed_ns": round(float(coef[0]), 1), "per_node_ns": round(float(coef[1]), 3)}


def _host_nodes(samples: list[dict[str, Any]]) -> dict[str, Any] | None:
    """What each host node adds to a chain of the same size: host launch time and GPU time (medians over
    the sizes measured both ways whose call did not keep pace with the GPU); None without host-node graphs."""
    chains = {s["nodes"]: s for s in samples if s["shape"] == "chain"}
    pairs = [(s, chains[s["nodes"]]) for s in samples if s.get("hostnodes") and not blocked(s) and s["nodes"] in chains]
    if not pairs:
        return None

    def each(key: str) -> float:
        return float(np.median([(np.median(s[key]) - np.median(c[key])) / s["hostnodes"] for s, c in pairs]))

    return {"host_ns_each": round(each("host_ns"), 1), "gpu_ns_each": round(each("gpu_ns"), 1), "sizes": len(pairs)}

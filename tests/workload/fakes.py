"""Run reports with made-up samples, for everything that consumes them without a GPU."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from graphscope.workload.runner import ModeResult, RunReport

ENVIRONMENT = {"gpu": "NVIDIA H200", "driver_cuda": "13.0", "cupy": "14.2.0", "compute_capability": "9.0"}


def fake_report(
    workload: Path,
    eager_ms: float = 5.4,
    graph_ms: float = 1.05,
    reps: int = 30,
    match: bool = True,
    eager_match: bool = True,
    outputs: dict | None = None,
) -> RunReport:
    rng = np.random.default_rng(0)

    def mode(name: str, ms: float, submit_ms: float) -> ModeResult:
        wall = (rng.normal(ms, ms * 0.01, reps) * 1e6).tolist()
        samples = {"gpu_ns": [w * 0.99 for w in wall], "wall_ns": wall, "submit_ns": [submit_ms * 1e6] * reps}
        capture = (
            {"capture_ns": 5_600_000, "instantiate_ns": 3_000_000, "upload_ns": 900_000, "launches_captured": 1000}
            if name == "graph"
            else None
        )
        same = match if name == "graph" else eager_match
        checked = outputs or {"checked": True, "match": same, "exact": same, "max_abs_diff": 0.0 if same else 0.5}
        return ModeResult(name, samples, capture, checked)

    sites = [
        {
            "key": f"add#{i}",
            "name": "add",
            "ordinal": i,
            "kernel": "vec_add",
            "problem": [16384, 1, 1],
            "block": [256, 1, 1],
            "grid": [64, 1, 1],
            "shared_mem": 0,
            "max_threads": 1024,
            "registers": 8,
        }
        for i in range(3)
    ]
    return RunReport(
        Path(workload),
        reps,
        5,
        ENVIRONMENT,
        sites,
        {"eager": mode("eager", eager_ms, eager_ms * 0.98), "graph": mode("graph", graph_ms, 0.01)},
        1_700_000_000.0,
        1_700_000_010.0,
    )

"""One decoder step built three ways on the same weights and traced with torch.profiler on the lent H100
(benchmarks/fusion_check.py; tests/data/kineto/README.md): the anatomy's modes, graph launches, islands
and seams checked against a plain pass over the JSON, and the fusion prediction from the piecewise trace
against the full-graph trace's measured steps."""

from __future__ import annotations

import gzip
import json
import re
import statistics
from pathlib import Path

import numpy as np
import pytest

from graphscope.cli import main
from tests.conftest import DATA

KINETO = DATA / "kineto"
WAYS = {"full": "full graph", "piecewise": "piecewise", "eager": "eager"}
STEP = re.compile(r"ProfilerStep#\d+$")


def trace(way: str) -> Path:
    return KINETO / f"h100_decoder_{way}.json.gz"


def plain(path: Path) -> list[dict]:
    """Per step, by a plain pass over the JSON: segments (a graph launch's GPU work as one, each eager
    piece of work as one) in GPU start order, their counts, and the seams' idle (ns)."""
    with gzip.open(path) as f:
        events = json.loads(f.read())["traceEvents"]
    steps = sorted(
        (e["ts"], e["ts"] + e["dur"])
        for e in events
        if e.get("ph") == "X" and e.get("cat") == "user_annotation" and STEP.match(e["name"])
    )
    calls = {
        e["args"]["correlation"]: (e["name"], e["ts"])
        for e in events
        if e.get("cat") in ("cuda_runtime", "cuda_driver") and "correlation" in e.get("args", {})
    }
    work = [e for e in events if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")]
    found = []
    for lo, hi in steps:
        segments: dict[object, list[float]] = {}
        for e in work:
            name, at = calls.get(e["args"].get("correlation"), ("", e["ts"]))
            if not lo <= at < hi:
                continue
            graph = name.startswith("cudaGraphLaunch")
            key = ("g", e["args"]["correlation"]) if graph else ("e", id(e))
            seg = segments.setdefault(key, [e["ts"], e["ts"] + e["dur"], graph])
            seg[0], seg[1] = min(seg[0], e["ts"]), max(seg[1], e["ts"] + e["dur"])
        order = sorted(segments.values())
        kinds = [s[2] for s in order]
        runs = [k for i, k in enumerate(kinds) if not k and (i == 0 or kinds[i - 1])]  # island starts
        starts = [i for i, k in enumerate(kinds) if not k and (i == 0 or kinds[i - 1])]
        interior = [i for i in starts if any(kinds[:i]) and any(kinds[i:])]
        seams, idle, reach = 0, 0.0, order[0][1] if order else 0.0
        for i in range(1, len(order)):
            if kinds[i] or kinds[i - 1]:
                seams += 1
                idle += max(order[i][0] - reach, 0.0)
            reach = max(reach, order[i][1])
        found.append(
            {"graph_launches": sum(kinds), "islands": len(runs), "interior_islands": len(interior),
             "seams": seams, "seam_ns": idle * 1000, "duration_ns": (hi - lo) * 1000}
        )  # fmt: skip
    return found


@pytest.fixture(scope="module")
def summaries():
    out = {}
    for way in WAYS:
        from contextlib import redirect_stdout
        from io import StringIO

        buffer = StringIO()
        with redirect_stdout(buffer):
            assert main(["summary", str(trace(way)), "--json"]) == 0
        out[way] = json.loads(buffer.getvalue())
    return out


@pytest.mark.parametrize("way", list(WAYS))
def test_each_way_has_its_mode_and_counts_a_plain_pass_agrees_with(way, summaries):
    steps = summaries[way]["anatomy"]["steps"]
    by_hand = plain(trace(way))
    assert len(steps) == len(by_hand) >= 5
    assert {s["mode"] for s in steps} == {WAYS[way]}
    for s, h in zip(steps, by_hand, strict=True):
        for key in ("graph_launches", "islands", "interior_islands", "seams"):
            assert s[key] == h[key], key
        assert s["seam_ns"] == pytest.approx(h["seam_ns"], abs=1000 * max(h["seams"], 1))
        assert s["duration_ns"] == pytest.approx(h["duration_ns"], abs=1000)


def test_the_prediction_from_the_piecewise_trace_is_within_10_percent_of_the_full_graph(summaries):
    fusion = summaries["piecewise"]["anatomy"]["fusion"]
    full = [s["duration_ns"] for s in summaries["full"]["anatomy"]["steps"]]
    error = fusion["median_predicted_ns"] / statistics.median(full) - 1
    assert abs(error) < 0.10
    # a second way: the trace's own per-node latency by numpy over its graph launches, the prediction by hand
    steps = summaries["piecewise"]["anatomy"]["steps"]
    by_hand = [
        s["duration_ns"] - s["span_host_wait_ns"]
        + (s["graph_nodes"] + s["island_work"] - s["first_graph_nodes"]) * fusion["latency_per_node_ns"]
        for s in steps
    ]  # fmt: skip
    assert fusion["median_predicted_ns"] == pytest.approx(float(np.median(by_hand)), rel=1e-6)
    assert fusion["speedup"] > 1.0

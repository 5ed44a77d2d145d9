from __future__ import annotations

import json

import pytest

from graphscope.analysis.summary import summarize
from graphscope.analysis.verdict import launch_verdict
from graphscope.trace import load_trace
from tests.conftest import EXPORTS, H200_GRAPH

CONTRACT = {
    "file": str,
    "nsys_version": (str, type(None)),
    "span_ns": int,
    "kernels": {"count": int, "total_ns": int},
    "memcpy": {"count": int, "total_ns": int, "bytes": int},
    "memset": {"count": int, "total_ns": int},
    "api": {"count": int, "launches": int, "graph_launches": int},
    "graph_trace_mode": (str, type(None)),
    "graphs": {"launches": int, "node_activities": int},
    "launch": {"median_api_ns": float, "median_latency_ns": float, "overhead_ratio": (float, type(None))},
}


def _check(value, expected, where):
    if isinstance(expected, dict):
        assert isinstance(value, dict), where
        for key, sub in expected.items():
            _check(value[key], sub, f"{where}.{key}")
    else:
        assert isinstance(value, expected) and not isinstance(value, bool), f"{where}: {value!r}"


@pytest.mark.parametrize("path", EXPORTS, ids=lambda p: p.stem[:40])
def test_summary_follows_the_json_contract(path):
    summary = json.loads(json.dumps(summarize(load_trace(path))))
    _check(summary, CONTRACT, "summary")
    assert summary["graph_trace_mode"] in ("node", "graph", None)
    busy = summary["launch"]["steady_state"]["gpu_busy_ns"]
    assert (summary["launch"]["overhead_ratio"] is None) == (sum(g["busy_ns"] for g in summary["gpu"]) == 0)
    assert (summary["launch"]["steady_state"]["overhead_ratio"] is None) == (busy == 0)  # undefined, never 0.0
    for kernel in summary["top_kernels"]:
        _check(kernel, {"name": str, "count": int, "total_ns": int, "median_ns": float}, "top_kernels")
    totals = [k["total_ns"] for k in summary["top_kernels"]]
    assert totals == sorted(totals, reverse=True)
    for gpu in summary["gpu"]:
        _check(gpu, {"device": int, "busy_ns": int, "idle_ns": int, "utilization": float}, "gpu")
        assert 0.0 <= gpu["utilization"] <= 1.0


def test_graph_mode_busy_time_counts_whole_graph_rows():
    summary = summarize(load_trace(H200_GRAPH))
    kernel_only = summary["kernels"]["total_ns"]
    assert summary["gpu"][0]["busy_ns"] > kernel_only + 3 * 1_000_000  # three ~1.03 ms graph replays


def test_launch_verdict_thresholds():
    assert launch_verdict(20, 100, 5).launch_bound is True
    assert launch_verdict(10, 100, 5).launch_bound is False
    assert launch_verdict(10, 0, 5).launch_bound is None
    assert "15%" in launch_verdict(20, 100, 5).text

"""Scopes (windows, NVTX ranges, graphscope's measured repetitions), the steady-state launch account and
its verdict, and the per-NVTX-range table, on the real H200 traces."""

from __future__ import annotations

import json

import numpy as np
import pytest

from graphscope.analysis.nvtx_table import nvtx_table
from graphscope.analysis.scope import Scope, nvtx_scope, parse_time, scoped_rows, window_scope
from graphscope.analysis.steady import LaunchAccount
from graphscope.analysis.summary import analyze, summarize
from graphscope.analysis.verdict import steady_verdict
from graphscope.cli import main
from graphscope.core.errors import BadInputError
from graphscope.trace import load_trace
from tests.conftest import FORKJOIN, H200_GRAPH, H200_NODE, TORCH_MLP


@pytest.fixture(scope="module")
def seed():
    trace = load_trace(H200_NODE)
    return trace, analyze(trace)


def test_times_take_units():
    assert parse_time("12ms") == 12_000_000 and parse_time("3.5 us") == 3_500 and parse_time("2000") == 2000
    with pytest.raises(BadInputError, match="not a time"):
        parse_time("soon")


def test_a_scope_merges_overlapping_windows_and_tests_membership():
    scope = Scope.of("x", np.array([10, 15, 40]), np.array([20, 30, 50]))
    assert scope.start.tolist() == [10, 40] and scope.end.tolist() == [30, 50]
    assert scope.contains(np.array([5, 10, 29, 30, 45, 50])).tolist() == [False, True, True, False, True, False]


def test_nvtx_scopes_by_name_glob_and_instance(seed):
    trace, _ = seed
    assert len(nvtx_scope(trace, "eager_*")) == 3
    assert len(nvtx_scope(trace, "graph_1")) == 1
    assert nvtx_scope(trace, "eager_*#2").first == nvtx_scope(trace, "eager_1").first
    with pytest.raises(BadInputError, match="it has capture, eager_0"):
        nvtx_scope(trace, "decode")
    with pytest.raises(BadInputError, match="3 ranges"):
        nvtx_scope(trace, "eager_*#4")


def test_gpu_work_belongs_to_the_scope_of_its_launch_call(seed):
    """A graph replay's 1000 node kernels run on the GPU after graph_0's call returns: all in scope."""
    trace, analysis = seed
    rows = scoped_rows(trace, analysis.correlation, analysis.work, nvtx_scope(trace, "graph_0"))
    assert rows.gpu["kernels"].sum() == 1000 and rows.api[analysis.launches.rows].sum() == 1


def test_eager_and_graph_scopes_tell_the_two_apart(seed):
    trace, analysis = seed
    eager = summarize(trace, analysis=analysis, scope=nvtx_scope(trace, "eager_*"))
    graph = summarize(trace, analysis=analysis, scope=nvtx_scope(trace, "graph_*"))
    assert eager["kernels"]["count"] == 3000 and eager["api"]["launches"] == 3000
    assert eager["launch"]["launch_bound"] is True and "CUDA graphs should pay" in eager["launch"]["verdict"]
    assert graph["graphs"]["launches"] == 3 and graph["api"]["launches"] == 0
    verdict = graph["launch"]["verdict"]  # node tracing made each 1.03 ms replay's launch call 1.42 ms
    assert verdict.startswith("graphs in use; their launch calls took longer") and "cannot judge" in verdict
    assert graph["launch"]["launch_bound"] is None and graph["launch"]["judged"]["label"] == "graph launch cost"
    assert "no longer the bottleneck" not in verdict
    assert "node-level tracing" in graph["launch"]["verdict"]  # node-mode tracing slows the launch calls
    assert graph["scope"]["windows"] == 3


def test_a_time_window_scope(seed):
    trace, analysis = seed
    first = nvtx_scope(trace, "eager_0")
    origin = trace.span()[0]
    text = f"{(first.first - origin) / 1e6}ms:{(first.last - origin) / 1e6}ms"
    summary = summarize(trace, analysis=analysis, scope=window_scope(trace, text))
    assert 995 <= summary["api"]["launches"] <= 1000


def test_one_off_first_calls_are_named_and_left_out():
    """The torch trace: three first launches that load modules lazily dominated the whole-trace ratio."""
    summary = summarize(load_trace(TORCH_MLP))
    steady = summary["launch"]["steady_state"]
    assert summary["launch"]["overhead_ratio"] > 30  # every call counted: start-up dominates
    assert steady["one_off_calls"] >= 3 and steady["one_off_ns"] > 10_000_000
    assert steady["overhead_ratio"] < summary["launch"]["overhead_ratio"] / 10
    assert "vectorized_elementwise_kernel" in steady["one_off_kernels"]
    assert "one-off first calls" in summary["launch"]["verdict"]


def test_first_launches_that_are_not_slow_stay_in():
    summary = summarize(load_trace(FORKJOIN), scope=None)
    names = summary["launch"]["steady_state"]["one_off_kernels"]
    assert "relu" not in names and "scale" not in names  # launched often, never far slower


def test_graph_mode_trace_gets_a_graphs_verdict():
    summary = summarize(load_trace(H200_GRAPH), scope=nvtx_scope(load_trace(H200_GRAPH), "graph_*"))
    assert summary["launch"]["verdict"].startswith("graphs in use and launches are no longer the bottleneck")
    assert "node-level" not in summary["launch"]["verdict"]


def account(**changes) -> LaunchAccount:
    values = dict(
        eager_calls=0,
        eager_ns=0,
        graph_calls=0,
        graph_ns=0,
        graph_replay_ns=0,
        one_off_calls=0,
        one_off_ns=0,
        one_off_names=[],
        busy_ns=1_000_000,
        busy_all_ns=1_000_000,
        max_repeats=100,
    )
    return LaunchAccount(**{**values, **changes})


def test_steady_verdict_rules():
    assert steady_verdict(account(eager_calls=100, eager_ns=200_000)).launch_bound is True
    assert steady_verdict(account(eager_calls=100, eager_ns=100_000)).launch_bound is False
    remaining = steady_verdict(account(eager_calls=50, eager_ns=300_000, graph_calls=3, graph_ns=30_000))
    assert remaining.launch_bound is True and "capture them into the graph too" in remaining.text
    clean = steady_verdict(account(graph_calls=3, graph_ns=30_000, graph_replay_ns=900_000))
    assert clean.launch_bound is False and "no eager launches remain" in clean.text and "3.3%" in clean.text
    assert "graphs should pay" not in clean.text
    assert steady_verdict(account(busy_ns=0)).launch_bound is None


def test_nvtx_table_sets_eager_beside_graph_steps(seed):
    trace, analysis = seed
    rows = {r["name"]: r for r in nvtx_table(trace, analysis)}
    assert [n for n in rows if n.startswith(("eager", "graph"))] == [
        "eager_0",
        "eager_1",
        "eager_2",
        "graph_0",
        "graph_1",
        "graph_2",
    ]
    assert rows["eager_0"]["launch_calls"] == 1000 and rows["graph_0"]["graph_launches"] == 1
    assert rows["eager_1"]["overhead_ratio"] > 3 * rows["graph_1"]["overhead_ratio"]


def test_summary_command_scopes(capsys):
    assert main(["summary", str(H200_NODE), "--nvtx", "graph_*", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["scope"]["label"] == "3 NVTX ranges 'graph_*'"
    assert main(["summary", str(H200_NODE), "--by-nvtx"]) == 0
    assert "eager_0" in capsys.readouterr().out
    assert main(["summary", str(H200_NODE), "--range", "5ms:1ms"]) == 2
    assert "end must come after" in capsys.readouterr().err
    assert main(["summary", str(H200_NODE), "--nvtx", "nope"]) == 2


def test_a_graphscope_run_trace_is_summarised_over_its_measured_repetitions(export_copy):
    path, conn = export_copy(H200_NODE)
    for k in range(3):  # name the ranges as graphscope's runner does (this export keeps NVTX text inline)
        conn.execute("UPDATE NVTX_EVENTS SET text = ? WHERE text = ?", (f"graphscope graph rep {k}", f"graph_{k}"))
    conn.commit()
    trace = load_trace(path)
    default, whole = summarize(trace), summarize(trace, whole=True)
    assert default["scope"]["label"] == "graphscope's measured repetitions (3 NVTX ranges)"
    assert default["api"]["launches"] == 0 and default["graphs"]["launches"] == 3
    assert whole["scope"] is None and whole["api"]["launches"] > 5000
    assert main(["summary", str(path), "--whole-trace", "--json"]) == 0

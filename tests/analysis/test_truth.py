"""Numbers that add up and verdicts that name the number they judged (issue: truth of the numbers)."""

from __future__ import annotations

import json

import numpy as np

from graphscope.analysis.scope import Scope, nvtx_scope
from graphscope.analysis.summary import analyze, summarize
from graphscope.cli import main
from graphscope.text.summary import render_summary
from graphscope.trace import load_trace
from tests.conftest import DATA, H200_GRAPH, H200_NODE


def test_the_verdict_and_the_table_quote_the_same_number():
    for path in (H200_NODE, DATA / "h200_torch_mlp_node.sqlite", DATA / "h200_forkjoin_node.sqlite"):
        summary = summarize(load_trace(path))
        judged = summary["launch"]["judged"]
        assert f"{judged['label']} {judged['value']:.0%}" in summary["launch"]["verdict"]
        text = render_summary(summary)
        assert f"{judged['label']}" in text and f"{judged['value']:.3f}  (the verdict's number)" in text
        steady = summary["launch"]["steady_state"]
        assert abs(judged["value"] - steady["eager_launch_ns"] / steady["gpu_busy_ns"]) < 1e-6


def test_a_few_launch_calls_are_too_little_to_judge():
    trace = load_trace(H200_NODE)
    analysis = analyze(trace)
    calls = trace.api.start[analysis.launches.rows]
    scope = Scope.of("two calls", np.array([calls[0]]), np.array([calls[2]]))
    summary = summarize(trace, analysis=analysis, scope=scope)
    launch = summary["launch"]
    assert launch["launch_bound"] is None and launch["judged"] is None
    assert launch["verdict"].startswith("too little to judge") and "trace more steps" in launch["verdict"]


def test_verdicts_use_thousands_separators_and_singulars():
    verdict = summarize(load_trace(H200_NODE))["launch"]["verdict"]
    assert "4,001 eager launch calls" in verdict and "1,000 launch calls inside stream captures" in verdict
    assert "1 steps" not in verdict and "1 one-off first calls" not in verdict


def test_graph_scope_of_a_node_traced_file_does_not_claim_launches_are_solved():
    trace = load_trace(H200_NODE)
    graph = summarize(trace, scope=nvtx_scope(trace, "graph_*"))
    assert "no longer the bottleneck" not in graph["launch"]["verdict"]


def test_two_traces_are_compared_like_with_like_and_the_tracing_difference_is_headlined(tmp_path, capsys):
    out = tmp_path / "r.json"
    assert main(["report", str(H200_NODE), str(H200_GRAPH), "-o", str(out)]) == 0
    printed = capsys.readouterr().out.splitlines()
    data = json.loads(out.read_text())
    # neither side has steps (eager_* and graph_* each launched under half its GPU work): not a process lifetime
    assert data["a"]["scope"] == data["b"]["scope"] == "steady activity window"
    traced = data["comparison"]["verdicts"]["traced"]
    assert "graph trace mode node against graph" in traced and printed[1] == traced
    assert any("compared over each side's steady activity window" in n for n in data["notes"])


def test_kernels_a_graph_traced_side_cannot_see_are_not_traced_not_removed(tmp_path):
    out = tmp_path / "r.json"
    args = ["report", str(H200_NODE), str(H200_GRAPH), "--a", "nvtx:graph_*", "--b", "nvtx:graph_*", "-o", str(out)]
    assert main(args) == 0
    statuses = {k["name"]: k["status"] for k in json.loads(out.read_text())["kernels"]}
    assert statuses["vec_add"] == "not traced" and "removed" not in statuses.values()


def test_step_parts_add_up_to_end_to_end(tmp_path):
    out = tmp_path / "r.json"
    assert main(["report", str(H200_NODE), "nvtx:eager_*", "nvtx:graph_*", "-o", str(out)]) == 0
    from graphscope.report.sources import sides_for

    for side in sides_for([str(H200_NODE), "nvtx:eager_*", "nvtx:graph_*"], None, None, None):
        steps = side.steps
        parts = steps["gpu_busy_ns"] + steps["idle_host_wait_ns"] + steps["idle_other_ns"]
        assert np.array_equal(parts, steps["wall_ns"])
    b = json.loads(out.read_text())["b"]["per_step"]
    assert b["idle_host_wait_ns"]["median"] > 1_000_000  # the GPU idles during the 1.42 ms graph launch call

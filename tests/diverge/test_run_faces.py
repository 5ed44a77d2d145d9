"""`graphscope run` when the graph's outputs differ: the verdict and the text name the node the search
found (or point to `graphscope diverge`), and run --json carries the answer with every node's launches
(the Run panel shows them)."""

from __future__ import annotations

import json

from graphscope.text.diverge import divergence_lines
from graphscope.text.run import render_run
from graphscope.workload.child.diverge_search import diverge
from tests.diverge.test_search_sim import faulty
from tests.workload.fakes import fake_report


def test_a_run_whose_outputs_differ_names_the_node_and_its_frozen_argument(tmp_path) -> None:
    live, drv = faulty("scalar", 3)
    report = fake_report(tmp_path / "pipeline.py", match=False)
    report.divergence = diverge(live, drv)
    data = json.loads(json.dumps(report.to_json(), default=str))
    assert "the first node that differs is affine (#3 in capture order" in data["verdict"]
    assert "`graphscope diverge pipeline.py` shows its captured launch beside eager's" in data["verdict"]
    assert data["divergence"]["position"] == 3 and "eager_launches" not in data["divergence"]
    assert len(data["divergence"]["graph_launches"]) == 6  # the Run panel shows any node's two launches
    text = render_run(data)
    assert "  first node that differs: affine (#3 in capture order" in text
    assert "    argument 3 (scalar, offset 24): captured 7 (0x40e00000), eager 1.3 (0x3fa66666)" in text


def test_without_an_answer_the_verdict_points_to_the_command(tmp_path) -> None:
    report = fake_report(tmp_path / "w.py", match=False)
    assert "`graphscope diverge w.py` searches the graph" in report.verdict()
    report.divergence = {"error": "the workload faulted on the GPU"}
    assert divergence_lines(report.divergence) == [
        "  where the graph departs: the search failed (the workload faulted on the GPU)"
    ]
    assert fake_report(tmp_path / "w.py").to_json()["divergence"] is None

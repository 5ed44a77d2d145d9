from __future__ import annotations

import json

from graphscope.text.run import render_run
from tests.workload.fakes import fake_report


def test_a_launch_bound_run_says_the_graph_pays(tmp_path):
    report = fake_report(tmp_path / "seed.py")
    data = json.loads(json.dumps(report.to_json()))
    assert 5.0 < data["speedup"]["wall_ns"]["value"] < 5.3 and data["speedup"]["wall_ns"]["significant"]
    assert data["verdict"].startswith("the graph pays") and data["outputs_match"] is True
    text = render_run(data)
    assert "graph pays" in text and "match exactly" in text and "upload" in text and "NVIDIA H200" in text


def test_a_small_gain_and_no_difference_are_called_what_they_are(tmp_path):
    small = fake_report(tmp_path / "w.py", eager_ms=1.10, graph_ms=1.0).verdict()
    assert "by little" in small and "rarely worth" in small
    same = fake_report(tmp_path / "w.py", eager_ms=1.0, graph_ms=1.0).verdict()
    assert same.startswith("no significant difference")


def test_mismatching_outputs_are_flagged(tmp_path):
    data = fake_report(tmp_path / "w.py", match=False).to_json()
    assert data["outputs_match"] is False and "DIFFER" in render_run(data)


def test_mismatching_outputs_come_first_in_the_verdict_and_the_graph_never_pays(tmp_path):
    data = fake_report(tmp_path / "w.py", match=False).to_json()  # 5x faster, but wrong
    assert data["verdict"].startswith("the outputs differ between eager and graph")
    assert "pays" not in data["verdict"]

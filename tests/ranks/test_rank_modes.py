"""Rank jobs show each rank's per-step graph mode (analysis/anatomy.py via ranks/modes.py): a rank whose
graph launches were removed (a fallback to eager) is named in the text and the report, a rank that
changes mode in one step is named with the step, and the modes agree with a plain JSON count of
`cudaGraphLaunch` calls per step."""

from __future__ import annotations

import json

import pytest

from graphscope.cli import main
from graphscope.ranks import job as rank_job
from graphscope.ranks.modes import usual_mode
from graphscope.text.ranks import render_ranks
from tests.ranks.helpers import graph_ranks, serial_job


def _launches_per_step(path):
    """Per ProfilerStep, the cudaGraphLaunch calls inside it, by plain JSON."""
    events = json.loads(path.read_text())["traceEvents"]
    steps = sorted((e for e in events if e["name"].startswith("ProfilerStep#")), key=lambda e: e["ts"])
    calls = [e["ts"] for e in events if e["name"] == "cudaGraphLaunch"]
    return [sum(s["ts"] <= t < s["ts"] + s["dur"] for t in calls) for s in steps]


@pytest.fixture
def job_set(tmp_path):
    folder = tmp_path / "job"
    paths = graph_ranks(folder, world=4, eager={2: None, 1: {3}})
    return folder, paths


def test_a_rank_falling_back_to_eager_is_named_and_matches_a_plain_count(job_set):
    folder, paths = job_set
    job = serial_job([folder])
    modes = job["graph_modes"]
    plain = {rank: _launches_per_step(path) for rank, path in enumerate(paths)}
    assert plain[2] == [0] * 6 and plain[1] == [1, 1, 1, 0, 1, 1] and plain[0] == [1] * 6  # the set is as built
    for r in job["ranks"]:  # each rank's step modes: eager exactly where the plain count finds no graph launch
        expected = {"full graph": sum(n > 0 for n in plain[r["rank"]]), "eager": sum(n == 0 for n in plain[r["rank"]])}
        assert r["step_modes"] == {k: v for k, v in expected.items() if v}
    assert modes["usual"] == "full graph" and modes["by_mode"] == {"full graph": 3, "eager": 1}
    assert [(d["rank"], d["mode"]) for d in modes["differ"]] == [(2, "eager")]
    changing = {c["rank"]: c for c in modes["changing"]}
    assert set(changing) == {1} and changing[1]["count"] == 2  # into eager at step 3, back at step 4
    first = changing[1]["changes"][0]
    assert [first[k] for k in ("step", "from", "to", "returns")] == ["ProfilerStep#3", "full graph", "eager", True]
    text = render_ranks(job)
    assert "graph modes: usually full graph (3 of all 4 ranks)" in text
    assert "rank 2 runs eager, unlike the others (6 eager steps)" in text
    assert "rank 1 changes mode in 2 steps (ProfilerStep#3: full graph to eager and back" in text


def test_the_report_names_the_rank_and_agreeing_ranks_say_so(job_set, tmp_path, monkeypatch):
    folder, _ = job_set
    monkeypatch.setattr(rank_job, "analyse_job", lambda items, *rest, **kw: rank_job.analyse_serially(items))
    assert main(["report", str(folder), "-o", str(tmp_path / "r.md")]) == 0
    assert "rank 2 runs eager, unlike the others" in (tmp_path / "r.md").read_text()
    same = graph_ranks(tmp_path / "same", world=3, eager={})
    job = serial_job([same[0].parent])
    assert job["graph_modes"]["differ"] == [] and job["graph_modes"]["changing"] == []
    assert "graph modes: full graph in every step of all 3 ranks" in render_ranks(job)


def test_usual_mode_leaves_idle_steps_aside_and_breaks_ties_in_order():
    assert usual_mode({"no GPU work": 9, "eager": 1}) == "eager"
    assert usual_mode({"eager": 2, "full graph": 2}) == "full graph"
    assert usual_mode({"no GPU work": 3}) is None

"""In the graph vs alone: each knob's candidates timed both ways, the rankings compared, the regret of
trusting the alone winner measured in the graph and confirmed with fresh captures."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from graphscope.core.launch_config import LaunchConfig
from graphscope.store.session_db import SessionStore
from graphscope.text.tune import render_tuning
from graphscope.tune.isolation import kendall_tau
from graphscope.tune.measure import RecordedMeasurer
from graphscope.tune.session import tune
from graphscope.tune.space import knobs_for
from tests.tune.fakes import ModelSession


def test_an_alone_winner_that_loses_in_the_graph_is_priced_in_the_graph(controller, tmp_path):
    result = controller.sweep("brute", controller.knobs("scale"))
    (scale,) = result.isolation
    assert scale.blocks[scale.graph_winner] == (128, 1, 1) and scale.blocks[scale.alone_winner] == (64, 1, 1)
    # in the graph, anything but 128 costs 20 us, x1.2 for an edited graph: the regret is 24 us in place
    assert scale.regret_ns() == pytest.approx(24_000, rel=0.02)
    assert scale.step_ns == pytest.approx(128_000 * 1.2, rel=0.01)  # the baseline: +20 us scale, +8 us tile
    assert result.to_json()["summary"]["isolation"][0]["regret_share"] == pytest.approx(24 / 153.6, rel=0.03)
    cost, significant = scale.fresh_regret()
    assert cost == pytest.approx(20_000, rel=0.02) and significant
    assert scale.tau is not None and -1 <= scale.tau < 1
    verdict = scale.verdict()
    assert "alone 64 wins, in the graph 128" in verdict and "(15.6% of the step)" in verdict
    assert "costs 24 us a step in place" in verdict and "with fresh captures (significant)" in verdict
    data = result.to_json()["summary"]["isolation"][0]
    assert data["graph_winner"] == [128, 1, 1] and data["alone_winner"] == [64, 1, 1]
    assert data["fresh_regret_significant"] is True and len(data["candidates"]) == len(scale.blocks)
    ok = [c for c in data["candidates"] if c["in_graph"]["status"] == "ok"]
    assert len(ok) == 4 and all(c["alone"]["how"] == "alone" and c["alone"]["median_ns"] for c in ok)
    (hung,) = [c for c in data["candidates"] if c["in_graph"]["status"] == "timeout"]  # 32 hangs in the graph
    assert hung["block"] == [32, 1, 1] and hung["alone"]["status"] == "invalid" and "median_ns" not in hung["alone"]
    stored = SessionStore(tmp_path / "s.sqlite").tuning(result.tuning_id)
    assert json.loads(stored["summary"])["isolation"][0]["verdict"] == verdict
    assert "In the graph vs alone" in render_tuning(result.to_json()) and verdict in render_tuning(result.to_json())


def test_agreeing_rankings_need_no_fresh_captures(controller):
    result = controller.sweep("brute", controller.knobs("relu"))
    (relu,) = result.isolation
    assert relu.graph_winner == relu.alone_winner and relu.regret_ns() == 0 and relu.fresh == {}
    assert "pick the same block 256" in relu.verdict()


def test_the_search_trials_are_reused_and_faulting_candidates_are_not_run_alone(controller):
    requests_before = len(ModelSession.started)
    result = controller.sweep("brute", controller.knobs("transpose"))
    (transpose,) = result.isolation
    faulted = [b for b, t in zip(transpose.blocks, transpose.in_graph) if t.status == "fault"]
    assert faulted and all(transpose.alone[transpose.blocks.index(b)].status == "invalid" for b in faulted)
    assert all(t in result.trials or t is result.baseline for t in transpose.in_graph)  # no new in-graph trials
    assert len(ModelSession.started) - requests_before == len(faulted)  # one restart per fault, none for alone
    # every 32-wide block works and costs the same in the graph: whichever wins alone, nothing is lost
    assert "within noise" in transpose.verdict() and transpose.fresh == {}


def test_a_sweep_without_alone_times_nothing_alone(controller):
    result = controller.sweep("brute", controller.knobs("relu"), alone=False)
    assert result.isolation == [] and "alone" not in controller.session.requests


def test_descent_measures_the_candidates_it_did_not_try_from_the_baseline():
    """Descent tries the second knob from the first knob's winner; from the baseline those are new."""
    sites = ModelSession.SITES[:2]
    knobs = knobs_for(sites)

    def model(config: LaunchConfig) -> tuple[float, bool]:
        scale = config.block_for("scale", 0, (256, 1, 1))[0]
        relu = config.block_for("relu", 0, (256, 1, 1))[0]
        return 100_000 + 20_000 * (scale != 128) + 5_000 * (relu != 64), True

    measurer = RecordedMeasurer(model, noise=0.002, alone_model=lambda key, block: 1000.0 + block[0])
    result = tune(Path("w.py"), knobs, measurer, "descent", isolate=True)
    by_knob = {k.knob: k for k in result.isolation}
    assert set(by_knob) == {"relu", "scale"}
    for isolation in by_knob.values():
        assert all(t.config.blocks.keys() <= {isolation.knob} for t in isolation.in_graph)
        assert isolation.blocks[isolation.alone_winner][0] == min(b[0] for b in isolation.blocks)
    assert by_knob["scale"].blocks[by_knob["scale"].graph_winner] == (128, 1, 1)


def test_kendall_tau():
    assert kendall_tau([1, 2, 3, 4], [10, 20, 30, 40])[0] == pytest.approx(1.0)
    assert kendall_tau([1, 2, 3, 4], [40, 30, 20, 10])[0] == pytest.approx(-1.0)
    assert kendall_tau([1.0], [2.0]) == (None, None)
    assert kendall_tau([1, 2, 3], [5, 5, 5]) == (None, None)  # no spread on one side: undefined


def test_the_tuning_report_shows_both_rankings_and_the_verdict(controller, tmp_path):
    from graphscope.report.formats import write_report
    from graphscope.report.tune_report import tune_report

    result = controller.sweep("brute", controller.knobs("scale") + controller.knobs("relu"))
    report, charts = tune_report(SessionStore(tmp_path / "s.sqlite").tuning(result.tuning_id))
    tables = {t["title"]: t for t in report["tables"]}
    verdicts = tables["In the graph vs alone"]["rows"]
    assert [row[0] for row in verdicts] == ["scale", "relu"]
    scale = verdicts[0]
    assert scale[3] == "128" and scale[4] == "64" and scale[-1] == result.isolation[0].verdict()
    candidates = tables["Candidates in the graph (whole step) and alone (the kernel by itself)"]["rows"]
    assert len(candidates) == sum(len(k.blocks) for k in result.isolation)
    assert candidates[0][:4] == ("scale", "32", "-", "-") and candidates[0][4].startswith("timeout")
    assert charts["alone"].count("<circle") >= 2 * 4 + 2  # every compared candidate of both, and two rings
    fresh = [(r["node"], r["speedup"]) for r in report["tuning"]["trials"] if r["how"] == "fresh-capture"]
    # in the graph vs alone confirms its two winners first, then the session its baseline and best
    assert [n for n, _ in fresh] == ["best, fresh", "fresh: scale=64", "baseline, fresh", "best, fresh"]
    assert fresh[2][1] == 1.0 and fresh[3][1] == pytest.approx(128 / 108, rel=0.02)
    write_report(report, tmp_path / "t.html", charts)
    write_report(report, tmp_path / "t.md", charts)
    assert (
        "In the graph vs alone" in (tmp_path / "t.html").read_text()
        and result.isolation[1].verdict() in (tmp_path / "t.md").read_text()
    )

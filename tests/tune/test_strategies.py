"""Strategies against a recorded-results runner: no GPU needed."""

from __future__ import annotations

from pathlib import Path

import pytest

from graphscope.core.errors import BadInputError
from graphscope.core.launch_config import LaunchConfig, Site
from graphscope.store.session_db import SessionStore
from graphscope.tune.measure import RecordedMeasurer
from graphscope.tune.session import tune
from graphscope.tune.space import knobs_for

SITES = [Site("add", i, "vec_add", (16384, 1, 1), (256, 1, 1), (64, 1, 1), max_threads=1024) for i in range(3)] + [
    Site("relu", 0, "relu", (4096, 1, 1), (256, 1, 1), (16, 1, 1), max_threads=512),
    Site("norm", 0, "layernorm", (64, 1, 1), (32, 1, 1), (2, 1, 1), max_threads=1024),
]
BEST = {"add": 128, "relu": 64, "norm": 32}


def separable(config: LaunchConfig) -> tuple[float, bool]:
    """A landscape where each knob has its own best block; cost grows with the distance (in octaves)."""
    total = 1_000_000.0
    for name, best in BEST.items():
        block = config.blocks.get(name, (256 if name != "norm" else 32, 1, 1))[0]
        total += 40_000 * abs(block.bit_length() - best.bit_length())
    return total, True


def test_knobs_group_sites_by_name_and_respect_kernel_limits():
    knobs = {k.key: k for k in knobs_for(SITES)}
    assert set(knobs) == {"add", "norm", "relu"} and len(knobs["add"].sites) == 3
    assert knobs["relu"].candidates[-1] == (512, 1, 1) and knobs["add"].candidates[-1] == (1024, 1, 1)
    (one,) = knobs_for(SITES, only="add#1")
    assert [s.ordinal for s in one.sites] == [1]
    with pytest.raises(BadInputError, match="no launch site named 'gelu'"):
        knobs_for(SITES, only="gelu")
    with pytest.raises(BadInputError, match="exceed"):
        knobs_for(SITES, only="relu", blocks=[1024])


def test_descent_finds_every_knobs_best_block():
    result = tune(Path("w.py"), knobs_for(SITES), RecordedMeasurer(separable), "descent")
    assert {k: v[0] for k, v in result.best.config.blocks.items()} == {"add": 128, "relu": 64}
    assert result.adopt and "adopt" in result.conclusion()


def test_brute_force_combines_per_knob_winners():
    result = tune(Path("w.py"), knobs_for(SITES), RecordedMeasurer(separable), "brute")
    assert result.best.config.blocks == {"add": (128, 1, 1), "relu": (64, 1, 1)}
    assert result.trials[-1].knob is None  # the combined trial


def test_a_faster_config_with_wrong_outputs_is_reported_not_adopted():
    def landscape(config):
        block = config.blocks.get("add", (256, 1, 1))[0]
        return (500_000.0, False) if block == 64 else (1_000_000.0 - 1000 * (block == 128) * 100, True)

    result = tune(Path("w.py"), knobs_for(SITES, only="add"), RecordedMeasurer(landscape), "brute")
    wrong = [t for t in result.trials if t.block == (64, 1, 1)]
    assert wrong and wrong[0].status == "mismatch"
    assert result.best.config.blocks == {"add": (128, 1, 1)}


def test_a_flat_landscape_is_called_no_significant_difference():
    result = tune(
        Path("w.py"), knobs_for(SITES, only="add"), RecordedMeasurer(lambda c: (1e6, True), noise=0.02), "descent"
    )
    assert not result.improved and result.best is result.baseline
    assert result.conclusion().startswith("no significant difference")
    assert result.confirmed_best is None


def test_winners_are_confirmed_with_fresh_captures_and_the_in_place_penalty_is_shown():
    measurer = RecordedMeasurer(separable, in_place_penalty=1.35)
    result = tune(Path("w.py"), knobs_for(SITES, only="add"), measurer, "brute", reps=40)
    assert result.confirmed_best.how == "fresh-capture" and result.confirmed_baseline.how == "fresh-capture"
    assert 1.3 < result.in_place_penalty() < 1.4
    summary = result.to_json()["summary"]
    assert summary["best_fresh_ns"] < summary["best_in_place_ns"]


def test_tuning_history_is_stored(tmp_path):
    result = tune(tmp_path / "w.py", knobs_for(SITES), RecordedMeasurer(separable), "descent")
    store = SessionStore(tmp_path / "s.sqlite")
    tuning_id = store.record_tuning(result.to_json())
    trials = store.trials(tuning_id)
    assert len(trials) == len(result.trials) + 4  # + baseline, its drift check and the two confirmations
    assert trials[-3]["how"] == "drift-check" and result.drift() is not None
    assert {t["how"] for t in trials} == {"in-place", "drift-check", "fresh-capture"}
    store.close()


def test_a_significant_but_tiny_gain_is_not_adopted():
    def tiny(config):
        return (1_000_000.0 - 3000.0 * (config.blocks.get("add", (256, 1, 1))[0] == 128), True)

    result = tune(Path("w.py"), knobs_for(SITES, only="add"), RecordedMeasurer(tiny, noise=0.0005), "brute", reps=200)
    assert result.improved and not result.adopt
    assert "negligible" in result.conclusion()


def test_the_tuning_table_labels_baseline_trials_and_confirmations():
    from graphscope.text.tune import render_tuning

    result = tune(Path("w.py"), knobs_for(SITES, only="add"), RecordedMeasurer(separable), "brute")
    lines = render_tuning(result.to_json()).splitlines()
    rows = [line.split()[:2] for line in lines if line.strip().startswith(("baseline", "add="))]
    assert rows[0] == ["baseline", "in-place"] and ["add=128", "in-place"] in rows
    assert rows[-2:] == [["baseline", "fresh-capture"], ["add=128", "fresh-capture"]]
    assert lines[-1].startswith("Conclusion: adopt")


def coupled(config: LaunchConfig) -> tuple[float, bool]:
    """Two kernels that share the GPU: moving either alone is slower, moving both to 512 is the fastest
    (the landscape one-knob-at-a-time searches cannot cross)."""
    add = config.blocks.get("add", (256, 1, 1))[0]
    relu = config.blocks.get("relu", (256, 1, 1))[0]
    if (add, relu) == (512, 512):
        return 800_000.0, True
    return 1_000_000.0 + 30_000 * ((add != 256) + (relu != 256)), True


def test_the_model_strategy_crosses_a_valley_the_one_knob_searches_cannot():
    knobs = [k for k in knobs_for(SITES) if k.key in ("add", "relu")]
    for strategy in ("brute", "descent"):
        assert not tune(Path("w.py"), knobs, RecordedMeasurer(coupled), strategy, reps=20).improved
    measurer = RecordedMeasurer(coupled)
    result = tune(Path("w.py"), knobs, measurer, "model", reps=20, budget=40)
    assert result.best.config.blocks == {"add": (512, 1, 1), "relu": (512, 1, 1)} and result.adopt
    assert len(result.trials) <= 40  # the budget, and points the sampler returned to are not measured again
    assert len({tuple(sorted(t.config.blocks.items())) for t in result.trials}) == len(result.trials)
    assert any("," in (t.knob or "") for t in result.trials)  # trials that moved both knobs at once


def test_the_model_strategy_tells_failures_to_the_sampler_and_never_adopts_them():
    def faulty(config):
        add = config.blocks.get("add", (256, 1, 1))[0]
        return (1.0, False) if add == 1024 else separable(config)

    result = tune(Path("w.py"), knobs_for(SITES), RecordedMeasurer(faulty), "model", reps=20, budget=25)
    assert result.best.config.blocks.get("add", (256, 1, 1))[0] != 1024
    assert all(t.usable or t is not result.best for t in result.trials)

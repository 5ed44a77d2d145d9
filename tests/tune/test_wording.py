"""The Tune panel's sentences (tune/wording.py), from samples whose ratio is known by construction."""

from __future__ import annotations

import numpy as np

from graphscope.core.launch_config import LaunchConfig
from graphscope.tune.measure import Trial
from graphscope.tune.wording import against_baseline, fresh_confirmation, versus_baseline

RNG = np.random.default_rng(7)


def _trial(median_ns: float, how: str = "in-place", status: str = "ok", reason: str = "") -> Trial:
    samples = (median_ns * (1 + 0.002 * RNG.standard_normal(40))).tolist() if status == "ok" else []
    return Trial(LaunchConfig(), how, samples, status=status, reason=reason)


def test_a_faster_trial_is_worded_with_its_speed_up_and_interval():
    baseline, faster = _trial(10_000), _trial(8_000)  # 1.25x by construction
    text = against_baseline(faster, baseline)
    ratio = np.median(baseline.samples) / np.median(faster.samples)  # the speed-up is a ratio of medians
    assert abs(ratio - 1.25) < 0.01 and text.startswith(f"{ratio:.3f}x the baseline's speed (")
    assert text.endswith(", in place")
    assert versus_baseline(faster, baseline) == text.split("x")[0] + "x"


def test_the_same_speed_is_no_significant_difference():
    baseline = _trial(10_000)
    same = Trial(LaunchConfig(), "in-place", list(baseline.samples))
    assert against_baseline(same, baseline).startswith("no significant difference from the baseline (1.000x")


def test_a_failed_trial_says_why_and_has_no_speed_up():
    baseline, failed = _trial(10_000), _trial(0, status="fault", reason="illegal address")
    assert against_baseline(failed, baseline) == "fault: illegal address"
    assert versus_baseline(failed, baseline) == "" and versus_baseline(baseline, baseline) == ""
    assert versus_baseline(_trial(9_000, how="alone"), baseline) == ""  # alone: not comparable in the graph


def test_fresh_captures_give_the_speed_up_and_the_in_place_penalty():
    in_place, fresh_baseline, fresh_best = _trial(12_000), _trial(10_000), _trial(8_000)
    text = fresh_confirmation(fresh_baseline, fresh_best, in_place)
    ratio = np.median(fresh_baseline.samples) / np.median(fresh_best.samples)
    assert text.startswith(f"fresh captures: best is {ratio:.3f}x the baseline (significant)")
    assert text.endswith("in-place replay of the baseline was 1.20x its fresh replay")
    failed = _trial(0, status="fault", reason="capture failed")
    assert fresh_confirmation(failed, fresh_best, in_place) == "a fresh capture failed: capture failed"

"""The Tune panel's sentences about one measurement, worded beside the tuning they judge (no Qt).

The significance rule is core/rules.py's (a 95% interval of the ratio of medians that excludes 1);
the whole session's conclusion is `TuningResult.conclusion` (tune/session.py).
"""

from __future__ import annotations

from graphscope.core.stats import speedup
from graphscope.tune.measure import Trial


def against_baseline(trial: Trial, baseline: Trial) -> str:
    """One trial measured in place, against the session's baseline: its speed-up and interval, or that
    it differs insignificantly, or why it could not be measured."""
    if not trial.usable:
        return f"{trial.status}: {trial.reason}"
    ratio = speedup(baseline.samples, trial.samples)
    if not ratio.significant:
        return f"no significant difference from the baseline ({ratio.value:.3f}x, {ratio.low:.3f}-{ratio.high:.3f})"
    return f"{ratio.value:.3f}x the baseline's speed ({ratio.low:.3f}-{ratio.high:.3f}), in place"


def fresh_confirmation(fresh_baseline: Trial, fresh_best: Trial, in_place_baseline: Trial) -> str:
    """Baseline and best captured afresh: the best's speed-up and whether it is significant, and how much
    slower the baseline replayed in place than freshly captured."""
    if not (fresh_baseline.usable and fresh_best.usable):
        return "a fresh capture failed: " + (fresh_baseline.reason or fresh_best.reason)
    ratio = speedup(fresh_baseline.samples, fresh_best.samples)
    penalty = in_place_baseline.stats.median / fresh_baseline.stats.median
    verdict = "significant" if ratio.significant else "not significant"
    return (
        f"fresh captures: best is {ratio.value:.3f}x the baseline ({verdict}); in-place replay "
        f"of the baseline was {penalty:.2f}x its fresh replay"
    )


def versus_baseline(trial: Trial, baseline: Trial | None) -> str:
    """The history table's speed-up cell: '1.042x' for an in-graph trial, '' for the baseline itself,
    a trial without samples or one timed alone (not comparable with in-graph replays)."""
    if not trial.samples or baseline is None or trial is baseline or trial.how == "alone":
        return ""
    return f"{speedup(baseline.samples, trial.samples).value:.3f}x"


def pdl_confirmation(fresh_baseline: Trial, fresh_best: Trial) -> str:
    """PDL tuning's fresh captures of baseline and best: the best's speed-up and whether it is significant."""
    ratio = speedup(fresh_baseline.samples, fresh_best.samples)
    verdict = "significant" if ratio.significant else "not significant"
    return f"captured afresh, the best is {ratio.value:.3f}x the baseline ({verdict})"

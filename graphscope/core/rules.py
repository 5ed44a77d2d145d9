"""The rules of thumb graphscope judges by (the seeds' numbers), and the one wording of a gain.

- LAUNCH_BOUND_RATIO: CPU time inside launch calls above about 15% of GPU busy time means the
  pipeline is launch-bound, so CUDA graphs should pay; below it, shorten the kernels instead.
- WORTHWHILE_GAIN: a graph (or a tuned configuration) that saves less than about 20% of the time per
  step is rarely worth its maintenance.
- NEGLIGIBLE_GAIN: a confirmed tuning gain under 1% is real but not worth changing a launch for.
- A difference is significant when the 95% interval of the ratio of medians excludes 1
  (`core.stats.Ratio.significant`); otherwise "no significant difference".
"""

from __future__ import annotations

LAUNCH_BOUND_RATIO = 0.15
WORTHWHILE_GAIN = 0.20
NEGLIGIBLE_GAIN = 0.01

WORTH_IT, SMALL, SLOWER = "worth it", "real but small", "slower"


def judge_gain(speedup: float) -> tuple[str, str]:
    """A significant speed-up (old time / new time) against the 20% rule: (WORTH_IT | SMALL | SLOWER,
    the clause that says why, e.g. "86% less time per step, above the ~20% rule")."""
    gain = 1 - 1 / speedup
    if gain >= WORTHWHILE_GAIN:
        return WORTH_IT, f"{gain:.0%} less time per step, above the ~{WORTHWHILE_GAIN:.0%} rule"
    if gain > 0:
        return SMALL, f"{gain:.0%} less time per step, under the ~{WORTHWHILE_GAIN:.0%} rule"
    return SLOWER, f"{-gain:.0%} more time per step"


def launch_rule(ratio: float, named: bool = False) -> str:
    """Where a launch-overhead ratio stands against the 15% rule: "above ~15%" ("above the ~15% rule")."""
    side = "above" if ratio > LAUNCH_BOUND_RATIO else "below"
    return f"{side} the ~{LAUNCH_BOUND_RATIO:.0%} rule" if named else f"{side} ~{LAUNCH_BOUND_RATIO:.0%}"

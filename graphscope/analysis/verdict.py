"""Plain verdicts from the seeds' rules of thumb.

Launch overhead above about 15% of GPU busy time means CUDA graphs pay; below that, cut kernel time
instead. A graph that gains less than about 20% end to end is rarely worth its maintenance.
"""

from __future__ import annotations

from dataclasses import dataclass

LAUNCH_BOUND_RATIO = 0.15
WORTHWHILE_GAIN = 0.20


@dataclass(frozen=True)
class Verdict:
    launch_bound: bool | None  # None: not enough data to say
    text: str


def launch_verdict(launch_ns: int, busy_ns: int, launches: int) -> Verdict:
    """Is the trace launch-bound? `launch_ns` is CPU time inside launch calls, `busy_ns` GPU busy time."""
    if busy_ns <= 0 or launches == 0:
        return Verdict(None, "no verdict: the trace has no launch calls or no GPU work to compare them with")
    ratio = launch_ns / busy_ns
    share = f"CPU time in {launches} launch calls is {ratio:.0%} of GPU busy time"
    if ratio > LAUNCH_BOUND_RATIO:
        return Verdict(True, f"launch-bound: {share} (above ~{LAUNCH_BOUND_RATIO:.0%}); CUDA graphs should pay")
    return Verdict(
        False,
        f"not launch-bound: {share} (below ~{LAUNCH_BOUND_RATIO:.0%}); "
        "a graph would save little, shorten the kernels instead",
    )


def gain_verdict(speedup: float, interval: tuple[float, float] | None = None) -> str:
    """Judge a measured speed-up (baseline time / new time), given its confidence interval if known."""
    if interval is not None and interval[0] <= 1.0 <= interval[1]:
        return f"no significant difference: the {speedup:.2f}x speed-up's interval includes 1"
    gain = 1.0 - 1.0 / speedup if speedup > 0 else 0.0
    if gain >= WORTHWHILE_GAIN:
        return f"worth it: {speedup:.2f}x ({gain:.0%} less time)"
    if gain > 0:
        return (
            f"marginal: {speedup:.2f}x ({gain:.0%} less time, under ~{WORTHWHILE_GAIN:.0%}); "
            "rarely worth a graph's maintenance"
        )
    return f"slower: {speedup:.2f}x ({-gain:.0%} more time)"

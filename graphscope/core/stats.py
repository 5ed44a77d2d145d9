"""Honest timing statistics: medians, spread, bootstrap confidence intervals, ratios and sample sizes."""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

CONFIDENCE = 0.95
RESAMPLES = 2000


@dataclass(frozen=True)
class SampleStats:
    """Summary of repeated timings (ns); the interval is a bootstrap interval of the median."""

    n: int
    median: float
    mean: float
    std: float
    min: float
    max: float
    q1: float
    q3: float
    ci_low: float
    ci_high: float

    def to_json(self) -> dict[str, float]:
        return asdict(self)


def median(values: np.ndarray, overwrite: bool = False) -> float:
    """`np.median` of a non-empty 1-D array without NaN, in one partition: for an even count numpy
    partitions around two ranks, which costs it several times more on a million values. `overwrite`:
    partition `values` itself (a temporary of the caller's) instead of a copy."""
    half = len(values) // 2
    if overwrite:
        values.partition(half)
    picked = values if overwrite else np.partition(values, half)
    upper = float(picked[half])
    return upper if len(values) % 2 else (float(picked[:half].max()) + upper) / 2


def median_of(values: np.ndarray | list[float]) -> float:
    """`np.median` of a 1-D array: NaN when it is empty or holds a NaN. NumPy's own asks numpy.ma whether
    its result is masked, which imports numpy.ma on first use (core/sets.py)."""
    values = np.asarray(values)
    if not len(values) or (values.dtype.kind in "fc" and np.isnan(values).any()):
        return float("nan")
    return median(values)


BOOTSTRAP_MAX = 5_000
"""Above this many samples the median's interval comes from order statistics (distribution-free and
O(n)) instead of a bootstrap, which would cost RESAMPLES x n picks for no better answer."""
Z = 1.959964


def _order_interval(values: np.ndarray) -> tuple[float, float]:
    """95% interval of the median from order statistics: ranks n/2 -+ z * sqrt(n) / 2."""
    n = len(values)
    half = Z * np.sqrt(n) / 2
    low, high = max(int(np.floor(n / 2 - half)), 0), min(int(np.ceil(n / 2 + half)), n - 1)
    picked = np.partition(values, (low, high))
    return float(picked[low]), float(picked[high])


def _bootstrap_medians(samples: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    picks = rng.integers(0, len(samples), size=(RESAMPLES, len(samples)))
    medians: np.ndarray = np.median(samples[picks], axis=1)
    return medians


def describe(samples: np.ndarray | list[float], seed: int = 0) -> SampleStats:
    """Median, mean, std, extremes, quartiles and a 95% bootstrap interval of the median."""
    values = np.asarray(samples, dtype=np.float64)
    if len(values) == 0:
        raise ValueError("no samples")
    if len(values) > BOOTSTRAP_MAX:
        ci_low, ci_high = _order_interval(values)
    else:
        medians = _bootstrap_medians(values, np.random.default_rng(seed))
        alpha = (1 - CONFIDENCE) / 2
        ci_low, ci_high = float(np.quantile(medians, alpha)), float(np.quantile(medians, 1 - alpha))
    q1, q3 = np.quantile(values, [0.25, 0.75])
    return SampleStats(
        n=len(values),
        median=float(np.median(values)),
        mean=float(values.mean()),
        std=float(values.std()),
        min=float(values.min()),
        max=float(values.max()),
        q1=float(q1),
        q3=float(q3),
        ci_low=ci_low,
        ci_high=ci_high,
    )


@dataclass(frozen=True)
class Ratio:
    """baseline median / candidate median, with a bootstrap interval (both sides resampled)."""

    value: float
    low: float
    high: float

    @property
    def significant(self) -> bool:
        """True when the interval excludes 1: the two really differ."""
        return not self.low <= 1.0 <= self.high

    def to_json(self) -> dict[str, float | bool]:
        return {"value": self.value, "low": self.low, "high": self.high, "significant": self.significant}


def comparable(baseline: np.ndarray | list[float], candidate: np.ndarray | list[float]) -> bool:
    """Can a ratio of medians be taken: samples on both sides, both medians above zero?"""
    base, cand = np.asarray(baseline, dtype=np.float64), np.asarray(candidate, dtype=np.float64)
    return bool(len(base) and len(cand) and np.median(base) > 0 and np.median(cand) > 0)


def speedup(baseline: np.ndarray | list[float], candidate: np.ndarray | list[float], seed: int = 0) -> Ratio:
    """How many times faster `candidate` is than `baseline` (ratio of medians; see `comparable`).

    Resamples whose median is 0 (a sample of 0 ns durations) hold no ratio and are left out."""
    base = np.asarray(baseline, dtype=np.float64)
    cand = np.asarray(candidate, dtype=np.float64)
    if not comparable(base, cand):
        raise ValueError("a ratio of medians needs samples on both sides and medians above zero")
    if max(len(base), len(cand)) > BOOTSTRAP_MAX:
        return _delta_ratio(base, cand)
    rng = np.random.default_rng(seed)
    top, bottom = _bootstrap_medians(base, rng), _bootstrap_medians(cand, rng)
    usable = (top > 0) & (bottom > 0)
    ratios = top[usable] / bottom[usable]
    value = float(np.median(base) / np.median(cand))
    if not len(ratios):
        return Ratio(value, value, value)
    alpha = (1 - CONFIDENCE) / 2
    return Ratio(value, float(np.quantile(ratios, alpha)), float(np.quantile(ratios, 1 - alpha)))


def _delta_ratio(base: np.ndarray, cand: np.ndarray) -> Ratio:
    """Ratio of medians with a delta-method interval on the log scale, each median's standard error
    read off its order-statistic interval (large samples)."""
    value = float(np.median(base) / np.median(cand))
    spread = 0.0
    for values in (base, cand):
        low, high = _order_interval(values) if len(values) > 1 else (values[0], values[0])
        median = float(np.median(values))
        spread += ((high - low) / (2 * Z) / median) ** 2 if median > 0 else 0.0
    margin = float(np.exp(Z * np.sqrt(spread)))
    return Ratio(value, value / margin, value * margin)


def repetitions_needed(
    samples: np.ndarray | list[float], precision: float = 0.01, at_least: int = 10, at_most: int = 1000
) -> int:
    """Repetitions for the median's 95% interval to be within +-precision of it.

    Uses the median's asymptotic standard error, 1.2533 * sigma / sqrt(n), with sigma estimated
    robustly from the median absolute deviation (x 1.4826).
    """
    values = np.asarray(samples, dtype=np.float64)
    median = float(np.median(values))
    if len(values) < 3 or median <= 0:
        return at_least
    sigma = 1.4826 * float(np.median(np.abs(values - median)))
    needed = (1.96 * 1.2533 * sigma / (precision * median)) ** 2
    return int(min(max(np.ceil(needed), at_least), at_most))

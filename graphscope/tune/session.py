"""A tuning session: baseline, search, confirmation with fresh captures, and an honest conclusion."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from graphscope.core.launch_config import LaunchConfig, format_dim
from graphscope.core.progress import CancelToken, ProgressCallback, no_progress
from graphscope.core.rules import NEGLIGIBLE_GAIN
from graphscope.core.stats import repetitions_needed, speedup
from graphscope.tune.isolation import KnobIsolation, compare_knob
from graphscope.tune.measure import STATUSES, Measurer, Trial, signature
from graphscope.tune.space import Knob
from graphscope.tune.strategies import STRATEGIES

PRECISION = 0.01  # repetitions are chosen so the median's interval is within +-1%
MAX_REPS = 200
TUNING_FORMAT = "graphscope-tuning/1"
"""The tuning session's JSON (docs/json.md): `tune --json`, the report's `tuning.session`."""


@dataclass
class TuningResult:
    workload: Path
    strategy: str
    knobs: list[Knob]
    reps: int
    baseline: Trial  # in place, every tunable node set to its baseline block
    best: Trial
    trials: list[Trial]
    confirmed_baseline: Trial | None = None  # fresh capture
    confirmed_best: Trial | None = None  # fresh capture
    baseline_again: Trial | None = None  # in place after the search: how far the machine drifted meanwhile
    restarts: list[str] = field(default_factory=list)  # why the child was restarted during the sweep
    capture: dict[str, int] = field(default_factory=dict)
    started: float = 0.0
    finished: float = 0.0
    tuning_id: int | None = None  # its record in the session database, once stored
    isolation: list[KnobIsolation] = field(default_factory=list)  # in the graph vs alone, per knob
    isolation_trials: list[Trial] = field(default_factory=list)  # what it measured in the graph, in order

    @property
    def improved(self) -> bool:
        return self.best is not self.baseline

    def failures(self) -> str:
        """'2 faulted, 1 timed out' for the trials that could not be measured ('' when all could)."""
        words = {
            "fault": "faulted",
            "timeout": "timed out",
            "invalid": "could not be launched",
            "mismatch": "changed outputs",
            "sanitizer": "failed compute-sanitizer",
        }
        counts = {status: sum(t.status == status for t in self.trials) for status in words}
        return ", ".join(f"{n} {words[status]}" for status, n in counts.items() if n)

    def conclusion(self) -> str:
        failed = self.failures()
        text = self._conclusion()
        return f"{text} ({failed}: recorded, never adopted)" if failed else text

    def _conclusion(self) -> str:
        if not self.improved:
            return (
                "no significant difference: no configuration beat the baseline with a 95% interval that "
                "excludes 1; keep the current block sizes"
            )
        if self.confirmed_best is None or self.confirmed_baseline is None:
            return "faster in place; not confirmed with a fresh capture"
        fresh = speedup(self.confirmed_baseline.samples, self.confirmed_best.samples)
        in_place = speedup(self.baseline.samples, self.best.samples)
        if not fresh.significant:
            return (
                f"in place {in_place.value:.3f}x faster, but with fresh captures the difference is not "
                f"significant ({fresh.value:.3f}x, interval {fresh.low:.3f}-{fresh.high:.3f}): not adopted"
            )
        if fresh.value < 1:
            return f"in place it looked faster, but freshly captured it is slower ({fresh.value:.3f}x): not adopted"
        if fresh.value < 1 + NEGLIGIBLE_GAIN:
            return (
                f"a real but negligible gain: {fresh.value:.3f}x with fresh captures (interval {fresh.low:.3f}-"
                f"{fresh.high:.3f}, under {NEGLIGIBLE_GAIN:.0%}): keep the current block sizes"
            )
        return (
            f"adopt: {fresh.value:.3f}x faster with fresh captures (interval {fresh.low:.3f}-{fresh.high:.3f}), "
            f"{in_place.value:.3f}x in place"
        )

    @property
    def adopt(self) -> bool:
        return self._conclusion().startswith("adopt")

    def in_place_penalty(self) -> float | None:
        """In-place replay time over fresh-capture time for the same (baseline) configuration."""
        if self.confirmed_baseline is None:
            return None
        return self.baseline.stats.median / self.confirmed_baseline.stats.median

    def drift(self) -> float | None:
        """The baseline re-measured after the search against itself before it, minus 1."""
        again = self.baseline_again
        if again is None or not again.usable or not self.baseline.usable:
            return None
        return again.stats.median / self.baseline.stats.median - 1

    def to_json(self) -> dict[str, Any]:
        trials = [self.baseline, *self.trials]  # in the order they were measured (their seq in the database)
        trials += [t for t in (self.baseline_again,) if t is not None] + self.isolation_trials
        trials += [t for t in (self.confirmed_baseline, self.confirmed_best) if t is not None]
        knobs = {
            k.key: {
                "sites": len(k.sites),
                "candidates": [list(c) for c in k.candidates],
                "baseline": list(k.baseline),
                "kernel": k.sites[0].kernel,
            }
            for k in self.knobs
        }
        return {
            "format": TUNING_FORMAT,
            "workload": str(self.workload),
            "strategy": self.strategy,
            "reps": self.reps,
            "knobs": knobs,
            "baseline": self.baseline.config.to_json(),
            "best": self.best.config.to_json(),
            "trials": [t.to_json() for t in trials],
            "capture": self.capture,
            "summary": {
                "improved": self.improved,
                "adopt": self.adopt,
                "conclusion": self.conclusion(),
                "baseline_in_place_ns": self.baseline.stats.median,
                "best_in_place_ns": self.best.stats.median,
                "baseline_fresh_ns": self.confirmed_baseline.stats.median if self.confirmed_baseline else None,
                "best_fresh_ns": self.confirmed_best.stats.median if self.confirmed_best else None,
                "in_place_penalty": self.in_place_penalty(),
                "statuses": {status: sum(t.status == status for t in self.trials) for status in STATUSES},
                "median_apply_ns": _median_apply(self.trials),
                "format": TUNING_FORMAT,  # the summary is what the session database keeps
                "baseline_drift": self.drift(),
                "restarts": list(self.restarts),
                "knobs": knobs,  # the stored session keeps what was searched
                "isolation": [k.to_json() for k in self.isolation],
            },
            "started": self.started,
            "finished": self.finished,
        }


def _median_apply(trials: list[Trial]) -> float | None:
    costs = sorted(t.apply_ns for t in trials if t.apply_ns is not None)
    return float(costs[len(costs) // 2]) if costs else None


def detour_config(knobs: list[Knob], config: LaunchConfig) -> LaunchConfig:
    """Every knob moved to another of its candidates (to put the baseline under the in-place penalty)."""
    detour = config
    for knob in knobs:
        other = next((c for c in knob.candidates if c != knob.current(config)), None)
        if other is not None:
            detour = detour.with_block(knob.key, other)
    return detour


def tune(
    workload: Path,
    knobs: list[Knob],
    measurer: Measurer,
    strategy: str = "descent",
    start: LaunchConfig | None = None,
    reps: int | None = None,
    capture: dict[str, int] | None = None,
    progress: ProgressCallback = no_progress,
    cancel: CancelToken | None = None,
    on_trial: Callable[[int, Trial], None] | None = None,
    baseline: Trial | None = None,
    budget: int | None = None,
    isolate: bool = False,
) -> TuningResult:
    """Measure the baseline in place (unless given), search, then confirm baseline and winner with fresh
    captures; with `isolate`, each knob's candidates are also timed alone and the rankings compared
    (tune/isolation.py). `on_trial(seq, trial)` hears of every trial as it is measured (seq 0 is the
    baseline)."""
    started = time.time()
    baseline_config = start or LaunchConfig(workload=workload.name)
    record = on_trial or (lambda seq, trial: None)
    if baseline is None:
        progress(0.0, "measuring the baseline")
        detour = detour_config(knobs, baseline_config)
        probe = measurer.baseline(baseline_config, reps or 30, detour)
        chosen = reps or min(max(repetitions_needed(probe.samples, PRECISION), 30), MAX_REPS)
        baseline = measurer.baseline(baseline_config, chosen) if chosen != len(probe.samples) else probe
    chosen = reps or len(baseline.samples)
    record(0, baseline)
    total = sum(len(k.candidates) for k in knobs) or 1
    done = [0]

    def measure(config: LaunchConfig, knob: str | None) -> Trial:
        if cancel is not None:
            cancel.check()
        done[0] += 1
        moved = [k for k in (knob or "").split(",") if k in config.blocks]
        label = ", ".join(f"{k}={format_dim(config.blocks[k])}" for k in moved) or "the winners together"
        progress(min(0.05 + 0.8 * done[0] / total, 0.85), f"trial {done[0]}: {label}")
        trial = measurer.measure(config, chosen)
        trial.knob = knob
        trial.block = config.blocks.get(knob) if knob and "," not in knob else None
        record(done[0], trial)
        return trial

    options = {"budget": budget} if strategy == "model" else {}
    search = STRATEGIES[strategy](knobs, baseline, measure, **options)
    result = TuningResult(
        workload, strategy, knobs, chosen, baseline, search.best, search.trials, capture=capture or {}, started=started
    )
    progress(0.88, "measuring the baseline again (the machine's drift over the sweep)")
    result.baseline_again = measurer.measure(baseline.config, chosen)
    result.baseline_again.how = "drift-check"
    record(done[0] + 1, result.baseline_again)
    if isolate:  # on the graph the search edited, before the confirmations re-capture it
        done[0] = _isolate(result, measurer, progress, record, done[0] + 2)
    if result.improved:
        progress(0.9, "confirming with fresh captures")
        result.confirmed_baseline = measurer.confirm(baseline.config, chosen)
        record(done[0] + 2, result.confirmed_baseline)
        result.confirmed_best = measurer.confirm(search.best.config, chosen)
        record(done[0] + 3, result.confirmed_best)
    result.finished = time.time()
    progress(1.0, result.conclusion())
    return result


def _isolate(
    result: TuningResult, measurer: Measurer, progress: ProgressCallback, record: Callable[[int, Trial], None], seq: int
) -> int:
    """Each knob's candidates in the graph (reusing the search's trials) and alone, from the baseline;
    returns the sequence number before the next trial's."""
    base = result.baseline.config
    measured = {signature(t.config): t for t in [result.baseline, *result.trials] if t.how == "in-place"}
    counter = [seq]

    def kept(trial: Trial) -> Trial:
        record(counter[0], trial)
        result.isolation_trials.append(trial)
        counter[0] += 1
        return trial

    def in_place(config: LaunchConfig) -> Trial:
        return kept(measurer.measure(config, result.reps))

    def confirm(config: LaunchConfig) -> Trial:
        return kept(measurer.confirm(config, result.reps))

    for number, knob in enumerate(result.knobs):
        measured.setdefault(signature(base.with_block(knob.key, knob.current(base))), result.baseline)
        progress(0.92 + 0.07 * number / len(result.knobs), f"{knob.key}: its candidates in the graph and alone")
        step_ns = result.baseline.stats.median
        compared = compare_knob(knob, base, step_ns, measured, in_place, measurer.alone, confirm, result.reps)
        result.isolation.append(compared)
    return counter[0] - 2

"""Search strategies over knobs: one-at-a-time brute force, and node-by-node coordinate descent.

A candidate replaces the current best only when it is faster with a 95% interval of the speed-up
that excludes 1; a candidate whose outputs differ from the eager reference is reported, never adopted.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from graphscope.core.launch_config import LaunchConfig
from graphscope.tune.measure import Trial
from graphscope.tune.space import Knob

Measure = Callable[[LaunchConfig, str | None], Trial]  # config, knob -> trial


@dataclass
class Search:
    trials: list[Trial] = field(default_factory=list)
    best: Trial | None = None

    def record(self, trial: Trial) -> Trial:
        self.trials.append(trial)
        return trial


def brute_force(knobs: list[Knob], baseline: Trial, measure: Measure) -> Search:
    """Every candidate of every knob, each against the baseline; then the per-knob winners together."""
    search = Search(best=baseline)
    winners = LaunchConfig(dict(baseline.config.blocks), baseline.config.workload)
    for knob in knobs:
        knob_best = baseline
        for block in knob.candidates:
            if block == knob.current(baseline.config):
                continue
            trial = search.record(measure(baseline.config.with_block(knob.key, block), knob.key))
            if trial.beats(knob_best):
                knob_best = trial
        if knob_best is not baseline:
            winners = winners.with_block(knob.key, knob_best.config.blocks[knob.key])
        if knob_best is not baseline and knob_best.beats(search.best):
            search.best = knob_best
    if len(winners.blocks) > len(baseline.config.blocks) + 1:  # several knobs improved: try them together
        combined = search.record(measure(winners, None))
        if combined.beats(search.best):
            search.best = combined
    return search


def coordinate_descent(knobs: list[Knob], baseline: Trial, measure: Measure, passes: int = 2) -> Search:
    """Knob by knob, keep the best block found so far fixed while trying the next knob's candidates;
    repeat until a pass improves nothing (or `passes` are done)."""
    search = Search(best=baseline)
    for _ in range(passes):
        improved = False
        for knob in knobs:
            current = knob.current(search.best.config)
            for block in knob.candidates:
                if block == current:
                    continue
                trial = search.record(measure(search.best.config.with_block(knob.key, block), knob.key))
                if trial.beats(search.best):
                    search.best, improved = trial, True
        if not improved:
            break
    return search


STRATEGIES = {"brute": brute_force, "descent": coordinate_descent}

"""Search strategies over knobs: one-at-a-time brute force, node-by-node coordinate descent, and a
model-based search of the whole product space (Optuna's TPE sampler) for spaces too large to walk.

A candidate replaces the current best only when it is faster with a 95% interval of the speed-up
that excludes 1; a candidate whose outputs differ from the eager reference is reported, never adopted.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from graphscope.core.launch_config import LaunchConfig, format_dim
from graphscope.tune.measure import Trial
from graphscope.tune.space import Knob

Measure = Callable[[LaunchConfig, str | None], Trial]  # config, knob -> trial


@dataclass
class Search:
    best: Trial  # the baseline until a trial beats it
    trials: list[Trial] = field(default_factory=list)

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


def model_based(knobs: list[Knob], baseline: Trial, measure: Measure, budget: int | None = None) -> Search:
    """Optuna's TPE sampler over every knob at once (a categorical choice of block per knob): for spaces
    too large to walk (many nodes x shapes), `budget` trials (default: one brute-force pass, the sum of
    the knobs' candidates) each of the product space. Each trial is measured with the session's
    noise-aware repetitions; the best is replaced only by a trial that beats it with a 95% interval that
    excludes 1, as in the other strategies; failed and mismatching trials are told to the sampler as
    failures (it learns to avoid them)."""
    try:
        import optuna
    except ImportError:
        raise ImportError("the model strategy samples with Optuna: pip install -e '.[tune]'", name="optuna") from None
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    search = Search(best=baseline)
    labels = {knob.key: [format_dim(c) for c in knob.candidates] for knob in knobs}
    by_label = {knob.key: dict(zip(labels[knob.key], knob.candidates)) for knob in knobs}
    study = optuna.create_study(direction="minimize", sampler=optuna.samplers.TPESampler(seed=0))
    study.enqueue_trial(
        {k.key: format_dim(k.current(baseline.config)) for k in knobs if k.current(baseline.config) in k.candidates}
    )
    tried: dict[tuple, Trial] = {}
    total = budget if budget is not None else sum(len(k.candidates) for k in knobs)
    for _ in range(max(total, 1)):
        asked = study.ask()
        config = baseline.config
        for knob in knobs:
            config = config.with_block(
                knob.key, by_label[knob.key][asked.suggest_categorical(knob.key, labels[knob.key])]
            )
        key = tuple(sorted(config.blocks.items()))
        if config.blocks == baseline.config.blocks:
            trial = baseline  # the baseline itself: already measured
        elif key in tried:
            trial = tried[key]  # the sampler came back to a measured point: no new measurement
        else:
            changed = [k.key for k in knobs if k.current(config) != k.current(baseline.config)]
            trial = tried[key] = search.record(measure(config, ",".join(changed)))
        if trial.usable:
            study.tell(asked, trial.stats.median)
        else:
            study.tell(asked, state=optuna.trial.TrialState.FAIL)
        if trial is not baseline and trial.beats(search.best):
            search.best = trial
    return search


STRATEGIES = {"brute": brute_force, "descent": coordinate_descent, "model": model_based}

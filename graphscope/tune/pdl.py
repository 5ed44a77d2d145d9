"""Tuning programmatic dependent launch (PDL) per launch: each ctx.launch site with a kernel before it in
the graph, its `pdl` flag flipped, re-captured and re-measured (`graphscope tune --pdl`, the Tune panel).

The knob is a site's PDL flag (`LaunchConfig.pdl`), so a trial is a fresh capture of the whole step with
that launch flipped (in the graph: its incoming edge programmatic or plain). A flip is kept when its 95%
interval of the speed-up excludes 1 and its outputs still match the eager reference (a kernel launched
early without griddepcontrol.wait may read its predecessor's output too soon: that trial is a mismatch,
never adopted). The kept flips are then measured together, and, as block tuning does, the baseline and
the best are each captured and measured afresh once more before the best is adopted.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from graphscope.core.edge_kinds import EdgeKind
from graphscope.core.errors import Cancelled
from graphscope.core.launch_config import LaunchConfig, Site
from graphscope.core.progress import CancelToken, ProgressCallback, no_progress
from graphscope.core.stats import speedup
from graphscope.graph.edges import kinds_of
from graphscope.graph.model import Dag
from graphscope.tune.measure import Measurer, Trial

PDL_REPS = 100  # replays per trial: a 32-kernel chain replays in ~40 us, so a trial costs milliseconds


@dataclass(frozen=True)
class PdlKnob:
    """A PDL flag that can be flipped: one launch site (`link#3`), or a launch name (`link`: all its sites,
    `sites` of them, flipped together). `pdl` as captured, `edge` the (first) site's incoming edge."""

    site: str
    kernel: str
    pdl: bool
    edge: int
    sites: int = 1


def pdl_knobs(sites: list[Site], dag: Dag, only: str | None = None) -> list[PdlKnob]:
    """Every ctx.launch site whose node has one incoming edge from a kernel node (a PDL launch with nothing
    before it, or after a copy, has nothing to overlap), and first, each launch name with two or more such
    sites that all launch alike: one edge is ~1% of a short chain's replay, within the noise of one trial,
    while a name's sites flipped together move it by tens of percent (measured, benchmarks/RESULTS.md).
    `only` keeps one name (its knob and its sites) or one site."""
    by_key = {s.key: s for s in sites}
    kinds = kinds_of(dag)
    into: dict[int, list[int]] = {}
    for position, (_a, b) in enumerate(dag.edges):
        into.setdefault(b, []).append(position)
    knobs = []
    for index, node in enumerate(dag.nodes):
        site = by_key.get(node.site or "")
        edges = into.get(index, [])
        if site is None or len(edges) != 1 or dag.nodes[dag.edges[edges[0]][0]].type != "kernel":
            continue
        if only is not None and only not in (site.name, site.key):
            continue
        programmatic = bool(kinds.kind[edges[0]] == EdgeKind.PROGRAMMATIC)
        knobs.append(PdlKnob(site.key, site.kernel, programmatic, edges[0]))
    names: dict[str, list[PdlKnob]] = {}
    for knob in knobs:
        names.setdefault(by_key[knob.site].name, []).append(knob)
    together = [
        PdlKnob(name, group[0].kernel, group[0].pdl, group[0].edge, len(group))
        for name, group in names.items()
        if len(group) >= 2 and len({k.pdl for k in group}) == 1
    ]
    return together + knobs


@dataclass
class PdlResult:
    baseline: Trial
    trials: list[Trial]
    knobs: list[PdlKnob]
    combined: Trial | None = None
    confirmed: tuple[Trial, Trial] | None = None
    best: Trial | None = None
    adopt: bool = False
    notes: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        def row(trial: Trial, knob: PdlKnob | None = None) -> dict[str, Any]:
            data = trial.to_json()
            if knob is not None:
                data.update(site=knob.site, pdl=not knob.pdl, edge=knob.edge, sites=knob.sites)
            if trial.usable and self.baseline.usable and trial is not self.baseline:
                ratio = speedup(self.baseline.samples, trial.samples)
                data["speedup"] = ratio.to_json()
            return data

        return {
            "strategy": "pdl",
            "reps": len(self.baseline.samples),
            "knobs": [
                {"site": k.site, "kernel": k.kernel, "pdl": k.pdl, "edge": k.edge, "sites": k.sites} for k in self.knobs
            ],
            "baseline": row(self.baseline),
            "trials": [row(t, k) for t, k in zip(self.trials, self.knobs)],
            "combined": row(self.combined) if self.combined is not None else None,
            "confirmed": [row(t) for t in self.confirmed] if self.confirmed else None,
            "best_config": self.best.config.to_json() if self.best is not None else None,
            "adopt": self.adopt,
            "notes": self.notes,
        }


def tune_pdl(
    measurer: Measurer,
    start: LaunchConfig,
    knobs: list[PdlKnob],
    reps: int | None = None,
    progress: ProgressCallback = no_progress,
    cancel: CancelToken | None = None,
    record: Callable[[int, Trial], None] | None = None,
) -> PdlResult:
    """Flip each knob alone against the baseline (fresh captures), measure the winners together, then
    confirm baseline and best with a fresh capture each; the best is adopted only if it still wins."""
    reps = reps or PDL_REPS
    steps = len(knobs) + 4
    seq = 0

    def measured(config: LaunchConfig, what: str) -> Trial:
        nonlocal seq
        if cancel is not None and cancel.cancelled:
            raise Cancelled("PDL tuning cancelled")
        progress(min(seq / steps, 0.99), what)
        trial = measurer.confirm(config, reps)
        if record is not None:
            record(seq, trial)
        seq += 1
        return trial

    baseline = measured(start, "baseline, freshly captured")
    trials, winners = [], []
    for knob in knobs:
        trial = measured(start.with_pdl(knob.site, not knob.pdl), f"{knob.site}: PDL {'off' if knob.pdl else 'on'}")
        trial.knob = knob.site
        trials.append(trial)
        if trial.beats(baseline):
            winners.append(knob)
    result = PdlResult(baseline, trials, knobs)
    if not winners:
        result.notes.append("no flip beat the baseline: the workload's PDL flags stay as they are")
        progress(1.0, "done")
        return result
    config, flipped_names = start, {k.site for k in winners if k.sites > 1}
    for knob in winners:  # a site whose whole name won is flipped already
        if knob.sites > 1 or knob.site.rpartition("#")[0] not in flipped_names:
            config = config.with_pdl(knob.site, not knob.pdl)
    best = min((trials[knobs.index(k)] for k in winners), key=lambda t: t.stats.median)
    if len(winners) > 1 and config != best.config:
        combined = measured(config, f"{len(winners)} flips together")
        result.combined = combined
        if combined.beats(best):
            best = combined
        else:
            result.notes.append("the flips together did not beat the best one alone: that one is kept")
    fresh_base = measured(start, "confirming: baseline captured afresh")
    fresh_best = measured(best.config, "confirming: best captured afresh")
    result.confirmed = (fresh_base, fresh_best)
    result.best = best
    result.adopt = fresh_best.beats(fresh_base)
    if not result.adopt:
        result.notes.append("the best did not beat the baseline again when both were captured afresh: not adopted")
    progress(1.0, "done")
    return result

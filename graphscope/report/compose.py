"""Sources -> sides -> report -> charts, written once: the CLI, the Compare window, File > Export report…
and the Tune panel all build their reports here.

The one report engine for traces: `trace_sides` chooses each trace's default scope by the one rule for
steps (analysis/step_ranges.py) and builds the sides; `graphscope report A B`, the Compare window's
Export report… and File > Export report… all go through it, so one pair of files gives one headline.

- One trace: its steps (graphscope's measured repetitions, else the repeated range family that launched
  most of its GPU work), else the whole trace as one step.
- Two traces: each over its steps when both have them (the same family where both hold it); a side
  without steps is compared over the family the other side's steps belong to when it holds that family
  too; otherwise each side's steady activity window (start-up and tear-down left out), one step each.
  Every choice is said in the report's notes.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

from graphscope.analysis.focus import activity_window
from graphscope.analysis.scope import Scope
from graphscope.analysis.step_ranges import StepFamily, chosen, families, step_family
from graphscope.analysis.summary import TraceAnalysis
from graphscope.core.events import MEASURED_PATTERN
from graphscope.core.rules import STEP_GPU_SHARE
from graphscope.report.compare import build_report
from graphscope.report.formats import charts_for
from graphscope.report.sides import Side, trace_side
from graphscope.trace.model import Trace

Report = tuple[dict[str, Any], dict[str, str]]  # the JSON-shaped report, and its SVG charts (HTML only)
Opened = tuple[Trace, TraceAnalysis]
_NO_STEPS = f"no repeated range launched {STEP_GPU_SHARE:.0%} of its GPU busy time"


def report_of(a: Side, b: Side | None = None, title: str | None = None, charts: bool = True) -> Report:
    """The report of one side (or A against B), with its charts unless `charts` is False."""
    report = build_report(a, b, title=title)
    return report, (charts_for(report, (a, b)) if charts else {})


def default_scope(opened: Opened) -> tuple[Scope | None, str]:
    """One trace's default scope (its steps; None: the whole trace, one step), and how it was chosen."""
    chosen = step_family(opened[0], opened[1].work)
    if chosen is None:
        return None, f"the whole trace as one step ({_NO_STEPS})"
    return _scope(chosen), f"its steps: {chosen.describe()}"


def paired_scopes(a: Opened, b: Opened) -> tuple[Scope, Scope, str]:
    """Like-for-like default scopes of two traces (the module docstring's rule), and how, in words."""
    ranked = families(a[0], a[1].work), families(b[0], b[1].work)
    steps = [chosen(r) for r in ranked]
    if steps[0] is not None and steps[1] is not None:
        if steps[0].pattern != steps[1].pattern:  # the same family where both hold it as a step
            common = [_find(ranked[1], steps[0].pattern), _find(ranked[0], steps[1].pattern)]
            if common[0] is not None and common[0].is_step:
                steps[1] = common[0]
            elif common[1] is not None and common[1].is_step:
                steps[0] = common[1]
        same = steps[0].pattern == steps[1].pattern
        how = (
            f"both sides' steps: {steps[0].describe()} against {steps[1].describe()}"
            if same
            else f"each side's own steps (no step family in common): {steps[0].describe()} against "
            f"{steps[1].describe()}"
        )
        return _scope(steps[0]), _scope(steps[1]), how
    for mine, other in ((0, 1), (1, 0)):
        if steps[mine] is not None and steps[other] is None:
            alike = _find(ranked[other], steps[mine].pattern)
            if alike is not None and alike.instances > 1:
                scopes = [_scope(steps[mine]), _scope(alike)]
                if mine == 1:
                    scopes.reverse()
                names = ("A", "B") if mine == 0 else ("B", "A")
                how = (
                    f"ranges {alike.pattern!r} on both sides: {names[0]}'s steps ({steps[mine].describe()}); "
                    f"on {names[1]}, {alike.describe()}, under the {STEP_GPU_SHARE:.0%} a step launches"
                )
                return scopes[0], scopes[1], how
    return (
        _activity(*a),
        _activity(*b),
        "each side's steady activity window, one step each (start-up and tear-down left out; "
        + ("neither side has steps: " if steps == [None, None] else "no steps on both sides: ")
        + f"{_NO_STEPS})",
    )


def trace_sides(
    a: Opened, b: Opened | None = None, scopes: tuple[Scope | None, Scope | None] | None = None
) -> tuple[Side, Side | None]:
    """The sides of one trace or of A against B: over `scopes` when given, else their default scopes
    (the module docstring). Each side is labelled by its file's name."""
    labels = _labels(a, b)
    if scopes is not None:
        if b is None:
            return trace_side(*a, scopes[0], labels[0]), None
        return _both(a, b, scopes, labels)
    if b is None:
        scope, how = default_scope(a)
        side = trace_side(*a, scope, labels[0])
        side.notes.append(f"reported over {how}")
        return side, None
    scope_a, scope_b, how = paired_scopes(a, b)
    side_a, side_b = _both(a, b, (scope_a, scope_b), labels)
    side_a.notes.append(f"compared over {how}")
    return side_a, side_b


Scopes = tuple[Scope | None, Scope | None]


def _both(a: Opened, b: Opened, scopes: Scopes, labels: tuple[str, str]) -> tuple[Side, Side]:
    """Both sides; of two traces, side by side (numpy's sorts release the GIL: two cores, two sides)."""
    if a[0] is b[0]:  # one trace: its deferred columns load once
        return trace_side(*a, scopes[0], labels[0]), trace_side(*b, scopes[1], labels[1])
    with ThreadPoolExecutor(max_workers=1) as pool:
        later = pool.submit(trace_side, *b, scopes[1], labels[1])
        return trace_side(*a, scopes[0], labels[0]), later.result()


def same_scope(one: Scope | None, other: Scope | None) -> bool:
    """Are two scopes the same windows (a view's scope against its document's default: then a report
    uses the trace's own default scope, as `graphscope report FILE` does)?"""
    if one is None or other is None:
        return one is other
    return one.label == other.label and np.array_equal(one.start, other.start) and np.array_equal(one.end, other.end)


def trace_report(a: Opened, b: Opened | None = None, title: str | None = None, charts: bool = True) -> Report:
    """The report of one trace, or of trace A against trace B, over their default scopes."""
    return report_of(*trace_sides(a, b), title=title, charts=charts)


def report_from_sources(
    items: list[str],
    scope_a: str | None = None,
    scope_b: str | None = None,
    session: Path | None = None,
    title: str | None = None,
    charts: bool = True,
) -> Report:
    """The report `graphscope report ITEMS` describes (report.sources parses them)."""
    from graphscope.report.sources import StoredPlan, TuneSource, parse_source, sides_for

    if len(items) == 1 and items[0].startswith((StoredPlan.prefix, TuneSource.prefix)):
        from graphscope.report.plan_report import plan_report
        from graphscope.report.tune_report import tune_report

        stored = parse_source(items[0])
        made = plan_report if isinstance(stored, StoredPlan) else tune_report
        report, own_charts = made(stored.load(session))
        return report, own_charts if charts else {}
    return report_of(*sides_for(items, scope_a, scope_b, session), title=title, charts=charts)


def tuning_report_of(tuning_id: int, session: Path | None = None) -> Report:
    """A stored tuning session's report."""
    return report_from_sources([f"tune:{tuning_id}"], session=session)


def _measured(family: StepFamily) -> bool:
    return family.pattern == MEASURED_PATTERN


def _find(ranked: list[StepFamily], pattern: str) -> StepFamily | None:
    return next((f for f in ranked if f.pattern == pattern), None)


def _scope(family: StepFamily) -> Scope:
    scope = family.scope()
    if _measured(family):
        return Scope(f"graphscope's measured repetitions ({len(scope)} NVTX ranges)", scope.start, scope.end)
    return scope


def _activity(trace: Trace, analysis: TraceAnalysis) -> Scope:
    low, high = activity_window(trace, analysis)
    return Scope.of("steady activity window", np.array([low]), np.array([max(high, low + 1)]))


def _labels(a: Opened, b: Opened | None) -> tuple[str, str]:
    """Each side's file name; 'A: name' and 'B: name' when both files have one name."""
    names = [Path(a[0].path).name, Path(b[0].path).name if b is not None else ""]
    if names[0] == names[1]:
        return f"A: {names[0]}", f"B: {names[1]}"
    return names[0], names[1]

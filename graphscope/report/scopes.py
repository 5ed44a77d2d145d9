"""The default scopes of a report's trace sides, chosen once for every face: `graphscope report`, the
Compare window's Export report… and File > Export report… all build their trace sides here, so one pair
of files gives one headline (report/compose.py turns the sides into the report).

- One trace: its steps (analysis/step_ranges.py: graphscope's measured repetitions, else the repeated
  range family that launched most of its GPU work; never op-level ranges), else the whole trace as one
  step.
- Two traces: each over its steps when both have them (the same family where both hold it as steps); a
  side without steps is compared over the family the other side's steps belong to when it holds that
  family too, else over its steady activity window (start-up and tear-down left out) as one step; with
  no steps on either side, both steady activity windows. Every choice is said in the report's notes.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

from graphscope.analysis.focus import activity_window
from graphscope.analysis.scope import Scope
from graphscope.analysis.step_ranges import StepFamily, chosen, families, step_family
from graphscope.analysis.summary import TraceAnalysis
from graphscope.core.events import MEASURED_PATTERN
from graphscope.core.rules import STEP_DISJOINT_SHARE, STEP_GPU_SHARE
from graphscope.report.sides import Side, trace_side
from graphscope.trace.model import Trace

Opened = tuple[Trace, TraceAnalysis]
Scopes = tuple[Scope | None, Scope | None]
_NO_STEPS = f"no repeated range launched {STEP_GPU_SHARE:.0%} of its GPU busy time"


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
            if alike is not None and alike.disjoint_share >= STEP_DISJOINT_SHARE:  # side by side, as steps are
                scopes = [_scope(steps[mine]), _scope(alike)]
                if mine == 1:
                    scopes.reverse()
                names = ("A", "B") if mine == 0 else ("B", "A")
                how = (
                    f"ranges {alike.pattern!r} on both sides: {names[0]}'s steps ({steps[mine].describe()}); "
                    f"on {names[1]}, {alike.describe()}, under the {STEP_GPU_SHARE:.0%} a step launches"
                )
                return scopes[0], scopes[1], how
            lacking = "B" if other == 1 else "A"
            scopes = [_scope(steps[mine]), _activity(*(b if other == 1 else a))]
            if mine == 1:
                scopes.reverse()
            how = (
                f"{'A' if mine == 0 else 'B'}'s steps ({steps[mine].describe()}) against {lacking}'s steady "
                f"activity window as one step ({lacking} has no steps: {_NO_STEPS}, and no {steps[mine].pattern!r})"
            )
            return scopes[0], scopes[1], how
    return (
        _activity(*a),
        _activity(*b),
        f"each side's steady activity window, one step each (start-up and tear-down left out; neither side has "
        f"steps: {_NO_STEPS})",
    )


def trace_sides(a: Opened, b: Opened | None = None, scopes: Scopes | None = None) -> tuple[Side, Side | None]:
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

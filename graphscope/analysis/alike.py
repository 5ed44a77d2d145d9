"""Like with like: the default scopes of two traces compared with each other.

Process lifetimes are never compared (module loading and start-up would decide the ratio). In order:
graphscope's measured repetitions in both; else one family of NVTX ranges both traces hold (a name
with its instance number dropped: eager_0, eager_1 -> 'eager_*'; each instance a step), the family
that covers the most time in both among those with at least three instances in each (so a trace's
ProfilerStep#* steps win over the operators inside them); else each trace's steady activity window
(analysis/focus.py: start-up and tear-down left out).
"""

from __future__ import annotations

import fnmatch

import numpy as np

from graphscope.analysis.focus import activity_window
from graphscope.analysis.scope import Scope, measured_scope, nvtx_ranges
from graphscope.analysis.summary import TraceAnalysis
from graphscope.core.events import MEASURED_PATTERN
from graphscope.core.rules import MIN_REPEATS
from graphscope.trace.model import Trace

Opened = tuple[Trace, TraceAnalysis]


def comparable_scopes(a: Opened, b: Opened) -> tuple[Scope, Scope, str]:
    """(scope of A, scope of B, how they were chosen, in words)."""
    measured = measured_scope(a[0]), measured_scope(b[0])
    if measured[0] is not None and measured[1] is not None:
        return measured[0], measured[1], "both sides: graphscope's measured repetitions"
    families = _families(a[0]), _families(b[0])
    common = sorted(set(families[0]) & set(families[1]))
    if common:
        repeated = [f for f in common if min(len(families[0][f][0]), len(families[1][f][0])) >= MIN_REPEATS]
        best = max(repeated or common, key=lambda f: min(_time(families[0][f]), _time(families[1][f])))
        others = [f for f in common if f != best]
        label = f"NVTX ranges {best!r}"
        scopes = [Scope.of(label, *family[best]) for family in families]
        how = f"NVTX ranges {best!r}, present in both" + (
            f" (also common: {', '.join(others[:4])}; choose with --a/--b nvtx:NAME)" if others else ""
        )
        return scopes[0], scopes[1], how
    return (
        _activity(*a),
        _activity(*b),
        "each side's steady activity window (no NVTX range names in common; start-up and tear-down left out)",
    )


def _families(trace: Trace) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Closed NVTX ranges by family ('eager_*' for eager_0, eager_1; a name without a number is its own),
    graphscope's measured repetitions left out: family -> (starts, ends)."""
    texts, starts, ends = nvtx_ranges(trace)
    by_family: dict[str, list[int]] = {}
    for text in np.unique(texts).tolist():
        name = trace.symbols.name(int(text)) if text >= 0 else ""
        if not name or fnmatch.fnmatchcase(name, MEASURED_PATTERN):
            continue
        stem = name.rstrip("0123456789")
        family = f"{stem}*" if stem != name and stem else name
        by_family.setdefault(family, []).append(text)
    return {f: (starts[np.isin(texts, ids)], ends[np.isin(texts, ids)]) for f, ids in by_family.items()}


def _time(family: tuple[np.ndarray, np.ndarray]) -> int:
    return int((family[1] - family[0]).sum())


def _activity(trace: Trace, analysis: TraceAnalysis) -> Scope:
    low, high = activity_window(trace, analysis)
    return Scope.of("steady activity window", np.array([low]), np.array([max(high, low + 1)]))

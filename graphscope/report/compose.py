"""Sources -> sides -> report -> charts, written once: the CLI, the Compare window, File > Export report…
and the Tune panel all build their reports here; a trace side's default scope is chosen in
report/scopes.py only, so the same files give the same report in every face.

A report of trace files (and scopes of them) is kept (core/answer_cache.py) by its files' identities, its
arguments and the code that makes it: the same report asked again is the kept one, its `created` time
now, before NumPy is imported (`kept_report`).
"""

from __future__ import annotations

import datetime as dt
import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from graphscope.core import answer_cache

if TYPE_CHECKING:
    from graphscope.analysis.scope import Scope
    from graphscope.report.scopes import Opened, Scopes
    from graphscope.report.sides import Side

__all__ = ["Report", "report_from_sources", "report_of", "same_scope", "trace_report", "trace_sides"]

Report = tuple[dict[str, Any], dict[str, str]]  # the JSON-shaped report, and its SVG charts (HTML only)


def report_of(a: Side, b: Side | None = None, title: str | None = None, charts: bool = True) -> Report:
    """The report of one side (or A against B), with its charts unless `charts` is False."""
    from graphscope.report.compare import build_report
    from graphscope.report.formats import charts_for

    report = build_report(a, b, title=title)
    return report, (charts_for(report, (a, b)) if charts else {})


def trace_report(a: Opened, b: Opened | None = None, title: str | None = None, charts: bool = True) -> Report:
    """The report of one trace, or of trace A against trace B, over their default scopes (report/scopes.py)."""
    from graphscope.report.scopes import trace_sides

    return report_of(*trace_sides(a, b), title=title, charts=charts)


def trace_sides(a: Opened, b: Opened | None = None, scopes: Scopes | None = None) -> tuple[Side, Side | None]:
    """report/scopes.py's `trace_sides` (imported when first used: NumPy)."""
    from graphscope.report import scopes as chosen

    return chosen.trace_sides(a, b, scopes)


def same_scope(one: Scope | None, other: Scope | None) -> bool:
    """report/scopes.py's `same_scope` (imported when first used: NumPy)."""
    from graphscope.report import scopes

    return scopes.same_scope(one, other)


def report_from_sources(
    items: list[str],
    scope_a: str | None = None,
    scope_b: str | None = None,
    session: Path | None = None,
    title: str | None = None,
    charts: bool = True,
) -> Report:
    """The report `graphscope report ITEMS` describes (report.sources parses them); of trace files, the
    report kept from the same question of the same files where there is one."""
    question = report_question(items, scope_a, scope_b, title, charts)
    kept = kept_report(items[0], question) if question is not None else None
    if kept is not None:
        return kept
    made = _made(items, scope_a, scope_b, session, title, charts)
    if question is None:
        return made
    try:  # as JSON gives it back: the kept report and the first alike
        text = json.dumps({"report": made[0], "charts": made[1]})
    except (TypeError, ValueError):  # a value JSON cannot hold: written, not kept
        return made
    answer_cache.put(Path(items[0]), question, text)
    found = json.loads(text)
    return found["report"], found["charts"]


_SCOPE_PREFIXES = ("nvtx:", "range:")  # report/sources.py: scopes of a trace, kept with it
_OTHER_PREFIXES = ("run:", "tune:", "plan:")  # the session database's records: never kept


def report_question(
    items: list[str], scope_a: str | None, scope_b: str | None, title: str | None, charts: bool
) -> dict[str, Any] | None:
    """What a report of trace files depends on: the files' contents (their identities, in order), the
    arguments as given, the code that reads and reports them; None for other sources (stored runs,
    tuning sessions, plans: a database that changes under one name) or a file that cannot be read."""
    if not items or any(item.startswith(_OTHER_PREFIXES) for item in items):
        return None
    files = [item for item in items if not item.startswith(_SCOPE_PREFIXES)]
    try:
        if not files or not all(os.path.isfile(f) for f in files):
            return None
        identities = [answer_cache.file_key(Path(f), "report") for f in files]
    except OSError:
        return None
    made_by = answer_cache.code_version("report", "export", "graph", "view", "store")
    asked = {"items": items, "a": scope_a, "b": scope_b, "title": title, "charts": charts}
    return {"command": "report", **asked, "files": identities, "made_by": made_by}


def kept_report(first: str, question: dict[str, Any]) -> Report | None:
    """The report kept for `question` (`report_question`), made now, or None."""
    text = answer_cache.get(Path(first), question)
    if text is None:
        return None
    try:
        kept = json.loads(text)
        report, charts = kept["report"], kept["charts"]
        if not isinstance(report, dict) or not isinstance(charts, dict):
            return None
    except (ValueError, KeyError, TypeError):
        return None
    report["created"] = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")  # report/compare.py's stamp
    return report, charts


def _made(
    items: list[str],
    scope_a: str | None,
    scope_b: str | None,
    session: Path | None,
    title: str | None,
    charts: bool,
) -> Report:
    from graphscope.report.sources import StoredPlan, TuneSource, parse_stored, sides_for

    if len(items) == 1 and items[0].startswith((StoredPlan.prefix, TuneSource.prefix)):
        from graphscope.report.plan_report import plan_report
        from graphscope.report.tune_report import tune_report

        stored = parse_stored(items[0])
        made = plan_report if isinstance(stored, StoredPlan) else tune_report
        report, own_charts = made(stored.load(session))
        return report, own_charts if charts else {}
    return report_of(*sides_for(items, scope_a, scope_b, session), title=title, charts=charts)


def tuning_report_of(tuning_id: int, session: Path | None = None) -> Report:
    """A stored tuning session's report."""
    return report_from_sources([f"tune:{tuning_id}"], session=session)

"""Sources -> sides -> report -> charts, written once: the CLI, the Compare window, File > Export report…
and the Tune panel all build their reports here; a trace side's default scope is chosen in
report/scopes.py only, so the same files give the same report in every face."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from graphscope.report.compare import build_report
from graphscope.report.formats import charts_for
from graphscope.report.scopes import Opened, same_scope, trace_sides
from graphscope.report.sides import Side

__all__ = ["Report", "report_from_sources", "report_of", "same_scope", "trace_report", "trace_sides"]

Report = tuple[dict[str, Any], dict[str, str]]  # the JSON-shaped report, and its SVG charts (HTML only)


def report_of(a: Side, b: Side | None = None, title: str | None = None, charts: bool = True) -> Report:
    """The report of one side (or A against B), with its charts unless `charts` is False."""
    report = build_report(a, b, title=title)
    return report, (charts_for(report, (a, b)) if charts else {})


def trace_report(a: Opened, b: Opened | None = None, title: str | None = None, charts: bool = True) -> Report:
    """The report of one trace, or of trace A against trace B, over their default scopes (report/scopes.py)."""
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

"""A report (compare.build_report) as a file: HTML, Markdown, JSON or CSV, chosen by extension."""

from __future__ import annotations

import csv
import html
import io
import json
import math
import re
from pathlib import Path
from typing import Any

from graphscope.core.errors import BadInputError
from graphscope.core.paths import write_replacing
from graphscope.core.rules import plural
from graphscope.core.text import elide
from graphscope.core.units import format_ns

FORMATS = (".html", ".md", ".json", ".csv")
TABLE_NAME = 48  # characters of a kernel name in a table cell (the full name: HTML tooltip, JSON, CSV)
METRIC_NAMES = {
    "wall_ns": "end to end per step",
    "gpu_busy_ns": "GPU busy per step",
    "submit_ns": "host submit (launch calls) per step",
    "idle_host_wait_ns": "GPU idle waiting for the CPU",
    "idle_other_ns": "GPU idle, other",
    "launch_calls": "launch calls per step",
    "replay_ns": "GPU time per graph replay",
}
STATUS_COLOURS = {"added": "#1e7b34", "removed": "#b3261e", "changed": "#b36b00", "same": "#555", "": "#555"}


VERDICT_ORDER = ("traced", "gain", "launch_overhead")  # how every format heads a report


def headline(report: dict[str, Any]) -> list[str]:
    """The verdicts a report opens with, warnings first (a one-sided report: its side's verdict)."""
    verdicts = (report.get("comparison") or {}).get("verdicts", {})
    found = [verdicts[k] for k in VERDICT_ORDER if k in verdicts]
    return found or [v for v in [report["a"].get("verdict")] if v]


def write_report(report: dict[str, Any], path: Path, charts: dict[str, str] | None = None) -> None:
    """Write `report` in the format its extension names."""
    suffix = path.suffix.lower()
    if suffix not in FORMATS:
        raise BadInputError(f"{path}: a report is .html, .md, .json or .csv")
    text = {
        ".html": lambda: to_html(report, charts or {}),
        ".md": lambda: to_markdown(report),
        ".json": lambda: json.dumps(finite(report), indent=2, allow_nan=False) + "\n",
        ".csv": lambda: to_csv(report),
    }[suffix]()
    write_replacing(path, text, "the report")  # a full disk leaves the previous report whole


def finite(value: Any) -> Any:
    """The report with every NaN or infinity as null: strict JSON, which every parser reads."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [finite(v) for v in value]
    return value


def _value(metric: str, value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:,.0f}" if metric == "launch_calls" else format_ns(value)


def _ratio(ratio: dict[str, Any] | None) -> str:
    if not ratio:
        return "-"
    mark = "" if ratio["significant"] else " (not significant)"
    return f"{ratio['value']:.2f}x [{ratio['low']:.2f}-{ratio['high']:.2f}]{mark}"


def metric_rows(report: dict[str, Any]) -> list[tuple[str, str, str, str, str]]:
    """(metric, a, b, saved, speed-up) rows, or (metric, a) for a one-sided report."""
    rows = []
    a, b, comparison = report["a"], report["b"], report["comparison"] or {"metrics": {}}
    for metric, label in METRIC_NAMES.items():
        stats_a = a["per_step"].get(metric)
        stats_b = b["per_step"].get(metric) if b else None
        if stats_a is None and stats_b is None:
            continue
        entry = comparison["metrics"].get(metric, {})
        rows.append(
            (
                label,
                _value(metric, stats_a and stats_a["median"]),
                _value(metric, stats_b and stats_b["median"]),
                _value(metric, entry.get("saved")) if entry else "-",
                _ratio(entry.get("speedup")),
            )
        )
    return rows


def _config(side: dict[str, Any] | None) -> str:
    if not side:
        return "-"
    return f"{'x'.join(map(str, side['grid']))} / {'x'.join(map(str, side['block']))}"


def _scope(side: dict[str, Any]) -> str:
    if side["scope"]:
        return side["scope"]
    return {"run": "measured repetitions", "tuning": "trials"}.get(side["kind"], "whole trace")


def kernel_rows(report: dict[str, Any]) -> list[dict[str, str]]:
    out = []
    for k in report["kernels"]:
        a, b = k["a"], k["b"]
        out.append(
            {
                "status": k["status"],
                "kernel": elide(k["name"], TABLE_NAME),
                "a per step": f"{a['per_step']:g}" if a else "-",
                "a median": format_ns(a["median_ns"]) if a else "-",
                "a grid / block": _config(a),
                "b per step": f"{b['per_step']:g}" if b else "-",
                "b median": format_ns(b["median_ns"]) if b else "-",
                "b grid / block": _config(b),
                "b / a speed-up": _ratio(k["ratio"]),
            }
        )
    return out


def to_markdown(report: dict[str, Any]) -> str:
    """Markdown that pastes into a pull request."""
    a, b = report["a"], report["b"]
    lines = [f"## {_md(report['title'])}", ""]
    for name, side in (("A", a), ("B", b)):
        if side:
            scope, steps = f", {_md(_scope(side))}", plural(side["steps"], "step")
            where = f"{side['kind']} {_code(side['source'])}{scope}, {steps}"
            if side["label"] != Path(side["source"]).name:  # else the label is the file name again
                where = f"{_md(side['label'])} ({where})"
            lines.append(f"- **{name}**: {where}")
    lines.append("")
    for text in headline(report):
        lines += [f"> {_md(text)}", ""]
    head = ["metric (median per step)", "A"] + (["B", "saved (A - B)", "B speed-up [95%]"] if b else [])
    metrics = metric_rows(report)
    if metrics:
        lines += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for row in metrics:
        lines.append("| " + " | ".join(_md(c) for c in row[: len(head)]) + " |")
    kernels = kernel_rows(report)[:30]
    if kernels:
        columns = [c for c in kernels[0] if b or not c.startswith("b ")]
        columns = [c for c in columns if b or c != "status"]
        lines += ["", "| " + " | ".join(_md(c) for c in columns) + " |", "|" + "---|" * len(columns)]
        lines += ["| " + " | ".join(_md(row[c]) for c in columns) + " |" for row in kernels]
    for table in report.get("tables", []):
        lines += ["", f"### {_md(table['title'])}", ""]
        lines += ["| " + " | ".join(_md(c) for c in table["columns"]) + " |", "|" + "---|" * len(table["columns"])]
        lines += ["| " + " | ".join(_md(v) for v in row) + " |" for row in table["rows"]]
    if report["notes"]:
        lines += ["", *[f"- {_md(n)}" for n in report["notes"]]]
    return "\n".join(lines) + "\n"


_MD_SPECIAL = re.compile(r"([\\`*_\[\]#|])")


def _md(text: str) -> str:
    """Text as one inline run of Markdown: line breaks of every kind become spaces, markup characters are
    escaped and HTML shows as text, so a name can neither end a table row nor inject markup."""
    flat = " ".join(str(text).splitlines()) if text is not None else ""
    flat = flat.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return _MD_SPECIAL.sub(r"\\\1", flat)


def _code(text: str) -> str:
    """Text as a Markdown code span: literal inside (no escapes: they would show), on one line, fenced by
    more backticks than any run of them it holds."""
    flat = " ".join(str(text).splitlines())
    fence = "`" * (max((len(run) for run in re.findall(r"`+", flat)), default=0) + 1)
    pad = " " if flat.startswith("`") or flat.endswith("`") else ""
    return f"{fence}{pad}{flat}{pad}{fence}"


def _cell(value: object) -> object:
    """A CSV cell a spreadsheet will not run: text starting with = + - @ (or a tab or carriage return)
    gets a leading apostrophe, as spreadsheet tools advise (numbers stay numbers)."""
    if isinstance(value, str) and value[:1] in ("=", "+", "-", "@", "\t", "\r"):
        return "'" + value
    return value


def to_csv(report: dict[str, Any]) -> str:
    """The per-kernel table as CSV (raw numbers in nanoseconds); a report of its own tables (a plan, a
    tuning session) writes its first table instead."""
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    if report.get("tables") and not report["kernels"]:
        table = report["tables"][0]
        writer.writerow(_cell(c) for c in table.get("raw_columns", table["columns"]))
        writer.writerows([_cell(v) for v in row] for row in table.get("raw", table["rows"]))
        return buffer.getvalue()
    writer.writerow(
        [
            "status",
            "kernel",
            "full_name",
            "side",
            "count",
            "per_step",
            "median_ns",
            "ci_low_ns",
            "ci_high_ns",
            "grid",
            "block",
        ]
    )
    for k in report["kernels"]:
        for side in ("a", "b"):
            s = k[side]
            if s:
                writer.writerow(
                    _cell(v)
                    for v in [
                        k["status"],
                        k["name"],
                        k["full_name"],
                        side.upper(),
                        s["count"],
                        s["per_step"],
                        s["median_ns"],
                        s["ci_low_ns"],
                        s["ci_high_ns"],
                        "x".join(map(str, s["grid"])),
                        "x".join(map(str, s["block"])),
                    ]
                )
    return buffer.getvalue()


def charts_for(report: dict[str, Any], sides: tuple) -> dict[str, str]:
    """SVG charts from the sides (their samples are not in the JSON report)."""
    from graphscope.report import svg  # NumPy: a kept report is written without it (report/compose.py)

    a, b = sides
    labels = (a.label, b.label if b is not None else None)
    spans = [s.excerpt["end_ns"] - s.excerpt["start_ns"] for s in (a, b) if s is not None and s.excerpt]
    span = max(spans) if spans else None
    return {
        "kernels": svg.kernel_bars(report["kernels"], labels),
        "latency": svg.histogram(a.latency_ns, b.latency_ns if b else None, labels, "kernel launch latency"),
        "duration": svg.histogram(a.duration_ns, b.duration_ns if b else None, labels, "kernel duration"),
        "timeline_a": svg.timeline(a.excerpt, f"A, first step ({a.label})", span),
        "timeline_b": svg.timeline(b.excerpt, f"B, first step ({b.label})", span) if b else "",
        "dag": svg.dag(a.dag or (b.dag if b else None), "graph nodes by share of graph time"),
    }


CSS = """
body{font-family:Helvetica,Arial,sans-serif;max-width:1100px;margin:24px auto;color:#222;padding:0 16px}
h1{font-size:22px}h2{font-size:17px;margin-top:28px;border-bottom:1px solid #ddd;padding-bottom:4px}
table{border-collapse:collapse;font-size:13px;margin:8px 0}td,th{border:1px solid #ddd;padding:4px 8px;text-align:left}
th{background:#f3f3f5}
.verdict{font-size:15px;padding:10px 14px;background:#eef4fe;border-left:4px solid #4285f4;margin:8px 0}
.note{color:#666;font-size:12px}.status{font-weight:bold}svg{max-width:100%;height:auto}
"""


def to_html(report: dict[str, Any], charts: dict[str, str]) -> str:
    """One self-contained HTML file: inline CSS and SVG, no script, no network; all text escaped."""
    e = html.escape
    a, b = report["a"], report["b"]
    parts = [
        f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{e(report['title'])}</title>",
        f"<style>{CSS}</style></head><body><h1>{e(report['title'])}</h1>",
    ]
    sides = [("A", a)] + ([("B", b)] if b else [])
    parts.append("<table><tr><th></th><th>side</th><th>source</th><th>scope</th><th>steps</th></tr>")
    for name, side in sides:
        parts.append(
            f"<tr><td>{name}</td><td>{e(side['label'])}</td><td>{e(side['source'])}</td>"
            f"<td>{e(side['scope'] or 'whole trace')}</td><td>{side['steps']}</td></tr>"
        )
    parts.append("</table>")
    parts += [f"<div class='verdict'>{e(t)}</div>" for t in headline(report)]
    head = ["metric (median per step)", "A"] + (["B", "saved (A - B)", "B speed-up [95% interval]"] if b else [])
    metrics = metric_rows(report)
    if metrics:  # a rank job or a plan has its own tables instead
        parts.append("<h2>Per step</h2><table><tr>" + "".join(f"<th>{e(h)}</th>" for h in head) + "</tr>")
        for row in metrics:
            parts.append("<tr>" + "".join(f"<td>{e(c)}</td>" for c in row[: len(head)]) + "</tr>")
        parts.append("</table>")
    for key, title in (
        ("timeline_a", "Timeline"),
        ("timeline_b", None),
        ("kernels", "Kernel durations"),
        ("latency", "Launch latency and kernel duration"),
        ("duration", None),
        ("dag", "Graph"),
    ):
        if charts.get(key):
            parts.append((f"<h2>{title}</h2>" if title else "") + f"<div>{charts[key]}</div>")
    rows = kernel_rows(report)
    if rows:
        columns = [c for c in rows[0] if b or (not c.startswith("b ") and c != "status")]
        parts.append("<h2>Kernels</h2><table><tr>" + "".join(f"<th>{e(c)}</th>" for c in columns) + "</tr>")
        for k, row in zip(report["kernels"], rows):
            cells = []
            for c in columns:
                style = f" class='status' style='color:{STATUS_COLOURS[row['status']]}'" if c == "status" else ""
                title = f" title='{e(k['full_name'])}'" if c == "kernel" else ""
                cells.append(f"<td{style}{title}>{e(row[c])}</td>")
            parts.append("<tr>" + "".join(cells) + "</tr>")
        parts.append("</table>")
    for table in report.get("tables", []):
        parts.append(f"<h2>{e(table['title'])}</h2>")
        if charts.get(table.get("chart", "")):
            parts.append(f"<div>{charts[table['chart']]}</div>")
        parts.append("<table><tr>" + "".join(f"<th>{e(str(c))}</th>" for c in table["columns"]) + "</tr>")
        parts += ["<tr>" + "".join(f"<td>{e(str(v))}</td>" for v in row) + "</tr>" for row in table["rows"]]
        parts.append("</table>")
    if report["notes"]:
        parts.append("<h2>Notes</h2><ul>" + "".join(f"<li class='note'>{e(n)}</li>" for n in report["notes"]) + "</ul>")
    parts.append(f"<p class='note'>{e(report['format'])}, made {e(report['created'])} by graphscope</p></body></html>")
    return "".join(parts)

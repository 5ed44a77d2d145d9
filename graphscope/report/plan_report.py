"""A capture-size plan as a report: the per-size table, the frontier as an SVG chart, the plan and the
compared list (schema `graphscope-report/1`, with the plan's own JSON under `plan`)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

from graphscope.core.rules import PLAN_EXPECTED, PLAN_PREDICTED, PLAN_SWITCHING
from graphscope.core.units import format_bytes, format_ns
from graphscope.report.compare import FORMAT
from graphscope.report.svg import frontier
from graphscope.text.plan import served_line, under_rule_lines

COLUMNS = ("size", "eager step", "graph replay", "saves", "graph memory", "capture", "pays (~20% rule)")


def per_size_cells(row: dict[str, Any]) -> tuple[str, ...]:
    """One measured size as the report's and the Plan panel's table show it (COLUMNS)."""
    return (
        str(row["size"]),
        format_ns(row["eager_ns"]),
        format_ns(row["graph_ns"]),
        f"{row['saving']:.0%}",
        format_bytes(row["memory_bytes"]),
        format_ns(row["startup_ns"]),
        "yes" if row["pays"] else "no (under ~20%)",
    )


def plan_report(plan: dict[str, Any]) -> tuple[dict[str, Any], dict[str, str]]:
    """(report, charts) of a stored plan."""
    rows = [per_size_cells(r) for r in plan["per_size"]]
    raw = [
        (r["size"], r["eager_ns"], r["graph_ns"], r["saving"], r["memory_bytes"], r["startup_ns"], r["pays"])
        for r in plan["per_size"]
    ]
    chosen = [
        (
            name,
            ", ".join(map(str, c["sizes"])) or "none",
            format_ns(c["expected_ns"]),
            format_ns(c.get("switch_ns") or 0.0),
            format_ns(c.get("predicted_ns", c["expected_ns"])),
            format_bytes(c["memory_bytes"]),
            format_ns(c["startup_ns"]),
            f"{c['padding_waste']:.1%}",
            f"{c['eager_share']:.1%}",
        )
        for name, c in (("plan", plan["best"]), ("compared list", plan.get("compared")), ("none", plan["all_eager"]))
        if c
    ]
    side = {
        "label": Path(plan["workload"]).name,
        "kind": "plan",
        "source": plan["workload"],
        "scope": f"{len(plan['per_size'])} batch sizes",
        "steps": plan["reps"],
        "per_step": {},
        "verdict": plan["verdict"],
    }
    report = {
        "format": FORMAT,
        "title": f"capture-size plan {plan.get('plan_id', '')}: {Path(plan['workload']).name}".strip(),
        "created": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "a": side,
        "b": None,
        "comparison": None,
        "kernels": [],
        "tables": [
            {"title": "Per batch size", "columns": list(COLUMNS), "rows": rows, "raw": raw, "chart": "frontier"},
            {
                "title": "Sets of sizes",
                "columns": [
                    "set",
                    "sizes",
                    PLAN_EXPECTED,
                    PLAN_SWITCHING,
                    PLAN_PREDICTED,
                    "memory",
                    "start-up",
                    "padding waste",
                    "eager share",
                ],
                "rows": chosen,
            },
        ],
        "notes": under_rule_lines(plan) + ([served_line(plan["served"])] if plan.get("served") else []),
        "plan": plan,
    }
    best = plan["best"]["sizes"] if plan["best"] else []
    return report, {"frontier": frontier(plan["memory_frontier"], best, f"{PLAN_EXPECTED} against graph memory")}

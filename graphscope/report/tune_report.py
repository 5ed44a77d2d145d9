"""A tuning session as a report: every trial with its median, 95% interval, status and cause; the
configuration against the baseline; the session's numbers (in place and fresh captures, the baseline's
drift, restarts); and a chart of the trial medians per node. Schema `graphscope-report/1`, the session's
own JSON (`graphscope-tuning/1`) under `tuning.session`."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

from graphscope.core.launch_config import format_dim
from graphscope.core.units import format_ns
from graphscope.report.compare import FORMAT
from graphscope.report.svg import graph_vs_alone, trial_medians
from graphscope.text.tune import candidate_status, ok_median

TRIAL_COLUMNS = ("#", "node", "block", "how", "median", "95% interval", "vs baseline", "status", "cause")
RAW_COLUMNS = ("seq", "node", "block", "how", "median_ns", "ci_low_ns", "ci_high_ns", "speedup", "status", "cause")


def _block(trial: dict[str, Any]) -> str:
    block = json.loads(trial["block"]) if trial.get("block") else None
    if block:
        return format_dim(tuple(block))
    site = trial.get("site") or ""
    if "," in site:  # a model-based trial moved several knobs: their blocks
        blocks = json.loads(trial["config"]).get("blocks", {})
        return ", ".join(f"{k}={format_dim(tuple(blocks[k]))}" for k in site.split(",") if k in blocks)
    return ""


def _blocks(config: str | dict[str, Any] | None) -> dict[str, Any]:
    if isinstance(config, str):
        config = json.loads(config)
    return (config or {}).get("blocks", {})


def _node(trial: dict[str, Any], seq: int, baseline: dict[str, Any], best: dict[str, Any]) -> str:
    if trial.get("site"):
        return str(trial["site"])
    if trial["how"] == "drift-check":
        return "baseline again"
    if trial["how"] == "fresh-capture":
        blocks = _blocks(trial["config"])
        if blocks == baseline:
            return "baseline, fresh"
        if blocks == best:
            return "best, fresh"
        return "fresh: " + ", ".join(f"{k}={format_dim(tuple(v))}" for k, v in blocks.items())  # in graph vs alone
    return "baseline" if seq == 0 else "the winners together"


def trial_rows(tuning: dict[str, Any]) -> list[dict[str, Any]]:
    """Every stored trial as a row: what was tried, how, its numbers against the baseline, status, cause."""
    trials = tuning["trials"]
    base = trials[0]["median_ns"] if trials and trials[0].get("median_ns") else None
    baseline, best = _blocks(trials[0]["config"]) if trials else {}, _blocks(tuning.get("best"))
    fresh_base = next(
        (t.get("median_ns") for t in trials if t["how"] == "fresh-capture" and _blocks(t["config"]) == baseline), None
    )
    rows = []
    for seq, trial in enumerate(trials):
        median = trial.get("median_ns")
        against = fresh_base if trial["how"] == "fresh-capture" else base  # like with like
        rows.append(
            {
                "seq": seq,
                "node": _node(trial, seq, baseline, best),
                "site": trial.get("site"),
                "block": _block(trial),
                "how": trial["how"],
                "median_ns": median,
                "ci_low_ns": trial.get("ci_low_ns"),
                "ci_high_ns": trial.get("ci_high_ns"),
                "speedup": against / median if median and against else None,
                "status": trial["status"],
                "cause": trial.get("reason") or "",
                "reps": trial.get("reps"),
            }
        )
    return rows


def _cells(row: dict[str, Any]) -> tuple[str, ...]:
    median = row["median_ns"]
    interval = f"{format_ns(row['ci_low_ns'])}-{format_ns(row['ci_high_ns'])}" if median is not None else "-"
    return (
        str(row["seq"]),
        row["node"],
        row["block"] or "-",
        row["how"],
        format_ns(median) if median is not None else "-",
        interval,
        f"{row['speedup']:.3f}x" if row["speedup"] else "-",
        row["status"],
        row["cause"],
    )


def config_diff(tuning: dict[str, Any], summary: dict[str, Any]) -> list[tuple[str, ...]]:
    """Per tuned node: its kernel, sites, baseline block and the best one (changed or not)."""
    best = json.loads(tuning["best"]).get("blocks", {}) if tuning.get("best") else {}
    rows = []
    for key, knob in (summary.get("knobs") or {}).items():
        baseline = format_dim(tuple(knob["baseline"]))
        chosen = format_dim(tuple(best[key])) if key in best else baseline
        rows.append(
            (key, knob["kernel"], str(knob["sites"]), baseline, chosen, "changed" if chosen != baseline else "")
        )
    return rows


def _numbers(summary: dict[str, Any], restarts: list[str]) -> list[tuple[str, str]]:
    def ns(key: str) -> str:
        return format_ns(summary[key]) if summary.get(key) is not None else "-"

    drift, penalty = summary.get("baseline_drift"), summary.get("in_place_penalty")
    statuses = ", ".join(f"{n} {status}" for status, n in (summary.get("statuses") or {}).items() if n)
    return [
        ("conclusion", summary.get("conclusion", "not finished")),
        ("baseline, in place", ns("baseline_in_place_ns")),
        ("best, in place", ns("best_in_place_ns")),
        ("baseline, fresh capture", ns("baseline_fresh_ns")),
        ("best, fresh capture", ns("best_fresh_ns")),
        ("in-place penalty (in place / fresh, baseline)", f"{penalty:.3f}x" if penalty else "-"),
        ("baseline drift over the sweep", f"{drift:+.2%}" if drift is not None else "-"),
        ("median cost of an in-place edit", ns("median_apply_ns")),
        ("trials by status", statuses or "-"),
        ("restarts of the workload child", "; ".join(restarts) if restarts else "none"),
    ]


def isolation_tables(isolation: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """In the graph vs alone: one row a knob (the verdict and its numbers), one a candidate."""
    if not isolation:
        return []

    def ns(value: float | None) -> str:
        return format_ns(value) if value is not None else "-"

    verdicts = [
        (
            k["knob"],
            str(k["compared"]),
            f"{k['kendall_tau']:.2f}" if k.get("kendall_tau") is not None else "-",
            format_dim(k["graph_winner"]) if k.get("graph_winner") else "-",
            format_dim(k["alone_winner"]) if k.get("alone_winner") else "-",
            ns(k.get("regret_ns")),
            f"{k['regret_share']:.1%}" if k.get("regret_share") is not None else "-",
            ns(k.get("fresh_regret_ns")),
            k["verdict"],
        )
        for k in isolation
    ]
    candidates = []
    for knob in isolation:
        for row in knob["candidates"]:
            cells = (format_dim(row["block"]), ok_median(row["in_graph"]), ok_median(row["alone"]))
            candidates.append((knob["knob"], *cells, candidate_status(row)))
    return [
        {
            "title": "In the graph vs alone",
            "columns": [
                "node",
                "compared",
                "Kendall tau",
                "graph winner",
                "alone winner",
                "regret in place",
                "of the step",
                "regret, fresh captures",
                "verdict",
            ],
            "rows": verdicts,
            "chart": "alone",
        },
        {
            "title": "Candidates in the graph (whole step) and alone (the kernel by itself)",
            "columns": ["node", "block", "in the graph", "alone", "status"],
            "rows": candidates,
        },
    ]


def tune_report(tuning: dict[str, Any]) -> tuple[dict[str, Any], dict[str, str]]:
    """(report, charts) of a stored tuning session (SessionStore.tuning)."""
    summary = json.loads(tuning["summary"]) if tuning.get("summary") else {}
    summary = summary or {}
    rows = trial_rows(tuning)
    baseline = tuning["trials"][0] if tuning["trials"] else None
    best = next(
        (t for t in tuning["trials"][1:] if t["config"] == tuning.get("best") and t["how"] == "in-place"), baseline
    )
    restarts = list(summary.get("restarts") or [])

    def side(label: str, trial: dict[str, Any] | None) -> dict[str, Any]:
        stats = {}
        if trial and trial.get("median_ns") is not None:
            stats = {
                "replay_ns": {
                    "n": trial["reps"],
                    "median": trial["median_ns"],
                    "ci_low": trial["ci_low_ns"],
                    "ci_high": trial["ci_high_ns"],
                }
            }
        steps = (trial or {}).get("reps") or 0
        source = str(tuning["path"])
        return {"label": label, "kind": "tuning", "source": source, "scope": "graph replays", "steps": steps,
                "per_step": stats, "verdict": None}  # fmt: skip

    metrics = {}
    if baseline and best and baseline.get("median_ns") and best.get("median_ns"):
        metrics["replay_ns"] = {
            "a_median": baseline["median_ns"],
            "b_median": best["median_ns"],
            "saved": baseline["median_ns"] - best["median_ns"],
        }
    report = {
        "format": FORMAT,
        "title": f"tuning session {tuning['id']}: {Path(tuning['path']).name} ({tuning['strategy']})",
        "created": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "a": side("baseline (in place)", baseline),
        "b": side("best (in place)", best),
        "comparison": {"metrics": metrics, "verdicts": {"gain": summary.get("conclusion", "not finished")}},
        "kernels": [],
        "tables": [
            {
                "title": f"Trials ({len(rows)})",
                "columns": list(TRIAL_COLUMNS),
                "rows": [_cells(r) for r in rows],
                "raw": [tuple(r[c] for c in RAW_COLUMNS) for r in rows],
                "raw_columns": list(RAW_COLUMNS),
                "chart": "trials",
            },
            {
                "title": "Configuration against the baseline",
                "columns": ["node", "kernel", "launch sites", "baseline block", "best block", ""],
                "rows": config_diff(tuning, summary),
            },
            {"title": "The session", "columns": ["", ""], "rows": _numbers(summary, restarts)},
            *isolation_tables(summary.get("isolation") or []),
        ],
        "tuning": {
            "status": tuning.get("status"),
            "summary": summary,
            "trials": rows,
            "session": {
                "format": summary.get("format"),
                "started": tuning.get("started"),
                "finished": tuning.get("finished"),
                "strategy": tuning["strategy"],
            },
        },
        "notes": [f"restarted: {why}" for why in restarts],
    }
    chart = trial_medians(rows, "trial medians per node, 95% intervals; the dashed line is the baseline")
    alone = graph_vs_alone(
        summary.get("isolation") or [],
        "each candidate alone (across) and in the graph (up); green: the graph's winner, red: the alone winner",
    )
    return report, {"trials": chart, "alone": alone}

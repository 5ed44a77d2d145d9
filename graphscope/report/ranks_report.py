"""A rank job (ranks/job.py) as a report: the ranks, the late steps, the skew, and a chart of every
rank's lateness at every step (schema `graphscope-report/1`, the job's own JSON under `ranks`)."""

from __future__ import annotations

import datetime as dt
import html
from typing import Any

import numpy as np

from graphscope.core.units import format_ns
from graphscope.report.compare import FORMAT
from graphscope.report.svg import FONT_FAMILY, _svg, _text
from graphscope.text.ranks import mode_lines

MAX_COLUMNS = 240  # steps drawn as columns; more are binned (each bin shows its latest rank)


def lateness_chart(late: list[list[int]], ranks: list[int], title: str) -> str:
    """Ranks (rows) x steps (columns), each cell as late as its rank reached the step's collective after
    the median rank: white on time, deep red at the latest of the job."""
    if not late:
        return ""
    matrix = np.clip(np.asarray(late, dtype=np.float64), 0, None)
    steps = matrix.shape[1]
    bins = int(np.ceil(steps / MAX_COLUMNS))
    if bins > 1:  # the latest of each bin of steps: a straggler never averages away
        padded = np.pad(matrix, ((0, 0), (0, bins * int(np.ceil(steps / bins)) - steps)))
        matrix = padded.reshape(len(ranks), -1, bins).max(axis=2)
    top = max(float(matrix.max()), 1.0)
    cell_w = max(2.0, min(14.0, 560.0 / matrix.shape[1]))
    cell_h = max(2.0, min(14.0, 420.0 / len(ranks)))
    left, head = 50, 24
    width, height = int(left + cell_w * matrix.shape[1] + 20), int(head + cell_h * len(ranks) + 30)
    body = [_text(10, 14, title)]
    for i, rank in enumerate(ranks):
        y = head + i * cell_h
        if len(ranks) <= 64 or i % max(len(ranks) // 32, 1) == 0:
            body.append(_text(6, y + cell_h - 1, f"rank {rank}", extra="font-size='8'"))
        for j in np.flatnonzero(matrix[i] > 0.02 * top).tolist():
            heat = int(235 - 200 * (matrix[i, j] / top) ** 0.5)
            steps_of = f"steps {j * bins}-{j * bins + bins - 1}" if bins > 1 else f"step {j}"
            label = html.escape(f"rank {rank}, {steps_of}: {format_ns(matrix[i, j])} after the median rank")
            body.append(
                f"<rect x='{left + j * cell_w:.1f}' y='{y:.1f}' width='{cell_w:.1f}' height='{cell_h:.1f}' "
                f"fill='rgb(255,{heat},{heat})'><title>{label}</title></rect>"
            )
    axis = f"{steps} steps" + (f", {bins} a column" if bins > 1 else "") + f"; darkest: {format_ns(top)} late"
    body.append(f"<text x='{left}' y='{height - 8}' {FONT_FAMILY} font-size='9'>{html.escape(axis)}</text>")
    return _svg(width, height, body, title)


def rank_cells(rank: dict[str, Any]) -> tuple[str, ...]:
    """One rank as table cells: rank, median step, GPU busy in its steps, straggler steps, graph launches,
    verdict."""
    step, busy = rank.get("median_step_ns"), rank.get("step_gpu_busy")
    return (
        str(rank["rank"]),
        format_ns(step) if step is not None else "-",
        f"{busy:.0%}" if busy is not None else "-",
        str(rank.get("straggler_steps", 0)),
        str(rank.get("graph_launches") or 0),
        rank.get("verdict") or "",
    )


def _missing_note(job: dict[str, Any]) -> list[str]:
    missing = job.get("missing_ranks") or []
    count = job.get("missing_count", len(missing))
    more = ", ..." if count > len(missing) else ""
    return [f"missing ranks ({count:,}): {', '.join(map(str, missing))}{more}"] if missing else []


def ranks_report(job: dict[str, Any]) -> tuple[dict[str, Any], dict[str, str]]:
    """(report, charts) of a rank job."""
    ranks, steps = job["ranks"], job["steps"]
    rank_rows = [rank_cells(r) for r in ranks]
    late = sorted((s for s in steps if s["held_by"] not in ("on time",)), key=lambda s: -s["late_ns"])[:50]
    late_rows = [
        (str(s["step"]), str(s["straggler"]), format_ns(s["late_ns"]), format_ns(s.get("threshold_ns")), s["held_by"],
         f"{s['straggler_gpu_busy']:.0%}", format_ns(s["start_skew_ns"]), format_ns(s["end_skew_ns"]))
        for s in late
    ]  # fmt: skip
    source = ", ".join(sorted({r["path"] for r in ranks})[:3]) + (", ..." if len(ranks) > 3 else "")
    side = {"label": f"{len(ranks)} ranks", "kind": "ranks", "source": source,
            "scope": f"{len(steps)} steps of {job.get('step_name') or '-'}", "steps": len(steps), "per_step": {},
            "verdict": job["verdict"]}  # fmt: skip
    report = {
        "format": FORMAT,
        "title": f"rank job: {len(ranks)} ranks" + (f" of {job['world_size']}" if job.get("world_size") else ""),
        "created": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "a": side,
        "b": None,
        "comparison": {"metrics": {}, "verdicts": {"ranks": job["verdict"]}},
        "kernels": [],
        "tables": [
            {
                "title": "Late steps (the latest 50)",
                "columns": ["step", "straggler", "late by", "allowed", "held by", "its GPU busy", "start skew",
                            "end skew"],
                "rows": late_rows,
                "chart": "lateness",
            },
            {
                "title": "Ranks",
                "columns": ["rank", "median step", "GPU busy in steps", "straggler steps", "graph launches",
                            "launch verdict"],
                "rows": rank_rows,
            },
        ],
        "notes": [f"left out: {p}" for p in job["problems"]]
        + [f"skipped: {s}" for s in job.get("skipped", [])]
        + _missing_note(job)
        + mode_lines(job),  # each rank's graph mode where it differs (ranks/modes.py)
        "ranks": {k: v for k, v in job.items() if k not in ("late_ns", "gpu_busy")},
    }
    chart = lateness_chart(job.get("late_ns") or [], [r["rank"] for r in ranks], "each rank's lateness at each step")
    return report, {"lateness": chart}

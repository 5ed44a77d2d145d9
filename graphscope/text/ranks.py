"""A rank job (ranks/job.py) as text: the verdict, what was left out, each rank, and the late steps."""

from __future__ import annotations

from statistics import median
from typing import Any

from graphscope.core.text import printable_tree
from graphscope.core.units import format_ns

MOST_NAMED = 8  # ranks named in the graph-mode lines


def mode_lines(job: dict[str, Any]) -> list[str]:
    """The job's graph modes as lines of text (rank text and report notes): the usual mode, every rank
    that differs from it, and the ranks whose mode changes between steps; [] without modes."""
    modes = job.get("graph_modes")
    if not modes:
        return []
    total = len(job.get("ranks") or [])
    counted = modes["ranks"]
    which = f"all {counted} ranks" if counted == total else f"the {counted} ranks with steps (of {total})"
    if not modes["differ"] and not modes["changing"]:
        return [f"graph modes: {modes['usual']} in every step of {which}"]
    lines = [f"graph modes: usually {modes['usual']} ({modes['by_mode'][modes['usual']]} of {which})"]
    for d in modes["differ"][:MOST_NAMED]:
        counts = ", ".join(f"{n} {mode}" for mode, n in d["step_modes"].items())
        lines.append(f"rank {d['rank']} runs {d['mode']}, unlike the others ({counts} steps)")
    if len(modes["differ"]) > MOST_NAMED:
        lines.append(f"and {len(modes['differ']) - MOST_NAMED:,} more ranks unlike the others")
    for c in modes["changing"][:MOST_NAMED]:
        shown = "; ".join(f"{x['step']}: {x['from']} to {x['to']}" + (" and back" if x["returns"] else "")
                          for x in c["changes"][:3])  # fmt: skip
        more = f" and {c['count'] - 3} more" if c["count"] > 3 else ""
        lines.append(f"rank {c['rank']} changes mode in {c['count']} step{'s' * (c['count'] != 1)} ({shown}{more})")
    if len(modes["changing"]) > MOST_NAMED:
        lines.append(f"and {len(modes['changing']) - MOST_NAMED:,} more ranks that change mode")
    return lines


def where_analysed(engine: dict[str, Any]) -> str:
    """Where and how long a rank job ran: 'by 2 local worker processes in 1.2 s' (the text and the GUI)."""
    scheduler = engine.get("scheduler", "local")
    workers = engine.get("workers", "?")
    where = {
        "local": f"by {workers} local worker process{'' if workers == 1 else 'es'}",
        "in-process": "in one process (small ranks: workers would not repay their start)",
    }.get(scheduler, f"by {workers} workers of the Dask scheduler at {scheduler}")
    return f"{where} in {engine.get('seconds', 0):.1f} s"


def render_ranks(job: dict[str, Any]) -> str:
    job = printable_tree(job)  # rank files' and ranges' names with their terminal controls escaped
    ranks, steps = job["ranks"], job["steps"]
    world = f" (world size {job['world_size']})" if job.get("world_size") else ""
    lines = [
        f"{len(ranks)} ranks of one job{world}, {len(steps)} steps of {job.get('step_name') or '-'}; analysed "
        f"{where_analysed(job.get('engine', {}))}",
        "",
        f"Verdict: {job['verdict']}",
    ]
    if job.get("missing_ranks"):
        more = job.get("missing_count", 0) - len(job["missing_ranks"][:32])
        shown = ", ".join(map(str, job["missing_ranks"][:32]))
        lines.append(f"  missing ranks: {shown}" + (f" and {more:,} more" if more > 0 else ""))
    lines += [f"  left out: {problem}" for problem in job["problems"]]
    lines += [f"  skipped: {entry}" for entry in job.get("skipped", [])]
    if steps:
        starts, ends = [s["start_skew_ns"] for s in steps], [s["end_skew_ns"] for s in steps]
        lines.append(
            f"  step skew across ranks: starts {format_ns(median(starts))} median, {format_ns(max(starts))} max; "
            f"ends {format_ns(median(ends))} median, {format_ns(max(ends))} max"
        )
    lines += [f"  {line}" for line in mode_lines(job)]  # a rank whose graph mode differs is named
    lines += ["", f"  {'rank':>5} {'median step':>12} {'GPU busy':>9} {'straggler':>10}  launch verdict (of its file)"]
    for r in ranks:
        busy = f"{r['step_gpu_busy']:.0%}" if r.get("step_gpu_busy") is not None else "-"
        step = format_ns(r["median_step_ns"]) if r.get("median_step_ns") is not None else "-"
        verdict = (r.get("verdict") or "").split(":")[0]
        where = f"  ({r['unit']} of {r['path']})" if r.get("unit") else ""
        lines.append(f"  {r['rank']:>5} {step:>12} {busy:>9} {r['straggler_steps']:>10}  {verdict}{where}")
    late = [s for s in steps if s["held_by"] in ("GPU work", "host (CPU)", "communication")]
    if late:
        head = f"  {'step':>5} {'straggler':>9} {'late by':>10} {'allowed':>10} {'held by':<18} {'its GPU busy':>12}"
        lines += ["", head]
        for s in sorted(late, key=lambda s: -s["late_ns"])[:20]:
            allowed = format_ns(s["threshold_ns"]) if "threshold_ns" in s else "-"
            lines.append(
                f"  {s['step']:>5} {s['straggler']:>9} {format_ns(s['late_ns']):>10} {allowed:>10} {s['held_by']:<18} "
                f"{s['straggler_gpu_busy']:>12.0%}"
            )
    return "\n".join(lines)

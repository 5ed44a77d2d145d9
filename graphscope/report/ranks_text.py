"""A rank job (ranks/job.py) as text: the verdict, what was left out, each rank, and the late steps."""

from __future__ import annotations

from statistics import median
from typing import Any

from graphscope.core.text import printable_tree
from graphscope.core.units import format_ns
from graphscope.ranks.modes import mode_lines


def render_ranks(job: dict[str, Any]) -> str:
    job = printable_tree(job)  # rank files' and ranges' names with their terminal controls escaped
    engine = job.get("engine", {})
    ranks, steps = job["ranks"], job["steps"]
    world = f" (world size {job['world_size']})" if job.get("world_size") else ""
    lines = [
        f"{len(ranks)} ranks of one job{world}, {len(steps)} steps of {job.get('step_name') or '-'}; analysed on "
        f"Dask ({engine.get('scheduler', 'local')}, {engine.get('workers', '?')} workers) in "
        f"{engine.get('seconds', 0):.1f} s",
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
    late = [s for s in steps if s["held_by"] in ("GPU work", "launch-bound host", "communication")]
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

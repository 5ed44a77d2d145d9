"""Across the ranks of one job: each step's skew, its straggler, and what the straggler waited on.

Input: one `rank_row` per rank file (ranks/job.py gathers them from Dask workers), each with its steps
(analysis/rank_steps.py) or the error that kept it out. Step k of every rank is the k-th step range.
Per step: the skew of its starts and of its ends across ranks; the straggler, the rank that reached
the step's first collective last (without collectives, the rank that ended last), and how late it was
against the median rank; and what held it: its GPU was busy with its own kernels for most of the time
before the collective (`GPU work`), or it was not (`launch-bound host`: the GPU waited for launches).
A step in which no rank is later than the larger of 2 us, 5% of the median step and four median absolute
deviations of the arrivals (the ranks' ordinary jitter) is `on time`; one whose median rank spends most of
the step in communication kernels is `communication`.
"""

from __future__ import annotations

from collections import Counter
from statistics import median
from typing import Any

import numpy as np

STRAGGLER_MIN_NS = 2_000
STRAGGLER_MIN_SHARE = 0.05  # of the median step: a rank later than this (and than the jitter) is a straggler
JITTER_MADS = 4  # and later than this many median absolute deviations of the ranks' arrivals
GPU_BOUND_SHARE = 0.6  # the straggler's GPU busy this share of its time before the collective: GPU work


def _job(row: dict[str, Any]) -> tuple:
    job = row.get("job") or {}
    return (job.get("world_size"), job.get("pg_config") or job.get("backend"))


def combine(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The job's cross-rank view (see the module docstring) from per-rank rows."""
    problems = [f"{r['path']}: {r['error']}" for r in rows if r.get("error")]
    good = [r for r in rows if not r.get("error")]
    jobs = Counter(_job(r) for r in good)
    if len(jobs) > 1:
        main = jobs.most_common(1)[0][0]
        for r in good:
            if _job(r) != main:
                problems.append(
                    f"{r['path']}: another job's rank (world size {_job(r)[0]}, group {_job(r)[1]}; the others: "
                    f"world size {main[0]}, group {main[1]}): left out"
                )
        good = [r for r in good if _job(r) == main]
    seen: dict[int, str] = {}
    for r in list(good):
        if r["rank"] is None or r["rank"] in seen:
            why = (
                "no rank in the file or its name"
                if r["rank"] is None
                else f"rank {r['rank']} again ({seen[r['rank']]})"
            )
            problems.append(f"{r['path']}: {why}: left out")
            good.remove(r)
        else:
            seen[r["rank"]] = r["path"]
    good.sort(key=lambda r: r["rank"])
    world = (good[0].get("job") or {}).get("world_size") if good else None
    missing = sorted(set(range(int(world))) - set(seen)) if world and str(world).isdigit() else []
    steps = min((len(r["start"]) for r in good), default=0)
    if good and any(len(r["start"]) != steps for r in good):
        problems.append(f"ranks hold {min(len(r['start']) for r in good)}-{max(len(r['start']) for r in good)} "
                        f"steps: the first {steps} of each are compared")  # fmt: skip
    step_rows = _steps(good, steps) if good and steps else []
    stragglers = Counter(s["straggler"] for s in step_rows if s["held_by"] not in ("on time", "communication"))
    ranks = [
        {
            "rank": r["rank"],
            "path": r["path"],
            "events": r.get("events"),
            "verdict": r.get("verdict"),
            "launch_bound": r.get("launch_bound"),
            "gpu_utilization": r.get("gpu_utilization"),
            "graph_launches": r.get("graph_launches"),
            "median_step_ns": float(median(np.subtract(r["end"][:steps], r["start"][:steps]))) if steps else None,
            "straggler_steps": stragglers.get(r["rank"], 0),
        }
        for r in good
    ]
    return {
        "ranks": ranks,
        "steps": step_rows,
        "late_ns": _lateness(good, steps),
        "step_name": good[0]["step_name"] if good else None,
        "world_size": world,
        "missing_ranks": missing,
        "problems": problems,
        "verdict": _verdict(ranks, step_rows, stragglers),
    }


def _lateness(good: list[dict[str, Any]], steps: int) -> list[list[int]]:
    """Per rank (rows, in rank order) and step: its arrival at the collective after the median rank's (ns)."""
    if not good or not steps:
        return []
    arrive = np.array([r["arrive"][:steps] for r in good], dtype=np.int64)
    return (arrive - np.median(arrive, axis=0)).astype(np.int64).tolist()


def _steps(good: list[dict[str, Any]], steps: int) -> list[dict[str, Any]]:
    def matrix(key: str) -> np.ndarray:
        return np.array([r[key][:steps] for r in good], dtype=np.int64)

    start, end, arrive = matrix("start"), matrix("end"), matrix("arrive")
    busy, comm = matrix("compute_busy_ns"), matrix("comm_ns")
    ranks = [r["rank"] for r in good]
    rows = []
    for k in range(steps):
        late = arrive[:, k]
        who = int(np.argmax(late))
        lateness = int(late[who] - np.median(late))
        duration = float(np.median(end[:, k] - start[:, k]))
        window = max(int(arrive[who, k] - start[who, k]), 1)
        gpu_share = float(busy[who, k]) / window
        jitter = JITTER_MADS * float(np.median(np.abs(late - np.median(late))))
        if lateness <= max(STRAGGLER_MIN_NS, STRAGGLER_MIN_SHARE * duration, jitter):
            held = "communication" if float(np.median(comm[:, k])) >= 0.5 * duration else "on time"
        else:
            held = "GPU work" if gpu_share >= GPU_BOUND_SHARE else "launch-bound host"
        rows.append(
            {
                "step": k,
                "start_skew_ns": int(start[:, k].max() - start[:, k].min()),
                "end_skew_ns": int(end[:, k].max() - end[:, k].min()),
                "median_step_ns": duration,
                "straggler": ranks[who],
                "late_ns": lateness,
                "held_by": held,
                "straggler_gpu_busy": gpu_share,
                "median_comm_ns": float(np.median(comm[:, k])),
            }
        )
    return rows


def _verdict(ranks: list[dict[str, Any]], steps: list[dict[str, Any]], stragglers: Counter) -> str:
    if not ranks:
        return "no rank could be analysed"
    if not steps:
        return f"{len(ranks)} ranks, but no step ranges to align them by (ProfilerStep#N, or --step NAME)"
    late = [s for s in steps if s["held_by"] in ("GPU work", "launch-bound host")]
    if not late:
        return f"{len(ranks)} ranks arrive together in all {len(steps)} steps: no straggler"
    rank, count = stragglers.most_common(1)[0]
    causes = Counter(s["held_by"] for s in late if s["straggler"] == rank)
    cause, _ = causes.most_common(1)[0]
    worst = max(late, key=lambda s: s["late_ns"])
    return (
        f"rank {rank} holds the job back in {count} of {len(steps)} steps (mostly {cause}); the latest arrival at "
        f"a collective: rank {worst['straggler']} in step {worst['step']}, {worst['late_ns'] / 1e3:,.1f} us after "
        f"the median rank ({worst['held_by']})"
    )

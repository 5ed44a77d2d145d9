"""Across the ranks of one job: each step's skew, its straggler, and what the straggler waited on.

Input: one row per rank (ranks/job.py gathers them from Dask workers, ranks/identity.py numbers them),
each with its steps (analysis/rank_steps.py). Step k of every rank is the k-th step range. Per step:
the skew of its starts and of its ends across ranks; the straggler, the rank that reached the step's
first collective last (without collectives, the rank whose step ended last: its CPU range or the GPU
work launched in it), and how late it was against the median of the other ranks (with two ranks: the
other rank). It is late when that exceeds the larger of a floor (2 us, and 5% of the other ranks'
median step) and a jitter allowance: z standard deviations of one rank's arrival noise, times the
spread of (one rank - the reference) per rank's (sqrt 2 with two ranks, where the other rank's noise
adds its own; sqrt(1 + pi / (2 (n - 1))) for the median of n - 1 others). The noise: each rank's
arrival after its step's start, less what the step's ranks share and less the rank's own median over
steps, as 1.4826 x the median absolute value of those residuals (`_spread` says how, and what two ranks
do instead). z: the normal quantile that the latest of n plain arrivals exceeds in one step in 1,000
(3.3 at 2 ranks, 3.4 at 3, 3.5 at 4, 4.2 at 64), widened as Student's t for the estimate's degrees of
freedom ((n - 1) x steps residuals, at a MAD's 37% efficiency). Measured on generated ranks
(benchmarks/straggler_rule.py): see the README. A MAD of the arrivals themselves cannot serve at two
ranks: it is half their gap, so no multiple of it flags the later one.

What held a late rank: `GPU work` when its GPU was busy (before the collective) longer than the other
ranks' median by at least half its lateness, else `host (CPU)` (its GPU did no more work than the others:
the rank came late from its CPU side, not necessarily launch-bound).
A step with no late rank is `on time`, or `communication` when its median rank spends half the step
or more in communication kernels.
"""

from __future__ import annotations

import math
from collections import Counter
from statistics import NormalDist, median
from typing import Any

import numpy as np

from graphscope.core.units import format_ns

STRAGGLER_MIN_NS = 2_000
STRAGGLER_MIN_SHARE = 0.05  # of the median step: a rank later than this (and than the jitter) is a straggler
FALSE_ALARM = 0.001  # the share of steps of plain jitter in which the latest rank may still be called late
MAD_TO_SD = 1.4826  # a normal distribution's standard deviation per median absolute deviation
GPU_SHARE_OF_LATENESS = 0.5  # extra GPU time (over the others' median) that explains a lateness: GPU work


MAD_EFFICIENCY = 0.37  # a MAD's variance as an estimate of the sd is that of an sd from 0.37x as many samples


def jitter_z(ranks: int, samples: int | None = None) -> float:
    """The standard deviations of jitter the latest of `ranks` arrivals exceeds in one step in 1/FALSE_ALARM;
    with the deviation estimated from `samples` values, Student's t for the MAD's effective degrees of
    freedom (Cornish-Fisher expansion of the normal quantile), so a low estimate does not raise alarms."""
    z = NormalDist().inv_cdf(1 - FALSE_ALARM / max(ranks, 1))
    if not samples:
        return z
    df = max(MAD_EFFICIENCY * samples, 1.0)
    return z + (z**3 + z) / (4 * df) + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * df**2)


def combine(rows: list[dict[str, Any]], world: int | None = None) -> dict[str, Any]:
    """The job's cross-rank view (see the module docstring) from numbered per-rank rows."""
    good = sorted(rows, key=lambda r: r["rank"])
    problems: list[str] = []
    steps = min((len(r["start"]) for r in good), default=0)
    if good and any(len(r["start"]) != steps for r in good):
        problems.append(f"ranks hold {min(len(r['start']) for r in good)}-{max(len(r['start']) for r in good)} "
                        f"steps: the first {steps} of each are compared")  # fmt: skip
    step_rows, late, busy = _steps(good, steps) if good and steps else ([], [], [])
    stragglers = Counter(s["straggler"] for s in step_rows if s["held_by"] not in ("on time", "communication"))
    ranks = []
    for r in good:
        durations = np.subtract(r["end"][:steps], r["start"][:steps])
        ranks.append({
            "rank": r["rank"],
            "path": r["path"],
            "unit": r.get("unit"),
            "events": r.get("events"),
            "verdict": r.get("verdict"),
            "launch_bound": r.get("launch_bound"),
            "gpu_utilization": r.get("gpu_utilization"),
            "step_gpu_busy": float(np.sum(r["gpu_busy_ns"][:steps]) / max(int(durations.sum()), 1)) if steps else None,
            "graph_launches": r.get("graph_launches"),
            "median_step_ns": float(median(durations)) if steps else None,
            "straggler_steps": stragglers.get(r["rank"], 0),
        })  # fmt: skip
    return {
        "ranks": ranks,
        "steps": step_rows,
        "late_ns": late,
        "gpu_busy": busy,
        "step_name": good[0]["step_name"] if good else None,
        "world_size": world,
        "problems": problems,
        "verdict": _verdict(ranks, step_rows, stragglers, any(r.get("communication_kernels") for r in good)),
    }


def _steps(good: list[dict[str, Any]], steps: int) -> tuple[list[dict[str, Any]], list[list[int]], list[list[float]]]:
    """(a row per step, each rank's lateness at each step, each rank's GPU busy share at each step)."""

    def matrix(key: str) -> np.ndarray:
        return np.array([r[key][:steps] for r in good], dtype=np.int64)

    start, end, arrive = matrix("start"), matrix("end"), matrix("arrive")
    base = int(start.min())  # wall-clock times near 1.8e18 ns lose 256 ns in float64: medians of offsets
    start, end, arrive = start - base, end - base, arrive - base
    busy, comm, gpu = matrix("compute_busy_ns"), matrix("comm_ns"), matrix("gpu_busy_ns")
    count = len(good)
    ranks = [r["rank"] for r in good]
    who = np.argmax(arrive, axis=0)
    cols = np.arange(steps)
    if count >= 3:
        reference = np.median(np.sort(arrive, axis=0)[:-1], axis=0)  # the median of all but the latest
        late_matrix = arrive - np.median(arrive, axis=0)
    else:
        reference = arrive.min(axis=0) if count == 2 else arrive[0]
        late_matrix = arrive - reference
    spread, samples = _spread(arrive, start)
    jitter = jitter_z(count, samples) * _reference_factor(count) * spread
    lateness = arrive[who, cols] - reference
    durations = end - start
    # the floor is a share of the other ranks' median step: a late rank's own step is as long as its lateness
    others = np.delete(durations.T.ravel(), cols * count + who).reshape(steps, count - 1) if count >= 2 else None
    duration = np.median(others, axis=1) if others is not None else durations[0].astype(np.float64)
    threshold = np.maximum(np.maximum(STRAGGLER_MIN_NS, STRAGGLER_MIN_SHARE * duration), jitter)
    rows = []
    for k in range(steps):
        w = int(who[k])
        rest = np.delete(busy[:, k], w)
        extra_gpu = float(busy[w, k] - (np.median(rest) if len(rest) else 0))
        window = max(int(arrive[w, k] - start[w, k]), 1)
        median_comm = float(np.median(comm[:, k]))
        if lateness[k] <= threshold[k]:
            held = "communication" if median_comm >= 0.5 * duration[k] else "on time"
        else:
            held = "GPU work" if extra_gpu >= GPU_SHARE_OF_LATENESS * lateness[k] else "host (CPU)"
        rows.append(
            {
                "step": k,
                "start_skew_ns": int(start[:, k].max() - start[:, k].min()),
                "end_skew_ns": int(end[:, k].max() - end[:, k].min()),
                "median_step_ns": float(duration[k]),
                "straggler": ranks[w],
                "late_ns": int(lateness[k]),
                "threshold_ns": int(threshold[k]),
                "held_by": held,
                "straggler_gpu_busy": float(busy[w, k]) / window,
                "straggler_extra_gpu_ns": int(extra_gpu),
                "median_comm_ns": median_comm,
            }
        )
    share = np.round(gpu / np.maximum(end - start, 1), 4)
    return rows, late_matrix.astype(np.int64).tolist(), share.tolist()


def _reference_factor(count: int) -> float:
    """The standard deviation of (one rank - the reference) per rank's: the other rank's noise adds its
    own with two ranks; the median of n - 1 others has variance pi / (2 (n - 1)) of one rank's."""
    return math.sqrt(2) if count <= 2 else math.sqrt(1 + math.pi / (2 * (count - 1)))


def _spread(arrive: np.ndarray, start: np.ndarray) -> tuple[float, int]:
    """(one rank's ordinary jitter as a standard deviation in ns, the independent values it rests on).

    With 3 steps or more, from each rank's arrival after its step's start, less what the step's ranks
    share (their mean with two ranks; with more, the median of all but the step's latest rank, so that a
    straggler's lateness moves no other rank's value) and less the rank's own median over steps (a
    constant offset is no jitter, and a rank late in every step stays late): 1.4826 x the median absolute
    value of those residuals, scaled up for the centring ((1 - 1/n)(1 - 1/steps) of the variance is
    left). With two ranks, the residuals are each half the gap, which a rank late in many steps swells:
    the calmer rank's own spread across steps (what every step shares included) is taken when smaller.
    With fewer steps: across ranks within the steps (the median of the steps' MADs); none with two."""
    count, steps = arrive.shape
    if steps >= 3 and count >= 2:
        offset = arrive - start
        shared = np.median(np.sort(offset, axis=0)[:-1], axis=0) if count >= 3 else offset.mean(axis=0)
        centred = offset - shared
        residual = centred - np.median(centred, axis=1, keepdims=True)
        sd = MAD_TO_SD * float(np.median(np.abs(residual))) / math.sqrt((1 - 1 / count) * (1 - 1 / steps))
        if count == 2:
            own = np.abs(offset - np.median(offset, axis=1, keepdims=True))
            sd = min(sd, MAD_TO_SD * float(np.median(own, axis=1).min()))
        return sd, (count - 1) * steps  # two ranks' residuals are each other's negatives: steps values
    if count >= 3:
        others = np.sort(arrive, axis=0)[:-1]
        mad = np.median(np.abs(others - np.median(others, axis=0)), axis=0)
        return MAD_TO_SD * float(np.median(mad)), others.size
    return 0.0, 0


def _verdict(ranks: list[dict[str, Any]], steps: list[dict[str, Any]], stragglers: Counter, collectives: bool) -> str:
    if not ranks:
        return "no rank could be analysed"
    if not steps:
        return f"{len(ranks)} ranks, but no step ranges to align them by (ProfilerStep#N, or --step NAME)"
    late = [s for s in steps if s["held_by"] in ("GPU work", "host (CPU)")]
    if not late:
        return f"{len(ranks)} ranks arrive together in all {len(steps)} steps: no straggler"
    count = stragglers.most_common(1)[0][1]
    tied = sorted(r for r, c in stragglers.items() if c == count)  # never one rank named where others tie
    causes = [Counter(s["held_by"] for s in late if s["straggler"] == r).most_common(1)[0][0] for r in tied]
    if len(tied) == 1:
        who = f"rank {tied[0]} holds the job back in {count} of {len(steps)} steps (mostly {causes[0]})"
    else:
        named = ", ".join(f"rank {r}: {c}" for r, c in zip(tied[:3], causes))
        more = f" and {len(tied) - 3} more" if len(tied) > 3 else ""
        ranks_named = " and ".join(str(r) for r in tied) if len(tied) == 2 else ", ".join(map(str, tied[:3])) + more
        who = f"ranks {ranks_named} each hold the job back in {count} of {len(steps)} steps ({named}{more})"
    worst = max(late, key=lambda s: s["late_ns"])
    latest = "the latest arrival at a collective" if collectives else "the latest end of a step"
    return (
        f"{who}; {latest}: "
        f"rank {worst['straggler']} in step {worst['step']}, {format_ns(worst['late_ns'])} after "
        f"the {'other rank' if len(ranks) == 2 else 'median rank'} ({worst['held_by']})"
    )

"""Compare two sides (or describe one): the report every format renders, as versioned JSON.

The schema, `graphscope-report/1` (README: Reports):

    format, title, created, a, b (null for a one-sided report), comparison (null likewise),
    kernels: [{key, name, full_name, status, a, b, ratio}], notes

- `a`/`b`: label, kind (trace|run), source, scope, steps, per_step {metric: stats}, verdict,
  overhead_ratio, steady_overhead_ratio, judged (the verdict's number: label and value).
- `comparison.metrics[metric]`: a and b medians per step, `saved` (a - b), and for time metrics the
  speed-up a/b as a ratio of medians with a bootstrap 95% interval (`value`, `low`, `high`,
  `significant`); `comparison.verdicts`: the seeds' 15% launch-overhead rule on side A, and the 20%
  gain rule on the end-to-end speed-up (never judged on fewer than MIN_STEPS steps per side).
- kernel `status`: same, changed (configuration, or a median duration that moved by more than
  CHANGED_BY with an interval excluding 1), added (only in b), removed (only in a), not traced (absent
  from a side that runs graphs under graph-level tracing, which records no kernels inside graphs).
- `comparison.verdicts.traced`: a warning when the sides were traced differently (headlined first).
"""

from __future__ import annotations

import datetime as dt
from typing import Any

import numpy as np

from graphscope.core.rules import judge_gain
from graphscope.core.stats import comparable, describe, speedup
from graphscope.core.units import format_ns
from graphscope.report.formats import headline  # noqa: F401 (the report's headline, beside its making)
from graphscope.report.sides import METRICS, KernelRow, Side
from graphscope.text.anatomy import anatomy_tables

FORMAT = "graphscope-report/1"
MIN_STEPS = 3
CHANGED_BY = 0.05
TIME_METRICS = ("wall_ns", "gpu_busy_ns", "submit_ns")


def build_report(a: Side, b: Side | None = None, title: str | None = None) -> dict[str, Any]:
    """The report of one side, or of A against B."""
    title = title or (f"{a.label} vs {b.label}" if b is not None else a.label)
    report = {
        "format": FORMAT,
        "title": title,
        "created": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "a": _side_json(a),
        "b": _side_json(b) if b is not None else None,
        "comparison": _comparison(a, b) if b is not None else None,
        "kernels": _kernels(a, b),
        "notes": [f"{s.label}: {n}" for s in (a, b) if s is not None for n in s.notes],
    }
    steps = anatomy_tables([(s.label, s.summary) for s in (a, b) if s is not None])  # analysis/anatomy.py
    modules = [module_table(s, name) for s, name in ((a, "A"), (b, "B")) if s is not None and s.modules]
    if steps or modules:
        report["tables"] = [*steps, *modules]
    return report


def module_table(side: Side, name: str) -> dict[str, Any]:
    """Time by module inside graphs: one side's replayed graph time per nn.Module path."""
    rows = [[m["module"], m["nodes"], format_ns(m["gpu_ns"]), f"{m['share']:.1%}"] for m in side.modules]
    return {
        "title": f"Time by module inside graphs ({name}: {side.label}, every replay in the trace)",
        "columns": ["module", "nodes", "GPU time", "share of graph time"],
        "rows": rows,
        "raw_columns": ["module", "nodes", "gpu_ns", "share"],
        "raw": [[m["module"], m["nodes"], m["gpu_ns"], m["share"]] for m in side.modules],
    }


def _stats(values: np.ndarray) -> dict[str, float] | None:
    values = values[~np.isnan(values)]
    if not len(values):
        return None
    stats = describe(values)
    return {"n": stats.n, "median": stats.median, "ci_low": stats.ci_low, "ci_high": stats.ci_high}


def _side_json(side: Side) -> dict[str, Any]:
    launch = side.summary["launch"] if side.summary else {}
    return {
        "label": side.label,
        "kind": side.kind,
        "source": side.source,
        "scope": side.scope,
        "steps": side.step_count,
        "per_step": {metric: _stats(side.steps[metric]) for metric in METRICS},
        "verdict": launch.get("verdict"),
        "launch_bound": launch.get("launch_bound"),
        "overhead_ratio": launch.get("overhead_ratio"),
        "steady_overhead_ratio": launch.get("steady_state", {}).get("overhead_ratio"),
        "judged": launch.get("judged"),
        "kernels": side.summary["kernels"]["count"] if side.summary else None,
    }


def _comparison(a: Side, b: Side) -> dict[str, Any]:
    metrics: dict[str, Any] = {}
    for metric in METRICS:
        left, right = a.steps[metric], b.steps[metric]
        left, right = left[~np.isnan(left)], right[~np.isnan(right)]
        if not len(left) or not len(right):
            continue
        entry: dict[str, Any] = {
            "a_median": float(np.median(left)),
            "b_median": float(np.median(right)),
            "saved": float(np.median(left) - np.median(right)),
        }
        if metric in TIME_METRICS and comparable(left, right):
            entry["speedup"] = speedup(left, right).to_json() if min(len(left), len(right)) >= 2 else None
        metrics[metric] = entry
    return {"metrics": metrics, "verdicts": _verdicts(a, b, metrics)}




def traced_differently(a: Side, b: Side) -> str | None:
    """A warning when the two sides were not traced alike (graph trace mode, GPU, profiler, Nsight Systems
    version)."""
    problems = _tracing(a, b)
    if a.summary is None or b.summary is None:
        return None
    gpus = [sorted({g["name"] for g in side.summary.get("gpu", []) if g.get("name")}) for side in (a, b)]
    if gpus[0] and gpus[1] and gpus[0] != gpus[1]:
        problems.append(f"on {', '.join(gpus[0])} against {', '.join(gpus[1])}")
    versions = a.summary.get("nsys_version"), b.summary.get("nsys_version")
    if versions[0] != versions[1] and all(versions):
        problems.append(f"Nsight Systems {versions[0]} against {versions[1]}")
    return "the sides were traced differently: " + "; ".join(problems) if problems else None


def _tracing(a: Side, b: Side) -> list[str]:
    """The differences in tracing that change launch and step times themselves (graph trace mode, the
    profiler): with any of them, the gain cannot be told from the tracing's own cost."""
    if a.summary is None or b.summary is None:
        return []
    problems = []
    modes = a.summary.get("graph_trace_mode"), b.summary.get("graph_trace_mode")
    if modes[0] != modes[1] and all(modes):
        problems.append(
            f"graph trace mode {modes[0]} against {modes[1]}: node-level tracing slows every launch call, and "
            "graph-level tracing records no kernels inside graphs, so launch times and kernel lists differ by "
            "how they were traced"
        )
    tracers = [_tracer(side.summary) for side in (a, b)]
    if tracers[0] != tracers[1]:
        problems.append(
            f"{tracers[0]} against {tracers[1]}: each profiler adds its own cost to every launch call (measured "
            "on the H200: torch.profiler made a 1,000-node graph launch 1.56 ms, Nsight Systems' node-level "
            "tracing slowed the same step by 130%), so launch and idle times differ by who traced them"
        )
    return problems


def _no_gain_verdict(a: Side, b: Side, wall: dict[str, Any] | None) -> str | None:
    """The gain line when the sides' tracing differs in a way that changes times (None otherwise): the
    ratio is stated, never judged."""
    if not _tracing(a, b):
        return None
    ratio = ""
    if wall is not None and wall["a_median"] > 0 and wall["b_median"] > 0:
        ratio = f" ({wall['a_median'] / wall['b_median']:.2f}x end to end)"
    if a.program is not None and a.program == b.program:
        why = f"the same program ({a.program}) traced two ways: the difference in time{ratio} is the tracing's"
    else:
        why = f"the sides were traced differently, so the difference in time{ratio} includes the tracing's own cost"
    return f"no gain verdict: {why}; trace both the same way to compare them"


def _tracer(summary: dict[str, Any]) -> str:
    return "PyTorch's profiler" if "Kineto" in (summary.get("platform") or "") else "Nsight Systems"


def _verdicts(a: Side, b: Side, metrics: dict[str, Any]) -> dict[str, str]:
    verdicts = {}
    warning = traced_differently(a, b)
    if warning:
        verdicts["traced"] = warning
    launch = (a.summary or {}).get("launch")
    if launch:
        verdicts["launch_overhead"] = f"{a.label}: {launch['verdict']}"
    wall = metrics.get("wall_ns")
    steps = min(a.step_count, b.step_count)
    withheld = _no_gain_verdict(a, b, wall)
    if withheld is not None:
        verdicts["gain"] = withheld
    elif wall is None:
        verdicts["gain"] = "no end-to-end time to compare"
    elif not (wall["a_median"] > 0 and wall["b_median"] > 0):
        verdicts["gain"] = "no end-to-end time to compare: a side's steps last 0 ns (its scope holds no time)"
    elif steps < MIN_STEPS or wall.get("speedup") is None:
        verdicts["gain"] = (
            f"{wall['a_median'] / wall['b_median']:.2f}x end to end, from {steps} step(s) per side: too few "
            f"for an interval (the rule needs a median of at least {MIN_STEPS}); repeat the measurement"
        )
    else:
        ratio = wall["speedup"]
        saved = format_ns(wall["saved"]) if wall["saved"] >= 0 else f"-{format_ns(-wall['saved'])}"
        interval = f"95% interval {ratio['low']:.2f}-{ratio['high']:.2f}x"
        if not ratio["significant"]:
            verdicts["gain"] = f"no significant difference: {ratio['value']:.2f}x end to end, {interval} includes 1"
        else:
            word, why = judge_gain(ratio["value"])
            judged = f"{word} ({why})"
            verdicts["gain"] = (
                f"{b.label} is {ratio['value']:.2f}x {a.label} end to end ({interval}, medians of "
                f"{a.step_count} and {b.step_count} steps), {saved} saved per step: {judged}"
            )
    return verdicts


def _kernels(a: Side, b: Side | None) -> list[dict[str, Any]]:
    """Kernel rows matched by identity and configuration; a kernel whose only configuration changed
    is one row with status 'changed'."""
    left = {(k.identity, k.grid, k.block): k for k in a.kernels}
    right = {(k.identity, k.grid, k.block): k for k in (b.kernels if b is not None else [])}
    pairs: list[tuple[KernelRow | None, KernelRow | None]] = []
    matched = set()
    for key, x in left.items():
        y = right.get(key)
        mine = [k for k in left if k[0] == key[0]]
        theirs = [k for k in right if k[0] == key[0]]
        if y is None and len(mine) == 1 and len(theirs) == 1:  # one configuration each side: re-configured
            y = right[theirs[0]]
        if y is not None:
            matched.add((y.identity, y.grid, y.block))
        pairs.append((x, y))
    pairs += [(None, y) for key, y in right.items() if key not in matched]
    hidden = (graph_kernels_hidden(a), graph_kernels_hidden(b))
    rows = []
    for x, y in sorted(pairs, key=lambda p: (p[0].order if p[0] else 10**12, p[1].order if p[1] else 0)):
        first = x or y
        row: dict[str, Any] = {
            "key": f"{'x'.join(map(str, first.grid))}/{'x'.join(map(str, first.block))} {first.full_name}",
            "name": first.name,
            "full_name": first.full_name,
            "a": x.to_json(a.kernel_step_count) if x else None,
            "b": y.to_json(b.kernel_step_count) if y and b is not None else None,
        }
        row["status"], row["ratio"] = _status(x, y, b is not None, hidden)
        rows.append(row)
    return rows


def graph_kernels_hidden(side: Side | None) -> bool:
    """Does this side run graphs whose kernels its trace does not record (graph-level tracing)?"""
    summary = side.summary if side is not None else None
    return bool(summary and summary.get("graph_trace_mode") == "graph" and summary["graphs"]["launches"])


def _status(
    x: KernelRow | None, y: KernelRow | None, compared: bool, hidden: tuple[bool, bool] = (False, False)
) -> tuple[str, dict[str, Any] | None]:
    if not compared:
        return "", None
    if y is None:
        return ("not traced" if hidden[1] else "removed"), None
    if x is None:
        return ("not traced" if hidden[0] else "added"), None
    if len(x.durations) < 2 or len(y.durations) < 2 or not comparable(x.durations, y.durations):
        return ("changed" if (x.grid, x.block) != (y.grid, y.block) else "same"), None
    ratio = speedup(x.durations, y.durations).to_json()
    moved = ratio["significant"] and abs(ratio["value"] - 1) > CHANGED_BY
    return ("changed" if moved or (x.grid, x.block) != (y.grid, y.block) else "same"), ratio

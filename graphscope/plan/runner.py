"""`graphscope plan`: measure each batch size in a workload child, then choose the sizes to capture.

The measurement runs once per size in one child (largest first, one memory pool), and once more with
the sizes captured smallest first, only to measure how the order changes the memory taken (the order
effect). The plan itself is pure (plan/optimizer.py) and can be recomputed from the stored
measurements with other traffic or budgets.
"""

from __future__ import annotations

import bisect
import time
from pathlib import Path
from typing import Any

from graphscope.core.progress import CancelToken, ProgressCallback, no_progress
from graphscope.core.records import Recorder
from graphscope.core.rules import PLAN_EXPECTED, PLAN_PREDICTED, PLAN_SWITCHING
from graphscope.plan.explain import kept_under_rule
from graphscope.plan.optimizer import Choice, SizeCost, evaluate, plan
from graphscope.workload.session import DEFAULT_TIMEOUT_S, WorkloadSession

FORMAT = "graphscope-plan/1"
MAX_UNIFORM = 65_536
"""Without --traffic every size up to the largest measured is equally likely: one weight per size. A
stored plan edited to a size of 2**31-1 made two billion of them (killed for memory; 1,048,576 took
9.5 s and 326 MB here), so above this a traffic file is asked for (benchmarks/fuzz_ranks_plans.py)."""
MEASURED = ("format", "workload", "started", "finished", "reps", "environment", "measurements", "order_effect")
"""What `measure` produced: all a stored plan gives a re-plan (its results are made again)."""


def measure(
    workload: Path,
    sizes: list[int] | None,
    reps: int = 20,
    warmup: int = 3,
    timeout: float = DEFAULT_TIMEOUT_S,
    order_check: bool = True,
    progress: ProgressCallback = no_progress,
    cancel: CancelToken | None = None,
) -> dict[str, Any]:
    """Per-size measurements (workload/child/sizes.py) and, with `order_check`, the smallest-first memory."""
    started = time.time()
    progress(0.05, f"loading {Path(workload).name} in a child process")
    with WorkloadSession(Path(workload), None, timeout, cancel, sizes=sizes) as session:
        chosen = sizes or session.info.get("sizes") or []
        progress(0.1, f"measuring {len(chosen)} batch sizes, largest first")
        largest = session.request("sizes", sizes=chosen, reps=reps, warmup=warmup, order="largest")
        environment = session.info["environment"]
    smallest = None
    if order_check and len(chosen) > 1:
        progress(0.8, "capturing them again smallest first (the order effect on memory)")
        with WorkloadSession(Path(workload), None, timeout, cancel, sizes=sizes) as session:
            smallest = session.request("sizes", sizes=chosen, reps=2, warmup=1, order="smallest")
    progress(1.0, "measured")
    return {
        "format": FORMAT,
        "workload": str(Path(workload).resolve()),
        "started": started,
        "finished": time.time(),
        "reps": reps,
        "environment": environment,
        "measurements": largest,
        "order_effect": _order_effect(largest, smallest),
    }


def _order_effect(largest: dict[str, Any], smallest: dict[str, Any] | None) -> dict[str, Any] | None:
    if smallest is None:
        return None
    return {
        "largest_first_bytes": largest["total_memory_bytes"],
        "smallest_first_bytes": smallest["total_memory_bytes"],
        "largest_first_pool_bytes": largest["total_pool_bytes"],
        "smallest_first_pool_bytes": smallest["total_pool_bytes"],
    }


def costs_of(measured: dict[str, Any]) -> list[SizeCost]:
    """Per-size costs from stored measurements: medians of the eager step and the replay."""
    from statistics import median

    return [
        SizeCost(
            m["size"],
            float(median(m["eager_ns"])),
            float(median(m["graph_ns"])),
            int(m["memory_bytes"]),
            float(m["capture_ns"] + m["instantiate_ns"] + m["upload_ns"]),
        )
        for m in measured["measurements"]["sizes"]
        if m["outputs"].get("match") is not False  # a size whose graph computes something else is no option
    ]


def switch_penalty(measured: dict[str, Any]) -> float:
    """The measured cost of replaying a graph right after another one (workload/child/sizes.py): the round-robin
    estimate, at least 0; 0 where the measurements predate it or hold one size. Of the two estimates it is
    the one whose predictions stayed within 5% of serving on the H200 (benchmarks/RESULTS.md); alternating
    neighbours only gave 0.3-15 us against 0.3-4.2 us served, and the MLP's prediction +6.1%."""
    switch = measured["measurements"].get("switch_ns") or {}
    return max(float(switch.get("rotation") or 0.0), 0.0)


def make_plan(
    measured: dict[str, Any],
    traffic: dict[int, float],
    memory_budget: int | None = None,
    startup_budget_ns: float | None = None,
    compare: list[int] | None = None,
) -> dict[str, Any]:
    """The plan's JSON form: the best set, both frontiers, the per-size table, and a named list beside."""
    costs, switch = costs_of(measured), switch_penalty(measured)
    if not costs:
        from graphscope.core.errors import BadInputError

        raise BadInputError(
            "no measured size can be planned: every size's graph computed other outputs than its eager step"
        )
    result = plan(costs, traffic, memory_budget, startup_budget_ns, switch)
    compared = None
    if compare:
        measured_sizes = {c.size for c in costs}
        usable = [s for s in compare if s in measured_sizes]
        compared = {"asked": compare, "measured": usable, **evaluate(costs, traffic, usable, switch).to_json()}
    return {
        **{key: measured[key] for key in MEASURED if key in measured},  # a re-plan keeps no stale results
        "traffic": {str(k): v for k, v in sorted(traffic.items())},
        "budgets": {"memory_bytes": memory_budget, "startup_ns": startup_budget_ns},
        "per_size": [
            {**_cost_json(c), "pays": c.pays, "saving": 1 - c.graph_ns / c.eager_ns if c.eager_ns else 0.0}
            for c in result.costs
        ],
        "best": result.best.to_json() if result.best else None,
        "all_eager": result.all_eager.to_json(),
        "memory_frontier": [c.to_json() for c in result.memory_frontier],
        "startup_frontier": [c.to_json() for c in result.startup_frontier],
        "compared": compared,
        "stops_paying_above": _stops_paying(result.costs),
        "kept_under_rule": kept_under_rule(result.costs, traffic, result.best, switch),
        "above_measured": _above_measured(result.costs, traffic),
        "verdict": verdict(result.best, result.all_eager, compared, _above_measured(result.costs, traffic)),
    }


def _cost_json(c: SizeCost) -> dict[str, Any]:
    return {
        "size": c.size,
        "eager_ns": c.eager_ns,
        "graph_ns": c.graph_ns,
        "memory_bytes": c.memory_bytes,
        "startup_ns": c.startup_ns,
    }


def _stops_paying(costs: list[SizeCost]) -> int | None:
    """The smallest size from which on no larger size's graph pays (the 20% rule), if there is one."""
    paying = [c.size for c in costs if c.pays]
    if not paying or paying[-1] == costs[-1].size:
        return None
    return paying[-1]


def _above_measured(costs: list[SizeCost], traffic: dict[int, float]) -> dict[str, Any] | None:
    """The requests larger than the largest measured size (no graph can serve them; the planner prices
    them as the eager step at that size): {largest_measured, share}, or None when there are none."""
    largest = max(c.size for c in costs)
    total = sum(w for w in traffic.values() if w > 0)
    above = sum(w for b, w in traffic.items() if w > 0 and b > largest)
    return {"largest_measured": largest, "share": above / total} if above and total else None


def verdict(
    best: Choice | None,
    all_eager: Choice,
    compared: dict[str, Any] | None,
    above: dict[str, Any] | None = None,
) -> str:
    """The plan in words, naming the numbers it judged."""
    from graphscope.core.units import format_bytes, format_ns

    if above is not None and above["share"] >= 1:
        return (
            f"capture none: every request is larger than the largest measured size {above['largest_measured']}: "
            "no graph can serve them (measure larger sizes with --sizes)"
        )
    beyond = (
        f"; {above['share']:.1%} of requests are larger than the largest measured size {above['largest_measured']} "
        "(no graph serves them; priced as the eager step at that size: measure larger sizes with --sizes)"
        if above is not None
        else ""
    )
    if best is None or not best.sizes:
        return f"capture none: no graph within the budgets lowers the {PLAN_EXPECTED}" + beyond
    gain = all_eager.predicted_ns / best.predicted_ns if best.predicted_ns else 0.0
    parts = (
        f" ({PLAN_EXPECTED} {format_ns(best.expected_ns)} + {PLAN_SWITCHING} between graphs "
        f"{format_ns(best.switch_ns)})"
        if best.switch_ns
        else ""
    )
    text = (
        f"capture {len(best.sizes)} sizes ({', '.join(map(str, best.sizes))}): {PLAN_PREDICTED} "
        f"{format_ns(best.predicted_ns)}{parts} against {format_ns(all_eager.predicted_ns)} with none "
        f"({gain:.2f}x), "
        f"{format_bytes(best.memory_bytes)} of graph memory, {format_ns(best.startup_ns)} of capture at start-up, "
        f"padding waste {best.padding_waste:.1%}, {best.eager_share:.1%} of requests above the largest run eagerly"
    )
    if compared:
        text += (
            f"; the compared list ({len(compared['measured'])} sizes): {PLAN_PREDICTED} "
            f"{format_ns(compared['predicted_ns'])}, "
            f"{format_bytes(compared['memory_bytes'])}, {format_ns(compared['startup_ns'])} at start-up"
        )
    return text + beyond


def plan_and_record(
    recorder: Recorder,
    measured: dict[str, Any],
    traffic: dict[int, float] | None = None,
    memory_budget: int | None = None,
    startup_budget_ns: float | None = None,
    compare: list[int] | None = None,
    serve: int | None = None,
    timeout: float = DEFAULT_TIMEOUT_S,
    cancel: CancelToken | None = None,
) -> dict[str, Any]:
    """Plan measured (or stored) sizes, optionally serve the plan (`serve_check`), and store it: the one
    path `graphscope plan` and the Plan panel both drive. Without traffic every size up to the largest
    measured is equally likely."""
    if traffic is None:
        largest = max(m["size"] for m in measured["measurements"]["sizes"])
        if largest > MAX_UNIFORM:
            from graphscope.core.errors import BadInputError

            raise BadInputError(
                f"sizes up to {largest:,} were measured: give --traffic (the request sizes to expect); without "
                f"it every size up to the largest is taken as equally likely, which is for {MAX_UNIFORM:,} at most"
            )
        traffic = dict.fromkeys(range(1, largest + 1), 1.0)
    data = make_plan(measured, traffic, memory_budget, startup_budget_ns, compare)
    if serve:
        workload = Path(data["workload"])
        if not workload.is_file():
            from graphscope.core.errors import BadInputError

            raise BadInputError(f"serving runs the workload again, and {workload} is gone")
        data["served"] = serve_check(workload, data, serve, timeout, cancel)
    return record(recorder, data)


def record(recorder: Recorder, data: dict[str, Any]) -> dict[str, Any]:
    data["plan_id"] = recorder.plan(data)
    data["session"] = str(recorder.path)
    return data


def request_sequence(traffic: dict[int, float], count: int, seed: int = 0) -> list[int]:
    """`count` request sizes drawn from the traffic distribution (seeded: the same sequence each time)."""
    import numpy as np

    sizes = sorted(b for b, w in traffic.items() if w > 0)
    weights = np.array([traffic[b] for b in sizes], dtype=np.float64)
    drawn = np.random.default_rng(seed).choice(len(sizes), size=count, p=weights / weights.sum())
    return [sizes[i] for i in drawn.tolist()]


def serve_check(
    workload: Path,
    data: dict[str, Any],
    count: int,
    timeout: float = DEFAULT_TIMEOUT_S,
    cancel: CancelToken | None = None,
) -> dict[str, Any]:
    """Serve `count` requests drawn from the plan's traffic through its chosen sizes (workload/child/serve.py)
    in a fresh child, and set the mean against what the planner predicts for that same sequence."""
    from collections import Counter
    from statistics import fmean

    traffic = {int(k): float(v) for k, v in data["traffic"].items()}
    chosen = list(data["best"]["sizes"]) if data.get("best") else []
    requests = request_sequence(traffic, count)
    sizes = sorted({m["size"] for m in data["measurements"]["sizes"]})
    # above the largest captured size a request runs eagerly at the size the planner priced it at: the
    # smallest measured size >= it (the largest measured, beyond them all)
    top = max(chosen, default=0)
    runs_at = [b if b <= top else sizes[min(bisect.bisect_left(sizes, b), len(sizes) - 1)] for b in requests]
    with WorkloadSession(Path(workload), None, timeout, cancel, sizes=sizes) as session:
        served = session.request("serve", captured=chosen, requests=runs_at)
    alone = evaluate(costs_of(data), dict(Counter(requests)), chosen).expected_ns  # each graph as if warm
    penalty = switch_penalty(data)
    predicted = alone + penalty * served["switches"] / max(count, 1)  # this sequence's own switches
    mean, grouped = fmean(served["gpu_ns"]), fmean(served["grouped_gpu_ns"])
    extra_switches = served["switches"] - served["grouped_switches"]
    here = served.get("here_median_ns") or {}
    keys = [
        f"graph:{chosen[bisect.bisect_left(chosen, b)]}" if b <= top else f"eager:{r}"
        for b, r in zip(requests, runs_at)
    ]
    priced_here = [here[k] for k in keys if k in here]
    predicted_here = (
        fmean(priced_here) + penalty * served["switches"] / max(count, 1) if len(priced_here) == count else None
    )
    return {
        "requests": count,
        "captured": chosen,
        "replayed": served["replayed"],
        "served_mean_ns": mean,
        "served_wall_mean_ns": fmean(served["wall_ns"]),
        "predicted_ns": predicted,
        "predicted_without_switches_ns": alone,
        "switches": served["switches"],
        "switch_penalty_ns": penalty,
        "grouped_mean_ns": grouped,
        "served_switch_ns": (mean - grouped) * count / extra_switches if extra_switches > 0 else None,
        "error": mean / predicted - 1 if predicted > 0 else None,
        # the same model with the per-size medians re-measured in the serving child: the model's own error,
        # without the drift between the planning child and the serving one
        "predicted_here_ns": predicted_here,
        "error_here": mean / predicted_here - 1 if predicted_here else None,
    }

"""Serve a recorded sequence of request sizes through captured graphs, as an inference server would.

The planner predicts a set's expected step time from per-size medians; this checks the prediction by
doing what a server does: capture the chosen sizes (largest first, one memory pool), then for each
request replay the graph of the smallest captured size at least as large (padding), or run the eager
step at the request's own size when it is above the largest captured one. Each request is timed like
the per-size measurements (CUDA events around it, from a reset state), so the two compare like with like.
The same requests are then served again grouped by the graph they replay, which prices what switching
from one graph to another costs (the per-size medians replay one graph over and over).
"""

from __future__ import annotations

import bisect
from collections.abc import Callable
from itertools import pairwise
from statistics import median
from typing import Any

from graphscope.workload.child.live import LiveWorkload
from graphscope.workload.child.sizes import build_step, timed

REMEASURE_REPS = 30  # replays of each graph served, to price the same requests in the serving child


def serve(live: LiveWorkload, captured: list[int], requests: list[int], warmup: int = 3) -> dict[str, Any]:
    """GPU and host time of each request in order, and how many replayed a graph."""
    fw = live.fw
    chosen = sorted(set(captured))
    steps: dict[int, Any] = {}

    def step_at(size: int) -> Any:
        if size not in steps:
            steps[size] = build_step(live, size)  # compiled and recorded once, as the measurement did
        return steps[size]

    graphs: dict[int, Any] = {}
    for size in sorted(chosen, reverse=True):
        step = step_at(size)
        live.reset_state()
        graphs[size] = fw.capture(step)
        fw.instantiate(graphs[size])
        fw.upload(graphs[size])
    calls: list[Callable[..., None]] = []  # per request: what runs it
    runs_on: list[int | None] = []  # and which graph (None: eager)
    replayed = 0
    for size in requests:
        at = bisect.bisect_left(chosen, size)
        if at < len(chosen):
            graph = graphs[chosen[at]]
            calls.append(lambda graph=graph: fw.launch(graph))
            runs_on.append(chosen[at])
            replayed += 1
        else:
            step = step_at(size)
            calls.append(lambda step=step: fw.run(step))
            runs_on.append(None)
    for once in calls[:warmup]:
        live.reset_state()
        once()
    fw.synchronize()
    gpu, wall = timed(live, calls)
    # the same requests grouped by what runs them: what serving costs without switching between graphs
    grouped = sorted(range(len(calls)), key=lambda i: -1 if (graph := runs_on[i]) is None else graph)
    grouped_gpu, _ = timed(live, [calls[i] for i in grouped])
    # what each request's graph (or eager step) takes replayed over and over, in this same child: the
    # planner's per-size medians come from another child, and medians move 3-7% from child to child
    here: dict[str, float] = {}
    for ran_on, size, once in zip(runs_on, requests, calls):
        key = f"graph:{ran_on}" if ran_on is not None else f"eager:{size}"
        if key not in here:
            here[key] = float(median(timed(live, [once] * REMEASURE_REPS)[0]))
    return {
        "captured": chosen,
        "requests": list(requests),
        "gpu_ns": gpu,
        "wall_ns": wall,
        "replayed": replayed,
        "switches": switches(runs_on),
        "grouped_gpu_ns": grouped_gpu,
        "grouped_switches": switches([runs_on[i] for i in grouped]),
        "here_median_ns": here,
    }


def switches(runs_on: list[int | None]) -> int:
    """How many requests replay a graph other than what ran the request before them (another graph, or an
    eager step): the transitions the planner prices (optimizer.Choice.switch_ns)."""
    return sum(1 for before, now in pairwise(runs_on) if now is not None and before != now)

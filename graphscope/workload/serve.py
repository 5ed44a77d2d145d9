"""Serve a recorded sequence of request sizes through captured graphs, as an inference server would.

The planner predicts a set's expected step time from per-size medians; this checks the prediction by
doing what a server does: capture the chosen sizes (largest first, one memory pool), then for each
request replay the graph of the smallest captured size at least as large (padding), or run the eager
step at the request's own size when it is above the largest captured one. Each request is timed like
the per-size measurements (CUDA events around it, from a reset state), so the two compare like with like.
"""

from __future__ import annotations

import bisect
from typing import Any

from graphscope.workload.live import LiveWorkload
from graphscope.workload.sizes import build_step, timed


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
    calls, replayed = [], 0  # per request: what runs it
    for size in requests:
        at = bisect.bisect_left(chosen, size)
        if at < len(chosen):
            graph = graphs[chosen[at]]
            calls.append(lambda graph=graph: fw.launch(graph))
            replayed += 1
        else:
            step = step_at(size)
            calls.append(lambda step=step: fw.run(step))
    for once in calls[:warmup]:
        live.reset_state()
        once()
    fw.synchronize()
    gpu, wall = timed(live, calls)
    return {"captured": chosen, "requests": list(requests), "gpu_ns": gpu, "wall_ns": wall, "replayed": replayed}

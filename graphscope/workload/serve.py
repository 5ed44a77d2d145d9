"""Serve a recorded sequence of request sizes through captured graphs, as an inference server would.

The planner predicts a set's expected step time from per-size medians; this checks the prediction by
doing what a server does: capture the chosen sizes (largest first, one memory pool), then for each
request replay the graph of the smallest captured size at least as large (padding), or run the eager
step at the request's own size when it is above the largest captured one. Each request is timed like
the per-size measurements (CUDA events around it, from a reset state), so the two compare like with like.
"""

from __future__ import annotations

import bisect
import time
from typing import Any

from graphscope.workload.live import LiveWorkload


def serve(live: LiveWorkload, captured: list[int], requests: list[int], warmup: int = 3) -> dict[str, Any]:
    """GPU and host time of each request in order, and how many replayed a graph."""
    fw, ctx = live.fw, live.ctx
    chosen = sorted(set(captured))
    steps: dict[int, Any] = {}

    def step_at(size: int) -> Any:
        if size not in steps:
            ctx.batch = size
            steps[size] = fw.setup(live.module)
            live.reset_state()
            fw.run(steps[size], record=True)  # compiles and records once, as the measurement did
        return steps[size]

    graphs: dict[int, Any] = {}
    for size in sorted(chosen, reverse=True):
        step = step_at(size)
        live.reset_state()
        graphs[size] = fw.capture(step)
        fw.instantiate(graphs[size])
        fw.upload(graphs[size])
    plan = []  # per request: what runs it
    for size in requests:
        at = bisect.bisect_left(chosen, size)
        if at < len(chosen):
            graph = graphs[chosen[at]]
            plan.append((lambda graph=graph: fw.launch(graph), True))
        else:
            step = step_at(size)
            plan.append((lambda step=step: fw.run(step), False))
    for once, _ in plan[:warmup]:
        live.reset_state()
        once()
    fw.synchronize()
    start, end = fw.event(), fw.event()
    gpu, wall = [], []
    for once, _ in plan:
        live.reset_state()
        fw.record(start)
        t0 = time.perf_counter_ns()
        once()
        fw.record(end)
        end.synchronize()
        wall.append(time.perf_counter_ns() - t0)
        gpu.append(fw.elapsed_ns(start, end))
    return {
        "captured": chosen,
        "requests": list(requests),
        "gpu_ns": gpu,
        "wall_ns": wall,
        "replayed": sum(1 for _, replay in plan if replay),
    }

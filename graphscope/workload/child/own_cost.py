"""What graphscope's own launch path adds to each eager launch, measured in the child.

A workload's kernels launched through `ctx.launch` or a `ctx.launcher` pass through a little Python
before CuPy's kernel call; a graph replay passes through none of it. That cost inflates the eager step,
and so every speed-up, by (launches per step x cost per launch). It is measured here against a kernel
whose launch does nothing, so that only the wrapper is timed (the CuPy call itself costs the same in a
plain loop), and shown beside the speed-up.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from types import MappingProxyType
from typing import Any

CALLS = 10_000  # per timing; the best of REPEATS timings (the wrapper cost is deterministic work)
REPEATS = 7


class _NullRaw:
    """Stands in for a CuPy RawKernel: compiled attributes and a call that launches nothing."""

    attributes: MappingProxyType[str, int] = MappingProxyType({})
    max_dynamic_shared_size_bytes = 0

    def __call__(self, grid: Any, block: Any, args: Any, shared_mem: int = 0, stream: Any = None) -> None:
        return None


def _best_ns_per_call(*loops: Callable[[], None]) -> list[float]:
    """Each loop's best time per call over REPEATS rounds, the loops interleaved within a round so that
    a slow spell of the machine falls on all of them."""
    best = [float("inf")] * len(loops)
    for _ in range(REPEATS):
        for i, loop in enumerate(loops):
            t0 = time.perf_counter_ns()
            loop()
            best[i] = min(best[i], time.perf_counter_ns() - t0)
    return [b / CALLS for b in best]


def launch_path_cost(context_type: Callable[[], Any]) -> dict[str, float]:
    """ns per launch that `ctx.launch` and a `ctx.launcher` add over calling the kernel directly,
    measured on a fresh context from `context_type` (the workload's own is left untouched)."""
    from graphscope.workload.child.context import Kernel

    ctx = context_type()
    kernel = Kernel(_NullRaw(), "null", ctx.max_shared_optin)
    raw, stream, launch = kernel.raw, ctx.stream, ctx.launch
    bound = ctx.launcher(kernel, problem=4096, block=256)
    args = (1, 2, 3, 4)
    calls = range(CALLS)

    def direct() -> None:
        for _ in calls:
            raw((16,), (256,), args, stream=stream)  # as a plain CuPy loop calls it

    def through_launch() -> None:
        ctx.begin_step()
        for _ in calls:
            launch(kernel, problem=4096, block=256, args=args)
        ctx.end_step()

    def through_launcher() -> None:
        for _ in calls:
            bound(*args)

    ctx.begin_step()
    through_launch()  # the first pass plans every position; later passes take the step's fast path
    through_launcher()
    floor, via_launch, via_launcher = _best_ns_per_call(direct, through_launch, through_launcher)
    return {"launch_ns": max(via_launch - floor, 0.0), "launcher_ns": max(via_launcher - floor, 0.0)}


def step_cost(per_call: dict[str, float], counts: dict[str, int]) -> dict[str, Any]:
    """The wrapper's cost in one eager step: its launches by path times each path's cost per launch."""
    return {
        **per_call,
        "launches": dict(counts),
        "per_step_ns": counts.get("launch", 0) * per_call["launch_ns"]
        + counts.get("launcher", 0) * per_call["launcher_ns"],
    }

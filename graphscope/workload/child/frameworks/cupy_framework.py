"""CuPy workloads: `setup(ctx)` gets a WorkloadContext; graph mode captures one step on ctx.stream with
`Stream.begin_capture` / `end_capture` (CuPy instantiates)."""

from __future__ import annotations

import contextlib
from typing import Any

from graphscope.core.launch_config import LaunchConfig


class CupyFramework:
    name = "cupy"

    def __init__(self, config: LaunchConfig | None) -> None:
        from graphscope.workload.child.context import WorkloadContext

        self.ctx = WorkloadContext(config)
        self.cupy = self.ctx.cupy
        self.stream = self.ctx.stream

    def setup(self, module: Any) -> Any:
        with self.stream:
            return module.setup(self.ctx)

    def call(self, function: Any) -> None:
        """`function(ctx)` on the step's stream, outside any step (a workload's reset)."""
        with self.stream:
            function(self.ctx)

    def own_cost(self) -> dict[str, Any] | None:
        """What ctx.launch / ctx.launcher add to one eager step (workload/child/own_cost.py); None without any."""
        from graphscope.workload.child.context import WorkloadContext
        from graphscope.workload.child.own_cost import launch_path_cost, step_cost

        counts = self.ctx.launch_counts
        if not any(counts.values()):
            return None
        return step_cost(launch_path_cost(lambda: WorkloadContext(self.ctx.config)), counts)

    def memory(self) -> dict[str, int]:
        """Device memory free and the framework pool's bytes (what a captured graph takes shows in both)."""
        free, _ = self.cupy.cuda.runtime.memGetInfo()
        return {"free": int(free), "pool": int(self.cupy.get_default_memory_pool().total_bytes())}

    def run(self, step: Any, record: bool = False) -> None:
        self.ctx.begin_step(record)
        try:
            with self.stream:
                step(self.ctx)
        finally:
            self.ctx.end_step()

    def warm_up(self, step: Any) -> None:
        """Nothing: CuPy captures without PyTorch's side-stream warm-up."""

    def capture(self, step: Any) -> Any:
        self.stream.begin_capture()
        try:
            self.run(step, record=True)
        except BaseException:
            with contextlib.suppress(Exception):  # the capture is already invalid; the original error matters
                self.stream.end_capture()
            raise
        return self.stream.end_capture()  # CuPy instantiates here

    def instantiate(self, graph: Any) -> None:
        """Already done by end_capture."""

    def upload(self, graph: Any) -> None:
        graph.upload(self.stream)
        self.stream.synchronize()

    def launch(self, graph: Any) -> None:
        graph.launch(self.stream)

    @staticmethod
    def handles(graph: Any) -> tuple[int, int]:
        return int(graph.graph), int(graph.graphExec)

    def stream_handle(self) -> int:
        return int(self.stream.ptr)

    def event(self) -> Any:
        return self.cupy.cuda.Event()

    def record(self, event: Any) -> None:
        event.record(self.stream)

    def elapsed_ns(self, start: Any, end: Any) -> float:
        return self.cupy.cuda.get_elapsed_time(start, end) * 1e6

    def synchronize(self) -> None:
        self.stream.synchronize()

    def push(self, text: str) -> None:
        self.cupy.cuda.nvtx.RangePush(text)

    def pop(self) -> None:
        self.cupy.cuda.nvtx.RangePop()

    def snapshot(self) -> dict[str, Any]:
        return self.ctx.snapshot_outputs()

"""PyTorch workloads: `setup(ctx)` gets a TorchContext; graph mode follows PyTorch's recipe (warm-up on a
side stream, then `torch.cuda.CUDAGraph` captured on ctx.stream into one memory pool kept across
re-captures)."""

from __future__ import annotations

import contextlib
from typing import Any

from graphscope.core.launch_config import LaunchConfig
from graphscope.workload.child.frameworks.base import WARMUP_BEFORE_CAPTURE
from graphscope.workload.protocol import INSTALL_TORCH, MissingLibrary


class TorchContext:
    """What a PyTorch workload's setup(ctx) and step(ctx) get."""

    def __init__(self, torch: Any) -> None:
        self.torch = torch
        self.device = torch.device("cuda")
        self.stream = torch.cuda.Stream()
        self.sites: list = []  # PyTorch's kernels are library kernels: nothing to tune
        self.batch: int | None = None  # the batch size being built, for workloads that declare SIZES
        self.max_batch: int | None = None
        self.config: LaunchConfig | None = None
        self._outputs: dict[str, Any] = {}

    def outputs(self, **tensors: Any) -> None:
        """Declare the tensors whose values must match between eager and graph runs."""
        self._outputs.update(tensors)

    def snapshot_outputs(self) -> dict[str, Any]:
        from graphscope.workload.child.context import host_copy

        return {name: host_copy(None, tensor) for name, tensor in self._outputs.items()}

    def output_dtypes(self) -> dict[str, str]:
        from graphscope.workload.child.context import dtype_name

        return {name: dtype_name(tensor) for name, tensor in self._outputs.items()}


class TorchFramework:
    name = "torch"

    def __init__(self, config: LaunchConfig | None) -> None:
        try:
            import torch
        except ImportError:
            raise MissingLibrary(
                f"this workload is written for PyTorch (FRAMEWORK = 'torch'): {INSTALL_TORCH}"
            ) from None
        if not torch.cuda.is_available():
            raise RuntimeError("no CUDA-capable device is detected (PyTorch sees no GPU)")
        self.torch = torch
        self.ctx = TorchContext(torch)
        self.stream = self.ctx.stream
        self.pool: Any = None
        self.warmed = False

    def setup(self, module: Any) -> Any:
        with self.torch.cuda.stream(self.stream):
            return module.setup(self.ctx)

    def call(self, function: Any) -> None:
        """`function(ctx)` on the step's stream, outside any capture (a workload's reset)."""
        with self.torch.cuda.stream(self.stream):
            function(self.ctx)

    def memory(self) -> dict[str, int]:
        """Device memory free and PyTorch's reserved bytes (the graphs' shared pool grows in them), read with
        the caching allocator's free blocks released first. `torch.cuda.graph` releases them itself when a
        capture begins, so a reading that kept them saw the capture give memory back: on an H100 the
        torch block's size-64 graph took 130 MiB of its private pool while free memory rose by 118 MiB
        (benchmarks/graph_memory_gpu.py)."""
        self.torch.cuda.empty_cache()
        free, _ = self.torch.cuda.mem_get_info()
        return {"free": int(free), "pool": int(self.torch.cuda.memory_reserved())}

    def run(self, step: Any, record: bool = False) -> None:
        with self.torch.cuda.stream(self.stream):
            step(self.ctx)

    def warm_up(self, step: Any) -> None:
        """PyTorch's recipe before the first capture: a few steps on a side stream (once per process). The
        caching allocator keeps blocks per stream, so this reserves a second set of the step's working
        memory: sizes.py runs it before its memory reading, not inside the first size's."""
        torch = self.torch
        if not self.warmed:
            side = torch.cuda.Stream()
            side.wait_stream(self.stream)
            with torch.cuda.stream(side):
                for _ in range(WARMUP_BEFORE_CAPTURE):
                    step(self.ctx)
            self.stream.wait_stream(side)
            self.stream.synchronize()
            self.warmed = True

    def capture(self, step: Any) -> Any:
        torch = self.torch
        self.warm_up(step)
        try:
            graph = torch.cuda.CUDAGraph(keep_graph=True)  # keeps the graph readable (its DAG)
        except TypeError:  # an older PyTorch: no raw graph handles
            graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph, pool=self.pool, stream=self.stream):
            step(self.ctx)
        self.pool = graph.pool()
        return graph

    def instantiate(self, graph: Any) -> None:
        if hasattr(graph, "instantiate"):
            with contextlib.suppress(RuntimeError):  # already instantiated (keep_graph=False)
                graph.instantiate()

    def upload(self, graph: Any) -> None:
        self.launch(graph)  # PyTorch uploads on the first replay
        self.stream.synchronize()

    def launch(self, graph: Any) -> None:
        with self.torch.cuda.stream(self.stream):
            graph.replay()

    def stream_handle(self) -> int:
        return int(self.stream.cuda_stream)

    @staticmethod
    def handles(graph: Any) -> tuple[int, int]:
        if not hasattr(graph, "raw_cuda_graph"):
            raise RuntimeError("this PyTorch cannot hand out its graph (CUDAGraph.raw_cuda_graph needs 2.6 or newer)")
        return int(graph.raw_cuda_graph()), int(graph.raw_cuda_graph_exec())

    def event(self) -> Any:
        return self.torch.cuda.Event(enable_timing=True)

    def record(self, event: Any) -> None:
        event.record(self.stream)

    def elapsed_ns(self, start: Any, end: Any) -> float:
        return start.elapsed_time(end) * 1e6

    def synchronize(self) -> None:
        self.stream.synchronize()

    def push(self, text: str) -> None:
        self.torch.cuda.nvtx.range_push(text)

    def pop(self) -> None:
        self.torch.cuda.nvtx.range_pop()

    def snapshot(self) -> dict[str, Any]:
        return self.ctx.snapshot_outputs()

    def own_cost(self) -> dict[str, Any] | None:
        """PyTorch launches its own kernels: graphscope adds nothing to them."""
        return None

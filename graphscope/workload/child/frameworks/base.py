"""What every framework adapter shares: its interface and the capture recipe's constants."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from graphscope.core.launch_config import LaunchConfig

WARMUP_BEFORE_CAPTURE = 3  # PyTorch's recipe: warm-up steps on a side stream before a capture


class Framework(Protocol):
    """Runs, captures, replays and times one workload's step (the workload child's only view of it).

    Every member is called by the child side (workload/child/live.py, sizes.py, serve.py, scrub.py,
    torch_profile.py, main.py); mypy checks each adapter and each caller against this list."""

    name: str
    ctx: Any  # what the workload's setup(ctx) gets: a WorkloadContext or a TorchContext
    stream: Any  # the framework's own stream object (ctx.stream)

    def setup(self, module: Any) -> Any:
        """`module.setup(ctx)` on the step's stream; returns the step."""

    def call(self, function: Any) -> None:
        """`function(ctx)` on the step's stream, outside any step (a workload's reset)."""

    def own_cost(self) -> dict[str, Any] | None:
        """What graphscope's own launch path adds to one eager step; None without any."""

    def memory(self) -> dict[str, int]:
        """Device memory free and the framework pool's bytes."""

    def run(self, step: Any, record: bool = False) -> None:
        """One eager step (record: note its launches, as a capture does)."""

    def warm_up(self, step: Any) -> None:
        """What the framework's recipe runs before its first capture (PyTorch: steps on a side stream)."""

    def capture(self, step: Any) -> Any:
        """One step captured as a graph (the framework's own graph object), warmed up first if not yet."""

    def instantiate(self, graph: Any) -> None: ...
    def upload(self, graph: Any) -> None: ...
    def launch(self, graph: Any) -> None:
        """One replay of an instantiated graph on the step's stream."""

    def handles(self, graph: Any) -> tuple[int, int]:
        """The raw CUgraph and CUgraphExec handles of a captured graph (graph/live.py reads them)."""

    def stream_handle(self) -> int:
        """The step stream's raw cudaStream_t."""

    def event(self) -> Any: ...
    def record(self, event: Any) -> None: ...
    def elapsed_ns(self, start: Any, end: Any) -> float: ...
    def synchronize(self) -> None: ...

    def push(self, text: str) -> None:
        """Open a named range (NVTX) around what follows (torch_profile.py swaps in record_function)."""

    def pop(self) -> None: ...

    def snapshot(self) -> dict[str, Any]:
        """Host copies of the declared outputs."""


FrameworkClass = Callable[[LaunchConfig | None], Framework]
"""What `frameworks.framework_for` returns: an adapter built from the launch configuration in effect."""

"""Record one mode's measured repetitions with `torch.profiler` (CUPTI underneath), in the workload child.

A timeline without Nsight Systems: PyTorch's profiler records CUDA runtime and driver calls, kernels,
copies and graph launches with their replayed kernels (a CuPy step's too, when PyTorch is installed:
CuPy's RawKernel launches appear as cuLaunchKernel, a CuPy graph launch as cudaGraphLaunch with every
node kernel under its correlation id). The runner's warm-up and repetition markers become
`record_function` ranges, which the Kineto reader turns into NVTX-like rows, so reports and the GUI
scope the trace to the measured repetitions as they do an Nsight export.

A graph mode's profile also records what each replayed node came from (`summary` attributes the replay
to its own capture, analysis/attribution_match.py): the capture runs with Python stacks, input shapes
and a `module: PATH` range per nn.Module call (workload/child/op_attribution.py), so every captured launch has
its operator, module path, shapes and line of user code. Only the capture runs Python the profiler
records; the replays are one graph launch each, so their timing barely moves. The eager mode's profile
records none of it: stacks and shapes cost host time per operator, which would be charged to the eager
step being measured.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from graphscope.workload.child.live import LiveWorkload
from graphscope.workload.child.op_attribution import ModuleRanges
from graphscope.workload.protocol import INSTALL_TORCH, MissingLibrary


def _profiler() -> Any:
    try:
        import torch
        import torch.profiler
    except ImportError:
        raise MissingLibrary(f"--profile torch records with torch.profiler: {INSTALL_TORCH}") from None
    if not torch.cuda.is_available():
        raise MissingLibrary(f"--profile torch needs a PyTorch with CUDA: {INSTALL_TORCH}")
    return torch


class _Ranges:
    """fw.push / fw.pop as record_function ranges (Kineto does not record NVTX)."""

    def __init__(self, torch: Any) -> None:
        self.torch = torch
        self.open: list[Any] = []

    def push(self, text: str) -> None:
        scope = self.torch.profiler.record_function(text)
        scope.__enter__()
        self.open.append(scope)

    def pop(self) -> None:
        self.open.pop().__exit__(None, None, None)


def profile_measure(live: LiveWorkload, mode: str, reps: int, warmup: int, trace: Path) -> dict[str, Any]:
    """`live.measure` under torch.profiler with its ranges marked; the Chrome trace is written to `trace`.
    A graph mode is captured afresh with stacks, shapes and module paths recorded (the module docstring)."""
    torch = _profiler()
    activities = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
    graph = mode == "graph"
    ranges = _Ranges(torch)
    fw = live.fw
    push, pop = fw.push, fw.pop
    # Swapped on this adapter only, for this measure (the Framework protocol declares them as methods).
    fw.push, fw.pop = ranges.push, ranges.pop  # type: ignore[method-assign]
    modules = ModuleRanges(torch) if graph and fw.name == "torch" else None
    try:
        with torch.profiler.profile(
            activities=activities, record_shapes=graph, with_stack=graph, with_modules=graph
        ) as profiler:
            answer = live.measure(mode, reps, warmup, nvtx=True, fresh=graph)
    finally:
        fw.push, fw.pop = push, pop  # type: ignore[method-assign]
        if modules is not None:
            modules.close()
    trace.parent.mkdir(parents=True, exist_ok=True)
    profiler.export_chrome_trace(str(trace))
    return {**answer, "trace": str(trace)}

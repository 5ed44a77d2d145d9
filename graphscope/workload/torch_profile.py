"""Record one mode's measured repetitions with `torch.profiler` (CUPTI underneath), in the workload child.

A timeline without Nsight Systems: PyTorch's profiler records CUDA runtime and driver calls, kernels,
copies and graph launches with their replayed kernels (a CuPy step's too, when PyTorch is installed:
CuPy's RawKernel launches appear as cuLaunchKernel, a CuPy graph launch as cudaGraphLaunch with every
node kernel under its correlation id). The runner's warm-up and repetition markers become
`record_function` ranges, which the Kineto reader turns into NVTX-like rows, so reports and the GUI
scope the trace to the measured repetitions as they do an Nsight export.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from graphscope.workload.live import LiveWorkload
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
    """`live.measure` under torch.profiler with its ranges marked; the Chrome trace is written to `trace`."""
    torch = _profiler()
    activities = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
    ranges = _Ranges(torch)
    fw = live.fw
    push, pop = fw.push, fw.pop
    # Swapped on this adapter only, for this measure (the Framework protocol declares them as methods).
    fw.push, fw.pop = ranges.push, ranges.pop  # type: ignore[method-assign]
    try:
        with torch.profiler.profile(activities=activities) as profiler:
            answer = live.measure(mode, reps, warmup, nvtx=True, fresh=mode == "graph")
    finally:
        fw.push, fw.pop = push, pop  # type: ignore[method-assign]
    trace.parent.mkdir(parents=True, exist_ok=True)
    profiler.export_chrome_trace(str(trace))
    return {**answer, "trace": str(trace)}

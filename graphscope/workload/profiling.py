"""Each mode run again under a profiler, for a timeline: Nsight Systems or PyTorch's profiler.

The run's numbers come from the unprofiled child; the profiled children's own medians are kept beside
them, so what the profiler added (its overhead) is measured and shown, not assumed.
"""

from __future__ import annotations

from pathlib import Path
from statistics import median
from typing import Any

from graphscope.core.launch_config import LaunchConfig
from graphscope.workload.session import WorkloadSession

PROFILERS = ("nsys", "torch")
PROFILED_REPS = 5  # a timeline needs few repetitions; more make large traces


def profile_modes(
    profiler: str,
    path: Path,
    modes: tuple[str, ...],
    reps: int,
    warmup: int,
    config: LaunchConfig | None,
    folder: Path,
    timeout: float,
) -> tuple[dict[str, dict[str, str]], dict[str, dict[str, Any]]]:
    """({mode: {"sqlite": the trace graphscope opens, "report": the profiler's own file}},
    {mode: {"profiler", "reps", "wall_ns", "gpu_ns" medians}})."""
    if profiler == "nsys":
        from graphscope.workload import nsys

        traces, measured = nsys.profile_modes(path, modes, reps, warmup, config, folder, timeout)
    elif profiler == "torch":
        traces, measured = _torch_modes(path, modes, reps, warmup, config, folder, timeout)
    else:
        raise ValueError(f"unknown profiler {profiler!r}: one of {', '.join(PROFILERS)}")
    return traces, {
        mode: {
            "profiler": profiler,
            "reps": len(answer["wall_ns"]),
            "wall_ns": float(median(answer["wall_ns"])),
            "gpu_ns": float(median(answer["gpu_ns"])),
            **({"capture": answer["capture"]} if answer.get("capture") else {}),  # captured while recording
            **({"conditionals": answer["conditionals"]} if answer.get("conditionals") else {}),
        }
        for mode, answer in measured.items()
    }


def _torch_modes(
    path: Path,
    modes: tuple[str, ...],
    reps: int,
    warmup: int,
    config: LaunchConfig | None,
    folder: Path,
    timeout: float,
) -> tuple[dict[str, dict[str, str]], dict[str, dict[str, Any]]]:
    """One fresh child per mode under torch.profiler (workload/child/torch_profile.py), as nsys gets one."""
    traces, measured = {}, {}
    for mode in modes:
        trace = Path(folder) / f"{Path(path).stem}_{mode}.pt.trace.json"
        with WorkloadSession(Path(path), config, timeout) as session:
            measured[mode] = session.request("profile_torch", mode=mode, reps=reps, warmup=warmup, trace=str(trace))
        traces[mode] = {"sqlite": str(trace), "report": str(trace)}
    return traces, measured

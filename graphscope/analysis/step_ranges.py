"""The one rule for steps: which ranges of a trace are its steps, and which never are.

Every face that talks about steps (`report`, the Compare window and File > Export report…, rank jobs)
chooses them here.

- **Op-level ranges are never steps** (`is_op_range`): the ranges a profiler or a library writes per
  operator or per call, not the user's annotations. PyTorch operators (`aten::copy_, op_id = 317177`,
  `aten::linear, seq = 12`, `autograd::engine::evaluate_function: AddmmBackward0`, `AddmmBackward0`,
  `c10d::allreduce_`, c10d's per-collective `record_param_comms`), the PyTorch profiler's Python
  call-stack entries (`module.py(1501): _call_impl`, `<built-in method ...>`, `nn.Module: Linear_0`),
  pyprof/DLProf per-op markers (`{'traceMarker': ...}`, `{'mod': ...}`), and library call ranges
  (cuBLAS, cuDNN, NCCL/RCCL, cuFFT, ...: `cublasGemmEx`, `ncclAllReduce`, `nccl:all_reduce`).
- **A family** is a range name with its trailing instance number replaced by `*` (`ProfilerStep#3` ->
  `ProfilerStep#*`, `eager_0` -> `eager_*`); a name without a number is its own family; graphscope's
  measured repetitions (`MEASURED_PATTERN`) are one family, whatever their mode.
- **The step family** (`step_family`): graphscope's measured repetitions where the trace has them (its
  runner's own steps); else, among the families of at least STEP_MIN_INSTANCES instances that are
  mostly side by side (STEP_DISJOINT_SHARE) and whose instances launched at least STEP_GPU_SHARE of the
  trace's GPU busy time (work belongs to the instance its launch call started in, as in any scope),
  the one that launched the most; ties go to the family spanning more time (the enclosing range).
  None when no family qualifies: the trace has no steps, and a report says so and falls back to its
  steady activity window.

GPU busy time is summed over devices (each device's work as a union), as in docs/counting.md.
"""

from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass

import numpy as np

from graphscope.analysis import intervals
from graphscope.analysis.scope import Scope, nvtx_ranges
from graphscope.core import sets
from graphscope.core.events import MEASURED_PATTERN
from graphscope.core.rules import STEP_DISJOINT_SHARE, STEP_GPU_SHARE, STEP_MIN_INSTANCES
from graphscope.core.table import Table
from graphscope.trace.model import Trace

_OP_RANGE = re.compile(
    r"aten::|prim::|c10d::|_c10d_functional::|autograd::|torch::autograd::|op_id\s*=|,\s*seq\s*=\s*\d"
    r"|^(?:cublas|cublasLt|cudnn|nccl|rccl|cufft|curand|cusparse|cusolver|hipblas|hipblasLt|rocblas|miopen)"
    r"(?:[A-Z_:]|$)"
    r"|^[A-Za-z0-9_]+Backward\d*$"
    r"|(?:\.py|>)\(\d+\): |^<built-in (?:method|function) |^nn\.Module: |^record_param_comms$"
    r"|^\{'(?:traceMarker|mod|op)'"
)


def is_op_range(name: str) -> bool:
    """Is this range one a profiler or library writes per operator or call (never a step)?"""
    return bool(_OP_RANGE.search(name))


def family_of(name: str) -> str:
    """The family a range name belongs to: `ProfilerStep#3` -> `ProfilerStep#*`, `eager_0` -> `eager_*`,
    graphscope's measured repetitions -> MEASURED_PATTERN, a name without a trailing number -> itself."""
    if fnmatch.fnmatchcase(name, MEASURED_PATTERN):
        return MEASURED_PATTERN
    stem = name.rstrip("0123456789")
    return f"{stem}*" if stem and stem != name else name


@dataclass(frozen=True)
class StepFamily:
    """One family of ranges and how it stands against the step rule."""

    pattern: str  # the family as a glob (nvtx:PATTERN scopes it)
    start: np.ndarray  # its instances, in start order
    end: np.ndarray
    gpu_share: float  # the share of the trace's GPU busy time launched inside its instances
    disjoint_share: float  # the time their union covers over the sum of their lengths

    @property
    def instances(self) -> int:
        return len(self.start)

    @property
    def span_ns(self) -> int:
        return int((self.end - self.start).sum())

    @property
    def is_step(self) -> bool:
        """Does the family pass the step rule (module docstring)?"""
        return (
            self.instances >= STEP_MIN_INSTANCES
            and self.gpu_share >= STEP_GPU_SHARE
            and self.disjoint_share >= STEP_DISJOINT_SHARE
        )

    def scope(self) -> Scope:
        noun = "NVTX ranges" if self.instances > 1 else "NVTX range"
        return Scope.of(f"{self.instances} {noun} {self.pattern!r}", self.start, self.end)

    def describe(self) -> str:
        """'5 ranges 'ProfilerStep#*', 99% of GPU busy time'."""
        return f"{self.instances} ranges {self.pattern!r}, {self.gpu_share:.0%} of GPU busy time"


def range_families(trace: Trace) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Every family of closed, non-op ranges: pattern -> (starts, ends) in start order."""
    texts, starts, ends = nvtx_ranges(trace)
    ids_of: dict[str, list[int]] = {}
    for text in sets.unique(texts).tolist():
        name = trace.symbols.name(int(text)) if text >= 0 else ""
        if name and not is_op_range(name):
            ids_of.setdefault(family_of(name), []).append(text)
    result = {}
    for pattern, ids in ids_of.items():
        mine = sets.isin(texts, ids)  # nvtx_ranges is in start order, so each family is too
        result[pattern] = (starts[mine], ends[mine])
    return result


def _busy_ns(work: Table, rows: np.ndarray) -> int:
    """GPU busy time of the marked work, each device's work as a union, summed over devices."""
    total = 0
    for device in sets.unique(work.device[rows]).tolist():
        mine = rows & (work.device == device)
        total += intervals.covered_ns(work.start[mine], work.end[mine])
    return total


def _gpu_work(trace: Trace) -> Table:
    from graphscope.analysis.correlation import correlate
    from graphscope.analysis.gpu_time import gpu_work

    return gpu_work(trace, correlate(trace))


def families(trace: Trace, work: Table | None = None) -> list[StepFamily]:
    """Every repeated family of ranges (at least STEP_MIN_INSTANCES instances: a range seen once is never
    a step) with its GPU share and overlap, best step candidate first (the order `step_family` chooses
    by). `work`: the trace's GPU work table (analysis.gpu_time.gpu_work), built when not given."""
    found = {p: f for p, f in range_families(trace).items() if len(f[0]) >= STEP_MIN_INSTANCES}
    if not found:
        return []
    work = _gpu_work(trace) if work is None else work
    busy = _busy_ns(work, np.ones(len(work), dtype=bool))
    # when each piece of work was launched (its call's start; its own start where no call was recorded):
    # the instance that time falls in owns it, as in any scope (analysis/scope.py)
    linked = work.api_row >= 0
    launched = np.asarray(work.start, np.int64).copy()
    launched[linked] = np.asarray(trace.api.start, np.int64)[work.api_row[linked]]
    result = []
    for pattern, (start, end) in found.items():
        scope = Scope.of(pattern, start, end)
        inside = scope.contains(launched)
        lengths = int((end - start).sum())
        result.append(
            StepFamily(
                pattern=pattern,
                start=start,
                end=end,
                gpu_share=_busy_ns(work, inside) / busy if busy else 0.0,
                disjoint_share=scope.covered_ns / lengths if lengths else 1.0,
            )
        )
    result.sort(key=lambda f: (f.pattern != MEASURED_PATTERN, not f.is_step, -f.gpu_share, -f.span_ns))
    return result


def step_family(trace: Trace, work: Table | None = None) -> StepFamily | None:
    """The trace's steps (the rule in the module docstring), or None when no family of ranges qualifies.
    graphscope's measured repetitions are its steps whenever the trace holds them."""
    return chosen(families(trace, work))


def chosen(ranked: list[StepFamily]) -> StepFamily | None:
    """The step family among `families(...)`'s answer (its first, when it is graphscope's measured
    repetitions or passes the step rule), else None."""
    if ranked and (ranked[0].pattern == MEASURED_PATTERN or ranked[0].is_step):
        return ranked[0]
    return None

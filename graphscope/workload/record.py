"""Run a workload and record the result (or the failure) through a recorder: the one run path that
`graphscope run` and the Run panel both drive."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from graphscope.core.errors import NoGpuError, WorkloadError
from graphscope.core.launch_config import LaunchConfig
from graphscope.core.progress import CancelToken, ProgressCallback, no_progress
from graphscope.core.records import Recorder
from graphscope.workload.runner import MODES, run_workload
from graphscope.workload.session import DEFAULT_TIMEOUT_S


def run_and_record(
    path: Path,
    recorder: Recorder,
    modes: tuple[str, ...] = MODES,
    reps: int = 30,
    warmup: int = 5,
    timeout: float = DEFAULT_TIMEOUT_S,
    config: LaunchConfig | None = None,
    profile: str | None = None,
    trace_dir: Path | None = None,
    progress: ProgressCallback = no_progress,
    cancel: CancelToken | None = None,
    cpu: int | None = None,
    annotate: Callable[[dict[str, Any]], None] | None = None,
) -> dict[str, Any]:
    """The run's JSON form with `ok`, `run_id` and `session`; a failure is recorded with every setting and
    re-raised with `run_id` set on it (None where it was refused before it started). `annotate` adds to the
    JSON form (the caller's attribution of the profiled graph trace: this layer reads no traces; the session
    database keeps the run's measurements and trace paths, from which it can be made again)."""
    settings = {"started": time.time(), "modes": modes, "reps": reps, "warmup": warmup}
    try:
        report = run_workload(path, modes, reps, warmup, timeout, config, profile, trace_dir, progress, cancel, cpu)
    except (WorkloadError, NoGpuError) as exc:
        kind = getattr(exc, "kind", "no_gpu")
        exc.run_id = recorder.run_failed(Path(path), kind, exc.message, settings)
        raise
    data = {"ok": True, **report.to_json()}
    if annotate is not None:
        annotate(data)
    data["run_id"] = recorder.run(data)
    data["session"] = str(recorder.path)
    return data

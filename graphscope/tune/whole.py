"""One tuning session from start to end, headless: load the workload's graph, search the knobs, record it,
and keep the best config where asked. `graphscope tune` is this one call; the Tune panel drives the
same controller (tune/controller.py) a step at a time."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from graphscope.core.errors import BadInputError
from graphscope.core.launch_config import Dim, LaunchConfig
from graphscope.core.progress import ProgressCallback, no_progress
from graphscope.core.records import Recorder
from graphscope.tune.controller import TuningController


def tune_workload(
    workload: Path,
    start: LaunchConfig,
    timeout: float,
    recorder: Recorder | None,
    strategy: str = "descent",
    node: str | None = None,
    blocks: list[Dim] | None = None,
    reps: int | None = None,
    budget: int | None = None,
    alone: bool = True,
    verify: str = "outputs",
    save: Path | None = None,
    progress: ProgressCallback = no_progress,
    note: Callable[[str], None] = lambda line: None,
) -> dict[str, Any]:
    """The tuning session's JSON (tune/session.py `to_json`) with its record (`tuning_id`), every restart
    of the child (`restarts`) and, where `save` names a file, `saved`: that file if the best config was
    adopted and written there, else None. `note` hears what changes the verification before any work."""
    controller = TuningController(workload, start, timeout, recorder, verify=verify)
    if controller.verify_note:
        note(controller.verify_note)
    try:
        loaded = controller.load(progress)
        if not loaded.sites:
            raise BadInputError(
                f"{workload}: no ctx.launch sites to tune (library kernels, plain CuPy and PyTorch code "
                "keep the launch configurations they were built for)"
            )
        knobs = controller.knobs(node, blocks)
        result = controller.sweep(strategy, knobs, reps, progress, budget=budget, alone=alone)
    finally:
        controller.close()
    data = result.to_json()
    data["tuning_id"] = result.tuning_id
    data["restarts"] = controller.restarts
    if save:
        if result.adopt:
            result.best.config.save(save)
            data["saved"] = str(save)
        else:
            data["saved"] = None
    return data

"""The tuning controller: one live workload child, one request at a time, the tuning state, progress and
cancellation. `graphscope tune` and the Tune panel both drive it (no Qt here).

Real kernels fault, hang or refuse to launch at block shapes they were not written for. A candidate
that does is recorded with its cause (status fault, timeout or invalid), the child is restarted, the
graph re-captured, the baseline (and the best so far) re-measured under the same in-place conditions,
and the sweep goes on. Every trial goes to the recorder the caller passes (the session database's) as
it is measured, so a sweep that is killed keeps what it measured; tune never imports the store.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from graphscope.core.errors import Cancelled, WorkloadError
from graphscope.core.launch_config import Dim, LaunchConfig, Site
from graphscope.core.progress import CancelToken, ProgressCallback, no_progress
from graphscope.core.records import Recorder
from graphscope.graph.model import Dag
from graphscope.tune.measure import LiveMeasurer, Trial
from graphscope.tune.session import TuningResult, detour_config, tune
from graphscope.tune.space import Knob, knobs_for
from graphscope.workload.session import DEFAULT_TIMEOUT_S, WorkloadSession

PANEL_REPS = 50
TRIAL_TIMEOUT_FACTOR = 20.0  # a trial may take this many times the baseline's measurement before it is a hang
MIN_TRIAL_TIMEOUT_S = 15.0
FAILURES = {"timeout": "timeout", "cuda_fault": "fault", "died": "fault", "out_of_memory": "fault", "raised": "fault"}


class IsolatingMeasurer:
    """A Measurer whose failing candidates become trials with a cause instead of ending the sweep."""

    def __init__(self, controller: TuningController) -> None:
        self.controller = controller

    def baseline(self, config: LaunchConfig, reps: int, detour: LaunchConfig | None = None) -> Trial:
        return self.controller.measurer().baseline(config, reps, detour)  # a failing baseline is the user's problem

    def measure(self, config: LaunchConfig, reps: int) -> Trial:
        trial = self._guarded(lambda live: live.measure(config, reps), config, "in-place")
        if self.controller.sanitize and trial.usable:
            self._sanitize(trial)
        return trial

    def _sanitize(self, trial: Trial) -> None:
        """A measured candidate under compute-sanitizer (workload/sanitizer.py), once per config: a
        finding makes it a `sanitizer` trial that can never win."""
        from graphscope.workload.sanitizer import sanitize

        key = json.dumps(trial.config.to_json(), sort_keys=True)
        found = self.controller.sanitized.get(key)
        if found is None:
            found = self._scrubbed(trial) or sanitize(self.controller.workload, trial.config)
            self.controller.sanitized[key] = found
        if not found["clean"]:
            trial.status, trial.reason = "sanitizer", found["finding"]
        elif found["errors"]:
            trial.reason = "; ".join(found["errors"])  # the tool could not judge it: said, not held against it

    def _scrubbed(self, trial: Trial) -> dict[str, Any] | None:
        """The trial's config (applied in place), replayed once after every SM's shared memory was filled
        with NaN (workload/child/scrub.py): a finding in compute-sanitizer's form, or None when the outputs
        still match (NaN counts only where the trial's own outputs matched and were finite)."""
        started = time.perf_counter()
        outputs = self.controller.session.request("scrubbed", timeout=self.controller.measurer().timeout)
        new_nan = bool(outputs.get("nonfinite")) and trial.outputs_match is True
        if outputs.get("match") is not False and not new_nan:
            return None
        what = (
            f"{', '.join(outputs['nonfinite'])} hold NaN"
            if outputs.get("nonfinite")
            else f"outputs differ (max |diff| {outputs.get('max_abs_diff')})"
        )
        finding = (
            f"shared-memory scrub: with every SM's shared memory filled with NaN before the step, {what}: a "
            "kernel reads shared memory it never wrote (compute-sanitizer's initcheck tracks global memory only)"
        )
        return {"clean": False, "finding": finding, "errors": [], "seconds": time.perf_counter() - started}

    def confirm(self, config: LaunchConfig, reps: int) -> Trial:
        return self._guarded(lambda live: live.confirm(config, reps), config, "fresh-capture")

    def alone(self, knob: Knob, blocks: list[Dim], reps: int) -> list[Trial]:
        """The blocks timed alone; a child that fails meanwhile is restarted and the failure is each trial's."""
        try:
            return self.controller.measurer().alone(knob, blocks, reps)
        except WorkloadError as exc:
            status = FAILURES.get(exc.kind)
            if status is None:
                raise
            self.controller.restart("after timing a kernel alone failed")
            config = self.controller.loaded_baseline().config
            return [Trial(config, "alone", [], None, knob.key, b, status=status, reason=exc.message) for b in blocks]

    def _guarded(self, work: Callable[[LiveMeasurer], Trial], config: LaunchConfig, how: str) -> Trial:
        try:
            return work(self.controller.measurer())
        except WorkloadError as exc:
            status = FAILURES.get(exc.kind)
            if status is None:
                raise
            trial = Trial(config, how, [], None, status=status, reason=exc.message)
            self.controller.restart(f"after a candidate that {'timed out' if status == 'timeout' else 'faulted'}")
            return trial


@dataclass
class Loaded:
    dag: Dag
    sites: list[Site]
    baseline: Trial


class TuningController:
    """Drives one workload's tuning; every public method is one serialised operation."""

    def __init__(
        self,
        workload: Path,
        start: LaunchConfig | None = None,
        timeout: float = DEFAULT_TIMEOUT_S,
        recorder: Recorder | None = None,
        session_factory: Callable[..., Any] = WorkloadSession,
        cpu: int | None = None,
        verify: str = "outputs",
    ) -> None:
        """`verify='sanitizer'`: a candidate that measured ok also runs under compute-sanitizer before it can
        win (where the tool is missing, `verify_note` says so and tuning goes on with outputs only)."""
        self.workload = Path(workload).resolve()
        self.sanitized: dict[str, dict[str, Any]] = {}  # config JSON -> what compute-sanitizer found
        self.set_verify(verify)
        self.start = start or LaunchConfig(workload=self.workload.name)
        self.timeout = timeout
        self.recorder = recorder
        self.session_factory = session_factory
        self.cpu = cpu
        self.session: Any = None
        self.live: LiveMeasurer | None = None
        self.sites: list[Site] = []
        self.dag: Dag | None = None
        self.baseline: Trial | None = None
        self.best: Trial | None = None
        self.config = self.start
        self.history: list[Trial] = []
        self.restarts: list[str] = []
        self.pdl_result: Any = None  # the last PDL sweep (tune/pdl.py), for the panel
        self.detour: LaunchConfig | None = None
        self._lock = threading.Lock()
        self._cancel: CancelToken | None = None

    def measurer(self) -> LiveMeasurer:
        """The child's in-place measurer: started by `load`, replaced by `restart`."""
        if self.live is None:
            raise RuntimeError("load the workload first (TuningController.load)")
        return self.live

    def loaded_baseline(self) -> Trial:
        """The baseline `load` measured."""
        if self.baseline is None:
            raise RuntimeError("load the workload first (TuningController.load)")
        return self.baseline

    def loaded_best(self) -> Trial:
        """The best trial so far (the baseline until a candidate beats it)."""
        if self.best is None:
            raise RuntimeError("load the workload first (TuningController.load)")
        return self.best

    def set_verify(self, verify: str) -> str:
        """'outputs' or 'sanitizer' for the sweeps that follow; returns why the sanitizer is off, if it is."""
        from graphscope.core.settings import find_sanitizer
        from graphscope.workload.sanitizer import MISSING

        self.verify_note = MISSING if verify == "sanitizer" and find_sanitizer() is None else ""
        self.sanitize = verify == "sanitizer" and not self.verify_note
        return self.verify_note

    # -- one operation at a time ---------------------------------------------------------------

    @property
    def busy(self) -> bool:
        return self._lock.locked()

    def _operation(self, cancel: CancelToken | None):
        if not self._lock.acquire(blocking=False):
            raise RuntimeError("the tuning controller is busy with another operation")
        self._cancel = cancel
        if self.session is None and self.baseline is not None:  # a cancelled operation killed the child
            try:
                self.restart("after a cancelled operation")
            except BaseException:
                self._lock.release()
                raise
        if self.session is not None:
            self.session.cancel = cancel
        return _Release(self)

    def cancel(self) -> None:
        """Stop the running operation (its child is killed; the next operation restarts it)."""
        if self._cancel is not None:
            self._cancel.cancel()

    # -- operations ----------------------------------------------------------------------------

    def load(self, progress: ProgressCallback = no_progress, cancel: CancelToken | None = None) -> Loaded:
        """Start the child, capture the graph, read its DAG and measure the baseline in place."""
        with self._operation(cancel):
            progress(0.1, f"loading {self.workload.name} in a child process")
            self._start_session()
            self.sites = [Site.from_json(s) for s in self.session.info["sites"]]
            self.dag = Dag.from_json(self.session.request("dag"))
            progress(0.5, "measuring the baseline in place")
            knobs = knobs_for(self.sites) if self.sites else []
            self.detour = detour_config(knobs, self.start) if knobs else None
            started = time.monotonic()
            live = self.measurer()
            self.baseline = live.baseline(self.start, PANEL_REPS, self.detour)
            live.timeout = max(MIN_TRIAL_TIMEOUT_S, TRIAL_TIMEOUT_FACTOR * (time.monotonic() - started))
            self.best, self.config, self.history = self.baseline, self.start, [self.baseline]
            progress(1.0, "loaded")
            return Loaded(self.dag, self.sites, self.baseline)

    def knobs(self, only: str | None = None, blocks: list[Dim] | None = None) -> list[Knob]:
        return knobs_for(self.sites, only, blocks)

    def try_block(self, key: str, block: Dim, cancel: CancelToken | None = None) -> Trial:
        """Apply one knob's block in place on top of the current config and re-measure."""
        with self._operation(cancel):
            config = self.config.with_block(key, block)
            trial = IsolatingMeasurer(self).measure(config, len(self.loaded_baseline().samples))
            trial.knob, trial.block = key, block
            return self._keep(trial)

    def apply_config(self, config: LaunchConfig, cancel: CancelToken | None = None) -> Trial:
        """Apply a whole config (an imported one, or the best) in place and re-measure."""
        with self._operation(cancel):
            return self._keep(IsolatingMeasurer(self).measure(config, len(self.loaded_baseline().samples)))

    def _keep(self, trial: Trial) -> Trial:
        self.history.append(trial)
        if trial.usable:
            self.config = trial.config
            if trial.beats(self.loaded_best()):
                self.best = trial
        return trial

    def confirm(self, cancel: CancelToken | None = None) -> tuple[Trial, Trial]:
        """Baseline and best, each freshly captured and re-measured (no in-place edits)."""
        with self._operation(cancel):
            measurer = IsolatingMeasurer(self)
            baseline, best = self.loaded_baseline(), self.loaded_best()
            reps = len(baseline.samples)
            pair = measurer.confirm(baseline.config, reps), measurer.confirm(best.config, reps)
            self.history += pair
            return pair

    def sweep(
        self,
        strategy: str = "descent",
        knobs: list[Knob] | None = None,
        reps: int | None = None,
        progress: ProgressCallback = no_progress,
        cancel: CancelToken | None = None,
        budget: int | None = None,
        alone: bool = True,
    ) -> TuningResult:
        """Search the knobs from the current config (`budget`: trials of the model strategy; `alone`: each
        knob's candidates also timed alone and the rankings compared); with a recorder, every trial is
        recorded as it is measured (a cancelled or killed sweep keeps them)."""
        with self._operation(cancel):
            knobs = knobs if knobs is not None else knobs_for(self.sites)
            recorder = self.recorder
            started = time.time()
            tuning = (
                recorder.tuning_started(self.workload, strategy, started, self.config.to_json()) if recorder else None
            )
            seen: list[Trial] = []

            def record(seq: int, trial: Trial) -> None:
                seen.append(trial)
                if recorder is not None:
                    recorder.trial(tuning, seq, trial.to_json())

            def closed(status: str) -> None:
                if recorder is not None:
                    recorder.tuning_finished(tuning, {"trials": [t.to_json() for t in seen], "summary": None}, status)

            restarted = len(self.restarts)
            try:
                result = tune(
                    self.workload,
                    knobs,
                    IsolatingMeasurer(self),
                    strategy,
                    self.config,
                    reps,
                    self.session.info.get("capture", {}),
                    progress,
                    cancel,
                    record,
                    budget=budget,
                    isolate=alone,
                )
            except (Cancelled, KeyboardInterrupt):
                closed("cancelled")
                raise
            except BaseException:
                closed("failed")
                raise
            result.restarts = self.restarts[restarted:]
            if recorder is not None:
                data = result.to_json()
                data["tuning_id"] = tuning
                recorder.tuning_finished(tuning, data)
            self.history += result.trials
            if result.adopt:
                self.best = result.best
            result.tuning_id = tuning
            return result

    def sweep_pdl(
        self,
        only: str | None = None,
        reps: int | None = None,
        progress: ProgressCallback = no_progress,
        cancel: CancelToken | None = None,
    ) -> Any:
        """Each launch site's PDL flag flipped, freshly captured and measured, the winners confirmed afresh
        (tune/pdl.py); an adopted best becomes the current config, and the graph is captured again with the
        current config so in-place trials go on from it."""
        from graphscope.tune.pdl import pdl_knobs, tune_pdl

        with self._operation(cancel):
            dag = self.dag if self.dag is not None else Dag.from_json(self.session.request("dag"))
            knobs = pdl_knobs(self.sites, dag, only)
            recorder = self.recorder
            tuning = (
                recorder.tuning_started(self.workload, "pdl", time.time(), self.config.to_json()) if recorder else None
            )

            def record(seq: int, trial: Trial) -> None:
                if recorder is not None and tuning is not None:
                    recorder.trial(tuning, seq, trial.to_json())

            result = tune_pdl(IsolatingMeasurer(self), self.config, knobs, reps, progress, cancel, record)
            if recorder is not None and tuning is not None:
                recorder.tuning_finished(tuning, result.to_json())
            self.history += [result.baseline, *result.trials]
            if result.adopt and result.best is not None:
                self.config = result.best.config
            self.session.request("capture", config=self.config.to_json())
            self.pdl_result = result
            return result

    def current_dag(self) -> Dag:
        """The live DAG with the launch configurations now in effect."""
        with self._operation(None):
            self.dag = Dag.from_json(self.session.request("dag"))
            return self.dag

    def close(self) -> None:
        if self.session is not None:
            self.session.close()
            self.session = None

    # -- the child ------------------------------------------------------------------------------

    def _start_session(self) -> None:
        self.session = self.session_factory(self.workload, self.start, self.timeout, self._cancel, self.cpu)
        timeout = self.live.timeout if self.live is not None else None
        self.live = LiveMeasurer(self.session, timeout=timeout)

    def restart(self, why: str) -> None:
        """A new child after a failure: re-capture, then re-measure the baseline and the best so far
        under the same in-place conditions (trials keep comparing like with like)."""
        if self.session is not None:
            self.session.kill()
            self.session.close()
        self.restarts.append(why)
        self._start_session()
        self.session.request("capture", config=self.config.to_json())
        baseline, best = self.loaded_baseline(), self.loaded_best()
        reps = len(baseline.samples)
        fresh = self.measurer().baseline(baseline.config, reps, self.detour)
        baseline.samples[:] = fresh.samples
        if best is not baseline and best.usable:
            again = self.measurer().measure(best.config, reps)
            if again.usable:
                best.samples[:] = again.samples


class _Release:
    def __init__(self, controller: TuningController) -> None:
        self.controller = controller

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        controller = self.controller
        if controller._cancel is not None and controller._cancel.cancelled and controller.session is not None:
            controller.session.kill()  # a cancelled request may have left the child mid-way
            controller.session = None
        controller._cancel = None
        if controller.session is not None:
            controller.session.cancel = None
        controller._lock.release()

"""Trials and the two ways to measure them: live (a workload child, in place) and recorded (for tests)."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from graphscope.core.launch_config import Dim, LaunchConfig
from graphscope.core.stats import SampleStats, describe, speedup

if TYPE_CHECKING:
    from graphscope.tune.space import Knob

STATUSES = {
    "ok": "measured",
    "mismatch": "outputs differ from the eager reference: reported, never adopted",
    "invalid": "cannot be launched (beyond the kernel's or the device's limits, or refused by the driver)",
    "fault": "faulted on the GPU or crashed the workload (the child was restarted)",
    "timeout": "did not finish in time (the child was restarted)",
    "sanitizer": "compute-sanitizer found an error in its step (--verify sanitizer): reported, never adopted",
}


@dataclass
class Trial:
    """One configuration measured: per-replay GPU time samples (ns) and whether outputs still match."""

    config: LaunchConfig
    how: str  # "in-place", "fresh-capture", "drift-check" (the baseline again, after the search), "alone"
    samples: list[float]
    outputs_match: bool | None = True
    knob: str | None = None
    block: Dim | None = None
    apply_ns: int | None = None
    status: str = "ok"  # see STATUSES
    reason: str = ""

    @property
    def stats(self) -> SampleStats:
        return describe(self.samples)

    @property
    def usable(self) -> bool:
        return self.status == "ok" and bool(self.samples)

    def beats(self, other: Trial) -> bool:
        """Faster than `other` with a 95% interval of the speed-up that excludes 1."""
        if not (self.usable and other.usable):
            return False
        ratio = speedup(other.samples, self.samples)
        return ratio.significant and ratio.value > 1.0

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "config": self.config.to_json(),
            "how": self.how,
            "site": self.knob,
            "block": list(self.block) if self.block else None,
            "outputs_match": self.outputs_match,
            "apply_ns": self.apply_ns,
            "status": self.status,
            "reason": self.reason,
            "reps": len(self.samples),
        }
        if self.samples:
            stats = self.stats
            data.update(median_ns=stats.median, ci_low_ns=stats.ci_low, ci_high_ns=stats.ci_high)
        return data


class Measurer(Protocol):
    def baseline(self, config: LaunchConfig, reps: int, detour: LaunchConfig | None = None) -> Trial:
        """The starting point, measured under the same in-place conditions as the trials."""

    def measure(self, config: LaunchConfig, reps: int) -> Trial: ...

    def confirm(self, config: LaunchConfig, reps: int) -> Trial:
        """The same config after a fresh capture (no in-place edits)."""

    def alone(self, knob: Knob, blocks: list[Dim], reps: int) -> list[Trial]:
        """Each block with the knob's kernel timed alone, as an isolated autotuner times it."""


def signature(config: LaunchConfig) -> str:
    return json.dumps({k: list(v) for k, v in sorted(config.blocks.items())})


class RecordedMeasurer:
    """Replays timings from a model instead of a GPU: every strategy is testable in CI.

    `model(config) -> (median ns, outputs match)`; samples are drawn around the median with the given
    relative noise, from a fixed seed, so runs are repeatable. `alone_model(knob key, block) -> median ns`
    times a kernel alone (default: every block alike, 1 us).
    """

    def __init__(
        self,
        model: Callable[[LaunchConfig], tuple[float, bool]],
        noise: float = 0.01,
        seed: int = 0,
        in_place_penalty: float = 1.0,
        alone_model: Callable[[str, Dim], float] | None = None,
    ) -> None:
        self.model = model
        self.alone_model = alone_model or (lambda key, block: 1000.0)
        self.noise = noise
        self.rng = np.random.default_rng(seed)
        self.in_place_penalty = in_place_penalty
        self.calls: list[str] = []

    def _trial(self, config: LaunchConfig, reps: int, how: str, factor: float) -> Trial:
        self.calls.append(signature(config))
        median, match = self.model(config)
        samples = (self.rng.normal(median * factor, median * self.noise, reps)).tolist()
        return Trial(
            config,
            how,
            samples,
            match,
            status="ok" if match else "mismatch",
            reason="" if match else "outputs differ from the eager reference",
        )

    def baseline(self, config: LaunchConfig, reps: int, detour: LaunchConfig | None = None) -> Trial:
        return self.measure(config, reps)

    def measure(self, config: LaunchConfig, reps: int) -> Trial:
        return self._trial(config, reps, "in-place", self.in_place_penalty)

    def confirm(self, config: LaunchConfig, reps: int) -> Trial:
        return self._trial(config, reps, "fresh-capture", 1.0)

    def alone(self, knob: Knob, blocks: list[Dim], reps: int) -> list[Trial]:
        trials = []
        for block in blocks:
            median = self.alone_model(knob.key, block)
            samples = self.rng.normal(median, median * self.noise, reps).tolist()
            trials.append(Trial(LaunchConfig({knob.key: block}), "alone", samples, None, knob.key, block))
        return trials


class LiveMeasurer:
    """Applies a config to the workload's instantiated graph (no re-capture) and replays it."""

    def __init__(self, session: Any, warmup: int = 3, timeout: float | None = None) -> None:
        self.session = session
        self.warmup = warmup
        self.timeout = timeout  # per request; None: the session's

    def baseline(self, config: LaunchConfig, reps: int, detour: LaunchConfig | None = None) -> Trial:
        """The baseline under the same in-place conditions as the trials.

        Measured on an H200: an executable graph whose kernel nodes ever had their launch dimensions
        changed replays ~20% slower, even once the old values are set back (setting identical values
        costs nothing). So the nodes first take a `detour` config and then get their baseline blocks
        back, and the baseline carries the same penalty as every trial it is compared with.
        """
        if detour is not None:
            self.session.request("apply", timeout=self.timeout, config=detour.to_json())
        return self.measure(config, reps, force=True)

    def measure(self, config: LaunchConfig, reps: int, force: bool = False) -> Trial:
        applied = self.session.request("apply", timeout=self.timeout, config=config.to_json(), force=force)
        if applied["rejected"]:
            reason = "; ".join(f"{k}: {v}" for k, v in applied["rejected"].items())
            return Trial(config, "in-place", [], None, apply_ns=applied["apply_ns"], status="invalid", reason=reason)
        answer = self.session.request("measure", timeout=self.timeout, mode="graph", reps=reps, warmup=self.warmup)
        return self._trial(config, "in-place", answer, applied["apply_ns"])

    def confirm(self, config: LaunchConfig, reps: int) -> Trial:
        self.session.request("capture", timeout=self.timeout, config=config.to_json())
        answer = self.session.request("measure", timeout=self.timeout, mode="graph", reps=reps, warmup=self.warmup)
        return self._trial(config, "fresh-capture", answer, None)

    def alone(self, knob: Knob, blocks: list[Dim], reps: int) -> list[Trial]:
        shapes = [list(b) for b in blocks]
        answer = self.session.request(
            "alone", timeout=self.timeout, knob=knob.key, blocks=shapes, reps=reps, warmup=self.warmup
        )
        trials = []
        for block, timed in zip(blocks, answer["alone"]):
            status, reason = ("invalid" if timed["reason"] else "ok"), timed["reason"]
            config = LaunchConfig({knob.key: block})
            trials.append(Trial(config, "alone", timed["samples"], None, knob.key, block, status=status, reason=reason))
        return trials

    @staticmethod
    def _trial(config: LaunchConfig, how: str, answer: dict[str, Any], apply_ns: int | None) -> Trial:
        match = answer["outputs"].get("match")
        ok = match is not False
        return Trial(
            config,
            how,
            answer["gpu_ns"],
            match,
            apply_ns=apply_ns,
            status="ok" if ok else "mismatch",
            reason=""
            if ok
            else f"outputs differ from the eager reference (max |diff| {answer['outputs'].get('max_abs_diff')})",
        )

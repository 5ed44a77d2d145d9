"""Run a workload eagerly and as a CUDA graph, and say honestly how much the graph saves."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from graphscope.core.events import MODES
from graphscope.core.launch_config import LaunchConfig
from graphscope.core.progress import CancelToken, ProgressCallback, no_progress
from graphscope.core.rules import SMALL, WORTH_IT, judge_gain
from graphscope.core.stats import Ratio, SampleStats, comparable, describe, repetitions_needed, speedup
from graphscope.workload.session import DEFAULT_TIMEOUT_S, WorkloadSession


@dataclass
class ModeResult:
    mode: str
    samples: dict[str, list[float]]  # gpu_ns, wall_ns, submit_ns per repetition
    capture: dict[str, int] | None
    outputs: dict[str, Any]
    conditionals: dict[str, Any] | None = None  # per conditional construct: runs per step, costs (conditional.py)

    def stats(self, metric: str) -> SampleStats:
        return describe(self.samples[metric])

    def to_json(self) -> dict[str, Any]:
        return {
            "mode": self.mode,
            "samples": self.samples,
            "capture": self.capture,
            "outputs": self.outputs,
            "stats": {m: self.stats(m).to_json() for m in ("gpu_ns", "wall_ns", "submit_ns")},
            "repetitions_for_1pct": repetitions_needed(self.samples["wall_ns"]),
            **({"conditionals": self.conditionals} if self.conditionals else {}),
        }


@dataclass
class RunReport:
    workload: Path
    reps: int
    warmup: int
    environment: dict[str, Any]
    sites: list[dict[str, Any]]
    modes: dict[str, ModeResult]
    started: float
    finished: float
    config: LaunchConfig | None = None
    traces: dict[str, dict[str, str]] = field(default_factory=dict)  # mode -> {"sqlite":..., "report":...}
    own_cost: dict[str, Any] | None = None  # what ctx.launch / ctx.launcher add per eager step (own_cost.py)
    profiled: dict[str, dict[str, Any]] = field(default_factory=dict)  # mode -> the profiled child's medians
    divergence: dict[str, Any] | None = None  # where the graph departs from eager (when its outputs differ)

    def profiled_json(self) -> dict[str, dict[str, Any]]:
        """Each profiled mode's medians and the profiler's overhead against the unprofiled run."""
        result = {}
        for mode, profiled in self.profiled.items():
            plain = self.modes[mode].stats("wall_ns").median if mode in self.modes else None
            overhead = profiled["wall_ns"] / plain - 1 if plain else None
            result[mode] = {**profiled, "unprofiled_wall_ns": plain, "overhead": overhead}
        return result

    def own_cost_json(self) -> dict[str, Any] | None:
        """The launch wrapper's cost per eager step, its share of the eager step's median end to end, and
        the speed-up with it taken out (a graph replay pays none of it)."""
        if not self.own_cost or "eager" not in self.modes:
            return None
        eager = self.modes["eager"].stats("wall_ns").median
        result = {**self.own_cost, "share_of_eager": self.own_cost["per_step_ns"] / eager if eager > 0 else None}
        graph = self.modes.get("graph")
        if graph is not None and graph.stats("wall_ns").median > 0:
            result["speedup_without"] = (eager - self.own_cost["per_step_ns"]) / graph.stats("wall_ns").median
        return result

    def speedup(self, metric: str = "wall_ns") -> Ratio | None:
        """Eager time / graph time (above 1: the graph is faster)."""
        if not set(MODES) <= set(self.modes):
            return None
        eager, graph = self.modes["eager"].samples[metric], self.modes["graph"].samples[metric]
        if not comparable(eager, graph):
            return None
        return speedup(self.modes["eager"].samples[metric], self.modes["graph"].samples[metric])

    def verdict(self) -> str:
        """Outputs first (an eager step that drifts, outputs no check can vouch for, a graph that computes
        something else), then the speed-up against the 20% rule."""
        eager, graph = self.modes.get("eager"), self.modes.get("graph")
        if eager is not None and eager.outputs.get("match") is False:  # before the graph: it is not to blame
            worst = eager.outputs.get("worst")
            return (
                f"the eager step's outputs change from one run to the next ({worst or 'an output'} moved by up to "
                f"{eager.outputs.get('max_abs_diff', 0.0):.3g}): the step modifies state it reads (a KV cache, a "
                "counter, its own inputs) or is not deterministic, so no comparison is meaningful; a step that "
                "advances state on purpose needs a reset(ctx) that puts it back (docs/workload.md)"
            )
        nonfinite = sorted({n for r in self.modes.values() for n in r.outputs.get("nonfinite", [])})
        if nonfinite:
            return (
                f"the outputs contain NaN or Inf ({', '.join(nonfinite)}): the check cannot vouch for the graph, "
                "so its speed says nothing; fix the inputs or the step first"
            )
        if graph is not None and graph.outputs.get("match") is False:  # speed means nothing then
            worst = graph.outputs.get("worst")
            return (
                f"the outputs differ between eager and graph ({worst or 'an output'}: max |diff| "
                f"{graph.outputs.get('max_abs_diff', 0.0):.3g}): the captured graph does not compute what the eager "
                "step computes, so its speed says nothing; " + self._where()
            )
        ratio = self.speedup()
        if ratio is None:
            return "measure both modes to compare them"
        if not ratio.significant:
            return (
                f"no significant difference: end-to-end speed-up {ratio.value:.2f}x, "
                f"95% interval {ratio.low:.2f}-{ratio.high:.2f} includes 1"
            )
        judged, why = judge_gain(ratio.value)
        interval = f"95% interval {ratio.low:.2f}-{ratio.high:.2f}x"
        if judged == WORTH_IT:
            return f"the graph pays: {ratio.value:.2f}x faster end to end ({why}; {interval})"
        if judged == SMALL:
            return (
                f"the graph is faster but by little: {ratio.value:.2f}x ({why}; {interval}): "
                "rarely worth a graph's maintenance"
            )
        return f"the graph is slower: {ratio.value:.2f}x ({why}; {interval})"

    def _where(self) -> str:
        """Where the graph departs from eager, from the divergence search run when outputs differed."""
        from graphscope.diverge.launches import node_title

        found = self.divergence or {}
        if found.get("position") is not None:
            return (
                f"the first node that differs is {node_title(found.get('captured'), found['position'])}: "
                f"`graphscope diverge {self.workload.name}` shows its captured launch beside eager's"
            )
        return (
            "look for host values read inside the step, work outside ctx.stream, or inputs the step modifies "
            f"(`graphscope diverge {self.workload.name}` searches the graph for the first node that differs)"
        )

    def divergence_json(self) -> dict[str, Any] | None:
        """The search's answer; the eager step's raw launch record stays out (each node carries its own)."""
        if self.divergence is None:
            return None
        bulky = ("eager_launches",)
        return {k: v for k, v in self.divergence.items() if k not in bulky}

    def to_json(self) -> dict[str, Any]:
        ratios = {m: r.to_json() for m in ("wall_ns", "gpu_ns") if (r := self.speedup(m)) is not None}
        return {
            "workload": str(self.workload),
            "reps": self.reps,
            "warmup": self.warmup,
            "environment": self.environment,
            "sites": self.sites,
            "modes": {m: r.to_json() for m, r in self.modes.items()},
            "speedup": ratios,
            "verdict": self.verdict(),
            "outputs_match": all(
                r.outputs.get("match") is not False and not r.outputs.get("nonfinite") for r in self.modes.values()
            ),
            "config": self.config.to_json() if self.config else None,
            "traces": self.traces,
            "own_cost": self.own_cost_json(),
            "profiled": self.profiled_json(),
            "divergence": self.divergence_json(),
            "started": self.started,
            "finished": self.finished,
        }


def run_workload(
    path: Path,
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
) -> RunReport:
    """Measure each mode in one child process (eager first, so graph outputs compare against eager ones).

    With `profile` ('nsys' or 'torch'), each mode then runs again in a fresh child under Nsight Systems or
    torch.profiler (fewer repetitions, marked) and the traces are attached to the report; the numbers
    above come from the unprofiled run, the profiled run's medians give the profiler's overhead. `cpu`
    pins the child to one core (eager launch speed differs from core to core).
    """
    started = time.time()
    progress(0.0, f"loading {Path(path).name} in a child process")
    results: dict[str, ModeResult] = {}
    with WorkloadSession(Path(path), config, timeout, cancel, cpu) as session:
        for i, mode in enumerate(m for m in MODES if m in modes):
            progress(0.1 + 0.6 * i / len(modes), f"measuring {mode}: {reps} repetitions after {warmup} warm-up")
            answer = session.request("measure", mode=mode, reps=reps, warmup=warmup)
            results[mode] = ModeResult(
                mode,
                {k: answer[k] for k in ("gpu_ns", "wall_ns", "submit_ns")},
                answer.get("capture"),
                answer["outputs"],
                answer.get("conditionals"),
            )
        info = session.info
        own_cost = session.request("own_cost")["own_cost"] if "eager" in results else None
        divergence = None
        if "graph" in results and results["graph"].outputs.get("match") is False:
            from graphscope.workload.divergence import diverge_in

            progress(0.72, "the graph's outputs differ from eager's: searching for the first node that differs")
            divergence = diverge_in(session)
    report = RunReport(
        Path(path).resolve(),
        reps,
        warmup,
        info["environment"],
        info["sites"],
        results,
        started,
        time.time(),
        config,
        own_cost=own_cost,
        divergence=divergence,
    )
    if profile:
        from graphscope.workload.profiling import PROFILED_REPS, profile_modes

        progress(0.75, f"profiling each mode under {'Nsight Systems' if profile == 'nsys' else 'torch.profiler'}")
        report.traces, report.profiled = profile_modes(
            profile,
            Path(path),
            tuple(results),
            min(reps, PROFILED_REPS),
            warmup,
            config,
            trace_dir or Path(path).resolve().parent / "graphscope-traces",
            timeout,
        )
    progress(1.0, "done")
    return report

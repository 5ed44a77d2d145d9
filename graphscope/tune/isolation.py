"""In the graph vs alone: would an isolated autotuner have picked the same block?

Compilers and autotuners (Inductor, Triton, TensorRT-LLM, Kernel Tuner) time each candidate with its
kernel alone. graphscope times candidates in the real instantiated graph, beside their neighbours. For
each tuned knob, every candidate is timed both ways from the same starting config (the session's
baseline, the other knobs unchanged): in the graph (the whole step's replay time, in place; trials the
search already measured are reused) and alone (graph/alone.py). The two rankings are compared with
Kendall's tau-b, and the regret of trusting the alone winner is what it costs in the graph against the
graph's own winner, in ns and as a share of the step, confirmed with fresh captures of both configs.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from graphscope.core.launch_config import Dim, LaunchConfig, format_dim
from graphscope.core.stats import speedup
from graphscope.core.units import format_ns
from graphscope.tune.measure import Trial, signature
from graphscope.tune.space import Knob

AloneTimer = Callable[[Knob, list[Dim], int], list[Trial]]  # knob, blocks, reps -> one "alone" trial a block
InPlace = Callable[[LaunchConfig], Trial]


@dataclass
class KnobIsolation:
    """One knob's candidates ranked in the graph and alone."""

    knob: str
    kernel: str
    blocks: list[Dim]
    in_graph: list[Trial]
    alone: list[Trial]
    step_ns: float  # the baseline step (the regret's share is of this)
    tau: float | None = None
    tau_p: float | None = None
    fresh: dict[str, Trial] = field(default_factory=dict)  # "graph_winner", "alone_winner": fresh captures

    def compared(self) -> list[int]:
        """Positions of the blocks measured both ways."""
        return [i for i, (g, a) in enumerate(zip(self.in_graph, self.alone)) if g.usable and a.usable]

    def _winner(self, trials: list[Trial]) -> int | None:
        usable = self.compared()
        return min(usable, key=lambda i: trials[i].stats.median) if usable else None

    @property
    def graph_winner(self) -> int | None:
        return self._winner(self.in_graph)

    @property
    def alone_winner(self) -> int | None:
        return self._winner(self.alone)

    def regret_ns(self) -> float | None:
        """What trusting the alone winner costs in the graph (in place), against the graph's winner."""
        g, a = self.graph_winner, self.alone_winner
        if g is None or a is None:
            return None
        return self.in_graph[a].stats.median - self.in_graph[g].stats.median

    def regret_significant(self) -> bool:
        """Is the alone winner slower in the graph than the graph's winner, with a 95% interval excluding 1?"""
        g, a = self.graph_winner, self.alone_winner
        if g is None or a is None or g == a:
            return False
        ratio = speedup(self.in_graph[a].samples, self.in_graph[g].samples)
        return ratio.significant and ratio.value > 1

    def fresh_regret(self) -> tuple[float, bool] | None:
        """(ns, significant) of the same regret between fresh captures of the two configs."""
        graph, alone = self.fresh.get("graph_winner"), self.fresh.get("alone_winner")
        if graph is None or alone is None or not (graph.usable and alone.usable):
            return None
        ratio = speedup(alone.samples, graph.samples)
        return alone.stats.median - graph.stats.median, ratio.significant and ratio.value > 1

    def verdict(self) -> str:
        """One sentence naming the numbers it judged."""
        compared = self.compared()
        if len(compared) < 2:
            return f"{self.knob}: fewer than two candidates measured both ways; nothing to compare"
        g, a = self.graph_winner, self.alone_winner
        tau = f"Kendall tau {self.tau:.2f}" if self.tau is not None else "tau not computed"
        if g == a:
            return (
                f"{self.knob}: alone and in the graph pick the same block {format_dim(self.blocks[g])} "
                f"({tau} over {len(compared)} candidates): an isolated autotuner would have done as well"
            )
        regret = self.regret_ns() or 0.0
        if not self.regret_significant():
            return (
                f"{self.knob}: alone {format_dim(self.blocks[a])} wins, in the graph {format_dim(self.blocks[g])} "
                f"({tau} over {len(compared)} candidates), but in the graph the two are within noise "
                f"({format_ns(regret)}, a speed-up interval that includes 1): trusting the alone winner costs "
                "nothing measurable"
            )
        text = (
            f"{self.knob}: alone {format_dim(self.blocks[a])} wins, in the graph {format_dim(self.blocks[g])} "
            f"({tau} over {len(compared)} candidates); trusting the alone winner costs {format_ns(regret)} a step "
            f"in place ({regret / self.step_ns:.1%} of the step)"
        )
        fresh = self.fresh_regret()
        if fresh is not None:
            cost, significant = fresh
            text += f", {format_ns(cost)} with fresh captures ({'significant' if significant else 'not significant'})"
        return text

    def to_json(self) -> dict[str, Any]:
        fresh = self.fresh_regret()
        g, a = self.graph_winner, self.alone_winner
        return {
            "knob": self.knob,
            "kernel": self.kernel,
            "candidates": [
                {
                    "block": list(block),
                    "in_graph": graph.to_json(),
                    "alone": alone.to_json(),
                }
                for block, graph, alone in zip(self.blocks, self.in_graph, self.alone)
            ],
            "compared": len(self.compared()),
            "kendall_tau": self.tau,
            "kendall_p": self.tau_p,
            "graph_winner": list(self.blocks[g]) if g is not None else None,
            "alone_winner": list(self.blocks[a]) if a is not None else None,
            "step_ns": self.step_ns,
            "regret_ns": self.regret_ns(),
            "regret_share": (self.regret_ns() or 0.0) / self.step_ns if self.regret_ns() is not None else None,
            "regret_significant": self.regret_significant(),
            "fresh": {k: t.to_json() for k, t in self.fresh.items()},
            "fresh_regret_ns": fresh[0] if fresh else None,
            "fresh_regret_significant": fresh[1] if fresh else None,
            "verdict": self.verdict(),
        }


def kendall_tau(x: list[float], y: list[float]) -> tuple[float | None, float | None]:
    """Kendall's tau-b and its p-value (scipy.stats); (None, None) for fewer than two pairs or no scipy."""
    if len(x) < 2:
        return None, None
    try:
        from scipy.stats import kendalltau
    except ImportError:
        return None, None
    result = kendalltau(x, y)
    tau, p = float(result.statistic), float(result.pvalue)
    return (None, None) if tau != tau else (tau, p)  # NaN: one side has no spread


def compare_knob(
    knob: Knob,
    base: LaunchConfig,
    step_ns: float,
    measured: dict[str, Trial],
    in_place: InPlace,
    alone: AloneTimer,
    confirm: InPlace,
    reps: int,
) -> KnobIsolation:
    """Every candidate of `knob` from `base`, in the graph (reusing `measured` trials by config) and alone;
    the rankings compared; the two winners confirmed with fresh captures when the alone winner is
    significantly slower in the graph."""
    blocks = list(knob.candidates)
    in_graph = []
    for block in blocks:
        config = base.with_block(knob.key, block)
        trial = measured.get(signature(config))
        if trial is None:
            trial = measured[signature(config)] = in_place(config)
            trial.knob, trial.block = knob.key, block
        in_graph.append(trial)
    usable = [b for b, t in zip(blocks, in_graph) if t.usable]  # what faulted in the graph is not run again
    timed = dict(zip(map(tuple, usable), alone(knob, usable, reps))) if usable else {}
    none = Trial(base, "alone", [], None, status="invalid", reason="not usable in the graph: not timed alone")
    alone_trials = [timed.get(tuple(b), none) for b in blocks]
    result = KnobIsolation(knob.key, knob.sites[0].kernel, blocks, in_graph, alone_trials, step_ns)
    both = result.compared()
    result.tau, result.tau_p = kendall_tau(
        [in_graph[i].stats.median for i in both], [alone_trials[i].stats.median for i in both]
    )
    g, a = result.graph_winner, result.alone_winner
    if result.regret_significant():
        result.fresh["graph_winner"] = confirm(base.with_block(knob.key, blocks[g]))
        result.fresh["alone_winner"] = confirm(base.with_block(knob.key, blocks[a]))
    return result

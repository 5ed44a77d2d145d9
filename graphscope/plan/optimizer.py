"""Which batch sizes to capture as CUDA graphs: the exact optimum under memory and start-up budgets.

An inference server pads each request of size b up to the smallest captured size c >= b and replays
that graph; a request above the largest captured size runs eagerly. Given per-size measurements (the
eager step and the graph replay at each candidate size, the device memory and the capture time each
graph costs) and a request-size distribution, the expected step time of a set C of captured sizes is

    E(C) = sum_b w_b * (graph(c(b)) if b <= max C else eager(b))

where eager(b) is the eager step at the smallest measured size >= b. `best` finds the C that
minimises E(C) within the budgets exactly: a dynamic programme over the sizes in increasing order
whose states are the last captured size, keeping every (memory, start-up, time) point that no other
point beats on all three (so no budget-feasible optimum is pruned). The same states give the Pareto
frontiers of expected time against memory and against start-up.
"""

from __future__ import annotations

import bisect
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from graphscope.core.rules import WORTHWHILE_GAIN


@dataclass(frozen=True)
class SizeCost:
    """What one candidate size costs, measured: times in ns, memory in bytes."""

    size: int
    eager_ns: float
    graph_ns: float
    memory_bytes: int
    startup_ns: float  # capture + instantiate + upload

    @property
    def pays(self) -> bool:
        """The seeds' 20% rule at this size: does its graph save at least ~20% of the eager step?"""
        return self.graph_ns <= (1 - WORTHWHILE_GAIN) * self.eager_ns


@dataclass(frozen=True)
class Choice:
    """A set of captured sizes and what it gives under a traffic distribution."""

    sizes: tuple[int, ...]
    expected_ns: float
    memory_bytes: int
    startup_ns: float
    padding_waste: float  # padded work / needed work - 1 over the requests that replay a graph
    eager_share: float  # share of requests (by weight) that run eagerly (above the largest captured size)
    switch_ns: float = 0.0  # expected cost per request of switching from another graph (or eager) to this one

    @property
    def predicted_ns(self) -> float:
        """What serving independent requests costs per request: expected time plus switches."""
        return self.expected_ns + self.switch_ns

    def to_json(self) -> dict[str, object]:
        return {
            "sizes": list(self.sizes),
            "expected_ns": self.expected_ns,
            "switch_ns": self.switch_ns,
            "predicted_ns": self.predicted_ns,
            "memory_bytes": self.memory_bytes,
            "startup_ns": self.startup_ns,
            "padding_waste": self.padding_waste,
            "eager_share": self.eager_share,
        }


@dataclass
class Plan:
    costs: list[SizeCost]
    best: Choice | None  # None: no set fits the budgets (not even capturing nothing, which always fits)
    all_eager: Choice
    memory_frontier: list[Choice] = field(default_factory=list)
    startup_frontier: list[Choice] = field(default_factory=list)


class _Model:
    def __init__(self, costs: Sequence[SizeCost], traffic: Mapping[int, float], switch_ns: float = 0.0) -> None:
        self.switch_penalty = max(float(switch_ns or 0.0), 0.0)
        self.costs = sorted(costs, key=lambda c: c.size)
        self.sizes = [c.size for c in self.costs]
        total = sum(w for w in traffic.values() if w > 0)
        if not self.costs or total <= 0:
            raise ValueError("planning needs measured sizes and requests with a positive weight")
        self.requests = sorted((int(b), w / total) for b, w in traffic.items() if w > 0 and b > 0)
        self._bounds = [b for b, _ in self.requests]
        weight = eager = 0.0
        self._weight, self._eager = [0.0], [0.0]  # prefix sums: request weight, weight x eager time
        for size, w in self.requests:
            weight += w
            eager += w * self.eager(size)
            self._weight.append(weight)
            self._eager.append(eager)
        self._graph = {c.size: c.graph_ns for c in self.costs}

    def _upto(self, size: int | None) -> int:
        """How many requests are at most `size` (None: none)."""
        return 0 if size is None else bisect.bisect_right(self._bounds, size)

    def eager(self, size: int) -> float:
        at = min(bisect.bisect_left(self.sizes, size), len(self.sizes) - 1)
        return self.costs[at].eager_ns

    def evaluate(self, chosen: Sequence[int]) -> Choice:
        chosen = sorted(chosen)
        by_size = {c.size: c for c in self.costs}
        expected = padded = needed = eager_share = 0.0
        share = dict.fromkeys(chosen, 0.0)  # of the requests, by the graph that runs them
        for size, weight in self.requests:
            at = bisect.bisect_left(chosen, size)
            if at < len(chosen):
                expected += weight * by_size[chosen[at]].graph_ns
                padded += weight * chosen[at]
                needed += weight * size
                share[chosen[at]] += weight
            else:
                expected += weight * self.eager(size)
                eager_share += weight
        memory = sum(by_size[s].memory_bytes for s in chosen)
        startup = sum(by_size[s].startup_ns for s in chosen)
        waste = padded / needed - 1 if needed else 0.0
        # independent requests: the one before runs elsewhere with probability 1 - share; switches into eager
        # steps are not priced (the penalty is measured between graphs)
        switching = sum(w * (1 - w) for w in share.values())
        return Choice(tuple(chosen), expected, memory, startup, waste, eager_share, self.switch_penalty * switching)

    def segment(self, low: int | None, high: int) -> float:
        """Expected time of the requests in (low, high] replayed at `high` (low None: from 0)."""
        return self._graph[high] * (self._weight[self._upto(high)] - self._weight[self._upto(low)])

    def tail(self, low: int | None) -> float:
        """Expected time of the requests above `low` run eagerly (low None: every request)."""
        return self._eager[-1] - self._eager[self._upto(low)]


def plan(
    costs: Sequence[SizeCost],
    traffic: Mapping[int, float],
    memory_budget: int | None = None,
    startup_budget_ns: float | None = None,
    switch_ns: float = 0.0,
) -> Plan:
    """The best set of sizes within the budgets, with both Pareto frontiers (see the module docstring);
    `switch_ns`, the measured cost of replaying a graph after another one, is priced into each choice's
    prediction (not into the optimisation, whose objective stays the exact expected time)."""
    model = _Model(costs, traffic, switch_ns)
    states: dict[int, list[tuple[int, float, float, tuple[int, ...]]]] = {}
    memory_limit = memory_budget if memory_budget is not None else float("inf")
    startup_limit = startup_budget_ns if startup_budget_ns is not None else float("inf")
    for k, cost in enumerate(model.costs):
        points: list[tuple[int, float, float, tuple[int, ...]]] = [
            (cost.memory_bytes, cost.startup_ns, model.segment(None, cost.size), (cost.size,))
        ]
        for j in range(k):
            below = model.costs[j].size
            added = model.segment(below, cost.size)
            for memory, startup, time, chosen in states.get(j, []):
                points.append(
                    (memory + cost.memory_bytes, startup + cost.startup_ns, time + added, (*chosen, cost.size))
                )
        states[k] = _pareto([p for p in points if p[0] <= memory_limit and p[1] <= startup_limit])
    finals: list[tuple[int, float, float, tuple[int, ...]]] = [(0, 0.0, model.tail(None), ())]
    for k, points in states.items():
        tail = model.tail(model.costs[k].size)
        finals += [(m, s, t + tail, chosen) for m, s, t, chosen in points]
    finals = _pareto(finals)
    best = min(finals, key=lambda p: (p[2], p[0], p[1], len(p[3])))
    result = Plan(list(model.costs), model.evaluate(best[3]), model.evaluate(()))
    result.memory_frontier = _frontier(model, finals, 0)
    result.startup_frontier = _frontier(model, finals, 1)
    return result


def evaluate(
    costs: Sequence[SizeCost], traffic: Mapping[int, float], sizes: Sequence[int], switch_ns: float = 0.0
) -> Choice:
    """What a given list of sizes (an engine's default, say) gives; sizes not measured are refused."""
    model = _Model(costs, traffic, switch_ns)
    missing = sorted(set(sizes) - set(model.sizes))
    if missing:
        raise ValueError(f"sizes {missing[:8]} were not measured (measure them with --sizes)")
    return model.evaluate(sizes)


def _pareto(points: list[tuple]) -> list[tuple]:
    """The points no other point beats on memory, start-up and time together (ties: the first kept).

    In time order a point survives unless an earlier survivor is no larger on both resources: a check
    against the survivors' columns at once (numpy), the survivors kept few by the budgets."""
    if len(points) < 2:
        return points
    points = sorted(points, key=lambda p: (p[2], p[0], p[1]))
    memory = np.array([p[0] for p in points], dtype=np.float64)
    startup = np.array([p[1] for p in points], dtype=np.float64)
    kept = np.zeros(len(points), dtype=bool)
    kept_memory, kept_startup = np.empty(len(points)), np.empty(len(points))
    count = 0
    for i in range(len(points)):
        if count and bool(((kept_memory[:count] <= memory[i]) & (kept_startup[:count] <= startup[i])).any()):
            continue
        kept[i] = True
        kept_memory[count], kept_startup[count] = memory[i], startup[i]
        count += 1
    return [p for p, k in zip(points, kept.tolist()) if k]


def _frontier(model: _Model, points: list[tuple], axis: int) -> list[Choice]:
    """Expected time against one resource (0 memory, 1 start-up): the points no cheaper one beats."""
    frontier: list[tuple] = []
    for point in sorted(points, key=lambda p: (p[axis], p[2])):
        if not frontier or point[2] < frontier[-1][2]:
            frontier.append(point)
    return [model.evaluate(p[3]) for p in frontier]

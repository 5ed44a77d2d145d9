"""Why a chosen size is in the plan when the per-size table says its graph does not pay.

The per-size table judges each size's graph against its own eager step by the ~20% rule; the planner
instead minimises the expected step over the whole traffic, where a size's graph also serves every
request padded up to it. A size under the rule can still lower the expected step: the requests it
serves would otherwise pad further up (to the next chosen size: more padding) or run eagerly (above
the largest chosen size). For each such size: the requests it serves, where they would go without it,
and the plan's numbers with and without it (expected step, padding waste, switching, predicted step).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from graphscope.plan.optimizer import Choice, SizeCost, evaluate


def kept_under_rule(
    costs: Sequence[SizeCost], traffic: Mapping[int, float], best: Choice | None, switch_ns: float = 0.0
) -> list[dict[str, Any]]:
    """One entry per chosen size whose graph fails the 20% rule at its own size (the module docstring)."""
    if best is None or not best.sizes:
        return []
    by_size = {c.size: c for c in costs}
    total = sum(w for w in traffic.values() if w > 0)
    entries = []
    for i, size in enumerate(best.sizes):
        cost = by_size[size]
        if cost.pays:
            continue
        low = best.sizes[i - 1] if i else 0
        served = sum(w for b, w in traffic.items() if w > 0 and low < b <= size) / total if total else 0.0
        without = evaluate(costs, traffic, [s for s in best.sizes if s != size], switch_ns)
        entries.append(
            {
                "size": size,
                "saving": 1 - cost.graph_ns / cost.eager_ns if cost.eager_ns else 0.0,
                "serves_sizes": [low + 1, size],
                "serves_share": served,
                "instead": best.sizes[i + 1] if i + 1 < len(best.sizes) else None,  # None: they run eagerly
                "memory_bytes": cost.memory_bytes,
                "startup_ns": cost.startup_ns,
                "with": _numbers(best),
                "without": _numbers(without),
            }
        )
    return entries


def _numbers(choice: Choice) -> dict[str, float]:
    return {
        "expected_ns": choice.expected_ns,
        "switch_ns": choice.switch_ns,
        "predicted_ns": choice.predicted_ns,
        "padding_waste": choice.padding_waste,
        "eager_share": choice.eager_share,
    }

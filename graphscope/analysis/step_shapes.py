"""Which operator input shapes each step ran, where the trace records shapes: one of the causes the
anatomy names when a step's mode changes (analysis/anatomy.py `changes`): a step that runs a shape no
earlier step ran (a new batch size, a new sequence length) is one a graph captured for the old shapes
cannot replay, so an engine runs it eagerly or captures anew.

Shapes come from a PyTorch-profiler trace's operator events (`Input Dims` with `Input type`, which
`record_shapes=True` writes; trace/kineto.py keeps them as the operator range's `shapes`). An operator
belongs to the step its range starts in. A trace without shapes gives None: no cause is guessed.
"""

from __future__ import annotations

import numpy as np

from graphscope.core.events import RANGE_DOMAINS
from graphscope.trace.model import Trace

OPERATOR = RANGE_DOMAINS["cpu_op"]


Shapes = list[tuple[tuple[str, str], ...]]
"""Per step, its distinct (operator, input shapes) pairs in the order they first ran."""


def step_shapes(trace: Trace, start: np.ndarray, end: np.ndarray) -> Shapes | None:
    """Per step [start, end), its distinct (operator, input shapes) texts in the order they first ran;
    None when no operator of the trace records its shapes."""
    nvtx = trace.nvtx
    if not len(nvtx) or "shapes" not in nvtx.columns or "domain" not in nvtx.columns:
        return None
    rows = np.flatnonzero((nvtx.shapes >= 0) & (nvtx.domain == OPERATOR) & (nvtx.text >= 0))
    if not len(rows):
        return None
    at = np.asarray(nvtx.start[rows], np.int64)
    step = np.searchsorted(np.asarray(start, np.int64), at, side="right") - 1
    inside = step >= 0
    inside[inside] = at[inside] < np.asarray(end, np.int64)[step[inside]]
    rows, step, at = rows[inside], step[inside], at[inside]
    order = np.lexsort((at, step))  # by step, then start: a pair's first row in a step is its first run
    rows, step = rows[order], step[order]
    # one int64 per (operator, shapes) (symbol ids under 2**31), then per (step, pair): 1-D uniques, which
    # took a tenth of np.unique(axis=0)'s time over 2M rows
    pair_key = (nvtx.text[rows].astype(np.int64) << 31) | nvtx.shapes[rows].astype(np.int64)
    pair_keys, pair = np.unique(pair_key, return_inverse=True)
    _, first = np.unique(step * len(pair_keys) + pair.reshape(-1), return_index=True)
    first = np.sort(first)
    names = trace.symbols
    per_step: list[list[tuple[str, str]]] = [[] for _ in range(len(start))]
    for s, key in zip(step[first].tolist(), pair_keys[pair.reshape(-1)[first]].tolist(), strict=True):
        per_step[s].append((names.name(key >> 31), names.name(key & ((1 << 31) - 1))))
    return [tuple(pairs) for pairs in per_step]


def _new(shapes: Shapes, step: int, seen: set[tuple[str, str]]) -> list[tuple[str, str]]:
    return [pair for pair in shapes[step] if pair not in seen]


def shape_causes(shapes: Shapes, modes: list[str]) -> dict[int, list[str]]:
    """For each step whose mode differs from the step before: its operator shapes no earlier step ran,
    as "operator (shapes)" texts in the order they first ran.

    Operators whose shapes change from step to step anyway (a tensor sized by the data: seen on the
    shipped recommender traces, whose `aten::to` ran a new int[N] in every step) say nothing of a mode
    change: an operator that ran a new shape in a step whose mode did NOT change is left out."""
    seen: set[tuple[str, str]] = set()
    volatile: set[str] = set()
    fresh: dict[int, list[tuple[str, str]]] = {}
    for step in range(len(shapes)):
        new = _new(shapes, step, seen) if step else []
        if step and modes[step] != modes[step - 1]:
            fresh[step] = new
        elif new:
            volatile.update(op for op, _ in new)
        seen.update(shapes[step])
    causes = {}
    for step, new in fresh.items():
        steady = [f"{op} ({dims})" for op, dims in new if op not in volatile]
        if steady:
            causes[step] = steady
    return causes

"""The searches behind `graphscope diverge`, free of the GPU: each takes a predicate that runs one trial.

`first_divergence(count, differs)` finds the first node whose prefix (nodes 0..k in capture order, the
rest disabled) leaves buffers that differ from the reference after the same prefix: a binary search,
about log2(count) + 1 trials, that trusts the answer only once it has seen prefix k differ and prefix
k - 1 match. `inputs_among(count, changes)` finds which of `count` buffers carry data into the step
(poisoning them changes its outputs) by splitting groups: at most about 2 * inputs * log2(count) trials.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field


@dataclass
class Search:
    """The first differing node (None: no prefix differs), and every trial that found it."""

    node: int | None
    trials: list[tuple[int, bool]] = field(default_factory=list)  # (last enabled node, differed)
    note: str = ""

    @property
    def replays(self) -> int:
        return len(self.trials)


def first_divergence(count: int, differs: Callable[[int], bool], full_differs: bool | None = None) -> Search:
    """The smallest k in 0..count-1 whose prefix differs, assuming a prefix that differs stays different
    when it grows (a later node that rewrites the same buffer with the right values breaks that: the
    answer is then checked against its neighbour and the search says so).

    `full_differs`: what a trial of the whole graph answered already (saves one trial)."""
    search = Search(None)
    if count <= 0:
        search.note = "the graph has no node to search"
        return search

    def trial(k: int) -> bool:
        answer = bool(differs(k))
        search.trials.append((k, answer))
        return answer

    whole = trial(count - 1) if full_differs is None else full_differs
    if not whole:
        search.note = "no prefix differs: every node's buffers match the reference after the whole graph"
        return search
    low, high = -1, count - 1  # prefix `low` matches (-1: nothing ran), prefix `high` differs
    while high - low > 1:
        middle = (low + high) // 2
        if trial(middle):
            high = middle
        else:
            low = middle
    search.node = high
    if low != high - 1:  # cannot happen with the loop above; kept as the invariant the answer rests on
        search.note = "the search ended without seeing the node's predecessor match"
    return search


def inputs_among(count: int, changes: Callable[[list[int]], bool]) -> list[int]:
    """Which of buffers 0..count-1 change the step's outputs when poisoned (its inputs and the state it
    reads), found by testing groups: a group whose poisoning changes nothing holds no input; one that does
    is split in two until single buffers remain. `changes(group)` poisons the group, runs the reference
    and says whether its outputs moved."""
    found: list[int] = []
    pending = [list(range(count))] if count else []
    while pending:
        group = pending.pop()
        if not changes(group):
            continue
        if len(group) == 1:
            found.append(group[0])
            continue
        half = len(group) // 2
        pending.extend([group[half:], group[:half]])
    return sorted(found)

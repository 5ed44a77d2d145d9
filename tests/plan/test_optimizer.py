"""The capture-size optimiser against brute force on small cases, and its accounting by hand."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from graphscope.plan.optimizer import SizeCost, evaluate, plan


def costs_strategy():
    size = st.integers(1, 64)
    return st.lists(
        st.builds(
            lambda s, e, g, m, t: SizeCost(s, float(e), float(g), m, float(t)),
            size,
            st.integers(100, 10_000),
            st.integers(50, 10_000),
            st.integers(0, 1000),
            st.integers(0, 1000),
        ),
        min_size=1,
        max_size=7,
        unique_by=lambda c: c.size,
    )


@settings(max_examples=200, deadline=None)
@given(
    costs_strategy(),
    st.dictionaries(st.integers(1, 70), st.integers(1, 20), min_size=1, max_size=12),
    st.one_of(st.none(), st.integers(0, 3000)),
    st.one_of(st.none(), st.integers(0, 3000)),
)
def test_the_plan_is_the_brute_force_optimum(costs, traffic, memory, startup):
    result = plan(costs, traffic, memory, startup)
    best = None
    sizes = [c.size for c in costs]
    for r in range(len(sizes) + 1):
        for chosen in itertools.combinations(sizes, r):
            choice = evaluate(costs, traffic, chosen)
            if memory is not None and choice.memory_bytes > memory:
                continue
            if startup is not None and choice.startup_ns > startup:
                continue
            if best is None or choice.expected_ns < best.expected_ns - 1e-9:
                best = choice
    assert result.best.expected_ns == pytest.approx(best.expected_ns, rel=1e-12, abs=1e-9)
    assert memory is None or result.best.memory_bytes <= memory
    assert startup is None or result.best.startup_ns <= startup
    frontier = [c.expected_ns for c in result.memory_frontier]
    assert frontier == sorted(frontier, reverse=True)  # more memory buys less time along the frontier


def test_a_hand_counted_case():
    costs = [SizeCost(1, 100.0, 20.0, 10, 5.0), SizeCost(4, 400.0, 50.0, 40, 8.0), SizeCost(8, 800.0, 90.0, 80, 9.0)]
    traffic = {1: 1, 3: 1, 8: 2}  # sizes 1, 3 and 8, the last twice as often
    choice = evaluate(costs, traffic, [4])
    # size 1 and 3 replay the size-4 graph (50 ns); size 8 runs eagerly (800 ns): (50 + 50 + 2 x 800) / 4
    assert choice.expected_ns == pytest.approx(425.0) and choice.eager_share == pytest.approx(0.5)
    assert choice.padding_waste == pytest.approx((4 + 4) / (1 + 3) - 1)
    assert plan(costs, traffic).best.sizes == (1, 4, 8)
    assert plan(costs, traffic, memory_budget=120).best.sizes == (4, 8)  # 1+4+8 needs 130; 4+8: 70 ns, 1+8: 72.5
    assert plan(costs, traffic, memory_budget=90).best.sizes == (1, 8)  # 4+8 needs 120 bytes
    assert SizeCost(8, 800.0, 90.0, 80, 9.0).pays and not SizeCost(2, 100.0, 90.0, 0, 0.0).pays


def test_unmeasured_sizes_are_refused():
    with pytest.raises(ValueError, match="were not measured"):
        evaluate([SizeCost(1, 1.0, 1.0, 0, 0.0)], {1: 1}, [1, 2])


def test_switching_between_graphs_is_priced_by_how_often_independent_requests_change_graph():
    costs = [SizeCost(s, 100_000.0, 20_000.0 + 1_000 * s, 1 << 20, 1e6) for s in (1, 2, 4, 8)]
    traffic = {1: 1.0, 4: 1.0, 16: 2.0}  # half the requests above 8 run eagerly
    choice = evaluate(costs, traffic, [1, 4], switch_ns=2_000.0)
    # graph 1 and graph 4 each run a quarter: each replay follows something else 3/4 of the time
    assert choice.switch_ns == pytest.approx(2_000.0 * 2 * 0.25 * 0.75)
    assert choice.predicted_ns == pytest.approx(choice.expected_ns + choice.switch_ns)
    assert evaluate(costs, traffic, [8], switch_ns=2_000.0).switch_ns == pytest.approx(2_000.0 * 0.5 * 0.5)
    assert evaluate(costs, traffic, [], switch_ns=2_000.0).switch_ns == 0.0  # no graphs, no switches
    assert plan(costs, traffic, switch_ns=2_000.0).best.expected_ns == plan(costs, traffic).best.expected_ns

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from graphscope.analysis import intervals

spans = st.lists(st.tuples(st.integers(0, 200), st.integers(0, 30)), min_size=0, max_size=40)


def _arrays(pairs):
    start = np.array([s for s, _ in pairs], dtype=np.int64)
    return start, start + np.array([d for _, d in pairs], dtype=np.int64)


@given(spans)
def test_covered_time_matches_a_brute_force_timeline(pairs):
    start, end = _arrays(pairs)
    timeline = np.zeros(300, dtype=bool)
    for s, e in zip(start, end):
        timeline[s:e] = True
    assert intervals.covered_ns(start, end) == timeline.sum()


@given(spans)
def test_union_is_disjoint_sorted_and_gaps_fill_the_holes(pairs):
    start, end = _arrays(pairs)
    s, e = intervals.union(start, end)
    assert (s[1:] > e[:-1]).all() and (e >= s).all()
    gap_start, gap_end, next_index = intervals.gaps(start, end)
    assert len(gap_start) == max(len(s) - 1, 0)
    assert (gap_end - gap_start > 0).all()
    assert np.array_equal(start[next_index], gap_end)
    if len(s):
        assert (e[-1] - s[0]) == intervals.covered_ns(start, end) + (gap_end - gap_start).sum()

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from graphscope.analysis import kernel_stats as kernel_stats_module
from graphscope.analysis.kernel_stats import _sorted_within_groups, grouped_stats, kernel_stats
from graphscope.trace import load_trace
from tests.conftest import DATA


@given(rows=st.lists(st.tuples(st.integers(0, 4), st.integers(0, 10_000)), min_size=1, max_size=60))
def test_grouped_stats_match_numpy_per_group(rows):
    keys = np.array([k for k, _ in rows])
    durations = np.array([d for _, d in rows])
    start = np.arange(len(rows)) * 7
    stats = grouped_stats(keys, start, start + durations)
    assert list(stats.total_ns) == sorted(stats.total_ns, reverse=True)
    for i, key in enumerate(stats.key):
        mine = durations[keys == key]
        assert stats.count[i] == len(mine) and stats.total_ns[i] == mine.sum()
        assert stats.median_ns[i] == np.median(mine)
        assert stats.min_ns[i] == mine.min() and stats.max_ns[i] == mine.max()
        assert np.isclose(stats.mean_ns[i], mine.mean()) and np.isclose(stats.std_ns[i], mine.std(), atol=1e-6)


@pytest.mark.parametrize("offset", [0, 2**60])  # packed beside their group in one int64, or too long to be
@given(rows=st.lists(st.tuples(st.integers(0, 30), st.integers(0, 10_000)), min_size=1, max_size=60))
def test_durations_sort_within_their_groups(offset, rows):
    group = np.array([g for g, _ in rows], dtype=np.int8)
    durations = np.array([d for _, d in rows], dtype=np.int64) + offset
    expected = durations[np.lexsort((durations, group))].tolist()
    assert _sorted_within_groups(group, durations.copy(), 31).tolist() == expected


def test_statistics_computed_a_chunk_at_a_time_match_numpy(monkeypatch):
    monkeypatch.setattr(kernel_stats_module, "STEP_ROWS", 7)  # groups cut by chunk bounds, chunks inside groups
    rng = np.random.default_rng(3)
    keys = rng.integers(0, 6, 200)
    durations = rng.integers(0, 5_000, 200)
    stats = grouped_stats(keys, np.zeros(200, np.int64), durations)
    for i, key in enumerate(stats.key):
        mine = durations[keys == key]
        assert np.isclose(stats.std_ns[i], mine.std()) and stats.median_ns[i] == np.median(mine)


def test_identity_keeps_template_variants_apart_but_labels_them_by_short_name():
    trace = load_trace(DATA / "MohanadOdema__DLProf__nsys_profile.sqlite")
    by_identity = kernel_stats(trace)
    by_short = kernel_stats(trace, by="short_name")
    assert len(by_identity) >= len(by_short)
    assert by_identity.count.sum() == by_short.count.sum() == len(trace.kernels)
    labels = {trace.symbols.name(int(i)) for i in by_identity.short_name}
    assert labels == {trace.symbols.name(int(i)) for i in by_short.key}

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from graphscope.analysis import kernel_stats as kernel_stats_module
from graphscope.analysis.kernel_stats import grouped_stats, kernel_stats
from graphscope.trace import load_trace
from tests.conftest import DATA


@pytest.mark.parametrize("few_groups_limit", [4096, 0])  # both the radix path and the lexsort path
@settings(suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=st.lists(st.tuples(st.integers(0, 4), st.integers(0, 10_000)), min_size=1, max_size=60))
def test_grouped_stats_match_numpy_per_group(monkeypatch, few_groups_limit, rows):
    monkeypatch.setattr(kernel_stats_module, "_FEW_GROUPS", few_groups_limit)
    keys = np.array([k for k, _ in rows])
    durations = np.array([d for _, d in rows])
    stats = grouped_stats(keys, durations)
    assert list(stats.total_ns) == sorted(stats.total_ns, reverse=True)
    for i, key in enumerate(stats.key):
        mine = durations[keys == key]
        assert stats.count[i] == len(mine) and stats.total_ns[i] == mine.sum()
        assert stats.median_ns[i] == np.median(mine)
        assert stats.min_ns[i] == mine.min() and stats.max_ns[i] == mine.max()
        assert np.isclose(stats.mean_ns[i], mine.mean()) and np.isclose(stats.std_ns[i], mine.std(), atol=1e-6)


def test_identity_keeps_template_variants_apart_but_labels_them_by_short_name():
    trace = load_trace(DATA / "MohanadOdema__DLProf__nsys_profile.sqlite")
    by_identity = kernel_stats(trace)
    by_short = kernel_stats(trace, by="short_name")
    assert len(by_identity) >= len(by_short)
    assert by_identity.count.sum() == by_short.count.sum() == len(trace.kernels)
    labels = {trace.symbols.name(int(i)) for i in by_identity.short_name}
    assert labels == {trace.symbols.name(int(i)) for i in by_short.key}

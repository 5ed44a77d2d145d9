"""Processes and threads of an export: distinct ids and the indices event rows use for them."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from graphscope.core.sets import unique as sorted_distinct
from graphscope.trace.entities import distinct, process_index, process_key

ids = st.lists(st.integers(-(2**63), 2**63 - 1) | st.integers(0, 5), max_size=300)


@given(ids)
def test_sorted_distinct_is_numpys_unique(values):
    array = np.array(values, dtype=np.int64)
    assert np.array_equal(sorted_distinct(array), np.unique(array))
    assert sorted_distinct(array).dtype == array.dtype


@given(st.lists(st.tuples(st.integers(0, 3), st.integers(1, 3000)), max_size=12))
def test_distinct_of_long_runs_is_numpys_unique(runs):
    array = np.concatenate([np.full(n, v << 24, np.int64) for v, n in runs]) if runs else np.empty(0, np.int64)
    assert np.array_equal(distinct(array), np.unique(array))


def test_events_find_their_process_with_one_process_or_several():
    global_ids = np.array([(7 << 24) | 1, (9 << 24) | 2, (7 << 24) | 3], dtype=np.int64)
    keys = sorted_distinct(process_key(global_ids))
    assert process_index(keys, global_ids).tolist() == [0, 1, 0]
    assert process_index(keys[:1], global_ids[[0, 2]]).tolist() == [0, 0]
    assert process_index(keys[:0], global_ids).tolist() == [-1, -1, -1]

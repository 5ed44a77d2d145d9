"""Id columns are held in the narrowest integer type that fits, and never lose a value to it."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from graphscope.analysis.kernel_stats import distinct_groups, grouped_stats
from graphscope.analysis.summary import summarize
from graphscope.core.table import narrowest, offsets_from
from graphscope.trace import load_trace
from tests.conftest import FORKJOIN

KERNEL, RUNTIME = "CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_RUNTIME"


@given(st.lists(st.integers(-(2**40), 2**40), max_size=50), st.sampled_from([-1, 0]))
def test_narrowest_keeps_every_value_and_the_default(values, default):
    array = np.array(values, dtype=np.int64)
    narrowed = narrowest(array, default)
    assert narrowed.tolist() == values
    info = np.iinfo(narrowed.dtype)
    assert info.min <= default <= info.max
    fits = [t for t in (np.int8, np.int16, np.int32) if all(np.iinfo(t).min <= v <= np.iinfo(t).max for v in values)]
    assert narrowed.dtype == (np.dtype(fits[0]) if fits else np.int64)


def test_renumbered_ids_beyond_narrow_types_give_the_same_summary(export_copy):
    """Correlation ids past 2**31 (int64 kept), stream ids past 2**15 (int32) and a device id of 200
    (int16): every join and verdict as in the original export."""
    before = summarize(load_trace(FORKJOIN))
    path, conn = export_copy()
    for table in (KERNEL, RUNTIME, "CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET"):
        conn.execute(f"UPDATE {table} SET correlationId = correlationId + {2**33}")
    for table in (KERNEL, "CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET"):
        conn.execute(f"UPDATE {table} SET streamId = streamId + 40000, deviceId = deviceId + 200")
    conn.commit()
    trace = load_trace(path)
    assert trace.kernels.correlation.dtype == np.int64 and int(trace.kernels.correlation.min()) > 2**33
    assert trace.kernels.stream.dtype == np.int32 and int(trace.kernels.stream.min()) >= 40000
    assert trace.kernels.device.dtype == np.int16 and set(np.unique(trace.kernels.device).tolist()) == {200}
    after = summarize(trace)
    for key in ("kernels", "memcpy", "api", "graphs"):
        assert after[key] == before[key], key
    assert after["launch"] == before["launch"]
    assert [g["busy_ns"] for g in after["gpu"]] == [g["busy_ns"] for g in before["gpu"]]
    assert [g["device"] for g in after["gpu"]] == [g["device"] + 200 for g in before["gpu"]]


@given(
    st.lists(st.integers(-(2**31), 2**31 - 1), min_size=1, max_size=40), st.sampled_from([np.int8, np.int16, np.int32])
)
def test_offsets_from_is_exact_in_every_id_type(values, dtype):
    info = np.iinfo(dtype)
    array = np.array([min(max(v, info.min), info.max) for v in values], dtype=dtype)
    low, high = int(array.min()), int(array.max())
    assert offsets_from(array, low, high).tolist() == [int(v) - low for v in array.tolist()]


def test_groups_of_byte_ids_spanning_the_whole_byte():
    """Keys from -1 to 127 in int8: `keys - low` in int8 would wrap 128 to -128."""
    keys = np.array([127, -1, 5, 127, -1], dtype=np.int8)
    unique, group = distinct_groups(keys)
    assert unique.tolist() == [-1, 5, 127] and group.tolist() == [2, 0, 1, 2, 0]
    stats = grouped_stats(keys, np.zeros(5, np.int64), np.array([10, 1, 2, 30, 3], dtype=np.int64))
    assert dict(zip(stats.key.tolist(), stats.total_ns.tolist())) == {127: 40, -1: 4, 5: 2}

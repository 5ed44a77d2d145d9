"""Zoomed out, a pixel of several kinds keeps the dominant one's colour (issue 44: the whole-trace view
of a busy export was mostly the grey of "several kinds merged")."""

from __future__ import annotations

import time

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from graphscope.view.lod import MIXED, LodLane, merge


def test_a_merged_run_takes_its_busiest_events_colour():
    start = np.array([0.0, 5.0, 7.0, 100.0])
    end = np.array([4.0, 6.5, 9.0, 104.0])  # 4 ns of colour 1 beside 1.5 + 2 ns of colour 2
    color = np.array([1, 2, 2, 3], np.int16)
    runs = merge(start, end, color, 10.0, dominant=True)
    assert runs.color.tolist() == [1, 3]
    assert merge(start, end, color, 10.0).color.tolist() == [MIXED, 3]  # as before without `dominant`


@given(st.lists(st.tuples(st.integers(0, 5000), st.integers(1, 200), st.integers(0, 5)), min_size=1, max_size=300))
def test_each_run_is_coloured_by_one_of_its_busiest_events(rows):
    rows.sort()
    start = np.array([r[0] for r in rows], np.float64)
    end = start + np.array([r[1] for r in rows])
    color = np.array([r[2] for r in rows], np.int16)
    runs = merge(start, end, color, 50.0, dominant=True)
    assert MIXED not in runs.color.tolist()
    for s, e, c in zip(runs.start, runs.end, runs.color):
        inside = (start >= s) & (start < e)
        lengths = (end - start)[inside]
        assert c in color[inside][lengths == lengths.max()]


def test_a_busy_lane_zoomed_out_keeps_its_kinds_colours_and_the_frame_budget():
    """10M events of two kinds, one 9x longer than the other, zoomed out to 2000 px: every pixel is the
    long kind's colour (was the MIXED grey), and the frame's merge stays far under its 16 ms budget."""
    n = 10_000_000
    start = np.arange(n, dtype=np.float64) * 100.0
    length = np.where(np.arange(n) % 2 == 0, 90.0, 10.0)
    color = (np.arange(n) % 2 + 11).astype(np.int16)
    lane = LodLane(start, start + length, color)
    runs = lane.visible(0.0, start[-1] + 100.0, (start[-1] + 100.0) / 2000)
    assert 0 < len(runs) <= 2001 and set(runs.color.tolist()) == {11}
    took = []
    for _ in range(5):
        t0 = time.perf_counter()
        lane.visible(0.0, start[-1] + 100.0, (start[-1] + 100.0) / 2000)
        took.append(time.perf_counter() - t0)
    assert min(took) < 0.016

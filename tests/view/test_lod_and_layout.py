"""The timeline's view model: level-of-detail runs and lanes (no Qt needed)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from graphscope.view.document import open_document
from graphscope.view.layout import API, GRAPH_GROUP, KERNEL, MEMCPY, MEMSET, nesting_depth
from graphscope.view.lod import MIXED, LodLane, merge
from tests.conftest import DATA, FORKJOIN, H200_NODE

events = st.lists(st.tuples(st.integers(0, 10_000), st.integers(0, 300), st.integers(0, 3)), max_size=200)


@given(events, st.floats(1, 2000))
def test_every_event_is_covered_by_a_run_at_least_one_pixel_wide(rows, pixel):
    rows.sort()
    start = np.array([r[0] for r in rows], dtype=np.float64)
    end = start + np.array([r[1] for r in rows])
    color = np.array([r[2] for r in rows], dtype=np.int16)
    lane = LodLane(start, end, color)
    runs = lane.visible(-1.0, 20_000.0, pixel)
    assert (runs.end - runs.start >= pixel - 1e-9).all()
    assert (runs.start[1:] > runs.end[:-1]).all()
    for s, e in zip(start, end):  # no event vanishes, however short
        i = np.searchsorted(runs.start, s, side="right") - 1
        assert i >= 0 and runs.start[i] <= s and runs.end[i] >= e
    assert len(runs) <= 20_001 / pixel + 1


def test_merging_different_colours_marks_the_run_mixed():
    runs = merge(np.array([0.0, 5.0, 100.0]), np.array([4.0, 9.0, 104.0]), np.array([1, 2, 3], np.int16), 10.0)
    assert runs.color.tolist() == [MIXED, 3] and runs.start.tolist() == [0.0, 100.0]


def test_a_million_events_draw_as_about_a_pixel_each():
    start = np.arange(1_000_000, dtype=np.float64) * 1000.0
    lane = LodLane(start, start + 400.0, np.zeros(len(start), np.int16))
    runs = lane.visible(0.0, 1e9, 1e9 / 1600)
    assert len(runs) <= 1600 and lane.levels


def test_hit_prefers_the_event_under_the_cursor():
    lane = LodLane(np.array([0.0, 10.0, 12.0]), np.array([100.0, 20.0, 13.0]), np.zeros(3, np.int16))
    assert lane.hit(12.5, 1.0) == 2 and lane.hit(50.0, 1.0) == 0 and lane.hit(500.0, 1.0) == -1


def test_nesting_depth_stacks_nested_ranges():
    start, end = np.array([0, 1, 2, 10]), np.array([9, 5, 3, 12])
    assert nesting_depth(start, end).tolist() == [0, 1, 2, 0]


def test_demo_layout_has_cpu_nvtx_and_stream_lanes_with_graph_brackets():
    document = open_document(H200_NODE)
    kinds = [lane.kind for lane in document.layout.lanes]
    assert kinds.count("api") == 1 and kinds.count("nvtx") == 1 and "graphs" not in kinds
    assert sum(len(lane) for lane in document.layout.lanes if lane.kind == "gpu") == 7005
    bracketed = [lane for lane in document.layout.lanes if lane.bracket_rows is not None]
    assert len(bracketed) == 1 and bracketed[0].bracket_rows.tolist() == [0, 1, 2]
    graphs = document.analysis.graphs
    assert np.allclose(bracketed[0].brackets.start, graphs.start - document.layout.origin)


def test_a_fork_join_launch_is_bracketed_on_both_of_its_streams():
    document = open_document(FORKJOIN)
    bracketed = {lane.stream: lane for lane in document.layout.lanes if lane.bracket_rows is not None}
    assert set(bracketed) == {13, 16} and all(len(lane.bracket_rows) == 5 for lane in bracketed.values())
    lane, index = document.layout.find(GRAPH_GROUP, np.array([2]))[0]
    assert document.layout.lanes[lane].bracket_rows[index] == 2


def test_locate_maps_rows_back_to_lanes_across_streams():
    document = open_document(FORKJOIN)
    layout, trace = document.layout, document.trace
    rows = np.flatnonzero(trace.kernels.graph_node >= 0)[:6]
    found = layout.find(KERNEL, rows)
    assert {layout.lanes[lane].stream for lane, _ in found} == {13, 16}
    assert sum(len(events) for _, events in found) == 6
    for lane, events in found:
        assert set(layout.lanes[lane].row[events]) <= set(rows)
    assert layout.find(MEMCPY, np.array([0])) and layout.find(MEMSET, np.array([0]))
    assert layout.find(API, np.arange(len(trace.api)))


def test_a_name_keeps_its_colour_however_its_ids_are_spread():
    import zlib

    from graphscope.core.symbols import SymbolTable
    from graphscope.view.layout import KERNEL_COLORS, _color_by_name

    symbols = SymbolTable([f"kernel_{i}" for i in range(16)])

    def hashed(ids):
        return [KERNEL_COLORS.start + zlib.crc32(symbols.name(i).encode()) % len(KERNEL_COLORS) for i in ids]

    for ids in ([5, 3, 5, 9, 3], [-1, 0, 7], [0, 2**40, 12]):  # the last: ids far apart, hashed one by one
        assert _color_by_name(np.array(ids), KERNEL_COLORS, symbols).tolist() == hashed(ids)
    assert len(_color_by_name(np.array([], dtype=np.int32), KERNEL_COLORS, symbols)) == 0
    # another export's ids for the same names: the same colours
    shuffled = SymbolTable([f"kernel_{i}" for i in reversed(range(16))])
    assert _color_by_name(np.array([15, 12]), KERNEL_COLORS, shuffled).tolist() == hashed([0, 3])


def test_selection_lookup_is_built_on_first_use(monkeypatch):
    monkeypatch.setenv("GRAPHSCOPE_NO_CACHE", "1")  # a layout computed here, not one another test's open saved
    layout = open_document(FORKJOIN, panels=False).layout
    assert layout._locate is None
    kernel = 0
    found = layout.find(KERNEL, np.array([kernel]))
    assert len(found) == 1
    lane, events = found[0]
    assert layout.lanes[lane].row[events[0]] == kernel


@pytest.mark.parametrize(
    "name",
    [
        "h200_forkjoin_node.sqlite",
        "extra-p__extrap__profile1.sqlite",
        "cestwc__balinski-and-gomory-cuda__report1.sqlite",
    ],
)
def test_every_event_sits_once_on_the_lane_of_its_thread_or_stream(name):
    """Whole tables and subsets (several streams, threads, GPUs) alike: each row once, with its own times."""
    document = open_document(DATA / name, panels=False)
    trace, layout = document.trace, document.layout
    tables = {API: trace.api, KERNEL: trace.kernels, MEMCPY: trace.memcpy, MEMSET: trace.memset}
    seen = {source: [] for source in tables}
    for lane in layout.lanes:
        for source, table in tables.items():
            mine = lane.source == source
            rows = lane.row[mine]
            seen[source].append(rows)
            assert np.array_equal(lane.start[mine], table.start[rows] - layout.origin)
            assert np.array_equal(lane.end[mine], table.end[rows] - layout.origin)
            if len(rows) and source == API:
                assert lane.kind == "api" and len(np.unique(trace.api.thread[rows])) == 1
            elif len(rows):
                assert lane.kind == "gpu" and (table.stream[rows] == lane.stream).all()
                assert (table.device[rows] == lane.device).all()
        assert (np.diff(lane.start) >= 0).all()
    for source, table in tables.items():
        assert np.array_equal(np.sort(np.concatenate(seen[source])), np.arange(len(table)))

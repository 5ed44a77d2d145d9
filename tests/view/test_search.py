"""Find on the timeline: names of kernels, NVTX ranges and API calls, copies by direction, in time order,
checked against plain SQL over the export."""

from __future__ import annotations

import sqlite3

import numpy as np

from graphscope.core.events import Activity
from graphscope.view.document import open_document
from graphscope.view.search import find_events
from tests.conftest import DATA

TORCH = DATA / "h200_torch_mlp_node.sqlite"


def _count(sql: str) -> int:
    with sqlite3.connect(TORCH) as db:
        return int(db.execute(sql).fetchone()[0])


def test_kernels_api_calls_and_nvtx_are_found_by_name_as_sql_counts_them():
    document = open_document(TORCH, panels=False)
    layout, trace = document.layout, document.trace
    gelu = find_events(layout, trace, "gelu")
    kernels = _count(
        "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON s.id = k.shortName "
        "JOIN StringIds d ON d.id = k.demangledName WHERE lower(s.value) LIKE '%gelu%' OR lower(d.value) LIKE '%gelu%'"
    )
    sources = {int(layout.lanes[lane].source[event]) for lane, event in zip(gelu.lane, gelu.event)}
    assert Activity.KERNEL in sources and kernels > 0
    in_kernel_lanes = sum(
        layout.lanes[lane].source[event] == Activity.KERNEL for lane, event in zip(gelu.lane, gelu.event)
    )
    assert in_kernel_lanes == kernels
    launches = find_events(layout, trace, "cudaLaunchKernel")
    calls = _count(
        "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME r JOIN StringIds s ON s.id = r.nameId "
        "WHERE s.value LIKE 'cudaLaunchKernel%'"
    )
    assert len(launches) == calls > 0
    assert np.all(np.diff(launches.start) >= 0)  # in time order
    eager = find_events(layout, trace, "EAGER_")  # case does not matter
    assert len(eager) == _count(
        "SELECT count(*) FROM NVTX_EVENTS n LEFT JOIN StringIds s ON s.id = n.textId "
        "WHERE lower(coalesce(n.text, s.value)) LIKE 'eager_%'"
    )


def test_copies_are_found_by_direction_and_nothing_by_nonsense():
    document = open_document(TORCH, panels=False)
    layout = document.layout
    copies = find_events(layout, document.trace, "memcpy")
    on_gpu = sum(layout.lanes[lane].source[event] == Activity.MEMCPY for lane, event in zip(copies.lane, copies.event))
    assert on_gpu == _count("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_MEMCPY") > 0
    calls = _count(  # and the cudaMemcpyAsync calls that made them
        "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME r JOIN StringIds s ON s.id = r.nameId "
        "WHERE lower(s.value) LIKE '%memcpy%'"
    )
    assert len(copies) == on_gpu + calls
    h2d = find_events(document.layout, document.trace, "memcpy htod")
    assert len(h2d) == _count("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_MEMCPY WHERE copyKind = 1")
    assert len(find_events(document.layout, document.trace, "no such kernel anywhere")) == 0
    assert len(find_events(document.layout, document.trace, "   ")) == 0


def test_next_and_previous_wrap_round():
    document = open_document(TORCH, panels=False)
    matches = find_events(document.layout, document.trace, "gelu")
    last = float(matches.start[-1])
    assert matches.after(last) == 0 and matches.before(float(matches.start[0])) == len(matches) - 1
    assert matches.after(float(matches.start[0]) - 1) == 0

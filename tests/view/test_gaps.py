"""Idle gaps (view/gaps.py): each GPU lane's, in timeline x with their cause, computed once per document."""

from __future__ import annotations

import numpy as np

from graphscope.analysis import gpu_time
from graphscope.core.colours import HOST_WAIT, OTHER_WAIT, UNKNOWN_WAIT
from graphscope.view import gaps as gaps_module
from graphscope.view.document import open_document
from graphscope.view.gaps import gaps_of
from tests.conftest import DATA


def test_each_gpu_lane_gets_the_gaps_between_its_work_in_timeline_x():
    document = open_document(DATA / "h200_forkjoin_node.sqlite")
    found = gaps_of(document)
    gpu = [lane for lane in document.layout.lanes if lane.kind == "gpu"]
    assert set(found) == {lane.key for lane in gpu} and len(gpu) == 4
    work = document.analysis.work
    for lane in gpu:
        gaps = found[lane.key]
        # a second way: the holes between the stream's work intervals, by hand
        mine = (work.device == lane.device) & (work.stream == lane.stream)
        order = np.argsort(work.start[mine], kind="stable")
        starts, ends = work.start[mine][order], work.end[mine][order]
        reach = np.maximum.accumulate(ends)
        holes = np.flatnonzero(starts[1:] > reach[:-1])
        assert gaps.start.tolist() == (reach[holes] - document.layout.origin).astype(float).tolist()
        assert gaps.end.tolist() == (starts[holes + 1] - document.layout.origin).astype(float).tolist()
        assert set(gaps.cause.tolist()) <= {HOST_WAIT, OTHER_WAIT, UNKNOWN_WAIT}
        raw = gpu_time.idle_gaps(document.trace, work, lane.device, lane.stream)
        assert np.array_equal(gaps.cause == HOST_WAIT, raw.host_wait)
    assert sum(len(g) for g in found.values()) > 0


def test_the_gaps_are_computed_once_per_document(monkeypatch):
    document = open_document(DATA / "h200_forkjoin_node.sqlite")
    calls = []
    real = gaps_module.idle_gaps
    monkeypatch.setattr(gaps_module, "idle_gaps", lambda *a, **k: calls.append(a) or real(*a, **k))
    first = gaps_of(document)
    per_open = len(calls)
    assert per_open == 4  # one per GPU lane
    assert gaps_of(document) is first and len(calls) == per_open

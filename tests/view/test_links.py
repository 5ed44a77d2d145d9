"""What a selection links to (view/links.py), checked a second way against the tables' own columns:
correlation ids for launch calls, graphNodeId for graph nodes, start times for the next instance."""

from __future__ import annotations

import numpy as np
import pytest

from graphscope.core.events import Activity, graph_of, index_in_graph
from graphscope.view.document import open_document
from graphscope.view.layout import API, GRAPH_GROUP, KERNEL, MEMCPY, MEMSET
from graphscope.view.links import (
    kernels_of,
    linked,
    locate,
    next_instance,
    node_of,
    node_work,
    range_scope,
    window_scope,
)
from tests.conftest import DATA


@pytest.fixture(scope="module")
def forkjoin():
    return open_document(DATA / "h200_forkjoin_node.sqlite")


def _same_process_call(document, source, row) -> int:
    """The CUDA call with the same correlation id (and process) as a GPU row, by a plain search."""
    table = getattr(document.trace, Activity(source).table)
    api = document.trace.api
    calls = np.flatnonzero((api.correlation == table.correlation[row]) & (api.process == table.process[row]))
    return int(calls[0]) if len(calls) == 1 else -1


def test_a_gpu_row_links_to_its_launch_call_and_the_call_back_to_it(forkjoin):
    checked = 0
    for source in (KERNEL, MEMCPY, MEMSET):
        for row in range(len(getattr(forkjoin.trace, Activity(source).table))):
            found = linked(forkjoin, source, row)
            assert found.call == _same_process_call(forkjoin, source, row)
            if found.call < 0:
                assert API not in found.rows
                continue
            assert found.rows[API].tolist() == [found.call]
            back = linked(forkjoin, API, found.call)
            assert back.call == -1 and row in back.rows[source].tolist()
            checked += 1
    assert checked >= 20  # the eager launches of the fork/join trace


def test_a_graph_launch_links_to_its_call_and_the_node_work_it_ran(forkjoin):
    graphs = forkjoin.analysis.graphs
    assert len(graphs.start) == 5
    for launch in range(len(graphs.start)):
        found = linked(forkjoin, GRAPH_GROUP, launch)
        call = int(graphs.api_row[launch])
        assert found.call == call and found.rows[API].tolist() == [call]
        kernels = found.rows[KERNEL]
        assert len(kernels) and np.all(forkjoin.trace.kernels.graph_node[kernels] >= 0)  # node work only
        assert launch in linked(forkjoin, API, call).rows[GRAPH_GROUP].tolist()
        lane, event, bracket = locate(forkjoin, GRAPH_GROUP, launch)
        assert bracket and int(forkjoin.layout.lanes[lane].bracket_rows[event]) == launch


def test_a_nodes_work_and_the_node_of_that_work_round_trip(forkjoin):
    trace = forkjoin.trace
    nodes = trace.kernels.graph_node
    rows = np.flatnonzero(nodes >= 0)
    assert len(rows) == 30
    for row in rows.tolist():
        index = node_of(trace, KERNEL, row)
        assert index == int(index_in_graph(nodes[row]))
        source, work = node_work(trace, [index], int(graph_of(nodes[row])))
        same = np.flatnonzero(nodes == nodes[row])  # the same graphNodeId: that node's every replay
        assert source == KERNEL and work.tolist() == same.tolist()
    eager = int(np.flatnonzero(nodes < 0)[0])
    assert node_of(trace, KERNEL, eager) is None and node_of(trace, API, 0) is None
    assert node_work(trace, [10**6]) is None


def test_next_instance_steps_through_an_identitys_kernels_in_time_and_wraps(forkjoin):
    identity = forkjoin.identity_of(int(np.flatnonzero(forkjoin.trace.kernels.graph_node >= 0)[0]))
    rows = forkjoin.kernels_of(identity)
    in_time = rows[np.argsort(forkjoin.trace.kernels.start[rows], kind="stable")].tolist()
    assert len(in_time) >= 2
    seen, x = [], -1.0
    for _ in range(len(in_time) + 1):
        found = next_instance(forkjoin, identity, x)
        assert found.count == len(in_time)
        seen.append(found.row)
        x = forkjoin.layout.x_of(int(forkjoin.trace.kernels.start[found.row]))
    assert seen == [*in_time, in_time[0]]  # each in turn, then round to the first
    assert next_instance(forkjoin, 10**9, 0.0) is None
    both = kernels_of(forkjoin, [identity, forkjoin.identity_of(in_time[0])])
    assert sorted(both.tolist()) == sorted(in_time * 2) and len(kernels_of(forkjoin, [])) == 0


def test_an_nvtx_range_and_a_dragged_window_stand_for_their_scopes(forkjoin):
    trace = forkjoin.trace
    nvtx = trace.nvtx
    names = [trace.symbols.name(int(t)) for t in nvtx.text]
    row = names.index("eager_0")
    scope = range_scope(trace, row)
    assert scope.label == "NVTX range 'eager_0'"
    assert (scope.first, scope.last) == (int(nvtx.start[row]), int(nvtx.end[row]))
    layout = forkjoin.layout
    x0, x1 = layout.x_of(scope.first), layout.x_of(scope.last)
    dragged = window_scope(layout, x1, x0)  # dragged right to left: the same window
    assert (dragged.first, dragged.last) == (scope.first, scope.last)
    assert window_scope(layout, x0, x0) is None

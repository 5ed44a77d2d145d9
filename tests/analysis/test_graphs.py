from __future__ import annotations

import numpy as np

from graphscope.analysis.correlation import correlate
from graphscope.analysis.graphs import graph_launches, node_durations
from graphscope.trace import load_trace
from tests.conftest import FORKJOIN, H200_GRAPH, H200_NODE


def test_node_mode_launches_group_their_node_activities():
    trace = load_trace(H200_NODE)
    launches = graph_launches(trace, correlate(trace))
    assert len(launches) == 3 and launches.nodes.tolist() == [1000] * 3
    assert (launches.api_row >= 0).all()
    assert ((launches.span_ns > 0.9e6) & (launches.span_ns < 2e6)).all()


def test_fork_join_launches_span_two_streams_and_eight_nodes():
    trace = load_trace(FORKJOIN)
    launches = graph_launches(trace, correlate(trace))
    assert launches.nodes.tolist() == [8] * 5 and launches.streams.tolist() == [2] * 5
    nodes = node_durations(trace)
    assert len(nodes) == 8 and nodes.count.tolist() == [5] * 8
    names = [trace.symbols.name(int(n)) if n >= 0 else k for n, k in zip(nodes.name, nodes.kind)]
    assert names[2:] == ["scale", "relu", "scale", "relu", "add2", "rowsum"]
    assert nodes.kind[:2].tolist() == [1, 2]  # the memcpy node, then the memset node


def test_graph_mode_launches_are_whole_rows_without_nodes():
    trace = load_trace(H200_GRAPH)
    launches = graph_launches(trace, correlate(trace))
    assert len(launches) == 3 and (launches.nodes == -1).all()
    assert np.all(launches.api_row >= 0)
    assert len(node_durations(trace)) == 0

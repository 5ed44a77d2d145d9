from __future__ import annotations

import numpy as np

from graphscope.analysis.correlation import correlate
from graphscope.trace import load_trace
from tests.analysis.builders import make_trace
from tests.conftest import FORKJOIN, H200_NODE


def test_each_graph_launch_owns_its_thousand_node_kernels():
    trace = load_trace(H200_NODE)
    corr = correlate(trace)
    graph_calls = [
        i for i in range(len(trace.api)) if trace.symbols.name(int(trace.api.name[i])).startswith("cudaGraphLaunch")
    ]
    assert len(graph_calls) == 3
    for call in graph_calls:
        caused = corr.activities_of(call)
        assert len(caused["kernels"]) == 1000
        assert (trace.kernels.graph_node[caused["kernels"]] >= 0).all()
    assert (corr.api_row["kernels"] >= 0).all()  # every kernel has its launch call


def test_one_launch_to_activities_on_several_streams():
    trace = load_trace(FORKJOIN)
    corr = correlate(trace)
    call = int(corr.api_row["kernels"][np.flatnonzero(trace.kernels.graph_node >= 0)[0]])
    caused = corr.activities_of(call)
    assert len(caused["kernels"]) == 6 and len(caused["memcpy"]) == 1 and len(caused["memset"]) == 1
    assert set(trace.kernels.stream[caused["kernels"]].tolist()) == {13, 16}


def test_correlation_ids_are_matched_within_one_process_only():
    trace = make_trace(
        api=[
            {"start": 0, "end": 10, "correlation": 7, "process": 0, "name": 0},
            {"start": 5, "end": 12, "correlation": 7, "process": 1, "name": 0},
        ],
        kernels=[
            {"start": 20, "end": 30, "correlation": 7, "process": 1},
            {"start": 40, "end": 45, "correlation": 8, "process": 0},
        ],
        names=["cuLaunchKernel"],
    )
    corr = correlate(trace)
    assert corr.api_row["kernels"].tolist() == [1, -1]
    assert corr.activities_of(0) == {}

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


def _sorted_only(trace):
    """correlate() through the binary-search path alone (what sparse or repeated ids take)."""
    from graphscope.analysis import correlation

    dense = correlation._dense_lookup
    correlation._dense_lookup = lambda *args: None
    try:
        return correlate(trace)
    finally:
        correlation._dense_lookup = dense


def test_the_lookup_table_and_the_search_agree_on_real_traces():
    for path in (H200_NODE, FORKJOIN):
        trace = load_trace(path)
        fast, sure = correlate(trace), _sorted_only(trace)
        for kind, rows in fast.api_row.items():
            assert np.array_equal(rows, sure.api_row[kind]), (path, kind)


def _two_process_trace(api_ids, kernel_ids):
    return make_trace(
        api=[
            {"start": 10 * i, "end": 10 * i + 5, "correlation": c, "process": i % 2, "name": 0}
            for i, c in enumerate(api_ids)
        ],
        kernels=[
            {"start": 1000 + 10 * i, "end": 1005 + 10 * i, "correlation": c, "process": p}
            for i, (p, c) in enumerate(kernel_ids)
        ],
        names=["cuLaunchKernel"],
    )


def test_a_repeated_correlation_id_links_to_the_first_call():
    trace = _two_process_trace([3, 3, 3, 4], [(0, 3), (1, 3), (1, 4), (0, 9), (0, -1)])
    assert correlate(trace).api_row["kernels"].tolist() == [0, 1, 3, -1, -1]
    assert _sorted_only(trace).api_row["kernels"].tolist() == [0, 1, 3, -1, -1]


def test_sparse_and_negative_ids_take_the_search():
    for ids, linked in (([1, 2**40, 5, 6], [0, 1, 2, -1]), ([-3, 1, 2, 3], [-1, 1, 2, -1])):
        trace = _two_process_trace(ids, [(0, ids[0]), (1, ids[1]), (0, ids[2]), (1, 7)])
        assert correlate(trace).api_row["kernels"].tolist() == linked  # GPU work never links by a negative id

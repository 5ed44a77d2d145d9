from __future__ import annotations

import numpy as np

from graphscope.analysis.correlation import correlate
from graphscope.analysis.gpu_time import device_time, gpu_work, idle_gaps
from graphscope.analysis.launch import api_kinds, launch_metrics
from graphscope.core.events import ApiKind
from graphscope.core.symbols import SymbolTable
from graphscope.trace.schema import classify_api
from tests.analysis.builders import make_trace

NAMES = ["cuLaunchKernel", "cudaGraphLaunch_v10000", "cudaMalloc_v3020"]


def _trace():
    # three launches on stream 1; the GPU runs 0..100 busy; 100..300 idle (CPU late); 300..320 busy
    return make_trace(
        api=[
            {"start": 0, "end": 10, "correlation": 1, "name": 0},
            {"start": 12, "end": 20, "correlation": 2, "name": 0},
            {"start": 250, "end": 310, "correlation": 3, "name": 0},
            {"start": 400, "end": 401, "correlation": 4, "name": 2},
        ],
        kernels=[
            {"start": 15, "end": 60, "correlation": 1, "stream": 1},
            {"start": 60, "end": 100, "correlation": 2, "stream": 1},
            {"start": 300, "end": 320, "correlation": 3, "stream": 1},
        ],
        names=NAMES,
    )


def _work(trace):
    return gpu_work(trace, correlate(trace))


def test_launch_durations_and_latencies():
    trace = _trace()
    metrics = launch_metrics(trace, _work(trace))
    assert metrics.rows.tolist() == [0, 1, 2]  # cudaMalloc is not a launch
    assert (metrics.kind == ApiKind.KERNEL_LAUNCH).all()
    assert metrics.api_ns.tolist() == [10, 8, 60]
    assert metrics.latency_ns.tolist() == [15, 48, 50]


def test_a_trace_of_launch_calls_only_measures_the_same_as_a_mixed_one():
    """Every call a launch (the whole-column path) and a mixed trace (gathers) agree, -1/NaN included."""
    calls = [{"start": 10 * i, "end": 10 * i + 3, "correlation": i + 1, "name": 0} for i in range(4)]
    kernels = [{"start": 10 * i + 5, "end": 10 * i + 8, "correlation": i + 1} for i in (0, 1, 3)]  # call 2: none
    launches_only = make_trace(api=calls, kernels=kernels, names=NAMES)
    mixed = make_trace(
        api=[*calls, {"start": 100, "end": 101, "correlation": 9, "name": 2}], kernels=kernels, names=NAMES
    )
    a, b = (launch_metrics(t, _work(t)) for t in (launches_only, mixed))
    assert a.rows.tolist() == b.rows.tolist() == [0, 1, 2, 3] and a.rows.dtype == b.rows.dtype == np.int32
    assert a.first_work.tolist() == b.first_work.tolist() == [0, 1, -1, 2]
    assert np.array_equal(a.latency_ns, b.latency_ns, equal_nan=True) and np.isnan(a.latency_ns[2])
    assert a.api_ns.tolist() == b.api_ns.tolist() == [3, 3, 3, 3]


def test_busy_idle_and_host_wait_gaps():
    trace = _trace()
    (device,) = device_time(_work(trace))
    assert (device.first_ns, device.last_ns, device.busy_ns, device.idle_ns) == (15, 320, 105, 200)
    gaps = idle_gaps(trace, _work(trace), device=0)
    assert gaps.start.tolist() == [100] and gaps.end.tolist() == [300]
    assert gaps.host_wait.tolist() == [True]  # the call for the work at 300 was still running at 100
    assert gaps.host_wait_ns == 200


def test_a_gap_with_queued_work_is_not_host_wait():
    trace = make_trace(
        api=[{"start": 0, "end": 5, "correlation": 1, "name": 0}, {"start": 6, "end": 9, "correlation": 2, "name": 0}],
        kernels=[{"start": 10, "end": 20, "correlation": 1}, {"start": 50, "end": 60, "correlation": 2}],
        names=NAMES,
    )
    gaps = idle_gaps(trace, _work(trace), device=0)
    assert gaps.host_wait.tolist() == [False] and gaps.total_ns == 30


def test_graph_launch_latency_uses_its_first_node():
    trace = make_trace(
        api=[{"start": 0, "end": 30, "correlation": 9, "name": 1}],
        kernels=[
            {"start": 50, "end": 60, "correlation": 9, "graph_node": 1 << 32},
            {"start": 40, "end": 45, "correlation": 9, "graph_node": (1 << 32) + 1, "stream": 2},
        ],
        names=NAMES,
    )
    metrics = launch_metrics(trace, _work(trace))
    assert metrics.kind.tolist() == [ApiKind.GRAPH_LAUNCH] and metrics.latency_ns.tolist() == [40]


def test_a_launch_without_recorded_gpu_work_has_no_latency():
    trace = make_trace(api=[{"name": 0, "correlation": 1}], names=NAMES)
    metrics = launch_metrics(trace, _work(trace))
    assert np.isnan(metrics.latency_ns).all()


def test_api_names_stringids_lacks_are_other_calls_not_an_error_or_another_name():
    symbols = SymbolTable(NAMES)
    malloc = classify_api(NAMES[2])
    kinds = api_kinds(symbols, np.array([0, -23037, -2, -1, 3, 1, 2], dtype=np.int32)).tolist()
    assert kinds == [ApiKind.KERNEL_LAUNCH, *[ApiKind.OTHER] * 4, ApiKind.GRAPH_LAUNCH, malloc]
    far = api_kinds(symbols, np.array([1 << 30, -2, 1], dtype=np.int32)).tolist()
    assert far == [ApiKind.OTHER, ApiKind.OTHER, ApiKind.GRAPH_LAUNCH]

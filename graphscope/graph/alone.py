"""A kernel node timed alone, as an isolated autotuner times it: the same function and arguments in a
graph of its own on the workload's stream (cuda.bindings, imported by the caller; child process only).

The graph is an event-record node, the kernel node `repeat` times in a chain, and another event-record
node: the events are recorded by the GPU between the nodes, so no host submission gap is timed, and
the chain spreads cuEventElapsedTime's ~0.5 us resolution over `repeat` launches. One sample is the
chain's time over `repeat`.
"""

from __future__ import annotations

from typing import Any

REPEAT = 10


def _check(result: Any, what: str) -> Any:
    result = result if isinstance(result, tuple) else (result,)
    if int(result[0]) != 0:
        raise RuntimeError(f"{what} failed: {getattr(result[0], 'name', result[0])}")
    return result[1] if len(result) == 2 else result[1:]


def time_alone(driver: Any, params: Any, stream: int, reps: int, warmup: int = 3, repeat: int = REPEAT) -> list[float]:
    """Per-launch GPU time (ns) of the kernel `params` describe, alone: `reps` samples after `warmup`.

    The node copies `params` when it is added, so the caller may change them afterwards.
    """
    graph = _check(driver.cuGraphCreate(0), "cuGraphCreate")
    start = _check(driver.cuEventCreate(driver.CUevent_flags.CU_EVENT_DEFAULT), "cuEventCreate")
    end = _check(driver.cuEventCreate(driver.CUevent_flags.CU_EVENT_DEFAULT), "cuEventCreate")
    executable = None
    elapsed = getattr(driver, "cuEventElapsedTime", None) or driver.cuEventElapsedTime_v2  # renamed in CUDA 13
    handle = driver.CUstream(init_value=stream)
    try:
        node = _check(driver.cuGraphAddEventRecordNode(graph, None, 0, start), "cuGraphAddEventRecordNode")
        for _ in range(repeat):
            node = _check(driver.cuGraphAddKernelNode(graph, [node], 1, params), "cuGraphAddKernelNode")
        _check(driver.cuGraphAddEventRecordNode(graph, [node], 1, end), "cuGraphAddEventRecordNode")
        executable = _check(driver.cuGraphInstantiate(graph, 0), "cuGraphInstantiate")
        _check(driver.cuGraphUpload(executable, handle), "cuGraphUpload")
        samples = []
        for rep in range(warmup + reps):
            _check(driver.cuGraphLaunch(executable, handle), "cuGraphLaunch")
            _check(driver.cuStreamSynchronize(handle), "cuStreamSynchronize")
            if rep >= warmup:
                elapsed_ms = _check(elapsed(start, end), "cuEventElapsedTime")
                samples.append(float(elapsed_ms) * 1e6 / repeat)
        return samples
    finally:
        if executable is not None:
            driver.cuGraphExecDestroy(executable)
        driver.cuGraphDestroy(graph)
        driver.cuEventDestroy(start)
        driver.cuEventDestroy(end)

"""Why does a graph replay slower after in-place kernel-node updates? (GPU machine; CuPy + cuda.bindings)

docs/architecture.md records that after cuGraphExecKernelNodeSetParams the seeds' 1000-node graph replayed
in 1.42 ms instead of 1.04 ms, and stayed there with the old values set back. This script measures the
replay time of fresh captures after updating k nodes (k = 0, 1, 10, 100, 1000) with *unchanged* values,
after a re-upload, after restoring, and after a whole-graph cuGraphExecUpdate, and prints one JSON
object (and a table) so the README can say what the cost depends on.

    python benchmarks/inplace_update.py [--reps 50] > inplace.json
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from graphscope.core.launch_config import Site
from graphscope.graph.live import LiveGraph

SOURCE = r"""
extern "C" __global__ void vec_add(const float* a, const float* b, float* c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}
"""
N, LAUNCHES = 1 << 14, 1000


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--reps", type=int, default=50)
    args = parser.parse_args()
    import cupy as cp
    from cuda.bindings import driver

    kernel = cp.RawKernel(SOURCE, "vec_add")
    a, b = cp.random.rand(N, dtype=cp.float32), cp.random.rand(N, dtype=cp.float32)
    c = cp.empty_like(a)
    stream = cp.cuda.Stream(non_blocking=True)
    sites = [Site("add", i, "vec_add", (N, 1, 1), (256, 1, 1), (64, 1, 1)) for i in range(LAUNCHES)]

    def step(block: int = 256) -> None:
        for _ in range(LAUNCHES):
            kernel((N // block,), (block,), (a, b, c, np.int32(N)), stream=stream)

    def capture(block: int = 256):
        step(block)
        stream.synchronize()
        stream.begin_capture()
        step(block)
        graph = stream.end_capture()
        graph.upload(stream)
        stream.synchronize()
        return graph

    def replay_ms(graph) -> float:
        start, end = cp.cuda.Event(), cp.cuda.Event()
        for _ in range(5):
            graph.launch(stream)
        times = []
        for _ in range(args.reps):
            start.record(stream)
            graph.launch(stream)
            end.record(stream)
            end.synchronize()
            times.append(cp.cuda.get_elapsed_time(start, end))
        return float(np.median(times))

    results: dict[str, float] = {}
    results["fresh"] = replay_ms(capture())
    for k in (1, 10, 100, 1000):
        graph = capture()
        live = LiveGraph(int(graph.graph), int(graph.graphExec), sites)
        step_between = max(LAUNCHES // k, 1)
        changes = {i: ((256, 1, 1), (64, 1, 1), 0) for i in range(0, LAUNCHES, step_between)[:k]}
        cost = live.apply(changes)["apply_ns"]
        results[f"same values set on {k} nodes"] = replay_ms(graph)
        results[f"apply cost {k} nodes (ms)"] = cost / 1e6
    for k in (1, 10, 100):  # changed dimensions on k nodes: is the penalty per node or per graph?
        graph = capture()
        live = LiveGraph(int(graph.graph), int(graph.graphExec), sites)
        live.apply({i: ((128, 1, 1), (128, 1, 1), 0) for i in range(0, LAUNCHES, LAUNCHES // k)[:k]})
        results[f"block 128 on {k} nodes (in place)"] = replay_ms(graph)
    graph = capture()
    live = LiveGraph(int(graph.graph), int(graph.graphExec), sites)
    live.apply({0: ((256, 1, 1), (65, 1, 1), 0)})
    results["grid 65 instead of 64 on 1 node, same block"] = replay_ms(graph)
    graph = capture()
    live = LiveGraph(int(graph.graph), int(graph.graphExec), sites)
    live.apply({i: ((128, 1, 1), (128, 1, 1), 0) for i in range(LAUNCHES)})
    results["block 128 on all nodes (in place)"] = replay_ms(graph)
    live.apply({i: ((256, 1, 1), (64, 1, 1), 0) for i in range(LAUNCHES)})
    results["restored to 256 (in place)"] = replay_ms(graph)
    graph.upload(stream)
    stream.synchronize()
    results["restored, then re-uploaded"] = replay_ms(graph)
    results["fresh capture with block 128"] = replay_ms(capture(128))
    # whole-graph update: capture the new config and update the instantiated graph from it
    target = capture()
    fresh = capture(128)
    error, _info = driver.cuGraphExecUpdate(
        driver.CUgraphExec(init_value=int(target.graphExec)), driver.CUgraph(init_value=int(fresh.graph))
    )
    results["cuGraphExecUpdate to block 128"] = replay_ms(target) if int(error) == 0 else float("nan")
    results["cuGraphExecUpdate status"] = int(error)
    print(json.dumps(results, indent=2))
    for key, value in results.items():
        print(f"# {key:<40} {value:.4f}", file=sys.stderr)


if __name__ == "__main__":
    main()

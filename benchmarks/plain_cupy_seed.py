"""The seeds' benchmark written directly in CuPy, timed with CUDA events: a reference for graphscope's runner.

Prints {"eager_ns": median, "graph_ns": median} for 1000 vec_add launches per step, eagerly and as one
captured graph. `--cpu N` pins the process to one core (as `graphscope run --cpu N` pins its child).

    python benchmarks/plain_cupy_seed.py [--reps 30] [--cpu 3]
"""

from __future__ import annotations

import argparse
import json
import os

import numpy as np

SOURCE = r"""
extern "C" __global__ void vec_add(const float* a, const float* b, float* c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}
"""


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--reps", type=int, default=30)
    parser.add_argument("--cpu", type=int)
    args = parser.parse_args()
    if args.cpu is not None:
        os.sched_setaffinity(0, {args.cpu})
    import cupy as cp

    kernel = cp.RawKernel(SOURCE, "vec_add")
    n = 1 << 14
    a, b = cp.random.rand(n, dtype=cp.float32), cp.random.rand(n, dtype=cp.float32)
    c = cp.empty_like(a)
    stream = cp.cuda.Stream(non_blocking=True)

    n32 = np.int32(n)

    def step() -> None:
        for _ in range(1000):
            kernel((64,), (256,), (a, b, c, n32), stream=stream)

    step()
    stream.synchronize()
    stream.begin_capture()
    step()
    graph = stream.end_capture()
    graph.upload(stream)
    start, end = cp.cuda.Event(), cp.cuda.Event()
    result = {}
    for label, run in (("eager_ns", step), ("graph_ns", lambda: graph.launch(stream))):
        for _ in range(5):
            run()
        times = []
        for _ in range(args.reps):
            start.record(stream)
            run()
            end.record(stream)
            end.synchronize()
            times.append(cp.cuda.get_elapsed_time(start, end) * 1e6)
        result[label] = float(np.median(times))
    print(json.dumps(result))


if __name__ == "__main__":
    main()

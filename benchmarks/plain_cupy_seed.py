"""The seeds' benchmark written directly in CuPy, timed with CUDA events: a reference for graphscope's runner.

Prints {"eager_ns": median, "graph_ns": median} for 1000 vec_add launches per step, eagerly and as one
captured graph. The GPU test imports `PlainSeed` and interleaves it with graphscope's own measurement.

    python benchmarks/plain_cupy_seed.py [--reps 30] [--cpu 3]
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

import numpy as np

SOURCE = (Path(__file__).resolve().parent.parent / "examples" / "seed_vecadd.py").read_text().split('r"""')[1]
SOURCE = SOURCE.split('"""')[0]


class PlainSeed:
    """1000 launches of vec_add on a non-blocking stream, eagerly and as one captured graph."""

    def __init__(self, n: int = 1 << 14) -> None:
        import cupy as cp

        self.cp = cp
        kernel = cp.RawKernel(SOURCE, "vec_add")
        a, b = cp.random.rand(n, dtype=cp.float32), cp.random.rand(n, dtype=cp.float32)
        c = cp.empty_like(a)
        self.stream = stream = cp.cuda.Stream(non_blocking=True)
        n32, grid = np.int32(n), (n // 256,)

        def step() -> None:
            for _ in range(1000):
                kernel(grid, (256,), (a, b, c, n32), stream=stream)

        step()
        stream.synchronize()
        stream.begin_capture()
        step()
        self.graph = stream.end_capture()
        self.graph.upload(stream)
        self.runs = {"eager": step, "graph": lambda: self.graph.launch(stream)}

    def measure(self, mode: str, reps: int = 30, warmup: int = 5) -> float:
        """Median GPU time per step (ns) by CUDA events."""
        run, start, end = self.runs[mode], self.cp.cuda.Event(), self.cp.cuda.Event()
        for _ in range(warmup):
            run()
        times = []
        for _ in range(reps):
            start.record(self.stream)
            run()
            end.record(self.stream)
            end.synchronize()
            times.append(self.cp.cuda.get_elapsed_time(start, end) * 1e6)
        return float(np.median(times))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--reps", type=int, default=30)
    parser.add_argument("--cpu", type=int, help="pin to this core (as `graphscope run --cpu N` pins its child)")
    args = parser.parse_args()
    if args.cpu is not None:
        os.sched_setaffinity(0, {args.cpu})
    seed = PlainSeed()
    print(json.dumps({f"{mode}_ns": seed.measure(mode, args.reps) for mode in ("eager", "graph")}))


if __name__ == "__main__":
    main()

"""Attribution of replayed graph nodes at an engine's scale: one capture trace of S sizes (vLLM captures
67 by default) of C node-making calls each, recorded with stacks, modules and shapes, and a replay trace
of the S graphs replayed R times; reading both and attributing, in a fresh process.

    python benchmarks/attribution.py [--sizes 67] [--calls 1500] [--replays 5]

Prints the seconds to read each trace, the seconds to attribute, the coverage and the peak memory.
"""

from __future__ import annotations

import argparse
import gzip
import json
import resource
import sys
import tempfile
import time
from pathlib import Path

FRAMES = (
    "vllm/v1/worker/gpu_model_runner.py(2100): capture_model",
    "model.py(42): forward",
)
INNER = ("torch/nn/modules/module.py(1783): _call_impl", "torch/nn/modules/linear.py(125): forward")
OPS = ("aten::mm", "aten::add", "aten::mul", "aten::silu")


def _x(cat: str, name: str, ts: float, dur: float, **args) -> dict:
    gpu = cat == "kernel"
    where = {"pid": 0, "tid": 7} if gpu else {"pid": 10, "tid": 1}
    return {"ph": "X", "cat": cat, "name": name, **where, "ts": ts, "dur": dur, "args": args}


def capture_trace(path: Path, sizes: int, calls: int) -> None:
    events, t, corr = [], 0.0, 0
    for size in range(1, sizes + 1):
        span = 10.0 * (calls + 2)
        events += [_x("python_function", f, t + i, span - 2 * i) for i, f in enumerate(FRAMES)]
        events.append(_x("cuda_runtime", "cudaStreamBeginCapture", t + 3, 1, correlation=(corr := corr + 1)))
        at = t + 5
        for call in range(calls):
            layer, op = call // 12, OPS[call % len(OPS)]
            events.append(_x("python_function", f"nn.Module: Layer_{layer}", at, 9))
            events.append(_x("python_function", f"nn.Module: Linear_{call % 3}", at + 0.5, 8))
            events += [_x("python_function", f, at + 1 + 0.1 * i, 6 - i) for i, f in enumerate(INNER)]
            dims = {"Input Dims": [[size, 4096], [4096, 4096]], "Input type": ["c10::BFloat16"] * 2}
            events.append(_x("cpu_op", op, at + 1.5, 5, **dims))
            events.append(_x("cuda_runtime", "cudaLaunchKernel", at + 2, 1, correlation=(corr := corr + 1)))
            at += 10
        events.append(_x("cuda_runtime", "cudaStreamEndCapture", at, 1, correlation=(corr := corr + 1)))
        t = at + 100
    _write(path, events)


def replay_trace(path: Path, sizes: int, calls: int, replays: int) -> None:
    events, t, corr = [], 0.0, 0
    for _ in range(replays):
        for size in range(1, sizes + 1):
            corr += 1
            events.append(_x("cuda_runtime", "cudaGraphLaunch", t, 5, correlation=corr))
            for call in range(calls):  # kernel names per size: each size its own graph to the replay
                name = f"k{call % len(OPS)}_{size}"
                events.append(
                    _x("kernel", name, t + 10 + call, 0.8, device=0, stream=7, correlation=corr, grid=[size, 1, 1])
                )
            t += calls + 50
    _write(path, events)


def _write(path: Path, events: list[dict]) -> None:
    with gzip.open(path, "wt", compresslevel=1) as stream:
        json.dump({"traceEvents": events}, stream)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", type=int, default=67)
    parser.add_argument("--calls", type=int, default=1500)
    parser.add_argument("--replays", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        capture, replay = Path(folder) / "capture.json.gz", Path(folder) / "replay.json.gz"
        capture_trace(capture, args.sizes, args.calls)
        replay_trace(replay, args.sizes, args.calls, args.replays)
        from graphscope.analysis.capture_ops import attribute
        from graphscope.trace.kineto import load_kineto

        start = time.perf_counter()
        captured = load_kineto(capture)
        read_capture = time.perf_counter() - start
        replayed = load_kineto(replay)
        read_replay = time.perf_counter() - start - read_capture
        start = time.perf_counter()
        found = attribute(replayed, [captured])
        attributed = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(
        f"{args.sizes} sizes x {args.calls} calls ({len(captured.api):,} capture calls, "
        f"{len(captured.nvtx):,} ranges), {args.replays} replays ({len(replayed.kernels):,} kernels)"
    )
    print(f"read capture {read_capture:.2f} s, read replay {read_replay:.2f} s, attribute {attributed:.2f} s")
    print(f"coverage {json.dumps({k: round(v, 3) for k, v in found['coverage'].items()})}, peak {peak:.0f} MiB")
    sys.stdout.flush()


if __name__ == "__main__":
    main()

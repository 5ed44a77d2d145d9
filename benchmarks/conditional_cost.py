"""What a WHILE conditional node costs, measured three ways (issue #47), on the GPU machine:

1. graphscope's own measurement of examples/while_decode.py (in process, full tracebacks): iterations per
   launch from its counters, the step with the loop capped at one iteration (fixed vs per-iteration cost);
2. the same body unrolled into a plain captured graph, 1 and LENGTH copies (no conditional node), timed
   by CUDA events: per-iteration cost without the WHILE node, the second way;
3. the WHILE graph replayed under torch.profiler: how many body kernels the profiler records per launch
   against the iterations counted (the under-recording the issue found).

Prints one JSON line per part (`python3 benchmarks/conditional_cost.py [--no-torch] [--dot FILE]`).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
import time
import traceback
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "while_decode.py"


def emit(part: str, **data: Any) -> None:
    print(json.dumps({"part": part, **data}, default=str), flush=True)


def guarded(function: Any) -> Any:
    def run(*args: Any, **kwargs: Any) -> Any:
        try:
            return function(*args, **kwargs)
        except BaseException as exc:  # each part reports its own failure; the next one runs
            emit(
                function.__name__,
                ok=False,
                error=f"{type(exc).__name__}: {exc}"[:800],
                tb=traceback.format_exc()[-2500:],
            )
            return None

    return run


@guarded
def graphscope_measure(reps: int, dot: Path | None) -> Any:
    from graphscope.graph.export import to_dot
    from graphscope.graph.model import Dag
    from graphscope.text.tune import render_dag
    from graphscope.workload.child.live import LiveWorkload

    live = LiveWorkload(EXAMPLE)
    eager = live.measure("eager", reps, 3)
    graph = live.measure("graph", reps, 3)
    live.reset_state()  # the second count: tokens the loop decoded in one replay, from the example's own output
    live.fw.launch(live.graph)
    live.fw.synchronize()
    pos = int(live.fw.snapshot()["pos"][0])
    dag = Dag.from_json(live.dag())
    loop = graph["conditionals"]["decode#0"]
    emit(
        "graphscope",
        ok=True,
        eager_gpu_us=float(np.median(eager["gpu_ns"])) / 1e3,
        eager_wall_us=float(np.median(eager["wall_ns"])) / 1e3,
        graph_gpu_us=float(np.median(graph["gpu_ns"])) / 1e3,
        graph_wall_us=float(np.median(graph["wall_ns"])) / 1e3,
        outputs=graph["outputs"],
        eager_loop=eager["conditionals"]["decode#0"],
        graph_loop={k: v for k, v in loop.items() if k != "one_iteration_gpu_ns"},
        tokens_decoded_by_the_pos_output=pos,
        condition_kernels_compiled_with=live.ctx._conditionals.compiled_with,
    )
    print(render_dag(dag, "live capture of while_decode.py"), flush=True)
    if dot is not None:
        dot.write_text(to_dot(dag))
    return live


@guarded
def unrolled(reps: int) -> None:
    """The loop's body captured LENGTH times in a row (no conditional node), and once."""
    import cupy as cp

    spec = importlib.util.spec_from_file_location("while_decode", EXAMPLE)
    assert spec is not None and spec.loader is not None
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    module = cp.RawModule(code=example.SOURCE)
    prefill, mix, scale, pick, finish = (module.get_function(n) for n in ("prefill", "mix", "scale", "pick", "finish"))
    n = example.HIDDEN
    h, out = cp.zeros(n, cp.float32), cp.zeros(n, cp.float32)
    tokens, pos, flag = cp.zeros(example.MAX_STEPS, cp.int32), cp.zeros(1, cp.int32), cp.ones(1, cp.int32)
    grid, block = ((n + 255) // 256,), (256,)
    stream = cp.cuda.Stream(non_blocking=True)
    args_pick = (h, tokens, pos, flag, np.int32(n), np.int32(example.STOP), np.int32(example.LENGTH))

    def capture(copies: int) -> Any:
        with stream:
            stream.begin_capture()
            prefill(grid, block, (h, np.int32(n)), stream=stream)
            for _ in range(copies):
                mix(grid, block, (h, pos, np.int32(n)), stream=stream)
                scale(grid, block, (h, np.int32(n)), stream=stream)
                pick((1,), (1,), args_pick, stream=stream)
            finish(grid, block, (h, tokens, out, np.int32(n), np.int32(example.LENGTH)), stream=stream)
            return stream.end_capture()

    times = {}
    start, end = cp.cuda.Event(), cp.cuda.Event()
    for copies in (1, example.LENGTH):
        graph = capture(copies)
        graph.upload(stream)
        samples = []
        for rep in range(reps + 3):
            pos.fill(0)
            flag.fill(1)
            cp.cuda.Device().synchronize()
            start.record(stream)
            graph.launch(stream)
            end.record(stream)
            end.synchronize()
            if rep >= 3:
                samples.append(cp.cuda.get_elapsed_time(start, end) * 1e6)
        times[copies] = float(np.median(samples))
    per = (times[example.LENGTH] - times[1]) / (example.LENGTH - 1)
    emit("unrolled", ok=True, step_ns_by_copies=times, per_iteration_ns=per, fixed_ns=times[1] - per)


@guarded
def torch_profiler(live: Any, launches: int) -> None:
    """The WHILE graph replayed under torch.profiler: body kernels recorded per launch."""
    import torch
    import torch.profiler

    torch.cuda.init()
    before = live.ctx._conditionals.counts()["decode#0"]["runs"]
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        for _ in range(launches):
            live.reset_state()
            live.fw.launch(live.graph)
        live.fw.synchronize()
    iterations = live.ctx._conditionals.counts()["decode#0"]["runs"] - before
    counts: dict[str, int] = {}
    for event in prof.events():
        if event.device_type == torch.autograd.DeviceType.CUDA:
            counts[event.name] = counts.get(event.name, 0) + 1
    emit(
        "torch_profiler",
        ok=True,
        launches=launches,
        iterations_counted=iterations,
        kernels_recorded=counts,
        mix_per_launch=counts.get("mix", 0) / launches,
        iterations_per_launch=iterations / launches,
    )


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--reps", type=int, default=30)
    parser.add_argument("--no-torch", action="store_true")
    parser.add_argument("--dot", type=Path)
    args = parser.parse_args()
    started = time.time()
    live = graphscope_measure(args.reps, args.dot)
    unrolled(args.reps)
    if live is not None and not args.no_torch:
        torch_profiler(live, 5)
    emit("done", seconds=round(time.time() - started, 1))
    return 0


if __name__ == "__main__":
    sys.exit(main())

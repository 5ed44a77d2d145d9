"""One graph per batch size, captured into one memory pool as servers do, and what each size costs.

`measure_sizes` (in the workload child) builds the step for each size (`ctx.batch`, largest first as
PyTorch's and vLLM's own capture does, so smaller graphs reuse the pool the largest reserved), and per
size measures: the eager step and the graph replay (CUDA events: median and 95% interval over the
repetitions), capture, instantiate and upload time, the first replay's extra time, the device memory
the size's graph added (cudaMemGetInfo: what the device lost, and the framework pool's growth), and
whether the graph's outputs match the eager step's. Every graph is kept alive while the next is
captured, so memory adds up as it would in a server.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from graphscope.workload.child.live import LiveWorkload, compare_outputs


def measure_sizes(
    live: LiveWorkload, sizes: list[int], reps: int, warmup: int, order: str = "largest"
) -> dict[str, Any]:
    """Per-size measurements, in the order captured ('largest' or 'smallest' first)."""
    fw = live.fw
    ordered = sorted(sizes, reverse=order == "largest")
    kept: list[Any] = []  # graphs stay alive: memory adds up as in a server
    steps: list[Any] = []
    results: list[dict[str, Any]] = []
    before_all = fw.memory()
    warmed, warm_up_bytes = False, 0
    for size in ordered:
        step = build_step(live, size)
        reference = fw.snapshot()
        eager = _time(live, lambda step=step: fw.run(step), reps, warmup)
        if not warmed:  # the recipe's warm-up (PyTorch: side-stream blocks) is no size's graph memory
            live.reset_state()
            prior = fw.memory()
            fw.warm_up(step)
            fw.synchronize()
            warm_up_bytes, warmed = max(prior["free"] - fw.memory()["free"], 0), True
        before = fw.memory()
        live.reset_state()
        t0 = time.perf_counter_ns()
        graph = fw.capture(step)
        t1 = time.perf_counter_ns()
        fw.instantiate(graph)
        t2 = time.perf_counter_ns()
        fw.upload(graph)
        t3 = time.perf_counter_ns()
        fw.synchronize()
        after = fw.memory()
        kept.append(graph)
        steps.append(step)  # and its buffers: a torch step's tensors die with it, and its graph reads them
        live.reset_state()
        first = _host_time(fw, lambda graph=graph: fw.launch(graph))
        replay = _time(live, lambda graph=graph: fw.launch(graph), reps, warmup)
        results.append(
            {
                "size": size,
                "eager_ns": eager,
                "graph_ns": replay,
                "capture_ns": t1 - t0,
                "instantiate_ns": t2 - t1,
                "upload_ns": t3 - t2,
                "first_replay_extra_ns": max(first - float(np.median(replay)), 0.0),
                "memory_bytes": max(before["free"] - after["free"], 0),
                "pool_bytes": after["pool"] - before["pool"],
                "outputs": compare_outputs(reference, fw.snapshot(), live.dtypes),
            }
        )
    after_all = fw.memory()
    return {
        "order": order,
        "sizes": results,
        "switch_ns": switch_penalty(live, kept, [float(np.median(r["graph_ns"])) for r in results], reps),
        "total_memory_bytes": max(before_all["free"] - after_all["free"], 0),
        "warm_up_bytes": warm_up_bytes,
        "total_pool_bytes": after_all["pool"] - before_all["pool"],
    }


def switch_penalty(live: LiveWorkload, graphs: list[Any], medians: list[float], reps: int) -> dict[str, Any] | None:
    """What a replay costs on top of its own median when the graph before it was another one, two ways:
    each graph alternated with its neighbour in size (`pairs`: two graphs in play, as skewed traffic
    mostly switches) and all graphs round-robin (`rotation`: every graph cold); each graph's median
    there against its median replayed alone, averaged over the graphs. None with fewer than two graphs."""
    if len(graphs) < 2:
        return None
    fw = live.fw
    launch = [lambda graph=graph: fw.launch(graph) for graph in graphs]
    gpu = np.asarray(timed(live, launch * reps)[0]).reshape(reps, len(graphs))
    rotation = float(np.mean(np.median(gpu, axis=0) - np.asarray(medians)))
    pairs = []
    for i in range(len(graphs) - 1):
        both = np.asarray(timed(live, [launch[i], launch[i + 1]] * reps)[0]).reshape(reps, 2)
        pairs.append(np.median(both, axis=0) - np.asarray(medians[i : i + 2]))
    return {"pairs": float(np.mean(pairs)), "rotation": rotation}


def build_step(live: LiveWorkload, size: int) -> Any:
    """The workload's step built at `ctx.batch = size`, run once recorded (compiles, records its sites,
    leaves the reference outputs) from a reset state."""
    live.ctx.batch = size
    step = live.fw.setup(live.module)
    live.reset_state()
    live.fw.run(step, record=True)
    live.fw.synchronize()
    return step


def timed(live: LiveWorkload, calls: list[Any]) -> tuple[list[float], list[float]]:
    """GPU time (CUDA events) and host time until the GPU finished, of each call in turn, each from a
    reset state: how every per-size and served step is timed."""
    fw = live.fw
    start, end = fw.event(), fw.event()
    gpu, wall = [], []
    for once in calls:
        live.reset_state()
        fw.record(start)
        t0 = time.perf_counter_ns()
        once()
        fw.record(end)
        end.synchronize()
        wall.append(float(time.perf_counter_ns() - t0))
        gpu.append(fw.elapsed_ns(start, end))
    return gpu, wall


def _time(live: LiveWorkload, once: Any, reps: int, warmup: int) -> list[float]:
    """GPU time of `reps` calls of `once` (CUDA events), after `warmup`, each from a reset state."""
    for _ in range(warmup):
        live.reset_state()
        once()
    live.fw.synchronize()
    return timed(live, [once] * reps)[0]


def _host_time(fw: Any, once: Any) -> float:
    """Host time of one call of `once` until the GPU finished it (the first replay: uploads, page-ins)."""
    fw.synchronize()
    t0 = time.perf_counter_ns()
    once()
    fw.synchronize()
    return float(time.perf_counter_ns() - t0)

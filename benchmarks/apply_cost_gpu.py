"""Where the in-place apply's time goes, per node, against a re-capture (GPU; the tuner's premise).

Builds the seed graph (1000 launches of a tiny vector add, examples/seed_vecadd.py) with CuPy stream
capture, reads its kernel nodes with cuda.bindings as graph/live.py does, then times, per node and
interleaved over rounds: setting the params struct's seven fields; cuGraphExecKernelNodeSetParams with
the params read back; the same with a changed block; graph/live.py's whole `apply`; and capture +
instantiate + upload of the same 1000 launches. Prints medians; writes JSON to $RESULTS or ./.

    python benchmarks/apply_cost_gpu.py [--rounds 7]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from pathlib import Path

import cupy as cp
import numpy as np
from cuda.bindings import driver

SOURCE = r"""
extern "C" __global__ void vec_add(const float* a, const float* b, float* c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}
"""
N, LAUNCHES = 1 << 14, 1000


def ok(result):
    err, *rest = result
    assert err == driver.CUresult.CUDA_SUCCESS, err
    return rest[0] if len(rest) == 1 else rest


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=7)
    rounds = parser.parse_args().rounds
    kernel = cp.RawKernel(SOURCE, "vec_add")
    a, b = cp.random.rand(N, dtype=cp.float32), cp.random.rand(N, dtype=cp.float32)
    c, n = cp.empty_like(a), np.int32(N)
    stream = cp.cuda.Stream(non_blocking=True)

    def capture() -> tuple[int, int, int, object]:
        t0 = time.perf_counter_ns()
        with stream:
            stream.begin_capture()
            for _ in range(LAUNCHES):
                kernel((N // 256,), (256,), (a, b, c, n))
            graph = stream.end_capture()
        t1 = time.perf_counter_ns()
        graph.upload(stream)
        stream.synchronize()
        t2 = time.perf_counter_ns()
        return t1 - t0, t2 - t1, 0, graph

    _, _, _, graph = capture()
    # the driver's view of CuPy's graph: its CUgraphExec and nodes (CuPy keeps the handles)
    raw = driver.CUgraph(init_value=int(graph.graph))  # as workload/child/frameworks/cupy_framework.py
    exec_ = driver.CUgraphExec(init_value=int(graph.graphExec))
    _, count = ok(driver.cuGraphGetNodes(raw, 0))
    nodes, count = ok(driver.cuGraphGetNodes(raw, count))
    handles = list(nodes)[:count]
    params = [ok(driver.cuGraphKernelNodeGetParams(h)) for h in handles]
    samples: dict[str, list[float]] = {
        k: []
        for k in (
            "setattr", "set_same", "set_changed", "get_params", "capture", "instantiate_upload",
            "fresh_first_apply", "fresh_second_apply", "fresh_third_apply",
        )
    }
    for r in range(rounds):
        t0 = time.perf_counter_ns()
        for p in params:
            p.blockDimX, p.blockDimY, p.blockDimZ = 256, 1, 1
            p.gridDimX, p.gridDimY, p.gridDimZ = N // 256, 1, 1
            p.sharedMemBytes = 0
        samples["setattr"].append((time.perf_counter_ns() - t0) / count)
        t0 = time.perf_counter_ns()
        for h, p in zip(handles, params):
            ok(driver.cuGraphExecKernelNodeSetParams(exec_, h, p))
        samples["set_same"].append((time.perf_counter_ns() - t0) / count)
        block = 128 if r % 2 == 0 else 256
        for p in params:
            p.blockDimX, p.gridDimX = block, N // block
        t0 = time.perf_counter_ns()
        for h, p in zip(handles, params):
            ok(driver.cuGraphExecKernelNodeSetParams(exec_, h, p))
        samples["set_changed"].append((time.perf_counter_ns() - t0) / count)
        t0 = time.perf_counter_ns()
        for h in handles[:100]:
            ok(driver.cuGraphKernelNodeGetParams(h))
        samples["get_params"].append((time.perf_counter_ns() - t0) / 100)
        cap, inst, _, fresh = capture()
        samples["capture"].append(cap / count)
        samples["instantiate_upload"].append(inst / count)
        # the tuner's first apply lands on a freshly instantiated graph: is the first edit of a node dearer?
        fresh_exec = driver.CUgraphExec(init_value=int(fresh.graphExec))
        _, fresh_count = ok(driver.cuGraphGetNodes(driver.CUgraph(init_value=int(fresh.graph)), 0))
        fresh_nodes, _ = ok(driver.cuGraphGetNodes(driver.CUgraph(init_value=int(fresh.graph)), fresh_count))
        fresh_handles = list(fresh_nodes)[:fresh_count]
        fresh_params = [ok(driver.cuGraphKernelNodeGetParams(h)) for h in fresh_handles]
        for label, blk in (("fresh_first_apply", 128), ("fresh_second_apply", 256), ("fresh_third_apply", 128)):
            t0 = time.perf_counter_ns()
            for h, p in zip(fresh_handles, fresh_params):
                p.blockDimX, p.gridDimX = blk, N // blk
                ok(driver.cuGraphExecKernelNodeSetParams(fresh_exec, h, p))
            samples[label].append((time.perf_counter_ns() - t0) / fresh_count)
        fresh.launch(stream)
        stream.synchronize()
        del fresh
    out = {k: statistics.median(v) for k, v in samples.items()}
    out["rounds"] = rounds
    out["samples"] = samples
    out["host_cpu"] = Path("/proc/cpuinfo").read_text().split("model name")[1].split("\n")[0].strip(" :\t")
    for k, v in out.items():
        if k == "samples":
            continue
        unit = "" if k in ("rounds", "host_cpu") else "ns/node"
        print(f"{k:20s} {v if isinstance(v, str) else f'{v:10.0f}'} {unit}")
    Path(os.environ.get("RESULTS", "."), "apply_cost.json").write_text(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()

"""A generated set of per-rank PyTorch-profiler traces of one data-parallel job, in the trace-event format
torch.profiler writes (distributedInfo with rank and world size, ProfilerStep#N annotations, CUDA runtime
launches, kernels with their correlation ids, one NCCL all-reduce per step), with planted stragglers.

Each step: every rank's host launches `kernels` compute kernels, the GPU runs them, then the all-reduce
starts when the rank arrives and ends for every rank when the last one has arrived (plus its own time).
`slow_host` = {(rank, step): extra ns} delays that rank's launches (a host (CPU)); `slow_gpu`
lengthens its kernels (GPU work). Used by tests and by benchmarks/ranks.py.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import numpy as np

ALLREDUCE = "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)"


def write_rank_set(
    folder: Path,
    world: int = 8,
    steps: int = 20,
    kernels: int = 10,
    slow_host: dict[tuple[int, int], int] | None = None,
    slow_gpu: dict[tuple[int, int], int] | None = None,
    seed: int = 3,
    job: str = "job-1",
    compress: bool = False,
) -> list[Path]:
    """Write one trace per rank (rank{r}.pt.trace.json[.gz]); returns their paths."""
    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    slow_host, slow_gpu = slow_host or {}, slow_gpu or {}
    events: list[list[dict]] = [[] for _ in range(world)]
    correlation = [1] * world
    clock = np.full(world, 1_000_000, dtype=np.int64)  # ns; every rank starts its first step together
    for step in range(steps):
        arrive = np.zeros(world, dtype=np.int64)
        begin = clock.copy()
        for rank in range(world):
            host = int(begin[rank]) + slow_host.get((rank, step), 0)
            gpu_free = int(begin[rank])
            for _ in range(kernels):
                launch = int(rng.integers(3_000, 5_000))
                corr = correlation[rank]
                correlation[rank] += 1
                events[rank].append(_x("cuda_runtime", "cudaLaunchKernel", host, launch, 100, corr))
                start = max(host + launch + 2_000, gpu_free)
                duration = int(rng.integers(8_000, 12_000)) + slow_gpu.get((rank, step), 0) // kernels
                events[rank].append(_x("kernel", "gemm_kernel", start, duration, 7, corr))
                gpu_free = start + duration
                host += launch + 500
            corr = correlation[rank]
            correlation[rank] += 1
            events[rank].append(_x("cuda_runtime", "cudaLaunchKernel", host, 4_000, 100, corr))
            arrive[rank] = max(gpu_free, host + 6_000)
        done = int(arrive.max()) + 50_000  # the ring finishes for everyone once the last rank is in
        for rank in range(world):
            comm_corr = correlation[rank] - 1
            events[rank].append(_x("kernel", ALLREDUCE, int(arrive[rank]), done - int(arrive[rank]), 20, comm_corr))
            end = done + 2_000
            events[rank].append(
                _x("user_annotation", f"ProfilerStep#{step}", int(begin[rank]), end - int(begin[rank]), 100)
            )
            clock[rank] = end + 5_000
    paths = []
    for rank in range(world):
        document = {
            "schemaVersion": 1,
            "distributedInfo": {"backend": "nccl", "rank": rank, "world_size": world, "pg_config": job},
            "deviceProperties": [{"id": 0, "name": "NVIDIA H200", "computeMajor": 9, "computeMinor": 0}],
            "traceEvents": events[rank],
        }
        path = folder / (f"rank{rank}.pt.trace.json" + (".gz" if compress else ""))
        data = json.dumps(document).encode()
        path.write_bytes(gzip.compress(data, 1) if compress else data)
        paths.append(path)
    return paths


def _x(category: str, name: str, start_ns: int, duration_ns: int, tid: int, correlation: int | None = None) -> dict:
    event = {
        "ph": "X",
        "cat": category,
        "name": name,
        "pid": 1,
        "tid": tid,
        "ts": start_ns / 1e3,
        "dur": duration_ns / 1e3,
    }
    if category == "kernel":
        event["pid"], event["tid"] = 0, 7 if "nccl" not in name else 20
        event["args"] = {"correlation": correlation, "device": 0, "stream": event["tid"], "grid": [128, 1, 1],
                         "block": [256, 1, 1]}  # fmt: skip
    elif correlation is not None:
        event["args"] = {"correlation": correlation}
    return event

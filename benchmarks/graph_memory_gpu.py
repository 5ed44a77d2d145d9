"""The planner's graph memory per size checked against PyTorch's and CuPy's own accounting, on the GPU.

    python benchmarks/graph_memory_gpu.py torch OUT [SIZES]   # examples/torch_block.py, 1,4,16,64 by default
    python benchmarks/graph_memory_gpu.py cupy OUT [SIZES]    # examples/batched_mlp.py

Runs the planner's own per-size measurement (workload/child/sizes.py measure_sizes, largest first, one pool)
in this process with every memory reading it takes doubled by the framework's: for PyTorch
`torch.cuda.memory_stats()` (reserved and allocated bytes) and the caching allocator's segments grouped
by pool (`memory_snapshot()`: the graphs' private pool apart from the default one), read at the
planner's own before/after points and also where the capture itself begins and ends
(`CUDAGraph.capture_begin` / `capture_end`), so the warm-up PyTorch's recipe runs before the first
capture is told apart from the graph (the planner reads memory after that warm-up and reports it apart,
`warm_up_bytes`); for CuPy the default pool's total and used bytes. Writes
OUT/graph_memory_<framework>.json: per size the planner's `memory_bytes` and `pool_bytes` beside every
reading.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def graph_mem_reserved() -> int | None:
    """The CUDA graphs' own asynchronous allocator's reserved bytes (graph memory nodes), or None."""
    try:
        from cuda.bindings import runtime

        err, value = runtime.cudaDeviceGetGraphMemAttribute(
            0, runtime.cudaGraphMemAttributeType.cudaGraphMemAttrReservedMemCurrent
        )
    except Exception:  # no cuda-bindings, or a binding this driver cannot serve
        return None
    return int(value) if err == runtime.cudaError_t.cudaSuccess else None


def torch_reading(torch: Any) -> dict[str, Any]:
    """Free device bytes, PyTorch's reserved/allocated bytes and reserved bytes per allocator pool."""
    stats = torch.cuda.memory_stats()
    pools: dict[str, int] = {}
    for segment in torch.cuda.memory_snapshot():
        key = str(tuple(segment.get("segment_pool_id", (0, 0))))
        pools[key] = pools.get(key, 0) + int(segment["total_size"])
    free, _ = torch.cuda.mem_get_info()
    return {
        "free": int(free),
        "reserved": int(stats.get("reserved_bytes.all.current", 0)),
        "allocated": int(stats.get("allocated_bytes.all.current", 0)),
        "pools": pools,
        "graph_mem": graph_mem_reserved(),
    }


def cupy_reading(cupy: Any) -> dict[str, Any]:
    pool = cupy.get_default_memory_pool()
    free, _ = cupy.cuda.runtime.memGetInfo()
    return {
        "free": int(free),
        "reserved": int(pool.total_bytes()),
        "allocated": int(pool.used_bytes()),
        "graph_mem": graph_mem_reserved(),
    }


def measure(framework: str, out: Path, sizes: list[int]) -> dict[str, Any]:
    from graphscope.workload.child.live import LiveWorkload
    from graphscope.workload.child.sizes import measure_sizes

    workload = ROOT / "examples" / ("torch_block.py" if framework == "torch" else "batched_mlp.py")
    live = LiveWorkload(workload, sizes=sizes)
    fw = live.fw
    readings: list[dict[str, Any]] = []
    if framework == "torch":
        import torch

        def read() -> dict[str, Any]:
            return torch_reading(torch)

        graph_class = torch.cuda.CUDAGraph
        begin, end = graph_class.capture_begin, graph_class.capture_end

        def capture_begin(self: Any, *args: Any, **kwargs: Any) -> Any:
            readings.append({"at": "capture_begin", **read()})
            return begin(self, *args, **kwargs)

        def capture_end(self: Any) -> Any:
            answer = end(self)
            readings.append({"at": "capture_end", **read()})
            return answer

        graph_class.capture_begin, graph_class.capture_end = capture_begin, capture_end  # type: ignore[method-assign]
    else:
        import cupy

        def read() -> dict[str, Any]:
            return cupy_reading(cupy)

    memory = fw.memory

    def doubled() -> dict[str, int]:
        found = memory()
        readings.append({"at": "planner", "planner": found, **read()})
        return found

    fw.memory = doubled  # type: ignore[method-assign]
    try:
        result = measure_sizes(live, sizes, reps=5, warmup=2)
    finally:
        if framework == "torch":  # the class as it was, for whatever runs next in this process
            graph_class.capture_begin, graph_class.capture_end = begin, end  # type: ignore[method-assign]
    per_size = []
    planner = [r for r in readings if r["at"] == "planner"]
    begins = [r for r in readings if r["at"] == "capture_begin"]
    ends = [r for r in readings if r["at"] == "capture_end"]
    for i, size in enumerate(result["sizes"]):
        # planner[0]: before every size; [1], [2]: around the recipe's warm-up (once, before the first size)
        before, after = planner[3 + 2 * i], planner[4 + 2 * i]
        entry = {
            "size": size["size"],
            "memory_bytes": size["memory_bytes"],
            "pool_bytes": size["pool_bytes"],
            "free_drop": before["free"] - after["free"],
            "reserved_growth": after["reserved"] - before["reserved"],
            "allocated_growth": after["allocated"] - before["allocated"],
        }
        if i < len(begins) and i < len(ends):
            entry["warmup_reserved_growth"] = begins[i]["reserved"] - before["reserved"]
            entry["warmup_free_drop"] = before["free"] - begins[i]["free"]
            entry["capture_reserved_growth"] = ends[i]["reserved"] - begins[i]["reserved"]
            entry["capture_free_drop"] = begins[i]["free"] - ends[i]["free"]
            entry["after_capture_free_drop"] = ends[i]["free"] - after["free"]
            pools = set(after.get("pools", {})) | set(before.get("pools", {}))
            entry["pool_growth"] = {
                p: after["pools"].get(p, 0) - before["pools"].get(p, 0)
                for p in sorted(pools)
                if after["pools"].get(p, 0) != before["pools"].get(p, 0)
            }
            # the graphs' private pools (PyTorch's default pool is (0, 0)): what the size's graph took
            entry["graph_pool_growth"] = sum(v for p, v in entry["pool_growth"].items() if p != "(0, 0)")
            entry["agrees"] = all(  # within the 2 MiB a segment rounds to (the instantiated graph's memory)
                abs(entry[k] - entry["graph_pool_growth"]) <= 2 << 20 for k in ("memory_bytes", "pool_bytes")
            )
        per_size.append(entry)
        print(json.dumps(entry), flush=True)
    warm = {
        "warm_up_bytes": result.get("warm_up_bytes"),
        "free_drop": planner[1]["free"] - planner[2]["free"],
        "reserved_growth": planner[2]["reserved"] - planner[1]["reserved"],
        "allocated_growth": planner[2]["allocated"] - planner[1]["allocated"],
    }
    print("warm-up:", json.dumps(warm), flush=True)
    answer = {
        "framework": framework,
        "warm_up": warm,
        "workload": workload.name,
        "sizes": per_size,
        "total_memory_bytes": result["total_memory_bytes"],
        "total_pool_bytes": result["total_pool_bytes"],
        "readings": readings,
    }
    (out / f"graph_memory_{framework}.json").write_text(json.dumps(answer, indent=2))
    return answer


if __name__ == "__main__":
    which, folder = sys.argv[1], Path(sys.argv[2])
    folder.mkdir(parents=True, exist_ok=True)
    chosen = [int(s) for s in sys.argv[3].split(",")] if len(sys.argv) > 3 else [1, 4, 16, 64]
    measure(which, folder, chosen)

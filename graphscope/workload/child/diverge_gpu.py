"""`graphscope diverge` in the workload child: where a captured graph's answer departs from eager.

The graph under test (G) was captured earlier. A fresh capture (R) taken now, at the state the eager step
runs in, launches what the eager step launches (checked: R's full replay must give the eager outputs).
Both are instantiated graphs, so a prefix of either (kernel nodes 0..k in capture order, the rest
disabled with `cuGraphNodeSetEnabled`) can be replayed; diverge/bisect.py halves k until prefix k's
buffers differ between G and R and prefix k - 1's do not. Every buffer a node's pointer arguments reach
is read after the prefix (conservatively: every pointer argument is taken as written).

A disabled node leaves its buffers as the previous replay left them (measured on an H100: an MLP with
every node disabled reproduced the reference bit for bit), so before every trial each buffer is put
back to the state the step starts from (a copy taken once) and every buffer that is not an input is
poisoned (NaN for known float buffers, zero bytes otherwise). Inputs are the buffers whose poisoning
changes the eager step's outputs, found by group tests (diverge/bisect.py: inputs_among).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import numpy as np

from graphscope.workload.child.graph_memory import (
    SWITCHABLE,
    MemoryMap,
    Region,
    check,
    graph_nodes,
    mark_pointers,
    pointer_values,
    read_copy,
    read_launch,
)

MAX_SNAPSHOT = 2 << 30  # host bytes the start-of-step copy of every reached buffer may take


def _describe_arg(value: Any) -> dict[str, Any]:
    """An eager ctx.launch argument as data: arrays by pointer, size and dtype; scalars by value."""
    data: Any = getattr(value, "data", None)
    if hasattr(value, "nbytes") and hasattr(data, "ptr"):
        return {"kind": "array", "ptr": int(data.ptr), "nbytes": int(value.nbytes), "dtype": str(value.dtype)}
    if hasattr(value, "data_ptr"):
        return {"kind": "array", "ptr": int(value.data_ptr()), "nbytes": int(value.nbytes), "dtype": str(value.dtype)}
    if isinstance(value, np.generic):
        return {"kind": "scalar", "value": value.item(), "dtype": str(value.dtype), "hex": value.tobytes().hex()}
    return {"kind": "scalar", "value": value if isinstance(value, int | float | bool) else repr(value)}


def record_eager(live: Any) -> list[dict[str, Any]]:
    """One eager step of a CuPy workload with every ctx.launch noted: site, grid, block, shared memory,
    arguments and the workload line that launched it (PyTorch steps: none; R's nodes stand for them)."""
    ctx = getattr(live.fw, "ctx", None)
    if live.fw.name != "cupy" or ctx is None:
        return []
    records: list[dict[str, Any]] = []
    source = str(Path(live.path).resolve())

    def tap(raw: Any, key: str) -> Any:
        def launch(grid: Any, block: Any, args: Any, shared_mem: int = 0, stream: Any = None) -> None:
            frame: Any = sys._getframe(1)
            line = None
            while frame is not None:
                if frame.f_code.co_filename == source:
                    line = f"{Path(source).name}:{frame.f_lineno}"
                    break
                frame = frame.f_back
            records.append(
                {
                    "site": key,
                    "kernel": getattr(raw, "name", None),
                    "grid": list(grid) if isinstance(grid, tuple) else [grid],
                    "block": list(block) if isinstance(block, tuple) else [block],
                    "shared_mem": int(shared_mem),
                    "args": [_describe_arg(a) for a in args],
                    "line": line,
                }
            )
            raw(grid, block, args, shared_mem=shared_mem, stream=stream)

        return launch

    live.reset_state()
    ctx.tap = tap
    try:
        live.fw.run(live.step, record=True)
    finally:
        ctx.tap = None
    live.fw.synchronize()
    live.reset_state()
    live.fw.run(live.step, record=True)  # the plans again, without the tap
    live.fw.synchronize()
    return records


class Graph:
    """One instantiated graph: its kernel nodes' launches and switches to enable a prefix of them."""

    def __init__(self, driver: Any, handles: tuple[int, int], obj: Any) -> None:
        self.driver, self.obj = driver, obj
        self.exec = driver.CUgraphExec(init_value=handles[1])
        self.kernels: list[Any] = []
        self.launches: list[dict[str, Any]] = []
        for index, (handle, kind) in enumerate(graph_nodes(driver, handles[0])):
            if kind == "kernel":
                launch, _params = read_launch(driver, handle, len(self.kernels), index)
            elif kind in SWITCHABLE:
                launch = read_copy(driver, handle, kind, len(self.kernels), index)
            else:
                continue
            self.kernels.append(handle)  # every node a prefix switches: kernels, copies, memsets
            self.launches.append(launch)
        self.flags = [True] * len(self.kernels)
        self.regions: list[list[tuple[int, Region]]] = []

    def locate(self, memory: MemoryMap) -> None:
        self.regions = [mark_pointers(launch, memory) for launch in self.launches]

    def pointers(self, memory: MemoryMap) -> list[int]:
        return [value for launch in self.launches for value in pointer_values(launch, memory)]

    def prefix(self, last: int) -> None:
        """Enable kernel nodes 0..last, disable the rest."""
        self.only(range(last + 1))

    def only(self, positions: Any) -> None:
        """Enable exactly the kernel nodes at `positions` (only nodes whose state changes are set)."""
        want = set(positions)
        for position, handle in enumerate(self.kernels):
            flag = position in want
            if flag != self.flags[position]:
                check(self.driver.cuGraphNodeSetEnabled(self.exec, handle, int(flag)), "cuGraphNodeSetEnabled")
                self.flags[position] = flag

    def times(self, fw: Any, reps: int = 10) -> list[float]:
        """Each node's GPU time (ns, the least of `reps`): the graph replayed with only that node enabled,
        less the replay with none (what launching the graph costs by itself). Nodes of a few microseconds
        drown in noise with medians of 3 (measured on the H100: a decoder step's audited share of GPU time
        read 0% to 100% from run to run); the least of 10 is stable."""
        start, end = fw.event(), fw.event()

        def replay() -> float:
            samples = []
            for _ in range(reps):
                fw.record(start)
                fw.launch(self.obj)
                fw.record(end)
                end.synchronize()
                samples.append(fw.elapsed_ns(start, end))
            return float(min(samples))

        self.only([])
        empty = replay()
        found = []
        for position in range(len(self.kernels)):
            self.only([position])
            found.append(max(replay() - empty, 0.0))
        self.only(range(len(self.kernels)))
        return found


def build_memory(live: Any, driver: Any, eager: list[dict[str, Any]], pools: list[Any]) -> MemoryMap:
    """Every buffer graphscope can name: eager ctx.launch arrays and declared outputs ("declared"), and for
    PyTorch the allocator's blocks ("graph_pool" in a graph's pool, "allocated", "freed")."""
    memory = MemoryMap(driver)
    if live.fw.name == "torch":
        torch = live.fw.torch
        wanted = {tuple(p) for p in pools if p is not None}
        for segment in torch.cuda.memory_snapshot():
            pool = tuple(segment.get("segment_pool_id") or ())
            address = int(segment["address"])
            for block in segment.get("blocks", []):
                start = int(block.get("address", address))
                size = int(block["size"])
                address = start + size
                free = block.get("state") == "inactive"  # a block pending its free still holds its tensor
                memory.add(start, size, "graph_pool" if pool in wanted else "freed" if free else "allocated")
    for record in eager:
        for arg in record["args"]:
            if arg["kind"] == "array":
                memory.add(arg["ptr"], arg["nbytes"], "declared", arg["dtype"])
    for _name, array in getattr(live.ctx, "_outputs", {}).items():
        described = _describe_arg(array)
        if described["kind"] == "array":
            memory.add(described["ptr"], described["nbytes"], "declared", described["dtype"].removeprefix("torch."))
    memory.freeze()
    return memory


def eager_launch(record: dict[str, Any], captured: dict[str, Any]) -> dict[str, Any]:
    """The eager ctx.launch a kernel node came from, in the node's own form (diverge/launches.py): its
    arguments laid at the node's offsets (arrays as their pointers, NumPy scalars as their bytes); an
    argument whose bytes the eager side cannot name (a Python number) is taken as the captured one."""
    params = []
    for index, param in enumerate(captured.get("params") or []):
        arg = record["args"][index] if index < len(record["args"]) else None
        entry = dict(param)
        if arg is not None and arg["kind"] == "array":
            entry["hex"] = int(arg["ptr"]).to_bytes(8, "little").hex()
            entry.update(pointer=True, memory="declared")
        elif arg is not None and arg.get("hex") and len(arg["hex"]) == len(param["hex"]):
            entry["hex"] = arg["hex"]
            entry.pop("pointer", None)
        params.append(entry)

    def dim(value: list[int]) -> list[int]:
        return [*list(value), 1, 1, 1][:3]

    return {
        "name": captured.get("name"),
        "site": record["site"],
        "line": record.get("line"),
        "grid": dim(record["grid"]),
        "block": dim(record["block"]),
        "shared_mem": record["shared_mem"],
        "params": params,
        "param_info": captured.get("param_info", False),
    }


def attribute(live: Any, launches: list[dict[str, Any]]) -> str | None:
    """Give a torch graph's kernel launches the module and operator that launched them (one eager step
    under torch.profiler, aligned by kernel name as the DAG is: graph/launched_by.py); returns why not
    where the profiler failed. CuPy launches carry their ctx.launch site and line already."""
    if live.fw.name != "torch" or not launches:
        return None
    from graphscope.graph.launched_by import attach_launchers
    from graphscope.graph.model import DagNode

    profiled = live.operator_launches()
    if isinstance(profiled, str):
        return profiled
    nodes = [DagNode(index=i, type="kernel", name=str(launch.get("name", ""))) for i, launch in enumerate(launches)]
    attach_launchers(nodes, profiled)
    for node, launch in zip(nodes, launches):
        for key, field in (("module", "module"), ("op", "operator")):
            if node.detail.get(key):
                launch[field] = node.detail[key]
    return None

"""Kernel nodes' launches and the device memory they point into, read through cuda.bindings (workload
child only; imported lazily): what `graphscope diverge` compares, restores and poisons.

A node's arguments are cut at the offsets `cuFuncGetParamInfo` gives (CUDA 12.4+) and read from the
node's `kernelParams` array; an 8-byte argument that points into device memory is a pointer. Whose
memory it is comes from `MemoryMap`: the buffers the workload passed or declared, PyTorch's allocator
snapshot (the graph's own pool, other live blocks, free blocks), else `cuMemGetAddressRange`.
"""

from __future__ import annotations

import bisect
import ctypes
from dataclasses import dataclass
from typing import Any

import numpy as np

from graphscope.core.events import NODE_WORK
from graphscope.graph.names import readable

MAX_PARAMS = 1024
MAX_REGION = 256 << 20  # a pointer whose buffer is unknown is read up to the end of its allocation, capped
POINTER_FLOOR = 1 << 16  # below this an 8-byte value is a count, never a device address


def check(result: Any, what: str) -> tuple[Any, ...]:
    """A driver call's values, or RuntimeError naming the call and its error."""
    values = result if isinstance(result, tuple) else (result,)
    if int(values[0]) != 0:
        raise RuntimeError(f"{what} failed: {getattr(values[0], 'name', values[0])}")
    return tuple(values[1:])


def graph_nodes(driver: Any, graph_handle: int) -> list[tuple[Any, str]]:
    """(node handle, type name) of every node, in the order the driver lists them (capture order)."""
    graph = driver.CUgraph(init_value=graph_handle)
    (_, count) = check(driver.cuGraphGetNodes(graph, 0), "cuGraphGetNodes (count)")
    (nodes, count) = check(driver.cuGraphGetNodes(graph, count), "cuGraphGetNodes")
    found = []
    for handle in list(nodes)[:count]:
        (kind,) = check(driver.cuGraphNodeGetType(handle), "cuGraphNodeGetType")
        found.append((handle, kind.name.replace("CU_GRAPH_NODE_TYPE_", "").lower()))
    return found


def param_layout(driver: Any, func: Any) -> list[tuple[int, int]] | None:
    """(offset, size) of each parameter of `func`, or None where the driver cannot say."""
    layout: list[tuple[int, int]] = []
    for index in range(MAX_PARAMS):
        try:
            result = driver.cuFuncGetParamInfo(func, index)
        except Exception:  # an old binding: no such call
            return None
        if int(result[0]) != 0:
            return layout if index else None  # INVALID_VALUE past the last parameter
        layout.append((int(result[1]), int(result[2])))
    return layout


SWITCHABLE = tuple(kind.noun for kind in NODE_WORK)
"""Node types cuGraphNodeSetEnabled can disable (the driver's names are core.events' nouns of NODE_WORK):
the search's prefixes are over these, in capture order. Measured on the H100: a torch step's clone and
slice copies are memcpy nodes, and left enabled after a disabled prefix they wrote over the buffers being
compared."""


def _word(value: int, label: str, offset: int) -> dict[str, Any]:
    raw = (int(value) & (1 << 64) - 1).to_bytes(8, "little")
    return {"offset": offset, "size": 8, "hex": raw.hex(), "label": label}


def read_copy(driver: Any, handle: Any, kind: str, position: int, index: int) -> dict[str, Any]:
    """A memcpy or memset node as a launch (diverge/launches.py): its pointers and sizes as parameters."""
    from graphscope.graph.live import copy_direction

    node: dict[str, Any] = {"position": position, "node": index, "type": kind, "param_info": True}
    if kind == "memcpy":
        (p,) = check(driver.cuGraphMemcpyNodeGetParams(handle), "cuGraphMemcpyNodeGetParams")
        size = int(p.WidthInBytes) * max(int(p.Height), 1) * max(int(p.Depth), 1)
        source = int(p.srcDevice) + int(p.srcXInBytes)
        target = int(p.dstDevice) + int(p.dstXInBytes)
        node["name"] = f"memcpy {copy_direction(p, driver)}"
        node["params"] = [_word(source, "source", 0), _word(target, "destination", 8), _word(size, "bytes", 16)]
    else:
        (p,) = check(driver.cuGraphMemsetNodeGetParams(handle), "cuGraphMemsetNodeGetParams")
        size = int(p.width) * int(p.elementSize) * max(int(p.height), 1)
        node["name"] = "memset"
        node["params"] = [_word(int(p.dst), "destination", 0), _word(size, "bytes", 8)]
        node["params"].append(_word(int(p.value), "value", 16))
    return node


def read_launch(driver: Any, handle: Any, position: int, index: int) -> tuple[dict[str, Any], Any]:
    """One kernel node's launch as plain data (diverge/launches.py) and its driver params."""
    (params,) = check(driver.cuGraphKernelNodeGetParams(handle), "cuGraphKernelNodeGetParams")
    launch: dict[str, Any] = {
        "position": position,
        "node": index,
        "grid": [int(params.gridDimX), int(params.gridDimY), int(params.gridDimZ)],
        "block": [int(params.blockDimX), int(params.blockDimY), int(params.blockDimZ)],
        "shared_mem": int(params.sharedMemBytes),
        "params": [],
        "param_info": False,
    }
    try:
        (name,) = check(driver.cuFuncGetName(params.func), "cuFuncGetName")
        symbol = name.decode() if isinstance(name, bytes) else str(name)
        launch["name"], full = readable(symbol)
        launch["symbol"] = symbol
        if full:
            launch["full_name"] = full
    except Exception:
        launch["name"] = "kernel"
    layout = param_layout(driver, params.func)
    table = int(params.kernelParams or 0)
    if layout is not None and table:
        for offset, size in layout:
            slot = ctypes.c_void_p.from_address(table + 8 * len(launch["params"])).value
            raw = ctypes.string_at(slot, size) if slot else b""
            launch["params"].append({"offset": offset, "size": size, "hex": raw.hex()})
        launch["param_info"] = True
    return launch, params


@dataclass
class Region:
    """A span of device memory a pointer argument reaches: read, restored and poisoned as one."""

    start: int
    nbytes: int
    kind: str
    dtype: str | None = None


class MemoryMap:
    """Known buffers (start, end, kind, dtype), sorted, and the driver for what is not known."""

    def __init__(self, driver: Any) -> None:
        self.driver = driver
        self.spans: list[tuple[int, int, str, str | None]] = []
        self._starts: list[int] = []
        self._cache: dict[int, tuple[int, int] | None] = {}
        self.cuts: list[int] = []  # every pointer the graphs pass: a buffer ends where the next one starts

    def add(self, start: int, nbytes: int, kind: str, dtype: str | None = None) -> None:
        if start and nbytes > 0:
            self.spans.append((start, start + nbytes, kind, dtype))

    def freeze(self) -> None:
        """Sort; where spans overlap the smaller (more precise) one is found first."""
        self.spans.sort(key=lambda s: (s[0], s[1] - s[0]))
        self._starts = [s[0] for s in self.spans]

    def allocation(self, pointer: int) -> tuple[int, int] | None:
        """(base, size) of the driver allocation holding `pointer`, None when it is not device memory."""
        if pointer not in self._cache:
            try:
                result = self.driver.cuMemGetAddressRange(self.driver.CUdeviceptr(pointer))
                ok = int(result[0]) == 0
            except Exception:
                ok = False
            self._cache[pointer] = (int(result[1]), int(result[2])) if ok else None
        return self._cache[pointer]

    def region(self, pointer: int) -> Region | None:
        """The buffer `pointer` reaches: a known span holding it (the innermost), else its allocation up
        to the next known span; None when it is not device memory."""
        if pointer < POINTER_FLOOR or pointer >= 1 << 57:
            return None
        at = bisect.bisect_right(self._starts, pointer)
        best = None
        for start, end, kind, dtype in reversed(self.spans[max(0, at - 64) : at]):
            tighter = best is None or (end - start, kind != "declared") < (best[1] - best[0], best[2] != "declared")
            if start <= pointer < end and tighter:
                best = (start, end, kind, dtype)
        after = bisect.bisect_right(self.cuts, pointer)
        cut = self.cuts[after] if after < len(self.cuts) else 1 << 62
        if best is not None:
            end = best[1] if best[2] == "declared" else min(best[1], cut)  # a free or pool block holds many
            return Region(pointer, end - pointer, best[2], best[3] if pointer == best[0] else None)
        found = self.allocation(pointer)
        if found is None:
            return None
        base, size = found
        end = min(base + size, cut)
        if at < len(self._starts):
            end = min(end, max(self._starts[at], pointer + 1))
        return Region(pointer, min(end - pointer, MAX_REGION), "device")


MAX_SCAN = 4096  # bytes of one struct parameter searched for pointers


def pointer_values(launch: dict[str, Any], memory: MemoryMap) -> list[int]:
    """The values of a launch's parameters (and 8-byte words of its structs) that point into device memory."""
    found = []
    for param in launch["params"]:
        raw = bytes.fromhex(param["hex"])
        for at in range(0, min(len(raw), MAX_SCAN) - 7, 8):
            value = int.from_bytes(raw[at : at + 8], "little")
            if memory.region(value) is not None:
                found.append(value)
    return found


def mark_pointers(launch: dict[str, Any], memory: MemoryMap) -> list[tuple[Any, Region]]:
    """Flag each 8-byte parameter that points into device memory (`pointer`, `memory`), and in larger
    parameters (structs, cuBLASLt's 1,720-byte blob) each 8-byte-aligned word that does (`words`:
    [byte offset, memory kind]); returns (key, region) pairs, the key the parameter index or
    (index, byte offset) for a word inside a struct."""
    found: list[tuple[Any, Region]] = []
    for index, param in enumerate(launch["params"]):
        raw = bytes.fromhex(param["hex"])
        if len(raw) == 8:
            region = memory.region(int.from_bytes(raw, "little"))
            if region is not None:
                param["pointer"] = True
                param["memory"] = region.kind
                found.append((index, region))
            continue
        words = []
        for at in range(0, min(len(raw), MAX_SCAN) - 7, 8):
            region = memory.region(int.from_bytes(raw[at : at + 8], "little"))
            if region is not None:
                words.append([at, region.kind])
                found.append(((index, at), region))
        if words:
            param["words"] = words
    return found


class DeviceMemory:
    """Synchronous reads, writes and fills of raw device memory (the step's stream is drained first)."""

    def __init__(self, driver: Any, synchronize: Any) -> None:
        self.driver = driver
        self.synchronize = synchronize

    def read(self, region: Region) -> np.ndarray:
        host = np.empty(region.nbytes, dtype=np.uint8)
        check(self.driver.cuMemcpyDtoH(host.ctypes.data, region.start, region.nbytes), "cuMemcpyDtoH")
        return host

    def write(self, region: Region, host: np.ndarray) -> None:
        check(self.driver.cuMemcpyHtoD(region.start, host.ctypes.data, region.nbytes), "cuMemcpyHtoD")

    def poison(self, region: Region) -> None:
        """NaN where the buffer holds floats of a known width, zero bytes otherwise (zero is a safe index)."""
        d, start, size = self.driver, region.start, region.nbytes
        if region.dtype in ("float32", "float64") and start % 4 == 0 and size % 4 == 0:
            check(d.cuMemsetD32(start, 0x7FC00000 if region.dtype == "float32" else 0x7FF80000, size // 4), "memset")
        elif region.dtype in ("float16", "bfloat16") and start % 2 == 0 and size % 2 == 0:
            check(d.cuMemsetD16(start, 0x7E00 if region.dtype == "float16" else 0x7FC0, size // 2), "memset")
        else:
            check(d.cuMemsetD8(start, 0, size), "cuMemsetD8")

    def fence(self) -> None:
        """Everything issued so far is done (the legacy-stream memsets and the step's stream)."""
        self.synchronize()
        check(self.driver.cuCtxSynchronize(), "cuCtxSynchronize")

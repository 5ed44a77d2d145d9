"""A stand-in for cuda.bindings.driver over simulated device memory and graphs of Python kernels: enough
of the driver for workload/child/diverge_search.py to run its whole search on the CPU."""

from __future__ import annotations

import ctypes
import struct
from dataclasses import dataclass, field
from typing import Any

import numpy as np

OK = 0
BAD = 1
BASE = 0x7F00_0000_0000


class Err(int):
    @property
    def name(self) -> str:
        return "CUDA_SUCCESS" if self == 0 else "CUDA_ERROR_INVALID_VALUE"


class Handle:
    def __init__(self, init_value: int = 0) -> None:
        self.value = init_value

    def __int__(self) -> int:
        return self.value


class Kind:
    def __init__(self, name: str) -> None:
        self.name = name


@dataclass
class Func:
    """A kernel: its name, parameter sizes and what it does (reads and writes the memory by pointer)."""

    name: str
    sizes: list[int]
    body: Any  # body(memory, grid, block, values: list[int | float]) -> None

    def offsets(self) -> list[int]:
        found, at = [], 0
        for size in self.sizes:
            at = -(-at // size) * size
            found.append(at)
            at += size
        return found


@dataclass
class Node:
    func: Func | None
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    args: list[tuple[str, Any]]  # ("p", pointer) | ("i", int) | ("f", float) | ("b", bytes)
    buffers: list[Any] = field(default_factory=list)
    copy: tuple[int, int, int] | None = None  # a memcpy node: (source, destination, bytes)

    def params(self) -> Any:
        """A CUDA_KERNEL_NODE_PARAMS look-alike whose kernelParams is a real host array of pointers."""
        self.buffers = []
        for (kind, value), size in zip(self.args, self.func.sizes):
            raw = {"p": lambda v: struct.pack("<Q", v), "i": lambda v: struct.pack("<i", v),
                   "f": lambda v: struct.pack("<f", v), "b": lambda v: v}[kind](value)
            self.buffers.append(ctypes.create_string_buffer(raw, size))
        table = (ctypes.c_void_p * max(len(self.buffers), 1))(*[ctypes.addressof(b) for b in self.buffers])
        self.buffers.append(table)
        p = type("Params", (), {})()
        p.func, p.kernelParams, p.extra = self.func, ctypes.addressof(table), 0
        p.gridDimX, p.gridDimY, p.gridDimZ = self.grid
        p.blockDimX, p.blockDimY, p.blockDimZ = self.block
        p.sharedMemBytes = 0
        return p


class FakeDriver:
    """Device memory (allocations by address), graphs (lists of nodes), executable graphs (enabled flags)."""

    CUgraph = CUgraphExec = CUdeviceptr = Handle

    def __init__(self) -> None:
        self.allocations: dict[int, bytearray] = {}
        self.next = BASE
        self.graphs: dict[int, list[Node]] = {}
        self.enabled: dict[int, list[bool]] = {}
        self.calls = 0

    # -- simulation helpers ----------------------------------------------------------------------
    def malloc(self, nbytes: int) -> int:
        address = self.next
        self.allocations[address] = bytearray(nbytes)
        self.next += -(-nbytes // 4096) * 4096 + 4096
        return address

    def view(self, pointer: int, dtype: Any = np.float32) -> np.ndarray:
        for base, data in self.allocations.items():
            if base <= pointer < base + len(data):
                return np.frombuffer(data, dtype=np.uint8)[pointer - base :].view(dtype)
        raise ValueError(f"0x{pointer:x} is not device memory")

    def add_graph(self, nodes: list[Node]) -> int:
        handle = len(self.graphs) + 1
        self.graphs[handle] = nodes
        self.enabled[handle] = [True] * len(nodes)
        return handle

    def replay(self, handle: int) -> None:
        for node, on in zip(self.graphs[handle], self.enabled[handle]):
            if on and node.copy is not None:
                source, target, nbytes = node.copy
                self.view(target, np.uint8)[:nbytes] = self.view(source, np.uint8)[:nbytes]
            elif on and node.func is not None:
                values = [v for _, v in node.args]
                node.func.body(self, node.grid, node.block, values)

    # -- the driver calls diverge uses -----------------------------------------------------------
    def cuGraphGetNodes(self, graph: Handle, count: int) -> tuple[Err, list[Any], int]:
        nodes = self.graphs[int(graph)]
        return Err(OK), [(int(graph), i) for i in range(min(count, len(nodes)))], len(nodes)

    def cuGraphNodeGetType(self, handle: Any) -> tuple[Err, Kind]:
        graph, index = handle
        copy = self.graphs[graph][index].copy is not None
        return Err(OK), Kind("CU_GRAPH_NODE_TYPE_MEMCPY" if copy else "CU_GRAPH_NODE_TYPE_KERNEL")

    def cuGraphMemcpyNodeGetParams(self, handle: Any) -> tuple[Err, Any]:
        graph, index = handle
        source, target, nbytes = self.graphs[graph][index].copy  # type: ignore[misc]
        p = type("Memcpy3D", (), {})()
        p.srcDevice, p.dstDevice, p.srcXInBytes, p.dstXInBytes = source, target, 0, 0
        p.WidthInBytes, p.Height, p.Depth, p.srcMemoryType, p.dstMemoryType = nbytes, 1, 1, 2, 2
        return Err(OK), p

    def cuGraphKernelNodeGetParams(self, handle: Any) -> tuple[Err, Any]:
        graph, index = handle
        return Err(OK), self.graphs[graph][index].params()

    def cuFuncGetName(self, func: Func) -> tuple[Err, bytes]:
        return Err(OK), func.name.encode()

    def cuFuncGetParamInfo(self, func: Func, index: int) -> tuple[Err, int, int]:
        if index >= len(func.sizes):
            return Err(BAD), 0, 0
        return Err(OK), func.offsets()[index], func.sizes[index]

    def cuMemGetAddressRange(self, pointer: Handle) -> tuple[Err, int, int]:
        value = int(pointer)
        for base, data in self.allocations.items():
            if base <= value < base + len(data):
                return Err(OK), base, len(data)
        return Err(BAD), 0, 0

    def cuGraphNodeSetEnabled(self, exec_handle: Handle, node: Any, flag: int) -> tuple[Err]:
        graph, index = node
        self.enabled[graph][index] = bool(flag)
        self.calls += 1
        return (Err(OK),)

    def cuMemcpyDtoH(self, host: int, device: int, nbytes: int) -> tuple[Err]:
        ctypes.memmove(host, self.view(device, np.uint8).ctypes.data, nbytes)
        return (Err(OK),)

    def cuMemcpyHtoD(self, device: int, host: int, nbytes: int) -> tuple[Err]:
        ctypes.memmove(self.view(device, np.uint8).ctypes.data, host, nbytes)
        return (Err(OK),)

    def cuMemsetD8(self, device: int, value: int, count: int) -> tuple[Err]:
        self.view(device, np.uint8)[:count] = value
        return (Err(OK),)

    def cuMemsetD16(self, device: int, value: int, count: int) -> tuple[Err]:
        self.view(device, np.uint16)[:count] = value
        return (Err(OK),)

    def cuMemsetD32(self, device: int, value: int, count: int) -> tuple[Err]:
        self.view(device, np.uint32)[:count] = value
        return (Err(OK),)

    def cuCtxSynchronize(self) -> tuple[Err]:
        return (Err(OK),)

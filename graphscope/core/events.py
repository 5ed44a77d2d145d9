"""The event vocabulary every layer shares: activity kinds, API call kinds, graph-node ids, call keys and
the NVTX names graphscope's runner writes. Nothing else spells them.

    Activity (what a row of a GPU table, or a lane event, is)
      KERNEL  0  kernels          ┐
      MEMCPY  1  memcpy           ├ NODE_WORK: what a graph node executes (node trace mode)
      MEMSET  2  memset           ┘
      GRAPH   3  graph_launches   ┐ with NODE_WORK: GPU_WORK, what occupies a stream (whole-graph
                                  ┘   rows stand for their nodes in graph trace mode)
      SYNC    4  sync               with GPU_WORK: CORRELATED, what a CPU call can cause
      API     5  api                CPU side: CUDA runtime and driver calls
      NVTX    6  nvtx               CPU side: annotation ranges and marks
      GRAPH_BRACKET 7  -            a graph launch drawn as a bracket over its node work (no table)

The integer codes are what columnar tables store (`int8`), so they never change meaning between files.
"""

from __future__ import annotations

from enum import IntEnum
from typing import overload

import numpy as np


class Activity(IntEnum):
    """Kinds of events, with the `Trace` table each comes from (`table`) and its singular name (`noun`)."""

    KERNEL = 0
    MEMCPY = 1
    MEMSET = 2
    GRAPH = 3
    SYNC = 4
    API = 5
    NVTX = 6
    GRAPH_BRACKET = 7

    @property
    def table(self) -> str:
        """The attribute of `Trace` holding this kind's rows ('' for brackets, which have no table)."""
        return _TABLES[self]

    @property
    def noun(self) -> str:
        """Singular name in user-facing text and JSON ('kernel', 'memcpy', 'graph launch', ...)."""
        return _NOUNS[self]

    @classmethod
    def of_table(cls, table: str) -> Activity:
        return _BY_TABLE[table]


_TABLES = {
    Activity.KERNEL: "kernels",
    Activity.MEMCPY: "memcpy",
    Activity.MEMSET: "memset",
    Activity.GRAPH: "graph_launches",
    Activity.SYNC: "sync",
    Activity.API: "api",
    Activity.NVTX: "nvtx",
    Activity.GRAPH_BRACKET: "",
}
_NOUNS = {
    Activity.KERNEL: "kernel",
    Activity.MEMCPY: "memcpy",
    Activity.MEMSET: "memset",
    Activity.GRAPH: "graph launch",
    Activity.SYNC: "synchronization",
    Activity.API: "API call",
    Activity.NVTX: "NVTX range",
    Activity.GRAPH_BRACKET: "graph launch",
}
_BY_TABLE = {table: kind for kind, table in _TABLES.items() if table}

NODE_WORK = (Activity.KERNEL, Activity.MEMCPY, Activity.MEMSET)
"""What a graph node's GPU row can be; codes 0..2, so a node table's `kind` column indexes this tuple."""
GPU_WORK = (*NODE_WORK, Activity.GRAPH)
"""What occupies a GPU stream; codes 0..3, the `kind` column of the combined work table."""
CORRELATED = (*GPU_WORK, Activity.SYNC)
"""Every GPU table whose rows carry the correlation id of the CPU call that caused them."""


class ApiKind(IntEnum):
    """What a CPU-side CUDA call does, for colouring lanes and counting launches."""

    OTHER = 0
    KERNEL_LAUNCH = 1
    GRAPH_LAUNCH = 2
    SYNC = 3
    MEMCPY = 4
    MEMSET = 5
    GRAPH_BUILD = 6
    MEMORY = 7

    @property
    def label(self) -> str:
        return self.name.replace("_", " ").lower()


# -- graph-node ids ---------------------------------------------------------------------------------
# Nsight Systems records graphNodeId = graphId << 32 | node index (verified on the shipped H200 traces).

_NODE_BITS = 32
_NODE_MASK = (1 << _NODE_BITS) - 1


@overload
def node_id(graph: int, index: int) -> int: ...
@overload
def node_id(graph: np.ndarray, index: int | np.ndarray) -> np.ndarray: ...
@overload
def node_id(graph: int | np.ndarray, index: np.ndarray) -> np.ndarray: ...
def node_id(graph: int | np.ndarray, index: int | np.ndarray) -> int | np.ndarray:
    """The trace's graphNodeId of node `index` of graph `graph` (an int of ints, an array of any array)."""
    if isinstance(graph, np.ndarray) or isinstance(index, np.ndarray):
        return (np.asarray(graph, dtype=np.int64) << _NODE_BITS) | (np.asarray(index, dtype=np.int64) & _NODE_MASK)
    return (int(graph) << _NODE_BITS) | (int(index) & _NODE_MASK)


@overload
def graph_of(node: int) -> int: ...
@overload
def graph_of(node: np.ndarray) -> np.ndarray: ...
def graph_of(node: int | np.ndarray) -> int | np.ndarray:
    """The graph id a graphNodeId belongs to."""
    return node >> _NODE_BITS if isinstance(node, np.ndarray) else int(node) >> _NODE_BITS


@overload
def index_in_graph(node: int) -> int: ...
@overload
def index_in_graph(node: np.ndarray) -> np.ndarray: ...
def index_in_graph(node: int | np.ndarray) -> int | np.ndarray:
    """A graphNodeId's node index inside its graph (capture order)."""
    return node & _NODE_MASK if isinstance(node, np.ndarray) else int(node) & _NODE_MASK


def call_key(process: np.ndarray, correlation: np.ndarray) -> np.ndarray:
    """One int64 per (process, correlationId): how a CPU call and the GPU work it caused find each other.

    Correlation ids are 32-bit per process in CUPTI, so the pair packs without collisions."""
    return (process.astype(np.int64) << 32) | (correlation.astype(np.int64) & 0xFFFFFFFF)


def pair_key(first: np.ndarray, second: np.ndarray) -> np.ndarray:
    """A collision-free int64 per (first, second) pair of any int64 values (dense ranks of each)."""
    if not len(first):
        return np.empty(0, dtype=np.int64)
    _, a = np.unique(first, return_inverse=True)
    values_b, b = np.unique(second, return_inverse=True)
    return a.astype(np.int64) * len(values_b) + b.astype(np.int64)


# -- what graphscope's runner writes into the traces it records ----------------------------------------

MODES = ("eager", "graph")
"""The two ways graphscope runs a workload's step, in the order it runs them (eager gives the reference)."""

MEASURED_RANGE = "graphscope {mode} rep {rep}"
"""The NVTX range the runner puts around each measured repetition (`--nsys`)."""
WARMUP_RANGE = "graphscope {mode} warm-up"
"""The NVTX range around a mode's unmeasured warm-up steps."""
MEASURED_PATTERN = "graphscope * rep *"
"""The glob that finds every measured repetition of either mode."""


def measured_range(mode: str, rep: int) -> str:
    return MEASURED_RANGE.format(mode=mode, rep=rep)


def warmup_range(mode: str) -> str:
    return WARMUP_RANGE.format(mode=mode)


RANGE_DOMAINS: dict[str | None, int] = {"cpu_op": 1, "user_annotation": 2, "python_function": 3}
"""A PyTorch-profiler range's category, kept as its NVTX domain id (an Nsight export's ranges are domain 0):
the Kineto reader writes them, the attribution and the step shapes read operators and frames by them."""

COPY_DIRECTIONS = {  # CUPTI_ACTIVITY_MEMCPY_KIND values: what a copy's copyKind column holds
    0: "unknown",
    1: "HtoD",
    2: "DtoH",
    3: "HtoA",
    4: "AtoH",
    5: "AtoA",
    6: "AtoD",
    7: "DtoA",
    8: "DtoD",
    9: "HtoH",
    10: "PtoP",
    11: "UVM HtoD",
    12: "UVM DtoH",
    13: "UVM DtoD",
}


COMMUNICATION_MARKERS = ("nccl", "rccl", "allreduce", "all_reduce", "reducescatter", "allgather", "sendrecv")
"""Kernel names of collectives and point-to-point transfers (NCCL's ncclDevKernel_*, RCCL's, and the
collective names they carry), lower case: a GPU's communication, as against its computation."""


def is_communication(kernel_name: str) -> bool:
    """Does this kernel move data between GPUs (an NCCL/RCCL collective or send/receive)?"""
    lowered = kernel_name.lower()
    return any(marker in lowered for marker in COMMUNICATION_MARKERS)


# -- the calls that launch, and the calls that bracket a stream capture ---------------------------------
# docs/counting.md lists these names; tests/analysis/test_capture_and_blocked.py checks the list against them.

KERNEL_LAUNCH_PREFIXES = ("cudaLaunchKernel", "cuLaunchKernel")
"""CUDA kernel-launch calls: names starting so (the `Ex`, `_ptsz` and `_vNNNN` variants included)."""
HIP_KERNEL_LAUNCH_PREFIXES = (
    "hipLaunchKernel",
    "hipExtLaunchKernel",
    "hipModuleLaunchKernel",
    "hipExtModuleLaunchKernel",
)
"""HIP's kernel-launch calls (PyTorch-profiler traces from ROCm)."""
GRAPH_LAUNCH_PREFIXES = ("cudaGraphLaunch", "cuGraphLaunch", "hipGraphLaunch")
"""Graph-launch calls."""
CAPTURE_BEGIN_PREFIXES = ("cudaStreamBeginCapture", "cuStreamBeginCapture", "hipStreamBeginCapture")
"""Calls that start a stream capture (`...ToGraph` and `_v2` variants included)."""
CAPTURE_END_PREFIXES = ("cudaStreamEndCapture", "cuStreamEndCapture", "hipStreamEndCapture")
"""Calls that end one."""

CAPTURE_RANGE = "graphscope capture"
"""The NVTX range graphscope's runner puts around a graph's capture, instantiation and upload."""
CAPTURE_RANGES = (CAPTURE_RANGE, "capture")
"""NVTX ranges whose launch calls that ran no GPU work are capture: the runner's, and the seeds'
benchmark's `capture` (the bundled demo's)."""

"""Read and edit a live captured CUDA graph through cuda.bindings (imported lazily; child process only).

CuPy launches RawKernels through the driver API, so nodes are read with the driver calls
(`cuGraphKernelNodeGetParams`, `cuFuncGetName`) and edited on the instantiated graph with
`cuGraphExecKernelNodeSetParams`: no re-capture, no re-instantiation. The source graph is not
changed, so the effective configuration is tracked here. The same calls read a PyTorch graph
(`CUDAGraph.raw_cuda_graph()`), whose kernels are all library kernels. Verified on an H200 (see
docs/architecture.md, Talking to the GPU).
"""

from __future__ import annotations

import time
from typing import Any

from graphscope.core.events import node_id
from graphscope.core.launch_config import Dim, Site, block_problem
from graphscope.graph.edge_table import read_edges
from graphscope.graph.model import Dag, DagNode
from graphscope.graph.names import readable

NOT_TUNABLE = (
    "not tunable: a library kernel (cuBLAS, cuDNN, PyTorch, CuPy's own) whose code assumes the launch "
    "configuration it was built for; only ctx.launch sites are tuned"
)

CONDITION_KERNEL = "graphscope's condition kernel: it sets a conditional node's condition and counts its runs"

NOT_TUNABLE_TRITON = (
    "not tunable in place: a Triton kernel's block is compiled into it (num_warps and its BLOCK constexprs "
    "fix the threads per block and the tile each thread works on), so a new launch shape would run the "
    "same code on the wrong threads; tune it with triton.autotune configs instead"
)


_MEMORY = {1: "H", 2: "D", 3: "D", 4: "U"}  # CUmemorytype: host, device, array (on the device), unified


def copy_direction(params: Any, driver: Any = None) -> str:
    """'HtoD', 'DtoH', 'DtoD', 'HtoH' of a memcpy node's CUDA_MEMCPY3D; a unified (by-pointer) side is
    resolved through the pointer's memory type where the driver tells it, else stays 'U'."""

    def side(kind_field: str, pointer_field: str) -> str:
        kind = _MEMORY.get(int(getattr(params, kind_field, 0) or 0), "?")
        if kind == "U" and driver is not None:
            try:
                attribute = driver.CUpointer_attribute.CU_POINTER_ATTRIBUTE_MEMORY_TYPE
                err, found = driver.cuPointerGetAttribute(attribute, int(getattr(params, pointer_field)))
                kind = _MEMORY.get(int(found), "U") if int(err) == 0 else "U"
            except Exception:  # an old driver binding, or no such attribute: the direction stays unified
                kind = "U"
        return kind

    return f"{side('srcMemoryType', 'srcDevice')}to{side('dstMemoryType', 'dstDevice')}"


def _outside_bodies(sites: list[Site], conditionals: list[dict[str, Any]]) -> list[Site]:
    """The sites launched in the top-level graph: those inside conditional bodies are in body graphs."""
    inside = {i for record in conditionals for i in range(*record.get("sites", (0, 0)))}
    return [site for i, site in enumerate(sites) if i not in inside]


def _check(result: tuple[Any, ...], what: str) -> tuple[Any, ...]:
    error = result[0]
    if int(error) != 0:
        raise RuntimeError(f"{what} failed: {getattr(error, 'name', error)}")
    return result[1:]


class LiveGraph:
    """One captured graph, by its raw handles: its nodes in capture order, edges, and in-place edits."""

    def __init__(
        self, graph_handle: int, exec_handle: int, sites: list[Site], conditionals: list[dict[str, Any]] | None = None
    ) -> None:
        from cuda.bindings import driver, runtime

        self.driver, self.runtime = driver, runtime
        self.conditionals = conditionals or []  # what the workload built (workload/child/conditional.py LoopRecord)
        self.sites = sites
        self.exec_handle = exec_handle
        graph = driver.CUgraph(init_value=graph_handle)
        self.exec = driver.CUgraphExec(init_value=exec_handle)
        (nodes, _count) = _check(driver.cuGraphGetNodes(graph, 0), "cuGraphGetNodes (count)")
        count = _count
        (nodes, count) = _check(driver.cuGraphGetNodes(graph, count), "cuGraphGetNodes")
        self.handles = list(nodes)[:count]
        position = {int(h): i for i, h in enumerate(self.handles)}
        self.edges, self.edge_kinds = read_edges(driver, graph, position)  # with each edge's kind and ports
        self.graph_id = self._exec_id()
        self.params: dict[int, Any] = {}  # node index -> its kernel params (from the source graph)
        self.nodes = [self._describe(i, h) for i, h in enumerate(self.handles)]
        self.site_of = self._match_sites(_outside_bodies(sites, self.conditionals))
        self.effective: dict[int, tuple[Dim, Dim, int]] = {}  # node -> (block, grid, shared bytes) now in effect

    def _exec_id(self) -> int | None:
        result = self.runtime.cudaGraphExecGetId(self.runtime.cudaGraphExec_t(init_value=self.exec_handle))
        return int(result[1]) if int(result[0]) == 0 else None

    def _describe(self, index: int, handle: Any) -> DagNode:
        (kind,) = _check(self.driver.cuGraphNodeGetType(handle), "cuGraphNodeGetType")
        type_name = kind.name.replace("CU_GRAPH_NODE_TYPE_", "").lower()
        node = DagNode(index=index, type=type_name, name=type_name)
        if self.graph_id is not None:
            node.trace_id = node_id(self.graph_id, index)
        if type_name == "kernel":
            (params,) = _check(self.driver.cuGraphKernelNodeGetParams(handle), "cuGraphKernelNodeGetParams")
            self.params[index] = params
            node.grid = (params.gridDimX, params.gridDimY, params.gridDimZ)
            node.block = (params.blockDimX, params.blockDimY, params.blockDimZ)
            node.shared_mem = int(params.sharedMemBytes)
            (name,) = _check(self.driver.cuFuncGetName(params.func), "cuFuncGetName")
            symbol = name.decode() if isinstance(name, bytes) else str(name)
            node.name, full = readable(symbol)
            if full is not None:  # a C++ kernel: its whole signature and symbol stay in the detail
                node.detail.update(full_name=full, symbol=symbol)
        elif type_name == "memset":
            (params,) = _check(self.driver.cuGraphMemsetNodeGetParams(handle), "cuGraphMemsetNodeGetParams")
            node.detail = {
                "bytes": int(params.width) * int(params.elementSize) * max(int(params.height), 1),
                "value": int(params.value),
            }
        elif type_name == "memcpy":
            (params,) = _check(self.driver.cuGraphMemcpyNodeGetParams(handle), "cuGraphMemcpyNodeGetParams")
            node.detail = {
                "bytes": int(params.WidthInBytes) * max(int(params.Height), 1) * max(int(params.Depth), 1),
                "direction": copy_direction(params, self.driver),
            }
            node.name = f"memcpy {node.detail['direction']}"
        elif type_name == "conditional":  # its type and body graphs (graph/conditional.py)
            from graphscope.graph.conditional import describe

            describe(self, node, handle, self.conditionals)
        return node

    def body_dag(self, graph: Any, record: dict[str, Any] | None, index: int) -> Dag:
        """A conditional node's body graph, read as this graph is (graph/conditional.py asks); its kernels
        named by the sites the workload launched in that body (`record`: what it recorded, if anything)."""
        own = self.body_sites(record, index) if record is not None else []
        return BodyGraph(self.driver, self.runtime, int(graph), self.conditionals, self.sites, own).dag()

    def body_sites(self, record: dict[str, Any], index: int) -> list[Site]:
        """The ctx.launch sites of one body of a conditional construct, those of conditionals nested in it
        left out (they belong to the nested bodies)."""
        ranges = record.get("body_sites") or [record.get("sites", (0, 0))]
        start, end = ranges[index] if index < len(ranges) else (0, 0)
        nested = {
            i
            for other in self.conditionals
            if other is not record and start <= other["sites"][0] and other["sites"][1] <= end
            for i in range(*other["sites"])
        }
        return [self.sites[i] for i in range(start, end) if i not in nested]

    def _match_sites(self, sites: list[Site]) -> dict[int, Site]:
        """Kernel nodes are in capture order, as are the recorded sites: pair them by kernel name."""
        matched, queue = {}, list(sites)
        for node in self.nodes:
            if node.type == "kernel" and queue and node.detail.get("symbol", node.name) == queue[0].kernel:
                site = queue.pop(0)
                matched[node.index] = site
                node.site = site.key
        return matched

    def dag(self, triton: frozenset[str] = frozenset()) -> Dag:
        """The graph as plain data; kernels named in `triton` (the workload's @triton.jit functions) or
        named as Inductor names its kernels ('triton_...') are user kernels that are still not tunable."""
        notes = []
        for node in self.nodes:  # graphscope's own condition kernels (workload/child/conditional.py)
            if node.type == "kernel" and node.name.startswith("graphscope_"):
                node.detail["tunable"] = CONDITION_KERNEL
        kernels = [n for n in self.nodes if n.type == "kernel" and not n.name.startswith("graphscope_")]
        unmatched = [n for n in kernels if n.site is None]
        user = [n for n in unmatched if n.name in triton or n.name.startswith("triton_")]
        for node in unmatched:
            node.detail["tunable"] = NOT_TUNABLE
        for node in user:
            node.detail.update(kernel="Triton", tunable=NOT_TUNABLE_TRITON)
        if user:
            notes.append(f"{len(user)} kernel nodes are Triton kernels: {NOT_TUNABLE_TRITON}")
        if len(unmatched) > len(user):
            notes.append(
                f"{len(unmatched) - len(user)} kernel nodes are library kernels, not ctx.launch sites: {NOT_TUNABLE}"
            )
        for index, (block, grid, shared) in self.effective.items():
            self.nodes[index].block, self.nodes[index].grid = block, grid
            self.nodes[index].shared_mem = shared
        return Dag(self.nodes, self.edges, "live", True, self.graph_id, notes, self.edge_kinds)

    def apply(self, changes: dict[int, tuple[Dim, Dim, int]]) -> dict[str, Any]:
        """Set (block, grid, dynamic shared memory) of kernel nodes on the instantiated graph; returns
        what was done and its cost. Configurations beyond the kernel's limits are rejected, not applied.
        """
        rejected, applied = {}, 0
        started = time.perf_counter_ns()
        for index, (block, grid, shared) in changes.items():
            site = self.site_of.get(index)
            if site is None:
                rejected[str(index)] = "not a ctx.launch site"
                continue
            reason = block_problem(block, site.max_threads, shared, site.max_shared)
            if reason:
                rejected[site.key] = reason
                continue
            params = self.params[index]
            params.blockDimX, params.blockDimY, params.blockDimZ = block
            params.gridDimX, params.gridDimY, params.gridDimZ = grid
            params.sharedMemBytes = shared
            try:  # the driver refuses what it cannot run (too much shared memory, say): the node stays as it was
                _check(
                    self.driver.cuGraphExecKernelNodeSetParams(self.exec, self.handles[index], params),
                    "cuGraphExecKernelNodeSetParams",
                )
            except RuntimeError as exc:
                rejected[site.key] = str(exc)
                continue
            self.effective[index] = (block, grid, shared)
            applied += 1
        return {"applied": applied, "rejected": rejected, "apply_ns": time.perf_counter_ns() - started}

    def time_alone(self, index: int, shape: tuple[Dim, Dim, int], stream: int, reps: int, warmup: int) -> list[float]:
        """Node `index` with (block, grid, shared bytes) `shape`, timed alone (graph/alone.py): per-launch ns."""
        from graphscope.graph.alone import time_alone

        params = self.params[index]
        fields = ("blockDimX", "blockDimY", "blockDimZ", "gridDimX", "gridDimY", "gridDimZ", "sharedMemBytes")
        kept = [getattr(params, f) for f in fields]
        block, grid, shared = shape
        for name, value in zip(fields, (*block, *grid, shared)):
            setattr(params, name, value)
        try:
            return time_alone(self.driver, params, stream, reps, warmup)
        finally:
            for name, value in zip(fields, kept):
                setattr(params, name, value)


class BodyGraph(LiveGraph):
    """A conditional node's body graph: its nodes and edges read like the top-level graph's (nested
    conditionals included); its kernels are named with their sites but not edited in place."""

    def __init__(
        self,
        driver: Any,
        runtime: Any,
        graph_handle: int,
        conditionals: list[dict[str, Any]],
        sites: list[Site],
        own: list[Site],
    ) -> None:
        self.driver, self.runtime = driver, runtime
        self.conditionals, self.sites = conditionals, sites  # every site of the step (nested bodies look there)
        self.graph_id = None
        self.params = {}
        graph = driver.CUgraph(init_value=graph_handle)
        (_, count) = _check(driver.cuGraphGetNodes(graph, 0), "cuGraphGetNodes (count)")
        (nodes, count) = _check(driver.cuGraphGetNodes(graph, count), "cuGraphGetNodes")
        self.handles = list(nodes)[:count]
        position = {int(h): i for i, h in enumerate(self.handles)}
        (_, _, _, edge_count) = _check(driver.cuGraphGetEdges(graph, 0), "cuGraphGetEdges (count)")
        sources, targets, _data, edge_count = _check(driver.cuGraphGetEdges(graph, edge_count), "cuGraphGetEdges")
        self.edges = [(position[int(a)], position[int(b)]) for a, b in zip(sources[:edge_count], targets[:edge_count])]
        self.nodes = [self._describe(i, h) for i, h in enumerate(self.handles)]
        self.site_of = self._match_sites(own)
        self.effective = {}

    def dag(self, triton: frozenset[str] = frozenset()) -> Dag:
        for node in self.nodes:
            if node.type == "kernel":
                own = node.name.startswith("graphscope_")
                node.detail["tunable"] = CONDITION_KERNEL if own else NOT_TUNABLE_IN_BODY if node.site else NOT_TUNABLE
        notes = [BODY_SITES] if self.site_of else []
        return Dag(self.nodes, self.edges, "live", True, None, notes)


BODY_SITES = (
    "its launch sites are not tuned in place: their nodes are in a conditional node's body graph (a re-capture "
    "with new block sizes changes them)"
)
NOT_TUNABLE_IN_BODY = (
    "not tuned in place: a kernel inside a conditional node's body graph (a re-capture with the new block "
    "sizes changes it)"
)

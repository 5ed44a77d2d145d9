"""The search itself (workload child): prefixes of the graph under test (G) and of a fresh capture (R)
replayed from one restored, poisoned start; see workload/child/diverge_gpu.py for why each step is there."""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from graphscope.diverge.bisect import first_divergence, inputs_among
from graphscope.diverge.launches import differences
from graphscope.workload.child.diverge_gpu import MAX_SNAPSHOT, Graph, build_memory, eager_launch, record_eager
from graphscope.workload.child.graph_memory import DeviceMemory, Region

ATTEMPT_NOTE = (
    "a fresh capture taken now does not give the eager outputs either: the step computes differently "
    "whenever it is captured (it reads torch.cuda.is_current_stream_capturing, works outside ctx.stream, "
    "or depends on host state the capture changes), so the node found is where G departs from a fresh "
    "capture, not from eager"
)


class Trials:
    """Regions, the start-of-step copy, the poison set and the prefix trials over two graphs."""

    def __init__(self, live: Any, graphs: tuple[Graph, Graph], device: DeviceMemory) -> None:
        self.live, self.device = live, device
        self.g, self.r = graphs
        self.regions: list[Region] = []
        index: dict[tuple[int, int], int] = {}
        self.reach: dict[str, list[list[tuple[int, int]]]] = {}  # graph -> per node: (arg, region id)
        for label, graph in (("g", self.g), ("r", self.r)):
            per_node = []
            for found in graph.regions:
                ids = []
                for arg, region in found:
                    key = (region.start, region.nbytes)
                    if key not in index:
                        index[key] = len(self.regions)
                        self.regions.append(region)
                    ids.append((arg, index[key]))
                per_node.append(ids)
            self.reach[label] = per_node
        total = sum(r.nbytes for r in self.regions)
        if total > MAX_SNAPSHOT:
            raise RuntimeError(f"the buffers the graph reaches hold {total / 2**30:.1f} GiB: too many to copy")
        device.fence()
        self.start = [device.read(region) for region in self.regions]
        self.poisoned: list[int] = []
        self.noisy: set[int] = set()
        self.replays = 0
        self.baseline: dict[str, Any] = {}  # R's outputs from the restored start, nothing poisoned

    def restore(self, poison: list[int]) -> None:
        for region, copy in zip(self.regions, self.start):
            self.device.write(region, copy)
        for index in poison:
            self.device.poison(self.regions[index])
        self.device.fence()

    def replay(self, graph: Graph, last: int) -> None:
        graph.prefix(last)
        self.live.fw.launch(graph.obj)
        self.device.fence()
        self.replays += 1

    def outputs_move(self, group: list[int]) -> bool:
        """Does poisoning `group` change R's outputs (from the restored start)?"""
        from graphscope.workload.child.live import compare_outputs

        self.restore(group)
        self.replay(self.r, len(self.r.kernels) - 1)
        found = compare_outputs(self.baseline, self.live.fw.snapshot(), self.live.dtypes)
        return found.get("exact") is not True

    def state_after(self, graph: Graph, last: int) -> dict[int, np.ndarray]:
        """The regions either graph's prefix 0..last reaches, read after replaying `graph`'s prefix from the
        poisoned start (both graphs' regions: where eager writes, the graph may not, and the other way)."""
        self.restore(self.poisoned)
        self.replay(graph, last)
        wanted = {rid for label in ("g", "r") for ids in self.reach[label][: last + 1] for _, rid in ids}
        return {rid: self.device.read(self.regions[rid]) for rid in sorted(wanted)}

    def same(self, a: np.ndarray, b: np.ndarray, noisy: bool) -> bool:
        if noisy:
            size = min(a.size, b.size)
            return _close(a[:size], b[:size])
        return a.size == b.size and bool(np.array_equal(a, b))

    def differing(self, last: int) -> list[dict[str, Any]]:
        """Arguments of nodes 0..last whose buffers differ between G and R after the prefix, first first:
        the buffer each graph's argument reaches, then (when the two point apart) eager's buffer in both
        states (the graph left it unwritten) and the graph's (it wrote where eager does not)."""
        mine, theirs = self.state_after(self.g, last), self.state_after(self.r, last)
        found = []
        for position in range(min(last + 1, len(self.reach["g"]), len(self.reach["r"]))):
            pairs = dict(self.reach["r"][position])
            for arg, rid in self.reach["g"][position]:
                other = pairs.get(arg)
                if other is None:
                    continue
                noisy = other in self.noisy or rid in self.noisy
                checks = [(mine[rid], theirs[other], "")]
                if rid != other:
                    checks.append((mine[other], theirs[other], "eager's buffer, as each left it"))
                    checks.append((mine[rid], theirs[rid], "the graph's buffer, as each left it"))
                for a, b, which in checks:
                    if not self.same(a, b, noisy):
                        entry = _report(position, arg, a, b, self.regions[other])
                        if which:
                            entry["which"] = which
                        found.append(entry)
                        break
        return found


def _close(a: np.ndarray, b: np.ndarray) -> bool:
    """Buffers that differ from run to run of the same graph (atomics) compared as float32 within 1e-3."""
    if a.size % 4:
        return True
    x, y = a.view(np.float32), b.view(np.float32)
    return bool(np.allclose(x, y, rtol=1e-3, atol=1e-5, equal_nan=True))


def _report(position: int, arg: Any, a: np.ndarray, b: np.ndarray, region: Region) -> dict[str, Any]:
    size = min(a.size, b.size)
    unequal = np.flatnonzero(a[:size] != b[:size])
    shown = arg if isinstance(arg, int) else f"{arg[0]} (the pointer at byte {arg[1]} of it)"
    entry: dict[str, Any] = {"position": position, "arg": shown, "bytes": int(size)}
    entry["differing_bytes"] = int(unequal.size)
    if a.size != b.size:
        entry["sizes"] = [int(a.size), int(b.size)]
    if unequal.size:
        entry["first_byte"] = int(unequal[0])
    dtype = np.dtype(region.dtype) if region.dtype in ("float32", "float64", "int32", "int64") else None
    if dtype is not None and size % dtype.itemsize == 0 and unequal.size:
        first = int(unequal[0]) // dtype.itemsize
        entry["first_element"] = first
        entry["values"] = [float(a[: size].view(dtype)[first]), float(b[:size].view(dtype)[first])]
    return entry


def diverge(live: Any, driver: Any = None) -> dict[str, Any]:
    """Find the first kernel node of the workload's graph whose buffers differ from eager's (module doc).
    `driver`: cuda.bindings.driver, or a stand-in that simulates it (tests)."""
    from graphscope.workload.child.live import compare_outputs

    if driver is None:
        from cuda.bindings import driver as cuda_driver

        driver = cuda_driver

    started = time.perf_counter()
    fw = live.fw
    eager = record_eager(live)
    if live.graph is None:  # as `run` has it: eager steps first, then one capture
        live.capture_graph()
    live.reset_state()
    fw.launch(live.graph)
    fw.synchronize()
    outputs = compare_outputs(live.reference, fw.snapshot(), live.dtypes)
    result: dict[str, Any] = {"outputs": outputs, "framework": fw.name, "eager_launches": eager}
    live.reset_state()  # the state an eager step starts from: the fresh capture bakes what eager uses now
    reference = fw.capture(live.step)
    fw.instantiate(reference)
    g, r = Graph(driver, fw.handles(live.graph), live.graph), Graph(driver, fw.handles(reference), reference)
    memory = build_memory(live, driver, eager, [getattr(fw, "pool", None)])
    memory.cuts = sorted({*g.pointers(memory), *r.pointers(memory)})
    g.locate(memory)
    r.locate(memory)
    trials = Trials(live, (g, r), DeviceMemory(driver, fw.synchronize))
    try:
        result.update(_search(live, trials, g, r, eager, outputs.get("match")))
    finally:
        g.prefix(len(g.kernels) - 1)
        r.prefix(len(r.kernels) - 1)
        trials.restore([])
    result["seconds"] = time.perf_counter() - started
    return result


def _search(
    live: Any, trials: Trials, g: Graph, r: Graph, eager: list[dict[str, Any]], plain_match: bool | None
) -> dict[str, Any]:
    """Inputs found, then the poisoned whole-graph trial, then the bisection; the node's two launches."""
    from graphscope.workload.child.live import compare_outputs

    found: dict[str, Any] = {"nodes": len(g.kernels), "reference_nodes": len(r.kernels), "regions": len(trials.regions)}
    found["plain_match"] = plain_match
    trials.restore([])
    trials.replay(r, len(r.kernels) - 1)
    trials.baseline = live.fw.snapshot()
    check = compare_outputs(live.reference, trials.baseline, live.dtypes)
    found["reference_matches_eager"] = check.get("match") is True
    if not found["reference_matches_eager"]:
        found["note"] = ATTEMPT_NOTE
    first_run = {i: trials.device.read(trials.regions[i]) for i in range(len(trials.regions))}
    trials.restore([])
    trials.replay(r, len(r.kernels) - 1)
    trials.noisy = {i for i, a in first_run.items() if not np.array_equal(a, trials.device.read(trials.regions[i]))}
    found["noisy_regions"] = len(trials.noisy)
    inputs = inputs_among(len(trials.regions), trials.outputs_move)
    trials.poisoned = [i for i in range(len(trials.regions)) if i not in set(inputs)]
    found["inputs"] = len(inputs)
    found["classify_replays"] = trials.replays
    names_g, names_r = [x.get("name") for x in g.launches], [x.get("name") for x in r.launches]
    count = min(len(names_g), len(names_r))
    structural = next((i for i in range(count) if names_g[i] != names_r[i]), None)
    if structural is None and len(names_g) != len(names_r):
        structural = count
    searched = structural if structural is not None else count
    details: dict[int, list[dict[str, Any]]] = {}

    def differs(last: int) -> bool:
        details[last] = trials.differing(last)
        return bool(details[last])

    before = trials.replays
    trials.restore(trials.poisoned)
    trials.replay(g, len(g.kernels) - 1)
    found["poisoned_outputs"] = compare_outputs(live.reference, live.fw.snapshot(), live.dtypes)
    whole = differs(searched - 1) if searched else False
    found["hidden"] = bool(whole and plain_match is True)
    search = first_divergence(searched, differs, full_differs=whole)
    if searched:
        search.trials.insert(0, (searched - 1, whole))
    found["search_replays"] = trials.replays - before
    attach_sites(g.launches, eager)
    attach_sites(r.launches, eager)
    found["graph_launches"], found["reference_launches"] = g.launches, r.launches
    found["trials"] = search.trials
    node = search.node
    if node is None and structural is not None:
        node = structural
        found["structural"] = True
    if node is None:
        found["note"] = found.get("note") or (
            "the graph's buffers match a fresh capture's after every kernel node (buffers poisoned between "
            "trials)" + (
                ", yet its outputs differ: the difference comes from a copy or memset node, or from memory no "
                "kernel argument points at" if found.get("plain_match") is False else ": nothing to search"
            )
        )
        return found
    found["position"] = node
    captured = g.launches[node] if node < len(g.launches) else None
    ref = r.launches[node] if node < len(r.launches) else None
    found["captured"], found["reference"] = captured, ref
    found["differences"] = differences(captured, ref) if captured and ref else []
    if captured and captured.get("eager"):  # a ctx.launch site: the eager launch itself, as Python made it
        found["eager"] = eager_launch(captured["eager"], captured)
        found["eager_differences"] = differences(captured, found["eager"])
    found["buffers"] = [d for d in details.get(node, []) if d["position"] == node]
    return found


def attach_sites(launches: list[dict[str, Any]], eager: list[dict[str, Any]]) -> None:
    """Give kernel nodes the ctx.launch site and workload line of the eager launch they came from, pairing
    both sequences in order by kernel name (non-ctx kernels in between are skipped)."""
    queue = list(eager)
    for launch in launches:
        if queue and queue[0]["site"].split("#")[0] and launch.get("name") == queue[0].get("kernel"):
            record = queue.pop(0)
            launch["site"], launch["line"], launch["eager"] = record["site"], record["line"], record

"""The frozen-at-capture audit in the workload child: the graph under test and a fresh capture after the
workload's reset, read node by node and diffed (diverge/audit.py); each node timed alone for the share of
GPU time audited. A CuPy workload's ctx.launch nodes are also diffed against the eager launch."""

from __future__ import annotations

from typing import Any

from graphscope.diverge.audit import audit_launches, audit_sizes
from graphscope.diverge.launches import difference_text, differences
from graphscope.workload.child.diverge_gpu import Graph, build_memory, eager_launch, record_eager
from graphscope.workload.child.diverge_search import attach_sites


def audit_graph(live: Any, driver: Any = None, time_nodes: bool = True) -> dict[str, Any]:
    """Capture the step at a second state and diff every kernel node against the graph under test."""
    if driver is None:
        from cuda.bindings import driver as cuda_driver

        driver = cuda_driver
    fw = live.fw
    eager = record_eager(live)
    if live.graph is None:
        live.capture_graph()
    live.reset_state()
    second = fw.capture(live.step)
    fw.instantiate(second)
    live.reset_state()
    third = fw.capture(live.step)  # the same state again: bytes that differ from `second` are noise
    fw.instantiate(third)
    g, other = Graph(driver, fw.handles(live.graph), live.graph), Graph(driver, fw.handles(second), second)
    control = Graph(driver, fw.handles(third), third)
    memory = build_memory(live, driver, eager, [getattr(fw, "pool", None)])
    memory.cuts = sorted({*g.pointers(memory), *other.pointers(memory)})
    g.locate(memory)
    other.locate(memory)
    attach_sites(g.launches, eager)
    attach_sites(other.launches, eager)
    times = g.times(fw) if time_nodes else None
    result = audit_launches(g.launches, other.launches, times, fw.name == "torch", control.launches)
    for entry, launch in zip(result["nodes"], g.launches):
        if launch.get("eager") and entry["auditable"]:  # what eager passes now, beside what was captured
            for diff in differences(launch, eager_launch(launch["eager"], launch)):
                text = difference_text(diff)
                if not any(f["text"] == text for f in entry["flags"]):
                    entry["flags"].append({"flag": "frozen_" + ("grid" if diff["what"] not in ("pointer", "scalar")
                                                                 else diff["what"]), "text": text})
    result["flagged"] = [n["position"] for n in result["nodes"] if n["flags"]]
    result["launches"] = g.launches
    if len(live.sizes) >= 2:
        try:
            result["sizes"] = audit_at_sizes(live, driver)
        except Exception as exc:  # the state audit above stands without it
            result["sizes"] = {"error": f"{type(exc).__name__}: {exc}".splitlines()[0]}
    return result


def audit_at_sizes(live: Any, driver: Any = None) -> dict[str, Any] | None:
    """A SIZES workload captured at its smallest and largest size and diffed (diverge/audit.py: audit_sizes);
    None without two sizes. The workload is built at its largest size again afterwards."""
    if len(live.sizes) < 2:
        return None
    if driver is None:
        from cuda.bindings import driver as cuda_driver

        driver = cuda_driver
    from graphscope.workload.child.sizes import build_step

    fw = live.fw
    sizes = (min(live.sizes), max(live.sizes))
    graphs, steps = [], []
    for size in sizes:
        step = build_step(live, size)
        live.reset_state()
        graph = fw.capture(step)
        fw.instantiate(graph)
        graphs.append(Graph(driver, fw.handles(graph), graph))
        steps.append(step)  # a torch step's tensors die with it, and its graph reads them
    eager = record_eager(live)  # built at the largest size: the step in use again
    memory = build_memory(live, driver, eager, [getattr(fw, "pool", None)])
    memory.cuts = sorted({*graphs[0].pointers(memory), *graphs[1].pointers(memory)})
    for graph in graphs:
        graph.locate(memory)
        attach_sites(graph.launches, eager)
    return audit_sizes(graphs[0].launches, graphs[1].launches, sizes)

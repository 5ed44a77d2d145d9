"""The whole divergence search (workload/child/diverge_search.py) on a simulated driver: graphs of Python
kernels over simulated device memory, with faults seeded as the GPU benchmark seeds them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest

from graphscope.text.diverge import render_search
from graphscope.workload.child.diverge_search import diverge
from tests.diverge.fake_driver import FakeDriver, Func, Node

N, BLOCK, STAGES = 1024, 128, 6


def affine(drv: FakeDriver, grid: Any, block: Any, values: list[Any]) -> None:
    x, bias, y, gain, n = values
    count = min(n, grid[0] * block[0])
    out = drv.view(y)
    out[:count] = gain * drv.view(x)[:count] + drv.view(bias)[:count]


AFFINE = Func("affine", [8, 8, 8, 4, 4], affine)


@dataclass
class Captured:
    handle: int


class Sim:
    """A workload, its framework and its graphs: stage s computes buf[s] = gain[s] * buf[s-1] + bias[s]."""

    name = "sim"

    def __init__(self, drv: FakeDriver) -> None:
        self.drv = drv
        self.x = drv.malloc(4 * N)
        drv.view(self.x)[:N] = np.linspace(-1, 1, N, dtype=np.float32)
        self.bufs = [drv.malloc(4 * N) for _ in range(STAGES)]
        self.biases = [drv.malloc(4 * N) for _ in range(STAGES)]
        for s, b in enumerate(self.biases):
            drv.view(b)[:N] = (s + 1) * 0.01
        self.gains = [1.0 + 0.1 * s for s in range(STAGES)]
        self.rows = [N] * STAGES
        self.copied: int | None = None  # with a copy: stage 2's output copied here, stage 3 reads the copy
        self.copy_bytes = 4 * N

    # the framework's part
    def capture(self, step: Any) -> Captured:
        nodes, src = [], self.x
        for s in range(STAGES):
            grid = (-(-self.rows[s] // BLOCK), 1, 1)
            args = [("p", src), ("p", self.biases[s]), ("p", self.bufs[s]), ("f", self.gains[s]), ("i", N)]
            nodes.append(Node(AFFINE, grid, (BLOCK, 1, 1), args))
            src = self.bufs[s]
            if s == 2 and self.copied is not None:
                nodes.append(Node(None, (1, 1, 1), (1, 1, 1), [], copy=(src, self.copied, self.copy_bytes)))
                src = self.copied
        return Captured(self.drv.add_graph(nodes))

    def instantiate(self, graph: Captured) -> None:
        pass

    def launch(self, graph: Captured) -> None:
        self.drv.replay(graph.handle)

    def handles(self, graph: Captured) -> tuple[int, int]:
        return graph.handle, graph.handle

    def synchronize(self) -> None:
        pass

    def snapshot(self) -> dict[str, np.ndarray]:
        return {"y": self.drv.view(self.bufs[-1])[:N].copy()}


class Live:
    """The LiveWorkload surface diverge uses; `eager()` runs the step as eager would (a fresh graph)."""

    def __init__(self, sim: Sim) -> None:
        self.fw = sim
        self.ctx = type("Ctx", (), {"_outputs": {}})()
        self.path, self.step, self.graph, self.sizes = "sim.py", None, None, []
        self.dtypes = {"y": "float32"}
        self.fw.launch(self.fw.capture(None))
        self.reference = self.fw.snapshot()

    def reset_state(self) -> None:
        pass

    def capture_graph(self) -> None:
        self.graph = self.fw.capture(None)


def faulty(kind: str, stage: int) -> tuple[Live, FakeDriver]:
    """The graph under test captured with one stage's launch frozen wrong, then the state put right."""
    drv = FakeDriver()
    sim = Sim(drv)
    live = Live(sim)
    saved = (list(sim.gains), list(sim.rows), list(sim.biases), list(sim.bufs))
    if kind == "scalar":
        sim.gains[stage] = 7.0
    elif kind == "grid":
        sim.rows[stage] = BLOCK
    elif kind == "stale":
        old = drv.malloc(4 * N)  # the captured bias, zeroed since (its memory reused)
        sim.biases[stage] = old
    elif kind == "output":  # eager writes a fresh buffer each step; the graph keeps writing the old one
        sim.bufs[stage] = drv.malloc(4 * N)
    live.capture_graph()
    sim.gains, sim.rows, sim.biases, sim.bufs = saved
    return live, drv


@pytest.mark.parametrize("kind", ["scalar", "grid", "stale"])
@pytest.mark.parametrize("stage", [0, 2, 5])
def test_the_search_names_the_stage_whose_launch_was_frozen(kind: str, stage: int) -> None:
    live, drv = faulty(kind, stage)
    result = diverge(live, drv)
    # a frozen grid leaves the rest of its buffer as eager left it: the plain replay matches
    assert result["outputs"]["match"] is (kind == "grid")
    assert result["hidden"] is (kind == "grid")
    assert result["poisoned_outputs"]["match"] is False
    assert result["position"] == stage
    assert result["reference_matches_eager"] is True
    what = {d["what"] for d in result["differences"]}
    assert what == {"scalar": {"scalar"}, "grid": {"grid"}, "stale": {"pointer"}}[kind]
    assert result["buffers"] and result["buffers"][0]["position"] == stage
    # about log2(N) + 1 prefix trials, two replays (graph under test and reference) each
    assert len(result["trials"]) <= 4
    assert result["search_replays"] == 2 * len(result["trials"]) + 1  # and one poisoned whole replay


def test_a_graph_that_matches_is_not_searched() -> None:
    drv = FakeDriver()
    live = Live(Sim(drv))
    live.capture_graph()
    result = diverge(live, drv)
    assert result["outputs"]["match"] is True
    assert result["poisoned_outputs"]["match"] is True
    assert "position" not in result
    assert "nothing to search" in result["note"]


def test_disabled_nodes_leave_no_stale_answer_behind() -> None:
    """The frozen grid writes a quarter of the buffer: without poisoning between trials the rest would
    still hold the reference's values and the search would pass the node by."""
    live, drv = faulty("grid", 3)
    result = diverge(live, drv)
    assert result["position"] == 3
    buffer = next(b for b in result["buffers"] if b["arg"] == 2)
    assert buffer["first_byte"] == 4 * BLOCK  # the first element past the captured grid
    # the graphs are left whole: every node enabled again
    assert all(all(flags) for flags in drv.enabled.values())


def test_inputs_are_restored_and_not_poisoned() -> None:
    live, drv = faulty("scalar", 4)
    result = diverge(live, drv)
    assert result["inputs"] >= 1 + STAGES  # x and every bias carry data into the step
    assert np.allclose(drv.view(live.fw.x)[:N], np.linspace(-1, 1, N, dtype=np.float32))


@pytest.mark.parametrize("kind", ["scalar", "grid", "stale"])
def test_the_audit_flags_the_frozen_node_before_any_wrong_answer(kind: str) -> None:
    from graphscope.workload.child.diverge_audit import audit_graph

    live, drv = faulty(kind, 4)
    result = audit_graph(live, drv, time_nodes=False)
    assert result["flagged"] == [4]
    flags = {f["flag"] for f in result["nodes"][4]["flags"]}
    assert flags == {"stale": {"frozen_pointer"}, "scalar": {"frozen_scalar"}, "grid": {"frozen_grid"}}[kind]
    assert result["node_share"] == 1.0


def test_the_audit_of_a_sound_graph_flags_nothing() -> None:
    from graphscope.workload.child.diverge_audit import audit_graph

    drv = FakeDriver()
    live = Live(Sim(drv))
    live.capture_graph()
    assert audit_graph(live, drv, time_nodes=False)["flagged"] == []


def test_a_graph_that_writes_where_eager_no_longer_reads_is_named_at_the_writer() -> None:
    """The last stage's output re-allocated by eager: the graph computes the same values into the old
    buffer, so only eager's buffer, left unwritten by the graph, tells; the plain replay even matches."""
    live, drv = faulty("output", STAGES - 1)
    result = diverge(live, drv)
    assert result["hidden"] is True and result["position"] == STAGES - 1
    (buffer,) = [b for b in result["buffers"] if b["arg"] == 2]
    assert buffer["which"] == "eager's buffer, as each left it"
    assert [d["what"] for d in result["differences"]] == ["pointer"]


def test_a_copy_node_whose_size_was_frozen_is_named_itself() -> None:
    """Copies are in the prefix order too: left enabled after a disabled prefix they would write over the
    buffers being compared (measured on the H100 with a torch step's clone and slice copies)."""
    drv = FakeDriver()
    sim = Sim(drv)
    sim.copied = drv.malloc(4 * N)
    live = Live(sim)
    sim.copy_bytes = 4 * BLOCK  # captured while the step copied one block's worth
    live.capture_graph()
    sim.copy_bytes = 4 * N
    result = diverge(live, drv)
    assert result["position"] == 3 and result["captured"]["name"] == "memcpy DtoD"
    assert [(d["label"], d["captured"], d["reference"]) for d in result["differences"]] == [
        ("bytes", "512", "4096")
    ]
    assert "bytes (scalar): captured 512, eager 4096" in render_search(result)

"""graphscope's own launch path, measured and shown beside the speed-up (no GPU: a stand-in CuPy)."""

from __future__ import annotations

import sys
import time
import types
from pathlib import Path
from types import MappingProxyType

import pytest

from graphscope.text.run import own_cost_line, render_run
from graphscope.workload.child.own_cost import launch_path_cost, step_cost
from tests.workload.fakes import fake_report


@pytest.fixture
def context_type(monkeypatch):
    """WorkloadContext over a CuPy stand-in: streams and device attributes are all it asks for."""
    cuda = types.SimpleNamespace(
        Stream=lambda non_blocking=False: object(),
        Device=lambda: types.SimpleNamespace(attributes={"MaxSharedMemoryPerBlockOptin": 232448}),
    )
    monkeypatch.setitem(sys.modules, "cupy", types.SimpleNamespace(cuda=cuda))
    from graphscope.workload.child.context import WorkloadContext

    return WorkloadContext


class _CountingRaw:
    attributes = MappingProxyType({})
    max_dynamic_shared_size_bytes = 0

    def __init__(self) -> None:
        self.calls = []

    def __call__(self, grid, block, args, shared_mem=0, stream=None):
        self.calls.append((grid, block))


def test_a_recorded_step_counts_its_launches_by_path(context_type):
    from graphscope.workload.child.context import Kernel

    ctx = context_type()
    raw = _CountingRaw()
    kernel = Kernel(raw, "k", ctx.max_shared_optin)
    bound = ctx.launcher(kernel, problem=1000, block=128, name="bound")
    ctx.begin_step(record=True)
    for _ in range(3):
        ctx.launch(kernel, problem=512, block=256, args=())
    bound()
    bound()
    ctx.end_step()
    assert ctx.launch_counts == {"launch": 3, "launcher": 2}
    assert raw.calls[0] == ((2,), (256,)) and raw.calls[-1] == ((8,), (128,))
    ctx.begin_step()  # an unrecorded step leaves the recorded counts alone
    ctx.launch(kernel, problem=512, block=256, args=())
    assert ctx.launch_counts == {"launch": 3, "launcher": 2}


def test_the_wrapper_cost_is_measured_and_a_slower_wrapper_shows(context_type):
    cost = launch_path_cost(context_type)
    assert 0 <= cost["launcher_ns"] < 5_000 and 0 <= cost["launch_ns"] < 5_000

    def slow_context():
        ctx = context_type()
        fast = ctx.launch

        def launch(*args, **kwargs):
            until = time.perf_counter_ns() + 3_000
            while time.perf_counter_ns() < until:
                pass
            return fast(*args, **kwargs)

        ctx.launch = launch
        return ctx

    assert launch_path_cost(slow_context)["launch_ns"] > 2_500


def test_the_step_cost_multiplies_counts_by_cost():
    cost = step_cost({"launch_ns": 250.0, "launcher_ns": 60.0}, {"launch": 10, "launcher": 1000})
    assert cost["per_step_ns"] == 10 * 250 + 1000 * 60
    assert cost["launches"] == {"launch": 10, "launcher": 1000}


def test_the_run_report_shows_the_cost_beside_the_speed_up():
    report = fake_report(Path("w.py"), eager_ms=6.0, graph_ms=1.0)
    report.own_cost = step_cost({"launch_ns": 250.0, "launcher_ns": 60.0}, {"launch": 0, "launcher": 1000})
    own = report.to_json()["own_cost"]
    eager = report.modes["eager"].stats("wall_ns").median
    graph = report.modes["graph"].stats("wall_ns").median
    assert own["share_of_eager"] == pytest.approx(60_000 / eager)
    assert own["speedup_without"] == pytest.approx((eager - 60_000) / graph)
    line = own_cost_line(own)
    assert line.startswith("graphscope's own launch path: 1,000 ctx.launcher calls x 60 ns = 60 us per eager step")
    assert "ctx.launch calls" not in line and f"speed-up without it {own['speedup_without']:.2f}x" in line
    assert line in render_run(report.to_json())


def test_a_torch_workload_or_one_without_ctx_launches_has_no_line():
    report = fake_report(Path("w.py"), eager_ms=6.0, graph_ms=1.0)
    data = report.to_json()
    assert data["own_cost"] is None and "own launch path" not in render_run(data)

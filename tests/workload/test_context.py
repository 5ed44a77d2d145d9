"""The workload context's bookkeeping (sites, overrides, grids), against a stand-in for CuPy."""

from __future__ import annotations

import sys
import types

import pytest

from graphscope.core.launch_config import LaunchConfig


class FakeKernel:
    def __init__(self, name):
        self.name = name
        self.attributes = {"max_threads_per_block": 512, "num_regs": 24, "shared_size_bytes": 1024}
        self.max_dynamic_shared_size_bytes = 48 * 1024 - 1024
        self.calls = []

    def __call__(self, grid, block, args, shared_mem=0, stream=None):
        self.calls.append((grid, block, stream, shared_mem))


class FakeStream:
    def __init__(self, non_blocking=False):
        self.non_blocking = non_blocking

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


@pytest.fixture
def ctx(monkeypatch):
    fake = types.ModuleType("cupy")
    device = types.SimpleNamespace(attributes={"MaxSharedMemoryPerBlockOptin": 227 * 1024})
    fake.cuda = types.SimpleNamespace(Stream=FakeStream, Device=lambda: device)
    fake.RawModule = lambda code, options: types.SimpleNamespace(get_function=FakeKernel)
    monkeypatch.setitem(sys.modules, "cupy", fake)
    from graphscope.workload.child.context import WorkloadContext

    return WorkloadContext()


def _step(ctx, kernel, n=3):
    ctx.begin_step(record=True)
    for _ in range(n):
        ctx.launch(kernel, problem=16384, args=(1, 2), name="add")
    ctx.launch(kernel, problem=(100, 30), block=(32, 8), name="tile")
    ctx.end_step()


def test_launches_are_recorded_as_numbered_sites_with_grids(ctx):
    kernel = ctx.kernel("src", "vec_add")
    assert (kernel.max_threads, kernel.registers) == (512, 24)
    _step(ctx, kernel)
    assert [s.key for s in ctx.sites] == ["add#0", "add#1", "add#2", "tile#0"]
    assert ctx.sites[0].grid == (64, 1, 1) and ctx.sites[3].grid == (4, 4, 1)
    assert kernel.raw.calls[0] == ((64,), (256,), ctx.stream, 0)
    assert kernel.raw.calls[-1][:2] == ((4, 4), (32, 8))


def test_overrides_by_name_and_by_site(ctx):
    kernel = ctx.kernel("src", "vec_add")
    _step(ctx, kernel)
    ctx.config = LaunchConfig({"add": (128, 1, 1), "add#2": (64, 1, 1)})
    kernel.raw.calls.clear()
    ctx.begin_step()
    for _ in range(3):
        ctx.launch(kernel, problem=16384, name="add")
    assert [c[:2] for c in kernel.raw.calls] == [((128,), (128,)), ((128,), (128,)), ((256,), (64,))]


def test_a_grid_rule_is_used_for_launches_and_retunes(ctx):
    kernel = ctx.kernel("src", "rowsum")
    ctx.begin_step(record=True)
    ctx.launch(kernel, problem=1000, block=64, name="rows", grid=lambda problem, block: (problem[0] // block[0],))
    (site,) = ctx.sites
    assert site.grid == (15, 1, 1) and ctx.grid_of(site, (128, 1, 1)) == (7, 1, 1)


def test_outputs_and_extra_streams(ctx):
    side = ctx.new_stream()
    assert side.non_blocking and side is not ctx.stream


def test_a_step_that_changes_shape_midway_keeps_site_numbering(ctx):
    kernel = ctx.kernel("src", "vec_add")
    _step(ctx, kernel)
    ctx.begin_step()
    ctx.launch(kernel, problem=16384, name="add")
    ctx.launch(kernel, problem=16384, name="add")
    ctx.config = LaunchConfig({"add#2": (64, 1, 1)})  # forces the slow path at the third launch
    used = ctx.launch(kernel, problem=16384, name="add")
    assert used == (64, 1, 1)


def test_a_bound_launcher_records_sites_then_calls_cupy_directly(ctx):
    kernel = ctx.kernel("src", "vec_add")
    add = ctx.launcher(kernel, problem=16384, block=256, name="add")
    ctx.begin_step(record=True)
    for _ in range(3):
        add(1, 2)
    ctx.end_step()
    assert [s.key for s in ctx.sites] == ["add#0", "add#1", "add#2"]
    kernel.raw.calls.clear()
    ctx.begin_step()
    add(1, 2)
    assert kernel.raw.calls == [((64,), (256,), ctx.stream, 0)]


def test_a_launcher_honours_name_and_site_overrides(ctx):
    kernel = ctx.kernel("src", "vec_add")
    add = ctx.launcher(kernel, problem=16384, name="add")
    ctx.config = LaunchConfig({"add": (128, 1, 1)})
    ctx.begin_step()
    add()
    add()
    ctx.config = LaunchConfig({"add#1": (64, 1, 1)})
    kernel.raw.calls.clear()
    ctx.begin_step()
    add()
    add()
    assert [c[1] for c in kernel.raw.calls] == [(256,), (64,)]


def test_shared_memory_that_follows_the_block(ctx):
    kernel = ctx.kernel("src", "tile")
    tile = lambda block: block[0] * block[1] * 4  # noqa: E731 - a float per thread
    ctx.begin_step(record=True)
    ctx.launch(kernel, problem=(1024, 1024), block=(32, 8), shared_mem=tile, name="tile")
    ctx.end_step()
    (site,) = ctx.sites
    assert site.shared_mem == 1024 and site.shared_rule and site.max_shared == 227 * 1024 - 1024
    assert kernel.raw.calls[-1][3] == 1024
    assert ctx.shared_of(site, (32, 32, 1)) == 4096
    ctx.config = LaunchConfig({"tile": (16, 16, 1)})
    ctx.begin_step()
    ctx.launch(kernel, problem=(1024, 1024), block=(32, 8), shared_mem=tile, name="tile")
    assert kernel.raw.calls[-1][1:4:2] == ((16, 16), 1024)


def test_more_than_48_kib_of_shared_memory_opts_in_and_beyond_the_device_is_refused(ctx):
    kernel = ctx.kernel("src", "big")
    ctx.begin_step()
    ctx.launch(kernel, problem=1024, block=256, shared_mem=100 * 1024, name="big")
    assert kernel.raw.max_dynamic_shared_size_bytes == 100 * 1024
    with pytest.raises(ValueError, match="the device allows"):
        ctx.launch(kernel, problem=1024, block=256, shared_mem=300 * 1024, name="big")

"""ctx.launch(pdl=True) routes through the PDL launcher (a stand-in here; the GPU tests launch for real), the
config's PDL overrides switch it per site, kernel arguments are packed as CuPy packs them, and a kernel's
griddepcontrol use is read from its PTX and SASS text."""

from __future__ import annotations

import ctypes
import sys
import types
from typing import ClassVar

import numpy as np
import pytest

from graphscope.core.errors import BadInputError
from graphscope.core.launch_config import LaunchConfig
from graphscope.workload.child.pdl import _argument, griddep_in_ptx, griddep_in_sass
from tests.workload.test_context import FakeKernel, FakeStream


class FakePdl:
    made: ClassVar[list[FakePdl]] = []

    def __init__(self, raw, stream):
        self.raw, self.calls = raw, []
        FakePdl.made.append(self)

    def __call__(self, grid, block, args, shared_mem=0, stream=None):
        self.calls.append((grid, block, args))


@pytest.fixture
def ctx(monkeypatch):
    fake = types.ModuleType("cupy")
    device = types.SimpleNamespace(attributes={"MaxSharedMemoryPerBlockOptin": 227 * 1024})
    fake.cuda = types.SimpleNamespace(Stream=FakeStream, Device=lambda: device)
    fake.RawModule = lambda code, options: types.SimpleNamespace(get_function=FakeKernel)
    monkeypatch.setitem(sys.modules, "cupy", fake)
    monkeypatch.setattr("graphscope.workload.child.pdl.PdlLaunch", FakePdl)
    FakePdl.made = []
    from graphscope.workload.child.context import WorkloadContext

    return WorkloadContext()


def _step(ctx, kernel, bound):
    ctx.begin_step(record=True)
    for i in range(3):
        ctx.launch(kernel, problem=1024, args=(i,), name="link", pdl=True)
    ctx.launch(kernel, problem=1024, args=(9,), name="plain")
    bound(7)
    ctx.end_step()


def test_pdl_launches_go_through_the_pdl_launcher_and_are_recorded_on_their_sites(ctx):
    kernel = ctx.kernel("src", "k")
    bound = ctx.launcher(kernel, problem=1024, name="bound", pdl=True)
    _step(ctx, kernel, bound)
    (pdl,) = FakePdl.made  # one launcher per kernel, made on first use
    assert [args for _, _, args in pdl.calls] == [(0,), (1,), (2,), (7,)]
    assert [c[0] for c in kernel.raw.calls] == [(4,)]  # the plain launch stays on CuPy's path
    assert [s.pdl for s in ctx.sites] == [True, True, True, False, True]
    assert kernel.source == "src"


def test_the_config_switches_pdl_per_site_or_by_name(ctx):
    kernel = ctx.kernel("src", "k")
    bound = ctx.launcher(kernel, problem=1024, name="bound", pdl=True)
    ctx.config = LaunchConfig(pdl={"link#1": False, "plain": True, "bound": False})
    _step(ctx, kernel, bound)
    assert [s.pdl for s in ctx.sites] == [True, False, True, True, False]
    second = [args for _, _, args in FakePdl.made[0].calls]
    assert second == [(0,), (2,), (9,)]


def test_pdl_overrides_round_trip_and_bad_ones_are_refused():
    config = LaunchConfig({"a": (128, 1, 1)}, "w.py", {"link#3": False})
    back = LaunchConfig.from_json(config.to_json())
    assert back.pdl == {"link#3": False} and back.pdl_for("link", 3, True) is False
    assert back.pdl_for("link", 2, True) is True and back.with_pdl("link", False).pdl_for("link", 2, True) is False
    assert "pdl" not in LaunchConfig({"a": (128, 1, 1)}).to_json()  # configs without PDL read as before
    with pytest.raises(BadInputError, match="pdl"):
        LaunchConfig.from_json({**config.to_json(), "pdl": {"link": "yes"}})


def test_arguments_are_packed_as_cupy_packs_them():
    array = types.SimpleNamespace(data=types.SimpleNamespace(ptr=0xDEAD000))
    assert _argument(array).value == 0xDEAD000
    assert bytes(_argument(np.int32(-2))) == np.int32(-2).tobytes()
    assert bytes(_argument(np.float16(1.5))) == np.float16(1.5).tobytes()
    assert isinstance(_argument(3), ctypes.c_int64) and isinstance(_argument(2.5), ctypes.c_double)
    with pytest.raises(TypeError, match="cannot pass a str"):
        _argument("text")


PTX = """
.visible .entry link(
{
\tgriddepcontrol.wait;
\tst.global.f32 [%rd1], %f1;
\tgriddepcontrol.launch_dependents;
}
"""

SASS = """
\tcode for sm_90
\t\tFunction : loose
\t/*0000*/                   LDC R1, c[0x0][0x28] ;
\t/*0010*/                   EXIT ;
\t\tFunction : link
\t/*0000*/                   ACQBULK ;
\t/*0010*/                   PREEXIT ;
\t/*0020*/                   EXIT ;
"""


def test_griddepcontrol_is_read_from_ptx_and_per_function_from_sass():
    assert griddep_in_ptx(PTX) == {"wait": True, "trigger": True}
    assert griddep_in_ptx("ld.global.f32 %f1, [%rd1];") == {"wait": False, "trigger": False}
    found = griddep_in_sass(SASS)
    assert found == {"loose": {"wait": False, "trigger": False}, "link": {"wait": True, "trigger": True}}


class FakeGraphDriver:
    """The driver calls edge_replays makes, on a chain whose replay costs 10 us plus 400 ns per programmatic
    edge made plain (edge 2: 0 ns, PDL does nothing there)."""

    COST: ClassVar[dict[int, float]] = {0: 400.0, 1: 400.0, 2: 0.0}

    def __init__(self):
        self.clones, self.flipped, self.launched, self.destroyed = [], {}, [], []

    def CUgraph(self, init_value):
        return ("graph", init_value)

    def CUstream(self, init_value):
        return ("stream", init_value)

    def CUgraphEdgeData(self):
        return types.SimpleNamespace(type=0, from_port=0, to_port=0)

    def cuGraphClone(self, graph):
        clone = f"clone{len(self.clones)}"
        self.clones.append(clone)
        self.flipped[clone] = []
        return (0, clone)

    def cuGraphNodeFindInClone(self, node, clone):
        return (0, (clone, node))

    def cuGraphRemoveDependencies(self, clone, sources, targets, data, count):
        assert all(d.type == 1 and d.from_port == 1 for d in data)  # removed by their exact data
        self.flipped[clone] += [(s[1], t[1]) for s, t in zip(sources, targets)]
        return (0,)

    def cuGraphAddDependencies(self, clone, sources, targets, data, count):
        assert all(d.type == 0 for d in data)
        return (0,)

    def cuGraphInstantiate(self, clone, flags):
        return (0, ("exec", clone))

    def cuGraphLaunch(self, executable, stream):
        self.launched.append(executable[1])
        return (0,)

    def cuGraphExecDestroy(self, executable):
        self.destroyed.append(executable[1])

    def cuGraphDestroy(self, clone):
        return (0,)


def test_each_programmatic_edge_is_made_plain_alone_in_a_copy_and_timed_against_the_graph(monkeypatch):
    from graphscope.graph.edges import EdgeKinds
    from graphscope.workload.child.pdl import edge_replays

    driver = FakeGraphDriver()
    bindings = types.ModuleType("cuda.bindings")
    bindings.driver = driver
    monkeypatch.setitem(sys.modules, "cuda", types.ModuleType("cuda"))
    monkeypatch.setitem(sys.modules, "cuda.bindings", bindings)
    handles = ["n0", "n1", "n2", "n3", "n4"]
    edges = [(0, 1), (1, 2), (2, 3), (3, 4)]
    kinds = EdgeKinds.of([(0, 0, 0), (1, 1, 0), (1, 1, 0), (1, 1, 0)])  # edges 1-3 programmatic
    graph_live = types.SimpleNamespace(handles=handles, edges=edges, edge_kinds=kinds)

    class Framework:
        def handles(self, graph):
            return (7, 8)

        def stream_handle(self):
            return 9

        def event(self):
            return types.SimpleNamespace(synchronize=lambda: None)

        def record(self, event):
            pass

        def elapsed_ns(self, start, end):  # the copy launched last: 10 us + what its plain edges cost
            plain = flipped_nodes(driver.launched[-1])
            return 10_000.0 + sum(FakeGraphDriver.COST[edges.index(edge) - 1] for edge in plain)

        def synchronize(self):
            pass

    def flipped_nodes(clone):
        return [(handles.index(a), handles.index(b)) for a, b in driver.flipped[clone]]

    live = types.SimpleNamespace(
        _live_graph=lambda: graph_live, fw=Framework(), graph=object(), reset_state=lambda: None
    )
    timed = edge_replays(live, reps=10, warmup=2)
    assert timed["programmatic_edges"] == 3 and set(timed["edges"]) == {"1", "2", "3"}
    assert [flipped_nodes(c) for c in driver.clones] == [[], [(1, 2), (2, 3), (3, 4)], [(1, 2)], [(2, 3)], [(3, 4)]]
    assert timed["edges"]["1"]["saving_ns"] == 400 and timed["edges"]["3"]["saving_ns"] == 0
    assert timed["all_plain"]["saving_ns"] == 800 and timed["captured"]["median_ns"] == 10_000
    assert len(driver.launched) == 5 * (2 + 10) and sorted(driver.destroyed) == sorted(driver.clones)


def test_a_pdl_launch_hands_the_driver_each_arguments_bytes_and_one_config_per_shape(monkeypatch):
    """What cuLaunchKernelEx reads at kernelParams (a void* per argument) is read back during the call."""
    from graphscope.workload.child.pdl import PdlLaunch

    seen = []

    class Config:
        pass

    class Attribute:
        def __init__(self):
            self.value = types.SimpleNamespace()

    def launch(config, function, params, extra):
        pointers = (ctypes.c_void_p * 4).from_address(params)
        seen.append(
            (
                config,
                ctypes.c_uint64.from_address(pointers[0]).value,
                ctypes.c_int32.from_address(pointers[1]).value,
                ctypes.c_int64.from_address(pointers[2]).value,
                ctypes.c_double.from_address(pointers[3]).value,
            )
        )
        return (0,)

    driver = types.SimpleNamespace(
        CUfunction=lambda init_value: ("function", init_value),
        CUstream=lambda init_value: ("stream", init_value),
        CUlaunchConfig=Config,
        CUlaunchAttribute=Attribute,
        CUlaunchAttributeID=types.SimpleNamespace(CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION=6),
        cuLaunchKernelEx=launch,
    )
    bindings = types.ModuleType("cuda.bindings")
    bindings.driver = driver
    monkeypatch.setitem(sys.modules, "cuda", types.ModuleType("cuda"))
    monkeypatch.setitem(sys.modules, "cuda.bindings", bindings)
    raw = types.SimpleNamespace(kernel=types.SimpleNamespace(ptr=77))
    stream = types.SimpleNamespace(ptr=5)
    pdl = PdlLaunch(raw, stream)
    array = types.SimpleNamespace(data=types.SimpleNamespace(ptr=0xDEAD000))
    pdl((16,), (256,), (array, np.int32(-7), 2**40, 0.25))
    pdl((16,), (256,), (array, np.int32(9), 1, 1.5))
    pdl((8, 2), (32, 8), (array, np.int32(0), 0, 0.0), shared_mem=1024)
    assert [s[1:] for s in seen] == [(0xDEAD000, -7, 2**40, 0.25), (0xDEAD000, 9, 1, 1.5), (0xDEAD000, 0, 0, 0.0)]
    first, _, third = (s[0] for s in seen)
    assert seen[1][0] is first and third is not first  # one config per launch shape, reused
    assert (first.gridDimX, first.blockDimX, first.numAttrs, first.hStream) == (16, 256, 1, ("stream", 5))
    assert (third.gridDimX, third.gridDimY, third.blockDimY, third.sharedMemBytes) == (8, 2, 8, 1024)
    assert first.attrs[0].value.programmaticStreamSerializationAllowed == 1

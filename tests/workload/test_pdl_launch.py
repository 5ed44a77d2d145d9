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
from graphscope.workload.pdl import _argument, griddep_in_ptx, griddep_in_sass
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
    monkeypatch.setattr("graphscope.workload.pdl.PdlLaunch", FakePdl)
    FakePdl.made = []
    from graphscope.workload.context import WorkloadContext

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

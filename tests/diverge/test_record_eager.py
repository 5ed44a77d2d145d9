"""The eager record of a CuPy step's ctx.launch calls (context.py's tap): every launch with its site,
configuration, arguments and workload line, and the plain launch path left as it was afterwards."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import SimpleNamespace

import numpy as np

from graphscope.workload.child.diverge_gpu import eager_launch, record_eager
from tests.workload.test_context import ctx  # noqa: F401 (the fixture: a WorkloadContext over a CuPy stand-in)

WORKLOAD = '''
import numpy as np

def make(kernel, a, b):
    def step(ctx):
        ctx.launch(kernel, problem=1024, block=128, name="scale", args=(a, b, np.float32(0.5), np.int32(1024)))
        add = ctx.launcher(kernel, problem=512, name="add")
        add(b, a, np.float32(2.0), np.int32(512))
    return step
'''


class Array:
    """What record_eager reads of a CuPy array: its pointer, size and dtype."""

    def __init__(self, ptr: int, nbytes: int) -> None:
        self.data, self.nbytes, self.dtype = SimpleNamespace(ptr=ptr), nbytes, "float32"


def test_every_ctx_launch_is_recorded_with_its_arguments_and_line(ctx, tmp_path: Path) -> None:  # noqa: F811
    path = tmp_path / "work.py"
    path.write_text(WORKLOAD)
    spec = importlib.util.spec_from_file_location("work", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    kernel = ctx.kernel("src", "scale_kernel")
    a, b = Array(0x7F0000001000, 4096), Array(0x7F0000002000, 4096)
    step = module.make(kernel, a, b)

    def run(step, record=False):
        ctx.begin_step(record)
        step(ctx)
        ctx.end_step()

    live = SimpleNamespace(fw=SimpleNamespace(name="cupy", ctx=ctx, run=run, synchronize=lambda: None),
                           path=path, step=step, reset_state=lambda: None)
    records = record_eager(live)
    assert [r["site"] for r in records] == ["scale#0", "add#0"]
    first = records[0]
    assert (first["grid"], first["block"], first["shared_mem"]) == ([8], [128], 0)
    assert first["line"] == "work.py:6" and records[1]["line"] == "work.py:8"
    assert first["args"][0] == {"kind": "array", "ptr": 0x7F0000001000, "nbytes": 4096, "dtype": "float32"}
    assert first["args"][2]["hex"] == np.float32(0.5).tobytes().hex()
    assert ctx.tap is None and kernel.raw.calls  # the launches went through to the kernel
    calls = len(kernel.raw.calls)
    run(step)  # later steps launch the kernel directly again: nothing recorded
    assert len(kernel.raw.calls) == calls + 2 and len(records) == 2
    node = {"name": "scale_kernel", "param_info": True, "params": [
        {"offset": o, "size": s, "hex": "00" * s} for o, s in ((0, 8), (8, 8), (16, 4), (20, 4))]}
    launch = eager_launch(first, node)
    assert launch["grid"] == [8, 1, 1] and launch["params"][0]["pointer"] is True
    assert launch["params"][3]["hex"] == np.int32(1024).tobytes().hex()

"""How a workload's step runs, is captured and is timed, per framework (workload child only).

A workload file says which it is written for with `FRAMEWORK = "torch"`; without it, "cupy".

- cupy: `setup(ctx)` gets a WorkloadContext (ctx.kernel, ctx.launch, ctx.matmul ...); graph mode
  captures one step on ctx.stream with `Stream.begin_capture` / `end_capture` (CuPy instantiates).
- torch: `setup(ctx)` gets a TorchContext (ctx.torch, ctx.device, ctx.stream, ctx.outputs); graph mode
  follows PyTorch's recipe: three warm-up steps on a side stream, then `torch.cuda.CUDAGraph` captured
  with `torch.cuda.graph` on ctx.stream into one memory pool kept across re-captures. Steps write their
  results into tensors declared with ctx.outputs (`out.copy_(model(x))`), as graph replays require.

Both give the raw graph and executable-graph handles that graph/live.py reads through the driver API.

One module per framework, implementing `base.Framework` and importing `base`, `core` and the child-side
workload modules it drives (never another framework); `framework_for` maps the name a workload file gives
to its class, FRAMEWORKS lists the names. Each is imported when a workload asks for it (the GPU libraries
load in the child only).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from graphscope.workload.child.frameworks.base import FrameworkClass


def framework_for(name: str) -> FrameworkClass:
    """The framework class a workload's FRAMEWORK names (KeyError for an unknown name)."""
    if name == "cupy":
        from graphscope.workload.child.frameworks.cupy_framework import CupyFramework

        return CupyFramework
    if name == "torch":
        from graphscope.workload.child.frameworks.torch_framework import TorchFramework

        return TorchFramework
    raise KeyError(name)


FRAMEWORKS = ("cupy", "torch")

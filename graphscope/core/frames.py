"""Which Python frame of a stack is the user's code: the first frame outside torch, triton, CuPy, the
engines' launchers and the standard library. Shared by the attribution of traces (analysis/attribution.py)
and of a live graph's nodes (workload/child/op_attribution.py, which reads torch.profiler's stacks)."""

from __future__ import annotations

import re
import sys
from collections.abc import Iterable

LIBRARY_PREFIXES = (
    "torch/",
    "torchgen/",
    "functorch/",
    "triton/",
    "cupy/",
    "cupy_backends/",
    "numpy/",
    "nvidia/",
    "graphscope/workload/",
    # kernel libraries and wrappers that call kernels for the model code
    "flashinfer/",
    "flash_attn/",
    "xformers/",
    "transformer_engine/",
    "apex/",
    "deep_gemm/",
    "sgl_kernel/",
    "accelerate/hooks.py",
    "vllm/_custom_ops.py",
    "vllm/vllm_flash_attn/",
    "vllm/utils",
    "vllm/platforms/",
    "sglang/srt/utils",
    # the engines' launchers: executors, workers, graph runners and compilation wrappers, not model code
    "vllm/executor/",
    "vllm/worker/",
    "vllm/engine/",
    "vllm/compilation/",
    "vllm/forward_context.py",
    "vllm/v1/executor/",
    "vllm/v1/worker/",
    "vllm/v1/engine/",
    "vllm/v1/cudagraph_dispatcher.py",
    "sglang/srt/model_executor/",
    "sglang/srt/managers/",
    "sglang/srt/entrypoints/",
    "sglang/launch_server.py",
)
"""Frames that are not the user's code: a path that starts with one (after site-packages/) is skipped."""
_FRAME = re.compile(r"^(?P<path>.+?)\((?P<line>\d+)\): ")


def is_user_frame(text: str) -> bool:
    """Whether a Python frame (`path(line): function`) is in the user's code: not a built-in, not torch,
    triton, CuPy, an engine's launcher or the standard library."""
    found = _FRAME.match(text)
    if found is None:
        return False  # built-ins, `<frozen os>`, module ranges
    path = found["path"].replace("\\", "/")
    if path.startswith("<"):
        return False  # <frozen ...>, <string>, generated code
    for marker in ("site-packages/", "dist-packages/"):
        if marker in path:
            path = path.split(marker, 1)[1]
    if "/lib/python3" in path or "/lib64/python3" in path:
        return False  # an absolute standard-library path
    if path.startswith(LIBRARY_PREFIXES) or any(f"/{prefix}" in path for prefix in LIBRARY_PREFIXES):
        return False  # a library's own file, installed or in a source checkout
    top = path.split("/", 1)[0].removesuffix(".py")
    return "/" in path or top not in sys.stdlib_module_names  # a bare `enum.py` is the standard library's


def user_frame(stack: Iterable[str]) -> str | None:
    """The first frame of the user's code in a stack given innermost first, else None."""
    return next((frame for frame in stack if is_user_frame(frame)), None)

"""What parent and child say to each other: one JSON object per line, and how failures are named."""

from __future__ import annotations

import json
from typing import Any

PROTOCOL_VERSION = 2


INSTALL_TORCH = "pip install -e '.[torch]' (a CUDA build of PyTorch matching your driver)"
INSTALL_HINTS = {
    "torch": INSTALL_TORCH,
    "triton": f"Triton comes with PyTorch: {INSTALL_TORCH}",
    "transformers": "pip install -e '.[hf]' (transformers with PyTorch)",
}
"""What to install for the libraries workloads commonly import (the examples among them)."""


class MissingLibrary(Exception):
    """A workload asked for a library that is not installed (its message says what to install)."""


# error kinds, with what the user should hear first
ERRORS = {
    "bad_workload": "the workload file is not usable",
    "raised": "the workload raised an exception",
    "cuda_fault": "the workload faulted on the GPU",
    "out_of_memory": "the workload ran out of GPU memory",
    "capture_failed": "the step cannot be captured as a CUDA graph",
    "no_gpu": "no CUDA GPU is available",
    "missing_library": "a library the workload needs is not installed",
    "timeout": "the workload did not finish in time",
    "died": "the workload process died",
    "bad_request": "graphscope sent a request the child does not understand",
}
CAPTURE_HINT = (
    "a step captured as a graph must not synchronise with the host: no .get(), cupy.asnumpy(), "
    "print of a GPU value, stream or device synchronize, memory allocation outside the pool, or work on "
    "a stream that was not forked from ctx.stream"
)
CUBLAS_HINT = (
    "CuPy refuses cuBLAS (cupy.matmul, @, cupy.dot) while a stream captures; use ctx.matmul(a, b, out=c), "
    "which runs the GEMM through PyTorch and is captured (README: Workload format)"
)
COPY_HINT = (
    "CuPy refuses host<->device copies (ndarray.set, .get, cupy.asarray of host data) while a stream "
    "captures; copy with ctx.copy(dst, src) between a ctx.pinned(shape, dtype) host buffer and a device "
    "array: CUDA captures that as a memcpy node (README: Workload format)"
)
READ_HINT = (
    "a step captured as a graph must not synchronise with the host, and reading a GPU value on the host "
    "(float(x), .get(), cupy.asnumpy, print) waits for it; read results after the step, or copy an answer "
    "out with ctx.copy(pinned, device_array) into a ctx.pinned(shape, dtype) buffer and read that after it"
)
CAPTURE_MARKERS = ("StreamCapture", "captur", "Captur", "cudaErrorNotPermitted")
FAULT_MARKERS = (
    "IllegalAddress",
    "ILLEGAL_ADDRESS",
    "LaunchFailure",
    "LAUNCH_FAILED",
    "Misaligned",
    "MISALIGNED",
    "IllegalInstruction",
    "ILLEGAL_INSTRUCTION",
    "HardwareStackError",
    "cudaErrorAssert",
    "ASSERT",
    "InvalidPc",
    "LAUNCH_OUT_OF_RESOURCES",
    "LaunchOutOfResources",
)


def encode(message: dict[str, Any]) -> str:
    return json.dumps(message, separators=(",", ":")) + "\n"


def decode(line: str) -> dict[str, Any]:
    return json.loads(line)


def classify(exc: BaseException, capturing: bool = False) -> str:
    """Name a failure from the exception alone (the parent never imports CuPy)."""
    kind = type(exc).__name__
    text = f"{kind}: {exc}"
    if isinstance(exc, MissingLibrary):
        return "missing_library"
    if isinstance(exc, MemoryError) or "OutOfMemory" in kind or "out of memory" in text.lower():
        return "out_of_memory"
    if any(marker in text for marker in FAULT_MARKERS):
        return "cuda_fault"
    if capturing and ("CUDA" in kind or "Cuda" in kind or any(m in text for m in CAPTURE_MARKERS)):
        return "capture_failed"
    if "CUDARuntimeError" in kind or "CUDADriverError" in kind or "CUDA_ERROR" in text:
        return "cuda_fault" if not capturing else "capture_failed"
    return "raised"


def describe_error(kind: str, detail: str) -> str:
    """One line for the user: what happened, then the exception's own words."""
    lead = ERRORS.get(kind, kind)
    tail = f": {detail}" if detail else ""
    hint = ""
    if kind == "capture_failed":
        if "cuBLAS" in detail:
            hint = f" ({CUBLAS_HINT})"
        elif "D2H" in detail:  # a GPU value read on the host (float(x), .get(), print): that waits for the GPU
            hint = f" ({READ_HINT})"
        elif "transfers are disallowed" in detail or "H2D" in detail:
            hint = f" ({COPY_HINT})"
        else:
            hint = f" ({CAPTURE_HINT})"
    return f"{lead}{tail}{hint}"

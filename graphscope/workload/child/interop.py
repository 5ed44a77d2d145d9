"""PyTorch inside a CuPy workload's step: GEMMs and other library calls that CUDA graphs can capture.

CuPy refuses every cuBLAS call while a stream captures ("calling cuBLAS API during stream capture is
currently unsupported", cupy/cupy#6290), also through cupy_backends. PyTorch's cuBLAS calls capture:
measured on an H200, `torch.mm(a, b, out=c)` issued on `torch.cuda.ExternalStream(ctx.stream.ptr)`
inside a CuPy capture was captured and replayed with output identical to eager, the tensors sharing
the CuPy arrays' memory (no copy). nvmath-python 0.5 did not import there (it wants cuda.core).

Runs in the workload child only; torch is imported on first use.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from graphscope.workload.protocol import INSTALL_TORCH, MissingLibrary


class TorchInterop:
    """Streams and tensors shared between a CuPy workload and PyTorch, made once and cached."""

    def __init__(self, ctx: Any) -> None:
        self.ctx = ctx
        self._torch: Any = None
        self._streams: dict[int, Any] = {}
        self._tensors: dict[tuple, Any] = {}

    @property
    def torch(self) -> Any:
        if self._torch is None:
            try:
                import torch
            except ImportError:
                raise MissingLibrary(f"ctx.matmul and ctx.torch need PyTorch: {INSTALL_TORCH}") from None
            if not torch.cuda.is_available():
                raise MissingLibrary(f"this PyTorch has no CUDA support: {INSTALL_TORCH}")
            self._torch = torch
        return self._torch

    def stream(self, stream: Any = None) -> Any:
        """The torch view of a CuPy stream (ctx.stream by default)."""
        target = stream or self.ctx.stream
        found = self._streams.get(target.ptr)
        if found is None:
            found = self._streams[target.ptr] = self.torch.cuda.ExternalStream(target.ptr)
        return found

    @contextlib.contextmanager
    def on_stream(self, stream: Any = None) -> Iterator[Any]:
        with self.torch.cuda.stream(self.stream(stream)):
            yield self.torch

    def tensor(self, array: Any) -> Any:
        """A torch tensor on a CuPy array's memory; cached by pointer, shape, strides and dtype."""
        key = (array.data.ptr, array.shape, array.strides, array.dtype.str)
        found = self._tensors.get(key)
        if found is None:
            found = self._tensors[key] = self.torch.as_tensor(array, device="cuda")
        return found

    def matmul(self, a: Any, b: Any, out: Any, stream: Any = None) -> Any:
        torch = self.torch
        with torch.cuda.stream(self.stream(stream)):
            torch.matmul(self.tensor(a), self.tensor(b), out=self.tensor(out))
        return out

"""Host<->device copies inside a step, captured as memcpy nodes (CuPy workloads' `ctx.pinned` / `ctx.copy`).

CuPy refuses `ndarray.set` / `.get` while a stream captures ("H2D transfers are disallowed"); CUDA itself
captures `cudaMemcpyAsync` as a memcpy node. Measured on the H200 (a 4 MiB copy in, a kernel, a copy out,
captured on a CuPy stream through cuda-bindings): from page-locked host memory the capture returns
cudaSuccess, every replay reads the host buffer's new contents and the graph launch returns at once
(10-42 us, the copies running after it); from pageable memory the capture also succeeds and replays are
correct, but each graph launch blocked the CPU for the whole copy (0.69 ms), so nothing overlaps it.
`copy` therefore takes page-locked host buffers only, in both modes, and says so otherwise.
"""

from __future__ import annotations

from typing import Any

import numpy as np

PAGEABLE = (
    "ctx.copy needs page-locked host memory: allocate the host buffer with ctx.pinned(shape, dtype). From "
    "pageable memory a captured copy replays correctly but synchronously (the graph launch blocked the CPU "
    "for the whole copy: 0.69 ms for 4 MiB on an H200, against a launch that returns at once from pinned "
    "memory), so the graph would not overlap it"
)


def pinned(cupy: Any, shape: int | tuple[int, ...], dtype: Any = np.float32) -> np.ndarray:
    """A NumPy array in page-locked host memory (kept alive by the array), for `copy`."""
    dims = (shape,) if isinstance(shape, int) else tuple(shape)
    count = int(np.prod(dims, dtype=np.int64))
    dtype = np.dtype(dtype)
    memory = cupy.cuda.alloc_pinned_memory(max(count * dtype.itemsize, 1))
    return np.frombuffer(memory, dtype, count).reshape(dims)


def _runtime() -> Any:
    try:
        from cuda.bindings import runtime
    except ImportError:
        from graphscope.workload.protocol import MissingLibrary

        raise MissingLibrary(
            "ctx.copy issues cudaMemcpyAsync through cuda-bindings: pip install -e '.[cuda13]' (or '.[cuda12]')"
        ) from None
    return runtime


def _is_device(array: Any) -> bool:
    return hasattr(array, "__cuda_array_interface__") and not isinstance(array, np.ndarray)


def _pointer(array: Any) -> int:
    if _is_device(array):
        return int(array.__cuda_array_interface__["data"][0])
    return int(array.ctypes.data)


def _check_pinned(runtime: Any, array: np.ndarray, side: str) -> None:
    err, attributes = runtime.cudaPointerGetAttributes(array.ctypes.data)
    if err != runtime.cudaError_t.cudaSuccess or attributes.type != runtime.cudaMemoryType.cudaMemoryTypeHost:
        raise ValueError(f"{side}: {PAGEABLE}")


def copy(dst: Any, src: Any, stream: Any) -> None:
    """dst <- src on `stream` with cudaMemcpyAsync (host<->device or device<->device): shapes' bytes must
    agree and both be contiguous; a host side must be page-locked (`pinned`)."""
    for side, array in (("dst", dst), ("src", src)):
        if not (_is_device(array) or isinstance(array, np.ndarray)):
            kind = type(array).__name__
            raise TypeError(f"ctx.copy {side}: a CuPy array or a NumPy array from ctx.pinned, not {kind}")
        if not array.flags.c_contiguous:
            raise ValueError(f"ctx.copy {side}: the array must be contiguous (copy a contiguous view or buffer)")
    if dst.nbytes != src.nbytes:
        raise ValueError(f"ctx.copy: dst holds {dst.nbytes:,} bytes and src {src.nbytes:,}; they must agree")
    runtime = _runtime()
    for side, array in (("dst", dst), ("src", src)):
        if not _is_device(array):
            _check_pinned(runtime, array, f"ctx.copy {side}")
    (err,) = runtime.cudaMemcpyAsync(
        _pointer(dst), _pointer(src), int(src.nbytes), runtime.cudaMemcpyKind.cudaMemcpyDefault, int(stream.ptr)
    )
    if err != runtime.cudaError_t.cudaSuccess:
        raise RuntimeError(f"cudaMemcpyAsync failed: {err}")

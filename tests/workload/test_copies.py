"""ctx.copy and ctx.pinned without a GPU: a stand-in cuda-bindings runtime records what would be issued."""

from __future__ import annotations

import types

import numpy as np
import pytest

from graphscope.workload.child import copies
from graphscope.workload.protocol import describe_error


class DeviceArray:
    """Enough of a CuPy array: the CUDA array interface, flags and bytes."""

    def __init__(self, nbytes: int, pointer: int = 0x7F00_0000_0000, contiguous: bool = True) -> None:
        self.nbytes = nbytes
        self.flags = types.SimpleNamespace(c_contiguous=contiguous)
        self.__cuda_array_interface__ = {"data": (pointer, False), "shape": (nbytes,), "typestr": "|u1", "version": 3}


class Runtime:
    """cuda.bindings.runtime as far as copies.py uses it; `pinned` holds the host pointers that are page-locked."""

    cudaError_t = types.SimpleNamespace(cudaSuccess=0, cudaErrorInvalidValue=1)
    cudaMemoryType = types.SimpleNamespace(cudaMemoryTypeUnregistered=0, cudaMemoryTypeHost=1)
    cudaMemcpyKind = types.SimpleNamespace(cudaMemcpyDefault=4)

    def __init__(self, pinned=(), fail=False):
        self.pinned, self.fail, self.issued = set(pinned), fail, []

    def cudaPointerGetAttributes(self, pointer):
        kind = 1 if pointer in self.pinned else 0
        return 0, types.SimpleNamespace(type=kind)

    def cudaMemcpyAsync(self, dst, src, nbytes, kind, stream):
        self.issued.append((dst, src, nbytes, kind, stream))
        return (1 if self.fail else 0,)


STREAM = types.SimpleNamespace(ptr=0xABC)


def _with(monkeypatch, runtime):
    monkeypatch.setattr(copies, "_runtime", lambda: runtime)
    return runtime


def test_a_pinned_request_is_copied_in_and_the_answer_out_on_the_step_stream(monkeypatch):
    host_in, host_out = np.arange(1024, dtype=np.float32), np.zeros(1024, np.float32)
    runtime = _with(monkeypatch, Runtime(pinned={host_in.ctypes.data, host_out.ctypes.data}))
    device = DeviceArray(host_in.nbytes)
    copies.copy(device, host_in, STREAM)
    copies.copy(host_out, device, STREAM)
    pointer = device.__cuda_array_interface__["data"][0]
    assert runtime.issued == [
        (pointer, host_in.ctypes.data, 4096, 4, 0xABC),
        (host_out.ctypes.data, pointer, 4096, 4, 0xABC),
    ]


def test_pageable_host_memory_is_refused_in_one_line_saying_why(monkeypatch):
    _with(monkeypatch, Runtime())
    with pytest.raises(ValueError, match=r"ctx.copy src: ctx.copy needs page-locked host memory.*synchronously"):
        copies.copy(DeviceArray(16), np.zeros(4, np.float32), STREAM)


@pytest.mark.parametrize(
    "dst, src, error, words",
    [
        (DeviceArray(16), DeviceArray(32), ValueError, "dst holds 16 bytes and src 32"),
        (DeviceArray(16, contiguous=False), DeviceArray(16), ValueError, "must be contiguous"),
        (DeviceArray(16), [1, 2, 3, 4], TypeError, "not list"),
    ],
)
def test_mismatched_or_odd_arguments_are_named(monkeypatch, dst, src, error, words):
    runtime = _with(monkeypatch, Runtime())
    with pytest.raises(error, match=words):
        copies.copy(dst, src, STREAM)
    assert runtime.issued == []


def test_a_failed_copy_is_raised(monkeypatch):
    _with(monkeypatch, Runtime(fail=True))
    with pytest.raises(RuntimeError, match="cudaMemcpyAsync failed"):
        copies.copy(DeviceArray(16), DeviceArray(16, pointer=0x7F00_0000_1000), STREAM)


def test_pinned_buffers_have_the_shape_and_dtype_asked_for():
    allocated = []

    def alloc(nbytes):
        allocated.append(nbytes)
        return bytearray(nbytes)

    fake = types.SimpleNamespace(cuda=types.SimpleNamespace(alloc_pinned_memory=alloc))
    array = copies.pinned(fake, (8, 4), "float16")
    assert array.shape == (8, 4) and array.dtype == np.float16 and allocated == [64]
    array[:] = 1  # writable: the host side of a request
    assert copies.pinned(fake, 3, np.int64).shape == (3,)


def test_cupy_s_capture_guard_points_at_ctx_copy():
    message = describe_error(
        "capture_failed", "RuntimeError: the current stream is capturing, so H2D transfers are disallowed"
    )
    assert "ctx.copy(dst, src)" in message and "ctx.pinned" in message and "synchronise" not in message

"""Facts about the GPU machine a run happened on (collected in the child, where CuPy is loaded)."""

from __future__ import annotations

import platform
from importlib import metadata
from typing import Any


def _version(package: str) -> str | None:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return None


def _cuda_version(encoded: int) -> str:
    return f"{encoded // 1000}.{encoded % 1000 // 10}"


def environment() -> dict[str, Any]:
    """GPU name, compute capability, SMs, driver and runtime versions, CuPy and cuda-bindings versions."""
    import cupy

    runtime = cupy.cuda.runtime
    device = cupy.cuda.Device()
    properties = runtime.getDeviceProperties(device.id)
    name = properties["name"]
    return {
        "gpu": name.decode() if isinstance(name, bytes) else str(name),
        "device": device.id,
        "compute_capability": f"{properties['major']}.{properties['minor']}",
        "sm_count": int(properties["multiProcessorCount"]),
        "driver_cuda": _cuda_version(runtime.driverGetVersion()),
        "runtime_cuda": _cuda_version(runtime.runtimeGetVersion()),
        "cupy": cupy.__version__,
        "cuda_bindings": _version("cuda-bindings"),
        "python": platform.python_version(),
        "host": platform.node(),
    }

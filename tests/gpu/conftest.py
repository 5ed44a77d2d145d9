"""GPU tests: run on a machine with a CUDA GPU and CuPy (the lent H200); skipped cleanly elsewhere."""

from __future__ import annotations

import pytest


def _gpu_available() -> bool:
    try:
        import cupy

        return cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:  # no CuPy, no driver, no device
        return False


def pytest_collection_modifyitems(config, items):
    if _gpu_available():
        return
    skip = pytest.mark.skip(reason="needs a CUDA GPU with CuPy")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)

"""Where graphscope keeps its files, and where it finds external tools. Environment variables override."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

NSYS_ENV = "GRAPHSCOPE_NSYS"
DATA_ENV = "GRAPHSCOPE_DATA_DIR"
NSYS_CANDIDATES = (
    "/opt/nvidia/nsight-systems/*/bin/nsys",
    "/opt/nvidia/nsight-compute/*/host/target-linux-x64/nsys",
    "/usr/local/cuda/bin/nsys",
)

SANITIZER_ENV = "GRAPHSCOPE_COMPUTE_SANITIZER"
SANITIZER_CANDIDATES = (
    "/usr/local/cuda/bin/compute-sanitizer",
    "/usr/local/cuda-*/bin/compute-sanitizer",
    "/usr/local/cuda/compute-sanitizer/compute-sanitizer",
    "/opt/nvidia/compute-sanitizer*/compute-sanitizer",
)


def data_dir() -> Path:
    """The user's data folder (session database, tuned configs): $GRAPHSCOPE_DATA_DIR or XDG data home."""
    override = os.environ.get(DATA_ENV)
    if override:
        return Path(override)
    base = os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share"
    return Path(base) / "graphscope"


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    folder = Path(base) / "graphscope"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def default_session_db() -> Path:
    return data_dir() / "session.sqlite"


def _find_tool(variable: str, name: str, candidates: tuple[str, ...]) -> str | None:
    override = os.environ.get(variable)
    if override:
        return override if Path(override).is_file() else None
    found = shutil.which(name)
    if found:
        return found
    from glob import glob

    for pattern in candidates:
        matches = sorted(glob(pattern))
        if matches:
            return matches[-1]
    return None


def find_nsys() -> str | None:
    """The nsys executable: $GRAPHSCOPE_NSYS, then PATH, then the usual install folders."""
    return _find_tool(NSYS_ENV, "nsys", NSYS_CANDIDATES)


def find_sanitizer() -> str | None:
    """compute-sanitizer: $GRAPHSCOPE_COMPUTE_SANITIZER, then PATH, then the CUDA toolkit's folders."""
    return _find_tool(SANITIZER_ENV, "compute-sanitizer", SANITIZER_CANDIDATES)


def asset_path(name: str) -> Path:
    """A bundled asset: inside the installed package, or in the source checkout's assets/ folder."""
    package = Path(__file__).resolve().parent.parent
    for folder in (package / "_assets", package.parent / "assets"):
        if (folder / name).exists():
            return folder / name
    return package.parent / "assets" / name


def demo_trace() -> Path:
    return asset_path("demo_trace.sqlite")


def demo_ranks() -> Path:
    """The bundled demo rank set: a folder of two ranks of a real 128-rank PyTorch job (assets/demo_ranks)."""
    return asset_path("demo_ranks")

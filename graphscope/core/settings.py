"""Where graphscope keeps its files, and where it finds external tools. Environment variables override."""

from __future__ import annotations

import os
import shutil
import stat
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
    return _xdg_base("XDG_DATA_HOME", Path.home() / ".local" / "share") / "graphscope"


class CacheRefused(OSError):
    """The cache folder is not the user's own (caching is off for the process)."""


_refused: list[str] = []  # the one warning said, once a process


def _xdg_base(variable: str, default: Path) -> Path:
    """An XDG base folder: the variable when it names an absolute path; a relative or empty one is
    ignored, as the XDG Base Directory specification says (a relative one would follow the working folder)."""
    value = os.environ.get(variable, "")
    return Path(value) if value and os.path.isabs(value) else default


def cache_dir() -> Path:
    """The user's cache folder, `$XDG_CACHE_HOME/graphscope` (~/.cache/graphscope), created 0700.

    Raises OSError when it cannot be made and `CacheRefused` (after one warning on stderr) when it is not
    the user's own: a symlink, owned by another user, or writable by the group or others (entries planted
    there would be served, and the user's traces read by others). Callers treat either as "caching off".
    """
    if _refused:
        raise CacheRefused(_refused[0])
    try:
        home = Path.home()
    except (RuntimeError, KeyError) as error:  # no home folder known: no cache (unless XDG_CACHE_HOME says)
        home = Path("/nonexistent-home")
        if not os.path.isabs(os.environ.get("XDG_CACHE_HOME", "")):
            raise OSError(f"no cache folder: {error}") from None
    folder = _xdg_base("XDG_CACHE_HOME", home / ".cache") / "graphscope"
    try:
        found = os.lstat(folder)
    except FileNotFoundError:
        folder.parent.mkdir(parents=True, exist_ok=True)
        folder.mkdir(mode=0o700, exist_ok=True)  # or made by another process meanwhile: checked alike
        found = os.lstat(folder)
    reason = None
    if stat.S_ISLNK(found.st_mode):
        reason = "is a symlink"
    elif not stat.S_ISDIR(found.st_mode):
        raise NotADirectoryError(f"{folder}: not a folder")
    elif hasattr(os, "getuid") and found.st_uid != os.getuid():
        reason = "is owned by another user"
    elif found.st_mode & 0o022:
        reason = "is writable by other users"
    if reason is not None:
        _refused.append(f"{folder} {reason}")
        import sys

        print(f"graphscope: the cache folder {folder} {reason}; caching is off", file=sys.stderr)
        raise CacheRefused(_refused[0])
    if found.st_mode & 0o077:  # made by an older graphscope (0755): its entries are the user's own
        os.chmod(folder, 0o700)
    return folder


def cache_subfolder(name: str) -> Path:
    """A folder inside the cache folder (answers, traces, exports); a symlink planted in its place is
    removed, so nothing the cache writes or reads there lies outside the user's own folder."""
    folder = cache_dir() / name
    if folder.is_symlink():
        folder.unlink()
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

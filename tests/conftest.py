"""Shared fixtures: the real Nsight Systems exports in tests/data, and copies to damage."""

from __future__ import annotations

import atexit
import os
import shutil
import sqlite3
import tempfile
from pathlib import Path

import pytest

# the trace cache (and converted .nsys-rep exports) of this test run live apart from the user's, and the
# cache stays on: tests that read a file twice exercise the cached path
os.environ["XDG_CACHE_HOME"] = tempfile.mkdtemp(prefix="graphscope-tests-cache-")
atexit.register(shutil.rmtree, os.environ["XDG_CACHE_HOME"], True)

DATA = Path(__file__).parent / "data"
EXPORTS = sorted(DATA.glob("*.sqlite"))
H200_NODE = DATA / "h200_seed_vecadd_node.sqlite"
H200_GRAPH = DATA / "h200_seed_vecadd_graph.sqlite"
FORKJOIN = DATA / "h200_forkjoin_node.sqlite"
TORCH_MLP = DATA / "h200_torch_mlp_node.sqlite"


def union_ns(intervals) -> int:
    """The time a set of (start, end) intervals covers, by a plain loop: the second way busy time is checked."""
    total, reach = 0, None
    for start, end in sorted(intervals):
        if reach is None or start > reach:
            total += end - start
            reach = end
        elif end > reach:
            total += end - reach
            reach = end
    return total


@pytest.fixture(autouse=True)
def _cache_switch_restored():
    """`main([..., "--no-cache"])` sets GRAPHSCOPE_NO_CACHE for its process (children and background loads
    follow it); in-process tests put it back so the next test runs with the cache as it found it."""
    before = os.environ.get("GRAPHSCOPE_NO_CACHE")
    yield
    if before is None:
        os.environ.pop("GRAPHSCOPE_NO_CACHE", None)
    else:
        os.environ["GRAPHSCOPE_NO_CACHE"] = before


@pytest.fixture
def own_cache(tmp_path: Path, monkeypatch) -> Path:
    """A cache folder of the test's own, caching on: the graphscope folder inside it."""
    from graphscope.trace import cache

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("GRAPHSCOPE_NO_CACHE", raising=False)
    monkeypatch.setattr(cache, "_evicted", False)
    return tmp_path / "cache" / "graphscope"


@pytest.fixture
def export_copy(tmp_path: Path):
    """Copy an export into tmp_path so a test may alter it: export_copy(source) -> (path, connection)."""
    opened: list[sqlite3.Connection] = []

    def make(source: Path = FORKJOIN) -> tuple[Path, sqlite3.Connection]:
        target = tmp_path / source.name
        shutil.copy(source, target)
        conn = sqlite3.connect(target)
        opened.append(conn)
        return target, conn

    yield make
    for conn in opened:
        conn.close()

"""The boundary rules of docs/architecture.md (import-linter contracts in pyproject.toml) and ruff, as tests."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _tool(name: str) -> str:
    found = shutil.which(name, path=str(Path(sys.executable).parent)) or shutil.which(name)
    if found is None:
        pytest.skip(f"{name} is not installed (pip install -e '.[test]')")
    return found


def test_import_contracts_hold():
    result = subprocess.run([_tool("lint-imports")], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout[-3000:]


def test_ruff_is_clean():
    result = subprocess.run(
        [_tool("ruff"), "check", "graphscope", "tests", "benchmarks", "examples"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout[-3000:]


def test_no_module_imports_itself_through_others():
    """No import circles (one held workload.context -> interop -> frameworks -> context together)."""
    grimp = pytest.importorskip("grimp")
    graph = grimp.build_graph("graphscope")
    circles = []
    for importer in sorted(graph.modules):
        for imported in graph.find_modules_directly_imported_by(importer):
            if imported == importer or imported.startswith(importer + "."):
                continue
            back = graph.find_shortest_chain(importer=imported, imported=importer)
            if back and not importer.startswith(imported + "."):
                circles.append(" -> ".join((importer, *back)))
    assert not circles, "\n".join(sorted(set(circles))[:10])

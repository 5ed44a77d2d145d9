"""The boundary rules of docs/architecture.md (import-linter contracts in pyproject.toml) and ruff, as tests."""

from __future__ import annotations

import re
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
    """No import circles (one held workload.child.context -> interop -> frameworks -> context together)."""
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


def _forbidden_pairs() -> set[tuple[str, str]]:
    """(importer, imported) package pairs the import-linter contracts of pyproject.toml refuse."""
    import tomllib

    contracts = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]
    refused = set()
    for contract in contracts:
        if contract["type"] == "forbidden":
            refused |= {(s, f) for s in contract["source_modules"] for f in contract["forbidden_modules"]}
        elif contract["type"] == "layers":
            floors = [[name.strip() for name in floor.split("|")] for floor in contract["layers"]]
            for i, floor in enumerate(floors):
                refused |= {(low, high) for below in floors[i + 1 :] for low in below for high in floor}
                refused |= {(a, b) for a in floor for b in floor if a != b}
    return {(a.removeprefix("graphscope."), b.removeprefix("graphscope.")) for a, b in refused}


def test_the_layer_table_of_the_docs_is_what_the_contracts_enforce():
    """docs/architecture.md's Layers table says what each package may import; pyproject.toml's contracts
    must refuse exactly the rest (so neither the docs nor the contracts drift alone)."""
    text = (ROOT / "docs" / "architecture.md").read_text()
    rows = re.findall(r"^\| `(\w+)(?:/|\.py)` \| .* \| ([^|]+) \|$", text, flags=re.MULTILINE)
    table = {name: cell.strip() for name, cell in rows}
    packages = set(table)
    on_disk = {p.name for p in (ROOT / "graphscope").iterdir() if (p / "__init__.py").exists()} | {"cli"}
    assert packages == on_disk, f"packages missing from the table: {sorted(on_disk - packages)}"
    refused = _forbidden_pairs()
    for name, cell in table.items():
        if cell.startswith("nothing"):
            allowed: set[str] = set()
        elif cell.startswith("anything"):
            allowed = packages - set(re.findall(r"`(\w+)`", cell.removeprefix("anything")))
        else:
            allowed = {word.strip() for word in cell.replace(" and ", ", ").split(",")}
        assert allowed <= packages, f"{name}: unknown packages in {cell!r}"
        for other in sorted(packages - {name}):
            assert ((name, other) in refused) == (other not in allowed), (
                f"docs/architecture.md says {name} {'may' if other in allowed else 'may not'} import {other}; "
                "the contracts of pyproject.toml say otherwise"
            )

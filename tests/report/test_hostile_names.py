"""Hostile names in every report format, each read back by a parser of that format."""

from __future__ import annotations

import csv
import io
import json
import shutil
import sqlite3
from html.parser import HTMLParser

import pytest

from graphscope.cli import main
from tests import mutations
from tests.conftest import FORKJOIN


@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    path = tmp_path_factory.mktemp("hostile") / "hostile.sqlite"
    shutil.copy(FORKJOIN, path)
    with sqlite3.connect(path) as conn:
        mutations.hostile_names().apply(conn)
    return path


def _report(tmp_path, source, suffix, *extra):
    out = tmp_path / f"r{suffix}"
    assert main(["report", str(source), *extra, "-o", str(out)]) == 0
    return out.read_text()


def test_json_is_strict(tmp_path, hostile):
    text = _report(tmp_path, hostile, ".json")
    data = json.loads(text, parse_constant=lambda c: pytest.fail(f"{c} in JSON"))
    assert any("HYPERLINK" in k["name"] for k in data["kernels"])


def test_csv_cells_stay_cells_and_formulas_stay_text(tmp_path, hostile):
    rows = list(csv.reader(io.StringIO(_report(tmp_path, hostile, ".csv"))))
    assert len({len(r) for r in rows}) == 1  # every row as wide as the header
    names = [r[1] for r in rows[1:]] + [r[2] for r in rows[1:]]
    assert names and all(not n.startswith(("=", "+", "-", "@")) for n in names)
    assert any(n.startswith("'=HYPERLINK") for n in names)


def test_markdown_tables_keep_their_cell_counts(tmp_path, hostile):
    text = _report(tmp_path, hostile, ".md", "--title", "T\n| injected | row |")
    lines = text.splitlines()
    assert not any(line.startswith("| injected") for line in lines)
    for table in _tables(lines):
        widths = {_cells(line) for line in table}
        assert len(widths) == 1, table
    assert "<img" not in text and "<script" not in text


def test_html_shows_markup_as_text(tmp_path, hostile):
    text = _report(tmp_path, hostile, ".html", "--title", "<script>alert(1)</script>")

    class Tags(HTMLParser):
        def __init__(self) -> None:
            super().__init__()
            self.found: list[str] = []

        def handle_starttag(self, tag, attrs):
            self.found.append(tag)

    parser = Tags()
    parser.feed(text)
    assert "img" not in parser.found and "script" not in parser.found
    assert "&lt;img src=x onerror=alert(1)&gt;" in text


def _tables(lines):
    table: list[str] = []
    for line in lines:
        if line.startswith("|"):
            table.append(line)
        elif table:
            yield table
            table = []
    if table:
        yield table


def _cells(line: str) -> int:
    """GFM: cells are split on pipes that are not escaped."""
    count, escaped = 0, False
    for char in line.strip()[1:-1]:
        if char == "|" and not escaped:
            count += 1
        escaped = char == "\\" and not escaped
    return count + 1

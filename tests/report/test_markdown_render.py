"""Markdown reports read right once rendered (issue 44): a code span shows its text as written, with no
backslash before underscores, and the side's line does not repeat the file name."""

from __future__ import annotations

import shutil

import pytest

from graphscope.cli import main
from tests.conftest import DATA


def _code_spans(markdown: str) -> list[str]:
    """The text of every code span, as a CommonMark renderer shows it (markdown-it-py, which rich brings,
    when installed; else the text between single backticks)."""
    try:
        from markdown_it import MarkdownIt
    except ImportError:
        import re

        return re.findall(r"(?<!`)`([^`]+)`(?!`)", markdown)
    spans = []
    for block in MarkdownIt("commonmark").parse(markdown):
        spans += [t.content for t in block.children or [] if t.type == "code_inline"]
    return spans


def test_code_spans_show_paths_with_underscores_as_written(tmp_path, capsys):
    source = tmp_path / "my_trace_file.sqlite"
    shutil.copy(DATA / "h200_forkjoin_node.sqlite", source)
    out = tmp_path / "report.md"
    assert main(["report", str(source), "-o", str(out)]) == 0
    text = out.read_text()
    assert str(source) in _code_spans(text)  # no "my\_trace\_file" with its backslashes shown
    side = next(line for line in text.splitlines() if line.startswith("- **A**"))
    assert side.count("my_trace_file") == 1  # the path once, not the label, then the path again


def test_a_backtick_in_a_path_keeps_the_code_span_whole(tmp_path):
    from graphscope.report.formats import _code

    assert _code("a`b_c") == "``a`b_c``" and _code("`x`") == "`` `x` ``"
    markdown_it = pytest.importorskip("markdown_it")
    tokens = markdown_it.MarkdownIt("commonmark").parseInline("see " + _code("dir/a`b_c.sqlite") + " here")
    assert [t.content for t in tokens[0].children if t.type == "code_inline"] == ["dir/a`b_c.sqlite"]

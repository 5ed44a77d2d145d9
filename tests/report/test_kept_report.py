"""A report of trace files asked again is the kept one (report/compose.py): the same file a fresh report
writes, made without reading the traces; a changed file, other arguments or a stored run are made again."""

from __future__ import annotations

import json
import os
import re
import shutil

import pytest

from graphscope.cli import main
from graphscope.report import compose
from tests.conftest import H200_GRAPH, H200_NODE


def _no_making(*args, **kwargs):
    raise AssertionError("the report was made again, where the kept one answers")


def _written(tmp_path, capsys, *args: str, name: str = "r.json") -> tuple[str, str]:
    out = tmp_path / name
    assert main(["report", *args, "-o", str(out)]) == 0
    return out.read_text(), capsys.readouterr().out


def _without_time(text: str) -> str:
    """The report without the time it was made (compare.py's `created`, ISO 8601 in UTC)."""
    return re.sub(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00", "", text)


@pytest.fixture
def pair(tmp_path):
    a, b = tmp_path / "a.sqlite", tmp_path / "b.sqlite"
    shutil.copy(H200_GRAPH, a)
    shutil.copy(H200_NODE, b)
    return str(a), str(b)


@pytest.mark.parametrize("name", ["r.json", "r.html", "r.md"])
def test_the_same_report_again_is_the_kept_one_and_what_a_fresh_report_writes(
    own_cache, tmp_path, capsys, monkeypatch, pair, name
):
    first, said = _written(tmp_path, capsys, *pair, name=name)
    monkeypatch.setattr(compose, "_made", _no_making)
    again, said_again = _written(tmp_path, capsys, *pair, name=name)
    monkeypatch.undo()
    fresh, said_fresh = _written(tmp_path, capsys, *pair, "--no-cache", name=name)
    assert said == said_again == said_fresh
    assert _without_time(first) == _without_time(again) == _without_time(fresh)  # only the time it was made
    if name == "r.json":
        assert json.loads(again)["created"] >= json.loads(first)["created"]  # made now, from the kept numbers


def test_a_changed_file_or_other_arguments_make_the_report_again(own_cache, tmp_path, capsys, pair):
    _written(tmp_path, capsys, *pair)
    made = []
    real = compose._made
    compose_made = lambda *a: made.append(a[0]) or real(*a)  # noqa: E731
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(compose, "_made", compose_made)
        _written(tmp_path, capsys, *pair, "--title", "another")
        assert len(made) == 1
        _written(tmp_path, capsys, pair[1], pair[0])  # B against A
        assert len(made) == 2
        os.utime(pair[1], ns=(1, 1))  # the file changed (its times are part of its identity)
        _written(tmp_path, capsys, *pair)
        assert len(made) == 3
        _written(tmp_path, capsys, *pair)
        assert len(made) == 3


def test_stored_sources_are_never_kept():
    assert compose.report_question(["run:1"], None, None, None, True) is None
    assert compose.report_question(["tune:1"], None, None, None, True) is None
    assert compose.report_question([str(H200_GRAPH), "nvtx:step"], None, None, None, True) is not None

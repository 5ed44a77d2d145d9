"""A summarised file's other questions (another `--top`, the other format) come from its kept summary,
without reading the trace, and are the answers a fresh computation gives; another scope is computed."""

from __future__ import annotations

import json
import shutil
import sqlite3

import pytest

from graphscope.analysis import summary_file
from graphscope.analysis.summary_file import KEPT_TOP, summary_of_file, summary_question
from graphscope.cli import main
from graphscope.core import answer_cache
from tests.conftest import FORKJOIN


def _no_reading(*args, **kwargs):
    raise AssertionError("the trace was read, where the kept summary answers")


def test_another_top_of_a_summarised_file_is_its_kept_summary(own_cache, tmp_path, monkeypatch):
    path = tmp_path / "f.sqlite"
    shutil.copy(FORKJOIN, path)
    first = summary_of_file(path, top=2)
    with sqlite3.connect(path) as db:  # a second way: the trace's kernel names
        names = db.execute("SELECT COUNT(DISTINCT shortName) FROM CUPTI_ACTIVITY_KIND_KERNEL").fetchone()[0]
    assert len(first["top_kernels"]) == min(2, names)
    monkeypatch.setattr(summary_file, "_computed", _no_reading)
    again = summary_of_file(path, top=5)
    monkeypatch.undo()
    monkeypatch.setenv("GRAPHSCOPE_NO_CACHE", "1")
    fresh = summary_of_file(path, top=5)
    assert again == fresh and len(again["top_kernels"]) == min(5, names)
    assert again["top_kernels"][:2] == first["top_kernels"]


def test_a_scope_or_a_top_beyond_the_kept_list_is_computed(own_cache, tmp_path, monkeypatch):
    path = tmp_path / "f.sqlite"
    shutil.copy(FORKJOIN, path)
    summary_of_file(path)
    calls = []
    computed = summary_file._computed
    monkeypatch.setattr(summary_file, "_computed", lambda *a: calls.append(a[1:3]) or computed(*a))
    summary_of_file(path, range_text="0ms:1ms")  # another scope: another analysis
    assert calls == [(KEPT_TOP, "0ms:1ms")]
    kept = json.loads(answer_cache.get(path, summary_question(path)))
    if len(kept["summary"]["top_kernels"]) >= KEPT_TOP:  # a trace with more names than were kept
        summary_of_file(path, top=KEPT_TOP + 1)
        assert len(calls) == 2
    else:  # every name kept: any --top is the kept list
        summary_of_file(path, top=KEPT_TOP + 1)
        assert len(calls) == 1


@pytest.mark.parametrize("shown", [["--json"], []], ids=["json", "text"])
def test_the_command_answers_another_top_as_a_fresh_process_would(own_cache, tmp_path, capsys, monkeypatch, shown):
    path = tmp_path / "f.sqlite"
    shutil.copy(FORKJOIN, path)
    assert main(["summary", "--json", str(path)]) == 0
    capsys.readouterr()
    monkeypatch.setattr(summary_file, "_computed", _no_reading)
    assert main(["summary", *shown, "--top", "1", str(path)]) == 0
    warm = capsys.readouterr().out
    monkeypatch.undo()
    assert main(["summary", *shown, "--top", "1", "--no-cache", str(path)]) == 0
    assert warm == capsys.readouterr().out


@pytest.mark.parametrize("source", ["FORKJOIN", "TORCH_MLP"])
def test_the_nvtx_table_of_a_summarised_scope_joins_its_kept_summary(own_cache, tmp_path, monkeypatch, source):
    import tests.conftest as shipped

    path = tmp_path / "f.sqlite"
    shutil.copy(getattr(shipped, source), path)
    summary_of_file(path)
    monkeypatch.setattr(summary_file, "_computed", _no_reading)  # only the NVTX table is computed
    joined = summary_of_file(path, by_nvtx=True)
    monkeypatch.undo()
    monkeypatch.setenv("GRAPHSCOPE_NO_CACHE", "1")
    fresh = summary_of_file(path, by_nvtx=True)
    assert json.dumps(joined) == json.dumps(fresh)  # the same keys in the same order, the same values
    assert "nvtx_ranges" in joined

"""`graphscope summary`: the JSON contract, the readable table, and bad input (exit 2, one line)."""

from __future__ import annotations

import gc
import json
import subprocess
import sys

import pytest

from graphscope.cli import main
from tests.conftest import DATA, H200_NODE


def test_json_output(capsys):
    assert main(["summary", str(H200_NODE), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["kernels"]["count"] == 7005 and summary["graphs"]["launches"] == 3
    assert summary["launch"]["launch_bound"] is True


def test_readable_table(capsys):
    assert main(["summary", str(H200_NODE), "--top", "2"]) == 0
    out = capsys.readouterr().out
    assert "eager launch calls remain" in out and "vec_add" in out and "graph launches    3" in out
    top = out.split("Top kernels")[1]
    assert "generate_seed_pseudo" in top and "gen_sequenced" not in top  # only the top 2


def test_readable_table_of_an_nvtx_only_file(capsys):
    assert main(["summary", str(DATA / "YoonKyonghwan__EfficientCenterFormer__poolformer.sqlite")]) == 0
    out = capsys.readouterr().out
    assert "Not in this file" in out and "no kernel table" in out


def _file(folder, name, content: bytes):
    path = folder / name
    path.write_bytes(content)
    return path


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda tmp: tmp / "missing.sqlite", "no such file"),
        (lambda tmp: tmp, "a folder with no traces"),  # a folder is a job's rank traces
        (lambda tmp: _file(tmp, "e.sqlite", b""), "empty"),
        (lambda tmp: _file(tmp, "t.sqlite", H200_NODE.read_bytes()[:40_000]), "damaged or truncated"),
        (lambda tmp: _file(tmp, "x.txt", b"hello" * 200), "not an SQLite file"),
    ],
)
def test_bad_input_exits_2_with_one_line(tmp_path, capsys, make, message):
    assert main(["summary", str(make(tmp_path))]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1 and "Traceback" not in err


def test_the_installed_command_exits_2_without_traceback(tmp_path):
    result = subprocess.run(
        [sys.executable, "-m", "graphscope", "summary", str(tmp_path / "nope")], capture_output=True, text=True
    )
    assert result.returncode == 2 and result.stderr.startswith("graphscope: error:")
    assert "Traceback" not in result.stderr


def test_the_cycle_collector_is_off_during_a_summary_and_back_on_after(monkeypatch, capsys):
    import graphscope.analysis.summary as summary_module

    seen = []
    original = summary_module.summarize
    monkeypatch.setattr(summary_module, "summarize", lambda *a, **k: seen.append(gc.isenabled()) or original(*a, **k))
    monkeypatch.setenv("GRAPHSCOPE_NO_CACHE", "1")  # computed, not a kept answer
    assert main(["summary", "--json", str(H200_NODE)]) == 0
    assert seen == [False] and gc.isenabled()
    capsys.readouterr()

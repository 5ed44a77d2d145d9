"""What reaches the terminal: names from a trace with their control characters shown, never obeyed, and
file names that are not UTF-8 shown byte for byte in every command (never a UnicodeEncodeError)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from graphscope.cli import main
from graphscope.core.text import printable, printable_tree, shown_path
from tests.conftest import FORKJOIN

HOSTILE = "k\x1b[31mRED\x1b]52;c;aGVsbG8=\x07\rX\x9b\u202eY\nVerdict"
"""ESC colours, an OSC 52 write to the clipboard ended by BEL, a carriage return, a C1 CSI, a bidi
override and a newline that would start a line of its own."""
OBEYED = ("\x1b", "\x07", "\r", "\x9b", "\u202e")


def _trace(tmp_path: Path, name: str) -> Path:
    def event(n: str, cat: str, ts: int, **args: object) -> dict:
        return {"ph": "X", "cat": cat, "name": n, "pid": 1, "tid": 2, "ts": ts, "dur": 4, "args": args}

    calls = [event("cudaLaunchKernel", "cuda_runtime", 10 * i, correlation=i) for i in range(3)]
    kernels = [event(name, "kernel", 100 + 10 * i, correlation=i, device=0, stream=7) for i in range(3)]
    path = tmp_path / "t.json"
    path.write_text(json.dumps({"traceEvents": calls + kernels}))
    return path


def test_printable_escapes_every_control_and_keeps_text():
    assert printable("ok ünïcode 名前") == "ok ünïcode 名前"
    assert printable(HOSTILE) == "k\\x1b[31mRED\\x1b]52;c;aGVsbG8=\\x07\\x0dX\\x9b\\u202eY\\nVerdict"
    assert printable("a\tb\nc", keep_lines=True) == "a\tb\nc" and printable("\x7f\x00") == "\\x7f\\x00"
    assert shown_path(os.fsdecode(b"x\xff.sqlite")) == "x\\xff.sqlite"
    tree = {"a": [HOSTILE, 3, None], "b": ("\x1b",)}
    assert printable_tree(tree) == {"a": [printable(HOSTILE), 3, None], "b": ["\\x1b"]}


def test_summary_text_shows_terminal_controls_and_json_keeps_the_name(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("GRAPHSCOPE_NO_CACHE", "1")  # --no-cache sets it for the process: restored after
    path = _trace(tmp_path, HOSTILE)
    assert main(["summary", "--no-cache", str(path)]) == 0
    out = capsys.readouterr().out
    assert not any(c in out for c in OBEYED)
    assert "k\\x1b[31mRED\\x1b]52;c;aGVsbG8=\\x07\\x0dX\\x9b" in out
    assert [line for line in out.splitlines() if line.startswith("Verdict")] == ["Verdict"]  # none forged
    assert main(["summary", "--no-cache", "--json", str(path)]) == 0
    names = [k["name"] for k in json.loads(capsys.readouterr().out)["top_kernels"]]
    assert names == [HOSTILE]  # JSON escapes by itself and keeps the name exact


def test_a_file_name_with_controls_is_escaped_in_the_error_line(tmp_path, capsys):
    path = tmp_path / "e\x1b]52;c;aGk=\x07.sqlite"
    path.write_text("x")
    assert main(["summary", str(path)]) == 2
    err = capsys.readouterr().err
    assert "e\\x1b]52;c;aGk=\\x07.sqlite" in err and "\x1b" not in err and err.count("\n") == 1


@pytest.mark.skipif(sys.platform != "linux", reason="file names as bytes")
def test_names_that_are_not_utf8_work_in_every_command(tmp_path):
    """Run as the user does (the console entry point), with stdout strict UTF-8."""
    trace = tmp_path / os.fsdecode(b"x\xff.sqlite")
    trace.write_bytes(FORKJOIN.read_bytes())
    env = {**os.environ, "PYTHONIOENCODING": "utf-8", "GRAPHSCOPE_NO_CACHE": "1", "PYTHONPATH": os.getcwd()}

    def run(*args: str) -> subprocess.CompletedProcess:
        command = [sys.executable, "-m", "graphscope", *args]
        return subprocess.run(command, capture_output=True, env=env, cwd=tmp_path, timeout=120)

    summary = run("summary", trace.name)
    assert summary.returncode == 0 and summary.stdout.startswith(b"x\\xff.sqlite\n"), summary.stderr
    exported = run("export", trace.name, "-o", os.fsdecode(b"o\xff.json"))
    assert exported.returncode == 0 and b"wrote o\\xff.json" in exported.stdout, exported.stderr
    json.loads((tmp_path / os.fsdecode(b"o\xff.json")).read_bytes().decode("utf-8"))
    report = run("report", trace.name, trace.name, "-o", os.fsdecode(b"r\xff.md"))
    assert report.returncode == 0, report.stderr
    title = (tmp_path / os.fsdecode(b"r\xff.md")).read_bytes().decode("utf-8").splitlines()[0]
    assert title.count("x\\xff.sqlite") == 2 and " vs " in title  # both sides named, byte for byte
    missing = run("summary", os.fsdecode(b"gone\xfe.sqlite"))
    assert missing.returncode == 2 and missing.stderr == b"graphscope: error: gone\\xfe.sqlite: no such file\n"


def test_an_output_name_with_controls_is_escaped_in_the_wrote_line(tmp_path, capsys):
    trace = _trace(tmp_path, "k")
    out = tmp_path / "\x1b[2J\x1b[31mx.json"
    assert main(["export", str(trace), "-o", str(out)]) == 0
    assert main(["report", str(trace), "-o", str(out.with_suffix(".md"))]) == 0
    printed = capsys.readouterr().out
    assert printed.count("\\x1b[2J\\x1b[31mx.") == 2 and "\x1b" not in printed and out.is_file()

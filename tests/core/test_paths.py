"""Outputs never destroy inputs and are written whole or not at all (core/paths.py, and every command
that writes a file)."""

from __future__ import annotations

import errno
import os
import sys
from pathlib import Path

import numpy as np
import pytest

from graphscope.cli import main
from graphscope.core import paths
from graphscope.core.errors import BadInputError
from graphscope.core.paths import refuse_inputs, same_file, write_replacing
from tests.conftest import DATA, FORKJOIN

KINETO = DATA / "kineto" / "hta__triton_example.json.gz"


def _full_midway(monkeypatch) -> None:
    """os.write that puts out half of what it is given, then fails as a full disk does."""
    real = os.write

    def write(fd: int, data) -> int:
        if len(data) > 1:
            real(fd, bytes(data[: len(data) // 2]))
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(paths.os, "write", write)


def test_same_file_sees_through_symlinks_and_hard_links(tmp_path):
    original = tmp_path / "t.json"
    original.write_text("{}")
    (tmp_path / "link.json").symlink_to(original)
    os.link(original, tmp_path / "hard.json")
    (tmp_path / "sub").mkdir()
    assert same_file(original, tmp_path / "link.json")
    assert same_file(original, tmp_path / "hard.json")
    assert same_file(original, tmp_path / "sub" / ".." / "t.json")
    assert not same_file(original, tmp_path / "other.json")  # not there: not the same
    (tmp_path / "copy.json").write_text("{}")
    assert not same_file(original, tmp_path / "copy.json")  # equal bytes, another file


def test_a_full_disk_leaves_the_previous_file_whole(tmp_path, monkeypatch):
    out = tmp_path / "r.html"
    out.write_text("the previous report")
    out.chmod(0o640)
    _full_midway(monkeypatch)
    with pytest.raises(BadInputError, match=r"r\.html: cannot write the report \(No space left on device"):
        write_replacing(out, "x" * 100_000, "the report")
    assert out.read_text() == "the previous report"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.html"]  # no temporary left behind
    monkeypatch.undo()
    write_replacing(out, "the new report")
    assert out.read_text() == "the new report" and (out.stat().st_mode & 0o777) == 0o640  # permissions kept


def test_a_symlinked_output_is_written_through_and_stays_a_link(tmp_path):
    target = tmp_path / "real.md"
    target.write_text("old")
    (tmp_path / "link.md").symlink_to(target)
    write_replacing(tmp_path / "link.md", "new")
    assert (tmp_path / "link.md").is_symlink() and target.read_text() == "new"


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="Linux's /dev/full")
def test_a_device_is_written_in_place_and_its_error_is_one_line(tmp_path):
    (tmp_path / "full.json").symlink_to("/dev/full")
    with pytest.raises(BadInputError, match=r"cannot write the report \(No space left on device"):
        write_replacing(tmp_path / "full.json", "{}" * 10_000, "the report")
    assert Path("/dev/full").is_char_device()  # not replaced by a regular file


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="Linux's /dev/full")
def test_a_report_to_a_full_device_is_one_line(tmp_path, capsys):
    (tmp_path / "r.json").symlink_to("/dev/full")
    assert main(["report", str(FORKJOIN), str(FORKJOIN), "-o", str(tmp_path / "r.json")]) == 2
    err = capsys.readouterr().err
    assert "No space left on device" in err and err.count("\n") == 1


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="Linux's /dev/full")
def test_an_export_to_a_full_device_is_one_line_and_the_link_stays(tmp_path, capsys):
    (tmp_path / "t.json").symlink_to("/dev/full")
    assert main(["export", str(KINETO), "-o", str(tmp_path / "t.json")]) == 2
    err = capsys.readouterr().err
    assert "cannot write the trace (No space left on device)" in err and err.count("\n") == 1
    assert (tmp_path / "t.json").is_symlink()


def test_a_report_on_a_full_disk_keeps_the_previous_report(tmp_path, monkeypatch, capsys):
    out = tmp_path / "r.html"
    out.write_text("<p>last week's report</p>")
    _full_midway(monkeypatch)
    assert main(["report", str(FORKJOIN), str(FORKJOIN), "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert "cannot write the report (No space left on device)" in err and err.count("\n") == 1
    assert out.read_text() == "<p>last week's report</p>"


@pytest.mark.parametrize("alias", ["same", "symlink", "hard link", "dotted"])
@pytest.mark.parametrize("command", ["export", "report", "report pair"])
def test_an_output_that_is_an_input_is_refused_and_left_alone(tmp_path, capsys, alias, command):
    trace = tmp_path / "t.json.gz" if command == "export" else tmp_path / "t.json"
    trace.write_bytes(KINETO.read_bytes() if command == "export" else b'{"traceEvents": []}')
    out = {
        "same": trace,
        "symlink": tmp_path / f"link{''.join(trace.suffixes)}",
        "hard link": tmp_path / f"hard{''.join(trace.suffixes)}",
        "dotted": tmp_path / "." / trace.name,
    }[alias]
    if alias == "symlink":
        out.symlink_to(trace)
    elif alias == "hard link":
        os.link(trace, out)
    before = trace.read_bytes()
    args = {
        "export": ["export", str(trace), "-o", str(out)],
        "report": ["report", str(trace), "-o", str(out)],
        "report pair": ["report", str(FORKJOIN), str(trace), "-o", str(out)],
    }[command]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "is one of the inputs" in err and err.count("\n") == 1
    assert trace.read_bytes() == before


def test_a_rank_folders_trace_cannot_be_the_report_but_a_report_beside_them_can(tmp_path, capsys):
    from graphscope.ranks.job import TRACE_SUFFIXES

    folder = tmp_path / "job"
    folder.mkdir()
    for rank in range(3):
        (folder / f"rank{rank}.json").write_text('{"traceEvents": []}')
    assert main(["report", str(folder), "-o", str(folder / "rank1.json")]) == 2
    assert "is one of the inputs" in capsys.readouterr().err
    assert (folder / "rank1.json").read_text() == '{"traceEvents": []}'
    (folder / "report.html").write_text("last run's report")
    refuse_inputs(folder / "report.html", [folder], "-o", TRACE_SUFFIXES)  # not a rank trace: may be replaced


def test_tune_never_saves_over_its_workload_but_may_update_its_config(tmp_path, capsys):
    workload = tmp_path / "w.py"
    workload.write_text("def setup(ctx):\n    return lambda ctx: None\n")
    assert main(["tune", str(workload), "--save", str(workload)]) == 2
    assert "--save" in capsys.readouterr().err and "def setup" in workload.read_text()
    config = tmp_path / "c.json"
    config.write_text("{}")
    main(["tune", str(workload), "--config", str(config), "--save", str(config)])  # read whole first: allowed
    assert "is one of the inputs" not in capsys.readouterr().err
    assert config.read_text() == "{}"  # nothing adopted here (no GPU, or a config refused): left as it was


def test_a_session_database_cannot_be_the_workload(tmp_path, capsys):
    workload = tmp_path / "w.py"
    workload.write_text("def setup(ctx):\n    return lambda ctx: None\n")
    before = workload.read_bytes()
    assert main(["run", str(workload), "--session", str(workload)]) == 2
    assert "--session" in capsys.readouterr().err and workload.read_bytes() == before


def test_refuse_inputs_ignores_options_not_given(tmp_path):
    refuse_inputs(None, [tmp_path], "-o")
    refuse_inputs(tmp_path / "new.json", [None, tmp_path / "t.json"], "-o")


@pytest.mark.skipif(sys.platform != "linux", reason="file names as bytes")
def test_a_non_utf8_output_name_is_shown_byte_for_byte(tmp_path):
    name = os.fsdecode(b"r\xff.json")
    (tmp_path / name).write_text("{}")
    with pytest.raises(BadInputError, match=r"r\\xff.json: is one of the inputs"):
        refuse_inputs(tmp_path / name, [tmp_path / name], "-o")


def test_exact_total_never_wraps():
    """NumPy's int64 sum wraps silently; the total of three 4e18 values is 1.2e19, not -6.4e18."""
    from graphscope.core.bounds import exact_total

    values = np.array([4 * 10**18] * 3 + [-5, 7], dtype=np.int64)
    assert int(values.sum()) < 0  # what the plain sum says
    assert exact_total(values) == sum(int(v) for v in values.tolist()) == 12 * 10**18 + 2
    negative = -values
    assert exact_total(negative) == -(12 * 10**18 + 2)
    small = np.arange(1000, dtype=np.int32)
    assert exact_total(small) == 499_500 and exact_total(np.empty(0, np.int64)) == 0

"""Closed and full streams, and arguments: one line and exit 2 for every refusal, 0 for every success."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.conftest import FORKJOIN

GRAPHSCOPE = [sys.executable, "-c", "from graphscope.cli import console; console()"]


def _shell(line: str) -> subprocess.CompletedProcess:
    command = " ".join(f"'{c}'" for c in GRAPHSCOPE)
    return subprocess.run(["bash", "-c", f"{command} {line}"], capture_output=True, text=True, timeout=120)


def test_a_closed_stdout_is_not_an_error():
    result = _shell(f"summary {FORKJOIN} >&-")
    assert result.returncode == 0 and "Traceback" not in result.stderr


def test_a_closed_stderr_keeps_exit_codes_and_keeps_errors_off_stdout():
    ok = _shell(f"summary {FORKJOIN} 2>&-")
    assert ok.returncode == 0 and ok.stdout.startswith(str(FORKJOIN))
    bad = _shell("summary nope.sqlite 2>&-")
    assert bad.returncode == 2 and bad.stdout == ""


def test_a_full_disk_behind_stdout_is_named():
    result = _shell(f"summary --json {FORKJOIN} > /dev/full")
    assert (
        result.returncode == 2
        and result.stderr.strip() == "graphscope: error: standard output: No space left on device"
    )


@pytest.mark.parametrize(
    "args, words",
    [
        (["summary"], "the following arguments are required: FILE"),
        (["summary", str(FORKJOIN), "--top", "x"], "invalid int value"),
        (["run", "w.py", "--timeout", "-1"], "give a positive number of seconds"),
        (["run", "w.py", "--timeout", "0"], "give a positive number of seconds"),
        (["run", "w.py", "--cpu", "99999"], "not one this process may use"),
        (["summary", str(FORKJOIN), "--range", "-5ms:-1ms"], "outside the trace"),
        (["summary", str(FORKJOIN), "--range", "5s:6s"], "outside the trace"),
        (["summary", str(FORKJOIN), "--range", "12:40"], "give '12' a unit"),
        (["summary", str(FORKJOIN), "--range", "1e308ms:2e308ms"], "longer than any trace can be"),
        (["summary", str(FORKJOIN), "--range", "1e20:1e21"], "longer than any trace can be"),
        (["summary", str(FORKJOIN), "--nvtx", ""], "name the NVTX range"),
        (["bogus"], "invalid choice"),
    ],
)
def test_argument_errors_are_one_line(capsys, args, words):
    assert _status(args) == 2
    err = capsys.readouterr().err
    assert words in err and err.count("\n") == 1, err


def _status(args: list[str]) -> int:
    """main's exit status, whether it returns it or argparse exits with it."""
    from graphscope.cli import main

    try:
        return main(args)
    except SystemExit as exc:
        return int(exc.code)


def test_a_range_partly_outside_the_trace_is_clipped_to_it(capsys):
    from graphscope.cli import main

    assert main(["summary", str(FORKJOIN), "--json", "--range", "-1ms:5ms"]) == 0
    assert '"label": "0 ns to 5 ms"' in capsys.readouterr().out


@pytest.mark.parametrize(
    "content, words",
    [("[1, 2]", "a JSON list, not an object"), ("[" * 100_000 + "]" * 100_000, "nested too deeply")],
)
def test_a_config_that_is_not_a_config_is_one_line(tmp_path, capsys, content, words):
    from graphscope.cli import main

    config = tmp_path / "c.json"
    config.write_text(content)
    workload = tmp_path / "w.py"
    workload.write_text("def setup(ctx):\n    return lambda ctx: None\n")
    assert main(["run", str(workload), "--config", str(config)]) == 2
    err = capsys.readouterr().err
    assert words in err and err.count("\n") == 1

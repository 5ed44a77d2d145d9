"""Arguments checked before any work starts, pipes closed early, and failures that still speak JSON.

Each case runs `graphscope` as a user would, in a fresh process with a time limit: a hang fails.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from graphscope.store.session_db import SessionStore
from tests.conftest import FORKJOIN, H200_NODE


def graphscope(tmp_path, *args, env=None, timeout=90):
    environment = {
        **os.environ,
        "QT_QPA_PLATFORM": "offscreen",
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "GRAPHSCOPE_DATA_DIR": str(tmp_path / "data"),
        **(env or {}),
    }
    return subprocess.run(
        [sys.executable, "-m", "graphscope", *args], capture_output=True, text=True, env=environment, timeout=timeout
    )


def one_line_error(result, *words):
    assert result.returncode == 2, result.stderr
    assert result.stderr.startswith("graphscope: error: ") and result.stderr.count("\n") == 1, result.stderr
    for word in words:
        assert word in result.stderr


@pytest.mark.parametrize(
    "select, words",
    [
        ("foo", ["graph:N"]),
        ("graph:0", ["counts from 1"]),
        ("graph:x", ["takes a number"]),
        ("graph:6", ["has 5 graph launches"]),  # one beyond what the trace holds
        ("kernel:999999", ["has 52 kernels"]),
        ("kernel:no_such_kernel", ["no kernel"]),
        ("nvtx:nope", ["no NVTX range"]),
    ],
)
def test_bad_selections_exit_2_and_never_hang(tmp_path, select, words):
    png = tmp_path / "x.png"
    result = graphscope(tmp_path, "open", str(FORKJOIN), "--screenshot", str(png), "--select", select)
    one_line_error(result, *words)
    assert not png.exists()


@pytest.mark.parametrize("select", ["graph:1", "kernel:3", "kernel:relu"])
def test_good_selections_render(tmp_path, select):
    png = tmp_path / "x.png"
    result = graphscope(tmp_path, "open", str(FORKJOIN), "--screenshot", str(png), "--select", select)
    assert result.returncode == 0, result.stderr
    assert png.stat().st_size > 10_000


@pytest.mark.parametrize(
    "args, words",
    [
        (["--screenshot", "/no/such/dir/x.png"], ["does not exist"]),
        (["--screenshot", "{tmp}/x.txt"], [".png"]),
        (["--screenshot", "{tmp}/x.png", "--size", "huge"], ["WIDTHxHEIGHT"]),
        (["--screenshot", "{tmp}/x.png", "--size", "10x10"], ["between"]),
    ],
)
def test_screenshot_arguments_are_checked_first(tmp_path, args, words):
    args = [a.replace("{tmp}", str(tmp_path)) for a in args]
    one_line_error(graphscope(tmp_path, "open", str(FORKJOIN), *args), *words)


def test_a_missing_file_is_refused_before_a_window_opens(tmp_path):
    one_line_error(graphscope(tmp_path, "open", str(tmp_path / "nope.sqlite"), "--screenshot", str(tmp_path / "x.png")))


def test_screenshots_ignore_and_keep_the_users_layout_and_recent_files(tmp_path):
    from PySide6.QtCore import QSettings

    config = tmp_path / "config"
    shots = []
    for i in range(2):
        png = tmp_path / f"shot{i}.png"
        assert graphscope(tmp_path, "open", str(FORKJOIN), "--screenshot", str(png)).returncode == 0
        shots.append(png.read_bytes())
        if i == 0:  # a user's saved layout and recent files appear between the two
            QSettings.setPath(QSettings.Format.NativeFormat, QSettings.Scope.UserScope, str(config))
            settings = QSettings("graphscope", "graphscope")
            settings.setValue("recent_files", [str(H200_NODE)])
            settings.setValue("window_state", b"garbage")
            settings.sync()
    assert shots[0] == shots[1]
    settings = QSettings("graphscope", "graphscope")
    settings.sync()
    assert settings.value("recent_files") == [str(H200_NODE)]


def test_an_invisible_platform_without_a_screenshot_explains_itself(tmp_path):
    result = graphscope(tmp_path, "open", str(FORKJOIN), env={"QT_QPA_PLATFORM": "offscreen"}, timeout=30)
    one_line_error(result, "QT_QPA_PLATFORM=offscreen", "--screenshot")


@pytest.mark.parametrize("command", [["summary", "--json"], ["dag", "--json"], ["summary"]])
def test_a_reader_that_leaves_early_is_not_an_error(tmp_path, command):
    script = f"{sys.executable} -m graphscope {' '.join(command)} {H200_NODE} | head -c 10"
    result = subprocess.run(
        ["bash", "-o", "pipefail", "-c", script], capture_output=True, text=True, timeout=90, env=os.environ
    )
    assert result.returncode == 0, result.stderr
    assert result.stderr == "" and len(result.stdout) == 10


def test_a_refused_run_prints_json_and_is_not_stored(tmp_path):
    workload = tmp_path / "w.py"
    workload.write_text("def setup(ctx):\n    return lambda ctx: None\n")
    session = tmp_path / "s.sqlite"
    result = graphscope(tmp_path, "run", str(workload), "--json", "--session", str(session), "--reps", "3")
    assert result.returncode == 2 and result.stderr.count("\n") == 1
    answer = json.loads(result.stdout)
    assert answer["ok"] is False and answer["error"]["kind"] in ("no_gpu", "bad_workload")
    assert answer["error"]["run_id"] is None and SessionStore(session).runs() == []


def test_a_missing_workload_prints_one_line(tmp_path):
    one_line_error(graphscope(tmp_path, "run", str(tmp_path / "none.py"), "--json"), "no such workload")


def test_the_whole_answer_is_written_before_the_fast_exit(tmp_path):
    result = graphscope(tmp_path, "summary", "--json", "--by-nvtx", str(H200_NODE))
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["kernels"]["count"] > 0  # flushed whole, then os._exit
    out = tmp_path / "out.json"
    with open(out, "w") as handle:  # a file, not a pipe: block-buffered
        subprocess.run(
            [sys.executable, "-m", "graphscope", "summary", "--json", str(FORKJOIN)], stdout=handle, check=True
        )
    assert json.loads(out.read_text())["file"] == str(FORKJOIN)


PROCESS_PROBE = (
    "import os, sys; from graphscope.core.process import prepare, user_environment; "
    "from graphscope.workload.session import child_environment; prepare(); import numpy; "
    "print(os.environ.get('OPENBLAS_NUM_THREADS'), user_environment().get('OPENBLAS_NUM_THREADS'), "
    "child_environment().get('OPENBLAS_NUM_THREADS'))"
)


@pytest.mark.parametrize("users", [None, "4"])
def test_one_blas_thread_for_graphscope_and_the_users_setting_for_workloads(users):
    environment = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    if users:
        environment["OPENBLAS_NUM_THREADS"] = users
    result = subprocess.run([sys.executable, "-c", PROCESS_PROBE], capture_output=True, text=True, env=environment)
    assert result.stdout.split() == (["1", "None", "None"] if users is None else [users] * 3), result.stderr

"""A workload that raises, hangs, crashes or is malformed ends as a named WorkloadError, and the
calling process is unharmed. These run without a GPU: the failures happen before CUDA is touched."""

from __future__ import annotations

import os
import time

import pytest

from graphscope.core.errors import Cancelled, NoGpuError, WorkloadError
from graphscope.core.progress import CancelToken
from graphscope.workload.session import WorkloadSession


def _workload(tmp_path, body: str):
    path = tmp_path / "workload.py"
    path.write_text(body)
    return path


def _fails(path, timeout=30.0, cancel=None):
    with pytest.raises(WorkloadError) as caught:
        WorkloadSession(path, timeout=timeout, cancel=cancel)
    return caught.value


def test_an_exception_names_its_type_file_and_line(tmp_path):
    path = _workload(tmp_path, "print('noise on stdout')\nx = 1\nraise ValueError('bad shape 3x4')\n")
    error = _fails(path)
    assert error.kind == "raised"
    assert "ValueError: bad shape 3x4" in error.message and "workload.py, line 3" in error.message
    assert "Traceback" in error.details


def test_a_file_without_setup_is_not_a_workload(tmp_path):
    error = _fails(_workload(tmp_path, "def step(ctx):\n    pass\n"))
    assert error.kind == "bad_workload" and "setup(ctx)" in error.message


def test_a_hang_is_stopped_after_the_timeout(tmp_path):
    started = time.monotonic()
    error = _fails(_workload(tmp_path, "while True:\n    pass\n"), timeout=2.0)
    assert error.kind == "timeout" and "took longer than 2 s" in error.message
    assert time.monotonic() - started < 20


def test_a_crash_reports_the_signal(tmp_path):
    error = _fails(_workload(tmp_path, "import ctypes\nctypes.string_at(0)\n"))
    assert error.kind == "died" and "SIGSEGV" in error.message


def test_running_out_of_memory_is_named(tmp_path):
    error = _fails(_workload(tmp_path, "raise MemoryError('cannot allocate 80 GiB')\n"))
    assert error.kind == "out_of_memory" and "ran out of GPU memory" in error.message


def test_sys_exit_in_a_workload_is_reported_not_obeyed(tmp_path):
    error = _fails(_workload(tmp_path, "import sys\nsys.exit(3)\n"))
    assert error.kind == "raised" and "SystemExit" in error.message


def test_cancel_stops_a_hanging_workload(tmp_path):
    token = CancelToken()
    import threading

    threading.Timer(1.0, token.cancel).start()
    with pytest.raises(Cancelled):
        WorkloadSession(_workload(tmp_path, "import time\ntime.sleep(60)\n"), timeout=60, cancel=token)


def test_no_child_is_left_behind(tmp_path):
    before = set(os.listdir("/proc"))
    _fails(_workload(tmp_path, "while True:\n    pass\n"), timeout=1.0)
    time.sleep(0.2)
    survivors = []
    for pid in set(os.listdir("/proc")) - before:
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as handle:
                if b"graphscope.workload.child" in handle.read():
                    survivors.append(pid)
        except OSError:
            continue
    assert survivors == []


def test_without_a_gpu_a_valid_workload_says_so(tmp_path):
    pytest.importorskip("numpy")
    try:
        import cupy

        if cupy.cuda.runtime.getDeviceCount() > 0:
            pytest.skip("this machine has a GPU")
    except Exception:  # no CuPy or no driver: the case under test
        pass
    path = _workload(tmp_path, "def setup(ctx):\n    return lambda ctx: None\n")
    with pytest.raises(NoGpuError, match="no CUDA GPU is available"):
        WorkloadSession(path, timeout=60)


def test_a_frozen_app_starts_its_child_through_itself(monkeypatch):
    import sys

    from graphscope.workload.session import CHILD_ARGUMENT, child_command

    assert child_command()[1:] == ["-m", "graphscope.workload.child"]
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    assert child_command() == [sys.executable, CHILD_ARGUMENT]

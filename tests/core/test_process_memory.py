"""core/process.py's glibc settings: what an analysis sets, what comes back after it, and when it gives back."""

from __future__ import annotations

import os
import threading

import pytest

from graphscope.core import process


@pytest.fixture
def calls(monkeypatch):
    """mallopt's calls, in a command that answers and exits (`ends_after`)."""
    seen: list[tuple] = []
    monkeypatch.setattr(process, "_ending", True)
    monkeypatch.setattr(process, "_mallopt", lambda: lambda option, value: seen.append((option, value)) or 1)
    monkeypatch.setattr(process, "_malloc_trim", lambda: seen.append(("trim",)))
    for name in [n for n in os.environ if n.startswith("MALLOC_")]:
        monkeypatch.delenv(name)
    return seen


def test_an_analysis_keeps_large_arrays_in_the_heap_and_restores_glibcs_settings_after(calls):
    with process.heap_only():
        assert calls == [(process._M_MMAP_MAX, 0), (process._M_TRIM_THRESHOLD, process._NEVER)]
    restored = [(process._M_MMAP_MAX, process._MMAP_MAX_DEFAULT), (process._M_TRIM_THRESHOLD, process.KEEP_FREED)]
    assert calls[2:] == restored


def test_a_window_keeps_glibcs_settings(calls, monkeypatch):
    monkeypatch.setattr(process, "_ending", False)
    monkeypatch.setattr(process, "_keeping", True)
    with process.heap_only(), process.give_back_freed():
        pass
    assert calls == []


def test_nested_and_concurrent_blocks_set_once_and_restore_when_the_last_ends(calls):
    inner_done = threading.Event()

    def other_thread():
        with process.heap_only():
            inner_done.wait(5)

    with process.heap_only():
        worker = threading.Thread(target=other_thread)
        worker.start()
        with process.heap_only():
            pass
        inner_done.set()
        worker.join()
        assert calls == [(process._M_MMAP_MAX, 0), (process._M_TRIM_THRESHOLD, process._NEVER)]
    assert len(calls) == 4 and calls[-1] == (process._M_TRIM_THRESHOLD, process.KEEP_FREED)


def test_ends_after_is_left_as_it_was_found():
    assert not process._ending
    with process.ends_after():
        assert process._ending
    assert not process._ending


def test_a_users_malloc_setting_wins(calls, monkeypatch):
    monkeypatch.setenv("MALLOC_MMAP_MAX_", "65536")
    with process.heap_only():
        pass
    assert calls == []


def test_an_exception_inside_still_restores(calls):
    with pytest.raises(ValueError), process.heap_only():
        raise ValueError("an analysis that fails")
    assert (process._M_MMAP_MAX, process._MMAP_MAX_DEFAULT) in calls and process._heap_users == 0


@pytest.mark.skipif(process._mallopt() is None, reason="not glibc")
def test_on_glibc_the_settings_are_accepted():
    import ctypes

    mallopt = ctypes.CDLL(None).mallopt
    assert mallopt(process._M_MMAP_MAX, 0) == 1 and mallopt(process._M_MMAP_MAX, process._MMAP_MAX_DEFAULT) == 1
    assert mallopt(process._M_TRIM_THRESHOLD, process._NEVER) == 1
    assert mallopt(process._M_TRIM_THRESHOLD, process.KEEP_FREED) == 1
    with process.heap_only():
        import numpy as np

        assert int(np.ones(40 << 20, np.uint8).sum()) == 40 << 20  # a 40 MiB array from the heap


def test_a_reader_of_small_buffers_keeps_a_small_free_top_and_the_kept_one_comes_back(calls, monkeypatch):
    monkeypatch.setattr(process, "_keeping", True)
    with process.give_back_freed():
        assert calls == [(process._M_TRIM_THRESHOLD, 1 << 20)]
    assert calls[1:] == [
        (process._M_TRIM_THRESHOLD, process.KEEP_FREED),
        ("trim",),  # what the read freed goes back before the analysis
    ]


def test_where_nothing_was_kept_there_is_nothing_to_give_back(calls, monkeypatch):
    monkeypatch.setattr(process, "_keeping", False)  # a user's MALLOC_* setting, or not glibc
    with process.give_back_freed():
        pass
    assert calls == []


def test_a_kineto_trace_is_read_inside_it(monkeypatch):
    from pathlib import Path

    from graphscope.trace import kineto

    inside = []
    plain = kineto._load
    monkeypatch.setattr(kineto, "_load", lambda path: inside.append(True) or plain(path))
    entered = []

    class Watch:
        def __enter__(self):
            entered.append(True)

        def __exit__(self, *exc):
            return False

    monkeypatch.setattr(kineto, "give_back_freed", Watch)
    trace = kineto.load_kineto(Path(__file__).resolve().parents[1] / "data" / "kineto" / "hta__triton_example.json.gz")
    assert entered == [True] and inside == [True] and len(trace.kernels) > 0


def test_a_command_that_answers_and_exits_runs_in_one_arena_and_gives_glibc_its_choice_back(calls):
    with process.one_arena():
        assert calls == [(process._M_ARENA_MAX, 1)]
    assert calls == [(process._M_ARENA_MAX, 1), (process._M_ARENA_MAX, 0)]


def test_one_shot_commands_run_in_one_arena_and_a_window_does_not(monkeypatch):
    import argparse

    from graphscope.cli.common import one_shot

    seen = []
    monkeypatch.setattr(process, "one_arena", lambda: _Recorded(seen, "arena"))
    monkeypatch.setattr(process, "keep_freed_memory", lambda: seen.append("keep"))
    one_shot(lambda args: seen.append("command") or 0)(argparse.Namespace())
    assert seen == ["arena", "command", "arena done"]
    seen.clear()
    process._keep_freed_memory()  # what a window's start-up (core.process.prepare) sets: no arena limit
    assert seen == ["keep"]


class _Recorded:
    def __init__(self, seen, name):
        self.seen, self.name = seen, name

    def __enter__(self):
        self.seen.append(self.name)

    def __exit__(self, *exc):
        self.seen.append(f"{self.name} done")
        return False

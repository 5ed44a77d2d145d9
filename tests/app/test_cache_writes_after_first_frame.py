"""A file opened in the window with the cache on but empty writes its entry after the first frame, on a
writer thread of the window's process: written beside the analysis and layout, it made that frame later
(benchmarks/cache_warm.py --gui)."""

from __future__ import annotations

import shutil

from graphscope.core import answer_cache
from graphscope.trace import cache
from tests.conftest import FORKJOIN


def test_the_entry_is_written_once_the_first_frame_is_drawn(own_cache, tmp_path, qtbot, window, monkeypatch):
    path = tmp_path / "f.sqlite"
    shutil.copy(FORKJOIN, path)
    monkeypatch.setattr(cache, "detached", lambda work: (_ for _ in ()).throw(AssertionError("forked a writer")))
    seen = {}

    shown = window.timeline.set_document

    def at_loaded(document) -> None:  # the lanes are ready; the first frame is not drawn yet
        seen["held"] = answer_cache.writes_held() and len(cache._held) > 0
        seen["written"] = (cache.entry_for(path) / "manifest.json").exists()
        shown(document)

    monkeypatch.setattr(window.timeline, "set_document", at_loaded)
    with qtbot.waitSignal(window.timeline.first_frame, timeout=30_000):
        window.open_path(path)
    assert seen == {"held": True, "written": False}
    assert not answer_cache.writes_held()
    cache.wait_for_writers()
    assert (cache.entry_for(path) / "manifest.json").exists()
    again = cache.open_entry(path)
    assert again is not None and len(again.columns("kernels")["start"]) > 0


def test_a_failed_open_lets_go_of_the_writes(own_cache, tmp_path, qtbot, window):
    bad = tmp_path / "bad.sqlite"
    bad.write_bytes(b"not a database at all" * 100)
    with qtbot.waitSignal(window.load_failed, timeout=30_000):
        window.open_path(bad)
    assert not answer_cache.writes_held()

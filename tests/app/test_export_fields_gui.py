"""The newest Nsight fields in the window's Details: the event records are read behind the window after
it opens (a click on a wait never waits for the file), and a wait names the record it waited for."""

from __future__ import annotations

from graphscope.trace import cuda_events
from graphscope.view.layout import API
from tests.conftest import FORKJOIN


def test_a_wait_s_record_is_read_before_the_click_and_shown(window, open_trace, qtbot, monkeypatch):
    document = open_trace(FORKJOIN)
    trace = document.trace
    qtbot.waitUntil(lambda: id(trace) in cuda_events._HELD, timeout=30_000)  # the preload read them

    def no_file(*_a, **_k):
        raise AssertionError("Details read the file at the click")

    monkeypatch.setattr(cuda_events, "ExportDatabase", no_file)
    names = [trace.symbols.name(int(n)) for n in trace.api.name]
    wait = names.index("cudaStreamWaitEvent_v3020")
    window.timeline.select(API, wait)
    text = window.details.toPlainText()
    assert "waits for\nevent 2 on stream 13 (device 0), recorded by cudaEventRecord at" in text, text

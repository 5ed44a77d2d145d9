"""File > Attach capture trace…: a separate capture trace names the replayed kernels' modules in the Kernels
table, the DAG and Details; computed off the GUI thread, said in one line, remembered per trace.

The pair is the shipped H200 torch.nn.Linear capture/replay (tests/data/kineto), the one the attribution
tests use: 5 replays of a 2-kernel graph (gemm for Linear_0's addmm, then relu's elementwise kernel)."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
import threading
import time

from graphscope.analysis.capture_ops import node_attribution
from graphscope.app.dag_view import NodeItem
from graphscope.cli import main
from graphscope.view import attached
from graphscope.view.layout import KERNEL
from graphscope.view.module_stats import NOT_ATTRIBUTED
from tests.conftest import H200_NODE

KINETO = H200_NODE.parent / "kineto"
CAPTURE, REPLAY = KINETO / "h200_torch_linear_capture.json.gz", KINETO / "h200_torch_linear_replay.json.gz"
NO_CAPTURE = KINETO / "hta__triton_example.json.gz"  # a real PyTorch-profiler trace without stream capture


def _replayed_kernels() -> int:
    """The second way: the replay's kernels launched by a cudaGraphLaunch, counted in the plain JSON."""
    events = json.loads(gzip.decompress(REPLAY.read_bytes()))["traceEvents"]
    launches = {e["args"]["correlation"] for e in events if e.get("name") == "cudaGraphLaunch"}
    return sum(1 for e in events if e.get("cat") == "kernel" and e["args"]["correlation"] in launches)


def _attach(window, qtbot, paths):
    with qtbot.waitSignal(window.capture_attached, timeout=30_000) as blocker:
        window.attach_captures(paths)
    return blocker.args[0]


def test_an_attached_capture_names_modules_in_the_table_the_dag_and_details(
    window, open_trace, qtbot, monkeypatch, capsys
):
    threads = []
    real = attached.attach
    monkeypatch.setattr(
        "graphscope.app.attach_capture.attach",
        lambda *a, **k: threads.append(threading.current_thread()) or real(*a, **k),
    )
    document = open_trace(REPLAY)
    assert not window.graph_panel.colour_by.isEnabled()  # the replay alone names no module
    found = _attach(window, qtbot, [CAPTURE])
    assert threads and threads[0] is not threading.main_thread()
    kernels = _replayed_kernels()
    assert kernels == 10
    assert found.message().startswith(f"capture {CAPTURE.name}: {kernels} of {kernels} replayed kernels attributed")
    assert "a module 74%" in found.message() and window.status_label.text() == found.message()
    # the Kernels table, by module: shown, with the shares `summary --capture --json` gives
    stats = window.stats
    assert stats.by_module()
    qtbot.waitUntil(lambda: stats.modules.rows != [], timeout=30_000)
    assert main(["summary", str(REPLAY), "--capture", str(CAPTURE), "--json", "--no-cache"]) == 0
    summary = json.loads(capsys.readouterr().out)["capture_attribution"]
    (linear,) = summary["modules"]
    rows = {r.module: r for r in stats.modules.rows}
    assert rows["Linear_0"].gpu_ns == linear["gpu_ns"] and rows["Linear_0"].kernels == 5
    assert abs(found.coverage["module"] - summary["coverage"]["module"]) < 1e-9
    assert set(rows) == {"Linear_0", NOT_ATTRIBUTED} and CAPTURE.name in stats.note.text()
    # the DAG: coloured by module now
    panel = window.graph_panel
    qtbot.waitUntil(lambda: panel.colour_by.isEnabled(), timeout=30_000)
    assert panel.colour_by.currentText() == "module" and "Linear_0" in panel.legend.text()
    tips = [i.toolTip() for i in window.dag_view.scene().items() if isinstance(i, NodeItem)]
    assert any("made inside module Linear_0" in tip for tip in tips)
    panel.fold_modules.setChecked(True)
    # Details on a replayed gemm: its operator, module and line
    kernels, names = document.trace.kernels, document.trace.symbols
    gemm = next(r for r in range(len(kernels)) if "gemm" in names.name(int(kernels.short_name[r])))
    window.timeline.select(KERNEL, gemm)
    text = window.details.toPlainText()
    assert "module\nLinear_0" in text, text  # the table's cells, a line each
    assert "aten::addmm" in text and "torchprof.py(31)" in text
    open_trace(H200_NODE)  # a trace whose nodes have no module: nothing to fold by, unticked
    qtbot.waitUntil(lambda: panel.nodes is not None, timeout=30_000)
    assert not panel.fold_modules.isChecked() and not panel.fold_modules.isEnabled()


def test_a_capture_that_matches_nothing_says_so_in_one_line_and_changes_nothing(window, open_trace, qtbot):
    document = open_trace(REPLAY)
    own = node_attribution(document.trace)
    found = _attach(window, qtbot, [NO_CAPTURE])
    assert not found.matched
    assert found.message() == (
        f"capture {NO_CAPTURE.name} attributes nothing: it holds no stream capture "
        "(cudaStreamBeginCapture ... EndCapture)"
    )
    assert "\n" not in found.message() and window.status_label.text() == found.message()
    assert window.attach_box is not None and window.attach_box.text() == found.message()
    assert node_attribution(document.trace) is own and window.attachment is None


def test_the_attachment_is_remembered_for_the_trace_and_forgotten_when_detached(window, open_trace, qtbot):
    open_trace(REPLAY)
    assert not window.detach_action.isEnabled()
    _attach(window, qtbot, [CAPTURE])
    assert window.detach_action.isEnabled()
    with qtbot.waitSignal(window.capture_attached, timeout=30_000) as blocker:  # opened again: attached again
        open_trace(REPLAY)
    assert blocker.args[0].matched and window.attachment is not None
    window.detach_capture()
    assert window.attachment is None and "detached" in window.status_label.text()
    assert not window.detach_action.isEnabled()
    assert window.stats.attached is None
    with qtbot.assertNotEmitted(window.capture_attached, wait=500):
        open_trace(REPLAY)
    assert window._remembered(REPLAY) == []


def test_attaching_shows_its_progress_and_cancel_stops_it(window, open_trace, qtbot, monkeypatch):
    open_trace(REPLAY)
    started = threading.Event()

    def slow(trace, paths, progress, cancel):  # a capture of a large model takes a while to read
        progress(0.3, "reading the capture trace")
        started.set()
        while not cancel.cancelled:
            time.sleep(0.005)
        cancel.check()

    monkeypatch.setattr("graphscope.app.attach_capture.attach", slow)
    window.attach_captures([CAPTURE])
    assert window.cancel_button.isVisible() and window.progress.isVisible()
    qtbot.waitUntil(started.is_set, timeout=10_000)
    qtbot.waitUntil(lambda: window.progress.value() == 300, timeout=10_000)
    window.cancel_button.click()
    qtbot.waitUntil(lambda: window.attach_task is None, timeout=10_000)
    assert window.status_label.text() == "attaching the capture trace cancelled"
    assert not window.cancel_button.isVisible() and window.attachment is None


def test_a_capture_asked_for_while_the_trace_opens_is_attached_once_it_is_open(window, qtbot, tmp_path):
    broken = tmp_path / "broken.sqlite"
    broken.write_bytes(H200_NODE.read_bytes()[:20_000])
    with qtbot.waitSignal(window.load_failed, timeout=30_000):
        window.open_path(broken)
        window.attach_captures([CAPTURE])  # asked with a file that then fails: not kept for the next one
    assert window.pending_captures is None
    with qtbot.waitSignal(window.capture_attached, timeout=30_000) as blocker:  # as `open --capture` does
        window.open_path(REPLAY)
        window.attach_captures([CAPTURE])
    assert blocker.args[0].matched and window.document.trace.path == REPLAY


def test_a_capture_recorded_without_modules_is_told_apart(window, open_trace, qtbot, tmp_path):
    doc = json.loads(gzip.decompress(CAPTURE.read_bytes()))
    doc["traceEvents"] = [e for e in doc["traceEvents"] if not e.get("name", "").startswith("nn.Module: ")]
    bare = tmp_path / "capture_without_modules.json.gz"
    bare.write_bytes(gzip.compress(json.dumps(doc).encode()))
    open_trace(REPLAY)
    found = _attach(window, qtbot, [bare])
    assert found.matched and "a module 0%" in found.message()
    qtbot.waitUntil(lambda: window.stats.modules.rows != [], timeout=30_000)
    assert window.stats.note.text().startswith("the attached capture names no module for any replayed node")
    assert bare.name in window.stats.note.text()


def test_the_open_command_refuses_a_capture_that_is_not_a_trace_in_one_line(tmp_path):
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "XDG_CONFIG_HOME": str(tmp_path / "config")}
    text = tmp_path / "notes.json"
    text.write_text("{}")
    png = tmp_path / "x.png"
    command = [sys.executable, "-m", "graphscope", "open", str(REPLAY), "--screenshot", str(png)]
    result = subprocess.run(
        [*command, "--capture", str(tmp_path / "missing.json")], capture_output=True, text=True, env=env, timeout=120
    )
    assert result.returncode == 2 and result.stderr.strip().endswith("missing.json: no such file or folder")
    result = subprocess.run([*command, "--capture", str(text)], capture_output=True, text=True, env=env, timeout=120)
    assert result.returncode == 2 and result.stderr.count("\n") == 1 and "cannot attach notes.json" in result.stderr
    assert "Traceback" not in result.stderr and not png.exists()

"""Timeline speed on a 1M-kernel + 1M-API-call export, offscreen.

Measures (targets from docs/architecture.md):
- a full redraw of the lane set at full zoom-out and three deeper zoom levels: under 16 ms per frame;
- opening the file to a fully loaded window (lanes and panels), in the running app, against
  `graphscope summary` on the same file (benchmarks/ingest_floor.py measures the first frame of a
  fresh process).

    QT_QPA_PLATFORM=offscreen python benchmarks/timeline_frames.py [--kernels 1000000] [--frames 30]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
from graphscope.core.process import prepare

prepare()  # before numpy loads, as graphscope's entry point does

from synthetic_export import ensure  # noqa: E402 (numpy loads with it)


def summary_seconds(path: Path) -> float:
    t0 = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "graphscope", "summary", str(path), "--json"], check=True, capture_output=True
    )
    return time.perf_counter() - t0


def open_to_first_frame(app, path: Path):
    """A new window opens the file; seconds until its timeline has painted the first frame."""
    from graphscope.app.main_window import MainWindow

    window = MainWindow(persist=False)
    window.resize(1600, 1000)
    window.show()
    app.processEvents()
    done = {}
    window.loaded.connect(lambda document: done.setdefault("document", document))
    t0 = time.perf_counter()
    window.open_path(path)
    while "document" not in done:
        app.processEvents()
        time.sleep(0.001)
    window.timeline.viewport().repaint()
    return window, time.perf_counter() - t0


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--kernels", type=int, default=1_000_000)
    parser.add_argument("--frames", type=int, default=30)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--settle", action="store_true", help="wait for the background work (panels, remaining columns) first"
    )
    args = parser.parse_args()
    path = ensure(args.kernels)
    from PySide6.QtWidgets import QApplication

    from graphscope.app.workers import collect_garbage_on_gui_thread, hand_the_interpreter_over_quickly

    app = QApplication.instance() or QApplication([])
    app.garbage_collector = collect_garbage_on_gui_thread()  # as graphscope's own start-up does
    hand_the_interpreter_over_quickly()
    summaries, first_frames = [], []
    for _ in range(args.rounds):  # interleaved, so machine noise hits both
        summaries.append(summary_seconds(path))
        window, seconds = open_to_first_frame(app, path)
        first_frames.append(seconds)
    summary, first_frame = statistics.median(summaries), statistics.median(first_frames)

    if args.settle:
        from graphscope.app.workers import tasks_running

        while tasks_running():
            app.processEvents()
            time.sleep(0.01)
        app.processEvents()
    view = window.timeline.view
    events = sum(len(item.lane) for item in window.timeline.items.values())
    start, end = window.document.trace.span()
    span = end - start
    print(f"file: {path.name}: {events:,} events in {len(window.timeline.items)} lanes, span {span / 1e9:.2f} s")
    print(
        f"open to a loaded window: {first_frame:.2f} s; `graphscope summary`: {summary:.2f} s "
        f"(ratio {first_frame / summary:.2f})"
    )
    for label, fraction in (("full zoom-out", 1.0), ("1/10 of the span", 0.1), ("1/1000", 1e-3), ("1/100000", 1e-5)):
        center = span / 2
        view.setXRange(center - span * fraction / 2, center + span * fraction / 2, padding=0)
        app.processEvents()
        times = []
        for _ in range(args.frames):
            t = time.perf_counter()
            window.timeline.viewport().repaint()
            times.append((time.perf_counter() - t) * 1e3)
        print(f"  {label:>18}: median {statistics.median(times):5.1f} ms, max {max(times):5.1f} ms per full redraw")
        if os.environ.get("FRAMES_VERBOSE"):
            print("    " + " ".join(f"{t:.1f}" for t in times))
    window.close()


if __name__ == "__main__":
    main()

"""`graphscope open [FILE]` (and `graphscope` alone): the window, on a trace or the demo (app/main.py)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from graphscope.cli.common import add_cache_option


def add(sub: Any) -> None:
    p = sub.add_parser(
        "open",
        help="open the GUI on a trace (an Nsight Systems .sqlite or .nsys-rep, a PyTorch-profiler .json, .json.gz or "
        ".pt.trace.json.gz); the demo without one",
    )
    p.add_argument(
        "file",
        type=Path,
        nargs="?",
        help="an Nsight Systems export (.sqlite) or report (.nsys-rep), or a PyTorch-profiler trace (.json, "
        ".json.gz, .pt.trace.json.gz); without one, the demo trace",
    )
    p.add_argument("--screenshot", type=Path, metavar="PNG", help="render the loaded window to PNG and exit")
    p.add_argument("--size", default="1600x1000", help="window size for --screenshot (WxH)")
    p.add_argument(
        "--select",
        metavar="KIND:WHAT",
        help="select and zoom to graph:N, kernel:N (both counted from 1), kernel:NAME or nvtx:NAME",
    )
    p.add_argument(
        "--capture",
        type=Path,
        action="append",
        metavar="FILE",
        help="attach a trace of the graphs' capture (repeat it, or name a folder), as File > Attach capture trace",
    )
    add_cache_option(p)
    p.set_defaults(handler=run, window=True)


def run(args: argparse.Namespace) -> int:
    from graphscope.app.main import run_gui

    return run_gui(args.file, screenshot=args.screenshot, size=args.size, select=args.select, captures=args.capture)


def demo(args: argparse.Namespace) -> int:
    """No command at all: the window on the demo trace."""
    from graphscope.app.main import run_gui

    return run_gui(None)

"""The command line. Every command is headless except `graphscope` / `graphscope open`, which start the GUI.

Errors in the user's input print one line on stderr and exit with status 2; never a traceback.
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from graphscope import __version__
from graphscope.core.errors import GraphscopeError

EXIT_BAD_INPUT = 2


def _add_summary(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("summary", help="headless summary of one export (.sqlite or .nsys-rep)")
    p.add_argument("file", type=Path)
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--top", type=int, default=10, metavar="N", help="kernels to list (default 10)")
    p.set_defaults(handler=_cmd_summary)


def _add_open(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("open", help="open the GUI on an export (.sqlite or .nsys-rep); the demo without one")
    p.add_argument("file", type=Path, nargs="?")
    p.add_argument("--screenshot", type=Path, metavar="PNG", help="render the loaded window to PNG and exit")
    p.add_argument("--size", default="1600x1000", help="window size for --screenshot (WxH)")
    p.add_argument("--select", metavar="KIND:N", help="select graph:N (a graph launch) or kernel:ROW first")
    p.set_defaults(handler=_cmd_open)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="graphscope",
        description="Is this GPU pipeline launch-bound, how much does a CUDA graph save, "
        "and how should each node be launched? Without a command, opens the GUI on the demo trace.",
    )
    parser.add_argument("--version", action="version", version=f"graphscope {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for add in _COMMANDS:
        add(sub)
    return parser


def _cmd_summary(args: argparse.Namespace) -> int:
    from graphscope.analysis.summary import summarize
    from graphscope.report.summary_text import render_summary
    from graphscope.trace import load_trace

    summary = summarize(load_trace(args.file), top=args.top)
    print(json.dumps(summary, indent=2) if args.json else render_summary(summary))
    return 0


def _cmd_open(args: argparse.Namespace) -> int:
    from graphscope.app.main import run_gui

    return run_gui(args.file, screenshot=args.screenshot, size=args.size, select=args.select)


def _cmd_gui(args: argparse.Namespace) -> int:
    from graphscope.app.main import run_gui

    return run_gui(None)


_COMMANDS: list[Callable[[argparse._SubParsersAction], None]] = [_add_summary, _add_open]


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    args = build_parser().parse_args(argv)
    handler = getattr(args, "handler", _cmd_gui)
    try:
        return handler(args)
    except GraphscopeError as exc:
        print(f"graphscope: error: {exc.message}", file=sys.stderr)
        return exc.exit_status
    except sqlite3.DatabaseError as exc:
        print(f"graphscope: error: the file cannot be read as an export ({exc})", file=sys.stderr)
        return EXIT_BAD_INPUT
    except OSError as exc:
        print(f"graphscope: error: {exc.filename or ''}: {exc.strerror or exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        print("graphscope: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0


def console() -> None:
    """Entry point of the `graphscope` executable."""
    sys.exit(main())

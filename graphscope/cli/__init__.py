"""The command line. Every command is headless except `graphscope` / `graphscope open`, which start the GUI.

One module of this package per command (`COMMANDS`): `add(sub)` declares its arguments and sets
`handler=run`; `run(args) -> int` checks them, calls one engine function and renders its answer (text/ or
JSON). What commands share (option types, the parser that refuses in one line, progress lines) is
`common.py`. A new command is one more name in `COMMANDS`.

Errors in the user's input print one line on stderr and exit with status 2; never a traceback
(`core.errors.one_line` words them, for the GUI's workers too).
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import importlib
import os
import sys
from collections.abc import Sequence

from graphscope import __version__
from graphscope.cli.common import EXIT_BAD_INPUT, Command, Parser, error, join_values, say
from graphscope.core import answer_cache
from graphscope.core.errors import GraphscopeError, one_line

# the command modules, in --help's order
COMMANDS = ("summary", "gui", "run", "dag", "diverge", "tune", "plan", "launch_cost", "report", "export")


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="graphscope",
        description="Is this GPU pipeline launch-bound, how much does a CUDA graph save, "
        "and how should each node be launched? Without a command, opens the GUI on the demo trace.",
    )
    parser.add_argument("--version", action="version", version=f"graphscope {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMANDS:
        importlib.import_module(f"graphscope.cli.{name}").add(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["_workload-child"]:  # a frozen app starting its own workload child
        from graphscope.workload.child.main import main as child_main

        return child_main(argv[1:])
    args = build_parser().parse_args(join_values(argv))
    if not hasattr(args, "handler"):
        from graphscope.cli.gui import demo

        args.handler, args.window = demo, True
    if getattr(args, "no_cache", False):
        os.environ[answer_cache.NO_CACHE_ENV] = "1"  # children and background loads too
    hold = not getattr(args, "window", False)  # read once and answer: the cache is written when done
    answer_cache.hold_writes(hold)
    try:
        return _answer(args.handler, args)
    finally:
        answer_cache.release_writes()  # the trace cache's writes, held while the command ran, start


def _answer(handler: Command, args: argparse.Namespace) -> int:
    """The command's exit status; a refused input or a failure the user can act on is one line."""
    try:
        return handler(args)
    except BrokenPipeError:  # `graphscope summary --json FILE | head`: the reader left; not an error
        _silence_stdout()
        return 0
    except KeyboardInterrupt:
        say("graphscope: interrupted")
        return 130
    except _refusals() as exc:
        nameless = "standard output" if isinstance(exc, OSError) and exc.errno == errno.ENOSPC else ""
        error(one_line(exc, nameless) or repr(exc))
        return exc.exit_status if isinstance(exc, GraphscopeError) else EXIT_BAD_INPUT


def _refusals() -> tuple[type[Exception], ...]:
    """The failures shown as one line: SQLite's among them where sqlite3 was imported (where it was not,
    no SQLite file was read; importing it for the except clause cost every command 2 MB and 5 ms)."""
    sqlite3 = sys.modules.get("sqlite3")
    database = (sqlite3.DatabaseError,) if sqlite3 is not None else ()
    return (GraphscopeError, MemoryError, UnicodeDecodeError, OSError, *database)


def _silence_stdout() -> None:
    """Point stdout at /dev/null so the interpreter's final flush does not fail on the closed pipe."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


def _reopen_closed_streams() -> None:
    """A stream the shell closed (`>&-`, `2>&-`) becomes /dev/null: output to it is dropped, and an error
    never lands on stdout instead of stderr."""
    for name, fd in (("stdout", 1), ("stderr", 2)):
        if getattr(sys, name) is None:
            try:
                os.fstat(fd)
            except OSError:
                target = os.open(os.devnull, os.O_WRONLY)
                if target != fd:
                    os.dup2(target, fd)
                    os.close(target)
            stream = open(fd, "w", encoding="utf-8", errors="backslashreplace", closefd=False)  # noqa: SIM115 (for the process's life)
            setattr(sys, name, stream)


def _escape_what_streams_cannot_encode() -> None:
    """A file name that is not UTF-8 (x\\xff.sqlite) is printed as `x\\xff.sqlite`, never a
    UnicodeEncodeError (core/text.py's error handler; PYTHONIOENCODING=utf-8 makes stdout strict)."""
    from graphscope.core.text import STREAM_ERRORS

    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)  # a text stream's; not a replaced one's
        with contextlib.suppress(ValueError, OSError):
            if reconfigure is not None:
                reconfigure(errors=STREAM_ERRORS)


def console() -> None:
    """Entry point of the `graphscope` executable (and of `python -m graphscope`)."""
    from graphscope.core.process import prepare

    _reopen_closed_streams()
    _escape_what_streams_cannot_encode()
    prepare()
    status = main()
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        _silence_stdout()
    except OSError as exc:  # a full disk behind stdout (> /dev/full): the answer was not written
        error(f"standard output: {exc.strerror or exc}")
        status = status or EXIT_BAD_INPUT
    with contextlib.suppress(OSError, ValueError):
        sys.stderr.flush()
    leave(status)


def leave(status: int) -> None:
    """End the process once the cache writers still running are done. The answer is out; Python's
    teardown would now free every module and array one by one (20-40 ms after a summary), which
    nothing graphscope holds needs: files are closed and children reaped by then."""
    answer_cache.wait_for_writers()  # none where no cache was written (a warm summary never imports one)
    os._exit(status)

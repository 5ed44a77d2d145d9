"""What the commands share: the parser that refuses in one line, option types and options, the one-line
error on stderr, progress lines, and the checks several commands make of their arguments."""

from __future__ import annotations

import argparse
import contextlib
import functools
import gc
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn

from graphscope.core.text import printable

EXIT_BAD_INPUT = 2
Command = Callable[[argparse.Namespace], int]

VALUE_OPTIONS = ("--range", "--a", "--b", "--title")  # values that may start with '-' (--range -5ms:-1ms)


def say(line: str) -> None:
    """One line on stderr; nothing (not stdout) when stderr is closed."""
    stream = sys.stderr
    if stream is None:
        return
    with contextlib.suppress(OSError, ValueError):
        print(printable(line), file=stream, flush=True)  # a name's ESC or CR shown, never obeyed


def error(message: str) -> None:
    """A refusal or failure as graphscope words it: `graphscope: error: ...`, one line on stderr."""
    say(f"graphscope: error: {message}")


class Parser(argparse.ArgumentParser):
    """argparse, but a bad argument is one line on stderr (and exit 2), like every other refusal."""

    def error(self, message: str) -> NoReturn:
        hint = f" (see {self.prog} --help)"
        say(f"{self.prog}: error: {' '.join(message.split())}{hint}")
        raise SystemExit(EXIT_BAD_INPUT)


def join_values(argv: list[str]) -> list[str]:
    """`--range -5ms:-1ms` as `--range=-5ms:-1ms`: argparse would take the value for an option."""
    joined: list[str] = []
    for arg in argv:
        if joined and joined[-1] in VALUE_OPTIONS and arg.startswith("-") and arg not in ("-h", "--help"):
            joined[-1] = f"{joined[-1]}={arg}"
        else:
            joined.append(arg)
    return joined


def seconds(text: str) -> float:
    """--timeout: a positive number of seconds."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not 0 < value < 10**9:
        raise argparse.ArgumentTypeError(f"{text}: give a positive number of seconds")
    return value


def core(text: str) -> int:
    """--cpu: a core this process may run on (taskset and cpusets count)."""
    try:
        number = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a core number") from None
    allowed = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else list(range(os.cpu_count() or 1))
    if number not in allowed:
        shown = f"{allowed[0]}-{allowed[-1]}" if allowed == list(range(allowed[0], allowed[-1] + 1)) else allowed
        raise argparse.ArgumentTypeError(f"core {number} is not one this process may use ({shown})")
    return number


def add_cache_option(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--no-cache",
        action="store_true",
        help="read the file itself, neither using nor writing graphscope's cache of it (also GRAPHSCOPE_NO_CACHE=1)",
    )


def add_json(p: Any, help: str = "print one JSON object") -> None:
    """--json (on a parser or a mutually exclusive group)."""
    p.add_argument("--json", action="store_true", help=help)


def add_session(p: argparse.ArgumentParser, help: str = "session database (default: your data folder)") -> None:
    p.add_argument("--session", type=Path, metavar="DB", help=help)


def add_timeout(p: argparse.ArgumentParser, default: float, help: str | None = None) -> None:
    p.add_argument("--timeout", type=seconds, default=default, metavar="S", help=help)


def add_workload_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("workload", type=Path, help="a workload file (see README: Workload format)")
    add_timeout(p, 300.0, "stop the workload if one request takes longer (default 300 s)")
    add_session(p)


def add_rank_options(p: argparse.ArgumentParser) -> None:
    """--demo-ranks, --step, --scheduler, --workers: the options of a job's rank traces."""
    p.add_argument("--demo-ranks", action="store_true", help="the bundled demo rank set (two ranks of a real job)")
    p.add_argument(
        "--step", metavar="NAME", help="rank traces: the step range to align them by (default ProfilerStep#*)"
    )
    p.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        help="rank traces: a running Dask scheduler (default: $DASK_SCHEDULER_ADDRESS, else local worker processes)",
    )
    p.add_argument(
        "--workers", type=int, metavar="N", help="rank traces: local worker processes (default: one per core, per file)"
    )


def progress_printer(enabled: bool) -> Callable[[float, str], None]:
    """Progress as `[ 40%] message` lines on stderr, when `enabled` (a terminal, no --json)."""

    def report(fraction: float, message: str) -> None:
        if enabled:
            print(f"[{fraction:4.0%}] {message}", file=sys.stderr, flush=True)

    return report


def progress_for(args: argparse.Namespace) -> Callable[[float, str], None]:
    """The progress lines of a command: on a terminal, never beside --json."""
    return progress_printer(not args.json and sys.stderr.isatty())


def one_shot(command: Command) -> Command:
    """A command that reads, answers and exits: Python's cycle collector stays off while it runs. Its
    arrays are freed by reference counting; the collector would only rescan the objects of the imports
    (7 ms of a 1M-event summary). Its threads share one malloc arena (core/process.one_arena). It is left
    as it was found: where a window's process runs a command (its tests), the window keeps its collector
    off (app/workers.collect_garbage_on_gui_thread)."""

    @functools.wraps(command)
    def run(args: argparse.Namespace) -> int:
        from graphscope.core.process import ends_after, one_arena

        was_on = gc.isenabled()
        gc.disable()
        try:
            with ends_after(), one_arena():
                return command(args)
        finally:
            if was_on:
                gc.enable()

    return run


def demo_ranks(named: list[Any], demo: bool, command: str) -> list[Any]:
    """The files named, or the bundled demo rank set's folder for --demo-ranks (never both, never neither)."""
    from graphscope.core.errors import BadInputError
    from graphscope.core.settings import demo_ranks as bundled

    if demo and named:
        raise BadInputError(f"{command}: --demo-ranks stands for the files; name no others with it")
    if not demo and not named:
        noun = "FILE" if command == "summary" else "SOURCE"
        raise BadInputError(f"{command}: the following arguments are required: {noun} (or --demo-ranks)")
    return [bundled()] if demo else named


def refuse_rankless(job: dict[str, Any]) -> None:
    """A job of which no rank could be analysed: one line saying why (the first file's problem)."""
    from graphscope.core.errors import BadInputError

    if not job["ranks"]:
        said = [*job.get("problems", []), *job.get("skipped", [])]
        more = f" (and {len(said) - 1:,} more)" if len(said) > 1 else ""
        raise BadInputError(f"no rank could be analysed: {said[0] if said else 'no rank files'}{more}")

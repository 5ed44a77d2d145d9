"""`graphscope summary FILE`: one export's summary (analysis/summary_file.py), or a job's rank traces as
one (ranks/job.py); a warm answer comes from the answer cache before NumPy is imported."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from graphscope.cli.common import add_cache_option, add_json, add_rank_options, demo_ranks, one_shot, refuse_rankless
from graphscope.core import answer_cache


def add(sub: Any) -> None:
    p = sub.add_parser(
        "summary",
        help="headless summary of one export (.sqlite, .nsys-rep, PyTorch-profiler JSON), or of a job's rank "
        "traces (several files or a folder) analysed by worker processes or on Dask",
    )
    p.add_argument("files", nargs="*", metavar="FILE")  # text: Path("") would be the current folder
    add_rank_options(p)
    add_json(p)
    p.add_argument("--top", type=int, default=10, metavar="N", help="kernels to list (default 10)")
    scope = p.add_mutually_exclusive_group()
    scope.add_argument("--range", metavar="START:END", help="only this window, times from the trace start (12ms:40ms)")
    scope.add_argument("--nvtx", metavar="NAME", help="only inside NVTX ranges named NAME (a glob: 'eager_*'; NAME#k)")
    scope.add_argument(
        "--whole-trace", action="store_true", help="a graphscope run's trace: all of it, not just the measured reps"
    )
    p.add_argument("--by-nvtx", action="store_true", help="add a table with one row per NVTX range name")
    p.add_argument(
        "--capture",
        type=Path,
        action="append",
        metavar="FILE",
        help="a trace of the graphs' capture (repeat it, or name a folder: one file per size and rank): each "
        "replayed node gets the operator, module, shapes and line of code that made it",
    )
    p.add_argument("--stacks", action="store_true", help="with --json: every replayed node with its whole stack")
    add_cache_option(p)
    p.set_defaults(handler=run)


@one_shot
def run(args: argparse.Namespace) -> int:
    from graphscope.core.errors import BadInputError

    if args.top < 0:
        raise BadInputError("--top cannot be negative")
    files = demo_ranks(args.files, args.demo_ranks, "summary")
    if not all(files):
        raise BadInputError("summary: an empty file name names no trace (give a file, or a folder of rank traces)")
    paths = [Path(f) for f in files]
    if len(paths) > 1 or paths[0].is_dir():
        if args.capture or args.stacks:
            raise BadInputError("--capture and --stacks attribute one replay trace, not a job's rank traces")
        return _summary_of_ranks(paths, args)
    path = paths[0]
    question = _question(path, args)
    kept = answer_cache.get(path, question) if question else None
    if kept is not None:  # the same question of the same file: answered before, before NumPy is imported
        print(kept)
        return 0
    from graphscope.analysis.summary_file import summary_of_file
    from graphscope.text.conditional import summary_lines
    from graphscope.text.summary import render_summary

    summary = summary_of_file(
        path, args.top, args.range, args.nvtx, args.whole_trace, args.by_nvtx, args.capture, args.stacks
    )
    conditionals = summary_lines(summary.get("conditionals_in_trace"))  # graphscope counted them as it wrote the trace
    answer = json.dumps(summary, indent=2) if args.json else render_summary(summary) + conditionals
    print(answer)
    if question:
        answer_cache.put(path, question, answer)
    return 0


def _summary_of_ranks(paths: list[Path], args: argparse.Namespace) -> int:
    """A job's rank traces as one: per rank in worker processes (or on Dask), then the skew and stragglers."""
    from graphscope.core.errors import BadInputError
    from graphscope.ranks.job import analyse_job
    from graphscope.text.ranks import render_ranks

    if args.workers is not None and args.workers < 1:
        raise BadInputError("--workers needs at least one worker")
    job = analyse_job(paths, args.step, args.scheduler, args.workers)
    refuse_rankless(job)
    print(json.dumps(job, indent=2) if args.json else render_ranks(job))
    return 0


def _question(path: Path, args: argparse.Namespace) -> dict[str, Any] | None:
    """What a summary's answer depends on, file aside (analysis/summary_file.py), and how it is shown;
    None where it cannot be kept (a file that is not there, say, which the reader then names)."""
    from graphscope.analysis.summary_file import summary_question

    asked = summary_question(path, args.range, args.nvtx, args.whole_trace, args.by_nvtx, args.capture, args.stacks)
    return None if asked is None else {**asked, "command": "summary", "json": args.json, "top": args.top}

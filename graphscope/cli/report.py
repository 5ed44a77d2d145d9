"""`graphscope report SOURCES -o FILE`: two traces, two scopes of one, runs, a tuning session, a plan
(report/compose.py) or a job's rank traces (ranks/job.py), written as HTML, Markdown, JSON or CSV."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from graphscope.cli.common import add_cache_option, add_rank_options, add_session, demo_ranks, one_shot, refuse_rankless
from graphscope.core.paths import refuse_inputs
from graphscope.core.text import printable, shown_path


def add(sub: Any) -> None:
    p = sub.add_parser(
        "report",
        help="compare two traces, two scopes of one trace, runs or a tuning session; write HTML/Markdown/JSON/CSV",
        description="Sources: FILE [SCOPE SCOPE] | A B | run:ID [run:ID] | tune:ID | plan:ID | FOLDER of rank traces "
        "(or three or more files). A scope is nvtx:NAME "
        "(a glob such as nvtx:'eager_*'; NAME#k for one instance) or range:START:END (12ms:40ms).",
    )
    p.add_argument("sources", nargs="*", metavar="SOURCE")
    p.add_argument("-o", "--output", type=Path, required=True, metavar="FILE", help="report.html, .md, .json or .csv")
    p.add_argument("--a", dest="scope_a", metavar="SCOPE", help="scope of side A (nvtx:NAME or range:START:END)")
    p.add_argument("--b", dest="scope_b", metavar="SCOPE", help="scope of side B")
    p.add_argument("--title", help="the report's title")
    add_session(p, "session database for run:ID and tune:ID")
    add_rank_options(p)
    add_cache_option(p)
    p.set_defaults(handler=run)


@one_shot
def run(args: argparse.Namespace) -> int:
    from graphscope.core.errors import BadInputError
    from graphscope.ranks.job import TRACE_SUFFIXES
    from graphscope.report.compose import report_from_sources
    from graphscope.report.formats import FORMATS, headline, write_report

    if args.output.suffix.lower() not in FORMATS:
        raise BadInputError(f"{args.output}: a report is .html, .md, .json or .csv")
    if not args.output.parent.is_dir():
        raise BadInputError(f"{args.output}: the folder {args.output.parent} does not exist")
    html = args.output.suffix.lower() == ".html"
    sources = [str(s) for s in demo_ranks(args.sources, args.demo_ranks, "report")]
    paths = [Path(s) for s in sources]
    refuse_inputs(args.output, [*paths, args.session], "-o", folder_files=TRACE_SUFFIXES)
    if any(p.is_dir() for p in paths) or (len(paths) > 2 and all(p.is_file() for p in paths)):
        report, charts = _rank_report(paths, args)  # a job's rank traces
    else:
        report, charts = report_from_sources(sources, args.scope_a, args.scope_b, args.session, args.title, html)
    write_report(report, args.output, charts)
    print("\n".join([f"wrote {shown_path(args.output)}", *(printable(line) for line in headline(report))]))
    return 0


def _rank_report(paths: list[Path], args: argparse.Namespace) -> tuple[dict[str, Any], dict[str, Any]]:
    from graphscope.ranks.job import analyse_job
    from graphscope.report.ranks_report import ranks_report

    job = analyse_job(paths, args.step, args.scheduler, args.workers)
    refuse_rankless(job)
    report, charts = ranks_report(job)
    if args.title:
        report["title"] = args.title
    return report, charts

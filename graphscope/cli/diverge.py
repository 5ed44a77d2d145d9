"""`graphscope diverge WORKLOAD`: where a captured graph's answer departs from eager (issue #48).

Argument definitions and `run(args)`: check the input, call workload/divergence.py, render with
text/diverge.py (or print JSON). Exit 0 when the outputs match or the node was found, 1 when the graph
differs and no node could be named, 2 for refused input.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def add(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "diverge",
        help="when a graph's outputs differ from eager: the first node that differs, and arguments frozen at capture",
    )
    p.add_argument("workload", type=Path, help="a workload file (see README: Workload format)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--no-audit", action="store_true", help="skip the frozen-at-capture audit (a second capture)")
    p.add_argument("--config", type=Path, metavar="JSON", help="a tuned launch config to run with")
    p.add_argument(
        "--timeout", type=float, default=300.0, metavar="S", help="stop the workload if one request takes longer"
    )
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from graphscope.core.errors import BadInputError
    from graphscope.core.launch_config import LaunchConfig
    from graphscope.text.diverge import render
    from graphscope.workload.divergence import diverge_workload

    if not args.workload.is_file():
        raise BadInputError(f"{args.workload}: no such workload file")
    if args.workload.suffix != ".py":
        raise BadInputError(f"{args.workload}: a workload is a Python file (.py)")
    if not 0 < args.timeout <= 86400:
        raise BadInputError(f"--timeout takes 0 to 86,400 seconds, not {args.timeout:g}")
    config = LaunchConfig.load(args.config) if args.config else None
    shown = not args.json and sys.stderr.isatty()

    def progress(fraction: float, message: str) -> None:
        if shown:
            print(f"[{fraction:4.0%}] {message}", file=sys.stderr, flush=True)

    result = diverge_workload(args.workload, not args.no_audit, args.timeout, config, progress)
    print(json.dumps(result, indent=2, default=str) if args.json else render(result))
    differs = (result.get("outputs") or {}).get("match") is False or result.get("hidden")
    return 1 if differs and result.get("position") is None else 0

"""`graphscope plan TARGET`: which batch sizes to capture as graphs; measured now (plan/runner.py) or a
stored plan's measurements re-planned, then stored."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from graphscope.cli.common import add_json, add_session, add_timeout, progress_for
from graphscope.core.paths import refuse_inputs


def add(sub: Any) -> None:
    p = sub.add_parser(
        "plan",
        help="which batch sizes to capture as graphs: measure each size, then the best set within budgets",
        description="TARGET is a workload (measured on the GPU) or plan:ID (its stored measurements, re-planned).",
    )
    p.add_argument(
        "target", help="a workload .py, or plan:ID to re-plan stored measurements (plan:demo: the shipped demo plan)"
    )
    p.add_argument("--sizes", help="batch sizes: 1,2,4,8 or 1-256 or 8-512/8 (default: the workload's SIZES)")
    p.add_argument(
        "--traffic", type=Path, metavar="FILE", help="request sizes: a CSV, a size,count histogram, or a trace"
    )
    p.add_argument("--memory", metavar="SIZE", help="graph memory budget (2GiB, 500MB)")
    p.add_argument("--startup", metavar="TIME", help="capture time budget at start-up (10s, 800ms)")
    p.add_argument("--compare-list", metavar="SIZES", help="a list to set beside the plan (default: an engine-like 67)")
    p.add_argument("--reps", type=int, default=20, metavar="N", help="repetitions per size and mode (default 20)")
    p.add_argument("--no-order-check", action="store_true", help="skip the smallest-first capture")
    p.add_argument(
        "--serve",
        type=int,
        metavar="N",
        help="then serve N requests drawn from the traffic through the chosen graphs: measured against predicted",
    )
    add_timeout(p, 900.0)
    add_session(p)
    add_json(p)
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from graphscope.core.errors import BadInputError
    from graphscope.plan.budgets import parse_bytes, parse_startup
    from graphscope.plan.runner import measure, plan_and_record
    from graphscope.plan.sizes_text import DEFAULT_LIKE, parse_sizes
    from graphscope.plan.traffic import read_traffic
    from graphscope.store.recorder import Recorder
    from graphscope.text.plan import render_plan

    memory = parse_bytes(args.memory) if args.memory else None
    startup = parse_startup(args.startup) if args.startup else None
    sizes = parse_sizes(args.sizes) if args.sizes else None
    compare = DEFAULT_LIKE if args.compare_list in (None, "default") else parse_sizes(args.compare_list)
    traffic = read_traffic(args.traffic) if args.traffic else None
    if args.serve is not None and not 1 <= args.serve <= 1_000_000:
        raise BadInputError(f"--serve takes 1 to 1,000,000 requests, not {args.serve}")
    refuse_inputs(args.session, [Path(args.target), args.traffic], "--session")
    recorder = Recorder(args.session)
    if args.target.startswith("plan:"):  # stored measurements: the store reads them, the planner never does
        from graphscope.report.sources import StoredPlan

        measured = StoredPlan.parse(args.target).load(args.session)
    else:
        workload = Path(args.target)
        if not workload.is_file():
            raise BadInputError(f"{workload}: no such workload file")
        if args.reps < 3:
            raise BadInputError("--reps needs at least 3 repetitions per size")
        checks = {"timeout": args.timeout, "order_check": not args.no_order_check, "progress": progress_for(args)}
        measured = measure(workload, sizes, args.reps, **checks)
    data = plan_and_record(recorder, measured, traffic, memory, startup, compare, args.serve, args.timeout)
    print(json.dumps(data, indent=2) if args.json else render_plan(data) + f"\n  stored as plan {data['plan_id']}")
    return 0

"""`graphscope tune WORKLOAD`: per-node block sizes searched on the instantiated graph (tune/whole.py)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from graphscope.cli.common import add_json, add_workload_options, progress_for
from graphscope.cli.pdl import add_tune_options, run_tune_pdl
from graphscope.core.paths import refuse_inputs
from graphscope.core.text import shown_path


def add(sub: Any) -> None:
    p = sub.add_parser("tune", help="tune per-node block sizes on the instantiated graph and re-measure")
    add_workload_options(p)
    p.add_argument("--node", metavar="NAME", help="tune one launch site name (add) or one site (add#3)")
    p.add_argument(
        "--block",
        metavar="B,B,..",
        help="candidate blocks for --node: sizes or shapes, 64,128 or 32x8,16x16 (default: shapes of the "
        "launch's own dimensionality up to the kernel's limit)",
    )
    p.add_argument(
        "--strategy",
        choices=("brute", "descent", "model"),
        default="descent",
        help="brute: each candidate of each knob against the baseline; descent: knob by knob; model: Optuna's "
        "TPE sampler over all knobs at once, --budget trials (extra [tune])",
    )
    p.add_argument("--budget", type=int, metavar="N", help="trials for --strategy model (default: one brute pass)")
    p.add_argument("--reps", type=int, metavar="N", help="replays per trial (default: what the noise needs)")
    p.add_argument(
        "--verify",
        choices=("outputs", "sanitizer"),
        default="outputs",
        help="outputs: each candidate's outputs against the eager reference; sanitizer: also its step under "
        "compute-sanitizer (memcheck, initcheck, racecheck) before it may be adopted",
    )
    p.add_argument(
        "--no-alone",
        action="store_true",
        help="skip timing each candidate with its kernel alone (as isolated autotuners do) against the graph",
    )
    p.add_argument("--config", type=Path, metavar="JSON", help="start from this launch config")
    p.add_argument("--save", type=Path, metavar="JSON", help="write the best config here (if it is adopted)")
    add_json(p)
    add_tune_options(p)  # --pdl (cli/pdl.py)
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    import importlib.util

    from graphscope.core.errors import BadInputError, ToolMissingError
    from graphscope.core.launch_config import LaunchConfig, parse_block
    from graphscope.store.recorder import Recorder
    from graphscope.text.tune import render_tuning
    from graphscope.tune.whole import tune_workload

    if not args.workload.is_file():
        raise BadInputError(f"{args.workload}: no such workload file")
    if args.block and not args.node:
        raise BadInputError("--block needs --node (which launch site to try the blocks on)")
    blocks = [parse_block(b) for b in args.block.split(",")] if args.block else None
    # --save may name the --config it started from: that file is read whole before any trial, and the
    # best config replaces it atomically (core.paths) only if adopted, so tuning a config in place is safe
    refuse_inputs(args.save, [args.workload, args.session], "--save")
    refuse_inputs(args.session, [args.workload, args.config], "--session")
    if args.budget is not None and args.budget < 1:
        raise BadInputError("--budget needs at least one trial")
    strategy = "brute" if args.node else args.strategy
    if strategy == "model" and importlib.util.find_spec("optuna") is None:  # before any GPU work
        raise ToolMissingError("--strategy model samples with Optuna, which is not installed: pip install -e '.[tune]'")
    start = LaunchConfig.load(args.config) if args.config else LaunchConfig(workload=args.workload.name)
    if args.pdl:  # PDL flags instead of blocks (cli/pdl.py)
        return run_tune_pdl(args, start, Recorder(args.session), progress_for(args))
    data = tune_workload(
        args.workload,
        start,
        args.timeout,
        Recorder(args.session),
        strategy,
        args.node,
        blocks,
        args.reps,
        args.budget,
        alone=not args.no_alone,
        verify=args.verify,
        save=args.save,
        progress=progress_for(args),
        note=lambda line: print(f"graphscope: {line}", file=sys.stderr),
    )
    if args.json:
        print(json.dumps(data, indent=2))
        return 0
    saved = (
        f"\n  best config written to {shown_path(args.save)}"
        if data.get("saved")
        else ("\n  nothing written: the best config was not adopted" if args.save else "")
    )
    print(render_tuning(data) + saved)
    return 0

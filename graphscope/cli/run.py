"""`graphscope run WORKLOAD`: eager and as a CUDA graph, measured and stored (workload/record.py)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from graphscope.cli.common import add_json, add_workload_options, core, progress_for
from graphscope.core.paths import refuse_inputs
from graphscope.core.text import shown_path


def add(sub: Any) -> None:
    p = sub.add_parser("run", help="run a workload eagerly and as a CUDA graph, and compare")
    add_workload_options(p)
    p.add_argument("--mode", choices=("eager", "graph", "both"), default="both")
    p.add_argument("--reps", type=int, default=30, metavar="N", help="measured repetitions per mode (default 30)")
    p.add_argument("--warmup", type=int, default=5, metavar="N", help="unmeasured steps first (default 5)")
    p.add_argument("--config", type=Path, metavar="JSON", help="a tuned launch config to run with")
    p.add_argument(
        "--profile",
        choices=("nsys", "torch"),
        help="also record each mode's timeline: under Nsight Systems, or with torch.profiler (no nsys needed)",
    )
    p.add_argument("--nsys", action="store_const", const="nsys", dest="profile", help="the same as --profile nsys")
    p.add_argument("--trace-dir", "--nsys-dir", type=Path, metavar="DIR", help="where to write the traces")
    p.add_argument("--cpu", type=core, metavar="N", help="pin the workload process to CPU core N (less noise)")
    add_json(p)
    p.set_defaults(handler=run)


def _annotate_run(data: dict) -> None:
    from graphscope.analysis.attribution_run import annotate_run  # trace reading: only once a run is done

    annotate_run(data)


def run(args: argparse.Namespace) -> int:
    import importlib.util

    from graphscope.core.errors import BadInputError, NoGpuError, ToolMissingError, WorkloadError
    from graphscope.core.launch_config import LaunchConfig
    from graphscope.store.recorder import Recorder
    from graphscope.text.run import render_run
    from graphscope.workload.record import run_and_record
    from graphscope.workload.runner import MODES

    if not args.workload.is_file():
        raise BadInputError(f"{args.workload}: no such workload file")
    if args.reps < 2 or args.warmup < 0:
        raise BadInputError("--reps needs at least 2 repetitions and --warmup cannot be negative")
    refuse_inputs(args.session, [args.workload, args.config], "--session")
    config = LaunchConfig.load(args.config) if args.config else None
    modes = MODES if args.mode == "both" else (args.mode,)
    if args.profile == "torch" and importlib.util.find_spec("torch") is None:  # before the run, not after it
        from graphscope.workload.protocol import INSTALL_TORCH

        raise ToolMissingError(f"--profile torch records with torch.profiler, and PyTorch is missing: {INSTALL_TORCH}")
    if args.profile == "nsys":
        from graphscope.workload.nsys import nsys_or_explain

        nsys_or_explain()
    recorder = Recorder(args.session)
    try:
        data = run_and_record(
            args.workload,
            recorder,
            modes,
            args.reps,
            args.warmup,
            args.timeout,
            config,
            args.profile,
            args.trace_dir,
            progress=progress_for(args),
            cpu=args.cpu,
            annotate=_annotate_run,  # the profiled graph trace's replay attributed to its capture
        )
    except (WorkloadError, NoGpuError) as exc:
        if args.json:
            error = {"kind": getattr(exc, "kind", "no_gpu"), "message": exc.message, "run_id": exc.run_id}
            print(json.dumps({"ok": False, "workload": str(args.workload), "error": error}, indent=2))
        raise
    print(
        json.dumps(data, indent=2)
        if args.json
        else render_run(data) + f"\n  stored as run {data['run_id']} in {shown_path(recorder.path)}"
    )
    return 0 if data["outputs_match"] else 1

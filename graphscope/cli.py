"""The command line. Every command is headless except `graphscope` / `graphscope open`, which start the GUI.

Errors in the user's input print one line on stderr and exit with status 2; never a traceback.
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import functools
import gc
import json
import os
import sqlite3
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import NoReturn

from graphscope import __version__
from graphscope.cli_diverge import add as _add_diverge
from graphscope.core import answer_cache
from graphscope.core.errors import GraphscopeError
from graphscope.core.paths import refuse_inputs
from graphscope.core.text import printable, shown_path

EXIT_BAD_INPUT = 2


def _add_summary(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "summary",
        help="headless summary of one export (.sqlite, .nsys-rep, PyTorch-profiler JSON), or of a job's rank "
        "traces (several files or a folder) analysed on Dask",
    )
    p.add_argument("files", nargs="*", metavar="FILE")  # text: Path("") would be the current folder
    p.add_argument("--demo-ranks", action="store_true", help="the bundled demo rank set (two ranks of a real job)")
    p.add_argument("--step", metavar="NAME", help="ranks: the step range to align them by (default ProfilerStep#*)")
    p.add_argument("--scheduler", metavar="ADDRESS", help="ranks: a running Dask scheduler (default: a local cluster)")
    p.add_argument("--workers", type=int, metavar="N", help="ranks: local workers (default: one per core)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
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
    _add_cache_option(p)
    p.set_defaults(handler=_cmd_summary)


def _add_open(sub: argparse._SubParsersAction) -> None:
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
    _add_cache_option(p)
    p.set_defaults(handler=_cmd_open)


def _seconds(text: str) -> float:
    """--timeout: a positive number of seconds."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not 0 < value < 10**9:
        raise argparse.ArgumentTypeError(f"{text}: give a positive number of seconds")
    return value


def _core(text: str) -> int:
    """--cpu: a core this process may run on (taskset and cpusets count)."""
    try:
        core = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a core number") from None
    allowed = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else list(range(os.cpu_count() or 1))
    if core not in allowed:
        shown = f"{allowed[0]}-{allowed[-1]}" if allowed == list(range(allowed[0], allowed[-1] + 1)) else allowed
        raise argparse.ArgumentTypeError(f"core {core} is not one this process may use ({shown})")
    return core


def _add_cache_option(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--no-cache",
        action="store_true",
        help="read the file itself, neither using nor writing graphscope's cache of it (also GRAPHSCOPE_NO_CACHE=1)",
    )


def _add_workload_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("workload", type=Path, help="a workload file (see README: Workload format)")
    p.add_argument(
        "--timeout",
        type=_seconds,
        default=300.0,
        metavar="S",
        help="stop the workload if one request takes longer (default 300 s)",
    )
    p.add_argument("--session", type=Path, metavar="DB", help="session database (default: your data folder)")


def _add_run(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("run", help="run a workload eagerly and as a CUDA graph, and compare")
    _add_workload_options(p)
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
    p.add_argument("--cpu", type=_core, metavar="N", help="pin the workload process to CPU core N (less noise)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(handler=_cmd_run)


def _add_dag(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("dag", help="the CUDA graph's DAG: live from a workload, or from a node-mode trace")
    p.add_argument(
        "target",
        type=Path,
        help="a workload .py, or a trace (.sqlite, .nsys-rep, or a PyTorch-profiler .json / .json.gz)",
    )
    output = p.add_mutually_exclusive_group()
    output.add_argument("--json", action="store_true", help="print the DAG as JSON")
    output.add_argument("--dot", action="store_true", help="print Graphviz DOT (chains folded)")
    p.add_argument("--no-fold", action="store_true", help="with --dot: draw every node of long chains")
    p.add_argument("--config", type=Path, metavar="JSON", help="capture with a tuned launch config")
    p.add_argument("--timeout", type=_seconds, default=300.0, metavar="S")
    p.set_defaults(handler=_cmd_dag)


def _add_tune(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("tune", help="tune per-node block sizes on the instantiated graph and re-measure")
    _add_workload_options(p)
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
    p.add_argument("--json", action="store_true")
    p.set_defaults(handler=_cmd_tune)


def _add_plan(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "plan",
        help="which batch sizes to capture as graphs: measure each size, then the best set within budgets",
        description="TARGET is a workload (measured on the GPU) or plan:ID (its stored measurements, re-planned).",
    )
    p.add_argument("target", help="a workload .py, or plan:ID to re-plan stored measurements")
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
    p.add_argument("--timeout", type=_seconds, default=900.0, metavar="S")
    p.add_argument("--session", type=Path, metavar="DB", help="session database (default: your data folder)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(handler=_cmd_plan)


def _add_report(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "report",
        help="compare two traces, two scopes of one trace, runs or a tuning session; write HTML/Markdown/JSON/CSV",
        description="Sources: FILE [SCOPE SCOPE] | A B | run:ID [run:ID] | tune:ID | plan:ID | FOLDER of rank traces "
        "(or three or more files). A scope is nvtx:NAME "
        "(a glob such as nvtx:'eager_*'; NAME#k for one instance) or range:START:END (12ms:40ms).",
    )
    p.add_argument("sources", nargs="*", metavar="SOURCE")
    p.add_argument("--demo-ranks", action="store_true", help="the bundled demo rank set (two ranks of a real job)")
    p.add_argument("-o", "--output", type=Path, required=True, metavar="FILE", help="report.html, .md, .json or .csv")
    p.add_argument("--a", dest="scope_a", metavar="SCOPE", help="scope of side A (nvtx:NAME or range:START:END)")
    p.add_argument("--b", dest="scope_b", metavar="SCOPE", help="scope of side B")
    p.add_argument("--title", help="the report's title")
    p.add_argument("--session", type=Path, metavar="DB", help="session database for run:ID and tune:ID")
    p.add_argument("--step", metavar="NAME", help="rank traces: the step range to align them by")
    p.add_argument("--scheduler", metavar="ADDRESS", help="rank traces: a running Dask scheduler")
    p.add_argument("--workers", type=int, metavar="N", help="rank traces: local Dask workers (default: one per core)")
    _add_cache_option(p)
    p.set_defaults(handler=_cmd_report)


def _add_export(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("export", help="write a trace as Perfetto / Chrome trace-event JSON")
    p.add_argument("file", type=Path)
    p.add_argument("-o", "--output", type=Path, required=True, metavar="trace.json")
    _add_cache_option(p)
    p.set_defaults(handler=_cmd_export)


def _progress_printer(enabled: bool):
    def report(fraction: float, message: str) -> None:
        if enabled:
            print(f"[{fraction:4.0%}] {message}", file=sys.stderr, flush=True)

    return report


class _Parser(argparse.ArgumentParser):
    """argparse, but a bad argument is one line on stderr (and exit 2), like every other refusal."""

    def error(self, message: str) -> NoReturn:
        hint = f" (see {self.prog} --help)"
        _say(f"{self.prog}: error: {' '.join(message.split())}{hint}")
        raise SystemExit(EXIT_BAD_INPUT)


VALUE_OPTIONS = ("--range", "--a", "--b", "--title")  # values that may start with '-' (--range -5ms:-1ms)


def _join_values(argv: list[str]) -> list[str]:
    """`--range -5ms:-1ms` as `--range=-5ms:-1ms`: argparse would take the value for an option."""
    joined: list[str] = []
    for arg in argv:
        if joined and joined[-1] in VALUE_OPTIONS and arg.startswith("-") and arg not in ("-h", "--help"):
            joined[-1] = f"{joined[-1]}={arg}"
        else:
            joined.append(arg)
    return joined


def _say(line: str) -> None:
    """One line on stderr; nothing (not stdout) when stderr is closed."""
    stream = sys.stderr
    if stream is None:
        return
    with contextlib.suppress(OSError, ValueError):
        print(printable(line), file=stream, flush=True)  # a name's ESC or CR shown, never obeyed


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="graphscope",
        description="Is this GPU pipeline launch-bound, how much does a CUDA graph save, "
        "and how should each node be launched? Without a command, opens the GUI on the demo trace.",
    )
    parser.add_argument("--version", action="version", version=f"graphscope {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for add in _COMMANDS:
        add(sub)
    return parser


def _one_shot(command: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
    """A command that reads, answers and exits: Python's cycle collector stays off while it runs. Its
    arrays are freed by reference counting; the collector would only rescan the objects of the imports
    (7 ms of a 1M-event summary)."""

    @functools.wraps(command)
    def run(args: argparse.Namespace) -> int:
        gc.disable()
        try:
            return command(args)
        finally:
            gc.enable()

    return run


@_one_shot
def _cmd_summary(args: argparse.Namespace) -> int:
    from graphscope.core.errors import BadInputError

    if args.top < 0:
        raise BadInputError("--top cannot be negative")
    args.files = _demo_ranks(args.files, args.demo_ranks, "summary")
    if not all(args.files):
        raise BadInputError("summary: an empty file name names no trace (give a file, or a folder of rank traces)")
    args.files = [Path(f) for f in args.files]
    if len(args.files) > 1 or args.files[0].is_dir():
        if args.capture or args.stacks:
            raise BadInputError("--capture and --stacks attribute one replay trace, not a job's rank traces")
        return _summary_of_ranks(args)
    args.file = args.files[0]
    question = _summary_question(args)
    kept = answer_cache.get(args.file, question) if question else None
    if kept is not None:  # the same question of the same file: answered before, before NumPy is imported
        print(kept)
        return 0
    from graphscope.analysis.scope import parse_scope
    from graphscope.analysis.summary import analyze, summarize
    from graphscope.report.summary_text import render_summary
    from graphscope.trace import load_trace

    trace = load_trace(args.file)
    scope = parse_scope(trace, args.range, args.nvtx)
    analysis = analyze(trace) if args.by_nvtx else None  # else summarize analyses alongside its kernel table
    summary = summarize(trace, args.top, analysis, scope, whole=args.whole_trace)
    if args.by_nvtx:
        from graphscope.analysis.nvtx_table import nvtx_table

        summary["nvtx_ranges"] = nvtx_table(trace, analysis)
    if args.capture is not None or _has_graph_nodes(trace):
        from graphscope.analysis.attribution_files import load_captures
        from graphscope.analysis.capture_ops import attribute

        captures, skipped = load_captures(args.capture, load_trace) if args.capture else (None, [])
        summary["capture_attribution"] = attribute(trace, captures, stacks=args.stacks)
        summary["capture_attribution"] |= {"skipped": skipped} if skipped else {}
    answer = json.dumps(summary, indent=2) if args.json else render_summary(summary)
    print(answer)
    if question:
        answer_cache.put(args.file, question, answer)
    return 0


def _demo_ranks(named: list, demo: bool, command: str) -> list:
    """The files named, or the bundled demo rank set's folder for --demo-ranks (never both, never neither)."""
    from graphscope.core.errors import BadInputError
    from graphscope.core.settings import demo_ranks

    if demo and named:
        raise BadInputError(f"{command}: --demo-ranks stands for the files; name no others with it")
    if not demo and not named:
        noun = "FILE" if command == "summary" else "SOURCE"
        raise BadInputError(f"{command}: the following arguments are required: {noun} (or --demo-ranks)")
    return [demo_ranks()] if demo else named


def _summary_of_ranks(args: argparse.Namespace) -> int:
    """A job's rank traces as one: per rank on Dask, then the skew and stragglers across them."""
    from graphscope.core.errors import BadInputError
    from graphscope.ranks.job import analyse_job
    from graphscope.report.ranks_text import render_ranks

    if args.workers is not None and args.workers < 1:
        raise BadInputError("--workers needs at least one worker")
    job = analyse_job(args.files, args.step, args.scheduler, args.workers)
    _refuse_rankless(job)
    print(json.dumps(job, indent=2) if args.json else render_ranks(job))
    return 0


def _refuse_rankless(job: dict) -> None:
    """A job of which no rank could be analysed: one line saying why (the first file's problem)."""
    from graphscope.core.errors import BadInputError

    if not job["ranks"]:
        said = [*job.get("problems", []), *job.get("skipped", [])]
        more = f" (and {len(said) - 1:,} more)" if len(said) > 1 else ""
        raise BadInputError(f"no rank could be analysed: {said[0] if said else 'no rank files'}{more}")


def _summary_question(args: argparse.Namespace) -> dict | None:
    """What a summary's answer depends on, file aside; None where it cannot be kept (a file that is not
    there, say, which the reader then names)."""
    try:
        capture = None
        if args.capture is not None:
            from graphscope.analysis.attribution_files import capture_files

            capture = [answer_cache.file_key(path, "capture") for path in capture_files(args.capture)]
        if not args.file.is_file():
            return None
    except OSError:
        return None
    keys = ("json", "top", "range", "nvtx", "whole_trace", "by_nvtx", "stacks")
    return {"command": "summary", **{k: getattr(args, k, None) for k in keys}, "capture": capture}


def _has_graph_nodes(trace) -> bool:
    """Does any replayed graph work carry node ids (node-level tracing)? Only then can nodes be attributed."""
    return any(len(t) and bool((t.graph_node >= 0).any()) for t in (trace.kernels, trace.memcpy, trace.memset))


def _cmd_run(args: argparse.Namespace) -> int:
    import importlib.util

    from graphscope.core.errors import BadInputError, NoGpuError, ToolMissingError, WorkloadError
    from graphscope.core.launch_config import LaunchConfig
    from graphscope.report.run_text import render_run
    from graphscope.store.recorder import Recorder
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
            progress=_progress_printer(not args.json and sys.stderr.isatty()),
            cpu=args.cpu,
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


def _cmd_dag(args: argparse.Namespace) -> int:
    from graphscope.core.errors import BadInputError
    from graphscope.graph.export import to_dot
    from graphscope.graph.model import Dag
    from graphscope.report.tune_text import render_dag

    if not args.target.exists():
        raise BadInputError(f"{args.target}: no such file")
    if args.target.suffix == ".py":
        from graphscope.core.launch_config import LaunchConfig
        from graphscope.workload.session import WorkloadSession

        config = LaunchConfig.load(args.config) if args.config else None
        with WorkloadSession(args.target, config, args.timeout) as session:
            dags = [(Dag.from_json(session.request("dag")), f"live capture of {args.target.name}")]
    else:
        dags = [(dag, f"trace {args.target.name}") for dag in _trace_dags(args.target)]
    for dag, title in dags:
        if args.json:
            print(json.dumps(dag.to_json(), indent=2))
        elif args.dot:
            print(to_dot(dag, fold=not args.no_fold), end="")
        else:
            print(render_dag(dag, title))
    return 0


def _trace_dags(path: Path) -> list:
    from graphscope.analysis.graphs import node_activities
    from graphscope.core.errors import BadInputError
    from graphscope.report.sides import trace_dags
    from graphscope.trace import load_trace

    trace = load_trace(path)
    dags = trace_dags(trace, node_activities(trace))
    if not dags:
        mode = trace.info.graph_trace_mode or "no graph tracing"
        raise BadInputError(
            f"{path}: no graph node activity in this trace ({mode}); capture with "
            "`nsys profile --cuda-graph-trace=node` to see graph nodes"
        )
    return dags


def _cmd_plan(args: argparse.Namespace) -> int:
    from graphscope.core.errors import BadInputError
    from graphscope.plan.budgets import parse_bytes, parse_startup
    from graphscope.plan.runner import measure, plan_and_record
    from graphscope.plan.sizes_text import DEFAULT_LIKE, parse_sizes
    from graphscope.plan.traffic import read_traffic
    from graphscope.report.plan_text import render_plan
    from graphscope.store.recorder import Recorder

    memory = parse_bytes(args.memory) if args.memory else None
    startup = parse_startup(args.startup) if args.startup else None
    sizes = parse_sizes(args.sizes) if args.sizes else None
    compare = DEFAULT_LIKE if args.compare_list in (None, "default") else parse_sizes(args.compare_list)
    traffic = read_traffic(args.traffic) if args.traffic else None
    if args.serve is not None and not 1 <= args.serve <= 1_000_000:
        raise BadInputError(f"--serve takes 1 to 1,000,000 requests, not {args.serve}")
    refuse_inputs(args.session, [Path(args.target), args.traffic], "--session")
    recorder = Recorder(args.session)
    if args.target.startswith("plan:"):
        from graphscope.report.sources import StoredPlan

        measured = StoredPlan.parse(args.target).load(args.session)
    else:
        workload = Path(args.target)
        if not workload.is_file():
            raise BadInputError(f"{workload}: no such workload file")
        if args.reps < 3:
            raise BadInputError("--reps needs at least 3 repetitions per size")
        progress = _progress_printer(not args.json and sys.stderr.isatty())
        checks = {"timeout": args.timeout, "order_check": not args.no_order_check, "progress": progress}
        measured = measure(workload, sizes, args.reps, **checks)
    data = plan_and_record(recorder, measured, traffic, memory, startup, compare, args.serve, args.timeout)
    print(json.dumps(data, indent=2) if args.json else render_plan(data) + f"\n  stored as plan {data['plan_id']}")
    return 0


def _cmd_tune(args: argparse.Namespace) -> int:
    import importlib.util

    from graphscope.core.errors import BadInputError, ToolMissingError
    from graphscope.core.launch_config import LaunchConfig, parse_block
    from graphscope.report.tune_text import render_tuning
    from graphscope.tune.controller import TuningController

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
    from graphscope.store.recorder import Recorder

    controller = TuningController(args.workload, start, args.timeout, Recorder(args.session), verify=args.verify)
    if controller.verify_note:
        print(f"graphscope: {controller.verify_note}", file=sys.stderr)
    progress = _progress_printer(not args.json and sys.stderr.isatty())
    try:
        loaded = controller.load(progress)
        if not loaded.sites:
            raise BadInputError(
                f"{args.workload}: no ctx.launch sites to tune (library kernels, plain CuPy and PyTorch code "
                "keep the launch configurations they were built for)"
            )
        knobs = controller.knobs(args.node, blocks)
        result = controller.sweep(strategy, knobs, args.reps, progress, budget=args.budget, alone=not args.no_alone)
    finally:
        controller.close()
    data = result.to_json()
    data["tuning_id"] = result.tuning_id
    data["restarts"] = controller.restarts
    if args.save:
        if result.adopt:
            result.best.config.save(args.save)
            data["saved"] = str(args.save)
        else:
            data["saved"] = None
    print(
        json.dumps(data, indent=2)
        if args.json
        else render_tuning(data)
        + (
            f"\n  best config written to {shown_path(args.save)}"
            if data.get("saved")
            else ("\n  nothing written: the best config was not adopted" if args.save else "")
        )
    )
    return 0


@_one_shot
def _cmd_report(args: argparse.Namespace) -> int:
    from graphscope.core.errors import BadInputError
    from graphscope.report.compose import report_from_sources
    from graphscope.report.formats import FORMATS, write_report

    if args.output.suffix.lower() not in FORMATS:
        raise BadInputError(f"{args.output}: a report is .html, .md, .json or .csv")
    if not args.output.parent.is_dir():
        raise BadInputError(f"{args.output}: the folder {args.output.parent} does not exist")
    html = args.output.suffix.lower() == ".html"
    args.sources = [str(s) for s in _demo_ranks(args.sources, args.demo_ranks, "report")]
    paths = [Path(s) for s in args.sources]
    from graphscope.ranks.job import TRACE_SUFFIXES

    refuse_inputs(args.output, [*paths, args.session], "-o", folder_files=TRACE_SUFFIXES)
    if any(p.is_dir() for p in paths) or (len(paths) > 2 and all(p.is_file() for p in paths)):
        report, charts = _rank_report(paths, args)  # a job's rank traces
    else:
        report, charts = report_from_sources(args.sources, args.scope_a, args.scope_b, args.session, args.title, html)
    write_report(report, args.output, charts)
    from graphscope.report.compare import headline

    print("\n".join([f"wrote {shown_path(args.output)}", *(printable(line) for line in headline(report))]))
    return 0


def _rank_report(paths: list[Path], args: argparse.Namespace) -> tuple[dict, dict]:
    from graphscope.ranks.job import analyse_job
    from graphscope.report.ranks_report import ranks_report

    job = analyse_job(paths, args.step, args.scheduler, args.workers)
    _refuse_rankless(job)
    report, charts = ranks_report(job)
    if args.title:
        report["title"] = args.title
    return report, charts


@_one_shot
def _cmd_export(args: argparse.Namespace) -> int:
    from graphscope.analysis.summary import analyze
    from graphscope.core.errors import BadInputError
    from graphscope.report.perfetto import write_perfetto
    from graphscope.trace import cache, load_trace
    from graphscope.trace.kineto_json import is_kineto

    if not args.output.name.lower().endswith((".json", ".json.gz")):
        raise BadInputError(f"{args.output}: the export is trace-event JSON; name a .json (or .json.gz) file")
    if not args.output.parent.is_dir():
        raise BadInputError(f"{args.output}: the folder {args.output.parent} does not exist")
    refuse_inputs(args.output, [args.file], "-o")
    source, counts = args.file, None
    if source.suffix == ".nsys-rep":
        from graphscope.trace.nsysrep import export_to_sqlite

        source = export_to_sqlite(source)
    if not is_kineto(source) and cache.open_entry(source) is None:  # an export read from its file: by windows
        from graphscope.report.perfetto_stream import export_perfetto

        counts = export_perfetto(source, args.output)
    if counts is None:  # a PyTorch-profiler trace, an export the cache holds, or one that has no windows
        trace = load_trace(source)
        counts = write_perfetto(trace, analyze(trace), args.output)
    print(
        f"wrote {shown_path(args.output)}: {counts['slices']:,} slices ({counts['graph_launches']:,} graph launches), "
        f"{counts['flows']:,} launch flows "
        "(open it at https://ui.perfetto.dev or chrome://tracing)"
    )
    return 0


def _cmd_open(args: argparse.Namespace) -> int:
    from graphscope.app.main import run_gui

    return run_gui(args.file, screenshot=args.screenshot, size=args.size, select=args.select)


def _cmd_gui(args: argparse.Namespace) -> int:
    from graphscope.app.main import run_gui

    return run_gui(None)


_COMMANDS: list[Callable[[argparse._SubParsersAction], None]] = [
    _add_summary,
    _add_open,
    _add_run,
    _add_dag,
    _add_tune,
    _add_plan,
    _add_report,
    _add_export,
    _add_diverge,
]


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["_workload-child"]:  # a frozen app starting its own workload child
        from graphscope.workload.child import main as child_main

        return child_main(argv[1:])
    args = build_parser().parse_args(_join_values(argv))
    handler = getattr(args, "handler", _cmd_gui)
    if getattr(args, "no_cache", False):
        os.environ[answer_cache.NO_CACHE_ENV] = "1"  # children and background loads too
    hold = handler not in (_cmd_gui, _cmd_open)  # read once and answer: the cache is written when done
    answer_cache.hold_writes(hold)
    try:
        return _answer(handler, args)
    finally:
        answer_cache.hold_writes(False)
        if hold and "graphscope.trace.cache" in sys.modules:
            sys.modules["graphscope.trace.cache"].start_held_writes()


def _answer(handler: Callable[[argparse.Namespace], int], args: argparse.Namespace) -> int:
    """The command's exit status; a refused input or a failure the user can act on is one line."""
    try:
        return handler(args)
    except GraphscopeError as exc:
        _say(f"graphscope: error: {exc.message}")
        return exc.exit_status
    except BrokenPipeError:  # `graphscope summary --json FILE | head`: the reader left; not an error
        _silence_stdout()
        return 0
    except sqlite3.DatabaseError as exc:
        _say(f"graphscope: error: the file cannot be read as an export ({' '.join(str(exc).split())})")
        return EXIT_BAD_INPUT
    except OSError as exc:
        where = f"{exc.filename}: " if exc.filename else ("standard output: " if exc.errno == errno.ENOSPC else "")
        _say(f"graphscope: error: {where}{exc.strerror or exc}")
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        _say("graphscope: interrupted")
        return 130


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
        with contextlib.suppress(AttributeError, ValueError, OSError):
            stream.reconfigure(errors=STREAM_ERRORS)


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
        _say(f"graphscope: error: standard output: {exc.strerror or exc}")
        status = status or EXIT_BAD_INPUT
    with contextlib.suppress(OSError, ValueError):
        sys.stderr.flush()
    leave(status)


def leave(status: int) -> None:
    """End the process once the cache writers still running are done. The answer is out; Python's
    teardown would now free every module and array one by one (20-40 ms after a summary), which
    nothing graphscope holds needs: files are closed and children reaped by then."""
    if "graphscope.trace.cache" in sys.modules:  # a warm summary never imported it
        sys.modules["graphscope.trace.cache"].wait_for_writers()
    os._exit(status)

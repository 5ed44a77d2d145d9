"""`graphscope dag TARGET`: the CUDA graph's DAG, live from a workload or from a node-mode trace; as text,
JSON or Graphviz DOT."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from graphscope.cli.common import add_json, add_timeout
from graphscope.cli.pdl import add_dag_options, check_dag_options, measure_dag


def add(sub: Any) -> None:
    p = sub.add_parser("dag", help="the CUDA graph's DAG: live from a workload, or from a node-mode trace")
    p.add_argument(
        "target",
        type=Path,
        help="a workload .py, or a trace (.sqlite, .nsys-rep, or a PyTorch-profiler .json / .json.gz)",
    )
    output = p.add_mutually_exclusive_group()
    add_json(output, "print the DAG as JSON")
    output.add_argument("--dot", action="store_true", help="print Graphviz DOT (chains folded)")
    p.add_argument("--no-fold", action="store_true", help="with --dot: draw every node of long chains")
    p.add_argument("--config", type=Path, metavar="JSON", help="capture with a tuned launch config")
    add_timeout(p, 300.0)
    add_dag_options(p)  # --pdl, --trace, --reps: programmatic edges timed (cli/pdl.py)
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from graphscope.core.errors import BadInputError
    from graphscope.graph.export import to_dot
    from graphscope.graph.model import Dag
    from graphscope.text.tune import render_dag

    if not args.target.exists():
        raise BadInputError(f"{args.target}: no such file")
    check_dag_options(args)  # --pdl, --trace, --plain-trace, --reps
    if args.target.suffix == ".py":
        from graphscope.core.launch_config import LaunchConfig
        from graphscope.workload.session import WorkloadSession

        config = LaunchConfig.load(args.config) if args.config else None
        with WorkloadSession(args.target, config, args.timeout) as session:
            dags = [(Dag.from_json(session.request("dag")), f"live capture of {args.target.name}")]
            measure_dag(dags[0][0], session, args)
    else:
        from graphscope.export.dags import dags_of_file

        dags = [(dag, f"trace {args.target.name}") for dag in dags_of_file(args.target)]
    for dag, title in dags:
        if args.json:
            print(json.dumps(dag.to_json(), indent=2))
        elif args.dot:
            print(to_dot(dag, fold=not args.no_fold), end="")
        else:
            print(render_dag(dag, title))
    return 0

"""`graphscope launch-cost`: the graph launch-cost model graphscope judges traces with, a graph priced by
it, and `--measure` to measure it anew on this machine's GPU (workload/launch_bench.py)."""

from __future__ import annotations

import argparse
import json

from graphscope.core.errors import BadInputError, GraphscopeError


def add(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "launch-cost",
        help="the graph launch-cost model (fixed + per node + per edge); --measure: measure this GPU",
        description="Show the model graphscope prices graph launches with (the user's own measurement, else the "
        "one measured on an H100 and shipped), price a graph of --nodes/--edges, or measure this GPU.",
    )
    p.add_argument("--measure", action="store_true", help="measure this machine's GPU and keep the fit as the model")
    p.add_argument("--quick", action="store_true", help="with --measure: four sizes instead of seven")
    p.add_argument("--nodes", type=int, help="price a graph of this many nodes")
    p.add_argument("--edges", type=int, help="... and this many edges (default: a chain's, nodes - 1)")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from graphscope.core import launch_cost
    from graphscope.core.settings import data_dir

    if (args.nodes is not None and args.nodes < 1) or (args.edges is not None and args.edges < 0):
        raise BadInputError("--nodes must be at least 1 and --edges at least 0")
    if args.edges is not None and args.nodes is None:
        raise BadInputError("--edges needs --nodes")
    path = data_dir() / launch_cost.USER_FILE
    if args.measure:
        from graphscope.workload.launch_bench import measure_and_store

        try:
            measure_and_store(path, quick=args.quick, say=None if args.json else print)
        except (ImportError, OSError, RuntimeError) as e:
            raise GraphscopeError(f"cannot measure graph launches on this machine: {e}") from e
    model = launch_cost.current(data_dir())
    priced = None if args.nodes is None else float(model.launch_ns(args.nodes, args.edges))
    if args.json:
        print(json.dumps({"model": model.to_json(), "file": str(path) if model.measured_here else None,
                          "nodes": args.nodes, "edges": args.edges, "launch_ns": priced}))  # fmt: skip
        return 0
    print(f"graph launch (host): {model.describe()}")
    for term, (lo, hi) in model.interval.items():
        print(f"  {term}: 95% interval {lo:g} to {hi:g}")
    other = model.other
    extra = ", ".join(
        f"{k.removesuffix('_ns').replace('_', ' ')} +{v / 1000:.2f} us" for k, v in other.get("extra", {}).items()
    )
    if extra:
        print(f"  priced apart, each: {extra}")
    lines = [("first launch without upload", other.get("first_no_upload")), ("under Nsight node tracing",
             (other.get("traced_node") or {}).get("host")), ("under Nsight graph tracing",
             (other.get("traced_graph") or {}).get("host"))]  # fmt: skip
    for label, fit in lines:
        if fit:
            print(f"  {label}: {fit['per_node_ns']:.0f} ns a node")
    if priced is not None:
        edges = args.nodes - 1 if args.edges is None else args.edges
        print(f"a graph of {args.nodes:,} nodes and {edges:,} edges: {priced / 1000:.2f} us to launch")
    return 0

"""Where a trace meets a run: does the trace hold every iteration a conditional node ran?

A WHILE node runs its body several times per graph launch, but a profiler may record fewer body
executions: the issue found PyTorch's profiler recording one body kernel per launch of a 7-iteration
loop (its Python `events()` API does; PyTorch 2.11's exported trace holds every execution, with
correlation 0, which the Kineto reader gives to the replay's body graph). graphscope knows the
iterations (its condition kernels count them while the profiled child runs), so where it wrote the trace
itself (`run --profile nsys|torch`) it counts the body's kernels among the trace's graph-launched kernels
and flags a shortfall: "the trace shows 1 of 12 iterations per launch". The counts travel with the trace
in a sidecar (`<trace>.conditionals.json`), so `summary` of that trace flags it as well.
"""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import Any

import numpy as np

from graphscope.core.paths import sidecar_of
from graphscope.trace.model import Trace


def expected_runs(measured: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """From a profiled child's conditionals (workload/child/conditional.py LoopMeter): per construct, the body
    runs over every launch the trace holds (warm-up and measured), the launches, and the body's kernels."""
    found = {}
    for key, loop in measured.items():
        runs = loop.get("runs_per_step") or []
        launches = len(runs) + int(loop.get("warmup_steps") or 0)
        if not loop.get("body_kernels") or not launches:
            continue
        found[key] = {
            "kind": loop.get("kind"),
            "runs": int(sum(runs)) + int(loop.get("warmup_runs") or 0),
            "launches": launches,
            "body_kernels": list(loop["body_kernels"]),
        }
    return found


def graph_kernel_counts(trace: Trace, names: set[str]) -> dict[str, int]:
    """How many kernels of each name the trace holds that ran inside a graph launch (a graph node id
    recorded or matched), the body's kernels of a conditional node among them."""
    kernels = trace.kernels
    counts = dict.fromkeys(names, 0)
    if not len(kernels):
        return counts
    in_graph = kernels["graph_node"] >= 0 if "graph_node" in kernels else np.ones(len(kernels), bool)
    column = "short_name" if "short_name" in kernels else "name"
    ids, per_id = np.unique(kernels[column][in_graph], return_counts=True)
    for symbol, count in zip(ids.tolist(), per_id.tolist()):
        if symbol < 0:
            continue
        text = trace.symbols[symbol]
        name = text.split("(")[0].split("<")[0].strip()  # a demangled signature names the function first
        if name in counts:
            counts[name] += int(count)
    return counts


def check(trace: Trace, expected: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per construct: body executions the trace shows against those that ran, per launch, and a flag
    (`shortfall`) when every body kernel is under-recorded (a kernel also launched outside the loop
    would hide a shortfall of its own, never invent one)."""
    names = {name for loop in expected.values() for name in loop["body_kernels"]}
    counts = graph_kernel_counts(trace, names)
    found = {}
    for key, loop in expected.items():
        body = loop["body_kernels"]
        per_iteration = {name: body.count(name) for name in dict.fromkeys(body)}  # in launch order
        seen = {name: counts[name] / per_iteration[name] for name in per_iteration}  # iterations each shows
        shown = max(seen.values()) if seen else 0.0
        ran = loop["runs"]
        found[key] = {
            "kind": loop["kind"],
            "launches": loop["launches"],
            "iterations_ran": ran,
            "iterations_in_trace": shown,
            "kernels_in_trace": {name: counts[name] for name in per_iteration},
            "shortfall": bool(ran > 0 and shown < ran),
        }
    return found



def check_run(data: dict[str, Any]) -> None:
    """Check each profiled mode's trace of a run's JSON form in place (`profiled[mode]["conditionals_in_trace"]`)
    and leave the counts beside each trace for `summary`. Traces that cannot be read are left unchecked."""
    from graphscope.trace import load_trace

    for mode, seen in (data.get("profiled") or {}).items():
        expected = expected_runs(seen.get("conditionals") or {})
        files = (data.get("traces") or {}).get(mode)
        if mode != "graph" or not expected or not files:  # eagerly each body kernel is a launch of its own
            continue
        try:
            result = check(load_trace(files["sqlite"]), expected)
        except Exception as exc:  # a trace the profiler left damaged: say so beside the run, do not fail it
            seen["conditionals_in_trace"] = {"error": f"{type(exc).__name__}: {exc}".splitlines()[0]}
            continue
        seen["conditionals_in_trace"] = result
        for path in {files["sqlite"], files.get("report") or files["sqlite"]}:
            with contextlib.suppress(OSError):  # the run's JSON keeps the check; summary would not repeat it
                sidecar_of(path).write_text(json.dumps(expected, indent=1))


def check_beside(trace: Trace, given: str | Path | None = None) -> dict[str, dict[str, Any]] | None:
    """`summary`'s check: the counts graphscope left beside this trace (the file the user `given`: a
    .nsys-rep's export lives elsewhere), if any, against its kernels."""
    path = sidecar_of(given if given is not None else trace.path)
    if not path.is_file():
        return None
    try:
        expected = json.loads(path.read_text())
        return check(trace, expected) if isinstance(expected, dict) else None
    except (OSError, ValueError, KeyError, TypeError, AttributeError, ZeroDivisionError):
        return None  # a sidecar that is not graphscope's counts (damaged, edited, planted) flags nothing

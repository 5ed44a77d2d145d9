"""Plain verdicts from the seeds' rules of thumb (core/rules.py), applied to the steady state.

- Launch overhead above about 15% of GPU busy time means CUDA graphs pay; below that, shorten kernels.
- The ratio counts steady-state launches only: one-off first calls (lazy module loading, a kernel's or
  graph's first launch far slower than the rest; analysis/steady.py) are named and left out, so a
  short trace is not judged by its start-up.
- A trace that already uses graphs is judged on what graphs left: the eager launches that remain
  (against the same 15% rule) and what the graph launch calls cost against their replay time.
- No verdict on too little evidence (core.rules.enough_evidence): a few calls say nothing about a
  pipeline's steady state.

Every verdict names the one number its rule judged (`Verdict.judged`), with the label the summary
table and the reports print beside it.
"""

from __future__ import annotations

from dataclasses import dataclass

from graphscope.core.rules import (
    LAUNCH_BOUND_RATIO,
    MIN_LAUNCH_CALLS,
    MIN_REPEATS,
    enough_evidence,
    launch_rule,
    plural,
)
from graphscope.core.units import format_ns

LAUNCH_OVERHEAD = "launch overhead"  # CPU time in steady-state launch calls / GPU busy time
EAGER_OVERHEAD = "eager launch overhead"  # the same for the eager launch calls a graph-using scope keeps
GRAPH_LAUNCH_COST = "graph launch cost"  # CPU time in graph launch calls / the GPU time of their replays


@dataclass(frozen=True)
class Judged:
    """The number a verdict's rule judged: its label (as every table prints it) and value (a ratio)."""

    label: str
    value: float

    def to_json(self) -> dict[str, object]:
        return {"label": self.label, "value": round(self.value, 6)}


@dataclass(frozen=True)
class Verdict:
    launch_bound: bool | None  # None: not enough data to say
    text: str
    judged: Judged | None = None


def launch_verdict(launch_ns: int, busy_ns: int, launches: int, label: str = LAUNCH_OVERHEAD) -> Verdict:
    """Is a trace launch-bound? `launch_ns` is CPU time inside launch calls, `busy_ns` GPU busy time."""
    if busy_ns <= 0 or launches == 0:
        return Verdict(None, "no verdict: the trace has no launch calls or no GPU work to compare them with")
    ratio = launch_ns / busy_ns
    judged = Judged(label, ratio)
    share = f"{label} {ratio:.0%} (CPU time in {plural(launches, 'launch call')} / GPU busy time)"
    if ratio > LAUNCH_BOUND_RATIO:
        return Verdict(True, f"launch-bound: {share}, {launch_rule(ratio, named=True)}; CUDA graphs should pay", judged)
    return Verdict(
        False,
        f"not launch-bound: {share}, {launch_rule(ratio, named=True)}; "
        "a graph would save little, shorten the kernels instead",
        judged,
    )


NODE_TRACING_NOTE = (
    "; node-level tracing (--cuda-graph-trace=node) slows graph launch calls, "
    "trace with --cuda-graph-trace=graph to measure what they cost"
)


def steady_verdict(account, node_traced: bool = False) -> Verdict:
    """The verdict on a scope's steady state (`account`: an analysis.steady.LaunchAccount).

    `node_traced`: graph nodes were traced one by one, which inflates graph launch calls."""
    calls = account.eager_calls + account.graph_calls
    if account.busy_ns <= 0 or calls == 0:
        verdict = Verdict(None, "no verdict: the scope has no steady-state launch calls or no GPU work")
    elif not enough_evidence(calls, account.graph_calls, account.max_repeats):
        verdict = Verdict(
            None,
            f"too little to judge: {plural(calls, 'steady-state launch call')} (at most "
            f"{plural(account.max_repeats, 'launch', 'launches')} of one kernel or graph) and "
            f"{format_ns(account.busy_ns)} of GPU work; the ~{LAUNCH_BOUND_RATIO:.0%} rule needs at least "
            f"{MIN_REPEATS} launches of one kernel or graph and {MIN_LAUNCH_CALLS} launch calls (or "
            f"{MIN_REPEATS} graph launches): trace more steps",
        )
    elif account.graph_calls == 0:
        verdict = launch_verdict(account.eager_ns, account.busy_ns, account.eager_calls)
    else:
        verdict = _graphs_in_use(account, node_traced)
    if account.one_off_calls:
        names = ", ".join(account.one_off_names[:3]) + ("…" if len(account.one_off_names) > 3 else "")
        verdict = Verdict(
            verdict.launch_bound,
            f"{verdict.text}. Left out: {plural(account.one_off_calls, 'one-off first call')} ({names}) took "
            f"{format_ns(account.one_off_ns)} (lazy module loading and first-launch set-up)",
            verdict.judged,
        )
    return verdict


def _graphs_in_use(account, node_traced: bool) -> Verdict:
    eager_ratio = account.eager_ns / account.busy_ns
    graph_cost = account.graph_ns / account.graph_replay_ns if account.graph_replay_ns else 0.0
    note = NODE_TRACING_NOTE if node_traced else ""
    graphs = (
        f"{plural(account.graph_calls, 'graph launch', 'graph launches')} cost {format_ns(account.graph_ns)} "
        f"of CPU time against {format_ns(account.graph_replay_ns)} of replay ({GRAPH_LAUNCH_COST} "
        f"{graph_cost:.1%}{note})"
    )
    if account.eager_calls and eager_ratio > LAUNCH_BOUND_RATIO:
        return Verdict(
            True,
            f"graphs in use, but {plural(account.eager_calls, 'eager launch call')} remain: {EAGER_OVERHEAD} "
            f"{eager_ratio:.0%} of GPU busy time, {launch_rule(eager_ratio, named=True)}: "
            f"capture them into the graph too; {graphs}",
            Judged(EAGER_OVERHEAD, eager_ratio),
        )
    eager = (
        f"the {plural(account.eager_calls, 'remaining eager launch call')} cost {EAGER_OVERHEAD} "
        f"{eager_ratio:.0%} of GPU busy time ({launch_rule(eager_ratio, named=True)})"
        if account.eager_calls
        else "no eager launches remain"
    )
    if graph_cost > 1.0 and node_traced:
        return Verdict(
            None,
            f"graphs in use; their launch calls took longer than the replays they start, but node-level "
            f"tracing slows graph launch calls, so this trace cannot judge them: {graphs}; {eager}",
            Judged(GRAPH_LAUNCH_COST, graph_cost),
        )
    if graph_cost > 1.0:
        return Verdict(
            True,
            f"graphs in use, but their launch calls take longer than the replays they start: {graphs}; "
            f"the CPU still bounds the step (launch larger graphs, or several steps per graph); {eager}",
            Judged(GRAPH_LAUNCH_COST, graph_cost),
        )
    return Verdict(
        False,
        f"graphs in use and launches are no longer the bottleneck: {graphs}; {eager}; shorten the kernels next",
        Judged(EAGER_OVERHEAD, eager_ratio),
    )

"""Plain verdicts from the seeds' rules of thumb, applied to the steady state.

- Launch overhead above about 15% of GPU busy time means CUDA graphs pay; below that, shorten kernels
  instead (core/rules.py holds the numbers).
- The ratio counts steady-state launches only: one-off first calls (lazy module loading, a kernel's or
  graph's first launch far slower than the rest; analysis/steady.py) are named and left out, so a
  short trace is not judged by its start-up.
- A trace that already uses graphs is judged on what graphs left: the eager launches that remain
  (against the same 15% rule) and what the graph launch calls cost against their replay time.
"""

from __future__ import annotations

from dataclasses import dataclass

from graphscope.core.rules import LAUNCH_BOUND_RATIO, launch_rule
from graphscope.core.units import format_ns


@dataclass(frozen=True)
class Verdict:
    launch_bound: bool | None  # None: not enough data to say
    text: str


def launch_verdict(launch_ns: int, busy_ns: int, launches: int) -> Verdict:
    """Is a trace launch-bound? `launch_ns` is CPU time inside launch calls, `busy_ns` GPU busy time."""
    if busy_ns <= 0 or launches == 0:
        return Verdict(None, "no verdict: the trace has no launch calls or no GPU work to compare them with")
    ratio = launch_ns / busy_ns
    share = f"CPU time in {launches} launch calls is {ratio:.0%} of GPU busy time"
    if ratio > LAUNCH_BOUND_RATIO:
        return Verdict(True, f"launch-bound: {share} ({launch_rule(ratio)}); CUDA graphs should pay")
    return Verdict(
        False,
        f"not launch-bound: {share} ({launch_rule(ratio)}); a graph would save little, shorten the kernels instead",
    )


NODE_TRACING_NOTE = (
    "; node-level tracing (--cuda-graph-trace=node) slows graph launch calls, "
    "trace with --cuda-graph-trace=graph to measure what they cost"
)


def steady_verdict(account, node_traced: bool = False) -> Verdict:
    """The verdict on a scope's steady state (`account`: an analysis.steady.LaunchAccount).

    `node_traced`: graph nodes were traced one by one, which inflates graph launch calls."""
    if account.busy_ns <= 0 or account.eager_calls + account.graph_calls == 0:
        verdict = Verdict(None, "no verdict: the scope has no steady-state launch calls or no GPU work")
    elif account.graph_calls == 0:
        verdict = launch_verdict(account.eager_ns, account.busy_ns, account.eager_calls)
    else:
        verdict = _graphs_in_use(account, node_traced)
    if account.one_off_calls:
        names = ", ".join(account.one_off_names[:3]) + ("…" if len(account.one_off_names) > 3 else "")
        verdict = Verdict(
            verdict.launch_bound,
            f"{verdict.text}. Left out: {account.one_off_calls} one-off first call"
            f"{'s' if account.one_off_calls > 1 else ''} ({names}) took {format_ns(account.one_off_ns)} "
            "(lazy module loading and first-launch set-up)",
        )
    return verdict


def _graphs_in_use(account, node_traced: bool) -> Verdict:
    eager_ratio = account.eager_ns / account.busy_ns
    graph_cost = account.graph_ns / account.graph_replay_ns if account.graph_replay_ns else 0.0
    graphs = (
        f"{account.graph_calls} graph launch{'es' if account.graph_calls > 1 else ''} cost "
        f"{format_ns(account.graph_ns)} of CPU time against {format_ns(account.graph_replay_ns)} of replay "
        f"({graph_cost:.1%}{NODE_TRACING_NOTE if node_traced else ''})"
    )
    if account.eager_calls and eager_ratio > LAUNCH_BOUND_RATIO:
        return Verdict(
            True,
            f"graphs in use, but {account.eager_calls} eager launch calls remain and cost {eager_ratio:.0%} of "
            f"GPU busy time ({launch_rule(eager_ratio)}): capture them into the graph too; {graphs}",
        )
    eager = (
        f"the {account.eager_calls} remaining eager launch calls cost {eager_ratio:.0%} of GPU busy time"
        if account.eager_calls
        else "no eager launches remain"
    )
    return Verdict(
        False,
        f"graphs in use and launches are no longer the bottleneck: {graphs}; {eager} "
        f"({launch_rule(eager_ratio)}); shorten the kernels next",
    )

"""Plain verdicts from the seeds' rules of thumb (core/rules.py), applied to the steady state.

- Launch overhead above about 15% of GPU busy time means CUDA graphs pay; below that, shorten kernels.
- The ratio counts steady-state launches only: one-off first calls (lazy module loading, a kernel's or
  graph's first launch far slower than the rest; analysis/steady.py) are named and left out, so a
  short trace is not judged by its start-up.
- A trace that already uses graphs is judged on what graphs left: the eager launches that remain
  (against the same 15% rule) and what the graph launch calls cost against their replay time.
- The 15% rule judges the submission cost: launch calls that blocked behind queued work or an implicit
  sync (analysis/steady.py) count only their median part; their excess is named apart.
- A scope whose GPU never waited for the CPU (host-wait idle under core.rules.GPU_BOUND_HOST_WAIT of its
  time) is GPU-bound, whatever the launch ratio: graphs only remove waiting the GPU did not do.
- Launch calls made during a stream capture build graphs: named apart, never judged as eager launches;
  a scope that only captures says so.
- No verdict on too little evidence (core.rules.enough_evidence): a few calls say nothing about a
  pipeline's steady state.

Every verdict names the one number its rule judged (`Verdict.judged`), with the label the summary
table and the reports print beside it.
"""

from __future__ import annotations

from dataclasses import dataclass

from graphscope.core.rules import (
    BLOCKED_FACTOR,
    BLOCKED_MIN_NS,
    GPU_BOUND_HOST_WAIT,
    LAUNCH_BOUND_RATIO,
    MIN_LAUNCH_CALLS,
    MIN_REPEATS,
    QUEUED_IDLE_SHARE,
    enough_evidence,
    launch_rule,
    percent_beside,
    plural,
)
from graphscope.core.units import format_ns

LAUNCH_OVERHEAD = "launch overhead"  # CPU time in steady-state launch calls / GPU busy time
EAGER_OVERHEAD = "eager launch overhead"  # the same for the eager launch calls a graph-using scope keeps
GRAPH_LAUNCH_COST = "graph launch cost"  # CPU time in graph launch calls / the GPU time of their replays
HOST_WAIT = "GPU idle waiting for the CPU"  # host-wait idle / the scope's time on the GPUs with work
ALL_CAPTURE = "this scope captures graphs; it launches nothing to judge"


@dataclass(frozen=True)
class Waited:
    """How long the scope's GPUs (those with work in it) waited for the CPU, of their time in the scope from
    each one's first work to its last (start-up and tail left out: no launch a graph removes was awaited)."""

    host_wait_ns: int
    wall_ns: int
    busy_ns: int | None = None  # their busy time (None: not known; the idle is then not described)

    @property
    def share(self) -> float:
        return self.host_wait_ns / self.wall_ns if self.wall_ns > 0 else 0.0

    @property
    def idle_share(self) -> float | None:
        """Of their time, the share idle with work queued behind something other than the CPU."""
        if self.busy_ns is None or self.wall_ns <= 0:
            return None
        return max(0, self.wall_ns - self.busy_ns - self.host_wait_ns) / self.wall_ns


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


def launch_verdict(
    launch_ns: int, busy_ns: int, launches: int, label: str = LAUNCH_OVERHEAD, blocked: bool = False
) -> Verdict:
    """Is a trace launch-bound? `launch_ns` is CPU time inside launch calls (`blocked`: less the time some
    of them blocked), `busy_ns` GPU busy time."""
    if busy_ns <= 0 or launches == 0:
        return Verdict(None, "no verdict: the trace has no launch calls or no GPU work to compare them with")
    ratio = launch_ns / busy_ns
    judged = Judged(label, ratio)
    cost = "submitting" if blocked else "in"
    percent = percent_beside(ratio, LAUNCH_BOUND_RATIO)
    share = f"{label} {percent} (CPU time {cost} {plural(launches, 'launch call')} / GPU busy time)"
    if ratio > LAUNCH_BOUND_RATIO:
        return Verdict(True, f"launch-bound: {share}, {launch_rule(ratio, named=True)}; CUDA graphs should pay", judged)
    return Verdict(
        False,
        f"not launch-bound: {share}, {launch_rule(ratio, named=True)}; "
        "a graph would save little, shorten the kernels instead",
        judged,
    )


NODE_TRACING_NOTE = (
    "; node-level tracing (Nsight's --cuda-graph-trace=node, or a PyTorch profiler recording each replayed "
    "kernel) slows graph launch calls: measure what they cost with --cuda-graph-trace=graph or untraced "
    "(graphscope run)"
)


def steady_verdict(account, node_traced: bool = False, waited: Waited | None = None) -> Verdict:
    """The verdict on a scope's steady state (`account`: an analysis.steady.LaunchAccount).

    `node_traced`: graph nodes were traced one by one, which inflates graph launch calls. `waited`: how
    long the scope's GPUs waited for the CPU (None: not known, the GPU-bound rule is not applied)."""
    calls = account.eager_calls + account.graph_calls
    if calls == 0 and account.capture_calls:
        verdict = Verdict(
            None,
            f"{ALL_CAPTURE}: its {plural(account.capture_calls, 'launch call')} ran inside stream captures "
            f"({format_ns(account.capture_ns)} of CPU time), building graphs that run when launched",
        )
    elif account.busy_ns <= 0 or calls == 0:
        verdict = Verdict(None, "no verdict: the scope has no steady-state launch calls or no GPU work")
    elif waited is not None and waited.wall_ns > 0 and waited.share < GPU_BOUND_HOST_WAIT:
        verdict = _never_waited(account, node_traced, waited)
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
        verdict = launch_verdict(
            account.eager_submit_ns, account.busy_ns, account.eager_calls, blocked=account.blocked_calls > 0
        )
    else:
        verdict = _graphs_in_use(account, node_traced)
    notes = [note for note in _set_apart(account, calls) if note]
    if notes:
        verdict = Verdict(verdict.launch_bound, f"{verdict.text}. " + ". ".join(notes), verdict.judged)
    return verdict


def _set_apart(account, calls: int) -> list[str]:
    """Sentences naming the launch calls the verdict's number leaves out, and why."""
    notes = []
    if account.blocked_calls:
        notes.append(
            f"Blocked: {plural(account.blocked_calls, 'launch call')} waited {format_ns(account.blocked_ns)} "
            f"behind queued work or an implicit sync (over {BLOCKED_FACTOR:.0f}x the median call and "
            f"{format_ns(BLOCKED_MIN_NS)}, returning as the GPU finished work); only their median part counts "
            "as submission"
        )
    if account.one_off_calls:
        names = ", ".join(account.one_off_names[:3]) + ("…" if len(account.one_off_names) > 3 else "")
        notes.append(
            f"Left out: {plural(account.one_off_calls, 'one-off first call')} ({names}) took "
            f"{format_ns(account.one_off_ns)} (lazy module loading and first-launch set-up)"
        )
    if account.capture_calls and calls:
        notes.append(
            f"Capture: {plural(account.capture_calls, 'launch call')} inside stream captures "
            f"({format_ns(account.capture_ns)}) built graphs and are not eager launches"
        )
    if account.without_work_calls:
        named = list(account.without_work_names.items())
        names = ", ".join(f"{name} {count:,}" for name, count in named[:3]) + ("…" if len(named) > 3 else "")
        notes.append(
            f"Not counted: {plural(account.without_work_calls, 'launch call')} with no GPU work in the trace "
            f"({names}; {format_ns(account.without_work_ns)} of CPU time)"
        )
    return notes


def _graph_cost(account, node_traced: bool) -> tuple[str, float]:
    """What the graph launch calls cost against their replays: the clause, and the ratio."""
    graph_ns = account.graph_ns - account.graph_blocked_ns  # what submitting them cost
    graph_cost = graph_ns / account.graph_replay_ns if account.graph_replay_ns else 0.0
    # the tracing's cost matters only where the calls look expensive (above the 15% rule against replay)
    note = NODE_TRACING_NOTE if node_traced and graph_cost > LAUNCH_BOUND_RATIO else ""
    graphs = (
        f"{plural(account.graph_calls, 'graph launch', 'graph launches')} cost {format_ns(graph_ns)} "
        f"of CPU time against {format_ns(account.graph_replay_ns)} of replay ({GRAPH_LAUNCH_COST} "
        f"{graph_cost:.1%}{note})"
    )
    return graphs, graph_cost


def _never_waited(account, node_traced: bool, waited: Waited) -> Verdict:
    """The GPU never waited for the CPU: GPU-bound where it was mostly busy; where it was mostly idle with
    its work queued, that idle waited on something else, which is what to look at (never "shorten the
    kernels" beside a GPU idle most of the time)."""
    graphs = f"; graphs in use: {_graph_cost(account, node_traced)[0]}" if account.graph_calls else ""
    never = (
        f"the GPU never waited for the CPU ({format_ns(waited.host_wait_ns)} of the {format_ns(waited.wall_ns)} "
        f"from its first work to its last idle waiting for the CPU, "
        f"{percent_beside(waited.share, GPU_BOUND_HOST_WAIT, 1)}, "
        f"under the ~{GPU_BOUND_HOST_WAIT:.0%} rule)"
    )
    queued = waited.idle_share
    if queued is not None and queued > QUEUED_IDLE_SHARE:
        text = (
            f"not launch-bound: {never}, but it was idle {queued:.0%} of that time with work queued behind "
            f"something else (a synchronisation, another stream, a copy or another rank): CUDA graphs would "
            f"not shorten the step; find what the queued work waited for{graphs}"
        )
    else:
        text = f"GPU-bound: {never}: CUDA graphs would not shorten the step, shorten the GPU work instead{graphs}"
    return Verdict(False, text, Judged(HOST_WAIT, waited.share))


def _graphs_in_use(account, node_traced: bool) -> Verdict:
    eager_ratio = account.eager_ratio
    graphs, graph_cost = _graph_cost(account, node_traced)
    if account.eager_calls and eager_ratio > LAUNCH_BOUND_RATIO:
        return Verdict(
            True,
            f"graphs in use, but {plural(account.eager_calls, 'eager launch call')} remain: {EAGER_OVERHEAD} "
            f"{percent_beside(eager_ratio, LAUNCH_BOUND_RATIO)} of GPU busy time, "
            f"{launch_rule(eager_ratio, named=True)}: "
            f"capture them into the graph too; {graphs}",
            Judged(EAGER_OVERHEAD, eager_ratio),
        )
    eager = (
        f"the {plural(account.eager_calls, 'remaining eager launch call')} cost {EAGER_OVERHEAD} "
        f"{percent_beside(eager_ratio, LAUNCH_BOUND_RATIO)} of GPU busy time ({launch_rule(eager_ratio, named=True)})"
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

"""The rules of thumb graphscope judges by (the seeds' numbers), and the one wording of a gain.

- LAUNCH_BOUND_RATIO: CPU time inside launch calls above about 15% of GPU busy time means the
  pipeline is launch-bound, so CUDA graphs should pay; below it, shorten the kernels instead.
- WORTHWHILE_GAIN: a graph (or a tuned configuration) that saves less than about 20% of the time per
  step is rarely worth its maintenance.
- NEGLIGIBLE_GAIN: a confirmed tuning gain under 1% is real but not worth changing a launch for.
- The evidence rule (MIN_REPEATS, MIN_LAUNCH_CALLS): below it, "too little to judge".
- BLOCKED_FACTOR, BLOCKED_MIN_NS: a launch call that blocked behind queued work or an implicit sync
  (not submission cost; analysis/steady.py).
- GPU_BOUND_HOST_WAIT: a GPU idle waiting for the CPU under this share of its time is GPU-bound,
  whatever the launch ratio.
- A difference is significant when the 95% interval of the ratio of medians excludes 1
  (`core.stats.Ratio.significant`); otherwise "no significant difference".
"""

from __future__ import annotations

LAUNCH_BOUND_RATIO = 0.15
WORTHWHILE_GAIN = 0.20
NEGLIGIBLE_GAIN = 0.01

WORTH_IT, SMALL, SLOWER = "worth it", "real but small", "slower"

OUTPUT_TOLERANCES = {  # (rtol, atol) by the output's dtype: about a few units in its last place
    "float64": (1e-9, 1e-12),
    "float32": (1e-5, 1e-6),
    "float16": (1e-3, 1e-3),
    "bfloat16": (1e-2, 1e-2),
}
"""How far a graph's (or a tuned configuration's) floating-point outputs may be from the eager
reference and still match; integer and boolean outputs must be equal."""

MIN_REPEATS = 3
MIN_LAUNCH_CALLS = 10
"""The evidence rule: the 15% verdict needs a steady state with at least MIN_REPEATS launches of one
kernel or graph (a repeated step) and MIN_LAUNCH_CALLS launch calls, or MIN_REPEATS graph launches."""


BLOCKED_FACTOR = 10.0
BLOCKED_MIN_NS = 100_000
"""A steady launch call is *blocked* (it waited behind queued work, a full launch queue or an implicit
sync, rather than submitting) when it took over BLOCKED_FACTOR x the median call of its kind in the scope
and over BLOCKED_MIN_NS, and some GPU work on its device finished while it ran (its return followed GPU
progress); its time above the median is blocked time, not submission cost. Measured on the shipped
exports and PyTorch-profiler traces (analysis/steady.py): steady kernel-launch calls sit within 1.5-3x of
their median at the 99th percentile and within 6x at the 99.9th on clean H200 traces, so 10x is outside
the spread of submission itself; 100 us is 15-25x a typical 4-7 us call, so a slow median (a ROCm trace's
or a profiled run's) cannot make a few microseconds of jitter 'blocked'."""

GPU_BOUND_HOST_WAIT = 0.05
"""A scope whose GPU waited for the CPU (host-wait idle, analysis/accounting.py) under 5% of its time is
GPU-bound: graphs remove only that waiting, so they could shorten its steps by 5% at most, a quarter of
the ~20% a graph must save to be worth it (WORTHWHILE_GAIN); the launch ratio is not judged then."""


QUEUED_IDLE_SHARE = 0.5
"""A GPU that never waited for the CPU (GPU_BOUND_HOST_WAIT) is GPU-bound only while it is mostly busy: idle
over half its time with its next work already queued, it waited on something else (a synchronisation,
another stream, a copy, another rank), and shorter kernels are not the first thing to try. Seen on HTA's
16-rank trace: 1.2% of its time waiting for the CPU, 64% idle with work queued (35.6% busy)."""

def enough_evidence(calls: int, graph_calls: int, max_repeats: int) -> bool:
    """Does a steady state hold enough to judge (the evidence rule above)?"""
    return max_repeats >= MIN_REPEATS and (calls >= MIN_LAUNCH_CALLS or graph_calls >= MIN_REPEATS)


def plural(count: int, noun: str, nouns: str | None = None) -> str:
    """'1 launch call', '5,001 launch calls' (thousands separated)."""
    return f"{count:,} {noun if count == 1 else (nouns or noun + 's')}"


def judge_gain(speedup: float) -> tuple[str, str]:
    """A significant speed-up (old time / new time) against the 20% rule: (WORTH_IT | SMALL | SLOWER,
    the clause that says why, e.g. "86% less time per step, above the ~20% rule")."""
    gain = 1 - 1 / speedup
    if gain >= WORTHWHILE_GAIN:
        return WORTH_IT, f"{gain:.0%} less time per step, above the ~{WORTHWHILE_GAIN:.0%} rule"
    if gain > 0:
        return SMALL, f"{gain:.0%} less time per step, under the ~{WORTHWHILE_GAIN:.0%} rule"
    return SLOWER, f"{-gain:.0%} more time per step"


def percent_beside(ratio: float, rule: float, decimals: int = 0) -> str:
    """`ratio` as a percentage with the fewest decimals (from `decimals`, at most 2) that keep it from
    printing as the `rule` it is judged against: 0.1478 against 15% is "14.8%", never "15% ... below the
    ~15% rule" (hta's trace_diff control printed that)."""
    for places in range(decimals, 3):
        text = f"{ratio:.{places}%}"
        if ratio == rule or text != f"{rule:.{places}%}":
            return text
    return f"{ratio:.2%}"


def launch_rule(ratio: float, named: bool = False) -> str:
    """Where a launch-overhead ratio stands against the 15% rule: "above ~15%" ("above the ~15% rule")."""
    side = "above" if ratio > LAUNCH_BOUND_RATIO else "below"
    return f"{side} the ~{LAUNCH_BOUND_RATIO:.0%} rule" if named else f"{side} ~{LAUNCH_BOUND_RATIO:.0%}"


PROFILER_DISTORTS = 0.20
"""A profiled run slower than the unprofiled one by more than this: its trace's launch figures are the
profiler's own (measured on the H200: torch.profiler made a 1,000-node graph launch call 1.56 ms, against
4.4 us unprofiled; the profiled seed ran +164% in graph mode, +100% eagerly)."""

STEP_MIN_INSTANCES = 2
"""A step repeats: a range name seen once is a phase of the program (set-up, capture), never a step.
Two, not MIN_REPEATS: PyTorch-profiler traces often hold two ProfilerStep#N (hta's sampled ranks, the
MI250 toy) and their steps are still the steps."""

STEP_GPU_SHARE = 0.50
"""A family of ranges is the trace's steps only when the GPU work launched inside its instances is at
least half of the trace's GPU busy time: the steps are where the work is. Measured on the shipped
traces: ProfilerStep#* launched 100% of the GPU busy time of each of the seven HTA traces with two or more
of them; ranges nested in it launched less ('## forward ##' 8-39%, '## backward ##' 38-74%: passing
ones lose to the step, which launched more); the seed's eager_* and graph_* 40-44% each (no steps), the
fork-join's graph_* 56%."""

STEP_DISJOINT_SHARE = 0.90
"""The instances of a step family are mostly side by side, not nested or concurrent: the time their
union covers is at least 90% of the sum of their lengths (recursive or per-thread ranges of one name
overlap; ProfilerStep#N and eager_N do not overlap at all)."""

PLAN_EXPECTED = "expected step without switching"
PLAN_SWITCHING = "switching"
PLAN_PREDICTED = "predicted step"
"""The capture-size plan's three numbers per set of sizes, one label each, in every face (text, JSON docs,
reports, the Plan panel): the expected step of the padded replays and eager steps (`expected_ns`, what
the optimiser minimises), the expected cost of replaying a graph after another one (`switch_ns`), and
their sum (`predicted_ns`, the verdict's figure and what serving is checked against)."""

MODE_FULL = "full graph"
MODE_PIECEWISE = "piecewise"
MODE_EAGER = "eager"
MODE_MIXED = "mixed"
MODE_IDLE = "no GPU work"
STEP_MODES = (MODE_FULL, MODE_PIECEWISE, MODE_EAGER, MODE_MIXED, MODE_IDLE)
"""How a step ran (analysis/anatomy.py), in every face: *eager* (no graph launch), *full graph* (graph
launches with eager work at most before the first or after the last, and the graphs hold at least
GRAPH_BODY_SHARE of the step's GPU busy time), *piecewise* (the same, but eager islands between graph
launches: vLLM's PIECEWISE mode, attention eager between per-layer graphs), *mixed* (graph launches that
hold under GRAPH_BODY_SHARE of the step's GPU busy time: the eager work is the step's body), *no GPU
work*."""

GRAPH_BODY_SHARE = 0.50
"""Graphs are a step's body when their GPU time is at least half of its GPU busy time; below it the step
is *mixed*. Measured on the shipped traces: the H200 graph_N steps 100%; HTA's rank-0 graph-launch trace
(14 graph launches a step with eager islands between them) 61-63% in four steps and 42% in its first,
which ran 1,753 eager kernels against 1,048; HTA's graph-replay trace (torch.compile graphs around part of
a training step) 31-39%, where the eager work is the step's body."""

STEP_PHASE_SHARE = 0.20
"""Beside the step family, another repeated, side-by-side family of ranges is steps too (a phase of the
program: the seeds' eager_N before graph_N) when it overlaps none of them and launched at least 20% of the
trace's GPU busy time (analysis/anatomy.py). Measured on the shipped traces: the seeds' eager_* 40-41% and
graph_* 43-44%, the fork-join's eager_* 34%; per-operation ranges of a benchmark (extra-p's
'main->test_max_par->phase->kernel*' and its copies) 9% or less."""


MAX_BATCH_SIZE = 2**31 - 1
"""The largest batch size a request or a stored plan may name (a CUDA grid dimension's limit; any real batch
is far below)."""

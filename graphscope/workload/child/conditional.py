"""Conditional nodes in CuPy workloads: `ctx.while_loop`, `ctx.if_else`, `ctx.switch` (child process only).

    def step(ctx):
        ctx.while_loop(body, flag, max_iterations=64, name="decode")  # while flag[0] != 0: body(ctx)

`flag` is a one-element int32 CuPy array the body's kernels write (0 stops the loop). Eagerly the loop
runs on the host: the flag is read back after each iteration (one synchronisation each). Captured, the
step holds a WHILE conditional node (`cuGraphConditionalHandleCreate`, `cuGraphAddNode` with
CU_GRAPH_NODE_TYPE_CONDITIONAL, the body captured into the node's body graph with
`cuStreamBeginCaptureToGraph`): graphscope's own one-thread kernels set the condition from the flag with
`cudaGraphSetConditional`, one before the node, one at the end of the body, and count the iterations in a
small device array (`state`: iterations in all, launches, iterations in the last launch, a limit
graphscope may set to time one iteration). IF (/ELSE) and SWITCH nodes are built the same way with one
kernel before the node that sets the condition from `flag[0]` (SWITCH: the body whose index it holds).

Everything captured is recorded (`LoopRecord`), so the live DAG knows each conditional node's type,
handle and body graphs on drivers that cannot read them back (cuGraphNodeGetParams is CUDA 13.2).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

KINDS = ("while", "if", "switch")
STATE_SLOTS = 4  # iterations in all, launches, iterations in the last launch, limit override (0: none)

# cudaGraphSetConditional is a device-runtime builtin: NVRTC compiles a call to it without -rdc or
# cudadevrt (the condition kernels ran on the lent H100). The header is tried first, a declaration of the
# builtin second (`compiled_with` says which; benchmarks/probe_conditional.py tries both).
_HEADER = "#include <cuda_device_runtime_api.h>\n"
_DECLARED = (
    "typedef unsigned long long cudaGraphConditionalHandle;\n"
    'extern "C" __device__ __cudart_builtin__ void cudaGraphSetConditional('
    "cudaGraphConditionalHandle handle, unsigned int value);\n"
)
_KERNELS = r"""
extern "C" __global__ void graphscope_loop_enter(cudaGraphConditionalHandle handle, const int* flag,
                                                 long long* state, long long limit) {
    state[1] += 1;
    state[2] = 0;
    long long cap = state[3] > 0 ? state[3] : limit;
    cudaGraphSetConditional(handle, (flag[0] != 0 && cap != 0) ? 1u : 0u);
}
extern "C" __global__ void graphscope_loop_next(cudaGraphConditionalHandle handle, const int* flag,
                                                long long* state, long long limit) {
    state[0] += 1;
    long long done = ++state[2];
    long long cap = state[3] > 0 ? state[3] : limit;
    cudaGraphSetConditional(handle, (flag[0] != 0 && (cap < 0 || done < cap)) ? 1u : 0u);
}
extern "C" __global__ void graphscope_select(cudaGraphConditionalHandle handle, const int* flag,
                                             long long* state, int is_if) {
    state[1] += 1;
    int value = flag[0];
    cudaGraphSetConditional(handle, is_if ? (value != 0 ? 1u : 0u) : (unsigned int)(value < 0 ? 0x7fffffff : value));
}
extern "C" __global__ void graphscope_body_done(long long* state, int body) {
    state[0] += 1;
    state[4 + body] += 1;
}
"""


@dataclass
class LoopRecord:
    """One conditional construct of the step, as graphscope built it (JSON-safe apart from `state`)."""

    key: str  # "decode#0": name and ordinal in the step
    kind: str  # while, if, switch
    bodies: int  # body graphs (IF: 1 or 2, SWITCH: n, WHILE: 1)
    limit: int  # WHILE: most iterations per launch (-1: none)
    node: int | None = None  # the conditional node's handle (graph capture only)
    graphs: list[int] = field(default_factory=list)  # its body graphs' handles
    handle: int | None = None  # the cudaGraphConditionalHandle
    default: int = 0  # the handle's value at each launch before graphscope's kernel sets it
    sites: tuple[int, int] = (0, 0)  # ctx.sites recorded inside the bodies: [start, end)
    body_sites: list[tuple[int, int]] = field(default_factory=list)  # each body's own [start, end) (captured)
    state: Any = None  # the device counters (int64[4 + bodies])

    def to_json(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "kind": self.kind,
            "bodies": self.bodies,
            "limit": self.limit,
            "node": self.node,
            "graphs": self.graphs,
            "handle": self.handle,
            "default": self.default,
            "sites": list(self.sites),
            "body_sites": [list(r) for r in self.body_sites],
            "source": "recorded when the workload built the node",
        }


def _check(result: tuple[Any, ...], what: str) -> Any:
    error = result[0]
    if int(error) != 0:
        raise RuntimeError(f"{what} failed: {getattr(error, 'name', error)}")
    return result[1] if len(result) == 2 else result[1:]


def _capture_info(driver: Any, stream: Any) -> tuple[Any, list[Any], int]:
    """(graph being captured, the nodes the next captured work depends on, their count) of a capturing
    stream: (status, id, graph, dependencies, [edge data,] count) after the error code, by position
    (cuda-bindings 13 adds the edge data)."""
    found = _check(driver.cuStreamGetCaptureInfo(stream), "cuStreamGetCaptureInfo")
    count = int(found[-1])
    return found[2], list(found[3] or [])[:count], count


class Conditionals:
    """Per workload context: the condition kernels, each construct's counters and body streams."""

    def __init__(self, ctx: Any) -> None:
        self.ctx = ctx
        self.cupy = ctx.cupy
        self._module: Any = None
        self.states: dict[str, Any] = {}  # key -> device int64 counters (kept across steps and captures)
        self.streams: dict[str, Any] = {}  # key -> the stream its body is captured on
        self.records: list[LoopRecord] = []  # constructs of the last recorded step, in order
        self.eager: dict[str, list[int]] = {}  # key -> [iterations (or bodies run), entries] run eagerly
        self._ordinals: dict[str, int] = {}
        self.compiled_with = ""  # how cudaGraphSetConditional was declared to NVRTC: "header" or "declared"

    def begin_step(self, record: bool) -> None:
        self._ordinals.clear()
        if record:
            self.records = []

    def kernel(self, name: str) -> Any:
        if self._module is None:
            try:
                self._module = self.cupy.RawModule(code=_HEADER + _KERNELS)
                self._module.get_function(name)
                self.compiled_with = "header"
            except Exception:  # an NVRTC without the device-runtime header: declare the builtin ourselves
                self._module = self.cupy.RawModule(code=_DECLARED + _KERNELS)
                self.compiled_with = "declared"
        return self._module.get_function(name)

    def _key(self, name: str) -> str:
        ordinal = self._ordinals.get(name, 0)
        self._ordinals[name] = ordinal + 1
        return f"{name}#{ordinal}"

    def _state(self, key: str, bodies: int, capturing: bool) -> Any:
        state = self.states.get(key)
        if state is None:
            if capturing:  # a fill now would be captured into the graph and reset the counters at each replay
                raise RuntimeError(
                    f"conditional {key!r} is first met while capturing: its counters live in device memory set up "
                    "when the eager step first reaches it, and the eager step never did (a branch or loop body "
                    "that did not run); make the eager reference step reach every conditional construct"
                )
            state = self.states[key] = self.cupy.zeros(STATE_SLOTS + bodies, dtype=self.cupy.int64)
        return state

    def run(self, kind: str, bodies: Sequence[Callable[[Any], Any]], flag: Any, limit: int | None, name: str) -> None:
        """One conditional construct: eagerly on the host, or captured as a conditional node."""
        if kind not in KINDS:
            raise ValueError(f"conditional kind {kind!r}: one of {', '.join(KINDS)}")
        _check_flag(self.cupy, flag)
        if limit is not None and int(limit) < 1:
            raise ValueError(f"max_iterations must be 1 or more, not {limit}")
        key = self._key(name)
        stream = self.ctx.stream
        capturing = bool(stream.is_capturing())
        state = self._state(key, len(bodies), capturing)
        self.kernel("graphscope_select")  # compiled and loaded before any capture, never during one
        for index in range(len(bodies)):  # body streams made outside a capture too
            self._body_stream(f"{key}/{index}")
        record = LoopRecord(key, kind, len(bodies), -1 if limit is None else int(limit), state=state)
        start = len(self.ctx.sites)
        if capturing:
            self._capture(record, bodies, flag, stream)
        else:
            self._eager(record, bodies, flag)
        record.sites = (start, len(self.ctx.sites))
        if self.ctx.recording:
            self.records.append(record)

    def _eager(self, record: LoopRecord, bodies: Sequence[Callable[[Any], Any]], flag: Any) -> None:
        """The same construct on the host: the flag read back (a synchronisation) at each decision."""
        counts = self.eager.setdefault(record.key, [0, 0])
        counts[1] += 1
        stream = self.ctx.stream

        def value() -> int:
            return int(flag[:1].get(stream=stream)[0])

        if record.kind == "while":
            done, before, after = 0, dict(self._ordinals), None
            while value() != 0 and (record.limit < 0 or done < record.limit):
                self._ordinals.clear()  # each iteration meets a nested construct under the key the capture gives it
                self._ordinals.update(before)
                start = len(self.ctx.sites)
                bodies[0](self.ctx)
                if not done:  # one iteration's launches: the body's kernels (the trace check looks for them)
                    record.body_sites = [(start, len(self.ctx.sites))]
                after = dict(self._ordinals)
                done += 1
            if after is not None:
                self._ordinals.clear()
                self._ordinals.update(after)
            counts[0] += done
            return
        chosen = value()
        if record.kind == "if":
            chosen = 0 if chosen != 0 else 1
        if 0 <= chosen < len(bodies):
            bodies[chosen](self.ctx)
            counts[0] += 1

    def _capture(self, record: LoopRecord, bodies: Sequence[Callable[[Any], Any]], flag: Any, stream: Any) -> None:
        from cuda.bindings import driver

        handle_stream = driver.CUstream(int(stream.ptr))
        graph, _, _ = _capture_info(driver, handle_stream)
        context = _check(driver.cuCtxGetCurrent(), "cuCtxGetCurrent")
        handle = _check(
            driver.cuGraphConditionalHandleCreate(graph, context, 0, driver.CU_GRAPH_COND_ASSIGN_DEFAULT),
            "cuGraphConditionalHandleCreate",
        )
        record.handle = int(handle)
        handle_arg = np.uint64(int(handle))
        state, limit = record.state, np.int64(record.limit)
        if record.kind == "while":
            self.kernel("graphscope_loop_enter")((1,), (1,), (handle_arg, flag, state, limit), stream=stream)
        else:
            is_if = np.int32(record.kind == "if")
            self.kernel("graphscope_select")((1,), (1,), (handle_arg, flag, state, is_if), stream=stream)
        graph, deps, count = _capture_info(driver, handle_stream)
        params = driver.CUgraphNodeParams()
        params.type = driver.CUgraphNodeType.CU_GRAPH_NODE_TYPE_CONDITIONAL
        params.conditional.handle = handle
        params.conditional.type = {
            "while": driver.CUgraphConditionalNodeType.CU_GRAPH_COND_TYPE_WHILE,
            "if": driver.CUgraphConditionalNodeType.CU_GRAPH_COND_TYPE_IF,
            "switch": driver.CUgraphConditionalNodeType.CU_GRAPH_COND_TYPE_SWITCH,
        }[record.kind]
        params.conditional.size = len(bodies)
        params.conditional.ctx = context
        node = _check(driver.cuGraphAddNode(graph, deps, None, count, params), "cuGraphAddNode")
        record.node = int(node)
        out = params.conditional.phGraph_out
        graphs = [out[i] for i in range(len(bodies))] if isinstance(out, (list, tuple)) else [out]
        record.graphs = [int(g) for g in graphs]
        _check(
            driver.cuStreamUpdateCaptureDependencies(
                handle_stream,
                [node],
                None,
                1,
                driver.CUstreamUpdateCaptureDependencies_flags.CU_STREAM_SET_CAPTURE_DEPENDENCIES,
            ),
            "cuStreamUpdateCaptureDependencies",
        )
        for index, (body, body_graph) in enumerate(zip(bodies, graphs)):
            self._capture_body(record, index, body, body_graph, flag)

    def _capture_body(self, record: LoopRecord, index: int, body: Callable[[Any], Any], graph: Any, flag: Any) -> None:
        """Capture `body(ctx)` into a body graph on a stream of its own (ctx.stream is that stream meanwhile)."""
        from cuda.bindings import driver

        body_stream = self._body_stream(f"{record.key}/{index}")
        raw = driver.CUstream(int(body_stream.ptr))
        mode = driver.CUstreamCaptureMode.CU_STREAM_CAPTURE_MODE_RELAXED
        _check(driver.cuStreamBeginCaptureToGraph(raw, graph, None, None, 0, mode), "cuStreamBeginCaptureToGraph")
        previous = self.ctx.use_stream(body_stream)
        start = len(self.ctx.sites)
        try:
            with body_stream:
                body(self.ctx)
                record.body_sites.append((start, len(self.ctx.sites)))
                handle_arg = np.uint64(record.handle or 0)
                if record.kind == "while":
                    next_ = self.kernel("graphscope_loop_next")
                    next_((1,), (1,), (handle_arg, flag, record.state, np.int64(record.limit)), stream=body_stream)
                else:
                    done = self.kernel("graphscope_body_done")
                    done((1,), (1,), (record.state, np.int32(index)), stream=body_stream)
        finally:
            self.ctx.use_stream(previous)
            ended = driver.cuStreamEndCapture(raw)
        _check(ended, "cuStreamEndCapture (body)")

    def _body_stream(self, key: str) -> Any:
        stream = self.streams.get(key)
        if stream is None:
            stream = self.streams[key] = self.cupy.cuda.Stream(non_blocking=True)
        return stream

    # -- for graphscope's measurements ----------------------------------------------------------------

    def counts(self) -> dict[str, dict[str, int]]:
        """Per construct: body runs (WHILE: iterations) and entries so far, eager and captured together."""
        found = {}
        for key, state in self.states.items():
            values = self.cupy.asnumpy(state)
            eager = self.eager.get(key, [0, 0])
            found[key] = {"runs": int(values[0]) + eager[0], "entries": int(values[1]) + eager[1]}
        return found

    def set_limit(self, key: str, limit: int) -> None:
        """Cap a WHILE loop's iterations per launch (0: its own limit) without re-capture: the condition
        kernels read it from the counters (state[3]) at each launch."""
        state = self.states[key]
        state[3:4].fill(int(limit))
        self.ctx.stream.synchronize()
        self.cupy.cuda.Device().synchronize()


def _check_flag(cupy: Any, flag: Any) -> None:
    if not isinstance(flag, cupy.ndarray) or flag.dtype != cupy.int32 or flag.size < 1:
        kind = f"{type(flag).__name__} {getattr(flag, 'dtype', '')}".strip()
        raise TypeError(f"the condition flag must be a CuPy int32 array (its element 0 is read), not {kind}")


class LoopMeter:
    """Counts each construct's body runs over the measured repetitions of one mode (untimed reads after
    each repetition's end event): WHILE iterations per launch, IF/SWITCH bodies run per launch."""

    def __init__(self, conditionals: Conditionals, records: list[LoopRecord]) -> None:
        self.conditionals = conditionals
        self.records = {r.key: r for r in records}
        sites = conditionals.ctx.sites
        ranges = {r.key: r.body_sites[0] if r.kind == "while" and r.body_sites else r.sites for r in records}
        self.body_kernels = {key: [s.kernel for s in sites[a:b]] for key, (a, b) in ranges.items()}
        self.last = conditionals.counts()
        self.per_rep: dict[str, list[int]] = {key: [] for key in self.last}
        self.warmup: dict[str, int] = {}
        self.warmup_steps = 0

    def warmup_done(self, steps: int) -> None:
        """The warm-up steps ran (untimed): their body runs are kept apart from the repetitions'."""
        now = self.conditionals.counts()
        self.warmup = {key: count["runs"] - self.last.get(key, {"runs": 0})["runs"] for key, count in now.items()}
        self.warmup_steps, self.last = steps, now

    def rep(self) -> None:
        now = self.conditionals.counts()
        for key, count in now.items():
            before = self.last.get(key, {"runs": 0, "entries": 0})
            self.per_rep.setdefault(key, []).append(count["runs"] - before["runs"])
        self.last = now

    def result(self, gpu_ns: list[float]) -> dict[str, dict[str, Any]]:
        """Per construct: body runs per repetition and, where it ran, the step's GPU time per run."""
        found = {}
        for key, runs in self.per_rep.items():
            record = self.records.get(key)
            per_run = [t / r for t, r in zip(gpu_ns, runs) if r > 0]
            found[key] = {
                "kind": record.kind if record else None,
                "limit": record.limit if record else None,
                "bodies": record.bodies if record else None,
                "runs_per_step": runs,
                "runs_median": float(np.median(runs)) if runs else None,
                "step_gpu_ns_per_run": float(np.median(per_run)) if per_run else None,
                "warmup_steps": self.warmup_steps,
                "warmup_runs": self.warmup.get(key, 0),
                "body_kernels": self.body_kernels.get(key, []),  # ctx.launch kernels of one body run
            }
        return found


def loop_meter(ctx: Any) -> LoopMeter | None:
    """A meter for the workload's conditional constructs; None when it builds none."""
    conditionals = ctx._conditionals
    if conditionals is None or not conditionals.states:
        return None
    return LoopMeter(conditionals, conditionals.records)


def split_fixed_cost(
    conditionals: Conditionals, key: str, iterations: float, usual_ns: float, replay: Callable[[], float], reps: int
) -> dict[str, Any]:
    """Time the captured step with the WHILE loop `key` capped at one iteration (no re-capture: the cap is
    read from device memory), against its usual `iterations`: per-iteration cost = (T(N) - T(1)) / (N - 1),
    fixed cost = T(1) - per-iteration. `replay()` runs one reset + timed replay and returns its GPU ns."""
    conditionals.set_limit(key, 1)
    try:
        one = [replay() for _ in range(reps)]
    finally:
        conditionals.set_limit(key, 0)
    one_ns = float(np.median(one))
    per_iteration = (usual_ns - one_ns) / (iterations - 1)
    return {
        "one_iteration_gpu_ns": one,
        "one_iteration_median_ns": one_ns,
        "per_iteration_ns": per_iteration,
        "fixed_ns": one_ns - per_iteration,
    }

"""A workload alive in the child process: loaded, measured eagerly or as a graph, inspected, tuned."""

from __future__ import annotations

import importlib.util
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from graphscope.core.events import CAPTURE_RANGE, measured_range, warmup_range
from graphscope.core.launch_config import Dim, LaunchConfig, Site, block_problem
from graphscope.core.rules import OUTPUT_TOLERANCES
from graphscope.workload.child.conditional import loop_meter


def _records(ctx: Any) -> list[Any]:
    """The conditional constructs of the step just recorded (workload/child/conditional.py), as JSON."""
    conditionals = getattr(ctx, "_conditionals", None)
    return [r.to_json() for r in conditionals.records] if conditionals is not None else []


class BadWorkload(Exception):
    """The file is not a workload graphscope can run (no setup, setup returned no step...)."""


def load_module(path: Path) -> Any:
    if not path.is_file():
        raise BadWorkload(f"{path}: no such file")
    spec = importlib.util.spec_from_file_location(f"graphscope_workload_{path.stem}", path)
    if spec is None or spec.loader is None:
        raise BadWorkload(f"{path}: not a Python file")
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, str(path.parent))
    spec.loader.exec_module(module)
    if not callable(getattr(module, "setup", None)):
        raise BadWorkload(f"{path}: a workload defines setup(ctx) returning step(ctx); this file has no setup")
    return module


def declared_sizes(module: Any) -> list[int]:
    """A workload's SIZES (the batch sizes it can be captured at), checked; [] without one."""
    sizes = getattr(module, "SIZES", None)
    if sizes is None:
        return []
    try:
        found = sorted({int(s) for s in sizes})
    except (TypeError, ValueError):
        raise BadWorkload(f"SIZES must be a list of batch sizes, not {sizes!r}") from None
    if not found or found[0] < 1:
        raise BadWorkload(f"SIZES must hold positive batch sizes, not {sizes!r}")
    return found


def compare_outputs(
    reference: dict[str, np.ndarray], current: dict[str, np.ndarray], dtypes: dict[str, str] | None = None
) -> dict[str, Any]:
    """Do the declared outputs match the reference: exactly, within their dtype's tolerance
    (core.rules.OUTPUT_TOLERANCES), or not (naming the worst output)? Outputs holding NaN or Inf cannot
    vouch for anything: `match` is then None and `nonfinite` names them."""
    if not reference:
        return {"checked": False, "match": None, "note": "the workload declares no outputs (ctx.outputs)"}
    worst, worst_name, exact, match = 0.0, None, True, True
    nonfinite = []
    for name, ref in reference.items():
        now = current[name]
        if ref.shape != now.shape:
            return {"checked": True, "match": False, "exact": False, "worst": name, "note": f"{name}: shape changed"}
        if ref.dtype.kind in "fc" and not (np.isfinite(ref).all() and np.isfinite(now).all()):
            nonfinite.append(name)
        if np.array_equal(ref, now, equal_nan=True):
            continue
        exact = False
        if ref.dtype.kind in "fc":
            rtol, atol = OUTPUT_TOLERANCES.get((dtypes or {}).get(name, str(ref.dtype)), OUTPUT_TOLERANCES["float32"])
            diff = np.abs(ref.astype(np.float64) - now.astype(np.float64))
            error = float(np.nanmax(diff)) if not np.isnan(diff).all() else float("nan")
            close = bool(np.allclose(ref, now, rtol=rtol, atol=atol, equal_nan=True))
        else:
            error, close = float(np.abs(ref.astype(np.float64) - now.astype(np.float64)).max()), False
        if not close and (worst_name is None or not error <= worst):
            worst, worst_name = error, name
        match = match and close
    result: dict[str, Any] = {
        "checked": True,
        "match": match,
        "exact": exact,
        "max_abs_diff": worst,
        "worst": worst_name,
    }
    if nonfinite:
        result.update(match=None, nonfinite=nonfinite)
        result["note"] = f"{', '.join(nonfinite)} hold NaN or Inf: the check cannot vouch for the outputs"
    return result


def triton_kernel_names(module: Any) -> frozenset[str]:
    """Names of the @triton.jit (and @triton.autotune) functions a workload module holds: the names their
    compiled kernels carry in the graph."""
    names = set()
    for value in vars(module).values():
        for candidate in (value, getattr(value, "fn", None), getattr(getattr(value, "fn", None), "fn", None)):
            name = getattr(candidate, "__name__", None)
            if type(candidate).__module__.startswith("triton") and isinstance(name, str):
                names.add(name)
    return frozenset(names)


class LiveWorkload:
    """Owns the workload's framework adapter, its step, the captured graph and the reference outputs."""

    def __init__(self, path: Path, config: LaunchConfig | None = None, sizes: list[int] | None = None) -> None:
        """Load the workload; with sizes (or its SIZES), `ctx.batch` is the largest of them (buffers
        sized for it serve every smaller batch: workload/child/sizes.py measures the others)."""
        from graphscope.workload.child.frameworks import FRAMEWORKS, framework_for

        self.path = Path(path)
        module = self.module = load_module(self.path)
        framework = getattr(module, "FRAMEWORK", "cupy")
        if framework not in FRAMEWORKS:
            raise BadWorkload(f"{path}: FRAMEWORK = {framework!r}; graphscope runs {' or '.join(FRAMEWORKS)} workloads")
        self.fw = framework_for(framework)(config)
        self.ctx = self.fw.ctx
        self.sizes = sizes or declared_sizes(module)
        self.ctx.batch = self.ctx.max_batch = max(self.sizes) if self.sizes else None
        self._reset = getattr(module, "reset", None)
        if self._reset is not None and not callable(self._reset):
            raise BadWorkload(f"{path}: reset must be a function reset(ctx), not {type(self._reset).__name__}")
        step = self.fw.setup(module)
        if not callable(step):
            raise BadWorkload(f"{path}: setup(ctx) must return the step function, not {type(step).__name__}")
        self.step = step
        self.graph: Any = None
        self.live_graph: Any = None
        self.capture: dict[str, int] = {}
        self.capture_sites: list[Site] = []
        self.capture_loops: list[Any] = []
        self.launches: list[dict[str, Any]] | str | None = None  # a torch step's profiled launches, or why not
        self.reset_state()
        self.fw.run(step, record=True)  # compiles kernels, records sites, gives the reference outputs
        self.fw.synchronize()
        # the knobs tuning offers: sites inside a conditional node's body are left out (their nodes live
        # in body graphs, which are not edited in place: graph/live.py)
        inside = {i for record in _records(self.ctx) for i in range(*record["sites"])}
        self.eager_sites = [site for i, site in enumerate(self.ctx.sites) if i not in inside]
        self.reference = self.fw.snapshot()
        self.dtypes = self.fw.ctx.output_dtypes()

    def reset_state(self) -> None:
        """The workload's reset(ctx), untimed and finished, where it has one: state a step advances (a KV
        cache, a counter) back to where the reference began, before the reference and each compared step."""
        if self._reset is not None:
            self.fw.call(self._reset)
            self.fw.synchronize()

    def capture_graph(self) -> dict[str, int]:
        """Capture one step, instantiate and upload it. The framework's warm-up before its first capture
        (PyTorch: three steps on a side stream) is timed apart (`warm_up_ns`), not as capture: on an H100
        the decode step's first capture took 15.8 ms with it, and a capture without it 3.6 ms."""
        w0 = time.perf_counter_ns()
        self.fw.warm_up(self.step)
        t0 = time.perf_counter_ns()
        graph = self.fw.capture(self.step)
        t1 = time.perf_counter_ns()
        self.fw.instantiate(graph)
        t2 = time.perf_counter_ns()
        self.fw.upload(graph)
        t3 = time.perf_counter_ns()
        self.graph, self.live_graph = graph, None
        self.capture_sites = list(self.ctx.sites)
        self.capture_loops = _records(self.ctx)  # conditional nodes as the capture built them (live DAG)
        self.capture = {
            "capture_ns": t1 - t0,
            "instantiate_ns": t2 - t1,
            "upload_ns": t3 - t2,
            "launches_captured": len(self.capture_sites),
            "warm_up_ns": t0 - w0,
        }
        return self.capture

    def measure(self, mode: str, reps: int, warmup: int, nvtx: bool = False, fresh: bool = False) -> dict[str, Any]:
        """Time `reps` steps (after `warmup`): GPU time by CUDA events, wall and submit time by host clock."""
        fw = self.fw
        info: dict[str, Any] = {}
        if mode == "graph":
            if self.graph is None or fresh:
                if nvtx:
                    fw.push(CAPTURE_RANGE)
                info["capture"] = self.capture_graph()
                if nvtx:
                    fw.pop()

            def once() -> None:
                fw.launch(self.graph)
        else:

            def once() -> None:
                fw.run(self.step)

        meter = loop_meter(self.ctx) if hasattr(self.ctx, "_conditionals") else None
        if nvtx:
            fw.push(warmup_range(mode))
        for _ in range(warmup):
            self.reset_state()
            once()
        fw.synchronize()
        if nvtx:
            fw.pop()
        if meter is not None:
            meter.warmup_done(warmup)
        start, end = fw.event(), fw.event()
        gpu, wall, submit = [], [], []
        for rep in range(reps):
            self.reset_state()  # untimed: before the events and the clock
            if nvtx:
                fw.push(measured_range(mode, rep))
            fw.record(start)
            t0 = time.perf_counter_ns()
            once()
            t1 = time.perf_counter_ns()
            fw.record(end)
            end.synchronize()
            t2 = time.perf_counter_ns()
            if nvtx:
                fw.pop()
            if meter is not None:
                meter.rep()  # untimed: the conditionals' counters read after the end event
            gpu.append(fw.elapsed_ns(start, end))
            wall.append(t2 - t0)
            submit.append(t1 - t0)
        info.update(
            {
                "mode": mode,
                "gpu_ns": gpu,
                "wall_ns": wall,
                "submit_ns": submit,
                "outputs": compare_outputs(self.reference, fw.snapshot(), self.dtypes),
            }
        )
        if meter is not None:  # a profiled run spends no replays on the one-iteration split (its trace stays plain)
            info["conditionals"] = self._conditional_costs(meter, "profiled" if nvtx else mode, gpu, reps)
        return info

    def _conditional_costs(self, meter: Any, mode: str, gpu: list[float], reps: int) -> dict[str, Any]:
        """Iterations per step of each conditional construct, and for a captured WHILE loop of more than
        one iteration the step replayed with it capped at one (fixed cost and per-iteration cost apart)."""
        from graphscope.workload.child.conditional import split_fixed_cost

        found = meter.result(gpu)
        if mode != "graph":
            return found
        fw, start, end = self.fw, self.fw.event(), self.fw.event()

        def replay() -> float:
            self.reset_state()
            fw.record(start)
            fw.launch(self.graph)
            fw.record(end)
            end.synchronize()
            return float(fw.elapsed_ns(start, end))

        for key, loop in found.items():
            if loop["kind"] == "while" and (loop["runs_median"] or 0) > 1:
                usual = float(np.median(gpu))
                runs, times = loop["runs_median"], max(reps // 2, 5)
                loop.update(split_fixed_cost(meter.conditionals, key, runs, usual, replay, times))
        self.reset_state()
        return found

    def dag(self) -> dict[str, Any]:
        """The captured graph's DAG; a torch step's kernel nodes carry the module and operator that launched
        them (one eager step profiled, once per workload: workload/child/op_attribution.py)."""
        dag = self._live_graph().dag(triton_kernel_names(self.module))
        if len(dag.edge_kinds.programmatic()) if dag.edge_kinds is not None else 0:  # PDL: read the kernels' code
            from graphscope.workload.child.pdl import annotate_pdl

            annotate_pdl(dag, self)
        if self.capture_loops:  # a few replays count each conditional node's iterations (graph/conditional.py)
            from graphscope.graph.conditional import attach_counts

            attach_counts(dag, self.measure("graph", 5, 1).get("conditionals", {}))
            dag.notes.append("conditional nodes: iterations counted over 5 replays by graphscope's condition kernels")
        if self.fw.name == "torch":
            from graphscope.graph.launched_by import attach_launchers

            profiled = self.operator_launches()
            if isinstance(profiled, str):
                dag.notes.append(f"no operator attribution: torch.profiler failed ({profiled})")
            else:
                kernels = sum(1 for n in dag.nodes if n.type == "kernel")
                matched = attach_launchers(dag.nodes, profiled)
                dag.notes.append(
                    f"{matched} of {kernels} kernel nodes attributed to the module and operator that launched them "
                    "(one eager step under torch.profiler, matched to capture order)"
                )
        return dag.to_json()

    def operator_launches(self) -> list[dict[str, Any]] | str:
        """A torch step's kernel launches with the module and operator that made them (one eager step under
        torch.profiler, once per workload: op_attribution.py), or why the profiler could not say."""
        if self.launches is None:
            from graphscope.workload.child.op_attribution import profiled_launches

            try:
                self.launches = profiled_launches(self)
            except Exception as exc:  # no CUPTI, a profiler already running: the answers stand without it
                self.launches = f"{type(exc).__name__}: {exc}".splitlines()[0]
        return self.launches

    def _live_graph(self) -> Any:
        from graphscope.graph.live import LiveGraph

        if self.graph is None:
            self.capture_graph()
        if self.live_graph is None:
            self.live_graph = LiveGraph(*self.fw.handles(self.graph), self.capture_sites, self.capture_loops)
        return self.live_graph

    def apply(self, config: LaunchConfig, force: bool = False) -> dict[str, Any]:
        """Apply block shapes to the instantiated graph's nodes (no re-capture) and to later eager steps.

        Each changed node gets the grid and dynamic shared memory its site's rules give for the new
        block. Only nodes whose block changes are set, unless `force` sets every tunable node (so that
        a baseline is measured under the same in-place conditions as the configs it is compared with).
        """
        live = self._live_graph()
        changes = {}
        for index, site in live.site_of.items():
            block = config.block_for(site.name, site.ordinal, site.block)
            current = live.effective.get(index, (site.block, site.grid, site.shared_mem))[0]
            if force or block != current:
                shared = self.ctx.shared_of(site, block)
                kernel = self.ctx.kernels.get(site.key)
                if kernel is not None and shared <= kernel.max_dynamic_shared:
                    kernel.allow_shared(shared)
                changes[index] = (block, self.ctx.grid_of(site, block), shared)
        result = live.apply(changes)
        self.ctx.config = config
        return result

    def alone(self, knob: str, blocks: list[Dim], reps: int, warmup: int = 3) -> list[dict[str, Any]]:
        """Each block of `knob` (a site name, or one site `add#3`) timed with its kernel alone, as an isolated
        autotuner times it (graph/alone.py): per block, per-replay ns summed over the knob's nodes."""
        live = self._live_graph()
        nodes = [(i, s) for i, s in sorted(live.site_of.items()) if knob in (s.name, s.key)]
        if not nodes:
            raise ValueError(f"no kernel node of the graph is the launch site {knob!r}")
        stream = self.fw.stream_handle()
        answers = []
        for block in blocks:
            block = tuple(block)
            total = np.zeros(reps)
            reason = ""
            for index, site in nodes:
                shared = self.ctx.shared_of(site, block)
                reason = block_problem(block, site.max_threads, shared, site.max_shared) or ""
                if reason:
                    break
                kernel = self.ctx.kernels.get(site.key)
                if kernel is not None and shared <= kernel.max_dynamic_shared:
                    kernel.allow_shared(shared)
                shape = (block, self.ctx.grid_of(site, block), shared)
                total += np.asarray(live.time_alone(index, shape, stream, reps, warmup))
            answers.append({"block": list(block), "samples": [] if reason else total.tolist(), "reason": reason})
        return answers

    def recapture(self, config: LaunchConfig) -> dict[str, int]:
        """A fresh capture with `config` built into the launches (to confirm an in-place result)."""
        self.ctx.config = config
        return self.capture_graph()

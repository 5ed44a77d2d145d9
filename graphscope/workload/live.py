"""A workload alive in the child process: loaded, measured eagerly or as a graph, inspected, tuned."""

from __future__ import annotations

import contextlib
import importlib.util
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from graphscope.core.launch_config import LaunchConfig, Site

OUTPUT_RTOL, OUTPUT_ATOL = 1e-5, 1e-6


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


def compare_outputs(reference: dict[str, np.ndarray], current: dict[str, np.ndarray]) -> dict[str, Any]:
    """Do the declared outputs match the reference? Exactly, within tolerance, or not (with the worst error)."""
    if not reference:
        return {"checked": False, "match": None, "note": "the workload declares no outputs (ctx.outputs)"}
    worst, exact, match = 0.0, True, True
    for name, ref in reference.items():
        now = current[name]
        if ref.shape != now.shape:
            return {"checked": True, "match": False, "exact": False, "note": f"{name}: shape changed"}
        if not np.array_equal(ref, now, equal_nan=True):
            exact = False
            if ref.dtype.kind in "fc":
                worst = max(worst, float(np.nanmax(np.abs(ref.astype(np.float64) - now.astype(np.float64)))))
                match = match and bool(np.allclose(ref, now, rtol=OUTPUT_RTOL, atol=OUTPUT_ATOL, equal_nan=True))
            else:
                match = False
    return {"checked": True, "match": match, "exact": exact, "max_abs_diff": worst}


class LiveWorkload:
    """Owns the workload's context, its step, the captured graph and the reference outputs."""

    def __init__(self, path: Path, config: LaunchConfig | None = None) -> None:
        from graphscope.workload.context import WorkloadContext

        self.path = Path(path)
        module = load_module(self.path)
        self.ctx = WorkloadContext(config)
        with self.ctx.stream:
            step = module.setup(self.ctx)
        if not callable(step):
            raise BadWorkload(f"{path}: setup(ctx) must return the step function, not {type(step).__name__}")
        self.step = step
        self.graph: Any = None
        self.live_graph: Any = None
        self.capture: dict[str, int] = {}
        self.capture_sites: list[Site] = []
        self._run_eager(record=True)  # compiles kernels, records sites, gives the reference outputs
        self.ctx.stream.synchronize()
        self.eager_sites = list(self.ctx.sites)
        self.reference = self.ctx.snapshot_outputs()

    def _run_eager(self, record: bool = False) -> None:
        self.ctx.begin_step(record)
        try:
            with self.ctx.stream:
                self.step(self.ctx)
        finally:
            self.ctx.end_step()

    def capture_graph(self) -> dict[str, int]:
        """Capture one step on ctx.stream, instantiate (CuPy does it in end_capture) and upload."""
        stream = self.ctx.stream
        t0 = time.perf_counter_ns()
        stream.begin_capture()
        try:
            self._run_eager(record=True)
        except BaseException:
            with contextlib.suppress(Exception):  # the capture is already invalid; the original error matters
                stream.end_capture()
            raise
        t1 = time.perf_counter_ns()
        graph = stream.end_capture()
        t2 = time.perf_counter_ns()
        graph.upload(stream)
        stream.synchronize()
        t3 = time.perf_counter_ns()
        self.graph, self.live_graph = graph, None
        self.capture_sites = list(self.ctx.sites)
        self.capture = {
            "capture_ns": t1 - t0,
            "instantiate_ns": t2 - t1,
            "upload_ns": t3 - t2,
            "launches_captured": len(self.capture_sites),
        }
        return self.capture

    def measure(self, mode: str, reps: int, warmup: int, nvtx: bool = False, fresh: bool = False) -> dict[str, Any]:
        """Time `reps` steps (after `warmup`): GPU time by CUDA events, wall and submit time by host clock."""
        cupy, stream = self.ctx.cupy, self.ctx.stream
        info: dict[str, Any] = {}
        if mode == "graph":
            if self.graph is None or fresh:
                if nvtx:
                    cupy.cuda.nvtx.RangePush("graphscope capture")
                info["capture"] = self.capture_graph()
                if nvtx:
                    cupy.cuda.nvtx.RangePop()

            def once() -> None:
                self.graph.launch(stream)
        else:
            once = self._run_eager
        if nvtx:
            cupy.cuda.nvtx.RangePush(f"graphscope {mode} warm-up")
        for _ in range(warmup):
            once()
        stream.synchronize()
        if nvtx:
            cupy.cuda.nvtx.RangePop()
        start, end = cupy.cuda.Event(), cupy.cuda.Event()
        gpu, wall, submit = [], [], []
        for rep in range(reps):
            if nvtx:
                cupy.cuda.nvtx.RangePush(f"graphscope {mode} rep {rep}")
            start.record(stream)
            t0 = time.perf_counter_ns()
            once()
            t1 = time.perf_counter_ns()
            end.record(stream)
            end.synchronize()
            t2 = time.perf_counter_ns()
            if nvtx:
                cupy.cuda.nvtx.RangePop()
            gpu.append(cupy.cuda.get_elapsed_time(start, end) * 1e6)
            wall.append(t2 - t0)
            submit.append(t1 - t0)
        info.update(
            {
                "mode": mode,
                "gpu_ns": gpu,
                "wall_ns": wall,
                "submit_ns": submit,
                "outputs": compare_outputs(self.reference, self.ctx.snapshot_outputs()),
            }
        )
        return info

    def dag(self) -> dict[str, Any]:
        self._live_graph()
        return self.live_graph.dag().to_json()

    def _live_graph(self) -> Any:
        from graphscope.graph.live import LiveGraph

        if self.graph is None:
            self.capture_graph()
        if self.live_graph is None:
            self.live_graph = LiveGraph(self.graph, self.capture_sites)
        return self.live_graph

    def apply(self, config: LaunchConfig, force: bool = False) -> dict[str, Any]:
        """Apply block sizes to the instantiated graph's nodes (no re-capture) and to later eager steps.

        Only nodes whose block changes are set, unless `force` sets every tunable node (so that a
        baseline is measured under the same in-place conditions as the configs it is compared with).
        """
        live = self._live_graph()
        changes = {}
        for index, site in live.site_of.items():
            block = config.block_for(site.name, site.ordinal, site.block)
            current = live.effective.get(index, (site.block, site.grid))[0]
            if force or block != current:
                changes[index] = (block, self.ctx.grid_of(site, block))
        result = live.apply(changes)
        self.ctx.config = config
        return result

    def recapture(self, config: LaunchConfig) -> dict[str, int]:
        """A fresh capture with `config` built into the launches (to confirm an in-place result)."""
        self.ctx.config = config
        return self.capture_graph()

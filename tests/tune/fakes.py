"""A stand-in for a live workload child: a small graph whose replay time depends on block shapes, and
block shapes that fault, hang or cannot be launched, as real kernels do."""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from graphscope.core.errors import WorkloadError
from graphscope.core.launch_config import LaunchConfig, Site
from graphscope.graph.model import Dag, DagNode


class ModelSession:
    """Replay time: 100 us, +20 us unless scale has block 128, +5 us unless relu has 256, +8 us unless
    the 2-D tile kernel has 32x8; x1.2 after in-place edits (alone, ALONE_US: scale prefers 64).
    A transpose that assumes blockDim.x == 32 faults at other widths; relu hangs at 1024... but its
    limit is 512, so it is refused at 1024."""

    SITES: ClassVar[list[Site]] = [
        Site("scale", 0, "scale", (4096, 1, 1), (256, 1, 1), (16, 1, 1), max_threads=512),
        Site("relu", 0, "relu", (4096, 1, 1), (256, 1, 1), (16, 1, 1), max_threads=512),
        Site("transpose", 0, "transpose", (1024, 1024, 1), (32, 8, 1), (32, 128, 1), max_threads=1024),
        Site("tile", 0, "tile", (512, 512, 1), (16, 16, 1), (32, 32, 1), max_threads=1024),
    ]
    FAULTS: ClassVar[dict[str, str]] = {"transpose": "cuda_fault"}
    HANGS: ClassVar[set[tuple[str, tuple[int, int, int]]]] = {("scale", (32, 1, 1))}
    started: ClassVar[list[ModelSession]] = []

    def __init__(self, path, config=None, timeout=300.0, cancel=None, cpu=None):
        self.info = {"sites": [s.to_json() for s in self.SITES], "capture": {}}
        self.config = config or LaunchConfig()
        self.edited = False
        self.rng = np.random.default_rng(len(self.started))
        self.closed = self.killed = False
        self.cancel = cancel
        self.requests: list[str] = []
        self.started.append(self)

    def block(self, name: str):
        site = next(s for s in self.SITES if s.name == name)
        return self.config.block_for(name, 0, site.block)

    def _median(self) -> float:
        return (
            100_000.0
            + 20_000 * (self.block("scale")[0] != 128)
            + 5_000 * (self.block("relu")[0] != 256)
            + 8_000 * (self.block("tile")[:2] != (32, 8))
        )

    def request(self, command, timeout=None, **fields):
        if self.killed:
            raise WorkloadError("the workload process died", "died")
        if self.cancel is not None:
            self.cancel.check()
        self.requests.append(command)
        if command == "dag":
            nodes = [DagNode(0, "memcpy", "memcpy")] + [
                DagNode(i + 1, "kernel", s.kernel, s.grid, self.block(s.name), site=s.key)
                for i, s in enumerate(self.SITES)
            ]
            return Dag(nodes, [(0, 1), (1, 2), (1, 3), (3, 4), (2, 4)], "live").to_json()
        if command == "apply":
            new = LaunchConfig.from_json(fields["config"])
            rejected = {
                s.key: f"{new.block_for(s.name, 0, s.block)[0]} threads exceed this kernel's limit"
                for s in self.SITES
                if np.prod(new.block_for(s.name, 0, s.block)) > s.max_threads
            }
            if rejected:
                return {"applied": 0, "rejected": rejected, "apply_ns": 1000}
            self.edited |= new.blocks != self.config.blocks
            self.config = new
            return {"applied": 2, "rejected": {}, "apply_ns": 5000}
        if command == "capture":
            self.config = LaunchConfig.from_json(fields["config"]) if fields.get("config") else self.config
            self.edited = False
            return {"capture_ns": 1, "instantiate_ns": 1, "upload_ns": 1, "launches_captured": 4}
        if command == "measure":
            if self.block("transpose")[0] != 32:
                self.killed = True
                raise WorkloadError("the workload faulted on the GPU: cudaErrorIllegalAddress", "cuda_fault")
            if ("scale", self.block("scale")) in self.HANGS:
                self.killed = True
                raise WorkloadError("the workload did not finish in time: measure took longer than 15 s", "timeout")
            median = self._median() * (1.2 if self.edited else 1.0)
            samples = self.rng.normal(median, median * 0.002, fields["reps"]).tolist()
            return {
                "gpu_ns": samples,
                "wall_ns": samples,
                "submit_ns": samples,
                "outputs": {"checked": True, "match": True, "exact": True, "max_abs_diff": 0.0},
            }
        if command == "alone":
            return {"alone": [self._alone(fields["knob"], tuple(b), fields["reps"]) for b in fields["blocks"]]}
        raise AssertionError(command)

    ALONE_US: ClassVar[dict[str, tuple[tuple[int, ...], float]]] = {
        # alone, scale is fastest at 64 (in the graph at 128); relu and tile agree with the graph
        "scale": ((64, 1, 1), 10.0),
        "relu": ((256, 1, 1), 5.0),
        "tile": ((32, 8, 1), 8.0),
        "transpose": ((32, 8, 1), 6.0),
    }

    def _alone(self, knob: str, block: tuple[int, ...], reps: int) -> dict:
        fastest, microseconds = self.ALONE_US[knob]
        median = 1000 * microseconds * (1.0 if block == fastest else 1.2 + 0.01 * abs(block[0] - fastest[0]) / 32)
        return {"block": list(block), "samples": self.rng.normal(median, median * 0.002, reps).tolist(), "reason": ""}

    def kill(self):
        self.killed = True

    def close(self):
        self.closed = True

"""Graph launch cost by shape, measured on this machine's GPU (issue #45; core/launch_cost.py fits it).

Synthetic graphs of tiny kernel nodes (an empty kernel, JIT-compiled from the PTX below, so no compiler is
needed) are built with the driver API in several shapes, instantiated, uploaded and launched one at a time
on an idle GPU. Per launch: the host time of the `cuGraphLaunch` call (called through ctypes, whose own
cost is measured as `floor_ns` and taken off), and the GPU time from an event recorded just before the
call to one recorded after it (`gpu_ns`: the call, the first node's dispatch and the replay). Per graph,
once: instantiation, the first launch without an upload, the first launch after `cuGraphUpload`, and a
launch made while the same graph still runs (a launch that finds the GPU busy).

Shapes (nodes n, edges e):
- chain: n kernels one after another (e = n - 1);
- fanout: one root, n - 1 kernels after it (e = n - 1, all parallel);
- independent: n kernels, no edges;
- layered: layers of 4 kernels, each depending on all 4 of the layer before (e ~ 4n);
- streams: a root, 4 parallel chains, a join: what capturing 4 streams makes (e ~ n);
- memops: a chain whose every other node is a 256-byte memset or device-to-device memcpy;
- hostnodes: a chain whose every 50th node (from the 6th) is a host node running libc's free(NULL) (no
  work, no Python): what a host node costs the launch and the replay.

CUDA (cuda-bindings, ctypes) is imported when measuring, never at import time.
"""

from __future__ import annotations

import ctypes
import statistics
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

SHAPES = ("chain", "fanout", "independent", "layered", "streams", "memops", "hostnodes")
FIT_SHAPES = SHAPES[:-1]  # host nodes are priced apart (core/launch_cost.fit_measurement)
SIZES = (10, 30, 100, 300, 1000, 2000, 5000)

PTX = b"""
.version 7.0
.target sm_52
.address_size 64
.visible .entry graphscope_noop()
{
    ret;
}
"""


@dataclass
class Sample:
    """One (shape, size): its counts, per-launch times and one-off times (ns)."""

    shape: str
    nodes: int
    edges: int
    memops: int
    hostnodes: int
    roots: int
    host_ns: list[float] = field(default_factory=list)
    gpu_ns: list[float] = field(default_factory=list)
    instantiate_ns: float = 0.0
    first_no_upload_ns: float = 0.0
    first_uploaded_ns: float = 0.0
    busy_launch_ns: float = 0.0

    def to_json(self) -> dict[str, Any]:
        return {k: (round(v, 1) if isinstance(v, float) else v) for k, v in self.__dict__.items()} | {
            "host_ns": [round(v, 1) for v in self.host_ns],
            "gpu_ns": [round(v, 1) for v in self.gpu_ns],
        }


class _Driver:
    """The driver calls the measurement needs, each checked."""

    def __init__(self) -> None:
        from cuda.bindings import driver

        self.d = driver
        self.ok(driver.cuInit(0))
        self.device = self.ok(driver.cuDeviceGet(0))
        self.name = self.ok(driver.cuDeviceGetName(128, self.device)).split(b"\0")[0].decode()
        self.ctx = self.ok(driver.cuDevicePrimaryCtxRetain(self.device))
        self.ok(driver.cuCtxSetCurrent(self.ctx))
        self.module = self.ok(driver.cuModuleLoadData(PTX))
        self.noop = self.ok(driver.cuModuleGetFunction(self.module, b"graphscope_noop"))
        self.stream = self.ok(driver.cuStreamCreate(int(driver.CUstream_flags.CU_STREAM_NON_BLOCKING)))
        self.buffer = self.ok(driver.cuMemAlloc(1 << 16))
        self.events = [self.ok(driver.cuEventCreate(int(driver.CUevent_flags.CU_EVENT_DEFAULT))) for _ in range(2)]
        lib = ctypes.CDLL("libcuda.so.1")
        self.c_launch = lib.cuGraphLaunch
        self.c_launch.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
        self.c_launch.restype = ctypes.c_int
        self.c_version = lib.cuDriverGetVersion
        self.c_version.argtypes = [ctypes.POINTER(ctypes.c_int)]
        self.c_version.restype = ctypes.c_int
        self.version = self.ok(driver.cuDriverGetVersion())

    def ok(self, result: Any) -> Any:
        err, *rest = result if isinstance(result, tuple) else (result,)
        if err != self.d.CUresult.CUDA_SUCCESS:
            raise RuntimeError(f"CUDA driver call failed: {err!r}")
        return rest[0] if len(rest) == 1 else (rest or None)

    def kernel(self, graph: Any, deps: list[Any]) -> Any:
        p = self.d.CUDA_KERNEL_NODE_PARAMS()
        p.func = self.noop
        p.gridDimX = p.gridDimY = p.gridDimZ = 1
        p.blockDimX = 32
        p.blockDimY = p.blockDimZ = 1
        p.sharedMemBytes = 0
        p.kernelParams = 0
        p.extra = 0
        return self.ok(self.d.cuGraphAddKernelNode(graph, deps, len(deps), p))

    def memset(self, graph: Any, deps: list[Any]) -> Any:
        p = self.d.CUDA_MEMSET_NODE_PARAMS()
        p.dst = self.buffer
        p.value = 0
        p.elementSize = 4
        p.width = 64
        p.height = 1
        p.pitch = 0
        return self.ok(self.d.cuGraphAddMemsetNode(graph, deps, len(deps), p, self.ctx))

    def hostnode(self, graph: Any, deps: list[Any]) -> Any:
        p = self.d.CUDA_HOST_NODE_PARAMS()
        p.fn = self.d.CUhostFn(ctypes.cast(ctypes.CDLL(None).free, ctypes.c_void_p).value)
        p.userData = 0  # free(NULL): nothing
        return self.ok(self.d.cuGraphAddHostNode(graph, deps, len(deps), p))

    def memcpy(self, graph: Any, deps: list[Any]) -> Any:
        p = self.d.CUDA_MEMCPY3D()
        device = self.d.CUmemorytype.CU_MEMORYTYPE_DEVICE
        p.srcMemoryType = p.dstMemoryType = device
        p.srcDevice = self.buffer
        p.dstDevice = int(self.buffer) + (1 << 15)
        p.WidthInBytes = p.srcPitch = p.dstPitch = 256
        p.Height = p.Depth = p.srcHeight = p.dstHeight = 1
        return self.ok(self.d.cuGraphAddMemcpyNode(graph, deps, len(deps), p, self.ctx))

    def sync(self) -> None:
        self.ok(self.d.cuStreamSynchronize(self.stream))

    def launch(self, exec_: Any) -> float:
        """Host ns of one cuGraphLaunch through ctypes (its error checked)."""
        handle, stream = int(exec_), int(self.stream)
        t0 = time.perf_counter_ns()
        err = self.c_launch(handle, stream)
        t1 = time.perf_counter_ns()
        if err:
            raise RuntimeError(f"cuGraphLaunch failed: {err}")
        return float(t1 - t0)

    def floor_ns(self, reps: int = 2000) -> float:
        """The median host time of a ctypes call into the driver that does almost nothing."""
        value = ctypes.c_int()
        times = []
        for _ in range(reps):
            t0 = time.perf_counter_ns()
            self.c_version(ctypes.byref(value))
            times.append(time.perf_counter_ns() - t0)
        return float(statistics.median(times))


def build(drv: _Driver, shape: str, n: int) -> tuple[Any, int, int, int]:
    """A graph of `shape` with about `n` nodes: (graph, edges, memops, host nodes)."""
    g = drv.ok(drv.d.cuGraphCreate(0))
    edges = memops = hosts = 0
    if shape in ("chain", "memops", "hostnodes"):
        prev: list[Any] = []
        for i in range(n):
            if shape == "memops" and i % 2:
                node = (drv.memset if i % 4 == 1 else drv.memcpy)(g, prev)
                memops += 1
            elif shape == "hostnodes" and i % 50 == 5:
                node = drv.hostnode(g, prev)
                hosts += 1
            else:
                node = drv.kernel(g, prev)
            edges += len(prev)
            prev = [node]
    elif shape == "fanout":
        root = drv.kernel(g, [])
        for _ in range(n - 1):
            drv.kernel(g, [root])
        edges = n - 1
    elif shape == "independent":
        for _ in range(n):
            drv.kernel(g, [])
    elif shape == "layered":
        layer: list[Any] = []
        for _ in range(max(n // 4, 1)):
            layer, deps = [drv.kernel(g, layer) for _ in range(4)], layer
            edges += 4 * len(deps)
    elif shape == "streams":
        root = drv.kernel(g, [])
        tails = []
        for _ in range(4):
            prev = [root]
            for _ in range(max((n - 2) // 4, 1)):
                prev = [drv.kernel(g, prev)]
                edges += 1
            tails += prev
        drv.kernel(g, tails)
        edges += 4
    else:
        raise ValueError(f"unknown shape {shape!r}: one of {', '.join(SHAPES)}")
    return g, edges, memops, hosts


def _nodes(drv: _Driver, g: Any) -> int:
    return int(drv.ok(drv.d.cuGraphGetNodes(g))[1])


def measure_one(drv: _Driver, shape: str, n: int, reps: int) -> Sample:
    """Build, instantiate and launch one graph (module docstring)."""
    d = drv.d
    g, edges, memops, hosts = build(drv, shape, n)
    roots = int(drv.ok(drv.d.cuGraphGetRootNodes(g))[1])
    sample = Sample(shape, _nodes(drv, g), edges, memops, hosts, roots)
    t0 = time.perf_counter_ns()
    fresh = drv.ok(d.cuGraphInstantiate(g, 0))
    sample.instantiate_ns = float(time.perf_counter_ns() - t0)
    drv.sync()
    sample.first_no_upload_ns = drv.launch(fresh)  # nothing uploaded yet: the first launch uploads
    drv.sync()
    exec_ = drv.ok(d.cuGraphInstantiate(g, 0))
    drv.ok(d.cuGraphUpload(exec_, drv.stream))
    drv.sync()
    sample.first_uploaded_ns = drv.launch(exec_)
    drv.sync()
    for _ in range(3):
        drv.launch(exec_)
    drv.sync()
    e0, e1 = drv.events
    for _ in range(reps):
        drv.sync()
        drv.ok(d.cuEventRecord(e0, drv.stream))
        host = drv.launch(exec_)
        drv.ok(d.cuEventRecord(e1, drv.stream))
        drv.ok(d.cuEventSynchronize(e1))
        sample.host_ns.append(host)
        sample.gpu_ns.append(float(drv.ok(d.cuEventElapsedTime(e0, e1))) * 1e6)
    drv.sync()
    drv.launch(exec_)
    sample.busy_launch_ns = drv.launch(exec_)  # the same graph still running on the stream
    drv.sync()
    for x in (fresh, exec_):
        drv.ok(d.cuGraphExecDestroy(x))
    drv.ok(d.cuGraphDestroy(g))
    return sample


def measure(
    shapes: Iterable[str] = SHAPES,
    sizes: Iterable[int] = SIZES,
    reps: int = 30,
    say: Callable[[str], None] | None = None,
    keep: Callable[[dict[str, Any]], None] | None = None,
) -> dict[str, Any]:
    """Every (shape, size): the raw samples, the GPU's name and the ctypes floor (module docstring).
    `keep` is handed the result so far after each graph (a sweep cut short keeps what it measured); a
    graph whose driver calls fail is named in `failed` and the sweep goes on."""
    drv = _Driver()
    floor = drv.floor_ns()
    samples: list[Sample] = []
    failed: list[str] = []

    def result() -> dict[str, Any]:
        return {
            "gpu": drv.name,
            "driver_version": drv.version,
            "floor_ns": floor,
            "reps": reps,
            "samples": [s.to_json() for s in samples],
            "failed": failed,
        }

    for shape in shapes:
        for n in sizes:
            try:
                sample = measure_one(drv, shape, n, reps)
            except Exception as e:  # a driver call refused (or a binding's type): the sweep goes on
                failed.append(f"{shape} {n}: {e!r}")
                if say:
                    say(failed[-1])
                continue
            sample.host_ns = [max(h - floor, 0.0) for h in sample.host_ns]
            for name in ("first_no_upload_ns", "first_uploaded_ns", "busy_launch_ns"):
                setattr(sample, name, max(getattr(sample, name) - floor, 0.0))
            samples.append(sample)
            if say:
                host, gpu = statistics.median(sample.host_ns), statistics.median(sample.gpu_ns)
                say(f"{shape:<11} {sample.nodes:>5} nodes {sample.edges:>6} edges: host {host / 1000:8.2f} us, "
                    f"gpu {gpu / 1000:9.2f} us")  # fmt: skip
            if keep:
                keep(result())
    return result()


def measure_and_store(
    path: Any, quick: bool = False, reps: int = 30, say: Callable[[str], None] | None = None
) -> dict[str, Any]:
    """Measure this GPU (quick: 10 to 5,000 nodes in four sizes), fit the model (core/launch_cost.py) and
    write it to `path`, where `launch_cost.current()` reads it; returns the fit."""
    import json
    from pathlib import Path

    from graphscope.core.launch_cost import fit_measurement
    from graphscope.core.paths import write_replacing

    raw = measure(SHAPES, (10, 100, 1000, 5000) if quick else SIZES, reps=reps, say=say)
    when = time.strftime("%Y-%m-%d", time.gmtime())
    fit = fit_measurement(raw, source=f"graphscope launch-cost --measure, {when}")
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    write_replacing(path, json.dumps(fit, indent=1) + "\n", "the launch-cost model")
    return fit

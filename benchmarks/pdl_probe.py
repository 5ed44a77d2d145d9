"""GPU probe for programmatic dependent launch (PDL, issue #47): what CuPy, the driver and cuobjdump answer.

Standalone (CuPy + cuda.bindings, no graphscope): prints one line per fact and writes them as JSON to
$RESULTS/pdl_probe.json. Facts: CuPy RawKernel's CUfunction handle, cuLaunchKernelEx with
CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION eager and under stream capture, the edge data
cuGraphGetEdges returns, editing an edge's type on a cloned graph, replay times of 32-kernel chains
(plain, PDL with griddepcontrol, PDL without), and the SASS cuobjdump shows for griddepcontrol.
"""

from __future__ import annotations

import ctypes
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import traceback

import numpy as np

FACTS: dict = {}
RESULTS = os.environ.get("RESULTS", ".")

SOURCE = r"""
extern "C" __global__ void step_wait(const float* x, float* y, int n) {
    asm volatile("griddepcontrol.wait;" ::: "memory");
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] * 0.5f + 1.0f;
    asm volatile("griddepcontrol.launch_dependents;");
}
extern "C" __global__ void step_plain(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] * 0.5f + 1.0f;
}
"""


def fact(key, value):
    FACTS[key] = value
    print(f"FACT {key}: {value}", flush=True)
    with open(os.path.join(RESULTS, "pdl_probe.json"), "w") as f:
        json.dump(FACTS, f, indent=1, default=str)


def guarded(name):
    def wrap(fn):
        def run(*a, **k):
            t0 = time.perf_counter()
            try:
                return fn(*a, **k)
            except Exception as exc:
                fact(f"{name}.error", f"{type(exc).__name__}: {exc}")
                traceback.print_exc()
            finally:
                print(f"-- {name} {time.perf_counter() - t0:.2f}s", flush=True)

        return run

    return wrap


def check(result, what):
    err = result[0]
    if int(err) != 0:
        raise RuntimeError(f"{what}: {getattr(err, 'name', err)}")
    return result[1] if len(result) == 2 else result[1:]


def main():
    import cupy
    from cuda.bindings import driver

    os.environ.setdefault("CUPY_CACHE_DIR", tempfile.mkdtemp())
    fact("cupy", cupy.__version__)
    fact("device", cupy.cuda.runtime.getDeviceProperties(0)["name"].decode())
    fact("driver_version", cupy.cuda.runtime.driverGetVersion())
    module = cupy.RawModule(code=SOURCE)
    k_wait, k_plain = module.get_function("step_wait"), module.get_function("step_plain")
    fact("rawkernel.kernel type", type(k_wait.kernel).__name__)
    fact("rawkernel.kernel.ptr", type(getattr(k_wait.kernel, "ptr", None)).__name__)
    fact("rawmodule.backend", module.backend)
    fact("rawmodule.options", module.options)
    fn_wait, fn_plain = int(k_wait.kernel.ptr), int(k_plain.kernel.ptr)
    name = check(driver.cuFuncGetName(driver.CUfunction(init_value=fn_wait)), "cuFuncGetName")
    fact("cuFuncGetName(kernel.ptr)", name)
    stream = cupy.cuda.Stream(non_blocking=True)
    n = 1 << 12
    bufs = [cupy.random.rand(n, dtype=cupy.float32) for _ in range(33)]

    def pdl_launch(fn, x, y, pdl, stream_ptr, style="array"):
        config = driver.CUlaunchConfig()
        config.gridDimX, config.gridDimY, config.gridDimZ = (n + 255) // 256, 1, 1
        config.blockDimX, config.blockDimY, config.blockDimZ = 256, 1, 1
        config.sharedMemBytes = 0
        config.hStream = driver.CUstream(init_value=stream_ptr)
        if pdl:
            attr = driver.CUlaunchAttribute()
            attr.id = driver.CUlaunchAttributeID.CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION
            attr.value.programmaticStreamSerializationAllowed = 1
            config.attrs = [attr]
            config.numAttrs = 1
        else:
            config.numAttrs = 0
        if style == "array":
            values = [ctypes.c_void_p(x.data.ptr), ctypes.c_void_p(y.data.ptr), ctypes.c_int(n)]
            addresses = np.array([ctypes.addressof(v) for v in values], dtype=np.uint64)
            params = addresses.ctypes.data
            keep = (values, addresses)
        else:
            params = ((x.data.ptr, y.data.ptr, n), (ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int))
            keep = None
        result = driver.cuLaunchKernelEx(config, driver.CUfunction(init_value=fn), params, 0)
        del keep
        if int(result[0]) != 0:
            raise RuntimeError(f"cuLaunchKernelEx: {result[0].name}")

    probe_eager(cupy, driver, stream, bufs, pdl_launch, fn_wait, fn_plain, n)
    probe_capture(cupy, driver, stream, bufs, pdl_launch, fn_wait, fn_plain)
    probe_sass(cupy)


@guarded("eager")
def probe_eager(cupy, driver, stream, bufs, pdl_launch, fn_wait, fn_plain, n):
    for style in ("array", "tuple"):
        try:
            for i in range(32):
                pdl_launch(fn_wait if i % 2 else fn_plain, bufs[i], bufs[i + 1], True, stream.ptr, style)
            stream.synchronize()
            expect = cupy.asnumpy(bufs[0])
            for _ in range(32):
                expect = expect * np.float32(0.5) + np.float32(1.0)
            fact(f"eager pdl ({style} params) correct", bool(np.allclose(cupy.asnumpy(bufs[32]), expect)))
        except Exception as exc:
            fact(f"eager pdl ({style} params) error", str(exc))


def capture_chain(cupy, driver, stream, bufs, pdl_launch, fn, pdl):
    stream.begin_capture()
    try:
        for i in range(32):
            pdl_launch(fn, bufs[i], bufs[i + 1], pdl and i > 0, stream.ptr)
    finally:
        graph = stream.end_capture()
    return graph


def edges_of(driver, graph_handle):
    g = driver.CUgraph(init_value=graph_handle)
    result = driver.cuGraphGetEdges(g, 0)
    count = result[-1]
    err, sources, targets, data, count = driver.cuGraphGetEdges(g, count)
    if int(err) != 0:
        raise RuntimeError(f"cuGraphGetEdges: {err.name}")
    return sources[:count], targets[:count], data[:count] if data is not None else None


def replay_us(cupy, stream, graph, reps=300):
    for _ in range(20):
        graph.launch(stream)
    stream.synchronize()
    start, end = cupy.cuda.Event(), cupy.cuda.Event()
    times = []
    for _ in range(reps):
        start.record(stream)
        graph.launch(stream)
        end.record(stream)
        end.synchronize()
        times.append(cupy.cuda.get_elapsed_time(start, end) * 1e3)
    return round(float(np.median(times)), 2), [round(float(q), 2) for q in np.percentile(times, [5, 95])]


@guarded("capture")
def probe_capture(cupy, driver, stream, bufs, pdl_launch, fn_wait, fn_plain):
    graphs = {}
    for label, fn, pdl in (
        ("plain", fn_plain, False),
        ("pdl_wait", fn_wait, True),
        ("pdl_nowait", fn_plain, True),
        ("wait_no_attr", fn_wait, False),
    ):
        graph = capture_chain(cupy, driver, stream, bufs, pdl_launch, fn, pdl)
        graphs[label] = graph
        sources, _targets, data = edges_of(driver, int(graph.graph))
        described = []
        for d in (data or [])[:3]:
            described.append((str(d.type), int(d.from_port), int(d.to_port)))
        fact(f"{label}: edges", len(sources))
        fact(f"{label}: first edge data (type, from_port, to_port)", described)
        kinds = sorted({(int(d.type), int(d.from_port), int(d.to_port)) for d in (data or [])})
        fact(f"{label}: distinct edge data", kinds)
    try:  # a PDL launch as the capture's very first work (no kernel before it)
        stream.begin_capture()
        pdl_launch(fn_wait, bufs[0], bufs[1], True, stream.ptr)
        pdl_launch(fn_wait, bufs[1], bufs[2], True, stream.ptr)
        first = stream.end_capture()
        sources, _, data = edges_of(driver, int(first.graph))
        fact("pdl launch first in capture: edges", [(int(d.type), int(d.from_port)) for d in (data or [])])
        first.launch(stream)
        stream.synchronize()
        fact("pdl launch first in capture: replays", True)
    except Exception as exc:
        fact("pdl launch first in capture error", f"{type(exc).__name__}: {exc}")
    fact(
        "ports",
        {
            p.name: int(p)
            for p in (
                driver.CU_GRAPH_KERNEL_NODE_PORT_DEFAULT,
                driver.CU_GRAPH_KERNEL_NODE_PORT_PROGRAMMATIC,
                driver.CU_GRAPH_KERNEL_NODE_PORT_LAUNCH_ORDER,
            )
        }
        if hasattr(driver.CU_GRAPH_KERNEL_NODE_PORT_DEFAULT, "name")
        else str(driver.CU_GRAPH_KERNEL_NODE_PORT_PROGRAMMATIC),
    )
    try:  # does the kernel node keep the attribute too?
        g = driver.CUgraph(init_value=int(graphs["pdl_wait"].graph))
        count = driver.cuGraphGetNodes(g, 0)[-1]
        nodes = driver.cuGraphGetNodes(g, count)[1]
        attr = driver.CUkernelNodeAttrID.CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION
        values = []
        for node in nodes[:3]:
            r = driver.cuGraphKernelNodeGetAttribute(node, attr)
            values.append((r[0].name, int(r[1].programmaticStreamSerializationAllowed) if int(r[0]) == 0 else None))
        fact("kernel node PROGRAMMATIC_STREAM_SERIALIZATION attribute (first 3 nodes)", values)
    except Exception as exc:
        fact("kernel node attribute error", str(exc))
    for label, graph in graphs.items():
        fact(f"{label}: replay us median [p5, p95]", replay_us(cupy, stream, graph))
    # an edited copy: the plain chain's edges made programmatic, and the PDL chain's made plain
    for label, to_type in (("plain", 1), ("pdl_wait", 0), ("pdl_nowait", 0)):
        try:
            edited = edit_edges(driver, int(graphs[label].graph), to_type)
            fact(f"{label} -> edge type {to_type}: edges", edited["edges"])
            fact(f"{label} -> edge type {to_type}: replay us", replay_raw(cupy, driver, stream, edited["exec"]))
        except Exception as exc:
            fact(f"{label} -> edge type {to_type} error", f"{type(exc).__name__}: {exc}")
    return graphs


def edit_edges(driver, graph_handle, to_type):
    """Clone, remove every kernel->kernel edge and add it back with `to_type`; instantiate."""
    clone = check(driver.cuGraphClone(driver.CUgraph(init_value=graph_handle)), "cuGraphClone")
    sources, targets, data = edges_of(driver, int(clone))
    t0 = time.perf_counter_ns()
    check((driver.cuGraphRemoveDependencies(clone, sources, targets, data, len(sources))[0], None), "remove")
    new = []
    for _ in sources:
        d = driver.CUgraphEdgeData()
        d.type = to_type
        d.from_port = int(driver.CU_GRAPH_KERNEL_NODE_PORT_PROGRAMMATIC) if to_type else 0
        d.to_port = 0
        new.append(d)
    check((driver.cuGraphAddDependencies(clone, sources, targets, new, len(sources))[0], None), "add")
    exec_ = check(driver.cuGraphInstantiate(clone, 0), "cuGraphInstantiate")
    t1 = time.perf_counter_ns()
    s2, _t2, d2 = edges_of(driver, int(clone))
    kinds = sorted({(int(d.type), int(d.from_port), int(d.to_port)) for d in (d2 or [])})
    return {"edges": (len(s2), kinds, f"edit+instantiate {(t1 - t0) / 1e3:.0f} us"), "exec": exec_}


def replay_raw(cupy, driver, stream, exec_, reps=300):
    s = driver.CUstream(init_value=stream.ptr)
    for _ in range(20):
        check((driver.cuGraphLaunch(exec_, s)[0], None), "cuGraphLaunch")
    stream.synchronize()
    start, end = cupy.cuda.Event(), cupy.cuda.Event()
    times = []
    for _ in range(reps):
        start.record(stream)
        driver.cuGraphLaunch(exec_, s)
        end.record(stream)
        end.synchronize()
        times.append(cupy.cuda.get_elapsed_time(start, end) * 1e3)
    return round(float(np.median(times)), 2), [round(float(q), 2) for q in np.percentile(times, [5, 95])]


@guarded("sass")
def probe_sass(cupy):
    from cuda.bindings import nvrtc

    major, minor = cupy.cuda.Device().compute_capability[:1], cupy.cuda.Device().compute_capability[1:]
    arch = f"sm_{major}{minor}"
    fact("arch", arch)
    _err, prog = nvrtc.nvrtcCreateProgram(SOURCE.encode(), b"k.cu", 0, [], [])
    opts = [f"-arch={arch}".encode()]
    result = nvrtc.nvrtcCompileProgram(prog, len(opts), opts)
    fact("nvrtc compile", str(result[0]))
    size = nvrtc.nvrtcGetCUBINSize(prog)[1]
    cubin = b" " * size
    nvrtc.nvrtcGetCUBIN(prog, cubin)
    path = os.path.join(tempfile.mkdtemp(), "k.cubin")
    with open(path, "wb") as f:
        f.write(cubin)
    fact("cuobjdump", shutil.which("cuobjdump"))
    out = subprocess.run(["cuobjdump", "-sass", path], capture_output=True, text=True, timeout=20)
    text = out.stdout
    with open(os.path.join(RESULTS, "pdl_sass.txt"), "w") as f:
        f.write(text[:60000])
    per_function, current = {}, None
    for line in text.splitlines():
        if "Function :" in line:
            current = line.split("Function :")[1].strip()
            per_function[current] = set()
        elif current and "/*" in line and ";" in line:
            body = line.split("*/", 1)[-1].strip()
            opcode = body.split()[0] if body else ""
            if opcode.startswith("@"):
                opcode = body.split()[1] if len(body.split()) > 1 else opcode
            per_function[current].add(opcode.rstrip(";"))
    if len(per_function) == 2:
        a, b = per_function.get("step_wait", set()), per_function.get("step_plain", set())
        fact("sass opcodes only in step_wait", sorted(a - b))
    fact("sass functions", {k: sorted(v) for k, v in per_function.items()})
    # PTX text too
    ptx_prog = nvrtc.nvrtcCreateProgram(SOURCE.encode(), b"k.cu", 0, [], [])[1]
    opts = [f"-arch=compute_{major}{minor}".encode()]
    nvrtc.nvrtcCompileProgram(ptx_prog, len(opts), opts)
    psize = nvrtc.nvrtcGetPTXSize(ptx_prog)[1]
    ptx = b" " * psize
    nvrtc.nvrtcGetPTX(ptx_prog, ptx)
    lines = ptx.decode(errors="replace").splitlines()
    fact("ptx griddepcontrol lines", [ln.strip() for ln in lines if "griddep" in ln])
    # what does CuPy's cache hold?
    cache = os.environ.get("CUPY_CACHE_DIR")
    files = []
    for root, _, names in os.walk(cache or "/nonexistent"):
        for name in names:
            full = os.path.join(root, name)
            with open(full, "rb") as f:
                head = f.read(80)
            files.append((name, os.path.getsize(full), head[:40]))
    fact("cupy cache files", files[:6])
    for name, _, _ in files[:1]:
        full = os.path.join(cache, name)
        with open(full, "rb") as f:
            raw = f.read()
        at = raw.find(b"\x7fELF")
        fact("cupy cache: ELF at offset", at)
        if at >= 0:
            p = os.path.join(tempfile.mkdtemp(), "c.cubin")
            with open(p, "wb") as f:
                f.write(raw[at:])
            o = subprocess.run(["cuobjdump", "-sass", p], capture_output=True, text=True, timeout=20)
            marks = ("ACQBULK", "PREEXIT", "griddep", "GRIDDEP")
            found = [ln.strip()[:90] for ln in o.stdout.splitlines() if any(m in ln for m in marks)]
            fact("cupy cache cubin: sass has griddep-like ops", found[:6])
            fact("cupy cache cubin: cuobjdump rc", o.returncode)


if __name__ == "__main__":
    t = time.perf_counter()
    try:
        main()
    except Exception:
        traceback.print_exc()
    print(f"probe done in {time.perf_counter() - t:.1f}s", flush=True)
    sys.exit(0)

"""Probe the conditional-node APIs on the GPU machine (issue #47, call 1): what works on the driver at hand.

Prints one JSON object per probe (one line each), so a failure of one leaves the others readable:
  python3 benchmarks/probe_conditional.py > probes.jsonl
"""

from __future__ import annotations

import json
import sys
import time
import traceback
from typing import Any

SET_COND_INCLUDE = r"""
#include <cuda_device_runtime_api.h>
extern "C" __global__ void set_from(cudaGraphConditionalHandle handle, int* flag) {
    int left = --flag[0];
    cudaGraphSetConditional(handle, left > 0 ? 1u : 0u);
}
"""

SET_COND_DECLARED = r"""
typedef unsigned long long cudaGraphConditionalHandle;
extern "C" __device__ __cudart_builtin__ void cudaGraphSetConditional(cudaGraphConditionalHandle handle,
                                                                      unsigned int value);
extern "C" __global__ void set_from(cudaGraphConditionalHandle handle, int* flag) {
    int left = --flag[0];
    cudaGraphSetConditional(handle, left > 0 ? 1u : 0u);
}
"""

BODY = r"""
extern "C" __global__ void body_add(float* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] += 1.0f;
}
"""


def emit(name: str, **data: Any) -> None:
    print(json.dumps({"probe": name, **data}, default=str), flush=True)


def guarded(name: str):
    def wrap(function):
        def run(*args, **kwargs):
            try:
                return function(*args, **kwargs)
            except BaseException as exc:  # every probe reports its own failure and the next one runs
                emit(name, ok=False, error=f"{type(exc).__name__}: {exc}"[:600], tb=traceback.format_exc()[-1500:])
                return None

        return run

    return wrap


def check(result: Any, what: str) -> Any:
    error = result[0]
    if int(error) != 0:
        raise RuntimeError(f"{what}: {getattr(error, 'name', error)}")
    return result[1:] if len(result) > 2 else (result[1] if len(result) == 2 else None)


@guarded("environment")
def environment() -> None:
    from importlib.metadata import version

    from cuda.bindings import driver

    driver.cuInit(0)
    (ver,) = (check(driver.cuDriverGetVersion(), "cuDriverGetVersion"),)
    import cupy

    emit(
        "environment",
        ok=True,
        driver_version=ver,
        cupy=cupy.__version__,
        cuda_bindings=version("cuda-bindings"),
        cuda_core=_maybe_version("cuda-core"),
        runtime=cupy.cuda.runtime.runtimeGetVersion(),
        nvrtc=cupy.cuda.nvrtc.getVersion(),
        has_cuGraphNodeGetParams=hasattr(driver, "cuGraphNodeGetParams"),
    )


def _maybe_version(name: str) -> str | None:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(name)
    except PackageNotFoundError:
        return None


@guarded("compile")
def compile_variants() -> dict[str, Any]:
    import cupy

    found = {}
    for label, source, options in (
        ("include", SET_COND_INCLUDE, ()),
        ("declared", SET_COND_DECLARED, ()),
        ("include_rdc", SET_COND_INCLUDE, ("-rdc=true",)),
    ):
        try:
            module = cupy.RawModule(code=source, options=options)
            function = module.get_function("set_from")
            found[label] = function
            emit("compile", variant=label, ok=True, regs=function.attributes.get("num_regs"))
        except Exception as exc:
            emit("compile", variant=label, ok=False, error=f"{type(exc).__name__}: {exc}"[:1500])
    return found


@guarded("while_by_capture")
def while_by_capture(setter: Any, label: str) -> None:
    """A WHILE node added into a CuPy stream capture; the body captured into it on a second stream."""
    import cupy
    import numpy as np
    from cuda.bindings import driver

    body_kernel = cupy.RawModule(code=BODY).get_function("body_add")
    stream = cupy.cuda.Stream(non_blocking=True)
    body_stream = cupy.cuda.Stream(non_blocking=True)
    x = cupy.zeros(1024, dtype=cupy.float32)
    flag = cupy.zeros(1, dtype=cupy.int32)
    facts: dict[str, Any] = {"variant": label}
    with stream:
        stream.begin_capture()
        info = driver.cuStreamGetCaptureInfo(driver.CUstream(stream.ptr))
        facts["capture_info_len"] = len(info)
        status, _id, graph, deps, _edges0, count = check(info, "cuStreamGetCaptureInfo")
        facts["status"] = str(status)
        ctx = check(driver.cuCtxGetCurrent(), "cuCtxGetCurrent")
        handle = check(
            driver.cuGraphConditionalHandleCreate(graph, ctx, 1, driver.CU_GRAPH_COND_ASSIGN_DEFAULT),
            "cuGraphConditionalHandleCreate",
        )
        facts["handle"] = int(handle)
        params = driver.CUgraphNodeParams()
        params.type = driver.CUgraphNodeType.CU_GRAPH_NODE_TYPE_CONDITIONAL
        params.conditional.handle = handle
        params.conditional.type = driver.CUgraphConditionalNodeType.CU_GRAPH_COND_TYPE_WHILE
        params.conditional.size = 1
        params.conditional.ctx = ctx
        status, _id, graph, deps, _edges, count = check(
            driver.cuStreamGetCaptureInfo(driver.CUstream(stream.ptr)), "cuStreamGetCaptureInfo"
        )
        node = check(driver.cuGraphAddNode(graph, deps[:count], None, count, params), "cuGraphAddNode")
        facts["node"] = int(node)
        out = params.conditional.phGraph_out
        facts["phGraph_out_type"] = type(out).__name__
        try:
            body = out[0]
        except TypeError:
            body = out
        facts["body_graph"] = int(body)
        check(
            driver.cuStreamUpdateCaptureDependencies(
                driver.CUstream(stream.ptr),
                [node],
                None,
                1,
                driver.CUstreamUpdateCaptureDependencies_flags.CU_STREAM_SET_CAPTURE_DEPENDENCIES,
            ),
            "cuStreamUpdateCaptureDependencies",
        )
        check(
            driver.cuStreamBeginCaptureToGraph(
                driver.CUstream(body_stream.ptr),
                body,
                None,
                None,
                0,
                driver.CUstreamCaptureMode.CU_STREAM_CAPTURE_MODE_RELAXED,
            ),
            "cuStreamBeginCaptureToGraph",
        )
        with body_stream:
            body_kernel((4,), (256,), (x, np.int32(1024)), stream=body_stream)
            setter((1,), (1,), (np.uint64(int(handle)), flag), stream=body_stream)
        ended = check(driver.cuStreamEndCapture(driver.CUstream(body_stream.ptr)), "cuStreamEndCapture (body)")
        facts["body_end_capture_same"] = int(ended) == int(body)
        cupy_graph = stream.end_capture()
    facts["top_graph"] = int(cupy_graph.graph)
    nodes, count = check(driver.cuGraphGetNodes(driver.CUgraph(int(cupy_graph.graph)), 0), "count")
    nodes, count = check(driver.cuGraphGetNodes(driver.CUgraph(int(cupy_graph.graph)), count), "nodes")
    facts["top_nodes"] = [str(check(driver.cuGraphNodeGetType(n), "type")) for n in nodes[:count]]
    facts["top_node_handles"] = [int(n) for n in nodes[:count]]
    facts["node_handle_kept"] = int(node) in facts["top_node_handles"]
    bnodes, bcount = check(driver.cuGraphGetNodes(driver.CUgraph(int(body)), 0), "count")
    bnodes, bcount = check(driver.cuGraphGetNodes(driver.CUgraph(int(body)), bcount), "body nodes")
    facts["body_nodes"] = [str(check(driver.cuGraphNodeGetType(n), "type")) for n in bnodes[:bcount]]
    if hasattr(driver, "cuGraphNodeGetParams"):
        got = driver.cuGraphNodeGetParams(nodes[0])
        facts["cuGraphNodeGetParams"] = str(got[0])
        if int(got[0]) == 0:
            p = got[1]
            facts["read_back"] = {
                "type": str(p.conditional.type),
                "handle": int(p.conditional.handle),
                "size": int(p.conditional.size),
            }
    # launch with 7 iterations, then 1, then check
    for want in (7, 1, 7):
        flag.fill(want)
        x.fill(0)
        stream.synchronize()
        cupy_graph.launch(stream)
        stream.synchronize()
        facts[f"x_after_{want}"] = float(x[0].get())
    # timing: N iterations vs 1
    start, end = cupy.cuda.Event(), cupy.cuda.Event()
    timings = {}
    for want in (1, 2, 8, 32):
        samples = []
        for _ in range(30):
            flag.fill(want)
            start.record(stream)
            cupy_graph.launch(stream)
            end.record(stream)
            end.synchronize()
            samples.append(cupy.cuda.get_elapsed_time(start, end) * 1e3)
        timings[want] = sorted(samples)[len(samples) // 2]
    facts["median_us_by_iterations"] = timings
    emit("while_by_capture", ok=True, **facts)


@guarded("cuda_core")
def cuda_core_probe() -> None:
    import cuda.core as core

    names = [n for n in dir(core) if not n.startswith("_")]
    facts: dict[str, Any] = {"names": names}
    graph_mod = getattr(core, "graph", None)
    if graph_mod is not None:
        facts["graph_names"] = [n for n in dir(graph_mod) if not n.startswith("_")]
    emit("cuda_core", ok=True, **facts)


@guarded("cuda_core_while")
def cuda_core_while() -> None:
    import cuda.core as core
    import numpy as np

    device = core.Device()
    device.set_current()
    stream = device.create_stream()
    builder = (
        stream.create_graph_builder() if hasattr(stream, "create_graph_builder") else device.create_graph_builder()
    )
    builder.begin_building()
    condition = builder.create_condition(default_value=1) if hasattr(builder, "create_condition") else None
    body = builder.while_loop(condition)
    facts = {"builder": type(builder).__name__, "condition": type(condition).__name__, "body": type(body).__name__}
    facts["condition_attrs"] = [n for n in dir(condition) if not n.startswith("_")]
    body.begin_building()
    code = SET_COND_INCLUDE
    program = core.Program(code, code_type="c++", options=core.ProgramOptions(arch=f"sm_{device.arch}"))
    module = program.compile("cubin")
    kernel = module.get_kernel("set_from")
    import cupy

    flag = cupy.full(1, 5, dtype=cupy.int32)
    core.launch(
        body,
        core.LaunchConfig(grid=1, block=1),
        kernel,
        condition.handle if hasattr(condition, "handle") else condition,
        flag.data.ptr,
    )
    body.end_building()
    builder.end_building()
    graph = builder.complete()
    graph.launch(stream)
    stream.sync()
    facts["flag_after"] = int(flag.get()[0])
    facts["np"] = np.__version__
    emit("cuda_core_while", ok=True, **facts)


def main() -> int:
    started = time.time()
    environment()
    found = compile_variants() or {}
    for label, setter in found.items():
        while_by_capture(setter, label)
        if label == "include":
            break
    cuda_core_probe()
    cuda_core_while()
    emit("done", seconds=round(time.time() - started, 2))
    return 0


if __name__ == "__main__":
    sys.exit(main())

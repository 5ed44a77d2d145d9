"""A small PDL workload for a node-level Nsight Systems trace (issue #47; standalone: CuPy + cuda.bindings).

Per variant (plain, PDL with griddepcontrol, PDL without): NVTX range "<variant> eager" over one eager
chain of 16 kernels, then "<variant> graph" over 3 replays of the same chain captured. Run under
`nsys profile --trace=cuda,nvtx --cuda-graph-trace=node`; the trace is small enough to ship in tests/data.
"""

from __future__ import annotations

import ctypes
import sys

import numpy as np

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from pdl_probe import SOURCE

CHAIN = 16


def main() -> None:
    import cupy
    from cuda.bindings import driver
    from cupy.cuda import nvtx

    module = cupy.RawModule(code=SOURCE)
    fns = {name: int(module.get_function(name).kernel.ptr) for name in ("step_wait", "step_plain")}
    stream = cupy.cuda.Stream(non_blocking=True)
    n = 1 << 12
    bufs = [cupy.random.rand(n, dtype=cupy.float32) for _ in range(CHAIN + 1)]

    def launch(fn: int, x, y, pdl: bool) -> None:
        config = driver.CUlaunchConfig()
        config.gridDimX, config.gridDimY, config.gridDimZ = (n + 255) // 256, 1, 1
        config.blockDimX, config.blockDimY, config.blockDimZ = 256, 1, 1
        config.hStream = driver.CUstream(init_value=stream.ptr)
        if pdl:
            attr = driver.CUlaunchAttribute()
            attr.id = driver.CUlaunchAttributeID.CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION
            attr.value.programmaticStreamSerializationAllowed = 1
            config.attrs, config.numAttrs = [attr], 1
        values = [ctypes.c_void_p(x.data.ptr), ctypes.c_void_p(y.data.ptr), ctypes.c_int(n)]
        addresses = np.array([ctypes.addressof(v) for v in values], dtype=np.uint64)
        err = driver.cuLaunchKernelEx(config, driver.CUfunction(init_value=fn), addresses.ctypes.data, 0)[0]
        if int(err) != 0:
            raise RuntimeError(f"cuLaunchKernelEx: {err.name}")

    def chain(fn: int, pdl: bool) -> None:
        for i in range(CHAIN):
            launch(fn, bufs[i], bufs[i + 1], pdl and i > 0)

    for variant, fn, pdl in (
        ("plain", fns["step_plain"], False),
        ("pdl_wait", fns["step_wait"], True),
        ("pdl_nowait", fns["step_plain"], True),
    ):
        chain(fn, pdl)  # warm
        stream.synchronize()
        nvtx.RangePush(f"{variant} eager")
        chain(fn, pdl)
        stream.synchronize()
        nvtx.RangePop()
        stream.begin_capture()
        chain(fn, pdl)
        graph = stream.end_capture()
        graph.launch(stream)
        stream.synchronize()
        nvtx.RangePush(f"{variant} graph")
        for _ in range(3):
            graph.launch(stream)
        stream.synchronize()
        nvtx.RangePop()
    print("pdl trace chain done", flush=True)


if __name__ == "__main__":
    main()

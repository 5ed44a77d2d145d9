"""What this driver answers to CUDA 13.1's node identity calls (cuGraphNodeGetToolsId, cuGraphNodeGetLocalId,
cuGraphGetId), which graphscope uses only where present: a graph of two empty nodes, each call's result.

    python benchmarks/probe_node_ids.py
"""

from __future__ import annotations

import json


def main() -> dict[str, object]:
    from cuda.bindings import driver

    found: dict[str, object] = {}
    err, version = driver.cuDriverGetVersion()
    found["driver_version"] = int(version)
    (err,) = driver.cuInit(0)
    err, device = driver.cuDeviceGet(0)
    err, context = driver.cuDevicePrimaryCtxRetain(device)
    (err,) = driver.cuCtxSetCurrent(context)
    err, graph = driver.cuGraphCreate(0)
    found["cuGraphCreate"] = str(err)
    err, first = driver.cuGraphAddEmptyNode(graph, None, 0)
    err, second = driver.cuGraphAddEmptyNode(graph, [first], 1)
    for name in ("cuGraphNodeGetToolsId", "cuGraphNodeGetLocalId"):
        call = getattr(driver, name, None)
        if call is None:
            found[name] = "not in these bindings"
            continue
        try:
            found[name] = [[str(x) for x in call(node)] for node in (first, second)]
        except Exception as exc:  # a binding that cannot resolve the driver entry point
            found[name] = f"{type(exc).__name__}: {exc}"
    for name in ("cuGraphGetId",):
        call = getattr(driver, name, None)
        try:
            found[name] = [str(x) for x in call(graph)] if call else "not in these bindings"
        except Exception as exc:
            found[name] = f"{type(exc).__name__}: {exc}"
    driver.cuGraphDestroy(graph)
    return found


if __name__ == "__main__":
    print(json.dumps(main(), indent=1))

"""--verify sanitizer on a real GPU: a reduction whose outputs match at every block, but which reads a
shared tile it only fills when the block divides 1024."""

from __future__ import annotations

import json

import pytest

from graphscope.core.launch_config import LaunchConfig
from graphscope.core.settings import find_sanitizer
from graphscope.store.recorder import Recorder
from graphscope.store.session_db import SessionStore
from graphscope.tune.controller import TuningController

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(find_sanitizer() is None, reason="compute-sanitizer is not installed"),
]

TILE_SUM = '''
import numpy as np
SOURCE = r"""
extern "C" __global__ void tile_sum(const float* x, float* out) {
    __shared__ float tile[1024];
    for (int s = 0; s < 1024 / (int)blockDim.x; s++)  // assumes blockDim.x divides 1024
        tile[s * blockDim.x + threadIdx.x] = x[blockIdx.x * 1024 + s * blockDim.x + threadIdx.x];
    __syncthreads();
    if (threadIdx.x == 0) {
        float acc = 0.f;
        for (int i = 0; i < 1024; i++) acc += tile[i];
        out[blockIdx.x] = acc;
    }
}
"""
TILES = 512
def setup(ctx):
    cp = ctx.cupy
    k = ctx.kernel(SOURCE, "tile_sum")
    x = cp.ones(TILES * 1024, cp.float32)
    out = cp.empty(TILES, cp.float32)
    ctx.outputs(out=out)
    def step(ctx):
        ctx.launch(k, problem=TILES, block=256, args=(x, out), grid=lambda problem, block: (TILES, 1, 1))
    return step
'''


def test_blocks_that_leave_the_tile_half_filled_are_sanitizer_failures(tmp_path):
    path = tmp_path / "tile_sum.py"
    path.write_text(TILE_SUM)
    blocks = [(96, 1, 1), (128, 1, 1), (192, 1, 1), (384, 1, 1), (512, 1, 1)]
    controller = TuningController(path, recorder=Recorder(tmp_path / "s.sqlite"), verify="sanitizer")
    try:
        controller.load()
        result = controller.sweep("brute", controller.knobs("tile_sum", blocks), alone=False)
        scrubbed = {}
        for block in blocks:  # the scrub alone, on every block, whatever the output check said
            controller.live.measure(LaunchConfig(blocks={"tile_sum": block}), 5)
            scrubbed[block] = controller.session.request("scrubbed")
    finally:
        controller.close()
    statuses = {t.block: (t.status, t.reason) for t in result.trials if t.block}
    print("sanitizer:", json.dumps({str(b): s for b, s in statuses.items()}))
    print("sanitizer seconds:", {k[-60:]: round(v["seconds"], 1) for k, v in controller.sanitized.items()})
    print("scrubbed:", {str(b): (s.get("match"), s.get("nonfinite")) for b, s in scrubbed.items()})
    # the output check sees some of the half-filled tiles (when the stale values were wrong); the rest
    # match and pass compute-sanitizer (initcheck tracks global memory only): the scrub catches them
    for block in ((96, 1, 1), (192, 1, 1), (384, 1, 1)):
        assert statuses[block][0] in ("sanitizer", "mismatch"), statuses[block]
        assert scrubbed[block].get("match") is False or scrubbed[block].get("nonfinite"), scrubbed[block]
    assert statuses[(384, 1, 1)][0] == "sanitizer" and "shared-memory scrub" in statuses[(384, 1, 1)][1]
    assert statuses[(128, 1, 1)][0] == "ok" and statuses[(512, 1, 1)][0] == "ok"
    assert all(scrubbed[b].get("match") is True for b in ((128, 1, 1), (512, 1, 1)))
    stored = SessionStore(tmp_path / "s.sqlite").trials(result.tuning_id)
    assert sum(t["status"] in ("sanitizer", "mismatch") for t in stored) == 3

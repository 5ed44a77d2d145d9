"""The one rule for steps (analysis/step_ranges.py) on shipped traces and on constructed ones."""

from __future__ import annotations

import dataclasses
import gzip
import json

import numpy as np
import pytest

from graphscope.analysis import intervals
from graphscope.analysis.step_ranges import families, family_of, is_op_range, step_family
from graphscope.core.events import MEASURED_PATTERN
from graphscope.core.rules import STEP_GPU_SHARE
from graphscope.trace import load_trace, schema
from graphscope.trace.model import Trace
from tests.analysis.builders import _table, make_trace
from tests.conftest import DATA, FORKJOIN, H200_GRAPH, H200_NODE

KINETO_EAGER = DATA / "kineto" / "hta__trace_diff_control_eager.json.gz"
KINETO_MEASURED = DATA / "kineto" / "h200_seed_vecadd_graph_profile_torch.json.gz"

OP_RANGES = [
    "aten::copy_, op_id = 317177",
    "aten::to, op_id = 317177",
    "aten::linear, seq = 12",
    "aten::mm",
    "autograd::engine::evaluate_function: AddmmBackward0",
    "AddmmBackward0",
    "MseLossBackward",
    "c10d::allreduce_",
    "record_param_comms",
    "torch/nn/modules/module.py(1501): _call_impl",
    "<frozen os>(779): getenv",
    "<built-in method relu of type object at 0x7fe64af3e180>",
    "nn.Module: Linear_0",
    "{'traceMarker': ['dummy_network.py:34']}",
    "cublasGemmEx",
    "cublasLtMatmul",
    "cudnnConvolutionForward",
    "ncclAllReduce",
    "nccl:all_reduce",
]
STEP_LIKE = [
    "ProfilerStep#3",
    "eager_0",
    "graph_12",
    "graphscope graph rep 4",
    "## forward ##",
    "Solver::step",
    "main->process->phase1",
    "decode",
    "train_step",
    "capture",
]


@pytest.mark.parametrize("name", OP_RANGES)
def test_op_level_ranges_are_never_steps(name):
    assert is_op_range(name)


@pytest.mark.parametrize("name", STEP_LIKE)
def test_user_annotations_may_be_steps(name):
    assert not is_op_range(name)


def test_families_drop_the_instance_number():
    assert family_of("ProfilerStep#1009") == "ProfilerStep#*"
    assert family_of("eager_0") == "eager_*" and family_of("capture") == "capture"
    assert family_of("graphscope eager rep 2") == MEASURED_PATTERN == family_of("graphscope graph rep 0")


def _plain_json_share(path, family: str) -> tuple[int, float]:
    """(instances, share of GPU busy time launched inside them), from the JSON alone: a GPU event belongs to
    the range its runtime call (same correlation id) started in; busy time is a union per device."""
    with gzip.open(path) as file:
        events = json.load(file)["traceEvents"]
    windows = sorted((e["ts"], e["ts"] + e["dur"]) for e in events if e.get("name", "").startswith(family))
    calls = {
        e["args"]["correlation"]: e["ts"]
        for e in events
        if e.get("cat") in ("cuda_runtime", "cuda_driver") and "correlation" in e.get("args", {})
    }
    gpu = [e for e in events if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")]

    def busy(chosen):
        total = 0
        for device in {e["args"]["device"] for e in chosen}:
            mine = [e for e in chosen if e["args"]["device"] == device]
            total += intervals.covered_ns(
                np.array([e["ts"] for e in mine]), np.array([e["ts"] + e["dur"] for e in mine])
            )
        return total

    def inside(e):
        at = calls.get(e["args"].get("correlation"), e["ts"])
        return any(low <= at < high for low, high in windows)

    return len(windows), busy([e for e in gpu if inside(e)]) / busy(gpu)


def test_profiler_steps_are_the_steps_of_a_pytorch_profiler_trace():
    """ProfilerStep#* launched all the GPU work; '## backward ##' half of it: checked against the JSON."""
    ranked = families(load_trace(KINETO_EAGER))
    chosen = ranked[0]
    assert chosen.pattern == "ProfilerStep#*" and chosen.is_step
    assert (chosen.instances, chosen.gpu_share) == pytest.approx(_plain_json_share(KINETO_EAGER, "ProfilerStep#"))
    backward = next(f for f in ranked if f.pattern == "## backward ##")
    assert (backward.instances, backward.gpu_share) == pytest.approx(_plain_json_share(KINETO_EAGER, "## backward ##"))
    assert backward.gpu_share < chosen.gpu_share  # nested in the step: never chosen over it
    assert not any(is_op_range(f.pattern) for f in ranked)  # 40,506 cpu_op ranges in the file, none a family


def test_measured_repetitions_are_the_steps_of_a_graphscope_run():
    chosen = step_family(load_trace(KINETO_MEASURED))
    assert chosen.pattern == MEASURED_PATTERN and chosen.instances == 5


def test_forkjoin_steps_are_its_graph_replays():
    """graph_0..4 launched 56% of the GPU busy time (eager_0..2 34%, capture none)."""
    trace = load_trace(FORKJOIN)
    chosen = step_family(trace)
    assert chosen.pattern == "graph_*" and chosen.instances == 5 and chosen.gpu_share >= STEP_GPU_SHARE


@pytest.mark.parametrize("path", [H200_NODE, H200_GRAPH])
def test_a_trace_whose_ranges_each_launched_under_half_has_no_steps(path):
    """The seed's eager_* and graph_* each launched 40-44% of its GPU busy time: neither is the step (and
    'capture', one range, is no candidate)."""
    trace = load_trace(path)
    assert step_family(trace) is None
    assert {f.pattern for f in families(trace)} == {"eager_*", "graph_*"}


def _with_ranges(ranges: list[tuple[str, int, int]], kernels: int = 100) -> Trace:
    """A trace of `kernels` back-to-back kernels (10 us each, launched 1 us before they run) and these ranges."""
    names = ["k", *sorted({r[0] for r in ranges})]
    api = [{"start": i * 10_000, "end": i * 10_000 + 500, "correlation": i + 1} for i in range(kernels)]
    gpu = [
        {"start": i * 10_000 + 1_000, "end": i * 10_000 + 11_000, "correlation": i + 1, "short_name": 0}
        for i in range(kernels)
    ]
    trace = make_trace(api=api, kernels=gpu, names=names)
    rows = [
        {"start": s, "end": e, "text": names.index(n), "event_type": schema.NVTX_RANGE_TYPES[0]} for n, s, e in ranges
    ]
    return dataclasses.replace(trace, nvtx=_table(schema.NVTX_COLUMNS, rows))


def test_a_family_of_op_ranges_is_never_the_step_even_when_it_covers_everything():
    """One op range around every launch (100 instances, all the GPU work) against 4 steps of 25 launches."""
    ops = [(f"aten::copy_, op_id = {i}", i * 10_000, i * 10_000 + 600) for i in range(100)]
    steps = [(f"step_{j}", j * 250_000, (j + 1) * 250_000 - 1) for j in range(4)]
    chosen = step_family(_with_ranges(ops + steps))
    assert chosen.pattern == "step_*" and chosen.instances == 4 and chosen.gpu_share == 1.0


def test_overlapping_or_single_or_small_families_are_not_steps():
    nested = [("loop", 0, 900_000), ("loop", 100_000, 1_000_000)]  # one name, two instances mostly overlapping
    assert step_family(_with_ranges(nested)) is None
    assert step_family(_with_ranges([("run", 0, 1_000_000)])) is None  # one instance: a phase, not a step
    small = [(f"fwd_{j}", j * 250_000, j * 250_000 + 100_000) for j in range(4)]  # 40 of the 100 launches
    ranked = families(_with_ranges(small))
    assert ranked[0].gpu_share == pytest.approx(0.4) and step_family(_with_ranges(small)) is None

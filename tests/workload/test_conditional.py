"""ctx.while_loop / if_else / switch run eagerly on the host as they will on the device (a stand-in for
CuPy: the flag is a host array with `.get`), and count what ran; ctx.launch follows a body's stream."""

from __future__ import annotations

import sys
import types

import numpy as np
import pytest


class FakeArray(np.ndarray):
    def get(self, stream=None):
        return np.asarray(self).copy()


class FakeKernel:
    def __init__(self, name):
        self.name = name
        self.attributes = {"max_threads_per_block": 1024, "num_regs": 8, "shared_size_bytes": 0}
        self.max_dynamic_shared_size_bytes = 48 * 1024
        self.calls = []

    def __call__(self, grid, block, args, shared_mem=0, stream=None):
        self.calls.append(stream)
        for arg in args:  # a kernel "runs": it calls the Python stand-in it was given
            if callable(arg):
                arg()


class FakeStream:
    def __init__(self, non_blocking=False, capturing=False):
        self.capturing = capturing

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def is_capturing(self):
        return self.capturing


def _array(values, dtype):
    return np.asarray(values, dtype=dtype).view(FakeArray)


@pytest.fixture
def ctx(monkeypatch):
    fake = types.ModuleType("cupy")
    device = types.SimpleNamespace(attributes={"MaxSharedMemoryPerBlockOptin": 227 * 1024})
    fake.cuda = types.SimpleNamespace(Stream=FakeStream, Device=lambda: device)
    fake.RawModule = lambda code, options=(): types.SimpleNamespace(get_function=FakeKernel)
    fake.ndarray, fake.int32, fake.int64 = FakeArray, np.int32, np.int64
    fake.zeros = lambda n, dtype: _array(np.zeros(n), dtype)
    fake.asnumpy = np.asarray
    monkeypatch.setitem(sys.modules, "cupy", fake)
    from graphscope.workload.child.context import WorkloadContext

    return WorkloadContext()


def _countdown(ctx, start: int):
    """A body that launches one kernel and lowers the flag by one (a decode step that stops at zero)."""
    flag = _array([start], np.int32)
    kernel = ctx.kernel("src", "step")

    def lower():
        flag[0] -= 1

    def body(ctx):
        ctx.launch(kernel, problem=32, args=(lower,), name="step")

    return flag, body, kernel


def test_a_while_loop_runs_its_body_until_the_flag_drops_and_counts_the_iterations(ctx):
    flag, body, kernel = _countdown(ctx, 7)
    ctx.begin_step(record=True)
    ctx.while_loop(body, flag, name="decode")
    ctx.end_step()
    assert flag[0] == 0 and len(kernel.raw.calls) == 7
    assert ctx._conditionals.counts() == {"decode#0": {"runs": 7, "entries": 1}}
    (record,) = ctx._conditionals.records
    assert (record.key, record.kind, record.limit, record.node) == ("decode#0", "while", -1, None)
    assert record.sites == (0, 7) and [s.key for s in ctx.sites] == [f"step#{i}" for i in range(7)]


def test_the_loop_stops_at_its_limit_and_a_lowered_flag_skips_it(ctx):
    flag, body, kernel = _countdown(ctx, 100)
    ctx.while_loop(body, flag, max_iterations=5, name="decode")
    assert flag[0] == 95 and len(kernel.raw.calls) == 5
    flag[0] = 0
    ctx.begin_step()
    ctx.while_loop(body, flag, max_iterations=5, name="decode")
    assert len(kernel.raw.calls) == 5 and ctx._conditionals.counts()["decode#0"] == {"runs": 5, "entries": 2}


def test_if_else_and_switch_run_the_chosen_body_or_none(ctx):
    ran = []

    def mark(name):
        return lambda ctx: ran.append(name)

    ctx.if_else(mark("then"), _array([3], np.int32), mark("else"))
    ctx.if_else(mark("then"), _array([0], np.int32), mark("else"))
    ctx.if_else(mark("only-then"), _array([0], np.int32))
    for case in (2, 0, 3, -1):
        ctx.switch([mark("case0"), mark("case1"), mark("case2")], _array([case], np.int32))
    assert ran == ["then", "else", "case2", "case0"]
    counts = ctx._conditionals.counts()
    assert counts["if#0"] == {"runs": 1, "entries": 1} and counts["if#2"] == {"runs": 0, "entries": 1}
    assert counts["switch#0"]["runs"] == 1 and counts["switch#3"]["runs"] == 0


def test_a_flag_that_is_not_one_int32_device_array_is_refused_in_words(ctx):
    _, body, _ = _countdown(ctx, 1)
    with pytest.raises(TypeError, match="the condition flag must be a CuPy int32 array"):
        ctx.while_loop(body, _array([1], np.int64))
    with pytest.raises(TypeError, match="not int"):
        ctx.while_loop(body, 1)
    with pytest.raises(ValueError, match="max_iterations must be 1 or more"):
        ctx.while_loop(body, _array([1], np.int32), max_iterations=0)


def test_a_conditional_first_met_while_capturing_is_refused(ctx):
    flag, body, _ = _countdown(ctx, 1)
    ctx.stream.capturing = True
    with pytest.raises(RuntimeError, match="first met while capturing"):
        ctx.while_loop(body, flag)


def test_launches_follow_the_stream_a_body_is_captured_on(ctx):
    kernel = ctx.kernel("src", "k")
    add = ctx.launcher(kernel, problem=64, name="bound")
    body_stream = FakeStream()
    ctx.begin_step(record=True)
    previous = ctx.use_stream(body_stream)
    ctx.launch(kernel, problem=64, name="k")
    add()
    assert ctx.use_stream(previous) is body_stream and ctx.stream is previous
    ctx.launch(kernel, problem=64, name="k")
    ctx.end_step()
    assert kernel.raw.calls == [body_stream, body_stream, previous]


def test_the_meter_counts_each_repetition_s_iterations(ctx):
    from graphscope.workload.child.conditional import loop_meter

    flag, body, _ = _countdown(ctx, 3)
    ctx.begin_step(record=True)
    ctx.while_loop(body, flag, name="decode")
    ctx.end_step()
    meter = loop_meter(ctx)
    for start in (4, 2, 0):
        flag[0] = start
        ctx.begin_step()
        ctx.while_loop(body, flag, name="decode")
        meter.rep()
    result = meter.result([8000.0, 4000.0, 1000.0])["decode#0"]
    assert result["runs_per_step"] == [4, 2, 0] and result["runs_median"] == 2.0
    assert result["step_gpu_ns_per_run"] == 2000.0 and result["kind"] == "while"


# -- captured: the driver calls that build the node, against a stand-in for cuda.bindings -------------


class FakeDriver(types.SimpleNamespace):
    """Records each call; a conditional node gets body graphs 500, 501, ... as the driver fills them in."""

    def __init__(self):
        enum = types.SimpleNamespace
        super().__init__(
            calls=[],
            CU_GRAPH_COND_ASSIGN_DEFAULT=1,
            CUstream=lambda value: ("stream", value),
            CUgraphNodeType=enum(CU_GRAPH_NODE_TYPE_CONDITIONAL=13),
            CUgraphConditionalNodeType=enum(
                CU_GRAPH_COND_TYPE_IF=0, CU_GRAPH_COND_TYPE_WHILE=1, CU_GRAPH_COND_TYPE_SWITCH=2
            ),
            CUstreamUpdateCaptureDependencies_flags=enum(CU_STREAM_SET_CAPTURE_DEPENDENCIES=1),
            CUstreamCaptureMode=enum(CU_STREAM_CAPTURE_MODE_RELAXED=2),
        )

    def CUgraphNodeParams(self):
        return types.SimpleNamespace(type=None, conditional=types.SimpleNamespace(phGraph_out=[]))

    def cuStreamGetCaptureInfo(self, stream):
        self.calls.append(("info", stream))
        return (0, "active", 1, "parent-graph", ["last-node"], [None], 1)

    def cuCtxGetCurrent(self):
        return (0, "context")

    def cuGraphConditionalHandleCreate(self, graph, context, default, flags):
        self.calls.append(("handle", graph, default, flags))
        return (0, 77)

    def cuGraphAddNode(self, graph, deps, data, count, params):
        self.calls.append(("add", graph, deps, params.conditional.type, params.conditional.size))
        params.conditional.phGraph_out = list(range(500, 500 + params.conditional.size))
        return (0, 900)

    def cuStreamUpdateCaptureDependencies(self, stream, nodes, data, count, flags):
        self.calls.append(("deps", stream, nodes, flags))
        return (0,)

    def cuStreamBeginCaptureToGraph(self, stream, graph, deps, data, count, mode):
        self.calls.append(("begin", stream, graph))
        return (0,)

    def cuStreamEndCapture(self, stream):
        self.calls.append(("end", stream))
        return (0, "body")


@pytest.fixture
def captured(ctx, monkeypatch):
    driver = FakeDriver()
    package = types.ModuleType("cuda.bindings")
    package.driver = driver
    monkeypatch.setitem(sys.modules, "cuda", types.ModuleType("cuda"))
    monkeypatch.setitem(sys.modules, "cuda.bindings", package)
    counter = iter(range(1, 100))
    monkeypatch.setattr(
        FakeStream, "ptr", property(lambda s: s.__dict__.setdefault("_ptr", next(counter))), raising=False
    )
    return ctx, driver


def test_a_captured_while_loop_becomes_a_while_node_whose_body_is_captured_on_its_own_stream(captured):
    ctx, driver = captured
    flag, body, kernel = _countdown(ctx, 2)
    ctx.begin_step(record=True)
    ctx.while_loop(body, flag, max_iterations=9, name="decode")  # eagerly first, as graphscope always runs it
    ctx.end_step()
    parent = ctx.stream
    parent.capturing = True
    ctx.begin_step(record=True)
    ctx.while_loop(body, flag, max_iterations=9, name="decode")
    ctx.end_step()
    (record,) = ctx._conditionals.records
    assert (record.node, record.graphs, record.handle, record.kind, record.limit) == (900, [500], 77, "while", 9)
    kinds = [call[0] for call in driver.calls]
    assert kinds == ["info", "handle", "info", "add", "deps", "begin", "end"]
    # a WHILE node with one body, after the capture's last node
    assert driver.calls[3] == ("add", "parent-graph", ["last-node"], 1, 1)
    assert driver.calls[4][2] == [900]  # the capture goes on after the node
    body_stream = ("stream", driver.calls[5][1][1])
    assert driver.calls[5] == ("begin", body_stream, 500) and driver.calls[6] == ("end", body_stream)
    assert body_stream[1] != parent.ptr and ctx.stream is parent  # its own stream, and ctx's given back
    assert kernel.raw.calls[-1] is not parent  # the body's launch went to the body's stream
    assert record.sites == (0, 1) and ctx.sites[0].key == "step#0"  # the body's one launch, in the record's range


def test_if_else_and_switch_nodes_get_one_body_graph_per_branch(captured):
    ctx, driver = captured
    flag = _array([1], np.int32)
    for capturing in (False, True):
        ctx.stream.capturing = capturing
        ctx.begin_step(record=True)
        ctx.if_else(lambda ctx: None, flag, lambda ctx: None, name="branch")
        ctx.switch([lambda ctx: None] * 3, flag, name="case")
        ctx.end_step()
    adds = [call for call in driver.calls if call[0] == "add"]
    assert [(a[3], a[4]) for a in adds] == [(0, 2), (2, 3)]  # IF with two bodies, SWITCH with three
    assert [r.graphs for r in ctx._conditionals.records] == [[500, 501], [500, 501, 502]]
    assert sum(call[0] == "begin" for call in driver.calls) == 5


def test_a_body_that_fails_while_captured_ends_its_capture_and_gives_the_stream_back(captured):
    ctx, driver = captured
    flag = _array([0], np.int32)

    def broken(ctx):
        raise ValueError("bad body")

    ctx.while_loop(broken, flag, name="loop")  # eagerly: the flag is down, the body never runs
    parent = ctx.stream
    parent.capturing = True
    ctx.begin_step(record=True)
    with pytest.raises(ValueError, match="bad body"):
        ctx.while_loop(broken, flag, name="loop")
    assert driver.calls[-1][0] == "end" and ctx.stream is parent


def test_a_loop_nested_in_a_loop_keeps_one_key_however_often_the_outer_body_runs(ctx):
    inner_flag = _array([0], np.int32)
    outer_flag = _array([3], np.int32)
    inner_runs = []

    def inner(ctx):
        inner_flag[0] -= 1
        inner_runs.append(1)

    def outer(ctx):
        inner_flag[0] = 2
        ctx.while_loop(inner, inner_flag, name="inner")
        outer_flag[0] -= 1

    ctx.begin_step(record=True)
    ctx.while_loop(outer, outer_flag, name="outer")
    ctx.while_loop(outer, outer_flag, name="inner")  # a later construct of the same name: the next ordinal
    ctx.end_step()
    counts = ctx._conditionals.counts()
    assert set(counts) == {"outer#0", "inner#0", "inner#1"}
    assert counts["inner#0"] == {"runs": 6, "entries": 3} and len(inner_runs) == 6


def test_the_meter_names_one_iteration_s_kernels_eagerly_as_captured(ctx):
    from graphscope.workload.child.conditional import loop_meter

    flag, body, _ = _countdown(ctx, 4)
    ctx.begin_step(record=True)
    ctx.while_loop(body, flag, name="decode")
    ctx.end_step()
    assert len(ctx.sites) == 4  # four iterations launched
    assert loop_meter(ctx).body_kernels == {"decode#0": ["step"]}  # one iteration's kernels

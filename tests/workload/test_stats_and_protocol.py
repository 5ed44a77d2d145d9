from __future__ import annotations

import numpy as np
import pytest

from graphscope.core.stats import describe, repetitions_needed, speedup
from graphscope.workload.protocol import classify, describe_error


def test_describe_gives_median_quartiles_and_an_interval_around_the_median():
    rng = np.random.default_rng(1)
    samples = rng.normal(1000.0, 20.0, 400)
    stats = describe(samples)
    assert stats.n == 400 and abs(stats.median - 1000) < 5
    assert stats.ci_low < stats.median < stats.ci_high and stats.ci_high - stats.ci_low < 10
    assert stats.q1 < stats.median < stats.q3 and stats.min == samples.min()
    assert 0 < (stats.q3 - stats.q1) / stats.median < 0.05


def test_speedup_is_significant_only_when_the_interval_excludes_one():
    rng = np.random.default_rng(2)
    eager = rng.normal(5.0, 0.1, 50)
    graph = rng.normal(1.0, 0.02, 50)
    clear = speedup(eager, graph)
    assert 4.8 < clear.value < 5.2 and clear.significant and clear.low < clear.value < clear.high
    same = speedup(rng.normal(1.0, 0.05, 30), rng.normal(1.0, 0.05, 30))
    assert not same.significant


def test_noisier_timings_need_more_repetitions():
    rng = np.random.default_rng(3)
    quiet = repetitions_needed(rng.normal(100, 0.5, 50), precision=0.01)
    noisy = repetitions_needed(rng.normal(100, 5.0, 50), precision=0.01)
    assert quiet == 10 and noisy > 50


class CUDARuntimeError(Exception):  # named like CuPy's, so classify() can tell without importing CuPy
    pass


class OutOfMemoryError(Exception):
    pass


def test_failures_are_named_from_the_exception():
    assert classify(CUDARuntimeError("cudaErrorIllegalAddress: an illegal memory access")) == "cuda_fault"
    assert classify(CUDARuntimeError("cudaErrorStreamCaptureUnsupported"), capturing=True) == "capture_failed"
    assert classify(OutOfMemoryError("Out of memory allocating 8 GiB")) == "out_of_memory"
    assert classify(ValueError("shapes")) == "raised"
    cupy_own_check = RuntimeError("the current stream is capturing, so D2H transfers are disallowed")
    assert classify(cupy_own_check, capturing=True) == "capture_failed"
    assert "must not synchronise with the host" in describe_error("capture_failed", "x")
    read = describe_error("capture_failed", str(cupy_own_check))  # float(x[0]) in the step: a host read
    assert "must not synchronise with the host" in read and "ctx.copy" in read
    upload = describe_error("capture_failed", "the current stream is capturing, so H2D transfers are disallowed")
    assert "ctx.pinned" in upload and "must not synchronise" not in upload


def test_large_samples_get_order_statistic_intervals_that_agree_with_the_bootstrap():
    import numpy as np

    from graphscope.core import stats

    rng = np.random.default_rng(1)
    values = rng.lognormal(7, 0.3, 6000)
    big = describe(values)
    stats_bootstrap = stats.BOOTSTRAP_MAX
    try:
        stats.BOOTSTRAP_MAX = 10**9
        small = describe(values)
        boot_ratio = speedup(values, values * 0.9)
    finally:
        stats.BOOTSTRAP_MAX = stats_bootstrap
    assert (
        abs(big.ci_low - small.ci_low) / small.median < 0.01 and abs(big.ci_high - small.ci_high) / small.median < 0.01
    )
    delta = speedup(values, values * 0.9)
    assert abs(delta.low - boot_ratio.low) < 0.01 and abs(delta.high - boot_ratio.high) < 0.01
    assert delta.significant and not speedup(values, rng.permutation(values)).significant


@pytest.mark.parametrize("library, hint", [("transformers", ".[hf]"), ("triton", ".[torch]"), ("torch", ".[torch]")])
def test_a_workload_that_imports_a_missing_library_is_told_what_to_install(library, hint):
    from graphscope.workload.child.main import Child

    error = Child()._error(ImportError(f"No module named '{library}'", name=library))
    assert error["kind"] == "missing_library" and hint in error["message"] and library in error["message"]


def test_a_request_runs_with_the_cycle_collector_off_and_the_collector_is_back_after_it(monkeypatch):
    import gc

    from graphscope.workload.child.main import Child

    seen = []

    def hello(self, request):
        seen.append(gc.isenabled())
        raise RuntimeError("a workload that fails")

    monkeypatch.setattr(Child, "do_hello", hello)
    assert gc.isenabled()
    answer = Child().handle({"command": "hello"})
    assert seen == [False] and not answer["ok"] and gc.isenabled()  # back on, even after a failure


def test_loading_a_workload_leaves_its_objects_out_of_later_collections(monkeypatch):
    import gc

    from graphscope.workload.child import live
    from graphscope.workload.child.main import Child

    class Loaded:
        eager_sites, reference, sizes = [], {}, []

        def __init__(self, path, config, sizes):
            self.model = [[i] for i in range(1000)]  # what a workload's set-up keeps: tracked containers

    monkeypatch.setattr(live, "LiveWorkload", Loaded)
    monkeypatch.setattr("graphscope.workload.child.environment.environment", lambda: {})
    child = Child()
    try:
        answer = child.handle({"command": "load", "path": __file__, "config": None})
        assert answer["ok"], answer
        assert gc.get_freeze_count() >= 1000
    finally:
        gc.unfreeze()

"""The launch-cost model (core/launch_cost.py): the fit recovers known terms from a synthetic measurement
(checked against numpy's own least squares on the medians), its intervals hold them, the user's
measurement is read before the shipped one, and `graphscope launch-cost` prices a graph or refuses in one
line."""

from __future__ import annotations

import json

import numpy as np
import pytest

from graphscope.cli import main
from graphscope.core import launch_cost
from graphscope.core.launch_cost import ORIENTATION, current, fit_measurement, from_json, load

TRUE = {"fixed_ns": 1800.0, "per_node_ns": 0.9, "per_edge_ns": 0.4, "per_root_ns": 700.0}
EXTRA = {"fanout": 100.0, "memops": 500.0}  # ns per fan-out leaf beyond the first, per memset/memcpy node


def synthetic(seed: int = 3) -> dict:
    rng = np.random.default_rng(seed)
    samples = []
    shapes = {"chain": (lambda n: n - 1, 1), "layered": (lambda n: 4 * n, 4), "streams": (lambda n: n, 1),
              "fanout": (lambda n: n - 1, 1), "memops": (lambda n: n - 1, 1)}  # fmt: skip
    for shape, (edges, roots) in shapes.items():
        for n in (10, 100, 1000, 5000):
            e = edges(n)
            memops = n // 2 if shape == "memops" else 0
            extra = {"fanout": EXTRA["fanout"] * (n - 2), "memops": EXTRA["memops"] * memops}.get(shape, 0.0)
            host = (TRUE["fixed_ns"] + TRUE["per_node_ns"] * n + TRUE["per_edge_ns"] * e
                    + TRUE["per_root_ns"] * (roots - 1) + extra + rng.normal(0, 40, 25))  # fmt: skip
            gpu = 2500 + 1100 * n + rng.normal(0, 200, 25)
            samples.append(
                {"shape": shape, "nodes": n, "edges": e, "memops": memops, "roots": roots, "host_ns": host.tolist(),
                 "gpu_ns": gpu.tolist(), "first_no_upload_ns": 9000 + 60.0 * n, "first_uploaded_ns": 2000 + n,
                 "busy_launch_ns": 2000.0, "instantiate_ns": 1e5 + 900.0 * n}
            )  # fmt: skip
    for n in (10, 100, 1000, 5000):  # a chain with a host node every 50: 300 ns more to launch, 20 us to replay each
        chain = next(s for s in samples if s["shape"] == "chain" and s["nodes"] == n)
        hosts = len(range(5, n, 50))
        samples.append(chain | {"shape": "hostnodes", "hostnodes": hosts,
                                "host_ns": [h + 300 * hosts for h in chain["host_ns"]],
                                "gpu_ns": [g + 20_000 * hosts for g in chain["gpu_ns"]]})  # fmt: skip
    # a fan-out whose call kept pace with the GPU: left out of its extra's price, named as blocked
    samples.append({**samples[-1], "shape": "fanout", "nodes": 20000, "edges": 19999, "hostnodes": 0,
                    "host_ns": [1e6] * 25, "gpu_ns": [1.05e6] * 25})  # fmt: skip
    return {"gpu": "Test GPU", "driver_version": 13000, "floor_ns": 80.0, "reps": 25, "samples": samples}


def test_the_fit_recovers_known_terms_within_its_intervals():
    raw = synthetic()
    fit = fit_measurement(raw)
    host = fit["host"]
    for term, value in TRUE.items():
        lo, hi = host["interval"][term]
        assert lo <= host[term] <= hi
        assert host[term] == pytest.approx(value, rel=0.05, abs=15)
    # a second way: numpy's least squares on the per-graph medians
    s = [g for g in raw["samples"] if g["shape"] in launch_cost.SERIAL_SHAPES]
    x = np.array([[1.0, g["nodes"], g["edges"], g["roots"] - 1] for g in s])
    y = np.array([np.median(g["host_ns"]) for g in s])
    plain = np.linalg.lstsq(x, y, rcond=None)[0]
    assert [host[t] for t in launch_cost.TERMS] == pytest.approx(plain.tolist(), abs=0.01)
    assert fit["gpu_by_shape"]["chain"]["per_node_ns"] == pytest.approx(1100, rel=0.01)
    assert fit["first_no_upload"]["per_node_ns"] == pytest.approx(60, rel=1e-6)
    assert fit["host_nodes"] == {"host_ns_each": 300.0, "gpu_ns_each": 20000.0, "sizes": 4}
    assert fit["host"]["graphs"] == 12  # chains, layers and parallel chains; the other shapes priced apart
    assert fit["extra"]["parallel_node_ns"] == pytest.approx(EXTRA["fanout"], abs=3)
    assert fit["extra"]["memop_node_ns"] == pytest.approx(EXTRA["memops"], abs=3)
    assert fit["blocked_from"]["fanout"] == 20000 and fit["blocked_from"]["chain"] is None


def test_a_stored_fit_is_the_model_and_the_users_comes_first(tmp_path):
    fit = fit_measurement(synthetic())
    model = from_json(fit, "here")
    assert model.measured_here and model.gpu == "Test GPU" and model.per_edge_ns == pytest.approx(0.4, abs=0.02)
    assert model.launch_ns(5000, 4999) == pytest.approx(1800 + 0.9 * 5000 + 0.4 * 4999, rel=0.01)
    assert model.launch_ns(100, 400, 4) == pytest.approx(1800 + 90 + 160 + 3 * 700, rel=0.01)
    assert model.launch_ns(5000) == model.launch_ns(5000, 4999)  # edges unknown: a chain's
    (tmp_path / launch_cost.USER_FILE).write_text(json.dumps(fit))
    assert current(tmp_path).gpu == "Test GPU"
    (tmp_path / launch_cost.USER_FILE).write_text("{not json")
    assert current(tmp_path).gpu != "Test GPU"  # a damaged file is passed over
    with pytest.raises(ValueError, match="not a launch-cost fit"):
        load(tmp_path / launch_cost.USER_FILE)


def test_the_orientation_line_goes_through_the_issues_points():
    assert ORIENTATION.launch_ns(10, 0) == pytest.approx(1270) and ORIENTATION.launch_ns(5000, 0) == pytest.approx(5500)
    assert not ORIENTATION.measured_here


def test_launch_cost_command_prices_a_graph(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("GRAPHSCOPE_DATA_DIR", str(tmp_path))
    (tmp_path / launch_cost.USER_FILE).write_text(json.dumps(fit_measurement(synthetic())))
    assert main(["launch-cost", "--nodes", "2876", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["model"]["gpu"] == "Test GPU" and out["file"].endswith(launch_cost.USER_FILE)
    assert out["launch_ns"] == pytest.approx(
        out["model"]["fixed_ns"] + 2876 * out["model"]["per_node_ns"] + 2875 * out["model"]["per_edge_ns"], rel=2e-3
    )
    assert main(["launch-cost", "--nodes", "2876"]) == 0
    text = capsys.readouterr().out
    assert "a graph of 2,876 nodes and 2,875 edges:" in text and "95% interval" in text


@pytest.mark.parametrize("argv", [["--nodes", "0"], ["--edges", "3"], ["--nodes", "5", "--edges", "-1"]])
def test_launch_cost_refuses_in_one_line(argv, capsys):
    assert main(["launch-cost", *argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith("graphscope: error: --") and err.count("\n") == 1


def test_measure_without_a_gpu_is_one_line(monkeypatch, tmp_path, capsys):
    from graphscope.workload import launch_bench

    def no_gpu(*args, **kwargs):
        raise RuntimeError("CUDA driver call failed: CUDA_ERROR_NO_DEVICE")

    monkeypatch.setattr(launch_bench, "measure_and_store", no_gpu)
    monkeypatch.setenv("GRAPHSCOPE_DATA_DIR", str(tmp_path))
    assert main(["launch-cost", "--measure"]) == 2
    err = capsys.readouterr().err
    assert err == "graphscope: error: cannot measure graph launches on this machine: CUDA driver call failed: " \
        "CUDA_ERROR_NO_DEVICE\n"
    assert not (tmp_path / launch_cost.USER_FILE).exists()


def test_a_kept_summary_is_not_served_once_the_user_measures_again(tmp_path, monkeypatch, own_cache, capsys):
    """The answer cache keys a summary by the user's launch-cost model too: measuring again (a new model
    file) makes the next summary price the graph launches by the new model, not the kept answer's."""
    from graphscope.core import answer_cache
    from tests.conftest import FORKJOIN

    assert answer_cache.LAUNCH_MODEL_FILE == launch_cost.USER_FILE
    monkeypatch.setenv("GRAPHSCOPE_DATA_DIR", str(tmp_path))
    assert main(["summary", str(FORKJOIN), "--json"]) == 0
    before = json.loads(capsys.readouterr().out)["graph_launch_cost"]["model"]
    (tmp_path / launch_cost.USER_FILE).write_text(json.dumps(fit_measurement(synthetic())))
    assert main(["summary", str(FORKJOIN), "--json"]) == 0
    after = json.loads(capsys.readouterr().out)["graph_launch_cost"]["model"]
    assert before["gpu"] != "Test GPU" and after["gpu"] == "Test GPU"


def test_a_fit_file_with_terms_that_are_not_numbers_is_not_a_model(tmp_path):
    planted = tmp_path / launch_cost.USER_FILE
    planted.write_text('{"gpu": "X", "host": {"fixed_ns": NaN, "per_node_ns": 1e300}}')
    with pytest.raises(ValueError, match="not a launch-cost fit"):
        load(planted)
    assert current(tmp_path) == current(None)  # the shipped model judges instead

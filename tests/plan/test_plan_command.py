"""`graphscope plan` end to end on recorded per-size measurements (no GPU): plan, store, re-plan, report."""

from __future__ import annotations

import csv
import io
import json
import shutil
import sqlite3

import pytest

from graphscope.cli import main
from graphscope.plan import runner
from tests.conftest import H200_NODE

SIZES = [1, 2, 4, 8, 16, 32]


class FakeSession:
    """Stands in for the workload child: per-size numbers shaped like an H200's (launch-bound small sizes)."""

    def __init__(self, path, config, timeout, cancel=None, sizes=None):
        self.info = {"sizes": SIZES, "environment": {"gpu": "NVIDIA H200 (recorded)"}}

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def request(self, command, **fields):
        assert command == "sizes"
        order = fields["order"]
        results = [
            {
                "size": s,
                "eager_ns": [80_000.0 + 1_000 * s] * fields["reps"],
                "graph_ns": [20_000.0 + 2_500 * s] * fields["reps"],
                "capture_ns": 40_000_000,
                "instantiate_ns": 5_000_000,
                "upload_ns": 1_000_000,
                "first_replay_extra_ns": 30_000.0,
                "memory_bytes": (2 << 20) * s,
                "pool_bytes": (2 << 20) * s,
                "outputs": {"checked": True, "match": True, "exact": True},
            }
            for s in sorted(fields["sizes"], reverse=order == "largest")
        ]
        total = sum(r["memory_bytes"] for r in results)
        extra = 0 if order == "largest" else 8 << 20  # smallest first: the pool grows in more pieces
        return {"order": order, "sizes": results, "total_memory_bytes": total + extra, "total_pool_bytes": total}


@pytest.fixture
def workload(tmp_path, monkeypatch):
    monkeypatch.setattr(runner, "WorkloadSession", FakeSession)
    path = tmp_path / "serve.py"
    path.write_text("SIZES = [1, 2, 4, 8, 16, 32]\ndef setup(ctx):\n    return lambda ctx: None\n")
    return path


def test_plan_measures_chooses_stores_and_reports(workload, tmp_path, capsys):
    session = tmp_path / "s.sqlite"
    traffic = tmp_path / "traffic.csv"
    traffic.write_text("size,count\n1,50\n3,30\n12,15\n30,5\n")
    assert main(["plan", str(workload), "--traffic", str(traffic), "--memory", "60MiB", "--session", str(session),
                 "--compare-list", "1,2,4,8,16,32", "--json"]) == 0  # fmt: skip
    plan = json.loads(capsys.readouterr().out)
    assert plan["best"]["memory_bytes"] <= 60 << 20 and plan["best"]["sizes"]
    assert plan["compared"]["memory_bytes"] == sum((2 << 20) * s for s in SIZES)
    assert plan["order_effect"]["smallest_first_bytes"] > plan["order_effect"]["largest_first_bytes"]
    assert "capture" in plan["verdict"] and plan["per_size"][0]["pays"] is True
    # re-plan the stored measurements with another budget, without a GPU
    assert main(["plan", f"plan:{plan['plan_id']}", "--traffic", str(traffic), "--memory", "10MiB",
                 "--session", str(session), "--json"]) == 0  # fmt: skip
    tighter = json.loads(capsys.readouterr().out)
    assert tighter["best"]["memory_bytes"] <= 10 << 20 and tighter["best"]["expected_ns"] >= plan["best"]["expected_ns"]
    for name in ("p.html", "p.md", "p.json", "p.csv"):
        out = tmp_path / name
        assert main(["report", f"plan:{plan['plan_id']}", "--session", str(session), "-o", str(out)]) == 0
    assert "<svg" in (tmp_path / "p.html").read_text() and "Per batch size" in (tmp_path / "p.md").read_text()
    rows = list(csv.reader(io.StringIO((tmp_path / "p.csv").read_text())))
    assert rows[0][0] == "size" and len(rows) == len(SIZES) + 1
    assert json.loads((tmp_path / "p.json").read_text())["plan"]["best"] == plan["best"]


@pytest.mark.parametrize(
    "args, words",
    [
        (["--sizes", "0-4"], "not a range of positive sizes"),
        (["--sizes", "a,b"], "write sizes like"),
        (["--memory", "lots"], "write a size such as 2GiB"),
        (["--startup", "10"], "a unit"),
        (["--traffic", "missing.csv"], "no such file"),
    ],
)
def test_bad_plan_arguments_are_one_line(workload, tmp_path, capsys, args, words):
    assert main(["plan", str(workload), *args, "--session", str(tmp_path / "s.sqlite")]) == 2
    err = capsys.readouterr().err
    assert words in err and err.count("\n") == 1


def test_traffic_from_a_trace_reads_sizes_from_range_names(tmp_path):
    from graphscope.core.errors import BadInputError
    from graphscope.plan.traffic import read_traffic

    with pytest.raises(BadInputError, match="no NVTX range names a batch size"):
        read_traffic(H200_NODE)
    renamed = tmp_path / "served.sqlite"
    shutil.copy(H200_NODE, renamed)
    with sqlite3.connect(renamed) as conn:  # eager_0..2 -> 'decode bs=8', graph_0..2 -> 'decode bs=32'
        conn.execute("UPDATE NVTX_EVENTS SET text = 'decode bs=8' WHERE text LIKE 'eager_%'")
        conn.execute("UPDATE NVTX_EVENTS SET text = 'decode bs=32' WHERE text LIKE 'graph_%'")
    assert read_traffic(renamed) == {8: 3, 32: 3}

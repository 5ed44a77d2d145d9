"""The text `graphscope diverge` prints, from answers the simulated search gives, and its refusals."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from graphscope.diverge.launches import differences, scalar_text
from graphscope.text.diverge import render, render_audit, render_search
from graphscope.workload.child.diverge_audit import audit_graph
from graphscope.workload.child.diverge_search import diverge
from tests.diverge.test_search_sim import faulty

ROOT = Path(__file__).resolve().parents[2]


def test_the_found_node_is_shown_with_both_launches_and_what_differs() -> None:
    live, drv = faulty("scalar", 2)
    result = diverge(live, drv)
    text = render_search({**result, "workload": "sim.py"})
    assert "first differing node: affine (#2 in capture order" in text
    assert "argument 3 (scalar, offset 24): captured 7 (0x40e00000), eager 1.2 (0x3f99999a)" in text
    assert "  *   arg 3 @24 (4 B): 7 (0x40e00000)" in text  # the differing line of the two columns, marked
    assert "buffers that differ after the node:" in text
    assert f"({len(result['trials'])} prefix trials" not in text  # said once, in words
    assert f"found in {len(result['trials'])} prefix trials" in text


def test_a_frozen_grid_that_eager_values_hid_is_named_as_such() -> None:
    live, drv = faulty("grid", 1)
    text = render_search(diverge(live, drv))
    assert "match on a plain replay, but differ once the buffers are poisoned" in text
    assert "grid: captured 1x1x1, eager 8x1x1" in text


def test_the_audit_lists_flagged_nodes_and_the_shares() -> None:
    live, drv = faulty("stale", 3)
    audit = audit_graph(live, drv, time_nodes=False)
    text = render_audit(audit)
    assert "audited 6 of 6 kernel, copy and memset nodes (100%)" in text
    assert "frozen_pointer: argument 1 (pointer, offset 8): captured ptr 0x" in text
    assert "affine (#3 in capture order" in text
    assert "nothing flagged" in render_audit({**audit, "nodes": [], "flagged": []})


def test_a_graph_that_matches_says_so_and_json_round_trips() -> None:
    from tests.diverge.fake_driver import FakeDriver
    from tests.diverge.test_search_sim import Live, Sim

    drv = FakeDriver()
    live = Live(Sim(drv))
    live.capture_graph()
    result = diverge(live, drv)
    text = render(json.loads(json.dumps(result, default=str)))
    assert "outputs: the graph's match eager's" in text
    assert "nothing to search" in text


def test_differences_name_each_kind_and_scalars_read_as_numbers() -> None:
    base = {"name": "k", "grid": [4, 1, 1], "block": [256, 1, 1], "shared_mem": 0,
            "params": [{"offset": 0, "size": 4, "hex": (5).to_bytes(4, "little").hex()}]}
    other = {**base, "grid": [8, 1, 1], "params": [{"offset": 0, "size": 4, "hex": (6).to_bytes(4, "little").hex()}]}
    assert [d["what"] for d in differences(base, other)] == ["grid", "scalar"]
    assert [d["what"] for d in differences(base, {**base, "name": "j"})] == ["kernel"]
    assert scalar_text("0000803f") == "1 (0x3f800000)"
    assert scalar_text((4096).to_bytes(8, "little").hex()) == "4096"


def test_bad_input_is_one_line_and_exit_2(tmp_path: Path) -> None:
    text = tmp_path / "notes.txt"
    text.write_text("x")
    for argv in (["diverge", str(tmp_path / "missing.py")], ["diverge", str(text)], ["diverge"]):
        done = subprocess.run([sys.executable, "-m", "graphscope", *argv], capture_output=True, text=True,
                              cwd=ROOT, timeout=60)
        assert done.returncode == 2
        assert done.stdout == ""
        assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr

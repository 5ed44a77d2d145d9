"""graphscope diverge on the GPU: seeded faults in the CuPy pipeline found at their node through the
command and through `run`, the audit flagging the frozen node, and a sound graph left alone."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.gpu
ROOT = Path(__file__).resolve().parents[2]
PIPELINE = ROOT / "benchmarks" / "faults" / "cupy_pipeline.py"


def graphscope(*argv: str, fault: str) -> tuple[int, str]:
    import os

    env = {**os.environ, "GRAPHSCOPE_FAULT": fault}
    done = subprocess.run([sys.executable, "-m", "graphscope", *argv], capture_output=True, text=True, env=env,
                          cwd=ROOT, timeout=120)
    print(done.stderr[-2000:])
    return done.returncode, done.stdout


def test_diverge_names_the_stage_whose_scalar_was_frozen_and_the_audit_flags_it():
    code, out = graphscope("diverge", str(PIPELINE), "--json", fault="scalar:5")
    result = json.loads(out)
    assert code == 0
    assert result["outputs"]["match"] is False
    assert result["captured"]["name"] == "stage5" and result["captured"]["site"] == "stage5#0"
    assert result["captured"]["line"].startswith("cupy_pipeline.py:")
    assert [d["what"] for d in result["eager_differences"]] == ["scalar"]
    assert result["reference_matches_eager"] is True
    flagged = {result["audit"]["nodes"][p]["name"] for p in result["audit"]["flagged"]}
    assert flagged == {"stage5"}


def test_a_frozen_grid_hidden_by_eager_values_is_found_and_said():
    code, out = graphscope("diverge", str(PIPELINE), "--no-audit", fault="grid:3")
    assert code == 0
    assert "first differing node: stage3" in out
    assert "grid: captured 4x1x1, eager 256x1x1" in out


def test_run_attaches_the_node_when_outputs_differ():
    code, out = graphscope("run", str(PIPELINE), "--reps", "3", "--warmup", "1", "--json", fault="stale:1")
    data = json.loads(out)
    assert code == 1 and data["outputs_match"] is False
    assert data["divergence"]["captured"]["name"] == "stage1"
    assert "the first node that differs is stage1" in data["verdict"]


def test_a_sound_pipeline_is_not_blamed():
    code, out = graphscope("diverge", str(PIPELINE), "--json", fault="none")
    result = json.loads(out)
    assert code == 0 and result["outputs"]["match"] is True
    assert result.get("position") is None and result["audit"]["flagged"] == []


def test_the_audit_at_two_sizes_names_the_stage_whose_grid_stays():
    code, out = graphscope("diverge", str(ROOT / "benchmarks" / "faults" / "cupy_sizes.py"), "--json", fault="none")
    result = json.loads(out)
    assert code == 0 and result["outputs"]["match"] is True  # eager leaves the same rows unwritten
    sizes = result["audit"]["sizes"]
    assert sizes["sizes"] == [4, 64]
    assert [sizes["nodes"][p]["name"] for p in sizes["flagged"]] == ["size_stage2"]


def test_a_torch_decoder_fault_is_named_with_its_operator():
    code, out = graphscope("diverge", str(ROOT / "benchmarks" / "faults" / "torch_decoder.py"), "--json",
                           "--no-audit", fault="scalar:2")
    result = json.loads(out)
    assert code == 0 and result["framework"] == "torch"
    assert result["captured"].get("operator") == "aten::mul"
    assert "scalar" in [d["what"] for d in result["differences"]]  # pool pointers of the two captures may differ too

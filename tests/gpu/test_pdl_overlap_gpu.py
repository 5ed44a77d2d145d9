"""A chain launched with programmatic dependent launch (benchmarks/pdl_chain.py) on the GPU: its kernels
start before the previous one ends on the GPU's own clock, and, traced by Nsight Systems, graphscope counts
what the trace shows as overlap on the stream exactly as a plain SQL window over the kernel table does (issue #45)."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from graphscope.cli import main

pytestmark = pytest.mark.gpu
ROOT = Path(__file__).resolve().parent.parent.parent
SCRIPT = ROOT / "benchmarks" / "pdl_chain.py"
OVERLAP = """
WITH k AS (SELECT start, end, MAX(end) OVER (PARTITION BY deviceId, streamId ORDER BY start
                                             ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS reach
           FROM CUPTI_ACTIVITY_KIND_KERNEL)
SELECT COUNT(*), COALESCE(SUM(MIN(end, reach) - start), 0) FROM k WHERE reach > start
"""


def test_programmatic_launches_overlap_on_the_gpu_clock(tmp_path):
    out = tmp_path / "stamps.json"
    subprocess.run([sys.executable, str(SCRIPT), "-o", str(out)], check=True, timeout=120)
    stamps = json.loads(out.read_text())
    assert stamps["programmatic"]["started_early"] >= stamps["kernels"] - 4
    assert stamps["plain"]["started_early"] == 0


def test_a_traced_pdl_chain_is_counted_as_overlap(tmp_path, capsys):
    nsys = shutil.which("nsys")
    if nsys is None:
        pytest.skip("nsys is not installed")
    report = tmp_path / "pdl"
    subprocess.run(
        [nsys, "profile", "--trace=cuda", "--sample=none", "--cpuctxsw=none", "-o", str(report), "-f", "true",
         sys.executable, str(SCRIPT)],
        check=True, timeout=120, capture_output=True,
    )  # fmt: skip
    db = tmp_path / "pdl.sqlite"
    subprocess.run([nsys, "export", "--type", "sqlite", "-f", "true", "-o", str(db), f"{report}.nsys-rep"],
                   check=True, timeout=120, capture_output=True)  # fmt: skip
    keep = os.environ.get("GRAPHSCOPE_PDL_TRACE_OUT")  # the GPU job keeps the trace (tests/data candidate)
    if keep:
        shutil.copy(db, keep)
    conn = sqlite3.connect(db)
    count, ns = conn.execute(OVERLAP).fetchone()
    conn.close()
    assert main(["summary", str(db), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    found = out["stream_overlap"]
    assert (found["count"], found["ns"]) == (count, ns)
    # whether CUPTI's timestamps show the overlap the GPU clock shows (the test above) is the tracer's to say
    # (the "pdl" engineer's Kineto trace of an eager PDL chain showed none, of a graph with programmatic
    # edges 150): whatever it shows is counted as overlap, never as a warning about the rows
    assert not any("negative" in w or "before" in w for w in out["warnings"])
    print(f"PDL chain under nsys: {count} kernels started before the previous one ended ({ns} ns)")

"""The bundled demo rank set: a fresh install can try the rank overview without a GPU (`summary
--demo-ranks`, `report --demo-ranks`, File > Open demo rank set)."""

from __future__ import annotations

import gzip
import json

import pytest

from graphscope.cli import main
from graphscope.core.settings import demo_ranks
from graphscope.ranks.job import analyse_serially


def _plain(path):
    """Rank and world size, ProfilerStep count and kernel count by plain JSON."""
    document = json.loads(gzip.decompress(path.read_bytes()))
    events = document["traceEvents"]
    steps = {e["name"] for e in events if str(e.get("name", "")).startswith("ProfilerStep#")}
    kernels = sum(e.get("cat") == "kernel" for e in events)
    return document["distributedInfo"], len(steps), kernels


def test_the_demo_rank_set_is_shipped_with_its_licence_and_is_one_job():
    folder = demo_ranks()
    files = sorted(p.name for p in folder.iterdir())
    assert files == ["README.md", "rank0.json.gz", "rank1.json.gz"]
    assert "MIT License" in (folder / "README.md").read_text()
    assert sum(p.stat().st_size for p in folder.iterdir()) < 300_000  # two ~120 KB ranks, no more
    job = analyse_serially([folder])
    said = [_plain(folder / f"rank{r}.json.gz") for r in (0, 1)]
    assert [r["rank"] for r in job["ranks"]] == [info["rank"] for info, _, _ in said] == [0, 1]
    assert job["world_size"] == said[0][0]["world_size"] == 128 and job["missing_count"] == 126
    assert len(job["steps"]) == said[0][1] == 2 and all(k > 1000 for _, _, k in said)


def test_summary_demo_ranks_is_the_folder_and_refuses_other_files(capsys, tmp_path):
    pytest.importorskip("dask.distributed")
    assert main(["summary", "--demo-ranks", "--workers", "1", "--json"]) == 0
    job = json.loads(capsys.readouterr().out)
    assert [r["rank"] for r in job["ranks"]] == [0, 1] and job["world_size"] == 128
    assert main(["summary", "--demo-ranks", str(tmp_path)]) == 2
    assert main(["summary"]) == 2
    assert main(["report", "--demo-ranks", "-o", str(tmp_path / "r.html"), "x.json"]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 3 and "--demo-ranks stands for the files" in err[0]
    assert "arguments are required: FILE (or --demo-ranks)" in err[1]

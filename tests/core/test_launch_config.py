from __future__ import annotations

import pytest

from graphscope.core.errors import BadInputError
from graphscope.core.launch_config import (
    LaunchConfig,
    Site,
    as_dim,
    block_problem,
    candidate_blocks,
    grid_for,
    split_site,
)


def test_dimensions_and_grids():
    assert as_dim(256) == (256, 1, 1) and as_dim((16, 16)) == (16, 16, 1)
    assert grid_for((16384, 1, 1), (256, 1, 1)) == (64, 1, 1)
    assert grid_for((1000, 30, 1), (256, 8, 1)) == (4, 4, 1)
    with pytest.raises(ValueError):
        as_dim((0,))


def test_a_site_override_wins_over_a_name_override():
    config = LaunchConfig({"add": (128, 1, 1), "add#3": (64, 1, 1)})
    assert config.block_for("add", 3, (256, 1, 1)) == (64, 1, 1)
    assert config.block_for("add", 4, (256, 1, 1)) == (128, 1, 1)
    assert config.block_for("relu", 0, (256, 1, 1)) == (256, 1, 1)
    assert split_site("add#3") == ("add", 3) and split_site("add") == ("add", None)


def test_configs_round_trip_through_json_files(tmp_path):
    config = LaunchConfig({"add": (128, 1, 1)}, workload="seed_vecadd.py").with_block("relu#0", (64, 1, 1))
    config.save(tmp_path / "tuned.json")
    assert LaunchConfig.load(tmp_path / "tuned.json") == config


@pytest.mark.parametrize("text", ["{}", "not json", '{"format": "graphscope-launch-config/1", "blocks": {"a": [0]}}'])
def test_bad_config_files_are_reported(tmp_path, text):
    path = tmp_path / "bad.json"
    path.write_text(text)
    with pytest.raises(BadInputError):
        LaunchConfig.load(path)


def test_block_limits_and_candidates():
    assert block_problem((1024, 1, 1), 1024) is None
    assert "exceed" in block_problem((1024, 1, 1), 512)
    assert "warp" in block_problem((48, 1, 1), 1024)
    assert candidate_blocks(512) == [32, 64, 128, 256, 512]
    site = Site("add", 2, "vec_add", (16384, 1, 1), (256, 1, 1), (64, 1, 1), max_threads=1024, registers=8)
    assert Site.from_json(site.to_json()) == site and site.key == "add#2"

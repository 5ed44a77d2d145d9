"""The cache folder is the user's own: created 0700, refused (one warning, caching off) when it is a symlink,
another user's, or writable by others; XDG_CACHE_HOME counts only when absolute."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from graphscope.core import settings
from graphscope.core.cache_files import DamagedEntry, read_checked, read_file, write_checked, write_file
from tests.conftest import FORKJOIN


def _summary(cache_home: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "XDG_CACHE_HOME": str(cache_home)}
    env.pop("GRAPHSCOPE_NO_CACHE", None)
    return subprocess.run(
        [sys.executable, "-m", "graphscope", "summary", "--json", str(FORKJOIN)], capture_output=True, text=True,
        env=env, timeout=120,
    )  # fmt: skip


def _another_users(folder: Path) -> None:
    if os.getuid() != 0:
        pytest.skip("only root can give a folder to another user")
    os.chown(folder, 65534, 65534)


def _world_writable(folder: Path) -> None:
    folder.chmod(0o777)


def _group_writable(folder: Path) -> None:
    folder.chmod(0o770)


@pytest.mark.parametrize("make", [_another_users, _world_writable, _group_writable])
def test_a_folder_not_the_users_own_turns_caching_off_with_one_warning(tmp_path, make):
    folder = tmp_path / "cache" / "graphscope"
    folder.mkdir(parents=True)
    make(folder)
    for _ in range(2):
        done = _summary(tmp_path / "cache")
        assert done.returncode == 0 and json.loads(done.stdout)["kernels"]["count"] == 52
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1 and "caching is off" in lines[0] and str(folder) in lines[0], done.stderr
    assert not list(folder.iterdir())  # nothing written there


def test_a_symlinked_folder_is_refused(tmp_path, monkeypatch, capsys):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir(mode=0o700)
    (tmp_path / "cache").mkdir()
    (tmp_path / "cache" / "graphscope").symlink_to(elsewhere)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setattr(settings, "_refused", [])
    for _ in range(3):
        with pytest.raises(OSError):
            settings.cache_dir()
    assert capsys.readouterr().err.count("caching is off") == 1


def test_the_folder_is_made_private_and_an_older_open_one_closed(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setattr(settings, "_refused", [])
    made = settings.cache_dir()
    assert made == tmp_path / "cache" / "graphscope" and made.stat().st_mode & 0o777 == 0o700
    made.chmod(0o755)  # as an older graphscope left it
    assert settings.cache_dir().stat().st_mode & 0o777 == 0o700


@pytest.mark.parametrize("value", ["relative/cache", "", "."])
def test_a_relative_or_empty_xdg_cache_home_is_ignored(tmp_path, monkeypatch, value):
    home, work = tmp_path / "home", tmp_path / "work"
    work.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CACHE_HOME", value)
    monkeypatch.setenv("XDG_DATA_HOME", value)
    monkeypatch.setattr(settings, "_refused", [])
    monkeypatch.chdir(work)
    assert settings.cache_dir() == home / ".cache" / "graphscope"
    assert settings.data_dir() == home / ".local" / "share" / "graphscope"
    assert not list(work.iterdir())


def test_cache_files_are_written_whole_and_read_only_as_written(tmp_path):
    target = tmp_path / "answer.txt"
    write_checked(target, "kernels 52")
    assert read_checked(target) == "kernels 52" and target.stat().st_mode & 0o777 == 0o600
    target.write_text(target.read_text().replace("52", "53"))
    with pytest.raises(DamagedEntry):
        read_checked(target)
    victim = tmp_path / "victim"
    victim.write_text("the user's")
    link = tmp_path / "link"
    link.symlink_to(victim)
    with pytest.raises(DamagedEntry):
        read_file(link)
    write_file(link, b"new")  # renamed over the link, never written through it
    assert victim.read_text() == "the user's" and not link.is_symlink() and link.read_bytes() == b"new"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["answer.txt", "link", "victim"]

"""Damaged cache entries are never served and never raise: a kept answer or a cached column that is not what
was written (empty, truncated, an edited digit, a flipped bit, a shortened manifest, a garbled header, a
symlink) is removed and the answer computed again from the file."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import numpy as np
import pytest

from graphscope import cli
from graphscope.core import answer_cache
from graphscope.trace import cache, load_trace, tables
from tests.conftest import FORKJOIN

EXPECTED_TOTAL = 409_630  # the fork/join trace's kernel time, SUM("end" - start) in SQL


@pytest.fixture
def path(own_cache, tmp_path, monkeypatch):
    monkeypatch.setattr(cache, "detached", lambda work: work() or True)  # the command's writes done when it returns
    copy = tmp_path / "f.sqlite"
    shutil.copy(FORKJOIN, copy)
    return copy


def _summary(capsys, path: Path, *extra: str) -> dict:
    assert cli.main(["summary", "--json", *extra, str(path)]) == 0
    out = capsys.readouterr()
    assert not out.err, out.err
    return json.loads(out.out)


def _answers(own_cache: Path) -> list[Path]:
    """The printed answer and the kept summary (analysis/summary_file.py) it was printed from."""
    found = sorted((own_cache / "answers").iterdir())
    assert len(found) == 2
    return found


def _empty(answer: Path) -> None:
    answer.write_text("")


def _truncated(answer: Path) -> None:
    data = answer.read_bytes()
    answer.write_bytes(data[: len(data) // 2])


def _an_edited_digit(answer: Path) -> None:
    answer.write_text(answer.read_text().replace(str(EXPECTED_TOTAL), str(EXPECTED_TOTAL + 1)))


def _only_the_digest_left(answer: Path) -> None:
    answer.write_text(answer.read_text().split("\n")[0] + "\n")


def _a_folder(answer: Path) -> None:
    answer.unlink()
    answer.mkdir()


def _a_symlink(answer: Path) -> None:
    target = answer.parent.parent / f"elsewhere-{answer.name}"
    answer.replace(target)
    answer.symlink_to(target)


@pytest.mark.parametrize("damage", [_empty, _truncated, _an_edited_digit, _only_the_digest_left, _a_folder, _a_symlink])
def test_a_damaged_kept_answer_is_removed_and_the_summary_computed(own_cache, path, capsys, damage):
    first = _summary(capsys, path)
    assert first["kernels"]["total_ns"] == EXPECTED_TOTAL
    for answer in _answers(own_cache):
        damage(answer)
    assert _summary(capsys, path) == first
    assert answer_cache.get(path, {"anything": 1}) is None
    assert _summary(capsys, path) == first  # kept again, whole


def _entry(path: Path) -> Path:
    load_trace(path)
    cache.wait_for_writers()
    entry = cache.entry_for(path)
    assert (entry / "manifest.json").exists()
    return entry


def _flip_a_bit(entry: Path) -> None:
    column = entry / "kernels.end.npy"
    data = bytearray(column.read_bytes())
    data[-5] ^= 0x80  # the top bit of the last end time's high byte: a negative total if served
    column.write_bytes(bytes(data))


def _truncate_a_column(entry: Path) -> None:
    column = entry / "kernels.start.npy"
    column.write_bytes(column.read_bytes()[:-8])


def _garble_a_header(entry: Path) -> None:
    column = entry / "kernels.start.npy"
    data = bytearray(column.read_bytes())
    data[8:30] = b"\x00garbage header\xff\xfe\x00\x01\x02\x03"
    column.write_bytes(bytes(data))


def _object_header(entry: Path) -> None:
    column = entry / "api.start.npy"
    text = column.read_bytes()
    column.write_bytes(text.replace(b"'descr': '<i8'", b"'descr': '|O' ", 1))


def _shorten_the_strings(entry: Path) -> None:
    manifest_file = entry / "manifest.json"
    digest, body = manifest_file.read_text().split("\n", 1)
    manifest = json.loads(body)
    manifest["strings"] = manifest["strings"][:3]
    manifest_file.write_text(digest + "\n" + json.dumps(manifest))


def _truncate_the_manifest(entry: Path) -> None:
    manifest_file = entry / "manifest.json"
    manifest_file.write_bytes(manifest_file.read_bytes()[:-40])


def _nan_in_place_of_a_time(entry: Path) -> None:
    column = entry / "kernels.start.npy"
    array = np.load(column)
    array = array.view(np.float64).copy()
    array[0] = np.nan
    np.save(column, array.view(np.int64))


def _a_symlinked_column(entry: Path) -> None:
    column = entry / "kernels.end.npy"
    target = entry.parent / "elsewhere.npy"
    column.replace(target)
    column.symlink_to(target)


@pytest.mark.parametrize(
    "damage",
    [_flip_a_bit, _truncate_a_column, _garble_a_header, _object_header, _shorten_the_strings, _truncate_the_manifest,
     _nan_in_place_of_a_time, _a_symlinked_column],
)  # fmt: skip
def test_a_damaged_column_entry_is_removed_and_the_file_read_again(path, capsys, damage):
    entry = _entry(path)
    damage(entry)
    opened = cache.open_entry(path)
    if opened is not None:  # the manifest is whole: the damaged column is refused as it is mapped
        with pytest.raises(ValueError):
            opened.trace_parts(path)
            for key in tables.KEYS:
                opened.columns(key)
    _entry(path)  # made again
    damage(cache.entry_for(path))
    summary = _summary(capsys, path, "--top", "4")  # no kept answer: the columns would be used
    assert summary["kernels"]["total_ns"] == EXPECTED_TOTAL and summary["kernels"]["count"] == 52
    assert summary == _summary(capsys, path, "--top", "4", "--no-cache")
    os.environ.pop("GRAPHSCOPE_NO_CACHE", None)


def test_a_symlink_planted_where_a_column_will_go_is_never_written_through(path, tmp_path):
    entry = _entry(path)
    victim = tmp_path / "victim"
    victim.write_text("the user's file")
    (entry / "kernels.grid_x.npy").symlink_to(victim)
    trace = load_trace(path, columns="all")  # the deferred columns join the entry
    cache.wait_for_writers()
    assert victim.read_text() == "the user's file"
    assert not (entry / "kernels.grid_x.npy").is_symlink()  # replaced by the column, renamed into place
    np.testing.assert_array_equal(load_trace(path).kernels.grid_x, trace.kernels.grid_x)


def test_entries_are_private_to_the_user(own_cache, path):
    entry = _entry(path)
    _summary_answer = answer_cache.put(path, {"q": 1}, "an answer")
    assert _summary_answer is None and answer_cache.get(path, {"q": 1}) == "an answer"
    assert own_cache.stat().st_mode & 0o777 == 0o700 and entry.stat().st_mode & 0o777 == 0o700
    for found in [*entry.iterdir(), *(own_cache / "answers").iterdir()]:
        assert found.stat().st_mode & 0o777 == 0o600, found
    assert not [f for f in own_cache.rglob("*") if ".tmp" in f.name or f.name.endswith(".partial")]


@pytest.mark.parametrize("where", ["an entry", "the traces folder", "the answers folder"])
def test_a_symlink_planted_for_a_cache_folder_is_removed_and_nothing_read_or_written_through_it(
    own_cache, path, tmp_path, capsys, where
):
    expected = _summary(capsys, path)
    entry = _entry(path)
    elsewhere = tmp_path / "elsewhere"
    planted = {"an entry": entry, "the traces folder": entry.parent, "the answers folder": own_cache / "answers"}[where]
    shutil.move(planted, elsewhere)
    planted.symlink_to(elsewhere, target_is_directory=True)
    before = sorted(p.relative_to(elsewhere) for p in elsewhere.rglob("*"))
    again = _summary(capsys, path, "--whole-trace")  # another scope: the trace is read (another top is kept)
    assert _summary(capsys, path) == expected and again["kernels"] == expected["kernels"]
    cache.wait_for_writers()
    assert not planted.is_symlink() and sorted(p.relative_to(elsewhere) for p in elsewhere.rglob("*")) == before

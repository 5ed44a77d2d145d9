"""Saved views: a second open of a file gets the analysis, the lanes and the panels it had, not computed
again; a damaged, foreign or outdated entry is removed and the parts computed; caching off saves none."""

from __future__ import annotations

import json
import pickle
import shutil
import time
from pathlib import Path

import numpy as np
import pytest

from graphscope.core.cache_files import digest, write_checked, write_file
from graphscope.trace import cache
from graphscope.view import saved
from graphscope.view.document import ALIGN_FOCUS, open_document
from tests.conftest import DATA, FORKJOIN


def _saved(path: Path, align_to: str | None = None, timeout: float = 30.0) -> Path:
    """The file's view entry, once the background writer has put it in place."""
    entry = saved.entry_for(path, align_to)
    deadline = time.time() + timeout
    while not (entry / "manifest.json").exists():
        assert time.time() < deadline, "the view was never saved"
        time.sleep(0.05)
    return entry


def _copy(tmp_path: Path, source: Path = FORKJOIN) -> Path:
    path = tmp_path / source.name
    shutil.copy(source, path)
    return path


def _same_document(a, b) -> None:
    assert a.focus == b.focus and a.default_scope == b.default_scope
    assert json.dumps(a.view.summary, sort_keys=True, default=str) == json.dumps(
        b.view.summary, sort_keys=True, default=str
    )
    assert a.view.stats.columns == b.view.stats.columns and len(a.view.stats) == len(b.view.stats)
    np.testing.assert_array_equal(a.view.latency_ns, b.view.latency_ns)
    assert [lane.key for lane in a.layout.lanes] == [lane.key for lane in b.layout.lanes]
    for la, lb in zip(a.layout.lanes, b.layout.lanes, strict=True):
        for name in ("source", "row", "start", "end", "color", "name", "depth"):
            np.testing.assert_array_equal(getattr(la, name), getattr(lb, name), err_msg=f"{la.key}.{name}")
        assert [len(lod.start) for lod in la.lods] == [len(lod.start) for lod in lb.lods]
    assert len(a.analysis.graphs) == len(b.analysis.graphs) and len(a.dags) == len(b.dags)
    np.testing.assert_array_equal(a.analysis.launches.rows, b.analysis.launches.rows)


@pytest.mark.parametrize(
    "source", [FORKJOIN, DATA / "kineto" / "h200_torch_linear_capture.json.gz"], ids=["nsys", "kineto"]
)
def test_a_second_open_restores_every_part_the_first_computed(own_cache, tmp_path, source):
    path = _copy(tmp_path, source)
    first = open_document(path)
    assert not first.restored
    entry = _saved(path)
    assert entry.parent == own_cache / "traces"
    second = open_document(path)
    assert second.restored
    _same_document(first, second)
    lane = max(second.layout.lanes, key=lambda lane: len(lane.start))
    before = lane.start.copy()
    lane.start[:] = 0  # the GUI may change what it was given; the saved view never changes under it
    third = open_document(path)
    np.testing.assert_array_equal(next(x for x in third.layout.lanes if x.key == lane.key).start, before)


def test_the_alignment_asked_for_is_part_of_the_key(own_cache, tmp_path):
    path = _copy(tmp_path)
    plain = open_document(path)
    _saved(path)
    aligned = open_document(path, align_to=ALIGN_FOCUS)
    assert not aligned.restored and aligned.layout.origin != plain.layout.origin
    _saved(path, ALIGN_FOCUS)
    again = open_document(path, align_to=ALIGN_FOCUS)
    assert again.restored and again.layout.origin == aligned.layout.origin


def _plant(entry: Path, data: bytes) -> None:
    """Replace the pickle and put its digest in the manifest: only the reader's own checks stand."""
    manifest = cache.read_manifest(entry)
    write_file(entry / "parts.pickle", data)
    write_checked(entry / "manifest.json", json.dumps({**manifest, "parts": digest(data)}))


def _damage_pickle(entry: Path) -> None:
    data = (entry / "parts.pickle").read_bytes()
    (entry / "parts.pickle").write_bytes(data[: len(data) // 2])


def _damage_array(entry: Path) -> None:
    next(entry.glob("*.npy")).unlink()


def _flip_a_bit(entry: Path) -> None:
    array = max(entry.glob("*.npy"), key=lambda f: f.stat().st_size)
    data = bytearray(array.read_bytes())
    data[-3] ^= 0x10
    array.write_bytes(bytes(data))


def _garble_a_header(entry: Path) -> None:
    array = next(entry.glob("*.npy"))
    data = bytearray(array.read_bytes())
    data[10:40] = b"{'descr': '|O', 'fortran_ord"
    array.write_bytes(bytes(data))


def _right_keys_wrong_contents(entry: Path) -> None:
    _plant(entry, pickle.dumps({name: None for name in saved.PARTS}))


def _a_symlinked_array(entry: Path) -> None:
    array = next(entry.glob("*.npy"))
    target = entry.parent / "elsewhere.npy"
    array.replace(target)
    array.symlink_to(target)


def _foreign_class(entry: Path) -> None:
    class Foreign:
        def __reduce__(self):
            return (shutil.rmtree, ("/nonexistent-graphscope-test",))

    _plant(entry, pickle.dumps({"analysis": Foreign()}))


def _foreign_function(entry: Path) -> None:
    class Writes:
        def __reduce__(self):  # a NumPy function, not a class: it would write a file on load
            return (np.save, (str(entry.parent / "written-on-load.npy"), np.zeros(1)))

    _plant(entry, pickle.dumps({"analysis": Writes()}))


def _another_version(entry: Path) -> None:
    manifest = cache.read_manifest(entry)
    write_checked(entry / "manifest.json", json.dumps({**manifest, "version": saved.VERSION + 1}))


@pytest.mark.parametrize(
    "damage",
    [
        _damage_pickle, _damage_array, _flip_a_bit, _garble_a_header, _right_keys_wrong_contents, _a_symlinked_array,
        _foreign_class, _foreign_function, _another_version,
    ],
)  # fmt: skip
def test_a_damaged_or_foreign_entry_is_removed_and_the_parts_computed(own_cache, tmp_path, damage, monkeypatch):
    monkeypatch.setattr(saved, "INLINE_BYTES", 64)  # the small export's arrays get files of their own too
    path = _copy(tmp_path)
    first = open_document(path)
    entry = _saved(path)
    damage(entry)
    second = open_document(path)
    assert not second.restored and not (entry.parent / "written-on-load.npy").exists()
    _same_document(first, second)
    _saved(path)  # and saved again, whole
    assert open_document(path).restored


def test_caching_off_saves_no_view_and_a_changed_file_misses(own_cache, tmp_path, monkeypatch):
    path = _copy(tmp_path)
    monkeypatch.setenv("GRAPHSCOPE_NO_CACHE", "1")
    open_document(path)
    time.sleep(0.5)
    assert not saved.entry_for(path, None).exists()
    monkeypatch.delenv("GRAPHSCOPE_NO_CACHE")
    open_document(path)
    _saved(path)
    stat = path.stat()
    path.touch()
    assert path.stat().st_mtime_ns != stat.st_mtime_ns
    assert not open_document(path).restored


def test_large_arrays_are_files_of_their_own_and_trace_columns_are_references(own_cache, tmp_path, monkeypatch):
    monkeypatch.setattr(saved, "INLINE_BYTES", 64)
    path = _copy(tmp_path)
    document = open_document(path)
    entry = _saved(path)
    arrays = list(entry.glob("*.npy"))
    assert arrays
    column = document.trace.kernels.start.tobytes()
    assert all(np.load(a).tobytes() != column for a in arrays)  # the trace's own columns are not copied
    restored = open_document(path)
    mapped = [lane for lane in restored.layout.lanes if _mapped(lane.start)]
    assert mapped  # memory-mapped from the entry, not read into memory
    assert all(not _mapped(lane.start) or lane.start.flags.writeable for lane in restored.layout.lanes)


def _mapped(array: np.ndarray) -> bool:
    while array is not None:
        if isinstance(array, np.memmap):
            return True
        array = getattr(array, "base", None)
    return False


def test_while_a_window_holds_the_caches_writes_the_view_waits_for_them_too(own_cache, tmp_path):
    """A window holds the cache's writes until its first frame (app/workers.hold_cache_writes): the saved
    view's pickling would share the cores with that paint."""
    from graphscope.core import answer_cache

    path = _copy(tmp_path)
    answer_cache.hold_writes(True)
    try:
        open_document(path)
        time.sleep(0.3)  # a writer started now would have had time to begin
        assert not (saved.entry_for(path, None) / "manifest.json").exists()
    finally:
        answer_cache.hold_writes(False)
    cache.start_held_writes_beside()  # the first frame: the held writes start, the view's among them
    cache.wait_for_writers()
    assert (_saved(path) / "manifest.json").exists()

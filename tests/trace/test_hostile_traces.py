"""Hand-made PyTorch-profiler traces and mutated exports with values at the extremes: durations that would
wrap int64 or run backwards, ids past 32 bits, nesting past the decoder's depth, other encodings, files
that are not traces, and a gzip that inflates a thousandfold. Each is read with a warning or refused in
one line; numbers are checked against a plain count of the same events."""

from __future__ import annotations

import gzip
import json
import zlib
from pathlib import Path

import numpy as np
import pytest

from graphscope.analysis.summary import summarize
from graphscope.cli import main
from graphscope.core.errors import NotAnExportError
from graphscope.trace import kineto_json, load_trace
from tests.conftest import FORKJOIN

DAY_NS = 86_400 * 10**9


def _event(name: str, cat: str, ts: float, dur: float, pid: int = 1, **args: object) -> dict:
    return {"ph": "X", "cat": cat, "name": name, "pid": pid, "tid": 2, "ts": ts, "dur": dur, "args": args}


def _trace(kernels: list[dict], pid: int = 1) -> dict:
    calls = [_event("cudaLaunchKernel", "cuda_runtime", 10 * i, 5, pid, correlation=i) for i in range(len(kernels))]
    return {"schemaVersion": 1, "traceEvents": calls + kernels}


def _kernel(i: int, dur: float, **args: object) -> dict:
    return _event("k", "kernel", 100 + 10 * i, dur, 0, correlation=i, device=0, stream=7, **args)


def _write(tmp_path: Path, trace: dict, name: str = "t.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(trace))
    return path


def test_durations_that_would_wrap_int64_count_as_zero_with_a_warning(tmp_path):
    """Three kernels of 4e15 us gave total_ns = -5.9e18 and "5e+09 s of replay"."""
    durations = [4e15, 4e15, 4e15, 3.5, 2.0]
    trace = load_trace(_write(tmp_path, _trace([_kernel(i, d) for i, d in enumerate(durations)])))
    plain = sum(round(d * 1000) for d in durations if 0 <= d * 1000 <= DAY_NS)  # the second way: 5,500 ns
    assert summarize(trace)["kernels"]["total_ns"] == plain == 5_500
    assert any(w.startswith("kernels: 3 rows last longer than a day") for w in trace.info.warnings)


def test_negative_kineto_durations_are_warned_about_as_the_sqlite_reader_does(tmp_path, export_copy):
    trace = load_trace(_write(tmp_path, _trace([_kernel(i, d) for i, d in enumerate((-5, -1, 4))])))
    assert summarize(trace)["kernels"]["total_ns"] == 4_000
    path, conn = export_copy(FORKJOIN)
    conn.execute("UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET end = start - 7 WHERE rowid IN (1, 2)")
    conn.commit()
    sqlite_warning = next(w for w in load_trace(path).info.warnings if w.startswith("kernels:"))
    assert sqlite_warning.replace("2 rows", "N rows") in [w.replace("2 rows", "N rows") for w in trace.info.warnings]


def test_a_day_long_kernel_in_an_export_is_kept_out_of_the_sum(export_copy):
    path, conn = export_copy(FORKJOIN)
    conn.execute("UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET end = start + ? WHERE rowid = 1", (2 * DAY_NS,))
    conn.commit()
    (expected,) = conn.execute("SELECT SUM(end - start) FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE rowid != 1").fetchone()
    trace = load_trace(path)
    assert summarize(trace)["kernels"]["total_ns"] == expected
    assert any(w.startswith("kernels: 1 rows last longer than a day") for w in trace.info.warnings)


def test_ids_past_32_bits_do_not_wrap(tmp_path):
    big = [_kernel(0, 4, grid=[2**31 + 1, 1, 1]), _kernel(1, 4)]
    big[0]["args"].update(device=2**31 + 5, stream=2**33)
    pid = 2**39 + 3  # shifted left by 24 for Nsight's thread key, it overflowed int64
    trace = load_trace(_write(tmp_path, _trace(big, pid=pid)))
    kernels = trace.kernels.take(np.argsort(trace.kernels.start))
    assert kernels.device.tolist() == [2**31 + 5, 0] and kernels.stream.tolist() == [2**33, 7]
    assert kernels.grid_x.tolist()[0] == 0  # beyond CUDA's grid: unknown, not wrapped to a negative
    assert pid in trace.processes.pid.tolist() and len(set(trace.threads.global_tid.tolist())) == len(trace.threads)
    assert any("launch dimensions beyond CUDA's" in w for w in trace.info.warnings)


def _deep(tmp_path: Path) -> Path:
    """A kernel whose args hold an object nested 5,000 deep (msgspec's limit is 1,000)."""
    text = json.dumps(_trace([_kernel(0, 4)]))
    nested = '{"x": ' * 5000 + "1" + "}" * 5000
    path = tmp_path / "deep.json"
    path.write_text(text.replace('"correlation": 0,', f'"deep": {nested}, "correlation": 0,', 1))
    return path


@pytest.mark.parametrize("command", ["summary", "export", "report", "dag"])
def test_args_nested_5000_deep_are_one_line_in_every_command(tmp_path, capsys, command):
    path = _deep(tmp_path)
    args = {
        "summary": ["summary", str(path)],
        "export": ["export", str(path), "-o", str(tmp_path / "o.json")],
        "report": ["report", str(path), str(path), "-o", str(tmp_path / "r.json")],
        "dag": ["dag", str(path)],
    }[command]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "nested too deeply to be a trace" in err and err.count("\n") == 1


@pytest.mark.parametrize("encoding", ["utf-8-sig", "utf-16", "utf-16-le", "utf-16-be", "utf-32"])
def test_json_with_a_byte_order_mark_or_in_utf16_is_read_as_json(tmp_path, encoding):
    trace = _trace([_kernel(i, 3 + i) for i in range(4)])
    plain = load_trace(_write(tmp_path, trace))
    path = tmp_path / f"{encoding}.json"
    path.write_bytes(json.dumps(trace).encode(encoding))
    other = load_trace(path)
    assert np.array_equal(other.kernels.end, plain.kernels.end) and len(other.api) == len(plain.api) == 4


@pytest.mark.parametrize("encoding", ["utf-8-sig", "utf-16"])
def test_a_gzip_of_json_with_a_byte_order_mark_is_read_as_json(tmp_path, encoding):
    trace = _trace([_kernel(i, 3 + i) for i in range(4)])
    path = tmp_path / "t.json.gz"
    path.write_bytes(gzip.compress(json.dumps(trace).encode(encoding)))
    assert len(load_trace(path).kernels) == 4


def test_text_that_is_not_valid_in_its_encoding_is_one_line(tmp_path, capsys):
    path = tmp_path / "bad16.json"
    path.write_bytes(b"\xff\xfe{\x00\x00\xd8\x00\x00")  # a lone high surrogate
    assert main(["summary", str(path)]) == 2
    err = capsys.readouterr().err
    assert "JSON text that is not valid UTF-16" in err and err.count("\n") == 1


@pytest.mark.parametrize(
    "start, kind",
    [(b"\x89PNG\r\n\x1a\n", "a PNG image"), (b"%PDF-1.7", "a PDF document"), (b"PK\x03\x04", "a ZIP archive")],
)
def test_a_picture_renamed_json_is_not_a_trace(tmp_path, capsys, start, kind):
    path = tmp_path / "trace.json"
    path.write_bytes(start + bytes(600))
    assert main(["summary", str(path)]) == 2
    err = capsys.readouterr().err
    assert f"trace.json: {kind}, not a trace" in err and "nsys-rep" not in err and err.count("\n") == 1


def _bomb(path: Path, inflated: int) -> None:
    """A gzip of one event whose name is `inflated` bytes of 'a': no '}, {' to cut at, ~1000x smaller."""
    pack = zlib.compressobj(9, zlib.DEFLATED, 31)
    with open(path, "wb") as out:
        out.write(pack.compress(b'{"traceEvents": [{"ph": "X", "cat": "kernel", "name": "'))
        block = b"a" * (1 << 20)
        for _ in range(inflated >> 20):
            out.write(pack.compress(block))
        out.write(pack.compress(b'", "ts": 1, "dur": 1}]}') + pack.flush())


def test_a_gzip_bomb_is_refused_without_being_inflated_whole(tmp_path, monkeypatch):
    monkeypatch.setattr(kineto_json, "WHOLE_LIMIT", 16 << 20)
    monkeypatch.setattr(kineto_json, "EVENT_LIMIT", 4 << 20)
    monkeypatch.setattr(kineto_json, "CHUNK_BYTES", 1 << 20)
    path = tmp_path / "bomb.json.gz"
    _bomb(path, 64 << 20)
    assert path.stat().st_size < (64 << 20) // 500
    read = []
    real = gzip.GzipFile.read

    def counted(self, size=-1):
        data = real(self, size)
        read.append(len(data))
        return data

    monkeypatch.setattr(gzip.GzipFile, "read", counted)
    with pytest.raises(NotAnExportError, match="not read: its events are not laid out for a read in chunks"):
        load_trace(path)
    assert max(read) <= 1 << 20 and sum(read) < 32 << 20  # a chunk at a time, never the whole 64 MB


def test_a_small_trace_in_one_piece_is_still_read_under_the_limit(tmp_path):
    path = tmp_path / "t.json"
    path.write_text(json.dumps(_trace([_kernel(0, 2)])).replace(", {", ",{"))  # no '}, {': one piece
    assert len(load_trace(path).kernels) == 1


def test_per_kernel_totals_past_int64_do_not_wrap():
    """A hostile file can hold 106,752 or more day-long kernels of one name: their int64 sum wraps."""
    from graphscope.analysis.kernel_stats import grouped_stats

    n = 120_000
    keys = np.zeros(n, np.int64)
    start = np.zeros(n, np.int64)
    end = np.full(n, DAY_NS, np.int64)
    stats = grouped_stats(keys, start, end)
    assert float(stats.total_ns[0]) == pytest.approx(n * DAY_NS) and float(stats.total_ns[0]) > 0
    assert int(np.add.reduce(end - start)) < 0  # the plain int64 sum wraps

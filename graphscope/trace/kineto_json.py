"""Streaming decode of a PyTorch-profiler (Kineto) trace: Chrome trace-event JSON, plain or gzip.

The file is read in chunks; each chunk's complete events (up to its last `}, {` between two events) are
decoded by msgspec into small typed structs holding only the fields graphscope reads, and handed on as
one batch, so at most one batch of events exists as objects at a time and the file is never held whole.
A cut that falls inside an event leaves that batch's JSON invalid, which msgspec refuses: the file is
then decoded in one piece instead, never misread. msgspec was chosen by measurement on the public
graph-replay trace (33 MB of JSON, 105,167 events): typed decode 0.34 s, orjson 0.42 s into dicts,
the standard json module 0.97 s, polars' read_json 1.19 s.
"""

from __future__ import annotations

import codecs
import gzip
import io
import re
import zlib
from pathlib import Path
from types import TracebackType
from typing import Any, Protocol, Self

import msgspec

from graphscope.core.errors import NotAnExportError

CHUNK_BYTES = 1 << 18
"""JSON read per batch. Measured, decoding into columns, the peak over the imports: HTA's 109k-event
eager trace 13 MB in 1 MiB chunks, 7.6 MB in 256 KiB, 6.1 MB in 128 KiB, at the same CPU time (8 MiB
chunks: 67 MB on the graph-replay trace); at 1.09M events 256 KiB took 2.6 s of CPU, 1 MiB 3.3 s and
128 KiB 2.7 s (more batches: the per-batch work of the columns). Freed buffers of a MiB or more stay
on the heap (glibc raises its mmap threshold to the largest block freed); smaller ones do not pile up."""
_BETWEEN = re.compile(rb"\}\s*,\s*\{")
_EVENTS_KEY = re.compile(rb'"traceEvents"\s*:\s*\[')
GZIP_MAGIC = b"\x1f\x8b"
WHOLE_LIMIT = 1 << 30
"""Most JSON the one-piece decode reads: a 3 MB gzip can inflate to 3 GB, and decoding that whole would
take several times it in memory. A compressed (or re-encoded) file is inflated once, chunk by chunk, to
count it before it is read whole."""
EVENT_LIMIT = 64 << 20
"""Most JSON the streamed decode holds while it looks for the end of an event (real events are under a
kilobyte; the largest seen, a Python stack, a few): beyond it the file is decoded in one piece or refused."""
_TEXT_BOMS = (  # longest first: a UTF-32 LE mark starts with UTF-16 LE's
    (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)
_FOREIGN = (  # what a file that is neither JSON nor SQLite most likely is, by its first bytes
    (b"\x89PNG\r\n\x1a\n", "a PNG image"),
    (b"\xff\xd8\xff", "a JPEG image"),
    (b"GIF8", "a GIF image"),
    (b"%PDF", "a PDF document"),
    (b"PK\x03\x04", "a ZIP archive"),
    (b"\x7fELF", "an executable (ELF)"),
    (b"BZh", "a bzip2 archive"),
    (b"\xfd7zXZ\x00", "an xz archive"),
    (b"\x28\xb5\x2f\xfd", "a zstd archive"),
    (b"<", "XML or HTML"),
)


Number = int | float | str | None  # writers differ (the public ROCm trace writes stream ids as text)


class Args(msgspec.Struct, gc=False):
    correlation: Number = None
    device: Number = None
    stream: Number = None
    context: Number = None
    grid: Any = None
    block: Any = None
    bytes: Number = None
    registers: Number = msgspec.field(default=None, name="registers per thread")
    shared: Number = msgspec.field(default=None, name="shared memory")
    graph_node: Number = msgspec.field(default=None, name="graph node id")  # core.events.node_id layout
    graph: Number = msgspec.field(default=None, name="graph id")
    # cpu_op with record_shapes, kept as raw JSON: decoded once per distinct value (trace/kineto.py)
    input_dims: msgspec.Raw = msgspec.field(default=msgspec.Raw(), name="Input Dims")
    input_type: msgspec.Raw = msgspec.field(default=msgspec.Raw(), name="Input type")


class Event(msgspec.Struct, gc=False):
    ph: str = ""
    cat: str | None = None
    name: str = ""
    pid: Number = None
    tid: Number = None
    ts: Number = 0.0
    dur: Number = 0.0
    args: Args | None = None


class Header(msgspec.Struct):
    schemaVersion: int | str | None = None
    deviceProperties: list[dict[str, Any]] = []
    distributedInfo: dict[str, Any] | None = None
    traceName: str | None = None
    baseTimeNanoseconds: int | None = None
    traceEvents: list[Event] = []


class Sink(Protocol):
    """Takes the events batch by batch (`reset` when a streamed decode starts again in one piece)."""

    def add(self, batch: list[Event]) -> None: ...
    def reset(self) -> None: ...


_EVENTS = msgspec.json.Decoder(list[Event])
_HEADER = msgspec.json.Decoder(Header)


def is_kineto(path: Path) -> bool:
    """Does the file look like trace-event JSON ('{' or '[', or gzip; UTF-8 with a byte-order mark, or
    UTF-16 or UTF-32 text, too) rather than SQLite? Asked before SQLite is tried."""
    try:
        with open(path, "rb") as handle:
            start = handle.read(64)
    except OSError:
        return False
    if start.startswith(GZIP_MAGIC):
        return True
    encoding, skip = _text_encoding(start)
    text = start[skip:].decode(encoding, "ignore") if encoding else start.decode("latin-1")
    return text.lstrip()[:1] in ("{", "[")


def foreign_kind(start: bytes) -> str | None:
    """What a file that is not SQLite seems to be by its first bytes ("a PNG image"), or None."""
    for magic, kind in _FOREIGN:
        if start.startswith(magic):
            return kind
    return None


def _text_encoding(start: bytes) -> tuple[str | None, int]:
    """The encoding its byte-order mark names and the mark's length; a UTF-16 text without a mark is
    told by its zero bytes ('{' as 7b 00). (None, 0): plain UTF-8 (or not text)."""
    for bom, encoding in _TEXT_BOMS:
        if start.startswith(bom):
            return encoding, len(bom)
    if len(start) >= 2 and start[1:2] == b"\x00" and start[:1] in (b"{", b"["):
        return "utf-16-le", 0
    if len(start) >= 2 and start[:1] == b"\x00" and start[1:2] in (b"{", b"["):
        return "utf-16-be", 0
    return None, 0


class _Stream(Protocol):
    """What the reader reads from: a file, a gzip stream, or _Utf8 over either."""

    def read(self, size: int = -1, /) -> bytes: ...
    def close(self) -> None: ...
    def __enter__(self) -> Self: ...
    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None: ...


class _Utf8(io.RawIOBase):
    """A text file in another encoding read as UTF-8 bytes (msgspec decodes UTF-8 only)."""

    def __init__(self, raw: _Stream, encoding: str) -> None:
        self._raw = raw
        self._decoder = codecs.getincrementaldecoder(encoding)()  # the mark (BOM) is read and dropped

    def read(self, size: int | None = -1, /) -> bytes:
        """UTF-8 of the text in the next `size` bytes of the file (all of it for -1)."""
        while True:
            data = self._raw.read(size if size is not None and size > 0 else -1)
            text = self._decoder.decode(data, final=not data)  # a character cut at the end waits for more
            if text or not data:
                return text.encode("utf-8", "surrogatepass")

    def readable(self) -> bool:
        return True

    def close(self) -> None:
        self._raw.close()
        super().close()


def _open(path: Path) -> _Stream:
    with open(path, "rb") as handle:
        start = handle.read(64)
    if start.startswith(GZIP_MAGIC):
        with gzip.open(path, "rb") as peek:  # the JSON inside may have a byte-order mark too
            encoding, _ = _text_encoding(peek.read(64))
        stream = gzip.open(path, "rb")  # noqa: SIM115 (the caller closes it)
        return stream if encoding is None else _Utf8(stream, encoding)
    encoding, _ = _text_encoding(start)
    if encoding is None:
        return open(path, "rb")
    return _Utf8(open(path, "rb"), encoding)


def decode(path: Path, sink: Sink) -> Header:
    """Hand every event to `sink`, batch by batch; return what the file says about itself. One clear
    error for a file that is not a complete trace-event JSON."""
    try:
        return _streamed(path, sink)
    except _Fallback:
        pass  # outside the handler: the streamed read's buffer is freed before the whole read starts
    except (OSError, EOFError, zlib.error) as exc:
        raise NotAnExportError(f"{path}: cannot be read as a PyTorch-profiler trace ({_reason(exc)})") from None
    except UnicodeDecodeError as exc:
        raise NotAnExportError(f"{path}: JSON text that is not valid {exc.encoding.upper()}") from None
    except RecursionError:  # msgspec's depth limit, in the events or the header
        raise NotAnExportError(f"{path}: nested too deeply to be a trace") from None
    sink.reset()
    return _whole(path, sink)


class _Fallback(Exception):
    """The streamed cut did not give whole events: decode the file in one piece."""


def _streamed(path: Path, sink: Sink) -> Header:
    with _open(path) as stream:
        buffer = stream.read(CHUNK_BYTES)
        found = _EVENTS_KEY.search(buffer)
        while found is None and len(buffer) <= EVENT_LIMIT:  # keys before the events longer than a chunk
            more = stream.read(CHUNK_BYTES)
            if not more:
                break
            buffer += more
            found = _EVENTS_KEY.search(buffer, max(0, len(buffer) - len(more) - 1024))
        if found is None:
            raise _Fallback
        head = buffer[: found.start()].rstrip().rstrip(b",")
        header = _decode_header(head + b"}" if head.lstrip().startswith(b"{") else b"{}")
        buffer = buffer[found.end() :]
        while True:
            more = stream.read(CHUNK_BYTES)
            if not more:
                break
            cut = _last_cut(buffer)
            if cut is None:
                if len(buffer) > EVENT_LIMIT:  # no end of an event in 64 MiB: one piece, or refused
                    raise _Fallback
                buffer += more
                continue
            sink.add(_decode_events(b"[" + buffer[: cut + 1].strip().lstrip(b",") + b"]"))
            buffer = buffer[buffer.index(b"{", cut + 1) :] + more
        end = _array_end(buffer)
        sink.add(_decode_events(b"[" + buffer[:end].strip().lstrip(b",") + b"]"))
        tail = buffer[end + 1 :].strip().lstrip(b",").strip()
        if tail and tail != b"}":
            _merge_trailer(header, b"{" + tail)
        return header


def _last_cut(buffer: bytes) -> int | None:
    """Index of the '}' that closes the last complete event in the last CHUNK_BYTES of `buffer` (one
    followed by ', {'). Searched in windows from the end, 64 KiB first, widened fourfold while it finds
    none: an event ends in the first window of any real trace, where a search of the whole buffer
    stepped through every event of it (53 ms of a 33 MB trace). Matches cannot overlap (each holds one
    '}'), so the last match of a window that holds one is the last of the buffer."""
    floor = max(0, len(buffer) - CHUNK_BYTES)
    return _last_match(_BETWEEN, buffer, floor)


def _last_match(pattern: re.Pattern[bytes], buffer: bytes, floor: int, group: int = 0) -> int | None:
    size = 1 << 16
    while True:
        low = max(floor, len(buffer) - size)
        found = None
        for found in pattern.finditer(buffer, low):  # noqa: B007 (the last one)
            pass
        if found is not None:
            return found.start(group)
        if low == floor:
            return None
        size *= 4


_ARRAY_END = re.compile(rb"[}\[]\s*(\])\s*[,}]")


def _array_end(buffer: bytes) -> int:
    """Index of the ']' that closes traceEvents: after an event (or the '[' of an empty array) and before
    the document's next key or its end; the last such one (keys after the array hold no events).
    Searched from the end in widening windows, as `_last_cut`."""
    end = _last_match(_ARRAY_END, buffer, 0, group=1)
    if end is None:
        raise _Fallback
    return end


def _decode_events(data: bytes) -> list[Event]:
    try:
        return _EVENTS.decode(data)
    except msgspec.DecodeError:  # ValidationError included: a cut inside an event, or a trailer's array
        raise _Fallback from None


def _decode_header(data: bytes) -> Header:
    try:
        return _HEADER.decode(data)
    except msgspec.DecodeError:
        raise _Fallback from None


def _merge_trailer(header: Header, data: bytes) -> None:
    try:
        trailer = _HEADER.decode(data)
    except msgspec.DecodeError:
        return  # keys after the events are optional (traceName, baseTimeNanoseconds)
    for key in ("traceName", "baseTimeNanoseconds", "distributedInfo", "schemaVersion"):
        if getattr(header, key) is None and getattr(trailer, key) is not None:
            setattr(header, key, getattr(trailer, key))


def _whole(path: Path, sink: Sink) -> Header:
    try:
        if _inflated_size(path) > WHOLE_LIMIT:
            raise NotAnExportError(
                f"{path}: not read: its events are not laid out for a read in chunks, and decoding it in one piece "
                f"would hold more than {WHOLE_LIMIT / (1 << 30):g} GiB of JSON (gzip: once inflated)"
            )
        with _open(path) as stream:
            data = stream.read(WHOLE_LIMIT + 1)
        header = _HEADER.decode(data)
    except (OSError, EOFError, zlib.error) as exc:
        raise NotAnExportError(f"{path}: cannot be read as a PyTorch-profiler trace ({_reason(exc)})") from None
    except RecursionError:
        raise NotAnExportError(f"{path}: nested too deeply to be a trace") from None
    except UnicodeDecodeError as exc:
        raise NotAnExportError(f"{path}: JSON text that is not valid {exc.encoding.upper()}") from None
    except msgspec.ValidationError as exc:
        raise NotAnExportError(f"{path}: JSON, but not a PyTorch-profiler trace ({_reason(exc)})") from None
    except msgspec.DecodeError as exc:
        raise NotAnExportError(f"{path}: not a complete JSON trace ({_reason(exc)})") from None
    sink.add(header.traceEvents)
    header.traceEvents = []
    return header


def _inflated_size(path: Path) -> int:
    """The bytes of JSON the file holds: its size, or for gzip (and other encodings) the count of a pass
    that inflates it a chunk at a time and stops past WHOLE_LIMIT (a bomb is never held whole)."""
    with _open(path) as stream:
        if isinstance(stream, io.BufferedReader):
            return path.stat().st_size
        total = 0
        while total <= WHOLE_LIMIT:
            chunk = stream.read(CHUNK_BYTES)
            if not chunk:
                break
            total += len(chunk)
        return total


def _reason(exc: BaseException) -> str:
    return " ".join(str(exc).split())[:200] or type(exc).__name__

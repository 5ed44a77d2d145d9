"""What `graphscope report` compares, from its arguments: one Source class per prefix, registered by it.

report FILE                          one trace (its default scope)
report FILE SCOPE_A SCOPE_B          two scopes of one trace (nvtx:NAME, nvtx:'eager_*', range:12ms:40ms)
report A B [--a SCOPE] [--b SCOPE]   two traces, each optionally scoped
report run:ID                        eager vs graph of a stored run (and its traces, if profiled)
report run:ID run:ID                 run vs run (graph mode of each; run:ID:eager picks the mode)
report tune:ID                       a tuning session: baseline vs best, in place and fresh capture
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Self

from graphscope.analysis.scope import Scope, TimeWindow, nvtx_scope, parse_window
from graphscope.analysis.summary import TraceAnalysis, analyze
from graphscope.core.errors import BadInputError
from graphscope.core.events import MODES
from graphscope.report.scopes import trace_sides
from graphscope.report.sides import Side, run_side, trace_side
from graphscope.trace import Trace, load_trace

if TYPE_CHECKING:  # sqlite-utils loads only when a session database is opened
    from graphscope.store.session_db import SessionStore


class Source:
    """One argument of `graphscope report`, parsed once. Subclasses with a `prefix` are registered by it;
    anything else names a trace file.

    What every source has: `prefix`, `text`, `label` and `parse`. What only some have is declared where it
    exists, and callers narrow first (mypy checks both): `path` on `TraceFile`, `scope(trace)` on the
    scopes (`SCOPES`), `load(session)` on the records of the session database (`StoredNumber`)."""

    prefix: ClassVar[str] = ""
    text: str

    @classmethod
    def parse(cls, text: str) -> Self:
        """The source `text` names, or BadInputError with one line saying how to write it."""
        raise NotImplementedError(cls.__name__)

    @property
    def label(self) -> str:
        return self.text


@dataclass(frozen=True)
class TraceFile(Source):
    text: str
    path: Path

    @classmethod
    def parse(cls, text: str) -> Self:
        path = Path(text)
        if not path.exists():
            raise BadInputError(f"{path}: no such file")
        return cls(text, path)

    @property
    def label(self) -> str:
        return self.path.name


@dataclass(frozen=True)
class NvtxSource(Source):
    """`nvtx:NAME`: every NVTX range named NAME (a glob such as 'eager_*'; NAME#k: the k-th only)."""

    prefix: ClassVar[str] = "nvtx:"
    text: str
    pattern: str

    @classmethod
    def parse(cls, text: str) -> Self:
        pattern = text[len(cls.prefix) :]
        if not pattern.strip():
            raise BadInputError(f"{text!r}: name the NVTX range (nvtx:NAME, or a glob such as nvtx:'eager_*')")
        return cls(text, pattern)

    @property
    def label(self) -> str:
        return self.pattern

    def scope(self, trace: Trace) -> Scope:
        return nvtx_scope(trace, self.pattern)


@dataclass(frozen=True)
class RangeSource(Source):
    """`range:START:END`: one window, times from the start of the trace (12ms:40ms)."""

    prefix: ClassVar[str] = "range:"
    text: str
    window: TimeWindow

    @classmethod
    def parse(cls, text: str) -> Self:
        return cls(text, parse_window(text[len(cls.prefix) :], text))

    @property
    def label(self) -> str:
        return f"range {self.text[len(self.prefix) :]}"

    def scope(self, trace: Trace) -> Scope:
        return self.window.scope(trace)


@dataclass(frozen=True)
class StoredNumber(Source):
    """`PREFIX:ID` of a record in the session database."""

    text: str
    number: int
    mode: str | None = None

    @classmethod
    def parse(cls, text: str) -> Self:
        parts = text[len(cls.prefix) :].split(":")
        if not parts[0].isdigit() or len(parts) > cls.max_parts or int(parts[0]) >= 1 << 63:
            raise BadInputError(f"{text!r}: write {cls.prefix}ID with the number graphscope printed{cls.hint}")
        mode = parts[1] if len(parts) > 1 else None
        if mode is not None and mode not in MODES:
            raise BadInputError(f"{text!r}: a run's mode is eager or graph")
        return cls(text, int(parts[0]), mode)

    max_parts: ClassVar[int] = 1
    hint: ClassVar[str] = ""

    def _stored(self, session: Path | None, fetch: str, noun: str) -> dict[str, Any]:
        """The session database's record (`SessionStore.<fetch>(number)`), or one line saying there is none."""
        store = _open_store(session)
        try:
            found = getattr(store, fetch)(self.number)
        finally:
            store.close()
        if found is None:
            raise BadInputError(f"{self.text}: no such {noun} in {store.path}")
        return found

    def load(self, session: Path | None) -> dict[str, Any]:
        """The stored record, or BadInputError: one line saying there is none."""
        raise NotImplementedError(type(self).__name__)


@dataclass(frozen=True)
class RunSource(StoredNumber):
    """`run:ID` (eager against graph of a stored run) or `run:ID:MODE`."""

    prefix: ClassVar[str] = "run:"
    max_parts: ClassVar[int] = 2
    hint: ClassVar[str] = " (run:ID:eager picks a mode)"

    def load(self, session: Path | None) -> dict[str, Any]:
        """The stored run with its traces (sides_for reads its measurements too)."""
        return self._stored(session, "run", "run")


@dataclass(frozen=True)
class TuneSource(StoredNumber):
    """`tune:ID`: a stored tuning session."""

    prefix: ClassVar[str] = "tune:"

    def load(self, session: Path | None) -> dict[str, Any]:
        """The stored session with its workload's path and every trial (report/tune_report.py)."""
        return self._stored(session, "tuning", "tuning session")


@dataclass(frozen=True)
class StoredPlan(StoredNumber):
    """`plan:ID`: a stored capture-size plan (its measurements too)."""

    prefix: ClassVar[str] = "plan:"
    hint: ClassVar[str] = " (or plan:demo, the shipped demo plan)"

    @classmethod
    def parse(cls, text: str) -> Self:
        return cls(text, 0) if text == "plan:demo" else super().parse(text)  # store/demo_plan.py

    def load(self, session: Path | None) -> dict[str, Any]:
        from graphscope.store.plan_record import check_plan

        if self.text == "plan:demo":
            from graphscope.store.demo_plan import load_demo_plan

            return load_demo_plan()
        found = self._stored(session, "plan", "plan")
        check_plan(found, self.text)  # an edited or damaged record: one line, never a traceback
        return found


SCOPES = (NvtxSource, RangeSource)
REGISTRY: dict[str, type[Source]] = {cls.prefix: cls for cls in (*SCOPES, RunSource, TuneSource, StoredPlan)}
USAGE = (
    "report takes FILE [SCOPE [SCOPE]], A B, run:ID [run:ID], tune:ID or plan:ID "
    "(a SCOPE is nvtx:NAME or range:START:END)"
)


def parse_source(text: str) -> Source:
    """The source an argument names: by its registered prefix, else a trace file."""
    for prefix, cls in REGISTRY.items():
        if text.startswith(prefix):
            return cls.parse(text)
    return TraceFile.parse(text)


def parse_scope_option(text: str | None, option: str) -> NvtxSource | RangeSource | None:
    """`--a` / `--b`: a scope source, or None."""
    if text is None:
        return None
    source = parse_source(text) if text.startswith(tuple(c.prefix for c in SCOPES)) else None
    if not isinstance(source, SCOPES):
        raise BadInputError(f"{option} {text!r}: a scope is nvtx:NAME or range:START:END")
    return source


def parse_stored(text: str) -> StoredNumber:
    """A record of the session database (run:ID, tune:ID, plan:ID), or one line saying how to write one."""
    source = parse_source(text)
    if not isinstance(source, StoredNumber):
        raise BadInputError(f"{text!r}: write run:ID, tune:ID or plan:ID with the number graphscope printed")
    return source


REPORT_COLUMNS = {"kernels": ("grid_x", "grid_y", "grid_z", "block_x", "block_y", "block_z")}
"""Read with the summary's columns, not after them: kernels are matched by launch configuration, and a
second scan of the kernel table cost 0.43 s a side on a 1M-kernel export."""


class Loaded:
    """Traces opened once per path (two scopes of one file read it once)."""

    def __init__(self) -> None:
        self.traces: dict[Path, tuple[Trace, TraceAnalysis]] = {}

    def trace(self, path: Path) -> tuple[Trace, TraceAnalysis]:
        key = Path(path).resolve()
        if key not in self.traces:
            trace = load_trace(key, columns=REPORT_COLUMNS)
            self.traces[key] = (trace, analyze(trace))
        return self.traces[key]

    def side(self, path: Path, scope: NvtxSource | RangeSource | Scope | None, label: str | None = None) -> Side:
        """A trace over a scope (None: its default, report/scopes.py: its steps, else the whole trace)."""
        opened = self.trace(path)
        if scope is None:
            side = trace_sides(opened)[0]
            if label:
                side.label = label
            return side
        if isinstance(scope, Scope):
            return trace_side(*opened, scope, label or Path(path).name)
        return trace_side(*opened, scope.scope(opened[0]), label or f"{Path(path).name} {scope.label}")

    def comparable(self, path_a: Path, path_b: Path) -> tuple[Side, Side | None]:
        """Two traces over like-for-like default scopes (report/scopes.py), saying how they were chosen."""
        if Path(path_a).resolve() == Path(path_b).resolve():  # one trace: its deferred columns load once
            opened = self.trace(path_a), self.trace(path_b)
        else:
            with ThreadPoolExecutor(max_workers=1) as pool:  # numpy's sorts release the GIL: two cores, two sides
                later = pool.submit(self.trace, path_b)
                opened = self.trace(path_a), later.result()
        return trace_sides(*opened)


def _open_store(session: Path | None) -> SessionStore:
    from graphscope.store.session_db import SessionStore  # sqlite-utils: loaded only for stored runs

    return SessionStore(session, read_only=True)


def sides_for(
    items: list[str], scope_a: str | None, scope_b: str | None, session: Path | None
) -> tuple[Side, Side | None]:
    """The two sides (the second None for a one-sided report)."""
    if not items or len(items) > 3:
        raise BadInputError(USAGE)
    sources = [parse_source(text) for text in items]
    option_a, option_b = parse_scope_option(scope_a, "--a"), parse_scope_option(scope_b, "--b")
    kinds = tuple(type(s) for s in sources)
    loaded = Loaded()
    if TuneSource in kinds or StoredPlan in kinds:  # each is reported on its own (report/scopes.py)
        raise BadInputError(USAGE)
    runs = [s for s in sources if isinstance(s, RunSource)]
    if len(runs) == len(sources) <= 2:
        store = _open_store(session)
        if len(runs) == 1:
            return _run_sides(store, loaded, runs[0], ("eager", "graph"))
        return _run_sides(store, loaded, runs[0], ("graph",))[0], _run_sides(store, loaded, runs[1], ("graph",))[0]
    first, rest = sources[0], sources[1:]
    if not isinstance(first, TraceFile):
        if isinstance(first, SCOPES):
            raise BadInputError(
                f"{items[0]!r} is a scope; name the trace it belongs to first (report FILE {items[0]} ...)"
            )
        raise BadInputError(USAGE)
    path = first.path
    scopes = [s for s in rest if isinstance(s, SCOPES)]
    if rest and len(scopes) == len(rest):
        a = loaded.side(path, scopes[0], scopes[0].label)
        b = loaded.side(path, scopes[1], scopes[1].label) if len(scopes) == 2 else None
        return a, b
    if not rest:
        b = loaded.side(path, option_b) if option_b is not None else None
        return loaded.side(path, option_a), b
    if len(rest) == 1 and isinstance(other := rest[0], TraceFile):
        if option_a is None and option_b is None:
            return loaded.comparable(path, other.path)
        return loaded.side(path, option_a), loaded.side(other.path, option_b)
    raise BadInputError(USAGE)


def _run_sides(
    store: SessionStore, loaded: Loaded, source: RunSource, modes: tuple[str, ...]
) -> tuple[Side, Side | None]:
    run = store.run(source.number)
    if run is None:
        raise BadInputError(f"{source.text}: no such run in {store.path}")
    if source.mode is not None:
        modes = (source.mode,)
    samples = store.measurements(run["id"])
    sides = []
    for mode in modes:
        if not any(s["mode"] == mode for s in samples):
            raise BadInputError(f"run {run['id']} has no {mode} measurements (its modes: {run['modes']})")
        trace = None
        stored = run["traces"].get(mode)
        if stored and Path(stored["sqlite"]).exists():
            trace = loaded.side(Path(stored["sqlite"]), None, f"run {run['id']} {mode} trace")
        sides.append(run_side(run, mode, samples, trace))
    return (sides[0], sides[1] if len(sides) > 1 else None)

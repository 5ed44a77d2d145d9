"""What `graphscope report` compares, from its arguments:

report FILE                          one trace (its default scope)
report FILE SCOPE_A SCOPE_B          two scopes of one trace (nvtx:NAME, nvtx:'eager_*', range:12ms:40ms)
report A B [--a SCOPE] [--b SCOPE]   two traces, each optionally scoped
report run:ID                        eager vs graph of a stored run (and its traces, if profiled)
report run:ID run:ID                 run vs run (graph mode of each; run:ID:eager picks the mode)
report tune:ID                       a tuning session: baseline vs best, in place and fresh capture
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from graphscope.analysis.scope import Scope, measured_scope, nvtx_scope, window_scope
from graphscope.analysis.summary import TraceAnalysis, analyze
from graphscope.core.errors import BadInputError
from graphscope.report.compare import FORMAT
from graphscope.report.sides import Side, run_side, trace_side
from graphscope.trace import Trace, load_trace

if TYPE_CHECKING:  # sqlite-utils loads only when a session database is opened
    from graphscope.store.session_db import SessionStore

SCOPE_PREFIXES = ("nvtx:", "range:")


def is_scope(text: str) -> bool:
    return text.startswith(SCOPE_PREFIXES)


def scope_of(trace: Trace, text: str | None) -> Scope | None:
    """`nvtx:NAME` / `range:START:END` in a trace; None: its default (graphscope's measured repetitions)."""
    if text is None:
        return measured_scope(trace)
    if text.startswith("nvtx:"):
        return nvtx_scope(trace, text[5:])
    if text.startswith("range:"):
        return window_scope(trace, text[6:])
    raise BadInputError(f"{text!r}: a scope is nvtx:NAME or range:START:END")


class Loaded:
    """Traces opened once per path (two scopes of one file read it once)."""

    def __init__(self) -> None:
        self.traces: dict[Path, tuple[Trace, TraceAnalysis]] = {}

    def trace(self, path: Path) -> tuple[Trace, TraceAnalysis]:
        key = Path(path).resolve()
        if key not in self.traces:
            trace = load_trace(key)
            self.traces[key] = (trace, analyze(trace))
        return self.traces[key]

    def side(self, path: Path, scope_text: str | None, label: str | None = None) -> Side:
        trace, analysis = self.trace(path)
        scope = scope_of(trace, scope_text)
        name = label or (f"{Path(path).name} {scope_text}" if scope_text else Path(path).name)
        return trace_side(trace, analysis, scope, name)


def _open_store(session: Path | None) -> SessionStore:
    from graphscope.store.session_db import SessionStore  # sqlite-utils: loaded only for stored runs

    return SessionStore(session)


def sides_for(
    items: list[str], scope_a: str | None, scope_b: str | None, session: Path | None
) -> tuple[Side, Side | None] | dict[str, Any]:
    """The two sides (the second None for a one-sided report), or a finished tuning report."""
    if not items or len(items) > 3:
        raise BadInputError("report takes one to three sources: FILE [SCOPE SCOPE], A B, run:ID or tune:ID")
    loaded = Loaded()
    if items[0].startswith("tune:"):
        return tuning_report(_open_store(session), _number(items[0]))
    if items[0].startswith("run:"):
        store = _open_store(session)
        if len(items) == 1:
            return _run_sides(store, loaded, items[0], ("eager", "graph"))
        return _run_sides(store, loaded, items[0], ("graph",))[0], _run_sides(store, loaded, items[1], ("graph",))[0]
    if len(items) == 3 or (len(items) == 2 and is_scope(items[1])):
        scopes = items[1:] + [None] * (3 - len(items))
        path = _existing(items[0])
        a = loaded.side(path, scopes[0], scopes[0][5:] if scopes[0] else None)
        b = loaded.side(path, scopes[1], scopes[1][5:] if scopes[1] else None) if scopes[1] else None
        return a, b
    path_a = _existing(items[0])
    if len(items) == 1:
        if scope_b is not None:
            return loaded.side(path_a, scope_a), loaded.side(path_a, scope_b)
        return loaded.side(path_a, scope_a), None
    return loaded.side(path_a, scope_a), loaded.side(_existing(items[1]), scope_b)


def _existing(text: str) -> Path:
    path = Path(text)
    if is_scope(text):
        raise BadInputError(f"{text!r} is a scope; name the trace it belongs to first (report FILE {text} ...)")
    if not path.exists():
        raise BadInputError(f"{path}: no such file")
    return path


def _number(text: str) -> int:
    value = text.split(":")[1]
    if not value.isdigit():
        raise BadInputError(f"{text!r}: write run:ID or tune:ID with a number")
    return int(value)


def _run_sides(store: SessionStore, loaded: Loaded, text: str, modes: tuple[str, ...]) -> tuple[Side, Side | None]:
    run = store.run(_number(text))
    if run is None:
        raise BadInputError(f"{text}: no such run in {store.path}")
    parts = text.split(":")
    if len(parts) == 3:
        modes = (parts[2],)
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


def tuning_report(store: SessionStore, tuning_id: int) -> dict[str, Any]:
    """A tuning session in the report schema: baseline vs best (in place, and with fresh captures)."""
    import datetime as dt
    import json

    tuning = store.tuning(tuning_id)
    if tuning is None:
        raise BadInputError(f"tune:{tuning_id}: no such tuning session in {store.path}")
    trials = tuning["trials"]
    summary = json.loads(tuning["summary"]) if tuning.get("summary") else {}

    def per_step(trial: dict[str, Any] | None) -> dict[str, Any]:
        if not trial or trial.get("median_ns") is None:
            return {}
        stats = {
            "n": trial["reps"],
            "median": trial["median_ns"],
            "ci_low": trial["ci_low_ns"],
            "ci_high": trial["ci_high_ns"],
        }
        return {"replay_ns": stats}

    fresh = [t for t in trials if t["how"] == "fresh-capture"]
    baseline = trials[0] if trials else None
    best_config = tuning.get("best")
    best = next((t for t in trials[1:] if t["config"] == best_config and t["how"] == "in-place"), baseline)
    side = lambda label, trial: {  # noqa: E731
        "label": label,
        "kind": "tuning",
        "source": str(tuning["path"]),
        "scope": None,
        "steps": (trial or {}).get("reps") or 0,
        "per_step": per_step(trial),
        "verdict": None,
    }
    rows = []
    for trial in trials:
        config = json.loads(trial["config"]).get("blocks", {})
        rows.append(
            {
                "site": trial["site"],
                "block": json.loads(trial["block"]) if trial["block"] else None,
                "config": config,
                "how": trial["how"],
                "median_ns": trial["median_ns"],
                "ci_low_ns": trial["ci_low_ns"],
                "ci_high_ns": trial["ci_high_ns"],
                "reps": trial["reps"],
                "status": trial["status"],
                "reason": trial["reason"],
            }
        )
    metrics = {}
    if baseline and best and baseline.get("median_ns") and best.get("median_ns"):
        metrics["replay_ns"] = {
            "a_median": baseline["median_ns"],
            "b_median": best["median_ns"],
            "saved": baseline["median_ns"] - best["median_ns"],
        }
    return {
        "format": FORMAT,
        "title": f"tuning session {tuning_id}: {Path(tuning['path']).name} ({tuning['strategy']})",
        "created": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "a": side("baseline (in place)", baseline),
        "b": side("best (in place)", best),
        "comparison": {"metrics": metrics, "verdicts": {"gain": summary.get("conclusion", "not finished")}},
        "kernels": [],
        "tuning": {
            "status": tuning.get("status"),
            "summary": summary,
            "trials": rows,
            "fresh_captures": [per_step(t).get("replay_ns") for t in fresh],
        },
        "notes": [],
    }

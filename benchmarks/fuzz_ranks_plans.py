"""Hostile rank folders and hostile plans; benchmarks/fuzz_inputs.py's companion, in its style.

Rank folders, built from the two shipped ranks of a 128-rank job (HTA's sampled rank 0 and 1) and copies of
tests/data exports, each through `summary FOLDER` and `summary FOLDER --json` (its JSON strict) and
`report FOLDER -o r.html`, in this process on the serial job (ranks/job.py analyse_serially: the same reader,
numbering and combining as on Dask):
  duplicates    one rank twice (copies, a hard link, a symlink), every rank twice
  world sizes   distributedInfo world_size 0, -1, 2**31, 10**9, 2**63, 1e308, NaN, text, null, a list;
                ranks disagreeing on it; a rank beyond the world; rank numbers negative, huge, text
  mixed jobs    a rank of another job (the 2-rank NCCL trace), an Nsight export beside PyTorch traces,
                another process group
  far apart     one rank's times moved by a second, a day, 11 days, 2**53 us, negative
  not files     symlink loops, dangling symlinks, FIFOs and folders named *.json beside the ranks
  damaged       a rank empty, truncated (JSON and gzip), binary, a picture renamed, every rank damaged
  many          1,000 and 3,000 tiny ranks of one job (`--many`), 2,000 empty ones
  names         names with a newline, ESC, 250 characters (fresh processes, on Dask with one worker, as
                are a FIFO, a symlink loop and a name of bytes that are not UTF-8)
Plans (no GPU: a workload whose per-size measurements are recorded, as in tests/plan), each through
`plan plan:ID --json`, `plan WORKLOAD --traffic F` and `report plan:ID -o p.html`:
  traffic       counts NaN, inf, -1, 1e308, 1e400, text; sizes 0, -1, 2**31, 2**63, above every measured
                size; empty, binary, UTF-16, one million lines
  stored plans  every number of a stored plan record set to NaN, Infinity, -1, 2**31-1, 1e308, 2**64, text, null
                (one at a time), the record not JSON, a JSON list, empty
  plan ids      plan:ID of a missing, zero, negative, huge, text or empty id
  sessions      the session database truncated, zero-filled, byte-flipped, not SQLite, without its plans
                table, a folder, read-only
A case passes when every command ends in exit 0, or exit 2 with one line, within the time limit.

    python benchmarks/fuzz_ranks_plans.py [--many 3000] [--numbers 200]
"""

from __future__ import annotations

import argparse
import contextlib
import gzip
import io
import json
import os
import random
import shlex
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
import traceback
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from graphscope import cli as cli_module  # noqa: E402
from graphscope.cli import main as cli  # noqa: E402
from graphscope.plan import runner  # noqa: E402
from graphscope.ranks import job as rank_job  # noqa: E402
from tests.plan.test_plan_command import FakeSession  # noqa: E402

LIMIT_S = 120.0
KINETO = ROOT.parent / "shared" / "traces" / "kineto"
if not KINETO.is_dir():
    KINETO = Path("/work/shared/traces/kineto")
RANK0 = KINETO / "hta__sampled_rank0_of_128.json.gz"
RANK1 = KINETO / "hta__sampled_rank1_of_128.json.gz"
OTHER_JOB = KINETO / "hta__nccl_rank0_of_2.json.gz"
EXPORT = ROOT / "tests" / "data" / "h200_forkjoin_node.sqlite"
RAW_CONTROLS = ("\x1b", "\x07", "\r", "\x9b")
TOKENS = ("0", "-1", str(2**31), str(10**9), str(2**63), str(2**64), "1e308", "1e400", "NaN", "-Infinity",
          '"abc"', '""', "null", "true", "[]", "{}")  # fmt: skip


class Outcome:
    def __init__(self) -> None:
        self.cases: Counter[str] = Counter()
        self.failures: list[str] = []

    def add(self, family: str, detail: str, problem: str | None) -> None:
        self.cases[family] += 1
        if problem:
            self.failures.append(f"{family}: {detail[:70]!r} | {problem}")


class _Timeout(Exception):
    pass


def _alarm(signum: int, frame: object) -> None:
    raise _Timeout


def call(args: list[str], strict_json: bool = False) -> str | None:
    """One command in this process: None when it ends in exit 0, or exit 2 with one line, in time."""
    out, err = io.StringIO(), io.StringIO()
    previous = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(int(LIMIT_S))
    started = time.monotonic()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = cli(args)
    except _Timeout:
        return f"{args[0]}: no answer in {LIMIT_S:.0f} s"
    except BaseException as exc:  # a traceback the user would have seen
        frame = traceback.extract_tb(exc.__traceback__)[-1]
        where = f"{Path(frame.filename).name}:{frame.lineno}"
        return f"{args[0]}: {type(exc).__name__} at {where}: {str(exc)[:140]}"
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    text = err.getvalue()
    lines = [line for line in text.splitlines() if not line.startswith("graphscope: warning")]
    if code not in (0, 2) or (code == 2 and (len(lines) != 1 or "graphscope: error" not in lines[0])):
        return f"{args[0]}: exit {code}: {text[-200:]!r}"
    if any(c in out.getvalue() + text for c in RAW_CONTROLS):
        return f"{args[0]}: a terminal control printed raw"
    if code == 0 and strict_json:
        try:
            json.loads(out.getvalue(), parse_constant=lambda c: (_ for _ in ()).throw(ValueError(c)))
        except ValueError as exc:
            return f"{args[0]} --json: not strict JSON ({str(exc)[:80]})"
    if time.monotonic() - started > LIMIT_S:
        return f"{args[0]}: took {time.monotonic() - started:.0f} s"
    return None


def fresh(args: list[str], cwd: Path = ROOT) -> str | None:
    """One command in a fresh process (the real rank job on Dask, one worker)."""
    base = " ".join(shlex.quote(a) for a in [sys.executable, "-m", "graphscope", *args])
    env = {**os.environ, "PYTHONPATH": str(ROOT), "GRAPHSCOPE_NO_CACHE": "1", "QT_QPA_PLATFORM": "offscreen"}
    try:
        done = subprocess.run(["bash", "-c", base], capture_output=True, timeout=LIMIT_S, env=env, cwd=cwd)
    except subprocess.TimeoutExpired:
        return f"no answer in {LIMIT_S:.0f} s"
    err = done.stderr
    if done.returncode not in (0, 2):
        return f"exit {done.returncode}: {err[-200:]!r}"
    if done.returncode == 2 and (err.count(b"\n") != 1 or not err.startswith(b"graphscope")):
        return f"not one line: {err[-200:]!r}"
    if any(c.encode() in done.stdout + err for c in RAW_CONTROLS):
        return "a terminal control printed raw"
    return None


# ---------------------------------------------------------------- rank folders


def _doc(path: Path) -> dict:
    return json.loads(gzip.decompress(path.read_bytes()))


def _write(path: Path, document: dict | bytes, raw: dict[str, str] | None = None) -> None:
    """A rank file; `raw` replaces "@@key@@" strings by JSON tokens that json.dumps cannot spell."""
    data = document if isinstance(document, bytes) else json.dumps(document).encode()
    for key, token in (raw or {}).items():
        data = data.replace(f'"@@{key}@@"'.encode(), token.encode())
    path.write_bytes(gzip.compress(data, 1) if path.name.endswith(".gz") else data)


def _shifted(document: dict, by_us: float) -> dict:
    moved = json.loads(json.dumps(document))
    for event in moved["traceEvents"]:
        if isinstance(event, dict) and isinstance(event.get("ts"), int | float):
            event["ts"] = event["ts"] + by_us
    return moved


def _tiny(rank: int, world: int) -> dict:
    """A rank of a few events: two steps, a launch and its kernel in each."""
    events = []
    for step in range(2):
        at = 1_000_000 + step * 1_000 + rank % 7
        events += [
            {"ph": "X", "cat": "user_annotation", "name": f"ProfilerStep#{step}", "pid": 1, "tid": 1, "ts": at,
             "dur": 900},
            {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": at + 10,
             "dur": 5, "args": {"correlation": step + 1}},
            {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": at + 20, "dur": 300,
             "args": {"correlation": step + 1, "device": 0, "stream": 7}},
        ]  # fmt: skip
    return {"distributedInfo": {"backend": "nccl", "rank": rank, "world_size": world}, "traceEvents": events}


def rank_folders(base: Path, many: int) -> Iterator[tuple[str, str, Path]]:
    """(family, detail, folder) for each hostile rank folder, built under `base`."""
    r0, r1 = _doc(RANK0), _doc(RANK1)
    count = 0

    def folder(**files: dict | bytes | Path) -> Path:
        nonlocal count
        count += 1
        made = base / f"f{count}"
        made.mkdir()
        for name, what in files.items():
            target = made / name.replace("__", ".")
            if isinstance(what, Path):
                shutil.copyfile(what, target)
            else:
                _write(target, what)
        return made

    pair = {"rank0__json__gz": RANK0, "rank1__json__gz": RANK1}
    yield "baseline", "the two ranks", folder(**pair)
    yield "duplicates", "rank 0 twice (copies)", folder(a__json__gz=RANK0, b__json__gz=RANK0, c__json__gz=RANK1)
    made = folder(**pair)
    os.link(made / "rank0.json.gz", made / "rank0_copy.json.gz")
    yield "duplicates", "a hard link", made
    made = folder(**pair)
    (made / "zz.json.gz").symlink_to(made / "rank1.json.gz")
    yield "duplicates", "a symlink to a rank", made
    yield "duplicates", "every rank twice", folder(**pair, rank0b__json__gz=RANK0, rank1b__json__gz=RANK1)
    for token in TOKENS:
        for key in ("world_size", "rank"):
            mutated = json.loads(json.dumps(r1))
            mutated["distributedInfo"][key] = f"@@{key}@@"
            made = folder(rank0__json__gz=RANK0)
            _write(made / "rank1.json.gz", mutated, {key: token})
            yield "world sizes", f"rank 1's {key} = {token}", made
    mutated = json.loads(json.dumps(r1))
    mutated["distributedInfo"]["world_size"] = 64
    yield "world sizes", "ranks disagree (128, 64)", folder(rank0__json__gz=RANK0, rank1__json__gz=mutated)
    mutated = json.loads(json.dumps(r1))
    mutated["distributedInfo"].update(rank=5, world_size=2)
    yield "world sizes", "rank 5 of 2", folder(rank0__json__gz=json.loads(json.dumps(r0)), rank1__json__gz=mutated)
    mutated = json.loads(json.dumps(r1))
    mutated.pop("distributedInfo")
    yield "world sizes", "no distributedInfo, no rank in the name", folder(rank0__json__gz=RANK0, x__json__gz=mutated)
    yield "mixed jobs", "a rank of a 2-rank job", folder(**pair, rank2__json__gz=OTHER_JOB)
    yield "mixed jobs", "an Nsight export beside", folder(**pair, rank2__sqlite=EXPORT)
    yield "mixed jobs", "only Nsight exports", folder(rank0__sqlite=EXPORT, rank1__sqlite=EXPORT)
    mutated = json.loads(json.dumps(r1))
    mutated["distributedInfo"]["pg_config"] = "[{'pg_name': '0', 'pg_desc': 'default_pg', 'ranks': [7]}]"
    yield "mixed jobs", "another process group", folder(rank0__json__gz=RANK0, rank1__json__gz=mutated)
    for detail, by in (("a second", 1e6), ("a day", 8.64e10), ("11 days", 9.5e11), ("2**53 us", 2.0**53),
                       ("-1e15 us", -1e15), ("1e300 us", 1e300)):  # fmt: skip
        yield "far apart", detail, folder(rank0__json__gz=RANK0, rank1__json__gz=_shifted(r1, by))
    for detail, make in (
        ("a symlink loop", lambda d: (d / "loop.json").symlink_to(d / "loop.json")),
        ("a dangling symlink", lambda d: (d / "gone.json.gz").symlink_to(d / "nothing")),
        ("a FIFO", lambda d: os.mkfifo(d / "pipe.json")),
        ("a folder named .json", lambda d: (d / "dir.json").mkdir()),
        ("a folder named .sqlite", lambda d: (d / "dir.sqlite").mkdir()),
        ("a file without read permission", _unreadable),
    ):  # fmt: skip
        made = folder(**pair)
        make(made)
        yield "not files", detail, made
    plain = json.dumps(r1).encode()
    for detail, data in (("empty", b""), ("truncated JSON", plain[: len(plain) // 2]),
                         ("truncated gzip", gzip.compress(plain)[:5000]), ("binary", os.urandom(4096)),
                         ("a PNG renamed", b"\x89PNG\r\n\x1a\n" + bytes(600)), ("NUL bytes", bytes(10_000)),
                         ("no events", b'{"traceEvents": []}')):  # fmt: skip
        made = folder(rank0__json__gz=RANK0)
        (made / "rank1.json.gz").write_bytes(data if "gzip" in detail else gzip.compress(data))
        (made / "rank2.json").write_bytes(data)
        yield "damaged", detail, made
    made = folder()
    for name in ("rank0.json", "rank1.json.gz", "rank2.sqlite", "rank3.nsys-rep"):
        (made / name).write_bytes(b"")
    yield "damaged", "every rank empty", made
    for size in (1000, many):
        made = folder()
        for rank in range(size):
            _write(made / f"rank{rank}.json", _tiny(rank, size))
        yield "many", f"{size} tiny ranks", made
    made = folder()
    for rank in range(2000):
        (made / f"rank{rank}.json").write_bytes(b"")
    yield "many", "2000 empty ranks", made


def _unreadable(folder: Path) -> None:
    (folder / "rank2.json").write_bytes(b"{}")
    os.chmod(folder / "rank2.json", 0)


def rank_cases(base: Path, many: int, outcome: Outcome, serial: Callable) -> None:
    report = base / "report.html"
    for family, detail, folder in rank_folders(base, many):
        started = time.monotonic()
        problem = call(["summary", str(folder)]) or call(["summary", "--json", str(folder)], strict_json=True)
        if problem is None and family not in ("many",):
            report.unlink(missing_ok=True)
            problem = call(["report", str(folder), "-o", str(report)])
        outcome.add(family, f"{detail} ({time.monotonic() - started:.1f} s)", problem)
        shutil.rmtree(folder, ignore_errors=True)


def fresh_rank_cases(base: Path, outcome: Outcome) -> None:
    """Names and folder entries that only a real process shows: bytes that are not UTF-8, controls."""
    for detail, name in (("not UTF-8", b"rank1\xff.json.gz"), ("a newline", b"rank1\n.json.gz"),
                         ("ESC", b"rank1\x1b[31m.json.gz"), ("250 characters", b"rank1_" + b"x" * 235 + b".json.gz"),
                         ("a leading dash", b"-rank1.json.gz")):  # fmt: skip
        folder = base / f"names{len(outcome.cases)}"
        folder.mkdir()
        shutil.copyfile(RANK0, folder / "rank0.json.gz")
        shutil.copyfile(RANK1, os.path.join(bytes(folder), name))
        outcome.add("names (fresh, Dask)", detail, fresh(["summary", "--workers", "1", str(folder)]))
        shutil.rmtree(folder, ignore_errors=True)
    folder = base / "entries"
    folder.mkdir()
    shutil.copyfile(RANK0, folder / "rank0.json.gz")
    shutil.copyfile(RANK1, folder / "rank1.json.gz")
    os.mkfifo(folder / "pipe.json")
    (folder / "loop.json").symlink_to(folder / "loop.json")
    (folder / "d.json").mkdir()
    for detail, named in (("a FIFO, a loop, a folder", folder), ("the FIFO named", folder / "pipe.json")):
        outcome.add("not files (fresh, Dask)", detail, fresh(["summary", "--workers", "1", str(named)]))


# ---------------------------------------------------------------- plans


def _stored_plan(base: Path) -> tuple[Path, Path, int]:
    """A session database holding one plan made from recorded measurements (tests/plan's FakeSession)."""
    workload = base / "serve.py"
    workload.write_text("SIZES = [1, 2, 4, 8, 16, 32]\ndef setup(ctx):\n    return lambda ctx: None\n")
    traffic = base / "traffic.csv"
    traffic.write_text("size,count\n1,50\n3,30\n12,15\n30,5\n")
    session = base / "s.sqlite"
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = cli(["plan", str(workload), "--traffic", str(traffic), "--memory", "60MiB", "--session", str(session),
                    "--json"])  # fmt: skip
    assert code == 0, "the recorded plan could not be made"
    return workload, session, json.loads(out.getvalue())["plan_id"]


def traffic_cases(base: Path, workload: Path, session: Path, plan_id: int, outcome: Outcome) -> None:
    texts: dict[str, bytes] = {f"count {t}": f"size,count\n1,{t}\n4,10\n".encode() for t in
                               ("nan", "inf", "-inf", "-1", "1e308", "1e400", "1e16", "abc", "0", "")}  # fmt: skip
    texts |= {f"size {s}": f"size,count\n{s},5\n".encode() for s in ("0", "-1", str(2**31), str(2**63), "1.5",
                                                                       "4096", "1e3", "nan")}  # fmt: skip
    texts |= {
        "two 1e308 counts": b"1,1e308\n2,1e308\n",
        "every count 0": b"1,0\n2,0\n",
        "empty": b"",
        "binary": os.urandom(3000),
        "UTF-16": "size,count\n1,5\n".encode("utf-16"),
        "NUL bytes": b"1,5\x00\n",
        "a million lines": b"".join(b"%d,1\n" % (1 + i % 64) for i in range(1_000_000)),
        "only a header": b"size,count\n",
        "a JSON trace renamed": b"{not json",
    }
    for detail, data in texts.items():
        path = base / ("t.json" if "JSON" in detail else "t.csv")
        path.write_bytes(data)
        fresh_plan = ["plan", str(workload), "--memory", "60MiB"]
        replan = ["plan", f"plan:{plan_id}", "--memory", "8MiB"]
        problem = call([*fresh_plan, "--traffic", str(path), "--session", str(session), "--json"], True) or call(
            [*replan, "--traffic", str(path), "--session", str(session), "--json"], True
        )
        outcome.add("traffic", detail, problem)
        path.unlink()


def _leaves(value: object, path: tuple = ()) -> Iterator[tuple]:
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _leaves(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value[:3]):
            yield from _leaves(item, (*path, index))
    elif isinstance(value, int | float) and not isinstance(value, bool):
        yield path


def stored_plan_cases(base: Path, session: Path, plan_id: int, outcome: Outcome, rng: random.Random,
                      most: int) -> None:  # fmt: skip
    with sqlite3.connect(session) as db:
        original = db.execute("SELECT data FROM plans WHERE id = ?", (plan_id,)).fetchone()[0]
    record = json.loads(original)
    leaves = list(_leaves(record))
    rng.shuffle(leaves)
    tokens = ("NaN", "Infinity", "-Infinity", "-1", str(2**31 - 1), "1e308", str(2**64), '"x"', "null", "[]")
    report = base / "p.html"

    def store(text: str) -> None:
        with sqlite3.connect(session) as db:
            db.execute("UPDATE plans SET data = ? WHERE id = ?", (text, plan_id))

    cases = [(f"{'.'.join(map(str, leaf))} = {t}", leaf, t) for leaf in leaves[:most] for t in tokens]
    records = (("not JSON", "{broken"), ("a JSON list", "[1, 2]"), ("empty", ""), ("null", "null"), ("{}", "{}"))
    cases += [(f"record {what}", None, text) for what, text in records]
    for detail, leaf, token in cases:
        if leaf is None:
            store(token)
        else:
            mutated = json.loads(original)
            target = mutated
            for key in leaf[:-1]:
                target = target[key]
            target[leaf[-1]] = "@@TOKEN@@"
            store(json.dumps(mutated).replace('"@@TOKEN@@"', token))
        report.unlink(missing_ok=True)
        problem = call(["plan", f"plan:{plan_id}", "--memory", "8MiB", "--session", str(session), "--json"],
                       strict_json=True) or call(["report", f"plan:{plan_id}", "--session", str(session), "-o",
                                                  str(report)])  # fmt: skip
        outcome.add("stored plans", detail, problem)
    store(original)


def plan_id_cases(session: Path, outcome: Outcome) -> None:
    for text in ("plan:999", "plan:0", "plan:-1", "plan:abc", "plan:", "plan:1:2", f"plan:{2**63}",
                 f"plan:{2**63 - 1}", "plan:1e3", "plan:\x1b[31m", "plan:\u0661"):  # fmt: skip
        problem = call(["plan", text, "--memory", "8MiB", "--session", str(session)]) or call(
            ["report", text, "--session", str(session), "-o", str(session.parent / "p.md")])
        outcome.add("plan ids", text, problem)


def session_cases(base: Path, workload: Path, session: Path, plan_id: int, outcome: Outcome,
                  rng: random.Random) -> None:  # fmt: skip
    good = session.read_bytes()
    damaged = base / "damaged.sqlite"

    def dropped(path: Path) -> None:
        with sqlite3.connect(path) as db:
            db.execute("DROP TABLE plans")

    def renamed_column(path: Path) -> None:
        with sqlite3.connect(path) as db:
            db.execute("ALTER TABLE plans RENAME COLUMN data TO other")

    makers: dict[str, Callable[[Path], None]] = {
        "truncated to half": lambda p: p.write_bytes(good[: len(good) // 2]),
        "truncated to 100 bytes": lambda p: p.write_bytes(good[:100]),
        "zero-filled": lambda p: p.write_bytes(bytes(len(good))),
        "not SQLite": lambda p: p.write_bytes(b"hello\n" * 100),
        "empty": lambda p: p.write_bytes(b""),
        "without its plans table": dropped,
        "a plans table without data": renamed_column,
        "a folder": lambda p: p.mkdir(),
        "read-only": lambda p: os.chmod(p, 0o444),
    }
    for flip in range(20):
        makers[f"byte flips {flip}"] = lambda p, seed=flip: _flip(p, good, random.Random(seed))
    for detail, make in makers.items():
        for side in ("-wal", "-shm"):  # a stale log beside would replay the previous case
            Path(str(damaged) + side).unlink(missing_ok=True)
        if damaged.is_dir():
            damaged.rmdir()
        else:
            damaged.unlink(missing_ok=True)
        if detail != "a folder":
            damaged.write_bytes(good)
        make(damaged)
        before = damaged.read_bytes() if damaged.is_file() else None
        problem = (
            call(["plan", f"plan:{plan_id}", "--memory", "8MiB", "--session", str(damaged)])
            or call(["report", f"plan:{plan_id}", "--session", str(damaged), "-o", str(base / "p.md")])
            or call(["plan", str(workload), "--memory", "60MiB", "--session", str(damaged)])
        )
        # an empty file is a new database and a missing table is created: only damage must stay untouched
        untouched = detail.startswith(("truncated", "zero", "not SQLite"))
        if problem is None and untouched and before is not None and damaged.read_bytes() != before:
            problem = "the damaged database was written to"
        outcome.add("sessions", detail, problem)
        with contextlib.suppress(OSError):
            os.chmod(damaged, 0o644)


def _flip(path: Path, good: bytes, rng: random.Random) -> None:
    data = bytearray(good)
    for _ in range(rng.randint(1, 40)):
        data[rng.randrange(100, len(data))] = rng.randrange(256)
    path.write_bytes(bytes(data))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--many", type=int, default=3000, help="the largest set of tiny ranks")
    parser.add_argument("--numbers", type=int, default=60, help="numbers of a stored plan to mutate")
    parser.add_argument("--skip-fresh", action="store_true", help="no fresh processes (no Dask)")
    args = parser.parse_args()
    rng = random.Random(0)
    outcome = Outcome()
    started = time.monotonic()
    serial = rank_job.analyse_serially
    real_job = rank_job.analyse_job
    real_session = runner.WorkloadSession
    rank_job.analyse_job = lambda items, step=None, scheduler=None, workers=None, reader=None: {
        **serial(items, step), "engine": {"scheduler": "serial", "workers": 1, "files": 0, "seconds": 0.0}}
    runner.WorkloadSession = FakeSession
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        try:
            rank_cases(base, args.many, outcome, serial)
            workload, session, plan_id = _stored_plan(base)
            traffic_cases(base, workload, session, plan_id, outcome)
            stored_plan_cases(base, session, plan_id, outcome, rng, args.numbers)
            plan_id_cases(session, outcome)
            session_cases(base, workload, session, plan_id, outcome, rng)
        finally:
            rank_job.analyse_job = real_job
            runner.WorkloadSession = real_session
        if not args.skip_fresh:
            fresh_rank_cases(base, outcome)
    total = sum(outcome.cases.values())
    print(f"{total} hostile rank folders and plans in {(time.monotonic() - started) / 60:.1f} min")
    print("  " + ", ".join(f"{family} {count}" for family, count in outcome.cases.items()))
    print(f"  clean (exit 0, or exit 2 with one line): {total - len(outcome.failures)}")
    print(f"  failures: {len(outcome.failures)}")
    for line in outcome.failures[:60]:
        print("   ", line)


if __name__ == "__main__":
    del cli_module
    main()

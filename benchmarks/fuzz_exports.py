"""Thousands of mutated exports through `summary --json`, `dag --json`, `export` (streamed; its output must
parse as JSON) and the GUI's loader, and the
hostile environments around them (fake nsys tools, foreign session databases, closed streams).

Every mutation family of tests/mutations.py (rowid gaps, text and huge values where numbers belong,
NULLs, shadowed rowids, WITHOUT ROWID, name case, dropped columns, dangling and huge strings, WAL)
on every table of each export given, plus random byte flips. A case passes when it ends in exit 0
or in exit 2 with one line on stderr, within the time limit, and writes nothing beside the file.
Every `--screenshot-every`-th case also runs `graphscope open FILE --screenshot` in a fresh process.

Environment cases: a fake nsys that hangs or writes garbage (via GRAPHSCOPE_NSYS), session databases
of other programs or damaged ones (`report run:1 --session`), closed stdout or stderr, a full disk.

    python benchmarks/fuzz_exports.py [EXPORT ...] [--flips 200] [--screenshot-every 50]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import random
import shlex
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from graphscope.cli import main as cli  # noqa: E402
from graphscope.core.errors import GraphscopeError  # noqa: E402
from graphscope.view.document import open_document  # noqa: E402
from tests.mutations import Mutation, all_mutations  # noqa: E402

LIMIT_S = 60.0


def flips(seed: int, count: int) -> Mutation:
    """Random bytes overwritten in the file itself (applied after the connection closes)."""
    return Mutation("byte flips", f"{count} random bytes (seed {seed})", lambda conn: None)


def check(path: Path, written: Path) -> str | None:
    """None when every reader ends cleanly; else what went wrong. `written`: where the export goes."""
    for command in (["summary", "--json"], ["dag", "--json"], ["export", "--no-cache", "-o", str(written)]):
        out, err = io.StringIO(), io.StringIO()
        started = time.monotonic()
        written.unlink(missing_ok=True)
        try:
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                code = cli([*command, str(path)])
        except BaseException as exc:  # a traceback the user would have seen
            return f"{command[0]}: {type(exc).__name__}: {str(exc)[:120]}"
        text = err.getvalue()
        if code not in (0, 2) or (code == 2 and (text.count("\n") != 1 or "graphscope: error" not in text)):
            return f"{command[0]}: exit {code}: {text[:160]!r}"
        if time.monotonic() - started > LIMIT_S:
            return f"{command[0]}: took {time.monotonic() - started:.0f} s"
        if command[0] == "export" and code == 0:
            try:
                json.loads(written.read_text())
            except ValueError as exc:
                return f"export: not JSON ({exc})"
    try:
        open_document(path)
    except GraphscopeError:
        pass
    except BaseException as exc:
        return f"open: {type(exc).__name__}: {str(exc)[:120]}"
    return None


def screenshot(path: Path, folder: Path) -> str | None:
    png = folder / "shot.png"
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "XDG_CONFIG_HOME": str(folder / "config")}
    try:
        result = subprocess.run(
            [sys.executable, "-m", "graphscope", "open", str(path), "--screenshot", str(png)],
            capture_output=True,
            text=True,
            env=env,
            timeout=LIMIT_S,
        )
    except subprocess.TimeoutExpired:
        return "open --screenshot: hung"
    if result.returncode == 0 and png.exists():
        return None
    if result.returncode == 2 and result.stderr.count("\n") == 1:
        return None
    return f"open --screenshot: exit {result.returncode}: {result.stderr[-160:]!r}"


FOREIGN_DATABASES = {
    "another program's runs table": "CREATE TABLE runs (name TEXT, score REAL)",
    "tables named like graphscope's": "CREATE TABLE workloads (path TEXT); CREATE TABLE measurements (x REAL)",
    "unrelated tables": "CREATE TABLE recipes (name TEXT)",
}
FAKE_NSYS = {
    "nsys that hangs": "sleep 120",
    "nsys that writes garbage": 'echo garbage > "$out"',
    "nsys that fails": "echo 'ERROR: bad report'; exit 3",
    "nsys that writes nothing": "exit 0",
}


def _command(args: list[str], env: dict[str, str] | None = None, shell_tail: str = "") -> tuple[int, str, str]:
    base = " ".join(shlex.quote(a) for a in [sys.executable, "-m", "graphscope", *args])
    result = subprocess.run(
        ["bash", "-c", f"{base} {shell_tail}"], capture_output=True, text=True, env=env, timeout=LIMIT_S, cwd=ROOT
    )
    return result.returncode, result.stdout, result.stderr


def _one_line(code: int, err: str, expected: tuple[int, ...] = (2,)) -> str | None:
    if code not in expected:
        return f"exit {code}: {err[-160:]!r}"
    if code == 2 and (err.count("\n") != 1 or not err.startswith("graphscope")):
        return f"not one line: {err[-160:]!r}"
    return None


def environment_cases(folder: Path, export: Path) -> list[tuple[str, str | None]]:
    """Each hostile environment once: (what, None when clean, else the problem)."""
    found: list[tuple[str, str | None]] = []
    for name, body in FAKE_NSYS.items():
        case = folder / name.replace(" ", "-")
        case.mkdir()
        report = case / "run.nsys-rep"
        report.write_bytes(b"a report")
        nsys = case / "nsys"
        nsys.write_text(
            f'#!/bin/sh\nwhile [ $# -gt 1 ]; do case "$1" in -o) out="$2"; shift;; esac; shift; done\n{body}\n'
        )
        nsys.chmod(0o755)
        env = {**os.environ, "GRAPHSCOPE_NSYS": str(nsys), "GRAPHSCOPE_NSYS_TIMEOUT": "3"}
        code, _, err = _command(["summary", str(report)], env)
        problem = _one_line(code, err)
        if problem is None and (case / "run.sqlite").exists():
            problem = "a failed export took the report's place"
        found.append((name, problem))
    for name, schema in FOREIGN_DATABASES.items():
        database = folder / f"{name.replace(' ', '-').replace(chr(39), '')}.sqlite"
        with sqlite3.connect(database) as conn:
            conn.executescript(schema)
        before = database.read_bytes()
        code, _, err = _command(["report", "run:1", "--session", str(database), "-o", str(folder / "r.json")])
        problem = _one_line(code, err)
        if problem is None and (database.read_bytes() != before or Path(f"{database}-wal").exists()):
            problem = "the foreign database was altered"
        found.append((name, problem))
    for name, tail, expected in (
        ("closed stdout", ">&-", (0,)),
        ("closed stderr", "2>&-", (0,)),
        ("full disk behind stdout", "> /dev/full", (2,)),
    ):
        code, _, err = _command(["summary", "--json", str(export)], shell_tail=tail)
        found.append((name, _one_line(code, err, expected)))
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("exports", nargs="*", type=Path)
    parser.add_argument("--flips", type=int, default=200, help="byte-flip cases per export")
    parser.add_argument("--screenshot-every", type=int, default=50)
    args = parser.parse_args()
    exports = [path.resolve() for path in args.exports] or sorted((ROOT / "tests" / "data").glob("*.sqlite"))
    rng = random.Random(0)
    results: Counter[str] = Counter()
    failures: list[str] = []
    started = time.monotonic()
    with tempfile.TemporaryDirectory() as tmp, tempfile.TemporaryDirectory() as out:
        folder, written = Path(tmp), Path(out) / "trace.json"  # the Perfetto export, away from the file
        for source in exports:
            with sqlite3.connect(f"file:{source}?mode=ro", uri=True) as conn:
                cases = all_mutations(conn)
            cases += [flips(rng.randrange(1 << 30), rng.randint(1, 60)) for _ in range(args.flips)]
            for number, mutation in enumerate(cases):
                target = folder / source.name
                shutil.copy(source, target)
                conn = sqlite3.connect(target)
                try:
                    mutation.apply(conn)
                    conn.commit()
                except sqlite3.Error:
                    results["mutation refused by SQLite"] += 1
                    conn.close()
                    continue
                conn.close()
                if mutation.family == "byte flips":
                    data = bytearray(target.read_bytes())
                    picker = random.Random(mutation.detail)
                    for _ in range(int(mutation.detail.split()[0])):
                        data[picker.randrange(100, len(data))] = picker.randrange(256)
                    target.write_bytes(bytes(data))
                for side in folder.glob(source.name + "-*"):
                    side.unlink()
                before = sorted(p.name for p in folder.iterdir())
                problem = check(target, written)
                if problem is None and number % args.screenshot_every == 0:
                    problem = screenshot(target, folder)
                    results["screenshots"] += 1
                if problem is None and sorted(p.name for p in folder.iterdir() if p.name != "shot.png") != [
                    n for n in before if n != "shot.png"
                ]:
                    problem = "wrote files beside the export"
                results["cases"] += 1
                if problem:
                    failures.append(f"{source.stem[:30]} | {mutation} | {problem}")
                else:
                    results["clean"] += 1
        environment = environment_cases(folder, exports[0])
    minutes = (time.monotonic() - started) / 60
    print(f"{results['cases']} mutated exports from {len(exports)} real ones in {minutes:.1f} min")
    print(f"  clean (exit 0, or exit 2 with one line): {results['clean']}")
    print(f"  of them also opened with --screenshot in a fresh process: {results['screenshots']}")
    print(f"  mutations SQLite itself refused (not run): {results['mutation refused by SQLite']}")
    print(f"  failures: {len(failures)}")
    for line in failures[:40]:
        print("   ", line)
    clean = sum(problem is None for _, problem in environment)
    print(f"{len(environment)} hostile environments (fake nsys tools, foreign session databases, closed streams):")
    print(f"  clean: {clean}")
    for name, problem in environment:
        if problem:
            print(f"    {name}: {problem}")


if __name__ == "__main__":
    main()

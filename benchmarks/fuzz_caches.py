"""The cache attacked from outside (issue 41): every case primes the caches of a real trace (a kept answer,
cached columns, a saved view), changes something, and asks again. A case passes when every answer equals
the answer without the cache for the file as it is now, nothing runs or is written that should not be,
and no command ends in a traceback.

Families:
- identity: the trace edited in SQL or in its JSON's middle with its old time set back (`touch -r`), replaced
  by a same-size file copied over (`cp -p`) or renamed over (`tar x`, `rsync -a`), or only touched;
- damaged: a random cache file (answer, manifest, column, pickle, array) truncated, emptied, bit-flipped,
  given a garbled header or a tail, replaced by a folder or by a symlink to a file of the user's;
- planted: the cache folder another user's, group- or world-writable, or a symlink (one warning, caching
  off, nothing written); pickles that would run code; a symlink where a column will be written; an answer
  file without its digest;
- fake nsys: writes garbage, nothing, half an export, a good export then fails, hangs, exits non-zero, and two
  opens at once (exit 0 with the export's numbers, or exit 2 with one line; no partial file left anywhere).

    python benchmarks/fuzz_caches.py [--identity 60] [--damaged 200] [--seed 0]
"""

from __future__ import annotations

import argparse
import contextlib
import gzip
import io
import json
import os
import pickle
import random
import shutil
import sqlite3
import sys
import tempfile
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from graphscope.cli import main as cli  # noqa: E402
from graphscope.core import answer_cache, settings  # noqa: E402
from graphscope.core.cache_files import digest, write_checked, write_file  # noqa: E402
from graphscope.trace import cache  # noqa: E402
from graphscope.trace.nsysrep import export_to_sqlite  # noqa: E402
from graphscope.view import saved  # noqa: E402
from graphscope.view.document import open_document  # noqa: E402

DATA = ROOT / "tests" / "data"
SOURCES = [
    DATA / "h200_forkjoin_node.sqlite",
    DATA / "h200_seed_vecadd_node.sqlite",
    DATA / "h200_torch_mlp_node.sqlite",
]
KINETO = DATA / "kineto" / "h200_seed_vecadd_graph_profile_torch.json.gz"
LIMIT_S = 60.0
cache.detached = lambda work: work() or True  # the command's cache writes done before it returns


class Case:
    """One case's folder: its own cache home, the trace, a file of the user's that must stay as it is."""

    def __init__(self, root: Path, number: int, source: Path) -> None:
        self.folder = root / f"case{number}"
        self.folder.mkdir()
        self.cache_home = self.folder / "cache"
        os.environ["XDG_CACHE_HOME"] = str(self.cache_home)
        os.environ.pop("GRAPHSCOPE_NO_CACHE", None)
        settings._refused.clear()
        cache._opened.clear()
        answer_cache._asked.clear()
        cache._evicted = False
        self.path = self.folder / source.name.removesuffix(".gz")
        if source.suffix == ".gz":
            self.path.write_bytes(gzip.decompress(source.read_bytes()) + b" " * 100)
        else:
            shutil.copy(source, self.path)
        self.victim = self.folder / "victim.txt"
        self.victim.write_text("the user's file")
        self.marker = self.folder / "ran"

    def run(self, *argv: str) -> tuple[int, str, str]:
        out, err = io.StringIO(), io.StringIO()
        started, before = time.monotonic(), os.environ.get("GRAPHSCOPE_NO_CACHE")
        try:
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                code = cli(list(argv))
        except BaseException as exc:  # a traceback the user would have seen
            code, err = -1, io.StringIO(f"{type(exc).__name__}: {str(exc)[:160]}")
        finally:  # --no-cache sets it for the process
            os.environ.pop("GRAPHSCOPE_NO_CACHE", None) if before is None else None
        if time.monotonic() - started > LIMIT_S:
            return -1, "", f"took {time.monotonic() - started:.0f} s"
        return code, out.getvalue(), err.getvalue()

    def answers(self) -> dict[str, str]:
        """Every question's answer with the cache, as the user would see it."""
        found = {}
        for extra in ((), ("--top", "3")):
            code, out, err = self.run("summary", "--json", *extra, str(self.path))
            found[" ".join(extra) or "summary"] = out if code == 0 else f"exit {code}: {err[:160]}"
        try:
            document = open_document(self.path)
            found["window"] = json.dumps(document.summary, sort_keys=True, default=str)
        except BaseException as exc:
            found["window"] = f"{type(exc).__name__}: {str(exc)[:160]}"
        cache.wait_for_writers()
        return found

    def truth(self) -> dict[str, str]:
        os.environ["GRAPHSCOPE_NO_CACHE"] = "1"
        try:
            return self.answers()
        finally:
            os.environ.pop("GRAPHSCOPE_NO_CACHE", None)

    def problem(self, expected: dict[str, str] | None = None, stderr_lines: int = 0) -> str | None:
        got, expected = self.answers(), expected or self.truth()
        for question, answer in got.items():
            if answer != expected[question]:
                return f"{question}: {answer[:100]!r} instead of {expected[question][:100]!r}"
        if self.marker.exists() or self.victim.read_text() != "the user's file":
            return "code ran or the user's file changed"
        return None


def _edit_kernels(path: Path, rng: random.Random) -> None:
    with sqlite3.connect(path) as conn:
        conn.execute(
            'UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET "end" = start + ? * ("end" - start) WHERE rowid % ? = ?',
            (rng.randint(2, 5), rng.randint(1, 4), 0),
        )
    conn.close()


def identity_case(case: Case, rng: random.Random) -> tuple[str, str | None]:
    case.answers()
    stat = case.path.stat()
    if case.path.suffix == ".json":
        events = json.loads(case.path.read_text())
        kernels = [e for e in events["traceEvents"] if e.get("cat") == "kernel"]
        chosen = rng.choice(kernels[len(kernels) // 4 : 3 * len(kernels) // 4])
        chosen["dur"] = chosen["dur"] + rng.randint(1, 50)
        text = json.dumps(events)
        case.path.write_text(text + " " * (stat.st_size - len(text.encode())))
        how = "JSON edited in its middle, touch -r"
    else:
        how = rng.choice(["SQL edit, touch -r", "same-size copy over (cp -p)", "renamed over (tar x)", "touch -r only"])
        if how.startswith("SQL"):
            _edit_kernels(case.path, rng)
        elif how != "touch -r only":
            other = case.folder / "other.sqlite"
            shutil.copy(case.path, other)
            _edit_kernels(other, rng)
            shutil.copyfile(other, case.path) if how.startswith("same") else os.replace(other, case.path)
    os.utime(case.path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    if case.path.stat().st_size != stat.st_size:
        how += " (SQLite grew the file)"  # not a same-size case, still one whose answers must be the new ones
    return how, case.problem()


def _damage(file: Path, rng: random.Random, case: Case) -> str:
    data = file.read_bytes()
    kind = rng.choice(["truncate", "empty", "flip bits", "garble header", "append", "folder", "symlink"])
    if kind == "truncate":
        file.write_bytes(data[: rng.randrange(max(1, len(data)))])
    elif kind == "empty":
        file.write_bytes(b"")
    elif kind == "flip bits":
        flipped = bytearray(data)
        for _ in range(rng.randint(1, 8)):
            if flipped:
                flipped[rng.randrange(len(flipped))] ^= 1 << rng.randrange(8)
        file.write_bytes(bytes(flipped))
    elif kind == "garble header":
        garbled = bytearray(data)
        start = rng.randrange(min(len(garbled), 120) or 1)
        garbled[start : start + 16] = bytes(rng.randrange(256) for _ in range(16))
        file.write_bytes(bytes(garbled))
    elif kind == "append":
        file.write_bytes(data + b"\x00garbage")
    elif kind == "folder":
        file.unlink()
        file.mkdir()
    else:
        file.unlink()
        file.symlink_to(case.victim)
    return kind


def damaged_case(case: Case, rng: random.Random) -> tuple[str, str | None]:
    expected = case.truth()
    case.answers()
    files = sorted(f for f in case.cache_home.rglob("*") if f.is_file() and not f.is_symlink())
    if not files:
        return "nothing cached", "no cache files were written"
    file = rng.choice(files)
    kind = _damage(file, rng, case)
    return f"{kind}: {file.parent.name[:8]}/{file.name}", case.problem(expected)


def planted_folder_cases(root: Path, start: int) -> list[tuple[str, str | None]]:
    found = []
    makes = {
        "group-writable folder": lambda f: f.chmod(0o770),
        "world-writable folder": lambda f: f.chmod(0o777),
        "symlinked folder": lambda f: (f.rmdir(), f.symlink_to(f.parent.parent / "elsewhere")),
    }
    if hasattr(os, "getuid") and os.getuid() == 0:
        makes["another user's folder"] = lambda f: os.chown(f, 65534, 65534)
    for offset, (name, make) in enumerate(makes.items()):
        case = Case(root, start + offset, SOURCES[0])
        expected = case.truth()
        folder = case.cache_home / "graphscope"
        folder.mkdir(parents=True)
        (case.folder / "elsewhere").mkdir()
        make(folder)
        code, out, err = case.run("summary", "--json", str(case.path))
        problem = case.problem(expected)
        lines = err.strip().splitlines()
        if problem is None and (code != 0 or out != expected["summary"] or len(lines) != 1):
            problem = f"exit {code}, stderr {err[:160]!r}"
        written = [p for p in (case.folder / "elsewhere").rglob("*")] + [p for p in folder.rglob("*")]
        if problem is None and written:
            problem = f"wrote {written[0]}"
        found.append((name, problem))
    return found


def _calling(module: str, name: str, *args) -> bytes:
    call = b"c" + module.encode() + b"\n" + name.encode() + b"\n" + pickle.dumps(args, protocol=2)[2:-1] + b"R"
    return b"\x80\x04}(X\x08\x00\x00\x00analysis" + call + b"u."


def planted_pickle_cases(root: Path, start: int) -> list[tuple[str, str | None]]:
    found = []
    for offset, (module, name) in enumerate(
        [
            ("subprocess", "Popen"), ("graphscope.trace.nsysrep", "subprocess.Popen"), ("os", "system"),
            ("posix", "system"), ("builtins", "eval"), ("builtins", "exec"), ("numpy", "memmap"),
            ("graphscope.core.table", "Table.__init__.__globals__"), ("numpy", "save"), ("shutil", "rmtree"),
            ("graphscope.trace.cache", "drop"), ("pathlib", "Path.write_text"),
        ]
    ):  # fmt: skip
        case = Case(root, start + offset, SOURCES[0])
        args = {
            "Popen": (["touch", str(case.marker)],),
            "system": (f"touch {case.marker}",),
            "eval": (f"open({str(case.marker)!r}, 'w')",),
            "exec": (f"open({str(case.marker)!r}, 'w')",),
            "memmap": (str(case.victim), "uint8", "w+", 0, (4,)),
            "save": (str(case.victim), 0),
            "rmtree": (str(case.folder / "elsewhere"),),
            "drop": (str(case.victim),),
        }.get(name.split(".")[-1], (str(case.victim), "overwritten"))
        (case.folder / "elsewhere").mkdir()
        expected = case.truth()
        case.answers()
        entry = saved.entry_for(case.path, None)
        data = _calling(module, name, *args)
        write_file(entry / "parts.pickle", data)
        manifest = cache.read_manifest(entry)
        write_checked(entry / "manifest.json", json.dumps({**manifest, "parts": digest(data)}))
        problem = case.problem(expected)
        if problem is None and not (case.folder / "elsewhere").exists():
            problem = "a folder of the user's was removed"
        found.append((f"pickle calling {module}.{name}", problem))
    return found


def planted_file_cases(root: Path, start: int) -> list[tuple[str, str | None]]:
    found = []
    case = Case(root, start, SOURCES[0])
    expected = case.truth()
    case.answers()
    entry = cache.entry_for(case.path)
    (entry / "kernels.grid_x.npy").unlink(missing_ok=True)
    (entry / "kernels.grid_x.npy").symlink_to(case.victim)
    from graphscope.trace import load_trace

    load_trace(case.path, columns="all")
    cache.wait_for_writers()
    found.append(("a symlink where a column will be written", case.problem(expected)))
    case = Case(root, start + 1, SOURCES[0])
    expected = case.truth()
    case.answers()
    for answer in (case.cache_home / "graphscope" / "answers").iterdir():
        answer.write_text('{"kernels": {"count": 1}}')  # an answer without its digest line
    found.append(("answers without their digest", case.problem(expected)))
    return found


FAKE_NSYS = {
    "writes garbage": 'echo garbage > "$out"',
    "writes nothing": "exit 0",
    "writes half an export": 'head -c 20000 "{export}" > "$out"',
    "writes an export, then fails": 'cp "{export}" "$out"; echo "ERROR: late"; exit 1',
    "hangs briefly": "sleep 3",
    "exits non-zero": "echo 'ERROR: bad report' >&2; exit 3",
    "writes elsewhere": 'cp "{export}" "$out.other"',
    "works": 'cp "{export}" "$out"',
    "works slowly (two opens at once)": 'sleep 0.5; cp "{export}" "$out"',
}


def nsys_cases(root: Path, start: int) -> list[tuple[str, str | None]]:
    found = []
    for offset, (name, body) in enumerate(FAKE_NSYS.items()):
        case = Case(root, start + offset, SOURCES[0])
        expected = case.run("summary", "--json", "--no-cache", str(case.path))[1]
        report = case.folder / "run.nsys-rep"
        report.write_bytes(b"a report")
        nsys = case.folder / "nsys"
        nsys.write_text(
            '#!/bin/sh\nwhile [ $# -gt 1 ]; do case "$1" in -o) out="$2"; shift;; esac; shift; done\n'
            + body.format(export=case.path)
            + "\n"
        )
        nsys.chmod(0o755)
        os.environ["GRAPHSCOPE_NSYS"], os.environ["GRAPHSCOPE_NSYS_TIMEOUT"] = str(nsys), "1"
        try:
            if "two" in name:  # two exports of one report at once (threads: the command line's output is global)
                with ThreadPoolExecutor(2) as pool:
                    exports = [pool.submit(export_to_sqlite, report) for _ in range(2)]
                    errors = [f.exception() for f in exports]
                if any(errors):
                    found.append((f"nsys that {name}", f"an open failed: {errors}"))
                    continue
            results = [
                case.run("summary", "--json", str(report)),
                case.run("summary", "--json", "--no-cache", str(report)),
            ]
        finally:
            del os.environ["GRAPHSCOPE_NSYS"], os.environ["GRAPHSCOPE_NSYS_TIMEOUT"]
        problem = None
        for code, out, err in results:
            if code == 0 and json.loads(out)["kernels"] != json.loads(expected)["kernels"]:
                problem = "another export's numbers"
            elif code == 2 and (err.count("\n") != 1 or not err.startswith("graphscope")):
                problem = f"not one line: {err[:160]!r}"
            elif code not in (0, 2):
                problem = f"exit {code}: {err[:160]!r}"
            if name.startswith("works") and code != 0:
                problem = f"a good export refused: {err[:160]!r}"
        left = [p for p in case.folder.rglob("*") if "partial" in p.name or p.name.endswith(".tmp")]
        if problem is None and left:
            problem = f"left {left[0].name}"
        if problem is None and not name.startswith("works") and (case.folder / "run.sqlite").exists():
            problem = "a failed export took the report's place"
        found.append((f"nsys that {name}", problem))
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--identity", type=int, default=60)
    parser.add_argument("--damaged", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    started = time.monotonic()
    families: dict[str, list[tuple[str, str | None]]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        number = 0
        for family, count, run in (("identity", args.identity, identity_case), ("damaged", args.damaged, damaged_case)):
            for _ in range(count):
                source = rng.choice([*SOURCES, KINETO]) if family == "identity" else rng.choice(SOURCES)
                case = Case(root, number, source)
                number += 1
                families.setdefault(family, []).append(run(case, rng))
                shutil.rmtree(case.folder, ignore_errors=True)
        families["planted"] = [
            *planted_folder_cases(root, 10_000),
            *planted_pickle_cases(root, 10_100),
            *planted_file_cases(root, 10_200),
        ]
        families["fake nsys"] = nsys_cases(root, 10_300)
    total = sum(len(cases) for cases in families.values())
    print(f"{total} cache cases in {(time.monotonic() - started) / 60:.1f} min (seed {args.seed})")
    for family, cases in families.items():
        failed = [(what, problem) for what, problem in cases if problem]
        kinds = Counter(what.split(":")[0] for what, _ in cases)
        print(
            f"  {family}: {len(cases)} cases, {len(failed)} failed ({', '.join(f'{k} {n}' for k, n in kinds.items())})"
        )
        for what, problem in failed[:15]:
            print(f"    {what} | {problem}")


if __name__ == "__main__":
    main()

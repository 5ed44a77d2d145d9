"""Hostile inputs beyond SQLite exports: mutated PyTorch-profiler traces, outputs named over inputs, and
hostile environments; benchmarks/fuzz_exports.py's companion, in its style.

Kineto families, each case through `summary --json` (its JSON strict, no total negative), the text
`summary` (no terminal control character printed raw), `dag --json`, `export` (its output parsed as JSON)
and the GUI's loader, in this process:
  extreme numbers   every numeric field of a kernel, a copy and a runtime call (ts, dur, pid, tid, device,
                    stream, correlation, grid, block, bytes, registers) set to 0, -1, 2**31, 2**39, 2**63,
                    2**64, -2**63, 1e308, 4e15, 1e400 (infinity), NaN, text, null, true, [] and {}
  deep nesting      args, traceEvents and deviceProperties nested 100 to 100,000 deep
  encodings         UTF-8 with a BOM, UTF-16 (LE, BE, with and without a BOM), UTF-32, Latin-1 names
  structure         events that are not objects, a traceEvents that is not a list, trailing garbage,
                    empty and one-byte files, pictures and archives renamed .json
  names             control characters, 1 MB names, empty names
  truncation        the JSON and its gzip cut at random offsets
  byte flips        random bytes of the JSON overwritten
  gzip bomb         a 3 MB gzip of 3 GB (`--bomb-gb`), in a fresh process: exit 2, one line, its peak RSS
A case passes when every command ends in exit 0 or exit 2 with one line, within the time limit.

Outputs over inputs (fresh processes): `export -o`, `report -o`, `tune --save`, `run --session`,
`plan --session` and `open --screenshot` named as their own input (the same name, ./name, a symlink, a hard
link, a path through ..), a rank folder's trace as the report, outputs through a symlink to /dev/full and
into a folder that cannot be written: exit 2, one line, the input unchanged.

Hostile environments (fresh processes): file names with a leading dash, spaces, a newline, ESC, bytes that
are not UTF-8, 250 characters; a directory, a FIFO and a symlink loop named .json; stdout that is strict
ASCII or closed, stderr closed, stdout on a full disk, no HOME, a deleted working folder, a TMPDIR that is
not there: exit 0 or 2 with one line and no control character printed raw.

    python benchmarks/fuzz_inputs.py [TRACE.json.gz ...] [--flips 100] [--cuts 40] [--bomb-gb 3]
"""

from __future__ import annotations

import argparse
import contextlib
import gzip
import io
import json
import os
import random
import resource
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
import zlib
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from graphscope.cli import main as cli  # noqa: E402
from graphscope.core.errors import GraphscopeError  # noqa: E402
from graphscope.view.document import open_document  # noqa: E402

LIMIT_S = 60.0
RAW_CONTROLS = ("\x1b", "\x07", "\r", "\x9b")
NUMBERS = (
    "0", "-1", "2147483647", "2147483648", "4294967296", str(2**39), str(2**53 + 1), str(2**62), str(2**63 - 1),
    str(2**63), str(2**64), str(-(2**63)), str(-(2**63) - 1), "1e308", "-1e308", "4e15", "-4e15", "5e-324", "1e400",
    "-1e400", "NaN", "Infinity", '"12"', '"abc"', '""', "null", "true", "[]", "{}", "[1e400, 1, 1]",
)  # fmt: skip
"""Raw JSON tokens: 1e400 parses as infinity; NaN and Infinity are not JSON (a reader may refuse them)."""
FIELDS = ("ts", "dur", "pid", "tid", "args.device", "args.stream", "args.correlation", "args.grid", "args.block",
          "args.bytes", "args.registers per thread")  # fmt: skip
FOREIGN = {
    "PNG": b"\x89PNG\r\n\x1a\n" + bytes(600),
    "PDF": b"%PDF-1.7\n" + bytes(600),
    "ZIP": b"PK\x03\x04" + bytes(600),
    "ELF": b"\x7fELF" + bytes(600),
    "HTML": b"<!doctype html><html></html>",
}


class Case:
    def __init__(self, family: str, detail: str, data: bytes, name: str = "t.json") -> None:
        self.family, self.detail, self.data, self.name = family, detail, data, name


def _placeholder_set(event: dict, field: str, token: str) -> None:
    keys = field.split(".")
    target = event
    for key in keys[:-1]:
        target = target.setdefault(key, {})
        if not isinstance(target, dict):
            return
    target[keys[-1]] = f"@@{token}@@"


def _dumps(document: dict) -> bytes:
    """JSON text with each "@@token@@" string replaced by the raw token (numbers JSON cannot spell)."""
    text = json.dumps(document)
    while '"@@' in text:
        start = text.index('"@@')
        end = text.index('@@"', start + 3)
        text = text[:start] + json.loads('"' + text[start + 3 : end] + '"') + text[end + 3 :]
    return text.encode()


def kineto_cases(source: Path, rng: random.Random, flips: int, cuts: int) -> Iterator[Case]:
    document = json.loads(gzip.decompress(source.read_bytes()))
    events = document["traceEvents"]
    plain = json.dumps(document).encode()

    def first(cat: str) -> int | None:
        return next((i for i, e in enumerate(events) if isinstance(e, dict) and e.get("cat") == cat), None)

    targets = {cat: first(cat) for cat in ("kernel", "gpu_memcpy", "cuda_runtime")}
    for cat, index in targets.items():
        if index is None:
            continue
        for field in FIELDS:
            for token in NUMBERS:
                mutated = json.loads(plain)
                _placeholder_set(mutated["traceEvents"][index], field, token)
                yield Case("extreme numbers", f"{cat} {field} = {token}", _dumps(mutated))
    for token in ("4e15", "-5", "1e400", str(2**39), str(2**62)):  # every kernel at once: sums, not one row
        mutated = json.loads(plain)
        for event in mutated["traceEvents"]:
            if isinstance(event, dict) and event.get("cat") == "kernel":
                _placeholder_set(event, "dur", token)
        yield Case("extreme numbers", f"every kernel's dur = {token}", _dumps(mutated))
    for depth in (100, 999, 1001, 5000, 100_000):
        nested = ('{"x": ' * depth + "1" + "}" * depth).encode()
        index = targets["kernel"] or 0
        mutated = json.loads(plain)
        mutated["traceEvents"][index].setdefault("args", {})["deep"] = "@@NESTED@@"
        yield Case("deep nesting", f"args {depth} deep", _dumps(mutated).replace(b"NESTED", nested))
        lists = b'{"traceEvents": ' + b"[" * depth + b"]" * depth + b"}"
        yield Case("deep nesting", f"traceEvents {depth} deep", lists)
        props = b'{"deviceProperties": [' + nested + b'], "traceEvents": ' + json.dumps(events).encode() + b"}"
        yield Case("deep nesting", f"deviceProperties {depth} deep", props)
    text = plain.decode()
    for encoding in ("utf-8-sig", "utf-16", "utf-16-le", "utf-16-be", "utf-32"):
        yield Case("encodings", encoding, text.encode(encoding))
    yield Case("encodings", "gzip of UTF-16", gzip.compress(text.encode("utf-16")), "t.json.gz")
    latin = text.replace('"name": "', '"name": "\xe9\xff', 3).encode("latin-1", "replace")
    yield Case("encodings", "Latin-1 bytes in names", latin)
    for detail, data in (
        ("events that are numbers", b'{"traceEvents": [1, 2, 3]}'),
        ("traceEvents an object", b'{"traceEvents": {"ph": "X"}}'),
        ("trailing garbage", plain + b"\x00garbage{"),
        ("two documents", plain + plain),
        ("empty file", b""),
        ("one byte", b"{"),
        ("only whitespace", b" \n\t " * 100),
        ("a list of events", json.dumps(events).encode()),
        ("duplicate keys", plain.replace(b'"traceEvents"', b'"traceEvents": [], "traceEvents"', 1)),
        *((f"a {kind} renamed .json", data) for kind, data in FOREIGN.items()),
    ):
        yield Case("structure", detail, data)
    for detail, name in (
        ("terminal controls", "k\x1b[31mRED\x1b]52;c;aGk=\x07\rX\x9b\nVerdict"),
        ("1 MB name", "k" * (1 << 20)),
        ("empty name", ""),
        ("lone surrogate", "\ud800"),
    ):
        mutated = json.loads(plain)
        for event in mutated["traceEvents"]:
            if isinstance(event, dict) and event.get("cat") in ("kernel", "cpu_op"):
                event["name"] = name
        yield Case("names", detail, json.dumps(mutated).encode("utf-8", "surrogatepass"))
    packed = gzip.compress(plain)
    for _ in range(cuts):
        yield Case("truncation", "JSON cut", plain[: rng.randrange(1, len(plain))])
        yield Case("truncation", "gzip cut", packed[: rng.randrange(1, len(packed))], "t.json.gz")
    for _ in range(flips):
        data = bytearray(plain)
        for _ in range(rng.randint(1, 60)):
            data[rng.randrange(len(data))] = rng.randrange(256)
        yield Case("byte flips", f"{len(data)} bytes", bytes(data))


def _strict_json(text: str) -> object:
    def refuse(constant: str) -> None:
        raise ValueError(f"{constant} is not JSON")

    return json.loads(text, parse_constant=refuse)


def _negative_total(value: object) -> bool:
    if isinstance(value, dict):
        return any((k.endswith("total_ns") and isinstance(v, int | float) and v < 0) or _negative_total(v)
                   for k, v in value.items())  # fmt: skip
    if isinstance(value, list):
        return any(_negative_total(v) for v in value)
    return False


def check(path: Path, written: Path) -> str | None:
    """None when every reader ends cleanly; else what went wrong."""
    commands = (["summary", "--json"], ["summary"], ["dag", "--json"], ["export", "-o", str(written)])
    for command in commands:
        out, err = io.StringIO(), io.StringIO()
        started = time.monotonic()
        written.unlink(missing_ok=True)
        try:
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                code = cli([*command, "--no-cache", str(path)] if command[0] != "dag" else [*command, str(path)])
        except BaseException as exc:  # a traceback the user would have seen
            return f"{' '.join(command[:2])}: {type(exc).__name__}: {str(exc)[:120]}"
        text = err.getvalue()
        label = " ".join(command[:2])
        if code not in (0, 2) or (code == 2 and (text.count("\n") != 1 or "graphscope: error" not in text)):
            return f"{label}: exit {code}: {text[:160]!r}"
        if time.monotonic() - started > LIMIT_S:
            return f"{label}: took {time.monotonic() - started:.0f} s"
        if any(c in out.getvalue() + text for c in RAW_CONTROLS):
            return f"{label}: a terminal control printed raw"
        if code == 0 and command == ["summary", "--json"]:
            try:
                answer = _strict_json(out.getvalue())
            except ValueError as exc:
                return f"summary --json: not strict JSON ({exc})"
            if _negative_total(answer):
                return "summary --json: a negative total"
        if command[0] == "export" and code == 0:
            try:
                json.loads(written.read_bytes())
            except ValueError as exc:
                return f"export: not JSON ({exc})"
    try:
        open_document(path)
    except GraphscopeError:
        pass
    except BaseException as exc:
        return f"open: {type(exc).__name__}: {str(exc)[:120]}"
    return None


def _run(
    args: list[str], env: dict[str, str] | None = None, shell_tail: str = "", cwd: Path = ROOT
) -> tuple[int, bytes, bytes]:
    base = " ".join(shlex.quote(a) for a in [sys.executable, "-m", "graphscope", *args])
    environment = {**os.environ, "PYTHONPATH": str(ROOT), "GRAPHSCOPE_NO_CACHE": "1", "QT_QPA_PLATFORM": "offscreen"}
    try:
        result = subprocess.run(["bash", "-c", f"{base} {shell_tail}"], capture_output=True, timeout=LIMIT_S,
                                env={**environment, **(env or {})}, cwd=cwd)  # fmt: skip
    except subprocess.TimeoutExpired:
        return 124, b"", b"timed out"
    return result.returncode, result.stdout, result.stderr


def _clean(code: int, out: bytes, err: bytes, expected: tuple[int, ...] = (0, 2)) -> str | None:
    if code not in expected:
        return f"exit {code}: {err[-160:]!r}"
    if code == 2 and (err.count(b"\n") != 1 or not err.startswith(b"graphscope")):
        return f"not one line: {err[-160:]!r}"
    if any(c.encode() in out + err for c in RAW_CONTROLS):
        return "a terminal control printed raw"
    return None


def bomb_case(folder: Path, gigabytes: float) -> tuple[str, str | None]:
    path = folder / "bomb.json.gz"
    pack = zlib.compressobj(9, zlib.DEFLATED, 31)
    with open(path, "wb") as out:
        out.write(pack.compress(b'{"traceEvents": [{"ph": "X", "cat": "kernel", "name": "'))
        block = b"a" * (1 << 20)
        for _ in range(int(gigabytes * 1024)):
            out.write(pack.compress(block))
        out.write(pack.compress(b'", "ts": 1, "dur": 1}]}') + pack.flush())
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    started = time.monotonic()
    code, out, err = _run(["summary", str(path)])
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    what = (f"a {path.stat().st_size / 1e6:.1f} MB gzip of {gigabytes:g} GB: {time.monotonic() - started:.1f} s, "
            f"peak RSS {max(peak, before) / 1024:.0f} MB")  # fmt: skip
    problem = _clean(code, out, err, (2,) if gigabytes > 1 else (0, 2))  # past 1 GiB: refused
    if problem is None and peak > 1 << 20:  # kB: a gigabyte
        problem = "held a gigabyte"
    path.unlink()
    return what, problem


def output_cases(folder: Path) -> list[tuple[str, str | None]]:
    """Each output named as an input of its own command: refused in one line, the input unchanged."""
    kineto = ROOT / "tests" / "data" / "kineto" / "hta__triton_example.json.gz"
    found: list[tuple[str, str | None]] = []
    trace = folder / "t.json.gz"
    plain = folder / "t.json"
    workload = folder / "w.py"
    config = folder / "c.json"
    job = folder / "job"
    job.mkdir()
    for rank in range(3):
        shutil.copy(kineto, job / f"rank{rank}.json.gz")
    aliases: dict[str, Callable[[Path], Path]] = {
        "the same name": lambda p: p,
        "./name": lambda p: Path(os.path.relpath(p, ROOT)).parent / "." / p.name,
        "through ..": lambda p: p.parent / ".." / p.parent.name / p.name,
        "a symlink": lambda p: _link(p, "symlink"),
        "a hard link": lambda p: _link(p, "hard"),
    }
    commands: dict[str, tuple[Path, Callable[[Path], list[str]]]] = {
        "export -o": (trace, lambda out: ["export", str(trace), "-o", str(out)]),
        "report -o": (plain, lambda out: ["report", str(plain), "-o", str(out)]),
        "report A B -o B": (plain, lambda out: ["report", str(kineto), str(plain), "-o", str(out)]),
        "tune --save": (workload, lambda out: ["tune", str(workload), "--save", str(out)]),
        "tune --config C --save C": (
            config, lambda out: ["tune", str(workload), "--config", str(config), "--save", str(out)]
        ),
        "run --session": (workload, lambda out: ["run", str(workload), "--session", str(out)]),
        "plan --session": (workload, lambda out: ["plan", str(workload), "--session", str(out)]),
        "open --screenshot": (trace, lambda out: ["open", str(trace), "--screenshot", str(out)]),
    }  # fmt: skip
    for name, (victim, command) in commands.items():
        for alias, make in aliases.items():
            shutil.copy(kineto, trace)
            plain.write_bytes(gzip.decompress(kineto.read_bytes()))
            workload.write_text("def setup(ctx):\n    return lambda ctx: None\n")
            config.write_text("{}")
            before = victim.read_bytes()
            out = make(victim)
            if name == "open --screenshot" and alias in ("the same name", "./name", "through .."):
                continue  # a .png is asked for: only a link can name the trace as a picture
            if name == "open --screenshot":
                out = out.rename(out.with_suffix(".png")) if out != victim else out
            code, stdout, err = _run(command(out))
            problem = _clean(code, stdout, err, (2,))
            if problem is None and b"inputs" not in err:
                problem = f"refused for another reason: {err[-120:]!r}"
            if problem is None and victim.read_bytes() != before:
                problem = "the input was changed"
            found.append((f"{name} over {alias}", problem))
            for link in folder.glob("*link*"):
                link.unlink()
    code, out, err = _run(["report", str(job), "-o", str(job / "rank1.json.gz")])
    found.append(("report FOLDER -o a rank's trace", _clean(code, out, err, (2,))))
    full = folder / "full.json"
    full.symlink_to("/dev/full")
    for name, args in (("report -o /dev/full", ["report", str(kineto), "-o", str(full)]),
                       ("export -o /dev/full", ["export", str(kineto), "-o", str(full)])):  # fmt: skip
        code, out, err = _run(args)
        problem = _clean(code, out, err, (2,))
        if problem is None and (b"No space left" not in err or not full.is_symlink()):
            problem = f"not the full disk's line: {err[-120:]!r}"
        found.append((name, problem))
    for name, args in (("report into /proc", ["report", str(kineto), "-o", "/proc/r.json"]),
                       ("export into /proc", ["export", str(kineto), "-o", "/proc/t.json"]),
                       ("report into a missing folder", ["report", str(kineto), "-o", str(folder / "no" / "r.md")])):
        code, out, err = _run(args)
        found.append((name, _clean(code, out, err, (2,))))  # fmt: skip
    return found


def _link(path: Path, kind: str) -> Path:
    link = path.with_name(f"{kind}link{''.join(path.suffixes)}")
    link.unlink(missing_ok=True)
    if kind == "symlink":
        link.symlink_to(path)
    else:
        os.link(path, link)
    return link


def environment_cases(folder: Path) -> list[tuple[str, str | None]]:
    export = ROOT / "tests" / "data" / "h200_forkjoin_node.sqlite"
    found: list[tuple[str, str | None]] = []
    names = {
        "a leading dash": "-x.sqlite",
        "spaces": " x y .sqlite",
        "a newline": "x\ny.sqlite",
        "ESC and BEL": "x\x1b]52;c;aGk=\x07.sqlite",
        "bytes that are not UTF-8": os.fsdecode(b"x\xff\xfe.sqlite"),
        "250 characters": "x" * 243 + ".sqlite",
    }
    for what, name in names.items():
        path = folder / name
        shutil.copy(export, path)
        p = str(path)
        for label, args in (
            ("summary", ["summary", "--", p]),
            ("summary --json", ["summary", "--json", "--", p]),
            ("export", ["export", "-o", str(folder / "o.json"), "--", p]),
            ("report", ["report", "-o", str(folder / "r.md"), "--", p, p]),
            ("dag", ["dag", "--", p]),
        ):
            code, out, err = _run(args)
            found.append((f"{what}: {label}", _clean(code, out, err)))
        path.unlink()
    odd = {"a directory named .json": lambda p: p.mkdir(), "a FIFO named .json": lambda p: os.mkfifo(p),
           "a symlink loop named .json": lambda p: p.symlink_to(p)}  # fmt: skip
    for what, make in odd.items():
        path = folder / "odd.json"
        make(path)
        code, out, err = _run(["summary", str(path)])
        found.append((what, _clean(code, out, err, (2,))))
        if path.is_dir() and not path.is_symlink():
            path.rmdir()
        else:
            path.unlink()
    kineto = ROOT / "tests" / "data" / "kineto" / "hta__triton_example.json.gz"
    hostile = folder / "names.json"
    document = json.loads(gzip.decompress(kineto.read_bytes()))
    for event in document["traceEvents"]:
        if isinstance(event, dict) and event.get("cat") == "kernel":
            event["name"] = "k\x1b[31mé名\x07\r"
    hostile.write_text(json.dumps(document))
    gone = folder / "gone"
    gone.mkdir()
    for what, env, tail, cwd, expected in (
        ("stdout strict ASCII", {"PYTHONIOENCODING": "ascii"}, "", ROOT, (0,)),
        ("LANG=C", {"LANG": "C", "LC_ALL": "C"}, "", ROOT, (0,)),
        ("closed stdout", {}, ">&-", ROOT, (0,)),
        ("closed stderr", {}, "2>&-", ROOT, (0,)),
        ("closed stdin", {}, "<&-", ROOT, (0,)),
        ("stdout on a full disk", {}, "> /dev/full", ROOT, (2,)),
        ("no HOME", {"HOME": ""}, "", ROOT, (0,)),
        ("a TMPDIR that is not there", {"TMPDIR": str(folder / "missing")}, "", ROOT, (0,)),
        ("a deleted working folder", {}, "", gone, (0, 2)),
    ):
        if cwd == gone:
            shutil.rmtree(gone, ignore_errors=True)
            gone.mkdir()
            code, out, err = _run_in_deleted(gone, ["summary", str(hostile)])
        else:
            code, out, err = _run(["summary", str(hostile)], env, tail, cwd)
        found.append((what, _clean(code, out, err, expected)))
    return found


def _run_in_deleted(folder: Path, args: list[str]) -> tuple[int, bytes, bytes]:
    base = " ".join(shlex.quote(a) for a in [sys.executable, "-m", "graphscope", *args])
    script = f"cd {shlex.quote(str(folder))} && rmdir {shlex.quote(str(folder))} && {base}"
    environment = {**os.environ, "PYTHONPATH": str(ROOT), "GRAPHSCOPE_NO_CACHE": "1"}
    result = subprocess.run(["bash", "-c", script], capture_output=True, timeout=LIMIT_S, env=environment)
    return result.returncode, result.stdout, result.stderr


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("traces", nargs="*", type=Path)
    parser.add_argument("--flips", type=int, default=100, help="byte-flip cases per trace")
    parser.add_argument("--cuts", type=int, default=40, help="truncations per trace (JSON and gzip each)")
    parser.add_argument("--bomb-gb", type=float, default=3.0, help="the gzip bomb's inflated size (0: none)")
    args = parser.parse_args()
    kineto = ROOT / "tests" / "data" / "kineto"
    traces = [p.resolve() for p in args.traces] or [kineto / "h200_torch_linear_replay.json.gz",
                                                     kineto / "hta__amd_mi250_minitoy.json.gz"]  # fmt: skip
    rng = random.Random(0)
    results: Counter[str] = Counter()
    families: Counter[str] = Counter()
    failures: list[str] = []
    started = time.monotonic()
    with tempfile.TemporaryDirectory() as tmp, tempfile.TemporaryDirectory() as out:
        folder, written = Path(tmp), Path(out) / "trace.json"
        for source in traces:
            for case in kineto_cases(source, rng, args.flips, args.cuts):
                target = folder / case.name
                target.write_bytes(case.data)
                problem = check(target, written)
                target.unlink()
                results["cases"] += 1
                families[case.family] += 1
                if problem:
                    failures.append(f"{source.name[:30]} | {case.family}: {case.detail[:60]!r} | {problem}")
                else:
                    results["clean"] += 1
        minutes = (time.monotonic() - started) / 60
        print(f"{results['cases']} mutated PyTorch-profiler traces from {len(traces)} real ones in {minutes:.1f} min")
        print("  " + ", ".join(f"{family} {count}" for family, count in families.items()))
        print(f"  clean (exit 0, or exit 2 with one line): {results['clean']}")
        print(f"  failures: {len(failures)}")
        for line in failures[:40]:
            print("   ", line)
        sections = []
        if args.bomb_gb > 0:
            sections.append(("gzip bomb", [bomb_case(folder, args.bomb_gb)]))
        with tempfile.TemporaryDirectory(dir=ROOT / "benchmarks") as near:  # beside the project: ./name works
            sections.append(("outputs over inputs", output_cases(Path(near))))
        sections.append(("hostile environments", environment_cases(folder)))
        for title, found in sections:
            clean = sum(problem is None for _, problem in found)
            print(f"{len(found)} {title}: clean {clean}")
            for name, problem in found:
                if problem or title == "gzip bomb":
                    print(f"    {name!r}: {problem or 'clean'}")


if __name__ == "__main__":
    main()

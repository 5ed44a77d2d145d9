"""What a PyTorch-profiler (Kineto) summary imports: its arguments are parsed before any engine, array or
reader library loads, and the answer needs none of the SQLite reader's libraries, the GUI's, the cache's
hashing or the optional extras' (measured with `python -X importtime` and peak memory: OpenSSL behind
hashlib alone was 3.5 MB of a 52 MB summary of a 105k-event trace)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

TRACE = Path(__file__).resolve().parent.parent / "data" / "kineto" / "h200_torch_linear_replay.json.gz"
NEVER = (
    "_hashlib",  # OpenSSL: only where a cache key is made (core/cache_files.identity)
    "sqlite_utils", "connectorx", "pyarrow",  # the SQLite reader's
    "PySide6", "shiboken6", "pyqtgraph",  # the GUI's
    "scipy", "igraph", "dask", "distributed", "optuna", "torch", "cupy", "cxxfilt",
)  # fmt: skip
PROBE = """
import contextlib, io, json, sys
import graphscope.cli as cli
argv = sys.argv[1:]
if argv[0] == "--parse-only":
    cli.build_parser().parse_args(argv[1:])
    status = 0
else:
    with contextlib.redirect_stdout(io.StringIO()):
        status = cli.main(argv)
print(json.dumps({"status": status, "modules": sorted(sys.modules)}))
"""


def _modules(*argv: str) -> set[str]:
    out = subprocess.run([sys.executable, "-c", PROBE, *argv], capture_output=True, text=True, check=True)
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["status"] == 0
    return set(result["modules"])


def test_parsing_a_kineto_summarys_arguments_loads_no_engine_or_library():
    loaded = _modules("--parse-only", "summary", "--no-cache", "--json", str(TRACE))
    heavy = {"numpy", "msgspec", "sqlite3", *NEVER}
    assert not loaded & heavy
    assert not {m for m in loaded if m.startswith(("graphscope.trace", "graphscope.analysis", "graphscope.text"))}


def test_a_kineto_summary_loads_none_of_the_sqlite_readers_gui_or_cache_libraries():
    loaded = _modules("summary", "--no-cache", "--json", str(TRACE))
    assert "msgspec" in loaded and "graphscope.trace.kineto" in loaded  # it did read the trace
    assert not loaded & set(NEVER)


def test_an_nsight_summary_loads_neither_the_json_reader_nor_msgspec():
    """The range domains the attribution and step shapes read live in core/events.py: importing them from
    the Kineto reader cost an Nsight summary 12 ms of msgspec and the JSON reader (`-X importtime`)."""
    export = TRACE.parent.parent / "h200_seed_vecadd_node.sqlite"
    loaded = _modules("summary", "--no-cache", "--json", str(export))
    assert "graphscope.trace.reader" in loaded  # it did read the export
    assert not {"msgspec", "graphscope.trace.kineto", "graphscope.trace.kineto_json"} & loaded

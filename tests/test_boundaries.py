"""`import graphscope` and every headless command load no Qt, pyqtgraph, CuPy, CUDA bindings or PyTorch."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from tests.conftest import FORKJOIN

FORBIDDEN = ("PySide6", "shiboken6", "pyqtgraph", "cupy", "cuda", "torch")

PROBE = """
import json, sys, contextlib, io
import graphscope, graphscope.cli
with contextlib.redirect_stdout(io.StringIO()):
    status = graphscope.cli.main(sys.argv[1:])
loaded = sorted({m.split('.')[0] for m in sys.modules} & set(json.loads(%r)))
print(json.dumps({"status": status, "loaded": loaded}))
"""


def _probe(*argv: str) -> dict:
    code = PROBE % json.dumps(FORBIDDEN)
    out = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_import_and_summary_load_no_gui_or_gpu_library():
    result = _probe("summary", str(FORKJOIN), "--json")
    assert result == {"status": 0, "loaded": []}


def test_help_loads_nothing_heavy():
    code = f"import sys, graphscope.cli; print(sorted(m for m in sys.modules if m.split('.')[0] in {FORBIDDEN!r}))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_the_gui_starts_reading_before_the_analysis_modules_load():
    """`graphscope open` starts the read once the reader's modules are in; the analysis, layout and Qt
    modules load while it runs (app/main.py), so they must not come with the start-up module."""
    code = "import sys, graphscope.app.main; print(sorted(m for m in sys.modules if m.startswith(%r)))"
    for package in ("graphscope.analysis", "graphscope.view.document", "PySide6", "numpy"):
        out = subprocess.run([sys.executable, "-c", code % package], capture_output=True, text=True, check=True)
        assert out.stdout.strip() == "[]", f"importing graphscope.app.main loads {out.stdout.strip()}"


def test_a_summary_loads_no_pandas_even_where_it_is_installed(tmp_path):
    """pyarrow's `to_pandas_dtype` imports pandas when it is there: 0.3 s of every read on a machine
    that has it (seen on the GPU host). A stand-in pandas on the path shows whether anything reaches for it."""
    (tmp_path / "pandas").mkdir()
    (tmp_path / "pandas" / "__init__.py").write_text("")
    code = (
        "import sys, contextlib, io; from graphscope.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        f"    status = main(['summary', '--json', {str(FORKJOIN)!r}])\n"
        "print(status, 'pandas' in sys.modules)"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), *sys.path])}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env)
    assert out.stdout.split() == ["0", "False"]

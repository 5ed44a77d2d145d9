"""Comparison reports (trace vs trace, scope vs scope, run vs run, a tuning session) in every format,
and the Perfetto export, checked the way their readers use them."""

from __future__ import annotations

import csv
import io
import itertools
import json
import shutil
import sqlite3
import subprocess
from collections import defaultdict

import pytest

from graphscope.cli import main
from graphscope.store.session_db import SessionStore
from graphscope.trace import load_trace
from tests import mutations
from tests.conftest import DATA, FORKJOIN, H200_GRAPH, H200_NODE, TORCH_MLP
from tests.workload.fakes import fake_report


def report(tmp_path, *args, name="r.json"):
    out = tmp_path / name
    assert main(["report", *args, "-o", str(out)]) == 0
    return json.loads(out.read_text()) if name.endswith(".json") else out.read_text()


def test_scope_against_scope_in_one_trace(tmp_path):
    data = report(tmp_path, str(H200_NODE), "nvtx:eager_*", "nvtx:graph_*")
    assert data["format"] == "graphscope-report/1"
    assert data["a"]["steps"] == 3 and data["b"]["steps"] == 3
    wall = data["comparison"]["metrics"]["wall_ns"]
    assert wall["speedup"]["significant"] and wall["speedup"]["low"] > 3 and wall["saved"] > 5e6
    assert data["comparison"]["metrics"]["launch_calls"]["a_median"] == 1000
    assert "worth it" in data["comparison"]["verdicts"]["gain"]
    assert "above the ~15% rule" in data["comparison"]["verdicts"]["launch_overhead"]
    (vec_add,) = data["kernels"]  # eager launches and graph nodes: one kernel, matched
    assert vec_add["a"]["per_step"] == 1000 and vec_add["b"]["per_step"] == 1000


def test_options_scope_the_two_sides_of_one_file(tmp_path):
    data = report(tmp_path, str(FORKJOIN), "--a", "nvtx:eager_1", "--b", "nvtx:graph_2")
    assert data["a"]["steps"] == 1 and "too few for an interval" in data["comparison"]["verdicts"]["gain"]


def test_trace_against_trace_finds_added_and_removed_kernels(tmp_path):
    data = report(tmp_path, str(H200_NODE), str(TORCH_MLP))
    statuses = defaultdict(set)
    for kernel in data["kernels"]:
        statuses[kernel["status"]].add(kernel["name"])
    assert "vec_add" in statuses["removed"] and "nvjet_sm90_hsh_8x64_64x16_4x1_v_bz_bias_TNN" in statuses["added"]


def test_graph_mode_against_node_mode_traces(tmp_path):
    data = report(tmp_path, str(H200_GRAPH), str(H200_NODE), "--a", "nvtx:graph_*", "--b", "nvtx:graph_*")
    assert data["a"]["steps"] == data["b"]["steps"] == 3
    assert data["comparison"]["metrics"]["gpu_busy_ns"]["a_median"] > 0


def test_a_one_sided_report(tmp_path):
    data = report(tmp_path, str(FORKJOIN))
    assert data["b"] is None and data["comparison"] is None and data["a"]["verdict"]


def test_markdown_pastes_into_a_pull_request(tmp_path):
    text = report(tmp_path, str(H200_NODE), "nvtx:eager_*", "nvtx:graph_*", name="r.md")
    assert text.startswith("## ") and "| end to end per step |" in text and "worth it" in text


def test_csv_is_the_per_kernel_table(tmp_path):
    rows = list(
        csv.DictReader(io.StringIO(report(tmp_path, str(FORKJOIN), "nvtx:eager_*", "nvtx:graph_*", name="r.csv")))
    )
    assert {r["side"] for r in rows} == {"A", "B"} and {r["kernel"] for r in rows} >= {"scale", "relu", "rowsum"}
    assert all(float(r["median_ns"]) > 0 for r in rows)


def test_html_is_self_contained(tmp_path):
    text = report(tmp_path, str(FORKJOIN), "nvtx:eager_*", "nvtx:graph_*", name="r.html")
    assert text.count("<svg") >= 4 and "<script" not in text
    assert "http://" not in text.replace("http://www.w3.org/2000/svg", "") and "https://" not in text


@pytest.fixture
def hostile_export(tmp_path):
    """An export whose kernel and NVTX names, and whose path, are markup."""
    folder = tmp_path / "<b>dir&"
    folder.mkdir()
    path = folder / "x.sqlite"
    shutil.copy(FORKJOIN, path)
    conn = sqlite3.connect(path)
    mutations.markup_names().apply(conn)
    conn.execute("UPDATE NVTX_EVENTS SET text = '<img src=x onerror=alert(1)>' || text WHERE text IS NOT NULL")
    conn.commit()
    conn.close()
    return path


def test_markup_in_names_and_paths_is_escaped(tmp_path, hostile_export):
    out = tmp_path / "r.html"
    assert main(["report", str(hostile_export), "nvtx:*eager_*", "nvtx:*graph_*", "-o", str(out)]) == 0
    text = out.read_text()
    assert "<script>" not in text and "<img" not in text and "<b>dir" not in text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in text


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@pytest.mark.skipif(CHROMIUM is None, reason="needs Chromium (apt-get install chromium)")
def test_a_real_browser_renders_the_report_and_shows_markup_as_text(tmp_path, hostile_export):
    out = tmp_path / "r.html"
    assert main(["report", str(hostile_export), "nvtx:*eager_*", "nvtx:*graph_*", "-o", str(out)]) == 0
    profile = ["--user-data-dir=" + str(tmp_path / "chromium")]
    dom = subprocess.run(
        [CHROMIUM, *FLAGS, *profile, "--dump-dom", out.as_uri()], capture_output=True, text=True, timeout=120
    ).stdout
    assert "<script" not in dom.lower() and "<img" not in dom.lower()  # nothing became an element
    assert "&lt;script&gt;" in dom and "worth it" in dom
    png = tmp_path / "r.png"
    subprocess.run(
        [CHROMIUM, *FLAGS, *profile, "--window-size=1200,2400", f"--screenshot={png}", out.as_uri()],
        capture_output=True,
        timeout=120,
    )
    from PySide6.QtGui import QImage

    image = QImage(str(png))
    colours = {image.pixel(x, y) for x in range(0, image.width(), 13) for y in range(0, 1200, 13)}
    assert image.width() == 1200 and len(colours) > 10


def test_runs_from_the_session_database(tmp_path):
    session = tmp_path / "s.sqlite"
    store = SessionStore(session)
    workload = tmp_path / "w.py"
    workload.write_text("# a workload\n")
    first = store.record_run({"ok": True, **fake_report(workload).to_json()})
    second = store.record_run({"ok": True, **fake_report(workload, graph_ms=0.9).to_json()})
    data = report(tmp_path, f"run:{first}", "--session", str(session))
    assert data["a"]["label"] == f"run {first} eager" and data["b"]["label"] == f"run {first} graph"
    assert data["a"]["steps"] == 30 and 4.8 < data["comparison"]["metrics"]["wall_ns"]["speedup"]["value"] < 5.6
    data = report(tmp_path, f"run:{first}", f"run:{second}", "--session", str(session))
    assert data["comparison"]["metrics"]["wall_ns"]["speedup"]["significant"]
    assert main(["report", "run:999", "-o", str(tmp_path / "x.md"), "--session", str(session)]) == 2


def test_a_tuning_session(tmp_path):
    from graphscope.core.launch_config import LaunchConfig
    from graphscope.tune.measure import RecordedMeasurer
    from graphscope.tune.session import tune
    from graphscope.tune.space import knobs_for
    from tests.tune.test_strategies import SITES, separable

    result = tune(tmp_path / "w.py", knobs_for(SITES), RecordedMeasurer(separable), "descent", LaunchConfig(), 40)
    session = tmp_path / "s.sqlite"
    tuning = SessionStore(session).record_tuning(result.to_json())
    data = report(tmp_path, f"tune:{tuning}", "--session", str(session))
    assert data["comparison"]["verdicts"]["gain"].startswith("adopt")
    assert len(data["tuning"]["trials"]) == len(result.trials) + 4
    assert "GPU time per graph replay" in report(tmp_path, f"tune:{tuning}", "--session", str(session), name="t.md")
    # in full: every trial with its numbers, status and cause; the config diff; the session's numbers
    trials, diff, numbers = data["tables"]
    assert len(trials["rows"]) == len(result.trials) + 4 and trials["rows"][0][1] == "baseline"
    hows = [row[3] for row in trials["rows"]]
    assert hows.count("fresh-capture") == 2 and hows.count("drift-check") == 1
    tried = {(row[1], row[2]) for row in trials["rows"] if row[1] in result.best.config.blocks}
    assert len(tried) >= 3  # each node's candidates, by block
    assert all(row[4] != "-" and "-" in row[5] for row in trials["rows"])  # median and interval everywhere
    assert {row[0] for row in diff["rows"]} == {k.key for k in knobs_for(SITES)}
    assert any(row[5] == "changed" for row in diff["rows"])
    facts = dict(numbers["rows"])
    assert facts["baseline drift over the sweep"].endswith("%") and facts["restarts of the workload child"] == "none"
    assert data["tuning"]["session"]["format"] == "graphscope-tuning/1"
    csv_rows = list(
        csv.reader(io.StringIO(report(tmp_path, f"tune:{tuning}", "--session", str(session), name="t.csv")))
    )
    assert csv_rows[0][:5] == ["seq", "node", "block", "how", "median_ns"] and len(csv_rows) == len(trials["rows"]) + 1
    float(csv_rows[1][4])  # raw nanoseconds, not formatted text
    page = report(tmp_path, f"tune:{tuning}", "--session", str(session), name="t.html")
    assert "trial medians per node" in page and page.count("<circle") >= len(result.trials)


@pytest.mark.parametrize(
    "args, words",
    [
        (["nope.sqlite"], "no such file"),
        ([str(FORKJOIN), "nvtx:missing"], "no NVTX range"),
        ([str(FORKJOIN), "nvtx:eager_*", "range:9:1"], "end must come after"),
        (["nvtx:eager_*", str(FORKJOIN)], "name the trace it belongs to first"),
    ],
)
def test_bad_sources_exit_2_with_one_line(tmp_path, capsys, args, words):
    assert main(["report", *args, "-o", str(tmp_path / "r.html")]) == 2
    err = capsys.readouterr().err
    assert words in err and err.count("\n") == 1


def test_an_unknown_format_is_refused(tmp_path, capsys):
    assert main(["report", str(FORKJOIN), "-o", str(tmp_path / "r.pdf")]) == 2
    assert ".html, .md, .json or .csv" in capsys.readouterr().err


# -- the Perfetto / Chrome trace-event export -------------------------------------------------------


def exported(tmp_path, source):
    out = tmp_path / "trace.json"
    assert main(["export", str(source), "-o", str(out)]) == 0
    return json.loads(out.read_text())


@pytest.mark.parametrize(
    "source", [H200_NODE, FORKJOIN, TORCH_MLP, DATA / "extra-p__extrap__profile1.sqlite"], ids=lambda p: p.stem[:20]
)
def test_perfetto_export_follows_the_trace_event_format(tmp_path, source):
    events = exported(tmp_path, source)["traceEvents"]
    last_ts: dict[tuple, float] = {}
    flows: dict[object, list[dict]] = defaultdict(list)
    for event in events:
        assert event["ph"] in ("X", "M", "s", "f") and {"pid", "tid", "name"} <= set(event)
        if event["ph"] == "M":
            continue
        assert isinstance(event["ts"], float | int)
        track = (event["pid"], event["tid"])
        assert event["ts"] >= last_ts.get(track, float("-inf")), f"timestamps go back on {track}"
        last_ts[track] = event["ts"]
        if event["ph"] == "X":
            assert event["dur"] >= 0
        else:
            flows[event["id"]].append(event)
    for pair in flows.values():  # every flow starts at a launch call and ends at GPU work, later
        assert sorted(e["ph"] for e in pair) == ["f", "s"]
        start, end = sorted(pair, key=lambda e: e["ph"], reverse=True)
        assert start["ts"] <= end["ts"] and end.get("bp") == "e"


def test_perfetto_export_counts(tmp_path):
    events = exported(tmp_path, H200_NODE)["traceEvents"]
    trace = load_trace(H200_NODE)
    slices = [e for e in events if e["ph"] == "X"]
    assert sum(e["cat"] == "kernel" for e in slices) == len(trace.kernels)
    assert sum(e["cat"] == "cuda_api" for e in slices) == len(trace.api)
    assert sum(e["ph"] == "s" for e in events) >= 4000  # eager launches and graph launches
    names = {e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "thread_name"}
    assert "stream 13" in names


@pytest.mark.parametrize("source", [H200_NODE, DATA / "h200_seed_vecadd_graph.sqlite"], ids=["node", "graph"])
def test_perfetto_export_has_a_track_of_graph_launches(tmp_path, source):
    from graphscope.analysis.summary import analyze

    events = exported(tmp_path, source)["traceEvents"]
    launches = [e for e in events if e["ph"] == "X" and e["cat"] == "graph_launch"]
    analysis = analyze(load_trace(source))
    assert len(launches) == len(analysis.graphs) > 0
    assert sorted(e["args"]["launch"] for e in launches) == list(range(1, len(launches) + 1))
    spans = sorted((e["ts"], e["dur"]) for e in launches)
    assert spans[0][0] == pytest.approx((analysis.graphs.start.min() - load_trace(source).span()[0]) / 1000)
    by_track = defaultdict(list)
    for e in launches:
        by_track[(e["pid"], e["tid"])].append((e["ts"], e["ts"] + e["dur"]))
    for slices in by_track.values():  # slices on one track never overlap
        slices.sort()
        assert all(a[1] <= b[0] + 1e-6 for a, b in itertools.pairwise(slices))
    names = {(e["pid"], e["tid"]): e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "thread_name"}
    assert all(names[track].startswith("graph launches") for track in by_track)


def test_a_json_gz_name_writes_the_same_events_compressed(tmp_path):
    import gzip

    plain = (tmp_path / "t.json", tmp_path / "t.json.gz")
    for out in plain:
        assert main(["export", str(FORKJOIN), "-o", str(out)]) == 0
    assert gzip.decompress(plain[1].read_bytes()) == plain[0].read_bytes()
    assert plain[1].stat().st_size < plain[0].stat().st_size / 4
    assert main(["export", str(FORKJOIN), "-o", str(tmp_path / "t.txt")]) == 2


def test_kernels_of_two_files_match_by_name_not_by_their_files_string_ids(tmp_path):
    """Each export numbers its strings its own way: the same kernel must still be one row."""
    from tests import mutations

    shifted = tmp_path / "shifted.sqlite"
    shutil.copy(H200_NODE, shifted)
    conn = sqlite3.connect(shifted)
    conn.execute("INSERT INTO StringIds (id, value) VALUES (100000, 'padding')")  # new ids for everything below
    mutations.shift_string_ids(7).apply(conn)
    for table, columns in (
        ("CUPTI_ACTIVITY_KIND_KERNEL", ("shortName", "demangledName", "mangledName")),
        ("CUPTI_ACTIVITY_KIND_RUNTIME", ("nameId",)),
    ):
        for column in columns:
            conn.execute(f"UPDATE {table} SET {column} = {column} + 7 WHERE {column} IS NOT NULL")
    conn.commit()
    conn.close()
    data = report(tmp_path, str(H200_NODE), str(shifted), "--a", "nvtx:eager_*", "--b", "nvtx:eager_*")
    (vec_add,) = data["kernels"]
    assert vec_add["name"] == "vec_add" and vec_add["status"] == "same" and vec_add["a"] and vec_add["b"]


def test_range_sources_are_labelled_by_their_window(tmp_path):
    data = report(tmp_path, str(H200_NODE), "range:0ms:200ms", "range:200ms:400ms")
    assert data["a"]["label"] == "range 0ms:200ms" and data["b"]["label"] == "range 200ms:400ms"


@pytest.mark.parametrize(
    "args, words",
    [
        ([str(FORKJOIN), "range:1:2"], "range:1:2: give '1' a unit"),
        ([str(FORKJOIN), "range:5s:6s"], "range:5s:6s: outside the trace"),
        ([str(FORKJOIN), "range:12ms"], "range:12ms: write START:END"),
        ([str(FORKJOIN), "nvtx:"], "'nvtx:': name the NVTX range"),
        (["run:99999999999999999999999"], "write run:ID with the number"),
        (["run:1:fast"], "a run's mode is eager or graph"),
        ([str(FORKJOIN), "--a", "eager_*"], "--a 'eager_*': a scope is nvtx:NAME or range:START:END"),
        ([str(FORKJOIN), "tune:1", "tune:2"], "report takes FILE"),
    ],
)
def test_each_source_kind_has_its_own_one_line_error(tmp_path, capsys, args, words):
    assert main(["report", *args, "-o", str(tmp_path / "r.json"), "--session", str(tmp_path / "s.sqlite")]) == 2
    err = capsys.readouterr().err
    assert words in err and err.count("\n") == 1 and "--range" not in err

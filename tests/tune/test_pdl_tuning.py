"""PDL tuning (tune/pdl.py) against recorded timings: knobs from the DAG, flips kept only with an interval
that excludes no gain and matching outputs, the winners measured together, and the fresh confirmation."""

from __future__ import annotations

from graphscope.core.edge_kinds import EdgeKind, Port
from graphscope.core.launch_config import LaunchConfig, Site
from graphscope.graph.edges import EdgeKinds
from graphscope.graph.model import Dag, DagNode
from graphscope.tune.measure import RecordedMeasurer
from graphscope.tune.pdl import pdl_knobs, tune_pdl

PDL = (EdgeKind.PROGRAMMATIC, Port.PROGRAMMATIC, Port.DEFAULT)
PLAIN = (EdgeKind.DEFAULT, Port.DEFAULT, Port.DEFAULT)


def site(name, ordinal, pdl):
    return Site(name, ordinal, name, (4096, 1, 1), (256, 1, 1), (16, 1, 1), pdl=pdl)


def workload():
    """memcpy -> link#0 -> link#1 -> link#2 -> loose#0 (the copy's edge is plain; the rest as launched)."""
    sites = [site("link", 0, True), site("link", 1, True), site("link", 2, False), site("loose", 0, True)]
    nodes = [DagNode(0, "memcpy", "memcpy HtoD")]
    nodes += [DagNode(i + 1, "kernel", s.kernel, site=s.key) for i, s in enumerate(sites)]
    kinds = EdgeKinds.of([PLAIN, PDL, PLAIN, PDL])
    return sites, Dag(nodes, [(i, i + 1) for i in range(4)], "live", True, 1, [], kinds)


def test_knobs_are_launches_with_one_kernel_before_them():
    sites, dag = workload()
    knobs = pdl_knobs(sites, dag)
    assert [(k.site, k.pdl, k.edge) for k in knobs] == [("link#1", True, 1), ("link#2", False, 2), ("loose#0", True, 3)]
    assert [k.site for k in pdl_knobs(sites, dag, "link")] == ["link#1", "link#2"]
    assert [k.site for k in pdl_knobs(sites, dag, "loose#0")] == ["loose#0"]


def chain_model(config: LaunchConfig) -> tuple[float, bool]:
    """40 us; PDL on link#2 saves 400 ns; PDL off on link#1 costs 400 ns; loose#0 changes nothing."""
    median = 40_000.0
    if config.pdl_for("link", 2, False):
        median -= 400
    if not config.pdl_for("link", 1, True):
        median += 400
    return median, True


def test_a_flip_that_saves_time_is_kept_confirmed_and_adopted():
    sites, dag = workload()
    knobs = pdl_knobs(sites, dag)
    seen = []
    result = tune_pdl(
        RecordedMeasurer(chain_model, noise=0.0), LaunchConfig(), knobs, reps=60, record=lambda s, t: seen.append(s)
    )
    assert [t.knob for t in result.trials] == ["link#1", "link#2", "loose#0"]
    assert result.best.config.pdl == {"link#2": True} and result.adopt and result.combined is None
    assert [t.how for t in result.confirmed] == ["fresh-capture", "fresh-capture"]
    assert seen == list(range(6))  # baseline, 3 flips, 2 confirmations
    data = result.to_json()
    assert data["trials"][1]["site"] == "link#2" and data["trials"][1]["pdl"] is True
    assert data["trials"][1]["speedup"]["significant"] and data["trials"][1]["speedup"]["value"] > 1
    assert data["trials"][0]["speedup"]["value"] < 1


def test_a_flip_whose_outputs_differ_is_never_adopted_and_nothing_wins_without_a_gain():
    sites, dag = workload()

    def racy(config):
        median, _ = chain_model(config)
        return median - (900 if config.pdl_for("link", 2, False) else 0), not config.pdl_for("link", 2, False)

    result = tune_pdl(RecordedMeasurer(racy, noise=0.0), LaunchConfig(), pdl_knobs(sites, dag), reps=60)
    assert result.trials[1].status == "mismatch" and not result.adopt and result.best is None
    flat = tune_pdl(
        RecordedMeasurer(lambda c: (40_000.0, True), noise=0.0), LaunchConfig(), pdl_knobs(sites, dag), reps=60
    )
    assert not flat.adopt and "no flip beat the baseline" in flat.notes[0]


def test_winners_are_measured_together_and_the_pair_kept_when_it_beats_either():
    sites, dag = workload()

    def two(config):
        median = 40_000.0 - (400 if config.pdl_for("link", 2, False) else 0)
        return median - (300 if not config.pdl_for("loose", 0, True) else 0), True

    result = tune_pdl(RecordedMeasurer(two, noise=0.0), LaunchConfig(), pdl_knobs(sites, dag), reps=60)
    assert result.combined is not None and result.best is result.combined
    assert result.best.config.pdl == {"link#2": True, "loose#0": False} and result.adopt


def test_a_noise_winner_is_dropped_by_the_fresh_confirmation():
    sites, dag = workload()
    calls = []

    def lucky_once(config):  # the flip of loose#0 measures 1% faster the first time only
        calls.append(config.pdl)
        first = sum(1 for c in calls if c == {"loose#0": False}) == 1
        return (39_600.0 if config.pdl == {"loose#0": False} and first else 40_000.0), True

    result = tune_pdl(RecordedMeasurer(lucky_once, noise=0.0), LaunchConfig(), pdl_knobs(sites, dag, "loose"), reps=30)
    assert result.trials[0].beats(result.baseline) and result.best is result.trials[0]
    assert not result.adopt and "captured afresh: not adopted" in result.notes[-1]


def test_the_text_form_lists_each_flip_with_its_interval_and_the_confirmation():
    from graphscope.cli.pdl import render_pdl_tuning

    sites, dag = workload()
    result = tune_pdl(RecordedMeasurer(chain_model, noise=0.0), LaunchConfig(), pdl_knobs(sites, dag), reps=30)
    text = render_pdl_tuning({**result.to_json(), "workload": "pdl_chain.py"})
    lines = text.splitlines()
    assert lines[0].startswith("pdl_chain.py: PDL per launch site, 30 replays per trial")
    row = next(line for line in lines if line.strip().startswith("link#2 PDL on"))
    assert "39.60us" in row and "1.010x (faster)" in row
    assert any(line.strip().startswith("link#1 PDL off") and "slower" in line for line in lines)
    assert any("within noise" in line for line in lines if "loose#0" in line)
    assert lines[-1] == "  adopted: PDL link#2=on"


def test_tune_pdl_refuses_block_candidates_in_one_line(tmp_path, capsys):
    from graphscope.cli import main

    workload_file = tmp_path / "w.py"
    workload_file.write_text("def setup(ctx):\n    return lambda ctx: None\n")
    assert main(["tune", str(workload_file), "--pdl", "--node", "link", "--block", "64"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--block is for block tuning" in err[0]


def test_the_controller_tunes_pdl_and_captures_the_adopted_config(tmp_path):
    from graphscope.tune.controller import TuningController
    from tests.tune.pdl_fakes import PdlModelSession

    PdlModelSession.started = []
    controller = TuningController(tmp_path / "model.py", session_factory=PdlModelSession)
    try:
        controller.load()
        result = controller.sweep_pdl(reps=40)
        dag = controller.current_dag()
    finally:
        controller.close()
    assert [k.site for k in result.knobs] == ["relu#0", "transpose#0"]
    assert result.adopt and result.best.config.pdl == {"transpose#0": True}
    assert controller.config.pdl == {"transpose#0": True} and controller.pdl_result is result
    assert dag.edge_kinds.kind.tolist() == [0, 1, 1, 0, 0]  # the graph captured again with the adopted flip
    session = PdlModelSession.started[-1]
    assert session.requests[-2:] == ["capture", "dag"]


def test_dag_pdl_options_are_refused_in_one_line_before_any_gpu_work(tmp_path, capsys):
    from graphscope.cli import main

    workload_file = tmp_path / "w.py"
    workload_file.write_text("def setup(ctx):\n    return lambda ctx: None\n")
    trace = tmp_path / "t.sqlite"
    trace.write_bytes(b"")
    cases = {
        ("--pdl", "--reps", "3"): "at least 5 replays",
        ("--plain-trace", str(trace)): "--plain-trace needs --trace",
        ("--trace", str(tmp_path / "missing.sqlite")): "no such file",
    }
    for extra, said in cases.items():
        assert main(["dag", str(workload_file), *extra]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and said in err[0], err
    assert main(["dag", str(trace), "--pdl"]) == 2
    assert "give the workload .py" in capsys.readouterr().err


def long_chain(pdl=False):
    """link#0 -> link#1 -> ... -> link#5 -> loose#0 -> loose#1, every launch alike (PDL `pdl`)."""
    sites = [site("link", i, pdl) for i in range(6)] + [site("loose", i, pdl) for i in range(2)]
    nodes = [DagNode(i, "kernel", s.kernel, site=s.key) for i, s in enumerate(sites)]
    kinds = EdgeKinds.of([PDL if pdl else PLAIN] * 7)
    return sites, Dag(nodes, [(i, i + 1) for i in range(7)], "live", True, 1, [], kinds)


def test_a_launch_names_sites_are_one_more_knob_flipped_together():
    sites, dag = long_chain()
    knobs = pdl_knobs(sites, dag)
    assert [(k.site, k.sites) for k in knobs[:2]] == [("link", 5), ("loose", 2)]
    assert [k.site for k in knobs[2:]] == ["link#1", "link#2", "link#3", "link#4", "link#5", "loose#0", "loose#1"]
    assert [k.site for k in pdl_knobs(sites, dag, "loose")] == ["loose", "loose#0", "loose#1"]
    assert [k.site for k in pdl_knobs(sites, dag, "link#2")] == ["link#2"]


def test_a_gain_too_small_per_edge_is_found_for_the_whole_name_and_adopted():
    sites, dag = long_chain()

    def per_edge(config):  # each link edge with PDL saves 30 ns of 40 us: a single flip is lost in the noise
        on = sum(config.pdl_for("link", i, False) for i in range(1, 6))
        return 40_000.0 - 30 * on, True

    noisy = RecordedMeasurer(per_edge, noise=0.004, seed=3)
    result = tune_pdl(noisy, LaunchConfig(), pdl_knobs(sites, dag), reps=100)
    link = result.trials[0]
    assert link.knob == "link" and link.beats(result.baseline)
    assert result.adopt and result.best.config.pdl.get("link") is True
    from graphscope.cli.pdl import render_pdl_tuning

    text = render_pdl_tuning({**result.to_json(), "workload": "w.py"})
    assert any(line.strip().startswith("link (5 sites) PDL on") for line in text.splitlines())

"""A stored plan record edited or damaged in the session database (plan:ID) is refused in one line by
`plan plan:ID` and `report plan:ID`, never read into a traceback, NaN or a negative time."""

from __future__ import annotations

import json
import sqlite3

import pytest

from graphscope.cli import main
from graphscope.store.plan_record import check_plan
from tests.plan.test_plan_command import workload  # noqa: F401 (the fixture: recorded measurements)


@pytest.fixture
def stored(workload, tmp_path, capsys):  # noqa: F811
    session = tmp_path / "s.sqlite"
    traffic = tmp_path / "t.csv"
    traffic.write_text("size,count\n1,50\n3,30\n12,15\n30,5\n")
    assert main(["plan", str(workload), "--traffic", str(traffic), "--memory", "60MiB", "--session", str(session),
                 "--json"]) == 0  # fmt: skip
    plan_id = json.loads(capsys.readouterr().out)["plan_id"]
    with sqlite3.connect(session) as db:
        text = db.execute("SELECT data FROM plans WHERE id = ?", (plan_id,)).fetchone()[0]
    return session, plan_id, text


def _store(session, plan_id, text):
    with sqlite3.connect(session) as db:
        db.execute("UPDATE plans SET data = ? WHERE id = ?", (text, plan_id))


@pytest.mark.parametrize(
    "edit, words",
    [
        (lambda r: r["measurements"]["sizes"][1].update(memory_bytes=float("nan")), "memory_bytes is nan"),
        (lambda r: r["measurements"]["sizes"][0].update(capture_ns=float("inf")), "capture_ns is inf"),
        (lambda r: r["measurements"]["sizes"][0].update(memory_bytes="x"), "not a number"),
        (lambda r: r["measurements"]["sizes"][0].update(memory_bytes=None), "not a number"),
        (lambda r: r["measurements"]["sizes"][0].pop("graph_ns"), "has no graph_ns"),
        (lambda r: r["measurements"]["sizes"][0].update(size=0), "not a batch size"),
        (lambda r: r["per_size"][2].update(startup_ns="x"), "per_size.2.startup_ns"),
        (lambda r: r["all_eager"].update(startup_ns=-1), "outside 0 to"),
        (lambda r: r["best"].update(expected_ns=1e300), "outside 0 to"),
        (lambda r: r.pop("measurements"), "no measurements"),
        (lambda r: r["measurements"].update(sizes=[]), "no measured sizes"),
        (lambda r: r.pop("verdict"), "no verdict"),
    ],
)
def test_a_damaged_number_in_a_stored_plan_is_one_line(stored, capsys, tmp_path, edit, words):
    session, plan_id, text = stored
    record = json.loads(text)
    edit(record)
    _store(session, plan_id, json.dumps(record))  # json.dumps writes NaN and Infinity, as an editor might
    for command in (["plan", f"plan:{plan_id}", "--memory", "8MiB"], ["report", f"plan:{plan_id}", "-o",
                                                                      str(tmp_path / "p.html")]):  # fmt: skip
        assert main([*command, "--session", str(session)]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "the stored plan is damaged" in err and words in err, err


@pytest.mark.parametrize("text", ["{broken", "[1, 2]", "", "null"])
def test_a_stored_record_that_is_not_a_plan_is_one_line(stored, capsys, text):
    session, plan_id, _ = stored
    _store(session, plan_id, text)
    assert main(["plan", f"plan:{plan_id}", "--session", str(session)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"plan {plan_id} is damaged" in err


def test_the_stored_plan_itself_passes_and_replans(stored, capsys):
    session, plan_id, text = stored
    check_plan(json.loads(text), "plan:1")  # what graphscope stores is a plan
    record = json.loads(text)
    record["per_size"][0]["saving"] = -0.5  # a size that does not pay saves a negative share
    check_plan(record, "plan:1")
    assert main(["plan", f"plan:{plan_id}", "--memory", "8MiB", "--session", str(session), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["best"]["memory_bytes"] <= 8 << 20


def test_a_switch_cheaper_than_the_noise_is_a_plan_not_damage(stored, capsys, tmp_path):
    """The switch estimates are differences of two medians: an H100 measured examples/batched_mlp.py's
    `pairs` at -112 ns, and the plan it had just printed was refused as damaged when read back."""
    session, plan_id, text = stored
    record = json.loads(text)
    record["measurements"]["switch_ns"] = {"pairs": -112.0, "rotation": 873.1}
    _store(session, plan_id, json.dumps(record))
    assert main(["plan", f"plan:{plan_id}", "--memory", "8MiB", "--session", str(session), "--json"]) == 0
    capsys.readouterr()
    assert main(["report", f"plan:{plan_id}", "--session", str(session), "-o", str(tmp_path / "p.html")]) == 0
    record["measurements"]["switch_ns"]["pairs"] = -1e300  # still a bound on what a clock can hold
    with pytest.raises(Exception, match="outside -9e\\+18 to 9e\\+18"):
        check_plan(record, "plan:1")


def test_a_huge_stored_size_without_traffic_asks_for_traffic(stored, capsys, tmp_path):
    session, plan_id, text = stored
    record = json.loads(text)
    record["measurements"]["sizes"][0]["size"] = 2**31 - 1  # was two billion equal weights: killed for memory
    _store(session, plan_id, json.dumps(record))
    assert main(["plan", f"plan:{plan_id}", "--memory", "8MiB", "--session", str(session)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "give --traffic" in err and "2,147,483,647" in err
    traffic = tmp_path / "t.csv"
    traffic.write_text("size,count\n1,50\n3,30\n")
    assert main(["plan", f"plan:{plan_id}", "--traffic", str(traffic), "--memory", "8MiB", "--session",
                 str(session), "--json"]) == 0  # fmt: skip


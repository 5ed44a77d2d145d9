"""The command modules of graphscope/cli/: each is registered, declares its arguments and answers through
`run(args)`; a module that is not in `COMMANDS` would never be reachable."""

from __future__ import annotations

import importlib
from pathlib import Path

import graphscope.cli as cli


def test_every_command_module_is_registered_once():
    """A module of cli/ that declares a command (`def add(`) is in COMMANDS; helpers (common.py) are not."""
    folder = Path(cli.__file__).parent
    commands = {p.stem for p in folder.glob("*.py") if "\ndef add(" in p.read_text()}
    assert commands and sorted(cli.COMMANDS) == sorted(commands)
    assert len(set(cli.COMMANDS)) == len(cli.COMMANDS)


def test_each_command_adds_its_parser_and_runs_through_run():
    parser = cli.build_parser()
    (sub,) = [a for a in parser._actions if a.dest == "command"]
    for name in cli.COMMANDS:
        module = importlib.import_module(f"graphscope.cli.{name}")
        commands = [c for c, p in sub.choices.items() if p.get_default("handler").__module__ == module.__name__]
        assert commands, f"cli/{name}.py adds no command"
        assert all(sub.choices[c].get_default("handler").__name__ == "run" for c in commands)


def test_a_refused_argument_is_one_line_with_status_2(capsys):
    assert cli.main(["summary", "--top", "-1", "x.sqlite"]) == 2
    err = capsys.readouterr().err
    assert err == "graphscope: error: --top cannot be negative\n"

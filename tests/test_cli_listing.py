"""`viewfinder` and `viewfinder --help`: the list of commands, written without typer."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from typer.core import TyperGroup
from typer.main import get_command

from viewfinder.main import COMMANDS, build_app

VIEWFINDER = str(Path(sys.executable).with_name("viewfinder"))


def test_the_list_loads_neither_typer_nor_any_command() -> None:
    probe = (
        "import atexit, sys; "
        "atexit.register(lambda: print(sorted(m for m in sys.modules "
        "if m.split('.')[0] in ('typer', 'click', 'httpx') or m.startswith('viewfinder.cli')), "
        "file=sys.stderr)); "
        "from viewfinder.main import main; sys.argv = ['viewfinder', '--help']; main()"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stderr.strip().splitlines()[-1] == "[]"


def test_the_list_names_every_command_once_in_80_columns() -> None:
    asked = subprocess.run([VIEWFINDER, "--help"], capture_output=True, text=True, timeout=60)
    bare = subprocess.run([VIEWFINDER], capture_output=True, text=True, timeout=60)
    assert (asked.returncode, bare.returncode) == (0, 2), (asked.stderr, bare.stderr)
    # Bare, it is a usage error: the same list, on stderr.
    assert (bare.stdout, bare.stderr) == ("", asked.stdout)
    rows = asked.stdout.split("\nCommands:\n")[1].splitlines()
    assert [row.split()[0] for row in rows] == list(COMMANDS)
    assert all(row.endswith(".") for row in rows)
    assert max(map(len, asked.stdout.splitlines())) <= 80


def test_every_listed_command_is_one_typer_runs() -> None:
    group = get_command(build_app())
    assert isinstance(group, TyperGroup)
    assert sorted(group.commands) == sorted(COMMANDS)


def test_a_mistyped_command_is_named_with_a_pointer_to_the_list() -> None:
    done = subprocess.run([VIEWFINDER, "difff"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert "No such command 'difff'" in done.stderr
    assert "Try 'viewfinder --help' for help." in done.stderr

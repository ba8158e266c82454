"""The README stays true: its CLI reference is the commands' current --help."""

from __future__ import annotations

from scripts.cli_reference import README, rendered


def test_the_readme_cli_reference_matches_the_commands_help() -> None:
    current = README.read_text()
    assert rendered(current) == current, "the CLI reference is stale: run `make docs`"
